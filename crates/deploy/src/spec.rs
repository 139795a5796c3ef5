//! Deployment files (TOML): which database, how many nodes, and the server settings to override.
//!
//! ```toml
//! name = "cassandra-3"
//! database = "cassandra"   # cassandra, redis-cluster, postgres, postgres-bucardo, galera, etcd,
//!                          # hbase, mongo-java-server, external
//! nodes = 3
//! memory = "2GiB"          # optional: each node's memory limit (a cgroup), page cache included
//!
//! [cassandra]              # knobs of the database's own section
//! num_tokens = 16
//! commitlog_sync = "periodic"
//!
//! [server]                 # server configuration overrides, in the database's own names
//! compaction_throughput = "64MiB/s"
//!
//! [binding]                # options for the binding (as -p <binding>.<option>=<value>)
//! replication_factor = "3"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::memory::MemoryLimit;
use crate::DeployError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Database {
    Cassandra,
    RedisCluster,
    Postgres,
    /// PostgreSQL masters replicating each other through Bucardo.
    PostgresBucardo,
    /// PostgreSQL servers managed by Patroni (one etcd member holds its leader key): streaming
    /// replicas, and a failover when the primary dies.
    PostgresPatroni,
    Galera,
    Etcd,
    /// ZooKeeper, a master, N region servers and the Thrift gateway, on one shared root directory.
    Hbase,
    /// One mongo-java-server (a MongoDB wire-protocol server for tests, not MongoDB).
    MongoJavaServer,
    External,
}

impl Database {
    /// Whether this build can deploy the database: Cassandra's and Redis Cluster's status checks need
    /// their drivers, which the embedded build (README command 1) leaves out.
    pub fn built(self) -> Result<(), String> {
        let needs = match self {
            Database::Cassandra if !cfg!(feature = "cassandra") => "Cassandra",
            Database::RedisCluster if !cfg!(feature = "redis") => "Redis",
            _ => return Ok(()),
        };
        Err(format!(
            "a {} cluster needs the {needs} driver, which this build leaves out (--features \
             embedded): use the full build (README command 2)",
            self.name()
        ))
    }

