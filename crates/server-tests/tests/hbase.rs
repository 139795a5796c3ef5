//! The hbase binding against Apache HBase 2.6.1 standalone (master, region server and ZooKeeper in
//! one JVM, from Maven Central, JDK 17) through its Thrift2 gateway.

mod support;

use std::time::Duration;

use scalebench_binding::conformance::{check_crud, Expectations};
use scalebench_binding::hbase::HbaseFactory;
use scalebench_binding::{Binding, BindingFactory};
use scalebench_deploy::hbase::{HbaseOptions, HbaseServer};
use scalebench_workload::FieldSet;
use support::*;

fn server() -> &'static HbaseServer {
    static S: std::sync::OnceLock<&'static HbaseServer> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        keep(|| {
            HbaseServer::start(&servers_dir(), &HbaseOptions::default(), true)
                .expect("HBase starts")
        })
    })
}

// Puts create missing rows and deletes of missing rows succeed: HBase cannot tell.
const EXPECT: Expectations = Expectations {
    update_missing_is_not_found: false,
    delete_missing_is_not_found: false,
    scan_in_key_order: true,
};

/// This process's threads and open descriptors.
fn threads_and_fds() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|t| t.trim().parse().ok())
        .unwrap();
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    (threads, fds)
}

/// TCP connections this machine has opened (`ActiveOpens` of /proc/net/snmp): the HBase JVMs are
/// paused or idle while it is read, so its growth is this test's connects.
fn tcp_active_opens() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap();
    let mut tcp = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next().unwrap(), tcp.next().unwrap());
    let column = names
        .split_whitespace()
        .position(|n| n == "ActiveOpens")
        .unwrap();
    values
        .split_whitespace()
        .nth(column)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn crud_semantics() {
    assert_not_root(server().process.pid(), scalebench_deploy::hbase::ACCOUNT);
    assert_not_root(server().gateway.pid(), scalebench_deploy::hbase::ACCOUNT);
    let _t = one_test_at_a_time();
    for (table, opts) in [
        ("crud", vec![]),
        ("crud_sync", vec![("durability", "fsync_wal")]),
    ] {
        let w = workload(&[("table", table), ("fieldcount", "4")]);
        let f = HbaseFactory::open(&config(&server().url(), &w, &opts, true, true)).unwrap();
        block_on(check_crud(&f, "user", 4, EXPECT)).unwrap_or_else(|e| panic!("{table}: {e}"));
    }
}

#[test]
fn load_10000_records_then_workload_a_and_e_without_errors() {
    let _t = one_test_at_a_time();
    let url = server().url();
    let w = workload(&[
        ("table", "e2e"),
        ("recordcount", "10000"),
        ("dataintegrity", "true"),
    ]);
    let opts = [("presplit_regions", "4")];
    assert_loads_10000_records(&url, &w, &opts, (true, 100), "e2e");
    assert_a_and_e_without_errors(&url, "e2e");
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it() {
    let _t = one_test_at_a_time();
    let mut own =
        HbaseServer::start(&servers_dir(), &HbaseOptions::default(), true).expect("HBase starts");
    let w = workload(&[("table", "gateway"), ("fieldcount", "1")]);
    let f = HbaseFactory::open(&config(&own.url(), &w, &[], true, true)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut b = rt.block_on(f.connect(0)).unwrap();

    // A gateway that stops answering under short operation timeouts (issue 28, point 11): each
    // slot keeps its connection and at most two abandoned ones (their sockets shut down, their
    // threads ending), never a thread and a socket per timed-out operation.
    let reads = workload(&[
        ("table", "gateway"),
        ("fieldcount", "1"),
        ("readproportion", "1"),
        ("updateproportion", "0"),
    ]);
    let mut plan = run_plan(2.5);
    plan.op_timeout = Some(Duration::from_millis(50));
    let slots = (plan.threads * plan.concurrency) as u64;
    let (threads_before, fds_before) = threads_and_fds();
    let opens_before = tcp_active_opens();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (stalled, peak) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak = (0, 0);
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let (t, f) = threads_and_fds();
                peak = (peak.0.max(t), peak.1.max(f));
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        });
        let r = run_with_pause(
            &own.gateway,
            config(&own.url(), &reads, &[], false, false),
            &reads,
            plan,
            Duration::from_millis(500),
            Duration::from_millis(1500),
        );
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (r, sampler.join().unwrap())
    });
    let timeouts = stalled.errors.get("timeout").map_or(0, |e| e.count);
    assert!(timeouts > 2 * slots, "{:?}", stalled.errors);
    // Issue 39: each slot waits before it connects again (10 ms doubling to 500 ms): about 8
    // connections per slot over the 1.5 s pause, not one per timed-out operation (30 per slot).
    let opens = tcp_active_opens() - opens_before;
    assert!(
        opens <= slots * 14 + 20,
        "{opens} connections opened for {timeouts} timed-out operations of {slots} slots"
    );
    // Worker threads and their runtimes, the sampler, the pauser, and 3 connections per slot.
    assert!(
        peak.0 <= threads_before + slots * 3 + 12,
        "{threads_before} threads grew to {} for {timeouts} timed-out operations",
        peak.0
    );
    assert!(
        peak.1 <= fds_before + slots * 3 * 2 + 24,
        "{fds_before} descriptors grew to {} for {timeouts} timed-out operations",
        peak.1
    );

    // Killed, the gateway's HBase client retries for minutes before it answers: the operations
    // caught in it end by the per-operation timeout.
    check_pause_then_crash(
        &own.process,
        &own.url(),
        Faults {
            crash_classes: &["timeout", "unavailable"],
            op_timeout: Some(Duration::from_millis(300)),
            ..Faults::TABLES_FAIL_FAST
        },
    );
    // The gateway gone too: its connections are refused, an unavailable server.
    own.gateway.kill();
    let e = rt
        .block_on(b.read("user1", FieldSet::All, &mut Vec::new()))
        .unwrap_err();
    assert_eq!(
        e.class,
        scalebench_workload::FailureClass::Unavailable,
        "{e}"
    );
}

