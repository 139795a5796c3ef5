use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("{what}: {reason}")]
    Io { what: String, reason: String },
    #[error("cannot start {program}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("{server} did not become ready within {seconds} s (log: {log})")]
    NotReady {
        server: String,
        seconds: u64,
        log: String,
    },
    #[error("{file}: {reason}")]
    BadSpec { file: String, reason: String },
    #[error("cluster not idle after {seconds} s: {busy}")]
    NotIdle { seconds: u64, busy: String },
    /// Bad input named by the user (a snapshot name, ...): the command exits with 2.
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C ended a wait ([`interrupt_waits`]).
    #[error("interrupted while {0}")]
    Interrupted(String),
}

impl DeployError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        DeployError::Io {
            what: path.display().to_string(),
            reason: e.to_string(),
        }
    }
}

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

/// A server process scalebench started: its log is `<dir>/server.log`.
#[derive(Debug)]
pub struct ManagedProcess {
    pub name: String,
    pub dir: PathBuf,
    child: Child,
    stopped: bool,
}

impl ManagedProcess {
    /// Starts `cmd` as `account` with its output appended to `<dir>/server.log`. With
    /// `die_with_parent`, the server is killed if the thread that started it ends (tests); a
    /// CLI-managed cluster outlives its command.
    pub fn spawn(
        name: &str,
        dir: &Path,
        cmd: Command,
        account: &crate::account::Account,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        Self::start(name, dir, cmd, account, die_with_parent, None)
    }

    /// Starts a cluster's node (which outlives this program) as [`ManagedProcess::spawn`] does,
    /// inside the node's memory `group` if it has one: joined before the server's program runs, so
    /// every process the server forks (PostgreSQL's backends) is inside too.
    pub fn spawn_node(
        name: &str,
        dir: &Path,
        cmd: Command,
        account: &crate::account::Account,
        group: Option<&crate::memory::MemoryGroup>,
    ) -> Result<Self, DeployError> {
        Self::start(name, dir, cmd, account, false, group)
    }

