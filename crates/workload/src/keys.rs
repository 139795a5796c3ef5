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
            InsertOrder::Uuid => return crate::measurement::write_uuid(keynum, out),
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

#[cfg(test)]
mod tests {
    use super::*;

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
