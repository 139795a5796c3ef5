//! Redis Cluster: N masters with optional replicas each, formed and resharded with `redis-cli --cluster`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::host::{bounded, free_port_with_bus, run};
use crate::process::ProcessRef;
use crate::redis::{cluster_info, info_field, ping, server_command};
use crate::space::Classifier;

pub struct RedisCluster;

fn settings(c: &ClusterState) -> Vec<(String, String)> {
    let r = &c.deployment.redis;
    let mut s = vec![
        (
            "appendonly".to_string(),
            if r.appendonly { "yes" } else { "no" }.to_string(),
        ),
        ("appendfsync".to_string(), r.appendfsync.clone()),
    ];
    s.extend(c.deployment.server_settings());
    s
}

/// A command to one node: CLUSTER NODES answers at once; SAVE writes the whole data set.
const NODE_COMMAND_LIMIT: Duration = Duration::from_secs(600);
/// `--cluster check` reads every node's view.
const CHECK_LIMIT: Duration = Duration::from_secs(60);
/// `--cluster` create, add-node, reshard, del-node: a reshard moves every key of its slots.
const CLUSTER_TOOL_LIMIT: Duration = Duration::from_secs(3600);

/// redis-cli to one node, bounded: a paused node accepts the connection and never answers.
fn redis_cli(port: u16) -> Command {
    let mut cmd = bounded("redis-cli", NODE_COMMAND_LIMIT);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()]);
    cmd
}

fn cluster_tool(args: &[&str], what: &str) -> Result<String, DeployError> {
    run(
        bounded("redis-cli", CLUSTER_TOOL_LIMIT)
            .arg("--cluster")
            .args(args),
        what,
    )
}

/// `CLUSTER NODES` of a node: (node id, port, flags, master id, has slots).
fn cluster_nodes(port: u16) -> Vec<(String, u16, String, String, bool)> {
    let Ok(out) = run(redis_cli(port).args(["CLUSTER", "NODES"]), "CLUSTER NODES") else {
        return Vec::new();
    };
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = f.get(1)?.split(['@', ':']).nth(1)?.parse().ok()?;
            Some((
                f[0].to_string(),
                port,
                f.get(2)?.to_string(),
                f.get(3)?.to_string(),
                f.len() > 8,
            ))
        })
        .collect()
}

impl RedisCluster {
    fn spawn(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        let cmd = server_command(&node.dir, node.port, true, &settings(c));
        let mut p = c.spawn_node(node, cmd)?;
        let port = node.port;
        p.wait_ready(Duration::from_secs(30), || ping(port))?;
        Ok(p.detach())
    }

    fn new_server(&self, c: &mut ClusterState, role: &str) -> Result<usize, DeployError> {
        let mut node = c.new_node(role, "127.0.0.1", free_port_with_bus()?)?;
        node.process = Some(self.spawn(c, &node)?);
        c.nodes.push(node);
        Ok(c.nodes.len() - 1)
    }

    /// Records each node's cluster id and role as the cluster reports them.
    fn learn_roles(&self, c: &mut ClusterState) {
        // A master as recorded: a replica may be the one that is not answering.
        let seed = c
            .running()
            .find(|n| n.role == "master")
            .or_else(|| c.running().next())
            .map(|n| n.port);
        let Some(seed) = seed else {
            return;
        };
        let known = cluster_nodes(seed);
        for n in &mut c.nodes {
            if let Some((id, _, flags, master, _)) = known.iter().find(|k| k.1 == n.port) {
                n.facts.insert("cluster_id".into(), id.clone());
                if flags.contains("slave") {
                    n.role = "replica".into();
                    n.facts.insert("master_id".into(), master.clone());
                } else {
                    n.role = "master".into();
                    n.facts.remove("master_id");
                }
            }
        }
    }

    fn seed(&self, c: &ClusterState, except: Option<&str>) -> Result<u16, DeployError> {
        c.running()
            .find(|n| n.role == "master" && Some(n.id.as_str()) != except)
            .map(|n| n.port)
            .ok_or_else(|| DeployError::Failed("no running Redis master".into()))
    }

