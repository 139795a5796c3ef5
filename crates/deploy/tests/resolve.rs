//! Servers are resolved by the binary into a per-user cache; nothing found by searching directories is
//! executed (issue 13, point 8: a `scripts/cassandra-classpath.sh` planted in an ancestor of the
//! working directory once ran, as root). Needs `mvn` and Maven Central (or a filled ~/.m2), as CI has.
//! One test in its own binary: it sets the process's environment and working directory.

#[test]
fn cassandra_resolves_into_the_cache_and_never_runs_a_planted_script() {
    let root = tempfile::tempdir().unwrap();
    let planted = root.path().join("scripts/cassandra-classpath.sh");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    let marker = root.path().join("planted-script-ran");
    std::fs::write(
        &planted,
        format!("#!/bin/sh\ntouch {}\necho /etc/passwd\n", marker.display()),
    )
    .unwrap();
    let work = root.path().join("work/deeper");
    std::fs::create_dir_all(&work).unwrap();
    let cache = root.path().join("cache");
    std::env::set_current_dir(&work).unwrap();
    std::env::set_var("SCALEBENCH_CACHE_DIR", &cache);
    std::env::remove_var("SCALEBENCH_CASSANDRA_CLASSPATH");

    let file = scalebench_deploy::cassandra::classpath_file().expect("resolves with mvn");
    assert!(file.starts_with(&cache), "{}", file.display());
    let classpath = std::fs::read_to_string(&file).unwrap();
    assert!(classpath.contains("cassandra-all-5.0"), "{classpath}");
    assert!(!marker.exists(), "the planted script ran");
    // No temporary left behind, and a second call reads the cache.
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(
        scalebench_deploy::cassandra::classpath_file().unwrap(),
        file
    );
}
