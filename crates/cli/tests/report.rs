//! `scalebench report` in a real browser: the report of a real small run opens in headless Chromium
//! (Debian's `chromium`, installed by scripts/test.sh) without console errors; every chart has a size
//! and drawn series, tick labels on every axis that do not overlap, no ticks between whole numbers,
//! legends that fit; a missed target rate has its banner; the screenshot is not blank. Also an
//! experiment's and a saturation search's pages render every chart (an elastic run's: elastic.rs,
//! with the probe of `common::pages`).

use std::path::{Path, PathBuf};

mod common;
use common::pages::*;
use common::*;

fn report(dir: &Path, input: &Path, extra: &[&str]) -> PathBuf {
    let html = dir.join("report.html");
    let mut args = vec![
        "report",
        input.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = scalebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    html
}

#[test]
fn a_run_report_opens_in_chromium_and_every_chart_renders() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    // Open loop at a rate the embedded SQLite cannot keep: the page must say so at the top.
    let o = scalebench(&[
        "run",
        "--duration",
        "3s",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "--target",
        "2000000",
        "-q",
        "-o",
        result.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = dir.path().join("csv");
    let html = report(dir.path(), &result, &["--csv-dir", csv.to_str().unwrap()]);
    let text = std::fs::read_to_string(&html).unwrap();
    // How each phase ended, in words (issue 31, point 11: "ended by completed").
    assert!(
        text.contains("ended when the load inserted its last record"),
        "no load phrase"
    );
    assert!(!text.contains("ended by completed") && !text.contains("ended by duration"));
    // Self-contained: the charting library is inlined, nothing is fetched.
    assert!(!text.contains(" src=") && !text.contains("href=\"http"));
    assert!(text.contains("Chart.js v4"));
    // The automatic load phase took a fraction of a second: no time series of one point for it.
    assert!(text.contains("No time series: the phase lasted"));
    assert!(!text.contains("id=\"run-load0-throughput\""));

    // Opens without console errors or failed loads.
    let shot = dir.path().join("shot.png");
    let (_, log) = browse(
        dir.path(),
        &[
            "--window-size=1100,5000",
            &format!("--screenshot={}", shot.display()),
        ],
        &format!("file://{}", html.display()),
    );
    let bad = console_errors(&log);
    assert!(bad.is_empty(), "{bad:?}");

    assert_screenshot_is_drawn(&shot);

    // Every chart has a size and drawn series; each has its CSV.
    let probe = assert_all_charts_render(dir.path(), &html, 4);
    let banners = &probe.banners;
    assert!(
        banners
            .iter()
            .any(|b| b.contains("target rate not reached in the run phase")),
        "{banners:?}"
    );
    // Interactive: hover shows values, a drag zooms into a time range, the legend hides a series.
    let i = probe.interaction.as_ref().expect("a throughput chart");
    assert!(i.hovered > 0, "{i:?}");
    assert!(i.zoomed, "{i:?}");
    assert!(i.first_series_hidden, "{i:?}");
    let mut files: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut figures: Vec<String> = text
        .split("<figure class=\"chart\" id=\"")
        .skip(1)
        .map(|f| format!("{}.csv", &f[..f.find('"').unwrap()]))
        .collect();
    figures.sort();
    assert_eq!(files, figures);
    let tp = std::fs::read_to_string(csv.join("run-run1-throughput.csv")).unwrap();
    assert!(tp.starts_with("series,") && tp.lines().count() > 3, "{tp}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_percentile_curves_end_at_maxima_in_percent(&csv, &files, &r);
    assert_open_loop_curves_and_interval_percentiles(&csv, &r);
    // The title names the workload and the database, never the file's path (issue 63).
    let title = &text[text.find("<title>").unwrap()..text.find("</title>").unwrap()];
    assert!(
        title.contains("scalebench: workload") && !title.contains(dir.path().to_str().unwrap()),
        "{title}"
    );
    // Headers name the data; how an axis is drawn (log) is the page's (issue 31, point 10).
    for f in &files {
        let text = std::fs::read_to_string(csv.join(f)).unwrap();
        let header = text.lines().next().unwrap_or("");
        assert!(!header.contains("(log)"), "{f}: {header}");
    }
}

/// The screenshot is not blank: charts drew in their series colours.
fn assert_screenshot_is_drawn(shot: &Path) {
    // The screenshot is not blank: charts drew in their series colours.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let not_white = pixels.iter().filter(|p| p[..3] != [255, 255, 255]).count();
    assert!(
        not_white * 50 > pixels.len(),
        "{not_white} of {} pixels drawn",
        pixels.len()
    );
    let blue = pixels
        .iter()
        .filter(|p| p[..3] == [0x1f, 0x77, 0xb4])
        .count();
    assert!(blue > 100, "{blue} pixels of the first series' colour");
}

/// The percentile curves (CSV `files` in `csv`) end at each operation's maximum in the result `r`,
/// their percentiles in percent.
fn assert_percentile_curves_end_at_maxima_in_percent(
    csv: &Path,
    files: &[String],
    r: &serde_json::Value,
) {
    // The percentile curves end at each operation's maximum (issue 31, point 11).
    let maxima: Vec<(String, f64)> = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["operations"].as_object().unwrap().iter())
        .filter_map(|(op, o)| Some((op.clone(), o["latency"]["max_us"].as_f64()?)))
        .collect();
    let mut curves_seen = 0;
    for f in files.iter().filter(|f| f.ends_with("-percentiles.csv")) {
        let curves = std::fs::read_to_string(csv.join(f)).unwrap();
        for (op, _) in &maxima {
            let Some(last) = curves
                .lines()
                .rfind(|l| l.starts_with(&format!("{op},")))
                .and_then(|l| l.rsplit(',').next()?.parse::<f64>().ok())
            else {
                continue;
            };
            curves_seen += 1;
            assert!(
                maxima.iter().any(|(o, max)| o == op && *max == last),
                "{f}: {op}'s curve ends at {last}, not a maximum of {maxima:?}"
            );
        }
    }
    assert!(curves_seen > 0, "no percentile curve in {files:?}");
    // Percentiles in percent (issue 44: they were fractions), up to the curve's 99.x% end.
    for f in files.iter().filter(|f| f.ends_with("-percentiles.csv")) {
        let curves = std::fs::read_to_string(csv.join(f)).unwrap();
        assert!(
            curves.starts_with("series,percentile (%),microseconds\n"),
            "{curves}"
        );
        let xs: Vec<f64> = curves
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(xs.iter().all(|x| (0.0..100.0).contains(x)), "{curves}");
        assert!(xs.iter().any(|x| *x >= 90.0), "{curves}");
    }
}

/// The open loop's curves from the intended start and of service time, and the percentiles of
/// intervals that hold enough samples for them.
fn assert_open_loop_curves_and_interval_percentiles(csv: &Path, r: &serde_json::Value) {
    // Issue 63: the open loop's spectrum from the intended start (the headline, corrected for
    // coordinated omission) beside its service time, each curve ending at its own maximum; the
    // time from the intended start includes the service time, so its maximum is the larger.
    let curves = std::fs::read_to_string(csv.join("run-run1-percentiles.csv")).unwrap();
    let end_of = |series: &str| -> f64 {
        curves
            .lines()
            .rfind(|l| l.starts_with(&format!("{series},")))
            .and_then(|l| l.rsplit(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {series} curve: {curves}"))
    };
    let run_ops = r["phases"][1]["operations"].as_object().unwrap();
    assert!(!run_ops.is_empty());
    for (op, o) in run_ops {
        let corrected = end_of(&format!("{op} from intended start"));
        let service = end_of(&format!("{op} service time"));
        assert_eq!(
            corrected,
            o["intended_latency"]["max_us"].as_f64().unwrap(),
            "{op}"
        );
        assert_eq!(service, o["latency"]["max_us"].as_f64().unwrap(), "{op}");
        assert!(corrected >= service, "{op}: {corrected} < {service}");
    }
    // A percentile of an interval only where it holds enough samples for it (issue 63: p99.9 of
    // 50 operations is their maximum): p99 from 100 completions, p99.9 from 1,000.
    for (op, _) in run_ops {
        let series = std::fs::read_to_string(
            csv.join(format!("run-run1-latency-{}.csv", op.to_lowercase())),
        )
        .unwrap();
        let intervals = r["phases"][1]["intervals"].as_array().unwrap();
        let holding = |n: u64| {
            intervals
                .iter()
                .filter(|i| i["operations"][op]["ok"].as_u64().unwrap_or(0) >= n)
                .count()
        };
        let rows = |name: &str| {
            series
                .lines()
                .filter(|l| l.starts_with(&format!("{name},")))
                .count()
        };
        assert_eq!(rows("p99"), holding(100), "{op}: {series}");
        assert_eq!(rows("p99.9"), holding(1000), "{op}: {series}");
        assert_eq!(rows("p50"), holding(1), "{op}: {series}");
    }
}

#[test]
fn an_experiment_report_shows_cells_scaling_and_resources() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"report-exp\"\nrepetitions = 2\n[procedure]\nload = \"once\"\nduration = \"1s\"\n\
             [[database]]\nname = \"sqlite\"\ndb = \"sqlite://{}/b.db\"\n[[workload]]\nname = \"a\"\nworkload = \"a\"\n\
             properties = {{ recordcount = 500 }}\n\
             [[workload]]\nname = \"SELECT\"\nworkload = \"SELECT\"\nproperties = {{ recordcount = 500 }}\n\
             [[workload]]\nname = \"INSERT\"\nworkload = \"INSERT\"\nproperties = {{ recordcount = 500 }}\n\
             [[workload]]\nname = \"UPDATE\"\nworkload = \"UPDATE\"\nproperties = {{ recordcount = 500 }}\n\
             [sweep]\nthreads = [1, 2]\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let results = dir.path().join("results.db");
    let o = scalebench(&[
        "experiment",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv_dir = dir.path().join("csv");
    let html = report(
        dir.path(),
        &results,
        &["--csv-dir", csv_dir.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&html).unwrap();
    for id in [
        "cells-throughput",
        "threads-throughput",
        "threads-latency",
        "read-write",
    ] {
        assert!(text.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    assert!(text.contains("knee at"));
    // Text columns read from the left, and every column has a header (issue 31, point 11).
    assert!(
        text.contains("<th class=\"l\">bounded by</th><th class=\"l\">client</th>"),
        "resources table header"
    );
    // The CSVs hold data named by what it is; the knee and scales are the page's (issue 31, point 10).
    let threads = std::fs::read_to_string(csv_dir.join("threads-throughput.csv")).unwrap();
    assert!(
        threads.starts_with("series,threads,operations/s\n"),
        "{threads}"
    );
    assert!(!threads.contains("knee"), "{threads}");
    // Dijkshoorn's scatter pairs the one-operation cells of a configuration, beside the diagonal.
    let scatter = std::fs::read_to_string(csv_dir.join("read-write.csv")).unwrap();
    for series in [
        "sqlite: SELECT against INSERT",
        "sqlite: SELECT against UPDATE",
    ] {
        // One point per thread count (the configuration's swept values).
        let points = scatter.lines().filter(|l| l.starts_with(series)).count();
        assert_eq!(points, 2, "{series}: {scatter}");
    }
    // Each point says which setup it is (issue 31, point 11): a label column, one per point.
    assert!(
        scatter.starts_with("series,write operations/s,read operations/s,label\n"),
        "{scatter}"
    );
    assert!(
        scatter.lines().skip(1).all(|l| l
            .rsplit(',')
            .next()
            .is_some_and(|label| label.contains("threads="))),
        "{scatter}"
    );
    assert!(text.contains("\"diagonal\":true"));
    let probe = assert_all_charts_render(dir.path(), &html, 4);
    let chart = |id: &str| {
        probe
            .charts
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("no chart {id}"))
    };
    // Issue 44: on this 2-point sweep the knees' labels are drawn apart (setups sharing a knee
    // share a label), inside the plot; the scatter's points say which cell they are.
    for id in ["threads-throughput", "threads-latency"] {
        let c = chart(id);
        let knees: Vec<&DrawnLabel> = c.labels.iter().filter(|l| l.kind == "marker").collect();
        assert!(!knees.is_empty(), "{id}: no knee drawn");
        for (i, a) in knees.iter().enumerate() {
            assert!(a.text.starts_with("knee at "), "{id}: {a:?}");
            assert!(
                a.left >= 0.0 && a.right <= c.w + 0.5,
                "{id}: {a:?} leaves the chart"
            );
            for b in &knees[i + 1..] {
                assert!(!a.overlaps(b), "{id}: {a:?} over {b:?}");
            }
        }
    }
    let points: Vec<&DrawnLabel> = chart("read-write")
        .labels
        .iter()
        .filter(|l| l.kind == "point")
        .collect();
    assert_eq!(points.len(), scatter.lines().count() - 1, "{points:?}");
    assert!(
        points.iter().all(|l| l.text.contains("threads=")),
        "{points:?}"
    );
}

/// Issue 44: `saturate --report` draws the search's page from the search itself: on a simulated
/// server of known capacity the answer and its interval, a row per step, both charts rendered in
/// Chromium (the steps labelled beside the diagonal, the answer marked on the tail's chart), the
/// p99's interval in the CSV; `report` draws the same page from the search's `--output`.
#[test]
fn a_saturation_search_draws_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let (html, out) = (
        dir.path().join("search.html"),
        dir.path().join("search.json"),
    );
    let search = [
        "saturate",
        "--db",
        "null://",
        "-p",
        "null.capacity_ops_s=20000",
        "--concurrency",
        "64",
        "--p99",
        "50ms",
        "--start-rate",
        "5000",
        "--factor",
        "2",
        "--resolution",
        "10",
        "--report",
        html.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let o = scalebench_within(
        &[&search[..], &QUICK_SEARCH[..]].concat(),
        std::time::Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("report written to"), "{}", stderr(&o));
    let found = json(&out);
    assert_eq!(found["schema"], "scalebench-saturation/2");
    let steps = found["steps"].as_array().unwrap().len();
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<h2>Answer</h2>") && text.contains("capacity (bracket)"));
    // A row per step in the steps table (its header row aside).
    let table = &text[text.find("<h2>Steps</h2>").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), steps + 1, "{table}");
    let probe = assert_all_charts_render(dir.path(), &html, 2);
    let chart = |id: &str| {
        probe
            .charts
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("no chart {id}: {:?}", probe.charts))
    };
    let labels: Vec<&str> = chart("search-achieved")
        .labels
        .iter()
        .filter(|l| l.kind == "point")
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(labels.len(), steps, "{labels:?}");
    assert!(labels.iter().all(|l| l.starts_with("step ")), "{labels:?}");
    if found["answer"]["rate_ops_s"].is_number() {
        assert!(
            chart("search-latency")
                .labels
                .iter()
                .any(|l| l.kind == "marker" && l.text.starts_with("answer ")),
            "{:?}",
            chart("search-latency").labels
        );
    }
    // The same page from the search's result file, and its CSV holds the p99's interval.
    let csv = dir.path().join("csv");
    let again = report(dir.path(), &out, &["--csv-dir", csv.to_str().unwrap()]);
    let again = std::fs::read_to_string(again).unwrap();
    assert!(again.contains("id=\"search-latency\"") && again.contains("capacity (bracket)"));
    let latency = std::fs::read_to_string(csv.join("search-latency.csv")).unwrap();
    assert!(
        latency.starts_with("series,offered operations/s,milliseconds,"),
        "{latency}"
    );
    assert!(latency.contains("\np99 objective,"), "{latency}");
}

/// Issue 62, low 14: `report` of a FIFO blocked (opened to sniff a results database's header
/// before the bounded read that refuses anything but a regular file): exit 2 at once, naming it.
#[test]
fn a_report_of_a_fifo_is_refused_without_blocking() {
    let dir = test_dir();
    let fifo = dir.path().join("r.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let page = dir.path().join("r.html");
    let o = scalebench_within(
        &[
            "report",
            fifo.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(fifo.to_str().unwrap()) && said.contains("not a regular file"),
        "{said}"
    );
    assert!(!page.exists());
}
