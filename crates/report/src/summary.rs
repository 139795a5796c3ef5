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

/// `result` in `format`; `percentiles` are the ones YCSB's text prints.
pub fn render(result: &RunResult, format: SummaryFormat, percentiles: &[f64]) -> String {
    match format {
        SummaryFormat::Table => crate::table::render(result),
        // A result serialises (its maps have string keys): an error would be a bug, not input.
        SummaryFormat::Json => {
            serde_json::to_string_pretty(result).expect("a result serialises to JSON") + "\n"
        }
        SummaryFormat::Ycsb => result
            .phases
            .iter()
            .map(|p| ycsb_text::render(p, percentiles))
            .collect(),
    }
}
