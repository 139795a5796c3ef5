//! Lourenco et al.'s measurement record (`recordtype=measurement`, the `timeseries` workload): an
//! electrical measurement of 9 typed fields, 126 bytes in binary form: the record id (a UUID string of
//! 36 characters, the key here) and string(36) aside, int, int, int, timestamp, string(50), int,
//! double, timestamp.
//!
//! Values travel as text like every other value; bindings with typed schemas store them typed
//! (see [`crate::operation::FieldType`]), so space on disk compares with the study's.

/// Bytes of the key (a UUID string) in the study's binary form.
pub const KEY_BYTES: usize = 36;

/// The record as declared columns, each with its generator: the built-in record is this
/// declaration (`recordtype=measurement`), and examples/workloads/timeseries.toml declares the same
/// in a file. Source ids repeat every 1,000 records; a measurement every second from
/// 2026-01-01T00:00:00Z, received up to 5 s later; 64 channels, 3 phases, a quality byte and a
/// reading with 3 decimals.
pub fn columns() -> Vec<crate::columns::Column> {
    use crate::columns::{
        Column, ColumnType, Generator, KeyedGenerator, NumberGenerator, TextGenerator,
        TimeGenerator,
    };
    use crate::duration::{DurationText, SignedDurationText};
    let column = |name: &str, column_type, length, generator| Column {
        name: name.to_string(),
        column_type,
        length,
        precision: None,
        scale: None,
        element: None,
        items: None,
        keys: Vec::new(),
        generator,
    };
    let uniform = |min: f64, max: f64| {
        Generator::Number(NumberGenerator::Uniform {
            min,
            max,
            decimals: None,
        })
    };
    let timestamp = |jitter: &str| {
        Generator::Time(TimeGenerator::Timestamp {
            start: "2026-01-01T00:00:00Z".into(),
            step: SignedDurationText::parse("1s").expect("a duration"),
            jitter: DurationText::parse(jitter).expect("a duration"),
        })
    };
    vec![
        column(
            "source_id",
            ColumnType::Int,
            None,
            Generator::Keyed(KeyedGenerator::Sequence {
                start: 0,
                step: 1,
                modulo: Some(1000),
            }),
        ),
        column("channel", ColumnType::Int, None, uniform(0.0, 63.0)),
        column("phase_no", ColumnType::Int, None, uniform(1.0, 3.0)),
        column("measured_at", ColumnType::Timestamp, None, timestamp("0s")),
        column(
            "label",
            ColumnType::Text,
            Some(50),
            Generator::Text(TextGenerator::YcsbText),
        ),
        column("quality", ColumnType::Int, None, uniform(0.0, 255.0)),
        column(
            "reading",
            ColumnType::Double,
            None,
            Generator::Number(NumberGenerator::Uniform {
                min: 0.0,
                max: 100_000.0,
                decimals: Some(3),
            }),
        ),
        column(
            "received_at",
            ColumnType::Timestamp,
            None,
            timestamp("4999ms"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The study's record: 9 fields (the key and these 8) of these types, 126 bytes in binary
    /// form (4 per int, 8 per double and timestamp, 50 for the label).
    #[test]
    fn the_declared_columns_are_the_studys_126_byte_record() {
        use crate::operation::FieldType;
        let record = crate::columns::Record::new(columns(), 0).unwrap();
        let expected = [
            ("source_id", FieldType::Int),
            ("channel", FieldType::Int),
            ("phase_no", FieldType::Int),
            ("measured_at", FieldType::Timestamp),
            ("label", FieldType::Text { max_len: Some(50) }),
            ("quality", FieldType::Int),
            ("reading", FieldType::Double),
            ("received_at", FieldType::Timestamp),
        ];
        let names: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
        let types: Vec<FieldType> = expected.iter().map(|(_, t)| *t).collect();
        assert_eq!(
            record
                .names()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            names
        );
        assert_eq!(&*record.field_types(), &types[..]);
        assert_eq!(KEY_BYTES + record.mean_bytes() as usize, 126);
    }

    #[test]
    fn values_have_their_types_text_form() {
        let record = crate::columns::Record::new(columns(), 0).unwrap();
        let mut values = record.values(crate::values::ValuePool::new(0));
        let mut v = String::new();
        let seed = record.insert_seed(2);
        values.write(3, 2, "k", seed, &mut v);
        assert_eq!(v, "2026-01-01 00:00:02.000");
        values.write(4, 2, "k", seed, &mut v);
        assert_eq!(v.len(), 50);
        values.write(0, 1002, "k", seed, &mut v);
        assert_eq!(v, "2");
        for idx in [1, 2, 5] {
            values.write(idx, 7, "k", seed, &mut v);
            assert!(v.parse::<i32>().is_ok(), "{idx}: {v}");
        }
        values.write(6, 7, "k", seed, &mut v);
        assert!(
            v.parse::<f64>().is_ok() && v.split('.').nth(1).unwrap().len() == 3,
            "{v}"
        );
        values.write(7, 2, "k", seed, &mut v);
        assert!(
            v.as_str() >= "2026-01-01 00:00:02.000" && v.as_str() <= "2026-01-01 00:00:06.999",
            "{v}"
        );
    }
}
