//! The mysql binding against a real MariaDB server.

mod support;

use scalebench_binding::mysql::MysqlFactory;
use scalebench_deploy::mariadb::MariadbServer;
use support::*;

/// The shared server; it also takes TLS (its certificate signed by [`tls()`]'s CA).
fn server() -> &'static MariadbServer {
    static SERVER: std::sync::OnceLock<&'static MariadbServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let files = tls();
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let (cert, key, ca) = (path(&files.cert), path(&files.key), path(&files.ca));
        keep(move || {
            let settings = [
                ("ssl-cert", cert.as_str()),
                ("ssl-key", key.as_str()),
                ("ssl-ca", ca.as_str()),
            ];
            MariadbServer::start(&servers_dir(), &settings, true).expect("MariaDB starts")
        })
    })
}

fn tls() -> &'static support::tls::TlsFiles {
    static FILES: std::sync::OnceLock<support::tls::TlsFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| support::tls::tls_files_of_server(scalebench_deploy::mariadb::ACCOUNT))
}

#[test]
fn crud_semantics_prepared_and_text() {
    assert_not_root(server().process.pid(), scalebench_deploy::mariadb::ACCOUNT);
    check_crud_with_each(
        MysqlFactory::open,
        &server().url(),
        "prepared",
        &[("crud_prepared", "true"), ("crud_text", "false")],
        EXACT_EXPECTATIONS,
    );
}

#[test]
fn missing_table_and_bad_options_are_clear_errors() {
    check_missing_table_and_bad_option(
        MysqlFactory::open,
        &server().url(),
        server().password(),
        ("mysql", "prepared", "maybe"),
    );
}

