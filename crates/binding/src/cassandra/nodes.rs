//! Dory's client (`--request-set-threads fixed`): each worker bound to one node of the ring, its
//! every request coordinated there (studies.md, section 5). The ring's nodes are those the session
//! that opened the factory saw, in address order; worker w goes to node w mod n (numbered over the
//! run's clients, [`crate::WorkerNodes`]). Nodes that join later coordinate none of these workers'
//! requests, as Dory's threads stayed on the nodes they started with.

use std::net::SocketAddr;
use std::sync::Arc;

use scylla::client::session::Session;
use scylla::policies::load_balancing::{
    DefaultPolicy, LoadBalancingPolicy, NodeIdentifier, SingleTargetLoadBalancingPolicy,
};

use crate::WorkerNodes;

/// The workers' nodes: the ring's, and this client's first worker among the run's.
#[derive(Debug, Clone)]
pub(super) struct Pinned {
    workers: WorkerNodes,
    ring: Vec<SocketAddr>,
}

impl Pinned {
    /// The nodes of the ring `session` sees, for workers numbered from `workers`.
    pub(super) fn of(session: &Session, workers: WorkerNodes) -> Pinned {
        let mut ring: Vec<SocketAddr> = session
            .get_cluster_state()
            .get_nodes_info()
            .iter()
            .map(|n| SocketAddr::new(n.address.ip(), n.address.port()))
            .collect();
        ring.sort_unstable();
        ring.dedup();
        Pinned { workers, ring }
    }

    /// The node worker `worker`'s requests go to.
    pub(super) fn node_of(&self, worker: usize) -> Option<SocketAddr> {
        let k = self.workers.node_of(worker, self.ring.len());
        self.ring.get(k).copied()
    }
}

/// Where a session's requests go: every one to `node` (no other node as a fallback: when it is
/// down they fail, as a client bound to it would), or a replica of the key when `token_aware`,
/// else the nodes in turn.
pub(super) fn policy(node: Option<SocketAddr>, token_aware: bool) -> Arc<dyn LoadBalancingPolicy> {
    match node {
        Some(node) => SingleTargetLoadBalancingPolicy::new(NodeIdentifier::NodeAddress(node), None),
        None => DefaultPolicy::builder().token_aware(token_aware).build(),
    }
}
