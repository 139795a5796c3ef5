//! A run's page: banners for what makes its figures doubtful, then per phase its summary table
//! and charts (throughput, latency and errors over time, request-set times, the latency
//! distribution, the client's and the machine's resources).

use scalebench_measure::result::IntervalOp;
use scalebench_measure::{PhaseResult, RunResult};
use scalebench_workload::rate::RateProfile;

use crate::chart::{Chart, Scale, Series};
use maud::{html, Markup};

use crate::html::{note, slug, table, Section};

/// What a run's page shows besides the result: marked events, shaded ranges, extra figures.
#[derive(Debug, Clone, Default)]
pub struct RunExtras {
    pub markers: Vec<(f64, String)>,
    pub bands: Vec<(f64, f64, String)>,
    /// Rows of name and value shown first (e.g. elasticity scores).
    pub figures: Vec<(String, String)>,
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

/// The banners of a run: per phase, a target rate not reached, the client as the bound, a large
/// share of failed operations.
pub fn run_banners(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = r.failure() {
        out.push(format!("This run failed: {why}."));
    }
    for ph in &r.phases {
        if let Some(line) = ph.consistency.as_ref().and_then(|c| c.fell_behind()) {
            out.push(line);
        }
        if let Some(line) = ph.target_shortfall(ph.offered_rate(&r.parameters)) {
            out.push(line);
        }
        if let Some(v) = ph.bounded_by.as_ref().filter(|v| v.client_bound) {
            out.push(format!(
                "The client was the bound in the {} phase ({}): its throughput is a lower bound of the database, not its capacity. Add client threads or machines.",
                ph.phase, v.bounded_by
            ));
        }
        if let Some(line) = ph.failure_warning(scalebench_measure::result::DEFAULT_MAX_FAILED_SHARE)
        {
            out.push(line);
        }
    }
    if let Some(report) = &r.thresholds {
        let broken: Vec<String> = report.broken().map(|v| v.threshold.clone()).collect();
        if !broken.is_empty() {
            out.push(format!(
                "Service level missed: {} of {} thresholds broken ({}).",
                broken.len(),
                report.verdicts.len(),
                broken.join(", ")
            ));
        }
    }
    out
}

/// `--threshold` and `--sla`'s verdicts, one row per threshold and phase.
fn threshold_section(r: &RunResult) -> Option<Section> {
    let report = r.thresholds.as_ref()?;
    let rows: Vec<Vec<String>> = report
        .verdicts
        .iter()
        .map(|v| {
            let measured = match (v.measured, &v.note) {
                (Some(x), _) if v.unit == "us" => format!("{:.3} ms", x / 1e3),
                (Some(x), _) => format!("{x:.3} {}", v.unit),
                (None, note) => note.clone().unwrap_or_default(),
            };
            let verdict = if v.met { "met" } else { "BROKEN" };
            vec![
                v.threshold.clone(),
                v.phase.clone(),
                measured,
                verdict.into(),
            ]
        })
        .collect();
    let file = report.file.as_deref().unwrap_or("");
    Some(Section {
        heading: "Thresholds".into(),
        html: html! {
            @if !file.is_empty() { p { "From " code { (file) } " and --threshold." } }
            (table(&["threshold", "phase", "measured", "verdict"], &rows))
        },
        charts: Vec::new(),
    })
}

/// A phase shorter than this many intervals gets no time series (a chart of one or two points):
/// its tables say it all.
const MIN_INTERVALS_FOR_SERIES: usize = 3;

/// The sections of one run: parameters and environment, then per phase its tables and charts.
pub fn run_sections(r: &RunResult, id: &str, extras: &RunExtras) -> Vec<Section> {
    let p = &r.parameters;
    let mut params = vec![
        vec!["command".to_string(), r.command.join(" ")],
        vec!["started".into(), r.started_at.clone()],
        vec!["workload".into(), p.workload.clone()],
        vec!["database".into(), format!("{} ({})", p.db, p.binding)],
        vec![
            "threads x in flight".into(),
            format!("{} x {}{}", p.threads, p.concurrency, p.pipelined()),
        ],
        vec!["load".into(), p.offered_load()],
        vec!["warm-up".into(), format!("{} s", p.warmup_s)],
        vec![
            "tool".into(),
            format!("{} {} ({})", r.tool.name, r.tool.version, r.tool.git_commit),
        ],
        vec![
            "host".into(),
            format!(
                "{} ({} {}, {} cpus, {:.1} GiB)",
                r.host.hostname,
                r.host.os,
                r.host.arch,
                r.host.cpus,
                r.host.memory_bytes as f64 / (1u64 << 30) as f64
            ),
        ],
    ];
    if let Some(d) = &r.deployment {
        params.push(vec![
            "deployment".into(),
            format!(
                "{} ({}, {} nodes{}, {})",
                d.name,
                d.database,
                d.nodes,
                d.memory_limit_bytes.map_or(String::new(), |b| format!(
                    ", memory limit {:.0} MiB per node",
                    b as f64 / (1u64 << 20) as f64
                )),
                d.file
            ),
        ]);
    }
    if r.interrupted {
        params.push(vec!["interrupted".into(), "yes: Ctrl-C ended it".into()]);
    }
    let props: Vec<Vec<String>> = p
        .properties
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    let figures: Vec<Vec<String>> = extras
        .figures
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    let first = Section {
        heading: "Run".into(),
        html: html! {
            @if !figures.is_empty() {
                (table(&["figure", "value"], &figures))
            }
            (table(&["parameter", "value"], &params))
            details {
                summary { "properties" }
                (table(&["property", "value"], &props))
            }
        },
        charts: Vec::new(),
    };
    let mut sections = vec![first];
    sections.extend(threshold_section(r));
    for (i, phase) in r.phases.iter().enumerate() {
        let warmup = if phase.phase == scalebench_measure::Phase::Run {
            p.warmup_s
        } else {
            0.0
        };
        // The rate profile the run phase's open loop followed, drawn beside what it achieved.
        let profile = p
            .rate_profile
            .as_deref()
            .filter(|_| phase.phase == scalebench_measure::Phase::Run && phase.open_loop)
            .and_then(|t| RateProfile::parse(t).ok());
        sections.push(phase_section(
            phase,
            &format!("{id}-{}{i}", phase.phase),
            (warmup, profile),
            extras,
        ));
    }
    sections
}

fn phase_section(
    ph: &PhaseResult,
    id: &str,
    (warmup_s, profile): (f64, Option<RateProfile>),
    extras: &RunExtras,
) -> Section {
    let summary = html! {
        (phase_summary(ph))
        (crate::consistency_page::probe_table(ph))
    };
    if ph.intervals.len() < MIN_INTERVALS_FOR_SERIES {
        let mut charts: Vec<Chart> = latency_distribution(ph, id).into_iter().collect();
        charts.extend(consistency_charts(ph, id));
        return Section {
            heading: format!("Phase: {}", ph.phase),
            html: html! {
                (summary)
                (note(&format!(
                    "No time series: the phase lasted {:.3} s ({} interval(s) of {} s); the tables above have its figures.",
                    ph.duration_s,
                    ph.intervals.len(),
                    ph.interval_s
                )))
            },
            charts,
        };
    }
    let cut = ph.duration_s - ph.intervals.last().map_or(0.0, |i| i.start_s);
    let html = html! {
        (summary)
        @if let Some(r) = ph.recorded_interval_s {
            p class="note" {
                "Intervals of " (ph.interval_s) " s: the run recorded " (r)
                " s intervals, merged by histogram to keep the result bounded (the HDR interval logs of "
                code { "--hdr-log" } " keep the recorded length)."
            }
        }
        @if drawn_intervals(ph).len() < ph.intervals.len() {
            (note(&format!(
                "The last interval ({cut:.2} s of {} s, cut short by the window's end) is not drawn on the time charts; the tables count it.",
                ph.interval_s
            )))
        }
    };
    // Time charts show the warm-up and the run's events (an elastic transition) on their x axis.
    let decorate = |mut c: Chart| {
        if warmup_s > 0.0 {
            c.bands
                .push((-warmup_s, 0.0, "warm-up (not measured)".into()));
        }
        c.bands.extend(extras.bands.iter().cloned());
        c.bands.extend(crate::consistency_page::fault_bands(ph));
        c.markers.extend(extras.markers.iter().cloned());
        c
    };
    let mut charts = vec![throughput_over_time(ph, id, profile)];
    charts.extend(ph.operations.keys().map(|op| latency_over_time(ph, id, op)));
    charts.extend(errors_over_time(ph, id));
    let mut charts: Vec<Chart> = charts.into_iter().map(decorate).collect();
    charts.extend(latency_distribution(ph, id));
    charts.extend(consistency_charts(ph, id));
    charts.extend(request_set_times(ph, id).map(decorate));
    charts.extend(client_cpu(ph, id).map(decorate));
    // Per KPI one line per machine, when the series of other hosts came in.
    if !ph.remote_resources.is_empty() {
        charts.extend(machine_charts(ph, id).into_iter().map(decorate));
    }
    Section {
        heading: format!("Phase: {}", ph.phase),
        html,
        charts,
    }
}

/// The consistency probe's t-visibility curve and staleness window, when it ran.
fn consistency_charts(ph: &PhaseResult, id: &str) -> Vec<Chart> {
    use crate::consistency_page::{visibility_chart, window_chart};
    let Some(c) = &ph.consistency else {
        return Vec::new();
    };
    visibility_chart(id, &[(ph.phase.to_string(), c.t_visibility.clone())])
        .into_iter()
        .chain(window_chart(ph, id))
        .collect()
}

/// The phase's figures: per operation, failures by class, the "bounded by" verdict, space on disk.
fn phase_summary(ph: &PhaseResult) -> Markup {
    let measured = format!(
        "{:.3} s measured, {}{}; {} ok, {} failed ({} completed after the window).",
        ph.duration_s,
        ph.ended_by.phrase(),
        if ph.open_loop {
            ", open loop"
        } else {
            ", closed loop"
        },
        ph.totals.ok,
        ph.totals.failed,
        ph.totals.ok_after_window
    );
    let rows: Vec<Vec<String>> = ph
        .operations
        .iter()
        .map(|(name, o)| {
            let l = o.latency.as_ref();
            let g = |f: fn(&scalebench_measure::LatencySummary) -> f64| {
                l.map_or("-".into(), |l| f1(f(l)))
            };
            vec![
                name.clone(),
                o.ok.to_string(),
                f1(o.throughput_ops_s),
                g(|l| l.mean_us),
                g(|l| l.p50_us),
                g(|l| l.p99_us),
                g(|l| l.p99_9_us),
                g(|l| l.max_us),
                o.intended_latency
                    .as_ref()
                    .map_or("-".into(), |l| f1(l.p99_us)),
                o.failed.values().sum::<u64>().to_string(),
            ]
        })
        .collect();
    let operations = table(
        &[
            "operation",
            "ok",
            "ops/s",
            "mean us",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us",
            "p99 from intended start us",
            "failed",
        ],
        &rows,
    );
    let errors: Vec<Vec<String>> = ph
        .errors
        .iter()
        .map(|(c, e)| vec![c.clone(), e.count.to_string(), e.samples.join(" | ")])
        .collect();
    html! {
        (note(&measured))
        (operations)
        @if !errors.is_empty() {
            (table(&["failure class", "count", "messages"], &errors))
        }
        @if let Some(v) = &ph.bounded_by {
            p class="note" {
                "Bounded by: " b { (v.bounded_by) }
                @if v.client_bound { " — the client: the throughput is a lower bound" }
                " (" (v.evidence) ")"
            }
        }
        @if let Some(s) = &ph.space {
            (note(&format!("Space on disk {}", crate::table::space_sentence(s))))
        }
        @if let Some(c) = &ph.client_cost {
            (note(&format!("Client cost {}", crate::table::cost_sentence(c))))
        }
    }
}

/// The intervals the time charts draw: all but a last one that covers less than half an interval
/// (the window's end cut it short; its rate over a fraction of a second is noise, a false spike
/// or dip). The tables and the result count it.
fn drawn_intervals(ph: &PhaseResult) -> &[scalebench_measure::result::IntervalResult] {
    match ph.intervals.split_last() {
        Some((last, rest))
            if !rest.is_empty() && ph.duration_s - last.start_s < ph.interval_s / 2.0 =>
        {
            rest
        }
        _ => &ph.intervals,
    }
}

/// One series of an operation's interval figure `f` (intervals where it is `None` are left out).
fn interval_series(
    ph: &PhaseResult,
    name: &str,
    op: &str,
    f: impl Fn(&IntervalOp) -> Option<f64>,
) -> Series {
    Series::new(
        name.to_string(),
        drawn_intervals(ph)
            .iter()
            .filter_map(|i| i.operations.get(op).and_then(&f).map(|v| (i.start_s, v)))
            .collect(),
    )
}

/// Completions per second of each operation, interval by interval; with a rate profile, the rate
/// it offered and all operations' completions beside it.
fn throughput_over_time(ph: &PhaseResult, id: &str, profile: Option<RateProfile>) -> Chart {
    let mut tp = Chart::new(
        &format!("{id}-throughput"),
        "Throughput over time",
        "seconds after the measurement start",
        "operations/s",
    );
    // An interval without an operation's completions is a rate of zero, not a gap.
    tp.series = ph
        .operations
        .keys()
        .map(|op| {
            Series::new(
                op.to_string(),
                drawn_intervals(ph)
                    .iter()
                    .map(|i| (i.start_s, i.operations.get(op).map_or(0.0, |o| o.ops_s)))
                    .collect(),
            )
        })
        .collect();
    if let Some(profile) = profile {
        let series = Series::new;
        // Per interval, as the achieved rates are: the profile's mean over it (its integral over
        // the interval's length), drawn at the interval's start.
        let offered = drawn_intervals(ph)
            .iter()
            .map(|i| {
                let start = i.start_s;
                let end = (start + ph.interval_s).min(ph.duration_s);
                let len = end - start;
                let mean = if len > 0.0 {
                    (profile.arrivals_by(end) - profile.arrivals_by(start)) / len
                } else {
                    profile.rate_at(start)
                };
                (start, mean)
            })
            .collect();
        let achieved = drawn_intervals(ph)
            .iter()
            .map(|i| (i.start_s, i.operations.values().map(|o| o.ops_s).sum()))
            .collect();
        tp.series.push(series("all operations", achieved));
        // Dashed: where the run kept up, the achieved line lies on it and would hide it.
        tp.series
            .push(series(&format!("offered (interval mean): {profile}"), offered).dashed());
    }
    tp
}

/// p50, p99, p99.9 (and, in an open loop, p99 from the intended start) of `op` per interval.
fn latency_over_time(ph: &PhaseResult, id: &str, op: &str) -> Chart {
    let mut lat = Chart::new(
        &format!("{id}-latency-{}", slug(op)),
        &format!("{op} latency percentiles over time (each where its interval holds enough samples: 100 for p99, 1,000 for p99.9)"),
        "seconds after the measurement start",
        "microseconds",
    );
    lat.y_scale = Scale::Log10;
    // A percentile of an interval is drawn only where the interval holds enough samples for it
    // (pX needs 1 / (1 - X) of them: 100 for p99, 1,000 for p99.9); below that it is the interval's
    // maximum, not its percentile.
    let pick = |name: &str, enough: u64, f: fn(&IntervalOp) -> Option<f64>| {
        interval_series(ph, name, op, |o| if o.ok >= enough { f(o) } else { None })
    };
    lat.series = vec![
        pick("p50", 1, |o| Some(o.p50_us)),
        pick("p99", 100, |o| Some(o.p99_us)),
        pick("p99.9", 1000, |o| Some(o.p99_9_us)),
        pick("p99 from intended start", 100, |o| o.intended_p99_us),
    ];
    lat.series.retain(|s| !s.points.is_empty());
    lat
}

/// Failed operations per interval by failure class, over all operations; none without failures.
fn errors_over_time(ph: &PhaseResult, id: &str) -> Option<Chart> {
    if ph.totals.failed == 0 {
        return None;
    }
    let mut err = Chart::new(
        &format!("{id}-errors"),
        "Errors by class over time",
        "seconds after the measurement start",
        "failed per interval",
    );
    let classes: std::collections::BTreeSet<&String> = ph
        .intervals
        .iter()
        .flat_map(|i| i.operations.values().flat_map(|o| o.failed_by_class.keys()))
        .collect();
    err.series = classes
        .into_iter()
        .map(|class| {
            Series::new(
                class.clone(),
                drawn_intervals(ph)
                    .iter()
                    .map(|i| {
                        let n: u64 = i
                            .operations
                            .values()
                            .filter_map(|o| o.failed_by_class.get(class))
                            .sum();
                        (i.start_s, n as f64)
                    })
                    .collect(),
            )
        })
        .collect();
    Some(err)
}

/// Dory's timeline: each request set's time at the middle of the set; none without request sets.
fn request_set_times(ph: &PhaseResult, id: &str) -> Option<Chart> {
    let rs = ph.request_sets.as_ref()?;
    let mut sets = Chart::new(
        &format!("{id}-request-sets"),
        &format!("Request sets of {} operations", rs.size),
        "seconds after the measurement start",
        "set time (s)",
    );
    sets.series.push(Series::new(
        "set time",
        rs.sets
            .iter()
            .map(|s| (s.start_s + s.duration_s / 2.0, s.duration_s))
            .collect(),
    ));
    Some(sets)
}

/// Cores busy on the client's host and in each watched process; none without a resource series.
fn client_cpu(ph: &PhaseResult, id: &str) -> Option<Chart> {
    let res = ph.resources.as_ref()?;
    let offset = (ph.measurement_start_unix_ms as f64 - res.start_unix_ms as f64) / 1000.0;
    let mut cpu = Chart::new(
        &format!("{id}-cpu"),
        "CPU (cores busy)",
        "seconds after the measurement start",
        "cores",
    );
    cpu.series.push(Series::new(
        "host",
        res.samples
            .iter()
            .map(|s| {
                (
                    s.t_s - offset,
                    (1.0 - s.host.cpu_idle - s.host.cpu_iowait) * res.cores as f64,
                )
            })
            .collect(),
    ));
    for (k, t) in res.targets.iter().enumerate() {
        cpu.series.push(Series::new(
            t.name.clone(),
            res.samples
                .iter()
                .filter_map(|s| s.processes.get(k).map(|p| (s.t_s - offset, p.cpu_cores)))
                .collect(),
        ));
    }
    Some(cpu)
}

/// Latency by percentile (HDR), per operation: the service time; on an open loop also the time
/// from the intended start (corrected for coordinated omission: the headline figure), with the
/// service time dashed beside it. None without successful operations.
fn latency_distribution(ph: &PhaseResult, id: &str) -> Option<Chart> {
    let title = if ph.open_loop {
        "Latency by percentile (HDR): from the intended start (corrected), and service time (dashed)"
    } else {
        "Latency by percentile (HDR)"
    };
    let mut dist = Chart::new(
        &format!("{id}-percentiles"),
        title,
        "percentile",
        "microseconds",
    );
    dist.x_scale = Scale::Percentile;
    dist.y_scale = Scale::Log10;
    let points = |l: Option<&scalebench_measure::histogram::LatencySummary>| {
        l.and_then(|l| l.decode().ok())
            .map(|h| crate::chart::percentile_points(&h))
    };
    for (op, o) in &ph.operations {
        if ph.open_loop {
            if let Some(p) = points(o.intended_latency.as_ref()) {
                dist.series
                    .push(Series::new(format!("{op} from intended start"), p));
            }
            if let Some(p) = points(o.latency.as_ref()) {
                dist.series
                    .push(Series::new(format!("{op} service time"), p).dashed());
            }
        } else if let Some(p) = points(o.latency.as_ref()) {
            dist.series.push(Series::new(op.clone(), p));
        }
    }
    (!dist.is_empty()).then_some(dist)
}

/// With series from other hosts: one chart per KPI (CPU, I/O wait, network, disk, memory), one line
/// per machine (this one, then each monitored host), on the measurement's clock.
fn machine_charts(ph: &PhaseResult, id: &str) -> Vec<Chart> {
    use scalebench_monitor::{HostSample, ResourceSeries};
    let mut machines: Vec<(String, &ResourceSeries)> = Vec::new();
    if let Some(local) = &ph.resources {
        machines.push(("this host".into(), local));
    }
    for r in &ph.remote_resources {
        if let Some(s) = &r.series {
            machines.push((r.host.clone(), s));
        }
    }
    type Kpi = fn(&HostSample, &ResourceSeries) -> f64;
    let kpis: [(&str, &str, &str, Kpi); 5] = [
        ("cpu-hosts", "CPU busy per machine", "cores", |h, s| {
            (1.0 - h.cpu_idle - h.cpu_iowait) * s.cores as f64
        }),
        (
            "iowait-hosts",
            "I/O wait per machine",
            "% of cpu time",
            |h, _| h.cpu_iowait * 100.0,
        ),
        (
            "net-hosts",
            "Network per machine (received + sent)",
            "Mbit/s",
            |h, _| (h.net_rx_s + h.net_tx_s) * 8.0 / 1e6,
        ),
        (
            "disk-hosts",
            "Busiest disk per machine",
            "% busy",
            |h, _| h.disk_busy * 100.0,
        ),
        ("mem-hosts", "Memory used per machine", "GiB", |h, _| {
            h.mem_used_bytes as f64 / (1u64 << 30) as f64
        }),
    ];
    kpis.iter()
        .map(|(key, title, unit, kpi)| {
            let mut c = Chart::new(
                &format!("{id}-{key}"),
                title,
                "seconds after the measurement start",
                unit,
            );
            for (name, series) in &machines {
                let offset =
                    (ph.measurement_start_unix_ms as f64 - series.start_unix_ms as f64) / 1000.0;
                c.series.push(Series::new(
                    name.clone(),
                    series
                        .samples
                        .iter()
                        .map(|x| (x.t_s - offset, kpi(&x.host, series)))
                        .collect(),
                ));
            }
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::Page;

    /// A run as its result file has it: open loop at `target`, `ok` operations in 10 s, optionally
    /// bounded by the client.
    fn run(target: f64, ok: u64, failed: u64, client_bound: bool) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "schema": "scalebench.result.v1",
            "tool": { "name": "scalebench", "version": "0", "git_commit": "x" },
            "host": { "hostname": "h", "os": "linux", "arch": "x86_64", "cpus": 2, "memory_bytes": 1 },
            "started_at": "2026-11-24T00:00:00Z",
            "command": ["scalebench", "run"],
            "parameters": {
                "workload": "a", "db": "null://", "binding": "null", "threads": 1, "concurrency": 1,
                "target_ops_s": target, "arrival": "constant", "duration_s": 10.0, "warmup_s": 0.0,
                "operation_count": null, "seed": 1, "interval_s": 1.0, "op_timeout_s": null,
                "properties": {}
            },
            "interrupted": false,
            "phases": [{
                "phase": "run", "open_loop": true, "measurement_start_unix_ms": 0, "duration_s": 10.0,
                "interval_s": 1.0, "ended_by": "duration", "clients": 1,
                "totals": { "issued": ok + failed, "ok": ok, "failed": failed, "in_flight_at_stop": 0,
                            "throughput_ops_s": ok as f64 / 10.0 },
                "operations": {}, "errors": {}, "schedule": null,
                "data": { "mean_key_bytes": 23.0, "mean_record_bytes": 1000.0, "field_count": 10 },
                "warmup_operations": 0, "intervals": [],
                "bounded_by": {
                    "resource": if client_bound { "cpu" } else { "none" },
                    "process": if client_bound { Some("client") } else { None },
                    "bounded_by": if client_bound { "cpu of client" } else { "none found" },
                    "client_bound": client_bound,
                    "evidence": "test"
                }
            }]
        }))
        .unwrap()
    }

    #[test]
    fn banners_name_a_missed_target_a_client_bound_and_failures_and_nothing_else() {
        assert!(run_banners(&run(1000.0, 9_900, 0, false)).is_empty());
        // 7,500 of 10,000 offered: 25% short.
        let short = run_banners(&run(1000.0, 7_500, 0, false));
        assert_eq!(short.len(), 1, "{short:?}");
        assert!(short[0].contains("target rate not reached") && short[0].contains("25% short"));
        let bound = run_banners(&run(1000.0, 10_000, 0, true));
        assert_eq!(bound.len(), 1, "{bound:?}");
        assert!(bound[0].contains("client was the bound") && bound[0].contains("cpu of client"));
        let failing = run_banners(&run(1000.0, 9_000, 1_000, false));
        assert_eq!(failing.len(), 1, "{failing:?}");
        assert!(failing[0].contains("10.0% of the run phase's operations failed"));
        // The banners come first on the page.
        let page = Page {
            title: "t".into(),
            banners: short,
            sections: run_sections(&run(1000.0, 7_500, 0, false), "run", &RunExtras::default()),
        };
        let html = page.html();
        assert!(html.find("class=\"banner\"").unwrap() < html.find("<section>").unwrap());
    }

    /// Issue 44: a last interval the window's end cut to a fraction is left off the time charts
    /// (its rate over 0.2 s is noise), and the page says so; one of more than half is drawn.
    #[test]
    fn a_last_interval_cut_short_is_not_drawn() {
        let phase = |duration_s: f64| {
            let mut r = run(1000.0, 3_200, 0, false);
            let ph = &mut r.phases[0];
            ph.duration_s = duration_s;
            ph.intervals = (0..4)
                .map(|i| scalebench_measure::result::IntervalResult {
                    start_s: i as f64,
                    operations: [(
                        "READ".to_string(),
                        IntervalOp {
                            ok: 1000,
                            ops_s: 1000.0,
                            ..Default::default()
                        },
                    )]
                    .into(),
                })
                .collect();
            ph.operations.insert("READ".into(), Default::default());
            r.phases.remove(0)
        };
        let cut = phase(3.2);
        let tp = throughput_over_time(&cut, "x", None);
        assert_eq!(tp.series[0].points.len(), 3, "{:?}", tp.series[0].points);
        let section = phase_section(&cut, "x", (0.0, None), &RunExtras::default());
        assert!(
            section.html.0.contains("The last interval (0.20 s of 1 s"),
            "{}",
            section.html.0
        );
        let most = phase(3.6);
        assert_eq!(
            throughput_over_time(&most, "x", None).series[0]
                .points
                .len(),
            4
        );
    }

    /// Issue 63: an interval's percentile is drawn only where the interval holds enough samples
    /// for it (of 50 operations the p99.9 is their maximum).
    #[test]
    fn interval_percentiles_need_their_samples() {
        let mut r = run(1000.0, 3_000, 0, false);
        let ph = &mut r.phases[0];
        ph.intervals = [50u64, 500, 5000]
            .iter()
            .enumerate()
            .map(|(i, ok)| scalebench_measure::result::IntervalResult {
                start_s: i as f64,
                operations: [(
                    "READ".to_string(),
                    IntervalOp {
                        ok: *ok,
                        p50_us: 1.0,
                        p99_us: 2.0,
                        p99_9_us: 3.0,
                        ..Default::default()
                    },
                )]
                .into(),
            })
            .collect();
        let lat = latency_over_time(ph, "x", "READ");
        let drawn = |name: &str| -> Vec<f64> {
            lat.series
                .iter()
                .find(|s| s.name == name)
                .map_or(Vec::new(), |s| s.points.iter().map(|p| p.0).collect())
        };
        assert_eq!(drawn("p50"), [0.0, 1.0, 2.0]);
        assert_eq!(drawn("p99"), [1.0, 2.0]);
        assert_eq!(drawn("p99.9"), [2.0]);
    }
}
