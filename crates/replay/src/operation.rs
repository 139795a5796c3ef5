//! Which captured operations a binding runs by key (issue 66 item 3): reads, inserts, updates,
//! deletes and appends (a read-modify-write that appends), on any binding, so that a Redis
//! capture replays on Cassandra or PostgreSQL as well as on Redis. What a binding cannot run so
//! is named, to be counted, never dropped in silence.

use scalebench_workload::OpKind;

use crate::Request;

/// Why a captured operation is not run: the command, and what running it would need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    pub command: String,
    pub why: &'static str,
}

/// A captured operation a binding runs by key: its kind, whether it appends, its key and the
/// bytes it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByKey<'a> {
    pub kind: OpKind,
    pub append: bool,
    pub key: &'a str,
    pub value_bytes: u64,
}

/// `request` as a binding's operation on its key, or what keeps it from being one.
pub fn by_key(request: &Request) -> Result<ByKey<'_>, NotRun> {
    let (command, kind, key, value_bytes) = match request {
        Request::Key {
            command,
            kind,
            key,
            value_bytes,
        } => (command, *kind, key, *value_bytes),
        Request::Statement { .. } => return Err(NotRun {
            command: request.command(),
            why: "a statement runs as written on a database of its kind (postgres for a PostgreSQL csvlog, mysql for a general log), not by key",
        }),
        Request::Other { command } => {
            return Err(NotRun {
                command: command.clone(),
                why: "not a key-value operation",
            })
        }
    };
    let append = match kind {
        OpKind::Read | OpKind::Update | OpKind::Insert | OpKind::Delete => false,
        // APPEND: what was read, with the bytes added.
        OpKind::ReadModifyWrite => true,
        _ => {
            return Err(NotRun {
                command: command.to_uppercase(),
                why: "an increment needs a numeric column, which a replayed record does not have",
            })
        }
    };
    Ok(ByKey {
        kind,
        append,
        key,
        value_bytes,
    })
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
    fn key_value_operations_run_by_key_and_the_rest_is_named() {
        let set = key("SET", OpKind::Update, 130);
        assert_eq!(
            by_key(&set),
            Ok(ByKey {
                kind: OpKind::Update,
                append: false,
                key: "user7",
                value_bytes: 130
            })
        );
        let append = key("APPEND", OpKind::ReadModifyWrite, 3);
        assert!(by_key(&append).unwrap().append);
        let e = by_key(&key("incr", OpKind::Increment, 0)).unwrap_err();
        assert_eq!(e.command, "INCR");
        let e = by_key(&Request::Other {
            command: "PING".into(),
        })
        .unwrap_err();
        assert_eq!(
            (e.command.as_str(), e.why),
            ("PING", "not a key-value operation")
        );
        let s = Request::Statement {
            text: "select 1".into(),
            params: vec![],
        };
        assert_eq!(by_key(&s).unwrap_err().command, "SELECT");
    }
}
