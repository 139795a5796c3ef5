//! Reporting of the driver's effective configuration to the cluster.
//!
//! The driver sends its configuration as a JSON document under the
//! `DRIVER_CONFIG` `STARTUP` option, where ScyllaDB exposes it in
//! `system.clients.client_options`. That makes the configuration a session
//! actually runs with inspectable from the server side, without having to
//! correlate it with client-side logs. The document follows an external schema
//! shared by all ScyllaDB drivers, so that one
//! query answers the same question regardless of which driver a client uses.
//! Only the control connection sends it: the value is identical for every
//! connection of a session, so sending it on all of them would only bloat their
//! `STARTUP` frames.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::client::execution_profile::ExecutionProfileHandle;
use crate::client::session::SessionConfig;
use crate::cluster::control_connection::MetadataRequestTimeouts;
use crate::frame::types::{Consistency, SerialConsistency};
use crate::network::{
    MAX_IN_FLIGHT_REQUESTS, OLD_ORPHAN_COUNT_THRESHOLD, PoolSize, TcpSocketOptions,
};
use crate::policies::host_filter::{DcHostFilter, HostFilter};
use crate::policies::load_balancing::{DefaultPolicy, LoadBalancingPolicy};
use crate::policies::reconnect::{
    ConstantReconnectPolicy, ExponentialReconnectPolicy, ReconnectPolicy,
};
use crate::policies::retry::{
    DefaultRetryPolicy, DowngradingConsistencyRetryPolicy, FallthroughRetryPolicy, RetryPolicy,
};
#[cfg(feature = "metrics")]
use crate::policies::speculative_execution::PercentileSpeculativeExecutionPolicy;
use crate::policies::speculative_execution::{
    SimpleSpeculativeExecutionPolicy, SpeculativeExecutionPolicy,
};
use crate::routing::NodeLocationPreference;
use crate::statement::PageSize;

/// The major version of the reported configuration schema.
///
/// Adding keys is backwards compatible and does not bump this; only changing or
/// removing the meaning of an existing key does.
const REPORT_VERSION: u32 = 1;

/// Reports larger than this are omitted instead of being sent.
///
/// ScyllaDB's protocol-extensions spec requires drivers to validate the size
/// client side and omit the option above this limit, so that reporting the
/// configuration never prevents a connection from being established. 32 KiB is
/// the limit gocql and csharp-driver use, keeping it consistent across drivers.
///
/// It also leaves a 2x margin to the driver's own hard limit: `write_string`
/// prefixes every `STARTUP` value with a 16-bit length via `write_short_length`,
/// so a value above 64 KiB would fail `STARTUP` serialization and take down the
/// control-connection handshake, and with it session creation.
const MAX_REPORT_SIZE: usize = 32 * 1024;

/// The reported configuration document.
///
/// Carries every group the schema requires, so the produced document validates
/// against it. The schema's optional keys are populated where this driver has
/// something to report; each type below states why it does not where it does
/// not.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Report {
    version: u32,
    connection: ConnectionReport,
    control_plane: ControlPlaneReport,
    query: QueryReport,
}

