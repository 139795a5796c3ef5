//! `[sweep]`: every swept value parsed once, when the file is read, into what it sets in a run
//! ([`SweepAxis`]). The text a value is given in stays its name: in cells, in the results
//! database's `params` and for `experiment --sweep KEY=VALUE`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::elastic::request::{parse_action, ScaleAction};
use scalebench_session::request;
use scalebench_workload::rate::Pace;

use scalebench_report::stored::{CLUSTER_SIZE, DATA_SIZE};

/// The swept key of an experiment of operations: each value an `elastic --action` (issue 42, point
/// 5), run on each database in place of `[procedure.elastic] action`.
pub const ACTION: &str = "action";

/// A TOML value as a property's text (a string without its quotes).
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What one swept value sets in a run.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepAxis {
    /// `data`: a `[[data]]` entry by name (its properties).
    DataSize(String),
    /// `nodes`: the deployment's node count (each size deployed once).
    Nodes(i64),
    /// `action`: the elastic run's cluster operation, in place of `[procedure.elastic] action`
    /// (issue 42, point 5).
    Action(ScaleAction),
    /// `clients`: the client processes of the measured run.
    Clients(u32),
    /// `threads`: the run's threads.
    Threads(u32),
    /// `concurrency`: each thread's operations in flight.
    Concurrency(u32),
    /// `target`: the measured run's offered rate, ops/s (a load is never throttled by it); 0 is
    /// a closed loop.
    Target(Pace),
    /// Any other key: a workload or binding property (`recordcount`,
    /// `cassandra.read_consistency`, ...) and its value's text.
    Property(String, String),
}

/// One value of a swept key: as the file gives it, and what it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Swept {
    given: toml::Value,
    axis: SweepAxis,
}

impl Swept {
    /// `key = given` from `[sweep]`, checked: a node count, an operation, a run option's number
    /// (checked as its flag is), or any property's value (checked with each run's request).
    pub fn parse(key: &str, given: toml::Value) -> Result<Swept, String> {
        let text = value_text(&given);
        let axis = match key {
            DATA_SIZE => SweepAxis::DataSize(text),
            CLUSTER_SIZE => match given {
                toml::Value::Integer(n) if n >= 1 => SweepAxis::Nodes(n),
                _ => {
                    return Err(format!(
                        "sweep.{CLUSTER_SIZE}: {given} is not a node count (1 or more)"
                    ))
                }
            },
            ACTION => {
                if !given.is_str() {
                    return Err(format!(
                        "sweep.{ACTION}: {given} is not an operation (a text such as \"rolling-restart\")"
                    ));
                }
                SweepAxis::Action(parse_action(&text).map_err(|e| format!("sweep.{ACTION}: {e}"))?)
            }
            "clients" | "threads" | "concurrency" | "target" => {
                let number = match given {
                    toml::Value::Integer(i) => i >= 0,
                    toml::Value::Float(f) => f >= 0.0,
                    _ => false,
                };
                if !number {
                    return Err(format!("sweep.{key}: {given} is not a number"));
                }
                let bad = |e: String| format!("invalid value '{text}' for sweep {key}: {e}");
                match key {
                    "clients" => SweepAxis::Clients(request::parse_clients(&text).map_err(bad)?),
                    "threads" => SweepAxis::Threads(request::parse_threads(&text).map_err(bad)?),
                    "concurrency" => {
                        SweepAxis::Concurrency(request::parse_concurrency(&text).map_err(bad)?)
                    }
                    _ => SweepAxis::Target(Pace::parse_target(&text).map_err(bad)?),
                }
            }
            _ => SweepAxis::Property(key.to_string(), text),
        };
        Ok(Swept { given, axis })
    }

    /// A `[[data]]` entry's name as the value of the data-size axis.
    pub fn data_size(name: &str) -> Swept {
        Swept {
            given: toml::Value::String(name.to_string()),
            axis: SweepAxis::DataSize(name.to_string()),
        }
    }

    pub fn axis(&self) -> &SweepAxis {
        &self.axis
    }

    /// The value as the file gives it.
    pub fn given(&self) -> &toml::Value {
        &self.given
    }

    /// The value's name: in cells, in the results database and for `--sweep KEY=VALUE`.
    pub fn text(&self) -> String {
        value_text(&self.given)
    }

