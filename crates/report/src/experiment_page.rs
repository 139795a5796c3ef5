//! The page of an experiment in a results database: the cells with their intervals, the scaling
//! charts (threads, nodes, read/write mix), the recommendation per data size, resources and elastic
//! transitions. One function per chart, named after it; the session reads the data from its store.

use std::collections::BTreeMap;

use scalebench_measure::RunResult;

use crate::cells::{recommend, CellStats, Summary};
use crate::chart::{Chart, Kind, Scale, Series};
use scalebench_elastic::service_level::Verdict;
use scalebench_elastic::Events;

use crate::elastic_page::markers_of;
use maud::{html, Markup};

use crate::html::{bars, note, slug, table, Page, Section};
use crate::run_page::{run_sections, RunExtras};
use crate::stored::{ElasticRow, SizeMeans, StoredRun, CLUSTER_SIZE, DATA_SIZE};

/// An experiment as the results store holds it: everything its page's charts read.
pub struct ExperimentData {
    pub name: String,
    /// First repetitions left out of the cell figures.
    pub discard: u32,
    pub cells: Vec<CellStats>,
    pub runs: Vec<StoredRun>,
    /// (cell, repetition, result) of the runs that succeeded.
    pub results: Vec<(String, u32, RunResult)>,
    pub elastic: Vec<ElasticRow>,
    /// Dory's performance table per cell that has one: each stable size, over the repetitions.
    pub sizes: Vec<(String, Vec<SizeMeans>)>,
}

impl ExperimentData {
    /// A cell's `database/configuration/workload` and its swept parameters, from the columns the
    /// store keeps for its runs.
    fn cell_params(&self, cell: &str) -> (String, BTreeMap<String, String>) {
        match self.runs.iter().find(|r| r.cell == cell) {
            Some(r) => (
                format!("{}/{}/{}", r.database, r.configuration, r.workload),
                r.params.clone(),
            ),
            None => (cell.to_string(), BTreeMap::new()),
        }
    }

    /// The successful runs of `cell`.
    fn results_of<'a>(&'a self, cell: &'a str) -> impl Iterator<Item = &'a RunResult> + 'a {
        self.results
            .iter()
            .filter(move |r| r.0 == cell)
            .map(|r| &r.2)
    }

    /// The cluster size `cell` ran on (from its first run's deployment), if it ran on one.
    fn nodes_of(&self, cell: &str) -> Option<usize> {
        self.results_of(cell)
            .next()
            .and_then(|r| r.deployment.as_ref())
            .map(|d| d.nodes)
    }
}

/// The page of an experiment: its cells, the scaling charts and the recommendation, resources,
/// elastic transitions.
pub fn page(data: &ExperimentData) -> Page {
    let mut page = Page {
        title: format!("scalebench experiment: {}", data.name),
        banners: threshold_banners(data),
        ..Default::default()
    };
    page.sections.push(cells_section(data));
    page.sections.extend(consistency_section(data));
    let threads = thread_series(data);
    let scaling = Section {
        heading: "Scaling".into(),
        html: recommendation_table(data),
        charts: vec![
            threads_throughput_chart(&threads),
            threads_latency_chart(&threads),
            nodes_throughput_chart(data),
            read_write_chart(data),
        ],
    };
    // The recommendation table stands on its own: it needs no chart to have data.
    if !scaling.html.0.is_empty() || scaling.charts.iter().any(|c| !c.is_empty()) {
        page.sections.push(scaling);
    }
    page.sections.push(resources_section(data));
    if !data.elastic.is_empty() {
        page.sections.push(elastic_section(data));
    }
    page
}

