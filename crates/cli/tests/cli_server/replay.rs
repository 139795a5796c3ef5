//! `scalebench replay` (issue 66): a capture whose operations are known, replayed on the null
//! binding and on a real Redis, every operation accounted for (run, or not run by command), none
//! begun before its time, the writes landing with the captured sizes.

use std::process::Command;

use crate::common::{json, stderr, test_dir};

fn scalebench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// 400 operations over 0.399 s on 4 sessions: SET (50 bytes), GET, INCR, PING in turn.
fn monitor_capture() -> String {
    let mut text = String::from("OK\n");
    for i in 0..400 {
        let t = 1_733_612_345.0 + f64::from(i) / 1000.0;
        let client = format!("127.0.0.1:{}", 5000 + i % 4);
        let command = match i % 4 {
            0 => format!("\"SET\" \"user{}\" \"{}\"", i % 40, "v".repeat(50)),
            1 => format!("\"GET\" \"user{}\"", i % 40),
            2 => "\"INCR\" \"n\"".to_string(),
            _ => "\"PING\"".to_string(),
        };
        text.push_str(&format!("{t:.6} [0 {client}] {command}\n"));
    }
    text
}

#[test]
fn a_replay_runs_every_operation_it_can_and_counts_the_rest_by_command() {
    let dir = test_dir();
    let capture = dir.path().join("capture.txt");
    std::fs::write(&capture, monitor_capture()).unwrap();
    let c = capture.to_str().unwrap();
    let out = dir.path().join("r.json");
    let o = out.to_str().unwrap();

    let check = scalebench(&["replay", c, "--check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.contains("400 operations in 4 session(s) over 0.399 s"),
        "{text}"
    );
    assert!(
        text.contains("GET 100") && text.contains("PING 100"),
        "{text}"
    );

    let r = scalebench(&[
        "replay",
        c,
        "--db",
        "null://",
        "--speed",
        "4",
        "--interval",
        "25ms",
        "-q",
        "-o",
        o,
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let result = json(&out);
    let phase = &result["phases"][0];
    assert_eq!(phase["ended_by"], "replayed");
    assert_eq!(phase["totals"]["ok"], 200);
    assert_eq!(phase["operations"]["READ"]["ok"], 100);
    assert_eq!(phase["operations"]["UPDATE"]["ok"], 100);
    let replay = &phase["replay"];
    assert_eq!(
        (replay["read"].as_u64(), replay["fed"].as_u64()),
        (Some(400), Some(200))
    );
    assert_eq!(replay["not_run"]["INCR"]["count"], 100);
    assert_eq!(replay["not_run"]["PING"]["count"], 100);
    // The offered load's shape: each 25 ms of the replay is 100 ms of capture at x4, holding 100
    // operations of which a SET and a GET in every four run.
    assert_eq!(
        replay["scheduled_per_interval"],
        serde_json::json!([50, 50, 50, 50])
    );
    // The last operation it runs (a GET) was due 0.397 s / 4 after the first: the window cannot
    // end before it.
    assert!(
        phase["duration_s"].as_f64().unwrap() >= 0.397 / 4.0,
        "{phase}"
    );
    assert!(
        stderr(&r).is_empty() || !stderr(&r).contains("error"),
        "{}",
        stderr(&r)
    );

    // Three copies of the key space: three times the operations, on keys of their own.
    let r = scalebench(&[
        "replay", c, "--db", "null://", "--speed", "4", "--keys", "x3", "-q", "-o", o,
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let replay = json(&out)["phases"][0]["replay"].clone();
    assert_eq!(
        (replay["read"].as_u64(), replay["fed"].as_u64()),
        (Some(1200), Some(600))
    );

    // What a replay sets itself is refused, not ignored; a capture cut short is bad input.
    let r = scalebench(&["replay", c, "--db", "null://", "--duration", "5s"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("--duration (a replay lasts"),
        "{}",
        stderr(&r)
    );
    let cut = dir.path().join("cut.txt");
    std::fs::write(
        &cut,
        monitor_capture() + "1733612346.000000 [0 127.0.0.1:1] \"SET\" \"k\" \"unfin\n",
    )
    .unwrap();
    for args in [
        vec!["replay", cut.to_str().unwrap(), "--check"],
        vec!["replay", cut.to_str().unwrap(), "--db", "null://"],
    ] {
        let r = scalebench(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}", stderr(&r));
    }
    let r = scalebench(&["replay", cut.to_str().unwrap(), "--db", "null://"]);
    assert!(
        stderr(&r).contains("line 402") && stderr(&r).contains("not closed"),
        "{}",
        stderr(&r)
    );
}

/// A capture made on one Redis (its MONITOR), replayed on another: every SET lands there as the
/// binding's record with the captured value's size, every GET of the same session after it
/// finds it.
#[test]
fn a_redis_capture_replayed_on_another_redis_writes_what_was_captured() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let source = scalebench_deploy::redis::RedisServer::start(&base, &[], false, true)
        .expect("Redis starts");
    let target = scalebench_deploy::redis::RedisServer::start(&base, &[], false, true)
        .expect("Redis starts");
    let dir = test_dir();
    let capture = dir.path().join("capture.txt");
    let port = source.port.to_string();
    let mut monitor = Command::new("redis-cli")
        .args(["-p", &port, "monitor"])
        .stdout(std::fs::File::create(&capture).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&capture).is_ok_and(|t| t.starts_with("OK")) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "MONITOR did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // One connection (a session): its order is kept, each GET after its SET.
    let mut commands = String::new();
    for i in 0..20 {
        commands.push_str(&format!(
            "SET user{i} {}\nGET user{i}\n",
            "x".repeat(10 + i)
        ));
    }
    commands.push_str("PING\n");
    let mut session = Command::new("redis-cli")
        .args(["-p", &port])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    let mut stdin = session.stdin.take().unwrap();
    stdin.write_all(commands.as_bytes()).unwrap();
    drop(stdin);
    assert!(session.wait().unwrap().success());
    while !std::fs::read_to_string(&capture).is_ok_and(|t| t.contains("\"PING\"")) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the capture is not complete"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    monitor.kill().unwrap();
    monitor.wait().unwrap();

    let out = dir.path().join("r.json");
    let r = scalebench(&[
        "replay",
        capture.to_str().unwrap(),
        "--db",
        &target.url(),
        "--threads",
        "2",
        "--concurrency",
        "2",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let phase = json(&out)["phases"][0].clone();
    assert_eq!(phase["totals"]["ok"], 40, "{phase}");
    assert_eq!(phase["totals"]["failed"], 0, "{phase}");
    assert_eq!(phase["replay"]["not_run"]["PING"]["count"], 1);
    let target_port = target.port.to_string();
    for i in 0..20 {
        let len = Command::new("redis-cli")
            .args(["-p", &target_port, "HSTRLEN", &format!("user{i}"), "field0"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&len.stdout).trim(),
            (10 + i).to_string(),
            "user{i}"
        );
    }
}

/// Captures that cannot be replayed as they are: each refused with one line naming the file and
/// what is wrong (the line, where there is one), exit 2, before anything connects (the database
/// URL names a port where nothing listens: a connection attempt would fail otherwise), and
/// `--check` says the same.
/// Makes a capture file at a path.
type Make = dyn Fn(&std::path::Path);

/// A good first line of a MONITOR capture.
const FIRST: &str = "1733612345.000000 [0 127.0.0.1:5000] \"GET\" \"k\"\n";

#[test]
fn bad_captures_are_refused_before_anything_connects() {
    let dir = test_dir();
    let cases: Vec<(&str, Box<Make>, &str)> = vec![
        (
            "truncated.txt",
            Box::new(|p| {
                std::fs::write(
                    p,
                    format!("{FIRST}1733612345.5 [0 127.0.0.1:5000] \"SET\" \"k"),
                )
                .unwrap()
            }),
            "line 2",
        ),
        (
            // A line of 10 GB (a sparse file's hole: no disk taken) after a first good one.
            "ten-gigabytes.txt",
            Box::new(|p| {
                std::fs::write(p, FIRST).unwrap();
                let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_len(10 << 30).unwrap();
            }),
            "a line longer than 64 MiB",
        ),
        (
            "binary.bin",
            Box::new(|p| {
                std::fs::write(
                    p,
                    (0..4096u32)
                        .map(|i| (i * 7919 % 251) as u8)
                        .collect::<Vec<_>>(),
                )
                .unwrap()
            }),
            "no capture format",
        ),
        (
            "backwards.txt",
            Box::new(|p| {
                std::fs::write(
                    p,
                    format!("{FIRST}1733612347.000000 [0 127.0.0.1:5000] \"GET\" \"k\"\n1733612345.500000 [0 127.0.0.1:5000] \"GET\" \"k\"\n"),
                )
                .unwrap()
            }),
            "operation 3 (from 1, in the file's order) began 1.500 s before",
        ),
        (
            "unknown.jsonl",
            // Commands no binding runs by key, and nothing else: nothing to replay.
            Box::new(|p| {
                std::fs::write(p, "{\"time\": 0, \"op\": \"touch\", \"key\": \"a\"}\n{\"time\": 1, \"op\": \"frobnicate\", \"key\": \"a\"}\n").unwrap()
            }),
            "none of its 2 operations runs on this database (by command: FROBNICATE 1, TOUCH 1)",
        ),
        (
            "fifo",
            Box::new(|p| {
                let made = Command::new("mkfifo").arg(p).status().unwrap();
                assert!(made.success());
            }),
            "not a regular file",
        ),
    ];
    for (name, make, named) in cases {
        let path = dir.path().join(name);
        make(&path);
        let p = path.to_str().unwrap();
        for args in [
            vec![
                "replay",
                p,
                "--db",
                "redis://127.0.0.1:1",
                "--connect-timeout",
                "1s",
            ],
            vec!["replay", p, "--check"],
        ] {
            let r = scalebench(&args);
            let err = stderr(&r);
            assert_eq!(r.status.code(), Some(2), "{name} {args:?}: {err}");
            assert!(
                err.contains(named) && err.contains(name),
                "{name} {args:?}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
        }
    }
}

/// A csvlog record as PostgreSQL 15 writes it (26 fields): `message` of `session` at `time`.
fn csvlog(time: &str, session: &str, message: &str, detail: &str) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    format!(
        "2026-12-08 10:00:{time} UTC,\"bench\",\"ycsb\",1234,\"127.0.0.1:5555\",{session},1,\"SELECT\",2026-12-08 10:00:00 UTC,3/4,0,LOG,00000,{},{},,,,,,,,\"app\",\"client backend\",,0\n",
        q(message),
        if detail.is_empty() { String::new() } else { q(detail) }
    )
}

/// Statements replayed as written (issue 66 item 3) on a database of their kind, where what they
/// wrote is known: a PostgreSQL csvlog's statements and a prepared statement's execution with its
/// logged parameters (a NULL among them) on PostgreSQL; a MySQL general log's on MariaDB. Each
/// session runs on a connection of its own: session a's transaction, with session b's statements
/// between its BEGIN and COMMIT, commits whole, and b's rows are its own. Each statement is measured
/// under its first word. Fewer connections than sessions, and statements on a database of another
/// kind, are refused before anything connects.
#[test]
fn statements_of_database_logs_run_as_written_on_databases_of_their_kind() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let dir = test_dir();
    let pg = scalebench_deploy::postgres::PostgresServer::start(&base, &[], true)
        .expect("PostgreSQL starts");
    pg.sql("CREATE TABLE replayed (k text PRIMARY KEY, n int, v text); GRANT ALL ON replayed TO PUBLIC")
        .unwrap();
    let log = dir.path().join("postgresql.csv");
    std::fs::write(
        &log,
        [
            csvlog("01.000", "a.1", "statement: BEGIN", ""),
            csvlog(
                "01.010",
                "b.2",
                "statement: INSERT INTO replayed VALUES ('b', 2, 'it''s')",
                "",
            ),
            csvlog(
                "01.020",
                "a.1",
                "execute S_1: INSERT INTO replayed VALUES ($1, $2, $3)",
                "parameters: $1 = 'a', $2 = '1', $3 = NULL",
            ),
            csvlog(
                "01.030",
                "a.1",
                "statement: UPDATE replayed SET n = n + 10 WHERE k = 'a'",
                "",
            ),
            csvlog(
                "01.040",
                "b.2",
                "statement: SELECT * FROM replayed WHERE k = 'b'",
                "",
            ),
            csvlog("01.050", "a.1", "statement: COMMIT", ""),
        ]
        .concat(),
    )
    .unwrap();
    let out = dir.path().join("pg.json");
    let l = log.to_str().unwrap();
    let r = scalebench(&[
        "replay",
        l,
        "--db",
        &pg.url(),
        "--concurrency",
        "2",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let phase = json(&out)["phases"][0].clone();
    assert_eq!(phase["totals"]["ok"], 6, "{phase}");
    assert_eq!(phase["totals"]["failed"], 0, "{phase}");
    for (name, n) in [
        ("SQL INSERT", 2),
        ("SQL BEGIN", 1),
        ("SQL COMMIT", 1),
        ("SQL SELECT", 1),
    ] {
        assert_eq!(phase["operations"][name]["ok"], n, "{name}: {phase}");
    }
    assert_eq!(
        pg.sql("SELECT k, n, v IS NULL, v FROM replayed ORDER BY k")
            .unwrap()
            .trim(),
        "a|11|t|\nb|2|f|it's"
    );
    // One connection for two sessions: refused, nothing run.
    let r = scalebench(&["replay", l, "--db", &pg.url(), "--concurrency", "1"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("2 session(s)"), "{}", stderr(&r));
    // A PostgreSQL log's statements on Redis: nothing there runs them.
    let r = scalebench(&["replay", l, "--db", "redis://127.0.0.1:1"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("runs on this database"),
        "{}",
        stderr(&r)
    );

    let maria =
        scalebench_deploy::mariadb::MariadbServer::start(&base, &[], true).expect("MariaDB starts");
    maria
        .sql("CREATE TABLE ycsb.replayed (k VARCHAR(10) PRIMARY KEY, n INT)")
        .unwrap();
    let general = dir.path().join("general.log");
    std::fs::write(
        &general,
        concat!(
            "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n",
            "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n",
            "Time                 Id Command    Argument\n",
            "2026-12-08T10:00:01.000000Z\t    8 Connect\tbench@localhost on ycsb using TCP/IP\n",
            "2026-12-08T10:00:01.010000Z\t    8 Query\tINSERT INTO ycsb.replayed\n",
            "  VALUES ('m', 1)\n",
            "2026-12-08T10:00:01.020000Z\t    9 Query\tSELECT n FROM ycsb.replayed\n",
            "2026-12-08T10:00:01.030000Z\t    8 Execute\tUPDATE ycsb.replayed SET n = 5 WHERE k = 'm'\n",
            "2026-12-08T10:00:01.040000Z\t    8 Quit\t\n",
        ),
    )
    .unwrap();
    let out = dir.path().join("maria.json");
    let r = scalebench(&[
        "replay",
        general.to_str().unwrap(),
        "--db",
        &maria.url(),
        "--concurrency",
        "2",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let phase = json(&out)["phases"][0].clone();
    assert_eq!(phase["totals"]["ok"], 3, "{phase}");
    assert_eq!(phase["operations"]["SQL UPDATE"]["ok"], 1, "{phase}");
    assert_eq!(
        maria
            .sql("SELECT n FROM ycsb.replayed WHERE k = 'm'")
            .unwrap()
            .trim(),
        "5"
    );
}
