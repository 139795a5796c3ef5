//! YCSB's `CoreWorkload`: properties in, operations out.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::{RngCore, SeedableRng};

use crate::generator::{
    AcknowledgedCounter, Discrete, Exponential, Hotspot, ScrambledZipfian, Sequential,
    SkewedLatest, Uniform, WorkerRng, Zipfian,
};
use crate::keys::{InsertOrder, KeyBuilder};
use crate::named::NamedOperation;
use crate::operation::{
    FailureClass, FieldSet, FieldType, Fields, MeasuredNames, OpError, OpKind, Operation,
};
use crate::values::{deterministic_value, ValuePool};
use crate::{Properties, WorkloadError};

/// Largest field value (and append) a workload may ask for: every operation materialises its values.
pub const MAX_FIELD_BYTES: u64 = 16 << 20;
/// Largest record (all fields): every operation materialises its values.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;
/// Largest record count: key numbers stay far from overflow in i64 arithmetic.
pub const MAX_RECORDS: u64 = 1 << 48;

pub use crate::declared::Shapes;
use crate::declared::*;

/// What the property `name` shapes; `None` for a key scalebench does not declare (a binding's).
pub fn core_property(name: &str) -> Option<Shapes> {
    crate::declared::find(name).map(|p| p.shapes)
}

/// Whether `name` shapes only the run phase. Everything else, including keys this crate does not
/// know (a binding's), is taken to shape the loaded data: a wrong guess costs a load, never a
/// wrong result.
pub fn shapes_run_phase_only(name: &str) -> bool {
    core_property(name) == Some(Shapes::RunPhase)
}

