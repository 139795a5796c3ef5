//! What people see: the live progress display and the summaries.

pub mod progress;
pub mod table;

/// Writes `text` to `path` through a temporary file and a rename: a crash never leaves half a file.
pub fn write_atomically(path: &std::path::Path, text: &str) -> Result<(), crate::error::CliError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| crate::error::CliError::Failed(format!("{}: {e}", path.display())))
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
