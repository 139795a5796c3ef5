//! What people see: the live progress display and the summaries.

pub mod progress;
pub mod table;

/// Writes `text` to `path` whole or not at all (see `scalebench_measure::files`).
pub fn write_atomically(path: &std::path::Path, text: &str) -> Result<(), crate::error::CliError> {
    scalebench_measure::files::write_bytes_atomically(path, text.as_bytes())
        .map_err(crate::error::CliError::Failed)
}

/// Output paths are checked before any work: bad input (exit 2), not a measurement lost at the end.
pub fn check_outputs<'a>(
    files: impl IntoIterator<Item = &'a std::path::Path>,
    dirs: impl IntoIterator<Item = &'a std::path::Path>,
) -> Result<(), crate::error::CliError> {
    use scalebench_measure::files::{check_output, check_output_dir};
    for f in files {
        check_output(f).map_err(crate::error::CliError::Usage)?;
    }
    for d in dirs {
        check_output_dir(d).map_err(crate::error::CliError::Usage)?;
    }
    Ok(())
}

/// Pretty JSON of `value`, written atomically to `path`.
pub fn write_json(
    path: &std::path::Path,
    value: &impl serde::Serialize,
) -> Result<(), crate::error::CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::error::CliError::Failed(e.to_string()))?;
    write_atomically(path, &text)
}

/// Writes to standard output; a closed pipe (`| head`) is not an error of the command.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
