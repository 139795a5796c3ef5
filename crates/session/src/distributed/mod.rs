//! One run from many client processes: each computes its share from (index, N)
//! ([`crate::clients::ClientShare`]), all start at one agreed instant (the [`scalebench_exec::Rendezvous`]
//! their launcher gives them), and their results merge into one, by histogram (Wegert, studies.md
//! section 2: one synchronous start, per-client insert ranges, results merged correctly).
//!
//! Launchers: [`local`] runs N client processes on this machine; [`etcd`] is the rendezvous of
//! clients started anywhere (by srun, a Kubernetes Indexed Job from [`kubernetes`], or [`ssh`]).

pub mod etcd;
pub mod kubernetes;
pub mod local;
pub mod ssh;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use scalebench_exec::{Phase, ProgressState};
use scalebench_measure::merge::merge_results;
use scalebench_measure::result::{DistributedRun, MissingClient};
use scalebench_measure::RunResult;

use crate::clients::ClientShare;
use crate::error::SessionError;
use crate::request::RunRequest;

/// Exit code of a distributed run that finished without some of its clients.
pub const EXIT_INCOMPLETE: u8 = 3;

/// Measurement windows of the clients may start this far apart before the merge says so: the
/// skew of a local start is well under it, clocks kept by NTP on a LAN too.
pub const START_TOLERANCE: Duration = Duration::from_millis(100);

/// A distributed run's outcome: the merged result and every client's own, by index (`None`: that
/// client left no result; the merged result names it under `distributed.missing`).
#[derive(Debug)]
pub struct DistributedOutcome {
    pub merged: RunResult,
    pub clients: Vec<Option<RunResult>>,
    /// The percentiles the run's properties ask to print.
    pub percentiles: Vec<f64>,
    /// Ctrl-C ended the launcher's (or client 0's) wait for the clients.
    pub interrupted: bool,
}

impl DistributedOutcome {
    /// Records that Ctrl-C ended the launcher's part: the merged result says so as the exit code
    /// does (it said `interrupted: false` beside an exit 130 when only the launcher saw the signal).
    pub fn set_interrupted(&mut self, interrupted: bool) {
        self.interrupted = interrupted;
        self.merged.interrupted |= interrupted;
    }

    /// The exit code of the run: 130 when it was interrupted (what was measured is kept), 3 when a
    /// client left no result, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.merged.interrupted || self.interrupted {
            130
        } else if self.incomplete() {
            EXIT_INCOMPLETE
        } else {
            0
        }
    }

    pub fn incomplete(&self) -> bool {
        self.merged
            .distributed
            .as_ref()
            .is_some_and(|d| !d.missing.is_empty())
    }
}

/// Where client `index`'s own result goes beside the merged `output`: `run.json` ->
/// `run.client-0.json`.
pub fn client_output(output: &std::path::Path, index: u32) -> std::path::PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let name = match output.extension() {
        Some(ext) => format!("{stem}.client-{index}.{}", ext.to_string_lossy()),
        None => format!("{stem}.client-{index}"),
    };
    output.with_file_name(name)
}

/// The request client `index` of `clients` runs.
pub fn client_request(request: &RunRequest, share: ClientShare) -> RunRequest {
    let mut r = request.clone();
    r.client = Some(share);
    r.quiet = true;
    r.metrics = None;
    r
}

/// What client `share` was to do, in words, for the list of missing clients.
pub fn describe_share(request: &RunRequest, share: ClientShare, phase: Phase) -> String {
    match crate::settings::Settings::checked(&client_request(request, share), phase) {
        Ok(s) => share.describe(&s.workload, phase),
        Err(e) => format!("client {} of {} ({e})", share.index, share.clients),
    }
}

