//! Experiment files (TOML): databases x configurations x workloads x parameter sweeps x repetitions,
//! and the procedure around every run. [`Experiment::plan`] expands them into runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scalebench_workload::core_workload::loaded_data_identity;
use serde::{Deserialize, Serialize};

use crate::elastic::request::ScaleAction;
use scalebench_session::request::Span;

pub use scalebench_report::stored::{CLUSTER_SIZE, DATA_SIZE};

mod check;
mod sweep;
pub use sweep::{value_text, Sweep, SweepAxis, Swept, SweptValues, ACTION};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    #[serde(default = "one")]
    pub repetitions: u32,
    /// Repetitions left out of the statistics (the first ones, e.g. 3 of 13 as Lourenco did).
    #[serde(default)]
    pub discard_first: u32,
    #[serde(default)]
    pub procedure: Procedure,
    #[serde(rename = "database")]
    pub databases: Vec<DatabaseSpec>,
    #[serde(rename = "configuration", default)]
    pub configurations: Vec<Configuration>,
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadSpec>,
    /// Data sizes, an axis of their own (`[[data]]`: record size x record count, as Swaminathan's
    /// matrix): each run takes one, as the swept parameter `data`, and its properties.
    #[serde(rename = "data", default, skip_serializing_if = "Vec::is_empty")]
    pub data_sizes: Vec<DataSize>,
    /// Parameter -> values, parsed when the file is read. `threads`, `concurrency`, `target` and
    /// `clients` are the run's options, `nodes` the cluster size, `action` an elastic run's
    /// operation; every other key is a workload or binding property (`recordcount`,
    /// `cassandra.read_consistency`, ...).
    #[serde(default)]
    pub sweep: Sweep,
    /// A fault injected beside every measured run on the databases it names (`[fault]`, as
    /// `run --fault`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultSpec>,
    /// What `--miniature` divides record and operation counts by (default
    /// [`MINIATURE_DIVISOR`]): an experiment whose data is sized beyond its nodes' memory divides
    /// by more, so that its miniature stays a check of minutes.
    #[serde(default = "miniature_divisor")]
    pub miniature_divisor: i64,
}

fn miniature_divisor() -> i64 {
    MINIATURE_DIVISOR
}

/// `[fault]`: Jepsen's pause nemesis on one node of each named database's deployment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// `pause` (SIGSTOP, then SIGCONT).
    pub kind: scalebench_session::fault::FaultKind,
    /// The node's id in the deployment (`node3`).
    pub node: String,
    /// From one pause's start to the next one's (default 1s).
    #[serde(default = "fault_every")]
    pub every: Span,
    /// How long each pause lasts (default 200ms).
    #[serde(default = "fault_pause", rename = "for")]
    pub pause: Span,
    /// The databases it acts on (default: every database with a deployment).
    #[serde(default)]
    pub databases: Vec<String>,
    /// The configurations it acts on (default: every one), so that one cell measures a
    /// configuration healthy and another with the fault.
    #[serde(default)]
    pub configurations: Vec<String>,
}

fn fault_every() -> Span {
    Span(scalebench_session::fault::DEFAULT_EVERY)
}

fn fault_pause() -> Span {
    Span(scalebench_session::fault::DEFAULT_PAUSE)
}

