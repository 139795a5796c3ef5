//! A declared record: typed columns, each with a generator of its values (a workload file's
//! `[[record.column]]`, docs/workload-files.md). The columns travel as the `columns` property in
//! JSON, so they go wherever properties go (experiments, every client of a distributed run, the
//! run's definition that clients compare) and are checked by the one parser below.
//!
//! Values are deterministic: a column's value in an insert is a function of the record's seed, the
//! key number and the column, so two loads of the same file write the same data whatever the
//! threads; an update draws its values from the worker's seeded stream.
//!
//! [`spec`] is the column as a file declares it; each generator family has a module of its own:
//! its generators as the file declares them (its `decl` child: their serde enum and names) and
//! their checks, output and mean size ([`make`] says what a family provides). A new generator of a
//! family is its variant and name in the family's `decl.rs` and its arm in the family's `maker`;
//! [`generator`] reads one by asking the families.

mod bytes;
mod collection;
mod derived;
mod generator;
mod keyed;
mod literal;
mod make;
mod numbers;
mod spec;
mod text;
mod time;

use std::sync::Arc;

use rand::SeedableRng;

use crate::error::WorkloadError;
use crate::generator::WorkerRng;
use crate::operation::FieldType;
use make::{Check, Draw, Make, Piece};

pub use bytes::BytesGenerator;
pub use collection::push_json_string;
pub use derived::DerivedGenerator;
pub use generator::Generator;
pub use keyed::KeyedGenerator;
pub(crate) use spec::{abbreviated, valid_name};

pub use literal::{Literal, LiteralGenerator};
pub use numbers::NumberGenerator;
pub use spec::{Column, ColumnType, Items, MAX_COLUMNS, MAX_ITEMS, MAX_TEXT_LENGTH};
pub use text::{Charset, TextGenerator};
pub use time::TimeGenerator;

/// The generator families, each answering for its own generators (a list's or a map's values
/// are made by [`collection`] around its element's family).
const FAMILIES: [fn(&Check) -> make::Built; 7] = [
    literal::maker,
    keyed::maker,
    numbers::maker,
    time::maker,
    text::maker,
    bytes::maker,
    derived::maker,
];

/// The checked columns of a record, ready to make values.
#[derive(Debug, Clone)]
pub struct Record {
    pub columns: Arc<[Column]>,
    /// Seed of the values: the same seed, the same data.
    pub seed: u64,
    makers: Arc<[Box<dyn Make>]>,
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
                element = collection::element_column(c)
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
            spec::check_shape(shaped)
                .map_err(|(field, reason)| ColumnError::new(at(field), reason))?;
            let check = Check {
                c: shaped,
                columns: &columns,
                me: i,
            };
            let made = FAMILIES
                .iter()
                .find_map(|family| family(&check))
                .expect("every generator has its family")
                .map_err(|reason| {
                    ColumnError::new(at(&format!("generator.{}", c.generator.name())), reason)
                })?;
            makers.push(match c.items {
                Some(items) if c.column_type.is_collection() => collection::maker(c, items, made),
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
            .map(|(c, m)| make::mean_value_bytes(c.column_type, c, m.as_ref()))
            .sum()
    }

    /// A per-worker value maker (generators with state of their own are copied).
    pub fn values(&self, pool: crate::values::ValuePool) -> RecordValues {
        RecordValues {
            record: self.clone(),
            makers: self.makers.iter().map(|m| m.boxed_clone()).collect(),
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

/// SplitMix64's finalizer: spreads a number's bits over all 64.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One worker's maker of column values.
#[derive(Debug)]
pub struct RecordValues {
    record: Record,
    makers: Vec<Box<dyn Make>>,
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
        if let Some(pieces) = self.makers[idx].template() {
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
        let mut draw = Draw {
            t: c.column_type,
            digits: c.decimal_digits(),
            keynum,
            rng: &mut rng,
            pool: &self.pool,
        };
        make::write_value(self.makers[idx].as_mut(), &mut draw, out);
    }
}

#[cfg(test)]
mod tests;
