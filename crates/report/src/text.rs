//! Text a terminal shows beside the run summary ([`crate::summary`]): a cluster's status, an
//! experiment's plan and cells
//! (`results show`), an elastic run's steps as each ends and its table of sizes, and a saturation
//! search's steps.

use std::fmt::Write as _;

use scalebench_deploy::ClusterStatus;
use scalebench_elastic::result::ElasticStep;
use scalebench_elastic::{SizeRow, StepScores};

use scalebench_measure::saturation::{Search, SearchEnd, SearchKind, StepVerdict};

use crate::cells::CellStats;
use crate::stored::{SizeMeans, StepMeans};
use crate::terminal::{text_table, Align::*};

/// One cell of an experiment with what its elastic runs add: each step's transition and each
/// stable size, averaged over its repetitions.
pub struct CellRow<'a> {
    pub stats: &'a CellStats,
    pub steps: Vec<StepMeans>,
    pub sizes: Vec<SizeMeans>,
}

/// One planned run of an experiment: its cell, repetition and what precedes it (a load, a restore).
pub struct PlanRow<'a> {
    pub cell: &'a str,
    pub repetition: u32,
    pub before: &'static str,
}

/// An experiment's plan as `experiment --dry-run` prints it: `heading`, then a numbered line per run.
pub fn plan_table(heading: &str, rows: &[PlanRow<'_>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                (i + 1).to_string(),
                r.cell.to_string(),
                format!("#{}", r.repetition),
                r.before.to_string(),
            ]
        })
        .collect();
    format!(
        "{heading}\n{}",
        text_table(
            &["run", "cell", "rep", "before it"],
            &[Right, Left, Left, Left],
            &rows
        )
    )
}

/// The experiments of a results database as `results list` prints them: each with its runs that
/// succeeded, had failed operations above the threshold, failed, or were interrupted.
pub fn experiments_table(experiments: &[(String, [u64; 4])]) -> String {
    let rows: Vec<Vec<String>> = experiments
        .iter()
        .map(|(name, counts)| {
            let mut row = vec![name.clone()];
            row.extend(counts.iter().map(u64::to_string));
            row
        })
        .collect();
    text_table(
        &["experiment", "ok", "failures", "failed", "interrupted"],
        &[Left, Right, Right, Right, Right],
        &rows,
    )
}

/// A cell's rate as `results show` prints it: mean, 95% interval, deviation (one repetition has no
/// spread: "n/a", not 0, the export's null), and the repetitions counted.
fn rate_columns(rate: Option<&scalebench_stats::Summary>) -> (String, String, String, usize) {
    let Some(s) = rate else {
        return ("-".into(), "-".into(), "-".into(), 0);
    };
    let spread = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.1}"));
    (
        format!("{:.1}", s.mean),
        spread(s.ci95),
        spread((s.n > 1).then_some(s.sd)),
        s.n,
    )
}

