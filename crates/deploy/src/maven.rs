//! Servers that run from jars on Maven Central (Cassandra, mongo-java-server, HBase): their
//! classpath resolved by `mvn` into a per-user cache, and made readable to a system account.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::account::Account;
use crate::error::DeployError;
use crate::host::run;

/// A server's Maven project (a pom whose dependencies are the server's jars), built into the binary
/// so that an installed scalebench needs no checkout.
#[derive(Debug, Clone, Copy)]
pub struct MavenProject {
    /// Names its directory in the cache.
    pub name: &'static str,
    /// Names it in messages ("mvn (resolving <what> from Maven Central)").
    pub what: &'static str,
    pub pom: &'static str,
}

/// The per-user cache servers are resolved into: `$SCALEBENCH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/scalebench`, else `$HOME/.cache/scalebench`.
pub fn cache_dir() -> Result<PathBuf, DeployError> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("SCALEBENCH_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("scalebench")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/scalebench")))
        .ok_or_else(|| {
            DeployError::Failed(
                "no cache directory: set SCALEBENCH_CACHE_DIR (or HOME) to resolve servers into"
                    .into(),
            )
        })?;
    std::fs::create_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
    Ok(dir)
}

impl MavenProject {
    /// A file listing the project's classpath, resolved by Maven (`mvn` from PATH, on the project built
    /// into this binary) into the per-user cache on first use. Nothing found by searching directories is
    /// ever executed.
    pub fn classpath_file(&self) -> Result<PathBuf, DeployError> {
        let dir = cache_dir()?.join(format!("{}-{}", self.name, hex_hash(self.pom)));
        let out = dir.join("classpath.txt");
        if std::fs::metadata(&out).is_ok_and(|m| m.len() > 0) {
            return Ok(out);
        }
        std::fs::create_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
        let pom = dir.join("pom.xml");
        write_whole(&pom, self.pom)?;
        // A temporary of this resolution alone: concurrent ones each rename a complete file.
        let tmp = dir.join(format!("classpath.{}.tmp", unique_suffix()));
        run(
            Command::new("mvn")
                .args(["-q", "-B", "-f"])
                .arg(&pom)
                .arg("dependency:build-classpath")
                .arg(format!("-Dmdep.outputFile={}", tmp.display()))
                .arg("-Dmdep.includeScope=runtime"),
            &format!("mvn (resolving {} from Maven Central)", self.what),
        )?;
        std::fs::rename(&tmp, &out).map_err(|e| DeployError::io(&out, e))?;
        Ok(out)
    }

    /// The project's classpath, resolved as [`MavenProject::classpath_file`] does.
    pub fn classpath(&self) -> Result<String, DeployError> {
        let file = self.classpath_file()?;
        std::fs::read_to_string(&file)
            .map(|s| s.trim().to_string())
            .map_err(|e| DeployError::io(&file, e))
    }
}

/// Where root keeps jars a system account may read: written by root only, readable by all.
const SYSTEM_CACHE: &str = "/var/cache/scalebench";

/// `classpath` as a server running as `account` can read it. Root's Maven repository lies in its
/// home, which a system account cannot enter: the jars are then linked (copied across file
/// systems) into a directory under [`SYSTEM_CACHE`], once per classpath.
pub fn readable_classpath(classpath: &str, account: &Account) -> Result<String, DeployError> {
    if account.system_name().is_none() {
        return Ok(classpath.to_string());
    }
    let dir = Path::new(SYSTEM_CACHE).join(format!("classpath-{}", hex_hash(classpath)));
    let jars: Vec<(PathBuf, PathBuf)> = classpath
        .split(':')
        .filter(|j| !j.is_empty())
        .enumerate()
        .map(|(i, jar)| {
            let name = Path::new(jar).file_name().unwrap_or_default();
            // Numbered: the order is the classpath's, and equal names from two places stay apart.
            let linked = dir.join(format!("{i:04}-{}", name.to_string_lossy()));
            (PathBuf::from(jar), linked)
        })
        .collect();
    let complete = dir.join(".complete");
    if !complete.exists() {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&dir)
            .map_err(|e| DeployError::io(&dir, e))?;
        for (jar, linked) in &jars {
            if !linked.exists() {
                // Another process may link the same jar at once: its link is as good as ours.
                let tmp = dir.join(format!(".{}.tmp", unique_suffix()));
                std::fs::hard_link(jar, &tmp)
                    .or_else(|_| std::fs::copy(jar, &tmp).map(|_| ()))
                    .map_err(|e| DeployError::io(jar, e))?;
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))
                    .map_err(|e| DeployError::io(&tmp, e))?;
                std::fs::rename(&tmp, linked).map_err(|e| DeployError::io(linked, e))?;
            }
        }
        std::fs::write(&complete, "").map_err(|e| DeployError::io(&complete, e))?;
    }
    Ok(jars
        .iter()
        .map(|(_, linked)| linked.display().to_string())
        .collect::<Vec<_>>()
        .join(":"))
}

/// A cache directory's name for `text` (the same text, the same name).
pub(crate) fn hex_hash(text: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(text, &mut hasher);
    format!("{:016x}", std::hash::Hasher::finish(&hasher))
}

/// Distinct for every call in every process (threads of one process resolve concurrently in tests):
/// the name Maven writes the classpath to before it is renamed.
pub(crate) fn unique_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Writes `text` to `path` through scalebench's one safe writer (an exclusive temporary, renamed).
pub(crate) fn write_whole(path: &Path, text: &str) -> Result<(), DeployError> {
    scalebench_measure::files::write_bytes_atomically(path, text.as_bytes())
        .map_err(DeployError::Failed)
}
