//! `saturate` from N clients (issue 41): one client pinned to a core names itself the bound; one and
//! two clients find the same known capacity below it; against a real Redis with a client
//! killed mid-search. The searches share this binary's two cores, so they run one after another in
//! one test each; nothing else in this binary loads the machine.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use scalebench_deploy::redis::RedisServer;

/// One search on the simulated server of `capacity` ops/s; returns its JSON.
/// The searches measure what two cores can do: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn search_null(
    dir: &std::path::Path,
    name: &str,
    capacity: u64,
    args: &[&str],
) -> serde_json::Value {
    let out = dir.join(format!("{name}.json"));
    let capacity = format!("null.capacity_ops_s={capacity}");
    // These unless `args` gives them.
    let defaults: Vec<&str> = [("--factor", "2"), ("--resolution", "5"), ("--p99", "50ms")]
        .into_iter()
        .filter(|(flag, _)| !args.contains(flag))
        .flat_map(|(flag, value)| [flag, value])
        .collect();
    let all = [
        &[
            "saturate",
            "--db",
            "null://",
            "-p",
            &capacity,
            "--concurrency",
            "64",
        ][..],
        &defaults[..],
        args,
        &["-o", out.to_str().unwrap()],
    ]
    .concat();
    let o = scalebench_within(&all, Duration::from_secs(300));
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    json(&out)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `null.capacity_ops_s` far above what one client can start: one client pinned to a core ends
/// client-bound (the database served every operation in time; the client could not start them on
/// time), a lower bound and no interval. Below that client's limit (a third of it), one client and
/// two (the load split) both find the capacity, within 40% below and 6% above. That two clients
/// reach a capacity one cannot is a timing claim about the machine (two
/// clients on a 2-core CI machine reached 0.6 to 1.4 times one): docs/benchmarks.md section 14
/// measures it.
#[test]
fn one_client_names_itself_the_bound_and_two_clients_find_the_capacity_one_finds() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2,
        "two cores are needed: one per client"
    );
    let dir = test_dir();
    // Sections of 200 ms; 2 s steps, so that /proc's 1 s samples see the client's core.
    let one = search_null(
        dir.path(),
        "one",
        100_000_000,
        &[
            "--duration",
            "2s",
            "--warmup",
            "300ms",
            "--interval",
            "200ms",
            "--max-repeats",
            "2",
            "--client-cpus",
            "0",
            "--start-rate",
            "300000",
        ],
    );
    let answer = &one["answer"];
    assert_eq!(answer["ended_by"], "client-bound", "{one}");
    assert!(
        answer["bracket_high_ops_s"].is_null(),
        "a lower bound only: {one}"
    );
    assert!(
        one["stopped_by"].as_str().unwrap().contains("add clients")
            && one["stopped_by"]
                .as_str()
                .unwrap()
                .contains("cpu of client"),
        "{one}"
    );
    let last = one["steps"].as_array().unwrap().last().unwrap();
    assert!(last["client_bound"].is_string(), "{last}");
    // Named with what an operation costs it, and pinned to one core, the client had one.
    assert!(
        one["stopped_by"]
            .as_str()
            .unwrap()
            .contains("us of client CPU per operation"),
        "{one}"
    );
    assert_eq!(last["client_cost"]["cores"], 1, "{last}");
    assert!(f(&last["client_cost"]["cpu_us_per_op"]) > 0.0, "{last}");
    let x1 = f(&answer["rate_ops_s"]);

    // Below one client's limit: the same answer from one and from two clients.
    let low_capacity = (x1 / 3.0) as u64;
    let quick = QUICK_SEARCH;
    let start = format!("{}", low_capacity * 3 / 5);
    let alone = search_null(
        dir.path(),
        "alone",
        low_capacity,
        &[&quick[..], &["--client-cpus", "0", "--start-rate", &start]].concat(),
    );
    // Not pinned: two clients pinned to both cores left the launcher none, and a stall of 50 ms
    // on either failed a step (CI found [0.73, 0.75] of the capacity so).
    let pair = search_null(
        dir.path(),
        "pair",
        low_capacity,
        &[&quick[..], &["--clients", "2", "--start-rate", &start]].concat(),
    );
    assert_eq!(pair["answer"]["clients"], 2, "{pair}");
    for st in pair["steps"].as_array().unwrap() {
        assert_eq!(st["clients"], 2, "{st}");
    }
    let bracket = |s: &serde_json::Value| {
        let a = &s["answer"];
        assert_eq!(a["ended_by"], "resolved", "{s}");
        (f(&a["bracket_low_ops_s"]), f(&a["bracket_high_ops_s"]))
    };
    let ((l1, h1), (l2, h2)) = (bracket(&alone), bracket(&pair));
    // Each bracket holds the capacity within the search's noise (40% below: a 2-core CI machine
    // under load): a distribution that lost or double-counted a client's share would find twice
    // or half it. Not closer: one step failed by a noisy moment ends the bisection below the
    // capacity (on slower CI machines one client found [0.94, 0.975] of it and two [0.86, 0.90],
    // and in another run two clients [0.66, 0.675]; here 1 search pair in 12 lay further apart).
    let c = low_capacity as f64;
    for (l, h) in [(l1, h1), (l2, h2)] {
        assert!(
            l <= 1.06 * c && h >= 0.60 * c,
            "[{l}, {h}] misses the capacity {low_capacity} (one client [{l1}, {h1}], two [{l2}, {h2}])"
        );
    }
}

