//! The vocabulary shared by workload, execution, bindings and measurement:
//! operation kinds, field selections, values and failure classes.

/// What an operation does. Names are YCSB's measurement names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
    Delete,
    /// Several inserts in one call (load phase, bindings that batch).
    BatchInsert,
    /// A workload file's own statement (SQL, CQL).
    Statement,
    /// Numbers added to columns of a record by the database, atomically (nothing read first).
    Increment,
    /// Several records read by key in one operation.
    MultiGet,
    /// A workload file's SQL statements run in one transaction.
    Transaction,
    /// Several records' columns written in one call (a batch).
    BatchUpdate,
    /// A workload file's operations run in order on one key, measured as one.
    Sequence,
}

impl OpKind {
    pub const ALL: [OpKind; 13] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Delete,
        OpKind::BatchInsert,
        OpKind::Statement,
        OpKind::Increment,
        OpKind::MultiGet,
        OpKind::Transaction,
        OpKind::BatchUpdate,
        OpKind::Sequence,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            OpKind::Delete => "DELETE",
            OpKind::BatchInsert => "BATCH-INSERT",
            OpKind::Statement => "STATEMENT",
            OpKind::Increment => "INCREMENT",
            OpKind::MultiGet => "MULTI-GET",
            OpKind::Transaction => "TRANSACTION",
            OpKind::BatchUpdate => "BATCH-UPDATE",
            OpKind::Sequence => "SEQUENCE",
        }
    }

    pub fn from_name(name: &str) -> Option<OpKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Most named operations a workload file declares (`[[run.operation]]`).
pub const MAX_NAMED_OPERATIONS: usize = 32;

/// Under which name an operation is measured: its kind's (YCSB's names), or the name of a workload
/// file's operation, so each of a file's operations gets its own histograms and counts. A small
/// index, so recorders keep fixed arrays and the hot path never hashes a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Measured(u8);

impl Measured {
    /// Slots: the kinds, then the named operations.
    pub const COUNT: usize = OpKind::COUNT + MAX_NAMED_OPERATIONS;

    /// The `i`th named operation of a workload file (`i < MAX_NAMED_OPERATIONS`, checked when the
    /// file is read).
    pub fn named(i: usize) -> Measured {
        assert!(i < MAX_NAMED_OPERATIONS, "named operation {i} out of range");
        Measured((OpKind::COUNT + i) as u8)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The slot of index `i` (`i < COUNT`).
    pub fn from_index(i: usize) -> Measured {
        assert!(i < Self::COUNT, "measured slot {i} out of range");
        Measured(i as u8)
    }
}

impl From<OpKind> for Measured {
    fn from(kind: OpKind) -> Measured {
        Measured(kind as u8)
    }
}

/// The names operations are measured under: YCSB's kind names, then a workload file's operation
/// names, by [`Measured`] slot.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredNames(std::sync::Arc<[String]>);

impl MeasuredNames {
    /// The kinds' names and the named operations' `named`, in slot order.
    pub fn new<'a>(named: impl IntoIterator<Item = &'a str>) -> MeasuredNames {
        let names: Vec<String> = OpKind::ALL
            .iter()
            .map(|k| k.name().to_string())
            .chain(named.into_iter().map(str::to_string))
            .collect();
        assert!(names.len() <= Measured::COUNT, "too many named operations");
        MeasuredNames(names.into())
    }

    pub fn name(&self, m: Measured) -> &str {
        self.0.get(m.index()).map_or("?", String::as_str)
    }
}

impl Default for MeasuredNames {
    fn default() -> Self {
        MeasuredNames::new([])
    }
}

/// What a workload file expects an operation to return; when it returns something else, the
/// operation fails with `failure` (as ScyllaDB's latte fork validates row counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expectation {
    /// A read (or a read-modify-write's read) finds its record (`true`) or must not (`false`).
    pub found: Option<bool>,
    /// Fewest rows a scan returns.
    pub min_rows: Option<u64>,
    /// Most rows a scan returns.
    pub max_rows: Option<u64>,
    /// The failure class of a result that differs.
    pub failure: FailureClass,
}

