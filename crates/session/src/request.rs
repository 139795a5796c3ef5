//! What a load, a run or an elastic run is asked to do, as values. `scalebench load|run|elastic`
//! parse their arguments into these; experiments build them directly, so that no command line is
//! built or parsed between the runner and the run. Each default and each check of a value is
//! declared here once: the command line's parsers and help use them, and so do experiment files.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::SessionError;
use scalebench_exec::{Arrival, Timing};
use scalebench_workload::rate::{Pace, RateProfile};
use scalebench_workload::Assignment;
use serde::{Deserialize, Serialize};

/// Defaults of the options that have one (the command line's help shows them).
pub const DEFAULT_CONCURRENCY: u32 = 1;
pub const DEFAULT_WARMUP: &str = "0s";
pub const DEFAULT_INTERVAL: &str = "1s";
pub const DEFAULT_GRACE: &str = "10s";
pub const DEFAULT_CONNECT_TIMEOUT: &str = "10s";
pub const DEFAULT_STATUS_INTERVAL: &str = "10s";
pub const DEFAULT_CLUSTERS_DIR: &str = "scalebench-clusters";

/// Bounds of threads, and of threads x concurrency (each in-flight operation holds a connection).
pub const MAX_THREADS: u64 = 4096;
pub const MAX_IN_FLIGHT: u64 = 100_000;
const MAX_BATCH: u32 = 100_000;
const MAX_PIPELINE: u64 = 1000;
/// Clients of one run.
pub const MAX_CLIENTS: u64 = 1024;
pub const DEFAULT_START_TIMEOUT: &str = "60s";

/// One load or run (or both, with the phases given where it is executed): what was asked, as data.
/// It travels to the client processes of a distributed run; what belongs to one process (signals,
/// logs, the metrics endpoint, the rendezvous) is its [`crate::wiring::RunWiring`], passed beside it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    /// A built-in workload or a property file.
    pub workload: String,
    /// The database URL (none: the deployment's, else a temporary SQLite database).
    pub db: Option<String>,
    pub property_files: Vec<PathBuf>,
    /// `-p` overrides, applied after the files in order.
    pub properties: Vec<Assignment>,
    /// Directories a workload file may name files in besides its own (`--allow-files`).
    #[serde(default)]
    pub allow_files: Vec<PathBuf>,
    /// The binding options of a deployment the request no longer names (a distributed run's
    /// launcher resolves its deployment for the clients), below every file and `-p` as a
    /// deployment's own are: see `Settings::properties`.
    pub deployment_options: Vec<Assignment>,
    pub threads: Option<u32>,
    pub concurrency: u32,
    /// Operations in flight on each connection of the run phase (`--pipeline`; 1: a connection
    /// per in-flight operation).
    #[serde(default = "one")]
    pub pipeline: u32,
    /// The command's own phase's offered rate (`--target`, `--rate-profile`), else the
    /// workload's.
    #[serde(default)]
    pub pace: Pace,
    pub arrival: Arrival,
    /// What the run phase's throughput is divided by (`--timing`).
    pub timing: Timing,
    pub duration: Option<Duration>,
    pub warmup: Duration,
    pub operations: Option<u64>,
    pub seed: Option<u64>,
    pub interval: Duration,
    pub op_timeout: Option<Duration>,
    pub grace: Duration,
    /// Each connection attempt (handshake included) and each setup call of the binding.
    pub connect_timeout: Duration,
    pub batch_size: Option<u32>,
    pub request_set: Option<u64>,
    /// How a set's operations go to the threads (`--request-set-threads`).
    #[serde(default)]
    pub request_set_threads: scalebench_exec::SetThreads,
    /// Record every write of the run and read the written keys back after it: `lost_writes`
    /// (docs/operations.md).
    #[serde(default)]
    pub verify_writes: bool,
    /// The longest the write check after the run may take (`--verify-timeout`; None: the run's
    /// length, at least a minute).
    #[serde(default)]
    pub verify_timeout: Option<Duration>,
    /// With several clients, `threads` are the whole run's, each client its share (an elastic run:
    /// Dory's T threads in all); otherwise each client runs `threads` of its own.
    #[serde(default)]
    pub threads_in_all: bool,
    pub status_interval: Duration,
    pub create_schema: bool,
    pub drop_schema: bool,
    pub quiet: bool,
    /// The cluster the phases go to, and where its state lives.
    pub deployment: Option<PathBuf>,
    pub clusters_dir: PathBuf,
    /// What is done and measured on a deployment after each load.
    pub space_after_load: SpaceAfterLoad,
    pub no_monitor: bool,
    /// `--consistency-probe`: the probe beside the run phase, if any (docs/consistency.md).
    pub consistency_probe: Option<ProbeRequest>,
    /// `--fault`: faults injected into the deployment's nodes beside the run phase.
    #[serde(default)]
    pub faults: Vec<crate::fault::FaultRequest>,
    /// How it was asked for (passwords redacted), recorded in the result.
    pub command: Vec<String>,
    /// What a study running this request (the saturation search) asks every client of a
    /// distributed run to agree on beside the run itself: compared at each run's barrier.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub study: std::collections::BTreeMap<String, String>,
    /// `scalebench replay`: the run phase's operations are the capture's, at its times
    /// ([`crate::replay`]); from N clients, each replays the sessions that fall to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay_request::ReplayRequest>,
}

