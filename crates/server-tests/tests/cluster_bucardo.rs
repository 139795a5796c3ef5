//! PostgreSQL multi-master through Bucardo: two masters that each take writes and end identical;
//! the deployment creates and resets the benchmark table on every master; clients spread over both;
//! a stopped daemon shows as "busy" (changes not copied within a second) until it runs again. Master-slave: one
//! source, the others targets serving the reads.

mod support;

use scalebench_deploy::Cluster;
use scalebench_workload::CoreWorkload;
use support::*;

fn sql(c: &Cluster, node: usize, text: &str) -> String {
    psql_node(c, node, text)
}

/// Row count and a digest of every row, per master.
fn contents(c: &Cluster) -> Vec<String> {
    (0..2)
        .map(|m| {
            sql(
                c,
                m,
                "SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, ',' ORDER BY ycsb_key)), '') \
                 FROM usertable t",
            )
        })
        .collect()
}

fn commits(c: &Cluster) -> Vec<u64> {
    (0..2)
        .map(|m| {
            sql(
                c,
                m,
                "SELECT xact_commit FROM pg_stat_database WHERE datname = 'ycsb'",
            )
            .parse()
            .unwrap()
        })
        .collect()
}

/// What the CLI does before a load with --create-schema/--drop-schema on this deployment.
fn prepare_table(c: &mut Cluster, w: &CoreWorkload, drop: bool) {
    assert!(c.owns_table());
    let schema = scalebench_binding::Schema::of(w);
    let table_sql = scalebench_binding::registry::find("postgres")
        .and_then(|b| b.table_sql)
        .expect("the postgres binding gives its table's SQL");
    c.prepare_table(&schema.table, &table_sql(&schema), drop)
        .unwrap();
}

#[test]
fn two_masters_take_writes_and_end_identical() {
    let mut c = cluster(
        "name = \"pg-bucardo\"\ndatabase = \"postgres-bucardo\"\nnodes = 2\nidle_timeout_s = 120\n",
    );
    let roles: Vec<&str> = c.state.nodes.iter().map(|n| n.role.as_str()).collect();
    assert_eq!(roles, ["master", "master", "bucardo"]);
    let url = c.url();
    for n in &c.state.nodes[..2] {
        assert!(url.contains(&n.endpoint()), "{url} names every master");
    }
    let w = workload(&[("recordcount", "2000"), ("dataintegrity", "true")]);

    // Without the deployment, a table created through the URL exists on the first master only, and
    // the binding names the master that lacks it.
    let opened = scalebench_binding::registry::open(cluster_config(&c, &w, &[], true), NoVisit);
    let err = opened.expect_err("master 2 has no table").to_string();
    assert!(
        err.contains(&c.state.nodes[1].endpoint()) && err.contains("each must have it"),
        "{err}"
    );

    prepare_table(&mut c, &w, true);
    let loaded = phase(cluster_config(&c, &w, &[], false), &w, load_plan(4, 50)).result;
    assert_eq!((loaded.totals.records, loaded.totals.failed), (2000, 0));
    c.wait_idle().unwrap();
    let after_load = contents(&c);
    assert!(after_load[0].starts_with("2000 "), "{after_load:?}");
    assert_eq!(after_load[0], after_load[1], "both masters hold every row");

    // The slots of one run spread over both masters; updates from both replicate both ways (random
    // values this time: with dataintegrity an update writes what the load wrote).
    let before = commits(&c);
    let random = workload(&[("recordcount", "2000")]);
    let run = phase(
        cluster_config(&c, &random, &[], false),
        &random,
        run_plan(1.5),
    )
    .result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);
    assert!(run.operations["UPDATE"].ok > 50);
    for (m, (b, a)) in before.iter().zip(commits(&c)).enumerate() {
        assert!(
            a > b + 50,
            "master {} committed {} transactions",
            m + 1,
            a - b
        );
    }
    c.wait_idle().unwrap();
    let after_run = contents(&c);
    assert_eq!(after_run[0], after_run[1], "the masters converge");
    assert_ne!(after_run[0], after_load[0], "the updates changed the data");

    // With the daemon stopped, changes wait (the cluster is busy), and copy once it runs again.
    c.stop_node("node3", false).unwrap();
    let run = phase(
        cluster_config(&c, &random, &[], false),
        &random,
        run_plan(0.5),
    )
    .result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);
    // Busy once a change has waited longer than the lag bound (1 s): awaited, at most 10 s.
    let waiting = |b: &Vec<String>| b.iter().any(|b| b.contains("not copied within 1 s"));
    let mut busy = c.busy_now();
    for _ in 0..50 {
        if waiting(&busy) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        busy = c.busy_now();
    }
    assert!(waiting(&busy), "{busy:?}");
    c.start_node("node3").unwrap();
    c.wait_idle().unwrap();
    let restarted = contents(&c);
    assert_eq!(restarted[0], restarted[1]);

    // Another field layout is refused without --drop-schema (creating never drops data).
    let wider = workload(&[("recordcount", "500"), ("fieldcount", "12")]);
    let schema = scalebench_binding::Schema::of(&wider);
    let table_sql = scalebench_binding::registry::find("postgres")
        .and_then(|b| b.table_sql)
        .unwrap();
    let refused = c.prepare_table(&schema.table, &table_sql(&schema), false);
    assert!(
        refused.unwrap_err().to_string().contains("--drop-schema"),
        "the data stays"
    );
    assert!(contents(&c)[0].starts_with("2000 "));

    // A reset empties every master and replays nothing old onto the new data.
    let small = workload(&[("recordcount", "500"), ("dataintegrity", "true")]);
    prepare_table(&mut c, &small, true);
    assert_eq!(
        contents(&c)
            .iter()
            .map(|s| s.split(' ').next().unwrap().to_string())
            .collect::<Vec<_>>(),
        ["0", "0"]
    );
    let loaded = phase(
        cluster_config(&c, &small, &[], false),
        &small,
        load_plan(2, 50),
    )
    .result;
    assert_eq!(loaded.totals.records, 500);
    c.wait_idle().unwrap();
    let reloaded = contents(&c);
    assert!(reloaded[0].starts_with("500 "), "{reloaded:?}");
    assert_eq!(reloaded[0], reloaded[1]);
    let missing = missing_keys(cluster_config(&c, &small, &[], false), &small, 0..500);
    assert!(missing.is_empty(), "{} keys missing", missing.len());

    // Masters are fixed at `up`: adding or removing one is refused with the reason.
    assert!(c
        .add_node()
        .unwrap_err()
        .to_string()
        .contains("deploy with more nodes"));
    c.down();
    assert_space_matches_du(&c, 500);
}

