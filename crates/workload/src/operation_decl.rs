//! A named operation as a workload file declares it (`[[run.operation]]`, the `operations`
//! property's JSON): the fields, as read and as the file's JSON Schema shows them. `named`
//! checks them against the record.

use serde::{Deserialize, Serialize};

use crate::operation::OpKind;

/// One operation as a workload file declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationDecl {
    /// Its name in results and reports: lowercase letters, digits and `_`, starting with a
    /// letter, at most 40 characters, unique in the file.
    pub name: String,
    /// What it does to the record.
    pub kind: DeclaredKind,
    /// Its share of the run's operations; the operations' weights sum to 1.
    pub weight: f64,
    /// read, scan, read_modify_write: the one column read (absent: every column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// update, read_modify_write: the columns written, each a new value from its generator
    /// (absent: as `run.write_fields` says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<String>>,
    /// statement: its SQL (PostgreSQL, MySQL/MariaDB, SQLite), parameters `:column` and `:key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// statement: its CQL (Cassandra), parameters as in `sql`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cql: Option<String>,
    /// statement with `cql`: the consistency level it runs at (ONE, QUORUM, ALL, LOCAL_QUORUM,
    /// ...); absent: the binding's read_consistency for a SELECT, else its write_consistency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<String>,
    /// read_modify_write: numbers added to the integer, double or decimal columns read, written
    /// back (`add = { requests = 1 }`); increment: the numbers the database adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<std::collections::BTreeMap<String, f64>>,
    /// read_modify_write: text appended to the text columns read, written back (Dory's append:
    /// `append = { body = "1" }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<std::collections::BTreeMap<String, String>>,
    /// transaction: its SQL statements, run in order in one transaction (parameters as in `sql`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<String>>,
    /// sequence: the names of other operations of the file, run in order on one key; a column
    /// read by a step is the value of that column's parameter in later statements (weight 0 for
    /// an operation that runs only inside sequences).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<String>>,
    /// sequence: run its steps in one transaction (BEGIN, each step, COMMIT; a failed step rolls
    /// the others back). PostgreSQL, MySQL/MariaDB, SQLite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction: Option<bool>,
    /// multi_get, batch: how many records it reads or writes, by distinct keys (2 to 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<u32>,
    /// What the operation must return; a result that differs is a failure of class `failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectDecl>,
    /// statement, transaction: the key-value operation that runs in its place on a store without
    /// its text (Redis, etcd, HBase, MongoDB; a SQL or CQL store its statement has no text for),
    /// measured under the same name (`key_value = { kind = "multi_get", keys = 10 }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_value: Option<KeyValueDecl>,
}

/// `key_value = { kind = ..., ... }`: a statement's or a transaction's key-value alternative, a
/// key-value operation with the fields a named operation of its kind has (its name and weight are
/// the operation's own; its `expect` is its own: the statement's does not carry over).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyValueDecl {
    /// A key-value kind: read, update, insert, scan, delete, read_modify_write, increment,
    /// multi_get or batch.
    pub kind: DeclaredKind,
    /// As an operation's `field`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// As an operation's `set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<String>>,
    /// As an operation's `add`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<std::collections::BTreeMap<String, f64>>,
    /// As an operation's `append`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<std::collections::BTreeMap<String, String>>,
    /// As an operation's `keys`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<u32>,
    /// What it must return, as an operation of its kind expects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectDecl>,
}

/// The kinds a key-value alternative may be: those every binding runs.
pub const KEY_VALUE_KINDS: &[DeclaredKind] = &[
    DeclaredKind::Read,
    DeclaredKind::Update,
    DeclaredKind::Insert,
    DeclaredKind::Scan,
    DeclaredKind::Delete,
    DeclaredKind::ReadModifyWrite,
    DeclaredKind::Increment,
    DeclaredKind::MultiGet,
    DeclaredKind::Batch,
];

