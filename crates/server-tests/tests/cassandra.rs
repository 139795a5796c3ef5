//! The cassandra binding against a real Apache Cassandra 5.0 node (cassandra-all from Maven Central,
//! JDK 17). Tests share one node and take turns (one of them pauses it).

mod support;

use std::time::Duration;

use scalebench_binding::cassandra::CassandraFactory;
use scalebench_binding::conformance::Expectations;
use scalebench_deploy::cassandra::{classpath, CassandraNode, CassandraOptions};
use scalebench_deploy::free_port;
use support::*;

/// The shared node; its native port also takes TLS (client encryption, optional), with a
/// certificate signed by [`tls()`]'s CA, from clients with a certificate that CA signed.
fn node() -> &'static CassandraNode {
    static NODE: std::sync::OnceLock<&'static CassandraNode> = std::sync::OnceLock::new();
    NODE.get_or_init(|| {
        let options = CassandraOptions {
            overrides: vec![("client_encryption_options".into(), client_encryption(tls()))],
            ..CassandraOptions::default()
        };
        keep(move || {
            let cp = classpath().expect("Cassandra's classpath resolves");
            let (storage, native) = (free_port().unwrap(), free_port().unwrap());
            CassandraNode::start(&servers_dir(), &cp, 1, storage, native, &options, true)
                .expect("Cassandra starts")
        })
    })
}

fn tls() -> &'static support::tls::TlsFiles {
    static FILES: std::sync::OnceLock<support::tls::TlsFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        support::tls::tls_files(
            &scalebench_deploy::Account::for_server(scalebench_deploy::cassandra::ACCOUNT).unwrap(),
        )
    })
}

/// cassandra.yaml's client encryption on the native port beside plain text (`optional`), with
/// the PEM files as they are (Cassandra 4.1+'s PEMBasedSslContextFactory: no keytool, no JKS);
/// a TLS client must show a certificate the CA in `truststore` signed.
fn client_encryption(files: &support::tls::TlsFiles) -> String {
    format!(
        "
  enabled: true
  optional: true
  require_client_auth: true
  keystore: {}
  truststore: {}
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory",
        files.key_and_cert.display(),
        files.ca.display()
    )
}

// Upserts and tombstones: Cassandra cannot report a missing record on update or delete; scans follow
// token order.
const EXPECT: Expectations = Expectations {
    update_missing_is_not_found: false,
    delete_missing_is_not_found: false,
    scan_in_key_order: false,
};

#[test]
fn crud_semantics_prepared_and_unprepared() {
    assert_not_root(node().process.pid(), scalebench_deploy::cassandra::ACCOUNT);
    let _t = one_test_at_a_time();
    check_crud_with_each(
        CassandraFactory::open,
        &node().url("ycsb"),
        "prepared",
        &[("crud_prepared", "true"), ("crud_text", "false")],
        EXPECT,
    );
}

#[test]
fn load_10000_records_then_workload_a_without_errors() {
    let _t = one_test_at_a_time();
    for (table, opts) in [
        ("e2e_batch", vec![]),
        (
            "e2e_concurrent",
            vec![
                ("load_mode", "concurrent"),
                ("compaction", "LeveledCompactionStrategy"),
            ],
        ),
    ] {
        let w = workload(&[
            ("table", table),
            ("recordcount", "10000"),
            ("dataintegrity", "true"),
        ]);
        assert_loads_10000_records(&node().url("ycsb"), &w, &opts, (true, 50), table);
        assert_runs_without_errors(&node().url("ycsb"), &w, &opts, 3.0, table);
    }
}

