//! One workload file for every store: a statement or a transaction with a key-value alternative
//! (`key_value = { kind = "multi_get", keys = 10 }`) runs that alternative, under its own name,
//! on a store that has no text of its own for it. Decided once per run from the binding's kind.

use crate::named::{DeclaredKind, OperationDecl};
use crate::statement::Language;
use crate::{Properties, WorkloadError};

/// What a binding runs of a workload file's own statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// Statements in this language: SQL (PostgreSQL, MySQL/MariaDB, SQLite), CQL (Cassandra).
    Speaks(Language),
    /// No statements (Redis, etcd, HBase, MongoDB).
    KeyValue,
    /// Every statement, as nothing (the null binding).
    Any,
}

impl Store {
    /// Whether this store runs `d`'s own text: a statement's in its language, a transaction's SQL
    /// steps. Key-value operations have none to run.
    fn runs_text_of(self, d: &OperationDecl) -> bool {
        match (self, d.kind) {
            (Store::Any, _) => true,
            (Store::KeyValue, _) => false,
            (Store::Speaks(Language::Sql), DeclaredKind::Statement) => d.sql.is_some(),
            (Store::Speaks(Language::Cql), DeclaredKind::Statement) => d.cql.is_some(),
            (Store::Speaks(language), DeclaredKind::Transaction) => language == Language::Sql,
            (Store::Speaks(_), _) => true,
        }
    }
}

/// What runs in `d`'s place on `store`: its key-value alternative when the store has no text
/// for it (`None`: `d` itself runs, or is refused when the binding checks its statements).
pub fn in_place_on(d: &OperationDecl, store: Store) -> Option<OperationDecl> {
    let kv = d.key_value.as_ref()?;
    (!store.runs_text_of(d)).then(|| kv.in_place_of(d))
}

/// The operations as they run on `store` (binding `binding`), and for each that runs its
/// alternative a line saying so (`operation 'x' runs as scan on redis (its key_value
/// alternative)`).
pub fn for_store(
    decls: &[OperationDecl],
    store: Store,
    binding: &str,
) -> (Vec<OperationDecl>, Vec<String>) {
    let mut lines = Vec::new();
    let ops = decls
        .iter()
        .map(|d| match in_place_on(d, store) {
            None => d.clone(),
            Some(kv) => {
                let missing = match store {
                    Store::Speaks(language) => format!(": it has no {}", language.field()),
                    _ => String::new(),
                };
                lines.push(format!(
                    "operation '{}' runs as {} on {binding} (its key_value alternative{missing})",
                    d.name,
                    kv.kind.word()
                ));
                kv
            }
        })
        .collect();
    (ops, lines)
}

