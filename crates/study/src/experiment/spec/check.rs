//! The rules an experiment file must keep, checked when it is read.

use scalebench_session::request::{ProbeDelays, ProbeRequest};

use super::*;

impl Experiment {
    /// Every rule an experiment file must keep, checked when it is read (the first broken one is
    /// the error); the consistency probe's request, which every measured run shares, built here
    /// once.
    pub(super) fn check(&mut self) -> Result<(), String> {
        self.check_size()?;
        self.procedure.probe = self.check_procedure()?;
        self.check_databases()?;
        self.check_names()?;
        self.check_sweep()
    }

    /// A valid name, repetitions that count, and a plan small enough to build.
    fn check_size(&self) -> Result<(), String> {
        if !(1..=1_000_000_000).contains(&self.miniature_divisor) {
            return Err(format!(
                "miniature_divisor = {}: use 1 to 1000000000",
                self.miniature_divisor
            ));
        }
        if !is_word(&self.name) {
            return Err(format!(
                "name {:?}: use letters, digits, '-', '_' and '.'",
                self.name
            ));
        }
        if self.repetitions == 0 || self.discard_first >= self.repetitions {
            return Err(format!(
                "repetitions = {}, discard_first = {}: at least one repetition must count",
                self.repetitions, self.discard_first
            ));
        }
        // The plan is materialised (and printed by --dry-run): bound it before anything is built.
        let runs = [
            self.databases.len() as u64,
            self.configurations.len().max(1) as u64,
            self.workloads.len() as u64,
            self.data_sizes.len().max(1) as u64,
            self.repetitions as u64,
        ]
        .into_iter()
        .chain(self.sweep.iter().map(|(_, v)| v.len() as u64))
        .try_fold(1u64, |acc, n| acc.checked_mul(n))
        .unwrap_or(u64::MAX);
        if runs > MAX_PLANNED_RUNS {
            return Err(format!(
                "databases x configurations x workloads x sweeps x repetitions = {} runs: at most {MAX_PLANNED_RUNS} per experiment",
                if runs == u64::MAX { "more than 2^64".to_string() } else { runs.to_string() }
            ));
        }
        Ok(())
    }

    /// The procedure's values: request sets, options, elastic steps, the failure share, the
    /// consistency probe (its request returned).
    fn check_procedure(&self) -> Result<Option<ProbeRequest>, String> {
        self.procedure.clients.check()?;
        if self.procedure.measure == Measure::Elastic
            && self.procedure.clients.launcher != ClientsLauncher::Local
        {
            return Err("measure = \"elastic\" runs its clients on this machine ([procedure.clients] launcher = \"local\"): its launcher follows every request set of theirs".into());
        }
        if self.procedure.request_set == Some(0) {
            return Err(
                "procedure.request_set = 0: a request set has at least one operation".into(),
            );
        }
        scalebench_exec::plan::check_set_threads(
            self.procedure.request_set_threads,
            self.procedure.request_set,
        )
        .map_err(|e| format!("procedure.request_set_threads = \"fixed\": {e}"))?;
        self.procedure
            .options
            .apply(&mut scalebench_session::request::RunRequest::new("a"))?;
        if !(1..=6).contains(&self.procedure.elastic.steps) {
            return Err(format!(
                "procedure.elastic.steps = {}: use 1 to 6",
                self.procedure.elastic.steps
            ));
        }
        if !(1..=1000).contains(&self.procedure.elastic.set_repeats) {
            return Err(format!(
                "procedure.elastic.set_repeats = {}: use 1 to 1000",
                self.procedure.elastic.set_repeats
            ));
        }
        let share = self.procedure.max_failed_share;
        if !(0.0..=1.0).contains(&share) {
            return Err(format!(
                "procedure.max_failed_share = {share}: expected a share between 0 and 1"
            ));
        }
        for t in &self.procedure.thresholds {
            t.parse::<scalebench_measure::thresholds::Threshold>()
                .map_err(|why| format!("procedure.thresholds: {why}"))?;
        }
        self.check_consistency()
    }

    /// The probe's rate and delays (its request returned), and the fault: a kind, a period,
    /// databases with deployments; both only beside measured runs.
    fn check_consistency(&self) -> Result<Option<ProbeRequest>, String> {
        let probing = self.procedure.consistency_probe.is_some() || self.fault.is_some();
        if probing && self.procedure.measure != Measure::Run {
            return Err("procedure.consistency_probe and [fault] go beside measured runs: use them with measure = \"run\"".into());
        }
        let probe = self.procedure.probe_request()?;
        let Some(fault) = &self.fault else {
            return Ok(probe);
        };
        scalebench_session::fault::FaultRequest::new(
            fault.kind,
            &fault.node,
            fault.every.0,
            fault.pause.0,
        )
        .map_err(|why| format!("[fault]: {why}"))?;
        for name in &fault.databases {
            match self.databases.iter().find(|d| &d.name == name) {
                None => return Err(format!("[fault]: no database {name:?} in the experiment")),
                Some(d) if d.deployment.is_none() => {
                    return Err(format!(
                        "[fault]: database {name:?} has no deployment: a fault pauses a deployment's node"
                    ))
                }
                Some(_) => {}
            }
        }
        for name in &fault.configurations {
            if !self.configurations.iter().any(|c| &c.name == name) {
                return Err(format!(
                    "[fault]: no configuration {name:?} in the experiment"
                ));
            }
        }
        if !self.databases.iter().any(|d| {
            fault.request_for(d, "").is_some()
                || fault
                    .configurations
                    .iter()
                    .any(|c| fault.request_for(d, c).is_some())
        }) {
            return Err(
                "[fault]: no database of the experiment has a deployment to pause a node of".into(),
            );
        }
        Ok(probe)
    }

