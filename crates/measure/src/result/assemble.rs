//! The one place a [`PhaseResult`] is put together: from what the measurement yields
//! ([`MeasuredPhase`], by the aggregator of one client or the merge of several) and what is recorded
//! beside it ([`Beside`]). Both are struct literals without `..` wherever they are built, so a new
//! result field does not compile until the aggregator and the merge each say what it holds.

use std::collections::BTreeMap;

use super::{
    CommonStart, DataSizes, EndedBy, ErrorSummary, FaultWindow, IntervalResult, KeyRange, LoadPace,
    LostWrites, OpResult, PhaseResult, RequestSets, ScheduleSummary, Space, Totals,
};
use crate::consistency::{ConsistencyResult, ReaderClient};

/// What the measurement of a phase yields: its window, its counts, latencies and series.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPhase {
    pub phase: crate::Phase,
    pub open_loop: bool,
    pub measurement_start_unix_ms: u64,
    pub duration_s: f64,
    pub interval_s: f64,
    pub recorded_interval_s: Option<f64>,
    pub ended_by: EndedBy,
    pub clients: u32,
    pub totals: Totals,
    pub operations: BTreeMap<String, OpResult>,
    pub errors: BTreeMap<String, ErrorSummary>,
    pub schedule: Option<ScheduleSummary>,
    pub data: DataSizes,
    pub warmup_operations: u64,
    pub intervals: Vec<IntervalResult>,
}

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
}

impl PhaseResult {
    /// The phase's result from its measurement and what was recorded beside it.
    pub fn assemble(measured: MeasuredPhase, beside: Beside) -> PhaseResult {
        let MeasuredPhase {
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
            schedule,
            data,
            warmup_operations,
            intervals,
        } = measured;
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
        } = beside;
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
            schedule,
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
        }
    }
}
