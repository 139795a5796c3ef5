//! Elasticity, after Dory et al. (2011): stability of a request-set timeline and the scores of one
//! scaling transition. Pure functions over numbers; the `scalebench elastic` command drives the
//! cluster and the load and hands the timeline here.
//!
//! The study left some choices open; ours (documented in docs/elasticity.md):
//! - each request set is run K times back to back (Dory ran each 10 times for its mean and standard
//!   deviation): a point of the timeline is those K runs, placed at their midpoint, its value their
//!   mean time;
//! - the stability threshold is the baseline's median step (median |d_k - d_k-1|), at least 0.5% of
//!   the baseline's mean set time (identical sets would otherwise never count as stable again);
//! - Rt, the mean response time of one request, is Av x T / R (Little's law: T requests in flight
//!   in a closed loop, R per set);
//! - B integrates the band of plus/minus one standard deviation around the curve: the integral of
//!   2 sigma(t) from the scale command to stability, sigma being each point's standard deviation over
//!   its K runs (with K = 1, a rolling standard deviation over the stability window of X points);
//! - scalability is Dory's (Avg_2N - Avg_N) / Avg_N between the stable states of consecutive cluster
//!   sizes, each with its own doubled data, threads and set size ([`sizes_table`]); the change of the
//!   mean set time inside one transition is reported apart, as the study says it is not scalability.

pub mod impact;
pub mod numeric;
pub mod result;
pub mod service_level;

use scalebench_stats::{mean, median, sd};
use serde::{Deserialize, Serialize};

use numeric::{integrate, Spline};

/// One timed request set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SetPoint {
    /// Seconds after the measurement start.
    pub start_s: f64,
    pub duration_s: f64,
    pub failed: u64,
}

impl SetPoint {
    pub fn mid_s(&self) -> f64 {
        self.start_s + self.duration_s / 2.0
    }

    pub fn end_s(&self) -> f64 {
        self.start_s + self.duration_s
    }
}

/// A request set run K times back to back: one point of Dory's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedSet {
    pub start_s: f64,
    pub end_s: f64,
    /// Mean and standard deviation of the K runs' times.
    pub mean_s: f64,
    pub sd_s: f64,
    pub failed: u64,
    pub runs: usize,
}

impl RepeatedSet {
    pub fn mid_s(&self) -> f64 {
        (self.start_s + self.end_s) / 2.0
    }
}

/// Consecutive sets in groups of `k` (a last, incomplete group is left out: it is still running).
pub fn repeated(sets: &[SetPoint], k: usize) -> Vec<RepeatedSet> {
    sets.chunks_exact(k.max(1))
        .map(|c| {
            let times: Vec<f64> = c.iter().map(|s| s.duration_s).collect();
            RepeatedSet {
                start_s: c[0].start_s,
                end_s: c[c.len() - 1].end_s(),
                mean_s: mean(&times),
                sd_s: sd(&times),
                failed: c.iter().map(|s| s.failed).sum(),
                runs: c.len(),
            }
        })
        .collect()
}

/// The median absolute difference between consecutive set times.
pub fn median_step(durations: &[f64]) -> f64 {
    median(durations.windows(2).map(|w| (w[1] - w[0]).abs()).collect())
}

/// The stability threshold of a baseline: its median step, at least 0.5% of its mean set time.
pub fn threshold(baseline: &[f64]) -> f64 {
    median_step(baseline).max(0.005 * mean(baseline))
}

/// The first index k >= `from` + `x` at which the `x` set times ending at k each differ from their
/// predecessor by less than `threshold` (all of them after `from`): the set that makes the timeline
/// stable. `None` if no such run exists yet.
pub fn stable_at(durations: &[f64], from: usize, x: usize, threshold: f64) -> Option<usize> {
    let x = x.max(1);
    let mut run = 0;
    for k in (from + 1)..durations.len() {
        if (durations[k] - durations[k - 1]).abs() < threshold {
            run += 1;
            if run >= x {
                return Some(k);
            }
        } else {
            run = 0;
        }
    }
    None
}

