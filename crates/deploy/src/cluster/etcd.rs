//! etcd: N members formed from a static initial cluster; members join and leave with `etcdctl member`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::etcd::{healthy, member_command};
use crate::host::{free_port, port_open, run};
use crate::process::ProcessRef;
use crate::space::Classifier;

pub struct Etcd;

fn peer_url(n: &NodeState) -> String {
    format!(
        "http://127.0.0.1:{}",
        n.ports.get("peer").copied().unwrap_or(0)
    )
}

fn etcdctl(c: &ClusterState) -> Command {
    etcdctl_except(c, None)
}

/// etcdctl through the running members but `except`: a member being removed stops itself as the
/// removal commits, and a request it was serving ends in "etcdserver: server stopped".
fn etcdctl_except(c: &ClusterState, except: Option<&str>) -> Command {
    etcdctl_within(c, except, Duration::from_secs(20))
}

/// etcdctl through the running members but `except`, each command given at most `timeout`.
fn etcdctl_within(c: &ClusterState, except: Option<&str>, timeout: Duration) -> Command {
    let endpoints: Vec<String> = c
        .running()
        .filter(|n| Some(n.id.as_str()) != except)
        .map(NodeState::endpoint)
        .collect();
    let mut cmd = Command::new("etcdctl");
    cmd.env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={}", endpoints.join(",")))
        .arg(format!("--command-timeout={}s", timeout.as_secs().max(1)));
    cmd
}

fn leader_of(s: &serde_json::Value) -> u64 {
    s["Status"]["leader"].as_u64().unwrap_or(0)
}

/// The leader's member id and node, from `etcdctl endpoint status -w json`: the endpoint whose
/// member id is the leader it reports.
fn leader_in(c: &ClusterState, status: &[serde_json::Value]) -> Result<(u64, String), String> {
    let member_of = |s: &serde_json::Value| s["Status"]["header"]["member_id"].as_u64();
    let leader = status
        .iter()
        .find(|s| member_of(s) == Some(leader_of(s)))
        .ok_or("etcd reports no leader")?;
    let endpoint = leader["Endpoint"].as_str().unwrap_or("");
    let node = c
        .running()
        .find(|n| endpoint.ends_with(&format!(":{}", n.port)))
        .map(|n| n.id.clone())
        .ok_or_else(|| format!("no member serves {endpoint}"))?;
    Ok((leader_of(leader), node))
}

/// The id of member `name` in `etcdctl member list`'s output.
fn listed_member(list: &str, name: &str) -> Option<String> {
    list.lines().find_map(|l| {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        (f.get(2) == Some(&name)).then(|| f[0].to_string())
    })
}

/// Runs a membership change; etcd refuses them until the leader has heard from every member for a
/// few seconds ("unhealthy cluster"), so that refusal is retried for up to 60 s.
fn reconfigure(
    c: &ClusterState,
    leaving: Option<&str>,
    args: &[&str],
    what: &str,
) -> Result<String, DeployError> {
    let etcdctl = || etcdctl_except(c, leaving);
    let mut result = run(etcdctl().args(args), what);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while let Err(DeployError::Failed(m)) = &result {
        if !m.contains("unhealthy cluster") || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
        result = run(etcdctl().args(args), what);
    }
    result
}

impl Etcd {
    fn spawn(
        &self,
        c: &ClusterState,
        node: &NodeState,
        initial_cluster: &str,
        state: &str,
    ) -> Result<ProcessRef, DeployError> {
        let cmd = member_command(
            &node.data_dir,
            &node.id,
            node.port,
            node.ports["peer"],
            initial_cluster,
            state,
            &c.deployment.server_settings(),
        );
        let mut p = c.spawn_node(node, cmd)?;
        // Health needs a quorum, which may still be starting: here only the client port.
        let port = node.port;
        p.wait_ready(Duration::from_secs(30), || port_open(port))?;
        Ok(p.detach())
    }