/// The schema's `control-plane` group: the timeouts of the metadata statements
/// the control connection runs, and of schema agreement.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ControlPlaneReport {
    queries: ControlPlaneQueriesReport,
    schema: ControlPlaneSchemaReport,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ControlPlaneQueriesReport {
    system: SystemQueriesReport,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SystemQueriesReport {
    timeout: SystemQueriesTimeoutReport,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SystemQueriesTimeoutReport {
    /// Always present: the control connection always has a client-side timeout,
    /// explicit or derived.
    client_side_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_side_ms: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ControlPlaneSchemaReport {
    agreement: SchemaAgreementReport,
}

/// `timeout-ms` is always reported, including 0: the schema documents 0 as
/// meaningful ("do not wait for agreement"), not as unset.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SchemaAgreementReport {
    timeout_ms: u64,
}

/// The schema's `connection` group.
///
/// The schema's sibling `read`, `write` and `heartbeat` groups are never
/// populated. There is no socket read or write timeout to report at all. The
/// features that would belong under the other two - write coalescing
/// (`enable_write_coalescing`, `write_coalescing_delay`) and the CQL-level idle
/// heartbeat (`keepalive_interval`, `keepalive_timeout`) - do exist, but v1
/// declares `write.coalescing` and `heartbeat` as `additionalProperties: false`
/// with no properties: explicit placeholders for a future schema version, with
/// nowhere for those values to go.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ConnectionReport {
    connect: ConnectReport,
    requests: RequestsReport,
    pool: PoolReport,
    socket: SocketReport,
    reconnection: ReconnectionReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_preference: Option<NodePreferenceReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<TlsReport>,
}

/// `timeout-ms` is always reported: `connect_timeout` goes verbatim to
/// `tokio::time::timeout`, so it has no "unset" state that an absent key could
/// stand for.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ConnectReport {
    timeout_ms: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct RequestsReport {
    in_flight: MaxReport,
    /// The driver's bound on orphaned requests is not quite what the schema
    /// asks for: it counts only orphans older than `OLD_AGE_ORPHAN_THRESHOLD`,
    /// a qualifier the schema cannot express. Reporting the threshold is still
    /// much closer to the truth than omitting the group, which means "no bound
    /// at all".
    orphaned: MaxReport,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct MaxReport {
    max: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct PoolReport {
    shard_aware: ShardAwareReport,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ShardAwareReport {
    enabled: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SocketReport {
    tcp_no_delay: bool,
    keep_alive: bool,
    reuse_address: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    linger: Option<LingerReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receive_buffer: Option<BufferReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    send_buffer: Option<BufferReport>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct LingerReport {
    /// Whole seconds, the only granularity the schema offers - and the only one
    /// `SO_LINGER` offers either. A configured linger below one second reports
    /// 0, which reads as "reset the connection on close", and that is exact
    /// rather than approximate: `apply_socket_options` sets the option through
    /// `socket2`, whose `into_linger` truncates with the very same `as_secs`, so
    /// the kernel is given the 0 this reports. Do not "fix" this to floor at 1;
    /// it would describe a lingering close the socket does not perform.
    interval_s: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct BufferReport {
    size_bytes: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ReconnectionReport {
    /// The schema permits `null` here, meaning that no reconnection is ever
    /// attempted. This driver always has a policy in force, so it never is.
    policy: ReconnectionPolicyReport,
}

#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "kebab-case"
)]
enum ReconnectionPolicyReport {
    /// `max-attempts` is omitted, which the schema defines as unlimited: the
    /// pool retries forever.
    Exponential {
        base_ms: u64,
        max_ms: u64,
    },
    Constant {
        /// A schema `nonNegativeInteger`, where 0 means an immediate retry rather
        /// than a disabled feature, so it is reported verbatim.
        delay_ms: u64,
    },
    Custom {
        name: &'static str,
    },
}

/// The schema's `node-location-preference`, used by both `connection` and
/// `query.load-balancing`: which nodes the driver holds connections to at all,
/// and which of those a request may be routed to. The two are different claims
/// but have the same shape, and the schema's `$def` is shared.
///
/// The `dc-auto` and `rack-auto` branches are never produced: this driver
/// infers no location, every preference it reports is one a user configured.
#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "kebab-case"
)]
enum NodePreferenceReport {
    Dc {
        local_dc: String,
    },
    Rack {
        local_dc: String,
        local_rack: String,
    },
}

/// `hostname-verification` is deliberately absent, which the schema permits
/// "when this behavior is unknown", and here it genuinely is. With openssl the
/// driver never calls `X509_VERIFY_PARAM_set1_host` and `SslContextRef` exposes
/// no getter for the host verification parameter; with rustls the driver
/// connects with `ServerName::IpAddress`, and a user-installed dangerous
/// verifier is invisible to it. Reporting either boolean would be a guess.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct TlsReport {}

/// The schema's `query` group.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct QueryReport {
    defaults: QueryDefaultsReport,
    retry: QueryRetryReport,
    load_balancing: QueryLoadBalancingReport,
    /// Omitted when speculative execution never fires, which the schema gives
    /// the group's absence as its meaning.
    #[serde(skip_serializing_if = "Option::is_none")]
    speculative_execution: Option<QuerySpeculativeExecutionReport>,
}

/// The defaults a statement gets when it overrides nothing, read from the
/// session's default execution profile.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct QueryDefaultsReport {
    consistency: &'static str,
    /// Omitted when the profile has no serial consistency, in which case the
    /// server's own default applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    serial_consistency: Option<&'static str>,
    /// Always `false`, because idempotence is only ever set per statement, via
    /// `StatementConfig::is_idempotent`, with neither a session- nor a
    /// profile-level setting to read. A statement that sets nothing is
    /// therefore treated as not known to be idempotent.
    idempotence: bool,
    /// Always present, unlike in drivers whose timestamp generator may decline
    /// to produce a timestamp: [`TimestampGenerator::next_timestamp`] returns a
    /// plain `i64`, so a configured generator always assigns the timestamp
    /// client side.
    ///
    /// [`TimestampGenerator::next_timestamp`]: crate::policies::timestamp_generator::TimestampGenerator::next_timestamp
    client_timestamps: bool,
    page: PageReport,
    /// Omitted entirely when the profile disables the request timeout. The
    /// schema does not require the group, so an empty object would say no more
    /// than its absence.
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<RequestDefaultsReport>,
}

/// The page size a paged statement that sets none is executed with; the unpaged
/// APIs send none at all. There is no session- or profile-level setting, so
/// this is always the driver's default.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct PageReport {
    size: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct RequestDefaultsReport {
    timeout_ms: u64,
}

/// `backoff` is never reported: no retry policy of this driver waits between
/// attempts. Neither is `max-retries`, which every variant below leaves
/// optional: the built-ins do cap some retries - each keeps an "already
/// retried" flag per error kind - but that cap does not bound the retries on
/// the next target that a connection or server error triggers, so there is no
/// single count to report.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct QueryRetryReport {
    policy: RetryPolicyReport,
}

#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "kebab-case"
)]
enum RetryPolicyReport {
    /// [`DefaultRetryPolicy`], whose decisions are driven by the error kind -
    /// what the schema calls error-aware. csharp-driver maps its own default
    /// policy to this type as well.
    StandardErrorAware,
    Fallthrough,
    DowngradingConsistency,
    Custom {
        name: &'static str,
    },
}

