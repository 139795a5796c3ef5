//! What people see on the terminal: the summaries (the live progress display is the session's).

/// Writes to standard output; a closed pipe (`| head`) is not an error of the command.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Says the ending's lines and returns its exit code.
pub fn end_with(
    ending: scalebench_session::ending::Ending,
) -> Result<std::process::ExitCode, scalebench_session::error::SessionError> {
    for line in &ending.lines {
        crate::note!("{line}");
    }
    Ok(std::process::ExitCode::from(ending.code))
}
