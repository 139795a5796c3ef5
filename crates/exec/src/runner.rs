//! The coordinator and the worker threads.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::join_all;
use scalebench_binding::{Binding, BindingError, BindingFactory};
use scalebench_measure::aggregate::PhaseMeta;
use scalebench_measure::intervals::RecordedIntervals;
use scalebench_measure::result::{DataSizes, EndedBy};
use scalebench_measure::{Aggregator, IntervalBatch, PhaseResult, Recorder};
use scalebench_workload::{
    CoreWorkload, FailureClass, LoadKeys, OpError, OpKind, Operation, OperationGenerator,
};

use crate::clock::{instant_at, signed_ms_since, unix_ms_at, wait_for, Clock};
use crate::cost::CostWindow;
use crate::pacer::Pacer;
use crate::perform::{perform, with_timeout, Buffers};
use crate::plan::{Phase, RunPlan, Timing};
use crate::progress::{Progress, ProgressState};
use crate::request_sets::{SetClock, SetCursor};
use crate::schedule::{mix_seed, schedule_of};
use crate::timeline::TimelinePoint;
use crate::StopSignal;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Binding(#[from] BindingError),
    #[error("invalid plan: {0}")]
    Plan(String),
    #[error("worker thread failed: {0}")]
    Worker(String),
    #[error("measurement: {0}")]
    Measurement(String),
    #[error(transparent)]
    Rendezvous(#[from] crate::rendezvous::RendezvousError),
    /// The client ran out of its own resources during the phase (see `OpError::is_client_fault`):
    /// the phase was ended, since its figures would describe the client, not the database.
    #[error("the client ran out of its own resources, not the database: {0}; the run was ended (its figures would describe the client): raise the limit (ulimit -n, threads) or use fewer threads or less concurrency")]
    ClientFault(String),
}

/// A measured phase, with the instants that bound its measurement window.
#[derive(Debug)]
pub struct PhaseOutcome {
    pub result: PhaseResult,
    /// The intervals at the length they were recorded (the result may hold them merged).
    pub recorded: RecordedIntervals,
    pub measurement_start: Instant,
    pub measurement_end: Instant,
}

/// The instants every worker shares: one global start, one measurement start; on the hot path the
/// same moments as nanoseconds since `start`.
#[derive(Debug, Clone, Copy)]
struct Timeline {
    start: Instant,
    t0: Instant,
    t0_ns: u64,
    /// End of the measured window for duration-based runs, ns since `start`.
    deadline_ns: Option<u64>,
}

impl Timeline {
    fn deadline(&self) -> Option<Instant> {
        self.deadline_ns
            .map(|ns| self.start + Duration::from_nanos(ns))
    }
}

struct Shared<F> {
    factory: F,
    workload: CoreWorkload,
    plan: RunPlan,
    stop: StopSignal,
    verify: bool,
    load_keys: LoadKeys,
    timeline: OnceLock<Timeline>,
    abort: AtomicBool,
    barrier: Barrier,
    /// Latest completion of a measured operation, ns after `timeline.start`.
    last_end_ns: AtomicU64,
    /// Slots that stopped because their work was done (quota or load keys exhausted).
    slots_done: AtomicU64,
    sets: Option<SetClock>,
    /// The first failure that was the client's own (out of descriptors, threads): it ends the phase.
    client_fault: OnceLock<String>,
    /// `verify_writes`: every write of the run phase.
    written: Option<crate::written::WriteLog>,
    /// The connections' byte counts as the workers last saw them (the client's cost).
    sockets_seen: crate::cost::SocketsSeen,
}

impl<F> Shared<F> {
    /// Whether `result` is the client's own failure; if so the phase ends (the first is kept).
    fn client_failed<T>(&self, result: &Result<T, OpError>) -> bool {
        match result {
            Err(e) if e.is_client_fault() => {
                let _ = self.client_fault.set(e.message.clone());
                self.stop.request();
                true
            }
            _ => false,
        }
    }
}

/// Runs one phase against the binding `factory` makes, on `plan.threads` threads, and returns its result.
/// Blocks until the phase is over. Operation failures are counted, never returned; an error here means
/// the phase could not run (connection or schema failure, bad plan).
pub fn execute<F: BindingFactory>(
    factory: F,
    workload: &CoreWorkload,
    plan: &RunPlan,
    stop: &StopSignal,
    progress: &mut dyn Progress,
) -> Result<PhaseOutcome, ExecError> {
    plan.check().map_err(ExecError::Plan)?;
    // Init-to-cleanup timing starts before the first connection.
    let init = Instant::now();
    let verify = workload.data_integrity && factory.info().stores_data;
    let verifies = plan.verify_writes && plan.phase == Phase::Run;
    if let Some(why) = crate::written::refusal(workload).filter(|_| verifies) {
        return Err(ExecError::Plan(why));
    }
    let shared = Arc::new(Shared {
        factory,
        workload: workload.clone(),
        plan: plan.clone(),
        stop: stop.clone(),
        verify,
        load_keys: workload.load_keys(),
        timeline: OnceLock::new(),
        abort: AtomicBool::new(false),
        barrier: Barrier::new(plan.threads + 1),
        last_end_ns: AtomicU64::new(0),
        slots_done: AtomicU64::new(0),
        sets: SetClock::for_plan(plan),
        client_fault: OnceLock::new(),
        written: verifies.then(|| crate::written::WriteLog::new(workload)),
        sockets_seen: Default::default(),
    });
    let (batch_tx, batch_rx) = mpsc::channel::<IntervalBatch>();
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), BindingError>>();
    let mut handles = Vec::with_capacity(plan.threads);
    for t in 0..plan.threads {
        let shared = Arc::clone(&shared);
        let batch_tx = batch_tx.clone();
        let ready_tx = ready_tx.clone();
        let handle = std::thread::Builder::new()
            .name(format!("scalebench-worker-{t}"))
            .spawn(move || worker_thread(shared, t, batch_tx, ready_tx))
            .map_err(|e| ExecError::Worker(e.to_string()))?;
        handles.push(handle);
    }
    drop(batch_tx);
    drop(ready_tx);

    let (agreed, handles) = connect_all(plan, stop, &shared, &ready_rx, handles)?;
    let start = match agreed {
        Some(at) => instant_at(at),
        // A few milliseconds for the workers to wake before the common start.
        None => Instant::now() + Duration::from_millis(5),
    };
    let warmup = if plan.phase == Phase::Run {
        plan.warmup
    } else {
        Duration::ZERO
    };
    let t0 = start + warmup;
    let t0_ns = warmup.as_nanos() as u64;
    let timeline = Timeline {
        start,
        t0,
        t0_ns,
        deadline_ns: plan.duration.map(|d| t0_ns + d.as_nanos() as u64),
    };
    let unix_ms_at_t0 = unix_ms_at(t0);
    if let Some(log) = &plan.timeline_log {
        log.begin(t0);
    }
    shared.timeline.set(timeline).expect("timeline is set once");
    progress.measurement_starts(t0);
    // Without a warm-up nothing runs before the window: its first reading is exact taken now.
    let mut cost = CostWindow::new(t0, warmup.is_zero());
    shared.barrier.wait();
    let common_start = agreed.map(|at| {
        std::thread::sleep(start.saturating_duration_since(Instant::now()));
        scalebench_measure::result::CommonStart {
            agreed_unix_ms: at
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64,
            skew_ms: signed_ms_since(at),
        }
    });

    let open_loop = plan.target_ops_s.is_some();
    let mut aggregator = Aggregator::new(plan.interval, open_loop, plan.threads)
        .with_names(measured_names(plan, workload));
    collect(
        &batch_rx,
        &mut aggregator,
        &handles,
        &shared,
        timeline,
        progress,
        &mut cost,
    );
    join_workers(handles)?;
    for batch in batch_rx.try_iter() {
        aggregator.add(batch);
    }
    progress.finish();
    if let Some(fault) = shared.client_fault.get() {
        return Err(ExecError::ClientFault(fault.clone()));
    }

    let (end, ended_by) = how_it_ended(plan, stop, &shared, timeline);
    // The workers have cleaned up (buffered writes flushed) once they are joined.
    let client_time =
        (plan.phase == Phase::Run && plan.timing == Timing::InitToCleanup).then(|| init.elapsed());
    let meta = PhaseMeta {
        phase: plan.phase,
        measurement_start_unix_ms: unix_ms_at_t0,
        duration: client_time.unwrap_or(end - t0),
        ended_by,
        data: DataSizes {
            mean_key_bytes: workload.mean_key_bytes(),
            mean_record_bytes: workload.mean_record_bytes(),
            field_count: workload.field_names.len(),
            records_at_start: None,
        },
    };
    let (mut result, recorded) = aggregator.finish(meta).map_err(ExecError::Measurement)?;
    result.request_sets = shared.sets.as_ref().map(SetClock::finish);
    result.client_cost = cost.finish(
        result.totals.ok + result.totals.failed,
        &shared.sockets_seen,
    );
    if let Some(log) = &shared.written {
        let integrity = verify.then(|| shared.workload.generator(0));
        let pass = crate::written::VerifyPass::after(plan, end - t0, integrity.as_ref(), stop);
        progress.checking_writes(log.keys(), pass.limit);
        let checked = log.verify_pass(&shared.factory, &pass);
        result.lost_writes = Some(checked.map_err(ExecError::Worker)?);
    }
    result.start = common_start;
    result.timed_init_to_cleanup = client_time.is_some();
    Ok(PhaseOutcome {
        result,
        recorded,
        measurement_start: t0,
        measurement_end: end,
    })
}

