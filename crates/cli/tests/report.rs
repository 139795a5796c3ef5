//! `scalebench report` in a real browser: the report of a real small run opens in headless Chromium
//! (Debian's `chromium`, installed by scripts/test.sh) without console errors; every chart has a size
//! and drawn series, tick labels on every axis that do not overlap, no ticks between whole numbers,
//! legends that fit; a missed target rate has its banner; the screenshot is not blank. Also an
//! experiment's and an elastic result's pages render every chart.

use std::path::{Path, PathBuf};

mod common;
use common::*;

/// What the probe found in the browser.
#[derive(Debug, serde::Deserialize)]
struct Probe {
    charts: Vec<Drawn>,
    banners: Vec<String>,
    /// On the throughput chart, if there is one.
    interaction: Option<Interaction>,
}

/// What hovering, dragging and a legend click did.
#[derive(Debug, serde::Deserialize)]
struct Interaction {
    /// Points the tooltip shows.
    hovered: usize,
    /// The time axis narrowed to the dragged range.
    zoomed: bool,
    first_series_hidden: bool,
}

/// What the browser drew of one chart.
#[derive(Debug, serde::Deserialize)]
struct Drawn {
    id: String,
    w: f64,
    h: f64,
    /// Series with points on the canvas.
    drawn: usize,
    scales: Vec<DrawnScale>,
    /// Every legend entry lies inside the canvas (none cut off).
    legend_fits: bool,
    /// The text drawn beside markers (a knee) and points (a scatter's cells).
    #[serde(default)]
    labels: Vec<DrawnLabel>,
}

#[derive(Debug, serde::Deserialize)]
struct DrawnLabel {
    kind: String,
    text: String,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl DrawnLabel {
    fn overlaps(&self, o: &DrawnLabel) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }
}

#[derive(Debug, serde::Deserialize)]
struct DrawnScale {
    axis: String,
    kind: String,
    /// Tick labels with text.
    labels: usize,
    /// Pairs of neighbouring tick labels that overlap on screen.
    overlaps: usize,
    /// The data on this axis are whole numbers (threads, nodes): then so must the ticks be.
    whole_data: bool,
    fractional_ticks: usize,
}