/// The runs that broke a threshold (`[procedure] thresholds`, `experiment --threshold`), each
/// with the thresholds it broke; the first 10, then how many more.
fn threshold_banners(data: &ExperimentData) -> Vec<String> {
    let broke: Vec<String> = data
        .results
        .iter()
        .filter_map(|(cell, rep, r)| {
            let broken: Vec<&str> = r
                .thresholds
                .as_ref()?
                .broken()
                .map(|v| v.threshold.as_str())
                .collect();
            (!broken.is_empty()).then(|| format!("{cell} #{rep}: {}", broken.join(", ")))
        })
        .collect();
    if broke.is_empty() {
        return Vec::new();
    }
    let mut banner = format!(
        "Service level missed: {} runs broke a threshold: {}",
        broke.len(),
        broke[..broke.len().min(10)].join("; ")
    );
    if broke.len() > 10 {
        banner.push_str(&format!("; and {} more", broke.len() - 10));
    }
    vec![banner + "."]
}

/// The `results show` table, with throughput and space per record as bars with 95% intervals.
fn cells_section(data: &ExperimentData) -> Section {
    let summary: Vec<Vec<String>> = data
        .cells
        .iter()
        .map(|c| {
            let t = c.throughput.as_ref();
            vec![
                c.cell.clone(),
                t.map_or(0, |t| t.n).to_string(),
                t.map_or("-".into(), |t| format!("{:.1}", t.mean)),
                match t {
                    Some(t) => t.ci95.map_or("n/a".into(), |c| format!("{c:.1}")),
                    None => "-".into(),
                },
                c.latency
                    .iter()
                    .map(|(op, (_, p99, _))| format!("{op} {p99:.0}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.bytes_per_record
                    .as_ref()
                    .map_or("-".into(), |b| format!("{:.0}", b.mean)),
                c.bytes_per_record_as_inserted
                    .as_ref()
                    .map_or("-".into(), |b| format!("{:.0}", b.mean)),
                format!("{} of {}", c.operations_failed, c.operations_ok + c.operations_failed),
                {
                    let mut notes = format!("{} client-bound, {} failed", c.client_bound, c.failed_runs);
                    if c.flagged_runs > 0 {
                        notes += &format!(
                            ", FAILURES: {} runs over the failed-operations threshold (not in the figures)",
                            c.flagged_runs
                        );
                    }
                    notes
                },
            ]
        })
        .collect();
    let discard = data.discard;
    let mut section = Section {
        heading: "Cells".into(),
        html: html! {
            (note(&format!(
                "Means over repetitions{}; ± is the half-width of the 95% confidence interval (Student t).",
                if discard > 0 { format!(" after discarding the first {discard}") } else { String::new() },
            )))
            (table(&["cell", "n", "rate mean", "± 95% CI", "p99 us per operation", "bytes/record", "as inserted", "failed operations", "notes"], &summary))
        },
        charts: vec![cells_throughput_chart(data)],
    };
    if let Some(space) = cells_space_chart(data) {
        section.charts.push(space);
    }
    section
}

/// The cells' consistency beside their throughput: PBS's t-visibility, one line per cell, and each
/// cell's stale fraction (every probe read of its counted repetitions pooled).
fn consistency_section(data: &ExperimentData) -> Option<Section> {
    let probed: Vec<&CellStats> = data
        .cells
        .iter()
        .filter(|c| c.consistency.is_some())
        .collect();
    if probed.is_empty() {
        return None;
    }
    let rows: Vec<Vec<String>> = probed
        .iter()
        .map(|c| {
            let k = c.consistency.as_ref().expect("filtered");
            vec![
                c.cell.clone(),
                c.throughput
                    .as_ref()
                    .map_or("-".into(), |t| format!("{:.1}", t.mean)),
                match &k.stale {
                    Ok(s) => format!(
                        "{:.2}% ({:.2}-{:.2}%; {} of {} at {} ms)",
                        100.0 * s.fraction,
                        100.0 * s.ci_low,
                        100.0 * s.ci_high,
                        s.stale,
                        s.reads,
                        s.delay_ms
                    ),
                    Err(why) => format!("n/a: {why}"),
                },
                format!("{} of {}", k.stale_reads, k.probe_reads),
                format!("{} of {}", k.stale_writes, k.followed_writes),
                k.lag_p99_us.map_or("-".into(), |w| format!("{w:.0}")),
                k.window_p99_us.map_or("-".into(), |w| format!("{w:.0}")),
                c.fault_windows.to_string(),
            ]
        })
        .collect();
    let lines: Vec<(
        String,
        Vec<scalebench_measure::consistency::VisibilityPoint>,
    )> = probed
        .iter()
        .map(|c| {
            let phases = counted_phases(data, &c.cell);
            (
                c.cell.clone(),
                crate::consistency_page::pooled_visibility(phases.into_iter()),
            )
        })
        .collect();
    Some(Section {
        heading: "Consistency".into(),
        html: html! {
            (note("What each cell's reads saw while it ran (the consistency probe, docs/consistency.md), the repetitions pooled. Stale share: of the reads at the first delay that at least half of its reads kept, those that returned an older version than the write just acknowledged (at most one read per probe write, so a proportion with its 95% Wilson interval). All reads, the chaser's included, are counted apart: a stale write is read again and again. The read-after-write lag (YCSB++: the acknowledgement to the first read returning the write) and the staleness window (Bermbach & Tai: the write's start to the last read returning an older version, 0 without one) are over every write seen."))
            (table(
                &["cell", "rate mean", "stale share (95% CI)", "stale reads of all", "writes with a stale read", "read-after-write lag p99 us", "staleness window p99 us", "node pauses"],
                &rows
            ))
        },
        charts: crate::consistency_page::visibility_chart("cells", &lines)
            .into_iter()
            .collect(),
    })
}

/// The measured phases of a cell's counted repetitions.
fn counted_phases<'a>(
    data: &'a ExperimentData,
    cell: &str,
) -> Vec<&'a scalebench_measure::PhaseResult> {
    data.results
        .iter()
        .filter(|(c, rep, _)| c == cell && *rep > data.discard)
        .filter_map(|(_, _, r)| r.phases.last())
        .collect()
}