#[test]
fn client_buffering_holds_puts_until_the_buffer_fills_or_the_binding_ends() {
    let _t = one_test_at_a_time();
    let url = server().url();
    let w = workload(&[("table", "buffered"), ("fieldcount", "1")]);
    let opts = [("client_buffering", "true"), ("write_buffer_bytes", "1000")];
    let f = HbaseFactory::open(&config(&url, &w, &opts, true, true)).unwrap();
    let plain = HbaseFactory::open(&config(&url, &w, &[], false, false)).unwrap();
    block_on(async {
        let mut buffered = f.connect(0).await.unwrap();
        let mut reader = plain.connect(0).await.unwrap();
        let mut out = Vec::new();
        // A put of ~30 bytes stays in the 1,000-byte buffer: not on the server yet.
        buffered
            .insert("k0", &vec![(0, "v".repeat(10))])
            .await
            .unwrap();
        let e = reader
            .read("k0", FieldSet::All, &mut out)
            .await
            .unwrap_err();
        assert_eq!(e.class, scalebench_workload::FailureClass::NotFound);
        // Enough puts to fill it: all sent.
        for i in 1..100 {
            buffered
                .insert(&format!("k{i}"), &vec![(0, "v".repeat(10))])
                .await
                .unwrap();
        }
        reader.read("k0", FieldSet::All, &mut out).await.unwrap();
        // The last ones are sent when the binding ends.
        buffered
            .insert("last", &vec![(0, "v".into())])
            .await
            .unwrap();
        assert!(reader.read("last", FieldSet::All, &mut out).await.is_err());
        buffered.cleanup().await.unwrap();
        reader.read("last", FieldSet::All, &mut out).await.unwrap();
    });
}

#[test]
fn a_missing_table_and_bad_options_are_named() {
    let _t = one_test_at_a_time();
    let w = workload(&[("table", "no_such_table")]);
    assert_missing_table_named(HbaseFactory::open, &server().url(), &w);
    for (option, bad) in [
        ("durability", "always"),
        ("compression", "zip"),
        ("bloom_filter", "yes"),
        ("presplit_regions", "0"),
        ("column_family", "a:b"),
    ] {
        let e = HbaseFactory::open(&config(&server().url(), &w, &[(option, bad)], true, false))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&format!("hbase.{option}")) && e.contains(bad),
            "{e}"
        );
    }
}

/// The table's directory under the server's root directory (namespace `default`).
fn table_dir(table: &str) -> std::path::PathBuf {
    server().root_dir.join("data/default").join(table)
}

/// The table descriptor HBase keeps on disk (a protobuf holding the family's attributes as text).
fn table_info(table: &str) -> Vec<u8> {
    let desc = table_dir(table).join(".tabledesc");
    let file = std::fs::read_dir(&desc)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tableinfo")
        })
        .expect("a table descriptor");
    std::fs::read(file).unwrap()
}

