//! MariaDB from the Debian packages (`mariadb-install-db`, `mariadbd`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::account::{running_as_root, Account, ServerDir};
use crate::error::DeployError;
use crate::host::{free_port, port_open, random_password, run};
use crate::process::ManagedProcess;

pub const USER: &str = "bench";
pub const DATABASE: &str = "ycsb";
/// The system account the server runs as when scalebench runs as root.
pub const ACCOUNT: &str = "mysql";

pub struct MariadbServer {
    pub port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
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
        let account = Account::for_server(ACCOUNT)?;
        let server_dir = ServerDir::new(base, "mariadb", port, &account)?;
        let dir = &server_dir.path;
        let data = dir.join("data");
        let socket = dir.join("mysqld.sock");
        install_db(&data, &account)?;
        let mut cmd = Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--port={port}"))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!("--tmpdir={}", tmp_dir(&data).display()))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=128M",
                "--max-connections=500",
            ]);
        for (k, v) in settings {
            cmd.arg(format!("--{k}={v}"));
        }
        let mut process = ManagedProcess::spawn("mariadbd", dir, cmd, &account, die_with_parent)?;
        let sock = socket.clone();
        process.wait_ready(Duration::from_secs(60), || port_open(port) && ping(&sock))?;
        let password = random_password()?;
        sql(&socket, &create_user_and_database_sql(&password))?;
        Ok(MariadbServer {
            port,
            process,
            _dir: server_dir,
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

/// A fresh data directory (system tables, no test database) owned by `account`. Its system tables
/// let the operating system's `root` and the account itself in as database superusers over the
/// socket (unix_socket authentication): scalebench's own SQL runs as the one, a joining Galera
/// node's state transfer as the other.
pub fn install_db(data: &Path, account: &Account) -> Result<(), DeployError> {
    let tmp = tmp_dir(data);
    std::fs::create_dir_all(&tmp).map_err(|e| DeployError::io(&tmp, e))?;
    account.give(&tmp)?;
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg("--skip-test-db")
        // Passed on to the bootstrap server.
        .arg(format!("--tmpdir={}", tmp.display()));
    if let Some(name) = account.system_name() {
        install.arg(format!("--user={name}"));
    }
    run(&mut install, "mariadb-install-db").map(|_| ())
}

/// The server's own temporary directory, beside its data directory (made by [`install_db`]): with
/// the shared /tmp, two servers bootstrapping at once have failed on each other's temporary tables
/// ("Unknown table 'mysql.tmp_user_sys'").
pub fn tmp_dir(data: &Path) -> std::path::PathBuf {
    data.with_file_name("tmp")
}

/// The database superuser scalebench's own SQL logs in as over the socket: the operating system
/// user it runs as (unix_socket authentication).
pub(crate) fn socket_superuser() -> String {
    if running_as_root() {
        return "root".into();
    }
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "root".into())
}

/// `mariadb-admin ping` over the socket succeeds.
pub fn ping(socket: &Path) -> bool {
    // Bounded: a paused server accepts on its socket and never answers.
    let mut ping = crate::host::bounded("mariadb-admin", PING_LIMIT);
    ping.arg(format!("--socket={}", socket.display()))
        .arg(format!("-u{}", socket_superuser()))
        .arg("ping");
    crate::host::output_until_interrupted(&mut ping, "mariadb-admin ping", "")
        .is_ok_and(|o| o.status.success())
}

/// How long a ping may take before the server counts as not answering.
const PING_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// SQL as root over a server's socket; tab-separated rows without headers.
pub fn sql(socket: &Path, text: &str) -> Result<String, DeployError> {
    // On standard input, not `-e`: nothing of the SQL (a password) in the argv.
    crate::host::run_with_input(
        Command::new("mariadb")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("-u{}", socket_superuser()))
            .args(["-N", "-B"]),
        "mariadb",
        text,
    )
}

/// [`sql`] for a question asked while waiting (a Galera node's state and queues): given up after
/// [`crate::host::ASK_LIMIT`] (a paused node accepts and never answers), and at once at Ctrl-C.
pub fn ask(socket: &Path, text: &str) -> Result<String, DeployError> {
    crate::host::ask_with_input(
        crate::host::bounded("mariadb", crate::host::ASK_LIMIT)
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("-u{}", socket_superuser()))
            .args(["-N", "-B"]),
        "mariadb",
        text,
    )
}

/// The benchmark's user and database: all rights on the benchmark's database only (no FILE
/// privilege: no `SELECT ... INTO OUTFILE`, no other database).
pub fn create_user_and_database_sql(password: &str) -> String {
    format!(
        "CREATE DATABASE IF NOT EXISTS {DATABASE}; CREATE USER IF NOT EXISTS '{USER}'@'%' IDENTIFIED BY '{password}'; GRANT ALL ON {DATABASE}.* TO '{USER}'@'%';"
    )
}
