//! From command-line arguments and YCSB properties to a workload, a database and a run plan.
//!
//! Precedence, as in YCSB: the built-in workload or WORKLOAD file, then each `-P` file in order, then
//! all `-p` overrides; dedicated flags (--threads, --target, --duration, --operations) win over the
//! properties they correspond to (threadcount, target, maxexecutiontime, operationcount).

mod pace;
pub use pace::PhasePace;
use pace::{declared_rate_profile, Window, LOAD_PACE, RUN_PACE};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use scalebench_binding::{registry, BindingConfig, BindingInfo, DbUrl, Schema};
use scalebench_exec::{Arrival, Phase, RunPlan, StopSignal};
use scalebench_measure::ycsb_text::parse_percentiles;
use scalebench_workload::builtin::builtin_workload;
use scalebench_workload::declared::{
    self, Shapes, BATCHSIZE, HDRHISTOGRAM_PERCENTILES, MAXEXECUTIONTIME, OPERATIONCOUNT,
    RATEPROFILE, THREADCOUNT,
};
use scalebench_workload::definition::WorkloadDefinition;
use scalebench_workload::rate::{Pace, RateProfile};
use scalebench_workload::{Assignment, CoreWorkload, Properties, WorkloadError};

use crate::error::SessionError;
use crate::request::{
    check_connect_timeout, check_duration, check_interval, RunRequest, MAX_IN_FLIGHT, MAX_THREADS,
};

const BUILTIN_ORIGIN: &str = "built-in workload";

pub struct Settings {
    pub workload_name: String,
    pub props: Properties,
    pub workload: CoreWorkload,
    pub db: DbUrl,
    /// The temporary directory of the default database; removed when dropped.
    pub temp_db_dir: Option<tempfile::TempDir>,
    /// A replay of a database log's statements (its format known): they name their own tables,
    /// and the workload's need not exist.
    pub replays_statements: bool,
    pub binding: BindingInfo,
    pub threads: usize,
    pub concurrency: usize,
    /// Operations in flight on each connection of the run phase (`--pipeline`; 1: none).
    pub pipeline: u32,
    /// The run phase's offered rate (`--target`, `--rate-profile`; `target`, `rateprofile`).
    pub run_pace: PhasePace,
    /// The load phase's (the load command's `--target`, `--rate-profile`; `loadtarget`,
    /// `loadrateprofile`), in records per second.
    pub load_pace: PhasePace,
    pub arrival: Arrival,
    /// The run phase's timing (`--timing`).
    pub timing: scalebench_exec::Timing,
    /// Measured duration of the run phase.
    pub run_duration: Option<Duration>,
    /// Cap on the load phase, only when given explicitly.
    pub load_duration: Option<Duration>,
    pub warmup: Duration,
    pub operation_count: Option<u64>,
    pub seed: u64,
    pub interval: Duration,
    pub op_timeout: Option<Duration>,
    pub grace: Duration,
    pub connect_timeout: Duration,
    pub batch_size: usize,
    pub request_set: Option<u64>,
    pub set_threads: scalebench_exec::SetThreads,
    pub verify_writes: bool,
    pub verify_timeout: Option<Duration>,
    pub percentiles: Vec<f64>,
    pub warnings: Vec<String>,
    /// Which operations run their key_value alternative on this binding, one line each.
    pub alternatives: Vec<String>,
    /// `--deployment`: the cluster the phases go to.
    pub cluster: Option<scalebench_deploy::Cluster>,
    /// How many client processes share the database in this run (1 alone).
    pub clients: u32,
    /// `threads` are the whole run's, each client its share (see [`RunRequest::threads_in_all`]).
    pub threads_in_all: bool,
    /// This client's first thread among the run's (0 alone): the run's threads are numbered over
    /// its clients, each client's in a row.
    pub first_thread: usize,
}

impl Settings {
    /// The settings of the whole run, before any client's share (the cluster opened, a temporary
    /// database made where the request has none): what defines a run of several clients
    /// ([`Settings::definition`]), and what [`Settings::for_client`] takes a share of.
    pub fn resolve(args: &RunRequest, phase: Phase) -> Result<Settings, SessionError> {
        let cluster = match &args.deployment {
            Some(file) => Some(crate::cluster::open(file, &args.clusters_dir)?),
            None => None,
        };
        let (db, temp_db_dir) = match (&args.db, &cluster) {
            (Some(url), _) => (DbUrl::parse(url)?, None),
            (None, Some(c)) => (DbUrl::parse(&c.url())?, None),
            (None, None) => {
                let dir = tempfile::Builder::new()
                    .prefix("scalebench-")
                    .tempdir()
                    .map_err(|e| {
                        SessionError::Failed(format!("cannot create a temporary directory: {e}"))
                    })?;
                let url =
                    DbUrl::parse(&format!("sqlite://{}/scalebench.db", dir.path().display()))?;
                (url, Some(dir))
            }
        };
        Self::with_database(args, phase, db, temp_db_dir, cluster)
    }

