//! `redis://[:password@]host:port[/db]` and `redis+cluster://host:port[?seeds=host:port,...]`: Redis
//! through the redis crate (multiplexed connection; cluster-aware client routing keys by slot).
//!
//! Data model as YCSB's Redis binding: one hash per record (field -> value). Scans use a sorted set
//! `_indices` of all keys; YCSB scores members by Java's hashCode of the key, which returns records in
//! hash order, so here every member has score 0 and ZRANGEBYLEX returns them in key order.

mod credentials;

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, FromRedisValue, Pipeline, RedisError, ServerErrorKind};
use scalebench_workload::{Change, FailureClass, FieldSet, Fields, Modification, OpError, Operation};

use crate::info::{BindingInfo, HostList};
use crate::pipeline::ConnectionGroups;
use crate::snapshot::{Held, Snapshot};
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

mod tls;

pub const INFO: BindingInfo = BindingInfo {
    name: "redis",
    schemes: &["redis", "redis+cluster", "rediss", "rediss+cluster"],
    summary: "Redis standalone or Redis Cluster (redis crate); one hash per record",
    url_example: "redis://127.0.0.1:6379, redis+cluster://127.0.0.1:7000 or rediss://h:6380 (TLS)",
    options: Options::SET,
    transactions: crate::Transactions::OneRecord,
    increments: crate::info::Increments::Numbers,
    reads: "reads and scans go to the URL's server, or with read_hosts to replicas (worker i to replica i mod n), which apply writes asynchronously; wait_replicas = N makes each write wait until N replicas acknowledged it (WAIT), so a read on them after the write sees it. Redis Cluster: reads go to the slot's master",
    pipelining: crate::info::Pipelining::Shared,
    ..BindingInfo::KEY_VALUE_STORE
};

binding_options! {
    pub struct Options {
        wait_replicas: u64 = "0" => "after each write, WAIT for this many replicas (0: do not wait); fewer acknowledgements fail as timeout",
        wait_timeout: Duration = "100ms" => "the WAIT timeout",
        scan_index: bool = "true" => "maintain the sorted set of keys that scans need (one more write per insert and delete)",
        pipeline_load: bool = "true" => "send a load batch (--batch-size) as one pipeline",
        read_hosts: HostList = "" => "host:port,... of replicas (redis:// only): reads and scans go there (worker i to replica i mod n), writes to the URL's server",
        response_timeout: Duration = "0" => "the driver's own response timeout (0: none; use --op-timeout, which counts timeouts as failures without capping latency)",
    }
}

const INDEX_KEY: &str = "_indices";

#[derive(Clone)]
enum Target {
    Single(redis::Client, redis::AsyncConnectionConfig),
    Cluster(redis::cluster::ClusterClient),
}

impl Target {
    /// host:port of a standalone server, for messages (no password).
    fn address(&self) -> String {
        match self {
            Target::Single(c, _) => c.get_connection_info().addr().to_string(),
            Target::Cluster(_) => "the cluster".into(),
        }
    }

    async fn connect(&self) -> Result<Conn, RedisError> {
        Ok(match self {
            Target::Single(c, cfg) => {
                Conn::Single(c.get_multiplexed_async_connection_with_config(cfg).await?)
            }
            Target::Cluster(c) => Conn::Cluster(c.get_async_connection().await?),
        })
    }
}

pub struct RedisFactory {
    target: Target,
    /// Replicas that serve the reads (`read_hosts`); empty: the URL's server.
    read_targets: Vec<Target>,
    url: String,
    fields: Vec<String>,
    wait_replicas: u64,
    wait_timeout: Duration,
    scan_index: bool,
    pipeline_load: bool,
    /// `--pipeline`: the connections slots share, to the URL's server and to the replicas.
    groups: ConnectionGroups<Conn>,
    replica_groups: ConnectionGroups<Conn>,
}

