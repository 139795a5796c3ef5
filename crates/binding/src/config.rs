//! What a binding is given: the database URL, its options and the workload's schema.

use std::collections::BTreeMap;
use std::sync::Arc;

use scalebench_workload::index::Index;
use scalebench_workload::statement::Statement;
use scalebench_workload::{CoreWorkload, FieldType, Properties};

use crate::BindingError;

/// A database URL; the scheme chooses the binding. The password never leaves this type unredacted
/// except through [`DbUrl::url`], which bindings use to connect.
#[derive(Debug, Clone)]
pub struct DbUrl {
    url: url::Url,
    /// `scheme://h1:p1,h2:p2,h3:p3/...`: the hosts after the first (`url` holds the first).
    more_hosts: Vec<String>,
}

impl DbUrl {
    pub fn parse(text: &str) -> Result<Self, BindingError> {
        let bad = |e: &dyn std::fmt::Display| {
            BindingError::Config(format!(
                "invalid database URL '{}': {e}",
                redact_unparsed(text)
            ))
        };
        // A list of hosts is not a URL authority: parse the first host, keep the others aside.
        let (first, more_hosts) = match text.split_once("://") {
            Some((scheme, rest)) => {
                let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                let (authority, tail) = rest.split_at(end);
                let at = authority.rfind('@').map_or(0, |i| i + 1);
                let mut hosts = authority[at..].split(',');
                let head = hosts.next().unwrap_or("");
                let more: Vec<String> = hosts.map(str::to_string).collect();
                if more.iter().any(|h| h.is_empty()) {
                    return Err(bad(&"empty host in the host list"));
                }
                (format!("{scheme}://{}{head}{tail}", &authority[..at]), more)
            }
            None => {
                // A plain path (no scheme) is most often a SQLite file: say how to write it.
                let path = std::path::Path::new(text);
                if !text.is_empty() && !text.contains(':') {
                    let form = if path.is_absolute() {
                        format!("sqlite://{text}")
                    } else {
                        format!("sqlite://{}", text.trim_start_matches("./"))
                    };
                    return Err(bad(&format_args!(
                        "no scheme: a URL names its database (see `scalebench bindings`); for a SQLite file write {form}"
                    )));
                }
                (text.to_string(), Vec::new())
            }
        };
        let url = url::Url::parse(&first).map_err(|e| bad(&e))?;
        for h in &more_hosts {
            url::Url::parse(&format!("{}://{h}", url.scheme())).map_err(|e| bad(&e))?;
        }
        Ok(DbUrl { url, more_hosts })
    }

    /// Every `host:port` of the URL (several for `scheme://h1:p1,h2:p2/...`); `default_port` where
    /// a host gives none.
    pub fn hosts(&self, default_port: u16) -> Vec<String> {
        let first = format!(
            "{}:{}",
            self.url.host_str().unwrap_or(""),
            self.url.port().unwrap_or(default_port)
        );
        std::iter::once(first)
            .chain(self.more_hosts.iter().map(|h| {
                if h.rsplit_once(':')
                    .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                {
                    h.clone()
                } else {
                    format!("{h}:{default_port}")
                }
            }))
            .collect()
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
        let mut text = u.to_string();
        if !self.more_hosts.is_empty() {
            // Put the other hosts back after the first one's port (or host).
            let at = text.find("://").map_or(0, |i| i + 3);
            let rest = &text[at..];
            let end = at + rest.find(['/', '?', '#']).unwrap_or(rest.len());
            text.insert_str(end, &format!(",{}", self.more_hosts.join(",")));
        }
        text
    }
}

#[cfg(test)]
mod url_tests {
    use super::*;

    #[test]
    fn host_lists_parse_and_redact() {
        let u = DbUrl::parse("etcd://127.0.0.1:2379,127.0.0.1:2380,h3/x").unwrap();
        assert_eq!(
            u.hosts(2379),
            vec!["127.0.0.1:2379", "127.0.0.1:2380", "h3:2379"]
        );
        assert_eq!(u.redacted(), "etcd://127.0.0.1:2379,127.0.0.1:2380,h3/x");
        let p = DbUrl::parse("postgres://u:pw@a:1,b:2/db").unwrap();
        assert_eq!(p.redacted(), "postgres://u:***@a:1,b:2/db");
        assert_eq!(
            DbUrl::parse("redis://h:6379").unwrap().hosts(1),
            vec!["h:6379"]
        );
        assert!(DbUrl::parse("etcd://a:1,,b:2").is_err());
        assert!(DbUrl::parse("etcd://a:1,b:notaport").is_err());
        // A plain path gets the sqlite:// form it meant (issue 31, point 3).
        let e = DbUrl::parse("/tmp/bench.db").unwrap_err().to_string();
        assert!(e.contains("sqlite:///tmp/bench.db"), "{e}");
        let e = DbUrl::parse("./data/bench.db").unwrap_err().to_string();
        assert!(e.contains("sqlite://data/bench.db"), "{e}");
    }
}

