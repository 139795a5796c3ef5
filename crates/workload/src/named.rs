//! A workload file's named operations (`[[run.operation]]`, the `operations` property): each a
//! typed key-value operation on the declared record, with its own weight, the columns it reads or
//! writes, what it expects back, and its own name in results.

use std::sync::Arc;

use crate::operation::{
    Change, Expectation, FailureClass, FieldSet, FieldType, Measured, MeasuredNames, Modification,
    OpKind, MAX_NAMED_OPERATIONS,
};
use crate::statement::{Param, Statement, Template, CQL_CONSISTENCY_LEVELS};
use crate::WorkloadError;

pub use crate::operation_decl::{
    DeclaredKind, ExpectDecl, KeyValueDecl, OperationDecl, KEY_VALUE_KINDS,
};

/// Longest operation name (it is a column of reports and a label of live metrics).
const MAX_NAME_LEN: usize = 40;

/// The most records a multi-get reads.
pub const MAX_MULTI_GET_KEYS: u32 = 1000;

/// A checked operation, ready for the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedOperation {
    pub name: String,
    pub kind: OpKind,
    pub measured: Measured,
    /// Reads: the fields read (`None`: as `readallfields` says).
    pub read_fields: Option<FieldSet>,
    /// Writes: the fields written (`None`: as `writeallfields` says).
    pub set: Option<Arc<[usize]>>,
    pub expect: Option<Expectation>,
    /// A statement's texts and parameters.
    pub statement: Option<Arc<Statement>>,
    /// A read-modify-write's changes to the columns it read.
    pub modify: Option<Arc<[Modification]>>,
    /// A multi-get's number of keys (0 for any other kind).
    pub keys: usize,
    /// A transaction's statements (their parameters shared: the first's `params`).
    pub steps: Arc<[Arc<Statement>]>,
    /// Where the steps are among the workload's statements (set with the workload).
    pub first_step: usize,
    /// A sequence's steps: indices of other named operations, in order.
    pub sequence: Arc<[usize]>,
    /// A sequence run in one transaction.
    pub transaction: bool,
}

/// The most steps a sequence runs.
pub const MAX_SEQUENCE_STEPS: usize = 10;

/// The kinds a sequence's step may be: each works on the sequence's one key.
const SEQUENCE_STEP_KINDS: &[DeclaredKind] = &[
    DeclaredKind::Read,
    DeclaredKind::Update,
    DeclaredKind::ReadModifyWrite,
    DeclaredKind::Statement,
    DeclaredKind::Increment,
    DeclaredKind::Delete,
];

/// A named increment, as a binding checks it can run it: its name and the columns it adds to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Increment {
    pub name: String,
    pub columns: Vec<usize>,
}

/// A bad operation: the field at fault (`operation[1] ('check').expect.rows`) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationError {
    pub field: String,
    pub reason: String,
}