/// Waits for every worker's connections, then (in a distributed run) for every client's: the
/// agreed start, if a rendezvous gave one. On any failure, or a stop meanwhile, the workers are
/// released without running and joined, and the error says why.
fn connect_all<F: BindingFactory>(
    plan: &RunPlan,
    stop: &StopSignal,
    shared: &Shared<F>,
    ready: &Receiver<Result<(), BindingError>>,
    handles: Vec<std::thread::JoinHandle<()>>,
) -> Result<(Option<SystemTime>, Vec<std::thread::JoinHandle<()>>), ExecError> {
    // All connections first; nobody starts until everybody is ready.
    let mut first_error = None;
    for _ in 0..plan.threads {
        match ready.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => {
                first_error.get_or_insert(BindingError::Other(
                    "a worker thread ended before connecting".into(),
                ));
            }
        }
    }
    // In a distributed run, nobody starts until every client is ready either.
    let mut rendezvous_error = None;
    let agreed = match &plan.rendezvous {
        Some(r) if first_error.is_none() && !stop.is_requested() => r
            .ready(plan.phase, stop)
            .map_err(|e| rendezvous_error = Some(e))
            .ok(),
        _ => None,
    };
    if first_error.is_some() || rendezvous_error.is_some() || stop.is_requested() {
        shared.abort.store(true, Ordering::SeqCst);
        shared.barrier.wait();
        join_workers(handles)?;
        // A stop wins over the errors it caused (connects it ended).
        if stop.is_requested() {
            return Err(ExecError::Binding(BindingError::Interrupted));
        }
        return Err(match (first_error, rendezvous_error) {
            (Some(e), _) => ExecError::Binding(e),
            (None, Some(e)) => ExecError::Rendezvous(e),
            (None, None) => ExecError::Binding(BindingError::Interrupted),
        });
    }
    Ok((agreed, handles))
}

