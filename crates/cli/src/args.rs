//! Command-line arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use scalebench_session::request::{
    self, parse_alpha, parse_arrival, parse_batch_size, parse_clients, parse_concurrency,
    parse_duration, parse_fraction_percent, parse_interval, parse_link_mbit, parse_listen_address,
    parse_percent, parse_positive_rate, parse_process, parse_rate, parse_request_set,
    parse_step_factor, parse_threads, ProbeDelays, RunRequest, SpaceAfterLoad,
};
use scalebench_study::elastic::request::{
    self as elastic_request, parse_action, parse_criterion, parse_probe, Criterion, ElasticRequest,
    Probe, ScaleAction,
};
use scalebench_study::saturate::{Objective, SaturationRequest, StepClients};
use scalebench_workload::rate::RateProfile;

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

/// Where local clusters live: one subdirectory per deployment name (state, data, logs).
#[derive(Debug, Args, Clone)]
pub struct ClustersDir {
    /// Directory holding the clusters' state, data and logs (one subdirectory per deployment name).
    #[arg(hide_short_help = true, help_heading = "Database", 
        long,
        value_name = "DIR",
        env = "SCALEBENCH_CLUSTERS_DIR",
        default_value = request::DEFAULT_CLUSTERS_DIR
    )]
    pub clusters_dir: PathBuf,
}

/// `--sweep KEY=VALUE`.
fn parse_swept_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!(
            "'{s}': expected KEY=VALUE (a swept key and one of its values)"
        )),
    }
}

#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// Experiment file (TOML), e.g. examples/wegert-configurations.toml.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The results database (SQLite); runs already recorded there are skipped (resume).
    #[arg(
        long,
        value_name = "FILE",
        env = "SCALEBENCH_RESULTS",
        default_value = "scalebench-results.db"
    )]
    pub results: PathBuf,
    /// Print the runs the experiment would do, and do nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run the experiment in miniature: the same matrix with one repetition,
    /// 1 s runs (3 s in request sets), record, operation and request-set counts divided by 100 and short elastic phases,
    /// recorded as NAME-miniature (a check that it runs, not a result; docs/experiments.md).
    #[arg(long)]
    pub miniature: bool,
    /// The cells to run: all, or each-value (a subset in which every database, configuration,
    /// workload, data size and swept value runs at least once: a check that every part of the
    /// file runs, not a result to compare cells by).
    #[arg(long, value_name = "CELLS", default_value = "all")]
    pub cells: scalebench_study::experiment::spec::Cells,
    /// Run only the cells of this database (its name in the file; repeat for several): a row of
    /// the matrix again, or a check of one database's part of a file.
    #[arg(long = "database", value_name = "NAME")]
    pub databases: Vec<String>,
    /// Run only the cells of this configuration (its name in the file, or `default` for a database
    /// no configuration names; repeat for several). With --database: only the cells of a named
    /// database in a named configuration.
    #[arg(long = "configuration", value_name = "NAME")]
    pub configurations: Vec<String>,
    /// Run only the cells whose swept KEY has VALUE (repeat: several values of a key, or several
    /// keys), e.g. --sweep nodes=1 --sweep threads=8: a row of a sweep again.
    #[arg(long = "sweep", value_name = "KEY=VALUE", value_parser = parse_swept_value)]
    pub sweep: Vec<(String, String)>,
    /// Serve every run's live figures, labelled with its cell, as OpenMetrics at
    /// http://ADDR:PORT/metrics (see `run --help`).
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_listen_address)]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Also write the experiment's HTML report here when its runs end (what `scalebench report
    /// RESULTS.db` draws), atomically.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub clusters: ClustersDir,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
}

#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// A process to watch with its descendants, as NAME=PID (repeatable).
    #[arg(long = "process", value_name = "NAME=PID", value_parser = parse_process)]
    pub processes: Vec<(String, u32)>,
    /// Stop after this long (default: at Ctrl-C).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Time between two samples (1 ms to 1 h).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// The series (JSON), written atomically at the end.
    #[arg(
        long,
        short = 'o',
        value_name = "FILE",
        required_unless_present = "stream"
    )]
    pub output: Option<PathBuf>,
    /// Print the series on standard output as it is sampled: a header line, then one JSON line per
    /// sample (what a deployment's `[external.monitors]` command runs on each database host).
    #[arg(long)]
    pub stream: bool,
    /// Capacity of this host's network links in Mbit/s, for the network verdict (default: the sum
    /// of the physical interfaces' reported speeds; a virtual NIC often reports none).
    #[arg(long, value_name = "MBIT", value_parser = parse_link_mbit)]
    pub link_mbit: Option<f64>,
}

