//! `postgres://user:password@host:port/database`: PostgreSQL through tokio-postgres.
//!
//! Schema as YCSB's JDBC binding. Knobs: prepared statements on or off, batched load as multi-row
//! INSERT or COPY, `synchronous_commit` per session. Each slot has its own connection (YCSB's model);
//! a lost connection is re-established by the next operation, whose latency includes the reconnect.
//! When its server refuses, the slot moves on: a replica's reader to the other replicas, then the
//! primary (libpq's `target_session_attrs=prefer-standby`); one of several masters to the others.
//!
//! `postgres://user:password@h1:p1,h2:p2/database` names several masters (a Bucardo multi-master
//! deployment): slot k writes and reads through host k mod N, so the load spreads over every master.
//! The schema is prepared through the first host; the table must exist on each (it is checked).
//!
//! With `?target_session_attrs=read-write` the hosts are libpq's failover list instead: every
//! connection goes to whichever of them accepts writes now (a Patroni cluster's primary, also after
//! a failover; a reconnect looks again).
//!
//! What the URL leaves out (password, host, port, user, database) comes from libpq's environment
//! and password file ([`credentials`]); libpq's URL forms (`postgres:///ycsb?host=/run/postgresql`,
//! a Unix socket) are read by the driver's own parser.

mod connection;
mod credentials;
mod schema;

use std::collections::HashMap;

use futures::SinkExt;
use scalebench_workload::{FailureClass, FieldSet, Fields, Modification, OpError, Operation};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, SimpleQueryMessage, Statement};

use crate::info::{BindingInfo, HostList};
use crate::pipeline::ConnectionGroups;
use crate::sql::{dialect_statements, literal, Dialect, DialectStatement, Statements};
use crate::{Binding, BindingConfig, BindingError, BindingFactory, TransactionControl};

mod tls;

pub const INFO: BindingInfo = BindingInfo {
    name: "postgres",
    schemes: &["postgres", "postgresql"],
    summary: "PostgreSQL (tokio-postgres); YCSB JDBC schema",
    url_example: "postgres://user:password@127.0.0.1:5432/ycsb (or h1:p1,h2:p2,... for several masters)",
    options: Options::SET,
    table_sql: Some(table_sql),
    reads: "reads and scans go to the URL's server, or with read_hosts to streaming replicas (worker i to replica i mod n; when its replica refuses, the next, then the primary; a deployment's reads_on_every_server lists the primary first among them, so reads spread over every server). An asynchronous replica lags behind the primary; with the primary's synchronous_commit = remote_apply (server setting, or per session with synchronous_commit) a commit returns once the synchronous replicas show it. Several masters (Bucardo): each slot reads its own master (the next when it refuses), which other masters' writes reach asynchronously",
    pipelining: crate::info::Pipelining::OutsideTransactions,
    replays_statements: &["postgres-csvlog"],
    ..BindingInfo::SQL_DATABASE
};

/// The table `--create-schema` creates, for a deployment that creates it on every master itself.
fn table_sql(schema: &crate::Schema) -> String {
    Statements::new(&schema.table, schema, Dialect::Postgres).create_table("")
}

binding_options! {
    pub struct Options {
        prepared: bool = "true" => "server-side prepared statements; false sends each statement as text with literal values",
        batch_mode: BatchMode = "multirow" => "how the load phase writes a batch (--batch-size > 1): one INSERT of many rows (multirow) or COPY FROM STDIN (copy)",
        synchronous_commit: SynchronousCommit = "server" => "SET synchronous_commit for each session (server: leave the server's setting)",
        read_hosts: HostList = "" => "host:port,... of read replicas: reads and scans go there (worker i to replica i mod n), writes to the URL's server",
    }
}

option_choice! {
    pub enum BatchMode {
        MultiRow = "multirow",
        Copy = "copy",
    }
}

option_choice! {
    pub enum SynchronousCommit {
        Server = "server",
        On = "on",
        Off = "off",
        Local = "local",
        RemoteWrite = "remote_write",
        RemoteApply = "remote_apply",
    }
}

