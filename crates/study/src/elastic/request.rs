//! What an elastic run is asked to do, as values: the run under load, the cluster's transition, the
//! stability rule and the service-level file it is judged against. `scalebench elastic` parses its
//! arguments into these; experiments build them directly.

use std::path::PathBuf;
use std::time::Duration;

use scalebench_session::request::{parse_duration, RunRequest};
use serde::Serialize;

pub use scalebench_elastic::TimeAxis;

/// Defaults of the elastic options (the command line's help shows them).
pub const DEFAULT_BASELINE: &str = "30s";
pub const DEFAULT_AFTER: &str = "30s";
pub const DEFAULT_STABLE_TIMEOUT: &str = "10m";
pub const DEFAULT_STABLE_SETS: u32 = 5;
pub const DEFAULT_SET_REPEATS: u32 = 10;
pub const DEFAULT_ACTION: &str = "add:1";

pub use scalebench_elastic::result::ScaleAction;

/// The load criterion's threshold of stability.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Dory's rule: the baseline's median step between consecutive points.
    MedianStep,
    /// A share (percent) of the baseline's mean.
    Relative(f64),
}

/// How data in motion is detected (`elastic --motion-check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MotionCheck {
    /// The database's own tools (or an external cluster's is_idle hook).
    Db,
    /// None: the load criterion alone.
    None,
}

/// One elastic benchmark: the run under load and the transition(s) of the cluster.
#[derive(Debug, Clone)]
pub struct ElasticRequest {
    pub run: RunRequest,
    pub action: ScaleAction,
    pub baseline: Duration,
    pub after: Duration,
    pub stable_sets: u32,
    pub criterion: Criterion,
    pub motion_check: MotionCheck,
    pub stable_timeout: Duration,
    pub steps: u32,
    pub no_load: bool,
    pub set_repeats: u32,
    /// The time axis of the elasticity score's areas: seconds, or minutes as Dory's charts.
    pub score_time_axis: scalebench_elastic::TimeAxis,
    pub unloaded: bool,
    /// Where each step's interval logs go (`DIR/<step>/`).
    pub hdr_log: Option<PathBuf>,
    /// `--sla FILE`: each step's event judged against it; a miss is exit code 4.
    pub service_level: Option<ServiceLevelFile>,
    /// Told each step as it ends (the command line prints its summary): the library prints none.
    pub on_step: Option<StepObserver>,
}

/// A caller's view of an elastic run's steps as they end.
#[derive(Clone)]
pub struct StepObserver(
    pub std::sync::Arc<dyn Fn(&scalebench_elastic::result::ElasticStep) + Send + Sync>,
);

impl std::fmt::Debug for StepObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StepObserver")
    }
}

impl ElasticRequest {
    /// `run` under Dory's defaults: add one node, 30 s before and after, 5 stable points of 10
    /// runs of each request set, at most 10 minutes to stabilise, one step.
    pub fn new(run: RunRequest) -> ElasticRequest {
        let default = |d: &str| parse_duration(d).expect("a valid default");
        ElasticRequest {
            run,
            action: parse_action(DEFAULT_ACTION).expect("a valid default"),
            baseline: default(DEFAULT_BASELINE),
            after: default(DEFAULT_AFTER),
            stable_sets: DEFAULT_STABLE_SETS,
            criterion: Criterion::MedianStep,
            motion_check: MotionCheck::Db,
            stable_timeout: default(DEFAULT_STABLE_TIMEOUT),
            steps: 1,
            no_load: false,
            set_repeats: DEFAULT_SET_REPEATS,
            score_time_axis: scalebench_elastic::TimeAxis::Seconds,
            unloaded: false,
            hdr_log: None,
            service_level: None,
            on_step: None,
        }
    }
}

/// A service-level file as read: its path (for the result) and thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceLevelFile {
    pub path: PathBuf,
    pub level: scalebench_elastic::service_level::ServiceLevel,
}

/// Service-level files are small: anything larger is not one.
const MAX_SERVICE_LEVEL_BYTES: u64 = 1 << 20;

/// Reads and checks `--sla FILE`; the error is one line naming the file and the bad value.
pub fn parse_service_level(s: &str) -> Result<ServiceLevelFile, String> {
    let path = PathBuf::from(s);
    let text = scalebench_measure::files::read_bounded(&path, MAX_SERVICE_LEVEL_BYTES)?;
    let level = scalebench_elastic::service_level::ServiceLevel::from_toml(&text)
        .map_err(|why| format!("{s}: {why}"))?;
    Ok(ServiceLevelFile { path, level })
}

/// A scale action as an experiment file writes it (`add:1`, `double`, ...), parsed once when read.
pub use scalebench_deploy::operation_text as action_text;

/// `--action`'s value: the cluster operation's one grammar ([`scalebench_deploy::Operation`]).
pub fn parse_action(s: &str) -> Result<ScaleAction, String> {
    s.parse()
}

pub fn parse_criterion(s: &str) -> Result<Criterion, String> {
    if s == "median-step" {
        return Ok(Criterion::MedianStep);
    }
    s.strip_prefix("relative:")
        .and_then(|p| p.parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p < 100.0)
        .map(Criterion::Relative)
        .ok_or_else(|| format!("'{s}': expected median-step or relative:PCT (0 < PCT < 100)"))
}

pub fn parse_motion_check(s: &str) -> Result<MotionCheck, String> {
    match s {
        "db" => Ok(MotionCheck::Db),
        "none" => Ok(MotionCheck::None),
        _ => Err(format!("'{s}': expected db or none")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn defaults_parse() {
        let r = RunRequest::new("a");
        assert_eq!(r.grace, Duration::from_secs(10));
        let e = ElasticRequest::new(r);
        assert_eq!(e.action, ScaleAction::Add(1));
        assert_eq!(e.stable_timeout, Duration::from_secs(600));
    }
}
