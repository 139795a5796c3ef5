//! The result schema (documented in docs/result-schema.md). Latencies are in microseconds;
//! embedded histograms are HdrHistogram compressed encodings of nanosecond values.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::histogram::LatencySummary;
pub use assemble::Beside;
pub use cost::ClientCost;
pub use recorded::{
    RecordedOp, RecordedPhase, RecordedSchedule, Recording, Series, MAX_ERROR_SAMPLES,
};
pub use space::{MarginalSpace, NodeSpace, Space, SpaceState, RECORD_PARTS};

mod assemble;
pub mod cost;
mod recorded;
pub mod replay;
mod space;
mod validate;

pub const SCHEMA: &str = "scalebench.result.v1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub schema: String,
    pub tool: ToolInfo,
    pub host: HostInfo,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// The command line, passwords redacted.
    pub command: Vec<String>,
    pub parameters: Parameters,
    pub interrupted: bool,
    pub phases: Vec<PhaseResult>,
    /// For merged results: the files merged, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// The local or external cluster the run went to (`--deployment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentInfo>,
    /// One client's own result in a distributed run: which client it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientPart>,
    /// A distributed run's merged result: how it was launched, who is missing, what is doubtful.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<DistributedRun>,
    /// `--threshold` and `--sla FILE`'s `[run]` thresholds, each judged on every phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<crate::thresholds::verdict::ThresholdReport>,
}

/// Client `index` of `clients`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientPart {
    pub index: u32,
    pub clients: u32,
    /// What defines the run this client was part of, field by field (duration or operations,
    /// warm-up, target, the number of clients, the whole run's value of each client share; the
    /// workload is the parameters' `workload_definition`): every client of one run has the same,
    /// and results whose definitions differ are not merged ([`crate::definition::RunDefinition`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub definition: BTreeMap<String, String>,
    /// This client's clock minus its launcher's (ns), estimated at the start as NTP does (the
    /// exchange of least round trip), and the bound of that estimate's error (half that round
    /// trip): clients on this machine's launcher only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockOffset>,
}