/// An experiment's cells as `results show` prints them: a line per cell with its rate (mean, 95% CI,
/// deviation), failed operations, the probe's stale reads, each operation's p99, and notes.
pub fn cells_table(rows: &[CellRow<'_>]) -> String {
    // A column for the consistency probe's stale reads when any cell measured them.
    let probed = rows.iter().any(|r| r.stats.consistency.is_some());
    let stale_column = |text: &str| {
        if probed {
            format!(" {text:>8}")
        } else {
            String::new()
        }
    };
    // Within 100 columns: the figures on the cell's line (a long cell's on the line below it),
    // each operation's p99 and the notes on lines of their own, wrapped.
    let width = rows
        .iter()
        .map(|r| r.stats.cell.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(4, CELL_WIDTH);
    let mut out = format!(
        "{:<width$} {:>3} {:>10} {:>9} {:>9} {:>7}{}\n",
        "cell",
        "n",
        "rate mean",
        "±95% CI",
        "sd",
        "failed",
        stale_column("stale %"),
    );
    for row in rows {
        let c = row.stats;
        let (mean, ci, sd, n) = rate_columns(c.throughput.as_ref());
        let p99: Vec<String> = c
            .latency
            .iter()
            .map(|(op, (_, p99, _))| format!("{op} {p99:.0}"))
            .collect();
        let mut notes = Vec::new();
        if c.client_bound > 0 {
            notes.push(format!("client-bound in {} (lower bound)", c.client_bound));
        }
        if c.failed_runs > 0 {
            notes.push(format!("{} failed runs", c.failed_runs));
        }
        if c.flagged_runs > 0 {
            notes.push(format!(
                "FAILURES: {} runs with failed operations above the threshold (not in the figures)",
                c.flagged_runs
            ));
        }
        match (&c.bytes_per_record, &c.bytes_per_record_as_inserted) {
            (Some(b), Some(i)) if b.mean != i.mean => notes.push(format!(
                "{:.0} bytes/record settled, {:.0} as inserted",
                b.mean, i.mean
            )),
            (Some(b), _) => notes.push(format!("{:.0} bytes/record", b.mean)),
            (None, _) => {}
        }
        if let Some(k) = &c.consistency {
            notes.push(consistency_note(k));
        }
        if c.fault_windows > 0 {
            notes.push(format!("{} node pauses", c.fault_windows));
        }
        match c.records_at_start {
            Some((a, b)) if a == b => notes.push(format!("on {a} records")),
            Some((a, b)) => notes.push(format!("on {a} to {b} records (grown by inserts)")),
            None => {}
        }
        let f = |v: Option<f64>, unit: &str| v.map_or("-".into(), |v| format!("{v:.1}{unit}"));
        for s in &row.steps {
            notes.push(format!(
                "step {} ({} -> {} nodes): stabilisation {}, elasticity {}{}",
                s.step,
                s.nodes_before,
                s.nodes_after,
                f(s.stabilisation_s, " s"),
                f(s.elasticity, ""),
                if s.never_stable > 0 {
                    format!(" ({} never stable)", s.never_stable)
                } else {
                    String::new()
                }
            ));
            if let Some((met, judged)) = s.service_level {
                notes.push(if met == judged {
                    format!("service level met {met}/{judged}")
                } else {
                    format!("SERVICE LEVEL MISSED in {} of {judged}", judged - met)
                });
            }
        }
        let sizes: Vec<String> = row
            .sizes
            .iter()
            .map(|s| {
                format!(
                    "{} nodes {:.3} s ± {:.3}{}",
                    s.nodes,
                    s.mean_s,
                    s.sd_s,
                    s.scalability
                        .map_or(String::new(), |v| format!(" (scalability {v:+.3})"))
                )
            })
            .collect();
        if !sizes.is_empty() {
            notes.push(format!("request sets per size: {}", sizes.join(", ")));
        }
        let stale = c
            .consistency
            .as_ref()
            .and_then(|k| k.stale.as_ref().ok())
            .map_or("-".into(), |s| format!("{:.2}", 100.0 * s.fraction));
        let figures = format!(
            "{n:>3} {mean:>10} {ci:>9} {sd:>9} {:>7}{}",
            c.operations_failed,
            stale_column(&stale)
        );
        if c.cell.chars().count() > width {
            out.push_str(&format!("{}\n{:width$} {figures}\n", c.cell, ""));
        } else {
            out.push_str(&format!("{:<width$} {figures}\n", c.cell));
        }
        let wrapped = |text: String| {
            let options = textwrap::Options::new(TABLE_WIDTH)
                .initial_indent("    ")
                .subsequent_indent("      ");
            textwrap::fill(&text, options) + "\n"
        };
        if !p99.is_empty() {
            out.push_str(&wrapped(format!("p99 us: {}", p99.join(", "))));
        }
        if !notes.is_empty() {
            out.push_str(&wrapped(notes.join("; ")));
        }
    }
    out
}

/// What the consistency probe found in a cell: the stale share of its reads, the writes seen stale,
/// and the lag and window over the writes seen.
fn consistency_note(k: &crate::cells::CellConsistency) -> String {
    let mut note = match &k.stale {
        Ok(s) => format!(
            "stale {} of {} probe writes' reads at {} ms (95% CI {:.2}-{:.2}%)",
            s.stale,
            s.reads,
            s.delay_ms,
            100.0 * s.ci_low,
            100.0 * s.ci_high
        ),
        Err(why) => format!("stale share n/a: {why}"),
    };
    note += &format!("; {} of {} writes stale", k.stale_writes, k.followed_writes);
    if let (Some(lag), Some(w)) = (k.lag_p99_us, k.window_p99_us) {
        note += &format!(
            "; over the writes seen, read-after-write lag p99 {lag:.0} us, staleness window p99 {w:.0} us"
        );
    }
    note
}

/// The widest line of [`cells_table`].
const TABLE_WIDTH: usize = 100;
/// Cell names longer than this take a line of their own.
const CELL_WIDTH: usize = TABLE_WIDTH - 52;

/// A step's events and scores in lines of text (the command line prints them as each step ends).
pub fn step_summary(s: &ElasticStep) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let e = &s.events;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "step {}: scale issued {:.1} s, done {} s, transfers done {} s, stable {} s{}",
        s.step,
        e.scale_issued_s,
        f(e.scale_done_s),
        f(e.transfers_done_s),
        f(e.stable_s),
        s.not_stable
            .as_ref()
            .map_or(String::new(), |w| format!(" ({w})"))
    );
    match &s.scores {
        StepScores::RequestSets(sc) => {
            let _ = writeln!(
                out,
                "  stabilisation {} s = data transfer {} s + additional {} s; Av {:.4} -> {} s, Rt {:.6} -> {} s",
                f(sc.stabilisation_s),
                f(sc.data_transfer_s),
                f(sc.additional_s),
                sc.av_before_s,
                f(sc.av_after_s),
                sc.rt_before_s,
                sc.rt_after_s.map_or("-".into(), |v| format!("{v:.6}")),
            );
            let _ = writeln!(
                out,
                "  elasticity {} (time axis in {}; A {}, B {}), change in transition {}, failed in transition {} ({:.3}%), full availability after {} s",
                f(sc.elasticity),
                sc.time_axis.name(),
                f(sc.area_above_ramp),
                f(sc.sd_band_area),
                f(sc.change_in_transition),
                sc.failed_in_transition,
                sc.failed_share * 100.0,
                f(sc.full_availability_s)
            );
        }
        StepScores::Unloaded(sc) => {
            let _ = writeln!(
                out,
                "  no load: ready after {} s, full availability (no data in motion) after {} s",
                f(sc.ready_s),
                f(sc.full_availability_s)
            );
        }
        StepScores::OpenLoop(sc) => {
            let _ = writeln!(
                out,
                "  stabilisation {} s = data transfer {} s + additional {} s; throughput {:.0} -> {} ops/s, {} operations lost",
                f(sc.stabilisation_s),
                f(sc.data_transfer_s),
                f(sc.additional_s),
                sc.throughput_before_ops_s,
                f(sc.throughput_after_ops_s),
                f(sc.throughput_lost_ops),
            );
            let _ = writeln!(
                out,
                "  p99 {:.0} us before, {:.0} us at worst during, {} us after; failed in transition {} ({:.3}%), full availability after {} s",
                sc.p99_before_us,
                sc.p99_transition_max_us,
                f(sc.p99_after_us),
                sc.failed_in_transition,
                sc.failed_share * 100.0,
                f(sc.full_availability_s)
            );
        }
    }
    if let Some(i) = &s.impact {
        out.push_str(&impact_summary(s.action.to_string().as_str(), i));
    }
    if let Some(v) = &s.verdict {
        out.push_str(&verdict_summary(v));
    }
    out
}