    /// What [`Settings::resolve`] checks (with client `share`'s part applied, if any), with no
    /// side effect: no cluster is opened and no temporary database made (a run on a deployment or
    /// on the default database is checked as on the null binding; its binding options are checked
    /// when it opens).
    pub fn check(
        args: &RunRequest,
        share: Option<crate::clients::ClientShare>,
        phase: Phase,
    ) -> Result<(), SessionError> {
        let s = Self::checked(args, share, phase)?;
        registry::check_options(
            &s.binding,
            &BindingConfig::options_from(&s.props, s.binding.name),
        )?;
        Ok(())
    }

    /// The settings [`Settings::check`] checks (the workload with client `share`'s part applied,
    /// the percentiles to print), made without side effects.
    pub fn checked(
        args: &RunRequest,
        share: Option<crate::clients::ClientShare>,
        phase: Phase,
    ) -> Result<Settings, SessionError> {
        let db = DbUrl::parse(args.db.as_deref().unwrap_or("null://"))?;
        Self::with_database(args, phase, db, None, None)?.for_client(share, phase)
    }

    /// These settings (the whole run's) as client `share` runs them: its part of the records or
    /// operations, of the rate (its arrivals between the other clients'), and a seed of its own.
    pub fn for_client(
        mut self,
        share: Option<crate::clients::ClientShare>,
        phase: Phase,
    ) -> Result<Settings, SessionError> {
        let Some(share) = share else {
            return Ok(self);
        };
        let explicit_count = explicit_operation_count(&self.props);
        share.apply(
            &mut self.props,
            &self.workload,
            phase,
            explicit_count,
            self.verify_writes,
        )?;
        self.workload = CoreWorkload::from_properties(&self.props)?;
        self.operation_count = operation_count(&self.workload, phase, explicit_count);
        self.run_pace = self.run_pace.for_client(&share);
        self.load_pace = self.load_pace.for_client(&share);
        self.seed = share.seed(self.seed);
        self.clients = share.clients;
        let too_few = |what: &str, n: u64| share.too_few(what, n);
        if self.threads_in_all && (self.threads as u64) < share.clients as u64 {
            return Err(too_few("--threads", self.threads as u64));
        }
        // A request set is the whole run's R operations (Dory's), each client the shares of its
        // threads.
        if let Some(r) = self.request_set {
            if r < share.clients as u64 {
                return Err(too_few("--request-set", r));
            }
            let set = share.request_set(r, self.threads as u64, self.threads_in_all)?;
            self.request_set = Some(set);
        }
        let (first, threads, _) = share.threads(self.threads as u64, self.threads_in_all);
        self.threads = threads as usize;
        self.first_thread = first as usize;
        Ok(self)
    }

    /// Why the writes of `args`' run cannot be verified (`--verify-writes`): its workload's first
    /// operation whose writes the check cannot follow, named; `None`: they can.
    pub fn unverifiable_writes(args: &RunRequest) -> Result<Option<String>, SessionError> {
        let (mut props, _) = Self::properties(args, &[])?;
        crate::binding_fit::alternatives_of_url(&mut props, args.db.as_deref())?;
        let workload = CoreWorkload::from_properties(&props)?;
        Ok(scalebench_exec::written::unverifiable(&workload))
    }

    /// Every layer of a request's properties merged, the one place they are: the built-in workload
    /// or WORKLOAD file, each `-P` file in order, every `-p` in order, `--operations`, then the
    /// deployment's binding options for the keys none of those set (a file or `-p` wins over a
    /// deployment, whether it is opened here or resolved by a launcher for its clients).
    pub fn properties(
        args: &RunRequest,
        from_deployment: &[Assignment],
    ) -> Result<(Properties, String), SessionError> {
        let mut props = Properties::new();
        let workload_name = load_workload(&mut props, &args.workload, &args.allow_files)?;
        for file in &args.property_files {
            props.load_file(file)?;
        }
        for a in &args.properties {
            props.assign(a, "-p");
        }
        if let Some(n) = args.operations {
            props.set_declared(&OPERATIONCOUNT, n, "--operations");
        }
        for a in from_deployment {
            if !props.contains(&a.key) {
                props.assign(a, "deployment");
            }
        }
        Ok((props, workload_name))
    }

