//! One worker's stream of operations, drawn from a [`CoreWorkload`].

//! YCSB's `CoreWorkload`: properties in, operations out.

use std::sync::Arc;

use rand::{RngCore, SeedableRng};

use crate::generator::WorkerRng;
use crate::named::NamedOperation;
use crate::operation::{FailureClass, FieldSet, Fields, OpError, OpKind, Operation};
use crate::values::{deterministic_value, ValuePool};

use super::reading::{Append, Choice, FieldLength, KeyChooser, ScanLength};
use super::CoreWorkload;
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

/// The columns a write sets.
#[derive(Clone, Copy)]
enum Columns<'a> {
    All,
    OneAtRandom,
    These(&'a [usize]),
}

impl CoreWorkload {
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
}
