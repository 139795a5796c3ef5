//! The consistency probe's figures as words, one home for their names: the terminal summary, the
//! run page's table and `results show` say the same thing in the same words (docs/consistency.md
//! defines each).

use scalebench_measure::consistency::{ConsistencyResult, KStaleness};
use scalebench_measure::result::LatencySummary;

/// What each figure is called wherever it is shown (the JSON field in brackets in the docs).
pub const STALE_SHARE: &str = "stale share";
pub const K_STALENESS: &str = "k-staleness (PBS)";
pub const T_VISIBILITY: &str = "t-visibility (PBS)";
pub const LAG: &str = "read-after-write lag (YCSB++)";
pub const WINDOW: &str = "staleness window (Bermbach & Tai)";
pub const STALE_WRITES: &str = "writes with a stale read";

/// The probe's figures as (name, value) rows, each value saying what it rests on.
pub fn rows(c: &ConsistencyResult) -> Vec<(String, String)> {
    let mut rows = vec![
        (
            "probe writes".to_string(),
            format!(
                "{} of {} planned ({} writes/s over {} keys, each rewritten every {:.0} ms), {} failed",
                c.probe_writes,
                c.probe_writes_planned,
                c.probe_rate,
                c.probe_keys,
                c.rewrite_period_ms,
                c.probe_writes_failed
            ),
        ),
        (STALE_SHARE.to_string(), stale_share(c)),
        (
            "stale reads, all".to_string(),
            format!(
                "{} of {} ({}), the chaser's included; {} failed; {} scheduled reads missed their delay",
                c.stale_reads,
                c.probe_reads,
                percent(c.stale_reads, c.probe_reads),
                c.probe_reads_failed,
                c.missed_reads()
            ),
        ),
        (K_STALENESS.to_string(), k_staleness(c)),
        (T_VISIBILITY.to_string(), t_visibility(c)),
        (
            STALE_WRITES.to_string(),
            format!(
                "{} of {} followed ({} cut by the end)",
                c.stale_writes, c.followed_writes, c.cut_writes
            ),
        ),
        (
            LAG.to_string(),
            match &c.read_after_write_lag_us {
                Some(l) => format!(
                    "{} over the {} writes seen: the acknowledgement to the first read returning the write",
                    summary(l),
                    l.count
                ),
                None => "no write was seen".into(),
            },
        ),
        (
            WINDOW.to_string(),
            match &c.staleness_window_from_write_us {
                Some(w) => format!(
                    "{} over the same writes: the write's start to the last read returning an older version (0 without one)",
                    summary(w)
                ),
                None => "no write was seen".into(),
            },
        ),
    ];
    match (&c.stale_write_lag_us, &c.stale_write_window_from_ack_us) {
        (Some(lag), Some(window)) => rows.push((
            format!("{STALE_WRITES}: lag; window from the acknowledgement"),
            format!("{}; {}", summary(lag), summary(window)),
        )),
        _ => rows.push((
            format!("{STALE_WRITES}: lag; window from the acknowledgement"),
            format!(
                "none: no stale read among {} followed writes",
                c.followed_writes
            ),
        )),
    }
    rows.extend([
        (
            format!("never seen within {} ms", c.horizon_ms),
            format!("{} ({:.2}%)", c.never_seen, 100.0 * c.never_seen_fraction),
        ),
        (
            "read-your-writes violated".to_string(),
            format!(
                "{} of {}",
                c.read_your_writes.violations, c.read_your_writes.checks
            ),
        ),
        (
            "monotonic reads violated".to_string(),
            format!(
                "{} of {}",
                c.monotonic_reads.violations, c.monotonic_reads.checks
            ),
        ),
    ]);
    rows
}

/// The headline: the stale share at the first delay most of its reads kept, or n/a and why.
pub fn stale_share(c: &ConsistencyResult) -> String {
    match c.stale_share() {
        Ok(s) => format!(
            "{:.2}% of the reads {} ms after the acknowledgement ({} of {}, one per write; 95% CI {:.2}-{:.2}%)",
            100.0 * s.fraction,
            s.delay_ms,
            s.stale,
            s.reads,
            100.0 * s.ci_low,
            100.0 * s.ci_high
        ),
        Err(why) => format!("n/a: {why}"),
    }
}

/// PBS's k-staleness: the share within the k newest versions at each k where it grows.
pub fn k_staleness(c: &ConsistencyResult) -> String {
    let Some(last) = c.pbs_k_staleness.last() else {
        return "n/a: no scheduled read kept its delay".into();
    };
    let point = |p: &KStaleness| format!("k = {} {:.2}%", p.k, 100.0 * p.fraction);
    let shown: Vec<String> = if c.pbs_k_staleness.len() > 6 {
        c.pbs_k_staleness[..5]
            .iter()
            .map(point)
            .chain(std::iter::once(format!("... {}", point(last))))
            .collect()
    } else {
        c.pbs_k_staleness.iter().map(point).collect()
    };
    format!(
        "{} of {} scheduled reads within the k newest versions (k = 1: the newest; a version every {:.0} ms per key)",
        shown.join(", "),
        last.reads,
        c.rewrite_period_ms
    )
}

fn t_visibility(c: &ConsistencyResult) -> String {
    let points: Vec<String> = c
        .t_visibility
        .iter()
        .map(|p| {
            if p.samples == 0 {
                format!("{} ms -", p.delay_ms)
            } else {
                format!(
                    "{} ms {:.1}% of {}",
                    p.delay_ms,
                    100.0 * p.consistent_fraction,
                    p.samples
                )
            }
        })
        .collect();
    format!(
        "reads returning the write, by delay after the acknowledgement: {}",
        points.join(", ")
    )
}

fn summary(s: &LatencySummary) -> String {
    format!(
        "p50 {:.0} us, p99 {:.0} us, max {:.0} us",
        s.p50_us, s.p99_us, s.max_us
    )
}

fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        "-".to_string()
    } else {
        format!("{:.2}%", 100.0 * n as f64 / of as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalebench_measure::consistency::{FollowUp, ProbeTally};

    #[test]
    fn every_figure_has_its_row_by_its_name() {
        let mut t = ProbeTally::new(50.0, 8, &[0.0, 0.1], 1000.0);
        t.write(true);
        t.scheduled(0, false);
        t.scheduled_read(4, 5);
        t.scheduled(1, true);
        t.scheduled_read(5, 5);
        t.followed(FollowUp::Seen {
            lag_ns: 150_000,
            write_ns: 1_000_000,
            last_stale_ns: Some(50_000),
        });
        let rows = rows(&t.result());
        let value = |name: &str| {
            rows.iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("no {name}: {rows:?}"))
                .1
                .clone()
        };
        assert!(value(STALE_SHARE).starts_with("100.00% of the reads 0 ms"));
        assert!(value(K_STALENESS).starts_with("k = 1 50.00%, k = 2 100.00% of 2"));
        assert!(value(LAG).starts_with("p50 150 us"), "{rows:?}");
        // 1.05 ms from the write's start, to HDR's 3 significant digits.
        assert!(value(WINDOW).starts_with("p50 105"), "{rows:?}");
        assert_eq!(value(STALE_WRITES), "1 of 1 followed (0 cut by the end)");
    }
}
