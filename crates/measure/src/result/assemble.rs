//! The one place a [`PhaseResult`] is put together, and every figure of it derived: from what the
//! phase recorded ([`RecordedPhase`]: the aggregator's of one client, or the merge of several
//! clients' recordings) and what is recorded beside it ([`Beside`]). A new figure is its field and
//! its line here, for a single result and a merged one alike. `Beside` is a struct literal without
//! `..` wherever it is built, so a new field beside the measurement does not compile until the
//! aggregator and the merge each say what it holds.

use std::collections::BTreeMap;

use super::recorded::{RecordedOp, RecordedPhase, RecordedSchedule, Recording, Series};
use super::{
    CommonStart, FaultWindow, KeyRange, LatencySummary, LoadPace, LostWrites, OpResult,
    PhaseResult, RequestSets, ScheduleSummary, Space, Totals,
};
use crate::consistency::{ConsistencyResult, ReaderClient};

/// What execution and the session record beside the measurement (none of it for a phase just
/// aggregated: [`Beside::default`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Beside {
    pub space: Option<Space>,
    pub resources: Option<scalebench_monitor::ResourceSeries>,
    pub request_sets: Option<RequestSets>,
    pub remote_resources: Vec<scalebench_monitor::RemoteResources>,
    pub bounded_by: Option<scalebench_monitor::Verdict>,
    pub insert_keys: Option<KeyRange>,
    pub start: Option<CommonStart>,
    pub consistency: Option<ConsistencyResult>,
    pub consistency_readers: Vec<ReaderClient>,
    pub timed_init_to_cleanup: bool,
    pub consistency_error: Option<String>,
    pub lost_writes: Option<LostWrites>,
    pub faults: Vec<FaultWindow>,
    pub load_pace: Option<LoadPace>,
    pub client_cost: Option<super::ClientCost>,
    pub replay: Option<super::replay::ReplayFigures>,
}

impl PhaseResult {
    /// The phase's result: every figure derived from its recording, and what was recorded beside it.
    pub fn assemble(recorded: RecordedPhase, beside: Beside) -> PhaseResult {
        let RecordedPhase {
            phase,
            open_loop,
            measurement_start_unix_ms,
            duration_s,
            ended_by,
            clients,
            data,
            recording,
            series,
        } = recorded;
        let Series {
            interval_s,
            recorded_interval_s,
            intervals,
        } = series;
        let Beside {
            space,
            resources,
            request_sets,
            remote_resources,
            bounded_by,
            insert_keys,
            start,
            consistency,
            consistency_readers,
            timed_init_to_cleanup,
            consistency_error,
            lost_writes,
            faults,
            load_pace,
            client_cost,
            replay,
        } = beside;
        // A phase without measurable duration has no rate: 0, never infinity (JSON cannot hold it).
        let per_s = |n: u64| {
            if duration_s > 0.0 {
                n as f64 / duration_s
            } else {
                0.0
            }
        };
        let Recording {
            operations,
            in_flight_at_stop,
            records,
            retries,
            warmup_operations,
            errors,
            schedule,
        } = recording;
        let mut totals = Totals {
            in_flight_at_stop,
            records,
            retries,
            ..Totals::default()
        };
        for o in operations.values() {
            totals.issued = totals.issued.saturating_add(o.issued);
            totals.ok = totals.ok.saturating_add(o.ok);
            totals.ok_after_window = totals.ok_after_window.saturating_add(o.ok_after_window);
            totals.failed = totals.failed.saturating_add(o.failed.values().sum());
        }
        totals.throughput_ops_s = per_s(totals.ok.saturating_sub(totals.ok_after_window));
        let operations = operations
            .into_iter()
            .map(|(name, o)| (name, o.figures(per_s)))
            .collect();
        PhaseResult {
            phase,
            open_loop,
            measurement_start_unix_ms,
            duration_s,
            interval_s,
            recorded_interval_s,
            ended_by,
            clients,
            totals,
            operations,
            errors,
            schedule: schedule.map(RecordedSchedule::figures),
            data,
            warmup_operations,
            intervals,
            space,
            resources,
            request_sets,
            remote_resources,
            bounded_by,
            insert_keys,
            start,
            consistency,
            consistency_readers,
            timed_init_to_cleanup,
            consistency_error,
            lost_writes,
            faults,
            load_pace,
            client_cost,
            replay,
        }
    }
}

impl RecordedOp {
    /// The operation's figures; `per_s` is a count per second of the window.
    fn figures(self, per_s: impl Fn(u64) -> f64) -> OpResult {
        let summary = |h: &crate::LatencyHistogram| LatencySummary::from_histogram(h);
        OpResult {
            issued: self.issued,
            ok: self.ok,
            throughput_ops_s: per_s(self.ok.saturating_sub(self.ok_after_window)),
            latency: summary(&self.latency),
            intended_latency: self.intended.as_ref().and_then(summary),
            failed_latency: self.failed_latency.as_ref().and_then(summary),
            failed_latency_by_class: self
                .failed_latency_by_class
                .iter()
                .filter_map(|(class, h)| Some((class.clone(), summary(h)?)))
                .collect::<BTreeMap<_, _>>(),
            failed: self.failed,
        }
    }
}

impl RecordedSchedule {
    fn figures(self) -> ScheduleSummary {
        ScheduleSummary {
            late_operations: self.late_operations,
            late_threshold_us: self.late_threshold_us,
            warmup_backlog_dropped: self.warmup_backlog_dropped,
            start_delay: self
                .start_delay
                .as_ref()
                .and_then(LatencySummary::from_histogram),
            arrivals_ended_s: self.arrivals_ended_s,
        }
    }
}
