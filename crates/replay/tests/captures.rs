//! Each reader on a capture made here by the real server, as its users capture it: Redis's MONITOR
//! through `redis-cli monitor`, PostgreSQL's csvlog with `log_statement = 'all'` (psql's simple
//! queries and pgbench's prepared statements), MariaDB's general log. The operations the test sent
//! are the known truth: each is read back in order, with its session, time and arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scalebench_replay::{open, CaptureFormat, CaptureSummary, Captured, Request};
use scalebench_workload::OpKind;

/// A directory any server account may write its log into: in the system's temporary directory,
/// which every account can reach (the target directory may lie under one only its owner can
/// traverse, as a fresh clone in a `mktemp -d` directory does); removed when dropped.
fn log_dir(name: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(&format!("scalebench-capture-{name}-"))
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn servers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture-servers");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits up to `limit` for `done`, every 20 ms.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_all(path: &Path, format: CaptureFormat) -> Vec<Captured> {
    let capture = open(path, None).unwrap();
    assert_eq!(capture.format, format, "recognised from its first line");
    capture.operations.map(|c| c.unwrap()).collect()
}

fn statements(ops: &[Captured]) -> Vec<(&str, &str, &[Option<String>])> {
    ops.iter()
        .filter_map(|c| match &c.request {
            Request::Statement { text, params } => {
                Some((c.session.as_str(), text.as_str(), params.as_slice()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn redis_monitor_output_is_read_back_as_the_commands_sent() {
    let server = scalebench_deploy::redis::RedisServer::start(&servers_dir(), &[], false, true)
        .expect("Redis starts");
    let port = server.port.to_string();
    let dir = log_dir("monitor");
    let file = dir.path().join("capture.txt");
    let mut monitor = Command::new("redis-cli")
        .args(["-p", &port, "monitor"])
        .stdout(std::fs::File::create(&file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(within(Duration::from_secs(10), || std::fs::read_to_string(
        &file
    )
    .is_ok_and(|t| t.starts_with("OK"))));
    let cli = |args: &[&str]| {
        let o = Command::new("redis-cli")
            .args(["-p", &port])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}");
    };
    let value = "a value with \"quotes\"\nand a line";
    cli(&["SET", "user1", value]);
    cli(&["GET", "user1"]);
    cli(&["MSET", "k1", "12345", "k2", "1"]);
    cli(&["HSET", "h", "f1", "abc", "f2", "de"]);
    cli(&["INCR", "n"]);
    cli(&["DEL", "k1", "k2"]);
    cli(&["PING"]);
    assert!(within(Duration::from_secs(10), || std::fs::read_to_string(
        &file
    )
    .is_ok_and(|t| t.contains("\"PING\""))));
    monitor.kill().unwrap();
    monitor.wait().unwrap();

    let ops = read_all(&file, CaptureFormat::RedisMonitor);
    let keyed: Vec<(OpKind, &str, u64)> = ops
        .iter()
        .filter_map(|c| match &c.request {
            Request::Key {
                kind,
                key,
                value_bytes,
                ..
            } => Some((*kind, key.as_str(), *value_bytes)),
            _ => None,
        })
        .collect();
    assert_eq!(
        keyed,
        [
            (OpKind::Update, "user1", value.len() as u64),
            (OpKind::Read, "user1", 0),
            (OpKind::Update, "k1", 5),
            (OpKind::Update, "k2", 1),
            (OpKind::Update, "h", 5),
            (OpKind::Increment, "n", 0),
            (OpKind::Delete, "k1", 0),
            (OpKind::Delete, "k2", 0),
        ]
    );
    // Each redis-cli is a connection of its own: a session each, in time order.
    let sessions: std::collections::HashSet<&str> =
        ops.iter().map(|c| c.session.as_str()).collect();
    assert!(sessions.len() >= 7, "{sessions:?}");
    assert!(ops.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    let summary = CaptureSummary::of(open(&file, None).unwrap().operations);
    assert_eq!(summary.by_command.get("PING"), Some(&1));
    assert_eq!(summary.unreadable, 0, "{:?}", summary.first_errors);
}

#[test]
fn a_postgres_csvlog_is_read_back_with_sessions_and_prepared_parameters() {
    let dir = log_dir("csvlog");
    let logs = dir.path().to_str().unwrap().to_string();
    let server = scalebench_deploy::postgres::PostgresServer::start(
        &servers_dir(),
        &[
            ("logging_collector", "on"),
            ("log_destination", "csvlog"),
            ("log_directory", &logs),
            ("log_filename", "capture"),
            ("log_statement", "all"),
        ],
        true,
    )
    .expect("PostgreSQL starts");
    server
        .sql("CREATE TABLE captured (k text PRIMARY KEY, v text)")
        .unwrap();
    server
        .sql("INSERT INTO captured VALUES ('a', 'it''s')")
        .unwrap();
    server.sql("SELECT v\nFROM captured WHERE k = 'a'").unwrap();
    // pgbench's prepared statements: the extended protocol, parameters in each record's detail.
    let bin = scalebench_deploy::postgres::bin_dir().unwrap();
    let pgbench = |args: &[&str]| {
        let o = Command::new(bin.join("pgbench"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "bench",
            ])
            .args(args)
            .arg("ycsb")
            .env("PGPASSWORD", server.password())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    pgbench(&["-i", "-s", "1", "-q"]);
    pgbench(&["-S", "-M", "prepared", "-t", "5", "-c", "1"]);
    let file = dir.path().join("capture.csv");
    assert!(within(Duration::from_secs(10), || std::fs::read_to_string(
        &file
    )
    .is_ok_and(|t| t
        .matches("pgbench_accounts WHERE aid = $1")
        .count()
        >= 5)));

    let ops = read_all(&file, CaptureFormat::PostgresCsvlog);
    let got = statements(&ops);
    let ours: Vec<&str> = got
        .iter()
        .map(|s| s.1)
        .filter(|t| t.contains("captured"))
        .collect();
    assert_eq!(
        ours,
        [
            "CREATE TABLE captured (k text PRIMARY KEY, v text)",
            "INSERT INTO captured VALUES ('a', 'it''s')",
            "SELECT v\nFROM captured WHERE k = 'a'"
        ]
    );
    let selects: Vec<&(&str, &str, &[Option<String>])> = got
        .iter()
        .filter(|s| s.1.contains("WHERE aid = $1"))
        .collect();
    assert_eq!(selects.len(), 5, "{got:?}");
    for (_, _, params) in &selects {
        let aid: u64 = params[0].as_deref().unwrap().parse().unwrap();
        assert!((1..=100_000).contains(&aid), "{params:?}");
    }
    // Each psql is a session; pgbench's transactions share one.
    let psql_sessions: std::collections::HashSet<&str> = got
        .iter()
        .filter(|s| s.1.contains("captured"))
        .map(|s| s.0)
        .collect();
    assert_eq!(psql_sessions.len(), 3);
    let bench_sessions: std::collections::HashSet<&str> = selects.iter().map(|s| s.0).collect();
    assert_eq!(bench_sessions.len(), 1);
    assert!(ops.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
}

#[test]
fn a_mariadb_general_log_is_read_back_spread_over_its_seconds() {
    let dir = log_dir("general");
    let file = dir.path().join("general.log");
    let server = scalebench_deploy::mariadb::MariadbServer::start(
        &servers_dir(),
        &[
            ("general_log", "1"),
            ("general_log_file", file.to_str().unwrap()),
        ],
        true,
    )
    .expect("MariaDB starts");
    server
        .sql("CREATE TABLE ycsb.t (k VARCHAR(10) PRIMARY KEY, v TEXT)")
        .unwrap();
    server
        .sql("INSERT INTO ycsb.t VALUES ('a', 'x'), ('b', 'y')")
        .unwrap();
    server.sql("SELECT v\nFROM ycsb.t\nWHERE k = 'a'").unwrap();
    assert!(within(Duration::from_secs(10), || std::fs::read_to_string(
        &file
    )
    .is_ok_and(|t| t.contains("WHERE k = 'a'"))));

    let capture = open(&file, None).unwrap();
    assert_eq!(capture.format, CaptureFormat::GeneralLog);
    assert!(capture.spread_over_seconds, "MariaDB logs whole seconds");
    let ops: Vec<Captured> = capture.operations.map(|c| c.unwrap()).collect();
    let got = statements(&ops);
    let ours: Vec<&str> = got
        .iter()
        .map(|s| s.1)
        .filter(|t| t.contains("ycsb.t"))
        .collect();
    assert_eq!(
        ours,
        [
            "CREATE TABLE ycsb.t (k VARCHAR(10) PRIMARY KEY, v TEXT)",
            "INSERT INTO ycsb.t VALUES ('a', 'x'), ('b', 'y')",
            "SELECT v\nFROM ycsb.t\nWHERE k = 'a'"
        ]
    );
    // A client each: three sessions, the thread ids the server gave them.
    let sessions: std::collections::HashSet<&str> = got
        .iter()
        .filter(|s| s.1.contains("ycsb.t"))
        .map(|s| s.0)
        .collect();
    assert_eq!(sessions.len(), 3);
    // Spread over its second, each operation after the one before.
    assert!(ops.windows(2).all(|w| w[0].at_ns < w[1].at_ns), "{ops:?}");
}