    /// Waits until every node agrees on the configuration (`--cluster check` clean), which
    /// `add-node` and `rebalance` need.
    fn wait_agreement(&self, c: &ClusterState, seed: u16) -> Result<(), DeployError> {
        let mut last = Vec::new();
        if super::engine::poll(Duration::from_secs(60), || {
            last = check(seed);
            last.is_empty()
        }) {
            Ok(())
        } else {
            Err(DeployError::Failed(format!(
                "Redis Cluster {} does not settle: {}",
                c.deployment.name,
                last.join("; ")
            )))
        }
    }
}

/// Runs a `redis-cli --cluster` command that needs nodes in agreement; gossip may still be settling
/// a configuration epoch, so "don't agree" is waited out (up to 60 s) and retried.
fn settled_tool(seed: u16, args: &[&str], what: &str) -> Result<String, DeployError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match cluster_tool(args, what) {
            Err(DeployError::Failed(m))
                if m.contains("agree") && std::time::Instant::now() < deadline =>
            {
                super::engine::poll(Duration::from_secs(10), || check(seed).is_empty());
            }
            other => return other,
        }
    }
}

/// Problems `redis-cli --cluster check` reports (open slots, disagreement, uncovered slots).
fn check(seed: u16) -> Vec<String> {
    let out = bounded("redis-cli", CHECK_LIMIT)
        .args(["--cluster", "check", &format!("127.0.0.1:{seed}")])
        .output();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout).to_string();
            let problems: Vec<String> = text
                .lines()
                .filter(|l| l.contains("[ERR]") || l.contains("[WARNING]"))
                .map(|l| l.trim().to_string())
                .collect();
            if o.status.code() == Some(124) {
                vec![format!(
                    "redis-cli --cluster check did not answer within {} s",
                    CHECK_LIMIT.as_secs()
                )]
            } else if problems.is_empty() && !o.status.success() {
                vec![format!("redis-cli --cluster check failed: {}", text.trim())]
            } else {
                problems
            }
        }
        Err(e) => vec![format!("redis-cli: {e}")],
    }
}

impl Engine for RedisCluster {
    fn fail_primary_missing(&self, _d: &crate::spec::Deployment) -> String {
        "a master fails over only to its replica: set redis.replicas = 1 or more".into()
    }

    fn operations(&self, d: &crate::spec::Deployment) -> Vec<OperationKind> {
        let mut more = Vec::new();
        // A master fails over only to a replica of its own.
        if d.redis.replicas > 0 {
            more.push(OperationKind::FailPrimary);
        }
        // Without the append-only file there is nothing to compact (the RDB is rewritten whole).
        if d.redis.appendonly {
            more.push(OperationKind::Compact);
        }
        operation::with(&operation::MEMBERSHIP, &more)
    }

