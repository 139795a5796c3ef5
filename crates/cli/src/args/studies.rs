//! The options of the studies: experiments, saturation searches, elasticity, the monitor, the results database.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::clients::*;
use super::phase::*;
use scalebench_session::replay::ReplayRequest;
use scalebench_session::request::{
    parse_duration, parse_fraction_percent, parse_interval, parse_link_mbit, parse_listen_address,
    parse_percent, parse_positive_rate, parse_process, parse_step_factor,
};
use scalebench_study::elastic::request::{
    self as elastic_request, parse_action, parse_criterion, parse_motion_check, Criterion,
    ElasticRequest, MotionCheck, ScaleAction,
};
use scalebench_study::saturate::{Objective, SaturationRequest, StepClients};

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
    /// Instead of rates: speed-ups of this capture, from x1 (each step replays it whole at K times
    /// its speed, as `scalebench replay --speed K`): how many times today's traffic fits.
    #[arg(long, value_name = "CAPTURE", conflicts_with_all = ["start_rate", "threads_search"])]
    pub replay: Option<PathBuf>,
    #[command(flatten)]
    pub capture: super::CaptureShape,
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
    /// none (the load criterion alone). (`--probe`, its former name, is still taken.)
    #[arg(long, visible_alias = "probe", value_name = "db|none", default_value = "db", value_parser = parse_motion_check)]
    pub motion_check: MotionCheck,
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

impl SaturateArgs {
    /// The saturation search these arguments ask for.
    pub fn request(
        &self,
        argv: &[std::ffi::OsString],
        clients: StepClients,
    ) -> Result<SaturationRequest, scalebench_session::error::SessionError> {
        let (format, copies) = (self.capture.capture_format, self.capture.copies);
        Ok(SaturationRequest {
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
            replay: ReplayRequest::given(self.replay.clone(), format, copies)?,
        })
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
            motion_check: self.motion_check,
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
