//! The probe's shared bookkeeping: the reads due, the writes being followed, each key's
//! acknowledged versions, and what each figure is counted from.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use scalebench_measure::consistency::{FollowUp, ProbeTally};

use super::history::History;
use super::plan::ProbeError;

/// The writer is process 0, readers 1..=readers.
pub(super) const WRITER: usize = 0;

/// Acknowledged versions kept per key (a read begins at most the horizon after its write's).
pub(super) const ACKS_KEPT: usize = 1024;

/// A chase settles once this many of its reads in a row returned the write.
pub(super) const SETTLED_READS: u32 = 3;

/// What one reader does next: a scheduled read (an index of the plan's delays) or a chasing read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Read {
    Scheduled(usize),
    Chase,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Job {
    pub(super) due: Instant,
    /// Ties broken in the order the jobs were made.
    pub(super) seq: u64,
    pub(super) write: u64,
    pub(super) read: Read,
}

/// An acknowledged write being followed.
pub(super) struct Follow {
    pub(super) key: usize,
    pub(super) version: u64,
    /// When the write was sent (Bermbach & Tai's window runs from it) and acknowledged.
    pub(super) started: Instant,
    pub(super) ack: Instant,
    pub(super) scheduled_left: usize,
    pub(super) chasing: bool,
    /// Starts of the first read that returned the write and of the last that returned an older one.
    pub(super) first_fresh: Option<Instant>,
    pub(super) last_stale: Option<Instant>,
    pub(super) chase_fresh_in_a_row: u32,
}

impl Follow {
    pub(super) fn saw(&mut self, read: u64, started: Instant) {
        if read >= self.version {
            if self.first_fresh.is_none_or(|t| started < t) {
                self.first_fresh = Some(started);
            }
        } else if self.last_stale.is_none_or(|t| started > t) {
            self.last_stale = Some(started);
        }
    }

    /// The chase may end: the write was returned several times in a row, for at least twice as long
    /// after the acknowledgement as the last stale read came (a replica still lagging would most
    /// likely have been read by then).
    pub(super) fn settled(&self, now: Instant) -> bool {
        self.chase_fresh_in_a_row >= SETTLED_READS
            && self.last_stale.is_none_or(|stale| {
                now.saturating_duration_since(self.ack)
                    >= 2 * stale.saturating_duration_since(self.ack)
            })
    }

