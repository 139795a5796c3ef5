//! Bringing a cluster down: every recorded process stopped, then looked at again, and what became
//! of each said as it is (stopped, killed, already gone, a pid another program has now, or still
//! running).

use std::time::Duration;

use super::{external, Cluster, NodeState};
use crate::account::remove_tree_with_servers;
use crate::process::{ProcessRef, StopOutcome};
use crate::spec::Database;
use crate::DeployError;

/// What `down` did with one node's recorded process.
#[derive(Debug, Clone)]
pub struct NodeStop {
    pub node: String,
    pub pid: u32,
    pub outcome: StopOutcome,
}

impl NodeStop {
    /// `node2: pid 4242 already gone`.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.node, self.outcome.describe(self.pid))
    }
}

impl Cluster {
    /// Stops every node gracefully (the data stays for inspection): the stop signal, SIGKILL after
    /// the grace time, and a bounded wait for each to be gone. Returns what became of every
    /// recorded process; one still running stays recorded, so a later `down` tries it again.
    pub fn down(&mut self) -> Vec<NodeStop> {
        if self.state.deployment.database == Database::External {
            external::run_hook(&self.state, "down", |h| h.down.as_deref(), &[]).ok();
            return Vec::new();
        }
        let signal = self.engine.stop_signal();
        let grace = Duration::from_secs(60);
        // Reverse order: Galera's first node stops last and may bootstrap the cluster again. The
        // node the engine names goes last (a stable sort keeps the rest in that order).
        let last = self.engine.stops_last(&self.state);
        let mut nodes: Vec<&mut NodeState> = self.state.nodes.iter_mut().rev().collect();
        nodes.sort_by_key(|n| Some(&n.id) == last.as_ref());
        let recorded: Vec<(String, ProcessRef)> = nodes
            .into_iter()
            .filter_map(|n| n.process.take().map(|p| (n.id.clone(), p)))
            .collect();
        let processes: Vec<ProcessRef> = recorded.iter().map(|(_, p)| *p).collect();
        let outcomes = if self.engine.stops_at_once() {
            ProcessRef::stop_all_verified(&processes, signal, grace)
        } else {
            processes
                .iter()
                .flat_map(|p| ProcessRef::stop_all_verified(std::slice::from_ref(p), signal, grace))
                .collect()
        };
        let stops: Vec<NodeStop> = recorded
            .into_iter()
            .zip(outcomes)
            .map(|((node, p), outcome)| NodeStop {
                node,
                pid: p.pid,
                outcome,
            })
            .collect();
        for (stop, p) in stops.iter().zip(&processes) {
            if !stop.outcome.is_gone() {
                if let Some(n) = self.state.nodes.iter_mut().find(|n| n.id == stop.node) {
                    n.process = Some(*p);
                }
            }
        }
        for n in &self.state.nodes {
            // What outlived its node's process (a PostgreSQL whose Patroni died before).
            self.engine.after_kill(&self.state, n);
            if n.process.is_none() {
                self.state.remove_memory_group(&n.id);
            }
        }
        let _ = self.save();
        stops
    }

    /// Stops every node and deletes the cluster directory with every node's data (also where a
    /// node's directory is a link to one elsewhere: see [`crate::account`]). Deletes nothing while a
    /// process of the cluster still runs: the error names it.
    pub fn purge(mut self) -> Result<Vec<NodeStop>, DeployError> {
        let stops = self.down();
        not_stopped(self.name(), &stops)?;
        remove_tree_with_servers(&self.state.dir)?;
        Ok(stops)
    }
}

/// An error naming every process `down` could not stop, if any.
pub fn not_stopped(cluster: &str, stops: &[NodeStop]) -> Result<(), DeployError> {
    let left: Vec<String> = stops
        .iter()
        .filter(|s| !s.outcome.is_gone())
        .map(NodeStop::describe)
        .collect();
    if left.is_empty() {
        return Ok(());
    }
    Err(DeployError::Failed(format!(
        "cluster {cluster} is not down: {}",
        left.join("; ")
    )))
}
