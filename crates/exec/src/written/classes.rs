//! The class of a key read back, as Jepsen's set checker classes elements (`jepsen.checker/set`:
//! lost, unexpected, recovered, ok), per register of the key: whether it exists, and each field
//! the phase wrote. The definitions are here once; docs/operations.md says them in words.

use scalebench_workload::{FieldType, Fields};

use super::intent::{value_hash, ABSENT};
use super::record::{KeyRecord, Register, DROPPED_PAST, DROPPED_POSSIBLE, PRESENT};

/// A key's class after the verify pass read it. Each key read back has one: the worst of its
/// registers' (in this order, the best first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Every register holds a write that may be its last acknowledged one (or, where none was
    /// acknowledged, what it held before the phase, where that is known: nothing, for a key the
    /// phase inserted).
    Ok,
    /// `in_doubt`: a register the check cannot judge. Every write of it was of unknown outcome and
    /// none of them is there, so it may hold the value it had before the phase, which the client
    /// does not know (a loaded record's); or the record dropped one of its possible writes for
    /// room (more writes in doubt or overlapping than it keeps). Neither kept nor lost.
    InDoubt,
    /// `recovered`: a register holds the value of a write of unknown outcome (Jepsen's recovered:
    /// a write whose outcome the client did not learn, found applied).
    Recovered,
    /// `lost`: a register misses an acknowledged write: it holds an older value (one the phase
    /// wrote before, or one it did not write: the load's), the key is missing, or it is there
    /// after its acknowledged delete.
    Lost,
    /// `unexpected`: a register holds a value no write ever wrote (Jepsen's unexpected). Told
    /// from lost where the client knows every value the field held: keys the phase inserted
    /// whose record kept every value, and with `dataintegrity` any value (a function of key and
    /// field).
    Unexpected,
}

/// What one register shows.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    Holds,
    Recovered,
    Unjudged,
    Lost(&'static str),
    Unexpected(&'static str),
}

impl Verdict {
    fn class(&self) -> Class {
        match self {
            Verdict::Holds => Class::Ok,
            Verdict::Unjudged => Class::InDoubt,
            Verdict::Recovered => Class::Recovered,
            Verdict::Lost(_) => Class::Lost,
            Verdict::Unexpected(_) => Class::Unexpected,
        }
    }
}

impl Register {
    /// The verdict on this register holding `got` (a value's hash, [`ABSENT`], or for the
    /// presence register [`PRESENT`]). `fresh`: the phase inserted the key, which held nothing
    /// before. `repeats`: its writes may write the value it held before them (the presence
    /// register's two values; `dataintegrity`'s one value per field), so finding the value of a
    /// write of unknown outcome shows nothing unless an acknowledged write overwrote that one.
    pub(super) fn judge(&self, got: u64, fresh: bool, presence: bool, repeats: bool) -> Verdict {
        let (mut acknowledged, mut in_doubt) = (false, false);
        for w in self.possible().filter(|w| w.hash == got) {
            acknowledged |= w.acknowledged();
            in_doubt |= w.in_doubt();
        }
        if acknowledged {
            return Verdict::Holds;
        }
        if !self.acknowledged() {
            // No write of it acknowledged: it may hold what it held before the phase.
            return match () {
                _ if fresh && got == ABSENT => Verdict::Holds,
                _ if in_doubt && (fresh || !repeats) => Verdict::Recovered,
                _ if fresh && !presence && !in_doubt && self.flags == 0 => {
                    Verdict::Unexpected("holds a value never written")
                }
                _ => Verdict::Unjudged,
            };
        }
        if in_doubt {
            return Verdict::Recovered;
        }
        if self.flags & DROPPED_POSSIBLE != 0 {
            return Verdict::Unjudged;
        }
        if got == ABSENT {
            return Verdict::Lost("missing");
        }
        if presence {
            return Verdict::Lost("present after its acknowledged delete");
        }
        if self.writes.iter().any(|w| w.past() && w.hash == got) {
            return Verdict::Lost("holds an older write");
        }
        if fresh && self.flags & DROPPED_PAST == 0 {
            return Verdict::Unexpected("holds a value never written");
        }
        Verdict::Lost("holds a value the run never wrote (the load's, or never written)")
    }
}

/// `dataintegrity`: whether `value` is the one every write of field `f` of `key` stores.
pub(super) type Kept<'a> = &'a dyn Fn(&str, usize, &str) -> bool;

/// How a key judges its fields' values.
pub(super) struct Judge<'a> {
    pub types: &'a [FieldType],
    pub names: &'a [String],
    pub integrity: Option<Kept<'a>>,
}

impl Judge<'_> {
    /// The class of `key` whose record is `record`, read back as `read` (`None`: not found), and
    /// why, when lost or unexpected.
    pub(super) fn key(
        &self,
        key: &str,
        record: &KeyRecord,
        read: Option<&Fields>,
    ) -> (Class, Option<String>) {
        let got = if read.is_some() { PRESENT } else { ABSENT };
        match record.presence.judge(got, record.fresh, true, true) {
            Verdict::Lost(why) => (Class::Lost, Some(why.to_string())),
            Verdict::Unexpected(why) => (Class::Unexpected, Some(why.to_string())),
            v => self.fields(key, record, read, v.class()),
        }
    }

    /// The worst of `so_far` and the fields' verdicts.
    fn fields(
        &self,
        key: &str,
        record: &KeyRecord,
        read: Option<&Fields>,
        so_far: Class,
    ) -> (Class, Option<String>) {
        let mut worst = (so_far, None);
        for (f, register) in &record.fields {
            let f = usize::from(*f);
            let value = read.and_then(|r| r.iter().find(|(i, _)| *i == f).map(|(_, v)| v));
            let got = value.map_or(ABSENT, |v| value_hash(self.types.get(f).copied(), v));
            let name = self.names.get(f).map_or("?", String::as_str);
            let verdict = match (value, self.integrity) {
                (Some(v), Some(kept)) if got != ABSENT && !kept(key, f, v) => {
                    Verdict::Unexpected("holds a value dataintegrity never writes")
                }
                _ => register.judge(got, record.fresh, false, self.integrity.is_some()),
            };
            let class = verdict.class();
            if class > worst.0 {
                let why = match verdict {
                    Verdict::Lost(why) | Verdict::Unexpected(why) => {
                        Some(format!("field {name} {why}"))
                    }
                    _ => None,
                };
                worst = (class, why);
            }
        }
        worst
    }
}
