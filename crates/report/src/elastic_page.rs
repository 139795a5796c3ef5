//! The page of an elastic result: Dory's table per cluster size, then each step's timeline with
//! its transition marked and its scores.

use scalebench_elastic::result::{ElasticResult, ElasticStep};
use scalebench_elastic::{Events, SizeRow, StepScores};

use maud::html;

use crate::html::{note, sig, table, Page, Section};
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
/// The result's page under its title, `scalebench elastic: <deployment>` (never a file's path).
pub fn titled(result: &ElasticResult) -> Page {
    page(result, format!("scalebench elastic: {}", result.deployment))
}

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
                    None => format!(
                        "{} of {} ({} unexpected, {} recovered, {} in doubt)",
                        l.lost, l.checked, l.unexpected, l.recovered, l.in_doubt
                    ),
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
                f(i.and_then(|i| i.worst_p99_impact), 2),
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
        html: html! {
            (note(&format!("Impact factor: the event's percentile over the baseline's, each over all its operations; worst-interval impact: the event's worst interval p99 over the worst the baseline is expected to show in as many intervals; recovery: from the action to stability; throughput lost: below the baseline's rate, percent of what it would have completed; availability: intervals of the event without a failure; lost writes: keys missing an acknowledged write of those written, read back after the run, with those holding a value never written (unexpected), a write of unknown outcome (recovered) or that cannot be judged (in doubt; docs/operations.md).{level}")))
            (table(
                &["step", "operation", "p99 impact", "p99.9 impact", "worst-interval p99 impact", "recovery s", "throughput lost %", "failed", "available %", "lost writes", "service level"],
                &rows
            ))
        },
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
        html: html! {
            (note("Request-set time of each stable state; scalability = (Avg_2N - Avg_N) / Avg_N where nodes, records, threads and set size all doubled."))
            (table(
                &["nodes", "records", "in flight", "set size", "sets", "mean s", "sd s", "scalability"],
                &rows
            ))
        },
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
    figures.extend(score_figures(&step.scores));
    figures
}

/// `v` with its unit, or "-" when there is none (not stable, no sets after).
fn with_unit(v: Option<f64>, unit: &str) -> String {
    let space = if unit.is_empty() || unit == "%" {
        ""
    } else {
        " "
    };
    v.map_or("-".to_string(), |v| format!("{}{space}{unit}", sig(v)))
}

