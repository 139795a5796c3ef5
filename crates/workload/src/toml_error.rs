//! A TOML file that did not read as what it should be, said in one line that does not echo the
//! file: `--sla /etc/shadow` quoted the file's first line in the error (issue 62). The line number
//! always; the key on that line and the parser's message (which may quote a value, bounded) only
//! when the text is TOML, so that a file of another kind is never shown.

/// The longest message kept from the parser (it may quote a value of a TOML file).
const MAX_WHY_CHARS: usize = 300;

/// Where and why a TOML text did not deserialize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    /// 1-based, when the parser said where.
    pub line: Option<usize>,
    /// The key (or `[table]`) on that line, only when the text is TOML.
    pub key: Option<String>,
    pub why: String,
}

impl TomlError {
    pub fn of(text: &str, e: &toml::de::Error) -> TomlError {
        let line = e.span().map(|s| {
            text.as_bytes()[..s.start.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        });
        let first = e.message().lines().next().unwrap_or("").trim();
        if toml::from_str::<toml::Table>(text).is_err() {
            // Not TOML at all: the parser's words only (they name tokens it expected, not text).
            return TomlError {
                line,
                key: None,
                why: format!("not TOML ({})", bounded(first, 80)),
            };
        }
        let key = line
            .and_then(|l| text.lines().nth(l - 1))
            .and_then(|l| {
                let l = l.trim();
                match l.strip_prefix('[') {
                    Some(table) => Some(table.trim_end_matches(']').trim()),
                    None => l.split_once('=').map(|(k, _)| k.trim()),
                }
            })
            .filter(|k| !k.is_empty())
            .map(|k| bounded(k, 80));
        TomlError {
            line,
            key,
            why: bounded(first, MAX_WHY_CHARS),
        }
    }
}

impl std::fmt::Display for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, &self.key) {
            (Some(l), Some(k)) => write!(f, "line {l} ({k}): {}", self.why),
            (Some(l), None) => write!(f, "line {l}: {}", self.why),
            (None, _) => f.write_str(&self.why),
        }
    }
}

fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> TomlError {
        TomlError::of(text, &toml::from_str::<T>(text).unwrap_err())
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Level {
        p99_impact: f64,
    }

    /// A file of another kind (a password file) is not quoted: its line number and the parser's
    /// words only.
    #[test]
    fn a_file_that_is_not_toml_is_not_quoted() {
        let shadow = "root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";
        let e = error_of::<Level>(shadow);
        let said = e.to_string();
        assert_eq!(e.line, Some(1), "{said}");
        assert!(said.starts_with("line 1: not TOML ("), "{said}");
        for secret in ["root", "SECRETHASH", "19000", "daemon"] {
            assert!(!said.contains(secret), "{said}");
        }
        let e = error_of::<Level>("p99_impact = 2\nSECRET-LINE here\n").to_string();
        assert!(
            e.starts_with("line 2: not TOML") && !e.contains("SECRET"),
            "{e}"
        );
    }

    /// In a TOML file the key names the field; a value the parser quotes is bounded.
    #[test]
    fn a_toml_file_names_the_key_and_bounds_what_it_quotes() {
        let e = error_of::<Level>("p99_impact = 2\nsecret_key = 5\n");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.key.as_deref(), Some("secret_key"));
        let long = "x".repeat(10_000);
        let said = error_of::<Level>(&format!("p99_impact = \"{long}\"\n")).to_string();
        assert!(said.starts_with("line 1 (p99_impact): "), "{said}");
        assert!(said.chars().count() < 400, "{} characters", said.len());
    }
}
