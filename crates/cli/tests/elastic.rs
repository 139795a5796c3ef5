//! `scalebench elastic` end to end on real local clusters: a Redis Cluster grows from 3 to 4 masters
//! under Dory's request sets and shrinks back under an open loop, both loads from two client
//! processes as one run (and a client lost ends it, exit 3); Dory's doubling schedule with its
//! performance table; an etcd member joins with no load and one is killed under load; every event
//! and score is recorded and no record is lost. Two clusters at a time (the harness's two threads):
//! Redis Clusters and etcd take little of the two cores, and the thresholds judged here leave room
//! for the other test's cluster (serialised, these tests took 6 of the suite's 45 minutes).

use std::path::{Path, PathBuf};

mod common;
use common::*;

/// A cluster brought up from `toml` in `dir`; brought down (all its nodes, added ones too) on drop.
struct Up {
    file: PathBuf,
    clusters: PathBuf,
}

impl Up {
    fn new(dir: &Path, toml: &str) -> Up {
        let file = dir.join("deployment.toml");
        std::fs::write(&file, toml).unwrap();
        let up = Up {
            file,
            clusters: dir.join("clusters"),
        };
        let o = scalebench(&["cluster", "up", up.file(), "--clusters-dir", up.clusters()]);
        assert!(o.status.success(), "{}", stderr(&o));
        up
    }

    fn file(&self) -> &str {
        self.file.to_str().unwrap()
    }

    fn clusters(&self) -> &str {
        self.clusters.to_str().unwrap()
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        scalebench(&[
            "cluster",
            "down",
            self.file(),
            "--clusters-dir",
            self.clusters(),
        ]);
    }
}

/// Runs the elastic benchmark and checks what every transition must show; returns the step.
fn elastic(up: &Up, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = dir.join("elastic.json");
    let mut args = vec![
        "elastic",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "--action",
        "add:1",
        "--stable-timeout",
        "5m",
        "--after",
        "3s",
        "--warmup",
        "2s",
        "--stable-sets",
        "3",
        "-o",
        out.to_str().unwrap(),
    ];
    let hdr = dir.join("hdr");
    let hdr_arg = hdr.to_str().unwrap().to_string();
    args.extend_from_slice(&["--hdr-log", &hdr_arg]);
    // Issue 44: the page written by the run itself.
    let own_page = dir.join("own.html");
    let own_arg = own_page.to_str().unwrap().to_string();
    args.extend_from_slice(&["--report", &own_arg]);
    args.extend_from_slice(extra);
    let o = scalebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // The command prints each step's summary as it ends (the library returns it as text).
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("step 1: scale issued") && printed.contains("stabilisation"),
        "{printed}"
    );
    // A step's load sets up what is measured next: no flush, compaction or space measured after
    // it (a JVM per Cassandra node each), which elasticity never reports.
    let notes = stderr(&o);
    assert!(
        notes.contains("loading records")
            && !notes.contains("flush:")
            && !notes.contains("compact:"),
        "{notes}"
    );
    // The step's run under load has its interval logs.
    let logs = std::fs::read_dir(hdr.join("step-1")).map_or(0, |d| d.count());
    assert!(logs > 0, "no HDR logs of the step's run");
    // Its report marks the events and shades the transition on the timelines.
    let page = report_page(&out, &dir.join("elastic.html"));
    let own = std::fs::read_to_string(&own_page).unwrap();
    assert!(
        own.contains("scale command") && own.contains("elasticity"),
        "--report's page"
    );
    for needle in [
        "scale command",
        "transfers done",
        "stable",
        "transition",
        "-request-sets\"",
        "elasticity",
    ] {
        assert!(page.contains(needle), "the elastic report lacks {needle}");
    }
    // Issue 44: Dory's figures by their names, with units; no field name of the result file.
    for needle in [
        "request-set time before, Av1",
        "stabilisation time",
        "elasticity (A + B)",
    ] {
        assert!(page.contains(needle), "the elastic report lacks {needle}");
    }
    for raw in [
        "av_before_s",
        "stabilisation_s",
        "area_above_ramp",
        "failed_share",
    ] {
        assert!(
            !page.contains(raw),
            "the elastic report shows the key {raw}"
        );
    }
    // In a browser, the page the run wrote: every chart drawn with readable axes and legends, the
    // transition's markers labelled apart from each other.
    let drawn = common::pages::assert_all_charts_render(dir, &own_page, 3);
    for c in &drawn.charts {
        let markers: Vec<_> = c.labels.iter().filter(|l| l.kind == "marker").collect();
        for (i, a) in markers.iter().enumerate() {
            for b in &markers[i + 1..] {
                assert!(!a.overlaps(b), "{}: {a:?} over {b:?}", c.id);
            }
        }
    }
    assert!(
        drawn.charts.iter().any(|c| c
            .labels
            .iter()
            .any(|l| l.kind == "marker" && l.text == "scale command")),
        "no chart marks the scale command: {:?}",
        drawn.charts
    );
    let r = json(&out);
    let step = r["steps"][0].clone();
    assert_eq!(step["changed_nodes"].as_array().unwrap().len(), 1, "{step}");
    let e = &step["events"];
    let t = |k: &str| e[k].as_f64().unwrap_or_else(|| panic!("no {k}: {e}"));
    assert!(t("scale_issued_s") < t("scale_done_s"), "{e}");
    assert!(t("scale_done_s") <= t("transfers_done_s"), "{e}");
    assert!(t("transfers_done_s") <= t("stable_s"), "{e}");
    let s = &step["scores"];
    let elasticity = s["elasticity"].as_f64().unwrap_or_else(|| panic!("{s}"));
    assert!(elasticity.is_finite() && elasticity >= 0.0, "{s}");
    assert!(s["av_before_s"].as_f64().unwrap() > 0.0 && s["av_after_s"].as_f64().unwrap() > 0.0);
    let stab = s["stabilisation_s"].as_f64().unwrap();
    let parts = s["data_transfer_s"].as_f64().unwrap() + s["additional_s"].as_f64().unwrap();
    assert!((stab - parts).abs() < 1e-6, "{s}");
    assert_eq!(s["failed_in_transition"], 0, "{s}");
    let run = &step["run"]["phases"][0];
    assert_eq!(run["ended_by"], "finished");
    assert_eq!(run["totals"]["failed"], 0, "{}", run["errors"]);
    // Every set of the timeline is in the result, back to back.
    let sets = run["request_sets"]["sets"].as_array().unwrap();
    assert!(sets.len() > 7, "{} sets", sets.len());
    step
}

