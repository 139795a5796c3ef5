//! The keyspace and table: dropped, created or checked as the options say, with the replication
//! the run asked for.

use scylla::client::session::Session;

use super::settings::{Options, Settings};
use super::values::cql_type;
use crate::{BindingConfig, BindingError};

/// What a created table and keyspace are to have: replication, compaction, compression.
pub(super) struct TableOptions {
    pub(super) wanted: Replication,
    pub(super) compaction: String,
    pub(super) compression: String,
}

impl TableOptions {
    /// The options of a created table and keyspace, the class names checked.
    pub(super) fn of(options: Options) -> Result<TableOptions, BindingError> {
    let wanted = Replication {
            strategy: options.replication_strategy.word().to_string(),
            factor: options.replication_factor,
            durable_writes: options.durable_writes,
        };
        let (compaction, compression) = (options.compaction, options.compression);
        for (name, v) in [("compaction", &compaction), ("compression", &compression)] {
            if !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                return Err(BindingError::Config(format!(
                    "invalid value '{v}' for property 'cassandra.{name}': expected a class name"
                )));
            }
        }
        Ok(TableOptions {
            wanted,
            compaction,
            compression,
        })
    }
}

/// Drops, creates or checks the keyspace and table as the options say; a run measures the
/// replication it was asked for, never a keyspace left by an earlier configuration.
pub(super) async fn prepare_schema(
    session: &Session,
    settings: &Settings,
    table: &TableOptions,
    config: &BindingConfig,
) -> Result<(), BindingError> {
    let (url, wanted) = (settings.url.as_str(), table.wanted.clone());
    let (compaction, compression) = (&table.compaction, &table.compression);
    let ks = &settings.keyspace;
    let t = format!("{ks}.{}", settings.table);
    let schema_err = |what: &str, e: &dyn std::fmt::Display| BindingError::Schema(format!("{what} on {url}: {e}"));
    if config.drop_schema {
        session.query_unpaged(format!("DROP TABLE IF EXISTS {t}"), &[]).await.map_err(|e| schema_err("cannot drop table", &e))?;
    }
    let current = Replication::of_keyspace(session, ks)
        .await
        .map_err(|e| schema_err("cannot look up the keyspace", &e))?;
    if config.create_schema {
        match &current {
            None => {
                session
                    .query_unpaged(format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH {}", wanted.cql()), &[])
                    .await
                    .map_err(|e| schema_err("cannot create keyspace", &e))?;
            }
            // The table was dropped: no data needs a repair for the new replication.
            Some(have) if *have != wanted && config.drop_schema => {
                {
                    use std::io::Write as _;
                    // Never panics on an unwritable stderr.
                    let _ = writeln!(std::io::stderr(), "note: keyspace {ks} had {have}; altered to {wanted} (ALTER KEYSPACE)");
                }
                session
                    .query_unpaged(format!("ALTER KEYSPACE {ks} WITH {}", wanted.cql()), &[])
                    .await
                    .map_err(|e| schema_err("cannot alter keyspace", &e))?;
            }
            Some(have) if *have != wanted => return Err(replication_mismatch(ks, have, &wanted, url)),
            Some(_) => {}
        }
        let cols: Vec<String> = settings
            .columns
            .iter()
            .zip(&settings.types)
            .map(|(c, t)| format!("{c} {}", cql_type(*t)))
            .collect();
        let compression = if compression == "none" {
            "{'enabled': 'false'}".to_string()
        } else {
            format!("{{'class': '{compression}'}}")
        };
        session
            .query_unpaged(
                format!(
                    "CREATE TABLE IF NOT EXISTS {t} ({} varchar PRIMARY KEY, {}) WITH compaction = {{'class': '{compaction}'}} AND compression = {compression}",
                    settings.key,
                    cols.join(", ")
                ),
                &[],
            )
            .await
            .map_err(|e| schema_err("cannot create table", &e))?;
        // Secondary indexes of one column each (checked when the binding opened).
        for ix in config.schema.indexes.iter() {
            session
                .query_unpaged(
                    format!("CREATE INDEX IF NOT EXISTS {} ON {t} ({})", ix.name, settings.columns[ix.columns[0]]),
                    &[],
                )
                .await
                .map_err(|e| schema_err("cannot create index", &e))?;
        }
        session.await_schema_agreement().await.map_err(|e| schema_err("no schema agreement", &e))?;
    }
    let exists = session
        .query_unpaged(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
            (settings.keyspace.as_str(), settings.table.as_str()),
        )
        .await
        .map_err(|e| schema_err("cannot look up the table", &e))?
        .into_rows_result()
        .map(|r| r.rows_num() > 0)
        .unwrap_or(false);
    if !exists {
        return Err(BindingError::Schema(format!(
            "table '{t}' does not exist on {url}: create it with --create-schema (e.g. scalebench load --create-schema)"
        )));
    }
    // A run measures the replication it was asked for, never a keyspace left by an earlier
    // configuration (options given explicitly only: an external keyspace is taken as it is).
    if !config.create_schema && config.options.keys().any(|k| REPLICATION_OPTIONS.contains(&k.as_str())) {
        if let Some(have) = &current {
            if *have != wanted {
                return Err(replication_mismatch(ks, have, &wanted, url));
            }
        }
    }
    Ok(())
}

/// The options that set the keyspace's replication.
const REPLICATION_OPTIONS: [&str; 3] = [
    "replication_factor",
    "replication_strategy",
    "durable_writes",
];

/// A keyspace's replication as the options ask for it and as `system_schema.keyspaces` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Replication {
    /// `SimpleStrategy` or `NetworkTopologyStrategy` (replicas in `datacenter1`).
    pub(super) strategy: String,
    pub(super) factor: u64,
    pub(super) durable_writes: bool,
}

