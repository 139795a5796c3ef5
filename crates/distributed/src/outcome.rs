//! What the clients' results become: one result merged by histogram (late starts and overlapping
//! insert ranges named), the run's exit code, each client's own file beside the merged one, and the
//! merged progress line.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use scalebench_exec::{Phase, ProgressState};
use scalebench_measure::merge::merge_results;
use scalebench_measure::result::{DistributedRun, MissingClient};
use scalebench_measure::RunResult;

use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;
use scalebench_session::request::RunRequest;

use crate::share::{client_output, describe_share};

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
    /// Ctrl-C ended the launcher's (or client 0's) wait for the clients.
    pub interrupted: bool,
    /// A deployment's step after the phase (flush, wait until idle, space on disk) failed: the
    /// figures are kept (written) without its space, and the run fails.
    pub after_phase_failed: Option<String>,
}

impl DistributedOutcome {
    /// Records that Ctrl-C ended the launcher's part: the merged result says so as the exit code
    /// does (it said `interrupted: false` beside an exit 130 when only the launcher saw the signal).
    pub fn set_interrupted(&mut self, interrupted: bool) {
        self.interrupted = interrupted;
        self.merged.interrupted |= interrupted;
    }

    /// The exit code of the run: 130 when it was interrupted (what was measured is kept), 3 when a
    /// client left no result, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.merged.interrupted || self.interrupted {
            130
        } else if self.after_phase_failed.is_some() {
            1
        } else if self.incomplete() {
            EXIT_INCOMPLETE
        } else {
            0
        }
    }

    pub fn incomplete(&self) -> bool {
        self.merged
            .distributed
            .as_ref()
            .is_some_and(|d| !d.missing.is_empty())
    }

    /// Writes each client's result beside `output` ([`client_output`]), then the merged one.
    pub fn write(&self, output: &std::path::Path) -> Result<(), SessionError> {
        let write = |r: &RunResult, path: &std::path::Path| {
            r.write_atomically(path)
                .map_err(|e| SessionError::Failed(e.to_string()))
        };
        for (i, result) in self.clients.iter().enumerate() {
            if let Some(r) = result {
                write(r, &client_output(output, i as u32))?;
            }
        }
        write(&self.merged, output)
    }

    /// `--hdr-log DIR`: the merged result's interval logs, each phase's.
    pub fn write_hdr_logs(&self, dir: &std::path::Path) -> Result<(), SessionError> {
        for phase in &self.merged.phases {
            scalebench_measure::hdrlog::write_result_logs(phase, dir)
                .map_err(SessionError::Failed)?;
        }
        Ok(())
    }

    /// What the merge found doubtful and which clients' shares are missing, a line each, for
    /// standard error.
    pub fn notes(&self) -> Vec<String> {
        let failed = self.after_phase_failed.iter().map(|e| {
            format!("FAILED after the phase: {e}; the figures above are kept, without the space on disk")
        });
        let Some(d) = &self.merged.distributed else {
            return failed.collect();
        };
        let warnings = d.warnings.iter().map(|w| format!("warning: {w}"));
        let missing = d.missing.iter().map(|m| {
            format!(
                "INCOMPLETE: client {} of {} left no result ({}); its share is not in the figures: {}",
                m.index, d.clients, m.reason, m.share
            )
        });
        warnings.chain(missing).chain(failed).collect()
    }
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
        .and_then(|r| scalebench_session::settings::Settings::checked(r, None, phase).ok())
        .map_or_else(|| vec![95.0, 99.0], |s| s.percentiles);
    Ok(DistributedOutcome {
        merged,
        clients: results.into_iter().map(Result::ok).collect(),
        percentiles,
        interrupted: false,
        after_phase_failed: None,
    })
}

