//! What a phase recorded, before any figure is derived from it: counts, histograms and the interval
//! series. The aggregator records one client's phase; the merge adds the recordings of several
//! clients ([`Recording::add`]: counts sum, histograms add); [`PhaseResult::assemble`] derives every
//! figure from either the same way.

use std::collections::BTreeMap;

use super::{DataSizes, EndedBy, ErrorSummary, IntervalResult, LatencySummary, PhaseResult};
use crate::histogram::{add_into, new_histogram, LatencyHistogram};

/// The most distinct error messages a class keeps.
pub const MAX_ERROR_SAMPLES: usize = 10;

/// A phase as recorded: its window, what adds up across the clients of a run, and its series.
#[derive(Debug, Clone)]
pub struct RecordedPhase {
    pub phase: crate::Phase,
    pub open_loop: bool,
    /// Wall-clock start of the measurement window, ms since the Unix epoch.
    pub measurement_start_unix_ms: u64,
    pub duration_s: f64,
    pub ended_by: EndedBy,
    /// How many client processes the recording holds.
    pub clients: u32,
    pub data: DataSizes,
    pub recording: Recording,
    pub series: Series,
}

/// The interval series at the result's interval length.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub interval_s: f64,
    /// The length recorded at, when `intervals` merged neighbours (see `PhaseResult`).
    pub recorded_interval_s: Option<f64>,
    pub intervals: Vec<IntervalResult>,
}

/// What adds up across the clients of one run: counts and histograms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    /// By the name an operation is reported under.
    pub operations: BTreeMap<String, RecordedOp>,
    /// Issued operations that had not completed when the phase stopped.
    pub in_flight_at_stop: u64,
    /// Records written (a batch insert counts its records).
    pub records: u64,
    /// Failed inserts retried.
    pub retries: u64,
    /// Operations completed during warm-up.
    pub warmup_operations: u64,
    /// By failure class: its count and up to [`MAX_ERROR_SAMPLES`] distinct messages.
    pub errors: BTreeMap<String, ErrorSummary>,
    /// Open loop only.
    pub schedule: Option<RecordedSchedule>,
}

/// One operation's counts and latency histograms (nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedOp {
    /// Started inside the measurement window.
    pub issued: u64,
    pub ok: u64,
    /// Of `ok`: completed after the window's end (their latencies count, the window's rate not).
    pub ok_after_window: u64,
    /// Failures by class name (classes that had any).
    pub failed: BTreeMap<String, u64>,
    /// Service time of the successes.
    pub latency: LatencyHistogram,
    /// Open loop: time from the intended start of the successes.
    pub intended: Option<LatencyHistogram>,
    /// Service time of the failures, all classes together.
    pub failed_latency: Option<LatencyHistogram>,
    /// Service time of the failures by class name.
    pub failed_latency_by_class: BTreeMap<String, LatencyHistogram>,
}

/// An open loop's schedule as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSchedule {
    pub late_operations: u64,
    pub late_threshold_us: f64,
    pub warmup_backlog_dropped: u64,
    /// Start delays (actual start - intended start).
    pub start_delay: Option<LatencyHistogram>,
    pub arrivals_ended_s: Option<f64>,
}

impl RecordedOp {
    /// An operation nothing of which has been recorded yet.
    pub fn empty() -> RecordedOp {
        RecordedOp {
            issued: 0,
            ok: 0,
            ok_after_window: 0,
            failed: BTreeMap::new(),
            latency: new_histogram(),
            intended: None,
            failed_latency: None,
            failed_latency_by_class: BTreeMap::new(),
        }
    }
}

/// The sum of counts, or an error when it leaves what a result may hold.
pub(crate) fn sum_counts(mut counts: impl Iterator<Item = u64>) -> Result<u64, String> {
    counts
        .try_fold(0u64, u64::checked_add)
        .filter(|n| *n <= super::MAX_COUNT)
        .ok_or_else(|| "the merged counts exceed 2^53: these cannot be counts of operations".into())
}

fn add_count(into: &mut u64, n: u64) -> Result<(), String> {
    *into = sum_counts([*into, n].into_iter())?;
    Ok(())
}

/// Adds `from` into `into`, made empty on first use: clients' histograms merged in order.
fn add_histogram(into: &mut Option<LatencyHistogram>, from: Option<&LatencyHistogram>) {
    if let Some(from) = from {
        add_into(into.get_or_insert_with(new_histogram), from);
    }
}

