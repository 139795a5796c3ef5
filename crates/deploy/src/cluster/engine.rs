//! What a cluster's engines share: the state a cluster records (its nodes, ports and facts), the
//! [`Engine`] trait each database implements in a file of this folder, and the wait they use.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use crate::account::Account;
use crate::error::DeployError;
use crate::memory::{Controller, MemoryGroup};
use crate::process::{ManagedProcess, ProcessRef};
use crate::space::{Classifier, Classify};
use crate::spec::Deployment;

use super::operation::OperationKind;

/// The cluster fact holding the benchmark user's password (random per cluster; cluster.json is 0600).
pub(crate) const PASSWORD_FACT: &str = "password";

/// One node as the state file records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeState {
    /// `node1`, `node2`, ... in order of creation (never reused).
    pub id: String,
    /// `seed`, `node`, `master`, `replica`, `primary`, `member`, `external`.
    pub role: String,
    pub host: String,
    /// The client port.
    pub port: u16,
    /// Other ports (peer, JMX, Galera replication, ...).
    #[serde(default)]
    pub ports: BTreeMap<String, u16>,
    /// Holds the node's files and `server.log`.
    pub dir: PathBuf,
    /// What the space figures measure.
    pub data_dir: PathBuf,
    /// None while the node is stopped.
    pub process: Option<ProcessRef>,
    /// Engine facts (a Redis node's id, the master a replica follows, ...).
    #[serde(default)]
    pub facts: BTreeMap<String, String>,
}

