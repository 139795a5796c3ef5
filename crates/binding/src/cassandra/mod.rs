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
mod tls;

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use scalebench_workload::statement::{Language, Param};
use scalebench_workload::{FailureClass, FieldSet, FieldType, Fields, OpError, Operation};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::serialize::SerializationError;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::unprepared::Statement;
use scylla::statement::{Consistency, SerialConsistency};
use scylla::value::{CqlTimestamp, CqlValue, Row};

use crate::snapshot::{Held, Snapshot};
use crate::info::{BindingInfo, OptionValue};
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "cassandra",
    schemes: &["cassandra"],
    summary: "Apache Cassandra / ScyllaDB (scylla driver, CQL); consistency per operation type",
    url_example: "cassandra://127.0.0.1:9042/ycsb or cassandra://h:9042/ycsb?ssl=true (TLS)",
    options: Options::SET,
    table_sql: None,
    stores_data: true,
    creates_table_on_load: false,
    secondary_indexes: true,
    transactions: crate::Transactions::OneRecord,
    increments: crate::info::Increments::None,
    statements: Some(scalebench_workload::statement::Language::Cql),
    reads: "each read at read_consistency, each write at write_consistency: with replication_factor RF, R + W > RF replicas make every read see every acknowledged write (QUORUM/QUORUM, ALL/ONE, ONE/ALL), ONE/ONE may read a replica the write has not reached. token_aware = true sends each request to a replica of its key; false spreads requests over all nodes as coordinators, round-robin; with --request-set-threads fixed, every request of worker w is coordinated by node w mod n of the ring (Dory's client), which forwards it to the key's replicas",
    binds_workers_to_nodes: true,
};

binding_options! {
    pub struct Options {
        replication_factor: u64 = "1" => "replication factor of the keyspace; --create-schema creates or ALTERs the keyspace to match (with --drop-schema), a run refuses a keyspace that differs",
        replication_strategy: ReplicationStrategy = "SimpleStrategy" => "the keyspace's replication class (NetworkTopologyStrategy: all replicas in datacenter1)",
        durable_writes: bool = "true" => "false: the keyspace's writes skip the commit log (Wegert's commit log \"off\"; a deployment's commitlog_sync = \"off\" sets it)",
        read_consistency: ConsistencyLevel = "ONE" => "consistency of reads",
        scan_consistency: ConsistencyLevel = "ONE" => "consistency of scans",
        write_consistency: ConsistencyLevel = "ONE" => "consistency of inserts and updates",
        delete_consistency: ConsistencyLevel = "ONE" => "consistency of deletes",
        serial_consistency: SerialLevel = "SERIAL" => "consistency of lightweight transactions (with insert_if_not_exists)",
        prepared: bool = "true" => "prepared statements (token-aware routing needs them); false sends CQL text with the values as literals",
        insert_if_not_exists: bool = "false" => "INSERT ... IF NOT EXISTS (a lightweight transaction; an existing row fails as conflict)",
        load_mode: LoadMode = "batch" => "a load batch (--batch-size) as one UNLOGGED BATCH (batch), or as concurrent single inserts (concurrent)",
        compaction: String = "SizeTieredCompactionStrategy" => "compaction class of the table created by --create-schema (e.g. LeveledCompactionStrategy)",
        compression: String = "LZ4Compressor" => "SSTable compression class, or none",
        token_aware: bool = "true" => "route each request to a replica of its key",
    }
}

option_choice! {
    pub enum ReplicationStrategy {
        Simple = "SimpleStrategy",
        NetworkTopology = "NetworkTopologyStrategy",
    }
}

option_choice! {
    pub enum ConsistencyLevel {
        Any = "ANY",
        One = "ONE",
        Two = "TWO",
        Three = "THREE",
        Quorum = "QUORUM",
        All = "ALL",
        LocalQuorum = "LOCAL_QUORUM",
        EachQuorum = "EACH_QUORUM",
        LocalOne = "LOCAL_ONE",
    }
}

option_choice! {
    pub enum SerialLevel {
        Serial = "SERIAL",
        LocalSerial = "LOCAL_SERIAL",
    }
}

option_choice! {
    pub enum LoadMode {
        Batch = "batch",
        Concurrent = "concurrent",
    }
}

