//! Output files: checked before a run starts, then written whole or not at all.
//!
//! Every file scalebench writes goes through [`write_atomically`]: an exclusively created temporary
//! file with a random name beside the target (never an existing `NAME.tmp`, never through a symbolic
//! link), synced, then renamed over the target. A full disk or a crash leaves the old file, not half of
//! a new one, and no temporary file behind. Files people share (results, reports, CSVs, HDR logs) get
//! the mode the umask gives (0644 under 0022); a file that may hold a secret is written with
//! [`write_private_atomically`], readable by its owner only.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The text of the file at `path`, refused when it is larger than `limit` bytes: input files are
/// read whole and parsed into several times their size, so a file far beyond what scalebench
/// writes must not take the machine's memory.
pub fn read_bounded(path: &Path, limit: u64) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Opened without blocking, so that a FIFO planted at the path cannot hang the reader (a
    // regular file ignores the flag), and read only if it is a regular file: never a device
    // (`/dev/zero`), a pipe or a directory.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file (a directory, device or pipe)".into());
    }
    let mut text = String::new();
    // One byte more than the limit tells a file at the limit from a larger one (a pipe or a file
    // that grows has no trustworthy length).
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > limit {
        return Err(format!(
            "larger than {} MiB, far beyond what scalebench writes",
            limit >> 20
        ));
    }
    Ok(text)
}

/// The directory a file at `path` lives in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Whether a file can be written at `path` before any work is done: nothing but a regular file may be
/// there (renaming over `/dev/full` or a symbolic link would replace it), and its directory must
/// exist and take new files.
pub fn check_output(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            return Err(format!(
                "output '{}' is not a regular file (a directory, device, pipe or symbolic link): \
                 name a file to create or replace",
                path.display()
            ));
        }
        // In a sticky directory (/tmp) only the file's or the directory's owner may replace it:
        // the rename at the end would fail and the run's result be lost.
        // SAFETY: geteuid(2) has no preconditions.
        let me = unsafe { libc::geteuid() };
        if let Ok(d) = std::fs::metadata(parent(path)) {
            if d.mode() & 0o1000 != 0 && me != 0 && m.uid() != me && d.uid() != me {
                return Err(format!(
                    "output '{}' belongs to uid {} in a sticky directory: it cannot be replaced; name another file",
                    path.display(),
                    m.uid()
                ));
            }
        }
    }
    check_dir_takes_files(parent(path)).map_err(|e| format!("output '{}': {e}", path.display()))
}

/// Whether `dir` (created if missing) is a directory that takes new files.
pub fn check_output_dir(dir: &Path) -> Result<(), String> {
    if let Ok(m) = std::fs::symlink_metadata(dir) {
        if !m.is_dir() && !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(format!(
                "output directory '{}' is not a directory",
                dir.display()
            ));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory '{}': {e}", dir.display()))?;
    check_dir_takes_files(dir).map_err(|e| format!("output directory '{}': {e}", dir.display()))
}

fn check_dir_takes_files(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!("directory '{}' does not exist", dir.display()));
    }
    // The real test: the same exclusive creation the write will do (removed again on drop).
    tempfile::NamedTempFile::new_in(dir)
        .map(drop)
        .map_err(|e| format!("cannot create files in '{}': {e}", dir.display()))
}

/// Writes `path` whole through `write`, or leaves it as it was: see the module documentation. The
/// file's mode is 0666 less the umask, as any program's new file.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> std::io::Result<()>,
) -> Result<(), String> {
    write_with_mode(path, 0o666, write)
}

/// [`write_atomically`] for a file that may hold a secret (a cluster's state and its password):
/// mode 0600 whatever the umask.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_with_mode(path, 0o600, |out| out.write_all(bytes))
}

fn write_with_mode(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> std::io::Result<()>,
) -> Result<(), String> {
    let mut file = AtomicFile::create(path, mode)?;
    let fail = |e: std::io::Error| format!("cannot write '{}': {e}", path.display());
    {
        let mut out = BufWriter::new(file.tmp.as_file_mut());
        write(&mut out).map_err(fail)?;
        out.flush().map_err(fail)?;
    }
    file.commit()
}