/// The schema's `query.load-balancing`, read from the default execution
/// profile's load balancing policy.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct QueryLoadBalancingReport {
    policy: LoadBalancingPolicyReport,
    /// The effective node location preference: the policy's own, or the
    /// session-level one it falls back to. `policy`'s
    /// `fallback-to-non-preferred-nodes` is derived from this very value, so
    /// that the two cannot contradict each other.
    #[serde(skip_serializing_if = "Option::is_none")]
    node_preference: Option<NodePreferenceReport>,
}

#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "kebab-case"
)]
enum LoadBalancingPolicyReport {
    /// A token-aware [`DefaultPolicy`]. The schema's only built-in branch
    /// presumes token awareness, so a `DefaultPolicy` with it switched off is
    /// reported as [`Custom`](Self::Custom) instead - naming it `token-aware`
    /// would be a plain lie about how plans are built.
    TokenAware {
        load_distribution: &'static str,
        fallback_to_non_preferred_nodes: bool,
        /// Present only when latency awareness is enabled, which the schema
        /// spells as "absent when adaptive ordering is disabled".
        #[serde(skip_serializing_if = "Option::is_none")]
        adaptive_ordering: Option<AdaptiveOrderingReport>,
    },
    Custom {
        name: String,
    },
}

/// Which runtime observations reorder otherwise eligible candidates. The schema
/// stops there deliberately: it records the signals, not the algorithm or its
/// thresholds, so `DefaultPolicy`'s exclusion threshold and retry period have
/// nowhere to go and are not reported.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct AdaptiveOrderingReport {
    signals: &'static [&'static str],
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct QuerySpeculativeExecutionReport {
    policy: SpeculativeExecutionPolicyReport,
}

/// `max-executions` is a [`NonZeroUsize`] because the schema declares it
/// `positiveInteger`, and a policy that permits zero extra executions never
/// fires at all - such a policy is reported as no speculative execution rather
/// than as one with an unrepresentable count.
#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "kebab-case"
)]
enum SpeculativeExecutionPolicyReport {
    Constant {
        max_executions: NonZeroUsize,
        /// A schema `nonNegativeInteger`, where 0 means "launch immediately"
        /// rather than a disabled feature, so it is reported verbatim.
        delay_ms: u64,
    },
    #[cfg(feature = "metrics")]
    Percentile {
        max_executions: NonZeroUsize,
        percentile: f64,
    },
    Custom {
        name: &'static str,
    },
}

/// The schema's `query.defaults.consistency` name of `consistency`.
///
/// Neither [`Consistency`]'s `Display` nor its `Debug` can serve here: both
/// render CamelCase, and the schema's enum is SCREAMING_SNAKE. The match has no
/// `_` arm on purpose - a variant added upstream must fail to compile here
/// rather than silently report a name the schema rejects.
fn consistency_name(consistency: Consistency) -> &'static str {
    match consistency {
        Consistency::Any => "ANY",
        Consistency::One => "ONE",
        Consistency::Two => "TWO",
        Consistency::Three => "THREE",
        Consistency::Quorum => "QUORUM",
        Consistency::All => "ALL",
        Consistency::LocalQuorum => "LOCAL_QUORUM",
        Consistency::EachQuorum => "EACH_QUORUM",
        Consistency::LocalOne => "LOCAL_ONE",
        // The schema's enum includes the serial levels, which a `SELECT` may
        // legitimately run at, so every variant is reportable.
        Consistency::Serial => "SERIAL",
        Consistency::LocalSerial => "LOCAL_SERIAL",
    }
}

