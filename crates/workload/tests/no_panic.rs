//! Whatever the properties say, parsing them gives a workload or an error, never a panic, and a
//! workload that parses generates operations (issue 13, point 11).

use proptest::prelude::*;
use scalebench_workload::declared::PROPERTIES;
use scalebench_workload::{Assignment, CoreWorkload, Properties};

/// Values as careless or hostile users write them: extremes, signs, floats, words.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        (0u64..2000).prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "0",
            "1",
            "-1",
            "NaN",
            "inf",
            "1e300",
            "18446744073709551615",
            "",
            "true",
            "zipfian",
            "uniform",
            "latest",
            "hotspot",
            "exponential",
            "sequential",
            "append",
            "lognormal",
            "measurement",
            "0.5",
            "ycsb",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn properties_never_panic(
        pairs in prop::collection::vec((prop::sample::select(PROPERTIES.iter().map(|p| p.name).collect::<Vec<_>>()), value()), 0..8)
    ) {
        let mut p = Properties::new();
        for (k, v) in &pairs {
            if let Ok(a) = format!("{k}={v}").parse::<Assignment>() {
                p.assign(&a, "-p");
            }
        }
        if let Ok(w) = CoreWorkload::from_properties(&p) {
            // Small records only: a 64 MiB record is valid but slow to generate a hundred times.
            if w.mean_record_bytes() < 1_000_000.0 {
                let mut g = w.generator(7);
                let mut op = scalebench_workload::Operation::default();
                for _ in 0..20 {
                    g.next_operation(&mut op);
                }
            }
        }
    }

    #[test]
    fn property_text_never_panics(text in "[ -~\n=#:!\\\\]{0,200}") {
        let mut p = Properties::new();
        let _ = p.load_str(&text, "fuzz");
    }
}
