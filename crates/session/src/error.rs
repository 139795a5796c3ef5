//! What ends a session call, each with the exit code it deserves (2 bad input, 1 failed, 3 a
//! client missing, 130 interrupted).

use std::process::ExitCode;

/// Everything that ends a session call, with the exit code a command ending by it deserves. The
/// binary prints it once, on one line.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Bad input from the user: exit code 2, nothing written.
    #[error("{0}")]
    Usage(String),
    /// The benchmark could not run (connection, schema, I/O): exit code 1.
    #[error("{0}")]
    Failed(String),
    /// Stopped (Ctrl-C, SIGTERM) before anything was measured: exit code 130, nothing written.
    #[error("{0}")]
    Interrupted(String),
    /// Another client of the run is gone (a search's leader): exit code 3, what this one measured
    /// kept.
    #[error("{0}")]
    Incomplete(String),
}

impl SessionError {
    /// The error as its one line says it: its middle left out when it is long.
    pub fn line(&self) -> String {
        within_a_line(&self.to_string())
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            SessionError::Usage(_) => ExitCode::from(2),
            SessionError::Failed(_) => ExitCode::from(1),
            SessionError::Interrupted(_) => ExitCode::from(130),
            SessionError::Incomplete(_) => ExitCode::from(3),
        }
    }
}

impl From<scalebench_workload::WorkloadError> for SessionError {
    fn from(e: scalebench_workload::WorkloadError) -> Self {
        SessionError::Usage(e.to_string())
    }
}

impl From<scalebench_binding::BindingError> for SessionError {
    fn from(e: scalebench_binding::BindingError) -> Self {
        match e {
            scalebench_binding::BindingError::Config(m) => SessionError::Usage(m),
            e @ scalebench_binding::BindingError::Interrupted => {
                SessionError::Interrupted(e.to_string())
            }
            other => SessionError::Failed(other.to_string()),
        }
    }
}

impl From<scalebench_exec::ExecError> for SessionError {
    fn from(e: scalebench_exec::ExecError) -> Self {
        match e {
            scalebench_exec::ExecError::Binding(b) => b.into(),
            scalebench_exec::ExecError::Plan(m) => SessionError::Usage(m),
            scalebench_exec::ExecError::Rendezvous(scalebench_exec::RendezvousError::Refused(
                m,
            )) => SessionError::Usage(m),
            other => SessionError::Failed(other.to_string()),
        }
    }
}

/// The most characters of an error line kept at each end: an error quotes the bad value, and a
/// value of 200 KB made a line of 200 KB (issue 62).
const ERROR_END_CHARS: usize = 500;

/// `text`, its middle left out (saying how much) when it is longer than two ends.
fn within_a_line(text: &str) -> String {
    let n = text.chars().count();
    if n <= 2 * ERROR_END_CHARS + 40 {
        return text.to_string();
    }
    let head: String = text.chars().take(ERROR_END_CHARS).collect();
    let tail: String = text.chars().skip(n - ERROR_END_CHARS).collect();
    format!(
        "{head}[... {} characters left out ...]{tail}",
        n - 2 * ERROR_END_CHARS
    )
}