/// The schema's `query.defaults.serial-consistency` name of
/// `serial_consistency`. Exhaustive for the same reason as
/// [`consistency_name`].
fn serial_consistency_name(consistency: SerialConsistency) -> &'static str {
    match consistency {
        SerialConsistency::Serial => "SERIAL",
        SerialConsistency::LocalSerial => "LOCAL_SERIAL",
    }
}

/// Milliseconds of a duration reported under a schema `positiveInteger` key.
///
/// Floored at 1: a sub-millisecond duration truncates to 0, which the schema
/// rejects, and a sub-millisecond timeout is still a timeout. Saturates instead
/// of truncating - `u64` milliseconds is half a billion years, so the clamp is
/// unreachable in practice.
fn positive_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Milliseconds of a duration, verbatim: truncating as [`Duration::as_millis`]
/// does, saturating at `u64::MAX` - `u64` milliseconds is half a billion years,
/// so the clamp is unreachable in practice.
fn non_negative_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A socket buffer size hint, or `None` when unset.
///
/// A configured 0 is reported as unset, because `size-bytes` is a schema
/// `positiveInteger` and 0 cannot be expressed under it. That loses a real
/// distinction: the driver does call `set_recv_buffer_size`/
/// `set_send_buffer_size` with 0, which pins the buffer to the kernel minimum,
/// whereas an unset size leaves auto-tuning on.
fn buffer_report(size: Option<usize>) -> Option<BufferReport> {
    size.filter(|size| *size > 0)
        .map(|size_bytes| BufferReport {
            // Truncating because this is what we do in the driver code when calling Tokio methods.
            size_bytes: size_bytes as u32,
        })
}

/// The schema's `node-location-preference` of an effective
/// [`NodeLocationPreference`].
///
/// An empty datacenter name drops the whole preference: `local-dc` is a
/// `nonEmptyString` and required on every branch that names a location, so there
/// is nothing left to report. An empty rack name only drops the rack half, and
/// the datacenter is still reported: at runtime the rack tier of the plan
/// matches no node - `make_rack_predicate` compares against `Some("")` - while
/// `preferred_node_set` and `is_datacenter_failover_possible` keep scoping and
/// gating by the datacenter, so routing is confined exactly as a plain
/// [`NodeLocationPreference::Datacenter`] would confine it.
fn location_preference_report(preference: &NodeLocationPreference) -> Option<NodePreferenceReport> {
    match preference {
        NodeLocationPreference::Any => None,
        NodeLocationPreference::Datacenter(dc) => {
            (!dc.is_empty()).then(|| NodePreferenceReport::Dc {
                local_dc: dc.clone(),
            })
        }
        NodeLocationPreference::DatacenterAndRack(dc, rack) => (!dc.is_empty()).then(|| {
            if rack.is_empty() {
                NodePreferenceReport::Dc {
                    local_dc: dc.clone(),
                }
            } else {
                NodePreferenceReport::Rack {
                    local_dc: dc.clone(),
                    local_rack: rack.clone(),
                }
            }
        }),
    }
}

/// Whether a request may reach a node outside the reported `node-preference`.
///
/// Derived from the very preference report the document carries, so the two
/// keys cannot disagree about which preference they describe.
fn fallback_to_non_preferred_nodes(
    node_preference: Option<&NodePreferenceReport>,
    permit_dc_failover: bool,
) -> bool {
    match node_preference {
        // Nothing confines requests, and `permit_dc_failover` has no effect
        // without a preferred datacenter.
        None => true,
        Some(NodePreferenceReport::Dc { .. }) => permit_dc_failover,
        // A rack preference is always escaped, whatever `permit_dc_failover`
        // says. `is_datacenter_failover_possible` only ever gates tiers that
        // leave the preferred datacenter; every tier scoped to that datacenter
        // is unconditional. In `DefaultPolicy::fallback` those are the whole-
        // datacenter replica tier inside `maybe_replicas`, `robinned_local_nodes`
        // and `maybe_down_local_nodes`, all three covering the datacenter's other
        // racks. `pick` behaves the same, falling from its local-rack attempt
        // straight to the whole-datacenter one with no failover check. Disabling
        // failover only stops requests leaving the datacenter, which the schema's
        // single boolean cannot express.
        Some(NodePreferenceReport::Rack { .. }) => true,
    }
}