    pub fn name(self) -> &'static str {
        match self {
            Database::Cassandra => "cassandra",
            Database::RedisCluster => "redis-cluster",
            Database::Postgres => "postgres",
            Database::PostgresBucardo => "postgres-bucardo",
            Database::PostgresPatroni => "postgres-patroni",
            Database::Galera => "galera",
            Database::Etcd => "etcd",
            Database::Hbase => "hbase",
            Database::MongoJavaServer => "mongo-java-server",
            Database::External => "external",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// Names the cluster's directory; letters, digits, `-`, `_` and `.`.
    pub name: String,
    pub database: Database,
    /// Nodes started by `up`: Cassandra nodes, Redis masters, PostgreSQL replicas come on top of the
    /// primary (see `postgres.replicas`), Galera nodes, etcd members.
    #[serde(default = "one")]
    pub nodes: usize,
    /// Each node's memory limit: a cgroup holding all of the node's processes, whose limit covers
    /// their memory and the page cache of what they read (see [`crate::memory`]). The servers size
    /// their heaps and caches within it (see [`Deployment::jvm_heap_mb`] and
    /// [`Deployment::server_settings`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryLimit>,
    /// Seconds to wait for all nodes to be up and serving.
    #[serde(default = "ready_timeout")]
    pub ready_timeout_s: u64,
    /// Seconds to wait for the cluster to be idle (no compaction, stream, migration or lag).
    #[serde(default = "idle_timeout")]
    pub idle_timeout_s: u64,
    /// Server configuration overrides in the database's own names (cassandra.yaml keys, redis.conf
    /// directives, postgresql.conf settings, mariadbd options, etcd flags without `--`).
    #[serde(default)]
    pub server: BTreeMap<String, toml::Value>,
    /// Binding options the runs against this deployment get (overridden by `-p`).
    #[serde(default)]
    pub binding: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub cassandra: CassandraSection,
    #[serde(default)]
    pub redis: RedisSection,
    #[serde(default)]
    pub postgres: PostgresSection,
    #[serde(default)]
    pub hbase: HbaseSection,
    #[serde(default)]
    pub mongo_java_server: MongoJavaServerSection,
    #[serde(default)]
    pub external: ExternalSection,
}

fn one() -> usize {
    1
}

/// JVM heaps (MiB) when the file gives none (with `memory`, at most half of it: see
/// [`Deployment::jvm_heap_mb`]).
pub const CASSANDRA_HEAP_MB: u32 = 512;
pub const HBASE_HEAP_MB: u32 = 512;
pub const HBASE_MASTER_HEAP_MB: u32 = 384;
pub const HBASE_GATEWAY_HEAP_MB: u32 = 256;
/// HBase's ZooKeeper (not configurable).
pub const ZOOKEEPER_HEAP_MB: u32 = 128;
pub const MONGO_JAVA_SERVER_HEAP_MB: u32 = 512;

/// The cache a server sizes for itself (PostgreSQL's shared buffers, InnoDB's buffer pool) when the
/// deployment has a memory limit and sets none: its default, at most a quarter of the limit
/// (PostgreSQL's own advice for a dedicated machine), so the page cache keeps most of the rest.
const SERVER_CACHE_DEFAULT_MB: u64 = 128;

/// Server settings that decide where a server listens or who may connect from where, in any of the
/// databases' spellings (compared with '_' as '-', case-insensitive).
const LISTEN_SETTINGS: &[&str] = &[
    // PostgreSQL
    "listen-addresses",
    "port",
    "unix-socket-directories",
    "hba-file",
    // Redis
    "bind",
    "protected-mode",
    "cluster-announce-ip",
    "cluster-port",
    "unixsocket",
    // MariaDB
    "bind-address",
    "skip-networking",
    "socket",
    "wsrep-node-address",
    "wsrep-cluster-address",
    "wsrep-sst-receive-address",
    // Cassandra
    "listen-address",
    "listen-interface",
    "rpc-address",
    "rpc-interface",
    "broadcast-address",
    "broadcast-rpc-address",
    "native-transport-port",
    "storage-port",
    "ssl-storage-port",
    "seed-provider",
    // etcd
    "listen-client-urls",
    "listen-peer-urls",
    "advertise-client-urls",
    "initial-advertise-peer-urls",
    "initial-cluster",
    "listen-metrics-urls",
    // HBase (hbase-site.xml)
    "hbase.cluster.distributed",
    "hbase.rootdir",
    "hbase.tmp.dir",
    "hbase.zookeeper.quorum",
    "hbase.zookeeper.property.clientport",
    "hbase.master.hostname",
    "hbase.regionserver.hostname",
    "hbase.master.ipc.address",
    "hbase.regionserver.ipc.address",
    "hbase.master.port",
    "hbase.regionserver.port",
    "hbase.master.info.port",
    "hbase.regionserver.info.port",
];

/// Longest wait for a cluster to be ready or idle, in seconds.
const MAX_WAIT_S: u64 = 86_400;

fn ready_timeout() -> u64 {
    300
}
fn idle_timeout() -> u64 {
    600
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CassandraSection {
    pub num_tokens: u32,
    /// Default [`CASSANDRA_HEAP_MB`] (see [`Deployment::jvm_heap_mb`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_mb: Option<u32>,
    /// `periodic` (sync every `commitlog_sync_period_ms`), `batch` (sync before each write is
    /// acknowledged), `group` (writes of `commitlog_sync_group_window_ms` share a sync) or `off`
    /// (the benchmark keyspace's `durable_writes = false`).
    pub commitlog_sync: String,
    pub commitlog_sync_period_ms: u32,
    pub commitlog_sync_group_window_ms: u32,
    /// A file holding Cassandra's classpath (default: `$SCALEBENCH_CASSANDRA_CLASSPATH`, else resolved
    /// from Maven Central by `mvn` into the per-user cache, `~/.cache/scalebench`).
    pub classpath_file: Option<PathBuf>,
}

impl Default for CassandraSection {
    fn default() -> Self {
        CassandraSection {
            num_tokens: 16,
            heap_mb: None,
            commitlog_sync: "periodic".into(),
            commitlog_sync_period_ms: 10_000,
            commitlog_sync_group_window_ms: 50,
            classpath_file: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedisSection {
    /// Replicas per master.
    pub replicas: usize,
    pub appendonly: bool,
    /// `always`, `everysec` or `no`.
    pub appendfsync: String,
}

impl Default for RedisSection {
    fn default() -> Self {
        RedisSection {
            replicas: 0,
            appendonly: false,
            appendfsync: "everysec".into(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PostgresSection {
    /// Streaming replicas of the primary (or give `nodes` = 1 + replicas).
    pub replicas: usize,
    /// Synchronous replication: the primary's `synchronous_commit` once replicas are attached:
    /// `off` (asynchronous), `on` (flushed on a replica), `remote_apply` (visible on a replica).
    pub synchronous_commit: Option<String>,
    /// Send reads and scans to the replicas (the binding's `read_hosts`).
    pub reads_to_replicas: bool,
    /// Spread reads and scans over every server, the primary (Bucardo's master) and its replicas
    /// (slaves) alike: worker i reads on server i mod n, the primary first (the binding's
    /// `read_hosts`). Dijkshoorn's master-slave rows read on all of their machines.
    pub reads_on_every_server: bool,
    /// `postgres-bucardo` only: `multi-master` (every server a source, each writable) or
    /// `master-slave` (node1 the source, the others targets serving the reads: trigger-based
    /// master-slave replication, as Slony-I was).
    pub bucardo: BucardoSync,
}

impl PostgresSection {
    /// Where reads go, as the binding's `read_hosts` (`host:port,...`): every server, the
    /// primaries first (`reads_on_every_server`), or the replicas when `to_replicas` (the
    /// deployment's `reads_to_replicas`, or a Bucardo master-slave's slaves); None: the primary's
    /// connection reads.
    pub fn read_hosts(
        &self,
        to_replicas: bool,
        primaries: &[String],
        replicas: &[String],
    ) -> Option<String> {
        let hosts: Vec<&str> = match (self.reads_on_every_server, to_replicas) {
            (true, _) => primaries
                .iter()
                .chain(replicas)
                .map(String::as_str)
                .collect(),
            (false, true) => replicas.iter().map(String::as_str).collect(),
            (false, false) => Vec::new(),
        };
        (!hosts.is_empty()).then(|| hosts.join(","))
    }
}

/// How a Bucardo deployment's sync copies the benchmark table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BucardoSync {
    #[default]
    MultiMaster,
    MasterSlave,
}

/// A cluster scalebench does not start: endpoints and shell hooks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HbaseSection {
    /// Each region server's heap; default [`HBASE_HEAP_MB`] (see [`Deployment::jvm_heap_mb`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_mb: Option<u32>,
    /// Default [`HBASE_MASTER_HEAP_MB`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master_heap_mb: Option<u32>,
    /// The Thrift gateway's heap; default [`HBASE_GATEWAY_HEAP_MB`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway_heap_mb: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MongoJavaServerSection {
    /// The JVM's heap; default [`MONGO_JAVA_SERVER_HEAP_MB`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_mb: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalSection {
    /// The binding URL.
    pub url: String,
    /// Host:port of each node, for status and hooks (`$SCALEBENCH_NODES`).
    pub endpoints: Vec<String>,
    /// Shell commands (`sh -c`), run from the deployment file's directory. Exit 0 = yes/success.
    pub hooks: ExternalHooks,
    /// Directories whose size is the space on disk (when the data is reachable from here).
    pub data_dirs: Vec<PathBuf>,
    /// Host name -> a command that runs `scalebench monitor --stream` there (e.g. through ssh). It
    /// runs during every load and run; its series is kept with the result.
    pub monitors: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalHooks {
    pub up: Option<String>,
    pub down: Option<String>,
    pub add_node: Option<String>,
    /// Gets the node to remove in `$SCALEBENCH_NODE` (empty: the hook's choice).
    pub remove_node: Option<String>,
    pub is_ready: Option<String>,
    /// Exit 0 when idle; its output names what is busy otherwise.
    pub is_idle: Option<String>,
    /// Writes what the servers hold in memory to their files, compacting nothing (the space is
    /// then measured as inserted).
    pub flush: Option<String>,
    /// Flushes and compacts (also `elastic --action compact`).
    pub compact: Option<String>,
    /// `elastic --action crash:K`: kills the node in `$SCALEBENCH_NODE` without warning.
    pub crash_node: Option<String>,
    /// `restart:NODE` (and each node of `rolling-restart` without its own hook): stops the node in
    /// `$SCALEBENCH_NODE` cleanly, starts it again and returns once it has rejoined.
    pub restart_node: Option<String>,
    /// `rolling-restart`: restarts every node in turn, the way an upgrade runs.
    pub rolling_restart: Option<String>,
    /// `fail-primary`: kills the primary and returns once the database has failed over; may print
    /// the killed node's `host:port` on its last line.
    pub fail_primary: Option<String>,
    /// `repair`: anti-entropy repair between replicas.
    pub repair: Option<String>,
}

/// A deployment file (and a cluster's state file) is at most this large: far beyond any written.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

impl Deployment {
    /// Reads and checks a deployment file; errors name the file and the bad value.
    pub fn from_file(path: &Path) -> Result<Deployment, DeployError> {
        let text =
            scalebench_measure::files::read_bounded(path, MAX_FILE_BYTES).map_err(|reason| {
                DeployError::BadSpec {
                    file: path.display().to_string(),
                    reason,
                }
            })?;
        Self::from_toml(&text).map_err(|reason| DeployError::BadSpec {
            file: path.display().to_string(),
            reason,
        })
    }

    pub fn from_toml(text: &str) -> Result<Deployment, String> {
        let d: Deployment = toml::from_str(text).map_err(|e| {
            // toml's message spans several lines (with a caret drawing); keep its first.
            e.message()
                .lines()
                .next()
                .unwrap_or("invalid TOML")
                .to_string()
        })?;
        d.check()?;
        Ok(d)
    }

    fn check(&self) -> Result<(), String> {
        self.database.built()?;
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            || self.name.starts_with('.')
        {
            return Err(format!(
                "name {:?}: use letters, digits, '-', '_' and '.'",
                self.name
            ));
        }
        // Beside each cluster's directory lies its lock file, `<name>.lock`.
        if self.name.ends_with(".lock") {
            return Err(format!(
                "name {:?}: a name may not end in \".lock\" (the name of a cluster's lock file)",
                self.name
            ));
        }
        let min = match self.database {
            Database::RedisCluster => 3,
            _ => 1,
        };
        if self.nodes < min || self.nodes > 64 {
            return Err(format!(
                "nodes = {}: {} needs {min} to 64",
                self.nodes,
                self.database.name()
            ));
        }
        if self.database == Database::Cassandra && self.nodes > 254 {
            return Err(format!("nodes = {}: at most 254", self.nodes));
        }
        // Waits are added to instants: a day is beyond any cluster's start, and cannot overflow.
        for (key, seconds) in [
            ("ready_timeout_s", self.ready_timeout_s),
            ("idle_timeout_s", self.idle_timeout_s),
        ] {
            if seconds == 0 || seconds > MAX_WAIT_S {
                return Err(format!(
                    "{key} = {seconds}: expected 1 to {MAX_WAIT_S} (a day)"
                ));
            }
        }
        one_of(
            "cassandra.commitlog_sync",
            &self.cassandra.commitlog_sync,
            &crate::cassandra::commit_log::ALL,
        )?;
        if self.database == Database::Cassandra
            && self.cassandra.commitlog_sync == crate::cassandra::commit_log::OFF
            && self
                .binding_options()
                .get("durable_writes")
                .is_some_and(|v| v != "false")
        {
            return Err(
                "cassandra.commitlog_sync = \"off\" is the keyspace's durable_writes = false: remove binding.durable_writes".into(),
            );
        }
        one_of(
            "redis.appendfsync",
            &self.redis.appendfsync,
            &["always", "everysec", "no"],
        )?;
        self.check_postgres()?;
        for (key, mb) in [
            ("hbase.heap_mb", self.hbase.heap_mb),
            ("hbase.master_heap_mb", self.hbase.master_heap_mb),
            ("hbase.gateway_heap_mb", self.hbase.gateway_heap_mb),
        ] {
            if let Some(mb) = mb.filter(|mb| !(128..=16_384).contains(mb)) {
                return Err(format!("{key} = {mb}: expected 128 to 16384"));
            }
        }
        self.check_mongo_java_server()?;
        if self.database == Database::External && self.external.url.is_empty() {
            return Err("external.url: an external deployment names its binding URL".into());
        }
        for (k, v) in self.server.iter().chain(&self.binding) {
            if matches!(v, toml::Value::Array(_) | toml::Value::Table(_)) {
                return Err(format!("{k}: give a string, number or boolean"));
            }
        }
        // Local servers listen on loopback only, on ports scalebench picks: no override may move them.
        if self.database != Database::External {
            if let Some(k) = self.server.keys().find(|k| {
                LISTEN_SETTINGS.contains(&k.to_ascii_lowercase().replace('_', "-").as_str())
            }) {
                return Err(format!(
                    "server.{k}: where a local server listens is scalebench's (loopback, ports it picks); this setting cannot be overridden"
                ));
            }
        }
        if let Some(memory) = self.memory {
            self.check_within(memory)?;
        }
        Ok(())
    }

    /// The PostgreSQL family's settings: commits, replicas and where reads go, Patroni's and
    /// Bucardo's server counts.
    fn check_postgres(&self) -> Result<(), String> {
        if let Some(s) = &self.postgres.synchronous_commit {
            one_of(
                "postgres.synchronous_commit",
                s,
                &["off", "local", "remote_write", "on", "remote_apply"],
            )?;
        }
        if self.database == Database::Postgres {
            let p = &self.postgres;
            if p.replicas > 0 && self.nodes != 1 && self.nodes != p.replicas + 1 {
                return Err(format!(
                    "nodes = {} with postgres.replicas = {}: nodes counts the primary and its replicas",
                    self.nodes, p.replicas
                ));
            }
            if p.reads_to_replicas && self.postgres_replicas() == 0 {
                return Err("postgres.reads_to_replicas needs postgres.replicas >= 1".into());
            }
        }
        self.check_reads_on_every_server()?;
        if self.database == Database::PostgresPatroni {
            if self.nodes < 2 {
                return Err(format!(
                    "nodes = {}: a Patroni deployment has at least 2 PostgreSQL servers (a primary and a replica to fail over to)",
                    self.nodes
                ));
            }
            if self.postgres.replicas > 0 || self.postgres.reads_to_replicas {
                return Err("postgres.replicas and postgres.reads_to_replicas are for database = \"postgres\": a Patroni deployment has nodes = N servers, and its clients follow the primary".into());
            }
        }
        if self.database == Database::PostgresBucardo && self.nodes < 2 {
            return Err(format!(
                "nodes = {}: a Bucardo deployment has at least 2 PostgreSQL servers",
                self.nodes
            ));
        }
        if self.database != Database::PostgresBucardo
            && self.postgres.bucardo != BucardoSync::MultiMaster
        {
            return Err(format!(
                "postgres.bucardo is for database = \"postgres-bucardo\", not {:?}",
                self.database.name()
            ));
        }
        Ok(())
    }

    /// mongo-java-server is one server with settings of its own.
    fn check_mongo_java_server(&self) -> Result<(), String> {
        if self.database == Database::MongoJavaServer {
            if self.nodes != 1 {
                return Err(format!(
                    "nodes = {}: mongo-java-server is a single server (no replication, no sharding); a MongoDB replica set or sharded cluster is an external deployment",
                    self.nodes
                ));
            }
            if let Some(k) = self.server.keys().next() {
                return Err(format!(
                    "server.{k}: mongo-java-server takes no server settings (only mongo_java_server.heap_mb)"
                ));
            }
            if let Some(mb) = self
                .mongo_java_server
                .heap_mb
                .filter(|mb| !(64..=16_384).contains(mb))
            {
                return Err(format!(
                    "mongo_java_server.heap_mb = {mb}: expected 64 to 16384"
                ));
            }
        }
        Ok(())
    }

    /// With a memory limit: what the servers size for themselves (JVM heaps, caches) is at most
    /// half of it, the rest being the processes' own memory and the page cache.
    fn check_within(&self, memory: MemoryLimit) -> Result<(), String> {
        if self.database == Database::External {
            return Err(format!(
                "memory = \"{memory}\": an external deployment's nodes are not started here; limit their memory by their own means"
            ));
        }
        let half = memory.half_mib();
        let heaps = match self.database {
            Database::Cassandra => vec![("cassandra.heap_mb", self.cassandra.heap_mb)],
            Database::Hbase => vec![
                ("hbase.heap_mb", self.hbase.heap_mb),
                ("hbase.master_heap_mb", self.hbase.master_heap_mb),
                ("hbase.gateway_heap_mb", self.hbase.gateway_heap_mb),
            ],
            Database::MongoJavaServer => {
                vec![("mongo_java_server.heap_mb", self.mongo_java_server.heap_mb)]
            }
            _ => Vec::new(),
        };
        for (key, mb) in heaps {
            if let Some(mb) = mb.filter(|mb| *mb > half) {
                return Err(format!(
                    "{key} = {mb}: more than half of memory = \"{memory}\" ({half} MiB); the rest is the JVM's own memory and the page cache"
                ));
            }
        }
        for (key, value) in self.server_settings_given() {
            let Some(dialect) = self.sized_setting(&key) else {
                continue;
            };
            // A value the server cannot read is left for it to refuse, naming it.
            if let Some(mib) = dialect.mib(&value).filter(|mib| *mib > u64::from(half)) {
                return Err(format!(
                    "server.{key} = {value:?} ({mib} MiB): more than half of memory = \"{memory}\" ({half} MiB); the rest is the server's own memory and the page cache"
                ));
            }
        }
        Ok(())
    }

    /// Whether `key` is the memory a server of this deployment sizes for itself, and how its
    /// value is written.
    fn sized_setting(&self, key: &str) -> Option<SizeDialect> {
        let (setting, dialect) = match self.database {
            Database::Postgres | Database::PostgresBucardo | Database::PostgresPatroni => {
                ("shared_buffers", SizeDialect::Postgres)
            }
            Database::Galera => ("innodb_buffer_pool_size", SizeDialect::MariaDb),
            Database::RedisCluster => ("maxmemory", SizeDialect::Redis),
            _ => return None,
        };
        (key.to_ascii_lowercase().replace('-', "_") == setting).then_some(dialect)
    }

    /// A JVM's heap in MiB: the file's `given` value, else `default`, with a memory limit at most
    /// half of it.
    pub fn jvm_heap_mb(&self, given: Option<u32>, default: u32) -> u32 {
        given.unwrap_or_else(|| match self.memory {
            Some(m) => default.min(m.half_mib()),
            None => default,
        })
    }

    /// Postgres: replicas from either `nodes` or `postgres.replicas`.
    /// Reads on every server need servers that are copies of the primary: a streaming
    /// deployment's replicas, or a Bucardo master-slave's slaves.
    fn check_reads_on_every_server(&self) -> Result<(), String> {
        let p = &self.postgres;
        if !p.reads_on_every_server {
            return Ok(());
        }
        let master_slave =
            self.database == Database::PostgresBucardo && p.bucardo == BucardoSync::MasterSlave;
        if self.database != Database::Postgres && !master_slave {
            return Err("postgres.reads_on_every_server is for database = \"postgres\" with replicas, or \"postgres-bucardo\" with bucardo = \"master-slave\"".into());
        }
        if self.database == Database::Postgres && self.postgres_replicas() == 0 {
            return Err("postgres.reads_on_every_server needs postgres.replicas >= 1".into());
        }
        if p.reads_to_replicas {
            return Err("postgres.reads_to_replicas and postgres.reads_on_every_server: give one (reads on the replicas alone, or on every server)".into());
        }
        Ok(())
    }

    pub fn postgres_replicas(&self) -> usize {
        self.postgres.replicas.max(self.nodes.saturating_sub(1))
    }

    /// The server settings of every node: with a memory limit, first the sizes the server takes
    /// for itself within it (PostgreSQL's `shared_buffers` and InnoDB's buffer pool at most a
    /// quarter of the limit, Redis's `maxmemory` half of it) unless `[server]` sets them, then the
    /// file's `[server]` settings as strings.
    pub fn server_settings(&self) -> Vec<(String, String)> {
        let mut settings = Vec::new();
        if let Some(memory) = self.memory {
            let quarter_mb = (memory.bytes() / 4 / (1024 * 1024)).min(SERVER_CACHE_DEFAULT_MB);
            let sized = match self.database {
                Database::Postgres | Database::PostgresBucardo | Database::PostgresPatroni => {
                    Some(("shared_buffers", format!("{quarter_mb}MB")))
                }
                Database::Galera => Some(("innodb_buffer_pool_size", format!("{quarter_mb}M"))),
                Database::RedisCluster => Some(("maxmemory", (memory.bytes() / 2).to_string())),
                _ => None,
            };
            if let Some((key, value)) = sized {
                if !self.server.keys().any(|k| self.sized_setting(k).is_some()) {
                    settings.push((key.to_string(), value));
                }
            }
        }
        settings.extend(self.server_settings_given());
        settings
    }

    /// The file's `[server]` settings as strings.
    fn server_settings_given(&self) -> Vec<(String, String)> {
        self.server
            .iter()
            .map(|(k, v)| (k.clone(), value_text(v)))
            .collect()
    }

    pub fn binding_options(&self) -> BTreeMap<String, String> {
        self.binding
            .iter()
            .map(|(k, v)| (k.clone(), value_text(v)))
            .collect()
    }
}

/// `value` is one of `choices`; the error names the key, the value and the choices.
fn one_of(key: &str, value: &str, choices: &[&str]) -> Result<(), String> {
    if choices.contains(&value) {
        return Ok(());
    }
    let (last, rest) = choices.split_last().expect("choices");
    Err(format!(
        "{key} = {value:?}: use {} or {last}",
        rest.join(", ")
    ))
}

/// How a server writes a memory size.
#[derive(Debug, Clone, Copy)]
enum SizeDialect {
    /// A number of 8 kB blocks, or with `B`, `kB`, `MB`, `GB`, `TB`.
    Postgres,
    /// Bytes, or with `K`, `M`, `G`, `T` (binary, either case).
    MariaDb,
    /// Bytes, or with `k`, `m`, `g` (decimal) or `kb`, `mb`, `gb` (binary), either case.
    Redis,
}

impl SizeDialect {
    /// The size in MiB; None when unreadable.
    fn mib(self, value: &str) -> Option<u64> {
        let v = value.trim();
        let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
        let (number, suffix) = v.split_at(split);
        let number: u64 = number.parse().ok()?;
        let (k, m, g) = (1u64 << 10, 1u64 << 20, 1u64 << 30);
        let unit = match (self, suffix.trim().to_ascii_lowercase().as_str()) {
            (SizeDialect::Postgres, "") => 8 * k,
            (SizeDialect::Postgres, "b") | (_, "") => 1,
            (SizeDialect::Postgres, "kb") | (SizeDialect::MariaDb, "k") => k,
            (SizeDialect::Postgres, "mb") | (SizeDialect::MariaDb, "m") => m,
            (SizeDialect::Postgres, "gb") | (SizeDialect::MariaDb, "g") => g,
            (SizeDialect::Postgres, "tb") | (SizeDialect::MariaDb, "t") => g << 10,
            (SizeDialect::Redis, "k") => 1000,
            (SizeDialect::Redis, "kb") => k,
            (SizeDialect::Redis, "m") => 1_000_000,
            (SizeDialect::Redis, "mb") => m,
            (SizeDialect::Redis, "g") => 1_000_000_000,
            (SizeDialect::Redis, "gb") => g,
            _ => return None,
        };
        Some(number.saturating_mul(unit) / m)
    }
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_deployment_with_defaults() {
        let d = Deployment::from_toml(
            "name = \"c3\"\ndatabase = \"cassandra\"\nnodes = 3\n[binding]\nreplication_factor = 3\n[server]\nconcurrent_reads = 16\n",
        )
        .unwrap();
        assert_eq!(d.database, Database::Cassandra);
        assert_eq!(d.nodes, 3);
        assert_eq!(d.cassandra.commitlog_sync, "periodic");
        assert_eq!(d.binding_options()["replication_factor"], "3");
        assert_eq!(
            d.server_settings(),
            vec![("concurrent_reads".to_string(), "16".to_string())]
        );
    }

    #[test]
    fn bad_values_are_named() {
        let err = |t: &str| Deployment::from_toml(t).unwrap_err();
        assert!(err("name = \"x\"\ndatabase = \"mongo\"").contains("mongo"));
        assert!(err("name = \"x\"\ndatabase = \"etcd\"\nnodez = 3").contains("nodez"));
        assert!(err("name = \"x\"\ndatabase = \"redis-cluster\"\nnodes = 2").contains("nodes = 2"));
        assert!(err("name = \"../x\"\ndatabase = \"etcd\"").contains("../x"));
        assert!(err("name = \"x.lock\"\ndatabase = \"etcd\"").contains("x.lock"));
        assert!(err(
            "name = \"x\"\ndatabase = \"cassandra\"\n[cassandra]\ncommitlog_sync = \"sometimes\""
        )
        .contains("sometimes"));
        assert!(err("name = \"x\"\ndatabase = \"external\"").contains("external.url"));
        assert!(
            err("name = \"x\"\ndatabase = \"postgres\"\nnodes = 3\n[postgres]\nreplicas = 1")
                .contains("nodes = 3")
        );
        assert!(
            err("name = \"x\"\ndatabase = \"postgres-bucardo\"\nnodes = 1").contains("at least 2")
        );
        // Patroni needs a server to fail over to; its clients follow the primary.
        assert!(
            err("name = \"x\"\ndatabase = \"postgres-patroni\"\nnodes = 1").contains("at least 2")
        );
        assert!(err(
            "name = \"x\"\ndatabase = \"postgres-patroni\"\nnodes = 2\n[postgres]\nreads_to_replicas = true"
        )
        .contains("follow the primary"));
    }

    /// Issue 61: Dijkshoorn's master-slave rows read on every machine: the primary first, then
    /// its replicas (worker i on server i mod n); refused where there is no replica to read on.
    #[test]
    fn reads_on_every_server_spread_over_the_primary_and_its_replicas() {
        let hosts = |p: &PostgresSection, to_replicas| {
            let servers = |s: &[&str]| s.iter().map(|h| h.to_string()).collect::<Vec<_>>();
            p.read_hosts(to_replicas, &servers(&["p:1"]), &servers(&["r:2", "r:3"]))
        };
        let section = |rest: &str| {
            Deployment::from_toml(&format!(
                "name = \"x\"\ndatabase = \"postgres\"\nnodes = 3\n[postgres]\n{rest}"
            ))
            .unwrap()
            .postgres
        };
        let every = section("reads_on_every_server = true");
        assert_eq!(hosts(&every, false).as_deref(), Some("p:1,r:2,r:3"));
        let replicas = section("reads_to_replicas = true");
        assert_eq!(
            hosts(&replicas, replicas.reads_to_replicas).as_deref(),
            Some("r:2,r:3")
        );
        assert_eq!(hosts(&section(""), false), None);
        let err = |t: &str| Deployment::from_toml(t).unwrap_err();
        assert!(err(
            "name = \"x\"\ndatabase = \"postgres\"\nnodes = 1\n[postgres]\nreads_on_every_server = true"
        )
        .contains("replicas >= 1"));
        assert!(err(
            "name = \"x\"\ndatabase = \"postgres\"\nnodes = 2\n[postgres]\nreads_on_every_server = true\nreads_to_replicas = true"
        )
        .contains("give one"));
        assert!(err(
            "name = \"x\"\ndatabase = \"postgres-bucardo\"\nnodes = 2\n[postgres]\nreads_on_every_server = true"
        )
        .contains("master-slave"));
        Deployment::from_toml(
            "name = \"x\"\ndatabase = \"postgres-bucardo\"\nnodes = 4\n[postgres]\nbucardo = \"master-slave\"\nreads_on_every_server = true",
        )
        .unwrap();
    }

    fn with_memory(database: &str, memory: &str, rest: &str) -> Result<Deployment, String> {
        Deployment::from_toml(&format!(
            "name = \"x\"\ndatabase = \"{database}\"\nnodes = 3\nmemory = \"{memory}\"\n{rest}"
        ))
    }

    #[test]
    fn a_memory_limit_sizes_heaps_and_caches_within_it() {
        let d = with_memory("cassandra", "2GiB", "").unwrap();
        assert_eq!(d.memory.unwrap().bytes(), 2 << 30);
        assert_eq!(d.jvm_heap_mb(d.cassandra.heap_mb, CASSANDRA_HEAP_MB), 512);
        let small = with_memory("cassandra", "512MiB", "").unwrap();
        assert_eq!(
            small.jvm_heap_mb(small.cassandra.heap_mb, CASSANDRA_HEAP_MB),
            256,
            "at most half the limit"
        );
        let given = with_memory("cassandra", "512MiB", "[cassandra]\nheap_mb = 200\n").unwrap();
        assert_eq!(
            given.jvm_heap_mb(given.cassandra.heap_mb, CASSANDRA_HEAP_MB),
            200
        );
        let unlimited = Deployment::from_toml("name = \"x\"\ndatabase = \"hbase\"").unwrap();
        assert_eq!(unlimited.memory, None);
        assert_eq!(unlimited.jvm_heap_mb(None, HBASE_HEAP_MB), 512);

        let pg = with_memory("postgres", "64MiB", "[postgres]\nreplicas = 2\n").unwrap();
        assert_eq!(
            pg.server_settings(),
            [("shared_buffers".to_string(), "16MB".to_string())]
        );
        let pg = with_memory("postgres", "4GiB", "[server]\nwork_mem = \"8MB\"\n").unwrap();
        assert_eq!(
            pg.server_settings(),
            [
                ("shared_buffers".to_string(), "128MB".to_string()),
                ("work_mem".to_string(), "8MB".to_string())
            ],
            "PostgreSQL's own default when a quarter is more"
        );
        let own =
            with_memory("postgres", "1GiB", "[server]\nshared_buffers = \"256MB\"\n").unwrap();
        assert_eq!(
            own.server_settings(),
            [("shared_buffers".to_string(), "256MB".to_string())],
            "the file's setting, not a second one"
        );
        let galera = with_memory("galera", "256MiB", "").unwrap();
        assert_eq!(
            galera.server_settings(),
            [("innodb_buffer_pool_size".to_string(), "64M".to_string())]
        );
        let redis = with_memory("redis-cluster", "256MiB", "").unwrap();
        assert_eq!(
            redis.server_settings(),
            [("maxmemory".to_string(), (128u64 << 20).to_string())]
        );

        // Through TOML and back, as an experiment's configuration derives a deployment.
        let text = toml::to_string(&galera).unwrap();
        assert!(text.contains("memory = \"256MiB\""), "{text}");
        assert_eq!(Deployment::from_toml(&text).unwrap().memory, galera.memory);
    }

    #[test]
    fn what_does_not_fit_in_the_memory_limit_is_refused_naming_it() {
        let err = |database: &str, memory: &str, rest: &str| {
            let e = with_memory(database, memory, rest).unwrap_err();
            assert_eq!(e.lines().count(), 1, "{e}");
            e
        };
        assert!(err("postgres", "2GB", "").contains("memory = \"2GB\""));
        assert!(err("postgres", "8MiB", "").contains("memory = \"8MiB\""));
        let e = Deployment::from_toml("name = \"x\"\ndatabase = \"postgres\"\nmemory = 2048")
            .unwrap_err();
        assert!(e.contains("memory = 2048"), "{e}");
        let e = err("cassandra", "1GiB", "[cassandra]\nheap_mb = 768\n");
        assert!(
            e.contains("cassandra.heap_mb = 768") && e.contains("memory = \"1GiB\""),
            "{e}"
        );
        assert!(with_memory("cassandra", "1GiB", "[cassandra]\nheap_mb = 512\n").is_ok());
        assert!(err("hbase", "512MiB", "[hbase]\nmaster_heap_mb = 384\n")
            .contains("hbase.master_heap_mb = 384"));
        let e = Deployment::from_toml(
            "name = \"x\"\ndatabase = \"mongo-java-server\"\nmemory = \"256MiB\"\n\
             [mongo_java_server]\nheap_mb = 200\n",
        )
        .unwrap_err();
        assert!(e.contains("mongo_java_server.heap_mb = 200"), "{e}");
        for (database, setting) in [
            ("postgres", "shared_buffers = \"600MB\""),
            ("postgres", "shared_buffers = 76800"), // 8 kB blocks: 600 MB
            ("postgres-bucardo", "shared_buffers = \"1GB\""),
            ("galera", "innodb-buffer-pool-size = \"600M\""),
            ("redis-cluster", "maxmemory = \"600mb\""),
        ] {
            let e = err(database, "1GiB", &format!("[server]\n{setting}\n"));
            let key = setting.split(' ').next().unwrap();
            assert!(e.contains(&format!("server.{key}")), "{e}");
        }
        assert!(with_memory("postgres", "1GiB", "[server]\nshared_buffers = \"512MB\"\n").is_ok());
        assert!(
            with_memory("redis-cluster", "1GiB", "[server]\nmaxmemory = \"500m\"\n").is_ok(),
            "Redis's m is a million bytes"
        );
        assert!(err(
            "external",
            "1GiB",
            "[external]\nurl = \"cassandra://h:9042\"\n"
        )
        .contains("external"));
    }
}