impl Expectation {
    /// In words: "found", "3 rows", "1 to 10 rows", failure class when not "unexpected".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.found {
            Some(true) => parts.push("found".to_string()),
            Some(false) => parts.push("not found".to_string()),
            None => {}
        }
        let rows = |n: u64| {
            if n == 1 {
                "1 row".to_string()
            } else {
                format!("{n} rows")
            }
        };
        match (self.min_rows, self.max_rows) {
            (Some(lo), Some(hi)) if lo == hi => parts.push(rows(lo)),
            (Some(lo), Some(hi)) => parts.push(format!("{lo} to {}", rows(hi))),
            (Some(lo), None) => parts.push(format!("at least {}", rows(lo))),
            (None, Some(hi)) => parts.push(format!("at most {}", rows(hi))),
            (None, None) => {}
        }
        if self.failure != FailureClass::Unexpected {
            parts.push(format!("else {}", self.failure.name()));
        }
        parts.join(", ")
    }
}

/// How a read-modify-write of a workload file's changes a column it read (its value passed on
/// from the read to the write, as Dory's append did).
#[derive(Debug, Clone, PartialEq)]
pub struct Modification {
    pub column: usize,
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// An integer column: the value read plus this.
    AddInteger(i64),
    /// A floating-point column: the value read plus this.
    AddFloat(f64),
    /// A decimal column of this scale: the value read plus `units` of 10^-scale, exactly.
    AddDecimal { units: i128, scale: u32 },
    /// A text column: the value read with this appended.
    Append(std::sync::Arc<str>),
}

impl Change {
    /// An increment's amount as text, as the database is given it.
    pub fn amount(&self) -> String {
        match self {
            Change::AddInteger(n) => n.to_string(),
            Change::AddFloat(x) => x.to_string(),
            Change::AddDecimal { units, scale } => crate::decimal::format_units(*units, *scale),
            Change::Append(t) => t.to_string(),
        }
    }
}

impl Modification {
    /// The new value of the column, from the value read (`None`: the column came back empty or
    /// null, taken as 0 or empty text).
    pub fn apply(&self, read: Option<&str>) -> Result<String, OpError> {
        let read = read.unwrap_or("").trim();
        let unparsable = |what: &str| {
            OpError::new(
                FailureClass::Unexpected,
                format!("read-modify-write: '{read}' read back is not {what}"),
            )
        };
        Ok(match &self.change {
            Change::AddInteger(n) => {
                let v: i64 = if read.is_empty() {
                    0
                } else {
                    read.parse().map_err(|_| unparsable("an integer"))?
                };
                v.wrapping_add(*n).to_string()
            }
            Change::AddFloat(x) => {
                let v: f64 = if read.is_empty() {
                    0.0
                } else {
                    read.parse().map_err(|_| unparsable("a number"))?
                };
                (v + x).to_string()
            }
            Change::AddDecimal { units, scale } => {
                let v = if read.is_empty() {
                    0
                } else {
                    crate::decimal::parse_units(read, *scale)
                        .ok_or_else(|| unparsable("a decimal"))?
                };
                crate::decimal::format_units(v.saturating_add(*units), *scale)
            }
            Change::Append(t) => format!("{read}{t}"),
        })
    }
}

/// Why an operation failed. Bindings map their driver's errors onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureClass {
    /// No answer in time (per-operation timeout, driver or server timeout).
    Timeout,
    /// The record does not exist.
    NotFound,
    /// The database refused for lack of replicas, nodes or connections.
    Unavailable,
    /// Lost a race: duplicate key, write conflict, lock or transaction abort.
    Conflict,
    /// The database answered, but not what was written (data integrity check).
    Unexpected,
    /// Anything else.
    Other,
}

