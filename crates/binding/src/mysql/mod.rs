//! `mysql://user:password@host:port/database`: MySQL and MariaDB through mysql_async.
//!
//! Schema as YCSB's JDBC binding. Knobs: prepared statements (binary protocol) or text statements,
//! batched load as one multi-row INSERT. Each slot has its own connection; a lost connection is
//! re-established by the next operation, whose latency includes the reconnect.
//!
//! `mysql://user:password@h1:p1,h2:p2,h3:p3/database` names several servers (the masters of a Galera
//! cluster): slot k connects to host k mod N, so the load spreads over every master, and stays with
//! it (a host that goes away fails its slots' operations as unavailable rather than moving them).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Row, Value};

mod tls;
use scalebench_workload::{FailureClass, FieldSet, Fields, Modification, OpError, Operation};

use crate::info::BindingInfo;
use crate::sql::{dialect_statements, literal, Dialect, DialectStatement, Statements};
use crate::{Binding, BindingConfig, BindingError, BindingFactory, TransactionControl};

pub const INFO: BindingInfo = BindingInfo {
    name: "mysql",
    schemes: &["mysql", "mariadb"],
    summary: "MySQL / MariaDB (mysql_async); YCSB JDBC schema, InnoDB",
    url_example: "mysql://user:password@127.0.0.1:3306/ycsb (or h1:p1,h2:p2,... for several masters)",
    options: Options::SET,
    reads: "slot k reads and writes through host k mod N (several Galera nodes: each slot its own node). A Galera node applies other nodes' writes asynchronously after certification; wsrep_sync_wait = 1 makes each read wait until the node applied every write committed before it",
    pipelining: crate::info::Pipelining::Not("MySQL's protocol answers one query per connection at a time"),
    replays_statements: &["general-log"],
    ..BindingInfo::SQL_DATABASE
};

binding_options! {
    pub struct Options {
        prepared: bool = "true" => "server-side prepared statements (binary protocol); false sends text statements with literal values",
        engine: String = "InnoDB" => "storage engine of the table created by --create-schema",
        wsrep_sync_wait: String = "server" => "SET SESSION wsrep_sync_wait on each connection (MariaDB Galera): 1 makes reads wait until the node applied every write committed before them (a bitmask 0-15 of the statements that wait; server: leave the server's setting)",
    }
}

pub struct MysqlFactory {
    shared: std::sync::Arc<Shared>,
}

struct Shared {
    /// One per host of the URL; the schema is prepared through the first.
    opts: Vec<Opts>,
    url: String,
    statements: Statements,
    /// A workload file's statements, by named operation.
    own: Vec<Option<DialectStatement>>,
    /// A workload file's increments: the columns each adds to, and its UPDATE.
    increments: Vec<(Vec<usize>, String)>,
    /// A workload file's secondary indexes (made with the table).
    indexes: std::sync::Arc<[scalebench_workload::index::Index]>,
    prepared: bool,
    connect_timeout: std::time::Duration,
    /// The URL's `ssl-mode` and certificates, for every host.
    tls: tls::MysqlTls,
}

