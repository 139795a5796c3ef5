//! The binary against a real PostgreSQL server: schema flags, and no password anywhere.

use std::process::{Command, Stdio};

use scalebench_deploy::postgres::PostgresServer;

#[path = "cli_server/credentials.rs"]
mod credentials;
use credentials::without_password;
#[path = "cli_server/replay.rs"]
mod replay;
#[path = "cli_server/walkthrough.rs"]
mod walkthrough;

mod common;
use common::{experiment_in, test_dir};

#[test]
fn postgres_through_the_cli_never_shows_the_password() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = PostgresServer::start(&base, &[], true).expect("PostgreSQL starts");
    let url = server.url();
    let password = server.password().to_string();
    let password = password.as_str();
    let dir = test_dir();
    let out = dir.path().join("r.json");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };

    // Without --create-schema, a missing table is a clear error (exit 1), password-free.
    let missing = run(&["load", "--db", &url, "-p", "recordcount=100"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("--create-schema") && !err.contains(password),
        "{err}"
    );

    let loaded = run(&[
        "run",
        "--load",
        "--create-schema",
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--operations",
        "2000",
        "-p",
        &format!("postgres.password_note={password}"),
        "--output",
        out.to_str().unwrap(),
    ]);
    // An unknown binding option is bad input: exit 2, and still no password in the message.
    assert_eq!(loaded.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&loaded.stderr).contains(password));
    assert!(!out.exists());

    let ok = run(&[
        "run",
        "--load",
        "--create-schema",
        "--drop-schema",
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--operations",
        "2000",
        "-p",
        "postgres.batch_mode=copy",
        "--batch-size",
        "100",
        "--output",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let stdout = String::from_utf8_lossy(&ok.stdout);
    let stderr = String::from_utf8_lossy(&ok.stderr);
    let file = std::fs::read_to_string(&out).unwrap();
    for (what, text) in [
        ("stdout", &*stdout),
        ("stderr", &*stderr),
        ("result file", &*file),
    ] {
        assert!(!text.contains(password), "password in {what}");
    }
    let r: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert!(r["parameters"]["db"].as_str().unwrap().contains("***"));
    assert_eq!(r["phases"][0]["totals"]["records"], 500);
    assert_eq!(r["phases"][1]["totals"]["ok"], 2000);
    assert_eq!(r["phases"][1]["totals"]["failed"], 0);

    // Issue 63 item 8: the driver's debug log (tokio-postgres logs through `log`, bridged) on
    // stderr, the password in neither the URL's form nor PGPASSWORD's.
    let logged = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "--db",
            &url,
            "-p",
            "recordcount=500",
            "--operations",
            "50",
            "-q",
        ])
        .args(["-o", out.to_str().unwrap()])
        .env("RUST_LOG", "debug")
        .env("PGPASSWORD", password)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&logged.stderr);
    assert!(logged.status.success(), "{log}");
    assert!(
        log.contains("DEBUG") && log.contains("tokio_postgres"),
        "{log}"
    );
    assert!(!log.contains(password), "password in the log");
    // Off by default: the same run without RUST_LOG or -v logs nothing.
    let quiet = run(&[
        "run",
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--operations",
        "50",
        "-q",
    ]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("DEBUG"));
}

