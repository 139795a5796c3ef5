//! Metadata fetching and processing module.
//!
//! This module is responsible for querying cluster metadata from the control connection,
//! including information about peers (nodes in the cluster), keyspaces, tables, views,
//! and user-defined types (UDTs).
//!
//! The main entry point is [`ControlConnection::query_metadata`], which fetches all
//! metadata needed to maintain an up-to-date view of the cluster topology and schema.
//!
//! Key functionality includes:
//! - Querying peer information from `system.peers` and `system.local` tables
//! - Fetching keyspace metadata including replication strategies
//! - Loading table and materialized view schemas from `system_schema` tables
//! - Processing user-defined types with proper dependency resolution via topological sort
//! - Parsing CQL type strings into structured type representations

use std::borrow::BorrowMut;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Formatter};
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use crate::frame::response::result::{ColumnSpec, TableSpec};
use crate::parse_utils::{ParseErrorCause, ParseResult, ParserState};
use futures::{FutureExt, Stream, StreamExt, TryStreamExt, future, stream};
use itertools::{Either, Itertools};
use rand::Rng;
use tracing::{debug, trace, warn};
use uuid::Uuid;

use super::{
    CollectionType, Column, ColumnKind, ColumnType, ConsistencyMode, Keyspace, MaterializedView,
    Metadata, MissingUserDefinedType, NativeType, Peer, SchemaMetadataFetchLevel,
    SchemaMetadataFetchMode, SingleKeyspaceMetadataError, Strategy, Table, UserDefinedType,
};

use crate::DeserializeRow;
use crate::client::pager::QueryPager;
use crate::cluster::NodeAddr;
use crate::cluster::control_connection::ControlConnection;
use crate::cluster::metadata::update::{FetchedKeyspace, SchemaUpdate};
use crate::cluster::metadata::{ClientRoutes, ClientRoutesUpdate};
use crate::deserialize::DeserializeOwnedRow;
use crate::errors::{
    ClientRoutesMetadataError, DbError, KeyspaceStrategyError, KeyspacesMetadataError,
    MetadataError, MetadataFetchError, MetadataFetchErrorKind, NextPageError, NextRowError,
    PeersMetadataError, RequestAttemptError, RequestError, TablesMetadataError, UdtMetadataError,
};
use crate::routing::Token;

use super::cc_establisher::TopologyUpdateGuard;

type PerKeyspace<T> = HashMap<String, T>;
type PerKeyspaceResult<T, E> = PerKeyspace<Result<T, E>>;
type PerTable<T> = HashMap<String, T>;
type PerKsTable<T> = HashMap<(String, String), T>;
type PerKsTableResult<T, E> = PerKsTable<Result<T, E>>;

#[derive(Clone, Debug, PartialEq, Eq)]
enum PreColumnType {
    Native(NativeType),
    Collection {
        frozen: bool,
        typ: PreCollectionType,
    },
    Tuple(Vec<PreColumnType>),
    Vector {
        typ: Box<PreColumnType>,
        dimensions: u16,
    },
    UserDefinedType {
        frozen: bool,
        name: String,
    },
}

impl PreColumnType {
    pub(crate) fn into_cql_type(
        self,
        keyspace_name: &str,
        keyspace_udts: &PerTable<Arc<UserDefinedType<'static>>>,
    ) -> Result<ColumnType<'static>, MissingUserDefinedType> {
        match self {
            PreColumnType::Native(n) => Ok(ColumnType::Native(n)),
            PreColumnType::Collection { frozen, typ: type_ } => type_
                .into_collection_type(keyspace_name, keyspace_udts)
                .map(|inner| ColumnType::Collection { frozen, typ: inner }),
            PreColumnType::Tuple(t) => t
                .into_iter()
                .map(|t| t.into_cql_type(keyspace_name, keyspace_udts))
                .collect::<Result<Vec<ColumnType>, MissingUserDefinedType>>()
                .map(ColumnType::Tuple),
            PreColumnType::Vector {
                typ: type_,
                dimensions,
            } => type_
                .into_cql_type(keyspace_name, keyspace_udts)
                .map(|inner| ColumnType::Vector {
                    typ: Box::new(inner),
                    dimensions,
                }),
            PreColumnType::UserDefinedType { frozen, name } => {
                let definition = match keyspace_udts.get(&name) {
                    Some(def) => def.clone(),
                    None => {
                        return Err(MissingUserDefinedType {
                            name,
                            keyspace: keyspace_name.to_owned(),
                        });
                    }
                };
                Ok(ColumnType::UserDefinedType { frozen, definition })
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum PreCollectionType {
    List(Box<PreColumnType>),
    Map(Box<PreColumnType>, Box<PreColumnType>),
    Set(Box<PreColumnType>),
}

impl PreCollectionType {
    pub(crate) fn into_collection_type(
        self,
        keyspace_name: &str,
        keyspace_udts: &PerTable<Arc<UserDefinedType<'static>>>,
    ) -> Result<CollectionType<'static>, MissingUserDefinedType> {
        match self {
            PreCollectionType::List(t) => t
                .into_cql_type(keyspace_name, keyspace_udts)
                .map(|inner| CollectionType::List(Box::new(inner))),
            PreCollectionType::Map(tk, tv) => Ok(CollectionType::Map(
                Box::new(tk.into_cql_type(keyspace_name, keyspace_udts)?),
                Box::new(tv.into_cql_type(keyspace_name, keyspace_udts)?),
            )),
            PreCollectionType::Set(t) => t
                .into_cql_type(keyspace_name, keyspace_udts)
                .map(|inner| CollectionType::Set(Box::new(inner))),
        }
    }
}

#[derive(Clone, Debug)]
struct InvalidCqlType {
    typ: String,
    position: usize,
    reason: String,
}

impl fmt::Display for InvalidCqlType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl ControlConnection {
    /// Queries the cluster metadata (peers, schema, client routes) as configured
    /// by this control connection's
    /// [`ControlConnectionConfig`](crate::cluster::control_connection::ControlConnectionConfig).
    ///
    /// The result comes wrapped in a [`TopologyUpdateGuard`]: the fetched metadata
    /// affects which peers the [`ControlConnectionEstablisher`](super::cc_establisher::ControlConnectionEstablisher)
    /// establishes control connections to, so the establisher must absorb it before
    /// anything else can use it.
    pub(super) async fn query_metadata(&self) -> Result<TopologyUpdateGuard, MetadataError> {
        let connect_port = self.endpoint().address().port();

        let peers_query = self.query_peers(connect_port);
        let keyspaces_query = self.query_keyspaces(
            &self.config.keyspaces_to_fetch,
            self.config.schema_metadata_fetch_mode,
        );
        let client_routes_query = async {
            let Some(subscriber) = self.config.client_routes_subscriber.as_ref() else {
                return Ok(None);
            };
            self.query_client_routes(subscriber.get_connection_ids(), &[])
                .await
                .map(Some)
        };
        let peers_and_cluster_name;
        let client_routes: Option<ClientRoutes>;
        let keyspaces: HashMap<String, Result<Keyspace, SingleKeyspaceMetadataError>>;

        (peers_and_cluster_name, client_routes, keyspaces) =
            tokio::try_join!(peers_query, client_routes_query, keyspaces_query)?;

        let (peers, cluster_name) = peers_and_cluster_name;

        Self::validate_peers(&peers)?;

        Ok(TopologyUpdateGuard::new(Metadata {
            peers,
            keyspaces,
            cluster_name,
            client_routes,
        }))
    }

    /// Queries only the cluster topology: the peer list (`system.peers` and
    /// `system.local`).
    ///
    /// The `cluster_name` that comes along the peers is dropped: it is fixed for
    /// the lifetime of a cluster, so the one read by the last full fetch stands.
    ///
    /// The result comes wrapped in a [`TopologyUpdateGuard`] for the same reason
    /// as in `query_metadata`: the establisher must absorb the new peer list
    /// before anything else uses it.
    pub(super) async fn query_topology(
        &self,
    ) -> Result<TopologyUpdateGuard<Vec<Peer>>, MetadataError> {
        let connect_port = self.endpoint().address().port();

        let (peers, _cluster_name) = self.query_peers(connect_port).await?;

        Self::validate_peers(&peers)?;

        Ok(TopologyUpdateGuard::new(peers))
    }

    /// Rejects a peer list that could not describe a working cluster, so that
    /// the caller treats the fetch as failed instead of publishing it.
    fn validate_peers(peers: &[Peer]) -> Result<(), PeersMetadataError> {
        // There must be at least one peer
        if peers.is_empty() {
            return Err(PeersMetadataError::EmptyPeers);
        }

        // At least one peer has to have some tokens
        if peers.iter().all(|peer| peer.tokens.is_empty()) {
            return Err(PeersMetadataError::EmptyTokenLists);
        }

        Ok(())
    }
}

#[derive(DeserializeRow)]
#[scylla(crate = "scylla_cql")]
struct NodeInfoRow {
    host_id: Option<Uuid>,
    #[scylla(rename = "rpc_address")]
    untranslated_ip_addr: IpAddr,
    #[scylla(rename = "data_center")]
    datacenter: Option<String>,
    rack: Option<String>,
    tokens: Option<Vec<String>>,
}

#[derive(DeserializeRow)]
#[scylla(crate = "scylla_cql")]
struct LocalNodeInfoRow {
    host_id: Option<Uuid>,
    #[scylla(rename = "rpc_address")]
    untranslated_ip_addr: IpAddr,
    #[scylla(rename = "data_center")]
    datacenter: Option<String>,
    rack: Option<String>,
    tokens: Option<Vec<String>>,
    cluster_name: Option<String>,
}

#[derive(Clone, Copy)]
enum NodeInfoSource {
    Local,
    Peer,
}

impl NodeInfoSource {
    fn describe(&self) -> &'static str {
        match self {
            Self::Local => "local node",
            Self::Peer => "peer",
        }
    }
}

impl ControlConnection {
    async fn query_peers(
        &self,
        connect_port: u16,
    ) -> Result<(Vec<Peer>, Option<String>), MetadataError> {
        let peers_query_stream = self
            .query_iter(
                "SELECT host_id, rpc_address, data_center, rack, tokens FROM system.peers",
                &(),
            )
            .map(|pager_res| {
                let pager = pager_res?;
                let rows_stream = pager.rows_stream::<NodeInfoRow>()?;
                Ok::<_, MetadataFetchErrorKind>(rows_stream)
            })
            .into_stream()
            .map(|result| result.map(|stream| stream.map_err(MetadataFetchErrorKind::NextRowError)))
            .try_flatten()
            // Add table context to the error.
            .map_err(|error| MetadataFetchError {
                error,
                table: "system.peers",
            })
            .and_then(|row| future::ok((NodeInfoSource::Peer, row, None::<String>)));

        let local_query_stream = self
            .query_iter("SELECT host_id, rpc_address, data_center, rack, tokens, cluster_name FROM system.local WHERE key='local'", &())
            .map(|pager_res| {
                let pager = pager_res?;
                let rows_stream = pager.rows_stream::<LocalNodeInfoRow>()?;
                Ok::<_, MetadataFetchErrorKind>(rows_stream)
            })
            .into_stream()
            .map(|result| result.map(|stream| stream.map_err(MetadataFetchErrorKind::NextRowError)))
            .try_flatten()
            // Add table context to the error.
            .map_err(|error| MetadataFetchError {
                error,
                table: "system.local",
            })
            .and_then(|row| {
                let cluster_name = row.cluster_name;
                let node_row = NodeInfoRow {
                    host_id: row.host_id,
                    untranslated_ip_addr: row.untranslated_ip_addr,
                    datacenter: row.datacenter,
                    rack: row.rack,
                    tokens: row.tokens,
                };
                future::ok((NodeInfoSource::Local, node_row, cluster_name))
            });

        let untranslated_rows = stream::select(peers_query_stream, local_query_stream);

        let local_ip: IpAddr = self.get_connect_address().ip();
        let local_address = SocketAddr::new(local_ip, connect_port);

        let translated_peers_futures = untranslated_rows.map(|row_result| async {
            match row_result {
                Ok((source, row, cluster_name)) => {
                    let peer = Self::create_peer_from_row(source, row, local_address).await;
                    (peer, cluster_name)
                }
                Err(err) => {
                    warn!(
                        "system.peers or system.local has an invalid row, skipping it: {}",
                        err
                    );
                    (None, None)
                }
            }
        });

        let (peers, cluster_name) = translated_peers_futures
            .buffer_unordered(256)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .fold(
                (Vec::new(), None),
                |(mut peers, cluster_name), (peer, name)| {
                    if let Some(peer) = peer {
                        peers.push(peer);
                    }
                    (peers, cluster_name.or(name))
                },
            );

        Ok((peers, cluster_name))
    }

