//! Two figures read off the probe's scheduled reads: PBS's k-staleness, and the stale share a
//! summary leads with (at the first delay enough of whose reads kept it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{wilson, VisibilityPoint};

/// PBS's k-staleness at one k (Bailis et al., VLDB 2012, definition 3: with what probability a
/// read returns a value within k versions of the latest committed one when it began; k = 1 is the
/// latest): of the scheduled reads that kept their delay, the share that returned one of the k
/// newest versions of their key acknowledged when they began, with its 95% Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KStaleness {
    pub k: u64,
    pub reads: u64,
    /// Reads that returned one of the k newest versions (at most k - 1 versions behind).
    pub within: u64,
    pub fraction: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Entries of the k-staleness list at most (a cut-off replica falls further behind every write):
/// past it, the list keeps its first entries and the last.
pub const MAX_K_ENTRIES: usize = 64;

impl KStaleness {
    /// The step function from reads counted by versions behind (0: the newest): one entry at k = 1
    /// and one at each k where the share grows (b + 1 for each b read), the last at 1. Empty
    /// without reads.
    pub fn curve(behind: &BTreeMap<u64, u64>) -> Vec<KStaleness> {
        let reads: u64 = behind.values().sum();
        if reads == 0 {
            return Vec::new();
        }
        let mut ks: Vec<u64> = std::iter::once(1)
            .chain(behind.keys().map(|b| b + 1))
            .collect();
        ks.dedup();
        if ks.len() > MAX_K_ENTRIES {
            let last = ks[ks.len() - 1];
            ks.truncate(MAX_K_ENTRIES - 1);
            ks.push(last);
        }
        ks.into_iter()
            .map(|k| {
                let within: u64 = behind.range(..k).map(|(_, n)| n).sum();
                let (ci_low, ci_high) = wilson(within, reads);
                KStaleness {
                    k,
                    reads,
                    within,
                    fraction: within as f64 / reads as f64,
                    ci_low,
                    ci_high,
                }
            })
            .collect()
    }
}

/// The stale share at one delay: one read per probe write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaleFraction {
    pub delay_ms: f64,
    pub reads: u64,
    pub stale: u64,
    pub fraction: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

impl StaleFraction {
    pub fn of(p: &VisibilityPoint) -> StaleFraction {
        let stale = p.samples - p.consistent();
        let (ci_low, ci_high) = wilson(stale, p.samples);
        StaleFraction {
            delay_ms: p.delay_ms,
            reads: p.samples,
            stale,
            fraction: 1.0 - p.consistent_fraction,
            ci_low,
            ci_high,
        }
    }
}

impl VisibilityPoint {
    /// At least half of this delay's scheduled reads kept it (and one did). Below that its reads
    /// are the few that happened to start in time (a reader client's at 0 ms: those whose relayed
    /// acknowledgement arrived at once), not a sample of the writes.
    pub fn kept_by_most(&self) -> bool {
        self.samples > 0 && self.samples >= self.missed
    }
}

/// The headline stale share of a t-visibility curve: at its first delay [`kept by most`] of its
/// reads; why there is none otherwise.
///
/// [`kept by most`]: VisibilityPoint::kept_by_most
pub fn headline(points: &[VisibilityPoint]) -> Result<StaleFraction, String> {
    if let Some(p) = points.iter().find(|p| p.kept_by_most()) {
        return Ok(StaleFraction::of(p));
    }
    if points.iter().all(|p| p.samples + p.missed == 0) {
        return Err("no probe write was followed".into());
    }
    let kept: Vec<String> = points
        .iter()
        .map(|p| {
            format!(
                "{} ms: {} of {}",
                p.delay_ms,
                p.samples,
                p.samples + p.missed
            )
        })
        .collect();
    Err(format!(
        "no delay was kept by half of its reads ({})",
        kept.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn behind(counts: &[(u64, u64)]) -> BTreeMap<u64, u64> {
        counts.iter().copied().collect()
    }

    /// PBS's k counts from 1, the newest: a read two versions behind is within k = 3, not k = 2.
    #[test]
    fn a_read_two_versions_behind_is_within_three_versions_not_two() {
        let curve = KStaleness::curve(&behind(&[(2, 1)]));
        let at = |k: u64| curve.iter().find(|p| p.k == k).map(|p| p.within);
        assert_eq!(curve.len(), 2, "{curve:?}");
        assert_eq!(at(1), Some(0));
        assert_eq!(at(3), Some(1));
        assert_eq!(curve.last().unwrap().fraction, 1.0);
    }

    #[test]
    fn the_curve_is_the_share_within_k_with_its_interval() {
        // 90 reads of the newest, 8 one behind, 2 three behind.
        let curve = KStaleness::curve(&behind(&[(0, 90), (1, 8), (3, 2)]));
        let ks: Vec<(u64, u64, u64)> = curve.iter().map(|p| (p.k, p.within, p.reads)).collect();
        assert_eq!(ks, [(1, 90, 100), (2, 98, 100), (4, 100, 100)]);
        assert_eq!(curve[0].fraction, 0.9);
        assert!(curve[0].ci_low < 0.9 && curve[0].ci_high > 0.9);
        // Every read the newest: one entry, k = 1 at 1 exactly.
        let fresh = KStaleness::curve(&behind(&[(0, 7)]));
        assert_eq!(fresh.len(), 1);
        assert_eq!((fresh[0].k, fresh[0].fraction), (1, 1.0));
        assert!(KStaleness::curve(&BTreeMap::new()).is_empty());
    }

    #[test]
    fn a_replica_ever_further_behind_keeps_the_list_bounded() {
        let counts: Vec<(u64, u64)> = (0..500).map(|b| (b, 1)).collect();
        let curve = KStaleness::curve(&behind(&counts));
        assert_eq!(curve.len(), MAX_K_ENTRIES);
        assert_eq!(curve.last().unwrap().k, 500);
        assert_eq!(curve.last().unwrap().fraction, 1.0);
    }

    fn point(delay_ms: f64, samples: u64, consistent: u64, missed: u64) -> VisibilityPoint {
        VisibilityPoint {
            missed,
            ..VisibilityPoint::of_counts(delay_ms, samples, consistent)
        }
    }

    /// Issue 61: a reader client's 0 ms reads are the few whose relayed acknowledgement came in
    /// time; its headline is at the first delay most reads kept.
    #[test]
    fn the_headline_is_at_the_first_delay_most_reads_kept() {
        let reader = [
            point(0.0, 3, 3, 497),
            point(0.1, 400, 278, 100),
            point(0.5, 500, 400, 0),
        ];
        let s = headline(&reader).unwrap();
        assert_eq!((s.delay_ms, s.reads, s.stale), (0.1, 400, 122));
        assert!((s.fraction - 0.305).abs() < 1e-9);
        let writer = [point(0.0, 300, 200, 200), point(0.1, 500, 500, 0)];
        assert_eq!(headline(&writer).unwrap().delay_ms, 0.0);
        let none = [point(0.0, 3, 3, 497), point(0.1, 10, 10, 490)];
        let why = headline(&none).unwrap_err();
        assert!(why.contains("0 ms: 3 of 500, 0.1 ms: 10 of 500"), "{why}");
        let nothing = [point(0.0, 0, 0, 0)];
        assert_eq!(
            headline(&nothing).unwrap_err(),
            "no probe write was followed"
        );
    }
}
