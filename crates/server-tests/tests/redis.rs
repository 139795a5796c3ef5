//! The redis binding against real Redis servers: standalone and a 3-master Redis Cluster.

mod support;

use std::time::Duration;

use scalebench_binding::conformance::{check_crud, Expectations};
use scalebench_binding::redis::RedisFactory;
use scalebench_deploy::redis::{RedisCluster, RedisServer};
use scalebench_exec::RunPlan;
use support::*;

/// The shared standalone server; it also takes TLS on [`tls_port`] (its certificate signed by
/// [`tls()`]'s CA, no client certificate asked for).
fn standalone() -> &'static RedisServer {
    static S: std::sync::OnceLock<&'static RedisServer> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let files = tls();
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let (cert, key, ca) = (path(&files.cert), path(&files.key), path(&files.ca));
        let port = tls_port().to_string();
        keep(move || {
            let config = [
                ("tls-port", port.as_str()),
                ("tls-cert-file", cert.as_str()),
                ("tls-key-file", key.as_str()),
                ("tls-ca-cert-file", ca.as_str()),
                ("tls-auth-clients", "no"),
            ];
            RedisServer::start(&servers_dir(), &config, false, true).expect("redis starts")
        })
    })
}

fn tls_port() -> u16 {
    static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *PORT.get_or_init(|| scalebench_deploy::free_port().unwrap())
}

fn tls() -> &'static support::tls::TlsFiles {
    static FILES: std::sync::OnceLock<support::tls::TlsFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        support::tls::tls_files(
            &scalebench_deploy::Account::for_server(scalebench_deploy::redis::ACCOUNT).unwrap(),
        )
    })
}

/// The shared 3-master cluster; each node also takes TLS on a port of its own, and the cluster
/// bus runs over TLS (`tls-cluster yes`), under which Redis 7.0 tells a TLS client the nodes' TLS
/// ports and a plain client their plain ones.
fn cluster() -> &'static RedisCluster {
    &shared_cluster().cluster
}

struct SharedCluster {
    cluster: RedisCluster,
    /// The nodes' TLS ports, in the order of `cluster.nodes`.
    tls_ports: Vec<u16>,
}

fn shared_cluster() -> &'static SharedCluster {
    static C: std::sync::OnceLock<&'static SharedCluster> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let files = tls();
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let (cert, key, ca) = (path(&files.cert), path(&files.key), path(&files.ca));
        let tls_ports = std::sync::Mutex::new(Vec::new());
        keep(move || {
            let node_config = |port: u16| {
                let tls_port = scalebench_deploy::free_port().unwrap();
                tls_ports.lock().unwrap().push(tls_port);
                [
                    ("tls-port", tls_port.to_string()),
                    // The bus port follows the plain port, as it does without TLS.
                    ("cluster-port", (port + 10_000).to_string()),
                    ("tls-cluster", "yes".into()),
                    ("tls-cert-file", cert.clone()),
                    ("tls-key-file", key.clone()),
                    ("tls-ca-cert-file", ca.clone()),
                    ("tls-auth-clients", "optional".into()),
                ]
                .map(|(k, v)| (k.to_string(), v))
                .to_vec()
            };
            let cluster = RedisCluster::start_with(&servers_dir(), 3, node_config, true)
                .expect("redis cluster starts");
            SharedCluster {
                cluster,
                tls_ports: tls_ports.into_inner().unwrap(),
            }
        })
    })
}

// HSET creates a missing record, as in YCSB's Redis binding: an update cannot report "not found".
const EXPECT: Expectations = Expectations {
    update_missing_is_not_found: false,
    delete_missing_is_not_found: true,
    scan_in_key_order: true,
};

