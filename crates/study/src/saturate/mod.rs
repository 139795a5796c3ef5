//! `scalebench saturate`: the highest rate a configuration sustains within a latency objective, from
//! one client or from N as one run, with the interval the answer lies in.
//!
//! **Rate search** (open loop). Bracketing: offer `start_rate`, then `factor` times more at each
//! step until a step fails; bisection: halve the bracket between the highest rate that passed and
//! the lowest that failed until it is narrower than `resolution` of the rate. A step passes when it
//! kept up (at least 95% of its offered rate completed *inside* the window: an overloaded open loop
//! finishes its backlog in the grace period, and those late completions do not count as sustained),
//! was stationary (no run's latency rose, nor its completions fell, through its window: a queue
//! that grows through a step is a rate above the capacity, whatever its p99 reached in the step's
//! length) and every objective (`--p99`, `--p999`, `--max-error-rate`) holds at 95% confidence; it
//! fails when it did not keep up, trended, or an objective is broken at 95%; otherwise it is
//! unsure, and counts as failed. The answer is the highest rate that passed, with the bisection's
//! bracket (`bracket_low_ops_s`, `bracket_high_ops_s`: the highest rate that passed and the lowest
//! that failed above it, not a confidence interval). [`step`] says how each step is judged.
//!
//! Each run of a step records intervals of at most a tenth of its window (the trend test needs ten
//! points); runs are at least `pause` apart (and, on a deployment, each waits until the cluster is
//! idle), so that what one run left queued in the database is not measured by the next, and
//! repetitions of a step pooled as independent are. A step runs again (another repetition, its
//! sections pooled) until its percentile's interval's half-width is within `precision` of the
//! estimate, or `max_repeats` runs were made. A step already failed at 95% (behind its rate,
//! trending, or its interval's lower end beyond the objective) is not repeated: no run could make
//! it pass. Lancet (Kogias et al., USENIX ATC 2019) stops a measurement the same way once its
//! percentile's interval is narrow enough, after testing its samples for stationarity.
//!
//! **From N clients** ([`StepClients::Launched`]): every run of a step is one coordinated run of
//! the launcher's clients (one start, each its share of the step's rate, merged by histogram); this
//! process decides the next step from the merged result, so no client runs a step the others have
//! not agreed on, and the clients agree on the run's definition at each start as `run` does. A
//! client lost ends the search with what was measured ([`SearchEnd::Incomplete`], exit 3). A step
//! that failed with a client's CPU saturated while the database still served every operation in
//! time once it was started (its service-time p99 within the objective) ends the search as
//! client-bound: the clients started the operations late, so its rate says what they could offer,
//! not what the database sustains ([`database_answered_in_time`]).
//!
//! **Thread search** (closed loop, Wegert's calibration): 1, 2, 4, ... threads per client; the
//! answer is the largest count where doubling still raised throughput by a larger factor than
//! mean latency.

use std::path::PathBuf;
use std::time::Duration;

use scalebench_distributed::etcd::RendezvousUrl;
use scalebench_distributed::series::{self, Order};
use scalebench_distributed::Launcher;
use scalebench_exec::Phase;
use scalebench_measure::{PhaseResult, RunResult};
use scalebench_session::clients::ClientShare;

use scalebench_session::error::SessionError;
use scalebench_session::execute::execute;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::RunWiring;
use scalebench_workload::rate::{Pace, Rate, MAX_RATE_OPS_S, MIN_RATE_OPS_S};

pub use scalebench_measure::saturation::{
    Answer, Estimate, Search, SearchEnd, SearchKind, Step, StepVerdict,
};

mod objective;
pub mod replay;
pub mod step;

pub use objective::Objective;
use replay::ReplaySteps;
use step::{database_answered_in_time, judge, step_line, Pooled};

