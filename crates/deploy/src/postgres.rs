//! PostgreSQL from the Debian packages: `initdb` and `postgres` from /usr/lib/postgresql/<version>/bin,
//! run as the `postgres` user when started by root.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{
    chown_tree, free_port, port_open, run, user_ids, DeployError, ManagedProcess,
};
use crate::server_dir;

pub const USER: &str = "bench";
pub const PASSWORD: &str = "bench-secret";
pub const DATABASE: &str = "ycsb";

pub struct PostgresServer {
    pub port: u16,
    pub process: ManagedProcess,
}

/// The newest installed PostgreSQL's bin directory.
pub fn bin_dir() -> Result<PathBuf, DeployError> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| {
            DeployError::Failed(format!(
                "PostgreSQL is not installed (/usr/lib/postgresql: {e})"
            ))
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, p)| p)
        .ok_or_else(|| DeployError::Failed("no PostgreSQL version in /usr/lib/postgresql".into()))
}

impl PostgresServer {
    /// A server on a free port with user `bench` (password) and database `ycsb`; `settings` are
    /// `-c name=value` server settings.
    pub fn start(
        base: &Path,
        settings: &[(&str, &str)],
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let bin = bin_dir()?;
        let port = free_port()?;
        let dir = server_dir(base, "postgres", port)?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        // As root the server runs as `postgres`, which may not traverse `base` (a 0700 temporary
        // directory, say): then data and socket live under the system temp directory instead.
        let data = if root {
            std::env::temp_dir().join(format!("scalebench-postgres-{port}"))
        } else {
            dir.join("data")
        };
        let sockets = if root { data.clone() } else { dir.clone() };
        if root && data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| crate::DeployError::io(&data, e))?;
        }
        let as_postgres = |cmd: &mut Command| {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                if let Some((uid, gid)) = user_ids("postgres") {
                    cmd.uid(uid).gid(gid).current_dir(std::env::temp_dir());
                }
            }
        };
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let (uid, gid) = user_ids("postgres").ok_or_else(|| {
                DeployError::Failed("no 'postgres' user to run PostgreSQL as".into())
            })?;
            std::fs::create_dir_all(&data).map_err(|e| crate::DeployError::io(&data, e))?;
            chown_tree(&data, uid, gid)?;
        }
        let mut initdb = Command::new(bin.join("initdb"));
        initdb.arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        ]);
        as_postgres(&mut initdb);
        run(&mut initdb, "initdb")?;

        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&sockets);
        cmd.args([
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "shared_buffers=128MB",
            "-c",
            "max_connections=300",
        ]);
        for (k, v) in settings {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        as_postgres(&mut cmd);
        let mut process = ManagedProcess::spawn("postgres", &dir, cmd, die_with_parent)?;
        let isready = bin.join("pg_isready");
        process.wait_ready(Duration::from_secs(60), || {
            port_open(port)
                && Command::new(&isready)
                    .args(["-h", "127.0.0.1", "-p", &port.to_string()])
                    .output()
                    .is_ok_and(|o| o.status.success())
        })?;
        let mut psql = Command::new(bin.join("psql"));
        psql.arg("-h").arg(&sockets).args([
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-q",
        ]);
        psql.args([
            "-c",
            &format!("CREATE USER {USER} SUPERUSER PASSWORD '{PASSWORD}'"),
            "-c",
            &format!("CREATE DATABASE {DATABASE} OWNER {USER}"),
        ]);
        as_postgres(&mut psql);
        run(&mut psql, "psql (create user and database)")?;
        Ok(PostgresServer { port, process })
    }

    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port
        )
    }
}