    fn account(&self) -> &'static str {
        crate::redis::ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.nodes * (1 + d.redis.replicas)
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let replicas = c.deployment.redis.replicas;
        let total = c.deployment.nodes * (1 + replicas);
        for _ in 0..total {
            self.new_server(c, "master")?;
        }
        let mut args: Vec<String> = vec!["create".into()];
        args.extend(c.nodes.iter().map(|n| n.endpoint()));
        args.extend([
            "--cluster-replicas".into(),
            replicas.to_string(),
            "--cluster-yes".into(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster_tool(&args, "redis-cli --cluster create")?;
        // Roles are known everywhere once the nodes agree on the configuration.
        let seed = c.nodes[0].port;
        self.wait_agreement(c, seed)?;
        // A replica shows as one once its CLUSTER REPLICATE has gone round.
        let expected = c.deployment.nodes * replicas;
        super::engine::poll(Duration::from_secs(60), || {
            cluster_nodes(seed)
                .iter()
                .filter(|n| n.2.contains("slave"))
                .count()
                == expected
        });
        self.learn_roles(c);
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        self.spawn(c, node)
    }

    /// The first master with a running replica, killed; returns once one of its replicas has
    /// taken over (after `cluster-node-timeout`, then the replicas' election).
    fn fail_primary(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        self.learn_roles(c);
        let replica_ports = |c: &ClusterState, master: &NodeState| -> Vec<u16> {
            let id = master.facts.get("cluster_id");
            c.running()
                .filter(|n| n.role == "replica" && n.facts.get("master_id") == id)
                .map(|n| n.port)
                .collect()
        };
        let (victim, ports) = c
            .running()
            .filter(|n| n.role == "master")
            .map(|n| (n.id.clone(), replica_ports(c, n)))
            .find(|(_, ports)| !ports.is_empty())
            .ok_or_else(|| {
                DeployError::Failed("no running Redis master has a running replica".into())
            })?;
        let node = c.nodes.iter_mut().find(|n| n.id == victim).unwrap();
        if let Some(p) = node.process.take() {
            p.kill();
        }
        let promoted = super::engine::poll(Duration::from_secs(120), || {
            ports
                .iter()
                .any(|p| info_field(*p, "replication", "role").as_deref() == Some("master"))
        });
        if !promoted {
            return Err(DeployError::Failed(format!(
                "no replica of {victim} took over within 120 s"
            )));
        }
        // The promoted replica knows it leads before the other masters' views say so: roles
        // learnt from a view without the promotion would keep it a replica in the state, whose
        // link to a master is never up (busy for ever, the event never stable).
        let learnt = super::engine::poll(Duration::from_secs(60), || {
            self.learn_roles(c);
            c.nodes
                .iter()
                .any(|n| ports.contains(&n.port) && n.role == "master")
        });
        if !learnt {
            return Err(DeployError::Failed(format!(
                "the cluster's view did not show {victim}'s replica promoted within 60 s"
            )));
        }
        Ok(victim)
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let seed = self.seed(c, None)?;
        let seed_addr = format!("127.0.0.1:{seed}");
        self.wait_agreement(c, seed)?;
        let i = self.new_server(c, "master")?;
        let new = c.nodes[i].endpoint();
        settled_tool(
            seed,
            &["add-node", &new, &seed_addr],
            "redis-cli --cluster add-node",
        )?;
        self.wait_agreement(c, seed)?;
        // A node that has just joined answers CLUSTERDOWN (and fails MIGRATE) until it has learnt
        // the slot map: wait until every node reports the cluster ok and knows every other.
        let mut waiting = Vec::new();
        if !super::engine::poll(Duration::from_secs(60), || {
            waiting = self.not_ready(c);
            waiting.is_empty()
        }) {
            return Err(DeployError::Failed(format!(
                "the new node did not join: {}",
                waiting.join("; ")
            )));
        }
        self.learn_roles(c);
        let master_id = c.nodes[i]
            .facts
            .get("cluster_id")
            .cloned()
            .unwrap_or_default();
        for _ in 0..c.deployment.redis.replicas {
            let r = self.new_server(c, "replica")?;
            let addr = c.nodes[r].endpoint();
            settled_tool(
                seed,
                &[
                    "add-node",
                    &addr,
                    &seed_addr,
                    "--cluster-slave",
                    "--cluster-master-id",
                    &master_id,
                ],
                "redis-cli --cluster add-node (replica)",
            )?;
            self.wait_agreement(c, seed)?;
        }
        // Moves slots (with their keys, MIGRATE) so that masters hold equal shares; clients follow
        // the ASK and MOVED redirections meanwhile.
        settled_tool(
            seed,
            &["rebalance", &seed_addr, "--cluster-use-empty-masters"],
            "redis-cli --cluster rebalance",
        )?;
        self.learn_roles(c);
        Ok(c.nodes[i].id.clone())
    }

    fn removable(&self, c: &ClusterState) -> Option<String> {
        c.nodes
            .iter()
            .rev()
            .find(|n| n.role == "master" && n.process.is_some())
            .map(|n| n.id.clone())
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        self.learn_roles(c);
        let node = c.node(id)?.clone();
        let cluster_id = node.facts.get("cluster_id").cloned().unwrap_or_default();
        let seed = self.seed(c, Some(id))?;
        let seed_addr = format!("127.0.0.1:{seed}");
        self.wait_agreement(c, seed)?;
        let mut leaving = vec![node.clone()];
        if node.role == "master" {
            let masters = c
                .nodes
                .iter()
                .filter(|n| n.role == "master" && n.process.is_some())
                .count();
            if masters <= 3 {
                return Err(DeployError::Failed(format!(
                    "cannot remove {id}: a Redis Cluster keeps at least 3 masters"
                )));
            }
            // Weight 0 drains the node: every slot it holds moves to the others.
            settled_tool(
                seed,
                &[
                    "rebalance",
                    &seed_addr,
                    "--cluster-weight",
                    &format!("{cluster_id}=0"),
                ],
                "redis-cli --cluster rebalance (drain)",
            )?;
            self.wait_agreement(c, seed)?;
            // Its replicas go with it.
            leaving.extend(
                c.nodes
                    .iter()
                    .filter(|n| n.facts.get("master_id") == Some(&cluster_id))
                    .cloned(),
            );
        }
        for n in leaving.iter().rev() {
            let nid = n.facts.get("cluster_id").cloned().unwrap_or_default();
            settled_tool(
                seed,
                &["del-node", &seed_addr, &nid],
                "redis-cli --cluster del-node",
            )?;
            if let Some(p) = n.process {
                p.stop(Duration::from_secs(30));
            }
            c.nodes.retain(|x| x.id != n.id);
        }
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        // A stopped node is still a member (crashed, or failed over): the others still know it.
        let running = c.nodes.len();
        let mut missing = Vec::new();
        for n in c.running() {
            match cluster_info(n.port) {
                None => missing.push(format!("{} does not answer", n.id)),
                Some(info) => {
                    if !info.contains("cluster_state:ok") {
                        missing.push(format!("{}: cluster_state not ok", n.id));
                    }
                    let known = info
                        .lines()
                        .find_map(|l| l.strip_prefix("cluster_known_nodes:"))
                        .and_then(|v| v.trim().parse::<usize>().ok());
                    if known != Some(running) {
                        missing.push(format!(
                            "{} knows {} of {running} nodes",
                            n.id,
                            known.map_or("?".into(), |k| k.to_string())
                        ));
                    }
                }
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let Ok(seed) = self.seed(c, None) else {
            return vec!["no running master".into()];
        };
        let mut busy = check(seed);
        for n in c.running().filter(|n| n.role == "replica") {
            if info_field(n.port, "replication", "master_link_status").as_deref() != Some("up") {
                busy.push(format!("replica {}: link to master not up", n.id));
            }
            if info_field(n.port, "replication", "master_sync_in_progress").as_deref() != Some("0")
            {
                busy.push(format!("replica {}: initial sync in progress", n.id));
            }
        }
        for n in c.running() {
            if info_field(n.port, "persistence", "aof_rewrite_in_progress").as_deref() == Some("1")
                || info_field(n.port, "persistence", "rdb_bgsave_in_progress").as_deref()
                    == Some("1")
            {
                busy.push(format!("{}: writing its persistence files", n.id));
            }
        }
        busy
    }

    /// SAVE on every node: the dataset, which Redis holds in memory, written to its RDB file (with
    /// or without save points and the AOF), which then holds the records as inserted.
    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for n in c.running() {
            let out = run(redis_cli(n.port).arg("SAVE"), "SAVE")?;
            if out.trim() != "OK" {
                return Err(DeployError::Failed(format!(
                    "{}: SAVE answered {}",
                    n.id,
                    out.trim()
                )));
            }
            done.push(format!("{}: SAVE", n.id));
        }
        Ok(done)
    }

    /// The RDB saved, then the append-only file rewritten (with it, Redis keeps a log of every
    /// write until the rewrite replaces it with the dataset).
    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = self.flush(c)?;
        if !c.deployment.redis.appendonly {
            return Ok(done);
        }
        for n in c.running() {
            run(redis_cli(n.port).arg("BGREWRITEAOF"), "BGREWRITEAOF")?;
            done.push(format!("{}: BGREWRITEAOF", n.id));
        }
        Ok(done)
    }

    fn before_stop(&self, _c: &ClusterState, node: &NodeState) {
        // Without save points a stopping server keeps nothing: write the RDB now.
        let _ = run(redis_cli(node.port).arg("SAVE"), "SAVE");
    }

    fn classify(&self) -> Classifier {
        |p: &Path| {
            let name = p.to_string_lossy();
            if p.starts_with("appendonlydir") || name.ends_with(".aof") {
                "log"
            } else if name.ends_with(".rdb") {
                "data"
            } else {
                "other"
            }
        }
    }

    fn url(&self, c: &ClusterState) -> String {
        let port = self
            .seed(c, None)
            .unwrap_or_else(|_| c.nodes.first().map_or(0, |n| n.port));
        // Every other master as a seed too: a client that starts (or reconnects) while the first
        // is down still finds the cluster.
        let seeds: Vec<String> = c
            .running()
            .filter(|n| n.role == "master" && n.port != port)
            .map(NodeState::endpoint)
            .collect();
        if seeds.is_empty() {
            format!("redis+cluster://127.0.0.1:{port}")
        } else {
            format!("redis+cluster://127.0.0.1:{port}?seeds={}", seeds.join(","))
        }
    }
}
