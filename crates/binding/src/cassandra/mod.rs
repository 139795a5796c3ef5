//! `cassandra://host:port[,host:port]/keyspace[?ssl=true&certfile=ca.pem]`: Apache Cassandra (and
//! ScyllaDB) through the scylla driver, CQL native protocol, token-aware routing, TLS as cqlsh
//! takes it ([`tls`]).
//!
//! Schema as YCSB's CQL binding: `usertable (y_id varchar PRIMARY KEY, field0 varchar, ...)`. Scans are
//! YCSB's token-range reads (`token(y_id) >= token(?)`): records come in token order, not key order.
//! Updates and deletes are upserts and tombstones: Cassandra cannot report a missing record for them.
//! One session per worker thread, shared by its slots (the driver multiplexes requests); with
//! workers bound to nodes (`--request-set-threads fixed`, [`nodes`]), one per thread and node.

mod nodes;
mod schema;
mod settings;
mod statements;
mod tls;
mod values;

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use scalebench_workload::statement::Param;
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, Operation};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::unprepared::Statement;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, Row};

use schema::prepare_schema;
use schema::TableOptions;
use settings::{settings_of, Options, Settings};
use statements::Prepared;
use values::{fields_of, inline, keyed, text_of, typed_value, Values};

use crate::snapshot::{Held, Snapshot};
use crate::info::BindingInfo;
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "cassandra",
    schemes: &["cassandra"],
    summary: "Apache Cassandra / ScyllaDB (scylla driver, CQL); consistency per operation type",
    url_example: "cassandra://127.0.0.1:9042/ycsb or cassandra://h:9042/ycsb?ssl=true (TLS)",
    options: Options::SET,
    secondary_indexes: true,
    transactions: crate::Transactions::OneRecord,
    statements: Some(scalebench_workload::statement::Language::Cql),
    reads: "each read at read_consistency, each write at write_consistency: with replication_factor RF, R + W > RF replicas make every read see every acknowledged write (QUORUM/QUORUM, ALL/ONE, ONE/ALL), ONE/ONE may read a replica the write has not reached. token_aware = true sends each request to a replica of its key; false spreads requests over all nodes as coordinators, round-robin; with --request-set-threads fixed, every request of worker w is coordinated by node w mod n of the ring (Dory's client), which forwards it to the key's replicas",
    binds_workers_to_nodes: true,
    pipelining: crate::info::Pipelining::Driver,
    ..BindingInfo::KEY_VALUE_STORE
};

pub struct CassandraFactory {
    settings: Arc<Settings>,
    /// The verify pass's reads (`--verify-writes`): at ALL, every replica answering and the newest
    /// write winning, so a write acknowledged at any level is seen where it is; where a replica is
    /// down, at QUORUM (what a majority holds). Unprepared: prepared statements carry the run's level.
    verify: Arc<Settings>,
}

impl CassandraFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        // Cassandra's secondary indexes cover one column.
        if let Some(ix) = config.schema.indexes.iter().find(|ix| ix.columns.len() != 1) {
            return Err(BindingError::Config(format!(
                "index '{}' has {} columns: a Cassandra secondary index covers one",
                ix.name,
                ix.columns.len()
            )));
        }
        let (mut settings, options) = settings_of(INFO.name, config)?;
        let table = TableOptions::of(options)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        settings.pinned = runtime.block_on(config.cancel.unless_cancelled(async {
            let session = connect(&settings, false, None).await?;
            prepare_schema(&session, &settings, &table, config).await?;
            Ok(config.worker_nodes.map(|w| nodes::Pinned::of(&session, w)))
        }))?;
        Ok(CassandraFactory {
            verify: Arc::new(settings.for_verify()),
            settings: Arc::new(settings),
        })
    }
}

