//! One workload file for every store (issue 63 item 10), through the binary.

use std::process::{Command, Stdio};

/// Issue 63 item 10: docs/workload-files.md's walkthrough file, as written (2,000 records, 1 s),
/// on the embedded SQLite (its statement runs) and on Redis, which runs none (its key_value
/// alternative, a multi-get of 10 keys, runs under the statement's name, its own `expect` judged).
/// `workload check --db` and the run say which alternative runs.
pub fn the_walkthrough_file_runs_on_sqlite_and_on_redis(redis: &str, dir: &std::path::Path) {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/workload-files.md"),
    )
    .unwrap();
    let text = docs
        .split("```toml\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let kv = "key_value = { kind = \"multi_get\", keys = 10, expect = { min_rows = 1 } }";
    assert!(text.contains(kv), "{text}");
    let file = dir.join("orders.toml");
    let write = |text: &str| {
        std::fs::write(&file, text.replace("records = 100000", "records = 2000")).unwrap()
    };
    write(text);
    let shown = file.to_str().unwrap();
    let scalebench = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(args)
            .env("SCALEBENCH_STATE_DIR", dir.join("state"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (o, err)
    };
    let said = "note: operation 'orders_of_customer' runs as multi_get on redis (its key_value alternative)";

    let (o, err) = scalebench(&["workload", "check", shown, "--db", redis]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(said), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("operation orders_of_customer: statement 15.0%, expects at least 1 row, key_value alternative multi_get"), "{out}");

    let ops_of = |out: &std::path::Path| {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
        let run = r["phases"].as_array().unwrap().last().unwrap().clone();
        let operations: serde_json::Value = serde_json::from_str(
            r["parameters"]["properties"]["operations"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        (run["operations"].clone(), operations)
    };
    let result = dir.join("walkthrough.json");
    let run = |db: Option<&str>| {
        let mut args = vec![
            "run",
            shown,
            "--duration",
            "1s",
            "-o",
            result.to_str().unwrap(),
        ];
        if let Some(db) = db {
            args.extend(["--db", db]);
        }
        let (o, err) = scalebench(&args);
        assert!(o.status.success(), "{err}");
        let (ops, operations) = ops_of(&result);
        (ops, operations, err)
    };
    // SQLite: the statement, no alternative said.
    let (ops, operations, err) = run(None);
    assert!(!err.contains("key_value alternative"), "{err}");
    assert_eq!(operations[1]["kind"], "statement", "{operations}");
    assert!(
        ops["orders_of_customer"]["ok"].as_u64().unwrap() > 0,
        "{ops}"
    );
    assert_eq!(
        ops["orders_of_customer"]["failed"],
        serde_json::json!({}),
        "{ops}"
    );

    // Redis: the multi-get in its place, under its name; every one finds its loaded records.
    let (o, err) = scalebench(&["load", shown, "--db", redis, "--threads", "4"]);
    assert!(o.status.success(), "{err}");
    let (ops, operations, err) = run(Some(redis));
    assert!(err.contains(said), "{err}");
    assert_eq!(operations[1]["kind"], "multi_get", "{operations}");
    assert!(operations[1].get("sql").is_none(), "{operations}");
    let found = ops["orders_of_customer"]["ok"].as_u64().unwrap();
    assert!(found > 0, "{ops}");
    assert_eq!(
        ops["orders_of_customer"]["failed"],
        serde_json::json!({}),
        "{ops}"
    );
    assert!(ops["order_by_id"]["ok"].as_u64().unwrap() > found, "{ops}");

    // The alternative's own expect is what judges it: 11 rows of a 10-key multi-get never come.
    write(&text.replace(kv, &kv.replace("min_rows = 1", "min_rows = 11")));
    let (ops, _, _) = run(Some(redis));
    let failed = ops["orders_of_customer"]["failed"]["unexpected"]
        .as_u64()
        .unwrap();
    assert_eq!(ops["orders_of_customer"]["ok"], 0, "{ops}");
    assert!(failed > 0, "{ops}");
}