/// What identifies the records a load of `p` writes: every property but the run phase's, sorted.
pub fn loaded_data_identity(p: &Properties) -> Vec<(String, String)> {
    p.iter()
        .filter(|(k, _)| !shapes_run_phase_only(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[derive(Debug, Clone)]
enum FieldLength {
    Constant(usize),
    Uniform(Uniform),
    Zipfian(Zipfian),
    /// Heavy-tailed sizes (documents, articles), clamped to `[min, max]`.
    LogNormal {
        dist: rand_distr::LogNormal<f64>,
        min: usize,
        max: usize,
    },
}

impl FieldLength {
    fn next(&mut self, rng: &mut WorkerRng) -> usize {
        match self {
            FieldLength::Constant(n) => *n,
            FieldLength::Uniform(u) => u.next(rng) as usize,
            FieldLength::Zipfian(z) => z.next(rng) as usize,
            FieldLength::LogNormal { dist, min, max } => {
                use rand_distr::Distribution;
                (dist.sample(rng).round() as usize).clamp(*min, *max)
            }
        }
    }
}

#[derive(Debug, Clone)]
enum KeyChooser {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Sequential(Sequential),
    Exponential(Exponential),
}

#[derive(Debug, Clone)]
enum ScanLength {
    Uniform(Uniform),
    Zipfian(Zipfian),
}

/// A parsed, validated CoreWorkload. Cheap to share; [`CoreWorkload::generator`] makes one per worker.
#[derive(Debug, Clone)]
pub struct CoreWorkload {
    pub table: String,
    /// `keycolumn`: the key's column in SQL and CQL tables (`None`: the binding's YCSB name).
    pub key_column: Option<String>,
    pub field_names: Arc<[String]>,
    /// The type of each field, for bindings with typed schemas.
    pub field_types: Arc<[FieldType]>,
    /// `recordtype=measurement`: Lourenco's typed record instead of YCSB's text fields.
    pub measurement: bool,
    /// `columns`: a declared record (a workload file's) instead of YCSB's text fields.
    pub record: Option<crate::columns::Record>,
    pub keys: KeyBuilder,
    pub record_count: u64,
    pub insert_start: u64,
    pub insert_count: u64,
    /// Key number of the run phase's first insert (`transactioninsertstart`, default `recordcount`
    /// as in YCSB). A later run of the same data must start past the keys earlier runs inserted.
    pub transaction_insert_start: u64,
    /// `operationcount` as set in the properties (YCSB's default 0 means "no limit").
    pub operation_count: u64,
    /// `writekeypartition` of `writekeypartitions`: the residue of the loaded keys this client's
    /// updates and read-modify-writes go to (one partition: all of them).
    pub write_partition: (u64, u64),
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    pub data_integrity: bool,
    pub insertion_retry_limit: u32,
    pub insertion_retry_interval_s: u64,
    /// `readmodifywritemode=append`: what a read-modify-write appends to each field it read before
    /// it writes the fields back (documents that grow).
    pub append: Option<Append>,
    /// Operation kinds with a positive share, in YCSB's order (a workload file's named
    /// operations: their kinds' summed weights).
    pub mix: Vec<(OpKind, f64)>,
    /// A workload file's secondary indexes (`indexes`); empty without.
    pub indexes: Arc<[crate::index::Index]>,
    /// A workload file's named operations and their weights (`operations`); empty without.
    pub named: Arc<[(NamedOperation, f64)]>,
    op_chooser: Discrete<Choice>,
    field_length: FieldLength,
    key_chooser: KeyChooser,
    scan_length: ScanLength,
    field_chooser: Uniform,
    /// Key numbers of inserts during the run phase, shared by all workers.
    insert_sequence: Arc<AcknowledgedCounter>,
    /// Random characters values are cut from (fixed content; offsets come from each worker's seed).
    value_pool: Arc<std::sync::OnceLock<ValuePool>>,
}

impl CoreWorkload {
    /// Reads and checks every core workload property: the record's fields, the key ranges, the
    /// operation mix, the keys and their choice, scan lengths, then what depends on several of them.
    pub fn from_properties(p: &Properties) -> Result<Self, WorkloadError> {
        let fields = record_shape(p)?;
        let range = key_range(p)?;
        let read_all_fields = p.flag(&READALLFIELDS)?;
        let write_all_fields = p.flag(&WRITEALLFIELDS)?;
        let data_integrity = p.flag(&DATAINTEGRITY)?;
        if data_integrity && (fields.measurement || fields.record.is_some()) {
            return Err(WorkloadError::invalid(
                "dataintegrity",
                "true",
                "typed records hold values that databases print their own way",
            ));
        }
        if data_integrity && !matches!(fields.length, FieldLength::Constant(_)) {
            return Err(WorkloadError::invalid(
                "fieldlengthdistribution",
                p.text(&FIELDLENGTHDISTRIBUTION),
                "dataintegrity=true needs constant field lengths",
            ));
        }
        let declared_types: Arc<[FieldType]> = match &fields.record {
            Some(r) => r.field_types(),
            None => fields
                .names
                .iter()
                .map(|_| FieldType::Text { max_len: None })
                .collect(),
        };
        let mut named =
            named_operations(p, &fields.names, &declared_types, fields.record.is_some())?;
        // A transaction's steps follow the operations' own statements (see `statements`).
        let mut next_step = named.len();
        for (o, _) in named.iter_mut().filter(|(o, _)| !o.steps.is_empty()) {
            o.first_step = next_step;
            next_step += o.steps.len();
        }
        let indexes = match p.given(&INDEXES) {
            Some(json) => crate::index::from_json(json, &fields.names, &declared_types)?,
            None => Arc::new([]),
        };
        let mix = if named.is_empty() {
            operation_mix(p)?
        } else {
            kinds_of(&named)
        };
        let choices: Vec<(Choice, f64)> = if named.is_empty() {
            mix.iter().map(|&(k, w)| (Choice::Kind(k), w)).collect()
        } else {
            named
                .iter()
                .enumerate()
                .map(|(i, (_, w))| (Choice::Named(i), *w))
                .collect()
        };
        if let Some((o, _)) = named
            .iter()
            .find(|(o, _)| o.keys as u64 > range.record_count)
        {
            return Err(WorkloadError::invalid(
                OPERATIONS.name,
                &o.name,
                format!(
                    "operation '{}' takes {} distinct keys of {} records",
                    o.name, o.keys, range.record_count
                ),
            ));
        }
        // A sequence's values over the loaded keys fit its column (they were held at the type's
        // bound, silently; issue 62, low 2).
        if let Some(record) = &fields.record {
            for c in record.columns.iter() {
                c.sequence_in_range(range.record_count).map_err(|e| {
                    WorkloadError::invalid(
                        COLUMNS.name,
                        &c.name,
                        format!(
                            "column '{}': {e} with {} records",
                            c.name, range.record_count
                        ),
                    )
                })?;
            }
        }
        let append = append_of(p, data_integrity)?;
        if append.is_some() && fields.record.is_some() {
            return Err(WorkloadError::invalid(
                "readmodifywritemode",
                "append",
                "a declared record's typed columns cannot be appended to",
            ));
        }
        let keys = key_builder(p, fields.measurement)?;
        let insert_sequence = Arc::new(AcknowledgedCounter::new(range.transaction_insert_start));
        let key_chooser = key_chooser(p, &range)?;
        let scan_length = scan_length(p)?;

        let insertion_retry_limit = p.integer(&INSERTION_RETRY_LIMIT)?.min(u32::MAX as u64) as u32;
        let insertion_retry_interval_s = p.integer(&INSERTION_RETRY_INTERVAL)?;

        let field_types: Arc<[FieldType]> = if fields.record.is_some() {
            // A column a read-modify-write appends to grows: no length limit.
            let appended = |c: usize| {
                named.iter().any(|(o, _)| {
                    o.modify.iter().flat_map(|m| m.iter()).any(|m| {
                        m.column == c && matches!(m.change, crate::operation::Change::Append(_))
                    })
                })
            };
            declared_types
                .iter()
                .enumerate()
                .map(|(c, t)| {
                    if appended(c) {
                        FieldType::Text { max_len: None }
                    } else {
                        *t
                    }
                })
                .collect()
        } else {
            let max_len = append.is_none().then_some(fields.max_length as usize);
            fields
                .names
                .iter()
                .map(|_| FieldType::Text { max_len })
                .collect()
        };
        let key_column = match p.given(&KEYCOLUMN) {
            None => None,
            Some(k) if !crate::columns::valid_name(k) => {
                return Err(WorkloadError::invalid(
                    KEYCOLUMN.name,
                    k,
                    "expected a letter, then letters, digits and '_' (at most 64)",
                ))
            }
            Some(k) if fields.names.iter().any(|f| f.eq_ignore_ascii_case(k)) => {
                return Err(WorkloadError::invalid(
                    KEYCOLUMN.name,
                    k,
                    "a column of the record has this name",
                ))
            }
            Some(k) => Some(k.to_string()),
        };
        Ok(CoreWorkload {
            key_column,
            measurement: fields.measurement,
            record: fields.record,
            field_types,
            table: fields.table,
            field_chooser: Uniform::new(0, fields.names.len() as u64 - 1),
            field_names: fields.names,
            keys,
            record_count: range.record_count,
            insert_start: range.insert_start,
            insert_count: range.insert_count,
            transaction_insert_start: range.transaction_insert_start,
            operation_count: range.operation_count,
            write_partition: range.write_partition,
            read_all_fields,
            write_all_fields,
            data_integrity,
            insertion_retry_limit,
            insertion_retry_interval_s,
            append,
            op_chooser: Discrete::new(&choices),
            mix,
            named: named.into(),
            indexes,
            field_length: fields.length,
            key_chooser,
            scan_length,
            insert_sequence,
            value_pool: Arc::new(std::sync::OnceLock::new()),
        })
    }

    /// Key number `k` moved into this client's write partition: the nearest key of its residue in
    /// the same block of N loaded keys (or the block before, past the last loaded key). Keys past
    /// the loaded records are this client's own inserts, left as they are.
    pub fn in_write_partition(&self, k: u64) -> u64 {
        let (residue, n) = self.write_partition;
        if n == 1 || k >= self.record_count {
            return k;
        }
        let moved = k - k % n + residue;
        // The last block may be short; n <= record_count, so the block before exists.
        if moved >= self.record_count {
            moved - n
        } else {
            moved
        }
    }

    /// The statements of its named operations, by operation number (`None`: not a statement),
    /// then the transactions' steps (each transaction's from its `first_step`).
    pub fn statements(&self) -> Arc<[Option<Arc<crate::statement::Statement>>]> {
        let steps = self
            .named
            .iter()
            .flat_map(|(o, _)| o.steps.iter().cloned().map(Some));
        self.named
            .iter()
            .map(|(o, _)| o.statement.clone())
            .chain(steps)
            .collect()
    }

    /// The sequences run in one transaction: each one's name, and whether a step of it is a
    /// statement of the file's own.
    pub fn transactional_sequences(&self) -> Vec<(String, bool)> {
        self.named
            .iter()
            .filter(|(o, _)| o.kind == OpKind::Sequence && o.transaction)
            .map(|(o, _)| {
                let statement = o
                    .sequence
                    .iter()
                    .any(|&i| self.named[i].0.kind == OpKind::Statement);
                (o.name.clone(), statement)
            })
            .collect()
    }

    /// Its named increments, with the columns each adds to.
    pub fn increments(&self) -> Vec<crate::named::Increment> {
        self.named
            .iter()
            .filter(|(o, _)| o.kind == OpKind::Increment)
            .map(|(o, _)| crate::named::Increment {
                name: o.name.clone(),
                columns: o
                    .modify
                    .iter()
                    .flat_map(|m| m.iter())
                    .map(|m| m.column)
                    .collect(),
            })
            .collect()
    }

    /// The names its operations are measured under (the kinds', and the named operations').
    pub fn measured_names(&self) -> MeasuredNames {
        crate::named::measured_names(&self.named)
    }

    /// The generator of one worker; `seed` makes its stream reproducible.
    pub fn generator(&self, seed: u64) -> OperationGenerator {
        let pool = self.value_pool.get_or_init(|| ValuePool::new(0)).clone();
        OperationGenerator {
            record: self.record.as_ref().map(|r| r.values(pool.clone())),
            pool,
            rng: WorkerRng::seed_from_u64(seed),
            workload: self.clone(),
            key_chooser: self.key_chooser.clone(),
            field_length: self.field_length.clone(),
            scan_length: self.scan_length.clone(),
            named: Some(
                self.named
                    .iter()
                    .map(|(o, w)| {
                        let modify = o.modify.as_ref().map(|m| Arc::from(m.to_vec()));
                        (
                            NamedOperation {
                                modify,
                                ..o.clone()
                            },
                            *w,
                        )
                    })
                    .collect(),
            ),
        }
    }

    /// Whether the run phase inserts (the mix holds only kinds of positive proportion).
    pub fn runs_inserts(&self) -> bool {
        self.mix.iter().any(|(k, _)| *k == OpKind::Insert)
    }

    /// The key numbers the run phase's inserts have taken so far (warm-up included, failed inserts
    /// too): the next run of the same data starts at the end of this range.
    pub fn transaction_insert_keys(&self) -> Range<u64> {
        self.transaction_insert_start..self.insert_sequence.issued()
    }

    /// The key numbers of the load phase, shared by the load workers.
    pub fn load_keys(&self) -> LoadKeys {
        LoadKeys {
            next: AtomicU64::new(self.insert_start),
            end: self.insert_start + self.insert_count,
        }
    }

    /// Mean key length in bytes over the loaded key space (exact for up to 10,000 keys, sampled above).
    pub fn mean_key_bytes(&self) -> f64 {
        let n = self.insert_count.min(10_000);
        let step = (self.insert_count / n).max(1);
        let total: usize = (0..n)
            .map(|i| self.keys.key_len(self.insert_start + i * step))
            .sum();
        total as f64 / n as f64
    }

    /// Mean bytes of field values in one record (all fields; typed fields in binary form).
    pub fn mean_record_bytes(&self) -> f64 {
        if let Some(r) = &self.record {
            return r.mean_bytes();
        }
        let per_field = match &self.field_length {
            FieldLength::Constant(n) => *n as f64,
            FieldLength::Uniform(_) | FieldLength::Zipfian(_) | FieldLength::LogNormal { .. } => {
                let mut fl = self.field_length.clone();
                let mut rng = WorkerRng::seed_from_u64(0);
                (0..10_000).map(|_| fl.next(&mut rng) as f64).sum::<f64>() / 10_000.0
            }
        };
        per_field * self.field_names.len() as f64
    }
}

/// Key numbers of the load phase handed out in batches to the workers that ask.
#[derive(Debug)]
pub struct LoadKeys {
    next: AtomicU64,
    end: u64,
}

impl LoadKeys {
    /// Up to `n` key numbers not yet given to any worker.
    pub fn next_batch(&self, n: u64) -> Option<Range<u64>> {
        let start = self.next.fetch_add(n, Ordering::Relaxed);
        (start < self.end).then(|| start..(start + n).min(self.end))
    }
}

/// One worker's stream of operations.
#[derive(Debug)]
pub struct OperationGenerator {
    rng: WorkerRng,
    /// A declared record's value makers.
    record: Option<crate::columns::RecordValues>,
    pool: ValuePool,
    workload: CoreWorkload,
    key_chooser: KeyChooser,
    field_length: FieldLength,
    scan_length: ScanLength,
    /// The named operations, this generator's own copy: the `Arc`s an operation carries
    /// (modifications) are counted on this worker's cache lines, not on one all workers share.
    /// (An `Option`, taken out while an operation is filled: an empty `Arc` made in its place
    /// would be counted on a static all workers share.)
    named: Option<Box<[(NamedOperation, f64)]>>,
}

impl OperationGenerator {
    pub fn workload(&self) -> &CoreWorkload {
        &self.workload
    }

    /// Fills `op` with the next operation of the run phase.
    pub fn next_operation(&mut self, op: &mut Operation) {
        let named = match self.workload.op_chooser.next(&mut self.rng) {
            Choice::Kind(kind) => {
                op.kind = kind;
                op.measured = kind.into();
                op.expect = None;
                op.modify = None;
                None
            }
            Choice::Named(i) => {
                // Taken out for this call, so that it is read while `self` fills the operation
                // (no count on a shared `Arc` per operation: that cost half the rate on null://).
                let named = self.named.take().expect("a generator's named operations");
                set_named(op, &named, i);
                Some((named, i))
            }
        };
        match &named {
            Some((n, i)) if n[*i].0.kind == OpKind::Sequence => self.fill_sequence(op, n, *i),
            _ => self.fill_operation(op, named.as_ref().map(|(n, i)| &n[*i].0), None),
        }
        if let Some((named, _)) = named {
            self.named = Some(named);
        }
    }

    /// A sequence's steps, each filled as if chosen alone, on one key (drawn as a write's is
    /// when a step writes).
    fn fill_sequence(&mut self, op: &mut Operation, named: &[(NamedOperation, f64)], i: usize) {
        let steps = &named[i].0.sequence;
        op.keynum = self.next_keynum();
        if steps.iter().any(|&j| in_write_partition(named[j].0.kind)) {
            op.keynum = self.workload.in_write_partition(op.keynum);
        }
        self.workload.keys.write_key(op.keynum, &mut op.key);
        op.sequence.resize_with(steps.len(), Operation::default);
        let mut sequence = std::mem::take(&mut op.sequence);
        for (step, &j) in sequence.iter_mut().zip(steps.iter()) {
            set_named(step, named, j);
            self.fill_operation(step, Some(&named[j].0), Some(op.keynum));
        }
        op.sequence = sequence;
    }

    /// `keynum`: the record an operation on one key works on (a sequence's step), else drawn.
    fn fill_operation(
        &mut self,
        op: &mut Operation,
        named: Option<&NamedOperation>,
        keynum: Option<u64>,
    ) {
        let kind = op.kind;
        op.append = false;
        let write_all = self.workload.write_all_fields;
        let set = named.and_then(|n| n.set.as_deref());
        match kind {
            OpKind::Insert => {
                op.keynum = self.workload.insert_sequence.next_value();
                self.workload.keys.write_key(op.keynum, &mut op.key);
                self.fill_values(op, Columns::All);
            }
            _ => {
                op.keynum = match keynum {
                    Some(k) => k,
                    None => self.next_keynum(),
                };
                if keynum.is_none() && in_write_partition(kind) {
                    op.keynum = self.workload.in_write_partition(op.keynum);
                }
                self.workload.keys.write_key(op.keynum, &mut op.key);
                let read_fields = named.and_then(|n| n.read_fields);
                let written = match set {
                    Some(set) => Columns::These(set),
                    None if write_all => Columns::All,
                    None => Columns::OneAtRandom,
                };
                match kind {
                    OpKind::Read => {
                        op.read_fields = read_fields.unwrap_or_else(|| self.read_fields())
                    }
                    OpKind::Update => self.fill_values(op, written),
                    OpKind::Scan => {
                        op.read_fields = read_fields.unwrap_or_else(|| self.read_fields());
                        op.scan_count = match &mut self.scan_length {
                            ScanLength::Uniform(u) => u.next(&mut self.rng) as usize,
                            ScanLength::Zipfian(z) => z.next(&mut self.rng) as usize,
                        };
                    }
                    OpKind::MultiGet => {
                        op.read_fields = read_fields.unwrap_or_else(|| self.read_fields());
                        self.fill_keys(op, named.map_or(0, |n| n.keys));
                    }
                    OpKind::BatchUpdate => {
                        let keynums = self.fill_keys(op, named.map_or(0, |n| n.keys));
                        self.fill_batch(op, &keynums, written);
                    }
                    OpKind::Statement => {
                        let statement = named.and_then(|n| n.statement.as_deref());
                        self.fill_parameters(op, statement.map_or(&[], |s| &s.params[..]));
                    }
                    // The steps share their parameters: the first step's list is theirs.
                    OpKind::Transaction => {
                        let first = named.and_then(|n| n.steps.first());
                        self.fill_parameters(op, first.map_or(&[], |s| &s.params[..]));
                    }
                    // Changes to what it read: every column read unless one is named.
                    OpKind::ReadModifyWrite if op.modify.is_some() => {
                        op.read_fields = read_fields.unwrap_or(FieldSet::All);
                        op.values.clear();
                    }
                    OpKind::ReadModifyWrite => {
                        op.read_fields = read_fields.unwrap_or_else(|| self.read_fields());
                        self.fill_values(op, written);
                        op.append = self.workload.append.is_some();
                    }
                    _ => {}
                }
            }
        }
    }

    /// Fills `op` with the insert of record `keynum` (load phase).
    pub fn load_operation(&mut self, keynum: u64, op: &mut Operation) {
        op.kind = OpKind::Insert;
        op.measured = OpKind::Insert.into();
        op.expect = None;
        op.modify = None;
        op.append = false;
        op.keynum = keynum;
        self.workload.keys.write_key(keynum, &mut op.key);
        self.fill_values(op, Columns::All);
    }

    /// Must follow every run-phase insert, whatever its outcome, so "latest" and the key range move on.
    pub fn acknowledge_insert(&self, keynum: u64) {
        self.workload.insert_sequence.acknowledge(keynum);
    }

    /// With `dataintegrity`, checks values read for `key` against what any write would have stored.
    pub fn verify(&self, key: &str, fields: &Fields) -> Result<(), OpError> {
        if !self.workload.data_integrity {
            return Ok(());
        }
        let len = match self.field_length {
            FieldLength::Constant(n) => n,
            _ => unreachable!("validated at parse time: dataintegrity needs constant lengths"),
        };
        for (idx, value) in fields {
            let name = &self.workload.field_names[*idx];
            if *value != deterministic_value(key, name, len) {
                return Err(OpError::new(
                    FailureClass::Unexpected,
                    format!("{key}.{name} differs from the value written"),
                ));
            }
        }
        Ok(())
    }

    /// A key to read or update. Keys are chosen among the loaded records and the run's
    /// acknowledged inserts as if the inserts followed the records directly; with
    /// `transactioninsertstart` past `recordcount` (a later run, or one client's insert section of a
    /// distributed run) the chosen number is then moved past the gap, so a key between the records
    /// and the inserts, which nobody wrote, is never asked for.
    /// A multi-get's `n` distinct keys, drawn as single operations draw theirs; `key` is the
    /// first. (Checked when the workload is made: `n` is at most the records.)
    fn fill_keys(&mut self, op: &mut Operation, n: usize) -> Vec<u64> {
        let mut keynums: Vec<u64> = Vec::with_capacity(n);
        keynums.push(op.keynum);
        // Bounded: a skewed chooser repeats itself; the records' next keys fill what it does not.
        for _ in 0..n * 100 {
            if keynums.len() == n {
                break;
            }
            let k = self.next_keynum();
            if !keynums.contains(&k) {
                keynums.push(k);
            }
        }
        let mut next = op.keynum;
        while keynums.len() < n {
            next = (next + 1) % self.workload.record_count.max(1);
            if !keynums.contains(&next) {
                keynums.push(next);
            }
        }
        op.keys.resize_with(n, String::new);
        for (key, &k) in op.keys.iter_mut().zip(&keynums) {
            self.workload.keys.write_key(k, key);
        }
        keynums
    }

    /// A batch's keys in key order and their values: each key's, as an update of it would write
    /// them (`op.key` and `op.keynum` are the first key's after).
    fn fill_batch(&mut self, op: &mut Operation, keynums: &[u64], written: Columns<'_>) {
        // In key order: two batches then lock their rows in one order and never deadlock.
        let mut order: Vec<usize> = (0..keynums.len()).collect();
        order.sort_by(|&a, &b| op.keys[a].cmp(&op.keys[b]));
        let keynums: Vec<u64> = order.iter().map(|&i| keynums[i]).collect();
        let mut sorted: Vec<String> = order
            .iter()
            .map(|&i| std::mem::take(&mut op.keys[i]))
            .collect();
        std::mem::swap(&mut op.keys, &mut sorted);
        let keynums = &keynums[..];
        op.batch_values.resize_with(keynums.len(), Fields::new);
        for (i, &k) in keynums.iter().enumerate() {
            op.keynum = k;
            op.key.clone_from(&op.keys[i]);
            std::mem::swap(&mut op.values, &mut op.batch_values[i]);
            self.fill_values(op, written);
            std::mem::swap(&mut op.values, &mut op.batch_values[i]);
        }
        op.keynum = keynums[0];
        op.key.clone_from(&op.keys[0]);
    }

    fn next_keynum(&mut self) -> u64 {
        let seq = &self.workload.insert_sequence;
        let records = self.workload.record_count;
        let gap = self.workload.transaction_insert_start - records;
        let to_key = |k: u64| if k >= records { k + gap } else { k };
        // Bounded retries: with a consistent configuration a key is found in a few draws.
        for _ in 0..1000 {
            let last = seq.last_value().wrapping_sub(gap);
            let k = match &mut self.key_chooser {
                KeyChooser::Exponential(e) => {
                    let back = e.next(&mut self.rng);
                    if back > last {
                        continue;
                    }
                    return to_key(last - back);
                }
                KeyChooser::Uniform(u) => u.next(&mut self.rng),
                KeyChooser::Zipfian(z) => z.next(&mut self.rng),
                KeyChooser::Latest(l) => l.next(&mut self.rng, last),
                KeyChooser::Hotspot(h) => h.next(&mut self.rng),
                KeyChooser::Sequential(s) => s.next(),
            };
            if k <= last {
                return to_key(k);
            }
        }
        seq.last_value()
    }

    fn read_fields(&mut self) -> FieldSet {
        if self.workload.read_all_fields {
            FieldSet::All
        } else {
            FieldSet::One(self.field_chooser_next())
        }
    }

    fn field_chooser_next(&mut self) -> usize {
        self.workload.field_chooser.next(&mut self.rng) as usize
    }

    /// A statement's parameters: the key, or a column's value as the load wrote it for the key.
    fn fill_parameters(&mut self, op: &mut Operation, params: &[crate::statement::Param]) {
        op.values.truncate(params.len());
        while op.values.len() < params.len() {
            op.values.push((0, String::new()));
        }
        for (i, p) in params.iter().enumerate() {
            let (field, value) = &mut op.values[i];
            value.clear();
            match *p {
                crate::statement::Param::Key => {
                    *field = usize::MAX;
                    value.push_str(&op.key);
                }
                crate::statement::Param::Column(c) => {
                    *field = c;
                    let record = self
                        .record
                        .as_mut()
                        .expect("column parameters are checked to have a declared record");
                    let seed = record.record().insert_seed(op.keynum);
                    record.write(c, op.keynum, &op.key, seed, value);
                }
            }
        }
    }

    /// Values for the columns a write sets, reusing `op.values`' strings.
    fn fill_values(&mut self, op: &mut Operation, columns: Columns<'_>) {
        let n = match columns {
            Columns::All => self.workload.field_names.len(),
            Columns::OneAtRandom => 1,
            Columns::These(set) => set.len(),
        };
        op.values.truncate(n);
        while op.values.len() < n {
            op.values.push((0, String::new()));
        }
        // A declared record's insert takes its values from the key's own seed (the same data in
        // every load); other writes from the worker's stream.
        // (No draw for YCSB's record: its stream of operations stays what it was.)
        let record_seed = match (&self.workload.record, op.kind) {
            (Some(r), OpKind::Insert) => r.insert_seed(op.keynum),
            (Some(_), _) => self.rng.next_u64(),
            (None, _) => 0,
        };
        for i in 0..n {
            let idx = match columns {
                Columns::All => i,
                Columns::OneAtRandom => self.field_chooser_next(),
                Columns::These(set) => set[i],
            };
            let len = match (op.kind, &self.workload.append) {
                (OpKind::ReadModifyWrite, Some(Append::Random(n))) => *n,
                (OpKind::ReadModifyWrite, Some(Append::Text(t))) => t.len(),
                _ => self.field_length.next(&mut self.rng),
            };
            let (field, value) = &mut op.values[i];
            *field = idx;
            value.clear();
            if let (OpKind::ReadModifyWrite, Some(Append::Text(t))) =
                (op.kind, &self.workload.append)
            {
                value.push_str(t);
            } else if let Some(record) = &mut self.record {
                record.write(idx, op.keynum, &op.key, record_seed, value);
            } else if self.workload.data_integrity {
                value.push_str(&deterministic_value(
                    &op.key,
                    &self.workload.field_names[idx],
                    len,
                ));
            } else {
                self.pool.push_value(&mut self.rng, len, value);
            }
        }
    }
}

/// Whether an operation of `kind` draws its key from this client's write partition (a sequence:
/// when one of its steps does).
fn in_write_partition(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Update | OpKind::ReadModifyWrite | OpKind::Increment
    )
}

/// An operation's kind, name and expectations as the workload file's operation `i` declares them.
fn set_named(op: &mut Operation, named: &[(NamedOperation, f64)], i: usize) {
    let (o, _) = &named[i];
    op.kind = o.kind;
    op.measured = o.measured;
    op.expect = o.expect;
    op.modify.clone_from(&o.modify);
    op.statement = if o.steps.is_empty() { i } else { o.first_step };
    op.steps = o.steps.len();
    op.transaction = o.transaction;
}

/// What the operation chooser picks: a kind (YCSB's mix) or a named operation.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Choice {
    Kind(OpKind),
    Named(usize),
}

/// The columns a write sets.
#[derive(Clone, Copy)]
enum Columns<'a> {
    All,
    OneAtRandom,
    These(&'a [usize]),
}

/// The record: table, field names (or Lourenco's measurement record) and field lengths.
struct RecordShape {
    table: String,
    names: Arc<[String]>,
    measurement: bool,
    record: Option<crate::columns::Record>,
    length: FieldLength,
    /// `fieldlength`: the longest field.
    max_length: u64,
}

fn record_shape(p: &Properties) -> Result<RecordShape, WorkloadError> {
    let table = p.text(&TABLE).to_string();
    if let Some(fault) = crate::names::table_name_fault(&table) {
        return Err(WorkloadError::invalid("table", &table, fault));
    }
    let field_count = p.integer(&FIELDCOUNT)?;
    if field_count == 0 || field_count > 1000 {
        return Err(WorkloadError::invalid(
            "fieldcount",
            p.text(&FIELDCOUNT),
            "expected 1 to 1000",
        ));
    }
    let prefix = p.text(&FIELDNAMEPREFIX);
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(WorkloadError::invalid(
            "fieldnameprefix",
            prefix,
            "expected letters, digits and '_'",
        ));
    }
    let measurement = p.choice(&RECORDTYPE)? == "measurement";
    let record = match p.given(&COLUMNS) {
        Some(json) if measurement => {
            return Err(WorkloadError::invalid(
                "columns",
                &json.chars().take(40).collect::<String>(),
                "recordtype=measurement has its own fields: give one of them",
            ))
        }
        Some(json) => Some(crate::columns::Record::from_json(
            json,
            p.integer(&VALUESEED)?,
        )?),
        None if measurement => Some(
            crate::columns::Record::new(crate::measurement::columns(), p.integer(&VALUESEED)?)
                .map_err(|e| WorkloadError::Inconsistent(e.to_string()))?,
        ),
        None => None,
    };
    if let Some(r) = record
        .as_ref()
        .filter(|r| r.text_bytes() > MAX_RECORD_BYTES)
    {
        return Err(WorkloadError::invalid(
            "columns",
            &format!("{} columns", r.columns.len()),
            format!(
                "text columns of {} characters in all exceed {MAX_RECORD_BYTES} bytes (64 MiB) per record",
                r.text_bytes()
            ),
        ));
    }
    let field_names: Arc<[String]> = if let Some(r) = &record {
        r.names()
    } else {
        (0..field_count).map(|i| format!("{prefix}{i}")).collect()
    };

    let field_len = p.integer(&FIELDLENGTH)?;
    let min_field_len = p.integer(&MINFIELDLENGTH)?;
    if field_len == 0 || field_len > MAX_FIELD_BYTES {
        return Err(WorkloadError::invalid(
            "fieldlength",
            &field_len.to_string(),
            format!("expected 1 to {MAX_FIELD_BYTES} (16 MiB)"),
        ));
    }
    if field_len.saturating_mul(field_count) > MAX_RECORD_BYTES {
        return Err(WorkloadError::invalid(
            "fieldlength",
            &field_len.to_string(),
            format!("{field_count} fields of {field_len} bytes exceed {MAX_RECORD_BYTES} bytes (64 MiB) per record"),
        ));
    }
    if min_field_len > field_len {
        return Err(WorkloadError::invalid(
            "minfieldlength",
            &min_field_len.to_string(),
            format!("must not exceed fieldlength ({field_len})"),
        ));
    }
    let field_length = match p.choice(&FIELDLENGTHDISTRIBUTION)? {
        "constant" => FieldLength::Constant(field_len as usize),
        "uniform" => FieldLength::Uniform(Uniform::new(min_field_len, field_len)),
        "zipfian" => FieldLength::Zipfian(Zipfian::new(min_field_len, field_len)),
        _ => {
            let median = p
                .number_given(&FIELDLENGTHMEDIAN)?
                .unwrap_or((field_len as f64 / 10.0).max(1.0));
            if !(median >= 1.0 && median <= field_len as f64) {
                return Err(WorkloadError::invalid(
                    "fieldlengthmedian",
                    &median.to_string(),
                    format!("expected 1 to fieldlength ({field_len})"),
                ));
            }
            let sigma = p.number(&FIELDLENGTHSIGMA)?;
            let dist = rand_distr::LogNormal::new(median.ln(), sigma).map_err(|_| {
                WorkloadError::invalid(
                    "fieldlengthsigma",
                    &sigma.to_string(),
                    "expected a non-negative number",
                )
            })?;
            FieldLength::LogNormal {
                dist,
                min: min_field_len as usize,
                max: field_len as usize,
            }
        }
    };

    Ok(RecordShape {
        table,
        names: field_names,
        measurement,
        record,
        length: field_length,
        max_length: field_len,
    })
}

