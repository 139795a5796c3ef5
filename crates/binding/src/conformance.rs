//! Behaviour every binding must show, as reusable checks for each binding's tests against its real server.

use scalebench_workload::{FailureClass, FieldSet, Fields, OpKind, Operation};

use crate::{Binding, BindingFactory};

/// What a database can tell: some (Cassandra, Redis) upsert on update and cannot report a missing record.
#[derive(Debug, Clone, Copy)]
pub struct Expectations {
    pub update_missing_is_not_found: bool,
    pub delete_missing_is_not_found: bool,
    /// False for hash-partitioned stores (Cassandra), whose scans follow token order from the start key.
    pub scan_in_key_order: bool,
}

fn values(n: usize, tag: &str) -> Fields {
    (0..n)
        .map(|i| (i, format!("{tag}-value-of-field-{i}")))
        .collect()
}

/// Runs the CRUD checks with keys that begin with `prefix` (so runs do not collide). `fields` is the
/// schema's field count.
pub async fn check_crud<F: BindingFactory>(
    factory: &F,
    prefix: &str,
    fields: usize,
    expect: Expectations,
) -> Result<(), String> {
    let mut b = factory
        .connect(0)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let key = |s: &str| format!("{prefix}{s}");
    let mut out = Fields::new();

    // Insert, then read back all fields and a single field.
    let v1 = values(fields, "v1");
    b.insert(&key("a"), &v1)
        .await
        .map_err(|e| format!("insert: {e}"))?;
    b.read(&key("a"), FieldSet::All, &mut out)
        .await
        .map_err(|e| format!("read all: {e}"))?;
    out.sort();
    if out != v1 {
        return Err(format!("read all returned {out:?}, expected {v1:?}"));
    }
    let last = fields - 1;
    b.read(&key("a"), FieldSet::One(last), &mut out)
        .await
        .map_err(|e| format!("read one: {e}"))?;
    if out != vec![v1[last].clone()] {
        return Err(format!("read of field {last} returned {out:?}"));
    }

    // Update one field: only that field changes.
    let one = vec![(0usize, "updated-one".to_string())];
    b.update(&key("a"), &one)
        .await
        .map_err(|e| format!("update one: {e}"))?;
    b.read(&key("a"), FieldSet::All, &mut out)
        .await
        .map_err(|e| format!("read after update: {e}"))?;
    out.sort();
    let mut expected = v1.clone();
    expected[0].1 = "updated-one".into();
    if out != expected {
        return Err(format!("after updating field 0, read returned {out:?}"));
    }
    // Update all fields.
    let v2 = values(fields, "v2");
    b.update(&key("a"), &v2)
        .await
        .map_err(|e| format!("update all: {e}"))?;
    b.read(&key("a"), FieldSet::All, &mut out)
        .await
        .map_err(|e| format!("read after update all: {e}"))?;
    out.sort();
    if out != v2 {
        return Err(format!("after updating all fields, read returned {out:?}"));
    }

    // Missing records.
    expect_class(
        b.read(&key("missing"), FieldSet::All, &mut out).await,
        FailureClass::NotFound,
        "read of a missing record",
    )?;
    if expect.update_missing_is_not_found {
        expect_class(
            b.update(&key("missing"), &one).await,
            FailureClass::NotFound,
            "update of a missing record",
        )?;
    }

    // Scan: key order from the start key, at most `count` records.
    let batch: Vec<Operation> = ["s1", "s2", "s3", "s4", "s5"]
        .iter()
        .map(|s| Operation {
            kind: OpKind::Insert,
            key: key(s),
            values: values(fields, s),
            ..Default::default()
        })
        .collect();
    b.insert_batch(&batch)
        .await
        .map_err(|e| format!("insert batch: {e}"))?;
    let mut rows = Vec::new();
    b.scan(&key("s2"), 3, FieldSet::All, &mut rows)
        .await
        .map_err(|e| format!("scan: {e}"))?;
    let keys: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    let want = [key("s2"), key("s3"), key("s4")];
    if expect.scan_in_key_order {
        if keys != want.iter().map(String::as_str).collect::<Vec<_>>() {
            return Err(format!(
                "scan from s2 for 3 returned keys {keys:?}, expected {want:?}"
            ));
        }
    } else if keys.len() != 3 || keys[0] != key("s2") {
        return Err(format!(
            "scan from s2 for 3 returned keys {keys:?}: expected 3 records starting at s2"
        ));
    }
    let mut first = rows[0].1.clone();
    first.sort();
    if first != values(fields, "s2") {
        return Err(format!("scan returned fields {first:?} for s2"));
    }
    b.scan(&key("s4"), 10, FieldSet::One(1), &mut rows)
        .await
        .map_err(|e| format!("scan one field: {e}"))?;
    if rows.is_empty()
        || rows[0].0 != key("s4")
        || rows[0].1 != vec![(1, "s4-value-of-field-1".to_string())]
    {
        return Err(format!("scan of field 1 from s4 returned {rows:?}"));
    }

    // Delete.
    b.delete(&key("a"))
        .await
        .map_err(|e| format!("delete: {e}"))?;
    expect_class(
        b.read(&key("a"), FieldSet::All, &mut out).await,
        FailureClass::NotFound,
        "read after delete",
    )?;
    if expect.delete_missing_is_not_found {
        expect_class(
            b.delete(&key("a")).await,
            FailureClass::NotFound,
            "delete of a missing record",
        )?;
    }
    b.cleanup().await.map_err(|e| format!("cleanup: {e}"))?;
    Ok(())
}

