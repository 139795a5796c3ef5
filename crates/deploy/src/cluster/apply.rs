//! An operation on a running cluster: checked against what its kind has, then applied, the one
//! dispatcher from an [`Operation`] to what the engine (or an external cluster's hook) does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::operation::{Operation, OperationKind};
use super::Cluster;
use crate::spec::{Database, Deployment};
use crate::DeployError;

/// What an applied operation did: the nodes it changed (added, removed, crashed, restarted,
/// failed; for compaction and repair the data nodes it ran on) and what it said, when it says more.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    pub changed: Vec<String>,
    pub said: Option<String>,
}

impl Cluster {
    /// Refuses, as bad input, `op` where this cluster does not have it, names a node it does not
    /// have running, or would leave no data node running: before anything is touched.
    pub fn check(&self, op: Operation) -> Result<(), DeployError> {
        self.check_operation(op.kind(), op.node().as_deref())?;
        if let Operation::Crash(k) | Operation::Remove(k) = op {
            let running = self.data_nodes().len();
            if k as usize >= running {
                return Err(DeployError::BadInput(format!(
                    "--action {op}: cluster {} has {running} data nodes running; at least one must stay",
                    self.name()
                )));
            }
        }
        Ok(())
    }

    /// Applies `op` and returns what it did; each operation waits until the cluster is ready
    /// again (crash and compaction excepted: nothing rejoins).
    pub fn apply(&mut self, op: Operation) -> Result<Applied, DeployError> {
        let mut done = Applied::default();
        match op {
            Operation::Add(k) => {
                for _ in 0..k {
                    done.changed.push(self.add_node()?);
                }
            }
            Operation::Double => {
                for _ in 0..self.data_nodes().len() {
                    done.changed.push(self.add_node()?);
                }
            }
            Operation::Remove(k) => {
                for _ in 0..k {
                    done.changed.push(self.remove_node(None)?);
                }
            }
            Operation::Crash(k) => {
                // The newest data nodes (never a coordinator or gateway).
                let victims: Vec<String> = self
                    .data_nodes()
                    .iter()
                    .rev()
                    .filter(|n| n.is_running() || n.role == "external")
                    .take(k as usize)
                    .map(|n| n.id.clone())
                    .collect();
                for id in victims {
                    self.crash_node(&id)?;
                    done.changed.push(id);
                }
            }
            Operation::Restart(_) => {
                let id = op.node().expect("restart names its node");
                self.restart_node(&id)?;
                done.changed.push(id);
            }
            Operation::RollingRestart => {
                let before = self.data_node_ids();
                done.said = Some(format!(
                    "rolling restart: {}",
                    self.rolling_restart()?.join("; ")
                ));
                done.changed = before;
            }
            Operation::FailPrimary => done.changed.push(self.fail_primary()?),
            Operation::Compact | Operation::Repair => {
                let said = if op == Operation::Compact {
                    self.compact()?
                } else {
                    self.repair()?
                };
                done.said = Some(format!("{op}: {}", said.join("; ")));
                done.changed = self.data_node_ids();
            }
        }
        Ok(done)
    }

    /// Per kind of cluster (its name), the operations the deployment files in `dir` have, external
    /// ones left out (they have the operations they have hooks for): what docs/operations.md's
    /// matrix and `cluster --help` say, checked against the engines by the tests.
    pub fn operations_by_kind(
        dir: &Path,
    ) -> Result<BTreeMap<String, BTreeSet<OperationKind>>, DeployError> {
        let mut by_kind: BTreeMap<String, BTreeSet<OperationKind>> = BTreeMap::new();
        let entries = std::fs::read_dir(dir).map_err(|e| DeployError::io(dir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| DeployError::io(dir, e))?.path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let d = Deployment::from_file(&path)?;
            if d.database != Database::External {
                by_kind
                    .entry(d.database.name().to_string())
                    .or_default()
                    .extend(Cluster::operations_of(&d));
            }
        }
        Ok(by_kind)
    }

    fn data_node_ids(&self) -> Vec<String> {
        self.data_nodes().iter().map(|n| n.id.clone()).collect()
    }

    /// The operations under load this cluster has (its kind's, for its deployment).
    pub fn operations(&self) -> Vec<OperationKind> {
        self.engine.operations(&self.state.deployment)
    }

    /// The operations a cluster of `deployment` will have, before it is up (an experiment's check).
    pub fn operations_of(deployment: &Deployment) -> Vec<OperationKind> {
        super::engine(deployment.database).map_or_else(|_| Vec::new(), |e| e.operations(deployment))
    }