/// An operation's event figures, two lines.
pub fn impact_summary(action: &str, i: &scalebench_elastic::impact::EventFigures) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let errors: Vec<String> = i.errors.iter().map(|(c, n)| format!("{c} {n}")).collect();
    format!(
        "  {action}: p99 x{} ({:.0} -> {:.0} us), p99.9 x{}, {}, {:.0} operations lost ({:.1}%)\n  \
         worst interval: p99 x{} ({:.0} us; the baseline's expected worst of as many {:.0} us)\n  \
         {} failed{}, available in {:.1}% of {} intervals\n",
        f(i.p99_impact),
        i.baseline_p99_us,
        i.event_p99_us,
        f(i.p999_impact),
        match i.recovery_s {
            Some(r) => format!("recovered in {r:.1} s"),
            None => "never recovered".into(),
        },
        i.throughput_lost_ops,
        i.throughput_lost_pct,
        f(i.worst_p99_impact),
        i.worst_p99_us,
        i.baseline_worst_p99_us,
        i.failed,
        if errors.is_empty() {
            String::new()
        } else {
            format!(" ({})", errors.join(", "))
        },
        i.availability_pct,
        i.intervals
    ) + &i
        .lost_writes
        .as_ref()
        .map_or(String::new(), |l| lost_writes_lines(l, "  "))
}