/// Measures every chart in the browser: a copy of the report with a probe script after the page's
/// own asks Chart.js what it drew (sizes, series, tick labels and where they are, legend boxes)
/// and writes it into the DOM, with the page's banners.
fn probe(dir: &Path, html: &Path) -> Probe {
    let text = std::fs::read_to_string(html).unwrap();
    let probe = r#"<script>
(function () {
  var ctx = document.createElement('canvas').getContext('2d');
  var whole = function (v) { return Math.abs(v - Math.round(v)) < 1e-9; };
  var out = Array.from(document.querySelectorAll('figure.chart')).map(function (f) {
    var canvas = f.querySelector('canvas');
    var chart = Chart.getChart(canvas);
    var r = canvas.getBoundingClientRect();
    var drawn = chart.data.datasets.filter(function (d, i) {
      return chart.getDatasetMeta(i).data.some(function (e) { return isFinite(e.x) && isFinite(e.y); });
    }).length;
    var scales = ['x', 'y'].map(function (k) {
      var s = chart.scales[k];
      var items = s.getLabelItems().filter(function (it) { return String(it.label) !== ''; });
      var overlaps = 0;
      for (var i = 1; i < items.length; i++) {
        var a = items[i - 1], b = items[i];
        ctx.font = a.font.string;
        var wa = ctx.measureText(String(a.label)).width, wb = ctx.measureText(String(b.label)).width;
        var rot = Math.abs(a.options.rotation || 0);
        var gap;
        if (k === 'x') {
          var dx = Math.abs(b.options.translation[0] - a.options.translation[0]);
          gap = rot < 1e-6 ? dx - (wa + wb) / 2 : dx * Math.sin(rot) - a.font.size;
        } else {
          gap = Math.abs(b.options.translation[1] - a.options.translation[1]) - a.font.size;
        }
        if (gap < -0.5) overlaps++;
      }
      var values = [];
      chart.data.datasets.forEach(function (d) {
        d.data.forEach(function (p) { if (p && typeof p === 'object') values.push(k === 'x' ? p.x : p.y); });
      });
      return {
        axis: k, kind: s.type, labels: items.length, overlaps: overlaps,
        whole_data: s.type === 'linear' && values.length > 0 && values.every(whole),
        fractional_ticks: s.ticks.filter(function (t) { return !whole(t.value); }).length
      };
    });
    var fits = (chart.legend.legendHitBoxes || []).every(function (b) {
      return b.left >= 0 && b.left + b.width <= chart.width + 0.5;
    });
    return { id: f.id, w: r.width, h: r.height, drawn: drawn, scales: scales, legend_fits: fits, labels: chart.$labels || [] };
  });
  var banners = Array.from(document.querySelectorAll('.banner')).map(function (b) { return b.textContent; });
  var write = function (interaction) {
    var pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = JSON.stringify({ charts: out, banners: banners, interaction: interaction });
    document.body.appendChild(pre);
  };
  // As a user would: hover the throughput chart, click its first legend entry, drag across the middle
  // half of its time axis. Chart.js handles hover and clicks on the next animation frame, and headless
  // Chromium runs animation frames only while the page loads: both are dispatched at once, before it
  // has loaded, and looked at later (with a fallback below); the drag zoom listens to the mouse
  // directly.
  var fig = document.querySelector('figure.chart[id$="-throughput"]');
  if (!fig) { write(null); return; }
  var canvas = fig.querySelector('canvas'), chart = Chart.getChart(canvas);
  var area = chart.chartArea, y = (area.top + area.bottom) / 2;
  var mouse = function (type, x, y) {
    var r = canvas.getBoundingClientRect();
    canvas.dispatchEvent(new MouseEvent(type, { clientX: r.left + x, clientY: r.top + y, bubbles: true, button: 0 }));
  };
  var result = {};
  var box = chart.legend.legendHitBoxes[0];
  var hoverAt = [(area.left + area.right) / 2, y], clickAt = [box.left + box.width / 2, box.top + box.height / 2];
  mouse('mousemove', hoverAt[0], hoverAt[1]);
  mouse('click', clickAt[0], clickAt[1]);
  setTimeout(function () {
    // On a loaded machine the page may finish loading before that frame comes, and then it never
    // does: hand the same events to Chart.js's own handler, as its frame would have.
    if (chart.tooltip.getActiveElements().length === 0 && chart.isDatasetVisible(0)) {
      var r = canvas.getBoundingClientRect();
      [['mousemove', hoverAt], ['click', clickAt]].forEach(function (e) {
        var native = new MouseEvent(e[0], { clientX: r.left + e[1][0], clientY: r.top + e[1][1], bubbles: true });
        chart._eventHandler({ type: e[0], chart: chart, native: native, x: e[1][0], y: e[1][1] });
      });
    }
    result.hovered = chart.tooltip.getActiveElements().length;
    result.first_series_hidden = !chart.isDatasetVisible(0);
    var before = [chart.scales.x.min, chart.scales.x.max];
    var x0 = area.left + (area.right - area.left) * 0.25, x1 = area.left + (area.right - area.left) * 0.75;
    mouse('mousedown', x0, y);
    mouse('mousemove', x1, y);
    mouse('mouseup', x1, y);
    setTimeout(function () {
      result.zoomed = chart.scales.x.min > before[0] && chart.scales.x.max < before[1];
      write(result);
    }, 300);
  }, 300);
})();
</script></body>"#;
    let probed = dir.join("probed.html");
    std::fs::write(&probed, text.replace("</body>", probe)).unwrap();
    let (dom, _) = browse(
        dir,
        &["--dump-dom", "--virtual-time-budget=5000"],
        &format!("file://{}", probed.display()),
    );
    let json = probe_output(&dom);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

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

/// Every chart has a size and drawn series; every axis has tick labels (log axes too) that do not
/// overlap; an axis of whole numbers has no ticks between them; no legend entry is cut off. Returns
/// what the probe found.
fn assert_all_charts_render(dir: &Path, html: &Path, at_least: usize) -> Probe {
    let probe = probe(dir, html);
    let charts = &probe.charts;
    assert!(
        charts.len() >= at_least,
        "{} charts: {charts:?}",
        charts.len()
    );
    for c in charts {
        assert!(c.w > 500.0 && c.h > 200.0, "{} is {} x {}", c.id, c.w, c.h);
        assert!(c.drawn > 0, "{} has no drawn series", c.id);
        assert!(c.legend_fits, "{}: a legend entry is cut off", c.id);
        for s in &c.scales {
            assert!(
                s.labels >= 2,
                "{} {} axis ({}): {} tick labels",
                c.id,
                s.axis,
                s.kind,
                s.labels
            );
            assert_eq!(
                s.overlaps, 0,
                "{} {} axis: overlapping tick labels",
                c.id, s.axis
            );
            if s.whole_data {
                assert_eq!(
                    s.fractional_ticks, 0,
                    "{} {} axis: ticks between whole numbers",
                    c.id, s.axis
                );
            }
        }
    }
    probe
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

    // The screenshot is not blank: charts drew in their series colours.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
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
    // The percentile curves end at each operation's maximum (issue 31, point 11).
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
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
    // Headers name the data; how an axis is drawn (log) is the page's (issue 31, point 10).
    for f in &files {
        let text = std::fs::read_to_string(csv.join(f)).unwrap();
        let header = text.lines().next().unwrap_or("");
        assert!(!header.contains("(log)"), "{f}: {header}");
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