/// The records loaded (`recordcount`, `insertstart`, `insertcount`), the run's length and where its
/// inserts start.
struct KeyRange {
    record_count: u64,
    insert_start: u64,
    insert_count: u64,
    operation_count: u64,
    transaction_insert_start: u64,
    write_partition: (u64, u64),
}

fn key_range(p: &Properties) -> Result<KeyRange, WorkloadError> {
    // YCSB: recordcount 0 (its default) means Integer.MAX_VALUE.
    let mut record_count = p.integer(&RECORDCOUNT)?;
    if record_count == 0 {
        record_count = i32::MAX as u64;
    }
    // Keys are numbered in i64 as YCSB's, and the generators add to the count.
    if record_count > MAX_RECORDS {
        return Err(WorkloadError::invalid(
            "recordcount",
            &record_count.to_string(),
            format!("expected at most {MAX_RECORDS} (2^48)"),
        ));
    }
    let insert_start = p.integer(&INSERTSTART)?;
    if insert_start >= record_count {
        return Err(WorkloadError::invalid(
            "insertstart",
            &insert_start.to_string(),
            format!("must be below recordcount ({record_count})"),
        ));
    }
    let insert_count = p
        .integer_given(&INSERTCOUNT)?
        .unwrap_or(record_count - insert_start);
    // insert_start < record_count: the subtraction cannot wrap where an addition could.
    if insert_count == 0 || insert_count > record_count - insert_start {
        return Err(WorkloadError::invalid(
            "insertcount",
            &insert_count.to_string(),
            format!("insertstart + insertcount must be between 1 and recordcount ({record_count})"),
        ));
    }
    let operation_count = p.integer(&OPERATIONCOUNT)?;
    // YCSB always inserts from recordcount in the run phase, so a second run of the same data
    // inserts keys the first one wrote; this moves the run's inserts past them.
    let transaction_insert_start = p
        .integer_given(&TRANSACTIONINSERTSTART)?
        .unwrap_or(record_count);
    if transaction_insert_start < record_count || transaction_insert_start > i64::MAX as u64 {
        return Err(WorkloadError::invalid(
            "transactioninsertstart",
            &transaction_insert_start.to_string(),
            format!(
                "must be at least recordcount ({record_count}): lower keys are the loaded records"
            ),
        ));
    }

    let partitions = p.integer(&WRITEKEYPARTITIONS)?;
    if partitions == 0 || partitions > record_count {
        return Err(WorkloadError::invalid(
            "writekeypartitions",
            &partitions.to_string(),
            format!(
                "expected 1 to recordcount ({record_count}): each partition needs a loaded key"
            ),
        ));
    }
    let partition = p.integer(&WRITEKEYPARTITION)?;
    if partition >= partitions {
        return Err(WorkloadError::invalid(
            "writekeypartition",
            &partition.to_string(),
            format!("expected 0 to writekeypartitions - 1 ({})", partitions - 1),
        ));
    }

    Ok(KeyRange {
        record_count,
        insert_start,
        insert_count,
        operation_count,
        transaction_insert_start,
        write_partition: (partition, partitions),
    })
}