impl std::fmt::Display for OperationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// Checks `decls` against the record's `fields` and resolves names to indices. Weights are
/// returned in declaration order. `generated`: the fields are a declared record's columns, whose
/// values for a key can be made again (a statement's parameters). A key-value alternative is
/// checked as the operation that runs in its statement's place.
pub fn resolve(
    decls: &[OperationDecl],
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<Vec<(NamedOperation, f64)>, OperationError> {
    let ops = resolve_declared(decls, fields, types, generated)?;
    check_alternatives(decls, fields, types, generated)?;
    Ok(ops)
}

/// Each key-value alternative (`key_value`): on a statement or a transaction, of a key-value
/// kind, and the operations resolved with every alternative in its operation's place (its
/// fields, its `expect`, the steps of a sequence that names its operation).
fn check_alternatives(
    decls: &[OperationDecl],
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<(), OperationError> {
    if decls.iter().all(|d| d.key_value.is_none()) {
        return Ok(());
    }
    let mut in_place = Vec::with_capacity(decls.len());
    for (i, d) in decls.iter().enumerate() {
        let Some(kv) = &d.key_value else {
            in_place.push(d.clone());
            continue;
        };
        let fail = |field: &str, reason: String| OperationError {
            field: format!("operation[{i}] ('{}').key_value{field}", d.name),
            reason,
        };
        if !matches!(d.kind, DeclaredKind::Statement | DeclaredKind::Transaction) {
            return Err(fail(
                "",
                format!(
                    "only a statement or a transaction has one: a {} runs on every store",
                    d.kind.word()
                ),
            ));
        }
        if !KEY_VALUE_KINDS.contains(&kv.kind) {
            let kinds: Vec<&str> = KEY_VALUE_KINDS.iter().map(|k| k.word()).collect();
            return Err(fail(
                ".kind",
                format!(
                    "a {} is not a key-value operation: give {}",
                    kv.kind.word(),
                    kinds.join(", ")
                ),
            ));
        }
        in_place.push(kv.in_place_of(d));
    }
    let Err(mut e) = resolve_declared(&in_place, fields, types, generated) else {
        return Ok(());
    };
    // The alternative's own field where the fault is one's; else the operations with them.
    let at = |i: &usize| format!("operation[{i}] ('{}')", decls[*i].name);
    match (0..decls.len()).find(|i| e.field.starts_with(&at(i))) {
        Some(i) if decls[i].key_value.is_some() => {
            e.field = format!("{}.key_value{}", at(&i), &e.field[at(&i).len()..]);
        }
        _ => e
            .reason
            .push_str(" (with each key_value alternative in its operation's place)"),
    }
    Err(e)
}

fn resolve_declared(
    decls: &[OperationDecl],
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<Vec<(NamedOperation, f64)>, OperationError> {
    if decls.is_empty() || decls.len() > MAX_NAMED_OPERATIONS {
        return Err(OperationError {
            field: "operation".into(),
            reason: format!(
                "{} operations: give 1 to {MAX_NAMED_OPERATIONS}",
                decls.len()
            ),
        });
    }
    let mut out = Vec::with_capacity(decls.len());
    let mut sum = 0.0;
    for (i, d) in decls.iter().enumerate() {
        let fail = |field: &str, reason: String| OperationError {
            field: if field.is_empty() {
                format!("operation[{i}] ('{}')", d.name)
            } else {
                format!("operation[{i}] ('{}').{field}", d.name)
            },
            reason,
        };
        name_checked(decls, i).map_err(|(f, r)| fail(f, r))?;
        if !(d.weight.is_finite() && (0.0..=1.0).contains(&d.weight)) {
            return Err(fail(
                "weight",
                format!("{} is out of range: 0 to 1", d.weight),
            ));
        }
        sum += d.weight;
        let kind = d.kind.kind();
        let reads = matches!(
            kind,
            OpKind::Read | OpKind::Scan | OpKind::ReadModifyWrite | OpKind::MultiGet
        );
        let writes_some = matches!(
            kind,
            OpKind::Update | OpKind::ReadModifyWrite | OpKind::BatchUpdate
        );
        let read_fields = match &d.field {
            None => None,
            Some(_) if !reads => {
                return Err(fail(
                    "field",
                    "only a read, scan, multi_get or read_modify_write reads a column".into(),
                ))
            }
            Some(f) => Some(FieldSet::One(
                column_index(fields, "field", f).map_err(|(f, r)| fail(f, r))?,
            )),
        };
        let set = columns_set(d, fields, writes_some).map_err(|(f, r)| fail(f, r))?;
        let statement = statement_of(d, fields, generated).map_err(|(f, r)| fail(f, r))?;
        let steps = steps_of(d, fields, generated).map_err(|(f, r)| fail(f, r))?;
        let modify = modifications(d, fields, types).map_err(|(f, r)| fail(f, r))?;
        if let (Some(m), Some(FieldSet::One(read))) = (&modify, read_fields) {
            if m.iter().any(|m| m.column != read) {
                return Err(fail(
                    "field",
                    "a column add or append changes must be read: give no field (every column) or that column".into(),
                ));
            }
        }
        if modify.is_some() && set.is_some() {
            return Err(fail(
                "set",
                "add and append say what is written back: give them or set, not both".into(),
            ));
        }
        let keys = keys_of(d, kind).map_err(|(f, r)| fail(f, r))?;
        let expect = match &d.expect {
            None => None,
            Some(e) => {
                Some(expectation(e, kind).map_err(|(f, r)| fail(&format!("expect.{f}"), r))?)
            }
        };
        out.push((
            NamedOperation {
                name: d.name.clone(),
                kind,
                measured: Measured::named(i),
                read_fields,
                set,
                expect,
                statement,
                modify,
                keys,
                steps,
                first_step: 0,
                sequence: Arc::new([]),
                transaction: false,
            },
            d.weight,
        ));
    }
    for (i, d) in decls.iter().enumerate() {
        let (steps, transaction) = sequence_of(decls, i).map_err(|(f, r)| OperationError {
            field: format!("operation[{i}] ('{}').{f}", d.name),
            reason: r,
        })?;
        out[i].0.sequence = steps;
        out[i].0.transaction = transaction;
    }
    if (sum - 1.0).abs() > 1e-9 {
        return Err(OperationError {
            field: "operation".into(),
            reason: format!("the weights sum to {sum}, not 1"),
        });
    }
    Ok(out)
}

/// Operation `i`'s name: lowercase letters, digits and _, no other operation's.
fn name_checked(decls: &[OperationDecl], i: usize) -> Result<(), (&'static str, String)> {
    let d = &decls[i];
    let name_ok = d.name.len() <= MAX_NAME_LEN
        && d.name.starts_with(|c: char| c.is_ascii_lowercase())
        && d.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !name_ok {
        return Err((
            "name",
            format!("lowercase letters, digits and _, starting with a letter, at most {MAX_NAME_LEN} characters"),
        ));
    }
    if decls[..i].iter().any(|o| o.name == d.name) {
        return Err(("name", "another operation has this name".into()));
    }
    Ok(())
}

/// The index of column `name`; the error names `field`, the operation's field that names it.
fn column_index(
    fields: &[String],
    field: &'static str,
    name: &str,
) -> Result<usize, (&'static str, String)> {
    fields.iter().position(|f| f == name).ok_or_else(|| {
        (
            field,
            format!("no column '{name}': the record has {}", fields.join(", ")),
        )
    })
}

/// The columns an operation's `set` names (only a write of some columns has them).
fn columns_set(
    d: &OperationDecl,
    fields: &[String],
    writes_some: bool,
) -> Result<Option<Arc<[usize]>>, (&'static str, String)> {
    Ok(match &d.set {
        None => None,
        Some(_) if !writes_some => return Err((
            "set",
            "only an update, batch or read_modify_write sets columns (an insert writes them all)"
                .into(),
        )),
        Some(names) if names.is_empty() => {
            return Err(("set", "names no column".into()));
        }
        Some(names) => {
            let mut idx = Vec::with_capacity(names.len());
            for n in names {
                let c = column_index(fields, "set", n)?;
                if idx.contains(&c) {
                    return Err(("set", format!("names '{n}' twice")));
                }
                idx.push(c);
            }
            Some(idx.into())
        }
    })
}

/// How many keys an operation takes: a multi_get's or a batch's `keys`, else none.
fn keys_of(d: &OperationDecl, kind: OpKind) -> Result<usize, (&'static str, String)> {
    let several = matches!(kind, OpKind::MultiGet | OpKind::BatchUpdate);
    Ok(match (several, d.keys) {
        (true, None) => {
            let verb = if kind == OpKind::MultiGet {
                "reads"
            } else {
                "writes"
            };
            return Err((
                "keys",
                format!(
                    "a {} {verb} keys = N records (2 to {MAX_MULTI_GET_KEYS})",
                    d.kind.word()
                ),
            ));
        }
        (true, Some(n)) if !(2..=MAX_MULTI_GET_KEYS).contains(&n) => {
            return Err((
                "keys",
                format!("{n} is out of range: 2 to {MAX_MULTI_GET_KEYS}"),
            ))
        }
        (true, Some(n)) => n as usize,
        (false, Some(_)) => {
            return Err((
                "keys",
                "only a multi_get reads several keys (a batch writes them)".into(),
            ))
        }
        (false, None) => 0,
    })
}

/// A sequence's steps (indices of the operations it names) and whether it is one transaction;
/// `operations` and `transaction` on no other kind.
#[allow(clippy::type_complexity)]
fn sequence_of(
    decls: &[OperationDecl],
    i: usize,
) -> Result<(Arc<[usize]>, bool), (&'static str, String)> {
    let d = &decls[i];
    if d.kind != DeclaredKind::Sequence {
        for (field, given) in [
            ("operations", d.operations.is_some()),
            ("transaction", d.transaction.is_some()),
        ] {
            if given {
                return Err((field, "only a sequence has one: kind = \"sequence\"".into()));
            }
        }
        return Ok((Arc::new([]), false));
    }
    let Some(names) = &d.operations else {
        return Err((
            "operations",
            "a sequence runs operations = [\"name\", ...], other operations of the file, in order"
                .into(),
        ));
    };
    if names.len() < 2 || names.len() > MAX_SEQUENCE_STEPS {
        return Err((
            "operations",
            format!("{} steps: give 2 to {MAX_SEQUENCE_STEPS}", names.len()),
        ));
    }
    let mut steps = Vec::with_capacity(names.len());
    for name in names {
        let Some(j) = decls.iter().position(|o| &o.name == name) else {
            let all: Vec<&str> = decls.iter().map(|o| o.name.as_str()).collect();
            return Err((
                "operations",
                format!("no operation '{name}': the file has {}", all.join(", ")),
            ));
        };
        let kind = decls[j].kind;
        if !SEQUENCE_STEP_KINDS.contains(&kind) {
            let allowed: Vec<&str> = SEQUENCE_STEP_KINDS.iter().map(|k| k.word()).collect();
            return Err((
                "operations",
                format!(
                    "'{name}' is a {}: a step works on the sequence's one key ({})",
                    kind.word(),
                    allowed.join(", ")
                ),
            ));
        }
        steps.push(j);
    }
    Ok((steps.into(), d.transaction.unwrap_or(false)))
}

/// A read-modify-write's `add` and `append`, checked against the columns' types.
#[allow(clippy::type_complexity)]
fn modifications(
    d: &OperationDecl,
    fields: &[String],
    types: &[FieldType],
) -> Result<Option<Arc<[Modification]>>, (&'static str, String)> {
    if d.kind == DeclaredKind::Increment {
        if d.add.as_ref().is_none_or(|a| a.is_empty()) {
            return Err((
                "add",
                "an increment adds to columns: give add = { column = n }".into(),
            ));
        }
        if d.append.is_some() {
            return Err((
                "append",
                "an increment adds numbers; append is a read_modify_write's".into(),
            ));
        }
    }
    if d.add.is_none() && d.append.is_none() {
        return Ok(None);
    }
    if !matches!(
        d.kind,
        DeclaredKind::ReadModifyWrite | DeclaredKind::Increment
    ) {
        let field = if d.add.is_some() { "add" } else { "append" };
        return Err((
            field,
            "only a read_modify_write changes what it read (or an increment adds)".into(),
        ));
    }
    let mut out = Vec::new();
    let column = |field: &'static str, name: &str| {
        fields.iter().position(|f| f == name).ok_or_else(|| {
            (
                field,
                format!("no column '{name}': the record has {}", fields.join(", ")),
            )
        })
    };
    for (name, amount) in d.add.iter().flatten() {
        let c = column("add", name)?;
        let change = match types[c] {
            FieldType::Int | FieldType::BigInt if amount.fract() == 0.0 && amount.abs() < 9e15 => {
                Change::AddInteger(*amount as i64)
            }
            FieldType::Int | FieldType::BigInt => {
                return Err((
                    "add",
                    format!("{name}: {amount} is not a whole number, and '{name}' holds integers"),
                ))
            }
            FieldType::Double if amount.is_finite() => Change::AddFloat(*amount),
            FieldType::Double => return Err(("add", format!("{name}: {amount} is not a number"))),
            FieldType::Decimal { scale, .. } => {
                let text = amount.to_string();
                match crate::decimal::parse_units(&text, u32::from(scale)) {
                    Some(units) if amount.is_finite() => Change::AddDecimal {
                        units,
                        scale: u32::from(scale),
                    },
                    _ => {
                        return Err((
                            "add",
                            format!("{name}: {amount} has more than the column's {scale} decimals"),
                        ))
                    }
                }
            }
            _ => {
                return Err((
                    "add",
                    format!("'{name}' is not an int, bigint, double or decimal column"),
                ))
            }
        };
        out.push(Modification { column: c, change });
    }
    for (name, text) in d.append.iter().flatten() {
        let c = column("append", name)?;
        if !types[c].is_text() {
            return Err(("append", format!("'{name}' is not a text column")));
        }
        if out.iter().any(|m| m.column == c) {
            return Err(("append", format!("'{name}' is also in add")));
        }
        out.push(Modification {
            column: c,
            change: Change::Append(text.as_str().into()),
        });
    }
    Ok(Some(out.into()))
}

/// A statement operation's statements (at least one language); `sql` and `cql` on no other.
fn statement_of(
    d: &OperationDecl,
    fields: &[String],
    generated: bool,
) -> Result<Option<Arc<Statement>>, (&'static str, String)> {
    if d.kind != DeclaredKind::Statement {
        for (field, given) in [
            ("sql", &d.sql),
            ("cql", &d.cql),
            ("consistency", &d.consistency),
        ] {
            if given.is_some() {
                return Err((
                    field,
                    "only a statement has one: kind = \"statement\"".into(),
                ));
            }
        }
        return Ok(None);
    }
    if d.sql.is_none() && d.cql.is_none() {
        return Err(("sql", "a statement needs sql, cql or both".into()));
    }
    let mut params = Vec::new();
    let mut parse = |field: &'static str, text: &Option<String>| {
        text.as_deref()
            .map(|t| Template::parse(t, fields, &mut params).map_err(|r| (field, r)))
            .transpose()
    };
    let sql = parse("sql", &d.sql)?;
    let cql = parse("cql", &d.cql)?;
    let consistency = match &d.consistency {
        None => None,
        Some(_) if d.cql.is_none() => {
            return Err((
                "consistency",
                "only a cql statement has a consistency level".into(),
            ))
        }
        Some(c) => Some(
            CQL_CONSISTENCY_LEVELS
                .iter()
                .find(|l| l.eq_ignore_ascii_case(c))
                .map(|l| l.to_string())
                .ok_or_else(|| {
                    (
                        "consistency",
                        format!(
                            "no level '{c}': expected {}",
                            CQL_CONSISTENCY_LEVELS.join(", ")
                        ),
                    )
                })?,
        ),
    };
    if !generated && params.iter().any(|p| matches!(p, Param::Column(_))) {
        let field = if d.sql.is_some() { "sql" } else { "cql" };
        return Err((
            field,
            "a column parameter takes the value its generator made: declare the record's [[record.column]]".into(),
        ));
    }
    Ok(Some(Arc::new(Statement {
        name: d.name.clone(),
        sql,
        cql,
        consistency,
        params,
        in_transaction: false,
    })))
}

/// The most statements a transaction runs.
pub const MAX_STEPS: usize = 20;

/// A transaction's steps: each SQL text parsed, their parameters shared (the key and the columns
/// any of them names), so one operation's values serve them all.
fn steps_of(
    d: &OperationDecl,
    fields: &[String],
    generated: bool,
) -> Result<Arc<[Arc<Statement>]>, (&'static str, String)> {
    let Some(texts) = &d.steps else {
        if d.kind == DeclaredKind::Transaction {
            return Err((
                "steps",
                "a transaction runs steps = [\"SQL\", ...] in order".into(),
            ));
        }
        return Ok(Arc::new([]));
    };
    if d.kind != DeclaredKind::Transaction {
        return Err((
            "steps",
            "only a transaction has steps: kind = \"transaction\"".into(),
        ));
    }
    if texts.is_empty() || texts.len() > MAX_STEPS {
        return Err((
            "steps",
            format!("{} steps: give 1 to {MAX_STEPS}", texts.len()),
        ));
    }
    let mut params = Vec::new();
    let templates = texts
        .iter()
        .map(|t| Template::parse(t, fields, &mut params).map_err(|r| ("steps", r)))
        .collect::<Result<Vec<_>, _>>()?;
    if !generated && params.iter().any(|p| matches!(p, Param::Column(_))) {
        return Err((
            "steps",
            "a column parameter takes the value its generator made: declare the record's [[record.column]]".into(),
        ));
    }
    Ok(templates
        .into_iter()
        .map(|t| {
            Arc::new(Statement {
                name: d.name.clone(),
                sql: Some(t),
                cql: None,
                consistency: None,
                params: params.clone(),
                in_transaction: true,
            })
        })
        .collect())
}

fn expectation(e: &ExpectDecl, kind: OpKind) -> Result<Expectation, (&'static str, String)> {
    let failure = match &e.failure {
        None => FailureClass::Unexpected,
        Some(f) => FailureClass::from_name(f).ok_or_else(|| {
            let names: Vec<&str> = FailureClass::ALL.iter().map(|c| c.name()).collect();
            (
                "failure",
                format!("no class '{f}': expected {}", names.join(", ")),
            )
        })?,
    };
    if e.found.is_some()
        && !matches!(
            kind,
            OpKind::Read | OpKind::ReadModifyWrite | OpKind::Increment
        )
    {
        return Err((
            "found",
            "only a read, read_modify_write or increment finds a record or not".into(),
        ));
    }
    let row_bounds = e.rows.is_some() || e.min_rows.is_some() || e.max_rows.is_some();
    if row_bounds
        && !matches!(
            kind,
            OpKind::Scan | OpKind::Statement | OpKind::MultiGet | OpKind::Transaction
        )
    {
        return Err((
            "rows",
            "only a scan, a multi_get, a statement or a transaction returns rows".into(),
        ));
    }
    if e.rows.is_some() && (e.min_rows.is_some() || e.max_rows.is_some()) {
        return Err((
            "rows",
            "give rows, or min_rows and max_rows, not both".into(),
        ));
    }
    let min_rows = e.rows.or(e.min_rows);
    let max_rows = e.rows.or(e.max_rows);
    if let (Some(lo), Some(hi)) = (min_rows, max_rows) {
        if lo > hi {
            return Err(("min_rows", format!("{lo} is more than max_rows {hi}")));
        }
    }
    if e.found.is_none() && min_rows.is_none() && max_rows.is_none() {
        return Err((
            "found",
            "expects nothing: give found, rows, min_rows or max_rows".into(),
        ));
    }
    Ok(Expectation {
        found: e.found,
        min_rows,
        max_rows,
        failure,
    })
}

/// Parses the `operations` property's JSON.
pub fn from_json(
    json: &str,
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<Vec<(NamedOperation, f64)>, WorkloadError> {
    let decls: Vec<OperationDecl> = serde_json::from_str(json).map_err(|e| {
        WorkloadError::invalid(
            "operations",
            &crate::columns::abbreviated(json),
            format!("not an operation list: {e}"),
        )
    })?;
    resolve(&decls, fields, types, generated)
        .map_err(|e| WorkloadError::Inconsistent(e.to_string()))
}

/// The operations as the `operations` property holds them.
pub fn to_json(decls: &[OperationDecl]) -> String {
    serde_json::to_string(decls).expect("operations serialize")
}

/// The names results use for `ops`' slots.
pub fn measured_names(ops: &[(NamedOperation, f64)]) -> MeasuredNames {
    MeasuredNames::new(ops.iter().map(|(o, _)| o.name.as_str()))
}

/// What `e` says of a result: `Ok` when it matches, else a failure of its class. `found` is
/// whether a read found its record; `rows` the rows a scan returned.
pub fn judge(
    e: &Expectation,
    found: Option<bool>,
    rows: Option<u64>,
) -> Result<(), crate::OpError> {
    let differs = |what: String| Err(crate::OpError::new(e.failure, what));
    if let (Some(want), Some(got)) = (e.found, found) {
        if want != got {
            return differs(if want {
                "expected the record, not found".into()
            } else {
                "expected no record, found one".into()
            });
        }
    }
    if let Some(n) = rows {
        if e.min_rows.is_some_and(|lo| n < lo) || e.max_rows.is_some_and(|hi| n > hi) {
            let range = match (e.min_rows, e.max_rows) {
                (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
                (Some(lo), Some(hi)) => format!("{lo} to {hi}"),
                (Some(lo), None) => format!("at least {lo}"),
                (None, Some(hi)) => format!("at most {hi}"),
                (None, None) => unreachable!("a row expectation has a bound"),
            };
            return differs(format!("{n} rows, expected {range}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<String> {
        ["user", "token", "seen"].map(String::from).to_vec()
    }

    fn types() -> Vec<FieldType> {
        vec![FieldType::BigInt, FieldType::Uuid, FieldType::Timestamp]
    }

    fn decl(name: &str, kind: DeclaredKind, weight: f64) -> OperationDecl {
        OperationDecl {
            name: name.into(),
            kind,
            weight,
            field: None,
            set: None,
            sql: None,
            cql: None,
            consistency: None,
            add: None,
            append: None,
            steps: None,
            operations: None,
            transaction: None,
            keys: None,
            expect: None,
            key_value: None,
        }
    }

    /// A sequence's steps resolve to the indices of the operations it names, in its order.
    #[test]
    fn a_sequence_names_its_steps_by_index() {
        let mut seq = decl("visit", DeclaredKind::Sequence, 1.0);
        seq.operations = Some(vec!["touch".into(), "look".into(), "touch".into()]);
        seq.transaction = Some(true);
        let decls = [
            decl("look", DeclaredKind::Read, 0.0),
            seq,
            decl("touch", DeclaredKind::Update, 0.0),
        ];
        let ops = resolve(&decls, &fields(), &types(), true).unwrap();
        let (visit, _) = &ops[1];
        assert_eq!((visit.kind, visit.transaction), (OpKind::Sequence, true));
        assert_eq!(&visit.sequence[..], &[2, 0, 2]);
        assert!(ops[0].0.sequence.is_empty() && !ops[0].0.transaction);
    }

    #[test]
    fn operations_resolve_to_slots_columns_and_expectations() {
        let mut read = decl("check", DeclaredKind::Read, 0.7);
        read.field = Some("token".into());
        read.expect = Some(ExpectDecl {
            found: Some(true),
            rows: None,
            min_rows: None,
            max_rows: None,
            failure: None,
        });
        let mut touch = decl("touch", DeclaredKind::Update, 0.3);
        touch.set = Some(vec!["seen".into(), "user".into()]);
        let ops = resolve(&[read, touch], &fields(), &types(), true).unwrap();
        assert_eq!(ops[0].0.read_fields, Some(FieldSet::One(1)));
        assert_eq!(ops[0].0.expect.unwrap().failure, FailureClass::Unexpected);
        assert_eq!(ops[1].0.set.as_deref(), Some(&[2, 0][..]));
        assert_eq!(ops[1].0.measured, Measured::named(1));
        let names = measured_names(&ops);
        assert_eq!(names.name(Measured::named(0)), "check");
        assert_eq!(names.name(OpKind::Scan.into()), "SCAN");
    }

    #[test]
    fn bad_operations_name_their_field() {
        let cases: Vec<(Vec<OperationDecl>, &str)> = vec![
            (
                vec![decl("Check", DeclaredKind::Read, 1.0)],
                "operation[0] ('Check').name",
            ),
            (
                vec![
                    decl("a", DeclaredKind::Read, 0.5),
                    decl("a", DeclaredKind::Read, 0.5),
                ],
                "operation[1] ('a').name",
            ),
            (vec![decl("a", DeclaredKind::Read, 0.5)], "operation"),
            (
                vec![decl("a", DeclaredKind::Read, -1.0)],
                "operation[0] ('a').weight",
            ),
            (
                vec![{
                    let mut d = decl("a", DeclaredKind::Insert, 1.0);
                    d.field = Some("user".into());
                    d
                }],
                "operation[0] ('a').field",
            ),
            (
                vec![{
                    let mut d = decl("a", DeclaredKind::Update, 1.0);
                    d.set = Some(vec!["nope".into()]);
                    d
                }],
                "operation[0] ('a').set",
            ),
            (
                vec![{
                    let mut d = decl("a", DeclaredKind::Read, 1.0);
                    d.expect = Some(ExpectDecl {
                        found: None,
                        rows: Some(1),
                        min_rows: None,
                        max_rows: None,
                        failure: None,
                    });
                    d
                }],
                "operation[0] ('a').expect.rows",
            ),
            (vec![], "operation"),
        ];
        for (decls, field) in cases {
            let e = resolve(&decls, &fields(), &types(), true).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
    }

    #[test]
    fn a_result_that_differs_fails_with_the_expected_class() {
        let e = Expectation {
            found: Some(true),
            min_rows: None,
            max_rows: None,
            failure: FailureClass::Conflict,
        };
        assert!(judge(&e, Some(true), None).is_ok());
        let err = judge(&e, Some(false), None).unwrap_err();
        assert_eq!(err.class, FailureClass::Conflict);
        assert_eq!(err.message, "expected the record, not found");
        let rows = Expectation {
            found: None,
            min_rows: Some(2),
            max_rows: Some(5),
            failure: FailureClass::Unexpected,
        };
        assert!(judge(&rows, None, Some(2)).is_ok());
        assert!(judge(&rows, None, Some(5)).is_ok());
        assert!(judge(&rows, None, Some(1)).is_err());
        let err = judge(&rows, None, Some(6)).unwrap_err();
        assert_eq!(err.message, "6 rows, expected 2 to 5");
    }
}
