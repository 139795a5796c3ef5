//! `--verify-writes` on SQLite, which cannot lose an acknowledged write: with no fault, every YCSB
//! workload (with deletes) and every shipped workload file counts 0 lost and 0 unexpected; the
//! writes it cannot follow are refused, named.

use std::path::Path;

mod common;
use common::*;

/// `scalebench run WORKLOAD --load` on a SQLite file of its own with `--verify-writes`: the run
/// phase's `lost_writes`.
fn verified(dir: &Path, name: &str, workload: &str, extra: &[&str]) -> serde_json::Value {
    let db = format!("sqlite://{}/{name}.db", dir.display());
    let out = dir.join(format!("{name}.json"));
    let o = scalebench(
        &[
            &[
                "run",
                workload,
                "--load",
                "--db",
                &db,
                "-p",
                "recordcount=300",
                "--operations",
                "1500",
                "--threads",
                "2",
                "--verify-writes",
                "-q",
                "-o",
                out.to_str().unwrap(),
            ][..],
            extra,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let r = json(&out);
    let run = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == "run")
        .expect("a run phase")
        .clone();
    run["lost_writes"].clone()
}

fn assert_none_lost(name: &str, lost: &serde_json::Value) {
    let count = |class: &str| {
        lost[class]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {lost}"))
    };
    // YCSB's C only reads.
    let writes = name != "workloadc";
    assert_eq!(count("checked") > 0, writes, "{name}: {lost}");
    for class in ["lost", "unexpected", "unreadable"] {
        assert_eq!(count(class), 0, "{name}: {lost}");
    }
}

/// Issue 61: with deletes, 958 of 4,359 keys were "missing" (deletes were not recorded).
#[test]
fn every_ycsb_workload_with_deletes_loses_nothing_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    for w in ["a", "b", "c", "d", "e", "f"] {
        let lost = verified(dir.path(), w, w, &["-p", "deleteproportion=0.05"]);
        assert_none_lost(w, &lost);
    }
}

/// The workload files beside the examples, typed records included (values read back as the
/// database prints them are compared by value).
#[test]
fn every_shipped_workload_file_loses_nothing_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let files = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workloads");
    let mut ran = 0;
    for entry in std::fs::read_dir(&files).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let lost = verified(dir.path(), &name, path.to_str().unwrap(), &[]);
        assert_none_lost(&name, &lost);
        ran += 1;
    }
    assert!(ran >= 8, "{ran} workload files");
}