    async fn create_peer_from_row(
        source: NodeInfoSource,
        row: NodeInfoRow,
        local_address: SocketAddr,
    ) -> Option<Peer> {
        let NodeInfoRow {
            host_id,
            untranslated_ip_addr,
            datacenter,
            rack,
            tokens,
        } = row;

        let host_id = match host_id {
            Some(host_id) => host_id,
            None => {
                warn!(
                    "{} (untranslated ip: {}, dc: {:?}, rack: {:?}) has Host ID set to null; skipping node.",
                    source.describe(),
                    untranslated_ip_addr,
                    datacenter,
                    rack
                );
                return None;
            }
        };

        let connect_port = local_address.port();
        let untranslated_address = SocketAddr::new(untranslated_ip_addr, connect_port);
        // The fetched private addresses are subject to optional address translation.
        let node_addr = NodeAddr::Translatable(untranslated_address);

        let tokens_str: Vec<String> = tokens.unwrap_or_default();

        // Parse string representation of tokens as integer values
        let tokens: Vec<Token> = match tokens_str
            .iter()
            .map(|s| Token::from_str(s))
            .collect::<Result<Vec<Token>, _>>()
        {
            Ok(parsed) => parsed,
            Err(e) => {
                // FIXME: we could allow the users to provide custom partitioning information
                // in order for it to work with non-standard token sizes.
                // Also, we could implement support for Cassandra's other standard partitioners
                // like RandomPartitioner or ByteOrderedPartitioner.
                trace!(
                    "Couldn't parse tokens as 64-bit integers: {}, proceeding with a dummy token. If you're using a partitioner with different token size, consider migrating to murmur3",
                    e
                );
                vec![Token::new(rand::rng().random::<i64>())]
            }
        };

        Some(Peer {
            host_id,
            address: node_addr,
            tokens,
            datacenter,
            rack,
        })
    }
}

/*
 * CREATE TABLE system.client_routes (
 *     connection_id text,
 *     host_id uuid,
 *     address text,          -- DNS hostname of the proxy reachable via client_routes routing
 *     port int,              -- CQL plaintext port
 *     tls_port int,          -- CQL TLS port
 *     alternator_port int,
 *     alternator_https_port int,
 *     PRIMARY KEY (connection_id, host_id)
 * );
 */

/* There are two separate structs:
 * 1. ClientRoutesEntry
 * 2. ClientRoute
 * They differ just by types to represent ports: i32 in ClientRoutesEntry and u16 for ClientRoute.
 * The reason is that only signed integers implement DeserializeValue.
 * So, we utilise the derive macro to implement DeserializeRow automatically on ClientRoutesEntry,
 * and then convert ClientRoutesEntry to a ClientRoute.
 */

/// Represents an entry of `system.client_routes` table, in a more raw form (ports as i32).
#[derive(DeserializeRow)]
#[scylla(crate = "crate")]
pub(crate) struct ClientRoutesEntry {
    // PRIMARY KEY (connection_id, host_id)
    pub(crate) connection_id: String,
    // DB's REST API throws HTTP 500 if `host_id` is invalid UUID.
    pub(crate) host_id: Uuid,

    // DB's REST API throws HTTP 400 if `address` is null.
    #[scylla(rename = "address")]
    pub(crate) hostname: String,

    // DB's REST API throws HTTP 400 if both `port` and `tls_port` are null,
    // allows inserting either of them as null as long as the other is not null.

    // Nullable, not part of the primary key. DB's REST API allows inserting null.
    pub(crate) port: Option<i32>,
    // Nullable, not part of the primary key. DB's REST API allows inserting null.
    pub(crate) tls_port: Option<i32>,
}

impl TryFrom<ClientRoutesEntry> for super::ClientRoute {
    type Error = ClientRoutesMetadataError;

    fn try_from(
        ClientRoutesEntry {
            connection_id,
            host_id,
            hostname,
            port,
            tls_port,
        }: ClientRoutesEntry,
    ) -> Result<Self, Self::Error> {
        fn parse_port(
            port: Option<i32>,
            is_tls: bool,
        ) -> Result<Option<u16>, ClientRoutesMetadataError> {
            port.map(|port| {
                u16::try_from(port)
                    .map_err(|_| ClientRoutesMetadataError::InvalidPortValue { port, is_tls })
            })
            .transpose()
        }
        let port = parse_port(port, false)?;
        let tls_port = parse_port(tls_port, true)?;
        Ok(Self {
            connection_id,
            host_id,
            hostname,
            port,
            tls_port,
        })
    }
}

/// What the last SCHEMA_CHANGE event seen for a keyspace did to it.
pub(crate) enum LastKeyspaceChange {
    /// The keyspace itself was dropped, so it is to be removed from the schema
    /// metadata rather than re-read.
    Dropped,
    /// Anything else - the keyspace was created or altered, or an object in it
    /// was created, altered or dropped - so its metadata is to be re-read.
    Altered,
}

impl ControlConnection {
    pub(super) async fn query_client_routes(
        &self,
        // List of connection ids that are accepted.
        // If empty, all connection ids are accepted.
        connection_ids: &[String],
        // List of host ids that are accepted.
        // If empty, all host ids are accepted.
        host_ids: &[Uuid],
    ) -> Result<ClientRoutes, MetadataError> {
        async fn query_client_routes_with_values(
            conn: &ControlConnection,
            query_str: &str,
            values: &(dyn crate::serialize::row::SerializeRow + Sync),
        ) -> Result<ClientRoutes, MetadataError> {
            conn.query_iter(query_str, values)
                .into_stream()
                .map(|pager_res| {
                    let pager = pager_res?;
                    let stream = pager.rows_stream::<ClientRoutesEntry>()?;
                    Ok::<_, MetadataFetchErrorKind>(stream.map_err(MetadataFetchErrorKind::from))
                })
                .try_flatten()
                // Add table context to the error.
                .map_err(|error| MetadataFetchError {
                    error,
                    table: "system.client_routes",
                })
                .map_err(MetadataError::from)
                .map(|r| {
                    r.and_then(|c| super::ClientRoute::try_from(c).map_err(MetadataError::from))
                })
                .try_collect()
                .await
        }

        let filter_by_connection_ids = !connection_ids.is_empty();
        let filter_by_host_ids = !host_ids.is_empty();

        let (query_str, values): (&str, &(dyn crate::serialize::row::SerializeRow + Sync)) = match (
            filter_by_connection_ids,
            filter_by_host_ids,
        ) {
            (true, true) => (
                "SELECT connection_id, host_id, address, port, tls_port FROM system.client_routes WHERE connection_id IN ? AND host_id IN ?",
                &(connection_ids, host_ids),
            ),
            (true, false) => (
                "SELECT connection_id, host_id, address, port, tls_port FROM system.client_routes WHERE connection_id IN ?",
                &(connection_ids,),
            ),
            (false, true) => (
                "SELECT connection_id, host_id, address, port, tls_port FROM system.client_routes WHERE host_id IN ? ALLOW FILTERING",
                &(host_ids,),
            ),
            (false, false) => (
                "SELECT connection_id, host_id, address, port, tls_port FROM system.client_routes ALLOW FILTERING",
                &(),
            ),
        };

        let routes = query_client_routes_with_values(self, query_str, values).await?;

        Ok(routes)
    }

