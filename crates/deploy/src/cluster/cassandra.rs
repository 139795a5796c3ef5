//! Apache Cassandra: a ring of N nodes on 127.0.0.1..N sharing the storage and native ports; nodes
//! join by bootstrap (streaming their ranges) and leave by decommission.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Rings this process last saw with every node up (`nodetool status`), by cluster directory: the
/// node processes then, and when.
#[allow(clippy::type_complexity)]
static RING_SEEN_UP: std::sync::Mutex<
    std::collections::BTreeMap<std::path::PathBuf, (Vec<(String, u32)>, std::time::Instant)>,
> = std::sync::Mutex::new(std::collections::BTreeMap::new());

/// How long a ring seen up stands, its node processes unchanged and serving CQL.
const RING_RECHECK: std::time::Duration = std::time::Duration::from_secs(60);

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::{self, OperationKind};
use crate::cassandra::{node_command, CassandraOptions, NodePorts};
use crate::error::DeployError;
use crate::host::free_port;
use crate::nodetool::nodetool;
use crate::process::ProcessRef;
use crate::space::{Classifier, Classify};

pub struct Cassandra;

/// A node's fact: its one token (`num_tokens = 1`), written as `initial_token` in its cassandra.yaml.
const INITIAL_TOKEN: &str = "initial_token";

/// Token `k` of `n` dividing Murmur3's ring (-2^63 .. 2^63) evenly.
fn even_token(k: usize, n: usize) -> i64 {
    let step = (1i128 << 64) / n.max(1) as i128;
    (i64::MIN as i128 + step * k as i128) as i64
}

/// The middle of the largest range between `tokens` (the ring wraps around), or the ring's start.
fn halving_token(tokens: &[i64]) -> i64 {
    let mut sorted: Vec<i128> = tokens.iter().map(|t| *t as i128).collect();
    sorted.sort_unstable();
    let Some(&first) = sorted.first() else {
        return i64::MIN;
    };
    let ring = 1i128 << 64;
    let mut best = (
        first + ring - sorted[sorted.len() - 1],
        sorted[sorted.len() - 1],
    );
    for w in sorted.windows(2) {
        if w[1] - w[0] > best.0 {
            best = (w[1] - w[0], w[0]);
        }
    }
    let middle = best.1 + best.0 / 2;
    // Back into -2^63 .. 2^63 when the range wrapped around.
    (if middle > i64::MAX as i128 {
        middle - ring
    } else {
        middle
    }) as i64
}

/// The keyspace the binding URL names.
const KEYSPACE: &str = "ycsb";

fn options(c: &ClusterState) -> CassandraOptions {
    let s = &c.deployment.cassandra;
    CassandraOptions {
        cluster_name: c.deployment.name.clone(),
        num_tokens: s.num_tokens,
        heap_mb: c
            .deployment
            .jvm_heap_mb(s.heap_mb, crate::spec::CASSANDRA_HEAP_MB),
        commitlog_sync: s.commitlog_sync.clone(),
        commitlog_sync_period_ms: s.commitlog_sync_period_ms,
        commitlog_sync_group_window_ms: s.commitlog_sync_group_window_ms,
        overrides: c.deployment.server_settings(),
    }
}

/// Cassandra's classpath: the deployment's file, `$SCALEBENCH_CASSANDRA_CLASSPATH`, or the one this
/// binary resolves from Maven Central into the per-user cache.
fn classpath_file(c: &ClusterState) -> Result<PathBuf, DeployError> {
    let base = c
        .deployment_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if let Some(f) = &c.deployment.cassandra.classpath_file {
        return Ok(base.join(f));
    }
    if let Ok(f) = std::env::var("SCALEBENCH_CASSANDRA_CLASSPATH") {
        return Ok(PathBuf::from(f));
    }
    crate::cassandra::classpath_file()
}

