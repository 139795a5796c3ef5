//! A declared record: typed columns, each with a generator of its values (a workload file's
//! `[[record.column]]`, docs/workload-files.md). The columns travel as the `columns` property in
//! JSON, so they go wherever properties go (experiments, every client of a distributed run, the
//! run's definition that clients compare) and are checked by the one parser below.
//!
//! Values are deterministic: a column's value in an insert is a function of the record's seed, the
//! key number and the column, so two loads of the same file write the same data whatever the
//! threads; an update draws its values from the worker's seeded stream.

use std::sync::Arc;

use rand::{Rng, RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::generator::{Discrete, Hotspot, WorkerRng, Zipfian};
use crate::operation::FieldType;

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
    fn in_range(&self, v: f64, what: &str) -> Result<(), String> {
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

    fn is_collection(self) -> bool {
        matches!(self, ColumnType::List | ColumnType::Map)
    }

    /// A list's or a map's element type, as bindings see it (`None`: not one a collection holds).
    fn element_type(self) -> Option<crate::operation::ElementType> {
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

    fn is_integer(self) -> bool {
        matches!(self, ColumnType::Int | ColumnType::Bigint)
    }

    /// The range of an integer type.
    fn integer_range(self) -> (f64, f64) {
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
    fn describe(&self) -> String {
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

impl Charset {
    fn characters(self) -> &'static [u8] {
        match self {
            Charset::Alphanumeric => {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
            }
            Charset::Letters => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            Charset::Lowercase => b"abcdefghijklmnopqrstuvwxyz",
            Charset::Digits => b"0123456789",
            Charset::Hex => b"0123456789abcdef",
            Charset::Printable => {
                b" !#$%&()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
            }
        }
    }
}

/// A text value is plain: printable ASCII without quotes and backslash (what every binding and
/// text format takes as it is).
fn is_plain_text(s: &str) -> bool {
    s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\'' && b != b'\\')
}

pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// The checked columns of a record, ready to make values.
#[derive(Debug, Clone)]
pub struct Record {
    pub columns: Arc<[Column]>,
    /// Seed of the values: the same seed, the same data.
    pub seed: u64,
    makers: Arc<[Maker]>,
}

/// A generator checked against its column, its numbers parsed.
#[derive(Debug, Clone)]
enum Maker {
    Constant(String),
    Sequence {
        start: i64,
        step: i64,
        modulo: u64,
    },
    Uniform {
        min: f64,
        max: f64,
        decimals: Option<usize>,
    },
    /// Zipfian over 0..=span, moved to start at the second value.
    Zipfian(Zipfian, i64),
    /// Hotspot over 0..=span, moved to start at the second value.
    Hotspot(Hotspot, i64),
    /// The key number minus a Zipfian distance (over 0..window).
    Latest(Zipfian),
    Exponential(f64),
    Normal(rand_distr::Normal<f64>),
    Histogram {
        buckets: Discrete<u64>,
        width: i64,
    },
    Uuid,
    Timestamp {
        start_ms: i64,
        step_ms: i64,
        jitter_ms: u64,
    },
    Now {
        offset_ms: i64,
    },
    Text {
        min: usize,
        max: usize,
        charset: Charset,
    },
    Words {
        words: Arc<[String]>,
        min: u32,
        max: u32,
    },
    /// Random bytes as lowercase hex.
    Bytes {
        min: usize,
        max: usize,
    },
    Choice(Discrete<usize>, Arc<[String]>),
    Derived(Arc<[Piece]>),
    YcsbText(usize),
    /// A list (no keys) or a map: `min..=max` elements, each made by `element`.
    Collection {
        element: Box<Maker>,
        element_type: ColumnType,
        min: u32,
        max: u32,
        keys: Arc<[String]>,
    },
}

/// A part of a derived column's template.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Key,
    Column(usize),
}

impl Record {
    /// Parses the `columns` property's JSON and checks it.
    pub fn from_json(json: &str, seed: u64) -> Result<Record, WorkloadError> {
        let columns: Vec<Column> = serde_json::from_str(json).map_err(|e| {
            WorkloadError::invalid(
                "columns",
                &abbreviated(json),
                format!("not a column list: {e}"),
            )
        })?;
        Record::new(columns, seed).map_err(|e| WorkloadError::Inconsistent(e.to_string()))
    }

    /// The columns as the `columns` property holds them.
    pub fn to_json(columns: &[Column]) -> String {
        serde_json::to_string(columns).expect("columns serialize")
    }

    /// Checks every column; an error names the column's field (`column[2].generator`).
    pub fn new(columns: Vec<Column>, seed: u64) -> Result<Record, ColumnError> {
        if columns.is_empty() || columns.len() > MAX_COLUMNS {
            return Err(ColumnError::new(
                "column",
                format!(
                    "a record has 1 to {MAX_COLUMNS} columns, not {}",
                    columns.len()
                ),
            ));
        }
        let mut makers = Vec::with_capacity(columns.len());
        let mut names = std::collections::HashMap::with_capacity(columns.len());
        for (i, c) in columns.iter().enumerate() {
            let at = |field: &str| format!("column[{i}] ('{}').{field}", c.name);
            if !valid_name(&c.name) {
                return Err(ColumnError::new(
                    format!("column[{i}].name"),
                    format!(
                        "'{}' is not a name: a letter, then letters, digits and '_' (at most 64)",
                        c.name
                    ),
                ));
            }
            if let Some(j) = names.insert(c.name.to_ascii_lowercase(), i) {
                return Err(ColumnError::new(
                    format!("column[{i}].name"),
                    format!("'{}' is column[{j}]'s name too", c.name),
                ));
            }
            // A list's or a map's length, digits and generator are its elements'.
            let element;
            let shaped = if c.column_type.is_collection() {
                element = element_column(c)
                    .map_err(|(field, reason)| ColumnError::new(at(field), reason))?;
                &element
            } else {
                for (field, given) in [
                    ("element", c.element.is_some()),
                    ("items", c.items.is_some()),
                    ("keys", !c.keys.is_empty()),
                ] {
                    if given {
                        return Err(ColumnError::new(
                            at(field),
                            format!(
                                "only list and map columns have {field}, not {}",
                                c.column_type.name()
                            ),
                        ));
                    }
                }
                c
            };
            check_shape(shaped).map_err(|(field, reason)| ColumnError::new(at(field), reason))?;
            let made = maker(shaped, &columns, i).map_err(|reason| {
                ColumnError::new(at(&format!("generator.{}", c.generator.name())), reason)
            })?;
            makers.push(match c.items {
                Some(items) if c.column_type.is_collection() => Maker::Collection {
                    element: Box::new(made),
                    element_type: shaped.column_type,
                    min: items.min,
                    max: items.max,
                    keys: sorted_keys(&c.keys),
                },
                _ => made,
            });
        }
        Ok(Record {
            columns: columns.into(),
            seed,
            makers: makers.into(),
        })
    }

    /// Characters of all text columns together: the longest record's text.
    pub fn text_bytes(&self) -> u64 {
        self.columns
            .iter()
            .filter_map(|c| {
                // A blob's text is hex: two characters a byte.
                let per = if c.column_type == ColumnType::Blob {
                    2
                } else {
                    1
                };
                match (c.column_type, c.items) {
                    // The JSON text of the most elements, each at its longest, quoted, with
                    // its key and separators.
                    (ColumnType::List | ColumnType::Map, Some(items)) => {
                        let element = match c.element {
                            Some(ColumnType::Text) => u64::from(c.length.unwrap_or(0)),
                            Some(ColumnType::Uuid) => 36,
                            Some(ColumnType::Timestamp) => 23,
                            _ => 24,
                        };
                        let key = c.keys.iter().map(|k| k.len() as u64 + 3).max().unwrap_or(0);
                        Some(2 + u64::from(items.max) * (element + 3 + key))
                    }
                    _ => c.length.map(|n| per * u64::from(n)),
                }
            })
            .sum()
    }

    pub fn names(&self) -> Arc<[String]> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// The type each binding with a typed schema gives each column.
    pub fn field_types(&self) -> Arc<[FieldType]> {
        self.columns
            .iter()
            .map(|c| match c.column_type {
                ColumnType::Text => FieldType::Text {
                    max_len: c.length.map(|n| n as usize),
                },
                ColumnType::Int => FieldType::Int,
                ColumnType::Bigint => FieldType::BigInt,
                ColumnType::Double => FieldType::Double,
                ColumnType::Bool => FieldType::Bool,
                ColumnType::Timestamp => FieldType::Timestamp,
                ColumnType::Uuid => FieldType::Uuid,
                ColumnType::Decimal => {
                    let (precision, scale) = c.decimal_digits();
                    FieldType::Decimal {
                        precision: precision as u8,
                        scale: scale as u8,
                    }
                }
                ColumnType::Blob => FieldType::Blob {
                    max_bytes: c.length.unwrap_or(1) as usize,
                },
                ColumnType::List => FieldType::List {
                    element: element_of(c),
                },
                ColumnType::Map => FieldType::Map {
                    element: element_of(c),
                },
            })
            .collect()
    }

    /// Mean bytes of a record's values in binary form (text: its mean length).
    pub fn mean_bytes(&self) -> f64 {
        self.columns
            .iter()
            .zip(self.makers.iter())
            .map(|(c, m)| mean_value_bytes(c.column_type, c, m))
            .sum()
    }

    /// A per-worker value maker (generators with state of their own are copied).
    pub fn values(&self, pool: crate::values::ValuePool) -> RecordValues {
        RecordValues {
            record: self.clone(),
            makers: self.makers.to_vec(),
            pool,
        }
    }

    /// The seed of record `keynum`'s values in an insert: the same for every load of this record.
    pub fn insert_seed(&self, keynum: u64) -> u64 {
        mix64(self.seed ^ mix64(keynum.wrapping_add(0x9E37_79B9_7F4A_7C15)))
    }
}

/// A checked list's or map's element type.
fn element_of(c: &Column) -> crate::operation::ElementType {
    c.element
        .and_then(ColumnType::element_type)
        .expect("a checked collection's element")
}

/// Mean bytes of a value of type `t` of column `c` made by `m` (a list's or map's: its JSON
/// text's).
fn mean_value_bytes(t: ColumnType, c: &Column, m: &Maker) -> f64 {
    match t {
        ColumnType::Text => match m {
            Maker::Text { min, max, .. } => (min + max) as f64 / 2.0,
            Maker::YcsbText(n) => *n as f64,
            Maker::Constant(v) => v.len() as f64,
            _ => c.length.unwrap_or(1) as f64 / 2.0,
        },
        ColumnType::Int => 4.0,
        ColumnType::Bool => 1.0,
        ColumnType::Uuid => 16.0,
        ColumnType::Bigint | ColumnType::Double | ColumnType::Timestamp => 8.0,
        ColumnType::Decimal => FieldType::Decimal {
            precision: c.decimal_digits().0 as u8,
            scale: 0,
        }
        .binary_bytes(0) as f64,
        ColumnType::Blob => match m {
            Maker::Bytes { min, max } => (min + max) as f64 / 2.0,
            Maker::Constant(v) => v.len() as f64 / 2.0,
            _ => c.length.unwrap_or(1) as f64 / 2.0,
        },
        ColumnType::List | ColumnType::Map => match m {
            Maker::Collection {
                element,
                element_type,
                min,
                max,
                keys,
            } => {
                let key = match keys.len() {
                    0 => 0.0,
                    n => keys.iter().map(|k| k.len() as f64 + 3.0).sum::<f64>() / n as f64,
                };
                let each = mean_value_bytes(*element_type, c, element) + 3.0 + key;
                2.0 + f64::from(min + max) / 2.0 * each
            }
            _ => 2.0,
        },
    }
}

/// A bad column: the field at fault (`column[2] ('price').generator.uniform`) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnError {
    pub field: String,
    pub reason: String,
}

impl ColumnError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ColumnError {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for ColumnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

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

/// SplitMix64's finalizer: spreads a number's bits over all 64.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn duration_ms(text: &str, negative_allowed: bool) -> Result<i64, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) if negative_allowed => (true, rest),
        _ => (false, text),
    };
    let d = humantime::parse_duration(body.trim())
        .map_err(|e| format!("'{text}' is not a duration (e.g. 1s, 250ms, 5m): {e}"))?;
    let ms = i64::try_from(d.as_millis()).map_err(|_| format!("'{text}' is too long"))?;
    Ok(if negative { -ms } else { ms })
}

