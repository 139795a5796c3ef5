//! What runs beside a phase, from its own threads and connections, never counted in its figures:
//! the consistency probe (its writes from the measurement start to the window's end) and the faults
//! (Jepsen's pause nemesis, timed from the measurement start). [`BesidePhase::start`] before the
//! phase, its [`BesidePhase::clock`] among the phase's observers (the executor tells it when the
//! measurement window opens), [`BesidePhase::finish`] after it.

use scalebench_binding::{registry, BindingFactory, BindingInfo, FactoryVisitor};
use scalebench_deploy::ProcessRef;
use scalebench_exec::consistency::{ProbeError, ProbeOutcome};
use scalebench_exec::{MeasurementStart, RunPlan, StopSignal};
use scalebench_measure::PhaseResult;

use crate::error::SessionError;
use crate::fault::{FaultRequest, Nemesis};
use crate::metrics::Publisher;
use crate::request::ProbeRequest;
use crate::settings::Settings;

/// What runs beside one phase, started before it.
pub struct BesidePhase {
    measuring: MeasurementStart,
    probe: Option<ConsistencyProbe>,
    nemesis: Option<Nemesis>,
}

/// What beside a phase asks for: the probe and the faults of a run phase (none for a load).
pub struct BesideRequest<'a> {
    pub probe: Option<&'a ProbeRequest>,
    /// Each fault with the process it acts on.
    pub faults: &'a [(FaultRequest, ProcessRef)],
    /// Where the probe's live counts go (`--metrics-listen`), if anywhere.
    pub metrics: Option<&'a Publisher>,
}

impl BesidePhase {
    /// Connects the probe and writes its keys' first versions, and starts the faults' threads:
    /// both wait for the measurement start. Refused (exit 2) for a binding that stores nothing,
    /// which has no written version to read back, and for a probe rate it cannot write at.
    pub fn start(
        request: &BesideRequest<'_>,
        binding: &BindingInfo,
        settings: &Settings,
        plan: &RunPlan,
        stop: &StopSignal,
    ) -> Result<BesidePhase, SessionError> {
        let measuring = MeasurementStart::default();
        if request.probe.is_some() && !binding.stores_data {
            return Err(SessionError::Usage(format!(
                "--consistency-probe: the {} binding stores nothing, so there is no written version to read back",
                binding.name
            )));
        }
        let probe = request
            .probe
            .map(|p| ConsistencyProbe::start(p, settings, plan, &measuring, stop, request.metrics))
            .transpose()?;
        let nemesis =
            (!request.faults.is_empty()).then(|| Nemesis::start(request.faults, &measuring));
        Ok(BesidePhase {
            measuring,
            probe,
            nemesis,
        })
    }

    /// The faults alone, for a launcher whose clients measure the phase elsewhere: they act from
    /// the launcher's machine on the deployment's nodes, timed from the measurement start its
    /// clients report through [`BesidePhase::clock`] (their wiring's `measurement_start`).
    pub fn faults(faults: &[(FaultRequest, ProcessRef)]) -> BesidePhase {
        let measuring = MeasurementStart::default();
        let nemesis = (!faults.is_empty()).then(|| Nemesis::start(faults, &measuring));
        BesidePhase {
            measuring,
            probe: None,
            nemesis,
        }
    }

    /// The observer the executor tells when the measurement window opens.
    pub fn clock(&self) -> MeasurementStart {
        self.measuring.clone()
    }

    /// Stops the faults (every node resumed) before the probe drains its keys in flight, and takes
    /// what each measured.
    pub fn finish(self) -> Beside {
        let faults = self.nemesis.inspect(Nemesis::stop);
        let consistency = self.probe.map(ConsistencyProbe::finish);
        Beside {
            consistency,
            faults,
        }
    }
}

/// What ran beside a phase: the consistency probe's outcome, and the faults (stopped, every node
/// resumed, when they acted is taken once the phase's start is known).
pub struct Beside {
    pub consistency: Option<Result<ProbeOutcome, String>>,
    pub faults: Option<Nemesis>,
}

impl Beside {
    /// Puts what ran beside the phase into its result: the pauses on its timeline, the probe's
    /// figures (or why it failed: the run fails with it, its figures kept, `RunResult::failure`);
    /// a probe that fell behind is said on stderr. Returns why the history asked for was not
    /// written, if it was not (the command then fails, the figures kept).
    pub fn record_in(self, result: &mut PhaseResult) -> Option<String> {
        let mut unwritten = None;
        result.faults = self
            .faults
            .map_or_else(Vec::new, |n| n.finish(result.measurement_start_unix_ms));
        match self.consistency {
            Some(Ok(c)) => {
                unwritten = c
                    .history_error
                    .map(|e| format!("{e}: the history was not written"));
                if let Some(line) = c.result.fell_behind() {
                    crate::note!("{line}");
                }
                result.consistency = Some(c.result);
            }
            Some(Err(e)) => result.consistency_error = Some(e),
            None => {}
        }
        unwritten
    }
}

