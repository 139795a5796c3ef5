//! The page of an elastic result: Dory's table per cluster size, then each step's timeline with
//! its transition marked and its scores.

use scalebench_elastic::result::{ElasticResult, ElasticStep};
use scalebench_elastic::{Events, SizeRow};

use crate::html::{table, Page, Section};
use crate::run_page::{run_banners, run_sections, RunExtras};

/// Vertical markers (x, label) and shaded ranges (from, to, label) of a chart.
type Markers = (Vec<(f64, String)>, Vec<(f64, f64, String)>);

/// A transition's events as markers, the transition itself (scale command to stable) shaded.
fn event_markers(events: &Events) -> Markers {
    let mut markers = vec![(events.scale_issued_s, "scale command".to_string())];
    for (at, label) in [
        (events.scale_done_s, "node joined/left"),
        (events.transfers_done_s, "transfers done"),
        (events.stable_s, "stable"),
    ] {
        if let Some(v) = at {
            markers.push((v, label.to_string()));
        }
    }
    let bands = events
        .stable_s
        .map(|to| vec![(events.scale_issued_s, to, "transition".to_string())])
        .unwrap_or_default();
    (markers, bands)
}

/// The page of an elastic result: Dory's table per cluster size, then each step's timeline.
pub fn page(result: &ElasticResult, title: String) -> Page {
    let mut page = Page {
        title,
        ..Default::default()
    };
    if !result.sizes.is_empty() {
        page.sections.push(sizes_table(&result.sizes));
    }
    if result.steps.iter().any(|s| s.impact.is_some()) {
        page.sections.push(operations_table(result));
    }
    for step in &result.steps {
        let extras = RunExtras {
            figures: step_figures(step),
            ..markers_of(&step.events)
        };
        match &step.run {
            Some(run) => {
                page.banners.extend(run_banners(run));
                page.sections
                    .extend(run_sections(run, &format!("step{}", step.step), &extras));
            }
            // Unloaded: the transition's figures alone.
            None => {
                let rows: Vec<Vec<String>> = extras
                    .figures
                    .iter()
                    .map(|(k, v)| vec![k.clone(), v.clone()])
                    .collect();
                page.sections.push(Section {
                    heading: format!("step {} (no load)", step.step),
                    html: table(&["figure", "value"], &rows),
                    charts: Vec::new(),
                });
            }
        }
    }
    page
}

/// A transition's events as the markers and shading of a run's charts.
pub fn markers_of(events: &Events) -> RunExtras {
    let (markers, bands) = event_markers(events);
    RunExtras {
        markers,
        bands,
        figures: Vec::new(),
    }
}

/// Each step's operation and what it cost (docs/operations.md), with its verdict against `--sla`.
fn operations_table(result: &ElasticResult) -> Section {
    let f = |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let rows: Vec<Vec<String>> = result
        .steps
        .iter()
        .map(|s| {
            let i = s.impact.as_ref();
            let lost = i
                .and_then(|i| i.lost_writes.as_ref())
                .map_or("-".into(), |l| match &l.error {
                    Some(_) => "not verified".into(),
                    None => format!("{} of {} ({} in doubt)", l.lost, l.checked, l.in_doubt),
                });
            let verdict = s.verdict.as_ref().map_or("-".to_string(), |v| {
                if v.passed {
                    "met".into()
                } else {
                    let missed: Vec<&str> = v
                        .checks
                        .iter()
                        .filter(|c| !c.passed)
                        .map(|c| c.figure.as_str())
                        .collect();
                    format!("MISSED: {}", missed.join(", "))
                }
            });
            vec![
                s.step.to_string(),
                s.action.to_string(),
                f(i.and_then(|i| i.p99_impact), 2),
                f(i.and_then(|i| i.p999_impact), 2),
                i.map_or("-".into(), |i| match i.recovery_s {
                    Some(r) => format!("{r:.1}"),
                    None => "never".into(),
                }),
                f(i.map(|i| i.throughput_lost_pct), 1),
                i.map_or("-".into(), |i| i.failed.to_string()),
                f(i.map(|i| i.availability_pct), 1),
                lost,
                verdict,
            ]
        })
        .collect();
    let level = result
        .service_level
        .as_ref()
        .map_or(String::new(), |l| format!(" Service level: {l}."));
    Section {
        heading: "Operations under load".into(),
        html: format!(
            "<p class=\"note\">Impact factor: the worst interval's percentile during the event over the baseline's; recovery: from the action to stability; throughput lost: below the baseline's rate, percent of what it would have completed; availability: intervals of the event without a failure; lost writes: acknowledged writes read back after the run (docs/operations.md).{}</p>{}",
            crate::chart::esc(&level),
            table(
                &["step", "operation", "p99 impact", "p99.9 impact", "recovery s", "throughput lost %", "failed", "available %", "lost writes", "service level"],
                &rows
            )
        ),
        charts: Vec::new(),
    }
}

/// Dory's performance table: one row per stable state, scalability where everything doubled.
fn sizes_table(rows: &[SizeRow]) -> Section {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.nodes.to_string(),
                r.records.to_string(),
                r.in_flight.to_string(),
                r.set_size.to_string(),
                r.sets.to_string(),
                format!("{:.4}", r.mean_s),
                format!("{:.4}", r.sd_s),
                r.scalability.map_or("-".into(), |v| format!("{v:.4}")),
            ]
        })
        .collect();
    Section {
        heading: "Performance per cluster size (Dory)".into(),
        html: format!(
            "<p class=\"note\">Request-set time of each stable state; scalability = (Avg_2N - Avg_N) / Avg_N where nodes, records, threads and set size all doubled.</p>{}",
            table(
                &["nodes", "records", "in flight", "set size", "sets", "mean s", "sd s", "scalability"],
                &rows
            )
        ),
        charts: Vec::new(),
    }
}

/// The step's action, sizes and every score, as (name, value) for the figures table.
fn step_figures(step: &ElasticStep) -> Vec<(String, String)> {
    let mut figures = vec![
        ("step".to_string(), step.step.to_string()),
        ("action".into(), step.action.to_string()),
        (
            "nodes".into(),
            format!("{} -> {}", step.nodes_before, step.nodes_after),
        ),
    ];
    if let Some(n) = &step.not_stable {
        figures.push(("not stable".into(), n.clone()));
    }
    // Every score by its field name, whichever load the step ran (request sets, open loop, none).
    if let Ok(serde_json::Value::Object(scores)) = serde_json::to_value(&step.scores) {
        for (k, v) in scores {
            let text = match v.as_f64() {
                Some(x) if x.fract() != 0.0 => format!("{x:.6}").trim_end_matches('0').to_string(),
                _ => v.to_string(),
            };
            figures.push((k, text));
        }
    }
    figures
}