/// A run of a step records intervals of at most this share of its window: ten points at least for
/// the trend test.
const INTERVALS_PER_RUN: u32 = 10;
/// The shortest interval a step's run is given.
const SHORTEST_INTERVAL: Duration = Duration::from_millis(50);
/// At most this many runs of one step.
pub const MAX_REPEATS: u32 = 20;

/// Who runs each step.
pub enum StepClients {
    /// This process alone.
    Here,
    /// The launcher's clients, every run of a step one coordinated run of them all.
    Launched(Box<dyn Launcher + Send + Sync>),
    /// This process is one client of a search whose clients meet at a rendezvous (started by srun
    /// or Kubernetes): client 0 leads ([`search`]), the others follow its orders ([`follow`]).
    Rendezvous {
        url: RendezvousUrl,
        share: ClientShare,
        start_timeout: Duration,
    },
}

impl StepClients {
    /// Who runs the steps the client options ask for: a launcher's clients, this process as one
    /// client of a search that meets at a rendezvous (srun, Kubernetes), or this process alone.
    pub fn chosen(
        clients: &scalebench_distributed::choice::Clients,
    ) -> Result<StepClients, SessionError> {
        if let Some(launcher) = clients.launcher()? {
            return Ok(StepClients::Launched(launcher));
        }
        Ok(match clients.rendezvous_client()? {
            Some((url, share)) => StepClients::Rendezvous {
                url,
                share,
                start_timeout: clients.local.start_timeout,
            },
            None => StepClients::Here,
        })
    }

    fn count(&self) -> u32 {
        match self {
            StepClients::Here => 1,
            StepClients::Launched(l) => l.clients(),
            StepClients::Rendezvous { share, .. } => share.clients,
        }
    }

    /// A client of a rendezvous search other than client 0: it follows ([`follow`]).
    pub fn follows(&self) -> bool {
        matches!(self, StepClients::Rendezvous { share, .. } if share.index != 0)
    }
}

/// A saturation search: the run every step starts from, and how the steps grow.
pub struct SaturationRequest {
    pub run: RunRequest,
    /// Thread counts 1, 2, 4, ... in a closed loop instead of offered rates.
    pub threads_search: bool,
    /// Offered rate of the first step (ops/s), rate search.
    pub start_rate: f64,
    /// Bracketing: each step offers this many times the previous one.
    pub factor: f64,
    pub max_steps: u32,
    pub objective: Objective,
    /// Bisection ends when the bracket is narrower than this share of its lower end (0.02).
    pub resolution: f64,
    /// A step is repeated until its percentile's 95% half-width is within this share of it.
    pub precision: f64,
    pub max_repeats: u32,
    /// HDR interval logs of step N into `DIR/step-N` (this process alone).
    pub hdr_log: Option<PathBuf>,
    pub clients: StepClients,
    /// At least this long between two runs (the database works off what a run left queued).
    pub pause: Duration,
    /// Speed-ups of this capture instead of rates (`--replay`): each step replays it whole.
    pub replay: Option<scalebench_session::replay::ReplayRequest>,
}

/// One run of a step, merged over its clients.
struct Measured {
    result: RunResult,
    /// Each client's own run phase (this process's alone), for its resources.
    own: Vec<PhaseResult>,
    /// A client left no result: what the launcher said.
    incomplete: Option<String>,
}

