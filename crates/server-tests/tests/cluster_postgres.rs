//! PostgreSQL deployments: a primary with a synchronous replica that serves the reads; replicas added
//! and removed; VACUUM/CHECKPOINT after load; snapshot and restore; space against du; a node with a
//! memory limit below its data reading it from disk.

mod support;

use scalebench_deploy::postgres::{bin_dir, psql};
use scalebench_deploy::Cluster;
use support::*;

fn sql(c: &Cluster, node: usize, text: &str) -> String {
    psql_node(c, node, text)
}

fn replica_transactions(c: &Cluster) -> u64 {
    transactions(c, 1)
}

/// Transactions node `node` committed in the benchmark's database (each read of a run is one).
fn transactions(c: &Cluster, node: usize) -> u64 {
    sql(
        c,
        node,
        "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ycsb'",
    )
    .parse()
    .unwrap()
}

#[test]
fn a_synchronous_replica_serves_the_reads() {
    let mut c = cluster(
        "name = \"pg-sync\"\ndatabase = \"postgres\"\nnodes = 2\nidle_timeout_s = 60\n\
         [postgres]\nreplicas = 1\nsynchronous_commit = \"remote_apply\"\nreads_to_replicas = true\n",
    );
    let roles: Vec<&str> = c.state.nodes.iter().map(|n| n.role.as_str()).collect();
    assert_eq!(roles, ["primary", "replica"]);
    assert_eq!(sql(&c, 1, "SELECT pg_is_in_recovery()"), "t");
    assert_eq!(
        sql(&c, 0, "SELECT sync_state FROM pg_stat_replication"),
        "quorum",
        "the replica is a synchronous standby (ANY 1)"
    );
    let replica = c.state.nodes[1].endpoint();
    assert_eq!(c.binding_options()["read_hosts"], replica);

    let w = workload(&[("recordcount", "2000"), ("dataintegrity", "true")]);
    let loaded = phase(cluster_config(&c, &w, &[], true), &w, load_plan(2, 50)).result;
    assert_eq!(loaded.totals.records, 2000);
    // remote_apply: every acknowledged row is already visible on the replica.
    assert_eq!(sql(&c, 1, "SELECT count(*) FROM usertable"), "2000");
    assert!(!c.compact().unwrap().is_empty());
    c.wait_idle().unwrap();

    let before = replica_transactions(&c);
    let w = workload(&[
        ("recordcount", "2000"),
        ("dataintegrity", "true"),
        ("readproportion", "1"),
        ("updateproportion", "0"),
    ]);
    let run = phase(cluster_config(&c, &w, &[], false), &w, run_plan(2.0)).result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);
    let reads = run.operations["READ"].ok;
    assert!(reads > 100);
    let served = replica_transactions(&c) - before;
    assert!(
        served >= reads,
        "the replica served {served} transactions for {reads} reads"
    );

    // Writes still go to the primary; with dataintegrity the replica's reads check every value.
    let mixed = phase(
        cluster_config(
            &c,
            &workload(&[("recordcount", "2000"), ("dataintegrity", "true")]),
            &[],
            false,
        ),
        &workload(&[("recordcount", "2000"), ("dataintegrity", "true")]),
        run_plan(2.0),
    )
    .result;
    assert_eq!(mixed.totals.failed, 0, "{:?}", mixed.errors);
    assert!(mixed.operations["UPDATE"].ok > 0);

    // Issue 42: the primary and its synchronous replica restarted in turn under load (as a minor
    // upgrade rolls): the load recovers, every row is still there.
    let step = operation_under_load(&mut c, "rolling-restart", 2000, 100.0, false);
    assert_eq!(step.changed_nodes, ["node1", "node2"]);
    let errors = &step.run.as_ref().unwrap().phases[0].errors;
    assert!(
        step.impact.as_ref().unwrap().recovered,
        "{:?} {errors:?}",
        step.impact
    );
    assert_eq!(sql(&c, 1, "SELECT count(*) FROM usertable"), "2000");

    // Issue 32: remote_apply: a commit returns once the replica shows it, so the consistency
    // probe reading there under the write load never reads a stale value, and the checker agrees.
    let w = workload(&[("recordcount", "2000")]);
    let (probe, checked) = probe_beside_run(cluster_config(&c, &w, &[], false), &w, 100.0, 2.0);
    assert_probe_wrote_at_least(&probe, 50);
    assert_eq!(probe.stale_reads, 0, "{probe:?}");
    assert_eq!(probe.read_your_writes.violations, 0, "{probe:?}");
    assert_eq!(checked["linearizable"], "yes", "{checked}");
    assert_eq!(checked["reads"], probe.probe_reads, "{checked}");

    // The last synchronous replica cannot go; a second one can come and go. Issue 42, each under
    // load: added (a base backup of the primary while it takes writes), killed (the slots reading
    // there move to the other replica, then the primary; 'ANY 1' still has a synchronous
    // replica), started again, removed. The primary and a synchronous replica hold every
    // acknowledged write: none lost.
    assert!(c.remove_node(Some("node2")).is_err());
    let step = operation_under_load(&mut c, "add:1", 2000, 100.0, false);
    let added = step.changed_nodes[0].clone();
    assert!(step.impact.as_ref().unwrap().recovered, "{:?}", step.impact);
    assert_eq!(lost_writes(&step), 0, "{:?}", step.impact);
    assert_eq!(c.state.nodes.len(), 3);
    assert_eq!(sql(&c, 2, "SELECT count(*) FROM usertable"), "2000");
    c.wait_idle().unwrap();
    for action in ["crash:1", "remove:1"] {
        let step = operation_under_load(&mut c, action, 2000, 100.0, false);
        assert_eq!(step.changed_nodes, std::slice::from_ref(&added), "{action}");
        let f = step.impact.as_ref().unwrap();
        assert!(f.recovered && f.completed > 0, "{action}: {f:?}");
        assert_eq!(lost_writes(&step), 0, "{action}: {f:?}");
        if action == "crash:1" {
            c.start_node(&added).unwrap();
            c.wait_idle().unwrap();
        }
    }
    assert_eq!(c.state.nodes.len(), 2);
    assert!(c.remove_node(Some("node1")).is_err(), "the primary stays");
}

