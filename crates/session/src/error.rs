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
