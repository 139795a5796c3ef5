//! The rendezvous in a build without the etcd client (`--features embedded`, README command 1).
//! No [`RendezvousUrl`] parses there ([`crate::rendezvous_url::NEEDS_ETCD`]), so nothing below is
//! reached from the command line; each entry still refuses with the same line.

use std::time::Duration;

use scalebench_exec::Phase;
use scalebench_measure::RunResult;
use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;

pub use crate::rendezvous_url::RendezvousUrl;
use crate::rendezvous_url::NEEDS_ETCD;

/// Cannot exist without the etcd client: [`EtcdRendezvous::new`] refuses.
#[derive(Debug)]
pub struct EtcdRendezvous(std::convert::Infallible);

impl EtcdRendezvous {
    pub fn new(
        _url: RendezvousUrl,
        _share: ClientShare,
        _start_timeout: Duration,
        _status_interval: Option<Duration>,
    ) -> Result<EtcdRendezvous, SessionError> {
        Err(SessionError::Usage(NEEDS_ETCD.into()))
    }

    pub fn publish(&self, _result: &RunResult) -> Result<(), String> {
        match self.0 {}
    }

    pub fn gather(
        &self,
        _own: RunResult,
        _timeout: Duration,
        _grace: Duration,
    ) -> (Vec<Result<RunResult, String>>, bool) {
        match self.0 {}
    }
}

impl scalebench_exec::Rendezvous for EtcdRendezvous {
    fn agree_on(&self, _definition: &scalebench_measure::definition::RunDefinition) {
        match self.0 {}
    }
    fn ready(
        &self,
        _phase: Phase,
        _stop: &scalebench_exec::StopSignal,
    ) -> Result<std::time::SystemTime, scalebench_exec::RendezvousError> {
        match self.0 {}
    }
    fn progress(&self, _state: &scalebench_exec::ProgressState) {
        match self.0 {}
    }
}

/// Nothing to stop: no client of this build met at a rendezvous.
pub fn request_stop(_url: &RendezvousUrl, _phase: Phase) {}

pub fn gather(
    _url: &RendezvousUrl,
    _phase: Phase,
    _timeout: Duration,
) -> Result<Vec<Result<RunResult, String>>, SessionError> {
    Err(SessionError::Usage(NEEDS_ETCD.into()))
}