impl MysqlFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        let (mut u, tls) = tls::MysqlTls::from_url(config.url.url(), &url)?;
        if u.scheme() == "mariadb" {
            let _ = u.set_scheme("mysql");
        }
        let base = Opts::from_url(u.as_str())
            .map_err(|e| BindingError::Config(format!("invalid database URL '{url}': {e}")))?;
        let options = Options::read(INFO.name, &config.options)?;
        let init: Vec<String> = match options.wsrep_sync_wait.as_str() {
            "server" => Vec::new(),
            v => match v.parse::<u8>() {
                Ok(mask) if mask <= 15 => vec![format!("SET SESSION wsrep_sync_wait = {mask}")],
                _ => return Err(BindingError::Config(format!("invalid value '{v}' for property 'mysql.wsrep_sync_wait': expected server or a number from 0 to 15"))),
            },
        };
        let opts: Vec<Opts> = config
            .url
            .hosts(3306)
            .iter()
            .map(|h| {
                let (host, port) = h.rsplit_once(':').expect("host:port");
                // Report rows matched, not rows changed, so an update that writes the same value
                // is not "not found".
                OptsBuilder::from_opts(base.clone())
                    .ip_or_hostname(host.trim_matches(['[', ']']))
                    .tcp_port(port.parse().expect("a port, checked by DbUrl"))
                    .client_found_rows(true)
                    .init(init.clone())
                    .into()
            })
            .collect();
        let engine = options.engine;
        if !engine.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(BindingError::Config(format!("invalid value '{engine}' for property 'mysql.engine': expected a storage engine name")));
        }
        let shared = Shared {
            statements: Statements::new(&config.schema.table, &config.schema, Dialect::MySql),
            increments: crate::sql::increments(&config.schema, Dialect::MySql),
            own: dialect_statements(&config.schema, Dialect::MySql),
            indexes: config.schema.indexes.clone(),
            prepared: options.prepared,
            opts,
            url,
            connect_timeout: config.connect_timeout,
            tls,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        // A replay of a log's statements needs none of the workload's table.
        if config.benchmark_table {
            runtime.block_on(config.cancel.unless_cancelled(shared.prepare_schema(
                config.drop_schema,
                config.create_schema,
                &engine,
            )))?;
        }
        Ok(MysqlFactory {
            shared: std::sync::Arc::new(shared),
        })
    }
}

impl Shared {
    /// A connection to the host of `slot` (slot mod the number of hosts).
    async fn conn(&self, slot: usize) -> Result<Conn, BindingError> {
        let opts = self.opts[slot % self.opts.len()].clone();
        crate::connect_within(self.connect_timeout, &self.url, self.tls.connect(opts)).await
    }

    /// A connection whose reads see every write committed before them anywhere in the cluster: on
    /// a Galera node (`wsrep_on`) with `wsrep_sync_wait = 1`, as a node applies other nodes' writes
    /// after their commit; any other server's reads already do (MySQL has no `wsrep_on`).
    async fn conn_reading_latest(&self, slot: usize) -> Result<Conn, BindingError> {
        let mut c = self.conn(slot).await?;
        let galera = c
            .query_first::<i64, _>("SELECT @@wsrep_on")
            .await
            .ok()
            .flatten()
            == Some(1);
        if galera {
            c.query_drop("SET SESSION wsrep_sync_wait = 1")
                .await
                .map_err(|e| BindingError::Connect {
                    url: self.url.clone(),
                    reason: format!("SET SESSION wsrep_sync_wait = 1: {e}"),
                })?;
        }
        Ok(c)
    }

    async fn prepare_schema(
        &self,
        drop: bool,
        create: bool,
        engine: &str,
    ) -> Result<(), BindingError> {
        let mut c = self.conn(0).await?;
        let st = &self.statements;
        let err = |what: &str, e: mysql_async::Error| {
            BindingError::Schema(format!("{what} table '{}' on {}: {e}", st.table, self.url))
        };
        if drop {
            c.query_drop(st.drop_table())
                .await
                .map_err(|e| err("cannot drop", e))?;
        }
        if create {
            c.query_drop(st.create_table(&format!(" ENGINE={engine}")))
                .await
                .map_err(|e| err("cannot create", e))?;
            for index in st.create_indexes(&self.indexes) {
                c.query_drop(index).await.map_err(|e| err("cannot index", e))?;
            }
        }
        let n: Option<u64> = c
            .exec_first("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", (st.table.clone(),))
            .await
            .map_err(|e| err("cannot look up", e))?;
        if n.unwrap_or(0) == 0 {
            return Err(BindingError::Schema(format!(
                "table '{}' does not exist on {}: create it with --create-schema (e.g. scalebench load --create-schema)",
                st.table, self.url
            )));
        }
        let _ = c.disconnect().await;
        Ok(())
    }
}

