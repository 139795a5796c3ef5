//! External clusters: scalebench starts nothing; it knows the endpoints and runs the deployment's shell
//! hooks to add or remove nodes and to ask whether the cluster is ready and idle.
//!
//! Hooks run with `sh -c` from the deployment file's directory and get `SCALEBENCH_URL`,
//! `SCALEBENCH_NODES` (comma-separated endpoints), `SCALEBENCH_CLUSTER_DIR` and, for remove-node,
//! `SCALEBENCH_NODE`. `add_node` may print the new node's `host:port` on its last line.

use std::collections::BTreeMap;
use std::process::Command;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::OperationKind;
use crate::error::DeployError;
use crate::process::ProcessRef;
use crate::space::{all_data, Classifier};
use crate::spec::ExternalHooks;

pub struct External;

/// Runs hook `name` if the deployment has it: Ok(None) without one, Ok(Some(stdout)) on exit 0.
pub(super) fn run_hook(
    c: &ClusterState,
    name: &str,
    select: impl Fn(&ExternalHooks) -> Option<&str>,
    env: &[(&str, &str)],
) -> Result<Option<String>, DeployError> {
    let Some(script) = select(&c.deployment.external.hooks) else {
        return Ok(None);
    };
    let nodes: Vec<String> = c.nodes.iter().map(NodeState::endpoint).collect();
    // The questions asked while waiting (is it ready, is it idle) are given up after a minute and
    // at Ctrl-C; the hooks that act (up, flush, compact, ...) run to their end.
    let question = matches!(name, "is_ready" | "is_idle");
    let mut cmd = if question {
        crate::host::bounded("sh", crate::host::HOOK_ASK_LIMIT)
    } else {
        Command::new("sh")
    };
    cmd.arg("-c").arg(script);
    if let Some(dir) = c.deployment_file.parent() {
        cmd.current_dir(dir);
    }
    cmd.env("SCALEBENCH_URL", &c.deployment.external.url)
        .env("SCALEBENCH_NODES", nodes.join(","))
        .env("SCALEBENCH_CLUSTER_DIR", &c.dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = if question {
        crate::host::output_until_interrupted(&mut cmd, &format!("{name} hook"), "")?
    } else {
        cmd.output()
            .map_err(|e| DeployError::Failed(format!("{name} hook: {e}")))?
    };
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if out.status.success() {
        Ok(Some(stdout))
    } else if question && out.status.code() == Some(crate::host::TIMED_OUT) {
        Err(DeployError::Failed(format!(
            "{name} hook did not answer within {} s",
            crate::host::HOOK_ASK_LIMIT.as_secs()
        )))
    } else {
        let said = format!("{}{}", stdout, String::from_utf8_lossy(&out.stderr));
        Err(DeployError::Failed(format!(
            "{name} hook failed ({}): {}",
            out.status,
            said.trim().lines().next().unwrap_or("no output")
        )))
    }
}

/// ": <the last line>" of a hook's output, when it printed one.
fn last_line(out: &str) -> String {
    out.lines()
        .last()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map_or(String::new(), |l| format!(": {l}"))
}

fn endpoint_parts(e: &str) -> (String, u16) {
    match e.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(0)),
        None => (e.to_string(), 0),
    }
}

impl External {
    fn add_record(&self, c: &mut ClusterState, endpoint: &str) -> Result<String, DeployError> {
        let (host, port) = endpoint_parts(endpoint);
        // Node records of an external cluster are bookkeeping only: no directory of ours.
        c.next_node += 1;
        let id = format!("node{}", c.next_node);
        c.nodes.push(NodeState {
            id: id.clone(),
            role: "external".into(),
            host,
            port,
            ports: BTreeMap::new(),
            dir: c.dir.clone(),
            data_dir: c.dir.clone(),
            process: None,
            facts: BTreeMap::new(),
        });
        Ok(id)
    }
}

