//! A value's canonical text: one text for every way a database prints the same typed value (a
//! number by value, a timestamp without zero fraction digits, a boolean as 1 or 0, hex and UUIDs
//! in lowercase, JSON with its numbers by value and a map's keys in order). Two texts of a field
//! hold the same value when their canonical texts are equal: what a write stored is compared with
//! what a read returned (the bindings' round trip, `--verify-writes`).

use std::borrow::Cow;

use crate::operation::FieldType;

/// `value` of a field of type `t` in its canonical text (the text itself where it is already,
/// or where it does not parse as its type: it then equals only itself).
pub fn canonical(t: FieldType, value: &str) -> Cow<'_, str> {
    match t {
        FieldType::Text { .. } => Cow::Borrowed(value),
        FieldType::Int | FieldType::BigInt | FieldType::Double => match value.trim().parse::<f64>()
        {
            Ok(x) => Cow::Owned(number(x)),
            Err(_) => Cow::Borrowed(value),
        },
        FieldType::Timestamp => Cow::Borrowed(without_zero_fraction(value)),
        // PostgreSQL prints a boolean as true/false (t/f), the others as 1/0.
        FieldType::Bool => match value {
            "t" | "true" => Cow::Borrowed("1"),
            "f" | "false" => Cow::Borrowed("0"),
            v => Cow::Borrowed(v),
        },
        FieldType::Uuid | FieldType::Blob { .. } => {
            match value.bytes().any(|b| b.is_ascii_uppercase()) {
                true => Cow::Owned(value.to_ascii_lowercase()),
                false => Cow::Borrowed(value),
            }
        }
        FieldType::List { .. } | FieldType::Map { .. } => {
            match serde_json::from_str::<serde_json::Value>(value) {
                Ok(v) => {
                    let mut out = String::with_capacity(value.len());
                    json(&v, &mut out);
                    Cow::Owned(out)
                }
                Err(_) => Cow::Borrowed(value),
            }
        }
        FieldType::Decimal { scale, .. } => {
            match crate::decimal::parse_units(value, u32::from(scale)) {
                Some(units) => Cow::Owned(crate::decimal::format_units(units, u32::from(scale))),
                None => Cow::Borrowed(value),
            }
        }
    }
}

/// `2026-01-01 00:00:03.000` and `2026-01-01 00:00:03` are the same instant, and so are
/// `...03.250` and `...03.25`.
pub fn without_zero_fraction(t: &str) -> &str {
    match t.split_once('.') {
        Some((whole, frac)) if frac.bytes().all(|c| c == b'0') => whole,
        Some(_) => t.trim_end_matches('0'),
        None => t,
    }
}

/// A number by value: `1.50`, `1.5` and `15e-1` are `1.5`; `2.0` is `2`.
fn number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// JSON with numbers by value and a map's keys in byte order, no spaces.
fn json(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value as V;
    match v {
        V::Number(n) => match n.as_f64() {
            Some(x) => out.push_str(&number(x)),
            None => out.push_str(&n.to_string()),
        },
        V::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(item, out);
            }
            out.push(']');
        }
        V::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&V::String(k.clone()).to_string());
                out.push(':');
                json(&map[k], out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operation::ElementType;

    #[test]
    fn one_value_printed_differently_has_one_canonical_text() {
        let same = |t: FieldType, a: &str, b: &str| canonical(t, a) == canonical(t, b);
        assert!(same(FieldType::Double, "1.50", "1.5"));
        assert!(same(FieldType::BigInt, "42", "42.0"));
        assert!(!same(FieldType::Int, "42", "43"));
        assert!(same(
            FieldType::Timestamp,
            "2026-01-01 00:00:03.000",
            "2026-01-01 00:00:03"
        ));
        assert!(same(
            FieldType::Timestamp,
            "2026-01-01 00:00:03.250",
            "2026-01-01 00:00:03.25"
        ));
        assert!(same(FieldType::Bool, "true", "1") && same(FieldType::Bool, "f", "0"));
        assert!(same(FieldType::Uuid, "A0EEBC99-9C0B", "a0eebc99-9c0b"));
        assert!(same(
            FieldType::Decimal {
                precision: 10,
                scale: 2
            },
            "12.5",
            "12.50"
        ));
        let map = FieldType::Map {
            element: ElementType::Int,
        };
        assert!(same(map, r#"{"b": 2, "a": 1.0}"#, r#"{"a":1,"b":2}"#));
        assert!(!same(map, r#"{"a":1}"#, r#"{"a":2}"#));
        let text = FieldType::Text { max_len: None };
        assert!(!same(text, "a", "A"));
        // What does not parse as its type equals only itself.
        assert_eq!(canonical(FieldType::Int, "x1"), "x1");
    }
}