/// The schema's `name` of a load balancing policy the driver cannot describe
/// precisely.
///
/// [`LoadBalancingPolicy::name`] is implemented by the user and may return an
/// empty string, which `nonEmptyString` rejects. A literal stands in for it,
/// matching what gocql reports for a policy it cannot name.
fn custom_policy_name(policy: &Arc<dyn LoadBalancingPolicy>) -> String {
    let name = policy.name();
    if name.is_empty() {
        "unknown".to_owned()
    } else {
        name
    }
}

/// What a speculative execution policy can be reported as.
///
/// Three outcomes, named rather than encoded as a nested `Option`, because the
/// middle one is not simply "not a built-in": a built-in whose parameters fall
/// outside what the schema can carry lands there too, and a bare
/// `Option<Option<_>>` gave no place to say so.
enum SpeculativeExecutionReported {
    /// The policy never launches an extra execution, so there is no speculative
    /// execution to report at all and the group is omitted.
    NeverFires,
    /// Report the policy as `custom`, named but not described. Either the driver
    /// does not know the policy, or it does and its parameters cannot be
    /// expressed under the schema's branch for it.
    Generic,
    /// A built-in, described precisely.
    Precise(SpeculativeExecutionPolicyReport),
}

/// How to report one of the built-in speculative execution policies.
fn speculative_execution_policy_report(policy: &dyn std::any::Any) -> SpeculativeExecutionReported {
    if let Some(policy) = policy.downcast_ref::<SimpleSpeculativeExecutionPolicy>() {
        let Some(max_executions) = NonZeroUsize::new(policy.max_retry_count) else {
            return SpeculativeExecutionReported::NeverFires;
        };
        return SpeculativeExecutionReported::Precise(SpeculativeExecutionPolicyReport::Constant {
            max_executions,
            delay_ms: non_negative_millis(policy.retry_interval),
        });
    }

    #[cfg(feature = "metrics")]
    if let Some(policy) = policy.downcast_ref::<PercentileSpeculativeExecutionPolicy>() {
        let Some(max_executions) = NonZeroUsize::new(policy.max_retry_count) else {
            return SpeculativeExecutionReported::NeverFires;
        };

        // `percentile` is an unvalidated `f64`, and two kinds of value cannot be
        // reported under it. The schema's bounds are exclusive, so 0, 100 and
        // anything outside them is simply invalid. A non-finite value is worse:
        // `serde_json` renders `NaN` and the infinities as `null` rather than
        // failing, so nothing downstream would catch it and it has to be
        // rejected here. The policy still fires, so it is named rather than
        // dropped.
        if !policy.percentile.is_finite() || policy.percentile <= 0.0 || policy.percentile >= 100.0
        {
            return SpeculativeExecutionReported::Generic;
        }

        return SpeculativeExecutionReported::Precise(
            SpeculativeExecutionPolicyReport::Percentile {
                max_executions,
                percentile: policy.percentile,
            },
        );
    }

    SpeculativeExecutionReported::Generic
}

/// Builds the configuration report of a session.
///
/// Holds a snapshot of everything fixed for the session's lifetime, because
/// [`SessionConfig`] itself is consumed by session creation. The default
/// execution profile is not such a thing: the handle is held instead of its
/// contents, so that remapping it is reflected by the next report.
pub(crate) struct DriverConfigReporter {
    connect_timeout: Duration,
    socket_options: TcpSocketOptions,
    shard_aware_port_allowed: bool,
    tls_configured: bool,
    host_filter: Option<Arc<dyn HostFilter>>,
    reconnect_policy: Arc<dyn ReconnectPolicy>,
    metadata_request_timeouts: MetadataRequestTimeouts,
    schema_agreement_timeout: Duration,
    /// The session-level preference a load balancing policy that states none of
    /// its own falls back to.
    node_location_preference: NodeLocationPreference,
    default_execution_profile_handle: ExecutionProfileHandle,
    timestamp_generator_configured: bool,
}

