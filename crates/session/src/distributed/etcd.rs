//! `--rendezvous etcd://HOST:PORT[,HOST:PORT]/PREFIX`: clients on any machines, started by any
//! launcher (Slurm's srun, a Kubernetes Indexed Job, ssh), meet in etcd. Under
//! `PREFIX/<phase>/` each client registers `joined/<index>` under a lease (so a dead client's
//! entry goes), waits until all N have joined (a barrier with a timeout that names the missing),
//! and the first to see them all writes `start` once in a transaction: every client reads the same
//! instant. While they run they publish `progress/<index>` (client 0 prints the merged line), and at
//! the end `result/<index>` (in chunks under etcd's request limit), which client 0, or
//! `scalebench gather` on any machine, merges.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use scalebench_exec::{Phase, ProgressState, Rendezvous, StopSignal};
use scalebench_measure::RunResult;

use super::{merged_line, ClientProgress};
use crate::clients::ClientShare;
use crate::error::SessionError;
use crate::request::RunRequest;

/// How far ahead of "all joined" the common start is set: time for every client, on any machine,
/// to read it.
const START_LEAD: Duration = Duration::from_millis(500);
/// A client whose process dies leaves the run this long after (its lease expires).
const LEASE_TTL_S: i64 = 5;
impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Joined")
            .field("base", &self.base)
            .field("lease", &self.lease)
            .finish()
    }
}

/// Results are stored in parts below etcd's default request limit (1.5 MiB).
const RESULT_CHUNK: usize = 1 << 20;
/// Every request to etcd is bounded: a silent server must not hang a client.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the clients of one run meet: `etcd://HOST:PORT[,HOST:PORT]/PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RendezvousUrl {
    pub endpoints: Vec<String>,
    pub prefix: String,
}