impl SaturationRequest {
    /// The search's parameters checked, before anything runs.
    pub fn check(&self) -> Result<(), SessionError> {
        let bad = |flag: &str, value: String, why: &str| {
            Err(SessionError::Usage(format!(
                "invalid value '{value}' for '{flag}': {why}"
            )))
        };
        if !(self.factor > 1.0 && self.factor.is_finite()) {
            return bad("--factor", self.factor.to_string(), "must exceed 1");
        }
        if !(self.start_rate > 0.0 && self.start_rate.is_finite()) {
            return bad(
                "--start-rate",
                self.start_rate.to_string(),
                "must be positive",
            );
        }
        if !(self.resolution > 0.0 && self.resolution < 1.0) {
            return bad(
                "--resolution",
                format!("{}", self.resolution * 100.0),
                "expected a percentage above 0 and below 100",
            );
        }
        if !(self.precision > 0.0 && self.precision < 1.0) {
            return bad(
                "--precision",
                format!("{}", self.precision * 100.0),
                "expected a percentage above 0 and below 100",
            );
        }
        if !(1..=MAX_REPEATS).contains(&self.max_repeats) {
            return bad(
                "--max-repeats",
                self.max_repeats.to_string(),
                &format!("expected 1 to {MAX_REPEATS}"),
            );
        }
        if let Some(e) = self.objective.max_error_rate {
            if !(0.0..1.0).contains(&e) {
                return bad(
                    "--max-error-rate",
                    format!("{}", e * 100.0),
                    "expected a percentage from 0 to below 100",
                );
            }
        }
        if let Some(p) = scalebench_session::settings::requested_rate_profile(&self.run)? {
            return bad(
                "--rate-profile",
                p.to_string(),
                "the search offers each step its own constant rate (a workload's rate profile too)",
            );
        }
        if self.threads_search && (self.objective != Objective::default()) {
            return Err(SessionError::Usage(
                "--threads-search takes no --p99, --p999 or --max-error-rate: Wegert's rule compares throughput and mean latency".into(),
            ));
        }
        if self.replay.is_some() {
            self.check_replay()?;
        }
        if self.hdr_log.is_some() && !matches!(self.clients, StepClients::Here) {
            return Err(SessionError::Usage(
                "--hdr-log is not supported with --clients or --rendezvous yet: each step's merged result is in --output".into(),
            ));
        }
        Ok(())
    }

    /// The capture of a search over its speed-ups, read (and refused if bad: exit 2), if any.
    fn replay_steps(&self) -> Result<Option<ReplaySteps>, SessionError> {
        let db = self.run.db.as_deref();
        let replay = self.replay.as_ref();
        replay.map(|r| ReplaySteps::read(r, db)).transpose()
    }

    /// With clients beyond this process: the run each client makes checked as theirs; live metrics
    /// (`metrics`) refused.
    pub fn check_clients(&self, metrics: bool) -> Result<(), SessionError> {
        if matches!(self.clients, StepClients::Here) {
            return Ok(());
        }
        self.run.check(
            scalebench_session::request::Processes::clients(false),
            &[Phase::Run],
        )?;
        if metrics {
            return Err(SessionError::Usage(
                "--metrics-listen is not supported with --clients or --rendezvous yet".into(),
            ));
        }
        Ok(())
    }

    /// What a search over speed-ups of a capture cannot take, refused before anything runs.
    fn check_replay(&self) -> Result<(), SessionError> {
        if self.threads_search {
            return Err(SessionError::Usage(
                "--threads-search (a replay searches speed-ups of its capture): does not apply to saturate --replay".into(),
            ));
        }
        scalebench_session::replay::refuse_what_does_not_apply(&self.run)
    }

