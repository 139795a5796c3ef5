//! What a generator family provides: from a column it recognises, a checked [`Make`] that
//! writes the column's values and knows their mean size. Each family module (numbers, keyed,
//! time, text, bytes, literal, derived, collection) holds its generators' checks, outputs and
//! sizes; this module holds what they share.

use std::sync::Arc;

use super::generator::Generator;
use super::spec::{abbreviated, is_plain_text, Column, ColumnType};
use crate::generator::WorkerRng;
use crate::operation::FieldType;

/// A family's answer for a column: `None` when the generator is not one of its own, else the
/// checked maker or why the generator does not fit the column.
pub(super) type Built = Option<Result<Box<dyn Make>, String>>;

/// A generator checked against its column, its numbers parsed: it makes the column's values.
pub(super) trait Make: std::fmt::Debug + Send + Sync {
    /// Appends a value made from `d` to `out`.
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String);

    /// Mean bytes of a value of type `t` of column `c`, when the generator decides it (a
    /// text's length, a collection's JSON text); `None`: the type's own size.
    fn mean_bytes(&self, _t: ColumnType, _c: &Column) -> Option<f64> {
        None
    }

    /// A derived column's template: its value is made of other columns' values.
    fn template(&self) -> Option<Arc<[Piece]>> {
        None
    }

    /// A copy for another worker (generators with state of their own are copied).
    fn boxed_clone(&self) -> Box<dyn Make>;
}

/// A part of a derived column's template.
#[derive(Debug, Clone)]
pub(super) enum Piece {
    Text(String),
    Key,
    Column(usize),
}

/// What one value is drawn from: its column's type and digits, the record's key number, the
/// operation's stream and the run's value pool.
pub(super) struct Draw<'a> {
    pub t: ColumnType,
    /// A decimal's precision and scale.
    pub digits: (u32, u32),
    pub keynum: u64,
    pub rng: &'a mut WorkerRng,
    pub pool: &'a crate::values::ValuePool,
}

impl Draw<'_> {
    /// A number as the column's type writes it: an integer type's rounded and held within its
    /// range.
    pub fn push_number(&self, v: f64, out: &mut String) {
        if self.t.is_integer() {
            let (lo, hi) = self.t.integer_range();
            let mut b = itoa::Buffer::new();
            out.push_str(b.format(v.round().clamp(lo, hi) as i64));
        } else {
            let _ = std::fmt::Write::write_fmt(out, format_args!("{v}"));
        }
    }
}

/// Appends a value made by `maker` to `out` (a decimal's held to its digits).
pub(super) fn write_value(maker: &mut dyn Make, d: &mut Draw<'_>, out: &mut String) {
    maker.write(d, out);
    if d.t == ColumnType::Decimal {
        as_decimal(out, d.digits.0, d.digits.1);
    }
}

/// Mean bytes of a value of type `t` of column `c` made by `m` (a list's or map's: its JSON
/// text's).
pub(super) fn mean_value_bytes(t: ColumnType, c: &Column, m: &dyn Make) -> f64 {
    if let Some(bytes) = m.mean_bytes(t, c) {
        return bytes;
    }
    match t {
        ColumnType::Text | ColumnType::Blob => c.length.unwrap_or(1) as f64 / 2.0,
        ColumnType::Int => 4.0,
        ColumnType::Bool => 1.0,
        ColumnType::Uuid => 16.0,
        ColumnType::Bigint | ColumnType::Double | ColumnType::Timestamp => 8.0,
        ColumnType::Decimal => FieldType::Decimal {
            precision: c.decimal_digits().0 as u8,
            scale: 0,
        }
        .binary_bytes(0) as f64,
        ColumnType::List | ColumnType::Map => 2.0,
    }
}

/// A column's generator being checked: the column, the record's columns and its place among them.
pub(super) struct Check<'a> {
    pub c: &'a Column,
    pub columns: &'a [Column],
    pub me: usize,
}

impl Check<'_> {
    pub fn t(&self) -> ColumnType {
        self.c.column_type
    }

    pub fn generator(&self) -> &Generator {
        &self.c.generator
    }

    /// An integer, double or decimal column.
    pub fn numeric(&self) -> bool {
        let t = self.t();
        t.is_integer() || matches!(t, ColumnType::Double | ColumnType::Decimal)
    }

    /// The error of a generator the column's type cannot take.
    pub fn wrong(&self) -> String {
        format!(
            "a {} column cannot take the {} generator",
            self.t().name(),
            self.c.generator.name()
        )
    }

    /// `v` fits the column (an integer type's range, a decimal's digits); the error names `what`.
    pub fn in_range(&self, v: f64, what: &str) -> Result<(), String> {
        self.c.in_range(v, what)
    }

    /// Text `v` is plain and fits the column's length; the error names `what`.
    pub fn text_fits(&self, v: &str, what: &str) -> Result<(), String> {
        if !is_plain_text(v) {
            return Err(format!(
                "{what} \"{v}\" must be printable ASCII without quotes and backslash"
            ));
        }
        match self.c.length {
            Some(n) if v.len() > n as usize => Err(format!(
                "{what} \"{}\" is longer than the column's length {n}",
                abbreviated(v)
            )),
            _ => Ok(()),
        }
    }

    /// The column's length when it is of type `t` (what a generator of `t` values needs).
    pub fn length_of(&self, t: ColumnType) -> Option<u32> {
        self.c.length.filter(|_| self.t() == t)
    }
}

pub(super) fn finite(v: f64, what: &str) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what} must be a finite number, not {v}"))
    }
}

/// Weights of a choice or a histogram: not empty, none negative, not all 0.
pub(super) fn weights_checked(weights: &[f64], what: &str) -> Result<(), String> {
    if weights.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(format!("{what}: {w} is not a weight (a number >= 0)"));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(format!("{what} sum to 0"));
    }
    Ok(())
}

/// Lowercase hex digits, as blobs and UUIDs are written.
pub(super) const HEX: &[u8; 16] = b"0123456789abcdef";

/// A generator's number in `out` as a decimal of `p` digits, `s` after the point: rounded to
/// `s` decimals and held within the digits (a normal's tail past them takes the largest value).
fn as_decimal(out: &mut String, p: u32, s: u32) {
    let largest = 10i128.pow(p) - 1;
    let units = match crate::decimal::parse_units(out, s) {
        Some(u) => u,
        None => {
            let v: f64 = out.parse().unwrap_or(0.0);
            let scaled = (v * 10f64.powi(s as i32)).round();
            if scaled.is_nan() {
                0
            } else {
                scaled.clamp(-(largest as f64), largest as f64) as i128
            }
        }
    };
    *out = crate::decimal::format_units(units.clamp(-largest, largest), s);
}