fn expect_class(
    r: Result<(), scalebench_workload::OpError>,
    class: FailureClass,
    what: &str,
) -> Result<(), String> {
    match r {
        Err(e) if e.class == class => Ok(()),
        Err(e) => Err(format!(
            "{what} failed as {}, expected {}",
            e.class.name(),
            class.name()
        )),
        Ok(()) => Err(format!("{what} succeeded, expected {}", class.name())),
    }
}

/// Inserts one record of a typed schema (`recordtype=measurement`, a workload file's columns) and reads it back: every
/// value must come back equal to what was written, as its type compares (numbers by value, timestamps
/// whatever number of zero fraction digits the database prints). `workload` is the typed workload
/// whose schema the factory was opened with.
pub async fn check_typed_roundtrip<F: BindingFactory>(
    factory: &F,
    workload: &scalebench_workload::CoreWorkload,
    keynum: u64,
) -> Result<(), String> {
    let mut b = factory
        .connect(0)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut op = Operation::default();
    workload.generator(keynum).load_operation(keynum, &mut op);
    b.insert(&op.key, &op.values)
        .await
        .map_err(|e| format!("insert {}: {e}", op.key))?;
    let mut out = Fields::new();
    b.read(&op.key, FieldSet::All, &mut out)
        .await
        .map_err(|e| format!("read {}: {e}", op.key))?;
    for ((idx, written), (ridx, read)) in op.values.iter().zip(&out) {
        let name = &workload.field_names[*idx];
        let t = workload.field_types[*idx];
        let canonical = |v| scalebench_workload::canonical::canonical(t, v);
        // A number or a decimal must read back as one (unparsable text equals only itself).
        let parses = match t {
            scalebench_workload::FieldType::Int
            | scalebench_workload::FieldType::BigInt
            | scalebench_workload::FieldType::Double => read.parse::<f64>().is_ok(),
            scalebench_workload::FieldType::Decimal { scale, .. } => {
                scalebench_workload::decimal::parse_units(written, u32::from(scale)).is_some()
            }
            _ => true,
        };
        let same = idx == ridx && parses && canonical(written) == canonical(read);
        if !same {
            return Err(format!("{name}: wrote '{written}', read '{read}'"));
        }
    }
    if out.len() != op.values.len() {
        return Err(format!("read {} fields of {}", out.len(), op.values.len()));
    }
    b.cleanup().await.map_err(|e| e.to_string())
}
