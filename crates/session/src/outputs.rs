//! The files one command writes and reads, checked together before any work (issue 62): every output
//! writable and of its kind, no two outputs the same file, and no output one of the command's inputs.
//!
//! Each command lists its files once ([`CommandFiles`]) and calls [`CommandFiles::check`] before it
//! touches a server: `run -o x.json --report x.json` overwrote the result with the page, and
//! `experiment --results r.db --report r.db` the results database, both exiting 0.

use std::path::{Path, PathBuf};

use crate::error::SessionError;

/// What is written at an output path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A regular file, replaced whole (see `scalebench_measure::files`).
    File,
    /// A directory (created if missing) that takes new files.
    Directory,
}

#[derive(Debug, Clone)]
struct Named {
    /// The option that named it (`-o`, `--report`, `the state directory`...): what an error says.
    what: String,
    path: PathBuf,
}

/// The outputs and inputs of one command.
#[derive(Debug, Default, Clone)]
pub struct CommandFiles {
    outputs: Vec<(Named, Kind)>,
    inputs: Vec<Named>,
}

impl CommandFiles {
    pub fn new() -> CommandFiles {
        CommandFiles::default()
    }

    /// A file the command writes (when `path` is given).
    pub fn output<P: AsRef<Path>>(mut self, what: &str, path: Option<P>) -> CommandFiles {
        if let Some(p) = path {
            self.outputs.push((named(what, p.as_ref()), Kind::File));
        }
        self
    }

    /// A directory the command writes files into (created if missing).
    pub fn output_dir<P: AsRef<Path>>(mut self, what: &str, path: Option<P>) -> CommandFiles {
        if let Some(p) = path {
            self.outputs
                .push((named(what, p.as_ref()), Kind::Directory));
        }
        self
    }

    /// A file the command reads (when `path` is given).
    pub fn input<P: AsRef<Path>>(mut self, what: &str, path: Option<P>) -> CommandFiles {
        if let Some(p) = path {
            self.inputs.push(named(what, p.as_ref()));
        }
        self
    }

    /// Files the command reads, each named by `what`.
    pub fn inputs<P: AsRef<Path>>(
        mut self,
        what: &str,
        paths: impl IntoIterator<Item = P>,
    ) -> CommandFiles {
        for p in paths {
            self.inputs.push(named(what, p.as_ref()));
        }
        self
    }

    /// The directory a result given no `-o` is kept in (`<state dir>/results`), when `kept` says
    /// the command keeps one there: checked as `-o` is, so that a result that cannot be kept is
    /// known before the run, not lost after it.
    pub fn kept_results(self, kept: bool) -> Result<CommandFiles, SessionError> {
        if !kept {
            return Ok(self);
        }
        match kept_results_dir() {
            Some(dir) => Ok(self.output_dir(KEPT_RESULTS, Some(dir))),
            None => Err(SessionError::Usage(
                "no directory to keep the result in (neither SCALEBENCH_STATE_DIR, XDG_STATE_HOME nor HOME is set): name a file with -o".into(),
            )),
        }
    }

    /// Every output writable and of its kind, then no two of the paths the same file. Bad input
    /// (exit 2) naming the path; nothing is written but directories an output asked for.
    pub fn check(&self) -> Result<(), SessionError> {
        use scalebench_measure::files::{check_output, check_output_dir};
        for (n, kind) in &self.outputs {
            let checked = match kind {
                Kind::File => check_output(&n.path),
                Kind::Directory => check_output_dir(&n.path),
            };
            checked.map_err(|e| {
                SessionError::Usage(if n.what == KEPT_RESULTS {
                    format!("{e} (where a result given no -o is kept: name a file with -o, or a writable directory with SCALEBENCH_STATE_DIR)")
                } else if n.what.starts_with('-') {
                    // The option that named it, then what is wrong with it.
                    format!("{}: {e}", n.what)
                } else {
                    e
                })
            })?;
        }
        let outputs: Vec<(&Named, Identity)> = self
            .outputs
            .iter()
            .map(|(n, _)| (n, identity(&n.path)))
            .collect();
        for (i, (a, ia)) in outputs.iter().enumerate() {
            if let Some((b, _)) = outputs[..i].iter().find(|(_, ib)| ib.same(ia)) {
                return Err(SessionError::Usage(format!(
                    "{} '{}' and {} '{}' are the same file: one would overwrite the other; name two files",
                    b.what,
                    b.path.display(),
                    a.what,
                    a.path.display()
                )));
            }
            if let Some(input) = self.inputs.iter().find(|n| identity(&n.path).same(ia)) {
                return Err(SessionError::Usage(format!(
                    "{} '{}' is a file this command reads ({} '{}'): writing it would replace it; name another file",
                    a.what,
                    a.path.display(),
                    input.what,
                    input.path.display()
                )));
            }
        }
        Ok(())
    }
}