impl ConsistencyLevel {
    fn driver(self) -> Consistency {
        match self {
            Self::Any => Consistency::Any,
            Self::One => Consistency::One,
            Self::Two => Consistency::Two,
            Self::Three => Consistency::Three,
            Self::Quorum => Consistency::Quorum,
            Self::All => Consistency::All,
            Self::LocalQuorum => Consistency::LocalQuorum,
            Self::EachQuorum => Consistency::EachQuorum,
            Self::LocalOne => Consistency::LocalOne,
        }
    }
}

#[derive(Clone)]
struct Settings {
    nodes: Vec<String>,
    /// User and password from the URL (PasswordAuthenticator), never shown.
    credentials: Option<(String, String)>,
    /// Client encryption ([`tls`]); None: plain text.
    tls: Option<Arc<rustls::ClientConfig>>,
    url: String,
    keyspace: String,
    table: String,
    /// The key's column: YCSB's `y_id`, or the workload's `keycolumn` (quoted, lower case).
    key: String,
    columns: Vec<String>,
    /// The fields' types: a typed table (measurement records) binds typed values.
    types: Vec<FieldType>,
    typed: bool,
    read: Consistency,
    /// A read `read` finds unavailable is tried again at this level (the verify pass's, at ALL).
    read_if_unavailable: Option<Consistency>,
    /// Each connection attempt and setup call (`--connect-timeout`).
    connect_timeout: std::time::Duration,
    scan: Consistency,
    write: Consistency,
    delete: Consistency,
    serial: SerialConsistency,
    prepared: bool,
    if_not_exists: bool,
    concurrent_load: bool,
    token_aware: bool,
    /// A workload file's CQL statements, by named operation.
    own: Vec<Option<CqlStatement>>,
    /// Each worker bound to one node (`--request-set-threads fixed`).
    pinned: Option<nodes::Pinned>,
    /// Distinguishes factories in the per-thread session cache.
    id: u64,
}

/// A workload file's CQL statement: its text with bind markers, the parameter each binds, and
/// its consistency level.
#[derive(Clone)]
struct CqlStatement {
    name: String,
    text: String,
    binds: Vec<usize>,
    params: Vec<Param>,
    consistency: Consistency,
}

