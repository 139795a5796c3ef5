//! How an experiment's outcome ends its command: what is said before the results table and after
//! it, and the exit code (0 done, 1 a run failed, 4 a service level missed, 130 interrupted).

use std::path::Path;

use super::spec::Experiment;
use super::ExperimentOutcome;

impl ExperimentOutcome {
    /// The lines said once the runs ended, before the results table.
    pub fn lines_before_table(&self, exp: &Experiment, results: &Path) -> Vec<String> {
        let mut lines = vec![format!(
            "experiment {}: {} runs done, {} failed, {} already recorded (results in {})",
            exp.name,
            self.done,
            self.failed,
            self.skipped,
            results.display()
        )];
        if self.claimed_elsewhere > 0 {
            lines.push(format!(
                "{} runs were being measured by another experiment process on {}: left to it (`scalebench results show` once it has ended)",
                self.claimed_elsewhere,
                results.display()
            ));
        }
        if self.interrupted {
            lines.push("interrupted: run the same command again to resume".into());
        }
        lines
    }

    /// The exit code after the table, and the line that says why when it is not 0. (Interrupted:
    /// 130, without a table.)
    pub fn exit(&self, exp: &Experiment) -> (u8, Option<String>) {
        if self.interrupted {
            return (130, None);
        }
        if self.failed > 0 {
            // The others are recorded; a rerun of the same command retries only the failed ones.
            return (1, Some(format!(
                "error: {} runs failed (their errors are in the runs table: scalebench results show)",
                self.failed
            )));
        }
        if self.missed_service_level > 0 {
            return (4, Some(format!(
                "service level missed: {} runs' operations broke a threshold of {} (the report's matrix says which)",
                self.missed_service_level,
                exp.procedure
                    .elastic
                    .service_level
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string())
            )));
        }
        if self.broke_thresholds > 0 {
            return (4, Some(format!(
                "service level missed: {} runs broke a threshold (their verdicts are in the results database: scalebench results export)",
                self.broke_thresholds
            )));
        }
        (0, None)
    }
}