impl Replication {
    fn cql(&self) -> String {
        let (class, key) = match self.strategy.as_str() {
            "NetworkTopologyStrategy" => ("NetworkTopologyStrategy", "datacenter1"),
            _ => ("SimpleStrategy", "replication_factor"),
        };
        format!(
            "replication = {{'class': '{class}', '{key}': {}}} AND durable_writes = {}",
            self.factor, self.durable_writes
        )
    }

    /// The keyspace's replication, `None` when it does not exist. A strategy other than the two
    /// (or more than one datacenter) reads as factor 0, so it never matches what was asked.
    async fn of_keyspace(
        session: &Session,
        keyspace: &str,
    ) -> Result<Option<Replication>, Box<dyn std::error::Error + Send + Sync>> {
        let rows = session
            .query_unpaged(
                "SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = ?",
                (keyspace,),
            )
            .await?
            .into_rows_result()?;
        let Some(row) = rows
            .rows::<(std::collections::HashMap<String, String>, bool)>()?
            .next()
            .transpose()?
        else {
            return Ok(None);
        };
        let (map, durable_writes) = row;
        let class = map.get("class").map(String::as_str).unwrap_or("");
        let strategy = class.rsplit('.').next().unwrap_or(class).to_string();
        let factor = match strategy.as_str() {
            "SimpleStrategy" => map.get("replication_factor"),
            "NetworkTopologyStrategy" if map.len() == 2 => map.get("datacenter1"),
            _ => None,
        }
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
        Ok(Some(Replication {
            strategy,
            factor,
            durable_writes,
        }))
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} with {} replicas, durable_writes = {}",
            self.strategy, self.factor, self.durable_writes
        )
    }
}

fn replication_mismatch(
    ks: &str,
    have: &Replication,
    wanted: &Replication,
    url: &str,
) -> BindingError {
    BindingError::Schema(format!(
        "keyspace {ks} on {url} has {have}, but {wanted} was asked: load again with --create-schema --drop-schema (which ALTERs the keyspace), or set cassandra.replication_factor, replication_strategy and durable_writes to what it has"
    ))
}
