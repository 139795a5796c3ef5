//! Fed operations (a replay's, issue 66): each runs on its own key, on the slot it was given (a
//! session's operations on one connection, in their order), never before its intended start; the
//! phase ends when the feed is done; a stall delays what follows on its slot, and that delay is
//! in the latency counted from the intended start (coordinated omission corrected).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingError, BindingFactory};
use scalebench_exec::feed::{feed, Fed};
use scalebench_exec::progress::NoProgress;
use scalebench_exec::{execute, RunPlan, StopSignal};
use scalebench_workload::{CoreWorkload, FieldSet, Fields, OpError, OpKind, Properties};

/// Every call: the connection, the key and when it started; the call on `stall_key` sleeps.
#[derive(Default)]
struct Calls {
    seen: Mutex<Vec<(usize, String, Instant)>>,
    stall_key: Option<(&'static str, Duration)>,
}

#[derive(Clone)]
struct Recording(Arc<Calls>);

struct Connection {
    calls: Arc<Calls>,
    worker: usize,
}

impl BindingFactory for Recording {
    type Binding = Connection;
    fn info(&self) -> scalebench_binding::BindingInfo {
        scalebench_binding::BindingInfo {
            name: "recording",
            summary: "the test's recording binding",
            ..scalebench_binding::BindingInfo::KEY_VALUE_STORE
        }
    }
    async fn connect(&self, worker: usize) -> Result<Connection, BindingError> {
        Ok(Connection {
            calls: self.0.clone(),
            worker,
        })
    }
}

impl Connection {
    async fn call(&mut self, key: &str) -> Result<(), OpError> {
        let now = Instant::now();
        let c = &self.calls;
        c.seen
            .lock()
            .unwrap()
            .push((self.worker, key.to_string(), now));
        if let Some((k, d)) = c.stall_key.filter(|(k, _)| *k == key) {
            let _ = k;
            tokio::time::sleep(d).await;
        }
        Ok(())
    }
}

impl Binding for Connection {
    async fn read(&mut self, key: &str, _: FieldSet, _: &mut Fields) -> Result<(), OpError> {
        self.call(key).await
    }
    async fn scan(
        &mut self,
        key: &str,
        _: usize,
        _: FieldSet,
        _: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.call(key).await
    }
    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        assert_eq!(
            values[0].1.len(),
            100,
            "a fed write carries its value's size"
        );
        self.call(key).await
    }
    async fn insert(&mut self, key: &str, _: &Fields) -> Result<(), OpError> {
        self.call(key).await
    }
    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        self.call(key).await
    }
}

fn workload() -> CoreWorkload {
    let mut p = Properties::new();
    p.set("fieldcount", "1", "test");
    CoreWorkload::from_properties(&p).unwrap()
}

/// 400 operations, one every `gap`, operation i on slot i % 4 (its session), reads and updates.
fn replay(calls: Arc<Calls>, gap: Duration) -> scalebench_exec::PhaseOutcome {
    let (queues, feeder) = feed(4);
    let plan = RunPlan {
        threads: 2,
        concurrency: 2,
        duration: None,
        target_ops_s: Some(1.0 / gap.as_secs_f64()),
        feed: Some(Arc::new(queues)),
        ..Default::default()
    };
    let sender = std::thread::spawn(move || {
        for i in 0..400u64 {
            let op = Fed {
                at_ns: i * gap.as_nanos() as u64,
                kind: if i % 2 == 0 {
                    OpKind::Read
                } else {
                    OpKind::Update
                },
                append: false,
                key: format!("k{i:03}"),
                value_bytes: 100,
                statement: None,
            };
            assert!(feeder.send((i % 4) as usize, op));
        }
    });
    let out = execute(
        Recording(calls),
        &workload(),
        &plan,
        &StopSignal::new(),
        &mut NoProgress,
    )
    .unwrap();
    sender.join().unwrap();
    out
}

#[test]
fn fed_operations_run_on_their_slots_in_order_never_early_and_end_the_phase() {
    let calls = Arc::new(Calls::default());
    let gap = Duration::from_millis(1);
    let out = replay(calls.clone(), gap);
    let r = &out.result;
    assert_eq!(r.ended_by, "replayed");
    assert_eq!(r.totals.ok, 400);
    assert_eq!(
        (r.operations["READ"].ok, r.operations["UPDATE"].ok),
        (200, 200)
    );
    let seen = calls.seen.lock().unwrap();
    assert_eq!(seen.len(), 400);
    for (i, (worker, key, started)) in seen.iter().enumerate() {
        let n: u64 = key[1..].parse().unwrap();
        // On the slot it was given, never before its time.
        assert_eq!(*worker as u64, n % 4, "{key}");
        // The runner's clock is the CPU's counter, calibrated against the system's: they may
        // differ by microseconds.
        let due = out.measurement_start + gap * n as u32;
        let early = due.saturating_duration_since(*started);
        assert!(
            early < Duration::from_micros(100),
            "{key} began {early:?} early (call {i})"
        );
    }
    // Each slot's operations in their order.
    for w in 0..4 {
        let keys: Vec<&String> = seen.iter().filter(|s| s.0 == w).map(|s| &s.1).collect();
        assert!(keys.windows(2).all(|k| k[0] < k[1]), "slot {w}: {keys:?}");
    }
}

#[test]
fn a_stall_delays_what_follows_on_its_slot_and_shows_in_the_corrected_latency() {
    let stall = Duration::from_millis(200);
    let calls = Arc::new(Calls {
        stall_key: Some(("k100", stall)),
        ..Default::default()
    });
    let out = replay(calls.clone(), Duration::from_millis(1));
    let r = &out.result;
    assert_eq!(r.totals.ok, 400);
    // k100's slot (0) had k104, k108, ... due every 4 ms during the stall: about 50 waited on it,
    // the first almost the whole stall.
    let max_intended = r
        .operations
        .values()
        .map(|o| o.intended_latency.as_ref().unwrap().max_us)
        .fold(0.0, f64::max);
    assert!(max_intended >= 190_000.0, "{max_intended} us");
    let delay = r.schedule.as_ref().unwrap().start_delay.as_ref().unwrap();
    assert!(delay.max_us >= 190_000.0, "{delay:?}");
    let seen = calls.seen.lock().unwrap();
    let started = |k: &str| seen.iter().find(|s| s.1 == k).unwrap().2;
    assert!(started("k104") >= started("k100") + stall);
}
