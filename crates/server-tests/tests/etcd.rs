//! The etcd binding against a real etcd server.

mod support;

use std::time::Duration;

use scalebench_binding::conformance::check_crud;
use scalebench_binding::etcd::EtcdFactory;
use scalebench_deploy::etcd::EtcdServer;
use support::*;

/// The shared server; it also takes TLS on [`tls_port`] (its certificate signed by [`tls()`]'s CA).
fn server() -> &'static EtcdServer {
    static SERVER: std::sync::OnceLock<&'static EtcdServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let files = tls();
        let port = tls_port();
        keep(move || {
            let tls = Some((files.cert.as_path(), files.key.as_path(), port));
            EtcdServer::start_with_tls(&servers_dir(), true, tls).expect("etcd starts")
        })
    })
}

fn tls_port() -> u16 {
    static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *PORT.get_or_init(|| scalebench_deploy::free_port().unwrap())
}

fn tls() -> &'static support::tls::TlsFiles {
    static FILES: std::sync::OnceLock<support::tls::TlsFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| support::tls::tls_files_of_server(scalebench_deploy::etcd::ACCOUNT))
}

#[test]
fn crud_semantics_linearizable_and_serializable() {
    assert_not_root(server().process.pid(), scalebench_deploy::etcd::ACCOUNT);
    for (table, consistency) in [("crud_lin", "linearizable"), ("crud_ser", "serializable")] {
        let w = workload(&[("table", table), ("fieldcount", "4")]);
        let f = EtcdFactory::open(&config(
            &server().url(),
            &w,
            &[("read_consistency", consistency)],
            false,
            true,
        ))
        .unwrap();
        block_on(check_crud(&f, "user", 4, EXACT_EXPECTATIONS))
            .unwrap_or_else(|e| panic!("{consistency}: {e}"));
    }
    let w = workload(&[]);
    let e = EtcdFactory::open(&config(
        &server().url(),
        &w,
        &[("read_consistency", "eventual")],
        false,
        false,
    ))
    .err()
    .unwrap();
    assert!(
        e.to_string().contains("etcd.read_consistency") && e.to_string().contains("'eventual'"),
        "{e}"
    );
}

#[test]
fn a_refused_connection_says_why() {
    assert_refusal_names_its_cause(EtcdFactory::open, |port| format!("etcd://127.0.0.1:{port}"));
}

