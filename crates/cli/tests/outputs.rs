//! Issue 62: a command's outputs are checked together before any work (writable, of their kind,
//! never one another nor one of the command's inputs; the state directory a result is kept in
//! like `-o`), an output that cannot be written at the end fails the run, and an error about a
//! file of the wrong kind does not quote it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::*;

#[path = "outputs/client_cost.rs"]
mod client_cost;
#[path = "outputs/known_load.rs"]
mod known_load;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Bad input: exit 2 and one line (the error) naming `names`.
fn assert_refused(o: &Output, names: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    for n in names {
        assert!(line.contains(n), "{n} not in: {err}");
    }
}

#[test]
fn outputs_that_are_one_file_or_an_input_are_refused_before_the_run() {
    let dir = test_dir();
    let d = dir.path();
    let x = d.join("x.json");
    let dotted = d.join(".").join("x.json");
    // Before: the page replaced the result, exit 0.
    let o = scalebench(&[
        "run",
        "--db",
        "null://",
        "-o",
        s(&x),
        "--report",
        s(&dotted),
    ]);
    assert_refused(&o, &["-o", "--report", "same file"]);
    assert!(!x.exists(), "nothing runs, nothing is written");
    let o = scalebench(&[
        "saturate",
        "--db",
        "null://",
        "-o",
        s(&x),
        "--report",
        s(&x),
    ]);
    assert_refused(&o, &["-o", "--report", "same file"]);
    // Before: the experiment's page replaced the whole results database.
    let db = d.join("r.db");
    std::fs::write(&db, "kept").unwrap();
    let experiment = d.join("e.toml");
    std::fs::write(
        &experiment,
        "name = \"e\"\n[[database]]\nname = \"n\"\ndb = \"null://\"\n[[workload]]\nname = \"a\"\nworkload = \"a\"\n",
    )
    .unwrap();
    let o = scalebench(&[
        "experiment",
        s(&experiment),
        "--results",
        s(&db),
        "--report",
        s(&db),
    ]);
    assert_refused(&o, &["--results", "--report", "same file"]);
    let o = scalebench(&["experiment", s(&experiment), "--results", s(&experiment)]);
    assert_refused(&o, &["--results", "the experiment file"]);
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "kept");
    // An input written over, also through a symbolic link to it.
    let props = d.join("p.properties");
    std::fs::write(&props, "recordcount=10\n").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&props, &link).unwrap();
    let o = scalebench(&[
        "run",
        "--db",
        "null://",
        "-P",
        s(&props),
        "--report",
        s(&props),
    ]);
    assert_refused(&o, &["--report", "-P", "p.properties"]);
    let o = scalebench(&["report", s(&link), "-o", s(&props)]);
    assert_refused(&o, &["-o", "reads", "the report's input"]);
    assert_eq!(std::fs::read_to_string(&props).unwrap(), "recordcount=10\n");
    // Of the wrong kind: a file where a directory is written, a FIFO where a file is.
    let o = scalebench(&["run", "--db", "null://", "--hdr-log", s(&props)]);
    assert_refused(&o, &["--hdr-log", "not a directory"]);
    let fifo = d.join("fifo.html");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let o = scalebench(&["run", "--db", "null://", "--report", s(&fifo)]);
    assert_refused(&o, &["--report", "fifo.html", "not a regular file"]);
}

/// A run given no -o keeps its result in the state directory: checked as -o is, before the run
/// (before: the run went to its end, warned without a path, exit 0, the result gone).
#[test]
fn a_state_directory_that_cannot_keep_the_result_is_refused_before_the_run() {
    let dir = test_dir();
    let state = dir.path().join("state-file");
    std::fs::write(&state, "").unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            // Bounded by count: a 200 ms window on a loaded machine may issue nothing.
            .args(["run", "--db", "null://", "--operations", "1000"])
            .args(extra)
            .env("SCALEBENCH_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_refused(&o, &[s(&state), "-o"]);
    assert!(o.stdout.is_empty(), "nothing ran");
    // With -o the state directory is not needed.
    let x = dir.path().join("x.json");
    let o = run(&["-o", s(&x)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(x.is_file());
}

/// A history asked for and not written at the end fails the run (exit 1, the path named), the
/// result still written (before: a warning and exit 0).
#[test]
fn a_history_that_cannot_be_written_at_the_end_fails_the_run() {
    let dir = test_dir();
    let d = dir.path();
    let (history, result) = (d.join("h.jsonl"), d.join("x.json"));
    let child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["run", "--load", "-p", "recordcount=50", "--duration", "2s"])
        .args(["--consistency-probe", "20", "--history", s(&history)])
        .args(["-o", s(&result), "-q"])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The history is written to a temporary file beside it as the probe goes: once it is there,
    // a directory planted at the history's path keeps it from being put in place at the end.
    // (The same temporary name seen twice: the check of each output's directory before the run
    // makes and removes one at once.)
    let temporary = || {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(".tmp"))
    };
    let started = std::time::Instant::now();
    let mut seen = None;
    loop {
        let now = temporary();
        if now.is_some() && now == seen {
            break;
        }
        seen = now;
        assert!(started.elapsed().as_secs() < 60, "no history begun");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::fs::create_dir(&history).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: --history") && l.contains("h.jsonl")),
        "{err}"
    );
    assert!(
        json(&result)["phases"].as_array().is_some(),
        "the result is written"
    );
}

/// An error about a file that is not what it should be does not quote it (`--sla /etc/shadow`).
#[test]
fn errors_about_a_file_of_another_kind_do_not_quote_it() {
    let dir = test_dir();
    let shadow = dir.path().join("shadow.toml");
    std::fs::write(&shadow, "root:$6$SECRETHASH:19000:0:99999:7:::\n").unwrap();
    for args in [
        vec!["elastic", "--sla", s(&shadow)],
        vec!["workload", "check", s(&shadow)],
        vec!["run", s(&shadow), "--db", "null://"],
        vec!["experiment", s(&shadow), "--dry-run"],
        vec!["cluster", "up", s(&shadow)],
    ] {
        let o = scalebench(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            !err.contains("SECRETHASH") && !err.contains("root"),
            "{args:?}: {err}"
        );
    }
}