/// What every connection of one binding configuration shares.
pub struct PostgresFactory {
    shared: std::sync::Arc<Shared>,
    /// `--pipeline`: the clients slots share (tokio-postgres pipelines the queries sent on one
    /// client at once), to the masters and to the replicas.
    groups: ConnectionGroups<std::sync::Arc<Client>>,
    reader_groups: ConnectionGroups<std::sync::Arc<Client>>,
}

struct Shared {
    /// One per host of the URL (several masters); the schema is prepared through the first.
    masters: Vec<Replica>,
    url: String,
    statements: Statements,
    /// A workload file's secondary indexes (made with the table).
    indexes: std::sync::Arc<[scalebench_workload::index::Index]>,
    /// A workload file's statements, by named operation (always prepared).
    own: Vec<Option<DialectStatement>>,
    /// A workload file's increments: the columns each adds to, and its UPDATE (always prepared).
    increments: Vec<(Vec<usize>, String)>,
    prepared: bool,
    batch_mode: BatchMode,
    synchronous_commit: Option<&'static str>,
    /// Read replicas (`read_hosts`): same user and database as the URL, another host and port.
    read_hosts: Vec<Replica>,
    /// Why a password file was ignored, added to a connection error.
    password_note: Option<String>,
    /// libpq's `sslmode` and certificates, for every server of the URL and `read_hosts`.
    tls: tls::PgTls,
}

struct Replica {
    /// `host:port`, for messages.
    address: String,
    config: tokio_postgres::Config,
    /// Why a password file was not read (its mode), for a connection error.
    password_note: Option<String>,
}

impl Replica {
    /// A server to connect to, what its URL leaves out taken from libpq's environment variables
    /// and password file.
    fn new(address: String, mut config: tokio_postgres::Config) -> Self {
        let password_note = credentials::complete(&mut config);
        Replica {
            address,
            config,
            password_note,
        }
    }
}

/// The servers of `list` after worker `worker`'s own (`worker mod n`), in turn.
fn after(list: &[Replica], worker: usize) -> Vec<tokio_postgres::Config> {
    let n = list.len();
    (1..n)
        .map(|k| list[(worker + k) % n].config.clone())
        .collect()
}

/// `application_name` scalebench unless the URL names one, as libpq takes it.
fn named_as_scalebench(c: &mut tokio_postgres::Config) {
    if c.get_application_name().is_none() {
        c.application_name("scalebench");
    }
}

