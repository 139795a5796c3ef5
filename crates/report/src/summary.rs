//! A run's result as text for standard output, in the form asked for: one interface for every
//! form (the summary table, YCSB's text, the result's JSON), so a new form is one arm here and one
//! word in the command line.

use scalebench_measure::{ycsb_text, RunResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryFormat {
    /// scalebench's table per phase (`table.rs`).
    Table,
    /// The result file's JSON.
    Json,
    /// YCSB's text, line for line, per phase.
    Ycsb,
}

/// What goes to standard output, and the lines for standard error.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub stdout: String,
    /// A target rate not reached, per phase; the table prints its own inline.
    pub warnings: Vec<String>,
    /// For YCSB's text of a result with several phases: the note that says which were left out.
    pub left_out: Option<String>,
}

/// `result` in `format`; `percentiles` are the ones YCSB's text prints. YCSB's text holds the last
/// phase only: YCSB runs each phase as its own process, and its parsers read one `[OVERALL]` block
/// ([`ycsb_phase_text`] gives another phase's, for a file of its own).
pub fn render(result: &RunResult, format: SummaryFormat, percentiles: &[f64]) -> Summary {
    let stdout = match format {
        SummaryFormat::Table => crate::table::render(result),
        // A result serialises (its maps have string keys): an error would be a bug, not input.
        SummaryFormat::Json => {
            serde_json::to_string_pretty(result).expect("a result serialises to JSON") + "\n"
        }
        SummaryFormat::Ycsb => result
            .phases
            .last()
            .map(|p| ycsb_text::render(p, percentiles))
            .unwrap_or_default(),
    };
    // The table holds its warnings; in the other formats a target not reached goes to standard
    // error (failed operations are announced there when a phase ends, whatever the format).
    let warnings = if format == SummaryFormat::Table {
        Vec::new()
    } else {
        result
            .phases
            .iter()
            .filter_map(|p| p.target_shortfall(p.offered_rate(&result.parameters)))
            .collect()
    };
    let left_out = (format == SummaryFormat::Ycsb && result.phases.len() > 1).then(|| {
        format!(
            "note: standard output holds the {} phase's YCSB text only, as YCSB prints one phase per run; --ycsb-load FILE writes the {} phase's",
            result.phases.last().map_or("run", |p| p.phase.name()),
            result.phases[0].phase
        )
    });
    Summary {
        stdout,
        warnings,
        left_out,
    }
}

/// `--ycsb-load FILE`: the load phase of `result` as YCSB prints it, written whole or not at all.
pub fn write_ycsb_load(
    result: &RunResult,
    path: &std::path::Path,
    percentiles: &[f64],
) -> Result<(), String> {
    let text =
        ycsb_phase_text(result, scalebench_measure::Phase::Load, percentiles).ok_or_else(|| {
            format!(
                "--ycsb-load {}: the result has no load phase",
                path.display()
            )
        })?;
    scalebench_measure::files::write_bytes_atomically(path, text.as_bytes())
}

/// YCSB's text of the phase named `phase` (`load`, `run`), if the result has one.
pub fn ycsb_phase_text(
    result: &RunResult,
    phase: scalebench_measure::Phase,
    percentiles: &[f64],
) -> Option<String> {
    result
        .phases
        .iter()
        .find(|p| p.phase == phase)
        .map(|p| ycsb_text::render(p, percentiles))
}