/// The workload's CQL statements: each at its own level, else at `read` for a SELECT and
/// `write` for the rest.
fn cql_statements(
    schema: &crate::Schema,
    read: Consistency,
    write: Consistency,
) -> Vec<Option<CqlStatement>> {
    schema
        .statements
        .iter()
        .map(|st| {
            let st = st.as_deref()?;
            let template = st.template(Language::Cql)?;
            let text = template.render(|_, _| "?".to_string());
            let selects = text.trim_start().to_ascii_uppercase().starts_with("SELECT");
            let consistency = st
                .consistency
                .as_deref()
                .and_then(ConsistencyLevel::parse_option)
                .map(ConsistencyLevel::driver)
                .unwrap_or(if selects { read } else { write });
            Some(CqlStatement {
                name: st.name.clone(),
                text,
                binds: template.occurrences(),
                params: st.params.clone(),
                consistency,
            })
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

pub struct CassandraFactory {
    settings: Arc<Settings>,
    /// The verify pass's reads (`--verify-writes`): at ALL, every replica answering and the newest
    /// write winning, so a write acknowledged at any level is seen where it is; where a replica is
    /// down, at QUORUM (what a majority holds). Unprepared: prepared statements carry the run's level.
    verify: Arc<Settings>,
}

impl Settings {
    fn for_verify(&self) -> Settings {
        Settings {
            read: Consistency::All,
            read_if_unavailable: Some(Consistency::Quorum),
            prepared: false,
            pinned: None,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ..self.clone()
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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
        let (mut settings, table) = settings_of(config)?;
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

/// What a created table and keyspace are to have: replication, compaction, compression.
struct TableOptions {
    wanted: Replication,
    compaction: String,
    compression: String,
}

/// The URL's nodes, keyspace and credentials and every option, checked.
fn settings_of(config: &BindingConfig) -> Result<(Settings, TableOptions), BindingError> {
        let url = config.url.redacted();
        // Hosts without the credentials, which go to the driver separately (a `user:pw@host`
        // given as a host name ends up in the driver's error message).
        let nodes: Vec<String> = config
            .url
            .hosts(9042)
            .into_iter()
            .filter(|h| !h.starts_with(':'))
            .collect();
        let keyspace = config.url.url().path().trim_start_matches('/').to_string();
        let credentials = match config.url.url().username() {
            "" => None,
            user => Some((
                percent_decoded(user),
                percent_decoded(config.url.url().password().unwrap_or("")),
            )),
        };
        if nodes.is_empty()
            || keyspace.is_empty()
            || !keyspace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(BindingError::Config(format!(
                "invalid database URL '{url}': expected cassandra://host:port/keyspace"
            )));
        }
        let tls = tls::from_url(config.url.url(), &url, |k| std::env::var(k).ok())?;
        let options = Options::read(INFO.name, &config.options)?;
        let wanted = Replication {
            strategy: options.replication_strategy.word().to_string(),
            factor: options.replication_factor,
            durable_writes: options.durable_writes,
        };
        let (compaction, compression) = (options.compaction, options.compression);
        for (name, v) in [("compaction", &compaction), ("compression", &compression)] {
            if !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                return Err(BindingError::Config(format!(
                    "invalid value '{v}' for property 'cassandra.{name}': expected a class name"
                )));
            }
        }
        let settings = Settings {
            url: url.clone(),
            keyspace,
            table: config.schema.table.clone(),
            columns: config.schema.field_names.iter().map(|n| cql_identifier(n)).collect(),
            key: config
                .schema
                .key_column
                .as_deref()
                .map_or_else(|| "y_id".to_string(), cql_identifier),
            types: config.schema.field_types.to_vec(),
            typed: config.schema.is_typed(),
            read: options.read_consistency.driver(),
            read_if_unavailable: None,
            connect_timeout: config.connect_timeout,
            scan: options.scan_consistency.driver(),
            write: options.write_consistency.driver(),
            delete: options.delete_consistency.driver(),
            serial: match options.serial_consistency {
                SerialLevel::Serial => SerialConsistency::Serial,
                SerialLevel::LocalSerial => SerialConsistency::LocalSerial,
            },
            prepared: options.prepared,
            if_not_exists: options.insert_if_not_exists,
            concurrent_load: options.load_mode == LoadMode::Concurrent,
            token_aware: options.token_aware,
            own: cql_statements(
                &config.schema,
                options.read_consistency.driver(),
                options.write_consistency.driver(),
            ),
            nodes,
            credentials,
            tls,
            pinned: None,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        };
    Ok((
        settings,
        TableOptions {
            wanted,
            compaction,
            compression,
        },
    ))
}

/// Drops, creates or checks the keyspace and table as the options say; a run measures the
/// replication it was asked for, never a keyspace left by an earlier configuration.
async fn prepare_schema(
    session: &Session,
    settings: &Settings,
    table: &TableOptions,
    config: &BindingConfig,
) -> Result<(), BindingError> {
    let (url, wanted) = (settings.url.as_str(), table.wanted.clone());
    let (compaction, compression) = (&table.compaction, &table.compression);
    let ks = &settings.keyspace;
    let t = format!("{ks}.{}", settings.table);
    let schema_err = |what: &str, e: &dyn std::fmt::Display| BindingError::Schema(format!("{what} on {url}: {e}"));
    if config.drop_schema {
        session.query_unpaged(format!("DROP TABLE IF EXISTS {t}"), &[]).await.map_err(|e| schema_err("cannot drop table", &e))?;
    }
    let current = Replication::of_keyspace(session, ks)
        .await
        .map_err(|e| schema_err("cannot look up the keyspace", &e))?;
    if config.create_schema {
        match &current {
            None => {
                session
                    .query_unpaged(format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH {}", wanted.cql()), &[])
                    .await
                    .map_err(|e| schema_err("cannot create keyspace", &e))?;
            }
            // The table was dropped: no data needs a repair for the new replication.
            Some(have) if *have != wanted && config.drop_schema => {
                {
                    use std::io::Write as _;
                    // Never panics on an unwritable stderr.
                    let _ = writeln!(std::io::stderr(), "note: keyspace {ks} had {have}; altered to {wanted} (ALTER KEYSPACE)");
                }
                session
                    .query_unpaged(format!("ALTER KEYSPACE {ks} WITH {}", wanted.cql()), &[])
                    .await
                    .map_err(|e| schema_err("cannot alter keyspace", &e))?;
            }
            Some(have) if *have != wanted => return Err(replication_mismatch(ks, have, &wanted, url)),
            Some(_) => {}
        }
        let cols: Vec<String> = settings
            .columns
            .iter()
            .zip(&settings.types)
            .map(|(c, t)| format!("{c} {}", cql_type(*t)))
            .collect();
        let compression = if compression == "none" {
            "{'enabled': 'false'}".to_string()
        } else {
            format!("{{'class': '{compression}'}}")
        };
        session
            .query_unpaged(
                format!(
                    "CREATE TABLE IF NOT EXISTS {t} ({} varchar PRIMARY KEY, {}) WITH compaction = {{'class': '{compaction}'}} AND compression = {compression}",
                    settings.key,
                    cols.join(", ")
                ),
                &[],
            )
            .await
            .map_err(|e| schema_err("cannot create table", &e))?;
        // Secondary indexes of one column each (checked when the binding opened).
        for ix in config.schema.indexes.iter() {
            session
                .query_unpaged(
                    format!("CREATE INDEX IF NOT EXISTS {} ON {t} ({})", ix.name, settings.columns[ix.columns[0]]),
                    &[],
                )
                .await
                .map_err(|e| schema_err("cannot create index", &e))?;
        }
        session.await_schema_agreement().await.map_err(|e| schema_err("no schema agreement", &e))?;
    }
    let exists = session
        .query_unpaged(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
            (settings.keyspace.as_str(), settings.table.as_str()),
        )
        .await
        .map_err(|e| schema_err("cannot look up the table", &e))?
        .into_rows_result()
        .map(|r| r.rows_num() > 0)
        .unwrap_or(false);
    if !exists {
        return Err(BindingError::Schema(format!(
            "table '{t}' does not exist on {url}: create it with --create-schema (e.g. scalebench load --create-schema)"
        )));
    }
    // A run measures the replication it was asked for, never a keyspace left by an earlier
    // configuration (options given explicitly only: an external keyspace is taken as it is).
    if !config.create_schema && config.options.keys().any(|k| REPLICATION_OPTIONS.contains(&k.as_str())) {
        if let Some(have) = &current {
            if *have != wanted {
                return Err(replication_mismatch(ks, have, &wanted, url));
            }
        }
    }
    Ok(())
}

/// The options that set the keyspace's replication.
const REPLICATION_OPTIONS: [&str; 3] = [
    "replication_factor",
    "replication_strategy",
    "durable_writes",
];

/// A keyspace's replication as the options ask for it and as `system_schema.keyspaces` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Replication {
    /// `SimpleStrategy` or `NetworkTopologyStrategy` (replicas in `datacenter1`).
    strategy: String,
    factor: u64,
    durable_writes: bool,
}

impl Replication {
    fn cql(&self) -> String {
        let (class, key) = match self.strategy.as_str() {
            "NetworkTopologyStrategy" => ("NetworkTopologyStrategy", "datacenter1"),
            _ => ("SimpleStrategy", "replication_factor"),
        };
        format!(
            "replication = {{'class': '{class}', '{key}': {}}} AND durable_writes = {}",
            self.factor, self.durable_writes
        )
    }

    /// The keyspace's replication, `None` when it does not exist. A strategy other than the two
    /// (or more than one datacenter) reads as factor 0, so it never matches what was asked.
    async fn of_keyspace(
        session: &Session,
        keyspace: &str,
    ) -> Result<Option<Replication>, Box<dyn std::error::Error + Send + Sync>> {
        let rows = session
            .query_unpaged(
                "SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = ?",
                (keyspace,),
            )
            .await?
            .into_rows_result()?;
        let Some(row) = rows
            .rows::<(std::collections::HashMap<String, String>, bool)>()?
            .next()
            .transpose()?
        else {
            return Ok(None);
        };
        let (map, durable_writes) = row;
        let class = map.get("class").map(String::as_str).unwrap_or("");
        let strategy = class.rsplit('.').next().unwrap_or(class).to_string();
        let factor = match strategy.as_str() {
            "SimpleStrategy" => map.get("replication_factor"),
            "NetworkTopologyStrategy" if map.len() == 2 => map.get("datacenter1"),
            _ => None,
        }
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
        Ok(Some(Replication {
            strategy,
            factor,
            durable_writes,
        }))
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} with {} replicas, durable_writes = {}",
            self.strategy, self.factor, self.durable_writes
        )
    }
}

fn replication_mismatch(
    ks: &str,
    have: &Replication,
    wanted: &Replication,
    url: &str,
) -> BindingError {
    BindingError::Schema(format!(
        "keyspace {ks} on {url} has {have}, but {wanted} was asked: load again with --create-schema --drop-schema (which ALTERs the keyspace), or set cassandra.replication_factor, replication_strategy and durable_writes to what it has"
    ))
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

/// Statements prepared once per session.
struct Prepared {
    read_all: PreparedStatement,
    read_one: Vec<PreparedStatement>,
    scan_all: PreparedStatement,
    scan_one: Vec<PreparedStatement>,
    update_one: Vec<PreparedStatement>,
    insert: PreparedStatement,
    delete: PreparedStatement,
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

impl Settings {
    fn select(&self, fields: FieldSet) -> String {
        match fields {
            FieldSet::All => self.columns.join(", "),
            FieldSet::One(i) => self.columns[i].clone(),
        }
    }

    fn read_cql(&self, fields: FieldSet) -> String {
        format!(
            "SELECT {} FROM {} WHERE {} = ?",
            self.select(fields),
            self.table,
            self.key
        )
    }

    fn scan_cql(&self, fields: FieldSet) -> String {
        format!(
            "SELECT {k}, {} FROM {} WHERE token({k}) >= token(?) LIMIT ?",
            self.select(fields),
            self.table,
            k = self.key
        )
    }

    fn update_cql(&self, fields: &[usize]) -> String {
        let sets: Vec<String> = fields
            .iter()
            .map(|f| format!("{} = ?", self.columns[*f]))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {} = ?",
            self.table,
            sets.join(", "),
            self.key
        )
    }

    fn insert_cql(&self) -> String {
        let marks = vec!["?"; self.columns.len() + 1].join(", ");
        let lwt = if self.if_not_exists {
            " IF NOT EXISTS"
        } else {
            ""
        };
        format!(
            "INSERT INTO {} ({}, {}) VALUES ({marks}){lwt}",
            self.table,
            self.key,
            self.columns.join(", ")
        )
    }

    fn delete_cql(&self) -> String {
        format!("DELETE FROM {} WHERE {} = ?", self.table, self.key)
    }

    /// Prepares the workload file's statements; one that does not prepare is bad input.
    async fn prepare_own(
        &self,
        session: &Session,
    ) -> Result<Vec<Option<PreparedStatement>>, BindingError> {
        let mut out = Vec::with_capacity(self.own.len());
        for s in &self.own {
            out.push(match s {
                None => None,
                Some(s) => {
                    let mut st = session.prepare(s.text.as_str()).await.map_err(|e| {
                        BindingError::Config(format!(
                            "operation '{}': its cql does not prepare: {e}",
                            s.name
                        ))
                    })?;
                    st.set_consistency(s.consistency);
                    st.set_serial_consistency(Some(self.serial));
                    Some(st)
                }
            });
        }
        Ok(out)
    }

    async fn prepare(&self, session: &Session) -> Result<Prepared, BindingError> {
        let p = |cql: String, c: Consistency| async move {
            let mut st = session
                .prepare(cql.as_str())
                .await
                .map_err(|e| BindingError::Other(format!("cannot prepare {cql}: {e}")))?;
            st.set_consistency(c);
            st.set_serial_consistency(Some(self.serial));
            Ok::<_, BindingError>(st)
        };
        let n = self.columns.len();
        let mut read_one = Vec::with_capacity(n);
        let mut scan_one = Vec::with_capacity(n);
        let mut update_one = Vec::with_capacity(n);
        for i in 0..n {
            read_one.push(p(self.read_cql(FieldSet::One(i)), self.read).await?);
            scan_one.push(p(self.scan_cql(FieldSet::One(i)), self.scan).await?);
            update_one.push(p(self.update_cql(&[i]), self.write).await?);
        }
        Ok(Prepared {
            read_all: p(self.read_cql(FieldSet::All), self.read).await?,
            read_one,
            scan_all: p(self.scan_cql(FieldSet::All), self.scan).await?,
            scan_one,
            update_one,
            insert: p(self.insert_cql(), self.write).await?,
            delete: p(self.delete_cql(), self.delete).await?,
        })
    }
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

/// A column's value as the workload's text; `t` its type where known (a list or map Cassandra
/// returns as null is empty).
fn text_of(v: Option<CqlValue>, t: Option<FieldType>) -> String {
    match v {
        Some(CqlValue::List(items) | CqlValue::Set(items)) => {
            let json: Vec<serde_json::Value> = items.into_iter().map(json_of).collect();
            serde_json::Value::Array(json).to_string()
        }
        Some(CqlValue::Map(entries)) => {
            let json: serde_json::Map<String, serde_json::Value> = entries
                .into_iter()
                .map(|(k, v)| (text_of(Some(k), None), json_of(v)))
                .collect();
            serde_json::Value::Object(json).to_string()
        }
        None if matches!(t, Some(FieldType::List { .. })) => "[]".into(),
        None if matches!(t, Some(FieldType::Map { .. })) => "{}".into(),
        Some(CqlValue::Text(s)) | Some(CqlValue::Ascii(s)) => s,
        Some(CqlValue::Int(i)) => i.to_string(),
        Some(CqlValue::BigInt(i)) => i.to_string(),
        Some(CqlValue::Boolean(b)) => if b { "1" } else { "0" }.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        Some(CqlValue::Double(d)) => d.to_string(),
        Some(CqlValue::Decimal(d)) => decimal_text(&d),
        Some(CqlValue::Blob(b)) => hex(&b),
        Some(CqlValue::Timestamp(CqlTimestamp(ms))) => chrono::DateTime::from_timestamp_millis(ms)
            .map_or_else(|| ms.to_string(), |t| t.format(TIMESTAMP_TEXT).to_string()),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// A list's or a map's element as JSON: text, UUIDs and timestamps as strings.
fn json_of(v: CqlValue) -> serde_json::Value {
    match v {
        CqlValue::Int(i) => i.into(),
        CqlValue::BigInt(i) => i.into(),
        CqlValue::Double(d) => d.into(),
        CqlValue::Boolean(b) => b.into(),
        other => text_of(Some(other), None).into(),
    }
}

/// How the workload writes timestamps (UTC).
const TIMESTAMP_TEXT: &str = "%Y-%m-%d %H:%M:%S%.3f";

/// A column's name as CQL takes it whatever the word: quoted, in lower case (what CQL makes of an
/// unquoted name, so YCSB's tables are the same columns), so that a workload file's `token` or
/// `order` is a column, not a keyword. Names are letters, digits and '_' (checked by the workload).
fn cql_identifier(name: &str) -> String {
    format!("\"{}\"", name.to_lowercase())
}

fn cql_type(t: FieldType) -> std::borrow::Cow<'static, str> {
    match t {
        FieldType::List { element } => format!("list<{}>", cql_type(element.field_type())).into(),
        FieldType::Map { element } => {
            format!("map<varchar, {}>", cql_type(element.field_type())).into()
        }
        t => scalar_cql_type(t).into(),
    }
}

fn scalar_cql_type(t: FieldType) -> &'static str {
    match t {
        FieldType::Text { .. } => "varchar",
        FieldType::Int => "int",
        FieldType::BigInt => "bigint",
        FieldType::Double => "double",
        FieldType::Timestamp => "timestamp",
        FieldType::Bool => "boolean",
        FieldType::Uuid => "uuid",
        FieldType::Decimal { .. } => "decimal",
        FieldType::Blob { .. } => "blob",
        FieldType::List { .. } | FieldType::Map { .. } => unreachable!("cql_type's"),
    }
}

/// A field's text as the CQL value of its type.
fn typed_value(t: FieldType, text: &str) -> Result<CqlValue, OpError> {
    let bad =
        |what: &str| OpError::new(FailureClass::Other, format!("value '{text}' is not {what}"));
    Ok(match t {
        FieldType::List { element } | FieldType::Map { element } => {
            let json: serde_json::Value =
                serde_json::from_str(text).map_err(|_| bad("JSON"))?;
            let one = |v: &serde_json::Value| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
                    other => other.to_string(),
                };
                typed_value(element.field_type(), &text)
            };
            match (t, &json) {
                (FieldType::List { .. }, serde_json::Value::Array(items)) => {
                    CqlValue::List(items.iter().map(one).collect::<Result<_, _>>()?)
                }
                (FieldType::Map { .. }, serde_json::Value::Object(entries)) => CqlValue::Map(
                    entries
                        .iter()
                        .map(|(k, v)| Ok((CqlValue::Text(k.clone()), one(v)?)))
                        .collect::<Result<_, OpError>>()?,
                ),
                _ => return Err(bad("a JSON array or object of the column's kind")),
            }
        }
        FieldType::Text { .. } => CqlValue::Text(text.to_string()),
        FieldType::Int => CqlValue::Int(text.parse().map_err(|_| bad("an int"))?),
        FieldType::BigInt => CqlValue::BigInt(text.parse().map_err(|_| bad("a bigint"))?),
        FieldType::Bool => CqlValue::Boolean(match text {
            "1" | "true" => true,
            "0" | "false" => false,
            _ => return Err(bad("a boolean (1, 0, true, false)")),
        }),
        FieldType::Uuid => CqlValue::Uuid(text.parse().map_err(|_| bad("a UUID"))?),
        FieldType::Double => CqlValue::Double(text.parse().map_err(|_| bad("a double"))?),
        FieldType::Timestamp => CqlValue::Timestamp(CqlTimestamp(
            chrono::NaiveDateTime::parse_from_str(text, TIMESTAMP_TEXT)
                .map_err(|_| bad("a timestamp (YYYY-MM-DD HH:MM:SS.mmm)"))?
                .and_utc()
                .timestamp_millis(),
        )),
        FieldType::Blob { .. } => CqlValue::Blob(
            (0..text.len() / 2)
                .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2).unwrap_or("x"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .ok()
                .filter(|_| text.len().is_multiple_of(2))
                .ok_or_else(|| bad("bytes in hex"))?,
        ),
        // An unscaled integer (big-endian two's complement, as short as it goes) and the scale.
        FieldType::Decimal { scale, .. } => {
            let units = scalebench_workload::decimal::parse_units(text, u32::from(scale))
                .ok_or_else(|| bad("a decimal"))?;
            let bytes = units.to_be_bytes();
            let sign = if units < 0 { 0xFF } else { 0x00 };
            // Leading bytes that only repeat the sign go, keeping the sign bit of the first kept.
            let skip = (0..15)
                .take_while(|&i| bytes[i] == sign && (bytes[i + 1] & 0x80) == (sign & 0x80))
                .count();
            CqlValue::Decimal(
                scylla::value::CqlDecimal::from_signed_be_bytes_and_exponent(
                    bytes[skip..].to_vec(),
                    i32::from(scale),
                ),
            )
        }
    })
}

/// Rows of the key and `cols`' columns as keys and their fields, into `out`.
fn keyed(rows: Vec<Row>, cols: &[usize], types: &[FieldType], out: &mut Vec<(String, Fields)>) {
    for row in rows {
        let mut it = row.columns.into_iter();
        let key = text_of(it.next().flatten(), None);
        out.push((key, fields_of(cols, types, it)));
    }
}

/// Columns `cols` (of types `types`) of a row as fields.
fn fields_of(
    cols: &[usize],
    types: &[FieldType],
    values: impl Iterator<Item = Option<CqlValue>>,
) -> Fields {
    cols.iter()
        .copied()
        .zip(values)
        .map(|(c, v)| (c, text_of(v, types.get(c).copied())))
        .collect()
}

/// Bytes as lowercase hex, as a blob column's text is.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A CQL decimal as text with its own scale's decimals.
fn decimal_text(d: &scylla::value::CqlDecimal) -> String {
    let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
    if bytes.len() > 16 || scale < 0 {
        return format!("{d:?}");
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xFF
    } else {
        0x00
    };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    scalebench_workload::decimal::format_units(i128::from_be_bytes(full), scale as u32)
}

/// Bound values: text as borrowed strings (YCSB's schema, no copies), or typed values.
enum Values<'a> {
    Text(Vec<&'a str>),
    Typed(Vec<Option<CqlValue>>),
}

/// A CQL string literal: quoted, with quotes doubled.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn literal(v: &Option<CqlValue>) -> String {
    match v {
        None => "null".into(),
        Some(CqlValue::Text(t)) | Some(CqlValue::Ascii(t)) => quoted(t),
        Some(CqlValue::Int(i)) => i.to_string(),
        Some(CqlValue::BigInt(i)) => i.to_string(),
        Some(CqlValue::Boolean(b)) => b.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        // Rust's shortest round-trip form: digits, a point, an exponent; CQL reads each.
        Some(CqlValue::Double(d)) if d.is_finite() => format!("{d:e}"),
        Some(CqlValue::Double(d)) if d.is_nan() => "NaN".into(),
        Some(CqlValue::Double(d)) => if *d > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        // Milliseconds after the epoch: CQL's integer form of a timestamp.
        Some(CqlValue::Timestamp(t)) => t.0.to_string(),
        Some(CqlValue::Decimal(d)) => decimal_text(d),
        // CQL's blob literal.
        Some(CqlValue::Blob(b)) => format!("0x{}", hex(b)),
        // CQL's collection literals.
        Some(CqlValue::List(items)) => {
            let items: Vec<String> = items.iter().map(|v| literal(&Some(v.clone()))).collect();
            format!("[{}]", items.join(", "))
        }
        Some(CqlValue::Map(entries)) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        literal(&Some(k.clone())),
                        literal(&Some(v.clone()))
                    )
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Some(other) => {
            unreachable!("the binding binds the workload's types, not {other:?}")
        }
    }
}

