//! What a replay of captured traffic ran (issue 66): the capture, how fast and how many times
//! over, and what of it could not run on the database's binding, by command.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A replay's figures, beside the phase's measurement of what it ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplayFigures {
    /// The capture file, as given.
    pub capture: String,
    /// Its format (`redis-monitor`, `postgres-csvlog`, ...).
    pub format: String,
    /// How many times faster than captured: each operation is due at its time in the capture,
    /// from the capture's first operation, divided by this.
    pub speed: f64,
    /// Copies of the capture replayed together, each on keys of its own (`--keys xN`).
    pub copies: u32,
    /// Operations of the capture this client read (its share; copies included).
    pub read: u64,
    /// Of them, those its binding ran (the phase's operations).
    pub fed: u64,
    /// Those it could not run, by command: how many, and why.
    pub not_run: BTreeMap<String, NotRun>,
    /// The capture's span, first operation to last, in seconds; the replay's is this / `speed`.
    pub capture_span_s: f64,
    /// Lines of the capture that were not operations of its format.
    pub unreadable: u64,
    /// Operations fed, by the interval of the phase they were due in (`interval_s` wide, from the
    /// measurement start): the offered load's shape, which the completions per interval are
    /// compared with (a capture's rate is not constant).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduled_per_interval: Vec<u64>,
}

/// A command the binding could not run: how many times the capture had it, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NotRun {
    pub count: u64,
    pub why: String,
}

impl ReplayFigures {
    /// The replay of clients that each replayed their share of one capture: the counts add up
    /// (none when a client replayed nothing, or clients replayed different captures or speeds).
    pub fn merge<'a>(
        parts: impl Iterator<Item = Option<&'a ReplayFigures>>,
    ) -> Option<ReplayFigures> {
        let mut merged: Option<ReplayFigures> = None;
        for part in parts {
            let part = part?;
            let Some(m) = &mut merged else {
                merged = Some(part.clone());
                continue;
            };
            if (&m.capture, &m.format, m.speed, m.copies)
                != (&part.capture, &part.format, part.speed, part.copies)
            {
                return None;
            }
            m.read += part.read;
            m.fed += part.fed;
            m.unreadable = m.unreadable.max(part.unreadable);
            m.capture_span_s = m.capture_span_s.max(part.capture_span_s);
            let longer = part.scheduled_per_interval.len();
            if m.scheduled_per_interval.len() < longer {
                m.scheduled_per_interval.resize(longer, 0);
            }
            for (into, n) in m
                .scheduled_per_interval
                .iter_mut()
                .zip(&part.scheduled_per_interval)
            {
                *into += n;
            }
            for (command, n) in &part.not_run {
                let e = m.not_run.entry(command.clone()).or_insert(NotRun {
                    count: 0,
                    why: n.why.clone(),
                });
                e.count += n.count;
            }
        }
        merged
    }

    /// Operations not run.
    pub fn not_run_total(&self) -> u64 {
        self.not_run.values().map(|n| n.count).sum()
    }
}
