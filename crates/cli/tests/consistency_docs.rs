//! Issue 61: what docs/consistency.md says about the consistency probe with `--clients`, run as the
//! doc says. The doc's marked table (`clients-claims`) gives per row the `scalebench` arguments
//! (`DIR` a directory of the test's own), the exit code, and what must hold after it: a JSON field
//! present (`FILE PATH`), equal to a value or to another field (`FILE PATH = VALUE`, `FILE PATH =
//! FILE PATH`), or a text in the output or a file (`stdout "TEXT"`, `FILE "TEXT"`). A claim the
//! command does not bear out fails here, naming the row.

mod common;

use common::*;
use std::path::Path;

/// One row of the table: its claim (the row's own, or the last one above it), arguments, exit code
/// and checks.
#[derive(Debug)]
struct Row {
    claim: String,
    args: String,
    exit: i32,
    checks: Vec<String>,
}

const BEGIN: &str = "<!-- clients-claims: begin";
const END: &str = "<!-- clients-claims: end -->";

/// The texts between backticks in a cell, in order.
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn claims(doc: &str) -> Vec<Row> {
    let begin = doc
        .find(BEGIN)
        .expect("docs/consistency.md marks its --clients claims");
    let end = doc[begin..].find(END).expect("the claims' table ends") + begin;
    let mut rows = Vec::new();
    let mut claim = String::new();
    // The table's header and its separator come first.
    for line in doc[begin..end]
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
    {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 4, "a claim's row has four cells: {line}");
        if !cells[0].is_empty() {
            claim = cells[0].to_string();
        }
        let args = quoted(cells[1]);
        assert_eq!(args.len(), 1, "one command per row: {line}");
        rows.push(Row {
            claim: claim.clone(),
            args: args[0].clone(),
            exit: cells[2]
                .parse()
                .unwrap_or_else(|_| panic!("an exit code: {line}")),
            checks: quoted(cells[3]),
        });
    }
    rows
}

/// `a.b[0].c` (an index may count from the end: `[-1]`) in `value`.
fn at<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let mut v = value;
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, Some(rest.trim_end_matches(']'))),
            None => (part, None),
        };
        if !name.is_empty() {
            v = v.get(name)?;
        }
        if let Some(i) = index {
            let items = v.as_array()?;
            let i: i64 = i.parse().ok()?;
            let i = if i < 0 { items.len() as i64 + i } else { i };
            v = items.get(usize::try_from(i).ok()?)?;
        }
    }
    (!v.is_null()).then_some(v)
}

/// `FILE PATH` of the row's directory: the field, or the check fails saying so.
fn field(dir: &Path, reference: &str, row: &Row) -> serde_json::Value {
    let (file, path) = reference
        .split_once(' ')
        .unwrap_or_else(|| panic!("FILE PATH: {reference:?} in {row:?}"));
    let json = json(&dir.join(file));
    at(&json, path)
        .unwrap_or_else(|| panic!("{row:?}: no {path} in {file}: {json}"))
        .clone()
}

fn check(dir: &Path, check: &str, out: &std::process::Output, row: &Row) {
    if let Some((target, text)) = check.split_once(" \"") {
        let text = text.trim_end_matches('"').replace("\\\"", "\"");
        let haystack = match target {
            "stdout" => String::from_utf8_lossy(&out.stdout).to_string(),
            "stderr" => stderr(out),
            file => std::fs::read_to_string(dir.join(file)).unwrap(),
        };
        assert!(
            haystack.contains(&text),
            "{row:?}: no {text:?} in {target}: {haystack}"
        );
    } else if let Some((left, right)) = check.split_once(" = ") {
        let expected = serde_json::from_str(right).unwrap_or_else(|_| field(dir, right, row));
        assert_eq!(field(dir, left, row), expected, "{row:?}: {check}");
    } else {
        field(dir, check, row);
    }
}

#[test]
fn what_the_doc_says_of_the_probe_with_several_clients_holds() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/consistency.md");
    let rows = claims(&std::fs::read_to_string(doc_path).unwrap());
    // The doc claims both that the probe runs from several clients and where it is refused.
    assert!(rows.iter().any(|r| r.exit == 0) && rows.iter().any(|r| r.exit == 2));
    let dir = test_dir();
    let dir_text = dir.path().to_str().unwrap().to_string();
    for row in &rows {
        let args: Vec<String> = row
            .args
            .split_whitespace()
            .map(|a| a.replace("DIR", &dir_text))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = scalebench(&args);
        assert_eq!(
            out.status.code(),
            Some(row.exit),
            "the doc claims: {}\n{row:?}: {}",
            row.claim,
            stderr(&out)
        );
        for c in &row.checks {
            check(dir.path(), c, &out, row);
        }
    }
}

/// The checks themselves: a field that is there or not, equal or not, and a text.
#[test]
fn the_checks_fail_when_the_result_does_not_hold() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("r.json"),
        r#"{"phases": [{"a": 1}, {"b": {"c": [5, 7]}, "d": 7}]}"#,
    )
    .unwrap();
    let row = Row {
        claim: "x".into(),
        args: String::new(),
        exit: 0,
        checks: Vec::new(),
    };
    let out = scalebench(&["--version"]);
    let holds = |c: &str| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(dir.path(), c, &out, &row)
        }))
        .is_ok()
    };
    assert!(holds("r.json phases[-1].b.c[1]"));
    assert!(holds("r.json phases[-1].b.c[-1] = 7"));
    assert!(holds("r.json phases[1].d = r.json phases[-1].b.c[1]"));
    assert!(holds("stdout \"scalebench\""));
    assert!(!holds("r.json phases[0].b"));
    assert!(!holds("r.json phases[0].a = 2"));
    assert!(!holds("r.json phases[1].d = r.json phases[0].a"));
    assert!(!holds("stdout \"no such words\""));
    assert_eq!(quoted("`a b` and `c`"), ["a b", "c"]);
}
