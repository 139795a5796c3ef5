//! Execution against a scripted in-process binding whose behaviour (stalls, failures, hangs) is known,
//! so accounting, timing and coordinated-omission correction can be checked exactly.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingError, BindingFactory};
use scalebench_exec::progress::NoProgress;
use scalebench_exec::{execute, Phase, RunPlan, StopSignal};
use scalebench_workload::{CoreWorkload, FailureClass, FieldSet, Fields, OpError, Properties};

#[derive(Default)]
struct Script {
    /// Operations per worker.
    per_worker: Vec<AtomicU64>,
    /// Start instants of all calls.
    starts: Mutex<Vec<Instant>>,
    /// Stall once, for this long, at the first call at least `after` past the first call.
    stall: Option<(Duration, Duration)>,
    stalled: AtomicBool,
    first_call: Mutex<Option<Instant>>,
    /// Every n-th call (counted per worker) fails as not found.
    fail_every: Option<u64>,
    /// Calls fail as unavailable (a server that is down) until this instant.
    down_until: Option<Instant>,
    /// One call never returns.
    hang_once: bool,
    /// Every call takes at least this long.
    delay: Option<Duration>,
    hung: AtomicBool,
    /// After this many calls of a binding, each fails as a driver reports the process out of
    /// descriptors (the operating system's own message for EMFILE).
    out_of_descriptors_after: Option<u64>,
    /// Calls of `Binding::abandoned`: operations dropped unanswered.
    abandoned: AtomicU64,
}

#[derive(Clone)]
struct ScriptFactory(Arc<Script>);

struct ScriptBinding {
    script: Arc<Script>,
    worker: usize,
    calls: u64,
}

impl BindingFactory for ScriptFactory {
    type Binding = ScriptBinding;
    fn info(&self) -> scalebench_binding::BindingInfo {
        scalebench_binding::BindingInfo {
            name: "script",
            summary: "the test's scripted binding",
            ..scalebench_binding::BindingInfo::KEY_VALUE_STORE
        }
    }
    async fn connect(&self, worker: usize) -> Result<ScriptBinding, BindingError> {
        Ok(ScriptBinding {
            script: self.0.clone(),
            worker,
            calls: 0,
        })
    }
}

