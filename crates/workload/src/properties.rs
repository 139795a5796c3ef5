//! YCSB-style properties: Java property files (`-P`) and `key=value` overrides (`-p`).
//!
//! Later sources override earlier ones. Each value remembers where it came from so errors can name it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::declared::{Kind, PropertyInfo};
use crate::WorkloadError;

#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub value: String,
    /// Where the value was set: a file path, `-p`, or a built-in workload name.
    pub origin: String,
}

/// One property setting, `KEY=VALUE`: as `-p` gives it, an experiment's table or a deployment
/// declares it. Parsed once where it enters (`"k=v".parse()`), carried typed from then on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Assignment {
    pub key: String,
    pub value: String,
}

impl Assignment {
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Assignment {
        Assignment {
            key: key.into(),
            value: value.into(),
        }
    }
}

impl std::str::FromStr for Assignment {
    type Err = String;

    fn from_str(text: &str) -> Result<Assignment, String> {
        match text.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok(Assignment::new(k.trim(), v.trim())),
            _ => Err("expected KEY=VALUE".into()),
        }
    }
}

impl std::fmt::Display for Assignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Properties {
    entries: BTreeMap<String, Property>,
}

/// Property files are a few lines; anything this large is a mistake, not a workload.
pub const MAX_PROPERTY_FILE_BYTES: u64 = 1 << 20;

impl Properties {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a declared property: the name comes from its one declaration, never a bare string.
    pub fn set_declared(
        &mut self,
        property: &crate::declared::PropertyInfo,
        value: impl std::fmt::Display,
        origin: &str,
    ) {
        self.set(property.name, &value.to_string(), origin);
    }

    pub fn set(&mut self, key: &str, value: &str, origin: &str) {
        self.entries.insert(
            key.trim().to_string(),
            Property {
                value: value.trim().to_string(),
                origin: origin.to_string(),
            },
        );
    }

    /// Unsets `key` (back to its default).
    pub fn remove(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// Parses Java properties text (comments, `=`, `:` or whitespace separators, line continuations).
    pub fn load_str(&mut self, text: &str, origin: &str) -> Result<(), WorkloadError> {
        let parsed =
            java_properties::read(text.as_bytes()).map_err(|e| WorkloadError::UnreadableFile {
                path: origin.into(),
                reason: e.to_string(),
            })?;
        // Sorted so that the effect does not depend on hash order; keys are unique within a file.
        let mut keys: Vec<_> = parsed.into_iter().collect();
        keys.sort();
        for (k, v) in keys {
            self.set(&k, &v, origin);
        }
        Ok(())
    }

    pub fn load_file(&mut self, path: &Path) -> Result<(), WorkloadError> {
        let text = read_small_file(path, MAX_PROPERTY_FILE_BYTES, "a property file").map_err(
            |reason| WorkloadError::UnreadableFile {
                path: path.to_path_buf(),
                reason,
            },
        )?;
        self.load_str(&text, &path.display().to_string())
    }

    /// Sets one property from `origin` (a later assignment wins).
    pub fn assign(&mut self, a: &Assignment, origin: &str) {
        self.set(&a.key, &a.value, origin);
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|p| p.value.as_str())
    }

