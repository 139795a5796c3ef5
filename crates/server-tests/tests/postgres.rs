//! The postgres binding against a real PostgreSQL server.

mod support;

use scalebench_binding::postgres::PostgresFactory;
use scalebench_deploy::postgres::PostgresServer;
use scalebench_exec::RunPlan;
use support::*;

/// The shared server; it also takes TLS (its certificate signed by [`tls()`]'s CA), and refuses
/// plain connections to database `tls_only` (pg_hba's `hostnossl ... reject`).
fn server() -> &'static PostgresServer {
    static SERVER: std::sync::OnceLock<&'static PostgresServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let files = tls();
        let hba = files.dir.join("pg_hba.conf");
        std::fs::write(
            &hba,
            "local all all trust\n\
             hostnossl tls_only all 127.0.0.1/32 reject\n\
             host all all 127.0.0.1/32 scram-sha-256\n",
        )
        .unwrap();
        scalebench_deploy::postgres::account()
            .unwrap()
            .give(&files.dir)
            .unwrap();
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let (cert, key, hba) = (path(&files.cert), path(&files.key), path(&hba));
        keep(move || {
            let settings = [
                ("ssl", "on"),
                ("ssl_cert_file", cert.as_str()),
                ("ssl_key_file", key.as_str()),
                ("hba_file", hba.as_str()),
            ];
            PostgresServer::start(&servers_dir(), &settings, true).expect("PostgreSQL starts")
        })
    })
}

fn tls() -> &'static support::tls::TlsFiles {
    static FILES: std::sync::OnceLock<support::tls::TlsFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| support::tls::tls_files(&scalebench_deploy::postgres::account().unwrap()))
}

#[test]
fn crud_semantics_prepared_and_unprepared() {
    assert_not_root(server().process.pid(), scalebench_deploy::postgres::ACCOUNT);
    check_crud_with_each(
        PostgresFactory::open,
        &server().url(),
        "prepared",
        &[("crud_prepared", "true"), ("crud_unprepared", "false")],
        EXACT_EXPECTATIONS,
    );
}

#[test]
fn missing_table_is_a_clear_error_and_bad_options_are_named() {
    check_missing_table_and_bad_option(
        PostgresFactory::open,
        &server().url(),
        server().password(),
        ("postgres", "batch_mode", "carrier-pigeon"),
    );
}

#[test]
fn wrong_password_fails_to_connect_without_printing_it() {
    let w = workload(&[]);
    let url = server()
        .url()
        .replace(server().password(), "wrong-secret-123");
    let e = PostgresFactory::open(&config(&url, &w, &[], true, false))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cannot connect"), "{e}");
    assert!(!e.contains("wrong-secret-123"), "password leaked: {e}");
}

#[test]
fn a_refused_connection_says_why() {
    assert_refusal_names_its_cause(PostgresFactory::open, |port| {
        format!("postgres://bench:secret@127.0.0.1:{port}/ycsb")
    });
}

#[test]
fn load_10000_records_then_workload_a_without_errors_in_every_batch_mode() {
    for (table, options, batch) in [
        ("e2e_copy", vec![("batch_mode", "copy")], 100),
        ("e2e_multirow", vec![("batch_mode", "multirow")], 50),
        ("e2e_single_text", vec![("prepared", "false")], 1),
    ] {
        let w = workload(&[
            ("table", table),
            ("recordcount", "10000"),
            ("dataintegrity", "true"),
        ]);
        assert_loads_10000_records(&server().url(), &w, &options, (true, batch), table);
        let ran = assert_runs_without_errors(&server().url(), &w, &options, 2.0, table);
        assert_eq!(
            ran.operations.keys().collect::<Vec<_>>(),
            ["READ", "UPDATE"]
        );
    }
}

