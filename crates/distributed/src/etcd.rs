//! `--rendezvous etcd://HOST:PORT[,HOST:PORT]/PREFIX`: clients on any machines, started by any
//! launcher (Slurm's srun, a Kubernetes Indexed Job, ssh), meet in etcd. Under
//! `PREFIX/<phase>/` each client registers `joined/<index>` under a lease (so a dead client's
//! entry goes) with the definition of the run it was started for, waits until all N have joined
//! (a barrier with a timeout that names the missing; a client whose definition differs is refused
//! there), and the first to see them all writes `start` once in a transaction: every client reads
//! the same instant. While they run they publish `progress/<index>` (client 0 prints the merged
//! line) and watch `stop` (written by a client that was interrupted, or by the ssh launcher), and at
//! the end each keeps its result on its own disk, then hands it to `result/<index>` (in chunks
//! under etcd's request limit), which client 0, or `scalebench gather` on any machine, merges. A
//! rendezvous that breaks after the start loses nothing: every client's result is on its disk,
//! client 0 merges what it has and names the rest, and `scalebench gather` merges files too.
//!
//! Every value read from etcd is input: the number of clients, the parts of a result, the start
//! instant and the results themselves are bounded and checked before use.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use scalebench_exec::{Phase, ProgressState, Rendezvous, RendezvousError, StopSignal};
use scalebench_measure::definition::{
    Difference, RunDefinition, WorkloadDefinition, DEFINITION_VERSION,
};
use scalebench_measure::RunResult;

use crate::outcome::{merged_line, ClientProgress};
pub use crate::rendezvous_url::RendezvousUrl;
use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;

/// How far ahead of "all joined" the common start is set: time for every client, on any machine,
/// to read it.
const START_LEAD: Duration = Duration::from_millis(500);
/// A client whose process dies leaves the run this long after (its lease expires).
const LEASE_TTL_S: i64 = 5;

/// Results are stored in parts below etcd's default request limit (1.5 MiB).
const RESULT_CHUNK: usize = 1 << 20;
/// At most this many parts make a result: no result file is larger.
const MAX_PARTS: usize =
    (scalebench_measure::result::MAX_RESULT_BYTES as usize).div_ceil(RESULT_CHUNK);
/// A start more than this far ahead of this machine's clock was not written by a client of this
/// run (their start is half a second ahead), or the clocks differ beyond what NTP allows.
const MAX_START_AHEAD: Duration = Duration::from_secs(60);
/// Every request to etcd is bounded: a silent server must not hang a client.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One client's link to the others through etcd.
#[derive(Debug)]
pub struct EtcdRendezvous {
    url: RendezvousUrl,
    share: ClientShare,
    start_timeout: Duration,
    /// Client 0 prints the merged progress line this often (never when quiet).
    status_interval: Option<Duration>,
    /// What defines the run (told by the phase, [`Rendezvous::agree_on`]), compared with every
    /// other client's at the barrier.
    definition: Mutex<RunDefinition>,
    runtime: tokio::runtime::Runtime,
    joined: Mutex<Option<Joined>>,
}

struct Joined {
    client: Client,
    base: String,
    lease: i64,
    keeper: tokio::task::JoinHandle<()>,
    next_line: Instant,
    /// This client's stop: requested by the `stop` key, and written to it when requested here.
    stop: StopSignal,
    stop_written: bool,
}

impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Joined")
            .field("base", &self.base)
            .field("lease", &self.lease)
            .finish()
    }
}

/// An error of etcd's client in one line: gRPC's message and the deepest cause (a refused
/// connection, a timeout), not the client's debug structure.
fn etcd_text(e: &etcd_client::Error) -> String {
    let etcd_client::Error::GRpcStatus(status) = e else {
        return e.to_string();
    };
    let mut text = status.message().to_string();
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(status);
    let mut deepest = None;
    while let Some(c) = cause {
        deepest = Some(c.to_string());
        cause = c.source();
    }
    match deepest {
        Some(d) if !text.contains(&d) => text = format!("{text}: {d}"),
        _ => {}
    }
    if text.is_empty() {
        text = format!("{:?}", status.code());
    }
    text
}

