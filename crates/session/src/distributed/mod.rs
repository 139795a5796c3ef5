//! One run from many client processes: each computes its share from (index, N)
//! ([`crate::clients::ClientShare`]), all start at one agreed instant (the [`scalebench_exec::Rendezvous`]
//! their launcher gives them), and their results merge into one, by histogram (Wegert, studies.md
//! section 2: one synchronous start, per-client insert ranges, results merged correctly).
//!
//! Launchers: [`local`] runs N client processes on this machine; [`etcd`] is the rendezvous of
//! clients started anywhere (by srun, a Kubernetes Indexed Job from [`kubernetes`], or [`ssh`]).

pub mod etcd;
pub mod kubernetes;
pub mod local;
pub mod ssh;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use scalebench_exec::{Phase, ProgressState};
use scalebench_measure::merge::merge_results;
use scalebench_measure::result::{DistributedRun, MissingClient};
use scalebench_measure::RunResult;

use crate::clients::ClientShare;
use crate::error::SessionError;
use crate::request::RunRequest;

/// Exit code of a distributed run that finished without some of its clients.
pub const EXIT_INCOMPLETE: u8 = 3;

/// Measurement windows of the clients may start this far apart before the merge says so: the
/// skew of a local start is well under it, clocks kept by NTP on a LAN too.
pub const START_TOLERANCE: Duration = Duration::from_millis(100);

/// A distributed run's outcome: the merged result and every client's own, by index (`None`: that
/// client left no result; the merged result names it under `distributed.missing`).
#[derive(Debug)]
pub struct DistributedOutcome {
    pub merged: RunResult,
    pub clients: Vec<Option<RunResult>>,
    /// The percentiles the run's properties ask to print.
    pub percentiles: Vec<f64>,
}

impl DistributedOutcome {
    pub fn incomplete(&self) -> bool {
        self.merged
            .distributed
            .as_ref()
            .is_some_and(|d| !d.missing.is_empty())
    }
}

/// The request client `index` of `clients` runs.
pub fn client_request(request: &RunRequest, share: ClientShare) -> RunRequest {
    let mut r = request.clone();
    r.client = Some(share);
    r.quiet = true;
    r.metrics = None;
    r
}

/// What client `share` was to do, in words, for the list of missing clients.
pub fn describe_share(request: &RunRequest, share: ClientShare, phase: Phase) -> String {
    match crate::settings::Settings::checked(&client_request(request, share), phase) {
        Ok(s) => share.describe(&s.workload, phase),
        Err(e) => format!("client {} of {} ({e})", share.index, share.clients),
    }
}

/// Checks a distributed run before any client starts: bad input is found once, with exit code 2,
/// not once per client.
pub fn check(request: &RunRequest, clients: u32, phase: Phase) -> Result<(), SessionError> {
    if request.deployment.is_some() {
        return Err(SessionError::Usage(
            "clients on other machines cannot read this machine's deployment: give the cluster's URL with --db \
             (scalebench cluster status prints it)"
                .into(),
        ));
    }
    for index in 0..clients {
        let share = ClientShare::new(index, clients)?;
        let r = client_request(request, share);
        crate::phase::check_client(&r)?;
        crate::settings::Settings::check(&r, phase)?;
    }
    Ok(())
}

/// The request with its deployment replaced by what the clients need of it: the cluster's URL and
/// binding options. The steps around a phase that a deployment gives a single client (waiting
/// until the cluster is idle, compaction, space on disk) are not taken for N clients.
pub fn without_deployment(request: &RunRequest) -> Result<RunRequest, SessionError> {
    let Some(file) = &request.deployment else {
        return Ok(request.clone());
    };
    let cluster = crate::cluster::open(file, &request.clusters_dir)?;
    let mut r = request.clone();
    r.deployment = None;
    let url = r.db.get_or_insert_with(|| cluster.url()).clone();
    let scheme = url.split("://").next().unwrap_or_default();
    if let Some(binding) = scalebench_binding::registry::for_scheme(scheme) {
        // The deployment's options first: the request's own -p come later and win.
        let mut props: Vec<String> = cluster
            .binding_options()
            .into_iter()
            .map(|(k, v)| format!("{}.{k}={v}", binding.name))
            .collect();
        props.append(&mut r.properties);
        r.properties = props;
    }
    Ok(r)
}

