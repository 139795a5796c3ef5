//! Issue 63: no password in the argv of any process a run with clients starts, and redis-cli's
//! REDISCLI_AUTH, against a Redis with requirepass; the clients log as their launcher does.

use super::*;

/// Every process descended from `root` now: pid and its command line (NULs as spaces).
fn descendants(root: u32) -> Vec<(u32, String)> {
    scalebench_deploy::process::descendants(root as i32)
        .into_iter()
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            Some((pid as u32, String::from_utf8_lossy(&raw).replace('\0', " ")))
        })
        .collect()
}

/// Issue 63: a password in the database URL reaches no process's argv. The URL comes from
/// SCALEBENCH_DB, the two client processes get it on their stdin; every process the launcher
/// starts is read in /proc while it lives, and the run authenticates against a Redis with
/// requirepass (every insert acknowledged).
#[test]
fn no_process_of_a_run_with_clients_has_the_password_in_its_argv() {
    let server = redis();
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let password = "argv-must-not-show-7f3a";
    let set = Command::new("redis-cli")
        .args(["-p", &port, "CONFIG", "SET", "requirepass", password])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&set.stdout).contains("OK"));
    let dir = test_dir();
    let result = dir.path().join("run.json");
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "a",
            "--clients",
            "2",
            "--threads",
            "1",
            "--duration",
            "2s",
        ])
        .args(["--target", "200", "--no-monitor", "-o"])
        .arg(&result)
        .args(["-p", "readproportion=0", "-p", "updateproportion=0"])
        .args(["-p", "insertproportion=1"])
        .env(
            "SCALEBENCH_DB",
            format!("redis://:{password}@127.0.0.1:{port}"),
        )
        .env("SCALEBENCH_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let own = std::fs::read(format!("/proc/{}/cmdline", launcher.id())).unwrap();
    assert!(!String::from_utf8_lossy(&own).contains(password));
    let mut seen = std::collections::BTreeMap::new();
    let began = Instant::now();
    while launcher.try_wait().unwrap().is_none() && began.elapsed() < Duration::from_secs(60) {
        seen.extend(descendants(launcher.id()));
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = launcher.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(seen.len() >= 2, "the two clients were seen: {seen:?}");
    for (pid, cmdline) in &seen {
        assert!(!cmdline.contains(password), "process {pid}: {cmdline}");
    }
    let merged = json(&result);
    let totals = &merged["phases"][0]["totals"];
    assert!(u(&totals["ok"]) > 0, "{totals}");
    assert_eq!(u(&totals["failed"]), 0, "{totals}");
    assert!(!std::fs::read_to_string(&result).unwrap().contains(password));

    // redis-cli's REDISCLI_AUTH: the password for a URL that has none.
    let url = format!("redis://127.0.0.1:{port}");
    let load = |auth: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        cmd.args([
            "load",
            "a",
            "--db",
            &url,
            "--no-monitor",
            "-p",
            "recordcount=10",
        ])
        .env("SCALEBENCH_STATE_DIR", dir.path().join("state"))
        .env_remove("REDISCLI_AUTH")
        .stdin(Stdio::null());
        if let Some(a) = auth {
            cmd.env("REDISCLI_AUTH", a);
        }
        cmd.output().unwrap()
    };
    let refused = load(None);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let o = load(Some(password));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `-vv` is the launcher's: its client processes log as it does (their lines relayed with their
/// index), where before only the launcher logged. etcd's client (tonic, h2) logs at debug.
#[test]
fn the_launchers_verbosity_reaches_its_clients() {
    let etcd = shared_etcd();
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "load",
            "a",
            "--db",
            &etcd.url(),
            "--clients",
            "2",
            "-vv",
            "-q",
        ])
        .args([
            "-p",
            "recordcount=10",
            "-p",
            "table=verbose_clients",
            "--no-monitor",
        ])
        .env_remove("RUST_LOG")
        .env("SCALEBENCH_STATE_DIR", test_dir().path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for client in ["client 0: ", "client 1: "] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(client) && l.contains(" DEBUG ")),
            "no debug line from {client}: {err}"
        );
    }
}
