//! One step of a search: its runs pooled, each percentile with its 95% interval, each run's test
//! for a trend through its window, and the verdict against the objective.
//!
//! **A percentile's interval.** Sectioning (Asmussen & Glynn, Stochastic Simulation, 2007, III.5;
//! Nakayama, "Confidence intervals for quantiles using sectioning", ACM TOMACS 2014): each run's
//! intervals are grouped, in order, into sections of at least [`MIN_ABOVE`] / (1 - q) operations
//! (ten operations above the percentile, so that no section's percentile is its maximum), at most
//! [`SECTIONS_PER_RUN`] per run; the estimate is the percentile of the step's whole histogram, and
//! its interval that estimate +- t(0.975, b - 1) S / sqrt(b), with S^2 the spread of the b
//! sections' percentiles **around that estimate** (Nakayama's sectioning, not the sections' own
//! mean: batching around the batches' mean would centre the interval on a biased average of small
//! samples' quantiles). Neighbouring latencies are correlated (a queue's); sections of many
//! operations in a row much less, which is why sections and not single operations are the unit.
//! With fewer than [`MIN_SECTIONS`] such sections (few operations, a low rate), the interval is
//! that of order statistics over every operation of the step ([`scalebench_stats::quantile`]),
//! which assumes them independent, as they nearly are far below saturation; when even that cannot
//! bound the percentile (a p99 of fewer than 368 operations has no upper bound), the interval is
//! missing and the step cannot pass on it.
//!
//! **Stationarity** (open loop). A step's p99 means something only if the step was in a steady
//! state: above the capacity an open loop's queue grows through the step, its p99 is set by the
//! step's length and passes whenever the objective is looser than that. Each run's intervals are
//! tested for a trend ([`scalebench_stats::trend::mann_kendall`]): each interval's mean latency
//! (from the intended start) rising, or its completions falling, at 5% significance (one-sided),
//! and by a material amount: latency rising faster than [`MATERIAL_RISE_MS_PER_S`] (half the
//! rise of the queue of a rate 1% above the capacity: each second adds 1% of a second), or completions
//! falling so far that at the window's end (on Sen's line through them) they were below the
//! [`KEPT_UP`] share of the offered rate: a service slowing down until it no longer kept up, which
//! the window's average hides. (Poisson arrivals alone make an interval's completions vary by a few
//! percent: a fall to within 95% of the rate is not judged.) A run that trends
//! fails its step: it did not keep up. The materiality bound is what keeps the test from failing
//! steps for the correlated noise of a queue near (below) its capacity, which Mann-Kendall's
//! independence assumption does not allow for.

use std::time::Duration;

use scalebench_measure::histogram::{
    decode_histogram, new_histogram, quantile_us, LatencyHistogram,
};
use scalebench_measure::saturation::{Estimate, IntervalMethod, RunTrend, Step, StepVerdict};
use scalebench_measure::PhaseResult;
use scalebench_session::error::SessionError;

use super::objective::Objective;

/// A step that completed less than this share of its offered rate inside the window did not keep up.
pub const KEPT_UP: f64 = 0.95;
/// A section holds at least this many operations above the percentile it estimates.
pub const MIN_ABOVE: f64 = 10.0;
/// At most this many sections per run: sections of more operations each are less correlated.
pub const SECTIONS_PER_RUN: usize = 10;
/// Fewer sections than this: the order statistics' interval instead.
pub const MIN_SECTIONS: usize = 5;
/// A run's intervals tested for a trend: at least this many (the search asks its runs for ten).
pub const MIN_TREND_INTERVALS: usize = 8;
/// The trend test's one-sided significance level.
pub const TREND_ALPHA: f64 = 0.05;
/// Latency rising faster than this (ms per second of the window) is material: half of what the
/// queue of a rate 1% above the capacity adds (10 ms of waiting each second), so that the slope's
/// own noise does not let a rate more than 1% above the capacity pass.
pub const MATERIAL_RISE_MS_PER_S: f64 = 5.0;

/// One interval of a run: the latencies judged (from the intended start in an open loop) of the
/// operations completed in it, and how many completed (ok or failed).
struct IntervalSample {
    judged: LatencyHistogram,
    completions: u64,
    /// The interval lies wholly inside the window (the last may be cut short by its end).
    whole: bool,
    /// Its place from the window's start, in intervals.
    index: usize,
}

