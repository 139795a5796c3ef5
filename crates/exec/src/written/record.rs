//! The record of one key: per register (whether the key exists, and each field written) the
//! writes that may be what it holds now, and the values it held before them.

use smallvec::SmallVec;

use super::intent::{Effect, ABSENT};

/// The hash of "the key exists" in its presence register (absent is [`ABSENT`]).
pub(super) const PRESENT: u64 = 1;

/// Writes and past values kept per register; beyond, a past value goes first (the register can
/// no longer tell an older value from one never written), then a possible write (it can no
/// longer prove a loss).
const KEPT: usize = 6;

/// A write of unknown outcome: never overwritten for sure (it may still be applied).
const IN_DOUBT: u64 = u64::MAX;
/// A value the register held before a later acknowledged write: no longer possible.
const PAST: u64 = u64::MAX - 1;

/// One write kept: 16 bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Write {
    pub hash: u64,
    /// The acknowledgement's sequence number, or [`IN_DOUBT`], or [`PAST`].
    ack: u64,
}

impl Write {
    pub fn in_doubt(&self) -> bool {
        self.ack == IN_DOUBT
    }
    pub fn past(&self) -> bool {
        self.ack == PAST
    }
    pub fn acknowledged(&self) -> bool {
        !self.in_doubt() && !self.past()
    }
}

/// A possible write was dropped for room: the register proves nothing lost.
pub(super) const DROPPED_POSSIBLE: u8 = 1;
/// A past value was dropped for room: a value not kept may still have been written.
pub(super) const DROPPED_PAST: u8 = 2;

/// One register of a key: whether it exists, or one of its fields.
#[derive(Debug, Default)]
pub(super) struct Register {
    /// The latest start of an acknowledged write (0: none acknowledged; the sequence starts at
    /// 1). Every write acknowledged before it was overwritten by that write (real-time order: a
    /// database that keeps its acknowledgements returns the later one); writes that overlapped it
    /// stay possible. Kept as a maximum, so the order writes are recorded in does not matter.
    pub last_start: u64,
    /// Most registers hold one write: kept inline, no allocation (memory per key in
    /// docs/benchmarks.md, section 17).
    pub writes: SmallVec<[Write; 1]>,
    pub flags: u8,
}

impl Register {
    /// A write of `hash` that began at `start` and was acknowledged at `ack` (`None`: of unknown
    /// outcome). An operation's writes share its `ack`: a later one of the same operation
    /// overwrites an earlier one (its steps run in order).
    pub fn add(&mut self, hash: u64, start: u64, ack: Option<u64>) {
        match ack {
            Some(ack) => {
                self.last_start = self.last_start.max(start);
                for w in &mut self.writes {
                    if w.ack == ack {
                        w.ack = PAST;
                    }
                }
                // One acknowledged write of a value is enough: the latest acknowledged.
                match self
                    .writes
                    .iter_mut()
                    .find(|w| w.acknowledged() && w.hash == hash)
                {
                    Some(w) => w.ack = w.ack.max(ack),
                    None => self.writes.push(Write { hash, ack }),
                }
            }
            None if self.writes.iter().any(|w| w.in_doubt() && w.hash == hash) => {}
            None => self.writes.push(Write {
                hash,
                ack: IN_DOUBT,
            }),
        }
        self.settle();
    }

    /// Moves the writes acknowledged before the latest acknowledged write began to the past,
    /// keeps each past value once, and keeps at most [`KEPT`].
    fn settle(&mut self) {
        for w in &mut self.writes {
            if w.acknowledged() && w.ack < self.last_start {
                w.ack = PAST;
            }
        }
        let mut i = 0;
        while i < self.writes.len() {
            let w = self.writes[i];
            let again = w.past()
                && self
                    .writes
                    .iter()
                    .enumerate()
                    .any(|(j, o)| j != i && o.hash == w.hash && (!o.past() || j < i));
            if again {
                self.writes.remove(i);
            } else {
                i += 1;
            }
        }
        while self.writes.len() > KEPT {
            let (at, flag) = match self.writes.iter().position(Write::past) {
                Some(at) => (at, DROPPED_PAST),
                None => {
                    // The oldest write of unknown outcome, else the earliest acknowledged.
                    let at = self
                        .writes
                        .iter()
                        .position(Write::in_doubt)
                        .unwrap_or_else(|| {
                            (0..self.writes.len())
                                .min_by_key(|&i| self.writes[i].ack)
                                .unwrap_or(0)
                        });
                    (at, DROPPED_POSSIBLE)
                }
            };
            self.writes.remove(at);
            self.flags |= flag;
        }
    }

