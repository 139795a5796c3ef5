//! The mongo-java-server deployment: up, a load and a run through the cluster's URL, a restart
//! that keeps the data (the MVStore file), nodes that cannot be added, space against du.

mod support;

use support::*;

#[test]
fn one_server_keeps_its_data_across_a_restart_and_refuses_more_nodes() {
    let mut c = cluster(include_str!(
        "../../../deployments/mongo-java-server-1.toml"
    ));
    assert_eq!(c.state.nodes.len(), 1);
    assert!(c.url().starts_with("mongodb://127.0.0.1:"), "{}", c.url());
    c.wait_ready().unwrap();
    c.wait_idle().unwrap();
    let w = workload(&[("recordcount", "2000"), ("dataintegrity", "true")]);
    let loaded = phase(cluster_config(&c, &w, &[], true), &w, load_plan(2, 100)).result;
    assert_eq!((loaded.totals.records, loaded.totals.failed), (2000, 0));

    let e = c.add_node().unwrap_err().to_string();
    assert!(e.contains("single server") && e.contains("external"), "{e}");
    assert!(c.remove_node(None).is_err());
    // No operation under load: a crash would leave no server (elastic keeps one running), a
    // restart of its in-memory store an empty one. Refused as bad input, before anything.
    for op in [
        scalebench_deploy::OperationKind::Crash,
        scalebench_deploy::OperationKind::Restart,
    ] {
        let e = c.check_operation(op, None).unwrap_err();
        assert!(
            matches!(e, scalebench_deploy::DeployError::BadInput(_)),
            "{e}"
        );
        assert!(e.to_string().contains("it has: none"), "{e}");
    }

    // A graceful stop writes the store out; started again, every record is there.
    c.stop_node("node1", false).unwrap();
    c.start_node("node1").unwrap();
    c.wait_ready().unwrap();
    let missing = missing_keys(cluster_config(&c, &w, &[], false), &w, 0..2000);
    assert!(missing.is_empty(), "{} keys lost", missing.len());
    let ran = phase(cluster_config(&c, &w, &[], false), &w, run_plan(1.5)).result;
    assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);

    c.down();
    assert_space_matches_du(&c, 2000);
    assert!(c.space("after load", 2000, "usertable").parts["data"] > 2000 * 1000);
}

#[test]
fn a_deployment_of_several_nodes_or_with_server_settings_is_refused() {
    for (toml, named) in [
        (
            "name = \"m\"\ndatabase = \"mongo-java-server\"\nnodes = 3\n",
            "nodes = 3",
        ),
        (
            "name = \"m\"\ndatabase = \"mongo-java-server\"\n[server]\nwiredTigerCacheSizeGB = 1\n",
            "server.wiredTigerCacheSizeGB",
        ),
        (
            "name = \"m\"\ndatabase = \"mongo-java-server\"\n[mongo_java_server]\nheap_mb = 1\n",
            "heap_mb = 1",
        ),
    ] {
        let e = scalebench_deploy::Deployment::from_toml(toml).unwrap_err();
        assert!(e.contains(named), "{e}");
    }
}