/// Option names that hold secrets and are redacted wherever properties are shown or stored.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("password") || k.contains("passwd") || k.contains("secret") || k.ends_with("token")
}

/// Best effort for text that did not parse as a URL: hide anything between `:` and `@` after `//`
/// (a `user:password@` is a secret whether or not the rest of the URL is valid).
pub fn redact_unparsed(text: &str) -> String {
    if let (Some(scheme_end), Some(at)) = (text.find("://"), text.rfind('@')) {
        // An '@' before the "://" (`@://`) has no authority to hide.
        let Some(auth) = text.get(scheme_end + 3..at) else {
            return text.to_string();
        };
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
    /// The key's column in SQL and CQL tables (`None`: the binding's YCSB name, `YCSB_KEY` or
    /// `y_id`).
    pub key_column: Option<String>,
    pub field_names: Arc<[String]>,
    /// One per field. Bindings with typed schemas (SQL, Cassandra) create columns of these types;
    /// schemaless stores keep the values' text.
    pub field_types: Arc<[FieldType]>,
    /// A workload file's statements, by named operation (`None`: a key-value operation);
    /// [`Operation::statement`](scalebench_workload::Operation) indexes it.
    pub statements: Arc<[Option<Arc<Statement>>]>,
    /// A workload file's secondary indexes, created with the table where the binding has them.
    pub indexes: Arc<[Index]>,
    /// A workload file's increments (checked against [`crate::BindingInfo::increments`]).
    pub increments: Arc<[scalebench_workload::named::Increment]>,
    /// The names of a workload file's sequences that run in one transaction (SQL bindings).
    pub transactional_sequences: Arc<[(String, bool)]>,
    /// The first operation that holds its connection over several requests (`--pipeline`).
    pub holds_its_connection: Option<String>,
}

impl Schema {
    pub fn of(w: &CoreWorkload) -> Schema {
        Schema {
            table: w.table.clone(),
            key_column: w.key_column.clone(),
            field_names: w.field_names.clone(),
            field_types: w.field_types.clone(),
            statements: w.statements(),
            indexes: w.indexes.clone(),
            increments: w.increments().into(),
            transactional_sequences: w.transactional_sequences().into(),
            holds_its_connection: w.holds_its_connection(),
        }
    }

    /// Text fields of any length.
    pub fn text(table: &str, field_names: Arc<[String]>) -> Schema {
        Schema {
            table: table.to_string(),
            key_column: None,
            field_types: field_names
                .iter()
                .map(|_| FieldType::Text { max_len: None })
                .collect(),
            field_names,
            statements: Arc::new([]),
            indexes: Arc::new([]),
            increments: Arc::new([]),
            transactional_sequences: Arc::new([]),
            holds_its_connection: None,
        }
    }

    /// True when some field is not text.
    pub fn is_typed(&self) -> bool {
        self.field_types.iter().any(|t| !t.is_text())
    }
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
    /// Ends the setup (connect, schema) when the run is stopped before it began.
    pub cancel: crate::Cancel,
    /// How long each connection attempt (handshake included) and each setup call may take.
    pub connect_timeout: std::time::Duration,
    /// How many client processes of one run share the database (1 alone): a simulated server
    /// (`null.capacity_ops_s`) gives each its share of the capacity.
    pub clients: u32,
    /// Each worker bound to one node, as each thread of Dory's client was (`--request-set-threads
    /// fixed`): None, the binding routes requests as it does.
    pub worker_nodes: Option<WorkerNodes>,
    /// Operations in flight on each connection of the run phase (`--pipeline`; 1: a connection
    /// per slot): see [`crate::pipeline`].
    pub pipeline: u32,
    /// The run uses the workload's table (checked at setup, its statements prepared); false for a
    /// replay of a database log, whose statements name their own tables.
    pub benchmark_table: bool,
}

/// Worker `w` of this client is worker `first_worker + w` of the run (its clients' workers
/// numbered in a row), and every request of it goes to node `(first_worker + w) mod n` of the
/// cluster's n nodes, in address order, as the binding found them when it opened. Bindings that
/// cannot choose the node a request goes to say so ([`crate::BindingInfo::binds_workers_to_nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerNodes {
    pub first_worker: usize,
}

impl WorkerNodes {
    /// The node of worker `worker` among `nodes`.
    pub fn node_of(self, worker: usize, nodes: usize) -> usize {
        (self.first_worker + worker) % nodes.max(1)
    }
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
