//! What defines a run, as the clients of one run compare it at their start (the etcd rendezvous)
//! and `merge` compares their results: the run's own fields (phase, clients, duration or
//! operations, warm-up, target, the whole run's value of each client share, a study's fields) and
//! its workload by meaning ([`WorkloadDefinition`], definition version 2). A definition recorded
//! before version 2 has no workload definition: its workload was written into its fields as
//! property text, and is compared by that text where both sides have it.

use std::collections::BTreeMap;

use scalebench_workload::declared::CLIENT_SHARES;
pub use scalebench_workload::definition::{Difference, WorkloadDefinition, DEFINITION_VERSION};
use serde::{Deserialize, Serialize};

/// A run's definition: its fields and its workload's meaning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunDefinition {
    pub fields: BTreeMap<String, String>,
    /// Absent in a definition of version 1 (before workloads were compared by meaning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadDefinition>,
}

impl RunDefinition {
    /// The first field in which `theirs` differs from this one, with both values: the fields
    /// first, then the workload. Between a definition of version 1 and one of version 2 the
    /// fields both versions hold are compared, and the workload is not (the caller compares it by
    /// what both recorded, and says so: [`RunDefinition::compares_workloads`]).
    pub fn first_difference(&self, theirs: &RunDefinition) -> Option<Difference> {
        let one_version = self.workload.is_some() == theirs.workload.is_some();
        let compared = |k: &String| one_version || in_both_versions(k);
        let keys: std::collections::BTreeSet<&String> = self
            .fields
            .keys()
            .chain(theirs.fields.keys())
            .filter(|k| compared(k))
            .collect();
        let field = keys.into_iter().find_map(|k| {
            let (a, b) = (self.fields.get(k), theirs.fields.get(k));
            (a != b).then(|| {
                let shown = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(unset)".into());
                Difference {
                    field: k.clone(),
                    mine: shown(a),
                    theirs: shown(b),
                }
            })
        });
        field.or_else(|| match (&self.workload, &theirs.workload) {
            (Some(a), Some(b)) => a.first_difference(b),
            _ => None,
        })
    }

    /// Whether both hold a workload definition, so that their workloads are compared by meaning.
    pub fn compares_workloads(&self, theirs: &RunDefinition) -> bool {
        self.workload.is_some() && theirs.workload.is_some()
    }
}

/// A field that definitions of both versions hold alike: version 1 also held the workload's name
/// and every property's text, which version 2 holds in its workload definition.
fn in_both_versions(field: &str) -> bool {
    match field.strip_prefix("property ") {
        Some(name) => CLIENT_SHARES.iter().any(|s| s.name == name),
        None => field != "workload",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_workload::Properties;

    fn workload(pairs: &[(&str, &str)]) -> WorkloadDefinition {
        let mut p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v, "test");
        }
        WorkloadDefinition::of(&p, |_| false, |_| false)
    }

    fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn fields_come_first_then_the_workload_by_meaning() {
        let a = RunDefinition {
            fields: fields(&[("duration", "10s")]),
            workload: Some(workload(&[("readproportion", "0.5")])),
        };
        let mut b = a.clone();
        b.workload = Some(workload(&[("readproportion", "0.50")]));
        assert_eq!(a.first_difference(&b), None);
        b.workload = Some(workload(&[("readproportion", "0.7")]));
        assert_eq!(a.first_difference(&b).unwrap().field, "readproportion");
        b.fields = fields(&[("duration", "20s")]);
        let d = a.first_difference(&b).unwrap();
        assert_eq!(
            (d.field, d.mine, d.theirs),
            ("duration".into(), "10s".into(), "20s".into())
        );
    }

    #[test]
    fn a_version_1_definition_is_compared_by_the_fields_both_versions_hold() {
        let old = RunDefinition {
            fields: fields(&[
                ("duration", "10s"),
                ("workload", "a"),
                ("property readproportion", "0.5"),
                ("property insertstart", "0"),
            ]),
            workload: None,
        };
        let new = RunDefinition {
            fields: fields(&[("duration", "10s"), ("property insertstart", "0")]),
            workload: Some(workload(&[("readproportion", "0.9")])),
        };
        assert!(!old.compares_workloads(&new));
        assert_eq!(old.first_difference(&new), None);
        let mut later = new.clone();
        later
            .fields
            .insert("property insertstart".into(), "100".into());
        assert_eq!(
            old.first_difference(&later).unwrap().field,
            "property insertstart"
        );
        // Two of version 1 compare every field, as they did.
        let mut other = old.clone();
        other.fields.insert("workload".into(), "b".into());
        assert_eq!(old.first_difference(&other).unwrap().field, "workload");
    }
}