impl FaultSpec {
    /// The fault for a run of `configuration` on `database`, if it acts there.
    pub fn request_for(
        &self,
        database: &DatabaseSpec,
        configuration: &str,
    ) -> Option<scalebench_session::fault::FaultRequest> {
        let named = (self.databases.is_empty() || self.databases.contains(&database.name))
            && (self.configurations.is_empty()
                || self.configurations.iter().any(|c| c == configuration));
        if !named || database.deployment.is_none() {
            return None;
        }
        // Checked when the file was read (a miniature's shorter period keeps it valid).
        scalebench_session::fault::FaultRequest::new(
            self.kind,
            &self.node,
            self.every.0,
            self.pause.0,
        )
        .ok()
    }
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Procedure {
    /// `each-run` (drop, create and load before every run), `once` (load when the data changes:
    /// database, configuration, workload or a property other than threads/concurrency/target),
    /// `restore` (as `once`, then a snapshot; restored before a run when earlier runs inserted), or
    /// `restore-each` (as `restore`, the snapshot put back before every measured run that follows a
    /// run that wrote: Wegert's "vor jeder einzelnen Messung", every run starts on the data as loaded,
    /// never on data earlier runs updated and left uncompacted; after reads it is as loaded already);
    /// the restoring modes need deployments.
    pub load: LoadMode,
    /// Flush/compact after a load (deployments).
    pub compact: bool,
    /// Drop the page cache before each run (needs root; otherwise a warning).
    pub drop_caches: bool,
    /// Set by `--miniature`: the cache is dropped before the first run only. Dropping the whole
    /// machine's page cache (and syncing its disks) before each of a miniature's runs slows
    /// everything else on the machine, for figures that mean nothing.
    #[serde(skip)]
    pub drop_caches_once: bool,
    pub warmup: Span,
    pub duration: Span,
    /// Options of every load and run, typed (`[procedure.options]`: batch_size = 100, ...).
    pub options: scalebench_session::request::RunOptions,
    /// Loads and runs in back-to-back request sets of this many operations, each set timed (Dory's
    /// R; `--request-set`).
    pub request_set: Option<u64>,
    /// How a set's operations go to the threads: `shared` (whichever is free) or `fixed` (each
    /// thread R / T of every set, bound to one node where the binding can: Dory's client;
    /// `--request-set-threads`).
    pub request_set_threads: scalebench_exec::SetThreads,
    /// `run` (a load as the procedure says, then the measured run), `load` (each run is a fresh
    /// load, measured: throughput = records / wall time, as Lourenco measured) or `elastic` (each run
    /// is `scalebench elastic` on a freshly deployed cluster, see `[procedure.elastic]`).
    pub measure: Measure,
    /// With `measure = "elastic"`: the scaling transition (as `scalebench elastic`'s options).
    pub elastic: ElasticProcedure,
    /// How a cell's clients (`clients = N`) are started.
    pub clients: ClientsProcedure,
    /// A run whose share of failed operations is above this is recorded as `failures`, kept out of
    /// the cell's statistics and named in every summary (default 0.01: 1%).
    pub max_failed_share: f64,
    /// Thresholds on each run's own figures (`run --threshold`'s kind, docs/thresholds.md): a run
    /// that breaks one is recorded with its verdicts and makes the experiment exit 4.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<String>,
    /// Probe writes per second of the consistency probe beside every measured run (as `run
    /// --consistency-probe`); none by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency_probe: Option<f64>,
    /// The probe's read delays in ms (default PBS's: 0, 0.1, 0.5, 1, 2, 5, 10, 50, 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_delays: Option<Vec<f64>>,
    /// The probe's keys, rewritten in turn (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_keys: Option<usize>,
    /// The consistency probe's request of every measured run, built from the three fields above
    /// once, when the file is read.
    #[serde(skip)]
    pub probe: Option<scalebench_session::request::ProbeRequest>,
}

/// `[procedure.clients]`: how the clients of a cell with `clients = N` (a sweep or a
/// configuration's run option) are started: N processes on this machine (`local`, the default,
/// each pinned to a CPU of `cpus` if given), one per host over ssh (`ssh`), or N tasks of a Slurm
/// job step (`srun`); the last two meet in etcd.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientsProcedure {
    pub launcher: ClientsLauncher,
    /// `ssh`: client i on `hosts[i % len]`.
    pub hosts: Vec<String>,
    /// `ssh`, `srun`: where the clients meet, `etcd://HOST:PORT/PREFIX`; each run meets under a
    /// prefix of its own below it.
    pub rendezvous: Option<String>,
    /// `ssh`: the ssh program and its options (default `ssh -o BatchMode=yes`).
    pub ssh_command: Option<String>,
    /// `srun`: srun and its options (default `srun`; `-n N` is added).
    pub srun_command: Option<String>,
    /// `ssh`, `srun`: scalebench on the hosts or nodes (default `scalebench`).
    pub remote_program: Option<String>,
    /// `local`: client i runs on CPU `cpus[i % len]` alone.
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientsLauncher {
    #[default]
    Local,
    Ssh,
    Srun,
}

impl ClientsProcedure {
    /// The launcher's settings checked (hosts and a rendezvous for ssh; none of them for local).
    pub fn check(&self) -> Result<(), String> {
        let rendezvous = |launcher: &str| {
            let url = self.rendezvous.as_deref().ok_or(format!(
                "[procedure.clients] launcher = \"{launcher}\" needs a rendezvous (etcd://HOST:PORT/PREFIX)"
            ))?;
            scalebench_distributed::etcd::RendezvousUrl::parse(url)
                .map(|_| ())
                .map_err(|e| format!("[procedure.clients] rendezvous: {e}"))
        };
        let only = |what: &str, set: bool, launcher: &str| {
            if set {
                Err(format!(
                    "[procedure.clients] {what} needs launcher = \"{launcher}\""
                ))
            } else {
                Ok(())
            }
        };
        match self.launcher {
            ClientsLauncher::Ssh => {
                if self.hosts.is_empty() {
                    return Err("[procedure.clients] launcher = \"ssh\" needs hosts".into());
                }
                rendezvous("ssh")?;
                if !self.cpus.is_empty() {
                    return Err("[procedure.clients] cpus pins local clients; ssh clients are placed by their hosts".into());
                }
                only("srun_command", self.srun_command.is_some(), "srun")?;
            }
            ClientsLauncher::Srun => {
                rendezvous("srun")?;
                only("hosts", !self.hosts.is_empty(), "ssh")?;
                only("ssh_command", self.ssh_command.is_some(), "ssh")?;
                only("cpus", !self.cpus.is_empty(), "local")?;
            }
            ClientsLauncher::Local => {
                if !self.hosts.is_empty() || self.rendezvous.is_some() {
                    return Err(
                        "[procedure.clients] hosts and rendezvous need launcher = \"ssh\" (or rendezvous \"srun\")".into(),
                    );
                }
                only("srun_command", self.srun_command.is_some(), "srun")?;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ElasticProcedure {
    #[serde(with = "crate::elastic::request::action_text")]
    pub action: ScaleAction,
    pub baseline: Span,
    pub after: Span,
    pub stable_sets: u32,
    pub stable_timeout: Span,
    /// Runs of each request set that make one point of the timeline (Dory ran each set 10 times).
    pub set_repeats: u32,
    /// The time axis of the elasticity score (`s`, or `min` as Dory's charts).
    #[serde(with = "time_axis_text")]
    pub score_time_axis: scalebench_elastic::TimeAxis,
    /// Transitions per run (`scalebench elastic --steps`): with `double`, Dory's procedure: the
    /// cluster, the records, the threads and the set size doubled at each step, and the final size's
    /// stable state measured too, so the run yields the study's table per size and its scalability.
    pub steps: u32,
    /// A service-level file (relative to the experiment file): each run's events are judged against
    /// it, as `scalebench elastic --sla` does; a run that missed it is recorded so and makes the
    /// experiment exit 4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_level: Option<PathBuf>,
}

impl Default for ElasticProcedure {
    fn default() -> Self {
        use crate::elastic::request::*;
        let span = |d: &str| d.parse().expect("a valid default");
        ElasticProcedure {
            action: parse_action(DEFAULT_ACTION).expect("a valid default"),
            baseline: span(DEFAULT_BASELINE),
            after: span(DEFAULT_AFTER),
            stable_sets: DEFAULT_STABLE_SETS,
            stable_timeout: span(DEFAULT_STABLE_TIMEOUT),
            set_repeats: DEFAULT_SET_REPEATS,
            score_time_axis: scalebench_elastic::TimeAxis::Seconds,
            steps: 1,
            service_level: None,
        }
    }
}

/// `score_time_axis` as its text, checked when the file is read.
mod time_axis_text {
    use scalebench_elastic::TimeAxis;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(axis: &TimeAxis, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(axis.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimeAxis, D::Error> {
        let text = String::deserialize(d)?;
        TimeAxis::parse(&text)
            .map_err(|e| serde::de::Error::custom(format!("score_time_axis = {text:?}: {e}")))
    }
}

/// What each run of an experiment measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// A load as the procedure says, then the measured run.
    Run,
    /// A fresh load, measured (throughput = records / wall time, as Lourenco measured).
    Load,
    /// `scalebench elastic` on a freshly deployed cluster (`[procedure.elastic]`).
    Elastic,
}

/// When an experiment loads its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadMode {
    /// Drop, create and load before every run.
    EachRun,
    /// Load when the data changes.
    Once,
    /// As once, then a snapshot, restored before a run that follows inserts (deployments).
    Restore,
    /// As restore, the snapshot put back before every measured run that follows one that wrote.
    RestoreEach,
}

impl std::fmt::Display for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Measure::Run => "run",
            Measure::Load => "load",
            Measure::Elastic => "elastic",
        })
    }
}

impl std::fmt::Display for LoadMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LoadMode::EachRun => "each-run",
            LoadMode::Once => "once",
            LoadMode::Restore => "restore",
            LoadMode::RestoreEach => "restore-each",
        })
    }
}

