//! A Cassandra ring of three nodes with replication factor 3: QUORUM reads and writes succeed, and go
//! on succeeding with one node down; a fourth node bootstraps and is decommissioned; flush and
//! compaction; space against du.

mod support;

use support::*;

#[test]
fn a_quorum_workload_survives_one_node_of_three_down() {
    let mut c = cluster(
        "name = \"cassandra-3\"\ndatabase = \"cassandra\"\nnodes = 3\nready_timeout_s = 400\n\
         idle_timeout_s = 300\n[cassandra]\nheap_mb = 512\nnum_tokens = 8\n\
         [binding]\nreplication_factor = 3\nread_consistency = \"QUORUM\"\nwrite_consistency = \"QUORUM\"\n",
    );
    let hosts: Vec<&str> = c.state.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
    let w = workload(&[("recordcount", "2000"), ("dataintegrity", "true")]);
    let loaded = phase(cluster_config(&c, &w, &[], true), &w, load_plan(2, 1)).result;
    assert_eq!(loaded.totals.records, 2000, "{:?}", loaded.errors);
    let done = c.compact().unwrap();
    assert_eq!(done.len(), 3, "{done:?}");
    c.wait_idle().unwrap();
    // RF 3: every node holds every record (SSTables of ~2 MB each after the flush).
    let space = c.space("after load", 2000);
    for n in &space.nodes {
        assert!(n.parts["data"] > 2000 * 1000, "{}: {:?}", n.node, n.parts);
        assert!(
            n.parts.get("index").copied().unwrap_or(0) > 0,
            "{:?}",
            n.parts
        );
    }

    let run = phase(cluster_config(&c, &w, &[], false), &w, run_plan(3.0)).result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);

    // One node crashes: two of three replicas still make a quorum.
    c.stop_node("node3", true).unwrap();
    c.wait_idle().unwrap();
    let degraded = phase(cluster_config(&c, &w, &[], false), &w, run_plan(3.0)).result;
    assert_eq!(degraded.totals.failed, 0, "{:?}", degraded.errors);
    assert!(degraded.totals.ok > 100);
    // ALL needs the missing replica.
    let all = phase(
        cluster_config(&c, &w, &[("read_consistency", "ALL")], false),
        &w,
        run_plan(1.0),
    )
    .result;
    assert!(all.errors.contains_key("unavailable"), "{:?}", all.errors);
    c.start_node("node3").unwrap();
    c.wait_idle().unwrap();

    // A fourth node bootstraps (streams its ranges) and leaves by decommission.
    let added = c.add_node().unwrap();
    assert_eq!(c.state.nodes.last().unwrap().host, "127.0.0.4");
    c.wait_idle().unwrap();
    let grown = phase(cluster_config(&c, &w, &[], false), &w, run_plan(2.0)).result;
    assert_eq!(grown.totals.failed, 0, "{:?}", grown.errors);
    c.remove_node(Some(&added)).unwrap();
    assert_eq!(c.state.nodes.len(), 3);
    let missing = missing_keys(cluster_config(&c, &w, &[], false), &w, 0..2000);
    assert!(missing.is_empty(), "{} records lost", missing.len());

    c.down();
    assert_space_matches_du(&c, 2000);
}
