//! The workload model against values printed by YCSB 0.17.0 itself (see tools/ycsb-vectors).

use scalebench_workload::generator::zipfian::zeta_range;
use scalebench_workload::keys::{fnvhash64, InsertOrder, KeyBuilder};

fn rows(file: &str) -> Vec<Vec<String>> {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn key_names_are_byte_identical_to_ycsb() {
    let rows = rows("ycsb-0.17.0-keys.tsv");
    assert!(rows.len() >= 40);
    for r in rows {
        let keynum: u64 = r[0].parse().unwrap();
        let padding: usize = r[1].parse().unwrap();
        let order = if r[2] == "true" {
            InsertOrder::Ordered
        } else {
            InsertOrder::Hashed
        };
        let kb = KeyBuilder {
            order,
            zero_padding: padding,
            prefix: "user".into(),
        };
        assert_eq!(
            kb.key(keynum),
            r[3],
            "keynum {keynum}, zeropadding {padding}, {order:?}"
        );
    }
}

#[test]
fn fnv_hash_matches_ycsb() {
    for r in rows("ycsb-0.17.0-fnv.tsv") {
        let n: i64 = r[0].parse().unwrap();
        assert_eq!(fnvhash64(n).to_string(), r[1], "fnvhash64({n})");
    }
}

#[test]
fn zeta_matches_ycsb() {
    for r in rows("ycsb-0.17.0-zeta.tsv") {
        let n: u64 = r[0].parse().unwrap();
        let theta: f64 = r[1].parse().unwrap();
        let expected: f64 = r[2].parse().unwrap();
        let got = zeta_range(0, n, theta, 0.0);
        assert!(
            (got - expected).abs() <= expected * 1e-12,
            "zeta({n}, {theta}) = {got}, YCSB {expected}"
        );
    }
}