impl ScriptBinding {
    async fn call(&mut self) -> Result<(), OpError> {
        let s = &self.script;
        let now = Instant::now();
        s.starts.lock().unwrap().push(now);
        s.per_worker[self.worker].fetch_add(1, Ordering::Relaxed);
        self.calls += 1;
        let first = *s.first_call.lock().unwrap().get_or_insert(now);
        if let Some((after, length)) = s.stall {
            if now >= first + after && !s.stalled.swap(true, Ordering::SeqCst) {
                tokio::time::sleep(length).await;
            }
        }
        if let Some(d) = s.delay {
            tokio::time::sleep(d).await;
        }
        if s.hang_once && !s.hung.swap(true, Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        if s.out_of_descriptors_after.is_some_and(|n| self.calls > n) {
            return Err(OpError::new(
                FailureClass::Unavailable,
                format!(
                    "cannot connect: {}",
                    std::io::Error::from_raw_os_error(libc_emfile())
                ),
            ));
        }
        if s.down_until.is_some_and(|t| now < t) {
            return Err(OpError::new(
                FailureClass::Unavailable,
                "connection refused",
            ));
        }
        match s.fail_every {
            Some(n) if self.calls.is_multiple_of(n) => {
                Err(OpError::new(FailureClass::NotFound, "scripted miss"))
            }
            _ => Ok(()),
        }
    }
}

impl Binding for ScriptBinding {
    async fn read(&mut self, _: &str, _: FieldSet, _: &mut Fields) -> Result<(), OpError> {
        self.call().await
    }
    async fn scan(
        &mut self,
        _: &str,
        _: usize,
        _: FieldSet,
        _: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.call().await
    }
    async fn update(&mut self, _: &str, _: &Fields) -> Result<(), OpError> {
        self.call().await
    }
    async fn insert(&mut self, _: &str, _: &Fields) -> Result<(), OpError> {
        self.call().await
    }
    async fn delete(&mut self, _: &str) -> Result<(), OpError> {
        self.call().await
    }
    fn abandoned(&mut self) {
        self.script.abandoned.fetch_add(1, Ordering::SeqCst);
    }
}

fn script(workers: usize, f: impl FnOnce(&mut Script)) -> Arc<Script> {
    let mut s = Script {
        per_worker: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        ..Default::default()
    };
    f(&mut s);
    Arc::new(s)
}

/// Runs `plan` of workload a against the scripted binding.
fn run_script(
    s: Arc<Script>,
    plan: &RunPlan,
) -> Result<scalebench_exec::PhaseOutcome, scalebench_exec::ExecError> {
    execute(
        ScriptFactory(s),
        &workload_a(),
        plan,
        &StopSignal::new(),
        &mut NoProgress,
    )
}

fn workload_a() -> CoreWorkload {
    let mut p = Properties::new();
    p.load_str(
        &scalebench_workload::builtin::builtin_workload("a")
            .unwrap()
            .1,
        "a",
    )
    .unwrap();
    CoreWorkload::from_properties(&p).unwrap()
}

#[test]
fn every_operation_is_accounted_under_concurrency_and_counts_split_evenly() {
    let s = script(8, |_| {});
    let plan = RunPlan {
        threads: 2,
        concurrency: 4,
        duration: None,
        operation_count: Some(10_003),
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    let r = &out.result;
    assert_eq!(r.totals.ok, 10_003);
    assert_eq!(
        r.totals.issued,
        r.totals.ok + r.totals.failed + r.totals.in_flight_at_stop
    );
    assert_eq!(r.totals.in_flight_at_stop, 0);
    assert_eq!(r.ended_by, "operations");
    let per: Vec<u64> = s
        .per_worker
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .collect();
    assert_eq!(per.iter().sum::<u64>(), 10_003);
    assert!(
        per.iter().max().unwrap() - per.iter().min().unwrap() <= 1,
        "{per:?}"
    );
    let (read, update) = (&r.operations["READ"], &r.operations["UPDATE"]);
    assert_eq!(read.ok + update.ok, 10_003);
    assert_eq!(read.latency.as_ref().unwrap().count, read.ok);
    // The interval series adds up to the totals.
    let series: u64 = r
        .intervals
        .iter()
        .flat_map(|i| i.operations.values())
        .map(|o| o.ok)
        .sum();
    assert_eq!(series, 10_003);
}

/// Issue 13, point 6: the clock reads 0 before the common start, and workers that waited on it began
/// up to 5 ms early; a short phase then measured 0 s and an infinite throughput.
#[test]
fn no_operation_starts_before_the_common_start_and_short_phases_have_a_rate() {
    for phase in [Phase::Load, Phase::Run] {
        let s = script(4, |_| {});
        let plan = RunPlan {
            phase,
            threads: 2,
            concurrency: 2,
            duration: None,
            operation_count: Some(100),
            ..Default::default()
        };
        let out = run_script(s.clone(), &plan).unwrap();
        let starts = s.starts.lock().unwrap();
        let first = *starts.iter().min().unwrap();
        assert!(
            first >= out.measurement_start,
            "{phase:?}: an operation began {:?} before the start",
            out.measurement_start - first
        );
        let r = &out.result;
        assert!(r.duration_s > 0.0, "{phase:?}: {}", r.duration_s);
        let rate = r.totals.throughput_ops_s;
        assert!(rate.is_finite() && rate > 0.0, "{phase:?}: {rate}");
    }
}

#[test]
fn measured_window_is_exactly_the_duration_and_warmup_is_not_measured() {
    let s = script(2, |_| {});
    let plan = RunPlan {
        threads: 1,
        concurrency: 2,
        duration: Some(Duration::from_millis(800)),
        warmup: Duration::from_millis(300),
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    let r = &out.result;
    assert_eq!(r.duration_s, 0.8);
    assert_eq!(r.ended_by, "duration");
    assert!(r.warmup_operations > 0);
    let starts = s.starts.lock().unwrap();
    // No operation starts after the window closes (the binding reads its clock a little after the runner
    // decided to start, hence the small allowance); warm-up operations are executed but not measured.
    let late = starts
        .iter()
        .filter(|t| **t >= out.measurement_end + Duration::from_millis(5))
        .count();
    assert_eq!(late, 0, "operations started after the deadline");
    // Operations that started well inside the window were measured, those well before it were not
    // (the runner's clock and the binding's may disagree by microseconds at the boundary).
    let margin = Duration::from_millis(2);
    let surely_in = starts
        .iter()
        .filter(|t| **t >= out.measurement_start + margin)
        .count() as u64;
    let maybe_in = starts
        .iter()
        .filter(|t| **t + margin >= out.measurement_start)
        .count() as u64;
    assert!(
        surely_in <= r.totals.issued && r.totals.issued <= maybe_in,
        "{surely_in} <= {} <= {maybe_in}",
        r.totals.issued
    );
    assert_eq!(r.totals.ok + r.warmup_operations, starts.len() as u64);
    // The operation in flight at the end completes after the window: not in its throughput.
    assert_eq!(
        r.totals.throughput_ops_s,
        (r.totals.ok - r.totals.ok_after_window) as f64 / 0.8
    );
}

/// Issue 40, point 2: every observer in the list is told once that the measurement window opens,
/// at the instant the phase measures from (the common start plus the warm-up), before any progress
/// report: what is timed from it (faults, the probe's writes) starts exactly there.
#[test]
fn every_observer_is_told_once_when_the_measurement_window_opens() {
    #[derive(Default)]
    struct Seen {
        starts: Vec<Instant>,
        updates_before_start: usize,
        updates: usize,
    }
    impl scalebench_exec::Progress for Seen {
        fn measurement_starts(&mut self, t0: Instant) {
            self.starts.push(t0);
        }
        fn update(&mut self, _: &scalebench_exec::ProgressState) {
            self.updates += 1;
            if self.starts.is_empty() {
                self.updates_before_start += 1;
            }
        }
    }
    let plan = RunPlan {
        threads: 1,
        concurrency: 2,
        duration: Some(Duration::from_millis(600)),
        warmup: Duration::from_millis(300),
        interval: Duration::from_millis(100),
        ..Default::default()
    };
    let (mut display, mut metrics) = (Seen::default(), Seen::default());
    let mut clock = scalebench_exec::MeasurementStart::default();
    let out = execute(
        ScriptFactory(script(2, |_| {})),
        &workload_a(),
        &plan,
        &StopSignal::new(),
        &mut scalebench_exec::Observers(vec![&mut display, &mut metrics, &mut clock]),
    )
    .unwrap();
    for seen in [&display, &metrics] {
        assert_eq!(seen.starts, [out.measurement_start]);
        assert_eq!(seen.updates_before_start, 0);
        assert!(seen.updates > 0);
    }
    assert_eq!(clock.get(), Some(&out.measurement_start));
    // The window opens after the warm-up, and the measured operations all start inside it.
    assert!(out.measurement_start >= out.measurement_end - Duration::from_millis(600));
    assert!(out.result.warmup_operations > 0);
}

#[test]
fn open_loop_stall_shows_in_corrected_latency_but_not_in_service_time() {
    let s = script(1, |s| {
        s.stall = Some((Duration::from_millis(500), Duration::from_secs(1)))
    });
    let plan = RunPlan {
        threads: 1,
        concurrency: 1,
        target_ops_s: Some(1000.0),
        duration: Some(Duration::from_millis(2500)),
        ..Default::default()
    };
    let out = run_script(s, &plan).unwrap();
    let r = &out.result;
    assert!(r.open_loop);
    let mut service_p99 = 0f64;
    let mut intended_p99 = 0f64;
    let mut service_max = 0f64;
    for op in r.operations.values() {
        let l = op.latency.as_ref().unwrap();
        service_p99 = service_p99.max(l.p99_us);
        service_max = service_max.max(l.max_us);
        intended_p99 = intended_p99.max(op.intended_latency.as_ref().unwrap().p99_us);
    }
    // One operation stalled for 1 s while about 1000 more were due: their intended-start latencies range
    // up to 1 s, so the corrected p99 lies in the hundreds of ms; the service-time p99 does not see it.
    assert!(
        service_max >= 1_000_000.0,
        "the stalled operation took {service_max} us"
    );
    assert!(
        intended_p99 >= 300_000.0,
        "corrected p99 {intended_p99} us misses the stall"
    );
    assert!(
        service_p99 < 50_000.0,
        "service-time p99 {service_p99} us should not show the stall"
    );
    let sched = r.schedule.as_ref().unwrap();
    assert!(
        sched.late_operations > 500,
        "late operations: {}",
        sched.late_operations
    );
}

/// Issue 43: an open loop whose rate follows a profile. Each interval completes what the profile
/// asks for it (its integral over the interval), the warm-up at the first rate; under a stall the
/// latency is still measured from each operation's intended start.
#[test]
fn a_rate_profile_is_followed_interval_by_interval_and_a_stall_shows_from_intended_starts() {
    use scalebench_workload::rate::RateProfile;
    let profile = RateProfile::parse("staircase:start=400,step=400,every=2s,steps=2").unwrap();
    let window = Duration::from_secs(4);
    let plan = |profile: RateProfile| RunPlan {
        threads: 1,
        concurrency: 2,
        target_ops_s: Some(profile.mean_over(window)),
        rate_profile: Some(profile),
        warmup: Duration::from_millis(300),
        duration: Some(window),
        // 2 s intervals: a pause of the machine at an edge moves its operations to the next
        // interval, and 2% of 2 s is 40 ms.
        interval: Duration::from_secs(2),
        ..Default::default()
    };
    let out = run_script(script(2, |_| {}), &plan(profile.clone())).unwrap();
    let r = &out.result;
    assert!(r.open_loop);
    assert_eq!(r.intervals.len(), 2, "{:?}", r.intervals);
    for i in &r.intervals {
        let done: u64 = i.operations.values().map(|o| o.ok).sum();
        let asked = profile.arrivals_by(i.start_s + 2.0) - profile.arrivals_by(i.start_s);
        // Within 2%, and within the two operations in flight at an interval's edge.
        assert!(
            (done as f64 - asked).abs() <= (0.02 * asked).max(2.0),
            "from {} s: {done} done, {asked} asked",
            i.start_s
        );
    }
    let asked = profile.arrivals_by(4.0);
    assert!(
        (r.totals.ok as f64 - asked).abs() <= 2.0,
        "{} of {asked}",
        r.totals.ok
    );

    // One operation stalled for 1 s from 1.2 s on: the profile's arrivals meanwhile wait for it.
    let s = script(1, |s| {
        s.stall = Some((Duration::from_millis(1500), Duration::from_secs(1)))
    });
    let mut stalled = plan(profile.clone());
    stalled.concurrency = 1;
    let out = run_script(s, &stalled).unwrap();
    let mut intended_p99 = 0f64;
    let mut service_p99 = 0f64;
    for op in out.result.operations.values() {
        intended_p99 = intended_p99.max(op.intended_latency.as_ref().unwrap().p99_us);
        service_p99 = service_p99.max(op.latency.as_ref().unwrap().p99_us);
    }
    assert!(
        intended_p99 >= 300_000.0,
        "corrected p99 {intended_p99} us misses the stall"
    );
    assert!(service_p99 < 50_000.0, "service-time p99 {service_p99} us");
    // The arrivals due during the stall still ran, late: the window's total is the profile's.
    assert!(
        (out.result.totals.ok as f64 - asked).abs() <= 0.02 * asked,
        "{} of {asked}",
        out.result.totals.ok
    );
}

/// A server that is down is not hammered (issue 13, point 14: 46,000 failed operations per second
/// against a dead Redis): failures count, each slot backs off, and resumes at once when it is back.
#[test]
fn a_server_that_is_down_is_not_hammered_and_work_resumes_when_it_is_back() {
    let s = script(2, |s| {
        s.down_until = Some(Instant::now() + Duration::from_millis(1500))
    });
    let plan = RunPlan {
        threads: 1,
        concurrency: 2,
        duration: Some(Duration::from_millis(2500)),
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    let r = &out.result;
    let down_calls = r.totals.failed;
    // Exponential back-off to 100 ms: about 15 calls per slot in 1.5 s; without it, millions.
    assert!(
        (2..=100).contains(&down_calls),
        "{down_calls} calls while down"
    );
    assert!(r
        .operations
        .values()
        .all(|o| o.failed.keys().all(|c| c == "unavailable")));
    // Back within the largest back-off, then closed-loop speed again.
    assert!(r.totals.ok > 1000, "{:?}", r.totals);
}

#[test]
fn failures_are_counted_by_class_and_kept_out_of_success_figures() {
    let s = script(1, |s| s.fail_every = Some(10));
    let plan = RunPlan {
        duration: None,
        operation_count: Some(1000),
        ..Default::default()
    };
    let out = run_script(s, &plan).unwrap();
    let r = &out.result;
    assert_eq!(r.totals.failed, 100);
    assert_eq!(r.totals.ok, 900);
    assert_eq!(r.errors["not_found"].count, 100);
    assert_eq!(
        r.errors["not_found"].samples,
        vec!["scripted miss".to_string()]
    );
    let ok_latencies: u64 = r
        .operations
        .values()
        .map(|o| o.latency.as_ref().map_or(0, |l| l.count))
        .sum();
    assert_eq!(ok_latencies, 900);
    let failed: u64 = r
        .operations
        .values()
        .map(|o| o.failed.get("not_found").copied().unwrap_or(0))
        .sum();
    assert_eq!(failed, 100);
}

/// EMFILE on Linux.
fn libc_emfile() -> i32 {
    24
}

/// The client running out of its own descriptors (as a driver reports it, whatever class it maps
/// it to) is no failure of the database: the phase ends at once with the client's fault named,
/// instead of counting thousands of "unavailable" (issue 28, point 11).
#[test]
fn the_clients_own_exhaustion_ends_the_phase_and_is_not_counted_against_the_database() {
    let s = script(2, |s| s.out_of_descriptors_after = Some(50));
    let plan = RunPlan {
        threads: 2,
        duration: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let began = Instant::now();
    let e = run_script(s, &plan).unwrap_err();
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    match e {
        scalebench_exec::ExecError::ClientFault(m) => {
            assert!(m.contains("Too many open files"), "{m}")
        }
        other => panic!("not the client's fault: {other}"),
    }
}

#[test]
fn a_hung_operation_is_abandoned_after_the_grace_and_reported_in_flight() {
    let s = script(2, |s| s.hang_once = true);
    let plan = RunPlan {
        concurrency: 2,
        duration: Some(Duration::from_millis(500)),
        grace: Duration::from_millis(300),
        ..Default::default()
    };
    let begun = Instant::now();
    let out = run_script(s, &plan).unwrap();
    assert!(
        begun.elapsed() < Duration::from_secs(30),
        "the run waited for the hung operation"
    );
    assert_eq!(out.result.totals.in_flight_at_stop, 1);
    assert_eq!(
        out.result.totals.issued,
        out.result.totals.ok + out.result.totals.in_flight_at_stop
    );
}

#[test]
fn per_operation_timeout_is_a_failure_class() {
    let s = script(1, |s| {
        s.stall = Some((Duration::ZERO, Duration::from_secs(2)))
    });
    let plan = RunPlan {
        duration: None,
        operation_count: Some(20),
        op_timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    assert_eq!(out.result.errors["timeout"].count, 1);
    assert_eq!(out.result.totals.ok, 19);
    // The binding is told, so that a connection carrying one request at a time is not reused.
    assert_eq!(s.abandoned.load(Ordering::SeqCst), 1);
}

#[test]
fn a_stop_request_ends_the_run_early_and_keeps_what_was_measured() {
    let s = script(1, |_| {});
    let stop = StopSignal::new();
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            stop.request();
        })
    };
    let plan = RunPlan {
        duration: Some(Duration::from_secs(60)),
        ..Default::default()
    };
    let out = execute(
        ScriptFactory(s),
        &workload_a(),
        &plan,
        &stop,
        &mut NoProgress,
    )
    .unwrap();
    stopper.join().unwrap();
    assert_eq!(out.result.ended_by, "interrupted");
    assert!(out.result.duration_s < 10.0);
    assert!(out.result.totals.ok > 0);
    assert_eq!(out.result.totals.in_flight_at_stop, 0);
}

/// Runs one phase of `w` against the SQLite database in `dir`.
fn on_sqlite(
    dir: &std::path::Path,
    w: &CoreWorkload,
    plan: RunPlan,
) -> scalebench_measure::PhaseResult {
    use scalebench_binding::{registry, BindingConfig, DbUrl, FactoryVisitor, Schema};
    let config = BindingConfig {
        url: DbUrl::parse(&format!("sqlite://{}/t.db", dir.display())).unwrap(),
        options: Default::default(),
        schema: Schema::of(w),
        create_schema: plan.phase == Phase::Load,
        drop_schema: false,
        cancel: Default::default(),
        connect_timeout: scalebench_binding::DEFAULT_CONNECT_TIMEOUT,
        clients: 1,
        worker_nodes: None,
        pipeline: 1,
        benchmark_table: true,
    };
    struct Run<'a>(&'a CoreWorkload, RunPlan);
    impl FactoryVisitor for Run<'_> {
        type Output = scalebench_exec::PhaseOutcome;
        fn visit<F: BindingFactory>(self, f: F) -> Self::Output {
            execute(f, self.0, &self.1, &StopSignal::new(), &mut NoProgress).unwrap()
        }
    }
    registry::open(config, Run(w, plan)).unwrap().result
}

fn builtin(name: &str, overrides: &[(&str, &str)]) -> CoreWorkload {
    scalebench_workload::builtin::builtin_with(name, overrides).unwrap()
}

fn load_plan() -> RunPlan {
    RunPlan {
        phase: Phase::Load,
        threads: 2,
        duration: None,
        batch_size: 64,
        ..Default::default()
    }
}

#[test]
fn load_then_verified_run_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let w = builtin(
        "a",
        &[
            ("recordcount", "2000"),
            ("dataintegrity", "true"),
            ("writeallfields", "true"),
        ],
    );
    let loaded = on_sqlite(dir.path(), &w, load_plan());
    assert_eq!(loaded.totals.records, 2000);
    assert_eq!(loaded.totals.failed, 0);
    assert_eq!(loaded.ended_by, "completed");
    let run = RunPlan {
        threads: 2,
        duration: None,
        operation_count: Some(3000),
        ..Default::default()
    };
    let ran = on_sqlite(dir.path(), &w, run);
    assert_eq!(ran.totals.ok, 3000, "errors: {:?}", ran.errors);
}