impl RedisFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        let bad =
            |e: RedisError| BindingError::Config(format!("invalid database URL '{url}': {e}"));
        let (without_tls, tls) = tls::RedisTls::from_url(config.url.url(), &url)?;
        let u = &credentials::with_env_password(&without_tls);
        let options = Options::read(INFO.name, &config.options)?;
        // The redis crate gives up after 500 ms by default; a benchmark must not cap latency that way.
        let response_timeout = Some(options.response_timeout).filter(|t| !t.is_zero());
        let connect_timeout = config.connect_timeout;
        let target = if u.scheme().ends_with("+cluster") {
            let mut seeds = vec![seed_url(
                &tls,
                u,
                u.host_str().unwrap_or("127.0.0.1"),
                u.port().unwrap_or(6379),
            )];
            if let Some((_, list)) = u.query_pairs().find(|(k, _)| k == "seeds") {
                for s in list.split(',').filter(|s| !s.is_empty()) {
                    let (h, p) = s.rsplit_once(':').unwrap_or((s, "6379"));
                    let port = p.parse().map_err(|_| {
                        BindingError::Config(format!("invalid seed '{s}' in '{url}'"))
                    })?;
                    seeds.push(seed_url(&tls, u, h, port));
                }
            }
            let mut builder = redis::cluster::ClusterClient::builder(seeds)
                .connection_timeout(connect_timeout)
                .response_timeout(response_timeout.unwrap_or(Duration::from_secs(365 * 24 * 3600)));
            if let Some(certs) = &tls.certificates {
                builder = builder.certs(certs.clone());
            }
            Target::Cluster(builder.build().map_err(bad)?)
        } else {
            let cfg = redis::AsyncConnectionConfig::new()
                .set_response_timeout(response_timeout)
                .set_connection_timeout(Some(connect_timeout));
            Target::Single(tls.client(u).map_err(bad)?, cfg)
        };
        let read_targets = match (&target, &options.read_hosts.0[..]) {
            (_, []) => Vec::new(),
            (Target::Cluster(_), _) => {
                return Err(BindingError::Config(format!(
                    "redis.read_hosts needs a redis:// URL (one server and its replicas), not '{url}': a cluster reads from its slots' masters"
                )))
            }
            (Target::Single(_, cfg), hosts) => hosts
                .iter()
                .map(|replica_host| {
                    let invalid = || {
                        BindingError::Config(format!(
                            "invalid value '{replica_host}' in property 'redis.read_hosts': expected host:port"
                        ))
                    };
                    let mut replica = u.clone();
                    replica.set_host(Some(&replica_host.host)).map_err(|_| invalid())?;
                    replica.set_port(Some(replica_host.port)).map_err(|_| invalid())?;
                    let client = tls.client(&replica).map_err(bad)?;
                    Ok(Target::Single(client, cfg.clone()))
                })
                .collect::<Result<_, BindingError>>()?,
        };
        let factory = RedisFactory {
            target,
            read_targets,
            url,
            fields: config.schema.field_names.to_vec(),
            wait_replicas: options.wait_replicas,
            wait_timeout: options.wait_timeout,
            scan_index: options.scan_index,
            pipeline_load: options.pipeline_load,
            groups: ConnectionGroups::new(config.pipeline),
            replica_groups: ConnectionGroups::new(config.pipeline),
        };
        // Fail now, with the URL, rather than in every worker.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        runtime.block_on(config.cancel.unless_cancelled(async {
            let mut c = factory.connection().await?;
            let pong: Result<String, _> = c.query(&redis::cmd("PING")).await;
            pong.map_err(|e| BindingError::Connect {
                url: factory.url.clone(),
                reason: crate::tls::explain(&e.to_string()),
            })?;
            for replica in &factory.read_targets {
                let reached: Result<String, RedisError> = match replica.connect().await {
                    Ok(mut c) => c.query(&redis::cmd("PING")).await,
                    Err(e) => Err(e),
                };
                reached.map_err(|e| BindingError::Connect {
                    url: format!("{} (redis.read_hosts)", replica.address()),
                    reason: crate::tls::explain(&e.to_string()),
                })?;
            }
            if config.drop_schema {
                // Redis has no table: dropping the schema empties the database (FLUSHDB; every master
                // of a cluster).
                let flushed: Result<(), _> = c.query(&redis::cmd("FLUSHDB")).await;
                flushed.map_err(|e| {
                    BindingError::Schema(format!("cannot empty {}: {e}", factory.url))
                })?;
            }
            Ok::<_, BindingError>(())
        }))?;
        Ok(factory)
    }

    async fn connection(&self) -> Result<Conn, BindingError> {
        self.target
            .connect()
            .await
            .map_err(|e| BindingError::Connect {
                url: self.url.clone(),
                reason: crate::tls::explain(&e.to_string()),
            })
    }
}