/// A run's intervals in order, and its service times merged.
fn intervals_of(p: &PhaseResult) -> Result<(Vec<IntervalSample>, LatencyHistogram), SessionError> {
    let merge = |into: &mut LatencyHistogram, encoded: Option<&String>| {
        if let Some(e) = encoded {
            let part = decode_histogram(e).map_err(SessionError::Failed)?;
            into.add(&part)
                .map_err(|e| SessionError::Failed(format!("cannot merge histograms: {e:?}")))?;
        }
        Ok::<_, SessionError>(())
    };
    let mut samples = Vec::new();
    let mut service = new_histogram();
    for iv in &p.intervals {
        let mut judged = new_histogram();
        let mut completions = 0;
        for op in iv.operations.values() {
            let latencies = if p.open_loop {
                op.intended_histogram.as_ref()
            } else {
                op.histogram.as_ref()
            };
            merge(&mut judged, latencies)?;
            merge(&mut service, op.histogram.as_ref())?;
            completions += op.ok + op.failed;
        }
        samples.push(IntervalSample {
            judged,
            completions,
            whole: iv.start_s + p.interval_s <= p.duration_s + 1e-6,
            index: (iv.start_s / p.interval_s.max(1e-9)).round() as usize,
        });
    }
    Ok((samples, service))
}

/// A step's runs so far, pooled.
#[derive(Default)]
pub(super) struct Pooled {
    /// Each run's non-empty intervals' judged latencies, in order.
    runs: Vec<Vec<LatencyHistogram>>,
    /// Every run's operations in one histogram.
    pub whole: Option<LatencyHistogram>,
    pub service: Option<LatencyHistogram>,
    ok_in_window: f64,
    duration_s: f64,
    pub failed: u64,
    pub completed: u64,
    pub repeats: u32,
    pub bounded_by: Option<String>,
    /// What the clients spent per operation in the last run.
    pub client_cost: Option<scalebench_measure::result::ClientCost>,
    /// A client's CPU saturated in the last run, with the evidence.
    pub client_saturated: Option<String>,
    /// Each run's trend test (open loop, enough intervals).
    pub trends: Vec<RunTrend>,
}

/// A client whose CPU /proc saw saturated in the window: what and the evidence (the verdict before
/// a kept target rate replaced it).
fn saturated_client(index: usize, p: &PhaseResult) -> Option<String> {
    let series = p.resources.as_ref()?;
    let from = p.measurement_start_unix_ms as f64 / 1000.0 - series.start_unix_ms as f64 / 1000.0;
    let v = scalebench_monitor::verdict(series, "client", Some((from, from + p.duration_s)));
    let b = v.bounds.iter().find(|b| b.client)?;
    Some(format!("{} (client {index}): {}", b.what, b.evidence))
}

impl Pooled {
    /// Adds run `p` (merged over its clients; `own` each client's phase) offering `offered` ops/s
    /// (a rate search; None for threads).
    pub fn add(
        &mut self,
        p: &PhaseResult,
        own: &[PhaseResult],
        offered: Option<f64>,
    ) -> Result<(), SessionError> {
        let (samples, service) = intervals_of(p)?;
        if let Some(offered) = offered.filter(|_| p.open_loop) {
            // A replay offers its capture's shape, not a constant rate.
            let scheduled = p
                .replay
                .as_ref()
                .map_or(&[][..], |r| &r.scheduled_per_interval);
            if let Some(t) = run_trend_shaped(&samples, p.interval_s, offered, scheduled) {
                self.trends.push(t);
            }
        }
        let whole = self.whole.get_or_insert_with(new_histogram);
        let mut run = Vec::new();
        for s in samples.into_iter().filter(|s| !s.judged.is_empty()) {
            let _ = whole.add(&s.judged);
            run.push(s.judged);
        }
        self.runs.push(run);
        match &mut self.service {
            Some(s) => {
                let _ = s.add(&service);
            }
            None => self.service = Some(service),
        }
        self.ok_in_window += p.window_throughput() * p.duration_s;
        self.duration_s += p.duration_s;
        self.failed += p.totals.failed;
        self.completed += p.totals.ok + p.totals.failed;
        self.repeats += 1;
        self.bounded_by = p.bounded_by.as_ref().map(|v| v.bounded_by.clone());
        self.client_cost = p.client_cost;
        // A saturated client CPU, with how late the clients started their operations.
        let saturated: Vec<String> = own
            .iter()
            .enumerate()
            .filter_map(|(i, c)| saturated_client(i, c))
            .collect();
        self.client_saturated = (!saturated.is_empty()).then(|| {
            let late = p.schedule.as_ref().map_or(String::new(), |s| {
                format!(
                    "; {:.1}% of operations started more than {:.0} ms after their schedule",
                    s.late_operations as f64 / p.totals.issued.max(1) as f64 * 100.0,
                    s.late_threshold_us / 1000.0
                )
            });
            // What the saturated client spent per operation: what adding clients buys.
            let cost = p
                .client_cost
                .and_then(|c| c.cpu_us_per_op)
                .map_or(String::new(), |us| {
                    format!("; {us:.1} us of client CPU per operation")
                });
            format!("{}{late}{cost}", saturated.join(", "))
        });
        Ok(())
    }