/// Documents grow by exactly the appended text of every successful read-modify-write. One thread:
/// two concurrent read-modify-writes of one document would lose an append (no transaction), as on
/// any database.
#[test]
fn documents_grow_by_their_appends_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let w = builtin("documents", &[("recordcount", "200")]);
    let total_bytes = || -> i64 {
        let c = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
        c.query_row("SELECT SUM(LENGTH(FIELD0)) FROM usertable", [], |r| {
            r.get(0)
        })
        .unwrap()
    };
    assert_eq!(on_sqlite(dir.path(), &w, load_plan()).totals.records, 200);
    let before = total_bytes();
    let run = RunPlan {
        threads: 1,
        duration: None,
        operation_count: Some(1000),
        request_set: Some(100),
        ..Default::default()
    };
    let ran = on_sqlite(dir.path(), &w, run);
    assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);
    let appends = ran.operations["READ-MODIFY-WRITE"].ok as i64;
    assert!(appends > 100, "{appends}");
    // Each append adds the study's "1": one byte per read-modify-write.
    assert_eq!(total_bytes(), before + appends);
    assert_eq!(ran.request_sets.unwrap().sets.len(), 10);
}

#[test]
fn request_sets_are_back_to_back_and_no_operation_starts_before_its_set() {
    let s = script(6, |s| {
        s.fail_every = Some(7);
        s.delay = Some(Duration::from_millis(1));
    });
    let plan = RunPlan {
        threads: 3,
        concurrency: 2,
        duration: None,
        operation_count: Some(1000),
        request_set: Some(100),
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    let r = &out.result;
    assert_eq!(r.totals.ok + r.totals.failed, 1000);
    let sets = r.request_sets.as_ref().unwrap();
    assert_eq!((sets.sets.len(), sets.unfinished_ops), (10, 0));
    assert!(r.totals.failed > 0);
    assert_eq!(
        sets.sets.iter().map(|s| s.failed).sum::<u64>(),
        r.totals.failed
    );
    for (k, w) in sets.sets.windows(2).enumerate() {
        assert_eq!(w[0].index, k as u64);
        assert!((w[1].start_s - (w[0].start_s + w[0].duration_s)).abs() < 1e-6);
    }
    // Every operation of sets 0..=k started before set k ended, and none of a later set did. The
    // run's clock (the CPU's counter) and Instant may disagree by a little: operations take at
    // least 1 ms, so a tolerance of 0.5 ms still tells a set's operations from the next set's.
    let starts = s.starts.lock().unwrap().clone();
    let t0 = out.measurement_start;
    for set in &sets.sets {
        let end = t0 + Duration::from_secs_f64(set.start_s + set.duration_s);
        let before = |at: Instant| starts.iter().filter(|s| **s <= at).count() as u64;
        let tolerance = Duration::from_micros(500);
        assert!(before(end + tolerance) >= (set.index + 1) * 100);
        assert!(
            before(end - tolerance) <= (set.index + 1) * 100,
            "set {}",
            set.index
        );
    }
}

/// Issue 61, Dory's client: with fixed shares each thread runs R / T operations of every set (the
/// first R mod T one more), whatever the others do: 10 sets of 10 over 3 threads are 40, 30 and 30
/// operations, exactly.
#[test]
fn fixed_shares_give_each_thread_its_part_of_every_set() {
    let s = script(3, |s| s.delay = Some(Duration::from_millis(1)));
    let plan = RunPlan {
        threads: 3,
        duration: None,
        operation_count: Some(100),
        request_set: Some(10),
        set_threads: scalebench_exec::SetThreads::Fixed,
        ..Default::default()
    };
    let out = run_script(s.clone(), &plan).unwrap();
    let sets = out.result.request_sets.as_ref().unwrap();
    assert_eq!((sets.sets.len(), sets.unfinished_ops), (10, 0));
    assert_eq!(sets.threads, scalebench_exec::SetThreads::Fixed);
    let per_worker: Vec<u64> = s
        .per_worker
        .iter()
        .map(|n| n.load(Ordering::Relaxed))
        .collect();
    assert_eq!(per_worker, [40, 30, 30]);
    // Fixed shares are shares of sets.
    let no_sets = RunPlan {
        request_set: None,
        ..plan
    };
    let err = run_script(script(3, |_| {}), &no_sets).unwrap_err();
    assert!(err.to_string().contains("--request-set"), "{err}");
}

#[test]
fn request_sets_reject_a_target_rate() {
    let plan = RunPlan {
        target_ops_s: Some(100.0),
        request_set: Some(10),
        ..Default::default()
    };
    let err = run_script(script(1, |_| {}), &plan).unwrap_err();
    assert!(err.to_string().contains("closed loop"), "{err}");
}

/// Past saturation, an open-loop run's throughput is what completed inside the window (the server's
/// capacity), not the offered rate; the backlog served during the grace period counts apart.
#[test]
fn open_loop_throughput_counts_completions_inside_the_window() {
    use scalebench_binding::{registry, BindingConfig, DbUrl, FactoryVisitor, Schema};
    let w = workload_a();
    let config = BindingConfig {
        url: DbUrl::parse("null://").unwrap(),
        options: [("capacity_ops_s".to_string(), "1000".to_string())].into(),
        schema: Schema::of(&w),
        create_schema: false,
        drop_schema: false,
        cancel: Default::default(),
        connect_timeout: scalebench_binding::DEFAULT_CONNECT_TIMEOUT,
        clients: 1,
        worker_nodes: None,
        pipeline: 1,
        benchmark_table: true,
    };
    let plan = RunPlan {
        concurrency: 50,
        target_ops_s: Some(2000.0),
        duration: Some(Duration::from_secs(2)),
        ..Default::default()
    };
    struct Run<'a>(&'a CoreWorkload, RunPlan);
    impl FactoryVisitor for Run<'_> {
        type Output = scalebench_exec::PhaseOutcome;
        fn visit<F: BindingFactory>(self, f: F) -> Self::Output {
            execute(f, self.0, &self.1, &StopSignal::new(), &mut NoProgress).unwrap()
        }
    }
    let r = registry::open(config, Run(&w, plan)).unwrap().result;
    let t = &r.totals;
    assert!(t.ok_after_window > 0, "{t:?}");
    // The simulated server serves exactly 1000 operations a second: at most 2001 in the window.
    assert!(t.throughput_ops_s <= 1001.0, "{t:?}");
    assert_eq!(
        (t.throughput_ops_s * r.duration_s).round() as u64,
        t.ok - t.ok_after_window
    );
    let in_series: u64 = r
        .intervals
        .iter()
        .flat_map(|i| i.operations.values())
        .map(|o| o.ok)
        .sum();
    assert_eq!(in_series, t.ok - t.ok_after_window);
    let per_op: f64 = r.operations.values().map(|o| o.throughput_ops_s).sum();
    assert!((per_op - t.throughput_ops_s).abs() < 1e-6);
}

