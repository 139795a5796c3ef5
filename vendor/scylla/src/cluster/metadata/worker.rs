use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tracing::{debug, error};
use uuid::Uuid;

use crate::cluster::control_connection::{
    ControlConnection, ControlConnectionEvent, ControlConnectionEvents,
};
use crate::cluster::metadata::fetching::LastKeyspaceChange;
use crate::cluster::metadata::update::{
    FetchedKeyspace, MetadataUpdate, RefreshRequest, SchemaUpdate,
};
use crate::cluster::metadata::{ClientRoutesUpdate, Metadata, Peer, PeriodicFetchMode};
use crate::errors::{
    BrokenConnectionErrorKind, ConnectionError, ConnectionPoolError, MetadataError,
};
use crate::frame::response::event::ClientRoutesChangeEvent;
use crate::frame::response::event::EventV2 as Event;
use crate::frame::response::event::SchemaChangeEvent;
use crate::frame::response::event::SchemaChangeType;
use crate::frame::response::event::StatusChangeEvent;

use super::cc_establisher::{ControlConnectionEstablisher, FetchOnCandidate, TopologyUpdateGuard};
use super::merge_channel;

/// How often the worker attempts to establish a control connection while it has none.
const CONTROL_CONNECTION_REPAIR_INTERVAL: Duration = Duration::from_secs(1);

/// Works in the background to keep learning about the cluster: fetches metadata
/// periodically and on request, and drains CQL server events from the control
/// connection. All of its output is put into the `merge_channel` that the
/// caller of `new` provides.
///
/// The worker alternates between two loops:
/// - [`work_on_cc`](Self::work_on_cc), which serves a specific control connection
///   until it breaks, and
/// - [`work_without_cc`](Self::work_without_cc), which establishes a new one.
///
/// The control connection is therefore not a field, but a value owned by the
/// currently running loop.
pub(in super::super) struct MetadataWorker {
    /// Establishes control connections (fetching metadata in the process) and
    /// keeps the known peers to establish them to.
    cc_establisher: ControlConnectionEstablisher,

    /// How often the periodic refresh tick fires, and what it re-reads.
    ///
    /// By default the tick paces the partial schema fetches, everything else
    /// being re-read in reaction to server events or on request; with
    /// [`PeriodicFetchMode::FullMetadata`] it re-reads the whole metadata
    /// instead.
    cluster_metadata_refresh_interval: Duration,
    periodic_fetch_mode: PeriodicFetchMode,

    // To listen for refresh requests
    refresh_channel: tokio::sync::mpsc::Receiver<RefreshRequest>,

    /// Produces updates for the cluster worker.
    updates: merge_channel::Sender<MetadataUpdate>,

    /// A received refresh request whose refresh has not been performed yet.
    ///
    /// This is worker state rather than a local of either loop: a request may
    /// arrive on a control connection that then turns out to be defunct, in which
    /// case it must survive the switch to [`work_without_cc`](Self::work_without_cc),
    /// which retries the refresh and ultimately answers it.
    ///
    /// Invariant: at most one request is pending at a time - both loops take it
    /// (answering it, directly or through the cluster worker) before awaiting
    /// the next one.
    ///
    /// Within [`work_on_cc`](Self::work_on_cc) a stronger invariant holds: while
    /// a request is pending, the full fetch in flight was started after (and
    /// because of) its receipt - see the `refresh_channel` branch there for how
    /// its guard upholds this.
    pending_request: Option<RefreshRequest>,
}

/// A [`ControlConnection`] established by [`MetadataWorker::establish`],
/// bundled with everything the worker needs to serve it.
pub(in super::super) struct EstablishedCc {
    cc: ControlConnection,
    events: ControlConnectionEvents,
    /// The fetch work implied by server events that arrived while the
    /// establishment fetch was in flight. Such events may postdate the data
    /// that fetch read, so [`MetadataWorker::work_on_cc`] starts from this
    /// plan rather than from an empty one.
    plan: FetchPlan,
}

/// Adapts [`MetadataWorker::fetch_on_candidate`] to the [`FetchOnCandidate`]
/// trait that [`ControlConnectionEstablisher::establish_cc_and_fetch_metadata`] consumes,
/// lending it the worker's updates channel.
struct CandidateFetcher<'a> {
    updates: &'a mut merge_channel::Sender<MetadataUpdate>,
}

impl FetchOnCandidate for CandidateFetcher<'_> {
    type Payload = FetchPlan;

    async fn fetch(
        &mut self,
        cc: &ControlConnection,
        cc_events: &mut ControlConnectionEvents,
    ) -> Result<(TopologyUpdateGuard, FetchPlan), MetadataError> {
        MetadataWorker::fetch_on_candidate(self.updates, cc, cc_events).await
    }
}

/// The fetch work that [`MetadataWorker::work_on_cc`] owes but has not started
/// yet, because the fetch that must precede it is still in flight. Also
/// produced by [`MetadataWorker::fetch_on_candidate`], recording the fetch
/// work that accrued during establishment for `work_on_cc` to start from.
///
/// The starter step at the top of the loop drains this plan into
/// [`PendingFetches`] as soon as the blocking fetch completes, so whenever the
/// loop awaits, everything still recorded here is genuinely blocked.
///
/// There is deliberately no state for "a full fetch and partial work owed at
/// once": a due full fetch subsumes all partial work (see
/// [`note_full_needed`](Self::note_full_needed)), so recording both would keep
/// data only to throw it away.
enum FetchPlan {
    /// A full metadata fetch is owed: requested explicitly, implied by a
    /// server event, or owed because a partial fetch failed.
    Full,
    /// Partial fetch work is owed, at most one entry per partial fetch type.
    Partial {
        /// The (connection id, host id) pairs whose client routes are to be
        /// re-read, accumulated from CLIENT_ROUTES_CHANGE events.
        client_routes: Option<ClientRoutesFetchRequest>,
        /// Whether the peer list is to be re-read.
        topology: bool,
        /// The keyspaces whose schema is to be re-read, or dropped from the
        /// metadata, accumulated from SCHEMA_CHANGE events.
        ///
        /// Unlike the other entries, this one is not started as soon as its
        /// slot is free: it waits for the periodic refresh tick - see
        /// [`PendingFetches::start_due_fetches`].
        schema: Option<SchemaFetchRequest>,
    },
}

impl FetchPlan {
    /// Records that a full fetch is owed.
    ///
    /// Any partial work recorded so far is dropped: the full fetch starts no
    /// earlier than now - hence after the events that made the partial work
    /// due - and reads everything a partial fetch would, so it subsumes that
    /// work.
    fn note_full_needed(&mut self) {
        *self = FetchPlan::Full;
    }

