//! Errors in workload definitions: each names the property or file at fault.

use std::path::PathBuf;

/// Errors in workload definitions; each names the property or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("invalid value '{value}' for property '{key}': {reason}")]
    InvalidProperty {
        key: String,
        value: String,
        reason: String,
    },
    #[error("cannot read '{path}': {reason}")]
    UnreadableFile { path: PathBuf, reason: String },
    #[error("unknown workload '{0}': expected one of {summary}, a workload file (*.toml) or a property file", summary = crate::builtin::BUILTIN_SUMMARY)]
    UnknownWorkload(String),
    #[error("{0}")]
    Inconsistent(String),
    #[error("workload file '{path}'{line}: {field}: {reason}")]
    BadWorkloadFile {
        path: String,
        /// ", line N" where the field is, or nothing.
        line: String,
        field: String,
        reason: String,
    },
}

impl WorkloadError {
    pub fn invalid(key: &str, value: &str, reason: impl Into<String>) -> Self {
        WorkloadError::InvalidProperty {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