/// What defines a run of `clients` clients, field by field: every client computes it from its own
/// command line (before its share is applied), they compare it at the start (etcd) and it goes
/// into each client's result, so that clients started unlike each other (another duration,
/// warm-up, target, workload, property or number of clients) are refused before anything runs,
/// and their results are never merged. Threads and the database URL's hosts are each client's own.
pub fn definition(
    request: &RunRequest,
    phase: Phase,
    clients: u32,
) -> Result<BTreeMap<String, String>, SessionError> {
    let mut whole = request.clone();
    whole.client = None;
    let s = crate::settings::Settings::checked(&whole, phase)?;
    let secs = |d: Option<Duration>| {
        d.map_or_else(
            || "none".to_string(),
            |d| humantime::format_duration(d).to_string(),
        )
    };
    let mut d = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        d.insert(k.to_string(), v);
    };
    put("phase", phase.name().into());
    put("clients", clients.to_string());
    put("workload", s.workload_name.clone());
    put("binding", s.binding.name.into());
    let duration = match phase {
        Phase::Run => s.run_duration,
        Phase::Load => s.load_duration,
    };
    put("duration", secs(duration));
    put(
        "operations",
        s.operation_count
            .map_or_else(|| "none".into(), |n| n.to_string()),
    );
    if phase == Phase::Run {
        put("warm-up", secs(Some(s.warmup)));
    }
    put(
        "target",
        s.target
            .map_or_else(|| "none (closed loop)".into(), |t| format!("{t} ops/s")),
    );
    if s.target.is_some() {
        put("arrival", s.arrival.name().to_string());
    }
    put("interval", secs(Some(s.interval)));
    put(
        "request set",
        s.request_set
            .map_or_else(|| "none".into(), |n| n.to_string()),
    );
    for (k, v) in s.props.iter() {
        if k == "threadcount" {
            continue;
        }
        let v = if scalebench_binding::config::is_secret_key(k) {
            "***"
        } else {
            v
        };
        put(&format!("property {k}"), v.to_string());
    }
    Ok(d)
}

/// The first field in which `theirs` differs from `mine`, with both values.
pub fn first_difference(
    mine: &BTreeMap<String, String>,
    theirs: &BTreeMap<String, String>,
) -> Option<(String, String, String)> {
    let keys: std::collections::BTreeSet<&String> = mine.keys().chain(theirs.keys()).collect();
    keys.into_iter().find_map(|k| {
        let (a, b) = (mine.get(k), theirs.get(k));
        (a != b).then(|| {
            let shown = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(unset)".into());
            (k.clone(), shown(a), shown(b))
        })
    })
}

/// How long after the run's own end (and its grace period) clients on other machines may take to
/// hand back what they measured before client 0 or a launcher stops waiting for them.
pub const END_MARGIN: Duration = Duration::from_secs(60);

/// The same for client processes on this machine, which write their result to a local file and
/// report progress every second: a client silent this long past the grace period is stopped or hung.
pub const LOCAL_END_MARGIN: Duration = Duration::from_secs(15);

/// After Ctrl-C, how long past the grace period the launcher waits for its clients to write what
/// they measured before it kills those still running.
pub const STOP_MARGIN: Duration = Duration::from_secs(5);

/// When the clients of a run must have ended, so that a launcher's wait is bounded: a client past
/// its deadline is stopped or hung (SIGSTOP, a machine that froze) and is named missing.
#[derive(Debug, Clone, Copy)]
pub struct EndRule {
    /// The end of a run bounded by time (start + warm-up + duration); None when bounded by
    /// operations or a load's records.
    pub planned_end: Option<Instant>,
    pub grace: Duration,
    /// [`END_MARGIN`] or [`LOCAL_END_MARGIN`].
    pub margin: Duration,
}

impl EndRule {
    /// The rule of `phase` of `request`, its clients starting at `start`.
    pub fn of(request: &RunRequest, phase: Phase, start: Instant, margin: Duration) -> EndRule {
        let planned_end = crate::settings::Settings::checked(request, phase)
            .ok()
            .and_then(|s| match phase {
                Phase::Run => s.run_duration.map(|d| start + s.warmup + d),
                Phase::Load => s.load_duration.map(|d| start + d),
            });
        EndRule {
            planned_end,
            grace: request.grace,
            margin,
        }
    }

