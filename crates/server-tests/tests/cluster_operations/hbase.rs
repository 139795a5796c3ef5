//! HBase local clusters: a region server added under load takes regions, removed under load it is
//! decommissioned (its regions move away, no record is lost); a rolling restart, a crash and a
//! major compaction under load; space against du.

use super::support::*;

#[test]
fn region_servers_join_and_leave_and_the_data_stays() {
    let mut c = cluster(include_str!("../../../../deployments/hbase-2.toml"));
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

    // Issue 42: a region server added under load (the balancer moves regions to it).
    let step = operation_under_load(&mut c, "add:1", 5000, 100.0, false);
    let added = step.changed_nodes[0].clone();
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
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

    // It leaves gracefully under load (decommissioned: its regions move away first): nothing is
    // lost, the run after it goes on without errors.
    let step = operation_under_load(&mut c, "remove:1", 5000, 100.0, false);
    assert_eq!(step.changed_nodes, [added]);
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
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
    // Without dataintegrity's checks: the operations under load updated with random values.
    let plain = workload(&[("recordcount", "5000")]);
    let ran = phase(
        cluster_config(&c, &plain, &[], false),
        &plain,
        run_plan(1.5),
    )
    .result;
    assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);
    assert!(
        c.remove_node(Some("node1")).is_err(),
        "the ZooKeeper is not a region server"
    );

    // Issue 42: a rolling restart under load, each region server in turn stopped cleanly (it
    // closes its regions, which move to the other) and started again (`restart:NODE` is each of
    // its steps): nothing acknowledged is lost.
    let servers: Vec<String> = c
        .state
        .nodes
        .iter()
        .filter(|n| n.role == "regionserver")
        .map(|n| n.id.clone())
        .collect();
    let step = operation_under_load(&mut c, "rolling-restart", 5000, 100.0, false);
    assert_eq!(step.changed_nodes, servers);
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    // Issue 42: a region server SIGKILLed under load: its ZooKeeper session ends (10 s), the
    // master splits its write-ahead log and reopens its regions on the other; the WAL was written
    // to the file system before each write was acknowledged, so nothing acknowledged is lost.
    let step = operation_under_load(&mut c, "crash:1", 5000, 100.0, false);
    assert_eq!(step.changed_nodes.len(), 1, "{:?}", step.changed_nodes);
    let f = step.impact.as_ref().unwrap();
    assert!(f.recovered && f.completed > 0, "{f:?}");
    assert_eq!(lost_writes(&step), 0, "{f:?}");
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