/// Output paths are checked before any work: bad input (exit 2), not a measurement lost at the end.
/// [`CommandFiles`] for paths known only by position (a client's files beside
/// its launcher's); a command lists its files there, with its inputs, by the options that named them.
pub fn check_outputs<'a>(
    files: impl IntoIterator<Item = &'a Path>,
    dirs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), SessionError> {
    let listed = files
        .into_iter()
        .fold(CommandFiles::new(), |f, p| f.output("output", Some(p)));
    dirs.into_iter()
        .fold(listed, |f, d| f.output_dir("output directory", Some(d)))
        .check()
}

/// What a kept result's directory is called in an error.
const KEPT_RESULTS: &str = "the state directory";

/// `<state dir>/results`: where a run given no `-o` keeps its result.
pub fn kept_results_dir() -> Option<PathBuf> {
    crate::files::state_dir().map(|d| d.join("results"))
}

fn named(what: &str, path: &Path) -> Named {
    Named {
        what: what.to_string(),
        path: path.to_path_buf(),
    }
}

/// Where a path leads: its existing parent canonicalised (so `./x.json`, `x.json` and a path
/// through a linked directory are one), and the file's device and inode when it exists (so a hard
/// link or a link to the file is the same file too).
#[derive(Debug)]
struct Identity {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn same(&self, other: &Identity) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }
}

fn identity(path: &Path) -> Identity {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let parent = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        match path.file_name() {
            Some(name) => parent.join(name),
            None => parent,
        }
    });
    Identity { path, inode }
}

/// `--ycsb-load FILE` names a phase the command runs (`loads`): checked before anything runs (the
/// file itself is checked with the command's other outputs).
pub fn check_ycsb_load(path: Option<&Path>, loads: bool) -> Result<(), SessionError> {
    match path {
        Some(path) if !loads => Err(SessionError::Usage(format!(
            "--ycsb-load {}: this command runs no load phase (use run --load, or load)",
            path.display()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(files: &CommandFiles) -> String {
        match files.check() {
            Err(SessionError::Usage(e)) => e,
            other => panic!("expected bad input, got {other:?}"),
        }
    }

    #[test]
    fn two_spellings_of_one_file_are_one_output() {
        let d = tempfile::tempdir().unwrap();
        let x = d.path().join("x.json");
        let dotted = d.path().join(".").join("x.json");
        let e = usage(
            &CommandFiles::new()
                .output("-o", Some(&x))
                .output("--report", Some(&dotted)),
        );
        assert!(
            e.contains("-o") && e.contains("--report") && e.contains("same file"),
            "{e}"
        );
        // Through a linked directory.
        let linked = d.path().join("linked");
        std::os::unix::fs::symlink(d.path(), &linked).unwrap();
        let e = usage(
            &CommandFiles::new()
                .output("-o", Some(&x))
                .output("--history", Some(linked.join("x.json"))),
        );
        assert!(e.contains("same file"), "{e}");
        // Distinct files pass, and nothing is written.
        CommandFiles::new()
            .output("-o", Some(&x))
            .output("--report", Some(d.path().join("x.html")))
            .check()
            .unwrap();
        assert!(!x.exists());
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_also_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let sla = d.path().join("sla.toml");
        std::fs::write(&sla, "[default]\n").unwrap();
        let link = d.path().join("sla-link.toml");
        std::os::unix::fs::symlink(&sla, &link).unwrap();
        let hard = d.path().join("sla-hard.toml");
        std::fs::hard_link(&sla, &hard).unwrap();
        for input in [&sla, &link] {
            let e = usage(
                &CommandFiles::new()
                    .output("--report", Some(&hard))
                    .input("--sla", Some(input)),
            );
            assert!(e.contains("--report") && e.contains("--sla"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&sla).unwrap(), "[default]\n");
    }

    #[test]
    fn a_file_where_a_directory_is_written_is_refused_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let e = usage(&CommandFiles::new().output_dir("--hdr-log", Some(&file)));
        assert!(e.starts_with("--hdr-log:") && e.contains("plain"), "{e}");
        let e = usage(&CommandFiles::new().output("-o", Some(d.path())));
        assert!(e.starts_with("-o:"), "{e}");
        let e = usage(&CommandFiles::new().output("--report", Some("/dev/null")));
        assert!(e.contains("/dev/null"), "{e}");
    }
}
