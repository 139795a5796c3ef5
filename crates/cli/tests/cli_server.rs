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