    fn with_database(
        args: &RunRequest,
        phase: Phase,
        db: DbUrl,
        temp_db_dir: Option<tempfile::TempDir>,
        cluster: Option<scalebench_deploy::Cluster>,
    ) -> Result<Settings, SessionError> {
        let binding = binding_of(&db)?;
        let from_deployment: Vec<Assignment> = match &cluster {
            Some(c) => deployment_options(c, binding.name),
            None => args.deployment_options.clone(),
        };
        let (mut props, workload_name) = Self::properties(args, &from_deployment)?;
        let alternatives = crate::binding_fit::run_alternatives(&mut props, &binding)?;
        let workload = CoreWorkload::from_properties(&props)?;
        // Before anything connects: the binding can run the file's statements, and the write
        // check can follow every write the file makes.
        let schema = Schema::of(&workload);
        registry::check_statements(&binding, &schema)?;
        let pipeline = pipeline_of(args, phase, &binding, &schema)?;
        if let Some(why) = scalebench_exec::written::refusal(&workload)
            .filter(|_| args.verify_writes && phase == Phase::Run)
        {
            return Err(SessionError::Usage(why));
        }
        if args.verify_writes && phase == Phase::Run && !binding.stores_data {
            // As the probe is refused: every write would be counted lost.
            return Err(SessionError::Usage(format!(
                "--verify-writes: the {} binding stores nothing, so there is no written value to read back",
                binding.name
            )));
        }
        let explicit_count = explicit_operation_count(&props);

        let mut warnings = property_warnings(&props, &binding);
        warnings.extend((pipeline > 1 && phase == Phase::Load).then(|| format!("--pipeline {pipeline} has no effect on a load: it keeps a connection per operation in flight and batches with --batch-size")));
        warnings.extend(crate::binding_fit::left_out(&workload, &binding));
        let threads = threads_of(args, &props)?;
        let operation_count = operation_count(&workload, phase, explicit_count);
        let explicit_duration = duration_of(args, &props)?;
        // The command's --target and --rate-profile pace its own phase (YCSB's `load -target`).
        let (run_asked, load_asked) = match phase {
            Phase::Run => (args.pace.clone(), Pace::Inherit),
            Phase::Load => (Pace::Inherit, args.pace.clone()),
        };
        // The run phase stops after 30 s unless told otherwise, or when its rate profile (of a
        // length) ends; the load phase when all records are in.
        let run_profile = match &run_asked {
            Pace::Inherit => declared_rate_profile(&props, RUN_PACE.rate_profile).unwrap_or(None),
            asked => asked.profile().cloned(),
        };
        let profile_length = run_profile
            .as_ref()
            .map(|p| p.length_s())
            .filter(|l| l.is_finite() && *l > 0.0);
        let run_duration = match (explicit_duration, profile_length) {
            (None, Some(l)) if operation_count.is_none() => Some(Duration::from_secs_f64(l)),
            (None, _) if operation_count.is_none() => Some(Duration::from_secs(30)),
            (d, _) => d,
        };
        if let (Some(p), Some(d), Phase::Run) = (&run_profile, run_duration, phase) {
            warnings.extend(p.fit(d));
        }
        let run_pace = PhasePace::of(
            &RUN_PACE,
            &run_asked,
            &props,
            Window::Duration(run_duration),
        )?;
        // Only the load command itself is capped, by --duration (maxexecutiontime, a workload
        // file's run.duration, is the run's); a load before a run is not.
        let load_duration = args.duration.filter(|_| phase == Phase::Load);
        let load_pace = PhasePace::of(
            &LOAD_PACE,
            &load_asked,
            &props,
            Window::Records(workload.insert_count, load_duration),
        )?;
        check_durations(args)?;
        for profile in [&run_pace, &load_pace]
            .iter()
            .filter_map(|p| p.rate_profile.as_ref())
        {
            scalebench_exec::plan::check_profile_warmup(profile, args.warmup)
                .map_err(SessionError::Usage)?;
        }
        let batch_size = match args.batch_size {
            Some(b) => b as usize,
            None => props.integer(&BATCHSIZE)?.max(1) as usize,
        };
        warnings.extend(check_request_sets(args, run_pace.target, &binding)?);
        if phase == Phase::Run {
            scalebench_exec::plan::check_timing(args.timing, run_duration, args.warmup).map_err(
                |e| {
                    SessionError::Usage(format!(
                        "invalid value '{}' for '--timing': {e}",
                        args.timing.name()
                    ))
                },
            )?;
        }
        let percentiles = percentiles_of(&props)?;
        let seed = args.seed.unwrap_or_else(random_seed);

        Ok(Settings {
            workload_name,
            workload,
            db,
            temp_db_dir,
            replays_statements: replays_statements(args),
            cluster,
            binding,
            threads,
            concurrency: args.concurrency as usize,
            pipeline,
            run_pace,
            load_pace,
            arrival: args.arrival,
            timing: args.timing,
            run_duration,
            load_duration,
            warmup: args.warmup,
            operation_count,
            seed,
            interval: args.interval,
            op_timeout: args.op_timeout,
            grace: args.grace,
            connect_timeout: args.connect_timeout,
            clients: 1,
            threads_in_all: args.threads_in_all,
            first_thread: 0,
            batch_size,
            request_set: args.request_set,
            set_threads: args.request_set_threads,
            verify_writes: args.verify_writes,
            verify_timeout: args.verify_timeout,
            percentiles,
            warnings,
            alternatives,
            props,
        })
    }

