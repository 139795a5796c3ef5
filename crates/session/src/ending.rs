//! How a finished run ends its command: the lines said after its summary and the exit code, each
//! code meaning one thing (0 success, 1 the run failed, 3 a client missing, 4 a service level not
//! met, 130 interrupted).

use scalebench_measure::RunResult;

/// The exit code and the lines that say why, in the order they are said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    pub code: u8,
    pub lines: Vec<String>,
}

/// A run failed (exit 1) when its operations mostly failed or never completed, or its probe did
/// not run: its figures are kept, the reason said last.
fn failed(result: &RunResult) -> Option<String> {
    result
        .failure()
        .map(|why| format!("error: the run failed: {why}"))
}

/// Each threshold's verdict (after the summary, where it is seen); exit 4 when one is broken.
fn verdicts(result: &RunResult, lines: &mut Vec<String>) -> Option<u8> {
    let report = result.thresholds.as_ref()?;
    lines.extend(
        report
            .verdicts
            .iter()
            .map(|v| format!("threshold {}", v.line())),
    );
    let broken = report.broken().count();
    (broken > 0).then(|| {
        lines.push(format!(
            "service level missed: {broken} of {} thresholds broken",
            report.verdicts.len()
        ));
        4
    })
}

impl Ending {
    /// The ending of a run measured in this process. `unwritten`: outputs asked for and not
    /// written (a history), which fail the run, its figures kept; `after_phase_failed`: a
    /// deployment's step after the phase that failed.
    pub fn of_run(
        result: &RunResult,
        after_phase_failed: Option<&str>,
        unwritten: &[String],
    ) -> Ending {
        let mut lines: Vec<String> = unwritten.iter().map(|e| format!("error: {e}")).collect();
        let code = if result.interrupted {
            130
        } else if let Some(e) = after_phase_failed {
            lines.push(format!(
                "FAILED after the phase: {e}; what was measured is kept, without the space on disk"
            ));
            1
        } else if let Some(why) = failed(result) {
            lines.push(why);
            1
        } else if !unwritten.is_empty() {
            1
        } else {
            verdicts(result, &mut lines).unwrap_or(0)
        };
        Ending { code, lines }
    }

    /// The ending of a run merged from its clients, whose launcher chose `launcher_code` (0, or 3
    /// with a client missing, ...): a merged run that failed is a failed run also when a client is
    /// missing; thresholds are judged only on a complete one.
    pub fn of_merged(merged: &RunResult, launcher_code: u8, incomplete_code: u8) -> Ending {
        let mut lines = Vec::new();
        if launcher_code == 0 || launcher_code == incomplete_code {
            if let Some(why) = failed(merged) {
                lines.push(why);
                return Ending { code: 1, lines };
            }
        }
        let code = match launcher_code {
            0 => verdicts(merged, &mut lines).unwrap_or(0),
            other => other,
        };
        Ending { code, lines }
    }
}
