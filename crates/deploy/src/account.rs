//! Servers never run as root. When scalebench runs as root (CI and most lab machines do), each
//! server runs as its database's system account (`postgres`, `mysql`, `redis`, `etcd`, `cassandra`),
//! created as a package's install script would when it is missing, and keeps its files in a
//! directory of its own under the system temporary directory: the place scalebench was asked to use
//! may lie below a directory that account cannot enter (root's home, a 0700 temporary directory).
//! A symbolic link at that place points to the directory, so people and `cluster up` find it.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::DeployError;

use crate::host::{random_password, run};

/// Who a server runs as: ourselves, or (when we are root) a system account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// None: the server runs as we do.
    other: Option<SystemAccount>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SystemAccount {
    name: String,
    uid: u32,
    gid: u32,
}

/// Every relocated server directory is named so; nothing else is ever removed through a link.
const RELOCATED_PREFIX: &str = "scalebench-";

impl Account {
    /// The account a server of `name`'s database runs as: ourselves unless we are root, then the
    /// system account `name` (created if missing).
    pub fn for_server(name: &str) -> Result<Account, DeployError> {
        if !running_as_root() {
            return Ok(Account { other: None });
        }
        let (uid, gid) = match user_ids(name) {
            Some(ids) => ids,
            None => create_system_account(name)?,
        };
        Ok(Account {
            other: Some(SystemAccount {
                name: name.to_string(),
                uid,
                gid,
            }),
        })
    }

    /// The user id its servers run as.
    pub fn uid(&self) -> u32 {
        match &self.other {
            Some(a) => a.uid,
            None => nix::unistd::getuid().as_raw(),
        }
    }

    /// The system account's name, when the server runs as one.
    pub fn system_name(&self) -> Option<&str> {
        self.other.as_ref().map(|a| a.name.as_str())
    }

    /// Makes `cmd` run as this account (its supplementary groups dropped), from a directory it can
    /// enter unless `cmd` names one.
    pub fn apply(&self, cmd: &mut Command) {
        if let Some(a) = &self.other {
            cmd.uid(a.uid).gid(a.gid);
            if cmd.get_current_dir().is_none() {
                cmd.current_dir(std::env::temp_dir());
            }
        }
    }

    /// Gives `path` and everything below it to this account. Links are changed, never followed: a
    /// server could have planted one in its own directory.
    pub fn give(&self, path: &Path) -> Result<(), DeployError> {
        let Some(a) = &self.other else {
            return Ok(());
        };
        give_tree(path, a.uid, a.gid)
    }

    /// A new, empty directory for one server's files, for `place`. Whatever `place` held is removed
    /// first (through [`remove_server_dir`]). Running as ourselves, the directory is `place`; as a
    /// system account, it is a new directory with a random name under the system temporary
    /// directory, mode 0700, owned by the account, and `place` becomes a link to it.
    pub fn server_dir(&self, place: &Path) -> Result<PathBuf, DeployError> {
        remove_server_dir(place)?;
        let Some(a) = &self.other else {
            std::fs::create_dir_all(place).map_err(|e| DeployError::io(place, e))?;
            return Ok(place.to_path_buf());
        };
        // Named after the place's last two parts (`<cluster>-node1`, `<base>-postgres-5432`), so
        // whoever lists the temporary directory sees whose it is.
        let part = |p: Option<&Path>| {
            p.and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let label = format!("{}-{}", part(place.parent()), part(Some(place)));
        // Created exclusively (mkdir fails on anything already there, links included).
        let dir = std::env::temp_dir().join(format!(
            "{RELOCATED_PREFIX}{label}-{}",
            &random_password()?[..12]
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| DeployError::io(&dir, e))?;
        std::os::unix::fs::lchown(&dir, Some(a.uid), Some(a.gid))
            .map_err(|e| DeployError::io(&dir, e))?;
        if let Some(parent) = place.parent() {
            std::fs::create_dir_all(parent).map_err(|e| DeployError::io(parent, e))?;
        }
        std::os::unix::fs::symlink(&dir, place).map_err(|e| DeployError::io(place, e))?;
        Ok(dir)
    }
}

/// Removes what [`Account::server_dir`] made at `place`: the directory, or the link and the
/// relocated directory it points to. Nothing there: nothing to do. A link to anything else is
/// removed, not followed.
pub fn remove_server_dir(place: &Path) -> Result<(), DeployError> {
    let meta = match std::fs::symlink_metadata(place) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(DeployError::io(place, e)),
    };
    if meta.file_type().is_symlink() {
        if let Some(target) = relocated_target(place) {
            std::fs::remove_dir_all(&target).map_err(|e| DeployError::io(&target, e))?;
        }
        std::fs::remove_file(place).map_err(|e| DeployError::io(place, e))
    } else if meta.is_dir() {
        std::fs::remove_dir_all(place).map_err(|e| DeployError::io(place, e))
    } else {
        std::fs::remove_file(place).map_err(|e| DeployError::io(place, e))
    }
}

/// Removes a directory and, first, the relocated server directories its links point to (a
/// cluster directory: one link per node when servers ran as a system account).
pub fn remove_tree_with_servers(dir: &Path) -> Result<(), DeployError> {
    remove_relocated_servers(dir)?;
    std::fs::remove_dir_all(dir).map_err(|e| DeployError::io(dir, e))
}

/// Removes the links in `dir` and the relocated server directories they point to.
pub fn remove_relocated_servers(dir: &Path) -> Result<(), DeployError> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                remove_server_dir(&entry.path())?;
            }
        }
    }
    Ok(())
}