fn classpath(c: &ClusterState) -> Result<String, DeployError> {
    let file = c
        .facts
        .get("classpath_file")
        .ok_or_else(|| DeployError::Failed("cluster state lacks the classpath".into()))?;
    std::fs::read_to_string(file)
        .map(|s| s.trim().to_string())
        .map_err(|e| DeployError::io(Path::new(file), e))
}

fn native_open(n: &NodeState) -> bool {
    std::net::TcpStream::connect_timeout(&native_address(n), Duration::from_millis(300)).is_ok()
}

impl Cassandra {
    fn ports(&self, c: &ClusterState, n: &NodeState) -> NodePorts {
        NodePorts {
            storage: c.shared_ports["storage"],
            native: c.shared_ports["native"],
            jmx: n.ports["jmx"],
        }
    }

    /// Starts the JVM; waits for CQL unless `wait` is false (nodes of a new ring start together).
    fn spawn(
        &self,
        c: &ClusterState,
        node: &NodeState,
        bootstrap: bool,
        wait: bool,
    ) -> Result<ProcessRef, DeployError> {
        let account = c.account()?;
        let mut options = options(c);
        if let Some(token) = node.facts.get(INITIAL_TOKEN) {
            options
                .overrides
                .push(("initial_token".into(), token.clone()));
        }
        let cmd = node_command(
            &node.dir,
            &classpath(c)?,
            &account,
            &node.host,
            self.ports(c, node),
            &options,
            bootstrap,
        )?;
        let mut p = c.spawn_node(node, cmd)?;
        if wait {
            let seconds = c.deployment.ready_timeout_s;
            p.wait_ready(Duration::from_secs(seconds), || native_open(node))?;
        }
        Ok(p.detach())
    }

    fn new_cassandra_node(&self, c: &mut ClusterState) -> Result<NodeState, DeployError> {
        // Node N lives on 127.0.0.N for as long as it exists; a new node takes the next free address.
        let used: Vec<u8> = c
            .nodes
            .iter()
            .filter_map(|n| n.host.rsplit('.').next()?.parse().ok())
            .collect();
        let index = (1..=254u8)
            .find(|i| !used.contains(i))
            .ok_or_else(|| DeployError::Failed("no free 127.0.0.x address".into()))?;
        let native = c.shared_ports["native"];
        let mut node = c.new_node("node", &format!("127.0.0.{index}"), native)?;
        node.ports.insert("jmx".into(), free_port()?);
        if index == 1 {
            node.role = "seed".into();
        }
        Ok(node)
    }

    fn any_jmx(&self, c: &ClusterState) -> Result<u16, DeployError> {
        c.running()
            .find(|n| native_open(n))
            .map(|n| n.ports["jmx"])
            .ok_or_else(|| DeployError::Failed("no Cassandra node is serving".into()))
    }

