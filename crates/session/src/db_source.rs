//! Where `--db` comes from when it is not on the command line: `--db-file` (the URL on the file's
//! first line) or the `SCALEBENCH_DB` environment variable, so a password stays out of argv, `ps`
//! and shell history. The URL is then redacted everywhere as one given with `--db` is.

use std::path::Path;

use crate::error::SessionError;

/// The environment variable read when neither `--db` nor `--db-file` is given.
pub const DB_ENV: &str = "SCALEBENCH_DB";

/// The database URL: `--db`, else the first line of `--db-file`, else (with `environment`: no
/// deployment names the database) `$SCALEBENCH_DB` (an empty value counts as unset), else None.
pub fn database_url(
    db: Option<&str>,
    db_file: Option<&Path>,
    environment: bool,
) -> Result<Option<String>, SessionError> {
    if let Some(db) = db {
        return Ok(Some(db.to_string()));
    }
    if let Some(file) = db_file {
        return first_line(file).map(Some);
    }
    if !environment {
        return Ok(None);
    }
    Ok(std::env::var(DB_ENV).ok().filter(|v| !v.trim().is_empty()))
}

/// The file's first line, trimmed; a missing, unreadable or empty file is bad input naming it.
fn first_line(file: &Path) -> Result<String, SessionError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        SessionError::Usage(format!(
            "invalid value '{}' for '--db-file': cannot read it: {e}",
            file.display()
        ))
    })?;
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        return Err(SessionError::Usage(format!(
            "invalid value '{}' for '--db-file': its first line is empty (expected the database URL)",
            file.display()
        )));
    }
    Ok(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db");
        std::fs::write(&file, "postgres://u:pw@h/d\nignored\n").unwrap();
        assert_eq!(
            database_url(Some("redis://x"), Some(&file), true)
                .unwrap()
                .as_deref(),
            Some("redis://x")
        );
        assert_eq!(
            database_url(None, Some(&file), true).unwrap().as_deref(),
            Some("postgres://u:pw@h/d")
        );
    }

    #[test]
    fn a_missing_or_empty_file_is_bad_input_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nowhere");
        let e = database_url(None, Some(&missing), true).unwrap_err();
        assert!(
            matches!(&e, SessionError::Usage(m) if m.contains("nowhere") && !m.contains('\n')),
            "{e}"
        );
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let e = database_url(None, Some(&empty), true).unwrap_err();
        assert!(
            matches!(&e, SessionError::Usage(m) if m.contains("first line is empty")),
            "{e}"
        );
    }
}
