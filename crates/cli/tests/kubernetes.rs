//! `scalebench kubernetes`: the manifests of a distributed run, compared with golden files
//! (tests/golden/; regenerate one by running the command shown in its test and reviewing the diff).

mod common;

use common::*;

fn manifests(args: &[&str]) -> (String, String) {
    let o = scalebench(args);
    assert!(o.status.success(), "{}", stderr(&o));
    let notes = stderr(&o);
    (String::from_utf8(o.stdout).unwrap(), notes)
}

fn golden(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn an_indexed_job_with_its_own_etcd_and_the_password_in_a_secret() {
    let (yaml, notes) = manifests(&[
        "kubernetes",
        "--name",
        "bench-7",
        "--image",
        "ghcr.io/example/scalebench:0.1",
        "--clients",
        "4",
        "--",
        "run",
        "a",
        "--db",
        "postgres://bench:s3cret@db.example:5432/ycsb",
        "--duration",
        "60s",
        "--threads",
        "8",
        "-p",
        "recordcount=1000000",
    ]);
    assert_eq!(yaml, golden("kubernetes-own-etcd.yaml"));
    assert!(
        !yaml.contains("s3cret") && !notes.contains("s3cret"),
        "{notes}"
    );
    assert!(
        notes.contains("kubectl create secret generic bench-7-secrets --from-literal=arg-3="),
        "{notes}"
    );
}

#[test]
fn an_indexed_job_meeting_in_a_given_etcd() {
    let (yaml, notes) = manifests(&[
        "kubernetes",
        "--name",
        "load-1",
        "--image",
        "scalebench:dev",
        "--clients",
        "2",
        "--rendezvous",
        "etcd://10.0.0.5:2379,10.0.0.6:2379/runs/load-1",
        "--start-timeout",
        "90s",
        "--",
        "load",
        "a",
        "--db",
        "redis://redis.bench:6379",
        "-p",
        "recordcount=100000",
    ]);
    assert_eq!(yaml, golden("kubernetes-given-etcd.yaml"));
    assert!(notes.is_empty(), "{notes}");
}

/// A saturation search from the pods of an Indexed Job: each pod one client, client 0 leading.
#[test]
fn an_indexed_job_runs_a_saturation_search() {
    let (yaml, notes) = manifests(&[
        "kubernetes",
        "--name",
        "knee-1",
        "--image",
        "scalebench:dev",
        "--clients",
        "3",
        "--",
        "saturate",
        "--db",
        "redis://redis.bench:6379",
        "--p99",
        "5ms",
        "--resolution",
        "2",
    ]);
    assert!(notes.is_empty(), "{notes}");
    for expected in [
        "- \"saturate\"",
        "- \"--p99\"",
        "completions: 3",
        "client 0 leads the search",
        "/knee-1/run-K -o run.json",
    ] {
        assert!(yaml.contains(expected), "no {expected}: {yaml}");
    }
    let o = scalebench(&[
        "kubernetes",
        "--name",
        "x",
        "--image",
        "i",
        "--clients",
        "2",
        "--",
        "saturate",
        "--db",
        "null://",
        "--clients",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // A replay from the pods: each pod replays the sessions that fall to it (the capture at the
    // same path in every pod: the image's, or a volume's).
    let (yaml, notes) = manifests(&[
        "kubernetes",
        "--name",
        "replay-1",
        "--image",
        "scalebench:dev",
        "--clients",
        "3",
        "--",
        "replay",
        "/captures/monitor.txt",
        "--db",
        "redis://redis.bench:6379",
        "--speed",
        "2",
    ]);
    assert!(notes.is_empty(), "{notes}");
    for expected in [
        "- \"replay\"",
        "- \"/captures/monitor.txt\"",
        "completions: 3",
    ] {
        assert!(yaml.contains(expected), "no {expected}: {yaml}");
    }
}

#[test]
fn bad_manifest_requests_name_the_problem_with_exit_code_2() {
    let job = |name: &str, extra: &[&str]| -> Vec<String> {
        [
            "kubernetes",
            "--name",
            name,
            "--image",
            "i",
            "--clients",
            "2",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    for (args, expected) in [
        (
            job("Bad_Name", &["--", "run", "--db", "null://"]),
            "'Bad_Name' for '--name'",
        ),
        (
            job("x", &["--", "merge", "a.json"]),
            "must be `load ...`, `run ...`, `saturate ...` or `replay ...`",
        ),
        (
            job("x", &["--", "run", "--threads", "0"]),
            "'0' for '--threads",
        ),
        (job("x", &["--", "run"]), "needs --db"),
        (
            job("x", &["--", "run", "--db", "null://", "--clients", "3"]),
            "takes no --clients",
        ),
        (
            job(
                "x",
                &["--rendezvous", "etcd://h:1", "--", "run", "--db", "null://"],
            ),
            "a prefix naming the run",
        ),
        // Service names begin with a letter (issue 28).
        (
            job("0abc", &["--", "run", "--db", "null://"]),
            "'0abc' for '--name'",
        ),
        // URLs that do not parse, with a password in them (issue 28, point 13): refused as `run`
        // refuses them, the password hidden.
        (
            job(
                "x",
                &["--", "run", "--db", "postgres://u:hunter2@db:99999/ycsb"],
            ),
            "postgres://u:***@db:99999/ycsb",
        ),
        (
            job(
                "x",
                &["--", "run", "--db", "postgres://u:hunter2@[::1/ycsb"],
            ),
            "invalid database URL",
        ),
        (
            job("x", &["--", "run", "--db", "postgres://u:hunter2@d b/ycsb"]),
            "invalid database URL",
        ),
        // Issue 40: what belongs to one process is refused before the manifests are written (each
        // pod would have exited 2), by the request's one check.
        (
            job(
                "x",
                &["--", "run", "--db", "null://", "--consistency-probe", "10"],
            ),
            "--consistency-probe from several clients needs their launcher on this machine",
        ),
        (
            job(
                "x",
                &["--", "run", "--db", "null://", "--fault", "pause:node1"],
            ),
            "--fault acts from one process",
        ),
        (
            job("x", &["--", "run", "--db", "null://", "--load"]),
            "one phase at a time",
        ),
        (
            job(
                "x",
                &[
                    "--",
                    "run",
                    "--db",
                    "null://",
                    "--timing",
                    "init-to-cleanup",
                ],
            ),
            "--timing init-to-cleanup",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = scalebench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            !stderr(&o).contains("hunter2") && !stdout.contains("hunter2"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// Kubernetes expands $(VAR) in a container's arguments: a literal one is escaped as $$(VAR).
#[test]
fn a_literal_dollar_parenthesis_is_escaped_against_expansion() {
    let (yaml, _) = manifests(&[
        "kubernetes",
        "--name",
        "esc",
        "--image",
        "i",
        "--clients",
        "2",
        "--",
        "run",
        "--db",
        "null://",
        "-p",
        "table=t$(HOME)",
    ]);
    assert!(yaml.contains(r#""table=t$$(HOME)""#), "{yaml}");
}

/// Issue 44: the image the manifests run builds its dependencies in a layer of their own, from
/// every workspace member's manifest (a member left out would fail that layer's build, or build
/// without its dependencies cached), and carries its source label.
#[test]
fn the_containerfile_caches_every_members_dependencies_and_labels_its_source() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let members: Vec<&str> = workspace["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(members.len() > 10, "{members:?}");
    let file = std::fs::read_to_string(root.join("Containerfile")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix}"))
    };
    let everything = at("COPY . .");
    for m in members {
        let copy = at(&format!("COPY {m}/Cargo.toml {m}/"));
        assert!(copy < everything, "{m}'s manifest after the sources");
    }
    // The dependencies are built before the sources come in, and the binary after.
    let stubs = at("RUN for crate in crates/*/");
    assert!(at("COPY Cargo.toml Cargo.lock") < stubs && stubs < everything);
    assert!(file[file.find("COPY . .").unwrap()..].contains("cargo build --profile dist"));
    // A build argument changes the cache key of every RUN after it: the commit's comes after
    // the dependency layer, or each commit would build the dependencies again.
    assert!(
        at("ARG REVISION") > everything,
        "ARG REVISION before the dependency layer"
    );
    assert!(file.contains("org.opencontainers.image.source=\"${SOURCE}\""));
}
