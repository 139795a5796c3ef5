//! `--pipeline N`: N operations in flight on each connection, as memtier's and redis-benchmark's
//! pipelining. The executor's slots stay what they are (each sends its own request at its own
//! intended start and is timed from it); N consecutive slots of a worker thread share one
//! connection whose protocol carries their requests without waiting for each reply (Redis's
//! multiplexed connection, tokio-postgres's client, etcd's HTTP/2 channel). Slots `g*N` to
//! `g*N+N-1` are group `g`: a thread's slots are numbered in a row and their count is a multiple
//! of N, so a group never spans two threads, and the connection's driver task lives on the
//! runtime of the thread that made it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use crate::info::{BindingInfo, Pipelining};
use crate::BindingError;

/// The connections of the open groups: made by a group's first slot, cloned by the others,
/// forgotten after its last (each slot then holds its clone).
pub struct ConnectionGroups<C> {
    depth: usize,
    open: Mutex<HashMap<usize, C>>,
}

impl<C: Clone> ConnectionGroups<C> {
    /// Groups of `depth` slots (1: every slot connects alone).
    pub fn new(depth: u32) -> Self {
        ConnectionGroups {
            depth: depth.max(1) as usize,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The group of slot `slot` (the slot itself without `--pipeline`): bindings that spread
    /// workers over hosts spread groups.
    pub fn group_of(&self, slot: usize) -> usize {
        slot / self.depth
    }

    /// Slot `slot`'s connection: its group's, made by `make` for the group's first slot.
    pub async fn connect<E, F, Fut>(&self, slot: usize, make: F) -> Result<C, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<C, E>>,
    {
        let group = self.group_of(slot);
        let last = slot % self.depth == self.depth - 1;
        {
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            let shared = if last {
                open.remove(&group)
            } else {
                open.get(&group).cloned()
            };
            if let Some(c) = shared {
                return Ok(c);
            }
        }
        let made = make().await?;
        if !last {
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            open.insert(group, made.clone());
        }
        Ok(made)
    }
}

/// Whether binding `info` runs the workload of `schema` with `depth` operations in flight on each
/// connection. One line saying why not.
pub fn check(info: &BindingInfo, schema: &crate::Schema, depth: u32) -> Result<(), BindingError> {
    if depth <= 1 {
        return Ok(());
    }
    let refused = |why: &str| {
        Err(BindingError::Config(format!(
            "--pipeline {depth}: {} {why}",
            info.name
        )))
    };
    match info.pipelining {
        Pipelining::Shared => Ok(()),
        Pipelining::OutsideTransactions => match &schema.holds_its_connection {
            Some(op) => refused(&format!(
                "pipelines operations outside transactions only, and operation '{op}' holds its connection from BEGIN to COMMIT (a transaction or a batch): run it without --pipeline"
            )),
            None => Ok(()),
        },
        Pipelining::Driver => refused(
            "already puts every slot of a worker thread on its driver's connections, each carrying many requests at once: --concurrency sets how many are in flight",
        ),
        Pipelining::Not(why) => refused(&format!(
            "cannot: {why} (--pipeline is for redis, postgres and etcd)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_n_consecutive_slots_share_one_connection() {
        let groups = ConnectionGroups::new(3);
        let made = std::cell::Cell::new(0);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got: Vec<u32> = (0..9)
            .map(|slot| {
                rt.block_on(groups.connect(slot, || async {
                    made.set(made.get() + 1);
                    Ok::<_, ()>(made.get())
                }))
                .unwrap()
            })
            .collect();
        assert_eq!(got, [1, 1, 1, 2, 2, 2, 3, 3, 3]);
        assert!(
            groups.open.lock().unwrap().is_empty(),
            "each group forgotten after its last slot"
        );
        let alone = ConnectionGroups::new(1);
        let got: Vec<usize> = (0..3)
            .map(|slot| {
                rt.block_on(alone.connect(slot, || async move { Ok::<_, ()>(slot) }))
                    .unwrap()
            })
            .collect();
        assert_eq!(got, [0, 1, 2]);
    }

    #[test]
    fn a_failed_connect_leaves_its_group_to_the_next_slot() {
        let groups = ConnectionGroups::<u32>::new(2);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(rt
            .block_on(groups.connect(0, || async { Err::<u32, _>("refused") }))
            .is_err());
        assert_eq!(
            rt.block_on(groups.connect(1, || async { Ok::<_, &str>(7) })),
            Ok(7)
        );
    }
}
