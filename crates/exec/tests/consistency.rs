//! The consistency probe against a store whose writes become visible to other connections only
//! after a known lag: what it counts, and that the independent checker (tools/history-check,
//! Porcupine) counts the same stale reads on the history it wrote and finds it not linearizable.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingError, BindingFactory, BindingInfo};
use scalebench_exec::consistency::{run_probe, ProbePlan};
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError};

/// A version: when other connections may see it, the connection that wrote it, its value.
type Version = (Instant, usize, String);

/// Every version of every key. The connection that wrote a version sees it at once.
#[derive(Default)]
struct Store {
    versions: Mutex<HashMap<String, Vec<Version>>>,
}

struct Lagging {
    store: Arc<Store>,
    lag: Duration,
}

struct LaggingConnection {
    store: Arc<Store>,
    lag: Duration,
    id: usize,
}

impl BindingFactory for Lagging {
    type Binding = LaggingConnection;
    fn info(&self) -> BindingInfo {
        BindingInfo {
            name: "lagging",
            schemes: &[],
            summary: "writes visible to other connections after a lag",
            url_example: "",
            options: scalebench_binding::OptionSet::NONE,
            table_sql: None,
            stores_data: true,
            creates_table_on_load: false,
            reads: "",
        }
    }
    async fn connect(&self, worker: usize) -> Result<LaggingConnection, BindingError> {
        Ok(LaggingConnection {
            store: self.store.clone(),
            lag: self.lag,
            id: worker,
        })
    }
}

impl LaggingConnection {
    fn put(&self, key: &str, values: &Fields) {
        let visible = Instant::now() + self.lag;
        let value = values[0].1.clone();
        let mut all = self.store.versions.lock().unwrap();
        all.entry(key.to_string())
            .or_default()
            .push((visible, self.id, value));
    }
}

impl Binding for LaggingConnection {
    async fn read(&mut self, key: &str, _: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        let now = Instant::now();
        let all = self.store.versions.lock().unwrap();
        let newest = all.get(key).and_then(|v| {
            v.iter()
                .rev()
                .find(|(visible, writer, _)| *visible <= now || *writer == self.id)
        });
        match newest {
            Some((_, _, value)) => {
                out.push((0, value.clone()));
                Ok(())
            }
            None => Err(OpError::new(FailureClass::NotFound, "no such key")),
        }
    }
    async fn scan(
        &mut self,
        _: &str,
        _: usize,
        _: FieldSet,
        _: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        unreachable!("the probe does not scan")
    }
    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.put(key, values);
        Ok(())
    }
    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.put(key, values);
        Ok(())
    }
    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        match self.store.versions.lock().unwrap().remove(key) {
            Some(_) => Ok(()),
            None => Err(OpError::new(FailureClass::NotFound, "no such key")),
        }
    }
}

#[test]
fn a_store_lagging_20_ms_reads_stale_until_then_and_the_checker_counts_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.jsonl");
    let plan = ProbePlan {
        rate: 100.0,
        delays_ms: vec![0.0, 1.0, 50.0, 100.0],
        horizon: Duration::from_secs(1),
        readers: 6,
        start_after: Duration::ZERO,
        op_timeout: Duration::from_secs(5),
        history: Some(history.clone()),
        live: None,
    };
    let lag = Duration::from_millis(20);
    let factory = Lagging {
        store: Arc::new(Store::default()),
        lag,
    };
    let done = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let probe = s.spawn(|| run_probe(&factory, &plan, &done, &|| {}));
        std::thread::sleep(Duration::from_millis(1500));
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        probe.join().unwrap().unwrap()
    });
    assert_eq!(outcome.history_error, None);
    let c = outcome.result;
    assert!(c.probe_writes >= 50, "{c:?}");
    let at = |d: f64| c.t_visibility.iter().find(|p| p.delay_ms == d).unwrap();
    // Reads within the lag return the previous version; from 50 ms on, every read is fresh.
    for d in [0.0, 1.0] {
        assert!(
            at(d).samples > 0 && at(d).consistent_fraction < 0.5,
            "{c:?}"
        );
    }
    for d in [50.0, 100.0] {
        assert!(at(d).samples >= c.probe_writes / 2, "{c:?}");
        assert_eq!(at(d).consistent_fraction, 1.0, "{c:?}");
    }
    assert!(c.stale_reads > 0);
    // A stale read is one version behind, or two when it read a key whose first version (written
    // just before the measurement began) was not visible yet either.
    assert!(c.k_staleness[&1] > 0, "{c:?}");
    assert!(c.k_staleness.keys().all(|k| *k <= 2), "{c:?}");
    // The writer sees its own writes: read-your-writes holds; no reader goes backwards.
    assert_eq!(c.read_your_writes.violations, 0);
    assert!(c.read_your_writes.checks >= c.probe_writes);
    assert_eq!(c.monotonic_reads.violations, 0);
    // The window: about the lag (a read sees a write 20 ms after the store took it; the
    // acknowledgement comes a little after that), never seen at 50 ms.
    let w = c.window_us.as_ref().unwrap();
    assert_eq!(w.count, c.probe_writes);
    assert!(w.p50_us >= 15_000.0 && w.p50_us < 50_000.0, "{w:?}");
    assert_eq!(c.never_seen, 0);
    // The probe leaves no key behind.
    let left: Vec<String> = factory
        .store
        .versions
        .lock()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let tool = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/history-check");
    let checker = dir.path().join("history-check");
    let built = std::process::Command::new("go")
        .args(["build", "-o", checker.to_str().unwrap(), "."])
        .current_dir(&tool)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let checked = std::process::Command::new(&checker)
        .arg(&history)
        .output()
        .unwrap();
    let checked: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(checked["linearizable"], "no", "{checked}");
    assert_eq!(checked["reads"], c.probe_reads, "{checked}");
    assert_eq!(checked["stale_reads"], c.stale_reads, "{checked}");
}
