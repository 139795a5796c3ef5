//! Output files: checked before any work, written whole or not at all.

use std::path::Path;

use crate::error::SessionError;

/// Writes `text` to `path` whole or not at all (see `scalebench_measure::files`).
pub fn write_atomically(path: &Path, text: &str) -> Result<(), SessionError> {
    scalebench_measure::files::write_bytes_atomically(path, text.as_bytes())
        .map_err(SessionError::Failed)
}

/// [`write_atomically`] for a file that may hold a password (a deployment file with an external
/// URL): its owner's alone, mode 0600 whatever the umask.
pub fn write_private(path: &Path, text: &str) -> Result<(), SessionError> {
    scalebench_measure::files::write_private_atomically(path, text.as_bytes())
        .map_err(SessionError::Failed)
}

/// Output paths are checked before any work: bad input (exit 2), not a measurement lost at the end.
pub fn check_outputs<'a>(
    files: impl IntoIterator<Item = &'a Path>,
    dirs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), SessionError> {
    use scalebench_measure::files::{check_output, check_output_dir};
    for f in files {
        check_output(f).map_err(SessionError::Usage)?;
    }
    for d in dirs {
        check_output_dir(d).map_err(SessionError::Usage)?;
    }
    Ok(())
}

/// Pretty JSON of `value`, written atomically to `path`.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), SessionError> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| SessionError::Failed(e.to_string()))?;
    write_atomically(path, &text)
}
