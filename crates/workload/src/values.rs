//! Field values: printable ASCII that no database or text format needs to escape,
//! so every record of a workload has the same size on the wire.

use rand::RngCore;

/// 64 characters: letters, digits, '-' and '_'. One random byte gives one character (6 bits).
pub const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Appends `len` random characters to `out`.
pub fn push_random_value<R: RngCore>(rng: &mut R, len: usize, out: &mut String) {
    let mut chunk = [0u8; 8];
    let mut remaining = len;
    out.reserve(len);
    while remaining > 0 {
        let bits = rng.next_u64().to_le_bytes();
        let take = remaining.min(8);
        for (c, b) in chunk.iter_mut().zip(bits).take(take) {
            *c = ALPHABET[(b & 63) as usize];
        }
        out.push_str(std::str::from_utf8(&chunk[..take]).expect("ASCII alphabet"));
        remaining -= take;
    }
}

/// A block of random characters that values are cut from at random offsets, as LevelDB's db_bench does:
/// values stay random (incompressible, different from one operation to the next) while costing a copy
/// instead of a random draw per character. Generated once from the seed, shared read-only.
#[derive(Debug, Clone)]
pub struct ValuePool {
    text: std::sync::Arc<str>,
}

impl ValuePool {
    pub const SIZE: usize = 1 << 20;

    pub fn new(seed: u64) -> Self {
        use rand::SeedableRng;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x7A1E_5EED);
        let mut text = String::with_capacity(Self::SIZE);
        push_random_value(&mut rng, Self::SIZE, &mut text);
        ValuePool { text: text.into() }
    }

    /// Appends `len` characters taken from a random place in the pool.
    #[inline]
    pub fn push_value<R: RngCore>(&self, rng: &mut R, len: usize, out: &mut String) {
        let mut remaining = len;
        out.reserve(len);
        while remaining > 0 {
            let take = remaining.min(Self::SIZE / 2);
            let offset = (rng.next_u64() % (Self::SIZE - take + 1) as u64) as usize;
            out.push_str(&self.text[offset..offset + take]);
            remaining -= take;
        }
    }
}

/// The value that `dataintegrity=true` stores in `field` of `key`: a pure function of both,
/// so any read can be verified without remembering what was written.
pub fn deterministic_value(key: &str, field: &str, len: usize) -> String {
    let mut out = String::with_capacity(len);
    let mut state = crate::keys::FNV_OFFSET_BASIS_64;
    for b in key
        .bytes()
        .chain(std::iter::once(b':'))
        .chain(field.bytes())
    {
        state ^= b as u64;
        state = state.wrapping_mul(crate::keys::FNV_PRIME_64);
    }
    let mut remaining = len;
    while remaining > 0 {
        let mut bits = splitmix64(&mut state);
        let take = remaining.min(10);
        for _ in 0..take {
            out.push(ALPHABET[(bits & 63) as usize] as char);
            bits >>= 6;
        }
        remaining -= take;
    }
    out
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// True when `s` contains only characters of [`ALPHABET`].
pub fn is_plain(s: &str) -> bool {
    s.bytes().all(|b| ALPHABET.contains(&b))
}

/// `YYYY-MM-DD HH:MM:SS.mmm` in UTC: the text every SQL database and the Cassandra binding read.
pub fn push_timestamp(ms: i64, out: &mut String) {
    use chrono::{Datelike, Timelike};
    let t = chrono::DateTime::from_timestamp_millis(ms).expect("timestamps stay in range");
    // Digit by digit: chrono's format string costs a microsecond a value (docs/benchmarks.md 19).
    let mut digits = |n: u32, width: usize, after: Option<u8>| {
        let mut buf = [b'0'; 4];
        let mut v = n;
        for d in buf[..width].iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out.push_str(std::str::from_utf8(&buf[..width]).expect("digits"));
        if let Some(c) = after {
            out.push(c as char);
        }
    };
    digits(t.year().clamp(0, 9999) as u32, 4, Some(b'-'));
    digits(t.month(), 2, Some(b'-'));
    digits(t.day(), 2, Some(b' '));
    digits(t.hour(), 2, Some(b':'));
    digits(t.minute(), 2, Some(b':'));
    digits(t.second(), 2, Some(b'.'));
    digits(t.timestamp_subsec_millis(), 3, None);
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_written_as_chrono_formats_them() {
        for ms in [
            0,
            1,
            999,
            1_767_225_600_000,
            1_767_225_600_123,
            253_402_300_799_999,
        ] {
            let mut out = String::new();
            super::push_timestamp(ms, &mut out);
            let t = chrono::DateTime::from_timestamp_millis(ms).unwrap();
            assert_eq!(out, t.format("%Y-%m-%d %H:%M:%S%.3f").to_string());
        }
    }

    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_values_have_exact_length_and_plain_characters() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for len in [0, 1, 9, 10, 11, 100, 1000] {
            let mut s = String::new();
            push_random_value(&mut rng, len, &mut s);
            assert_eq!(s.len(), len);
            assert!(is_plain(&s));
        }
    }

    #[test]
    fn pooled_values_have_exact_length_plain_characters_and_vary() {
        let pool = ValuePool::new(1);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut seen = std::collections::HashSet::new();
        for len in [1usize, 100, 1000, ValuePool::SIZE + 17] {
            let mut s = String::new();
            pool.push_value(&mut rng, len, &mut s);
            assert_eq!(s.len(), len);
            assert!(is_plain(&s));
            seen.insert(s);
        }
        let values: std::collections::HashSet<String> = (0..1000)
            .map(|_| {
                let mut s = String::new();
                pool.push_value(&mut rng, 100, &mut s);
                s
            })
            .collect();
        assert!(
            values.len() > 990,
            "values repeat: {} distinct of 1000",
            values.len()
        );
    }

    #[test]
    fn deterministic_values_depend_on_key_and_field_only() {
        let a = deterministic_value("user1", "field0", 100);
        assert_eq!(a, deterministic_value("user1", "field0", 100));
        assert_ne!(a, deterministic_value("user1", "field1", 100));
        assert_ne!(a, deterministic_value("user2", "field0", 100));
        assert_eq!(a.len(), 100);
        assert!(is_plain(&a));
    }
}
