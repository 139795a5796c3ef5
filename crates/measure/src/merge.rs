//! Combining results of clients that ran together: their recordings add (counts sum, histograms
//! merge) and every figure is derived from the sum as from one client's recording
//! (`PhaseResult::assemble`): percentiles from the merged histograms (never averaged), rates from
//! the summed counts over the merged window.

use std::collections::BTreeMap;

use scalebench_workload::declared;

use crate::intervals::{coarsen_result_intervals, IntervalSum};
use crate::result::replay::ReplayFigures;
use crate::result::{
    Beside, ClientCost, CommonStart, EndedBy, IntervalResult, KeyRange, LoadPace, PhaseResult,
    RecordedPhase, Recording, RunResult, Series,
};

/// At most this many results merge into one: the clients of one run.
const MAX_MERGED: u64 = 1024;

/// Whether `results` can be merged as clients of one run: an error names what does not belong
/// together (the same run twice, another database or workload, open with closed loop); the warnings
/// name what is doubtful but possible (measurement windows that do not overlap).
pub fn check_mergeable(results: &[RunResult], sources: &[String]) -> Result<Vec<String>, String> {
    let name = |i: usize| {
        sources
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("result {}", i + 1))
    };
    let first = results.first().ok_or("nothing to merge")?;
    let mut warnings = Vec::new();
    for (i, r) in results.iter().enumerate().skip(1) {
        for (j, earlier) in results[..i].iter().enumerate() {
            if r.started_at == earlier.started_at
                && r.host.hostname == earlier.host.hostname
                && r.phases == earlier.phases
            {
                if name(j) == name(i) {
                    return Err(format!(
                        "{} is given twice: merging it twice would count it twice",
                        name(i)
                    ));
                }
                return Err(format!(
                    "{} and {} are the same run (started {} on {}): merging it twice would count it twice",
                    name(j),
                    name(i),
                    r.started_at,
                    r.host.hostname
                ));
            }
        }
        if first.parameters.binding != r.parameters.binding {
            return Err(format!(
                "{} ran database {} and {} database {}: clients of one run use one database",
                name(0),
                first.parameters.binding,
                name(i),
                r.parameters.binding
            ));
        }
        let (mine, theirs) = (first.definition(), r.definition());
        if !mine.compares_workloads(&theirs) {
            workload_by_text(first, r, &name(0), &name(i))?;
            if mine.workload.is_some() || theirs.workload.is_some() {
                let old = if mine.workload.is_none() {
                    name(0)
                } else {
                    name(i)
                };
                warnings.push(format!(
                    "{old} was recorded before workloads were compared by meaning (definition version {}): \
                     the workloads were compared by name and by their properties' text",
                    scalebench_workload::definition::DEFINITION_VERSION
                ));
            }
        }
        if let Some(d) = mine.first_difference(&theirs) {
            return Err(format!(
                "{} has {} {} and {} has {} {}: results of one run share its definition \
                 (duration or operations, warm-up, target, workload, properties, clients)",
                name(0),
                d.field,
                d.mine,
                name(i),
                d.field,
                d.theirs
            ));
        }
        if let Some((field, mine, theirs)) = window_difference(first, r) {
            return Err(format!(
                "{} has {field} {mine} and {} has {field} {theirs}: results of one run share its definition \
                 (duration or operations, warm-up, target, workload, properties, clients)",
                name(0),
                name(i)
            ));
        }
        if r.parameters.target_ops_s.is_some() != first.parameters.target_ops_s.is_some() {
            return Err(format!(
                "{} ran in {} and {} in {}: open- and closed-loop latencies do not mix",
                name(0),
                loop_kind(first),
                name(i),
                loop_kind(r)
            ));
        }
    }
    // Phases of the same name should have measured at the same time.
    for phase in &first.phases {
        let windows: Vec<(usize, u64, u64)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                r.phases
                    .iter()
                    .find(|p| p.phase == phase.phase)
                    .map(|p| (i, p))
            })
            .map(|(i, p)| {
                let start = p.measurement_start_unix_ms;
                (i, start, start + (p.duration_s * 1000.0).ceil() as u64)
            })
            .collect();
        let latest_start = windows.iter().map(|w| w.1).max().unwrap_or(0);
        let earliest_end = windows.iter().map(|w| w.2).min().unwrap_or(0);
        if windows.len() > 1 && latest_start > earliest_end {
            let (late, _, _) = windows.iter().find(|w| w.1 == latest_start).unwrap();
            let (early, _, _) = windows.iter().find(|w| w.2 == earliest_end).unwrap();
            warnings.push(format!(
                "the {} phases of {} and {} did not measure at the same time ({} ms apart): \
                 the merged rate counts operations of different windows",
                phase.phase,
                name(*early),
                name(*late),
                latest_start - earliest_end
            ));
        }
    }
    Ok(warnings)
}