/// `operations`: a workload file's named operations, checked against the record's fields;
/// refused beside a proportion, which they replace.
fn named_operations(
    p: &Properties,
    fields: &[String],
    types: &[FieldType],
    generated: bool,
) -> Result<Vec<(NamedOperation, f64)>, WorkloadError> {
    let Some(json) = p.given(&OPERATIONS) else {
        return Ok(Vec::new());
    };
    for info in [
        &READPROPORTION,
        &UPDATEPROPORTION,
        &INSERTPROPORTION,
        &SCANPROPORTION,
        &READMODIFYWRITEPROPORTION,
        &DELETEPROPORTION,
    ] {
        if let Some(v) = p.given(info) {
            return Err(WorkloadError::invalid(
                info.name,
                v,
                "the workload's named operations (operations) set the mix: give one of them",
            ));
        }
    }
    crate::named::from_json(json, fields, types, generated)
}

/// The kinds named operations are of, with their summed weights, in YCSB's order.
fn kinds_of(named: &[(NamedOperation, f64)]) -> Vec<(OpKind, f64)> {
    OpKind::ALL
        .iter()
        .filter_map(|&k| {
            let w: f64 = named
                .iter()
                .filter(|(o, _)| o.kind == k)
                .map(|(_, w)| w)
                .sum();
            (w > 0.0).then_some((k, w))
        })
        .collect()
}

