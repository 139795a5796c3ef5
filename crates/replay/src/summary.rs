//! What a capture holds, read once before anything connects (`scalebench replay CAPTURE
//! --check`): its operations by kind and by command, its sessions, its span and its rate over
//! time, what was not readable and how far its times went backwards. Memory grows with the
//! capture's seconds and sessions, never with its operations.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::{CaptureError, Captured, Request};

/// Operations are counted by second over at most this span (31 days): a time far off (a bad
/// clock, a typo) does not make the counts take gigabytes.
pub const MAX_SECONDS_COUNTED: usize = 31 * 24 * 3600;

/// The most unreadable lines a summary keeps the reasons of.
const KEPT_ERRORS: usize = 5;

/// A capture's contents.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaptureSummary {
    pub operations: u64,
    /// By the binding operation they map onto (`READ`, `UPDATE`, ..., `STATEMENT`, `OTHER`).
    pub by_kind: BTreeMap<String, u64>,
    /// By command (`GET`, `SELECT`, `AUTH`, ...).
    pub by_command: BTreeMap<String, u64>,
    pub sessions: u64,
    /// The first and last operation's times, ns on the capture's clock.
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    /// Operations begun in each second from the first.
    pub per_second: Vec<u64>,
    /// Operations that began before one read earlier (a log written when statements ended).
    pub out_of_order: u64,
    /// The longest step back in time among them, in ns, and the operation (from 1, in the
    /// capture's order) that took it.
    pub max_step_back_ns: i64,
    pub max_step_back_at: u64,
    /// Lines (records) that were not operations of the format, and the first reasons.
    pub unreadable: u64,
    pub first_errors: Vec<String>,
    /// Bytes of the values key-value operations write.
    pub value_bytes: u64,
    /// Operations a binding runs by key ([`crate::operation::by_key`]): what a replay offers.
    pub by_key: u64,
    /// Statements, by their first word (`SELECT`, ...): what a database of their kind runs as
    /// written.
    pub statement_verbs: BTreeMap<String, u64>,
}

impl CaptureSummary {
    /// Its statements.
    pub fn statements(&self) -> u64 {
        self.statement_verbs.values().sum()
    }

    /// Reads `operations` to their end.
    pub fn of(operations: impl Iterator<Item = Result<Captured, CaptureError>>) -> CaptureSummary {
        let mut s = CaptureSummary::default();
        let mut sessions: HashSet<String> = HashSet::new();
        let mut latest = i64::MIN;
        for op in operations {
            match op {
                Ok(c) => {
                    s.count(&c, latest);
                    latest = latest.max(c.at_ns);
                    if !sessions.contains(&c.session) {
                        sessions.insert(c.session);
                    }
                }
                Err(e) => {
                    s.unreadable += 1;
                    if s.first_errors.len() < KEPT_ERRORS {
                        s.first_errors.push(e.to_string());
                    }
                }
            }
        }
        s.sessions = sessions.len() as u64;
        s
    }

    fn count(&mut self, c: &Captured, latest: i64) {
        self.operations += 1;
        self.by_key += u64::from(crate::operation::by_key(&c.request).is_ok());
        *self.by_kind.entry(kind_name(&c.request)).or_default() += 1;
        *self.by_command.entry(c.request.command()).or_default() += 1;
        match &c.request {
            Request::Key { value_bytes, .. } => self.value_bytes += value_bytes,
            Request::Statement { .. } => {
                *self.statement_verbs.entry(c.request.command()).or_default() += 1;
            }
            Request::Other { .. } => {}
        }
        let first = *self.first_ns.get_or_insert(c.at_ns);
        self.last_ns = Some(self.last_ns.map_or(c.at_ns, |l| l.max(c.at_ns)));
        if c.at_ns < latest {
            self.out_of_order += 1;
            if latest - c.at_ns > self.max_step_back_ns {
                self.max_step_back_ns = latest - c.at_ns;
                self.max_step_back_at = self.operations;
            }
        }
        // An operation before the first (out of order) counts in the first second; one past the
        // longest span counted (a time far off) is not counted by second.
        let second = (c.at_ns - first).max(0) / 1_000_000_000;
        if let Some(second) = usize::try_from(second)
            .ok()
            .filter(|&s| s < MAX_SECONDS_COUNTED)
        {
            if self.per_second.len() <= second {
                self.per_second.resize(second + 1, 0);
            }
            self.per_second[second] += 1;
        }
    }

