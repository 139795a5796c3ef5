//! Issue 63, item 3: a run that knows its load. Truth known: SQLite refuses a second record under
//! one key (a UNIQUE constraint), so a run whose inserts land on keys already written fails them,
//! and the load's records are exactly those `recordcount` declares.

use std::path::Path;
use std::process::Output;

use super::common::*;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn sqlite(db: &Path) -> String {
    format!("sqlite://{}", db.display())
}

fn load(db: &Path, records: u64) {
    let n = format!("recordcount={records}");
    let o = scalebench(&[
        "load",
        "--db",
        &sqlite(db),
        "--create-schema",
        "-p",
        &n,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn run(db: &Path, args: &[&str]) -> Output {
    let url = sqlite(db);
    let mut all = vec!["run", "--db", url.as_str(), "-q"];
    all.extend_from_slice(args);
    scalebench(&all)
}

fn run_phase(result: &Path) -> serde_json::Value {
    json(result)["phases"][0].clone()
}

/// After a 300-record load, a run that declares YCSB's default 1,000 records (or more than
/// loaded) is refused before it measures, exit 2, naming the fix; with the load's count it runs
/// and its summary states the records it started on.
#[test]
fn a_run_that_forgets_the_load_s_record_count_is_refused_with_the_fix() {
    let dir = test_dir();
    let db = dir.path().join("a.db");
    load(&db, 300);
    // `--clients 2`: the launcher checks before it starts its clients.
    let declared: [&[&str]; 4] = [
        &[],
        &["-p", "recordcount=100"],
        &["-p", "recordcount=301"],
        &["--clients", "2"],
    ];
    for declared in declared {
        let mut args = vec!["c", "--operations", "50"];
        args.extend_from_slice(declared);
        let o = run(&db, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let line = err.lines().find(|l| l.starts_with("error:")).unwrap();
        assert!(line.contains("-p recordcount=300"), "{line}");
        assert!(o.stdout.is_empty(), "nothing measured: {args:?}");
    }
    let o = run(&db, &["c", "--operations", "50", "-p", "recordcount=300"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("records at the start: 300"), "{out}");
}

/// Workload D inserts: run twice on one load, the second run's inserts continue after the first's
/// instead of failing on its keys (before: 84 of 2,000 operations failed as conflicts); the second
/// from two client processes, whose launcher records the merged run.
#[test]
fn a_second_run_s_inserts_continue_after_the_first_s() {
    let dir = test_dir();
    let db = dir.path().join("d.db");
    load(&db, 300);
    let mut ranges = Vec::new();
    for i in 0..2 {
        let out = dir.path().join(format!("run{i}.json"));
        let clients = if i == 0 { "1" } else { "2" };
        let o = run(
            &db,
            &[
                "d",
                "-p",
                "recordcount=300",
                "--operations",
                "600",
                "--clients",
                clients,
                "-o",
                s(&out),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let p = run_phase(&out);
        assert_eq!(p["totals"]["failed"], 0, "run {i}: {}", p["totals"]);
        let keys = &p["insert_keys"];
        let inserted = p["operations"]["INSERT"]["ok"].as_u64().unwrap();
        assert!(inserted > 0, "workload D inserts");
        ranges.push((
            keys["start"].as_u64().unwrap(),
            keys["end"].as_u64().unwrap(),
            p["data"]["records_at_start"].as_u64().unwrap(),
            inserted,
        ));
    }
    let ((s0, e0, at0, ins0), (s1, _, at1, _)) = (ranges[0], ranges[1]);
    assert_eq!(
        (s0, at0),
        (300, 300),
        "the first run starts where the load ended"
    );
    assert_eq!(s1, e0, "the second run's inserts follow the first's");
    assert_eq!(
        at1,
        300 + ins0,
        "records at the start count the first run's inserts"
    );
    // A start given by the user is kept.
    let o = run(
        &db,
        &[
            "d",
            "-p",
            "recordcount=300",
            "-p",
            "transactioninsertstart=5000",
            "--operations",
            "100",
            "-o",
            s(&dir.path().join("given.json")),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        run_phase(&dir.path().join("given.json"))["insert_keys"]["start"],
        5000
    );
}

/// The record of a load is trusted only while the database agrees: a table replaced outside
/// scalebench (here a file moved over it) is said and the record forgotten, and the run goes on.
#[test]
fn a_load_record_the_database_contradicts_is_said_and_forgotten() {
    let dir = test_dir();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    load(&a, 300);
    load(&b, 100);
    std::fs::rename(&b, &a).unwrap();
    let o = run(&a, &["c", "--operations", "50", "-p", "recordcount=100"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("is not there") && err.contains("forgotten"),
        "{err}"
    );
    // Forgotten: the next run hears nothing of it.
    let o = run(&a, &["c", "--operations", "50", "-p", "recordcount=100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("forgotten"), "{}", stderr(&o));
}
