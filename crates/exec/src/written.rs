//! Lost acknowledged writes (`--verify-writes`): during a run, per key written, a compact record of
//! the writes that may be what the key holds now; after it, a pass that reads every such key and
//! counts those missing or older than their last acknowledged write.
//!
//! Per field of a key the record keeps a few 8-byte hashes of written values with their order:
//! each write takes a sequence number when it starts and one when it is acknowledged. An
//! acknowledged write supersedes every acknowledged write that was acknowledged before it started
//! (real-time order: a database that keeps its acknowledgements returns the later one); writes that
//! overlapped it stay possible. A write whose outcome is unknown (timed out, connection lost) stays
//! possible ("in doubt"): it may or may not be there. A write the database refused (conflict, not
//! found) changed nothing and is not kept. At the verify pass a field whose value is none of its
//! possible values, when one of them was acknowledged, is a lost write; a key acknowledged as
//! inserted and not found is one too.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use scalebench_binding::Binding;
use scalebench_measure::result::LostWrites;
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, OpKind, Operation};

/// Writes kept per field; beyond, the field's oldest in-doubt write is dropped and the field is
/// counted in doubt (it can no longer prove a loss).
const KEPT_PER_FIELD: usize = 6;
/// Lock stripes: workers of many threads record at once.
const SHARDS: usize = 64;
/// Keys named in the result as examples of lost writes.
const SAMPLES: usize = 10;
/// Reads of one key the verify pass tries before it gives the key up as unreadable.
const READ_ATTEMPTS: usize = 3;

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    Acknowledged,
    /// Timed out or its connection failed: it may or may not have been applied.
    InDoubt,
    /// The database refused it: nothing changed.
    Refused,
}

impl WriteOutcome {
    pub fn of(result: &Result<(), OpError>) -> WriteOutcome {
        match result {
            Ok(()) => WriteOutcome::Acknowledged,
            Err(e) => match e.class {
                FailureClass::Conflict | FailureClass::NotFound | FailureClass::Unexpected => {
                    WriteOutcome::Refused
                }
                _ => WriteOutcome::InDoubt,
            },
        }
    }
}

/// One write kept: 16 bytes.
#[derive(Debug, Clone, Copy)]
struct Write {
    hash: u64,
    /// The acknowledgement's sequence number; [`IN_DOUBT`] when its outcome is unknown.
    acknowledged: u64,
}

/// No acknowledgement: the write may or may not have been applied.
const IN_DOUBT: u64 = u64::MAX;

impl Write {
    fn in_doubt(&self) -> bool {
        self.acknowledged == IN_DOUBT
    }
}

#[derive(Debug, Default)]
struct FieldRecord {
    field: u16,
    writes: Vec<Write>,
    /// Writes were dropped for room: the field proves nothing lost.
    overflowed: bool,
}

#[derive(Debug, Default)]
struct KeyRecord {
    /// An insert of the key was acknowledged: it must exist.
    inserted: bool,
    fields: Vec<FieldRecord>,
}

/// The run's record of writes, shared by its workers.
pub struct WriteLog {
    shards: Vec<Mutex<HashMap<Box<str>, KeyRecord>>>,
    sequence: AtomicU64,
}

impl Default for WriteLog {
    fn default() -> Self {
        WriteLog {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            sequence: AtomicU64::new(0),
        }
    }
}

fn hash_of(value: &str) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn shard_of(key: &str) -> usize {
    (hash_of(key) % SHARDS as u64) as usize
}

