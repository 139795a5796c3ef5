//! `null://`: a binding that does no I/O and succeeds at once. It measures the tool's own cost.
//! With `capacity_ops_s`, it behaves as a server of exactly that capacity (one queue, each operation
//! served in 1/capacity s), which is how the saturation search is tested against a known knee.

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
    table_sql: None,
    stores_data: false,
    creates_table_on_load: false,
    reads: "nothing is stored, so no read can be stale",
};

binding_options! {
    pub struct Options {
        capacity_ops_s: u64 = "0" => "simulate a server of this capacity (operations per second, one queue shared by all connections); 0: succeed at once",
    }
}

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
        Ok(NullFactory {
            server: (capacity > 0).then(|| {
                (
                    Arc::new(Mutex::new(Instant::now())),
                    Duration::from_secs_f64(1.0 / capacity as f64),
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
    /// With a simulated capacity: waits for the operation's turn in the queue and its service time.
    async fn serve(&self) {
        if let Some((queue, service)) = &self.server {
            let done = {
                let mut free = queue.lock().unwrap_or_else(|e| e.into_inner());
                let start = (*free).max(Instant::now());
                *free = start + *service;
                *free
            };
            tokio::time::sleep_until(done.into()).await;
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
}
