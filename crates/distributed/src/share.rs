//! What each client of a run is asked to do and when it must have ended: its request (its share of
//! the whole), the rules a request must meet to run from several clients, and the end margins.

use std::time::{Duration, Instant};

use scalebench_exec::Phase;
use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;
use scalebench_session::request::{Processes, RunRequest};
use scalebench_session::wiring::{ClientOutputs, Launch};

/// The request client `share` runs (its share itself goes beside it, as its launch).
pub fn client_request(request: &RunRequest, share: ClientShare) -> RunRequest {
    let mut r = request.clone();
    r.quiet = true;
    // Each client's probe history beside the merged one (the launcher merges them into it).
    if let Some(probe) = r.consistency_probe.as_mut() {
        probe.history = probe
            .history
            .as_deref()
            .map(|h| client_output(h, share.index));
    }
    r
}

/// Where client `index`'s own file goes beside the merged `output`: `run.json` ->
/// `run.client-0.json`.
pub fn client_output(output: &std::path::Path, index: u32) -> std::path::PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let name = match output.extension() {
        Some(ext) => format!("{stem}.client-{index}.{}", ext.to_string_lossy()),
        None => format!("{stem}.client-{index}"),
    };
    output.with_file_name(name)
}

/// `--metrics-listen ADDR` of `clients` clients: client I serves its own /metrics at the port + I,
/// which must be a port.
pub fn check_client_metrics(
    listen: Option<std::net::SocketAddr>,
    clients: Option<u32>,
) -> Result<(), SessionError> {
    let (Some(addr), Some(n)) = (listen, clients) else {
        return Ok(());
    };
    let last = u32::from(addr.port()) + n - 1;
    if addr.port() != 0 && last > u32::from(u16::MAX) {
        return Err(SessionError::Usage(format!(
            "invalid value '{addr}' for '--metrics-listen': client {} would serve port {last}",
            n - 1
        )));
    }
    Ok(())
}

/// Client `share`'s own /metrics endpoint (`--metrics-listen` of a distributed run: port + its
/// index), serving while the guard lives; the phases wired by `wiring` publish there.
pub fn serve_client_metrics(
    outputs: &ClientOutputs,
    wiring: &mut scalebench_session::wiring::RunWiring,
    share: ClientShare,
) -> Result<Option<scalebench_session::metrics::MetricsGuard>, SessionError> {
    let Some(mut addr) = outputs.metrics_listen else {
        return Ok(None);
    };
    if addr.port() != 0 {
        let port = u32::from(addr.port()) + share.index;
        addr.set_port(u16::try_from(port).map_err(|_| {
            SessionError::Usage(format!(
                "invalid value '{addr}' for '--metrics-listen': client {} would serve port {port}",
                share.index
            ))
        })?);
    }
    let guard = scalebench_session::metrics::serve_while(addr)?;
    guard.server().set_client(share.index);
    wiring.metrics = Some(guard.publisher());
    Ok(Some(guard))
}

/// What client `share` was to do, in words, for the list of missing clients.
pub fn describe_share(request: &RunRequest, share: ClientShare, phase: Phase) -> String {
    let r = client_request(request, share);
    match scalebench_session::settings::Settings::checked(&r, Some(share), phase) {
        Ok(s) => share.describe(&s.workload, phase),
        Err(e) => format!("client {} of {} ({e})", share.index, share.clients),
    }
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
        let planned_end = scalebench_session::settings::Settings::checked(request, None, phase)
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
        let far = Instant::now() + scalebench_session::request::MAX_DURATION;
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

/// Checks a distributed run before any client starts, for a launcher: bad input is found once,
/// with exit code 2, not once per client (every client's share is checked). `launcher_here`: the
/// launcher is on the clients' machine ([`Launch::UnderLauncherHere`]).
pub fn check(
    request: &RunRequest,
    clients: u32,
    phase: Phase,
    launcher_here: bool,
) -> Result<(), SessionError> {
    check_run(request, phase, launcher_here)?;
    for index in 0..clients {
        let share = ClientShare::new(index, clients)?;
        let launch = if launcher_here {
            Launch::UnderLauncherHere(share)
        } else {
            Launch::Share(share)
        };
        check_share(request, launch, share, phase)?;
    }
    Ok(())
}

/// Checks what one client of a rendezvous run is to do, before it joins: the rules of the whole
/// run. Its own share's settings are checked when its phase resolves them, once, before it connects
/// (the others' are theirs, checked on their machines).
pub fn check_client(request: &RunRequest, phase: Phase) -> Result<(), SessionError> {
    check_run(request, phase, false)
}

/// What holds for the run whatever the client: its rules for several clients, and no deployment.
fn check_run(request: &RunRequest, phase: Phase, launcher_here: bool) -> Result<(), SessionError> {
    request.check(Processes::clients(launcher_here), &[phase])?;
    if request.deployment.is_some() {
        return Err(SessionError::Usage(
            "clients on other machines cannot read this machine's deployment: give the cluster's URL with --db \
             (scalebench cluster status prints it)"
                .into(),
        ));
    }
    Ok(())
}

/// One client's request: the rules between its fields, and its settings (its share applied).
fn check_share(
    request: &RunRequest,
    launch: Launch,
    share: ClientShare,
    phase: Phase,
) -> Result<(), SessionError> {
    let r = client_request(request, share);
    launch.check(&r, &[phase])?;
    scalebench_session::settings::Settings::check(&r, Some(share), phase)
}

/// The request with its deployment replaced by what the clients need of it: the cluster's URL and
/// binding options. The steps around the phase (waiting until the cluster is idle, compaction,
/// space on disk) are the launcher's, taken once (`with_deployment_steps` in lib.rs).
pub fn without_deployment(request: &RunRequest) -> Result<RunRequest, SessionError> {
    let Some(file) = &request.deployment else {
        return Ok(request.clone());
    };
    let cluster = scalebench_session::cluster::open(file, &request.clusters_dir)?;
    let mut r = request.clone();
    r.deployment = None;
    let url = r.db.get_or_insert_with(|| cluster.url()).clone();
    let scheme = url.split("://").next().unwrap_or_default();
    if let Some(binding) = scalebench_binding::registry::for_scheme(scheme) {
        r.deployment_options =
            scalebench_session::settings::deployment_options(&cluster, binding.name);
    }
    Ok(r)
}
