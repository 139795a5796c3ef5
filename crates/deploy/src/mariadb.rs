//! MariaDB from the Debian packages (`mariadb-install-db`, `mariadbd`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::process::{free_port, port_open, random_password, run, DeployError, ManagedProcess};
use crate::server_dir;

pub const USER: &str = "bench";
pub const DATABASE: &str = "ycsb";

pub struct MariadbServer {
    pub port: u16,
    pub process: ManagedProcess,
    socket: std::path::PathBuf,
    password: String,
}

impl MariadbServer {
    /// A server on a free port with user `bench` (password) and database `ycsb`; `settings` are extra
    /// `--name=value` server options.
    pub fn start(
        base: &Path,
        settings: &[(&str, &str)],
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let port = free_port()?;
        let dir = server_dir(base, "mariadb", port)?;
        let data = dir.join("data");
        let socket = dir.join("mysqld.sock");
        let root = crate::cluster::running_as_root();
        install_db(&data)?;
        let mut cmd = Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--port={port}"))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=128M",
                "--max-connections=500",
            ]);
        if root {
            cmd.arg("--user=root");
        }
        for (k, v) in settings {
            cmd.arg(format!("--{k}={v}"));
        }
        let mut process = ManagedProcess::spawn("mariadbd", &dir, cmd, die_with_parent)?;
        let sock = socket.clone();
        process.wait_ready(Duration::from_secs(60), || port_open(port) && ping(&sock))?;
        let password = random_password()?;
        sql(&socket, &create_user_and_database_sql(&password))?;
        Ok(MariadbServer {
            port,
            process,
            socket,
            password,
        })
    }

    pub fn url(&self) -> String {
        format!(
            "mysql://{USER}:{}@127.0.0.1:{}/{DATABASE}",
            self.password, self.port
        )
    }

    /// The benchmark user's password (random per server).
    pub fn password(&self) -> &str {
        &self.password
    }

    /// Runs SQL as root over the server's socket.
    pub fn sql(&self, text: &str) -> Result<String, DeployError> {
        sql(&self.socket, text)
    }
}

/// A fresh data directory (system tables, no test database).
pub fn install_db(data: &Path) -> Result<(), DeployError> {
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg("--skip-test-db");
    if crate::cluster::running_as_root() {
        install.arg("--user=root");
    }
    run(&mut install, "mariadb-install-db").map(|_| ())
}

/// `mariadb-admin ping` over the socket succeeds.
pub fn ping(socket: &Path) -> bool {
    Command::new("mariadb-admin")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "ping"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// SQL as root over a server's socket; tab-separated rows without headers.
pub fn sql(socket: &Path, text: &str) -> Result<String, DeployError> {
    run(
        Command::new("mariadb")
            .arg(format!("--socket={}", socket.display()))
            .args(["-uroot", "-N", "-B", "-e", text]),
        "mariadb",
    )
}

/// The benchmark's user and database: all rights on the benchmark's database only (no FILE
/// privilege: no `SELECT ... INTO OUTFILE`, no other database).
pub fn create_user_and_database_sql(password: &str) -> String {
    format!(
        "CREATE DATABASE IF NOT EXISTS {DATABASE}; CREATE USER IF NOT EXISTS '{USER}'@'%' IDENTIFIED BY '{password}'; GRANT ALL ON {DATABASE}.* TO '{USER}'@'%';"
    )
}
