//! Bindings: one database each, behind one trait.
//!
//! A binding turns operations into driver calls and driver results into outcomes ([`OpError`] with a
//! [`FailureClass`]). It knows nothing about time, schedules or statistics. Adding a database means adding
//! one folder (behind a cargo feature) and one line in [`bindings!`].

pub mod cancel;
pub mod config;
pub mod conformance;
pub mod deadline;
pub mod erased;
#[macro_use]
pub mod info;
pub mod pipeline;
pub mod registry;
pub mod snapshot;
pub mod sql;
#[cfg(feature = "tls")]
pub mod tls;

pub use cancel::Cancel;
pub use config::{BindingConfig, DbUrl, Schema, WorkerNodes};
pub use info::{BindingInfo, Increments, OptionInfo, OptionSet, Pipelining, Transactions};
pub use registry::{open, FactoryVisitor};

/// Declares every binding: its module (a folder, or a file), the cargo feature that builds it (none:
/// always built) and its factory. From this list come the module declarations, the registry's list
/// ([`registry::bindings`]) and the arm that opens each ([`registry::open`]).
macro_rules! bindings {
    ($( $module:ident $(if $feature:literal)? => $factory:ident $([$dispatch:ident])?, )*) => {
        $( $(#[cfg(feature = $feature)])? pub mod $module; )*

        /// The declarations of the bindings compiled into this build, in the order listed.
        // Pushed to one by one: each push has its own cfg.
        #[allow(unused_mut, clippy::vec_init_then_push)]
        fn compiled_bindings() -> Vec<BindingInfo> {
            let mut all = Vec::new();
            $( $(#[cfg(feature = $feature)])? all.push($module::INFO); )*
            all
        }

        /// The cargo features of the bindings this build leaves out (each named as its binding).
        #[allow(unused_mut, clippy::vec_init_then_push)]
        fn left_out_bindings() -> Vec<&'static str> {
            let mut out = Vec::new();
            $( $(#[cfg(not(feature = $feature))] out.push($feature);)? )*
            out
        }

        /// Opens compiled binding `name` and hands its factory to `visitor`: with its concrete type
        /// if `[direct]`, else erased ([`erased`]).
        fn open_compiled<V: FactoryVisitor>(
            name: &str,
            config: &BindingConfig,
            visitor: V,
        ) -> Result<V::Output, BindingError> {
            match name {
                $(
                    $(#[cfg(feature = $feature)])?
                    n if n == $module::INFO.name => {
                        Ok(opened!(visitor, config, $module $factory $([$dispatch])?))
                    }
                )*
                other => Err(BindingError::Config(format!("binding '{other}' is not in this build"))),
            }
        }

        /// One non-generic function per erased binding: its code is compiled here, once.
        mod erasers {
            #[allow(unused_imports)]
            use super::*;
            $( $(#[cfg(feature = $feature)])? eraser!($module $factory $([$dispatch])?); )*
        }
    };
}

macro_rules! opened {
    ($visitor:ident, $config:ident, $module:ident $factory:ident [direct]) => {
        $visitor.visit($module::$factory::open($config)?)
    };
    ($visitor:ident, $config:ident, $module:ident $factory:ident) => {
        $visitor.visit(erasers::$module($config)?)
    };
}

macro_rules! eraser {
    ($module:ident $factory:ident [direct]) => {};
    ($module:ident $factory:ident) => {
        #[inline(never)]
        pub(crate) fn $module(
            config: &BindingConfig,
        ) -> Result<crate::erased::ErasedFactory, BindingError> {
            Ok(crate::erased::ErasedFactory::new(
                crate::$module::$factory::open(config)?,
            ))
        }
    };
}

// Adding a database: its folder under src/, one line here, and its cargo feature (with the driver
// it needs) in Cargo.toml's `all-bindings`. `[direct]`: the executor is compiled for the binding's
// own type, no allocation per operation (the tool's own cost, an in-process engine); every other
// binding reaches it erased (src/erased.rs says why).
bindings! {
    null => NullFactory [direct],
    sqlite if "sqlite" => SqliteFactory [direct],
    postgres if "postgres" => PostgresFactory,
    redis if "redis" => RedisFactory,
    mysql if "mysql" => MysqlFactory,
    etcd if "etcd" => EtcdFactory,
    cassandra if "cassandra" => CassandraFactory,
    mongodb if "mongodb" => MongoFactory,
    hbase if "hbase" => HbaseFactory,
}

use scalebench_workload::{FailureClass, FieldSet, Fields, Modification, OpError, Operation};

/// Errors that stop a phase before it runs (configuration, connection, schema). Operation failures
/// are never `BindingError`s: they are counted and the run goes on.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// Bad user input: URL, option value. The CLI exits with code 2.
    #[error("{0}")]
    Config(String),
    #[error("cannot connect to {url}: {}", without_repeats(.reason))]
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

/// An error and its causes on one line ("error connecting to server: Connection refused (os error
/// 111)"): some drivers' messages leave the cause to `source()`, which a message alone never shows.
pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !more.is_empty() && !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// A chain of causes ("a: b: c") with each cause once: drivers that wrap an error often print the
/// wrapped one in their own message too ("tcp connect error: transport error: tcp connect error:
/// Connection refused" becomes "tcp connect error: transport error: Connection refused").
pub fn without_repeats(text: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for part in text.split(": ") {
        if !kept.contains(&part) {
            kept.push(part);
        }
    }
    kept.join(": ")
}

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

    /// Reads the records of `keys` (distinct) in one operation: each record found, with its key,
    /// into `out` (in any order); a key with no record is left out. The default reads them one
    /// after another; bindings whose database reads several keys in one call override it.
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        read_each(self, keys, fields, out).await
    }

    /// Writes each of `keys`' `values` (a batch: `values[i]` for `keys[i]`) in one call where the
    /// database has one; the default updates one after another and stops at the first failure.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        for (key, v) in keys.iter().zip(values) {
            self.update(key, v).await?;
        }
        Ok(())
    }

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
    /// Runs the workload's statement number `statement` ([`crate::Schema::statements`]) with
    /// `params` (their values in the statement's parameter order) and returns the rows it
    /// returned, or for a statement that returns none the rows it changed. Bindings whose
    /// [`BindingInfo::statements`] names a language implement it; the others are never asked
    /// (the run is refused before it connects).
    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        let _ = params;
        Err(OpError::new(
            FailureClass::Other,
            format!("this binding runs no statement (statement {statement})"),
        ))
    }

    /// Runs a statement as a capture has it (`scalebench replay` of a database log), with the
    /// parameters its log gave a prepared statement (`params`: (its number from 0, its value as
    /// text); a number missing is a NULL), on this connection, and returns the rows it returned or
    /// changed. Bindings whose
    /// [`BindingInfo::replays_statements`] names a capture's database implement it; the others are
    /// never asked (the replay counts those statements as not run).
    async fn statement_text(&mut self, text: &str, params: &Fields) -> Result<u64, OpError> {
        let _ = (text, params);
        Err(OpError::new(
            FailureClass::Other,
            "this binding runs no statement as a capture has it",
        ))
    }

    /// Runs the workload's statements `first..first + steps` (a transaction's, sharing `params`)
    /// in one transaction: BEGIN, each in order, COMMIT; a failed step rolls the others back and
    /// is the operation's failure. Returns the rows they returned or changed, summed. Bindings that
    /// run SQL statements implement it; the others are never asked.
    async fn transaction(
        &mut self,
        first: usize,
        steps: usize,
        params: &Fields,
    ) -> Result<u64, OpError> {
        self.transaction_control(TransactionControl::Begin).await?;
        let mut rows = 0;
        for s in first..first + steps {
            match self.statement(s, params).await {
                Ok(n) => rows += n,
                Err(e) => {
                    // The step's failure is the operation's; a failed rollback adds nothing.
                    let _ = self.transaction_control(TransactionControl::Rollback).await;
                    return Err(e);
                }
            }
        }
        self.transaction_control(TransactionControl::Commit).await?;
        Ok(rows)
    }

    /// Begins, commits or rolls back a transaction on this connection ([`Binding::transaction`]).
    async fn transaction_control(&mut self, control: TransactionControl) -> Result<(), OpError> {
        Err(OpError::new(
            FailureClass::Other,
            format!("this binding runs no transaction ({control:?})"),
        ))
    }

    /// Adds each change's amount to its column of record `key` in the database, atomically (a
    /// workload file's `increment`); a missing record is `NotFound` and is not created. Bindings
    /// whose [`BindingInfo::increments`] is not `None` implement it; the others are never asked
    /// (the run is refused before it connects).
    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        let _ = changes;
        Err(OpError::new(
            FailureClass::Other,
            format!("this binding has no increment ({key})"),
        ))
    }

    /// Called once when the worker is done; closes connections.
    async fn cleanup(&mut self) -> Result<(), BindingError> {
        Ok(())
    }

    /// An operation's future was dropped before its answer came (the operation timeout). A binding
    /// whose connection carries one request at a time must drop that connection: the abandoned
    /// request's answer would otherwise be read as the next operation's.
    fn abandoned(&mut self) {}
}

/// A transaction's boundaries, as [`Binding::transaction_control`] is asked for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionControl {
    Begin,
    Commit,
    Rollback,
}

/// A batch of updates in one transaction (SQL bindings): BEGIN, each update, COMMIT; a failed
/// update rolls the others back.
pub async fn update_in_transaction<B: Binding + ?Sized>(
    b: &mut B,
    keys: &[String],
    values: &[Fields],
) -> Result<(), OpError> {
    b.transaction_control(TransactionControl::Begin).await?;
    for (key, v) in keys.iter().zip(values) {
        if let Err(e) = b.update(key, v).await {
            let _ = b.transaction_control(TransactionControl::Rollback).await;
            return Err(e);
        }
    }
    b.transaction_control(TransactionControl::Commit).await
}

/// A multi-get as reads one after another ([`Binding::read_many`]'s default).
pub async fn read_each<B: Binding + ?Sized>(
    b: &mut B,
    keys: &[String],
    fields: FieldSet,
    out: &mut Vec<(String, Fields)>,
) -> Result<(), OpError> {
    out.clear();
    for key in keys {
        let mut values = Fields::new();
        match b.read(key, fields, &mut values).await {
            Ok(()) => out.push((key.clone(), values)),
            Err(e) if e.class == FailureClass::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Creates per-worker [`Binding`]s. Shared by all worker threads. Each binding's factory also has
/// `fn open(&BindingConfig) -> Result<Self, BindingError>`, which checks the options and the
/// database before anything runs (called by [`registry::open`]).
#[allow(async_fn_in_trait)]
pub trait BindingFactory: Send + Sync + 'static {
    type Binding: Binding;

    /// The binding's declaration: schemes, options and what it can do (its module's `INFO`).
    fn info(&self) -> BindingInfo;

    /// A connection for worker `worker`, made on the worker's own thread and runtime.
    async fn connect(&self, worker: usize) -> Result<Self::Binding, BindingError>;

    /// A connection for the verify pass after a run (`--verify-writes`), whose reads must see every
    /// write acknowledged before them on whichever node the worker reaches; the default, a
    /// worker's connection, where any node's read does.
    async fn connect_to_verify(&self, worker: usize) -> Result<Self::Binding, BindingError> {
        self.connect(worker).await
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
