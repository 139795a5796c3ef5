//! Issue 62: what a workload file may read and what its check refuses, against the binary: the
//! files it names stay in its directory (or one `--allow-files` allows) and only their digest
//! reaches the result; bad values are refused before anything connects (exit 2, one line).

use std::path::Path;

mod common;
use common::*;

fn write_file(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// A record of one text column whose words come from dictionary `file`.
fn dictionary_workload(file: &str) -> String {
    format!(
        "[record]\nrecords = 10\n[[record.column]]\nname = \"w\"\ntype = \"text\"\nlength = 100\n\
         generator.words = {{ file = \"{file}\", min = 1, max = 1 }}\n\
         [run]\nmix = {{ read = 1.0 }}\noperations = 10\n"
    )
}

/// `generator.words.file` naming a file outside the workload file's directory (absolute, `..`, a
/// link out) is refused before the run, exit 2, one line naming it; `--allow-files` opens that
/// directory; the result holds the dictionary's SHA-256 and size, never a word of it.
#[test]
fn a_dictionary_stays_in_its_directory_and_only_its_digest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (w, outside) = (dir.path().join("w"), dir.path().join("outside"));
    std::fs::create_dir(&w).unwrap();
    std::fs::create_dir(&outside).unwrap();
    write_file(&outside.join("secret.txt"), "hunter2-secret\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), w.join("link.txt")).unwrap();
    write_file(&w.join("mine.txt"), "alpha-word\nbeta-word\n");
    let out = dir.path().join("r.json");
    let out_s = out.to_str().unwrap();
    for name in ["../outside/secret.txt", "/etc/hostname", "link.txt"] {
        let file = w.join("bad.toml");
        write_file(&file, &dictionary_workload(name));
        let o = scalebench(&[
            "run",
            file.to_str().unwrap(),
            "--db",
            "null://",
            "-o",
            out_s,
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.lines().count() == 1 && err.contains(name) && err.contains("--allow-files"),
            "{name}: {err}"
        );
        assert!(!out.exists(), "{name}");
    }
    // Allowed, the link is read; the result keeps its digest (`sha256sum`) and size.
    let file = w.join("link.toml");
    write_file(&file, &dictionary_workload("link.txt"));
    let allow = outside.to_str().unwrap();
    let o = scalebench(&[
        "run",
        file.to_str().unwrap(),
        "--db",
        "null://",
        "--allow-files",
        allow,
        "-o",
        out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let result = std::fs::read_to_string(&out).unwrap();
    assert!(!result.contains("hunter2"), "{result}");
    let json: serde_json::Value = serde_json::from_str(&result).unwrap();
    let columns = json["parameters"]["properties"]["columns"]
        .as_str()
        .unwrap_or_else(|| panic!("{json}"));
    let columns: serde_json::Value = serde_json::from_str(columns).unwrap();
    let words = &columns[0]["generator"]["words"];
    assert_eq!(words["file"], "link.txt");
    assert_eq!(
        words["digest"]["sha256"],
        "e38d81978cdda7e35632d49f2dff72c202608602ea8b408fc6d4988a06d29772"
    );
    assert_eq!(words["digest"]["bytes"], 15);
    assert!(words.get("words").is_none(), "{words}");
    // workload check prints no word either; a directory that is not one is refused.
    let o = scalebench(&[
        "workload",
        "check",
        file.to_str().unwrap(),
        "--allow-files",
        allow,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("hunter2"));
    let o = scalebench(&[
        "workload",
        "check",
        file.to_str().unwrap(),
        "--allow-files",
        "/nonexistent-dir",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("'/nonexistent-dir' for '--allow-files'"));
}

/// Issue 62, low 4: a rate profile takes the rates `--target` takes (0.0005 ops/s was accepted by
/// the one, refused by the other); a profile down to 0 ops/s before the window ends is said, in
/// the summary and the result (`schedule.arrivals_ended_s`).
#[test]
fn a_profile_that_runs_out_of_arrivals_is_said() {
    for args in [
        vec![
            "run",
            "--db",
            "null://",
            "--rate-profile",
            "constant:rate=0.0005",
        ],
        vec!["run", "--db", "null://", "--target", "0.0005"],
    ] {
        let o = scalebench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("0.001 to 1e9"), "{}", stderr(&o));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = scalebench(&[
        "run",
        "--db",
        "null://",
        "--rate-profile",
        "ramp:from=200,to=0,over=1s",
        "--duration",
        "2s",
        "--warmup",
        "0s",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(said.contains("ends at 0 ops/s after 1 s"), "{said}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let phases = json["phases"].as_array().unwrap();
    let run = phases.last().unwrap();
    assert_eq!(run["schedule"]["arrivals_ended_s"], 1.0, "{run}");
}

/// Issue 63: `workload check --db URL` prints the warnings `load` prints for the same file and
/// database, before anything connects (the session store's index on Redis, which keeps none;
/// port 1 refuses the load's connection after its warnings).
#[test]
fn a_check_for_a_database_warns_as_its_load_does() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workloads/session-store.toml");
    let file = file.to_str().unwrap();
    let warnings = |o: &std::process::Output| -> Vec<String> {
        stderr(o)
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .map(str::to_string)
            .collect()
    };
    let check = scalebench(&["workload", "check", file, "--db", "redis://127.0.0.1:1"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let load = scalebench(&[
        "load",
        file,
        "--db",
        "redis://127.0.0.1:1",
        "-p",
        "recordcount=10",
    ]);
    assert_eq!(load.status.code(), Some(1), "{}", stderr(&load));
    let said = warnings(&check);
    assert!(
        said.iter()
            .any(|w| w.contains("redis keeps no secondary index: index 'sessions_by_user'")),
        "{said:?}"
    );
    assert_eq!(said, warnings(&load));
    // Without --db nothing is said of a database.
    let plain = scalebench(&["workload", "check", file]);
    assert!(warnings(&plain).is_empty(), "{}", stderr(&plain));
}
