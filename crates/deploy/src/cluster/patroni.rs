//! PostgreSQL under Patroni: `nodes` PostgreSQL servers, each run by a Patroni of its own, which
//! elect a primary through a leader key in etcd (one member, node1, the cluster's DCS), stream to
//! the others, and promote one of them when the primary dies. With `postgres.synchronous_commit`
//! Patroni's synchronous mode is on: a commit waits for a synchronous standby, and only such a
//! standby is promoted, so a failover loses no acknowledged write.
//!
//! Each server's socket is in its node's directory (psql reaches it there as the superuser). Patroni
//! and its YAML configuration come from Debian's `patroni` package; the configuration is
//! written as JSON (YAML's subset) by serde_json. Patroni's REST API (one port per node) says who
//! leads and how far each replica is.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState, PASSWORD_FACT};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::host::{free_port, port_open};
use crate::postgres::{bin_dir, create_user_and_database, psql, DATABASE, USER};
use crate::process::ProcessRef;
use crate::space::{Classifier, Classify};

pub struct Patroni;

/// The etcd member holding Patroni's keys: not a data node.
const DCS: &str = "dcs";
/// A PostgreSQL server with its Patroni.
const SERVER: &str = "postgres";
/// Patroni's replication user (its password is a fact of the cluster, as the benchmark user's).
const REPLICATION_PASSWORD_FACT: &str = "replication_password";
const SUPERUSER_PASSWORD_FACT: &str = "superuser_password";
const REST: &str = "rest";
const CONFIG: &str = "patroni.json";

/// Superuser over the socket; replication and the benchmark user over loopback with a password.
const PG_HBA: [&str; 3] = [
    "local all all trust",
    "host replication replicator 127.0.0.1/32 scram-sha-256",
    "host all all 127.0.0.1/32 scram-sha-256",
];

/// The leader key lives 10 s without its holder's renewal (Patroni's default is 30), renewed every
/// second: a dead primary's key expires, and a replica is promoted, about 10 s after its death.
/// Debian's Patroni 3.0 accepts these; `retry_timeout` stays below the TTL as it requires.
const TTL_S: u32 = 10;
const LOOP_WAIT_S: u32 = 1;
const RETRY_TIMEOUT_S: u32 = 3;

/// How long a node may take to bootstrap (initdb, or a base backup of the primary).
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// A failover: the leader key's TTL, then the promotion.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(60);

fn patroni_missing() -> DeployError {
    DeployError::Failed(
        "patroni is not installed (Debian: apt-get install patroni; scripts/test.sh installs it)"
            .into(),
    )
}

/// What Patroni's REST API says of the cluster: (member name, role, state, lag in bytes).
#[derive(Debug, Clone, PartialEq)]
struct Member {
    name: String,
    role: String,
    state: String,
    lag: Option<u64>,
}

/// `GET /cluster` of any running server's Patroni.
fn members(c: &ClusterState) -> Result<Vec<Member>, String> {
    members_from(
        c.running()
            .filter(|n| n.role == SERVER)
            .map(|n| (n.id.as_str(), n.ports.get(REST).copied().unwrap_or(0))),
    )
}

/// `GET /cluster` of the first of these Patronis (node id, REST port) that answers.
fn members_from<'a>(rest: impl Iterator<Item = (&'a str, u16)>) -> Result<Vec<Member>, String> {
    let agent = crate::host::loopback_http(Duration::from_secs(1), Duration::from_secs(3));
    let mut last = "no Patroni is running".to_string();
    for (id, port) in rest {
        let body = agent
            .get(&format!("http://127.0.0.1:{port}/cluster"))
            .call()
            .and_then(|mut r| r.body_mut().read_to_string());
        let body = match body {
            Ok(b) => b,
            Err(e) => {
                last = format!("{id}: Patroni's REST API: {e}");
                continue;
            }
        };
        let json: serde_json::Value = serde_json::from_str(&body)
            .map_err(|e| format!("{id}: /cluster answered no JSON: {e}"))?;
        return Ok(json["members"]
            .as_array()
            .map(|all| {
                all.iter()
                    .map(|m| Member {
                        name: m["name"].as_str().unwrap_or("").to_string(),
                        role: m["role"].as_str().unwrap_or("").to_string(),
                        state: m["state"].as_str().unwrap_or("").to_string(),
                        // Patroni gives the lag in bytes, or "unknown".
                        lag: m["lag"].as_u64(),
                    })
                    .collect()
            })
            .unwrap_or_default());
    }
    Err(last)
}

/// The member that leads, running.
fn leader(members: &[Member]) -> Option<&Member> {
    members
        .iter()
        .find(|m| m.role == "leader" && m.state == "running")
}