/// Clients that really began more than [`START_TOLERANCE`] after the agreed start (their skew,
/// measured on their own clock when they began), or whose windows began that far apart: the
/// measurement window of every client runs from the agreed start, so a late client did not load
/// the database for the first part of it.
fn late_starts(results: &[RunResult], sources: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = results.first() else {
        return out;
    };
    let tolerance = START_TOLERANCE.as_secs_f64() * 1000.0;
    for phase in &first.phases {
        let phases: Vec<(usize, &scalebench_measure::PhaseResult)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, r.phases.iter().find(|p| p.phase == phase.phase)?)))
            .collect();
        let earliest = phases
            .iter()
            .map(|(_, p)| p.measurement_start_unix_ms)
            .min()
            .unwrap_or(0);
        for (i, p) in phases {
            let apart = p.measurement_start_unix_ms - earliest;
            let skew = p.start.map_or(0.0, |s| s.skew_ms);
            if skew > tolerance {
                out.push(format!(
                    "{} began the {} phase {skew:.0} ms after the agreed start (tolerance {tolerance:.0} ms): \
                     it did not load the database for the first {skew:.0} ms of its window",
                    sources[i], phase.phase
                ));
            } else if apart as f64 > tolerance {
                out.push(format!(
                    "{} began measuring the {} phase {apart} ms after the first client (tolerance {tolerance:.0} ms)",
                    sources[i], phase.phase
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
            if a.0 != b.0 && a.1 < b.2 && b.1 < a.2 {
                out.push(format!(
                    "{} and {} inserted into the same keys ({}..{} and {}..{})",
                    sources[a.0], sources[b.0], a.1, a.2, b.1, b.2
                ));
            }
        }
    }
    out
}

/// The output paths of a run of `clients` clients checked before anything runs: the merged
/// result's and each client's beside it.
pub fn check_outputs(output: Option<&std::path::Path>, clients: u32) -> Result<(), SessionError> {
    let client_outputs: Vec<std::path::PathBuf> = output
        .map(|path| (0..clients).map(|i| client_output(path, i)).collect())
        .unwrap_or_default();
    scalebench_session::outputs::check_outputs(
        output
            .into_iter()
            .chain(client_outputs.iter().map(|p| p.as_path())),
        None,
    )
}

/// The results clients kept on their disks (`scalebench gather FILE...`): each file one client's
/// result of one phase (as a client of a distributed run writes it), all of one run of `clients`
/// clients. Returns the phase and, by index, the result of each client a file holds.
pub fn results_from_files(
    files: &[std::path::PathBuf],
) -> Result<(Phase, u32, BTreeMap<u32, RunResult>), SessionError> {
    let mut by_index: BTreeMap<u32, (RunResult, &std::path::Path)> = BTreeMap::new();
    let mut run: Option<(Phase, u32)> = None;
    for file in files {
        let bad = |why: String| SessionError::Usage(format!("{}: {why}", file.display()));
        let r = RunResult::read(file).map_err(|e| SessionError::Usage(e.to_string()))?;
        let Some(part) = r.client.clone() else {
            return Err(bad(
                "not a client's result of a distributed run (no `client`): merge whole runs with `scalebench merge`".into(),
            ));
        };
        let [phase] = r.phases.as_slice() else {
            return Err(bad(format!(
                "a client's result holds one phase, this one {}",
                r.phases.len()
            )));
        };
        // Typed when the result was read: an unknown phase is refused there.
        let phase = phase.phase;
        // A file is input: its client count sizes what is gathered, so it is bounded as
        // `--clients` is (4294967295 once asked for terabytes).
        if !(1..=scalebench_session::request::MAX_CLIENTS).contains(&u64::from(part.clients))
            || part.index >= part.clients
        {
            return Err(bad(format!(
                "client {} of {}: a run has 1 to {} clients, numbered from 0",
                part.index,
                part.clients,
                scalebench_session::request::MAX_CLIENTS
            )));
        }
        match run {
            None => run = Some((phase, part.clients)),
            Some((p, n)) if p != phase || n != part.clients => {
                return Err(bad(format!(
                    "client {} of {} in a {} phase, where the other files hold clients of {n} in a {} phase",
                    part.index,
                    part.clients,
                    phase.name(),
                    p.name()
                )))
            }
            Some(_) => {}
        }
        if let Some((_, other)) = by_index.get(&part.index) {
            return Err(bad(format!(
                "client {} again (also in {})",
                part.index,
                other.display()
            )));
        }
        by_index.insert(part.index, (r, file));
    }
    let (phase, clients) = run.ok_or_else(|| SessionError::Usage("no result file given".into()))?;
    Ok((
        phase,
        clients,
        by_index.into_iter().map(|(i, (r, _))| (i, r)).collect(),
    ))
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