    /// Performs a partial fetch of `system.client_routes`.
    ///
    /// Such partial fetch is restricted to the given (connection id, host id) pairs, as accumulated from
    /// CLIENT_ROUTES_CHANGE:UPDATE_NODES events. Those pairs are additionally filtered
    /// to only query connection ids that the driver is interested in.
    ///
    /// Returns the resulting [`ClientRoutesUpdate`], or `None` if there is no subscriber
    /// configured or no pair has a connection id relevant to this driver. Merging
    /// the update into the [`ClientRoutesSubscriber`]'s knowledge is the caller's job.
    ///
    /// [`ClientRoutesSubscriber`]: crate::client::client_routes::ClientRoutesSubscriber
    pub(super) async fn fetch_client_routes_update(
        &self,
        pairs: &HashSet<(String, Uuid)>,
    ) -> Result<Option<ClientRoutesUpdate>, MetadataError> {
        let Some(subscriber) = self.config.client_routes_subscriber.as_ref() else {
            // No subscriber, but received an event? Strange enough, but nothing to be done here.
            warn!("BUG: Received ClientRoutesChange event, but no ClientRoutesSubscriber was set!");
            return Ok(None);
        };

        let monitored_pairs = pairs
            .iter()
            .filter(|(conn_id, _host_id)| subscriber.get_connection_ids().contains(conn_id));

        // The pairs cannot be queried as such: the query is
        // `WHERE connection id IN ? AND host id IN ?`, which fetches the whole
        // cross product of the listed ids - possibly more routes than the
        // pairs name, for example `(A, Y)` for pairs `[(A, X), (B, Y)]`. This
        // is a tradeoff - the only alternative is issuing multiple queries,
        // one per connection id. The surplus routes are ignored when the
        // update is built from the pairs - see
        // [`ClientRoutesUpdate::from_pairs`].
        //
        // TODO: this is wasteful - it allocates strings and vecs.
        // This won't be a performance problem, because UPDATE_NODES events are not frequent.
        // As an optimization, we can implement ser/de for some special new iterator type,
        // to avoid the need to allocate when serializing collections.
        let (connection_ids, host_ids): (HashSet<String>, HashSet<Uuid>) =
            monitored_pairs.cloned().unzip();

        if connection_ids.is_empty() {
            // The events contained no relevant connection IDs.
            // Nothing to be done.
            return Ok(None);
        }

        let client_routes = self
            .query_client_routes(&Vec::from_iter(connection_ids), &Vec::from_iter(host_ids))
            .await?;

        Ok(Some(ClientRoutesUpdate::from_pairs(
            pairs,
            subscriber.get_connection_ids(),
            &client_routes,
        )))
    }

    /// Performs a partial fetch of the schema metadata: re-reads the schema
    /// parts described by `request`.
    ///
    /// Each keyspace in `request` is marked as either dropped, or altered.
    /// The altered keyspaces are fetched from the cluster.
    /// The dropped ones will be reported as `FetchedKeyspace::Absent`,
    /// without asking cluster for them.
    /// If a keyspace marked as `altered` is not present in the cluster,
    /// it will also be reported as `FetchedKeyspace::Absent`.
    ///
    /// Keyspaces in `request` are filtered by this control connection's configuration.
    ///
    /// Returns `None` when the configuration leaves nothing to do at all -
    /// there is then no update to publish.
    pub(super) async fn fetch_schema_update(
        &self,
        request: HashMap<String, LastKeyspaceChange>,
    ) -> Result<Option<SchemaUpdate>, MetadataError> {
        if matches!(
            self.config.schema_metadata_fetch_mode,
            SchemaMetadataFetchMode::Disabled
        ) {
            // No schema metadata is kept at all, so there is nothing to update.
            return Ok(None);
        }

        // An empty `keyspaces_to_fetch` means "no restriction".
        let is_fetched = |keyspace: &String| {
            self.config.keyspaces_to_fetch.is_empty()
                || self.config.keyspaces_to_fetch.contains(keyspace)
        };

        // Split the request into a list of keyspaces to fetch,
        // and a map containing keyspaces that were dropped.
        // Later this map will be extended with a fetch result.
        let (to_fetch, mut keyspaces): (Vec<_>, HashMap<_, _>) = request
            .into_iter()
            .filter(|(name, _)| is_fetched(name))
            .partition_map(|(name, state)| match state {
                LastKeyspaceChange::Altered => Either::Left(name),
                LastKeyspaceChange::Dropped => Either::Right((name, FetchedKeyspace::Absent)),
            });

        if to_fetch.is_empty() {
            // Careful: an empty keyspace list means "every keyspace" to
            // `query_keyspaces`, so it must not be called with one.
            return Ok((!keyspaces.is_empty()).then_some(SchemaUpdate { keyspaces }));
        }

        let mut fetched = self
            .query_keyspaces(&to_fetch, self.config.schema_metadata_fetch_mode)
            .await?;

        keyspaces.extend(to_fetch.into_iter().map(|keyspace| {
            // A keyspace the fetch found no row for is gone: either the event
            // announcing its drop is still on its way, or it was dropped
            // without one. Either way it is dropped from the metadata rather
            // than left stale.
            let entry = match fetched.remove(&keyspace) {
                Some(metadata) => FetchedKeyspace::Present(metadata),
                None => FetchedKeyspace::Absent,
            };
            (keyspace, entry)
        }));

        Ok(Some(SchemaUpdate { keyspaces }))
    }

    fn query_filter_keyspace_name<'a, R>(
        &'a self,
        query_str: &'a str,
        keyspaces_to_fetch: &'a [String],
    ) -> impl Stream<Item = Result<R, MetadataFetchErrorKind>> + use<'a, R>
    where
        R: DeserializeOwnedRow + 'static,
    {
        // This function is extracted to reduce monomorphisation penalty:
        // query_filter_keyspace_name() is going to be monomorphised into 5 distinct functions,
        // so it's better to extract the common part.
        async fn make_keyspace_filtered_query_pager(
            conn: &ControlConnection,
            query_str: &str,
            keyspaces_to_fetch: &[String],
        ) -> Result<QueryPager, MetadataFetchErrorKind> {
            if keyspaces_to_fetch.is_empty() {
                conn.query_iter(query_str, &())
                    .await
                    .map_err(MetadataFetchErrorKind::NextRowError)
            } else {
                let keyspaces = &[keyspaces_to_fetch] as &[&[String]];
                let query_str = format!("{query_str} where keyspace_name in ?");
                conn.query_iter(query_str.as_str(), &keyspaces)
                    .await
                    .map_err(MetadataFetchErrorKind::NextRowError)
            }
        }

        let fut = async move {
            let pager =
                make_keyspace_filtered_query_pager(self, query_str, keyspaces_to_fetch).await?;
            let stream: crate::client::pager::TypedRowStream<R> = pager.rows_stream::<R>()?;
            Ok::<_, MetadataFetchErrorKind>(stream)
        };
        fut.into_stream()
            .map(|result| result.map(|stream| stream.map_err(MetadataFetchErrorKind::NextRowError)))
            .try_flatten()
    }

    async fn query_keyspaces(
        &self,
        keyspaces_to_fetch: &[String],
        schema_metadata_fetch_mode: SchemaMetadataFetchMode,
    ) -> Result<PerKeyspaceResult<Keyspace, SingleKeyspaceMetadataError>, MetadataError> {
        let schema_metadata_fetch_level = match schema_metadata_fetch_mode {
            SchemaMetadataFetchMode::Disabled => return Ok(HashMap::new()),
            SchemaMetadataFetchMode::Enabled(level) => level,
        };

        let rows = self
            .query_filter_keyspace_name::<(String, HashMap<String, String>, bool)>(
                "SELECT keyspace_name, replication, durable_writes FROM system_schema.keyspaces",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.keyspaces",
            });

