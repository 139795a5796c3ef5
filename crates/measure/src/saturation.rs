//! A saturation search's result (`scalebench saturate`): each step's offered load and what it
//! achieved, the knee, and the rule that ended the search. The study's `saturate` makes it; the
//! report renders it.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Offered ops/s (rate search) or threads (thread search).
    pub offered: f64,
    /// Operations completed per second inside the measurement window.
    pub achieved_ops_s: f64,
    /// p99 in µs: from the intended start (open loop) or service time (closed loop).
    pub p99_us: f64,
    pub mean_us: f64,
    pub failed: u64,
}

/// What a saturation search steps up: the offered rate (open loop) or the client threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    Rate,
    Threads,
}

#[derive(Debug, Clone, Serialize)]
pub struct Search {
    pub kind: SearchKind,
    pub steps: Vec<Step>,
    /// Index of the knee in `steps`.
    pub knee: Option<usize>,
    /// The rule that ended the search.
    pub stopped_by: String,
}