/// The verify pass's lines, each after `indent`: keys checked and in each class and how long the
/// pass took, then an example of the first lost or unexpected one (on its own line: a key and its
/// reason are long).
pub fn lost_writes_lines(l: &scalebench_measure::result::LostWrites, indent: &str) -> String {
    if let Some(e) = &l.error {
        return format!("{indent}lost writes: not verified: {e}\n");
    }
    let unreadable = match l.unreadable {
        0 => String::new(),
        n => format!(", {n} unreadable"),
    };
    let mut lines = format!(
        "{indent}lost writes: {} of {} keys ({} unexpected, {} recovered, {} in doubt{unreadable}; {:.1} s)\n",
        l.lost, l.checked, l.unexpected, l.recovered, l.in_doubt, l.verify_s
    );
    if let Some(first) = l.samples.first() {
        lines.push_str(&format!("{indent}  e.g. {first}\n"));
    }
    if let Some(why) = &l.ended {
        lines.push_str(&format!(
            "{indent}  {} keys not checked: the check {why}\n",
            l.unchecked
        ));
    }
    lines
}

/// The verdict's line: passed, or which thresholds failed.
pub fn verdict_summary(v: &scalebench_elastic::service_level::Verdict) -> String {
    let failed: Vec<String> = v
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| {
            let value = c
                .value
                .map_or("not measured".to_string(), |v| format!("{v:.2}"));
            format!("{} {value} (limit {})", c.figure, c.limit)
        })
        .collect();
    if v.passed {
        format!("  service level met ({} thresholds)\n", v.checks.len())
    } else {
        format!("  SERVICE LEVEL MISSED: {}\n", failed.join(", "))
    }
}

/// Dory's performance table, one row per stable state, as text (empty without rows).
pub fn sizes_summary(rows: &[SizeRow]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "nodes  records  in flight  set size  sets  mean s    sd s      scalability"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<6} {:<8} {:<10} {:<9} {:<5} {:<9.4} {:<9.4} {}",
            r.nodes,
            r.records,
            r.in_flight,
            r.set_size,
            r.sets,
            r.mean_s,
            r.sd_s,
            r.scalability.map_or("-".into(), |v| format!("{v:+.3}"))
        );
    }
    out
}