        // Fetching the schema (UDTs, tables, views) and the ScyllaDB-specific per-keyspace
        // metadata (tablet-based flag, consistency mode) are independent of each other, so we
        // run them concurrently to minimize the critical path length.
        let schema_query = async {
            match schema_metadata_fetch_level {
                SchemaMetadataFetchLevel::Full => {
                    // Fetch full schema: columns, keys, UDTs
                    let udts = self.query_user_defined_types(keyspaces_to_fetch).await?;
                    let mut tables_schema =
                        self.query_tables_schema(keyspaces_to_fetch, &udts).await?;
                    Ok((
                        // We pass the mutable reference to the same map to the both functions.
                        // First function fetches `system_schema.tables`, and removes found
                        // table from `tables_schema`.
                        // Second does the same for `system_schema.views`.
                        // The assumption here is that no keys (table names) can appear in both
                        // of those schema table.
                        // As far as we know this assumption is true for Scylla and Cassandra.
                        self.query_tables(keyspaces_to_fetch, &mut tables_schema)
                            .await?,
                        self.query_views(keyspaces_to_fetch, &mut tables_schema)
                            .await?,
                        udts,
                    ))
                }
                SchemaMetadataFetchLevel::Minimal => {
                    // Fetch minimal schema: just table/view names and partitioners
                    // This is needed for token-awareness and tablet-awareness to work
                    let mut tables_schema = self
                        .query_table_partitioners(keyspaces_to_fetch)
                        .await?
                        .into_iter()
                        .map(|(keyspace_and_table_name, partitioner)| {
                            (
                                keyspace_and_table_name,
                                Ok(Table {
                                    columns: HashMap::new(),
                                    partition_key: vec![],
                                    clustering_key: vec![],
                                    partitioner,
                                    pk_column_specs: vec![],
                                }),
                            )
                        })
                        .collect();

                    Ok((
                        self.query_tables(keyspaces_to_fetch, &mut tables_schema)
                            .await?,
                        self.query_views(keyspaces_to_fetch, &mut tables_schema)
                            .await?,
                        HashMap::new(),
                    ))
                }
            }
        };
        let scylladb_specific_query = async {
            self.query_keyspaces_scylladb_specific(keyspaces_to_fetch)
                .await
                .map_err(MetadataError::from)
        };

        let ((mut all_tables, mut all_views, mut all_user_defined_types), scylladb_specific) =
            tokio::try_join!(schema_query, scylladb_specific_query)?;

        rows.map(|row_result| {
            let (keyspace_name, strategy_map, durable_writes) = row_result?;

            let strategy: Strategy = strategy_from_string_map(strategy_map).map_err(|error| {
                KeyspacesMetadataError::Strategy {
                    keyspace: keyspace_name.clone(),
                    error,
                }
            })?;
            let tables = all_tables
                .remove(&keyspace_name)
                .unwrap_or_else(|| Ok(HashMap::new()));
            let views = all_views
                .remove(&keyspace_name)
                .unwrap_or_else(|| Ok(HashMap::new()));
            let user_defined_types = all_user_defined_types
                .remove(&keyspace_name)
                .unwrap_or_else(|| Ok(HashMap::new()));

            // As you can notice, in this file we generally operate on two layers of errors:
            // - Outer (MetadataError) if something went wrong with querying the cluster.
            // - Inner (SingleKeyspaceMetadataError) if the fetched metadata turned out to not be fully consistent.
            // If there is an inner error, we want to drop metadata for the whole keyspace.
            // This logic checks if either tables, views, or UDTs have such inner error, and returns it if so.
            // Notice that in the error branch, return value is wrapped in `Ok` - but this is the
            // outer error, so it just means there was no error while querying the cluster.
            let (tables, views, user_defined_types) = match (tables, views, user_defined_types) {
                (Ok(t), Ok(v), Ok(u)) => (t, v, u),
                (Err(e), _, _) | (_, Err(e), _) => return Ok((keyspace_name, Err(e))),
                (_, _, Err(e)) => {
                    return Ok((
                        keyspace_name,
                        Err(SingleKeyspaceMetadataError::MissingUDT(e)),
                    ));
                }
            };

            let keyspace = Keyspace {
                strategy,
                durable_writes,
                tablet_based: scylladb_specific.tablet_based.contains(&keyspace_name),
                consistency_mode: scylladb_specific
                    .consistency_modes
                    .get(&keyspace_name)
                    .cloned()
                    .unwrap_or(ConsistencyMode::Eventual),
                tables,
                views,
                user_defined_types,
            };

            Ok((keyspace_name, Ok(keyspace)))
        })
        .try_collect()
        .await
    }
}

#[derive(DeserializeRow, Debug)]
#[scylla(crate = "crate")]
struct UdtRow {
    keyspace_name: String,
    type_name: String,
    field_names: Vec<String>,
    field_types: Vec<String>,
}

#[derive(Debug)]
struct UdtRowWithParsedFieldTypes {
    keyspace_name: String,
    type_name: String,
    field_names: Vec<String>,
    field_types: Vec<PreColumnType>,
}

impl TryFrom<UdtRow> for UdtRowWithParsedFieldTypes {
    type Error = InvalidCqlType;
    fn try_from(udt_row: UdtRow) -> Result<Self, InvalidCqlType> {
        let UdtRow {
            keyspace_name,
            type_name,
            field_names,
            field_types,
        } = udt_row;
        let field_types = field_types
            .into_iter()
            .map(|type_| map_string_to_cql_type(&type_))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            keyspace_name,
            type_name,
            field_names,
            field_types,
        })
    }
}

impl ControlConnection {
    async fn query_user_defined_types(
        &self,
        keyspaces_to_fetch: &[String],
    ) -> Result<
        PerKeyspaceResult<PerTable<Arc<UserDefinedType<'static>>>, MissingUserDefinedType>,
        MetadataError,
    > {
        let rows = self.query_filter_keyspace_name::<UdtRow>(
        "SELECT keyspace_name, type_name, field_names, field_types FROM system_schema.types",
        keyspaces_to_fetch,
    )
    .map_err(|error| MetadataFetchError {
        error,
        table: "system_schema.types",
    });

        let mut udt_rows: Vec<UdtRowWithParsedFieldTypes> = rows
            .map(|row_result| {
                let udt_row = row_result?.try_into().map_err(|err: InvalidCqlType| {
                    MetadataError::Udts(UdtMetadataError::InvalidCqlType {
                        typ: err.typ,
                        position: err.position,
                        reason: err.reason,
                    })
                })?;

                Ok::<_, MetadataError>(udt_row)
            })
            .try_collect()
            .await?;

        let instant_before_toposort = Instant::now();
        topo_sort_udts(&mut udt_rows)?;
        let toposort_elapsed = instant_before_toposort.elapsed();
        debug!(
            "Toposort of UDT definitions took {:.2} ms (udts len: {})",
            toposort_elapsed.as_secs_f64() * 1000.,
            udt_rows.len(),
        );

        let mut udts = HashMap::new();
        'udts_loop: for udt_row in udt_rows {
            let UdtRowWithParsedFieldTypes {
                keyspace_name,
                type_name,
                field_names,
                field_types,
            } = udt_row;

            let keyspace_name_clone = keyspace_name.clone();
            let keyspace_udts_result = udts
                .entry(keyspace_name)
                .or_insert_with(|| Ok(HashMap::new()));

            // If there was previously an error in this keyspace then it makes no sense to process this UDT.
            let keyspace_udts = match keyspace_udts_result {
                Ok(udts) => udts,
                Err(_) => continue,
            };

            let mut fields = Vec::with_capacity(field_names.len());

            for (field_name, field_type) in field_names.into_iter().zip(field_types) {
                match field_type.into_cql_type(&keyspace_name_clone, keyspace_udts) {
                    Ok(cql_type) => fields.push((field_name.into(), cql_type)),
                    Err(e) => {
                        *keyspace_udts_result = Err(e);
                        continue 'udts_loop;
                    }
                }
            }

            let udt = Arc::new(UserDefinedType {
                name: type_name.clone().into(),
                keyspace: keyspace_name_clone.into(),
                field_types: fields,
            });

            keyspace_udts.insert(type_name, udt);
        }

        Ok(udts)
    }
}

fn topo_sort_udts(udts: &mut Vec<UdtRowWithParsedFieldTypes>) -> Result<(), UdtMetadataError> {
    fn do_with_referenced_udts(what: &mut impl FnMut(&str), pre_cql_type: &PreColumnType) {
        match pre_cql_type {
            PreColumnType::Native(_) => (),
            PreColumnType::Collection { typ: type_, .. } => match type_ {
                PreCollectionType::List(t) | PreCollectionType::Set(t) => {
                    do_with_referenced_udts(what, t)
                }
                PreCollectionType::Map(t1, t2) => {
                    do_with_referenced_udts(what, t1);
                    do_with_referenced_udts(what, t2);
                }
            },
            PreColumnType::Tuple(types) => types
                .iter()
                .for_each(|type_| do_with_referenced_udts(what, type_)),
            PreColumnType::Vector { typ: type_, .. } => do_with_referenced_udts(what, type_),
            PreColumnType::UserDefinedType { name, .. } => what(name),
        }
    }

    // Build an indegree map: for each node in the graph, how many directly depending types it has.
    let mut indegs = udts
        .drain(..)
        .map(|def| {
            (
                (def.keyspace_name.clone(), def.type_name.clone()),
                (def, Cell::new(0u32)),
            )
        })
        .collect::<HashMap<_, _>>();

    // For each node in the graph...
    for (def, _) in indegs.values() {
        let mut increment_referred_udts = |type_name: &str| {
            let deg = indegs
                .get(&(def.keyspace_name.clone(), type_name.to_string()))
                .map(|(_, count)| count);

            if let Some(deg_cell) = deg {
                deg_cell.set(deg_cell.get() + 1);
            }
        };

        // For each type referred by the node...
        for field_type in def.field_types.iter() {
            do_with_referenced_udts(&mut increment_referred_udts, field_type);
        }
    }

    let mut sorted = Vec::with_capacity(indegs.len());
    let mut next_idx = 0;

    // Schedule keys that had an initial indeg of 0
    for (key, _) in indegs.iter().filter(|(_, (_, deg))| deg.get() == 0) {
        sorted.push(key);
    }

    while let Some(key @ (keyspace, _type_name)) = sorted.get(next_idx).copied() {
        next_idx += 1;
        // Decrement the counters of all UDTs that this UDT depends upon
        // and then schedule them if their counter drops to 0
        let mut decrement_referred_udts = |type_name: &str| {
            let key_value = indegs.get_key_value(&(keyspace.clone(), type_name.to_string()));

            if let Some((ref_key, (_, cnt))) = key_value {
                let new_cnt = cnt.get() - 1;
                cnt.set(new_cnt);
                if new_cnt == 0 {
                    sorted.push(ref_key);
                }
            }
        };

        let def = &indegs.get(key).unwrap().0;
        // For each type referred by the node...
        for field_type in def.field_types.iter() {
            do_with_referenced_udts(&mut decrement_referred_udts, field_type);
        }
    }

    if sorted.len() < indegs.len() {
        // Some UDTs could not become leaves in the graph, which implies cycles.
        return Err(UdtMetadataError::CircularTypeDependency);
    }

    let owned_sorted = sorted.into_iter().cloned().collect::<Vec<_>>();
    assert!(udts.is_empty());
    for key in owned_sorted.into_iter().rev() {
        udts.push(indegs.remove(&key).unwrap().0);
    }

    Ok(())
}