/// Against simulated servers of known capacity, objectives from 50 ms to 1 s, steps of 2 and 3 s,
/// one client and two: the answer is never more than 1% above the capacity, and the bracket
/// stated holds the capacity or lies below it (issue 61: an overloaded step's queue grew through
/// it and passed a loose objective, the answer 4.3% above the capacity inside a "95%" interval
/// that excluded it). The whole matrix (steps up to 10 s) is docs/benchmarks.md section 21.
#[test]
fn the_answer_is_never_more_than_one_percent_above_a_known_capacity() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = test_dir();
    for (capacity, p99, step, clients) in [
        (2000u64, "200ms", "3s", "1"),
        (2000, "1s", "2s", "2"),
        (1000, "50ms", "2s", "1"),
    ] {
        let name = format!("c{capacity}-{p99}-{step}-{clients}");
        // Near the capacity and small steps: five or six steps bracket it to 2%.
        let start = format!("{}", capacity * 95 / 100);
        let found = search_null(
            dir.path(),
            &name,
            capacity,
            &[
                "--p99",
                p99,
                "--duration",
                step,
                "--clients",
                clients,
                "--start-rate",
                &start,
                "--factor",
                "1.1",
                "--resolution",
                "2",
                "--warmup",
                "300ms",
                "--max-repeats",
                "1",
                "--step-pause",
                "200ms",
                "--no-monitor",
            ],
        );
        let a = &found["answer"];
        let c = capacity as f64;
        let answer = f(&a["rate_ops_s"]);
        assert!(
            answer <= 1.01 * c,
            "{name}: answer {answer} above the capacity {c} by more than 1%: {found}"
        );
        assert_eq!(f(&a["bracket_low_ops_s"]), answer, "{name}");
        // Not trivially low: a search that failed every step near the capacity would be broken too.
        assert!(answer >= 0.5 * c, "{name}: answer {answer}: {found}");
        if let Some(high) = a["bracket_high_ops_s"].as_f64() {
            assert!(high >= answer, "{name}: {found}");
        }
        // Every step above 1% over the capacity failed, and said why.
        for st in found["steps"].as_array().unwrap() {
            if f(&st["offered"]) > 1.01 * c {
                assert_eq!(st["verdict"], "fail", "{name}: {st}");
                let why = st["why"].as_str().unwrap();
                assert!(
                    why.starts_with("cannot keep up") || why.starts_with("not stationary"),
                    "{name}: {st}"
                );
            }
        }
    }
}