/// What happened during one scaling transition, in seconds after the measurement start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Events {
    /// The scale command was issued (Dory's "bootstrap").
    pub scale_issued_s: f64,
    /// The command returned: the node joined (or left) and the cluster answered ready.
    pub scale_done_s: Option<f64>,
    /// The database's own tools first reported no data in motion.
    pub transfers_done_s: Option<f64>,
    /// No data in motion and the load criterion held (the end of the set that completed it).
    pub stable_s: Option<f64>,
}

/// The unit of the time axis the areas A and B (and so the elasticity) are integrated over: seconds,
/// or minutes as Dory's charts were drawn (a score in minutes is the score in seconds / 60).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimeAxis {
    #[default]
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "min")]
    Minutes,
}

impl TimeAxis {
    pub fn parse(s: &str) -> Result<TimeAxis, String> {
        match s {
            "s" => Ok(TimeAxis::Seconds),
            "min" => Ok(TimeAxis::Minutes),
            _ => Err("expected s or min".into()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TimeAxis::Seconds => "s",
            TimeAxis::Minutes => "min",
        }
    }

    fn seconds(self) -> f64 {
        match self {
            TimeAxis::Seconds => 1.0,
            TimeAxis::Minutes => 60.0,
        }
    }
}

/// The scores of one transition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Mean request-set time before the scale command (Av1) and after stability (Av2), seconds.
    pub av_before_s: f64,
    pub av_after_s: Option<f64>,
    /// Mean response time of one request before (Rt1) and after (Rt2): Av x threads / set size.
    pub rt_before_s: f64,
    pub rt_after_s: Option<f64>,
    /// The stability threshold used (the baseline's median step, see the crate docs).
    pub threshold_s: f64,
    /// Stabilisation time = data-transfer time + additional time.
    pub stabilisation_s: Option<f64>,
    pub data_transfer_s: Option<f64>,
    pub additional_s: Option<f64>,
    /// The time axis A and B are integrated over (the request-set times stay in seconds).
    #[serde(default)]
    pub time_axis: TimeAxis,
    /// A: area of request-set time above the ideal ramp from (scale command, Av1) to (stable, Av2).
    pub area_above_ramp: Option<f64>,
    /// B: area of the +/- one standard deviation band over the same interval.
    pub sd_band_area: Option<f64>,
    /// (A + B) / ((Rt1 + Rt2)(Av1 + Av2)); 0 is perfectly elastic.
    pub elasticity: Option<f64>,
    /// (Av2 - Av1) / Av1 inside this transition: the same load on the changed cluster. Not Dory's
    /// scalability, which compares stable states of doubled load ([`sizes_table`]).
    pub change_in_transition: Option<f64>,
    /// Restricted elasticity: failed requests from the scale command to stability, their share,
    /// and the time from the command to the end of the last set with a failure (0 without failures).
    pub failed_in_transition: u64,
    pub failed_share: f64,
    pub full_availability_s: Option<f64>,
}

impl Scores {
    /// The areas and the elasticity with the time axis in `axis` (they are computed in seconds).
    pub fn on_time_axis(mut self, axis: TimeAxis) -> Scores {
        let factor = self.time_axis.seconds() / axis.seconds();
        for v in [
            &mut self.area_above_ramp,
            &mut self.sd_band_area,
            &mut self.elasticity,
        ] {
            *v = v.map(|x| x * factor);
        }
        self.time_axis = axis;
        self
    }
}

