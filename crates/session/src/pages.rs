//! The report page of a result file, an elastic result or an experiment in a results database:
//! what `scalebench report` writes, built from the file's typed contents.

use std::collections::BTreeMap;
use std::path::Path;

use scalebench_measure::RunResult;
use scalebench_report::chart::{Chart, Kind, Scale, Series};
use scalebench_report::html::{
    bars, run_banners, run_sections, slug, table, Page, RunExtras, Section,
};

use crate::error::SessionError;
use crate::experiment::spec::CLUSTER_SIZE;
use crate::experiment::stats::{recommend, Summary};
use crate::experiment::store::Store;
use crate::experiment::{cells, discard_first_of};

/// A result file (JSON) as a run; bad input (exit 2) when it is none.
pub fn read_result(path: &Path) -> Result<RunResult, SessionError> {
    RunResult::read(path).map_err(|e| SessionError::Usage(e.to_string()))
}

/// The page of `input`: a results database (SQLite; `experiment` chooses among several), an
/// elastic result or a run result.
pub fn page_of(input: &Path, experiment: Option<&str>) -> Result<Page, SessionError> {
    let mut head = [0u8; 16];
    let is_sqlite = std::fs::File::open(input)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && head.starts_with(b"SQLite format 3");
    if is_sqlite {
        return experiment_page(input, experiment);
    }
    let text = std::fs::read_to_string(input)
        .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        SessionError::Usage(format!("{}: not a result file ({e})", input.display()))
    })?;
    if json["schema"] == crate::elastic::SCHEMA {
        return elastic_page(&json, input);
    }
    let r = read_result(input)?;
    Ok(Page {
        title: format!("scalebench run: {}", input.display()),
        banners: run_banners(&r),
        sections: run_sections(&r, "run", &RunExtras::default()),
    })
}

/// Vertical markers (x, label) and shaded ranges (from, to, label) of a chart.
type Markers = (Vec<(f64, String)>, Vec<(f64, f64, String)>);

fn event_markers(events: &serde_json::Value) -> Markers {
    let t = |k: &str| events[k].as_f64();
    let mut markers = Vec::new();
    for (k, label) in [
        ("scale_issued_s", "scale command"),
        ("scale_done_s", "node joined/left"),
        ("transfers_done_s", "transfers done"),
        ("stable_s", "stable"),
    ] {
        if let Some(v) = t(k) {
            markers.push((v, label.to_string()));
        }
    }
    let bands = match (t("scale_issued_s"), t("stable_s")) {
        (Some(a), Some(b)) => vec![(a, b, "transition".to_string())],
        _ => Vec::new(),
    };
    (markers, bands)
}

fn elastic_page(json: &serde_json::Value, input: &std::path::Path) -> Result<Page, SessionError> {
    let mut page = Page {
        title: format!("scalebench elastic: {}", input.display()),
        ..Default::default()
    };
    if let Some(rows) = json["sizes"].as_array().filter(|r| !r.is_empty()) {
        let cell = |r: &serde_json::Value, k: &str| match r[k].as_f64() {
            Some(v) if v.fract() != 0.0 => format!("{v:.4}"),
            Some(_) => r[k].to_string(),
            None => "-".into(),
        };
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                [
                    "nodes",
                    "records",
                    "in_flight",
                    "set_size",
                    "sets",
                    "mean_s",
                    "sd_s",
                    "scalability",
                ]
                .iter()
                .map(|k| cell(r, k))
                .collect()
            })
            .collect();
        page.sections.push(Section {
            heading: "Performance per cluster size (Dory)".into(),
            html: format!(
                "<p class=\"note\">Request-set time of each stable state; scalability = (Avg_2N - Avg_N) / Avg_N where nodes, records, threads and set size all doubled.</p>{}",
                table(
                    &["nodes", "records", "in flight", "set size", "sets", "mean s", "sd s", "scalability"],
                    &rows
                )
            ),
            charts: Vec::new(),
        });
    }
    for step in json["steps"].as_array().into_iter().flatten() {
        let (markers, bands) = event_markers(&step["events"]);
        let mut figures = vec![
            ("step".to_string(), step["step"].to_string()),
            ("action".into(), step["action"].to_string()),
            (
                "nodes".into(),
                format!("{} -> {}", step["nodes_before"], step["nodes_after"]),
            ),
        ];
        if let Some(n) = step["not_stable"].as_str() {
            figures.push(("not stable".into(), n.to_string()));
        }
        for (k, v) in step["scores"].as_object().into_iter().flatten() {
            let text = match v.as_f64() {
                Some(x) if x.fract() != 0.0 => format!("{x:.6}").trim_end_matches('0').to_string(),
                _ => v.to_string(),
            };
            figures.push((k.clone(), text));
        }
        let extras = RunExtras {
            markers,
            bands,
            figures,
        };
        let id = format!("step{}", step["step"]);
        if step["run"].is_null() {
            // Unloaded: the transition's figures alone.
            let rows: Vec<Vec<String>> = extras
                .figures
                .iter()
                .map(|(k, v)| vec![k.clone(), v.clone()])
                .collect();
            page.sections.push(Section {
                heading: format!("step {} (no load)", step["step"]),
                html: table(&["figure", "value"], &rows),
                charts: Vec::new(),
            });
            continue;
        }
        let run: RunResult = serde_json::from_value(step["run"].clone())
            .map_err(|e| SessionError::Usage(format!("{}: {e}", input.display())))?;
        page.banners.extend(run_banners(&run));
        page.sections.extend(run_sections(&run, &id, &extras));
    }
    Ok(page)
}

