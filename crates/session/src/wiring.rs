//! What belongs to the one process that measures a request, passed beside it: the handles that
//! never travel to another process (a signal, observers, a log, a publisher, a rendezvous). The
//! request ([`crate::request::RunRequest`]) holds what was asked; this holds how this process is
//! wired to whoever asked it, so that nobody patches a handle into a request.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scalebench_exec::{MeasurementStart, Rendezvous, StopSignal, TimelineLog};
use serde::{Deserialize, Serialize};

use crate::clients::ClientShare;
use crate::error::SessionError;
use crate::request::{Processes, RunRequest};

/// The process handles of one execution of a request. `RunWiring::default()`: a process on its own,
/// stopped by Ctrl-C only, publishing nowhere.
#[derive(Debug, Clone, Default)]
pub struct RunWiring {
    /// Ends the phases early: whoever holds a clone can stop them (Ctrl-C does) or finish them as
    /// planned (an elastic controller does). None: a signal of their own.
    pub stop: Option<StopSignal>,
    /// Told when the clients' measurement window opens (a launcher on this machine), for what it
    /// runs beside them.
    pub measurement_start: Option<MeasurementStart>,
    /// Where an elastic controller watches the run's timeline while it goes on.
    pub timeline_log: Option<TimelineLog>,
    /// Where the phases publish their live figures (`--metrics-listen`), if anywhere.
    pub metrics: Option<crate::metrics::Publisher>,
    /// Where a client of a distributed run meets the others before it starts.
    pub rendezvous: Option<Arc<dyn Rendezvous>>,
    /// Who this process is in the run: alone, or one client and its share.
    pub launch: Launch,
    /// What each client process of a distributed run keeps of its own: a launcher hands it to the
    /// clients it starts, a client keeps its own at its index.
    pub client_outputs: ClientOutputs,
    /// A replay's operations, fed to the run phase's slots by the thread reading its capture.
    pub feed: Option<Arc<scalebench_exec::feed::FeedQueues>>,
}

impl RunWiring {
    /// The phases' stop signal: the one given, else a signal of their own.
    pub fn stop_signal(&self) -> StopSignal {
        self.stop.clone().unwrap_or_default()
    }
}

/// Who measures a request in this process. The request says what was asked; which part of it this
/// process runs is its launch, never a field of the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Launch {
    /// This process alone: the whole request.
    #[default]
    Alone,
    /// One client of a run whose clients meet at a rendezvous (`--rendezvous`, `--ssh`, srun,
    /// Kubernetes): its share of the work.
    Share(ClientShare),
    /// One client of several started by a launcher on this machine (`--clients N`), which relays
    /// the probe's writer (client 0) to the others' readers and acts the faults while they load.
    UnderLauncherHere(ClientShare),
}

impl Launch {
    /// This client's share of the run; None alone.
    pub fn share(&self) -> Option<ClientShare> {
        match *self {
            Launch::Alone => None,
            Launch::Share(share) | Launch::UnderLauncherHere(share) => Some(share),
        }
    }

    /// How many processes measure the request, for [`RunRequest::check`].
    pub fn processes(&self) -> Processes {
        match self {
            Launch::Alone => Processes::One,
            Launch::Share(_) => Processes::Clients {
                launcher_here: false,
            },
            Launch::UnderLauncherHere(_) => Processes::Clients {
                launcher_here: true,
            },
        }
    }

    /// The rules of `request` for this process: those between its fields
    /// ([`RunRequest::check`]), and a client's need of a database the others share.
    pub fn check(
        &self,
        request: &RunRequest,
        phases: &[scalebench_exec::Phase],
    ) -> Result<(), SessionError> {
        request.check(self.processes(), phases)?;
        if let Some(share) = self.share() {
            if request.uses_default_db() {
                return Err(SessionError::Usage(format!(
                    "the {} clients of a run need a database they share: give --db or --deployment",
                    share.clients
                )));
            }
        }
        Ok(())
    }
}

/// What each client process of a distributed run writes of its own besides its result (on its
/// machine): its /metrics endpoint and its HDR interval logs. It travels to the clients in their
/// order (a launcher's), never in the request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientOutputs {
    /// `--metrics-listen` of a distributed run: client I serves its own /metrics at this address's
    /// port + I (port 0: any free one), every series labelled `client="I"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<SocketAddr>,
    /// HDR interval logs of a distributed run: each client writes its own under `DIR/client-I`
    /// (on its machine), the launcher or client 0 the merged ones in `DIR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr_log: Option<PathBuf>,
}

impl ClientOutputs {
    /// Where client `index` writes its own HDR logs: `DIR/client-I`.
    pub fn hdr_log_of(&self, index: u32) -> Option<PathBuf> {
        self.hdr_log
            .as_deref()
            .map(|d: &Path| d.join(format!("client-{index}")))
    }
}

/// `--metrics-listen ADDR` (if given) served for as long as the returned guard lives, and the
/// wiring whose phases publish there.
pub fn serve_metrics(
    listen: Option<std::net::SocketAddr>,
) -> Result<(Option<crate::metrics::MetricsGuard>, RunWiring), crate::error::SessionError> {
    let guard = listen.map(crate::metrics::serve_while).transpose()?;
    let wiring = RunWiring {
        metrics: guard.as_ref().map(|m| m.publisher()),
        ..Default::default()
    };
    Ok((guard, wiring))
}
