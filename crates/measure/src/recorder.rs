//! The per-worker recorder: owned by one worker thread, never shared, never locked.
//!
//! It does not read clocks: execution hands it the times it measured, as nanoseconds since a common
//! origin (execution's clock), with the measurement start `t0_ns` on the same scale.

use std::sync::mpsc::Sender;
use std::time::Duration;

use scalebench_workload::{FailureClass, Measured, OpError};

use crate::histogram::{new_histogram, LatencyHistogram};

/// What one measured operation (a kind, or a workload file's named operation) did in one interval on one worker.
#[derive(Debug, Clone)]
pub struct OpHistograms {
    /// Service time of successful operations, ns.
    pub ok: LatencyHistogram,
    /// Intended-start latency of successful operations (open loop), ns.
    pub intended: Option<LatencyHistogram>,
    /// Service time of failed operations, per failure class (made on first failure), ns.
    pub failed: [Option<LatencyHistogram>; FailureClass::COUNT],
    pub failed_by_class: [u64; FailureClass::COUNT],
}

impl OpHistograms {
    fn new(open_loop: bool) -> Self {
        OpHistograms {
            ok: new_histogram(),
            intended: open_loop.then(new_histogram),
            failed: Default::default(),
            failed_by_class: [0; FailureClass::COUNT],
        }
    }
}

/// One worker's measurements for one interval, sent to the aggregator when the interval is over.
#[derive(Debug, Clone)]
pub struct IntervalBatch {
    pub worker: usize,
    /// Interval number counted from the measurement start.
    pub index: u64,
    pub ops: Vec<(Measured, OpHistograms)>,
    /// Start delays of open-loop operations, ns.
    pub start_delay: Option<LatencyHistogram>,
    pub late: u64,
    /// Failures seen for the first time by this worker (class, message).
    pub new_errors: Vec<OpError>,
    /// Operations started in the window, by kind. Only in the worker's final batch.
    pub issued: Option<[u64; Measured::COUNT]>,
    /// Successful operations that completed after the end of the window (during the grace period),
    /// by kind. Only in the worker's final batch.
    pub ok_after_window: [u64; Measured::COUNT],
    /// Measured operations started and not yet completed when the batch was shipped.
    pub in_flight: u64,
    /// Records written by batch and single inserts (load accounting); only in the final batch.
    pub records: u64,
    /// Load phase: failed inserts retried (only in the final batch).
    pub retries: u64,
    pub warmup_ops: u64,
    /// Open loop: arrivals scheduled during warm-up that had not started when the measurement began,
    /// dropped (warm-up warms caches; it does not queue work for the measurement).
    pub warmup_backlog_dropped: u64,
}

pub struct Recorder {
    worker: usize,
    t0_ns: u64,
    interval_ns: u64,
    /// End of the current interval (ns), so the hot path compares instead of dividing.
    next_boundary_ns: u64,
    open_loop: bool,
    late_threshold: Duration,
    index: u64,
    ops: [Option<OpHistograms>; Measured::COUNT],
    start_delay: Option<LatencyHistogram>,
    late: u64,
    issued: [u64; Measured::COUNT],
    /// Measured operations recorded (succeeded or failed): issued minus this is in flight.
    completed: u64,
    ok_after_window: [u64; Measured::COUNT],
    records: u64,
    retries: u64,
    warmup_ops: u64,
    warmup_backlog_dropped: u64,
    new_errors: Vec<OpError>,
    /// Distinct messages already reported by this worker, capped to bound memory.
    seen_errors: Vec<(FailureClass, String)>,
    sink: Sender<IntervalBatch>,
}

const MAX_ERROR_SAMPLES: usize = 10;

impl Recorder {
    /// `t0_ns` is the global measurement start; intervals are counted from it.
    pub fn new(
        worker: usize,
        t0_ns: u64,
        interval: Duration,
        open_loop: bool,
        sink: Sender<IntervalBatch>,
    ) -> Self {
        let interval_ns = (interval.as_nanos() as u64).max(1);
        Recorder {
            worker,
            t0_ns,
            interval_ns,
            next_boundary_ns: t0_ns + interval_ns,
            open_loop,
            late_threshold: Duration::from_millis(1),
            index: 0,
            ops: std::array::from_fn(|_| None),
            start_delay: open_loop.then(new_histogram),
            late: 0,
            issued: [0; Measured::COUNT],
            completed: 0,
            ok_after_window: [0; Measured::COUNT],
            records: 0,
            retries: 0,
            warmup_ops: 0,
            warmup_backlog_dropped: 0,
            new_errors: Vec::new(),
            seen_errors: Vec::new(),
            sink,
        }
    }

    /// An operation measured as `kind` starts inside the measurement window.
    #[inline]
    pub fn issue(&mut self, kind: impl Into<Measured>) {
        self.issued[kind.into().index()] += 1;
    }