#[test]
fn load_10000_records_then_workload_a_without_errors() {
    for (table, options, batch) in [
        ("e2e_batched", vec![], 100),
        ("e2e_text", vec![("prepared", "false")], 1),
    ] {
        let w = workload(&[
            ("table", table),
            ("recordcount", "10000"),
            ("dataintegrity", "true"),
        ]);
        assert_loads_10000_records(&server().url(), &w, &options, (true, batch), table);
        let rows = server()
            .sql(&format!("SELECT COUNT(*) FROM ycsb.{table}"))
            .unwrap();
        assert_eq!(rows.trim(), "10000");
        assert_runs_without_errors(&server().url(), &w, &options, 2.0, table);
    }
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it_as_unavailable() {
    let own = MariadbServer::start(&servers_dir(), &[], true).expect("MariaDB starts");
    check_pause_then_crash(&own.process, &own.url(), Faults::TABLES_FAIL_FAST);
}

/// Lourenco's measurement records: typed columns, values read back equal, a batched load complete.
#[test]
fn measurement_records_are_stored_typed() {
    let w = builtin(
        "timeseries",
        &[("table", "measurements"), ("recordcount", "2000")],
    );
    for prepared in ["true", "false"] {
        let c = config(&server().url(), &w, &[("prepared", prepared)], true, true);
        let f = scalebench_binding::mysql::MysqlFactory::open(&c).unwrap();
        block_on(scalebench_binding::conformance::check_typed_roundtrip(
            &f, &w, 7,
        ))
        .unwrap_or_else(|e| panic!("prepared={prepared}: {e}"));
    }
    let types = server()
        .sql("SELECT GROUP_CONCAT(DATA_TYPE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'measurements'")
        .unwrap();
    assert_eq!(
        types.trim(),
        "varchar,int,int,int,datetime,text,int,double,datetime"
    );
    assert_loads_all(config(&server().url(), &w, &[], true, true), &w);
}

/// The benchmark user has rights on the benchmark's database only: no `FILE` (no `INTO OUTFILE`), no
/// other database (issue 13, point 7).
#[test]
fn the_benchmark_user_has_rights_on_its_database_only() {
    let mariadb = |sql: &str| {
        std::process::Command::new("mariadb")
            .args([
                "-h127.0.0.1",
                &format!("-P{}", server().port),
                "-ubench",
                &format!("-p{}", server().password()),
                "ycsb",
                "-e",
                sql,
            ])
            .output()
            .unwrap()
    };
    let outfile = std::env::temp_dir().join(format!("scalebench-outfile-{}", std::process::id()));
    let file = mariadb(&format!("SELECT 1 INTO OUTFILE '{}'", outfile.display()));
    assert!(!file.status.success());
    assert!(!outfile.exists());
    let other = mariadb("CREATE DATABASE not_ours");
    assert!(!other.status.success());
    let own = mariadb("CREATE TABLE priv_check (x int); DROP TABLE priv_check;");
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
}

/// A statement dropped before its answer came (the operation timeout) leaves that answer on the
/// wire. Told so, the binding drops its connection: the next statement reads its own answer, not
/// the abandoned one's (an update seen as acknowledged by an earlier statement's OK).
#[test]
fn an_abandoned_statement_answer_is_not_taken_for_the_next_ones() {
    use scalebench_binding::{Binding, BindingFactory};
    use scalebench_workload::FailureClass;
    let w = workload(&[("table", "abandoned"), ("fieldcount", "2")]);
    let f = MysqlFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    let row = |v: &str| vec![(0usize, v.to_string()), (1usize, v.to_string())];
    let locked = |abandon: bool| {
        block_on(async {
            let mut b = f.connect(0).await.unwrap();
            b.insert("held", &row("before")).await.unwrap();
            // Another session holds the row's lock for a second: the binding's update waits for it.
            let holder = std::thread::spawn(|| {
                server()
                    .sql("BEGIN; SELECT YCSB_KEY FROM ycsb.abandoned WHERE YCSB_KEY = 'held' FOR UPDATE; DO SLEEP(1); COMMIT;")
                    .unwrap()
            });
            // Held: the holder's transaction sleeps.
            let held =
                "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'DO SLEEP%'";
            for _ in 0..100 {
                if server().sql(held).unwrap().trim() == "1" {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            let dropped = tokio::time::timeout(
                std::time::Duration::from_millis(200),
                b.update("held", &row("after")),
            )
            .await;
            assert!(
                dropped.is_err(),
                "the update waits for the lock: {dropped:?}"
            );
            if abandon {
                b.abandoned();
            }
            holder.join().unwrap();
            let next = b.update("no-such-key", &row("x")).await;
            b.delete("held").await.ok();
            next
        })
    };
    let next = locked(true);
    assert_eq!(next.unwrap_err().class, FailureClass::NotFound);
    // Without it, the connection's next statement reads the abandoned update's OK as its own.
    let next = locked(false);
    assert!(next.is_ok(), "{next:?}");
}

/// Issue 43: the session store's workload file on MariaDB: typed columns, a record read back as
/// written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs_with_typed_columns() {
    assert_session_store_runs(MysqlFactory::open, &server().url(), &[], &[]);
    let types = server()
        .sql("SELECT GROUP_CONCAT(DATA_TYPE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'sessions'")
        .unwrap();
    assert_eq!(
        types.trim(),
        "varchar,bigint,char,datetime,tinyint,int,decimal,blob,text,text,text,longtext,longtext"
    );
    // MariaDB's JSON is LONGTEXT checked as JSON; its functions read the list.
    let roles = server()
        .sql("SELECT CONCAT(MIN(JSON_LENGTH(roles)), ',', MAX(JSON_LENGTH(roles)), ',', SUM(JSON_VALID(preferences))) FROM ycsb.sessions")
        .unwrap();
    let rows = server().sql("SELECT COUNT(*) FROM ycsb.sessions").unwrap();
    assert_eq!(roles.trim(), format!("1,3,{}", rows.trim()));
}

/// Issue 43: a workload file's own SQL statements, prepared, bound from the generators,
/// measured under their names and judged by their `expect`, also after rows are deleted behind
/// the workload's back.
#[test]
fn a_workload_files_own_statements_run_and_are_judged() {
    let w = sql_statement_workload();
    assert_statements_run(MysqlFactory::open, &server().url(), &w);
}

/// Issue 43: a workload file's increments on MariaDB (DECIMAL): added in the database, exactly, and never
/// creating a record they miss.
#[test]
fn a_workload_files_increments_add_in_the_database() {
    assert_increments_add(
        MysqlFactory::open,
        &server().url(),
        &increment_workload("decimal"),
    );
}

/// Issue 43: a workload file's multi-gets on MariaDB (one SELECT ... IN): every record found, and the rows counted
/// against `expect` once records are deleted behind the workload's back.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    assert_multi_gets_read(MysqlFactory::open, &server().url());
}

/// Issue 43: a workload file's transactions on MariaDB: committed whole, or rolled back whole.
#[test]
fn a_workload_files_transactions_are_atomic() {
    assert_transactions_are_atomic(MysqlFactory::open, &server().url());
}

/// Issue 43: a workload file's sequence on MariaDB, in one transaction: the value one step wrote
/// is bound into the next step's statement; a failed step rolls the others back.
#[test]
fn a_workload_files_sequences_carry_what_they_read() {
    assert_sequences_carry_what_they_read(MysqlFactory::open, &server().url());
}

/// Issue 43: a workload file's batches on MariaDB (a transaction of updates).
#[test]
fn a_workload_files_batches_write_every_record() {
    assert_batches_write(
        MysqlFactory::open,
        &server().url(),
        MissingRecord::RollsBack,
        false,
    );
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    assert_no_write_lost(&server().url(), &[], true);
}

/// ssl-mode as the mysql client takes it: VERIFY_IDENTITY against ssl-ca loads and reads; a CA
/// that did not sign the server's certificate is refused in one line naming the check; DISABLED
/// for a user the server makes use TLS (REQUIRE SSL) is refused in one line.
#[test]
fn tls_sessions_follow_the_mysql_clients_ssl_mode() {
    use support::tls::*;
    let base = server().url();
    let ca = tls().ca.display().to_string();
    assert_loads_and_reads(
        &format!("{base}?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
        "tls_identity",
    );
    for mode in ["VERIFY_CA", "VERIFY_IDENTITY"] {
        assert_refuses_another_ca(
            MysqlFactory::open,
            &format!("{base}?ssl-mode={mode}&ssl-ca={}", tls().other_ca.display()),
            Some(server().password()),
        );
    }
    server()
        .sql("CREATE USER IF NOT EXISTS tls_only@'%' IDENTIFIED BY 'tls-only-pw' REQUIRE SSL; GRANT ALL ON ycsb.* TO tls_only@'%'")
        .unwrap();
    let tls_only = format!(
        "mysql://tls_only:tls-only-pw@127.0.0.1:{}/ycsb",
        server().port
    );
    let e = open_error(MysqlFactory::open, &format!("{tls_only}?ssl-mode=DISABLED")).to_string();
    assert!(e.contains("Access denied"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // The default (PREFERRED) encrypts, so the same user gets in.
    assert_loads_and_reads(&tls_only, "tls_preferred");
}
