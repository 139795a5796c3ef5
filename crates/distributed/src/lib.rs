//! One run from many client processes: each computes its share from (index, N)
//! ([`scalebench_session::clients::ClientShare`]), all start at one agreed instant (the [`scalebench_exec::Rendezvous`]
//! their launcher gives them), and their results merge into one, by histogram (Wegert, studies.md
//! section 2: one synchronous start, per-client insert ranges, results merged correctly).
//!
//! Launchers: [`local`] runs N client processes on this machine; [`etcd`] is the rendezvous of
//! clients started anywhere (by srun, a Kubernetes Indexed Job from [`kubernetes`], or [`ssh`]),
//! in builds with the `etcd` feature.

pub mod choice;
pub mod client;
pub mod client_process;
// The etcd client is a feature (on in the full build, off in `--features embedded`); without it
// every rendezvous is refused with one line naming the build that has it.
#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(not(feature = "etcd"))]
#[path = "without_etcd/etcd.rs"]
pub mod etcd;
pub mod kubernetes;
pub mod local;
pub mod order;
pub mod outcome;
pub mod rendezvous_url;
#[cfg(feature = "etcd")]
pub mod series;
#[cfg(not(feature = "etcd"))]
#[path = "without_etcd/series.rs"]
pub mod series;
pub mod share;
pub mod srun;
pub mod ssh;
pub mod timeline;

pub use outcome::*;
pub use share::*;

use std::time::Duration;

use scalebench_exec::Phase;
use scalebench_measure::RunResult;

use scalebench_session::beside::BesidePhase;
use scalebench_session::error::SessionError;
use scalebench_session::fault::FaultRequest;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::RunWiring;

/// Starts the clients of one run and merges their results: on this machine ([`local::LocalLaunch`]),
/// over ssh ([`ssh::SshLaunch`]) or as a Slurm job step ([`srun::SrunLaunch`]). Each checks the request against what its clients can do before
/// anything starts. (A rendezvous client is not a launcher: it is one of the clients,
/// [`client::run_as_client`]; Kubernetes starts its clients from manifests, [`kubernetes::manifests`].)
pub trait Launcher {
    /// How many clients the run has.
    fn clients(&self) -> u32;
    fn launch(
        &self,
        request: &RunRequest,
        wiring: &RunWiring,
        phase: Phase,
    ) -> Result<DistributedOutcome, SessionError>;
    /// The same clients for run `name` of a series (a saturation search's steps): a rendezvous
    /// holds one run per prefix, so each run of the series meets under `PREFIX/name`.
    fn for_run(&self, name: &str) -> Box<dyn Launcher + Send + Sync>;
}

/// A launcher is its struct (with its number of clients) and its module's `launch`.
macro_rules! launcher {
    ($launch:ty, $start:path, $for_run:path, $acts_here:expr) => {
        impl Launcher for $launch {
            fn clients(&self) -> u32 {
                self.clients
            }
            fn launch(
                &self,
                request: &RunRequest,
                wiring: &RunWiring,
                phase: Phase,
            ) -> Result<DistributedOutcome, SessionError> {
                let outcome = with_deployment_steps(
                    request,
                    wiring,
                    phase,
                    self.clients,
                    $acts_here,
                    |r, w| $start(self, r, w, phase),
                )?;
                scalebench_session::known_load::remember(request, &[phase], &outcome.merged);
                Ok(outcome)
            }
            fn for_run(&self, name: &str) -> Box<dyn Launcher + Send + Sync> {
                Box::new($for_run(self, name))
            }
        }
    };
}
// Only processes on this machine hear from each other through their launcher: the probe's writer
// reaches readers in the other clients there.
launcher!(
    local::LocalLaunch,
    local::launch,
    local::LocalLaunch::for_run,
    true
);
launcher!(ssh::SshLaunch, ssh::launch, ssh::SshLaunch::for_run, false);
launcher!(
    srun::SrunLaunch,
    srun::launch,
    srun::SrunLaunch::for_run,
    false
);

/// Runs `launch` on the request with its deployment replaced by what the clients need of it (URL,
/// binding options); the deployment's steps around the phase are taken here, once
/// ([`scalebench_session::phase::DeploymentSteps`]), the space on disk in the merged result.
fn with_deployment_steps(
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
    clients: u32,
    acts_here: bool,
    launch: impl FnOnce(&RunRequest, &RunWiring) -> Result<DistributedOutcome, SessionError>,
) -> Result<DistributedOutcome, SessionError> {
    let mut clients_request = share::without_deployment(request)?;
    // Every client's share checked before the deployment is waited on.
    share::check(&clients_request, clients, phase, acts_here)?;
    // The faults act from here, on the deployment's nodes, while the clients load: beside the
    // phase as in one process, timed from the measurement start the clients report.
    let faults = std::mem::take(&mut clients_request.faults);
    let victims = match (&request.deployment, faults.is_empty()) {
        (_, true) => Vec::new(),
        (file, false) => {
            let cluster = file
                .as_ref()
                .map(|f| scalebench_session::cluster::open(f, &request.clusters_dir))
                .transpose()?;
            FaultRequest::victims(&faults, cluster.as_ref())?
        }
    };
    // The request checked before the deployment is waited on (a bad one is refused at once).
    let steps = scalebench_session::phase::DeploymentSteps::before(request, phase)?;
    let mut clients_wiring = wiring.clone();
    let beside = (!victims.is_empty()).then(|| BesidePhase::faults(&victims));
    if let Some(b) = &beside {
        clients_wiring.measurement_start = Some(b.clock());
    }
    // A launch that fails drops the faults: every node resumed.
    let mut outcome = launch(&clients_request, &clients_wiring)?;
    if let (Some(b), Some(merged)) = (beside, outcome.merged.phases.last_mut()) {
        // Faults only: nothing else to record, no history left unwritten.
        let _ = b.finish().record_in(merged);
    }
    if let (Some(steps), Some(merged)) = (steps, outcome.merged.phases.last_mut()) {
        // What was measured is kept whatever becomes of the steps after it.
        match steps.after(merged, request) {
            Ok(()) => {}
            Err(SessionError::Interrupted(what)) => {
                scalebench_session::note!("{what}: the phase's space on disk is not measured");
                outcome.set_interrupted(true);
            }
            Err(e) => outcome.after_phase_failed = Some(e.to_string()),
        }
    }
    Ok(outcome)
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

/// `scalebench gather`: the clients' results [`gather`] finds, merged, once `output` (the merged
/// result's file) was checked writable.
pub fn gather_merged(
    request: &GatherRequest,
    output: &std::path::Path,
) -> Result<DistributedOutcome, SessionError> {
    scalebench_session::outputs::CommandFiles::new()
        .output("-o", Some(output))
        .inputs("a client's result", &request.files)
        .check()?;
    let gathered = gather(request)?;
    check_outputs(Some(output), gathered.results.len() as u32)?;
    merge_clients(None, gathered.phase, "etcd", gathered.results)
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
                scalebench_session::note!("warning: {e}: merging the files alone");
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