/// Scores one transition from the whole timeline of its run (points of K runs of a set, see
/// [`repeated`]). `x` is the stability window (points).
pub fn score(
    sets: &[RepeatedSet],
    set_size: u64,
    threads: u64,
    events: &Events,
    x: usize,
) -> Scores {
    let t_e = events.scale_issued_s;
    let durations = |f: &dyn Fn(&RepeatedSet) -> bool| -> Vec<f64> {
        sets.iter().filter(|s| f(s)).map(|s| s.mean_s).collect()
    };
    let before = durations(&|s| s.end_s <= t_e);
    let av1 = mean(&before);
    let per_request = threads as f64 / set_size.max(1) as f64;
    let mut scores = Scores {
        av_before_s: av1,
        rt_before_s: av1 * per_request,
        threshold_s: threshold(&before),
        ..Default::default()
    };
    let transition_end = events.stable_s.unwrap_or(f64::INFINITY);
    let in_transition: Vec<&RepeatedSet> = sets
        .iter()
        .filter(|s| s.end_s > t_e && s.start_s < transition_end)
        .collect();
    scores.failed_in_transition = in_transition.iter().map(|s| s.failed).sum();
    let ops = in_transition.iter().map(|s| s.runs as u64).sum::<u64>() * set_size;
    scores.failed_share = if ops == 0 {
        0.0
    } else {
        scores.failed_in_transition as f64 / ops as f64
    };
    scores.full_availability_s = Some(
        in_transition
            .iter()
            .filter(|s| s.failed > 0)
            .map(|s| s.end_s - t_e)
            .fold(0.0, f64::max),
    );
    scores.data_transfer_s = events.transfers_done_s.map(|t| t - t_e);
    let Some(t_s) = events.stable_s else {
        return scores;
    };
    scores.stabilisation_s = Some(t_s - t_e);
    scores.additional_s = events.transfers_done_s.map(|t| t_s - t);
    let after = durations(&|s| s.start_s >= t_s);
    if after.is_empty() || before.is_empty() {
        return scores;
    }
    let av2 = mean(&after);
    scores.av_after_s = Some(av2);
    scores.rt_after_s = Some(av2 * per_request);
    scores.change_in_transition = Some((av2 - av1) / av1);

    let mids: Vec<f64> = sets.iter().map(RepeatedSet::mid_s).collect();
    let all: Vec<f64> = sets.iter().map(|s| s.mean_s).collect();
    let Some(curve) = Spline::natural(&mids, &all) else {
        return scores;
    };
    let ramp = |t: f64| av1 + (av2 - av1) * (t - t_e) / (t_s - t_e).max(f64::MIN_POSITIVE);
    let tolerance = 1e-9 * (t_s - t_e).max(1.0) * av1.max(1e-6);
    let a = integrate(&|t| (curve.eval(t) - ramp(t)).max(0.0), t_e, t_s, tolerance);
    // Each point's own deviation over its K runs; with single runs, a rolling standard deviation
    // over the last x points.
    let (sd_x, sd_y): (Vec<f64>, Vec<f64>) = if sets.iter().all(|s| s.runs >= 2) {
        sets.iter().map(|s| (s.mid_s(), s.sd_s)).unzip()
    } else {
        let w = x.max(2);
        (w - 1..sets.len())
            .map(|k| (mids[k], sd(&all[k + 1 - w..=k])))
            .unzip()
    };
    let b = match Spline::natural(&sd_x, &sd_y) {
        Some(band) => integrate(&|t| 2.0 * band.eval(t).max(0.0), t_e, t_s, tolerance),
        None => 0.0,
    };
    scores.area_above_ramp = Some(a);
    scores.sd_band_area = Some(b);
    let denominator = (scores.rt_before_s + av2 * per_request) * (av1 + av2);
    scores.elasticity = (denominator > 0.0).then(|| (a + b) / denominator);
    scores
}

/// One interval of an open-loop run (`--target`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalPoint {
    pub start_s: f64,
    pub duration_s: f64,
    pub ok: u64,
    pub failed: u64,
    /// p99 from the intended start, microseconds.
    pub p99_us: f64,
}

impl IntervalPoint {
    pub fn throughput(&self) -> f64 {
        self.ok as f64 / self.duration_s.max(f64::MIN_POSITIVE)
    }
}