/// The first of the windows' fields in which the runs of `a` and `b` differ, with both values:
/// the duration and warm-up their parameters give (a merged rate over windows of different
/// lengths means nothing) and the rate profile.
fn window_difference(a: &RunResult, b: &RunResult) -> Option<(String, String, String)> {
    let seconds = |s: Option<f64>| s.map_or_else(|| "none".to_string(), |s| format!("{s}s"));
    let (pa, pb) = (&a.parameters, &b.parameters);
    let differs = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() > 1e-9 * x.abs().max(1.0),
        (x, y) => x.is_some() != y.is_some(),
    };
    if differs(pa.duration_s, pb.duration_s) {
        return Some((
            "duration".into(),
            seconds(pa.duration_s),
            seconds(pb.duration_s),
        ));
    }
    if differs(Some(pa.warmup_s), Some(pb.warmup_s)) {
        return Some((
            "warm-up".into(),
            seconds(Some(pa.warmup_s)),
            seconds(Some(pb.warmup_s)),
        ));
    }
    if pa.rate_profile != pb.rate_profile {
        let shown = |p: &Option<String>| p.clone().unwrap_or_else(|| "none".into());
        return Some((
            "rate profile".into(),
            shown(&pa.rate_profile),
            shown(&pb.rate_profile),
        ));
    }
    None
}

/// Results recorded before definition version 2: the workload compared by its name and by the
/// text of each property that defines the run, less each client's own share of it.
fn workload_by_text(first: &RunResult, r: &RunResult, a: &str, b: &str) -> Result<(), String> {
    if first.parameters.workload != r.parameters.workload {
        return Err(format!(
            "{a} ran workload {} and {b} workload {}: clients of one run run one workload",
            first.parameters.workload, r.parameters.workload
        ));
    }
    let (mine, theirs) = (&first.parameters.properties, &r.parameters.properties);
    let keys: std::collections::BTreeSet<&String> = mine.keys().chain(theirs.keys()).collect();
    let defining = keys.into_iter().filter(|k| {
        declared::defines_the_run(k) && !declared::CLIENT_SHARES.iter().any(|s| s.name == *k)
    });
    for key in defining {
        let (x, y) = (mine.get(key), theirs.get(key));
        if x != y {
            return Err(format!(
                "{a} has {key}={} and {b} has {key}={}: clients of one run run one workload",
                x.map_or("(unset)", String::as_str),
                y.map_or("(unset)", String::as_str)
            ));
        }
    }
    Ok(())
}

fn loop_kind(r: &RunResult) -> &'static str {
    if r.parameters.target_ops_s.is_some() {
        "an open loop"
    } else {
        "a closed loop"
    }
}

/// Merges results of concurrent clients, checked with [`check_mergeable`] first; returns the merge
/// and that check's warnings. Phases are matched by name (`load`, `run`).
pub fn merge_results(
    results: &[RunResult],
    sources: &[String],
) -> Result<(RunResult, Vec<String>), String> {
    if results.len() as u64 > MAX_MERGED {
        return Err(format!(
            "{} results: at most {MAX_MERGED} can be merged (the clients of one run)",
            results.len()
        ));
    }
    let warnings = check_mergeable(results, sources)?;
    let first = results.first().ok_or("nothing to merge")?;
    let mut merged = first.clone();
    merged.merged_from = sources.to_vec();
    merged.interrupted = results.iter().any(|r| r.interrupted);
    merged.parameters.threads = results.iter().map(|r| r.parameters.threads).sum();
    merged.parameters.target_ops_s = results
        .iter()
        .map(|r| r.parameters.target_ops_s)
        .try_fold(0.0, |acc, t| t.map(|t| acc + t));
    merged.phases.clear();
    let mut names: Vec<crate::Phase> = Vec::new();
    for r in results {
        for p in &r.phases {
            if !names.contains(&p.phase) {
                names.push(p.phase);
            }
        }
    }
    for name in names {
        let (phases, labels): (Vec<&PhaseResult>, Vec<String>) = results
            .iter()
            .zip(sources)
            .flat_map(|(r, source)| {
                r.phases
                    .iter()
                    .filter(|p| p.phase == name)
                    .map(move |p| (p, source.clone()))
            })
            .unzip();
        merged.phases.push(merge_phases(&phases, &labels)?);
    }
    Ok((merged, warnings))
}