    fn new_member(&self, c: &mut ClusterState) -> Result<NodeState, DeployError> {
        let mut node = c.new_node("member", "127.0.0.1", free_port()?)?;
        node.ports.insert("peer".into(), free_port()?);
        node.data_dir = node.dir.join("data");
        Ok(node)
    }

    /// Hex member id of `name` (from `etcdctl member list`: `id, status, name, peers, clients, learner`).
    fn member_id(&self, c: &ClusterState, name: &str) -> Result<String, DeployError> {
        let out = run(etcdctl(c).args(["member", "list"]), "etcdctl member list")?;
        listed_member(&out, name)
            .ok_or_else(|| DeployError::Failed(format!("etcd has no member {name}")))
    }

    fn status(&self, c: &ClusterState) -> Result<Vec<serde_json::Value>, String> {
        self.status_within(c, Duration::from_secs(20))
    }

    fn status_within(
        &self,
        c: &ClusterState,
        timeout: Duration,
    ) -> Result<Vec<serde_json::Value>, String> {
        let out = etcdctl_within(c, None, timeout)
            .args(["endpoint", "status", "-w", "json"])
            .output()
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&out.stdout).map_err(|_| {
            format!(
                "etcdctl endpoint status: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })
    }
}

impl Engine for Etcd {
    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        operation::with(
            &operation::MEMBERSHIP,
            &[OperationKind::FailPrimary, OperationKind::Compact],
        )
    }

    fn account(&self) -> &'static str {
        crate::etcd::ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.nodes
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let members: Vec<NodeState> = (0..c.deployment.nodes)
            .map(|_| self.new_member(c))
            .collect::<Result<_, _>>()?;
        let initial: Vec<String> = members
            .iter()
            .map(|n| format!("{}={}", n.id, peer_url(n)))
            .collect();
        let initial = initial.join(",");
        for mut m in members {
            m.process = Some(self.spawn(c, &m, &initial, "new")?);
            c.nodes.push(m);
        }
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        // With its data directory in place, etcd ignores the initial-cluster flags.
        let initial: Vec<String> = c
            .nodes
            .iter()
            .map(|n| format!("{}={}", n.id, peer_url(n)))
            .collect();
        self.spawn(c, node, &initial.join(","), "existing")
    }

    /// The leader, killed; returns once the others have elected a new one.
    fn fail_primary(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let status = self.status(c).map_err(DeployError::Failed)?;
        let (old, victim) = leader_in(c, &status).map_err(DeployError::Failed)?;
        let node = c.nodes.iter_mut().find(|n| n.id == victim).unwrap();
        if let Some(p) = node.process.take() {
            p.kill();
        }
        let elected = super::engine::poll(Duration::from_secs(60), || {
            self.status(c)
                .is_ok_and(|s| s.iter().any(|s| ![0, old].contains(&leader_of(s))))
        });
        if !elected {
            return Err(DeployError::Failed(format!(
                "no new leader after {victim} within 60 s"
            )));
        }
        Ok(victim)
    }