    /// Records client-routes work, merging it into the work already owed.
    ///
    /// If a full fetch is already owed, the work is dropped - subsumed, by the
    /// argument in [`note_full_needed`](Self::note_full_needed).
    fn note_client_routes(&mut self, request: ClientRoutesFetchRequest) {
        match self {
            FetchPlan::Partial { client_routes, .. } => match client_routes {
                None => *client_routes = Some(request),
                Some(client_routes) => client_routes.merge(request),
            },
            FetchPlan::Full => (),
        }
    }

    /// Records that the peer list is to be re-read.
    ///
    /// If a full fetch is already owed, this is dropped - subsumed, by the
    /// argument in [`note_full_needed`](Self::note_full_needed).
    fn note_topology(&mut self) {
        match self {
            FetchPlan::Partial { topology, .. } => *topology = true,
            FetchPlan::Full => (),
        }
    }

    /// Records that `keyspace`'s schema is to be re-read (or dropped), merging
    /// it into the work already owed.
    ///
    /// If a full fetch is already owed, the work is dropped - subsumed, by the
    /// argument in [`note_full_needed`](Self::note_full_needed).
    fn note_schema(&mut self, keyspace: String, change: LastKeyspaceChange) {
        match self {
            FetchPlan::Partial { schema, .. } => schema
                .get_or_insert_with(SchemaFetchRequest::default)
                .note(keyspace, change),
            FetchPlan::Full => (),
        }
    }

    /// Records that fetching `keyspace` failed.
    ///
    /// It will only insert the keyspace into the fetch plan
    /// if it's not already there. If it's there, then we received an
    /// event after we started the fetch, and it should take precedence.
    fn note_keyspace_err(&mut self, keyspace: String) {
        match self {
            FetchPlan::Partial { schema, .. } => schema
                .get_or_insert_with(SchemaFetchRequest::default)
                .note_error(keyspace),
            FetchPlan::Full => (),
        }
    }

    /// Nothing owed: the state of a plan whose work has all been started.
    const fn empty() -> Self {
        Self::Partial {
            client_routes: None,
            topology: false,
            schema: None,
        }
    }
}

/// The (connection id, host id) pairs accumulated from CLIENT_ROUTES_CHANGE
/// events, to be resolved by one partial client-routes fetch.
///
/// A set: merging the work of several events is a plain union, and identical
/// pairs listed repeatedly are deduplicated for free.
struct ClientRoutesFetchRequest {
    pairs: HashSet<(String, Uuid)>,
}

impl ClientRoutesFetchRequest {
    /// Merges another event's pairs in.
    fn merge(&mut self, newer: Self) {
        self.pairs.extend(newer.pairs);
    }

    /// Performs the partial fetch for the accumulated pairs.
    ///
    /// Takes `self` by value so that the returned future borrows only the
    /// control connection - it is stored in [`PendingFetches`] across
    /// `select!` iterations.
    async fn fetch_on(
        self,
        cc: &ControlConnection,
    ) -> Result<Option<ClientRoutesUpdate>, MetadataError> {
        cc.fetch_client_routes_update(&self.pairs).await
    }
}

/// The keyspaces named by SCHEMA_CHANGE events, to be resolved by one partial
/// schema fetch.
///
/// A map keyed by keyspace: merging the work of several events keeps, per
/// keyspace, only the last change. The fetch re-reads the keyspace's whole
/// metadata regardless of what changed in it, so what a superseded event named
/// is of no interest - and a keyspace whose last event dropped it needs no read
/// at all.
#[derive(Default)]
struct SchemaFetchRequest {
    keyspaces: HashMap<String, LastKeyspaceChange>,
}

impl SchemaFetchRequest {
    /// Records what the newest event did to `keyspace`, overriding what an
    /// older one did to it.
    fn note(&mut self, keyspace: String, change: LastKeyspaceChange) {
        self.keyspaces.insert(keyspace, change);
    }

    /// Records that we failed to process the keyspace.
    fn note_error(&mut self, keyspace: String) {
        self.keyspaces
            .entry(keyspace)
            .or_insert(LastKeyspaceChange::Altered);
    }

    /// Performs the partial fetch for the accumulated keyspaces.
    ///
    /// Takes `self` by value for the same reason as
    /// [`ClientRoutesFetchRequest::fetch_on`].
    async fn fetch_on(self, cc: &ControlConnection) -> Result<Option<SchemaUpdate>, MetadataError> {
        cc.fetch_schema_update(self.keyspaces).await
    }
}

/// A full-metadata fetch in flight.
///
/// Boxed to give the anonymous `async fn` future a nameable type, which is
/// what lets [`PendingFetches`] offer
/// [`start_due_fetches`](PendingFetches::start_due_fetches) as a plain method.
/// The allocation cost is negligible: a fetch starts at most once per refresh
/// interval, server event or refresh request.
type FullFetch<'cc> =
    Pin<Box<dyn Future<Output = Result<TopologyUpdateGuard, MetadataError>> + Send + 'cc>>;

/// A partial topology fetch (the peer list alone) in flight; boxed for the same
/// reason as [`FullFetch`].
type TopologyFetch<'cc> = Pin<
    Box<dyn Future<Output = Result<TopologyUpdateGuard<Vec<Peer>>, MetadataError>> + Send + 'cc>,
>;

/// A partial client-routes fetch in flight; boxed for the same reason as
/// [`FullFetch`].
type ClientRoutesFetch<'cc> =
    Pin<Box<dyn Future<Output = Result<Option<ClientRoutesUpdate>, MetadataError>> + Send + 'cc>>;

/// A partial schema fetch (the affected keyspaces alone) in flight; boxed for
/// the same reason as [`FullFetch`].
type SchemaFetch<'cc> =
    Pin<Box<dyn Future<Output = Result<Option<SchemaUpdate>, MetadataError>> + Send + 'cc>>;

