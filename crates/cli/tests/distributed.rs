//! Many clients, one run (`--clients N`): client processes of this binary against a real Redis,
//! each with its share, one common start, one merged result.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use common::{slurm, sshd};
use scalebench_deploy::redis::RedisServer;

fn redis() -> RedisServer {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    RedisServer::start(&base, &[], false, true).expect("Redis starts")
}

/// Records of the workload in the database (the binding's scan index is one more key).
fn records_in(server: &RedisServer) -> u64 {
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let o = Command::new("redis-cli")
        .args(["-p", &port, "--scan", "--pattern", "user*"])
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&o.stdout).lines().count() as u64
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

const PROPS: &[&str] = &[
    "-p",
    "recordcount=2000",
    "-p",
    "readproportion=0.4",
    "-p",
    "updateproportion=0.4",
    "-p",
    "insertproportion=0.2",
    "-p",
    "dataintegrity=true",
    "--no-monitor",
];

#[test]
fn four_clients_load_then_run_with_inserts_each_in_its_own_section() {
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let out = |name: &str| dir.path().join(name).display().to_string();

    let load = out("load.json");
    let args = [
        &[
            "load",
            "a",
            "--db",
            &url,
            "--threads",
            "2",
            "--clients",
            "4",
            "-o",
            &load,
        ][..],
        PROPS,
    ]
    .concat();
    let o = scalebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(dir.path().join("load.json").as_path());
    assert_eq!(u(&merged["phases"][0]["totals"]["ok"]), 2000);
    assert_eq!(u(&merged["phases"][0]["clients"]), 4);
    // Each client loaded its quarter of the key range, no more.
    for i in 0..4 {
        let c = json(&dir.path().join(format!("load.client-{i}.json")));
        assert_eq!(u(&c["client"]["index"]), i);
        assert_eq!(u(&c["phases"][0]["totals"]["ok"]), 500);
    }
    assert_eq!(records_in(&server), 2000);
    // The clients' connections received the server's replies, known to the byte (issue 65): each
    // insert's HSET answers ":10\r\n" (10 fields added) and its ZADD to the key index ":1\r\n".
    let cost = &merged["phases"][0]["client_cost"];
    assert_eq!(u(&cost["clients"]), 4, "{cost}");
    assert_eq!(u(&cost["operations"]), 2000, "{cost}");
    assert_eq!(u(&cost["bytes_received"]), 2000 * 9, "{cost}");

    let run = out("run.json");
    let args = [
        &[
            "run",
            "a",
            "--db",
            &url,
            "--threads",
            "2",
            "--operations",
            "4001",
            "--clients",
            "4",
            "-o",
            &run,
        ][..],
        PROPS,
    ]
    .concat();
    let o = scalebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(dir.path().join("run.json").as_path());
    let phase = &merged["phases"][0];
    assert_eq!(
        u(&phase["totals"]["ok"]),
        4001,
        "every operation of the run, none failed"
    );
    assert_eq!(u(&phase["totals"]["failed"]), 0);
    assert_eq!(merged["distributed"]["clients"], 4);
    assert!(merged["distributed"].get("missing").is_none());

    let clients: Vec<serde_json::Value> = (0..4)
        .map(|i| json(&dir.path().join(format!("run.client-{i}.json"))))
        .collect();
    // Merged counts are the sum of the clients' (4001 split 1001, 1000, 1000, 1000).
    let ok: Vec<u64> = clients
        .iter()
        .map(|c| u(&c["phases"][0]["totals"]["ok"]))
        .collect();
    assert_eq!(ok, [1001, 1000, 1000, 1000]);
    let inserts = |p: &serde_json::Value| p["operations"]["INSERT"]["ok"].as_u64().unwrap_or(0);
    let client_inserts: u64 = clients.iter().map(|c| inserts(&c["phases"][0])).sum();
    assert_eq!(inserts(phase), client_inserts);
    assert!(client_inserts > 400, "{client_inserts} inserts");
    // Every inserted key is distinct: the database holds the records and all the inserts.
    assert_eq!(records_in(&server), 2000 + client_inserts);
    // One agreed start, each client's measured skew against it small.
    let agreed = &clients[0]["phases"][0]["start"]["agreed_unix_ms"];
    for c in &clients {
        let start = &c["phases"][0]["start"];
        assert_eq!(&start["agreed_unix_ms"], agreed);
        let skew = start["skew_ms"].as_f64().unwrap();
        assert!(skew.abs() < 50.0, "start skew {skew} ms");
    }
    // The insert sections do not overlap.
    let mut sections: Vec<(u64, u64)> = clients
        .iter()
        .map(|c| {
            let k = &c["phases"][0]["insert_keys"];
            (u(&k["start"]), u(&k["end"]))
        })
        .collect();
    sections.sort();
    assert!(
        sections.windows(2).all(|w| w[0].1 <= w[1].0),
        "{sections:?}"
    );
    assert_eq!(sections[0].0, 2000);
}

