//! The options of `scalebench cluster`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::phase::*;
use scalebench_study::elastic::request::{parse_action, ScaleAction};

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub action: ClusterAction,
}

/// The deployment file and where its cluster lives.
#[derive(Debug, Args, Clone)]
pub struct ClusterTarget {
    /// Deployment file (TOML), e.g. deployments/cassandra-3.toml.
    #[arg(value_name = "DEPLOYMENT")]
    pub deployment: PathBuf,
    #[command(flatten)]
    pub clusters: ClustersDir,
}

#[derive(Debug, Subcommand)]
pub enum ClusterAction {
    /// Start the deployment's nodes and wait until the cluster is ready.
    Up(ClusterTarget),
    /// Stop every node (data and logs stay, unless --purge), saying per node what became of its
    /// process; exit 1 naming one still running. Refused (exit 2) while another command holds the
    /// cluster's lock, as every command that changes a cluster is.
    Down {
        #[command(flatten)]
        target: ClusterTarget,
        /// Also delete the cluster's directory with every node's data and logs.
        #[arg(long)]
        purge: bool,
    },
    /// Nodes, processes, and what is not ready or busy.
    Status {
        #[command(flatten)]
        target: ClusterTarget,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a node (Redis: a master and its replicas, slots rebalanced; Cassandra: bootstrap;
    /// PostgreSQL: a replica; etcd: a member; Galera: a node).
    AddNode(ClusterTarget),
    /// Remove a node gracefully (Cassandra decommission, Redis slots moved away first, etcd member
    /// remove); default: the last one added.
    RemoveNode {
        #[command(flatten)]
        target: ClusterTarget,
        /// Node id as `status` shows it (node3, ...).
        #[arg(long, value_name = "ID")]
        node: Option<String>,
    },
    /// Stop one node without telling the cluster (a failure), SIGTERM or, with --crash, SIGKILL.
    StopNode {
        #[command(flatten)]
        target: ClusterTarget,
        /// The node, by its id in `cluster status`.
        #[arg(long, value_name = "ID")]
        node: String,
        /// SIGKILL instead of the server's own clean shutdown: a crash.
        #[arg(long)]
        crash: bool,
    },
    /// Start a stopped node again from its data.
    StartNode {
        #[command(flatten)]
        target: ClusterTarget,
        /// The node, by its id in `cluster status`.
        #[arg(long, value_name = "ID")]
        node: String,
    },
    /// Put the cluster through one operation, as `elastic --action` does under load: add:K, double,
    /// remove:K, crash:K, restart:NODE, rolling-restart, fail-primary, compact or repair; one the
    /// cluster does not have is refused (exit 2) before anything is touched.
    Apply {
        #[command(flatten)]
        target: ClusterTarget,
        /// The operation, as `elastic --action` writes it.
        #[arg(value_name = "OPERATION", value_parser = parse_action)]
        operation: ScaleAction,
    },
    /// Wait until ready and idle (no compaction, stream, slot migration or replication lag).
    Wait(ClusterTarget),
    /// Write what the servers hold in memory to their files, compacting nothing (Cassandra flush,
    /// PostgreSQL CHECKPOINT, Redis SAVE, HBase flush): the files then hold the records as inserted.
    Flush(ClusterTarget),
    /// Flush and compact (Cassandra flush+compact, PostgreSQL VACUUM+CHECKPOINT, Redis SAVE and
    /// BGREWRITEAOF, etcd compact+defrag).
    Compact(ClusterTarget),
    /// Bytes on disk per node and in total, by part (data, index, log, ...).
    Space {
        #[command(flatten)]
        target: ClusterTarget,
        /// Records stored, for bytes per record.
        #[arg(long, value_name = "N", default_value_t = 0)]
        records: u64,
        /// The benchmark table whose files are the data and index parts where the database tells
        /// its tables apart (PostgreSQL, Cassandra); default: the workload property `table`'s.
        #[arg(long, value_name = "NAME")]
        table: Option<String>,
        /// Print JSON (the `space` object of a result file).
        #[arg(long)]
        json: bool,
    },
    /// Take snapshot NAME: Cassandra's own, the servers running; elsewhere stop the cluster, copy
    /// every node's data, start it again.
    Snapshot {
        #[command(flatten)]
        target: ClusterTarget,
        /// The snapshot's name, for `cluster restore`.
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Put back the data of snapshot NAME: Cassandra truncates and imports it, the servers running;
    /// elsewhere the cluster stops, gets the copy back and starts again.
    Restore {
        #[command(flatten)]
        target: ClusterTarget,
        /// The snapshot's name, as taken by `cluster snapshot`.
        #[arg(value_name = "NAME")]
        name: String,
    },
}
