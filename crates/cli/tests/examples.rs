//! Every shipped example experiment runs for real, in miniature (`scalebench experiment --miniature`:
//! the same matrix, databases and deployments; 1 s runs, record counts / 100, one repetition),
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

/// What a miniature left: its results database, its runs (cell, status, result JSON) and its report.
struct Miniature {
    _dir: TestDir,
    name: String,
    results: PathBuf,
    runs: Vec<(String, String, serde_json::Value)>,
    report: String,
}

impl Miniature {
    /// The measured phase of each run, with its cell.
    fn measured(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.runs.iter().map(|(cell, _, r)| {
            (
                cell.as_str(),
                r["phases"]
                    .as_array()
                    .and_then(|p| p.last())
                    .unwrap_or(&serde_json::Value::Null),
            )
        })
    }

    /// `results show` of the miniature.
    fn show(&self) -> String {
        let o = scalebench(&[
            "results",
            "show",
            &self.name,
            "--results",
            self.results.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

/// `text`'s words joined by single spaces: what `results show` wrapped, unwrapped.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A cell's lines in `results show`: the first line `found` holds, and the indented lines after it
/// (its figures when its name is long, its p99s, its notes), their words joined by single spaces
/// (as the wrapped text was before it was wrapped).
fn cell_lines(show: &str, found: impl Fn(&str) -> bool) -> String {
    let mut lines = show.lines().skip_while(|l| !found(l));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no such cell: {show}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with(' ')))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The examples whose matrices the suite runs with `--cells each-value`: every database,
/// configuration, workload and swept value once, not every combination (their full miniatures take
/// 5 to 20 minutes each on 2 cores; the combinations run the same code).
const EACH_VALUE: &[&str] = &[
    "wegert-configurations",
    "swaminathan-sizes",
    "dijkshoorn-operations",
    "operations",
];

fn cells_of(name: &str) -> &'static str {
    if EACH_VALUE.contains(&name) {
        "each-value"
    } else {
        "all"
    }
}

/// The examples the suite runs on some of their databases only (`experiment --database`), and
/// those databases. The operations miniature runs every operation on etcd: the same operations on
/// Redis, Galera, Patroni and Cassandra run under load in their own tests (`elastic.rs`,
/// `cluster_operations/galera.rs`, `cluster_operations/patroni.rs`, `cluster_operations/cassandra.rs`), and each cluster more here
/// costs a minute or more of CI. Wegert's miniature leaves out his replication series on a 4-node
/// ring (13 cells of RF 1 to 4, 3.6 min alone here): its cells run the code of the 1- and 3-node
/// rings' cells with another replication factor, which `cluster_operations/cassandra.rs` changes on one ring.
/// Dory's miniature runs his HBase cell only: Cassandra's ring doubling 3 -> 6 took 4.4 of its 6.4
/// min alone here (three bootstraps one after another; on 2 cores the 6-node ring never
/// stabilised), and Cassandra's bootstrap under load is `cluster_operations/cassandra.rs`' add and remove; his
/// Redis Cluster's doubling twice (3 -> 6 -> 12 masters, the same schedule and table of sizes) is
/// `elastic.rs`' `redis_cluster_doubles_twice_and_scalability_compares_stable_states`, a minute
/// and a half of this binary's time more.
/// Dijkshoorn's leaves out his 3-node Cassandra ring (a ring deployed for its three consistency
/// pairs): Wegert's miniature runs consistency pairs on a 3-node ring; and his master-slave row
/// through Bucardo (four servers and Bucardo's daemon to deploy): Bucardo's master-slave sync runs
/// in `cluster_bucardo.rs`, its multi-master here.
const SOME_DATABASES: &[(&str, &[&str])] = &[
    ("dory-elasticity", &["hbase-1"]),
    (
        "dijkshoorn-operations",
        &[
            "postgres-single",
            "postgres-master-slave",
            "postgres-multi-master",
            "cassandra-1",
            "hbase-1",
        ],
    ),
    ("operations", &["etcd-3"]),
    ("wegert-configurations", &["cassandra-1", "cassandra-3"]),
];

/// The examples whose miniatures leave some configurations out, and those configurations.
/// Wegert's commit-log modes each redeploy his 1-node ring (about half a minute of CI each);
/// `cluster_operations/cassandra.rs` asserts what each mode writes and runs a ring in each. His
/// unprepared and if-not-exists cells (a load and a run each) set binding properties that
/// `server-tests/tests/cassandra.rs` runs against a real node (`crud_semantics_prepared_and_unprepared`,
/// `insert_if_not_exists_reports_a_second_insert_as_conflict`); his prepared cell stays, the one
/// that runs the workloads that write (U, I, M), each after a restore.
const LEFT_OUT_CONFIGURATIONS: &[(&str, &[&str])] = &[(
    "wegert-configurations",
    &[
        "commitlog-batch",
        "commitlog-group-50ms",
        "commitlog-off",
        "unprepared",
        "if-not-exists",
    ],
)];

/// The examples whose miniatures run some swept values only (`experiment --sweep`), and those.
/// Swaminathan's `nodes = 3` cell deploys a 3-node ring of 1-token Cassandra nodes for one run
/// (three bootstraps, about a minute and a half of CI); the sweep of cluster sizes runs on etcd in
/// `cli_server.rs` (`nodes = [1, 3]`), and 3-node Cassandra rings in Wegert's miniature.
const ONLY_SWEPT: &[(&str, &[(&str, &str)])] = &[("swaminathan-sizes", &[("nodes", "1")])];

/// The `--database`, `--configuration` and `--sweep` arguments the suite runs `name` with (none:
/// every database, configuration and swept value).
fn row_args(name: &str) -> Vec<String> {
    let databases = SOME_DATABASES
        .iter()
        .filter(|(example, _)| *example == name)
        .flat_map(|(_, databases)| databases.iter())
        .flat_map(|d| ["--database".to_string(), d.to_string()]);
    let mut args: Vec<String> = databases.collect();
    for (_, left_out) in LEFT_OUT_CONFIGURATIONS.iter().filter(|(e, _)| *e == name) {
        let spec =
            scalebench_study::experiment::spec::Experiment::from_file(&example(name)).unwrap();
        let names: Vec<&str> = spec
            .configurations
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert!(
            left_out.iter().all(|l| names.contains(l)),
            "{name}: {names:?}"
        );
        for c in names.into_iter().filter(|c| !left_out.contains(c)) {
            args.extend(["--configuration".to_string(), c.to_string()]);
        }
    }
    for (_, values) in ONLY_SWEPT.iter().filter(|(e, _)| *e == name) {
        for (key, value) in values.iter() {
            args.extend(["--sweep".to_string(), format!("{key}={value}")]);
        }
    }
    args
}

fn run_in_miniature(example: &Path) -> Miniature {
    let name = example.file_stem().unwrap().to_str().unwrap();
    let dir = test_dir();
    let started = std::time::Instant::now();
    let results = dir.path().join("r.db");
    let databases = row_args(name);
    let clusters = dir.path().join("clusters");
    let mut args = vec![
        "experiment",
        example.to_str().unwrap(),
        "--miniature",
        "--cells",
        cells_of(name),
        "--results",
        results.to_str().unwrap(),
        "--clusters-dir",
        clusters.to_str().unwrap(),
    ];
    args.extend(databases.iter().map(String::as_str));
    let o = scalebench(&args);
    // An experiment of operations against a service level exits 4 when every run completed and
    // one missed it: a miniature's 3 s baseline and 10 s wait for stability often do.
    let judged = std::fs::read_to_string(example)
        .unwrap()
        .contains("\nservice_level = ");
    match o.status.code() {
        Some(0) => {}
        Some(4) if judged => assert!(
            stderr(&o).contains("service level missed"),
            "{name}: {}",
            stderr(&o)
        ),
        _ => panic!("{name}: {}", stderr(&o)),
    }
    // The time the docs' table of miniatures shows (seen with --nocapture).
    eprintln!(
        "{name}: miniature in {:.1} min",
        started.elapsed().as_secs_f64() / 60.0
    );

    let miniature = format!("{name}-miniature");
    let planned = planned_runs(example, cells_of(name), &databases);
    let db = rusqlite::Connection::open(&results).unwrap();
    let runs: Vec<(String, String, Option<String>, serde_json::Value)> = db
        .prepare("SELECT cell, status, error, result FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| {
            let json: Option<String> = r.get(3)?;
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                json.map_or(serde_json::Value::Null, |j| {
                    serde_json::from_str(&j).unwrap()
                }),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), planned, "{name}: every planned run is recorded");
    let runs: Vec<(String, String, serde_json::Value)> = runs
        .into_iter()
        .map(|(cell, status, error, r)| {
            // An operation under load fails some operations while it acts (a node down, a
            // member joining, racing updates on 100 records): in a miniature's few seconds that
            // can pass 1% of the run (CI: an etcd rolling restart; here: etcd's add, 56
            // conflicts of 4,718). Such a run is flagged, loudly; it never counts as failed.
            let flagged_by_design = judged
                && status == "failures"
                && error
                    .as_deref()
                    .is_some_and(|e| e.contains("phase's operations failed"));
            assert!(
                status == "ok" || flagged_by_design,
                "{name}: {cell}: {status} {error:?}"
            );
            (cell, status, r)
        })
        .collect();
    for (cell, _, r) in &runs {
        let ok = r["phases"]
            .as_array()
            .and_then(|p| p.last())
            .and_then(|p| p["totals"]["ok"].as_u64())
            .unwrap_or(0);
        assert!(ok > 0, "{name}: {cell} measured nothing");
    }

    let report = dir.path().join("report.html");
    let o = scalebench(&[
        "report",
        results.to_str().unwrap(),
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
    Miniature {
        _dir: dir,
        name: miniature,
        results,
        runs,
        report: html,
    }
}

/// The runs `--miniature --dry-run` plans ("experiment NAME: N runs (...)").
fn planned_runs(example: &Path, cells: &str, databases: &[String]) -> usize {
    let mut args = vec![
        "experiment",
        example.to_str().unwrap(),
        "--miniature",
        "--cells",
        cells,
        "--dry-run",
    ];
    args.extend(databases.iter().map(String::as_str));
    let plan = scalebench(&args);
    let header = String::from_utf8_lossy(&plan.stdout);
    header
        .split_once(": ")
        .and_then(|(_, rest)| rest.split_once(" runs"))
        .map(|(n, _)| n.parse().unwrap())
        .expect("the plan's header")
}

/// One test per example, so that the test harness runs two at a time (`--test-threads 2`): much of
/// an example's time is spent waiting for servers to start, join and settle. The harness starts
/// tests in name order: the longest first (Wegert's, the one Cassandra ring of 3 nodes restored
/// before every run; then Dijkshoorn's seven deployments), so that the two threads end together.
/// Dory's no longer doubles a Cassandra ring ([`SOME_DATABASES`]), so no two rings of 3 or more
/// Cassandra nodes run side by side (a QUORUM cell of Wegert's timed out beside Dory's on 2 cores).
macro_rules! examples {
    ($($test:ident => $file:literal $(, $check:ident)?);* $(;)?) => {
        /// Every example with a test below.
        const TESTED: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $test() {
                let _m = run_example($file);
                $($check(&_m);)?
            }
        )*
    };
}

examples! {
    run_1_wegert_configurations => "wegert-configurations", wegert_restores_before_every_run;
    run_2_dijkshoorn_operations => "dijkshoorn-operations", dijkshoorn_reads_and_updates_the_loaded_table;
    run_3_operations => "operations", operations_are_judged_on_each_database;
    run_4_dory_elasticity => "dory-elasticity", dory_keeps_the_table_of_sizes;
    run_5_swaminathan_sizes => "swaminathan-sizes", swaminathan_compares_databases_per_data_size;
    run_6_lourenco_write_heavy => "lourenco-write-heavy", lourenco_compares_the_space_records_add;
    run_7_dory_request_sets => "dory-request-sets", dory_gives_each_thread_its_share;
    run_8_sqlite_quick => "sqlite-quick";
    run_9_session_store => "session-store", the_session_store_runs_on_each_database;
}

fn run_example(name: &str) -> Miniature {
    let example = example(name);
    let _files = SqliteFiles::of(&example);
    run_in_miniature(&example)
}

fn example(name: &str) -> PathBuf {
    examples()
        .into_iter()
        .find(|e| e.file_stem().is_some_and(|s| s == name))
        .unwrap_or_else(|| panic!("examples/{name}.toml"))
}

/// Issue 42, point 5: every operation of the sweep ran on a database that has it (the cells
/// left out are those whose database lacks it), its acknowledged writes read back after it, its
/// event judged against the service level, and the report's matrix has a column per operation.
fn operations_are_judged_on_each_database(m: &Miniature) {
    let spec =
        scalebench_study::experiment::spec::Experiment::from_file(&example("operations")).unwrap();
    let actions: Vec<String> = spec.sweep["action"]
        .iter()
        .map(|a| a.given().as_str().unwrap().to_string())
        .collect();
    // Cassandra's repair is the one operation etcd lacks (SOME_DATABASES): it runs under load in
    // cluster_operations/cassandra.rs.
    for action in actions.iter().filter(|a| *a != "repair") {
        assert!(
            m.runs
                .iter()
                .any(|(cell, _, _)| cell.ends_with(&format!("action={action}"))),
            "{action} never ran"
        );
    }
    for (cell, _, r) in &m.runs {
        let lost = &r["phases"][0]["lost_writes"];
        assert!(
            lost["checked"].as_u64().unwrap_or(0) > 0,
            "{cell}: no write verified: {lost}"
        );
    }
    let db = rusqlite::Connection::open(&m.results).unwrap();
    let judged: i64 = db
        .query_row(
            "SELECT count(*) FROM run_elastic WHERE verdict IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(judged as usize, m.runs.len(), "every event judged");
    let matrix = &m.report[m
        .report
        .find("Service level per operation")
        .expect("the matrix")..];
    let matrix = &matrix[..matrix.find("</table>").unwrap()];
    for action in actions.iter().filter(|a| *a != "repair") {
        assert!(
            matrix.contains(&format!(">{action}<")),
            "{action}: {matrix}"
        );
    }
    // A run flagged for its failures (etcd's update conflicts on a Zipfian's hottest keys pass 1%
    // of a miniature's few thousand operations, in some runs every cell's) is shown as such,
    // its figures left out; a verdict is shown for the others.
    let shown = words(&m.show());
    let flagged = m
        .runs
        .iter()
        .filter(|(_, status, _)| status == "failures")
        .count();
    assert!(
        shown.contains("service level met")
            || shown.contains("SERVICE LEVEL MISSED")
            || (flagged == m.runs.len() && shown.matches("FAILURES").count() == flagged),
        "{shown}"
    );
}

/// Issue 29, point 3: Wegert restored his data "vor jeder einzelnen Messung": every measured run
/// starts on the records its configuration loaded, none on what an earlier run inserted.
fn wegert_restores_before_every_run(m: &Miniature) {
    for (cell, run) in m.measured() {
        assert_eq!(run["data"]["records_at_start"], 500, "{cell}");
        assert_eq!(
            run["data"]["mean_record_bytes"], 600.0,
            "{cell}: 10 fields of 60 bytes"
        );
    }
    let cells: Vec<&str> = m.measured().map(|(c, _)| c).collect();
    for config in [
        "leveled-compaction",
        "uncompressed",
        "all-one",
        "all-one-paused",
        "snappy",
        "deflate",
    ] {
        assert!(
            cells.iter().any(|c| c.contains(config)),
            "{config}: {cells:?}"
        );
    }
    // Issue 32: every run measured its consistency; on the 3-node ring's `-paused` cells node3 was
    // paused beside each run, and the pairs with R + W > RF read nothing stale even so.
    for (cell, run) in m.measured() {
        let probe = &run["consistency"];
        assert!(
            probe["probe_writes"].as_u64().unwrap_or(0) > 0,
            "{cell}: {probe}"
        );
        let pauses = run["faults"].as_array().map_or(0, Vec::len);
        if cell.starts_with("cassandra-3/") && cell.contains("-paused/") {
            assert!(pauses >= 1, "{cell}: {}", run["faults"]);
        } else {
            assert_eq!(pauses, 0, "{cell}");
        }
        if cell.contains("/all-one") || cell.contains("/quorum-quorum") {
            assert_eq!(probe["stale_reads"], 0, "{cell}: {probe}");
        }
    }
    // Issue 38: the pairs healthy too, for the throughput he compared (their ratio is measured by
    // bench/wegert-healthy-pairs.sh, docs/benchmarks.md section 15).
    for pair in ["one-one", "all-one", "quorum-quorum"] {
        assert!(
            cells
                .iter()
                .any(|c| c.starts_with(&format!("cassandra-3/{pair}/"))),
            "{pair} healthy: {cells:?}"
        );
    }
    assert!(
        m.report.contains("<h2>Consistency</h2>") && m.report.contains("t-visibility"),
        "the report's consistency section"
    );
    // `results show`'s stale % is each cell's stale share: at the first delay at least half of
    // whose reads kept it (one repetition here: the run's own figure).
    let show = m.show();
    assert!(show.lines().next().unwrap().contains("stale %"), "{show}");
    for (cell, run) in m.measured() {
        let count = |p: &serde_json::Value, field: &str| p[field].as_u64().unwrap_or(0);
        let Some(first) = run["consistency"]["t_visibility"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| count(p, "samples") > 0 && count(p, "samples") >= count(p, "missed"))
        else {
            continue;
        };
        let stale = 100.0 * (1.0 - first["consistent_fraction"].as_f64().unwrap());
        let line = cell_lines(&show, |l| l.starts_with(cell));
        assert!(
            line.split_whitespace().any(|t| t == format!("{stale:.2}")),
            "{cell}: stale % {stale:.2}: {line}"
        );
    }
    let paused = cell_lines(&show, |l| l.contains("/one-one-paused/"));
    assert!(
        paused.contains("probe writes' reads") && paused.contains("node pauses"),
        "{paused}"
    );
}

/// Issue 29, points 6 and 7: the recommendation table has a column per data size, and runs bounded
/// by their operation count measure that many operations.
fn swaminathan_compares_databases_per_data_size(m: &Miniature) {
    let table = m
        .report
        .split("<h3>Recommendation</h3>")
        .nth(1)
        .expect("the recommendation table");
    let header = &table[..table.find("</tr>").unwrap()];
    for size in ["1KB-x-20K", "4KB-x-20K", "1KB-x-100K", "4KB-x-100K"] {
        assert!(header.contains(size), "{size} is no column: {header}");
    }
    assert!(
        !table.contains("cassandra/1kb"),
        "data sizes are no candidates"
    );
    for (cell, run) in m.measured() {
        let count: u64 = cell
            .split("operationcount=")
            .nth(1)
            .and_then(|c| c.split(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{cell} has an operation count"));
        assert_eq!(run["ended_by"], "operations", "{cell}");
        // Issue 38: timed from the client's init to its cleanup, as YCSB 0.1.4.
        assert_eq!(run["timed_init_to_cleanup"], true, "{cell}");
        let t = &run["totals"];
        assert_eq!(
            t["ok"].as_u64().unwrap() + t["failed"].as_u64().unwrap(),
            count,
            "{cell}"
        );
    }
}

/// Issue 29, point 8: an elastic step that doubles keeps Dory's table of sizes and the scalability.
fn dory_keeps_the_table_of_sizes(m: &Miniature) {
    let show = m.show();
    let line = cell_lines(&show, |l| l.starts_with("hbase-1"));
    assert!(line.contains("request sets per size"), "{line}");
    assert!(line.contains("scalability"), "{line}");
    assert!(
        m.report.contains("Performance per size"),
        "the report's table of sizes"
    );
    // Issue 38: the elasticity's areas over minutes, the unit of Dory's charts.
    let db = rusqlite::Connection::open(&m.results).unwrap();
    let axes: Vec<String> = db
        .prepare("SELECT json_extract(scores, '$.time_axis') FROM run_elastic")
        .unwrap()
        .query_map([], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .map(|r| r.unwrap().unwrap_or_default())
        .collect();
    assert!(
        !axes.is_empty() && axes.iter().all(|a| a == "min"),
        "{axes:?}"
    );
    // HBase's region servers doubled under its request sets (by region moves), twice (1 -> 2 ->
    // 4), the transition's events in order.
    let doubled: Vec<(String, i64, i64, String)> = db
        .prepare(
            "SELECT r.cell, e.nodes_before, e.nodes_after, e.events \
             FROM run_elastic e JOIN runs r ON r.id = e.run_id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(doubled.len(), 1, "{doubled:?}");
    for (cell, before, after, events) in &doubled {
        assert_eq!(*after, 2 * before, "{cell}");
        let e: serde_json::Value = serde_json::from_str(events).unwrap();
        // A missing event fails saying why each step's wait ended (its timeout, the run's end).
        let why: Vec<String> = m
            .runs
            .iter()
            .flat_map(|(_, _, r)| r["steps"].as_array().cloned().unwrap_or_default())
            .map(|step| step["not_stable"].to_string())
            .collect();
        let t = |k: &str| {
            e[k].as_f64()
                .unwrap_or_else(|| panic!("{cell}: no {k}: {e}; the steps' not_stable: {why:?}"))
        };
        assert!(
            t("scale_issued_s") < t("scale_done_s") && t("scale_done_s") <= t("transfers_done_s"),
            "{cell}: {e}"
        );
    }
    assert!(
        doubled
            .iter()
            .any(|(c, b, _, _)| c.contains("hbase-1") && *b == 1),
        "{doubled:?}"
    );
}

/// Issue 61: each of the 3 threads had its fixed share of every set of 100 (34, 33, 33), on the
/// one-token ring (each thread bound to its node) and on Redis Cluster (unbound) alike.
fn dory_gives_each_thread_its_share(m: &Miniature) {
    let cells: Vec<&str> = m.measured().map(|(cell, _)| cell).collect();
    assert_eq!(cells.len(), 2, "{cells:?}");
    for (cell, run) in m.measured() {
        let sets = &run["request_sets"];
        assert_eq!(sets["threads"], "fixed", "{cell}: {sets}");
        assert_eq!(sets["size"], 100, "{cell}: {sets}");
        let timed = sets["sets"].as_array().unwrap().len();
        let ops: u64 = run["operations"]
            .as_object()
            .unwrap()
            .values()
            .map(|o| {
                let failed = o["failed"].as_object().unwrap().values();
                o["ok"].as_u64().unwrap() + failed.map(|n| n.as_u64().unwrap()).sum::<u64>()
            })
            .sum();
        let unfinished = sets["unfinished_ops"].as_u64().unwrap();
        // Every whole set of the run is timed: as many as its operations fill (3 s runs).
        assert_eq!(
            100 * timed as u64 + unfinished,
            ops,
            "{cell}: {ops} operations; {sets}"
        );
        assert!(timed >= 1, "{cell}: {ops} operations; {sets}");
    }
}

/// Issue 29, point 2: the UPDATE and SELECT cells run on the table as loaded; the INSERT cells, on
/// a table their earlier repetitions grew, say so.
fn dijkshoorn_reads_and_updates_the_loaded_table(m: &Miniature) {
    for (cell, run) in m.measured() {
        let records = run["data"]["records_at_start"].as_u64().unwrap();
        if cell.contains("/update/") || cell.contains("/select/") {
            assert_eq!(records, 200, "{cell}");
        } else {
            assert!(records >= 200, "{cell}");
        }
    }
    assert!(words(&m.show()).contains("on 200 records"));
}

/// Issue 43: the workload file's typed record on PostgreSQL, Cassandra and Redis Cluster in one
/// experiment: each ran its mix at the offered rate with no operation failing, on the file's
/// records divided as the miniature divides an experiment's own (10,000 / 100).
fn the_session_store_runs_on_each_database(m: &Miniature) {
    let cells: Vec<&str> = m.measured().map(|(cell, _)| cell).collect();
    assert_eq!(
        cells,
        [
            "postgres/default/sessions",
            "cassandra/default/sessions",
            "redis-cluster/default/sessions"
        ]
    );
    for (cell, run) in m.measured() {
        assert_eq!(run["totals"]["failed"], 0, "{cell}: {}", run["errors"]);
        for op in [
            "check_session",
            "user_of_session",
            "touch_session",
            "renew_session",
            "new_session",
        ] {
            assert!(
                run["operations"][op]["ok"].as_u64().unwrap_or(0) > 0,
                "{cell}: no {op} in {}",
                run["operations"]
            );
        }
    }
    for (cell, _, r) in &m.runs {
        assert!(
            r["parameters"]["workload"]
                .as_str()
                .is_some_and(|w| w.ends_with("workloads/session-store.toml")),
            "{cell}: {}",
            r["parameters"]
        );
    }
    assert!(words(&m.show()).contains("on 100 records"));
}

/// Issue 29, points 1 and 9: every load's space is measured before and after it, and the bytes per
/// record compared are what the records added. Issue 38: settled (compacted) and, Lourenco's, as
/// inserted (flushed only), both in the results and in `results show`.
fn lourenco_compares_the_space_records_add(m: &Miniature) {
    for (cell, load) in m.measured() {
        let space = &load["space"];
        let marginal = &space["marginal"];
        let per_record = marginal["bytes_per_record"].as_f64().unwrap_or(0.0);
        assert!(per_record > 0.0, "{cell}: {marginal}");
        let total = space["bytes_per_record"].as_f64().unwrap();
        assert!(per_record < total, "{cell}: the fixed overhead is left out");
        assert_eq!(space["state"], "settled", "{cell}");
        let inserted = &space["as_inserted"];
        assert_eq!(inserted["state"], "as_inserted", "{cell}");
        let as_inserted = inserted["marginal"]["bytes_per_record"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(as_inserted > 0.0, "{cell}: {}", inserted["marginal"]);
    }
    let show = words(&m.show());
    assert!(show.contains("as inserted"), "{show}");
}

/// Issue 29, point 1: Lourenco left "the remaining settings ... at their default values": the
/// Cassandra node of his example has Cassandra's default commit log (periodic).
#[test]
fn lourenco_runs_cassandra_with_its_default_commit_log() {
    let file = example("lourenco-write-heavy");
    let spec = scalebench_study::experiment::spec::Experiment::from_file(&file).unwrap();
    for d in spec
        .databases
        .iter()
        .filter(|d| d.name.starts_with("cassandra"))
    {
        let deployment = file.parent().unwrap().join(d.deployment.as_ref().unwrap());
        let d = scalebench_deploy::Deployment::from_file(&deployment).unwrap();
        assert_eq!(
            d.cassandra.commitlog_sync,
            "periodic",
            "{}",
            deployment.display()
        );
    }
}

/// Issue 38: every study example says what differs from its study, and each deviation the audit of
/// issue 38 named is gone or said in the example's header.
#[test]
fn every_example_states_what_differs_from_its_study() {
    use scalebench_study::experiment::spec::Experiment;
    let header = |name: &str| -> String {
        std::fs::read_to_string(example(name))
            .unwrap()
            .lines()
            .take_while(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let spec = |name: &str| Experiment::from_file(&example(name)).unwrap();
    let deployment = |name: &str, db: &str| {
        let file = example(name);
        let d = spec(name)
            .databases
            .into_iter()
            .find(|d| d.name == db)
            .unwrap_or_else(|| panic!("{name}: database {db}"));
        scalebench_deploy::Deployment::from_file(
            &file.parent().unwrap().join(d.deployment.unwrap()),
        )
        .unwrap()
    };
    let property = |props: &std::collections::BTreeMap<String, toml::Value>, key: &str| {
        props.get(key).map(|v| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    for e in examples() {
        let name = e.file_stem().unwrap().to_str().unwrap().to_string();
        // Not a study's method: a quick start, and a user's own workload across databases.
        if name == "sqlite-quick" || name == "session-store" {
            continue;
        }
        let h = header(&name);
        assert!(
            h.contains("What differs from the study") && h.contains("docs/studies.md"),
            "{name}: its header says what differs from its study, citing docs/studies.md"
        );
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/studies.md")
        .is_file());

    // Wegert: the pairs healthy for their throughput and paused for their staleness; his RF 1 row,
    // ALL/ONE at each RF, Snappy and Deflate; his data at 2x RAM said.
    let w = spec("wegert-configurations");
    let fault = w.fault.as_ref().unwrap();
    for pair in ["one-one", "all-one", "quorum-quorum"] {
        assert!(w.configurations.iter().any(|c| c.name == pair));
        assert!(
            !fault.configurations.iter().any(|c| c == pair),
            "{pair} is healthy"
        );
        assert!(fault.configurations.contains(&format!("{pair}-paused")));
    }
    for config in [
        "rf1-one",
        "rf2-all-one",
        "rf3-all-one",
        "rf4-all-one",
        "snappy",
        "deflate",
    ] {
        assert!(
            w.configurations.iter().any(|c| c.name == config),
            "{config}"
        );
    }
    assert!(header("wegert-configurations").contains("2x the nodes' RAM"));
    // Wegert's and Dory's data beyond their nodes' memory: a limit on every node (Redis, in memory
    // by design, apart).
    for (name, spec) in [
        ("wegert-configurations", &w),
        ("dory-elasticity", &spec("dory-elasticity")),
    ] {
        for d in spec
            .databases
            .iter()
            .filter(|d| !d.name.starts_with("redis"))
        {
            assert!(
                d.deployment_settings.contains_key("memory"),
                "{name}: {} has a memory limit",
                d.name
            );
        }
    }
    // Swaminathan: YCSB 0.1.4's buffered HBase writes and client-life timing; one token per
    // Cassandra node.
    let sw = spec("swaminathan-sizes");
    let hbase = sw.databases.iter().find(|d| d.name == "hbase").unwrap();
    assert_eq!(
        property(&hbase.properties, "hbase.client_buffering").as_deref(),
        Some("true")
    );
    assert_eq!(
        sw.procedure.options.timing.as_deref(),
        Some("init-to-cleanup")
    );
    assert_eq!(
        deployment("swaminathan-sizes", "cassandra")
            .cassandra
            .num_tokens,
        1
    );
    // Dory: RF 3 at the strongest consistency, the score over minutes, Table 6.2's difference said.
    let dory = spec("dory-elasticity");
    let cassandra = dory
        .databases
        .iter()
        .find(|d| d.name.starts_with("cassandra"))
        .unwrap();
    for level in ["cassandra.write_consistency", "cassandra.read_consistency"] {
        assert_eq!(
            property(&cassandra.properties, level).as_deref(),
            Some("ALL")
        );
    }
    let ring = deployment("dory-elasticity", &cassandra.name);
    assert_eq!(
        ring.binding
            .get("replication_factor")
            .map(|v| v.to_string()),
        Some("3".into())
    );
    assert_eq!(
        dory.procedure.elastic.score_time_axis,
        scalebench_study::elastic::request::TimeAxis::Minutes
    );
    let h = header("dory-elasticity");
    assert!(
        h.contains("Table 6.2") && h.contains("28 GB over nodes of 4 GB"),
        "{h}"
    );
    // Dijkshoorn: a trigger-based master-slave row (Bucardo) beside streaming replication.
    let dij = spec("dijkshoorn-operations");
    assert!(dij.databases.iter().any(|d| {
        d.deployment.is_some()
            && deployment("dijkshoorn-operations", &d.name)
                .postgres
                .bucardo
                == scalebench_deploy::spec::BucardoSync::MasterSlave
    }));
    // Lourenco: space as the insertion left it, beside the settled space.
    assert!(header("lourenco-write-heavy").contains("as inserted"));
}

/// Issue 61: Dory's examples run his client (each thread a fixed share of every set, bound to its
/// node) on a ring of one token per node, and say where threads cannot be bound; Dijkshoorn's
/// master-slave rows are a master and 3 slaves reading on all four, and say they share one machine.
#[test]
fn dory_and_dijkshoorn_run_as_they_ran() {
    use scalebench_study::experiment::spec::Experiment;
    let spec = |name: &str| Experiment::from_file(&example(name)).unwrap();
    let header = |name: &str| std::fs::read_to_string(example(name)).unwrap();
    let deployment = |name: &str, db: &str| {
        let d = spec(name)
            .databases
            .into_iter()
            .find(|d| d.name == db)
            .unwrap();
        let file = example(name).parent().unwrap().join(d.deployment.unwrap());
        scalebench_deploy::Deployment::from_file(&file).unwrap()
    };
    for name in ["dory-elasticity", "dory-request-sets"] {
        assert_eq!(
            spec(name).procedure.request_set_threads,
            scalebench_exec::SetThreads::Fixed,
            "{name}"
        );
        assert_eq!(
            deployment(name, "cassandra-3").cassandra.num_tokens,
            1,
            "{name}"
        );
        assert!(header(name).contains("cannot choose a node"), "{name}");
    }
    let dij = spec("dijkshoorn-operations");
    for row in ["postgres-master-slave", "postgres-master-slave-bucardo"] {
        let d = deployment("dijkshoorn-operations", row);
        assert_eq!(d.nodes, 4, "{row}");
        assert!(d.postgres.reads_on_every_server, "{row}");
        assert!(
            !dij.configurations
                .iter()
                .any(|c| c.databases.iter().any(|db| db == row)),
            "{row}: no configuration moves its reads"
        );
    }
    assert!(header("dijkshoorn-operations")
        .contains("four PostgreSQL servers on\n#   this one machine"));
}

/// Issue 29, point 5: the table of miniatures in docs/experiments.md lists the runs each plans.
#[test]
fn the_miniature_table_in_the_docs_matches_the_plans() {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/experiments.md"),
    )
    .unwrap();
    let table = docs
        .split("| example | runs | each-value runs | miniature in the test suite |")
        .nth(1)
        .expect("the miniature table");
    let mut seen = 0;
    for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name, runs, each_value) = (
            cells[1],
            cells[2].parse::<usize>().unwrap(),
            cells[3].parse::<usize>().unwrap(),
        );
        assert_eq!(
            runs,
            planned_runs(&example(name), "all", &[]),
            "{name} in docs/experiments.md"
        );
        assert_eq!(
            each_value,
            planned_runs(&example(name), "each-value", &[]),
            "{name}'s each-value runs in docs/experiments.md"
        );
        let tested = cells[4];
        assert_eq!(
            tested.contains("each-value"),
            EACH_VALUE.contains(&name),
            "{name}: the table says how the suite runs it: {tested}"
        );
        seen += 1;
    }
    assert_eq!(seen, examples().len(), "every example has a row");
}

/// The SQLite files an example's databases name (`sqlite:///tmp/...`), removed when the test ends.
struct SqliteFiles(Vec<PathBuf>);

impl SqliteFiles {
    fn of(example: &Path) -> SqliteFiles {
        let spec = scalebench_study::experiment::spec::Experiment::from_file(example).unwrap();
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
