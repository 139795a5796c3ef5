//! A service level for operations under load (`--sla FILE`): thresholds per operation on the
//! event figures ([`crate::impact`]), and the verdict of each event against them. ScyllaDB's test
//! framework keeps such a matrix for its own operations (p99 during a decommission at most 3x its
//! baseline, recovery within 10 minutes); here it is one file for every database.
//!
//! ```toml
//! [default]                 # every operation
//! p99_impact = 3.0
//! recovery_s = 600
//! lost_writes = 0           # the default even without the line
//!
//! [operation.fail-primary]  # this operation: these replace the defaults they name
//! p99_impact = 20.0
//! availability_pct = 80
//!
//! [run]                     # every measured phase of `run`, `load` and an experiment's cells
//! thresholds = ["read.p99 < 10ms", "errors < 0.1%", "throughput >= 1000"]
//! ```
//!
//! `[run]`'s thresholds are k6's kind, on a phase's own figures (scalebench_measure::thresholds);
//! the sections above are on the events of `elastic`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::impact::EventFigures;
use scalebench_deploy::OperationKind;

/// Thresholds one event must meet; an absent one is not judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// The event's p99 over the baseline's (pooled against pooled), at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_impact: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_impact: Option<f64>,
    /// The event's worst interval p99 over the baseline's expected worst of as many, at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_p99_impact: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_p999_impact: Option<f64>,
    /// Seconds from the action to stability, at most (an event that never recovered fails it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
    /// Operations lost below the baseline's rate, percent of what it would have done, at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_lost_pct: Option<f64>,
    /// Intervals of the event without a failed operation, percent, at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability_pct: Option<f64>,
    /// Reads the consistency probe found stale during the run, at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reads: Option<u64>,
    /// Keys written that do not hold what they must after the operation, lost or holding a
    /// value never written (`unexpected`), at most (default 0: judged whenever the writes were
    /// verified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_writes: Option<u64>,
}

impl Thresholds {
    /// `self` with `over`'s thresholds where it names them.
    fn overridden_by(&self, over: &Thresholds) -> Thresholds {
        Thresholds {
            p99_impact: over.p99_impact.or(self.p99_impact),
            p999_impact: over.p999_impact.or(self.p999_impact),
            worst_p99_impact: over.worst_p99_impact.or(self.worst_p99_impact),
            worst_p999_impact: over.worst_p999_impact.or(self.worst_p999_impact),
            recovery_s: over.recovery_s.or(self.recovery_s),
            throughput_lost_pct: over.throughput_lost_pct.or(self.throughput_lost_pct),
            availability_pct: over.availability_pct.or(self.availability_pct),
            stale_reads: over.stale_reads.or(self.stale_reads),
            lost_writes: over.lost_writes.or(self.lost_writes),
        }
    }

    /// The first threshold out of its range, as `name = value: why`.
    fn out_of_range(&self) -> Option<String> {
        let impact = [
            ("p99_impact", self.p99_impact),
            ("p999_impact", self.p999_impact),
            ("worst_p99_impact", self.worst_p99_impact),
            ("worst_p999_impact", self.worst_p999_impact),
        ];
        for (name, v) in impact {
            if let Some(v) = v.filter(|v| !(1.0..=1e6).contains(v)) {
                return Some(format!(
                    "{name} = {v}: an impact factor is from 1 (no worse than the baseline) to 1e6"
                ));
            }
        }
        if let Some(v) = self
            .recovery_s
            .filter(|v| !(*v > 0.0 && *v <= 7.0 * 86_400.0))
        {
            return Some(format!(
                "recovery_s = {v}: expected seconds, more than 0 and at most a week"
            ));
        }
        let pct = [
            ("throughput_lost_pct", self.throughput_lost_pct),
            ("availability_pct", self.availability_pct),
        ];
        for (name, v) in pct {
            if let Some(v) = v.filter(|v| !(0.0..=100.0).contains(v)) {
                return Some(format!("{name} = {v}: expected a percentage from 0 to 100"));
            }
        }
        None
    }
}

/// A service-level file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceLevel {
    #[serde(default)]
    pub default: Thresholds,
    #[serde(default)]
    pub operation: BTreeMap<String, Thresholds>,
    #[serde(default, skip_serializing_if = "RunLevel::is_empty")]
    pub run: RunLevel,
}