impl Engine for External {
    // Starts no server.
    fn account(&self) -> &'static str {
        "nobody"
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.external.endpoints.len()
    }

    /// Those the deployment has hooks for.
    fn operations(&self, d: &crate::spec::Deployment) -> Vec<OperationKind> {
        let h = &d.external.hooks;
        [
            (OperationKind::Add, &h.add_node),
            (OperationKind::Remove, &h.remove_node),
            (OperationKind::Crash, &h.crash_node),
            (OperationKind::Restart, &h.restart_node),
            (OperationKind::RollingRestart, &h.rolling_restart),
            (OperationKind::FailPrimary, &h.fail_primary),
            (OperationKind::Compact, &h.compact),
            (OperationKind::Repair, &h.repair),
        ]
        .into_iter()
        .filter(|(op, hook)| {
            hook.is_some() || (*op == OperationKind::RollingRestart && h.restart_node.is_some())
        })
        .map(|(op, _)| op)
        .collect()
    }

    fn operation_hook(
        &self,
        c: &ClusterState,
        op: OperationKind,
        node: Option<&NodeState>,
    ) -> Option<Result<Vec<String>, DeployError>> {
        let endpoint = node.map(NodeState::endpoint).unwrap_or_default();
        let env = [("SCALEBENCH_NODE", endpoint.as_str())];
        let hook = |name: &str, select: fn(&ExternalHooks) -> Option<&str>| {
            run_hook(c, name, select, &env).and_then(|out| {
                out.map(|o| vec![format!("{name} hook ran{}", last_line(&o))])
                    .ok_or_else(|| {
                        DeployError::Failed(format!("the deployment has no external.hooks.{name}"))
                    })
            })
        };
        Some(match op {
            OperationKind::Crash => hook("crash_node", |h| h.crash_node.as_deref()),
            OperationKind::Restart => hook("restart_node", |h| h.restart_node.as_deref()),
            OperationKind::RollingRestart
                if c.deployment.external.hooks.rolling_restart.is_some() =>
            {
                hook("rolling_restart", |h| h.rolling_restart.as_deref())
            }
            OperationKind::FailPrimary => hook("fail_primary", |h| h.fail_primary.as_deref()),
            OperationKind::Repair => hook("repair", |h| h.repair.as_deref()),
            // Scaling and compaction have their hooks through the engine; a rolling restart
            // without its own hook is the restart hook node by node.
            _ => return None,
        })
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        run_hook(c, "up", |h| h.up.as_deref(), &[])?;
        for e in c.deployment.external.endpoints.clone() {
            self.add_record(c, &e)?;
        }
        Ok(())
    }

    fn start(&self, _c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        Err(DeployError::Failed(format!(
            "{} belongs to an external cluster: start it with its own tools",
            node.id
        )))
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let out = run_hook(c, "add_node", |h| h.add_node.as_deref(), &[])?.ok_or_else(|| {
            DeployError::Failed("the deployment has no external.hooks.add_node".into())
        })?;
        let endpoint = out.lines().last().unwrap_or("").trim().to_string();
        self.add_record(c, &endpoint)
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        let endpoint = c.node(id)?.endpoint();
        run_hook(
            c,
            "remove_node",
            |h| h.remove_node.as_deref(),
            &[("SCALEBENCH_NODE", &endpoint)],
        )?
        .ok_or_else(|| {
            DeployError::Failed("the deployment has no external.hooks.remove_node".into())
        })?;
        c.nodes.retain(|n| n.id != id);
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        match run_hook(c, "is_ready", |h| h.is_ready.as_deref(), &[]) {
            Ok(Some(_)) => Vec::new(),
            Err(e) => vec![e.to_string()],
            // Without a hook: every endpoint accepts TCP connections.
            Ok(None) => c
                .nodes
                .iter()
                .filter(|n| {
                    use std::net::ToSocketAddrs;
                    !n.endpoint().to_socket_addrs().is_ok_and(|mut a| {
                        a.any(|a| {
                            std::net::TcpStream::connect_timeout(
                                &a,
                                std::time::Duration::from_secs(2),
                            )
                            .is_ok()
                        })
                    })
                })
                .map(|n| format!("{} ({}) refuses connections", n.id, n.endpoint()))
                .collect(),
        }
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        match run_hook(c, "is_idle", |h| h.is_idle.as_deref(), &[]) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e.to_string()],
        }
    }

    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        Ok(match run_hook(c, "flush", |h| h.flush.as_deref(), &[])? {
            Some(_) => vec!["flush hook ran".into()],
            None => vec!["no flush hook".into()],
        })
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        Ok(
            match run_hook(c, "compact", |h| h.compact.as_deref(), &[])? {
                Some(_) => vec!["compact hook ran".into()],
                None => vec!["no compact hook".into()],
            },
        )
    }

    fn classify(&self) -> Classifier {
        all_data
    }

    fn url(&self, c: &ClusterState) -> String {
        c.deployment.external.url.clone()
    }
}
