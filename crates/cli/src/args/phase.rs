//! The options of a load or run: the database, the workload, the pace, the outputs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use scalebench_session::request::{
    self, parse_arrival, parse_batch_size, parse_concurrency, parse_duration, parse_interval,
    parse_listen_address, parse_request_set, parse_threads, ProbeDelays, RunRequest,
    SpaceAfterLoad,
};
use scalebench_workload::rate::{Pace, RateProfile};

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

    /// Operations in flight on each connection of the run, as memtier's --pipeline (redis, postgres, etcd).
    ///
    /// N of each thread's --concurrency operations share one connection, whose protocol carries
    /// their requests without waiting for replies; each is still timed from its own start. N must
    /// divide --concurrency: `--concurrency 500 --pipeline 10` is memtier's `-c 50 --pipeline 10`.
    /// A load keeps a connection per operation (it batches with --batch-size).
    #[arg(hide_short_help = true, help_heading = "Load shape", long, value_name = "N", default_value_t = 1, value_parser = request::parse_pipeline)]
    pub pipeline: u32,

    /// Open loop at this total rate in operations per second (0 = closed loop).
    ///
    /// From 0.001 to 1e9 (default: property target). It paces the command's own phase: `load --target` the load in records per second (default:
    /// property loadtarget), `run --load --target` only the run.
    #[arg(help_heading = "Load shape", long, value_name = "OPS", value_parser = Pace::parse_target)]
    pub target: Option<Pace>,

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
            pipeline: self.pipeline,
            // clap refuses --target with --rate-profile.
            pace: (self.rate_profile.clone().map(Pace::Profile))
                .or(self.target.clone())
                .unwrap_or_default(),
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
