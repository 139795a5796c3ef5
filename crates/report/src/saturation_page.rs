//! The page of a saturation search (`saturate --report`, `report search.json`): the answer and the
//! bisection's bracket the capacity lies in, what each step offered and achieved, and its tail with the 95%
//! interval it was known to (docs/experiments.md, `scalebench saturate`).

use maud::html;
use scalebench_measure::saturation::{Estimate, Search, SearchEnd, SearchKind, Step, StepVerdict};

use crate::chart::{Chart, Kind, Scale, Series};
use crate::html::{note, sig, table, Page, Section};

/// The page of a search: what would make its answer misleading first, then the answer, the steps
/// and their charts.
/// The search's page under its title, `scalebench saturate: <objective>` (never a file's path: a
/// page goes into tickets, a path names a home directory).
pub fn titled(s: &Search) -> Page {
    page(s, format!("scalebench saturate: {}", s.answer.objective))
}

pub fn page(s: &Search, title: String) -> Page {
    let mut charts = vec![achieved_chart(s), latency_chart(s)];
    charts.retain(|c| !c.is_empty());
    Page {
        title,
        banners: banners(s),
        sections: vec![
            answer_section(s),
            Section {
                heading: "Steps".into(),
                html: html! {
                    (note(match s.kind {
                        SearchKind::Rate => "In the order they ran. A step passes when 95% of its offered rate completed inside the window, no run trended (latency rising, or completions falling, through its window: Mann-Kendall at 5% and by a material amount, the rise column) and every objective holds at 95% confidence (its interval's upper end within it); it fails when it did not keep up, trended, or an objective is broken at 95%; otherwise it is unsure and counts as failed. Latencies from the intended start (open loop) over every operation of every run of the step; the service time leaves the client's lateness out.",
                        SearchKind::Threads => "In the order they ran: threads per client doubled until doubling raised throughput by less than it raised mean latency (Wegert's rule, studies.md section 2).",
                    }))
                    (table(&steps_header(s), &steps_rows(s)))
                },
                charts,
            },
        ],
    }
}

/// What a reader must not overlook: an answer that is only a lower bound, or a search cut short.
fn banners(s: &Search) -> Vec<String> {
    let a = &s.answer;
    let mut out = Vec::new();
    match a.ended_by {
        SearchEnd::ClientBound => out.push(format!(
            "client-bound: the clients, not the database, were the limit; the answer is a lower bound ({})",
            s.stopped_by
        )),
        SearchEnd::Incomplete => out.push(format!(
            "incomplete: a client left no result of a step; the steps below are those measured ({})",
            s.stopped_by
        )),
        SearchEnd::Interrupted => out.push(
            "interrupted: the search was stopped before its rule ended it; the steps below are those measured"
                .into(),
        ),
        SearchEnd::MaxSteps if s.kind == SearchKind::Rate => out.push(format!(
            "not resolved: {} before the bracket closed to the resolution",
            s.stopped_by
        )),
        _ => {}
    }
    if s.knee.is_none() {
        out.push(match s.kind {
            SearchKind::Rate => format!("no step met the objective ({})", a.objective),
            SearchKind::Threads => "no step ran".into(),
        });
    } else if s.kind == SearchKind::Rate
        && a.bracket_high_ops_s.is_none()
        && a.ended_by != SearchEnd::ClientBound
    {
        out.push(
            "no step failed for the database: the capacity is at least the answer, not known to lie below a rate".into(),
        );
    }
    out
}

