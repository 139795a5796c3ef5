//! The operations a cluster can be put through under load (`scalebench elastic --action`): which
//! kind of cluster has which, so a request for one it lacks is refused before anything is touched.

use serde::{Deserialize, Serialize};

/// One operation on a running cluster, named as `--action` and service-level files name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// Nodes join and data moves to them, the database's own way.
    Add,
    /// Nodes leave gracefully: their data moves away first.
    Remove,
    /// Nodes are killed (SIGKILL) and stay down, still members.
    Crash,
    /// One node stops cleanly, starts again from its data and rejoins.
    Restart,
    /// Every data node restarted in turn, each waited for before the next (an upgrade's way).
    RollingRestart,
    /// The primary (master, leader) is killed; the database's failover promotes another.
    FailPrimary,
    /// The database's own compaction (major compaction, AOF rewrite, revision compaction).
    Compact,
    /// Anti-entropy repair between replicas.
    Repair,
}

impl Operation {
    pub const ALL: [Operation; 8] = [
        Operation::Add,
        Operation::Remove,
        Operation::Crash,
        Operation::Restart,
        Operation::RollingRestart,
        Operation::FailPrimary,
        Operation::Compact,
        Operation::Repair,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::Add => "add",
            Operation::Remove => "remove",
            Operation::Crash => "crash",
            Operation::Restart => "restart",
            Operation::RollingRestart => "rolling-restart",
            Operation::FailPrimary => "fail-primary",
            Operation::Compact => "compact",
            Operation::Repair => "repair",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == s)
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What every local kind with nodes that keep their data has: scaling, and nodes stopped and
/// started again.
pub(crate) const MEMBERSHIP: [Operation; 5] = [
    Operation::Add,
    Operation::Remove,
    Operation::Crash,
    Operation::Restart,
    Operation::RollingRestart,
];

/// `base` and `more`, for an engine's list.
pub(crate) fn with(base: &[Operation], more: &[Operation]) -> Vec<Operation> {
    base.iter().chain(more).copied().collect()
}
