//! A replay's statements run as written on a database of their kind (a PostgreSQL csvlog on
//! PostgreSQL, a general log on MySQL or MariaDB): each captured session on a connection of its
//! own, since a session's transaction, settings and prepared state are its connection's (two
//! sessions on one connection would run inside each other's transactions), and each statement
//! measured under its first word (`SQL SELECT`, `SQL UPDATE`, ...; past the 32 most frequent,
//! `STATEMENT`).

use std::collections::HashMap;

use scalebench_exec::feed::{Fed, FedStatement};
use scalebench_replay::CaptureSummary;
use scalebench_workload::{Measured, MeasuredNames, OpKind, MAX_NAMED_OPERATIONS};

use crate::error::SessionError;

/// Where a replay's statements run and what they are measured under.
pub struct StatementSlots {
    /// A first word's measured name.
    verbs: HashMap<String, Measured>,
    /// The names of the named slots, in order.
    names: Vec<String>,
    /// Each session's slot, in the order the sessions came.
    sessions: HashMap<String, usize>,
    slots: usize,
}

impl StatementSlots {
    /// For a capture of `summary`, replayed `copies` times over on `slots` connections: at least
    /// one connection per session, or bad input naming how many.
    pub fn new(
        summary: &CaptureSummary,
        copies: u32,
        slots: usize,
    ) -> Result<StatementSlots, SessionError> {
        let sessions = summary.sessions * u64::from(copies);
        if sessions > slots as u64 {
            return Err(SessionError::Usage(format!(
                "the capture's statements come from {sessions} session(s){}: give --threads x --concurrency of {sessions} at least (now {slots}), each session its own connection (its transaction and settings are its connection's)",
                if copies > 1 { format!(" over x{copies} keys") } else { String::new() }
            )));
        }
        let mut by_count: Vec<(&String, &u64)> = summary.statement_verbs.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let names: Vec<String> = by_count
            .iter()
            .take(MAX_NAMED_OPERATIONS)
            .map(|(verb, _)| format!("SQL {verb}"))
            .collect();
        let verbs = by_count
            .iter()
            .take(MAX_NAMED_OPERATIONS)
            .enumerate()
            .map(|(i, (verb, _))| ((*verb).clone(), Measured::named(i)))
            .collect();
        Ok(StatementSlots {
            verbs,
            names,
            sessions: HashMap::new(),
            slots: slots.max(1),
        })
    }

    /// The names the phase measures under: the kinds', then the statements' first words.
    pub fn names(&self) -> MeasuredNames {
        MeasuredNames::new(self.names.iter().map(String::as_str))
    }

    /// The slot (connection) of `session`: a new session takes the next one.
    pub fn slot_of(&mut self, session: &str) -> usize {
        let next = self.sessions.len() % self.slots;
        *self.sessions.entry(session.to_string()).or_insert(next)
    }

    /// A statement fed for `at_ns`, measured under its first word `verb`.
    pub fn fed(&self, at_ns: u64, verb: &str, text: &str, params: &[Option<String>]) -> Fed {
        Fed {
            at_ns,
            kind: OpKind::Statement,
            append: false,
            key: String::new(),
            value_bytes: 0,
            statement: Some(Box::new(FedStatement {
                text: text.to_string(),
                params: params.to_vec(),
                measured: self
                    .verbs
                    .get(verb)
                    .copied()
                    .unwrap_or(OpKind::Statement.into()),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_its_own_connection_and_each_first_word_its_name() {
        let mut summary = CaptureSummary {
            sessions: 3,
            ..Default::default()
        };
        summary.statement_verbs.insert("SELECT".into(), 10);
        summary.statement_verbs.insert("UPDATE".into(), 20);
        let e = StatementSlots::new(&summary, 1, 2)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("3 session(s)") && e.contains("now 2"), "{e}");
        let mut s = StatementSlots::new(&summary, 1, 3).unwrap();
        assert_eq!(
            [
                s.slot_of("a"),
                s.slot_of("b"),
                s.slot_of("a"),
                s.slot_of("c")
            ],
            [0, 1, 0, 2]
        );
        let names = s.names();
        let measured = |verb| match s.fed(0, verb, "x", &[]).statement {
            Some(st) => names.name(st.measured).to_string(),
            None => String::new(),
        };
        assert_eq!(measured("UPDATE"), "SQL UPDATE");
        assert_eq!(measured("SELECT"), "SQL SELECT");
        assert_eq!(measured("VACUUM"), "STATEMENT");
    }
}
