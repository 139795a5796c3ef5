//! Issue 62: checking a workload file is linear in its size. 80,000 map keys took 134 s to check
//! (each compared with every key before it) and every Zipfian column summed its constant again
//! (1.5 s per 100 M-value column, 25 min for 1,000 columns); docs/benchmarks.md has the times.
//! One test in this binary: it counts the process's zeta sums.

use scalebench_workload::file::WorkloadFile;
use scalebench_workload::generator::zipfian::zeta_sums_computed;

#[test]
fn a_large_file_checks_each_key_once_and_each_zeta_once() {
    // 40 Zipfian columns of one (n, theta): one sum for the file, its load and its run.
    let mut text = String::from("[record]\nrecords = 10\n");
    for i in 0..40 {
        text.push_str(&format!(
            "[[record.column]]\nname = \"z{i}\"\ntype = \"bigint\"\n\
             generator.zipfian = {{ min = 1, max = 3000000 }}\n"
        ));
    }
    // And a map column of 80,000 keys (the 709 KB file).
    let keys: Vec<String> = (0..80_000).map(|i| format!("\"k{i:05}\"")).collect();
    let map = format!(
        "[[record.column]]\nname = \"m\"\ntype = \"map\"\nelement = \"int\"\n\
         items = {{ min = 0, max = 3 }}\nkeys = [{}]\ngenerator.uniform = {{ min = 0, max = 9 }}\n",
        keys.join(",")
    );
    let run = "[run]\nmix = { read = 1.0 }\noperations = 10\n";
    let before = zeta_sums_computed();
    let file = WorkloadFile::parse(&format!("{text}{map}{run}"), "big.toml").unwrap();
    assert_eq!(file.record.column.len(), 41);
    let mut props = scalebench_workload::Properties::new();
    file.apply(&mut props, "big.toml");
    scalebench_workload::CoreWorkload::from_properties(&props).unwrap();
    assert_eq!(zeta_sums_computed() - before, 1, "one sum per (n, theta)");
    // The set still finds a key given twice, the last one.
    let twice = map.replace("\"k79999\"]", "\"k79999\",\"k00007\"]");
    let e = WorkloadFile::parse(&format!("{text}{twice}{run}"), "big.toml").unwrap_err();
    assert!(e.to_string().contains("\"k00007\" is given twice"), "{e}");
}
