//! Redis: standalone servers and Redis Cluster, from `redis-server` and `redis-cli` (Debian `redis-server`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::account::{Account, ServerDir};
use crate::error::DeployError;
use crate::host::{free_port, free_port_with_bus, run, wait_until};
use crate::process::ManagedProcess;

/// The system account the server runs as when scalebench runs as root.
pub const ACCOUNT: &str = "redis";

pub struct RedisServer {
    pub port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
}

/// Sends one inline command and returns the reply's first line.
pub fn command(port: u16, cmd: &str) -> Option<String> {
    let mut s =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(500))
            .ok()?;
    s.set_read_timeout(Some(Duration::from_millis(1000))).ok()?;
    s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
    let mut buf = vec![0u8; 65536];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

impl RedisServer {
    /// A server on a free port; `config` are extra `--name value` settings (e.g. appendonly yes).
    pub fn start(
        base: &Path,
        config: &[(&str, &str)],
        cluster: bool,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let port = if cluster {
            free_port_with_bus()?
        } else {
            free_port()?
        };
        let account = Account::for_server(ACCOUNT)?;
        let dir = ServerDir::new(base, "redis", port, &account)?;
        let cmd = server_command(&dir.path, port, cluster, config);
        let mut process =
            ManagedProcess::spawn("redis-server", &dir.path, cmd, &account, die_with_parent)?;
        process.wait_ready(Duration::from_secs(20), || {
            command(port, "PING").is_some_and(|r| r.starts_with("+PONG"))
        })?;
        Ok(RedisServer {
            port,
            process,
            _dir: dir,
        })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// `redis-server` on `port` with its files in `dir`, persistence off unless `config` turns it on.
pub fn server_command<K: AsRef<str>, V: AsRef<str>>(
    dir: &Path,
    port: u16,
    cluster: bool,
    config: &[(K, V)],
) -> Command {
    let mut cmd = Command::new("redis-server");
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
        .arg(dir)
        .args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
        ]);
    if cluster {
        cmd.args(["--cluster-enabled", "yes", "--cluster-config-file"])
            .arg(dir.join("nodes.conf"));
        cmd.args(["--cluster-node-timeout", "5000"]);
    }
    for (k, v) in config {
        cmd.arg(format!("--{}", k.as_ref())).arg(v.as_ref());
    }
    cmd
}

/// A Redis Cluster of `masters` masters (no replicas), slots spread evenly.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    pub fn start(base: &Path, masters: usize, die_with_parent: bool) -> Result<Self, DeployError> {
        if masters < 3 {
            return Err(DeployError::Failed(
                "a Redis Cluster needs at least 3 masters".into(),
            ));
        }
        let nodes = (0..masters)
            .map(|_| RedisServer::start(base, &[], true, die_with_parent))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cmd = crate::host::bounded("redis-cli", Duration::from_secs(600));
        cmd.arg("--cluster").arg("create");
        for n in &nodes {
            cmd.arg(format!("127.0.0.1:{}", n.port));
        }
        cmd.args(["--cluster-replicas", "0", "--cluster-yes"]);
        run(&mut cmd, "redis-cli --cluster create")?;
        let first = nodes[0].port;
        let ok = wait_until(Duration::from_secs(30), || {
            nodes.iter().all(|n| {
                command(n.port, "CLUSTER INFO").is_some_and(|r| r.contains("cluster_state:ok"))
            })
        });
        if !ok {
            return Err(DeployError::NotReady {
                server: "redis cluster".into(),
                seconds: 30,
                log: command(first, "CLUSTER INFO").unwrap_or_default(),
            });
        }
        Ok(RedisCluster { nodes })
    }

    /// The binding's URL: one seed node; the client discovers the others.
    pub fn url(&self) -> String {
        format!("redis+cluster://127.0.0.1:{}", self.nodes[0].port)
    }
}
