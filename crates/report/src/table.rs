//! The summary table a run prints at the end of each phase (beside YCSB's text and JSON).

use std::fmt::Write;

use scalebench_measure::result::{ClientCost, LatencySummary, PhaseResult, RunResult, Space};

use crate::terminal::{text_table, Align};

pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for phase in &result.phases {
        render_phase(&mut out, result, phase);
    }
    out
}

/// One phase: its heading, its operations' table, then what qualifies the figures.
fn render_phase(out: &mut String, result: &RunResult, phase: &PhaseResult) {
    render_heading(out, result, phase);
    render_operations(out, phase);
    render_notes(out, result, phase);
    render_consistency(out, phase);
    render_faults(out, phase);
    render_lost_writes(out, phase);
    render_findings(out, phase);
}

/// `--verify-writes`: the written keys read back; lost writes and unexpected values said loudly.
fn render_lost_writes(out: &mut String, phase: &PhaseResult) {
    if let Some(l) = &phase.lost_writes {
        out.push_str(&lost_writes_summary(l));
    }
}

fn lost_writes_summary(l: &scalebench_measure::result::LostWrites) -> String {
    let loud = if l.failed() > 0 || l.ended.is_some() {
        "WARNING: "
    } else {
        ""
    };
    format!("{loud}{}", crate::text::lost_writes_lines(l, ""))
}