/// A clock's offset against a reference, and its uncertainty: the true offset is within
/// `offset_ns` +- `uncertainty_ns`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClockOffset {
    pub offset_ns: i64,
    pub uncertainty_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DistributedRun {
    pub clients: u32,
    /// `local`, `etcd`, ...
    pub launcher: String,
    /// Clients whose result is not in the merge: the run is incomplete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingClient>,
    /// Doubts about the merge (measurement windows that do not overlap, late starts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MissingClient {
    pub index: u32,
    /// What it was to do (its operations, key range or insert section).
    pub share: String,
    /// Why its result is missing (how it ended).
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeploymentInfo {
    pub name: String,
    pub database: String,
    /// Nodes serving when the phase started.
    pub nodes: usize,
    /// The deployment file.
    pub file: String,
    /// Each node's memory limit in bytes (the deployment's `memory`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub git_commit: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Parameters {
    /// Built-in workload letter or property file path.
    pub workload: String,
    /// Database URL, password redacted.
    pub db: String,
    pub binding: String,
    pub threads: usize,
    pub concurrency: usize,
    /// `--pipeline N`: N of each thread's in-flight operations shared one connection of the run
    /// phase (absent: a connection each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u32>,
    /// Offered rate in operations per second (open loop); absent for closed loop. With a
    /// `rate_profile`, its mean over the window (this client's share of it).
    pub target_ops_s: Option<f64>,
    /// The whole run's rate profile (`ramp:from=100,to=1000,over=1m`, ...), when its rate changed;
    /// each client of a distributed run followed its share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<String>,
    /// `constant` or `poisson` (open loop only).
    pub arrival: Option<String>,
    pub duration_s: Option<f64>,
    pub warmup_s: f64,
    pub operation_count: Option<u64>,
    pub seed: u64,
    pub interval_s: f64,
    pub op_timeout_s: Option<f64>,
    /// All effective workload and binding properties (secrets redacted).
    pub properties: BTreeMap<String, String>,
    /// The workload by meaning, as results are merged by it (definition version 2; absent in
    /// results recorded before, which are merged by `properties`' text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_definition: Option<scalebench_workload::definition::WorkloadDefinition>,
}

/// An open loop's arrival process in words (`arrival` as the parameters keep it).
fn arrival_words(arrival: Option<&str>) -> String {
    match arrival.unwrap_or("constant") {
        "constant" => "arrivals evenly spaced".into(),
        "poisson" => "Poisson arrivals".into(),
        other => format!("{other} arrivals"),
    }
}

impl Parameters {
    /// With `--pipeline`, what it did, as reports show it after the operations in flight: `, 10
    /// per connection of the run (4 connections)`; else nothing.
    pub fn pipelined(&self) -> String {
        match self.pipeline {
            Some(n) if n > 1 => format!(
                ", {n} per connection of the run ({} connections)",
                self.threads * self.concurrency / n as usize
            ),
            _ => String::new(),
        }
    }

    /// The load offered, as the text report and the run page show it: `open loop at 500 ops/s
    /// (arrivals evenly spaced)`, `open loop following ramp:from=100,to=1000,over=1m, mean 550.0
    /// ops/s (Poisson arrivals)`, or `closed loop`. The arrival process is named in words: a
    /// staircase "(constant)" read as a constant rate (issue 63).
    pub fn offered_load(&self) -> String {
        let arrival = arrival_words(self.arrival.as_deref());
        match (self.target_ops_s, &self.rate_profile) {
            (Some(t), Some(p)) => format!("open loop following {p}, mean {t:.1} ops/s ({arrival})"),
            (Some(t), None) => format!("open loop at {t} ops/s ({arrival})"),
            (None, _) => "closed loop".into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseResult {
    /// `load` or `run`.
    pub phase: crate::Phase,
    pub open_loop: bool,
    /// Wall-clock time of the start of the measurement window, ms since the Unix epoch.
    pub measurement_start_unix_ms: u64,
    /// Length of the measurement window in seconds (from the global start instant to the stop instant).
    pub duration_s: f64,
    /// Length of each of `intervals`.
    pub interval_s: f64,
    /// The interval length the run recorded at, when `intervals` holds neighbours merged by
    /// histogram to keep the result bounded (more than 600 recorded intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_interval_s: Option<f64>,
    pub ended_by: EndedBy,
    /// How many client processes this result combines (1 unless merged).
    pub clients: u32,
    pub totals: Totals,
    /// By YCSB operation name (READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, DELETE, BATCH-INSERT).
    pub operations: BTreeMap<String, OpResult>,
    /// Failures by class (timeout, not_found, unavailable, conflict, unexpected, other).
    pub errors: BTreeMap<String, ErrorSummary>,
    /// Open loop: how late operations started relative to their schedule.
    pub schedule: Option<ScheduleSummary>,
    pub data: DataSizes,
    /// Operations completed during warm-up (not measured).
    pub warmup_operations: u64,
    pub intervals: Vec<IntervalResult>,
    /// Space on disk of the deployment after this phase (with `--deployment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Space>,
    /// Host and process resources sampled during the phase (client and deployment nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<scalebench_monitor::ResourceSeries>,
    /// `--request-set R`: the run as back-to-back sets of R operations, each timed (Dory's method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sets: Option<RequestSets>,
    /// Series of other hosts (an external deployment's `[external.monitors]`), on their own clocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remote_resources: Vec<scalebench_monitor::RemoteResources>,
    /// Which resource saturated during the measurement window (of all series, local and remote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounded_by: Option<scalebench_monitor::Verdict>,
    /// Run phase: the key numbers its inserts took (warm-up and failed inserts included). A later
    /// run of the same data sets `transactioninsertstart` to `end` so it never reuses them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_keys: Option<KeyRange>,
    /// A client of a distributed run: the common start it was given and how late it began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<CommonStart>,
    /// `--consistency-probe`: how stale the probe's reads were beside this phase
    /// (docs/consistency.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<crate::consistency::ConsistencyResult>,
    /// A probe of a run of several clients: what its readers on each other client measured (the
    /// writer and its own readers are `consistency`, client 0's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consistency_readers: Vec<crate::consistency::ReaderClient>,
    /// `--timing init-to-cleanup`: `duration_s` (and the throughput) run from the clients' init
    /// before their first connection to the end of their cleanup, as YCSB 0.1.4 timed them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_init_to_cleanup: bool,
    /// `--consistency-probe` was asked for and did not run: why (the run failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency_error: Option<String>,
    /// `--verify-writes`: the acknowledged writes of the phase read back after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_writes: Option<LostWrites>,
    /// `--fault`: when the faults injected beside this phase acted (docs/consistency.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultWindow>,
    /// A load phase in an open loop (`load --target`, `loadtarget`, `loadrateprofile`): its own
    /// offered rate in records per second (the run's is the parameters').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_pace: Option<LoadPace>,
    /// What the client spent over the window: CPU, context switches and TCP bytes, and each per
    /// operation (issue 65; none in results from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cost: Option<ClientCost>,
    /// A replay of captured traffic: the capture, its speed, what could not run (issue 66).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::ReplayFigures>,
}

/// What a paced load offered: records per second, constant or a profile's mean.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadPace {
    /// This client's share of the records per second (a profile's mean until the records are in).
    pub target_records_s: f64,
    /// The whole load's rate profile, when its rate changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<String>,
}

/// The faults scalebench injects, by the name the command line and experiment files give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum FaultKind {
    /// Jepsen's pause nemesis: SIGSTOP, then SIGCONT.
    Pause,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Pause => "pause",
        }
    }
}

