//! Captured production traffic (issue 66): what each database's capture holds, read as a stream of
//! operations in time, one reader per format, so a capture larger than memory is read in constant
//! memory. Each reader yields [`Captured`] operations in the capture's order: when the operation
//! began (ns on the capture's clock), the session (connection) it came from, and the request as
//! the capture has it: a key-value operation (Redis, cache traces) that any binding can run by key,
//! a statement (SQL) that a database of its kind runs as written, or another command, counted and
//! named (never silently dropped).
//!
//! What each format keeps and loses is in docs/replay.md.

pub mod cache_trace;
mod error;
pub mod format;
pub mod limit;
pub mod mysql_general;
pub mod operation;
pub mod postgres_csvlog;
pub mod redis_monitor;
pub mod share;
mod spread;
pub mod summary;

pub use error::CaptureError;
pub use format::{open, CaptureFormat};
pub use summary::CaptureSummary;

use scalebench_workload::OpKind;

/// One operation of a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// When it began, in ns on the capture's clock (the log's own time zone: only differences are
    /// used).
    pub at_ns: i64,
    /// The session (connection) it came from, as the capture names it; empty where the capture
    /// has no sessions (a cache trace without client ids).
    pub session: String,
    pub request: Request,
}

/// What an operation asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A key-value operation: `command` as the capture names it (`GET`, `HSET`, `get`), the
    /// binding operation it maps onto, its key, and the bytes of the value it writes (0 for
    /// reads and deletes).
    Key {
        command: String,
        kind: OpKind,
        key: String,
        value_bytes: u64,
    },
    /// A statement as its client sent it, with the parameters bound to it (prepared statements),
    /// as text, `None` a NULL.
    Statement {
        text: String,
        params: Vec<Option<String>>,
    },
    /// Anything else the capture holds (`PING`, `AUTH`, `SELECT` of a Redis database, a
    /// transaction's `BEGIN`): only its name, never its arguments (a password among them).
    Other { command: String },
}

impl Request {
    /// What the operation is counted and measured under: a key-value operation's command, a
    /// statement's first word (`SELECT`, `INSERT`, ...), another command's name; upper case.
    pub fn command(&self) -> String {
        match self {
            Request::Key { command, .. } | Request::Other { command } => command.to_uppercase(),
            Request::Statement { text, .. } => statement_verb(text),
        }
    }
}

/// A statement's first word in upper case (`WITH` for a common table expression), after any
/// comment and opening parenthesis.
pub fn statement_verb(text: &str) -> String {
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix('(') {
            rest = after.trim_start();
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    if word.is_empty() {
        "(none)".into()
    } else {
        word.to_uppercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_counted_under_its_first_word() {
        assert_eq!(statement_verb("  select 1"), "SELECT");
        assert_eq!(statement_verb("/* app=web */ UPDATE t SET a = 1"), "UPDATE");
        assert_eq!(
            statement_verb("-- note\n(SELECT 1) UNION (SELECT 2)"),
            "SELECT"
        );
        assert_eq!(
            statement_verb("with x as (select 1) select * from x"),
            "WITH"
        );
        assert_eq!(statement_verb(";"), "(none)");
    }
}
