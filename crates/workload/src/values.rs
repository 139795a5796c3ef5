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
    let t = chrono::DateTime::from_timestamp_millis(ms).expect("timestamps stay in range");
    out.push_str(&t.format("%Y-%m-%d %H:%M:%S%.3f").to_string());
}

#[cfg(test)]
mod tests {
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