/// A watcher of an open-loop run sees its intervals as they close (the elasticity benchmark's
/// timeline when there are no request sets); with request sets it sees the sets.
#[test]
fn the_timeline_log_publishes_intervals_or_sets_while_the_run_goes_on() {
    let log = scalebench_exec::TimelineLog::new();
    let plan = RunPlan {
        target_ops_s: Some(500.0),
        duration: Some(Duration::from_millis(2500)),
        interval: Duration::from_millis(500),
        timeline_log: Some(log.clone()),
        ..Default::default()
    };
    let watcher = log.clone();
    let seen_during = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        watcher.points().len()
    });
    let out = run_script(script(1, |_| {}), &plan).unwrap();
    assert!(
        seen_during.join().unwrap() >= 1,
        "no interval while running"
    );
    let points = log.points();
    assert!(points.len() >= 5, "{points:?}");
    for (i, p) in points.iter().take(5).enumerate() {
        assert!((p.start_s - i as f64 * 0.5).abs() < 1e-9, "{points:?}");
        assert_eq!(p.duration_s, 0.5);
    }
    let in_window: u64 = points.iter().take(5).map(|p| p.ok).sum();
    assert_eq!(
        in_window,
        out.result.totals.ok - out.result.totals.ok_after_window
    );
    assert!(log.measurement_start().is_some());

    let log = scalebench_exec::TimelineLog::new();
    let plan = RunPlan {
        duration: None,
        operation_count: Some(300),
        request_set: Some(100),
        timeline_log: Some(log.clone()),
        ..Default::default()
    };
    run_script(script(1, |_| {}), &plan).unwrap();
    let points = log.points();
    assert_eq!(points.len(), 3, "{points:?}");
    assert!(points.iter().all(|p| p.ok == 100 && p.p99_us == 0.0));
}
