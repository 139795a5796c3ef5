//! The benchmark as a library: an experiment (two configurations, a sweep, repetitions) and an
//! elastic run driven through typed requests alone, with no process started and no command line
//! built, against real databases (SQLite, a local Redis Cluster).

use std::path::Path;

use scalebench_deploy::{Cluster, Deployment};
use scalebench_session::request::RunRequest;
use scalebench_study::elastic::request::{parse_action, ElasticRequest};
use scalebench_study::elastic::run_elastic;
use scalebench_study::experiment::spec::Experiment;
use scalebench_study::experiment::store::Store;
use scalebench_study::experiment::thresholds::CellThresholds;
use scalebench_study::experiment::{run_experiment, ExperimentOutcome, ExperimentRequest};

/// The elastic test purges its cluster (servers' directories included) itself, also on failure.
fn test_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn an_experiment_runs_and_resumes_through_the_library() {
    let dir = test_dir();
    let db = dir.path().join("bench.db");
    let spec = format!(
        r#"name = "library"
repetitions = 2
[procedure]
load = "once"
duration = "1s"
options = {{ no_monitor = true }}
thresholds = ["errors < 1"]
[[database]]
name = "sqlite"
db = "sqlite://{}"
[[configuration]]
name = "synchronous-off"
properties = {{ "sqlite.synchronous" = "off" }}
[[configuration]]
name = "synchronous-full"
properties = {{ "sqlite.synchronous" = "full" }}
[[workload]]
name = "a"
workload = "a"
properties = {{ recordcount = 200 }}
[sweep]
threads = [1, 2]
"#,
        db.display()
    );
    let request = ExperimentRequest {
        experiment: Experiment::from_toml(&spec).unwrap(),
        cells: Default::default(),
        only_databases: vec![],
        only_configurations: vec![],
        only_swept: vec![],
        base: dir.path().to_path_buf(),
        source: "library_api.rs".into(),
        results: dir.path().join("results.db"),
        clusters_dir: dir.path().join("clusters"),
        metrics_listen: None,
        command: vec!["library_api".into()],
        // Its runs are single-client: no program to start client processes.
        client_program: None,
        // Issue 63: thresholds judged on every run (no machine here does 10^12 ops/s).
        thresholds: CellThresholds {
            thresholds: vec!["throughput >= 1e12".parse().unwrap()],
            file: None,
        },
    };
    let outcome = run_experiment(&request).unwrap();
    assert_eq!(
        outcome,
        ExperimentOutcome {
            done: 8,
            failed: 0,
            skipped: 0,
            claimed_elsewhere: 0,
            interrupted: false,
            missed_service_level: 0,
            broke_thresholds: 8,
        }
    );
    let store = Store::open(&request.results).unwrap();
    let runs = store.runs("library", true).unwrap();
    assert_eq!(runs.len(), 8);
    let cells: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.cell.as_str()).collect();
    assert_eq!(
        cells.into_iter().collect::<Vec<_>>(),
        [
            "sqlite/synchronous-full/a/threads=1",
            "sqlite/synchronous-full/a/threads=2",
            "sqlite/synchronous-off/a/threads=1",
            "sqlite/synchronous-off/a/threads=2",
        ]
    );
    for r in &runs {
        assert_eq!(r.status, "ok", "{r:?}");
        assert!(r.ok.unwrap() > 0 && r.failed == Some(0), "{r:?}");
        // Each run carries its configuration and swept value as typed values, not as text to parse.
        let result: serde_json::Value = serde_json::from_str(r.result.as_ref().unwrap()).unwrap();
        let p = &result["parameters"];
        let threads = r.cell.rsplit('=').next().unwrap().parse::<u64>().unwrap();
        assert_eq!(p["threads"], threads, "{p}");
        let synchronous = r
            .cell
            .split('/')
            .nth(1)
            .unwrap()
            .trim_start_matches("synchronous-");
        assert_eq!(p["properties"]["sqlite.synchronous"], synchronous, "{p}");
        assert_eq!(result["command"], serde_json::json!(["library_api"]));
        // The request's threshold and the file's, each judged on the run phase: SQLite lost no
        // operation, and did not do 10^12 a second.
        let verdicts = &result["thresholds"]["verdicts"];
        assert_eq!(verdicts.as_array().unwrap().len(), 2, "{verdicts}");
        assert_eq!(verdicts[0]["threshold"], "throughput >= 1e12");
        assert_eq!(verdicts[0]["met"], false);
        assert_eq!(verdicts[1]["threshold"], "errors < 1");
        assert_eq!(verdicts[1]["met"], true, "{verdicts}");
    }
    the_page_recommends_per_workload_and_thread_count(&request.results);
    // The same request again resumes: everything is recorded.
    let again = run_experiment(&request).unwrap();
    assert_eq!((again.done, again.skipped), (0, 8));
    // Issue 39: a count edited out of range is an error when read, never a wrapped number
    // (ok = -5 was exported as 18446744073709551611).
    drop(store);
    rusqlite::Connection::open(&request.results)
        .unwrap()
        .execute(
            "UPDATE runs SET ok = -5 WHERE id = (SELECT MIN(id) FROM runs)",
            [],
        )
        .unwrap();
    let store = Store::open(&request.results).unwrap();
    let err = store.runs("library", true).unwrap_err();
    assert!(err.contains("-5") || err.contains("range"), "{err}");
    // Issue 62, low 10: a rate edited to -1e308 was exported as is.
    drop(store);
    let db = rusqlite::Connection::open(&request.results).unwrap();
    db.execute("UPDATE runs SET ok = 5", []).unwrap();
    db.execute(
        "UPDATE runs SET throughput_ops_s = -1e308 WHERE id = (SELECT MAX(id) FROM runs)",
        [],
    )
    .unwrap();
    let store = Store::open(&request.results).unwrap();
    let err = store.runs("library", true).unwrap_err();
    assert!(
        err.contains("runs.throughput_ops_s = -1e308 is out of range"),
        "{err}"
    );
}