impl BindingFactory for MysqlFactory {
    type Binding = MysqlBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, worker: usize) -> Result<MysqlBinding, BindingError> {
        let mut conn = self.shared.conn(worker).await?;
        // The file's own statements, checked once per connection (bad SQL is bad input).
        for s in self.shared.own.iter().flatten() {
            conn.prep(s.text.as_str()).await.map_err(|e| {
                BindingError::Config(format!("operation '{}': its sql does not prepare: {e}", s.name))
            })?;
        }
        Ok(MysqlBinding {
            conn: Some(conn),
            slot: worker,
            shared: self.shared.clone(),
            reads_latest: false,
            in_transaction: false,
        })
    }

    async fn connect_to_verify(&self, worker: usize) -> Result<MysqlBinding, BindingError> {
        Ok(MysqlBinding {
            conn: Some(self.shared.conn_reading_latest(worker).await?),
            slot: worker,
            shared: self.shared.clone(),
            reads_latest: true,
            in_transaction: false,
        })
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

pub struct MysqlBinding {
    /// `None` after the connection broke; the next operation reconnects.
    conn: Option<Conn>,
    /// Chooses the host (see the module docs).
    slot: usize,
    shared: std::sync::Arc<Shared>,
    /// A connection of the verify pass: reconnects read the latest too.
    reads_latest: bool,
    /// Between a transaction's BEGIN and its end: a connection lost then is not replaced (the
    /// steps after it would run outside the transaction).
    in_transaction: bool,
}

/// The connection broke inside a transaction: the server rolled it back.
fn lost_in_transaction() -> OpError {
    OpError::new(
        FailureClass::Unavailable,
        "the connection was lost inside a transaction (the server rolled it back)",
    )
}

fn classify(e: mysql_async::Error) -> OpError {
    let class = match &e {
        mysql_async::Error::Server(s) => match s.code {
            1062 | 1213 | 1205 | 1180 | 1181 => FailureClass::Conflict,
            // 1047: a Galera node outside the primary component ("WSREP has not yet prepared
            // node for application use").
            1040 | 1047 | 1053 | 1290 | 1836 | 1927 => FailureClass::Unavailable,
            3024 | 1969 => FailureClass::Timeout,
            _ => FailureClass::Other,
        },
        mysql_async::Error::Io(_) => FailureClass::Unavailable,
        mysql_async::Error::Driver(d) if d.to_string().contains("closed") => {
            FailureClass::Unavailable
        }
        _ => FailureClass::Other,
    };
    OpError::new(class, e.to_string())
}

fn broken(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Io(_)) || matches!(e, mysql_async::Error::Driver(_))
}

fn not_found(key: &str) -> OpError {
    OpError::new(FailureClass::NotFound, format!("no record {key}"))
}

impl MysqlBinding {
    async fn conn(&mut self) -> Result<&mut Conn, OpError> {
        if self.conn.is_none() && self.in_transaction {
            return Err(lost_in_transaction());
        }
        if self.conn.is_none() {
            let connected = if self.reads_latest {
                self.shared.conn_reading_latest(self.slot).await
            } else {
                self.shared.conn(self.slot).await
            };
            let c = connected.map_err(|e| {
                // This host refuses connections: the next attempt tries the next one.
                self.slot += 1;
                OpError::new(FailureClass::Unavailable, e.to_string())
            })?;
            self.conn = Some(c);
        }
        Ok(self.conn.as_mut().expect("just connected"))
    }

    /// A broken connection is dropped and the next operation connects to the next host (as
    /// MariaDB's connectors fail over): a Galera node that died, or left the primary component,
    /// would otherwise take this worker's every request with it.
    fn check<T>(&mut self, r: Result<T, mysql_async::Error>) -> Result<T, OpError> {
        r.map_err(|e| {
            let not_primary = matches!(&e, mysql_async::Error::Server(s) if s.code == 1047);
            if broken(&e) || not_primary {
                self.conn = None;
                self.slot += 1;
            }
            classify(e)
        })
    }

    /// Rows of a statement: prepared (binary protocol) or as text with the parameters inlined.
    async fn rows(&mut self, sql: &str, params: Vec<Value>) -> Result<Vec<Row>, OpError> {
        let prepared = self.shared.prepared;
        let text = (!prepared).then(|| inline(sql, &params));
        let c = self.conn().await?;
        let r = match text {
            None => c.exec(sql, Params::Positional(params)).await,
            Some(t) => c.query(t).await,
        };
        self.check(r)
    }