    /// Run `repeat` of step `step` (both from 1): here, or by the launcher's clients (run `n` of
    /// the series); a replay's step replays its capture at the step's speed-up.
    fn measure_once(
        &self,
        (offered, replay): (f64, Option<&ReplaySteps>),
        wiring: &RunWiring,
        (step, repeat, n): (usize, u32, u32),
    ) -> Result<Measured, SessionError> {
        let request = &self.step_request(offered, replay);
        match &self.clients {
            StepClients::Here => {
                let mut executed = execute(request, wiring, &[Phase::Run])?;
                executed.warn_unwritten();
                if let Some(dir) = &self.hdr_log {
                    let name = match repeat {
                        1 => format!("step-{step}"),
                        r => format!("step-{step}-repeat-{r}"),
                    };
                    executed.write_hdr_logs(&dir.join(name))?;
                }
                let own = executed.result.phases.last().cloned().into_iter().collect();
                Ok(Measured {
                    result: executed.result,
                    own,
                    incomplete: None,
                })
            }
            StepClients::Rendezvous {
                url,
                share,
                start_timeout,
            } => {
                series::publish(url, n, &Order::Run { offered })?;
                let run = url.series_run(n);
                let keep = scalebench_distributed::client::default_keep_path(&run, Phase::Run, 0);
                let ran = scalebench_distributed::client::run_client(
                    request,
                    Phase::Run,
                    &run,
                    *share,
                    *start_timeout,
                    (keep, &Default::default()),
                )?;
                let scalebench_distributed::client::ClientRun::Merged { outcome, .. } = ran else {
                    unreachable!("client 0 of a rendezvous run merges");
                };
                Ok(Self::merged(outcome))
            }
            StepClients::Launched(launcher) => {
                let outcome =
                    launcher
                        .for_run(&format!("run-{n}"))
                        .launch(request, wiring, Phase::Run)?;
                Ok(Self::merged(outcome))
            }
        }
    }

    /// One run of the clients, merged; a client that left no result named.
    fn merged(outcome: scalebench_distributed::DistributedOutcome) -> Measured {
        let incomplete = outcome.incomplete().then(|| outcome.notes().join("\n"));
        let own = outcome
            .clients
            .iter()
            .flatten()
            .filter_map(|r| r.phases.last().cloned())
            .collect();
        let mut result = outcome.merged;
        result.interrupted |= outcome.interrupted;
        Measured {
            result,
            own,
            incomplete,
        }
    }

    /// The request of one run of a step offering `offered` (a rate, or threads per client; a
    /// replay's speed-up of its capture).
    fn step_request(&self, offered: f64, replay: Option<&ReplaySteps>) -> RunRequest {
        let mut phase = self.run.clone();
        phase.quiet = true;
        phase.study = self.definition();
        if self.threads_search {
            phase.threads = Some(offered as u32);
            phase.pace = Pace::Closed;
        } else {
            // Past the bounds no schedule keeps a rate (a search of many steps may get there).
            let rate = offered.clamp(MIN_RATE_OPS_S, MAX_RATE_OPS_S);
            phase.pace = Pace::Open(Rate::new(rate).expect("a rate within the bounds"));
            // Ten intervals a run at least, for the trend test.
            if let Some(d) = phase.duration {
                phase.interval = phase
                    .interval
                    .min(d / INTERVALS_PER_RUN)
                    .max(SHORTEST_INTERVAL);
            }
        }
        match replay {
            Some(r) => r.step_request(&phase, (offered, SHORTEST_INTERVAL)),
            None => phase,
        }
    }

