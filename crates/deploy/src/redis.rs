//! Redis: standalone servers and Redis Cluster, from `redis-server` and `redis-cli` (Debian `redis-server`).

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

/// A connection to the server on `port` as the status checks use it: connected within 500 ms, each
/// command answered within 1 s (a paused node accepts the connection and never answers), and no
/// `CLIENT SETINFO` on connecting: a status check sends its one command.
fn connect(port: u16) -> Option<::redis::Connection> {
    use ::redis::IntoConnectionInfo;
    let info = ::redis::ConnectionAddr::Tcp("127.0.0.1".into(), port)
        .into_connection_info()
        .ok()?
        .set_redis_settings(::redis::RedisConnectionInfo::default().set_skip_set_lib_name());
    let con = ::redis::Client::open(info)
        .ok()?
        .get_connection_with_timeout(Duration::from_millis(500))
        .ok()?;
    con.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    con.set_write_timeout(Some(Duration::from_secs(1))).ok()?;
    Some(con)
}

/// `cmd`'s reply from the server on `port`; none if it does not answer in time or answers an
/// error (`-LOADING` while it reads its files, for instance).
fn query<T: ::redis::FromRedisValue>(port: u16, cmd: &::redis::Cmd) -> Option<T> {
    cmd.query(&mut connect(port)?).ok()
}

/// PING answers PONG: the server is up and serving.
pub fn ping(port: u16) -> bool {
    query::<String>(port, &::redis::cmd("PING")).is_some_and(|r| r == "PONG")
}

/// CLUSTER INFO: `cluster_state:ok`, `cluster_known_nodes:3` and the like, a line each.
pub fn cluster_info(port: u16) -> Option<String> {
    query(port, ::redis::cmd("CLUSTER").arg("INFO"))
}

/// One field of an INFO section (`info_field(port, "replication", "role")`: `master`).
pub fn info_field(port: u16, section: &str, field: &str) -> Option<String> {
    let info: String = query(port, ::redis::cmd("INFO").arg(section))?;
    info.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// DBSIZE: the number of keys in the server's database.
pub fn dbsize(port: u16) -> Option<u64> {
    query(port, &::redis::cmd("DBSIZE"))
}

impl RedisServer {
    /// A server on a free port; `config` are extra `--name value` settings (e.g. appendonly yes).
    pub fn start(
        base: &Path,
        config: &[(&str, &str)],
        cluster: bool,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let owned: Vec<(String, String)> = config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Self::start_configured(base, &|_| owned.clone(), cluster, die_with_parent)
    }

    /// A server whose settings depend on its port (`config(port)`).
    fn start_configured(
        base: &Path,
        config: &dyn Fn(u16) -> Vec<(String, String)>,
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
        let cmd = server_command(&dir.path, port, cluster, &config(port));
        let mut process =
            ManagedProcess::spawn("redis-server", &dir.path, cmd, &account, die_with_parent)?;
        process.wait_ready(Duration::from_secs(20), || ping(port))?;
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
        Self::start_with(base, masters, |_| Vec::new(), die_with_parent)
    }

    /// [`RedisCluster::start`] with extra settings for each node: `config(port)` for the node
    /// whose client port is `port` (its bus port is `port` + 10000), TLS ports for instance.
    pub fn start_with(
        base: &Path,
        masters: usize,
        config: impl Fn(u16) -> Vec<(String, String)>,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        if masters < 3 {
            return Err(DeployError::Failed(
                "a Redis Cluster needs at least 3 masters".into(),
            ));
        }
        let nodes = (0..masters)
            .map(|_| RedisServer::start_configured(base, &config, true, die_with_parent))
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
            nodes
                .iter()
                .all(|n| cluster_info(n.port).is_some_and(|r| r.contains("cluster_state:ok")))
        });
        if !ok {
            return Err(DeployError::NotReady {
                server: "redis cluster".into(),
                seconds: 30,
                log: cluster_info(first).unwrap_or_default(),
            });
        }
        Ok(RedisCluster { nodes })
    }

    /// The binding's URL: one seed node; the client discovers the others.
    pub fn url(&self) -> String {
        format!("redis+cluster://127.0.0.1:{}", self.nodes[0].port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::fake_server::{absent, serve_once};
    use std::time::Instant;

    /// The status check's one command is the first thing on the connection (no CLIENT SETINFO
    /// before it): a server answering one reply answers the check.
    #[test]
    fn replies_are_read_as_redis_types() {
        assert!(ping(serve_once(Some("+PONG\r\n"))));
        assert!(!ping(serve_once(Some(
            "-LOADING Redis is loading the dataset in memory\r\n"
        ))));
        let info = "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\n";
        let bulk = format!("${}\r\n{info}\r\n", info.len()).leak();
        assert_eq!(
            info_field(serve_once(Some(bulk)), "replication", "master_link_status").as_deref(),
            Some("up")
        );
        assert_eq!(
            info_field(serve_once(Some(bulk)), "replication", "master"),
            None
        );
        let cluster = "cluster_state:ok\r\ncluster_known_nodes:3\r\n";
        let bulk = format!("${}\r\n{cluster}\r\n", cluster.len()).leak();
        assert_eq!(
            cluster_info(serve_once(Some(bulk))).as_deref(),
            Some(cluster)
        );
        assert_eq!(dbsize(serve_once(Some(":101\r\n"))), Some(101));
    }

    #[test]
    fn a_silent_or_absent_server_does_not_answer_within_the_timeouts() {
        let started = Instant::now();
        assert!(!ping(serve_once(None)));
        assert_eq!(cluster_info(serve_once(None)), None);
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert!(!ping(absent()));
    }
}
