//! Record keys, byte-identical to YCSB's `CoreWorkload.buildKeyName`.

pub const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
pub const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 little-endian bytes of the number,
/// then Java's `Math.abs` on the signed result (which leaves `Long.MIN_VALUE` negative).
pub fn fnvhash64(val: i64) -> i64 {
    let mut v = val;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8; // arithmetic shift, as Java's `>>`
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    (hash as i64).wrapping_abs()
}

/// How key numbers map to key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOrder {
    /// `user` + FNV hash of the key number: inserts spread over the key space.
    Hashed,
    /// `user` + the key number: inserts in key order.
    Ordered,
    /// A UUID derived from the key number, no prefix (measurement records' ids).
    Uuid,
}

#[derive(Debug, Clone)]
pub struct KeyBuilder {
    pub order: InsertOrder,
    pub zero_padding: usize,
    pub prefix: String,
}

impl KeyBuilder {
    /// Writes the key of `keynum` into `out` (cleared first), avoiding an allocation per operation.
    pub fn write_key(&self, keynum: u64, out: &mut String) {
        out.clear();
        let n = match self.order {
            InsertOrder::Hashed => fnvhash64(keynum as i64),
            InsertOrder::Ordered => keynum as i64,
            InsertOrder::Uuid => return write_uuid(keynum, out),
        };
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(n);
        out.push_str(&self.prefix);
        for _ in digits.len()..self.zero_padding {
            out.push('0');
        }
        out.push_str(digits);
    }

    pub fn key(&self, keynum: u64) -> String {
        let mut s = String::with_capacity(24);
        self.write_key(keynum, &mut s);
        s
    }

    /// The length in bytes of a key, for the mean key size reported with results.
    pub fn key_len(&self, keynum: u64) -> usize {
        let mut s = String::new();
        self.write_key(keynum, &mut s);
        s.len()
    }
}

/// The id of record `keynum`: a version-4-shaped UUID, distinct for every key number below 2^62
/// (its last 62 bits are the key number, scrambled reversibly so ids do not sort by insertion).
pub fn write_uuid(keynum: u64, out: &mut String) {
    out.clear();
    let low = scramble(keynum) & ((1u64 << 62) - 1);
    let high = fnvhash64(keynum as i64) as u64;
    // Version 4 in the high half, variant 10 in the low half.
    let high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
    let low = low | 0x8000_0000_0000_0000;
    let hex = format!("{high:016x}{low:016x}");
    out.push_str(&hex[0..8]);
    out.push('-');
    out.push_str(&hex[8..12]);
    out.push('-');
    out.push_str(&hex[12..16]);
    out.push('-');
    out.push_str(&hex[16..20]);
    out.push('-');
    out.push_str(&hex[20..32]);
}

/// A bijection on the low 62 bits (xorshift-multiply steps that stay inside them).
fn scramble(x: u64) -> u64 {
    const MASK: u64 = (1 << 62) - 1;
    let mut z = x & MASK;
    z ^= z >> 31;
    z = z.wrapping_mul(0x1B87_3593_9E37_79B9 | 1) & MASK;
    z ^= z >> 29;
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuids_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        let mut s = String::new();
        for k in (0..50_000).chain([u32::MAX as u64, (1 << 62) - 1]) {
            write_uuid(k, &mut s);
            assert_eq!(s.len(), 36);
            assert_eq!(&s[14..15], "4", "{s}");
            assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"), "{s}");
            assert!(seen.insert(s.clone()), "duplicate id {s}");
        }
    }

    #[test]
    fn fnv_matches_java_semantics_for_edge_values() {
        // Same operations Java performs, spelled out: no sign extension surprises for positives.
        assert!(fnvhash64(0) >= 0);
        assert_eq!(fnvhash64(0), fnvhash64(0));
        assert_ne!(fnvhash64(1), fnvhash64(2));
    }

    #[test]
    fn ordered_keys_are_zero_padded() {
        let kb = KeyBuilder {
            order: InsertOrder::Ordered,
            zero_padding: 5,
            prefix: "user".into(),
        };
        assert_eq!(kb.key(42), "user00042");
        assert_eq!(kb.key(123456), "user123456");
        let kb1 = KeyBuilder {
            zero_padding: 1,
            ..kb
        };
        assert_eq!(kb1.key(0), "user0");
    }
}
