//! Local clusters driven by a deployment file: up, down, status, add and remove nodes, wait until
//! ready and idle, flush and compact, snapshot and restore, space on disk.
//!
//! A cluster lives in its own directory (`<clusters dir>/<name>`): `cluster.json` records the
//! deployment, every node's ports, directories and process, so later commands (another `scalebench`
//! invocation) find and drive it. Each node has a directory of its own with its data and
//! `server.log`. Servers listen on loopback only: Cassandra node N on 127.0.0.N, the others on
//! 127.0.0.1 with ports of their own.

mod apply;
mod bucardo;
#[cfg(feature = "cassandra")]
mod cassandra;
mod down;
mod engine;
mod etcd;
mod external;
mod galera;
mod hbase;
mod lock;
mod mongo_java_server;
mod operation;
mod patroni;
mod postgres;
#[cfg(feature = "redis")]
mod redis;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::account::{remove_relocated_servers, remove_tree_with_servers};
use crate::host::run;
use crate::memory::{Controller, MemoryGroup, MemoryLimit};
use crate::process::ProcessRef;
use crate::space;
use crate::spec::{Database, Deployment};
use crate::DeployError;
pub use apply::Applied;
pub use down::{not_stopped, NodeStop};
use engine::{poll, Engine};
pub use engine::{ClusterState, NodeState, RUNNING_SNAPSHOTS};
pub use lock::StateLock;
pub use operation::{operation_text, Operation, OperationKind};
use scalebench_measure::Space;

/// In a snapshot's directory: the servers hold the snapshot (each node's [`RUNNING_SNAPSHOTS`]);
/// the file lists what was taken.
const HELD_BY_SERVERS: &str = "held-by-servers";

/// A database whose status checks this build leaves out (`--features embedded`) has no engine: its
/// deployment is refused when read ([`Database::built`]), and a cluster of it when opened.
fn engine(db: Database) -> Result<Box<dyn Engine>, DeployError> {
    db.built().map_err(DeployError::BadInput)?;
    Ok(match db {
        #[cfg(feature = "cassandra")]
        Database::Cassandra => Box::new(cassandra::Cassandra),
        #[cfg(feature = "redis")]
        Database::RedisCluster => Box::new(redis::RedisCluster),
        Database::Postgres => Box::new(postgres::Postgres),
        Database::PostgresBucardo => Box::new(bucardo::Bucardo),
        Database::PostgresPatroni => Box::new(patroni::Patroni),
        Database::Galera => Box::new(galera::Galera),
        Database::Etcd => Box::new(etcd::Etcd),
        Database::Hbase => Box::new(hbase::Hbase),
        Database::MongoJavaServer => Box::new(mongo_java_server::MongoJavaServer),
        Database::External => Box::new(external::External),
        // A build with one of the two drivers (a crate's tests) refuses the other.
        #[cfg(not(feature = "cassandra"))]
        Database::Cassandra => {
            return Err(DeployError::BadInput(format!("{} is not built", db.name())))
        }
        #[cfg(not(feature = "redis"))]
        Database::RedisCluster => {
            return Err(DeployError::BadInput(format!("{} is not built", db.name())))
        }
    })
}

/// How a node looks to `status`.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatus {
    pub id: String,
    pub role: String,
    pub endpoint: String,
    pub pid: Option<u32>,
    pub running: bool,
    /// Running but stopped by a signal (SIGSTOP): it answers nothing until `kill -CONT PID`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_by_signal: bool,
    pub dir: String,
    /// With a memory limit, a running node's memory use now (its group's, page cache included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_used_bytes: Option<u64>,
    /// With a memory limit, how many of the node's processes the kernel killed for want of memory
    /// since it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterStatus {
    pub name: String,
    pub database: String,
    pub url: String,
    /// Each node's memory limit, when the deployment sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryLimit>,
    pub nodes: Vec<NodeStatus>,
    /// Empty when every node is up and serving.
    pub not_ready: Vec<String>,
    /// Empty when idle (only asked when ready).
    pub busy: Vec<String>,
}

