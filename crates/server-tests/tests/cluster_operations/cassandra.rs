//! A Cassandra ring of three nodes with one token each and replication factor 3: QUORUM reads and
//! writes succeed, and go on succeeding with one node down; workers bound to nodes read there alone;
//! a fourth node bootstraps with the middle of the largest range as its token and is decommissioned; flush and
//! compaction; space against du; a snapshot and its restore with the servers running. The keyspace follows the replication asked (RF 1 then 3); each
//! commit log mode is what the node reports; dropped tables leave no snapshot behind; a load adds
//! the live space Cassandra counts for the table.

use super::support::*;

/// Rows of a CQL query on the cluster's first node, each column as text.
fn cql(c: &scalebench_deploy::Cluster, query: &str) -> Vec<Vec<String>> {
    cql_on(c, 0, query)
}

/// Rows of a CQL query coordinated by node `node` (its node-local virtual tables), each column as
/// text.
fn cql_on(c: &scalebench_deploy::Cluster, node: usize, query: &str) -> Vec<Vec<String>> {
    use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
    use scylla::value::CqlValue;
    let node = c.state.nodes[node].endpoint();
    let address: std::net::SocketAddr = node.parse().expect("an address");
    block_on(async {
        let policy =
            SingleTargetLoadBalancingPolicy::new(NodeIdentifier::NodeAddress(address), None);
        let profile = scylla::client::execution_profile::ExecutionProfile::builder()
            .load_balancing_policy(policy)
            .build();
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(&node)
            .default_execution_profile_handle(profile.into_handle())
            .build()
            .await
            .expect("connects");
        let rows = session
            .query_unpaged(query, &[])
            .await
            .expect("query runs")
            .into_rows_result()
            .expect("rows");
        rows.rows::<scylla::value::Row>()
            .expect("typed rows")
            .map(|r| {
                r.expect("row")
                    .columns
                    .into_iter()
                    .map(|v| match v {
                        Some(CqlValue::Text(t)) | Some(CqlValue::Ascii(t)) => t,
                        Some(CqlValue::Boolean(b)) => b.to_string(),
                        Some(CqlValue::Map(m)) => format!("{m:?}"),
                        Some(other) => format!("{other:?}"),
                        None => String::new(),
                    })
                    .collect()
            })
            .collect()
    })
}

/// Each node's one token (`num_tokens = 1`) as the ring reports it (system.local and system.peers),
/// by address.
fn tokens(c: &scalebench_deploy::Cluster) -> std::collections::BTreeMap<String, i64> {
    let token = |text: &str| -> i64 {
        let digits: String = text
            .chars()
            .skip_while(|ch| !(ch.is_ascii_digit() || *ch == '-'))
            .take_while(|ch| ch.is_ascii_digit() || *ch == '-')
            .collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("one token: {text}"))
    };
    let address = |text: &str| {
        text.trim_start_matches("Inet(")
            .trim_end_matches(')')
            .to_string()
    };
    let mut out = std::collections::BTreeMap::new();
    for table in ["system.local", "system.peers"] {
        let column = if table == "system.local" {
            "broadcast_address"
        } else {
            "peer"
        };
        for row in cql(c, &format!("SELECT {column}, tokens FROM {table}")) {
            out.insert(address(&row[0]), token(&row[1]));
        }
    }
    out
}

/// One token per node (issue 61, Dory's ring): the three of a new ring divide it evenly, as the
/// ring itself reports; the token a fourth node is to take: the middle of the largest range (the
/// one that wraps around, one token longer than the others).
fn middle_of_the_largest_range(c: &scalebench_deploy::Cluster) -> i64 {
    let ring = tokens(c);
    let mut three: Vec<i128> = ring.values().map(|t| *t as i128).collect();
    three.sort_unstable();
    assert_eq!(three.len(), 3, "{ring:?}");
    assert_eq!(three[0], i64::MIN as i128, "{ring:?}");
    let full = 1i128 << 64;
    let gaps = [
        three[1] - three[0],
        three[2] - three[1],
        three[0] + full - three[2],
    ];
    assert_eq!(gaps, [full / 3, full / 3, full / 3 + 1], "{ring:?}");
    let middle = three[2] + gaps[2] / 2;
    (if middle > i64::MAX as i128 {
        middle - full
    } else {
        middle
    }) as i64
}

