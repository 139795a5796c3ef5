//! What a binding is given: the database URL, its options and the workload's schema.

use std::collections::BTreeMap;
use std::sync::Arc;

use scalebench_workload::Properties;

use crate::BindingError;

/// A database URL; the scheme chooses the binding. The password never leaves this type unredacted
/// except through [`DbUrl::url`], which bindings use to connect.
#[derive(Debug, Clone)]
pub struct DbUrl {
    url: url::Url,
}

impl DbUrl {
    pub fn parse(text: &str) -> Result<Self, BindingError> {
        let url = url::Url::parse(text).map_err(|e| {
            BindingError::Config(format!(
                "invalid database URL '{}': {e}",
                redact_unparsed(text)
            ))
        })?;
        Ok(DbUrl { url })
    }

    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The URL with its password, for connecting. Never print it.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// The URL for output and result files: password replaced by `***`.
    pub fn redacted(&self) -> String {
        let mut u = self.url.clone();
        if u.password().is_some() {
            let _ = u.set_password(Some("***"));
        }
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let secret = is_secret_key(&k);
                (
                    k.into_owned(),
                    if secret {
                        "***".to_string()
                    } else {
                        v.into_owned()
                    },
                )
            })
            .collect();
        if !pairs.is_empty() {
            u.query_pairs_mut().clear().extend_pairs(pairs);
        }
        u.to_string()
    }
}

/// Option names that hold secrets and are redacted wherever properties are shown or stored.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("password") || k.contains("passwd") || k.contains("secret") || k.ends_with("token")
}

/// Best effort for text that did not parse as a URL: hide anything between `:` and `@` after `//`.
fn redact_unparsed(text: &str) -> String {
    if let (Some(scheme_end), Some(at)) = (text.find("://"), text.rfind('@')) {
        let auth = &text[scheme_end + 3..at];
        if let Some(colon) = auth.find(':') {
            return format!(
                "{}{}:***{}",
                &text[..scheme_end + 3],
                &auth[..colon],
                &text[at..]
            );
        }
    }
    text.to_string()
}

/// The table and fields the workload uses.
#[derive(Debug, Clone)]
pub struct Schema {
    pub table: String,
    pub field_names: Arc<[String]>,
}

/// Everything a binding factory is opened with.
#[derive(Debug, Clone)]
pub struct BindingConfig {
    pub url: DbUrl,
    /// Options for this binding: `<binding>.<option>` properties with the prefix removed.
    pub options: BTreeMap<String, String>,
    pub schema: Schema,
    /// Create the table if missing (load phase of embedded databases, `--create-schema`).
    pub create_schema: bool,
    /// Drop the table first (`--drop-schema`).
    pub drop_schema: bool,
}

impl BindingConfig {
    /// Collects `<name>.<option>` properties for binding `name`.
    pub fn options_from(props: &Properties, name: &str) -> BTreeMap<String, String> {
        let prefix = format!("{name}.");
        props
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(&prefix)
                    .map(|o| (o.to_string(), v.to_string()))
            })
            .collect()
    }

    pub fn option<'a>(&'a self, name: &str, default: &'a str) -> &'a str {
        self.options
            .get(name)
            .map(String::as_str)
            .unwrap_or(default)
    }

    /// An option restricted to a set of words (case-insensitive); the error names binding, option and value.
    pub fn choice(
        &self,
        binding: &str,
        name: &str,
        default: &str,
        choices: &[&str],
    ) -> Result<String, BindingError> {
        let v = self.option(name, default);
        choices
            .iter()
            .find(|c| c.eq_ignore_ascii_case(v))
            .map(|c| c.to_string())
            .ok_or_else(|| {
                BindingError::Config(format!(
                    "invalid value '{v}' for property '{binding}.{name}': expected one of {}",
                    choices.join(", ")
                ))
            })
    }

    pub fn u64_option(&self, binding: &str, name: &str, default: u64) -> Result<u64, BindingError> {
        match self.options.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| {
                BindingError::Config(format!("invalid value '{v}' for property '{binding}.{name}': expected a non-negative integer"))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        let u =
            DbUrl::parse("postgres://bench:s3cret@127.0.0.1:5432/db?password=x&sslmode=disable")
                .unwrap();
        let r = u.redacted();
        assert!(!r.contains("s3cret") && !r.contains("password=x"), "{r}");
        assert!(
            r.contains("bench:***@") && r.contains("sslmode=disable"),
            "{r}"
        );
        let e = DbUrl::parse("postgres://bench:s3cret@[bad")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
