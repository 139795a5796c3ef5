//! `saturate --replay CAPTURE` (issue 66): how many times today's traffic fits. Each step replays
//! the whole capture ([`scalebench_session::replay`]) at a speed-up K, its operations due at their
//! captured times divided by K; the search is the rate search of [`super`], the offered rate of a
//! step being K times the capture's own (the operations that run by key over its span), so the
//! bracketing, bisection, repetitions and verdicts are those of any rate search. Two things differ:
//! a step lasts the capture's span / K (no `--duration`), and its stationarity test compares each
//! interval's completions with the operations due in it (the capture's shape), not with a constant
//! rate. The answer is the highest K that passed, with the bisection's bracket in speed-ups.

use std::time::Duration;

use scalebench_measure::saturation::{Answer, ReplaySpeed};
use scalebench_session::error::SessionError;
use scalebench_session::replay::{ReplayRequest, MAX_SPEED};
use scalebench_session::request::RunRequest;
use scalebench_workload::rate::Pace;

/// A replay's run records intervals of at most this share of its span (ten points at least for
/// the trend test), and no shorter than the search's shortest.
const INTERVALS_PER_RUN: f64 = 10.0;

/// The capture a search replays, read once before anything connects.
pub struct ReplaySteps {
    request: ReplayRequest,
    /// Its span, first operation to last, in seconds.
    span_s: f64,
    /// Its rate as captured: what runs on the database (by key, and statements on a database of
    /// their kind), copies included, over its span.
    captured_ops_s: f64,
}

impl ReplaySteps {
    /// Reads the capture: one that cannot be replayed ([`ReplayRequest::checked`]) or has no span
    /// to speed up is bad input (one line, exit 2). `db`: the database it is replayed on.
    pub fn read(request: &ReplayRequest, db: Option<&str>) -> Result<ReplaySteps, SessionError> {
        let (format, summary) = request.checked(db)?;
        let runnable = ReplayRequest::runnable(format, &summary, db);
        let span_s = summary.span_s();
        if span_s <= 0.0 {
            return Err(SessionError::Usage(format!(
                "{}: its operations have one time: no rate to speed up",
                request.capture.display()
            )));
        }
        Ok(ReplaySteps {
            request: request.clone(),
            span_s,
            captured_ops_s: runnable as f64 * f64::from(request.copies) / span_s,
        })
    }

    /// The capture's rate: the offered rate of a step at speed 1.
    pub fn captured_ops_s(&self) -> f64 {
        self.captured_ops_s
    }

    /// The request of a run of the step offering `offered` ops/s: the capture at `offered /
    /// captured` times its speed, with `step`'s binding and threads, its intervals a tenth of the
    /// replay's span (not shorter than `shortest`). Run here or by each client of a launcher, it
    /// replays (`RunRequest::replay`).
    pub fn step_request(
        &self,
        step: &RunRequest,
        (offered, shortest): (f64, Duration),
    ) -> RunRequest {
        let mut replay = self.request.clone();
        replay.speed = (offered / self.captured_ops_s).clamp(1.0 / MAX_SPEED, MAX_SPEED);
        let mut run = step.clone();
        run.pace = Pace::Inherit;
        let span = Duration::from_secs_f64(self.span_s / replay.speed / INTERVALS_PER_RUN);
        run.interval = run.interval.min(span).max(shortest);
        run.replay = Some(replay);
        run
    }

    /// The search's answer as speed-ups of the capture.
    pub fn answer(&self, answer: &Answer) -> ReplaySpeed {
        let speed = |ops: Option<f64>| ops.map(|o| o / self.captured_ops_s);
        ReplaySpeed {
            capture: self.request.capture.display().to_string(),
            captured_ops_s: self.captured_ops_s,
            copies: self.request.copies,
            speed: speed(answer.rate_ops_s),
            bracket_low_speed: speed(answer.bracket_low_ops_s),
            bracket_high_speed: speed(answer.bracket_high_ops_s),
        }
    }
}