impl DriverConfigReporter {
    /// `socket_options`, `reconnect_policy` and `metadata_request_timeouts` are
    /// passed in rather than derived from `config`, so that the report describes
    /// the values the session is actually built with: those are assembled once by
    /// the caller and handed to the components that use them, and the effective
    /// reconnect policy is not always the one on `config` (without the unstable
    /// feature the field does not exist and a default is used).
    pub(crate) fn new(
        config: &SessionConfig,
        socket_options: TcpSocketOptions,
        reconnect_policy: Arc<dyn ReconnectPolicy>,
        metadata_request_timeouts: MetadataRequestTimeouts,
    ) -> Self {
        Self {
            connect_timeout: config.connect_timeout,
            socket_options,
            // Two static conditions have to hold for a shard-aware connection to
            // ever be attempted, and the schema has one boolean for both: the
            // port must not be disallowed, and the pool must be per-shard -
            // `NodeConnectionPoolRefiller::start_filling` only takes the
            // shard-aware path for `PoolSize::PerShard`.
            shard_aware_port_allowed: !config.disallow_shard_aware_port
                && matches!(config.connection_pool_size, PoolSize::PerShard(_)),
            tls_configured: config.tls_context.is_some(),
            host_filter: config.host_filter.clone(),
            reconnect_policy,
            metadata_request_timeouts,
            schema_agreement_timeout: config.schema_agreement_timeout,
            node_location_preference: config.node_location_preference.clone(),
            default_execution_profile_handle: config.default_execution_profile_handle.clone(),
            timestamp_generator_configured: config.timestamp_generator.is_some(),
        }
    }

    /// Renders the report, or returns `None` when there is nothing safe to send.
    ///
    /// Never fails and never panics: the report is a diagnostic aid, and must
    /// never prevent a connection from being established. Problems are logged
    /// and the option omitted.
    ///
    /// The report is rebuilt on every call rather than cached, because it is not
    /// constant for the lifetime of a session: `target_is_scylladb` is only
    /// known after the `OPTIONS`/`SUPPORTED` exchange of the connection being
    /// established, and configuration read through an `ExecutionProfileHandle`
    /// can be remapped at runtime.
    ///
    /// `target_is_scylladb` tells whether the peer is a ScyllaDB node, which the
    /// server-side metadata request timeout depends on: `USING TIMEOUT` is a
    /// ScyllaDB-only extension.
    pub(crate) fn report(&self, target_is_scylladb: bool) -> Option<String> {
        let report = Report {
            version: REPORT_VERSION,
            connection: self.connection_report(),
            control_plane: self.control_plane_report(target_is_scylladb),
            query: self.query_report(),
        };

        // `serde_json::to_string` cannot fail for the report's current shape; the
        // branch keeps reporting best effort once a future one can fail. It will
        // not catch a non-finite `f64`: `serde_json` emits those as `null`, which
        // the schema rejects under a numeric key, so such values have to be
        // filtered out where they are read rather than here.
        let report = match serde_json::to_string(&report) {
            Ok(report) => report,
            Err(err) => {
                tracing::warn!("Failed to serialize the driver configuration report: {err}");
                return None;
            }
        };

        if report.len() > MAX_REPORT_SIZE {
            tracing::warn!(
                "Driver configuration report is too large to be reported: {} bytes, the limit is {} bytes",
                report.len(),
                MAX_REPORT_SIZE
            );
            return None;
        }

        Some(report)
    }

    fn connection_report(&self) -> ConnectionReport {
        let options = &self.socket_options;

        ConnectionReport {
            connect: ConnectReport {
                timeout_ms: positive_millis(self.connect_timeout),
            },
            requests: RequestsReport {
                in_flight: MaxReport {
                    max: MAX_IN_FLIGHT_REQUESTS,
                },
                orphaned: MaxReport {
                    max: OLD_ORPHAN_COUNT_THRESHOLD,
                },
            },
            pool: PoolReport {
                shard_aware: ShardAwareReport {
                    enabled: self.shard_aware_port_allowed,
                },
            },
            socket: SocketReport {
                tcp_no_delay: options.nodelay,
                keep_alive: options.keepalive_interval.is_some(),
                // The schema asks for the effective value, and for the OS
                // default when nothing is configured. That default is off on
                // every platform the driver targets.
                reuse_address: options.reuse_address.unwrap_or(false),
                linger: options.linger.map(|linger| LingerReport {
                    interval_s: linger.as_secs(),
                }),
                receive_buffer: buffer_report(options.recv_buffer_size),
                send_buffer: buffer_report(options.send_buffer_size),
            },
            reconnection: ReconnectionReport {
                policy: self.reconnection_policy_report(),
            },
            node_preference: self.node_preference_report(),
            tls: self.tls_configured.then_some(TlsReport {}),
        }
    }