impl std::str::FromStr for FaultKind {
    type Err = String;
    fn from_str(kind: &str) -> Result<Self, String> {
        match kind {
            "pause" => Ok(FaultKind::Pause),
            other => Err(format!(
                "unknown fault '{other}' (known: pause, Jepsen's pause nemesis)"
            )),
        }
    }
}

impl TryFrom<String> for FaultKind {
    type Error = String;
    fn try_from(kind: String) -> Result<Self, String> {
        kind.parse()
    }
}

impl From<FaultKind> for String {
    fn from(kind: FaultKind) -> String {
        kind.name().to_string()
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One period a fault acted on a node: a pause (SIGSTOP to SIGCONT), on the phase's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// `pause`.
    pub kind: FaultKind,
    /// The node, as the deployment names it (`node2`).
    pub node: String,
    /// Seconds from the start of the measurement window.
    pub start_s: f64,
    pub end_s: f64,
}

/// The start every client of a distributed run agreed on, and this client's skew against it on its
/// own clock (a merged result: the largest of the clients'). Offsets between the machines' clocks
/// are not in it: keeping them small is NTP's job.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct CommonStart {
    /// The start of warm-up (the measurement begins warm-up later), ms since the Unix epoch.
    pub agreed_unix_ms: u64,
    pub skew_ms: f64,
}

/// Key numbers `start..end` (end exclusive).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct KeyRange {
    pub start: u64,
    pub end: u64,
}

impl From<std::ops::Range<u64>> for KeyRange {
    fn from(r: std::ops::Range<u64>) -> Self {
        KeyRange {
            start: r.start,
            end: r.end,
        }
    }
}

impl PhaseResult {
    /// The operations in report order: YCSB's kinds in YCSB's order, then a workload file's named
    /// operations by name.
    pub fn operations_in_order(&self) -> Vec<(&str, &OpResult)> {
        let kinds = scalebench_workload::OpKind::ALL.map(|k| k.name());
        let mut out: Vec<(&str, &OpResult)> = kinds
            .iter()
            .filter_map(|k| self.operations.get_key_value(*k))
            .map(|(k, o)| (k.as_str(), o))
            .collect();
        out.extend(
            self.operations
                .iter()
                .filter(|(k, _)| !kinds.contains(&k.as_str()))
                .map(|(k, o)| (k.as_str(), o)),
        );
        out
    }