/// A cluster seed's URL: the URL's credentials and TLS (`rediss`, `#insecure`), another node.
fn seed_url(tls: &tls::RedisTls, u: &url::Url, host: &str, port: u16) -> String {
    let scheme = if tls.certificates.is_some() { "rediss" } else { "redis" };
    let seed = match u.password() {
        Some(p) => format!("{scheme}://{}:{}@{host}:{port}", u.username(), p),
        None => format!("{scheme}://{host}:{port}"),
    };
    match url::Url::parse(&seed) {
        Ok(parsed) => tls.driver_url(&parsed),
        Err(_) => seed,
    }
}

#[derive(Clone)]
enum Conn {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl Conn {
    async fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, RedisError> {
        match self {
            Conn::Single(c) => cmd.query_async(c).await,
            Conn::Cluster(c) => cmd.query_async(c).await,
        }
    }

    async fn pipe<T: FromRedisValue>(&mut self, p: &Pipeline) -> Result<T, RedisError> {
        match self {
            Conn::Single(c) => p.query_async(c).await,
            Conn::Cluster(c) => p.query_async(c).await,
        }
    }

    fn is_cluster(&self) -> bool {
        matches!(self, Conn::Cluster(_))
    }
}

impl RedisFactory {
    /// Worker `worker`'s connections: the URL's server, and its replica of `read_hosts` when
    /// `with_replica`; those of its group of `--pipeline` slots when `pipelined` (the verify pass
    /// after a run connects alone).
    async fn binding(
        &self,
        worker: usize,
        with_replica: bool,
        pipelined: bool,
    ) -> Result<RedisBinding, BindingError> {
        let alone = ConnectionGroups::new(1);
        let (groups, replica_groups) = match pipelined {
            true => (&self.groups, &self.replica_groups),
            false => (&alone, &alone),
        };
        let replica = match self.read_targets.len() {
            _ if !with_replica => None,
            0 => None,
            n => {
                // A group of --pipeline slots shares one replica: group g's is g mod n.
                let target = self.read_targets[replica_groups.group_of(worker) % n].clone();
                let conn = replica_groups
                    .connect(worker, || target.connect())
                    .await
                    .map_err(|e| BindingError::Connect {
                        url: target.address(),
                        reason: e.to_string(),
                    })?;
                Some(Link {
                    conn: Some(conn),
                    name: target.address(),
                    target,
                })
            }
        };
        Ok(RedisBinding {
            primary: Link {
                conn: Some(groups.connect(worker, || self.connection()).await?),
                target: self.target.clone(),
                name: self.url.clone(),
            },
            replica,
            fields: self.fields.clone(),
            wait_replicas: self.wait_replicas,
            wait_timeout: self.wait_timeout,
            scan_index: self.scan_index,
            pipeline_load: self.pipeline_load,
            txn: Held::Idle,
            read_cmd: Cmd::default(),
        })
    }
}

impl BindingFactory for RedisFactory {
    type Binding = RedisBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, worker: usize) -> Result<RedisBinding, BindingError> {
        self.binding(worker, true, true).await
    }

    /// Reads from the URL's server: a replica of `read_hosts` may not have every acknowledged write
    /// yet.
    async fn connect_to_verify(&self, worker: usize) -> Result<RedisBinding, BindingError> {
        self.binding(worker, false, false).await
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

/// A connection and where it goes.
struct Link {
    /// `None` after the connection broke; the next operation reconnects (its latency includes that).
    conn: Option<Conn>,
    target: Target,
    /// The redacted URL or the replica's host:port, for messages.
    name: String,
}

impl Link {
    async fn get(&mut self) -> Result<&mut Conn, OpError> {
        if self.conn.is_none() {
            let conn = self.target.connect().await;
            let conn = conn.map_err(|e| {
                OpError::new(
                    FailureClass::Unavailable,
                    format!("cannot reconnect to {}: {e}", self.name),
                )
            })?;
            self.conn = Some(conn);
        }
        Ok(self.conn.as_mut().expect("just connected"))
    }

    /// A broken connection is dropped so the next operation reconnects.
    fn check<T>(&mut self, r: Result<T, RedisError>) -> Result<T, OpError> {
        r.map_err(|e| {
            if e.is_io_error() || e.is_connection_dropped() {
                self.conn = None;
            }
            classify(e)
        })
    }

    async fn run<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, OpError> {
        let r = self.get().await?.query(cmd).await;
        self.check(r)
    }

    async fn run_pipe<T: FromRedisValue>(&mut self, p: &Pipeline) -> Result<T, OpError> {
        let r = self.get().await?.pipe(p).await;
        self.check(r)
    }
}

/// An increment of an existing hash's fields: ARGV holds (i|f, field, amount) triples.
const INCREMENT_SCRIPT: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end \
for i = 1, #ARGV, 3 do \
if ARGV[i] == 'i' then redis.call('HINCRBY', KEYS[1], ARGV[i + 1], ARGV[i + 2]) \
else redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i + 1], ARGV[i + 2]) end \
end \
return 1";