impl Default for Procedure {
    fn default() -> Self {
        Procedure {
            load: LoadMode::EachRun,
            compact: true,
            drop_caches: false,
            drop_caches_once: false,
            warmup: scalebench_session::request::DEFAULT_WARMUP
                .parse()
                .expect("a valid default"),
            duration: "10s".parse().expect("a valid default"),
            options: Default::default(),
            request_set: None,
            request_set_threads: Default::default(),
            measure: Measure::Run,
            elastic: ElasticProcedure::default(),
            clients: ClientsProcedure::default(),
            max_failed_share: scalebench_measure::result::DEFAULT_MAX_FAILED_SHARE,
            thresholds: Vec::new(),
            consistency_probe: None,
            probe_delays: None,
            probe_keys: None,
            probe: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSpec {
    pub name: String,
    /// A database URL, or...
    pub db: Option<String>,
    /// ... a deployment file (relative to the experiment file), started when needed.
    pub deployment: Option<PathBuf>,
    /// Workload and binding properties of this database's runs (before the configuration's): what a
    /// study set per database, e.g. Swaminathan's scan lengths (zipfian but on Cassandra), or Dory's
    /// threads = nodes at start (`threadcount`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, toml::Value>,
    /// Settings merged into the deployment file's own keys for every run of this database (under a
    /// configuration's own), on the same cluster for configurations that change nothing else:
    /// what a study set per database, e.g. a memory limit on every node (`{ memory = "1GiB" }`).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub deployment_settings: toml::Table,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Configuration {
    pub name: String,
    /// Workload and binding properties.
    #[serde(default)]
    pub properties: BTreeMap<String, toml::Value>,
    /// Server settings merged into the deployment's `[server]` (the cluster is redeployed).
    #[serde(default)]
    pub server: BTreeMap<String, toml::Value>,
    /// Settings merged into the deployment file's own keys and sections (the cluster is
    /// redeployed), e.g. `{ cassandra = { commitlog_sync = "group" } }`.
    #[serde(default)]
    pub deployment: toml::Table,
    /// The databases this configuration is for (default: all). A database no configuration is for
    /// runs once, as configuration `default`.
    #[serde(default)]
    pub databases: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    /// Built-in workload (a..f) or a property file (relative to the experiment file).
    pub workload: String,
    #[serde(default)]
    pub properties: BTreeMap<String, toml::Value>,
}

/// A data size of the experiment: its name and the properties that make it (`recordcount`,
/// `fieldcount`, `fieldlength`, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSize {
    pub name: String,
    pub properties: BTreeMap<String, toml::Value>,
}

/// One measured run of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedRun {
    /// Identifies the cell: database, configuration, workload and swept values.
    pub cell: String,
    pub repetition: u32,
    pub database: String,
    pub configuration: String,
    pub workload: String,
    /// Swept parameter -> value, in key order.
    pub params: SweptValues,
    /// Identifies the data the run needs: runs with the same key share a load.
    pub data_key: String,
}

/// Runs one experiment may plan: a week of 6-second runs, far beyond any study's matrix.
const MAX_PLANNED_RUNS: u64 = 100_000;

/// A name fit for files and cells: letters, digits, '-', '_' and '.'.
fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// What `--miniature` divides record and operation counts by (down to at least 100).
pub const MINIATURE_DIVISOR: i64 = 100;

impl Experiment {
    /// The experiment in miniature (`scalebench experiment --miniature`): the same matrix, databases,
    /// deployments and procedure, with one repetition (none discarded), a 200 ms warm-up and 1 s runs (3 s in request sets), record, operation and request-set counts divided by
    /// [`MINIATURE_DIVISOR`] (at least 100) and, for elastic runs, 500 ms intervals (at most), a 3 s baseline, 2 s after, at
    /// most 2 runs of each request set, stability over at most 3 steps and at most 10 s to stabilise. It checks that an example runs for real, end to end, in
    /// minutes; its numbers mean nothing.
    pub fn miniature(&mut self) {
        self.name = format!("{}-miniature", self.name);
        // One repetition: a miniature checks that every cell runs and renders, which a second
        // repetition of each cell would check again at twice the time.
        self.repetitions = 1;
        self.discard_first = 0;
        let p = &mut self.procedure;
        p.drop_caches_once = true;
        let span = |d: &str| -> Span { d.parse().expect("a valid duration") };
        // A shorter warm-up, none where the procedure has none (init-to-cleanup timing needs none).
        p.warmup = Span(p.warmup.0.min(span("200ms").0));
        // Timed request sets need whole sets in the run: a 3-node Cassandra ring here completes about
        // 160 of Dory's documents a second, 1.6 sets of the miniature's 100 (none in one CI run, two
        // examples at a time), so a run in sets lasts 3 s.
        let in_sets = p.request_set.is_some() && p.measure == Measure::Run;
        p.duration = span(if in_sets { "3s" } else { "1s" });
        p.elastic.baseline = span("3s");
        // Elastic runs on an open loop have a timeline point per interval, and Dory's rule waits for
        // 2X + 1 of them before the event: at 1 s (the operations example's) the 3 s baseline took
        // 7 s; at 500 ms, 3.5 s.
        if p.measure == Measure::Elastic {
            let half = span("500ms");
            // A bad value stays, to be named as the file's.
            let longer = match p.options.interval.as_deref().map(str::parse::<Span>) {
                None => true,
                Some(Ok(given)) => given.0 > half.0,
                Some(Err(_)) => false,
            };
            if longer {
                p.options.interval = Some("500ms".into());
            }
        }
        p.elastic.after = span("2s");
        // Bounds each wait for stability. Dory's rule holds only once the request-set times vary as
        // little as on the baseline: after a node joined they often vary more for good (a Redis
        // cluster of 4 here), and the wait runs to its end; the miniature's scores mean nothing.
        // Three waits per database (baseline, transition, final size): 10 s each keeps Dory's
        // miniature in minutes. A doubling (Dory's procedure, its table of sizes) waits 30 s: the
        // transition's wait covers the data in motion too, and HBase's regions, moved within 2 s of
        // the new region server here (also beside two busy loops), still moved after 10 s in one
        // CI run. Operations swept under a service level keep 10 s: their waits often run to the
        // end (30 s took the operations example from 3.1 to 6.5 minutes).
        let doubles = p.elastic.action == ScaleAction::Double && !self.sweep.contains_key(ACTION);
        p.elastic.stable_timeout = span(if doubles { "30s" } else { "10s" });
        // A timeline point is set_repeats sets of R operations: fewer and smaller, so that Dory's
        // rule (about 60 points for 5 steps in a row below the median step) has its points in seconds.
        p.elastic.set_repeats = p.elastic.set_repeats.min(2);
        // Dory's rule over at most 3 steps in a row: the baseline needs 2X + 1 points and the load
        // goes on X points after stability, so with 5 each run of the operations example measured
        // 11 s of baseline and 5 s after (3 s and 2 s asked): 7 and 3 now.
        p.elastic.stable_sets = p.elastic.stable_sets.min(3);
        // One doubling (with `double`, and the final size measured): the sizes table, in minutes.
        p.elastic.steps = p.elastic.steps.min(1);
        let divisor = self.miniature_divisor;
        if let Some(r) = &mut p.request_set {
            *r = (*r / divisor as u64).max(100).min(*r);
        }
        // Two pauses or more within the second a run lasts.
        if let Some(f) = &mut self.fault {
            let every = f.every.0.min(std::time::Duration::from_millis(400));
            let pause = f.pause.0.min(every * 2 / 5);
            // Only a period that still makes a valid fault (a file's tiny one stays as it is).
            if scalebench_session::fault::FaultRequest::new(f.kind, &f.node, every, pause).is_ok() {
                (f.every.0, f.pause.0) = (every, pause);
            }
        }
        let small = |v: &mut toml::Value| {
            if let toml::Value::Integer(n) = v {
                *n = (*n / divisor).max(100).min(*n);
            }
        };
        let counts = ["recordcount", "operationcount", "insertcount"];
        let maps = self
            .workloads
            .iter_mut()
            .map(|w| &mut w.properties)
            .chain(self.configurations.iter_mut().map(|c| &mut c.properties))
            .chain(self.data_sizes.iter_mut().map(|d| &mut d.properties))
            .chain(self.databases.iter_mut().map(|d| &mut d.properties));
        for m in maps {
            for k in counts {
                if let Some(v) = m.get_mut(k) {
                    small(v);
                }
            }
        }
        for k in counts {
            self.sweep.rewrite_property(k, small);
        }
    }