/// Any error in one line: etcd's as [`etcd_text`] says.
fn error_text<E: std::fmt::Display + 'static>(e: &E) -> String {
    match (e as &dyn std::any::Any).downcast_ref::<etcd_client::Error>() {
        Some(etcd) => etcd_text(etcd),
        None => e.to_string(),
    }
}

/// `work`, unless `stop` is requested first: then an error saying so (the request is dropped).
async fn watched<T, E: std::fmt::Display + 'static>(
    stop: &StopSignal,
    what: &str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    let stopped = async {
        while !stop.is_requested() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        r = work => r.map_err(|e| error_text(&e)),
        () = stopped => Err(format!("interrupted while {what}")),
    }
}

/// The registration a client writes under `joined/<index>`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Registration {
    host: String,
    pid: u32,
    /// The run's fields ([`RunDefinition::fields`]).
    #[serde(default)]
    definition: BTreeMap<String, String>,
    /// The workload by meaning: absent from an earlier scalebench's registration.
    #[serde(default)]
    workload: Option<WorkloadDefinition>,
}

impl Registration {
    fn run_definition(&self) -> RunDefinition {
        RunDefinition {
            fields: self.definition.clone(),
            workload: self.workload.clone(),
        }
    }
}

impl EtcdRendezvous {
    pub fn new(
        url: RendezvousUrl,
        share: ClientShare,
        start_timeout: Duration,
        status_interval: Option<Duration>,
    ) -> Result<EtcdRendezvous, SessionError> {
        // Two threads: the lease is kept alive in the background while the phase runs.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| SessionError::Failed(format!("cannot start a runtime: {e}")))?;
        Ok(EtcdRendezvous {
            url,
            share,
            start_timeout,
            status_interval,
            definition: Mutex::new(RunDefinition::default()),
            runtime,
            joined: Mutex::new(None),
        })
    }

    fn definition(&self) -> RunDefinition {
        self.definition
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn fail<E: std::fmt::Display + 'static>(&self, what: &str, e: E) -> String {
        format!(
            "rendezvous {}: {what}: {}",
            self.url.display(),
            error_text(&e)
        )
    }

    /// Connects, retrying until the start timeout: an etcd started with the clients (a Kubernetes
    /// Pod beside the Job) may come up after them. A stop ends the wait at once.
    async fn connect(&self, stop: &StopSignal) -> Result<Client, String> {
        let deadline = Instant::now() + self.start_timeout;
        loop {
            let attempt = connect_checked(&self.url.endpoints);
            match watched(stop, "connecting to etcd", attempt).await {
                Ok(c) => return Ok(c),
                Err(e) if stop.is_requested() => return Err(e),
                Err(e) if Instant::now() >= deadline => {
                    return Err(self.fail("cannot reach etcd", e))
                }
                Err(_) => {
                    let pause = tokio::time::sleep(Duration::from_secs(1));
                    watched(stop, "connecting to etcd", async {
                        pause.await;
                        Ok::<_, String>(())
                    })
                    .await?;
                }
            }
        }
    }