/// A session whose requests go to `node` alone, or where the policy of `s` sends them.
async fn connect(
    s: &Settings,
    use_keyspace: bool,
    node: Option<SocketAddr>,
) -> Result<Session, BindingError> {
    let policy = nodes::policy(node, s.token_aware);
    let profile = scylla::client::execution_profile::ExecutionProfile::builder()
        .load_balancing_policy(policy)
        // No driver timeout: the run's --op-timeout decides, so latency is never capped.
        .request_timeout(None)
        .build();
    let mut b = SessionBuilder::new()
        .known_nodes(&s.nodes)
        .default_execution_profile_handle(profile.into_handle());
    if let Some((user, password)) = &s.credentials {
        b = b.user(user, password);
    }
    if use_keyspace {
        b = b.use_keyspace(&s.keyspace, false);
    }
    b = b.tls_context(s.tls.clone());
    // rustls's refusal named as the check that failed.
    let build = async { b.build().await.map_err(|e| crate::tls::explain(&e.to_string())) };
    crate::connect_within(s.connect_timeout, &s.url, build).await
}

struct ThreadSession {
    session: Session,
    prepared: Option<Prepared>,
    /// The workload file's statements, always prepared.
    own: Vec<Option<PreparedStatement>>,
}

/// A thread's sessions: by factory and, for workers bound to nodes, node.
type SessionKey = (u64, Option<SocketAddr>);

thread_local! {
    static SESSIONS: RefCell<HashMap<SessionKey, Rc<ThreadSession>>> = RefCell::new(HashMap::new());
}