    /// The latest instant a client may still be running: the planned end, or (runs bounded by
    /// operations) the moment another client ended, or its last sign of life, each plus the grace
    /// period and the margin; after a stop request, the stop plus the grace period and
    /// [`STOP_MARGIN`].
    /// `last_heard`: None where the launcher hears nothing from its clients while they run (ssh).
    /// Far in the future when nothing bounds the wait yet (a run bounded by operations whose
    /// clients are all still running and silent is not possible where they report progress).
    pub fn deadline(
        &self,
        first_ended: Option<Instant>,
        last_heard: Option<Instant>,
        stopped_at: Option<Instant>,
    ) -> Instant {
        let after = self.grace + self.margin;
        let far = Instant::now() + crate::request::MAX_DURATION;
        let mut deadline = far;
        for at in [self.planned_end, first_ended, last_heard]
            .into_iter()
            .flatten()
        {
            deadline = deadline.min(at + after);
        }
        if let Some(at) = stopped_at {
            deadline = deadline.min(at + self.grace + STOP_MARGIN);
        }
        deadline
    }
}

/// Checks a distributed run before any client starts: bad input is found once, with exit code 2,
/// not once per client.
pub fn check(request: &RunRequest, clients: u32, phase: Phase) -> Result<(), SessionError> {
    request.check(crate::request::Launch::Clients, &[phase])?;
    if request.deployment.is_some() {
        return Err(SessionError::Usage(
            "clients on other machines cannot read this machine's deployment: give the cluster's URL with --db \
             (scalebench cluster status prints it)"
                .into(),
        ));
    }
    for index in 0..clients {
        let share = ClientShare::new(index, clients)?;
        let r = client_request(request, share);
        r.check(crate::request::Launch::Clients, &[phase])?;
        crate::settings::Settings::check(&r, phase)?;
    }
    Ok(())
}

/// The request with its deployment replaced by what the clients need of it: the cluster's URL and
/// binding options. The steps around a phase that a deployment gives a single client (waiting
/// until the cluster is idle, compaction, space on disk) are not taken for N clients.
pub fn without_deployment(request: &RunRequest) -> Result<RunRequest, SessionError> {
    let Some(file) = &request.deployment else {
        return Ok(request.clone());
    };
    let cluster = crate::cluster::open(file, &request.clusters_dir)?;
    let mut r = request.clone();
    r.deployment = None;
    let url = r.db.get_or_insert_with(|| cluster.url()).clone();
    let scheme = url.split("://").next().unwrap_or_default();
    if let Some(binding) = scalebench_binding::registry::for_scheme(scheme) {
        r.deployment_options = crate::settings::deployment_options(&cluster, binding.name);
    }
    Ok(r)
}

/// Merges the results the clients left (histograms merged, never percentiles averaged), names the
/// missing ones, and flags what makes the merge doubtful: windows that did not start together,
/// insert ranges that overlap.
/// `request`: what the clients ran, when known here (not to `scalebench gather`).
pub fn merge_clients(
    request: Option<&RunRequest>,
    phase: Phase,
    launcher: &str,
    results: Vec<Result<RunResult, String>>,
) -> Result<DistributedOutcome, SessionError> {
    let clients = results.len() as u32;
    let mut present = Vec::new();
    let mut sources = Vec::new();
    let mut missing = Vec::new();
    for (index, r) in results.iter().enumerate() {
        let share = ClientShare::new(index as u32, clients)?;
        match r {
            Ok(result) => {
                present.push(result.clone());
                sources.push(format!("client {index}"));
            }
            Err(reason) => missing.push(MissingClient {
                index: index as u32,
                share: match request {
                    Some(r) => describe_share(r, share, phase),
                    None => format!("client {index} of {clients}"),
                },
                reason: reason.clone(),
            }),
        }
    }
    if present.is_empty() {
        let reasons: Vec<String> = missing
            .iter()
            .map(|m| format!("client {}: {}", m.index, m.reason))
            .collect();
        return Err(SessionError::Failed(format!(
            "no client of the run left a result ({})",
            reasons.join("; ")
        )));
    }
    let (mut merged, mut warnings) =
        merge_results(&present, &sources).map_err(SessionError::Failed)?;
    warnings.extend(late_starts(&present, &sources));
    warnings.extend(overlapping_inserts(&present, &sources));
    if let Some(r) = request {
        merged.command = r.command.clone();
    }
    merged.client = None;
    merged.distributed = Some(DistributedRun {
        clients,
        launcher: launcher.to_string(),
        missing,
        warnings,
    });
    let percentiles = request
        .and_then(|r| crate::settings::Settings::checked(r, phase).ok())
        .map_or_else(|| vec![95.0, 99.0], |s| s.percentiles);
    Ok(DistributedOutcome {
        merged,
        clients: results.into_iter().map(Result::ok).collect(),
        percentiles,
        interrupted: false,
    })
}