impl NodeState {
    pub fn endpoint(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn is_running(&self) -> bool {
        self.process.is_some_and(|p| p.is_running())
    }

    pub(crate) fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterState {
    pub deployment: Deployment,
    /// The deployment file `up` was given (absolute).
    pub deployment_file: PathBuf,
    pub dir: PathBuf,
    pub nodes: Vec<NodeState>,
    /// Ports every node shares (Cassandra's storage and native ports).
    #[serde(default)]
    pub shared_ports: BTreeMap<String, u16>,
    /// Number of the next node created.
    pub next_node: usize,
    /// Engine facts about the whole cluster (Cassandra's classpath file, ...).
    #[serde(default)]
    pub facts: BTreeMap<String, String>,
    /// The system account the servers run as when scalebench runs as root: the engine's, set when
    /// the state is made or read (not recorded: the engine decides it).
    #[serde(skip)]
    pub(crate) server_account: &'static str,
}

impl ClusterState {
    pub(crate) fn node(&self, id: &str) -> Result<&NodeState, DeployError> {
        self.nodes.iter().find(|n| n.id == id).ok_or_else(|| {
            DeployError::Failed(format!(
                "no node {id:?} in cluster {} (nodes: {})",
                self.deployment.name,
                self.nodes
                    .iter()
                    .map(|n| n.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// A new node record with the next id and its (fresh) directory.
    pub(crate) fn new_node(
        &mut self,
        role: &str,
        host: &str,
        port: u16,
    ) -> Result<NodeState, DeployError> {
        self.next_node += 1;
        let id = format!("node{}", self.next_node);
        let dir = self.account()?.server_dir(&self.dir.join(&id))?;
        Ok(NodeState {
            id,
            role: role.into(),
            host: host.into(),
            port,
            ports: BTreeMap::new(),
            data_dir: dir.clone(),
            dir,
            process: None,
            facts: BTreeMap::new(),
        })
    }

    /// Who this cluster's servers run as (never root; see [`crate::account`]).
    pub(crate) fn account(&self) -> Result<Account, DeployError> {
        debug_assert!(
            !self.server_account.is_empty(),
            "set when the state is made or read"
        );
        Account::for_server(self.server_account)
    }

    pub(crate) fn running(&self) -> impl Iterator<Item = &NodeState> {
        self.nodes.iter().filter(|n| n.process.is_some())
    }

    /// Starts `cmd` as node `node`'s server (see [`ManagedProcess::spawn_node`]), inside the node's
    /// memory group, made now, when the deployment limits memory.
    pub(crate) fn spawn_node(
        &self,
        node: &NodeState,
        cmd: std::process::Command,
    ) -> Result<ManagedProcess, DeployError> {
        let group = self.create_memory_group(node)?;
        ManagedProcess::spawn_node(&node.id, &node.dir, cmd, &self.account()?, group.as_ref())
    }

    /// Makes node `node`'s memory group (or takes over the one it left), when the deployment
    /// limits memory.
    pub(crate) fn create_memory_group(
        &self,
        node: &NodeState,
    ) -> Result<Option<MemoryGroup>, DeployError> {
        let Some(limit) = self.deployment.memory else {
            return Ok(None);
        };
        let group = Controller::open()
            .map_err(|e| DeployError::Failed(format!("memory = \"{limit}\": {e}")))?
            .group(&self.deployment.name, &self.dir, &node.id);
        group.create(limit)?;
        Ok(Some(group))
    }

    /// Node `id`'s memory group, when the deployment limits memory.
    pub fn memory_group(&self, id: &str) -> Option<MemoryGroup> {
        self.deployment.memory?;
        let controller = Controller::find().ok()?;
        Some(controller.group(&self.deployment.name, &self.dir, id))
    }

    /// Removes node `id`'s memory group, once its server has stopped.
    pub(crate) fn remove_memory_group(&self, id: &str) {
        if let Some(group) = self.memory_group(id) {
            group.remove();
        }
    }
}

/// In each node's data directory: snapshots the database took itself, one directory per name.
/// Not counted as the database's space (it is the experiment's copy).
pub const RUNNING_SNAPSHOTS: &str = "snapshots";

/// What each database does differently. One implementation per file in this folder.
pub(crate) trait Engine {
    /// The system account its servers run as when scalebench runs as root.
    fn account(&self) -> &'static str;
    /// Starts the initial nodes and forms the cluster.
    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError>;
    /// How many nodes `up` starts for `d` (they are numbered node1.. in that order): what a
    /// fault file's node is checked against before anything starts.
    fn nodes_at_up(&self, d: &Deployment) -> usize;
    /// Starts an existing node again from its data (after `stop` or for a restore).
    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError>;
    /// Adds a node under load and moves data to it; returns its id.
    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError>;
    /// Removes a node gracefully: its data moves away first, then it stops and leaves the state.
    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError>;
    /// The operations under load this kind has for deployment `d` (see [`OperationKind`]).
    fn operations(&self, d: &Deployment) -> Vec<OperationKind>;
    /// Kills the primary (master, leader) with SIGKILL, leaving the failover to the database;
    /// returns the killed node's id. Only for kinds that list [`OperationKind::FailPrimary`].
    fn fail_primary(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        Err(DeployError::Failed(format!(
            "a {} cluster has no primary to fail",
            c.deployment.database.name()
        )))
    }
    /// Why this kind has no primary to fail for `d` (when it does not list
    /// [`OperationKind::FailPrimary`]).
    fn fail_primary_missing(&self, _d: &Deployment) -> String {
        "it has no primary with a failover".into()
    }
    /// Anti-entropy repair between replicas; returns what was done.
    fn repair(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        Err(DeployError::Failed(format!(
            "a {} cluster has no repair",
            c.deployment.database.name()
        )))
    }
    /// An operation this kind performs by a hook of its own (external clusters): `None` for the
    /// kinds scalebench performs itself.
    fn operation_hook(
        &self,
        _c: &ClusterState,
        _op: OperationKind,
        _node: Option<&NodeState>,
    ) -> Option<Result<Vec<String>, DeployError>> {
        None
    }
    /// Whether `node` holds and serves the data, what a scaling step counts and doubles; not a
    /// coordinator, gateway or replication daemon.
    fn serves_data(&self, _node: &NodeState) -> bool {
        true
    }
    /// The node that `remove-node` without a name removes.
    fn removable(&self, c: &ClusterState) -> Option<String> {
        c.nodes.last().map(|n| n.id.clone())
    }
    /// What is not up and serving yet (empty: ready).
    fn not_ready(&self, c: &ClusterState) -> Vec<String>;
    /// What is still busy: compactions, streams, slot migrations, replication lag (empty: idle).
    fn busy(&self, c: &ClusterState) -> Vec<String>;
    /// How long `busy` must stay empty before the cluster counts as idle: an engine whose `busy`
    /// sees a change only once it is older than a bound (Bucardo's copy lag) needs that bound.
    fn idle_settle(&self) -> Duration {
        Duration::ZERO
    }
    /// Writes what the servers hold in memory (memtables, dirty buffers, the dataset) to their
    /// files, compacting nothing: the files then hold the records as inserted. Returns what was
    /// done.
    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError>;
    /// Flush and compact after a load; returns what was done.
    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError>;
    /// Makes a node's data durable before it stops for a snapshot (Redis saves its RDB).
    fn before_stop(&self, _c: &ClusterState, _node: &NodeState) {}
    /// The nodes a restart of `node` stops before it and starts after it, as an operator does
    /// (Bucardo's daemon ends when one of its databases goes away).
    fn restarts_with(&self, _c: &ClusterState, _node: &NodeState) -> Vec<String> {
        Vec::new()
    }
    /// After a node's process tree was killed (a crash), or stopped for good (`down`): kills what of
    /// the node left that tree (Patroni starts its PostgreSQL detached, so that it outlives
    /// Patroni), as a dying machine takes everything with it.
    fn after_kill(&self, _c: &ClusterState, _node: &NodeState) {}
    /// Snapshots the data while the servers run, by the database's own means, into each node's
    /// [`RUNNING_SNAPSHOTS`] directory. `None`: the database has none (the cluster then copies its
    /// stopped nodes' files).
    fn snapshot_running(
        &self,
        _c: &ClusterState,
        _name: &str,
    ) -> Option<Result<Vec<String>, DeployError>> {
        None
    }
    /// Puts back what [`Engine::snapshot_running`] took, the servers running.
    fn restore_running(&self, _c: &ClusterState, _name: &str) -> Result<Vec<String>, DeployError> {
        Err(DeployError::Failed(
            "this database keeps no snapshots of its own".into(),
        ))
    }
    /// Sorts a node's files into parts by their names.
    fn classify(&self) -> Classifier;
    /// Sorts `node`'s files knowing which hold benchmark table `table`: those are `data` and
    /// `index`, every other file is not. `None`: the database's files do not tell tables apart, or
    /// the node cannot say now ([`Engine::classify`] then sorts them).
    fn table_classifier(&self, _node: &NodeState, _table: &str) -> Option<Box<Classify<'static>>> {
        None
    }
    /// Whether the nodes may all shut down at once (signalled together, then awaited): a ring of
    /// peers. Nodes that depend on each other (a coordinator, a bootstrap node) stop one by one.
    fn stops_at_once(&self) -> bool {
        false
    }
    /// The node to stop last when the cluster goes down (etcd's leader), if one must be.
    fn stops_last(&self, _c: &ClusterState) -> Option<String> {
        None
    }
    /// The signal that shuts a node down cleanly without waiting for its clients.
    fn stop_signal(&self) -> Signal {
        Signal::SIGTERM
    }
    fn url(&self, c: &ClusterState) -> String;
    fn binding_options(&self, _c: &ClusterState) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    /// Whether the deployment creates and resets the benchmark table itself (see
    /// [`Cluster::prepare_table`]) instead of the binding.
    fn owns_table(&self) -> bool {
        false
    }
    fn prepare_table(
        &self,
        _c: &mut ClusterState,
        _table: &str,
        _create_sql: &str,
        _drop: bool,
    ) -> Result<(), DeployError> {
        Ok(())
    }
}

/// Polls `done` every 500 ms (status checks run external tools) until it holds or `timeout` passes: a
/// wait for a cluster's state (ready, idle, joined), which Ctrl-C ends.
pub(crate) fn poll(timeout: Duration, done: impl FnMut() -> bool) -> bool {
    crate::host::poll_until_interrupted(Duration::from_millis(500), timeout, done)
}