#[cfg(test)]
mod toposort_tests {
    use crate::test_utils::setup_tracing;

    use super::{UdtRow, UdtRowWithParsedFieldTypes, topo_sort_udts};

    const KEYSPACE1: &str = "KEYSPACE1";
    const KEYSPACE2: &str = "KEYSPACE2";

    fn make_udt_row(
        keyspace_name: String,
        type_name: String,
        field_types: Vec<String>,
    ) -> UdtRowWithParsedFieldTypes {
        UdtRow {
            keyspace_name,
            type_name,
            field_names: vec!["udt_field".into(); field_types.len()],
            field_types,
        }
        .try_into()
        .unwrap()
    }

    fn get_udt_idx(
        toposorted: &[UdtRowWithParsedFieldTypes],
        keyspace_name: &str,
        type_name: &str,
    ) -> usize {
        toposorted
            .iter()
            .enumerate()
            .find_map(|(idx, def)| {
                (def.type_name == type_name && def.keyspace_name == keyspace_name).then_some(idx)
            })
            .unwrap()
    }

    #[test]
    fn test_udt_topo_sort_valid_case() {
        setup_tracing();
        // UDTs dependencies on each other (arrow A -> B signifies that type B is composed of type A):
        //
        // KEYSPACE1
        //      F -->+
        //      ^    |
        //      |    |
        // A -> B -> C
        // |    ^
        // + -> D
        //
        // E   (E is an independent UDT)
        //
        // KEYSPACE2
        // B -> A -> C
        // ^    ^
        // D -> E

        let mut udts = vec![
            make_udt_row(KEYSPACE1.into(), "A".into(), vec!["blob".into()]),
            make_udt_row(KEYSPACE1.into(), "B".into(), vec!["A".into(), "D".into()]),
            make_udt_row(
                KEYSPACE1.into(),
                "C".into(),
                vec!["blob".into(), "B".into(), "list<map<F, text>>".into()],
            ),
            make_udt_row(
                KEYSPACE1.into(),
                "D".into(),
                vec!["A".into(), "blob".into()],
            ),
            make_udt_row(KEYSPACE1.into(), "E".into(), vec!["blob".into()]),
            make_udt_row(
                KEYSPACE1.into(),
                "F".into(),
                vec!["B".into(), "blob".into()],
            ),
            make_udt_row(
                KEYSPACE2.into(),
                "A".into(),
                vec!["B".into(), "tuple<E, E>".into()],
            ),
            make_udt_row(KEYSPACE2.into(), "B".into(), vec!["map<text, D>".into()]),
            make_udt_row(KEYSPACE2.into(), "C".into(), vec!["frozen<A>".into()]),
            make_udt_row(KEYSPACE2.into(), "D".into(), vec!["blob".into()]),
            make_udt_row(KEYSPACE2.into(), "E".into(), vec!["D".into()]),
        ];

        topo_sort_udts(&mut udts).unwrap();

        assert!(get_udt_idx(&udts, KEYSPACE1, "A") < get_udt_idx(&udts, KEYSPACE1, "B"));
        assert!(get_udt_idx(&udts, KEYSPACE1, "A") < get_udt_idx(&udts, KEYSPACE1, "D"));
        assert!(get_udt_idx(&udts, KEYSPACE1, "B") < get_udt_idx(&udts, KEYSPACE1, "C"));
        assert!(get_udt_idx(&udts, KEYSPACE1, "B") < get_udt_idx(&udts, KEYSPACE1, "F"));
        assert!(get_udt_idx(&udts, KEYSPACE1, "F") < get_udt_idx(&udts, KEYSPACE1, "C"));
        assert!(get_udt_idx(&udts, KEYSPACE1, "D") < get_udt_idx(&udts, KEYSPACE1, "B"));

        assert!(get_udt_idx(&udts, KEYSPACE2, "B") < get_udt_idx(&udts, KEYSPACE2, "A"));
        assert!(get_udt_idx(&udts, KEYSPACE2, "D") < get_udt_idx(&udts, KEYSPACE2, "B"));
        assert!(get_udt_idx(&udts, KEYSPACE2, "D") < get_udt_idx(&udts, KEYSPACE2, "E"));
        assert!(get_udt_idx(&udts, KEYSPACE2, "E") < get_udt_idx(&udts, KEYSPACE2, "A"));
        assert!(get_udt_idx(&udts, KEYSPACE2, "A") < get_udt_idx(&udts, KEYSPACE2, "C"));
    }

    #[test]
    fn test_udt_topo_sort_detects_cycles() {
        setup_tracing();
        const KEYSPACE1: &str = "KEYSPACE1";
        let tests = [
            // test 1
            // A depends on itself.
            vec![make_udt_row(
                KEYSPACE1.into(),
                "A".into(),
                vec!["blob".into(), "A".into()],
            )],
            // test 2
            // A depends on B, which depends on A; also, there is an independent E.
            vec![
                make_udt_row(
                    KEYSPACE1.into(),
                    "A".into(),
                    vec!["blob".into(), "B".into()],
                ),
                make_udt_row(
                    KEYSPACE1.into(),
                    "B".into(),
                    vec!["int".into(), "map<text, A>".into()],
                ),
                make_udt_row(KEYSPACE1.into(), "E".into(), vec!["text".into()]),
            ],
        ];

        for mut udts in tests {
            topo_sort_udts(&mut udts).unwrap_err();
        }
    }

    #[test]
    fn test_udt_topo_sort_ignores_invalid_metadata() {
        setup_tracing();
        // A depends on B, which depends on unknown C; also, there is an independent E.
        let mut udts = vec![
            make_udt_row(
                KEYSPACE1.into(),
                "A".into(),
                vec!["blob".into(), "B".into()],
            ),
            make_udt_row(
                KEYSPACE1.into(),
                "B".into(),
                vec!["int".into(), "map<text, C>".into()],
            ),
            make_udt_row(KEYSPACE1.into(), "E".into(), vec!["text".into()]),
        ];

        topo_sort_udts(&mut udts).unwrap();

        assert!(get_udt_idx(&udts, KEYSPACE1, "B") < get_udt_idx(&udts, KEYSPACE1, "A"));
    }
}

impl ControlConnection {
    async fn query_tables(
        &self,
        keyspaces_to_fetch: &[String],
        tables: &mut PerKsTableResult<Table, SingleKeyspaceMetadataError>,
    ) -> Result<PerKeyspaceResult<PerTable<Table>, SingleKeyspaceMetadataError>, MetadataError>
    {
        let rows = self
            .query_filter_keyspace_name::<(String, String)>(
                "SELECT keyspace_name, table_name FROM system_schema.tables",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.tables",
            });
        let mut result = HashMap::new();

        rows.map(|row_result| {
            let keyspace_and_table_name = row_result?;

            let table = tables.remove(&keyspace_and_table_name).unwrap_or(Ok(Table {
                columns: HashMap::new(),
                partition_key: vec![],
                clustering_key: vec![],
                partitioner: None,
                pk_column_specs: vec![],
            }));

            let mut entry = result
                .entry(keyspace_and_table_name.0)
                .or_insert_with(|| Ok(HashMap::new()));
            match (&mut entry, table) {
                (Ok(tables), Ok(table)) => {
                    let _ = tables.insert(keyspace_and_table_name.1, table);
                }
                (Err(_), _) => (),
                (Ok(_), Err(e)) => *entry = Err(e),
            };

            Ok::<_, MetadataError>(())
        })
        .try_for_each(|_| future::ok(()))
        .await?;