    /// Operations in flight on each connection of `phase`: `--pipeline` is the run's, a load keeps
    /// a connection per operation.
    pub fn pipeline_in(&self, phase: Phase) -> u32 {
        match phase {
            Phase::Run => self.pipeline,
            Phase::Load => 1,
        }
    }

    /// The offered rate of `phase`.
    pub fn pace(&self, phase: Phase) -> &PhasePace {
        match phase {
            Phase::Run => &self.run_pace,
            Phase::Load => &self.load_pace,
        }
    }

    /// The executor's plan of `phase`, wired to this process's timeline log and rendezvous.
    pub fn plan(&self, phase: Phase, wiring: &crate::wiring::RunWiring) -> RunPlan {
        let pace = self.pace(phase);
        RunPlan {
            phase,
            threads: self.threads,
            concurrency: self.concurrency,
            target_ops_s: pace.target,
            rate_profile: pace
                .rate_profile
                .as_ref()
                .map(|p| p.scaled(1.0 / f64::from(self.clients))),
            arrival: self.arrival,
            timing: if phase == Phase::Run {
                self.timing
            } else {
                scalebench_exec::Timing::Window
            },
            // A replay's feed ends its run phase ([`scalebench_exec::feed`]).
            duration: if phase == Phase::Run {
                self.run_duration.filter(|_| wiring.feed.is_none())
            } else {
                self.load_duration
            },
            warmup: self.warmup,
            operation_count: self.operation_count,
            interval: self.interval,
            op_timeout: self.op_timeout,
            grace: self.grace,
            seed: self.seed,
            batch_size: self.batch_size,
            request_set: self.request_set,
            set_threads: self.set_threads,
            verify_writes: self.verify_writes,
            verify_timeout: self.verify_timeout,
            timeline_log: wiring.timeline_log.clone(),
            arrival_offset: pace.arrival_offset,
            rendezvous: wiring.rendezvous.clone(),
            feed: wiring.feed.clone().filter(|_| phase == Phase::Run),
            insert_retries: self.workload.insertion_retry_limit,
            insert_retry_interval: Duration::from_secs(self.workload.insertion_retry_interval_s),
        }
    }

    /// The binding's configuration; `stop` ends its setup (connect, schema) early.
    pub fn binding_config(
        &self,
        create_schema: bool,
        drop_schema: bool,
        stop: &StopSignal,
    ) -> BindingConfig {
        BindingConfig {
            url: self.db.clone(),
            options: BindingConfig::options_from(&self.props, self.binding.name),
            schema: Schema::of(&self.workload),
            create_schema,
            drop_schema,
            cancel: stop.cancel().clone(),
            connect_timeout: self.connect_timeout,
            clients: self.clients,
            worker_nodes: None,
            pipeline: 1,
            benchmark_table: !self.replays_statements,
        }
    }

    /// The binding's configuration for `phase`: the measured run's workers bound to nodes with
    /// `--request-set-threads fixed` (Dory's client), from this client's first worker among the
    /// run's.
    pub fn phase_binding_config(
        &self,
        phase: Phase,
        create_schema: bool,
        drop_schema: bool,
        stop: &StopSignal,
    ) -> BindingConfig {
        let fixed = self.set_threads == scalebench_exec::SetThreads::Fixed;
        BindingConfig {
            worker_nodes: (fixed && phase == Phase::Run).then_some(
                scalebench_binding::WorkerNodes {
                    first_worker: self.first_thread * self.concurrency,
                },
            ),
            pipeline: self.pipeline_in(phase),
            ..self.binding_config(create_schema, drop_schema, stop)
        }
    }