/// Nodes before and after a step.
fn nodes(step: &serde_json::Value) -> (u64, u64) {
    let n = |k: &str| step[k].as_u64().unwrap_or_else(|| panic!("no {k}: {step}"));
    (n("nodes_before"), n("nodes_after"))
}

/// Every loaded document reads back (read each key once, in order).
fn nothing_lost(up: &Up, dir: &Path, records: u64) {
    let out = dir.join("check.json");
    let o = scalebench(&[
        "run",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "-p",
        &format!("recordcount={records}"),
        "-p",
        "readproportion=1",
        "-p",
        "readmodifywriteproportion=0",
        "-p",
        "requestdistribution=sequential",
        "--operations",
        &records.to_string(),
        "--threads",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &json(&out)["phases"][0]["totals"];
    assert_eq!(
        (t["ok"].as_u64(), t["failed"].as_u64()),
        (Some(records), Some(0)),
        "{t}"
    );
}

/// Both loads from two client processes (issue 41, point 3): the sets R = 100 and the 3 threads are
/// split over them, a set's time is until both finished their share, the action taken once.
#[test]
fn redis_cluster_grows_under_request_sets_and_shrinks_under_an_open_loop() {
    let dir = test_dir();
    let up = Up::new(
        dir.path(),
        "name = \"elastic-redis\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n",
    );
    let step = elastic(
        &up,
        dir.path(),
        &[
            "--request-set",
            "100",
            "--threads",
            "3",
            "-p",
            "recordcount=2000",
            "--baseline",
            "5s",
            "--clients",
            "2",
        ],
    );
    assert_eq!(nodes(&step), (3, 4));
    assert_eq!(step["changed_nodes"][0], "node4");
    assert_eq!(json(&dir.path().join("elastic.json"))["clients"], 2);
    // Each set of the merged timeline ends with the later of the two clients' shares.
    let run = &step["run"];
    assert_eq!(run["distributed"]["clients"], 2, "{}", run["distributed"]);
    for set in run["phases"][0]["request_sets"]["sets"].as_array().unwrap() {
        let each: Vec<f64> = set["clients_s"]
            .as_array()
            .unwrap_or_else(|| panic!("{set}"))
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        let d = set["duration_s"].as_f64().unwrap();
        assert_eq!(each.len(), 2, "{set}");
        assert!((each[0].max(each[1]) - d).abs() < 1e-6, "{set}");
    }
    nothing_lost(&up, dir.path(), 2000);

    // Back to 3 masters under an open loop: node4's slots drain to the others while the offered rate
    // holds; the scores are the open loop's.
    let out = dir.path().join("shrink.json");
    let o = scalebench(&[
        "elastic",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "--no-load",
        "-p",
        "recordcount=2000",
        "--target",
        "1000",
        "--threads",
        "2",
        "--concurrency",
        "4",
        "--action",
        "remove:1",
        "--baseline",
        "5s",
        "--after",
        "3s",
        "--stable-sets",
        "3",
        "--criterion",
        "relative:10",
        "--stable-timeout",
        "3m",
        "--clients",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&out);
    assert_eq!(r["target_ops_s"], 1000.0);
    assert_eq!(r["clients"], 2);
    let step = &r["steps"][0];
    assert_eq!(nodes(step), (4, 3));
    let s = &step["scores"];
    let before = s["throughput_before_ops_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("{s}"));
    assert!((900.0..1100.0).contains(&before), "{s}");
    assert!(s["throughput_lost_ops"].as_f64().unwrap() >= 0.0, "{s}");
    assert!(s["p99_transition_max_us"].as_f64().unwrap() > 0.0, "{s}");
    assert!(step["events"]["stable_s"].as_f64().is_some(), "{step}");
    assert_eq!(step["run"]["phases"][0]["totals"]["failed"], 0);
    // Issue 42: each client verified the keys it alone wrote (on by default from several clients
    // too); the merged result adds the two passes.
    let lost = &step["run"]["phases"][0]["lost_writes"];
    assert!(lost["checked"].as_u64().unwrap_or(0) > 100, "{lost}");
    assert_eq!(
        (&lost["lost"], &lost["unexpected"]),
        (&0.into(), &0.into()),
        "{lost}"
    );
    assert!(lost.get("error").is_none(), "{lost}");
    nothing_lost(&up, dir.path(), 2000);
    a_lost_client_ends_the_benchmark(&up, dir.path());
}

/// A client killed during the baseline: the other is ended, the cluster left as it was, exit 3
/// naming the client, the output written.
fn a_lost_client_ends_the_benchmark(up: &Up, dir: &Path) {
    use std::io::{BufRead, BufReader};
    let out = dir.join("lost.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["elastic", "documents", "--deployment", up.file()])
        .args(["--clusters-dir", up.clusters(), "--no-load"])
        .args([
            "-p",
            "recordcount=2000",
            "--request-set",
            "100",
            "--threads",
            "2",
        ])
        .args([
            "--baseline",
            "60s",
            "--stable-timeout",
            "1m",
            "--clients",
            "2",
        ])
        .args(["-o", out.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let began = std::time::Instant::now();
    let clients = loop {
        let Some(Ok(line)) = lines.next() else {
            panic!("the benchmark ended before its clients ran: {seen}");
        };
        seen.push_str(&line);
        seen.push('\n');
        // Once the run reports progress, both clients are running.
        let clients = children_of(child.id());
        if line.starts_with("run ") && clients.len() == 2 {
            break clients;
        }
        assert!(
            began.elapsed() < std::time::Duration::from_secs(60),
            "{seen}"
        );
    };
    // A client process this test's benchmark started.
    signal(clients[1] as i32, Signal::SIGKILL);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let all = format!("{seen}{}", rest.join("\n"));
    assert_eq!(status.code(), Some(3), "{all}");
    assert!(all.contains("client 1 of 2 left no result"), "{all}");
    let r = json(&out);
    assert!(
        r["incomplete"].as_str().unwrap().contains("client 1 of 2"),
        "{r}"
    );
    assert_eq!(r["steps"].as_array().unwrap().len(), 0, "{r}");
}

/// `scalebench experiment FILE --results RESULTS --clusters-dir CLUSTERS`.
fn experiment(file: &Path, results: &Path, clusters: &Path) -> std::process::Output {
    scalebench(&[
        "experiment",
        file.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--clusters-dir",
        clusters.to_str().unwrap(),
    ])
}

/// An experiment whose runs are elastic transitions: each run deploys the cluster afresh, and the
/// events and scores are recorded beside the run; its cells sweep the load's clients (1 and 2
/// client processes).
#[test]
fn an_elastic_experiment_records_every_transition() {
    let dir = test_dir();
    let deployment = dir.path().join("redis.toml");
    std::fs::write(
        &deployment,
        "name = \"elastic-exp-redis\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n",
    )
    .unwrap();
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        "name = \"elastic-exp\"\nrepetitions = 1\n[procedure]\nmeasure = \"elastic\"\nwarmup = \"1s\"\n\
         request_set = 100\n[procedure.elastic]\naction = \"add:1\"\nbaseline = \"4s\"\n\
         after = \"2s\"\nstable_sets = 3\nstable_timeout = \"3m\"\n[[database]]\nname = \"redis\"\ndeployment = \"redis.toml\"\n\
         [[workload]]\nname = \"docs\"\nworkload = \"documents\"\nproperties = { recordcount = 1000 }\n\
         [sweep]\nthreads = [3]\nclients = [1, 2]\n",
    )
    .unwrap();
    let results = dir.path().join("results.db");
    let clusters = dir.path().join("clusters");
    let o = experiment(&file, &results, &clusters);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = rusqlite::Connection::open(&results).unwrap();
    let rows: Vec<(i64, i64, Option<f64>, Option<f64>)> = db
        .prepare("SELECT nodes_before, nodes_after, stabilisation_s, elasticity FROM run_elastic")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // The cell of two clients ran its load from two processes, merged.
    let merged: Vec<(String, String)> = db
        .prepare("SELECT cell, result FROM runs ORDER BY cell")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (n, (cell, result)) in merged.iter().enumerate() {
        let r: serde_json::Value = serde_json::from_str(result).unwrap();
        let clients = &r["distributed"]["clients"];
        assert!(cell.contains(&format!("clients={},", n + 1)), "{cell}");
        assert_eq!(
            clients.as_u64().unwrap_or(1),
            n as u64 + 1,
            "{cell}: {}",
            r["distributed"]
        );
    }
    for (before, after, stabilisation, elasticity) in rows {
        // Every repetition starts from the deployment's 3 nodes.
        assert_eq!((before, after), (3, 4));
        assert!(stabilisation.unwrap() > 0.0);
        assert!(elasticity.unwrap().is_finite());
    }
    let text = results_show("elastic-exp", &results);
    assert!(
        text.contains("stabilisation") && text.contains("elasticity"),
        "{text}"
    );
}

/// Issue 42, point 5: an experiment of operations. `sweep.action` runs each operation on a fresh
/// Redis Cluster, its writes verified and its event judged against the experiment's service level:
/// the node added meets it, the restart breaks its recovery threshold, so the experiment exits 4
/// with both recorded and the matrix in `results show` and the report (as headless Chromium lays it
/// out). An operation the deployment
/// lacks, a node it does not have, or a threshold out of range is refused (exit 2) before any
/// cluster is up.
#[test]
fn an_experiment_of_operations_judges_each_against_its_service_level() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("redis.toml"),
        "name = \"ops-exp-redis\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n",
    )
    .unwrap();
    // A restart cannot recover within a millisecond: the restart misses its level.
    std::fs::write(
        dir.path().join("sla.toml"),
        "[default]\np99_impact = 1e6\nrecovery_s = 600\n[operation.restart]\nrecovery_s = 0.001\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad-sla.toml"),
        "[default]\np99_impact = 0.5\n",
    )
    .unwrap();
    let file = dir.path().join("exp.toml");
    let results = dir.path().join("results.db");
    let clusters = dir.path().join("clusters");
    let run = || experiment(&file, &results, &clusters);
    for (actions, sla, named) in [
        ("\"compact\"", "sla.toml", "no operation 'compact'"),
        ("\"restart:node7\"", "sla.toml", "no node 'node7'"),
        ("\"add:1\"", "bad-sla.toml", "p99_impact = 0.5"),
        ("\"grow\"", "sla.toml", "'grow'"),
    ] {
        std::fs::write(&file, ops_experiment_text(actions, sla)).unwrap();
        let o = run();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{actions}: {err}");
        assert!(
            err.contains(named) && err.trim().lines().count() == 1,
            "{actions}: {err}"
        );
        assert!(!clusters.exists(), "{actions}: a cluster was made");
    }

    // Operations across databases: a cell whose database lacks its operation is left out and
    // said so (Redis has no repair; Cassandra has both), planned without a cluster.
    let cassandra =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deployments/cassandra-3.toml");
    std::fs::write(
        &file,
        ops_experiment_text("\"crash:1\", \"repair\"", "sla.toml").replace(
            "[[workload]]",
            &format!(
                "[[database]]\nname = \"cassandra\"\ndeployment = {:?}\n[[workload]]",
                cassandra.to_str().unwrap()
            ),
        ),
    )
    .unwrap();
    let o = scalebench(&["experiment", file.to_str().unwrap(), "--dry-run"]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(out.contains("ops-exp: 3 runs"), "{out}");
    assert!(
        err.contains("cells left out, their database not having the operation: repair on redis"),
        "{err}"
    );
    assert!(!out.contains("redis/default/docs/action=repair"), "{out}");
    assert!(!clusters.exists(), "a cluster was made");

    std::fs::write(
        &file,
        ops_experiment_text("\"add:1\", \"restart:node2\"", "sla.toml"),
    )
    .unwrap();
    let o = run();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("service level missed: 1 runs"), "{err}");
    each_operation_is_judged_against_its_level(&results);
    let text = results_show("ops-exp", &results);
    assert!(
        text.contains("service level met 1/1") && text.contains("SERVICE LEVEL MISSED in 1 of 1"),
        "{text}"
    );
    the_report_shows_the_service_level_matrix(dir.path(), &results);
}

/// The experiment of the test above: Redis under `actions`, judged against `sla`.
fn ops_experiment_text(actions: &str, sla: &str) -> String {
    format!(
            "name = \"ops-exp\"\nrepetitions = 1\n[procedure]\nmeasure = \"elastic\"\nwarmup = \"1s\"\n\
             request_set = 100\n[procedure.elastic]\nbaseline = \"3s\"\nafter = \"2s\"\nstable_sets = 3\n\
             stable_timeout = \"2m\"\nservice_level = \"{sla}\"\n\
             [[database]]\nname = \"redis\"\ndeployment = \"redis.toml\"\nproperties = {{ threadcount = 2 }}\n\
             [[workload]]\nname = \"docs\"\nworkload = \"documents\"\nproperties = {{ recordcount = 500 }}\n\
             [sweep]\naction = [{actions}]\n"
        )
}

/// Each run's verdict as recorded: no write lost, the add met its level, the restart missed
/// its recovery.
fn each_operation_is_judged_against_its_level(results: &Path) {
    let db = rusqlite::Connection::open(results).unwrap();
    let rows: Vec<(String, String, String, String)> = db
        .prepare(
            "SELECT x.action, x.verdict, r.status, r.result FROM run_elastic x \
             JOIN runs r ON r.id = x.run_id ORDER BY r.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (action, verdict, status, result) in &rows {
        assert_eq!(status, "ok", "{action}");
        let v: serde_json::Value = serde_json::from_str(verdict).unwrap();
        let check = |figure: &str| {
            v["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["figure"] == figure)
                .unwrap_or_else(|| panic!("{action}: no {figure} in {v}"))
                .clone()
        };
        // Every write acknowledged before and during the operation was read back.
        let lost = check("lost_writes");
        assert_eq!(lost["value"].as_f64(), Some(0.0), "{action}: {v}");
        let r: serde_json::Value = serde_json::from_str(result).unwrap();
        let checked = r["phases"][0]["lost_writes"]["checked"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            checked > 0,
            "{action}: no write verified: {}",
            r["phases"][0]["lost_writes"]
        );
        match action.as_str() {
            "add:1" => assert_eq!(v["passed"], true, "{v}"),
            "restart:node2" => {
                assert_eq!(v["passed"], false, "{v}");
                assert_eq!(check("recovery_s")["passed"], false, "{v}");
            }
            other => panic!("{other}"),
        }
    }
}

/// The report's service-level matrix, in the page and as a browser lays it out.
fn the_report_shows_the_service_level_matrix(dir: &Path, results: &Path) {
    let html = dir.join("ops.html");
    let rep = scalebench(&[
        "report",
        results.to_str().unwrap(),
        "--experiment",
        "ops-exp",
        "--output",
        html.to_str().unwrap(),
    ]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    let matrix = &page[page
        .find("Service level per operation")
        .expect("the matrix")..];
    assert!(
        matrix.contains("<th>add:1</th>") || matrix.contains(">add:1<"),
        "{matrix}"
    );
    assert!(
        matrix.contains("met 1/1") && matrix.contains("MISSED (0/1 met) #1 missed: recovery_s"),
        "{matrix}"
    );
    // As a browser shows it: the matrix laid out, a row for the database, a column per operation.
    let (shown, errors) = in_chromium(
        dir,
        &html,
        "var h = Array.from(document.querySelectorAll('h3')).find(function (e) { \
           return e.textContent === 'Service level per operation'; }); \
         var next = h.nextElementSibling; \
         var t = next.tagName === 'TABLE' ? next : next.querySelector('table'); \
         var box = t.getBoundingClientRect(); \
         return { width: box.width, height: box.height, \
           rows: Array.from(t.rows).map(function (r) { \
             return Array.from(r.cells).map(function (c) { return c.innerText.trim(); }); }) };",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        shown["width"].as_f64().unwrap() > 200.0 && shown["height"].as_f64().unwrap() > 20.0,
        "{shown}"
    );
    let rows = shown["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "a header and the database: {shown}");
    assert_eq!(rows[0][1], "add:1", "{shown}");
    assert_eq!(rows[0][2], "restart:node2", "{shown}");
    // Each entry with its figures: the restart's recovery beside what it missed.
    let added = rows[1][1].as_str().unwrap();
    assert!(
        added.starts_with("met 1/1: p99_impact ") && added.contains("lost_writes 0"),
        "{shown}"
    );
    let restarted = rows[1][2].as_str().unwrap();
    assert!(
        restarted.starts_with("MISSED (0/1 met)") && restarted.contains("means: p99_impact "),
        "{shown}"
    );
}

/// Dory's schedule in miniature: `double` twice (3 -> 6 -> 12 masters) with records, threads and
/// the set size doubled at each step, then the final size measured with its own doubled load; the
/// performance table has a row per size and scalability only between doubled stable states.
#[test]
fn redis_cluster_doubles_twice_and_scalability_compares_stable_states() {
    let dir = test_dir();
    let up = Up::new(
        dir.path(),
        "name = \"elastic-double\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n",
    );
    let out = dir.path().join("double.json");
    let o = scalebench(&[
        "elastic",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "--action",
        "double",
        "--steps",
        "2",
        "--request-set",
        "50",
        "--set-repeats",
        "3",
        "--threads",
        "1",
        "-p",
        "recordcount=500",
        // Bounds measured runs only: each step's load still inserts all of its records.
        "--duration",
        "10ms",
        "--warmup",
        "1s",
        "--baseline",
        "3s",
        "--after",
        "2s",
        "--stable-sets",
        "3",
        "--stable-timeout",
        "3m",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Dory's per-size table is printed at the end, one row per stable state.
    let printed = String::from_utf8_lossy(&o.stdout);
    let table = printed
        .split_once("nodes  records  in flight")
        .unwrap_or_else(|| panic!("no size table: {printed}"))
        .1;
    assert_eq!(
        table
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .count(),
        3,
        "{printed}"
    );
    let r = json(&out);
    assert_eq!(r["set_repeats"], 3);
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (step, (before, after, records, in_flight, set_size)) in steps
        .iter()
        .zip([(3, 6, 500, 1, 50), (6, 12, 1000, 2, 100)])
    {
        assert_eq!(nodes(step), (before, after), "{step}");
        assert_eq!(
            step["changed_nodes"].as_array().unwrap().len() as u64,
            before
        );
        assert_eq!(
            (&step["records"], &step["in_flight"], &step["set_size"]),
            (&records.into(), &in_flight.into(), &set_size.into())
        );
        let run = &step["run"]["phases"][0];
        assert_eq!(run["totals"]["failed"], 0, "{}", run["errors"]);
        // Every set of the step had its doubled size.
        assert_eq!(run["request_sets"]["size"], set_size);
        let s = &step["scores"];
        assert!(s["elasticity"].as_f64().is_some(), "{s}");
        assert!(s["change_in_transition"].as_f64().is_some(), "{s}");
        assert!(s.get("scalability").is_none(), "{s}");
    }
    let sizes = r["sizes"].as_array().unwrap();
    let row = |k: usize, f: &str| sizes[k][f].as_u64().unwrap();
    assert_eq!(sizes.len(), 3, "{sizes:?}");
    assert_eq!(
        (0..3)
            .map(|k| (row(k, "nodes"), row(k, "records"), row(k, "set_size")))
            .collect::<Vec<_>>(),
        [(3, 500, 50), (6, 1000, 100), (12, 2000, 200)]
    );
    assert!(sizes[0]["scalability"].is_null());
    for k in 1..3 {
        let (n, r) = (sizes[k - 1]["mean_s"].as_f64().unwrap(), &sizes[k]);
        assert!(row(k, "sets") > 0);
        let s = r["scalability"].as_f64().unwrap_or_else(|| panic!("{r}"));
        assert!(
            (s - (r["mean_s"].as_f64().unwrap() - n) / n).abs() < 1e-9,
            "{r}"
        );
    }
    assert_eq!(r["closing_run"]["phases"][0]["totals"]["failed"], 0);
    nothing_lost(&up, dir.path(), 2000);
}

/// Restricted elasticity as Dory measured it for Riak, with no load (an etcd member joins), then a
/// member killed under request sets: the survivors keep a quorum, the failed requests count against
/// availability, and the timeline is stable again only once no request fails.
#[cfg(feature = "all-bindings")]
#[test]
fn etcd_member_joins_unloaded_and_a_crash_under_load_costs_availability() {
    let dir = test_dir();
    let up = Up::new(
        dir.path(),
        "name = \"elastic-etcd\"\ndatabase = \"etcd\"\nnodes = 3\nidle_timeout_s = 120\n",
    );
    let out = dir.path().join("unloaded.json");
    let o = scalebench(&[
        "elastic",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "--unloaded",
        "-p",
        "recordcount=300",
        "--action",
        "add:1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&out);
    assert_eq!(r["unloaded"], true);
    let step = &r["steps"][0];
    assert_eq!(nodes(step), (3, 4));
    assert!(step.get("run").is_none(), "{step}");
    let s = &step["scores"];
    let ready = s["ready_s"].as_f64().unwrap_or_else(|| panic!("{s}"));
    let full = s["full_availability_s"].as_f64().unwrap();
    assert!(ready > 0.0 && full >= ready, "{s}");
    // Its report shows the step without a run.
    let unloaded = report_page(&out, &dir.path().join("unloaded.html"));
    assert!(unloaded.contains("(no load)") && unloaded.contains("ready after"));
    assert!(!unloaded.contains("ready_s"), "a field name on the page");

    let out = dir.path().join("crash.json");
    let o = scalebench(&[
        "elastic",
        "documents",
        "--deployment",
        up.file(),
        "--clusters-dir",
        up.clusters(),
        "--no-load",
        "-p",
        "recordcount=300",
        "--request-set",
        "40",
        "--set-repeats",
        "2",
        // One worker per member (each is pinned to one): one works on the member killed.
        "--threads",
        "4",
        "--op-timeout",
        "2s",
        "--action",
        "crash:1",
        "--warmup",
        "1s",
        "--baseline",
        "3s",
        "--after",
        "2s",
        "--stable-sets",
        "3",
        "--criterion",
        "relative:50",
        "--stable-timeout",
        "10s",
        // Intervals short enough to tell the crash's failures from what follows stability.
        "--interval",
        "100ms",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let step = &json(&out)["steps"][0];
    assert_eq!(nodes(step), (4, 3));
    assert_eq!(step["changed_nodes"].as_array().unwrap().len(), 1);
    let s = &step["scores"];
    // The failures are the crash's (the member vanished), besides the documents workload's own
    // update races (two threads appending to one article).
    let run = &step["run"]["phases"][0];
    for class in run["errors"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        assert!(
            ["unavailable", "timeout", "conflict"].contains(&class.as_str()),
            "{}",
            run["errors"]
        );
    }
    let crash = step["events"]["scale_issued_s"].as_f64().unwrap();
    // Failures of the crash's classes in the intervals that end after t (a conflict is the
    // workload's own race and may come at any time).
    let interval = run["interval_s"].as_f64().unwrap();
    let unavailable_after = |t: f64| {
        run["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["start_s"].as_f64().unwrap() + interval > t)
            .flat_map(|i| i["operations"].as_object().unwrap().values())
            .flat_map(|op| {
                ["unavailable", "timeout"].map(|c| op["failed_by_class"][c].as_u64().unwrap_or(0))
            })
            .sum::<u64>()
    };
    // Requests sent to the killed member failed: that is restricted elasticity, never "stable".
    assert!(s["failed_in_transition"].as_u64().unwrap() > 0, "{s}");
    // Stable means available again: no failed request after it. Each worker is pinned to one
    // member and moves on when it stops answering (before, the client's balanced channel kept
    // sending a share of every request to the dead member and the cluster never looked stable).
    let stable = step["events"]["stable_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("never stable: {step}"));
    assert_eq!(unavailable_after(stable), 0, "{step}");
    assert!(stable - crash < 9.0, "{step}");
    assert!(run["totals"]["ok"].as_u64().unwrap() > 1000);
}

/// The arguments of `elastic --action ACTION` on `up` under an open loop of 1000 ops/s over 2000
/// records (intervals of 500 ms, short windows), its result in `out`.
fn operation_args(up: &Up, action: &str, out: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["elastic", "workloada", "--deployment", up.file()]
        .into_iter()
        .map(String::from)
        .collect();
    for (flag, value) in [
        ("--clusters-dir", up.clusters()),
        ("-p", "recordcount=2000"),
        ("--target", "1000"),
        ("--threads", "2"),
        ("--op-timeout", "1s"),
        ("--interval", "500ms"),
        ("--warmup", "500ms"),
        ("--baseline", "2500ms"),
        ("--after", "1s"),
        ("--stable-sets", "2"),
        ("--criterion", "relative:40"),
        ("--stable-timeout", "90s"),
        ("--action", action),
        ("-o", out.to_str().unwrap()),
    ] {
        args.extend([flag.to_string(), value.to_string()]);
    }
    args
}

/// [`operation_args`] with `extra`, run; the output and the result file (absent when none was
/// written).
fn operation(
    up: &Up,
    dir: &Path,
    action: &str,
    extra: &[&str],
) -> (std::process::Output, Option<serde_json::Value>) {
    let out = dir.join(format!("{}.json", action.replace(':', "-")));
    let _ = std::fs::remove_file(&out);
    let mut args = operation_args(up, action, &out);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = scalebench(&args);
    let r = out.exists().then(|| json(&out));
    (o, r)
}

/// Issue 42: a Redis Cluster's operations under load, each with its event's figures: a master
/// killed and its replica promoted, a node restarted, every node restarted in turn, the
/// append-only files rewritten; a service level met (exit 0) and one missed (exit 4, the missed
/// threshold named); an operation the kind lacks, a node it lacks and a bad threshold file refused
/// (exit 2) before the cluster is touched.
#[test]
fn redis_cluster_operations_are_measured_against_a_service_level() {
    let dir = test_dir();
    let up = Up::new(
        dir.path(),
        "name = \"ops-redis\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n\
         [redis]\nreplicas = 1\nappendonly = true\n",
    );
    // The nodes' lines (role, pid, state), not the status's last line: whether a replica's link
    // is up yet comes and goes on its own (CI: "busy: replica node4: link to master not up" just
    // after the cluster came up, "ready and idle" later).
    let pids = || {
        let o = scalebench(&[
            "cluster",
            "status",
            up.file(),
            "--clusters-dir",
            up.clusters(),
        ]);
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("node"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let before = pids();
    assert_eq!(before.lines().count(), 1 + 6, "{before}");
    let bad_level = dir.path().join("bad.toml");
    std::fs::write(&bad_level, "[operation.crash]\navailability_pct = 120\n").unwrap();
    for (action, extra, says) in [
        ("repair", vec![], "has no operation 'repair'"),
        ("restart:node9", vec![], "no node 'node9'"),
        ("explode", vec![], "'explode'"),
        (
            "crash:1",
            vec!["--sla", bad_level.to_str().unwrap()],
            "availability_pct = 120",
        ),
        // Issue 64: the check of data in motion under its name, and its former one.
        (
            "crash:1",
            vec!["--motion-check", "always"],
            "'always' for '--motion-check",
        ),
        (
            "crash:1",
            vec!["--probe", "always"],
            "'always' for '--motion-check",
        ),
    ] {
        let (o, r) = operation(&up, dir.path(), action, &extra);
        assert_eq!(o.status.code(), Some(2), "{action}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{action}: {}", stderr(&o));
        assert!(r.is_none(), "{action} wrote a result");
    }
    assert_eq!(pids(), before, "a refused operation touched the cluster");

    let lenient = dir.path().join("lenient.toml");
    std::fs::write(
        &lenient,
        "[default]\nrecovery_s = 120\n[operation.fail-primary]\np99_impact = 1e6\n",
    )
    .unwrap();
    let (o, r) = operation(
        &up,
        dir.path(),
        "fail-primary",
        &["--sla", lenient.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = r.unwrap();
    assert_eq!(r["service_level_met"], true, "{}", r["steps"][0]["verdict"]);
    let step = &r["steps"][0];
    let master = step["changed_nodes"][0].as_str().unwrap().to_string();
    let f = &step["impact"];
    assert_eq!(f["recovered"], true, "{f}");
    // The replica took over only after cluster-node-timeout (5 s): the killed master's keys
    // waited that long, which the intended-start latency shows.
    assert!(f["worst_p99_us"].as_f64().unwrap() > 1e6, "{f}");
    assert!(f["p99_impact"].as_f64().unwrap() > 10.0, "{f}");
    let verdict = &step["verdict"];
    assert_eq!(verdict["operation"], "fail-primary");
    assert_eq!(verdict["passed"], true);
    assert!(String::from_utf8_lossy(&o.stdout).contains("service level met"));
    let status = pids();
    let line = status.lines().find(|l| l.starts_with(&master)).unwrap();
    assert!(line.contains("stopped"), "{status}");
    let o = scalebench(&[
        "cluster",
        "start-node",
        up.file(),
        "--node",
        &master,
        "--clusters-dir",
        up.clusters(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A restart breaks a level that allows no impact: every operation completed, exit 4.
    let strict = dir.path().join("strict.toml");
    std::fs::write(&strict, "[default]\np99_impact = 1\n").unwrap();
    let (o, r) = operation(
        &up,
        dir.path(),
        "restart:node2",
        &["--no-load", "--sla", strict.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("service level not met"),
        "{}",
        stderr(&o)
    );
    let r = r.unwrap();
    assert_eq!(r["service_level_met"], false);
    let step = &r["steps"][0];
    assert_eq!(step["changed_nodes"], serde_json::json!(["node2"]));
    let check = &step["verdict"]["checks"][0];
    assert_eq!(
        (&check["figure"], &check["passed"]),
        (&"p99_impact".into(), &false.into())
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("SERVICE LEVEL MISSED: p99_impact"));
    // The report's table of operations has the event's figures and the verdict.
    let page = report_page(
        &dir.path().join("restart-node2.json"),
        &dir.path().join("restart.html"),
    );
    for needle in [
        "Operations under load",
        "restart:node2",
        "MISSED: p99_impact",
        "strict.toml",
    ] {
        assert!(page.contains(needle), "the report lacks {needle}");
    }

    for action in ["rolling-restart", "compact"] {
        let (o, r) = operation(&up, dir.path(), action, &["--no-load"]);
        assert!(o.status.success(), "{action}: {}", stderr(&o));
        let step = &r.unwrap()["steps"][0];
        assert_eq!(step["impact"]["recovered"], true, "{action}: {step}");
        assert_eq!(step["nodes_after"], 6, "{action}");
    }
    assert!(!pids().contains("stopped"), "{}", pids());
    a_rolling_restart_interrupted_leaves_every_node_running(&up, dir.path());
    nothing_lost(&up, dir.path(), 2000);
}

/// Ctrl-C during a rolling restart (docs/robustness.md): it ends where it is, the node being
/// restarted started again, the nodes after it untouched, exit 130, what was measured written.
fn a_rolling_restart_interrupted_leaves_every_node_running(up: &Up, dir: &Path) {
    let pid_of = |nodes: &[(String, String, u16, u32)], id: &str| {
        nodes.iter().find(|n| n.0 == id).map(|n| n.3)
    };
    let before = running_nodes_of(up);
    assert_eq!(before.len(), 6);
    let out = dir.join("interrupted.json");
    let mut args = operation_args(up, "rolling-restart", &out);
    args.push("--no-load".into());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-C once node1 runs again (a new process): node2 is next.
    let began = std::time::Instant::now();
    while pid_of(&running_nodes_of(up), "node1") == pid_of(&before, "node1") {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the rolling restart ended before node1 was seen restarted"
        );
        assert!(began.elapsed().as_secs() < 120, "node1 never restarted");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(signal(child.id() as i32, Signal::SIGINT));
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let after = running_nodes_of(up);
    assert_eq!(after.len(), 6, "every node running: {after:?}");
    // Stopped between nodes: the last one was never restarted.
    assert_eq!(pid_of(&after, "node6"), pid_of(&before, "node6"));
    // The step is kept as measured, marked interrupted.
    let r = json(&out);
    assert_eq!(r["interrupted"], true, "{r}");
    let step = &r["steps"][0];
    // It says which nodes run restarted and which as they were.
    let why = step["not_stable"].as_str().unwrap();
    assert!(
        why.contains("interrupted") && why.contains("restarted: node1") && why.contains("node6"),
        "{step}"
    );
    assert!(step["events"]["scale_done_s"].is_null(), "{step}");
}

/// The nodes of `cluster status`'s table: (id, role, port, pid) of each running one.
fn running_nodes_of(up: &Up) -> Vec<(String, String, u16, u32)> {
    let o = scalebench(&[
        "cluster",
        "status",
        up.file(),
        "--clusters-dir",
        up.clusters(),
    ]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 5 || f[4] != "running" {
                return None;
            }
            let port = f[2].rsplit(':').next()?.parse().ok()?;
            Some((f[0].to_string(), f[1].to_string(), port, f[3].parse().ok()?))
        })
        .collect()
}

/// Issue 42, lost acknowledged writes: Redis replicates asynchronously and acknowledges a write
/// before any replica has it. Here every replica is cut off (stopped, its link closed by its
/// master) while the load writes, then a master is killed and its replica, let go again, takes
/// over without the writes its master acknowledged meanwhile: the verify pass after the run counts
/// them (keys whose value is older than their last acknowledged write), and the same keys read
/// directly show the older values.
#[test]
fn a_master_killed_before_its_replica_caught_up_loses_acknowledged_writes() {
    let dir = test_dir();
    let up = Up::new(
        dir.path(),
        "name = \"lost-redis\"\ndatabase = \"redis-cluster\"\nnodes = 3\nidle_timeout_s = 120\n\
         [redis]\nreplicas = 1\n",
    );
    let nodes = running_nodes_of(&up);
    let replicas: Vec<u32> = nodes
        .iter()
        .filter(|n| n.1 == "replica")
        .map(|n| n.3)
        .collect();
    let masters: Vec<(u16, u32)> = nodes
        .iter()
        .filter(|n| n.1 == "master")
        .map(|n| (n.2, n.3))
        .collect();
    assert_eq!((replicas.len(), masters.len()), (3, 3), "{nodes:?}");
    let out = dir.path().join("lost.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(operation_args(&up, "fail-primary", &out))
        .args(["--status-interval", "200ms"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The run under load has begun (its first status line): cut the replicas off.
    use std::io::BufRead;
    let mut notes = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let mut line = String::new();
    while notes.read_line(&mut line).unwrap() > 0 && !line.starts_with("run ") {
        said.push_str(&line);
        line.clear();
    }
    assert!(line.starts_with("run "), "the run never began: {said}");
    for pid in &replicas {
        assert!(signal(*pid as i32, Signal::SIGSTOP), "SIGSTOP {pid}");
    }
    for (port, _) in &masters {
        let o = std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string(), "CLIENT", "KILL", "TYPE", "replica"])
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    // The rest of the output, read on (a full pipe would stall the command).
    let drained = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut notes, &mut rest);
        rest
    });
    // A master is killed by the operation: let the replicas go, so one can take over.
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while masters.iter().all(|(_, pid)| alive(*pid)) {
        assert!(std::time::Instant::now() < deadline, "no master was killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for pid in &replicas {
        assert!(signal(*pid as i32, Signal::SIGCONT), "SIGCONT {pid}");
    }
    let done = child.wait_with_output().unwrap();
    let rest = drained.join().unwrap();
    assert!(done.status.success(), "{said}{rest}");
    let printed = String::from_utf8_lossy(&done.stdout);
    let r = json(&out);
    let step = &r["steps"][0];
    assert_eq!(step["impact"]["recovered"], true, "{step}");
    let lost = &step["impact"]["lost_writes"];
    let (checked, lost_keys) = (
        lost["checked"].as_u64().unwrap(),
        lost["lost"].as_u64().unwrap(),
    );
    // The writes to one master of three over about two seconds, some of each key's.
    assert!(lost_keys > 10 && lost_keys < checked, "{lost}");
    assert_eq!(lost["unreadable"], 0);
    assert!(
        printed.contains(&format!("lost writes: {lost_keys} of {checked}")),
        "{printed}"
    );
    // What the verify pass found, a direct read shows: the key is there, the field older (a
    // value the run wrote before, or the load's).
    let sample = lost["samples"][0].as_str().unwrap();
    assert!(
        sample.contains(": lost: field ")
            && (sample.ends_with("holds an older write") || sample.contains("(the load's")),
        "{sample}"
    );
    assert_eq!(lost["unexpected"], 0, "{lost}");
    let key = sample.split(':').next().unwrap();
    let seed = running_nodes_of(&up)
        .into_iter()
        .find(|n| n.1 == "master")
        .unwrap()
        .2;
    let o = std::process::Command::new("redis-cli")
        .args(["-c", "-p", &seed.to_string(), "HLEN", key])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "10", "{key}");
}
