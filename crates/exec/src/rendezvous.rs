//! The one point where a client of a distributed run meets the others: after its connections are
//! made it says it is ready and receives the common start; while it runs it publishes progress.
//! Execution only knows this trait; the launchers (local processes, etcd) implement it.

use std::time::SystemTime;

use crate::progress::ProgressState;
use crate::stop::StopSignal;
use scalebench_measure::definition::RunDefinition;
use scalebench_measure::Phase;

/// Why a client did not start with the others.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RendezvousError {
    /// The clients were not started alike (another duration, workload or number of clients): bad
    /// input, found before anything ran.
    #[error("{0}")]
    Refused(String),
    /// The others did not come, or the rendezvous could not be reached.
    #[error("{0}")]
    Failed(String),
}

pub trait Rendezvous: Send + Sync + std::fmt::Debug {
    /// What defines the run this client was started for (phase, clients, duration, the workload
    /// by meaning, ...), told once before its phase: a rendezvous that compares clients refuses one
    /// whose definition differs at [`Rendezvous::ready`].
    fn agree_on(&self, _definition: &RunDefinition) {}

    /// Called once every connection of this client is made: blocks until every client of the run
    /// is ready (or `stop` is requested, or the rendezvous gives up) and returns the wall-clock
    /// instant at which all of them start. An error says who did not come, or who differs.
    fn ready(&self, phase: Phase, stop: &StopSignal) -> Result<SystemTime, RendezvousError>;

    /// This client's live figures, about once a second while the phase runs.
    fn progress(&self, _state: &ProgressState) {}

    /// This client's clock against its launcher's, where the rendezvous measured it.
    fn clock(&self) -> Option<scalebench_measure::result::ClockOffset> {
        None
    }

    /// The consistency probe's part in this run, taken once: the writer telling the other
    /// clients, or readers following it. None: a probe of this process alone (or none at all).
    fn probe_role(&self) -> Option<crate::consistency::ProbeRole> {
        None
    }
}