/// Mean throughput of each cell with its 95% confidence interval.
fn cells_throughput_chart(data: &ExperimentData) -> Chart {
    let rates: Vec<(String, f64, f64)> = data
        .cells
        .iter()
        .filter_map(|c| {
            let t = c.throughput.as_ref()?;
            Some((c.cell.clone(), t.mean, t.ci95.unwrap_or(0.0)))
        })
        .collect();
    bars(
        "cells-throughput",
        "Throughput per cell (mean, 95% CI)",
        "operations/s",
        &rates,
    )
}

/// Bytes on disk per record of each cell (mean, 95% CI), where the cells measured space: after the
/// measured phase's steps (a load's: settled) and, for loads, as inserted beside it.
fn cells_space_chart(data: &ExperimentData) -> Option<Chart> {
    let of = |figure: fn(&crate::cells::CellStats) -> Option<&crate::cells::Summary>| {
        data.cells
            .iter()
            .filter_map(|c| {
                let b = figure(c)?;
                Some((c.cell.clone(), b.mean, b.ci95.unwrap_or(0.0)))
            })
            .collect::<Vec<_>>()
    };
    let settled = of(|c| c.bytes_per_record.as_ref());
    let inserted = of(|c| c.bytes_per_record_as_inserted.as_ref());
    (!settled.is_empty()).then(|| {
        if inserted.is_empty() {
            return bars(
                "cells-space",
                "Space per record (mean, 95% CI)",
                "bytes per record",
                &settled,
            );
        }
        // The two figures of each cell side by side, as one series of bars.
        let both: Vec<(String, f64, f64)> = settled
            .iter()
            .flat_map(|(cell, mean, ci)| {
                let as_inserted = inserted
                    .iter()
                    .find(|(c, ..)| c == cell)
                    .map(|(_, m, ci)| (format!("{cell} (as inserted)"), *m, *ci));
                std::iter::once((format!("{cell} (settled)"), *mean, *ci)).chain(as_inserted)
            })
            .collect();
        bars(
            "cells-space",
            "Space per record, settled and as inserted (mean, 95% CI)",
            "bytes per record",
            &both,
        )
    })
}