/// An increment adds to a value the client never learns, and a statement that writes does what
/// its SQL says: refused before anything connects, naming the operation; a statement that only
/// reads writes nothing and is run.
#[test]
fn writes_the_check_cannot_follow_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = |ops: &str| {
        let path = dir.path().join("counters.toml");
        let text = format!(
            "[record]\ntable = \"counters\"\nrecords = 50\n\n[[record.column]]\nname = \"hits\"\ntype = \"int\"\ngenerator.uniform = {{ min = 0, max = 9 }}\n\n[[run.operation]]\nname = \"look\"\nkind = \"read\"\nweight = 0.5\n\n{ops}"
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let refused = |ops: &str, names: &str| {
        let path = file(ops);
        let db = format!("sqlite://{}/{}.db", dir.path().display(), names.len());
        let o = scalebench(&[
            "run",
            path.to_str().unwrap(),
            "--load",
            "--db",
            &db,
            "--operations",
            "200",
            "-q",
        ]);
        assert!(o.status.success(), "without the check: {}", stderr(&o));
        let o = scalebench(&[
            "run",
            path.to_str().unwrap(),
            "--db",
            &db,
            "--verify-writes",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let said = stderr(&o);
        assert!(said.contains(names), "{said}");
        assert_eq!(said.trim().lines().count(), 1, "{said}");
    };
    refused(
        "[[run.operation]]\nname = \"hit\"\nkind = \"increment\"\nweight = 0.5\nadd = { hits = 1 }\n",
        "--verify-writes cannot check operation 'hit' (increment)",
    );
    refused(
        "[[run.operation]]\nname = \"reset\"\nkind = \"statement\"\nweight = 0.5\nsql = \"UPDATE counters SET hits = 0 WHERE YCSB_KEY = :key\"\n",
        "operation 'reset' (statement)",
    );
    let reads = file(
        "[[run.operation]]\nname = \"busy\"\nkind = \"statement\"\nweight = 0.5\nsql = \"SELECT hits FROM counters WHERE hits > 5\"\n",
    );
    let lost = verified(dir.path(), "reads", reads.to_str().unwrap(), &[]);
    assert_eq!(lost["checked"], 0, "nothing written: {lost}");
}

/// Redis commands processed so far (`INFO stats`).
fn commands_processed(port: u16) -> u64 {
    let o = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "INFO", "stats"])
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO stats counts commands")
}

/// `scalebench run a` on `url` for 3 s, no warm-up, at 200 operations a second.
fn three_seconds_of_a_at_200_per_second(url: &str) -> std::process::Command {
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"));
    run.args([
        "run",
        "a",
        "--db",
        url,
        "--duration",
        "3s",
        "--warmup",
        "0s",
    ])
    .args(["--target", "200"]);
    run
}

/// Waits until the Redis server on `port` processed `commands` in all (the run `what` names
/// wrote that far), failing after a minute.
fn await_commands(port: u16, commands: u64, what: &str) {
    let waited = std::time::Instant::now();
    while commands_processed(port) < commands {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(60),
            "{what}: the run never wrote"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A Redis server of this test's own with workload a's 300 records loaded, and its process.
fn loaded_redis() -> (scalebench_deploy::redis::RedisServer, nix::unistd::Pid) {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = scalebench_deploy::redis::RedisServer::start(&base, &[], false, true)
        .expect("Redis starts");
    let pid = nix::unistd::Pid::from_raw(server.process.pid() as i32);
    let url = server.url();
    let o = scalebench(&[
        "load",
        "a",
        "--db",
        &url,
        "-p",
        "recordcount=300",
        "--no-monitor",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (server, pid)
}

/// `child`'s exit status, awaited at most `limit` (then it is killed, `redis` resumed, and the
/// test fails saying `what`).
fn exit_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    redis: nix::unistd::Pid,
    what: &str,
) -> std::process::ExitStatus {
    let began = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            let _ = nix::sys::signal::kill(redis, nix::sys::signal::Signal::SIGCONT);
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 62, high: a server paused (SIGSTOP) near the end of a `--verify-writes` run held the
/// write check after it forever, through Ctrl-C and SIGTERM. Now the check ends at its time limit
/// (`--verify-timeout`), or at the first Ctrl-C after it began, and what was measured is written:
/// the keys it did not reach counted unchecked, and why said.
#[test]
fn a_paused_server_ends_the_write_check_at_its_limit_or_at_ctrl_c() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::io::BufRead;
    use std::time::{Duration, Instant};
    let (server, redis) = loaded_redis();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let props = ["-p", "recordcount=300", "--no-monitor"];
    for (case, limit) in [("limit", "2s"), ("signal", "10m")] {
        let out = dir.path().join(format!("{case}.json"));
        let before = commands_processed(server.port);
        let mut child = three_seconds_of_a_at_200_per_second(&url)
            .args(["--op-timeout", "300ms", "--verify-writes"])
            .args(["--verify-timeout", limit, "-o", out.to_str().unwrap()])
            .args(props)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, said) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Paused near the run's end (about 450 of its 600 operations done): the check after it
        // connects to a server that accepts and never answers.
        await_commands(server.port, before + 450, case);
        kill(redis, Signal::SIGSTOP).unwrap();
        let mut seen = Vec::new();
        let checking = loop {
            match said.recv_timeout(Duration::from_secs(60)) {
                Ok(l) if l.starts_with("checking ") => break Instant::now(),
                Ok(l) => seen.push(l),
                Err(_) => panic!("{case}: the check never began: {seen:?}"),
            }
        };
        if case == "signal" {
            kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
        }
        let status = exit_within(&mut child, Duration::from_secs(30), redis, case);
        kill(redis, Signal::SIGCONT).unwrap();
        let took = checking.elapsed();
        seen.extend(said.try_iter());
        assert!(status.success(), "{case}: {status:?}: {seen:?}");
        // The limit of 2 s, or the signal at once (a read in flight gives up within 50 ms).
        let bound = if case == "limit" { 2.0 } else { 0.0 };
        assert!(
            took.as_secs_f64() < bound + 3.0,
            "{case}: {took:?} after the check began"
        );
        let r = json(&out);
        let run = &r["phases"][0];
        assert_eq!(run["phase"], "run", "{r}");
        let lost = &run["lost_writes"];
        let ended = lost["ended"]
            .as_str()
            .unwrap_or_else(|| panic!("{case}: {lost}"));
        let why = match case {
            "limit" => "ended at its time limit of 2s (--verify-timeout)",
            _ => "ended by a signal",
        };
        assert!(ended.starts_with(why), "{case}: {lost}");
        assert!(lost["unchecked"].as_u64().unwrap() > 0, "{case}: {lost}");
        assert_eq!(lost["lost"], 0, "{case}: {lost}");
        assert!(
            run["operations"]["READ"]["ok"].as_u64().unwrap() > 0,
            "{case}: {run}"
        );
        let mut told = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut told).unwrap();
        assert!(
            told.contains(&format!("keys not checked: the check {why}")),
            "{case}: {told}"
        );
    }
}

/// Issue 62, item 1: after the window, the grace period for operations in flight and the
/// consistency probe's drain and key deletes wait for a server that stopped answering at most
/// their timeouts (10 s each by default: 20 s in all here), and a Ctrl-C ends them at once,
/// what was measured written.
#[test]
fn a_paused_server_holds_the_grace_and_the_probe_until_ctrl_c() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};
    let (server, redis) = loaded_redis();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let props = ["-p", "recordcount=300", "--no-monitor", "-q"];
    let out = dir.path().join("probe.json");
    let before = commands_processed(server.port);
    let started = Instant::now();
    let mut child = three_seconds_of_a_at_200_per_second(&url)
        .args(["--consistency-probe", "20"])
        .args(["-o", out.to_str().unwrap()])
        .args(props)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Paused during the window (its workload and probe operations in flight then wait for it),
    // interrupted half a second after the window's end.
    await_commands(server.port, before + 450, "the probe's run");
    kill(redis, Signal::SIGSTOP).unwrap();
    let window_over = started + Duration::from_millis(3500);
    std::thread::sleep(window_over.saturating_duration_since(Instant::now()));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it waits for the paused server"
    );
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let signalled = Instant::now();
    let status = exit_within(
        &mut child,
        Duration::from_secs(30),
        redis,
        "the run after Ctrl-C",
    );
    let took = signalled.elapsed();
    kill(redis, Signal::SIGCONT).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    // The window was whole: the run ended by its duration; the wait after it cut.
    assert!(status.success(), "{status:?}: {err}");
    assert!(
        took < Duration::from_secs(3),
        "{took:?} after Ctrl-C: {err}"
    );
    let r = json(&out);
    let run = &r["phases"][0];
    assert_eq!(run["ended_by"], "duration", "{run}");
    assert!(
        run["operations"]["READ"]["ok"].as_u64().unwrap() > 0,
        "{run}"
    );
    let probe = &run["consistency"];
    assert!(probe["probe_writes"].as_u64().unwrap() > 0, "{probe}");
}