        Ok(result)
    }

    async fn query_views(
        &self,
        keyspaces_to_fetch: &[String],
        tables: &mut PerKsTableResult<Table, SingleKeyspaceMetadataError>,
    ) -> Result<
        PerKeyspaceResult<PerTable<MaterializedView>, SingleKeyspaceMetadataError>,
        MetadataError,
    > {
        let rows = self
            .query_filter_keyspace_name::<(String, String, String)>(
                "SELECT keyspace_name, view_name, base_table_name FROM system_schema.views",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.views",
            });

        let mut result = HashMap::new();

        rows.map(|row_result| {
            let (keyspace_name, view_name, base_table_name) = row_result?;

            let keyspace_and_view_name = (keyspace_name, view_name);

            let materialized_view = tables
                .remove(&keyspace_and_view_name)
                .unwrap_or(Ok(Table {
                    columns: HashMap::new(),
                    partition_key: vec![],
                    clustering_key: vec![],
                    partitioner: None,
                    pk_column_specs: vec![],
                }))
                .map(|table| MaterializedView {
                    view_metadata: table,
                    base_table_name,
                });

            let mut entry = result
                .entry(keyspace_and_view_name.0)
                .or_insert_with(|| Ok(HashMap::new()));

            match (&mut entry, materialized_view) {
                (Ok(views), Ok(view)) => {
                    let _ = views.insert(keyspace_and_view_name.1, view);
                }
                (Err(_), _) => (),
                (Ok(_), Err(e)) => *entry = Err(e),
            };

            Ok::<_, MetadataError>(())
        })
        .try_for_each(|_| future::ok(()))
        .await?;

        Ok(result)
    }

    async fn query_tables_schema(
        &self,
        keyspaces_to_fetch: &[String],
        udts: &PerKeyspaceResult<PerTable<Arc<UserDefinedType<'static>>>, MissingUserDefinedType>,
    ) -> Result<PerKsTableResult<Table, SingleKeyspaceMetadataError>, MetadataError> {
        // Upon migration from thrift to CQL, Cassandra internally creates a surrogate column "value" of
        // type EmptyType for dense tables. This resolves into this CQL type name.
        // This column shouldn't be exposed to the user but is currently exposed in system tables.
        const THRIFT_EMPTY_TYPE: &str = "empty";

        type RowType = (String, String, String, String, i32, String);

        let rows = self.query_filter_keyspace_name::<RowType>(
        "SELECT keyspace_name, table_name, column_name, kind, position, type FROM system_schema.columns",
        keyspaces_to_fetch
    ).map_err(|error| MetadataFetchError {
        error,
        table: "system_schema.columns",
    });

        let empty_ok_map = Ok(HashMap::new());

        let mut tables_schema: HashMap<_, Result<_, SingleKeyspaceMetadataError>> = HashMap::new();

        rows.map(|row_result| {
            let (keyspace_name, table_name, column_name, kind, position, type_) = row_result?;

            if type_ == THRIFT_EMPTY_TYPE {
                return Ok::<_, MetadataError>(());
            }

            let keyspace_udts: &PerTable<Arc<UserDefinedType<'static>>> =
                match udts.get(&keyspace_name).unwrap_or(&empty_ok_map) {
                    Ok(udts) => udts,
                    Err(e) => {
                        // There are two things we could do here
                        // 1. Not inserting, just returning. In that case the keyspaces containing
                        //    tables that have a column with a broken UDT will not be present in
                        //    the output of this function at all.
                        // 2. Inserting an error (which requires cloning it). In that case,
                        //    keyspace containing a table with broken UDT will have the error
                        //    cloned from this UDT.
                        //
                        // Solution number 1 seems weird because it can be seen as silencing
                        // the error: we have data for a keyspace, but we just don't put
                        // it in the result at all.
                        // Solution 2 is also not perfect because it:
                        // - Returns error for the keyspace even if the broken UDT is not used in any table.
                        // - Doesn't really distinguish between a table using a broken UDT and
                        //   a keyspace just containing some broken UDTs.
                        //
                        // I chose solution 2. Its first problem is not really important because
                        // the caller will error out the entire keyspace anyway. The second problem
                        // is minor enough to ignore. Note that the first issue also applies to
                        // solution 1: but the keyspace won't be present in the result at all,
                        // which is arguably worse.
                        tables_schema.insert(
                            (keyspace_name, table_name),
                            Err(SingleKeyspaceMetadataError::MissingUDT(e.clone())),
                        );
                        return Ok::<_, MetadataError>(());
                    }
                };
            let pre_cql_type = map_string_to_cql_type(&type_).map_err(|err: InvalidCqlType| {
                TablesMetadataError::InvalidCqlType {
                    typ: err.typ,
                    position: err.position,
                    reason: err.reason,
                }
            })?;
            let cql_type = match pre_cql_type.into_cql_type(&keyspace_name, keyspace_udts) {
                Ok(t) => t,
                Err(e) => {
                    tables_schema.insert(
                        (keyspace_name, table_name),
                        Err(SingleKeyspaceMetadataError::MissingUDT(e)),
                    );
                    return Ok::<_, MetadataError>(());
                }
            };

            let kind = ColumnKind::from_str(&kind).map_err(|_| {
                TablesMetadataError::UnknownColumnKind {
                    keyspace_name: keyspace_name.clone(),
                    table_name: table_name.clone(),
                    column_name: column_name.clone(),
                    column_kind: kind,
                }
            })?;

            let Ok(entry) = tables_schema
                .entry((keyspace_name, table_name))
                .or_insert(Ok((
                    HashMap::new(), // columns
                    Vec::new(),     // partition key
                    Vec::new(),     // clustering key
                )))
            else {
                // This table was previously marked as broken, no way to insert anything.
                return Ok::<_, MetadataError>(());
            };

            if kind == ColumnKind::PartitionKey || kind == ColumnKind::Clustering {
                let key_list: &mut Vec<(i32, String)> = if kind == ColumnKind::PartitionKey {
                    entry.1.borrow_mut()
                } else {
                    entry.2.borrow_mut()
                };
                key_list.push((position, column_name.clone()));
            }

            entry.0.insert(
                column_name,
                Column {
                    typ: cql_type,
                    kind,
                },
            );

            Ok::<_, MetadataError>(())
        })
        .try_for_each(|_| future::ok(()))
        .await?;

        let mut all_partitioners = self.query_table_partitioners(keyspaces_to_fetch).await?;
        let mut result = HashMap::new();

        'tables_loop: for ((keyspace_name, table_name), table_result) in tables_schema {
            let keyspace_and_table_name = (keyspace_name, table_name);

            #[expect(clippy::type_complexity)]
            let (columns, partition_key_columns, clustering_key_columns): (
                HashMap<String, Column>,
                Vec<(i32, String)>,
                Vec<(i32, String)>,
            ) = match table_result {
                Ok(table) => table,
                Err(e) => {
                    let _ = result.insert(keyspace_and_table_name, Err(e));
                    continue;
                }
            };

            fn validate_key_columns(
                mut key_columns: Vec<(i32, String)>,
            ) -> Result<Vec<String>, i32> {
                key_columns.sort_unstable_by_key(|(position, _)| *position);

                key_columns
                    .into_iter()
                    .enumerate()
                    .map(|(idx, (position, column_name))| {
                        // unwrap: I don't see the point of handling the scenario of fetching over
                        // 2 * 10^9 columns.
                        let idx: i32 = idx.try_into().unwrap();
                        if idx == position {
                            Ok(column_name)
                        } else {
                            Err(idx)
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
            }

            let partition_key = match validate_key_columns(partition_key_columns) {
                Ok(partition_key_columns) => partition_key_columns,
                Err(position) => {
                    result.insert(
                        keyspace_and_table_name,
                        Err(SingleKeyspaceMetadataError::IncompletePartitionKey(
                            position,
                        )),
                    );
                    continue 'tables_loop;
                }
            };

            let clustering_key = match validate_key_columns(clustering_key_columns) {
                Ok(clustering_key_columns) => clustering_key_columns,
                Err(position) => {
                    result.insert(
                        keyspace_and_table_name,
                        Err(SingleKeyspaceMetadataError::IncompleteClusteringKey(
                            position,
                        )),
                    );
                    continue 'tables_loop;
                }
            };

            let partitioner = all_partitioners
                .remove(&keyspace_and_table_name)
                .unwrap_or_default();

            // unwrap of get() result: all column names in `partition_key` are at this
            // point guaranteed to be present in `columns`. See the construction of `partition_key`
            let pk_column_specs = partition_key
                .iter()
                .map(|column_name| (column_name, columns.get(column_name).unwrap().clone().typ))
                .map(|(name, typ)| {
                    let table_spec = TableSpec::owned(
                        keyspace_and_table_name.0.clone(),
                        keyspace_and_table_name.1.clone(),
                    );
                    ColumnSpec::owned(name.to_owned(), typ, table_spec)
                })
                .collect();

            result.insert(
                keyspace_and_table_name,
                Ok(Table {
                    columns,
                    partition_key,
                    clustering_key,
                    partitioner,
                    pk_column_specs,
                }),
            );
        }

        Ok(result)
    }
}

fn map_string_to_cql_type(typ: &str) -> Result<PreColumnType, InvalidCqlType> {
    match parse_cql_type(ParserState::new(typ)) {
        Err(err) => Err(InvalidCqlType {
            typ: typ.to_string(),
            position: err.calculate_position(typ).unwrap_or(0),
            reason: err.get_cause().to_string(),
        }),
        Ok((_, p)) if !p.is_at_eof() => Err(InvalidCqlType {
            typ: typ.to_string(),
            position: p.calculate_position(typ).unwrap_or(0),
            reason: "leftover characters".to_string(),
        }),
        Ok((typ, _)) => Ok(typ),
    }
}

fn parse_cql_type(p: ParserState<'_>) -> ParseResult<(PreColumnType, ParserState<'_>)> {
    if let Ok(p) = p.accept("frozen<") {
        let (inner_type, p) = parse_cql_type(p)?;
        let p = p.accept(">")?;

        let frozen_type = freeze_type(inner_type);

        Ok((frozen_type, p))
    } else if let Ok(p) = p.accept("map<") {
        let (key, p) = parse_cql_type(p)?;
        let p = p.accept(",")?.skip_white();
        let (value, p) = parse_cql_type(p)?;
        let p = p.accept(">")?;

        let typ = PreColumnType::Collection {
            frozen: false,
            typ: PreCollectionType::Map(Box::new(key), Box::new(value)),
        };

        Ok((typ, p))
    } else if let Ok(p) = p.accept("list<") {
        let (inner_type, p) = parse_cql_type(p)?;
        let p = p.accept(">")?;

        let typ = PreColumnType::Collection {
            frozen: false,
            typ: PreCollectionType::List(Box::new(inner_type)),
        };

        Ok((typ, p))
    } else if let Ok(p) = p.accept("set<") {
        let (inner_type, p) = parse_cql_type(p)?;
        let p = p.accept(">")?;

        let typ = PreColumnType::Collection {
            frozen: false,
            typ: PreCollectionType::Set(Box::new(inner_type)),
        };

        Ok((typ, p))
    } else if let Ok(p) = p.accept("tuple<") {
        let mut types = Vec::new();
        let p = p.parse_while(|p| {
            let (inner_type, p) = parse_cql_type(p)?;
            types.push(inner_type);

            if let Ok(p) = p.accept(",") {
                let p = p.skip_white();
                Ok((true, p))
            } else if let Ok(p) = p.accept(">") {
                Ok((false, p))
            } else {
                Err(p.error(ParseErrorCause::Other("expected \",\" or \">\"")))
            }
        })?;

        Ok((PreColumnType::Tuple(types), p))
    } else if let Ok(p) = p.accept("vector<") {
        let (inner_type, p) = parse_cql_type(p)?;

        let p = p.skip_white();
        let p = p.accept(",")?;
        let p = p.skip_white();
        let (size, p) = p.parse_u16()?;
        let p = p.skip_white();
        let p = p.accept(">")?;

        let typ = PreColumnType::Vector {
            typ: Box::new(inner_type),
            dimensions: size,
        };

        Ok((typ, p))
    } else if let Ok((typ, p)) = parse_native_type(p) {
        Ok((PreColumnType::Native(typ), p))
    } else if let Ok((name, p)) = parse_user_defined_type(p) {
        let typ = PreColumnType::UserDefinedType {
            frozen: false,
            name: name.to_string(),
        };
        Ok((typ, p))
    } else {
        Err(p.error(ParseErrorCause::Other("invalid cql type")))
    }
}

fn parse_native_type(p: ParserState) -> ParseResult<(NativeType, ParserState)> {
    let (tok, p) = p.take_while(|c| c.is_alphanumeric() || c == '_');
    let typ = match tok {
        "ascii" => NativeType::Ascii,
        "boolean" => NativeType::Boolean,
        "blob" => NativeType::Blob,
        "counter" => NativeType::Counter,
        "date" => NativeType::Date,
        "decimal" => NativeType::Decimal,
        "double" => NativeType::Double,
        "duration" => NativeType::Duration,
        "float" => NativeType::Float,
        "int" => NativeType::Int,
        "bigint" => NativeType::BigInt,
        "text" => NativeType::Text,
        "timestamp" => NativeType::Timestamp,
        "inet" => NativeType::Inet,
        "smallint" => NativeType::SmallInt,
        "tinyint" => NativeType::TinyInt,
        "time" => NativeType::Time,
        "timeuuid" => NativeType::Timeuuid,
        "uuid" => NativeType::Uuid,
        "varint" => NativeType::Varint,
        _ => return Err(p.error(ParseErrorCause::Other("invalid native type"))),
    };
    Ok((typ, p))
}

fn parse_user_defined_type(p: ParserState<'_>) -> ParseResult<(&str, ParserState<'_>)> {
    // Java identifiers allow letters, underscores and dollar signs at any position
    // and digits in non-first position. Dots are accepted here because the names
    // are usually fully qualified.
    let (tok, p) = p.take_while(|c| c.is_alphanumeric() || c == '.' || c == '_' || c == '$');
    if tok.is_empty() {
        return Err(p.error(ParseErrorCause::Other("invalid user defined type")));
    }
    Ok((tok, p))
}

fn freeze_type(typ: PreColumnType) -> PreColumnType {
    match typ {
        PreColumnType::Collection { typ: type_, .. } => PreColumnType::Collection {
            frozen: true,
            typ: type_,
        },
        PreColumnType::UserDefinedType { name, .. } => {
            PreColumnType::UserDefinedType { frozen: true, name }
        }
        other => other,
    }
}

impl ControlConnection {
    async fn query_table_partitioners(
        &self,
        keyspaces_to_fetch: &[String],
    ) -> Result<PerKsTable<Option<String>>, MetadataFetchError> {
        let rows = self
            .query_filter_keyspace_name::<(String, String, Option<String>)>(
                "SELECT keyspace_name, table_name, partitioner FROM system_schema.scylla_tables",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.scylla_tables",
            });

        let result = rows
            .map(|row_result| {
                let (keyspace_name, table_name, partitioner) = row_result?;
                Ok::<_, MetadataFetchError>(((keyspace_name, table_name), partitioner))
            })
            .try_collect::<HashMap<_, _>>()
            .await;

        match result {
            // `system_schema.scylla_tables` does not exist on Cassandra.
            Err(error) if is_missing_table_or_column(&error) => Ok(HashMap::new()),
            result => result,
        }
    }

    /// Fetches the (possibly filtered) per-keyspace ScyllaDB-specific metadata held in
    /// `system_schema.scylla_keyspaces`: which keyspaces are tablet-based, and which use a
    /// strong-consistency mode.
    ///
    /// Both live in the same table, so a single query reads them together - there is no reason
    /// to spend a second round trip on the second column.
    ///
    /// The `consistency` column was introduced much later than `initial_tablets`, though, so it
    /// is only selected when this control connection negotiated `TABLETS_ROUTING_V2`. Even then
    /// a server could have the extension but not the column (strong consistency is a separate,
    /// experimental feature), so that case falls back to reading `initial_tablets` alone: tablet
    /// detection never depends on strong-consistency support being present.
    ///
    /// On Cassandra and old ScyllaDB versions the table does not exist at all. In that case,
    /// empty metadata is returned, so every keyspace defaults to non-tablet-based and eventually
    /// consistent.
    async fn query_keyspaces_scylladb_specific(
        &self,
        keyspaces_to_fetch: &[String],
    ) -> Result<ScyllaKeyspacesMetadata, MetadataFetchError> {
        if self.tablets_v2_supported() {
            match self
                .query_scylla_keyspaces_with_consistency(keyspaces_to_fetch)
                .await
            {
                // The `consistency` column (or the whole table) is not there - retry without it.
                // Note that a missing *table* cannot realistically reach this point, since
                // TABLETS_ROUTING_V2 is a ScyllaDB extension and every ScyllaDB version that
                // offers it has `system_schema.scylla_keyspaces`.
                Err(error) if is_missing_table_or_column(&error) => (),
                result => return result,
            }
        }

        match self
            .query_scylla_keyspaces_tablets_only(keyspaces_to_fetch)
            .await
        {
            Err(error) if is_missing_table_or_column(&error) => {
                Ok(ScyllaKeyspacesMetadata::default())
            }
            result => result,
        }
    }

    /// Reads `system_schema.scylla_keyspaces` including the `consistency` column. Fails with a
    /// [`DbError::Invalid`] if the server does not have that column.
    async fn query_scylla_keyspaces_with_consistency(
        &self,
        keyspaces_to_fetch: &[String],
    ) -> Result<ScyllaKeyspacesMetadata, MetadataFetchError> {
        let rows = self
            .query_filter_keyspace_name::<(String, Option<i32>, Option<String>)>(
                "SELECT keyspace_name, initial_tablets, consistency FROM system_schema.scylla_keyspaces",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.scylla_keyspaces",
            });

        rows.try_fold(
            ScyllaKeyspacesMetadata::default(),
            |mut acc, (keyspace_name, initial_tablets, consistency)| {
                let consistency_mode = consistency_mode_from_str(consistency.as_deref());
                // Only non-eventual modes are stored; keyspaces missing from the map are
                // eventually consistent.
                if consistency_mode != ConsistencyMode::Eventual {
                    acc.consistency_modes
                        .insert(keyspace_name.clone(), consistency_mode);
                }
                if initial_tablets.is_some() {
                    acc.tablet_based.insert(keyspace_name);
                }
                future::ready(Ok(acc))
            },
        )
        .await
    }

    /// Reads `system_schema.scylla_keyspaces` without the `consistency` column, for servers
    /// that have tablets but no strong consistency. Every keyspace is then reported as
    /// eventually consistent.
    async fn query_scylla_keyspaces_tablets_only(
        &self,
        keyspaces_to_fetch: &[String],
    ) -> Result<ScyllaKeyspacesMetadata, MetadataFetchError> {
        let rows = self
            .query_filter_keyspace_name::<(String, Option<i32>)>(
                "SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces",
                keyspaces_to_fetch,
            )
            .map_err(|error| MetadataFetchError {
                error,
                table: "system_schema.scylla_keyspaces",
            });

        rows.try_fold(
            ScyllaKeyspacesMetadata::default(),
            |mut acc, (keyspace_name, initial_tablets)| {
                if initial_tablets.is_some() {
                    acc.tablet_based.insert(keyspace_name);
                }
                future::ready(Ok(acc))
            },
        )
        .await
    }
}