fn finite(v: f64, what: &str) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what} must be a finite number, not {v}"))
    }
}

/// Checks generator `c.generator` against column `c` (the `i`th of `columns`).
fn maker(c: &Column, columns: &[Column], i: usize) -> Result<Maker, String> {
    let t = c.column_type;
    let numeric = t.is_integer() || matches!(t, ColumnType::Double | ColumnType::Decimal);
    let wrong = || {
        format!(
            "a {} column cannot take the {} generator",
            t.name(),
            c.generator.name()
        )
    };
    let in_integer_range = |v: f64, what: &str| c.in_range(v, what);
    let text_fits = |v: &str, what: &str| -> Result<(), String> {
        if !is_plain_text(v) {
            return Err(format!(
                "{what} \"{v}\" must be printable ASCII without quotes and backslash"
            ));
        }
        match c.length {
            Some(n) if v.len() > n as usize => Err(format!(
                "{what} \"{}\" is longer than the column's length {n}",
                abbreviated(v)
            )),
            _ => Ok(()),
        }
    };
    Ok(match &c.generator {
        Generator::Constant { value } => Maker::Constant(literal_text(value, c, &text_fits)?),
        Generator::Sequence {
            start,
            step,
            modulo,
        } => {
            if !t.is_integer() && t != ColumnType::Decimal {
                return Err(wrong());
            }
            in_integer_range(*start as f64, "start")?;
            if *modulo == Some(0) {
                return Err("modulo 0: expected at least 1".into());
            }
            // The values past the type's range were held at its bound, silently (issue 62, low 2).
            if let Some(m) = modulo {
                c.sequence_in_range(*m)?;
            }
            Maker::Sequence {
                start: *start,
                step: *step,
                modulo: modulo.unwrap_or(u64::MAX),
            }
        }
        Generator::Uniform { min, max, decimals } => {
            if !numeric {
                return Err(wrong());
            }
            let (min, max) = (finite(*min, "min")?, finite(*max, "max")?);
            if min > max {
                return Err(format!("min {min} is above max {max}"));
            }
            if !(max - min).is_finite() {
                return Err(format!("min {min} to max {max} is too wide a range"));
            }
            in_integer_range(min, "min")?;
            in_integer_range(max, "max")?;
            match decimals {
                Some(_) if t == ColumnType::Decimal => {
                    return Err("decimals: a decimal column has its scale".into())
                }
                Some(_) if t != ColumnType::Double => {
                    return Err(format!("decimals: a {} column has none", t.name()))
                }
                Some(d) if *d > 15 => return Err(format!("decimals {d}: at most 15")),
                _ => {}
            }
            Maker::Uniform {
                min,
                max,
                decimals: decimals.map(|d| d as usize),
            }
        }
        Generator::Zipfian { min, max, theta } => {
            if !numeric {
                return Err(wrong());
            }
            integer_bounds(*min, *max, t, &in_integer_range)?;
            if !(*theta > 0.0 && *theta < 1.0) {
                return Err(format!("theta {theta} is out of range: between 0 and 1"));
            }
            let span = (*max as i128 - *min as i128) as u64;
            if span > 100_000_000 {
                return Err(format!(
                    "{} values are too many to precompute (at most 100,000,001)",
                    span as u128 + 1
                ));
            }
            Maker::Zipfian(Zipfian::with_constant(0, span, *theta), *min)
        }
        Generator::Latest { window, theta } => {
            if !t.is_integer() {
                return Err(wrong());
            }
            if !(1..=100_000_000).contains(window) {
                return Err(format!("window {window} is out of range: 1 to 100,000,000"));
            }
            if !(*theta > 0.0 && *theta < 1.0) {
                return Err(format!("theta {theta} is out of range: between 0 and 1"));
            }
            Maker::Latest(Zipfian::with_constant(0, window - 1, *theta))
        }
        Generator::Hotspot {
            min,
            max,
            hot_data_fraction,
            hot_operation_fraction,
        } => {
            if !numeric {
                return Err(wrong());
            }
            integer_bounds(*min, *max, t, &in_integer_range)?;
            for (v, what) in [
                (*hot_data_fraction, "hot_data_fraction"),
                (*hot_operation_fraction, "hot_operation_fraction"),
            ] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!("{what} {v} is out of range: 0 to 1"));
                }
            }
            let span = (*max as i128 - *min as i128) as u64;
            Maker::Hotspot(
                Hotspot::new(0, span, *hot_data_fraction, *hot_operation_fraction),
                *min,
            )
        }
        Generator::Exponential { mean } => {
            if !numeric {
                return Err(wrong());
            }
            if finite(*mean, "mean")? <= 0.0 {
                return Err(format!("mean {mean} must be positive"));
            }
            in_integer_range(*mean * 50.0, "mean x 50")?;
            Maker::Exponential(*mean)
        }
        Generator::Normal { mean, stddev } => {
            if !numeric {
                return Err(wrong());
            }
            let (mean, stddev) = (finite(*mean, "mean")?, finite(*stddev, "stddev")?);
            if stddev < 0.0 {
                return Err(format!("stddev {stddev} must not be negative"));
            }
            in_integer_range(mean, "mean")?;
            // Values past the type's range were held at its bound, silently (issue 62, low 2): six
            // standard deviations each side must fit (one value in 500 million falls outside).
            in_integer_range(mean - 6.0 * stddev, "mean - 6 stddev")?;
            in_integer_range(mean + 6.0 * stddev, "mean + 6 stddev")?;
            Maker::Normal(rand_distr::Normal::new(mean, stddev).map_err(|e| e.to_string())?)
        }
        Generator::Histogram {
            buckets,
            bucket_width,
        } => {
            if !numeric {
                return Err(wrong());
            }
            weights_checked(buckets, "buckets")?;
            if *bucket_width <= 0 {
                return Err(format!("bucket_width {bucket_width} must be positive"));
            }
            in_integer_range(
                buckets.len() as f64 * *bucket_width as f64,
                "the last bucket's value",
            )?;
            let weighted: Vec<(u64, f64)> = buckets
                .iter()
                .enumerate()
                .map(|(b, w)| (b as u64, *w))
                .collect();
            Maker::Histogram {
                buckets: Discrete::new(&weighted),
                width: *bucket_width,
            }
        }
        Generator::Uuid => {
            if !matches!(t, ColumnType::Uuid | ColumnType::Text) {
                return Err(wrong());
            }
            text_fits("00000000-0000-4000-8000-000000000000", "a UUID")?;
            Maker::Uuid
        }
        Generator::Timestamp {
            start,
            step,
            jitter,
        } => {
            if t != ColumnType::Timestamp {
                return Err(wrong());
            }
            let start_ms = chrono::DateTime::parse_from_rfc3339(start)
                .map_err(|e| {
                    format!("start '{start}' is not an RFC 3339 time (2026-01-01T00:00:00Z): {e}")
                })?
                .timestamp_millis();
            Maker::Timestamp {
                start_ms,
                step_ms: duration_ms(step, true)?,
                jitter_ms: duration_ms(jitter, false)? as u64,
            }
        }
        Generator::Now { offset } => {
            if t != ColumnType::Timestamp {
                return Err(wrong());
            }
            Maker::Now {
                offset_ms: duration_ms(offset, true)?,
            }
        }
        Generator::Text {
            min_length,
            max_length,
            charset,
        } => {
            let Some(length) = c.length.filter(|_| t == ColumnType::Text) else {
                return Err(wrong());
            };
            let max = max_length.unwrap_or(length);
            if *min_length == 0 || *min_length > max || max > length {
                return Err(format!(
                    "lengths {min_length} to {max} must lie within 1 to the column's length {length}"
                ));
            }
            Maker::Text {
                min: *min_length as usize,
                max: max as usize,
                charset: *charset,
            }
        }
        Generator::Words {
            words,
            file,
            min,
            max,
            ..
        } => {
            let Some(length) = c.length.filter(|_| t == ColumnType::Text) else {
                return Err(wrong());
            };
            if let Some(f) = file.as_ref().filter(|_| words.is_empty()) {
                return Err(format!(
                    "the dictionary '{f}' was not read (a workload file reads it)"
                ));
            }
            if words.is_empty() {
                return Err("words is empty".into());
            }
            for w in words {
                if w.is_empty() || w.contains(' ') {
                    return Err(format!("word \"{w}\" must be non-empty, without spaces"));
                }
                text_fits(w, "word")?;
            }
            if *min == 0 || min > max {
                return Err(format!("min {min} and max {max}: expected 1 <= min <= max"));
            }
            let longest = words.iter().map(String::len).max().unwrap_or(0) as u64;
            let most = longest * *max as u64 + (*max as u64 - 1);
            if most > length as u64 {
                return Err(format!(
                    "{max} words of up to {longest} characters may exceed the column's length {length}"
                ));
            }
            Maker::Words {
                words: words.clone().into(),
                min: *min,
                max: *max,
            }
        }
        Generator::Choice { values, weights } => {
            if values.is_empty() {
                return Err("values is empty".into());
            }
            let weights = match weights {
                Some(w) if w.len() != values.len() => {
                    return Err(format!("{} weights for {} values", w.len(), values.len()))
                }
                Some(w) => w.clone(),
                None => vec![1.0; values.len()],
            };
            weights_checked(&weights, "weights")?;
            let texts = values
                .iter()
                .map(|v| literal_text(v, c, &text_fits))
                .collect::<Result<Vec<_>, _>>()?;
            let weighted: Vec<(usize, f64)> = weights.into_iter().enumerate().collect();
            Maker::Choice(Discrete::new(&weighted), texts.into())
        }
        Generator::Derived { template } => {
            if t != ColumnType::Text {
                return Err(wrong());
            }
            Maker::Derived(parse_template(template, columns, i)?.into())
        }
        Generator::Bytes { min_size, max_size } => {
            let Some(length) = c.length.filter(|_| t == ColumnType::Blob) else {
                return Err(wrong());
            };
            let max = max_size.unwrap_or(length);
            if *min_size == 0 || *min_size > max || max > length {
                return Err(format!(
                    "min_size {min_size} to max_size {max} must be within 1 to the column's length {length}"
                ));
            }
            Maker::Bytes {
                min: *min_size as usize,
                max: max as usize,
            }
        }
        Generator::YcsbText => {
            let Some(length) = c.length.filter(|_| t == ColumnType::Text) else {
                return Err(wrong());
            };
            Maker::YcsbText(length as usize)
        }
    })
}