#[derive(Debug, Args)]
pub struct SaturateArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: ClientsArgs,
    /// Offered rate of the first step (ops/s).
    #[arg(long, value_name = "OPS", default_value_t = 1000.0, value_parser = parse_positive_rate)]
    pub start_rate: f64,
    /// Bracketing: each step offers this many times the previous one until one fails; then
    /// bisection between the highest rate that passed and the lowest that failed.
    #[arg(long, value_name = "X", default_value_t = 1.5, value_parser = parse_step_factor)]
    pub factor: f64,
    /// At most this many steps.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_steps: u32,
    /// Latency objective: a step passes when its p99 (from the intended start, every operation)
    /// is within this at 95% confidence, fails when it is beyond it at 95%.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub p99: Option<Duration>,
    /// The same for the p99.9.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub p999: Option<Duration>,
    /// The same for failed over completed operations (a percentage, Wilson's 95% interval).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub max_error_rate: Option<f64>,
    /// Bisection ends when the bracket is narrower than this percentage of its lower end.
    #[arg(long, value_name = "PCT", default_value = "2", value_parser = parse_fraction_percent)]
    pub resolution: f64,
    /// A step is run again until its percentile's 95% interval (sectioning over sections of its
    /// intervals with enough operations, else order statistics) is within this percentage of it,
    /// or --max-repeats runs were made.
    #[arg(long, value_name = "PCT", default_value = "10", value_parser = parse_fraction_percent)]
    pub precision: f64,
    /// At most this many runs of one step.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_repeats: u32,
    /// At least this long between two runs, so that what one left queued in the database is not
    /// measured by the next (on a deployment each run also waits until the cluster is idle).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub step_pause: Duration,
    /// Instead of rates: thread counts 1, 2, 4, ... (closed loop) up to --max-steps doublings, keeping
    /// the largest count where doubling still raised throughput more than latency.
    #[arg(long)]
    pub threads_search: bool,
}

#[derive(Debug, Args)]
pub struct ElasticArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    /// What to do to the cluster under load: add:K (add K nodes), double (add as many as there are),
    /// remove:K (graceful decommission), crash:K (SIGKILL, the nodes stay in the ring),
    /// restart:NODE (stop cleanly, start, rejoin), rolling-restart (every data node in turn),
    /// fail-primary (kill the primary, the database fails over), compact, repair. Which kind of
    /// cluster has which: `scalebench cluster --help`.
    #[arg(long, value_name = "ACTION", default_value = elastic_request::DEFAULT_ACTION, value_parser = parse_action)]
    pub action: ScaleAction,
    /// A service level (TOML: thresholds per operation on the p99 and p99.9 impact factors,
    /// recovery time, throughput lost, availability, stale reads, lost writes; docs/operations.md):
    /// each step's event is judged against it, and a run that completed but missed it exits 4.
    #[arg(long = "sla", value_name = "FILE", value_parser = elastic_request::parse_service_level, conflicts_with = "unloaded")]
    pub service_level: Option<elastic_request::ServiceLevelFile>,
    /// Do not record the writes under load nor read them back after the step (the default is
    /// --verify-writes: lost acknowledged writes are part of each event).
    #[arg(long, conflicts_with = "verify_writes")]
    pub no_verify_writes: bool,
    /// Load measured before the action (the baseline; at least 2 x --stable-sets + 1 sets).
    #[arg(long, value_name = "DURATION", default_value = elastic_request::DEFAULT_BASELINE, value_parser = parse_duration)]
    pub baseline: Duration,
    /// Load measured after stability (Av2, Rt2).
    #[arg(long, value_name = "DURATION", default_value = elastic_request::DEFAULT_AFTER, value_parser = parse_duration)]
    pub after: Duration,
    /// Stable: this many sets in a row each differ from their predecessor by less than the
    /// baseline's median step, and the database reports no data in motion.
    #[arg(long, value_name = "X", default_value_t = elastic_request::DEFAULT_STABLE_SETS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub stable_sets: u32,
    /// The load criterion's threshold: median-step (the baseline's median step between consecutive
    /// points, Dory's rule) or relative:PCT (PCT percent of the baseline's mean).
    #[arg(long, value_name = "RULE", default_value = "median-step", value_parser = parse_criterion)]
    pub criterion: Criterion,
    /// Data in motion: db (ask the database's own tools, or the external cluster's is_idle hook) or
    /// none (the load criterion alone).
    #[arg(long, value_name = "PROBE", default_value = "db", value_parser = parse_probe)]
    pub probe: Probe,
    /// Give up waiting for stability (of the baseline, and after the action) after this long; the
    /// scores that need it are then absent.
    #[arg(long, value_name = "DURATION", default_value = elastic_request::DEFAULT_STABLE_TIMEOUT, value_parser = parse_duration)]
    pub stable_timeout: Duration,
    /// Repeat the transition this many times, doubling records, threads and the set size each time
    /// (with `double`: Dory's 6 -> 12 -> 24 -> 48 nodes, scaled down, and the final size measured too).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=6))]
    pub steps: u32,
    /// The data is loaded already (the first step does not load).
    #[arg(long)]
    pub no_load: bool,
    /// Runs of each request set that make one point of the timeline, its mean time and standard
    /// deviation (Dory ran each set 10 times).
    #[arg(long, value_name = "K", default_value_t = elastic_request::DEFAULT_SET_REPEATS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub set_repeats: u32,
    /// The time axis the elasticity score's areas are integrated over: s, or min as Dory's charts
    /// (the score in minutes is the one in seconds / 60).
    #[arg(long, value_name = "s|min", default_value = "s", value_parser = elastic_request::TimeAxis::parse)]
    pub score_time_axis: elastic_request::TimeAxis,
    /// No load during the transition: time until the cluster is fully available (ready, no data in
    /// motion), Dory's restricted elasticity as measured for Riak.
    #[arg(long, conflicts_with_all = ["request_set", "target", "clients"])]
    pub unloaded: bool,
    /// The load from N client processes on this machine as one run: Dory's R operations of a
    /// request set and T threads in all, each client its share; a set's time is the time until
    /// every client finished its share (the next set then opens for all), the action is taken once
    /// by this process, stability judged on the merged timeline; an open loop's rate is shared and
    /// its intervals merged. A client lost ends the benchmark with the steps so far (exit code 3).
    #[command(flatten)]
    pub clients: LocalClientsArgs,
}

