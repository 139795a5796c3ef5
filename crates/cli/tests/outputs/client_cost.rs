//! Issue 65, item 4: the cost in every result. Truth known: the kernel's own account of the run's
//! process (wait4's rusage, what `time` prints) holds the CPU the window spent, plus the process's
//! start and end; a closed loop on the null binding for 2 s spends far more in the window than
//! around it, so the result's CPU per operation lands within 20% of the process's.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs scalebench to its end and returns its exit status and the CPU seconds (user + system) the
/// kernel accounted to it.
// The child is reaped by wait4 (which gives its rusage), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn run_with_rusage(args: &[&str], state: &Path) -> (std::process::ExitStatus, f64) {
    let child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .env("SCALEBENCH_STATE_DIR", state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 writes the status and the rusage it is given; the pid is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        std::process::ExitStatus::from_raw(status),
        secs(usage.ru_utime) + secs(usage.ru_stime),
    )
}

#[test]
fn a_null_runs_cpu_per_operation_is_the_processs_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let (status, process_cpu_s) = run_with_rusage(
        &[
            "run",
            "--db",
            "null://",
            "--threads",
            "1",
            "--duration",
            "2s",
            "--no-monitor",
            "-o",
            out.to_str().unwrap(),
            "-q",
        ],
        dir.path(),
    );
    assert!(status.success(), "{status:?}");
    let phase = &super::common::json(&out)["phases"][0];
    let cost = &phase["client_cost"];
    let ops = phase["totals"]["ok"].as_u64().unwrap() + phase["totals"]["failed"].as_u64().unwrap();
    assert_eq!(cost["operations"].as_u64(), Some(ops), "{cost}");
    let window_cpu_s =
        cost["cpu_user_s"].as_f64().unwrap() + cost["cpu_system_s"].as_f64().unwrap();
    let per_op_us = cost["cpu_us_per_op"].as_f64().unwrap();
    assert!(
        (per_op_us - window_cpu_s * 1e6 / ops as f64).abs() < 1e-6 * per_op_us,
        "{cost}"
    );
    // The window's CPU is part of the process's, and most of it.
    let process_per_op_us = process_cpu_s * 1e6 / ops as f64;
    assert!(
        window_cpu_s <= process_cpu_s + 0.01 && per_op_us >= 0.8 * process_per_op_us,
        "window {window_cpu_s} s ({per_op_us} us/op), process {process_cpu_s} s ({process_per_op_us} us/op)"
    );
    // No TCP connection on the null binding: no bytes, rather than zero of them.
    assert!(cost.get("bytes_per_op").is_none(), "{cost}");
    assert!(cost["cores"].as_u64().unwrap() >= 1, "{cost}");
}

/// The segments a run's connections carried, per operation (issue 65, item 3). Truth known: a
/// Redis read without pipelining is one request segment and one reply segment, so 2 per operation;
/// with `--pipeline 10` the requests that ten slots of a connection issue together leave in one
/// write (the worker runs its slots outside tokio's budget, which cut a pass over the woken slots
/// after about 60 operations and so split each batch: 0.48 segments per operation before, 0.2
/// after).
#[test]
fn a_redis_runs_segments_per_operation_are_two_alone_and_shared_when_pipelined() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = scalebench_deploy::redis::RedisServer::start(&base, &[], false, true)
        .expect("Redis starts");
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let props = [
        "-p",
        "recordcount=1000",
        "-p",
        "fieldcount=1",
        "-p",
        "fieldlength=100",
        "-p",
        "readallfields=true",
        "-p",
        "readproportion=1",
        "-p",
        "updateproportion=0",
    ];
    let load = [&["load", "--db", url.as_str(), "-q"][..], &props[..]].concat();
    let o = super::common::scalebench(&load);
    assert!(o.status.success(), "{}", super::common::stderr(&o));
    for (concurrency, pipeline, ops, fewest, most) in [
        ("20", "1", "4000", 1.95, 2.05),
        ("500", "10", "50000", 0.1, 0.35),
    ] {
        let out = dir.path().join(format!("p{pipeline}.json"));
        let run = [
            &[
                "run",
                "--db",
                url.as_str(),
                "--threads",
                "1",
                "--concurrency",
                concurrency,
            ][..],
            &[
                "--pipeline",
                pipeline,
                "--operations",
                ops,
                "--no-monitor",
                "-q",
            ],
            &["-o", out.to_str().unwrap()],
            &props[..],
        ]
        .concat();
        let o = super::common::scalebench(&run);
        assert!(o.status.success(), "{}", super::common::stderr(&o));
        let phase = &super::common::json(&out)["phases"][0];
        assert_eq!(phase["totals"]["failed"].as_u64(), Some(0), "{phase}");
        let cost = &phase["client_cost"];
        let per_op = cost["segments_per_op"].as_f64().unwrap();
        assert!(
            (fewest..=most).contains(&per_op),
            "pipeline {pipeline}: {per_op} segments per operation: {cost}"
        );
    }
}