impl KeyValueDecl {
    /// The operation that runs in `d`'s place: this kind and these fields, `d`'s name and weight.
    pub fn in_place_of(&self, d: &OperationDecl) -> OperationDecl {
        OperationDecl {
            name: d.name.clone(),
            kind: self.kind,
            weight: d.weight,
            field: self.field.clone(),
            set: self.set.clone(),
            sql: None,
            cql: None,
            consistency: None,
            add: self.add.clone(),
            append: self.append.clone(),
            steps: None,
            operations: None,
            transaction: None,
            keys: self.keys,
            expect: self.expect.clone(),
            key_value: None,
        }
    }
}

/// The typed key-value operations every binding maps to its own calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeclaredKind {
    /// Reads one record by key.
    Read,
    /// Writes columns of an existing record.
    Update,
    /// Writes a new record (the next key of the insert sequence).
    Insert,
    /// Reads records in key order from a key (`run.scan_length` of them at most).
    Scan,
    /// Deletes one record by key.
    Delete,
    /// Reads one record, then writes columns of it.
    ReadModifyWrite,
    /// The operation's own statement (`sql`, `cql`), prepared once per connection; its parameters
    /// take the values the load wrote for a loaded key.
    Statement,
    /// Adds `add`'s numbers to columns of a record in the database, atomically, nothing read
    /// first (SQL's `SET c = c + n`, Redis's HINCRBY).
    Increment,
    /// Reads `keys` records by distinct keys in one operation (SQL's `IN`, a Redis pipeline,
    /// MongoDB's `$in`; one read after another where the database has no such call).
    MultiGet,
    /// Runs `steps`, SQL statements, in one transaction (BEGIN, each prepared, COMMIT; a failed
    /// step rolls back). PostgreSQL, MySQL/MariaDB, SQLite.
    Transaction,
    /// Writes the `set` columns of `keys` distinct records in one call: a transaction of updates
    /// (SQL), a logged BATCH (Cassandra), MULTI/EXEC (Redis), one update command (MongoDB).
    Batch,
    /// Runs `operations`, other operations of the file, in order on one key, measured as one;
    /// a value read by a step is bound into later statements (read a record, then query by
    /// what it holds). `transaction = true` runs them in one transaction (SQL).
    Sequence,
}

impl DeclaredKind {
    /// As a file writes it.
    pub fn word(self) -> &'static str {
        match self {
            DeclaredKind::Read => "read",
            DeclaredKind::Update => "update",
            DeclaredKind::Insert => "insert",
            DeclaredKind::Scan => "scan",
            DeclaredKind::Delete => "delete",
            DeclaredKind::ReadModifyWrite => "read_modify_write",
            DeclaredKind::Statement => "statement",
            DeclaredKind::Increment => "increment",
            DeclaredKind::MultiGet => "multi_get",
            DeclaredKind::Transaction => "transaction",
            DeclaredKind::Batch => "batch",
            DeclaredKind::Sequence => "sequence",
        }
    }

    pub fn kind(self) -> OpKind {
        match self {
            DeclaredKind::Read => OpKind::Read,
            DeclaredKind::Update => OpKind::Update,
            DeclaredKind::Insert => OpKind::Insert,
            DeclaredKind::Scan => OpKind::Scan,
            DeclaredKind::Delete => OpKind::Delete,
            DeclaredKind::ReadModifyWrite => OpKind::ReadModifyWrite,
            DeclaredKind::Statement => OpKind::Statement,
            DeclaredKind::Increment => OpKind::Increment,
            DeclaredKind::MultiGet => OpKind::MultiGet,
            DeclaredKind::Transaction => OpKind::Transaction,
            DeclaredKind::Batch => OpKind::BatchUpdate,
            DeclaredKind::Sequence => OpKind::Sequence,
        }
    }
}

/// `expect = { ... }`: what a result must be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectDecl {
    /// read, read_modify_write: the record exists (`true`) or must not (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<bool>,
    /// scan, statement: exactly this many rows (a statement's: rows returned, or rows changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// scan, statement: at least this many rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rows: Option<u64>,
    /// scan, statement: at most this many rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<u64>,
    /// The failure class of a result that differs: timeout, not_found, unavailable, conflict,
    /// unexpected (the default) or other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}