    /// `nodetool status`: (address, state) pairs such as ("127.0.0.2", "UN").
    fn ring(&self, c: &ClusterState) -> Result<Vec<(String, String)>, DeployError> {
        let out = nodetool(&classpath(c)?, self.any_jmx(c)?, &["status"])?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let state = *f.first()?;
                (state.len() == 2 && "UD".contains(&state[..1]) && f.len() > 2)
                    .then(|| (f[1].to_string(), state.to_string()))
            })
            .collect())
    }

    fn take_snapshot(&self, c: &ClusterState, name: &str) -> Result<Vec<String>, DeployError> {
        let nodes = all_running(c, "snapshot")?;
        let tables = cql(crate::cassandra_cql::user_tables(native_address(nodes[0])))?;
        let keyspaces: std::collections::BTreeSet<&str> =
            tables.iter().map(|t| t.keyspace.as_str()).collect();
        let tag = format!("scalebench-{name}");
        let cp = classpath(c)?;
        let mut done = Vec::new();
        for n in &nodes {
            let taken = |t: &crate::cassandra_cql::UserTable| {
                n.data_dir
                    .join("data")
                    .join(&t.keyspace)
                    .join(format!("{}-{}", t.table, t.id))
                    .join("snapshots")
                    .join(&tag)
            };
            let held = n.data_dir.join(super::engine::RUNNING_SNAPSHOTS).join(name);
            for dir in tables.iter().map(taken).chain([held.clone()]) {
                // Left by an interrupted snapshot: Cassandra refuses a tag that exists.
                if dir.exists() {
                    std::fs::remove_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
                }
            }
            let mut args = vec!["snapshot", "-t", tag.as_str()];
            args.extend(keyspaces.iter().copied());
            if !keyspaces.is_empty() {
                nodetool(&cp, n.ports["jmx"], &args)?;
            }
            for t in &tables {
                let to = held.join(&t.keyspace).join(&t.table);
                std::fs::create_dir_all(to.parent().expect("a keyspace directory"))
                    .map_err(|e| DeployError::io(&to, e))?;
                let from = taken(t);
                if from.is_dir() {
                    // Same file system (both in the node's directory): the hard links move.
                    std::fs::rename(&from, &to).map_err(|e| DeployError::io(&from, e))?;
                } else {
                    std::fs::create_dir_all(&to).map_err(|e| DeployError::io(&to, e))?;
                }
                done.push(format!(
                    "{}: {}.{} snapshotted by Cassandra ({} SSTables, servers running)",
                    n.id,
                    t.keyspace,
                    t.table,
                    sstables(&to)
                ));
            }
        }
        Ok(done)
    }
}

/// A node's file by its path: `data/KEYSPACE/TABLE-ID/COMPONENT`. The live SSTables of user
/// tables (of `table` only, when given: what `nodetool tablestats` counts as its "Space used
/// (live)") are `data` and `index`; their `snapshots` and `backups`, and other user tables when a
/// table is given, are `other`.
fn sort_file(p: &Path, table: Option<&str>) -> &'static str {
    let parts: Vec<String> = p
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.first().map(String::as_str) {
        Some("commitlog") => "log",
        Some("hints") => "hints",
        Some("data") => {
            let keyspace = parts.get(1).map_or("", String::as_str);
            let table_dir = parts.get(2).map_or("", String::as_str);
            let name = parts.last().map_or("", String::as_str);
            let of_table = table.is_none_or(|t| {
                table_dir
                    .rsplit_once('-')
                    .is_some_and(|(dir_table, _)| dir_table == t)
            });
            if keyspace.starts_with("system") {
                "system"
            } else if !of_table
                || parts.len() > 4 && ["snapshots", "backups"].contains(&parts[3].as_str())
            {
                "other"
            } else if [
                "-Index.db",
                "-Summary.db",
                "-Filter.db",
                "-Partitions.db",
                "-Rows.db",
            ]
            .iter()
            .any(|s| name.ends_with(s))
            {
                "index"
            } else {
                "data"
            }
        }
        _ => "other",
    }
}

/// Every node, all running: Cassandra's snapshots and truncation need the whole ring.
fn all_running<'a>(c: &'a ClusterState, what: &str) -> Result<Vec<&'a NodeState>, DeployError> {
    if let Some(n) = c.nodes.iter().find(|n| !n.is_running()) {
        return Err(DeployError::Failed(format!(
            "{} is stopped: start it before a {what} (Cassandra's needs every node)",
            n.id
        )));
    }
    Ok(c.nodes.iter().collect())
}

fn native_address(n: &NodeState) -> std::net::SocketAddr {
    format!("{}:{}", n.host, n.port)
        .parse()
        .expect("loopback address")
}

fn cql<T>(r: Result<T, String>) -> Result<T, DeployError> {
    r.map_err(DeployError::Failed)
}

/// The subdirectories of `dir`, sorted.
fn dir_names(dir: &Path) -> Result<Vec<String>, DeployError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| DeployError::io(dir, e))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// SSTables in `dir` (one `-Data.db` file each).
fn sstables(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with("-Data.db"))
            .count()
    })
}