/// The scores of one transition under a constant-rate open loop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopScores {
    pub threshold_ops_s: f64,
    pub stabilisation_s: Option<f64>,
    pub data_transfer_s: Option<f64>,
    pub additional_s: Option<f64>,
    pub throughput_before_ops_s: f64,
    pub throughput_after_ops_s: Option<f64>,
    /// Operations the transition cost: the integral of (baseline - interval throughput), where
    /// positive, from the scale command to stability.
    pub throughput_lost_ops: Option<f64>,
    pub p99_before_us: f64,
    pub p99_transition_max_us: f64,
    pub p99_after_us: Option<f64>,
    pub failed_in_transition: u64,
    pub failed_share: f64,
    pub full_availability_s: Option<f64>,
}

/// Scores one open-loop transition from its intervals.
pub fn score_open_loop(points: &[IntervalPoint], events: &Events) -> OpenLoopScores {
    let t_e = events.scale_issued_s;
    let end = events.stable_s.unwrap_or(f64::INFINITY);
    let before: Vec<&IntervalPoint> = points
        .iter()
        .filter(|p| p.start_s + p.duration_s <= t_e)
        .collect();
    let during: Vec<&IntervalPoint> = points
        .iter()
        .filter(|p| p.start_s + p.duration_s > t_e && p.start_s < end)
        .collect();
    let after: Vec<&IntervalPoint> = points.iter().filter(|p| p.start_s >= end).collect();
    let tp = |v: &[&IntervalPoint]| mean(&v.iter().map(|p| p.throughput()).collect::<Vec<_>>());
    let p99 = |v: &[&IntervalPoint]| mean(&v.iter().map(|p| p.p99_us).collect::<Vec<_>>());
    let base_tp = tp(&before);
    let failed: u64 = during.iter().map(|p| p.failed).sum();
    let ops: u64 = during.iter().map(|p| p.ok + p.failed).sum();
    let mut s = OpenLoopScores {
        threshold_ops_s: threshold(&before.iter().map(|p| p.throughput()).collect::<Vec<_>>()),
        throughput_before_ops_s: base_tp,
        p99_before_us: p99(&before),
        p99_transition_max_us: during.iter().map(|p| p.p99_us).fold(0.0, f64::max),
        failed_in_transition: failed,
        failed_share: if ops == 0 {
            0.0
        } else {
            failed as f64 / ops as f64
        },
        full_availability_s: Some(
            during
                .iter()
                .filter(|p| p.failed > 0)
                .map(|p| p.start_s + p.duration_s - t_e)
                .fold(0.0, f64::max),
        ),
        data_transfer_s: events.transfers_done_s.map(|t| t - t_e),
        ..Default::default()
    };
    let Some(t_s) = events.stable_s else {
        return s;
    };
    s.stabilisation_s = Some(t_s - t_e);
    s.additional_s = events.transfers_done_s.map(|t| t_s - t);
    if !after.is_empty() {
        s.throughput_after_ops_s = Some(tp(&after));
        s.p99_after_us = Some(p99(&after));
    }
    let mids: Vec<f64> = points
        .iter()
        .map(|p| p.start_s + p.duration_s / 2.0)
        .collect();
    let values: Vec<f64> = points.iter().map(IntervalPoint::throughput).collect();
    if let Some(curve) = Spline::natural(&mids, &values) {
        let tolerance = 1e-9 * base_tp.max(1.0) * (t_s - t_e).max(1.0);
        s.throughput_lost_ops = Some(integrate(
            &|t| (base_tp - curve.eval(t)).max(0.0),
            t_e,
            t_s,
            tolerance,
        ));
    }
    s
}

