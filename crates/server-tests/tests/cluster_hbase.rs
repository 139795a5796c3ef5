//! HBase local clusters: a region server added under the same data takes regions, one removed is
//! decommissioned (its regions move away, no record is lost); compaction; space against du.

mod support;

use support::*;

#[test]
fn region_servers_join_and_leave_and_the_data_stays() {
    let mut c = cluster(include_str!("../../../deployments/hbase-2.toml"));
    // zookeeper, master, gateway, 2 region servers; the region servers are the ones holding data
    assert_eq!(c.state.nodes.len(), 5);
    let data: Vec<&str> = c.data_nodes().iter().map(|n| n.role.as_str()).collect();
    assert_eq!(data, ["regionserver", "regionserver"]);
    assert!(c.url().starts_with("hbase://127.0.0.1:"), "{}", c.url());
    c.wait_ready().unwrap();
    let w = workload(&[("recordcount", "5000"), ("dataintegrity", "true")]);
    let loaded = phase(cluster_config(&c, &w, &[], true), &w, load_plan(2, 100)).result;
    assert_eq!(
        (loaded.totals.records, loaded.totals.failed),
        (5000, 0),
        "{:?}",
        loaded.errors
    );

    let added = c.add_node().unwrap();
    c.wait_idle().unwrap();
    let status = c.status();
    assert!(status.not_ready.is_empty(), "{status:?}");
    let new = c.state.nodes.last().unwrap();
    assert_eq!(new.id, added);
    assert_eq!(c.data_nodes().len(), 3);
    // The balancer gave it regions of the table: it opened them.
    let log = std::fs::read_to_string(new.dir.join("server.log")).unwrap();
    assert!(
        log.contains("Opened usertable,"),
        "{added} opened no region of usertable"
    );

    // The first region server leaves gracefully: nothing is lost, the run goes on without errors.
    let first = c
        .state
        .nodes
        .iter()
        .find(|n| n.role == "regionserver")
        .unwrap()
        .id
        .clone();
    c.remove_node(Some(&first)).unwrap();
    assert_eq!(
        c.state
            .nodes
            .iter()
            .filter(|n| n.role == "regionserver")
            .count(),
        2
    );
    let missing = missing_keys(cluster_config(&c, &w, &[], false), &w, 0..5000);
    assert!(missing.is_empty(), "{} keys lost", missing.len());
    let ran = phase(cluster_config(&c, &w, &[], false), &w, run_plan(1.5)).result;
    assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);
    assert!(
        c.remove_node(Some("node1")).is_err(),
        "the ZooKeeper is not a region server"
    );

    // Issue 42: a region server stopped cleanly (it closes its regions) and started again
    // under load: its regions move to the other and back, nothing acknowledged is lost.
    let server = c
        .state
        .nodes
        .iter()
        .find(|n| n.role == "regionserver")
        .map(|n| n.id.clone())
        .unwrap();
    let step = operation_under_load(&mut c, &format!("restart:{server}"), 5000, 100.0, false);
    assert_eq!(step.changed_nodes, [server]);
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    // Issue 42: a major compaction of every table under load is an event with its figures.
    let step = operation_under_load(&mut c, "compact", 5000, 100.0, false);
    let f = step.impact.as_ref().unwrap();
    assert!(f.recovered && f.failed == 0, "{f:?}");
    c.wait_idle().unwrap();
    c.down();
    assert_space_matches_du(&c, 5000);
    let space = c.space("after load", 5000, "usertable");
    assert!(space.parts["data"] > 5000 * 1000, "{:?}", space.parts);
}