/// The per-keyspace ScyllaDB-specific metadata read from `system_schema.scylla_keyspaces`.
#[derive(Default)]
struct ScyllaKeyspacesMetadata {
    /// Keyspaces that are tablet-based, i.e. whose `initial_tablets` column is not NULL.
    tablet_based: HashSet<String>,
    /// Strong-consistency modes, from the `consistency` column. Keyspaces missing from the map
    /// are eventually consistent - which includes every keyspace on a server that does not
    /// report the column at all.
    consistency_modes: HashMap<String, ConsistencyMode>,
}

/// Maps the raw `consistency` column value from `system_schema.scylla_keyspaces` to a
/// [`ConsistencyMode`]. A missing or unrecognized value means eventual consistency.
fn consistency_mode_from_str(consistency: Option<&str>) -> ConsistencyMode {
    // Note that local consistency isn't implemented yet, so we only
    // treat globally-consistent keyspaces as non-eventually-consistent.
    match consistency {
        Some("global") => ConsistencyMode::Global,
        _ => ConsistencyMode::Eventual,
    }
}

/// Returns `true` if the error is the `DbError::Invalid` that a server reports when a `SELECT`
/// names a table or a column it does not have.
///
/// This is how the driver detects that a ScyllaDB-specific system table or column is missing on
/// the node it is talking to, e.g. on Cassandra or on a ScyllaDB version predating the feature.
// FIXME: This catches every database error carrying this error code, not only the ones caused by
// a missing table or column.
// For more information please refer to https://github.com/scylladb/scylla-rust-driver/pull/349#discussion_r762050262
fn is_missing_table_or_column(error: &MetadataFetchError) -> bool {
    matches!(
        error,
        MetadataFetchError {
            error: MetadataFetchErrorKind::NextRowError(NextRowError::NextPageError(
                NextPageError::RequestFailure(RequestError::LastAttemptError(
                    RequestAttemptError::DbError(DbError::Invalid, _),
                )),
            )),
            ..
        }
    )
}

