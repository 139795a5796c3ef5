//! Lost acknowledged writes (`--verify-writes`), counted as Jepsen's set checker counts them.
//!
//! During a run, every write an operation sends is noted ([`intent`]) and, when it is answered
//! (or abandoned at the hard stop, then of unknown outcome), recorded per key ([`record`]): per
//! register of the key (whether it exists, and each field written) a compact record of the
//! writes that may be what it holds now, ordered by sequence numbers taken when an operation
//! starts and when it is over. After the run a pass reads every recorded key back ([`verify`])
//! and puts it in one class ([`classes::Class`]: ok, lost, unexpected, recovered, in doubt).
//! Which operations are followed, and which `--verify-writes` refuses, is [`coverage`]'s.
//! docs/operations.md says all of it in words.

mod classes;
mod coverage;
mod intent;
mod record;
mod verify;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use scalebench_workload::{CoreWorkload, FieldType, Fields};

pub use classes::Class;
pub use coverage::{refusal, unverifiable};
pub use intent::WriteOutcome;
pub(crate) use intent::{Effect, Intents};
pub use verify::VerifyPass;

use record::KeyRecord;

/// Lock stripes: workers of many threads record at once.
const SHARDS: usize = 64;

/// The run's record of writes, shared by its workers.
pub struct WriteLog {
    shards: Vec<Mutex<HashMap<Box<str>, KeyRecord>>>,
    sequence: AtomicU64,
    types: Arc<[FieldType]>,
    names: Arc<[String]>,
}

fn shard_of(key: &str) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() % SHARDS as u64) as usize
}

impl WriteLog {
    /// A record of the writes of a run of `workload` (its field names and types).
    pub fn new(workload: &CoreWorkload) -> WriteLog {
        WriteLog {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            // 0 stands for "none acknowledged".
            sequence: AtomicU64::new(1),
            types: Arc::clone(&workload.field_types),
            names: Arc::clone(&workload.field_names),
        }
    }

    /// The sequence number of an operation starting now.
    pub fn begin(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::SeqCst)
    }

    /// A slot's notes of its operations' writes.
    pub(crate) fn intents(&self) -> Intents {
        Intents::recording(Arc::clone(&self.types))
    }

    /// Records the writes an operation noted, now that it is over (or was abandoned: a write
    /// without an answer is of unknown outcome), and forgets them. A write the database refused
    /// changed nothing and is not kept.
    pub(crate) fn record(&self, intents: &mut Intents) {
        if intents.noted().is_empty() {
            return;
        }
        // Taken once it is over: its writes share it (a later one of the operation overwrites an
        // earlier one of the same field).
        let ack = self.sequence.fetch_add(1, Ordering::SeqCst);
        let start = intents.start;
        for w in intents.noted() {
            let ack = match w.outcome.unwrap_or(WriteOutcome::InDoubt) {
                WriteOutcome::Refused => continue,
                WriteOutcome::InDoubt => None,
                WriteOutcome::Acknowledged => Some(ack),
            };
            let mut shard = self.shards[shard_of(&w.key)]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let record = match shard.get_mut(w.key.as_str()) {
                Some(r) => r,
                None => shard.entry(w.key.as_str().into()).or_default(),
            };
            record.apply(w.effect, &w.fields, start, ack);
        }
        intents.clear();
    }

    /// Keys recorded so far.
    pub fn keys(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    fn recorded_keys(&self) -> Vec<Box<str>> {
        self.shards
            .iter()
            .flat_map(|s| {
                s.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The class of `key` read back as `read` (`None`: not found), and why when lost or
    /// unexpected; `None` for a key never recorded.
    fn judge_key(
        &self,
        judge: &classes::Judge<'_>,
        key: &str,
        read: Option<&Fields>,
    ) -> Option<(Class, Option<String>)> {
        let shard = self.shards[shard_of(key)]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        shard.get(key).map(|record| judge.key(key, record, read))
    }
}

#[cfg(test)]
mod tests;
