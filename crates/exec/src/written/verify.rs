//! The verify pass after the phase: every recorded key read back through connections of their
//! own, each key put in its class.

use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingFactory};
use scalebench_measure::result::LostWrites;
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, OperationGenerator};

use super::classes::{Class, Judge, Kept};
use super::WriteLog;

/// Reads of one key the pass tries at once, in each round.
const READ_ATTEMPTS: usize = 3;
/// Rounds after the first over the keys no read could read: a node killed just before the pass
/// leaves reads that time out until the cluster routes around it (Cassandra's coordinators wait
/// for the dead replica until gossip marks it down, seconds later), so they are tried again once
/// the others were read, [`ROUND_PAUSE`] or the operation timeout apart, before counting
/// unreadable.
const RETRY_ROUNDS: usize = 2;
const ROUND_PAUSE: Duration = Duration::from_secs(1);

/// The pass's time limit when the plan sets none: the run's length, and at least this.
pub const LEAST_VERIFY_LIMIT: Duration = Duration::from_secs(60);

/// How often a wait of the pass looks at its end (a signal, the time limit).
const END_POLL: Duration = Duration::from_millis(50);

/// How the pass reads.
pub struct VerifyPass<'a> {
    /// Connections to open: as many as the run had slots, at least 8, at most 64 (a million keys
    /// over loopback in seconds, not a minute).
    pub slots: usize,
    /// Each read is bounded by it (a read that does not answer in time is tried again, then the
    /// key is unreadable): a stalled server cannot hold the pass forever.
    pub op_timeout: Option<Duration>,
    /// `dataintegrity`: the generator whose values every write stores.
    pub integrity: Option<&'a OperationGenerator>,
    /// The pass ends here, whatever is left (counted unchecked): a paused server holds it no
    /// longer.
    pub limit: Duration,
    /// A stop requested after the pass was made (Ctrl-C, SIGTERM) ends it as the limit does: the
    /// signal, and its requests then (taken before the pass is announced, so that a Ctrl-C at
    /// the announcement counts).
    pub stop: Option<(crate::StopSignal, u32)>,
}

/// Why a pass ended before its last key.
#[derive(Clone)]
struct PassEnd {
    deadline: Instant,
    limit: Duration,
    stop: Option<(crate::StopSignal, u32)>,
}

impl PassEnd {
    fn new(pass: &VerifyPass<'_>) -> Self {
        PassEnd {
            deadline: Instant::now() + pass.limit,
            limit: pass.limit,
            stop: pass.stop.clone(),
        }
    }

    /// Why the pass must end now, if it must.
    fn reason(&self) -> Option<String> {
        if matches!(&self.stop, Some((s, began)) if s.requests() != *began) {
            return Some("ended by a signal".into());
        }
        (Instant::now() >= self.deadline).then(|| {
            format!(
                "ended at its time limit of {} (--verify-timeout)",
                humantime::format_duration(self.limit)
            )
        })
    }

    /// Time left before the deadline.
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Resolves when the pass must end.
    async fn reached(&self) -> String {
        loop {
            if let Some(why) = self.reason() {
                return why;
            }
            tokio::time::sleep(END_POLL.min(self.left().max(Duration::from_millis(1)))).await;
        }
    }

    /// `work`, unless the pass must end first (then why).
    async fn before<T>(&self, work: impl std::future::Future<Output = T>) -> Result<T, String> {
        tokio::select! {
            done = work => Ok(done),
            why = self.reached() => Err(why),
        }
    }
}

impl<'a> VerifyPass<'a> {
    /// The pass after a run of `plan` that measured for `measured`, ended by `stop`'s next
    /// request; `integrity`: the generator when `dataintegrity` holds.
    pub fn after(
        plan: &crate::RunPlan,
        measured: Duration,
        integrity: Option<&'a OperationGenerator>,
        stop: &crate::StopSignal,
    ) -> Self {
        VerifyPass {
            slots: plan.slots(),
            op_timeout: plan.op_timeout,
            integrity,
            // A long run writes many keys: its pass may take as long as the run did.
            limit: plan
                .verify_timeout
                .unwrap_or_else(|| measured.max(LEAST_VERIFY_LIMIT)),
            stop: Some((stop.clone(), stop.requests())),
        }
    }
}