/// `--fault`: which nodes were paused, how often and for how long in all.
fn render_faults(out: &mut String, phase: &PhaseResult) {
    let mut nodes: Vec<&str> = phase.faults.iter().map(|f| f.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for node in nodes {
        let windows: Vec<_> = phase.faults.iter().filter(|f| f.node == node).collect();
        let paused: f64 = windows.iter().map(|f| f.end_s - f.start_s).sum();
        let _ = writeln!(
            out,
            "fault: {node} paused {} times, {:.2} s in all (first at {:.2} s, last ended at {:.2} s of the run)",
            windows.len(),
            paused,
            windows[0].start_s,
            windows[windows.len() - 1].end_s
        );
    }
}

/// `--consistency-probe`: how stale the probe's reads were, and what each figure rests on; with
/// several clients, the writer's (client 0's) and then each other client's readers.
fn render_consistency(out: &mut String, phase: &PhaseResult) {
    if let Some(c) = &phase.consistency {
        render_probe(out, c, "consistency probe");
    }
    for r in &phase.consistency_readers {
        let heading = format!(
            "probe readers on client {} (its clock {:+.0} us +- {:.0} us from the writer's)",
            r.client, r.clock_offset_us, r.clock_uncertainty_us
        );
        match (&r.consistency, &r.error) {
            (Some(c), _) => render_probe(out, c, &heading),
            (None, Some(e)) => {
                let _ = writeln!(out, "{heading}: did not run: {e}");
            }
            (None, None) => {}
        }
    }
}

fn render_probe(
    out: &mut String,
    c: &scalebench_measure::consistency::ConsistencyResult,
    heading: &str,
) {
    let _ = writeln!(
        out,
        "{heading} ({} writes/s over {} keys, each rewritten every {:.0} ms; not in the figures above): {} writes of {} planned ({} failed), {} reads ({} failed, {} scheduled reads missed their delay)",
        c.probe_rate,
        c.probe_keys,
        c.rewrite_period_ms,
        c.probe_writes,
        c.probe_writes_planned,
        c.probe_writes_failed,
        c.probe_reads,
        c.probe_reads_failed,
        c.missed_reads()
    );
    // The page's table has the same rows; the writes are in the line above.
    for (name, value) in crate::probe_figures::rows(c).into_iter().skip(1) {
        let _ = writeln!(out, "  {name}: {value}");
    }
}

/// How the phase ran: length, loop, threads, workload, database, merged clients.
fn render_heading(out: &mut String, result: &RunResult, phase: &PhaseResult) {
    let p = &result.parameters;
    let mode = phase.offered_load(p);
    let timed = if phase.timed_init_to_cleanup {
        ", timed from the clients' init to their cleanup"
    } else {
        ""
    };
    let heading = format!(
        "{} phase: {:.3} s measured ({}{timed}), {mode}, {} thread(s) x {} in flight{}, workload {}, {}",
        phase.phase,
        phase.duration_s,
        phase.ended_by.phrase(),
        p.threads,
        p.concurrency,
        p.pipelined(),
        p.workload,
        p.db
    );
    // Within the terminal's width, as the table below it.
    let _ = writeln!(out, "\n{}", crate::terminal::paragraph(&heading));
    match (&result.distributed, phase.start) {
        (Some(d), Some(start)) => {
            let _ = writeln!(
                out,
                "merged from {} of {} clients ({} launch), one common start, largest start skew {:.2} ms",
                phase.clients, d.clients, d.launcher, start.skew_ms
            );
        }
        _ if phase.clients > 1 => {
            let _ = writeln!(out, "merged from {} clients", phase.clients);
        }
        _ => {}
    }
}

/// Per operation: count, rate, latency percentiles, errors; and from the intended start in an
/// open loop. Columns as wide as their figures (comfy-table), within the terminal's width.
fn render_operations(out: &mut String, phase: &PhaseResult) {
    let ordered = phase.operations_in_order();
    let rows: Vec<Vec<String>> = ordered
        .iter()
        .map(|&(name, op)| {
            row(
                name,
                op.ok,
                op.throughput_ops_s,
                op.latency.as_ref(),
                op.failed_total(),
            )
        })
        .chain(std::iter::once({
            // All operations together: no latency of their own (each one's is above).
            let t = &phase.totals;
            let mut total = vec![
                "TOTAL".to_string(),
                t.ok.to_string(),
                format!("{:.1}", t.throughput_ops_s),
            ];
            total.extend(std::iter::repeat_n(String::new(), 6));
            total.push(t.failed.to_string());
            total
        }))
        .collect();
    out.push_str(&operations_table(&rows));
    if phase.open_loop {
        let _ = writeln!(
            out,
            "latency from intended start (corrected for coordinated omission):"
        );
        let rows: Vec<Vec<String>> = ordered
            .iter()
            .map(|&(name, op)| {
                row(
                    &format!("Intended-{name}"),
                    op.ok,
                    op.throughput_ops_s,
                    op.intended_latency.as_ref(),
                    op.failed_total(),
                )
            })
            .collect();
        out.push_str(&operations_table(&rows));
        if let Some(s) = &phase.schedule {
            let _ = writeln!(
                out,
                "late starts (> {} us behind schedule): {}; start delay p99 {} us",
                s.late_threshold_us,
                s.late_operations,
                s.start_delay.as_ref().map_or(0.0, |d| d.p99_us)
            );
            if let Some(end) = s.arrivals_ended_s {
                let _ = writeln!(
                    out,
                    "the rate profile ended at 0 ops/s after {end} s of the {:.1} s window: no operation was asked after it",
                    phase.duration_s
                );
            }
        }
    }
}

/// The operations' rows under their header: the name from the left, every figure from the right.
fn operations_table(rows: &[Vec<String>]) -> String {
    const HEADER: [&str; 10] = [
        "operation",
        "count",
        "ops/s",
        "mean(us)",
        "p50(us)",
        "p90(us)",
        "p99(us)",
        "p99.9(us)",
        "max(us)",
        "errors",
    ];
    let mut align = vec![Align::Right; HEADER.len()];
    align[0] = Align::Left;
    text_table(&HEADER, &align, rows)
}

/// What the figures leave out or warn about: failures, shortfalls, operations in flight, records,
/// retries, errors, warm-up, the data's size.
fn render_notes(out: &mut String, result: &RunResult, phase: &PhaseResult) {
    let t = &phase.totals;
    for line in phase
        .failure_warning(scalebench_measure::result::DEFAULT_MAX_FAILED_SHARE)
        .into_iter()
        .chain(phase.target_shortfall(phase.offered_rate(&result.parameters)))
    {
        let _ = writeln!(out, "{line}");
    }
    if t.in_flight_at_stop > 0 {
        let _ = writeln!(
            out,
            "still in flight when the run stopped (not counted as ok or failed): {}",
            t.in_flight_at_stop
        );
    }
    if t.records > 0 {
        let _ = writeln!(
            out,
            "records written: {} ({:.1} records/s)",
            t.records,
            t.records as f64 / phase.duration_s.max(1e-9)
        );
    }
    if t.retries > 0 {
        let _ = writeln!(out, "insert retries: {}", t.retries);
    }
    for (class, e) in &phase.errors {
        let sample = e
            .samples
            .first()
            .map(|s| format!(" (e.g. {s})"))
            .unwrap_or_default();
        let _ = writeln!(out, "errors {class}: {}{sample}", e.count);
    }
    if phase.warmup_operations > 0 {
        let _ = writeln!(
            out,
            "warm-up operations (not measured): {}",
            phase.warmup_operations
        );
    }
    let _ = writeln!(
        out,
        "mean key {:.1} bytes, record {:.1} bytes in {} fields",
        phase.data.mean_key_bytes, phase.data.mean_record_bytes, phase.data.field_count
    );
    if let Some(n) = phase.data.records_at_start {
        let inserts = phase
            .insert_keys
            .filter(|k| k.end > k.start)
            .map(|k| {
                format!(
                    "; its inserts took key numbers {} to {}",
                    k.start,
                    k.end - 1
                )
            })
            .unwrap_or_default();
        let _ = writeln!(out, "records at the start: {n}{inserts}");
    }
}

/// What the phase found: request sets, what bounded it, space on disk.
fn render_findings(out: &mut String, phase: &PhaseResult) {
    // Each finding a sentence within the terminal's width, as the heading and the table.
    let mut say = |text: String| {
        let _ = writeln!(out, "{}", crate::terminal::paragraph(&text));
    };
    if let Some(r) = &phase.request_sets {
        say(format!(
            "request sets of {}: {} timed, mean {:.3} s, sd {:.3} s, min {:.3} s, max {:.3} s, median step {:.3} s{}",
            r.size,
            r.sets.len(),
            r.mean_s,
            r.sd_s,
            r.min_s,
            r.max_s,
            r.median_step_s,
            if r.unfinished_ops > 0 {
                format!(" ({} operations of an unfinished last set)", r.unfinished_ops)
            } else {
                String::new()
            }
        ));
    }
    if let Some(v) = &phase.bounded_by {
        say(format!(
            "bounded by: {}{} ({})",
            v.bounded_by,
            if v.client_bound {
                ", so the throughput is a lower bound of the database's"
            } else {
                ""
            },
            v.evidence
        ));
    }
    if let Some(space) = &phase.space {
        say(format!("space on disk {}", space_sentence(space)));
    }
    if let Some(cost) = &phase.client_cost {
        say(format!("client cost {}", cost_sentence(cost)));
    }
    if let Some(r) = &phase.replay {
        say(replay_sentence(r, phase));
    }
}

/// What a replay ran of its capture, how far behind the capture's times its operations started,
/// and what its binding could not run (issue 66).
pub fn replay_sentence(
    r: &scalebench_measure::result::replay::ReplayFigures,
    phase: &PhaseResult,
) -> String {
    let copies = if r.copies > 1 {
        format!(", x{} keys", r.copies)
    } else {
        String::new()
    };
    let lag = phase
        .schedule
        .as_ref()
        .and_then(|s| s.start_delay.as_ref())
        .map(|d| {
            format!(
                "; started behind the capture's times by {:.0} us at p99, {:.0} us at most",
                d.p99_us, d.max_us
            )
        })
        .unwrap_or_default();
    let not_run = if r.not_run.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = r
            .not_run
            .iter()
            .map(|(c, n)| format!("{c} {}", n.count))
            .collect();
        format!("; NOT RUN: {} ({})", r.not_run_total(), named.join(", "))
    };
    format!(
        "replayed {} of {} operations of {} ({}) at {}x its speed{copies}, {:.3} s of capture{lag}{not_run}",
        r.fed, r.read, r.capture, r.format, r.speed, r.capture_span_s
    )
}