/// The results database of experiments.
#[derive(Debug, Args, Clone)]
pub struct ResultsFile {
    /// The results database (SQLite).
    #[arg(
        long,
        value_name = "FILE",
        env = "SCALEBENCH_RESULTS",
        default_value = "scalebench-results.db"
    )]
    pub results: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum ResultsAction {
    /// Experiments in the results database, with their runs.
    List {
        #[command(flatten)]
        results: ResultsFile,
    },
    /// Per cell: throughput mean, 95% confidence interval and standard deviation over repetitions,
    /// p99 from the merged histograms, bounded-by notes.
    Show {
        /// The experiment, by the `name` of its file (`results list` lists them).
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        results: ResultsFile,
        /// Leave out the first K repetitions (default: the experiment's discard_first).
        #[arg(long, value_name = "K")]
        discard_first: Option<u32>,
    },
    /// Every run (CSV) or runs and cell statistics (JSON) on standard output.
    Export {
        /// The experiment, by the `name` of its file (`results list` lists them).
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        results: ResultsFile,
        /// CSV of the runs instead of JSON: one row per run, one column per field (each
        /// operation's p50/p99/p99.9, the consistency probe's figures when it ran).
        #[arg(long)]
        csv: bool,
        /// Mark the first K repetitions of each cell discarded (the `discarded` column; the JSON's
        /// cell statistics leave them out). Default: the experiment's discard_first.
        #[arg(long, value_name = "K")]
        discard_first: Option<u32>,
    },
}

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

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: ClientsArgs,
    #[command(flatten)]
    pub consistency: ConsistencyArgs,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
    /// Perform the load phase first (automatic with the default temporary database).
    #[arg(hide_short_help = true, long)]
    pub load: bool,
}

#[derive(Debug, Args)]
pub struct GatherArgs {
    /// The run's rendezvous: etcd://HOST:PORT[,HOST:PORT]/PREFIX.
    #[arg(long, value_name = "URL", required_unless_present = "files")]
    pub rendezvous: Option<String>,
    /// Results the clients kept on their disks (FILE.client-I.json, or under the state directory):
    /// merged with those in etcd, or alone when the rendezvous is gone. A file wins over etcd.
    #[arg(value_name = "CLIENT.json")]
    pub files: Vec<PathBuf>,
    /// The phase whose results to gather (default: the files', else run).
    #[arg(long, value_enum)]
    pub phase: Option<GatherPhase>,
    /// The merged result; each client's goes beside it (FILE.client-I.json).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// How long to wait for clients still running.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct KubernetesArgs {
    /// Names the Job and its Services (a DNS label) and the rendezvous prefix.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// A container image with `scalebench` on its PATH.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// Client pods of the run.
    #[arg(long, value_name = "N", value_parser = parse_clients)]
    pub clients: u32,
    /// An etcd the clients can reach (etcd://HOST:PORT[,HOST:PORT]/PREFIX); default: one of the
    /// run's own, in the manifests.
    #[arg(long, value_name = "URL")]
    pub rendezvous: Option<String>,
    /// The image of that etcd.
    #[arg(long, value_name = "IMAGE", default_value = scalebench_distributed::kubernetes::DEFAULT_ETCD_IMAGE)]
    pub etcd_image: String,
    /// How long the clients may take to be scheduled, pull, connect and meet.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub start_timeout: Duration,
    /// Write the manifests here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Each client's command: `-- run a --db URL ...` (or `load`).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GatherPhase {
    Load,
    Run,
}