pub struct RedisBinding {
    /// The URL's server: every write, and reads without read_hosts.
    primary: Link,
    /// The replica this worker reads from (`read_hosts`).
    replica: Option<Link>,
    fields: Vec<String>,
    wait_replicas: u64,
    wait_timeout: Duration,
    scan_index: bool,
    pipeline_load: bool,
    /// A sequence's transaction ([`crate::Transactions::OneRecord`]).
    txn: Held<Snapshot>,
    /// A read's HMGET, rebuilt in place: its buffers are reused, not allocated per operation.
    read_cmd: Cmd,
}


/// A transaction's commit: the record's fields (HMGET of ARGV[2..n+1]) must still be what the
/// transaction read (ARGV[n+2..2n+1]: '=' and the value, or '' for none), else nothing is written
/// and the answer is 0. Then ARGV[2n+2] is 'del' (the record deleted) or 'set', followed by the
/// new values ('=' and the value, '' to leave the field alone, '-' to remove it: a record deleted
/// and written anew). One key: a cluster runs it on the key's node.
const COMMIT_SCRIPT: &str = "local n = tonumber(ARGV[1]) \
local cur = redis.call('HMGET', KEYS[1], unpack(ARGV, 2, 1 + n)) \
for i = 1, n do \
local was = ARGV[1 + n + i] \
if cur[i] then if was ~= '=' .. cur[i] then return 0 end elseif was ~= '' then return 0 end \
end \
if ARGV[2 + 2 * n] == 'del' then redis.call('DEL', KEYS[1]) return 1 end \
local set = {} \
local gone = {} \
for i = 1, n do \
local v = ARGV[2 + 2 * n + i] \
if v == '-' then table.insert(gone, ARGV[1 + i]) \
elseif v ~= '' then table.insert(set, ARGV[1 + i]) table.insert(set, string.sub(v, 2)) end \
end \
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end \
if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end \
return 1";

fn classify(e: RedisError) -> OpError {
    let class = if e.is_timeout() {
        FailureClass::Timeout
    } else if e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
    {
        FailureClass::Unavailable
    } else {
        match e.kind() {
            ErrorKind::Server(
                ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
                | ServerErrorKind::TryAgain
                | ServerErrorKind::BusyLoading
                | ServerErrorKind::ReadOnly,
            )
            | ErrorKind::ClusterConnectionNotFound
            | ErrorKind::Io => FailureClass::Unavailable,
            ErrorKind::Server(ServerErrorKind::ExecAbort) => FailureClass::Conflict,
            _ => FailureClass::Other,
        }
    };
    OpError::new(class, e.to_string())
}

impl RedisBinding {
    /// The transaction's record, read from the URL's server at its first step (`None`: no
    /// transaction).
    async fn in_txn(&mut self, key: &str) -> Result<Option<&mut Snapshot>, OpError> {
        match &self.txn {
            Held::Idle => return Ok(None),
            Held::Begun => {
                let cmd = self.hmget(key, FieldSet::All);
                let values: Vec<Option<String>> = self.run(&cmd).await?;
                let original = values.iter().any(Option::is_some).then_some(values);
                self.txn = Held::Holding(Snapshot::new(key, original));
            }
            Held::Holding(s) => s.check_key(key)?,
        }
        match &mut self.txn {
            Held::Holding(s) => Ok(Some(s)),
            _ => unreachable!("held above"),
        }
    }