/// Clients that really began more than [`START_TOLERANCE`] after the agreed start (their skew,
/// measured on their own clock when they began), or whose windows began that far apart: the
/// measurement window of every client runs from the agreed start, so a late client did not load
/// the database for the first part of it.
fn late_starts(results: &[RunResult], sources: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = results.first() else {
        return out;
    };
    let tolerance = START_TOLERANCE.as_secs_f64() * 1000.0;
    for phase in &first.phases {
        let phases: Vec<(usize, &scalebench_measure::PhaseResult)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, r.phases.iter().find(|p| p.phase == phase.phase)?)))
            .collect();
        let earliest = phases
            .iter()
            .map(|(_, p)| p.measurement_start_unix_ms)
            .min()
            .unwrap_or(0);
        for (i, p) in phases {
            let apart = p.measurement_start_unix_ms - earliest;
            let skew = p.start.map_or(0.0, |s| s.skew_ms);
            if skew > tolerance {
                out.push(format!(
                    "{} began the {} phase {skew:.0} ms after the agreed start (tolerance {tolerance:.0} ms): \
                     it did not load the database for the first {skew:.0} ms of its window",
                    sources[i], phase.phase
                ));
            } else if apart as f64 > tolerance {
                out.push(format!(
                    "{} began measuring the {} phase {apart} ms after the first client (tolerance {tolerance:.0} ms)",
                    sources[i], phase.phase
                ));
            }
        }
    }
    out
}

/// Clients whose run-phase inserts took the same keys: each should have had a section of its own.
fn overlapping_inserts(results: &[RunResult], sources: &[String]) -> Vec<String> {
    let ranges: Vec<(usize, u64, u64)> = results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.phases
                .iter()
                .filter_map(move |p| p.insert_keys.map(|k| (i, k.start, k.end)))
        })
        .filter(|(_, start, end)| start < end)
        .collect();
    let mut out = Vec::new();
    for (n, a) in ranges.iter().enumerate() {
        for b in &ranges[n + 1..] {
            if a.0 != b.0 && a.1 < b.2 && b.1 < a.2 {
                out.push(format!(
                    "{} and {} inserted into the same keys ({}..{} and {}..{})",
                    sources[a.0], sources[b.0], a.1, a.2, b.1, b.2
                ));
            }
        }
    }
    out
}

/// Starts the clients of one run and merges their results: on this machine ([`local::LocalLaunch`])
/// or over ssh ([`ssh::SshLaunch`]). Each checks the request against what its clients can do before
/// anything starts. (A rendezvous client is not a launcher: it is one of the clients,
/// [`etcd::run_as_client`]; Kubernetes starts its clients from manifests, [`kubernetes::manifests`].)
pub trait Launcher {
    /// How many clients the run has.
    fn clients(&self) -> u32;
    fn launch(
        &self,
        request: &RunRequest,
        phase: Phase,
    ) -> Result<DistributedOutcome, SessionError>;
}

/// A launcher is its struct (with its number of clients) and its module's `launch`.
macro_rules! launcher {
    ($launch:ty, $start:path) => {
        impl Launcher for $launch {
            fn clients(&self) -> u32 {
                self.clients
            }
            fn launch(
                &self,
                request: &RunRequest,
                phase: Phase,
            ) -> Result<DistributedOutcome, SessionError> {
                $start(self, request, phase)
            }
        }
    };
}
launcher!(local::LocalLaunch, local::launch);
launcher!(ssh::SshLaunch, ssh::launch);

