//! The binary against a real PostgreSQL server: schema flags, and no password anywhere.

use std::process::{Command, Stdio};

use scalebench_deploy::postgres::{PostgresServer, PASSWORD};

#[test]
fn postgres_through_the_cli_never_shows_the_password() {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    let server = PostgresServer::start(&base, &[], true).expect("PostgreSQL starts");
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };

    // Without --create-schema, a missing table is a clear error (exit 1), password-free.
    let missing = run(&["load", "--db", &url, "-p", "recordcount=100"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("--create-schema") && !err.contains(PASSWORD),
        "{err}"
    );

    let loaded = run(&[
        "run",
        "--load",
        "--create-schema",
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--operations",
        "2000",
        "-p",
        &format!("postgres.password_note={PASSWORD}"),
        "--output",
        out.to_str().unwrap(),
    ]);
    // An unknown binding option is bad input: exit 2, and still no password in the message.
    assert_eq!(loaded.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&loaded.stderr).contains(PASSWORD));
    assert!(!out.exists());

    let ok = run(&[
        "run",
        "--load",
        "--create-schema",
        "--drop-schema",
        "--db",
        &url,
        "-p",
        "recordcount=500",
        "--operations",
        "2000",
        "-p",
        "postgres.batch_mode=copy",
        "--batch-size",
        "100",
        "--output",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let stdout = String::from_utf8_lossy(&ok.stdout);
    let stderr = String::from_utf8_lossy(&ok.stderr);
    let file = std::fs::read_to_string(&out).unwrap();
    for (what, text) in [
        ("stdout", &*stdout),
        ("stderr", &*stderr),
        ("result file", &*file),
    ] {
        assert!(!text.contains(PASSWORD), "password in {what}");
    }
    let r: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert!(r["parameters"]["db"].as_str().unwrap().contains("***"));
    assert_eq!(r["phases"][0]["totals"]["records"], 500);
    assert_eq!(r["phases"][1]["totals"]["ok"], 2000);
    assert_eq!(r["phases"][1]["totals"]["failed"], 0);
}

/// A PostgreSQL primary with a synchronous replica, driven from the command line: `cluster up`,
/// `load`/`run --deployment` with space in the result, `status` without the password, `down`.
#[test]
fn a_deployment_through_the_cli_records_space_and_hides_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let clusters = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-clusters");
    let file = dir.path().join("pg.toml");
    std::fs::write(
        &file,
        "name = \"cli-pg\"\ndatabase = \"postgres\"\nnodes = 2\n\
         [postgres]\nsynchronous_commit = \"remote_apply\"\nreads_to_replicas = true\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let c = clusters.to_str().unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(args)
            .env("SCALEBENCH_CLUSTERS_DIR", c)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !text.contains(PASSWORD),
            "{args:?} shows the password:\n{text}"
        );
        (o.status.code(), text)
    };
    let _ = run(&["cluster", "down", f]);
    let (code, text) = run(&["cluster", "up", f]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("primary") && text.contains("replica"),
        "{text}"
    );

    let load_out = dir.path().join("load.json");
    let (code, text) = run(&[
        "load",
        "--deployment",
        f,
        "--create-schema",
        "-p",
        "recordcount=1000",
        "-o",
        load_out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("compact: node1: VACUUM ANALYZE"), "{text}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&load_out).unwrap()).unwrap();
    assert_eq!(r["deployment"]["name"], "cli-pg");
    assert_eq!(r["deployment"]["nodes"], 2);
    let space = &r["phases"][0]["space"];
    assert_eq!(space["taken"], "after load");
    assert_eq!(space["records"], 1000);
    assert_eq!(space["nodes"].as_array().unwrap().len(), 2);
    let total = space["total_bytes"].as_u64().unwrap();
    assert!(total > 2 * 1000 * 1000, "{space}");
    assert!(space["bytes_per_record"].as_f64().unwrap() > 2000.0);
    assert!(!std::fs::read_to_string(&load_out)
        .unwrap()
        .contains(PASSWORD));

    let run_out = dir.path().join("run.json");
    let (code, text) = run(&[
        "run",
        "c",
        "--deployment",
        f,
        "-p",
        "recordcount=1000",
        "--duration",
        "2s",
        "-o",
        run_out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{text}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_out).unwrap()).unwrap();
    assert_eq!(r["phases"][0]["space"]["taken"], "after run");
    // The deployment's binding option (reads to the replica) is among the run's properties.
    assert!(r["parameters"]["properties"]["postgres.read_hosts"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1:"));

    let (code, text) = run(&["cluster", "status", f, "--json"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("postgres://bench:***@"), "{text}");
    let (code, text) = run(&["cluster", "space", f, "--records", "1000"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("bytes per record"), "{text}");
    let (code, _) = run(&["cluster", "down", f]);
    assert_eq!(code, Some(0));
    let (code, text) = run(&["run", "--deployment", f, "--duration", "1s"]);
    assert_eq!(
        code,
        Some(1),
        "a stopped cluster is a runtime error: {text}"
    );
    assert!(text.contains("down"), "{text}");
}