fn strategy_from_string_map(
    mut strategy_map: HashMap<String, String>,
) -> Result<Strategy, KeyspaceStrategyError> {
    let strategy_name: String = strategy_map
        .remove("class")
        .ok_or(KeyspaceStrategyError::MissingClassForStrategyDefinition)?;

    let strategy: Strategy = match strategy_name.as_str() {
        "org.apache.cassandra.locator.SimpleStrategy" | "SimpleStrategy" => {
            let rep_factor_str: String = strategy_map
                .remove("replication_factor")
                .ok_or(KeyspaceStrategyError::MissingReplicationFactorForSimpleStrategy)?;

            let replication_factor: usize = usize::from_str(&rep_factor_str)
                .map_err(KeyspaceStrategyError::ReplicationFactorParseError)?;

            Strategy::SimpleStrategy { replication_factor }
        }
        "org.apache.cassandra.locator.NetworkTopologyStrategy" | "NetworkTopologyStrategy" => {
            let mut datacenter_repfactors: HashMap<String, usize> =
                HashMap::with_capacity(strategy_map.len());

            for (key, value) in strategy_map.drain() {
                let rep_factor: usize = usize::from_str(&value).map_err(|_| {
                    // Unexpected NTS option.
                    // We only expect 'class' (which is resolved above)
                    // and replication factors per dc.
                    KeyspaceStrategyError::UnexpectedNetworkTopologyStrategyOption {
                        key: key.clone(),
                        value,
                    }
                })?;

                datacenter_repfactors.insert(key, rep_factor);
            }

            Strategy::NetworkTopologyStrategy {
                datacenter_repfactors,
            }
        }
        "org.apache.cassandra.locator.LocalStrategy" | "LocalStrategy" => Strategy::LocalStrategy,
        _ => Strategy::Other {
            name: strategy_name,
            data: strategy_map,
        },
    };

    Ok(strategy)
}

#[cfg(test)]
mod tests {
    use crate::test_utils::setup_tracing;

    use super::*;

    #[test]
    fn test_consistency_mode_parsing() {
        setup_tracing();
        assert_eq!(
            consistency_mode_from_str(Some("global")),
            ConsistencyMode::Global
        );
        for unrecognised in [
            None,
            Some(""),
            // Note: Local strong consistency hasn't been implemented yet.
            Some("local"),
            Some("GLOBAL"),
            Some("none"),
            Some("whatever"),
        ] {
            assert_eq!(
                consistency_mode_from_str(unrecognised),
                ConsistencyMode::Eventual,
                "unrecognised consistency {unrecognised:?} must mean eventual consistency"
            );
        }
    }

    #[test]
    fn test_cql_type_parsing() {
        setup_tracing();
        let test_cases = [
            ("bigint", PreColumnType::Native(NativeType::BigInt)),
            (
                "list<int>",
                PreColumnType::Collection {
                    frozen: false,
                    typ: PreCollectionType::List(Box::new(PreColumnType::Native(NativeType::Int))),
                },
            ),
            (
                "set<ascii>",
                PreColumnType::Collection {
                    frozen: false,
                    typ: PreCollectionType::Set(Box::new(PreColumnType::Native(NativeType::Ascii))),
                },
            ),
            (
                "map<blob, boolean>",
                PreColumnType::Collection {
                    frozen: false,
                    typ: PreCollectionType::Map(
                        Box::new(PreColumnType::Native(NativeType::Blob)),
                        Box::new(PreColumnType::Native(NativeType::Boolean)),
                    ),
                },
            ),
            (
                "frozen<map<text, text>>",
                PreColumnType::Collection {
                    frozen: true,
                    typ: PreCollectionType::Map(
                        Box::new(PreColumnType::Native(NativeType::Text)),
                        Box::new(PreColumnType::Native(NativeType::Text)),
                    ),
                },
            ),
            (
                "tuple<tinyint, smallint, int, bigint, varint>",
                PreColumnType::Tuple(vec![
                    PreColumnType::Native(NativeType::TinyInt),
                    PreColumnType::Native(NativeType::SmallInt),
                    PreColumnType::Native(NativeType::Int),
                    PreColumnType::Native(NativeType::BigInt),
                    PreColumnType::Native(NativeType::Varint),
                ]),
            ),
            (
                "vector<int, 5>",
                PreColumnType::Vector {
                    typ: Box::new(PreColumnType::Native(NativeType::Int)),
                    dimensions: 5,
                },
            ),
            (
                "vector<text, 1234>",
                PreColumnType::Vector {
                    typ: Box::new(PreColumnType::Native(NativeType::Text)),
                    dimensions: 1234,
                },
            ),
            (
                "com.scylladb.types.AwesomeType",
                PreColumnType::UserDefinedType {
                    frozen: false,
                    name: "com.scylladb.types.AwesomeType".to_string(),
                },
            ),
            (
                "frozen<ks.my_udt>",
                PreColumnType::UserDefinedType {
                    frozen: true,
                    name: "ks.my_udt".to_string(),
                },
            ),
            (
                "map<text, frozen<map<text, text>>>",
                PreColumnType::Collection {
                    frozen: false,
                    typ: PreCollectionType::Map(
                        Box::new(PreColumnType::Native(NativeType::Text)),
                        Box::new(PreColumnType::Collection {
                            frozen: true,
                            typ: PreCollectionType::Map(
                                Box::new(PreColumnType::Native(NativeType::Text)),
                                Box::new(PreColumnType::Native(NativeType::Text)),
                            ),
                        }),
                    ),
                },
            ),
            (
                "map<\
                    frozen<list<int>>, \
                    set<\
                        list<\
                            tuple<\
                                list<list<text>>, \
                                map<text, map<ks.my_type, blob>>, \
                                frozen<set<set<int>>>\
                            >\
                        >\
                    >\
                >",
                // map<...>
                PreColumnType::Collection {
                    frozen: false,
                    typ: PreCollectionType::Map(
                        Box::new(PreColumnType::Collection {
                            // frozen<list<int>>
                            frozen: true,
                            typ: PreCollectionType::List(Box::new(PreColumnType::Native(
                                NativeType::Int,
                            ))),
                        }),
                        Box::new(PreColumnType::Collection {
                            // set<...>
                            frozen: false,
                            typ: PreCollectionType::Set(Box::new(PreColumnType::Collection {
                                // list<tuple<...>>
                                frozen: false,
                                typ: PreCollectionType::List(Box::new(PreColumnType::Tuple(vec![
                                    PreColumnType::Collection {
                                        // list<list<text>>
                                        frozen: false,
                                        typ: PreCollectionType::List(Box::new(
                                            PreColumnType::Collection {
                                                frozen: false,
                                                typ: PreCollectionType::List(Box::new(
                                                    PreColumnType::Native(NativeType::Text),
                                                )),
                                            },
                                        )),
                                    },
                                    PreColumnType::Collection {
                                        // map<text, map<ks.my_type, blob>>
                                        frozen: false,
                                        typ: PreCollectionType::Map(
                                            Box::new(PreColumnType::Native(NativeType::Text)),
                                            Box::new(PreColumnType::Collection {
                                                frozen: false,
                                                typ: PreCollectionType::Map(
                                                    Box::new(PreColumnType::UserDefinedType {
                                                        frozen: false,
                                                        name: "ks.my_type".to_string(),
                                                    }),
                                                    Box::new(PreColumnType::Native(
                                                        NativeType::Blob,
                                                    )),
                                                ),
                                            }),
                                        ),
                                    },
                                    PreColumnType::Collection {
                                        // frozen<set<set<int>>>
                                        frozen: true,
                                        typ: PreCollectionType::Set(Box::new(
                                            PreColumnType::Collection {
                                                frozen: false,
                                                typ: PreCollectionType::Set(Box::new(
                                                    PreColumnType::Native(NativeType::Int),
                                                )),
                                            },
                                        )),
                                    },
                                ]))),
                            })),
                        }),
                    ),
                },
            ),
        ];

        for (s, expected) in test_cases {
            let parsed = map_string_to_cql_type(s).unwrap();
            assert_eq!(parsed, expected);
        }
    }
}