/// The verdict of clients that ran together: every client's bounds, each named with its label
/// (`client 0`, or the file it came from); any saturated client makes the whole a lower bound and
/// comes first.
fn merged_verdict(
    phases: &[&PhaseResult],
    labels: &[String],
) -> Option<scalebench_monitor::Verdict> {
    use scalebench_monitor::{Bound, Verdict};
    let verdicts: Vec<(&str, &Verdict)> = phases
        .iter()
        .zip(labels)
        .filter_map(|(p, label)| p.bounded_by.as_ref().map(|v| (label.as_str(), v)))
        .collect();
    if verdicts.len() < 2 {
        return verdicts.first().map(|(_, v)| (*v).clone());
    }
    let mut bounds = Vec::new();
    for (label, v) in &verdicts {
        let named = |b: &Bound| Bound {
            what: format!("{} ({label})", b.what),
            ..b.clone()
        };
        if v.bounds.is_empty() && v.resource != "none" {
            // A result written before verdicts listed their bounds: its one bound.
            bounds.push(named(&Bound {
                resource: v.resource.clone(),
                process: v.process.clone(),
                what: v.bounded_by.clone(),
                client: v.client_bound,
                evidence: v.evidence.clone(),
            }));
        }
        bounds.extend(v.bounds.iter().map(named));
    }
    let evidence: Vec<String> = verdicts
        .iter()
        .map(|(label, v)| format!("{label}: {}", v.evidence))
        .collect();
    let mut merged = Verdict::of(bounds, String::new());
    merged.evidence = evidence.join("; ");
    Some(merged)
}

/// Merges the phases of clients that ran together; `labels` name them (`client 0`, or their files)
/// in the merged verdict.
pub fn merge_phases(phases: &[&PhaseResult], labels: &[String]) -> Result<PhaseResult, String> {
    let first = *phases.first().ok_or("nothing to merge")?;
    // A client whose longer run kept coarser intervals sets the length; the others' intervals are
    // merged to it, which needs a whole multiple of theirs.
    let interval_s = phases.iter().map(|p| p.interval_s).fold(0.0, f64::max);
    if let Some(p) = phases.iter().find(|p| {
        let ratio = interval_s / p.interval_s;
        (ratio - ratio.round()).abs() > 1e-9
    }) {
        return Err(format!(
            "cannot merge intervals of {} s with intervals of {} s",
            interval_s, p.interval_s
        ));
    }
    let start_ms = phases
        .iter()
        .map(|p| p.measurement_start_unix_ms)
        .min()
        .unwrap_or(0);
    // Counts add and histograms merge, client by client (one decoded at a time); every figure is
    // then derived from the merged recording as from a single client's, the rates over the merged
    // window (the clients of one run measured windows of one length), never the stored rates added.
    let mut recording = Recording::default();
    for p in phases {
        recording.add(&Recording::of_result(p)?)?;
    }
    let recorded = RecordedPhase {
        phase: first.phase,
        open_loop: phases.iter().any(|p| p.open_loop),
        measurement_start_unix_ms: start_ms,
        duration_s: phases.iter().map(|p| p.duration_s).fold(0.0, f64::max),
        ended_by: if phases.iter().any(|p| p.ended_by == EndedBy::Interrupted) {
            EndedBy::Interrupted
        } else {
            first.ended_by
        },
        clients: phases.iter().map(|p| p.clients).sum(),
        // The clients run one workload: client 0's sizes stand for all.
        data: first.data.clone(),
        recording,
        series: Series {
            interval_s,
            recorded_interval_s: phases
                .iter()
                .map(|p| p.recorded_interval_s.unwrap_or(p.interval_s))
                .reduce(f64::min)
                .filter(|r| *r < interval_s),
            intervals: merge_intervals(phases, start_ms, interval_s)?,
        },
    };
    let ranges: Vec<_> = phases.iter().filter_map(|p| p.insert_keys).collect();
    let beside = Beside {
        // Client 0's: space, resource series and faults are taken once for the run, beside client 0.
        space: first.space.clone(),
        resources: first.resources.clone(),
        remote_resources: first.remote_resources.clone(),
        faults: first.faults.clone(),
        // Each client timed its own sets; sets of different clients do not add up to sets.
        request_sets: None,
        bounded_by: merged_verdict(phases, labels),
        insert_keys: (!ranges.is_empty()).then(|| KeyRange {
            start: ranges.iter().map(|r| r.start).min().unwrap_or(0),
            end: ranges.iter().map(|r| r.end).max().unwrap_or(0),
        }),
        // The clients' common start, with the largest skew among them.
        start: phases
            .iter()
            .filter_map(|p| p.start)
            .reduce(|a, b| CommonStart {
                agreed_unix_ms: a.agreed_unix_ms.min(b.agreed_unix_ms),
                skew_ms: if b.skew_ms.abs() > a.skew_ms.abs() {
                    b.skew_ms
                } else {
                    a.skew_ms
                },
            }),
        // Each client's probe saw its own keys: no one client's figures stand for the run.
        consistency: None,
        consistency_readers: Vec::new(),
        // The clients of one run share its timing and its probe.
        timed_init_to_cleanup: first.timed_init_to_cleanup,
        consistency_error: first.consistency_error.clone(),
        lost_writes: merge_lost_writes(phases, labels),
        // A paced load's clients each offered their share: the merge offered the sum.
        load_pace: phases
            .iter()
            .map(|p| p.load_pace.clone())
            .reduce(|a, b| match (a, b) {
                (Some(a), Some(b)) => Some(LoadPace {
                    target_records_s: a.target_records_s + b.target_records_s,
                    ..a
                }),
                _ => None,
            })
            .flatten(),
        // The clients' spending summed, its figures per operation derived from the sums.
        client_cost: ClientCost::merge(&phases.iter().map(|p| p.client_cost).collect::<Vec<_>>()),
        replay: ReplayFigures::merge(phases.iter().map(|p| p.replay.as_ref())),
    };
    Ok(PhaseResult::assemble(recorded, beside))
}

