//! Every shipped example experiment runs for real, in miniature (`scalebench experiment --miniature`:
//! the same matrix, databases and deployments; 1 s runs, record counts / 100, at most 2 repetitions),
//! against the servers it names, and its results render as a report. One test per example; a new
//! example without one fails `every_example_has_a_test`.

use std::path::{Path, PathBuf};

mod common;
use common::*;

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

/// One test per example, so that the test harness runs two at a time (`--test-threads 2`): much of
/// an example's time is spent waiting for servers to start, join and settle. The harness starts
/// tests in name order: numbered longest first, so that both threads stay busy to the end.
macro_rules! examples {
    ($($test:ident => $file:literal),* $(,)?) => {
        /// Every example with a test below.
        const TESTED: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $test() {
                run_example($file);
            }
        )*
    };
}

examples! {
    run_1_wegert_configurations => "wegert-configurations",
    run_2_swaminathan_sizes => "swaminathan-sizes",
    run_3_dory_elasticity => "dory-elasticity",
    run_4_dijkshoorn_operations => "dijkshoorn-operations",
    run_5_dory_request_sets => "dory-request-sets",
    run_6_lourenco_write_heavy => "lourenco-write-heavy",
    run_7_sqlite_quick => "sqlite-quick",
}

fn run_example(name: &str) {
    let example = examples()
        .into_iter()
        .find(|e| e.file_stem().is_some_and(|s| s == name))
        .unwrap_or_else(|| panic!("examples/{name}.toml"));
    let _files = SqliteFiles::of(&example);
    run_in_miniature(&example);
}

/// The SQLite files an example's databases name (`sqlite:///tmp/...`), removed when the test ends.
struct SqliteFiles(Vec<PathBuf>);

impl SqliteFiles {
    fn of(example: &Path) -> SqliteFiles {
        let spec = scalebench_session::experiment::spec::Experiment::from_file(example).unwrap();
        SqliteFiles(
            spec.databases
                .iter()
                .filter_map(|d| d.db.as_deref()?.strip_prefix("sqlite://"))
                .map(PathBuf::from)
                .collect(),
        )
    }
}

impl Drop for SqliteFiles {
    fn drop(&mut self) {
        for file in &self.0 {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut path = file.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

#[test]
fn every_example_has_a_test() {
    let all_examples = examples();
    assert!(all_examples.len() >= 7, "{all_examples:?}");
    for example in &all_examples {
        let name = example.file_stem().unwrap().to_str().unwrap();
        assert!(TESTED.contains(&name), "{name} has no test in examples.rs");
    }
}