    pub fn origin(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|p| p.origin.as_str())
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(k, p)| (k.as_str(), p.value.as_str()))
    }

    /// The value given for a declared property, if any.
    pub fn given(&self, info: &PropertyInfo) -> Option<&str> {
        self.get(info.name)
    }

    /// The text given, else the declared default (`""` without one).
    pub fn text(&self, info: &PropertyInfo) -> &str {
        self.str_or(info.name, info.default_text())
    }

    /// An integer property, else its declared default.
    pub fn integer(&self, info: &PropertyInfo) -> Result<u64, WorkloadError> {
        self.u64_or(info.name, declared_default(info))
    }

    /// An integer property when given (its default is derived from other values).
    pub fn integer_given(&self, info: &PropertyInfo) -> Result<Option<u64>, WorkloadError> {
        match self.get(info.name) {
            None => Ok(None),
            Some(_) => self.u64_or(info.name, 0).map(Some),
        }
    }

    /// A number property, else its declared default.
    pub fn number(&self, info: &PropertyInfo) -> Result<f64, WorkloadError> {
        self.f64_or(info.name, declared_default(info))
    }

    /// A number property when given (its default is derived from other values).
    pub fn number_given(&self, info: &PropertyInfo) -> Result<Option<f64>, WorkloadError> {
        match self.get(info.name) {
            None => Ok(None),
            Some(_) => self.f64_or(info.name, 0.0).map(Some),
        }
    }

    /// A proportion (0 to 1), else its declared default.
    pub fn proportion(&self, info: &PropertyInfo) -> Result<f64, WorkloadError> {
        self.proportion_or(info.name, declared_default(info))
    }

    /// A true/false property, else its declared default.
    pub fn flag(&self, info: &PropertyInfo) -> Result<bool, WorkloadError> {
        self.bool_or(info.name, declared_default(info))
    }

    /// One of the declared words (case-insensitive), else the declared default.
    pub fn choice(&self, info: &PropertyInfo) -> Result<&'static str, WorkloadError> {
        let Kind::Choice(words) = info.kind else {
            panic!("property {} is not declared as a choice", info.name);
        };
        self.choice_or(info.name, info.default_text(), words)
    }

    fn str_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    fn u64_or(&self, key: &str, default: u64) -> Result<u64, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| WorkloadError::invalid(key, v, "expected a non-negative integer")),
        }
    }

    fn f64_or(&self, key: &str, default: f64) -> Result<f64, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(WorkloadError::invalid(key, v, "expected a number")),
            },
        }
    }

    /// A proportion: a number between 0 and 1.
    fn proportion_or(&self, key: &str, default: f64) -> Result<f64, WorkloadError> {
        let x = self.f64_or(key, default)?;
        if !(0.0..=1.0).contains(&x) {
            return Err(WorkloadError::invalid(
                key,
                self.get(key).unwrap_or(""),
                "expected a proportion between 0 and 1",
            ));
        }
        Ok(x)
    }

    fn bool_or(&self, key: &str, default: bool) -> Result<bool, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => Ok(true),
                "false" | "no" | "off" | "0" => Ok(false),
                _ => Err(WorkloadError::invalid(key, v, "expected true or false")),
            },
        }
    }

    /// One of a fixed set of words (case-insensitive).
    fn choice_or<'a>(
        &self,
        key: &str,
        default: &'a str,
        choices: &[&'a str],
    ) -> Result<&'a str, WorkloadError> {
        let v = self.str_or(key, default);
        choices
            .iter()
            .find(|c| c.eq_ignore_ascii_case(v))
            .copied()
            .ok_or_else(|| {
                WorkloadError::invalid(key, v, format!("expected one of {}", choices.join(", ")))
            })
    }

    /// Keys that none of the given predicates recognise.
    pub fn unknown_keys<'a>(&'a self, is_known: &dyn Fn(&str) -> bool) -> Vec<&'a str> {
        self.entries
            .keys()
            .map(String::as_str)
            .filter(|k| !is_known(k))
            .collect()
    }
}

/// The declared default of `info` as a value (the declarations' test reads each through its kind).
fn declared_default<T: std::str::FromStr>(info: &PropertyInfo) -> T {
    info.default_text().parse().unwrap_or_else(|_| {
        panic!(
            "property {} declares no default of its kind ({:?}): read it with a *_given reader",
            info.name, info.default
        )
    })
}

/// The text of a small regular file (a property, workload or dictionary file, `what`): never a
/// device (`/dev/zero`) or a pipe, never more than `max` bytes.
pub fn read_small_file(path: &Path, max: u64, what: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > max {
        return Err(format!("{} bytes; {what} holds at most {max}", meta.len()));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_sources_override_and_keep_origin() {
        let mut p = Properties::new();
        p.load_str(
            "# comment\nrecordcount=10\nfieldcount : 3\nreadproportion 0.5\n",
            "a.properties",
        )
        .unwrap();
        p.assign(&"recordcount=20".parse().unwrap(), "-p");
        assert_eq!(p.get("recordcount"), Some("20"));
        assert_eq!(p.origin("recordcount"), Some("-p"));
        assert_eq!(p.get("fieldcount"), Some("3"));
        assert_eq!(p.get("readproportion"), Some("0.5"));
        assert_eq!(p.origin("fieldcount"), Some("a.properties"));
    }

    #[test]
    fn typed_getters_name_the_bad_value() {
        let mut p = Properties::new();
        p.set("recordcount", "ten", "-p");
        p.set("readproportion", "1.5", "-p");
        let e = p.u64_or("recordcount", 0).unwrap_err().to_string();
        assert!(e.contains("recordcount") && e.contains("ten"), "{e}");
        let e = p
            .proportion_or("readproportion", 0.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("readproportion") && e.contains("1.5"), "{e}");
        assert!("novalue".parse::<Assignment>().is_err());
    }
}