    /// What every client of the search must agree on beside each run (refused at the first
    /// barrier otherwise, naming the field).
    pub fn definition(&self) -> std::collections::BTreeMap<String, String> {
        let o = &self.objective;
        let or_none = |v: Option<String>| v.unwrap_or_else(|| "none".into());
        let duration =
            |d: Option<Duration>| or_none(d.map(|d| humantime::format_duration(d).to_string()));
        [
            (
                "search",
                if self.threads_search {
                    "threads"
                } else {
                    "rate"
                }
                .to_string(),
            ),
            ("search start rate", self.start_rate.to_string()),
            ("search factor", self.factor.to_string()),
            ("search max steps", self.max_steps.to_string()),
            ("search p99", duration(o.p99)),
            ("search p99.9", duration(o.p999)),
            (
                "search max error rate",
                or_none(o.max_error_rate.map(|e| e.to_string())),
            ),
            ("search resolution", self.resolution.to_string()),
            ("search precision", self.precision.to_string()),
            ("search max repeats", self.max_repeats.to_string()),
            (
                "search replay",
                or_none(
                    self.replay
                        .as_ref()
                        .map(|r| r.capture.display().to_string()),
                ),
            ),
            (
                "search pause",
                humantime::format_duration(self.pause).to_string(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Decides after each step of a thread search whether to go on (Wegert: while doubling threads
/// multiplies throughput by more than it multiplies mean latency, `scalebench_stats::knee`, which
/// says why the mean); returns (knee, rule) once it stops.
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

/// Where a rate search stands: the highest rate that passed and the lowest that did not.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bracket {
    pub passed: Option<(usize, f64)>,
    pub failed: Option<f64>,
}

impl Bracket {
    /// The next rate to offer, or None when the bracket is within `resolution`.
    pub fn next(&self, start: f64, factor: f64, resolution: f64) -> Option<f64> {
        match (self.passed, self.failed) {
            (None, None) => Some(start),
            (Some((_, lo)), None) => Some(lo * factor),
            // Nothing passed yet: step down geometrically until something does.
            (None, Some(hi)) => Some(hi / factor),
            (Some((_, lo)), Some(hi)) => (hi - lo > resolution * lo).then_some((lo + hi) / 2.0),
        }
    }
}

/// Runs the search until its rule ends it (or `max_steps`, a client lost, Ctrl-C); prints one line
/// per step. Client 0 of a rendezvous search leads it: its last order tells the others it ended.
pub fn search(request: &SaturationRequest, wiring: &RunWiring) -> Result<Search, SessionError> {
    request.check()?;
    if request.clients.follows() {
        return Err(SessionError::Usage(
            "a client other than 0 follows the search (scalebench_study::saturate::follow)".into(),
        ));
    }
    // A capture is read, and refused if bad, before anything connects.
    let replay = request.replay_steps()?;
    let _lead = match &request.clients {
        StepClients::Rendezvous { url, .. } => {
            scalebench_distributed::share::check_client(
                &request.step_request(request.start_rate, replay.as_ref()),
                Phase::Run,
            )?;
            Some(series::lead(url)?)
        }
        _ => None,
    };
    let mut runs = 0u32;
    let found = search_steps(request, wiring, replay.as_ref(), &mut runs);
    if let StepClients::Rendezvous { url, .. } = &request.clients {
        let why = match &found {
            Ok(s) => s.stopped_by.clone(),
            Err(e) => format!("client 0 failed: {e}"),
        };
        // The followers wait for this end; were it lost, their wait's bound ends them.
        if let Err(e) = series::publish(url, runs + 1, &Order::End { why }) {
            scalebench_session::note!(
                "warning: the other clients were not told the search ended: {e}"
            );
        }
    }
    found
}

/// How a follower's part of a rendezvous search ended.
#[derive(Debug)]
pub struct Followed {
    pub runs: u32,
    /// Client 0's reason to end the search.
    pub ended_by: String,
    pub interrupted: bool,
    /// A run's result could not be handed back (kept on this machine only).
    pub incomplete: bool,
}

/// A client other than 0 of a rendezvous search: runs each step client 0 orders, with the others,
/// until the end order; each run's result kept on this machine and handed back as in any
/// rendezvous run. The first order is awaited for `start_timeout`, each later one for a run's end
/// margin beyond it: a leader that is gone ends the follower (exit 3) with what it kept.
pub fn follow(request: &SaturationRequest) -> Result<Followed, SessionError> {
    request.check()?;
    let StepClients::Rendezvous {
        url,
        share,
        start_timeout,
    } = &request.clients
    else {
        return Err(SessionError::Usage(
            "only a rendezvous search has followers".into(),
        ));
    };
    // Each follower reads the capture too: client 0 orders rates, the capture says their speed.
    let replay = request.replay_steps()?;
    scalebench_distributed::share::check_client(
        &request.step_request(request.start_rate, replay.as_ref()),
        Phase::Run,
    )?;
    let mut wait = *start_timeout;
    let mut k = 1u32;
    let mut followed = Followed {
        runs: 0,
        ended_by: String::new(),
        interrupted: false,
        incomplete: false,
    };
    loop {
        let offered = match series::await_order(url, k, wait)? {
            Order::End { why } => {
                followed.ended_by = why;
                return Ok(followed);
            }
            Order::Run { offered } => offered,
        };
        let step = request.step_request(offered, replay.as_ref());
        let run = url.series_run(k);
        let keep = scalebench_distributed::client::default_keep_path(&run, Phase::Run, share.index);
        let ran = scalebench_distributed::client::run_client(
            &step,
            Phase::Run,
            &run,
            *share,
            *start_timeout,
            (keep, &Default::default()),
        )
        .map_err(|e| match e {
            // The leader killed after ordering this run never joins it: that is a client missing
            // (exit 3), as when it is gone between runs, not a failed run.
            SessionError::Failed(why) if series::leader_gone(url) => {
                SessionError::Incomplete(format!(
                    "client 0 of the search at {} is gone (its key in etcd expired) during run {k}: {why}; what this client measured is kept",
                    url.display()
                ))
            }
            e => e,
        })?;
        if let scalebench_distributed::client::ClientRun::Own {
            result,
            hand_back_error,
            ..
        } = ran
        {
            followed.runs += 1;
            followed.interrupted |= result.interrupted;
            if let Some(e) = hand_back_error {
                scalebench_session::note!(
                    "warning: run {k} of the search: its result was not handed back: {e}"
                );
                followed.incomplete = true;
            }
            if result.interrupted {
                followed.ended_by = "interrupted".into();
                return Ok(followed);
            }
        }
        wait = *start_timeout + scalebench_distributed::client::gather_timeout(&step);
        k += 1;
    }
}

/// One step measured (run again until precise, failed, or out of repeats) and judged.
struct Measurement {
    step: Step,
    /// A client's CPU saturated in its last run (the evidence).
    client_saturated: Option<String>,
    /// The search must end after it (a client lost, Ctrl-C).
    stop: Option<(SearchEnd, String)>,
}

/// Waits `pause` (less while Ctrl-C is pressed): what a run left queued is worked off before the
/// next.
fn pause_between_runs(pause: Duration) {
    let until = std::time::Instant::now() + pause;
    while !scalebench_session::interrupt::interrupt_requested() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

fn measure_step(
    request: &SaturationRequest,
    wiring: &RunWiring,
    (n, offered, replay): (u32, f64, Option<&ReplaySteps>),
    runs: &mut u32,
) -> Result<Measurement, SessionError> {
    let clients = request.clients.count();
    let rate = (!request.threads_search).then_some(offered);
    let mut pooled = Pooled::default();
    let mut stop: Option<(SearchEnd, String)> = None;
    loop {
        if *runs > 0 {
            pause_between_runs(request.pause);
        }
        *runs += 1;
        let measured = request.measure_once(
            (offered, replay),
            wiring,
            (n as usize + 1, pooled.repeats + 1, *runs),
        )?;
        let p = measured
            .result
            .phases
            .last()
            .ok_or_else(|| SessionError::Failed("a step's run left no run phase".into()))?;
        pooled.add(p, &measured.own, rate)?;
        let mut step = pooled.step(offered, clients);
        if let Some(why) = measured.incomplete {
            scalebench_session::note!("{why}");
            stop = Some((SearchEnd::Incomplete, why));
        } else if measured.result.interrupted {
            stop = Some((SearchEnd::Interrupted, "interrupted".into()));
        }
        let precise = step.p99.relative_half_width().is_some_and(|w| {
            w <= request.precision
                && step
                    .p999
                    .relative_half_width()
                    .is_some_and(|w| w <= request.precision || request.objective.p999.is_none())
        });
        // A step already failed at 95% (behind its rate, trending, or beyond the objective) needs
        // no more precision: another run could not make it pass.
        let judged = rate.map(|r| judge(r, &step, pooled.completed, &request.objective));
        let failed = judged
            .as_ref()
            .is_some_and(|(v, _)| *v == StepVerdict::Fail);
        let done = stop.is_some()
            || request.threads_search
            || !request.objective.has_latency()
            || failed
            || precise
            || pooled.repeats >= request.max_repeats;
        if done {
            if let (Some((verdict, why)), None) = (judged, &stop) {
                step.verdict = Some(verdict);
                step.why = why;
            }
            return Ok(Measurement {
                step,
                client_saturated: pooled.client_saturated,
                stop,
            });
        }
    }
}

fn search_steps(
    request: &SaturationRequest,
    wiring: &RunWiring,
    replay: Option<&ReplaySteps>,
    runs: &mut u32,
) -> Result<Search, SessionError> {
    // A replay's first step is the capture at its own speed.
    let start = replay.map_or(request.start_rate, ReplaySteps::captured_ops_s);
    let mut steps: Vec<Step> = Vec::new();
    let mut bracket = Bracket::default();
    let mut end: Option<(SearchEnd, String)> = None;
    let mut thread_knee = None;
    for n in 0..request.max_steps {
        let offered = if request.threads_search {
            f64::from(1u32 << n)
        } else {
            match bracket.next(start, request.factor, request.resolution) {
                Some(r) => r,
                None => {
                    end = Some((
                        SearchEnd::Resolved,
                        format!(
                            "bracket within the resolution, {}% of the rate",
                            request.resolution * 100.0
                        ),
                    ));
                    break;
                }
            }
        };
        let Measurement {
            mut step,
            client_saturated,
            stop,
        } = measure_step(request, wiring, (n, offered, replay), runs)?;
        scalebench_session::note!("{}", step_line(n + 1, request.threads_search, &step));
        let passed = step.verdict == Some(StepVerdict::Pass);
        let last_pass = bracket.passed.map(|(i, _)| &steps[i]);
        if !request.threads_search
            && stop.is_none()
            && !passed
            && database_answered_in_time(&step, last_pass, &request.objective)
        {
            step.client_bound = client_saturated;
        }
        let client_bound = step.client_bound.clone();
        steps.push(step);
        if let Some(s) = stop {
            end = Some(s);
            break;
        }
        if request.threads_search {
            if let Some((k, rule)) = thread_rule(&steps) {
                thread_knee = k;
                end = Some((SearchEnd::Knee, rule));
                break;
            }
            continue;
        }
        if let Some(what) = client_bound {
            end = Some((
                SearchEnd::ClientBound,
                format!(
                    "client-bound at {offered:.0} ops/s: add clients ({what}; the database served every operation in time once started)"
                ),
            ));
            break;
        }
        if passed {
            bracket.passed = Some((steps.len() - 1, offered));
        } else {
            bracket.failed = Some(offered);
        }
    }
    let (ended_by, stopped_by) = end.unwrap_or((
        SearchEnd::MaxSteps,
        format!("--max-steps {} done", request.max_steps),
    ));
    let (knee, answer) = answer_of(request, &steps, bracket, thread_knee, ended_by);
    Ok(Search {
        schema: scalebench_measure::saturation::SCHEMA.into(),
        kind: if request.threads_search {
            SearchKind::Threads
        } else {
            SearchKind::Rate
        },
        replay: replay.map(|r| r.answer(&answer)),
        answer,
        steps,
        knee,
        stopped_by,
    })
}

/// The knee's index and the answer, once the search ended.
fn answer_of(
    request: &SaturationRequest,
    steps: &[Step],
    bracket: Bracket,
    thread_knee: Option<usize>,
    ended_by: SearchEnd,
) -> (Option<usize>, Answer) {
    let clients = request.clients.count();
    if request.threads_search {
        let knee = thread_knee.or(steps.len().checked_sub(1));
        return (
            knee,
            Answer {
                rate_ops_s: knee.map(|k| steps[k].achieved_ops_s),
                bracket_low_ops_s: None,
                bracket_high_ops_s: None,
                resolution: None,
                clients,
                ended_by,
                objective: "Wegert: doubling threads raises throughput more than mean latency"
                    .into(),
                p99_limit_us: None,
                p999_limit_us: None,
            },
        );
    }
    (
        bracket.passed.map(|(i, _)| i),
        Answer {
            rate_ops_s: bracket.passed.map(|(_, r)| r),
            bracket_low_ops_s: bracket.passed.map(|(_, r)| r),
            bracket_high_ops_s: bracket
                .failed
                .filter(|_| ended_by != SearchEnd::ClientBound),
            resolution: Some(request.resolution),
            clients,
            ended_by,
            objective: request.objective.describe(),
            p99_limit_us: request.objective.p99.map(|d| d.as_secs_f64() * 1e6),
            p999_limit_us: request.objective.p999.map(|d| d.as_secs_f64() * 1e6),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step of a thread search: `achieved` ops/s at `mean` us.
    pub(crate) fn step(offered: f64, achieved: f64, mean: f64) -> Step {
        let e = Estimate {
            us: 0.0,
            low_us: None,
            high_us: None,
            method: None,
            sections: 0,
        };
        Step {
            offered,
            achieved_ops_s: achieved,
            p99_us: 0.0,
            service_p99_us: 0.0,
            mean_us: mean,
            failed: 0,
            p99: e,
            p999: e,
            error_rate: 0.0,
            repeats: 1,
            trends: Vec::new(),
            clients: 1,
            bounded_by: None,
            client_bound: None,
            client_cost: None,
            verdict: None,
            why: String::new(),
        }
    }

    #[test]
    fn bracketing_then_bisection_to_the_resolution() {
        let mut b = Bracket::default();
        assert_eq!(b.next(100.0, 2.0, 0.02), Some(100.0));
        b.passed = Some((0, 100.0));
        assert_eq!(b.next(100.0, 2.0, 0.02), Some(200.0));
        b.failed = Some(200.0);
        assert_eq!(b.next(100.0, 2.0, 0.02), Some(150.0));
        b.passed = Some((2, 150.0));
        b.failed = Some(152.0);
        assert_eq!(b.next(100.0, 2.0, 0.02), None, "within 2% of 150");
        let down = Bracket {
            passed: None,
            failed: Some(100.0),
        };
        assert_eq!(down.next(100.0, 2.0, 0.02), Some(50.0));
    }

    #[test]
    fn a_step_of_a_run_interval_gives_ten_intervals_at_least() {
        let mut run = RunRequest::new("a");
        run.duration = Some(Duration::from_secs(3));
        run.interval = Duration::from_secs(1);
        let request = SaturationRequest {
            run,
            threads_search: false,
            start_rate: 100.0,
            factor: 2.0,
            max_steps: 3,
            objective: Objective::default(),
            resolution: 0.02,
            precision: 0.1,
            max_repeats: 1,
            hdr_log: None,
            clients: StepClients::Here,
            pause: Duration::ZERO,
            replay: None,
        };
        assert_eq!(
            request.step_request(100.0, None).interval,
            Duration::from_millis(300)
        );
        let mut short = request.run.clone();
        short.duration = Some(Duration::from_millis(200));
        let request = SaturationRequest {
            run: short,
            ..request
        };
        assert_eq!(
            request.step_request(100.0, None).interval,
            SHORTEST_INTERVAL
        );
    }

    #[test]
    fn wegert_thread_rule() {
        // 1 -> 2 threads: x1.9 throughput, x1.05 latency: go on; 2 -> 4: x1.1 throughput, x1.8 latency: stop at 2.
        let mut s = vec![step(1.0, 1000.0, 1000.0), step(2.0, 1900.0, 1050.0)];
        assert!(thread_rule(&s).is_none());
        s.push(step(4.0, 2090.0, 1890.0));
        assert_eq!(thread_rule(&s).unwrap().0, Some(1));
    }
}