    /// The deployment a configuration runs against: `d` with the configuration's `[server]`
    /// settings and deployment keys merged in, checked as a deployment file is.
    /// `config` with `database`'s deployment settings under its own.
    pub fn with_database_settings(
        database: &DatabaseSpec,
        config: &Configuration,
    ) -> Configuration {
        let mut merged = database.deployment_settings.clone();
        merge_tables(&mut merged, &config.deployment);
        Configuration {
            deployment: merged,
            ..config.clone()
        }
    }

    pub fn derived_deployment(
        d: &scalebench_deploy::Deployment,
        config: &Configuration,
    ) -> Result<scalebench_deploy::Deployment, String> {
        let mut d = d.clone();
        d.server.extend(config.server.clone());
        let mut table = toml::Table::try_from(&d).map_err(|e| e.to_string())?;
        merge_tables(&mut table, &config.deployment);
        let text = toml::to_string(&table).map_err(|e| e.to_string())?;
        scalebench_deploy::Deployment::from_toml(&text)
            .map_err(|e| format!("configuration {:?}: {e}", config.name))
    }

    pub fn from_file(path: &Path) -> Result<Experiment, String> {
        // An experiment file is small: never read a device or a pipe, nor more than 4 MiB.
        let text = scalebench_measure::files::read_bounded(path, 4 << 20)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut e = Self::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        e.read_workload_files(path.parent().unwrap_or(Path::new(".")))?;
        Ok(e)
    }