/// The `operations` property as it runs on `store`: each alternative that runs in its
/// operation's place there, so the workload, its result's properties and each client of a run
/// see the operations that run. Returns the lines saying which ([`for_store`]).
pub fn apply(
    props: &mut Properties,
    store: Store,
    binding: &str,
) -> Result<Vec<String>, WorkloadError> {
    let Some(json) = props.get("operations").map(str::to_string) else {
        return Ok(Vec::new());
    };
    let decls: Vec<OperationDecl> = serde_json::from_str(&json).map_err(|e| {
        WorkloadError::invalid(
            "operations",
            &crate::columns::abbreviated(&json),
            format!("not an operation list: {e}"),
        )
    })?;
    let (ops, lines) = for_store(&decls, store, binding);
    if !lines.is_empty() {
        let origin = format!("the key_value alternatives on {binding}");
        props.set("operations", &crate::named::to_json(&ops), &origin);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::named::{resolve, ExpectDecl, KeyValueDecl};
    use crate::{FieldType, OpKind};

    fn statement(name: &str, sql: Option<&str>, cql: Option<&str>) -> OperationDecl {
        let json = serde_json::json!({"name": name, "kind": "statement", "weight": 0.5});
        let mut d: OperationDecl = serde_json::from_value(json).unwrap();
        d.sql = sql.map(String::from);
        d.cql = cql.map(String::from);
        d
    }

    fn scan_alternative() -> KeyValueDecl {
        KeyValueDecl {
            kind: DeclaredKind::Scan,
            field: Some("total".into()),
            set: None,
            add: None,
            append: None,
            keys: None,
            expect: Some(ExpectDecl {
                found: None,
                rows: None,
                min_rows: Some(1),
                max_rows: None,
                failure: None,
            }),
        }
    }

    fn resolved(decls: &[OperationDecl]) -> Vec<(crate::named::NamedOperation, f64)> {
        let fields = ["customer".to_string(), "total".to_string()];
        resolve(
            decls,
            &fields,
            &[FieldType::BigInt, FieldType::Double],
            true,
        )
        .unwrap()
    }

    /// A statement with an alternative resolves to the statement where the store has its text,
    /// and to the alternative (its kind, fields and expect, the statement's name and weight)
    /// where it has none: a key-value store, or a CQL store for a statement of SQL alone.
    #[test]
    fn a_statement_resolves_to_its_alternative_where_its_text_cannot_run() {
        let sql = "SELECT total FROM orders WHERE customer = :customer";
        let mut orders = statement("orders_of_customer", Some(sql), None);
        orders.key_value = Some(scan_alternative());
        let read = serde_json::from_value::<OperationDecl>(
            serde_json::json!({"name": "order", "kind": "read", "weight": 0.5}),
        )
        .unwrap();
        let decls = [orders, read];
        let (on_sql, said) = for_store(&decls, Store::Speaks(Language::Sql), "sqlite");
        assert!(said.is_empty(), "{said:?}");
        assert_eq!(resolved(&on_sql)[0].0.kind, OpKind::Statement);
        assert_eq!(for_store(&decls, Store::Any, "null").0, decls);

        for (store, binding, line) in [
            (
                Store::KeyValue,
                "redis",
                "operation 'orders_of_customer' runs as scan on redis (its key_value alternative)",
            ),
            (
                Store::Speaks(Language::Cql),
                "cassandra",
                "operation 'orders_of_customer' runs as scan on cassandra (its key_value alternative: it has no cql)",
            ),
        ] {
            let (ops, said) = for_store(&decls, store, binding);
            assert_eq!(said, [line]);
            let ops = resolved(&ops);
            let (scan, weight) = &ops[0];
            assert_eq!((scan.name.as_str(), scan.kind, *weight), ("orders_of_customer", OpKind::Scan, 0.5));
            assert_eq!(scan.read_fields, Some(crate::FieldSet::One(1)));
            assert_eq!(scan.expect.unwrap().min_rows, Some(1));
            assert!(scan.statement.is_none());
            assert_eq!(scan.measured, crate::Measured::named(0));
            assert_eq!(ops[1].0.kind, OpKind::Read, "the other operation is left as it is");
        }
    }

    /// A statement without an alternative is left for the binding to refuse; a transaction's
    /// alternative runs on every store but a SQL one.
    #[test]
    fn a_transaction_runs_its_alternative_off_sql_and_a_bare_statement_stays() {
        let bare = statement("bare", Some("SELECT 1"), None);
        assert_eq!(in_place_on(&bare, Store::KeyValue), None);
        let json = serde_json::json!({
            "name": "transfer", "kind": "transaction", "weight": 1.0,
            "steps": ["UPDATE t SET total = total - 1 WHERE YCSB_KEY = :key"],
            "key_value": {"kind": "read_modify_write", "add": {"total": -1.0}}
        });
        let transfer: OperationDecl = serde_json::from_value(json).unwrap();
        assert_eq!(in_place_on(&transfer, Store::Speaks(Language::Sql)), None);
        for store in [Store::KeyValue, Store::Speaks(Language::Cql)] {
            let kv = in_place_on(&transfer, store).unwrap();
            assert_eq!(resolved(&[kv])[0].0.kind, OpKind::ReadModifyWrite);
        }
    }

    /// An alternative is checked as the operation that runs in its place, its errors naming its
    /// own field; one on a key-value operation, or of a kind that is no key-value operation, is
    /// refused.
    #[test]
    fn a_bad_alternative_names_its_field() {
        let fields = ["customer".to_string(), "total".to_string()];
        let types = [FieldType::BigInt, FieldType::Double];
        let error = |d: OperationDecl| {
            let mut d = d;
            d.weight = 1.0;
            resolve(&[d], &fields, &types, true)
                .unwrap_err()
                .to_string()
        };
        let mut s = statement("s", Some("SELECT 1"), None);
        let mut kv = scan_alternative();
        kv.field = Some("nope".into());
        s.key_value = Some(kv.clone());
        let e = error(s.clone());
        assert!(
            e.starts_with("operation[0] ('s').key_value.field: no column 'nope'"),
            "{e}"
        );
        kv.field = None;
        kv.expect.as_mut().unwrap().found = Some(true);
        s.key_value = Some(kv.clone());
        let e = error(s.clone());
        assert!(
            e.starts_with("operation[0] ('s').key_value.expect.found:"),
            "{e}"
        );
        kv.expect = None;
        kv.kind = DeclaredKind::Sequence;
        s.key_value = Some(kv.clone());
        let e = error(s.clone());
        assert!(e.starts_with("operation[0] ('s').key_value.kind: a sequence is not a key-value operation: give read, update"), "{e}");
        kv.kind = DeclaredKind::Read;
        let mut read: OperationDecl =
            serde_json::from_value(serde_json::json!({"name": "r", "kind": "read", "weight": 1.0}))
                .unwrap();
        read.key_value = Some(kv);
        let e = error(read.clone());
        assert!(
            e.starts_with(
                "operation[0] ('r').key_value: only a statement or a transaction has one"
            ),
            "{e}"
        );
        // A sequence names the operation: its alternative must be a step's kind.
        s.key_value = Some(scan_alternative());
        s.weight = 0.0;
        read.key_value = None;
        read.weight = 1.0;
        let json = serde_json::json!({
            "name": "visit", "kind": "sequence", "weight": 0.0, "operations": ["r", "s"]
        });
        let visit: OperationDecl = serde_json::from_value(json).unwrap();
        let e = resolve(&[read, s, visit], &fields, &types, true)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("operation[2] ('visit').operations: 's' is a scan")
                && e.ends_with("(with each key_value alternative in its operation's place)"),
            "{e}"
        );
    }
}