    /// The leader: stopped while a majority still runs, a leader hands its leadership to another
    /// member, and when that member's majority is gone next (the second of four members stopped),
    /// waits out etcd's request timeout for a transfer that cannot commit (7 s). Stopped last, it
    /// has no peer left to hand it to and stops at once.
    fn stops_last(&self, c: &ClusterState) -> Option<String> {
        let status = self.status_within(c, Duration::from_secs(2)).ok()?;
        leader_in(c, &status).ok().map(|(_, node)| node)
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let mut node = self.new_member(c)?;
        let out = reconfigure(
            c,
            None,
            &[
                "member",
                "add",
                &node.id,
                &format!("--peer-urls={}", peer_url(&node)),
            ],
            "etcdctl member add",
        )?;
        // etcdctl prints the initial cluster the new member must start with.
        let initial = out
            .lines()
            .find_map(|l| l.strip_prefix("ETCD_INITIAL_CLUSTER="))
            .map(|v| v.trim_matches('"').to_string())
            .ok_or_else(|| DeployError::Failed(format!("etcdctl member add said: {out}")))?;
        node.process = Some(self.spawn(c, &node, &initial, "existing")?);
        let (id, port) = (node.id.clone(), node.port);
        c.nodes.push(node);
        if !super::engine::poll(Duration::from_secs(60), || healthy(port)) {
            return Err(DeployError::Failed(format!(
                "new etcd member {id} did not become healthy"
            )));
        }
        Ok(id)
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        if c.nodes.len() == 1 {
            return Err(DeployError::Failed(format!("{id} is the last etcd member")));
        }
        let member = self.member_id(c, id)?;
        let node = c.node(id)?.clone();
        let removed = reconfigure(
            c,
            Some(id),
            &["member", "remove", &member],
            "etcdctl member remove",
        );
        // The answer can be lost while the removal commits (the leader leaving steps down): the
        // member list tells.
        if let Err(e) = removed {
            let mut list = etcdctl_except(c, Some(id));
            match run(list.args(["member", "list"]), "etcdctl member list") {
                Ok(out) if listed_member(&out, id).is_none() => {}
                _ => return Err(e),
            }
        }
        c.nodes.retain(|n| n.id != id);
        // A removed member stops by itself; make sure.
        if let Some(p) = node.process {
            p.stop(Duration::from_secs(30));
        }
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let mut missing: Vec<String> = c
            .running()
            .filter(|n| !healthy(n.port))
            .map(|n| format!("{} not healthy", n.id))
            .collect();
        if missing.is_empty() {
            match self.status(c) {
                Ok(s) if s.len() == c.running().count() => {}
                Ok(s) => missing.push(format!(
                    "{} of {} members answer",
                    s.len(),
                    c.running().count()
                )),
                Err(e) => missing.push(e),
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let status = match self.status(c) {
            Ok(s) => s,
            Err(e) => return vec![e],
        };
        let index = |s: &serde_json::Value, k: &str| s["Status"][k].as_u64().unwrap_or(0);
        let newest = status
            .iter()
            .map(|s| index(s, "raftIndex"))
            .max()
            .unwrap_or(0);
        status
            .iter()
            .filter(|s| index(s, "raftAppliedIndex") < newest)
            .map(|s| {
                format!(
                    "member {} is {} raft entries behind",
                    s["Endpoint"].as_str().unwrap_or("?"),
                    newest - index(s, "raftAppliedIndex")
                )
            })
            .collect()
    }

    fn flush(&self, _c: &ClusterState) -> Result<Vec<String>, DeployError> {
        Ok(vec![
            "etcd: nothing to flush (a write is in its bbolt file once committed)".into(),
        ])
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let status = self.status(c).map_err(DeployError::Failed)?;
        let revision = status
            .iter()
            .filter_map(|s| s["Status"]["header"]["revision"].as_u64())
            .max()
            .unwrap_or(0);
        let mut done = Vec::new();
        if revision > 1 {
            let out = etcdctl(c)
                .args(["compact", &revision.to_string(), "--physical"])
                .output()
                .map_err(|e| DeployError::Failed(format!("etcdctl compact: {e}")))?;
            let text = String::from_utf8_lossy(&out.stderr);
            // Already compacted to this revision: nothing to do.
            if !out.status.success() && !text.contains("compacted") {
                return Err(DeployError::Failed(format!(
                    "etcdctl compact: {}",
                    text.trim()
                )));
            }
            done.push(format!("compacted to revision {revision}"));
        }
        run(etcdctl(c).args(["defrag"]), "etcdctl defrag")?;
        done.push("defragmented every member".into());
        Ok(done)
    }

    fn classify(&self) -> Classifier {
        |p: &Path| {
            if p.starts_with("member/wal") {
                "log"
            } else {
                "data"
            }
        }
    }

    fn url(&self, c: &ClusterState) -> String {
        let endpoints: Vec<String> = c.nodes.iter().map(NodeState::endpoint).collect();
        format!("etcd://{}", endpoints.join(","))
    }
}