/// What the client spent, after "client cost": CPU, context switches and bytes per operation, and
/// the cores it kept busy (issue 65: a client near all its cores is the bound, not the database).
pub fn cost_sentence(c: &ClientCost) -> String {
    let clients = if c.clients > 1 {
        format!("({} clients summed) ", c.clients)
    } else {
        String::new()
    };
    let busy = format!(
        "{:.2} of {} cores busy ({:.0}%)",
        c.cores_used,
        c.recorded.cores,
        100.0 * c.share_of_cores
    );
    match (c.cpu_us_per_op, c.user_us_per_op, c.system_us_per_op) {
        (Some(cpu), Some(user), Some(system)) => format!(
            "{clients}per operation: {} us CPU ({} user, {} system), {} context switches{}; {busy}",
            figure(cpu),
            figure(user),
            figure(system),
            figure(c.switches_per_op.unwrap_or(0.0)),
            tcp_phrase(c),
        ),
        _ => format!(
            "{clients}{:.3} s CPU over the window, no operation completed; {busy}",
            c.recorded.cpu_user_s + c.recorded.cpu_system_s
        ),
    }
}

/// ", 100 bytes over TCP in 2.00 segments" (each figure where the client had TCP connections).
fn tcp_phrase(c: &ClientCost) -> String {
    let segments = c
        .segments_per_op
        .map_or(String::new(), |n| format!(" in {} segments", figure(n)));
    c.bytes_per_op.map_or(String::new(), |b| {
        format!(", {} bytes over TCP{segments}", figure(b))
    })
}