    /// Writes the transaction's record if it is still what the transaction read (else a
    /// conflict); a transaction that changed nothing writes nothing.
    async fn commit(&mut self, s: Snapshot) -> Result<(), OpError> {
        if !s.changed() {
            return Ok(());
        }
        let marked = |v: Option<&Option<String>>| match v {
            Some(Some(v)) => format!("={v}"),
            _ => String::new(),
        };
        let n = self.fields.len();
        let mut c = redis::cmd("EVAL");
        c.arg(COMMIT_SCRIPT).arg(1).arg(&s.key).arg(n);
        for f in &self.fields {
            c.arg(f);
        }
        for i in 0..n {
            c.arg(marked(s.original.as_ref().map(|r| &r[i])));
        }
        match &s.current {
            None => {
                c.arg("del");
            }
            Some(record) => {
                c.arg("set");
                for (i, v) in record.iter().enumerate() {
                    let was = s.original.as_ref().and_then(|o| o[i].as_ref());
                    c.arg(match (v, was) {
                        (v, w) if v.as_ref() == w => String::new(),
                        (None, Some(_)) => "-".to_string(),
                        (v, _) => marked(Some(v)),
                    });
                }
            }
        }
        let applied: i64 = self.run(&c).await?;
        if applied == 0 {
            return Err(OpError::new(
                FailureClass::Conflict,
                format!("{} changed during the transaction: nothing written", s.key),
            ));
        }
        if self.scan_index {
            match (&s.original, &s.current) {
                (Some(_), None) => {
                    let _: i64 = self.run(redis::cmd("ZREM").arg(INDEX_KEY).arg(&s.key)).await?;
                }
                (None, Some(_)) => {
                    let _: i64 = self.run(&Self::index_add(&s.key)).await?;
                }
                _ => {}
            }
        }
        self.wait_for_replicas().await
    }

    /// Runs a command on the URL's server.
    async fn run<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, OpError> {
        self.primary.run(cmd).await
    }

    /// Where reads go: the worker's replica, else the URL's server.
    /// The records of `keys` that exist, into `out`.
    async fn read_keys(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        let cluster = matches!(self.primary.target, Target::Cluster(_));
        let rows: Vec<Vec<Option<String>>> = if cluster {
            // Keys live on different nodes: one command each.
            let mut rows = Vec::with_capacity(keys.len());
            for k in keys {
                let cmd = self.hmget(k, fields);
                rows.push(self.run(&cmd).await?);
            }
            rows
        } else {
            let mut p = redis::pipe();
            for k in keys {
                p.add_command(self.hmget(k, fields));
            }
            self.reader().run_pipe(&p).await?
        };
        for (k, values) in keys.iter().zip(rows) {
            let mut f = Fields::new();
            if self.fill(fields, values, &mut f) {
                out.push((k.clone(), f));
            }
        }
        Ok(())
    }

    fn reader(&mut self) -> &mut Link {
        self.replica.as_mut().unwrap_or(&mut self.primary)
    }

    /// `WAIT n timeout` after a write, when configured.
    async fn wait_for_replicas(&mut self) -> Result<(), OpError> {
        if self.wait_replicas == 0 {
            return Ok(());
        }
        let acked: u64 = self
            .run(
                redis::cmd("WAIT")
                    .arg(self.wait_replicas)
                    .arg(self.wait_timeout.as_millis() as u64),
            )
            .await?;
        if acked < self.wait_replicas {
            return Err(OpError::new(
                FailureClass::Timeout,
                format!(
                    "WAIT: {acked} of {} replicas acknowledged within {}",
                    self.wait_replicas,
                    humantime::format_duration(self.wait_timeout)
                ),
            ));
        }
        Ok(())
    }

    fn hset(&self, key: &str, values: &Fields) -> Cmd {
        let mut c = redis::cmd("HSET");
        c.arg(key);
        for (f, v) in values {
            c.arg(&self.fields[*f]).arg(v);
        }
        c
    }

    fn index_add(key: &str) -> Cmd {
        let mut c = redis::cmd("ZADD");
        c.arg(INDEX_KEY).arg(0).arg(key);
        c
    }

    fn fill(&self, fields: FieldSet, values: Vec<Option<String>>, out: &mut Fields) -> bool {
        let idx = fields.indices(self.fields.len());
        let mut any = false;
        for (i, v) in idx.zip(values) {
            if let Some(v) = v {
                out.push((i, v));
                any = true;
            }
        }
        any
    }

    fn hmget(&self, key: &str, fields: FieldSet) -> Cmd {
        let mut c = Cmd::default();
        self.hmget_into(&mut c, key, fields);
        c
    }