impl WriteLog {
    /// Reads every recorded key back through `factory`'s verify connections. What the run
    /// measured stays whatever happens here: a pass that cannot connect says why in `error`.
    pub fn verify_pass<F: BindingFactory>(
        &self,
        factory: &F,
        pass: &VerifyPass<'_>,
    ) -> Result<LostWrites, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let blocks = factory.blocks_its_thread();
        let end = PassEnd::new(pass);
        Ok(runtime.block_on(async {
            let wanted = pass.slots.clamp(8, 64);
            let mut bindings = Vec::new();
            let mut last_error = None;
            // A worker's number picks its host where a binding spreads them (Galera, etcd): a node
            // the operation left down refuses its workers, so later numbers are tried too.
            for w in 0..wanted + 8 {
                if bindings.len() == wanted {
                    break;
                }
                match end.before(factory.connect_to_verify(w)).await {
                    Ok(Ok(b)) => bindings.push(b),
                    Ok(Err(e)) => last_error = Some(e),
                    // A server that accepts connections and never answers: nothing read.
                    Err(why) if bindings.is_empty() => {
                        return LostWrites {
                            unchecked: self.recorded_keys().len() as u64,
                            ended: Some(format!("{why} while connecting")),
                            verify_s: pass.limit.saturating_sub(end.left()).as_secs_f64(),
                            ..Default::default()
                        };
                    }
                    Err(_) => break,
                }
            }
            match (bindings.is_empty(), last_error) {
                (true, Some(e)) => LostWrites {
                    error: Some(format!("the verify pass could not connect: {e}")),
                    ..Default::default()
                },
                _ => self.verify_until(bindings, pass, blocks, &end).await,
            }
        }))
    }

    /// Reads every recorded key through `bindings` (one task each, keys dealt round-robin) and
    /// classes it.
    pub async fn verify<B: Binding>(
        &self,
        bindings: Vec<B>,
        pass: &VerifyPass<'_>,
        blocks: bool,
    ) -> LostWrites {
        self.verify_until(bindings, pass, blocks, &PassEnd::new(pass))
            .await
    }

    /// [`Self::verify`] until `end`: the keys not reached by then are counted unchecked.
    async fn verify_until<B: Binding>(
        &self,
        bindings: Vec<B>,
        pass: &VerifyPass<'_>,
        blocks: bool,
        end: &PassEnd,
    ) -> LostWrites {
        let started = Instant::now();
        let keys = self.recorded_keys();
        let n = bindings.len().max(1);
        let integrity = pass.integrity.map(|g| {
            move |key: &str, f: usize, v: &str| g.verify(key, &vec![(f, v.to_string())]).is_ok()
        });
        let kept: Option<Kept<'_>> = integrity.as_ref().map(|f| f as Kept<'_>);
        let judge = Judge {
            types: &self.types,
            names: &self.names,
            integrity: kept,
        };
        let tasks = bindings.into_iter().enumerate().map(|(i, mut b)| {
            let mine: Vec<&Box<str>> = keys.iter().skip(i).step_by(n).collect();
            let judge = &judge;
            async move {
                let mut found = LostWrites::default();
                let mut fields = Fields::new();
                let mut left = mine;
                'rounds: for round in 0..=RETRY_ROUNDS {
                    if left.is_empty() {
                        break;
                    }
                    if round > 0 {
                        let pause = pass.op_timeout.unwrap_or_default().max(ROUND_PAUSE);
                        if let Err(why) = end.before(tokio::time::sleep(pause)).await {
                            found.ended = Some(why);
                            break;
                        }
                    }
                    let mut unread = Vec::new();
                    let mut cut = None;
                    for (k, key) in left.iter().enumerate() {
                        // Each read within the time left, however long the operation timeout.
                        let timeout = pass.op_timeout.map_or(end.left(), |t| t.min(end.left()));
                        let read = read_back(&mut b, key, &mut fields, timeout, blocks);
                        let read = match end.before(read).await {
                            Ok(Ok(())) => Some(&fields),
                            Ok(Err(e)) if e.class == FailureClass::NotFound => None,
                            Ok(Err(_)) if end.reason().is_none() => {
                                unread.push(*key);
                                continue;
                            }
                            ended => {
                                found.ended = match ended {
                                    Err(why) => {
                                        b.abandoned();
                                        Some(why)
                                    }
                                    Ok(_) => end.reason(),
                                };
                                cut = Some(k);
                                break;
                            }
                        };
                        if let Some((class, why)) = self.judge_key(judge, key, read) {
                            tally(&mut found, key, class, why);
                        }
                    }
                    if let Some(k) = cut {
                        unread.extend_from_slice(&left[k..]);
                        left = unread;
                        break 'rounds;
                    }
                    left = unread;
                }
                match found.ended {
                    Some(_) => found.unchecked += left.len() as u64,
                    None => found.unreadable += left.len() as u64,
                }
                found
            }
        });
        let parts = futures::future::join_all(tasks).await;
        let mut all = LostWrites::default();
        for p in &parts {
            all.add_counts(p, None);
        }
        all.verify_s = started.elapsed().as_secs_f64();
        all
    }
}

/// Reads `key` whole, up to [`READ_ATTEMPTS`] times until it is read or known missing, each
/// read bounded by `timeout` (a synchronous binding is given the deadline).
async fn read_back<B: Binding>(
    b: &mut B,
    key: &str,
    fields: &mut Fields,
    timeout: Duration,
    blocks: bool,
) -> Result<(), OpError> {
    let mut read = Err(OpError::new(FailureClass::Other, "not read"));
    for _ in 0..READ_ATTEMPTS {
        if blocks {
            scalebench_binding::deadline::set_call_deadline(Some(Instant::now() + timeout));
        }
        read = match tokio::time::timeout(timeout, b.read(key, FieldSet::All, fields)).await {
            Ok(r) => r,
            Err(_) => {
                // Its answer must not be taken for the next read's (the binding drops it).
                b.abandoned();
                Err(OpError::new(
                    FailureClass::Timeout,
                    format!("no answer within {timeout:?}"),
                ))
            }
        };
        if matches!(&read, Ok(())) || matches!(&read, Err(e) if e.class == FailureClass::NotFound) {
            break;
        }
    }
    read
}

/// Counts `key` in its class, with an example when lost or unexpected.
fn tally(out: &mut LostWrites, key: &str, class: Class, why: Option<String>) {
    out.checked += 1;
    let word = match class {
        Class::Ok => return,
        Class::InDoubt => {
            out.in_doubt += 1;
            return;
        }
        Class::Recovered => {
            out.recovered += 1;
            return;
        }
        Class::Lost => {
            out.lost += 1;
            "lost"
        }
        Class::Unexpected => {
            out.unexpected += 1;
            "unexpected"
        }
    };
    if out.samples.len() < LostWrites::SAMPLES {
        let why = why.unwrap_or_default();
        out.samples.push(format!("{key}: {word}: {why}"));
    }
}
