//! `--metrics-listen`: a real HTTP client scrapes /metrics during a run and an experiment, and the
//! figures agree with the result file.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;
use common::*;

/// Starts scalebench with `args`; returns the child and the metrics URL it announced on stderr
/// (the rest of stderr keeps flowing into the returned channel).
fn start(args: &[&str]) -> (Child, String, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let announced = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the metrics address is announced");
    let url = announced
        .strip_prefix("metrics: ")
        .unwrap_or_else(|| panic!("{announced}"))
        .to_string();
    (child, url, rx)
}

/// The Accept header Prometheus 2.x scrapes with.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// A scrape as Prometheus makes it: OpenMetrics.
fn scrape(url: &str) -> Option<String> {
    scrape_accepting(url, PROMETHEUS_ACCEPT, "application/openmetrics-text")
}

/// A scrape with `accept`, whose answer must be of content type `kind`.
fn scrape_accepting(url: &str, accept: &str, kind: &str) -> Option<String> {
    let mut response = ureq::get(url).header("Accept", accept).call().ok()?;
    let answered = response
        .headers()
        .get("content-type")?
        .to_str()
        .ok()?
        .to_string();
    assert!(answered.starts_with(kind), "{answered}");
    response.body_mut().read_to_string().ok()
}

/// `promtool check metrics` (Debian's prometheus package) on an exposition: its exit code and output.
fn promtool_check(text: &str) -> (bool, String) {
    use std::io::Write;
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed (scripts/test.sh installs Debian's prometheus)");
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = p.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), said)
}

