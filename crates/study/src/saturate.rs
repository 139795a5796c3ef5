//! `scalebench saturate`: the maximum sustainable throughput of one configuration.
//!
//! Rate search (open loop): offer `start_rate`, then `factor` times more at each step, until a step
//! cannot keep up (completions in the window below 95% of the offered rate), throughput stops
//! rising (less than 2% over the previous step), or the p99 from the intended start breaks the
//! objective. The knee is the last step that held. Throughput counts operations *completed inside
//! the measurement window*: an overloaded open-loop run finishes its backlog in the grace period,
//! and those late completions (`ok_after_window`) do not count as sustained.
//!
//! Thread search (closed loop, Wegert's calibration): 1, 2, 4, ... threads; the answer is the largest
//! count where doubling still raised throughput by a larger factor than mean latency.

use std::path::PathBuf;
use std::time::Duration;

use scalebench_exec::Phase;
use scalebench_measure::PhaseResult;

use scalebench_session::error::SessionError;
use scalebench_session::phase::execute_phases;
use scalebench_session::request::RunRequest;

/// A saturation search: the run every step starts from, and how the steps grow.
#[derive(Debug, Clone)]
pub struct SaturationRequest {
    pub run: RunRequest,
    /// Thread counts 1, 2, 4, ... in a closed loop instead of offered rates.
    pub threads_search: bool,
    /// Offered rate of the first step (ops/s), rate search.
    pub start_rate: f64,
    /// Each step offers this many times the previous one, rate search.
    pub factor: f64,
    pub max_steps: u32,
    /// A step whose p99 from the intended start exceeds this ends the rate search.
    pub p99_limit: Option<Duration>,
    /// HDR interval logs of step N into `DIR/step-N`.
    pub hdr_log: Option<PathBuf>,
}

pub use scalebench_measure::saturation::{Search, SearchKind, Step};

fn step_of(offered: f64, p: &PhaseResult) -> Step {
    let latencies: Vec<_> = p
        .operations
        .values()
        .filter_map(|o| {
            if p.open_loop {
                o.intended_latency.as_ref()
            } else {
                o.latency.as_ref()
            }
        })
        .collect();
    // The worst operation's p99 against the objective; the mean over every operation for the knee.
    let p99_us = latencies.iter().map(|l| l.p99_us).fold(0.0, f64::max);
    let count: u64 = latencies.iter().map(|l| l.count).sum();
    let mean_us = latencies
        .iter()
        .map(|l| l.mean_us * l.count as f64)
        .sum::<f64>()
        / count.max(1) as f64;
    Step {
        offered,
        // Completions inside the window: an overloaded step shows what was served, not offered.
        achieved_ops_s: p.totals.throughput_ops_s,
        p99_us,
        mean_us,
        failed: p.totals.failed,
    }
}

/// Decides after each step whether to go on; returns (knee, rule) once it stops.
pub fn rate_rule(steps: &[Step], p99_limit_us: Option<f64>) -> Option<(Option<usize>, String)> {
    let i = steps.len() - 1;
    let s = &steps[i];
    let prev = i.checked_sub(1);
    if let Some(limit) = p99_limit_us {
        if s.p99_us > limit {
            return Some((
                prev,
                format!(
                    "p99 {:.0} us above the objective {limit:.0} us at {:.0} ops/s",
                    s.p99_us, s.offered
                ),
            ));
        }
    }
    if s.achieved_ops_s < 0.95 * s.offered {
        return Some((
            prev,
            format!(
                "cannot keep up: {:.0} ops/s completed of {:.0} offered",
                s.achieved_ops_s, s.offered
            ),
        ));
    }
    if let Some(p) = prev {
        if s.achieved_ops_s < steps[p].achieved_ops_s * 1.02 {
            return Some((Some(p), "throughput stopped rising (< 2% more)".into()));
        }
    }
    None
}

/// Wegert: go on while doubling threads multiplies throughput by more than it multiplies mean
/// latency (`scalebench_stats::knee`, which says why the mean).
pub fn thread_rule(steps: &[Step]) -> Option<(Option<usize>, String)> {
    let points: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.achieved_ops_s, s.mean_us))
        .collect();
    let k = scalebench_stats::knee(&points)?;
    let (before, after) = (&steps[k], &steps[k + 1]);
    Some((
        Some(k),
        format!(
            "doubling to {} threads: throughput x{:.2}, mean latency x{:.2}",
            after.offered,
            after.achieved_ops_s / before.achieved_ops_s.max(1e-9),
            after.mean_us / before.mean_us.max(1e-9)
        ),
    ))
}

