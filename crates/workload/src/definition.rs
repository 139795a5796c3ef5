//! A workload by what it means, not how it was written: every property that defines a run, typed
//! by its declaration and with its default filled in, in one serde form. Two clients (or two
//! results) whose workloads mean the same compare equal however they were given: a workload file
//! or YCSB properties, `0.5` or `0.50`, `Zipfian` or `zipfian`, a default written out or left out,
//! a workload's name or `workload=site.ycsb.workloads.CoreWorkload`. It is what the clients of a
//! distributed run agree on at their start and what `merge` compares (results' parameters,
//! definition version 2; results recorded before it compare by their properties' text).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::declared::{self, Kind, PropertyInfo, Unset};
use crate::Properties;

/// The version of a run's definition that results record: 1, the properties' text (before this
/// module); 2, [`WorkloadDefinition`].
pub const DEFINITION_VERSION: u32 = 2;

/// What a secret's value is replaced by.
const REDACTED: &str = "***";

/// A workload's meaning: each property that defines a run, by name, as a typed JSON value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkloadDefinition(BTreeMap<String, Value>);

/// Where two definitions first differ: the property (and the place within a JSON value, as
/// `columns[2].length`), with both values as text (`(unset)` where one has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub field: String,
    pub mine: String,
    pub theirs: String,
}

impl WorkloadDefinition {
    /// The definition of the workload `props` give: every declared property that shapes the data or
    /// the run phase (less each client's share of it, [`declared::CLIENT_SHARES`], which differs
    /// between the clients of one run), typed, its default filled in; and each of `options` given
    /// (a binding's options, as text), a secret's value redacted.
    pub fn of(
        props: &Properties,
        options: impl Fn(&str) -> bool,
        is_secret: impl Fn(&str) -> bool,
    ) -> WorkloadDefinition {
        let mut d = BTreeMap::new();
        for info in declared::PROPERTIES {
            let shares = declared::CLIENT_SHARES.iter().any(|s| s.name == info.name);
            if shares || !declared::defines_the_run(info.name) {
                continue;
            }
            if let Some(v) = typed(props, info) {
                d.insert(info.name.to_string(), v);
            }
        }
        for (k, v) in props.iter() {
            if declared::find(k).is_none() && options(k) {
                let shown = if is_secret(k) { REDACTED } else { v.trim() };
                d.insert(k.to_string(), Value::String(shown.to_string()));
            }
        }
        WorkloadDefinition(d)
    }

    /// The first property (in name order) in which `theirs` differs from this one, if any.
    pub fn first_difference(&self, theirs: &WorkloadDefinition) -> Option<Difference> {
        let names: std::collections::BTreeSet<&String> =
            self.0.keys().chain(theirs.0.keys()).collect();
        names
            .into_iter()
            .find_map(|name| difference(name.clone(), self.0.get(name), theirs.0.get(name)))
    }

    /// The properties it holds, by name.
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.0
    }
}

/// The value of `info` that `props` give (or its default), typed by its kind; `None` when it has
/// none. A value that does not read as its kind (refused before any run) is kept as its text.
fn typed(props: &Properties, info: &PropertyInfo) -> Option<Value> {
    let given = props.given(info);
    if given.is_none() {
        if let Some(derived) = derived_default(props, info) {
            return Some(derived);
        }
        if !matches!(info.default, Unset::Value(_)) {
            return None;
        }
    }
    let as_text = || given.map(|v| Value::String(v.trim().to_string()));
    let value = match info.kind {
        // A given value is read as given (a derived default is no value to fall back on).
        Kind::Integer if given.is_some() => {
            props.integer_given(info).ok().flatten().map(Value::from)
        }
        Kind::Integer => props.integer(info).ok().map(Value::from),
        Kind::Number if given.is_some() => props.number_given(info).ok().flatten().map(Value::from),
        Kind::Number => props.number(info).ok().map(Value::from),
        Kind::Proportion => props.proportion(info).ok().map(Value::from),
        Kind::Bool => props.flag(info).ok().map(Value::Bool),
        Kind::Choice(_) => props.choice(info).ok().map(Value::from),
        Kind::Text if is_json(info) => {
            let shown = crate::dictionary::shown_value(info.name, props.text(info));
            serde_json::from_str(&shown).ok()
        }
        Kind::Text => Some(Value::String(props.text(info).to_string())),
    };
    value.or_else(as_text)
}

/// The properties whose value is JSON a workload file writes: compared as JSON values, so the
/// order of an object's keys and the spacing do not count.
fn is_json(info: &PropertyInfo) -> bool {
    [declared::COLUMNS, declared::INDEXES, declared::OPERATIONS]
        .iter()
        .any(|p| p.name == info.name)
}

/// A derived default worked out as the run works it out, so that writing it out equals leaving
/// it out (the shares' derived defaults are not in a definition).
fn derived_default(props: &Properties, info: &PropertyInfo) -> Option<Value> {
    if info.name == declared::FIELDLENGTHMEDIAN.name {
        let length = props.integer(&declared::FIELDLENGTH).ok()?;
        return Some(Value::from(length as f64 / 10.0));
    }
    None
}

