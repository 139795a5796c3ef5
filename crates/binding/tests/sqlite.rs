//! The SQLite binding against a real SQLite database file.
#![cfg(feature = "sqlite")]

use std::sync::Arc;

use scalebench_binding::conformance::{check_crud, Expectations};
use scalebench_binding::sqlite::SqliteFactory;
use scalebench_binding::{BindingConfig, BindingError, DbUrl, Schema};

fn config(path: &std::path::Path, create: bool, options: &[(&str, &str)]) -> BindingConfig {
    BindingConfig {
        url: DbUrl::parse(&format!("sqlite://{}", path.display())).unwrap(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        schema: Schema::text(
            "usertable",
            Arc::from((0..4).map(|i| format!("field{i}")).collect::<Vec<_>>()),
        ),
        create_schema: create,
        drop_schema: false,
        cancel: Default::default(),
        connect_timeout: scalebench_binding::DEFAULT_CONNECT_TIMEOUT,
        clients: 1,
        worker_nodes: None,
        pipeline: 1,
        benchmark_table: true,
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn crud_semantics() {
    let dir = tempfile::tempdir().unwrap();
    let factory = SqliteFactory::open(&config(&dir.path().join("t.db"), true, &[])).unwrap();
    let expect = Expectations {
        update_missing_is_not_found: true,
        delete_missing_is_not_found: true,
        scan_in_key_order: true,
    };
    block_on(check_crud(&factory, "user", 4, expect)).unwrap();
}

#[test]
fn durability_options_apply_and_bad_values_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let factory = SqliteFactory::open(&config(
        &path,
        true,
        &[("journal_mode", "delete"), ("synchronous", "full")],
    ))
    .unwrap();
    let expect = Expectations {
        update_missing_is_not_found: true,
        delete_missing_is_not_found: true,
        scan_in_key_order: true,
    };
    block_on(check_crud(&factory, "user", 4, expect)).unwrap();
    // DELETE journal mode leaves no WAL file behind; the default WAL mode creates one.
    assert!(!dir.path().join("t.db-wal").exists());
    let e = SqliteFactory::open(&config(&path, true, &[("synchronous", "sometimes")]))
        .err()
        .unwrap();
    assert!(matches!(e, BindingError::Config(_)));
    assert!(
        e.to_string().contains("sqlite.synchronous") && e.to_string().contains("sometimes"),
        "{e}"
    );
}

#[test]
fn missing_table_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    // No file: named, and none created (only a phase that creates the table may create it).
    let e = SqliteFactory::open(&config(&path, false, &[]))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("does not exist: run the load phase first"),
        "{e}"
    );
    assert!(!path.exists());
    // A file without the table.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE other (x INTEGER)")
        .unwrap();
    let e = SqliteFactory::open(&config(&path, false, &[]))
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("table 'usertable' does not exist"),
        "{e}"
    );
}