#[test]
fn snapshot_restores_the_loaded_data_and_space_matches_du() {
    let mut c = cluster(
        "name = \"pg-async\"\ndatabase = \"postgres\"\nnodes = 2\nidle_timeout_s = 60\n\
         [postgres]\nreads_on_every_server = true\n[server]\nwork_mem = \"8MB\"\n",
    );
    assert_eq!(
        sql(&c, 1, "SHOW work_mem"),
        "8MB",
        "server settings reach the replicas too"
    );
    let w = workload(&[("recordcount", "3000")]);
    phase(cluster_config(&c, &w, &[], true), &w, load_plan(1, 100));
    c.compact().unwrap();
    c.wait_idle().unwrap();
    let space = c.space("after load", 3000, "usertable");
    assert!(space.parts["log"] > 0 && space.parts["data"] > 3000 * 1000);

    // Issue 61, Dijkshoorn's master-slave reading on every machine: the primary first, then its
    // replica (worker i on server i mod 2); two workers' 200 reads each are one transaction each
    // on each server (the replica alone, or the primary alone, would serve all 400).
    let (primary, replica) = (c.state.nodes[0].endpoint(), c.state.nodes[1].endpoint());
    assert_eq!(
        c.binding_options()["read_hosts"],
        format!("{primary},{replica}")
    );
    let reads = workload(&[
        ("recordcount", "3000"),
        ("readproportion", "1"),
        ("updateproportion", "0"),
    ]);
    let before = [transactions(&c, 0), transactions(&c, 1)];
    let plan = scalebench_exec::RunPlan {
        threads: 2,
        duration: None,
        operation_count: Some(400),
        ..Default::default()
    };
    let run = phase(cluster_config(&c, &reads, &[], false), &reads, plan).result;
    assert_eq!(
        (run.totals.ok, run.totals.failed),
        (400, 0),
        "{:?}",
        run.errors
    );
    let served = [
        transactions(&c, 0) - before[0],
        transactions(&c, 1) - before[1],
    ];
    assert!(served[0] >= 200 && served[1] >= 200, "{served:?}");
    // Two copies (primary and replica) of ~3 MB of records, plus each cluster's catalogs and WAL.
    assert!(space.total_bytes > 2 * 3000 * 1000);

    c.snapshot("loaded").unwrap();
    sql(&c, 0, "DELETE FROM usertable");
    c.wait_idle().unwrap();
    assert_eq!(sql(&c, 1, "SELECT count(*) FROM usertable"), "0");
    c.restore("loaded").unwrap();
    c.wait_idle().unwrap();
    assert_eq!(sql(&c, 0, "SELECT count(*) FROM usertable"), "3000");
    assert_eq!(sql(&c, 1, "SELECT count(*) FROM usertable"), "3000");

    // Issue 32: an asynchronous replica serving the reads under a write load: some probe reads
    // return an older version, and the checker (Porcupine) counts the same stale reads.
    let w = workload(&[("recordcount", "3000")]);
    let (probe, checked) = probe_beside_run(
        cluster_config(&c, &w, &[("read_hosts", &replica)], false),
        &w,
        100.0,
        2.0,
    );
    assert_probe_wrote_at_least(&probe, 50);
    assert!(
        probe.stale_reads > 0,
        "no stale read on the replica: {probe:?}"
    );
    assert_checker_counts_as_the_probe(&probe, &checked);
    assert_eq!(checked["linearizable"], "no", "{checked}");

    // An asynchronous replica replays a new table a moment after the primary created it: a load that
    // recreates the table and reads from the replica waits for it there (replay held back for a second).
    sql(&c, 0, "DROP TABLE usertable");
    c.wait_idle().unwrap();
    assert_eq!(sql(&c, 1, "SELECT to_regclass('usertable') IS NULL"), "t");
    sql(&c, 1, "SELECT pg_wal_replay_pause()");
    let w = workload(&[("recordcount", "1000")]);
    let (data_dir, port) = (c.state.nodes[1].data_dir.clone(), c.state.nodes[1].port);
    let loaded = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            psql(
                &bin_dir().unwrap(),
                &data_dir,
                port,
                "ycsb",
                "SELECT pg_wal_replay_resume()",
            )
            .unwrap();
        });
        phase(
            cluster_config(&c, &w, &[("read_hosts", &replica)], true),
            &w,
            load_plan(1, 100),
        )
    });
    assert_eq!(loaded.result.totals.records, 1000);
    c.down();
    assert_space_matches_du(&c, 1000);
}

