//! YCSB's core workloads a..f with their exact parameters (workloads/workloada..f in YCSB 0.17.0),
//! and the studies' single-operation workloads.

const COMMON: &str = "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=1000\noperationcount=1000\nreadallfields=true\n";

/// The property text of built-in workload `name` (`a`..`f`, also `workloada`..`workloadf`).
pub fn builtin_workload(name: &str) -> Option<(&'static str, String)> {
    let letter = name.strip_prefix("workload").unwrap_or(name);
    if let Some(single) = single_operation(name) {
        return Some(single);
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
/// fields, uniform keys. Wegert's R, U, I and M (read, update, insert, and the 50/50 read/update mix),
/// with YCSB's zipfian requests; his updates write one field (`writeallfields=false`, YCSB's default).
fn single_operation(name: &str) -> Option<(&'static str, String)> {
    let uniform = "requestdistribution=uniform\nfieldcount=10\nfieldlength=100\n";
    let zipfian = "requestdistribution=zipfian\n";
    let (id, mix, dist) = match name.to_ascii_lowercase().as_str() {
        "insert" => ("INSERT", "insertproportion=1\n", uniform),
        "update" => ("UPDATE", "updateproportion=1\n", uniform),
        "select" => ("SELECT", "readproportion=1\n", uniform),
        "r" => ("R", "readproportion=1\n", zipfian),
        "u" => ("U", "updateproportion=1\n", zipfian),
        "i" => ("I", "insertproportion=1\n", zipfian),
        "m" => ("M", "readproportion=0.5\nupdateproportion=0.5\n", zipfian),
        _ => return None,
    };
    let none = "readproportion=0\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\n";
    Some((id, format!("{COMMON}{none}{mix}{dist}")))
}

pub const BUILTIN_NAMES: [&str; 13] = [
    "a", "b", "c", "d", "e", "f", "INSERT", "UPDATE", "SELECT", "R", "U", "I", "M",
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
            ("m", "updateproportion"),
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
}