    fn achieved(&self) -> f64 {
        self.ok_in_window / self.duration_s.max(1e-9)
    }

    /// The step as measured so far, not yet judged.
    pub fn step(&self, offered: f64, clients: u32) -> Step {
        let empty = new_histogram();
        let whole = self.whole.as_ref().unwrap_or(&empty);
        let p99 = estimate(whole, &self.runs, 0.99);
        let p999 = estimate(whole, &self.runs, 0.999);
        Step {
            offered,
            achieved_ops_s: self.achieved(),
            p99_us: p99.us,
            service_p99_us: self.service.as_ref().map_or(0.0, |h| quantile_us(h, 0.99)),
            mean_us: whole.mean() / 1000.0,
            failed: self.failed,
            p99,
            p999,
            error_rate: self.failed as f64 / self.completed.max(1) as f64,
            repeats: self.repeats,
            trends: self.trends.clone(),
            clients,
            bounded_by: self.bounded_by.clone(),
            client_bound: None,
            client_cost: self.client_cost,
            verdict: None,
            why: String::new(),
        }
    }
}

/// Mann-Kendall and Sen on one run's intervals at a constant offered rate; `None` with too few of
/// them to tell.
#[cfg(test)]
fn run_trend(samples: &[IntervalSample], interval_s: f64, offered: f64) -> Option<RunTrend> {
    run_trend_shaped(samples, interval_s, offered, &[])
}

/// Mann-Kendall and Sen on one run's intervals; `None` with too few of them to tell. Each whole
/// interval's completions are taken as a share of what was due in it: `offered` x the interval at a
/// constant rate, or, for a replay, the operations `scheduled` in it (so that a capture whose
/// traffic falls off is not a service that fell behind).
fn run_trend_shaped(
    samples: &[IntervalSample],
    interval_s: f64,
    offered: f64,
    scheduled: &[u64],
) -> Option<RunTrend> {
    use scalebench_stats::trend::mann_kendall;
    let due = |i: usize| match scheduled {
        [] => offered * interval_s,
        s => s.get(i).copied().unwrap_or(0) as f64,
    };
    let latency_ms: Vec<f64> = samples
        .iter()
        .filter(|s| !s.judged.is_empty())
        .map(|s| s.judged.mean() / 1e6)
        .collect();
    // Completions as a share of what was due.
    let rates: Vec<f64> = samples
        .iter()
        .filter(|s| s.whole && due(s.index) > 0.0)
        .map(|s| s.completions as f64 / due(s.index))
        .collect();
    if latency_ms.len() < MIN_TREND_INTERVALS || interval_s <= 0.0 {
        return None;
    }
    let latency = mann_kendall(&latency_ms)?;
    let rise_ms_per_s = latency.slope / interval_s;
    let rising = latency.p_rising < TREND_ALPHA && rise_ms_per_s > MATERIAL_RISE_MS_PER_S;
    let (fall_p, change_pct_per_s, falling) = match mann_kendall(&rates) {
        Some(c) if rates.len() >= MIN_TREND_INTERVALS => {
            // Sen's line: slope c.slope, intercept the median of x_i - slope i.
            let intercept = scalebench_stats::median(
                rates
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x - c.slope * i as f64)
                    .collect(),
            );
            let at_end = intercept + c.slope * (rates.len() - 1) as f64;
            let falling = c.p_falling < TREND_ALPHA && at_end < KEPT_UP;
            (c.p_falling, 100.0 * c.slope / interval_s, falling)
        }
        _ => (1.0, 0.0, false),
    };
    Some(RunTrend {
        intervals: latency_ms.len() as u32,
        interval_s,
        latency_rise_ms_per_s: rise_ms_per_s,
        latency_rise_p: latency.p_rising,
        completions_change_pct_per_s: change_pct_per_s,
        completions_fall_p: fall_p,
        trending: rising || falling,
    })
}