impl GatherPhase {
    pub fn phase(self) -> scalebench_exec::Phase {
        match self {
            GatherPhase::Load => scalebench_exec::Phase::Load,
            GatherPhase::Run => scalebench_exec::Phase::Run,
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: ClientsArgs,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
    /// The schema phase alone: make the workload's table and its indexes (--create-schema implied;
    /// dropped first with --drop-schema) and insert nothing: what a load from many clients, or a
    /// load timed without the table's creation, starts from. Needs --db or --deployment.
    #[arg(long, conflicts_with_all = ["clients", "rendezvous", "client_cpus", "output"])]
    pub schema_only: bool,
}

/// The clients of a run on this machine (`elastic` takes these alone; `run`, `load` and
/// `saturate` take them within [`ClientsArgs`]).
#[derive(Debug, Args, Clone)]
pub struct LocalClientsArgs {
    /// The number of clients of the run. Alone: N client processes on this machine, as one run,
    /// each with its share (operations, load key range, rate, a section of keys for its inserts, a
    /// seed), one common start, one result merged by histogram in --output and each client's beside
    /// it (FILE.client-I.json). With --rendezvous: how many clients meet there (default: Slurm's
    /// SLURM_NTASKS). The clients share the database: --db, or for clients on this machine also
    /// --deployment (its steps around the phase, the wait until idle, compaction, space on disk, are
    /// taken once, by this process, the space in the merged result).
    /// Each client keeps its own result on its disk; one that stops answering is killed after the
    /// run's end plus --grace and a margin. Exit code 3 when a client left no result.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "N", value_parser = parse_clients)]
    pub clients: Option<u32>,

    /// How long the clients may take to connect and meet before the run is abandoned.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "DURATION", default_value = request::DEFAULT_START_TIMEOUT, value_parser = parse_duration)]
    pub start_timeout: Duration,

    /// With --clients on this machine: client i runs on CPU i mod the list's length alone (each
    /// client a core of its own, as on its own machine); also pins a single client (--clients 1).
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "CPU[,CPU...]",
        value_delimiter = ','
    )]
    pub client_cpus: Vec<usize>,
}

#[derive(Debug, Args, Clone)]
pub struct ClientsArgs {
    #[command(flatten)]
    pub local: LocalClientsArgs,

    /// With --rendezvous: this process's index, 0 to N-1 (default: SLURM_PROCID, or a Kubernetes
    /// Indexed Job's JOB_COMPLETION_INDEX). Client 0 writes the merged result.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "I",
        requires = "rendezvous"
    )]
    pub client_index: Option<u32>,

    /// Where the clients of one run meet, started on any machines by any launcher (srun, a
    /// Kubernetes Indexed Job, ssh): etcd://HOST:PORT[,HOST:PORT]/PREFIX, one PREFIX per run.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "URL"
    )]
    pub rendezvous: Option<String>,

    /// Start the clients on these hosts over ssh (client i on host i mod the number of hosts; N
    /// defaults to the number of hosts); they meet at --rendezvous, and this machine gathers and
    /// merges their results into --output.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "HOST[,HOST...]",
        requires = "rendezvous",
        value_delimiter = ','
    )]
    pub ssh: Vec<String>,

    /// With --ssh: the ssh program and its options.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "COMMAND", default_value = scalebench_distributed::ssh::DEFAULT_SSH_COMMAND)]
    pub ssh_command: String,

    /// With --ssh: the scalebench program on the hosts.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "PATH",
        default_value = "scalebench"
    )]
    pub remote_program: String,
}

/// `--db`'s help: each compiled binding's URL example, from its declaration.
impl LocalClientsArgs {
    pub fn choice(&self) -> scalebench_distributed::choice::LocalClients {
        scalebench_distributed::choice::LocalClients {
            clients: self.clients,
            start_timeout: self.start_timeout,
            cpus: self.client_cpus.clone(),
        }
    }
}

impl ClientsArgs {
    pub fn choice(&self) -> scalebench_distributed::choice::Clients {
        scalebench_distributed::choice::Clients {
            local: self.local.choice(),
            rendezvous: self.rendezvous.clone(),
            ssh: self.ssh.clone(),
            ssh_command: self.ssh_command.clone(),
            remote_program: self.remote_program.clone(),
        }
    }
}

fn db_help() -> String {
    let examples: Vec<&str> = scalebench_binding::registry::bindings()
        .iter()
        .map(|b| b.url_example)
        .collect();
    format!(
        "Database URL; the scheme picks the binding: {} (default: $SCALEBENCH_DB without --deployment, else a temporary SQLite file). See `scalebench bindings`",
        examples.join(", ")
    )
}

fn batch_size_help() -> String {
    format!(
        "Records per insert call in the load phase, where the binding batches (default: property batchsize, else {})",
        scalebench_workload::declared::BATCHSIZE.default_text()
    )
}

fn workload_help() -> String {
    format!(
        "A built-in workload: {}; a workload file (*.toml: typed columns, mix, rate profile; docs/workload-files.md); or a YCSB property file",
        scalebench_workload::builtin::BUILTIN_SUMMARY
    )
}