impl RendezvousUrl {
    pub fn parse(text: &str) -> Result<RendezvousUrl, SessionError> {
        // A password in the URL is never repeated.
        let shown = match text.rsplit_once('@') {
            Some((_, hosts)) => format!("etcd://***@{hosts}"),
            None => text.to_string(),
        };
        let bad = |why: &str| {
            SessionError::Usage(format!(
                "invalid value '{shown}' for '--rendezvous': {why} (expected etcd://HOST:PORT[,HOST:PORT]/PREFIX)"
            ))
        };
        let rest = text
            .strip_prefix("etcd://")
            .ok_or_else(|| bad("the rendezvous is an etcd URL"))?;
        let (hosts, prefix) = rest
            .split_once('/')
            .ok_or_else(|| bad("a prefix naming the run is needed"))?;
        if prefix.trim_matches('/').is_empty() {
            return Err(bad("a prefix naming the run is needed"));
        }
        if hosts.contains('@') {
            return Err(bad("etcd users and passwords are not supported"));
        }
        let endpoints: Vec<String> = hosts
            .split(',')
            .map(|h| {
                let (host, port) = h
                    .rsplit_once(':')
                    .ok_or_else(|| bad("each host needs a port"))?;
                if host.is_empty() || port.parse::<u16>().is_err() {
                    return Err(bad(&format!("'{h}' is not HOST:PORT")));
                }
                Ok(format!("http://{h}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(RendezvousUrl {
            endpoints,
            prefix: format!("/{}", prefix.trim_matches('/')),
        })
    }

    pub fn display(&self) -> String {
        let hosts: Vec<&str> = self
            .endpoints
            .iter()
            .map(|e| e.trim_start_matches("http://"))
            .collect();
        format!("etcd://{}{}", hosts.join(","), self.prefix)
    }
}

/// One client's link to the others through etcd.
#[derive(Debug)]
pub struct EtcdRendezvous {
    url: RendezvousUrl,
    share: ClientShare,
    start_timeout: Duration,
    /// Client 0 prints the merged progress line this often (never when quiet).
    status_interval: Option<Duration>,
    runtime: tokio::runtime::Runtime,
    joined: Mutex<Option<Joined>>,
}

struct Joined {
    client: Client,
    base: String,
    lease: i64,
    keeper: tokio::task::JoinHandle<()>,
    next_line: Instant,
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
            runtime,
            joined: Mutex::new(None),
        })
    }

    fn fail(&self, what: &str, e: impl std::fmt::Display) -> String {
        format!("rendezvous {}: {what}: {e}", self.url.display())
    }

    /// Connects, retrying until the start timeout: an etcd started with the clients (a Kubernetes
    /// Pod beside the Job) may come up after them.
    async fn connect(&self) -> Result<Client, String> {
        let deadline = Instant::now() + self.start_timeout;
        loop {
            let opts = etcd_client::ConnectOptions::new()
                .with_connect_timeout(REQUEST_TIMEOUT)
                .with_timeout(REQUEST_TIMEOUT);
            let attempt = async {
                let mut c = Client::connect(&self.url.endpoints, Some(opts)).await?;
                // The client connects lazily: the first request is where a silent server shows.
                c.status().await?;
                Ok::<_, etcd_client::Error>(c)
            };
            match attempt.await {
                Ok(c) => return Ok(c),
                Err(e) if Instant::now() >= deadline => {
                    return Err(self.fail("cannot reach etcd", e))
                }
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    }

    async fn join(&self, phase: Phase, stop: &StopSignal) -> Result<(Joined, SystemTime), String> {
        let mut client = self.connect().await?;
        let base = format!("{}/{}", self.url.prefix, phase.name());
        let start_key = format!("{base}/start");
        let (n, i) = (self.share.clients, self.share.index);
        let earlier = client
            .get(start_key.as_str(), None)
            .await
            .map_err(|e| self.fail("cannot read", e))?;
        if !earlier.kvs().is_empty() {
            return Err(format!(
                "{} already holds the start of a {} phase: give each run a prefix of its own",
                self.url.display(),
                phase.name()
            ));
        }
        let lease = client
            .lease_grant(LEASE_TTL_S, None)
            .await
            .map_err(|e| self.fail("cannot take a lease", e))?
            .id();
        let (mut keeper, mut answers) = client
            .lease_keep_alive(lease)
            .await
            .map_err(|e| self.fail("cannot keep the lease", e))?;
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
        let who = format!(
            "{{\"host\":{:?},\"pid\":{}}}",
            gethostname::gethostname().to_string_lossy(),
            std::process::id()
        );
        let registered = client
            .txn(
                Txn::new()
                    .when([Compare::create_revision(me.as_str(), CompareOp::Equal, 0)])
                    .and_then([TxnOp::put(
                        me.as_str(),
                        who,
                        Some(PutOptions::new().with_lease(lease)),
                    )]),
            )
            .await
            .map_err(|e| self.fail("cannot register", e))?;
        let joined = Joined {
            client,
            base,
            lease,
            keeper,
            next_line: Instant::now(),
        };
        if !registered.succeeded() {
            joined.keeper.abort();
            return Err(format!(
                "client {i} of {n} has already joined {}: each client needs an index of its own",
                self.url.display()
            ));
        }
        let mut joined = joined;
        // The barrier: all N joined, or the missing named.
        let deadline = Instant::now() + self.start_timeout;
        loop {
            let present = self.indexes(&mut joined, "joined").await?;
            if present.len() as u32 >= n {
                break;
            }
            if stop.is_requested() {
                joined.keeper.abort();
                return Err("interrupted while waiting for the other clients".into());
            }
            if Instant::now() >= deadline {
                // The lease stays until this process ends, so the others still count this one.
                joined.keeper.abort();
                let missing: Vec<String> = (0..n)
                    .filter(|k| !present.contains(k))
                    .map(|k| k.to_string())
                    .collect();
                return Err(format!(
                    "client(s) {} of {n} did not join {} within {}: the run did not start",
                    missing.join(", "),
                    self.url.display(),
                    humantime::format_duration(self.start_timeout)
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The start, written once: whoever comes first sets it, everybody reads the same.
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
        joined
            .client
            .txn(txn)
            .await
            .map_err(|e| self.fail("cannot agree on the start", e))?;
        let got = joined
            .client
            .get(start_key.as_str(), None)
            .await
            .map_err(|e| self.fail("cannot read the start", e))?;
        let ns: u64 = got
            .kvs()
            .first()
            .and_then(|kv| kv.value_str().ok()?.parse().ok())
            .ok_or_else(|| self.fail("the start", "is not a number"))?;
        Ok((joined, UNIX_EPOCH + Duration::from_nanos(ns)))
    }

    /// The client indexes present under `base/<what>/`.
    async fn indexes(&self, joined: &mut Joined, what: &str) -> Result<BTreeSet<u32>, String> {
        let dir = format!("{}/{what}/", joined.base);
        let got = joined
            .client
            .get(
                dir.as_str(),
                Some(GetOptions::new().with_prefix().with_keys_only()),
            )
            .await
            .map_err(|e| self.fail("cannot read", e))?;
        Ok(got
            .kvs()
            .iter()
            .filter_map(|kv| {
                let key = kv.key_str().ok()?.strip_prefix(&dir)?;
                key.split('/').next()?.parse().ok()
            })
            .collect())
    }

    /// Hands this client's result to the others (client 0 or `scalebench gather` merges it) and
    /// leaves the run.
    pub fn publish(&self, result: &RunResult) -> Result<(), SessionError> {
        let mut guard = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let Some(joined) = guard.as_mut() else {
            return Err(SessionError::Failed(
                "the client never joined the run".into(),
            ));
        };
        let text =
            serde_json::to_string(result).map_err(|e| SessionError::Failed(e.to_string()))?;
        let dir = format!("{}/result/{}", joined.base, self.share.index);
        let parts: Vec<&[u8]> = text.as_bytes().chunks(RESULT_CHUNK).collect();
        // The parts first, then how many there are: a reader sees a result whole or not at all.
        let ops: Vec<TxnOp> = parts
            .iter()
            .enumerate()
            .map(|(k, part)| TxnOp::put(format!("{dir}/part/{k:05}"), part.to_vec(), None))
            .collect();
        self.runtime
            .block_on(async {
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
                joined.keeper.abort();
                let _ = joined.client.lease_revoke(joined.lease).await;
                Ok::<_, String>(())
            })
            .map_err(SessionError::Failed)
    }

    /// Client 0: every client's result, or why it has none. A client that left the run (its lease
    /// expired) without a result is missing at once; one still running is waited for up to `timeout`.
    pub fn gather(
        &self,
        timeout: Duration,
    ) -> Result<Vec<Result<RunResult, String>>, SessionError> {
        let mut guard = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let Some(joined) = guard.as_mut() else {
            return Err(SessionError::Failed(
                "the client never joined the run".into(),
            ));
        };
        self.runtime
            .block_on(gather_results(
                &mut joined.client,
                &joined.base,
                self.share.clients,
                timeout,
                &self.url.display(),
            ))
            .map_err(SessionError::Failed)
    }
}

/// Reads every client's result under `base`, waiting at most `timeout` for the ones still running.
pub async fn gather_results(
    client: &mut Client,
    base: &str,
    clients: u32,
    timeout: Duration,
    shown: &str,
) -> Result<Vec<Result<RunResult, String>>, String> {
    let deadline = Instant::now() + timeout;
    let mut out: Vec<Option<Result<RunResult, String>>> = (0..clients).map(|_| None).collect();
    loop {
        // Who is still in the run is read before the results: a client hands its result back
        // before it leaves, so "left and no result" is never a result on its way.
        let joined = client
            .get(
                format!("{base}/joined/"),
                Some(GetOptions::new().with_prefix().with_keys_only()),
            )
            .await
            .map_err(|e| format!("rendezvous {shown}: cannot read: {e}"))?;
        let present: BTreeSet<String> = joined
            .kvs()
            .iter()
            .filter_map(|kv| kv.key_str().ok().map(str::to_string))
            .collect();
        for i in 0..clients {
            if out[i as usize].is_some() {
                continue;
            }
            if let Some(r) = read_result(client, base, i, shown).await? {
                out[i as usize] = Some(r);
            } else if !present.contains(&format!("{base}/joined/{i}")) {
                out[i as usize] = Some(Err(
                    "left the run without a result (its lease expired)".into()
                ));
            }
        }
        if out.iter().all(Option::is_some) {
            break;
        }
        if Instant::now() >= deadline {
            for o in out.iter_mut().filter(|o| o.is_none()) {
                *o = Some(Err(format!(
                    "no result within {} of the first",
                    humantime::format_duration(timeout)
                )));
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(out
        .into_iter()
        .map(|o| o.expect("every client decided"))
        .collect())
}

async fn read_result(
    client: &mut Client,
    base: &str,
    index: u32,
    shown: &str,
) -> Result<Option<Result<RunResult, String>>, String> {
    let dir = format!("{base}/result/{index}");
    let fail = |e: etcd_client::Error| format!("rendezvous {shown}: cannot read a result: {e}");
    let count = client
        .get(format!("{dir}/parts"), None)
        .await
        .map_err(fail)?;
    let Some(n) = count
        .kvs()
        .first()
        .and_then(|kv| kv.value_str().ok()?.parse::<usize>().ok())
    else {
        return Ok(None);
    };
    let parts = client
        .get(
            format!("{dir}/part/"),
            Some(GetOptions::new().with_prefix()),
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
        serde_json::from_slice(&bytes).map_err(|e| format!("its result does not parse: {e}")),
    ))
}

impl Rendezvous for EtcdRendezvous {
    fn ready(&self, phase: Phase, stop: &StopSignal) -> Result<SystemTime, String> {
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
        let show = match self.status_interval {
            Some(every) if self.share.index == 0 && Instant::now() >= joined.next_line => {
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
        let clients = self.share.clients as usize;
        // Progress is best effort: a slow etcd delays the line, never the run (bounded).
        let line = self.runtime.block_on(async {
            let work = async {
                let _ = joined
                    .client
                    .put(key, text, Some(PutOptions::new().with_lease(joined.lease)))
                    .await;
                if !show {
                    return None;
                }
                let got = joined
                    .client
                    .get(
                        format!("{}/progress/", joined.base),
                        Some(GetOptions::new().with_prefix()),
                    )
                    .await
                    .ok()?;
                let mut latest: Vec<Option<ClientProgress>> = vec![None; clients];
                for kv in got.kvs() {
                    let i: usize = kv.key_str().ok()?.rsplit('/').next()?.parse().ok()?;
                    if i < clients {
                        latest[i] = serde_json::from_slice(kv.value()).ok();
                    }
                }
                let alive = latest.iter().flatten().count();
                Some(merged_line(phase, &latest, alive, clients))
            };
            tokio::time::timeout(Duration::from_millis(500), work)
                .await
                .ok()
                .flatten()
        });
        if let Some(line) = line {
            crate::note!("{line}");
        }
    }
}

/// What one client of a rendezvous run ends with: client 0 merges everybody's result, the others
/// keep their own (handed to the rendezvous).
#[derive(Debug)]
pub enum ClientRun {
    Own(RunResult),
    Merged(super::DistributedOutcome),
}

/// How long client 0 waits for the others' results after its own: their phase ends with the same
/// duration, or their share of the operations; a client later than this is named as missing, and
/// `scalebench gather` can still collect it.
pub fn gather_timeout(request: &RunRequest) -> Duration {
    request.grace + Duration::from_secs(60)
}

/// Runs `phase` of `request` as client `share` of the run that meets at `url`.
pub fn run_client(
    request: &RunRequest,
    phase: Phase,
    url: &RendezvousUrl,
    share: ClientShare,
    start_timeout: Duration,
) -> Result<ClientRun, SessionError> {
    let rendezvous = std::sync::Arc::new(EtcdRendezvous::new(
        url.clone(),
        share,
        start_timeout,
        (!request.quiet).then_some(request.status_interval),
    )?);
    let mut own = super::client_request(request, share);
    own.rendezvous = Some(rendezvous.clone());
    let executed = crate::phase::execute_phases(&own, &[phase])?;
    rendezvous.publish(&executed.result)?;
    if share.index != 0 {
        return Ok(ClientRun::Own(executed.result));
    }
    let results = rendezvous.gather(gather_timeout(request))?;
    super::merge_clients(Some(request), phase, "etcd", results).map(ClientRun::Merged)
}

/// `scalebench gather`: every client's result of a finished phase, from any machine.
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
    runtime
        .block_on(async {
            let opts = etcd_client::ConnectOptions::new()
                .with_connect_timeout(REQUEST_TIMEOUT)
                .with_timeout(REQUEST_TIMEOUT);
            let mut client = Client::connect(&url.endpoints, Some(opts))
                .await
                .map_err(|e| format!("rendezvous {shown}: cannot connect: {e}"))?;
            let base = format!("{}/{}", url.prefix, phase.name());
            let n = client
                .get(format!("{base}/clients"), None)
                .await
                .map_err(|e| format!("rendezvous {shown}: cannot read: {e}"))?;
            let clients: u32 = n
                .kvs()
                .first()
                .and_then(|kv| kv.value_str().ok()?.parse().ok())
                .ok_or_else(|| format!("{shown} holds no {} phase that started", phase.name()))?;
            gather_results(&mut client, &base, clients, timeout, &shown).await
        })
        .map_err(SessionError::Failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_hosts_and_a_prefix() {
        let u = RendezvousUrl::parse("etcd://10.0.0.1:2379,10.0.0.2:2379/bench/run-7/").unwrap();
        assert_eq!(
            u.endpoints,
            ["http://10.0.0.1:2379", "http://10.0.0.2:2379"]
        );
        assert_eq!(u.prefix, "/bench/run-7");
        assert_eq!(
            u.display(),
            "etcd://10.0.0.1:2379,10.0.0.2:2379/bench/run-7"
        );
        for bad in [
            "redis://h:1/x",
            "etcd://h:1",
            "etcd://h:1/",
            "etcd://h/x",
            "etcd://h:port/x",
            "etcd://u:secret@h:1/x",
        ] {
            let e = RendezvousUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--rendezvous") && !e.contains("secret"), "{e}");
            assert!(e.contains(bad) || bad.contains('@'), "{e}");
        }
    }
}