/// `cql` with each bind marker `?` replaced by the next value as a literal. The statements are
/// the binding's own: `?` appears in them only as a marker (names are checked identifiers).
fn inline(cql: &str, values: &Values<'_>) -> String {
    let literals: Vec<String> = match values {
        Values::Text(v) => v.iter().map(|t| quoted(t)).collect(),
        Values::Typed(v) => v.iter().map(literal).collect(),
    };
    let mut out =
        String::with_capacity(cql.len() + literals.iter().map(String::len).sum::<usize>());
    let mut next = literals.iter();
    for c in cql.chars() {
        if c == '?' {
            out.push_str(next.next().expect("one value per marker"));
        } else {
            out.push(c);
        }
    }
    out
}

impl SerializeRow for Values<'_> {
    fn serialize(
        &self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        match self {
            Values::Text(v) => v.serialize(ctx, writer),
            Values::Typed(v) => v.serialize(ctx, writer),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Values::Text(v) => v.is_empty(),
            Values::Typed(v) => v.is_empty(),
        }
    }
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

    fn columns_of(&self, fields: FieldSet) -> Vec<usize> {
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
            &self.columns_of(fields),
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
        keyed(rows, &self.columns_of(fields), &self.settings.types, out);
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
        keyed(rows, &self.columns_of(fields), &self.settings.types, out);
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
        self.session
            .session
            .batch(&batch, rows)
            .await
            .map_err(classify)?;
        Ok(())
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
        self.session
            .session
            .batch(&batch, rows)
            .await
            .map_err(classify)?;
        Ok(())
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

    /// A decimal column's text goes to CQL's unscaled integer and scale and back unchanged, the
    /// integer as short as it goes (what Cassandra's BigDecimal writes).
    #[test]
    fn decimals_round_trip_through_cql() {
        let t = FieldType::Decimal {
            precision: 38,
            scale: 2,
        };
        for text in [
            "0.00",
            "1.27",
            "1.28",
            "-1.28",
            "-1.29",
            "327.67",
            "-0.01",
            "999999999999999999999999999999999999.99",
            "-999999999999999999999999999999999999.99",
        ] {
            let v = typed_value(t, text).unwrap();
            let CqlValue::Decimal(d) = &v else {
                panic!("{v:?}")
            };
            let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
            assert_eq!(scale, 2);
            if text == "1.27" {
                assert_eq!(bytes, [127]);
            }
            if text == "1.28" {
                assert_eq!(bytes, [0, 128]);
            }
            if text == "-1.28" {
                assert_eq!(bytes, [128]);
            }
            assert_eq!(text_of(Some(v), Some(t)), text);
        }
        assert!(typed_value(t, "1.234").is_err());
    }

    /// A workload file's `consistency` is checked against the workload crate's list of levels;
    /// the binding maps the same words.
    #[test]
    fn a_statements_consistency_words_are_the_bindings() {
        assert_eq!(
            ConsistencyLevel::CHOICES,
            scalebench_workload::statement::CQL_CONSISTENCY_LEVELS
        );
    }

    #[test]
    fn unprepared_statements_carry_their_values_as_literals() {
        let insert = "INSERT INTO t (y_id, field0, field1) VALUES (?, ?, ?)";
        assert_eq!(
            inline(insert, &Values::Text(vec!["user1", "it's", "a?b"])),
            "INSERT INTO t (y_id, field0, field1) VALUES ('user1', 'it''s', 'a?b')"
        );
        let typed = Values::Typed(vec![
            Some(CqlValue::Text("k".into())),
            Some(CqlValue::Int(-7)),
            Some(CqlValue::Double(1.5e-7)),
            Some(CqlValue::Timestamp(CqlTimestamp(1_700_000_000_123))),
            None,
        ]);
        assert_eq!(
            inline("(?, ?, ?, ?, ?)", &typed),
            "('k', -7, 1.5e-7, 1700000000123, null)"
        );
        assert_eq!(literal(&Some(CqlValue::Double(100.0))), "1e2");
        assert_eq!(
            literal(&Some(CqlValue::Double(f64::NEG_INFINITY))),
            "-Infinity"
        );
    }
}