impl WriteLog {
    /// The sequence number of a write starting now.
    pub fn begin(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::SeqCst)
    }

    /// Records a write of `op` (its `written` values) that began at `started` and ended so.
    /// Reads, scans and deletes are not recorded.
    pub fn record(&self, op: &Operation, written: &Fields, started: u64, outcome: WriteOutcome) {
        let insert = match op.kind {
            OpKind::Insert => true,
            OpKind::Update | OpKind::ReadModifyWrite => false,
            _ => return,
        };
        if outcome == WriteOutcome::Refused {
            return;
        }
        let acknowledged = if outcome == WriteOutcome::Acknowledged {
            self.sequence.fetch_add(1, Ordering::SeqCst)
        } else {
            IN_DOUBT
        };
        let mut shard = self.shards[shard_of(&op.key)]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let record = shard.entry(op.key.as_str().into()).or_default();
        record.inserted |= insert && acknowledged != IN_DOUBT;
        for (field, value) in written {
            let field = *field as u16;
            let at = match record.fields.iter().position(|f| f.field == field) {
                Some(i) => i,
                None => {
                    // Room for one at a time: most keys have a field or two written (memory per key
                    // in docs/benchmarks.md, section 17).
                    record.fields.reserve_exact(1);
                    record.fields.push(FieldRecord {
                        field,
                        writes: Vec::with_capacity(1),
                        overflowed: false,
                    });
                    record.fields.len() - 1
                }
            };
            let f = &mut record.fields[at];
            if acknowledged != IN_DOUBT {
                // Acknowledged before this one started: overwritten by it.
                f.writes
                    .retain(|w| w.in_doubt() || w.acknowledged > started);
            }
            if f.writes.len() >= KEPT_PER_FIELD {
                if let Some(i) = f.writes.iter().position(Write::in_doubt) {
                    f.writes.remove(i);
                } else {
                    f.writes.remove(0);
                }
                f.overflowed = true;
            }
            f.writes.push(Write {
                hash: hash_of(value),
                acknowledged,
            });
        }
    }

    /// Keys recorded so far.
    pub fn keys(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    /// Reads every recorded key through `bindings` (one task each, keys dealt round-robin) and
    /// judges it.
    pub async fn verify<B: Binding>(&self, bindings: Vec<B>) -> LostWrites {
        let started = std::time::Instant::now();
        let keys: Vec<Box<str>> = self
            .shards
            .iter()
            .flat_map(|s| {
                s.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        let n = bindings.len().max(1);
        let tasks = bindings.into_iter().enumerate().map(|(i, mut b)| {
            let mine: Vec<&Box<str>> = keys.iter().skip(i).step_by(n).collect();
            async move {
                let mut found = LostWrites::default();
                let mut fields = Fields::new();
                for key in mine {
                    let mut read = Err(OpError::new(FailureClass::Other, "not read"));
                    for _ in 0..READ_ATTEMPTS {
                        read = b.read(key, FieldSet::All, &mut fields).await;
                        if matches!(&read, Ok(()))
                            || matches!(&read, Err(e) if e.class == FailureClass::NotFound)
                        {
                            break;
                        }
                    }
                    self.judge(key, &read, &fields, &mut found);
                }
                found
            }
        });
        let parts = futures::future::join_all(tasks).await;
        let mut all = LostWrites::default();
        for p in parts {
            all.checked += p.checked;
            all.lost += p.lost;
            all.in_doubt += p.in_doubt;
            all.unreadable += p.unreadable;
            for s in p.samples {
                if all.samples.len() < SAMPLES {
                    all.samples.push(s);
                }
            }
        }
        all.verify_s = started.elapsed().as_secs_f64();
        all
    }

    /// Judges one key from what its read returned.
    fn judge(&self, key: &str, read: &Result<(), OpError>, got: &Fields, out: &mut LostWrites) {
        let shard = self.shards[shard_of(key)]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Some(record) = shard.get(key) else {
            return;
        };
        out.checked += 1;
        let doubt = record
            .fields
            .iter()
            .any(|f| f.overflowed || f.writes.iter().any(Write::in_doubt));
        let lost = match read {
            Err(e) if e.class == FailureClass::NotFound => {
                let acknowledged = record.inserted
                    || record
                        .fields
                        .iter()
                        .any(|f| f.writes.iter().any(|w| !w.in_doubt()));
                acknowledged.then(|| "missing".to_string())
            }
            Err(e) => {
                out.unreadable += 1;
                let _ = e;
                return;
            }
            Ok(()) => record.fields.iter().find_map(|f| {
                let value = got
                    .iter()
                    .find(|(i, _)| *i as u16 == f.field)
                    .map(|(_, v)| hash_of(v));
                let possible = |h: u64| f.writes.iter().any(|w| w.hash == h);
                let proven = !f.overflowed && f.writes.iter().any(|w| !w.in_doubt());
                match value {
                    Some(h) if possible(h) => None,
                    _ if !proven => None,
                    Some(_) => Some(format!(
                        "field {} older than its last acknowledged write",
                        f.field
                    )),
                    None => Some(format!("field {} missing", f.field)),
                }
            }),
        };
        match lost {
            Some(why) => {
                out.lost += 1;
                if out.samples.len() < SAMPLES {
                    out.samples.push(format!("{key}: {why}"));
                }
            }
            None if doubt => out.in_doubt += 1,
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(key: &str, field: usize, value: &str) -> (Operation, Fields) {
        let op = Operation {
            kind: OpKind::Update,
            key: key.into(),
            ..Default::default()
        };
        (op, vec![(field, value.to_string())])
    }

    fn judged(
        log: &WriteLog,
        key: &str,
        read: Result<(), OpError>,
        got: &[(usize, &str)],
    ) -> LostWrites {
        let fields: Fields = got.iter().map(|(i, v)| (*i, v.to_string())).collect();
        let mut out = LostWrites::default();
        log.judge(key, &read, &fields, &mut out);
        out
    }

    #[test]
    fn the_last_acknowledged_write_must_be_there() {
        let log = WriteLog::default();
        for v in ["a", "b", "c"] {
            let (op, w) = update("k", 0, v);
            let s = log.begin();
            log.record(&op, &w, s, WriteOutcome::Acknowledged);
        }
        // "a" and "b" were acknowledged before "c" began: only "c" is possible now.
        assert_eq!(judged(&log, "k", Ok(()), &[(0, "c")]).lost, 0);
        let older = judged(&log, "k", Ok(()), &[(0, "b")]);
        assert_eq!((older.checked, older.lost), (1, 1));
        assert!(older.samples[0].contains("older"), "{:?}", older.samples);
    }

    #[test]
    fn overlapping_and_unknown_writes_stay_possible() {
        let log = WriteLog::default();
        let (a, wa) = update("k", 0, "a");
        let (b, wb) = update("k", 0, "b");
        // a and b in flight together: whichever the database applied last may be there.
        let sa = log.begin();
        let sb = log.begin();
        log.record(&a, &wa, sa, WriteOutcome::Acknowledged);
        log.record(&b, &wb, sb, WriteOutcome::Acknowledged);
        assert_eq!(judged(&log, "k", Ok(()), &[(0, "a")]).lost, 0);
        assert_eq!(judged(&log, "k", Ok(()), &[(0, "b")]).lost, 0);
        // A later write timed out: it may or may not be there; the key is in doubt, not lost.
        let (c, wc) = update("k", 0, "c");
        let sc = log.begin();
        log.record(&c, &wc, sc, WriteOutcome::InDoubt);
        let j = judged(&log, "k", Ok(()), &[(0, "c")]);
        assert_eq!((j.lost, j.in_doubt), (0, 1));
        // A refused write changed nothing.
        let (d, wd) = update("k", 0, "d");
        let sd = log.begin();
        log.record(&d, &wd, sd, WriteOutcome::Refused);
        assert_eq!(judged(&log, "k", Ok(()), &[(0, "d")]).lost, 1);
    }

    #[test]
    fn an_acknowledged_insert_must_exist_and_unknown_ones_may_not() {
        let log = WriteLog::default();
        let insert = |key: &str, outcome| {
            let op = Operation {
                kind: OpKind::Insert,
                key: key.into(),
                ..Default::default()
            };
            let s = log.begin();
            log.record(
                &op,
                &vec![(0, "v".to_string()), (1, "w".to_string())],
                s,
                outcome,
            );
        };
        insert("acked", WriteOutcome::Acknowledged);
        insert("unknown", WriteOutcome::InDoubt);
        let gone = || Err(OpError::new(FailureClass::NotFound, "no record"));
        let j = judged(&log, "acked", gone(), &[]);
        assert_eq!(j.lost, 1);
        assert!(j.samples[0].contains("missing"));
        let j = judged(&log, "unknown", gone(), &[]);
        assert_eq!((j.lost, j.in_doubt), (0, 1));
        // A key never written is not checked.
        assert_eq!(judged(&log, "other", gone(), &[]).checked, 0);
        let unread = judged(
            &log,
            "acked",
            Err(OpError::new(FailureClass::Timeout, "slow")),
            &[],
        );
        assert_eq!((unread.unreadable, unread.lost), (1, 0));
    }
}