#[test]
fn crud_semantics_standalone_and_cluster() {
    assert_not_root(
        standalone().process.pid(),
        scalebench_deploy::redis::ACCOUNT,
    );
    for n in &cluster().nodes {
        assert_not_root(n.process.pid(), scalebench_deploy::redis::ACCOUNT);
    }
    let w = workload(&[("fieldcount", "4")]);
    for (url, prefix) in [
        (standalone().url(), "crud-s-"),
        (cluster().url(), "crud-c-"),
    ] {
        let f = RedisFactory::open(&config(&url, &w, &[], false, false)).unwrap();
        block_on(check_crud(&f, prefix, 4, EXPECT)).unwrap_or_else(|e| panic!("{url}: {e}"));
    }
}

#[test]
fn load_10000_records_then_workload_a_without_errors_standalone_and_cluster() {
    for (url, table) in [(standalone().url(), "e2e_s"), (cluster().url(), "e2e_c")] {
        let w = workload(&[
            ("table", table),
            ("recordcount", "10000"),
            ("dataintegrity", "true"),
            ("insertorder", "hashed"),
        ]);
        let loaded = phase(config(&url, &w, &[], false, false), &w, load_plan(2, 100)).result;
        assert_eq!(
            (loaded.totals.records, loaded.totals.failed),
            (10_000, 0),
            "{url}: {:?}",
            loaded.errors
        );
        let ran = phase(config(&url, &w, &[], false, false), &w, run_plan(2.0)).result;
        assert_eq!(ran.totals.failed, 0, "{url}: {:?}", ran.errors);
        assert!(ran.totals.ok > 100);
        assert_accounted(&ran);
    }
}

#[test]
fn cluster_routes_keys_to_all_masters() {
    let c = cluster();
    let w = workload(&[("table", "spread"), ("recordcount", "3000")]);
    phase(
        config(&c.url(), &w, &[], false, false),
        &w,
        load_plan(1, 50),
    );
    for node in &c.nodes {
        let keys = scalebench_deploy::redis::dbsize(node.port).unwrap();
        assert!(keys > 500, "node {} holds only {keys} keys", node.port);
    }
}