    /// A loud line when more than `max_share` of the phase's operations failed: its figures then
    /// describe failures, not the database's capacity.
    pub fn failure_warning(&self, max_share: f64) -> Option<String> {
        let t = &self.totals;
        let share = t.failed_share();
        (share > max_share).then(|| {
            let classes: Vec<String> = self
                .errors
                .iter()
                .map(|(c, e)| format!("{c} {}", e.count))
                .collect();
            format!(
                "WARNING: {:.1}% of the {} phase's operations failed ({} of {}: {}; above {}%); its throughput and latencies count only the operations that succeeded",
                share * 100.0,
                self.phase,
                t.failed,
                t.ok + t.failed,
                classes.join(", "),
                max_share * 100.0
            )
        })
    }
}

impl PhaseResult {
    /// The rate this phase was offered, in its own units (operations per second; records per
    /// second in a load), given the run's `parameters`: `None` in a closed loop.
    pub fn offered_rate(&self, parameters: &Parameters) -> Option<f64> {
        if !self.open_loop {
            return None;
        }
        match (&self.load_pace, self.phase) {
            (Some(p), _) => Some(p.target_records_s),
            (None, crate::Phase::Run) => parameters.target_ops_s,
            (None, crate::Phase::Load) => None,
        }
    }

    /// The load offered, as the text report and the run page show it.
    pub fn offered_load(&self, parameters: &Parameters) -> String {
        match (&self.load_pace, self.open_loop) {
            (_, false) => "closed loop".into(),
            (Some(p), true) => {
                let arrival = arrival_words(parameters.arrival.as_deref());
                let t = p.target_records_s;
                match &p.rate_profile {
                    Some(profile) => {
                        format!("open loop following {profile}, mean {t:.1} records/s ({arrival})")
                    }
                    None => format!("open loop at {t} records/s ({arrival})"),
                }
            }
            (None, true) => parameters.offered_load(),
        }
    }

    /// Completed per second of the window in the offered rate's units: operations, or in a paced
    /// load records (a batch insert carries several).
    fn completed_per_s(&self, completed_operations: u64) -> f64 {
        let t = &self.totals;
        let per_operation = match (&self.load_pace, t.ok) {
            (Some(_), ok) if ok > 0 => t.records as f64 / ok as f64,
            _ => 1.0,
        };
        completed_operations as f64 * per_operation / self.duration_s
    }

    /// Successes in the window per second, in the offered rate's units (see
    /// [`PhaseResult::completed_per_s`]).
    pub fn window_rate(&self) -> f64 {
        if self.duration_s <= 0.0 {
            return 0.0;
        }
        let t = &self.totals;
        self.completed_per_s(t.ok.saturating_sub(t.ok_after_window))
    }

    /// A loud line when an open-loop phase completed operations more than
    /// [`MAX_TARGET_SHORTFALL`] below the offered `target_ops_s`: the schedule was not kept, so the
    /// run did not measure the load asked for.
    pub fn target_shortfall(&self, target_ops_s: Option<f64>) -> Option<String> {
        let target_ops_s = target_ops_s?;
        if !self.open_loop || target_ops_s <= 0.0 || self.duration_s <= 0.0 {
            return None;
        }
        let max_shortfall = MAX_TARGET_SHORTFALL;
        let t = &self.totals;
        let completed_s = self.completed_per_s(t.ok.saturating_sub(t.ok_after_window) + t.failed);
        let unit = if self.load_pace.is_some() {
            "records/s"
        } else {
            "ops/s"
        };
        let short = 1.0 - completed_s / target_ops_s;
        (short > max_shortfall).then(|| {
            // The warm-up's arrivals that had not started are dropped when the window opens: say
            // how many, since they show the warm-up was overloaded too.
            let backlog = match self.schedule.as_ref().map(|s| s.warmup_backlog_dropped) {
                Some(n) if n > 0 => format!(
                    "; {n} arrivals of the warm-up had not started when the measurement began (dropped)"
                ),
                _ => String::new(),
            };
            format!(
                "WARNING: target rate not reached in the {} phase: {} {unit} offered, {:.0} {unit} completed ({:.0}% short){backlog}; the client or the database could not keep the schedule",
                self.phase,
                target_ops_s,
                completed_s,
                short * 100.0
            )
        })
    }
}