/// Issue 43: two clients share a rate profile (each follows half of it, its arrivals between the
/// other's): the merged run's intervals complete what the whole profile asks for them. The
/// workload is a file's (the session store), whose named operations are merged by name.
#[test]
fn two_clients_follow_their_shares_of_a_rate_profile() {
    // A workload file's named operations (the session store), merged by name.
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/workloads/session-store.toml");
    let workload = file.to_str().unwrap();
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let out = dir.path().join("run.json");
    let o = scalebench(&[
        "load",
        workload,
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = "staircase:start=400,step=800,every=2s,steps=2";
    let o = scalebench(&[
        "run",
        workload,
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--clients",
        "2",
        "--rate-profile",
        profile,
        "--duration",
        "4s",
        "--warmup",
        "300ms",
        "--interval",
        "2s",
        "--concurrency",
        "4",
        "--pipeline",
        "2",
        "--no-monitor",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(&out);
    assert_eq!(u(&merged["phases"][0]["clients"]), 2);
    assert_follows_the_profile(&merged, profile, 4.0);
    // Each client pipelined, as the merged result and its summary say.
    assert_eq!(u(&merged["parameters"]["pipeline"]), 2);
    let summary = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let piped = "2 thread(s) x 4 in flight, 2 per connection of the run (4 connections)";
    assert!(summary.contains(piped), "{summary}");
    let ops = merged["phases"][0]["operations"].as_object().unwrap();
    let names: Vec<&str> = ops.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "check_session",
            "new_session",
            "renew_session",
            "touch_session",
            "user_of_session"
        ]
    );
    let ok: u64 = ops.values().map(|o| u(&o["ok"])).sum();
    assert_eq!(ok, u(&merged["phases"][0]["totals"]["ok"]));
}

/// Issue 39, point 12: Ctrl-C on a terminal reaches the launcher and its clients at once, at any
/// moment of the start (spawning, connecting, waiting for the common start, running). Each time
/// the launcher exits 130 (interrupted), never 1 (a failed run), and a result it writes says
/// `interrupted: true`.
#[test]
fn ctrl_c_to_the_process_group_at_any_moment_of_the_start_is_an_interruption() {
    use std::os::unix::process::CommandExt;
    let dir = test_dir();
    // The terminal's Ctrl-C (the whole group), then `kill -INT` of the launcher alone: the merged
    // result says interrupted whenever the exit code does (it once said false beside 130).
    let group = [30u64, 60, 90, 120, 150, 200, 300, 500].map(|d| (d, true));
    let launcher_only = [60u64, 200, 500].map(|d| (d, false));
    for (delay_ms, whole_group) in group.into_iter().chain(launcher_only) {
        let out = dir
            .path()
            .join(format!("run-{delay_ms}-{whole_group}.json"));
        let mut launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args([
                "run",
                "--db",
                "null://",
                "--clients",
                "3",
                "--duration",
                "5s",
            ])
            .args(["--target", "300", "-q", "-o", out.to_str().unwrap()])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // The launcher this test started, or its process group.
        let pid = launcher.id() as i32;
        signal(if whole_group { -pid } else { pid }, Signal::SIGINT);
        let deadline = Instant::now() + Duration::from_secs(30);
        while launcher.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "{delay_ms} ms: still running");
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = launcher.wait_with_output().unwrap();
        // Before its handler is installed a process dies of the signal, which a shell reports as
        // 130 too.
        use std::os::unix::process::ExitStatusExt;
        assert!(
            o.status.code() == Some(130) || o.status.signal() == Some(Signal::SIGINT as i32),
            "{delay_ms} ms (group: {whole_group}): {:?} {}",
            o.status,
            stderr(&o)
        );
        if out.exists() {
            assert_eq!(json(&out)["interrupted"], true, "{delay_ms} ms");
        } else if !whole_group && delay_ms >= 500 {
            // Well after the clients started, what they measured is kept.
            panic!(
                "{delay_ms} ms, the launcher alone: no result: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_client_killed_mid_run_leaves_an_incomplete_result_naming_it() {
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let out = dir.path().join("run.json");
    let o = scalebench(&[&["load", "a", "--db", &url, "--clients", "3"][..], PROPS].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(
            [
                &[
                    "run",
                    "a",
                    "--db",
                    &url,
                    "--clients",
                    "3",
                    "--duration",
                    "4s",
                    "--target",
                    "300",
                ][..],
                &["-o", out.to_str().unwrap()],
                PROPS,
            ]
            .concat(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the three clients run, one of them dies.
    let began = Instant::now();
    let victim = loop {
        let children = children_of(launcher.id());
        if children.len() == 3 || began.elapsed() > Duration::from_secs(20) {
            break *children.last().expect("the launcher started its clients");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500));
    // A child process of the launcher this test started.
    assert!(signal(victim as i32, Signal::SIGKILL));
    let deadline = Instant::now() + Duration::from_secs(60);
    while launcher.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the launcher still runs a minute later"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = launcher.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("INCOMPLETE: client"), "{}", stderr(&o));
    let merged = json(&out);
    let missing = merged["distributed"]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0]["reason"].as_str().unwrap().contains("signal 9"),
        "{missing:?}"
    );
    // This workload inserts (20%): the missing share names its insert section.
    let share = missing[0]["share"].as_str().unwrap();
    assert!(share.contains("inserts from key"), "{missing:?}");
    // The other two measured the whole run.
    assert_eq!(u(&merged["phases"][0]["clients"]), 2);
    assert!(u(&merged["phases"][0]["totals"]["ok"]) > 600);
}

#[test]
fn clients_that_cannot_connect_are_named_and_nothing_hangs() {
    // A server that accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut held = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Ok((s, _)) = listener.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let url = format!("redis://127.0.0.1:{port}");
    let o = scalebench_within(
        &[
            "run",
            "a",
            "--db",
            &url,
            "--clients",
            "2",
            "--start-timeout",
            "2s",
            "--duration",
            "1s",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("client(s) 0, 1 of 2 not ready (connected) after 2s"),
        "{}",
        stderr(&o)
    );
    drop(held);
}

#[test]
fn bad_client_counts_and_combinations_are_refused_with_exit_code_2() {
    for (args, expected) in [
        (&["run", "--clients", "0"][..], "'0' for '--clients <N>'"),
        (&["run", "--clients", "2"][..], "need a database they share"),
        (
            &["run", "--db", "null://", "--clients", "2", "--load"][..],
            "one phase at a time",
        ),
        (
            &[
                "run",
                "--db",
                "null://",
                "--clients",
                "5",
                "--operations",
                "4",
            ][..],
            "'4' for 'operationcount'",
        ),
    ] {
        let o = scalebench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
    }
}

fn etcd() -> scalebench_deploy::etcd::EtcdServer {
    etcd_server()
}

/// `srun -n 4` runs four clients as Slurm tasks; each takes its index and N from SLURM_PROCID and
/// SLURM_NTASKS, they meet in etcd, client 0 merges.
#[test]
fn four_clients_started_by_slurm_meet_in_etcd_for_a_load_and_a_run() {
    let slurm = slurm::LocalSlurm::start();
    let etcd = etcd();
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let path = |name: &str| dir.path().join(name);
    let srun = |phase: &str, prefix: &str, extra: &[&str]| {
        let rendezvous = format!("{}/{prefix}", etcd.url());
        let out = path(&format!("{phase}.json"));
        let mut c = slurm.srun();
        c.args([
            "-n",
            "4",
            "--overcommit",
            "--kill-on-bad-exit=0",
            env!("CARGO_BIN_EXE_scalebench"),
        ])
        .args([
            phase,
            "a",
            "--db",
            &url,
            "--rendezvous",
            &rendezvous,
            "-o",
            out.to_str().unwrap(),
        ])
        .args(PROPS)
        .args(extra)
        .stdin(Stdio::null());
        c.output().unwrap()
    };
    let o = srun("load", "bench-1", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(&path("load.json"));
    assert_eq!(u(&merged["phases"][0]["totals"]["ok"]), 2000);
    assert_eq!(merged["distributed"]["launcher"], "etcd");
    assert_eq!(records_in(&server), 2000);

    let o = srun("run", "bench-1", &["--operations", "2001"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(&path("run.json"));
    let phase = &merged["phases"][0];
    assert_eq!(u(&phase["totals"]["ok"]), 2001);
    assert_eq!(u(&phase["clients"]), 4);
    let clients: Vec<serde_json::Value> = (0..4)
        .map(|i| json(&path(&format!("run.client-{i}.json"))))
        .collect();
    let inserts = |p: &serde_json::Value| p["operations"]["INSERT"]["ok"].as_u64().unwrap_or(0);
    let client_inserts: u64 = clients.iter().map(|c| inserts(&c["phases"][0])).sum();
    assert_eq!(inserts(phase), client_inserts);
    assert_eq!(
        records_in(&server),
        2000 + client_inserts,
        "every insert took a key of its own"
    );
    let agreed = &clients[0]["phases"][0]["start"]["agreed_unix_ms"];
    for (i, c) in clients.iter().enumerate() {
        assert_eq!(u(&c["client"]["index"]), i as u64);
        assert_eq!(&c["phases"][0]["start"]["agreed_unix_ms"], agreed);
        let skew = c["phases"][0]["start"]["skew_ms"].as_f64().unwrap();
        assert!(skew.abs() < 50.0, "client {i}: start skew {skew} ms");
    }

    // From any machine, later: the same merged result.
    let gathered = path("gathered.json");
    let rendezvous = format!("{}/bench-1", etcd.url());
    let o = scalebench(&[
        "gather",
        "--rendezvous",
        &rendezvous,
        "-o",
        gathered.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&gathered)["phases"][0]["totals"], phase["totals"]);

    // A prefix is one run: reusing it is refused instead of starting at an old instant.
    let o = srun("load", "bench-1", &["--clients", "4"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("already holds the start of a load phase"),
        "{}",
        stderr(&o)
    );

    // Issue 41, point 4: an experiment's cell started by srun (`[procedure.clients] launcher =
    // "srun"`): one job step of two tasks, each its index from Slurm, merged here.
    let file = path("srun-clients.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"srun-clients\"\n[procedure]\nload = \"once\"\nduration = \"1s\"\n\
             options = {{ no_monitor = true, threads = 1 }}\n[procedure.clients]\nlauncher = \"srun\"\n\
             rendezvous = \"{}/experiment\"\nsrun_command = \"srun --overcommit\"\nremote_program = \"{}\"\n\
             [[database]]\nname = \"redis\"\ndb = \"{url}\"\n[[workload]]\nname = \"b\"\nworkload = \"b\"\n\
             properties = {{ recordcount = 500 }}\n[sweep]\nclients = [2]\n",
            etcd.url(),
            env!("CARGO_BIN_EXE_scalebench"),
        ),
    )
    .unwrap();
    let results = path("srun-results.db");
    let o = experiment_command(dir.path(), &file, &results)
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let db = rusqlite::Connection::open(&results).unwrap();
    let (status, result): (String, String) = db
        .query_row("SELECT status, result FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "ok", "{result}");
    let r: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert_eq!(r["distributed"]["launcher"], "srun", "{r}");
    let run = r["phases"].as_array().unwrap().last().unwrap();
    assert_eq!(u(&run["clients"]), 2);
    assert!(u(&run["totals"]["ok"]) > 0);
}

#[test]
fn a_barrier_that_never_fills_names_the_missing_client() {
    let etcd = etcd();
    let server = redis();
    let rendezvous = format!("{}/short", etcd.url());
    let url = server.url();
    let client = |index: &str| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args([
                "run",
                "a",
                "--db",
                &url,
                "--rendezvous",
                &rendezvous,
                "--clients",
                "3",
            ])
            .args([
                "--client-index",
                index,
                "--start-timeout",
                "2s",
                "--duration",
                "1s",
                "--no-monitor",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let began = Instant::now();
    let (a, b) = (client("0"), client("1"));
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("client(s) 2 of 3 did not join")
                && stderr(&o).contains("within 2s"),
            "{}",
            stderr(&o)
        );
    }
    assert!(began.elapsed() < Duration::from_secs(30), "nothing hangs");
}

/// `--ssh`: this machine starts each client on its host over ssh (here two "hosts", both this
/// machine's sshd), and gathers their results from etcd.
#[test]
fn clients_started_over_ssh_are_gathered_and_merged_here() {
    let sshd = sshd::LocalSshd::start();
    let etcd = etcd();
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let out = dir.path().join("load.json");
    let launch = |prefix: &str, ssh_command: &str| {
        let rendezvous = format!("{}/{prefix}", etcd.url());
        let args = [
            &[
                "load",
                "a",
                "--db",
                &url,
                "--rendezvous",
                &rendezvous,
                "--ssh",
                "127.0.0.1,localhost",
                "--clients",
                "3",
            ][..],
            &[
                "--ssh-command",
                ssh_command,
                "--remote-program",
                env!("CARGO_BIN_EXE_scalebench"),
            ],
            &["--start-timeout", "5s", "-o", out.to_str().unwrap()],
            PROPS,
        ]
        .concat();
        scalebench_within(&args, Duration::from_secs(60))
    };
    let o = launch("ssh-1", &sshd.ssh_command());
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = json(&out);
    assert_eq!(u(&merged["phases"][0]["totals"]["ok"]), 2000);
    assert_eq!(merged["distributed"]["launcher"], "ssh");
    for i in 0..3 {
        let c = json(&dir.path().join(format!("load.client-{i}.json")));
        assert_eq!(u(&c["client"]["index"]), i);
    }
    assert_eq!(records_in(&server), 2000);

    // Hosts that cannot be reached: the run does not start, and each client's ssh is named.
    let o = launch("ssh-2", "ssh -o BatchMode=yes -o ConnectTimeout=5 -p 1");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("client 0: ssh to 127.0.0.1 failed"),
        "{}",
        stderr(&o)
    );

    // A port that accepts and never answers (issue 28, point 8): --start-timeout bounds ssh's
    // connect and key exchange (5 s here), the launch ends.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let began = Instant::now();
    let o = launch("ssh-3", &format!("ssh -o BatchMode=yes -p {port}"));
    assert!(
        began.elapsed() < Duration::from_secs(30),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ssh to 127.0.0.1 failed"),
        "{}",
        stderr(&o)
    );
    drop(silent);

    // Ctrl-C stops the clients on their hosts through etcd, says so, and keeps what they measured.
    let rendezvous = format!("{}/ssh-4", etcd.url());
    let out = dir.path().join("stopped.json");
    let launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["run", "--db", "null://", "--rendezvous", &rendezvous])
        .args([
            "--ssh",
            "127.0.0.1",
            "--clients",
            "2",
            "--ssh-command",
            &sshd.ssh_command(),
        ])
        .args(["--remote-program", env!("CARGO_BIN_EXE_scalebench")])
        .args([
            "--duration",
            "60s",
            "--grace",
            "1s",
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(within(Duration::from_secs(30), || !etcd_get(
        &etcd,
        "/ssh-4/run/start"
    )
    .is_empty()));
    std::thread::sleep(Duration::from_millis(1500));
    let interrupted = Instant::now();
    signal(launcher.id() as i32, Signal::SIGINT);
    let o = launcher.wait_with_output().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(20),
        "{:?}",
        interrupted.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("interrupted: asking client 0 on 127.0.0.1, client 1 on 127.0.0.1 to stop"),
        "{}",
        stderr(&o)
    );
    let merged = json(&out);
    assert_eq!(merged["interrupted"], true);
    assert_eq!(u(&merged["phases"][0]["clients"]), 2);
}

/// An experiment sweeps the number of clients: "is the client the bottleneck?" is a column.
#[test]
fn an_experiment_sweeps_the_number_of_clients() {
    let server = redis();
    let dir = test_dir();
    let file = dir.path().join("clients.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "clients"
[procedure]
load = "once"
duration = "1s"
options = {{ no_monitor = true, threads = 1 }}
[[database]]
name = "redis"
db = "{}"
[[workload]]
name = "a"
workload = "a"
properties = {{ recordcount = 500, insertproportion = 0.1, readproportion = 0.5, updateproportion = 0.4 }}
[sweep]
clients = [1, 2]
"#,
            server.url()
        ),
    )
    .unwrap();
    let (o, results) = experiment_in(dir.path(), &file);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = rusqlite::Connection::open(&results).unwrap();
    let mut rows = db
        .prepare("SELECT cell, status, params, result FROM runs ORDER BY cell")
        .unwrap();
    let runs: Vec<(String, String, String, String)> = rows
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), 2);
    for (n, (cell, status, params, result)) in runs.iter().enumerate() {
        let clients = n as u64 + 1;
        assert!(cell.ends_with(&format!("clients={clients}")), "{cell}");
        assert_eq!(status, "ok", "{cell}");
        assert!(params.contains("clients"), "{params}");
        let r: serde_json::Value = serde_json::from_str(result).unwrap();
        let run = r["phases"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(u(&run["clients"]), clients, "{cell}");
        assert!(u(&run["totals"]["ok"]) > 0, "{cell}");
    }
}

/// Dory's request sets shared by two clients (issue 41, point 3): R in all, each client half, a
/// set ends when both finished their share (the launcher opens the next for both). Issue 61: each
/// thread with a fixed share of every set, as Dory's client (the null binding has no node to bind
/// a thread to, and says so).
#[test]
fn two_clients_share_each_request_set() {
    let dir = test_dir();
    let out = dir.path().join("sets.json");
    let o = scalebench(&[
        "run",
        "--db",
        "null://",
        "--clients",
        "2",
        "--request-set",
        "1001",
        "--request-set-threads",
        "fixed",
        "--threads",
        "2",
        "--duration",
        "1s",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("null cannot bind a thread to a node"),
        "{}",
        stderr(&o)
    );
    // The clients' normal end is no lost client.
    assert!(
        !stderr(&o).contains("ended before the run"),
        "{}",
        stderr(&o)
    );
    let sets = &json(&out)["phases"][0]["request_sets"];
    assert_eq!(u(&sets["size"]), 1001, "{sets}");
    assert_eq!(sets["threads"], "fixed", "{sets}");
    let all = sets["sets"].as_array().unwrap();
    assert!(all.len() > 10, "{} sets", all.len());
    for (k, set) in all.iter().enumerate() {
        assert_eq!(u(&set["index"]), k as u64);
        let each: Vec<f64> = set["clients_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        let d = set["duration_s"].as_f64().unwrap();
        assert!(
            each.len() == 2 && (each[0].max(each[1]) - d).abs() < 1e-6,
            "{set}"
        );
    }
    // Each client ran its share of every set: 501 and 500 operations.
    for (i, share) in [(0, 501), (1, 500)] {
        let client = json(&dir.path().join(format!("sets.client-{i}.json")));
        assert_eq!(u(&client["phases"][0]["request_sets"]["size"]), share);
    }
}

// ---- Faults of etcd, clients and launchers (issue 28) ----

/// One etcd for the tests that leave it running, started once for this test binary by a thread
/// that lives as long as the binary (the server dies with the thread that started it).
fn shared_etcd() -> &'static scalebench_deploy::etcd::EtcdServer {
    static ETCD: std::sync::OnceLock<scalebench_deploy::etcd::EtcdServer> =
        std::sync::OnceLock::new();
    ETCD.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            tx.send(etcd()).unwrap();
            loop {
                std::thread::park();
            }
        });
        rx.recv().unwrap()
    })
}

/// The value of `key` in `etcd`, empty when it has none.
fn etcd_get(etcd: &scalebench_deploy::etcd::EtcdServer, key: &str) -> String {
    let o = Command::new("etcdctl")
        .args([
            &format!("--endpoints=127.0.0.1:{}", etcd.port),
            "get",
            key,
            "--print-value-only",
        ])
        .output()
        .expect("etcdctl runs");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Polls `done` every 20 ms for at most `limit`; true when it came true.
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

/// A client of a rendezvous run on the null binding, its output piped.
fn rendezvous_client(rendezvous: &str, index: &str, extra: &[&str]) -> std::process::Child {
    spawn_piped(
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(["run", "--db", "null://", "--rendezvous", rendezvous])
            .args(["--client-index", index, "--no-monitor", "--grace", "1s"])
            .args(extra),
    )
}

/// Clients started unlike each other are refused at the barrier, naming the field, before anything
/// runs (exit 2): each resolves its settings once, and the definition its phase computes from them
/// is what its rendezvous compares (issue 40, point 5).
#[test]
fn clients_started_unalike_are_refused_at_the_barrier_naming_the_field() {
    let etcd = shared_etcd();
    let rendezvous = format!("{}/unalike", etcd.url());
    let c0 = rendezvous_client(&rendezvous, "0", &["--clients", "2", "--duration", "2s"]);
    let c1 = rendezvous_client(&rendezvous, "1", &["--clients", "2", "--duration", "5s"]);
    let began = Instant::now();
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    assert!(
        began.elapsed() < Duration::from_secs(30),
        "{:?}",
        began.elapsed()
    );
    for o in [&o0, &o1] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        assert!(stderr(o).contains("nothing ran"), "{}", stderr(o));
    }
    let both = format!("{}{}", stderr(&o0), stderr(&o1));
    assert!(
        both.contains("duration 5s where client 0 has 2s")
            || both.contains("duration 2s where client 1 has 5s"),
        "{both}"
    );
    // Refused at the barrier: neither wrote a start.
    assert!(etcd_get(etcd, "/unalike/run/start").is_empty());
}

/// The clients compare their workloads by meaning (definition version 2, issue 64): YCSB's
/// workload a built in, as a property file written otherwise (`0.50`, `Zipfian`, YCSB's workload
/// class) and as a workload file are one workload, and run as one run; a proportion that differs
/// is refused at the barrier, naming it with both values.
#[test]
fn clients_whose_workloads_mean_the_same_run_together_and_a_difference_is_named() {
    let etcd = shared_etcd();
    let dir = test_dir();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let as_properties = "workload=site.ycsb.workloads.CoreWorkload\nreadproportion=0.50\n\
                         updateproportion=.5\nrequestdistribution=Zipfian\nrecordcount=1000\n";
    let properties = write("a.properties", as_properties);
    let file = write(
        "a.toml",
        "[record]\nrecords = 1000\n[run]\nmix = { read = 0.5, update = 0.5 }\nkey_distribution = \"zipfian\"\n",
    );
    let out = dir.path().join("run.json");
    let rendezvous = format!("{}/alike", etcd.url());
    let common = [
        "--clients",
        "3",
        "--duration",
        "1s",
        "-o",
        out.to_str().unwrap(),
    ];
    let clients: Vec<_> = [("0", "a"), ("1", properties.as_str()), ("2", file.as_str())]
        .into_iter()
        .map(|(i, w)| rendezvous_client(&rendezvous, i, &[&[w][..], &common].concat()))
        .collect();
    for (i, c) in clients.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "client {i}: {}", stderr(&o));
    }
    let merged = json(&out);
    assert_eq!(merged["distributed"]["clients"], 3, "{merged}");

    let other = write("b.properties", &as_properties.replace("0.50", "0.6"));
    let rendezvous = format!("{}/unalike-workload", etcd.url());
    let c0 = rendezvous_client(
        &rendezvous,
        "0",
        &["a", "--clients", "2", "--duration", "1s"],
    );
    let c1 = rendezvous_client(
        &rendezvous,
        "1",
        &[&other, "--clients", "2", "--duration", "1s"],
    );
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    for o in [&o0, &o1] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    }
    let both = format!("{}{}", stderr(&o0), stderr(&o1));
    assert!(
        both.contains("readproportion 0.6 where client 0 has 0.5")
            || both.contains("readproportion 0.5 where client 1 has 0.6"),
        "{both}"
    );
}

/// Point 1: etcd dies after the start. Every client measured the whole run and keeps its result
/// on disk; client 0 writes the merge of what it has, naming the client it could not gather; the
/// run is incomplete (exit 3), never lost; `gather` merges the files the clients kept.
#[test]
fn etcd_dying_mid_run_loses_no_measured_result() {
    let mut etcd = etcd();
    let dir = test_dir();
    let out = dir.path().join("run.json");
    let rendezvous = format!("{}/die1", etcd.url());
    let o = out.to_str().unwrap();
    let common = ["--clients", "2", "--duration", "3s", "-o", o];
    let began = Instant::now();
    let c1 = rendezvous_client(&rendezvous, "1", &common);
    let c0 = rendezvous_client(&rendezvous, "0", &common);
    assert!(
        within(Duration::from_secs(20), || !etcd_get(
            &etcd,
            "/die1/run/start"
        )
        .is_empty()),
        "the clients never started"
    );
    std::thread::sleep(Duration::from_millis(1000));
    etcd.process.kill();
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    // Duration 3 s, grace 1 s: within the margin of a minute, whatever etcd did.
    assert!(
        began.elapsed() < Duration::from_secs(3 + 1 + 60),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(o1.status.code(), Some(3), "{}", stderr(&o1));
    assert!(stderr(&o1).contains("INCOMPLETE"), "{}", stderr(&o1));
    assert!(stderr(&o1).contains("result kept at"), "{}", stderr(&o1));
    assert_eq!(o0.status.code(), Some(3), "{}", stderr(&o0));
    let kept: Vec<serde_json::Value> = (0..2)
        .map(|i| json(&dir.path().join(format!("run.client-{i}.json"))))
        .collect();
    for (i, k) in kept.iter().enumerate() {
        assert_eq!(k["phases"][0]["ended_by"], "duration", "client {i}");
        assert!(u(&k["phases"][0]["totals"]["ok"]) > 0, "client {i}");
    }
    let merged = json(&out);
    let missing = merged["distributed"]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0]["index"], 1);
    assert!(
        missing[0]["reason"].as_str().unwrap().contains("broke"),
        "{missing:?}"
    );
    // The files the clients kept make the whole run.
    let gathered = dir.path().join("gathered.json");
    let o = scalebench(&[
        "gather",
        dir.path().join("run.client-0.json").to_str().unwrap(),
        dir.path().join("run.client-1.json").to_str().unwrap(),
        "-o",
        gathered.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let g = json(&gathered);
    assert_eq!(u(&g["phases"][0]["clients"]), 2);
    assert_eq!(
        u(&g["phases"][0]["totals"]["ok"]),
        u(&kept[0]["phases"][0]["totals"]["ok"]) + u(&kept[1]["phases"][0]["totals"]["ok"])
    );
}

/// Point 2: a client stopped with SIGSTOP never ends by itself; the launcher's wait is bounded by
/// the run's end plus its grace and a margin, the client is killed and named, the others kept.
#[test]
fn a_stopped_client_is_killed_at_the_deadline_and_named_missing() {
    let dir = test_dir();
    let out = dir.path().join("k.json");
    let launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "--db",
            "null://",
            "--duration",
            "2s",
            "--grace",
            "1s",
        ])
        .args([
            "--clients",
            "3",
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    assert!(within(Duration::from_secs(20), || children_of(
        launcher.id()
    )
    .len()
        == 3));
    std::thread::sleep(Duration::from_millis(1000));
    let victim = children_of(launcher.id())[1];
    signal(victim as i32, Signal::SIGSTOP);
    let o = launcher.wait_with_output().unwrap();
    // 2 s, grace 1 s, the local margin of 15 s, and the start.
    assert!(
        began.elapsed() < Duration::from_secs(2 + 1 + 15 + 10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let merged = json(&out);
    let missing = merged["distributed"]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0]["reason"]
            .as_str()
            .unwrap()
            .contains("stopped or hung"),
        "{missing:?}"
    );
    assert_eq!(u(&merged["phases"][0]["clients"]), 2);
    assert!(
        !std::path::Path::new(&format!("/proc/{victim}/status")).exists() || {
            let s = std::fs::read_to_string(format!("/proc/{victim}/status")).unwrap_or_default();
            s.contains("State:\tZ")
        }
    );
}

/// Point 2: one Ctrl-C ends a run of local clients with what was measured (exit 130), also when
/// a client is stopped and cannot answer it; and it ends client 0's wait for the others' results
/// in a rendezvous run.
#[test]
fn one_ctrl_c_ends_the_launcher_and_client_0_even_with_a_client_stopped() {
    let dir = test_dir();
    let out = dir.path().join("c.json");
    let launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "--db",
            "null://",
            "--duration",
            "60s",
            "--grace",
            "1s",
        ])
        .args([
            "--clients",
            "3",
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(within(Duration::from_secs(20), || children_of(
        launcher.id()
    )
    .len()
        == 3));
    std::thread::sleep(Duration::from_millis(1000));
    let victim = children_of(launcher.id())[0];
    signal(victim as i32, Signal::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    let interrupted = Instant::now();
    signal(launcher.id() as i32, Signal::SIGINT);
    let o = launcher.wait_with_output().unwrap();
    // Grace 1 s and the stop margin of 5 s.
    assert!(
        interrupted.elapsed() < Duration::from_secs(12),
        "{:?}",
        interrupted.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let merged = json(&out);
    assert_eq!(merged["interrupted"], true);
    assert_eq!(u(&merged["phases"][0]["clients"]), 2);
    let missing = merged["distributed"]["missing"].as_array().unwrap();
    assert!(
        missing[0]["reason"]
            .as_str()
            .unwrap()
            .contains("of the stop"),
        "{missing:?}"
    );

    // Client 0 of a rendezvous run waits for a client that is stopped: Ctrl-C ends that wait.
    let etcd = shared_etcd();
    let rendezvous = format!("{}/wait1", etcd.url());
    let common = ["--clients", "2", "--duration", "2s", "-o"];
    let out = dir.path().join("w.json");
    let mut args: Vec<&str> = common.to_vec();
    args.push(out.to_str().unwrap());
    let mut c1 = rendezvous_client(&rendezvous, "1", &args);
    let c0 = rendezvous_client(&rendezvous, "0", &args);
    assert!(within(Duration::from_secs(20), || !etcd_get(
        etcd,
        "/wait1/run/start"
    )
    .is_empty()));
    std::thread::sleep(Duration::from_millis(700));
    signal(c1.id() as i32, Signal::SIGSTOP);
    // Client 0's run ends at 2 s; then it waits for client 1's result.
    std::thread::sleep(Duration::from_millis(2500));
    let interrupted = Instant::now();
    signal(c0.id() as i32, Signal::SIGINT);
    let o = c0.wait_with_output().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(12),
        "{:?}",
        interrupted.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("INCOMPLETE: client 1"),
        "{}",
        stderr(&o)
    );
    let _ = c1.kill();
    let _ = c1.wait();
}

/// Point 3: the clients die with a launcher killed with SIGKILL, and the directory it left is
/// removed by the next launcher.
#[test]
fn a_killed_launcher_takes_its_clients_and_their_files_with_it() {
    let tmp = test_dir();
    let launcher = |duration: &str| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(["run", "--db", "null://", "--duration", duration])
            .args(["--clients", "2", "--no-monitor"])
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut first = launcher("30s");
    assert!(within(Duration::from_secs(20), || children_of(first.id())
        .len()
        == 2));
    let clients = children_of(first.id());
    std::thread::sleep(Duration::from_millis(500));
    first.kill().unwrap();
    let _ = first.wait();
    let gone = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_or(true, |s| s.contains("State:\tZ"))
    };
    assert!(
        within(Duration::from_secs(5), || clients.iter().all(|p| gone(*p))),
        "the clients of a killed launcher still run"
    );
    let client_dirs = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("scalebench-clients-")
            })
            .count()
    };
    assert_eq!(client_dirs(), 1, "the killed launcher's directory is left");
    let o = launcher("1s").wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(client_dirs(), 0, "the stale directory is removed");
}

