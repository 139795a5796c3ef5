//! The mongodb binding against mongo-java-server 1.46.0 (H2 backend, announcing MongoDB 5.0), a
//! MongoDB wire-protocol server from Maven Central: not MongoDB itself (see the deploy module).
//! Knobs the server accepts but does not enforce (write and read concern) are checked on the wire,
//! through a recording proxy.

mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use mongodb::bson::{doc, Document};
use scalebench_binding::conformance::check_crud;
use scalebench_binding::mongodb::MongoFactory;
use scalebench_binding::{Binding, BindingFactory};
use scalebench_deploy::mongodb::MongoTestServer;
use scalebench_workload::{FailureClass, FieldSet, OpKind, Operation};
use support::*;

fn server() -> &'static MongoTestServer {
    static S: std::sync::OnceLock<&'static MongoTestServer> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        keep(|| {
            MongoTestServer::start(&servers_dir(), 512, true).expect("mongo-java-server starts")
        })
    })
}

/// A driver client of the test's own, for looking at what the binding wrote.
fn collection(url: &str, name: &str) -> (tokio::runtime::Runtime, mongodb::Collection<Document>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt
        .block_on(async { mongodb::Client::with_uri_str(url).await })
        .unwrap();
    let c = client.database("ycsb").collection(name);
    (rt, c)
}

fn count(url: &str, name: &str) -> u64 {
    let (rt, c) = collection(url, name);
    rt.block_on(async { c.count_documents(doc! {}).await })
        .unwrap()
}

fn records(keys: &[&str]) -> Vec<Operation> {
    keys.iter()
        .map(|k| Operation {
            kind: OpKind::Insert,
            key: k.to_string(),
            values: vec![(0, format!("{k}-v"))],
            ..Operation::default()
        })
        .collect()
}

#[test]
fn crud_semantics() {
    assert_not_root(server().process.pid(), scalebench_deploy::mongodb::ACCOUNT);
    let w = workload(&[("table", "crud"), ("fieldcount", "4")]);
    let f = MongoFactory::open(&config(&server().url(), &w, &[], true, true)).unwrap();
    block_on(check_crud(&f, "user", 4, EXACT_EXPECTATIONS)).unwrap();
}

#[test]
fn load_10000_records_then_workload_a_without_errors() {
    let url = server().url();
    let w = workload(&[
        ("table", "e2e"),
        ("recordcount", "10000"),
        ("dataintegrity", "true"),
    ]);
    assert_loads_10000_records(&url, &w, &[], (false, 100), "e2e");
    assert_eq!(count(&url, "e2e"), 10_000);
    // One document per record: _id is the key, one binary field per YCSB field (as YCSB's binding).
    let (rt, c) = collection(&url, "e2e");
    let d = rt
        .block_on(async { c.find_one(doc! {}).await })
        .unwrap()
        .expect("a loaded record");
    assert!(
        d.get_str("_id").is_ok_and(|k| k.starts_with("user")),
        "{d:?}"
    );
    assert_eq!(d.len(), 11, "{d:?}");
    assert!(
        d.get_binary_generic("field9").is_ok_and(|v| v.len() >= 100),
        "{d:?}"
    );
    assert_a_and_e_without_errors(&url, "e2e");
}

#[test]
fn a_paused_server_stalls_the_run_and_a_killed_one_fails_it_as_unavailable() {
    let own = MongoTestServer::start(&servers_dir(), 256, true).expect("mongo-java-server starts");
    check_pause_then_crash(
        &own.process,
        &own.url(),
        Faults {
            create: false,
            drop: true,
            tolerated: &[],
            crash_classes: &["unavailable"],
            op_timeout: None,
        },
    );
}

#[test]
fn an_unreachable_server_fails_operations_as_unavailable_within_the_selection_timeout() {
    let mut own =
        MongoTestServer::start(&servers_dir(), 256, true).expect("mongo-java-server starts");
    let w = workload(&[("table", "gone")]);
    let f = MongoFactory::open(&config(
        &own.url(),
        &w,
        &[("server_selection_timeout", "300ms")],
        false,
        false,
    ))
    .unwrap();
    own.process.kill();
    let e = block_on(async {
        let mut b = f.connect(0).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(
            Duration::from_secs(20),
            b.read("user1", FieldSet::All, &mut out),
        )
        .await
        .expect("the driver gives up by itself")
        .unwrap_err()
    });
    assert_eq!(e.class, FailureClass::Unavailable, "{e}");
}

#[test]
fn drop_schema_empties_the_collection() {
    let url = server().url();
    let w = workload(&[("table", "dropped"), ("recordcount", "100")]);
    phase(config(&url, &w, &[], false, false), &w, load_plan(1, 10));
    assert_eq!(count(&url, "dropped"), 100);
    MongoFactory::open(&config(&url, &w, &[], false, true)).unwrap();
    assert_eq!(count(&url, "dropped"), 0);
}

