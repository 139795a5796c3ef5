//! One client of a rendezvous run (`run --rendezvous`): its outputs checked, its share run with the
//! others through the [`EtcdRendezvous`], its own result kept on this machine first, then handed
//! to the rendezvous; client 0 gathers and merges everybody's. The protocol itself is in [`crate::etcd`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use scalebench_exec::Phase;
use scalebench_measure::RunResult;
use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::ClientOutputs;

use crate::etcd::{EtcdRendezvous, RendezvousUrl};

/// What one client of a rendezvous run ends with: client 0 merges everybody's result, the others
/// keep their own (handed to the rendezvous, or only on disk when that failed).
#[derive(Debug)]
pub enum ClientRun {
    Own {
        result: RunResult,
        /// Where it was kept on this machine (None: it could not be written, `kept_error` says why).
        kept: Option<PathBuf>,
        kept_error: Option<String>,
        /// Why it could not be handed back to the rendezvous (None: it was).
        hand_back_error: Option<String>,
    },
    Merged {
        outcome: crate::outcome::DistributedOutcome,
        kept: Option<PathBuf>,
        kept_error: Option<String>,
    },
}

/// How a client of a rendezvous run ended ([`run_as_client`]).
pub enum ClientEnd {
    /// Client 0: the merge of every client's result (the missing named).
    Merged(Box<crate::outcome::DistributedOutcome>),
    /// Another client: its result is with the rendezvous (and kept on this machine).
    HandedBack { interrupted: bool },
    /// Another client whose result could not be handed back: kept on this machine only, for
    /// `scalebench gather` (exit 3).
    Incomplete { interrupted: bool },
}

impl ClientEnd {
    /// 130 when interrupted, 3 when this client's result could not be handed back, else 0
    /// (client 0's is its merged outcome's).
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientEnd::Merged(outcome) => outcome.exit_code(),
            ClientEnd::HandedBack { interrupted: true }
            | ClientEnd::Incomplete { interrupted: true } => 130,
            ClientEnd::HandedBack { interrupted: false } => 0,
            ClientEnd::Incomplete { interrupted: false } => crate::outcome::EXIT_INCOMPLETE,
        }
    }
}

/// One client of a rendezvous run, as `run --rendezvous` starts it: its outputs checked, its
/// phase run with the others ([`run_client`]), its own result kept on this machine first (beside
/// `output`, else in the state directory) and where it went said on stderr.
pub fn run_as_client(
    request: &RunRequest,
    phase: Phase,
    url: &RendezvousUrl,
    share: ClientShare,
    start_timeout: Duration,
    (output, outputs): (Option<&Path>, &ClientOutputs),
) -> Result<ClientEnd, SessionError> {
    crate::share::check_client(request, phase)?;
    let keep_at = match output {
        Some(o) => Some(crate::share::client_output(o, share.index)),
        None => default_keep_path(url, phase, share.index),
    };
    if share.index == 0 {
        crate::outcome::check_outputs(output, share.clients)?;
    } else if let Some(o) = output {
        scalebench_session::outputs::check_outputs(
            [crate::share::client_output(o, share.index).as_path()],
            None,
        )?;
    }
    let who = format!("client {} of {}", share.index, share.clients);
    let kept_note = |kept: &Option<PathBuf>, error: &Option<String>| match (kept, error) {
        (Some(path), _) => scalebench_session::note!("{who}: result kept at {}", path.display()),
        (None, Some(e)) => {
            scalebench_session::note!(
                "warning: {who}: its result could not be kept on this machine: {e}"
            )
        }
        (None, None) => {}
    };
    match run_client(
        request,
        phase,
        url,
        share,
        start_timeout,
        (keep_at, outputs),
    )? {
        ClientRun::Merged {
            outcome,
            kept,
            kept_error,
        } => {
            kept_note(&kept, &kept_error);
            Ok(ClientEnd::Merged(Box::new(outcome)))
        }
        ClientRun::Own {
            result,
            kept,
            kept_error,
            hand_back_error,
        } => {
            kept_note(&kept, &kept_error);
            let interrupted = result.interrupted;
            if let Some(e) = hand_back_error {
                let files = kept
                    .as_ref()
                    .map_or_else(|| "their result files".into(), |k| k.display().to_string());
                scalebench_session::note!(
                    "INCOMPLETE: {who} could not hand its result to {} ({e}); merge it with the others' \
                     with `scalebench gather --rendezvous {} {files} ...` or `scalebench gather FILES...`",
                    url.display(),
                    url.display()
                );
                return Ok(ClientEnd::Incomplete { interrupted });
            }
            scalebench_session::note!(
                "{who}: result handed to {} (client 0 merges it)",
                url.display()
            );
            Ok(ClientEnd::HandedBack { interrupted })
        }
    }
}

