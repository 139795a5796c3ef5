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
    pub generator: Generator,
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

    /// A sequence's values over `keys` key numbers (0 to keys - 1) fit the column (any other
    /// generator: Ok).
    pub fn sequence_in_range(&self, keys: u64) -> Result<(), String> {
        let Generator::Sequence {
            start,
            step,
            modulo,
        } = &self.generator
        else {
            return Ok(());
        };
        let n = modulo.map_or(keys, |m| m.min(keys));
        if n == 0 {
            return Ok(());
        }
        let last = *start as f64 + *step as f64 * (n - 1) as f64;
        self.in_range(last, &format!("key number {}'s value", n - 1))
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

/// A literal in a file: a constant or a choice's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Literal {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Literal {
    pub(super) fn describe(&self) -> String {
        match self {
            Literal::Bool(b) => b.to_string(),
            Literal::Integer(i) => i.to_string(),
            Literal::Float(f) => f.to_string(),
            Literal::Text(t) => format!("\"{t}\""),
        }
    }
}

/// How a column's values are made. Integer and double columns take the numeric generators (an
/// integer column's values rounded), text the text generators, each type its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Generator {
    /// The same value in every record.
    Constant { value: Literal },
    /// `start + (key number mod modulo) x step`: a record's value is fixed by its key.
    Sequence {
        #[serde(default)]
        start: i64,
        #[serde(default = "one")]
        step: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        modulo: Option<u64>,
    },
    /// Uniform between min and max (both included for integers); a double column's values
    /// rounded to `decimals` when given.
    Uniform {
        min: f64,
        max: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decimals: Option<u32>,
    },
    /// YCSB's Zipfian over the integers min..=max (theta 0.99 unless given): min is the most common.
    Zipfian {
        min: i64,
        max: i64,
        #[serde(default = "zipfian_theta")]
        theta: f64,
    },
    /// A recent key number (YCSB's "latest" skew, for a column that refers to another record):
    /// the record's own key number minus a Zipfian distance in 0..window (0 the most likely),
    /// never below 0.
    Latest {
        #[serde(default = "latest_window")]
        window: u64,
        #[serde(default = "zipfian_theta")]
        theta: f64,
    },
    /// YCSB's hotspot: a fraction of the values gets a fraction of the draws.
    Hotspot {
        min: i64,
        max: i64,
        #[serde(default = "hot_data")]
        hot_data_fraction: f64,
        #[serde(default = "hot_operations")]
        hot_operation_fraction: f64,
    },
    /// Exponential with this mean (non-negative).
    Exponential { mean: f64 },
    /// Normal (Gaussian).
    Normal { mean: f64, stddev: f64 },
    /// YCSB's histogram generator: bucket i (its value i x bucket_width) drawn with weight
    /// `buckets[i]`.
    Histogram {
        buckets: Vec<f64>,
        #[serde(default = "one")]
        bucket_width: i64,
    },
    /// A version 4 UUID drawn from the record's stream.
    Uuid,
    /// `start + key number x step`, plus up to `jitter` drawn uniformly (durations: 1s, 250ms).
    Timestamp {
        #[serde(default = "epoch_text")]
        start: String,
        #[serde(default = "one_second")]
        step: String,
        #[serde(default = "zero_duration")]
        jitter: String,
    },
    /// The client's clock when the value is made, plus `offset` (e.g. "-5m"): not reproducible.
    Now {
        #[serde(default = "zero_duration")]
        offset: String,
    },
    /// Random characters of `charset`, between min_length and max_length (default: the column's).
    Text {
        #[serde(default = "one_u32")]
        min_length: u32,
        #[serde(default)]
        max_length: Option<u32>,
        #[serde(default)]
        charset: Charset,
    },
    /// `min` to `max` words of `words`, separated by spaces; or of a dictionary `file` (one word a
    /// line, in the workload file's directory or one `--allow-files` allows; read when the file is,
    /// so its words travel with it to a run's clients, and results keep its digest instead).
    Words {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        words: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// The dictionary file's SHA-256 and size, set when it is read (not written in a file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        digest: Option<crate::digest::Digest>,
        #[serde(default = "one_u32")]
        min: u32,
        #[serde(default = "one_u32")]
        max: u32,
    },
    /// One of `values`, each with its weight (all equal when `weights` is left out).
    Choice {
        values: Vec<Literal>,
        #[serde(default)]
        weights: Option<Vec<f64>>,
    },
    /// Random bytes, `min_size` to `max_size` of them (default 1 to the column's length): a blob's.
    Bytes {
        #[serde(default = "one_u32")]
        min_size: u32,
        #[serde(default)]
        max_size: Option<u32>,
    },
    /// Text made of other columns' values of the same record: `{name}` is a column's value,
    /// `{key}` the record's key (e.g. "{user_id}:{created_at}").
    Derived { template: String },
    /// YCSB's field value: random characters cut from the run's value pool, the column's length.
    YcsbText,
}

fn one() -> i64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn zipfian_theta() -> f64 {
    crate::generator::zipfian::ZIPFIAN_CONSTANT
}
fn latest_window() -> u64 {
    1000
}

fn hot_data() -> f64 {
    0.2
}
fn hot_operations() -> f64 {
    0.8
}
fn epoch_text() -> String {
    "2026-01-01T00:00:00Z".into()
}
fn one_second() -> String {
    "1s".into()
}
fn zero_duration() -> String {
    "0s".into()
}

impl Generator {
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Constant { .. } => "constant",
            Generator::Sequence { .. } => "sequence",
            Generator::Uniform { .. } => "uniform",
            Generator::Zipfian { .. } => "zipfian",
            Generator::Hotspot { .. } => "hotspot",
            Generator::Latest { .. } => "latest",
            Generator::Exponential { .. } => "exponential",
            Generator::Normal { .. } => "normal",
            Generator::Histogram { .. } => "histogram",
            Generator::Uuid => "uuid",
            Generator::Timestamp { .. } => "timestamp",
            Generator::Now { .. } => "now",
            Generator::Text { .. } => "text",
            Generator::Words { .. } => "words",
            Generator::Choice { .. } => "choice",
            Generator::Bytes { .. } => "bytes",
            Generator::Derived { .. } => "derived",
            Generator::YcsbText => "ycsb_text",
        }
    }
}

/// The characters of a text generator.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Charset {
    /// Letters and digits.
    #[default]
    Alphanumeric,
    Letters,
    Lowercase,
    Digits,
    Hex,
    /// Printable ASCII without quotes and backslash (what no text format needs to escape).
    Printable,
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