/// What a load on a deployment is followed by before its space is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpaceAfterLoad {
    /// Flushed and measured as inserted, then compacted and measured settled (the default).
    Settled,
    /// Flushed and measured as inserted only (`--no-compact`).
    AsInserted,
    /// Neither flushed nor measured: a load that only sets up what is measured next (an elastic
    /// step's records; elasticity reports request-set times, never space).
    NotMeasured,
}

/// `--consistency-probe RATE`, `--probe-delays LIST`, `--history FILE`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// Probe writes per second.
    pub rate: f64,
    /// Read delays after each acknowledgement, ms, ascending.
    pub delays_ms: Vec<f64>,
    /// Probe keys, rewritten in turn (each every `keys / rate` s: the period k-staleness counts in).
    pub keys: usize,
    pub history: Option<PathBuf>,
}

impl ProbeRequest {
    /// `rate` probe writes per second at PBS's delays, no history.
    pub fn new(rate: f64) -> Result<ProbeRequest, SessionError> {
        Self::check_rate(rate).map_err(|why| {
            SessionError::Usage(format!("invalid --consistency-probe '{rate}': {why}"))
        })?;
        Ok(ProbeRequest {
            rate,
            delays_ms: scalebench_measure::consistency::DEFAULT_DELAYS_MS.to_vec(),
            keys: scalebench_exec::consistency::DEFAULT_KEYS,
            history: None,
        })
    }

    /// `--probe-keys`: from 1 to 10000.
    pub fn check_keys(keys: usize) -> Result<(), &'static str> {
        if (1..=10_000).contains(&keys) {
            Ok(())
        } else {
            Err("expected a number of probe keys from 1 to 10000")
        }
    }

    /// From one write every 100 s to 10,000 a second.
    pub fn check_rate(rate: f64) -> Result<(), &'static str> {
        if rate.is_finite() && (0.01..=10_000.0).contains(&rate) {
            Ok(())
        } else {
            Err("expected probe writes per second, from 0.01 to 10000")
        }
    }
}

/// The probe's read delays after each acknowledgement: milliseconds, each from 0 to 60000,
/// ascending without repeats. Checked and put in order once, here, whether they come from
/// `--probe-delays` or an experiment's `procedure.probe_delays`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeDelays(Vec<f64>);

