//! A series of runs of the same clients at one rendezvous, each decided from the last: a
//! saturation search whose clients were started by srun or Kubernetes (`saturate --rendezvous`).
//! Client 0 leads: it decides each run and writes its order under `PREFIX/series/<k>` once
//! (a transaction: an order is never overwritten) before it joins run `k` at `PREFIX/run-<k>`; the
//! others wait for order `k`, run it with the others, and hand their result back as in any
//! rendezvous run. The last order is the end. The leader holds `PREFIX/series/leader` under a
//! lease for the whole search: a follower whose leader's key is gone (its process died, the lease
//! expired) stops at once with what it kept, and one that hears no order within its bound stops
//! too; no client runs a step the leader did not order.
//!
//! Orders read from etcd are input: bounded in size, parsed, their rates checked.

use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, Txn, TxnOp};

use scalebench_session::error::SessionError;

use crate::etcd::{bounded, connect_checked, RendezvousUrl};

pub use crate::order::Order;

/// No order is longer than this.
const MAX_ORDER: usize = 4096;

impl RendezvousUrl {
    fn order_key(&self, k: u32) -> String {
        format!("{}/series/{k}", self.prefix)
    }

    fn leader_key(&self) -> String {
        format!("{}/series/leader", self.prefix)
    }
}

/// A leader's process dies: its key goes this long after.
const LEADER_TTL_S: i64 = 3;

/// The leader's key, kept alive while this lives (a thread renews its lease every second).
pub struct Leadership {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Leadership {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Client 0 takes the lead of the search at `url` for as long as the returned value lives.
pub fn lead(url: &RendezvousUrl) -> Result<Leadership, SessionError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let shown = url.display();
    let (url, stopped) = (url.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        let Ok(rt) = runtime() else {
            let _ = tx.send(Err("cannot start a runtime".to_string()));
            return;
        };
        rt.block_on(async {
            let taken = async {
                let mut c = bounded(connect_checked(&url.endpoints)).await?;
                let lease = bounded(c.lease_grant(LEADER_TTL_S, None)).await?.id();
                let put = Some(etcd_client::PutOptions::new().with_lease(lease));
                bounded(c.put(url.leader_key(), std::process::id().to_string(), put)).await?;
                let (keeper, _answers) = bounded(c.lease_keep_alive(lease)).await?;
                Ok::<_, String>((c, lease, keeper))
            };
            let (mut c, lease, mut keeper) = match taken.await {
                Ok(t) => {
                    let _ = tx.send(Ok(()));
                    t
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = bounded(keeper.keep_alive()).await;
                for _ in 0..10 {
                    if stopped.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            let _ = bounded(c.lease_revoke(lease)).await;
        });
    });
    match rx.recv() {
        Ok(Ok(())) => Ok(Leadership {
            stop,
            thread: Some(thread),
        }),
        Ok(Err(e)) => Err(SessionError::Failed(format!(
            "rendezvous {shown}: cannot take the lead of the search: {e}"
        ))),
        Err(_) => Err(SessionError::Failed(
            "the search's leader thread ended".into(),
        )),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, SessionError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SessionError::Failed(format!("cannot start a runtime: {e}")))
}

/// The leader writes order `k` (once: an order already there is refused, naming it).
pub fn publish(url: &RendezvousUrl, k: u32, order: &Order) -> Result<(), SessionError> {
    let key = url.order_key(k);
    let text = serde_json::to_string(order).expect("an order serializes");
    let shown = url.display();
    runtime()?.block_on(async {
        let mut c = bounded(connect_checked(&url.endpoints))
            .await
            .map_err(|e| SessionError::Failed(format!("rendezvous {shown}: cannot connect: {e}")))?;
        let put = Txn::new()
            .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key.as_str(), text, None)]);
        let written = bounded(c.txn(put))
            .await
            .map_err(|e| SessionError::Failed(format!("rendezvous {shown}: cannot write {key}: {e}")))?;
        if !written.succeeded() {
            return Err(SessionError::Usage(format!(
                "{shown} already holds a search (its order {k}): give each search a prefix of its own"
            )));
        }
        Ok(())
    })
}

/// A follower waits for order `k` at most `wait`; Ctrl-C ends the wait.
pub fn await_order(url: &RendezvousUrl, k: u32, wait: Duration) -> Result<Order, SessionError> {
    let key = url.order_key(k);
    let shown = url.display();
    scalebench_session::interrupt::install_handler();
    let began = scalebench_session::interrupt::signals_received();
    let deadline = Instant::now() + wait;
    runtime()?.block_on(async {
        let mut client = None;
        loop {
            if scalebench_session::interrupt::signals_received() != began {
                return Err(SessionError::Interrupted(
                    "interrupted while waiting for the search's next step".into(),
                ));
            }
            if client.is_none() {
                client = bounded(connect_checked(&url.endpoints)).await.ok();
            }
            if let Some(c) = client.as_mut() {
                match bounded(c.get(key.as_str(), None)).await {
                    Ok(answer) => {
                        if let Some(kv) = answer.kvs().first() {
                            return parse(kv.value(), &shown, k);
                        }
                        // Past the first order the leader was there: without its key it is gone.
                        let leader = bounded(c.get(url.leader_key(), None)).await;
                        if k > 1 && leader.is_ok_and(|l| l.kvs().is_empty()) {
                            return Err(SessionError::Incomplete(format!(
                                "client 0 of the search at {shown} is gone (its key in etcd expired) before ordering run {k}; what this client measured is kept"
                            )));
                        }
                    }
                    Err(_) => client = None,
                }
            }
            if Instant::now() >= deadline {
                return Err(SessionError::Incomplete(format!(
                    "client 0 of the search at {shown} ordered no step {} within {}: it is gone; what this client measured is kept",
                    k + 1,
                    humantime::format_duration(wait)
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Whether the leader's key is gone from etcd (its process died and its lease expired), awaited
/// for at most the lease's life: asked when a run of the series failed, to tell a vanished leader
/// (a client missing) from another failure. `false` when etcd cannot say.
pub fn leader_gone(url: &RendezvousUrl) -> bool {
    let Ok(rt) = runtime() else { return false };
    let deadline = Instant::now() + Duration::from_secs(LEADER_TTL_S as u64 + 1);
    rt.block_on(async {
        let Ok(mut c) = bounded(connect_checked(&url.endpoints)).await else {
            return false;
        };
        loop {
            match bounded(c.get(url.leader_key(), None)).await {
                Ok(l) if l.kvs().is_empty() => return true,
                Ok(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await
                }
                _ => return false,
            }
        }
    })
}

fn parse(bytes: &[u8], shown: &str, k: u32) -> Result<Order, SessionError> {
    let bad = |why: String| SessionError::Failed(format!("{shown}: order {k} {why}"));
    if bytes.len() > MAX_ORDER {
        return Err(bad(format!("is {} bytes long", bytes.len())));
    }
    let order: Order =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("is no order: {e}")))?;
    if let Order::Run { offered } = order {
        if !(offered.is_finite() && offered > 0.0 && offered <= 1e9) {
            return Err(bad(format!("offers {offered}")));
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_from_etcd_are_checked() {
        let ok = serde_json::to_vec(&Order::Run { offered: 1000.0 }).unwrap();
        assert_eq!(parse(&ok, "x", 0).unwrap(), Order::Run { offered: 1000.0 });
        for bad in [&br#"{"run":{"offered":-1}}"#[..], br#"{"run":{}}"#, b"[]"] {
            assert!(
                parse(bad, "x", 3).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse(&vec![b' '; MAX_ORDER + 1], "x", 0).is_err());
    }
}