/// The fetches of [`MetadataWorker::work_on_cc`] currently in flight, owning
/// their futures - which borrow the control connection, hence the lifetime.
///
/// The shape makes the scheduling rules structural:
/// - a full fetch never has anything running beside it (it subsumes and
///   preempts all partial work), and
/// - per partial fetch type, at most one fetch runs at a time - one slot per
///   type, which is also how partial fetches of different types get to run
///   concurrently.
///
/// [`start_due_fetches`](Self::start_due_fetches) starts the fetches that the
/// [`FetchPlan`] owes. As a [`Future`], `PendingFetches` resolves to the
/// [`FetchOutcome`] of an in-flight fetch once it completes, dropping that
/// fetch's future - so a completed fetch is never polled again. With every slot
/// empty (see [`empty`](Self::empty)) polling pends forever *without registering
/// a waker*: a value with nothing in flight never wakes the worker.
///
/// Cancel-safe: the futures live in this value, not in the `select!` branch
/// polling it, so losing the `select!` race leaves the in-flight fetches intact.
enum PendingFetches<'cc> {
    /// A full metadata fetch is in flight.
    Full { fetch: FullFetch<'cc> },
    /// Partial fetches, at most one per partial fetch type. Any slot may be
    /// empty; with all of them empty (see [`empty`](Self::empty)) nothing is in
    /// flight at all.
    Partial {
        client_routes_fetch: Option<ClientRoutesFetch<'cc>>,
        topology_fetch: Option<TopologyFetch<'cc>>,
        schema_fetch: Option<SchemaFetch<'cc>>,
    },
}

impl<'cc> PendingFetches<'cc> {
    /// The starter step of [`MetadataWorker::work_on_cc`]: starts every fetch
    /// that is due per `plan` (or per the periodic refresh schedule) and not
    /// blocked, so that the worker never awaits while startable work is owed.
    fn start_due_fetches(
        &mut self,
        plan: &mut FetchPlan,
        next_refresh_deadline: &mut Instant,
        refresh_interval: Duration,
        periodic_fetch_mode: &PeriodicFetchMode,
        cc: &'cc ControlConnection,
    ) {
        let periodic_tick_due = Instant::now() >= *next_refresh_deadline;

        // A full fetch is due when a refresh request demanded one or a partial
        // fetch failed. The periodic tick implies one only for a session that
        // opted out of partial schema fetching; otherwise everything the tick
        // used to re-read is by now re-read in reaction to server events.
        let periodic_full_fetch_due =
            periodic_tick_due && matches!(periodic_fetch_mode, PeriodicFetchMode::FullMetadata);
        if !matches!(self, PendingFetches::Full { .. })
            && (matches!(plan, FetchPlan::Full) || periodic_full_fetch_due)
        {
            // Starting the full fetch drops both the partial work owed by the
            // plan and any running partial fetch: the full fetch reads all of
            // that data, and reads it after the events that made the partial
            // work due, so both are subsumed.
            *plan = FetchPlan::empty();
            // It reads every keyspace, too, so the schema tick restarts.
            *next_refresh_deadline = deadline_after(Instant::now(), refresh_interval);

            debug!("Requesting metadata refresh");
            *self = PendingFetches::Full {
                fetch: Box::pin(cc.query_metadata()),
            };
            return;
        }

        // The tick advances whether or not schema work is owed.
        // We could only restart it on schema fetch. The advantage is that
        // we would react quicker (immediately) to a lone change. The disadvantage
        // is that if there is a lot of connected clients, they would all send the request to
        // the server at the same moment. The main reason to have partial fetches is to
        // make load on the server lighter in such scenario, so the disadvantage is more
        // important.
        if periodic_tick_due {
            *next_refresh_deadline = deadline_after(Instant::now(), refresh_interval);
        }

        // Each partial fetch starts only if its own slot is free; work for a
        // busy slot waits in the plan. Nothing partial starts while a full
        // fetch is in flight (or is owed but could not be started above): the
        // full fetch reads all of that data, while partial work owed meanwhile
        // stays in the plan, because its triggering event may postdate what the
        // full fetch read.
        if let PendingFetches::Partial {
            client_routes_fetch,
            topology_fetch,
            schema_fetch,
        } = self
            && let FetchPlan::Partial {
                client_routes,
                topology,
                schema,
            } = plan
        {
            if client_routes_fetch.is_none()
                && let Some(request) = client_routes.take()
            {
                debug!("Requesting a partial client-routes fetch");
                *client_routes_fetch = Some(Box::pin(request.fetch_on(cc)));
            }

            if topology_fetch.is_none() && std::mem::take(topology) {
                debug!("Requesting a partial topology fetch");
                *topology_fetch = Some(Box::pin(cc.query_topology()));
            }

            // Deliberately gated on the tick: unlike the other partial work,
            // schema work is batched rather than started right away. A single
            // DDL statement produces a SCHEMA_CHANGE per affected object, and
            // fetching a keyspace once per event would be pure waste.
            if schema_fetch.is_none()
                && periodic_tick_due
                && let Some(request) = schema.take()
            {
                debug!("Requesting a partial schema fetch");
                *schema_fetch = Some(Box::pin(request.fetch_on(cc)));
            }
        }
    }

    /// Nothing in flight: the state a fetch's completion leaves behind when no
    /// other one is running.
    const fn empty() -> Self {
        Self::Partial {
            client_routes_fetch: None,
            topology_fetch: None,
            schema_fetch: None,
        }
    }
}

/// What [`PendingFetches`] resolves to: the output of whichever in-flight
/// fetch completed, tagged with its fetch type.
enum FetchOutcome {
    Full(Result<TopologyUpdateGuard, MetadataError>),
    Topology(Result<TopologyUpdateGuard<Vec<Peer>>, MetadataError>),
    ClientRoutes(Result<Option<ClientRoutesUpdate>, MetadataError>),
    Schema(Result<Option<SchemaUpdate>, MetadataError>),
}

/// Polls one partial fetch slot, emptying it if the fetch completed.
///
/// Generic over the future type so that both slots of
/// [`PendingFetches::Partial`] can use it; both are heap-pinned, hence `Unpin`.
fn poll_slot<F: Future + Unpin>(slot: &mut Option<F>, cx: &mut Context<'_>) -> Option<F::Output> {
    let fetch = slot.as_mut()?;
    match Pin::new(fetch).poll(cx) {
        Poll::Ready(output) => {
            slot.take();
            Some(output)
        }
        Poll::Pending => None,
    }
}

impl Future for PendingFetches<'_> {
    type Output = FetchOutcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `PendingFetches` is `Unpin` (the fetch futures are heap-pinned), so
        // it can be worked on through a plain `&mut`.
        let this = self.get_mut();
        match this {
            PendingFetches::Full { fetch } => {
                if let Poll::Ready(result) = fetch.as_mut().poll(cx) {
                    *this = PendingFetches::empty();
                    return Poll::Ready(FetchOutcome::Full(result));
                }
            }
            PendingFetches::Partial {
                client_routes_fetch,
                topology_fetch,
                schema_fetch,
            } => {
                // Only one outcome can be reported per poll, so the slots are
                // polled until one completes; the rest stay in flight and are
                // polled again right away, because `work_on_cc` re-polls this
                // value on the loop iteration that each outcome triggers.
                if let Some(outcome) =
                    poll_slot(client_routes_fetch, cx).map(FetchOutcome::ClientRoutes)
                {
                    return Poll::Ready(outcome);
                }

                if let Some(outcome) = poll_slot(topology_fetch, cx).map(FetchOutcome::Topology) {
                    return Poll::Ready(outcome);
                }

                if let Some(outcome) = poll_slot(schema_fetch, cx).map(FetchOutcome::Schema) {
                    return Poll::Ready(outcome);
                }
            }
        };

        Poll::Pending
    }
}