/// When the measured window ended and why: a stop before the work was done, the deadline, or the
/// last operation of work that ran out (the load's records, the run's operation count).
fn how_it_ended<F: BindingFactory>(
    plan: &RunPlan,
    stop: &StopSignal,
    shared: &Shared<F>,
    timeline: Timeline,
) -> (Instant, EndedBy) {
    let (start, t0) = (timeline.start, timeline.t0);
    let last_end = start + Duration::from_nanos(shared.last_end_ns.load(Ordering::SeqCst));
    let all_work_done = shared.slots_done.load(Ordering::SeqCst) == plan.slots() as u64;
    match (stop.requested_at(), timeline.deadline()) {
        (Some(at), deadline) if !all_work_done && deadline.is_none_or(|d| at < d) => (
            at.max(t0),
            if stop.is_finish() {
                EndedBy::Finished
            } else {
                EndedBy::Interrupted
            },
        ),
        (_, Some(deadline)) if !all_work_done => (deadline, EndedBy::Duration),
        _ => (
            last_end.max(t0),
            match (plan.phase, &plan.feed) {
                (Phase::Load, _) => EndedBy::Completed,
                (Phase::Run, Some(_)) => EndedBy::Replayed,
                (Phase::Run, None) => EndedBy::Operations,
            },
        ),
    }
}

