//! The operations a cluster can be put through under load (`scalebench elastic --action`,
//! `scalebench cluster`, experiment files, service-level files): their names, arguments, parsing and
//! serde, in this one place. Which kind of cluster has which is each engine's `operations()`, so a
//! request for one it lacks is refused before anything is touched.

use serde::{Deserialize, Serialize};

/// One operation on a running cluster with its argument, as `--action` writes it (`add:1`,
/// `restart:node2`, `rolling-restart`). Its serde form is the result file's `action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// K nodes join and data moves to them, the database's own way.
    Add(u32),
    /// As many nodes join as run now (Dory's doubling).
    Double,
    /// K nodes leave gracefully: their data moves away first.
    Remove(u32),
    /// K nodes are killed (SIGKILL) and stay down, still members.
    Crash(u32),
    /// Node `node<N>` stops cleanly, starts again from its data and rejoins.
    Restart(u32),
    /// Every data node restarted in turn, each waited for before the next (an upgrade's way).
    RollingRestart,
    /// The primary (master, leader) is killed; the database's failover promotes another.
    FailPrimary,
    /// The database's own compaction (major compaction, AOF rewrite, revision compaction).
    Compact,
    /// Anti-entropy repair between replicas.
    Repair,
}

/// An operation without its argument: what an engine lists as having, and what a service-level
/// file's sections are named after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperationKind {
    Add,
    Remove,
    Crash,
    Restart,
    RollingRestart,
    FailPrimary,
    Compact,
    Repair,
}

impl OperationKind {
    pub const ALL: [OperationKind; 8] = [
        OperationKind::Add,
        OperationKind::Remove,
        OperationKind::Crash,
        OperationKind::Restart,
        OperationKind::RollingRestart,
        OperationKind::FailPrimary,
        OperationKind::Compact,
        OperationKind::Repair,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OperationKind::Add => "add",
            OperationKind::Remove => "remove",
            OperationKind::Crash => "crash",
            OperationKind::Restart => "restart",
            OperationKind::RollingRestart => "rolling-restart",
            OperationKind::FailPrimary => "fail-primary",
            OperationKind::Compact => "compact",
            OperationKind::Repair => "repair",
        }
    }

    pub fn parse(s: &str) -> Option<OperationKind> {
        OperationKind::ALL.into_iter().find(|o| o.name() == s)
    }
}

impl std::fmt::Display for OperationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Operation {
    /// What it is without its argument (`double` is an `add`).
    pub fn kind(self) -> OperationKind {
        match self {
            Operation::Add(_) | Operation::Double => OperationKind::Add,
            Operation::Remove(_) => OperationKind::Remove,
            Operation::Crash(_) => OperationKind::Crash,
            Operation::Restart(_) => OperationKind::Restart,
            Operation::RollingRestart => OperationKind::RollingRestart,
            Operation::FailPrimary => OperationKind::FailPrimary,
            Operation::Compact => OperationKind::Compact,
            Operation::Repair => OperationKind::Repair,
        }
    }

    /// The operation's name, without its count or node (`crash`, `fail-primary`).
    pub fn operation_name(self) -> &'static str {
        self.kind().name()
    }

    /// Whether it changes the cluster's size (Dory's transitions), not only its state.
    pub fn scales(self) -> bool {
        matches!(
            self,
            Operation::Add(_) | Operation::Double | Operation::Remove(_)
        )
    }

    /// The node it names (`restart:node2`), if any.
    pub fn node(self) -> Option<String> {
        match self {
            Operation::Restart(n) => Some(format!("node{n}")),
            _ => None,
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Operation::Add(k) => write!(f, "add:{k}"),
            Operation::Double => write!(f, "double"),
            Operation::Remove(k) => write!(f, "remove:{k}"),
            Operation::Crash(k) => write!(f, "crash:{k}"),
            Operation::Restart(n) => write!(f, "restart:node{n}"),
            other => f.write_str(other.operation_name()),
        }
    }
}

impl std::str::FromStr for Operation {
    type Err = String;

    /// `add:K`, `double`, `remove:K`, `crash:K`, `restart:NODE` or an operation without argument;
    /// the error is one line naming the bad text.
    fn from_str(s: &str) -> Result<Operation, String> {
        let bad = || {
            format!("'{s}': expected add:K, double, remove:K, crash:K, restart:NODE, rolling-restart, fail-primary, compact or repair")
        };
        match s {
            "double" => return Ok(Operation::Double),
            "rolling-restart" => return Ok(Operation::RollingRestart),
            "fail-primary" => return Ok(Operation::FailPrimary),
            "compact" => return Ok(Operation::Compact),
            "repair" => return Ok(Operation::Repair),
            _ => {}
        }
        let (verb, arg) = s.split_once(':').ok_or_else(bad)?;
        if verb == "restart" {
            // Nodes are named node1, node2, ... (`scalebench cluster status` lists them).
            return arg
                .strip_prefix("node")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| *n >= 1)
                .map(Operation::Restart)
                .ok_or_else(|| {
                    format!("'{s}': expected restart:NODE with a node's name, e.g. restart:node2")
                });
        }
        let k: u32 = arg.parse().ok().filter(|k| *k >= 1).ok_or_else(bad)?;
        match verb {
            "add" => Ok(Operation::Add(k)),
            "remove" => Ok(Operation::Remove(k)),
            "crash" => Ok(Operation::Crash(k)),
            _ => Err(bad()),
        }
    }
}

/// An operation as files write it (`add:1`, `double`, ...), parsed once when read:
/// `#[serde(with = "scalebench_deploy::cluster::operation_text")]`.
pub mod operation_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        a: &crate::cluster::operation::Operation,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_str(a)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<crate::cluster::operation::Operation, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// What every local kind with nodes that keep their data has: scaling, and nodes stopped and
/// started again.
pub(crate) const MEMBERSHIP: [OperationKind; 5] = [
    OperationKind::Add,
    OperationKind::Remove,
    OperationKind::Crash,
    OperationKind::Restart,
    OperationKind::RollingRestart,
];

/// `base` and `more`, for an engine's list.
pub(crate) fn with(base: &[OperationKind], more: &[OperationKind]) -> Vec<OperationKind> {
    base.iter().chain(more).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_read_and_write_as_text() {
        for text in [
            "add:1",
            "double",
            "remove:2",
            "crash:1",
            "restart:node2",
            "rolling-restart",
            "fail-primary",
            "compact",
            "repair",
        ] {
            assert_eq!(text.parse::<Operation>().unwrap().to_string(), text);
        }
        for bad in [
            "restart:2",
            "restart:node0",
            "restart",
            "crash:0",
            "fail:1",
            "repair:1",
        ] {
            assert!(bad.parse::<Operation>().unwrap_err().contains(bad), "{bad}");
        }
    }

    #[test]
    fn the_result_file_keeps_its_action_form() {
        // docs/result-schema.md: `action` is {"add": K} ... or a bare name.
        let json = |o: Operation| serde_json::to_string(&o).unwrap();
        assert_eq!(json(Operation::Add(2)), r#"{"add":2}"#);
        assert_eq!(json(Operation::Restart(3)), r#"{"restart":3}"#);
        assert_eq!(json(Operation::Double), r#""double""#);
        assert_eq!(json(Operation::RollingRestart), r#""rolling-restart""#);
        for kind in OperationKind::ALL {
            assert_eq!(OperationKind::parse(kind.name()), Some(kind));
        }
    }
}