/// Quantile `q` of `whole` (every run's intervals merged) with its 95% interval: sectioning over
/// sections of enough operations, else order statistics (see the module's docs).
pub fn estimate(whole: &LatencyHistogram, runs: &[Vec<LatencyHistogram>], q: f64) -> Estimate {
    let us = quantile_us(whole, q);
    let sections = sections(runs, q);
    if sections.len() >= MIN_SECTIONS {
        let b = sections.len() as f64;
        let spread: f64 = sections
            .iter()
            .map(|s| (quantile_us(s, q) - us).powi(2))
            .sum::<f64>()
            / (b - 1.0);
        let half = scalebench_stats::t_quantile(0.975, b - 1.0) * spread.sqrt() / b.sqrt();
        return Estimate {
            us,
            low_us: Some((us - half).max(0.0)),
            high_us: Some(us + half),
            method: Some(IntervalMethod::Sectioning),
            sections: sections.len() as u32,
        };
    }
    let n = whole.len();
    let ranks = scalebench_stats::quantile::quantile_ranks(n, q);
    // The value of rank r: HdrHistogram counts ceil(q n) values at quantile q.
    let at_rank = |r: u64| quantile_us(whole, (r as f64 - 0.5) / n as f64);
    Estimate {
        us,
        low_us: ranks.lower.map(at_rank).or((n > 0).then_some(0.0)),
        high_us: ranks.upper.map(at_rank),
        method: (n > 0).then_some(IntervalMethod::OrderStatistics),
        sections: 0,
    }
}

/// Each run's intervals grouped in order into sections of at least `MIN_ABOVE / (1 - q)`
/// operations (and of a tenth of the run at least, so at most [`SECTIONS_PER_RUN`] a run); a
/// run's last operations short of a section join its last section.
fn sections(runs: &[Vec<LatencyHistogram>], q: f64) -> Vec<LatencyHistogram> {
    let least = (MIN_ABOVE / (1.0 - q)).ceil() as u64;
    let mut out = Vec::new();
    for run in runs {
        let total: u64 = run.iter().map(|h| h.len()).sum();
        let size = least.max(total.div_ceil(SECTIONS_PER_RUN as u64));
        let mut made: Vec<LatencyHistogram> = Vec::new();
        let mut open = new_histogram();
        for h in run {
            let _ = open.add(h);
            if open.len() >= size {
                made.push(std::mem::replace(&mut open, new_histogram()));
            }
        }
        // A run holding less than one section makes none.
        if let Some(last) = made.last_mut().filter(|_| !open.is_empty()) {
            let _ = last.add(&open);
        }
        out.extend(made);
    }
    out
}

