//! `scalebench cluster apply`: every cluster operation by its one grammar; bad text is refused with
//! one line and exit code 2, before any cluster is looked for.

use std::process::Command;

fn scalebench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cluster_apply_refuses_bad_operations() {
    let dir = tempfile::tempdir().unwrap();
    let clusters = dir.path().to_str().unwrap();
    let deployment = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deployments/redis-cluster-3.toml"
    );
    for bad in ["explode", "restart:2", "crash:0", "repair:1"] {
        let o = scalebench(&[
            "cluster",
            "apply",
            deployment,
            bad,
            "--clusters-dir",
            clusters,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains(&format!("'{bad}': expected")), "{bad}: {err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a cluster was made"
    );
}

/// `scalebench cluster --help` says which kind has which operation: what the engines'
/// `operations()` give for the shipped deployments.
#[test]
fn the_cluster_help_says_which_kind_has_which_operation() {
    use scalebench_deploy::{Cluster, OperationKind};
    use std::collections::BTreeSet;
    let deployments = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deployments");
    let by_kind = Cluster::operations_by_kind(std::path::Path::new(deployments)).unwrap();
    let having = |op: OperationKind| -> BTreeSet<&str> {
        by_kind
            .iter()
            .filter(|(_, ops)| ops.contains(&op))
            .map(|(kind, _)| kind.as_str())
            .collect()
    };
    let all: BTreeSet<&str> = by_kind.keys().map(String::as_str).collect();
    let o = scalebench(&["cluster", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // "fail-primary on redis-cluster with replicas, postgres-patroni, etcd and galera;" -> the kinds
    let named_after = |lead: &str| -> BTreeSet<&str> {
        let at = help
            .find(lead)
            .unwrap_or_else(|| panic!("no '{lead}' in: {help}"));
        help[at + lead.len()..]
            .split([';', '('])
            .next()
            .unwrap()
            .split(", ")
            .flat_map(|part| part.split(" and "))
            .map(|kind| kind.split(' ').next().unwrap().trim())
            .filter(|kind| !kind.is_empty())
            .collect()
    };
    let owned = |s: BTreeSet<&str>| s.into_iter().map(String::from).collect::<BTreeSet<_>>();
    for (lead, op) in [
        ("fail-primary on ", OperationKind::FailPrimary),
        ("compact on ", OperationKind::Compact),
        ("repair on ", OperationKind::Repair),
    ] {
        assert_eq!(owned(named_after(lead)), owned(having(op)), "{lead}");
    }
    // "every kind add:K, ... (postgres-bucardo neither add nor remove, mongo-java-server none: ...)"
    let lacking = |op: OperationKind| owned(all.difference(&having(op)).copied().collect());
    assert!(help.contains("every kind add:K, remove:K, crash:K, restart:NODE and rolling-restart (postgres-bucardo neither add nor remove, mongo-java-server none"), "{help}");
    let two: BTreeSet<String> = ["postgres-bucardo", "mongo-java-server"]
        .map(String::from)
        .into();
    let one: BTreeSet<String> = ["mongo-java-server"].map(String::from).into();
    assert_eq!(lacking(OperationKind::Add), two);
    assert_eq!(lacking(OperationKind::Remove), two);
    for op in [
        OperationKind::Crash,
        OperationKind::Restart,
        OperationKind::RollingRestart,
    ] {
        assert_eq!(lacking(op), one, "{op}");
    }
}