    /// Runs a statement and returns the rows it matched.
    async fn execute(&mut self, sql: &str, params: Vec<Value>) -> Result<u64, OpError> {
        let prepared = self.shared.prepared;
        let text = (!prepared).then(|| inline(sql, &params));
        let c = self.conn().await?;
        let r = match text {
            None => c.exec_drop(sql, Params::Positional(params)).await,
            Some(t) => c.query_drop(t).await,
        };
        let affected = c.affected_rows();
        self.check(r)?;
        Ok(affected)
    }

    fn columns_of(&self, fields: FieldSet) -> std::ops::Range<usize> {
        fields.indices(self.shared.statements.columns.len())
    }
}

/// A row of `key, columns...` as the key and its fields.
fn keyed(row: &mysql_async::Row, cols: std::ops::Range<usize>) -> (String, Fields) {
    let text = |i: usize| row.get::<Option<String>, _>(i).flatten().unwrap_or_default();
    let values = cols.enumerate().map(|(i, c)| (c, text(i + 1))).collect();
    (text(0), values)
}

/// Replaces each `?` by the next parameter as a literal (values are plain ASCII, quotes doubled anyway).
/// The rows a statement returned, or for one that returns none the rows it changed.
async fn counted<P: mysql_async::prelude::Protocol>(
    mut result: mysql_async::QueryResult<'_, '_, P>,
) -> Result<u64, mysql_async::Error> {
    let returns_rows = result.columns().is_some_and(|c| !c.is_empty());
    let mut rows = 0u64;
    result.for_each(|_| rows += 1).await?;
    let affected = result.affected_rows();
    Ok(if returns_rows { rows } else { affected })
}

fn inline(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + params.len() * 16);
    let mut it = params.iter();
    for ch in sql.chars() {
        if ch == '?' {
            match it.next() {
                Some(Value::Bytes(b)) => out.push_str(&literal(&String::from_utf8_lossy(b))),
                Some(Value::Int(i)) => out.push_str(&i.to_string()),
                Some(Value::UInt(i)) => out.push_str(&i.to_string()),
                Some(v) => out.push_str(&v.as_sql(false)),
                None => out.push('?'),
            }
        } else {
            out.push(ch);
        }
    }
    out
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn full_row(values: &Fields, n: usize) -> Vec<Value> {
    let mut row = vec![text(""); n];
    for (f, v) in values {
        row[*f] = text(v);
    }
    row
}