/// Operation kinds with a positive proportion, in YCSB's order.
fn operation_mix(p: &Properties) -> Result<Vec<(OpKind, f64)>, WorkloadError> {
    let mut mix = Vec::new();
    for (property, kind) in [
        (&READPROPORTION, OpKind::Read),
        (&UPDATEPROPORTION, OpKind::Update),
        (&INSERTPROPORTION, OpKind::Insert),
        (&SCANPROPORTION, OpKind::Scan),
        (&READMODIFYWRITEPROPORTION, OpKind::ReadModifyWrite),
        (&DELETEPROPORTION, OpKind::Delete),
    ] {
        let share = p.proportion(property)?;
        if share > 0.0 {
            mix.push((kind, share));
        }
    }
    if mix.is_empty() {
        return Err(WorkloadError::invalid(
            "readproportion",
            p.text(&READPROPORTION),
            "all operation proportions are zero (read, update, insert, scan, readmodifywrite, delete)",
        ));
    }
    Ok(mix)
}

/// What a read-modify-write in `readmodifywritemode=append` appends to each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Append {
    /// `appendlength` random characters.
    Random(usize),
    /// `appendtext`, as it is (Dory appended the string "1" to an article: studies.md, section 5).
    Text(Arc<str>),
}

/// `readmodifywritemode=append`: `appendlength` random characters when it is given, else `appendtext`
/// when that is, else 100 random characters.
fn append_of(p: &Properties, data_integrity: bool) -> Result<Option<Append>, WorkloadError> {
    if p.choice(&READMODIFYWRITEMODE)? == "replace" {
        return Ok(None);
    }
    if data_integrity {
        return Err(WorkloadError::invalid(
            "readmodifywritemode",
            "append",
            "dataintegrity=true needs values that are a function of key and field",
        ));
    }
    // `appendlength` given says the size; else the text given (Dory's "1"), else 100 characters.
    if let Some(text) = p
        .given(&APPENDTEXT)
        .filter(|_| p.given(&APPENDLENGTH).is_none())
    {
        if text.is_empty() || text.len() as u64 > MAX_FIELD_BYTES {
            return Err(WorkloadError::invalid(
                "appendtext",
                text,
                format!("expected 1 to {MAX_FIELD_BYTES} bytes of text"),
            ));
        }
        return Ok(Some(Append::Text(text.into())));
    }
    let n = p.integer(&APPENDLENGTH)?;
    if n == 0 || n > MAX_FIELD_BYTES {
        return Err(WorkloadError::invalid(
            "appendlength",
            &n.to_string(),
            format!("expected 1 to {MAX_FIELD_BYTES} (16 MiB)"),
        ));
    }
    Ok(Some(Append::Random(n as usize)))
}