    /// Each workload file (relative to the experiment's directory) checked before anything runs,
    /// and its record and operation counts made the workload's properties where the experiment
    /// sets none: the same values (the experiment's are applied over the file's), which a
    /// miniature then divides as it divides the experiment's own.
    fn read_workload_files(&mut self, base: &Path) -> Result<(), String> {
        use scalebench_workload::file::{is_workload_file, WorkloadFile};
        for w in &mut self.workloads {
            if !is_workload_file(&w.workload) {
                continue;
            }
            let file = WorkloadFile::read(&base.join(&w.workload))
                .map_err(|e| format!("workload '{}': {e}", w.name))?;
            for (k, v) in file.properties() {
                if ["recordcount", "operationcount"].contains(&k.as_str())
                    && !w.properties.contains_key(&k)
                {
                    let n: i64 = v
                        .parse()
                        .map_err(|_| format!("workload '{}': {k}={v}", w.name))?;
                    w.properties.insert(k, toml::Value::Integer(n));
                }
            }
        }
        Ok(())
    }

    pub fn from_toml(text: &str) -> Result<Experiment, String> {
        let mut e: Experiment = toml::from_str(text).map_err(|e| {
            let first = e.message().lines().next().unwrap_or("invalid TOML");
            if first.starts_with("unknown field `args`") {
                // Command-line text was passed through as it was, and clashed with what the runner adds.
                "procedure.args is replaced by [procedure.options], typed: threads, concurrency, target, arrival, batch_size, op_timeout, grace, interval, seed, no_monitor".to_string()
            } else {
                first.to_string()
            }
        })?;
        if e.configurations.is_empty() {
            e.configurations.push(Configuration {
                name: "default".into(),
                ..Default::default()
            });
        }
        e.check()?;
        Ok(e)
    }