    async fn join(
        &self,
        phase: Phase,
        stop: &StopSignal,
    ) -> Result<(Joined, SystemTime), RendezvousError> {
        let failed = RendezvousError::Failed;
        let mut client = self.connect(stop).await.map_err(failed)?;
        let base = format!("{}/{}", self.url.prefix, phase.name());
        let start_key = format!("{base}/start");
        let (n, i) = (self.share.clients, self.share.index);
        let earlier = watched(stop, "joining", client.get(start_key.as_str(), None))
            .await
            .map_err(|e| failed(self.fail("cannot read", e)))?;
        if !earlier.kvs().is_empty() {
            return Err(RendezvousError::Refused(format!(
                "{} already holds the start of a {} phase: give each run a prefix of its own",
                self.url.display(),
                phase.name()
            )));
        }
        let lease = watched(stop, "joining", client.lease_grant(LEASE_TTL_S, None))
            .await
            .map_err(|e| failed(self.fail("cannot take a lease", e)))?
            .id();
        let (mut keeper, mut answers) = watched(stop, "joining", client.lease_keep_alive(lease))
            .await
            .map_err(|e| failed(self.fail("cannot keep the lease", e)))?;
        let keeper = tokio::spawn(async move {
            loop {
                if keeper.keep_alive().await.is_err() {
                    return;
                }
                if !matches!(answers.message().await, Ok(Some(_))) {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let me = format!("{base}/joined/{i}");
        let who = serde_json::to_string(&Registration {
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            pid: std::process::id(),
            definition: self.definition().fields,
            workload: self.definition().workload,
        })
        .expect("a registration serializes");
        let registered = watched(
            stop,
            "joining",
            client.txn(
                Txn::new()
                    .when([Compare::create_revision(me.as_str(), CompareOp::Equal, 0)])
                    .and_then([TxnOp::put(
                        me.as_str(),
                        who,
                        Some(PutOptions::new().with_lease(lease)),
                    )]),
            ),
        )
        .await;
        let mut joined = Joined {
            client,
            base,
            lease,
            keeper,
            next_line: Instant::now(),
            stop: stop.clone(),
            stop_written: false,
        };
        // Whatever ends the join early, the lease is kept no longer than this process.
        let leave = |joined: &Joined, e: RendezvousError| {
            joined.keeper.abort();
            e
        };
        let registered =
            registered.map_err(|e| leave(&joined, failed(self.fail("cannot register", e))))?;
        if !registered.succeeded() {
            return Err(leave(
                &joined,
                RendezvousError::Refused(format!(
                    "client {i} of {n} has already joined {}: each client needs an index of its own",
                    self.url.display()
                )),
            ));
        }
        self.barrier(&mut joined, stop)
            .await
            .map_err(|e| leave(&joined, e))?;
        let start = self
            .agree_start(&mut joined, stop)
            .await
            .map_err(|e| leave(&joined, e))?;
        Ok((joined, start))
    }

    /// The barrier: all N joined, started alike, or the missing (or the different) named.
    async fn barrier(&self, joined: &mut Joined, stop: &StopSignal) -> Result<(), RendezvousError> {
        let failed = RendezvousError::Failed;
        let (n, i) = (self.share.clients, self.share.index);
        let deadline = Instant::now() + self.start_timeout;
        let definition = self.definition();
        loop {
            let present = self.registrations(joined).await.map_err(failed)?;
            for (k, r) in &present {
                if definition.workload.is_some() && r.workload.is_none() {
                    return Err(RendezvousError::Refused(format!(
                        "client {k} of the run at {} runs an earlier scalebench, which does not tell its workload \
                         by meaning (definition version {}): the clients of one run need one version; nothing ran",
                        self.url.display(),
                        DEFINITION_VERSION
                    )));
                }
                if let Some(Difference {
                    field,
                    mine,
                    theirs,
                }) = definition.first_difference(&r.run_definition())
                {
                    return Err(RendezvousError::Refused(format!(
                            "client {k} of the run at {} was started with {field} {theirs} where client {i} has {mine}: \
                             the clients of one run need the same definition (duration or operations, warm-up, target, \
                             workload, properties, clients); nothing ran",
                            self.url.display()
                        )));
                }
            }
            if present.keys().filter(|k| **k < n).count() as u32 >= n {
                break;
            }
            if stop.is_requested() {
                return Err(failed(
                    "interrupted while waiting for the other clients".into(),
                ));
            }
            if Instant::now() >= deadline {
                let missing: Vec<String> = (0..n)
                    .filter(|k| !present.contains_key(k))
                    .map(|k| k.to_string())
                    .collect();
                return Err(failed(format!(
                    "client(s) {} of {n} did not join {} within {}: the run did not start",
                    missing.join(", "),
                    self.url.display(),
                    humantime::format_duration(self.start_timeout)
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// The start, written once: whoever comes first sets it, everybody reads the same; a start
    /// too far ahead of this machine's clock is refused.
    async fn agree_start(
        &self,
        joined: &mut Joined,
        stop: &StopSignal,
    ) -> Result<SystemTime, RendezvousError> {
        let failed = RendezvousError::Failed;
        let n = self.share.clients;
        let start_key = format!("{}/start", joined.base);
        let proposed = SystemTime::now() + START_LEAD;
        let ns = proposed
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        let txn = Txn::new()
            .when([Compare::create_revision(
                start_key.as_str(),
                CompareOp::Equal,
                0,
            )])
            .and_then([
                TxnOp::put(start_key.as_str(), ns.to_string(), None),
                TxnOp::put(format!("{}/clients", joined.base), n.to_string(), None),
            ]);
        let agreed = async {
            joined
                .client
                .txn(txn)
                .await
                .map_err(|e| self.fail("cannot agree on the start", e))?;
            joined
                .client
                .get(start_key.as_str(), None)
                .await
                .map_err(|e| self.fail("cannot read the start", e))
        };
        let got = watched(stop, "agreeing on the start", agreed)
            .await
            .map_err(failed)?;
        let start = got
            .kvs()
            .first()
            .and_then(|kv| kv.value_str().ok()?.parse::<u64>().ok())
            .map(|ns| UNIX_EPOCH + Duration::from_nanos(ns))
            .ok_or_else(|| failed(self.fail("the start", "is not a number")));
        let start = start?;
        if let Ok(ahead) = start.duration_since(SystemTime::now()) {
            if ahead > MAX_START_AHEAD {
                return Err(failed(self.fail(
                        "the start",
                        format!(
                            "lies {} ahead of this machine's clock (more than {}): the clocks differ or the key holds no start of this run",
                            humantime::format_duration(Duration::from_secs(ahead.as_secs())),
                            humantime::format_duration(MAX_START_AHEAD)
                        ),
                    )));
            }
        }
        Ok(start)
    }

    /// The registrations under `base/joined/`, by client index.
    async fn registrations(
        &self,
        joined: &mut Joined,
    ) -> Result<BTreeMap<u32, Registration>, String> {
        let dir = format!("{}/joined/", joined.base);
        let got = watched(
            &joined.stop,
            "waiting for the other clients",
            joined
                .client
                .get(dir.as_str(), Some(GetOptions::new().with_prefix())),
        )
        .await
        .map_err(|e| self.fail("cannot read", e))?;
        Ok(got
            .kvs()
            .iter()
            .filter_map(|kv| {
                let index: u32 = kv.key_str().ok()?.strip_prefix(&dir)?.parse().ok()?;
                let r: Registration = serde_json::from_slice(kv.value()).ok()?;
                Some((index, r))
            })
            .collect())
    }

    /// Hands this client's result to the others (client 0 or `scalebench gather` merges it) and
    /// leaves the run. Each request is bounded, and a stop ends the hand-back.
    pub fn publish(&self, result: &RunResult) -> Result<(), String> {
        let mut guard = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let Some(joined) = guard.as_mut() else {
            return Err("the client never joined the run".into());
        };
        let text = serde_json::to_string(result).map_err(|e| e.to_string())?;
        let dir = format!("{}/result/{}", joined.base, self.share.index);
        let parts: Vec<&[u8]> = text.as_bytes().chunks(RESULT_CHUNK).collect();
        // The parts first, then how many there are: a reader sees a result whole or not at all.
        let ops: Vec<TxnOp> = parts
            .iter()
            .enumerate()
            .map(|(k, part)| TxnOp::put(format!("{dir}/part/{k:05}"), part.to_vec(), None))
            .collect();
        self.runtime.block_on(async {
            let hand_back = async {
                for op in ops {
                    joined
                        .client
                        .txn(Txn::new().and_then([op]))
                        .await
                        .map_err(|e| self.fail("cannot hand back the result", e))?;
                }
                joined
                    .client
                    .put(format!("{dir}/parts"), parts.len().to_string(), None)
                    .await
                    .map_err(|e| self.fail("cannot hand back the result", e))?;
                Ok::<_, String>(())
            };
            // A stop requested during the run is no reason not to hand back what was measured;
            // a stop after it (a second Ctrl-C) ends the hand-back.
            let fresh = StopSignal::new();
            let watch_second = async {
                let began = scalebench_session::interrupt::signals_received();
                while scalebench_session::interrupt::signals_received() == began {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                fresh.request();
            };
            let outcome = tokio::select! {
                r = watched(&fresh, "handing back the result", hand_back) => r,
                () = watch_second => Err("interrupted while handing back the result".to_string()),
            };
            joined.keeper.abort();
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                joined.client.lease_revoke(joined.lease),
            )
            .await;
            outcome
        })
    }

    /// Client 0: every client's result, or why it has none (`own` is this client's). A client that
    /// left the run (its lease expired) without a result is missing at once; one still running is
    /// waited for up to `timeout`, or until the others have had their grace period after a stop
    /// (which this client passes on to them through the `stop` key). A rendezvous that breaks while
    /// gathering names the clients not gathered and keeps those that were.
    pub fn gather(
        &self,
        own: RunResult,
        timeout: Duration,
        grace: Duration,
    ) -> (Vec<Result<RunResult, String>>, bool) {
        let mut guard = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let shown = self.url.display();
        let n = self.share.clients;
        let Some(joined) = guard.as_mut() else {
            let results = (0..n)
                .map(|i| {
                    if i == self.share.index {
                        Ok(own.clone())
                    } else {
                        Err("the client never joined the run".into())
                    }
                })
                .collect();
            return (results, false);
        };
        let stop = StopSignal::new();
        scalebench_session::interrupt::register_stop(&stop);
        let base = joined.base.clone();
        let mut results = self.runtime.block_on(gather_results(
            &mut joined.client,
            &base,
            n,
            Some((self.share.index, own)),
            GatherWait {
                timeout,
                grace,
                stop: &stop,
            },
            &shown,
        ));
        scalebench_session::interrupt::clear_stop();
        if stop.is_requested() {
            for r in results.iter_mut() {
                if let Err(e) = r {
                    *e = format!("{e} (the gathering was interrupted)");
                }
            }
        }
        (results, stop.is_requested())
    }
}

/// How long [`gather_results`] waits, and what ends its wait early.
pub struct GatherWait<'a> {
    /// For clients still running, after the first look.
    pub timeout: Duration,
    /// Their grace period: after a stop, the clients have it and [`crate::share::STOP_MARGIN`] to hand
    /// back what they measured.
    pub grace: Duration,
    /// Ctrl-C while gathering: the clients are asked to stop (the `stop` key) and the wait shortened.
    pub stop: &'a StopSignal,
}

/// Reads every client's result under `base`, waiting as `wait` says for the ones still running.
/// `own`: a client's own result, taken as it is. Never fails: a client whose result cannot be
/// read is named with why (the rendezvous broke, its result does not parse or add up).
pub async fn gather_results(
    client: &mut Client,
    base: &str,
    clients: u32,
    own: Option<(u32, RunResult)>,
    wait: GatherWait<'_>,
    shown: &str,
) -> Vec<Result<RunResult, String>> {
    let mut deadline = Instant::now() + wait.timeout;
    let mut out: Vec<Option<Result<RunResult, String>>> = (0..clients).map(|_| None).collect();
    if let Some((i, r)) = own {
        out[i as usize] = Some(Ok(r));
    }
    let mut stop_passed_on = false;
    let broke =
        |e: &dyn std::fmt::Display| format!("not gathered: the rendezvous {shown} broke ({e})");
    'gather: loop {
        if wait.stop.is_requested() && !stop_passed_on {
            stop_passed_on = true;
            let _ = tokio::time::timeout(
                REQUEST_TIMEOUT,
                client.put(format!("{base}/stop"), "gather", None),
            )
            .await;
            deadline = deadline.min(Instant::now() + wait.grace + crate::share::STOP_MARGIN);
        }
        // Who is still in the run is read before the results: a client hands its result back
        // before it leaves, so "left and no result" is never a result on its way.
        let joined = match tokio::time::timeout(
            REQUEST_TIMEOUT,
            client.get(
                format!("{base}/joined/"),
                Some(GetOptions::new().with_prefix().with_keys_only()),
            ),
        )
        .await
        {
            Ok(Ok(j)) => j,
            Ok(Err(e)) => {
                fill(&mut out, broke(&etcd_text(&e)));
                break 'gather;
            }
            Err(_) => {
                fill(
                    &mut out,
                    broke(&format!(
                        "no answer within {}",
                        humantime::format_duration(REQUEST_TIMEOUT)
                    )),
                );
                break 'gather;
            }
        };
        let present: BTreeSet<String> = joined
            .kvs()
            .iter()
            .filter_map(|kv| kv.key_str().ok().map(str::to_string))
            .collect();
        for i in 0..clients {
            if out[i as usize].is_some() {
                continue;
            }
            match read_result(client, base, i, shown).await {
                Ok(Some(r)) => out[i as usize] = Some(r),
                Ok(None) if !present.contains(&format!("{base}/joined/{i}")) => {
                    out[i as usize] = Some(Err(
                        "left the run without a result (its lease expired)".into(),
                    ));
                }
                Ok(None) => {}
                Err(e) => {
                    fill(&mut out, broke(&e));
                    break 'gather;
                }
            }
        }
        if out.iter().all(Option::is_some) {
            break;
        }
        if Instant::now() >= deadline {
            fill(
                &mut out,
                if stop_passed_on {
                    format!(
                        "no result within {} of the stop (its grace period and {})",
                        humantime::format_duration(wait.grace + crate::share::STOP_MARGIN),
                        humantime::format_duration(crate::share::STOP_MARGIN)
                    )
                } else {
                    format!(
                        "no result within {} of the first",
                        humantime::format_duration(wait.timeout)
                    )
                },
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    out.into_iter()
        .map(|o| o.expect("every client decided"))
        .collect()
}

/// Every client not decided yet gets `why`.
fn fill(out: &mut [Option<Result<RunResult, String>>], why: String) {
    for o in out.iter_mut().filter(|o| o.is_none()) {
        *o = Some(Err(why.clone()));
    }
}

/// Client `index`'s result: None while it has none; an error when the rendezvous cannot be read;
/// `Some(Err)` when what it holds is no whole, valid result.
async fn read_result(
    client: &mut Client,
    base: &str,
    index: u32,
    shown: &str,
) -> Result<Option<Result<RunResult, String>>, String> {
    let dir = format!("{base}/result/{index}");
    let fail = |e: String| format!("rendezvous {shown}: cannot read a result: {e}");
    let count = bounded(client.get(format!("{dir}/parts"), None))
        .await
        .map_err(fail)?;
    let Some(n) = count
        .kvs()
        .first()
        .and_then(|kv| kv.value_str().ok()?.parse::<usize>().ok())
    else {
        return Ok(None);
    };
    if n == 0 || n > MAX_PARTS {
        return Ok(Some(Err(format!(
            "its result claims {n} parts (1 to {MAX_PARTS} make a result)"
        ))));
    }
    let parts = bounded(
        client.get(
            format!("{dir}/part/"),
            Some(
                GetOptions::new()
                    .with_prefix()
                    .with_limit(MAX_PARTS as i64 + 1),
            ),
        ),
    )
    .await
    .map_err(fail)?;
    let mut kvs: Vec<_> = parts.kvs().iter().collect();
    kvs.sort_by(|a, b| a.key().cmp(b.key()));
    if kvs.len() != n {
        return Ok(Some(Err(format!(
            "its result has {} of {n} parts",
            kvs.len()
        ))));
    }
    let bytes: Vec<u8> = kvs
        .iter()
        .flat_map(|kv| kv.value().iter().copied())
        .collect();
    Ok(Some(
        std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(RunResult::from_json)
            .map_err(|e| format!("its result is not a valid result: {e}")),
    ))
}

/// An etcd request bounded by [`REQUEST_TIMEOUT`].
pub(crate) async fn bounded<T>(
    request: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, String> {
    tokio::time::timeout(REQUEST_TIMEOUT, request)
        .await
        .map_err(|_| {
            format!(
                "no answer within {}",
                humantime::format_duration(REQUEST_TIMEOUT)
            )
        })?
        .map_err(|e| e.to_string())
}

/// A client of etcd, connected and answering (the client connects lazily: the first request is
/// where a silent server shows).
pub(crate) async fn connect_checked(endpoints: &[String]) -> Result<Client, etcd_client::Error> {
    let opts = etcd_client::ConnectOptions::new()
        .with_connect_timeout(REQUEST_TIMEOUT)
        .with_timeout(REQUEST_TIMEOUT);
    let mut c = Client::connect(endpoints, Some(opts)).await?;
    c.status().await?;
    Ok(c)
}

impl Rendezvous for EtcdRendezvous {
    fn agree_on(&self, definition: &RunDefinition) {
        *self.definition.lock().unwrap_or_else(|e| e.into_inner()) = definition.clone();
    }

    fn ready(&self, phase: Phase, stop: &StopSignal) -> Result<SystemTime, RendezvousError> {
        let (joined, start) = self.runtime.block_on(self.join(phase, stop))?;
        *self.joined.lock().unwrap_or_else(|e| e.into_inner()) = Some(joined);
        Ok(start)
    }

    fn progress(&self, state: &ProgressState) {
        let mut guard = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let Some(joined) = guard.as_mut() else {
            return;
        };
        let text = serde_json::to_string(&ClientProgress::of(state)).expect("progress serializes");
        let key = format!("{}/progress/{}", joined.base, self.share.index);
        let stop_key = format!("{}/stop", joined.base);
        let show = match self.status_interval {
            // Not on the phase's first report (at once): the other clients have said nothing yet.
            Some(every)
                if self.share.index == 0
                    && state.elapsed >= std::time::Duration::from_secs(1)
                    && Instant::now() >= joined.next_line =>
            {
                joined.next_line = Instant::now() + every;
                true
            }
            _ => false,
        };
        let phase = if joined.base.ends_with("/load") {
            Phase::Load
        } else {
            Phase::Run
        };
        let clients = self.share.clients;
        let index = self.share.index;
        let write_stop = joined.stop.is_requested() && !joined.stop_written;
        // Progress is best effort: a slow etcd delays the line, never the run (bounded).
        let (line, stop_seen) = self.runtime.block_on(async {
            let work = async {
                let _ = joined
                    .client
                    .put(key, text, Some(PutOptions::new().with_lease(joined.lease)))
                    .await;
                // A client interrupted here stops the others: the run ends together.
                if write_stop
                    && joined
                        .client
                        .put(stop_key.as_str(), format!("client {index}"), None)
                        .await
                        .is_ok()
                {
                    joined.stop_written = true;
                }
                let stop_seen = joined
                    .client
                    .get(stop_key.as_str(), Some(GetOptions::new().with_keys_only()))
                    .await
                    .is_ok_and(|r| !r.kvs().is_empty());
                if !show {
                    return (None, stop_seen);
                }
                let Ok(got) = joined
                    .client
                    .get(
                        format!("{}/progress/", joined.base),
                        Some(GetOptions::new().with_prefix()),
                    )
                    .await
                else {
                    return (None, stop_seen);
                };
                let mut latest: Vec<Option<ClientProgress>> = vec![None; clients as usize];
                for kv in got.kvs() {
                    let Some(i) = kv
                        .key_str()
                        .ok()
                        .and_then(|k| k.rsplit('/').next())
                        .and_then(|i| i.parse::<usize>().ok())
                    else {
                        continue;
                    };
                    if i < latest.len() {
                        latest[i] = serde_json::from_slice(kv.value()).ok();
                    }
                }
                let alive = latest.iter().flatten().count();
                (
                    Some(merged_line(phase, &latest, alive, clients as usize)),
                    stop_seen,
                )
            };
            tokio::time::timeout(Duration::from_millis(500), work)
                .await
                .unwrap_or((None, false))
        });
        if stop_seen && !joined.stop.is_requested() {
            scalebench_session::note!("the run was stopped by another client or its launcher: ending with what was measured");
            joined.stop.request();
        }
        if let Some(line) = line {
            scalebench_session::note!("{line}");
        }
    }
}

/// Asks every client of the run at `url` to stop (the ssh launcher's Ctrl-C); best effort.
pub fn request_stop(url: &RendezvousUrl, phase: Phase) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        let _ = tokio::time::timeout(REQUEST_TIMEOUT, async {
            let mut c = connect_checked(&url.endpoints).await?;
            c.put(
                format!("{}/{}/stop", url.prefix, phase.name()),
                "launcher",
                None,
            )
            .await
            .map(drop)
        })
        .await;
    });
}

/// `scalebench gather`: every client's result of a phase, from any machine. `timeout` bounds the
/// wait for clients still running; Ctrl-C ends it.
pub fn gather(
    url: &RendezvousUrl,
    phase: Phase,
    timeout: Duration,
) -> Result<Vec<Result<RunResult, String>>, SessionError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SessionError::Failed(format!("cannot start a runtime: {e}")))?;
    let shown = url.display();
    scalebench_session::interrupt::install_handler();
    // Ctrl-C from now on ends the wait; one that came before (a launcher's, which asked its
    // clients to stop and now gathers what they kept) does not.
    let began = scalebench_session::interrupt::signals_received();
    runtime.block_on(async {
        let work = async {
            let mut client = bounded(connect_checked(&url.endpoints)).await.map_err(|e| {
                SessionError::Failed(format!("rendezvous {shown}: cannot connect: {e}"))
            })?;
            let base = format!("{}/{}", url.prefix, phase.name());
            let n = bounded(client.get(format!("{base}/clients"), None))
                .await
                .map_err(|e| SessionError::Failed(format!("rendezvous {shown}: cannot read: {e}")))?;
            let text = n
                .kvs()
                .first()
                .and_then(|kv| kv.value_str().ok().map(str::to_string))
                .ok_or_else(|| {
                    SessionError::Failed(format!(
                        "{shown} holds no {} phase that started",
                        phase.name()
                    ))
                })?;
            let clients = scalebench_session::request::parse_clients(text.trim()).map_err(|e| {
                SessionError::Failed(format!(
                    "{shown}: the number of clients it holds, '{text}', is no number of clients ({e})"
                ))
            })?;
            // A gather of a finished run is not to stop its clients: no stop is passed on.
            let never = StopSignal::new();
            Ok(gather_results(
                &mut client,
                &base,
                clients,
                None,
                GatherWait {
                    timeout,
                    grace: Duration::ZERO,
                    stop: &never,
                },
                &shown,
            )
            .await)
        };
        let interrupted = async {
            while scalebench_session::interrupt::signals_received() == began {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::select! {
            r = work => r,
            () = interrupted => Err(SessionError::Interrupted(
                "interrupted while gathering: nothing written".into(),
            )),
        }
    })
}
