//! README command 1 (`--no-default-features --features embedded`) builds SQLite and null alone:
//! no network driver, etcd client or gRPC stack comes back into it unnoticed (issue 63 item 9).

use std::process::Command;

/// Crates of the network bindings, the etcd rendezvous and the Kubernetes/gRPC pieces.
const NETWORK: &[&str] = &[
    "scylla",
    "redis",
    "etcd-client",
    "tonic",
    "axum",
    "mysql_async",
    "tokio-postgres",
    "mongodb",
    "kube",
    "thrift",
];

/// The names of the crates `cargo tree` lists for the binary built with `features`.
fn crates_built(features: &[&str]) -> Vec<String> {
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            "scalebench",
            "-e",
            "normal",
        ])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(features)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(' ').next().map(str::to_string))
        .collect()
}

#[test]
fn the_embedded_build_has_no_network_driver() {
    let embedded = crates_built(&["--no-default-features", "--features", "embedded"]);
    assert!(embedded.iter().any(|c| c == "rusqlite"), "{embedded:?}");
    let found: Vec<&&str> = NETWORK
        .iter()
        .filter(|n| embedded.iter().any(|c| c == **n))
        .collect();
    assert!(found.is_empty(), "the embedded build compiles {found:?}");
    // The full build has them: the names above are the crates' own.
    let full = crates_built(&[]);
    for n in [
        "scylla",
        "redis",
        "etcd-client",
        "tonic",
        "mongodb",
        "thrift",
    ] {
        assert!(full.iter().any(|c| c == n), "{n} not in the full build");
    }
}