#[test]
fn an_existing_key_conflicts_unless_inserts_upsert() {
    let url = server().url();
    let w = workload(&[("table", "upserts"), ("fieldcount", "1")]);
    let plain = MongoFactory::open(&config(&url, &w, &[], false, true)).unwrap();
    let upsert =
        MongoFactory::open(&config(&url, &w, &[("upsert", "true")], false, false)).unwrap();
    block_on(async {
        let mut b = plain.connect(0).await.unwrap();
        b.insert("k", &vec![(0, "first".into())]).await.unwrap();
        let e = b
            .insert("k", &vec![(0, "second".into())])
            .await
            .unwrap_err();
        assert_eq!(e.class, FailureClass::Conflict, "{e}");
        let mut u = upsert.connect(0).await.unwrap();
        u.insert("k", &vec![(0, "third".into())]).await.unwrap();
        let mut out = Vec::new();
        b.read("k", FieldSet::All, &mut out).await.unwrap();
        assert_eq!(out, vec![(0, "third".to_string())]);
    });
}

#[test]
fn an_ordered_batch_stops_at_a_duplicate_and_an_unordered_one_writes_the_rest() {
    let url = server().url();
    for (ordered, table, expected) in [("true", "ordered", 2), ("false", "unordered", 4)] {
        let w = workload(&[("table", table), ("fieldcount", "1")]);
        let f = MongoFactory::open(&config(
            &url,
            &w,
            &[("ordered_inserts", ordered)],
            false,
            true,
        ))
        .unwrap();
        block_on(async {
            let mut b = f.connect(0).await.unwrap();
            b.insert("b", &vec![(0, "already".into())]).await.unwrap();
            let e = b
                .insert_batch(&records(&["a", "b", "c", "d"]))
                .await
                .unwrap_err();
            assert_eq!(e.class, FailureClass::Conflict, "{e}");
        });
        // Ordered: "a" and the earlier "b"; unordered: a, b, c, d.
        assert_eq!(count(&url, table), expected, "ordered_inserts={ordered}");
    }
}

/// BSON holds a string value as its key, then a length and the text: both must be in `bytes`.
fn has_string(bytes: &[u8], key: &str, value: &str) -> bool {
    let mut pattern = vec![0x02];
    pattern.extend_from_slice(key.as_bytes());
    pattern.push(0);
    pattern.extend_from_slice(&((value.len() + 1) as i32).to_le_bytes());
    pattern.extend_from_slice(value.as_bytes());
    bytes
        .windows(pattern.len())
        .any(|w| w == pattern.as_slice())
}

/// The server accepts write and read concern without enforcing them; what the knobs change is
/// what every write and read asks for, which a real MongoDB honours.
#[test]
fn write_and_read_concern_knobs_are_sent_with_every_operation() {
    let (port, sent) = recording_proxy(server().port);
    let url = format!("mongodb://127.0.0.1:{port}/ycsb");
    let w = workload(&[("table", "concerns"), ("fieldcount", "1")]);
    let opts = [
        ("w", "majority"),
        ("j", "true"),
        ("wtimeout", "2500ms"),
        ("read_concern", "majority"),
    ];
    let f = MongoFactory::open(&config(&url, &w, &opts, false, true)).unwrap();
    block_on(async {
        let mut b = f.connect(0).await.unwrap();
        b.insert("k", &vec![(0, "v".into())]).await.unwrap();
        let mut out = Vec::new();
        b.read("k", FieldSet::All, &mut out).await.unwrap();
        b.cleanup().await.unwrap();
    });
    let bytes = sent.lock().unwrap().clone();
    assert!(contains(&bytes, "writeConcern"), "no write concern sent");
    assert!(has_string(&bytes, "w", "majority"));
    assert!(contains(&bytes, "wtimeout"));
    assert!(contains(&bytes, "readConcern"));
    assert!(has_string(&bytes, "level", "majority"));
    // Defaults: w 1 and no read concern (the server's own).
    let (port, sent) = recording_proxy(server().port);
    let url = format!("mongodb://127.0.0.1:{port}/ycsb");
    let f = MongoFactory::open(&config(&url, &w, &[], false, false)).unwrap();
    block_on(async {
        let mut b = f.connect(0).await.unwrap();
        b.update("k", &vec![(0, "v2".into())]).await.unwrap();
        let mut out = Vec::new();
        b.read("k", FieldSet::All, &mut out).await.unwrap();
        b.cleanup().await.unwrap();
    });
    let bytes = sent.lock().unwrap().clone();
    assert!(contains(&bytes, "writeConcern") && !has_string(&bytes, "w", "majority"));
    assert!(!contains(&bytes, "readConcern"));
}

#[test]
fn bad_option_values_are_named() {
    let w = workload(&[]);
    for (option, bad) in [
        ("w", "0"),
        ("read_concern", "strong"),
        ("read_preference", "leader"),
        ("wtimeout", "soon"),
    ] {
        let e = MongoFactory::open(&config(&server().url(), &w, &[(option, bad)], false, false))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(bad), "{option}: {e}");
    }
}