/// Checks a column's length and digits against its type (a list's or a map's: its elements').
fn check_shape(c: &Column) -> Result<(), (&'static str, String)> {
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

/// A list's or a map's element as a column of its own (its length, its generator), its element
/// type, item count and keys checked.
fn element_column(c: &Column) -> Result<Column, (&'static str, String)> {
    let kind = c.column_type.name();
    let element = match c.element {
        None => {
            return Err((
                "element",
                format!("a {kind} column needs the type of its elements (element = \"text\", \"int\", ...)"),
            ))
        }
        Some(t) if t.element_type().is_none() => {
            return Err((
                "element",
                format!(
                    "a {kind} holds text, int, bigint, double, bool, uuid or timestamp elements, not {}",
                    t.name()
                ),
            ))
        }
        Some(t) => t,
    };
    let Some(items) = c.items else {
        return Err((
            "items",
            format!(
                "a {kind} column needs how many elements it holds (items = {{ min = 0, max = 5 }})"
            ),
        ));
    };
    if items.max == 0 || items.max > MAX_ITEMS || items.min > items.max {
        return Err((
            "items",
            format!(
                "min {} to max {} must lie within 0 to {MAX_ITEMS}, max at least 1",
                items.min, items.max
            ),
        ));
    }
    if matches!(c.generator, Generator::Derived { .. }) {
        return Err((
            "generator",
            format!("a {kind}'s elements are generated, not derived"),
        ));
    }
    match c.column_type {
        ColumnType::Map => {
            if c.keys.is_empty() {
                return Err((
                    "keys",
                    "a map column needs the keys its entries may have (keys = [\"a\", \"b\"])"
                        .into(),
                ));
            }
            // A set, not a scan of the keys before each: 80,000 keys took 134 s to check.
            let mut seen = std::collections::HashSet::with_capacity(c.keys.len());
            for k in &c.keys {
                // MongoDB reads a leading '$' as an operator and a '.' as a path.
                if k.is_empty()
                    || k.len() > 64
                    || !is_plain_text(k)
                    || k.starts_with('$')
                    || k.contains('.')
                {
                    return Err((
                        "keys",
                        format!("\"{}\" is no key: 1 to 64 printable ASCII characters without quotes, backslash or '.', not starting with '$'", abbreviated(k)),
                    ));
                }
                if !seen.insert(k.as_str()) {
                    return Err(("keys", format!("\"{k}\" is given twice")));
                }
            }
            if items.max as usize > c.keys.len() {
                return Err((
                    "items",
                    format!(
                        "max {} is more than the map's {} keys (each key once)",
                        items.max,
                        c.keys.len()
                    ),
                ));
            }
        }
        _ if !c.keys.is_empty() => {
            return Err(("keys", "only map columns have keys, not list".into()));
        }
        _ => {}
    }
    Ok(Column {
        name: c.name.clone(),
        column_type: element,
        length: c.length,
        precision: c.precision,
        scale: c.scale,
        element: None,
        items: None,
        keys: Vec::new(),
        generator: c.generator.clone(),
    })
}

/// A map's keys in byte order (its JSON text's order, and Cassandra's).
fn sorted_keys(keys: &[String]) -> Arc<[String]> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.into()
}