/// Merges batches as they arrive and reports progress until every worker is done.
fn collect<F>(
    rx: &Receiver<IntervalBatch>,
    aggregator: &mut Aggregator,
    handles: &[std::thread::JoinHandle<()>],
    shared: &Shared<F>,
    timeline: Timeline,
    progress: &mut dyn Progress,
    cost: &mut CostWindow,
) {
    let report_every = shared.plan.interval.min(Duration::from_secs(1));
    // The first report at once: it tells watchers (the faults' clock) when the phase began.
    let mut next_report = timeline.start;
    let expected_ops = match shared.plan.phase {
        Phase::Run => shared.plan.operation_count,
        Phase::Load => Some(shared.workload.insert_count),
    };
    // Without request sets, a watcher's timeline is the intervals, published as they close.
    let interval_log = shared
        .plan
        .timeline_log
        .as_ref()
        .filter(|_| shared.plan.request_set.is_none());
    loop {
        match rx.recv_timeout(cost.look(Duration::from_millis(100))) {
            Ok(batch) => aggregator.add(batch),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        // Taken every time, so closed intervals never pile up when nobody watches.
        let closed = aggregator.take_closed_intervals();
        if let Some(log) = interval_log {
            let secs = shared.plan.interval.as_secs_f64();
            for c in closed {
                log.push(TimelinePoint {
                    start_s: c.index as f64 * secs,
                    duration_s: secs,
                    ok: c.ok,
                    failed: c.failed,
                    p99_us: c.p99_us,
                });
            }
        }
        let now = Instant::now();
        if now >= next_report {
            next_report += report_every;
            let state = ProgressState {
                phase: shared.plan.phase,
                elapsed: now.saturating_duration_since(timeline.start),
                warmup: timeline.t0 - timeline.start,
                duration: shared.plan.duration,
                expected_ops,
                live: aggregator.live(),
            };
            progress.update(&state);
            if let Some(r) = &shared.plan.rendezvous {
                r.progress(&state);
            }
        }
        if handles.iter().all(|h| h.is_finished()) {
            break;
        }
    }
}

fn join_workers(handles: Vec<std::thread::JoinHandle<()>>) -> Result<(), ExecError> {
    for h in handles {
        h.join().map_err(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            ExecError::Worker(msg)
        })?;
    }
    Ok(())
}