impl Recording {
    /// The recording a result holds, read back: counts as they are, histograms decoded. The
    /// successes each operation completed after the window are its successes less those its rate
    /// gives over the window (exact for counts below 2^51); a phase without duration has no rate,
    /// so there they are the total's, taken by the operations in order.
    pub fn of_result(p: &PhaseResult) -> Result<Recording, String> {
        let decode = |s: Option<&LatencySummary>| s.map(LatencySummary::decode).transpose();
        let mut after_left = p.totals.ok_after_window;
        let mut operations = BTreeMap::new();
        for (name, o) in &p.operations {
            let ok_after_window = if p.duration_s > 0.0 {
                let in_window = (o.throughput_ops_s * p.duration_s).round() as u64;
                o.ok.saturating_sub(in_window)
            } else {
                after_left.min(o.ok)
            };
            after_left = after_left.saturating_sub(ok_after_window);
            let mut by_class = BTreeMap::new();
            for (class, s) in &o.failed_latency_by_class {
                by_class.insert(class.clone(), s.decode()?);
            }
            let recorded = RecordedOp {
                issued: o.issued,
                ok: o.ok,
                ok_after_window,
                failed: o.failed.clone(),
                latency: decode(o.latency.as_ref())?.unwrap_or_else(new_histogram),
                intended: decode(o.intended_latency.as_ref())?,
                failed_latency: decode(o.failed_latency.as_ref())?,
                failed_latency_by_class: by_class,
            };
            operations.insert(name.clone(), recorded);
        }
        let schedule = match &p.schedule {
            None => None,
            Some(s) => Some(RecordedSchedule {
                late_operations: s.late_operations,
                late_threshold_us: s.late_threshold_us,
                warmup_backlog_dropped: s.warmup_backlog_dropped,
                start_delay: decode(s.start_delay.as_ref())?,
                arrivals_ended_s: s.arrivals_ended_s,
            }),
        };
        Ok(Recording {
            operations,
            in_flight_at_stop: p.totals.in_flight_at_stop,
            records: p.totals.records,
            retries: p.totals.retries,
            warmup_operations: p.warmup_operations,
            errors: p.errors.clone(),
            schedule,
        })
    }

    /// Adds another client's recording to this one: counts sum (an error past 2^53), histograms
    /// add, error messages are kept while there is room; a schedule's threshold and the end of
    /// its arrivals are the first client's (every client follows its share of one profile).
    pub fn add(&mut self, other: &Recording) -> Result<(), String> {
        for (name, o) in &other.operations {
            let into = self
                .operations
                .entry(name.clone())
                .or_insert_with(RecordedOp::empty);
            add_count(&mut into.issued, o.issued)?;
            add_count(&mut into.ok, o.ok)?;
            add_count(&mut into.ok_after_window, o.ok_after_window)?;
            for (class, n) in &o.failed {
                add_count(into.failed.entry(class.clone()).or_insert(0), *n)?;
            }
            add_into(&mut into.latency, &o.latency);
            add_histogram(&mut into.intended, o.intended.as_ref());
            add_histogram(&mut into.failed_latency, o.failed_latency.as_ref());
            for (class, h) in &o.failed_latency_by_class {
                let by_class = &mut into.failed_latency_by_class;
                add_into(
                    by_class.entry(class.clone()).or_insert_with(new_histogram),
                    h,
                );
            }
        }
        add_count(&mut self.in_flight_at_stop, other.in_flight_at_stop)?;
        add_count(&mut self.records, other.records)?;
        add_count(&mut self.retries, other.retries)?;
        add_count(&mut self.warmup_operations, other.warmup_operations)?;
        for (class, e) in &other.errors {
            let into = self.errors.entry(class.clone()).or_default();
            add_count(&mut into.count, e.count)?;
            for s in &e.samples {
                if into.samples.len() < MAX_ERROR_SAMPLES && !into.samples.contains(s) {
                    into.samples.push(s.clone());
                }
            }
        }
        if let Some(s) = &other.schedule {
            let into = self.schedule.get_or_insert(RecordedSchedule {
                late_operations: 0,
                late_threshold_us: s.late_threshold_us,
                warmup_backlog_dropped: 0,
                start_delay: None,
                arrivals_ended_s: s.arrivals_ended_s,
            });
            add_count(&mut into.late_operations, s.late_operations)?;
            add_count(&mut into.warmup_backlog_dropped, s.warmup_backlog_dropped)?;
            add_histogram(&mut into.start_delay, s.start_delay.as_ref());
        }
        // The totals derived from the operations stay within what a result may hold too.
        let ops = || self.operations.values();
        sum_counts(ops().map(|o| o.issued))?;
        sum_counts(ops().map(|o| o.ok))?;
        sum_counts(ops().flat_map(|o| o.failed.values().copied()))?;
        Ok(())
    }
}