/// Three significant figures at most, no exponent: 0.0123, 1.23, 123, 12300.
fn figure(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A phase's space on disk in words, after "space on disk": when it was taken and how settled, the
/// megabytes and their parts, and what a record costs; after a settled load also the figure as
/// inserted.
pub fn space_sentence(space: &Space) -> String {
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    let parts: Vec<String> = space
        .parts
        .iter()
        .map(|(k, v)| format!("{k} {}", mb(*v)))
        .collect();
    let state = |s: &Space| {
        s.state
            .map_or(String::new(), |s| format!(", {}", s.phrase()))
    };
    let added = |s: &Space| s.marginal.as_ref().and_then(|m| m.bytes_per_record);
    let mut text = format!(
        "{}{}: {} on {} node(s) ({}){}",
        space.taken,
        state(space),
        mb(space.total_bytes),
        space.nodes.len(),
        parts.join(", "),
        match (space.bytes_per_record, added(space)) {
            (Some(total), Some(marginal)) => format!(
                ", {marginal:.0} bytes per record added by the load (data, indexes, metadata), {total:.0} with the fixed overhead"
            ),
            (Some(total), None) => format!(", {total:.0} bytes per record"),
            _ => String::new(),
        }
    );
    if let Some(inserted) = &space.as_inserted {
        text += &format!(
            "; {}: {}{}",
            state(inserted).trim_start_matches(", "),
            mb(inserted.total_bytes),
            added(inserted).map_or(String::new(), |b| format!(
                ", {b:.0} bytes per record added"
            ))
        );
    }
    text
}

/// An operation's row: count, rate, latency figures (or "-" without a success), errors.
fn row(name: &str, count: u64, ops_s: f64, l: Option<&LatencySummary>, errors: u64) -> Vec<String> {
    let f = |v: f64| format!("{v:.1}");
    let mut r = vec![name.to_string(), count.to_string(), f(ops_s)];
    match l {
        Some(l) => r.extend(
            [
                l.mean_us, l.p50_us, l.p90_us, l.p99_us, l.p99_9_us, l.max_us,
            ]
            .map(f),
        ),
        None => r.extend(
            ["-".to_string()]
                .into_iter()
                .chain(std::iter::repeat_n(String::new(), 5)),
        ),
    }
    r.push(errors.to_string());
    r
}

/// A space figure as a table: each node's bytes by part, all nodes, and bytes per record.
pub fn space_table(space: &Space) -> String {
    let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
    let kinds: Vec<&String> = space.parts.keys().collect();
    let mut header = vec!["node".to_string(), "total MB".to_string()];
    header.extend(kinds.iter().map(|k| format!("{k} MB")));
    let mut rows: Vec<Vec<String>> = space
        .nodes
        .iter()
        .map(|n| {
            let mut r = vec![n.node.clone(), mb(n.bytes)];
            r.extend(
                kinds
                    .iter()
                    .map(|k| mb(n.parts.get(*k).copied().unwrap_or(0))),
            );
            r
        })
        .collect();
    let mut all = vec!["all".to_string(), mb(space.total_bytes)];
    all.extend(kinds.iter().map(|k| mb(space.parts[*k])));
    rows.push(all);
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = text_table(&header, &align, &rows);
    if let Some(b) = space.bytes_per_record {
        out.push_str(&format!(
            "{b:.1} bytes per record ({} records)\n",
            space.records
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_measure::result::{MarginalSpace, NodeSpace};
    use scalebench_measure::SpaceState;

    fn space(state: SpaceState, data: u64, added: f64) -> Space {
        let node = NodeSpace {
            node: "node1".into(),
            dir: "/d".into(),
            bytes: data + 1_000_000,
            parts: [("data".to_string(), data), ("log".to_string(), 1_000_000)].into(),
        };
        let mut s = Space::from_nodes("after load", vec![node], 1000);
        s.state = Some(state);
        s.marginal = Some(MarginalSpace {
            bytes_per_record: Some(added),
            ..Default::default()
        });
        s
    }

    /// Issue 38: a settled load's sentence gives both figures, each with its state.
    #[test]
    fn the_cost_sentence_gives_each_figure_per_operation() {
        use scalebench_measure::result::cost::RecordedCost;
        let c = ClientCost::derive(
            2,
            RecordedCost {
                window_s: 2.0,
                operations: 200_000,
                cpu_user_s: 1.5,
                cpu_system_s: 0.5,
                voluntary_switches: 150_000,
                involuntary_switches: 12,
                bytes_sent: Some(8_000_000),
                bytes_received: Some(12_000_000),
                segments_sent: Some(200_000),
                segments_received: Some(20_000),
                cores: 4,
            },
        );
        assert_eq!(
            cost_sentence(&c),
            "(2 clients summed) per operation: 10.0 us CPU (7.50 user, 2.50 system), 0.750 context switches, 100 bytes over TCP in 1.10 segments; 1.00 of 4 cores busy (25%)"
        );
        let none = ClientCost::derive(
            1,
            RecordedCost {
                cores: 2,
                window_s: 1.0,
                cpu_user_s: 0.01,
                ..Default::default()
            },
        );
        assert_eq!(
            cost_sentence(&none),
            "0.010 s CPU over the window, no operation completed; 0.01 of 2 cores busy (0%)"
        );
    }

    #[test]
    fn the_space_sentence_gives_settled_and_as_inserted() {
        let mut settled = space(SpaceState::Settled, 2_000_000, 1000.0);
        settled.as_inserted = Some(Box::new(space(SpaceState::AsInserted, 3_000_000, 2000.0)));
        assert_eq!(
            space_sentence(&settled),
            "after load, settled (flushed and compacted): 3.0 MB on 1 node(s) (data 2.0 MB, \
             log 1.0 MB), 1000 bytes per record added by the load (data, indexes, metadata), \
             3000 with the fixed overhead; as inserted (flushed, not compacted): 4.0 MB, 2000 \
             bytes per record added"
        );
        assert_eq!(settled.per_record(), Some(1000.0));
        assert_eq!(settled.as_inserted_per_record(), Some(2000.0));
        // --no-compact: the space itself is as inserted.
        let inserted = space(SpaceState::AsInserted, 3_000_000, 2000.0);
        assert!(space_sentence(&inserted).starts_with("after load, as inserted (flushed, not"));
        assert_eq!(inserted.as_inserted_per_record(), Some(2000.0));
    }

    /// Issue 61: the verify pass's classes, loud when a key lost a write or holds a value never
    /// written, its example on a line of its own (the summary keeps to 100 columns).
    #[test]
    fn the_lost_writes_lines_name_every_class() {
        let lost = scalebench_measure::result::LostWrites {
            checked: 950_000,
            lost: 12_345,
            unexpected: 3,
            recovered: 4_567,
            in_doubt: 89,
            samples: vec![
                "user4760913491282081548: lost: field field3 holds an older write".into(),
            ],
            verify_s: 17.34,
            ..Default::default()
        };
        let out = lost_writes_summary(&lost);
        assert_eq!(
            out,
            "WARNING: lost writes: 12345 of 950000 keys (3 unexpected, 4567 recovered, 89 in doubt; \
             17.3 s)\n  e.g. user4760913491282081548: lost: field field3 holds an older write\n"
        );
        assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
        let kept = scalebench_measure::result::LostWrites {
            checked: 10,
            recovered: 2,
            ..Default::default()
        };
        let out = lost_writes_summary(&kept);
        assert!(
            out.starts_with("lost writes: 0 of 10 keys (0 unexpected, 2 recovered"),
            "{out}"
        );
        // Issue 62: a check cut short is loud and says how many keys it did not reach, and why.
        let cut = scalebench_measure::result::LostWrites {
            checked: 10,
            unchecked: 90,
            ended: Some("ended by a signal".into()),
            ..Default::default()
        };
        let out = lost_writes_summary(&cut);
        assert!(
            out.starts_with("WARNING: lost writes: 0 of 10 keys"),
            "{out}"
        );
        assert!(
            out.ends_with("\n  90 keys not checked: the check ended by a signal\n"),
            "{out}"
        );
    }
}
