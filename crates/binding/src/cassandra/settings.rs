//! The binding's settings: the URL's nodes, keyspace and credentials and every option, checked
//! once when the factory opens; the workload file's CQL statements with their levels.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use scalebench_workload::statement::{Language, Param};
use scalebench_workload::FieldType;
use scylla::statement::{Consistency, SerialConsistency};

use super::values::cql_identifier;
use super::nodes;
use super::tls;
use crate::info::OptionValue;
use crate::{BindingConfig, BindingError};

binding_options! {
    pub struct Options {
        replication_factor: u64 = "1" => "replication factor of the keyspace; --create-schema creates or ALTERs the keyspace to match (with --drop-schema), a run refuses a keyspace that differs",
        replication_strategy: ReplicationStrategy = "SimpleStrategy" => "the keyspace's replication class (NetworkTopologyStrategy: all replicas in datacenter1)",
        durable_writes: bool = "true" => "false: the keyspace's writes skip the commit log (Wegert's commit log \"off\"; a deployment's commitlog_sync = \"off\" sets it)",
        read_consistency: ConsistencyLevel = "ONE" => "consistency of reads",
        scan_consistency: ConsistencyLevel = "ONE" => "consistency of scans",
        write_consistency: ConsistencyLevel = "ONE" => "consistency of inserts and updates",
        delete_consistency: ConsistencyLevel = "ONE" => "consistency of deletes",
        serial_consistency: SerialLevel = "SERIAL" => "consistency of lightweight transactions (with insert_if_not_exists)",
        prepared: bool = "true" => "prepared statements (token-aware routing needs them); false sends CQL text with the values as literals",
        insert_if_not_exists: bool = "false" => "INSERT ... IF NOT EXISTS (a lightweight transaction; an existing row fails as conflict)",
        load_mode: LoadMode = "batch" => "a load batch (--batch-size) as one UNLOGGED BATCH (batch), or as concurrent single inserts (concurrent)",
        compaction: String = "SizeTieredCompactionStrategy" => "compaction class of the table created by --create-schema (e.g. LeveledCompactionStrategy)",
        compression: String = "LZ4Compressor" => "SSTable compression class, or none",
        token_aware: bool = "true" => "route each request to a replica of its key",
    }
}

option_choice! {
    pub enum ReplicationStrategy {
        Simple = "SimpleStrategy",
        NetworkTopology = "NetworkTopologyStrategy",
    }
}

option_choice! {
    pub enum ConsistencyLevel {
        Any = "ANY",
        One = "ONE",
        Two = "TWO",
        Three = "THREE",
        Quorum = "QUORUM",
        All = "ALL",
        LocalQuorum = "LOCAL_QUORUM",
        EachQuorum = "EACH_QUORUM",
        LocalOne = "LOCAL_ONE",
    }
}

option_choice! {
    pub enum SerialLevel {
        Serial = "SERIAL",
        LocalSerial = "LOCAL_SERIAL",
    }
}

option_choice! {
    pub enum LoadMode {
        Batch = "batch",
        Concurrent = "concurrent",
    }
}

impl ConsistencyLevel {
    pub(super) fn driver(self) -> Consistency {
        match self {
            Self::Any => Consistency::Any,
            Self::One => Consistency::One,
            Self::Two => Consistency::Two,
            Self::Three => Consistency::Three,
            Self::Quorum => Consistency::Quorum,
            Self::All => Consistency::All,
            Self::LocalQuorum => Consistency::LocalQuorum,
            Self::EachQuorum => Consistency::EachQuorum,
            Self::LocalOne => Consistency::LocalOne,
        }
    }
}

#[derive(Clone)]
pub(super) struct Settings {
    pub(super) nodes: Vec<String>,
    /// User and password from the URL (PasswordAuthenticator), never shown.
    pub(super) credentials: Option<(String, String)>,
    /// Client encryption ([`tls`]); None: plain text.
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
    pub(super) url: String,
    pub(super) keyspace: String,
    pub(super) table: String,
    /// The key's column: YCSB's `y_id`, or the workload's `keycolumn` (quoted, lower case).
    pub(super) key: String,
    pub(super) columns: Vec<String>,
    /// The fields' types: a typed table (measurement records) binds typed values.
    pub(super) types: Vec<FieldType>,
    pub(super) typed: bool,
    pub(super) read: Consistency,
    /// A read `read` finds unavailable is tried again at this level (the verify pass's, at ALL).
    pub(super) read_if_unavailable: Option<Consistency>,
    /// Each connection attempt and setup call (`--connect-timeout`).
    pub(super) connect_timeout: std::time::Duration,
    pub(super) scan: Consistency,
    pub(super) write: Consistency,
    pub(super) delete: Consistency,
    pub(super) serial: SerialConsistency,
    pub(super) prepared: bool,
    pub(super) if_not_exists: bool,
    pub(super) concurrent_load: bool,
    pub(super) token_aware: bool,
    /// A workload file's CQL statements, by named operation.
    pub(super) own: Vec<Option<CqlStatement>>,
    /// Each worker bound to one node (`--request-set-threads fixed`).
    pub(super) pinned: Option<nodes::Pinned>,
    /// Distinguishes factories in the per-thread session cache.
    pub(super) id: u64,
}

