//! What a deployment asks of this machine: free loopback ports, random passwords, commands run to
//! completion, and waits that Ctrl-C ends.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::DeployError;

/// A free TCP port on 127.0.0.1, released immediately for the server to take, and never handed out
/// twice by this process (the ports of a cluster are chosen before any of its servers binds one).
pub fn free_port() -> Result<u16, DeployError> {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    // Below the kernel's ephemeral range: a port handed out by `bind(0)` is one the kernel may give
    // to an outgoing connection (a starting cluster's nodes dialling each other) before the server
    // that was to listen on it binds it ("address already in use", seen with etcd in CI).
    let below = ephemeral_range_start().clamp(BELOW_EPHEMERAL_FROM + 1, u16::MAX);
    let span = u64::from(below - BELOW_EPHEMERAL_FROM);
    let mut seed = random_seed();
    for _ in 0..1000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let port = BELOW_EPHEMERAL_FROM + ((seed >> 33) % span) as u16;
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if !handed_out.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            handed_out.push(port);
            return Ok(port);
        }
    }
    Err(DeployError::Failed(format!(
        "no free port from {BELOW_EPHEMERAL_FROM} to {below}"
    )))
}

/// The lowest port [`free_port`] hands out.
const BELOW_EPHEMERAL_FROM: u16 = 10_000;

/// The first port of the kernel's ephemeral range (Linux's default when unreadable).
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// 64 random bits from the standard library's per-process hasher keys (no dependency for a seed).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}

/// A password for a server scalebench starts: 32 hex digits from the kernel's random source, made
/// per server or cluster and kept in its state (mode 0600), never a constant anyone can look up.
pub fn random_password() -> Result<String, DeployError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| DeployError::io(Path::new("/dev/urandom"), e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A free loopback port whose Redis Cluster bus port (port + 10,000) is free too: a cluster node
/// listens on both, and would fail to start (or talk to a stranger) otherwise.
pub fn free_port_with_bus() -> Result<u16, DeployError> {
    let candidates = (0..100).filter_map(|_| free_port().ok());
    first_with_free_bus(candidates).ok_or_else(|| {
        DeployError::Failed("no free port whose cluster bus port (port + 10000) is free too".into())
    })
}

fn first_with_free_bus(mut candidates: impl Iterator<Item = u16>) -> Option<u16> {
    candidates.find(|&port| {
        port <= u16::MAX - 10_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok()
    })
}

/// Polls `ready` every 100 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, ready: impl FnMut() -> bool) -> bool {
    poll_every(Duration::from_millis(100), timeout, ready)
}

/// Set by the caller's Ctrl-C ([`interrupt_waits`]): every wait of this crate ends at once.
static WAITS_INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends every wait of this crate (a cluster's readiness, its idleness, a server's start) at once,
/// now and from now on: the caller was asked to stop (Ctrl-C, SIGTERM).
pub fn interrupt_waits() {
    WAITS_INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

pub fn waits_interrupted() -> bool {
    WAITS_INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Polls `ready` every `interval` until it holds or `timeout` passes. Not interrupted: a server's
/// shutdown is awaited even after Ctrl-C (it would be killed otherwise).
pub fn poll_every(interval: Duration, timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if ready() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(interval);
    }
}

/// [`poll_every`] that also ends (false) once the waits were interrupted, sleeping in steps of at
/// An HTTP client for a server of ours on loopback (etcd's health, Patroni's REST API, HBase's
/// info server): connected within `connect`, answered within `whole`, and never through a proxy
/// from the environment (ureq reads `HTTP_PROXY`; a loopback request sent there would fail or
/// leave the machine).
pub fn loopback_http(connect: Duration, whole: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_connect(Some(connect))
        .timeout_global(Some(whole))
        .proxy(None)
        .build()
        .new_agent()
}

/// most 100 ms so that an interruption is seen at once: a cluster's readiness and idleness.
pub fn poll_until_interrupted(
    interval: Duration,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if ready() {
            return true;
        }
        let next = Instant::now() + interval;
        loop {
            let now = Instant::now();
            if now >= deadline || waits_interrupted() {
                return false;
            }
            if now >= next {
                break;
            }
            std::thread::sleep((next - now).min(Duration::from_millis(100)));
        }
    }
}

pub fn port_open(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok()
}

/// Runs a command to completion, failing with its output.
pub fn run(cmd: &mut Command, what: &str) -> Result<String, DeployError> {
    let out = cmd.output().map_err(|e| DeployError::Spawn {
        program: what.into(),
        reason: e.to_string(),
    })?;
    outcome(out, what)
}

/// [`run`] with `input` on the command's standard input: how SQL reaches a client program, so
/// that no statement (a password in `CREATE USER`) is in its argv, which any user can read in
/// `/proc/PID/cmdline`.
pub fn run_with_input(cmd: &mut Command, what: &str, input: &str) -> Result<String, DeployError> {
    outcome(output_with_input(cmd, what, input, false)?, what)
}

/// [`run_with_input`] for a question asked while waiting (is the cluster idle, which files are
/// the table's): ended by Ctrl-C ([`interrupt_waits`]) as every wait of this crate is, the command
/// told to stop (SIGTERM, which a [`bounded`] wrapper passes on) and then killed.
pub fn ask_with_input(cmd: &mut Command, what: &str, input: &str) -> Result<String, DeployError> {
    outcome(output_until_interrupted(cmd, what, input)?, what)
}