/// Merges the results the clients left (histograms merged, never percentiles averaged), names the
/// missing ones, and flags what makes the merge doubtful: windows that did not start together,
/// insert ranges that overlap.
/// `request`: what the clients ran, when known here (not to `scalebench gather`).
pub fn merge_clients(
    request: Option<&RunRequest>,
    phase: Phase,
    launcher: &str,
    results: Vec<Result<RunResult, String>>,
) -> Result<DistributedOutcome, SessionError> {
    let clients = results.len() as u32;
    let mut present = Vec::new();
    let mut sources = Vec::new();
    let mut missing = Vec::new();
    for (index, r) in results.iter().enumerate() {
        let share = ClientShare::new(index as u32, clients)?;
        match r {
            Ok(result) => {
                present.push(result.clone());
                sources.push(format!("client {index}"));
            }
            Err(reason) => missing.push(MissingClient {
                index: index as u32,
                share: match request {
                    Some(r) => describe_share(r, share, phase),
                    None => format!("client {index} of {clients}"),
                },
                reason: reason.clone(),
            }),
        }
    }
    if present.is_empty() {
        let reasons: Vec<String> = missing
            .iter()
            .map(|m| format!("client {}: {}", m.index, m.reason))
            .collect();
        return Err(SessionError::Failed(format!(
            "no client of the run left a result ({})",
            reasons.join("; ")
        )));
    }
    let (mut merged, mut warnings) =
        merge_results(&present, &sources).map_err(SessionError::Failed)?;
    warnings.extend(late_starts(&present, &sources));
    warnings.extend(overlapping_inserts(&present, &sources));
    if let Some(r) = request {
        merged.command = r.command.clone();
    }
    merged.client = None;
    merged.distributed = Some(DistributedRun {
        clients,
        launcher: launcher.to_string(),
        missing,
        warnings,
    });
    let percentiles = request
        .and_then(|r| crate::settings::Settings::checked(r, phase).ok())
        .map_or_else(|| vec![95.0, 99.0], |s| s.percentiles);
    Ok(DistributedOutcome {
        merged,
        clients: results.into_iter().map(Result::ok).collect(),
        percentiles,
    })
}

/// Clients whose measurement began more than [`START_TOLERANCE`] after the earliest one's.
fn late_starts(results: &[RunResult], sources: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = results.first() else {
        return out;
    };
    for phase in &first.phases {
        let starts: Vec<(usize, u64)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let p = r.phases.iter().find(|p| p.phase == phase.phase)?;
                Some((i, p.measurement_start_unix_ms))
            })
            .collect();
        let earliest = starts.iter().map(|s| s.1).min().unwrap_or(0);
        for (i, start) in starts {
            let late = start - earliest;
            if late > START_TOLERANCE.as_millis() as u64 {
                out.push(format!(
                    "{} began measuring the {} phase {late} ms after the first client (tolerance {} ms)",
                    sources[i],
                    phase.phase,
                    START_TOLERANCE.as_millis()
                ));
            }
        }
    }
    out
}

/// Clients whose run-phase inserts took the same keys: each should have had a section of its own.
fn overlapping_inserts(results: &[RunResult], sources: &[String]) -> Vec<String> {
    let ranges: Vec<(usize, u64, u64)> = results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.phases
                .iter()
                .filter_map(move |p| p.insert_keys.map(|k| (i, k.start, k.end)))
        })
        .filter(|(_, start, end)| start < end)
        .collect();
    let mut out = Vec::new();
    for (n, a) in ranges.iter().enumerate() {
        for b in &ranges[n + 1..] {
            if a.1 < b.2 && b.1 < a.2 {
                out.push(format!(
                    "{} and {} inserted into the same keys ({}..{} and {}..{})",
                    sources[a.0], sources[b.0], a.1, a.2, b.1, b.2
                ));
            }
        }
    }
    out
}

/// A client's live figures, as it hands them to its launcher or rendezvous.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClientProgress {
    elapsed_s: f64,
    in_warmup: bool,
    ok: u64,
    failed: u64,
    ops_s: f64,
    p99_us: f64,
}

impl ClientProgress {
    pub fn of(state: &ProgressState) -> ClientProgress {
        ClientProgress {
            elapsed_s: state.elapsed.as_secs_f64(),
            in_warmup: state.in_warmup(),
            ok: state.live.ok,
            failed: state.live.failed,
            ops_s: state.live.current_ops_s,
            p99_us: state.live.current_p99_us,
        }
    }
}

/// One status line for all clients: counts and rates add; the p99 shown is the worst client's
/// (percentiles do not add, and the merged histogram exists only at the end).
pub fn merged_line(
    phase: Phase,
    latest: &[Option<ClientProgress>],
    alive: usize,
    clients: usize,
) -> String {
    let live: Vec<&ClientProgress> = latest.iter().flatten().collect();
    let sum = |f: fn(&ClientProgress) -> f64| live.iter().map(|p| f(p)).sum::<f64>();
    let elapsed = live.iter().map(|p| p.elapsed_s).fold(0.0, f64::max);
    let worst_p99 = live.iter().map(|p| p.p99_us).fold(0.0, f64::max);
    let warmup = if live.iter().any(|p| p.in_warmup) {
        " (warm-up)"
    } else {
        ""
    };
    format!(
        "{} {elapsed:.0} s{warmup}: {alive}/{clients} clients, {:.0} ops/s, p99 {:.2} ms (worst client), {} ok, {} failed",
        phase.name(),
        sum(|p| p.ops_s),
        worst_p99 / 1000.0,
        sum(|p| p.ok as f64),
        sum(|p| p.failed as f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merged_line_adds_rates_and_shows_the_worst_p99() {
        let p = |ops_s, p99_us, ok| {
            Some(ClientProgress {
                elapsed_s: 3.0,
                in_warmup: false,
                ok,
                failed: 1,
                ops_s,
                p99_us,
            })
        };
        let line = merged_line(
            Phase::Run,
            &[p(100.0, 900.0, 10), None, p(50.0, 2500.0, 5)],
            2,
            3,
        );
        assert!(line.contains("2/3 clients"), "{line}");
        assert!(line.contains("150 ops/s"), "{line}");
        assert!(line.contains("p99 2.50 ms"), "{line}");
        assert!(line.contains("15 ok, 2 failed"), "{line}");
    }
}
