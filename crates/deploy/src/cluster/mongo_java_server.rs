//! mongo-java-server: one MongoDB wire-protocol server (H2 backend) for trying MongoDB workloads
//! and the mongodb binding on this machine. It is not MongoDB: one server, no replication, no
//! sharding, write concern accepted but not enforced (see [`crate::mongodb`]). Real MongoDB replica
//! sets and sharded clusters are `external` deployments.

use std::path::Path;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::OperationKind;
use crate::error::DeployError;
use crate::host::{free_port, port_open};
use crate::process::ProcessRef;
use crate::space::Classifier;

pub struct MongoJavaServer;

/// The H2 MVStore file in a node's data directory.
const DATA_FILE: &str = "data.mv";

fn single_server() -> DeployError {
    DeployError::Failed(
        "mongo-java-server is a single server (no replication, no sharding): nodes cannot be added or removed; use an external deployment for a MongoDB replica set or sharded cluster".into(),
    )
}

impl MongoJavaServer {
    fn spawn(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        let account = c.account()?;
        let cmd = crate::mongodb::server_command(
            &node.dir,
            node.port,
            &node.data_dir.join(DATA_FILE),
            c.deployment.jvm_heap_mb(
                c.deployment.mongo_java_server.heap_mb,
                crate::spec::MONGO_JAVA_SERVER_HEAP_MB,
            ),
            &account,
        )?;
        let mut p = c.spawn_node(node, cmd)?;
        let port = node.port;
        p.wait_ready(Duration::from_secs(60), || port_open(port))?;
        Ok(p.detach())
    }
}

impl Engine for MongoJavaServer {
    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // One server: a crash under load would leave none to measure (`elastic` keeps one data
        // node running), and its data in memory: a restart would start empty. `cluster
        // stop-node` and `start-node` still stop and start it.
        Vec::new()
    }

    fn account(&self) -> &'static str {
        crate::mongodb::ACCOUNT
    }

    fn nodes_at_up(&self, _: &crate::spec::Deployment) -> usize {
        1
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let mut node = c.new_node("server", "127.0.0.1", free_port()?)?;
        node.data_dir = node.dir.join("data");
        std::fs::create_dir_all(&node.data_dir).map_err(|e| DeployError::io(&node.data_dir, e))?;
        c.account()?.give(&node.data_dir)?;
        node.process = Some(self.spawn(c, &node)?);
        c.nodes.push(node);
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        self.spawn(c, node)
    }

    fn add_node(&self, _c: &mut ClusterState) -> Result<String, DeployError> {
        Err(single_server())
    }

    fn remove_node(&self, _c: &mut ClusterState, _id: &str) -> Result<(), DeployError> {
        Err(single_server())
    }

    fn removable(&self, _c: &ClusterState) -> Option<String> {
        None
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        c.nodes
            .iter()
            .filter(|n| !(n.is_running() && port_open(n.port)))
            .map(|n| format!("{} is not serving on {}", n.id, n.endpoint()))
            .collect()
    }

    /// Its only background work is the MVStore's writer (every second), which nothing reports.
    fn busy(&self, _c: &ClusterState) -> Vec<String> {
        Vec::new()
    }

    /// Its writer stores the changes about once a second, so a load just ended may not be in the
    /// file yet (its space would read as nothing). Waits until the file has not changed for longer
    /// than one writer period (at most 30 s).
    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for n in c.running() {
            let file = n.data_dir.join(DATA_FILE);
            let look = || {
                std::fs::metadata(&file)
                    .ok()
                    .map(|m| (m.len(), m.modified().ok()))
            };
            let mut last = look();
            let mut since = std::time::Instant::now();
            let settled = crate::host::poll_every(
                Duration::from_millis(100),
                Duration::from_secs(30),
                || {
                    let now = look();
                    if now != last {
                        last = now;
                        since = std::time::Instant::now();
                    }
                    since.elapsed() > Duration::from_millis(1500)
                },
            );
            done.push(format!(
                "{}: {}",
                n.id,
                if settled {
                    "the MVStore file settled"
                } else {
                    "the MVStore file still changing after 30 s"
                }
            ));
        }
        Ok(done)
    }

    /// The MVStore compacts its file in the background; there is no command for it: as
    /// [`Engine::flush`].
    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        self.flush(c)
    }

    fn classify(&self) -> Classifier {
        // One file holds documents, indexes and the MVStore's own log.
        |_: &Path| "data"
    }

    fn url(&self, c: &ClusterState) -> String {
        crate::mongodb::url(c.nodes.first().map_or(0, |n| n.port))
    }
}
