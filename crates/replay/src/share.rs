//! A capture spread over N clients (issue 66 item 4) and scaled in its key space (item 3): each
//! client replays the sessions that fall to it, every operation of a session on one client so its
//! order is kept; a capture without sessions is split by key, so that one key's operations keep
//! their order too. `--keys xN` replays N copies of the capture, copy i's keys and sessions their
//! own (`user1`, `user1#1`, ..., and `c1`, `c1#1`, ...): N times the load over N times the keys,
//! each key as busy as in the capture. Copy i starts i/N of the capture's mean gap between
//! operations later, so the copies interleave rather than arrive in bursts of N.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::{Hash, Hasher};

use crate::{CaptureError, Captured, Request};

/// Whether `c` falls to client `index` of `clients`: by its session, else by its key.
pub fn falls_to(c: &Captured, index: u32, clients: u32) -> bool {
    clients <= 1 || order_hash(c) % u64::from(clients) == u64::from(index)
}

/// Which of a client's `slots` (connections) `c` runs on: every operation of its session (else of
/// its key) on the same one, in order. Independent of the client split (`clients`).
pub fn slot_of(c: &Captured, clients: u32, slots: usize) -> usize {
    ((order_hash(c) / u64::from(clients.max(1))) % slots.max(1) as u64) as usize
}

/// The hash of what orders `c`: its session, else its key.
fn order_hash(c: &Captured) -> u64 {
    let by = if !c.session.is_empty() {
        c.session.as_str()
    } else {
        match &c.request {
            Request::Key { key, .. } => key.as_str(),
            _ => "",
        }
    };
    // FNV-1a: stable across processes and machines (std's hasher is seeded per process).
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    by.hash(&mut h);
    h.finish()
}

struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// `inner`'s operations and N - 1 copies of each, in time order.
pub struct Copies<I> {
    inner: I,
    copies: u32,
    /// Copy i is `i * step_ns` later.
    step_ns: i64,
    /// Copies not yet due, by time (then by the order they were made).
    pending: BinaryHeap<Reverse<(i64, u64, CapturedOrd)>>,
    made: u64,
    /// The next original, read ahead.
    next: Option<Result<Captured, CaptureError>>,
}

/// A captured operation in the heap (ordered by the heap's key only).
struct CapturedOrd(Captured);

impl PartialEq for CapturedOrd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for CapturedOrd {}
impl PartialOrd for CapturedOrd {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CapturedOrd {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<I: Iterator<Item = Result<Captured, CaptureError>>> Copies<I> {
    /// `copies` of each operation (1: the capture as it is); `mean_gap_ns`: the capture's mean gap
    /// between operations (its span over its operations).
    pub fn new(mut inner: I, copies: u32, mean_gap_ns: i64) -> Self {
        let next = inner.next();
        Copies {
            inner,
            copies: copies.max(1),
            step_ns: mean_gap_ns.max(0) / i64::from(copies.max(1)),
            pending: BinaryHeap::new(),
            made: 0,
            next,
        }
    }

    fn push_copies(&mut self, c: &Captured) {
        for i in 1..self.copies {
            let mut copy = c.clone();
            copy.at_ns += i64::from(i) * self.step_ns;
            copy.session = format!("{}#{i}", c.session);
            if let Request::Key { key, .. } = &mut copy.request {
                key.push_str(&format!("#{i}"));
            }
            self.made += 1;
            self.pending
                .push(Reverse((copy.at_ns, self.made, CapturedOrd(copy))));
        }
    }
}

impl<I: Iterator<Item = Result<Captured, CaptureError>>> Iterator for Copies<I> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        let due = self.pending.peek().map(|Reverse((t, ..))| *t);
        let original = match &self.next {
            Some(Ok(c)) => Some(c.at_ns),
            Some(Err(_)) => Some(i64::MIN),
            None => None,
        };
        match (due, original) {
            (Some(t), o) if o.is_none_or(|o| t < o) => {
                self.pending.pop().map(|Reverse((_, _, c))| Ok(c.0))
            }
            (_, None) => None,
            _ => {
                let item = std::mem::replace(&mut self.next, self.inner.next())?;
                if let Ok(c) = &item {
                    self.push_copies(c);
                }
                Some(item)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_workload::OpKind;

    fn op(at_ns: i64, session: &str, key: &str) -> Captured {
        Captured {
            at_ns,
            session: session.into(),
            request: Request::Key {
                command: "GET".into(),
                kind: OpKind::Read,
                key: key.into(),
                value_bytes: 0,
            },
        }
    }

    fn key_of(c: &Captured) -> &str {
        match &c.request {
            Request::Key { key, .. } => key,
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_operation_falls_to_one_client_and_a_session_stays_on_one() {
        let ops: Vec<Captured> = (0..3000)
            .map(|i| op(i, &format!("s{}", i % 97), &format!("k{i}")))
            .collect();
        let mut counts = [0usize; 3];
        for c in &ops {
            let to: Vec<u32> = (0..3).filter(|&i| falls_to(c, i, 3)).collect();
            assert_eq!(to.len(), 1);
            counts[to[0] as usize] += 1;
            // The same session on the same client, whatever its other operations, and there on
            // the same slot.
            assert!(falls_to(&op(0, &c.session, "other"), to[0], 3));
            assert_eq!(slot_of(c, 3, 4), slot_of(&op(9, &c.session, "other"), 3, 4));
        }
        assert!(counts.iter().all(|&n| n > 600), "{counts:?}");
        // Without sessions, by key.
        let a = op(0, "", "user1");
        let to: Vec<u32> = (0..3).filter(|&i| falls_to(&a, i, 3)).collect();
        assert!(falls_to(&op(99, "", "user1"), to[0], 3));
    }

    #[test]
    fn copies_multiply_the_load_over_their_own_keys_in_time_order() {
        let input = vec![
            Ok(op(0, "a", "k1")),
            Ok(op(100, "b", "k2")),
            Ok(op(1000, "a", "k1")),
        ];
        let got: Vec<Captured> = Copies::new(input.into_iter(), 3, 90)
            .map(Result::unwrap)
            .collect();
        let seen: Vec<(i64, &str, &str)> = got
            .iter()
            .map(|c| (c.at_ns, c.session.as_str(), key_of(c)))
            .collect();
        assert_eq!(
            seen,
            [
                (0, "a", "k1"),
                (30, "a#1", "k1#1"),
                (60, "a#2", "k1#2"),
                (100, "b", "k2"),
                (130, "b#1", "k2#1"),
                (160, "b#2", "k2#2"),
                (1000, "a", "k1"),
                (1030, "a#1", "k1#1"),
                (1060, "a#2", "k1#2"),
            ]
        );
        // One copy is the capture itself.
        let one: Vec<_> = Copies::new(vec![Ok(op(5, "a", "k"))].into_iter(), 1, 90).collect();
        assert_eq!(one.len(), 1);
    }
}
