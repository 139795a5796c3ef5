//! Thresholds on an experiment's cells: `[procedure] thresholds` and `experiment --threshold` /
//! `--sla FILE`'s `[run]` (the kind `run` takes, docs/thresholds.md), judged on each run's own
//! figures before it is recorded, so the verdicts are in the results database with the run.

use scalebench_measure::result::RunResult;
use scalebench_measure::thresholds::Threshold;

/// The thresholds every run of an experiment is judged against, and the file some came from.
#[derive(Debug, Clone, Default)]
pub struct CellThresholds {
    pub thresholds: Vec<Threshold>,
    pub file: Option<String>,
}

impl CellThresholds {
    /// The command line's thresholds and the file's `[procedure] thresholds` (checked when the
    /// file was read).
    pub fn with_procedure(mut self, written: &[String]) -> Self {
        self.thresholds
            .extend(written.iter().filter_map(|t| t.parse().ok()));
        self
    }

    /// Judges `r`'s measured phase (its last: a run's load before it is the cell's preparation)
    /// and keeps the verdicts in it; true when one is broken.
    pub fn judge(&self, r: &mut RunResult) -> bool {
        if self.thresholds.is_empty() || r.phases.is_empty() {
            return false;
        }
        let measured = &r.phases[r.phases.len() - 1..];
        let report =
            scalebench_measure::thresholds::report(&self.thresholds, self.file.clone(), measured);
        let broken = report.broken().count() > 0;
        r.thresholds = Some(report);
        broken
    }
}