/// The value of the sample line whose name and labels are `series`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn an_open_loop_run_serves_its_live_figures_and_they_match_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let (mut child, url, _stderr) = start(&[
        "run",
        "c",
        "--db",
        "null://",
        "-p",
        "null.capacity_ops_s=2000",
        "--target",
        "400",
        "--duration",
        "5s",
        "--interval",
        "500ms",
        "--metrics-listen",
        "127.0.0.1:0",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let rate_series = r#"scalebench_throughput_ops_per_second{operation="READ"}"#;
    let running = r#"scalebench_running{phase="run",warmup="false"} 1"#;
    let (mut last, mut saw_running, mut plain) = (None, false, None);
    // Scrapes while it runs: bounded in count (at most 20 s).
    for _ in 0..100 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if let Some(text) = scrape(&url) {
            saw_running |= text.lines().any(|l| l == running);
            if value(&text, rate_series).is_some() {
                last = Some(text);
                // Asked for by curl or promtool: Prometheus' text format, lint-clean (issue 31,
                // point 8: promtool used to exit 3 on every scrape).
                if plain.is_none() {
                    plain = scrape_accepting(&url, "*/*", "text/plain; version=0.0.4");
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let text = last.expect("a scrape during the run had the READ rate");
    let plain = plain.expect("a plain scrape during the run");
    let (clean, said) = promtool_check(&plain);
    assert!(clean, "promtool check metrics: {said}\n{plain}");
    assert!(
        plain.contains(r#"scalebench_errors_total{operation="READ",class="timeout"} 0"#),
        "errors at 0 from the start: {plain}"
    );
    assert!(saw_running, "{text}");
    assert!(
        text.contains(
            r#"scalebench_latency_seconds{operation="READ",from="service",percentile="99"}"#
        ),
        "{text}"
    );
    // An open loop: latency from the intended start as well.
    assert!(
        text.contains(
            r#"scalebench_latency_seconds{operation="READ",from="intended",percentile="99"}"#
        ),
        "{text}"
    );
    assert!(value(&text, "scalebench_in_flight").is_some(), "{text}");
    let r = json(&out);
    let phase = &r["phases"][0];
    let total_ok = phase["operations"]["READ"]["ok"].as_f64().unwrap();
    let throughput = phase["operations"]["READ"]["throughput_ops_s"]
        .as_f64()
        .unwrap();
    let live_ok = value(&text, r#"scalebench_operations_total{operation="READ"}"#).unwrap();
    assert!(
        live_ok > 0.0 && live_ok <= total_ok,
        "{live_ok} of {total_ok}"
    );
    // The scraped rate and p99 are one interval's of the result file, exactly.
    let live_rate = value(&text, rate_series).unwrap();
    let live_p99 = value(
        &text,
        r#"scalebench_latency_seconds{operation="READ",from="service",percentile="99"}"#,
    )
    .unwrap();
    let intervals = phase["intervals"].as_array().unwrap();
    assert!(
        intervals.iter().any(|i| {
            let read = &i["operations"]["READ"];
            read["ops_s"]
                .as_f64()
                .is_some_and(|r| (r - live_rate).abs() < 1e-6)
                && read["p99_us"]
                    .as_f64()
                    .is_some_and(|p| (p / 1e6 - live_p99).abs() < 1e-9)
        }),
        "live {live_rate} ops/s, p99 {live_p99} s: no such interval in the result (overall {throughput} ops/s)"
    );
    // The endpoint went with the run.
    assert!(scrape(&url).is_none());
}

/// Issue 32: the consistency probe's counts are served while it runs, and they never pass what the
/// result records at the end.
#[test]
fn the_consistency_probe_counts_are_served_live() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let (mut child, url, _stderr) = start(&[
        "run",
        "--duration",
        "3s",
        "--warmup",
        "0s",
        "--consistency-probe",
        "50",
        "--metrics-listen",
        "127.0.0.1:0",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let mut last = None;
    // Scrapes while it runs: bounded in count (at most 20 s).
    for _ in 0..100 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        // Prometheus' text format, for promtool.
        let plain = scrape_accepting(&url, "*/*", "text/plain; version=0.0.4");
        if let Some(text) =
            plain.filter(|t| value(t, "scalebench_probe_reads_total").is_some_and(|n| n > 0.0))
        {
            last = Some(text);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(child.wait().unwrap().success());
    let text = last.expect("a scrape during the run had probe reads");
    let (clean, said) = promtool_check(&text);
    assert!(clean, "promtool check metrics: {said}\n{text}");
    let c = &json(&out)["phases"][1]["consistency"];
    for (series, field) in [
        ("scalebench_probe_writes_total", "probe_writes"),
        ("scalebench_probe_reads_total", "probe_reads"),
        ("scalebench_probe_stale_reads_total", "stale_reads"),
    ] {
        let live = value(&text, series).unwrap_or_else(|| panic!("no {series}: {text}"));
        assert!(live <= c[field].as_f64().unwrap(), "{series} {live}: {c}");
    }
    assert!(value(&text, "scalebench_probe_writes_total").unwrap() > 0.0);
}

#[test]
fn an_experiment_labels_its_figures_with_the_cell_and_other_paths_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("e.toml");
    std::fs::write(
        &spec,
        "name = \"live\"\nrepetitions = 2\n[procedure]\nwarmup = \"0s\"\nduration = \"3s\"\n\
         [[database]]\nname = \"null\"\ndb = \"null://\"\n\
         [[workload]]\nname = \"c\"\nworkload = \"c\"\nproperties = { recordcount = 100, \"null.capacity_ops_s\" = 1000 }\n",
    )
    .unwrap();
    let results = dir.path().join("r.db");
    let (mut child, url, _stderr) = start(&[
        "experiment",
        spec.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    let other = url.replace("/metrics", "/other");
    assert!(matches!(
        ureq::get(&other).call(),
        Err(ureq::Error::StatusCode(404))
    ));
    let mut cells = std::collections::BTreeSet::new();
    for _ in 0..150 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if let Some(text) = scrape(&url) {
            cells.extend(text.lines().filter_map(|l| {
                let rest = l.strip_prefix("scalebench_running{")?;
                let cell = rest.split("cell=\"").nth(1)?;
                Some(cell.split('"').next()?.to_string())
            }));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(child.wait().unwrap().success());
    assert!(cells.contains("null/default/c #1"), "{cells:?}");
    assert!(cells.contains("null/default/c #2"), "{cells:?}");
}

#[test]
fn a_bad_metrics_address_is_a_usage_error() {
    let o = scalebench(&["run", "--db", "null://", "--metrics-listen", "localhost"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("localhost"), "{}", stderr(&o));
}

/// The saturation search serves `--metrics-listen` too (every command that takes it serves it): its
/// steps publish while it runs.
#[test]
fn a_saturation_search_serves_its_steps_figures() {
    let (mut child, url, _stderr) = start(&[
        "saturate",
        "--db",
        "null://",
        "--start-rate",
        "200",
        "--max-steps",
        "2",
        "--duration",
        "2s",
        "--no-monitor",
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    let running = r#"scalebench_running{phase="run",warmup="false"} 1"#;
    let mut saw_running = false;
    // Scrapes while it runs: bounded in count (at most 10 s).
    for _ in 0..100 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if let Some(text) = scrape(&url) {
            if text.lines().any(|l| l == running) {
                saw_running = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(child.wait().unwrap().success());
    assert!(saw_running, "no scrape saw a step running");
}

/// Threads and open descriptors of process `pid`.
fn threads_and_fds(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|t| t.trim().parse().ok())
        .unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    (threads, fds)
}

/// Issue 28, point 12: hundreds of connections that send half a request cost the endpoint a
/// bounded number of threads and descriptors, scrapes work again once they time out, the run is
/// untouched; /metrics answers with any query, other methods get 405.
#[test]
fn idle_connections_cost_the_endpoint_a_bounded_amount_and_never_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let (mut child, url, _stderr) = start(&[
        "run",
        "--db",
        "null://",
        "--duration",
        "10s",
        "--no-monitor",
        "--metrics-listen",
        "127.0.0.1:0",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let (threads_before, fds_before) = threads_and_fds(child.id());
    let mut idle = Vec::new();
    for _ in 0..600 {
        use std::io::Write;
        if let Ok(mut s) = std::net::TcpStream::connect(&address) {
            let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHo");
            idle.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let (threads, fds) = threads_and_fds(child.id());
    assert!(
        threads <= threads_before + 2,
        "{threads_before} threads became {threads}"
    );
    assert!(
        fds <= fds_before + scalebench_session::metrics::MAX_CONNECTIONS as u64 + 8,
        "{fds_before} descriptors became {fds}"
    );
    // The half-sent requests time out; a scrape is answered while they are still held open.
    let mut answered = false;
    for _ in 0..60 {
        if scrape(&format!("{url}?x=1")).is_some() {
            answered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        answered,
        "no scrape answered while idle connections were held"
    );
    assert!(matches!(
        ureq::post(&url).send_empty(),
        Err(ureq::Error::StatusCode(405))
    ));
    drop(idle);
    // Issue 39, point 5: as many half-sent requests as the endpoint keeps, each reconnected as
    // soon as it is closed, no longer keep a scraper out: a new connection takes the place of the
    // oldest that sent no whole request.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Issue 62: far more of them than the endpoint keeps (4 x 75 against 64), each reconnected as
    // soon as the endpoint closes or resets it.
    let attackers: Vec<_> = (0..4)
        .map(|_| {
            let (stop, address) = (stop.clone(), address.clone());
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let open = |address: &str| {
                    let mut s = std::net::TcpStream::connect(address).ok()?;
                    s.write_all(b"GET /metrics HTTP/1.1\r\nHo").ok()?;
                    s.set_nonblocking(true).ok()?;
                    Some(s)
                };
                let mut held: Vec<std::net::TcpStream> =
                    (0..75).filter_map(|_| open(&address)).collect();
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                while !stop.load(std::sync::atomic::Ordering::Relaxed)
                    && std::time::Instant::now() < deadline
                {
                    for s in &mut held {
                        let mut byte = [0u8; 1];
                        let closed = match s.read(&mut byte) {
                            Ok(n) => n == 0,
                            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
                        };
                        if closed {
                            if let Some(fresh) = open(&address) {
                                *s = fresh;
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let answered = (0..30)
        .filter(|_| {
            std::thread::sleep(Duration::from_millis(50));
            scrape(&format!("{url}?y=1")).is_some()
        })
        .count();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for attacker in attackers {
        attacker.join().unwrap();
    }
    assert_eq!(
        answered, 30,
        "scrapes answered while reconnecting half-sent requests held every slot"
    );
    assert!(child.wait().unwrap().success());
    let r = json(&out);
    assert!(r["phases"][0]["totals"]["ok"].as_u64().unwrap() > 0);
}

/// `--metrics-listen` with `--clients 2` (issue 41, point 5): client I serves its own /metrics at
/// the port + I, every series labelled `client="I"`; the clients' throughputs sum to the run's rate
/// (what the shipped dashboard's `sum by (operation)` shows), and each exposition passes promtool.
#[test]
fn each_client_serves_its_metrics_and_their_rates_sum_to_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    // Two free ports in a row (another process may take one first: the run then fails loudly).
    let port = (20000..60000)
        .step_by(7)
        .find(|p| {
            std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok()
                && std::net::TcpListener::bind(("127.0.0.1", *p + 1)).is_ok()
        })
        .unwrap();
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "--db",
            "null://",
            "--clients",
            "2",
            "--target",
            "2000",
        ])
        .args([
            "--duration",
            "4s",
            "--no-monitor",
            "-q",
            "--metrics-listen",
            &listen,
        ])
        .args(["-o", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = |i: u16| format!("http://127.0.0.1:{}/metrics", port + i);
    let rate = |text: &str, client: u16| -> f64 {
        ["READ", "UPDATE"]
            .iter()
            .filter_map(|op| {
                value(
                    text,
                    &format!(
                        "scalebench_throughput_ops_per_second{{client=\"{client}\",operation=\"{op}\"}}"
                    ),
                )
            })
            .sum()
    };
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = None;
    while std::time::Instant::now() < until && seen.is_none() {
        std::thread::sleep(Duration::from_millis(300));
        let (Some(a), Some(b)) = (scrape(&url(0)), scrape(&url(1))) else {
            continue;
        };
        // Past the first interval, while both run.
        if rate(&a, 0) > 0.0 && rate(&b, 1) > 0.0 && !a.contains("warmup=\"true\"") {
            seen = Some((a, b));
        }
    }
    let (a, b) = seen.expect("both clients served their figures");
    let sum = rate(&a, 0) + rate(&b, 1);
    assert!((1500.0..=2500.0).contains(&sum), "{sum}\n{a}\n{b}");
    for (text, client) in [(&a, "0"), (&b, "1")] {
        let plain = scrape_accepting(&url(client.parse().unwrap()), "text/plain", "text/plain")
            .unwrap_or_else(|| text.to_string());
        let (clean, said) = promtool_check(&plain);
        assert!(clean, "promtool check metrics: {said}\n{plain}");
        assert!(
            text.lines()
                .filter(|l| l.starts_with("scalebench_operations_total"))
                .all(|l| l.contains(&format!("client=\"{client}\""))),
            "{text}"
        );
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(json(&out)["phases"][0]["clients"], 2);
}

/// Issue 44: every query of the shipped Grafana dashboard is PromQL that Prometheus' own parser
/// takes (`promtool check rules` on a rule per query, Grafana's variables given values first),
/// its rates over Grafana's window for the scrape interval, and it has a panel of the probe.
#[test]
fn the_grafana_dashboards_queries_are_promql() {
    let dir = tempfile::tempdir().unwrap();
    let dashboard: serde_json::Value =
        serde_json::from_str(include_str!("../../../docs/grafana-dashboard.json")).unwrap();
    let exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect();
    assert!(exprs.len() >= 8, "{exprs:?}");
    assert!(
        exprs
            .iter()
            .any(|e| e.contains("scalebench_probe_stale_reads_total")),
        "no probe panel"
    );
    for e in exprs.iter().filter(|e| e.contains("rate(")) {
        assert!(e.contains("[$__rate_interval]"), "{e}");
    }
    let mut rules = String::from("groups:\n- name: dashboard\n  rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        let promql = e
            .replace("$__rate_interval", "1m")
            .replace("$instance", ".*");
        rules.push_str(&format!(
            "  - record: dashboard:query{i}\n    expr: '{}'\n",
            promql.replace('\'', "''")
        ));
    }
    let file = dir.path().join("rules.yml");
    std::fs::write(&file, &rules).unwrap();
    let o = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool is installed (scripts/test.sh installs Debian's prometheus)");
    assert!(
        o.status.success(),
        "{}{}\n{rules}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