/// Where `mine` and `theirs` of property `at` first differ, looking into arrays and objects.
fn difference(at: String, mine: Option<&Value>, theirs: Option<&Value>) -> Option<Difference> {
    match (mine, theirs) {
        (Some(a), Some(b)) if same(a, b) => None,
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter()
                .find_map(|k| difference(format!("{at}.{k}"), a.get(k), b.get(k)))
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| difference(format!("{at}[{i}]"), Some(x), Some(y))),
        (a, b) => Some(Difference {
            field: at,
            mine: shown(a),
            theirs: shown(b),
        }),
    }
}

/// Equal values; numbers by value (`1` and `1.0` are one number).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn shown(v: Option<&Value>) -> String {
    match v {
        None => "(unset)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(&str, &str)]) -> WorkloadDefinition {
        let mut p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v, "test");
        }
        WorkloadDefinition::of(&p, |k| k.starts_with("redis."), |k| k.ends_with("password"))
    }

    #[test]
    fn one_meaning_written_differently_is_one_definition() {
        let plain = of(&[
            ("recordcount", "1000"),
            ("readproportion", "0.5"),
            ("updateproportion", "0.5"),
        ]);
        let written_otherwise = of(&[
            ("workload", "site.ycsb.workloads.CoreWorkload"),
            ("recordcount", "01000"),
            ("readproportion", "0.50"),
            ("updateproportion", ".5"),
            ("requestdistribution", "UNIFORM"),
            ("readallfields", "yes"),
            ("fieldlength", "100"),
            ("fieldlengthmedian", "10"),
            ("readallfieldsbyname", "true"),
            ("table", "usertable"),
        ]);
        assert_eq!(plain.first_difference(&written_otherwise), None);
        assert_eq!(plain, written_otherwise);
        // A client's share is not its workload's definition.
        assert_eq!(
            plain.first_difference(&of(&[
                ("recordcount", "1000"),
                ("readproportion", "0.5"),
                ("updateproportion", "0.5"),
                ("insertstart", "500"),
                ("operationcount", "7"),
            ])),
            None
        );
    }

    #[test]
    fn a_difference_in_meaning_is_named_with_both_values() {
        let a = of(&[("readproportion", "0.5")]);
        let b = of(&[("readproportion", "0.6")]);
        assert_eq!(
            a.first_difference(&b),
            Some(Difference {
                field: "readproportion".into(),
                mine: "0.5".into(),
                theirs: "0.6".into()
            })
        );
        let c = of(&[("readproportion", "0.5"), ("redis.cluster", "true")]);
        let d = a.first_difference(&c).unwrap();
        assert_eq!(
            (d.field.as_str(), d.mine.as_str(), d.theirs.as_str()),
            ("redis.cluster", "(unset)", "true")
        );
        // Another binding's options and a user's own properties are not read, and not compared.
        assert_eq!(
            a.first_difference(&of(&[
                ("readproportion", "0.5"),
                ("mongodb.x", "1"),
                ("mine", "2")
            ])),
            None
        );
    }

    #[test]
    fn json_values_compare_by_value_and_name_the_place_that_differs() {
        let a = of(&[(
            "indexes",
            r#"[{"name":"by_city","columns":["city"],"unique":false}]"#,
        )]);
        let spaced = of(&[(
            "indexes",
            r#"[ { "unique" : false, "columns" : ["city"], "name" : "by_city" } ]"#,
        )]);
        assert_eq!(a.first_difference(&spaced), None);
        let other = of(&[(
            "indexes",
            r#"[{"name":"by_city","columns":["town"],"unique":false}]"#,
        )]);
        let d = a.first_difference(&other).unwrap();
        assert_eq!(
            (d.field.as_str(), d.mine.as_str(), d.theirs.as_str()),
            ("indexes[0].columns[0]", "city", "town")
        );
    }

    #[test]
    fn a_secret_is_compared_by_nothing_and_never_shown() {
        let a = of(&[("redis.password", "hunter2")]);
        let b = of(&[("redis.password", "other")]);
        assert_eq!(a.first_difference(&b), None);
        assert!(!serde_json::to_string(&a).unwrap().contains("hunter2"));
    }

    #[test]
    fn its_serde_form_reads_back_equal() {
        let a = of(&[
            ("recordcount", "10"),
            ("requestdistribution", "zipfian"),
            ("redis.cluster", "true"),
        ]);
        let text = serde_json::to_string(&a).unwrap();
        assert!(
            text.contains(r#""recordcount":10"#)
                && text.contains(r#""requestdistribution":"zipfian""#),
            "{text}"
        );
        let back: WorkloadDefinition = serde_json::from_str(&text).unwrap();
        assert_eq!(back, a);
    }
}
