//! Type conversion: the workload's text as CQL values of the column's type and back, CQL types
//! and identifiers, and values written into statement text as literals.

use scalebench_workload::{FailureClass, FieldType, Fields, OpError};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::serialize::SerializationError;
use scylla::value::{CqlTimestamp, CqlValue, Row};

/// A column's value as the workload's text; `t` its type where known (a list or map Cassandra
/// returns as null is empty).
pub(super) fn text_of(v: Option<CqlValue>, t: Option<FieldType>) -> String {
    match v {
        Some(CqlValue::List(items) | CqlValue::Set(items)) => {
            let json: Vec<serde_json::Value> = items.into_iter().map(json_of).collect();
            serde_json::Value::Array(json).to_string()
        }
        Some(CqlValue::Map(entries)) => {
            let json: serde_json::Map<String, serde_json::Value> = entries
                .into_iter()
                .map(|(k, v)| (text_of(Some(k), None), json_of(v)))
                .collect();
            serde_json::Value::Object(json).to_string()
        }
        None if matches!(t, Some(FieldType::List { .. })) => "[]".into(),
        None if matches!(t, Some(FieldType::Map { .. })) => "{}".into(),
        Some(CqlValue::Text(s)) | Some(CqlValue::Ascii(s)) => s,
        Some(CqlValue::Int(i)) => i.to_string(),
        Some(CqlValue::BigInt(i)) => i.to_string(),
        Some(CqlValue::Boolean(b)) => if b { "1" } else { "0" }.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        Some(CqlValue::Double(d)) => d.to_string(),
        Some(CqlValue::Decimal(d)) => decimal_text(&d),
        Some(CqlValue::Blob(b)) => hex(&b),
        Some(CqlValue::Timestamp(CqlTimestamp(ms))) => chrono::DateTime::from_timestamp_millis(ms)
            .map_or_else(|| ms.to_string(), |t| t.format(TIMESTAMP_TEXT).to_string()),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// A list's or a map's element as JSON: text, UUIDs and timestamps as strings.
fn json_of(v: CqlValue) -> serde_json::Value {
    match v {
        CqlValue::Int(i) => i.into(),
        CqlValue::BigInt(i) => i.into(),
        CqlValue::Double(d) => d.into(),
        CqlValue::Boolean(b) => b.into(),
        other => text_of(Some(other), None).into(),
    }
}

/// How the workload writes timestamps (UTC).
pub(super) const TIMESTAMP_TEXT: &str = "%Y-%m-%d %H:%M:%S%.3f";

/// A column's name as CQL takes it whatever the word: quoted, in lower case (what CQL makes of an
/// unquoted name, so YCSB's tables are the same columns), so that a workload file's `token` or
/// `order` is a column, not a keyword. Names are letters, digits and '_' (checked by the workload).
pub(super) fn cql_identifier(name: &str) -> String {
    format!("\"{}\"", name.to_lowercase())
}

pub(super) fn cql_type(t: FieldType) -> std::borrow::Cow<'static, str> {
    match t {
        FieldType::List { element } => format!("list<{}>", cql_type(element.field_type())).into(),
        FieldType::Map { element } => {
            format!("map<varchar, {}>", cql_type(element.field_type())).into()
        }
        t => scalar_cql_type(t).into(),
    }
}

fn scalar_cql_type(t: FieldType) -> &'static str {
    match t {
        FieldType::Text { .. } => "varchar",
        FieldType::Int => "int",
        FieldType::BigInt => "bigint",
        FieldType::Double => "double",
        FieldType::Timestamp => "timestamp",
        FieldType::Bool => "boolean",
        FieldType::Uuid => "uuid",
        FieldType::Decimal { .. } => "decimal",
        FieldType::Blob { .. } => "blob",
        FieldType::List { .. } | FieldType::Map { .. } => unreachable!("cql_type's"),
    }
}

