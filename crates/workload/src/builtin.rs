//! YCSB's core workloads a..f with their exact parameters (workloads/workloada..f in YCSB 0.17.0),
//! and the studies' single-operation workloads.

const COMMON: &str = "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=1000\noperationcount=1000\nreadallfields=true\n";

/// The built-in workloads as `run --help` and the unknown-workload error list them: the one list
/// both read, beside the table below that defines them.
pub const BUILTIN_SUMMARY: &str = "a..f (YCSB core workloads), INSERT, UPDATE, SELECT (Dijkshoorn), R, U, I, M (Wegert), documents (Dory: appends to documents of heavy-tailed sizes), timeseries (Lourenco: measurement records in batches)";

/// The property text of built-in workload `name` (`a`..`f`, also `workloada`..`workloadf`).
pub fn builtin_workload(name: &str) -> Option<(&'static str, String)> {
    let letter = name.strip_prefix("workload").unwrap_or(name);
    if let Some(single) = single_operation(name) {
        return Some(single);
    }
    if name.eq_ignore_ascii_case("documents") {
        return Some(("documents", format!("{COMMON}{DOCUMENTS}")));
    }
    if name.eq_ignore_ascii_case("timeseries") {
        return Some(("timeseries", format!("{COMMON}{TIMESERIES}")));
    }
    let (id, body) = match letter {
        "a" => ("a", "readproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
        "b" => ("b", "readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
        "c" => ("c", "readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
        "d" => ("d", "readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n"),
        "e" => ("e", "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n"),
        "f" => ("f", "readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"),
        _ => return None,
    };
    Some((id, format!("{COMMON}{body}")))
}

/// One operation type per run. Dijkshoorn's INSERT, UPDATE and SELECT: records of 10 x 100-byte
/// fields, uniform keys. Wegert's R, U, I and M as his table 5 defines them (studies.md, section 2):
/// 100% reads, 100% updates, 100% inserts, and M = 50% reads, 25% updates, 25% inserts, all with
/// uniform key choice (so that small data sets are not served from memory); his updates write one
/// field (`writeallfields=false`, YCSB's default).
fn single_operation(name: &str) -> Option<(&'static str, String)> {
    let dijkshoorn = "requestdistribution=uniform\nfieldcount=10\nfieldlength=100\n";
    let wegert = "requestdistribution=uniform\n";
    let (id, mix, dist) = match name.to_ascii_lowercase().as_str() {
        "insert" => ("INSERT", "insertproportion=1\n", dijkshoorn),
        "update" => ("UPDATE", "updateproportion=1\n", dijkshoorn),
        "select" => ("SELECT", "readproportion=1\n", dijkshoorn),
        "r" => ("R", "readproportion=1\n", wegert),
        "u" => ("U", "updateproportion=1\n", wegert),
        "i" => ("I", "insertproportion=1\n", wegert),
        "m" => (
            "M",
            "readproportion=0.5\nupdateproportion=0.25\ninsertproportion=0.25\n",
            wegert,
        ),
        _ => return None,
    };
    let none = "readproportion=0\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\n";
    Some((id, format!("{COMMON}{none}{mix}{dist}")))
}

/// Dory's load: one document per record, sizes heavy-tailed like encyclopedia articles (log-normal,
/// median 3 KB, 1 in 100 above ~30 KB, at most 100 KB); each operation reads a random document and
/// with probability 20% appends the string "1" to it and writes it back, as the study did
/// (studies.md, section 5; `appendtext`, or `appendlength` for random text of another size).
/// Request sets: `run --request-set R`.
const DOCUMENTS: &str = "readproportion=0.8\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\n\
readmodifywriteproportion=0.2\nreadmodifywritemode=append\nappendtext=1\nwriteallfields=true\n\
requestdistribution=uniform\nfieldcount=1\nfieldlengthdistribution=lognormal\nfieldlengthmedian=3000\n\
fieldlengthsigma=1\nminfieldlength=100\nfieldlength=100000\n";

/// Lourenco's write-heavy load: measurement records (9 typed fields, 126 bytes) written in batches of
/// 100 by concurrent sources (`--threads`); the load phase is the measurement (records/s, space).
const TIMESERIES: &str = "recordtype=measurement
batchsize=100
readproportion=0
updateproportion=0
\
scanproportion=0
insertproportion=1
requestdistribution=uniform
";

/// Built-in workload `name` with property overrides applied (as `-p` would), parsed.
pub fn builtin_with(
    name: &str,
    overrides: &[(&str, &str)],
) -> Result<crate::CoreWorkload, crate::WorkloadError> {
    let (_, text) = builtin_workload(name).ok_or_else(|| {
        crate::WorkloadError::invalid("workload", name, "not a built-in workload")
    })?;
    let mut p = crate::Properties::new();
    p.load_str(&text, name)?;
    for (k, v) in overrides {
        p.set(k, v, "-p");
    }
    crate::CoreWorkload::from_properties(&p)
}

pub const BUILTIN_NAMES: [&str; 15] = [
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "INSERT",
    "UPDATE",
    "SELECT",
    "R",
    "U",
    "I",
    "M",
    "documents",
    "timeseries",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreWorkload, Properties};

    #[test]
    fn single_operation_workloads_do_one_thing() {
        for (name, prop) in [
            ("INSERT", "insertproportion"),
            ("select", "readproportion"),
            ("U", "updateproportion"),
            ("m", "readproportion"),
        ] {
            let (_, text) = builtin_workload(name).unwrap();
            let mut p = Properties::new();
            p.load_str(&text, "test").unwrap();
            assert!(CoreWorkload::from_properties(&p).is_ok(), "{name}");
            // Later lines override the zeros: the operation's own proportion is set.
            let value: f64 = p.get(prop).unwrap().parse().unwrap();
            assert!(value >= 0.5, "{name}: {prop} = {value}");
        }
        let (_, select) = builtin_workload("SELECT").unwrap();
        assert!(
            select.contains("requestdistribution=uniform") && select.contains("fieldlength=100")
        );
    }

    /// Wegert's table 5: M is 50% reads, 25% updates, 25% inserts; R, U, I and M all choose keys
    /// uniformly.
    #[test]
    fn wegert_workloads_are_his_table_5() {
        // Uniform over 1000 records: no key is chosen much more often than 1 in 1000 (zipfian's
        // most popular key would take several percent).
        for name in ["R", "U", "M"] {
            let w = builtin_with(name, &[]).unwrap();
            let mut g = w.generator(3);
            let mut op = crate::Operation::default();
            let mut hits = std::collections::HashMap::new();
            for _ in 0..50_000 {
                g.next_operation(&mut op);
                if op.kind != crate::OpKind::Insert {
                    *hits.entry(op.key.clone()).or_insert(0u32) += 1;
                }
            }
            let total: u32 = hits.values().sum();
            let top = *hits.values().max().unwrap();
            assert!(
                (top as f64) < total as f64 * 0.003,
                "{name}: the most chosen key took {top} of {total}"
            );
        }
        let m = builtin_with("M", &[]).unwrap();
        let mut g = m.generator(9);
        let mut op = crate::Operation::default();
        let mut counts = std::collections::BTreeMap::new();
        let n = 40_000;
        for _ in 0..n {
            g.next_operation(&mut op);
            *counts.entry(format!("{:?}", op.kind)).or_insert(0u32) += 1;
        }
        let share = |k: &str| counts.get(k).copied().unwrap_or(0) as f64 / n as f64;
        assert!((share("Read") - 0.5).abs() < 0.01, "{counts:?}");
        assert!((share("Update") - 0.25).abs() < 0.01, "{counts:?}");
        assert!((share("Insert") - 0.25).abs() < 0.01, "{counts:?}");
    }

    #[test]
    fn documents_have_heavy_tailed_sizes_and_grow_by_appends() {
        let (_, text) = builtin_workload("documents").unwrap();
        let mut p = Properties::new();
        p.load_str(&text, "documents").unwrap();
        let w = CoreWorkload::from_properties(&p).unwrap();
        let mut g = w.generator(5);
        let mut op = crate::Operation::default();
        let mut sizes: Vec<usize> = (0..20_000)
            .map(|k| {
                g.load_operation(k, &mut op);
                assert_eq!(op.values.len(), 1);
                op.values[0].1.len()
            })
            .collect();
        sizes.sort_unstable();
        let q = |f: f64| sizes[(f * (sizes.len() - 1) as f64) as usize];
        // Log-normal with median 3000 and sigma 1: the 99th percentile is e^2.33 (about 10x) the median.
        assert!((2800..3200).contains(&q(0.5)), "median {}", q(0.5));
        assert!(q(0.99) > 8 * q(0.5), "p99 {} median {}", q(0.99), q(0.5));
        assert!(sizes[0] >= 100 && *sizes.last().unwrap() <= 100_000);
        let (mut appends, n) = (0, 10_000);
        for _ in 0..n {
            g.next_operation(&mut op);
            match op.kind {
                crate::OpKind::ReadModifyWrite => {
                    assert!(op.append);
                    // The study's append: the string "1" (studies.md, section 5).
                    assert_eq!(op.values[0].1, "1");
                    appends += 1;
                }
                kind => assert_eq!((kind, op.append), (crate::OpKind::Read, false)),
            }
        }
        assert!((appends as f64 / n as f64 - 0.2).abs() < 0.02, "{appends}");
        // Other sizes: `appendlength` random characters, whatever `appendtext` says.
        let mut p = Properties::new();
        p.load_str(&text, "documents").unwrap();
        p.set("appendlength", "300", "test");
        let mut g = CoreWorkload::from_properties(&p).unwrap().generator(5);
        let grown = (0..1000).find_map(|_| {
            g.next_operation(&mut op);
            op.append.then(|| op.values[0].1.len())
        });
        assert_eq!(grown, Some(300));
    }

    #[test]
    fn timeseries_writes_measurement_records_keyed_by_uuid() {
        let (_, text) = builtin_workload("timeseries").unwrap();
        let mut p = Properties::new();
        p.load_str(&text, "timeseries").unwrap();
        let w = CoreWorkload::from_properties(&p).unwrap();
        assert_eq!(w.field_names.len(), 8);
        assert_eq!(w.mean_key_bytes() + w.mean_record_bytes(), 126.0);
        assert!(!w.field_types[0].is_text());
        let mut op = crate::Operation::default();
        let mut g = w.generator(1);
        g.next_operation(&mut op);
        assert_eq!(op.kind, crate::OpKind::Insert);
        assert_eq!((op.key.len(), op.values.len()), (36, 8));
        g.load_operation(3, &mut op);
        assert_eq!(op.values[3].1, "2026-01-01 00:00:03.000");
        p.set("dataintegrity", "true", "-p");
        assert!(CoreWorkload::from_properties(&p).is_err());
    }
}