#[derive(Debug, Args, Clone)]
pub struct PhaseArgs {
    #[arg(value_name = "WORKLOAD", default_value = "a", help = "a..f (YCSB core workloads), another built-in, a workload file (*.toml) or a YCSB property file", long_help = workload_help())]
    pub workload: String,

    #[arg(help_heading = "Database", long, value_name = "URL", help = "Database URL, e.g. postgres://user@host/db (default: a temporary SQLite file)", long_help = db_help())]
    pub db: Option<String>,

    /// The database URL from the first line of FILE, so a password stays out of argv and shell
    /// history (or set SCALEBENCH_DB, read without --deployment; --db wins over both, --db-file
    /// over SCALEBENCH_DB).
    /// PostgreSQL also reads PGPASSWORD, ~/.pgpass and PGHOST..., Redis REDISCLI_AUTH.
    #[arg(
        hide_short_help = true,
        help_heading = "Database",
        long,
        value_name = "FILE",
        conflicts_with = "db"
    )]
    pub db_file: Option<PathBuf>,

    /// YCSB property file, applied after the workload (repeatable, in order).
    #[arg(help_heading = "Workload", short = 'P', value_name = "FILE")]
    pub property_files: Vec<PathBuf>,

    /// Property override KEY=VALUE, applied after all files (repeatable).
    #[arg(help_heading = "Workload", short = 'p', value_name = "KEY=VALUE")]
    pub properties: Vec<scalebench_workload::Assignment>,

    /// A directory whose files a workload file may name (a dictionary) besides its own directory
    /// (repeatable); nothing outside them is read.
    #[arg(
        hide_short_help = true,
        help_heading = "Workload",
        long = "allow-files",
        value_name = "DIR"
    )]
    pub allow_files: Vec<PathBuf>,

    /// OS threads (default: property threadcount, else 1).
    #[arg(help_heading = "Load shape", long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// In-flight operations per thread; each behaves as one YCSB client thread.
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "N", default_value_t = request::DEFAULT_CONCURRENCY, value_parser = parse_concurrency)]
    pub concurrency: u32,

    /// Open loop at this total rate in operations per second (0 = closed loop).
    ///
    /// From 0.001 to 1e9 (default: property target). It paces the command's own phase: `load --target` the load in records per second (default:
    /// property loadtarget), `run --load --target` only the run.
    #[arg(help_heading = "Load shape", long, value_name = "OPS", value_parser = parse_rate)]
    pub target: Option<f64>,

    /// Open loop at a rate that changes over the measured window, instead of --target: one
    /// segment or several separated by ';', each after the one before (k6's stages). Segments:
    /// ramp:from=A,to=B,over=D; hold:rate=R,for=D (constant:rate=R[,for=D]);
    /// staircase:start=A,step=S,every=D,steps=N; sine:mean=M,amplitude=A,period=D[,for=D]. E.g.
    /// 'ramp:from=0,to=1000,over=30s; hold:rate=1000,for=1m; ramp:from=1000,to=0,over=30s'. Rates
    /// are the whole run's in ops/s; the warm-up runs at the first rate, the last segment's rate
    /// holds after it; without --duration the run lasts the profile (a longer or shorter --duration
    /// is warned about); the profile's mean over the window is the offered rate (a run bounded by
    /// --operations alone has no window to lay it over). With --arrival poisson the gaps are
    /// exponential around the profile's rate. `load --rate-profile` paces the load in records per
    /// second until its records are in.
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "PROFILE", value_parser = RateProfile::parse, conflicts_with = "target")]
    pub rate_profile: Option<RateProfile>,

    /// Spacing of open-loop arrivals.
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "constant|poisson", default_value = "constant", value_parser = parse_arrival)]
    pub arrival: scalebench_exec::Arrival,

    /// What the run phase's throughput is divided by: its measurement window, or the clients' whole
    /// life from their init (before connecting) to their cleanup (buffered writes flushed), as YCSB
    /// 0.1.4 timed each thread (runs bounded by --operations, with --warmup 0s)
    #[arg(hide_short_help = true, help_heading = "Duration", long, value_name = "window|init-to-cleanup", default_value = "window", value_parser = scalebench_exec::Timing::parse)]
    pub timing: scalebench_exec::Timing,

    /// Measured duration, e.g. 30s, 5m (default 30s for run unless operationcount is set).
    #[arg(help_heading = "Duration", long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Warm-up before measuring: the real mix on the same connections, not recorded.
    #[arg(hide_short_help = true, help_heading = "Duration", long, value_name = "DURATION", default_value = request::DEFAULT_WARMUP, value_parser = parse_duration)]
    pub warmup: Duration,

    /// Stop after this many measured operations (same as -p operationcount=N).
    #[arg(
        hide_short_help = true,
        help_heading = "Duration",
        long,
        value_name = "N"
    )]
    pub operations: Option<u64>,

    /// Seed for all generators (default: random, recorded in the result).
    #[arg(
        hide_short_help = true,
        help_heading = "Workload",
        long,
        value_name = "N"
    )]
    pub seed: Option<u64>,

    /// Write the result JSON here (atomically).
    ///
    /// Without it the result is kept in the state
    /// directory ($SCALEBENCH_STATE_DIR, else $XDG_STATE_HOME/scalebench, else
    /// ~/.local/state/scalebench) under results/, and the run says where. Every output is checked
    /// before the run: writable, and neither another output nor a file the command reads.
    #[arg(help_heading = "Output", long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the run's HTML report here.
    ///
    /// What `scalebench report` draws from its result, written atomically.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Write HdrHistogram interval logs (one per operation) into this directory.
    #[arg(
        hide_short_help = true,
        help_heading = "Output",
        long,
        value_name = "DIR"
    )]
    pub hdr_log: Option<PathBuf>,

    #[command(flatten)]
    pub summary: SummaryArgs,

    /// Length of the intervals of the time series (1 ms to 1 h).
    #[arg(hide_short_help = true, help_heading = "Output", long, value_name = "DURATION", default_value = request::DEFAULT_INTERVAL, value_parser = parse_interval)]
    pub interval: Duration,

    /// Per-operation timeout; a timeout is a failure (default: none, operations end with the run's grace).
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "DURATION", value_parser = parse_duration)]
    pub op_timeout: Option<Duration>,

    /// How long in-flight operations may finish after the run ends (a Ctrl-C then ends it at once).
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "DURATION", default_value = request::DEFAULT_GRACE, value_parser = parse_duration)]
    pub grace: Duration,

    /// How long each connection attempt (handshake included) and each setup call (table checks,
    /// schema) may take, for every binding; Ctrl-C ends them at once.
    #[arg(hide_short_help = true, help_heading = "Database", long, value_name = "DURATION", default_value = request::DEFAULT_CONNECT_TIMEOUT, value_parser = request::parse_connect_timeout)]
    pub connect_timeout: Duration,

    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "N", value_parser = parse_batch_size, help = batch_size_help())]
    pub batch_size: Option<u32>,

    /// Run in back-to-back request sets of N operations (closed loop): each set is timed, and the
    /// next starts when all of its operations have completed (Dory's method; see `documents`).
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "N", value_parser = parse_request_set)]
    pub request_set: Option<u64>,

    /// How a request set's operations go to the threads: whichever is free starts the next
    /// (shared), or each thread has a fixed share of every set, R / T (the first R mod T one more),
    /// and is bound to one node of the cluster where the binding can choose it (fixed: Dory's
    /// client; `scalebench bindings` says which can).
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "shared|fixed", default_value = "shared", value_parser = scalebench_exec::SetThreads::parse)]
    pub request_set_threads: scalebench_exec::SetThreads,

    /// Keep a record of every write of the run (inserts, updates, read-modify-writes, deletes,
    /// batches, sequences: per key and field, an 8-byte hash of each value that may be there now)
    /// and read every written key back after it, as Jepsen counts: `lost_writes` in the result
    /// counts keys lost (missing, back after their delete, or older than their last acknowledged
    /// write), unexpected (a value never written), recovered (a write of unknown outcome found
    /// applied) and in doubt (docs/operations.md). Refused for increments and for statements that
    /// write. From N clients, client i updates only the loaded keys numbered i mod N and verifies
    /// them. On by default for `elastic`.
    #[arg(hide_short_help = true, help_heading = "Output", long)]
    pub verify_writes: bool,

    /// The longest the write check after the run may take (default: the run's length, at least
    /// 1 minute); Ctrl-C ends it sooner. Keys it did not reach are counted unchecked.
    #[arg(hide_short_help = true, help_heading = "Output", long, value_name = "DURATION", value_parser = request::parse_positive_duration)]
    pub verify_timeout: Option<Duration>,

    /// Status line period when standard error is not a terminal.
    #[arg(hide_short_help = true, help_heading = "Output", long, value_name = "DURATION", default_value = request::DEFAULT_STATUS_INTERVAL, value_parser = parse_duration)]
    pub status_interval: Duration,

    /// Serve the run's live figures as OpenMetrics at http://ADDR:PORT/metrics for Prometheus
    /// (per operation: rate, latency quantiles of the last interval, errors by class; in flight;
    /// the phase). Port 0 picks a free port, printed on stderr. Binds exactly ADDR (a name such as
    /// localhost is resolved; :PORT is every interface, as Prometheus' own flag): 127.0.0.1 unless
    /// the scraper runs elsewhere.
    #[arg(hide_short_help = true, help_heading = "Output", long, value_name = "ADDR:PORT", value_parser = parse_listen_address)]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// Create the table if it does not exist (before the first phase).
    #[arg(hide_short_help = true, help_heading = "Database", long)]
    pub create_schema: bool,

    /// Drop the table before the first phase (with --create-schema: start from an empty table).
    #[arg(hide_short_help = true, help_heading = "Database", long)]
    pub drop_schema: bool,

    /// No progress display.
    #[arg(hide_short_help = true, help_heading = "Output", long, short = 'q')]
    pub quiet: bool,

    /// Run against the cluster of this deployment file (started with `scalebench cluster up`): its URL
    /// and binding options are the defaults; waits until it is idle before a run, flushes and compacts
    /// after a load, and records its space on disk in the result (after a load: as inserted and
    /// settled).
    #[arg(
        hide_short_help = true,
        help_heading = "Database",
        long,
        value_name = "FILE"
    )]
    pub deployment: Option<PathBuf>,

    #[command(flatten)]
    pub clusters: ClustersDir,

    /// With --deployment: skip the compaction after a load (the flush still runs: the space is then
    /// as inserted only).
    #[arg(hide_short_help = true, help_heading = "Database", long)]
    pub no_compact: bool,

    /// Do not sample resources (host, client and deployment nodes from /proc, once a second) nor
    /// derive the "bounded by" verdict.
    #[arg(hide_short_help = true, help_heading = "Monitoring", long)]
    pub no_monitor: bool,
}