/// A workload file's CQL statement: its text with bind markers, the parameter each binds, and
/// its consistency level.
#[derive(Clone)]
pub(super) struct CqlStatement {
    pub(super) name: String,
    pub(super) text: String,
    pub(super) binds: Vec<usize>,
    pub(super) params: Vec<Param>,
    pub(super) consistency: Consistency,
}

/// The workload's CQL statements: each at its own level, else at `read` for a SELECT and
/// `write` for the rest.
fn cql_statements(
    schema: &crate::Schema,
    read: Consistency,
    write: Consistency,
) -> Vec<Option<CqlStatement>> {
    schema
        .statements
        .iter()
        .map(|st| {
            let st = st.as_deref()?;
            let template = st.template(Language::Cql)?;
            let text = template.render(|_, _| "?".to_string());
            let selects = text.trim_start().to_ascii_uppercase().starts_with("SELECT");
            let consistency = st
                .consistency
                .as_deref()
                .and_then(ConsistencyLevel::parse_option)
                .map(ConsistencyLevel::driver)
                .unwrap_or(if selects { read } else { write });
            Some(CqlStatement {
                name: st.name.clone(),
                text,
                binds: template.occurrences(),
                params: st.params.clone(),
                consistency,
            })
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

impl Settings {
    pub(super) fn for_verify(&self) -> Settings {
        Settings {
            read: Consistency::All,
            read_if_unavailable: Some(Consistency::Quorum),
            prepared: false,
            pinned: None,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ..self.clone()
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The URL's nodes, keyspace and credentials and every option, checked.
/// The settings and the options they were read from (`binding`: the binding's name, for messages).
pub(super) fn settings_of(
    binding: &str,
    config: &BindingConfig,
) -> Result<(Settings, Options), BindingError> {
        let url = config.url.redacted();
        // Hosts without the credentials, which go to the driver separately (a `user:pw@host`
        // given as a host name ends up in the driver's error message).
        let nodes: Vec<String> = config
            .url
            .hosts(9042)
            .into_iter()
            .filter(|h| !h.starts_with(':'))
            .collect();
        let keyspace = config.url.url().path().trim_start_matches('/').to_string();
        let credentials = match config.url.url().username() {
            "" => None,
            user => Some((
                percent_decoded(user),
                percent_decoded(config.url.url().password().unwrap_or("")),
            )),
        };
        if nodes.is_empty()
            || keyspace.is_empty()
            || !keyspace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(BindingError::Config(format!(
                "invalid database URL '{url}': expected cassandra://host:port/keyspace"
            )));
        }
        let tls = tls::from_url(config.url.url(), &url, |k| std::env::var(k).ok())?;
        let options = Options::read(binding, &config.options)?;
        let settings = Settings {
            url: url.clone(),
            keyspace,
            table: config.schema.table.clone(),
            columns: config.schema.field_names.iter().map(|n| cql_identifier(n)).collect(),
            key: config
                .schema
                .key_column
                .as_deref()
                .map_or_else(|| "y_id".to_string(), cql_identifier),
            types: config.schema.field_types.to_vec(),
            typed: config.schema.is_typed(),
            read: options.read_consistency.driver(),
            read_if_unavailable: None,
            connect_timeout: config.connect_timeout,
            scan: options.scan_consistency.driver(),
            write: options.write_consistency.driver(),
            delete: options.delete_consistency.driver(),
            serial: match options.serial_consistency {
                SerialLevel::Serial => SerialConsistency::Serial,
                SerialLevel::LocalSerial => SerialConsistency::LocalSerial,
            },
            prepared: options.prepared,
            if_not_exists: options.insert_if_not_exists,
            concurrent_load: options.load_mode == LoadMode::Concurrent,
            token_aware: options.token_aware,
            own: cql_statements(
                &config.schema,
                options.read_consistency.driver(),
                options.write_consistency.driver(),
            ),
            nodes,
            credentials,
            tls,
            pinned: None,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        };
    Ok((settings, options))
}