#[test]
fn load_10000_records_then_workload_a_without_errors() {
    let w = workload(&[
        ("table", "e2e"),
        ("recordcount", "10000"),
        ("dataintegrity", "true"),
    ]);
    assert_loads_10000_records(&server().url(), &w, &[], (false, 100), "e2e");
    let ran = phase(
        config(&server().url(), &w, &[], false, false),
        &w,
        run_plan(2.0),
    )
    .result;
    // Concurrent updates of one hot record may lose the revision race: that is a conflict, not an error.
    let conflicts = ran.errors.get("conflict").map_or(0, |e| e.count);
    assert_eq!(ran.totals.failed, conflicts, "{:?}", ran.errors);
    assert!(ran.totals.ok > 100);
    assert_accounted(&ran);
    // --pipeline 4: each group of 4 slots on one client's HTTP/2 channel, values still verified.
    let mut piped = config(&server().url(), &w, &[], false, false);
    piped.pipeline = 4;
    let ran = phase(piped, &w, run_plan(1.0)).result;
    let conflicts = ran.errors.get("conflict").map_or(0, |e| e.count);
    assert_eq!(ran.totals.failed, conflicts, "pipelined: {:?}", ran.errors);
    assert!(ran.totals.ok > 100);
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it_as_unavailable() {
    let own = EtcdServer::start(&servers_dir(), true).expect("etcd starts");
    // etcd's client retries a vanished server until the operation timeout; concurrent updates of one
    // record may lose the revision race while paused.
    check_pause_then_crash(
        &own.process,
        &own.url(),
        Faults {
            create: false,
            drop: true,
            tolerated: &["conflict"],
            crash_classes: &["unavailable", "timeout"],
            op_timeout: Some(Duration::from_secs(1)),
        },
    );
}

/// Issue 32: with linearizable reads, the consistency probe beside a write load reads nothing stale,
/// and the independent checker (Porcupine) finds its history linearizable, counting the same reads
/// and the same stale reads; issue 61: its figures are exactly those of a database that never
/// returns an older version.
#[test]
fn linearizable_reads_are_never_stale_and_the_checker_agrees() {
    let w = workload(&[("table", "probe_lin"), ("recordcount", "200")]);
    let options = [("read_consistency", "linearizable")];
    let loaded = phase(
        config(&server().url(), &w, &options, true, true),
        &w,
        load_plan(2, 50),
    )
    .result;
    assert_eq!(loaded.totals.records, 200, "{:?}", loaded.errors);
    let (c, checked) = probe_beside_run(
        config(&server().url(), &w, &options, false, false),
        &w,
        50.0,
        2.0,
    );
    assert!(c.probe_writes >= 50 && c.probe_writes_failed == 0, "{c:?}");
    assert_eq!(c.stale_reads, 0, "{c:?}");
    assert_eq!(c.read_your_writes.violations, 0);
    assert_eq!(c.monotonic_reads.violations, 0);
    // One scheduled read per delay per write, kept or counted missed; every one fresh. Issue 61:
    // what a linearizable database must give, exactly: a stale share of 0, PBS's k-staleness 1 at
    // k = 1, Bermbach & Tai's window 0 for every write, no stale-only figure.
    for p in &c.t_visibility {
        assert_eq!(p.samples + p.missed, c.probe_writes, "{c:?}");
    }
    assert_eq!(c.stale_share().unwrap().stale, 0, "{c:?}");
    assert_eq!(c.within_k(1), Some(1.0), "{c:?}");
    assert_eq!(c.pbs_k_staleness.len(), 1, "{c:?}");
    let window = c.staleness_window_from_write_us.as_ref().unwrap();
    assert_eq!(
        (window.count, window.max_us),
        (c.followed_writes - c.never_seen, 0.0)
    );
    assert!(c.stale_write_window_from_ack_us.is_none() && c.stale_write_lag_us.is_none());
    assert!(
        c.t_visibility
            .iter()
            .all(|p| p.samples == 0 || p.consistent_fraction == 1.0),
        "{c:?}"
    );
    assert!(
        c.t_visibility
            .iter()
            .filter(|p| p.delay_ms >= 5.0)
            .all(|p| p.samples > 0),
        "{c:?}"
    );
    assert!(c.read_your_writes.checks >= c.probe_writes);
    assert_eq!(c.never_seen, 0);
    assert_eq!(checked["linearizable"], "yes", "{checked}");
    assert_eq!(checked["reads"], c.probe_reads, "{checked}");
    assert_eq!(checked["stale_reads"], c.stale_reads, "{checked}");
}

/// Issue 43: the session store's workload file on etcd: its typed values kept as text, read back
/// as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs() {
    assert_session_store_runs(EtcdFactory::open, &server().url(), &[], &["conflict"]);
}

/// Issue 43: a workload file's multi-gets on etcd (reads one after another): every record found, and the rows counted
/// against `expect` once records are deleted behind the workload's back.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    assert_multi_gets_read(EtcdFactory::open, &server().url());
}

/// Issue 43: a workload file's batches on etcd: the records read in one transaction, written in
/// another that checks none changed; a missing record fails the batch before anything is written.
#[test]
fn a_workload_files_batches_write_every_record() {
    assert_batches_write(
        EtcdFactory::open,
        &server().url(),
        MissingRecord::RollsBack,
        true,
    );
}

/// Issue 43: a sequence in one transaction on etcd: the record read once with its revision,
/// changed in memory, written in a transaction that holds only if the revision is unchanged.
#[test]
fn a_sequence_in_one_transaction_counts_every_visit_once() {
    assert_one_record_transactions(EtcdFactory::open, &server().url(), 1500.0);
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    assert_no_write_lost(&server().url(), &[], false);
}

/// etcdctl's cacert: a verified https session loads and reads; a CA that did not sign the
/// server's certificate is refused in one line naming the check; plain text to the TLS listener
/// fails in one line.
#[test]
fn tls_sessions_verify_the_servers_certificate() {
    use support::tls::*;
    server();
    let at = format!("etcd://127.0.0.1:{}", tls_port());
    assert_loads_and_reads(
        &format!("{at}?cacert={}", tls().ca.display()),
        "tls_verified",
    );
    assert_refuses_another_ca(
        EtcdFactory::open,
        &format!("{at}?cacert={}", tls().other_ca.display()),
        None,
    );
    let e = open_error(EtcdFactory::open, &at);
    assert!(
        matches!(e, scalebench_binding::BindingError::Connect { .. }),
        "{e}"
    );
    assert_eq!(e.to_string().lines().count(), 1, "{e}");
}
