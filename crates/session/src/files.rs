//! Output files: checked before any work, written whole or not at all.

use std::path::{Path, PathBuf};

use crate::error::SessionError;

/// The per-user state directory: `$SCALEBENCH_STATE_DIR`, else `$XDG_STATE_HOME/scalebench`, else
/// `~/.local/state/scalebench` (the XDG base directory convention); `None` without a home.
pub fn state_dir() -> Option<PathBuf> {
    std::env::var_os("SCALEBENCH_STATE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_STATE_HOME").map(|d| PathBuf::from(d).join("scalebench")))
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state/scalebench"))
        })
}

/// Where a run given no `--output` keeps its result:
/// `<state dir>/results/<UTC time>-<command>-<pid>.json` (the process id keeps two runs started in
/// one second apart).
pub fn kept_result_path(command: &str) -> Option<PathBuf> {
    let now = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    Some(
        state_dir()?
            .join("results")
            .join(format!("{now}-{command}-{}.json", std::process::id())),
    )
}

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

/// Pretty JSON of `value`, written atomically to `path`.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), SessionError> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| SessionError::Failed(e.to_string()))?;
    write_atomically(path, &text)
}