#[test]
fn table_options_shape_the_table_it_creates() {
    let _t = one_test_at_a_time();
    let w = workload(&[("table", "shaped"), ("fieldcount", "1")]);
    let opts = [
        ("compression", "GZ"),
        ("bloom_filter", "ROWCOL"),
        ("in_memory", "true"),
        ("presplit_regions", "5"),
        ("column_family", "cf"),
    ];
    HbaseFactory::open(&config(&server().url(), &w, &opts, true, true)).unwrap();
    let info = table_info("shaped");
    for text in [
        "cf",
        "COMPRESSION",
        "GZ",
        "BLOOMFILTER",
        "ROWCOL",
        "IN_MEMORY",
    ] {
        assert!(contains(&info, text), "{text} not in the descriptor");
    }
    // One directory per region (besides the descriptor's and HBase's temporary one).
    let regions = std::fs::read_dir(table_dir("shaped"))
        .unwrap()
        .filter(|e| {
            !e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(regions, 5);
    // The defaults: no compression, a row bloom filter, one region.
    HbaseFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    let info = table_info("shaped");
    assert!(!contains(&info, "GZ") && !contains(&info, "ROWCOL"));
}

/// Bytes of the write-ahead logs under the server's root directory.
fn wal_bytes() -> u64 {
    du_bytes(&server().root_dir.join("WALs"))
}

#[test]
fn skip_wal_writes_no_log_and_the_other_durabilities_do() {
    let _t = one_test_at_a_time();
    let w = workload(&[
        ("table", "durable"),
        ("fieldcount", "1"),
        ("fieldlength", "1000"),
    ]);
    HbaseFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    let mut grew = Vec::new();
    for durability in ["skip_wal", "sync_wal", "fsync_wal"] {
        let f = HbaseFactory::open(&config(
            &server().url(),
            &w,
            &[("durability", durability)],
            false,
            false,
        ))
        .unwrap();
        let before = wal_bytes();
        block_on(async {
            let mut b = f.connect(0).await.unwrap();
            for i in 0..300 {
                b.insert(&format!("{durability}{i}"), &vec![(0, "x".repeat(1000))])
                    .await
                    .unwrap();
            }
        });
        grew.push(wal_bytes().saturating_sub(before));
    }
    // 300 KB of values: logged in full by the synced ones, not at all by skip_wal.
    assert!(
        grew[0] < 100_000,
        "skip_wal: the log grew by {} bytes",
        grew[0]
    );
    assert!(grew[1] >= 290_000 && grew[2] >= 290_000, "{grew:?}");
}

#[test]
fn scan_caching_fetches_that_many_rows_per_round_trip() {
    let _t = one_test_at_a_time();
    let w = workload(&[("table", "cached"), ("fieldcount", "1")]);
    let f = HbaseFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    block_on(async {
        let mut b = f.connect(0).await.unwrap();
        for i in 0..30 {
            b.insert(&format!("row{i:02}"), &vec![(0, "v".into())])
                .await
                .unwrap();
        }
    });
    for (caching, fetches) in [("0", 0), ("4", 5), ("25", 1)] {
        let (port, sent) = recording_proxy(server().ports.thrift);
        let url = format!("hbase://127.0.0.1:{port}");
        let f = HbaseFactory::open(&config(
            &url,
            &w,
            &[("scan_caching", caching)],
            false,
            false,
        ))
        .unwrap();
        let rows = block_on(async {
            let mut b = f.connect(0).await.unwrap();
            let mut out = Vec::new();
            b.scan("row05", 20, FieldSet::All, &mut out).await.unwrap();
            out.into_iter().map(|(k, _)| k).collect::<Vec<_>>()
        });
        assert_eq!(rows.len(), 20, "scan_caching={caching}");
        assert_eq!((rows[0].as_str(), rows[19].as_str()), ("row05", "row24"));
        let bytes = sent.lock().unwrap().clone();
        // 20 rows: in 4+4+4+4+4, or 20 at once; 0 is one getScannerResults.
        assert_eq!(
            occurrences(&bytes, "getScannerRows"),
            fetches,
            "scan_caching={caching}"
        );
        assert_eq!(
            occurrences(&bytes, "getScannerResults"),
            usize::from(caching == "0")
        );
    }
}

/// Issue 43: the session store's workload file on HBase: its typed values kept as bytes of their
/// text, read back as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs() {
    let _t = one_test_at_a_time();
    assert_session_store_runs(HbaseFactory::open, &server().url(), &[], &[]);
}

/// Issue 43: a workload file's multi-gets (one getMultiple) and batches (one putMultiple) on
/// HBase.
#[test]
fn a_workload_files_multi_gets_and_batches_run() {
    let _t = one_test_at_a_time();
    assert_multi_gets_read(HbaseFactory::open, &server().url());
    assert_batches_write(
        HbaseFactory::open,
        &server().url(),
        MissingRecord::NotChecked,
        false,
    );
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    let _t = one_test_at_a_time();
    // HBase orders a row's versions by timestamp alone unless told otherwise: a delete hides a
    // put made after it in the same millisecond, an acknowledged write HBase itself loses (seen
    // here, 1 of 126 keys in workload A). Its newer semantics keep it.
    assert_no_write_lost(&server().url(), &[("new_version_behavior", "true")], true);
}