/// Issue 38: what a load's records add on disk is what PostgreSQL counts for the table
/// (`pg_total_relation_size`: heap, TOAST, indexes, free space and visibility maps), within 5%, on
/// a fresh database whose catalogs are still in memory before its first checkpoint (5.5 MB that
/// were counted as the records' before the flush ahead of the space before the load). As inserted
/// (a checkpoint, no VACUUM) too; the catalogs and WAL are parts of their own.
#[test]
fn a_load_adds_what_postgresql_counts_for_its_table() {
    // Issue 39, point 10: while the cluster comes up (the benchmark user and its password are
    // made), no process's argv holds that SQL (any user reads /proc/PID/cmdline).
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let watching = watching.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
                    let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                    let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                    if text.contains("PASSWORD '") {
                        seen.push(text);
                    }
                }
                // A psql lives for tens of milliseconds: a pass every millisecond or so sees it.
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            seen
        })
    };
    let c = cluster("name = \"pg-space\"\ndatabase = \"postgres\"\nnodes = 1\n");
    watching.store(false, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(seen.is_empty(), "a password in an argv: {seen:?}");
    let records = 50_000;
    let space = load_through_session(&c, "timeseries", records, true);
    let counted: f64 = sql(&c, 0, "SELECT pg_total_relation_size('usertable')")
        .parse()
        .unwrap();
    let per_record = counted / records as f64;
    let settled = space.marginal.as_ref().unwrap().bytes_per_record.unwrap();
    assert_within(settled, per_record, 0.05, "settled bytes per record");
    let inserted = space.as_inserted.as_ref().expect("the space as inserted");
    assert_eq!(
        inserted.state,
        Some(scalebench_measure::SpaceState::AsInserted)
    );
    assert_eq!(space.state, Some(scalebench_measure::SpaceState::Settled));
    let as_inserted = space.as_inserted_per_record().unwrap();
    assert_within(
        as_inserted,
        per_record,
        0.05,
        "bytes per record as inserted",
    );
    // The table's files are the records' parts, and nothing else is.
    let table = (space.parts["data"] + space.parts["index"]) as f64;
    assert_within(table, counted, 0.01, "data and index bytes");
    assert!(space.parts["system"] > 5_000_000, "{:?}", space.parts);
    assert!(space.parts["log"] > 0, "{:?}", space.parts);
}

/// Rows of about 1 kB (no TOAST) filling ~117 MB of table: well above the 64 MiB node's memory.
const ROWS: u32 = 100_000;

/// Makes the table and a function that reads `n` uniformly random rows by primary key (the same
/// rows on every call: a fixed seed) and returns the bytes its backend read from storage meanwhile
/// (`read_bytes` of /proc/self/io: what came from the disk, not from the page cache).
/// The key is computed apart: `ycsb_key = <expression with random()>` is volatile, and would make
/// every read a sequential scan.
fn fill_and_prepare_reads(c: &Cluster) {
    sql(
        c,
        0,
        &format!(
            "CREATE TABLE usertable (ycsb_key text PRIMARY KEY, field0 text);\n\
             INSERT INTO usertable SELECT 'user' || i, repeat(md5(i::text), 31)\n\
             FROM generate_series(1, {ROWS}) i;\n\
             CREATE FUNCTION read_bytes() RETURNS bigint LANGUAGE sql AS\n\
             $$ SELECT (regexp_match(pg_read_file('/proc/self/io'), 'read_bytes: (\\d+)'))[1]::bigint $$;\n\
             CREATE FUNCTION disk_bytes_of_reads(n int) RETURNS bigint LANGUAGE plpgsql AS $$\n\
             DECLARE before bigint := read_bytes(); k text; v text;\n\
             BEGIN\n\
             PERFORM setseed(0.38);\n\
             FOR i IN 1..n LOOP\n\
             k := 'user' || (1 + floor(random() * {ROWS}))::int;\n\
             SELECT field0 INTO v FROM usertable WHERE ycsb_key = k;\n\
             END LOOP;\n\
             RETURN read_bytes() - before;\n\
             END $$;"
        ),
    );
}

