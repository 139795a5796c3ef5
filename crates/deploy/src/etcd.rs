//! etcd from the Debian package `etcd-server`.

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

/// `GET /health` answers healthy: `{"health":"true"}` (etcd 3.5 adds `"reason":""`; an unhealthy
/// member answers 503 and `"false"` with its reason). Connected within 500 ms and answered within
/// 2 s, else not healthy (a paused member accepts the connection and never answers). Straight to
/// loopback: no proxy from the environment.
pub fn healthy(port: u16) -> bool {
    let agent = crate::host::loopback_http(Duration::from_millis(500), Duration::from_secs(2));
    let Ok(body) = agent
        .get(&format!("http://127.0.0.1:{port}/health"))
        .call()
        .and_then(|mut r| r.body_mut().read_to_string())
    else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|v| v["health"] == "true")
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
        Self::start_with_tls(base, die_with_parent, None)
    }

    /// As [`EtcdServer::start`]; with `tls` (certificate file, key file, port) it also takes
    /// clients over TLS on `https://127.0.0.1:port`, beside the plain port.
    pub fn start_with_tls(
        base: &Path,
        die_with_parent: bool,
        tls: Option<(&Path, &Path, u16)>,
    ) -> Result<Self, DeployError> {
        let port = free_port()?;
        let peer_port = free_port()?;
        let account = Account::for_server(ACCOUNT)?;
        let dir = ServerDir::new(base, "etcd", port, &account)?;
        let peer = format!("http://127.0.0.1:{peer_port}");
        // A flag given again replaces the first: both listeners, the plain one advertised.
        let tls_settings: Vec<(String, String)> = match tls {
            None => Vec::new(),
            Some((cert, key, tls_port)) => vec![
                (
                    "listen-client-urls".into(),
                    format!("http://127.0.0.1:{port},https://127.0.0.1:{tls_port}"),
                ),
                ("cert-file".into(), cert.display().to_string()),
                ("key-file".into(), key.display().to_string()),
            ],
        };
        let cmd = member_command(
            &dir.path.join("data"),
            "node1",
            port,
            peer_port,
            &format!("node1={peer}"),
            "new",
            &tls_settings,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::fake_server::{absent, serve_once};
    use std::time::Instant;

    fn http(status: &str, body: &str) -> &'static str {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .leak()
    }

    #[test]
    fn health_is_read_from_the_json_body() {
        assert!(healthy(serve_once(Some(http(
            "200 OK",
            r#"{"health":"true"}"#
        )))));
        assert!(healthy(serve_once(Some(http(
            "200 OK",
            r#"{"health":"true","reason":""}"#
        )))));
        assert!(!healthy(serve_once(Some(http(
            "503 Service Unavailable",
            r#"{"health":"false","reason":"RAFT NO LEADER"}"#
        )))));
        assert!(!healthy(serve_once(Some(http("200 OK", "not json")))));
    }

    #[test]
    fn a_silent_or_absent_member_is_not_healthy_within_the_timeouts() {
        let started = Instant::now();
        assert!(!healthy(serve_once(None)));
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert!(!healthy(absent()));
    }
}
