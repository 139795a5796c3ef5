//! `scalebench merge` and `merge-logs`: results and HDR interval logs read from files and merged
//! (by histogram: scalebench_measure's merges), for the command line to write and print.

use std::path::{Path, PathBuf};

use scalebench_measure::hdrlog;
use scalebench_measure::merge::merge_results;
use scalebench_measure::RunResult;

use crate::error::SessionError;

/// The results in `files` merged as one run, and what the merge warns about.
pub fn merge_result_files(files: &[PathBuf]) -> Result<(RunResult, Vec<String>), SessionError> {
    let results = files
        .iter()
        .map(|f| RunResult::read(f).map_err(|e| SessionError::Usage(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let sources: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    merge_results(&results, &sources).map_err(SessionError::Usage)
}

/// `scalebench merge`: the result files merged and written to `output` (refused with a load
/// summary asked for, `ycsb_load`, when they have no load phase); the merge, its warnings and the
/// percentiles its summary shows.
pub fn merge_files_into(
    files: &[PathBuf],
    output: &Path,
    ycsb_load: Option<&Path>,
) -> Result<(RunResult, Vec<String>, Vec<f64>), SessionError> {
    crate::outputs::CommandFiles::new()
        .output("-o", Some(output))
        .output("--ycsb-load", ycsb_load)
        .inputs("a result it merges", files)
        .check()?;
    let (merged, warnings) = merge_result_files(files)?;
    let load = scalebench_measure::Phase::Load;
    if let Some(path) = ycsb_load.filter(|_| !merged.phases.iter().any(|p| p.phase == load)) {
        return Err(SessionError::Usage(format!(
            "--ycsb-load {}: the results have no load phase",
            path.display()
        )));
    }
    merged
        .write_atomically(output)
        .map_err(|e| SessionError::Failed(e.to_string()))?;
    let percentiles = percentiles_of(&merged);
    Ok((merged, warnings, percentiles))
}

/// The percentiles a result's summary shows: its run's `hdrhistogram.percentiles`, else YCSB's
/// 95 and 99.
pub fn percentiles_of(result: &RunResult) -> Vec<f64> {
    result
        .parameters
        .properties
        .get("hdrhistogram.percentiles")
        .and_then(|p| scalebench_measure::ycsb_text::parse_percentiles(p).ok())
        .unwrap_or_else(|| vec![95.0, 99.0])
}

/// `scalebench merge-logs`: the logs merged into `output`, and the line that says so.
pub fn merge_logs_said(files: &[PathBuf], output: &Path) -> Result<String, SessionError> {
    crate::outputs::CommandFiles::new()
        .output("-o", Some(output))
        .inputs("a log it merges", files)
        .check()?;
    let intervals = merge_log_files(files, output)?;
    Ok(format!(
        "{intervals} intervals of {} logs merged into {}",
        files.len(),
        output.display()
    ))
}

/// The interval logs in `files` (one operation's, from several clients) merged into `output`;
/// returns how many intervals it holds.
pub fn merge_log_files(files: &[PathBuf], output: &Path) -> Result<usize, SessionError> {
    let logs = files
        .iter()
        .map(|f| {
            scalebench_measure::files::read_bounded(f, hdrlog::MAX_LOG_BYTES)
                .map(|text| (f.display().to_string(), text.into_bytes()))
                .map_err(|e| SessionError::Usage(format!("cannot read '{}': {e}", f.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let merged = hdrlog::merge_logs(&logs).map_err(SessionError::Usage)?;
    hdrlog::write_merged_log(output, &merged).map_err(SessionError::Failed)?;
    Ok(merged.2.len())
}