    fn start(
        name: &str,
        dir: &Path,
        mut cmd: Command,
        account: &crate::account::Account,
        die_with_parent: bool,
        group: Option<&crate::memory::MemoryGroup>,
    ) -> Result<Self, DeployError> {
        let log_path = dir.join("server.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| DeployError::io(&log_path, e))?;
        let err = log.try_clone().map_err(|e| DeployError::io(&log_path, e))?;
        cmd.stdin(Stdio::null()).stdout(log).stderr(err);
        // In its own directory: whatever it writes where it stands (a JVM's crash report) stays there.
        cmd.current_dir(dir);
        account.apply(&mut cmd);
        // Its own process group, so signals reach every process of the server (PostgreSQL's backends,
        // for instance) and a Ctrl-C at the terminal does not.
        cmd.process_group(0);
        if die_with_parent {
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
        }
        if let Some(group) = group {
            group.join_at_exec(&mut cmd)?;
        }
        let program = format!("{:?}", cmd.get_program());
        let child = cmd.spawn().map_err(|e| DeployError::Spawn {
            program,
            reason: e.to_string(),
        })?;
        Ok(ManagedProcess {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            child,
            stopped: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets the server outlive this handle (and this program): a cluster started by `scalebench
    /// cluster up` is stopped later, by another command, through the returned reference.
    pub fn detach(mut self) -> ProcessRef {
        self.stopped = true;
        ProcessRef::of(self.child.id()).unwrap_or(ProcessRef {
            pid: self.child.id(),
            start_ticks: 0,
        })
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// The last lines of the log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for `ready`, failing early if the process exits.
    pub fn wait_ready(
        &mut self,
        timeout: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), DeployError> {
        let mut exited = false;
        let ok = wait_until(timeout, || {
            if !matches!(self.child.try_wait(), Ok(None)) {
                exited = true;
                return true;
            }
            ready()
        });
        if ok && !exited {
            return Ok(());
        }
        Err(DeployError::NotReady {
            server: format!("{}{}", self.name, if exited { " (exited)" } else { "" }),
            seconds: timeout.as_secs(),
            log: format!("{}\n{}", self.log_path().display(), self.log_tail(20)),
        })
    }

    fn signal(&self, sig: libc::c_int) {
        signal_tree(self.child.id() as libc::pid_t, sig);
    }

    /// SIGSTOP to every process of the server: it stops answering, connections stay open.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// SIGKILL without waiting: a crash, from any thread (the process is reaped by `kill` or `drop`).
    pub fn crash(&self) {
        self.signal(libc::SIGKILL);
    }

    /// SIGKILL, as a crash, and reap.
    pub fn kill(&mut self) {
        self.signal(libc::SIGKILL);
        let _ = self.child.wait();
        self.stopped = true;
    }

    /// SIGTERM, then SIGKILL after `grace`.
    pub fn stop(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        self.signal(libc::SIGCONT);
        self.signal(libc::SIGTERM);
        let exited = wait_until(grace, || !matches!(self.child.try_wait(), Ok(None)));
        if !exited {
            self.signal(libc::SIGKILL);
        }
        let _ = self.child.wait();
        self.stopped = true;
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(10));
    }
}

/// Signals every process of a server: itself, its process group and all its descendants
/// (PostgreSQL's backends, for instance, lead process groups of their own; a daemon that forked
/// itself, as Bucardo's does, leads none). The descendants are listed first: once the root is gone
/// they belong to init.
fn signal_tree(root: libc::pid_t, sig: libc::c_int) {
    // -1 would be every process, 0 and -0 this process group: never a node.
    if root <= 1 {
        return;
    }
    let tree = descendants(root);
    // SAFETY: kill(2) on a server's process, its process group and processes descending from it.
    unsafe {
        libc::kill(root, sig);
        libc::kill(-root, sig);
        for pid in tree {
            libc::kill(pid, sig);
        }
    }
}

/// A server process known by pid and start time (so a reused pid is never mistaken for it): what a
/// cluster's state file keeps between commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessRef {
    pub pid: u32,
    /// Field 22 of /proc/<pid>/stat: clock ticks after boot when the process started.
    pub start_ticks: u64,
}

impl ProcessRef {
    /// The running process `pid`, if any.
    pub fn of(pid: u32) -> Option<ProcessRef> {
        let (state, start_ticks) = proc_stat(pid)?;
        (state != 'Z').then_some(ProcessRef { pid, start_ticks })
    }

    /// Still the same process, and not a zombie (reaped here if it is our child).
    pub fn is_running(&self) -> bool {
        match proc_stat(self.pid) {
            // A start time of 0 (edited state, or a process gone before it was looked at) proves
            // nothing: it is never taken for a running node.
            Some((state, t)) if self.start_ticks != 0 && t == self.start_ticks && self.pid > 1 => {
                if state == 'Z' {
                    reap(self.pid);
                }
                state != 'Z'
            }
            _ => false,
        }
    }

    /// Running, but stopped by a signal (SIGSTOP: a fault's pause, or one left by a scalebench
    /// that was killed during it).
    pub fn is_stopped(&self) -> bool {
        self.is_running() && matches!(proc_stat(self.pid), Some(('T' | 't', _)))
    }

    fn signal(&self, sig: libc::c_int) {
        if self.is_running() {
            signal_tree(self.pid as libc::pid_t, sig);
        }
    }

    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// SIGKILL: a crash.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
        wait_until(Duration::from_secs(10), || !self.is_running());
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once the process is gone.
    pub fn stop(&self, grace: Duration) {
        self.stop_with(libc::SIGTERM, grace);
    }

    /// `signal` (the server's own "shut down now and cleanly"), then SIGKILL after `grace`.
    pub fn stop_with(&self, signal: libc::c_int, grace: Duration) {
        Self::stop_all_with(std::slice::from_ref(self), signal, grace);
    }

    /// [`ProcessRef::stop_with`] for several processes shutting down side by side: all signalled,
    /// then each awaited up to `grace` in turn (shutting down together on few cores, each may
    /// take longer than alone; none is killed sooner than it would have been one by one).
    pub fn stop_all_with(processes: &[ProcessRef], signal: libc::c_int, grace: Duration) {
        for p in processes {
            p.signal(libc::SIGCONT);
            p.signal(signal);
        }
        for p in processes {
            if !wait_until(grace, || !p.is_running()) {
                p.kill();
            }
        }
    }
}

/// Waits for `pid`, seen as a zombie, if it is our child. A multi-threaded process (a JVM) shows
/// as a zombie while its other threads still exit, and is not waitable until they have: a single
/// `WNOHANG` wait then left one zombie per Cassandra restart in a long experiment.
fn reap(pid: u32) {
    for _ in 0..500 {
        let mut status = 0;
        // SAFETY: waitpid with WNOHANG on a pid; -1 (ECHILD) if it is not our child.
        let waited = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
        if waited != 0 {
            return; // reaped, or not ours to reap
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// State letter and start time of a process, from /proc/<pid>/stat.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); start time is field 22.
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// All processes below `root` in the process tree, from /proc.
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // The command name (field 2) may contain spaces: fields after the last ')' are fixed.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            if let Some(ppid) = rest
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<libc::pid_t>().ok())
            {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
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
    use std::io::Write;
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
    // Written from a thread of its own: a program that answers before reading all of its input
    // could otherwise fill its output pipe while this one fills its input.
    let mut stdin = child.stdin.take().expect("piped");
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().map_err(spawn_error)?;
    let _ = writer.join();
    outcome(out, what)
}

fn outcome(out: std::process::Output, what: &str) -> Result<String, DeployError> {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(DeployError::Failed(format!(
            "{what} failed ({}): {}",
            out.status,
            text.trim()
        )));
    }
    Ok(text)
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

#[cfg(test)]
mod reap_tests {
    use super::*;

    /// A JVM stopped by SIGTERM (as a Cassandra node is) shows as a zombie while its threads exit;
    /// seen dead, it is reaped, not left behind.
    #[test]
    fn a_stopped_jvm_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("Wait.java");
        std::fs::write(
            &source,
            "public class Wait { public static void main(String[] a) throws Exception {\n\
             for (int i = 0; i < 200; i++) { Thread t = new Thread(() -> { try { Thread.sleep(60000); } catch (Exception e) {} }); t.setDaemon(true); t.start(); }\n\
             System.out.println(\"up\"); System.out.flush(); Thread.sleep(60000); } }\n",
        )
        .unwrap();
        for _ in 0..3 {
            // A touched heap and many threads: their teardown is the window in which the JVM
            // shows as a zombie but cannot be waited for yet.
            let mut child = Command::new("java")
                .args(["-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch"])
                .arg(&source)
                .stdout(Stdio::piped())
                .spawn()
                .expect("java runs (the test command installs a JDK)");
            let pid = child.id();
            let mut up = [0u8; 2];
            std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut up).unwrap();
            let process = ProcessRef::of(pid).unwrap();
            drop(child); // std neither waits nor kills on drop
            process.stop(Duration::from_secs(20));
            assert!(!process.is_running());
            // Without the reap, /proc keeps a zombie entry until this test process exits.
            assert_eq!(proc_stat(pid), None, "pid {pid} left as a zombie");
        }
    }
}