#[test]
fn wait_without_replicas_times_out_as_configured() {
    let w = workload(&[("fieldcount", "2")]);
    let opts = [("wait_replicas", "1"), ("wait_timeout", "50ms")];
    let f = RedisFactory::open(&config(&standalone().url(), &w, &opts, false, false)).unwrap();
    let result = block_on(async {
        use scalebench_binding::{Binding, BindingFactory};
        let mut b = f.connect(0).await.unwrap();
        let started = std::time::Instant::now();
        let r = b.update("wait-key", &vec![(0, "v".to_string())]).await;
        (r, started.elapsed())
    });
    let (r, took) = result;
    let e = r.unwrap_err();
    assert_eq!(e.class, scalebench_workload::FailureClass::Timeout, "{e}");
    assert!(
        took >= Duration::from_millis(50),
        "WAIT returned after {took:?}"
    );
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it_as_unavailable() {
    let own = RedisServer::start(&servers_dir(), &[], false, true).expect("redis starts");
    check_pause_then_crash(
        &own.process,
        &own.url(),
        Faults {
            create: false,
            drop: false,
            tolerated: &[],
            crash_classes: &["unavailable"],
            op_timeout: None,
        },
    );
}

#[test]
fn drop_schema_empties_the_database() {
    let own = RedisServer::start(&servers_dir(), &[], false, true).expect("redis starts");
    let w = workload(&[("recordcount", "100")]);
    phase(
        config(&own.url(), &w, &[], false, false),
        &w,
        load_plan(1, 10),
    );
    let size = |port| scalebench_deploy::redis::dbsize(port).unwrap();
    assert_eq!(size(own.port), 101); // 100 records and the scan index
    RedisFactory::open(&config(&own.url(), &w, &[], false, true)).unwrap();
    assert_eq!(size(own.port), 0);
}

/// Issue 32: reads on an asynchronous replica under write load are sometimes stale, and the
/// independent checker counts the same stale reads; with WAIT 1 after every write, none is.
#[test]
fn replica_reads_are_stale_under_write_load_unless_writes_wait_for_the_replica() {
    use scalebench_deploy::redis::info_field;
    let primary = RedisServer::start(&servers_dir(), &[], false, true).expect("redis starts");
    let of = format!("127.0.0.1 {}", primary.port);
    let replica = RedisServer::start(&servers_dir(), &[("replicaof", of.as_str())], false, true)
        .expect("the replica starts");
    assert!(scalebench_deploy::wait_until(
        Duration::from_secs(30),
        || {
            info_field(replica.port, "replication", "master_link_status").as_deref() == Some("up")
        }
    ));
    let read_hosts = format!("127.0.0.1:{}", replica.port);
    let waits = [("wait_replicas", "1"), ("wait_timeout", "5s")];
    let w = workload(&[
        ("table", "probe_replica"),
        ("recordcount", "500"),
        ("readproportion", "0.5"),
        ("updateproportion", "0.5"),
    ]);
    // Loaded with WAIT, so the replica holds every record before the runs read it there.
    let loaded = phase(
        config(&primary.url(), &w, &waits, false, false),
        &w,
        load_plan(2, 50),
    );
    assert_eq!(loaded.result.totals.records, 500);

    let asynchronous = config(
        &primary.url(),
        &w,
        &[("read_hosts", &read_hosts)],
        false,
        false,
    );
    let (c, checked) = probe_beside_run(asynchronous, &w, 200.0, 2.0);
    assert!(c.probe_writes >= 100 && c.probe_writes_failed == 0, "{c:?}");
    assert!(c.stale_reads > 0, "no stale read on the replica: {c:?}");
    assert_eq!(checked["reads"], c.probe_reads, "{checked}");
    assert_eq!(checked["stale_reads"], c.stale_reads, "{checked}");
    assert_eq!(checked["linearizable"], "no", "{checked}");

    let mut waiting = waits.to_vec();
    waiting.push(("read_hosts", &read_hosts));
    let (c, checked) = probe_beside_run(
        config(&primary.url(), &w, &waiting, false, false),
        &w,
        200.0,
        2.0,
    );
    assert!(c.probe_writes >= 100 && c.probe_writes_failed == 0, "{c:?}");
    assert_eq!(c.stale_reads, 0, "{c:?}");
    assert_eq!(c.read_your_writes.violations, 0, "{c:?}");
    assert_eq!(checked["stale_reads"], 0, "{checked}");
    assert_eq!(checked["linearizable"], "yes", "{checked}");

    // The verify pass after a run (`--verify-writes`) reads the URL's server, not the run's
    // replica: cut off (REPLICAOF NO ONE), the replica never gets the run's updates, and still
    // none is counted lost.
    let mut replica_con = redis::Client::open(replica.url())
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    let promoted: String = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut replica_con)
        .unwrap();
    assert_eq!(promoted, "OK");
    let mut plan = run_plan(1.0);
    plan.verify_writes = true;
    let cut_off = config(
        &primary.url(),
        &w,
        &[("read_hosts", &read_hosts)],
        false,
        false,
    );
    let ran = phase(cut_off, &w, plan).result;
    let lost = ran.lost_writes.expect("the writes verified");
    assert!(
        lost.checked > 50 && lost.lost == 0 && lost.unreadable == 0,
        "{lost:?}"
    );

    // Replicas are read only through a standalone server's URL; a bad list is named.
    let refused = |url: &str, hosts: &str| {
        RedisFactory::open(&config(url, &w, &[("read_hosts", hosts)], false, false))
            .err()
            .expect("refused")
            .to_string()
    };
    let e = refused(&cluster().url(), &read_hosts);
    assert!(e.contains("redis.read_hosts needs a redis:// URL"), "{e}");
    let e = refused(&primary.url(), "127.0.0.1");
    assert!(
        e.contains("'127.0.0.1'") && e.contains("redis.read_hosts"),
        "{e}"
    );
}