/// The command's output, `input` on its standard input; at Ctrl-C ([`interrupt_waits`]) it is
/// told to stop and an `Interrupted` error comes back instead.
pub fn output_until_interrupted(
    cmd: &mut Command,
    what: &str,
    input: &str,
) -> Result<std::process::Output, DeployError> {
    output_with_input(cmd, what, input, true)
}

/// The command's output with `input` on its standard input, awaited to its end or, when
/// `interruptible`, until Ctrl-C.
fn output_with_input(
    cmd: &mut Command,
    what: &str,
    input: &str,
    interruptible: bool,
) -> Result<std::process::Output, DeployError> {
    use std::io::{Read, Write};
    let spawn_error = |e: std::io::Error| DeployError::Spawn {
        program: what.into(),
        reason: e.to_string(),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    // Written and read from threads of their own: a program that answers before reading all of
    // its input could otherwise fill its output pipe while this one fills its input.
    let mut stdin = child.stdin.take().expect("piped");
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let status = loop {
        if !interruptible {
            break child.wait().map_err(spawn_error)?;
        }
        if let Some(status) = child.try_wait().map_err(spawn_error)? {
            break status;
        }
        if waits_interrupted() {
            end_child(&mut child);
            return Err(DeployError::Interrupted(format!(
                "{what}: waiting for its answer"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = writer.join();
    Ok(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// SIGTERM, up to a second to end, then SIGKILL; reaped either way.
fn end_child(child: &mut std::process::Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let ended = poll_every(Duration::from_millis(20), Duration::from_secs(1), || {
        matches!(child.try_wait(), Ok(Some(_)))
    });
    if !ended {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// How long a question asked while waiting (replication lag, autovacuum, a Galera node's state, the
/// table's files) may take: a server that accepts and never answers (paused) is given up on then.
pub const ASK_LIMIT: Duration = Duration::from_secs(30);

/// How long an external cluster's `is_ready` or `is_idle` hook (which may ask several nodes) may
/// take before it counts as "not yet".
pub const HOOK_ASK_LIMIT: Duration = Duration::from_secs(60);

/// `program` under coreutils' `timeout`: killed (TERM, then KILL 5 s later) if it has not ended
/// within `limit`, and then exit status 124. A client tool waits forever on a server that accepts
/// its connection and never answers (a paused node: the kernel completes the handshake).
pub fn bounded(program: &str, limit: Duration) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.args([
        "--kill-after=5",
        &format!("{}s", limit.as_secs().max(1)),
        program,
    ]);
    cmd
}

/// Exit status 124: a [`bounded`] command ran out of time.
pub(crate) const TIMED_OUT: i32 = 124;

fn outcome(out: std::process::Output, what: &str) -> Result<String, DeployError> {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(TIMED_OUT) {
        return Err(DeployError::Failed(format!(
            "{what} did not end within its time limit (a server that accepts and never answers?)"
        )));
    }
    if !out.status.success() {
        return Err(DeployError::Failed(format!(
            "{what} failed ({}): {}",
            out.status,
            text.trim()
        )));
    }
    Ok(text)
}

/// Stand-ins for a server in the status checks' unit tests.
#[cfg(test)]
pub(crate) mod fake_server {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    /// A server on loopback that reads one request and answers `reply`, or stays silent (none)
    /// as a paused server does: the kernel accepts the connection and nothing answers.
    pub fn serve_once(reply: Option<&'static str>) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; 1024];
            let _ = s.read(&mut request);
            match reply {
                Some(r) => {
                    let _ = s.write_all(r.as_bytes());
                }
                None => std::thread::sleep(Duration::from_secs(5)),
            }
        });
        port
    }

    /// A port nobody listens on.
    pub fn absent() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }
}

#[cfg(test)]
mod bounded_tests {
    use super::*;

    /// A program that would wait 10 minutes is ended at its limit and named as having run out
    /// of time; one within its limit gives its output.
    #[test]
    fn a_command_past_its_limit_is_ended_and_named() {
        let err = run(bounded("sleep", Duration::from_secs(1)).arg("600"), "sleep")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sleep did not end within its time limit"),
            "{err}"
        );
        let out = run(
            bounded("echo", Duration::from_secs(60)).arg("answered"),
            "echo",
        )
        .unwrap();
        assert_eq!(out.trim(), "answered");
    }
}

#[cfg(test)]
mod port_tests {
    use super::*;

    #[test]
    fn free_ports_lie_below_the_ephemeral_range_and_are_never_handed_out_twice() {
        let ports: Vec<u16> = (0..200).map(|_| free_port().unwrap()).collect();
        let below = ephemeral_range_start();
        assert!(
            ports
                .iter()
                .all(|p| (BELOW_EPHEMERAL_FROM..below).contains(p)),
            "{ports:?}"
        );
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ports.len());
    }

    #[test]
    fn a_cluster_port_comes_with_a_free_bus_port() {
        // A port whose bus port is taken (held here) is passed over, as is one without a bus port.
        let held = (0..1000)
            .filter_map(|_| TcpListener::bind("127.0.0.1:0").ok())
            .find(|l| l.local_addr().unwrap().port() > 11_024)
            .unwrap();
        let taken_bus = held.local_addr().unwrap().port() - 10_000;
        assert_eq!(first_with_free_bus([taken_bus, u16::MAX].into_iter()), None);
        let good = free_port_with_bus().unwrap();
        assert_eq!(
            first_with_free_bus([taken_bus, good].into_iter()),
            Some(good)
        );
    }
}