/// The clients' verify passes: each client wrote keys no other client wrote (its insert section,
/// its residue of the loaded keys), so its counts are exact on their own and add up; the pass took
/// as long as the slowest client's; a client whose pass could not run names itself. Absent when no
/// client verified.
fn merge_lost_writes(
    phases: &[&PhaseResult],
    labels: &[String],
) -> Option<crate::result::LostWrites> {
    let mut all: Option<crate::result::LostWrites> = None;
    for (i, p) in phases.iter().enumerate() {
        let Some(l) = &p.lost_writes else { continue };
        let m = all.get_or_insert_with(Default::default);
        let label = labels.get(i).map_or("a client", String::as_str);
        m.add_counts(l, Some(label));
        m.verify_s = m.verify_s.max(l.verify_s);
        if let Some(e) = &l.error {
            add_error(m, format!("{label}: {e}"));
        }
    }
    // A client that verified nothing while others did: its writes were not checked.
    if let Some(m) = &mut all {
        let missing: Vec<&str> = phases
            .iter()
            .zip(labels)
            .filter(|(p, _)| p.lost_writes.is_none())
            .map(|(_, l)| l.as_str())
            .collect();
        if !missing.is_empty() {
            add_error(m, format!("not verified by {}", missing.join(", ")));
        }
    }
    all
}

/// Adds `e` to what the merged pass says went wrong.
fn add_error(m: &mut crate::result::LostWrites, e: String) {
    m.error = Some(match m.error.take() {
        Some(prior) => format!("{prior}; {e}"),
        None => e,
    });
}

