//! Diagnostic logging on standard error, off by default: `-v` (info), `-vv` (debug), `-vvv`
//! (trace), or `RUST_LOG` (tracing's EnvFilter syntax, e.g. `RUST_LOG=tokio_postgres=debug`),
//! which wins when set. The drivers' own events come through: `tracing` ones directly, `log` ones
//! bridged (tracing-log). Every line passes [`Redactor`] first: the passwords this process was
//! given (in a URL's user part, `PGPASSWORD` and the like) never reach the terminal.

use std::ffi::OsString;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use tracing_subscriber::EnvFilter;

use crate::error::SessionError;

/// Environment variables that hold a password the database clients read.
const PASSWORD_VARIABLES: &[&str] = &["PGPASSWORD", "REDISCLI_AUTH", "MYSQL_PWD"];
/// Environment variables that hold a database URL.
const URL_VARIABLES: &[&str] = &["SCALEBENCH_DB"];

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<()> = OnceLock::new();
/// The filter logging runs with, for the client processes this one starts (`-v` is not in their
/// command line).
static DIRECTIVES: OnceLock<String> = OnceLock::new();

/// The filter this process logs with (`RUST_LOG`'s, or `-v`'s), None when it does not log: a
/// launcher gives it to its clients as their `RUST_LOG`.
pub fn directives() -> Option<&'static str> {
    DIRECTIVES.get().map(String::as_str)
}

/// Starts logging as `-v` given `verbosity` times and `RUST_LOG` ask; nothing when neither does.
/// The passwords in `argv`'s URLs and in the password variables are hidden from every line.
/// A `RUST_LOG` that does not parse is bad input (exit 2), named in one line.
pub fn init(verbosity: u8, argv: &[OsString]) -> Result<(), SessionError> {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let directives = match (from_env, verbosity) {
        (Some(env), _) => env,
        (None, 0) => return Ok(()),
        (None, 1) => "info".into(),
        (None, 2) => "debug".into(),
        (None, _) => "trace".into(),
    };
    let filter = EnvFilter::builder().parse(&directives).map_err(|e| {
        SessionError::Usage(format!("invalid value '{directives}' for RUST_LOG: {e}"))
    })?;
    for arg in argv.iter().filter_map(|a| a.to_str()) {
        hide_url_password(arg);
    }
    for var in PASSWORD_VARIABLES {
        if let Ok(v) = std::env::var(var) {
            hide(&v);
        }
    }
    for var in URL_VARIABLES {
        if let Ok(v) = std::env::var(var) {
            hide_url_password(&v);
        }
    }
    if INSTALLED.set(()).is_err() {
        return Ok(());
    }
    let _ = DIRECTIVES.set(directives);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Redactor(Vec::new()))
        .try_init()
        .map_err(|e| SessionError::Failed(format!("cannot start logging: {e}")))
}

/// Hides `secret` from every log line from now on (a password read from a file, say).
pub fn hide(secret: &str) {
    // One or two characters would hide half of every line and protect nothing.
    if secret.chars().count() < 3 {
        return;
    }
    let mut secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    for s in [secret.to_string(), decoded(secret)] {
        if !secrets.contains(&s) {
            secrets.push(s);
        }
    }
}

/// Hides the password of every `scheme://user:password@` in `text`.
pub fn hide_url_password(text: &str) {
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        rest = &rest[at + 3..];
        let authority = rest.split(['/', '?', '#', ' ']).next().unwrap_or_default();
        if let Some((user, _)) = authority.rsplit_once('@') {
            if let Some((_, password)) = user.split_once(':') {
                hide(password);
            }
        }
    }
}

/// `text` percent-decoded (`p%40ss` is `p@ss` once a driver has decoded it).
fn decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `line` with every hidden secret replaced by `***`.
pub fn redacted(line: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = line.to_string();
    for s in secrets.iter() {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}

/// One event's text, written to standard error redacted (and its control characters escaped)
/// when the event ends.
struct Redactor(Vec<u8>);

impl Write for Redactor {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Redactor {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let line = crate::printable(&redacted(text.trim_end_matches('\n')));
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_of_urls_and_variables_never_reach_a_line() {
        hide_url_password("--db=postgres://bench:s3cr%40t@127.0.0.1:5432/db?x=1");
        hide_url_password("redis://:only-pass@host:6379 mysql://user@host/db");
        hide("ab");
        let line = redacted("connect s3cr%40t s3cr@t only-pass user ab");
        assert_eq!(line, "connect *** *** *** user ab");
    }
}
