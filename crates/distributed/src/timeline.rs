//! A watched distributed run (`scalebench elastic --clients N`): the clients' timelines merged into
//! the launcher's as they grow, and Dory's request sets shared by the clients. A set of R operations
//! is split over the clients; it ends when every client has finished its share, and the next opens
//! then, for all of them (the launcher says so). Its time is the launcher's, from the opening it
//! sent to the last "done" it received: no clock of another process is read.

use std::collections::BTreeMap;
use std::time::Instant;

use scalebench_exec::{TimelineLog, TimelinePoint};
use scalebench_measure::result::{RequestSet, RequestSets};
use scalebench_measure::RunResult;

/// The launcher's side of a watched run: the merged timeline the controller reads.
pub struct MergedTimeline {
    log: TimelineLog,
    clients: usize,
    /// Request sets (a barrier per set), else intervals (merged by index).
    sets: bool,
    t0: Instant,
    /// Points told by some clients and not yet by all, by index.
    pending: BTreeMap<u64, Pending>,
    /// The index of the next merged point.
    next: u64,
    /// When the set in progress opened.
    set_opened: Instant,
    closed_sets: Vec<RequestSet>,
}

struct Pending {
    /// When each client told it.
    told: Vec<Option<Instant>>,
    merged: TimelinePoint,
}

impl MergedTimeline {
    /// The merged timeline begins at the run's measurement start `t0` (the common start and the
    /// warm-up), as each client's does.
    pub fn begin(log: TimelineLog, clients: usize, sets: bool, t0: Instant) -> MergedTimeline {
        log.begin(t0);
        MergedTimeline {
            log,
            clients,
            sets,
            t0,
            pending: BTreeMap::new(),
            next: 0,
            set_opened: t0,
            closed_sets: Vec::new(),
        }
    }

    /// Client `client` told its point `index` at `now`. Returns the request set to open for every
    /// client when this was the last share of the set before it.
    pub fn told(
        &mut self,
        client: usize,
        index: u64,
        point: &TimelinePoint,
        now: Instant,
    ) -> Option<u64> {
        if client >= self.clients || index < self.next {
            return None;
        }
        let clients = self.clients;
        let p = self.pending.entry(index).or_insert_with(|| Pending {
            told: vec![None; clients],
            merged: TimelinePoint {
                start_s: point.start_s,
                duration_s: 0.0,
                ok: 0,
                failed: 0,
                p99_us: 0.0,
            },
        });
        if p.told[client].is_some() {
            return None;
        }
        p.told[client] = Some(now);
        let m = &mut p.merged;
        m.start_s = m.start_s.min(point.start_s);
        m.duration_s = m.duration_s.max(point.duration_s);
        m.ok += point.ok;
        m.failed += point.failed;
        // Without the clients' histograms the merged p99 is bounded by the worst client's.
        m.p99_us = m.p99_us.max(point.p99_us);
        let mut opened = None;
        while self
            .pending
            .get(&self.next)
            .is_some_and(|p| p.told.iter().all(Option::is_some))
        {
            let p = self.pending.remove(&self.next).expect("present");
            let mut merged = p.merged;
            if self.sets {
                let last = p.told.iter().flatten().max().copied().unwrap_or(now);
                merged.start_s = self.set_opened.duration_since(self.t0).as_secs_f64();
                merged.duration_s = last.duration_since(self.set_opened).as_secs_f64();
                self.closed_sets.push(RequestSet {
                    index: self.next,
                    start_s: merged.start_s,
                    duration_s: merged.duration_s,
                    failed: merged.failed,
                    clients_s: p
                        .told
                        .iter()
                        .flatten()
                        .map(|t| t.duration_since(self.set_opened).as_secs_f64())
                        .collect(),
                });
                self.set_opened = last;
                opened = Some(self.next + 1);
            }
            self.log.push(merged);
            self.next += 1;
        }
        opened
    }

