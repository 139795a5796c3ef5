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
    // SAFETY: kill(2) on a child process of the launcher this test started.
    assert_eq!(unsafe { libc::kill(victim as i32, libc::SIGKILL) }, 0);
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
    assert!(
        missing[0]["share"]
            .as_str()
            .unwrap()
            .contains("inserts from key"),
        "{missing:?}"
    );
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
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    scalebench_deploy::etcd::EtcdServer::start(&base, true).expect("etcd starts")
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

fn children_of(pid: u32) -> Vec<u32> {
    let text =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    let mut pids: Vec<u32> = text
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    pids.sort();
    pids
}