impl Binding for MysqlBinding {
    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        let sql = match fields {
            FieldSet::All => self.shared.statements.read_all.clone(),
            FieldSet::One(i) => self.shared.statements.read_one[i].clone(),
        };
        let mut rows = self.rows(&sql, vec![text(key)]).await?;
        let row = rows.pop().ok_or_else(|| not_found(key))?;
        for (i, c) in self.columns_of(fields).enumerate() {
            out.push((
                c,
                row.get::<Option<String>, _>(i)
                    .flatten()
                    .unwrap_or_default(),
            ));
        }
        Ok(())
    }

    /// mysql_async keeps an answer not yet read only once its header came: a request dropped
    /// before that leaves its answer on the wire, where the next statement would take it for its
    /// own (an update "acknowledged" by an earlier statement's OK, seen as lost writes on Galera).
    fn abandoned(&mut self) {
        // Closing the connection rolls back a transaction it had open.
        self.conn = None;
        self.in_transaction = false;
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let sql = match fields {
            FieldSet::All => self.shared.statements.scan_all.clone(),
            FieldSet::One(i) => self.shared.statements.scan_one[i].clone(),
        };
        let cols = self.columns_of(fields);
        for row in self
            .rows(&sql, vec![text(start_key), Value::UInt(count as u64)])
            .await?
        {
            out.push(keyed(&row, cols.clone()));
        }
        Ok(())
    }

    /// One `SELECT ... WHERE key IN (?, ...)` (the driver caches it prepared per text).
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let sql = self.shared.statements.select_keys(fields, keys.len());
        let cols = self.columns_of(fields);
        for row in self.rows(&sql, keys.iter().map(|k| text(k)).collect()).await? {
            out.push(keyed(&row, cols.clone()));
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let st = &self.shared.statements;
        let sql = match values.as_slice() {
            [(f, _)] => st.update_one[*f].clone(),
            _ => st.update_fields(&values.iter().map(|(f, _)| *f).collect::<Vec<_>>()),
        };
        let params = values
            .iter()
            .map(|(_, v)| text(v))
            .chain(std::iter::once(text(key)))
            .collect();
        if self.execute(&sql, params).await? == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let n = self.shared.statements.columns.len();
        let sql = self.shared.statements.insert.clone();
        let params = std::iter::once(text(key))
            .chain(full_row(values, n))
            .collect();
        self.execute(&sql, params).await?;
        Ok(())
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        let n = self.shared.statements.columns.len();
        let sql = self.shared.statements.multi_row_insert(records.len());
        let params = records
            .iter()
            .flat_map(|r| std::iter::once(text(&r.key)).chain(full_row(&r.values, n)))
            .collect();
        self.execute(&sql, params).await?;
        Ok(())
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        let sql = self.shared.statements.delete.clone();
        if self.execute(&sql, vec![text(key)]).await? == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    /// The updates in one transaction.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        crate::update_in_transaction(self, keys, values).await
    }

    async fn transaction_control(&mut self, control: TransactionControl) -> Result<(), OpError> {
        let sql = match control {
            TransactionControl::Begin => "BEGIN",
            TransactionControl::Commit => "COMMIT",
            TransactionControl::Rollback => "ROLLBACK",
        };
        if control != TransactionControl::Begin {
            self.in_transaction = false;
            // A new connection has no transaction to end: the lost one's is rolled back.
            if self.conn.is_none() {
                return match control {
                    TransactionControl::Rollback => Ok(()),
                    _ => Err(lost_in_transaction()),
                };
            }
        }
        let c = self.conn().await?;
        let r = c.query_drop(sql).await;
        self.in_transaction = control == TransactionControl::Begin && r.is_ok();
        self.check(r)
    }

    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        let shared = self.shared.clone();
        let sql = crate::sql::increment_of(&shared.increments, changes)?;
        let params = changes
            .iter()
            .map(|m| text(&m.change.amount()))
            .chain(std::iter::once(text(key)))
            .collect();
        if self.execute(sql, params).await? == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        let shared = self.shared.clone();
        let Some(Some(s)) = shared.own.get(statement) else {
            return Err(OpError::new(FailureClass::Other, format!("no statement {statement}")));
        };
        let values: Vec<Value> = s.values(params).into_iter().map(|v| text(v)).collect();
        let inlined = (!shared.prepared).then(|| inline(&s.text, &values));
        let c = self.conn().await?;
        let r = match inlined {
            None => match c.exec_iter(s.text.as_str(), Params::Positional(values)).await {
                Ok(result) => counted(result).await,
                Err(e) => Err(e),
            },
            Some(t) => match c.query_iter(t).await {
                Ok(result) => counted(result).await,
                Err(e) => Err(e),
            },
        };
        self.check(r)
    }

    /// A statement of a general log as its client sent it (a prepared one's values are in the
    /// log's text already), by the text protocol.
    async fn statement_text(&mut self, sql: &str, params: &Fields) -> Result<u64, OpError> {
        let values: Vec<Value> = params.iter().map(|(_, v)| text(v)).collect();
        let sql = inline(sql, &values);
        let c = self.conn().await?;
        let r = match c.query_iter(sql).await {
            Ok(result) => counted(result).await,
            Err(e) => Err(e),
        };
        self.check(r)
    }

    async fn cleanup(&mut self) -> Result<(), BindingError> {
        if let Some(c) = self.conn.take() {
            let _ = c.disconnect().await;
        }
        Ok(())
    }
}