/// An open-loop phase is flagged when it completed more than this share below its target rate.
pub const MAX_TARGET_SHORTFALL: f64 = 0.05;

/// Above this share of failed operations a run is flagged: its figures describe a failing
/// database, not the configuration (experiments can set their own, `procedure.max_failed_share`).
pub const DEFAULT_MAX_FAILED_SHARE: f64 = 0.01;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    /// Operations started inside the measurement window.
    pub issued: u64,
    pub ok: u64,
    pub failed: u64,
    /// Issued operations that had not completed when the run was stopped (grace period over).
    pub in_flight_at_stop: u64,
    /// Successful operations completed inside the measurement window, per second of it.
    pub throughput_ops_s: f64,
    /// Of `ok`: operations issued in the window that completed after its end (during the grace
    /// period). Their latencies count; the window's throughput does not.
    #[serde(default)]
    pub ok_after_window: u64,
    /// Records written by the load phase (a batch insert counts its records).
    #[serde(default)]
    pub records: u64,
    /// Load phase: failed inserts that were retried (`core_workload_insertion_retry_limit`).
    #[serde(default)]
    pub retries: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OpResult {
    pub issued: u64,
    pub ok: u64,
    /// By failure class.
    pub failed: BTreeMap<String, u64>,
    /// Successful operations per second of the measurement window.
    pub throughput_ops_s: f64,
    /// Service time of successful operations (from actual start to end).
    pub latency: Option<LatencySummary>,
    /// Open loop: time from the intended start to the end, corrected for coordinated omission.
    pub intended_latency: Option<LatencySummary>,
    /// Service time of failed operations, all classes.
    pub failed_latency: Option<LatencySummary>,
    /// Service time of failed operations, by failure class.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_latency_by_class: BTreeMap<String, LatencySummary>,
}

impl OpResult {
    pub fn failed_total(&self) -> u64 {
        self.failed.values().sum()
    }
}

