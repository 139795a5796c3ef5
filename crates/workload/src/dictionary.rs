//! Files a workload file names (`generator.words.file`, a dictionary): read only from the workload
//! file's own directory or a directory the command line allows (`--allow-files DIR`), after every
//! symbolic link and `..` is resolved; regular files only, at most [`MAX_DICTIONARY_BYTES`].
//! Their words run the workload; results, pages and the results database keep only the file's
//! name, SHA-256 and size ([`Digest`]), never its content: a dictionary named `/etc/shadow` or
//! `../../x` was copied whole into the result JSON (issue 62).

use std::io::Read;
use std::path::{Path, PathBuf};

pub use crate::digest::Digest;

/// A dictionary is small: never read more (a device, a log, a file named by mistake).
pub const MAX_DICTIONARY_BYTES: u64 = 4 << 20;

/// Where a workload file may read the files it names: its own directory, and these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Directories the command line allows (`--allow-files DIR`), each as given.
    pub allowed: Vec<PathBuf>,
}

impl FileAccess {
    /// Each allowed directory, checked: it must exist and be a directory (one line naming it).
    pub fn new(allowed: Vec<PathBuf>) -> Result<FileAccess, String> {
        for dir in &allowed {
            match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "invalid value '{}' for '--allow-files': not a directory",
                        dir.display()
                    ))
                }
                Err(e) => {
                    return Err(format!(
                        "invalid value '{}' for '--allow-files': {e}",
                        dir.display()
                    ))
                }
            }
        }
        Ok(FileAccess { allowed })
    }
}

/// A dictionary read: its words (one a line; blank lines and lines starting with '#' left out)
/// and its digest.
#[derive(Debug, Clone)]
pub struct Dictionary {
    pub words: Vec<String>,
    pub digest: Digest,
}

/// Reads dictionary `name` (relative to `base`, the workload file's directory, or absolute) if it
/// lies in `base` or a directory `access` allows; the error says why not, naming the file.
pub fn read(name: &str, base: &Path, access: &FileAccess) -> Result<Dictionary, String> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let given = base.join(name);
    let real = given
        .canonicalize()
        .map_err(|e| format!("cannot read '{}': {e}", given.display()))?;
    let roots: Vec<PathBuf> = std::iter::once(base.to_path_buf())
        .chain(access.allowed.iter().cloned())
        .filter_map(|d| d.canonicalize().ok())
        .collect();
    if !roots.iter().any(|r| real.starts_with(r)) {
        return Err(format!(
            "'{name}' is {}, outside the workload file's directory{}: a workload file reads files \
             of its directory only (allow another with --allow-files DIR)",
            real.display(),
            if access.allowed.is_empty() {
                ""
            } else {
                " and the directories --allow-files allows"
            }
        ));
    }
    let content = read_regular(&real)?;
    let text = std::str::from_utf8(&content)
        .map_err(|_| format!("'{name}' is not UTF-8 text (one word a line)"))?;
    let words = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    Ok(Dictionary {
        words,
        digest: Digest::of(&content),
    })
}

/// A regular file's content, at most [`MAX_DICTIONARY_BYTES`]: opened without following a link
/// and without blocking (a FIFO swapped in after the check), its kind and size taken from the
/// open file, and never more read than the bound.
fn read_regular(path: &Path) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags())
        .open(path)
        .map_err(|e| format!("cannot read '{shown}': {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read '{shown}': {e}"))?;
    if !meta.is_file() {
        return Err(format!("'{shown}' is not a regular file"));
    }
    if meta.len() > MAX_DICTIONARY_BYTES {
        return Err(format!(
            "'{shown}' has {} bytes; a dictionary holds at most {MAX_DICTIONARY_BYTES} (4 MiB)",
            meta.len()
        ));
    }
    let mut content = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_DICTIONARY_BYTES + 1)
        .read_to_end(&mut content)
        .map_err(|e| format!("cannot read '{shown}': {e}"))?;
    if content.len() as u64 > MAX_DICTIONARY_BYTES {
        return Err(format!(
            "'{shown}' grew past {MAX_DICTIONARY_BYTES} bytes (4 MiB) while read"
        ));
    }
    Ok(content)
}

/// O_NOFOLLOW | O_NONBLOCK (Linux's values; the path was resolved already, so a link found now
/// was swapped in).
fn libc_flags() -> i32 {
    const O_NONBLOCK: i32 = 0o4000;
    const O_NOFOLLOW: i32 = 0o400000;
    O_NOFOLLOW | O_NONBLOCK
}