    fn reconnection_policy_report(&self) -> ReconnectionPolicyReport {
        let Some(policy) = self.reconnect_policy.as_any() else {
            return ReconnectionPolicyReport::Custom {
                name: self.reconnect_policy.reported_name(),
            };
        };

        if let Some(policy) = policy.downcast_ref::<ExponentialReconnectPolicy>() {
            // Both keys are required and `positiveInteger`, so neither may be
            // omitted or floored away. The schema also demands
            // `max-ms >= base-ms`; the policy's only constructors are `new` and
            // `with_backoff_limits`, which asserts `min <= max`, and flooring is
            // monotone, so the reported pair preserves the ordering.
            ReconnectionPolicyReport::Exponential {
                base_ms: positive_millis(policy.min_fill_backoff),
                max_ms: positive_millis(policy.max_fill_backoff),
            }
        } else if let Some(policy) = policy.downcast_ref::<ConstantReconnectPolicy>() {
            ReconnectionPolicyReport::Constant {
                delay_ms: non_negative_millis(policy.delay),
            }
        } else {
            ReconnectionPolicyReport::Custom {
                name: self.reconnect_policy.reported_name(),
            }
        }
    }

    /// The schema's `connection.node-preference`: which nodes the driver holds
    /// connections to at all, which only the host filter narrows. Of the
    /// built-in filters only [`DcHostFilter`] states a location - the schema has
    /// no branch for selection by address - so every other filter reports no
    /// preference.
    fn node_preference_report(&self) -> Option<NodePreferenceReport> {
        let filter = self.host_filter.as_ref()?.as_any()?;
        let filter = filter.downcast_ref::<DcHostFilter>()?;

        // `local-dc` is a `nonEmptyString`, and an empty DC name accepts no node
        // anyway, so there is no preference worth reporting.
        (!filter.local_dc.is_empty()).then(|| NodePreferenceReport::Dc {
            local_dc: filter.local_dc.clone(),
        })
    }

    fn control_plane_report(&self, target_is_scylladb: bool) -> ControlPlaneReport {
        let timeouts = &self.metadata_request_timeouts;

        ControlPlaneReport {
            queries: ControlPlaneQueriesReport {
                system: SystemQueriesReport {
                    timeout: SystemQueriesTimeoutReport {
                        // Floored, unlike `server-side-ms` below: this bounds a
                        // client-side deadline, which a sub-millisecond duration
                        // expresses perfectly well.
                        client_side_ms: positive_millis(timeouts.clientside()),
                        // Gated on the target, because `USING TIMEOUT` is a
                        // ScyllaDB-only extension and the control connection only
                        // appends the clause against ScyllaDB.
                        //
                        // Truncating rather than floored, because the report must
                        // name the value the clause actually carries, and
                        // `ControlConnection::maybe_append_timeout_override`
                        // formats `as_millis()`: a sub-millisecond timeout is sent
                        // as `USING TIMEOUT 0ms`. The key is then omitted, as the
                        // schema's `positiveInteger` cannot carry 0.
                        server_side_ms: timeouts
                            .serverside(target_is_scylladb)
                            .map(non_negative_millis)
                            .filter(|&millis| millis > 0),
                    },
                },
            },
            schema: ControlPlaneSchemaReport {
                agreement: SchemaAgreementReport {
                    timeout_ms: non_negative_millis(self.schema_agreement_timeout),
                },
            },
        }
    }

    /// The profile is read here rather than at construction: the handle may have
    /// been remapped since, and the report must name the configuration in force.
    fn query_report(&self) -> QueryReport {
        let profile = self.default_execution_profile_handle.access();

        QueryReport {
            defaults: QueryDefaultsReport {
                consistency: consistency_name(profile.consistency),
                serial_consistency: profile.serial_consistency.map(serial_consistency_name),
                idempotence: false,
                client_timestamps: self.timestamp_generator_configured,
                page: PageReport {
                    size: PageSize::default().inner(),
                },
                request: profile
                    .request_timeout
                    .map(|timeout| RequestDefaultsReport {
                        timeout_ms: positive_millis(timeout),
                    }),
            },
            retry: QueryRetryReport {
                policy: Self::retry_policy_report(&profile.retry_policy),
            },
            load_balancing: self.load_balancing_report(&profile.load_balancing_policy),
            speculative_execution: profile
                .speculative_execution_policy
                .as_ref()
                .and_then(Self::speculative_execution_report),
        }
    }