#[test]
fn consistency_all_with_more_replicas_than_nodes_is_unavailable() {
    let _t = one_test_at_a_time();
    let w = workload(&[
        ("table", "rf2"),
        ("fieldcount", "2"),
        ("recordcount", "100"),
    ]);
    // Keyspace with RF 2 on a one-node ring: ONE succeeds, ALL cannot.
    let url = node().url("ycsb_rf2");
    let ok = phase(
        config(&url, &w, &[("replication_factor", "2")], true, true),
        &w,
        load_plan(1, 1),
    )
    .result;
    assert_eq!(
        (ok.totals.records, ok.totals.failed),
        (100, 0),
        "{:?}",
        ok.errors
    );
    let mut plan = run_plan(1.0);
    plan.threads = 1;
    plan.concurrency = 1;
    let all = phase(
        config(
            &url,
            &w,
            &[("read_consistency", "ALL"), ("write_consistency", "ALL")],
            false,
            false,
        ),
        &w,
        plan,
    )
    .result;
    assert_eq!(all.totals.ok, 0);
    assert!(
        all.errors.get("unavailable").is_some_and(|e| e.count > 0),
        "errors: {:?}",
        all.errors
    );
    let bad = CassandraFactory::open(&config(
        &url,
        &w,
        &[("read_consistency", "MOST")],
        false,
        false,
    ))
    .err()
    .unwrap();
    assert!(
        bad.to_string().contains("cassandra.read_consistency")
            && bad.to_string().contains("'MOST'"),
        "{bad}"
    );
}

#[test]
fn insert_if_not_exists_reports_a_second_insert_as_conflict() {
    let _t = one_test_at_a_time();
    let w = workload(&[("table", "lwt"), ("fieldcount", "2")]);
    let f = CassandraFactory::open(&config(
        &node().url("ycsb"),
        &w,
        &[("insert_if_not_exists", "true")],
        true,
        true,
    ))
    .unwrap();
    block_on(async {
        use scalebench_binding::{Binding, BindingFactory};
        let mut b = f.connect(0).await.unwrap();
        let v = vec![(0usize, "a".to_string()), (1, "b".to_string())];
        b.insert("lwt-key", &v).await.unwrap();
        let e = b.insert("lwt-key", &v).await.unwrap_err();
        assert_eq!(e.class, scalebench_workload::FailureClass::Conflict, "{e}");
    });
}

#[test]
fn a_paused_node_stalls_the_run_without_failures() {
    let _t = one_test_at_a_time();
    let w = workload(&[("table", "faults"), ("recordcount", "2000")]);
    let url = node().url("ycsb");
    phase(config(&url, &w, &[], true, true), &w, load_plan(1, 50));
    let paused = run_with_pause(
        &node().process,
        config(&url, &w, &[], false, false),
        &w,
        run_plan(4.0),
        Duration::from_millis(1000),
        Duration::from_millis(1500),
    );
    let max = max_latency_us(&paused);
    assert!(
        max >= 1_000_000.0,
        "the pause does not show: max latency {max} us"
    );
    // Requests in flight during the pause may time out on the server side (5 s); none is lost.
    let other = paused.totals.failed - paused.errors.get("timeout").map_or(0, |e| e.count);
    assert_eq!(other, 0, "{:?}", paused.errors);
    assert_accounted(&paused);
}

/// Lourenco's measurement records: typed columns (int, timestamp, double), values read back equal,
/// a batched load complete.
#[test]
fn measurement_records_are_stored_typed() {
    let _t = one_test_at_a_time();
    let w = builtin(
        "timeseries",
        &[("table", "measurements"), ("recordcount", "2000")],
    );
    for prepared in ["true", "false"] {
        let c = config(
            &node().url("ycsb"),
            &w,
            &[("prepared", prepared)],
            true,
            prepared == "true",
        );
        let f = CassandraFactory::open(&c).unwrap();
        block_on(scalebench_binding::conformance::check_typed_roundtrip(
            &f, &w, 11,
        ))
        .unwrap_or_else(|e| panic!("prepared={prepared}: {e}"));
    }
    // The same table seen as YCSB's text schema: text bound to its int columns is refused, which
    // only a typed column does.
    let text = workload(&[("table", "measurements"), ("fieldcount", "8")]);
    let mut c = config(&node().url("ycsb"), &text, &[], false, false);
    c.schema = scalebench_binding::Schema::text("measurements", w.field_names.clone());
    let f = CassandraFactory::open(&c).unwrap();
    let refused = block_on(async {
        use scalebench_binding::{Binding, BindingFactory};
        let mut b = f.connect(0).await.unwrap();
        b.insert("some-id", &vec![(0, "not-an-int".to_string())])
            .await
    });
    assert!(refused.is_err(), "a text value went into an int column");
    assert_loads_all(config(&node().url("ycsb"), &w, &[], true, true), &w);
}

