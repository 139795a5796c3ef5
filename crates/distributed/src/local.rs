//! `--clients N` on one machine: N client processes, started by this one, as one run. Each child
//! gets its order (the request as data, its index, where to write its result) as a JSON line on
//! stdin, says "ready" on stdout when its connections are made, and receives the common start on
//! stdin once all are ready; while it runs it reports progress on stdout. These pipes are between a
//! parent and its children on one machine; clients on several machines meet through etcd instead.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use scalebench_exec::consistency::ProbeEvent;
use scalebench_exec::{Phase, StopSignal, TimelineLog, TimelinePoint};
use scalebench_measure::RunResult;
use serde::{Deserialize, Serialize};

use crate::outcome::{merge_clients, merged_line, ClientProgress, DistributedOutcome};
use crate::share::client_request;
use crate::timeline::MergedTimeline;

use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::RunWiring;

/// How far ahead of "all ready" the common start is set: time for the start line to reach every
/// child and for its workers to wake.
const START_LEAD: Duration = Duration::from_millis(100);

/// A command that runs [`crate::client_process::serve_client`] (the `scalebench` binary's hidden `client-process`).
#[derive(Debug, Clone)]
pub struct ClientProgram {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// How to start N client processes of one run on this machine.
#[derive(Debug, Clone)]
pub struct LocalLaunch {
    pub program: ClientProgram,
    pub clients: u32,
    /// How long the clients may take to connect before the run is abandoned.
    pub start_timeout: Duration,
    /// Client i runs on CPU `cpus[i % len]` alone (none: wherever the scheduler puts it), so each
    /// client has a core of its own, as it would on a machine of its own.
    pub cpus: Vec<usize>,
}

/// The CPUs this process may run on (its affinity mask).
pub fn usable_cpus() -> Vec<usize> {
    use nix::sched::{sched_getaffinity, CpuSet};
    let Ok(set) = sched_getaffinity(Pid::from_raw(0)) else {
        return Vec::new();
    };
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect()
}

/// `--client-cpus`: every CPU one this process may run on, or exit 2 naming the one that is not.
pub fn check_cpus(cpus: &[usize]) -> Result<(), SessionError> {
    let usable = usable_cpus();
    match cpus.iter().find(|c| !usable.contains(c)) {
        Some(c) => Err(SessionError::Usage(format!(
            "invalid value '{c}' for '--client-cpus': this process may run on CPUs {usable:?} only"
        ))),
        None => Ok(()),
    }
}

impl LocalLaunch {
    /// Processes on this machine meet through their launcher, not a rendezvous: every run alike.
    pub fn for_run(&self, _name: &str) -> LocalLaunch {
        self.clone()
    }
}

/// A child's order, the first line on its stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClientOrder {
    pub request: RunRequest,
    /// Which client it is, of how many: its share of the request.
    pub share: ClientShare,
    /// Its /metrics endpoint and HDR logs, at its index.
    #[serde(default)]
    pub outputs: scalebench_session::wiring::ClientOutputs,
    pub phase: Phase,
    pub output: PathBuf,
    /// The launcher watches the run's timeline (`scalebench elastic`): the client tells it each
    /// point, its request sets open when the launcher says, and it ends when the launcher says.
    #[serde(default)]
    pub watched: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FromClient {
    Ready,
    /// A clock exchange (NTP's): its clock when it sent this.
    Ping {
        sent_ns: u64,
    },
    /// The probe's writer (client 0) for the readers in the others.
    Probe(ProbeEvent),
    Progress(ClientProgress),
    /// A point of its timeline: a request set of its own done, or an interval.
    Point {
        index: u64,
        point: TimelinePoint,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToClient {
    Start {
        unix_ns: u64,
    },
    /// The answer to a ping: its sending time back, and the launcher's clock when it answered.
    Pong {
        sent_ns: u64,
        launcher_ns: u64,
    },
    /// The probe's writer's event, relayed.
    Probe(ProbeEvent),
    /// Every client has finished its share of the sets before `set`.
    OpenSet {
        set: u64,
    },
    /// The watcher ends the run as planned (not an interruption).
    Finish,
}

enum Event {
    Said(usize, FromClient),
    Closed(usize),
}

/// Runs `phase` of `request` as `launch.clients` client processes and merges their results.
/// Returns when every child has ended; a child that dies leaves the others running and is named in
/// the merged result.
pub fn launch(
    launch: &LocalLaunch,
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
) -> Result<DistributedOutcome, SessionError> {
    crate::share::check(request, launch.clients, phase, true)?;
    scalebench_session::interrupt::install_handler();
    let stop = wiring.stop_signal();
    scalebench_session::interrupt::register_stop(&stop);
    let outcome = run_children(launch, request, wiring, phase, &stop);
    scalebench_session::interrupt::clear_stop();
    outcome
}

/// The prefix of the temporary directories the clients write their results into.
const CLIENTS_DIR_PREFIX: &str = "scalebench-clients-";
/// Held locked (flock) by the launcher for as long as it runs: a directory whose lock can be taken
/// belongs to a launcher that is gone (killed with SIGKILL, a machine reset) and is removed.
const LAUNCHER_LOCK: &str = "launcher.lock";

/// The clients' directory of this launch, locked, after removing those of launchers that are gone.
fn clients_dir() -> Result<(tempfile::TempDir, std::fs::File), SessionError> {
    remove_stale_client_dirs(&std::env::temp_dir());
    let failed = |e: std::io::Error| {
        SessionError::Failed(format!("cannot create a temporary directory: {e}"))
    };
    let dir = tempfile::Builder::new()
        .prefix(CLIENTS_DIR_PREFIX)
        .tempdir()
        .map_err(failed)?;
    let lock = std::fs::File::create(dir.path().join(LAUNCHER_LOCK)).map_err(failed)?;
    if !try_lock(&lock) {
        return Err(failed(std::io::Error::last_os_error()));
    }
    Ok((dir, lock))
}

/// An exclusive flock(2) on `file`, without waiting; released when the process ends.
fn try_lock(file: &std::fs::File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock(2) on a descriptor this process owns.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Removes the clients' directories under `tmp` whose launcher is gone (its lock can be taken).
/// A directory without a lock file is left alone: its launcher may be creating it.
pub fn remove_stale_client_dirs(tmp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let me = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let path = entry.path();
        // Only a directory of this user's (another user's is not ours to judge or remove).
        let ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with(CLIENTS_DIR_PREFIX)
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !ours {
            continue;
        }
        // Without blocking or following a link: a FIFO planted as the lock would hang the open.
        let Ok(lock) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path.join(LAUNCHER_LOCK))
        else {
            continue;
        };
        if !lock.metadata().is_ok_and(|m| m.is_file() && m.uid() == me) {
            continue;
        }
        if try_lock(&lock) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn run_children(
    launch: &LocalLaunch,
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
    stop: &StopSignal,
) -> Result<DistributedOutcome, SessionError> {
    let (dir, _lock) = clients_dir()?;
    let n = launch.clients as usize;
    // Watched: by a controller (elastic), or by this launcher alone for request sets the clients
    // share (a set ends when every client finished its share).
    let watch = wiring
        .timeline_log
        .clone()
        .or_else(|| request.request_set.map(|_| TimelineLog::new()));
    let (tx, rx) = mpsc::channel();
    let mut children = Vec::with_capacity(n);
    for index in 0..n {
        let share = ClientShare::new(index as u32, launch.clients)?;
        let order = ClientOrder {
            request: client_request(request, share),
            share,
            outputs: wiring.client_outputs.clone(),
            phase,
            output: dir.path().join(format!("client-{index}.json")),
            watched: watch.is_some(),
        };
        match spawn_child(launch, index, &order, tx.clone()) {
            Ok(child) => children.push(child),
            Err(e) => {
                end_all(&mut children);
                return Err(e);
            }
        }
    }
    drop(tx);

    if let Err(e) = wait_until_ready(&rx, &mut children, launch, stop) {
        end_all(&mut children);
        return Err(e);
    }
    let start = SystemTime::now() + START_LEAD;
    let rule = crate::share::EndRule::of(
        request,
        phase,
        Instant::now() + START_LEAD,
        crate::share::LOCAL_END_MARGIN,
    );
    let line = to_client(&ToClient::Start {
        unix_ns: start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64,
    });
    tell_all(&mut children, &line);
    if let Some(m) = &wiring.measurement_start {
        let _ = m.set(Instant::now() + START_LEAD + request.warmup);
    }
    let mut watched = watch.map(|log| {
        let t0 = Instant::now() + START_LEAD + request.warmup;
        MergedTimeline::begin(log, n, request.request_set.is_some(), t0)
    });
    follow_progress(
        &rx,
        &mut children,
        request,
        phase,
        stop,
        &rule,
        watched.as_mut(),
    );

    let mut interrupted_children = false;
    let results = children
        .iter_mut()
        .enumerate()
        .map(|(index, c)| {
            let status = c.process.wait();
            interrupted_children |= ended_by_interrupt(&status);
            let path = dir.path().join(format!("client-{index}.json"));
            match (RunResult::read(&path), c.killed.take()) {
                (Ok(r), _) => Ok(r),
                (Err(_), Some(why)) => Err(why),
                (Err(e), None) if path.exists() => Err(e.to_string()),
                (Err(_), None) => Err(how_it_ended(status)),
            }
        })
        .collect();
    let mut outcome = match merge_clients(Some(request), phase, "local", results) {
        // No client measured anything because a Ctrl-C ended them (issue 39, point 12).
        Err(SessionError::Failed(e)) if stop.is_requested() || interrupted_children => {
            return Err(SessionError::Interrupted(format!("interrupted: {e}")))
        }
        merged => merged?,
    };
    outcome.set_interrupted((stop.is_requested() && !stop.is_finish()) || interrupted_children);
    let shared_sets = watched
        .zip(request.request_set)
        .and_then(|(w, size)| w.request_sets(size, &outcome.clients));
    if let (Some(sets), Some(p)) = (shared_sets, outcome.merged.phases.first_mut()) {
        p.request_sets = Some(sets);
    }
    if let Some(probe) = &request.consistency_probe {
        merge_probe(probe, &mut outcome);
    }
    Ok(outcome)
}

/// A probe of several clients in the merged result: the writer's (client 0's, with its own
/// readers) as `consistency`, each other client's readers in `consistency_readers` with its clock
/// against the writer's; their histories merged into the one asked for.
fn merge_probe(
    probe: &scalebench_session::request::ProbeRequest,
    outcome: &mut DistributedOutcome,
) {
    use scalebench_measure::consistency::ReaderClient;
    let phase_of = |r: &Option<RunResult>| r.as_ref().and_then(|r| r.phases.last().cloned());
    let clock_of = |r: &Option<RunResult>| {
        r.as_ref()
            .and_then(|r| r.client.as_ref())
            .and_then(|c| c.clock)
    };
    let writer = outcome.clients.first().and_then(phase_of);
    let writer_clock = outcome.clients.first().and_then(clock_of);
    let readers: Vec<ReaderClient> = outcome
        .clients
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, r)| {
            let p = phase_of(r)?;
            // This client's clock minus the writer's, each measured against the launcher's.
            let (offset, uncertainty) = match (clock_of(r), writer_clock) {
                (Some(c), Some(w)) => (
                    (c.offset_ns - w.offset_ns) as f64 / 1000.0,
                    (c.uncertainty_ns + w.uncertainty_ns) as f64 / 1000.0,
                ),
                _ => (0.0, f64::INFINITY),
            };
            Some(ReaderClient {
                client: i as u32,
                clock_offset_us: offset,
                clock_uncertainty_us: uncertainty,
                consistency: p.consistency,
                error: p.consistency_error,
            })
        })
        .collect();
    if let Some(merged) = outcome.merged.phases.last_mut() {
        if let Some(w) = writer {
            merged.consistency = w.consistency;
            merged.consistency_error = w.consistency_error;
        }
        merged.consistency_readers = readers;
    }
    if let Some(path) = &probe.history {
        let parts: Vec<Option<PathBuf>> = (0..outcome.clients.len())
            .map(|i| {
                let part = crate::share::client_output(path, i as u32);
                part.exists().then_some(part)
            })
            .collect();
        if let Err(e) = scalebench_exec::consistency::merge_histories(&parts, path) {
            scalebench_session::note!("warning: {e}: no merged history written");
        }
    }
}

/// Writes `line` to every child still listening (a child that died cannot be told; its exit
/// names it).
fn tell_all(children: &mut [ChildProcess], line: &str) {
    for c in children.iter_mut().filter(|c| !c.closed) {
        if let Some(stdin) = c.stdin.as_mut() {
            let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        }
    }
}

/// A ping answered at once; the probe's writer's event relayed to every other client.
fn answer(children: &mut [ChildProcess], from: usize, said: FromClient) {
    let (to, line) = match said {
        FromClient::Ping { sent_ns } => (
            Some(from),
            to_client(&ToClient::Pong {
                sent_ns,
                launcher_ns: unix_ns_now(),
            }),
        ),
        FromClient::Probe(event) => (None, to_client(&ToClient::Probe(event))),
        _ => return,
    };
    for (i, c) in children.iter_mut().enumerate() {
        let addressed = to.map_or(i != from, |to| i == to);
        if let (true, false, Some(stdin)) = (addressed, c.closed, c.stdin.as_mut()) {
            let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        }
    }
}

pub(crate) fn unix_ns_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn to_client(what: &ToClient) -> String {
    serde_json::to_string(what).expect("a line to a client serializes")
}

struct ChildProcess {
    process: Child,
    stdin: Option<ChildStdin>,
    ready: bool,
    closed: bool,
    /// When it last said something (progress comes about once a second while it runs).
    last_heard: Instant,
    /// Why the launcher killed it, if it did.
    killed: Option<String>,
}

fn spawn_child(
    launch: &LocalLaunch,
    index: usize,
    order: &ClientOrder,
    tx: Sender<Event>,
) -> Result<ChildProcess, SessionError> {
    let mut command = Command::new(&launch.program.program);
    command
        .args(&launch.program.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(&mut command);
    // `-v` is the launcher's: its clients log as it does.
    if let Some(filter) = scalebench_session::logging::directives() {
        command.env("RUST_LOG", filter);
    }
    if let Some(&cpu) = launch.cpus.get(index % launch.cpus.len().max(1)) {
        pin_to(&mut command, cpu);
    }
    let mut process = command.spawn().map_err(|e| {
        SessionError::Failed(format!(
            "cannot start client {index} ({}): {e}",
            launch.program.program.display()
        ))
    })?;
    let mut stdin = process.stdin.take();
    let text = serde_json::to_string(order).map_err(|e| SessionError::Failed(e.to_string()))?;
    if let Some(s) = stdin.as_mut() {
        // A child that cannot read its order ends at once; its exit says why.
        let _ = writeln!(s, "{text}").and_then(|()| s.flush());
    }
    let stdout = process.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(said) = serde_json::from_str::<FromClient>(&line) {
                if tx.send(Event::Said(index, said)).is_err() {
                    return;
                }
            }
        }
        let _ = tx.send(Event::Closed(index));
    });
    // Its notes and errors, each line marked with the client it came from.
    let stderr = process.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            scalebench_session::note!("client {index}: {line}");
        }
    });
    Ok(ChildProcess {
        process,
        stdin,
        ready: false,
        closed: false,
        last_heard: Instant::now(),
        killed: None,
    })
}