impl PostgresFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        // The URL names the user, password, database and parameters; each server gets a copy of it
        // with its own host and port (a Config given several hosts would only fail over).
        let connect_timeout = config.connect_timeout;
        let (without_tls, tls) = tls::PgTls::from_url(config.url.url(), &url)?;
        let server = |address: &str| -> Option<Replica> {
            let (h, port) = address.rsplit_once(':')?;
            let mut u = credentials::without_host_parameters(&without_tls);
            u.set_host(Some(h)).ok()?;
            u.set_port(Some(port.parse().ok()?)).ok()?;
            let mut c: tokio_postgres::Config = u.as_str().parse().ok()?;
            c.connect_timeout(connect_timeout);
            named_as_scalebench(&mut c);
            c.ssl_mode(tls.mode);
            Some(Replica::new(address.to_string(), c))
        };
        // Parsed once as a whole, for the driver's own message on a bad URL.
        let mut whole = without_tls
            .as_str()
            .parse::<tokio_postgres::Config>()
            .map_err(|e| BindingError::Config(format!("invalid database URL '{url}': {e}")))?;
        let hosts = config.url.hosts(5432);
        let masters = if hosts.len() > 1
            && whole.get_target_session_attrs()
                == tokio_postgres::config::TargetSessionAttrs::ReadWrite
        {
            // One server: the writable one among the hosts, found at each connect. The URL's
            // authority held the first; the others join it, each with its port.
            if config.url.url().port().is_none() {
                whole.port(5432);
            }
            for address in &hosts[1..] {
                let (h, port) = address
                    .rsplit_once(':')
                    .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
                    .ok_or_else(|| {
                        BindingError::Config(format!(
                            "invalid database URL '{url}': bad host '{address}'"
                        ))
                    })?;
                whole.host(h).port(port);
            }
            whole.connect_timeout(connect_timeout);
            named_as_scalebench(&mut whole);
            whole.ssl_mode(tls.mode);
            vec![Replica::new(hosts.join(","), whole)]
        } else if hosts.len() == 1 {
            // One server, as the driver reads the URL: libpq's forms without a host
            // (`postgres:///db?host=/run/postgresql`, `?host=..&port=..`) and Unix sockets too.
            whole.connect_timeout(connect_timeout);
            named_as_scalebench(&mut whole);
            whole.ssl_mode(tls.mode);
            let mut replica = Replica::new(String::new(), whole);
            replica.address = credentials::address(&replica.config);
            vec![replica]
        } else {
            hosts
                .iter()
                .map(|address| {
                    server(address).ok_or_else(|| {
                        BindingError::Config(format!(
                            "invalid database URL '{url}': bad host '{address}'"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        let options = Options::read(INFO.name, &config.options)?;
        let read_hosts = options
            .read_hosts
            .0
            .iter()
            .map(|host| {
                server(&host.to_string()).ok_or_else(|| {
                    BindingError::Config(format!(
                        "invalid value '{host}' in option 'postgres.read_hosts': expected host:port"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let password_note = masters
            .iter()
            .chain(&read_hosts)
            .find_map(|r| r.password_note.clone());
        let shared = Shared {
            password_note,
            read_hosts,
            statements: Statements::new(&config.schema.table, &config.schema, Dialect::Postgres),
            own: dialect_statements(&config.schema, Dialect::Postgres),
            increments: crate::sql::increments(&config.schema, Dialect::Postgres),
            indexes: config.schema.indexes.clone(),
            // A replay of a log's statements prepares none of the workload's table.
            prepared: options.prepared && config.benchmark_table,
            batch_mode: options.batch_mode,
            synchronous_commit: (options.synchronous_commit != SynchronousCommit::Server)
                .then_some(options.synchronous_commit.word()),
            masters,
            url,
            tls,
        };
        let factory = PostgresFactory {
            shared: std::sync::Arc::new(shared),
            groups: ConnectionGroups::new(config.pipeline),
            reader_groups: ConnectionGroups::new(config.pipeline),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        if config.benchmark_table {
            runtime.block_on(
                config.cancel.unless_cancelled(
                    factory
                        .shared
                        .prepare_schema(config.drop_schema, config.create_schema),
                ),
            )?;
        }
        Ok(factory)
    }
}


impl PostgresFactory {
    /// A binding on `target`, through the client of its group of `--pipeline` slots when
    /// `groups` (else a client of its own).
    async fn connect_to(
        &self,
        target: &tokio_postgres::Config,
        slot_in: Option<(usize, &ConnectionGroups<std::sync::Arc<Client>>)>,
    ) -> Result<PostgresBinding, BindingError> {
        let client = match slot_in {
            Some((slot, groups)) => {
                let made = || async { self.shared.client_at(target).await.map(std::sync::Arc::new) };
                groups.connect(slot, made).await?
            }
            None => std::sync::Arc::new(self.shared.client_at(target).await?),
        };
        let mut b = PostgresBinding {
            shared: self.shared.clone(),
            target: target.clone(),
            fallbacks: Vec::new(),
            client,
            prepared: None,
            own: Vec::new(),
            batch_statements: HashMap::new(),
            increment_statements: HashMap::new(),
            multi_get_statements: HashMap::new(),
            in_transaction: false,
            abandoned_transaction: false,
            reader: None,
        };
        b.prepare_own().await.map_err(|(name, e)| {
            BindingError::Config(format!("operation '{name}': its sql does not prepare: {}", e.message))
        })?;
        if self.shared.prepared {
            b.prepare().await.map_err(|e| {
                BindingError::Other(format!("cannot prepare statements: {}", e.message))
            })?;
        }
        Ok(b)
    }
}

impl BindingFactory for PostgresFactory {
    type Binding = PostgresBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, worker: usize) -> Result<PostgresBinding, BindingError> {
        // A group of --pipeline slots shares one server: group g's is g mod n.
        let group = self.groups.group_of(worker);
        let masters = &self.shared.masters;
        let master = &masters[group % masters.len()].config;
        let mut b = self.connect_to(master, Some((worker, &self.groups))).await?;
        b.fallbacks = after(masters, group);
        let replicas = &self.shared.read_hosts;
        if !replicas.is_empty() {
            let mut reader = self
                .connect_to(
                    &replicas[group % replicas.len()].config,
                    Some((worker, &self.reader_groups)),
                )
                .await?;
            reader.fallbacks = after(replicas, group);
            reader.fallbacks.push(master.clone());
            b.reader = Some(Box::new(reader));
        }
        Ok(b)
    }

    /// The primary's connection alone: a replica of `read_hosts` may not have every acknowledged
    /// write yet.
    async fn connect_to_verify(&self, worker: usize) -> Result<PostgresBinding, BindingError> {
        let masters = &self.shared.masters;
        self.connect_to(&masters[worker % masters.len()].config, None)
            .await
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

struct Prepared {
    read_all: Statement,
    read_one: Vec<Statement>,
    scan_all: Statement,
    scan_one: Vec<Statement>,
    update_one: Vec<Statement>,
    update_all: Statement,
    insert: Statement,
    delete: Statement,
}

pub struct PostgresBinding {
    shared: std::sync::Arc<Shared>,
    /// The server this connection goes to (reconnects go there first).
    target: tokio_postgres::Config,
    /// The servers a reconnect tries, in turn, when `target` refuses: a replica's reader the other
    /// replicas then the primary (libpq's `target_session_attrs=prefer-standby`), one of several
    /// masters the other masters. The one that answers becomes `target`.
    fallbacks: Vec<tokio_postgres::Config>,
    /// Its own, or shared by a group of `--pipeline` slots (no transaction then: see
    /// [`crate::info::Pipelining::OutsideTransactions`]).
    client: std::sync::Arc<Client>,
    /// With `read_hosts`: the connection to this worker's replica, which serves reads and scans.
    reader: Option<Box<PostgresBinding>>,
    prepared: Option<Prepared>,
    /// The workload file's statements, prepared on this connection.
    own: Vec<Option<Statement>>,
    batch_statements: HashMap<usize, Statement>,
    /// The increments prepared on this connection, by their UPDATE.
    increment_statements: HashMap<String, Statement>,
    /// Multi-gets prepared on this connection, by their SELECT.
    multi_get_statements: HashMap<String, Statement>,
    /// Between a transaction's BEGIN and its end: a closed connection is not replaced (the steps
    /// after it would run outside the transaction).
    in_transaction: bool,
    /// A transaction's step timed out and was dropped: the connection's transaction is still
    /// open, rolled back before the next operation.
    abandoned_transaction: bool,
}

/// The connection closed inside a transaction: the server rolled it back.
fn lost_in_transaction() -> OpError {
    OpError::new(
        FailureClass::Unavailable,
        "the connection closed inside a transaction (the server rolled it back)",
    )
}

fn classify(e: tokio_postgres::Error) -> OpError {
    let class = match e.code() {
        Some(c)
            if *c == SqlState::UNIQUE_VIOLATION
                || *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::LOCK_NOT_AVAILABLE =>
        {
            FailureClass::Conflict
        }
        Some(c) if *c == SqlState::QUERY_CANCELED => FailureClass::Timeout,
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || *c == SqlState::TOO_MANY_CONNECTIONS
                || *c == SqlState::READ_ONLY_SQL_TRANSACTION =>
        {
            FailureClass::Unavailable
        }
        Some(c) if *c == SqlState::UNDEFINED_TABLE => FailureClass::Other,
        Some(_) => FailureClass::Other,
        None if e.is_closed() => FailureClass::Unavailable,
        None => {
            let io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
            match io.map(|io| io.kind()) {
                Some(std::io::ErrorKind::TimedOut) => FailureClass::Timeout,
                Some(_) => FailureClass::Unavailable,
                None => FailureClass::Other,
            }
        }
    };
    OpError::new(class, describe(&e))
}

/// The server's own message ("relation ... does not exist") rather than the driver's bare "db error";
/// otherwise the driver's message with its cause ("error connecting to server: Connection refused").
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.to_string(),
        None => crate::with_causes(e),
    }
}

fn not_found(key: &str) -> OpError {
    OpError::new(FailureClass::NotFound, format!("no record {key}"))
}

impl PostgresBinding {
    fn factory(&self) -> &Shared {
        &self.shared
    }

    async fn prepare(&mut self) -> Result<(), OpError> {
        let st = self.factory().statements.clone();
        let c = &self.client;
        let one = |v: &Vec<String>| {
            let v = v.clone();
            async move {
                let mut out = Vec::with_capacity(v.len());
                for s in &v {
                    out.push(c.prepare(s).await.map_err(classify)?);
                }
                Ok::<_, OpError>(out)
            }
        };
        let read_one = one(&st.read_one).await?;
        let scan_one = one(&st.scan_one).await?;
        let update_one = one(&st.update_one).await?;
        self.prepared = Some(Prepared {
            read_all: c.prepare(&st.read_all).await.map_err(classify)?,
            read_one,
            scan_all: c.prepare(&st.scan_all).await.map_err(classify)?,
            scan_one,
            update_one,
            update_all: c.prepare(&st.update_all).await.map_err(classify)?,
            insert: c.prepare(&st.insert).await.map_err(classify)?,
            delete: c.prepare(&st.delete).await.map_err(classify)?,
        });
        self.batch_statements.clear();
        self.increment_statements.clear();
        self.multi_get_statements.clear();
        Ok(())
    }

    /// Prepares the workload file's statements on this connection; a failure names its operation.
    async fn prepare_own(&mut self) -> Result<(), (String, OpError)> {
        let shared = self.shared.clone();
        let mut own = Vec::with_capacity(shared.own.len());
        for s in &shared.own {
            own.push(match s {
                Some(s) => Some(
                    self.client
                        .prepare(&s.text)
                        .await
                        .map_err(|e| (s.name.clone(), classify(e)))?,
                ),
                None => None,
            });
        }
        self.own = own;
        Ok(())
    }

    /// Reconnects if the connection was lost; the time it takes is part of the operation's latency.
    async fn ensure_connected(&mut self) -> Result<(), OpError> {
        if std::mem::take(&mut self.abandoned_transaction) {
            self.in_transaction = false;
            if !self.client.is_closed() {
                self.client.batch_execute("ROLLBACK").await.map_err(classify)?;
            }
        }
        if !self.client.is_closed() {
            return Ok(());
        }
        if self.in_transaction {
            return Err(lost_in_transaction());
        }
        let client = match self.factory().client_at(&self.target).await {
            Ok(client) => client,
            Err(refused) => {
                // Its server is down or gone: the next that answers serves this slot from now on.
                let mut found = None;
                for (i, other) in self.fallbacks.iter().enumerate() {
                    if let Ok(client) = self.factory().client_at(other).await {
                        found = Some((i, client));
                        break;
                    }
                }
                let Some((i, client)) = found else {
                    return Err(OpError::new(FailureClass::Unavailable, refused.to_string()));
                };
                let moved_to = self.fallbacks.remove(i);
                let left = std::mem::replace(&mut self.target, moved_to);
                self.fallbacks.push(left);
                client
            }
        };
        self.client = std::sync::Arc::new(client);
        if self.factory().prepared {
            self.prepare().await?;
        }
        self.prepare_own().await.map_err(|(_, e)| e)?;
        Ok(())
    }

    /// Runs a statement without parameters (prepared=false) and returns its rows as text.
    async fn simple(&self, sql: &str) -> Result<(Vec<Vec<Option<String>>>, u64), OpError> {
        let mut rows = Vec::new();
        let mut affected = 0;
        for m in self.client.simple_query(sql).await.map_err(classify)? {
            match m {
                SimpleQueryMessage::Row(r) => {
                    rows.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                }
                SimpleQueryMessage::CommandComplete(n) => affected = n,
                _ => {}
            }
        }
        Ok((rows, affected))
    }

    fn columns_of(&self, fields: FieldSet) -> std::ops::Range<usize> {
        fields.indices(self.factory().statements.columns.len())
    }
}

impl Binding for PostgresBinding {
    /// A dropped operation may have been a transaction's (its BEGIN included): the next one rolls
    /// back first (a ROLLBACK with none open only warns).
    fn abandoned(&mut self) {
        self.abandoned_transaction = true;
    }

    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        if let Some(replica) = &mut self.reader {
            return Box::pin(replica.read(key, fields, out)).await;
        }
        self.ensure_connected().await?;
        out.clear();
        let cols = self.columns_of(fields);
        if let Some(p) = &self.prepared {
            let stmt = match fields {
                FieldSet::All => &p.read_all,
                FieldSet::One(i) => &p.read_one[i],
            };
            let row = self
                .client
                .query_opt(stmt, &[&key])
                .await
                .map_err(classify)?
                .ok_or_else(|| not_found(key))?;
            for (i, c) in cols.into_iter().enumerate() {
                out.push((c, row.get::<_, Option<String>>(i).unwrap_or_default()));
            }
        } else {
            let st = &self.factory().statements;
            let sql = match fields {
                FieldSet::All => &st.read_all,
                FieldSet::One(i) => &st.read_one[i],
            }
            .replace("$1", &literal(key));
            let (rows, _) = self.simple(&sql).await?;
            let row = rows.into_iter().next().ok_or_else(|| not_found(key))?;
            out.extend(
                cols.into_iter()
                    .zip(row)
                    .map(|(c, v)| (c, v.unwrap_or_default())),
            );
        }
        Ok(())
    }

    /// One `SELECT ... WHERE key IN ($1, ...)`, prepared once per number of keys (reads one
    /// after another with `prepared=false`).
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        if let Some(replica) = &mut self.reader {
            return Box::pin(replica.read_many(keys, fields, out)).await;
        }
        if self.prepared.is_none() {
            return crate::read_each(self, keys, fields, out).await;
        }
        self.ensure_connected().await?;
        out.clear();
        let sql = self.shared.statements.select_keys(fields, keys.len());
        if !self.multi_get_statements.contains_key(&sql) {
            let stmt = self.client.prepare(&sql).await.map_err(classify)?;
            self.multi_get_statements.insert(sql.clone(), stmt);
        }
        let params: Vec<&(dyn ToSql + Sync)> =
            keys.iter().map(|k| k as &(dyn ToSql + Sync)).collect();
        let cols = self.columns_of(fields);
        let stmt = &self.multi_get_statements[&sql];
        for row in self.client.query(stmt, &params).await.map_err(classify)? {
            out.push(keyed(&row, cols.clone()));
        }
        Ok(())
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        if let Some(replica) = &mut self.reader {
            return Box::pin(replica.scan(start_key, count, fields, out)).await;
        }
        self.ensure_connected().await?;
        out.clear();
        let cols = self.columns_of(fields);
        if let Some(p) = &self.prepared {
            let stmt = match fields {
                FieldSet::All => &p.scan_all,
                FieldSet::One(i) => &p.scan_one[i],
            };
            let limit = count as i64;
            for row in self
                .client
                .query(stmt, &[&start_key, &limit])
                .await
                .map_err(classify)?
            {
                out.push(keyed(&row, cols.clone()));
            }
        } else {
            let st = &self.factory().statements;
            let sql = match fields {
                FieldSet::All => &st.scan_all,
                FieldSet::One(i) => &st.scan_one[i],
            }
            .replace("$1", &literal(start_key))
            .replace("$2", &count.to_string());
            let (rows, _) = self.simple(&sql).await?;
            for mut row in rows {
                let key = row.remove(0).unwrap_or_default();
                out.push((
                    key,
                    cols.clone()
                        .zip(row.into_iter().map(Option::unwrap_or_default))
                        .collect(),
                ));
            }
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.ensure_connected().await?;
        let n = self.factory().statements.columns.len();
        let all_in_order =
            values.len() == n && values.iter().enumerate().all(|(i, (f, _))| *f == i);
        let changed = match (&self.prepared, values.as_slice()) {
            (Some(p), [(f, v)]) => self
                .client
                .execute(&p.update_one[*f], &[v, &key])
                .await
                .map_err(classify)?,
            (Some(p), _) if all_in_order => {
                let mut params: Vec<&(dyn ToSql + Sync)> = values
                    .iter()
                    .map(|(_, v)| v as &(dyn ToSql + Sync))
                    .collect();
                params.push(&key);
                self.client
                    .execute(&p.update_all, &params)
                    .await
                    .map_err(classify)?
            }
            _ => {
                let st = &self.factory().statements;
                let sets: Vec<String> = values
                    .iter()
                    .map(|(f, v)| format!("{} = {}", st.columns[*f], literal(v)))
                    .collect();
                let sql = format!(
                    "UPDATE {} SET {} WHERE {} = {}",
                    st.table,
                    sets.join(", "),
                    st.key,
                    literal(key)
                );
                self.simple(&sql).await?.1
            }
        };
        if changed == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.ensure_connected().await?;
        if let Some(p) = &self.prepared {
            let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(values.len() + 1);
            params.push(&key);
            let full = full_row(values, self.factory().statements.columns.len());
            params.extend(full.iter().map(|v| v as &(dyn ToSql + Sync)));
            self.client
                .execute(&p.insert, &params)
                .await
                .map_err(classify)?;
        } else {
            let sql = insert_literal(&self.factory().statements, std::iter::once((key, values)));
            self.simple(&sql).await?;
        }
        Ok(())
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        self.ensure_connected().await?;
        let n = self.factory().statements.columns.len();
        match (self.factory().batch_mode, self.prepared.is_some()) {
            (BatchMode::Copy, _) => {
                let st = &self.factory().statements;
                let sql = format!(
                    "COPY {} ({}, {}) FROM STDIN",
                    st.table,
                    st.key,
                    st.columns.join(", ")
                );
                let sink = self
                    .client
                    .copy_in::<_, bytes::Bytes>(&sql)
                    .await
                    .map_err(classify)?;
                let mut text = String::with_capacity(records.len() * (n * 100 + 32));
                for r in records {
                    text.push_str(&copy_escape(&r.key));
                    for v in full_row(&r.values, n) {
                        text.push('\t');
                        text.push_str(&copy_escape(&v));
                    }
                    text.push('\n');
                }
                futures::pin_mut!(sink);
                sink.send(bytes::Bytes::from(text))
                    .await
                    .map_err(classify)?;
                sink.finish().await.map_err(classify)?;
            }
            (BatchMode::MultiRow, true) => {
                if !self.batch_statements.contains_key(&records.len()) {
                    let sql = self.factory().statements.multi_row_insert(records.len());
                    let stmt = self.client.prepare(&sql).await.map_err(classify)?;
                    self.batch_statements.insert(records.len(), stmt);
                }
                let rows: Vec<Vec<String>> =
                    records.iter().map(|r| full_row(&r.values, n)).collect();
                let mut params: Vec<&(dyn ToSql + Sync)> =
                    Vec::with_capacity(records.len() * (n + 1));
                for (r, row) in records.iter().zip(&rows) {
                    params.push(&r.key);
                    params.extend(row.iter().map(|v| v as &(dyn ToSql + Sync)));
                }
                let stmt = &self.batch_statements[&records.len()];
                self.client.execute(stmt, &params).await.map_err(classify)?;
            }
            (BatchMode::MultiRow, false) => {
                let sql = insert_literal(
                    &self.factory().statements,
                    records.iter().map(|r| (r.key.as_str(), &r.values)),
                );
                self.simple(&sql).await?;
            }
        }
        Ok(())
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        self.ensure_connected().await?;
        let changed = match &self.prepared {
            Some(p) => self
                .client
                .execute(&p.delete, &[&key])
                .await
                .map_err(classify)?,
            None => {
                let sql = self
                    .factory()
                    .statements
                    .delete
                    .replace("$1", &literal(key));
                self.simple(&sql).await?.1
            }
        };
        if changed == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    /// The updates in one transaction.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        crate::update_in_transaction(self, keys, values).await
    }

    async fn transaction_control(&mut self, control: TransactionControl) -> Result<(), OpError> {
        if control == TransactionControl::Begin {
            self.ensure_connected().await?;
        } else {
            self.in_transaction = false;
            // A new connection has no transaction to end: the closed one's is rolled back.
            if self.client.is_closed() {
                return match control {
                    TransactionControl::Rollback => Ok(()),
                    _ => Err(lost_in_transaction()),
                };
            }
        }
        let sql = match control {
            TransactionControl::Begin => "BEGIN",
            TransactionControl::Commit => "COMMIT",
            TransactionControl::Rollback => "ROLLBACK",
        };
        let r = self.client.batch_execute(sql).await.map_err(classify);
        self.in_transaction = control == TransactionControl::Begin && r.is_ok();
        r
    }

    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        self.ensure_connected().await?;
        let sql = crate::sql::increment_of(&self.shared.increments, changes)?;
        if !self.increment_statements.contains_key(sql) {
            let stmt = self.client.prepare(sql).await.map_err(classify)?;
            self.increment_statements.insert(sql.to_string(), stmt);
        }
        let amounts: Vec<String> = changes.iter().map(|m| m.change.amount()).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> =
            amounts.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        params.push(&key);
        let stmt = &self.increment_statements[sql];
        if self.client.execute(stmt, &params).await.map_err(classify)? == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        self.ensure_connected().await?;
        let (Some(Some(prepared)), Some(Some(s))) =
            (self.own.get(statement), self.shared.own.get(statement))
        else {
            return Err(OpError::new(FailureClass::Other, format!("no statement {statement}")));
        };
        let values = s.values(params);
        let values: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| *v as &(dyn ToSql + Sync)).collect();
        if prepared.columns().is_empty() {
            return self
                .client
                .execute(prepared, &values)
                .await
                .map_err(classify);
        }
        let rows = self
            .client
            .query(prepared, &values)
            .await
            .map_err(classify)?;
        Ok(rows.len() as u64)
    }

    /// A statement of a csvlog as its client sent it: a prepared one's logged parameters written
    /// in as literals, run by the simple query protocol (docs/replay.md says what that changes).
    async fn statement_text(&mut self, text: &str, params: &Fields) -> Result<u64, OpError> {
        self.ensure_connected().await?;
        let param = |i: usize| params.iter().find(|(p, _)| *p == i).map(|(_, v)| v.as_str());
        let sql = crate::sql::with_numbered_literals(text, param);
        let (rows, affected) = self.simple(&sql).await?;
        Ok(if rows.is_empty() { affected } else { rows.len() as u64 })
    }
}

/// A row of `key, columns...` as the key and its fields.
fn keyed(row: &tokio_postgres::Row, cols: std::ops::Range<usize>) -> (String, Fields) {
    let values = cols
        .enumerate()
        .map(|(i, c)| (c, row.get::<_, Option<String>>(i + 1).unwrap_or_default()))
        .collect();
    (row.get(0), values)
}

/// All `n` field values in column order (missing fields as empty strings, as YCSB's JDBC binding writes NULL-free rows).
fn full_row(values: &Fields, n: usize) -> Vec<String> {
    let mut row = vec![String::new(); n];
    for (f, v) in values {
        row[*f] = v.clone();
    }
    row
}

fn insert_literal<'a>(
    st: &Statements,
    rows: impl Iterator<Item = (&'a str, &'a Fields)>,
) -> String {
    let n = st.columns.len();
    let values: Vec<String> = rows
        .map(|(k, v)| {
            let cols: Vec<String> = std::iter::once(literal(k))
                .chain(full_row(v, n).iter().map(|s| literal(s)))
                .collect();
            format!("({})", cols.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO {} ({}, {}) VALUES {}",
        st.table,
        st.key,
        st.columns.join(", "),
        values.join(", ")
    )
}

fn copy_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}