impl MetadataWorker {
    pub(in super::super) fn new(
        cc_establisher: ControlConnectionEstablisher,
        cluster_metadata_refresh_interval: Duration,
        periodic_fetch_mode: PeriodicFetchMode,
        refresh_channel: tokio::sync::mpsc::Receiver<RefreshRequest>,
        updates: merge_channel::Sender<MetadataUpdate>,
    ) -> Self {
        Self {
            cc_establisher,
            cluster_metadata_refresh_interval,
            periodic_fetch_mode,
            refresh_channel,
            updates,
            pending_request: None,
        }
    }

    /// Establishes a control connection, fetching metadata in the process -
    /// see [`ControlConnectionEstablisher::establish_cc_and_fetch_metadata`], to which this
    /// delegates the candidate iteration. Each candidate is fetched on (and
    /// its events drained) by [`fetch_on_candidate`](Self::fetch_on_candidate).
    pub(in super::super) async fn establish(
        &mut self,
        initial: bool,
    ) -> Result<(Option<EstablishedCc>, Metadata), MetadataError> {
        let mut fetcher = CandidateFetcher {
            updates: &mut self.updates,
        };
        // Boxed AND `dyn`-erased for the same reason as the `query_metadata`
        // future in [`fetch_on_candidate`](Self::fetch_on_candidate): this
        // severs the whole establishment machinery (candidate iteration,
        // connection opening, handshake) from the future type of
        // `Session::connect`, which downstream crates compute the layout of.
        // One allocation per establishment attempt.
        let fetch: Pin<Box<dyn Future<Output = _> + Send>> = Box::pin(
            self.cc_establisher
                .establish_cc_and_fetch_metadata(initial, &mut fetcher),
        );
        let (kept, metadata) = fetch.await?;
        Ok((
            kept.map(|(cc, events, mut plan)| {
                Self::handle_metadata_keyspace_errors(&mut plan, &metadata);
                EstablishedCc { cc, events, plan }
            }),
            metadata,
        ))
    }

    /// Function that fetches `Metadata` on a new potential CC,
    /// while concurrently draining events and preparing initial `FetchPlan`.
    ///
    /// # Establishment never blocks either
    ///
    /// The rule of [`work_on_cc`](Self::work_on_cc) applies here too: the
    /// connection's reader task delivers server events through a bounded
    /// channel and blocks once it fills, no longer processing query responses
    /// either - and events flow from the moment the connection is opened (it
    /// REGISTERs during setup). Awaiting `query_metadata` without draining
    /// events would thus let a burst of events deadlock the establishment.
    /// Hence the fetch is awaited only in `select!`, with event draining as
    /// the other branch.
    async fn fetch_on_candidate(
        updates: &mut merge_channel::Sender<MetadataUpdate>,
        cc: &ControlConnection,
        cc_events: &mut ControlConnectionEvents,
    ) -> Result<(TopologyUpdateGuard, FetchPlan), MetadataError> {
        let mut plan = FetchPlan::empty();
        // Boxed AND `dyn`-erased (rather than `pin!`ed) to cut the future-type
        // nesting here: `query_metadata`'s future tree is ~75 levels deep, and
        // exposing it in this future's type - which every caller of
        // `Session::connect` awaits through - used to blow past rustc's
        // default 128 `recursion_limit` when computing layouts in downstream
        // crates (including doctests, which cannot raise the limit). Note that
        // the coercion to `dyn Future` is what actually cuts the layout
        // recursion; a `Pin<Box<ConcreteFuture>>` is still recursed into. The
        // cost is one allocation per establishment attempt, as negligible as
        // in [`PendingFetches`].
        let mut fetch: FullFetch<'_> = Box::pin(cc.query_metadata());
        loop {
            tokio::select! {
                fetch_result = &mut fetch => {
                    return fetch_result.map(|topology_update| (topology_update, plan));
                }

                cc_event = cc_events.wait_for_event() => match cc_event {
                    ControlConnectionEvent::ServerEvent(event) => {
                        // `Break` (the cluster worker is gone) is deliberately
                        // ignored.
                        // Returning Err will cause ControlConnectionEstablisher to move to the next
                        // node in the plan, which is pointless on shutdown. It will only
                        // cause unnecessary connections, and weird errors, potentially
                        // even returning dummy metadata on initial fetch.
                        // If ClusterWorker is shutting down (which is the only case this
                        // could happen), then we will shutdown soon too, so ignoring is not a problem.
                        let _ = Self::handle_server_event(updates, event, &mut plan);
                    }
                    ControlConnectionEvent::Broken(err) => {
                        return Err(MetadataError::ConnectionPoolError(
                            ConnectionPoolError::Broken {
                                last_connection_error: err,
                            },
                        ));
                    }
                    ControlConnectionEvent::Shutdown => {
                        // The runtime is shutting down; the connection's router
                        // is gone without a farewell. Fail the candidate with
                        // the closest error the vocabulary offers.
                        return Err(MetadataError::ConnectionPoolError(
                            ConnectionPoolError::Broken {
                                last_connection_error: ConnectionError::BrokenConnection(
                                    BrokenConnectionErrorKind::ChannelError.into(),
                                ),
                            },
                        ));
                    }
                },
            }
        }
    }

    /// Runs the worker until the cluster (or the runtime) is gone.
    ///
    /// `initial_cc` is the control connection that the initial metadata was fetched
    /// on; `None` means none could be kept, in which case one is established first.
    pub(in super::super) async fn work(mut self, initial_cc: Option<EstablishedCc>) {
        let mut next_cc = initial_cc;

        loop {
            let established = match next_cc.take() {
                Some(established) => established,
                None => match self.work_without_cc().await {
                    ControlFlow::Break(()) => return,
                    ControlFlow::Continue(established) => established,
                },
            };

            match self.work_on_cc(established).await {
                ControlFlow::Break(()) => return,
                // The control connection is defunct - establish a new one.
                ControlFlow::Continue(()) => (),
            }
        }
    }

