//! The lock on a cluster's state: every command that changes a cluster (`up`, `down`, adding,
//! removing, stopping and starting nodes, snapshots, an elastic run, an experiment's clusters)
//! holds it for as long as it runs, so two commands never write `cluster.json` over each other
//! (two `cluster up` of one deployment at once recorded the servers of only one of them, and the
//! others ran on unrecorded).
//!
//! The lock file is `<clusters dir>/<name>.lock`, beside the cluster's directory rather than in it:
//! `up` over an old cluster and `down --purge` remove that directory, and a lock file removed while
//! held would let the next command lock a new file of the same name. It is `flock`ed (std's
//! `File::lock`): the kernel releases it when its holder exits, however it exits, so a stale lock
//! cannot exist. The file names its holder (pid, what it does, since when) for the refusal.
//!
//! Within one process the lock is re-entrant: an experiment holds its cluster's lock while the
//! elastic run it starts takes it again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::DeployError;

/// The locks this process holds, by lock file: the file (its `flock`) and how many guards share it.
type Held = Mutex<HashMap<PathBuf, (File, usize)>>;

fn held() -> &'static Held {
    static HELD: OnceLock<Held> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Held while a command changes a cluster; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct StateLock {
    path: PathBuf,
}

impl StateLock {
    /// The lock file of the cluster whose directory is `cluster_dir`.
    pub fn path_for(cluster_dir: &Path) -> PathBuf {
        let name = cluster_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "cluster".into());
        let parent = cluster_dir.parent().unwrap_or(Path::new("."));
        // One file whatever the spelling of the path (the in-process count is keyed by it).
        let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        parent.join(format!("{name}.lock"))
    }

    /// Takes the lock of the cluster in `cluster_dir` without waiting: while another process holds
    /// it, refuses (bad input, exit 2) naming the holder as its lock file records it.
    pub fn take(cluster_dir: &Path) -> Result<StateLock, DeployError> {
        if let Some(parent) = cluster_dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| DeployError::io(parent, e))?;
        }
        let path = Self::path_for(cluster_dir);
        let mut held = held().lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, count)) = held.get_mut(&path) {
            *count += 1;
            return Ok(StateLock { path });
        }
        let mut file = open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&file).take(512).read_to_string(&mut holder);
                let holder = holder.trim();
                let name = cluster_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(DeployError::BadInput(format!(
                    "cluster {name} is busy: {} holds its lock ({}); try again when that command has ended",
                    if holder.is_empty() {
                        "another command".to_string()
                    } else {
                        holder.to_string()
                    },
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(DeployError::io(&path, e)),
        }
        // Who holds it, for the next command's refusal (never a command line: it may hold a password).
        let since = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = writeln!(
            file,
            "pid {} ({}, since {since})",
            std::process::id(),
            this_command()
        );
        held.insert(path.clone(), (file, 1));
        Ok(StateLock { path })
    }
}

/// What this process is, as its holder line says it: the program and its command words (`scalebench
/// cluster up`, `scalebench elastic`), never an option's value.
fn this_command() -> String {
    let args: Vec<String> = std::env::args().take(3).collect();
    let program = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut words = vec![program];
    for a in args.iter().skip(1) {
        if a.starts_with('-') || a.contains(['/', '.', '=']) || a.len() > 20 {
            break;
        }
        words.push(a.clone());
        if a != "cluster" {
            break;
        }
    }
    words.join(" ")
}

/// Opens (creates) the lock file: the caller's own regular file, never through a link.
fn open_lock_file(path: &Path) -> Result<File, DeployError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| DeployError::io(path, e))?;
    let m = file.metadata().map_err(|e| DeployError::io(path, e))?;
    let me = nix::unistd::geteuid().as_raw();
    if !m.is_file() || m.uid() != me {
        return Err(DeployError::BadInput(format!(
            "{} is not a lock file of yours (a regular file of uid {me}): remove it or choose another --clusters-dir",
            path.display()
        )));
    }
    Ok(file)
}

impl Drop for StateLock {
    fn drop(&mut self) {
        let mut held = held().lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, count)) = held.get_mut(&self.path) {
            *count -= 1;
            if *count == 0 {
                // Closing the file releases the flock; the file stays (see the module's comment).
                held.remove(&self.path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another process's lock is refused with its holder named; this process's is re-entrant and
    /// released with its last guard.
    #[test]
    fn a_held_lock_refuses_others_and_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let cluster = dir.path().join("c1");
        let first = StateLock::take(&cluster).unwrap();
        let again = StateLock::take(&cluster).unwrap();
        let path = StateLock::path_for(&cluster);
        // Another open file description: as another process would see it (flock locks conflict
        // between descriptions, also within one process).
        let other = open_lock_file(&path).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&format!("pid {} (", std::process::id()))
                && text.contains(", since 20"),
            "{text}"
        );
        drop(first);
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(again);
        other.try_lock().expect("released with its last guard");
    }

    /// A link where the lock file goes is not followed (it could name a file of someone else's).
    #[test]
    fn a_link_as_lock_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("c2.lock")).unwrap();
        let e = StateLock::take(&dir.path().join("c2")).unwrap_err();
        assert!(e.to_string().contains("c2.lock"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