/// A field's text as the CQL value of its type.
pub(super) fn typed_value(t: FieldType, text: &str) -> Result<CqlValue, OpError> {
    let bad =
        |what: &str| OpError::new(FailureClass::Other, format!("value '{text}' is not {what}"));
    Ok(match t {
        FieldType::List { element } | FieldType::Map { element } => {
            let json: serde_json::Value =
                serde_json::from_str(text).map_err(|_| bad("JSON"))?;
            let one = |v: &serde_json::Value| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
                    other => other.to_string(),
                };
                typed_value(element.field_type(), &text)
            };
            match (t, &json) {
                (FieldType::List { .. }, serde_json::Value::Array(items)) => {
                    CqlValue::List(items.iter().map(one).collect::<Result<_, _>>()?)
                }
                (FieldType::Map { .. }, serde_json::Value::Object(entries)) => CqlValue::Map(
                    entries
                        .iter()
                        .map(|(k, v)| Ok((CqlValue::Text(k.clone()), one(v)?)))
                        .collect::<Result<_, OpError>>()?,
                ),
                _ => return Err(bad("a JSON array or object of the column's kind")),
            }
        }
        FieldType::Text { .. } => CqlValue::Text(text.to_string()),
        FieldType::Int => CqlValue::Int(text.parse().map_err(|_| bad("an int"))?),
        FieldType::BigInt => CqlValue::BigInt(text.parse().map_err(|_| bad("a bigint"))?),
        FieldType::Bool => CqlValue::Boolean(match text {
            "1" | "true" => true,
            "0" | "false" => false,
            _ => return Err(bad("a boolean (1, 0, true, false)")),
        }),
        FieldType::Uuid => CqlValue::Uuid(text.parse().map_err(|_| bad("a UUID"))?),
        FieldType::Double => CqlValue::Double(text.parse().map_err(|_| bad("a double"))?),
        FieldType::Timestamp => CqlValue::Timestamp(CqlTimestamp(
            chrono::NaiveDateTime::parse_from_str(text, TIMESTAMP_TEXT)
                .map_err(|_| bad("a timestamp (YYYY-MM-DD HH:MM:SS.mmm)"))?
                .and_utc()
                .timestamp_millis(),
        )),
        FieldType::Blob { .. } => CqlValue::Blob(
            (0..text.len() / 2)
                .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2).unwrap_or("x"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .ok()
                .filter(|_| text.len().is_multiple_of(2))
                .ok_or_else(|| bad("bytes in hex"))?,
        ),
        // An unscaled integer (big-endian two's complement, as short as it goes) and the scale.
        FieldType::Decimal { scale, .. } => {
            let units = scalebench_workload::decimal::parse_units(text, u32::from(scale))
                .ok_or_else(|| bad("a decimal"))?;
            let bytes = units.to_be_bytes();
            let sign = if units < 0 { 0xFF } else { 0x00 };
            // Leading bytes that only repeat the sign go, keeping the sign bit of the first kept.
            let skip = (0..15)
                .take_while(|&i| bytes[i] == sign && (bytes[i + 1] & 0x80) == (sign & 0x80))
                .count();
            CqlValue::Decimal(
                scylla::value::CqlDecimal::from_signed_be_bytes_and_exponent(
                    bytes[skip..].to_vec(),
                    i32::from(scale),
                ),
            )
        }
    })
}

/// Rows of the key and `cols`' columns as keys and their fields, into `out`.
pub(super) fn keyed(rows: Vec<Row>, cols: std::ops::Range<usize>, types: &[FieldType], out: &mut Vec<(String, Fields)>) {
    for row in rows {
        let mut it = row.columns.into_iter();
        let key = text_of(it.next().flatten(), None);
        out.push((key, fields_of(cols.clone(), types, it)));
    }
}

/// Columns `cols` (of types `types`) of a row as fields.
pub(super) fn fields_of(
    cols: std::ops::Range<usize>,
    types: &[FieldType],
    values: impl Iterator<Item = Option<CqlValue>>,
) -> Fields {
    cols.zip(values)
        .map(|(c, v)| (c, text_of(v, types.get(c).copied())))
        .collect()
}

/// Bytes as lowercase hex, as a blob column's text is.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A CQL decimal as text with its own scale's decimals.
fn decimal_text(d: &scylla::value::CqlDecimal) -> String {
    let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
    if bytes.len() > 16 || scale < 0 {
        return format!("{d:?}");
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xFF
    } else {
        0x00
    };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    scalebench_workload::decimal::format_units(i128::from_be_bytes(full), scale as u32)
}

/// Bound values: text as borrowed strings (YCSB's schema, no copies), or typed values.
pub(super) enum Values<'a> {
    Text(Vec<&'a str>),
    Typed(Vec<Option<CqlValue>>),
}

