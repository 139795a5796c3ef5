//! A captured key-value operation as a binding runs it (issue 66 item 3): onto any binding's read,
//! insert, update, delete or read-modify-write by key, so that a Redis capture replays on
//! Cassandra or PostgreSQL as well as on Redis. The value written is `value_bytes` of filler in
//! the record's first field (the capture keeps the sizes, not the values). What a binding cannot
//! run through its key-value operations is named, to be counted, never dropped in silence.

use scalebench_workload::{FieldSet, OpKind, Operation};

use crate::Request;

/// Why a captured operation is not run: the command, and what running it would need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    pub command: String,
    pub why: &'static str,
}

/// Printable filler the values are cut from (a value of n bytes is its first n, repeated past it).
const FILLER: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// `request` written into `op` (reused from one operation to the next) as a binding's operation on
/// its key; `Err` names what cannot be run so.
pub fn to_operation(request: &Request, op: &mut Operation) -> Result<(), NotRun> {
    let (command, kind, key, value_bytes) = match request {
        Request::Key {
            command,
            kind,
            key,
            value_bytes,
        } => (command, *kind, key, *value_bytes),
        Request::Statement { .. } => {
            return Err(NotRun {
                command: request.command(),
                why: "a statement runs as written on a database of its kind, not by key",
            })
        }
        Request::Other { command } => {
            return Err(NotRun {
                command: command.clone(),
                why: "not a key-value operation",
            })
        }
    };
    let (kind, append) = match kind {
        OpKind::Read | OpKind::Update | OpKind::Insert | OpKind::Delete => (kind, false),
        // APPEND: what was read, with the bytes added.
        OpKind::ReadModifyWrite => (OpKind::ReadModifyWrite, true),
        _ => {
            return Err(NotRun {
                command: command.to_uppercase(),
                why: "an increment needs a numeric column, which a replayed record does not have",
            })
        }
    };
    op.kind = kind;
    op.measured = kind.into();
    op.append = append;
    op.key.clear();
    op.key.push_str(key);
    op.read_fields = FieldSet::All;
    op.values.clear();
    if matches!(
        kind,
        OpKind::Update | OpKind::Insert | OpKind::ReadModifyWrite
    ) {
        op.values.push((0, filler(value_bytes as usize)));
    }
    Ok(())
}

fn filler(n: usize) -> String {
    let bytes: Vec<u8> = FILLER.iter().copied().cycle().take(n).collect();
    String::from_utf8(bytes).expect("the filler is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(command: &str, kind: OpKind, value_bytes: u64) -> Request {
        Request::Key {
            command: command.into(),
            kind,
            key: "user7".into(),
            value_bytes,
        }
    }

    #[test]
    fn each_key_value_operation_becomes_the_bindings_on_its_key_with_a_value_of_its_size() {
        let mut op = Operation::default();
        to_operation(&key("SET", OpKind::Update, 130), &mut op).unwrap();
        assert_eq!((op.kind, op.key.as_str()), (OpKind::Update, "user7"));
        assert_eq!(op.values.len(), 1);
        assert_eq!((op.values[0].0, op.values[0].1.len()), (0, 130));
        to_operation(&key("GET", OpKind::Read, 0), &mut op).unwrap();
        assert_eq!(
            (op.kind, op.values.len(), op.read_fields),
            (OpKind::Read, 0, FieldSet::All)
        );
        to_operation(&key("APPEND", OpKind::ReadModifyWrite, 3), &mut op).unwrap();
        assert!(op.append && op.values[0].1 == "012");
        to_operation(&key("DEL", OpKind::Delete, 0), &mut op).unwrap();
        assert_eq!(op.kind, OpKind::Delete);
        assert_eq!(op.measured, OpKind::Delete.into());
    }

    #[test]
    fn what_a_binding_cannot_run_by_key_is_named() {
        let mut op = Operation::default();
        let e = to_operation(&key("incr", OpKind::Increment, 0), &mut op).unwrap_err();
        assert_eq!(e.command, "INCR");
        let e = to_operation(
            &Request::Other {
                command: "PING".into(),
            },
            &mut op,
        )
        .unwrap_err();
        assert_eq!(
            (e.command.as_str(), e.why),
            ("PING", "not a key-value operation")
        );
        let s = Request::Statement {
            text: "select 1".into(),
            params: vec![],
        };
        assert_eq!(to_operation(&s, &mut op).unwrap_err().command, "SELECT");
    }
}
