//! Memory limits on a cluster's nodes (the deployment's `memory = "2GiB"`): every process of a node
//! runs in a memory cgroup of the node's own, whose limit covers what the processes allocate and the
//! page cache of the files they read. Data larger than a node's limit is then read from disk, as on
//! a machine with that much memory, while the machine itself has plenty.
//!
//! The group is `<memory hierarchy>/scalebench/<cluster>-<hash of its directory>-<node>`: made when
//! the node starts (placed there before it runs, so every process it forks is inside), removed when
//! it stops. It is the kernel's, so it outlives the scalebench command that made it, as the node does.

use std::fmt;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::host::wait_until;
use crate::DeployError;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// A node's memory limit: a whole number of KiB, MiB or GiB (`"2GiB"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct MemoryLimit {
    bytes: u64,
}

impl MemoryLimit {
    /// Below this no database here starts.
    pub const MIN_BYTES: u64 = 16 * MIB;
    pub const MAX_BYTES: u64 = 1024 * GIB;

    pub fn parse(text: &str) -> Result<MemoryLimit, String> {
        let bad = |why: &str| format!("memory = {text:?}: {why}");
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let unit_bytes = match unit.trim_start() {
            "KiB" => KIB,
            "MiB" => MIB,
            "GiB" => GIB,
            _ => 0,
        };
        if number.is_empty() || unit_bytes == 0 {
            return Err(bad("give a whole number of KiB, MiB or GiB, e.g. \"2GiB\""));
        }
        let bytes = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(unit_bytes))
            .filter(|b| (Self::MIN_BYTES..=Self::MAX_BYTES).contains(b))
            .ok_or_else(|| bad("expected 16MiB to 1024GiB"))?;
        Ok(MemoryLimit { bytes })
    }

    pub fn bytes(self) -> u64 {
        self.bytes
    }

    /// Half the limit in MiB: the most a server may size for itself (a JVM's heap, PostgreSQL's
    /// shared buffers, ...), the rest being the process's own memory and the page cache.
    pub fn half_mib(self) -> u32 {
        u32::try_from(self.bytes / 2 / MIB).unwrap_or(u32::MAX)
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, unit) = [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")]
            .into_iter()
            .find(|(u, _)| self.bytes.is_multiple_of(*u))
            .map_or((self.bytes, "B"), |(u, name)| (self.bytes / u, name));
        write!(f, "{n}{unit}")
    }
}

impl<'de> Deserialize<'de> for MemoryLimit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = MemoryLimit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a memory size such as \"2GiB\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MemoryLimit, E> {
                MemoryLimit::parse(v).map_err(E::custom)
            }
            // A bare number has no unit: named, and refused.
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<MemoryLimit, E> {
                Err(E::custom(format!(
                    "memory = {v}: give a whole number of KiB, MiB or GiB in quotes, e.g. \"2GiB\""
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<MemoryLimit, E> {
                self.visit_i64(v as i64)
            }
        }
        d.deserialize_any(Text)
    }
}

impl From<MemoryLimit> for String {
    fn from(m: MemoryLimit) -> String {
        m.to_string()
    }
}

/// The two interfaces of the kernel's memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    /// cgroup v1: a hierarchy of its own, `memory.limit_in_bytes`.
    V1,
    /// cgroup v2: the unified hierarchy, `memory.max`.
    V2,
}

/// The directory under which every node's group is made, in the hierarchy of this machine's memory
/// controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// `<mount point>/scalebench`.
    base: PathBuf,
    version: Version,
}

/// Every node's group lies below this directory of the hierarchy's root.
const BASE: &str = "scalebench";

impl Controller {
    /// This machine's memory controller, and the right to make groups in it (the base directory is
    /// made here). The error is one line saying why a memory limit cannot be had.
    pub fn open() -> Result<Controller, String> {
        let controller = Self::find()?;
        controller.make_base()?;
        Ok(controller)
    }

    /// This machine's memory controller, as mounted.
    pub fn find() -> Result<Controller, String> {
        let mounts = std::fs::read_to_string("/proc/mounts")
            .map_err(|e| format!("cannot read /proc/mounts: {e}"))?;
        find_controller(&mounts, |root| {
            std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default()
        })
        .ok_or_else(|| {
            "no cgroup memory controller is mounted here (neither a cgroup v1 `memory` hierarchy \
             nor cgroup v2 with `memory` in cgroup.controllers)"
                .to_string()
        })
    }