impl FailureClass {
    pub const ALL: [FailureClass; 6] = [
        FailureClass::Timeout,
        FailureClass::NotFound,
        FailureClass::Unavailable,
        FailureClass::Conflict,
        FailureClass::Unexpected,
        FailureClass::Other,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// The name used in results (JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::Timeout => "timeout",
            FailureClass::NotFound => "not_found",
            FailureClass::Unavailable => "unavailable",
            FailureClass::Conflict => "conflict",
            FailureClass::Unexpected => "unexpected",
            FailureClass::Other => "other",
        }
    }

    pub fn from_name(name: &str) -> Option<FailureClass> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// YCSB's `Status` name, for its text format (`Return=NOT_FOUND`).
    pub fn ycsb_status(self) -> &'static str {
        match self {
            FailureClass::Timeout => "TIMEOUT",
            FailureClass::NotFound => "NOT_FOUND",
            FailureClass::Unavailable => "SERVICE_UNAVAILABLE",
            FailureClass::Conflict => "CONFLICT",
            FailureClass::Unexpected => "UNEXPECTED_STATE",
            FailureClass::Other => "ERROR",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A failed operation: its class and the driver's message (kept for the error summary).
#[derive(Debug, Clone, PartialEq)]
pub struct OpError {
    pub class: FailureClass,
    pub message: String,
    /// The client ran out of its own resources (file descriptors, threads): no failure of the
    /// database, and the run's figures would describe the client. See [`OpError::is_client_fault`].
    pub client_fault: bool,
}

impl OpError {
    pub fn new(class: FailureClass, message: impl Into<String>) -> Self {
        OpError {
            class,
            message: message.into(),
            client_fault: false,
        }
    }

    /// The client's own resources ran out (a binding that knows it, e.g. a thread it could not
    /// start): the executor ends the run loudly instead of counting a failure of the database.
    pub fn client_fault(message: impl Into<String>) -> Self {
        OpError {
            class: FailureClass::Other,
            message: message.into(),
            client_fault: true,
        }
    }

    /// Whether this failure is the client's: marked so by the binding, or a driver's error that
    /// carries the operating system's word for it (EMFILE, ENFILE: no descriptor left for a socket),
    /// whatever class the driver's error was mapped to.
    pub fn is_client_fault(&self) -> bool {
        self.client_fault
            || ["Too many open files", "(os error 24)", "(os error 23)"]
                .iter()
                .any(|m| self.message.contains(m))
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class.name(), self.message)
    }
}

/// Which fields a read or scan returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldSet {
    All,
    /// One field, by index into the workload's field names.
    One(usize),
}

impl FieldSet {
    /// The field indices this selection covers, of `field_count` fields (a range: nothing is
    /// allocated per operation).
    pub fn indices(self, field_count: usize) -> std::ops::Range<usize> {
        match self {
            FieldSet::All => 0..field_count,
            FieldSet::One(i) => i..i + 1,
        }
    }
}

/// The type a binding with a typed schema gives a field. Values are always passed as text (ints and
/// doubles in decimal, timestamps as `YYYY-MM-DD HH:MM:SS.mmm` UTC); schemaless stores keep the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Text of at most `max_len` characters; `None` when values can grow (appends).
    Text { max_len: Option<usize> },
    /// 32-bit integer.
    Int,
    /// 64-bit integer.
    BigInt,
    /// 64-bit floating point.
    Double,
    /// Millisecond timestamp.
    Timestamp,
    /// true or false, written as 1 or 0.
    Bool,
    /// A UUID in its 36-character text form.
    Uuid,
    /// An exact decimal of `precision` digits, `scale` of them after the point; its text has
    /// exactly `scale` decimals.
    Decimal { precision: u8, scale: u8 },
    /// Bytes, at most `max_bytes`; their text is lowercase hex (two characters a byte), which
    /// typed bindings store as bytes.
    Blob { max_bytes: usize },
    /// A list of elements, its text a JSON array (`[1,2]`, `["a","b"]`).
    List { element: ElementType },
    /// A map of text keys to elements, its text a JSON object with its keys in byte order
    /// (`{"color":"red","size":"L"}`).
    Map { element: ElementType },
}

/// The type of a list's or a map's elements. In the JSON text a text, UUID or timestamp element is
/// a string (timestamps as `YYYY-MM-DD HH:MM:SS.mmm` UTC), a number a number, a bool true or false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    Text,
    Int,
    BigInt,
    Double,
    Bool,
    Uuid,
    Timestamp,
}

impl ElementType {
    /// The scalar field type of one element (text without a limit).
    pub fn field_type(self) -> FieldType {
        match self {
            ElementType::Text => FieldType::Text { max_len: None },
            ElementType::Int => FieldType::Int,
            ElementType::BigInt => FieldType::BigInt,
            ElementType::Double => FieldType::Double,
            ElementType::Bool => FieldType::Bool,
            ElementType::Uuid => FieldType::Uuid,
            ElementType::Timestamp => FieldType::Timestamp,
        }
    }

