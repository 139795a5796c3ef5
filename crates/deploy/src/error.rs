//! What can go wrong when starting, waiting for and operating servers and clusters.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("{what}: {reason}")]
    Io { what: String, reason: String },
    #[error("cannot start {program}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("{server} did not become ready within {seconds} s (log: {log})")]
    NotReady {
        server: String,
        seconds: u64,
        log: String,
    },
    #[error("{file}: {reason}")]
    BadSpec { file: String, reason: String },
    #[error("cluster not idle after {seconds} s: {busy}")]
    NotIdle { seconds: u64, busy: String },
    /// Bad input named by the user (a snapshot name, ...): the command exits with 2.
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C ended a wait ([`interrupt_waits`]).
    #[error("interrupted while {0}")]
    Interrupted(String),
}

impl DeployError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        DeployError::Io {
            what: path.display().to_string(),
            reason: e.to_string(),
        }
    }
}
