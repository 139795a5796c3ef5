//! Bindings: one database each, behind one trait.
//!
//! A binding turns operations into driver calls and driver results into outcomes ([`OpError`] with a
//! [`FailureClass`]). It knows nothing about time, schedules or statistics. Adding a database means adding
//! one module (behind a cargo feature) and one entry in [`registry`].

pub mod cancel;
#[cfg(feature = "cassandra")]
pub mod cassandra;
pub mod config;
pub mod conformance;
pub mod deadline;
#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "hbase")]
pub mod hbase;
#[cfg(feature = "mongodb")]
pub mod mongodb;
#[cfg(feature = "mysql")]
pub mod mysql;
pub mod null;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
pub mod registry;
pub mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use cancel::Cancel;
pub use config::{BindingConfig, DbUrl, Schema};
pub use registry::{open, BindingInfo, FactoryVisitor, OptionInfo};

use scalebench_workload::{FieldSet, Fields, OpError, Operation};

/// Errors that stop a phase before it runs (configuration, connection, schema). Operation failures
/// are never `BindingError`s: they are counted and the run goes on.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// Bad user input: URL, option value. The CLI exits with code 2.
    #[error("{0}")]
    Config(String),
    #[error("cannot connect to {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("{0}")]
    Schema(String),
    #[error("{0}")]
    Other(String),
    /// A stop (Ctrl-C) came while connecting or preparing: nothing was measured.
    #[error("interrupted while connecting: nothing was measured")]
    Interrupted,
}

/// How long a connection attempt, handshake included, and each setup call (schema, table checks)
/// may take unless `--connect-timeout` says otherwise ([`BindingConfig::connect_timeout`]): a
/// server that accepts and never answers must not hold a run.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `connect` bounded by `limit`: past it, a connect error naming the wait.
pub async fn connect_within<T, E: std::fmt::Display>(
    limit: std::time::Duration,
    url: &str,
    connect: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, BindingError> {
    let error = |reason: String| BindingError::Connect {
        url: url.to_string(),
        reason,
    };
    tokio::time::timeout(limit, connect)
        .await
        .map_err(|_| {
            error(format!(
                "no answer within {} ms (--connect-timeout)",
                limit.as_millis()
            ))
        })?
        .map_err(|e| error(e.to_string()))
}

/// One worker's connection to the database (YCSB's per-thread `DB` instance).
///
/// Methods are async so that network drivers can multiplex; an embedded engine may complete them
/// synchronously. Futures need not be `Send`: each worker thread drives its own bindings.
#[allow(async_fn_in_trait)]
pub trait Binding {
    /// Reads one record: all fields or one. Fills `out` with (field index, value).
    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError>;

    /// Reads up to `count` records in key order, starting at `start_key` (inclusive).
    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError>;

    /// Overwrites the given fields of an existing record.
    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError>;

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError>;

    /// Inserts several records in one round trip where the database allows it.
    /// The default inserts one by one and stops at the first failure.
    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        for r in records {
            self.insert(&r.key, &r.values).await?;
        }
        Ok(())
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError>;

    /// Called once when the worker is done; closes connections.
    async fn cleanup(&mut self) -> Result<(), BindingError> {
        Ok(())
    }
}

/// Creates per-worker [`Binding`]s. Shared by all worker threads.
#[allow(async_fn_in_trait)]
pub trait BindingFactory: Send + Sync + 'static {
    type Binding: Binding;

    /// A connection for worker `worker`, made on the worker's own thread and runtime.
    async fn connect(&self, worker: usize) -> Result<Self::Binding, BindingError>;

    /// False for bindings that keep no data (null): reads cannot be verified.
    fn stores_data(&self) -> bool {
        true
    }

    /// True when `insert_batch` is a real batch (the load phase then batches by `batchsize`).
    fn batches_inserts(&self) -> bool {
        false
    }

    /// True when operations run to completion on the worker thread (an in-process engine): the
    /// runtime cannot time them out, so the executor publishes each call's deadline
    /// ([`deadline::set_call_deadline`]) and the binding must honour it.
    fn blocks_its_thread(&self) -> bool {
        false
    }
}