/// A line chart with one series per name (of at least two points), sorted along x.
fn lines(
    id: &str,
    title: &str,
    x: &str,
    y: &str,
    data: BTreeMap<String, Vec<(f64, f64)>>,
) -> Chart {
    let mut c = Chart::new(id, title, x, y);
    for (name, mut points) in data {
        if points.len() >= 2 {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            c.series.push(Series::new(name, points));
        }
    }
    c
}

/// One point per thread count of a setup (everything but `threads` equal).
struct ThreadPoint {
    threads: f64,
    throughput: f64,
    /// The median latency over the cell's operations (their p50s averaged), for the latency chart.
    median_latency_us: f64,
    /// The knee's latency (`scalebench_stats::knee`).
    mean_latency_us: f64,
}

/// A setup's points by thread count, and its latency knee (Wegert's rule: the last thread count
/// from which doubling still raised throughput by a larger factor than mean latency).
struct ThreadSetup {
    points: Vec<ThreadPoint>,
    knee_threads: f64,
}

/// The cells that swept `threads`, grouped into setups, each with its latency knee. The knee is a
/// marker on the page, not part of the series' name: the CSV holds data only.
fn thread_series(data: &ExperimentData) -> BTreeMap<String, ThreadSetup> {
    let mut setups: BTreeMap<String, Vec<ThreadPoint>> = BTreeMap::new();
    for c in &data.cells {
        let Some(t) = &c.throughput else { continue };
        let (base, params) = data.cell_params(&c.cell);
        let Some(threads) = params.get("threads").and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        let rest: Vec<String> = params
            .iter()
            .filter(|(k, _)| k.as_str() != "threads")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let p50s: Vec<f64> = c.latency.values().map(|l| l.0).collect();
        setups
            .entry(format!("{base} {}", rest.join(",")).trim().to_string())
            .or_default()
            .push(ThreadPoint {
                threads,
                throughput: t.mean,
                median_latency_us: scalebench_stats::mean(&p50s),
                mean_latency_us: c.mean_latency_us.unwrap_or(0.0),
            });
    }
    setups
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.threads.total_cmp(&b.threads));
            let rates: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p.throughput, p.mean_latency_us))
                .collect();
            let knee = scalebench_stats::knee(&rates).unwrap_or(points.len() - 1);
            let knee_threads = points[knee].threads;
            (
                name,
                ThreadSetup {
                    points,
                    knee_threads,
                },
            )
        })
        .collect()
}

/// A marker at each thread count that is a setup's knee, labelled with the setups whose knee it
/// is (one label for several: on a short sweep they share a thread count, and their labels would
/// be drawn over each other).
fn knee_markers(setups: &BTreeMap<String, ThreadSetup>) -> Vec<(f64, String)> {
    let mut at: Vec<(f64, Vec<&str>)> = Vec::new();
    for (name, s) in setups {
        match at.iter_mut().find(|(t, _)| *t == s.knee_threads) {
            Some((_, names)) => names.push(name),
            None => at.push((s.knee_threads, vec![name])),
        }
    }
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.into_iter()
        .map(|(threads, names)| (threads, format!("knee at {threads}: {}", names.join(", "))))
        .collect()
}

fn threads_throughput_chart(setups: &BTreeMap<String, ThreadSetup>) -> Chart {
    let series = setups
        .iter()
        .map(|(name, s)| {
            (
                name.clone(),
                s.points.iter().map(|p| (p.threads, p.throughput)).collect(),
            )
        })
        .collect();
    let mut chart = lines(
        "threads-throughput",
        "Throughput against threads",
        "threads",
        "operations/s",
        series,
    );
    chart.markers = knee_markers(setups);
    chart
}

fn threads_latency_chart(setups: &BTreeMap<String, ThreadSetup>) -> Chart {
    let series = setups
        .iter()
        .map(|(name, s)| {
            let line = s
                .points
                .iter()
                .map(|p| (p.threads, p.median_latency_us))
                .collect();
            (name.clone(), line)
        })
        .collect();
    let mut chart = lines(
        "threads-latency",
        "Median latency against threads",
        "threads",
        "p50 microseconds",
        series,
    );
    chart.markers = knee_markers(setups);
    chart
}