/// Cell names are `database/configuration/workload[/k=v,k=v]`: the swept parameters.
fn cell_params(cell: &str) -> (String, BTreeMap<String, String>) {
    let parts: Vec<&str> = cell.splitn(4, '/').collect();
    let base = parts[..parts.len().min(3)].join("/");
    let params = parts
        .get(3)
        .map(|p| {
            p.split(',')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default();
    (base, params)
}

fn experiment_page(input: &Path, experiment: Option<&str>) -> Result<Page, SessionError> {
    let store = Store::open_read_only(input).map_err(SessionError::Usage)?;
    let names: Vec<String> = store
        .experiments()
        .map_err(SessionError::Failed)?
        .into_iter()
        .map(|e| e.0)
        .collect();
    let name = match (experiment, names.as_slice()) {
        (Some(n), _) => n.to_string(),
        (None, [only]) => only.clone(),
        (None, _) => {
            return Err(SessionError::Usage(format!(
                "{} holds {} experiments ({}): choose one with --experiment",
                input.display(),
                names.len(),
                names.join(", ")
            )))
        }
    };
    let discard = discard_first_of(&store, &name);
    let cells = cells(&store, &name, discard)?;
    let runs = store.runs(&name, true).map_err(SessionError::Failed)?;
    let results: Vec<(String, u32, RunResult)> = runs
        .iter()
        .filter(|r| r.status == "ok")
        .filter_map(|r| {
            let json = r.result.as_ref()?;
            Some((
                r.cell.clone(),
                r.repetition,
                serde_json::from_str(json).ok()?,
            ))
        })
        .collect();
    let mut page = Page {
        title: format!("scalebench experiment: {name}"),
        ..Default::default()
    };
    // Summary: the `results show` table, and bars with confidence intervals.
    let summary: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let t = c.throughput.as_ref();
            vec![
                c.cell.clone(),
                t.map_or(0, |t| t.n).to_string(),
                t.map_or("-".into(), |t| format!("{:.1}", t.mean)),
                t.and_then(|t| t.ci95)
                    .map_or("-".into(), |c| format!("{c:.1}")),
                c.latency
                    .iter()
                    .map(|(op, (_, p99, _))| format!("{op} {p99:.0}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.bytes_per_record
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
    let rates: Vec<(String, f64, f64)> = cells
        .iter()
        .filter_map(|c| {
            let t = c.throughput.as_ref()?;
            Some((c.cell.clone(), t.mean, t.ci95.unwrap_or(0.0)))
        })
        .collect();
    let mut summary_section = Section {
        heading: "Cells".into(),
        html: format!(
            "<p class=\"note\">Means over repetitions{}; ± is the half-width of the 95% confidence interval (Student t).</p>{}",
            if discard > 0 { format!(" after discarding the first {discard}") } else { String::new() },
            table(&["cell", "n", "rate mean", "± 95% CI", "p99 us per operation", "bytes/record", "failed operations", "notes"], &summary)
        ),
        charts: vec![bars("cells-throughput", "Throughput per cell (mean, 95% CI)", "operations/s", &rates)],
    };
    let space: Vec<(String, f64, f64)> = cells
        .iter()
        .filter_map(|c| {
            let b = c.bytes_per_record.as_ref()?;
            Some((c.cell.clone(), b.mean, b.ci95.unwrap_or(0.0)))
        })
        .collect();
    if !space.is_empty() {
        summary_section.charts.push(bars(
            "cells-space",
            "Space per record (mean, 95% CI)",
            "bytes per record",
            &space,
        ));
    }
    page.sections.push(summary_section);

    // Scaling: throughput against threads, and against cluster size, one line per remaining setup.
    // (threads, throughput, median latency over the operations, mean latency) per setup.
    let mut by_threads: BTreeMap<String, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
    let mut by_nodes: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut recommendation: BTreeMap<Vec<String>, Vec<(String, Summary)>> = BTreeMap::new();
    let mut scatter: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    // One-operation cells (Dijkshoorn's design) by what they share but the workload: op -> rate.
    let mut single_ops: BTreeMap<(String, String), BTreeMap<String, f64>> = BTreeMap::new();
    for c in &cells {
        let Some(t) = &c.throughput else { continue };
        let (base, params) = cell_params(&c.cell);
        let rest: Vec<String> = params
            .iter()
            .filter(|(k, _)| k.as_str() != "threads")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if let Some(th) = params.get("threads").and_then(|v| v.parse::<f64>().ok()) {
            let p50s: Vec<f64> = c.latency.values().map(|l| l.0).collect();
            let latency = p50s.iter().sum::<f64>() / p50s.len().max(1) as f64;
            by_threads
                .entry(format!("{base} {}", rest.join(",")).trim().to_string())
                .or_default()
                .push((th, t.mean, latency, c.mean_latency_us.unwrap_or(0.0)));
        }
        let cell_runs: Vec<&RunResult> = results
            .iter()
            .filter(|r| r.0 == c.cell)
            .map(|r| &r.2)
            .collect();
        if let Some(nodes) = cell_runs
            .first()
            .and_then(|r| r.deployment.as_ref())
            .map(|d| d.nodes)
        {
            // One line per database x configuration x workload x other parameters (data size,
            // threads): only the cluster size varies along it.
            let others: Vec<String> = params
                .iter()
                .filter(|(k, _)| k.as_str() != CLUSTER_SIZE)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            by_nodes
                .entry(format!("{base} {}", others.join(",")).trim().to_string())
                .or_default()
                .push((nodes as f64, t.mean));
            // Swaminathan's recommendation: the databases compared per workload and parameters.
            let (setup, workload) = base.rsplit_once('/').unwrap_or(("", &base));
            let mut point: Vec<String> = vec![workload.to_string()];
            point.extend(params.iter().map(|(k, v)| format!("{k}={v}")));
            if !params.contains_key(CLUSTER_SIZE) {
                point.push(format!("{CLUSTER_SIZE}={nodes}"));
            }
            recommendation
                .entry(point)
                .or_default()
                .push((setup.trim_end_matches("/default").to_string(), t.clone()));
        }
        // The first study's read-against-write view: read and write throughput of each cell.
        let mean_of = |ops: &[&str]| -> f64 {
            let v: Vec<f64> = cell_runs
                .iter()
                .filter_map(|r| r.phases.last())
                .map(|p| {
                    ops.iter()
                        .filter_map(|o| p.operations.get(*o))
                        .map(|o| o.throughput_ops_s)
                        .sum::<f64>()
                })
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
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
                .push((writes, reads));
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
    // Dijkshoorn's chart of record (studies.md, section 1): one point per configuration, its
    // SELECT throughput against its INSERT and against its UPDATE throughput, beside the diagonal.
    for ((db, _), ops) in &single_ops {
        let Some(read) = ops.get("READ") else {
            continue;
        };
        for write in ["INSERT", "UPDATE"] {
            if let Some(w) = ops.get(write) {
                scatter
                    .entry(format!("{db}: SELECT against {write}"))
                    .or_default()
                    .push((*w, *read));
            }
        }
    }
    let mut scaling = Section {
        heading: "Scaling".into(),
        html: String::new(),
        charts: Vec::new(),
    };
    let lines =
        |id: &str, title: &str, x: &str, y: &str, data: BTreeMap<String, Vec<(f64, f64)>>| {
            let mut c = Chart::new(id, title, x, y);
            for (name, mut points) in data {
                if points.len() >= 2 {
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    c.series.push(Series {
                        name,
                        points,
                        errors: Vec::new(),
                    });
                }
            }
            c
        };
    // The latency knee (Wegert's rule, `scalebench_stats::knee`): the last thread count from which
    // the next step still raised throughput by a larger factor than mean latency.
    let mut throughput_by_threads = BTreeMap::new();
    let mut latency_by_threads = BTreeMap::new();
    for (name, mut points) in by_threads {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let rates: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.3)).collect();
        let knee = scalebench_stats::knee(&rates).unwrap_or(points.len() - 1);
        let label = format!("knee at {}: {name}", points[knee].0);
        latency_by_threads.insert(label.clone(), points.iter().map(|p| (p.0, p.2)).collect());
        throughput_by_threads.insert(label, points.iter().map(|p| (p.0, p.1)).collect());
    }
    scaling.charts.push(lines(
        "threads-throughput",
        "Throughput against threads",
        "threads",
        "operations/s",
        throughput_by_threads,
    ));
    scaling.charts.push(lines(
        "threads-latency",
        "Median latency against threads",
        "threads",
        "p50 microseconds",
        latency_by_threads,
    ));
    scaling.charts.push(lines(
        "nodes-throughput",
        "Throughput against cluster size",
        "nodes",
        "operations/s",
        by_nodes,
    ));
    if recommendation.values().any(|c| c.len() > 1) {
        let rows: Vec<Vec<String>> = recommendation
            .iter()
            .map(|(point, candidates)| {
                vec![
                    point.join(" "),
                    recommend(candidates).unwrap_or_default(),
                    candidates
                        .iter()
                        .map(|(name, t)| {
                            format!("{name} {:.0} ± {:.0}", t.mean, t.ci95.unwrap_or(0.0))
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                ]
            })
            .collect();
        scaling.html.push_str(&format!(
            "<h3>Recommendation</h3><p class=\"note\">Per workload, parameters and cluster size: the database (and configuration) of highest mean throughput, or a tie where 95% confidence intervals overlap (Swaminathan's recommendation table).</p>{}",
            table(&["workload and parameters", "best", "throughput (mean ± 95% CI)"], &rows)
        ));
    }
    let mut rw = Chart::new(
        "read-write",
        "Read against write throughput per cell (log-log)",
        "write operations/s",
        "read operations/s",
    );
    rw.kind = Kind::Points;
    rw.diagonal = true;
    rw.x_scale = Scale::Log10;
    rw.y_scale = Scale::Log10;
    rw.series = scatter
        .into_iter()
        .map(|(name, points)| Series {
            name,
            points,
            errors: Vec::new(),
        })
        .collect();
    scaling.charts.push(rw);
    if scaling.charts.iter().any(|c| !c.is_empty()) {
        page.sections.push(scaling);
    }

    // Resources and verdicts: the verdicts of every run, the series of each cell's first run.
    let verdicts: Vec<Vec<String>> = runs
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
    let mut resources = Section {
        heading: "Resources and \"bounded by\"".into(),
        html: table(&["run", "status", "bounded by", ""], &verdicts),
        charts: Vec::new(),
    };
    let mut seen = std::collections::BTreeSet::new();
    for (cell, rep, r) in &results {
        if !seen.insert(cell.clone()) || seen.len() > 12 {
            continue;
        }
        if let Some(p) = r.phases.last() {
            let id = format!("res-{}-{rep}", slug(cell));
            let section = run_sections(
                &RunResult {
                    phases: vec![p.clone()],
                    ..r.clone()
                },
                &id,
                &RunExtras::default(),
            );
            resources.charts.extend(
                section
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
    page.sections.push(resources);

    // Elastic runs: the timelines with their transition and the scores.
    let elastic = store.elastic_runs(&name).map_err(SessionError::Failed)?;
    if !elastic.is_empty() {
        let rows: Vec<Vec<String>> = elastic
            .iter()
            .map(|e| {
                vec![
                    format!("{} #{}", e.cell, e.repetition),
                    e.action.clone(),
                    format!("{} -> {}", e.nodes_before, e.nodes_after),
                    e.stabilisation_s
                        .map_or("not stable".into(), |s| format!("{s:.1}")),
                    e.elasticity.map_or("-".into(), |v| format!("{v:.1}")),
                ]
            })
            .collect();
        let mut section = Section {
            heading: "Elasticity".into(),
            html: table(
                &["run", "action", "nodes", "stabilisation s", "elasticity"],
                &rows,
            ),
            charts: Vec::new(),
        };
        for e in &elastic {
            let Some((_, _, r)) = results
                .iter()
                .find(|(c, rep, _)| *c == e.cell && *rep == e.repetition)
            else {
                continue;
            };
            let events: serde_json::Value = serde_json::from_str(&e.events).unwrap_or_default();
            let (markers, bands) = event_markers(&events);
            let id = format!("elastic-{}-{}", slug(&e.cell), e.repetition);
            let extras = RunExtras {
                markers,
                bands,
                figures: Vec::new(),
            };
            let charts = run_sections(r, &id, &extras)
                .into_iter()
                .flat_map(|s| s.charts);
            section.charts.extend(
                charts
                    .filter(|c| c.id.ends_with("-request-sets") || c.id.ends_with("-throughput"))
                    .map(|mut c| {
                        c.title = format!("{} #{}: {}", e.cell, e.repetition, c.title);
                        c
                    }),
            );
        }
        page.sections.push(section);
    }
    Ok(page)
}