fn worker_thread<F: BindingFactory>(
    shared: Arc<Shared<F>>,
    thread: usize,
    batch_tx: Sender<IntervalBatch>,
    ready_tx: Sender<Result<(), BindingError>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready_tx.send(Err(BindingError::Other(format!(
                "cannot start a runtime: {e}"
            ))));
            shared.barrier.wait();
            return;
        }
    };
    runtime.block_on(async move {
        let plan = &shared.plan;
        let mut bindings = Vec::with_capacity(plan.concurrency);
        let mut failed = None;
        for s in 0..plan.concurrency {
            // A stop ends a connect that hangs (a server that accepts and never answers).
            let connected = tokio::select! {
                c = shared.factory.connect(thread * plan.concurrency + s) => c,
                () = until_stopped(&shared) => Err(BindingError::Interrupted),
            };
            match connected {
                Ok(b) => bindings.push(b),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let _ = ready_tx.send(failed.map_or(Ok(()), Err));
        shared.barrier.wait();
        if shared.abort.load(Ordering::SeqCst) {
            for b in &mut bindings {
                let _ = b.cleanup().await;
            }
            return;
        }
        let timeline = *shared.timeline.get().expect("set before the barrier opens");
        let open_loop = plan.target_ops_s.is_some();
        let clock = Clock::anchored(timeline.start);
        let recorder = RefCell::new(Recorder::new(thread, timeline.t0_ns, plan.interval, open_loop, batch_tx));
        let done = std::cell::Cell::new(false);
        let pacer = Pacer::new(&clock);
        // Outside the slots' futures: the writes of an operation the hard stop drops stay known.
        let mut buffers: Vec<Buffers> =
            (0..bindings.len()).map(|_| Buffers::for_slot(shared.written.as_ref())).collect();

        let slots = bindings.into_iter().zip(buffers.iter_mut()).enumerate().map(|(s, (b, bufs))| {
            let slot = thread * plan.concurrency + s;
            let generator = shared.workload.generator(mix_seed(plan.seed, slot as u64));
            let ctx = SlotContext { shared: &shared, timeline, clock: &clock, pacer: &pacer, recorder: &recorder };
            async move {
                match plan.phase {
                    Phase::Run => run_slot(b, generator, slot, ctx, bufs).await,
                    Phase::Load => load_slot(b, generator, slot, ctx).await,
                }
            }
        }).collect::<Vec<_>>();
        // Everything is set up (the clock's calibration takes milliseconds): now the common start,
        // waited for on the Instant, since the clock reads 0 before it.
        wait_for(timeline.start).await;
        let all_slots = async {
            // Outside tokio's cooperative budget: it ended a pass over the woken slots after about
            // 60 operations, so the slots sharing a connection (`--pipeline`) sent their requests
            // in pieces, 3.5 per write where 10 were ready (docs/benchmarks.md section 26). Slots still
            // yield every OPS_PER_YIELD operations, and join_all's FuturesUnordered after polling
            // each slot once.
            let bindings = tokio::task::unconstrained(join_all(slots)).await;
            shared.sockets_seen.read_now();
            done.set(true);
            bindings
        };
        // Interval ticks, so batches flow even when no operation completes (a stalled database).
        let ticker = async {
            while !done.get() {
                tokio::time::sleep(plan.interval.min(Duration::from_millis(250))).await;
                recorder.borrow_mut().tick(clock.now_ns());
            }
        };
        let hard_stop = hard_stop(&shared, timeline);
        let pacing = pacer.drive(&shared.stop, &done);
        let finished = tokio::select! {
            (bindings, (), ()) = async { tokio::join!(all_slots, ticker, pacing) } => Some(bindings),
            () = hard_stop => None,
        };
        if let Some(bindings) = finished {
            for mut b in bindings {
                let _ = b.cleanup().await;
            }
        }
        // Writes in flight at the hard stop: sent, never answered, so of unknown outcome.
        if let Some(log) = &shared.written {
            for bufs in &mut buffers {
                log.record(&mut bufs.intents);
            }
        }
        recorder.into_inner().finish();
    });
}

/// Resolves when in-flight operations have had their grace period after the end of the window,
/// or at the first stop requested (Ctrl-C, SIGTERM) once the window is over: what was measured is
/// complete, and nobody waits a grace period out against a server that stopped answering.
async fn hard_stop<F>(shared: &Shared<F>, timeline: Timeline) {
    let mut requests_at_window_end = None;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let Some(end) = hard_end(shared, timeline) else {
            continue;
        };
        let now = Instant::now();
        let requests = shared.stop.requests();
        let in_grace = now + shared.plan.grace >= end;
        if now >= end || in_grace && *requests_at_window_end.get_or_insert(requests) < requests {
            // The slots' connections close as this ends: their bytes first.
            shared.sockets_seen.read_now();
            return;
        }
    }
}

/// The end of the window (its duration, or an earlier stop request) plus the grace period: no
/// operation may still run after it. None while neither is known.
fn hard_end<F>(shared: &Shared<F>, timeline: Timeline) -> Option<Instant> {
    let end = match (shared.stop.requested_at(), timeline.deadline()) {
        (Some(at), Some(d)) => Some(at.min(d)),
        (Some(at), None) => Some(at),
        (None, d) => d,
    };
    end.map(|e| e + shared.plan.grace)
}