impl ProbeDelays {
    pub fn new(mut ms: Vec<f64>) -> Result<ProbeDelays, &'static str> {
        if ms
            .iter()
            .any(|d| !(d.is_finite() && (0.0..=60_000.0).contains(d)))
        {
            return Err("each delay from 0 to 60000 ms");
        }
        ms.sort_by(f64::total_cmp);
        ms.dedup();
        Ok(ProbeDelays(ms))
    }

    /// `--probe-delays`: milliseconds separated by commas ("0,0.5,1,10").
    pub fn parse(list: &str) -> Result<ProbeDelays, &'static str> {
        let ms = list
            .split(',')
            .map(|item| item.trim().parse::<f64>())
            .collect::<Result<Vec<f64>, _>>()
            .map_err(|_| "expected milliseconds separated by commas, such as 0,0.5,1,10")?;
        ProbeDelays::new(ms)
    }

    pub fn into_ms(self) -> Vec<f64> {
        self.0
    }
}

/// How many processes measure a request: some of its parts belong to one process. (Which one this
/// process is, is its [`crate::wiring::Launch`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processes {
    /// This process alone.
    One,
    /// Several client processes together, merged into one result (`--clients`, `--rendezvous`,
    /// `--ssh`, Kubernetes pods, an experiment's `sweep.clients`), or one of them. `launcher_here`:
    /// started by a launcher on this machine (`--clients N`), which relays the probe's writer
    /// (client 0) to the others' readers and acts the faults while they load, so
    /// `--consistency-probe` and `--fault` may run with them.
    Clients { launcher_here: bool },
}

impl Processes {
    /// Several client processes, their launcher on this machine or not.
    pub fn clients(launcher_here: bool) -> Processes {
        Processes::Clients { launcher_here }
    }
}

impl RunRequest {
    /// Every rule between the request's fields, in one place: checked by
    /// [`crate::phase::execute_phases`] (through [`crate::wiring::Launch::check`], which adds a
    /// client's own rule), by every launcher before a client starts, by the Kubernetes command
    /// before it writes manifests and by an experiment's `--dry-run`.
    pub fn check(
        &self,
        processes: Processes,
        phases: &[scalebench_exec::Phase],
    ) -> Result<(), SessionError> {
        let usage = |s: String| Err(SessionError::Usage(s));
        if let Processes::Clients { launcher_here } = processes {
            if !self.faults.is_empty() && !launcher_here {
                // Each client would pause nodes on its own.
                return usage(
                    "--fault acts from one process: with several clients, their launcher on this machine (--clients N), not with --rendezvous, --ssh, srun or Kubernetes"
                        .into(),
                );
            }
            if self.consistency_probe.is_some() && !launcher_here {
                // The writer's acknowledgements reach the other clients through a launcher here.
                return usage(
                    "--consistency-probe from several clients needs their launcher on this machine (--clients N): not with --rendezvous, --ssh, srun or Kubernetes"
                        .into(),
                );
            }
            if self.timing != Timing::Window {
                return usage(
                    "--timing init-to-cleanup times one client's life: run it without --clients, --rendezvous or sweep.clients"
                        .into(),
                );
            }
            if phases.len() > 1 {
                return usage(
                    "a distributed run runs one phase at a time: `load --clients N`, then `run --clients N` (not --load)"
                        .into(),
                );
            }
        }
        // A fault acts on the deployment's nodes: with --db the run measures another database.
        if let (Some(db), false, true) =
            (&self.db, self.faults.is_empty(), self.deployment.is_some())
        {
            return usage(format!(
                "--fault pauses a node of --deployment, while --db {} is what the run measures: give one of them",
                scalebench_binding::config::redact_unparsed(db)
            ));
        }
        // Two faults on one node would resume each other's pauses.
        if let Some((_, twice)) = self
            .faults
            .iter()
            .enumerate()
            .find(|(i, f)| self.faults[..*i].iter().any(|g| g.node == f.node))
        {
            return usage(format!(
                "--fault: node '{}' has two faults; give one per node",
                twice.node
            ));
        }
        Ok(())
    }

    /// A run on the default database (no `--db`, no deployment): a temporary SQLite file, which
    /// [`crate::phase::execute_phases`] loads before it runs.
    pub fn uses_default_db(&self) -> bool {
        self.db.is_none() && self.deployment.is_none()
    }