    pub(super) fn outcome(&self) -> FollowUp {
        let since = |t: Instant| t.saturating_duration_since(self.ack).as_nanos() as u64;
        match self.first_fresh {
            None => FollowUp::NeverSeen,
            Some(fresh) => FollowUp::Seen {
                lag_ns: since(fresh),
                write_ns: self.ack.saturating_duration_since(self.started).as_nanos() as u64,
                last_stale_ns: self.last_stale.map(since),
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// Connecting, writing first versions.
    Setup,
    Measuring,
    /// The writer stopped; follow-ups may go on until then.
    Draining(Instant),
    Over,
}

/// Everything the writer and the readers share, under one lock.
pub(super) struct Shared {
    pub(super) stage: Stage,
    pub(super) tally: ProbeTally,
    pub(super) history: Option<History>,
    pub(super) jobs: BinaryHeap<Reverse<Job>>,
    pub(super) next_seq: u64,
    pub(super) follows: HashMap<u64, Follow>,
    /// Each key's acknowledged versions, oldest first, with when the acknowledgement arrived (the
    /// last [`ACKS_KEPT`]): "the newest version acknowledged when a read began" from them, as the
    /// history's checker decides it.
    pub(super) acks: Vec<std::collections::VecDeque<(u64, Instant)>>,
    /// (process, key) -> the newest version that process saw of that key.
    pub(super) seen: HashMap<(usize, usize), u64>,
    pub(super) readers_connected: usize,
    pub(super) failed: Option<ProbeError>,
    /// Readers of another process than the writer's: reads counted once every acknowledgement
    /// up to their start has been relayed (the writer's acknowledgements are in order, so all of
    /// those up to the newest relayed one are known).
    pub(super) deferred: Option<Vec<ReadDone>>,
}

/// A completed read, to be counted against the versions acknowledged when it began.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadDone {
    pub(super) process: usize,
    pub(super) key: usize,
    /// The version it returned.
    pub(super) version: u64,
    pub(super) started: Instant,
    /// A scheduled read that kept its delay (PBS's k-staleness counts those).
    pub(super) kept_delay: bool,
}

impl Shared {
    pub(super) fn push(&mut self, due: Instant, write: u64, read: Read) {
        self.next_seq += 1;
        self.jobs.push(Reverse(Job {
            due,
            seq: self.next_seq,
            write,
            read,
        }));
    }

    /// The newest version of `key` acknowledged at `instant`.
    pub(super) fn newest_at(&self, key: usize, instant: Instant) -> u64 {
        self.acks[key]
            .iter()
            .rev()
            .find(|(_, ack)| *ack <= instant)
            .map_or(0, |(version, _)| *version)
    }

    /// A completed read: counted (stale against the newest version acknowledged when it began,
    /// and by versions behind it if a scheduled read kept its delay), and checked for monotonic
    /// reads; by a reader of another process, once the acknowledgements up to its start are known.
    pub(super) fn read(&mut self, read: ReadDone) {
        match &mut self.deferred {
            Some(waiting) => waiting.push(read),
            None => self.count_read(read),
        }
    }

    /// Counts the deferred reads that began by `known` (every one with `None`).
    pub(super) fn count_deferred(&mut self, known: Option<Instant>) {
        let Some(waiting) = self.deferred.take() else {
            return;
        };
        let (now, later): (Vec<_>, Vec<_>) = waiting
            .into_iter()
            .partition(|r| known.is_none_or(|k| r.started <= k));
        for read in now {
            self.count_read(read);
        }
        self.deferred = Some(later);
    }

    fn count_read(&mut self, r: ReadDone) {
        let newest = self.newest_at(r.key, r.started);
        self.tally.read(r.version, newest);
        if r.kept_delay {
            self.tally.scheduled_read(r.version, newest);
        }
        let newest_seen = self.seen.entry((r.process, r.key)).or_insert(0);
        self.tally.monotonic_read(r.version < *newest_seen);
        *newest_seen = (*newest_seen).max(r.version);
    }

    /// Follows write `written` (`version` of `key`, sent at `started`, acknowledged at `ack`): a
    /// read at each delay after it (but the first, when the writer's thread reads it at once) and
    /// the chaser.
    pub(super) fn follow(
        &mut self,
        written: u64,
        key: usize,
        version: u64,
        (started, ack): (Instant, Instant),
        delays_ms: &[f64],
        first_read_at_once: bool,
    ) {
        self.follows.insert(
            written,
            Follow {
                key,
                version,
                started,
                ack,
                scheduled_left: delays_ms.len(),
                chasing: true,
                first_fresh: None,
                last_stale: None,
                chase_fresh_in_a_row: 0,
            },
        );
        for (i, d) in delays_ms.iter().enumerate() {
            if i == 0 && first_read_at_once {
                continue;
            }
            self.push(
                ack + Duration::from_secs_f64(d / 1000.0),
                written,
                Read::Scheduled(i),
            );
        }
        self.push(ack, written, Read::Chase);
    }

    pub(super) fn finish_if_done(&mut self, write: u64) {
        if let Some(f) = self.follows.get(&write) {
            if f.scheduled_left == 0 && !f.chasing {
                let outcome = f.outcome();
                self.follows.remove(&write);
                self.tally.followed(outcome);
            }
        }
    }

    /// The phase's end cut what is left: missing scheduled reads counted missed, their writes cut.
    pub(super) fn cut(&mut self) {
        for Reverse(job) in std::mem::take(&mut self.jobs) {
            if let Read::Scheduled(delay) = job.read {
                self.tally.missed(delay);
            }
        }
        for _ in self.follows.drain() {
            self.tally.followed(FollowUp::Cut);
        }
        self.stage = Stage::Over;
    }
}