/// Publishes when the operation starting at `start_ns` must be over by (its timeout, the hard end),
/// for synchronous bindings, which the runtime cannot interrupt (see `scalebench_binding::deadline`).
fn bound_call<F: BindingFactory>(shared: &Shared<F>, timeline: Timeline, start_ns: u64) {
    if !shared.factory.blocks_its_thread() {
        return;
    }
    let op_end = shared
        .plan
        .op_timeout
        .map(|d| timeline.start + Duration::from_nanos(start_ns) + d);
    let deadline = match (op_end, hard_end(shared, timeline)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    scalebench_binding::deadline::set_call_deadline(deadline);
}

/// Counts an operation of a slot and yields every [`OPS_PER_YIELD`] of them.
async fn count_and_yield(since_yield: &mut u32) {
    *since_yield += 1;
    if *since_yield == OPS_PER_YIELD {
        *since_yield = 0;
        tokio::task::yield_now().await;
    }
}

/// Back-off of a slot after an operation failed as unavailable (server down, connection refused).
const MIN_BACKOFF: Duration = Duration::from_millis(1);
const MAX_BACKOFF: Duration = Duration::from_millis(100);

/// Resolves when a stop is requested (checked every 10 ms): a back-off never delays the end.
async fn until_stopped<F>(shared: &Shared<F>) {
    while !shared.stop.is_requested() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Operations between two yields of a slot: a binding that completes synchronously never returns
/// Pending, and without a yield the worker's timers (grace period, interval ticks) would never run.
const OPS_PER_YIELD: u32 = 64;

/// What every slot of a worker thread shares.
struct SlotContext<'a, F> {
    shared: &'a Shared<F>,
    timeline: Timeline,
    clock: &'a Clock,
    pacer: &'a Pacer<'a>,
    recorder: &'a RefCell<Recorder>,
}

impl<F> Clone for SlotContext<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for SlotContext<'_, F> {}

impl<F> SlotContext<'_, F> {
    /// What a completed operation leaves (`times`: its intended start, start and end): its insert
    /// acknowledged, its request set told, and its latencies recorded when it was measured (else
    /// one more warm-up operation).
    #[inline]
    fn account(
        &self,
        generator: &OperationGenerator,
        op: &Operation,
        set: Option<u64>,
        [intended, start, end]: [u64; 3],
        result: Result<(), &OpError>,
        open_loop: bool,
    ) {
        if op.kind == OpKind::Insert {
            generator.acknowledge_insert(op.keynum);
        }
        if let (Some(sets), Some(k)) = (&self.shared.sets, set) {
            sets.complete(k, end, result.is_ok(), self.timeline.t0_ns);
        }
        if intended < self.timeline.t0_ns {
            self.recorder.borrow_mut().warmup_done();
            return;
        }
        let mut rec = self.recorder.borrow_mut();
        rec.record(op.measured, intended, start, end, result);
        if result.is_ok() && self.after_window(end) {
            rec.ok_after_window(op.measured);
        }
        if open_loop {
            rec.record_start_delay(intended, start);
        }
    }

    /// With request sets, once measuring: numbers slot `slot`'s next operation and waits until its
    /// set opens. `Some(None)`: no set (none in the plan, or still warming up); `None`: the slot is
    /// done (the operation count is reached, it has no share of a set, or the phase ended while
    /// waiting).
    async fn claim_set(&self, slot: usize, cursor: &mut SetCursor) -> Option<Option<u64>> {
        let Some(sets) = &self.shared.sets else {
            return Some(None);
        };
        if self.clock.now_ns() < self.timeline.t0_ns {
            return Some(None);
        }
        let claimed = sets.claim(slot, cursor);
        if claimed.is_none_or(|i| self.shared.plan.operation_count.is_some_and(|n| i >= n)) {
            self.shared.slots_done.fetch_add(1, Ordering::SeqCst);
            return None;
        }
        let ended = || self.shared.stop.is_requested() || self.past_deadline(self.clock.now_ns());
        let set = sets.set_of(claimed?);
        sets.wait_open(set, ended, || self.clock.now_ns())
            .await
            .then_some(Some(set))
    }

    fn publish_last_end(&self, end_ns: u64) {
        self.shared.last_end_ns.fetch_max(end_ns, Ordering::Relaxed);
    }

    fn past_deadline(&self, now_ns: u64) -> bool {
        self.timeline.deadline_ns.is_some_and(|d| now_ns >= d)
    }

    /// True when `end_ns` falls after the end of the measurement window (its duration, or an
    /// earlier stop request).
    fn after_window(&self, end_ns: u64) -> bool {
        self.timeline.deadline_ns.is_some_and(|d| end_ns > d)
            || self.shared.stop.requested_at().is_some_and(|at| {
                end_ns > at.saturating_duration_since(self.timeline.start).as_nanos() as u64
            })
    }
}

