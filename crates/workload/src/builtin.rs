//! YCSB's core workloads a..f with their exact parameters (workloads/workloada..f in YCSB 0.17.0).

const COMMON: &str = "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=1000\noperationcount=1000\nreadallfields=true\n";

/// The property text of built-in workload `name` (`a`..`f`, also `workloada`..`workloadf`).
pub fn builtin_workload(name: &str) -> Option<(&'static str, String)> {
    let letter = name.strip_prefix("workload").unwrap_or(name);
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

pub const BUILTIN_NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
