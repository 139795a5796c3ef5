//! PostgreSQL from the Debian packages: `initdb` and `postgres` from /usr/lib/postgresql/<version>/bin,
//! run as the `postgres` account when started by root (see [`crate::account`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::account::{private_dir, Account, ServerDir};
use crate::error::DeployError;
use crate::host::{free_port, port_open, random_password, run};
use crate::process::ManagedProcess;

pub const USER: &str = "bench";
/// The system account the server runs as when scalebench runs as root.
pub const ACCOUNT: &str = "postgres";
pub const DATABASE: &str = "ycsb";

pub struct PostgresServer {
    pub port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
    bin: PathBuf,
    data: PathBuf,
    password: String,
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

/// The account PostgreSQL runs as (it refuses root).
pub fn account() -> Result<Account, DeployError> {
    Account::for_server(ACCOUNT)
}

/// Runs `cmd` as PostgreSQL's account: its tools reach the server through a socket in the data
/// directory, which only that account may enter.
pub fn as_postgres(cmd: &mut Command) -> Result<(), DeployError> {
    account()?.apply(cmd);
    Ok(())
}

/// Creates an empty data directory (mode 0700: PostgreSQL refuses one others can read) owned by
/// PostgreSQL's account.
pub fn fresh_data_dir(data: &Path) -> Result<(), DeployError> {
    crate::account::remove_server_dir(data)?;
    private_dir(data, &account()?)
}

pub fn initdb(bin: &Path, data: &Path) -> Result<(), DeployError> {
    fresh_data_dir(data)?;
    let mut initdb = Command::new(bin.join("initdb"));
    initdb.arg("-D").arg(data).args([
        "-U",
        "postgres",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "-E",
        "UTF8",
        "--no-sync",
    ]);
    as_postgres(&mut initdb)?;
    run(&mut initdb, "initdb").map(|_| ())
}

/// `postgres` on 127.0.0.1:`port`, its socket in `data`.
pub fn server_command<K: AsRef<str>, V: AsRef<str>>(
    bin: &Path,
    data: &Path,
    port: u16,
    settings: &[(K, V)],
) -> Command {
    let mut cmd = Command::new(bin.join("postgres"));
    cmd.arg("-D")
        .arg(data)
        .args(["-p", &port.to_string(), "-k"])
        .arg(data);
    cmd.args([
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "shared_buffers=128MB",
        "-c",
        "max_connections=300",
    ]);
    for (k, v) in settings {
        cmd.arg("-c").arg(format!("{}={}", k.as_ref(), v.as_ref()));
    }
    cmd
}

/// The server whose socket is in `socket_dir` accepts connections on `port`. Asked through that
/// socket, not the TCP port alone: a port handed out free can be taken by another process's server
/// before this one binds it (this one then exits), and that server would answer for it (seen in CI:
/// "ready", then no socket for psql).
pub fn is_ready(bin: &Path, socket_dir: &Path, port: u16) -> bool {
    port_open(port)
        && Command::new(bin.join("pg_isready"))
            .arg("-h")
            .arg(socket_dir)
            .args(["-p", &port.to_string()])
            .output()
            .is_ok_and(|o| o.status.success())
}

/// SQL as the superuser over the server's socket; returns unaligned, tuples-only output.
pub fn psql(
    bin: &Path,
    data: &Path,
    port: u16,
    db: &str,
    sql: &str,
) -> Result<String, DeployError> {
    let mut psql = Command::new(bin.join("psql"));
    psql_arguments(&mut psql, data, port, db)?;
    // On standard input, not `-c`: nothing of the SQL (a password) in the argv.
    crate::host::run_with_input(&mut psql, "psql", sql)
}

/// [`psql`] for a question asked while waiting (replication lag, autovacuum, the table's files):
/// given up after [`crate::host::ASK_LIMIT`], and at once at Ctrl-C.
pub fn ask(bin: &Path, data: &Path, port: u16, db: &str, sql: &str) -> Result<String, DeployError> {
    let program = bin.join("psql");
    let mut psql = crate::host::bounded(&program.to_string_lossy(), crate::host::ASK_LIMIT);
    psql_arguments(&mut psql, data, port, db)?;
    crate::host::ask_with_input(&mut psql, "psql", sql)
}

fn psql_arguments(psql: &mut Command, data: &Path, port: u16, db: &str) -> Result<(), DeployError> {
    psql.arg("-h").arg(data).args([
        "-p",
        &port.to_string(),
        "-U",
        "postgres",
        "-d",
        db,
        "-v",
        "ON_ERROR_STOP=1",
        "-q",
        "-A",
        "-t",
    ]);
    as_postgres(psql)
}

/// The benchmark's user and database: the user owns the database (creates and drops its tables)
/// and is no superuser (no `COPY ... TO PROGRAM`, no server files).
pub fn create_user_and_database(
    bin: &Path,
    data: &Path,
    port: u16,
    password: &str,
) -> Result<(), DeployError> {
    psql(
        bin,
        data,
        port,
        "postgres",
        &format!("CREATE USER {USER} NOSUPERUSER PASSWORD '{password}'"),
    )?;
    psql(
        bin,
        data,
        port,
        "postgres",
        &format!("CREATE DATABASE {DATABASE} OWNER {USER}"),
    )
    .map(|_| ())
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
        let mut port = free_port()?;
        let account = account()?;
        let dir = ServerDir::new(base, "postgres", port, &account)?;
        let data = dir.path.join("data");
        initdb(&bin, &data)?;
        // Another process may bind the free port first: the server exits saying so, and starts
        // again on another one (the data directory stays; the port is an argument).
        let mut attempts = 0;
        let process = loop {
            let cmd = server_command(&bin, &data, port, settings);
            let mut process =
                ManagedProcess::spawn("postgres", &dir.path, cmd, &account, die_with_parent)?;
            match process.wait_ready(Duration::from_secs(60), || is_ready(&bin, &data, port)) {
                Ok(()) => break process,
                Err(DeployError::NotReady { log, .. })
                    if attempts < 3 && log.contains("Address already in use") =>
                {
                    attempts += 1;
                    port = free_port()?;
                }
                Err(e) => return Err(e),
            }
        };
        let password = random_password()?;
        create_user_and_database(&bin, &data, port, &password)?;
        Ok(PostgresServer {
            port,
            process,
            _dir: dir,
            bin,
            data,
            password,
        })
    }

    /// SQL as the superuser in the benchmark's database; unaligned, tuples-only output.
    pub fn sql(&self, text: &str) -> Result<String, DeployError> {
        psql(&self.bin, &self.data, self.port, DATABASE, text)
    }

    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{}@127.0.0.1:{}/{DATABASE}",
            self.password, self.port
        )
    }

    /// The benchmark user's password (random per server).
    pub fn password(&self) -> &str {
        &self.password
    }
}