    /// Every run, in execution order: for each database, configuration, workload and combination of
    /// swept values (first key slowest), the repetitions. A swept cluster size is the slowest of all
    /// within a database: each size is deployed once.
    /// What a run measures: its database, configuration and workload as the file defines them, its
    /// swept values and the procedure. A run recorded under another definition is measured again, so
    /// one statistic never mixes runs of different definitions (repetition counts are not part of it).
    pub fn run_definition(&self, run: &PlannedRun) -> serde_json::Value {
        serde_json::json!({
            "database": self.databases.iter().find(|d| d.name == run.database),
            "configuration": self.configurations.iter().find(|c| c.name == run.configuration),
            "workload": self.workloads.iter().find(|w| w.name == run.workload),
            "params": run.params,
            "procedure": self.procedure,
        })
    }

    pub fn plan(&self) -> Vec<PlannedRun> {
        // What each workload loads, worked out once (not once per run).
        let loaded: Vec<String> = self.workloads.iter().map(loaded_data).collect();
        let mut combos: Vec<SweptValues> = vec![SweptValues::default()];
        // The data sizes first (the slowest axis after the workload), then the sweep.
        let data_name = DATA_SIZE.to_string();
        let data_axis: Vec<Swept> = self
            .data_sizes
            .iter()
            .map(|d| Swept::data_size(&d.name))
            .collect();
        let axes = (!data_axis.is_empty())
            .then_some((&data_name, data_axis.as_slice()))
            .into_iter()
            .chain(self.sweep.iter());
        for (k, values) in axes {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(k, v.clone());
                        c
                    })
                })
                .collect();
        }
        let mut runs = Vec::new();
        let default = Configuration {
            name: "default".into(),
            ..Default::default()
        };
        for d in &self.databases {
            let mut configs: Vec<&Configuration> = self
                .configurations
                .iter()
                .filter(|c| c.databases.is_empty() || c.databases.contains(&d.name))
                .collect();
            if configs.is_empty() {
                configs.push(&default);
            }
            for c in configs {
                let first = runs.len();
                for (w, loaded) in self.workloads.iter().zip(&loaded) {
                    for params in &combos {
                        let swept: Vec<String> = params
                            .iter()
                            .map(|(k, v)| format!("{k}={}", v.text()))
                            .collect();
                        let data: Vec<String> = params
                            .iter()
                            .filter(|(_, v)| v.shapes_loaded_data())
                            .map(|(k, v)| format!("{k}={}", v.text()))
                            .collect();
                        let cell = format!(
                            "{}/{}/{}{}{}",
                            d.name,
                            c.name,
                            w.name,
                            if swept.is_empty() { "" } else { "/" },
                            swept.join(",")
                        );
                        let data_key =
                            format!("{}/{}/{}/{}", d.name, c.name, loaded, data.join(","));
                        for repetition in 1..=self.repetitions {
                            runs.push(PlannedRun {
                                cell: cell.clone(),
                                repetition,
                                database: d.name.clone(),
                                configuration: c.name.clone(),
                                workload: w.name.clone(),
                                params: params.clone(),
                                data_key: data_key.clone(),
                            });
                        }
                    }
                }
                // Runs on the same data follow each other: one load serves them all, as Wegert
                // loaded once per configuration and ran R, U, I, M on it (studies.md, study 2).
                // Otherwise the order above.
                let mut order: std::collections::HashMap<String, usize> = Default::default();
                for r in &runs[first..] {
                    let next = order.len();
                    order.entry(r.data_key.clone()).or_insert(next);
                }
                // On data kept between runs, runs that insert come last: reads and updates then run
                // on the records as loaded, never on a set earlier inserts have grown (Dijkshoorn's
                // UPDATE and SELECT measured the loaded table).
                let kept = matches!(self.procedure.load, LoadMode::Once | LoadMode::Restore);
                let inserting = |r: &PlannedRun| {
                    kept && self
                        .workloads
                        .iter()
                        .find(|w| w.name == r.workload)
                        .is_some_and(may_insert)
                };
                runs[first..].sort_by_key(|r| (order[&r.data_key], inserting(r)));
            }
        }
        if self.sweep.contains_key(CLUSTER_SIZE) {
            // A stable sort: within a database and size, the order above.
            let database =
                |r: &PlannedRun| self.databases.iter().position(|d| d.name == r.database);
            runs.sort_by_key(|r| (database(r), r.params.nodes()));
        }
        runs
    }
}