fn answer_section(s: &Search) -> Section {
    let a = &s.answer;
    let ops = |v: f64| format!("{} ops/s", sig(v));
    let mut rows = vec![vec!["objective".to_string(), a.objective.clone()]];
    match (s.kind, s.knee) {
        (SearchKind::Rate, Some(_)) => {
            rows.push(vec!["answer".into(), a.rate_ops_s.map_or("-".into(), ops)]);
            if let Some(r) = &s.replay {
                let x = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("x{v:.2}"));
                rows.push(vec![
                    format!("fits (speed-ups of {})", r.capture),
                    format!(
                        "{} times the capture's {} (bracket {} to {})",
                        x(r.speed),
                        ops(r.captured_ops_s),
                        x(r.bracket_low_speed),
                        x(r.bracket_high_speed)
                    ),
                ]);
            }
            let resolution = a
                .resolution
                .map_or(String::new(), |r| format!(", resolution {}%", r * 100.0));
            rows.push(vec![
                "capacity (the bisection's bracket)".into(),
                match (a.bracket_low_ops_s, a.bracket_high_ops_s) {
                    (Some(l), Some(h)) => {
                        format!("between {} and {} ops/s{resolution}", sig(l), sig(h))
                    }
                    (Some(l), None) => format!("at least {} ops/s", sig(l)),
                    _ => "-".into(),
                },
            ]);
        }
        (SearchKind::Threads, Some(k)) => rows.push(vec![
            "knee".into(),
            format!(
                "{} threads per client, {}",
                s.steps[k].offered,
                ops(s.steps[k].achieved_ops_s)
            ),
        ]),
        (_, None) => rows.push(vec!["answer".into(), "none: no step held".into()]),
    }
    rows.push(vec!["clients".into(), a.clients.to_string()]);
    rows.push(vec![
        "ended".into(),
        format!("{}: {}", end_name(a.ended_by), s.stopped_by),
    ]);
    Section {
        heading: "Answer".into(),
        html: table(&["figure", "value"], &rows),
        charts: Vec::new(),
    }
}

/// How the search ended, as its result file names it.
fn end_name(e: SearchEnd) -> &'static str {
    match e {
        SearchEnd::Resolved => "resolved",
        SearchEnd::Knee => "knee",
        SearchEnd::ClientBound => "client-bound",
        SearchEnd::MaxSteps => "max-steps",
        SearchEnd::Incomplete => "incomplete",
        SearchEnd::Interrupted => "interrupted",
    }
}

/// What a step offered: the rate (ops/s) or the threads per client.
fn offered_label(s: &Search) -> &'static str {
    match s.kind {
        SearchKind::Rate => "offered operations/s",
        SearchKind::Threads => "threads per client",
    }
}

fn steps_header(s: &Search) -> Vec<&'static str> {
    vec![
        "step",
        offered_label(s),
        "achieved ops/s",
        "p99 ms",
        "p99 95% CI ms",
        "p99.9 ms",
        "p99.9 95% CI ms",
        "latency rise ms/s",
        "service p99 ms",
        "mean ms",
        "failed",
        "error rate %",
        "runs",
        "clients",
        "client CPU us/op",
        "client cores busy",
        "verdict",
        "bounded by",
        "why",
    ]
}

fn ms(us: f64) -> String {
    sig(us / 1e3)
}

/// An estimate's interval and how it was made.
fn interval(e: &Estimate) -> String {
    use scalebench_measure::saturation::IntervalMethod;
    let how = match (e.method, e.sections) {
        (Some(IntervalMethod::Sectioning), b) => format!(" ({b} sections)"),
        (Some(IntervalMethod::OrderStatistics), _) => " (order statistics)".into(),
        (None, _) => String::new(),
    };
    match (e.low_us, e.high_us) {
        (Some(l), Some(h)) => format!("{} to {}{how}", ms(l), ms(h)),
        (Some(l), None) => format!("{} to unbounded{how}", ms(l)),
        _ => "-".into(),
    }
}