/// How long client 0 waits for the others' results after its own: their phase ends with the same
/// duration, or their share of the operations; a client later than this is named as missing, and
/// `scalebench gather` can still collect it.
pub fn gather_timeout(request: &RunRequest) -> Duration {
    request.grace + crate::share::END_MARGIN
}

/// Where a client without `--output` keeps its own result: the per-user state directory
/// (`$SCALEBENCH_STATE_DIR`, else `$XDG_STATE_HOME/scalebench`, else `~/.local/state/scalebench`),
/// under `runs/<prefix>/<phase>.client-<index>.json`. A prefix names one run, so runs never share a file.
pub fn default_keep_path(url: &RendezvousUrl, phase: Phase, index: u32) -> Option<PathBuf> {
    let state = scalebench_session::files::state_dir()?;
    let prefix: PathBuf = url
        .prefix
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    Some(
        state
            .join("runs")
            .join(prefix)
            .join(format!("{}.client-{index}.json", phase.name())),
    )
}

/// Keeps `result` at `path` (its directory created), before anything is handed to etcd.
fn keep(result: &RunResult, path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    result.write_atomically(path).map_err(|e| e.to_string())
}

/// Runs `phase` of `request` as client `share` of the run that meets at `url`; its own result is
/// kept at `keep_at` (beside `--output`, or [`default_keep_path`]) before it is handed back, its
/// /metrics and HDR logs where `outputs` say for its index.
pub fn run_client(
    request: &RunRequest,
    phase: Phase,
    url: &RendezvousUrl,
    share: ClientShare,
    start_timeout: Duration,
    (keep_at, outputs): (Option<PathBuf>, &ClientOutputs),
) -> Result<ClientRun, SessionError> {
    let rendezvous = std::sync::Arc::new(EtcdRendezvous::new(
        url.clone(),
        share,
        start_timeout,
        (!request.quiet).then_some(request.status_interval),
    )?);
    let own = crate::share::client_request(request, share);
    let mut wiring = scalebench_session::wiring::RunWiring {
        rendezvous: Some(rendezvous.clone()),
        launch: scalebench_session::wiring::Launch::Share(share),
        ..Default::default()
    };
    let _metrics = crate::share::serve_client_metrics(outputs, &mut wiring, share)?;
    let mut executed = scalebench_session::execute::execute(&own, &wiring, &[phase])?;
    executed.warn_unwritten();
    // This client's own logs, on its machine; client 0 writes the merged ones.
    let logs_error = match outputs.hdr_log_of(share.index) {
        Some(dir) => executed.write_hdr_logs(&dir).err(),
        None => None,
    };
    if let Some(e) = logs_error {
        scalebench_session::note!("warning: client {}: its HDR logs: {e}", share.index);
    }
    let result = executed.result;
    let (kept, kept_error) = match &keep_at {
        Some(path) => match keep(&result, path) {
            Ok(()) => (Some(path.clone()), None),
            Err(e) => (None, Some(e)),
        },
        None => (
            None,
            Some("no place to keep it (no --output, no state directory)".into()),
        ),
    };
    let hand_back_error = rendezvous.publish(&result).err();
    if share.index != 0 {
        return Ok(ClientRun::Own {
            result,
            kept,
            kept_error,
            hand_back_error,
        });
    }
    let (results, interrupted) = rendezvous.gather(result, gather_timeout(request), request.grace);
    let mut outcome = crate::outcome::merge_clients(Some(request), phase, "etcd", results)?;
    outcome.set_interrupted(interrupted);
    Ok(ClientRun::Merged {
        outcome,
        kept,
        kept_error,
    })
}