/// Issue 43: the session store's workload file on Redis Cluster: its typed values kept as text,
/// read back as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs() {
    assert_session_store_runs(RedisFactory::open, &cluster().url(), &[], &[]);
}

/// Issue 43: a workload file's increments on Redis Cluster (HINCRBY, HINCRBYFLOAT in a script on the key's node): added in the database, exactly, and never
/// creating a record they miss.
#[test]
fn a_workload_files_increments_add_in_the_database() {
    assert_increments_add(
        RedisFactory::open,
        &cluster().url(),
        &increment_workload("double"),
    );
}

/// Issue 43: a workload file's multi-gets on Redis (HMGETs in one pipeline): every record found, and the rows counted
/// against `expect` once records are deleted behind the workload's back.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    assert_multi_gets_read(RedisFactory::open, &standalone().url());
}

/// Issue 43: a workload file's batches on Redis (MULTI/EXEC).
#[test]
fn a_workload_files_batches_write_every_record() {
    assert_batches_write(
        RedisFactory::open,
        &standalone().url(),
        MissingRecord::NotChecked,
        false,
    );
}

/// Issue 43: a sequence in one transaction on Redis: the record read once, changed in memory,
/// written by one script that first checks it is unchanged; on a standalone server and on a
/// cluster (one key: the script runs on the key's node). Servers of its own: Redis has no tables,
/// so another test's drop of its schema (FLUSHDB) beside it would empty the pages it counts.
#[test]
fn a_sequence_in_one_transaction_counts_every_visit_once() {
    let server = RedisServer::start(&servers_dir(), &[], false, true).expect("redis starts");
    assert_one_record_transactions(RedisFactory::open, &server.url(), 1500.0);
    let cluster = RedisCluster::start(&servers_dir(), 3, true).expect("redis cluster starts");
    assert_one_record_transactions(RedisFactory::open, &cluster.url(), 1500.0);
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    // Database 1 of the shared server: Redis has no tables, and the deletes of this test took the
    // records of the binary's other tests in database 0 (and they this test's: 4,086 and 9 false
    // losses in CI when both ran at once).
    assert_no_write_lost(&format!("{}/1", standalone().url()), &[], false);
}

/// rediss:// as redis-cli takes it: verified against `cacert`; a CA that did not sign the server's
/// certificate is refused in one line naming the check; plain text to the TLS port fails.
#[test]
fn tls_sessions_verify_the_servers_certificate() {
    use support::tls::*;
    standalone();
    let at = format!("rediss://127.0.0.1:{}/", tls_port());
    assert_loads_and_reads(
        &format!("{at}?cacert={}", tls().ca.display()),
        "tls_verified",
    );
    assert_refuses_another_ca(
        RedisFactory::open,
        &format!("{at}?cacert={}", tls().other_ca.display()),
        None,
    );
    // redis-cli's --insecure: encrypted, the certificate not checked.
    let w = workload(&[("table", "tls_insecure")]);
    RedisFactory::open(&config(&format!("{at}?insecure"), &w, &[], false, false))
        .expect("insecure opens");
    let e = open_error(
        RedisFactory::open,
        &format!("redis://127.0.0.1:{}", tls_port()),
    );
    assert!(
        matches!(e, scalebench_binding::BindingError::Connect { .. }),
        "{e}"
    );
    assert_eq!(e.to_string().lines().count(), 1, "{e}");
}