/// A saturation search as `scalebench saturate` prints it: a line per step (offered, achieved,
/// p99, mean, failed), the knee marked, then the knee and what ended the search.
pub fn saturation_table(s: &Search) -> String {
    let unit = if s.kind == SearchKind::Threads {
        "threads"
    } else if s.replay.is_some() {
        "speed-up (ops/s)"
    } else {
        "offered ops/s"
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (i, st) in s.steps.iter().enumerate() {
        let interval = match (st.p99.low_us, st.p99.high_us) {
            (Some(l), Some(h)) => format!("[{l:.0}, {h:.0}]"),
            (Some(l), None) => format!("[{l:.0}, -]"),
            _ => "-".into(),
        };
        // The steepest rise of latency through a run of the step (its trend test).
        let rise = st
            .trends
            .iter()
            .map(|t| t.latency_rise_ms_per_s)
            .reduce(f64::max)
            .map_or("-".to_string(), |r| format!("{r:.1}"));
        let verdict = match st.verdict {
            Some(StepVerdict::Pass) => "pass",
            Some(StepVerdict::Fail) => "fail",
            Some(StepVerdict::Unsure) => "unsure",
            None => "",
        };
        let offered = match &s.replay {
            Some(r) => format!("x{:.2} ({:.0})", r.speed_of(st.offered), st.offered),
            None => format!("{:.0}", st.offered),
        };
        rows.push(vec![
            offered,
            format!("{:.1}", st.achieved_ops_s),
            format!("{:.0}", st.p99_us),
            interval,
            rise,
            format!("{:.0}", st.mean_us),
            st.failed.to_string(),
            st.repeats.to_string(),
            format!(
                "{verdict}{}",
                if Some(i) == s.knee { "  <- knee" } else { "" }
            ),
        ]);
    }
    let mut out = text_table(
        &[
            unit,
            "achieved ops/s",
            "p99 (us)",
            "p99 95% (us)",
            "rise ms/s",
            "mean (us)",
            "failed",
            "runs",
            "verdict",
        ],
        &[Right, Right, Right, Right, Right, Right, Right, Right, Left],
        &rows,
    );
    let a = &s.answer;
    let clients = if a.clients == 1 {
        "1 client".to_string()
    } else {
        format!("{} clients", a.clients)
    };
    match (s.kind, s.knee) {
        (SearchKind::Threads, Some(k)) => out.push_str(&format!(
            "knee: {:.0} threads per client, {:.1} ops/s sustained ({clients}); stopped: {}\n",
            s.steps[k].offered, s.steps[k].achieved_ops_s, s.stopped_by
        )),
        (SearchKind::Rate, Some(_)) if s.replay.is_some() => {
            out.push_str(&replay_answer(s, &clients));
        }
        (SearchKind::Rate, Some(_)) => out.push_str(&format!(
            "answer: {:.0} ops/s ({}), from {clients}\ncapacity between {:.0} and {} ops/s (the bisection's bracket{}); stopped: {}\n",
            a.rate_ops_s.unwrap_or(0.0),
            a.objective,
            a.bracket_low_ops_s.unwrap_or(0.0),
            a.bracket_high_ops_s
                .map_or("not reached".to_string(), |h| format!("{h:.0}")),
            a.resolution
                .map_or(String::new(), |r| format!(", resolution {}%", r * 100.0)),
            s.stopped_by
        )),
        (_, None) => out.push_str(&format!("no step held; stopped: {}\n", s.stopped_by)),
    }
    out
}

/// The answer of `saturate --replay`: how many times the capture's traffic fits, and the bracket.
fn replay_answer(s: &Search, clients: &str) -> String {
    let (a, r) = (&s.answer, s.replay.as_ref().expect("a replay's search"));
    let x = |v: Option<f64>| v.map_or("not reached".to_string(), |v| format!("x{v:.2}"));
    format!(
        "answer: the traffic of {} fits {} times ({}; {:.0} ops/s, the capture's {:.1} ops/s{}), from {clients}\nbetween {} and {} (the bisection's bracket{}); stopped: {}\n",
        r.capture,
        r.speed.map_or("-".to_string(), |v| format!("{v:.2}")),
        a.objective,
        a.rate_ops_s.unwrap_or(0.0),
        r.captured_ops_s,
        if r.copies > 1 { format!(" over x{} keys", r.copies) } else { String::new() },
        x(r.bracket_low_speed),
        x(r.bracket_high_speed.filter(|_| a.ended_by != SearchEnd::ClientBound)),
        a.resolution
            .map_or(String::new(), |r| format!(", resolution {}%", r * 100.0)),
        s.stopped_by
    )
}

/// A cluster's status as `cluster status` prints it: the cluster, a line per node (with its memory
/// use under a limit, paused or stopped), then ready and idle or what is not.
pub fn cluster_status(s: &ClusterStatus) -> String {
    let mut out = format!("cluster {} ({}), URL {}\n", s.name, s.database, s.url);
    if let Some(m) = s.memory {
        out.push_str(&format!(
            "memory limit {m} per node (page cache included)\n"
        ));
    }
    // With a memory limit, each running node's use of it.
    let mut header = vec!["node", "role", "endpoint", "pid"];
    let mut align = vec![Left, Left, Left, Right];
    if s.memory.is_some() {
        header.push("used MiB");
        align.push(Right);
    }
    header.push("state");
    align.push(Left);
    let mut rows = Vec::new();
    for n in &s.nodes {
        let mut row = vec![
            n.id.clone(),
            n.role.to_string(),
            n.endpoint.clone(),
            n.pid.map_or("-".into(), |p| p.to_string()),
        ];
        if s.memory.is_some() {
            row.push(n.memory_used_bytes.map_or("-".into(), |b| {
                format!("{:.1}", b as f64 / (1024.0 * 1024.0))
            }));
        }
        row.push(format!(
            "{}{}",
            match (n.running, n.stopped_by_signal, n.pid) {
                (true, true, Some(pid)) =>
                    format!("paused by SIGSTOP: answers nothing until `kill -CONT {pid}`"),
                (true, _, _) => "running".into(),
                _ => "stopped".into(),
            },
            match n.oom_kills {
                Some(k) if k > 0 => format!(
                    " ({k} process{} killed at the memory limit)",
                    if k == 1 { "" } else { "es" }
                ),
                _ => String::new(),
            }
        ));
        rows.push(row);
    }
    out.push_str(&text_table(&header, &align, &rows));
    if !s.not_ready.is_empty() {
        out.push_str(&format!("not ready: {}\n", s.not_ready.join("; ")));
    } else if !s.busy.is_empty() {
        out.push_str(&format!("busy: {}\n", s.busy.join("; ")));
    } else {
        out.push_str("ready and idle\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(name: &str, rates: &[f64]) -> CellStats {
        CellStats {
            cell: name.into(),
            throughput: scalebench_stats::summarize(rates),
            latency: Default::default(),
            mean_latency_us: None,
            bytes_per_record: None,
            bytes_per_record_as_inserted: None,
            records_at_start: None,
            client_bound: 0,
            failed_runs: 0,
            flagged_runs: 0,
            operations_ok: 0,
            operations_failed: 0,
            consistency: None,
            fault_windows: 0,
        }
    }

    /// One repetition has no spread: its 95% interval and deviation read "n/a", never 0 (issue 63;
    /// the export writes null); two have both.
    #[test]
    fn one_repetition_shows_no_spread() {
        let (one, two) = (cell("one", &[100.0]), cell("two", &[100.0, 110.0]));
        let rows = [&one, &two].map(|stats| CellRow {
            stats,
            steps: Vec::new(),
            sizes: Vec::new(),
        });
        let text = cells_table(&rows);
        let line = |name: &str| -> Vec<&str> {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .split_whitespace()
                .collect()
        };
        assert_eq!(line("one")[1..5], ["1", "100.0", "n/a", "n/a"], "{text}");
        // sd of 100 and 110: 7.07; the 95% interval: t(0.975, 1) 12.71 x 7.07 / sqrt 2 = 63.5.
        assert_eq!(line("two")[1..5], ["2", "105.0", "63.5", "7.1"], "{text}");
    }
}
