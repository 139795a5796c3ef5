//! `scalebench report` in a real browser: the report of a real small run opens in headless Chromium
//! (Debian's `chromium`, installed by scripts/test.sh) without console errors, every chart has a size
//! and drawn series, and the screenshot is not blank. Also an experiment's and an elastic result's
//! pages render every chart.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(o) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
        {
            let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if o.status.success() && !p.is_empty() {
                return PathBuf::from(p);
            }
        }
    }
    panic!("no chromium on PATH: scripts/test.sh installs Debian's chromium package");
}

/// Runs headless Chromium on `url` with `args`; returns (stdout, stderr).
fn browse(dir: &Path, args: &[&str], url: &str) -> (String, String) {
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Measures every chart in the browser: a copy of the report with a measuring script (the report
/// itself has none) writes each chart's size and the size of its drawn series into the DOM.
fn chart_sizes(dir: &Path, html: &Path) -> Vec<(String, f64, f64, usize)> {
    let text = std::fs::read_to_string(html).unwrap();
    let probe = r#"<script>
document.body.insertAdjacentHTML('beforeend', '<pre id="sizes">' +
  Array.from(document.querySelectorAll('svg.chart')).map(function (c) {
    var r = c.getBoundingClientRect();
    var drawn = Array.from(c.querySelectorAll('.series')).filter(function (s) {
      var b = s.getBBox(); return b.width > 0 || b.height > 0; }).length;
    return c.id + ' ' + r.width + ' ' + r.height + ' ' + drawn;
  }).join('\n') + '</pre>');
</script></body>"#;
    let probed = dir.join("probed.html");
    std::fs::write(&probed, text.replace("</body>", probe)).unwrap();
    let (dom, _) = browse(
        dir,
        &["--dump-dom", "--virtual-time-budget=5000"],
        &format!("file://{}", probed.display()),
    );
    let start =
        dom.rfind("<pre id=\"sizes\">").expect("the probe ran") + "<pre id=\"sizes\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    dom[start..end]
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
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

fn assert_all_charts_render(dir: &Path, html: &Path, at_least: usize) {
    let sizes = chart_sizes(dir, html);
    assert!(sizes.len() >= at_least, "{} charts: {sizes:?}", sizes.len());
    for (id, w, h, drawn) in &sizes {
        assert!(*w > 100.0 && *h > 100.0, "{id} is {w} x {h}");
        assert!(*drawn > 0, "{id} has no drawn series");
    }
}

#[test]
fn a_run_report_opens_in_chromium_and_every_chart_renders() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    let o = scalebench(&[
        "run",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "--threads",
        "2",
        "-q",
        "-o",
        result.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = dir.path().join("csv");
    let html = report(dir.path(), &result, &["--csv-dir", csv.to_str().unwrap()]);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        !text.contains("<script") && !text.contains("src=\"http") && !text.contains("href=\"http")
    );

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
    let bad: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load") || l.contains("Uncaught"))
        .collect();
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
    assert_all_charts_render(dir.path(), &html, 7);
    let files = std::fs::read_dir(&csv).unwrap().count();
    assert_eq!(files, text.matches("<svg class=\"chart\"").count());
    let tp = std::fs::read_to_string(csv.join("run-run1-throughput.csv")).unwrap();
    assert!(tp.starts_with("series,") && tp.lines().count() > 3, "{tp}");
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
    assert!(text.contains("class=\"diagonal\""));
    assert_all_charts_render(dir.path(), &html, 4);
}
