//! Command-line arguments.

mod clients;
mod cluster;
mod phase;
mod replay;
mod results;
mod studies;

pub use clients::*;
pub use cluster::*;
pub use phase::*;
pub use replay::*;
pub use results::*;
pub use studies::*;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "scalebench",
    version,
    about = "A YCSB-compatible database benchmark whose numbers are true",
    long_about = "A YCSB-compatible database benchmark whose numbers are true: coordinated-omission-corrected \
                  latencies, warm-up excluded, exact run duration, failures kept out of success figures, \
                  results of several clients merged by histogram.\n\n\
                  Without --db, runs against a temporary SQLite database and loads it first.",
    after_help = "Exit codes: 0 success, 1 the benchmark could not run (or most of its operations failed), 2 bad \
                  input, 3 a run of several clients finished without some of them (the merged result names \
                  them), 4 a service level not met, 130 interrupted (results kept)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Diagnostic log on standard error, the drivers' included: -v info, -vv debug, -vvv trace
    /// (RUST_LOG, when set, chooses instead: e.g. RUST_LOG=tokio_postgres=debug). Passwords hidden.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, global = true, hide_short_help = true)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The load phase: insert the workload's records.
    #[command(
        after_help = "The common options: --help lists all of them.",
        after_long_help = ""
    )]
    Load(LoadArgs),
    /// The transaction phase: run the workload's operation mix.
    #[command(
        after_help = "The common options: --help lists all of them.",
        after_long_help = ""
    )]
    Run(RunArgs),
    /// Replay captured traffic: each operation of a capture (Redis MONITOR, a PostgreSQL csvlog, a
    /// general log, a cache trace) at its time divided by --speed, an open loop on the connection of
    /// its session; key-value operations on any binding by key, what it cannot run counted
    /// (docs/replay.md). --check reads the capture and connects nothing.
    #[command(
        after_help = "The common options: --help lists all of them.",
        after_long_help = ""
    )]
    Replay(ReplayArgs),
    /// Combine results of clients that ran together (throughputs add, histograms merge).
    Merge(MergeArgs),
    /// Merge HDR interval logs of one operation from clients that ran together (`--hdr-log`'s
    /// DIR/client-I/...hlog) into one, interval by interval, by histogram.
    MergeLogs(MergeLogsArgs),
    /// Compare two runs per operation: throughput, p50 and p99, each with a significance test on the
    /// interval series that accounts for autocorrelation. Exit code 1 with --fail-above when B
    /// regressed beyond it.
    Compare(CompareArgs),
    /// A self-contained HTML report (interactive charts, the charting library inlined, no network
    /// needed) of a result, an elastic result, a saturation search or an experiment in a results
    /// file; every chart's data as CSV.
    Report(ReportArgs),
    /// Local clusters from a deployment file: up, down, status, add and remove nodes, wait, compact,
    /// space, snapshot and restore. Under load, `elastic --action` also restarts nodes, rolls a
    /// restart through them, fails the primary over, compacts and repairs; which kind has which:
    /// every kind add:K, remove:K, crash:K, restart:NODE and rolling-restart (postgres-bucardo
    /// neither add nor remove, mongo-java-server none: one server); fail-primary on redis-cluster with
    /// replicas, postgres-patroni, etcd and galera; compact on cassandra, postgres-patroni, etcd,
    /// hbase and redis-cluster with appendonly; repair on cassandra; an external cluster those it
    /// has hooks for (docs/operations.md).
    Cluster(ClusterArgs),
    /// Run an experiment matrix (databases x configurations x workloads x sweeps x repetitions) into
    /// the results database; run again to resume.
    Experiment(ExperimentArgs),
    /// Find the highest rate that keeps up within a latency objective (--p99, --p999,
    /// --max-error-rate): rates bracketed, then bisected to --resolution, each step's p99 known to
    /// --precision at 95%, a step that trends (its queue growing) failed; the answer with the bracket
    /// it lies in (resolution wide), client-bound steps named; from one client or
    /// from N (--clients, --ssh, --rendezvous). Or, with --threads-search, Wegert's thread calibration.
    #[command(
        after_help = "The common options: --help lists all of them.",
        after_long_help = ""
    )]
    Saturate(SaturateArgs),
    /// Elasticity and operations under load: under a constant load (Dory's request sets, or an open
    /// loop at --target), change the cluster's size (add, double, remove, crash) or operate it
    /// (restart, rolling-restart, fail-primary, compact, repair), follow it until it is stable
    /// again, score the transition and the event (impact factors, recovery, throughput lost, lost
    /// writes), judged against --sla (exit code 4 when missed).
    #[command(
        after_help = "The common options: --help lists all of them.",
        after_long_help = ""
    )]
    Elastic(ElasticArgs),
    /// Sample this host's resources and named processes from /proc (run it on each server of an
    /// external cluster) until the duration passes or Ctrl-C; write the series as JSON.
    Monitor(MonitorArgs),
    /// Query the results database: list experiments, show per-cell statistics, export.
    Results {
        #[command(subcommand)]
        action: ResultsAction,
    },
    /// The results of a `--rendezvous` run's clients, from any machine: from etcd, from the files
    /// the clients kept on their disks (when the rendezvous is gone), or both; each client's and one
    /// merged result (client 0 writes the same when it ends; this collects them where you are).
    Gather(GatherArgs),
    /// Kubernetes manifests for a distributed run: an Indexed Job of N client pods running the
    /// command after `--`, a headless Service, and an etcd for them to meet in unless --rendezvous
    /// names one. Arguments holding a password come from a Secret (named on stderr), never the YAML.
    Kubernetes(KubernetesArgs),
    /// One client of a `--clients N` run, started by it (reads its order on stdin).
    #[command(hide = true)]
    ClientProcess,
    /// One client of a `--ssh` run, started by it over ssh (reads its order on stdin).
    #[command(hide = true)]
    SshClient,
    /// List bindings, or show one binding's options.
    Bindings {
        /// A binding name (e.g. sqlite) to show its URL form and options.
        name: Option<String>,
    },
    /// Workload files (docs/workload-files.md): `workload check FILE [--db URL]`, `workload schema`.
    Workload {
        #[command(subcommand)]
        action: WorkloadCommand,
    },
    /// List the workload and client properties read (YCSB's names and ours): values, default,
    /// what each shapes (the loaded data, the run, the client) and what it does.
    Properties {
        /// Print the table docs/workloads.md holds (Markdown).
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorkloadCommand {
    /// Check a workload file as every command checks it, without connecting to anything, and say
    /// what it declares: each fault is one line naming the file, the line and the field (exit 2).
    Check {
        /// The workload file (TOML), e.g. examples/workloads/session-store.toml.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Check a load and a run of it on this database's binding too (its options from the
        /// URL and the file's properties, which key_value alternatives run); nothing connects.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
        /// A directory whose files the workload file may name (a dictionary) besides its own
        /// directory (repeatable); nothing outside them is read.
        #[arg(long = "allow-files", value_name = "DIR")]
        allow_files: Vec<PathBuf>,
    },
    /// Print the workload file's JSON Schema (for editors: docs/workload-file.schema.json).
    Schema,
}