    /// A request for `workload` with every other value at its default.
    pub fn new(workload: &str) -> RunRequest {
        let default = |d: &str| parse_duration(d).expect("a valid default");
        RunRequest {
            workload: workload.to_string(),
            db: None,
            property_files: Vec::new(),
            properties: Vec::new(),
            deployment_options: Vec::new(),
            threads: None,
            concurrency: DEFAULT_CONCURRENCY,
            pipeline: 1,
            pace: Pace::Inherit,
            arrival: Arrival::Constant,
            timing: Timing::Window,
            duration: None,
            warmup: default(DEFAULT_WARMUP),
            operations: None,
            seed: None,
            interval: default(DEFAULT_INTERVAL),
            op_timeout: None,
            grace: default(DEFAULT_GRACE),
            connect_timeout: default(DEFAULT_CONNECT_TIMEOUT),
            batch_size: None,
            allow_files: Vec::new(),
            verify_writes: false,
            verify_timeout: None,
            request_set: None,
            request_set_threads: Default::default(),
            threads_in_all: false,
            status_interval: default(DEFAULT_STATUS_INTERVAL),
            create_schema: false,
            drop_schema: false,
            quiet: false,
            deployment: None,
            clusters_dir: PathBuf::from(DEFAULT_CLUSTERS_DIR),
            space_after_load: SpaceAfterLoad::Settled,
            no_monitor: false,
            consistency_probe: None,
            faults: Vec::new(),
            command: Vec::new(),
            study: Default::default(),
            replay: None,
        }
    }

    /// Adds a property override (as `-p KEY=VALUE`).
    /// A `-p KEY=VALUE` as a user gives it (an experiment's properties, a binding option).
    pub fn property(&mut self, key: &str, value: &str) -> &mut Self {
        self.properties.push(Assignment::new(key, value));
        self
    }

    /// A declared property set by scalebench itself: the name comes from its one declaration.
    pub fn set(
        &mut self,
        property: &scalebench_workload::declared::PropertyInfo,
        value: impl std::fmt::Display,
    ) -> &mut Self {
        self.property(property.name, &value.to_string())
    }
}

/// The options an experiment gives every load and run (`[procedure.options]`), typed: each is
/// checked when the file is read, as its command-line option would be.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Operations in flight on each connection (`--pipeline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// A changing rate instead of `target` (`ramp:from=100,to=1000,over=60s`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<String>,
    /// `constant` or `poisson`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    /// `window` or `init-to-cleanup` (measured runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_monitor: bool,
}

impl RunOptions {
    /// Sets these options on `r`; a bad value is named as `procedure.options.KEY`.
    pub fn apply(&self, r: &mut RunRequest) -> Result<(), String> {
        let named = |key: &str, given: String, e: String| {
            format!("invalid value '{given}' for procedure.options.{key}: {e}")
        };
        if let Some(t) = self.threads {
            r.threads = Some(
                parse_threads(&t.to_string()).map_err(|e| named("threads", t.to_string(), e))?,
            );
        }
        if let Some(c) = self.concurrency {
            r.concurrency = parse_concurrency(&c.to_string())
                .map_err(|e| named("concurrency", c.to_string(), e))?;
        }
        if let Some(p) = self.pipeline {
            r.pipeline =
                parse_pipeline(&p.to_string()).map_err(|e| named("pipeline", p.to_string(), e))?;
        }
        match (self.target, &self.rate_profile) {
            (Some(t), Some(p)) => {
                return Err(named(
                    "rate_profile",
                    p.clone(),
                    format!(
                        "a rate profile replaces procedure.options.target ({t}): give one of them"
                    ),
                ))
            }
            (Some(t), None) => {
                r.pace = Pace::of_target(t).map_err(|e| named("target", t.to_string(), e))?
            }
            (None, Some(p)) => {
                r.pace = Pace::Profile(
                    RateProfile::parse(p).map_err(|e| named("rate_profile", p.clone(), e))?,
                )
            }
            (None, None) => {}
        }
        if let Some(a) = &self.arrival {
            r.arrival = parse_arrival(a).map_err(|e| named("arrival", a.clone(), e))?;
        }
        if let Some(t) = &self.timing {
            r.timing = Timing::parse(t).map_err(|e| named("timing", t.clone(), e))?;
        }
        if let Some(b) = self.batch_size {
            r.batch_size = Some(
                parse_batch_size(&b.to_string())
                    .map_err(|e| named("batch_size", b.to_string(), e))?,
            );
        }
        if let Some(d) = &self.op_timeout {
            r.op_timeout = Some(parse_duration(d).map_err(|e| named("op_timeout", d.clone(), e))?);
        }
        if let Some(d) = &self.grace {
            r.grace = parse_duration(d).map_err(|e| named("grace", d.clone(), e))?;
        }
        if let Some(d) = &self.connect_timeout {
            r.connect_timeout =
                parse_connect_timeout(d).map_err(|e| named("connect_timeout", d.clone(), e))?;
        }
        if let Some(d) = &self.interval {
            r.interval = parse_interval(d).map_err(|e| named("interval", d.clone(), e))?;
        }
        if let Some(s) = self.seed {
            r.seed = Some(s);
        }
        r.no_monitor |= self.no_monitor;
        Ok(())
    }
}