/// Which cells of the matrix an experiment runs (`experiment --cells`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cells {
    /// Every cell of the matrix.
    #[default]
    All,
    /// A subset in which every value of every axis (database, configuration, workload, each
    /// swept value, each data size) runs at least once: "each-choice" coverage, the weakest of
    /// the combinatorial test designs (Ammann & Offutt, Introduction to Software Testing, 6.2).
    /// Walking the plan in its order, a cell is kept when it brings a value no kept cell had, so
    /// kept cells still share their loads. A check that every part of a file runs, in a fraction of
    /// the time; never a result to compare cells by (most combinations are left out).
    EachValue,
}

impl std::str::FromStr for Cells {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Cells::All),
            "each-value" => Ok(Cells::EachValue),
            other => Err(format!("cells {other:?}: expected all or each-value")),
        }
    }
}

impl Cells {
    /// The runs of `plan` this selection keeps, in the plan's order (every repetition of a kept
    /// cell).
    pub fn select(self, plan: Vec<PlannedRun>) -> Vec<PlannedRun> {
        if self == Cells::All {
            return plan;
        }
        let mut covered: std::collections::HashSet<(String, String)> = Default::default();
        let mut kept: std::collections::HashSet<String> = Default::default();
        plan.into_iter()
            .filter(|r| {
                if kept.contains(&r.cell) {
                    return true;
                }
                let values = [
                    ("database", &r.database),
                    ("configuration", &r.configuration),
                    ("workload", &r.workload),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .chain(r.params.iter().map(|(k, v)| (k.clone(), v.text())))
                .collect::<Vec<_>>();
                let new = values.iter().any(|v| !covered.contains(v));
                if new {
                    covered.extend(values);
                    kept.insert(r.cell.clone());
                }
                new
            })
            .collect()
    }
}

/// The records a workload loads, as text: a built-in workload's properties with the workload's own,
/// less those that shape only the run phase; a property file by its path (its contents are read when
/// it runs) with the workload's load-shaping properties.
fn loaded_data(w: &WorkloadSpec) -> String {
    let mut p = scalebench_workload::Properties::new();
    let base = match scalebench_workload::builtin::builtin_workload(&w.workload) {
        Some((_, text)) => {
            p.load_str(&text, &w.workload)
                .expect("built-in workloads parse (tested in the workload crate)");
            String::new()
        }
        None => format!("file {};", w.workload),
    };
    for (k, v) in &w.properties {
        p.set(k, &value_text(v), "experiment");
    }
    let identity: Vec<String> = loaded_data_identity(&p)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{base}{}", identity.join(";"))
}

/// Whether a workload's run phase may insert records: a built-in workload's mix with its properties;
/// a property file (read when it runs) may.
fn may_insert(w: &WorkloadSpec) -> bool {
    let Some((_, text)) = scalebench_workload::builtin::builtin_workload(&w.workload) else {
        return true;
    };
    let mut p = scalebench_workload::Properties::new();
    if p.load_str(&text, &w.workload).is_err() {
        return true;
    }
    for (k, v) in &w.properties {
        p.set(k, &value_text(v), "experiment");
    }
    p.get("insertproportion")
        .is_some_and(|v| v.parse::<f64>().map_or(true, |x| x > 0.0))
}

/// Merges `from` into `into`: tables key by key, other values replaced.
fn merge_tables(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_tables(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests;