fn integer_bounds(
    min: i64,
    max: i64,
    _t: ColumnType,
    in_range: &dyn Fn(f64, &str) -> Result<(), String>,
) -> Result<(), String> {
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    in_range(min as f64, "min")?;
    in_range(max as f64, "max")
}

fn weights_checked(weights: &[f64], what: &str) -> Result<(), String> {
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

/// A literal as the text a column of `c`'s type stores.
fn literal_text(
    value: &Literal,
    c: &Column,
    text_fits: &dyn Fn(&str, &str) -> Result<(), String>,
) -> Result<String, String> {
    let t = c.column_type;
    let mismatch = || format!("{} is not a {} value", value.describe(), t.name());
    Ok(match (t, value) {
        (ColumnType::Text, Literal::Text(s)) => {
            text_fits(s, "value")?;
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

fn parse_template(template: &str, columns: &[Column], me: usize) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Text(rest[..open].to_string()));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("template \"{template}\": a '{{' is not closed"))?
            + open;
        let name = &rest[open + 1..close];
        if name == "key" {
            pieces.push(Piece::Key);
        } else {
            let j = columns
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| format!("template \"{template}\": no column '{name}'"))?;
            if columns[j].column_type.is_collection() {
                return Err(format!(
                    "template \"{template}\": '{name}' is a {}; a template takes single values",
                    columns[j].column_type.name()
                ));
            }
            if j == me || matches!(columns[j].generator, Generator::Derived { .. }) {
                return Err(format!(
                    "template \"{template}\": '{name}' is derived itself (a derived column uses generated ones)"
                ));
            }
            pieces.push(Piece::Column(j));
        }
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("template \"{template}\": a '}}' is not opened"));
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    for p in &pieces {
        if let Piece::Text(t) = p {
            if !is_plain_text(t) {
                return Err(format!(
                    "template \"{template}\" must be printable ASCII without quotes and backslash"
                ));
            }
        }
    }
    Ok(pieces)
}

