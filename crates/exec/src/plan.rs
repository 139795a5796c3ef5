//! What a phase is asked to do: threads and slots, the arrival process (closed loop, open loop
//! at a target, Poisson), warm-up, duration or operation count, timeouts, and its rendezvous.

use std::sync::Arc;
use std::time::Duration;

use crate::rendezvous::Rendezvous;

pub use scalebench_measure::result::SetThreads;
pub use scalebench_measure::Phase;

/// What a run phase's throughput is divided by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timing {
    /// The measurement window: from the common start after the warm-up to the last operation (or
    /// the deadline).
    #[default]
    Window,
    /// From the clients' init (before their first connection) to the end of their cleanup (buffered
    /// writes flushed), as YCSB 0.1.4 timed each thread: its connects and its last flush count.
    /// Only for runs bounded by an operation count, without a warm-up.
    InitToCleanup,
}

impl Timing {
    pub fn name(self) -> &'static str {
        match self {
            Timing::Window => "window",
            Timing::InitToCleanup => "init-to-cleanup",
        }
    }

    pub fn parse(s: &str) -> Result<Timing, String> {
        match s {
            "window" => Ok(Timing::Window),
            "init-to-cleanup" => Ok(Timing::InitToCleanup),
            _ => Err("expected window or init-to-cleanup".into()),
        }
    }
}

/// How intended start times are spaced in an open-loop run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced, staggered across slots.
    Constant,
    /// Exponentially distributed gaps (a Poisson process per slot).
    Poisson,
}

impl Arrival {
    /// The name `--arrival` takes and results record.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson => "poisson",
        }
    }
}

/// Everything execution needs to know about one phase.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub phase: Phase,
    pub threads: usize,
    /// In-flight operations per thread.
    pub concurrency: usize,
    /// Total offered rate (ops/s) for an open-loop run; `None` for closed loop. With a
    /// `rate_profile`, the profile's mean over the window.
    pub target_ops_s: Option<f64>,
    /// Open loop at a changing rate: the schedule follows it (this client's share of it).
    pub rate_profile: Option<scalebench_workload::rate::RateProfile>,
    pub arrival: Arrival,
    /// Measured run length; `None` to stop by operation count only.
    pub duration: Option<Duration>,
    pub warmup: Duration,
    /// Measured operations (run) or records (load are taken from the workload); `None` for no limit.
    pub operation_count: Option<u64>,
    pub interval: Duration,
    /// Per-operation timeout; `None` leaves operations unbounded until the end-of-run grace.
    pub op_timeout: Option<Duration>,
    /// How long in-flight operations may finish after the stop before they are abandoned.
    pub grace: Duration,
    pub seed: u64,
    /// Records per insert call in the load phase (when the binding batches).
    pub batch_size: usize,
    /// Load phase: retries of a failed insert, and the pause between them.
    pub insert_retries: u32,
    pub insert_retry_interval: Duration,
    /// Run phase, closed loop: operations in back-to-back sets of this many, each set timed and the
    /// next one started only when it has completed (Dory's request sets).
    pub request_set: Option<u64>,
    /// How a set's operations are given to the slots: to whichever is free, or a fixed share each.
    pub set_threads: SetThreads,
    /// Where the timeline (request sets, or else intervals) is published while the run goes on.
    pub timeline_log: Option<crate::timeline::TimelineLog>,
    /// Open loop: how much later than the start the schedule's first arrival comes (a client of a
    /// distributed run is offset so the clients' arrivals interleave).
    pub arrival_offset: Duration,
    /// A client of a distributed run: where it waits for the others and gets the common start.
    pub rendezvous: Option<Arc<dyn Rendezvous>>,
    /// Run phase: what its throughput is divided by.
    pub timing: Timing,
    /// Run phase: record every write and read the written keys back after it
    /// ([`crate::written`]).
    pub verify_writes: bool,
    /// The longest the write check after the run may take (None: [`crate::written::VerifyPass`]'s
    /// default, the run's length and at least a minute); it ends sooner at a signal.
    pub verify_timeout: Option<Duration>,
    /// Run phase: operations fed with their own intended starts (a captured traffic's replay)
    /// instead of the workload's: the phase ends when they are done ([`crate::feed`]).
    pub feed: Option<Arc<crate::feed::FeedQueues>>,
}

/// The warm-up runs at a rate profile's first rate: a profile that starts at 0 ops/s (k6's stages
/// ramp up from 0) would send nothing in it.
pub fn check_profile_warmup(
    profile: &scalebench_workload::rate::RateProfile,
    warmup: Duration,
) -> Result<(), String> {
    if profile.rate_at(0.0) <= 0.0 && !warmup.is_zero() {
        return Err(format!(
            "the rate profile {profile} starts at 0 ops/s: the warm-up runs at its first rate and would send nothing; give --warmup 0s, or start the profile above 0"
        ));
    }
    Ok(())
}