/// A cluster on this machine (or, for `external`, a description of one elsewhere).
pub struct Cluster {
    pub state: ClusterState,
    engine: Box<dyn Engine>,
    /// Tests: stop every node when the handle is dropped. The CLI's clusters outlive the command.
    stop_on_drop: bool,
    /// Held by a handle that changes the cluster (`up`, [`Cluster::open_to_change`]): dropped
    /// after the nodes when the handle goes.
    lock: Option<StateLock>,
}

const STATE_FILE: &str = "cluster.json";
/// A cluster's directory or state file is trusted only if it is the caller's own (not a link) and
/// writable by nobody else: an edited `cluster.json` could name a stranger's process to signal.
fn trusted(path: &Path) -> Result<(), DeployError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).map_err(|e| DeployError::io(path, e))?;
    let me = nix::unistd::geteuid().as_raw();
    let why = if m.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if m.uid() != me {
        Some(format!("belongs to uid {}, not to you (uid {me})", m.uid()))
    } else if m.mode() & 0o022 != 0 {
        Some(format!(
            "is writable by others (mode {:o})",
            m.mode() & 0o777
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(DeployError::BadInput(format!(
            "{} {why}: a cluster's state decides which processes get signals, so it is used only when it is yours alone",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Written in every cluster directory `up` creates; `up` removes no other directory.
const MARKER_FILE: &str = ".scalebench-cluster";
/// The fact a cluster that did not come up keeps: why (its servers are stopped).
const UP_FAILED: &str = "up_failed";

impl Cluster {
    /// The cluster directory of a deployment: `<clusters_dir>/<name>`.
    pub fn dir_for(clusters_dir: &Path, deployment: &Deployment) -> PathBuf {
        clusters_dir.join(&deployment.name)
    }

    /// Starts the deployment's nodes and waits until the cluster is ready.
    pub fn up(
        deployment: Deployment,
        deployment_file: &Path,
        clusters_dir: &Path,
        stop_on_drop: bool,
    ) -> Result<Cluster, DeployError> {
        Self::check_machine(&deployment)?;
        let dir = Self::dir_for(clusters_dir, &deployment);
        // Held until the returned handle goes: nobody else brings this cluster up or down meanwhile.
        let lock = StateLock::take(&dir)?;
        Self::clear_for_up(&dir, &deployment.name)?;
        std::fs::create_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
        // Someone else's directory (made there before us) would hold state others could edit.
        trusted(&dir)?;
        let marker = dir.join(MARKER_FILE);
        std::fs::write(&marker, "a scalebench cluster directory\n")
            .map_err(|e| DeployError::io(&marker, e))?;
        let dir = std::fs::canonicalize(&dir).map_err(|e| DeployError::io(&dir, e))?;
        let engine = engine(deployment.database)?;
        let mut cluster = Cluster {
            state: ClusterState {
                deployment_file: std::fs::canonicalize(deployment_file)
                    .unwrap_or_else(|_| deployment_file.to_path_buf()),
                deployment,
                dir,
                nodes: Vec::new(),
                shared_ports: BTreeMap::new(),
                next_node: 0,
                facts: BTreeMap::new(),
                server_account: engine.account(),
            },
            engine,
            stop_on_drop,
            lock: Some(lock),
        };
        let mut outcome = cluster.engine.up(&mut cluster.state);
        if outcome.is_ok() {
            // The count a fault's node is checked against before anything starts.
            debug_assert_eq!(
                cluster.state.nodes.len(),
                cluster.engine.nodes_at_up(&cluster.state.deployment),
                "nodes_at_up of {}",
                cluster.state.deployment.database.name()
            );
        }
        // Whatever started is recorded, so `down` can stop it even if forming the cluster failed.
        cluster.save()?;
        if outcome.is_ok() {
            outcome = cluster.wait_ready();
        }
        if let Err(e) = outcome {
            // Stopped, and marked: nothing takes a half-made cluster for a running one.
            cluster.down();
            cluster.state.facts.insert(UP_FAILED.into(), e.to_string());
            let _ = cluster.save();
            return Err(e);
        }
        Ok(cluster)
    }

    /// The ids `up` gives the nodes of `deployment` (node1, node2, ... in the order its engine
    /// starts them, support processes such as HBase's ZooKeeper included).
    pub fn node_ids_at_up(deployment: &Deployment) -> Vec<String> {
        // A deployment this build cannot run was refused when read (Database::built).
        let n = engine(deployment.database).map_or(0, |e| e.nodes_at_up(deployment));
        (1..=n).map(|k| format!("node{k}")).collect()
    }

    /// Whether this machine can run `deployment` as it asks (`up` checks it before anything
    /// starts): a memory limit needs a memory controller and the right to make groups in it, and a
    /// cluster never runs unlimited by mistake.
    pub fn check_machine(deployment: &Deployment) -> Result<(), DeployError> {
        if let Some(limit) = deployment.memory {
            Controller::open()
                .map_err(|e| DeployError::BadInput(format!("memory = \"{limit}\": {e}")))?;
        }
        Ok(())
    }

    /// Why the `up` that made this cluster failed, if it did: its servers are stopped, and it
    /// serves nothing until it is brought up again.
    pub fn up_failed(&self) -> Option<&str> {
        self.state.facts.get(UP_FAILED).map(String::as_str)
    }

    /// Makes way for a new cluster in `dir`: removes only a directory scalebench created (it holds
    /// [`MARKER_FILE`] or a readable state file) whose recorded nodes are all stopped; refuses, naming
    /// the path, otherwise.
    fn clear_for_up(dir: &Path, name: &str) -> Result<(), DeployError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(DeployError::io(dir, e)),
        };
        if entries.count() == 0 {
            return Ok(());
        }
        // A readable state file also marks a cluster directory (made before the marker existed).
        if !dir.join(MARKER_FILE).is_file() && Cluster::open(dir).is_err() {
            return Err(DeployError::Failed(format!(
                "{} exists and is not a scalebench cluster directory: not touching it \
                 (choose another --clusters-dir or deployment name)",
                dir.display()
            )));
        }
        if dir.join(STATE_FILE).exists() {
            match Cluster::open(dir) {
                Ok(existing) if existing.state.nodes.iter().any(|n| n.is_running()) => {
                    return Err(DeployError::Failed(format!(
                        "cluster {name} is already up ({}); `cluster down` it first",
                        dir.display()
                    )));
                }
                Ok(_) => {}
                // Its servers may still run: starting new ones would orphan them.
                Err(e) => {
                    return Err(DeployError::Failed(format!(
                        "cannot read the state of cluster {name} in {} ({e}): stop its servers and \
                         remove the directory yourself",
                        dir.display()
                    )))
                }
            }
        }
        remove_tree_with_servers(dir)
    }

    /// A cluster `up` started earlier, from its directory.
    pub fn open(dir: &Path) -> Result<Cluster, DeployError> {
        let file = dir.join(STATE_FILE);
        if !file.exists() {
            return Err(DeployError::Failed(format!(
                "no cluster in {}; start it with `scalebench cluster up`",
                dir.display()
            )));
        }
        // The state decides which processes get signals: it is trusted only if it is the
        // caller's own and nobody else could have written it.
        trusted(dir)?;
        trusted(&file)?;
        let text = scalebench_measure::files::read_bounded(&file, crate::spec::MAX_FILE_BYTES)
            .map_err(|e| DeployError::Failed(format!("{}: {e}", file.display())))?;
        let mut state: ClusterState = serde_json::from_str(&text)
            .map_err(|e| DeployError::Failed(format!("{}: {e}", file.display())))?;
        let engine = engine(state.deployment.database)?;
        state.server_account = engine.account();
        Ok(Cluster {
            engine,
            state,
            stop_on_drop: false,
            lock: None,
        })
    }

    /// [`Cluster::open`] for a command that changes the cluster: its lock taken first (refused,
    /// exit 2, naming the holder, while another command holds it) and held by the handle, the
    /// state read under it.
    pub fn open_to_change(dir: &Path) -> Result<Cluster, DeployError> {
        let lock = StateLock::take(dir)?;
        let mut cluster = Cluster::open(dir)?;
        cluster.lock = Some(lock);
        Ok(cluster)
    }

    pub fn name(&self) -> &str {
        &self.state.deployment.name
    }

    /// Records the state (atomically: a crash never leaves half a file), mode 0600 whatever the
    /// umask: it may hold a password.
    pub fn save(&self) -> Result<(), DeployError> {
        let file = self.state.dir.join(STATE_FILE);
        let text = serde_json::to_string_pretty(&self.state)
            .map_err(|e| DeployError::Failed(e.to_string()))?;
        scalebench_measure::files::write_private_atomically(&file, text.as_bytes())
            .map_err(DeployError::Failed)
    }

    /// Reads the state again from the cluster's file: what another handle (another command, an
    /// operation under load) has changed since this one was opened.
    pub fn reload(&mut self) -> Result<(), DeployError> {
        self.state = Cluster::open(&self.state.dir)?.state.clone();
        Ok(())
    }

    pub fn url(&self) -> String {
        self.engine.url(&self.state)
    }

    /// The system account the servers run as when scalebench runs as root.
    pub fn server_account(&self) -> &'static str {
        self.engine.account()
    }

    /// Binding options of the deployment file, then the engine's (e.g. PostgreSQL's read replicas).
    pub fn binding_options(&self) -> BTreeMap<String, String> {
        let mut o = self.state.deployment.binding_options();
        o.extend(self.engine.binding_options(&self.state));
        o
    }

    /// Whether the benchmark table is the deployment's: a replication that copies rows but not
    /// DDL (Bucardo) needs it on every server and registered, so the deployment creates and resets
    /// it ([`Cluster::prepare_table`]) where the binding's `--create-schema`/`--drop-schema` would.
    pub fn owns_table(&self) -> bool {
        self.engine.owns_table()
    }

    /// Creates the benchmark table (`create_sql`, as the binding would) where the deployment owns it;
    /// `drop` empties it (drops and creates it again). Records the new state.
    pub fn prepare_table(
        &mut self,
        table: &str,
        create_sql: &str,
        drop: bool,
    ) -> Result<(), DeployError> {
        let r = self
            .engine
            .prepare_table(&mut self.state, table, create_sql, drop);
        self.save()?;
        r
    }

    /// Binding URL of each node (for clients that pin themselves to one node, e.g. Galera writes).
    /// The running nodes that hold and serve data, in order of creation (an external cluster's
    /// nodes all count): the cluster's size as scaling steps see it.
    pub fn data_nodes(&self) -> Vec<&NodeState> {
        self.state
            .nodes
            .iter()
            .filter(|n| (n.role == "external" || n.is_running()) && self.engine.serves_data(n))
            .collect()
    }

    pub fn node_urls(&self) -> Vec<String> {
        let url = self.url();
        self.state
            .nodes
            .iter()
            .map(|n| with_host(&url, &n.endpoint()))
            .collect()
    }

    pub fn status(&self) -> ClusterStatus {
        let not_ready = self.engine.not_ready(&self.state);
        let busy = if not_ready.is_empty() {
            self.engine.busy(&self.state)
        } else {
            Vec::new()
        };
        ClusterStatus {
            name: self.name().to_string(),
            database: self.state.deployment.database.name().to_string(),
            url: self.url(),
            memory: self.state.deployment.memory,
            nodes: self
                .state
                .nodes
                .iter()
                .map(|n| {
                    let running = n.is_running();
                    let group = self.state.memory_group(&n.id).filter(|_| running);
                    NodeStatus {
                        id: n.id.clone(),
                        role: n.role.clone(),
                        endpoint: n.endpoint(),
                        pid: n.process.map(|p| p.pid),
                        running,
                        stopped_by_signal: running && n.process.is_some_and(|p| p.is_stopped()),
                        dir: n.dir.display().to_string(),
                        memory_used_bytes: group.as_ref().and_then(MemoryGroup::usage_bytes),
                        oom_kills: group.as_ref().and_then(MemoryGroup::oom_kills),
                    }
                })
                .collect(),
            not_ready,
            busy,
        }
    }

    /// Waits until every node is up and serving; the error names what was not.
    pub fn wait_ready(&self) -> Result<(), DeployError> {
        let seconds = self.state.deployment.ready_timeout_s;
        if self.state.deployment.database != Database::External {
            let stopped: Vec<&str> = self
                .state
                .nodes
                .iter()
                .filter(|n| n.process.is_none())
                .map(|n| n.id.as_str())
                .collect();
            if !stopped.is_empty() && stopped.len() == self.state.nodes.len() {
                return Err(DeployError::Failed(format!(
                    "cluster {} is down: start it with `scalebench cluster up`",
                    self.name()
                )));
            }
        }
        let mut last = Vec::new();
        let mut died = false;
        let mut paused = Vec::new();
        let ok = poll(Duration::from_secs(seconds), || {
            // A server that exited will not become ready: fail now, with its log.
            died = self
                .state
                .nodes
                .iter()
                .any(|n| n.process.is_some() && !n.is_running());
            // Nor will one stopped by a signal (a fault's pause left by a killed scalebench).
            paused = self
                .state
                .nodes
                .iter()
                .filter_map(|n| n.process.filter(ProcessRef::is_stopped).map(|p| (n, p)))
                .map(|(n, p)| {
                    format!(
                        "{} is paused by SIGSTOP (`kill -CONT {}` resumes it)",
                        n.id, p.pid
                    )
                })
                .collect();
            last = self.engine.not_ready(&self.state);
            died || !paused.is_empty() || last.is_empty()
        });
        if ok && !died && paused.is_empty() {
            return Ok(());
        }
        if !paused.is_empty() {
            return Err(DeployError::Failed(format!(
                "cluster {} cannot become ready: {}",
                self.name(),
                paused.join("; ")
            )));
        }
        if crate::host::waits_interrupted() {
            return Err(DeployError::Interrupted(format!(
                "waiting for cluster {} to be ready",
                self.name()
            )));
        }
        let dead: Vec<String> = self
            .state
            .nodes
            .iter()
            .filter(|n| n.process.is_some() && !n.is_running())
            .map(|n| format!("{} exited; its log ends:\n{}", n.id, n.log_tail()))
            .collect();
        Err(DeployError::NotReady {
            server: format!("cluster {}", self.name()),
            seconds,
            log: last.into_iter().chain(dead).collect::<Vec<_>>().join("; "),
        })
    }

    /// Waits until ready and then idle; the error names what stayed busy.
    pub fn wait_idle(&self) -> Result<(), DeployError> {
        self.wait_ready()?;
        let seconds = self.state.deployment.idle_timeout_s;
        let mut last = Vec::new();
        // Idle twice in a row, and for the engine's settle time: a compaction or migration may
        // start right after a quiet check.
        let settle = self.engine.idle_settle();
        let mut quiet: Option<(u32, Instant)> = None;
        let ok = poll(Duration::from_secs(seconds), || {
            last = self.engine.busy(&self.state);
            quiet = match (last.is_empty(), quiet) {
                (false, _) => None,
                (true, None) => Some((1, Instant::now())),
                (true, Some((n, since))) => Some((n + 1, since)),
            };
            matches!(quiet, Some((n, since)) if n >= 2 && since.elapsed() >= settle)
        });
        if ok {
            Ok(())
        } else if crate::host::waits_interrupted() {
            Err(DeployError::Interrupted(format!(
                "waiting for cluster {} to be idle",
                self.name()
            )))
        } else {
            Err(DeployError::NotIdle {
                seconds,
                busy: last.join("; "),
            })
        }
    }

    /// What is in motion right now (streams, slot migration, replication lag, ...), by one check
    /// with the database's own tools; empty when idle.
    pub fn busy_now(&self) -> Vec<String> {
        self.engine.busy(&self.state)
    }

    /// Adds a node and waits until the cluster (with it) is ready.
    pub fn add_node(&mut self) -> Result<String, DeployError> {
        let id = self.engine.add_node(&mut self.state);
        self.save()?;
        let id = id?;
        self.wait_ready()?;
        Ok(id)
    }

    /// Removes `id` (or the engine's choice) gracefully.
    pub fn remove_node(&mut self, id: Option<&str>) -> Result<String, DeployError> {
        let id = match id {
            Some(id) => {
                self.state.node(id)?;
                id.to_string()
            }
            None => self.engine.removable(&self.state).ok_or_else(|| {
                DeployError::Failed(format!("cluster {} has no node to remove", self.name()))
            })?,
        };
        let r = self.engine.remove_node(&mut self.state, &id);
        self.save()?;
        r?;
        self.state.remove_memory_group(&id);
        self.wait_ready()?;
        Ok(id)
    }

    /// Stops one node without telling the cluster (SIGKILL when `crash`, else SIGTERM); it stays in the
    /// state, stopped, and `start_node` brings it back.
    pub fn stop_node(&mut self, id: &str, crash: bool) -> Result<(), DeployError> {
        self.state.node(id)?;
        let node = self.state.nodes.iter_mut().find(|n| n.id == id).unwrap();
        if let Some(p) = node.process.take() {
            if crash {
                p.kill();
                let node = self.state.node(id)?;
                self.engine.after_kill(&self.state, node);
            } else {
                p.stop_with(self.engine.stop_signal(), Duration::from_secs(60));
            }
        }
        self.state.remove_memory_group(id);
        self.save()
    }

    pub fn start_node(&mut self, id: &str) -> Result<(), DeployError> {
        let node = self.state.node(id)?.clone();
        if node.is_running() {
            return Ok(());
        }
        let p = self.engine.start(&self.state, &node)?;
        self.state
            .nodes
            .iter_mut()
            .find(|n| n.id == id)
            .unwrap()
            .process = Some(p);
        self.save()
    }

    /// Writes what the servers hold in memory to their files without compacting (see
    /// [`Cluster::compact`]); returns what was done.
    pub fn flush(&self) -> Result<Vec<String>, DeployError> {
        self.engine.flush(&self.state)
    }

    /// Flushes and compacts; returns what was done.
    pub fn compact(&self) -> Result<Vec<String>, DeployError> {
        self.engine.compact(&self.state)
    }

    /// Whether its space on disk can be measured: an external cluster's only where its deployment
    /// names the data directories (`[external] data_dirs`); without them there is nothing to
    /// measure (not "0 MB on 0 nodes").
    pub fn measures_space(&self) -> bool {
        self.state.deployment.database != Database::External
            || !self.state.deployment.external.data_dirs.is_empty()
    }

    /// Bytes on disk per node and in total (stopped nodes included: their data is still there).
    /// The parts `data` and `index` are the files of benchmark table `table` where the database
    /// tells its tables apart (PostgreSQL, Cassandra), else the files that hold records.
    pub fn space(&self, taken: &str, records: u64, table: &str) -> Space {
        let classify = self.engine.classify();
        let nodes = match self.state.deployment.database {
            Database::External => self
                .state
                .deployment
                .external
                .data_dirs
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    space::measure(&format!("dir{}", i + 1), &self.resolve(d), &classify, &[])
                })
                .collect(),
            _ => self
                .state
                .nodes
                .iter()
                .map(|n| {
                    let by_table = self.engine.table_classifier(n, table);
                    space::measure(
                        &n.id,
                        &n.data_dir,
                        by_table.as_deref().unwrap_or(&classify),
                        &["server.log", RUNNING_SNAPSHOTS],
                    )
                })
                .collect(),
        };
        Space::from_nodes(taken, nodes, records)
    }

    /// A path of the deployment file, relative to that file's directory.
    fn resolve(&self, p: &Path) -> PathBuf {
        match self.state.deployment_file.parent() {
            Some(base) if p.is_relative() => base.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// Where snapshot `name` is kept: the copies of the nodes' data, or the marker
    /// [`HELD_BY_SERVERS`] when the servers keep it.
    fn snapshot_dir(&self, name: &str) -> Result<PathBuf, DeployError> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
        {
            return Err(DeployError::BadInput(format!(
                "invalid snapshot name {name:?}: use letters, digits, '-' and '_'"
            )));
        }
        Ok(self.state.dir.join("snapshots").join(name))
    }

    /// Takes snapshot `name`: with the database's own snapshots where it has them (Cassandra: no
    /// restart), otherwise by copying every node's data while the cluster is stopped. Returns what
    /// was done, one line per node or table.
    pub fn snapshot(&mut self, name: &str) -> Result<Vec<String>, DeployError> {
        let target = self.snapshot_dir(name)?;
        self.local_only("snapshot")?;
        if let Some(taken) = self.engine.snapshot_running(&self.state, name) {
            let taken = taken?;
            if target.exists() {
                std::fs::remove_dir_all(&target).map_err(|e| DeployError::io(&target, e))?;
            }
            std::fs::create_dir_all(&target).map_err(|e| DeployError::io(&target, e))?;
            let marker = target.join(HELD_BY_SERVERS);
            scalebench_measure::files::write_bytes_atomically(&marker, taken.join("\n").as_bytes())
                .map_err(DeployError::Failed)?;
            return Ok(taken);
        }
        self.stop_for_copy();
        let copied = (|| {
            if target.exists() {
                std::fs::remove_dir_all(&target).map_err(|e| DeployError::io(&target, e))?;
            }
            std::fs::create_dir_all(&target).map_err(|e| DeployError::io(&target, e))?;
            for n in &self.state.nodes {
                copy_tree(&n.data_dir, &target.join(&n.id))?;
            }
            Ok(())
        })();
        let started = self.start_all();
        copied.and(started)?;
        Ok(self
            .state
            .nodes
            .iter()
            .map(|n| format!("{}: data directory copied (servers stopped)", n.id))
            .collect())
    }

    /// Puts every node's data back as snapshot `name` has it. Returns what was done.
    pub fn restore(&mut self, name: &str) -> Result<Vec<String>, DeployError> {
        let source = self.snapshot_dir(name)?;
        self.local_only("restore")?;
        if !source.is_dir() {
            return Err(DeployError::BadInput(format!(
                "cluster {} has no snapshot {name:?}",
                self.name()
            )));
        }
        if source.join(HELD_BY_SERVERS).exists() {
            return self.engine.restore_running(&self.state, name);
        }
        for n in &self.state.nodes {
            if !source.join(&n.id).is_dir() {
                return Err(DeployError::Failed(format!(
                    "snapshot {name:?} has no copy of {} (taken with other nodes)",
                    n.id
                )));
            }
        }
        self.stop_for_copy();
        for n in &self.state.nodes {
            let keep_log = n.data_dir.join("server.log");
            let log = std::fs::read(&keep_log).ok();
            std::fs::remove_dir_all(&n.data_dir).map_err(|e| DeployError::io(&n.data_dir, e))?;
            copy_tree(&source.join(&n.id), &n.data_dir)?;
            if let Some(log) = log {
                let _ = std::fs::write(&keep_log, log);
            }
        }
        self.start_all()?;
        Ok(self
            .state
            .nodes
            .iter()
            .map(|n| format!("{}: data directory copied back (servers restarted)", n.id))
            .collect())
    }

    fn local_only(&self, what: &str) -> Result<(), DeployError> {
        if self.state.deployment.database == Database::External {
            return Err(DeployError::Failed(format!(
                "{what} works on clusters scalebench started; reset an external cluster with its own tools"
            )));
        }
        Ok(())
    }

    fn stop_for_copy(&mut self) {
        for i in (0..self.state.nodes.len()).rev() {
            let node = self.state.nodes[i].clone();
            if node.is_running() {
                self.engine.before_stop(&self.state, &node);
            }
            if let Some(p) = self.state.nodes[i].process.take() {
                p.stop_with(self.engine.stop_signal(), Duration::from_secs(120));
            }
            self.state.remove_memory_group(&self.state.nodes[i].id);
        }
        let _ = self.save();
    }

    fn start_all(&mut self) -> Result<(), DeployError> {
        for i in 0..self.state.nodes.len() {
            let node = self.state.nodes[i].clone();
            let p = self.engine.start(&self.state, &node)?;
            self.state.nodes[i].process = Some(p);
            self.save()?;
        }
        self.wait_ready()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.stop_on_drop {
            self.down();
            // A test's cluster directory goes with its temporary directory; the servers' own
            // directories elsewhere go with it.
            let _ = remove_relocated_servers(&self.state.dir);
        }
    }
}

/// `cp -a` (reflinks where the file system has them), without the server's log.
fn copy_tree(from: &Path, to: &Path) -> Result<(), DeployError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| DeployError::io(parent, e))?;
    }
    run(
        std::process::Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(from)
            .arg(to),
        "cp (snapshot copy)",
    )?;
    let _ = std::fs::remove_file(to.join("server.log"));
    Ok(())
}

/// `url` with its host (or list of hosts) replaced by `endpoint`.
fn with_host(url: &str, endpoint: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..end].rfind('@').map_or(0, |i| i + 1);
    format!("{scheme}://{}{endpoint}{}", &rest[..at], &rest[end..])
}