/// Issue 43: the session store's workload file on Cassandra: typed columns (bigint, uuid,
/// timestamp, boolean), a record read back as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs_with_typed_columns() {
    let _t = one_test_at_a_time();
    assert_session_store_runs(CassandraFactory::open, &node().url("ycsb"), &[], &[]);
    // Unprepared: each value written into the statement as a CQL literal, lists and maps too.
    assert_session_store_runs(
        CassandraFactory::open,
        &node().url("ycsb"),
        &[("prepared", "false")],
        &[],
    );
}

/// Issue 43: a workload file's own CQL statements, prepared, bound from the generators,
/// measured under their names and judged by their `expect`, also after rows are deleted behind
/// the workload's back.
#[test]
fn a_workload_files_own_statements_run_and_are_judged() {
    let w = statement_workload(
        "cql",
        "SELECT total FROM orders WHERE order_id = :key",
        "UPDATE orders SET total = :total WHERE order_id = :key IF EXISTS",
    );
    assert_statements_run(CassandraFactory::open, &node().url("ycsb"), &w);
}

/// Issue 43: a workload file's batches on Cassandra (a logged BATCH).
#[test]
fn a_workload_files_batches_write_every_record() {
    let _t = one_test_at_a_time();
    assert_batches_write(
        CassandraFactory::open,
        &node().url("ycsb"),
        MissingRecord::NotChecked,
        false,
    );
}

/// Issue 43: a workload file's multi-gets on Cassandra: one SELECT ... IN.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    let _t = one_test_at_a_time();
    assert_multi_gets_read(CassandraFactory::open, &node().url("ycsb"));
}

/// Issue 43: a sequence in one transaction on Cassandra: the record read once, changed in memory,
/// written in one lightweight transaction conditional on every column as read.
#[test]
fn a_sequence_in_one_transaction_counts_every_visit_once() {
    let _t = one_test_at_a_time();
    // Paxos rounds: about 100 a second from 8 slots on one debug-built client here.
    assert_one_record_transactions(CassandraFactory::open, &node().url("ycsb"), 150.0);
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    let _t = one_test_at_a_time();
    assert_no_write_lost(&node().url("ycsb"), &[], true);
}

/// Client encryption as cqlsh takes it (`ssl`, `certfile`, `validate`, `usercert`, `userkey`) on
/// the shared node's native port: a verified session loads and reads; a CA that did not sign the
/// node's certificate is refused in one line naming the check, without the URL's password; the
/// node refuses a client certificate another CA signed; plain text still works beside TLS on the
/// same port (`optional: true`).
#[test]
fn tls_sessions_verify_the_nodes_certificate() {
    use support::tls::*;
    let _t = one_test_at_a_time();
    let native = node().native_port;
    let user = |(cert, key): &(std::path::PathBuf, std::path::PathBuf)| {
        format!("usercert={}&userkey={}", cert.display(), key.display())
    };
    let me = user(&tls().client);
    let ca = tls().ca.display().to_string();
    assert_loads_and_reads(
        &format!("{}?ssl=true&certfile={ca}&{me}", node().url("ycsb")),
        "tls_verified",
    );
    let other = tls().other_ca.display().to_string();
    assert_refuses_another_ca(
        CassandraFactory::open,
        &format!("cassandra://bench:s3cret@127.0.0.1:{native}/ycsb?ssl=true&certfile={other}&{me}"),
        Some("s3cret"),
    );
    let stranger = user(&tls().other_client);
    let e = open_error(
        CassandraFactory::open,
        &format!("{}?certfile={ca}&{stranger}", node().url("ycsb")),
    );
    assert!(
        matches!(e, scalebench_binding::BindingError::Connect { .. }),
        "{e}"
    );
    // Cassandra answers a client certificate it refuses with TLS 1.3's internal_error alert,
    // which names no cause (rustls: "received fatal alert: InternalError").
    assert_eq!(e.to_string().lines().count(), 1, "{e}");
    // cqlsh's validate = false: encrypted, the certificate not checked.
    let w = workload(&[("table", "tls_verified")]);
    let unchecked = format!("{}?ssl=true&validate=false&{me}", node().url("ycsb"));
    CassandraFactory::open(&config(&unchecked, &w, &[], false, false))
        .expect("validate=false opens");
    CassandraFactory::open(&config(&node().url("ycsb"), &w, &[], false, false))
        .expect("plain text beside TLS");
}
