//! What people see: the live progress display and the summaries.

pub mod progress;
pub mod table;

/// Writes to standard output; a closed pipe (`| head`) is not an error of the command.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