/// A duration written as text ("30s", "200ms", "5m") in an experiment file: parsed once when the file
/// is read, written back as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl std::str::FromStr for Span {
    type Err = String;
    fn from_str(s: &str) -> Result<Span, String> {
        parse_duration(s).map(Span)
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Span, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e| serde::de::Error::custom(format!("invalid duration '{text}': {e}")))
    }
}

/// The longest duration any option or file takes: a month. Instants plus longer durations overflow
/// the clocks, and a run, a warm-up or a wait that long is a typo.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// A duration as every option and file writes it ("30s", "500ms", "5m"), at most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("expected a duration such as 30s, 500ms or 5m ({e})"))?;
    if d > MAX_DURATION {
        return Err("expected a duration of at most 30 days".into());
    }
    Ok(d)
}

/// A duration that must not be zero (`--verify-timeout`: a check of no time checks nothing).
pub fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("expected a duration above zero".into()),
        d => Ok(d),
    }
}

/// An interval of the time series: each one costs histograms per operation and worker, so not
/// shorter than a millisecond; and not longer than an hour.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    check_interval(parse_duration(s)?)
}

/// A listen address in the forms Prometheus' own `--web.listen-address` takes: `HOST:PORT` with a
/// name (`localhost:9464`, resolved, its first address), an IP (`127.0.0.1:9464`, `[::1]:9464`), or
/// `:PORT` for every interface.
pub fn parse_listen_address(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
    if let Some(port) = s.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|_| {
            format!("expected HOST:PORT or :PORT, with a port of 0 to 65535 (got '{port}')")
        })?;
        return Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)));
    }
    if let Ok(addr) = s.parse() {
        return Ok(addr);
    }
    if !s.contains(':') {
        return Err("expected HOST:PORT or :PORT".into());
    }
    s.to_socket_addrs()
        .map_err(|e| format!("cannot resolve it ({e})"))?
        .next()
        .ok_or_else(|| "it resolves to no address".to_string())
}

/// A connect timeout: positive (a zero timeout would fail every connect) and at most a month.
pub fn parse_connect_timeout(s: &str) -> Result<Duration, String> {
    check_connect_timeout(parse_duration(s)?)
}

/// The rule of [`parse_connect_timeout`], for values.
pub fn check_connect_timeout(d: Duration) -> Result<Duration, String> {
    if d.is_zero() {
        Err("expected a positive duration".into())
    } else {
        check_duration(d)
    }
}

/// The rule of [`parse_interval`], for intervals given as values.
pub fn check_interval(d: Duration) -> Result<Duration, String> {
    if (Duration::from_millis(1)..=Duration::from_secs(3600)).contains(&d) {
        Ok(d)
    } else {
        Err("expected an interval from 1ms to 1h".into())
    }
}

