//! docs/operations.md's matrix of which kind of cluster has which operation agrees with the
//! engines' own `operations()`: a kind has an operation in the matrix (a cell not starting with
//! `-`) exactly when one of the shipped deployment files of that kind has it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scalebench_deploy::{Cluster, OperationKind};

const MATRIX_HEADING: &str = "## Operations and the kinds that have them";

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Per kind (its name), the operations the shipped deployments of it have.
fn engines() -> BTreeMap<String, BTreeSet<OperationKind>> {
    Cluster::operations_by_kind(&repo().join("deployments")).unwrap()
}

/// Per kind (the matrix's column), the operations its cells give.
fn matrix() -> BTreeMap<String, BTreeSet<OperationKind>> {
    let text = std::fs::read_to_string(repo().join("docs/operations.md")).unwrap();
    let table = text
        .split(MATRIX_HEADING)
        .nth(1)
        .expect("docs/operations.md has the matrix");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let kinds = &rows[0][2..];
    let mut by_kind: BTreeMap<String, BTreeSet<OperationKind>> = kinds
        .iter()
        .map(|k| (k.to_string(), BTreeSet::new()))
        .collect();
    for row in &rows[2..] {
        // `add:K`, `double` -> add
        let name = row[0]
            .trim_start_matches('`')
            .split([':', '`'])
            .next()
            .unwrap();
        let op = OperationKind::parse(name).unwrap_or_else(|| panic!("row {:?}", row[0]));
        for (kind, cell) in kinds.iter().zip(&row[2..]) {
            if !cell.starts_with('-') {
                by_kind.get_mut(*kind).unwrap().insert(op);
            }
        }
    }
    by_kind
}

#[test]
fn the_docs_matrix_is_the_engines_operations() {
    let (engines, matrix) = (engines(), matrix());
    let every: BTreeSet<OperationKind> = OperationKind::ALL.into_iter().collect();
    let rows: BTreeSet<OperationKind> = matrix.values().flatten().copied().collect();
    assert!(rows.is_subset(&every));
    for (kind, ops) in &engines {
        let name = |s: &BTreeSet<OperationKind>| s.iter().map(|o| o.name()).collect::<Vec<_>>();
        assert_eq!(
            matrix.get(kind).map(name),
            Some(name(ops)),
            "docs/operations.md's column {kind} against its engine's operations()"
        );
    }
    assert_eq!(
        matrix.keys().collect::<Vec<_>>(),
        engines.keys().collect::<Vec<_>>(),
        "the matrix's columns are the kinds with a shipped deployment"
    );
}