/// The output paths of a run of `clients` clients checked before anything runs: the merged
/// result's and each client's beside it.
pub fn check_outputs(output: Option<&std::path::Path>, clients: u32) -> Result<(), SessionError> {
    let client_outputs: Vec<std::path::PathBuf> = output
        .map(|path| (0..clients).map(|i| client_output(path, i)).collect())
        .unwrap_or_default();
    crate::files::check_outputs(
        output
            .into_iter()
            .chain(client_outputs.iter().map(|p| p.as_path())),
        None,
    )
}

/// What `scalebench gather` merges: a rendezvous run's results from etcd, the files its clients
/// kept, or both (a file stands for its client where etcd has it too, or has lost it).
#[derive(Debug, Clone)]
pub struct GatherRequest {
    pub rendezvous: Option<String>,
    pub files: Vec<std::path::PathBuf>,
    /// The phase asked for (default: the files', else the run phase).
    pub phase: Option<Phase>,
    /// How long to wait for clients still running.
    pub timeout: Duration,
}

/// The clients' results a gather found, by index (a client without one: why).
pub struct Gathered {
    pub phase: Phase,
    pub results: Vec<Result<RunResult, String>>,
}

pub fn gather(request: &GatherRequest) -> Result<Gathered, SessionError> {
    let url = request
        .rendezvous
        .as_deref()
        .map(etcd::RendezvousUrl::parse)
        .transpose()?;
    let from_files = if request.files.is_empty() {
        None
    } else {
        Some(results_from_files(&request.files)?)
    };
    let phase = match (&from_files, request.phase) {
        (Some((p, _, _)), Some(asked)) if *p != asked => {
            return Err(SessionError::Usage(format!(
                "invalid value '{}' for '--phase': the files hold a {} phase",
                asked.name(),
                p.name()
            )))
        }
        (Some((p, _, _)), _) => *p,
        (None, asked) => asked.unwrap_or(Phase::Run),
    };
    let from_etcd = match &url {
        Some(url) => match etcd::gather(url, phase, request.timeout) {
            Ok(r) => Some(r),
            // The files are what the clients kept for this case: the rendezvous is gone.
            Err(SessionError::Failed(e)) if from_files.is_some() => {
                crate::note!("warning: {e}: merging the files alone");
                None
            }
            Err(e) => return Err(e),
        },
        None => None,
    };
    let results = match (from_files, from_etcd) {
        (None, Some(r)) => r,
        (Some((_, n, mut files)), etcd) => {
            if let Some(e) = etcd.as_ref().filter(|e| e.len() as u32 != n) {
                return Err(SessionError::Usage(format!(
                    "the files hold clients of a run of {n}, the rendezvous one of {}",
                    e.len()
                )));
            }
            let mut etcd = etcd.map(|r| r.into_iter().map(Some).collect::<Vec<_>>());
            (0..n)
                .map(|i| match files.remove(&i) {
                    Some(r) => Ok(r),
                    None => etcd
                        .as_mut()
                        .and_then(|e| e[i as usize].take())
                        .unwrap_or_else(|| Err("no result: no file of it was given".into())),
                })
                .collect()
        }
        (None, None) => {
            return Err(SessionError::Usage(
                "give the run's --rendezvous, the result files its clients kept, or both".into(),
            ))
        }
    };
    Ok(Gathered { phase, results })
}