/// Thresholds on a phase's own figures (`[run]`), as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLevel {
    #[serde(default)]
    pub thresholds: Vec<String>,
}

impl RunLevel {
    fn is_empty(&self) -> bool {
        self.thresholds.is_empty()
    }

    /// The thresholds, read (checked when the file was).
    pub fn parsed(&self) -> Vec<scalebench_measure::thresholds::Threshold> {
        self.thresholds
            .iter()
            .filter_map(|t| t.parse().ok())
            .collect()
    }
}

impl ServiceLevel {
    /// Parses and checks a file's text; the error is one line naming the bad value.
    pub fn from_toml(text: &str) -> Result<ServiceLevel, String> {
        // The line and the key on it, never a line of a file that is not TOML (issue 62).
        let sl: ServiceLevel = toml::from_str(text)
            .map_err(|e| scalebench_workload::toml_error::TomlError::of(text, &e).to_string())?;
        for name in sl.operation.keys() {
            if OperationKind::parse(name).is_none() {
                let names: Vec<&str> = OperationKind::ALL.iter().map(|o| o.name()).collect();
                return Err(format!(
                    "[operation.{name}]: no such operation (expected one of {})",
                    names.join(", ")
                ));
            }
        }
        for t in &sl.run.thresholds {
            t.parse::<scalebench_measure::thresholds::Threshold>()
                .map_err(|why| format!("[run] {why}"))?;
        }
        if let Some(why) = sl.default.out_of_range() {
            return Err(format!("[default] {why}"));
        }
        for (name, t) in &sl.operation {
            if let Some(why) = t.out_of_range() {
                return Err(format!("[operation.{name}] {why}"));
            }
        }
        Ok(sl)
    }

    /// The thresholds of `operation`: its section over the defaults, lost writes 0 unless set.
    pub fn thresholds(&self, operation: OperationKind) -> Thresholds {
        let mut t = match self.operation.get(operation.name()) {
            Some(own) => self.default.overridden_by(own),
            None => self.default.clone(),
        };
        t.lost_writes.get_or_insert(0);
        t
    }
}

/// One threshold judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The figure's name, as the file names the threshold.
    pub figure: String,
    pub limit: f64,
    /// What was measured; absent when it could not be (never recovered, no baseline latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    pub passed: bool,
}

/// One event against the service level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub operation: String,
    pub passed: bool,
    pub checks: Vec<Check>,
}

/// What else an event is judged on beside its figures: counts measured over the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCounts {
    pub stale_reads: Option<u64>,
    /// Keys the verify pass found not holding what they must: lost and unexpected
    /// (`LostWrites::failed`).
    pub lost_writes: Option<u64>,
}