/// Swaminathan's scaling view: one line per database x configuration x workload x other
/// parameters (data size, threads), along which only the cluster size varies.
fn nodes_throughput_chart(data: &ExperimentData) -> Chart {
    let mut setups: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for c in &data.cells {
        let (Some(t), Some(nodes)) = (&c.throughput, data.nodes_of(&c.cell)) else {
            continue;
        };
        let (base, params) = data.cell_params(&c.cell);
        let others: Vec<String> = params
            .iter()
            .filter(|(k, _)| k.as_str() != CLUSTER_SIZE)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        setups
            .entry(format!("{base} {}", others.join(",")).trim().to_string())
            .or_default()
            .push((nodes as f64, t.mean));
    }
    lines(
        "nodes-throughput",
        "Throughput against cluster size",
        "nodes",
        "operations/s",
        setups,
    )
}

/// Swaminathan's recommendation table (studies.md, section 3): one row per workload, cluster size
/// and other swept values, one column per data size (`[[data]]`, record size x record count), and
/// in each cell the database (and configuration) of highest mean throughput there, or a tie where
/// the 95% intervals overlap. Data sizes are never candidates against each other (a smaller record
/// would always win). Cells without a cluster size (no deployment) are compared too. Empty when no
/// cell compares two candidates.
fn recommendation_table(data: &ExperimentData) -> Markup {
    type Row = Vec<String>;
    let mut columns: Vec<String> = Vec::new();
    let mut points: BTreeMap<(Row, String), Vec<(String, Summary)>> = BTreeMap::new();
    for c in &data.cells {
        let Some(t) = &c.throughput else {
            continue;
        };
        let (base, mut params) = data.cell_params(&c.cell);
        let (setup, workload) = base.rsplit_once('/').unwrap_or(("", &base));
        let column = params
            .remove(DATA_SIZE)
            .unwrap_or_else(|| "all data".into());
        if !columns.contains(&column) {
            columns.push(column.clone());
        }
        // Workload, cluster size (swept, or the deployment's; none without one), the other
        // swept values: a column each.
        let nodes = params
            .remove(CLUSTER_SIZE)
            .or_else(|| data.nodes_of(&c.cell).map(|n| n.to_string()))
            .unwrap_or_default();
        let others: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let row: Row = vec![workload.to_string(), nodes, others.join(" ")];
        points
            .entry((row, column))
            .or_default()
            .push((setup.trim_end_matches("/default").to_string(), t.clone()));
    }
    if !points.values().any(|c| c.len() > 1) {
        return Markup::default();
    }
    let rows: std::collections::BTreeSet<&Row> = points.keys().map(|(r, _)| r).collect();
    // A column only where some row has a value: no "nodes" column without a deployment.
    let shown: Vec<bool> = (0..3)
        .map(|i| i == 0 || rows.iter().any(|r| !r[i].is_empty()))
        .collect();
    let body: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| {
            let mut cells: Vec<String> = row
                .iter()
                .zip(&shown)
                .filter(|(_, shown)| **shown)
                .map(|(v, _)| if v.is_empty() { "-".into() } else { v.clone() })
                .collect();
            cells.extend(columns.iter().map(|column| {
                points
                    .get(&(row.clone(), column.clone()))
                    .map_or("-".into(), |candidates| {
                        let all = candidates
                            .iter()
                            .map(|(name, t)| {
                                let ci = t.ci95.map_or("n/a".into(), |c| format!("{c:.0}"));
                                format!("{name} {:.0} ± {ci}", t.mean)
                            })
                            .collect::<Vec<_>>()
                            .join("; ");
                        format!("{} ({all})", recommend(candidates).unwrap_or_default())
                    })
            }));
            cells
        })
        .collect();
    let mut header: Vec<&str> = ["workload", "nodes", "parameters"]
        .into_iter()
        .zip(&shown)
        .filter(|(_, shown)| **shown)
        .map(|(h, _)| h)
        .collect();
    header.extend(columns.iter().map(String::as_str));
    html! {
        h3 { "Recommendation" }
        (note("Per workload, cluster size and other parameters (rows) and data size (columns): the database (and configuration) of highest mean throughput, or a tie where 95% confidence intervals overlap; each cell's candidates follow with mean ± 95% CI (Swaminathan's recommendation table)."))
        (table(&header, &body))
    }
}

