//! Ctrl-C and SIGTERM: the one process-wide piece of a run, since a signal handler is one per
//! process. It requests the stop signal of the phase in progress, which the phase was given as a
//! value in its request.

use std::sync::Mutex;

use scalebench_exec::StopSignal;

/// The stop signal of the phase in progress: the first Ctrl-C (or SIGTERM) requests it; what was
/// measured is still written (and temporary data removed) after a second one, since `timeout` and
/// impatient users send two; only a third aborts at once.
static CURRENT_STOP: Mutex<Option<StopSignal>> = Mutex::new(None);

/// Set by the first Ctrl-C and never cleared: a stop that arrives while no phase runs (an
/// experiment deploying, restoring or waiting between runs) is not lost.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How many times Ctrl-C (or SIGTERM) came.
static SIGNALS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// How many signals came so far: a wait that must end only at a further one compares it.
pub fn signals_received() -> u32 {
    SIGNALS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether Ctrl-C (or SIGTERM) was received: callers that run phases one after another stop.
pub fn interrupt_requested() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Makes `stop` the phase's stop signal, requested at once if Ctrl-C came already.
pub fn register_stop(stop: &StopSignal) {
    let mut current = CURRENT_STOP.lock().unwrap_or_else(|e| e.into_inner());
    *current = Some(stop.clone());
    // Under the lock the handler takes after setting the flag: one of the two sees the other.
    if interrupt_requested() {
        stop.request();
    }
}

/// Installs the Ctrl-C (and SIGTERM) handler once per process.
pub fn install_handler() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let n = SIGNALS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
            // A cluster's readiness or idleness wait ends too.
            scalebench_deploy::interrupt_waits();
            if n >= 3 {
                // No node stays stopped by a fault after this process is gone.
                crate::fault::resume_all();
                crate::note!("\naborted: nothing more is written");
                std::process::exit(130);
            }
            let guard = CURRENT_STOP.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(stop) = guard.as_ref() {
                stop.request();
            }
            if n == 1 {
                crate::note!("\ninterrupted: finishing in-flight operations and writing what was measured (Ctrl-C twice more to abort)");
            } else {
                crate::note!("\nstill writing what was measured (one more Ctrl-C aborts with nothing written)");
            }
        });
    });
}

/// The phase in progress ended: a Ctrl-C from now on only sets the flag.
pub fn clear_stop() {
    *CURRENT_STOP.lock().unwrap_or_else(|e| e.into_inner()) = None;
}