/// Issue 38, Dijkshoorn's master-slave row: Bucardo with one source and one target, as Slony-I ran:
/// clients write to the master only, their reads go to the slave, and the slave ends identical.
#[test]
fn a_master_slave_sync_copies_the_masters_writes_to_the_slave_that_serves_the_reads() {
    let mut c = cluster(
        "name = \"pg-bucardo-ms\"\ndatabase = \"postgres-bucardo\"\nnodes = 2\nidle_timeout_s = 120\n[postgres]\nbucardo = \"master-slave\"\n",
    );
    let roles: Vec<&str> = c.state.nodes.iter().map(|n| n.role.as_str()).collect();
    assert_eq!(roles, ["master", "slave", "bucardo"]);
    let (master, slave) = (c.state.nodes[0].endpoint(), c.state.nodes[1].endpoint());
    let url = c.url();
    assert!(url.contains(&master) && !url.contains(&slave), "{url}");
    assert_eq!(c.binding_options().get("read_hosts"), Some(&slave));
    let w = workload(&[("recordcount", "500"), ("dataintegrity", "true")]);
    prepare_table(&mut c, &w, true);
    let loaded = phase(cluster_config(&c, &w, &[], false), &w, load_plan(2, 50)).result;
    assert_eq!((loaded.totals.records, loaded.totals.failed), (500, 0));
    c.wait_idle().unwrap();
    let copied = contents(&c);
    assert!(copied[0].starts_with("500 "), "{copied:?}");
    assert_eq!(copied[0], copied[1], "the slave holds every row");
    // A read-only run: every read on the slave (its commits grow, the master's do not by as much).
    let before = commits(&c);
    let reads = workload(&[
        ("recordcount", "500"),
        ("readproportion", "1"),
        ("updateproportion", "0"),
    ]);
    let run = phase(
        cluster_config(&c, &reads, &[], false),
        &reads,
        run_plan(1.0),
    )
    .result;
    assert_eq!(run.totals.failed, 0, "{:?}", run.errors);
    let after = commits(&c);
    let read_ops = run.operations["READ"].ok;
    assert!(
        after[1] - before[1] >= read_ops,
        "{before:?} {after:?} {read_ops}"
    );
    assert!(
        after[0] - before[0] < read_ops / 2,
        "{before:?} {after:?} {read_ops}"
    );

    // Issue 42: a rolling restart under load (the master, then the slave: `restart:NODE` is each
    // of its steps). Writes fail while the master is down and reads while the slave is; the sync
    // catches up after each (no change waiting over a second); every acknowledged write is read
    // back from the master.
    let step = operation_under_load(&mut c, "rolling-restart", 500, 100.0, false);
    assert_eq!(step.changed_nodes, ["node1", "node2"]);
    let f = step.impact.as_ref().unwrap();
    assert!(f.recovered && f.completed > 0, "{f:?}");
    assert_eq!(lost_writes(&step), 0, "{f:?}");
    c.wait_idle().unwrap();
    let copied = contents(&c);
    assert_eq!(copied[0], copied[1], "the slave caught up");
    // The slave killed under load: the slots reading there move to the master, which holds every
    // acknowledged write.
    let step = operation_under_load(&mut c, "crash:1", 500, 100.0, false);
    assert_eq!(step.changed_nodes, ["node2"]);
    let f = step.impact.as_ref().unwrap();
    assert!(f.recovered && f.completed > 0, "{f:?}");
    assert_eq!(lost_writes(&step), 0, "{f:?}");
    c.down();
}

/// Opens a binding and does nothing with it.
struct NoVisit;

impl scalebench_binding::FactoryVisitor for NoVisit {
    type Output = ();
    fn visit<F: scalebench_binding::BindingFactory>(self, _f: F) {}
}
