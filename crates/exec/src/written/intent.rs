//! What an operation writes, noted as each write is sent and answered. The notes live in the
//! slot's buffers, not in the operation's future: a write the hard stop abandoned mid-call is
//! still known, and recorded as of unknown outcome.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use scalebench_workload::{FailureClass, FieldType, Fields, OpError};

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    Acknowledged,
    /// Timed out, its connection failed, or no answer came before the hard stop: it may or may
    /// not have been applied.
    InDoubt,
    /// The database refused it (conflict, not found, a failed check before it was sent):
    /// nothing changed.
    Refused,
}

impl WriteOutcome {
    pub fn of<T>(result: &Result<T, OpError>) -> WriteOutcome {
        match result {
            Ok(_) => WriteOutcome::Acknowledged,
            Err(e) => match e.class {
                FailureClass::Conflict | FailureClass::NotFound | FailureClass::Unexpected => {
                    WriteOutcome::Refused
                }
                _ => WriteOutcome::InDoubt,
            },
        }
    }
}

/// What a write does to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Writes every field given; the key exists after it.
    Insert,
    /// Writes the fields given; the key exists after it (a database that updates only existing
    /// records refuses it otherwise, one that creates them creates it).
    Update,
    /// The key and all its fields are absent after it.
    Delete,
}

/// One write of an operation.
#[derive(Debug)]
pub(crate) struct Intent {
    pub key: String,
    pub effect: Effect,
    /// Each field written: its index and the hash of its value's canonical text.
    pub fields: Vec<(u16, u64)>,
    /// `None`: no answer (yet), so of unknown outcome.
    pub outcome: Option<WriteOutcome>,
}

/// The hash a field holds when it is absent (or empty: Cassandra reads a null column as empty
/// text); no value's hash in practice.
pub(crate) const ABSENT: u64 = 0;

