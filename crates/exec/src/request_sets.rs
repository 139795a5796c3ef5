//! Dory's request sets (studies.md, section 5): the measured operations of a closed-loop run in
//! back-to-back sets of R, each timed; a set starts only when every operation of the one before it
//! has completed. The operations of a set go to whichever slot is free (shared), or each slot has
//! a fixed share of every set, as each thread of Dory's client had (fixed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use scalebench_measure::result::{RequestSet, RequestSets, SetThreads};

use crate::timeline::{SetGate, TimelineLog, TimelinePoint};

/// Request sets: measured operations are numbered (as they start, or each slot its own numbers of
/// every set); operation i belongs to set i / size and may start only once every operation of the
/// sets before has completed.
pub struct SetClock {
    size: u64,
    /// With fixed shares: each slot's first number within a set, and its share of the set.
    shares: Option<Vec<(u64, u64)>>,
    claimed: AtomicU64,
    completed: AtomicU64,
    /// Start of the set in progress, ns after `timeline.start` (0: the measurement start).
    opened_ns: AtomicU64,
    /// Failures by set (rare, so a lock is cheap).
    failed: std::sync::Mutex<std::collections::BTreeMap<u64, u64>>,
    done: std::sync::Mutex<Vec<RequestSet>>,
    opened: tokio::sync::Notify,
    /// Sets as they close, for a controller watching the run (`scalebench elastic`).
    log: Option<TimelineLog>,
}

/// Where a slot is in its fixed shares: the set, and how many of its share of it it has started.
#[derive(Debug, Default)]
pub struct SetCursor {
    set: u64,
    started: u64,
}

/// Each of `slots` slots' share of a set of `size` operations, as (its first number within the
/// set, its share): `size / slots`, the first `size % slots` slots one more (Dory's client).
pub fn fixed_shares(size: u64, slots: usize) -> Vec<(u64, u64)> {
    let n = slots.max(1) as u64;
    let mut first = 0;
    (0..n)
        .map(|s| {
            let share = size / n + u64::from(s < size % n);
            first += share;
            (first - share, share)
        })
        .collect()
}

impl SetClock {
    /// The clock of a run phase's request sets, if the plan has them.
    pub fn for_plan(plan: &crate::plan::RunPlan) -> Option<SetClock> {
        match (plan.phase, plan.request_set) {
            (crate::plan::Phase::Run, Some(size)) => Some(SetClock::new(
                size,
                plan.timeline_log.clone(),
                plan.set_threads,
                plan.slots(),
            )),
            _ => None,
        }
    }

    /// Sets of `size` operations over `slots` slots, given to them as `threads` says.
    pub fn new(size: u64, log: Option<TimelineLog>, threads: SetThreads, slots: usize) -> SetClock {
        SetClock {
            size,
            shares: (threads == SetThreads::Fixed).then(|| fixed_shares(size, slots)),
            claimed: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            opened_ns: AtomicU64::new(0),
            failed: Default::default(),
            done: Default::default(),
            opened: tokio::sync::Notify::new(),
            log,
        }
    }

    /// Numbers slot `slot`'s next measured operation: the set's next (shared), or the next of the
    /// slot's share of the set it is in, then of the set after (fixed; `cursor` is the slot's).
    /// None: the slot has no share of a set (fewer operations in a set than slots).
    pub fn claim(&self, slot: usize, cursor: &mut SetCursor) -> Option<u64> {
        let Some(shares) = &self.shares else {
            return Some(self.claimed.fetch_add(1, Ordering::SeqCst));
        };
        let (first, share) = shares[slot];
        if share == 0 {
            return None;
        }
        if cursor.started == share {
            (cursor.set, cursor.started) = (cursor.set + 1, 0);
        }
        cursor.started += 1;
        Some(cursor.set * self.size + first + cursor.started - 1)
    }

    /// The set operation `i` belongs to.
    pub fn set_of(&self, i: u64) -> u64 {
        i / self.size
    }

    /// Waits until set `set` may start; false if the run ends first (`ended`: stop or deadline).
    /// With a gate (the set shared by several clients), the set starts when the gate opens it, at
    /// `now_ns`, after the set before has completed here.
    pub async fn wait_open(
        &self,
        set: u64,
        ended: impl Fn() -> bool,
        now_ns: impl Fn() -> u64,
    ) -> bool {
        let needed = set * self.size;
        let gate = self.log.as_ref().and_then(TimelineLog::gate);
        loop {
            let opened = self.opened.notified();
            tokio::pin!(opened);
            opened.as_mut().enable();
            let gate_opened = gate.map(SetGate::opened);
            tokio::pin!(gate_opened);
            if let Some(g) = gate_opened.as_mut().as_pin_mut() {
                g.enable();
            }
            let here = self.completed.load(Ordering::SeqCst) >= needed;
            match gate {
                _ if !here => {}
                None => return true,
                Some(g) if g.is_open(set) => {
                    // The first slot to see it opened marks the set's start.
                    self.opened_ns.fetch_max(now_ns(), Ordering::SeqCst);
                    return true;
                }
                Some(_) => {}
            }
            if ended() {
                return false;
            }
            // Woken by the set's last completion or the gate; the timeout re-checks stop and
            // deadline.
            let either = async {
                match gate_opened.as_mut().as_pin_mut() {
                    Some(g) => tokio::select! { _ = opened => {}, _ = g => {} },
                    None => opened.await,
                }
            };
            let _ = tokio::time::timeout(Duration::from_millis(50), either).await;
        }
    }