/// rediss+cluster://: the seed, and every node the client learns of, over TLS, verified against
/// `cacert`; a client certificate the CA signed is taken, one another CA signed is refused by the
/// nodes (`tls-auth-clients optional`).
#[test]
fn cluster_tls_sessions_reach_every_node_verified() {
    use support::tls::*;
    let tls_port = shared_cluster().tls_ports[0];
    let ca = tls().ca.display().to_string();
    let at = format!("rediss+cluster://127.0.0.1:{tls_port}/?cacert={ca}");
    // Keys of their own: the other tests share the cluster (no FLUSHDB here).
    let props = [
        ("table", "tls_cluster"),
        ("recordcount", "100"),
        ("keyprefix", "tlsc"),
    ];
    let w = workload(&props);
    assert_loads_all(config(&at, &w, &[], false, false), &w);
    let c = builtin("c", &props);
    let read = phase(config(&at, &c, &[], false, false), &c, run_plan(0.5)).result;
    assert_eq!(read.totals.failed, 0, "{:?}", read.errors);
    assert!(
        read.operations.get("READ").is_some_and(|s| s.ok > 0),
        "no read"
    );
    // 100 hashed keys fall in the slots of every master: each node was reached over TLS.
    for node in &cluster().nodes {
        let mut plain = redis::Client::open(format!("redis://127.0.0.1:{}", node.port))
            .and_then(|c| c.get_connection())
            .unwrap();
        let keys: Vec<String> = redis::cmd("KEYS").arg("tlsc*").query(&mut plain).unwrap();
        assert!(
            !keys.is_empty(),
            "node {} holds none of the keys",
            node.port
        );
    }
    let (cert, key) = &tls().client;
    let with_client_cert = format!("{at}&cert={}&key={}", cert.display(), key.display());
    RedisFactory::open(&config(&with_client_cert, &w, &[], false, false))
        .expect("a client certificate the CA signed is taken");
    let (cert, key) = &tls().other_client;
    let refused = format!("{at}&cert={}&key={}", cert.display(), key.display());
    let e = open_error(RedisFactory::open, &refused);
    assert!(
        matches!(e, scalebench_binding::BindingError::Connect { .. }),
        "{e}"
    );
    let e = e.to_string();
    assert!(
        e.contains("the server refused the client certificate"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_refuses_another_ca(
        RedisFactory::open,
        &format!(
            "rediss+cluster://127.0.0.1:{tls_port}/?cacert={}",
            tls().other_ca.display()
        ),
        None,
    );
}

/// `--pipeline N` (memtier's): N of a thread's in-flight operations share one connection. The
/// truth is the server's own count of the connections it accepted (a server of this test's own,
/// so no other test's connections mix in): one per slot alone, one per group of 10 pipelined,
/// every operation still answered. A cluster runs pipelined without a failure too.
#[test]
fn a_pipelined_run_shares_each_connection_among_its_depth_of_operations() {
    let server = RedisServer::start(&servers_dir(), &[], false, true).expect("redis starts");
    let accepted = || {
        scalebench_deploy::redis::info_field(server.port, "stats", "total_connections_received")
            .and_then(|n| n.parse::<u64>().ok())
            .expect("INFO stats answers")
    };
    let w = workload(&[("table", "piped"), ("recordcount", "1000")]);
    phase(
        config(&server.url(), &w, &[], false, false),
        &w,
        load_plan(1, 100),
    );
    let (threads, in_flight) = (2, 20);
    for depth in [1, 10] {
        let before = accepted();
        let mut cfg = config(&server.url(), &w, &[], false, false);
        cfg.pipeline = depth;
        let plan = RunPlan {
            threads,
            concurrency: in_flight,
            operation_count: Some(4000),
            ..run_plan(30.0)
        };
        let ran = phase(cfg, &w, plan).result;
        assert_eq!(
            (ran.totals.ok, ran.totals.failed),
            (4000, 0),
            "depth {depth}: {:?}",
            ran.errors
        );
        // The factory's check (PING) and this count's own connection beside the slots'.
        let slots = (threads * in_flight) as u64 / u64::from(depth);
        assert_eq!(accepted() - before, slots + 2, "depth {depth}");
    }
    phase(
        config(&cluster().url(), &w, &[], false, false),
        &w,
        load_plan(1, 100),
    );
    let mut cfg = config(&cluster().url(), &w, &[], false, false);
    cfg.pipeline = 4;
    let ran = phase(cfg, &w, run_plan(1.0)).result;
    assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);
    assert!(ran.totals.ok > 100);
}