/// The rule of [`parse_duration`], for durations given as values (library callers).
pub fn check_duration(d: Duration) -> Result<Duration, String> {
    if d > MAX_DURATION {
        Err("expected a duration of at most 30 days".into())
    } else {
        Ok(d)
    }
}

fn parse_bounded(s: &str, min: u64, max: u64) -> Result<u64, String> {
    s.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("expected a whole number from {min} to {max}"))
}

/// `--consistency-probe RATE`: probe writes per second, in the range the probe can keep.
pub fn parse_probe_rate(s: &str) -> Result<f64, String> {
    let rate = s
        .parse::<f64>()
        .map_err(|_| format!("expected probe writes per second, not '{s}'"))?;
    ProbeRequest::check_rate(rate)
        .map(|()| rate)
        .map_err(str::to_string)
}

/// `--probe-keys N`: how many probe keys the writer takes in turn.
pub fn parse_probe_keys(s: &str) -> Result<usize, String> {
    let keys = s
        .parse::<usize>()
        .map_err(|_| format!("expected a number of probe keys, not '{s}'"))?;
    ProbeRequest::check_keys(keys)
        .map(|()| keys)
        .map_err(str::to_string)
}

/// `--probe-delays`' list as one value (clap would take a `Vec` for several).
pub fn parse_probe_delays(s: &str) -> Result<ProbeDelays, String> {
    ProbeDelays::parse(s).map_err(str::to_string)
}

pub fn parse_threads(s: &str) -> Result<u32, String> {
    parse_bounded(s, 1, MAX_THREADS).map(|n| n as u32)
}

pub fn parse_clients(s: &str) -> Result<u32, String> {
    parse_bounded(s, 1, MAX_CLIENTS).map(|n| n as u32)
}

pub fn parse_concurrency(s: &str) -> Result<u32, String> {
    parse_bounded(s, 1, MAX_IN_FLIGHT).map(|n| n as u32)
}

fn one() -> u32 {
    1
}

/// `--pipeline`: operations in flight on one connection, as memtier's (1 to 1,000).
pub fn parse_pipeline(s: &str) -> Result<u32, String> {
    parse_bounded(s, 1, MAX_PIPELINE).map(|n| n as u32)
}

pub fn parse_batch_size(s: &str) -> Result<u32, String> {
    parse_bounded(s, 1, MAX_BATCH as u64).map(|n| n as u32)
}

pub fn parse_request_set(s: &str) -> Result<u64, String> {
    parse_bounded(s, 1, u64::MAX)
}

/// A target rate the open-loop schedule can keep (0: none), by the one rule of
/// [`scalebench_workload::rate::Rate`].
pub fn check_target(ops_s: f64) -> Result<f64, String> {
    scalebench_workload::rate::Rate::or_zero(ops_s).map(|_| ops_s)
}

pub fn parse_arrival(s: &str) -> Result<Arrival, String> {
    [Arrival::Constant, Arrival::Poisson]
        .into_iter()
        .find(|a| a.name() == s)
        .ok_or_else(|| "expected constant or poisson".into())
}

/// A link speed in Mbit/s (`monitor --link-mbit`): finite, above 0.
pub fn parse_link_mbit(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|m| m.is_finite() && *m > 0.0)
        .ok_or_else(|| format!("'{s}': expected a link speed in Mbit/s, such as 1000"))
}

/// A process to watch, `NAME=PID`.
pub fn parse_process(s: &str) -> Result<(String, u32), String> {
    let (name, pid) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected NAME=PID"))?;
    let pid: u32 = pid
        .parse()
        .map_err(|_| format!("'{s}': PID '{pid}' is not a number"))?;
    if name.is_empty() {
        return Err(format!("'{s}': the name is empty"));
    }
    Ok((name.to_string(), pid))
}

/// A significance level (`compare --alpha`): strictly between 0 and 1.
pub fn parse_alpha(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("'{s}': expected a probability between 0 and 1 (exclusive)"))
}