    fn make_base(&self) -> Result<(), String> {
        let root = self.base.parent().expect("base lies below the mount point");
        if self.version == Version::V2 {
            // Groups below the base get the memory controller only if every ancestor hands it down.
            enable_memory_below(root)?;
        }
        match std::fs::create_dir(&self.base) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "cannot make the memory cgroup {} ({e}): a memory limit needs root or a \
                     delegated cgroup",
                    self.base.display()
                ))
            }
        }
        if self.version == Version::V2 {
            enable_memory_below(&self.base)?;
        }
        // The base may be another user's: whether this one may make groups in it is only known by
        // making one.
        let trial = self.base.join(format!("probe-{}", std::process::id()));
        std::fs::create_dir(&trial).map_err(|e| {
            format!(
                "cannot make a memory cgroup in {} ({e}): a memory limit needs root or a delegated cgroup",
                self.base.display()
            )
        })?;
        let _ = std::fs::remove_dir(&trial);
        Ok(())
    }

    /// The group of node `node` of the cluster in `cluster_dir` (named `cluster`): its own for as
    /// long as the cluster directory is, never another cluster's (the directory's hash is in it).
    pub fn group(&self, cluster: &str, cluster_dir: &Path, node: &str) -> MemoryGroup {
        MemoryGroup {
            path: self
                .base
                .join(format!("{cluster}-{:08x}-{node}", path_hash(cluster_dir))),
            version: self.version,
        }
    }
}

/// The memory controller among the mounted file systems (`/proc/mounts`): a cgroup v1 hierarchy
/// with the `memory` option, else a cgroup v2 one whose `cgroup.controllers` (read by
/// `controllers`) offers `memory`.
fn find_controller(mounts: &str, controllers: impl Fn(&Path) -> String) -> Option<Controller> {
    let entries: Vec<(&str, &str, &str)> = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((*f.get(1)?, *f.get(2)?, *f.get(3)?))
        })
        .collect();
    let at = |mount: &str, version| Controller {
        base: Path::new(mount).join(BASE),
        version,
    };
    entries
        .iter()
        .find(|(_, fs, options)| *fs == "cgroup" && options.split(',').any(|o| o == "memory"))
        .map(|(mount, _, _)| at(mount, Version::V1))
        .or_else(|| {
            entries
                .iter()
                .find(|(mount, fs, _)| {
                    *fs == "cgroup2"
                        && controllers(Path::new(mount))
                            .split_whitespace()
                            .any(|c| c == "memory")
                })
                .map(|(mount, _, _)| at(mount, Version::V2))
        })
}

/// cgroup v2: hands the memory controller down to the groups below `dir`.
fn enable_memory_below(dir: &Path) -> Result<(), String> {
    let file = dir.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&file).unwrap_or_default();
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    std::fs::write(&file, "+memory").map_err(|e| {
        format!(
            "cannot enable the memory controller in {} ({e}): a memory limit needs root, and a \
             cgroup v2 group without processes of its own",
            file.display()
        )
    })
}

/// FNV-1a of a path: stable across builds (the group of a running node must be found again by a
/// later scalebench).
fn path_hash(p: &Path) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in p.as_os_str().as_encoded_bytes() {
        h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    }
    h
}

/// One node's memory cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryGroup {
    path: PathBuf,
    version: Version,
}

impl MemoryGroup {
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn file(&self, v1: &str, v2: &str) -> PathBuf {
        self.path.join(match self.version {
            Version::V1 => v1,
            Version::V2 => v2,
        })
    }

    fn write(&self, file: &Path, value: &str) -> Result<(), DeployError> {
        std::fs::write(file, value).map_err(|e| DeployError::io(file, e))
    }

    /// Makes the group (or takes over the one a stopped node left) with `limit` on memory and no
    /// swap beyond it.
    pub fn create(&self, limit: MemoryLimit) -> Result<(), DeployError> {
        match std::fs::create_dir(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(DeployError::io(&self.path, e)),
        }
        let bytes = limit.bytes().to_string();
        match self.version {
            Version::V1 => {
                // memory+swap may never be below memory alone: lift it, set memory, then match it.
                let memsw = self.path.join("memory.memsw.limit_in_bytes");
                let has_swap_limit = memsw.exists();
                if has_swap_limit {
                    self.write(&memsw, "-1")?;
                }
                self.write(&self.path.join("memory.limit_in_bytes"), &bytes)?;
                if has_swap_limit {
                    self.write(&memsw, &bytes)?;
                }
            }
            Version::V2 => {
                self.write(&self.path.join("memory.max"), &bytes)?;
                let swap = self.path.join("memory.swap.max");
                if swap.exists() {
                    self.write(&swap, "0")?;
                }
            }
        }
        Ok(())
    }