async fn run_slot<F: BindingFactory>(
    mut binding: F::Binding,
    mut generator: OperationGenerator,
    slot: usize,
    ctx: SlotContext<'_, F>,
    bufs: &mut Buffers,
) -> F::Binding {
    let SlotContext {
        shared,
        timeline,
        clock,
        recorder,
        ..
    } = ctx;
    let plan = &shared.plan;
    // With request sets the operation count is shared: operations are numbered as they start.
    let mut quota = if shared.sets.is_some() {
        None
    } else {
        plan.slot_quota(slot)
    };
    let mut schedule = schedule_of(plan, timeline.t0_ns, slot, 1);
    // A replay: operations and their intended starts from the slot's queue ([`crate::feed`]).
    let mut fed = plan.feed.as_ref().and_then(|f| f.take(slot));
    let open_loop = schedule.is_some() || fed.is_some();
    let mut op = Operation::default();
    let verify = shared.verify;
    // Kept per slot and published once: a shared atomic per operation would bounce between cores.
    let mut last_end = 0;
    // The request set of the operation in progress, and the slot's place in its fixed shares.
    let mut set: Option<u64> = None;
    let mut cursor = SetCursor::default();
    let mut since_yield = 0;
    let mut backoff = Duration::ZERO;
    loop {
        if quota == Some(0) {
            shared.slots_done.fetch_add(1, Ordering::SeqCst);
            break;
        }
        if shared.stop.is_requested() {
            break;
        }
        let intended = match (&mut fed, &mut schedule) {
            (Some(queue), _) => match next_fed(queue, &mut op, &ctx).await {
                Some(t) => t,
                None => break,
            },
            (None, Some(s)) => {
                // Arrivals of the warm-up that have not started when the measurement begins are
                // dropped, counted: warm-up warms caches, it does not queue work for the window,
                // which reports the load from its own schedule.
                let t = s.next();
                if t < timeline.t0_ns && clock.now_ns() >= timeline.t0_ns {
                    recorder.borrow_mut().drop_warmup_arrival();
                    count_and_yield(&mut since_yield).await;
                    continue;
                }
                if !wait_for_arrival(t, &ctx).await {
                    break;
                }
                generator.next_operation(&mut op);
                t
            }
            // Closed loop: the operation is generated first so the start instant is also the instant
            // checked against the deadline.
            (None, None) => {
                match ctx.claim_set(slot, &mut cursor).await {
                    Some(claimed) => set = claimed,
                    None => break,
                }
                generator.next_operation(&mut op);
                let now = clock.now_ns();
                if ctx.past_deadline(now) {
                    if op.kind == OpKind::Insert {
                        generator.acknowledge_insert(op.keynum);
                    }
                    break;
                }
                now
            }
        };
        let measured = intended >= timeline.t0_ns;
        if measured {
            recorder.borrow_mut().issue(op.measured);
            if let Some(q) = &mut quota {
                *q -= 1;
            }
        }
        let start = if open_loop { clock.now_ns() } else { intended };
        bound_call(shared, timeline, start);
        if let Some(log) = &shared.written {
            bufs.intents.begin(log.begin());
        }
        let result = {
            let check = verify.then_some(&generator);
            // Pinned where it is made: passed by value, the operation's future would be copied
            // into `with_timeout`'s, and that again to be awaited (its whole state, 680 bytes on
            // the null binding, twice per operation: 14% of its instructions).
            let (result, abandoned) = {
                let operation = std::pin::pin!(perform(&mut binding, &op, bufs, check));
                with_timeout(plan.op_timeout, operation).await
            };
            abandoned.tell(&mut binding);
            result
        };
        let end = clock.now_ns();
        if let Some(log) = &shared.written {
            log.record(&mut bufs.intents);
        }
        if shared.client_failed(&result) {
            break;
        }
        ctx.account(
            &generator,
            &op,
            set.take(),
            [intended, start, end],
            result.as_ref().map(|_| ()),
            open_loop,
        );
        if measured {
            last_end = end;
        }
        let unavailable = matches!(&result, Err(e) if e.class == FailureClass::Unavailable);
        // A server that refuses work is not hammered: the failures count, the slot waits a little
        // longer after each (1 ms doubling to 100 ms) and goes on at full speed after a success.
        if unavailable {
            backoff = (backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = until_stopped(shared) => {}
            }
        } else {
            backoff = Duration::ZERO;
        }
        count_and_yield(&mut since_yield).await;
    }
    ctx.publish_last_end(last_end);
    binding
}

/// The names the phase measures under: a replay's statements by their first word, else the
/// workload's.
fn measured_names(plan: &RunPlan, workload: &CoreWorkload) -> scalebench_workload::MeasuredNames {
    plan.feed
        .as_ref()
        .and_then(|f| f.names().cloned())
        .unwrap_or_else(|| workload.measured_names())
}