    /// What a load or run with these settings warns about before it starts (`workload check --db`
    /// prints the same).
    pub fn phase_warnings(&self) -> Vec<String> {
        let mut out = self.warnings.clone();
        if self.workload.data_integrity && !self.binding.stores_data {
            out.push(format!(
                "dataintegrity=true has no effect with the {} binding: it keeps no data to verify",
                self.binding.name
            ));
        }
        out
    }

    pub fn uses_default_db(&self) -> bool {
        self.temp_db_dir.is_some()
    }
}

/// The binding of `db`'s scheme, or bad input naming it (and the URL, when it says more).
fn binding_of(db: &DbUrl) -> Result<BindingInfo, SessionError> {
    registry::for_scheme(db.scheme()).ok_or_else(|| {
        // The URL too, when it says more than its scheme.
        let (url, none) = (db.redacted(), registry::no_binding(db.scheme()));
        let bare = url == format!("{}://", db.scheme());
        SessionError::Usage(if bare {
            none
        } else {
            format!("{none} ('{url}')")
        })
    })
}

/// `args` replays a database log's statements (its format known).
fn replays_statements(args: &RunRequest) -> bool {
    let format = args.replay.as_ref().and_then(|r| r.format);
    format.is_some_and(|f| f.has_statements())
}

/// The request sets' rules (`--request-set`, `--request-set-threads`), and the warning that a
/// binding cannot bind the fixed shares' threads to nodes.
fn check_request_sets(
    args: &RunRequest,
    target: Option<f64>,
    binding: &BindingInfo,
) -> Result<Option<String>, SessionError> {
    let named = |flag: &str, value: String, e: String| {
        SessionError::Usage(format!("invalid value '{value}' for '{flag}': {e}"))
    };
    let (sets, threads) = (args.request_set, args.request_set_threads);
    scalebench_exec::plan::check_request_sets(sets, target)
        .map_err(|e| named("--request-set", sets.unwrap_or(0).to_string(), e))?;
    scalebench_exec::plan::check_set_threads(threads, sets)
        .map_err(|e| named("--request-set-threads", threads.name().into(), e))?;
    let unbound = threads == scalebench_exec::SetThreads::Fixed && !binding.binds_workers_to_nodes;
    Ok(unbound.then(|| format!(
        "{} cannot bind a thread to a node (its requests go where it routes them: `scalebench bindings {}`): with --request-set-threads fixed each thread keeps its fixed share of every set, unbound",
        binding.name, binding.name
    )))
}

/// `--pipeline`: groups of a thread's in-flight operations, so it divides `--concurrency`; a run's
/// binding must pipeline the workload's operations (a load keeps a connection per operation).
fn pipeline_of(
    args: &RunRequest,
    phase: Phase,
    binding: &BindingInfo,
    schema: &Schema,
) -> Result<u32, SessionError> {
    match args.pipeline {
        0 | 1 => Ok(1),
        n if args.concurrency.is_multiple_of(n) => {
            if phase == Phase::Run {
                scalebench_binding::pipeline::check(binding, schema, n)?;
            }
            Ok(n)
        }
        n => Err(SessionError::Usage(format!(
            "invalid value '{n}' for '--pipeline': it shares a connection among {n} of each thread's --concurrency {} operations in flight, so it must divide it (--concurrency {} gives {} connections per thread)",
            args.concurrency,
            args.concurrency.div_ceil(n) * n,
            args.concurrency.div_ceil(n)
        ))),
    }
}

/// `--threads`, else `threadcount`; threads x `--concurrency` bounded.
fn threads_of(args: &RunRequest, props: &Properties) -> Result<usize, SessionError> {
    let threads = match args.threads {
        Some(t) => t as usize,
        None => match props.integer(&THREADCOUNT)? {
            n @ 1..=MAX_THREADS => n as usize,
            n => {
                return Err(WorkloadError::invalid(
                    THREADCOUNT.name,
                    &n.to_string(),
                    format!("expected 1 to {MAX_THREADS}"),
                )
                .into())
            }
        },
    };
    // Each in-flight operation holds a connection and buffers: bounded in total, not per thread.
    let in_flight = threads as u64 * args.concurrency as u64;
    if in_flight > MAX_IN_FLIGHT {
        return Err(SessionError::Usage(format!(
                "invalid value '{}' for '--concurrency': {threads} threads x {} = {in_flight} operations in flight, at most {MAX_IN_FLIGHT}",
                args.concurrency, args.concurrency
            )));
    }
    Ok(threads)
}

