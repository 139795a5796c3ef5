//! Lourenco et al.'s measurement record (`recordtype=measurement`, the `timeseries` workload): an
//! electrical measurement of 9 typed fields, 126 bytes in binary form: the record id (a UUID string of
//! 36 characters, the key here) and string(36) aside, int, int, int, timestamp, string(50), int,
//! double, timestamp.
//!
//! Values travel as text like every other value; bindings with typed schemas store them typed
//! (see [`FieldType`]), so space on disk compares with the study's.

use rand::RngCore;

use crate::generator::WorkerRng;
use crate::operation::FieldType;
use crate::values::ValuePool;

/// The fields after the key, with their types.
pub const FIELDS: [(&str, FieldType); 8] = [
    ("source_id", FieldType::Int),
    ("channel", FieldType::Int),
    ("phase_no", FieldType::Int),
    ("measured_at", FieldType::Timestamp),
    ("label", FieldType::Text { max_len: Some(50) }),
    ("quality", FieldType::Int),
    ("reading", FieldType::Double),
    ("received_at", FieldType::Timestamp),
];

/// Bytes of the key (a UUID string) in the study's binary form.
pub const KEY_BYTES: usize = 36;

/// Bytes of the fields in binary form: 4 per int, 8 per double and timestamp, 50 for the label.
pub fn record_bytes() -> usize {
    FIELDS.iter().map(|(_, t)| t.binary_bytes(50)).sum()
}

/// 2026-01-01T00:00:00Z in milliseconds: the first measurement's time.
const EPOCH_MS: i64 = 1_767_225_600_000;

/// Writes the value of field `idx` of record `keynum` into `out` (cleared first).
pub fn write_value(
    idx: usize,
    keynum: u64,
    rng: &mut WorkerRng,
    pool: &ValuePool,
    out: &mut String,
) {
    out.clear();
    let measured_ms = EPOCH_MS + keynum as i64 * 1000;
    let mut int = |n: u64| {
        let mut b = itoa::Buffer::new();
        out.push_str(b.format(n));
    };
    match idx {
        0 => int(keynum % 1000),
        1 => int(rng.next_u64() % 64),
        2 => int(1 + rng.next_u64() % 3),
        3 => push_timestamp(measured_ms, out),
        4 => pool.push_value(rng, 50, out),
        5 => int(rng.next_u64() % 256),
        6 => {
            let v = (rng.next_u64() % 100_000_000) as f64 / 1000.0;
            out.push_str(&format!("{v:.3}"));
        }
        _ => push_timestamp(measured_ms + (rng.next_u64() % 5000) as i64, out),
    }
}

/// `YYYY-MM-DD HH:MM:SS.mmm` in UTC: the text every SQL database and the Cassandra binding read.
fn push_timestamp(ms: i64, out: &mut String) {
    let t = chrono::DateTime::from_timestamp_millis(ms).expect("timestamps stay in range");
    out.push_str(&t.format("%Y-%m-%d %H:%M:%S%.3f").to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_record_is_126_bytes_in_9_fields() {
        assert_eq!(FIELDS.len() + 1, 9);
        assert_eq!(KEY_BYTES + record_bytes(), 126);
    }

    #[test]
    fn values_have_their_types_text_form() {
        let mut rng = WorkerRng::seed_from_u64(1);
        let pool = ValuePool::new(0);
        let mut v = String::new();
        write_value(3, 2, &mut rng, &pool, &mut v);
        assert_eq!(v, "2026-01-01 00:00:02.000");
        write_value(4, 2, &mut rng, &pool, &mut v);
        assert_eq!(v.len(), 50);
        for idx in [0, 1, 2, 5] {
            write_value(idx, 7, &mut rng, &pool, &mut v);
            assert!(v.parse::<i32>().is_ok(), "{idx}: {v}");
        }
        write_value(6, 7, &mut rng, &pool, &mut v);
        assert!(v.parse::<f64>().is_ok(), "{v}");
    }
}