/// The results clients kept on their disks (`scalebench gather FILE...`): each file one client's
/// result of one phase (as a client of a distributed run writes it), all of one run of `clients`
/// clients. Returns the phase and, by index, the result of each client a file holds.
pub fn results_from_files(
    files: &[std::path::PathBuf],
) -> Result<(Phase, u32, BTreeMap<u32, RunResult>), SessionError> {
    let mut by_index: BTreeMap<u32, (RunResult, &std::path::Path)> = BTreeMap::new();
    let mut run: Option<(Phase, u32)> = None;
    for file in files {
        let bad = |why: String| SessionError::Usage(format!("{}: {why}", file.display()));
        let r = RunResult::read(file).map_err(|e| SessionError::Usage(e.to_string()))?;
        let Some(part) = r.client.clone() else {
            return Err(bad(
                "not a client's result of a distributed run (no `client`): merge whole runs with `scalebench merge`".into(),
            ));
        };
        let [phase] = r.phases.as_slice() else {
            return Err(bad(format!(
                "a client's result holds one phase, this one {}",
                r.phases.len()
            )));
        };
        // Typed when the result was read: an unknown phase is refused there.
        let phase = phase.phase;
        // A file is input: its client count sizes what is gathered, so it is bounded as
        // `--clients` is (4294967295 once asked for terabytes).
        if !(1..=crate::request::MAX_CLIENTS).contains(&u64::from(part.clients))
            || part.index >= part.clients
        {
            return Err(bad(format!(
                "client {} of {}: a run has 1 to {} clients, numbered from 0",
                part.index,
                part.clients,
                crate::request::MAX_CLIENTS
            )));
        }
        match run {
            None => run = Some((phase, part.clients)),
            Some((p, n)) if p != phase || n != part.clients => {
                return Err(bad(format!(
                    "client {} of {} in a {} phase, where the other files hold clients of {n} in a {} phase",
                    part.index,
                    part.clients,
                    phase.name(),
                    p.name()
                )))
            }
            Some(_) => {}
        }
        if let Some((_, other)) = by_index.get(&part.index) {
            return Err(bad(format!(
                "client {} again (also in {})",
                part.index,
                other.display()
            )));
        }
        by_index.insert(part.index, (r, file));
    }
    let (phase, clients) = run.ok_or_else(|| SessionError::Usage("no result file given".into()))?;
    Ok((
        phase,
        clients,
        by_index.into_iter().map(|(i, (r, _))| (i, r)).collect(),
    ))
}

/// A client's live figures, as it hands them to its launcher or rendezvous.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientProgress {
    elapsed_s: f64,
    in_warmup: bool,
    ok: u64,
    failed: u64,
    ops_s: f64,
    p99_us: f64,
}

impl ClientProgress {
    pub fn of(state: &ProgressState) -> ClientProgress {
        ClientProgress {
            elapsed_s: state.elapsed.as_secs_f64(),
            in_warmup: state.in_warmup(),
            ok: state.live.ok,
            failed: state.live.failed,
            ops_s: state.live.current_ops_s,
            p99_us: state.live.current_p99_us,
        }
    }
}

/// One status line for all clients: counts and rates add; the p99 shown is the worst client's
/// (percentiles do not add, and the merged histogram exists only at the end).
pub fn merged_line(
    phase: Phase,
    latest: &[Option<ClientProgress>],
    alive: usize,
    clients: usize,
) -> String {
    let live: Vec<&ClientProgress> = latest.iter().flatten().collect();
    let sum = |f: fn(&ClientProgress) -> f64| live.iter().map(|p| f(p)).sum::<f64>();
    let elapsed = live.iter().map(|p| p.elapsed_s).fold(0.0, f64::max);
    let worst_p99 = live.iter().map(|p| p.p99_us).fold(0.0, f64::max);
    let warmup = if live.iter().any(|p| p.in_warmup) {
        " (warm-up)"
    } else {
        ""
    };
    format!(
        "{} {elapsed:.0} s{warmup}: {alive}/{clients} clients, {:.0} ops/s, p99 {:.2} ms (worst client), {} ok, {} failed",
        phase.name(),
        sum(|p| p.ops_s),
        worst_p99 / 1000.0,
        sum(|p| p.ok as f64),
        sum(|p| p.failed as f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merged_line_adds_rates_and_shows_the_worst_p99() {
        let p = |ops_s, p99_us, ok| {
            Some(ClientProgress {
                elapsed_s: 3.0,
                in_warmup: false,
                ok,
                failed: 1,
                ops_s,
                p99_us,
            })
        };
        let line = merged_line(
            Phase::Run,
            &[p(100.0, 900.0, 10), None, p(50.0, 2500.0, 5)],
            2,
            3,
        );
        assert!(line.contains("2/3 clients"), "{line}");
        assert!(line.contains("150 ops/s"), "{line}");
        assert!(line.contains("p99 2.50 ms"), "{line}");
        assert!(line.contains("15 ok, 2 failed"), "{line}");
    }
}
