//! What an elastic benchmark measured, as its result file holds it (`scalebench-elastic/1`): the
//! steps with their events, scores and runs, and Dory's table per cluster size. Below the report
//! crate, which draws its page, and the session, which measures it.

use scalebench_measure::RunResult;
use serde::{Deserialize, Serialize};

use crate::impact::EventFigures;
use crate::service_level::Verdict;
use crate::{Events, SizeRow, StepScores};

/// What is done to the cluster under load: a change of its size (Dory's), or one of the
/// operations those who run databases perform under production load. Its one definition, with
/// names, parsing and serde, is the deployment's ([`scalebench_deploy::Operation`]).
pub use scalebench_deploy::Operation as ScaleAction;

pub const SCHEMA: &str = "scalebench-elastic/1";

#[derive(Debug, Serialize, Deserialize)]
pub struct ElasticResult {
    pub schema: String,
    pub command: Vec<String>,
    pub deployment: String,
    /// Operations per request set (R) of the first step, with request sets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_size: Option<u64>,
    /// Runs of each request set that make one point of the timeline (Dory: 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_repeats: Option<u32>,
    /// No load during the transitions (restricted elasticity, as Dory measured Riak).
    pub unloaded: bool,
    /// The offered rate, with an open loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_ops_s: Option<f64>,
    /// Sets in a row that must be stable (X).
    pub stable_sets: u32,
    /// Ctrl-C ended it: the steps are those measured until then.
    pub interrupted: bool,
    /// The clients of the load (`--clients N`: Dory's request sets, threads and records split over
    /// them), absent with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// A client of the load was lost: why; the steps are those measured until then (exit code 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    pub steps: Vec<ElasticStep>,
    /// `--sla FILE`: the service-level file each step's event was judged against, and whether
    /// every one met it (a miss is exit code 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_level_met: Option<bool>,
    /// Dory's performance table, with request sets: the stable state before each step's action and,
    /// with `double`, the final size's; scalability between rows where everything doubled.
    pub sizes: Vec<SizeRow>,
    /// The run that measured the final size's stable state (with `double`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closing_run: Option<RunResult>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ElasticStep {
    pub step: u32,
    pub action: ScaleAction,
    /// Requests in flight: threads x concurrency (T).
    pub in_flight: u64,
    pub records: u64,
    /// Operations per request set (R) in this step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_size: Option<u64>,
    pub nodes_before: usize,
    pub nodes_after: usize,
    /// Nodes added, removed or crashed.
    pub changed_nodes: Vec<String>,
    pub events: Events,
    /// Why the transition has no stability time, when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_stable: Option<String>,
    /// When the baseline did not settle before the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_note: Option<String>,
    pub scores: StepScores,
    /// What the action cost the load: impact factors, recovery, throughput lost, errors,
    /// availability ([`crate::impact`]); absent unloaded or without a baseline interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<EventFigures>,
    /// The event against `--sla`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The run under load, with its request-set timeline (`phases[0].request_sets`); none unloaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunResult>,
}