    /// Whether an element is a JSON string (else a number or a bool).
    pub fn is_string(self) -> bool {
        matches!(
            self,
            ElementType::Text | ElementType::Uuid | ElementType::Timestamp
        )
    }
}

impl FieldType {
    /// Bytes in binary form; text counts `text_len` characters.
    pub fn binary_bytes(self, text_len: usize) -> usize {
        match self {
            FieldType::Text { .. } => text_len,
            FieldType::Int => 4,
            FieldType::BigInt | FieldType::Double | FieldType::Timestamp => 8,
            FieldType::Bool => 1,
            FieldType::Uuid => 16,
            // Two digits a byte, and the sign and scale.
            FieldType::Decimal { precision, .. } => usize::from(precision).div_ceil(2) + 2,
            FieldType::Blob { .. } => text_len / 2,
            FieldType::List { .. } | FieldType::Map { .. } => text_len,
        }
    }

    /// Whether values are a list's or a map's JSON text.
    pub fn is_collection(self) -> bool {
        matches!(self, FieldType::List { .. } | FieldType::Map { .. })
    }

    pub fn is_text(self) -> bool {
        matches!(self, FieldType::Text { .. })
    }
}

/// Field values by field index. Values are plain ASCII (see [`crate::values`]).
pub type Fields = Vec<(usize, String)>;

/// One operation, reused by a worker from one operation to the next to avoid allocations.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub kind: OpKind,
    pub keynum: u64,
    pub key: String,
    /// Fields to read (read, scan, read-modify-write).
    pub read_fields: FieldSet,
    /// Values to write (update, insert, read-modify-write).
    pub values: Fields,
    /// Records to scan.
    pub scan_count: usize,
    /// Read-modify-write only: `values` are appended to what was read, not written instead of it.
    pub append: bool,
    /// The name it is measured under (its kind's, or a workload file's operation's).
    pub measured: Measured,
    /// What the result must be (a workload file's operation's `expect`).
    pub expect: Option<Expectation>,
    /// A statement: its number among the workload's (`values` are its parameters, in order); a
    /// transaction: its first statement's, of `steps`.
    pub statement: usize,
    /// A transaction's statements.
    pub steps: usize,
    /// A read-modify-write that writes back what it read, changed (`values` are then unused).
    pub modify: Option<std::sync::Arc<[Modification]>>,
    /// A multi-get's or a batch's keys (distinct; `key` is the first), the strings reused from
    /// one to the next.
    pub keys: Vec<String>,
    /// A batch: each key's values, in `keys`' order.
    pub batch_values: Vec<Fields>,
    /// A sequence: its steps, on `key`, in order (the vector and its operations reused).
    pub sequence: Vec<Operation>,
    /// A sequence run in one transaction.
    pub transaction: bool,
    /// A statement replayed as a capture has it (`scalebench replay`): its text, `values` its
    /// parameters in order; empty for every other operation.
    pub text: String,
}

impl Default for Operation {
    fn default() -> Self {
        Operation {
            kind: OpKind::Read,
            keynum: 0,
            key: String::with_capacity(32),
            read_fields: FieldSet::All,
            values: Vec::new(),
            scan_count: 0,
            append: false,
            measured: OpKind::Read.into(),
            expect: None,
            statement: 0,
            steps: 0,
            modify: None,
            keys: Vec::new(),
            batch_values: Vec::new(),
            sequence: Vec::new(),
            transaction: false,
            text: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modification_changes_the_value_read() {
        let m = |change| Modification { column: 0, change };
        assert_eq!(m(Change::AddInteger(2)).apply(Some("40")).unwrap(), "42");
        assert_eq!(m(Change::AddInteger(-1)).apply(None).unwrap(), "-1");
        assert_eq!(
            m(Change::AddFloat(0.5)).apply(Some("1.25")).unwrap(),
            "1.75"
        );
        assert_eq!(
            m(Change::Append("1".into())).apply(Some("ab")).unwrap(),
            "ab1"
        );
        let e = m(Change::AddInteger(1)).apply(Some("x")).unwrap_err();
        assert_eq!(e.class, FailureClass::Unexpected);
    }
}
