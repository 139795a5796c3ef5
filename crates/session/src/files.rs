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

/// Writes `result` to `output`; without one, keeps it in the state directory as `command`'s and
/// returns where. A result that could not be kept is an error naming the path.
pub fn keep_result(
    result: &scalebench_measure::RunResult,
    output: Option<&Path>,
    command: &str,
) -> Result<Option<PathBuf>, SessionError> {
    if let Some(path) = output {
        return result
            .write_atomically(path)
            .map(|()| None)
            .map_err(|e| SessionError::Failed(e.to_string()));
    }
    let Some(path) = kept_result_path(command) else {
        return Err(SessionError::Failed(
            "the result was not kept: no state directory (set SCALEBENCH_STATE_DIR or use -o)"
                .into(),
        ));
    };
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .map_err(|e| e.to_string())
        .and_then(|()| result.write_atomically(&path).map_err(|e| e.to_string()))
        .map_err(|e| {
            SessionError::Failed(format!(
                "the result was not kept at {}: {e}",
                path.display()
            ))
        })?;
    Ok(Some(path))
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