/// The consistency probe on threads of its own, beside the run phase, with connections (and a
/// binding factory) of its own: its operations never count in the phase's figures.
struct ConsistencyProbe {
    control: std::sync::Arc<scalebench_exec::consistency::ProbeControl>,
    running: ProbeRun,
}

/// The probe's thread, or how it ended before the phase began.
enum ProbeRun {
    Thread(std::thread::JoinHandle<Result<ProbeOutcome, ProbeError>>),
    Ended(Box<Result<ProbeOutcome, ProbeError>>),
}

impl ConsistencyProbe {
    /// Connects the probe and writes its keys' first versions; the phase starts once that is done.
    /// Its writes begin at the phase's measurement start (`measuring`) and end with the window.
    fn start(
        request: &ProbeRequest,
        settings: &Settings,
        plan: &scalebench_exec::RunPlan,
        measuring: &crate::fault::MeasurementStart,
        stop: &StopSignal,
        metrics: Option<&crate::metrics::Publisher>,
    ) -> Result<Self, SessionError> {
        let live = metrics.map(|m| {
            let live = std::sync::Arc::new(scalebench_measure::consistency::LiveProbe::default());
            m.watch_probe(live.clone());
            live
        });
        let horizon_ms = request.delays_ms.last().copied().unwrap_or(0.0).max(100.0) * 10.0;
        let probe_plan = scalebench_exec::consistency::ProbePlan {
            rate: request.rate,
            keys: request.keys,
            delays_ms: request.delays_ms.clone(),
            horizon: std::time::Duration::from_secs_f64(horizon_ms / 1000.0),
            readers: request.delays_ms.len() + 2,
            op_timeout: settings
                .op_timeout
                .unwrap_or(std::time::Duration::from_secs(10)),
            history: request.history.clone(),
            live,
        };
        let config = settings.binding_config(false, false, stop);
        let control = std::sync::Arc::new(scalebench_exec::consistency::ProbeControl::new(
            measuring.clone(),
            plan.duration,
            stop.clone(),
        ));
        let in_thread = control.clone();
        let (is_ready, ready) = std::sync::mpsc::channel::<()>();
        // Of several clients: the writer tells the others, or readers follow it.
        let role = plan
            .rendezvous
            .as_ref()
            .and_then(|r| r.probe_role())
            .unwrap_or(scalebench_exec::consistency::ProbeRole::Writer {
                tell: None,
                clock_offset_ns: 0,
            });
        let thread = std::thread::spawn(move || {
            struct Run<'a>(
                &'a scalebench_exec::consistency::ProbePlan,
                &'a scalebench_exec::consistency::ProbeControl,
                std::sync::Mutex<std::sync::mpsc::Sender<()>>,
                scalebench_exec::consistency::ProbeRole,
            );
            impl FactoryVisitor for Run<'_> {
                type Output = Result<ProbeOutcome, ProbeError>;
                fn visit<F: BindingFactory>(self, factory: F) -> Self::Output {
                    let ready = || {
                        let _ = self.2.lock().map(|s| s.send(()));
                    };
                    scalebench_exec::consistency::run_probe_as(
                        &factory, self.0, self.1, &ready, self.3,
                    )
                }
            }
            registry::open(
                config,
                Run(
                    &probe_plan,
                    &in_thread,
                    std::sync::Mutex::new(is_ready),
                    role,
                ),
            )
            .map_err(|e| ProbeError::Failed(format!("consistency probe: {e}")))?
        });
        let joined = |t: std::thread::JoinHandle<Result<ProbeOutcome, ProbeError>>| {
            t.join().unwrap_or_else(|_| {
                Err(ProbeError::Failed("the consistency probe panicked".into()))
            })
        };
        // The phase starts once the probe is connected and its keys written, or once it ended
        // without (the channel closes): a rate it cannot write at is the user's to fix; anything
        // else fails the run once the phase is measured. Ctrl-C ends its setup (it watches the stop).
        let became_ready = ready.recv().is_ok();
        let running = if became_ready {
            ProbeRun::Thread(thread)
        } else {
            match joined(thread) {
                Err(ProbeError::RateTooHigh(why)) => return Err(SessionError::Usage(why)),
                ended => ProbeRun::Ended(Box::new(ended)),
            }
        };
        Ok(ConsistencyProbe { control, running })
    }

    /// Stops the probe (its follow-ups in flight end within its drain) and takes what it measured.
    fn finish(self) -> Result<ProbeOutcome, String> {
        self.control
            .ended
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let ended = match self.running {
            ProbeRun::Thread(t) => t.join().unwrap_or_else(|_| {
                Err(ProbeError::Failed("the consistency probe panicked".into()))
            }),
            ProbeRun::Ended(e) => *e,
        };
        ended.map_err(|e| e.to_string())
    }
}