/// Aligns interval series on wall-clock time (clients started within the same interval share it);
/// a client's finer intervals are first merged to the longest length.
fn merge_intervals(
    phases: &[&PhaseResult],
    start_ms: u64,
    interval_s: f64,
) -> Result<Vec<IntervalResult>, String> {
    // Each client's intervals at the merged length, then, per merged interval, which clients'
    // intervals fall in it: references only. The histograms are decoded one merged interval at a
    // time and encoded again at once, so a day of intervals never lies decoded in memory (85,000
    // of them once took 19.6 GB).
    let mut series: Vec<std::borrow::Cow<'_, [IntervalResult]>> = Vec::with_capacity(phases.len());
    let mut offsets = Vec::with_capacity(phases.len());
    for p in phases {
        offsets.push(
            ((p.measurement_start_unix_ms - start_ms) as f64 / 1000.0 / interval_s).round() as u64,
        );
        let factor = (interval_s / p.interval_s).round() as u64;
        series.push(if factor > 1 {
            std::borrow::Cow::Owned(coarsen_result_intervals(
                &p.intervals,
                p.interval_s,
                factor,
                p.duration_s,
            )?)
        } else {
            std::borrow::Cow::Borrowed(p.intervals.as_slice())
        });
    }
    let mut slots: BTreeMap<u64, Vec<&IntervalResult>> = BTreeMap::new();
    for (intervals, offset) in series.iter().zip(&offsets) {
        for iv in intervals.iter() {
            let index = (iv.start_s / interval_s).round() as u64 + offset;
            slots.entry(index).or_default().push(iv);
        }
    }
    slots
        .into_iter()
        .map(|(index, intervals)| {
            let mut ops: BTreeMap<&str, IntervalSum> = BTreeMap::new();
            for iv in intervals {
                for (op, o) in &iv.operations {
                    ops.entry(op.as_str()).or_default().add(o)?;
                }
            }
            Ok(IntervalResult {
                start_s: index as f64 * interval_s,
                // Clients run side by side: their rates add.
                operations: ops
                    .into_iter()
                    .map(|(op, sum)| (op.to_string(), sum.finish(None)))
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::PhaseMeta;
    use crate::result::{DataSizes, LatencySummary, Totals};
    use crate::{Aggregator, Recorder};
    use scalebench_workload::{FailureClass, OpError, OpKind};
    use std::time::Duration;

    /// Feeds operation `i` for every `i` that `take` accepts; latencies spread over three orders of magnitude.
    fn phase(take: impl Fn(u64) -> bool) -> PhaseResult {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut r = Recorder::new(0, 0, Duration::from_secs(1), true, tx);
        let err = OpError::new(FailureClass::Conflict, "lost race");
        // A worker records operations as they complete, so in order of end time.
        let us = 1000u64;
        let mut ops: Vec<(u64, u64, u64, u64)> = (0..20_000u64)
            .filter(|i| take(*i))
            .map(|i| {
                let intended = i * 150 * us;
                let start = intended + (i % 7) * us;
                (i, intended, start, start + (10 + (i * 7919) % 50_000) * us)
            })
            .collect();
        ops.sort_by_key(|o| o.3);
        for (i, intended, start, end) in ops {
            let kind = if i % 3 == 0 {
                OpKind::Update
            } else {
                OpKind::Read
            };
            r.issue(kind);
            r.record(
                kind,
                intended,
                start,
                end,
                if i % 97 == 0 { Err(&err) } else { Ok(()) },
            );
        }
        r.finish();
        aggregated(&rx, Duration::from_secs(3))
    }

    /// The open-loop run phase a recorder's batches make, its window `duration` long.
    fn aggregated(
        batches: &std::sync::mpsc::Receiver<crate::IntervalBatch>,
        duration: Duration,
    ) -> PhaseResult {
        let mut agg = Aggregator::new(Duration::from_secs(1), true, 1);
        batches.try_iter().for_each(|b| agg.add(b));
        agg.finish(PhaseMeta {
            phase: crate::Phase::Run,
            measurement_start_unix_ms: 1_700_000_000_000,
            duration,
            ended_by: EndedBy::Duration,
            data: DataSizes::default(),
        })
        .unwrap()
        .0
    }

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("client {i}")).collect()
    }

    #[test]
    fn merging_two_halves_gives_the_whole() {
        let whole = phase(|_| true);
        let even = phase(|i| i % 2 == 0);
        let odd = phase(|i| i % 2 == 1);
        let merged = merge_phases(&[&even, &odd], &labels(2)).unwrap();
        assert_eq!(merged.clients, 2);
        assert_eq!(merged.totals.ok, whole.totals.ok);
        assert_eq!(merged.totals.failed, whole.totals.failed);
        assert_eq!(merged.totals.issued, whole.totals.issued);
        assert!((merged.totals.throughput_ops_s - whole.totals.throughput_ops_s).abs() < 1e-6);
        for (name, w) in &whole.operations {
            let m = &merged.operations[name];
            assert_eq!(m.ok, w.ok, "{name}");
            assert_eq!(m.failed, w.failed, "{name}");
            // Percentiles come from the merged histogram, so they equal the whole's exactly.
            let (ml, wl) = (m.latency.as_ref().unwrap(), w.latency.as_ref().unwrap());
            assert_eq!(
                (ml.p50_us, ml.p99_us, ml.p99_9_us, ml.max_us, ml.count),
                (wl.p50_us, wl.p99_us, wl.p99_9_us, wl.max_us, wl.count)
            );
            assert_eq!(ml.decode().unwrap(), wl.decode().unwrap());
            let (mi, wi) = (
                m.intended_latency.as_ref().unwrap(),
                w.intended_latency.as_ref().unwrap(),
            );
            assert_eq!((mi.p99_us, mi.count), (wi.p99_us, wi.count));
        }
        assert_eq!(
            merged.errors["conflict"].count,
            whole.errors["conflict"].count
        );
        assert_eq!(merged.intervals.len(), whole.intervals.len());
        for (m, w) in merged.intervals.iter().zip(&whole.intervals) {
            for (op, wo) in &w.operations {
                let mo = &m.operations[op];
                assert_eq!(
                    (mo.ok, mo.failed, mo.p99_us),
                    (wo.ok, wo.failed, wo.p99_us),
                    "interval {} {op}",
                    w.start_s
                );
            }
        }
    }

    /// Issue 42: the clients' verify passes add up (each wrote keys of its own), their lost keys
    /// named by client; a client that did not verify is said, not taken for one that lost nothing.
    #[test]
    fn the_clients_lost_writes_add_up_and_a_client_without_a_pass_is_named() {
        let lost = |checked: u64, lost: u64, sample: &str| crate::result::LostWrites {
            checked,
            lost,
            unexpected: 1,
            recovered: 3,
            in_doubt: 1,
            samples: vec![sample.to_string()],
            verify_s: checked as f64 / 100.0,
            ..Default::default()
        };
        let (mut a, mut b, c) = (phase(|_| true), phase(|_| true), phase(|_| true));
        a.lost_writes = Some(lost(300, 2, "user7: missing"));
        b.lost_writes = Some(lost(500, 0, ""));
        let merged = merge_phases(&[&a, &b], &labels(2)).unwrap();
        let m = merged.lost_writes.unwrap();
        assert_eq!((m.checked, m.lost, m.in_doubt), (800, 2, 2));
        assert_eq!((m.unexpected, m.recovered), (2, 6));
        assert_eq!(m.verify_s, 5.0);
        assert_eq!(m.samples[0], "client 0: user7: missing");
        assert!(m.error.is_none());
        let merged = merge_phases(&[&a, &b, &c], &labels(3)).unwrap();
        assert_eq!(
            merged.lost_writes.unwrap().error.as_deref(),
            Some("not verified by client 2")
        );
        assert!(merge_phases(&[&c, &c], &labels(2))
            .unwrap()
            .lost_writes
            .is_none());
    }

    /// Dijkshoorn's threat: one saturated client makes the merged result a lower bound, whichever
    /// client it was; the verdict names it and keeps the others' in its evidence.
    #[test]
    fn a_saturated_second_client_bounds_the_merged_result() {
        let verdict = |resource: &str, client_bound: bool| {
            if resource == "none" {
                return scalebench_monitor::Verdict::none(format!("{resource} figures"));
            }
            scalebench_monitor::Verdict::of(
                vec![scalebench_monitor::Bound {
                    resource: resource.into(),
                    process: client_bound.then(|| "client".to_string()),
                    what: format!("{resource} of client"),
                    client: client_bound,
                    evidence: format!("{resource} figures"),
                }],
                String::new(),
            )
        };
        let mut a = phase(|i| i % 2 == 0);
        let mut b = phase(|i| i % 2 == 1);
        a.bounded_by = Some(verdict("none", false));
        b.bounded_by = Some(verdict("cpu", true));
        let merged = merge_phases(&[&a, &b], &labels(2))
            .unwrap()
            .bounded_by
            .unwrap();
        assert!(merged.client_bound);
        assert_eq!(merged.bounded_by, "cpu of client (client 1)");
        assert!(
            merged.evidence.contains("client 0: none figures"),
            "{}",
            merged.evidence
        );
        // Nothing saturated anywhere: none, with both clients' evidence.
        b.bounded_by = Some(verdict("none", false));
        let calm = merge_phases(&[&a, &b], &labels(2))
            .unwrap()
            .bounded_by
            .unwrap();
        assert_eq!((calm.resource.as_str(), calm.client_bound), ("none", false));
        assert!(calm.evidence.contains("client 1"), "{}", calm.evidence);
    }

    #[test]
    fn different_intervals_cannot_be_merged() {
        let a = phase(|i| i < 10);
        let mut b = a.clone();
        b.interval_s = 1.5;
        assert!(merge_phases(&[&a, &b], &labels(2))
            .unwrap_err()
            .contains("intervals"));
    }

    /// A client that kept coarser intervals (its longer run went past the result's interval limit)
    /// merges with one that kept the recorded ones: the finer series is merged to the coarser first.
    #[test]
    fn coarser_intervals_of_one_client_set_the_merged_length() {
        let even = phase(|i| i % 2 == 0);
        let odd = phase(|i| i % 2 == 1);
        let mut coarse_odd = odd.clone();
        coarse_odd.intervals =
            coarsen_result_intervals(&odd.intervals, 1.0, 2, odd.duration_s).unwrap();
        coarse_odd.interval_s = 2.0;
        coarse_odd.recorded_interval_s = Some(1.0);
        let merged = merge_phases(&[&even, &coarse_odd], &labels(2)).unwrap();
        assert_eq!(
            (merged.interval_s, merged.recorded_interval_s),
            (2.0, Some(1.0))
        );
        let whole = phase(|_| true);
        let expected = coarsen_result_intervals(&whole.intervals, 1.0, 2, 3.0).unwrap();
        assert_eq!(merged.intervals.len(), expected.len());
        for (m, w) in merged.intervals.iter().zip(&expected) {
            assert_eq!(m.start_s, w.start_s);
            for (op, wo) in &w.operations {
                let mo = &m.operations[op];
                assert_eq!((mo.ok, mo.failed, mo.p99_us), (wo.ok, wo.failed, wo.p99_us));
            }
        }
    }

    /// Operation `i` of the run the truth test records: its kind, its times (ns) and how it ends.
    struct KnownOp {
        kind: OpKind,
        intended: u64,
        start: u64,
        end: u64,
        failure: Option<FailureClass>,
        after_window: bool,
    }

    fn known_op(i: u64) -> KnownOp {
        let us = 1000u64;
        let intended = i * 200 * us;
        let start = intended + (i % 11) * 300 * us;
        KnownOp {
            kind: [OpKind::Read, OpKind::Update, OpKind::Insert][(i % 3) as usize],
            intended,
            start,
            end: start + (20 + (i * 7919) % 80_000) * us,
            failure: i
                .is_multiple_of(37)
                .then(|| FailureClass::ALL[(i / 37 % 3) as usize]),
            after_window: i.is_multiple_of(53) && !i.is_multiple_of(37),
        }
    }

    /// One client's phase over the same 3 s window as every other's, recording the operations
    /// `take` accepts of the 12,000 known ones.
    fn known_phase(take: impl Fn(u64) -> bool) -> PhaseResult {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut r = Recorder::new(0, 0, Duration::from_secs(1), true, tx);
        let mut ops: Vec<(u64, KnownOp)> = (0..12_000u64)
            .filter(|i| take(*i))
            .map(|i| (i, known_op(i)))
            .collect();
        ops.sort_by_key(|(_, o)| o.end);
        for (i, o) in &ops {
            r.issue(o.kind);
            r.record_start_delay(o.intended, o.start);
            let err = o
                .failure
                .map(|c| OpError::new(c, format!("{} at {i}", c.name())));
            r.record(
                o.kind,
                o.intended,
                o.start,
                o.end,
                err.as_ref().map_or(Ok(()), Err),
            );
            if o.after_window {
                r.ok_after_window(o.kind);
            }
            if o.kind == OpKind::Insert {
                r.add_records(2);
            }
            if i.is_multiple_of(101) {
                r.add_retry();
                r.warmup_done();
            }
        }
        // Two operations of each client never complete.
        r.issue(OpKind::Read);
        r.issue(OpKind::Update);
        r.finish();
        aggregated(&rx, Duration::from_millis(2_500))
    }

    /// Every figure of two summaries, and their histograms (whose encodings may differ in the
    /// highest value they could track, which depends on the order histograms were added).
    fn assert_same_latency(m: Option<&LatencySummary>, w: Option<&LatencySummary>, what: &str) {
        let (Some(m), Some(w)) = (m, w) else {
            assert_eq!(m.is_some(), w.is_some(), "{what}");
            return;
        };
        assert_eq!(m.decode().unwrap(), w.decode().unwrap(), "{what}");
        let strip = |s: &LatencySummary| LatencySummary {
            histogram: String::new(),
            ..s.clone()
        };
        assert_eq!(strip(m), strip(w), "{what}");
    }

    /// The truth test of one derivation: three clients' recordings merged give, figure for figure
    /// and to the last digit, what one recording of all their operations gives; and the counts
    /// are those of the known operations.
    #[test]
    fn merging_recordings_equals_recording_every_operation_once() {
        let whole = known_phase(|_| true);
        let parts: Vec<PhaseResult> = (0..3).map(|c| known_phase(|i| i % 3 == c)).collect();
        let merged = merge_phases(&parts.iter().collect::<Vec<_>>(), &labels(3)).unwrap();

        // The truth, counted from the known operations themselves.
        let known: Vec<KnownOp> = (0..12_000).map(known_op).collect();
        let failed = known.iter().filter(|o| o.failure.is_some()).count() as u64;
        let after = known.iter().filter(|o| o.after_window).count() as u64;
        let ok = 12_000 - failed;
        let t = &whole.totals;
        assert_eq!((t.issued, t.ok, t.failed), (12_002, ok, failed));
        assert_eq!((t.ok_after_window, t.in_flight_at_stop), (after, 2));
        assert_eq!(t.throughput_ops_s, (ok - after) as f64 / 2.5);
        assert_eq!(t.records, 2 * 4_000);
        assert_eq!(whole.warmup_operations, 12_000u64.div_ceil(101));

        assert_eq!(merged.clients, 3);
        // Three clients each left two operations in flight.
        assert_eq!(
            merged.totals,
            Totals {
                issued: t.issued + 4,
                in_flight_at_stop: 6,
                ..t.clone()
            }
        );
        assert_eq!(merged.warmup_operations, whole.warmup_operations);
        assert_eq!(merged.operations.len(), whole.operations.len());
        for (name, w) in &whole.operations {
            let m = &merged.operations[name];
            let in_flight = if name == "INSERT" { 0 } else { 2 };
            assert_eq!(
                (m.issued, m.ok, &m.failed, m.throughput_ops_s),
                (w.issued + in_flight, w.ok, &w.failed, w.throughput_ops_s),
                "{name}"
            );
            assert_same_latency(m.latency.as_ref(), w.latency.as_ref(), name);
            assert_same_latency(
                m.intended_latency.as_ref(),
                w.intended_latency.as_ref(),
                name,
            );
            assert_same_latency(m.failed_latency.as_ref(), w.failed_latency.as_ref(), name);
            assert_eq!(
                m.failed_latency_by_class.keys().collect::<Vec<_>>(),
                w.failed_latency_by_class.keys().collect::<Vec<_>>()
            );
            for (class, wc) in &w.failed_latency_by_class {
                assert_same_latency(m.failed_latency_by_class.get(class), Some(wc), class);
            }
        }
        for (class, w) in &whole.errors {
            assert_eq!(merged.errors[class].count, w.count, "{class}");
            assert_eq!(
                w.count,
                known
                    .iter()
                    .filter(|o| o.failure.map(FailureClass::name) == Some(class.as_str()))
                    .count() as u64
            );
        }
        let (ms, ws) = (merged.schedule.unwrap(), whole.schedule.unwrap());
        assert_eq!(
            (ms.late_operations, ms.warmup_backlog_dropped),
            (ws.late_operations, ws.warmup_backlog_dropped)
        );
        assert_same_latency(
            ms.start_delay.as_ref(),
            ws.start_delay.as_ref(),
            "start delay",
        );
        // Interval by interval, the same counts and the same histograms.
        assert_eq!(merged.intervals.len(), whole.intervals.len());
        for (m, w) in merged.intervals.iter().zip(&whole.intervals) {
            assert_eq!(m.start_s, w.start_s);
            for (op, wo) in &w.operations {
                let mo = &m.operations[op];
                assert_eq!((mo.ok, mo.failed, mo.p99_us), (wo.ok, wo.failed, wo.p99_us));
                let decode = |h: &Option<String>| crate::decode_histogram(h.as_ref().unwrap());
                assert_eq!(decode(&mo.histogram), decode(&wo.histogram));
            }
        }
    }

    /// A single result read back and derived again gives every figure it holds, to the last digit.
    #[test]
    fn a_result_merged_alone_derives_the_figures_it_holds() {
        let one = known_phase(|i| i % 2 == 0);
        let again = merge_phases(&[&one], &labels(1)).unwrap();
        assert_eq!(again.totals, one.totals);
        for (name, o) in &one.operations {
            let a = &again.operations[name];
            assert_eq!(
                (a.issued, a.ok, &a.failed, a.throughput_ops_s),
                (o.issued, o.ok, &o.failed, o.throughput_ops_s)
            );
            assert_same_latency(a.latency.as_ref(), o.latency.as_ref(), name);
            assert_same_latency(a.failed_latency.as_ref(), o.failed_latency.as_ref(), name);
        }
        assert_eq!(again.errors, one.errors);
        assert_eq!(again.intervals, one.intervals);
    }
}