    /// Attempts to establish a control connection until one is available.
    ///
    /// The first attempt is made immediately; further ones are spaced by
    /// [`CONTROL_CONNECTION_REPAIR_INTERVAL`], with an incoming refresh request
    /// triggering an attempt right away.
    ///
    /// Each attempt fetches metadata, too, so a successful one both satisfies the
    /// pending refresh request (through the cluster worker) and publishes an update.
    ///
    /// Returns [`ControlFlow::Break`] if the worker should stop.
    async fn work_without_cc(&mut self) -> ControlFlow<(), EstablishedCc> {
        loop {
            debug!("Attempting to establish a new control connection");
            let attempt_time = Instant::now();

            match self.establish(false).await {
                Ok((kept, metadata)) => {
                    self.publish_metadata(metadata)?;

                    if let Some(established) = kept {
                        return ControlFlow::Continue(established);
                    }
                    // Metadata was fetched, but no control connection could be kept
                    // (e.g. every reachable node is rejected by the host filter).
                    // Keep trying at the repair cadence.
                }
                Err(err) => {
                    debug!(
                        error = %err,
                        "Failed to establish a control connection and fetch metadata"
                    );
                    // Nobody else can act on a failed fetch, so the error only goes to the
                    // requester, if there is one.
                    if let Some(request) = self.pending_request.take() {
                        // We can ignore sending error - if no one waits for the response we can drop it
                        let _ = request.response_chan.send(Err(err));
                    }
                }
            }

            // Wait until it's time for the next attempt, unless a refresh request
            // makes us attempt earlier.
            let sleep_until = deadline_after(attempt_time, CONTROL_CONNECTION_REPAIR_INTERVAL);

            tokio::select! {
                _sleep_finished = tokio::time::sleep_until(sleep_until) => (),

                maybe_refresh_request = self.refresh_channel.recv() => {
                    match maybe_refresh_request {
                        Some(request) => self.set_pending_request(request),
                        None => return ControlFlow::Break(()), // If refresh_channel was closed then cluster was dropped, we can stop working
                    }
                }
            }
        }
    }

    /// Serves the given control connection: refreshes metadata on it (periodically,
    /// on request and in reaction to server events) and drains its events.
    ///
    /// # This loop never blocks
    ///
    /// The connection's reader task delivers server events through a bounded
    /// channel and blocks when the channel is full; blocked, it does not process
    /// query responses either. If this loop awaited a fetch directly, a burst of
    /// events could thus deadlock it: the fetch would wait for the reader task,
    /// which waits for this loop to drain events, which waits for the fetch.
    ///
    /// Hence the rule: this loop awaits only in `select!`, with event draining as
    /// one of the branches, and everything outside the `select!` is synchronous.
    /// Fetches run as futures owned by a [`PendingFetches`] value, polled by the
    /// `select!` alongside the other branches. Fetch work that cannot start yet
    /// is recorded in a [`FetchPlan`]. On every iteration, before awaiting,
    /// [`PendingFetches::start_due_fetches`] converts due plan entries into
    /// pending fetches, under these rules:
    ///
    /// - At most one fetch per type runs at a time; work for a busy type waits
    ///   in the plan.
    /// - Schema work waits for the periodic refresh tick instead of starting at
    ///   once, which batches the SCHEMA_CHANGE events of a burst into one fetch.
    /// - A due full fetch preempts everything: it abandons the running partial
    ///   fetches and drops the plan's partial work. Both are subsumed - the full
    ///   fetch reads all of that data, and reads it after the events that made
    ///   the partial work due. Conversely, partial work that becomes due *while*
    ///   a full fetch runs stays in the plan: the fetch may have read the
    ///   corresponding tables before the triggering event arrived.
    ///
    /// The plan starts seeded from the [`EstablishedCc`]: events that arrived
    /// while the establishment fetch was in flight may postdate its data, so
    /// the fetch work they imply is still owed.
    ///
    /// Returns [`ControlFlow::Continue`] once the control connection is deemed
    /// defunct and should be replaced, or [`ControlFlow::Break`] if the worker
    /// should stop.
    async fn work_on_cc(&mut self, established: EstablishedCc) -> ControlFlow<()> {
        let EstablishedCc {
            cc,
            events: mut cc_events,
            mut plan,
        } = established;
        let mut next_refresh_deadline =
            deadline_after(Instant::now(), self.cluster_metadata_refresh_interval);

        // The in-flight fetches. Their futures borrow `cc` and nothing else,
        // so the loop stays free to use `self` (in particular
        // `self.cc_establisher`) while fetches are in flight.
        let mut pending_fetches = PendingFetches::empty();

        loop {
            pending_fetches.start_due_fetches(
                &mut plan,
                &mut next_refresh_deadline,
                self.cluster_metadata_refresh_interval,
                &self.periodic_fetch_mode,
                &cc,
            );

            // Computed before `select!` for the branch guards, which cannot
            // borrow `pending_fetches`: the fetch branch polls it mutably.
            let full_fetch_in_flight = matches!(pending_fetches, PendingFetches::Full { .. });

            tokio::select! {
                fetch_outcome = &mut pending_fetches => {
                    match fetch_outcome {
                        FetchOutcome::Full(Ok(topology_update)) => {
                            debug!("Fetched new metadata");
                            let metadata = topology_update.apply(&mut self.cc_establisher);
                            Self::handle_metadata_keyspace_errors(&mut plan, &metadata);
                            self.publish_metadata(metadata)?;
                        }
                        FetchOutcome::Full(Err(err)) => {
                            debug!(
                                error = %err,
                                "Failed to fetch metadata on the current control connection. \
                                Will try to establish a new one."
                            );
                            // The control connection is considered defunct - drop it. The pending
                            // request, if any, is retried (and answered) while establishing a new one.
                            return ControlFlow::Continue(());
                        }
                        FetchOutcome::Topology(Ok(topology_update)) => {
                            debug!("Fetched new topology");
                            let peers = topology_update.apply(&mut self.cc_establisher);
                            if self.send_update(|slot| MetadataUpdate::merge_topology_update(slot, peers)).is_err() {
                                return ControlFlow::Break(());
                            }
                        }
                        FetchOutcome::Topology(Err(err)) => {
                            error!(
                                "Error when fetching topology: {err}. \
                                Scheduling a metadata refresh, because the control connection is likely defunct."
                            );
                            plan.note_full_needed();
                        }
                        FetchOutcome::ClientRoutes(Ok(None)) => (), // Nothing to apply.
                        FetchOutcome::ClientRoutes(Ok(Some(routes))) => {
                            if self.send_update(|slot| MetadataUpdate::merge_client_routes_update(slot, routes)).is_err() {
                                return ControlFlow::Break(());
                            }
                        }
                        FetchOutcome::ClientRoutes(Err(err)) => {
                            error!(
                                "Error when fetching client route updates: {err}. \
                                Scheduling a metadata refresh, because the control connection is likely defunct."
                            );
                            plan.note_full_needed();
                        }
                        FetchOutcome::Schema(Ok(None)) => (), // Nothing to apply.
                        FetchOutcome::Schema(Ok(Some(schema))) => {
                            debug!("Fetched the schema of the affected keyspaces");
                            Self::handle_partial_fetch_keyspace_errors(&mut plan, &schema);
                            if self.send_update(|slot| MetadataUpdate::merge_schema_update(slot, schema)).is_err() {
                                return ControlFlow::Break(());
                            }
                        }
                        FetchOutcome::Schema(Err(err)) => {
                            error!(
                                "Error when fetching schema: {err}. \
                                Scheduling a metadata refresh, because the control connection is likely defunct."
                            );
                            plan.note_full_needed();
                        }
                    }
                }

                // While a full fetch is in flight, refresh requests wait in the
                // channel (`Cluster::refresh_metadata` awaits the bounded send).
                // Accepting one now would break the promise behind
                // `pending_request`: the running fetch was started before the
                // request, so its data may predate it. With this guard, a
                // request is only received when the starter step can begin a
                // full fetch for it right away.
                maybe_refresh_request = self.refresh_channel.recv(), if !full_fetch_in_flight => {
                    match maybe_refresh_request {
                        Some(request) => {
                            self.set_pending_request(request);
                            plan.note_full_needed();
                        }
                        None => return ControlFlow::Break(()), // If refresh_channel was closed then cluster was dropped, we can stop working
                    }
                }

                control_connection_event = cc_events.wait_for_event() => {
                    match control_connection_event {
                        ControlConnectionEvent::Shutdown => {
                            // The runtime is shutting down. We can stop working.
                            //
                            // Known issue (predating this worker): if a refresh
                            // request is pending, dropping it here makes the
                            // requester's `Cluster::refresh_metadata` panic on the
                            // response channel. During runtime shutdown the
                            // requester task is being torn down anyway.
                            debug!("Got shutdown control connection event. Shutting down MetadataWorker.");
                            return ControlFlow::Break(());
                        },
                        ControlConnectionEvent::Broken(_err) => {
                            // The control connection was broken. Have a new one established;
                            // the first attempt will be immediate, and if it does not succeed,
                            // subsequent attempts will be issued every second.
                            //
                            // The in-flight fetches, if any, are abandoned: establishing
                            // a new control connection fetches full metadata, which
                            // subsumes them.
                            return ControlFlow::Continue(());
                        },
                        ControlConnectionEvent::ServerEvent(event) => {
                            Self::handle_server_event(&mut self.updates, event, &mut plan)?;
                        }
                    }
                }

                // While a full fetch is in flight the deadline is irrelevant:
                // it is reset when the next fetch starts. Once no full fetch
                // runs, a passed deadline completes this branch immediately and
                // the starter step begins the periodic fetch.
                _deadline_passed = tokio::time::sleep_until(next_refresh_deadline), if !full_fetch_in_flight => {
                    // Nothing to do here: the starter step notices the passed
                    // deadline.
                }
            }
        }
    }

