//! `null://`: a binding that does no I/O and succeeds at once. It measures the tool's own cost.
//! With `capacity_ops_s`, it behaves as a server of exactly that capacity (one queue, each operation
//! served in 1/capacity s), which is how the saturation search is tested against a known knee. The
//! clients of a distributed run share that server: each of N serves its operations in a queue of
//! capacity / N (a server fair to N equal clients), so N clients together meet the same knee.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scalebench_workload::{FieldSet, Fields, OpError, Operation};

use crate::info::BindingInfo;
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "null",
    schemes: &["null"],
    summary: "does nothing and succeeds at once; measures scalebench's own overhead",
    url_example: "null://",
    options: Options::SET,
    stores_data: false,
    secondary_indexes: false,
    reads: "nothing is stored, so no read can be stale",
    pipelining: crate::info::Pipelining::Not("the null binding has no connection"),
    ..BindingInfo::SQL_DATABASE
};

binding_options! {
    pub struct Options {
        capacity_ops_s: u64 = "0" => "simulate a server of this capacity (operations per second, one queue shared by all connections; the clients of a distributed run share it, each its 1/N); 0: succeed at once",
    }
}

/// How far ahead of now an operation may be due and still complete at once.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// The simulated server: when it is next free.
type Queue = Arc<Mutex<Instant>>;

pub struct NullFactory {
    server: Option<(Queue, Duration)>,
}

impl NullFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        if let Some(q) = config.url.url().query().filter(|q| !q.is_empty()) {
            return Err(BindingError::Config(format!(
                "invalid database URL '{}': the null binding takes no URL parameters ('{q}'); give options as -p null.<option>=<value>",
                config.url.redacted()
            )));
        }
        let capacity = Options::read(INFO.name, &config.options)?.capacity_ops_s;
        let share = capacity as f64 / f64::from(config.clients.max(1));
        Ok(NullFactory {
            server: (capacity > 0).then(|| {
                (
                    Arc::new(Mutex::new(Instant::now())),
                    Duration::from_secs_f64(1.0 / share),
                )
            }),
        })
    }
}

impl BindingFactory for NullFactory {
    type Binding = NullBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, _worker: usize) -> Result<NullBinding, BindingError> {
        Ok(NullBinding {
            server: self.server.clone(),
        })
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

pub struct NullBinding {
    server: Option<(Queue, Duration)>,
}

impl NullBinding {
    /// With a simulated capacity: waits for the operation's turn in the queue and its service time,
    /// less [`TIMER_SLACK`]: the timer's resolution is a millisecond, and sleeping up to a tick past
    /// each end would bound a client by its operations in flight (64 per millisecond), not by the
    /// capacity. Served a millisecond early, the queue still completes capacity x time operations
    /// (plus one slack's worth), and latencies read up to 1 ms short.
    async fn serve(&self) {
        if let Some((queue, service)) = &self.server {
            let now = Instant::now();
            let done = {
                let mut free = queue.lock().unwrap_or_else(|e| e.into_inner());
                let start = (*free).max(now);
                *free = start + *service;
                *free
            };
            if done > now + TIMER_SLACK {
                tokio::time::sleep_until((done - TIMER_SLACK).into()).await;
            }
        }
    }
}

impl Binding for NullBinding {
    async fn read(
        &mut self,
        _key: &str,
        _fields: FieldSet,
        _out: &mut Fields,
    ) -> Result<(), OpError> {
        self.serve().await;
        Ok(())
    }

    async fn scan(
        &mut self,
        _: &str,
        _: usize,
        _: FieldSet,
        _: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.serve().await;
        Ok(())
    }

    async fn update(&mut self, _key: &str, _values: &Fields) -> Result<(), OpError> {
        self.serve().await;
        Ok(())
    }

    async fn insert(&mut self, _key: &str, _values: &Fields) -> Result<(), OpError> {
        self.serve().await;
        Ok(())
    }

    async fn insert_batch(&mut self, _records: &[Operation]) -> Result<(), OpError> {
        Ok(())
    }

    async fn delete(&mut self, _key: &str) -> Result<(), OpError> {
        Ok(())
    }

    /// Any statement, as nothing: no row returned or changed.
    async fn statement(&mut self, _statement: usize, _params: &Fields) -> Result<u64, OpError> {
        self.serve().await;
        Ok(0)
    }

    /// Any transaction, as nothing.
    async fn transaction(
        &mut self,
        _first: usize,
        _steps: usize,
        _params: &Fields,
    ) -> Result<u64, OpError> {
        self.serve().await;
        Ok(0)
    }

    /// A transaction's boundaries, as nothing (a sequence in one transaction).
    async fn transaction_control(
        &mut self,
        _control: crate::TransactionControl,
    ) -> Result<(), OpError> {
        Ok(())
    }

    /// Any increment, as nothing.
    async fn increment(
        &mut self,
        _key: &str,
        _changes: &[scalebench_workload::Modification],
    ) -> Result<(), OpError> {
        self.serve().await;
        Ok(())
    }
}