/// A replica following the leader ("streaming" from Patroni 3.1 on, "running" before).
fn follows(m: &Member) -> bool {
    m.role != "leader" && (m.state == "streaming" || m.state == "running")
}

/// The postmaster of node `node`'s data directory, if one runs: the pid its `postmaster.pid`
/// names, taken only if that process is PostgreSQL's own program run by the cluster's account (the
/// file is the server's to write: a planted pid never gets another process killed).
fn postmaster(node: &NodeState) -> Option<ProcessRef> {
    // A few lines; the server's to write, so read with a bound.
    let text = scalebench_measure::files::read_bounded(&node.data_dir.join("postmaster.pid"), 4096)
        .ok()?;
    let pid: u32 = text.lines().next()?.trim().parse().ok()?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let uid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let account = crate::account::Account::for_server(crate::postgres::ACCOUNT).ok()?;
    (exe == bin_dir().ok()?.join("postgres") && uid == account.uid())
        .then(|| ProcessRef::of(pid))
        .flatten()
}

impl Patroni {
    fn dcs(c: &ClusterState) -> Result<&NodeState, DeployError> {
        c.nodes
            .iter()
            .find(|n| n.role == DCS)
            .ok_or_else(|| DeployError::Failed("the cluster has no etcd for Patroni".into()))
    }

    fn primary(c: &ClusterState) -> Result<&NodeState, DeployError> {
        let all = members(c).map_err(DeployError::Failed)?;
        let name = leader(&all)
            .map(|m| m.name.clone())
            .ok_or_else(|| DeployError::Failed("Patroni reports no running leader".into()))?;
        c.node(&name)
    }

    fn start_dcs(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        let peer = node.ports["peer"];
        let initial = format!("{}=http://127.0.0.1:{peer}", node.id);
        // Its data directory in place, etcd ignores the initial cluster on a restart.
        // The deployment's [server] settings are PostgreSQL's, not etcd's.
        let no_settings: &[(&str, &str)] = &[];
        let cmd = crate::etcd::member_command(
            &node.data_dir,
            &node.id,
            node.port,
            peer,
            &initial,
            "new",
            no_settings,
        );
        let mut p = c.spawn_node(node, cmd)?;
        let port = node.port;
        p.wait_ready(Duration::from_secs(30), || crate::etcd::healthy(port))?;
        Ok(p.detach())
    }

    /// Node `node`'s Patroni configuration: its ports, its data directory (the socket's directory
    /// too), the cluster's DCS, and, for the one that bootstraps, the cluster-wide settings.
    fn config(&self, c: &ClusterState, node: &NodeState) -> Result<serde_json::Value, DeployError> {
        let dcs = Self::dcs(c)?;
        let fact = |k: &str| c.facts.get(k).cloned().unwrap_or_default();
        let p = &c.deployment.postgres;
        // Synchronous replication as Patroni keeps it: it names the synchronous standby itself and
        // promotes only that one.
        let synchronous = p
            .synchronous_commit
            .as_deref()
            .is_some_and(|l| !matches!(l, "off" | "local"));
        let mut parameters = serde_json::Map::new();
        parameters.insert("max_connections".into(), 300.into());
        parameters.insert("shared_buffers".into(), "128MB".into());
        if let Some(level) = &p.synchronous_commit {
            parameters.insert("synchronous_commit".into(), level.clone().into());
        }
        for (k, v) in c.deployment.server_settings() {
            parameters.insert(k, v.into());
        }
        let rest = node.ports[REST];
        Ok(serde_json::json!({
            "scope": c.deployment.name,
            "namespace": "/scalebench/",
            "name": node.id,
            "restapi": {
                "listen": format!("127.0.0.1:{rest}"),
                "connect_address": format!("127.0.0.1:{rest}"),
            },
            "etcd3": { "hosts": format!("127.0.0.1:{}", dcs.port) },
            "bootstrap": {
                "dcs": {
                    "ttl": TTL_S,
                    "loop_wait": LOOP_WAIT_S,
                    "retry_timeout": RETRY_TIMEOUT_S,
                    "synchronous_mode": synchronous,
                    "postgresql": {
                        "use_pg_rewind": true,
                        "parameters": parameters,
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"auth-local": "trust"}, "no-sync"],
                "pg_hba": PG_HBA,
            },
            "postgresql": {
                "listen": format!("127.0.0.1:{}", node.port),
                "connect_address": format!("127.0.0.1:{}", node.port),
                "data_dir": node.data_dir,
                "bin_dir": bin_dir()?,
                "pgpass": node.dir.join("pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": fact(SUPERUSER_PASSWORD_FACT)},
                    "replication": {"username": "replicator", "password": fact(REPLICATION_PASSWORD_FACT)},
                    "rewind": {"username": "postgres", "password": fact(SUPERUSER_PASSWORD_FACT)},
                },
                // Beside the data directory, never in it: a rewind copies the other server's data
                // directory, and fails on a socket found there.
                "parameters": {
                    "unix_socket_directories": node.dir,
                },
                // Written by Patroni at every start: a rewound or copied data directory has the
                // other server's, or none.
                "pg_hba": PG_HBA,
                // A new replica's base backup starts at once: the default spread checkpoint paces
                // itself over checkpoint_timeout x 0.9 (4.5 min) before the copy begins.
                "basebackup": [{"checkpoint": "fast"}],
            },
            "watchdog": { "mode": "off" },
        }))
    }

    /// A new PostgreSQL node's state and its configuration file (private: it holds passwords).
    fn new_server(&self, c: &mut ClusterState) -> Result<NodeState, DeployError> {
        let mut node = c.new_node(SERVER, "127.0.0.1", free_port()?)?;
        node.ports.insert(REST.into(), free_port()?);
        // Made by Patroni: initdb on the first, a base backup of the primary on the others.
        node.data_dir = node.dir.join("data");
        let file = node.dir.join(CONFIG);
        let text = serde_json::to_string_pretty(&self.config(c, &node)?)
            .map_err(|e| DeployError::Failed(e.to_string()))?;
        scalebench_measure::files::write_private_atomically(&file, text.as_bytes())
            .map_err(DeployError::Failed)?;
        c.account()?.give(&file)?;
        Ok(node)
    }

    /// Starts node `node`'s Patroni; returns once Patroni's member is running as `want` says.
    fn spawn(
        &self,
        c: &ClusterState,
        node: &NodeState,
        want: fn(&Member) -> bool,
    ) -> Result<ProcessRef, DeployError> {
        let mut cmd = Command::new("patroni");
        cmd.arg(node.dir.join(CONFIG)).current_dir(&node.dir);
        let mut p = c.spawn_node(node, cmd)?;
        // Its own Patroni tells how it stands in the cluster.
        let own = (node.id.as_str(), node.ports[REST]);
        p.wait_ready(START_TIMEOUT, || {
            members_from(std::iter::once(own))
                .is_ok_and(|all| all.iter().any(|m| m.name == own.0 && want(m)))
        })?;
        Ok(p.detach())
    }
}