/// Reads of the benchmark table that node `node` coordinated, as it counts them (Cassandra's
/// node-local `system_views.coordinator_read_latency`).
fn coordinated_reads(c: &scalebench_deploy::Cluster, node: usize) -> u64 {
    let rows = cql_on(
        c,
        node,
        "SELECT count FROM system_views.coordinator_read_latency \
         WHERE keyspace_name = 'ycsb' AND table_name = 'usertable'",
    );
    rows.first().map_or(0, |r| {
        r[0].trim_start_matches("BigInt(")
            .trim_end_matches(')')
            .parse()
            .unwrap_or_else(|_| panic!("{r:?}"))
    })
}

/// Issue 61: Dory's client. With fixed shares of sets and workers bound to nodes from worker 1
/// (a second client's threads), each of two workers reads its share on its own node, 127.0.0.2
/// and 127.0.0.3, exactly; 127.0.0.1 coordinates none.
fn each_worker_reads_on_its_own_node(c: &scalebench_deploy::Cluster) {
    let w = workload(&[
        ("recordcount", "2000"),
        ("readproportion", "1"),
        ("updateproportion", "0"),
    ]);
    let before: Vec<u64> = (0..3).map(|n| coordinated_reads(c, n)).collect();
    let mut config = cluster_config(c, &w, &[], false);
    config.worker_nodes = Some(scalebench_binding::WorkerNodes { first_worker: 1 });
    let plan = scalebench_exec::RunPlan {
        threads: 2,
        duration: None,
        operation_count: Some(200),
        request_set: Some(20),
        set_threads: scalebench_exec::SetThreads::Fixed,
        ..Default::default()
    };
    let run = phase(config, &w, plan).result;
    assert_eq!(
        (run.totals.ok, run.totals.failed),
        (200, 0),
        "{:?}",
        run.errors
    );
    let added: Vec<u64> = (0..3)
        .map(|n| coordinated_reads(c, n) - before[n])
        .collect();
    assert_eq!(added, [0, 100, 100], "reads coordinated by 127.0.0.1-3");
}

/// The benchmark keyspace's replication map (as text) and durable_writes.
fn keyspace(c: &scalebench_deploy::Cluster) -> (String, String) {
    let rows = cql(
        c,
        "SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = 'ycsb'",
    );
    (rows[0][0].clone(), rows[0][1].clone())
}

/// A server setting as the node reports it (Cassandra 4+'s settings virtual table).
fn setting(c: &scalebench_deploy::Cluster, name: &str) -> String {
    cql(
        c,
        &format!("SELECT value FROM system_views.settings WHERE name = '{name}'"),
    )[0][0]
        .clone()
}

/// Why a binding configuration does not open.
fn open_error(cfg: scalebench_binding::BindingConfig) -> String {
    struct Open;
    impl scalebench_binding::FactoryVisitor for Open {
        type Output = ();
        fn visit<F: scalebench_binding::BindingFactory>(self, _: F) {}
    }
    scalebench_binding::registry::open(cfg, Open)
        .expect_err("the binding refuses")
        .to_string()
}

/// Issue 31 (a JVM start per nodetool command took a second of CPU from the nodes): the flushes and
/// compactions just run went through a NodetoolSession JVM this process keeps; a command that ends
/// that JVM (NodeTool calls System.exit when it cannot connect) is run again on its own, so its
/// message is shown, and the next command gets a new session.
fn nodetool_runs_in_one_jvm_kept_by_this_process(c: &scalebench_deploy::Cluster) {
    use scalebench_deploy::nodetool::nodetool;
    let sessions = || -> Vec<u32> {
        let children = std::fs::read_dir("/proc/self/task").unwrap().flat_map(|t| {
            let list = std::fs::read_to_string(t.unwrap().path().join("children"));
            list.unwrap_or_default()
                .split_whitespace()
                .map(|p| p.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        });
        children
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("NodetoolSession"))
            })
            .collect()
    };
    assert!(
        !sessions().is_empty(),
        "no NodetoolSession JVM after compact"
    );
    let classpath = std::fs::read_to_string(&c.state.facts["classpath_file"]).unwrap();
    let jmx = c.state.nodes[0].ports["jmx"];
    let status = nodetool(classpath.trim(), jmx, &["status"]).unwrap();
    assert_eq!(status.matches("UN  127.0.0.").count(), 3, "{status}");
    let unused = scalebench_deploy::free_port().unwrap();
    let refused = nodetool(classpath.trim(), unused, &["status"])
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("nodetool status failed") && refused.contains(&unused.to_string()),
        "{refused}"
    );
    let again = nodetool(classpath.trim(), jmx, &["status"]).unwrap();
    assert_eq!(again.matches("UN  127.0.0.").count(), 3, "{again}");
}

