//! etcd from the Debian package `etcd-server`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::account::{Account, ServerDir};
use crate::error::DeployError;
use crate::host::free_port;
use crate::process::ManagedProcess;

/// The system account the server runs as when scalebench runs as root.
pub const ACCOUNT: &str = "etcd";

pub struct EtcdServer {
    pub port: u16,
    pub peer_port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
}

/// `GET /health` answers healthy.
pub fn healthy(port: u16) -> bool {
    let Ok(mut s) =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(500))
    else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.contains("\"health\":\"true\"") || buf.contains("\"health\": \"true\"")
}

/// An etcd member named `name` on 127.0.0.1, joining `initial_cluster` (`name=peer-url,...`) as a
/// `new` or `existing` cluster; `settings` are extra flags without `--`.
pub fn member_command<K: AsRef<str>, V: AsRef<str>>(
    data: &Path,
    name: &str,
    port: u16,
    peer_port: u16,
    initial_cluster: &str,
    state: &str,
    settings: &[(K, V)],
) -> Command {
    let client = format!("http://127.0.0.1:{port}");
    let peer = format!("http://127.0.0.1:{peer_port}");
    let mut cmd = Command::new("etcd");
    cmd.args(["--name", name, "--data-dir"])
        .arg(data)
        .args([
            "--listen-client-urls",
            &client,
            "--advertise-client-urls",
            &client,
        ])
        .args([
            "--listen-peer-urls",
            &peer,
            "--initial-advertise-peer-urls",
            &peer,
        ])
        .args([
            "--initial-cluster",
            initial_cluster,
            "--initial-cluster-state",
            state,
        ])
        .args(["--quota-backend-bytes", "4294967296"]);
    for (k, v) in settings {
        cmd.arg(format!("--{}={}", k.as_ref(), v.as_ref()));
    }
    cmd
}

impl EtcdServer {
    /// A one-member cluster on free ports.
    pub fn start(base: &Path, die_with_parent: bool) -> Result<Self, DeployError> {
        let port = free_port()?;
        let peer_port = free_port()?;
        let account = Account::for_server(ACCOUNT)?;
        let dir = ServerDir::new(base, "etcd", port, &account)?;
        let peer = format!("http://127.0.0.1:{peer_port}");
        let cmd = member_command(
            &dir.path.join("data"),
            "node1",
            port,
            peer_port,
            &format!("node1={peer}"),
            "new",
            &[] as &[(String, String)],
        );
        let mut process = ManagedProcess::spawn("etcd", &dir.path, cmd, &account, die_with_parent)?;
        process.wait_ready(Duration::from_secs(30), || healthy(port))?;
        Ok(EtcdServer {
            port,
            peer_port,
            process,
            _dir: dir,
        })
    }

    pub fn url(&self) -> String {
        format!("etcd://127.0.0.1:{}", self.port)
    }
}