/// Key names: YCSB's `user` + number, hashed or ordered, zero-padded (UUIDs for measurements).
fn key_builder(p: &Properties, measurement: bool) -> Result<KeyBuilder, WorkloadError> {
    let zero_padding = p.integer(&ZEROPADDING)?;
    if zero_padding > 64 {
        return Err(WorkloadError::invalid(
            "zeropadding",
            &zero_padding.to_string(),
            "expected at most 64",
        ));
    }
    let order = match p.choice(&INSERTORDER)? {
        "hashed" => InsertOrder::Hashed,
        "uuid" => InsertOrder::Uuid,
        _ => InsertOrder::Ordered,
    };
    let prefix = p.text(&KEYPREFIX);
    if prefix.is_empty()
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(WorkloadError::invalid(
            "keyprefix",
            prefix,
            "expected letters, digits and '_'",
        ));
    }
    Ok(KeyBuilder {
        order: if measurement {
            InsertOrder::Uuid
        } else {
            order
        },
        zero_padding: zero_padding as usize,
        prefix: prefix.to_string(),
    })
}

/// Which key an operation reads or updates (`requestdistribution` and its parameters).
fn key_chooser(p: &Properties, range: &KeyRange) -> Result<KeyChooser, WorkloadError> {
    let (insert_start, insert_count) = (range.insert_start, range.insert_count);
    let (operation_count, record_count) = (range.operation_count, range.record_count);
    let insert_proportion = p.proportion(&INSERTPROPORTION)?;
    let first = insert_start;
    let last = insert_start + insert_count - 1;
    Ok(match p.choice(&REQUESTDISTRIBUTION)? {
        "uniform" => KeyChooser::Uniform(Uniform::new(first, last)),
        "zipfian" => {
            // YCSB leaves room for keys inserted during the run: twice the expected inserts.
            let expected_new_keys = (operation_count as f64 * insert_proportion * 2.0) as u64;
            KeyChooser::Zipfian(ScrambledZipfian::new(
                first,
                first + insert_count + expected_new_keys,
            ))
        }
        "latest" => KeyChooser::Latest(SkewedLatest::new(record_count.saturating_sub(1))),
        "hotspot" => {
            let data = p.proportion(&HOTSPOTDATAFRACTION)?;
            let opn = p.proportion(&HOTSPOTOPNFRACTION)?;
            KeyChooser::Hotspot(Hotspot::new(first, last, data, opn))
        }
        "sequential" => KeyChooser::Sequential(Sequential::new(first, last)),
        _ => {
            let percentile = p.number(&EXPONENTIAL_PERCENTILE)?;
            if !(percentile > 0.0 && percentile < 100.0) {
                return Err(WorkloadError::invalid(
                    "exponential.percentile",
                    &percentile.to_string(),
                    "expected a number between 0 and 100 (exclusive)",
                ));
            }
            let frac = p.number(&EXPONENTIAL_FRAC)?;
            if frac <= 0.0 {
                return Err(WorkloadError::invalid(
                    "exponential.frac",
                    &frac.to_string(),
                    "expected a positive number",
                ));
            }
            KeyChooser::Exponential(Exponential::new(percentile, record_count as f64 * frac))
        }
    })
}