impl Engine for Cassandra {
    fn fail_primary_missing(&self, _d: &crate::spec::Deployment) -> String {
        "masterless: every node serves its ranges; crash:K is a node's failure".into()
    }

    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // Masterless: no primary to fail; compaction and repair are its own (nodetool).
        operation::with(
            &operation::MEMBERSHIP,
            &[OperationKind::Compact, OperationKind::Repair],
        )
    }

    fn account(&self) -> &'static str {
        crate::cassandra::ACCOUNT
    }

    /// Peers: each node's shutdown (seconds of flushing) runs beside the others'.
    fn stops_at_once(&self) -> bool {
        true
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.nodes
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let file = classpath_file(c)?;
        c.facts
            .insert("classpath_file".into(), file.display().to_string());
        c.shared_ports.insert("storage".into(), free_port()?);
        c.shared_ports.insert("native".into(), free_port()?);
        // The seed first; then the others together (a new ring's nodes need not bootstrap). With one
        // token per node, the tokens divide the ring evenly, as operators placed them by hand.
        let nodes = c.deployment.nodes;
        let one_token = c.deployment.cassandra.num_tokens == 1;
        let token = |k: usize| one_token.then(|| even_token(k, nodes).to_string());
        let mut seed = self.new_cassandra_node(c)?;
        if let Some(t) = token(0) {
            seed.facts.insert(INITIAL_TOKEN.into(), t);
        }
        seed.process = Some(self.spawn(c, &seed, false, true)?);
        c.nodes.push(seed);
        let mut joining = Vec::new();
        for k in 1..nodes {
            let mut n = self.new_cassandra_node(c)?;
            if let Some(t) = token(k) {
                n.facts.insert(INITIAL_TOKEN.into(), t);
            }
            n.process = Some(self.spawn(c, &n, false, false)?);
            c.nodes.push(n.clone());
            joining.push(n);
        }
        let seconds = c.deployment.ready_timeout_s;
        for n in &joining {
            if !super::engine::poll(Duration::from_secs(seconds), || {
                native_open(n) || !n.is_running()
            }) || !n.is_running()
            {
                return Err(DeployError::NotReady {
                    server: format!("cassandra {}", n.id),
                    seconds,
                    log: n.log_tail(),
                });
            }
        }
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        self.spawn(c, node, false, true)
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let mut node = self.new_cassandra_node(c)?;
        if c.deployment.cassandra.num_tokens == 1 {
            // One token per node: the new node halves the largest range (doubling a ring halves
            // each range in turn).
            let tokens: Vec<i64> = c
                .nodes
                .iter()
                .filter_map(|n| n.facts.get(INITIAL_TOKEN)?.parse().ok())
                .collect();
            node.facts
                .insert(INITIAL_TOKEN.into(), halving_token(&tokens).to_string());
        }
        // Serves CQL only once bootstrap has streamed its ranges.
        node.process = Some(self.spawn(c, &node, true, true)?);
        let id = node.id.clone();
        c.nodes.push(node);
        Ok(id)
    }

    fn removable(&self, c: &ClusterState) -> Option<String> {
        c.nodes
            .iter()
            .rev()
            .find(|n| n.role != "seed" && n.process.is_some())
            .map(|n| n.id.clone())
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        let node = c.node(id)?.clone();
        if node.role == "seed" {
            return Err(DeployError::Failed(format!(
                "{id} is the seed (127.0.0.1) that new nodes contact; remove another node"
            )));
        }
        // Streams the node's ranges to the nodes that take them over, then leaves the ring.
        nodetool(&classpath(c)?, node.ports["jmx"], &["decommission"])?;
        if let Some(p) = node.process {
            p.stop(Duration::from_secs(60));
        }
        c.nodes.retain(|n| n.id != id);
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let mut missing: Vec<String> = c
            .running()
            .filter(|n| !native_open(n))
            .map(|n| format!("{} ({}) not serving CQL", n.id, n.host))
            .collect();
        if !missing.is_empty() {
            return missing;
        }
        // `nodetool status` starts a JVM (over a second of CPU, taken from the servers): a ring this
        // process saw up with the same node processes a short while ago is not asked again, as long
        // as every node still serves CQL (checked above).
        let processes: Vec<(String, u32)> = c
            .running()
            .filter_map(|n| Some((n.id.clone(), n.process.as_ref()?.pid)))
            .collect();
        let key = c.dir.clone();
        if let Some((seen, at)) = RING_SEEN_UP
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            if *seen == processes && at.elapsed() < RING_RECHECK {
                return missing;
            }
        }
        match self.ring(c) {
            Ok(ring) => {
                for n in c.running() {
                    match ring.iter().find(|(a, _)| *a == n.host) {
                        Some((_, s)) if s == "UN" => {}
                        Some((_, s)) => missing.push(format!("{} is {s} in the ring", n.id)),
                        None => missing.push(format!("{} is not in the ring", n.id)),
                    }
                }
            }
            Err(e) => missing.push(e.to_string()),
        }
        if missing.is_empty() {
            RING_SEEN_UP
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, (processes, std::time::Instant::now()));
        }
        missing
    }

    /// Compactions running or queued, streams and a mode other than NORMAL, on each running node,
    /// from its virtual tables (a stopped node is down, not busy; `not_ready` checks the ring).
    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let nodes: Vec<&NodeState> = c.running().collect();
        let addresses: Vec<std::net::SocketAddr> =
            nodes.iter().map(|n| native_address(n)).collect();
        nodes
            .iter()
            .zip(crate::cassandra_cql::node_activity(&addresses))
            .flat_map(|(n, activity)| match activity {
                Ok(a) => a.busy(&n.id),
                Err(e) => vec![format!("{}: {e}", n.id)],
            })
            .collect()
    }

    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let cp = classpath(c)?;
        let mut done = Vec::new();
        for n in c.running() {
            nodetool(&cp, n.ports["jmx"], &["flush"])?;
            done.push(format!("{}: flush", n.id));
        }
        Ok(done)
    }

    /// A full repair of every user keyspace, node by node (`nodetool repair -full`): each node's
    /// ranges compared with their replicas' (Merkle trees) and the differences streamed.
    fn repair(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let cp = classpath(c)?;
        let mut done = Vec::new();
        for n in c.running() {
            nodetool(&cp, n.ports["jmx"], &["repair", "-full"])?;
            done.push(format!("{}: repair -full", n.id));
        }
        Ok(done)
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let cp = classpath(c)?;
        let mut done = Vec::new();
        for n in c.running() {
            nodetool(&cp, n.ports["jmx"], &["flush"])?;
            nodetool(&cp, n.ports["jmx"], &["compact"])?;
            done.push(format!("{}: flush, compact", n.id));
        }
        Ok(done)
    }

    /// Cassandra's own snapshot (`nodetool snapshot`: memtables flushed, SSTables hard-linked) of
    /// every user keyspace on each node, moved to the node's snapshots directory: no restart, and
    /// no copy of the data.
    fn snapshot_running(
        &self,
        c: &ClusterState,
        name: &str,
    ) -> Option<Result<Vec<String>, DeployError>> {
        Some(self.take_snapshot(c, name))
    }

    /// Each snapshotted table truncated (CQL, every node up), then each node's copy imported back
    /// into it (`nodetool import --copy-data`): the servers keep running and the snapshot stays.
    fn restore_running(&self, c: &ClusterState, name: &str) -> Result<Vec<String>, DeployError> {
        let nodes = all_running(c, "restore")?;
        let current = cql(crate::cassandra_cql::user_tables(native_address(nodes[0])))?;
        let held = |n: &NodeState| n.data_dir.join(super::engine::RUNNING_SNAPSHOTS).join(name);
        let mut tables = Vec::new();
        for ks in dir_names(&held(nodes[0]))? {
            for table in dir_names(&held(nodes[0]).join(&ks))? {
                let t = current
                    .iter()
                    .find(|t| t.keyspace == ks && t.table == table)
                    .ok_or_else(|| {
                        DeployError::Failed(format!(
                            "{ks}.{table} was dropped since snapshot {name:?} was taken: load the data again"
                        ))
                    })?;
                tables.push(t.clone());
            }
        }
        for n in &nodes {
            if !held(n).is_dir() {
                return Err(DeployError::Failed(format!(
                    "snapshot {name:?} has no copy of {} (taken with other nodes)",
                    n.id
                )));
            }
        }
        let cp = classpath(c)?;
        let mut done = Vec::new();
        for t in &tables {
            cql(crate::cassandra_cql::truncate(native_address(nodes[0]), t))?;
            done.push(format!("{}.{}: truncated", t.keyspace, t.table));
            for n in &nodes {
                let dir = held(n).join(&t.keyspace).join(&t.table);
                if sstables(&dir) == 0 {
                    continue; // nothing of this table on this node
                }
                let dir = dir.display().to_string();
                nodetool(
                    &cp,
                    n.ports["jmx"],
                    &["import", "--copy-data", &t.keyspace, &t.table, &dir],
                )?;
                done.push(format!(
                    "{}: {}.{} imported from snapshot {name} (servers running)",
                    n.id, t.keyspace, t.table
                ));
            }
        }
        Ok(done)
    }

    fn before_stop(&self, c: &ClusterState, node: &NodeState) {
        // Memtables to SSTables, so a restart replays no commit log.
        if let Ok(cp) = classpath(c) {
            let _ = nodetool(&cp, node.ports["jmx"], &["drain"]);
        }
    }

    fn classify(&self) -> Classifier {
        |p: &Path| sort_file(p, None)
    }

    fn table_classifier(&self, _node: &NodeState, table: &str) -> Option<Box<Classify<'static>>> {
        // CQL folds an unquoted name to lower case, as the binding writes it.
        let table = table.to_lowercase();
        Some(Box::new(move |p: &Path| sort_file(p, Some(&table))))
    }

    fn binding_options(&self, c: &ClusterState) -> std::collections::BTreeMap<String, String> {
        let mut o = std::collections::BTreeMap::new();
        // Commit log "off" is a property of the benchmark's keyspace, not of the server.
        if c.deployment.cassandra.commitlog_sync == crate::cassandra::commit_log::OFF {
            o.insert("durable_writes".into(), "false".into());
        }
        o
    }

    fn url(&self, c: &ClusterState) -> String {
        let host = c
            .running()
            .next()
            .map_or("127.0.0.1".to_string(), |n| n.host.clone());
        format!(
            "cassandra://{host}:{}/{KEYSPACE}",
            c.shared_ports.get("native").copied().unwrap_or(9042)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_token_per_node_divides_the_ring_evenly_and_a_new_node_halves_the_largest_range() {
        assert_eq!(even_token(0, 1), i64::MIN);
        let three: Vec<i64> = (0..3).map(|k| even_token(k, 3)).collect();
        assert_eq!(three[0], i64::MIN);
        let step = (1i128 << 64) / 3;
        assert_eq!(three[1] as i128 - three[0] as i128, step);
        assert_eq!(three[2] as i128 - three[1] as i128, step);
        // Two nodes at -2^63 and 0: the new one halves either range; with both halved, the ring
        // holds four equal ranges.
        let mut ring = vec![even_token(0, 2), even_token(1, 2)];
        assert_eq!(ring[1], 0);
        ring.push(halving_token(&ring));
        ring.push(halving_token(&ring));
        ring.sort_unstable();
        assert_eq!(ring, (0..4).map(|k| even_token(k, 4)).collect::<Vec<_>>());
        // The largest range wraps around the end of the ring.
        assert_eq!(halving_token(&[i64::MIN, -(1 << 62), 0]), 1 << 62);
        // From 2^62 around the end of the ring to -2^62: its middle is the ring's start.
        assert_eq!(halving_token(&[-(1 << 62), 0, 1 << 62]), i64::MIN);
    }
}
