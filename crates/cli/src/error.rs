use std::process::ExitCode;

/// Everything that ends a command, with the exit code it deserves. Printed once, on one line, by `cli::main`.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input from the user: exit code 2, nothing written.
    #[error("{0}")]
    Usage(String),
    /// The benchmark could not run (connection, schema, I/O): exit code 1.
    #[error("{0}")]
    Failed(String),
    /// Stopped (Ctrl-C, SIGTERM) before anything was measured: exit code 130, nothing written.
    #[error("{0}")]
    Interrupted(String),
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            CliError::Failed(_) => ExitCode::from(1),
            CliError::Interrupted(_) => ExitCode::from(130),
        }
    }
}

impl From<scalebench_workload::WorkloadError> for CliError {
    fn from(e: scalebench_workload::WorkloadError) -> Self {
        CliError::Usage(e.to_string())
    }
}

impl From<scalebench_binding::BindingError> for CliError {
    fn from(e: scalebench_binding::BindingError) -> Self {
        match e {
            scalebench_binding::BindingError::Config(m) => CliError::Usage(m),
            e @ scalebench_binding::BindingError::Interrupted => {
                CliError::Interrupted(e.to_string())
            }
            other => CliError::Failed(other.to_string()),
        }
    }
}

impl From<scalebench_exec::ExecError> for CliError {
    fn from(e: scalebench_exec::ExecError) -> Self {
        match e {
            scalebench_exec::ExecError::Binding(b) => b.into(),
            scalebench_exec::ExecError::Plan(m) => CliError::Usage(m),
            other => CliError::Failed(other.to_string()),
        }
    }
}