/// Scan lengths (`minscanlength`..`maxscanlength`, uniform or zipfian).
fn scan_length(p: &Properties) -> Result<ScanLength, WorkloadError> {
    let min_scan = p.integer(&MINSCANLENGTH)?;
    let max_scan = p.integer(&MAXSCANLENGTH)?;
    if min_scan == 0 || min_scan > max_scan {
        return Err(WorkloadError::invalid(
            "minscanlength",
            &min_scan.to_string(),
            format!("expected 1 to maxscanlength ({max_scan})"),
        ));
    }
    Ok(match p.choice(&SCANLENGTHDISTRIBUTION)? {
        "uniform" => ScanLength::Uniform(Uniform::new(min_scan, max_scan)),
        _ => ScanLength::Zipfian(Zipfian::new(min_scan, max_scan)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::builtin_workload;

    fn workload(extra: &[(&str, &str)]) -> CoreWorkload {
        let mut p = Properties::new();
        p.load_str(&builtin_workload("a").unwrap().1, "a").unwrap();
        for (k, v) in extra {
            p.set(k, v, "-p");
        }
        CoreWorkload::from_properties(&p).unwrap()
    }

    #[test]
    fn workloads_that_differ_only_in_their_operations_load_the_same_records() {
        let identity = |name: &str, extra: &[(&str, &str)]| {
            let mut p = Properties::new();
            p.load_str(&builtin_workload(name).unwrap().1, name)
                .unwrap();
            for (k, v) in extra {
                p.set(k, v, "-p");
            }
            loaded_data_identity(&p)
        };
        // Wegert's R, U, I and M; YCSB's a, c and f.
        assert_eq!(identity("R", &[]), identity("M", &[]));
        assert_eq!(identity("I", &[]), identity("U", &[]));
        assert_eq!(identity("a", &[]), identity("c", &[]));
        assert_eq!(identity("a", &[]), identity("f", &[("maxscanlength", "5")]));
        // Record layout, count and key order are the data's.
        assert_ne!(identity("a", &[]), identity("a", &[("fieldcount", "3")]));
        assert_ne!(identity("a", &[]), identity("a", &[("recordcount", "5")]));
        assert_ne!(
            identity("a", &[]),
            identity("a", &[("insertorder", "ordered")])
        );
        assert_ne!(identity("a", &[]), identity("documents", &[]));
        // A key this crate does not know may be a binding's table option: it counts.
        assert_ne!(
            identity("a", &[]),
            identity("a", &[("cassandra.table", "t")])
        );
        // Each property declared once.
        let mut names: Vec<&str> = PROPERTIES.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PROPERTIES.len());
    }

    #[test]
    fn reads_skip_the_keys_between_the_records_and_a_later_insert_section() {
        // Client 1 of a distributed run: records 0..999 shared, its inserts from 5000 (keys
        // 1000..4999 belong to other clients' sections, which it never reads).
        for distribution in ["uniform", "zipfian", "latest", "exponential", "hotspot"] {
            let w = workload(&[
                ("insertproportion", "0.5"),
                ("readproportion", "0.5"),
                ("updateproportion", "0"),
                ("transactioninsertstart", "5000"),
                ("operationcount", "4000"),
                ("requestdistribution", distribution),
            ]);
            let mut g = w.generator(3);
            let mut op = Operation::default();
            let (mut reads, mut inserted) = (0, 0);
            for _ in 0..4000 {
                g.next_operation(&mut op);
                if op.kind == OpKind::Insert {
                    g.acknowledge_insert(op.keynum);
                    inserted += 1;
                    continue;
                }
                reads += 1;
                assert!(
                    op.keynum < 1000 || (5000..5000 + inserted).contains(&op.keynum),
                    "{distribution}: key {} is neither a record nor one of the {inserted} inserts",
                    op.keynum
                );
            }
            assert!(reads > 1000 && inserted > 1000, "{distribution}");
        }
    }

    /// Lost writes from several clients (issue 42): client 3 of 4 updates only key numbers = 3
    /// (mod 4) of the loaded records, reaching each of them (the short last block too), its own
    /// inserts as they are; its reads still range over every record.
    #[test]
    fn a_write_partition_keeps_updates_to_its_residue_and_reads_everywhere() {
        let w = workload(&[
            ("recordcount", "10"),
            ("readproportion", "0.4"),
            ("updateproportion", "0.3"),
            ("readmodifywriteproportion", "0.2"),
            ("insertproportion", "0.1"),
            ("transactioninsertstart", "1000"),
            ("writekeypartitions", "4"),
            ("writekeypartition", "3"),
        ]);
        let mut g = w.generator(5);
        let mut op = Operation::default();
        let (mut written, mut read) = (
            std::collections::BTreeSet::new(),
            std::collections::BTreeSet::new(),
        );
        for _ in 0..5000 {
            g.next_operation(&mut op);
            match op.kind {
                OpKind::Insert => g.acknowledge_insert(op.keynum),
                OpKind::Read => {
                    read.insert(op.keynum);
                }
                _ if op.keynum < 10 => {
                    written.insert(op.keynum);
                }
                _ => assert!(op.keynum >= 1000, "{}", op.keynum),
            }
        }
        assert_eq!(written.into_iter().collect::<Vec<_>>(), [3, 7]);
        assert!(read.iter().filter(|k| **k < 10).count() == 10, "{read:?}");
        // The last block is short: key 9's block (8..12) has no 11, so its writes go to 7.
        let w2 = workload(&[
            ("recordcount", "10"),
            ("writekeypartitions", "4"),
            ("writekeypartition", "2"),
        ]);
        assert_eq!(
            (
                w2.in_write_partition(9),
                w2.in_write_partition(8),
                w2.in_write_partition(1)
            ),
            (6, 6, 2)
        );
        assert_eq!(w2.in_write_partition(12), 12, "an insert of its own");
        for (n, i, named) in [
            ("0", "0", "writekeypartitions"),
            ("11", "0", "writekeypartitions"),
            ("4", "4", "writekeypartition"),
        ] {
            let mut p = Properties::new();
            p.load_str(&builtin_workload("a").unwrap().1, "a").unwrap();
            p.set("recordcount", "10", "-p");
            p.set("writekeypartitions", n, "-p");
            p.set("writekeypartition", i, "-p");
            let Err(e) = CoreWorkload::from_properties(&p) else {
                panic!("{n}, {i}: accepted")
            };
            let e = e.to_string();
            assert!(e.contains(named), "{e}");
        }
    }

    #[test]
    fn an_insert_section_past_the_records_is_refused_even_where_its_end_overflows() {
        let refused = |start: &str, count: &str| {
            let mut p = Properties::new();
            p.load_str(&builtin_workload("a").unwrap().1, "a").unwrap();
            p.set("insertstart", start, "-p");
            p.set("insertcount", count, "-p");
            CoreWorkload::from_properties(&p)
                .err()
                .map(|e| e.to_string())
        };
        // insertstart + insertcount wraps past 2^64 (found by no_panic.rs: it panicked).
        let e = refused("1", "18446744073709551615").expect("refused");
        assert!(e.contains("insertcount"), "{e}");
        assert!(refused("500", "501").is_some());
        assert!(refused("500", "500").is_none());
    }

    #[test]
    fn run_phase_inserts_start_at_transactioninsertstart_and_report_their_range() {
        let fresh = workload(&[
            ("insertproportion", "1"),
            ("readproportion", "0"),
            ("updateproportion", "0"),
        ]);
        let mut g = fresh.generator(1);
        let mut op = Operation::default();
        g.next_operation(&mut op);
        // YCSB's default: the first run-phase insert is record number recordcount.
        assert_eq!(op.keynum, 1000);
        let later = workload(&[
            ("insertproportion", "1"),
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("transactioninsertstart", "1500"),
        ]);
        let mut g = later.generator(1);
        let taken: Vec<u64> = (0..3)
            .map(|_| {
                g.next_operation(&mut op);
                g.acknowledge_insert(op.keynum);
                op.keynum
            })
            .collect();
        assert_eq!(taken, vec![1500, 1501, 1502]);
        assert_eq!(later.transaction_insert_keys(), 1500..1503);
        let mut p = Properties::new();
        p.load_str(&builtin_workload("a").unwrap().1, "a").unwrap();
        p.set("transactioninsertstart", "999", "-p");
        let e = CoreWorkload::from_properties(&p).unwrap_err().to_string();
        assert!(
            e.contains("transactioninsertstart") && e.contains("999"),
            "{e}"
        );
    }

    #[test]
    fn mix_follows_proportions() {
        let w = workload(&[
            ("readproportion", "0.25"),
            ("updateproportion", "0.25"),
            ("deleteproportion", "0.5"),
        ]);
        let mut g = w.generator(1);
        let mut op = Operation::default();
        let mut counts = std::collections::HashMap::new();
        for _ in 0..40_000 {
            g.next_operation(&mut op);
            *counts.entry(op.kind).or_insert(0u32) += 1;
        }
        let share = |k| counts.get(&k).copied().unwrap_or(0) as f64 / 40_000.0;
        assert!((share(OpKind::Read) - 0.25).abs() < 0.02);
        assert!((share(OpKind::Delete) - 0.5).abs() < 0.02);
    }

    #[test]
    fn updates_write_one_field_or_all() {
        let w = workload(&[("readproportion", "0"), ("updateproportion", "1")]);
        let mut op = Operation::default();
        w.generator(2).next_operation(&mut op);
        assert_eq!(op.values.len(), 1);
        assert_eq!(op.values[0].1.len(), 100);
        let w = workload(&[
            ("readproportion", "0"),
            ("updateproportion", "1"),
            ("writeallfields", "true"),
        ]);
        w.generator(2).next_operation(&mut op);
        assert_eq!(op.values.len(), 10);
        assert!(op
            .values
            .iter()
            .enumerate()
            .all(|(i, (f, v))| *f == i && v.len() == 100));
    }

    #[test]
    fn same_seed_same_stream() {
        let w = workload(&[]);
        let (mut g1, mut g2) = (w.generator(42), w.generator(42));
        let (mut a, mut b) = (Operation::default(), Operation::default());
        for _ in 0..1000 {
            g1.next_operation(&mut a);
            g2.next_operation(&mut b);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn keys_stay_within_loaded_range() {
        for dist in [
            "uniform",
            "zipfian",
            "hotspot",
            "sequential",
            "exponential",
            "latest",
        ] {
            let w = workload(&[("requestdistribution", dist), ("recordcount", "500")]);
            let mut g = w.generator(3);
            let mut op = Operation::default();
            for _ in 0..5000 {
                g.next_operation(&mut op);
                assert!(op.keynum < 500, "{dist} chose {}", op.keynum);
                assert_eq!(op.key, w.keys.key(op.keynum));
            }
        }
    }

    #[test]
    fn data_integrity_values_verify_and_tampering_is_detected() {
        let w = workload(&[
            ("dataintegrity", "true"),
            ("readproportion", "0"),
            ("updateproportion", "1"),
            ("writeallfields", "true"),
        ]);
        let mut g = w.generator(4);
        let mut op = Operation::default();
        g.next_operation(&mut op);
        assert!(g.verify(&op.key, &op.values).is_ok());
        op.values[3].1.replace_range(0..1, "#");
        assert_eq!(
            g.verify(&op.key, &op.values).unwrap_err().class,
            FailureClass::Unexpected
        );
    }

    #[test]
    fn bad_values_name_the_property() {
        let mut p = Properties::new();
        p.set("readproportion", "0", "-p");
        p.set("updateproportion", "0", "-p");
        let e = CoreWorkload::from_properties(&p).unwrap_err().to_string();
        assert!(e.contains("all operation proportions are zero"), "{e}");
        for (k, v) in [
            ("requestdistribution", "zipf"),
            ("readproportion", "-0.1"),
            ("fieldcount", "x"),
            ("insertorder", "random"),
        ] {
            let mut p = Properties::new();
            p.set(k, v, "-p");
            let e = CoreWorkload::from_properties(&p).unwrap_err().to_string();
            assert!(e.contains(k) && e.contains(v), "{e}");
        }
    }

    #[test]
    fn load_keys_are_handed_out_once() {
        let w = workload(&[("recordcount", "10")]);
        let lk = w.load_keys();
        assert_eq!(lk.next_batch(4), Some(0..4));
        assert_eq!(lk.next_batch(4), Some(4..8));
        assert_eq!(lk.next_batch(4), Some(8..10));
        assert_eq!(lk.next_batch(4), None);
    }
}
