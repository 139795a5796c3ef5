//! The clusters an experiment deploys: brought up when a run needs them, locked while the
//! experiment runs, stopped at its end, and never one that someone else started (issue 62: an
//! elastic experiment took over a cluster the user had brought up with `cluster up`, and stopped it
//! at the end without a word).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use scalebench_deploy::cluster::StateLock;
use scalebench_deploy::{Cluster, Deployment};
use scalebench_session::error::SessionError;

/// The clusters an experiment holds: the one up now, those it started (stopped at its end), and
/// the locks of all it deployed (held to its end: nobody else brings them up or down meanwhile).
#[derive(Default)]
pub(super) struct Held {
    /// The deployment file (derived for the configuration) whose cluster is up.
    pub deployed: Option<PathBuf>,
    /// Clusters this experiment started (stopped at the end).
    pub started: Vec<PathBuf>,
    locks: Vec<StateLock>,
}

/// The cluster fact naming the experiment that started a cluster: a resumed run of that experiment
/// stops it at the end as if it had started it itself.
const STARTED_BY: &str = "started_by_experiment";

/// Refuses (exit 2), before anything is recorded or deployed, an experiment whose clusters' places
/// hold a running cluster it did not start (one brought up with `cluster up`, or by another
/// experiment): the experiment deploys its own clusters and stops them at its end.
pub(super) fn refuse_clusters_of_others(
    experiment: &str,
    deployments: &[Deployment],
    clusters_dir: &Path,
) -> Result<(), SessionError> {
    let mut names = BTreeSet::new();
    for d in deployments {
        if names.insert(d.name.clone()) {
            if let Ok(c) = Cluster::open(&Cluster::dir_for(clusters_dir, d)) {
                not_of_others(&c, experiment)?;
            }
        }
    }
    Ok(())
}

impl Held {
    /// Takes the lock of every cluster the experiment may deploy, before it records or deploys
    /// anything: another command changing one of them (another experiment process on the same
    /// deployments, a `cluster up`) is refused then (exit 2, naming the holder), or refused itself
    /// while this experiment runs.
    pub(super) fn lock_all(
        &mut self,
        deployments: &[Deployment],
        clusters_dir: &Path,
    ) -> Result<(), SessionError> {
        for d in deployments {
            self.locks
                .push(StateLock::take(&Cluster::dir_for(clusters_dir, d))?);
        }
        Ok(())
    }
}

/// Refuses a cluster with a running node that experiment `experiment` did not start, naming the
/// deployment, its state file and how to stop it.
fn not_of_others(c: &Cluster, experiment: &str) -> Result<(), SessionError> {
    let ours = c.state.facts.get(STARTED_BY).map(String::as_str) == Some(experiment);
    let running = c.state.nodes.iter().any(|n| n.is_running());
    if ours || !running {
        return Ok(());
    }
    let by = match c.state.facts.get(STARTED_BY) {
        Some(other) => format!("by experiment {other:?}"),
        None => "outside any experiment (`cluster up`)".into(),
    };
    let clusters_dir = c
        .state
        .dir
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    Err(SessionError::Usage(format!(
        "cluster {} is running, started {by} (its state: {}): experiment {experiment:?} deploys its own \
         clusters and stops them at its end, so it does not take that one over; stop it with \
         `scalebench cluster down {} --clusters-dir {clusters_dir}`, or give the experiment another --clusters-dir",
        c.name(),
        c.state.dir.join("cluster.json").display(),
        c.state.deployment_file.display(),
    )))
}

/// Brings up the cluster of `file` unless it is already the one running, its lock taken and held to
/// the experiment's end. Whether it deployed one afresh (nothing loaded in it yet).
pub(super) fn ensure_cluster(
    file: &Path,
    experiment: &str,
    state: &mut Held,
    clusters_dir: &Path,
) -> Result<bool, SessionError> {
    if state.deployed.as_deref() == Some(file) {
        return Ok(false);
    }
    let d = Deployment::from_file(file)?;
    let dir = Cluster::dir_for(clusters_dir, &d);
    state.locks.push(StateLock::take(&dir)?);
    // Another configuration's cluster of the same name goes first.
    if let Ok(mut old) = Cluster::open(&dir) {
        // Someone may have brought one up since the experiment began.
        not_of_others(&old, experiment)?;
        let same = std::fs::canonicalize(file).ok() == Some(old.state.deployment_file.clone());
        let serving = old.up_failed().is_none() && old.state.nodes.iter().all(|n| n.is_running());
        if same && serving {
            // Left running by this experiment's interrupted predecessor: ours to stop.
            if !state.started.contains(&dir) {
                state.started.push(dir);
            }
            state.deployed = Some(file.to_path_buf());
            return Ok(false);
        }
        old.down();
    }
    scalebench_session::note!("  deploying {} from {}", d.name, file.display());
    let mut cluster = Cluster::up(d, file, clusters_dir, false)?;
    cluster
        .state
        .facts
        .insert(STARTED_BY.into(), experiment.to_string());
    cluster.save()?;
    if !state.started.contains(&dir) {
        state.started.push(dir);
    }
    state.deployed = Some(file.to_path_buf());
    Ok(true)
}