    /// Each database has a URL or a deployment (one it needs to scale or snapshot), and each
    /// configuration is for databases the experiment has.
    fn check_databases(&self) -> Result<(), String> {
        if self.procedure.measure == Measure::Elastic {
            if let Some(d) = self.databases.iter().find(|d| d.deployment.is_none()) {
                return Err(format!(
                    "database {:?} has no deployment: measure = \"elastic\" scales a cluster",
                    d.name
                ));
            }
        }
        if let Some(d) = self
            .databases
            .iter()
            .find(|d| d.deployment.is_none() && !d.deployment_settings.is_empty())
        {
            return Err(format!(
                "database {:?} has deployment_settings but no deployment file to apply them to",
                d.name
            ));
        }
        for c in &self.configurations {
            for d in &c.databases {
                if !self.databases.iter().any(|x| &x.name == d) {
                    return Err(format!(
                        "configuration {:?} is for database {d:?}, which the experiment does not have",
                        c.name
                    ));
                }
            }
        }
        if self.databases.is_empty() || self.workloads.is_empty() {
            return Err(
                "an experiment needs at least one [[database]] and one [[workload]]".into(),
            );
        }
        for d in &self.databases {
            if d.db.is_some() == d.deployment.is_some() {
                return Err(format!(
                    "database {:?}: give either db (a URL) or deployment (a file)",
                    d.name
                ));
            }
            if matches!(
                self.procedure.load,
                LoadMode::Restore | LoadMode::RestoreEach
            ) && d.deployment.is_none()
            {
                return Err(format!(
                    "database {:?}: procedure.load = \"{}\" needs a deployment (snapshots)",
                    d.name, self.procedure.load
                ));
            }
        }
        Ok(())
    }

    /// Names of databases, configurations, workloads and data sizes: words, each once.
    fn check_names(&self) -> Result<(), String> {
        let names = |v: Vec<&str>, what: &str| -> Result<(), String> {
            for (i, n) in v.iter().enumerate() {
                if !is_word(n) {
                    return Err(format!(
                        "{what} name {n:?}: use letters, digits, '-', '_' and '.'"
                    ));
                }
                if v[..i].contains(n) {
                    return Err(format!("{what} name {n:?} appears twice"));
                }
            }
            Ok(())
        };
        names(
            self.databases.iter().map(|d| d.name.as_str()).collect(),
            "database",
        )?;
        names(
            self.configurations
                .iter()
                .map(|d| d.name.as_str())
                .collect(),
            "configuration",
        )?;
        names(
            self.workloads.iter().map(|d| d.name.as_str()).collect(),
            "workload",
        )?;
        names(
            self.data_sizes.iter().map(|d| d.name.as_str()).collect(),
            "data size",
        )?;
        Ok(())
    }

    /// What the swept values need beside them (each value was parsed when the file was read): data
    /// sizes only as [[data]], cluster sizes deployments to redeploy, operations elastic runs.
    fn check_sweep(&self) -> Result<(), String> {
        if self.sweep.contains_key(DATA_SIZE) {
            return Err(format!(
                "sweep.{DATA_SIZE}: the data sizes are the [[data]] entries; sweep their properties there"
            ));
        }
        if self.sweep.contains_key(CLUSTER_SIZE) {
            if let Some(d) = self.databases.iter().find(|d| d.deployment.is_none()) {
                return Err(format!(
                    "database {:?} has no deployment: sweep.{CLUSTER_SIZE} redeploys each database at every size",
                    d.name
                ));
            }
        }
        if self.sweep.contains_key(ACTION) && self.procedure.measure != Measure::Elastic {
            return Err(format!(
                "sweep.{ACTION}: operations are swept by measure = \"elastic\""
            ));
        }
        Ok(())
    }
}

impl Procedure {
    /// The consistency probe beside each measured run (`consistency_probe`, `probe_delays`,
    /// `probe_keys`): checked and built here only, once, when the file is read.
    fn probe_request(&self) -> Result<Option<ProbeRequest>, String> {
        let rate = self.consistency_probe;
        if let Some(rate) = rate {
            ProbeRequest::check_rate(rate)
                .map_err(|why| format!("procedure.consistency_probe = {rate}: {why}"))?;
        }
        let delays = match &self.probe_delays {
            Some(delays) => {
                let checked = ProbeDelays::new(delays.clone())
                    .map_err(|why| format!("procedure.probe_delays = {delays:?}: {why}"))?;
                if rate.is_none() {
                    return Err("procedure.probe_delays needs procedure.consistency_probe".into());
                }
                Some(checked)
            }
            None => None,
        };
        if let Some(keys) = self.probe_keys {
            ProbeRequest::check_keys(keys)
                .map_err(|why| format!("procedure.probe_keys = {keys}: {why}"))?;
            if rate.is_none() {
                return Err("procedure.probe_keys needs procedure.consistency_probe".into());
            }
        }
        let Some(rate) = rate else {
            return Ok(None);
        };
        let mut probe = ProbeRequest::new(rate).map_err(|e| e.to_string())?;
        if let Some(delays) = delays {
            probe.delays_ms = delays.into_ms();
        }
        if let Some(keys) = self.probe_keys {
            probe.keys = keys;
        }
        Ok(Some(probe))
    }
}