fn steps_rows(s: &Search) -> Vec<Vec<String>> {
    s.steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let mut verdict = match st.verdict {
                Some(StepVerdict::Pass) => "pass",
                Some(StepVerdict::Fail) => "fail",
                Some(StepVerdict::Unsure) => "unsure",
                None => "-",
            }
            .to_string();
            if Some(i) == s.knee {
                verdict.push_str(match s.kind {
                    SearchKind::Rate => " (answer)",
                    SearchKind::Threads => " (knee)",
                });
            }
            let why = match &st.client_bound {
                Some(c) if st.why.is_empty() => format!("client-bound: {c}"),
                Some(c) => format!("{}; client-bound: {c}", st.why),
                None => st.why.clone(),
            };
            vec![
                (i + 1).to_string(),
                sig(st.offered),
                sig(st.achieved_ops_s),
                ms(st.p99.us),
                interval(&st.p99),
                ms(st.p999.us),
                interval(&st.p999),
                st.trends
                    .iter()
                    .map(|t| t.latency_rise_ms_per_s)
                    .reduce(f64::max)
                    .map_or("-".into(), sig),
                ms(st.service_p99_us),
                ms(st.mean_us),
                st.failed.to_string(),
                sig(100.0 * st.error_rate),
                st.repeats.to_string(),
                st.clients.to_string(),
                st.client_cost
                    .and_then(|c| c.cpu_us_per_op)
                    .map_or("-".into(), sig),
                st.client_cost.map_or("-".into(), |c| {
                    format!("{} of {}", sig(c.cores_used), c.recorded.cores)
                }),
                verdict,
                st.bounded_by.clone().unwrap_or_else(|| "-".into()),
                if why.is_empty() { "-".into() } else { why },
            ]
        })
        .collect()
}

/// Spread over a decade or more, all above 0: a log axis reads it.
fn wide(values: impl IntoIterator<Item = f64>) -> bool {
    let v: Vec<f64> = values.into_iter().collect();
    let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(*x), hi.max(*x))
    });
    !v.is_empty() && lo > 0.0 && hi >= 10.0 * lo
}

/// The steps in the order of what they offered (a line joins neighbours, not the search's order).
fn by_offered(s: &Search) -> Vec<(usize, &Step)> {
    let mut steps: Vec<(usize, &Step)> = s.steps.iter().enumerate().collect();
    steps.sort_by(|a, b| a.1.offered.total_cmp(&b.1.offered));
    steps
}

/// Rate search: achieved against offered, one series per verdict, beside the diagonal (a step on
/// it kept up). Thread search: throughput against threads, the knee marked.
fn achieved_chart(s: &Search) -> Chart {
    match s.kind {
        SearchKind::Rate => {
            let mut c = Chart::new(
                "search-achieved",
                "Achieved against offered rate",
                offered_label(s),
                "achieved operations/s",
            );
            c.kind = Kind::Points;
            c.diagonal = true;
            let all = s
                .steps
                .iter()
                .flat_map(|st| [st.offered, st.achieved_ops_s]);
            if wide(all) {
                c.x_scale = Scale::Log10;
                c.y_scale = Scale::Log10;
            }
            for (name, verdict) in [
                ("passed", StepVerdict::Pass),
                ("failed", StepVerdict::Fail),
                ("unsure (counted as failed)", StepVerdict::Unsure),
            ] {
                let steps: Vec<(usize, &Step)> = by_offered(s)
                    .into_iter()
                    .filter(|(_, st)| st.verdict == Some(verdict))
                    .collect();
                if steps.is_empty() {
                    continue;
                }
                c.series.push(Series {
                    labels: steps
                        .iter()
                        .map(|(i, _)| format!("step {}", i + 1))
                        .collect(),
                    ..Series::new(
                        name,
                        steps
                            .iter()
                            .map(|(_, st)| (st.offered, st.achieved_ops_s))
                            .collect(),
                    )
                });
            }
            c
        }
        SearchKind::Threads => {
            let mut c = Chart::new(
                "search-achieved",
                "Throughput against threads",
                offered_label(s),
                "operations/s",
            );
            c.series.push(Series::new(
                "achieved",
                by_offered(s)
                    .iter()
                    .map(|(_, st)| (st.offered, st.achieved_ops_s))
                    .collect(),
            ));
            c.markers = knee_marker(s);
            c
        }
    }
}

fn knee_marker(s: &Search) -> Vec<(f64, String)> {
    s.knee
        .map(|k| {
            vec![(
                s.steps[k].offered,
                format!("knee at {} threads", s.steps[k].offered),
            )]
        })
        .unwrap_or_default()
}