    fn load_balancing_report(
        &self,
        policy: &Arc<dyn LoadBalancingPolicy>,
    ) -> QueryLoadBalancingReport {
        let default_policy = policy
            .as_any()
            .and_then(|policy| policy.downcast_ref::<DefaultPolicy>());

        // The effective preference, resolved the way `DefaultPolicy::routing_info`
        // resolves it: the policy's own preference if it states one, else the
        // session-level one. Computed once, because `node-preference` and
        // `fallback-to-non-preferred-nodes` both describe it and would contradict
        // each other if they were derived separately.
        let preference = default_policy
            .and_then(|policy| policy.preferences.as_ref())
            .unwrap_or(&self.node_location_preference);
        let node_preference = location_preference_report(preference);

        QueryLoadBalancingReport {
            policy: Self::load_balancing_policy_report(
                policy,
                default_policy,
                node_preference.as_ref(),
            ),
            node_preference,
        }
    }

    fn load_balancing_policy_report(
        policy: &Arc<dyn LoadBalancingPolicy>,
        default_policy: Option<&DefaultPolicy>,
        node_preference: Option<&NodePreferenceReport>,
    ) -> LoadBalancingPolicyReport {
        // A `DefaultPolicy` with token awareness switched off falls in here too:
        // the schema's only built-in load-balancing type presumes token
        // awareness, so there is no built-in shape such a chain could be reported
        // under.
        let custom = || LoadBalancingPolicyReport::Custom {
            name: custom_policy_name(policy),
        };

        let Some(default_policy) = default_policy.filter(|policy| policy.is_token_aware) else {
            return custom();
        };

        LoadBalancingPolicyReport::TokenAware {
            // Keyed on `fixed_seed`, which is what the policy branches on at
            // runtime: `pick_random_replica` and `maybe_shuffled_replicas` build
            // a fresh `Pcg32::new(seed, 0)` per call, so a fixed seed yields the
            // same choice and the same permutation for every query plan - not
            // randomised selection, which is what the schema's `shuffle` means.
            // An unfixed seed draws from the thread rng and does randomise.
            // `replica-set` is then the closest of the remaining two: it is the
            // only value asserting an order stable across plans, and gocql
            // branches on its own equivalent flag to the same value.
            //
            // One value per policy is all the schema has, so this necessarily
            // describes only the replica tiers: other tiers are round-robined
            // regardless (`round_robin_nodes`, which ignores `fixed_seed`), and
            // LWT statements always get deterministic ring order
            // (`ReplicaOrder::Deterministic`).
            load_distribution: if default_policy.fixed_seed.is_some() {
                "replica-set"
            } else {
                "shuffle"
            },
            fallback_to_non_preferred_nodes: fallback_to_non_preferred_nodes(
                node_preference,
                default_policy.permit_dc_failover,
            ),
            adaptive_ordering: default_policy.latency_awareness.is_some().then_some(
                AdaptiveOrderingReport {
                    signals: &["latency"],
                },
            ),
        }
    }

    /// The schema's `query.speculative-execution` group, or `None` when
    /// speculative execution never fires.
    fn speculative_execution_report(
        policy: &Arc<dyn SpeculativeExecutionPolicy>,
    ) -> Option<QuerySpeculativeExecutionReport> {
        // `max_retry_count(&Context)` is deliberately not called on a policy
        // reported generically: building a `Context` requires the session's
        // metrics, and the schema's `custom` branch does not ask for a count.
        let generic = || SpeculativeExecutionPolicyReport::Custom {
            name: policy.reported_name(),
        };

        let policy = match policy.as_any() {
            None => generic(),
            Some(downcastable) => match speculative_execution_policy_report(downcastable) {
                SpeculativeExecutionReported::NeverFires => return None,
                SpeculativeExecutionReported::Generic => generic(),
                SpeculativeExecutionReported::Precise(report) => report,
            },
        };

        Some(QuerySpeculativeExecutionReport { policy })
    }

    fn retry_policy_report(policy: &Arc<dyn RetryPolicy>) -> RetryPolicyReport {
        let Some(downcastable) = policy.as_any() else {
            return RetryPolicyReport::Custom {
                name: policy.reported_name(),
            };
        };

        if downcastable.is::<DefaultRetryPolicy>() {
            RetryPolicyReport::StandardErrorAware
        } else if downcastable.is::<FallthroughRetryPolicy>() {
            RetryPolicyReport::Fallthrough
        } else if downcastable.is::<DowngradingConsistencyRetryPolicy>() {
            RetryPolicyReport::DowngradingConsistency
        } else {
            RetryPolicyReport::Custom {
                name: policy.reported_name(),
            }
        }
    }
}

#[cfg(test)]
#[path = "driver_config_tests.rs"]
mod tests;
