//! A saturation search's result (`scalebench saturate`): each step's offered load, what it achieved
//! and how precisely its tail is known, the answer with its interval, and the rule that ended the
//! search. The study's `saturate` makes it; the report renders it.

use serde::{Deserialize, Serialize};

/// The `schema` of a search's result file: `scalebench report` tells it from a run's by it.
/// Version 2 (issue 61): the answer's bracket named as one (`bracket_low_ops_s`,
/// `bracket_high_ops_s`, `resolution`), each step's trend test, each estimate's method.
pub const SCHEMA: &str = "scalebench-saturation/2";

/// Whether `schema` names a search's result this version reads (version 1's fields are read under
/// their new names).
pub fn is_search_schema(schema: &str) -> bool {
    schema == SCHEMA || schema == "scalebench-saturation/1"
}

/// How an estimate's 95% interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// Sectioning (Nakayama 2014): the spread of the percentile over sections of consecutive
    /// intervals, each with enough operations for the percentile, around the whole step's estimate.
    Sectioning,
    /// The distribution-free interval of order statistics (binomial), which assumes independent
    /// operations: used when too few operations make sections for the percentile.
    OrderStatistics,
}

/// A percentile of one step, estimated with its 95% confidence interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// The percentile of the step's whole histogram (every repetition, every operation), in µs.
    pub us: f64,
    /// The 95% interval around it ([`IntervalMethod`]); None when the operations cannot bound
    /// the percentile (too few of them above it). `high_us` None alone: no upper bound.
    pub low_us: Option<f64>,
    pub high_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<IntervalMethod>,
    /// Sections the interval was made from (sectioning).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sections: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One run's test for a trend through its measurement window (open loop): latency rising with
/// time is a queue growing (the offered rate above what was served), completions falling a
/// service slowing down. Mann-Kendall's test on the window's intervals, Sen's slope for its size.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RunTrend {
    /// Intervals tested, and their length.
    pub intervals: u32,
    pub interval_s: f64,
    /// Sen's slope of each interval's mean latency (from the intended start), in ms per second of
    /// the window, and Mann-Kendall's one-sided p-value of a rise.
    pub latency_rise_ms_per_s: f64,
    pub latency_rise_p: f64,
    /// Sen's slope of each interval's completions, in percent of the offered rate per second, and
    /// the one-sided p-value of a fall.
    pub completions_change_pct_per_s: f64,
    pub completions_fall_p: f64,
    /// The run trended: a rise (or a fall) significant at 5% and material (see the search's docs).
    pub trending: bool,
}

impl Estimate {
    /// Half the interval's width over the estimate (None without an interval).
    pub fn relative_half_width(&self) -> Option<f64> {
        Some((self.high_us? - self.low_us?) / 2.0 / self.us.max(1e-9))
    }
}

/// What a step says about the objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepVerdict {
    /// Kept up, and every objective met at 95% (its interval's upper end within it).
    Pass,
    /// Could not keep up, or an objective broken at 95% (its interval's lower end beyond it).
    Fail,
    /// An objective's interval straddles its limit after the last repetition: counted as failed.
    Unsure,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// Offered ops/s (rate search) or threads per client (thread search).
    pub offered: f64,
    /// Operations completed per second inside the measurement window (over its repetitions).
    pub achieved_ops_s: f64,
    /// p99 in µs over every operation: from the intended start (open loop) or service time
    /// (closed loop).
    pub p99_us: f64,
    /// p99 of the service time (actual start to end) over every operation, in µs.
    pub service_p99_us: f64,
    pub mean_us: f64,
    pub failed: u64,
    /// The p99 and p99.9 with their 95% intervals.
    pub p99: Estimate,
    pub p999: Estimate,
    /// Failed over completed operations.
    pub error_rate: f64,
    /// How many runs measured this step (until its percentile was known to the precision asked).
    pub repeats: u32,
    /// Each run's trend test (rate search), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trends: Vec<RunTrend>,
    /// Client processes that loaded it, as one run each repetition.
    pub clients: u32,
    /// The merged "bounded by" verdict of its last repetition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded_by: Option<String>,
    /// The step failed while the database served operations in time once started: the clients
    /// were the bound (their evidence: late starts, the verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<String>,
    /// What the clients spent per operation in its last repetition (issue 65).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cost: Option<crate::result::ClientCost>,
    /// Rate search: against the objective (thread search: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<StepVerdict>,
    /// Why it passed or failed, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// What a saturation search steps up: the offered rate (open loop) or the client threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    Rate,
    Threads,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchEnd {
    /// Bisection closed the bracket to the resolution (rate search).
    Resolved,
    /// The thread search's rule (Wegert) found its knee.
    Knee,
    /// A step failed while a client's resource was saturated: the clients are the bound.
    ClientBound,
    /// `--max-steps` ran out first.
    MaxSteps,
    /// A client left no result of a step: the search ends with what was measured (exit 3).
    Incomplete,
    /// Ctrl-C.
    Interrupted,
}

/// The search's answer: the highest rate that kept up and met the objective, with the bracket the
/// capacity lies in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    /// The highest offered rate that passed (ops/s); None when no step passed.
    pub rate_ops_s: Option<f64>,
    /// The bisection's bracket: the highest rate that passed and the lowest that failed above
    /// it, each step judged at 95%. Not a confidence interval: its width is the search's
    /// `resolution` once it resolved; the capacity lies between its ends unless a step was judged
    /// wrongly (each step's own risk). `bracket_high_ops_s` is None when no step failed for the
    /// database (the answer is then a lower bound).
    #[serde(alias = "ci_low")]
    pub bracket_low_ops_s: Option<f64>,
    #[serde(alias = "ci_high")]
    pub bracket_high_ops_s: Option<f64>,
    /// The bisection's resolution: it stopped when the bracket was narrower than this share of its
    /// lower end (rate search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    pub clients: u32,
    pub ended_by: SearchEnd,
    /// The objective in words ("p99 <= 5 ms, kept up").
    pub objective: String,
    /// The objective's latency limits in µs, for the page's lines (None: not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_limit_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_limit_us: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Search {
    /// [`SCHEMA`].
    pub schema: String,
    pub kind: SearchKind,
    pub answer: Answer,
    pub steps: Vec<Step>,
    /// Index of the knee (the answer's step) in `steps`.
    pub knee: Option<usize>,
    /// The rule that ended the search, in words.
    pub stopped_by: String,
    /// `saturate --replay`: the steps were speed-ups of a capture; the answer as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySpeed>,
}

/// A search over speed-ups of captured traffic (`saturate --replay`): each step replayed the whole
/// capture at `offered / captured_ops_s` times its speed, so the answer says how many times today's
/// traffic fits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplaySpeed {
    /// The capture file, as given.
    pub capture: String,
    /// Its rate as captured: the operations that run by key (copies included) over its span.
    pub captured_ops_s: f64,
    /// Copies replayed together (`--keys xN`).
    pub copies: u32,
    /// The highest speed-up that passed (the answer's rate / `captured_ops_s`).
    pub speed: Option<f64>,
    /// The bisection's bracket, as speed-ups.
    pub bracket_low_speed: Option<f64>,
    pub bracket_high_speed: Option<f64>,
}

impl ReplaySpeed {
    /// The speed-up a step offering `ops_s` replayed the capture at.
    pub fn speed_of(&self, ops_s: f64) -> f64 {
        ops_s / self.captured_ops_s
    }
}