impl BindingFactory for CassandraFactory {
    type Binding = CassandraBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, worker: usize) -> Result<CassandraBinding, BindingError> {
        let node = self.settings.pinned.as_ref().and_then(|p| p.node_of(worker));
        connect_binding(&self.settings, node).await
    }

    async fn connect_to_verify(&self, _worker: usize) -> Result<CassandraBinding, BindingError> {
        connect_binding(&self.verify, None).await
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

/// A binding on this thread's session of `s` (made on first use), to `node` alone if given.
async fn connect_binding(
    s: &Arc<Settings>,
    node: Option<SocketAddr>,
) -> Result<CassandraBinding, BindingError> {
    let cached = SESSIONS.with(|m| m.borrow().get(&(s.id, node)).cloned());
        let session = match cached {
            Some(ts) => ts,
            None => {
                let session = connect(s, true, node).await?;
                let prepared = if s.prepared {
                    Some(s.prepare(&session).await?)
                } else {
                    None
                };
                let own = s.prepare_own(&session).await?;
                let ts = Rc::new(ThreadSession {
                    session,
                    prepared,
                    own,
                });
                SESSIONS.with(|m| m.borrow_mut().insert((s.id, node), ts.clone()));
                ts
            }
        };
        Ok(CassandraBinding {
            session,
            settings: s.clone(),
            txn: Held::Idle,
        })
}

pub struct CassandraBinding {
    session: Rc<ThreadSession>,
    settings: Arc<Settings>,
    /// A sequence's transaction ([`crate::Transactions::OneRecord`]): a lightweight transaction
    /// (Paxos) on the record's partition at the commit.
    txn: Held<Snapshot>,
}

fn classify(e: impl std::fmt::Display) -> OpError {
    // The driver's error types nest deeply and change between releases; its messages name the server's
    // error codes (Unavailable, ReadTimeout, ...) reliably.
    let text = e.to_string();
    let t = text.to_ascii_lowercase();
    let class = if t.contains("unavailable")
        || t.contains("not enough nodes")
        || t.contains("not enough replicas")
        || t.contains("cannot achieve consistency")
        || t.contains("overloaded")
        || t.contains("bootstrapping")
    {
        FailureClass::Unavailable
    } else if t.contains("timeout") || t.contains("timed out") {
        FailureClass::Timeout
    } else if t.contains("connection")
        || t.contains("broken pipe")
        || t.contains("no connections")
        || t.contains("refused")
    {
        FailureClass::Unavailable
    } else {
        FailureClass::Other
    };
    OpError::new(class, text)
}

impl CassandraBinding {
    fn statement(&self, cql: String, c: Consistency) -> Statement {
        let mut st = Statement::new(cql);
        st.set_consistency(c);
        st.set_serial_consistency(Some(self.settings.serial));
        st
    }

    /// Runs `prepared` with `values`, or without prepared statements the text of `cql` with the
    /// values written into it as literals: one QUERY message that the server parses every time.
    /// (The driver would prepare a text statement that has bound values first: two round trips per
    /// operation, which is neither mode.)
    async fn rows(
        &self,
        prepared: Option<&PreparedStatement>,
        cql: impl FnOnce() -> String,
        c: Consistency,
        values: Values<'_>,
    ) -> Result<Vec<Row>, OpError> {
        let session = &self.session.session;
        let result = match prepared {
            Some(p) => session.execute_unpaged(p, values).await.map_err(classify)?,
            None => session
                .query_unpaged(self.statement(inline(&cql(), &values), c), &[])
                .await
                .map_err(classify)?,
        };
        match result.into_rows_result() {
            Ok(rows) => rows
                .rows::<Row>()
                .map_err(classify)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(classify),
            Err(_) => Ok(Vec::new()),
        }
    }

    /// Sends `batch` with each of its statements' values (`Values::Text` for one whose values are
    /// in its text).
    async fn send_batch(&self, batch: &Batch, rows: Vec<Values<'_>>) -> Result<(), OpError> {
        self.session
            .session
            .batch(batch, rows)
            .await
            .map_err(classify)?;
        Ok(())
    }

    fn columns_of(&self, fields: FieldSet) -> std::ops::Range<usize> {
        fields.indices(self.settings.columns.len())
    }

    /// An update's values: the columns', then the key.
    fn update_values<'a>(&self, key: &'a str, values: &'a Fields) -> Result<Values<'a>, OpError> {
        Ok(if self.settings.typed {
            let mut typed = values
                .iter()
                .map(|(f, v)| typed_value(self.settings.types[*f], v).map(Some))
                .collect::<Result<Vec<_>, _>>()?;
            typed.push(Some(CqlValue::Text(key.to_string())));
            Values::Typed(typed)
        } else {
            let mut params: Vec<&str> = values.iter().map(|(_, v)| v.as_str()).collect();
            params.push(key);
            Values::Text(params)
        })
    }

    /// The key, then every column (a field not given is empty text, or null when typed).
    fn insert_values<'a>(&self, key: &'a str, values: &'a Fields) -> Result<Values<'a>, OpError> {
        if self.settings.typed {
            let mut row = vec![None; self.settings.columns.len() + 1];
            row[0] = Some(CqlValue::Text(key.to_string()));
            for (f, v) in values {
                row[f + 1] = Some(typed_value(self.settings.types[*f], v)?);
            }
            return Ok(Values::Typed(row));
        }
        let mut row = vec![""; self.settings.columns.len() + 1];
        row[0] = key;
        for (f, v) in values {
            row[f + 1] = v.as_str();
        }
        Ok(Values::Text(row))
    }

    /// A record's columns, at the read consistency (or its fallback when replicas are down).
    async fn read_row(&self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        let p = self.session.prepared.as_ref().map(|p| match fields {
            FieldSet::All => &p.read_all,
            FieldSet::One(i) => &p.read_one[i],
        });
        let read = |level| {
            self.rows(
                p,
                || self.settings.read_cql(fields),
                level,
                Values::Text(vec![key]),
            )
        };
        let rows = match (read(self.settings.read).await, self.settings.read_if_unavailable) {
            (Err(e), Some(level)) if e.class == FailureClass::Unavailable => read(level).await?,
            (rows, _) => rows?,
        };
        let row = rows
            .into_iter()
            .next()
            .ok_or_else(|| OpError::new(FailureClass::NotFound, format!("no record {key}")))?;
        out.extend(fields_of(
            self.columns_of(fields),
            &self.settings.types,
            row.columns.into_iter(),
        ));
        Ok(())
    }

    /// The transaction's record, read at its first step (`None`: no transaction).
    async fn in_txn(&mut self, key: &str) -> Result<Option<&mut Snapshot>, OpError> {
        match &self.txn {
            Held::Idle => return Ok(None),
            Held::Begun => {
                // A null column stays `None` (a plain read gives it as empty text): the commit's
                // condition is then `IF c = null`, which a null meets.
                let p = self.session.prepared.as_ref().map(|p| &p.read_all);
                let rows = self
                    .rows(
                        p,
                        || self.settings.read_cql(FieldSet::All),
                        self.settings.read,
                        Values::Text(vec![key]),
                    )
                    .await?;
                let original = rows.into_iter().next().map(|row| {
                    row.columns
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| v.map(|v| text_of(Some(v), self.settings.types.get(i).copied())))
                        .collect::<Vec<_>>()
                });
                self.txn = Held::Holding(Snapshot::new(key, original));
            }
            Held::Holding(s) => s.check_key(key)?,
        }
        match &mut self.txn {
            Held::Holding(s) => Ok(Some(s)),
            _ => unreachable!("held above"),
        }
    }

    /// Writes the transaction's record in one lightweight transaction whose condition is every
    /// column as read (`INSERT ... IF NOT EXISTS` for a record that was not there): not applied,
    /// the record changed meanwhile and the sequence is a conflict, nothing written.
    async fn commit(&self, s: Snapshot) -> Result<(), OpError> {
        if !s.changed() {
            return Ok(());
        }
        let st = &self.settings;
        let typed = |i: usize, v: &str| typed_value(st.types[i], v).map(Some);
        let key = Some(CqlValue::Text(s.key.clone()));
        let mut values: Vec<Option<CqlValue>> = Vec::new();
        let mut condition = Vec::new();
        if let Some(original) = &s.original {
            for (i, v) in original.iter().enumerate() {
                match v {
                    Some(v) => {
                        condition.push(format!("{} = ?", st.columns[i]));
                        values.push(typed(i, v)?);
                    }
                    None => condition.push(format!("{} = null", st.columns[i])),
                }
            }
        }
        let cql = match (&s.original, &s.current) {
            (None, Some(record)) => {
                let given: Vec<usize> = (0..record.len()).filter(|&i| record[i].is_some()).collect();
                let mut row = vec![key];
                for &i in &given {
                    row.push(typed(i, record[i].as_deref().unwrap_or_default())?);
                }
                values = row;
                let names: Vec<&str> = given.iter().map(|&i| st.columns[i].as_str()).collect();
                format!(
                    "INSERT INTO {} ({}, {}) VALUES ({}) IF NOT EXISTS",
                    st.table,
                    st.key,
                    names.join(", "),
                    vec!["?"; given.len() + 1].join(", ")
                )
            }
            (Some(original), Some(record)) => {
                let changed: Vec<usize> =
                    (0..record.len()).filter(|&i| record[i] != original[i]).collect();
                // A column the record no longer has (deleted, then written anew) is set to null.
                let mut row = Vec::new();
                for &i in &changed {
                    if let Some(v) = &record[i] {
                        row.push(typed(i, v)?);
                    }
                }
                row.push(key);
                row.append(&mut values);
                values = row;
                let sets: Vec<String> = changed
                    .iter()
                    .map(|&i| match record[i] {
                        Some(_) => format!("{} = ?", st.columns[i]),
                        None => format!("{} = null", st.columns[i]),
                    })
                    .collect();
                format!(
                    "UPDATE {} SET {} WHERE {} = ? IF {}",
                    st.table,
                    sets.join(", "),
                    st.key,
                    condition.join(" AND ")
                )
            }
            (Some(_), None) => {
                values.insert(0, key);
                format!(
                    "DELETE FROM {} WHERE {} = ? IF {}",
                    st.table,
                    st.key,
                    condition.join(" AND ")
                )
            }
            (None, None) => return Ok(()),
        };
        let result = self
            .session
            .session
            .query_unpaged(self.statement(cql, st.write), Values::Typed(values))
            .await
            .map_err(classify)?;
        let rows = match result.into_rows_result() {
            Ok(rows) => rows
                .rows::<Row>()
                .map_err(classify)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(classify)?,
            Err(_) => Vec::new(),
        };
        let applied = rows.first().and_then(|r| r.columns.first().cloned().flatten());
        if !matches!(applied, Some(CqlValue::Boolean(true))) {
            return Err(OpError::new(
                FailureClass::Conflict,
                format!("{} changed during the transaction: nothing written", s.key),
            ));
        }
        Ok(())
    }

    /// An insert; with IF NOT EXISTS, a row that is already there is a conflict.
    async fn insert_one(&self, key: &str, values: &Fields) -> Result<(), OpError> {
        let row = self.insert_values(key, values)?;
        let p = self.session.prepared.as_ref().map(|p| &p.insert);
        let rows = self
            .rows(p, || self.settings.insert_cql(), self.settings.write, row)
            .await?;
        if self.settings.if_not_exists {
            let applied = rows
                .first()
                .and_then(|r| r.columns.first().cloned().flatten());
            if !matches!(applied, Some(CqlValue::Boolean(true))) {
                return Err(OpError::new(
                    FailureClass::Conflict,
                    format!("{key} exists (IF NOT EXISTS not applied)"),
                ));
            }
        }
        Ok(())
    }
}