/// The tail against what was offered: p99 with its 95% interval (hover, CSV), p99.9, the service
/// time's p99 and the objective's limits; the answer marked, the capacity's interval shaded.
fn latency_chart(s: &Search) -> Chart {
    let steps = by_offered(s);
    let mut c = Chart::new(
        "search-latency",
        match s.kind {
            SearchKind::Rate => "Tail latency against offered rate",
            SearchKind::Threads => "Latency against threads",
        },
        offered_label(s),
        "milliseconds",
    );
    let points = |f: &dyn Fn(&Step) -> f64| -> Vec<(f64, f64)> {
        steps
            .iter()
            .map(|(_, st)| (st.offered, f(st) / 1e3))
            .collect()
    };
    let mut p99 = Series::new("p99", points(&|st| st.p99.us));
    // An interval's bounds as the point's own figures, where every step has one (a step of fewer
    // than two intervals has none; a hole in a column would read as 0).
    let bounds: Option<Vec<(f64, f64)>> = steps
        .iter()
        .map(|(_, st)| Some((st.p99.low_us? / 1e3, st.p99.high_us? / 1e3)))
        .collect();
    if let Some(b) = bounds {
        p99.columns = vec![
            (
                "p99 95% CI low (ms)".into(),
                b.iter().map(|v| v.0).collect(),
            ),
            (
                "p99 95% CI high (ms)".into(),
                b.iter().map(|v| v.1).collect(),
            ),
        ];
    }
    c.series.push(p99);
    c.series
        .push(Series::new("p99.9", points(&|st| st.p999.us)));
    c.series.push(Series::new(
        "p99 of the service time",
        points(&|st| st.service_p99_us),
    ));
    if s.kind == SearchKind::Threads {
        c.series.push(Series::new("mean", points(&|st| st.mean_us)));
    }
    let span = (
        steps.first().map(|(_, st)| st.offered),
        steps.last().map(|(_, st)| st.offered),
    );
    if let (Some(lo), Some(hi)) = span {
        for (name, limit) in [
            ("p99 objective", s.answer.p99_limit_us),
            ("p99.9 objective", s.answer.p999_limit_us),
        ] {
            if let Some(l) = limit {
                c.series
                    .push(Series::new(name, vec![(lo, l / 1e3), (hi, l / 1e3)]));
            }
        }
    }
    if wide(steps.iter().map(|(_, st)| st.offered)) && s.kind == SearchKind::Rate {
        c.x_scale = Scale::Log10;
    }
    if wide(c.series.iter().flat_map(|se| se.points.iter().map(|p| p.1))) {
        c.y_scale = Scale::Log10;
    }
    match s.kind {
        SearchKind::Rate => {
            if let (Some(_), Some(rate)) = (s.knee, s.answer.rate_ops_s) {
                let upto = s.answer.bracket_high_ops_s.map_or(String::new(), |h| {
                    format!(" (capacity to {}, shaded)", sig(h))
                });
                c.markers
                    .push((rate, format!("answer {} ops/s{upto}", sig(rate))));
            }
            if let (Some(l), Some(h)) = (s.answer.bracket_low_ops_s, s.answer.bracket_high_ops_s) {
                c.bands.push((l, h, "capacity (bracket)".into()));
            }
        }
        SearchKind::Threads => c.markers = knee_marker(s),
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_measure::saturation::Answer;

    fn step(offered: f64, achieved: f64, p99_ms: f64, verdict: StepVerdict) -> Step {
        let e = |ms: f64| Estimate {
            us: ms * 1e3,
            low_us: Some(ms * 0.9e3),
            high_us: Some(ms * 1.1e3),
            method: Some(scalebench_measure::saturation::IntervalMethod::Sectioning),
            sections: 10,
        };
        Step {
            offered,
            achieved_ops_s: achieved,
            p99_us: p99_ms * 1e3,
            service_p99_us: p99_ms * 0.5e3,
            mean_us: p99_ms * 0.2e3,
            failed: 0,
            p99: e(p99_ms),
            p999: e(p99_ms * 2.0),
            error_rate: 0.0,
            repeats: 1,
            trends: Vec::new(),
            clients: 2,
            bounded_by: None,
            client_bound: None,
            client_cost: None,
            verdict: Some(verdict),
            why: String::new(),
        }
    }

    fn search(
        steps: Vec<Step>,
        knee: Option<usize>,
        ci_high: Option<f64>,
        end: SearchEnd,
    ) -> Search {
        let rate = knee.map(|k| steps[k].offered);
        Search {
            schema: scalebench_measure::saturation::SCHEMA.into(),
            kind: SearchKind::Rate,
            answer: Answer {
                rate_ops_s: rate,
                bracket_low_ops_s: rate,
                bracket_high_ops_s: ci_high,
                resolution: Some(0.02),
                clients: 2,
                ended_by: end,
                objective: "p99 <= 5ms, kept up (95% of the offered rate)".into(),
                p99_limit_us: Some(5000.0),
                p999_limit_us: None,
            },
            steps,
            knee,
            stopped_by: "bracket within 2%".into(),
            replay: None,
        }
    }

    /// The answer with its interval, a row per step in the order run, the passed and failed steps
    /// as series of their own on the diagonal chart (log axes over three decades), the objective's
    /// limit as a line, the answer marked and the capacity's interval shaded.
    #[test]
    fn a_resolved_search_shows_its_answer_steps_and_limit() {
        let s = search(
            vec![
                step(1000.0, 1000.0, 1.0, StepVerdict::Pass),
                step(10000.0, 9990.0, 2.0, StepVerdict::Pass),
                step(100000.0, 40000.0, 900.0, StepVerdict::Fail),
                step(55000.0, 41000.0, 7.0, StepVerdict::Unsure),
            ],
            Some(1),
            Some(55000.0),
            SearchEnd::Resolved,
        );
        let p = page(&s, "search".into());
        assert!(p.banners.is_empty(), "{:?}", p.banners);
        let html = p.html();
        assert!(html.contains("between 10000 and 55000 ops/s"), "{html}");
        assert!(html.contains("pass (answer)"));
        let charts: Vec<&Chart> = p.charts().collect();
        assert_eq!(charts.len(), 2);
        let achieved = charts[0];
        assert_eq!(achieved.x_scale, Scale::Log10);
        let names: Vec<&str> = achieved.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["passed", "failed", "unsure (counted as failed)"]);
        assert_eq!(achieved.series[0].labels, ["step 1", "step 2"]);
        let latency = charts[1];
        let limit = latency
            .series
            .iter()
            .find(|s| s.name == "p99 objective")
            .unwrap();
        assert_eq!(limit.points, [(1000.0, 5.0), (100000.0, 5.0)]);
        // Drawn in the order of the rate, the interval's bounds beside each point.
        let p99 = &latency.series[0];
        assert_eq!(p99.points[2], (55000.0, 7.0));
        assert!(latency.csv().starts_with(
            "series,offered operations/s,milliseconds,p99 95% CI low (ms),p99 95% CI high (ms)\np99,1000,1,0.9,1.1\n"
        ), "{}", latency.csv());
        assert_eq!(
            latency.markers,
            [(
                10000.0,
                "answer 10000 ops/s (capacity to 55000, shaded)".to_string()
            )]
        );
        assert_eq!(
            latency.bands,
            [(10000.0, 55000.0, "capacity (bracket)".to_string())]
        );
        assert_eq!(latency.y_scale, Scale::Log10);
    }

    /// A lower bound and a search cut short say so at the top; a search where nothing held says
    /// that, with no answer marked.
    #[test]
    fn lower_bounds_and_cut_short_searches_have_banners() {
        let passed = vec![step(1000.0, 1000.0, 1.0, StepVerdict::Pass)];
        let b = banners(&search(passed.clone(), Some(0), None, SearchEnd::MaxSteps));
        assert!(b[0].starts_with("not resolved: bracket within 2%"), "{b:?}");
        assert!(b[1].starts_with("no step failed for the database"), "{b:?}");
        let b = banners(&search(passed, Some(0), None, SearchEnd::ClientBound));
        assert_eq!(b.len(), 1, "{b:?}");
        assert!(b[0].contains("lower bound"), "{b:?}");
        let failed = search(
            vec![step(1000.0, 500.0, 90.0, StepVerdict::Fail)],
            None,
            Some(1000.0),
            SearchEnd::Interrupted,
        );
        let b = banners(&failed);
        assert!(b[0].starts_with("interrupted"), "{b:?}");
        assert!(b[1].starts_with("no step met the objective"), "{b:?}");
        assert!(latency_chart(&failed).markers.is_empty());
    }
}
