//! Whether a result is one scalebench could have written: read results are checked before
//! anything adds, compares or reports them.

use super::{PhaseResult, RunResult, MAX_COUNT, MAX_SECONDS, SCHEMA};

impl RunResult {
    /// Whether the result is one scalebench could have written: its schema, at least one phase,
    /// and in each phase positive finite lengths, counts within [`MAX_COUNT`] that add up (the
    /// totals are the sums of the operations', nothing completed in the window after it ended),
    /// and throughputs that are the counts over the window. A tampered or corrupted file fails
    /// here, naming the field, before anything adds it to another.
    pub fn validate(&self) -> Result<(), String> {
        if self.schema != SCHEMA {
            return Err(format!(
                "unsupported schema '{}', expected '{SCHEMA}'",
                self.schema
            ));
        }
        if self.phases.is_empty() {
            return Err("the result has no phase".into());
        }
        let interval = self.parameters.interval_s;
        if !(interval.is_finite() && interval > 0.0 && interval <= MAX_SECONDS) {
            return Err(format!(
                "parameters.interval_s is {interval}: expected a positive length"
            ));
        }
        if let Some(c) = &self.client {
            if c.clients == 0 || c.index >= c.clients {
                return Err(format!(
                    "client {} of {} is no client of a run",
                    c.index, c.clients
                ));
            }
        }
        for p in &self.phases {
            p.validate()
                .map_err(|e| format!("phase {}: {e}", p.phase))?;
        }
        Ok(())
    }
}

impl PhaseResult {
    /// See [`RunResult::validate`].
    pub fn validate(&self) -> Result<(), String> {
        let length = |name: &str, v: f64, zero_ok: bool| {
            let ok = v.is_finite() && v <= MAX_SECONDS && (v > 0.0 || (zero_ok && v == 0.0));
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "{name} is {v}: expected a {} length of at most 30 days",
                    if zero_ok { "non-negative" } else { "positive" }
                ))
            }
        };
        length("interval_s", self.interval_s, false)?;
        length("duration_s", self.duration_s, true)?;
        if let Some(r) = self.recorded_interval_s {
            length("recorded_interval_s", r, false)?;
        }
        // As many intervals as the window holds (the last one partial), each at least the 1 ms
        // a run may ask for: a 2 s phase of 20,000 intervals cost a merge 6 s and 259 MB.
        let most = (self.duration_s / self.interval_s.max(0.001)).ceil() + 1.0;
        if self.intervals.len() as f64 > most {
            return Err(format!(
                "{} intervals of {} s in a window of {} s: at most {most} fit",
                self.intervals.len(),
                self.interval_s,
                self.duration_s
            ));
        }
        if self.clients == 0 {
            return Err("clients is 0".into());
        }
        let count = |name: &str, n: u64| {
            if n <= MAX_COUNT {
                Ok(n)
            } else {
                Err(format!("{name} is {n}: more than 2^53 cannot be a count"))
            }
        };
        let t = &self.totals;
        for (name, n) in [
            ("totals.issued", t.issued),
            ("totals.ok", t.ok),
            ("totals.failed", t.failed),
            ("totals.in_flight_at_stop", t.in_flight_at_stop),
            ("totals.ok_after_window", t.ok_after_window),
            ("totals.records", t.records),
            ("totals.retries", t.retries),
            ("warmup_operations", self.warmup_operations),
        ] {
            count(name, n)?;
        }
        for (class, e) in &self.errors {
            count(&format!("errors.{class}.count"), e.count)?;
        }
        if let Some(s) = &self.schedule {
            count("schedule.late_operations", s.late_operations)?;
            count("schedule.warmup_backlog_dropped", s.warmup_backlog_dropped)?;
        }
        let (mut issued, mut ok, mut failed) = (0u64, 0u64, 0u64);
        for (name, o) in &self.operations {
            count(&format!("operations.{name}.issued"), o.issued)?;
            count(&format!("operations.{name}.ok"), o.ok)?;
            let mut op_failed = 0u64;
            for (class, n) in &o.failed {
                op_failed += count(&format!("operations.{name}.failed.{class}"), *n)?;
            }
            // Each below 2^53, and at most a handful of operations and classes: no overflow.
            issued += o.issued;
            ok += o.ok;
            failed += op_failed;
            let window_ok = o.throughput_ops_s * self.duration_s;
            if !(o.throughput_ops_s.is_finite() && o.throughput_ops_s >= 0.0)
                || window_ok > o.ok as f64 + 0.5
            {
                return Err(format!(
                    "operations.{name}.throughput_ops_s is {}: more than its {} successes over {} s",
                    o.throughput_ops_s, o.ok, self.duration_s
                ));
            }
        }
        for (name, sum, total) in [
            ("issued", issued, t.issued),
            ("ok", ok, t.ok),
            ("failed", failed, t.failed),
        ] {
            if sum != total {
                return Err(format!(
                    "totals.{name} is {total} where its operations add up to {sum}"
                ));
            }
        }
        if t.ok_after_window > t.ok {
            return Err(format!(
                "totals.ok_after_window is {} of {} successes",
                t.ok_after_window, t.ok
            ));
        }
        let expected = self.window_throughput();
        let off = (t.throughput_ops_s - expected).abs();
        if !t.throughput_ops_s.is_finite() || off > 1e-6 * expected.max(1.0) {
            return Err(format!(
                "totals.throughput_ops_s is {} where its successes in the window over its duration are {expected}",
                t.throughput_ops_s
            ));
        }
        for iv in &self.intervals {
            if !(iv.start_s.is_finite() && (0.0..=MAX_SECONDS).contains(&iv.start_s)) {
                return Err(format!("an interval starts at {} s", iv.start_s));
            }
            for (name, o) in &iv.operations {
                count(&format!("intervals.{name}.ok"), o.ok)?;
                count(&format!("intervals.{name}.failed"), o.failed)?;
            }
        }
        Ok(())
    }

    /// Successes completed inside the measurement window per second of it, from the counts (0 for
    /// a phase without duration, as the aggregator writes it).
    pub fn window_throughput(&self) -> f64 {
        let t = &self.totals;
        if self.duration_s > 0.0 {
            t.ok.saturating_sub(t.ok_after_window) as f64 / self.duration_s
        } else {
            0.0
        }
    }
}