/// The rate profile a request asks for, `--rate-profile` or its workload's, whatever `--target`
/// says: what commands that offer their own constant rates (`saturate`, `elastic`) refuse. Reads
/// the workload's properties only; nothing is opened.
pub fn requested_rate_profile(args: &RunRequest) -> Result<Option<RateProfile>, SessionError> {
    if let Some(p) = args.pace.profile() {
        return Ok(Some(p.clone()));
    }
    let (props, _) = Settings::properties(args, &[])?;
    declared_rate_profile(&props, &RATEPROFILE)
}

/// `--duration`, else `maxexecutiontime`: how long a run lasts at most, when said.
fn duration_of(args: &RunRequest, props: &Properties) -> Result<Option<Duration>, SessionError> {
    let explicit_duration = match args.duration {
        Some(d) if d.is_zero() => {
            return Err(SessionError::Usage(
                "invalid value '0s' for '--duration': expected a positive duration".into(),
            ))
        }
        Some(d) => Some(d),
        None => match props.integer(&MAXEXECUTIONTIME)? {
            0 => None,
            s if s > crate::request::MAX_DURATION.as_secs() => {
                return Err(WorkloadError::invalid(
                    MAXEXECUTIONTIME.name,
                    &s.to_string(),
                    format!(
                        "expected at most {} seconds (30 days)",
                        crate::request::MAX_DURATION.as_secs()
                    ),
                )
                .into())
            }
            s => Some(Duration::from_secs(s)),
        },
    };
    Ok(explicit_duration)
}

/// The percentiles YCSB's text prints (`hdrhistogram.percentiles`).
fn percentiles_of(props: &Properties) -> Result<Vec<f64>, SessionError> {
    let percentiles_text = props.text(&HDRHISTOGRAM_PERCENTILES);
    let percentiles = parse_percentiles(percentiles_text).map_err(|bad| {
            SessionError::Usage(format!(
                "invalid value '{bad}' for property 'hdrhistogram.percentiles': expected numbers in (0, 100] separated by commas"
            ))
        })?;
    Ok(percentiles)
}

/// A deployment's binding options as properties of `binding` (`<binding>.<option>`).
pub fn deployment_options(cluster: &scalebench_deploy::Cluster, binding: &str) -> Vec<Assignment> {
    cluster
        .binding_options()
        .into_iter()
        .map(|(k, v)| Assignment::new(format!("{binding}.{k}"), v))
        .collect()
}

/// A warning for each property that is neither declared (`scalebench properties`) nor an option
/// of this binding: unknown ones, another binding's, and YCSB's that have no effect here.
fn property_warnings(props: &Properties, binding: &BindingInfo) -> Vec<String> {
    let mut warnings = Vec::new();
    for key in
        props.unknown_keys(&|k| declared::find(k).is_some_and(|p| p.shapes != Shapes::NoEffect))
    {
        let origin = props.origin(key).unwrap_or("?");
        if let Some(p) = declared::find(key) {
            warnings.push(format!(
                "property '{key}' (from {origin}) has no effect here: {}",
                p.help
            ));
        } else if let Some((prefix, _)) = key.split_once('.') {
            if prefix == binding.name {
                continue; // validated by the binding registry
            }
            if registry::find(prefix).is_some() {
                warnings.push(format!(
                    "property '{key}' (from {origin}) is for binding {prefix}, not {}: ignored",
                    binding.name
                ));
            } else {
                warnings.push(format!(
                    "unknown property '{key}' (from {origin}) is ignored (and not recorded)"
                ));
            }
        } else {
            warnings.push(format!(
                "unknown property '{key}' (from {origin}) is ignored (and not recorded)"
            ));
        }
    }
    warnings
}

/// The request's durations, checked by the rules their options are parsed with: library callers
/// (experiments, elastic runs) get the same one-line error as the command line.
fn check_durations(args: &RunRequest) -> Result<(), SessionError> {
    let bad = |option: &str, d: Duration, why: String| {
        SessionError::Usage(format!(
            "invalid value '{}' for '{option}': {why}",
            humantime::format_duration(d)
        ))
    };
    check_interval(args.interval).map_err(|e| bad("--interval", args.interval, e))?;
    check_connect_timeout(args.connect_timeout)
        .map_err(|e| bad("--connect-timeout", args.connect_timeout, e))?;
    for (option, d) in [
        ("--duration", args.duration),
        ("--warmup", Some(args.warmup)),
        ("--grace", Some(args.grace)),
        ("--op-timeout", args.op_timeout),
        ("--status-interval", Some(args.status_interval)),
    ] {
        if let Some(d) = d {
            check_duration(d).map_err(|e| bad(option, d, e))?;
        }
    }
    Ok(())
}