/// One stable state of the cluster: Dory's performance table has a row per cluster size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    pub nodes: usize,
    pub records: u64,
    /// Requests in flight (T) and operations per set (R).
    pub in_flight: u64,
    pub set_size: u64,
    /// Request sets measured in the stable state, and the mean and standard deviation of their times.
    pub sets: usize,
    pub mean_s: f64,
    pub sd_s: f64,
    /// (Avg_2N - Avg_N) / Avg_N against the previous row, when this row has twice its nodes, records,
    /// threads and set size (Dory's scalability; 0 is perfect, negative is better than linear).
    pub scalability: Option<f64>,
}

impl SizeRow {
    /// The row of a stable state from the times of its request sets.
    pub fn new(
        nodes: usize,
        records: u64,
        in_flight: u64,
        set_size: u64,
        times: &[f64],
    ) -> SizeRow {
        SizeRow {
            nodes,
            records,
            in_flight,
            set_size,
            sets: times.len(),
            mean_s: mean(times),
            sd_s: sd(times),
            scalability: None,
        }
    }
}

/// Fills in each row's scalability against the row before it, where everything doubled.
pub fn sizes_table(mut rows: Vec<SizeRow>) -> Vec<SizeRow> {
    for k in 1..rows.len() {
        let (n, r) = (&rows[k - 1], &rows[k]);
        let doubled = r.nodes == 2 * n.nodes
            && r.records == 2 * n.records
            && r.in_flight == 2 * n.in_flight
            && r.set_size == 2 * n.set_size;
        let scalability = (doubled && n.mean_s > 0.0).then(|| (r.mean_s - n.mean_s) / n.mean_s);
        rows[k].scalability = scalability;
    }
    rows
}

/// Restricted elasticity without load (Dory measured Riak so): the time from the scale command
/// until the cluster answers ready with no data in motion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnloadedScores {
    pub full_availability_s: Option<f64>,
    /// Until the command returned (the node joined or left, the cluster answered ready).
    pub ready_s: Option<f64>,
}