    /// Handles a single server event synchronously (status hints are published
    /// right away) and updates the fetch plan accordingly.
    ///
    /// An associated function taking just the updates sender, so that event
    /// handling does not require exclusive access to the whole worker.
    ///
    /// Returns [`ControlFlow::Break`] if the worker should stop (the cluster
    /// worker is gone).
    fn handle_server_event(
        updates: &mut merge_channel::Sender<MetadataUpdate>,
        event: Event,
        plan: &mut FetchPlan,
    ) -> ControlFlow<()> {
        debug!("Received server event: {:?}", event);
        #[deny(clippy::wildcard_enum_match_arm)]
        match event {
            // A SCHEMA_CHANGE names the keyspace it concerns, so only that
            // keyspace's schema needs re-reading - and if the keyspace itself
            // was dropped, not even that: it simply leaves the metadata.
            //
            // The work is recorded rather than started right away; see the
            // schema rule in the docs of [`work_on_cc`](Self::work_on_cc).
            Event::SchemaChange(change) => {
                let (keyspace_name, last_change) = match change {
                    // Only dropping the keyspace itself makes it disappear.
                    // Dropping an object inside it leaves the keyspace in
                    // place, so its metadata must be re-read.
                    SchemaChangeEvent::KeyspaceChange {
                        change_type: SchemaChangeType::Dropped,
                        keyspace_name,
                    } => (keyspace_name, LastKeyspaceChange::Dropped),
                    SchemaChangeEvent::KeyspaceChange { keyspace_name, .. }
                    | SchemaChangeEvent::TableChange { keyspace_name, .. }
                    | SchemaChangeEvent::TypeChange { keyspace_name, .. }
                    | SchemaChangeEvent::FunctionChange { keyspace_name, .. }
                    | SchemaChangeEvent::AggregateChange { keyspace_name, .. } => {
                        (keyspace_name, LastKeyspaceChange::Altered)
                    }
                };
                plan.note_schema(keyspace_name, last_change);
            }
            // A node was added, removed or moved - only the peer list can have
            // changed, so a partial topology fetch suffices.
            Event::TopologyChange(_) => plan.note_topology(),
            Event::ClientRoutesChange(evt) => {
                // An UPDATE_NODES event pairs `connection_ids[i]` with
                // `host_ids[i]`.
                #[deny(clippy::wildcard_enum_match_arm)]
                let pairs = match evt {
                    ClientRoutesChangeEvent::UpdateNodes {
                        connection_ids,
                        host_ids,
                    } => connection_ids.into_iter().zip(host_ids).collect(),
                    _ => unreachable!("clippy testifies that the match is exhaustive"),
                };
                plan.note_client_routes(ClientRoutesFetchRequest { pairs })
            }
            Event::StatusChange(status) => {
                // Tracking node status using events is unreliable because of the possibility of losing events
                // when control connection is broken. A better thing to do here is to treat those events as hints
                // for:
                // - PoolRefiller - UP triggers immediate pool refill attempt, and
                // - Keepaliver - DOWN triggers immediate keepalive query attempt.
                //
                // Besides the hint, a status change also schedules a topology
                // re-read - see below the `match`.

                match status {
                    StatusChangeEvent::Up(addr) => {
                        // When receiving an UP event, it is likely that the node just came back up and is now reachable.
                        // We optimistically trigger pool refill for this node.
                        // This is not guaranteed to be correct. It is for example possible that a network partition happened,
                        // the node lost connectivity to the cluster and driver; then it regained connectivity to the cluster,
                        // but not to the driver, and thus is still unreachable from the driver's perspective.
                        // However, in this case triggering pool refill is not harmful - if the node is actually reachable,
                        // then new connections will be opened to it, and if it is not reachable,
                        // then connection attempts will fail and the node will be marked as unreachable by `PoolRefiller`,
                        // so it won't be targeted by the load balancing policy.
                        if Self::send_update_on(updates, |slot| {
                            MetadataUpdate::merge_up_hint(slot, addr)
                        })
                        .is_err()
                        {
                            return ControlFlow::Break(());
                        }
                    }
                    StatusChangeEvent::Down(addr) => {
                        // When receiving a DOWN event, and the driver still sees the node as connected,
                        // we send a keepalive query on its connections to verify their liveness.
                        // The node is supposedly DOWN, so connections to this node are likely defunct.
                        // We expect that the keepalive query fails, in which case connections will be closed.
                        // As a result, the connection pool will report 0 connections to this node,
                        // and thus the node will not be targeted by the LoadBalancingPolicy,
                        // which is the desired behaviour. However, if the keepalive query succeeds,
                        // then the node is likely still alive (got stale event?), and we keep targeting it.
                        if Self::send_update_on(updates, |slot| {
                            MetadataUpdate::merge_down_hint(slot, addr)
                        })
                        .is_err()
                        {
                            return ControlFlow::Break(());
                        }
                    }
                }

                // A node's `rpc_address` can change while the node itself is
                // neither added nor removed (e.g. it is restarted with a new
                // address), and no TOPOLOGY_CHANGE announces that - the only
                // events it produces are this DOWN/UP pair.
                plan.note_topology();
            }
            _ => unreachable!("clippy testifies that the match is exhaustive"),
        };
        ControlFlow::Continue(())
    }