/// Loads the built-in workload or the WORKLOAD file; returns the name to record.
/// A workload file reads the files it names from its directory or one of `allow_files`.
fn load_workload(
    props: &mut Properties,
    name: &str,
    allow_files: &[std::path::PathBuf],
) -> Result<String, SessionError> {
    if let Some((id, text)) = builtin_workload(name) {
        props.load_str(&text, BUILTIN_ORIGIN)?;
        return Ok(id.to_string());
    }
    let path = Path::new(name);
    if scalebench_workload::file::is_workload_file(name) {
        let access = scalebench_workload::dictionary::FileAccess::new(allow_files.to_vec())
            .map_err(SessionError::Usage)?;
        scalebench_workload::file::WorkloadFile::read_with(path, &access)?.apply(props, name);
        return Ok(name.to_string());
    }
    if path.exists() || name.contains('/') || name.contains('.') {
        props.load_file(path)?;
        return Ok(name.to_string());
    }
    Err(WorkloadError::UnknownWorkload(name.to_string()).into())
}

fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    nanos ^ (std::process::id() as u64).rotate_left(32)
}

/// Whether the operation count was given (not the built-in workload's): a run then ends by it.
fn explicit_operation_count(props: &Properties) -> bool {
    props.given(&OPERATIONCOUNT).is_some()
        && props.origin(OPERATIONCOUNT.name) != Some(BUILTIN_ORIGIN)
}

/// The operations a run phase ends after, when given.
fn operation_count(workload: &CoreWorkload, phase: Phase, explicit: bool) -> Option<u64> {
    (phase == Phase::Run && explicit && workload.operation_count > 0)
        .then_some(workload.operation_count)
}