/// A PostgreSQL primary with a synchronous replica, driven from the command line: `cluster up`,
/// `load`/`run --deployment` with space in the result, `status` without the password, `down`.
#[test]
fn a_deployment_through_the_cli_records_space_and_hides_the_password() {
    let dir = test_dir();
    let clusters = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-clusters");
    let file = dir.path().join("pg.toml");
    std::fs::write(
        &file,
        "name = \"cli-pg\"\ndatabase = \"postgres\"\nnodes = 2\n\
         [postgres]\nsynchronous_commit = \"remote_apply\"\nreads_to_replicas = true\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let run = |args: &[&str]| cli_on(&clusters, args);
    let _ = run(&["cluster", "down", f]);
    let (code, text) = run(&["cluster", "up", f]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("primary") && text.contains("replica"),
        "{text}"
    );

    load_measures_space_once_flushed_and_compacted(&run, f, dir.path(), &clusters);

    let r = a_paused_replica_serves_no_stale_read(&run, f, dir.path());
    let (code, text) = run(&[
        "run",
        "--deployment",
        f,
        "--duration",
        "1s",
        "--fault",
        "pause:node9",
    ]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("no node 'node9'") && text.contains("node1, node2"),
        "{text}"
    );
    // A probe rate beyond what one writer can do against a synchronous replica: bad input, named.
    let (code, text) = run(&[
        "run",
        "--deployment",
        f,
        "--duration",
        "1s",
        "--consistency-probe",
        "10000",
    ]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("'10000'") && text.contains("can write at most about"),
        "{text}"
    );
    two_clients_share_the_deployments_wait_space_and_faults(&run, f, dir.path());

    // The deployment's binding option (reads to the replica) is among the run's properties.
    assert!(r["parameters"]["properties"]["postgres.read_hosts"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1:"));

    space_per_record_is_marginal(&run, f, dir.path());

    let (code, text) = run(&["cluster", "status", f, "--json"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("postgres://bench:***@"), "{text}");
    let (code, text) = run(&["cluster", "space", f, "--records", "1000"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("bytes per record"), "{text}");
    // The table's files are data and index, the catalogs system.
    for part in ["data MB", "index MB", "system MB", "log MB"] {
        assert!(text.contains(part), "{text}");
    }
    let (code, text) = run(&["cluster", "flush", f]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("node2: CHECKPOINT"), "{text}");
    let (code, _) = run(&["cluster", "down", f]);
    assert_eq!(code, Some(0));
    let (code, text) = run(&["run", "--deployment", f, "--duration", "1s"]);
    assert_eq!(
        code,
        Some(1),
        "a stopped cluster is a runtime error: {text}"
    );
    assert!(text.contains("down"), "{text}");
    // The nodes' data (in directories of their own under the temp dir) goes with the cluster.
    let (code, text) = run(&["cluster", "down", f, "--purge"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!clusters.join("cli-pg").exists());
}

/// How the deployment test runs `scalebench`: its exit code and output.
type CliRun<'a> = dyn Fn(&[&str]) -> (Option<i32>, String) + 'a;

/// `scalebench args` with the test's clusters directory: its exit code and output, which must not
/// show the cli-pg cluster's password.
fn cli_on(clusters: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let c = clusters.to_str().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .env("SCALEBENCH_CLUSTERS_DIR", c)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // The password is made at `cluster up`, random, kept in the 0600 state file.
    let password = cluster_password(&clusters.join("cli-pg"));
    assert!(
        password.is_none_or(|p| !text.contains(&p)),
        "{args:?} shows the password:\n{text}"
    );
    (o.status.code(), text)
}

/// The load records the deployment and the space its records take, flushed and compacted.
fn load_measures_space_once_flushed_and_compacted(
    run: &CliRun<'_>,
    f: &str,
    dir: &std::path::Path,
    clusters: &std::path::Path,
) {
    let load_out = dir.join("load.json");
    let (code, text) = run(&[
        "load",
        "--deployment",
        f,
        "--create-schema",
        "-p",
        "recordcount=1000",
        "-o",
        load_out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("compact: node1: VACUUM ANALYZE"), "{text}");
    // Issue 38: flushed (a checkpoint on every node) before the compaction, and measured then too.
    assert!(
        text.contains("flush: node1: CHECKPOINT") && text.contains("flush: node2: CHECKPOINT"),
        "{text}"
    );
    assert!(
        text.contains("settled (flushed and compacted)")
            && text.contains("; as inserted (flushed, not compacted)"),
        "{text}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&load_out).unwrap()).unwrap();
    assert_eq!(r["deployment"]["name"], "cli-pg");
    assert_eq!(r["deployment"]["nodes"], 2);
    let space = &r["phases"][0]["space"];
    assert_eq!(space["taken"], "after load");
    assert_eq!(space["records"], 1000);
    assert_eq!(space["nodes"].as_array().unwrap().len(), 2);
    let total = space["total_bytes"].as_u64().unwrap();
    assert!(total > 2 * 1000 * 1000, "{space}");
    assert!(space["bytes_per_record"].as_f64().unwrap() > 2000.0);
    assert!(!std::fs::read_to_string(&load_out)
        .unwrap()
        .contains(&cluster_password(&clusters.join("cli-pg")).unwrap()));
}

/// A run with the replica paused and a consistency probe; its result.
fn a_paused_replica_serves_no_stale_read(
    run: &CliRun<'_>,
    f: &str,
    dir: &std::path::Path,
) -> serde_json::Value {
    let run_out = dir.join("run.json");
    let (code, text) = run(&[
        "run",
        "c",
        "--deployment",
        f,
        "-p",
        "recordcount=1000",
        "--duration",
        "2s",
        "-o",
        run_out.to_str().unwrap(),
        "--consistency-probe",
        "50",
        "--fault",
        "pause:node2,every=600ms,for=200ms",
    ]);
    assert_eq!(code, Some(0), "{text}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_out).unwrap()).unwrap();
    assert_eq!(r["phases"][0]["space"]["taken"], "after run");
    // Issue 32: the replica was paused (SIGSTOP/SIGCONT) three times on the run's timeline; the
    // reads it serves waited through a pause; remote_apply still shows no stale read.
    let phase = &r["phases"][0];
    let faults = phase["faults"].as_array().unwrap();
    assert!(faults.len() >= 2, "{faults:?}");
    for f in faults {
        assert_eq!(
            (f["kind"].as_str(), f["node"].as_str()),
            (Some("pause"), Some("node2"))
        );
        // Timed from the measurement start; the last may be cut short by the phase's end.
        let (start, end) = (f["start_s"].as_f64().unwrap(), f["end_s"].as_f64().unwrap());
        assert!(start >= 0.0 && end > start && end <= 2.5, "{f}");
    }
    let full = |f: &serde_json::Value| {
        f["end_s"].as_f64().unwrap() - f["start_s"].as_f64().unwrap() >= 0.15
    };
    assert!(faults.iter().any(full), "{faults:?}");
    assert!(text.contains("fault: node2 paused"), "{text}");
    assert!(
        phase["operations"]["READ"]["latency"]["max_us"]
            .as_f64()
            .unwrap()
            >= 100_000.0
    );
    assert_eq!(
        phase["consistency"]["stale_reads"], 0,
        "{}",
        phase["consistency"]
    );
    assert!(phase["consistency"]["probe_writes"].as_u64().unwrap() >= 20);
    r
}

fn two_clients_share_the_deployments_wait_space_and_faults(
    run: &CliRun<'_>,
    f: &str,
    dir: &std::path::Path,
) {
    // Issue 41, point 4: two clients on the deployment. The launcher holds it: the wait until
    // idle before the run and the space after it are taken once, by the launcher, and the space
    // is in the merged result. Point 6: the launcher pauses the replica while both clients load.
    let clients_out = dir.join("clients.json");
    let (code, text) = run(&[
        "run",
        "c",
        "--deployment",
        f,
        "--clients",
        "2",
        "-p",
        "recordcount=1000",
        "--duration",
        "1s",
        "--fault",
        "pause:node2,every=400ms,for=100ms",
        "-o",
        clients_out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("fault: node2 paused"), "{text}");
    assert_eq!(
        text.matches("waiting until cluster cli-pg is idle").count(),
        1,
        "{text}"
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&clients_out).unwrap()).unwrap();
    assert_eq!(merged["phases"][0]["clients"], 2);
    let pauses = merged["phases"][0]["faults"].as_array().unwrap();
    assert!(!pauses.is_empty(), "{merged}");
    assert!(pauses
        .iter()
        .all(|p| p["node"] == "node2" && p["start_s"].as_f64().unwrap() > 0.0));
    assert_eq!(
        merged["phases"][0]["space"]["taken"], "after run",
        "{merged}"
    );
    assert_eq!(
        merged["phases"][0]["space"]["nodes"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

fn space_per_record_is_marginal(run: &CliRun<'_>, f: &str, dir: &std::path::Path) {
    // The space a record adds is measured around each load, so the fixed overhead (WAL segments,
    // catalogs) cancels: 1,000 and 10,000 records cost the same per record (issue 29, point 9),
    // while the total over the records is mostly overhead at 1,000.
    let marginal_of = |records: &str| {
        let out = dir.join(format!("load-{records}.json"));
        let (code, text) = run(&[
            "load",
            "--deployment",
            f,
            "--create-schema",
            "--drop-schema",
            "-p",
            &format!("recordcount={records}"),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{text}");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let space = r["phases"][0]["space"].clone();
        (
            space["marginal"]["bytes_per_record"].as_f64().unwrap(),
            space["bytes_per_record"].as_f64().unwrap(),
        )
    };
    let (small, small_total) = marginal_of("1000");
    let (large, _) = marginal_of("10000");
    assert!(
        (small - large).abs() / large < 0.15,
        "{small:.0} and {large:.0} bytes per record"
    );
    assert!(
        small_total > 1.5 * small,
        "{small_total:.0} total, {small:.0} marginal"
    );
}

/// An experiment over two real databases (SQLite and PostgreSQL) x two configurations x two thread
/// counts x 3 repetitions: killed halfway, then resumed to the end; every run recorded once, and the
/// statistics agree with the recorded throughputs.
#[test]
fn an_experiment_runs_into_the_results_file_and_resumes_after_a_kill() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = PostgresServer::start(&base, &[], true).expect("PostgreSQL starts");
    let dir = test_dir();
    let file = dir.path().join("exp.toml");
    write_two_dbs_experiment(&file, dir.path(), &server.url());
    let results = dir.path().join("results.db");
    let exp = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        c.arg("experiment")
            .arg(&file)
            .arg("--results")
            .arg(&results)
            .args(extra)
            .stdin(Stdio::null());
        c
    };
    let plan = exp(&["--dry-run"]).output().unwrap();
    let plan = String::from_utf8_lossy(&plan.stdout).to_string();
    assert!(
        plan.starts_with("experiment two-dbs: 24 runs (8 cells x 3 repetitions)"),
        "{plan}"
    );
    assert!(!results.exists(), "a dry run records nothing");

    let count = |status: &str| -> u64 {
        let Ok(db) = rusqlite::Connection::open(&results) else {
            return 0;
        };
        db.query_row(
            "SELECT count(*) FROM runs WHERE status = ?1",
            [status],
            |r| r.get(0),
        )
        .unwrap_or(0)
    };
    let mut child = exp(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while count("ok") < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = count("ok");
    assert!((5..24).contains(&before), "{before} runs before the kill");

    let resumed = exp(&[]).output().unwrap();
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    assert!(err.contains(&format!("{before} already recorded")), "{err}");
    assert_eq!(count("ok"), 24);
    assert_eq!(count("failed") + count("interrupted"), 0);
    let db = rusqlite::Connection::open(&results).unwrap();
    let distinct: u64 = db
        .query_row(
            "SELECT count(DISTINCT cell || '#' || repetition) FROM runs",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(distinct, 24);
    let resources: u64 = db
        .query_row(
            "SELECT count(*) FROM run_resources WHERE target = 'client'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(resources > 0);

    a_cells_summary_is_the_mean_of_its_kept_repetitions(&db, &results);
    // No password in the results file.
    let all: String = db
        .query_row("SELECT group_concat(result, '') FROM runs", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(!all.contains(server.password()));
}

/// The experiment of the test above: SQLite and PostgreSQL at `url`, two configurations, two
/// thread counts, three repetitions.
fn write_two_dbs_experiment(file: &std::path::Path, dir: &std::path::Path, url: &str) {
    std::fs::write(
        file,
        format!(
            r#"
name = "two-dbs"
repetitions = 3
discard_first = 1
[procedure]
load = "once"
duration = "300ms"
[[database]]
name = "sqlite"
db = "sqlite://{}/bench.db"
[[database]]
name = "pg"
db = "{}"
[[configuration]]
name = "durable"
properties = {{ "sqlite.synchronous" = "full", "postgres.synchronous_commit" = "on" }}
[[configuration]]
name = "fast"
properties = {{ "sqlite.synchronous" = "off", "postgres.synchronous_commit" = "off" }}
[[workload]]
name = "a"
workload = "a"
properties = {{ recordcount = 500 }}
[sweep]
threads = [1, 2]
"#,
            dir.display(),
            url
        ),
    )
    .unwrap();
}

/// The summary of a cell is the mean of repetitions 2 and 3 (the first is discarded), exported
/// as JSON and CSV.
fn a_cells_summary_is_the_mean_of_its_kept_repetitions(
    db: &rusqlite::Connection,
    results: &std::path::Path,
) {
    // The summary of a cell is the mean of repetitions 2 and 3 (the first is discarded).
    let cell = "pg/fast/a/threads=2";
    let t: Vec<f64> = {
        let mut st = db
            .prepare("SELECT throughput_ops_s FROM runs WHERE cell = ?1 AND repetition > 1 ORDER BY repetition")
            .unwrap();
        st.query_map([cell], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(t.len(), 2);
    let export = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["results", "export", "two-dbs", "--results"])
        .arg(results)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let c = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cell"] == cell)
        .unwrap();
    assert_eq!(c["n"], 2);
    let mean = (t[0] + t[1]) / 2.0;
    assert!((c["throughput_mean"].as_f64().unwrap() - mean).abs() < 1e-6);
    let sd = (t[0] - t[1]).abs() / 2f64.sqrt();
    assert!((c["throughput_sd"].as_f64().unwrap() - sd).abs() < 1e-6);
    // t(0.975, 1) = 12.706: the interval of two repetitions is wide.
    assert!(
        (c["throughput_ci95"].as_f64().unwrap() - 12.7062 * sd / 2f64.sqrt()).abs()
            < 1e-2 * sd.max(1.0)
    );
    let csv = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["results", "export", "two-dbs", "--csv", "--results"])
        .arg(results)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&csv.stdout).lines().count(), 25);
}

/// Inserts on kept data (Dijkshoorn's INSERT cells with `load = "once"`): 3 repetitions x 2 thread
/// counts on PostgreSQL insert into six disjoint key ranges, so no insert conflicts and the table
/// holds the loaded records plus every insert. A single `run` on used keys is warned about, and
/// `transactioninsertstart` moves its inserts past them.
#[test]
fn inserts_of_repeated_runs_on_kept_data_never_reuse_a_key() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = PostgresServer::start(&base, &[], true).expect("PostgreSQL starts");
    let dir = test_dir();
    let file = dir.path().join("inserts.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "inserts"
repetitions = 3
[procedure]
load = "once"
duration = "1s"
options = {{ no_monitor = true }}
[[database]]
name = "pg"
db = "{}"
[[workload]]
name = "INSERT"
workload = "INSERT"
properties = {{ recordcount = 300 }}
[sweep]
threads = [1, 2]
"#,
            server.url()
        ),
    )
    .unwrap();
    let results = dir.path().join("results.db");
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .arg("experiment")
        .arg(&file)
        .arg("--results")
        .arg(&results)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = rusqlite::Connection::open(&results).unwrap();
    let (runs, ok_runs, inserted, failed): (u64, u64, u64, u64) = db
        .query_row(
            "SELECT count(*), sum(status = 'ok'), sum(ok), sum(failed) FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((runs, ok_runs, failed), (6, 6, 0));
    assert!(inserted > 6 * 20, "{inserted} inserts");
    let rows: u64 = server
        .sql("SELECT count(*) FROM usertable")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(rows, 300 + inserted);

    // A single run on the same data: its default range (from recordcount) was used above, and the
    // experiment's load and runs are recorded in the state directory, so the run continues after
    // them (issue 63, item 3).
    let url = server.url();
    let elsewhere = dir.path().join("state");
    // `state`: the state directory the experiment recorded its load in (None), or another.
    let run = |extra: &[&str], state: Option<&std::path::Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        command
            .args(["run", "INSERT", "--db", &url, "-p", "recordcount=300"])
            .args([
                "--operations",
                "50",
                "--no-monitor",
                "-q",
                "--format",
                "json",
            ])
            .args(extra)
            .stdin(Stdio::null());
        if let Some(dir) = state {
            command.env("SCALEBENCH_STATE_DIR", dir);
        }
        let o = command.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        (v["phases"][0].clone(), err, o.status.code())
    };
    let (phase, err, code) = run(&[], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("already exists"), "{err}");
    assert_eq!(phase["totals"]["failed"], 0, "{err}");
    let from = phase["insert_keys"]["start"].as_u64().unwrap();
    assert!(
        from >= 300 + inserted,
        "{from}: after the experiment's {inserted} inserts"
    );
    // Without the record (another state directory), the run collides with the experiment's keys
    // and says so.
    let (_, err, _) = run(&[], Some(&elsewhere));
    assert!(
        err.contains("already exists") && err.contains("transactioninsertstart"),
        "{err}"
    );
    assert!(
        err.contains("WARNING: ") && err.contains("conflict"),
        "{err}"
    );
    let start = format!("transactioninsertstart={}", 300 + inserted + 1000);
    let (phase, err, code) = run(&["-p", &start], Some(&elsewhere));
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("already exists"), "{err}");
    assert_eq!(phase["totals"]["failed"], 0, "{err}");
    assert_eq!(phase["insert_keys"]["start"], 300 + inserted + 1000);
    assert_eq!(phase["insert_keys"]["end"], 300 + inserted + 1000 + 50);
}

/// Swaminathan's scaling analysis: `nodes` in the sweep redeploys the cluster at each size with
/// everything else equal; the report draws one throughput-against-size line per database x
/// configuration x workload x parameters, and recommends the best (or a tie) at each point.
#[cfg(feature = "all-bindings")]
#[test]
fn cluster_size_is_a_sweep_axis_with_one_line_per_setup_and_a_recommendation() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("etcd.toml"),
        "name = \"sweep-etcd\"\ndatabase = \"etcd\"\nnodes = 1\nidle_timeout_s = 60\n",
    )
    .unwrap();
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        r#"
name = "sizes"
repetitions = 2
[procedure]
load = "once"
warmup = "200ms"
duration = "1s"
[[database]]
name = "etcd"
deployment = "etcd.toml"
[[configuration]]
name = "linearizable"
[[configuration]]
name = "serializable"
deployment = { binding = { read_consistency = "serializable" } }
[[workload]]
name = "c"
workload = "c"
properties = { recordcount = 200 }
[sweep]
nodes = [1, 3]
threads = [2]
"#,
    )
    .unwrap();
    let results = dir.path().join("results.db");
    let clusters = dir.path().join("clusters");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&[
        "experiment".as_ref(),
        file.as_os_str(),
        "--results".as_ref(),
        results.as_os_str(),
        "--clusters-dir".as_ref(),
        clusters.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every run ran on a cluster of its cell's size.
    let db = rusqlite::Connection::open(&results).unwrap();
    let rows: Vec<(String, String, String)> = db
        .prepare("SELECT cell, status, result FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 8);
    for (cell, status, result) in &rows {
        assert_eq!(status, "ok", "{cell}");
        let r: serde_json::Value = serde_json::from_str(result).unwrap();
        let nodes = r["deployment"]["nodes"].as_u64().unwrap();
        assert!(
            cell.contains(&format!("nodes={nodes},")),
            "{cell}: {nodes} nodes"
        );
        // The size is the deployment's, not a workload property.
        let properties = &r["parameters"]["properties"];
        assert!(properties.get("nodes").is_none(), "{properties}");
    }
    let html = dir.path().join("report.html");
    let csv = dir.path().join("csv");
    let o = run(&[
        "report".as_ref(),
        results.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
        "--csv-dir".as_ref(),
        csv.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Throughput against cluster size: a line per configuration, each with both sizes.
    let chart = std::fs::read_to_string(csv.join("nodes-throughput.csv")).unwrap();
    for setup in [
        "etcd/linearizable/c threads=2",
        "etcd/serializable/c threads=2",
    ] {
        let sizes: Vec<&str> = chart
            .lines()
            .filter(|l| l.contains(setup))
            .filter_map(|l| l.split(',').nth(1))
            .collect();
        assert_eq!(sizes.len(), 2, "{setup} in\n{chart}");
    }
    // The recommendation: one row per workload x parameters x size, naming a database or a tie.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Recommendation"));
    for point in [
        // Workload, cluster size and the other parameters a column each (issue 44: no
        // "nodes=-"); the best database's cell is text: read from the left.
        "c</td><td>1</td><td class=\"l\">threads=2</td><td class=\"l\">",
        "c</td><td>3</td><td class=\"l\">threads=2</td><td class=\"l\">",
    ] {
        let best = page
            .split(point)
            .nth(1)
            .unwrap_or_else(|| panic!("no row {point}"));
        assert!(
            best.starts_with("etcd/") || best.starts_with("tie: etcd/"),
            "{point}"
        );
    }
    let _ = run(&[
        "cluster".as_ref(),
        "down".as_ref(),
        dir.path().join("etcd.toml").as_os_str(),
        "--clusters-dir".as_ref(),
        clusters.as_os_str(),
    ]);
}

/// The benchmark user's password of a local cluster, from its state file (once it is up).
fn cluster_password(dir: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("cluster.json")).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    state["facts"]["password"].as_str().map(str::to_string)
}

/// A killed experiment leaves the cluster it started running; the resumed experiment takes it over
/// and stops it at the end, as it stops the clusters it starts itself.
#[test]
fn a_resumed_experiment_stops_the_cluster_its_killed_predecessor_started() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("pg.toml"),
        "name = \"resume-pg\"\ndatabase = \"postgres\"\nnodes = 1\nidle_timeout_s = 60\n",
    )
    .unwrap();
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        r#"
name = "resume-cluster"
repetitions = 6
[procedure]
load = "once"
duration = "1s"
[[database]]
name = "pg"
deployment = "pg.toml"
[[workload]]
name = "c"
workload = "c"
properties = { recordcount = 200 }
"#,
    )
    .unwrap();
    let results = dir.path().join("results.db");
    let clusters = dir.path().join("clusters");
    let exp = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        c.arg("experiment")
            .arg(&file)
            .arg("--results")
            .arg(&results)
            .arg("--clusters-dir")
            .arg(&clusters)
            .stdin(Stdio::null());
        c
    };
    let recorded = || -> u64 {
        rusqlite::Connection::open(&results)
            .and_then(|db| db.query_row("SELECT count(*) FROM runs", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let mut child = exp()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while recorded() < 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(recorded() >= 1);
    let cluster_dir = || {
        let entry = std::fs::read_dir(&clusters)
            .unwrap()
            .flatten()
            .find(|e| e.path().join("cluster.json").exists())
            .expect("a cluster directory");
        scalebench_deploy::Cluster::open(&entry.path()).unwrap()
    };
    let left = cluster_dir();
    let servers: Vec<_> = left.state.nodes.iter().filter_map(|n| n.process).collect();
    assert!(
        !servers.is_empty() && servers.iter().all(|p| p.is_running()),
        "the killed experiment left its cluster running"
    );

    let resumed = exp().output().unwrap();
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    assert!(err.contains("already recorded"), "{err}");
    assert!(
        servers.iter().all(|p| !p.is_running()),
        "the resumed experiment left its predecessor's cluster running"
    );
    assert!(cluster_dir().state.nodes.iter().all(|n| !n.is_running()));
}

/// `cluster down --purge` stops the cluster and deletes its directory with every node's data, also
/// where a node's directory lives elsewhere (servers run as a system account when tests run as root).
#[test]
fn cluster_down_purge_deletes_the_cluster_and_its_nodes_data() {
    let dir = test_dir();
    let file = dir.path().join("etcd.toml");
    std::fs::write(
        &file,
        "name = \"purged\"\ndatabase = \"etcd\"\nnodes = 1\nidle_timeout_s = 60\n",
    )
    .unwrap();
    let clusters = dir.path().join("clusters");
    let cluster = |action: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        c.arg("cluster")
            .args(action)
            .arg(&file)
            .arg("--clusters-dir")
            .arg(&clusters)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let up = cluster(&["up"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let cluster_dir = clusters.join("purged");
    let state = scalebench_deploy::Cluster::open(&cluster_dir).unwrap();
    let node = &state.state.nodes[0];
    let (node_dir, process) = (node.dir.clone(), node.process.unwrap());
    assert!(node_dir.join("data").is_dir());
    let down = cluster(&["down", "--purge"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(!process.is_running());
    assert!(!cluster_dir.exists());
    assert!(!node_dir.exists(), "{} is left", node_dir.display());
}

/// An installed binary (a copy outside the checkout) with a deployment file in a directory of its own
/// and that directory as the working directory: `cluster up` of Cassandra resolves the server itself
/// (Maven, into the per-user cache), with nothing taken from the checkout (issue 16, point 2).
#[test]
fn an_installed_binary_starts_cassandra_from_any_directory() {
    let dir = test_dir();
    let bin = dir.path().join("bin/scalebench");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_scalebench"), &bin).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("my-cassandra.toml"),
        "name = \"anywhere\"\ndatabase = \"cassandra\"\nnodes = 1\nready_timeout_s = 300\n\
         [cassandra]\nheap_mb = 512\n[binding]\nreplication_factor = 1\n",
    )
    .unwrap();
    let cluster = |action: &[&str]| {
        Command::new(&bin)
            .arg("cluster")
            .args(action)
            .args(["my-cassandra.toml", "--clusters-dir", "clusters"])
            .current_dir(&work)
            .env_remove("SCALEBENCH_CASSANDRA_CLASSPATH")
            .env_remove("SCALEBENCH_CACHE_DIR")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let up = cluster(&["up"]);
    let err = String::from_utf8_lossy(&up.stderr).into_owned();
    let status = cluster(&["status", "--json"]);
    let down = cluster(&["down", "--purge"]);
    assert!(up.status.success(), "{err}");
    assert!(status.status.success());
    let s: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(s["not_ready"].as_array().map(Vec::len), Some(0), "{s}");
    assert_eq!(s["nodes"][0]["running"], true, "{s}");
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
}

/// Dijkshoorn's multi-master PostgreSQL: an experiment on a Bucardo deployment (2 masters) with
/// `load = "once"` runs INSERT and UPDATE repetitions without a failure: the deployment created the
/// table on both masters, the clients spread over them, and no run's inserts reuse a key.
#[test]
fn an_experiment_on_bucardo_masters_runs_without_failures() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("bucardo.toml"),
        "name = \"cli-bucardo\"\ndatabase = \"postgres-bucardo\"\nnodes = 2\n",
    )
    .unwrap();
    let file = dir.path().join("multi-master.toml");
    std::fs::write(
        &file,
        r#"
name = "multi-master"
repetitions = 2
[procedure]
load = "once"
duration = "1s"
options = { no_monitor = true }
[[database]]
name = "pg-bucardo-2"
deployment = "bucardo.toml"
[[workload]]
name = "INSERT"
workload = "INSERT"
properties = { recordcount = 500, dataintegrity = true }
[[workload]]
name = "UPDATE"
workload = "UPDATE"
properties = { recordcount = 500, dataintegrity = true }
[sweep]
threads = [2]
"#,
    )
    .unwrap();
    let (o, results) = experiment_in(dir.path(), &file);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = rusqlite::Connection::open(&results).unwrap();
    let (runs, ok_runs, done, failed): (u64, u64, u64, u64) = db
        .query_row(
            "SELECT count(*), sum(status = 'ok'), sum(ok), sum(failed) FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((runs, ok_runs, failed), (4, 4, 0));
    assert!(done > 4 * 20, "{done} operations");
}

/// Wegert's procedure (`load = "restore"`): one load per data set, shared by the workloads that
/// differ only in their operations (c and a: reads, then updates, on the same records); the data is
/// restored before a run that follows inserts, so every run starts on the loaded records; runs after
/// reads and updates are not restored.
#[test]
fn restore_brings_back_the_loaded_data_only_after_inserts() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("pg.toml"),
        "name = \"cli-restore\"\ndatabase = \"postgres\"\nnodes = 1\n",
    )
    .unwrap();
    let file = dir.path().join("restore.toml");
    std::fs::write(
        &file,
        r#"
name = "restore"
repetitions = 2
[procedure]
load = "restore"
duration = "1s"
options = { no_monitor = true }
[[database]]
name = "pg"
deployment = "pg.toml"
[[workload]]
name = "read"
workload = "c"
properties = { recordcount = 300 }
[[workload]]
name = "update"
workload = "a"
properties = { recordcount = 300, readproportion = 0, updateproportion = 1 }
[[workload]]
name = "insert"
workload = "INSERT"
properties = { recordcount = 300 }
[sweep]
threads = [1]
"#,
    )
    .unwrap();
    let (o, results) = experiment_in(dir.path(), &file);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // read #1 and insert #1 load (and snapshot); the others follow reads and updates on their
    // data: only insert #2 is restored.
    assert_eq!(err.matches("restoring the loaded data").count(), 1, "{err}");
    let db = rusqlite::Connection::open(&results).unwrap();
    let loaded: Vec<(String, u64)> = db
        .prepare(
            "SELECT workload, repetition FROM runs WHERE json_extract(result, '$.phases[0].phase') = 'load' \
             ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        loaded,
        [("read".to_string(), 1), ("insert".to_string(), 1)],
        "the update runs use the records loaded for the reads"
    );
    let starts: Vec<(u64, u64)> = db
        .prepare(
            "SELECT repetition, json_extract(result, '$.phases[#-1].insert_keys.start') FROM runs \
             WHERE workload = 'insert' ORDER BY repetition",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        starts,
        [(1, 300), (2, 300)],
        "both insert runs start on the loaded records"
    );
    let failed: u64 = db
        .query_row("SELECT sum(failed) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(failed, 0);
}

/// A load that lost records is refused before anything is measured on its data: every read of a
/// missing record would count as a failure of the database (a loaded Cassandra ring lost 3 of 100
/// in a CI run of the Dory miniature, and its elastic run reported 3% not-found reads). Here a Redis
/// whose memory limit admits part of the records loses the rest.
#[test]
fn a_run_on_a_load_that_lost_records_fails_and_names_them() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = scalebench_deploy::redis::RedisServer::start(
        &base,
        &[("maxmemory", "3mb"), ("maxmemory-policy", "noeviction")],
        false,
        true,
    )
    .expect("Redis starts");
    let dir = test_dir();
    let file = dir.path().join("full.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "full"
[procedure]
load = "once"
duration = "1s"
options = {{ no_monitor = true }}
[[database]]
name = "redis"
db = "{}"
[[workload]]
name = "a"
workload = "a"
properties = {{ recordcount = 5000 }}
"#,
            server.url()
        ),
    )
    .unwrap();
    let (o, results) = experiment_in(dir.path(), &file);
    assert!(
        !o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let db = rusqlite::Connection::open(&results).unwrap();
    let (status, error, measured): (String, String, Option<u64>) = db
        .query_row("SELECT status, error, ok FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(status, "failed", "{error}");
    assert!(
        error.contains("the load failed") && error.contains("of 5000 inserts"),
        "{error}"
    );
    assert!(
        error.contains("core_workload_insertion_retry_limit"),
        "{error}"
    );
    assert_eq!(measured, None, "nothing measured on the incomplete data");
}

/// The README's "your own database" section: its `sh` blocks in order.
fn readme_own_database_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let section = readme
        .split("## Your own database in ten minutes")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README's section");
    section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

/// Runs `script` with bash, the binary on its PATH, in `dir` (its state directory there too); only
/// the record count (2,000) and the duration (2 s) are the test's. Returns (stdout, stderr).
fn run_as_written(script: &str, dir: &std::path::Path) -> (String, String) {
    let script: String = script
        .lines()
        .map(|line| {
            line.replace("recordcount=100000", "recordcount=2000")
                .replace("--duration 60s", "--duration 2s")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_scalebench"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .args(["-euc", &script])
        .current_dir(dir)
        .env("PATH", path)
        .env("SCALEBENCH_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{script}\n{err}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), err)
}

/// The page a README block's run wrote, and that every key its run read had been loaded.
fn assert_ran_as_the_readme_says(dir: &std::path::Path, page: &str, (out, err): (String, String)) {
    let html = std::fs::read_to_string(dir.join(page)).unwrap();
    assert!(html.contains("<h2>Phase: run"), "the report {page}");
    assert!(out.contains("READ") && out.contains("UPDATE"), "{out}");
    assert!(
        !err.contains("NotFound") && !err.contains("failed"),
        "every key the run read was loaded: {err}"
    );
}

/// Issue 44: the README's "your own database" section run as written by a shell with the binary
/// on its PATH, against real servers: the PostgreSQL block (only the server's URL is the test's)
/// and the Redis lines of the next one (its URL too). Each load creates what it needs, each run
/// reads every key and writes its report. (Cassandra's lines are the same commands with its URL:
/// a node of its own would add a minute to this binary; the cassandra tests load and run it.)
#[test]
fn the_readmes_own_database_section_runs_as_written_against_postgresql_and_redis() {
    let blocks = readme_own_database_blocks();
    assert!(blocks[0].starts_with("export PGPASSWORD="), "{}", blocks[0]);
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let dir = test_dir();

    // As a managed database: TLS only (issue 63's "done when"); the README's URL asks nothing of
    // TLS, and libpq's default (prefer) encrypts.
    let certs = tempfile::Builder::new()
        .prefix("scalebench-test-tls-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let server = credentials::tls_only_postgres(&base, certs.path());
    credentials::assert_refuses_plain_text(&server, dir.path());
    let script: String = blocks[0]
        .lines()
        .map(|line| {
            if line.starts_with("DB=") {
                assert!(!line.contains(":secret@"), "no password in the URL: {line}");
                format!("DB='{}'", without_password(&server))
            } else if line.starts_with("export PGPASSWORD=") {
                format!("export PGPASSWORD='{}'", server.password())
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ran_as_the_readme_says(dir.path(), "pg.html", run_as_written(&script, dir.path()));
    credentials::assert_each_source_connects(&server, dir.path());

    let redis = scalebench_deploy::redis::RedisServer::start(&base, &[], false, true)
        .expect("Redis starts");
    let lines: Vec<&str> = blocks[1]
        .lines()
        .filter(|l| l.contains("redis://db.example:6379"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", blocks[1]);
    let script = lines
        .join("\n")
        .replace("redis://db.example:6379", &redis.url());
    assert_ran_as_the_readme_says(
        dir.path(),
        "redis.html",
        run_as_written(&script, dir.path()),
    );
    walkthrough::the_walkthrough_file_runs_on_sqlite_and_on_redis(&redis.url(), dir.path());
}

/// `scalebench cluster ACTION FILE --clusters-dir DIR` (and more arguments).
fn cluster_cli(
    action: &str,
    file: &std::path::Path,
    clusters: &std::path::Path,
    more: &[&str],
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scalebench"));
    c.args(["cluster", action])
        .arg(file)
        .arg("--clusters-dir")
        .arg(clusters)
        .args(more)
        .stdin(Stdio::null());
    c
}

/// Issue 62, item 5: a cluster's state is locked by every command that changes it (a second one
/// is refused, exit 2, naming the holder, before it starts anything); two `cluster up` at once
/// leave one cluster, all of it recorded; and `down` says what became of each recorded process:
/// one gone before is "already gone", a pid another program has now is left alone (low 11).
#[test]
fn cluster_commands_take_the_lock_and_down_tells_each_process_as_it_is() {
    let dir = test_dir();
    let file = dir.path().join("locked.toml");
    std::fs::write(&file, "name = \"locked\"\ndatabase = \"etcd\"\nnodes = 2\n").unwrap();
    let clusters = dir.path().join("clusters");
    std::fs::create_dir_all(&clusters).unwrap();
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };

    // Held by another process (here, this test): up and down are refused at once.
    let lock_path = clusters.join("locked.lock");
    let held = std::fs::File::create(&lock_path).unwrap();
    held.lock().unwrap();
    std::fs::write(&lock_path, "pid 99999 (scalebench elastic, since then)\n").unwrap();
    for action in ["up", "down"] {
        let o = cluster_cli(action, &file, &clusters, &[]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{action}: {err}");
        assert_eq!(err.lines().count(), 1, "{action}: {err}");
        assert!(
            err.contains(
                "cluster locked is busy: pid 99999 (scalebench elastic, since then) holds its lock"
            ),
            "{action}: {err}"
        );
    }
    assert!(!clusters.join("locked").exists(), "up started something");
    drop(held);

    // Two at once: one brings the cluster up, the other is refused (busy, or already up).
    let (a, b) = (
        cluster_cli("up", &file, &clusters, &[]).output_in_thread(),
        cluster_cli("up", &file, &clusters, &[]).output_in_thread(),
    );
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    let codes = [a.status.code(), b.status.code()];
    assert!(
        codes.contains(&Some(0)) && codes.iter().filter(|c| **c == Some(0)).count() == 1,
        "{codes:?}\n{}\n{}",
        text(&a),
        text(&b)
    );
    let state = scalebench_deploy::Cluster::open(&clusters.join("locked")).unwrap();
    assert_eq!(state.state.nodes.len(), 2);
    let recorded: Vec<u32> = state
        .state
        .nodes
        .iter()
        .map(|n| n.process.unwrap().pid)
        .collect();
    let dirs: Vec<String> = std::iter::once(state.state.dir.clone())
        .chain(state.state.nodes.iter().map(|n| n.dir.clone()))
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d).display().to_string())
        .collect();
    // Every etcd serving from the cluster's directory (or, as root, from the directories its nodes
    // were moved to for the servers' account) is a recorded one.
    let serving = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                    let c = String::from_utf8_lossy(&c);
                    dirs.iter().any(|d| c.contains(&format!("{d}/")))
                })
            })
            .collect()
    };
    let mut running = serving();
    running.sort();
    let mut expected = recorded.clone();
    expected.sort();
    assert_eq!(running, expected);

    // node1 crashed before `down`; node2's pid now belongs to another program (its server gone).
    let kill = |pid: u32| {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::SIGKILL,
        )
        .unwrap()
    };
    kill(recorded[0]);
    kill(recorded[1]);
    let mut other = Command::new("sleep").arg("60").spawn().unwrap();
    let state_file = clusters.join("locked/cluster.json");
    let json = std::fs::read_to_string(&state_file).unwrap();
    let json = json.replace(
        &format!("\"pid\": {}", recorded[1]),
        &format!("\"pid\": {}", other.id()),
    );
    std::fs::write(&state_file, json).unwrap();
    let o = cluster_cli("down", &file, &clusters, &["--purge"])
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("node1: pid {} already gone", recorded[0])),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "node2: pid {} is another program now: left alone",
            other.id()
        )),
        "{said}"
    );
    assert!(!said.contains("stopped"), "{said}");
    assert!(
        matches!(other.try_wait(), Ok(None)),
        "the other program was signalled"
    );
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(serving().is_empty());
}

/// Runs a command on a thread of its own (two commands started together).
trait OutputInThread {
    fn output_in_thread(self) -> std::thread::JoinHandle<std::process::Output>;
}

impl OutputInThread for Command {
    fn output_in_thread(mut self) -> std::thread::JoinHandle<std::process::Output> {
        std::thread::spawn(move || self.output().unwrap())
    }
}

/// Issue 62, item 5: an experiment never takes over a cluster it did not start. With the user's
/// `cluster up` of its deployment running, an elastic experiment is refused (exit 2) before it
/// records or deploys anything, naming the cluster, its state file and `cluster down`; the
/// user's cluster keeps running.
#[test]
fn an_experiment_never_takes_over_a_cluster_started_by_cluster_up() {
    let dir = test_dir();
    let file = dir.path().join("mine.toml");
    std::fs::write(
        &file,
        "name = \"users-own\"\ndatabase = \"etcd\"\nnodes = 1\n",
    )
    .unwrap();
    let clusters = dir.path().join("clusters");
    let up = cluster_cli("up", &file, &clusters, &[]).output().unwrap();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let node = scalebench_deploy::Cluster::open(&clusters.join("users-own"))
        .unwrap()
        .state
        .nodes[0]
        .process
        .unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"takeover\"\nrepetitions = 1\n[procedure]\nmeasure = \"elastic\"\nwarmup = \"1s\"\n\
         request_set = 100\n[procedure.elastic]\naction = \"add:1\"\nbaseline = \"2s\"\nafter = \"1s\"\n\
         [[database]]\nname = \"etcd\"\ndeployment = \"mine.toml\"\n\
         [[workload]]\nname = \"a\"\nworkload = \"a\"\nproperties = { recordcount = 100 }\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (o, results) = experiment_in(dir.path(), &exp);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let down = cluster_cli("down", &file, &clusters, &["--purge"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(err.lines().count(), 1, "{err}");
    let state = clusters.join("users-own/cluster.json");
    for said in [
        "cluster users-own is running, started outside any experiment",
        state.to_str().unwrap(),
        "scalebench cluster down",
    ] {
        assert!(err.contains(said), "{said:?} not in {err}");
    }
    assert!(
        !results.exists(),
        "the refused experiment made {}",
        results.display()
    );
    // Its node ran on through the refusal, and only `cluster down` stopped it.
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(
        String::from_utf8_lossy(&down.stderr).contains(&format!("node1: pid {} stopped", node.pid))
    );
}
