//! YCSB's `CoreWorkload`: properties in, operations out. [`reading`] reads and checks the
//! properties, [`operations`] draws one worker's operations from the checked workload.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::SeedableRng;

use crate::generator::{AcknowledgedCounter, Discrete, Uniform, WorkerRng};
use crate::keys::KeyBuilder;
use crate::named::NamedOperation;
use crate::operation::{FieldType, MeasuredNames, OpKind};
use crate::values::ValuePool;
use crate::{Properties, WorkloadError};

mod operations;
mod reading;

pub use operations::OperationGenerator;
use reading::{
    append_of, field_types, key_builder, key_chooser, key_column, key_range, kinds_of,
    named_operations, operation_mix, record_shape, records_fit, scan_length, Choice, FieldLength,
    KeyChooser, ScanLength,
};
pub use reading::{Append, MAX_FIELD_BYTES, MAX_RECORDS, MAX_RECORD_BYTES};

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
        records_fit(&named, fields.record.as_ref(), range.record_count)?;
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

        let field_types = field_types(&fields, &declared_types, &named, append.is_some());
        let key_column = key_column(p, &fields.names)?;
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

    /// The first of its operations that holds its connection over several requests (a transaction
    /// of statements, a sequence in one transaction, a batch: one transaction on SQL databases),
    /// which a connection shared by several operations in flight cannot run (`--pipeline`).
    pub fn holds_its_connection(&self) -> Option<String> {
        self.named
            .iter()
            .map(|(o, _)| o)
            .find(|o| {
                matches!(o.kind, OpKind::Transaction | OpKind::BatchUpdate)
                    || (o.kind == OpKind::Sequence && o.transaction)
            })
            .map(|o| o.name.clone())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::builtin_workload;
    use crate::operation::{FailureClass, Operation};

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
