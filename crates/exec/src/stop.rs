//! The stop signal of a phase: set by Ctrl-C, a controller or a rendezvous, read cheaply on the
//! hot path, and when it was set (what was measured until then is kept).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request to stop early (Ctrl-C), and when it was made. Cheap to check on the hot path.
#[derive(Debug, Clone)]
pub struct StopSignal {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    requested: AtomicBool,
    /// The stop ends the window as planned (a controller decided), not an interruption.
    finish: AtomicBool,
    epoch: Instant,
    at_nanos: AtomicU64,
    /// Requests so far: a wait after the window (the write check) ends at the first one after
    /// it began, though the window's own stop was requested already.
    requests: AtomicU32,
    /// Of those, planned finishes (counted before their request).
    finishes: AtomicU32,
    /// Set with the request: ends a binding's setup that is still connecting.
    cancel: scalebench_binding::Cancel,
}

impl Default for StopSignal {
    fn default() -> Self {
        Self::new()
    }
}

impl StopSignal {
    pub fn new() -> Self {
        StopSignal {
            inner: Arc::new(Inner {
                requested: AtomicBool::new(false),
                finish: AtomicBool::new(false),
                epoch: Instant::now(),
                at_nanos: AtomicU64::new(0),
                requests: AtomicU32::new(0),
                finishes: AtomicU32::new(0),
                cancel: Default::default(),
            }),
        }
    }

    /// Requests a stop; the first request's time is kept.
    pub fn request(&self) {
        // The count first, then the time, then the flag: whoever sees the flag sees the time (0
        // means "not yet"), and a count taken after it includes this request.
        self.inner.requests.fetch_add(1, Ordering::SeqCst);
        let at = (self.inner.epoch.elapsed().as_nanos() as u64).max(1);
        let _ = self
            .inner
            .at_nanos
            .compare_exchange(0, at, Ordering::SeqCst, Ordering::SeqCst);
        self.inner.requested.store(true, Ordering::SeqCst);
        self.inner.cancel.cancel();
    }

    /// How many stops were requested so far (each Ctrl-C, each controller's request).
    pub fn requests(&self) -> u32 {
        self.inner.requests.load(Ordering::SeqCst)
    }

    /// What a binding's setup watches (see [`scalebench_binding::BindingConfig::cancel`]).
    pub fn cancel(&self) -> &scalebench_binding::Cancel {
        &self.inner.cancel
    }

    /// Ends the measurement window now, as planned: the phase ends "finished", not "interrupted".
    pub fn finish(&self) {
        if !self.is_requested() {
            self.inner.finish.store(true, Ordering::SeqCst);
        }
        self.inner.finishes.fetch_add(1, Ordering::SeqCst);
        self.request();
    }

    /// Whether a stop was asked for that is not a planned finish (Ctrl-C, SIGTERM), before or
    /// after the finish: a wait after the window ends at it.
    pub fn interrupted(&self) -> bool {
        self.requests() > self.inner.finishes.load(Ordering::SeqCst)
    }

    pub fn is_finish(&self) -> bool {
        self.inner.finish.load(Ordering::SeqCst)
    }

    #[inline]
    pub fn is_requested(&self) -> bool {
        self.inner.requested.load(Ordering::Relaxed)
    }

    /// When the stop was requested.
    pub fn requested_at(&self) -> Option<Instant> {
        self.is_requested().then(|| {
            self.inner.epoch + Duration::from_nanos(self.inner.at_nanos.load(Ordering::SeqCst))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::StopSignal;

    #[test]
    fn a_signal_after_a_planned_finish_is_an_interruption() {
        let stop = StopSignal::new();
        assert!(!stop.interrupted());
        stop.finish();
        assert!(stop.is_finish() && !stop.interrupted());
        stop.request();
        assert!(stop.is_finish() && stop.interrupted());

        let signal_first = StopSignal::new();
        signal_first.request();
        signal_first.finish();
        assert!(!signal_first.is_finish() && signal_first.interrupted());
    }
}