/// The consistency probe of `run` and the faults that make staleness visible (issue 32): one process
/// measures it beside the run phase.
#[derive(Debug, Args, Clone)]
pub struct ConsistencyArgs {
    /// Beside the run phase, measure how stale reads are: RATE probe writes per second of a few
    /// probe keys, on connections of their own, each read back at the --probe-delays and until
    /// seen (t-visibility, staleness window, k-staleness, read-your-writes, monotonic reads; the
    /// result's `consistency`, docs/consistency.md). Off by default.
    #[arg(hide_short_help = true, help_heading = "Consistency and faults", long, value_name = "RATE", value_parser = request::parse_probe_rate)]
    pub consistency_probe: Option<f64>,

    /// With --consistency-probe: the delays after each write's acknowledgement at which a reader
    /// reads it, in ms [default: 0,0.1,0.5,1,2,5,10,50,100 (PBS)].
    #[arg(hide_short_help = true, help_heading = "Consistency and faults", long, value_name = "MS,MS,...", value_parser = request::parse_probe_delays, requires = "consistency_probe")]
    pub probe_delays: Option<ProbeDelays>,

    /// With --consistency-probe: how many probe keys it writes in turn [default: 8]; each is
    /// rewritten every N / RATE seconds, the period k-staleness (versions behind) counts in.
    #[arg(hide_short_help = true, help_heading = "Consistency and faults", long, value_name = "N", value_parser = request::parse_probe_keys, requires = "consistency_probe")]
    pub probe_keys: Option<usize>,