    /// The run's request sets as the clients shared them (sets of `size` in all), for the merged
    /// result: the operations of sets some clients had not finished are its unfinished ones.
    pub fn request_sets(&self, size: u64, clients: &[Option<RunResult>]) -> Option<RequestSets> {
        if !self.sets {
            return None;
        }
        let closed = self.closed_sets.len();
        let of_clients = || {
            clients
                .iter()
                .flatten()
                .filter_map(|r| r.phases.first()?.request_sets.as_ref())
        };
        let unfinished = of_clients()
            .map(|s| s.sets.len().saturating_sub(closed) as u64 * s.size + s.unfinished_ops)
            .sum();
        let mut sets = RequestSets::new(size, self.closed_sets.clone(), unfinished);
        // Every client gave its threads the set's operations alike (one request).
        sets.threads = of_clients().next().map_or(sets.threads, |s| s.threads);
        Some(sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn point(start_s: f64, duration_s: f64, ok: u64, failed: u64) -> TimelinePoint {
        TimelinePoint {
            start_s,
            duration_s,
            ok,
            failed,
            p99_us: 0.0,
        }
    }

    #[test]
    fn a_shared_set_ends_when_the_last_client_finished_its_share_and_opens_the_next() {
        let t0 = Instant::now();
        let log = TimelineLog::new();
        let mut m = MergedTimeline::begin(log.clone(), 2, true, t0);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // Client 1 done with set 0 at 300 ms, client 0 at 500 ms: set 0 took 0.5 s, set 1 opens.
        assert_eq!(m.told(1, 0, &point(0.0, 0.3, 50, 0), at(300)), None);
        assert!(log.points().is_empty());
        assert_eq!(
            m.told(1, 0, &point(0.0, 0.3, 50, 0), at(310)),
            None,
            "told twice"
        );
        assert_eq!(m.told(0, 0, &point(0.0, 0.5, 49, 1), at(500)), Some(1));
        let p = log.points();
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].ok, p[0].failed), (99, 1));
        assert!((p[0].start_s - 0.0).abs() < 1e-9 && (p[0].duration_s - 0.5).abs() < 1e-9);
        // Set 1 from 500 ms: both done by 900 ms.
        assert_eq!(m.told(0, 1, &point(0.5, 0.2, 50, 0), at(700)), None);
        assert_eq!(m.told(1, 1, &point(0.5, 0.4, 50, 0), at(900)), Some(2));
        let p = log.points();
        assert!((p[1].start_s - 0.5).abs() < 1e-9 && (p[1].duration_s - 0.4).abs() < 1e-9);
        let sets = m.request_sets(100, &[]).unwrap();
        assert_eq!(sets.sets.len(), 2);
        assert_eq!(sets.sets[0].clients_s, vec![0.5, 0.3]);
        assert!((sets.mean_s - 0.45).abs() < 1e-9);
    }

    #[test]
    fn intervals_merge_by_index_in_order_whoever_tells_first() {
        let t0 = Instant::now();
        let log = TimelineLog::new();
        let mut m = MergedTimeline::begin(log.clone(), 2, false, t0);
        // Client 0 runs ahead by two intervals: nothing merges until client 1 tells interval 0.
        assert_eq!(m.told(0, 0, &point(0.0, 1.0, 100, 0), t0), None);
        assert_eq!(m.told(0, 1, &point(1.0, 1.0, 120, 2), t0), None);
        assert!(log.points().is_empty());
        m.told(1, 0, &point(0.0, 1.0, 90, 0), t0);
        m.told(1, 1, &point(1.0, 0.9, 80, 1), t0);
        m.told(5, 2, &point(2.0, 1.0, 80, 1), t0);
        let p = log.points();
        assert_eq!(p.len(), 2, "no client 5, no interval 2 yet");
        assert_eq!((p[0].ok, p[1].ok, p[1].failed), (190, 200, 3));
        assert!((p[1].start_s - 1.0).abs() < 1e-9 && (p[1].duration_s - 1.0).abs() < 1e-9);
        assert!(m.request_sets(10, &[]).is_none());
    }
}
