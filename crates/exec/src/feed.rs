//! Operations fed from outside the workload, each with its own intended start (a captured
//! traffic's replay, issue 66): a feeder thread reads them ahead and gives each to one slot's
//! bounded queue, every operation of one session to the same slot so that its order is kept (a
//! session's next operation waits for its previous one; the wait is its start delay, recorded).
//! The queues hold at most [`QUEUE`] operations each: memory does not grow with the capture.
//! A full queue (its slot behind schedule) holds the feeder back, and with it the other slots'
//! next operations: they then start late too, and their start delays say so.

use std::sync::Mutex;

use scalebench_workload::{FieldSet, Measured, MeasuredNames, OpKind, Operation};
use tokio::sync::mpsc;

/// Operations queued per slot.
pub const QUEUE: usize = 1024;

/// One fed operation: when it is due, what it does, on which key.
#[derive(Debug, Clone, PartialEq)]
pub struct Fed {
    /// Its intended start, ns after the measurement's start.
    pub at_ns: u64,
    pub kind: OpKind,
    /// A read-modify-write that appends its value to what it read.
    pub append: bool,
    pub key: String,
    /// Bytes the operation writes into the record's first field (0 for reads and deletes).
    pub value_bytes: u32,
    /// A statement run as written instead (`kind` and `key` unused).
    pub statement: Option<Box<FedStatement>>,
}

/// A statement as a capture has it, and the name it is measured under.
#[derive(Debug, Clone, PartialEq)]
pub struct FedStatement {
    pub text: String,
    /// Its parameters in order, as text; `None` a NULL.
    pub params: Vec<Option<String>>,
    pub measured: Measured,
}

/// The slots' queues, each taken once by its slot.
pub struct FeedQueues {
    queues: Vec<Mutex<Option<mpsc::Receiver<Fed>>>>,
    /// The names the fed operations are measured under, when they are not the workload's (a
    /// replay's statements, by their first word).
    names: Option<MeasuredNames>,
}

impl std::fmt::Debug for FeedQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FeedQueues({} slots)", self.queues.len())
    }
}

/// The feeder's end: [`Feeder::send`] blocks while the slot's queue is full.
pub struct Feeder {
    senders: Vec<mpsc::Sender<Fed>>,
}

/// Queues for `slots` slots, and the feeder that fills them.
pub fn feed(slots: usize) -> (FeedQueues, Feeder) {
    let (senders, queues) = (0..slots)
        .map(|_| {
            let (tx, rx) = mpsc::channel(QUEUE);
            (tx, Mutex::new(Some(rx)))
        })
        .unzip();
    (
        FeedQueues {
            queues,
            names: None,
        },
        Feeder { senders },
    )
}

impl FeedQueues {
    /// The fed operations measured under `names` instead of the workload's.
    pub fn with_names(mut self, names: MeasuredNames) -> Self {
        self.names = Some(names);
        self
    }

    /// The names the fed operations are measured under, if not the workload's.
    pub fn names(&self) -> Option<&MeasuredNames> {
        self.names.as_ref()
    }

    pub fn slots(&self) -> usize {
        self.queues.len()
    }

    /// Slot `slot`'s queue (once).
    pub(crate) fn take(&self, slot: usize) -> Option<mpsc::Receiver<Fed>> {
        self.queues.get(slot)?.lock().ok()?.take()
    }
}

impl Feeder {
    /// Gives `op` to slot `slot`, waiting while its queue is full; false when the slot has stopped
    /// (the phase ended: the feeder should stop too).
    pub fn send(&self, slot: usize, op: Fed) -> bool {
        self.senders[slot].blocking_send(op).is_ok()
    }

    pub fn slots(&self) -> usize {
        self.senders.len()
    }
}

/// Printable filler a fed write's value is cut from.
const FILLER: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// `fed` written into the slot's reused operation.
pub(crate) fn fill(fed: &Fed, op: &mut Operation) {
    op.kind = fed.kind;
    op.measured = fed.kind.into();
    op.append = fed.append;
    op.key.clear();
    op.key.push_str(&fed.key);
    op.read_fields = FieldSet::All;
    op.values.clear();
    op.text.clear();
    if let Some(s) = &fed.statement {
        op.kind = OpKind::Statement;
        op.measured = s.measured;
        op.text.push_str(&s.text);
        // A NULL is a parameter number without a value.
        let given = s.params.iter().enumerate();
        op.values
            .extend(given.filter_map(|(i, p)| p.as_ref().map(|v| (i, v.clone()))));
        return;
    }
    if matches!(
        fed.kind,
        OpKind::Update | OpKind::Insert | OpKind::ReadModifyWrite
    ) {
        let n = fed.value_bytes as usize;
        let mut value = String::with_capacity(n);
        while value.len() < n {
            value.push_str(&FILLER[..FILLER.len().min(n - value.len())]);
        }
        op.values.push((0, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fed_write_carries_a_value_of_its_size_on_its_key() {
        let mut op = Operation::default();
        let fed = Fed {
            at_ns: 5,
            kind: OpKind::Update,
            append: false,
            key: "user7".into(),
            value_bytes: 130,
            statement: None,
        };
        fill(&fed, &mut op);
        assert_eq!(
            (op.kind, op.key.as_str(), op.values[0].1.len()),
            (OpKind::Update, "user7", 130)
        );
        fill(
            &Fed {
                kind: OpKind::Read,
                value_bytes: 0,
                ..fed
            },
            &mut op,
        );
        assert!(op.values.is_empty() && op.read_fields == FieldSet::All);
    }

    #[test]
    fn a_fed_statement_carries_its_text_and_parameters_a_null_left_out() {
        let mut op = Operation::default();
        let fed = Fed {
            at_ns: 0,
            kind: OpKind::Read,
            append: false,
            key: String::new(),
            value_bytes: 0,
            statement: Some(Box::new(FedStatement {
                text: "UPDATE t SET a = $1, b = $2 WHERE k = $3".into(),
                params: vec![Some("1".into()), None, Some("k".into())],
                measured: Measured::named(2),
            })),
        };
        fill(&fed, &mut op);
        assert_eq!(op.kind, OpKind::Statement);
        assert_eq!(op.measured, Measured::named(2));
        assert_eq!(op.text, "UPDATE t SET a = $1, b = $2 WHERE k = $3");
        assert_eq!(op.values, vec![(0, "1".to_string()), (2, "k".to_string())]);
        // The next operation by key leaves no statement behind.
        fill(
            &Fed {
                statement: None,
                key: "u".into(),
                ..fed
            },
            &mut op,
        );
        assert!(op.text.is_empty() && op.values.is_empty());
    }

    #[test]
    fn each_slot_takes_its_queue_once_and_a_stopped_slot_stops_the_feeder() {
        let (queues, feeder) = feed(2);
        let mut q0 = queues.take(0).unwrap();
        assert!(queues.take(0).is_none());
        let fed = Fed {
            at_ns: 1,
            kind: OpKind::Read,
            append: false,
            key: "k".into(),
            value_bytes: 0,
            statement: None,
        };
        assert!(feeder.send(0, fed.clone()));
        assert_eq!(q0.try_recv().unwrap(), fed);
        drop(q0);
        assert!(!feeder.send(0, fed));
    }
}