/// A replay's next operation written into `op`, once its intended start (returned) has come;
/// `None` when the phase ends first or the feed is done (the slot's work, then, is done).
async fn next_fed<F>(
    queue: &mut tokio::sync::mpsc::Receiver<crate::feed::Fed>,
    op: &mut Operation,
    ctx: &SlotContext<'_, F>,
) -> Option<u64> {
    let next = tokio::select! {
        next = queue.recv() => next,
        () = until_stopped(ctx.shared) => return None,
    };
    let Some(next) = next else {
        ctx.shared.slots_done.fetch_add(1, Ordering::SeqCst);
        return None;
    };
    let t = ctx.timeline.t0_ns + next.at_ns;
    if !wait_for_arrival(t, ctx).await {
        return None;
    }
    crate::feed::fill(&next, op);
    Some(t)
}

/// Waits until an open loop's arrival at `t` (ns); false when the phase ends first.
async fn wait_for_arrival<F>(t: u64, ctx: &SlotContext<'_, F>) -> bool {
    let clock = ctx.clock;
    // Behind schedule, intended starts lag the clock: the window still ends on time.
    if ctx.past_deadline(t) || ctx.past_deadline(clock.now_ns()) {
        return false;
    }
    // A few microseconds are cheaper to spin here than to hand to the pacer.
    loop {
        let now = clock.now_ns();
        if now >= t || t - now >= 5_000 {
            break;
        }
        std::hint::spin_loop();
    }
    ctx.pacer.until(t).await
}

/// The load: each slot takes the next keys (a batch where the binding batches) until every record
/// is in; in an open loop (`load --target`, a rate profile) at its share of the records per second,
/// latency measured from each batch's intended start.
async fn load_slot<F: BindingFactory>(
    mut binding: F::Binding,
    mut generator: OperationGenerator,
    slot: usize,
    ctx: SlotContext<'_, F>,
) -> F::Binding {
    let SlotContext {
        shared,
        clock,
        recorder,
        timeline,
        ..
    } = ctx;
    let plan = &shared.plan;
    let batch_size = if shared.factory.batches_inserts() {
        plan.batch_size.max(1)
    } else {
        1
    };
    let mut schedule = schedule_of(plan, timeline.t0_ns, slot, batch_size);
    let mut batch: Vec<Operation> = Vec::new();
    let mut last_end = 0;
    let mut since_yield = 0;
    loop {
        if shared.stop.is_requested() || ctx.past_deadline(clock.now_ns()) {
            break;
        }
        // The keys first: a slot with none left ends now, not at its next arrival.
        let Some(keys) = shared.load_keys.next_batch(batch_size as u64) else {
            shared.slots_done.fetch_add(1, Ordering::SeqCst);
            break;
        };
        let intended = match &mut schedule {
            Some(s) => {
                let t = s.next();
                if !wait_for_arrival(t, &ctx).await {
                    break;
                }
                Some(t)
            }
            None => None,
        };
        let n = (keys.end - keys.start) as usize;
        batch.resize_with(n, Operation::default);
        for (op, keynum) in batch.iter_mut().zip(keys) {
            generator.load_operation(keynum, op);
        }
        let kind = if batch_size > 1 {
            OpKind::BatchInsert
        } else {
            OpKind::Insert
        };
        recorder.borrow_mut().issue(kind);
        let mut attempt = 0;
        loop {
            let start = clock.now_ns();
            bound_call(shared, ctx.timeline, start);
            let (result, abandoned) = with_timeout(plan.op_timeout, async {
                if batch_size > 1 {
                    binding.insert_batch(&batch).await
                } else {
                    binding.insert(&batch[0].key, &batch[0].values).await
                }
            })
            .await;
            abandoned.tell(&mut binding);
            let end = clock.now_ns();
            if shared.client_failed(&result) {
                break;
            }
            // YCSB semantics: a retried insert is measured once, with its final outcome.
            if result.is_err() && attempt < plan.insert_retries && !shared.stop.is_requested() {
                attempt += 1;
                recorder.borrow_mut().add_retry();
                tokio::time::sleep(plan.insert_retry_interval).await;
                continue;
            }
            let mut rec = recorder.borrow_mut();
            let intended = intended.unwrap_or(start);
            rec.record(kind, intended, start, end, result.as_ref().map(|_| ()));
            if schedule.is_some() {
                rec.record_start_delay(intended, start);
            }
            if result.is_ok() {
                rec.add_records(n as u64);
            }
            last_end = end;
            break;
        }
        count_and_yield(&mut since_yield).await;
    }
    ctx.publish_last_end(last_end);
    binding
}
