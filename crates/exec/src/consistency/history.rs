//! The probe's history (JSON Lines of every operation, for tools/history-check) and the merge of a
//! run's clients' histories.

use std::path::PathBuf;

/// One line of the history.
#[derive(serde::Serialize)]
pub(super) struct HistoryOp {
    pub(super) process: usize,
    pub(super) key: String,
    pub(super) f: &'static str,
    pub(super) value: Option<u64>,
    pub(super) invoke_ns: u64,
    pub(super) complete_ns: Option<u64>,
    pub(super) ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
}

/// The history file, written as the probe goes (a long run's history need not fit in memory) to a
/// temporary file of a random name beside it (created exclusively: nothing planted there is
/// followed), renamed into place when complete: never a half-written history, and never written
/// over something that is not a regular file (checked again before the rename).
pub(super) struct History {
    pub(super) path: PathBuf,
    pub(super) out: Option<std::io::BufWriter<scalebench_measure::files::AtomicFile>>,
    pub(super) error: Option<String>,
    pub(super) written: u64,
}

/// A history larger than this is not written (10,000 probe writes a second filled 458 MB in 5 s):
/// a checker needs a whole history, so it is dropped, with a warning, rather than cut.
pub const MAX_HISTORY_BYTES: u64 = 1 << 30;

/// A process of client `i` of a run is `i * CLIENT_PROCESSES + p` in the merged history.
pub const CLIENT_PROCESSES: usize = 1000;

/// Merges the histories of a run's clients (client i's at `parts[i]`, absent if it has none) into
/// one at `out`, on the writer's time base (each reader's was written on it): a process of client
/// i is numbered `i * CLIENT_PROCESSES + p`. Written as a history is, complete or not at all.
/// Returns the operations merged.
pub fn merge_histories(
    parts: &[Option<std::path::PathBuf>],
    out: &std::path::Path,
) -> Result<u64, String> {
    use std::io::{BufRead, Write};
    let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", out.display());
    scalebench_measure::files::check_output(out).map_err(|e| fail(&e))?;
    let file = scalebench_measure::files::AtomicFile::create(out, 0o666)?;
    let mut w = std::io::BufWriter::new(file);
    let (mut ops, mut written) = (0u64, 0u64);
    for (client, part) in parts.iter().enumerate() {
        let Some(part) = part else { continue };
        let reader =
            std::fs::File::open(part).map_err(|e| format!("--history {}: {e}", part.display()))?;
        for line in std::io::BufReader::new(reader).lines() {
            let line = line.map_err(|e| format!("--history {}: {e}", part.display()))?;
            let mut op: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| format!("--history {}: {e}", part.display()))?;
            let process = op["process"].as_u64().unwrap_or(0);
            op["process"] = (process + (client * CLIENT_PROCESSES) as u64).into();
            let text = op.to_string();
            written += text.len() as u64 + 1;
            if written > MAX_HISTORY_BYTES {
                return Err(fail(&format!(
                    "more than {} MiB of merged history",
                    MAX_HISTORY_BYTES >> 20
                )));
            }
            writeln!(w, "{text}").map_err(|e| fail(&e))?;
            ops += 1;
        }
    }
    let file = w.into_inner().map_err(|e| fail(&e.error()))?;
    file.commit().map_err(|e| fail(&e))?;
    Ok(ops)
}

impl History {
    pub(super) fn create(path: &std::path::Path) -> Result<History, String> {
        let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", path.display());
        scalebench_measure::files::check_output(path).map_err(|e| fail(&e))?;
        let file = scalebench_measure::files::AtomicFile::create(path, 0o666)?;
        Ok(History {
            path: path.to_path_buf(),
            out: Some(std::io::BufWriter::new(file)),
            error: None,
            written: 0,
        })
    }

    pub(super) fn push(&mut self, op: &HistoryOp) {
        use std::io::Write;
        if let Some(out) = &mut self.out {
            let line = serde_json::to_string(op).expect("a history line serializes");
            self.written += line.len() as u64 + 1;
            if self.written > MAX_HISTORY_BYTES {
                self.error = Some(format!(
                    "--history {}: more than {} MiB of history (lower the probe's rate)",
                    self.path.display(),
                    MAX_HISTORY_BYTES >> 20
                ));
                self.out = None;
            } else if let Err(e) = writeln!(out, "{line}") {
                self.error = Some(format!("--history {}: {e}", self.path.display()));
                self.out = None;
            }
        }
    }

    /// Renames the complete history into place; the temporary file goes however this ends.
    pub(super) fn finish(&mut self) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", self.path.display());
        match (self.out.take(), self.error.take()) {
            (_, Some(e)) => Err(e),
            (None, None) => Ok(()),
            (Some(out), None) => {
                let file = out.into_inner().map_err(|e| fail(&e.error()))?;
                file.commit().map_err(|e| fail(&e))
            }
        }
    }
}