/// The 95% Wilson score interval of a proportion of `n` trials.
pub fn wilson(failures: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_964;
    let (n, p) = (n as f64, failures as f64 / n as f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Judges a pooled step of a rate search against the objective: (verdict, why).
pub fn judge(
    offered: f64,
    step: &Step,
    completed: u64,
    objective: &Objective,
) -> (StepVerdict, String) {
    if step.achieved_ops_s < KEPT_UP * offered {
        return (
            StepVerdict::Fail,
            format!(
                "cannot keep up: {:.0} ops/s completed of {offered:.0} offered",
                step.achieved_ops_s
            ),
        );
    }
    if let Some(t) = step.trends.iter().find(|t| t.trending) {
        return (StepVerdict::Fail, trend_words(t));
    }
    let mut verdict = StepVerdict::Pass;
    let mut why = Vec::new();
    let mut weigh = |name: &str, limit: f64, low: Option<f64>, high: Option<f64>, point: f64| {
        let (low, high) = (low.unwrap_or(point), high.unwrap_or(f64::INFINITY));
        if low > limit {
            verdict = StepVerdict::Fail;
            why.push(format!(
                "{name} {point:.0} above {limit:.0} (95% low {low:.0})"
            ));
        } else if high > limit {
            if verdict == StepVerdict::Pass {
                verdict = StepVerdict::Unsure;
            }
            why.push(if high.is_finite() {
                format!("{name} {point:.0} not surely within {limit:.0} (95% high {high:.0})")
            } else {
                format!("{name} {point:.0} not surely within {limit:.0}: too few operations to bound it (longer steps bound it)")
            });
        }
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    if let Some(d) = objective.p99 {
        weigh(
            "p99 us",
            us(d),
            step.p99.low_us,
            step.p99.high_us,
            step.p99.us,
        );
    }
    if let Some(d) = objective.p999 {
        weigh(
            "p99.9 us",
            us(d),
            step.p999.low_us,
            step.p999.high_us,
            step.p999.us,
        );
    }
    if let Some(e) = objective.max_error_rate {
        let (low, high) = wilson(step.failed, completed);
        weigh(
            "error %",
            e * 100.0,
            Some(low * 100.0),
            Some(high * 100.0),
            step.error_rate * 100.0,
        );
    }
    (verdict, why.join("; "))
}

/// Why a run that trended failed its step, in words.
fn trend_words(t: &RunTrend) -> String {
    if t.latency_rise_ms_per_s > MATERIAL_RISE_MS_PER_S && t.latency_rise_p < TREND_ALPHA {
        format!(
            "not stationary: latency rose {:.1} ms per second through the window (Mann-Kendall p = {:.2}): the queue grew, the rate is above what was served",
            t.latency_rise_ms_per_s, t.latency_rise_p
        )
    } else {
        format!(
            "not stationary: completions fell {:.2}% of the offered rate per second through the window, below 95% of it at its end (Mann-Kendall p = {:.2})",
            -t.completions_change_pct_per_s, t.completions_fall_p
        )
    }
}

/// A step that failed with a client's CPU saturated is client-bound only when the database still
/// served each operation in time once it was started: its service time (from the actual start, the
/// client's lateness left out) within the p99 objective, or (without one) within twice that of the
/// highest step that passed (1 ms at least). An overloaded database queues operations and their
/// service times grow; an overloaded client starts them late and they stay short. (An open loop's
/// pacer spins between close deadlines, so a busy client core alone says little; clients whose
/// in-flight operations all wait on the database start late too, with their cores idle.)
pub fn database_answered_in_time(
    step: &Step,
    last_pass: Option<&Step>,
    objective: &Objective,
) -> bool {
    match objective.p99 {
        Some(limit) => step.service_p99_us <= limit.as_secs_f64() * 1e6,
        None => last_pass.is_none_or(|p| step.service_p99_us <= 2.0 * p.service_p99_us.max(1000.0)),
    }
}

/// The line printed for step `n`.
pub fn step_line(n: u32, threads: bool, s: &Step) -> String {
    let interval = match (s.p99.low_us, s.p99.high_us) {
        (Some(l), Some(h)) => format!(" [{l:.0}, {h:.0}]"),
        (Some(l), None) => format!(" [{l:.0}, unbounded]"),
        _ => String::new(),
    };
    let verdict = match s.verdict {
        Some(v) => format!(
            ", {}{}",
            match v {
                StepVerdict::Pass => "pass",
                StepVerdict::Fail => "fail",
                StepVerdict::Unsure => "unsure",
            },
            if s.why.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.why)
            }
        ),
        None => String::new(),
    };
    format!(
        "step {n}: {} {:.0} -> {:.0} ops/s, p99 {:.0} us{interval}, {} run(s){verdict}",
        if threads { "threads" } else { "offered" },
        s.offered,
        s.achieved_ops_s,
        s.p99.us,
        s.repeats
    )
}

#[cfg(test)]
mod tests;