    /// A measured operation of `kind` succeeded after the end of the window: it counts in latencies
    /// and `ok`, but not in the window's throughput.
    #[inline]
    pub fn ok_after_window(&mut self, kind: impl Into<Measured>) {
        self.ok_after_window[kind.into().index()] += 1;
    }

    /// An operation started during warm-up has completed (counted, not measured).
    #[inline]
    pub fn warmup_done(&mut self) {
        self.warmup_ops += 1;
    }

    /// An arrival scheduled during warm-up had not started when the measurement began: dropped.
    #[inline]
    pub fn drop_warmup_arrival(&mut self) {
        self.warmup_backlog_dropped += 1;
    }

    /// Records written (load accounting).
    #[inline]
    pub fn add_records(&mut self, n: u64) {
        self.records += n;
    }

    /// A failed insert is retried (load phase).
    #[inline]
    pub fn add_retry(&mut self) {
        self.retries += 1;
    }

    /// Records a completed operation. `intended` equals `start` in closed loop.
    #[inline]
    pub fn record(
        &mut self,
        kind: impl Into<Measured>,
        intended_ns: u64,
        start_ns: u64,
        end_ns: u64,
        result: Result<(), &OpError>,
    ) {
        self.advance_to(end_ns);
        self.completed += 1;
        let open_loop = self.open_loop;
        let h = self.ops[kind.into().index()].get_or_insert_with(|| OpHistograms::new(open_loop));
        let service = end_ns.saturating_sub(start_ns);
        match result {
            Ok(()) => {
                h.ok.record(service).expect("auto-resizing histogram");
                if let Some(i) = &mut h.intended {
                    i.record(end_ns.saturating_sub(intended_ns))
                        .expect("auto-resizing histogram");
                }
            }
            Err(e) => {
                h.failed[e.class.index()]
                    .get_or_insert_with(new_histogram)
                    .record(service)
                    .expect("auto-resizing histogram");
                h.failed_by_class[e.class.index()] += 1;
                self.note_error(e);
            }
        }
    }

    /// Open loop: how late an operation started relative to its intended start.
    #[inline]
    pub fn record_start_delay(&mut self, intended_ns: u64, start_ns: u64) {
        let delay = start_ns.saturating_sub(intended_ns);
        if delay > self.late_threshold.as_nanos() as u64 {
            self.late += 1;
        }
        if let Some(h) = &mut self.start_delay {
            h.record(delay).expect("auto-resizing histogram");
        }
    }

    /// Ships the current interval if `now` lies past it (called on timer ticks, so idle workers report too).
    pub fn tick(&mut self, now_ns: u64) {
        self.advance_to(now_ns);
    }

    /// Ships everything measured, with the final counters.
    pub fn finish(mut self) {
        let batch = self.take_batch(true);
        let _ = self.sink.send(batch);
    }

    fn note_error(&mut self, e: &OpError) {
        if self.seen_errors.len() < MAX_ERROR_SAMPLES * FailureClass::COUNT
            && !self
                .seen_errors
                .iter()
                .any(|(c, m)| *c == e.class && *m == e.message)
        {
            self.seen_errors.push((e.class, e.message.clone()));
            self.new_errors.push(e.clone());
        }
    }

    #[inline]
    fn advance_to(&mut self, now_ns: u64) {
        if now_ns < self.next_boundary_ns {
            return;
        }
        let index = (now_ns - self.t0_ns) / self.interval_ns;
        let batch = self.take_batch(false);
        // A closed channel means the aggregator is gone (run aborted): nothing left to report to.
        let _ = self.sink.send(batch);
        self.index = index;
        self.next_boundary_ns = self.t0_ns + (index + 1) * self.interval_ns;
    }

    fn take_batch(&mut self, last: bool) -> IntervalBatch {
        let ops = self
            .ops
            .iter_mut()
            .enumerate()
            .filter_map(|(i, h)| h.take().map(|h| (Measured::from_index(i), h)))
            .collect();
        IntervalBatch {
            worker: self.worker,
            index: self.index,
            ops,
            start_delay: self
                .start_delay
                .as_mut()
                .map(|h| std::mem::replace(h, new_histogram())),
            late: std::mem::take(&mut self.late),
            new_errors: std::mem::take(&mut self.new_errors),
            issued: last.then_some(self.issued),
            in_flight: self
                .issued
                .iter()
                .sum::<u64>()
                .saturating_sub(self.completed),
            ok_after_window: if last {
                self.ok_after_window
            } else {
                [0; Measured::COUNT]
            },
            records: if last { self.records } else { 0 },
            retries: if last { self.retries } else { 0 },
            warmup_ops: std::mem::take(&mut self.warmup_ops),
            warmup_backlog_dropped: std::mem::take(&mut self.warmup_backlog_dropped),
        }
    }
}
