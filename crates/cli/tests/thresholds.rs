//! `--threshold` and `--sla FILE` on `run` and `load` (issue 63, item 4): pass or fail on a run's
//! own figures, judged against a simulated server of known capacity.

mod common;
use common::*;

/// A closed loop of 2 x 4 operations in flight against a server of 1,000 ops/s: its throughput is
/// the capacity and, by Little's law, each operation takes 8 in flight / 1,000 ops/s = 8 ms.
fn known_capacity_run(
    dir: &std::path::Path,
    name: &str,
    extra: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let out = dir.join(format!("{name}.json"));
    let page = dir.join(format!("{name}.html"));
    let mut args = vec![
        "run",
        "--db",
        "null://",
        "-p",
        "null.capacity_ops_s=1000",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "--duration",
        "2s",
        "--no-monitor",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--report",
        page.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = scalebench(&args);
    let result = json(&out);
    (o, result)
}

fn verdict<'a>(result: &'a serde_json::Value, threshold: &str) -> &'a serde_json::Value {
    result["thresholds"]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["threshold"] == threshold)
        .unwrap_or_else(|| panic!("{threshold}: {}", result["thresholds"]))
}

#[test]
fn thresholds_met_exit_0_and_broken_exit_4_with_the_figures_kept() {
    let dir = test_dir();
    let (o, r) = known_capacity_run(
        dir.path(),
        "met",
        &[
            "--threshold",
            "throughput>=500",
            "--threshold",
            "mean <= 16ms",
            "--threshold",
            "errors<1%",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let throughput = verdict(&r, "throughput>=500")["measured"].as_f64().unwrap();
    assert!((900.0..=1050.0).contains(&throughput), "{throughput}");
    let mean_us = verdict(&r, "mean <= 16ms")["measured"].as_f64().unwrap();
    assert!(
        (6_000.0..=10_000.0).contains(&mean_us),
        "Little's law: 8 ms, measured {mean_us} us"
    );
    assert!(
        stderr(&o).contains("threshold met: mean <= 16ms (run: measured"),
        "{}",
        stderr(&o)
    );
    // Above the capacity and below Little's latency: both broken, exit 4, the result and the page
    // written with the verdicts.
    let (o, r) = known_capacity_run(
        dir.path(),
        "broken",
        &[
            "--threshold",
            "throughput>=1500",
            "--threshold",
            "p50<4ms",
            "--threshold",
            "errors<1%",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(verdict(&r, "throughput>=1500")["met"], false);
    assert_eq!(verdict(&r, "p50<4ms")["met"], false);
    assert_eq!(verdict(&r, "errors<1%")["met"], true);
    assert!(
        stderr(&o).contains("service level missed: 2 of 3 thresholds broken"),
        "{}",
        stderr(&o)
    );
    let page = std::fs::read_to_string(dir.path().join("broken.html")).unwrap();
    assert!(
        page.contains("<h2>Thresholds</h2>") && page.contains("Service level missed: 2 of 3"),
        "the page"
    );
}

/// `--sla FILE`: the `[run]` thresholds of the file `elastic --sla` reads, on `load` too; a file
/// without them, or a threshold that does not parse, is bad input (exit 2, one line naming it).
#[test]
fn a_service_level_file_judges_a_load_and_bad_thresholds_are_bad_input() {
    let dir = test_dir();
    let sla = dir.path().join("sla.toml");
    std::fs::write(
        &sla,
        "[default]\np99_impact = 3.0\n\n[run]\nthresholds = [\"insert.errors < 1\", \"insert.throughput >= 100\"]\n",
    )
    .unwrap();
    let out = dir.path().join("load.json");
    let o = scalebench(&[
        "load",
        "--db",
        "null://",
        "-p",
        "recordcount=2000",
        "--no-monitor",
        "-q",
        "--sla",
        sla.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&out);
    assert_eq!(r["thresholds"]["file"], sla.to_str().unwrap());
    assert_eq!(verdict(&r, "insert.errors < 1")["measured"], 0.0);
    assert_eq!(verdict(&r, "insert.errors < 1")["phase"], "load");
    // Bad input, before anything runs.
    let no_run = dir.path().join("events.toml");
    std::fs::write(&no_run, "[default]\np99_impact = 3.0\n").unwrap();
    let bad_file = dir.path().join("bad.toml");
    std::fs::write(&bad_file, "[run]\nthresholds = [\"p99 < fast\"]\n").unwrap();
    for (args, names) in [
        (
            vec!["--sla", no_run.to_str().unwrap()],
            "no [run] thresholds",
        ),
        (
            vec!["--sla", bad_file.to_str().unwrap()],
            "[run] threshold 'p99 < fast'",
        ),
        (
            vec!["--threshold", "reed.p99<1ms"],
            "unknown operation 'reed'",
        ),
    ] {
        let mut all = vec!["run", "--db", "null://", "--duration", "1s"];
        all.extend(args);
        let o = scalebench(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
        assert!(
            stderr(&o).lines().next().unwrap().contains(names),
            "{}",
            stderr(&o)
        );
    }
}

/// A run of two client processes is judged on its merged figures.
#[test]
fn a_distributed_run_is_judged_on_its_merged_figures() {
    let dir = test_dir();
    let (o, r) = known_capacity_run(
        dir.path(),
        "clients",
        &[
            "--clients",
            "2",
            "--threshold",
            "throughput>=1500",
            "--threshold",
            "throughput>=500",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(r["phases"][0]["clients"], 2);
    let merged = verdict(&r, "throughput>=500")["measured"].as_f64().unwrap();
    let total = r["phases"][0]["totals"]["throughput_ops_s"]
        .as_f64()
        .unwrap();
    assert_eq!(merged, total, "the merged run's throughput");
    assert_eq!(verdict(&r, "throughput>=1500")["met"], false);
}