    /// Makes `cmd`'s process join this group before it runs its program, so everything it forks is
    /// inside too. The group's process list is opened here, by us (a process may move itself
    /// through a file opened by someone allowed to, even after it gave up that right: servers drop
    /// root before they run).
    pub fn join_at_exec(&self, cmd: &mut Command) -> Result<(), DeployError> {
        let file = self.path.join("cgroup.procs");
        let procs = OpenOptions::new()
            .write(true)
            .open(&file)
            .map_err(|e| DeployError::io(&file, e))?;
        // SAFETY: one write(2) to an open descriptor, async-signal-safe; "0" is the writer itself.
        unsafe {
            cmd.pre_exec(move || {
                let mut f = &procs;
                f.write_all(b"0")
            });
        }
        Ok(())
    }

    /// The processes in the group.
    pub fn processes(&self) -> Vec<u32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn read_number(&self, file: PathBuf) -> Option<u64> {
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    }

    /// Bytes the group's processes use now, page cache included.
    pub fn usage_bytes(&self) -> Option<u64> {
        self.read_number(self.file("memory.usage_in_bytes", "memory.current"))
    }

    /// How many of the group's processes the kernel killed for want of memory within the limit.
    pub fn oom_kills(&self) -> Option<u64> {
        let text =
            std::fs::read_to_string(self.file("memory.oom_control", "memory.events")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
    }

    /// The limit the kernel holds the group to (none: the group is gone or unlimited).
    pub fn limit_bytes(&self) -> Option<u64> {
        self.read_number(self.file("memory.limit_in_bytes", "memory.max"))
    }

    /// Removes the group once its processes have gone (they are waited for up to 10 s: a stopped
    /// server's last processes may still be exiting). A group still in use stays, and is taken
    /// over when the node starts again.
    pub fn remove(&self) {
        if !self.path.exists() {
            return;
        }
        wait_until(Duration::from_secs(10), || {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => true,
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_in_binary_units() {
        let bytes = |t: &str| MemoryLimit::parse(t).unwrap().bytes();
        assert_eq!(bytes("2GiB"), 2 * GIB);
        assert_eq!(bytes("64MiB"), 64 * MIB);
        assert_eq!(bytes("65536KiB"), 64 * MIB);
        assert_eq!(bytes(" 512 MiB "), 512 * MIB);
        assert_eq!(MemoryLimit::parse("2048MiB").unwrap().to_string(), "2GiB");
        assert_eq!(
            MemoryLimit::parse("1536MiB").unwrap().to_string(),
            "1536MiB"
        );
        assert_eq!(MemoryLimit::parse("1536MiB").unwrap().half_mib(), 768);
    }

    #[test]
    fn bad_limits_are_refused_naming_the_value() {
        for bad in [
            "2GB",
            "2G",
            "2",
            "",
            "GiB",
            "1.5GiB",
            "-1GiB",
            "2gib",
            "15MiB",
            "1025GiB",
            "99999999999999999999GiB",
            "2GiB2",
        ] {
            let e = MemoryLimit::parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("memory = {bad:?}: ")), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn the_controller_is_found_in_either_version() {
        let v1 = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                  cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                  cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        let only = |offered: &'static str| move |_: &Path| offered.to_string();
        let c = find_controller(v1, only("hugetlb")).unwrap();
        assert_eq!(c.version, Version::V1);
        assert_eq!(c.base, Path::new("/sys/fs/cgroup/memory/scalebench"));

        let v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";
        let c = find_controller(v2, only("cpuset cpu io memory pids")).unwrap();
        assert_eq!(c.version, Version::V2);
        assert_eq!(c.base, Path::new("/sys/fs/cgroup/scalebench"));
        // cgroup v2 without the memory controller (it is bound to no hierarchy, or to v1 elsewhere).
        assert_eq!(find_controller(v2, only("cpu io pids")), None);
        assert_eq!(find_controller("proc /proc proc rw 0 0\n", only("")), None);
    }

    #[test]
    fn two_clusters_of_one_name_get_groups_of_their_own() {
        let c = Controller {
            base: PathBuf::from("/sys/fs/cgroup/memory/scalebench"),
            version: Version::V1,
        };
        let a = c.group("pg", Path::new("/tmp/a/pg"), "node1");
        let b = c.group("pg", Path::new("/tmp/b/pg"), "node1");
        assert_ne!(a, b);
        assert_eq!(a, c.group("pg", Path::new("/tmp/a/pg"), "node1"));
        let name = a.path().file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("pg-") && name.ends_with("-node1"),
            "{name}"
        );
    }
}