/// A percentage, with or without `%`: finite, not negative.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    s.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| format!("'{s}': expected a percentage such as 5 or 5%"))
}

/// A percentage above 0 and below 100 (`saturate --resolution`, `--precision`), as a fraction.
pub fn parse_fraction_percent(s: &str) -> Result<f64, String> {
    match parse_percent(s)? {
        p if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(format!(
            "'{s}': expected a percentage above 0 and below 100"
        )),
    }
}

/// An operation rate above 0 (`saturate --start`).
pub fn parse_positive_rate(s: &str) -> Result<f64, String> {
    match Pace::parse_target(s)? {
        Pace::Open(rate) => Ok(rate.ops_s()),
        _ => Err("expected a rate above 0".into()),
    }
}

/// A saturation step factor: finite, above 1 (each step offers more), at most 100.
pub fn parse_step_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 1.0 && f <= 100.0 => Ok(f),
        _ => Err("expected a number above 1 and at most 100".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 40: the rules between a request's fields live in one `check`, which the launchers, the
    /// Kubernetes command, the experiment runner and `execute_phases` all call.
    #[test]
    fn one_check_holds_every_rule_between_fields() {
        use scalebench_exec::Phase;
        let refused = |r: &RunRequest, processes: Processes, phases: &[Phase]| match r
            .check(processes, phases)
        {
            Err(SessionError::Usage(why)) => why,
            other => panic!("{r:?} {processes:?}: {other:?}"),
        };
        let clients = |launcher_here| Processes::Clients { launcher_here };
        let run = [Phase::Run];
        let mut probed = RunRequest::new("a");
        probed.db = Some("null://".into());
        probed.consistency_probe = Some(ProbeRequest::new(10.0).unwrap());
        probed.check(Processes::One, &run).unwrap();
        assert!(refused(&probed, clients(false), &run).contains("needs their launcher"));
        probed.check(clients(true), &run).unwrap();

        // Issue 42: from several clients, each updates only its residue of the loaded keys, so
        // its own record of its writes judges every key it wrote.
        let mut verified = RunRequest::new("a");
        verified.db = Some("sqlite:///nowhere/checked-only.db".into());
        verified.verify_writes = true;
        verified.property("recordcount", "100");
        verified.check(Processes::One, &run).unwrap();
        verified.check(clients(false), &run).unwrap();
        let share = crate::clients::ClientShare::new(1, 3).unwrap();
        let partition = |r: &RunRequest| {
            crate::settings::Settings::checked(r, Some(share), Phase::Run)
                .unwrap()
                .workload
                .write_partition
        };
        assert_eq!(partition(&verified), (1, 3));
        verified.verify_writes = false;
        assert_eq!(
            partition(&verified),
            (0, 1),
            "without --verify-writes: every key"
        );

        let fault =
            |node: &str| crate::fault::FaultRequest::parse(&format!("pause:{node}")).unwrap();
        let mut paused = RunRequest::new("a");
        paused.deployment = Some("d.toml".into());
        paused.faults = vec![fault("node2")];
        paused.check(Processes::One, &run).unwrap();
        assert!(refused(&paused, clients(false), &run).contains("acts from one process"));
        paused.check(clients(true), &run).unwrap();
        paused.faults.push(fault("node2"));
        assert!(refused(&paused, Processes::One, &run).contains("has two faults"));
        paused.faults.pop();
        paused.db = Some("postgres://u:hunter2@h/db".into());
        let both = refused(&paused, Processes::One, &run);
        assert!(
            both.contains("give one of them") && !both.contains("hunter2"),
            "{both}"
        );

        let mut timed = RunRequest::new("a");
        timed.timing = Timing::InitToCleanup;
        timed.check(Processes::One, &run).unwrap();
        assert!(refused(&timed, clients(false), &run).contains("init-to-cleanup"));

        let plain = RunRequest::new("a");
        plain
            .check(Processes::One, &[Phase::Load, Phase::Run])
            .unwrap();
        let two = refused(&plain, clients(false), &[Phase::Load, Phase::Run]);
        assert!(two.contains("one phase at a time"), "{two}");

        // A client of a distributed run is one of several, and needs a database the others share.
        let mut client = RunRequest::new("a");
        let launch = crate::wiring::Launch::Share(crate::clients::ClientShare::new(0, 2).unwrap());
        assert_eq!(launch.processes(), clients(false));
        let why = match launch.check(&client, &run) {
            Err(SessionError::Usage(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("need a database they share"));
        client.db = Some("null://".into());
        launch.check(&client, &run).unwrap();
    }

    /// The listen forms Prometheus' flags take (issue 31, point 4).
    #[test]
    fn listen_addresses_take_prometheus_forms() {
        let a = parse_listen_address("localhost:9464").unwrap();
        assert!(a.ip().is_loopback() && a.port() == 9464, "{a}");
        assert_eq!(
            parse_listen_address(":9464").unwrap().to_string(),
            "0.0.0.0:9464"
        );
        assert_eq!(parse_listen_address("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(
            parse_listen_address("[::1]:9464").unwrap().to_string(),
            "[::1]:9464"
        );
        for bad in ["9464", ":99999", "localhost:port", ""] {
            assert!(parse_listen_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn options_apply_checked_values_and_name_a_bad_one() {
        let mut r = RunRequest::new("a");
        let o = RunOptions {
            concurrency: Some(4),
            pipeline: Some(2),
            op_timeout: Some("5ms".into()),
            arrival: Some("poisson".into()),
            no_monitor: true,
            ..Default::default()
        };
        o.apply(&mut r).unwrap();
        assert_eq!((r.concurrency, r.pipeline), (4, 2));
        assert_eq!(r.op_timeout, Some(Duration::from_millis(5)));
        assert_eq!(r.arrival, Arrival::Poisson);
        assert!(r.no_monitor);
        let bad = RunOptions {
            threads: Some(0),
            ..Default::default()
        };
        let e = bad.apply(&mut r).unwrap_err();
        assert!(
            e.contains("'0'") && e.contains("procedure.options.threads"),
            "{e}"
        );
        let bad = RunOptions {
            interval: Some("2h".into()),
            ..Default::default()
        };
        assert!(bad.apply(&mut r).unwrap_err().contains("1ms to 1h"));
    }

    #[test]
    fn spans_read_and_write_as_text() {
        for text in ["200ms", "1s", "30s", "10m"] {
            let span: Span = text.parse().unwrap();
            assert_eq!(span.to_string(), text);
        }
        assert!("soon".parse::<Span>().is_err());
    }

    /// An experiment's options pace a run as the flags do: 0 a closed loop, a rate an open
    /// loop, a profile a changing one; a target and a profile together are refused naming both,
    /// as clap refuses `--target` with `--rate-profile`.
    #[test]
    fn an_experiments_options_give_one_pace() {
        let paced = |target: Option<f64>, profile: Option<&str>| {
            let mut r = RunRequest::new("a");
            let options = RunOptions {
                target,
                rate_profile: profile.map(str::to_string),
                ..RunOptions::default()
            };
            options.apply(&mut r).map(|()| r.pace)
        };
        assert_eq!(paced(None, None), Ok(Pace::Inherit));
        assert_eq!(paced(Some(0.0), None), Ok(Pace::Closed));
        assert_eq!(paced(Some(50.0), None), Ok(Pace::of_target(50.0).unwrap()));
        assert!(matches!(
            paced(None, Some("hold:rate=5,for=2s")),
            Ok(Pace::Profile(_))
        ));
        let both = paced(Some(50.0), Some("hold:rate=5,for=2s")).unwrap_err();
        assert!(
            both.contains("procedure.options.rate_profile")
                && both.contains("procedure.options.target (50)"),
            "{both}"
        );
        let too_fast = paced(Some(2e9), None).unwrap_err();
        assert!(
            too_fast.contains("'2000000000' for procedure.options.target"),
            "{too_fast}"
        );
    }
}