/// Bytes read from disk by the second of two identical passes of uniform point reads (workload C's
/// kind): the first brings into memory whatever fits.
fn disk_bytes_of_second_pass(c: &Cluster) -> u64 {
    let reads = "SELECT disk_bytes_of_reads(10000)";
    sql(c, 0, reads);
    sql(c, 0, reads).parse().unwrap()
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    == Some(&pid.to_string())
            })
        })
        .collect()
}

/// Issue 38: a node whose memory limit is below its data reads it from disk again and again, where
/// the same data within memory is read from the page cache. Both nodes get the same 16 MB of shared
/// buffers; only the limit (a cgroup on every process of the node, page cache included) differs.
#[test]
fn a_node_limited_below_its_data_reads_it_from_disk() {
    // No autovacuum: its ANALYZE samples 30,000 rows, 30 MB of these, which a 64 MiB node beside
    // its 30 MB of shared memory does not have (the kernel killed the worker when it ran).
    let mut limited = cluster(
        "name = \"pg-64m\"\ndatabase = \"postgres\"\nmemory = \"64MiB\"\n\
         [server]\nautovacuum = false\n",
    );
    let group = limited.state.memory_group("node1").expect("a memory group");
    assert_eq!(group.limit_bytes(), Some(64 << 20));
    assert_eq!(
        sql(&limited, 0, "SHOW shared_buffers"),
        "16MB",
        "a quarter of the limit"
    );
    // Every process of the node is in the group: the postmaster, what it forked (background
    // workers), and the backend of a connection made now.
    let postmaster = limited.state.nodes[0].process.unwrap().pid;
    // Children first, then the group: one forked in between is in the group already (a child
    // inherits its parent's group); one that exited in between is no longer asked about.
    let forked = children(postmaster);
    let inside = group.processes();
    assert!(forked.len() >= 4, "{forked:?}");
    // A zombie (a connection's backend that has just exited) has left its group but not /proc:
    // alive means running still, checked after the group was read.
    for p in std::iter::once(postmaster)
        .chain(forked)
        .filter(|p| alive(*p))
    {
        assert!(inside.contains(&p), "{p} not in {inside:?}");
    }
    let group_name = group
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        sql(&limited, 0, "SELECT pg_read_file('/proc/self/cgroup')").contains(&group_name),
        "a new connection's backend is in {group_name}"
    );
    let status = limited.status();
    assert_eq!(
        status.memory.map(|m| m.to_string()).as_deref(),
        Some("64MiB")
    );
    let used = status.nodes[0].memory_used_bytes.expect("the group's use");
    assert!(used > 0 && used <= 64 << 20, "{used}");

    let unlimited = cluster(
        "name = \"pg-unlimited\"\ndatabase = \"postgres\"\n\
         [server]\nautovacuum = false\nshared_buffers = \"16MB\"\n",
    );
    assert!(unlimited.state.memory_group("node1").is_none());
    fill_and_prepare_reads(&limited);
    fill_and_prepare_reads(&unlimited);
    let table_bytes: u64 = sql(&limited, 0, "SELECT pg_relation_size('usertable')")
        .parse()
        .unwrap();
    assert!(table_bytes > 64 << 20, "{table_bytes}");

    let from_disk_limited = disk_bytes_of_second_pass(&limited);
    let from_disk_unlimited = disk_bytes_of_second_pass(&unlimited);
    eprintln!(
        "table {} MB; second pass read from disk: limited {} MB, unlimited {} MB",
        table_bytes >> 20,
        from_disk_limited >> 20,
        from_disk_unlimited >> 20
    );
    assert!(
        from_disk_limited > 32 << 20,
        "the limited node read only {from_disk_limited} bytes from disk: its data stayed in memory"
    );
    assert!(
        from_disk_unlimited < from_disk_limited / 10,
        "within memory, the reads still went to disk: {from_disk_unlimited} bytes (limited: {from_disk_limited})"
    );
    assert!(group.usage_bytes().unwrap() <= 64 << 20);
    assert_eq!(limited.status().nodes[0].oom_kills, Some(0));

    // The group goes with the node and comes back with it; `down` removes it.
    limited.stop_node("node1", false).unwrap();
    assert!(!group.path().exists());
    limited.start_node("node1").unwrap();
    let postmaster = limited.state.nodes[0].process.unwrap().pid;
    assert!(group.processes().contains(&postmaster));
    limited.down();
    assert!(!group.path().exists());
}