impl Binding for CassandraBinding {
    /// A sequence abandoned at the operation timeout leaves no transaction behind: the worker's
    /// next operations go to the database, not into a record held in memory.
    fn abandoned(&mut self) {
        self.txn = Held::Idle;
    }

    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        if let Some(s) = self.in_txn(key).await? {
            return s.read(fields, out);
        }
        self.read_row(key, fields, out).await
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let p = self.session.prepared.as_ref().map(|p| match fields {
            FieldSet::All => &p.scan_all,
            FieldSet::One(i) => &p.scan_one[i],
        });
        let limit = count as i32;
        let rows = self
            .rows(
                p,
                || self.settings.scan_cql(fields),
                self.settings.scan,
                Values::Typed(vec![
                    Some(CqlValue::Text(start_key.to_string())),
                    Some(CqlValue::Int(limit)),
                ]),
            )
            .await?;
        keyed(rows, self.columns_of(fields), &self.settings.types, out);
        Ok(())
    }

    /// One `SELECT ... WHERE key IN (...)` at the read consistency (the coordinator asks each
    /// key's replicas), sent as text with the keys inlined.
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let cql = format!(
            "SELECT {k}, {} FROM {} WHERE {k} IN ({})",
            self.settings.select(fields),
            self.settings.table,
            vec!["?"; keys.len()].join(", "),
            k = self.settings.key
        );
        let rows = self
            .rows(
                None,
                || cql,
                self.settings.read,
                Values::Text(keys.iter().map(String::as_str).collect()),
            )
            .await?;
        keyed(rows, self.columns_of(fields), &self.settings.types, out);
        Ok(())
    }

    /// One logged BATCH of the updates: applied all or none (Cassandra's batch log), at the write
    /// consistency. The statements are sent as text with their values inlined.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        let mut batch = Batch::new(BatchType::Logged);
        batch.set_consistency(self.settings.write);
        let mut rows = Vec::with_capacity(keys.len());
        for (key, v) in keys.iter().zip(values) {
            let fields: Vec<usize> = v.iter().map(|(f, _)| *f).collect();
            let cql = inline(&self.settings.update_cql(&fields), &self.update_values(key, v)?);
            batch.append_statement(Statement::new(cql));
            rows.push(Values::Text(Vec::new())); // in the text
        }
        self.send_batch(&batch, rows).await
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let width = self.settings.columns.len();
        if let Some(s) = self.in_txn(key).await? {
            // An UPDATE creates a missing row.
            return s.update(values, true, width);
        }
        let params = self.update_values(key, values)?;
        let p = match (self.session.prepared.as_ref(), values.as_slice()) {
            (Some(p), [(f, _)]) => Some(&p.update_one[*f]),
            _ => None,
        };
        let fields: Vec<usize> = values.iter().map(|(f, _)| *f).collect();
        self.rows(
            p,
            || self.settings.update_cql(&fields),
            self.settings.write,
            params,
        )
        .await?;
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.insert_one(key, values).await
    }

    /// A workload file's statement: the rows a SELECT returned; CQL reports no count of rows
    /// written, so a write returns 0 (a conditional one its `[applied]` row).
    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        let (Some(Some(s)), Some(Some(prepared))) = (
            self.settings.own.get(statement),
            self.session.own.get(statement),
        ) else {
            return Err(OpError::new(
                FailureClass::Other,
                format!("no statement {statement}"),
            ));
        };
        let mut values = Vec::with_capacity(s.binds.len());
        for &i in &s.binds {
            let text = &params[i].1;
            values.push(Some(match s.params[i] {
                Param::Key => CqlValue::Text(text.clone()),
                Param::Column(c) => typed_value(self.settings.types[c], text)?,
            }));
        }
        let result = self
            .session
            .session
            .execute_unpaged(prepared, Values::Typed(values))
            .await
            .map_err(classify)?;
        Ok(match result.into_rows_result() {
            Ok(rows) => rows.rows_num() as u64,
            Err(_) => 0,
        })
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        if self.settings.concurrent_load || self.settings.if_not_exists {
            // Lightweight transactions cannot share a batch across partitions.
            let results = futures::future::join_all(
                records.iter().map(|r| self.insert_one(&r.key, &r.values)),
            )
            .await;
            return results.into_iter().collect();
        }
        let mut batch = Batch::new(BatchType::Unlogged);
        batch.set_consistency(self.settings.write);
        let mut rows = records
            .iter()
            .map(|r| self.insert_values(&r.key, &r.values))
            .collect::<Result<Vec<_>, _>>()?;
        match self.session.prepared.as_ref() {
            Some(p) => {
                for _ in records {
                    batch.append_statement(p.insert.clone());
                }
            }
            None => {
                let cql = self.settings.insert_cql();
                for row in &mut rows {
                    batch.append_statement(Statement::new(inline(&cql, row)));
                    *row = Values::Text(Vec::new()); // in the text
                }
            }
        }
        self.send_batch(&batch, rows).await
    }

    /// A sequence's steps in one transaction: the record read at the first, changed in memory,
    /// written at the commit in one lightweight transaction conditional on every column as read.
    async fn transaction_control(
        &mut self,
        control: crate::TransactionControl,
    ) -> Result<(), OpError> {
        match self.txn.control(control)? {
            Some(s) => self.commit(s).await,
            None => Ok(()),
        }
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        if let Some(s) = self.in_txn(key).await? {
            return s.delete();
        }
        let p = self.session.prepared.as_ref().map(|p| &p.delete);
        self.rows(
            p,
            || self.settings.delete_cql(),
            self.settings.delete,
            Values::Text(vec![key]),
        )
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::OptionValue;
    use settings::ConsistencyLevel;

    /// A workload file's `consistency` is checked against the workload crate's list of levels;
    /// the binding maps the same words.
    #[test]
    fn a_statements_consistency_words_are_the_bindings() {
        assert_eq!(
            ConsistencyLevel::CHOICES,
            scalebench_workload::statement::CQL_CONSISTENCY_LEVELS
        );
    }
}
