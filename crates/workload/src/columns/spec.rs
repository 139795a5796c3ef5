//! A column as a workload file declares it: its name, type, shape and generator (the serde form
//! the `columns` property and the JSON Schema carry), and the checks of its shape.

use serde::{Deserialize, Serialize};

/// The longest text column (bytes), as a YCSB field's.
pub const MAX_TEXT_LENGTH: u32 = 16 * 1024 * 1024;
/// Columns per record, as YCSB's fields.
pub const MAX_COLUMNS: usize = 1000;

/// One column of a declared record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// Letters, digits and '_', starting with a letter.
    pub name: String,
    #[serde(rename = "type")]
    pub column_type: ColumnType,
    /// Text: the longest value in characters; blob: in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u32>,
    /// Decimal only: its digits in all (1 to 38; default 18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<u32>,
    /// Decimal only: its digits after the point (0 to precision; default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<u32>,
    /// List and map only: the type of their elements (text, int, bigint, double, bool, uuid,
    /// timestamp); `length` is then a text element's, the generator makes each element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<ColumnType>,
    /// List and map only: how many elements a value has, drawn uniformly between min and max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Items>,
    /// Map only: the keys its entries may have (a value holds `items` of them, each once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    pub generator: super::generator::Generator,
}

/// How many elements a list or a map holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Items {
    #[serde(default)]
    pub min: u32,
    pub max: u32,
}

/// Elements a list or a map holds at most.
pub const MAX_ITEMS: u32 = 1000;

/// A decimal column's digits when the file gives none.
const DEFAULT_PRECISION: u32 = 18;
const DEFAULT_SCALE: u32 = 2;

impl Column {
    /// Whether value `v` fits the column: an integer type's range, a decimal's digits (any
    /// number fits a double); the error names `what`.
    pub(super) fn in_range(&self, v: f64, what: &str) -> Result<(), String> {
        let t = self.column_type;
        let (lo, hi) = t.integer_range();
        if t.is_integer() && !(lo..=hi).contains(&v) {
            return Err(format!(
                "{what} {v} is out of a {} column's range",
                t.name()
            ));
        }
        if t == ColumnType::Decimal {
            let (p, s) = self.decimal_digits();
            let units = crate::decimal::parse_units(&crate::decimal::format_f64(v, s), s);
            if !units.is_some_and(|u| crate::decimal::fits(u, p)) {
                return Err(format!(
                    "{what} {v} does not fit a decimal of {p} digits, {s} after the point"
                ));
            }
        }
        Ok(())
    }

    /// The type as `workload check` names it: `text(60)`, `decimal(10,2)`, `list<text(8)>, 1 to
    /// 3 items`, `map<int> of font_size, theme, 0 to 2 items`.
    pub fn type_text(&self) -> String {
        let scalar = |t: ColumnType| match (self.length, t) {
            (Some(n), _) => format!("{}({n})", t.name()),
            (None, ColumnType::Decimal) => {
                let (p, s) = self.decimal_digits();
                format!("decimal({p},{s})")
            }
            _ => t.name().to_string(),
        };
        match (self.column_type, self.element, self.items) {
            (ColumnType::List | ColumnType::Map, Some(e), Some(items)) => {
                let keys = match self.keys.is_empty() {
                    true => String::new(),
                    false => format!(" of {}", self.keys.join(", ")),
                };
                format!(
                    "{}<{}>{keys}, {} to {} items",
                    self.column_type.name(),
                    scalar(e),
                    items.min,
                    items.max
                )
            }
            (t, _, _) => scalar(t),
        }
    }

    /// A decimal column's (precision, scale).
    pub fn decimal_digits(&self) -> (u32, u32) {
        (
            self.precision.unwrap_or(DEFAULT_PRECISION),
            self.scale.unwrap_or(DEFAULT_SCALE),
        )
    }
}

/// A column's type; each typed binding maps it to its own (docs/workload-files.md has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    Text,
    /// 32-bit integer.
    Int,
    /// 64-bit integer.
    Bigint,
    /// 64-bit floating point.
    Double,
    /// Written as 1 or 0 (every SQL database and Cassandra's binding read both).
    Bool,
    /// Millisecond timestamp, `YYYY-MM-DD HH:MM:SS.mmm` UTC.
    Timestamp,
    /// A UUID in its 36-character text form.
    Uuid,
    /// An exact decimal (`precision`, `scale`): NUMERIC / DECIMAL in SQL, `decimal` in CQL.
    Decimal,
    /// Bytes (`length` the most): BYTEA / LONGBLOB / BLOB in SQL, `blob` in CQL, hex text in the
    /// key-value stores.
    Blob,
    /// A list of `element`s: JSON in SQL, `list<T>` in CQL, an array in MongoDB, JSON text in the
    /// key-value stores.
    List,
    /// A map of text keys to `element`s: JSON in SQL, `map<text, T>` in CQL, a subdocument in
    /// MongoDB, JSON text in the key-value stores.
    Map,
}