/// A step's scores by what they are (Dory's names and symbols, docs/elasticity.md), with units.
fn score_figures(scores: &StepScores) -> Vec<(String, String)> {
    let failed = |n: u64, share: f64| format!("{n} ({}% of the requests)", sig(100.0 * share));
    let rows: Vec<(&str, String)> = match scores {
        StepScores::RequestSets(s) => {
            let area = format!("s x {}", s.time_axis.name());
            vec![
                (
                    "request-set time before, Av1",
                    with_unit(Some(s.av_before_s), "s"),
                ),
                ("request-set time after, Av2", with_unit(s.av_after_s, "s")),
                (
                    "response time before, Rt1",
                    with_unit(Some(s.rt_before_s * 1e3), "ms"),
                ),
                (
                    "response time after, Rt2",
                    with_unit(s.rt_after_s.map(|v| v * 1e3), "ms"),
                ),
                ("stability threshold", with_unit(Some(s.threshold_s), "s")),
                ("stabilisation time", with_unit(s.stabilisation_s, "s")),
                ("  data transfer", with_unit(s.data_transfer_s, "s")),
                ("  additional", with_unit(s.additional_s, "s")),
                (
                    "area above the ideal ramp, A",
                    with_unit(s.area_above_ramp, &area),
                ),
                (
                    "standard-deviation band, B",
                    with_unit(s.sd_band_area, &area),
                ),
                (
                    "elasticity (A + B) / ((Rt1 + Rt2)(Av1 + Av2))",
                    s.elasticity.map_or("-".into(), |e| {
                        format!("{} (time axis in {})", sig(e), s.time_axis.name())
                    }),
                ),
                (
                    "change in the transition (Av2 - Av1) / Av1",
                    with_unit(s.change_in_transition.map(|c| 100.0 * c), "%"),
                ),
                (
                    "failed in the transition",
                    failed(s.failed_in_transition, s.failed_share),
                ),
                (
                    "full availability after",
                    with_unit(s.full_availability_s, "s"),
                ),
            ]
        }
        StepScores::OpenLoop(s) => vec![
            (
                "stability threshold",
                with_unit(Some(s.threshold_ops_s), "ops/s"),
            ),
            ("stabilisation time", with_unit(s.stabilisation_s, "s")),
            ("  data transfer", with_unit(s.data_transfer_s, "s")),
            ("  additional", with_unit(s.additional_s, "s")),
            (
                "throughput before",
                with_unit(Some(s.throughput_before_ops_s), "ops/s"),
            ),
            (
                "throughput after",
                with_unit(s.throughput_after_ops_s, "ops/s"),
            ),
            (
                "operations lost to the transition",
                with_unit(s.throughput_lost_ops, ""),
            ),
            ("p99 before", with_unit(Some(s.p99_before_us / 1e3), "ms")),
            (
                "p99 at worst in the transition",
                with_unit(Some(s.p99_transition_max_us / 1e3), "ms"),
            ),
            (
                "p99 after",
                with_unit(s.p99_after_us.map(|v| v / 1e3), "ms"),
            ),
            (
                "failed in the transition",
                failed(s.failed_in_transition, s.failed_share),
            ),
            (
                "full availability after",
                with_unit(s.full_availability_s, "s"),
            ),
        ],
        StepScores::Unloaded(s) => vec![
            ("ready after", with_unit(s.ready_s, "s")),
            (
                "full availability after",
                with_unit(s.full_availability_s, "s"),
            ),
        ],
    };
    rows.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44: the elastic page names its figures as Dory does, with units, rounded to what can
    /// be read; no field name of the result file, no unrounded value.
    #[test]
    fn a_steps_scores_have_names_units_and_rounding() {
        let scores = StepScores::RequestSets(scalebench_elastic::Scores {
            av_before_s: 1.234567,
            av_after_s: Some(0.6172839),
            rt_before_s: 0.0012346,
            rt_after_s: None,
            threshold_s: 0.02,
            stabilisation_s: Some(12.345678),
            data_transfer_s: Some(10.0),
            additional_s: Some(2.345678),
            time_axis: scalebench_elastic::TimeAxis::Minutes,
            area_above_ramp: Some(0.0123456),
            sd_band_area: Some(0.5),
            elasticity: Some(0.000123456),
            change_in_transition: Some(-0.5),
            failed_in_transition: 3,
            failed_share: 0.001234,
            full_availability_s: None,
        });
        let figures = score_figures(&scores);
        let get = |name: &str| {
            figures
                .iter()
                .find(|(k, _)| k.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} in {figures:?}"))
                .1
                .clone()
        };
        assert_eq!(get("request-set time before, Av1"), "1.235 s");
        assert_eq!(get("request-set time after, Av2"), "0.6173 s");
        assert_eq!(get("response time before, Rt1"), "1.235 ms");
        assert_eq!(get("response time after, Rt2"), "-");
        assert_eq!(get("stabilisation time"), "12.35 s");
        assert_eq!(get("area above the ideal ramp, A"), "0.01235 s x min");
        assert_eq!(get("elasticity"), "0.0001235 (time axis in min)");
        assert_eq!(get("change in the transition"), "-50.00%");
        assert_eq!(
            get("failed in the transition"),
            "3 (0.1234% of the requests)"
        );
        for (k, v) in &figures {
            assert!(!k.contains('_'), "a field name: {k}");
            assert!(v.len() < 40, "{k}: {v}");
        }
    }
}