impl Engine for Patroni {
    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        operation::with(
            &operation::MEMBERSHIP,
            &[OperationKind::FailPrimary, OperationKind::Compact],
        )
    }

    fn account(&self) -> &'static str {
        crate::postgres::ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        1 + d.nodes
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        bin_dir()?;
        if Command::new("patroni").arg("--version").output().is_err() {
            return Err(patroni_missing());
        }
        for fact in [
            PASSWORD_FACT,
            SUPERUSER_PASSWORD_FACT,
            REPLICATION_PASSWORD_FACT,
        ] {
            c.facts.insert(fact.into(), crate::host::random_password()?);
        }
        let mut dcs = c.new_node(DCS, "127.0.0.1", free_port()?)?;
        dcs.ports.insert("peer".into(), free_port()?);
        dcs.data_dir = dcs.dir.join("data");
        dcs.process = Some(self.start_dcs(c, &dcs)?);
        c.nodes.push(dcs);
        // The first bootstraps and leads; the others copy it and follow.
        for k in 0..c.deployment.nodes {
            let mut node = self.new_server(c)?;
            let want: fn(&Member) -> bool = if k == 0 {
                |m| m.role == "leader" && m.state == "running"
            } else {
                follows
            };
            node.process = Some(self.spawn(c, &node, want)?);
            c.nodes.push(node);
        }
        let primary = Self::primary(c)?.clone();
        let password = c.facts[PASSWORD_FACT].clone();
        create_user_and_database(&bin_dir()?, &primary.dir, primary.port, &password)
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        if node.role == DCS {
            return self.start_dcs(c, node);
        }
        // Back as whatever Patroni makes of it: a replica, or the leader if no other runs.
        self.spawn(c, node, |m| m.state == "running" || m.state == "streaming")
    }

    fn serves_data(&self, node: &NodeState) -> bool {
        node.role == SERVER
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let mut node = self.new_server(c)?;
        node.process = Some(self.spawn(c, &node, follows)?);
        let id = node.id.clone();
        c.nodes.push(node);
        Ok(id)
    }

    /// The newest replica (never the primary: `fail-primary` is how the primary goes).
    fn removable(&self, c: &ClusterState) -> Option<String> {
        let primary = Self::primary(c).ok().map(|p| p.id.clone());
        c.nodes
            .iter()
            .rev()
            .find(|n| n.role == SERVER && Some(&n.id) != primary.as_ref())
            .map(|n| n.id.clone())
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        let node = c.node(id)?.clone();
        if node.role != SERVER {
            return Err(DeployError::Failed(format!(
                "{id} is Patroni's etcd, not a PostgreSQL server"
            )));
        }
        if Self::primary(c).is_ok_and(|p| p.id == id) {
            return Err(DeployError::Failed(format!(
                "{id} is the primary: scalebench removes replicas (fail-primary kills the primary)"
            )));
        }
        let servers = c.nodes.iter().filter(|n| n.role == SERVER).count();
        if servers <= 2 {
            return Err(DeployError::Failed(format!(
                "{id}: a Patroni cluster keeps at least 2 servers (one to fail over to)"
            )));
        }
        // Patroni stops its server on SIGTERM and removes its member key.
        if let Some(p) = node.process {
            p.stop(Duration::from_secs(60));
        }
        c.nodes.retain(|n| n.id != id);
        Ok(())
    }

    fn fail_primary(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let victim = Self::primary(c)?.id.clone();
        let node = c.nodes.iter_mut().find(|n| n.id == victim).unwrap();
        // Patroni and its PostgreSQL together, as a machine dies: its leader key expires.
        if let Some(p) = node.process.take() {
            p.kill();
        }
        self.after_kill(c, c.node(&victim)?);
        let promoted = super::engine::poll(FAILOVER_TIMEOUT, || {
            members(c).is_ok_and(|all| leader(&all).is_some_and(|m| m.name != victim))
        });
        if !promoted {
            return Err(DeployError::Failed(format!(
                "no replica promoted within {} s of {victim}'s death",
                FAILOVER_TIMEOUT.as_secs()
            )));
        }
        Ok(victim)
    }

    fn fail_primary_missing(&self, _d: &crate::spec::Deployment) -> String {
        String::new()
    }

    fn after_kill(&self, _c: &ClusterState, node: &NodeState) {
        if let Some(p) = postmaster(node) {
            p.kill();
        }
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let mut missing = Vec::new();
        if let Ok(dcs) = Self::dcs(c) {
            if !crate::etcd::healthy(dcs.port) {
                missing.push(format!("{} (etcd for Patroni) not healthy", dcs.id));
            }
        }
        let all = match members(c) {
            Ok(all) => all,
            Err(e) => {
                missing.push(e);
                return missing;
            }
        };
        if leader(&all).is_none() {
            missing.push("no running leader".into());
        }
        for n in c.running().filter(|n| n.role == SERVER) {
            match all.iter().find(|m| m.name == n.id) {
                None => missing.push(format!("{} not a member yet", n.id)),
                Some(m) if m.role != "leader" && !follows(m) => {
                    missing.push(format!("{} ({}) {}", n.id, m.role, m.state))
                }
                Some(_) if !port_open(n.port) => {
                    missing.push(format!("{} not accepting connections", n.id))
                }
                Some(_) => {}
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        match members(c) {
            Ok(all) => all
                .iter()
                .filter(|m| m.role != "leader" && m.lag != Some(0))
                .map(|m| match m.lag {
                    Some(lag) => format!("replica {}: {lag} bytes of WAL behind", m.name),
                    None => format!("replica {}: lag unknown ({})", m.name, m.state),
                })
                .collect(),
            Err(e) => vec![e],
        }
    }

    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for n in c.running().filter(|n| n.role == SERVER) {
            psql(&bin_dir()?, &n.dir, n.port, "postgres", "CHECKPOINT")?;
            done.push(format!("{}: CHECKPOINT", n.id));
        }
        Ok(done)
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let primary = Self::primary(c)?;
        psql(
            &bin_dir()?,
            &primary.dir,
            primary.port,
            DATABASE,
            "VACUUM ANALYZE",
        )?;
        let mut done = vec![format!("{}: VACUUM ANALYZE", primary.id)];
        done.extend(self.flush(c)?);
        Ok(done)
    }

    fn classify(&self) -> Classifier {
        super::postgres::classify
    }

    fn table_classifier(&self, node: &NodeState, table: &str) -> Option<Box<Classify<'static>>> {
        (node.role == SERVER)
            .then(|| super::postgres::table_classifier(&node.dir, node.port, table))
            .flatten()
    }

    /// Every server, for libpq's failover list: a client connects to whichever accepts writes.
    fn url(&self, c: &ClusterState) -> String {
        let hosts: Vec<String> = c
            .nodes
            .iter()
            .filter(|n| n.role == SERVER)
            .map(NodeState::endpoint)
            .collect();
        let password = c.facts.get(PASSWORD_FACT).map_or("", String::as_str);
        format!(
            "postgres://{USER}:{password}@{}/{DATABASE}?target_session_attrs=read-write",
            hosts.join(",")
        )
    }

    fn binding_options(&self, _c: &ClusterState) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}