/// One worker's maker of column values.
#[derive(Debug)]
pub struct RecordValues {
    record: Record,
    makers: Vec<Maker>,
    pool: crate::values::ValuePool,
}

impl RecordValues {
    /// The record these values are of.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Writes column `idx`'s value into `out` (cleared first). `seed` is the operation's: a
    /// record's inserts use [`Record::insert_seed`], so every column of it (and a derived column's
    /// parts) comes from the same draws whichever columns are written.
    pub fn write(&mut self, idx: usize, keynum: u64, key: &str, seed: u64, out: &mut String) {
        out.clear();
        if let Maker::Derived(pieces) = &self.makers[idx] {
            let pieces = Arc::clone(pieces);
            let mut part = String::new();
            for p in pieces.iter() {
                match p {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Key => out.push_str(key),
                    Piece::Column(j) => {
                        self.write_generated(*j, keynum, seed, &mut part);
                        out.push_str(&part);
                    }
                }
            }
            if let Some(n) = self.record.columns[idx].length {
                out.truncate(n as usize);
            }
            return;
        }
        self.write_generated(idx, keynum, seed, out);
    }

    fn write_generated(&mut self, idx: usize, keynum: u64, seed: u64, out: &mut String) {
        out.clear();
        let mut rng = WorkerRng::seed_from_u64(mix64(
            seed ^ (idx as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93),
        ));
        let c = &self.record.columns[idx];
        let (t, digits) = (c.column_type, c.decimal_digits());
        generate(
            &mut self.makers[idx],
            t,
            digits,
            keynum,
            &mut rng,
            &self.pool,
            out,
        );
    }
}

/// Appends a value of type `t` made by `maker` to `out` (a decimal's `digits` are its precision
/// and scale).
fn generate(
    maker: &mut Maker,
    t: ColumnType,
    digits: (u32, u32),
    keynum: u64,
    rng: &mut WorkerRng,
    pool: &crate::values::ValuePool,
    out: &mut String,
) {
    let number = |v: f64, out: &mut String| {
        if t.is_integer() {
            let (lo, hi) = t.integer_range();
            let mut b = itoa::Buffer::new();
            out.push_str(b.format(v.round().clamp(lo, hi) as i64));
        } else {
            let _ = std::fmt::Write::write_fmt(out, format_args!("{v}"));
        }
    };
    match maker {
        Maker::Constant(v) => out.push_str(v),
        Maker::Sequence {
            start,
            step,
            modulo,
        } => {
            let (lo, hi) = match t {
                ColumnType::Int => (i32::MIN as i128, i32::MAX as i128),
                _ => (i64::MIN as i128, i64::MAX as i128),
            };
            let v = (*start as i128 + (keynum % *modulo) as i128 * *step as i128).clamp(lo, hi);
            out.push_str(itoa::Buffer::new().format(v as i64));
        }
        Maker::Uniform { min, max, decimals } => {
            if t.is_integer() {
                let v = rng.random_range(min.round() as i64..=max.round() as i64);
                out.push_str(itoa::Buffer::new().format(v));
            } else {
                let v = if min == max {
                    *min
                } else {
                    rng.random_range(*min..*max)
                };
                match decimals {
                    Some(d) => {
                        use std::fmt::Write;
                        let _ = write!(out, "{v:.d$}", d = *d);
                    }
                    None => number(v, out),
                }
            }
        }
        // Integers stay integers (a bigint past 2^53 would lose digits as a double); min and
        // max were checked against the column's range.
        Maker::Zipfian(z, min) => {
            let v = (*min as i128 + z.next(rng) as i128) as i64;
            out.push_str(itoa::Buffer::new().format(v));
        }
        Maker::Hotspot(h, min) => {
            let v = (*min as i128 + h.next(rng) as i128) as i64;
            out.push_str(itoa::Buffer::new().format(v));
        }
        Maker::Latest(z) => {
            // An int column holds the key numbers that fit it.
            let (_, hi) = t.integer_range();
            let v = keynum.saturating_sub(z.next(rng)).min(hi as u64);
            out.push_str(itoa::Buffer::new().format(v));
        }
        Maker::Exponential(mean) => {
            let u: f64 = rng.random();
            number(-*mean * (1.0 - u).ln(), out)
        }
        Maker::Normal(n) => number(rand_distr::Distribution::sample(n, rng), out),
        Maker::Histogram { buckets, width } => {
            number((buckets.next(rng) as i64 * *width) as f64, out)
        }
        Maker::Uuid => {
            let (hi, lo) = (rng.next_u64(), rng.next_u64());
            let hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
            let lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let mut text = [b'-'; 36];
            let nibbles = (0..32).map(|i| {
                let word = if i < 16 { hi } else { lo };
                HEX[((word >> (60 - 4 * (i % 16))) & 0xF) as usize]
            });
            let places = (0..36).filter(|p| ![8, 13, 18, 23].contains(p));
            for (p, c) in places.zip(nibbles) {
                text[p] = c;
            }
            out.push_str(std::str::from_utf8(&text).expect("hex digits"));
        }
        Maker::Timestamp {
            start_ms,
            step_ms,
            jitter_ms,
        } => {
            let jitter = if *jitter_ms > 0 {
                rng.random_range(0..=*jitter_ms) as i64
            } else {
                0
            };
            let ms = start_ms
                .saturating_add((keynum as i64).saturating_mul(*step_ms))
                .saturating_add(jitter)
                .clamp(0, 253_402_300_799_000);
            crate::values::push_timestamp(ms, out)
        }
        Maker::Now { offset_ms } => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            crate::values::push_timestamp((now + *offset_ms).max(0), out)
        }
        Maker::Text { min, max, charset } => {
            let len = rng.random_range(*min..=*max);
            let chars = charset.characters();
            out.reserve(len);
            for _ in 0..len {
                out.push(chars[rng.random_range(0..chars.len())] as char);
            }
        }
        Maker::Words { words, min, max } => {
            let n = rng.random_range(*min..=*max);
            for w in 0..n {
                if w > 0 {
                    out.push(' ');
                }
                out.push_str(&words[rng.random_range(0..words.len())]);
            }
        }
        Maker::Choice(chooser, values) => out.push_str(&values[chooser.next(rng)]),
        Maker::Bytes { min, max } => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let n = rng.random_range(*min..=*max);
            out.reserve(2 * n);
            for _ in 0..n {
                let b = rng.next_u32() as u8;
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
        Maker::Derived(_) => unreachable!("derived columns are made in write"),
        Maker::YcsbText(len) => pool.push_value(rng, *len, out),
        Maker::Collection {
            element,
            element_type,
            min,
            max,
            keys,
        } => {
            let n = rng.random_range(*min..=*max) as usize;
            let mut item = String::new();
            let mut one = |out: &mut String, rng: &mut WorkerRng| {
                item.clear();
                generate(element, *element_type, digits, keynum, rng, pool, &mut item);
                push_json_element(*element_type, &item, out);
            };
            if keys.is_empty() {
                out.push('[');
                for k in 0..n {
                    if k > 0 {
                        out.push(',');
                    }
                    one(out, rng);
                }
                out.push(']');
            } else {
                // n keys of the map's, each once, in byte order (the keys are sorted).
                let mut chosen: Vec<usize> = (0..keys.len()).collect();
                for k in 0..n {
                    let j = rng.random_range(k..keys.len());
                    chosen.swap(k, j);
                }
                let chosen = &mut chosen[..n];
                chosen.sort_unstable();
                out.push('{');
                for (pos, &k) in chosen.iter().enumerate() {
                    if pos > 0 {
                        out.push(',');
                    }
                    push_json_string(&keys[k], out);
                    out.push(':');
                    one(out, rng);
                }
                out.push('}');
            }
        }
    }
    if t == ColumnType::Decimal {
        as_decimal(out, digits.0, digits.1);
    }
}

