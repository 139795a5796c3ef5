//! PostgreSQL under Patroni (issue 42): the primary killed under load, Patroni's failover followed
//! by the clients (libpq's failover list), the failover's time, errors and lost acknowledged writes:
//! none with Patroni's synchronous mode, counted without it; a rolling restart under load. Debian's
//! `patroni` and `etcd`.

mod support;

use support::*;

/// Seconds from the kill to the promoted replica, and the classes of failed operations.
fn failover(step: &scalebench_elastic::result::ElasticStep) -> (f64, Vec<String>) {
    let done = step.events.scale_done_s.expect("the failover ended");
    let f = step.impact.as_ref().unwrap();
    (
        done - step.events.scale_issued_s,
        f.errors.keys().cloned().collect(),
    )
}

#[test]
fn a_killed_primary_fails_over_and_synchronous_mode_loses_nothing() {
    // Synchronous: a commit waits for the synchronous standby, the only one Patroni promotes.
    let mut c = cluster(
        "name = \"patroni-sync\"\ndatabase = \"postgres-patroni\"\nnodes = 2\nidle_timeout_s = 60\n\
         [postgres]\nsynchronous_commit = \"on\"\n",
    );
    // node1 is the etcd holding the leader key; node2 bootstrapped and leads.
    assert_eq!(c.state.nodes.len(), 3);
    assert_eq!(c.state.nodes[0].role, "dcs");
    assert!(
        c.url().contains("target_session_attrs=read-write"),
        "the clients follow the primary"
    );
    let step = operation_under_load(&mut c, "fail-primary", 1000, 200.0, true);
    let killed = step.changed_nodes[0].clone();
    assert_eq!(killed, "node2", "the primary that bootstrapped");
    let f = step.impact.as_ref().unwrap();
    let (seconds, errors) = failover(&step);
    eprintln!("synchronous: failover in {seconds:.1} s, errors {errors:?}, {f:?}");
    // Nobody served writes until the promotion (an old primary left running would have: Patroni
    // starts PostgreSQL detached); the load then reached the promoted replica, which held every
    // acknowledged write.
    assert!(f.failed > 0 && f.availability_pct < 100.0, "{f:?}");
    assert!(f.recovered && f.completed > 0, "{f:?}");
    assert_eq!(lost_writes(&step), 0, "{:?}", f.lost_writes);
    let node = c.state.nodes.iter().find(|n| n.id == killed).unwrap();
    assert!(!node.is_running(), "{killed} was killed and stays down");
    // The old primary comes back as a replica of the new one (rewound).
    c.start_node(&killed).unwrap();
    c.wait_ready().unwrap();
    // Every server restarted in turn, the primary's Patroni handing the leader key over as it stops.
    let step = operation_under_load(&mut c, "rolling-restart", 1000, 200.0, false);
    assert_eq!(step.changed_nodes, ["node2", "node3"]);
    assert!(step.impact.as_ref().unwrap().recovered);
    assert_eq!(lost_writes(&step), 0);
    assert!(c.state.nodes.iter().all(|n| n.is_running()));
    c.down();

    // Asynchronous: Patroni promotes a replica up to 1 MB behind; what it had not received is
    // lost, and counted.
    let mut c = cluster(
        "name = \"patroni-async\"\ndatabase = \"postgres-patroni\"\nnodes = 2\nidle_timeout_s = 60\n",
    );
    let step = operation_under_load(&mut c, "fail-primary", 1000, 200.0, true);
    let f = step.impact.as_ref().unwrap();
    let (seconds, errors) = failover(&step);
    eprintln!(
        "asynchronous: failover in {seconds:.1} s, errors {errors:?}, {:?}",
        f.lost_writes
    );
    assert!(f.recovered, "{f:?}");
    let lost = f.lost_writes.as_ref().unwrap();
    assert!(lost.checked > 0, "{lost:?}");
    c.down();
}
