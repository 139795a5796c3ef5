//! The literal generators: a constant, and a choice among values with their weights; each
//! literal checked against the column's type and written as the column stores it.

pub(super) mod decl;

pub use decl::Literal;
pub use decl::LiteralGenerator;

use std::sync::Arc;

use super::generator::Generator;
use super::make::{finite, weights_checked, Built, Check, Draw, Make};
use super::spec::{abbreviated, Column, ColumnType};
use crate::generator::Discrete;

#[derive(Debug, Clone)]
enum Fixed {
    Constant(String),
    Choice(Discrete<usize>, Arc<[String]>),
}

/// The maker of a literal generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Literal(g) = k.generator() else {
        return None;
    };
    let fixed = match g {
        LiteralGenerator::Constant { value } => literal_text(value, k).map(Fixed::Constant),
        LiteralGenerator::Choice { values, weights } => choice(k, values, weights.as_deref()),
    };
    Some(fixed.map(|m| Box::new(m) as Box<dyn Make>))
}

fn choice(k: &Check, values: &[Literal], weights: Option<&[f64]>) -> Result<Fixed, String> {
    if values.is_empty() {
        return Err("values is empty".into());
    }
    let weights = match weights {
        Some(w) if w.len() != values.len() => {
            return Err(format!("{} weights for {} values", w.len(), values.len()))
        }
        Some(w) => w.to_vec(),
        None => vec![1.0; values.len()],
    };
    weights_checked(&weights, "weights")?;
    let texts = values
        .iter()
        .map(|v| literal_text(v, k))
        .collect::<Result<Vec<_>, _>>()?;
    let weighted: Vec<(usize, f64)> = weights.into_iter().enumerate().collect();
    Ok(Fixed::Choice(Discrete::new(&weighted), texts.into()))
}

/// A literal as the text a column of `c`'s type stores.
fn literal_text(value: &Literal, k: &Check) -> Result<String, String> {
    let (c, t) = (k.c, k.t());
    let mismatch = || format!("{} is not a {} value", value.describe(), t.name());
    Ok(match (t, value) {
        (ColumnType::Text, Literal::Text(s)) => {
            k.text_fits(s, "value")?;
            s.clone()
        }
        (ColumnType::Int | ColumnType::Bigint, Literal::Integer(i)) => {
            let (lo, hi) = t.integer_range();
            if !(lo..=hi).contains(&(*i as f64)) {
                return Err(format!("{i} is out of a {} column's range", t.name()));
            }
            i.to_string()
        }
        (ColumnType::Double, Literal::Integer(i)) => i.to_string(),
        (ColumnType::Decimal, Literal::Integer(_) | Literal::Float(_)) => {
            let (p, s) = c.decimal_digits();
            let text = match value {
                Literal::Integer(i) => i.to_string(),
                Literal::Float(f) => finite(*f, "value")?.to_string(),
                _ => unreachable!("matched above"),
            };
            match crate::decimal::parse_units(&text, s) {
                Some(u) if crate::decimal::fits(u, p) => crate::decimal::format_units(u, s),
                _ => {
                    return Err(format!(
                        "{text} is not a decimal of {p} digits, {s} after the point"
                    ))
                }
            }
        }
        (ColumnType::Double, Literal::Float(f)) => finite(*f, "value")?.to_string(),
        (ColumnType::Bool, Literal::Bool(b)) => if *b { "1" } else { "0" }.to_string(),
        (ColumnType::Timestamp, Literal::Text(s)) => {
            let ms = chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|e| format!("\"{s}\" is not an RFC 3339 time: {e}"))?
                .timestamp_millis();
            let mut out = String::new();
            crate::values::push_timestamp(ms, &mut out);
            out
        }
        (ColumnType::Blob, Literal::Text(s)) => {
            let max = c.length.unwrap_or(0) as usize;
            if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "\"{}\" is not bytes in hex (two digits a byte)",
                    abbreviated(s)
                ));
            }
            if s.len() / 2 > max {
                return Err(format!(
                    "{} bytes are more than the column's length {max}",
                    s.len() / 2
                ));
            }
            s.to_ascii_lowercase()
        }
        (ColumnType::Uuid, Literal::Text(s)) => {
            let ok = s.len() == 36
                && s.char_indices().all(|(i, ch)| {
                    if [8, 13, 18, 23].contains(&i) {
                        ch == '-'
                    } else {
                        ch.is_ascii_hexdigit()
                    }
                });
            if !ok {
                return Err(format!("\"{s}\" is not a UUID (8-4-4-4-12 hex digits)"));
            }
            s.to_ascii_lowercase()
        }
        _ => return Err(mismatch()),
    })
}

impl Make for Fixed {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Fixed::Constant(v) => out.push_str(v),
            Fixed::Choice(chooser, values) => out.push_str(&values[chooser.next(d.rng)]),
        }
    }

    fn mean_bytes(&self, t: ColumnType, _c: &Column) -> Option<f64> {
        match (t, self) {
            (ColumnType::Text, Fixed::Constant(v)) => Some(v.len() as f64),
            (ColumnType::Blob, Fixed::Constant(v)) => Some(v.len() as f64 / 2.0),
            _ => None,
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