    /// Seconds from the first operation to the last.
    pub fn span_s(&self) -> f64 {
        match (self.first_ns, self.last_ns) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => 0.0,
        }
    }

    /// Operations per second over the span (all of them at once: 0).
    pub fn mean_rate(&self) -> f64 {
        let span = self.span_s();
        if span > 0.0 {
            self.operations as f64 / span
        } else {
            0.0
        }
    }

    /// The busiest second's operations.
    pub fn peak_per_second(&self) -> u64 {
        self.per_second.iter().copied().max().unwrap_or(0)
    }

    /// The summary in lines, as `replay --check` prints it.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} operations in {} session(s) over {:.3} s: {:.1} ops/s on average, {} in the busiest second",
            self.operations,
            self.sessions,
            self.span_s(),
            self.mean_rate(),
            self.peak_per_second()
        )];
        let join = |m: &BTreeMap<String, u64>| {
            let mut v: Vec<(&String, &u64)> = m.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            v.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(format!("by operation: {}", join(&self.by_kind)));
        out.push(format!("by command: {}", join(&self.by_command)));
        if self.out_of_order > 0 {
            out.push(format!(
                "{} operation(s) began before one logged earlier, by up to {:.3} ms: they start in the capture's \
                 order, each when its turn comes",
                self.out_of_order,
                self.max_step_back_ns as f64 / 1e6
            ));
        }
        if self.unreadable > 0 {
            out.push(format!(
                "UNREADABLE: {} line(s) are not operations of the format; the first: {}",
                self.unreadable,
                self.first_errors.join("; ")
            ));
        }
        out
    }
}

/// The binding operation a request maps onto, by name.
pub fn kind_name(r: &Request) -> String {
    match r {
        Request::Key { kind, .. } => kind.name().to_string(),
        Request::Statement { .. } => "STATEMENT".into(),
        Request::Other { .. } => "OTHER".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_workload::OpKind;

    fn op(at_ns: i64, session: &str, kind: OpKind) -> Result<Captured, CaptureError> {
        Ok(Captured {
            at_ns,
            session: session.into(),
            request: Request::Key {
                command: "x".into(),
                kind,
                key: "k".into(),
                value_bytes: 10,
            },
        })
    }

    #[test]
    fn counts_sessions_span_rate_and_what_went_backwards() {
        let s = CaptureSummary::of(
            vec![
                op(5_000_000_000, "a", OpKind::Read),
                op(5_500_000_000, "b", OpKind::Update),
                op(5_400_000_000, "a", OpKind::Read),
                Err(CaptureError::line("MONITOR", 4, "cut short")),
                op(7_000_000_000, "c", OpKind::Read),
            ]
            .into_iter(),
        );
        assert_eq!(s.operations, 4);
        assert_eq!(s.sessions, 3);
        assert_eq!(s.span_s(), 2.0);
        assert_eq!(s.mean_rate(), 2.0);
        assert_eq!(s.per_second, [3, 0, 1]);
        assert_eq!(
            (s.out_of_order, s.max_step_back_ns, s.max_step_back_at),
            (1, 100_000_000, 3)
        );
        assert_eq!(s.by_kind.get(OpKind::Read.name()), Some(&3));
        // A time 31 years off is counted, its span said, but not by second.
        let far = CaptureSummary::of(
            vec![
                op(0, "a", OpKind::Read),
                op(1_000_000_000_000_000_000, "a", OpKind::Read),
            ]
            .into_iter(),
        );
        assert_eq!((far.operations, far.per_second.len()), (2, 1));
        assert_eq!(far.span_s(), 1e9);
        assert_eq!(s.unreadable, 1);
        assert_eq!(s.value_bytes, 40);
        assert_eq!(s.by_key, 4);
        let text = s.lines().join("\n");
        assert!(
            text.contains("4 operations in 3 session(s) over 2.000 s"),
            "{text}"
        );
        assert!(
            text.contains("UNREADABLE: 1 line(s)") && text.contains("MONITOR line 4: cut short"),
            "{text}"
        );
    }
}
