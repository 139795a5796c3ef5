//! What belongs to the one process that measures a request, passed beside it: the handles that
//! never travel to another process (a signal, observers, a log, a publisher, a rendezvous). The
//! request ([`crate::request::RunRequest`]) holds what was asked; this holds how this process is
//! wired to whoever asked it, so that nobody patches a handle into a request.

use std::sync::Arc;

use scalebench_exec::{MeasurementStart, Rendezvous, StopSignal, TimelineLog};

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
}

impl RunWiring {
    /// The phases' stop signal: the one given, else a signal of their own.
    pub fn stop_signal(&self) -> StopSignal {
        self.stop.clone().unwrap_or_default()
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