/// Issue 44: the experiment's page recommends a configuration per workload and thread count,
/// and banners the runs that broke a threshold.
fn the_page_recommends_per_workload_and_thread_count(results: &Path) {
    // Issue 44: its page's recommendation compares the two configurations per workload and
    // thread count; with no deployment there is no cluster size to show (it read "a nodes=-
    // threads=1").
    let page = scalebench_study::pages::page_of(results, None)
        .unwrap()
        .html();
    let recommendation = &page[page
        .find("<h3>Recommendation</h3>")
        .expect("a recommendation")..];
    let recommendation = &recommendation[..recommendation.find("</table>").unwrap()];
    assert!(
        recommendation.contains("<th class=\"l\">workload</th><th class=\"l\">parameters</th>"),
        "{recommendation}"
    );
    assert!(!recommendation.contains("nodes"), "{recommendation}");
    assert_eq!(
        recommendation.matches("threads=").count(),
        2,
        "{recommendation}"
    );
    assert!(
        recommendation.contains("synchronous-off "),
        "{recommendation}"
    );
    assert!(
        page.contains("Service level missed: 8 runs broke a threshold: sqlite/"),
        "the thresholds' banner"
    );
}

#[test]
fn an_elastic_run_grows_a_cluster_through_the_library() {
    let dir = test_dir();
    let file = dir.path().join("redis.toml");
    std::fs::write(
        &file,
        "name = \"library-elastic\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n",
    )
    .unwrap();
    let clusters = dir.path().join("clusters");
    let cluster = Cluster::up(
        Deployment::from_file(&file).unwrap(),
        &file,
        &clusters,
        false,
    )
    .unwrap();
    let cluster_dir = cluster.state.dir.clone();
    drop(cluster);

    let mut run = RunRequest::new("documents");
    run.deployment = Some(file.clone());
    run.clusters_dir = clusters.clone();
    run.threads = Some(1);
    run.request_set = Some(50);
    run.warmup = std::time::Duration::from_secs(1);
    run.quiet = true;
    run.property("recordcount", "300");
    let mut elastic = ElasticRequest::new(run);
    elastic.action = parse_action("add:1").unwrap();
    elastic.baseline = std::time::Duration::from_secs(3);
    elastic.after = std::time::Duration::from_secs(2);
    elastic.stable_sets = 3;
    elastic.set_repeats = 2;
    elastic.stable_timeout = std::time::Duration::from_secs(120);
    let outcome = run_elastic(&elastic);
    let down = |dir: &Path| {
        if let Ok(c) = Cluster::open(dir) {
            let _ = c.purge();
        }
    };
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            down(&cluster_dir);
            panic!("{e}");
        }
    };
    down(&cluster_dir);
    assert!(!result.interrupted);
    let step = &result.steps[0];
    assert_eq!((step.nodes_before, step.nodes_after), (3, 4));
    assert_eq!(step.changed_nodes.len(), 1);
    let run = step.run.as_ref().expect("a run under load");
    let phase = &run.phases[0];
    assert_eq!(phase.ended_by, "finished");
    assert_eq!(phase.totals.failed, 0);
    assert!(phase.totals.ok > 0);
    assert_eq!(result.set_size, Some(50));
}