/// Dijkshoorn's chart of record (studies.md, section 1): each configuration's SELECT throughput
/// against its INSERT and against its UPDATE throughput (one-operation cells), beside the diagonal,
/// log-log; cells that mix reads and writes are drawn as their own series.
/// A point and what it stands for.
type LabelledPoint = ((f64, f64), String);

fn read_write_chart(data: &ExperimentData) -> Chart {
    // Series -> points, each labelled with the cell (or swept values) it stands for.
    let mut scatter: BTreeMap<String, Vec<LabelledPoint>> = BTreeMap::new();
    // One-operation cells by what they share but the workload: operation -> rate.
    let mut single_ops: BTreeMap<(String, String), BTreeMap<String, f64>> = BTreeMap::new();
    for c in &data.cells {
        let Some(t) = &c.throughput else { continue };
        let (base, params) = data.cell_params(&c.cell);
        // Mean over the cell's runs of the summed throughput of these operations.
        let mean_of = |ops: &[&str]| -> f64 {
            let per_run: Vec<f64> = data
                .results_of(&c.cell)
                .filter_map(|r| r.phases.last())
                .map(|p| {
                    ops.iter()
                        .filter_map(|o| p.operations.get(*o))
                        .map(|o| o.throughput_ops_s)
                        .sum::<f64>()
                })
                .collect();
            scalebench_stats::mean(&per_run)
        };
        let (reads, writes) = (
            mean_of(&["READ", "SCAN"]),
            mean_of(&["UPDATE", "INSERT", "READ-MODIFY-WRITE", "BATCH-INSERT"]),
        );
        let db = base.split('/').next().unwrap_or("").to_string();
        if reads > 0.0 && writes > 0.0 {
            scatter
                .entry(format!("{db} (mixed cells)"))
                .or_default()
                .push(((writes, reads), c.cell.clone()));
        }
        if let [op] = c.latency.keys().collect::<Vec<_>>().as_slice() {
            let config = base.split('/').nth(1).unwrap_or("");
            let swept: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            single_ops
                .entry((db, format!("{config}/{}", swept.join(","))))
                .or_default()
                .insert(op.to_string(), t.mean);
        }
    }
    for ((db, setup), ops) in &single_ops {
        let Some(read) = ops.get("READ") else {
            continue;
        };
        for write in ["INSERT", "UPDATE"] {
            if let Some(w) = ops.get(write) {
                scatter
                    .entry(format!("{db}: SELECT against {write}"))
                    .or_default()
                    .push(((*w, *read), setup.clone()));
            }
        }
    }
    let mut chart = Chart::new(
        "read-write",
        "Read against write throughput per cell (log-log)",
        "write operations/s",
        "read operations/s",
    );
    chart.kind = Kind::Points;
    chart.diagonal = true;
    chart.x_scale = Scale::Log10;
    chart.y_scale = Scale::Log10;
    chart.series = scatter
        .into_iter()
        .map(|(name, points)| {
            let (points, labels) = points.into_iter().unzip();
            Series {
                labels,
                ..Series::new(name, points)
            }
        })
        .collect();
    chart
}