/// A file written as a run goes (a history need not fit in memory) and put in place whole by
/// [`AtomicFile::commit`]: the one path of every file scalebench writes (see the module
/// documentation). Dropped without a commit, it leaves the target as it was and nothing behind.
pub struct AtomicFile {
    path: std::path::PathBuf,
    tmp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// The temporary file beside `path`, of `mode` less the umask; refused when something other
    /// than a regular file is at `path`.
    pub fn create(path: &Path, mode: u32) -> Result<AtomicFile, String> {
        use std::os::unix::fs::PermissionsExt;
        let fail = |e: String| format!("cannot write '{}': {e}", path.display());
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(fail("not a regular file".into()));
        }
        // The mode is given to open(2), which applies the umask.
        let tmp = tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(mode))
            .tempfile_in(parent(path))
            .map_err(|e| fail(e.to_string()))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> String {
        format!("cannot write '{}': {e}", self.path.display())
    }

    /// Syncs the content and renames it over the target, after checking again that the target is
    /// nothing but a regular file (something may have been planted there since the start).
    pub fn commit(self) -> Result<(), String> {
        self.tmp.as_file().sync_all().map_err(|e| self.fail(e))?;
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(self.fail("not a regular file"));
        }
        let path = self.path.clone();
        self.tmp
            .persist(&path)
            .map(drop)
            .map_err(|e| format!("cannot write '{}': {}", path.display(), e.error))
    }
}

/// Unbuffered: wrap it in a `BufWriter`.
impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_file_mut().flush()
    }
}

/// [`write_atomically`] of bytes.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomically(path, |out| out.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_nothing_else_is_touched() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("notes.json");
        let bystander = d.path().join("notes.tmp");
        std::fs::write(&bystander, "mine").unwrap();
        write_bytes_atomically(&target, b"one").unwrap();
        write_bytes_atomically(&target, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(std::fs::read_to_string(&bystander).unwrap(), "mine");
        // A failing writer leaves the old content and no temporary file.
        let err =
            write_atomically(&target, |_| Err(std::io::Error::other("disk full"))).unwrap_err();
        assert!(err.contains("disk full"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    /// A file that may hold a secret is its owner's alone whatever the umask; a shared one is not
    /// (its mode is the umask's: 0644 under the usual 022).
    #[test]
    fn private_files_are_their_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let private = d.path().join("state.json");
        write_private_atomically(&private, b"{}").unwrap();
        assert_eq!(mode(&private), 0o600);
        let shared = d.path().join("result.json");
        write_bytes_atomically(&shared, b"{}").unwrap();
        let umask = process_umask();
        assert_eq!(mode(&shared), 0o666 & !umask, "umask {umask:o}");
    }

    /// The process's umask.
    fn process_umask() -> u32 {
        // /proc/self/status says it (Linux 4.7 and later) without setting it.
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .expect("Umask in /proc/self/status")
    }

    #[test]
    fn special_files_links_and_missing_directories_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        std::fs::write(&real, "keep").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        for bad in [
            Path::new("/dev/null"),
            link.as_path(),
            d.path(),
            &d.path().join("missing/r.json"),
        ] {
            assert!(check_output(bad).is_err(), "{}", bad.display());
        }
        assert!(write_bytes_atomically(&link, b"x").is_err());
        assert!(write_bytes_atomically(Path::new("/dev/null"), b"x").is_err());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        check_output(&d.path().join("new.json")).unwrap();
        check_output(&real).unwrap();
        assert!(check_output_dir(&real).is_err());
        check_output_dir(&d.path().join("logs/deeper")).unwrap();
        assert!(d.path().join("logs/deeper").is_dir());
    }

    /// Issue 39: input files are bounded and only regular files are read; a FIFO never blocks.
    #[test]
    fn only_regular_files_within_the_bound_are_read_and_a_fifo_never_blocks() {
        let d = tempfile::tempdir().unwrap();
        let small = d.path().join("small.toml");
        std::fs::write(&small, "name = \"x\"\n").unwrap();
        assert_eq!(read_bounded(&small, 64).unwrap(), "name = \"x\"\n");
        let large = d.path().join("large.toml");
        std::fs::write(&large, vec![b'#'; 65]).unwrap();
        assert!(read_bounded(&large, 64)
            .unwrap_err()
            .contains("larger than"));
        let fifo = d.path().join("fifo.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path in a directory of this test's.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for special in [fifo.as_path(), Path::new("/dev/zero"), d.path()] {
            let e = read_bounded(special, 1 << 20).unwrap_err();
            assert!(
                e.contains("not a regular file"),
                "{}: {e}",
                special.display()
            );
        }
    }
}