#[test]
fn a_quorum_workload_survives_one_node_of_three_down() {
    let mut c = cluster(
        "name = \"cassandra-3\"\ndatabase = \"cassandra\"\nnodes = 3\nready_timeout_s = 400\n\
         idle_timeout_s = 300\n[cassandra]\nheap_mb = 512\nnum_tokens = 1\n\
         [binding]\nreplication_factor = 3\nread_consistency = \"QUORUM\"\nwrite_consistency = \"QUORUM\"\n",
    );
    let hosts: Vec<&str> = c.state.nodes.iter().map(|n| n.host.as_str()).collect();
    assert_eq!(hosts, ["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
    let w = workload(&[("recordcount", "2000"), ("dataintegrity", "true")]);
    the_keyspace_follows_the_replication_asked(&c, &w);

    let run = phase(cluster_config(&c, &w, &[], false), &w, run_plan(3.0)).result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);
    each_worker_reads_on_its_own_node(&c);

    consistency_pairs_with_a_node_paused(&c, &w);

    a_snapshot_restores_the_loaded_records(&mut c, &w);

    // Issue 42: one node SIGKILLed under load at QUORUM with RF 3: two of three replicas still
    // make a quorum, and every acknowledged write is on two of them: none lost.
    let step = operation_under_load(&mut c, "crash:1", 2000, 100.0, false);
    assert_eq!(step.changed_nodes, ["node3"]);
    let f = step.impact.as_ref().unwrap();
    assert!(f.recovered && f.completed > 0, "{f:?}");
    assert_eq!(lost_writes(&step), 0, "{f:?}");
    assert!(!c.state.nodes[2].is_running(), "node3 stays down");
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

    // Issue 42: a node restarted (drained, stopped, started and back in the ring: each step of a
    // rolling restart, whose sequence runs under load on the other kinds; three restarts of a
    // Cassandra node cost this binary 2 minutes of CI more), a major compaction and a full repair
    // under load (QUORUM, RF 3), each an event with its figures; no record lost.
    let step = operation_under_load(&mut c, "restart:node2", 2000, 100.0, false);
    assert_eq!(step.changed_nodes, ["node2"]);
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    // QUORUM of RF 3: every acknowledged write is on two replicas, two of them always up.
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    for action in ["compact", "repair"] {
        let step = operation_under_load(&mut c, action, 2000, 100.0, false);
        let f = step.impact.as_ref().unwrap();
        assert!(f.recovered && f.failed == 0, "{action}: {f:?}");
        assert_eq!(step.changed_nodes.len(), 3, "{action}");
    }

    // A fourth node bootstraps (streams its ranges) and leaves by decommission, each under load
    // (issue 42): nothing acknowledged lost either way.
    let middle = middle_of_the_largest_range(&c);
    let step = operation_under_load(&mut c, "add:1", 2000, 100.0, false);
    let added = step.changed_nodes[0].clone();
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    assert_eq!(c.state.nodes.last().unwrap().host, "127.0.0.4");
    assert_eq!(tokens(&c)["127.0.0.4"], middle, "{:?}", tokens(&c));
    c.wait_idle().unwrap();
    // Without dataintegrity's checks: the operations above updated with random values.
    let plain = workload(&[("recordcount", "2000")]);
    let grown = phase(
        cluster_config(&c, &plain, &[], false),
        &plain,
        run_plan(2.0),
    )
    .result;
    assert_eq!(grown.totals.failed, 0, "{:?}", grown.errors);
    let step = operation_under_load(&mut c, "remove:1", 2000, 100.0, false);
    assert_eq!(step.changed_nodes, [added]);
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    assert_eq!(c.state.nodes.len(), 3);
    let missing = missing_keys(cluster_config(&c, &w, &[], false), &w, 0..2000);
    assert!(missing.is_empty(), "{} records lost", missing.len());

    c.down();
    assert_space_matches_du(&c, 2000);
}

/// Wegert's RF series on one ring: the keyspace follows the replication a load asks for, and a
/// run asking another is refused; at RF 3 every node holds every record.
fn the_keyspace_follows_the_replication_asked(
    c: &scalebench_deploy::Cluster,
    w: &scalebench_workload::CoreWorkload,
) {
    // Wegert's RF series: a load asking RF 1, then one asking RF 3 on the same ring; the keyspace
    // follows (it is ALTERed, the table being dropped), and a run asking another RF than the
    // keyspace has is refused rather than measuring the wrong one.
    let rf1 = phase(
        cluster_config(c, w, &[("replication_factor", "1")], true),
        w,
        load_plan(2, 1),
    )
    .result;
    assert_eq!(rf1.totals.records, 2000, "{:?}", rf1.errors);
    assert!(keyspace(c).0.contains("\"1\""), "{:?}", keyspace(c));
    let refused = open_error(cluster_config(c, w, &[], false));
    assert!(
        refused.contains("replication") && refused.contains("--drop-schema"),
        "{refused}"
    );
    let loaded = phase(cluster_config(c, w, &[], true), w, load_plan(2, 1)).result;
    let (replication, durable) = keyspace(c);
    assert!(
        replication.contains("\"3\"") && replication.contains("SimpleStrategy"),
        "{replication}"
    );
    assert_eq!(durable, "true");
    assert_eq!(setting(c, "commitlog_sync"), "periodic");
    assert_eq!(loaded.totals.records, 2000, "{:?}", loaded.errors);
    let done = c.compact().unwrap();
    assert_eq!(done.len(), 3, "{done:?}");
    nodetool_runs_in_one_jvm_kept_by_this_process(c);
    c.wait_idle().unwrap();
    // RF 3: every node holds every record (SSTables of ~2 MB each after the flush).
    let space = c.space("after load", 2000, "usertable");
    for n in &space.nodes {
        assert!(n.parts["data"] > 2000 * 1000, "{}: {:?}", n.node, n.parts);
        assert!(
            n.parts.get("index").copied().unwrap_or(0) > 0,
            "{:?}",
            n.parts
        );
    }
}

/// Issue 32: Wegert's consistency pairs with node3 paused periodically, the stale reads counted
/// by the probe and the checker alike.
fn consistency_pairs_with_a_node_paused(
    c: &scalebench_deploy::Cluster,
    w: &scalebench_workload::CoreWorkload,
) {
    // Issue 32, Wegert's consistency pairs with node3 paused periodically (Jepsen's pause nemesis,
    // as `--fault pause:node3`): at W=ONE/R=ONE a read may reach a replica the write has not
    // reached yet; ALL/ONE and QUORUM/QUORUM (R + W > RF) never read a stale value. The checker
    // (Porcupine) counts the same stale reads on each history.
    use scalebench_session::fault::{FaultRequest, Nemesis};
    let node3 = c.state.nodes[2].process.unwrap();
    let pause = FaultRequest::parse("pause:node3,every=1s,for=300ms").unwrap();
    for (write, read, stale) in [
        ("ONE", "ONE", true),
        ("ALL", "ONE", false),
        ("QUORUM", "QUORUM", false),
    ] {
        let levels = [("write_consistency", write), ("read_consistency", read)];
        let measuring = scalebench_exec::MeasurementStart::default();
        let _ = measuring.set(std::time::Instant::now());
        let nemesis = Nemesis::start(&[(pause.clone(), node3)], &measuring);
        // 20 writes a second: the probe refuses a rate beyond what its writer can do at the median
        // time of its first writes, and with a write and its read-back taking 24 ms each beside the
        // run on a loaded machine (seen on CI), 50 a second was refused.
        let (probe, checked) = probe_beside_run(cluster_config(c, w, &levels, false), w, 20.0, 4.0);
        let pauses = nemesis.finish(0);
        assert!(pauses.len() >= 3, "{pauses:?}");
        assert!(node3.is_running());
        // One writer: a write coordinated by the paused node waits out its pause, so on a loaded
        // machine the probe makes a fraction of its 80 planned writes (40 of 200 seen on CI at 50
        // a second).
        assert!(
            probe.probe_writes >= 25 && probe.probe_writes_failed == 0,
            "{write}/{read}: {probe:?}"
        );
        assert_eq!(
            checked["reads"], probe.probe_reads,
            "{write}/{read}: {checked}"
        );
        assert_eq!(
            checked["stale_reads"], probe.stale_reads,
            "{write}/{read}: {checked}"
        );
        if stale {
            assert!(
                probe.stale_reads > 0,
                "{write}/{read}: no stale read: {probe:?}"
            );
        } else {
            assert_eq!(probe.stale_reads, 0, "{write}/{read}: {probe:?}");
            assert_eq!(checked["linearizable"], "yes", "{write}/{read}: {checked}");
        }
    }
}

/// Cassandra's own snapshot taken and restored with the servers running, 500 inserts between.
fn a_snapshot_restores_the_loaded_records(
    c: &mut scalebench_deploy::Cluster,
    w: &scalebench_workload::CoreWorkload,
) {
    // Wegert's "restore data before runs that insert", the servers running: Cassandra's own
    // snapshot (the same server processes before and after), 500 inserts, the snapshot back.
    let pids = |c: &scalebench_deploy::Cluster| -> Vec<Option<u32>> {
        c.state
            .nodes
            .iter()
            .map(|n| n.process.map(|p| p.pid))
            .collect()
    };
    let servers = pids(&*c);
    let rows = |c: &scalebench_deploy::Cluster| {
        cql(c, "SELECT count(*) FROM ycsb.usertable")[0][0].clone()
    };
    let taken = c.snapshot("loaded").unwrap();
    let by_cassandra = taken
        .iter()
        .filter(|l| l.contains("snapshotted by Cassandra"));
    assert_eq!(by_cassandra.count(), 3, "{taken:?}");
    let more = workload(&[
        ("recordcount", "2500"),
        ("insertstart", "2000"),
        ("insertcount", "500"),
        ("dataintegrity", "true"),
    ]);
    let inserted = phase(
        cluster_config(&*c, &more, &[], false),
        &more,
        load_plan(2, 1),
    )
    .result;
    assert_eq!(inserted.totals.records, 500, "{:?}", inserted.errors);
    assert_eq!(rows(&*c), "BigInt(2500)");
    let restored = c.restore("loaded").unwrap();
    assert!(
        restored.iter().any(|l| l.contains("truncated")),
        "{restored:?}"
    );
    assert_eq!(rows(&*c), "BigInt(2000)");
    assert_eq!(pids(&*c), servers, "no node restarted");
    let missing = missing_keys(cluster_config(&*c, w, &[], false), w, 0..2000);
    assert!(missing.is_empty(), "{} records lost", missing.len());
    // The snapshot stays for the next restore (Wegert restored before every run that inserts).
    let again = phase(
        cluster_config(&*c, &more, &[], false),
        &more,
        load_plan(2, 1),
    )
    .result;
    assert_eq!(again.totals.failed, 0, "{:?}", again.errors);
    c.restore("loaded").unwrap();
    assert_eq!(rows(&*c), "BigInt(2000)");
    // A snapshot of the same name again (an experiment's next load) replaces it.
    c.snapshot("loaded").unwrap();
    c.wait_idle().unwrap();
}

/// Issue 38: what a load's records add is what Cassandra counts as the table's live space
/// (`nodetool tablestats`, "Space used (live)": every component of its live SSTables), within 5%,
/// as inserted (flushed) and settled (major-compacted). A second load of the same keys leaves a
/// second SSTable as inserted, which the compaction merges away: settled, it adds next to nothing.
fn a_load_adds_the_live_space_cassandra_counts(c: &scalebench_deploy::Cluster) {
    let records = 50_000;
    let live = || -> f64 {
        let classpath = std::fs::read_to_string(&c.state.facts["classpath_file"]).unwrap();
        let jmx = c.state.nodes[0].ports["jmx"];
        let stats = scalebench_deploy::nodetool::nodetool(
            classpath.trim(),
            jmx,
            &["tablestats", "ycsb.usertable"],
        )
        .unwrap();
        let line = stats
            .lines()
            .find_map(|l| l.trim().strip_prefix("Space used (live):"))
            .unwrap_or_else(|| panic!("no live space in {stats}"));
        line.trim().parse().unwrap()
    };
    let first = load_through_session(c, "timeseries", records, true);
    let per_record = live() / records as f64;
    let settled = first.per_record().unwrap();
    assert_within(settled, per_record, 0.05, "settled bytes per record");
    let inserted = first.as_inserted_per_record().unwrap();
    assert_within(inserted, per_record, 0.05, "bytes per record as inserted");

    let again = load_through_session(c, "timeseries", records, false);
    let inserted = again.as_inserted_per_record().unwrap();
    assert_within(
        inserted,
        per_record,
        0.05,
        "the same keys again, as inserted",
    );
    let settled = again.per_record().unwrap();
    assert!(
        settled.abs() < 0.05 * per_record,
        "the same keys again add {settled:.1} bytes per record once compacted"
    );
}

/// Wegert's commit log modes (periodic is the ring's above): each node reports the mode it was
/// started in; `off` is the keyspace's durable_writes. A `[server]` setting replaces the generated
/// one. Two identical measured loads that reset by dropping the table take the same space: no
/// snapshot of the dropped table stays behind. On that node, the space a load adds is Cassandra's
/// own count ([`a_load_adds_the_live_space_cassandra_counts`]).
#[test]
fn each_commit_log_mode_is_what_the_node_runs_and_dropped_tables_leave_nothing() {
    for (mode, reported) in [("batch", "batch"), ("group", "group"), ("off", "periodic")] {
        let mut c = cluster(&format!(
            "name = \"cassandra-log-{mode}\"\ndatabase = \"cassandra\"\nnodes = 1\nready_timeout_s = 300\n\
             [cassandra]\nheap_mb = 512\nnum_tokens = 4\ncommitlog_sync = \"{mode}\"\n\
             commitlog_sync_group_window_ms = 20\n[server]\nconcurrent_reads = 12\n"
        ));
        assert_eq!(setting(&c, "commitlog_sync"), reported, "{mode}");
        assert_eq!(setting(&c, "concurrent_reads"), "12");
        if mode == "group" {
            assert_eq!(setting(&c, "commitlog_sync_group_window"), "20ms");
        }
        if mode != "off" {
            c.down();
            continue;
        }
        let w = workload(&[("recordcount", "3000")]);
        let measured_load = |c: &mut scalebench_deploy::Cluster| {
            let r = phase(cluster_config(c, &w, &[], true), &w, load_plan(2, 50)).result;
            assert_eq!(r.totals.records, 3000, "{:?}", r.errors);
            c.compact().unwrap();
            c.wait_idle().unwrap();
            c.space("after load", 3000, "usertable")
        };
        let first = measured_load(&mut c);
        assert_eq!(
            keyspace(&c).1,
            "false",
            "commit log off: durable_writes = false"
        );
        let second = measured_load(&mut c);
        let data = |s: &scalebench_measure::Space| s.nodes[0].parts["data"] as f64;
        let (a, b) = (
            first.bytes_per_record.unwrap(),
            second.bytes_per_record.unwrap(),
        );
        assert!((b / a - 1.0).abs() < 0.10, "bytes per record {a} then {b}");
        assert!(
            (data(&second) / data(&first) - 1.0).abs() < 0.10,
            "table data {} then {} bytes",
            data(&first),
            data(&second)
        );
        a_load_adds_the_live_space_cassandra_counts(&c);
        c.down();
    }
}
