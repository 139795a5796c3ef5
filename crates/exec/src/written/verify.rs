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
}

impl<'a> VerifyPass<'a> {
    /// The pass after a run of `plan`; `integrity`: the generator when `dataintegrity` holds.
    pub fn after(plan: &crate::RunPlan, integrity: Option<&'a OperationGenerator>) -> Self {
        VerifyPass {
            slots: plan.slots(),
            op_timeout: plan.op_timeout,
            integrity,
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
                match factory.connect_to_verify(w).await {
                    Ok(b) => bindings.push(b),
                    Err(e) => last_error = Some(e),
                }
            }
            match (bindings.is_empty(), last_error) {
                (true, Some(e)) => LostWrites {
                    error: Some(format!("the verify pass could not connect: {e}")),
                    ..Default::default()
                },
                _ => self.verify(bindings, pass, blocks).await,
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
                for round in 0..=RETRY_ROUNDS {
                    if left.is_empty() {
                        break;
                    }
                    if round > 0 {
                        tokio::time::sleep(pass.op_timeout.unwrap_or_default().max(ROUND_PAUSE))
                            .await;
                    }
                    let mut unread = Vec::new();
                    for key in left {
                        let read =
                            read_back(&mut b, key, &mut fields, pass.op_timeout, blocks).await;
                        let read = match read {
                            Ok(()) => Some(&fields),
                            Err(e) if e.class == FailureClass::NotFound => None,
                            Err(_) => {
                                unread.push(key);
                                continue;
                            }
                        };
                        if let Some((class, why)) = self.judge_key(judge, key, read) {
                            tally(&mut found, key, class, why);
                        }
                    }
                    left = unread;
                }
                found.unreadable += left.len() as u64;
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
    timeout: Option<Duration>,
    blocks: bool,
) -> Result<(), OpError> {
    let mut read = Err(OpError::new(FailureClass::Other, "not read"));
    for _ in 0..READ_ATTEMPTS {
        if blocks {
            scalebench_binding::deadline::set_call_deadline(timeout.map(|d| Instant::now() + d));
        }
        read = match timeout {
            None => b.read(key, FieldSet::All, fields).await,
            Some(d) => match tokio::time::timeout(d, b.read(key, FieldSet::All, fields)).await {
                Ok(r) => r,
                Err(_) => {
                    // Its answer must not be taken for the next read's (the binding drops it).
                    b.abandoned();
                    Err(OpError::new(
                        FailureClass::Timeout,
                        format!("no answer within the operation timeout of {d:?}"),
                    ))
                }
            },
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