/// Makes the process `command` starts die with this one: a launcher killed with SIGKILL must not
/// leave its clients loading the database to the end of their run. The kernel sends SIGKILL when
/// the thread that started the child ends (PR_SET_PDEATHSIG), so launchers start their clients
/// from the thread that waits for them.
pub fn die_with_parent(command: &mut Command) {
    use nix::unistd::{getpid, getppid};
    use std::os::unix::process::CommandExt;
    let parent = getpid();
    // SAFETY: the closure runs in the child between fork and exec and makes only async-signal-safe
    // system calls (prctl, getppid) and allocates nothing (an errno is an io::Error without a box).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The parent may have died before the prctl: then the child goes at once (std ends a
            // child whose pre_exec fails before its exec, as an _exit here did; nobody waits).
            if getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// The child runs on `cpu` alone.
fn pin_to(command: &mut Command, cpu: usize) {
    use nix::sched::{sched_setaffinity, CpuSet};
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls (sched_setaffinity), nothing
    // allocated.
    unsafe {
        command.pre_exec(move || {
            let mut set = CpuSet::new();
            set.set(cpu)?;
            sched_setaffinity(Pid::from_raw(0), &set)?;
            Ok(())
        });
    }
}

/// The barrier: every child ready, or an error naming the ones that were not.
fn wait_until_ready(
    rx: &Receiver<Event>,
    children: &mut [ChildProcess],
    launch: &LocalLaunch,
    stop: &StopSignal,
) -> Result<(), SessionError> {
    let deadline = Instant::now() + launch.start_timeout;
    while children.iter().any(|c| !c.ready) {
        if stop.is_requested() {
            return Err(SessionError::Interrupted(
                "interrupted before the clients started".into(),
            ));
        }
        let now = Instant::now();
        if now >= deadline {
            let missing: Vec<String> = children
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.ready)
                .map(|(i, _)| i.to_string())
                .collect();
            return Err(SessionError::Failed(format!(
                "client(s) {} of {} not ready (connected) after {}: the run did not start",
                missing.join(", "),
                children.len(),
                humantime::format_duration(launch.start_timeout)
            )));
        }
        match rx.recv_timeout((deadline - now).min(Duration::from_millis(100))) {
            Ok(Event::Said(i, FromClient::Ready)) => children[i].ready = true,
            Ok(Event::Said(i, said @ (FromClient::Ping { .. } | FromClient::Probe(_)))) => {
                answer(children, i, said)
            }
            Ok(Event::Said(_, FromClient::Progress(_) | FromClient::Point { .. }))
            | Err(RecvTimeoutError::Timeout) => {}
            Ok(Event::Closed(i)) => {
                children[i].closed = true;
                let status = children[i].process.wait();
                // Ctrl-C on a terminal reaches the children too, maybe before this process sees it.
                if stop.is_requested() || ended_by_interrupt(&status) {
                    return Err(SessionError::Interrupted(
                        "interrupted before the clients started".into(),
                    ));
                }
                return Err(SessionError::Failed(format!(
                    "client {i} of {} ended before the start ({}): the run did not start",
                    children.len(),
                    how_it_ended(status)
                )));
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(())
}

/// Until every child has ended: their progress merged into one line, and a stop passed on. A
/// child past the run's deadline ([`crate::share::EndRule`]: stopped with SIGSTOP, hung) is killed and
/// named missing, so the wait always ends. A watched run's points are merged as they come, and its
/// shared request sets opened.
fn follow_progress(
    rx: &Receiver<Event>,
    children: &mut [ChildProcess],
    request: &RunRequest,
    phase: Phase,
    stop: &StopSignal,
    rule: &crate::share::EndRule,
    mut watched: Option<&mut MergedTimeline>,
) {
    let mut latest: Vec<Option<ClientProgress>> = vec![None; children.len()];
    let mut alive = children.len();
    let mut stopped_at = None;
    let mut first_ended = None;
    let mut next_line = Instant::now() + request.status_interval;
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Said(i, FromClient::Progress(p))) => {
                latest[i] = Some(p);
                children[i].last_heard = Instant::now();
            }
            Ok(Event::Said(i, FromClient::Ready)) => children[i].last_heard = Instant::now(),
            Ok(Event::Said(i, said @ (FromClient::Ping { .. } | FromClient::Probe(_)))) => {
                children[i].last_heard = Instant::now();
                answer(children, i, said);
            }
            Ok(Event::Said(i, FromClient::Point { index, point })) => {
                children[i].last_heard = Instant::now();
                let open = watched
                    .as_deref_mut()
                    .and_then(|w| w.told(i, index, &point, Instant::now()));
                if let Some(set) = open {
                    tell_all(children, &to_client(&ToClient::OpenSet { set }));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Ok(Event::Closed(i)) => {
                latest[i] = None;
                children[i].closed = true;
                first_ended.get_or_insert_with(Instant::now);
                alive -= 1;
                // A watched run without one of its clients cannot go on (its sets would never
                // close): the others end now, and the run is incomplete. A client that ended
                // well (its window over) is no loss.
                if watched.is_some()
                    && alive > 0
                    && !stop.is_requested()
                    && !ended_well(&mut children[i].process)
                {
                    scalebench_session::note!(
                        "client {i} ended before the run: ending the others (the run is incomplete)"
                    );
                    stop.finish();
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
        // Ctrl-C on a terminal reaches the children too; a signal sent to this process alone is
        // passed on, so each child stops and keeps what it measured.
        if stop.is_requested() && stopped_at.is_none() {
            stopped_at = Some(Instant::now());
            if stop.is_finish() {
                tell_all(children, &to_client(&ToClient::Finish));
            }
            for c in children.iter().filter(|c| !c.closed && !stop.is_finish()) {
                // A child this process started and has not reaped: its pid is its own still.
                let _ = kill(Pid::from_raw(c.process.id() as i32), Signal::SIGINT);
            }
        }
        let now = Instant::now();
        for (i, c) in children.iter_mut().enumerate() {
            if c.closed || c.killed.is_some() {
                continue;
            }
            if now >= rule.deadline(first_ended, Some(c.last_heard), stopped_at) {
                let round = |d: Duration| {
                    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
                };
                c.killed = Some(match stopped_at {
                    Some(_) => format!(
                        "did not end within {} of the stop (its grace period and {}): killed",
                        round(rule.grace + crate::share::STOP_MARGIN),
                        round(crate::share::STOP_MARGIN)
                    ),
                    None => format!(
                        "still running {} after the run's end or its last sign of life (silent for {}): stopped or hung, killed",
                        round(rule.grace + rule.margin),
                        round(now.duration_since(c.last_heard))
                    ),
                });
                scalebench_session::note!(
                    "client {i}: {}",
                    c.killed.as_deref().unwrap_or_default()
                );
                let _ = c.process.kill();
            }
        }
        if !request.quiet && now >= next_line {
            next_line += request.status_interval;
            scalebench_session::note!("{}", merged_line(phase, &latest, alive, children.len()));
        }
    }
}

/// Whether a child whose output closed exited with success (waited for up to a second: its output
/// closes as it exits).
fn ended_well(process: &mut Child) -> bool {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        match process.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) | Err(_) => return false,
        }
    }
}

fn end_all(children: &mut [ChildProcess]) {
    for c in children.iter_mut() {
        let _ = c.process.kill();
        let _ = c.process.wait();
    }
}

/// A child that ended on Ctrl-C or SIGTERM: exit code 130 (its handler's) or killed by the signal
/// before its handler was installed. A run whose clients ended so was interrupted, not failed.
fn ended_by_interrupt(status: &std::io::Result<ExitStatus>) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.as_ref().is_ok_and(|s| {
        s.code() == Some(130)
            || matches!(
                s.signal().map(Signal::try_from),
                Some(Ok(Signal::SIGINT | Signal::SIGTERM))
            )
    })
}

fn how_it_ended(status: std::io::Result<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exited with code {code} and no result"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "ended without a result".into(),
        },
        Err(e) => format!("could not be waited for: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39, point 9: a FIFO planted as a clients' directory's lock file hung every later
    /// launch in its `open`; now it is passed over (and another user's directory is not touched).
    #[test]
    fn a_planted_fifo_lock_neither_hangs_nor_removes_anything() {
        let base = tempfile::tempdir().unwrap();
        let planted = base.path().join(format!("{CLIENTS_DIR_PREFIX}planted"));
        std::fs::create_dir(&planted).unwrap();
        let fifo = std::ffi::CString::new(
            planted
                .join(LAUNCHER_LOCK)
                .to_str()
                .expect("a UTF-8 path")
                .as_bytes(),
        )
        .unwrap();
        // SAFETY: mkfifo(3) on a path this test owns.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o666) }, 0);
        // A stale directory of our own (its lock free) is removed beside it.
        let stale = base.path().join(format!("{CLIENTS_DIR_PREFIX}stale"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join(LAUNCHER_LOCK), "").unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let path = base.path().to_path_buf();
        std::thread::spawn(move || {
            remove_stale_client_dirs(&path);
            let _ = done.send(());
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the scan ends, whatever is planted");
        assert!(planted.exists());
        assert!(!stale.exists());
    }
}