/// The `columns` property as results show it: each dictionary's words replaced by its file's name,
/// SHA-256 and size (anything that is not a column list is returned as it is).
pub fn shown_columns(json: &str) -> String {
    let Ok(mut columns) = serde_json::from_str::<Vec<crate::columns::Column>>(json) else {
        return json.to_string();
    };
    let mut changed = false;
    for c in &mut columns {
        if let crate::columns::Generator::Text(crate::columns::TextGenerator::Words {
            words,
            file: Some(_),
            ..
        }) = &mut c.generator
        {
            words.clear();
            changed = true;
        }
    }
    if changed {
        crate::columns::Record::to_json(&columns)
    } else {
        json.to_string()
    }
}

/// A property's value as results, pages and the results database show it ([`shown_columns`]).
pub fn shown_value<'a>(key: &str, value: &'a str) -> std::borrow::Cow<'a, str> {
    if key == "columns" {
        std::borrow::Cow::Owned(shown_columns(value))
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_dictionary_beside_the_file_is_read_with_its_digest() {
        let d = dir();
        std::fs::write(d.path().join("w.txt"), "# words\nalpha\n\nbeta\n").unwrap();
        let got = read("w.txt", d.path(), &FileAccess::default()).unwrap();
        assert_eq!(got.words, ["alpha", "beta"]);
        // `sha256sum` of that text.
        assert_eq!(
            got.digest,
            Digest {
                sha256: "58063ec6567792dfd23ef33dc01a51571d6beb0442e613130fc1b696b2da799a".into(),
                bytes: 20
            }
        );
    }

    /// Issue 62: `/etc/...`, `../x` and a link out of the directory are refused, naming the file;
    /// an allowed directory opens them; a FIFO, a directory and a file past the bound are refused
    /// without blocking or reading it all.
    #[test]
    fn files_outside_the_directory_or_not_regular_or_too_big_are_refused() {
        let (d, other) = (dir(), dir());
        let base = d.path().join("w");
        std::fs::create_dir(&base).unwrap();
        std::fs::write(d.path().join("up.txt"), "up\n").unwrap();
        std::fs::write(other.path().join("o.txt"), "other\n").unwrap();
        std::os::unix::fs::symlink(other.path().join("o.txt"), base.join("link.txt")).unwrap();
        let none = FileAccess::default();
        for name in [
            "/etc/hostname".to_string(),
            "../up.txt".into(),
            "link.txt".into(),
            other.path().join("o.txt").display().to_string(),
        ] {
            let e = read(&name, &base, &none).unwrap_err();
            assert!(
                e.contains(&format!("'{name}'")) && e.contains("--allow-files"),
                "{name}: {e}"
            );
        }
        let allowed = FileAccess::new(vec![other.path().to_path_buf()]).unwrap();
        assert_eq!(read("link.txt", &base, &allowed).unwrap().words, ["other"]);
        assert!(read("../up.txt", &base, &allowed).is_err());
        assert!(FileAccess::new(vec![base.join("nothing")]).is_err());
        assert!(FileAccess::new(vec![d.path().join("up.txt")]).is_err());

        let fifo = base.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read("fifo", &base, &none).unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        std::fs::create_dir(base.join("sub")).unwrap();
        assert!(read("sub", &base, &none)
            .unwrap_err()
            .contains("not a regular file"));
        let big = std::fs::File::create(base.join("big.txt")).unwrap();
        big.set_len(MAX_DICTIONARY_BYTES + 1).unwrap();
        let e = read("big.txt", &base, &none).unwrap_err();
        assert!(e.contains("at most 4194304"), "{e}");
    }

    #[test]
    fn results_show_a_dictionarys_digest_not_its_words() {
        let json = r#"[{"name":"w","type":"text","length":20,"generator":{"words":{"words":["secret"],"file":"d.txt","digest":{"sha256":"ab","bytes":7},"min":1,"max":1}}}]"#;
        let shown = shown_value("columns", json);
        assert!(!shown.contains("secret"), "{shown}");
        assert!(
            shown.contains(r#""file":"d.txt""#) && shown.contains(r#""sha256":"ab""#),
            "{shown}"
        );
        // Words given in the file itself are the workload's definition, and stay.
        let inline = json.replace(r#","file":"d.txt","digest":{"sha256":"ab","bytes":7}"#, "");
        assert_eq!(shown_value("columns", &inline), inline);
        assert_eq!(shown_value("table", "secret"), "secret");
    }
}