    /// Refuses, as bad input, an operation this cluster does not have, or one on a node that is
    /// not a running member: before anything is touched.
    pub fn check_operation(
        &self,
        op: OperationKind,
        node: Option<&str>,
    ) -> Result<(), DeployError> {
        let has = self.operations();
        if !has.contains(&op) {
            let names: Vec<&str> = has.iter().map(|o| o.name()).collect();
            let why = match (self.state.deployment.database, op) {
                (Database::External, _) => {
                    " (an external cluster has the operations it has hooks for)".to_string()
                }
                (_, OperationKind::FailPrimary) => format!(
                    " ({})",
                    self.engine.fail_primary_missing(&self.state.deployment)
                ),
                _ => String::new(),
            };
            return Err(DeployError::BadInput(format!(
                "cluster {} ({}) has no operation '{op}'{why}; it has: {}",
                self.name(),
                self.state.deployment.database.name(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )));
        }
        if let Some(id) = node {
            let known: Vec<&str> = self.state.nodes.iter().map(|n| n.id.as_str()).collect();
            match self.state.nodes.iter().find(|n| n.id == id) {
                None => {
                    return Err(DeployError::BadInput(format!(
                        "cluster {} has no node '{id}' (nodes: {})",
                        self.name(),
                        known.join(", ")
                    )))
                }
                Some(n) if n.role != "external" && !n.is_running() => {
                    return Err(DeployError::BadInput(format!(
                        "{id} of cluster {} is not running (`scalebench cluster start-node {} --node {id}` starts it)",
                        self.name(),
                        self.state.deployment_file.display()
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Stops node `id` cleanly (its data made durable first), starts it again from its data and
    /// waits until the cluster with it is ready: the node has rejoined. An external cluster's
    /// `restart_node` hook does the same.
    pub fn restart_node(&mut self, id: &str) -> Result<Vec<String>, DeployError> {
        let node = self.state.node(id)?.clone();
        if let Some(done) =
            self.engine
                .operation_hook(&self.state, OperationKind::Restart, Some(&node))
        {
            let done = done?;
            self.wait_ready()?;
            return Ok(done);
        }
        let along: Vec<String> = self
            .engine
            .restarts_with(&self.state, &node)
            .into_iter()
            .filter(|a| self.state.node(a).is_ok_and(|n| n.is_running()))
            .collect();
        for a in &along {
            self.stop_node(a, false)?;
        }
        self.engine.before_stop(&self.state, &node);
        self.stop_node(id, false)?;
        // Started again whatever happens to the wait: Ctrl-C must not leave it down.
        self.start_node(id)?;
        for a in &along {
            self.start_node(a)?;
        }
        self.wait_ready()?;
        let with = if along.is_empty() {
            String::new()
        } else {
            format!(" (with {})", along.join(", "))
        };
        Ok(vec![format!("{id}: stopped, started, rejoined{with}")])
    }

    /// Restarts every running data node in turn ([`Cluster::restart_node`]), each back and the
    /// cluster ready before the next: how an upgrade rolls through a cluster. Ctrl-C ends it
    /// between nodes, every node running.
    pub fn rolling_restart(&mut self) -> Result<Vec<String>, DeployError> {
        if let Some(done) =
            self.engine
                .operation_hook(&self.state, OperationKind::RollingRestart, None)
        {
            let done = done?;
            self.wait_ready()?;
            return Ok(done);
        }
        let ids: Vec<String> = self.data_nodes().iter().map(|n| n.id.clone()).collect();
        // Which nodes run restarted and which as they were: what the step keeps.
        let stopped_after = |k: usize, why: &str| {
            let list = |ids: &[String]| {
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            };
            DeployError::Interrupted(format!(
                "the rolling restart after {k} of its {} nodes{why} (every node is running; restarted: {}; not restarted: {})",
                ids.len(),
                list(&ids[..k]),
                list(&ids[k..])
            ))
        };
        let mut done = Vec::new();
        for (k, id) in ids.iter().enumerate() {
            if crate::host::waits_interrupted() {
                return Err(stopped_after(k, ""));
            }
            match self.restart_node(id) {
                Ok(d) => done.extend(d),
                // Started again before the wait was given up: restarted, not yet waited for.
                Err(DeployError::Interrupted(why)) => {
                    return Err(stopped_after(k + 1, &format!(", {why}")))
                }
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Kills the primary (master, leader) and returns, with its id, once the database has failed
    /// over and the cluster without it is ready. The node stays down, still a member
    /// (`cluster start-node --node ID` brings it back).
    pub fn fail_primary(&mut self) -> Result<String, DeployError> {
        if let Some(done) =
            self.engine
                .operation_hook(&self.state, OperationKind::FailPrimary, None)
        {
            let said = done?;
            self.wait_ready()?;
            return Ok(said.join("; "));
        }
        let killed = self.engine.fail_primary(&mut self.state);
        self.save()?;
        let killed = killed?;
        self.state.remove_memory_group(&killed);
        self.wait_ready()?;
        Ok(killed)
    }

    /// Kills node `id` without warning (SIGKILL; an external cluster's `crash_node` hook): it
    /// stays a member, down.
    pub fn crash_node(&mut self, id: &str) -> Result<(), DeployError> {
        let node = self.state.node(id)?.clone();
        match self
            .engine
            .operation_hook(&self.state, OperationKind::Crash, Some(&node))
        {
            Some(done) => done.map(|_| ()),
            None => self.stop_node(id, true),
        }
    }

    /// Anti-entropy repair between replicas; returns what was done.
    pub fn repair(&self) -> Result<Vec<String>, DeployError> {
        match self
            .engine
            .operation_hook(&self.state, OperationKind::Repair, None)
        {
            Some(done) => done,
            None => self.engine.repair(&self.state),
        }
    }
}