    /// Counts a completed operation of set `set`; the last one closes the set and opens the next.
    pub fn complete(&self, set: u64, end_ns: u64, ok: bool, t0_ns: u64) {
        if !ok {
            *self
                .failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(set)
                .or_default() += 1;
        }
        let done = self.completed.fetch_add(1, Ordering::SeqCst) + 1;
        if done == (set + 1) * self.size {
            let start = self.opened_ns.load(Ordering::SeqCst).max(t0_ns);
            let failed = self
                .failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&set)
                .unwrap_or(0);
            let closed = RequestSet {
                index: set,
                start_s: (start - t0_ns) as f64 / 1e9,
                duration_s: end_ns.saturating_sub(start) as f64 / 1e9,
                failed,
                clients_s: Vec::new(),
            };
            if let Some(log) = &self.log {
                log.push(TimelinePoint {
                    start_s: closed.start_s,
                    duration_s: closed.duration_s,
                    ok: self.size - closed.failed.min(self.size),
                    failed: closed.failed,
                    p99_us: 0.0,
                });
            }
            self.done
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(closed);
            self.opened_ns.store(end_ns, Ordering::SeqCst);
            self.opened.notify_waiters();
        }
    }

    pub fn finish(&self) -> RequestSets {
        let completed = self.completed.load(Ordering::SeqCst);
        let sets = std::mem::take(&mut *self.done.lock().unwrap_or_else(|e| e.into_inner()));
        let mut r = RequestSets::new(self.size, sets, completed % self.size);
        r.threads = match self.shares {
            Some(_) => SetThreads::Fixed,
            None => SetThreads::Shared,
        };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dory's client: each thread R / T operations of every set, the first R mod T one more.
    #[test]
    fn fixed_shares_cover_a_set_once_and_differ_by_at_most_one() {
        assert_eq!(fixed_shares(101, 3), [(0, 34), (34, 34), (68, 33)]);
        assert_eq!(fixed_shares(2, 3), [(0, 1), (1, 1), (2, 0)]);
        for (size, slots) in [(500, 3), (100, 7), (7, 7), (1, 1)] {
            let shares = fixed_shares(size, slots);
            assert_eq!(shares.iter().map(|s| s.1).sum::<u64>(), size);
            let (min, max) = (
                shares.iter().map(|s| s.1).min().unwrap(),
                shares.iter().map(|s| s.1).max().unwrap(),
            );
            assert!(max - min <= 1, "{shares:?}");
        }
    }

    /// Each slot numbers its own share of every set: over 4 sets, every operation number of each
    /// set once, each slot's all in the set it is in.
    #[test]
    fn each_slot_claims_its_share_of_every_set() {
        let clock = SetClock::new(10, None, SetThreads::Fixed, 3);
        let mut claimed = Vec::new();
        for slot in 0..3 {
            let mut cursor = SetCursor::default();
            let share = [4, 3, 3][slot];
            for _ in 0..4 * share {
                let i = clock.claim(slot, &mut cursor).unwrap();
                claimed.push((clock.set_of(i), slot, i));
            }
        }
        claimed.sort_unstable();
        let numbers: Vec<u64> = claimed.iter().map(|c| c.2).collect();
        assert_eq!(numbers, (0..40).collect::<Vec<_>>());
        for set in 0..4 {
            let per_slot: Vec<usize> = (0..3)
                .map(|s| claimed.iter().filter(|c| c.0 == set && c.1 == s).count())
                .collect();
            assert_eq!(per_slot, [4, 3, 3], "set {set}");
        }
        // A slot with no share of a set (2 operations over 3 slots) claims nothing.
        let clock = SetClock::new(2, None, SetThreads::Fixed, 3);
        assert_eq!(clock.claim(2, &mut SetCursor::default()), None);
        // Shared: numbered as claimed, whoever claims.
        let clock = SetClock::new(2, None, SetThreads::Shared, 3);
        let mut cursor = SetCursor::default();
        assert_eq!(clock.claim(2, &mut cursor), Some(0));
        assert_eq!(clock.claim(0, &mut cursor), Some(1));
    }
}