impl Totals {
    /// Failed operations as a share of all completed ones (0 when none completed).
    pub fn failed_share(&self) -> f64 {
        let done = self.ok + self.failed;
        if done == 0 {
            0.0
        } else {
            self.failed as f64 / done as f64
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ErrorSummary {
    pub count: u64,
    /// Up to 10 distinct driver messages, first seen first.
    pub samples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScheduleSummary {
    /// Operations that started later than `late_threshold_us` after their intended start.
    pub late_operations: u64,
    pub late_threshold_us: f64,
    /// Arrivals scheduled during the warm-up that had not started when the measurement began: dropped,
    /// so the measurement window reports the load from its own schedule (an overloaded warm-up's
    /// backlog is not worked off inside the window). Warm-up warms caches; it queues no work.
    #[serde(default)]
    pub warmup_backlog_dropped: u64,
    /// Distribution of start delays (actual start - intended start).
    pub start_delay: Option<LatencySummary>,
    /// A rate profile that ends at 0 ops/s asked no operation after this many seconds of the
    /// window, before the window ended (absent: it asked operations to the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals_ended_s: Option<f64>,
}

pub use crate::set_threads::SetThreads;

/// Request sets of one run: each set of `size` operations starts when the previous one has completed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RequestSets {
    pub size: u64,
    /// Completed sets in order.
    pub sets: Vec<RequestSet>,
    pub mean_s: f64,
    /// Sample standard deviation of the set times (0 for fewer than two sets).
    pub sd_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// Median absolute difference between consecutive set times: the yardstick of stability in
    /// Dory's method (0 for fewer than two sets).
    pub median_step_s: f64,
    /// Operations of a last set the end of the run cut short (not in `sets`).
    pub unfinished_ops: u64,
    /// How the operations of a set were given to the threads (`--request-set-threads`).
    #[serde(default)]
    pub threads: crate::set_threads::SetThreads,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RequestSet {
    pub index: u64,
    /// Seconds after the measurement start.
    pub start_s: f64,
    pub duration_s: f64,
    pub failed: u64,
    /// A set shared by several clients (its time: until every client finished its share): each
    /// client's time to finish its share, from the set's opening, as the launcher saw it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients_s: Vec<f64>,
}

impl RequestSets {
    pub fn new(size: u64, mut sets: Vec<RequestSet>, unfinished_ops: u64) -> RequestSets {
        sets.sort_by_key(|s| s.index);
        let times: Vec<f64> = sets.iter().map(|s| s.duration_s).collect();
        let mean_s = scalebench_stats::mean(&times);
        let sd_s = scalebench_stats::sd(&times);
        let median_step_s =
            scalebench_stats::median(times.windows(2).map(|w| (w[1] - w[0]).abs()).collect());
        RequestSets {
            size,
            mean_s,
            sd_s,
            min_s: if times.is_empty() {
                0.0
            } else {
                times.iter().copied().fold(f64::INFINITY, f64::min)
            },
            max_s: times.iter().copied().fold(0.0, f64::max),
            median_step_s,
            unfinished_ops,
            sets,
            threads: crate::set_threads::SetThreads::Shared,
        }
    }
}

#[cfg(test)]
mod request_set_tests {
    use super::*;

    #[test]
    fn set_statistics_match_hand_computed_values() {
        let sets = [3.0, 1.0, 2.0, 6.0]
            .iter()
            .enumerate()
            .map(|(i, d)| RequestSet {
                index: i as u64,
                start_s: i as f64,
                duration_s: *d,
                failed: 0,
                clients_s: Vec::new(),
            })
            .rev()
            .collect();
        let r = RequestSets::new(10, sets, 4);
        assert_eq!(r.sets[0].duration_s, 3.0, "sorted by index");
        assert_eq!(r.mean_s, 3.0);
        // Deviations 0, -2, -1, 3: squares sum to 14, over n - 1 = 3.
        assert!((r.sd_s - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((r.min_s, r.max_s), (1.0, 6.0));
        // Steps |1-3| = 2, |2-1| = 1, |6-2| = 4: median 2.
        assert_eq!(r.median_step_s, 2.0);
        assert_eq!(r.unfinished_ops, 4);
        let empty = RequestSets::new(10, Vec::new(), 0);
        assert_eq!(
            (empty.mean_s, empty.min_s, empty.median_step_s),
            (0.0, 0.0, 0.0)
        );
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DataSizes {
    pub mean_key_bytes: f64,
    /// Bytes of field values in one record.
    pub mean_record_bytes: f64,
    pub field_count: usize,
    /// The records the database held when the phase began, where they are known (an experiment's
    /// run: the records loaded, plus what earlier runs on the same load inserted, less what they
    /// deleted): the data size the figures belong to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_at_start: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IntervalResult {
    /// Seconds from the start of the measurement window to the start of this interval.
    pub start_s: f64,
    pub operations: BTreeMap<String, IntervalOp>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalOp {
    pub ok: u64,
    pub failed: u64,
    /// Failures by class (timeout, not_found, ...), when there were any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_class: BTreeMap<String, u64>,
    pub ops_s: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
    /// Service-time histogram of successful operations completed in the interval.
    pub histogram: Option<String>,
    /// Open loop: p99 from the intended start, and its histogram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_histogram: Option<String>,
}

/// Acknowledged writes read back after a phase (`--verify-writes`; docs/operations.md). Each key
/// read back falls in one class, as Jepsen's set checker classes elements: `checked` = ok +
/// `lost` + `unexpected` + `recovered` + `in_doubt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LostWrites {
    /// Keys written during the phase and read back (`unreadable` ones are not).
    pub checked: u64,
    /// Keys of each class (defined in `scalebench_exec::written::Class`, and in
    /// docs/operations.md).
    pub lost: u64,
    #[serde(default)]
    pub unexpected: u64,
    #[serde(default)]
    pub recovered: u64,
    pub in_doubt: u64,
    /// Keys the verify pass could not read (after retries): neither lost nor kept.
    #[serde(default)]
    pub unreadable: u64,
    /// Examples of lost and unexpected keys and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<String>,
    /// How long the verify pass took.
    #[serde(default)]
    pub verify_s: f64,
    /// The verify pass could not run (no connection): why; the counts are then zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Keys the pass did not reach: it ended first (`ended` says why). Neither lost nor kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchecked: u64,
    /// Why the pass ended before every key was read: its time limit or a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LostWrites {
    /// The most examples kept.
    pub const SAMPLES: usize = 10;

    /// Adds `other`'s counts to these (keys no other part checked: connections of one pass, or
    /// clients that each wrote keys of their own), and its examples, each after `label`, while
    /// there is room.
    pub fn add_counts(&mut self, other: &LostWrites, label: Option<&str>) {
        self.checked += other.checked;
        self.lost += other.lost;
        self.unexpected += other.unexpected;
        self.recovered += other.recovered;
        self.in_doubt += other.in_doubt;
        self.unreadable += other.unreadable;
        self.unchecked += other.unchecked;
        if self.ended.is_none() {
            self.ended.clone_from(&other.ended);
        }
        for s in &other.samples {
            if self.samples.len() < Self::SAMPLES {
                self.samples.push(match label {
                    Some(l) => format!("{l}: {s}"),
                    None => s.clone(),
                });
            }
        }
    }

    /// Keys that do not hold what they must: lost and unexpected (Jepsen's set checker is valid
    /// when both are empty). What a service level's `lost_writes` counts.
    pub fn failed(&self) -> u64 {
        self.lost + self.unexpected
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("cannot read result file '{path}': {reason}")]
    Read { path: String, reason: String },
    #[error("cannot write result file '{path}': {reason}")]
    Write { path: String, reason: String },
}

/// The largest result file a reader accepts. A result is bounded by construction (at most 600
/// intervals per phase, resource series of at most 720 samples): a few MiB, tens for long runs
/// with many operations.
pub const MAX_RESULT_BYTES: u64 = 128 << 20;

/// The largest count a result may hold: 2^53, the largest integer a JSON reader that uses doubles
/// (JavaScript, pandas) reads exactly; counts of 1024 clients of it still add up in a u64.
pub const MAX_COUNT: u64 = 1 << 53;

/// The longest phase or interval a result may describe: a month (runs are bounded so).
pub(crate) const MAX_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// What ended a phase's measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndedBy {
    /// The run's duration ran out.
    Duration,
    /// The run's operation count was reached.
    Operations,
    /// A load inserted its last record.
    Completed,
    /// Ctrl-C (or a stop request): what was measured up to then is kept.
    Interrupted,
    /// The caller ended an open-ended phase (an elastic run's timeline).
    Finished,
    /// A replay issued the last operation of its capture.
    Replayed,
}

impl EndedBy {
    pub fn name(self) -> &'static str {
        match self {
            EndedBy::Duration => "duration",
            EndedBy::Operations => "operations",
            EndedBy::Completed => "completed",
            EndedBy::Interrupted => "interrupted",
            EndedBy::Finished => "finished",
            EndedBy::Replayed => "replayed",
        }
    }

    /// How the phase ended, for a sentence ("3.000 s measured, {phrase}").
    pub fn phrase(self) -> &'static str {
        match self {
            EndedBy::Duration => "ended when its duration ran out",
            EndedBy::Operations => "ended at its operation count",
            EndedBy::Completed => "ended when the load inserted its last record",
            EndedBy::Interrupted => "interrupted (Ctrl-C): what was measured until then",
            EndedBy::Finished => "ended by its caller (an elastic timeline)",
            EndedBy::Replayed => "ended with the capture's last operation",
        }
    }
}

impl std::fmt::Display for EndedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Compares with the name a result file stores.
impl PartialEq<&str> for EndedBy {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl RunResult {
    /// Reads and checks a result file ([`RunResult::validate`]): numbers that do not add up are
    /// refused, not merged, compared or reported.
    pub fn read(path: &Path) -> Result<RunResult, ResultError> {
        let err = |reason: String| ResultError::Read {
            path: path.display().to_string(),
            reason,
        };
        let text = crate::files::read_bounded(path, MAX_RESULT_BYTES).map_err(err)?;
        Self::from_json(&text).map_err(err)
    }

    /// A result from its JSON text (a file, or a client's result handed back through etcd), checked.
    pub fn from_json(text: &str) -> Result<RunResult, String> {
        let r: RunResult = serde_json::from_str(text).map_err(|e| e.to_string())?;
        r.validate()?;
        Ok(r)
    }
}

/// A phase in which no more than this share of the issued operations succeeded is a failed run.
pub const MIN_SUCCEEDED_SHARE: f64 = 0.5;

impl PhaseResult {
    /// Why this phase counts as failed, if it does: its operations mostly failed or never completed
    /// (stuck in flight at the end), nothing ran, or the consistency probe asked for did not run.
    pub fn failure(&self) -> Option<String> {
        let t = &self.totals;
        if let Some(e) = &self.consistency_error {
            return Some(format!("the consistency probe did not run: {e}"));
        }
        if t.issued == 0 {
            return Some(format!("the {} phase issued no operation", self.phase));
        }
        (t.ok as f64 <= MIN_SUCCEEDED_SHARE * t.issued as f64).then(|| {
            format!(
                "the {} phase completed only {} of {} operations ({} failed, {} never completed)",
                self.phase, t.ok, t.issued, t.failed, t.in_flight_at_stop
            )
        })
    }
}

impl RunResult {
    /// What defines the run it measured: a client's fields and the workload's definition.
    pub fn definition(&self) -> crate::definition::RunDefinition {
        crate::definition::RunDefinition {
            fields: self
                .client
                .as_ref()
                .map(|c| c.definition.clone())
                .unwrap_or_default(),
            workload: self.parameters.workload_definition.clone(),
        }
    }

    /// Why the run failed, if it did (the first failed phase's reason): an interrupted run is not
    /// judged (what it measured is kept, and it exits as interrupted).
    pub fn failure(&self) -> Option<String> {
        if self.interrupted {
            return None;
        }
        self.phases.iter().find_map(PhaseResult::failure)
    }

    /// Writes atomically: a temporary file in the same directory, renamed over the target, so a
    /// reader (or a crash) never sees half a result.
    pub fn write_atomically(&self, path: &Path) -> Result<(), ResultError> {
        use std::io::Write;
        let err = |reason: String| ResultError::Write {
            path: path.display().to_string(),
            reason,
        };
        crate::files::write_atomically(path, |out| {
            serde_json::to_writer_pretty(&mut *out, self)?;
            out.write_all(b"\n")
        })
        .map_err(err)?;
        Ok(())
    }

    /// The phase that summaries show: the run phase if there is one, else the last.
    pub fn main_phase(&self) -> Option<&PhaseResult> {
        self.phases
            .iter()
            .rev()
            .find(|p| p.phase == crate::Phase::Run)
            .or(self.phases.last())
    }
}