/// A CQL string literal: quoted, with quotes doubled.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn literal(v: &Option<CqlValue>) -> String {
    match v {
        None => "null".into(),
        Some(CqlValue::Text(t)) | Some(CqlValue::Ascii(t)) => quoted(t),
        Some(CqlValue::Int(i)) => i.to_string(),
        Some(CqlValue::BigInt(i)) => i.to_string(),
        Some(CqlValue::Boolean(b)) => b.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        // Rust's shortest round-trip form: digits, a point, an exponent; CQL reads each.
        Some(CqlValue::Double(d)) if d.is_finite() => format!("{d:e}"),
        Some(CqlValue::Double(d)) if d.is_nan() => "NaN".into(),
        Some(CqlValue::Double(d)) => if *d > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        // Milliseconds after the epoch: CQL's integer form of a timestamp.
        Some(CqlValue::Timestamp(t)) => t.0.to_string(),
        Some(CqlValue::Decimal(d)) => decimal_text(d),
        // CQL's blob literal.
        Some(CqlValue::Blob(b)) => format!("0x{}", hex(b)),
        // CQL's collection literals.
        Some(CqlValue::List(items)) => {
            let items: Vec<String> = items.iter().map(|v| literal(&Some(v.clone()))).collect();
            format!("[{}]", items.join(", "))
        }
        Some(CqlValue::Map(entries)) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        literal(&Some(k.clone())),
                        literal(&Some(v.clone()))
                    )
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Some(other) => {
            unreachable!("the binding binds the workload's types, not {other:?}")
        }
    }
}

/// `cql` with each bind marker `?` replaced by the next value as a literal. The statements are
/// the binding's own: `?` appears in them only as a marker (names are checked identifiers).
pub(super) fn inline(cql: &str, values: &Values<'_>) -> String {
    let literals: Vec<String> = match values {
        Values::Text(v) => v.iter().map(|t| quoted(t)).collect(),
        Values::Typed(v) => v.iter().map(literal).collect(),
    };
    let mut out =
        String::with_capacity(cql.len() + literals.iter().map(String::len).sum::<usize>());
    let mut next = literals.iter();
    for c in cql.chars() {
        if c == '?' {
            out.push_str(next.next().expect("one value per marker"));
        } else {
            out.push(c);
        }
    }
    out
}

impl SerializeRow for Values<'_> {
    fn serialize(
        &self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        match self {
            Values::Text(v) => v.serialize(ctx, writer),
            Values::Typed(v) => v.serialize(ctx, writer),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Values::Text(v) => v.is_empty(),
            Values::Typed(v) => v.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decimal column's text goes to CQL's unscaled integer and scale and back unchanged, the
    /// integer as short as it goes (what Cassandra's BigDecimal writes).
    #[test]
    fn decimals_round_trip_through_cql() {
        let t = FieldType::Decimal {
            precision: 38,
            scale: 2,
        };
        for text in [
            "0.00",
            "1.27",
            "1.28",
            "-1.28",
            "-1.29",
            "327.67",
            "-0.01",
            "999999999999999999999999999999999999.99",
            "-999999999999999999999999999999999999.99",
        ] {
            let v = typed_value(t, text).unwrap();
            let CqlValue::Decimal(d) = &v else {
                panic!("{v:?}")
            };
            let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
            assert_eq!(scale, 2);
            if text == "1.27" {
                assert_eq!(bytes, [127]);
            }
            if text == "1.28" {
                assert_eq!(bytes, [0, 128]);
            }
            if text == "-1.28" {
                assert_eq!(bytes, [128]);
            }
            assert_eq!(text_of(Some(v), Some(t)), text);
        }
        assert!(typed_value(t, "1.234").is_err());
    }



    #[test]
    fn unprepared_statements_carry_their_values_as_literals() {
        let insert = "INSERT INTO t (y_id, field0, field1) VALUES (?, ?, ?)";
        assert_eq!(
            inline(insert, &Values::Text(vec!["user1", "it's", "a?b"])),
            "INSERT INTO t (y_id, field0, field1) VALUES ('user1', 'it''s', 'a?b')"
        );
        let typed = Values::Typed(vec![
            Some(CqlValue::Text("k".into())),
            Some(CqlValue::Int(-7)),
            Some(CqlValue::Double(1.5e-7)),
            Some(CqlValue::Timestamp(CqlTimestamp(1_700_000_000_123))),
            None,
        ]);
        assert_eq!(
            inline("(?, ?, ?, ?, ?)", &typed),
            "('k', -7, 1.5e-7, 1700000000123, null)"
        );
        assert_eq!(literal(&Some(CqlValue::Double(100.0))), "1e2");
        assert_eq!(
            literal(&Some(CqlValue::Double(f64::NEG_INFINITY))),
            "-Infinity"
        );
    }
}
