//! Every shipped example experiment runs for real, in miniature (`scalebench experiment --miniature`:
//! the same matrix, databases and deployments; 1 s runs, record counts / 100, at most 2 repetitions),
//! against the servers it names, and its results render as a report.
//!
//! The examples whose matrix is large on a 2-core machine (minutes per example, see
//! `docs/experiments.md`) run only with `SCALEBENCH_ALL_EXAMPLES=1`; the test fails if an example is
//! neither run nor listed there, so a new example is covered by default.

use std::path::{Path, PathBuf};

mod common;
use common::*;

/// Examples run only with SCALEBENCH_ALL_EXAMPLES=1, with their miniature's time on a 2-core machine.
const LARGE: &[(&str, &str)] = &[
    (
        "dory-elasticity",
        "4 scaling transitions, each waiting for stability (Dory's rule): 19 min",
    ),
    (
        "wegert-configurations",
        "72 runs on Cassandra, each workload loaded, snapshotted and restored by restarting the nodes: about 20 min",
    ),
];

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    all.sort();
    all
}

fn run_in_miniature(example: &Path) {
    let name = example.file_stem().unwrap().to_str().unwrap();
    let dir = test_dir();
    let results = dir.path().join("r.db");
    let results = results.to_str().unwrap();
    let o = scalebench(&[
        "experiment",
        example.to_str().unwrap(),
        "--miniature",
        "--results",
        results,
        "--clusters-dir",
        dir.path().join("clusters").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{name}: {}", stderr(&o));

    let miniature = format!("{name}-miniature");
    let plan = scalebench(&[
        "experiment",
        example.to_str().unwrap(),
        "--miniature",
        "--dry-run",
    ]);
    // "experiment NAME: N runs (...)"
    let header = String::from_utf8_lossy(&plan.stdout);
    let planned: usize = header
        .split_once(": ")
        .and_then(|(_, rest)| rest.split_once(" runs"))
        .map(|(n, _)| n.parse().unwrap())
        .expect("the plan's header");
    let export = scalebench(&["results", "export", &miniature, "--results", results]);
    assert!(export.status.success(), "{name}: {}", stderr(&export));
    let exported: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let runs = exported["runs"].as_array().unwrap();
    assert_eq!(runs.len(), planned, "{name}: every planned run is recorded");
    for r in runs {
        assert_eq!(r["status"], "ok", "{name}: {r}");
        assert!(r["ok"].as_u64().unwrap() > 0, "{name}: {r}");
    }

    let report = dir.path().join("report.html");
    let o = scalebench(&[
        "report",
        results,
        "--experiment",
        &miniature,
        "--output",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("<figure class=\"chart\""),
        "{name}: the report has charts"
    );
}

#[test]
fn every_example_runs_in_miniature() {
    let all = std::env::var("SCALEBENCH_ALL_EXAMPLES").is_ok_and(|v| v == "1");
    let all_examples = examples();
    assert!(all_examples.len() >= 7, "{all_examples:?}");
    for (large, _) in LARGE {
        assert!(
            all_examples
                .iter()
                .any(|e| e.file_stem().unwrap() == *large),
            "{large} is listed as large but is not an example"
        );
    }
    for example in &all_examples {
        let name = example.file_stem().unwrap().to_str().unwrap();
        if let Some((_, cost)) = LARGE.iter().find(|(n, _)| *n == name).filter(|_| !all) {
            eprintln!("{name}: not run ({cost}; SCALEBENCH_ALL_EXAMPLES=1 runs it)");
            continue;
        }
        eprintln!("{name}: running in miniature");
        run_in_miniature(example);
    }
}
