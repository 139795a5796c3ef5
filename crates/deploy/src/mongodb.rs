//! A MongoDB wire-protocol server for the tests: mongo-java-server 1.46.0 with its H2 backend
//! (Maven Central), run by the JDK's source launcher from `deployments/mongodb/MongoTestServer.java`
//! and announcing MongoDB 5.0 (wire version 13), since current drivers refuse its default 4.0.
//!
//! It is an implementation of the protocol, not MongoDB: write concern is accepted and not
//! enforced, there are no replica sets and no sharding. Real MongoDB is reached as an external
//! server or cluster.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::account::{Account, ServerDir};
use crate::error::DeployError;
use crate::host::{free_port, port_open};
use crate::maven::{readable_classpath, MavenProject};
use crate::process::ManagedProcess;

/// The system account the server runs as when scalebench runs as root.
pub const ACCOUNT: &str = "mongodb";

/// mongo-java-server, its H2 backend and a logger, built into the binary.
pub const PROJECT: MavenProject = MavenProject {
    name: "mongo-java-server",
    what: "mongo-java-server",
    pom: include_str!("../../../deployments/mongodb/pom.xml"),
};

/// The server's main class, compiled in memory by `java` at every start (JDK 11+ source launcher).
const SERVER_SOURCE: &str = include_str!("../../../deployments/mongodb/MongoTestServer.java");

pub struct MongoTestServer {
    pub port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
    /// The H2 MVStore file holding every database.
    pub data_file: std::path::PathBuf,
}

impl MongoTestServer {
    /// A server on a free loopback port with a heap of `heap_mb`, its data in one file under `base`.
    pub fn start(base: &Path, heap_mb: u32, die_with_parent: bool) -> Result<Self, DeployError> {
        let port = free_port()?;
        let account = Account::for_server(ACCOUNT)?;
        let dir = ServerDir::new(base, "mongodb", port, &account)?;
        let data_file = dir.path.join("data.mv");
        let cmd = server_command(&dir.path, port, &data_file, heap_mb, &account)?;
        let mut process = ManagedProcess::spawn(
            "mongo-java-server",
            &dir.path,
            cmd,
            &account,
            die_with_parent,
        )?;
        process.wait_ready(Duration::from_secs(60), || port_open(port))?;
        Ok(MongoTestServer {
            port,
            process,
            _dir: dir,
            data_file,
        })
    }

    pub fn url(&self) -> String {
        url(self.port)
    }
}

/// The binding's URL of a server on `port` (database `ycsb`).
pub fn url(port: u16) -> String {
    format!("mongodb://127.0.0.1:{port}/ycsb")
}

/// The JVM command of a server on 127.0.0.1:`port` keeping its data in `data_file`, run from `dir`
/// (where its source is written) as `account`.
pub fn server_command(
    dir: &Path,
    port: u16,
    data_file: &Path,
    heap_mb: u32,
    account: &Account,
) -> Result<Command, DeployError> {
    let source = dir.join("MongoTestServer.java");
    std::fs::write(&source, SERVER_SOURCE).map_err(|e| DeployError::io(&source, e))?;
    account.give(&source)?;
    let classpath = readable_classpath(&PROJECT.classpath()?, account)?;
    let mut cmd = Command::new("java");
    cmd.arg(format!("-Xmx{heap_mb}m"))
        .arg("-XX:+UseSerialGC")
        // slf4j-simple: warnings and errors only.
        .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
        .arg("-cp")
        .arg(&classpath)
        .arg(&source)
        .args(["127.0.0.1", &port.to_string()])
        .arg(data_file);
    Ok(cmd)
}