#[test]
fn synchronous_commit_is_set_per_session() {
    let w = workload(&[("table", "sync_commit"), ("recordcount", "1000")]);
    let opts = [("synchronous_commit", "off")];
    let loaded = phase(
        config(&server().url(), &w, &opts, true, true),
        &w,
        load_plan(1, 1),
    )
    .result;
    assert_eq!((loaded.totals.records, loaded.totals.failed), (1000, 0));
    let e = PostgresFactory::open(&config(
        &server().url(),
        &w,
        &[("synchronous_commit", "sometimes")],
        false,
        false,
    ))
    .err()
    .unwrap();
    assert!(e.to_string().contains("'sometimes'"));
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it_as_unavailable() {
    let own = PostgresServer::start(&servers_dir(), &[], true).expect("PostgreSQL starts");
    check_pause_then_crash(&own.process, &own.url(), Faults::TABLES_FAIL_FAST);
}

/// Lourenco's measurement records: typed columns, values read back equal, a batched load complete.
#[test]
fn measurement_records_are_stored_typed() {
    let w = builtin(
        "timeseries",
        &[("table", "measurements"), ("recordcount", "2000")],
    );
    let f = PostgresFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    block_on(scalebench_binding::conformance::check_typed_roundtrip(
        &f, &w, 1_000_000,
    ))
    .unwrap();
    let types = server()
        .sql("SELECT string_agg(data_type, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'measurements'")
        .unwrap();
    assert_eq!(
        types.trim(),
        "character varying,integer,integer,integer,timestamp without time zone,text,integer,double precision,timestamp without time zone"
    );
    for mode in ["multirow", "copy"] {
        let c = config(&server().url(), &w, &[("batch_mode", mode)], true, true);
        assert_loads_all(c, &w);
        let n = server().sql("SELECT count(*) FROM measurements").unwrap();
        assert_eq!(n.trim(), "2000", "{mode}");
    }
}

/// The benchmark user is no superuser: a shell through `COPY ... TO PROGRAM` is refused (issue 13,
/// point 7), while its own tables are its to create and drop.
#[test]
fn the_benchmark_user_has_no_superuser_rights() {
    let psql = |sql: &str| {
        std::process::Command::new("psql")
            .args([
                server().url().as_str(),
                "-X",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .output()
            .unwrap()
    };
    let shell = psql("COPY (SELECT 1) TO PROGRAM 'true'");
    assert!(!shell.status.success());
    let err = String::from_utf8_lossy(&shell.stderr);
    assert!(
        err.contains("permission denied") || err.contains("must be superuser"),
        "{err}"
    );
    let own = psql("CREATE TABLE priv_check (x int); DROP TABLE priv_check;");
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
}

/// Issue 43: the session store's workload file on PostgreSQL: its typed columns as PostgreSQL's
/// types, a record read back as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs_with_typed_columns() {
    assert_session_store_runs(PostgresFactory::open, &server().url(), &[], &[]);
    // The file's secondary index, made with the table.
    let index = server()
        .sql("SELECT indexdef FROM pg_indexes WHERE indexname = 'sessions_by_user'")
        .unwrap();
    assert!(index.contains("(\"user\")"), "{index}");
    let types = server()
        .sql("SELECT string_agg(data_type, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'sessions'")
        .unwrap();
    assert_eq!(
        types.trim(),
        "character varying,bigint,uuid,timestamp without time zone,boolean,integer,numeric,bytea,text,text,text,json,json"
    );
    // The list and the map are JSON PostgreSQL reads: every session has 1 to 3 roles, and its
    // preferences are small numbers.
    let roles = server()
        .sql("SELECT min(json_array_length(roles)) || ',' || max(json_array_length(roles)) FROM sessions")
        .unwrap();
    assert_eq!(roles.trim(), "1,3");
    let numbers = server()
        .sql("SELECT count(*) FROM sessions, json_each_text(preferences) AS p WHERE p.value::int NOT BETWEEN 0 AND 20 OR p.key NOT IN ('font_size', 'page_size', 'theme')")
        .unwrap();
    assert_eq!(numbers.trim(), "0");
}

/// Issue 43: a workload file's own SQL statements, prepared, bound from the generators,
/// measured under their names and judged by their `expect`, also after rows are deleted behind
/// the workload's back.
#[test]
fn a_workload_files_own_statements_run_and_are_judged() {
    let w = sql_statement_workload();
    assert_statements_run(PostgresFactory::open, &server().url(), &w);
}

/// Issue 43: a workload file's increments on PostgreSQL (NUMERIC): added in the database, exactly, and never
/// creating a record they miss.
#[test]
fn a_workload_files_increments_add_in_the_database() {
    assert_increments_add(
        PostgresFactory::open,
        &server().url(),
        &increment_workload("decimal"),
    );
}

/// Issue 43: a workload file's multi-gets on PostgreSQL (one prepared SELECT ... IN): every record found, and the rows counted
/// against `expect` once records are deleted behind the workload's back.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    assert_multi_gets_read(PostgresFactory::open, &server().url());
}

/// Issue 43: a workload file's transactions on PostgreSQL: committed whole, or rolled back whole.
#[test]
fn a_workload_files_transactions_are_atomic() {
    assert_transactions_are_atomic(PostgresFactory::open, &server().url());
}

/// Issue 43: a workload file's sequence on PostgreSQL, in one transaction: the value one step wrote
/// is bound into the next step's statement; a failed step rolls the others back.
#[test]
fn a_workload_files_sequences_carry_what_they_read() {
    assert_sequences_carry_what_they_read(PostgresFactory::open, &server().url());
}

/// Issue 43: a workload file's batches on PostgreSQL (a transaction of updates).
#[test]
fn a_workload_files_batches_write_every_record() {
    assert_batches_write(
        PostgresFactory::open,
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

/// libpq's sslmode: verify-full checks chain and name, verify-ca the chain only, require nothing;
/// a CA that did not sign the server's certificate is refused in one line naming the check.
#[test]
fn tls_sessions_follow_libpq_sslmode() {
    use support::tls::*;
    let base = server().url();
    let ca = tls().ca.display().to_string();
    let other = tls().other_ca.display().to_string();
    assert_loads_and_reads(
        &format!("{base}?sslmode=verify-full&sslrootcert={ca}"),
        "tls_full",
    );
    // The server's certificate names localhost and 127.0.0.1, not db.invalid: verify-ca takes it.
    let elsewhere = base.replace("@127.0.0.1:", "@db.invalid:") + "?hostaddr=127.0.0.1";
    // Opening connects and creates the table: the session was made (one load and read above is
    // enough to show data goes through; the suite's time is short).
    let opens = |url: String| {
        let w = workload(&[("table", "tls_opened")]);
        PostgresFactory::open(&config(&url, &w, &[], true, true)).expect("opens");
    };
    opens(format!("{elsewhere}&sslmode=verify-ca&sslrootcert={ca}"));
    let e = open_error(
        PostgresFactory::open,
        &format!("{elsewhere}&sslmode=verify-full&sslrootcert={ca}"),
    )
    .to_string();
    assert_names_certificate_verification(&e);
    assert!(e.contains("db.invalid"), "{e}");
    // require: encrypted, not verified (a root certificate would make it verify-ca, as in libpq).
    opens(format!("{base}?sslmode=require"));
    for mode in ["require", "verify-ca", "verify-full"] {
        assert_refuses_another_ca(
            PostgresFactory::open,
            &format!("{base}?sslmode={mode}&sslrootcert={other}"),
            Some(server().password()),
        );
    }
}

#[test]
fn tls_that_cannot_be_had_is_refused_clearly() {
    use support::tls::*;
    let tls_only = server().url().replace("/ycsb", "/tls_only");
    let e = open_error(
        PostgresFactory::open,
        &format!("{tls_only}?sslmode=disable"),
    )
    .to_string();
    assert!(e.contains("no encryption"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // verify-ca without a root certificate: libpq's refusal, before any connection (exit 2).
    let e = open_error(
        PostgresFactory::open,
        &format!("{}?sslmode=verify-ca", server().url()),
    );
    assert!(
        matches!(&e, scalebench_binding::BindingError::Config(m) if m.contains("needs a root certificate")),
        "{e}"
    );
}

/// `--pipeline N` on tokio-postgres: N of a thread's in-flight operations share one client. The
/// truth is the server's own list of sessions, counted while the run holds them (every slot
/// connects before the common start and keeps its connection to the end): 16 alone, 4 in groups
/// of 4, every operation answered. A workload whose operation holds its connection from BEGIN to
/// COMMIT is refused with the pipeline, naming the operation.
#[test]
fn a_pipelined_run_shares_each_client_among_its_depth_of_operations() {
    let w = workload(&[("table", "piped"), ("recordcount", "1000")]);
    phase(
        config(&server().url(), &w, &[], true, true),
        &w,
        load_plan(1, 100),
    );
    let url = format!("{}?application_name=piped", server().url());
    for depth in [1, 4] {
        let mut cfg = config(&url, &w, &[], false, false);
        cfg.pipeline = depth;
        let plan = RunPlan {
            threads: 2,
            concurrency: 8,
            ..run_plan(1.5)
        };
        let sessions = || {
            let sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'piped'";
            server().sql(sql).unwrap().trim().parse::<u64>().unwrap()
        };
        let (ran, most) = std::thread::scope(|s| {
            let run = s.spawn(|| phase(cfg, &w, plan).result);
            let mut most = 0;
            while !run.is_finished() {
                most = most.max(sessions());
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            (run.join().unwrap(), most)
        });
        assert_eq!(ran.totals.failed, 0, "depth {depth}: {:?}", ran.errors);
        assert!(ran.totals.ok > 100, "depth {depth}");
        assert_eq!(
            most,
            16 / u64::from(depth),
            "depth {depth}: sessions during the run"
        );
    }
    let info = scalebench_binding::postgres::INFO;
    let sequence = scalebench_binding::Schema {
        holds_its_connection: Some("visit".into()),
        ..scalebench_binding::Schema::of(&w)
    };
    let refused = scalebench_binding::pipeline::check(&info, &sequence, 4)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("'visit' holds its connection"),
        "{refused}"
    );
    assert!(
        scalebench_binding::pipeline::check(&info, &scalebench_binding::Schema::of(&w), 4).is_ok()
    );
}