/// Runs steps until a rule ends the search (or `max_steps`, or Ctrl-C); prints one line per step.
pub fn search(request: &SaturationRequest) -> Result<Search, SessionError> {
    if request.factor <= 1.0 || request.start_rate <= 0.0 {
        return Err(SessionError::Usage(format!(
            "invalid search: --factor {} must exceed 1 and --start-rate {} be positive",
            request.factor, request.start_rate
        )));
    }
    let mut steps = Vec::new();
    let mut end = None;
    for n in 0..request.max_steps {
        let mut phase = request.run.clone();
        phase.quiet = true;
        let offered = if request.threads_search {
            let t = 1u32 << n;
            phase.threads = Some(t);
            phase.target = Some(0.0);
            t as f64
        } else {
            let r = request.start_rate * request.factor.powi(n as i32);
            phase.target = Some(r);
            r
        };
        let mut executed = execute_phases(&phase, &[Phase::Run])?;
        if let Some(dir) = &request.hdr_log {
            executed.write_hdr_logs(&dir.join(format!("step-{}", n + 1)))?;
        }
        let result = executed.result;
        let measured = result.phases.last().expect("a run phase");
        let step = step_of(offered, measured);
        scalebench_session::note!(
            "step {}: {} {:.0} -> {:.0} ops/s, p99 {:.0} us",
            n + 1,
            if request.threads_search {
                "threads"
            } else {
                "offered"
            },
            offered,
            step.achieved_ops_s,
            step.p99_us
        );
        steps.push(step);
        if result.interrupted {
            end = Some((steps.len().checked_sub(2), "interrupted".to_string()));
            break;
        }
        end = if request.threads_search {
            thread_rule(&steps)
        } else {
            rate_rule(&steps, request.p99_limit.map(|d| d.as_secs_f64() * 1e6))
        };
        if end.is_some() {
            break;
        }
    }
    let (knee, stopped_by) = end.unwrap_or((
        steps.len().checked_sub(1),
        format!("{} steps done", steps.len()),
    ));
    Ok(Search {
        kind: if request.threads_search {
            SearchKind::Threads
        } else {
            SearchKind::Rate
        },
        steps,
        knee,
        stopped_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(offered: f64, achieved: f64, p99: f64, mean: f64) -> Step {
        Step {
            offered,
            achieved_ops_s: achieved,
            p99_us: p99,
            mean_us: mean,
            failed: 0,
        }
    }

    #[test]
    fn rate_rules() {
        let mut s = vec![step(100.0, 100.0, 500.0, 100.0)];
        assert!(rate_rule(&s, Some(1000.0)).is_none());
        s.push(step(150.0, 149.0, 600.0, 100.0));
        assert!(rate_rule(&s, Some(1000.0)).is_none());
        s.push(step(225.0, 180.0, 700.0, 100.0));
        let (knee, rule) = rate_rule(&s, Some(1000.0)).unwrap();
        assert_eq!(knee, Some(1));
        assert!(rule.contains("cannot keep up"), "{rule}");
        let slo = vec![
            step(100.0, 100.0, 500.0, 1.0),
            step(150.0, 150.0, 5000.0, 1.0),
        ];
        assert!(rate_rule(&slo, Some(1000.0))
            .unwrap()
            .1
            .contains("objective"));
    }

    #[test]
    fn wegert_thread_rule() {
        // 1 -> 2 threads: x1.9 throughput, x1.05 latency: go on; 2 -> 4: x1.1 throughput, x1.8 latency: stop at 2.
        let mut s = vec![
            step(1.0, 1000.0, 0.0, 1000.0),
            step(2.0, 1900.0, 0.0, 1050.0),
        ];
        assert!(thread_rule(&s).is_none());
        s.push(step(4.0, 2090.0, 0.0, 1890.0));
        assert_eq!(thread_rule(&s).unwrap().0, Some(1));
    }
}