impl Settings {
    /// What defines a run of `clients` clients, field by field, beside its workload's definition
    /// ([`Settings::workload_definition`]): every client computes both from its own command line
    /// (before its share is applied), they compare them at the start (etcd) and they go into each
    /// client's result, so that clients started unlike each other (another duration, warm-up,
    /// target, workload, property or number of clients) are refused before anything runs, and
    /// their results are never merged. The whole run's value of each property a client takes a
    /// share of is here (`declared::CLIENT_SHARES`); threads, rate and what a client prints are
    /// each client's own, as are the database URL's hosts.
    /// Read from the whole run's settings ([`Settings::resolve`]).
    pub fn definition(&self, phase: Phase, clients: u32) -> BTreeMap<String, String> {
        let s = self;
        let secs = |d: Option<Duration>| {
            d.map_or_else(
                || "none".to_string(),
                |d| humantime::format_duration(d).to_string(),
            )
        };
        let mut d = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            d.insert(k.to_string(), v);
        };
        put("phase", phase.name().into());
        put("clients", clients.to_string());
        put("binding", s.binding.name.into());
        let duration = match phase {
            Phase::Run => s.run_duration,
            Phase::Load => s.load_duration,
        };
        put("duration", secs(duration));
        put(
            "operations",
            s.operation_count
                .map_or_else(|| "none".into(), |n| n.to_string()),
        );
        if phase == Phase::Run {
            put("warm-up", secs(Some(s.warmup)));
        }
        put(
            "target",
            match (s.pace(phase).target, &s.pace(phase).rate_profile) {
                (Some(t), Some(p)) => format!("{p} (mean {t:.1} ops/s over the window)"),
                (Some(t), None) => format!("{t} ops/s"),
                (None, _) => "none (closed loop)".into(),
            },
        );
        if s.pace(phase).target.is_some() {
            put("arrival", s.arrival.name().to_string());
        }
        if s.pipeline_in(phase) > 1 {
            put("pipeline", s.pipeline.to_string());
        }
        put("interval", secs(Some(s.interval)));
        put(
            "request set",
            s.request_set
                .map_or_else(|| "none".into(), |n| n.to_string()),
        );
        if s.request_set.is_some() {
            put("request set threads", s.set_threads.name().into());
        }
        // The operations are above, as they end a run (a built-in workload's count does not).
        let shares = scalebench_workload::declared::CLIENT_SHARES.iter();
        for info in shares.filter(|p| p.name != OPERATIONCOUNT.name) {
            if let Some(v) = s.props.given(info) {
                put(&format!("property {}", info.name), v.trim().to_string());
            }
        }
        d
    }

    /// The workload by what it means (definition version 2): what the clients of one run agree
    /// on and results are merged by, beside [`Settings::definition`]'s fields. Its properties are
    /// the declared ones that define the run and this binding's options.
    pub fn workload_definition(&self) -> WorkloadDefinition {
        let binding = self.binding.name;
        WorkloadDefinition::of(
            &self.props,
            |k| {
                k.strip_prefix(binding)
                    .is_some_and(|rest| rest.starts_with('.'))
            },
            scalebench_binding::config::is_secret_key,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One merge for every caller: a deployment's binding option gives way to a property file and
    /// to `-p` whether the deployment is opened here or was resolved by a launcher for its clients
    /// (the launcher used to put it between the files and `-p`, where it beat the files).
    #[test]
    fn files_and_overrides_win_over_a_deployments_options() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.properties");
        std::fs::write(&file, "cassandra.durable_writes=true\nrecordcount=7\n").unwrap();
        let from_deployment = [
            Assignment::new("cassandra.durable_writes", "false"),
            Assignment::new("cassandra.compaction", "leveled"),
            Assignment::new("recordcount", "99"),
        ];
        let mut request = RunRequest::new("a");
        request.property_files.push(file);
        request.property("cassandra.compaction", "size_tiered");
        request.operations = Some(5);
        let (props, name) = Settings::properties(&request, &from_deployment).unwrap();
        assert_eq!(name, "a");
        assert_eq!(props.get("cassandra.durable_writes"), Some("true"));
        assert_eq!(
            props.origin("cassandra.durable_writes"),
            props.origin("recordcount")
        );
        assert_eq!(props.get("cassandra.compaction"), Some("size_tiered"));
        assert_eq!(props.get("recordcount"), Some("7"));
        assert_eq!(props.get("operationcount"), Some("5"));
        // Where nothing else sets it, the deployment's option holds.
        let (props, _) = Settings::properties(&RunRequest::new("a"), &from_deployment).unwrap();
        assert_eq!(props.get("cassandra.durable_writes"), Some("false"));
        assert_eq!(props.origin("cassandra.durable_writes"), Some("deployment"));
    }

    /// Dory's request set over clients: R in all, each its share; an elastic run's threads too.
    #[test]
    fn a_request_set_and_threads_in_all_are_shared_by_the_clients() {
        let share = |request: &RunRequest, index| {
            let mut r = request.clone();
            r.db = Some("null://".into());
            let share = crate::clients::ClientShare::new(index, 2).unwrap();
            Settings::checked(&r, Some(share), Phase::Run).map(|s| (s.request_set, s.threads))
        };
        let mut request = RunRequest::new("a");
        request.request_set = Some(101);
        request.threads = Some(3);
        assert_eq!(share(&request, 0).unwrap(), (Some(51), 3));
        // Issue 61: R in proportion to the clients' threads, so that each of the 3 threads has 33
        // or 34 operations of a set (split apart, R and T gave the one thread of client 1 50).
        request.threads_in_all = true;
        assert_eq!(share(&request, 0).unwrap(), (Some(68), 2));
        assert_eq!(share(&request, 1).unwrap(), (Some(33), 1));
        request.request_set = Some(1);
        let e = share(&request, 0).unwrap_err().to_string();
        assert!(e.contains("'1' for '--request-set'"), "{e}");
        request.request_set = None;
        request.threads = Some(1);
        let e = share(&request, 0).unwrap_err().to_string();
        assert!(e.contains("'1' for '--threads'"), "{e}");
    }

    /// Issue 61: a workload with an increment cannot have its writes verified, named; the
    /// refusal is a usage error before anything connects; an experiment asks first and runs the
    /// cell unverified.
    #[test]
    fn writes_the_check_cannot_follow_are_named_before_anything_connects() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("counters.toml");
        std::fs::write(
            &file,
            "[record]\ntable = \"counters\"\nrecords = 5\n\n[[record.column]]\nname = \"hits\"\n\
             type = \"int\"\ngenerator.uniform = { min = 0, max = 9 }\n\n[[run.operation]]\n\
             name = \"hit\"\nkind = \"increment\"\nweight = 1\nadd = { hits = 1 }\n",
        )
        .unwrap();
        let mut request = RunRequest::new(file.to_str().unwrap());
        request.db = Some("null://".into());
        let why = Settings::unverifiable_writes(&request).unwrap();
        assert_eq!(
            why.as_deref(),
            Some("--verify-writes cannot check operation 'hit' (increment): it adds to a value in the database, which the client never learns")
        );
        assert_eq!(
            Settings::unverifiable_writes(&RunRequest::new("a")).unwrap(),
            None
        );
        Settings::checked(&request, None, Phase::Run).expect("without --verify-writes");
        request.verify_writes = true;
        match Settings::checked(&request, None, Phase::Run) {
            Err(SessionError::Usage(e)) => {
                assert!(e.ends_with("(elastic: --no-verify-writes)"), "{e}")
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