/// One worker thread with 8 operations in flight: the driver's pool opens a connection per
/// concurrent operation up to max_pool_size (besides its monitor's).
#[test]
fn max_pool_size_bounds_the_connections_of_a_worker() {
    let w = workload(&[("table", "pool"), ("recordcount", "200")]);
    phase(
        config(&server().url(), &w, &[], false, true),
        &w,
        load_plan(1, 50),
    );
    let mut connections = Vec::new();
    for size in ["1", "0"] {
        let (port, _, opened) = counting_proxy(server().port);
        let url = format!("mongodb://127.0.0.1:{port}/ycsb");
        let mut plan = run_plan(1.0);
        plan.threads = 1;
        plan.concurrency = 8;
        let ran = phase(
            config(&url, &w, &[("max_pool_size", size)], false, false),
            &w,
            plan,
        )
        .result;
        assert_eq!(ran.totals.failed, 0, "{:?}", ran.errors);
        connections.push(opened.load(Ordering::SeqCst));
    }
    // The factory's check (its own client: monitor and one connection), then the worker's client.
    assert!(
        connections[0] <= 4,
        "max_pool_size=1: {} connections",
        connections[0]
    );
    assert!(
        connections[1] >= 6,
        "driver default: {} connections",
        connections[1]
    );
}

/// Records written by other tools: YCSB writes binary fields (as this binding does); text fields
/// are read too; anything else is unexpected.
#[test]
fn fields_written_as_text_are_read_and_other_types_are_unexpected() {
    let url = server().url();
    let w = workload(&[("table", "elsewhere"), ("fieldcount", "2")]);
    let f = MongoFactory::open(&config(&url, &w, &[], false, true)).unwrap();
    let (rt, c) = collection(&url, "elsewhere");
    rt.block_on(async {
        c.insert_one(doc! {"_id": "text", "field0": "a", "field1": "b"})
            .await
            .unwrap();
        c.insert_one(doc! {"_id": "number", "field0": 7})
            .await
            .unwrap();
    });
    block_on(async {
        let mut b = f.connect(0).await.unwrap();
        let mut out = Vec::new();
        b.read("text", FieldSet::All, &mut out).await.unwrap();
        assert_eq!(out, vec![(0, "a".to_string()), (1, "b".to_string())]);
        let e = b.read("number", FieldSet::All, &mut out).await.unwrap_err();
        assert_eq!(e.class, FailureClass::Unexpected, "{e}");
    });
}

/// Issue 43: the session store's workload file on MongoDB: its typed values kept as text, read
/// back as written, its mix run without a failure.
#[test]
fn the_session_store_workload_file_runs() {
    assert_session_store_runs(MongoFactory::open, &server().url(), &[], &[]);
    // The list an array of strings, the map a subdocument of numbers; the other columns binary.
    let (rt, c) = collection(&server().url(), "sessions");
    let d = rt
        .block_on(async { c.find_one(doc! {}).await })
        .unwrap()
        .expect("a session");
    let roles = d
        .get_array("roles")
        .unwrap_or_else(|e| panic!("{e}: {d:?}"));
    assert!((1..=3).contains(&roles.len()), "{d:?}");
    assert!(roles.iter().all(|r| r.as_str().is_some()), "{d:?}");
    let preferences = d
        .get_document("preferences")
        .unwrap_or_else(|e| panic!("{e}: {d:?}"));
    assert!(preferences.values().all(|v| v.as_i32().is_some()), "{d:?}");
    assert!(d.get_binary_generic("user").is_ok(), "{d:?}");
}

/// Issue 43: a workload file's multi-gets on MongoDB (one find with $in): every record found, and the rows counted
/// against `expect` once records are deleted behind the workload's back.
#[test]
fn a_workload_files_multi_gets_read_their_keys() {
    assert_multi_gets_read(MongoFactory::open, &server().url());
}

/// Issue 43: a workload file's batches on MongoDB: one `update` command of every record's `$set`
/// (one round trip); with one record missing every batch fails `not_found` and the others are
/// written (not a transaction).
#[test]
fn a_workload_files_batches_write_every_record_in_one_command() {
    assert_batches_write(
        MongoFactory::open,
        &server().url(),
        MissingRecord::FailsAlone,
        false,
    );
}

/// Issue 43: a sequence in one transaction on MongoDB: the document read once, changed in
/// memory, replaced at the commit by a filter holding every field as read (a single-document
/// write is atomic: no replica set needed).
#[test]
fn a_sequence_in_one_transaction_counts_every_visit_once() {
    assert_one_record_transactions(MongoFactory::open, &server().url(), 800.0);
}

/// Issue 61: with no fault, the writes of every YCSB workload (a to f, with deletes) read back
/// after each run: none lost, none holding a value never written.
#[test]
fn no_write_of_any_ycsb_workload_is_lost() {
    assert_no_write_lost(&server().url(), &[], false);
}