/// Judges one event of `operation`. A threshold on a figure that was not measured (no probe, no
/// verified writes) is left out; one on a figure that could not be measured (the event never
/// recovered, so no recovery time) fails: a level that cannot be shown met is not met.
pub fn judge(
    level: &ServiceLevel,
    operation: OperationKind,
    figures: Option<&EventFigures>,
    counts: RunCounts,
) -> Verdict {
    let t = level.thresholds(operation);
    let mut checks = Vec::new();
    let mut at_most = |figure: &str, limit: Option<f64>, value: Option<f64>| {
        if let Some(limit) = limit {
            checks.push(Check {
                figure: figure.into(),
                limit,
                value,
                passed: value.is_some_and(|v| v <= limit),
            });
        }
    };
    for (figure, limit, value) in [
        (
            "p99_impact",
            t.p99_impact,
            figures.and_then(|f| f.p99_impact),
        ),
        (
            "p999_impact",
            t.p999_impact,
            figures.and_then(|f| f.p999_impact),
        ),
        (
            "worst_p99_impact",
            t.worst_p99_impact,
            figures.and_then(|f| f.worst_p99_impact),
        ),
        (
            "worst_p999_impact",
            t.worst_p999_impact,
            figures.and_then(|f| f.worst_p999_impact),
        ),
    ] {
        at_most(figure, limit, value);
    }
    at_most(
        "recovery_s",
        t.recovery_s,
        figures.and_then(|f| f.recovery_s),
    );
    at_most(
        "throughput_lost_pct",
        t.throughput_lost_pct,
        figures.map(|f| f.throughput_lost_pct),
    );
    if let Some(reads) = counts.stale_reads {
        at_most(
            "stale_reads",
            t.stale_reads.map(|v| v as f64),
            Some(reads as f64),
        );
    }
    if let Some(lost) = counts.lost_writes {
        at_most(
            "lost_writes",
            t.lost_writes.map(|v| v as f64),
            Some(lost as f64),
        );
    }
    if let Some(limit) = t.availability_pct {
        let value = figures.map(|f| f.availability_pct);
        checks.push(Check {
            figure: "availability_pct".into(),
            limit,
            value,
            passed: value.is_some_and(|v| v >= limit),
        });
    }
    Verdict {
        operation: operation.name().into(),
        passed: checks.iter().all(|c| c.passed),
        checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_override_the_defaults_and_lost_writes_default_to_zero() {
        let sl = ServiceLevel::from_toml(
            "[default]\np99_impact = 3.0\nrecovery_s = 600\n[operation.fail-primary]\np99_impact = 20\navailability_pct = 80\n",
        )
        .unwrap();
        let t = sl.thresholds(OperationKind::FailPrimary);
        assert_eq!(t.p99_impact, Some(20.0));
        assert_eq!(t.recovery_s, Some(600.0));
        assert_eq!(t.availability_pct, Some(80.0));
        assert_eq!(t.lost_writes, Some(0));
        assert_eq!(sl.thresholds(OperationKind::Restart).p99_impact, Some(3.0));
    }

    #[test]
    fn the_shipped_file_is_a_service_level() {
        let sl = ServiceLevel::from_toml(include_str!(
            "../../../examples/service-levels/operations.toml"
        ))
        .unwrap();
        assert_eq!(sl.thresholds(OperationKind::Restart).p99_impact, Some(3.0));
        assert_eq!(
            sl.thresholds(OperationKind::FailPrimary).recovery_s,
            Some(60.0)
        );
        assert_eq!(sl.thresholds(OperationKind::Crash).lost_writes, Some(0));
    }

    #[test]
    fn bad_files_name_the_bad_value() {
        for (text, says) in [
            ("[default]\np99_impact = 0.5\n", "p99_impact = 0.5"),
            ("[default]\nrecovery_s = -1\n", "recovery_s = -1"),
            (
                "[operation.crash]\navailability_pct = 120\n",
                "[operation.crash] availability_pct = 120",
            ),
            (
                "[operation.explode]\n",
                "[operation.explode]: no such operation",
            ),
            ("[default]\np99 = 3\n", "unknown field `p99`"),
            ("[default]\nlost_writes = -1\n", "lost_writes"),
        ] {
            let e = ServiceLevel::from_toml(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn an_event_passes_or_fails_each_threshold() {
        let sl = ServiceLevel::from_toml(
            "[default]\np99_impact = 3.0\nrecovery_s = 10\navailability_pct = 50\n",
        )
        .unwrap();
        let figures = EventFigures {
            p99_impact: Some(4.0),
            recovery_s: Some(5.0),
            availability_pct: 60.0,
            ..Default::default()
        };
        let none = RunCounts::default();
        let v = judge(&sl, OperationKind::Crash, Some(&figures), none);
        assert!(!v.passed);
        let failed: Vec<&str> = v
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.figure.as_str())
            .collect();
        assert_eq!(failed, ["p99_impact"]);
        // Lost writes are judged once verified: one lost fails the default of 0.
        let counted = RunCounts {
            lost_writes: Some(1),
            stale_reads: None,
        };
        let relaxed = ServiceLevel::from_toml("[default]\np99_impact = 5\n").unwrap();
        assert!(judge(&relaxed, OperationKind::Crash, Some(&figures), none).passed);
        assert!(!judge(&relaxed, OperationKind::Crash, Some(&figures), counted).passed);
        // Never recovered: the recovery threshold fails.
        let stuck = EventFigures {
            recovery_s: None,
            ..figures
        };
        let v = judge(&sl, OperationKind::Crash, Some(&stuck), none);
        assert!(v
            .checks
            .iter()
            .any(|c| c.figure == "recovery_s" && !c.passed && c.value.is_none()));
    }
}