    /// Whether runs of different values need different data loaded: not so for the run options,
    /// nor for a property that shapes the run phase only.
    pub fn shapes_loaded_data(&self) -> bool {
        match &self.axis {
            SweepAxis::Clients(_)
            | SweepAxis::Threads(_)
            | SweepAxis::Concurrency(_)
            | SweepAxis::Target(_) => false,
            SweepAxis::Property(key, _) => {
                !scalebench_workload::core_workload::shapes_run_phase_only(key)
            }
            SweepAxis::DataSize(_) | SweepAxis::Nodes(_) | SweepAxis::Action(_) => true,
        }
    }
}

/// Written as its text: a run's swept values are stored and compared as text.
impl Serialize for Swept {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// `[sweep]`: each key's values, parsed when the file is read; written back as the file gave them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "BTreeMap<String, Vec<toml::Value>>",
    into = "BTreeMap<String, Vec<toml::Value>>"
)]
pub struct Sweep(BTreeMap<String, Vec<Swept>>);

impl TryFrom<BTreeMap<String, Vec<toml::Value>>> for Sweep {
    type Error = String;
    fn try_from(given: BTreeMap<String, Vec<toml::Value>>) -> Result<Sweep, String> {
        let mut sweep = Sweep::default();
        for (key, values) in given {
            sweep.insert(&key, values)?;
        }
        Ok(sweep)
    }
}

impl From<Sweep> for BTreeMap<String, Vec<toml::Value>> {
    fn from(sweep: Sweep) -> Self {
        sweep
            .0
            .into_iter()
            .map(|(k, values)| (k, values.into_iter().map(|v| v.given).collect()))
            .collect()
    }
}

impl Sweep {
    /// `key`'s values, each checked (at least one).
    pub fn insert(&mut self, key: &str, values: Vec<toml::Value>) -> Result<(), String> {
        if values.is_empty() {
            return Err(format!("sweep.{key}: give at least one value"));
        }
        let values = values
            .into_iter()
            .map(|v| Swept::parse(key, v))
            .collect::<Result<_, _>>()?;
        self.0.insert(key.to_string(), values);
        Ok(())
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The swept keys and their values, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &[Swept])> {
        self.0.iter().map(|(k, v)| (k, v.as_slice()))
    }

    /// Each value of the property `key` rewritten by `rewrite` (the miniature's smaller counts).
    pub fn rewrite_property(&mut self, key: &str, rewrite: impl Fn(&mut toml::Value)) {
        for swept in self.0.get_mut(key).into_iter().flatten() {
            if let SweepAxis::Property(_, value) = &mut swept.axis {
                rewrite(&mut swept.given);
                *value = value_text(&swept.given);
            }
        }
    }
}

impl std::ops::Index<&str> for Sweep {
    type Output = [Swept];
    fn index(&self, key: &str) -> &[Swept] {
        &self.0[key]
    }
}

/// A run's swept values, key -> value in key order; stored as key -> text (the results
/// database's `params`, a run's definition).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SweptValues(BTreeMap<String, Swept>);

impl SweptValues {
    pub(super) fn insert(&mut self, key: &str, value: Swept) {
        self.0.insert(key.to_string(), value);
    }

    pub fn get(&self, key: &str) -> Option<&Swept> {
        self.0.get(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Swept)> {
        self.0.iter()
    }

    /// The swept node count, if the cluster size is swept.
    pub fn nodes(&self) -> Option<i64> {
        self.0.values().find_map(|s| match s.axis {
            SweepAxis::Nodes(n) => Some(n),
            _ => None,
        })
    }

    /// The swept client processes, if swept.
    pub fn clients(&self) -> Option<u32> {
        self.0.values().find_map(|s| match s.axis {
            SweepAxis::Clients(n) => Some(n),
            _ => None,
        })
    }

    /// The swept cluster operation, if swept.
    pub fn action(&self) -> Option<ScaleAction> {
        self.0.values().find_map(|s| match s.axis {
            SweepAxis::Action(a) => Some(a),
            _ => None,
        })
    }
}

impl std::ops::Index<&str> for SweptValues {
    type Output = Swept;
    fn index(&self, key: &str) -> &Swept {
        &self.0[key]
    }
}