/// The hash of `value`, a field of type `t`, by its canonical text (a value the database prints
/// differently is the same value).
pub(crate) fn value_hash(t: Option<FieldType>, value: &str) -> u64 {
    if value.is_empty() {
        return ABSENT;
    }
    let text = match t {
        Some(t) => scalebench_workload::canonical::canonical(t, value),
        None => std::borrow::Cow::Borrowed(value),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    // 0 and 1 stand for absent and present.
    h.finish().max(2)
}

/// An operation's writes, in the order it sent them ([`crate::perform`] notes them; the runner
/// records them in the write log when the operation is over, or at the hard stop).
#[derive(Debug, Default)]
pub(crate) struct Intents {
    /// The field types, to hash by canonical text; `None`: not recording.
    types: Option<Arc<[FieldType]>>,
    /// When the operation began, in the write log's sequence.
    pub start: u64,
    list: Vec<Intent>,
    len: usize,
    /// Inside a transaction from this write on: the answers wait for its commit.
    staged_from: Option<usize>,
}

impl Intents {
    /// Notes writes of fields of these types.
    pub fn recording(types: Arc<[FieldType]>) -> Intents {
        Intents {
            types: Some(types),
            ..Default::default()
        }
    }

    /// A new operation, begun at `start`.
    pub fn begin(&mut self, start: u64) {
        self.start = start;
        self.len = 0;
        self.staged_from = None;
    }

    /// The writes noted since [`Intents::begin`].
    pub fn noted(&self) -> &[Intent] {
        &self.list[..self.len]
    }

    /// Forgets the noted writes (once recorded).
    pub fn clear(&mut self) {
        self.len = 0;
        self.staged_from = None;
    }

    /// Notes a write about to be sent; its index, or `None` when nothing is recorded.
    pub fn write(&mut self, key: &str, effect: Effect, values: &Fields) -> Option<usize> {
        let types = self.types.as_ref()?;
        if self.len == self.list.len() {
            self.list.push(Intent {
                key: String::new(),
                effect,
                fields: Vec::new(),
                outcome: None,
            });
        }
        let w = &mut self.list[self.len];
        w.key.clear();
        w.key.push_str(key);
        w.effect = effect;
        w.outcome = None;
        w.fields.clear();
        if effect != Effect::Delete {
            w.fields.extend(
                values
                    .iter()
                    .map(|(f, v)| (*f as u16, value_hash(types.get(*f).copied(), v))),
            );
        }
        self.len += 1;
        Some(self.len - 1)
    }

    /// The answer to write `noted` (from [`Intents::write`]). Inside a transaction it waits for
    /// the commit ([`Intents::settle`]).
    pub fn answered<T>(&mut self, noted: Option<usize>, result: &Result<T, OpError>) {
        if let Some(i) = noted {
            if self.staged_from.is_none_or(|s| i < s) {
                self.list[i].outcome = Some(WriteOutcome::of(result));
            }
        }
    }

    /// The answer to a batch, writes `from` on: acknowledged together, or each of unknown outcome
    /// when it failed (a batch that is not atomic may have written some of its records).
    pub fn answered_batch<T>(&mut self, from: Option<usize>, result: &Result<T, OpError>) {
        let Some(from) = from else { return };
        let outcome = match result {
            Ok(_) => WriteOutcome::Acknowledged,
            Err(_) => WriteOutcome::InDoubt,
        };
        for w in &mut self.list[from..self.len] {
            w.outcome = Some(outcome);
        }
    }

    /// A transaction begins: the writes noted from now on are answered by its commit.
    pub fn stage(&mut self) {
        if self.types.is_some() {
            self.staged_from = Some(self.len);
        }
    }

    /// The transaction's end: its commit's answer (or the failure that rolled it back) is each
    /// of its writes'.
    pub fn settle<T>(&mut self, result: &Result<T, OpError>) {
        if let Some(from) = self.staged_from.take() {
            let outcome = WriteOutcome::of(result);
            for w in &mut self.list[from..self.len] {
                w.outcome = Some(outcome);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Intents {
        Intents::recording(vec![FieldType::Text { max_len: None }; 3].into())
    }

    #[test]
    fn a_write_without_an_answer_is_of_unknown_outcome_and_a_transaction_answers_at_its_commit() {
        let mut n = recording();
        n.begin(7);
        let v = vec![(0, "a".to_string())];
        let w = n.write("k", Effect::Update, &v);
        assert_eq!(n.noted()[0].outcome, None, "sent, not answered");
        n.answered(w, &Ok::<(), OpError>(()));
        assert_eq!(n.noted()[0].outcome, Some(WriteOutcome::Acknowledged));
        n.stage();
        let staged = n.write("k", Effect::Delete, &Fields::new());
        n.answered(staged, &Ok::<(), OpError>(()));
        assert_eq!(n.noted()[1].outcome, None, "waits for the commit");
        n.settle(&Err::<(), _>(OpError::new(FailureClass::Timeout, "commit")));
        assert_eq!(n.noted()[1].outcome, Some(WriteOutcome::InDoubt));
        assert_eq!(n.noted()[0].outcome, Some(WriteOutcome::Acknowledged));
        assert!(n.noted()[1].fields.is_empty());
        // Nothing is noted when not recording.
        let mut off = Intents::default();
        off.begin(1);
        assert_eq!(off.write("k", Effect::Insert, &v), None);
        assert!(off.noted().is_empty());
    }

    #[test]
    fn a_failed_batch_leaves_each_of_its_writes_in_doubt() {
        let mut n = recording();
        n.begin(1);
        let v = vec![(1, "x".to_string())];
        let first = n.write("a", Effect::Update, &v);
        n.write("b", Effect::Update, &v);
        n.answered_batch(
            first,
            &Err::<(), _>(OpError::new(FailureClass::NotFound, "b")),
        );
        assert!(n
            .noted()
            .iter()
            .all(|w| w.outcome == Some(WriteOutcome::InDoubt)));
    }

    #[test]
    fn values_are_hashed_by_their_canonical_text_and_empty_is_absent() {
        let int = Some(FieldType::Int);
        assert_eq!(value_hash(int, "42"), value_hash(int, "42.0"));
        assert_ne!(value_hash(int, "42"), value_hash(int, "43"));
        assert_eq!(value_hash(None, ""), ABSENT);
        assert!(value_hash(None, "v") > 1);
    }
}