/// Init-to-cleanup timing divides by the client's whole life, so nothing may run beside the measured
/// operations: no warm-up, and an end by operation count (a deadline would cut the work short).
pub fn check_timing(
    timing: Timing,
    duration: Option<Duration>,
    warmup: Duration,
) -> Result<(), String> {
    if timing != Timing::InitToCleanup {
        return Ok(());
    }
    if duration.is_some() {
        return Err("init-to-cleanup timing is for runs bounded by an operation count (--operations N), not by a duration".into());
    }
    if !warmup.is_zero() {
        return Err("init-to-cleanup timing counts the client's whole life, as YCSB 0.1.4 did, which had no warm-up: use --warmup 0s".into());
    }
    Ok(())
}

/// Request sets are timed back to back in a closed loop (Dory's method): with a target rate they
/// would time the schedule, not the database. The one statement of the rule, for the session's
/// check of a request and for execution's of a plan.
pub fn check_request_sets(
    request_set: Option<u64>,
    target_ops_s: Option<f64>,
) -> Result<(), String> {
    match request_set {
        Some(0) => Err("a request set needs at least 1 operation".into()),
        Some(_) if target_ops_s.is_some() => {
            Err("request sets run in a closed loop, without --target".into())
        }
        _ => Ok(()),
    }
}

/// Fixed shares are shares of request sets: without sets there is nothing to share.
pub fn check_set_threads(threads: SetThreads, request_set: Option<u64>) -> Result<(), String> {
    match (threads, request_set) {
        (SetThreads::Fixed, None) => {
            Err("fixed shares are shares of request sets: give --request-set R".into())
        }
        _ => Ok(()),
    }
}

impl RunPlan {
    pub fn slots(&self) -> usize {
        self.threads * self.concurrency
    }

    /// How many measured operations slot `slot` performs: counts differ by at most one.
    pub fn slot_quota(&self, slot: usize) -> Option<u64> {
        self.operation_count.map(|total| {
            let n = self.slots() as u64;
            total / n + u64::from((slot as u64) < total % n)
        })
    }

    /// What a plan must hold before any thread starts: the reason it cannot run, if any.
    pub fn check(&self) -> Result<(), String> {
        if self.threads == 0 || self.concurrency == 0 {
            return Err("threads and concurrency must be at least 1".into());
        }
        if let Some(t) = self.target_ops_s {
            if !(t.is_finite() && t > 0.0) {
                return Err(format!("target rate must be positive, got {t}"));
            }
        }
        if let Some(p) = &self.rate_profile {
            check_profile_warmup(p, self.warmup)?;
            if self.target_ops_s.is_none() {
                return Err(
                    "a rate profile is an open loop: its mean over the window is the target".into(),
                );
            }
        }
        check_request_sets(self.request_set, self.target_ops_s)?;
        check_set_threads(self.set_threads, self.request_set)?;
        check_timing(self.timing, self.duration, self.warmup)?;
        self.check_feed()
    }

    /// Fed operations bring their own times and end the phase when they are done: nothing else
    /// may pace or end it, and every slot has its queue.
    fn check_feed(&self) -> Result<(), String> {
        let Some(feed) = &self.feed else {
            return Ok(());
        };
        if feed.slots() != self.slots() {
            return Err(format!(
                "{} queues of fed operations for {} slots",
                feed.slots(),
                self.slots()
            ));
        }
        let clash = [
            (self.phase != Phase::Run, "a load phase"),
            (!self.warmup.is_zero(), "a warm-up"),
            (self.request_set.is_some(), "request sets"),
            (self.verify_writes, "--verify-writes"),
            (self.rate_profile.is_some(), "a rate profile"),
            (self.operation_count.is_some(), "an operation count"),
        ];
        match clash.iter().find(|(clashes, _)| *clashes) {
            Some((_, what)) => Err(format!(
                "a replay paces its own operations and ends with them: {what} does not apply"
            )),
            None => Ok(()),
        }
    }
}

impl Default for RunPlan {
    fn default() -> Self {
        RunPlan {
            phase: Phase::Run,
            threads: 1,
            concurrency: 1,
            target_ops_s: None,
            rate_profile: None,
            arrival: Arrival::Constant,
            duration: Some(Duration::from_secs(30)),
            warmup: Duration::ZERO,
            operation_count: None,
            interval: Duration::from_secs(1),
            op_timeout: None,
            grace: Duration::from_secs(10),
            seed: 0,
            batch_size: 1,
            insert_retries: 0,
            insert_retry_interval: Duration::from_secs(3),
            request_set: None,
            set_threads: SetThreads::Shared,
            timeline_log: None,
            arrival_offset: Duration::ZERO,
            rendezvous: None,
            timing: Timing::Window,
            verify_writes: false,
            verify_timeout: None,
            feed: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_differ_by_at_most_one_and_add_up() {
        let plan = RunPlan {
            threads: 3,
            concurrency: 4,
            operation_count: Some(1003),
            ..Default::default()
        };
        let q: Vec<u64> = (0..12).map(|s| plan.slot_quota(s).unwrap()).collect();
        assert_eq!(q.iter().sum::<u64>(), 1003);
        assert!(q.iter().max().unwrap() - q.iter().min().unwrap() <= 1);
    }
}