    /// HMGET of `key`'s `fields`, written into `c` (cleared first).
    fn hmget_into(&self, c: &mut Cmd, key: &str, fields: FieldSet) {
        c.clear();
        c.arg("HMGET").arg(key);
        match fields {
            FieldSet::All => {
                for f in &self.fields {
                    c.arg(f);
                }
            }
            FieldSet::One(i) => {
                c.arg(&self.fields[i]);
            }
        }
    }
}

impl Binding for RedisBinding {
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
        let mut cmd = std::mem::take(&mut self.read_cmd);
        self.hmget_into(&mut cmd, key, fields);
        let values = self.reader().run::<Vec<Option<String>>>(&cmd).await;
        self.read_cmd = cmd;
        if !self.fill(fields, values?, out) {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
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
        out.clear();
        if !self.scan_index {
            return Err(OpError::new(
                FailureClass::Other,
                "scans need redis.scan_index=true",
            ));
        }
        let keys: Vec<String> = self
            .reader()
            .run(
                redis::cmd("ZRANGEBYLEX")
                    .arg(INDEX_KEY)
                    .arg(format!("[{start_key}"))
                    .arg("+")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(count),
            )
            .await?;
        // A key deleted between the index lookup and the read is skipped, as YCSB does.
        self.read_keys(&keys, fields, out).await
    }

    /// One HMGET each in one pipeline (a cluster: one command each, its keys on several nodes).
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        self.read_keys(keys, fields, out).await
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let width = self.fields.len();
        if let Some(s) = self.in_txn(key).await? {
            return s.update(values, true, width);
        }
        // As YCSB: HSET overwrites the fields (and would create a missing record).
        let _: i64 = self.run(&self.hset(key, values)).await?;
        self.wait_for_replicas().await
    }

    /// HINCRBY (integers) or HINCRBYFLOAT (doubles) of each column, in one script so that a
    /// missing record is not created by them (one key: a cluster runs it on the key's node).
    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        if let Some(s) = self.in_txn(key).await? {
            return s.increment(changes);
        }
        let mut c = redis::cmd("EVAL");
        c.arg(INCREMENT_SCRIPT).arg(1).arg(key);
        for m in changes {
            let how = match m.change {
                Change::AddInteger(_) => "i",
                _ => "f",
            };
            c.arg(how).arg(&self.fields[m.column]).arg(m.change.amount());
        }
        let found: i64 = self.run(&c).await?;
        if found == 0 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        self.wait_for_replicas().await
    }

    /// The HSETs in one MULTI/EXEC: all applied or none (a cluster: one after another, the keys
    /// on several nodes).
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        if matches!(self.primary.target, Target::Cluster(_)) {
            for (key, v) in keys.iter().zip(values) {
                let _: i64 = self.run(&self.hset(key, v)).await?;
            }
        } else {
            let mut p = redis::pipe();
            p.atomic();
            for (key, v) in keys.iter().zip(values) {
                p.add_command(self.hset(key, v)).ignore();
            }
            let _: () = self.primary.run_pipe(&p).await?;
        }
        self.wait_for_replicas().await
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let _: i64 = self.run(&self.hset(key, values)).await?;
        if self.scan_index {
            let _: i64 = self.run(&Self::index_add(key)).await?;
        }
        self.wait_for_replicas().await
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        let cluster = self.primary.get().await?.is_cluster();
        if !self.pipeline_load || cluster {
            for r in records {
                self.insert(&r.key, &r.values).await?;
            }
            return Ok(());
        }
        let mut p = redis::pipe();
        for r in records {
            p.add_command(self.hset(&r.key, &r.values)).ignore();
            if self.scan_index {
                p.add_command(Self::index_add(&r.key)).ignore();
            }
        }
        let _: () = self.primary.run_pipe(&p).await?;
        self.wait_for_replicas().await
    }

    /// A sequence's steps in one transaction: the record read at the first, changed in memory,
    /// written at the commit by [`COMMIT_SCRIPT`] if it is still what was read.
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
        let removed: i64 = self.run(redis::cmd("DEL").arg(key)).await?;
        if self.scan_index {
            let _: i64 = self.run(redis::cmd("ZREM").arg(INDEX_KEY).arg(key)).await?;
        }
        if removed == 0 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        self.wait_for_replicas().await
    }
}