/// Against a real Redis: two clients' search ends with a stated answer; a client killed during the
/// second step ends the search with exit 3, the step measured before it kept in the output.
#[test]
fn a_search_from_two_clients_against_redis_answers_and_a_lost_client_ends_it() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = RedisServer::start(&base, &[], false, true).expect("Redis starts");
    let url = server.url();
    let dir = test_dir();
    let props = ["-p", "recordcount=1000", "--no-monitor"];
    let o = scalebench(&[&["load", "--db", &url][..], &props].concat());
    assert!(o.status.success(), "{}", stderr(&o));

    let out = dir.path().join("redis.json");
    let search = [
        // 100 ms: a loaded CI machine measured a p99 of 18 ms at 1,000 ops/s against Redis.
        &["saturate", "--db", &url, "--clients", "2", "--p99", "100ms"][..],
        &[
            "--start-rate",
            "1000",
            "--factor",
            "2",
            "--interval",
            "100ms",
        ],
        &["--max-repeats", "2"],
        &props,
    ]
    .concat();
    let o = scalebench_within(
        &[
            &search[..],
            &[
                "--max-steps",
                "3",
                "--duration",
                "1s",
                "-o",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&out);
    assert!(f(&s["answer"]["rate_ops_s"]) >= 1000.0, "{s}");
    assert_eq!(s["answer"]["clients"], 2);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("answer: ") && text.contains("from 2 clients"),
        "{text}"
    );

    // A client killed in the second step: exit 3 naming it, the first step kept.
    let killed = dir.path().join("killed.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(&search)
        .args(["--max-steps", "6", "--duration", "3s"])
        .args(["-o", killed.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let began = Instant::now();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("step 1:") {
            break;
        }
        assert!(began.elapsed() < Duration::from_secs(60), "{seen}");
    }
    // The second step's clients are this search's children once they have started.
    let mut clients = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while clients.len() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
        clients = children_of(pid);
    }
    assert_eq!(clients.len(), 2, "{seen}");
    std::thread::sleep(Duration::from_millis(1500));
    // A client process this test's search started.
    signal(clients[1] as i32, Signal::SIGKILL);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let all = format!("{seen}{}", rest.join("\n"));
    assert_eq!(status.code(), Some(3), "{all}");
    assert!(all.contains("INCOMPLETE: client 1 of 2"), "{all}");
    let k = json(&killed);
    assert_eq!(k["answer"]["ended_by"], "incomplete", "{k}");
    assert!(k["steps"].as_array().unwrap().len() >= 2, "{k}");
    assert_eq!(k["steps"][0]["verdict"], "pass", "{k}");
}

/// A search client of a rendezvous, its output piped (start timeout 10 s unless `extra` names one).
fn search_client(rendezvous: &str, index: &str, extra: &[&str]) -> std::process::Child {
    let start_timeout = match extra.contains(&"--start-timeout") {
        true => &[][..],
        false => &["--start-timeout", "10s"][..],
    };
    spawn_piped(
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(["saturate", "--db", "null://", "--rendezvous", rendezvous])
            .args(["--clients", "2", "--client-index", index, "--no-monitor"])
            .args(["--start-rate", "1000", "--factor", "2", "--duration", "1s"])
            .args(["--interval", "100ms"])
            .args(start_timeout)
            .args(extra),
    )
}

/// Clients started by Slurm (`srun -n 2 scalebench saturate --rendezvous ...`): client 0 leads,
/// the other follows its orders, client 0 writes the answer. Clients started with different
/// search parameters are refused at the first barrier, naming the parameter; a follower whose
/// leader is killed stops at once with exit 3.
#[test]
fn a_search_from_clients_started_by_slurm_meets_in_etcd() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let slurm = common::slurm::LocalSlurm::start();
    let etcd = etcd_server();
    let dir = test_dir();
    let out = dir.path().join("srun.json");
    let rendezvous = format!("{}/search-1", etcd.url());
    let o = slurm
        .srun()
        .args(["-n", "2", "--overcommit", "--kill-on-bad-exit=0"])
        .arg(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "saturate",
            "--db",
            "null://",
            "-p",
            "null.capacity_ops_s=3000",
        ])
        // Above the capacity the simulated queue grows without bound: 100 ms still separates it
        // (a loaded CI machine measured a p99 of 17 ms at 1,000 ops/s, a third of the capacity).
        .args([
            "--rendezvous",
            &rendezvous,
            "--no-monitor",
            "--p99",
            "100ms",
        ])
        .args([
            "--start-rate",
            "1000",
            "--factor",
            "2",
            "--resolution",
            "20",
        ])
        .args([
            "--duration",
            "1s",
            "--interval",
            "100ms",
            "--max-repeats",
            "1",
        ])
        .args(["-o", out.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&out);
    assert_eq!(s["answer"]["clients"], 2, "{s}");
    assert_eq!(s["answer"]["ended_by"], "resolved", "{s}");
    let rate = f(&s["answer"]["rate_ops_s"]);
    assert!((1000.0..=3200.0).contains(&rate), "{s}");
    assert!(
        stderr(&o).contains("client 0 ended it: bracket within the resolution, 20%"),
        "the follower heard the end: {}",
        stderr(&o)
    );

    // Search parameters differ: refused at the first barrier, nothing measured.
    let rendezvous = format!("{}/search-2", etcd.url());
    let a = search_client(&rendezvous, "0", &["--p99", "20ms"]);
    let b = search_client(&rendezvous, "1", &["--p99", "30ms"]);
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("search p99"), "{}", stderr(&o));
    }

    // The leader killed after its first step: the follower stops within seconds, exit 3.
    let rendezvous = format!("{}/search-3", etcd.url());
    let mut leader = search_client(&rendezvous, "0", &["--max-steps", "8"]);
    let follower = search_client(&rendezvous, "1", &["--max-steps", "8"]);
    let mut lines = BufReader::new(leader.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().starts_with("step 1:") {
            break;
        }
    }
    leader.kill().unwrap();
    let _ = leader.wait();
    let killed = Instant::now();
    let o = follower.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("client 0 of the search"),
        "{}",
        stderr(&o)
    );
    assert!(
        killed.elapsed() < Duration::from_secs(30),
        "{:?}",
        killed.elapsed()
    );

    // A leader that ordered run 1 and died before joining it (its key under a lease nobody
    // renews, written here by etcdctl): the follower's run never starts, and it stops naming the
    // leader gone with exit 3 (a client missing), not 1.
    let endpoint = etcd.url().replace("etcd://", "http://");
    let etcdctl = |args: &[&str]| {
        let o = Command::new("etcdctl")
            .arg(format!("--endpoints={endpoint}"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let granted = etcdctl(&["lease", "grant", "3"]);
    let lease = granted.split_whitespace().nth(1).unwrap().to_string();
    etcdctl(&[
        "put",
        &format!("--lease={lease}"),
        "/search-4/series/leader",
        "1",
    ]);
    etcdctl(&["put", "/search-4/series/1", r#"{"run":{"offered":1000.0}}"#]);
    let rendezvous = format!("{}/search-4", etcd.url());
    let follower = search_client(&rendezvous, "1", &["--start-timeout", "2s"]);
    let o = follower.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("client 0 of the search")
            && stderr(&o).contains("during run 1")
            && stderr(&o).contains("did not join"),
        "{}",
        stderr(&o)
    );
}

/// A JSON Lines capture of `rate(t)` operations per second (t in seconds from its start) over
/// `span_s`, evenly spaced, on 32 sessions: a write of one of 400 keys, then a read of it in the
/// same session (so that it finds it: a read that finds nothing fails, as in `run`).
fn capture(path: &std::path::Path, span_s: f64, rate: impl Fn(f64) -> f64) -> u64 {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let (mut t, mut i) = (0.0f64, 0u64);
    while t < span_s {
        let op = if i % 2 == 0 { "set" } else { "get" };
        writeln!(
            f,
            r#"{{"time": {t:.6}, "session": "c{}", "op": "{op}", "key": "k{}", "value_size": 100}}"#,
            i / 2 % 32,
            i / 2 % 400
        )
        .unwrap();
        t += 1.0 / rate(t);
        i += 1;
    }
    f.flush().unwrap();
    i
}

/// `saturate --replay` against the simulated server of 2,000 ops/s and a p99 objective of
/// 100 ms, two captures of the same mean rate (500 ops/s over 4 s): one flat, which fits 4 times
/// (2,000 / 500), and one at 800 ops/s for 2 s then 200 ops/s, whose peak bounds it. At a speed-up
/// K its peak offers 800 K ops/s for 2 / K s, queueing (800 K - 2,000) x 2 / K operations by its
/// end: 200 of them (100 ms of service) at K = 4,000 / 1,400 = 2.86. Neither answer is more than
/// 5% above its truth (a stall of the client only lowers them), neither below half of it, and the
/// peaked capture's is below the flat one's: a search by the mean rate would give both 4. The flat
/// one is replayed from two client processes, each its sessions.
#[test]
fn a_replay_search_finds_how_many_times_a_capture_fits_a_known_capacity() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = test_dir();
    let mut answers = Vec::new();
    // The flat capture from two client processes (each replays its sessions; the simulated
    // server is fair to them), the peaked one from one.
    let peaked = |t: f64| if t < 2.0 { 800.0 } else { 200.0 };
    for (name, truth, shape, clients) in [
        ("flat", 4.0, &(|_: f64| 500.0) as &dyn Fn(f64) -> f64, "2"),
        ("peaked", 4000.0 / 1400.0, &peaked, "1"),
    ] {
        let file = dir.path().join(format!("{name}.jsonl"));
        let ops = capture(&file, 4.0, shape);
        assert!((1999..=2001).contains(&ops), "{name}: {ops}");
        let found = search_null(
            dir.path(),
            name,
            2000,
            &[
                "--replay",
                file.to_str().unwrap(),
                "--p99",
                "100ms",
                "--resolution",
                "3",
                "--max-repeats",
                "1",
                "--step-pause",
                "200ms",
                "--no-monitor",
                "--clients",
                clients,
            ],
        );
        let n: u64 = clients.parse().unwrap();
        assert_eq!(found["answer"]["clients"].as_u64(), Some(n), "{name}");
        let r = &found["replay"];
        // 2,000 operations over 4 s.
        assert!((f(&r["captured_ops_s"]) - 500.0).abs() < 1.0, "{name}: {r}");
        let speed = f(&r["speed"]);
        assert!(
            speed <= 1.05 * truth,
            "{name}: x{speed} above x{truth}: {found}"
        );
        assert!(speed >= 0.5 * truth, "{name}: x{speed}: {found}");
        assert_eq!(f(&r["bracket_low_speed"]), speed, "{name}");
        assert!(f(&r["bracket_high_speed"]) > speed, "{name}: {found}");
        // The speed-ups are the rate search's rates over the capture's.
        let rate = f(&found["answer"]["rate_ops_s"]);
        assert!(
            (rate / f(&r["captured_ops_s"]) - speed).abs() < 1e-9,
            "{name}"
        );
        // Every step well above the truth failed.
        for st in found["steps"].as_array().unwrap() {
            if f(&st["offered"]) / f(&r["captured_ops_s"]) > 1.05 * truth {
                assert_ne!(st["verdict"], "pass", "{name}: {st}");
            }
        }
        answers.push(speed);
    }
    assert!(
        answers[1] < answers[0],
        "peaked x{} flat x{}",
        answers[1],
        answers[0]
    );

    // What a replay sets itself, and options without --replay, are refused before anything runs.
    let file = dir.path().join("flat.jsonl");
    let file = file.to_str().unwrap();
    for (args, named) in [
        (&["--replay", file, "--duration", "2s"][..], "--duration"),
        (&["--replay", file, "--threads-search"], "--threads-search"),
        (&["--keys", "x2"], "--keys"),
    ] {
        let o = scalebench(&[&["saturate", "--db", "null://", "--no-monitor"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(named), "{args:?}: {}", stderr(&o));
    }
}

/// `saturate --replay` on a real Redis: a capture of 2,000 ops/s over 3 s replayed at x1, x3 and
/// x9 against a p99 objective of 100 ms: the search answers with a speed-up of at least x1 (a
/// loaded CI machine measured a p99 of 18 ms at 1,000 ops/s against Redis), says how many times
/// the capture fits, and its writes are in the Redis (the capture's 400 keys, no more).
#[test]
fn a_replay_search_against_redis_answers_in_speed_ups_of_its_capture() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = RedisServer::start(&base, &[], false, true).expect("Redis starts");
    let dir = test_dir();
    let file = dir.path().join("capture.jsonl");
    capture(&file, 3.0, |_| 2000.0);
    let out = dir.path().join("redis-replay.json");
    let url = server.url();
    let o = scalebench_within(
        &[
            "saturate",
            "--db",
            &url,
            "--replay",
            file.to_str().unwrap(),
            "--p99",
            "100ms",
            "--factor",
            "3",
            "--max-steps",
            "3",
            "--max-repeats",
            "1",
            "--step-pause",
            "200ms",
            "--concurrency",
            "32",
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let found = json(&out);
    let r = &found["replay"];
    assert!(f(&r["speed"]) >= 1.0, "{found}");
    assert!((f(&r["captured_ops_s"]) - 2000.0).abs() < 2.0, "{r}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fits ") && text.contains(" times ("),
        "{text}"
    );
    let keys = Command::new("redis-cli")
        .args(["-p", &server.port.to_string(), "dbsize"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&keys.stdout).trim(), "400");
}