    fn handle_metadata_keyspace_errors(plan: &mut FetchPlan, metadata: &Metadata) {
        for (name, ks) in metadata.keyspaces.iter() {
            if let Err(_e) = ks {
                // We failed to fetch some keyspace.
                // Need to note as needed to fetch.
                // Without it we may never retry.
                plan.note_keyspace_err(name.clone());
            }
        }
    }

    fn handle_partial_fetch_keyspace_errors(plan: &mut FetchPlan, schema: &SchemaUpdate) {
        for (name, ks) in schema.keyspaces.iter() {
            if let FetchedKeyspace::Present(Err(_e)) = ks {
                // We failed to fetch some keyspace.
                // Need to note as needed to fetch.
                // Without it we may never retry.
                plan.note_keyspace_err(name.clone());
            }
        }
    }

    /// Publishes freshly fetched metadata to the cluster worker.
    ///
    /// The pending refresh request, if any, is attached: it is answered by the
    /// cluster worker once the state resulting from this metadata is published -
    /// this is what makes `Cluster::refresh_metadata` return only after the new
    /// state is visible.
    ///
    /// Returns [`ControlFlow::Break`] if the worker should stop (the cluster
    /// worker is gone).
    fn publish_metadata(&mut self, metadata: Metadata) -> ControlFlow<()> {
        let response_chan = self
            .pending_request
            .take()
            .map(|request| request.response_chan);
        match self.send_update(|slot| MetadataUpdate::merge_metadata(slot, metadata, response_chan))
        {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    }

    /// Stores a freshly received refresh request as the pending one.
    ///
    /// Upholds the `pending_request` invariant: both loops take the pending request
    /// before awaiting the next one, so there can never be one already stored.
    fn set_pending_request(&mut self, request: RefreshRequest) {
        debug_assert!(self.pending_request.is_none());
        self.pending_request = Some(request);
    }

    /// Merges an update into the pending one, to be picked up by the cluster worker.
    ///
    /// An error means that the cluster worker is gone, in which case this worker
    /// has nothing left to work for and should end.
    fn send_update(
        &mut self,
        f: impl FnOnce(&mut Option<MetadataUpdate>),
    ) -> Result<(), merge_channel::SendError> {
        Self::send_update_on(&mut self.updates, f)
    }

    /// [`send_update`](Self::send_update) for callers that hold the updates
    /// sender rather than the whole worker.
    fn send_update_on(
        updates: &mut merge_channel::Sender<MetadataUpdate>,
        f: impl FnOnce(&mut Option<MetadataUpdate>),
    ) -> Result<(), merge_channel::SendError> {
        updates.modify(f).inspect_err(|_| {
            debug!("The cluster worker is gone. Shutting down MetadataWorker.");
        })
    }
}

/// `start + interval`, saturating to "now" on overflow (as good as any instant
/// that far in the future).
fn deadline_after(start: Instant, interval: Duration) -> Instant {
    start.checked_add(interval).unwrap_or_else(Instant::now)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::future::pending;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use crate::cluster::metadata::Metadata;

    use super::{
        ClientRoutesFetchRequest, FetchOutcome, FetchPlan, LastKeyspaceChange, PendingFetches,
        SchemaFetchRequest, TopologyUpdateGuard,
    };

    fn poll_once(pending_fetches: &mut PendingFetches<'_>) -> Poll<FetchOutcome> {
        Pin::new(pending_fetches).poll(&mut Context::from_waker(Waker::noop()))
    }

    fn dummy_topology_update() -> TopologyUpdateGuard {
        TopologyUpdateGuard::new(Metadata::new_dummy(&[]))
    }

    fn client_routes_request() -> ClientRoutesFetchRequest {
        ClientRoutesFetchRequest {
            pairs: HashSet::new(),
        }
    }

    /// Asserts that no fetch is in flight, i.e. every partial slot is empty.
    fn assert_nothing_in_flight(pending_fetches: &PendingFetches<'_>) {
        assert!(matches!(
            pending_fetches,
            PendingFetches::Partial {
                client_routes_fetch: None,
                topology_fetch: None,
                schema_fetch: None,
            }
        ));
    }

    /// With nothing in flight, `PendingFetches` must pend (and not panic or
    /// spin): `work_on_cc` polls it in its `select!` unconditionally.
    #[test]
    fn nothing_in_flight_pends() {
        let mut pending_fetches = PendingFetches::empty();

        assert!(poll_once(&mut pending_fetches).is_pending());
    }

    /// A completed fetch yields its output, tagged with the fetch type, and
    /// leaves nothing in flight behind, so that the next starter step can start
    /// another fetch (and the completed future is never polled again).
    #[test]
    fn completed_fetch_resolves_and_empties() {
        let mut pending_fetches = PendingFetches::Full {
            fetch: Box::pin(async { Ok(dummy_topology_update()) }),
        };
        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Full(Ok(_)))
        ));
        assert_nothing_in_flight(&pending_fetches);
        assert!(poll_once(&mut pending_fetches).is_pending());

        let mut pending_fetches = PendingFetches::Partial {
            client_routes_fetch: Some(Box::pin(async { Ok(None) })),
            topology_fetch: None,
            schema_fetch: None,
        };
        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::ClientRoutes(Ok(None)))
        ));
        assert_nothing_in_flight(&pending_fetches);

        let mut pending_fetches = PendingFetches::Partial {
            client_routes_fetch: None,
            topology_fetch: Some(Box::pin(async { Ok(TopologyUpdateGuard::new(Vec::new())) })),
            schema_fetch: None,
        };
        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Topology(Ok(_)))
        ));
        assert_nothing_in_flight(&pending_fetches);

        let mut pending_fetches = PendingFetches::Partial {
            client_routes_fetch: None,
            topology_fetch: None,
            schema_fetch: Some(Box::pin(async { Ok(None) })),
        };
        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Schema(Ok(None)))
        ));
        assert_nothing_in_flight(&pending_fetches);
    }

    /// Partial fetches of different types run concurrently: reporting the
    /// outcome of one must leave the others in flight, to be reported by later
    /// polls.
    #[test]
    fn completed_partial_fetch_keeps_the_others_in_flight() {
        let mut pending_fetches = PendingFetches::Partial {
            client_routes_fetch: Some(Box::pin(async { Ok(None) })),
            topology_fetch: Some(Box::pin(async { Ok(TopologyUpdateGuard::new(Vec::new())) })),
            schema_fetch: Some(Box::pin(async { Ok(None) })),
        };

        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::ClientRoutes(Ok(None)))
        ));
        assert!(matches!(
            pending_fetches,
            PendingFetches::Partial {
                client_routes_fetch: None,
                topology_fetch: Some(_),
                schema_fetch: Some(_),
            }
        ));

        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Topology(Ok(_)))
        ));
        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Schema(Ok(None)))
        ));
        assert_nothing_in_flight(&pending_fetches);
    }

    /// A partial fetch that is still in flight must not block reporting the
    /// outcome of one that completed.
    #[test]
    fn pending_partial_fetch_does_not_hide_a_completed_one() {
        let mut pending_fetches = PendingFetches::Partial {
            client_routes_fetch: Some(Box::pin(pending())),
            topology_fetch: Some(Box::pin(async { Ok(TopologyUpdateGuard::new(Vec::new())) })),
            schema_fetch: None,
        };

        assert!(matches!(
            poll_once(&mut pending_fetches),
            Poll::Ready(FetchOutcome::Topology(Ok(_)))
        ));
        assert!(matches!(
            pending_fetches,
            PendingFetches::Partial {
                client_routes_fetch: Some(_),
                topology_fetch: None,
                schema_fetch: None,
            }
        ));
        assert!(poll_once(&mut pending_fetches).is_pending());
    }

    /// Losing a `select!` race (the polling borrow being dropped) must leave
    /// the in-flight fetch intact.
    #[test]
    fn unfinished_fetch_stays_in_flight() {
        let mut pending_fetches = PendingFetches::Full {
            fetch: Box::pin(pending()),
        };

        assert!(poll_once(&mut pending_fetches).is_pending());
        assert!(matches!(pending_fetches, PendingFetches::Full { .. }));
    }

    /// Partial work of different types accumulates side by side: no type may
    /// drop the work owed for another.
    #[test]
    fn partial_work_of_different_types_coexists() {
        let mut plan = FetchPlan::empty();
        plan.note_client_routes(client_routes_request());
        plan.note_topology();
        plan.note_schema("ks".to_owned(), LastKeyspaceChange::Altered);
        assert!(matches!(
            plan,
            FetchPlan::Partial {
                client_routes: Some(_),
                topology: true,
                schema: Some(_),
            }
        ));

        let mut plan = FetchPlan::empty();
        plan.note_schema("ks".to_owned(), LastKeyspaceChange::Altered);
        plan.note_topology();
        plan.note_client_routes(client_routes_request());
        assert!(matches!(
            plan,
            FetchPlan::Partial {
                client_routes: Some(_),
                topology: true,
                schema: Some(_),
            }
        ));
    }

    /// Only the last event per keyspace matters: the fetch re-reads the whole
    /// keyspace anyway, and a keyspace whose last event dropped it must not be
    /// fetched - nor may an earlier drop keep a re-created keyspace from being
    /// fetched.
    #[test]
    fn schema_work_keeps_only_the_last_change_per_keyspace() {
        let mut plan = FetchPlan::empty();
        plan.note_schema("dropped".to_owned(), LastKeyspaceChange::Altered);
        plan.note_schema("dropped".to_owned(), LastKeyspaceChange::Dropped);
        plan.note_schema("recreated".to_owned(), LastKeyspaceChange::Dropped);
        plan.note_schema("recreated".to_owned(), LastKeyspaceChange::Altered);

        let FetchPlan::Partial {
            schema: Some(SchemaFetchRequest { keyspaces }),
            ..
        } = plan
        else {
            panic!("the noted schema work went missing");
        };
        assert_eq!(keyspaces.len(), 2);
        assert!(matches!(
            keyspaces.get("dropped"),
            Some(LastKeyspaceChange::Dropped)
        ));
        assert!(matches!(
            keyspaces.get("recreated"),
            Some(LastKeyspaceChange::Altered)
        ));
    }

    /// A due full fetch subsumes all partial work, and partial work noted while
    /// it is owed is subsumed too - it would be dropped by the starter step
    /// anyway.
    #[test]
    fn full_fetch_subsumes_partial_work() {
        let mut plan = FetchPlan::empty();
        plan.note_topology();
        plan.note_client_routes(client_routes_request());
        plan.note_schema("ks".to_owned(), LastKeyspaceChange::Altered);
        plan.note_full_needed();
        assert!(matches!(plan, FetchPlan::Full));

        plan.note_topology();
        plan.note_client_routes(client_routes_request());
        plan.note_schema("ks".to_owned(), LastKeyspaceChange::Altered);
        assert!(matches!(plan, FetchPlan::Full));
    }
}