    /// With --consistency-probe: write every probe operation to FILE (JSON Lines), for a checker
    /// (tools/history-check: Porcupine).
    #[arg(
        hide_short_help = true,
        help_heading = "Consistency and faults",
        long,
        value_name = "FILE",
        requires = "consistency_probe"
    )]
    pub history: Option<PathBuf>,

    /// Beside the run phase, inject a fault into a node of the --deployment: pause:NODE pauses it
    /// (SIGSTOP, then SIGCONT: Jepsen's pause nemesis) for `for` once every `every` [defaults:
    /// every=1s, for=200ms], e.g. pause:node2,every=2s,for=300ms. The pauses go on the result's
    /// timeline (`faults`). Repeatable.
    #[arg(hide_short_help = true, help_heading = "Consistency and faults", long, value_name = "pause:NODE[,every=D][,for=D]", value_parser = scalebench_session::fault::FaultRequest::parse)]
    pub fault: Vec<scalebench_session::fault::FaultRequest>,
}

impl ConsistencyArgs {
    /// The probe these arguments ask for, if any.
    pub fn request(&self) -> Option<scalebench_session::request::ProbeRequest> {
        self.consistency_probe.map(|rate| {
            let mut probe =
                scalebench_session::request::ProbeRequest::new(rate).expect("checked when parsed");
            if let Some(d) = &self.probe_delays {
                probe.delays_ms = d.clone().into_ms();
            }
            if let Some(keys) = self.probe_keys {
                probe.keys = keys;
            }
            probe.history = self.history.clone();
            probe
        })
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result (load/run/merge), an elastic result, a saturation search's result, or a results
    /// file (SQLite) of experiments.
    #[arg(value_name = "RESULT.json|results.db")]
    pub input: PathBuf,
    /// With a results file: the experiment (default: the only one, else an error naming them).
    #[arg(long, value_name = "NAME")]
    pub experiment: Option<String>,
    /// The report (HTML), written atomically.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Also write each chart's data as DIR/<chart>.csv.
    #[arg(long, value_name = "DIR")]
    pub csv_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline result (JSON).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The result judged against it.
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// Significance level of the tests.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Differences smaller than this share of A's value (percent) never count as significant.
    #[arg(long, value_name = "PCT", default_value_t = 1.0, value_parser = parse_percent)]
    pub min_change: f64,
    /// Exit with code 1 when a metric of B is significantly worse than A's by more than PCT percent.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_above: Option<f64>,
    /// Table or JSON on standard output.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result files of clients that ran together.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// The merged result file.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub summary: SummaryArgs,
}

#[derive(Debug, Args)]
pub struct MergeLogsArgs {
    /// Interval logs of one operation (the same file of each client).
    #[arg(required = true, num_args = 1.., value_name = "LOG.hlog")]
    pub files: Vec<PathBuf>,
    /// The merged interval log.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
}

/// How a result is summarised on standard output.
#[derive(Debug, Args, Clone)]
pub struct SummaryArgs {
    /// Summary on standard output.
    ///
    /// `ycsb` prints YCSB's text of the last phase only, as YCSB prints one phase per run; warnings
    /// go to standard error.
    #[arg(help_heading = "Output", long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write the load phase's YCSB text to this file (atomically), for a run with a load phase.
    #[arg(
        hide_short_help = true,
        help_heading = "Output",
        long,
        value_name = "FILE"
    )]
    pub ycsb_load: Option<PathBuf>,
}

