//! What can go wrong reading a capture: each error names the capture, the line and why.

/// A capture that cannot be read, or one of its lines.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    /// The file itself: missing, unreadable, of no format known here.
    #[error("capture {path}: {reason}")]
    File { path: String, reason: String },
    /// One line (a record, for CSV) that is not of the capture's format: its number and why.
    #[error("{format} line {line}: {reason}")]
    Line {
        format: &'static str,
        line: u64,
        reason: String,
    },
}

impl CaptureError {
    pub(crate) fn line(format: &'static str, line: u64, reason: impl Into<String>) -> Self {
        CaptureError::Line {
            format,
            line,
            reason: reason.into(),
        }
    }
}