/// Point 4: clients of one run started unlike each other (another duration, another number of
/// clients) are refused at the barrier before anything runs (exit 2, naming the field), and
/// `merge` refuses results of runs defined differently.
#[test]
fn clients_started_unlike_each_other_are_refused_before_anything_runs() {
    let etcd = shared_etcd();
    let dir = test_dir();
    for (prefix, a, b, field) in [
        (
            "differ1",
            ["--clients", "2", "--duration", "2s"],
            ["--clients", "2", "--duration", "14s"],
            "duration",
        ),
        (
            "differ2",
            ["--clients", "2", "--duration", "2s"],
            ["--clients", "3", "--duration", "2s"],
            "clients",
        ),
    ] {
        let rendezvous = format!("{}/{prefix}", etcd.url());
        let out = dir.path().join(format!("{prefix}.json"));
        let mut args0 = a.to_vec();
        args0.extend(["--start-timeout", "10s", "-o", out.to_str().unwrap()]);
        let mut args1 = b.to_vec();
        args1.extend(["--start-timeout", "10s"]);
        let began = Instant::now();
        let c0 = rendezvous_client(&rendezvous, "0", &args0);
        let c1 = rendezvous_client(&rendezvous, "1", &args1);
        for (i, c) in [c0, c1].into_iter().enumerate() {
            let o = c.wait_with_output().unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{prefix} client {i}: {err}");
            assert!(
                err.contains(field) && err.contains("nothing ran"),
                "{prefix} client {i}: {err}"
            );
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "refused at the barrier, not at its timeout"
        );
        assert!(!out.exists());
    }
    // merge: clients of two runs of different durations.
    let run = |duration: &str, name: &str| {
        let out = dir.path().join(name);
        let o = scalebench(&[
            "run",
            "--db",
            "null://",
            "--clients",
            "2",
            "--duration",
            duration,
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run("1s", "a.json");
    run("2s", "b.json");
    let o = scalebench(&[
        "merge",
        dir.path().join("a.client-0.json").to_str().unwrap(),
        dir.path().join("b.client-1.json").to_str().unwrap(),
        "-o",
        dir.path().join("m.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("duration"), "{}", stderr(&o));
}

/// Point 5: a client that really began late (stopped between joining and the start) is named in
/// the merged result's warnings, with how late it began.
#[test]
fn a_client_that_began_late_is_named_in_the_merged_result() {
    let etcd = shared_etcd();
    let dir = test_dir();
    let out = dir.path().join("late.json");
    let rendezvous = format!("{}/late1", etcd.url());
    let args = [
        "--clients",
        "2",
        "--duration",
        "2s",
        "-o",
        out.to_str().unwrap(),
    ];
    let c1 = rendezvous_client(&rendezvous, "1", &args);
    assert!(within(Duration::from_secs(20), || !etcd_get(
        etcd,
        "/late1/run/joined/1"
    )
    .is_empty()));
    signal(c1.id() as i32, Signal::SIGSTOP);
    let c0 = rendezvous_client(&rendezvous, "0", &args);
    assert!(within(Duration::from_secs(20), || !etcd_get(
        etcd,
        "/late1/run/start"
    )
    .is_empty()));
    std::thread::sleep(Duration::from_millis(1500));
    signal(c1.id() as i32, Signal::SIGCONT);
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    assert!(o1.status.success(), "{}", stderr(&o1));
    assert!(o0.status.success(), "{}", stderr(&o0));
    let merged = json(&out);
    let warnings = merged["distributed"]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("client 1 began the run phase") && w.contains("after the agreed start")
        }),
        "{warnings:?}"
    );
}

/// Point 10: values read from etcd are input: a number of clients no run can have is refused.
#[test]
fn gather_refuses_a_number_of_clients_no_run_has() {
    let etcd = shared_etcd();
    let o = Command::new("etcdctl")
        .args([
            &format!("--endpoints=127.0.0.1:{}", etcd.port),
            "put",
            "/h1/run/clients",
            "4294967295",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let dir = test_dir();
    let o = scalebench_within(
        &[
            "gather",
            "--rendezvous",
            &format!("{}/h1", etcd.url()),
            "-o",
            dir.path().join("g.json").to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("'4294967295'"), "{}", stderr(&o));
}

/// `--hdr-log` with clients (issue 41, point 5): each client writes its own interval logs under
/// DIR/client-I, the launcher the merged ones in DIR; `merge-logs` of the clients' logs gives the
/// same intervals; HdrHistogram's HistogramLogProcessor reads the merged log and counts the merged
/// result's operations of the window.
#[test]
fn each_client_writes_its_hdr_logs_and_the_merged_ones_equal_merge_logs() {
    let dir = test_dir();
    let (out, logs) = (dir.path().join("run.json"), dir.path().join("hdr"));
    let o = scalebench(&[
        "run",
        "--db",
        "null://",
        "--clients",
        "2",
        "--target",
        "2000",
        "--duration",
        "2s",
        "--no-monitor",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--hdr-log",
        logs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "client-0/run-READ.hlog",
        "client-1/run-READ.hlog",
        "run-READ.hlog",
    ] {
        assert!(logs.join(f).is_file(), "no {f}");
    }
    let merged_here = dir.path().join("merged.hlog");
    let m = scalebench(&[
        "merge-logs",
        logs.join("client-0/run-READ.hlog").to_str().unwrap(),
        logs.join("client-1/run-READ.hlog").to_str().unwrap(),
        "-o",
        merged_here.to_str().unwrap(),
    ]);
    assert!(m.status.success(), "{}", stderr(&m));
    let intervals = |p: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("\"StartTimestamp\""))
            .map(str::to_string)
            .collect()
    };
    let launcher = intervals(&logs.join("run-READ.hlog"));
    assert!(launcher.len() >= 2, "{launcher:?}");
    assert_eq!(intervals(&merged_here), launcher);

    let summary = hdr_log_summary(&merged_here, dir.path());
    let total = summary.field("Total count") as u64;
    let result = json(&out);
    let in_window: u64 = result["phases"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|iv| iv["start_s"].as_f64().unwrap() < 2.0)
        .map(|iv| iv["operations"]["READ"]["ok"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(total, in_window, "{}", summary.0);
}

/// Issue 41, point 4: an experiment cell whose clients start over ssh (`[procedure.clients]
/// launcher = "ssh"`, two "hosts", both this machine's sshd) and meet in etcd under a prefix of
/// the run's own; the cell's result is the merged one.
#[test]
fn an_experiment_cell_runs_from_clients_started_over_ssh() {
    let sshd = sshd::LocalSshd::start();
    let etcd = shared_etcd();
    let server = redis();
    let dir = test_dir();
    let file = dir.path().join("ssh-clients.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "ssh-clients"
[procedure]
load = "once"
duration = "1s"
options = {{ no_monitor = true, threads = 1 }}
[procedure.clients]
launcher = "ssh"
hosts = ["127.0.0.1", "localhost"]
rendezvous = "{}/experiment"
ssh_command = "{}"
remote_program = "{}"
[[database]]
name = "redis"
db = "{}"
[[workload]]
name = "b"
workload = "b"
properties = {{ recordcount = 500 }}
[sweep]
clients = [2]
"#,
            etcd.url(),
            sshd.ssh_command(),
            env!("CARGO_BIN_EXE_scalebench"),
            server.url()
        ),
    )
    .unwrap();
    let (o, results) = experiment_in(dir.path(), &file);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = rusqlite::Connection::open(&results).unwrap();
    let (status, result): (String, String) = db
        .query_row("SELECT status, result FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "ok");
    let r: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert_eq!(r["distributed"]["launcher"], "ssh", "{r}");
    let run = r["phases"].as_array().unwrap().last().unwrap();
    assert_eq!(u(&run["clients"]), 2);
    assert!(u(&run["totals"]["ok"]) > 0);

    // A launcher without what it needs is refused when the file is read; so is an elastic
    // experiment with clients elsewhere (its launcher follows their every request set).
    for (name, from, to, named) in [
        (
            "bad.toml",
            "hosts = [\"127.0.0.1\", \"localhost\"]\n",
            "",
            "needs hosts",
        ),
        (
            "elastic.toml",
            "[procedure]\n",
            "[procedure]\nmeasure = \"elastic\"\n",
            "runs its clients on this machine",
        ),
    ] {
        let changed = dir.path().join(name);
        let text = std::fs::read_to_string(&file).unwrap().replace(from, to);
        std::fs::write(&changed, text).unwrap();
        let (o, _) = experiment_in(dir.path(), &changed);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(named), "{}", stderr(&o));
    }
}

/// Issue 41, point 6: the probe from two clients on a Redis whose reads go to an asynchronous
/// replica: the writer (client 0, with its readers) tells the other client each acknowledgement
/// through the launcher; that client's readers follow it on their own clock, mapped with the
/// clocks' offsets (estimated at the start, NTP's way); the result holds both, with the offset and
/// its uncertainty, and the independent checker counts the stale reads of the merged history as
/// the two probes did together.
#[test]
fn the_probe_reads_from_a_second_client_on_a_replica() {
    use scalebench_deploy::redis::info_field;
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    let primary = redis();
    let of = format!("127.0.0.1 {}", primary.port);
    let replica = RedisServer::start(&base, &[("replicaof", of.as_str())], false, true)
        .expect("the replica starts");
    assert!(within(Duration::from_secs(30), || {
        info_field(replica.port, "replication", "master_link_status").as_deref() == Some("up")
    }));
    let dir = test_dir();
    let url = primary.url();
    let workload = [
        "-p",
        "recordcount=300",
        "-p",
        "readproportion=0.5",
        "-p",
        "updateproportion=0.5",
    ];
    let mut load = vec!["load", "a", "--db", &url, "-p", "redis.wait_replicas=1"];
    load.extend_from_slice(&workload);
    let o = scalebench(&load);
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, history) = (
        dir.path().join("probe.json"),
        dir.path().join("probe.jsonl"),
    );
    let read_hosts = format!("redis.read_hosts=127.0.0.1:{}", replica.port);
    let mut run = vec![
        "run",
        "a",
        "--db",
        &url,
        "-p",
        &read_hosts,
        "--clients",
        "2",
        "--threads",
        "2",
        "--duration",
        "2s",
        "--consistency-probe",
        "200",
        "--history",
        history.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    run.extend_from_slice(&workload);
    let o = scalebench(&run);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("probe readers on client 1 (its clock"),
        "{printed}"
    );
    let phase = &json(&out)["phases"][0];
    let writer = &phase["consistency"];
    let readers = phase["consistency_readers"].as_array().unwrap();
    assert_eq!(readers.len(), 1, "{phase}");
    let r = &readers[0];
    assert_eq!(r["client"], 1);
    let uncertainty = r["clock_uncertainty_us"].as_f64().unwrap();
    assert!(uncertainty > 0.0 && uncertainty < 100_000.0, "{r}");
    assert!(
        r["clock_offset_us"].as_f64().unwrap().abs() <= uncertainty + 1_000.0,
        "one clock here: {r}"
    );
    let c = &r["consistency"];
    // Every write the writer made was followed on the other client too.
    assert_eq!(c["probe_writes"], writer["probe_writes"], "{r}");
    assert!(u(&c["probe_writes"]) >= 100, "{r}");
    let far = c["t_visibility"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(u(&far["samples"]) > 0, "{far}");
    // Issue 61: the reader client's headline stale share is at the first delay at least half of
    // its reads kept (the relay makes its 0 ms reads late), as printed below its heading.
    let headline = printed
        .split("probe readers on client 1")
        .nth(1)
        .and_then(|s| s.lines().find(|l| l.starts_with("  stale share: ")))
        .unwrap_or_else(|| panic!("{printed}"));
    let delay: f64 = headline
        .split(" of the reads ")
        .nth(1)
        .and_then(|s| s.split(" ms after").next())
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{headline}"));
    let kept = c["t_visibility"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["delay_ms"].as_f64() == Some(delay))
        .unwrap();
    assert!(
        u(&kept["samples"]) >= u(&kept["missed"]),
        "{headline}: {kept}"
    );
    for earlier in c["t_visibility"].as_array().unwrap() {
        if earlier["delay_ms"].as_f64().unwrap() < delay {
            assert!(
                u(&earlier["samples"]) < u(&earlier["missed"]) || u(&earlier["samples"]) == 0,
                "{headline}: {earlier}"
            );
        }
    }
    // Each client's own clock offset is in its result.
    let client = json(&dir.path().join("probe.client-1.json"));
    assert!(
        client["client"]["clock"]["uncertainty_ns"]
            .as_u64()
            .is_some(),
        "{}",
        client["client"]
    );
    let stale = u(&writer["stale_reads"]) + u(&c["stale_reads"]);
    assert!(stale > 0, "no stale read on the replica: {writer} {c}");
    let checked = history_check(&history, dir.path());
    assert_eq!(
        u(&checked["reads"]),
        u(&writer["probe_reads"]) + u(&c["probe_reads"]),
        "{checked}"
    );
    assert_eq!(u(&checked["stale_reads"]), stale, "{checked}");
    assert_eq!(checked["linearizable"], "no", "{checked}");
}

/// Issue 42: `--verify-writes` from two clients. Each updates only its residue of the 100 records
/// (key numbers i mod 2) and its own insert section, so no write of the other client contradicts
/// its record: without the partition, a key updated by client 0 and later by client 1 reads back
/// as client 1's value, which client 0's record calls lost. Each client verifies exactly its 50
/// records and its inserts; the merged result adds the two passes.
#[test]
fn two_clients_verify_their_writes_each_on_keys_of_its_own() {
    let server = redis();
    let url = server.url();
    let dir = test_dir();
    let props = [
        "-p",
        "recordcount=100",
        "-p",
        "requestdistribution=uniform",
        "-p",
        "readproportion=0.3",
        "-p",
        "updateproportion=0.5",
        "-p",
        "insertproportion=0.2",
        "--no-monitor",
        "-q",
    ];
    let o = scalebench(&[&["load", "a", "--db", &url][..], &props].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.path().join("run.json");
    let o = scalebench(
        &[
            &[
                "run",
                "a",
                "--db",
                &url,
                "--threads",
                "2",
                "--operations",
                "4000",
                "--clients",
                "2",
                "--verify-writes",
                "-o",
                run.to_str().unwrap(),
            ][..],
            &props,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut checked = 0;
    for i in 0..2 {
        let c = json(&dir.path().join(format!("run.client-{i}.json")));
        let phase = &c["phases"][0];
        let inserted = u(&phase["operations"]["INSERT"]["ok"]);
        let lost = &phase["lost_writes"];
        assert_eq!(u(&lost["checked"]), 50 + inserted, "client {i}: {lost}");
        assert_eq!(u(&lost["lost"]), 0, "client {i}: {lost}");
        checked += u(&lost["checked"]);
    }
    let merged = &json(&run)["phases"][0]["lost_writes"];
    assert_eq!(u(&merged["checked"]), checked, "{merged}");
    assert_eq!(u(&merged["lost"]), 0, "{merged}");
    assert!(merged.get("error").is_none(), "{merged}");
}

#[path = "distributed/no_password_in_argv.rs"]
mod no_password_in_argv;
#[path = "distributed/replay.rs"]
mod replay;