impl SummaryArgs {
    /// The table, no file: what a launched client prints.
    pub fn table() -> SummaryArgs {
        SummaryArgs {
            format: Format::Table,
            ycsb_load: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Ycsb,
}

impl From<Format> for scalebench_report::summary::SummaryFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => Self::Table,
            Format::Json => Self::Json,
            Format::Ycsb => Self::Ycsb,
        }
    }
}

impl PhaseArgs {
    /// The run these arguments ask for; `argv` is recorded (redacted) as its command.
    pub fn request(&self, argv: &[std::ffi::OsString]) -> RunRequest {
        RunRequest {
            workload: self.workload.clone(),
            db: self.db.clone(),
            property_files: self.property_files.clone(),
            properties: self.properties.clone(),
            allow_files: self.allow_files.clone(),
            threads: self.threads,
            concurrency: self.concurrency,
            target: self.target,
            rate_profile: self.rate_profile.clone(),
            arrival: self.arrival,
            timing: self.timing,
            duration: self.duration,
            warmup: self.warmup,
            operations: self.operations,
            seed: self.seed,
            interval: self.interval,
            op_timeout: self.op_timeout,
            grace: self.grace,
            connect_timeout: self.connect_timeout,
            batch_size: self.batch_size,
            request_set: self.request_set,
            request_set_threads: self.request_set_threads,
            verify_writes: self.verify_writes,
            verify_timeout: self.verify_timeout,
            status_interval: self.status_interval,
            create_schema: self.create_schema,
            drop_schema: self.drop_schema,
            quiet: self.quiet,
            deployment: self.deployment.clone(),
            clusters_dir: self.clusters.clusters_dir.clone(),
            space_after_load: if self.no_compact {
                SpaceAfterLoad::AsInserted
            } else {
                SpaceAfterLoad::Settled
            },
            no_monitor: self.no_monitor,
            command: scalebench_session::environment::redacted_command(argv),
            // What only launchers, studies and the options beyond these set.
            ..RunRequest::new(&self.workload)
        }
    }
}

impl SaturateArgs {
    /// The saturation search these arguments ask for.
    pub fn request(&self, argv: &[std::ffi::OsString], clients: StepClients) -> SaturationRequest {
        SaturationRequest {
            run: self.phase.request(argv),
            threads_search: self.threads_search,
            start_rate: self.start_rate,
            factor: self.factor,
            max_steps: self.max_steps,
            objective: Objective {
                p99: self.p99,
                p999: self.p999,
                max_error_rate: self.max_error_rate.map(|p| p / 100.0),
            },
            resolution: self.resolution,
            precision: self.precision,
            max_repeats: self.max_repeats,
            hdr_log: self.phase.hdr_log.clone(),
            clients,
            pause: self.step_pause,
        }
    }
}

impl ElasticArgs {
    /// The elastic benchmark these arguments ask for.
    pub fn request(&self, argv: &[std::ffi::OsString]) -> ElasticRequest {
        let mut run = self.phase.request(argv);
        // On by default, from one client or several: each client records its own writes, and
        // several update disjoint residues of the keys (`writekeypartition`).
        run.verify_writes = self.phase.verify_writes || (!self.no_verify_writes && !self.unloaded);
        ElasticRequest {
            run,
            action: self.action,
            baseline: self.baseline,
            after: self.after,
            stable_sets: self.stable_sets,
            criterion: self.criterion,
            probe: self.probe,
            stable_timeout: self.stable_timeout,
            steps: self.steps,
            no_load: self.no_load,
            set_repeats: self.set_repeats,
            score_time_axis: self.score_time_axis,
            unloaded: self.unloaded,
            hdr_log: self.phase.hdr_log.clone(),
            service_level: self.service_level.clone(),
            on_step: None,
        }
    }
}