/// The scores of a step: of request sets, or of an open loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepScores {
    RequestSets(Scores),
    OpenLoop(OpenLoopScores),
    Unloaded(UnloadedScores),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Back-to-back sets with the given durations, starting at 0.
    fn sets(durations: &[f64]) -> Vec<SetPoint> {
        let mut t = 0.0;
        durations
            .iter()
            .map(|d| {
                let s = SetPoint {
                    start_s: t,
                    duration_s: *d,
                    failed: 0,
                };
                t += d;
                s
            })
            .collect()
    }

    /// The same, each set run once.
    fn timeline(durations: &[f64]) -> Vec<RepeatedSet> {
        repeated(&sets(durations), 1)
    }

    #[test]
    fn stability_needs_x_small_steps_in_a_row() {
        let d = [
            1.0, 1.02, 0.98, 1.0, 3.0, 2.0, 1.5, 1.1, 1.0, 1.01, 0.99, 1.0, 1.02,
        ];
        assert!((median_step(&d[..4]) - 0.02).abs() < 1e-12);
        // After index 4 (the disturbance): steps 1.0, 0.5, 0.4, 0.1, 0.01, 0.02, 0.01, 0.02.
        assert_eq!(stable_at(&d, 4, 3, 0.05), Some(11));
        assert_eq!(stable_at(&d, 4, 5, 0.05), None);
        assert_eq!(stable_at(&d, 4, 4, 0.05), Some(12));
        // The floor: identical baseline sets still give a usable threshold.
        assert!((threshold(&[2.0, 2.0, 2.0]) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn a_perfectly_elastic_transition_scores_zero() {
        // Constant set times throughout: no area above the ramp, no deviation band.
        let sets = timeline(&[1.0; 40]);
        let events = Events {
            scale_issued_s: 10.0,
            scale_done_s: Some(12.0),
            transfers_done_s: Some(15.0),
            stable_s: Some(20.0),
        };
        let s = score(&sets, 100, 4, &events, 5);
        // Dory's charts' minutes: the areas and the score a sixtieth of the seconds'.
        let m = s.clone().on_time_axis(TimeAxis::Minutes);
        assert_eq!(m.time_axis, TimeAxis::Minutes);
        assert!((m.elasticity.unwrap() * 60.0 - s.elasticity.unwrap()).abs() < 1e-9);
        assert!((m.area_above_ramp.unwrap() * 60.0 - s.area_above_ramp.unwrap()).abs() < 1e-9);
        assert_eq!(m.av_before_s, s.av_before_s);
        assert_eq!(s.av_before_s, 1.0);
        assert_eq!(s.av_after_s, Some(1.0));
        assert!((s.rt_before_s - 0.04).abs() < 1e-12);
        assert!(s.area_above_ramp.unwrap().abs() < 1e-9);
        assert!(s.sd_band_area.unwrap().abs() < 1e-9);
        assert!(s.elasticity.unwrap().abs() < 1e-9);
        assert_eq!(s.change_in_transition, Some(0.0));
        assert_eq!(
            (s.stabilisation_s, s.data_transfer_s, s.additional_s),
            (Some(10.0), Some(5.0), Some(5.0))
        );
    }

    #[test]
    fn areas_match_a_known_bump() {
        // Sets of 0.1 s, one bump of 0.2 s extra during [10, 11): the curve follows it closely;
        // A is about 0.2 x 1 s plus the spline's overshoot, the band covers the bump's deviation.
        let mut d = vec![0.1; 200];
        for v in d.iter_mut().skip(100).take(10) {
            *v = 0.3;
        }
        let sets = timeline(&d);
        let t_e = sets[95].start_s;
        let t_s = sets[130].start_s;
        let events = Events {
            scale_issued_s: t_e,
            stable_s: Some(t_s),
            ..Default::default()
        };
        let s = score(&sets, 10, 1, &events, 5);
        let a = s.area_above_ramp.unwrap();
        // The bump spans 10 sets of 0.3 s: 3 s of time at 0.2 s above the ramp (Av1 = Av2 = 0.1).
        assert!((a - 0.6).abs() < 0.06, "A = {a}");
        assert!(s.sd_band_area.unwrap() > 0.0);
        let e = (a + s.sd_band_area.unwrap()) / ((0.01 + 0.01) * (0.1 + 0.1));
        assert!((s.elasticity.unwrap() - e).abs() < 1e-9);
        // The ramp: with Av2 twice Av1 and the curve on the ramp, A is nearly 0 (what remains is the
        // half-set offset of midpoints and the spline's overshoot at the corners: under a tenth of
        // the bump's area above).
        let ramped: Vec<f64> = (0..100)
            .map(|k| {
                if k < 40 {
                    0.1
                } else if k < 60 {
                    0.1 + 0.005 * (k - 39) as f64
                } else {
                    0.2
                }
            })
            .collect();
        let sets = timeline(&ramped);
        let events = Events {
            scale_issued_s: sets[40].start_s,
            stable_s: Some(sets[60].start_s),
            ..Default::default()
        };
        let s = score(&sets, 10, 1, &events, 5);
        assert!(s.area_above_ramp.unwrap() < 0.05, "{:?}", s.area_above_ramp);
        assert!((s.change_in_transition.unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn failures_in_the_transition_give_restricted_elasticity() {
        let mut raw = sets(&[1.0; 30]);
        raw[12].failed = 5;
        raw[14].failed = 15;
        let sets = repeated(&raw, 1);
        let events = Events {
            scale_issued_s: 10.0,
            stable_s: Some(20.0),
            ..Default::default()
        };
        let s = score(&sets, 100, 2, &events, 5);
        assert_eq!(s.failed_in_transition, 20);
        assert!((s.failed_share - 20.0 / 1000.0).abs() < 1e-12);
        assert_eq!(s.full_availability_s, Some(5.0));
        // Not stable: no areas, but the failures and the transfer time still count.
        let open = Events {
            scale_issued_s: 10.0,
            transfers_done_s: Some(13.0),
            ..Default::default()
        };
        let s = score(&sets, 100, 2, &open, 5);
        assert_eq!((s.elasticity, s.data_transfer_s), (None, Some(3.0)));
        assert_eq!(s.failed_in_transition, 20);
    }

    #[test]
    fn repeated_sets_are_points_with_their_own_deviation() {
        // 30 sets run 3 times each: 1.0, 1.2, 0.8 -> mean 1.0, sd 0.2; the last incomplete group
        // (one set) is left out.
        let mut d: Vec<f64> = [1.0, 1.2, 0.8].repeat(30);
        d.push(5.0);
        let mut raw = sets(&d);
        raw[4].failed = 2;
        let points = repeated(&raw, 3);
        assert_eq!(points.len(), 30);
        assert!((points[0].mean_s - 1.0).abs() < 1e-12);
        assert!((points[0].sd_s - 0.2).abs() < 1e-12);
        assert_eq!((points[1].failed, points[1].runs), (2, 3));
        assert!((points[1].start_s - 3.0).abs() < 1e-12 && (points[1].end_s - 6.0).abs() < 1e-12);
        // B is the band of each point's own deviation: 2 x 0.2 over the transition's 30 s.
        let events = Events {
            scale_issued_s: 30.0,
            stable_s: Some(60.0),
            ..Default::default()
        };
        let s = score(&points, 10, 1, &events, 5);
        assert!((s.sd_band_area.unwrap() - 0.4 * 30.0).abs() < 1e-6, "{s:?}");
        assert!(s.area_above_ramp.unwrap().abs() < 1e-6);
    }

    #[test]
    fn scalability_compares_stable_states_of_doubled_load() {
        // 2 nodes with R = 100; 4 nodes with twice everything and sets 10% slower; then a row that
        // did not double the set size has no scalability.
        let rows = sizes_table(vec![
            SizeRow::new(2, 1000, 4, 100, &[1.0, 1.0]),
            SizeRow::new(4, 2000, 8, 200, &[1.1, 1.1]),
            SizeRow::new(8, 4000, 16, 200, &[1.0, 1.0]),
        ]);
        assert_eq!(rows[0].scalability, None);
        assert!((rows[1].scalability.unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(rows[2].scalability, None);
        assert!((rows[1].mean_s - 1.1).abs() < 1e-12 && rows[1].sd_s.abs() < 1e-12);
    }

    #[test]
    fn an_open_loop_dip_costs_its_missing_operations() {
        // 1000 ops/s, a dip to 500 ops/s for 4 intervals from t = 20 s, back at 1000.
        let points: Vec<IntervalPoint> = (0..60)
            .map(|i| IntervalPoint {
                start_s: i as f64,
                duration_s: 1.0,
                ok: if (20..24).contains(&i) { 500 } else { 1000 },
                failed: u64::from(i == 21) * 10,
                p99_us: if (20..24).contains(&i) {
                    9000.0
                } else {
                    1000.0
                },
            })
            .collect();
        let events = Events {
            scale_issued_s: 19.0,
            transfers_done_s: Some(24.0),
            stable_s: Some(30.0),
            ..Default::default()
        };
        let s = score_open_loop(&points, &events);
        assert_eq!(s.throughput_before_ops_s, 1000.0);
        assert_eq!(s.throughput_after_ops_s, Some(1000.0));
        // About 4 s x 500 ops/s missing; the spline rounds the dip's corners.
        let lost = s.throughput_lost_ops.unwrap();
        assert!((lost - 2000.0).abs() < 250.0, "{lost}");
        assert_eq!(s.p99_transition_max_us, 9000.0);
        assert_eq!((s.p99_before_us, s.p99_after_us), (1000.0, Some(1000.0)));
        assert_eq!(s.failed_in_transition, 10);
        assert_eq!(s.full_availability_s, Some(3.0));
        assert_eq!((s.stabilisation_s, s.additional_s), (Some(11.0), Some(6.0)));
    }
}