/// The "bounded by" verdict of every run, and the client's CPU of each cell's first run.
fn resources_section(data: &ExperimentData) -> Section {
    let verdicts: Vec<Vec<String>> = data
        .runs
        .iter()
        .map(|r| {
            vec![
                format!("{} #{}", r.cell, r.repetition),
                r.status.clone(),
                r.bounded_by.clone().unwrap_or_else(|| "-".into()),
                if r.client_bound {
                    "lower bound".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let mut section = Section {
        heading: "Resources and \"bounded by\"".into(),
        html: table(&["run", "status", "bounded by", "client"], &verdicts),
        charts: Vec::new(),
    };
    let mut seen = std::collections::BTreeSet::new();
    for (cell, rep, r) in &data.results {
        if !seen.insert(cell.clone()) || seen.len() > 12 {
            continue;
        }
        if let Some(p) = r.phases.last() {
            let id = format!("res-{}-{rep}", slug(cell));
            let measured = RunResult {
                phases: vec![p.clone()],
                ..r.clone()
            };
            section.charts.extend(
                run_sections(&measured, &id, &RunExtras::default())
                    .into_iter()
                    .flat_map(|s| s.charts)
                    .filter(|c| c.id.ends_with("-cpu"))
                    .map(|mut c| {
                        c.title = format!("{cell} #{rep}: CPU (cores busy)");
                        c
                    }),
            );
        }
    }
    section
}

/// The elastic runs: their transitions and scores, and each run's timeline with its events.
/// Dory's performance table (studies.md, section 5) of each cell whose runs measured stable sizes:
/// per size, the mean and deviation of request-set times (means over the repetitions) and the
/// scalability (Avg_2N - Avg_N) / Avg_N against the size before, where nodes, records, threads and
/// the set size all doubled.
fn experiment_sizes_table(data: &ExperimentData) -> Markup {
    let rows: Vec<Vec<String>> = data
        .sizes
        .iter()
        .flat_map(|(cell, sizes)| {
            sizes.iter().map(move |s| {
                vec![
                    cell.clone(),
                    s.nodes.to_string(),
                    s.records.to_string(),
                    s.in_flight.to_string(),
                    s.set_size.to_string(),
                    format!("{:.3}", s.mean_s),
                    format!("{:.3}", s.sd_s),
                    s.scalability.map_or("-".into(), |v| format!("{v:+.3}")),
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return Markup::default();
    }
    html! {
        h3 { "Performance per size" }
        (note("Each stable size's request-set time (mean and standard deviation, means over the repetitions) and the scalability (Avg_2N - Avg_N) / Avg_N against the size before, where nodes, records, threads and the set size all doubled (Dory's table; 0 is perfect, negative better than linear)."))
        (table(
            &["cell", "nodes", "records", "in flight (T)", "set size (R)", "mean s", "sd s", "scalability"],
            &rows
        ))
    }
}

/// An event against the service level: "met", or "missed:" and each threshold it broke.
fn verdict_text(json: &str) -> String {
    let Ok(v) = serde_json::from_str::<Verdict>(json) else {
        return "-".into();
    };
    if v.passed {
        return "met".into();
    }
    let broken: Vec<String> = v
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| match c.value {
            Some(x) => format!("{} {x:.3} > {}", c.figure, c.limit),
            None => format!("{} not measured (limit {})", c.figure, c.limit),
        })
        .collect();
    format!("missed: {}", broken.join(", "))
}

/// Repetitions of one operation on one row: met, judged, what each missed one broke, and each
/// judged figure's values (in the verdict's order).
type Judged = (usize, usize, Vec<String>, Vec<(String, Vec<f64>)>);

/// The judged figures of an entry, each the mean over its repetitions: "p99_impact 1.84, ...".
fn figures_text(figures: &[(String, Vec<f64>)]) -> String {
    figures
        .iter()
        .map(|(figure, values)| {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            if mean.fract() == 0.0 {
                format!("{figure} {mean:.0}")
            } else {
                format!("{figure} {mean:.2}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Issue 42, point 5: operation x database (the cell without its action), each entry the
/// repetitions that met the service level and what the others broke.
fn service_level_matrix(data: &ExperimentData) -> Markup {
    let judged: Vec<&ElasticRow> = data
        .elastic
        .iter()
        .filter(|e| e.verdict.is_some())
        .collect();
    if judged.is_empty() {
        return Markup::default();
    }
    let mut actions: Vec<&str> = Vec::new();
    let mut by_row: BTreeMap<String, BTreeMap<&str, Judged>> = BTreeMap::new();
    for e in &judged {
        let (base, mut params) = data.cell_params(&e.cell);
        params.remove("action");
        let row = std::iter::once(base)
            .chain(params.iter().map(|(k, v)| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(" ");
        if !actions.contains(&e.action.as_str()) {
            actions.push(&e.action);
        }
        let entry = by_row.entry(row).or_default().entry(&e.action).or_default();
        let json = e.verdict.as_deref().unwrap_or_default();
        let text = verdict_text(json);
        for check in serde_json::from_str::<Verdict>(json)
            .map(|v| v.checks)
            .unwrap_or_default()
        {
            let Some(value) = check.value else { continue };
            match entry.3.iter_mut().find(|(f, _)| *f == check.figure) {
                Some((_, values)) => values.push(value),
                None => entry.3.push((check.figure.clone(), vec![value])),
            }
        }
        entry.1 += 1;
        if text == "met" {
            entry.0 += 1;
        } else {
            entry.2.push(format!("#{} {text}", e.repetition));
        }
    }
    let header: Vec<&str> = std::iter::once("database / configuration / workload")
        .chain(actions.iter().copied())
        .collect();
    let rows: Vec<Vec<String>> = by_row
        .iter()
        .map(|(row, per_action)| {
            std::iter::once(row.clone())
                .chain(actions.iter().map(|a| match per_action.get(a) {
                    None => "-".into(),
                    Some((met, all, _, figures)) if met == all => {
                        format!("met {met}/{all}: {}", figures_text(figures))
                    }
                    Some((met, all, missed, figures)) => format!(
                        "MISSED ({met}/{all} met) {}; means: {}",
                        missed.join("; "),
                        figures_text(figures)
                    ),
                }))
                .collect()
        })
        .collect();
    html! {
        h3 { "Service level per operation" }
        (table(&header, &rows))
    }
}

fn elastic_section(data: &ExperimentData) -> Section {
    let judged = data.elastic.iter().any(|e| e.verdict.is_some());
    let rows: Vec<Vec<String>> = data
        .elastic
        .iter()
        .map(|e| {
            let mut row = vec![
                format!("{} #{}", e.cell, e.repetition),
                e.step.to_string(),
                e.action.clone(),
                format!("{} -> {}", e.nodes_before, e.nodes_after),
                e.stabilisation_s
                    .map_or("not stable".into(), |s| format!("{s:.1}")),
                e.elasticity.map_or("-".into(), |v| format!("{v:.1}")),
            ];
            if judged {
                row.push(e.verdict.as_deref().map_or("-".into(), verdict_text));
            }
            row
        })
        .collect();
    let mut header = vec![
        "run",
        "step",
        "action",
        "nodes",
        "stabilisation s",
        "elasticity",
    ];
    if judged {
        header.push("service level");
    }
    let mut section = Section {
        heading: "Elasticity".into(),
        html: html! {
            (service_level_matrix(data))
            (table(&header, &rows))
            (experiment_sizes_table(data))
        },
        charts: Vec::new(),
    };
    // The stored run under load is the first step's.
    for e in data.elastic.iter().filter(|e| e.step == 1) {
        let Some((_, _, r)) = data
            .results
            .iter()
            .find(|(c, rep, _)| *c == e.cell && *rep == e.repetition)
        else {
            continue;
        };
        let events: Events = serde_json::from_str(&e.events).unwrap_or_default();
        let id = format!("elastic-{}-{}", slug(&e.cell), e.repetition);
        section.charts.extend(
            run_sections(r, &id, &markers_of(&events))
                .into_iter()
                .flat_map(|s| s.charts)
                .filter(|c| c.id.ends_with("-request-sets") || c.id.ends_with("-throughput"))
                .map(|mut c| {
                    c.title = format!("{} #{}: {}", e.cell, e.repetition, c.title);
                    c
                }),
        );
    }
    section
}