impl ColumnType {
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Int => "int",
            ColumnType::Bigint => "bigint",
            ColumnType::Double => "double",
            ColumnType::Bool => "bool",
            ColumnType::Timestamp => "timestamp",
            ColumnType::Uuid => "uuid",
            ColumnType::Decimal => "decimal",
            ColumnType::Blob => "blob",
            ColumnType::List => "list",
            ColumnType::Map => "map",
        }
    }

    pub(super) fn is_collection(self) -> bool {
        matches!(self, ColumnType::List | ColumnType::Map)
    }

    /// A list's or a map's element type, as bindings see it (`None`: not one a collection holds).
    pub(super) fn element_type(self) -> Option<crate::operation::ElementType> {
        use crate::operation::ElementType as E;
        Some(match self {
            ColumnType::Text => E::Text,
            ColumnType::Int => E::Int,
            ColumnType::Bigint => E::BigInt,
            ColumnType::Double => E::Double,
            ColumnType::Bool => E::Bool,
            ColumnType::Uuid => E::Uuid,
            ColumnType::Timestamp => E::Timestamp,
            ColumnType::Decimal | ColumnType::Blob | ColumnType::List | ColumnType::Map => {
                return None
            }
        })
    }

    pub(super) fn is_integer(self) -> bool {
        matches!(self, ColumnType::Int | ColumnType::Bigint)
    }

    /// The range of an integer type.
    pub(super) fn integer_range(self) -> (f64, f64) {
        match self {
            ColumnType::Int => (i32::MIN as f64, i32::MAX as f64),
            _ => (-(2f64.powi(63)), 2f64.powi(63) - 1.0),
        }
    }
}

/// A text value is plain: printable ASCII without quotes and backslash (what every binding and
/// text format takes as it is).
pub(super) fn is_plain_text(s: &str) -> bool {
    s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\'' && b != b'\\')
}

pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// Checks a column's length and digits against its type (a list's or a map's: its elements').
pub(super) fn check_shape(c: &Column) -> Result<(), (&'static str, String)> {
    let length = |reason: String| Err(("length", reason));
    match (c.column_type, c.length) {
        (ColumnType::Text, None) => {
            return length("a text column needs its longest length (length = N)".into())
        }
        (ColumnType::Blob, None) => {
            return length("a blob column needs its largest size in bytes (length = N)".into())
        }
        (ColumnType::Text, Some(n)) if n == 0 || n > MAX_TEXT_LENGTH => {
            return length(format!("{n} is out of range: 1 to {MAX_TEXT_LENGTH}"))
        }
        (ColumnType::Blob, Some(n)) if n == 0 || n > MAX_TEXT_LENGTH / 2 => {
            return length(format!(
                "{n} bytes is out of range: 1 to {}",
                MAX_TEXT_LENGTH / 2
            ))
        }
        (t, Some(_)) if !matches!(t, ColumnType::Text | ColumnType::Blob) => {
            return length(format!(
                "only text and blob columns have a length, not {} (a list's or map's is its text elements')",
                t.name()
            ))
        }
        _ => {}
    }
    if c.column_type == ColumnType::Decimal {
        let (p, s) = c.decimal_digits();
        if !(1..=crate::decimal::MAX_PRECISION).contains(&p) {
            return Err((
                "precision",
                format!(
                    "{p} is out of range: 1 to {}",
                    crate::decimal::MAX_PRECISION
                ),
            ));
        }
        if s > p {
            return Err(("scale", format!("{s} is above the precision {p}")));
        }
    } else {
        for (field, given) in [("precision", c.precision), ("scale", c.scale)] {
            if given.is_some() {
                return Err((
                    field,
                    format!(
                        "only decimal columns have a {field}, not {}",
                        c.column_type.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `s` cut to 60 bytes for an error message.
pub(crate) fn abbreviated(s: &str) -> String {
    if s.len() <= 60 {
        s.to_string()
    } else {
        let mut end = 60;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}