    /// The writes that may be what the register holds now.
    pub fn possible(&self) -> impl Iterator<Item = &Write> {
        self.writes.iter().filter(|w| !w.past())
    }

    /// Some write of it was acknowledged: what it held before the phase is overwritten.
    pub fn acknowledged(&self) -> bool {
        self.last_start > 0
    }
}

/// A key's record.
#[derive(Debug, Default)]
pub(super) struct KeyRecord {
    /// Whether the key exists: [`PRESENT`] or [`ABSENT`].
    pub presence: Register,
    /// The fields written, by index.
    pub fields: Vec<(u16, Register)>,
    /// The phase inserted the key, its first write: it held nothing before (a run's inserts take
    /// keys nobody wrote, YCSB's insert sequence).
    pub fresh: bool,
}

impl KeyRecord {
    /// A write to this key: `fields` (index and value hash) as `effect` writes them.
    pub fn apply(&mut self, effect: Effect, fields: &[(u16, u64)], start: u64, ack: Option<u64>) {
        if effect == Effect::Insert && self.presence.writes.is_empty() {
            self.fresh = true;
        }
        match effect {
            Effect::Insert | Effect::Update => {
                self.presence.add(PRESENT, start, ack);
                for &(f, hash) in fields {
                    self.field(f).add(hash, start, ack);
                }
            }
            Effect::Delete => {
                self.presence.add(ABSENT, start, ack);
                for (_, r) in &mut self.fields {
                    r.add(ABSENT, start, ack);
                }
            }
        }
    }

    fn field(&mut self, f: u16) -> &mut Register {
        let at = match self.fields.iter().position(|(i, _)| *i == f) {
            Some(at) => at,
            None => {
                // A field first written now takes the key's deletes that may still be its last
                // write: a delete recorded before this write (it ended first) while the two
                // overlapped took the field too, though it had no register then (SQLite lost a
                // field that way in CI: "field2 missing" of a key rightly deleted).
                let mut register = Register::default();
                register.writes.extend(
                    self.presence
                        .possible()
                        .filter(|w| w.hash == ABSENT)
                        .copied(),
                );
                // Room for one at a time: most keys have a field or two written (memory per
                // key in docs/benchmarks.md, section 17).
                self.fields.reserve_exact(1);
                self.fields.push((f, register));
                self.fields.len() - 1
            }
        };
        &mut self.fields[at].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_acknowledged_write_overwrites_the_earlier_and_overlapping_ones_stay() {
        let mut r = Register::default();
        r.add(10, 1, Some(2));
        r.add(11, 3, Some(4));
        let possible: Vec<u64> = r.possible().map(|w| w.hash).collect();
        assert_eq!(possible, [11]);
        assert!(r.writes.iter().any(|w| w.past() && w.hash == 10));
        // Began before 11 was acknowledged: both stay possible.
        r.add(12, 3, Some(5));
        let mut possible: Vec<u64> = r.possible().map(|w| w.hash).collect();
        possible.sort_unstable();
        assert_eq!(possible, [11, 12]);
        // Recorded late, acknowledged before 11 and 12 began: overwritten all the same.
        r.add(13, 0, Some(2));
        assert!(!r.possible().any(|w| w.hash == 13));
    }

    #[test]
    fn an_operations_later_write_overwrites_its_earlier_one() {
        let mut k = KeyRecord::default();
        k.apply(Effect::Update, &[(0, 20)], 5, Some(9));
        k.apply(Effect::Delete, &[], 5, Some(9));
        let presence: Vec<u64> = k.presence.possible().map(|w| w.hash).collect();
        assert_eq!(presence, [ABSENT]);
        let field: Vec<u64> = k.fields[0].1.possible().map(|w| w.hash).collect();
        assert_eq!(field, [ABSENT]);
    }

    #[test]
    fn room_is_made_from_the_past_first_then_from_the_writes_in_doubt() {
        let mut r = Register::default();
        for i in 0..4u64 {
            r.add(100 + i, 10 * i + 1, Some(10 * i + 2));
        }
        for i in 0..4u64 {
            r.add(200 + i, 50, None);
        }
        assert_eq!(r.writes.len(), KEPT);
        assert_eq!(r.flags & DROPPED_PAST, DROPPED_PAST);
        assert_eq!(r.flags & DROPPED_POSSIBLE, 0);
        for i in 4..8u64 {
            r.add(200 + i, 60, None);
        }
        assert_eq!(r.flags & DROPPED_POSSIBLE, DROPPED_POSSIBLE);
        assert!(
            r.possible().any(|w| w.hash == 103),
            "the acknowledged write is kept"
        );
    }
}