/// An element's text as JSON: a string quoted, a bool true or false, a number as it is.
fn push_json_element(t: ColumnType, text: &str, out: &mut String) {
    match t {
        ColumnType::Bool => out.push_str(if text == "1" { "true" } else { "false" }),
        ColumnType::Text | ColumnType::Uuid | ColumnType::Timestamp => push_json_string(text, out),
        _ => out.push_str(text),
    }
}

/// `text` as a JSON string (quotes, backslashes and control characters escaped).
pub fn push_json_string(text: &str, out: &mut String) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(toml_columns: &str) -> Record {
        #[derive(Deserialize)]
        struct Columns {
            column: Vec<Column>,
        }
        let c: Columns = toml::from_str(toml_columns).unwrap();
        Record::new(c.column, 3).unwrap()
    }

    /// The values of column `idx` in the inserts of keys 0..n.
    fn values(r: &Record, idx: usize, n: u64) -> Vec<String> {
        let mut v = r.values(crate::values::ValuePool::new(0));
        (0..n)
            .map(|k| {
                let mut out = String::new();
                v.write(idx, k, &format!("k{k}"), r.insert_seed(k), &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn each_generator_makes_values_of_its_column_type_and_range() {
        let r = record(
            r#"
            [[column]]
            name = "seq"
            type = "bigint"
            generator.sequence = { start = 10, step = 5, modulo = 4 }
            [[column]]
            name = "uni"
            type = "int"
            generator.uniform = { min = -3, max = 3 }
            [[column]]
            name = "zipf"
            type = "int"
            generator.zipfian = { min = 100, max = 199 }
            [[column]]
            name = "hot"
            type = "int"
            generator.hotspot = { min = 0, max = 99, hot_data_fraction = 0.1, hot_operation_fraction = 0.9 }
            [[column]]
            name = "expo"
            type = "double"
            generator.exponential = { mean = 10 }
            [[column]]
            name = "norm"
            type = "double"
            generator.normal = { mean = 50, stddev = 5 }
            [[column]]
            name = "hist"
            type = "int"
            generator.histogram = { buckets = [0, 1, 3], bucket_width = 10 }
            [[column]]
            name = "id"
            type = "uuid"
            generator = "uuid"
            [[column]]
            name = "at"
            type = "timestamp"
            generator.timestamp = { start = "2026-01-01T00:00:00Z", step = "1h" }
            [[column]]
            name = "txt"
            type = "text"
            length = 8
            generator.text = { min_length = 2, charset = "hex" }
            [[column]]
            name = "pick"
            type = "text"
            length = 3
            generator.choice = { values = ["a", "bb", "ccc"], weights = [0, 1, 1] }
            [[column]]
            name = "fixed"
            type = "bool"
            generator.constant = { value = true }
            [[column]]
            name = "now"
            type = "timestamp"
            generator.now = { offset = "-1h" }
            "#,
        );
        let n = 4000;
        let ints = |idx| -> Vec<i64> {
            values(&r, idx, n)
                .iter()
                .map(|v| v.parse().unwrap())
                .collect()
        };
        let floats = |idx| -> Vec<f64> {
            values(&r, idx, n)
                .iter()
                .map(|v| v.parse().unwrap())
                .collect()
        };
        assert_eq!(&ints(0)[..6], &[10, 15, 20, 25, 10, 15]);
        let uni = ints(1);
        assert!(uni.iter().all(|v| (-3..=3).contains(v)) && uni.contains(&-3) && uni.contains(&3));
        let zipf = ints(2);
        let at_min = zipf.iter().filter(|v| **v == 100).count();
        assert!(
            zipf.iter().all(|v| (100..=199).contains(v)) && at_min > n as usize / 20,
            "{at_min}"
        );
        let hot = ints(3);
        let in_hot = hot.iter().filter(|v| **v < 10).count() as f64 / n as f64;
        assert!((0.85..0.95).contains(&in_hot), "{in_hot}");
        let expo = floats(4);
        let mean = expo.iter().sum::<f64>() / n as f64;
        assert!(
            expo.iter().all(|v| *v >= 0.0) && (9.0..11.0).contains(&mean),
            "{mean}"
        );
        let norm = floats(5);
        let mean = norm.iter().sum::<f64>() / n as f64;
        assert!((49.5..50.5).contains(&mean), "{mean}");
        let hist = ints(6);
        assert!(
            hist.iter().all(|v| *v == 10 || *v == 20)
                && hist.iter().filter(|v| **v == 20).count() > n as usize / 2
        );
        let ids = values(&r, 7, n);
        assert!(ids.iter().all(|u| u.len() == 36 && &u[14..15] == "4"));
        assert_eq!(
            ids.iter().collect::<std::collections::BTreeSet<_>>().len(),
            n as usize
        );
        assert_eq!(values(&r, 8, 3)[2], "2026-01-01 02:00:00.000");
        let txt = values(&r, 9, n);
        assert!(txt
            .iter()
            .all(|t| (2..=8).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_hexdigit())));
        assert!(values(&r, 10, n).iter().all(|v| v == "bb" || v == "ccc"));
        assert!(values(&r, 11, 10).iter().all(|v| v == "1"));
        assert!(values(&r, 12, 1)[0].starts_with("20"));
        // Inserts are a function of seed and key; the same maker gives the same values again.
        assert_eq!(values(&r, 9, 50), values(&r, 9, 50));
    }

    /// `latest` refers to recent records: never a later key number than the record's own, most
    /// often its own or one just before it.
    #[test]
    fn latest_values_are_recent_key_numbers() {
        let r = record(
            r#"
[[column]]
name = "reply_to"
type = "bigint"
generator.latest = { window = 100 }
"#,
        );
        let v: Vec<u64> = values(&r, 0, 2000)
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(v[0], 0);
        let back: Vec<u64> = v.iter().enumerate().map(|(k, &x)| k as u64 - x).collect();
        assert!(back.iter().all(|&b| b < 100), "{back:?}");
        // Zipfian over 100 distances: about 19% are 0, 44% under 5.
        let own = back.iter().filter(|&&b| b == 0).count();
        let near = back.iter().filter(|&&b| b < 5).count();
        assert!(
            own > 250 && near > 750,
            "{own} own, {near} of 2000 within 5 keys"
        );
    }

    /// A decimal column's values have exactly its scale's decimals and fit its digits, from every
    /// numeric generator; a read-modify-write adds to one exactly.
    #[test]
    fn decimal_columns_hold_exact_values_of_their_digits() {
        let r = record(
            r#"
[[column]]
name = "price"
type = "decimal"
precision = 6
scale = 2
generator.uniform = { min = 0.5, max = 9999.99 }
[[column]]
name = "qty"
type = "decimal"
precision = 4
scale = 0
generator.zipfian = { min = 1, max = 50 }
[[column]]
name = "wild"
type = "decimal"
precision = 3
scale = 1
generator.normal = { mean = 0, stddev = 16 }
[[column]]
name = "fee"
type = "decimal"
generator.choice = { values = [1, 2.5] }
"#,
        );
        assert_eq!(
            r.field_types()[0],
            FieldType::Decimal {
                precision: 6,
                scale: 2
            }
        );
        for (idx, p, s) in [(0, 6, 2), (1, 4, 0), (2, 3, 1), (3, 18, 2)] {
            for v in values(&r, idx, 500) {
                let units = crate::decimal::parse_units(&v, s).unwrap();
                assert!(crate::decimal::fits(units, p), "{v} in ({p}, {s})");
                assert_eq!(
                    crate::decimal::format_units(units, s),
                    v,
                    "not {s} decimals"
                );
            }
        }
        // Six standard deviations each side fit the digits (a wider normal is refused: its tail
        // was held at the largest value, issue 62); the values spread over them.
        let spread: std::collections::BTreeSet<String> = values(&r, 2, 500).into_iter().collect();
        assert!(spread.len() > 100, "{spread:?}");
        assert!(values(&r, 3, 50).iter().all(|v| v == "1.00" || v == "2.50"));
        let add = crate::operation::Modification {
            column: 0,
            change: crate::operation::Change::AddDecimal {
                units: 10,
                scale: 2,
            },
        };
        assert_eq!(add.apply(Some("0.20")).unwrap(), "0.30");
        for (bad, reason) in [
            (
                "precision = 39\ngenerator.uniform = { min = 0, max = 1 }",
                "1 to 38",
            ),
            (
                "scale = 3\nprecision = 2\ngenerator.uniform = { min = 0, max = 1 }",
                "above the precision",
            ),
            (
                "generator.uniform = { min = 0, max = 1e17 }",
                "does not fit a decimal of 18 digits",
            ),
            (
                "generator.uniform = { min = 0, max = 1, decimals = 1 }",
                "has its scale",
            ),
            (
                "generator.constant = { value = 0.125 }",
                "not a decimal of 18 digits, 2 after the point",
            ),
            ("generator.text = {}", "cannot take the text generator"),
        ] {
            let toml = format!("[[column]]\nname = \"d\"\ntype = \"decimal\"\n{bad}\n");
            #[derive(Deserialize)]
            struct Columns {
                column: Vec<Column>,
            }
            let c: Columns = toml::from_str(&toml).unwrap();
            let e = Record::new(c.column, 0).unwrap_err().to_string();
            assert!(e.contains(reason), "{bad}: {e}");
        }
    }

    #[test]
    fn records_too_large_and_ranges_too_wide_are_refused() {
        let column = |name: &str, generator: Generator| Column {
            name: name.into(),
            column_type: ColumnType::Text,
            length: Some(MAX_TEXT_LENGTH),
            precision: None,
            scale: None,
            element: None,
            items: None,
            keys: Vec::new(),
            generator,
        };
        let big: Vec<Column> = (0..5)
            .map(|i| column(&format!("c{i}"), Generator::YcsbText))
            .collect();
        let mut p = crate::Properties::new();
        p.set("columns", &Record::to_json(&big), "test");
        let e = crate::CoreWorkload::from_properties(&p).unwrap_err();
        assert!(e.to_string().contains("64 MiB"), "{e}");
        let wide = Column {
            name: "d".into(),
            column_type: ColumnType::Double,
            length: None,
            precision: None,
            scale: None,
            element: None,
            items: None,
            keys: Vec::new(),
            generator: Generator::Uniform {
                min: -1e308,
                max: 1e308,
                decimals: None,
            },
        };
        let e = Record::new(vec![wide], 0).unwrap_err();
        assert!(e.reason.contains("too wide"), "{e}");
    }

    #[test]
    fn the_column_list_round_trips_through_its_property() {
        let r = record(
            r#"
            [[column]]
            name = "a"
            type = "double"
            generator.uniform = { min = 0, max = 1, decimals = 2 }
            [[column]]
            name = "b"
            type = "text"
            length = 30
            generator.derived = { template = "x{a}-{key}" }
            "#,
        );
        let json = Record::to_json(&r.columns);
        let back = Record::from_json(&json, 3).unwrap();
        assert_eq!(back.columns, r.columns);
        assert!(Record::from_json("[{\"name\": 1}]", 0).is_err());
    }

    /// Lists and maps: JSON text of `items` elements made by the column's generator (each of a
    /// map's keys at most once, in byte order), the same for the same record; what they may not be
    /// is refused naming the field.
    #[test]
    fn lists_and_maps_are_json_of_generated_elements() {
        let r = record(
            r#"
[[column]]
name = "tags"
type = "list"
element = "text"
length = 6
items = { min = 0, max = 4 }
generator.text = { min_length = 2, charset = "lowercase" }
[[column]]
name = "scores"
type = "map"
element = "int"
keys = ["maths", "art", "music"]
items = { min = 1, max = 3 }
generator.uniform = { min = -5, max = 5 }
[[column]]
name = "flags"
type = "list"
element = "bool"
items = { min = 2, max = 2 }
generator.choice = { values = [true, false] }
"#,
        );
        assert_eq!(
            r.field_types()[1],
            FieldType::Map {
                element: crate::ElementType::Int
            }
        );
        let tags = values(&r, 0, 300);
        assert_eq!(tags, values(&r, 0, 300), "the same record, the same list");
        let mut lengths = std::collections::BTreeSet::new();
        for v in &tags {
            let list: Vec<String> = serde_json::from_str(v).unwrap_or_else(|e| panic!("{v}: {e}"));
            lengths.insert(list.len());
            assert!(list
                .iter()
                .all(|t| (2..=6).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_lowercase())));
        }
        assert_eq!(
            lengths,
            (0..=4).collect(),
            "0 to 4 elements, each count seen"
        );
        let mut keys_seen = std::collections::BTreeSet::new();
        for v in values(&r, 1, 300) {
            let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&v).unwrap();
            assert!((1..=3).contains(&map.len()), "{v}");
            let keys: Vec<&String> = map.keys().collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted, "{v}: keys in byte order");
            assert!(v.find("\"art\"").unwrap_or(0) <= v.find("\"music\"").unwrap_or(usize::MAX));
            for (k, n) in &map {
                keys_seen.insert(k.clone());
                assert!((-5..=5).contains(&n.as_i64().unwrap()), "{v}");
            }
        }
        assert_eq!(keys_seen.len(), 3);
        for v in values(&r, 2, 50) {
            let flags: Vec<bool> = serde_json::from_str(&v).unwrap();
            assert_eq!(flags.len(), 2);
        }
        let mut escaped = String::new();
        push_json_string("a\"b\\c\u{1}", &mut escaped);
        assert_eq!(
            serde_json::from_str::<String>(&escaped).unwrap(),
            "a\"b\\c\u{1}"
        );

        for (bad, field, reason) in [
            ("type = \"list\"\nitems = { max = 2 }\ngenerator = \"uuid\"", "element", "type of its elements"),
            ("type = \"list\"\nelement = \"uuid\"\ngenerator = \"uuid\"", "items", "how many elements"),
            ("type = \"list\"\nelement = \"blob\"\nlength = 4\nitems = { max = 2 }\ngenerator.bytes = {}", "element", "not blob"),
            ("type = \"list\"\nelement = \"list\"\nitems = { max = 2 }\ngenerator = \"uuid\"", "element", "not list"),
            ("type = \"list\"\nelement = \"uuid\"\nitems = { min = 3, max = 2 }\ngenerator = \"uuid\"", "items", "min 3 to max 2"),
            ("type = \"list\"\nelement = \"uuid\"\nitems = { max = 1001 }\ngenerator = \"uuid\"", "items", "0 to 1000"),
            ("type = \"list\"\nelement = \"text\"\nitems = { max = 2 }\ngenerator.text = {}", "length", "longest length"),
            ("type = \"list\"\nelement = \"int\"\nitems = { max = 2 }\ngenerator = \"uuid\"", "generator.uuid", "cannot take the uuid generator"),
            ("type = \"list\"\nelement = \"text\"\nlength = 9\nitems = { max = 2 }\ngenerator.derived = { template = \"{key}\" }", "generator", "not derived"),
            ("type = \"list\"\nelement = \"int\"\nkeys = [\"a\"]\nitems = { max = 1 }\ngenerator.uniform = { min = 0, max = 1 }", "keys", "only map columns"),
            ("type = \"map\"\nelement = \"int\"\nitems = { max = 1 }\ngenerator.uniform = { min = 0, max = 1 }", "keys", "keys its entries may have"),
            ("type = \"map\"\nelement = \"int\"\nkeys = [\"a\", \"a\"]\nitems = { max = 1 }\ngenerator.uniform = { min = 0, max = 1 }", "keys", "given twice"),
            ("type = \"map\"\nelement = \"int\"\nkeys = [\"$gt\"]\nitems = { max = 1 }\ngenerator.uniform = { min = 0, max = 1 }", "keys", "not starting with '$'"),
            ("type = \"map\"\nelement = \"int\"\nkeys = [\"a.b\"]\nitems = { max = 1 }\ngenerator.uniform = { min = 0, max = 1 }", "keys", "is no key"),
            ("type = \"map\"\nelement = \"int\"\nkeys = [\"a\"]\nitems = { max = 2 }\ngenerator.uniform = { min = 0, max = 1 }", "items", "more than the map's 1 keys"),
            ("type = \"int\"\nitems = { max = 2 }\ngenerator.uniform = { min = 0, max = 1 }", "items", "only list and map columns"),
        ] {
            let toml = format!("[[column]]\nname = \"c\"\n{bad}\n");
            #[derive(Deserialize)]
            struct Columns {
                column: Vec<Column>,
            }
            let c: Columns = toml::from_str(&toml).unwrap_or_else(|e| panic!("{bad}: {e}"));
            let e = Record::new(c.column, 0).unwrap_err();
            assert_eq!(e.field, format!("column[0] ('c').{field}"), "{bad}: {e}");
            assert!(e.reason.contains(reason), "{bad}: {e}");
        }
        // A template takes single values, not a list.
        let c: Vec<Column> = serde_json::from_str(
            r#"[{"name":"l","type":"list","element":"int","items":{"max":2},"generator":{"uniform":{"min":0,"max":1}}},
                {"name":"d","type":"text","length":20,"generator":{"derived":{"template":"{l}"}}}]"#,
        )
        .unwrap();
        assert!(Record::new(c, 0)
            .unwrap_err()
            .reason
            .contains("single values"));
    }

    /// Issue 62, low 2: the parameters whose values the generator held at the type's bound are
    /// refused when checked, naming the value; those within it pass.
    #[test]
    fn generator_parameters_whose_values_leave_the_type_are_refused() {
        let record = |json: &str| {
            Record::from_json(json, 0)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let normal = |stddev: u32| {
            format!(
                r#"[{{"name":"n","type":"int","generator":{{"normal":{{"mean":0,"stddev":{stddev}}}}}}}]"#
            )
        };
        let e = record(&normal(400_000_000)).unwrap_err();
        assert!(
            e.contains("mean - 6 stddev -2400000000 is out of a int column's range"),
            "{e}"
        );
        record(&normal(300_000_000)).unwrap();
        let sequence = |modulo: u64| {
            format!(
                r#"[{{"name":"s","type":"int","generator":{{"sequence":{{"start":2000000000,"step":1000000,"modulo":{modulo}}}}}}}]"#
            )
        };
        let e = record(&sequence(1000)).unwrap_err();
        assert!(
            e.contains("key number 999's value 2999000000 is out of"),
            "{e}"
        );
        record(&sequence(100)).unwrap();
        // Without a modulo, the loaded keys' values: the record count decides.
        let mut p = crate::Properties::new();
        p.set(
            "columns",
            r#"[{"name":"s","type":"int","generator":{"sequence":{"start":2000000000,"step":1000000}}}]"#,
            "test",
        );
        p.set("recordcount", "100", "test");
        crate::CoreWorkload::from_properties(&p).unwrap();
        p.set("recordcount", "1000", "test");
        let e = crate::CoreWorkload::from_properties(&p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("key number 999's value 2999000000") && e.contains("1000 records"),
            "{e}"
        );
    }
}