/// The directory a link made by [`Account::server_dir`] points to: a directory directly under the
/// system temporary directory whose name starts with [`RELOCATED_PREFIX`], not itself a link.
fn relocated_target(link: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    let name = target.file_name()?.to_str()?;
    let under_temp = target.parent()? == std::env::temp_dir();
    let is_dir = std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir());
    (under_temp && name.starts_with(RELOCATED_PREFIX) && is_dir).then_some(target)
}

/// A standalone server's directory (tests, `serve`): a relocated one goes with the handle.
#[derive(Debug)]
pub struct ServerDir {
    pub path: PathBuf,
    place: PathBuf,
}

impl ServerDir {
    /// A fresh directory for a server of `account` at `base/<kind>-<port>`.
    pub fn new(base: &Path, kind: &str, port: u16, account: &Account) -> Result<Self, DeployError> {
        let place = base.join(format!("{kind}-{port}"));
        let path = account.server_dir(&place)?;
        Ok(ServerDir { path, place })
    }
}

impl Drop for ServerDir {
    fn drop(&mut self) {
        if self.path != self.place {
            let _ = remove_server_dir(&self.place);
        }
    }
}

/// Whether this program runs as root.
pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// uid and gid of a system user (getpwnam_r(3): no static storage another thread could overwrite).
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let user = nix::unistd::User::from_name(name).ok()??;
    Some((user.uid.as_raw(), user.gid.as_raw()))
}

/// `useradd --system`, as the database's Debian package would (Cassandra from Maven Central comes
/// without one). Another process may be creating it at the same moment: then it is simply there.
fn create_system_account(name: &str) -> Result<(u32, u32), DeployError> {
    let mut last = String::new();
    for _ in 0..10 {
        if let Some(ids) = user_ids(name) {
            return Ok(ids);
        }
        match run(
            Command::new("useradd")
                .args(["--system", "--user-group", "--no-create-home"])
                .args(["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin"])
                .arg(name),
            &format!("useradd (the system account {name} to run the server as)"),
        ) {
            Ok(_) => {}
            // Exists already, or /etc/passwd is locked by another useradd: look again.
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    user_ids(name).ok_or_else(|| {
        DeployError::Failed(format!(
            "no system account {name:?} to run the server as (servers never run as root): {last}"
        ))
    })
}

fn give_tree(path: &Path, uid: u32, gid: u32) -> Result<(), DeployError> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| DeployError::io(path, e))?;
    let meta = std::fs::symlink_metadata(path).map_err(|e| DeployError::io(path, e))?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).map_err(|e| DeployError::io(path, e))? {
            let entry = entry.map_err(|e| DeployError::io(path, e))?;
            give_tree(&entry.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// Makes `dir` (created if needed) private to whoever runs the server: mode 0700, owned by it.
pub fn private_dir(dir: &Path, account: &Account) -> Result<(), DeployError> {
    std::fs::create_dir_all(dir).map_err(|e| DeployError::io(dir, e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| DeployError::io(dir, e))?;
    account.give(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_server_dir_never_follows_a_foreign_link() {
        let t = tempfile::tempdir().unwrap();
        let precious = t.path().join("precious");
        std::fs::create_dir(&precious).unwrap();
        std::fs::write(precious.join("keep"), "x").unwrap();
        let place = t.path().join("node1");
        std::os::unix::fs::symlink(&precious, &place).unwrap();
        remove_server_dir(&place).unwrap();
        assert!(!place.exists());
        assert!(precious.join("keep").exists());
    }

    #[test]
    fn a_server_dir_as_ourselves_is_the_place_itself() {
        let t = tempfile::tempdir().unwrap();
        let me = Account { other: None };
        let place = t.path().join("a/node1");
        assert_eq!(me.server_dir(&place).unwrap(), place);
        std::fs::write(place.join("old"), "x").unwrap();
        // A second call starts afresh.
        me.server_dir(&place).unwrap();
        assert!(!place.join("old").exists());
    }
}
