//! The processes of the servers scalebench starts (each in its own process group, its output in
//! `server.log`), and those it finds again from a cluster's state: stopped, paused, resumed, reaped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::error::DeployError;
use crate::host::wait_until;

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
                    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
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

    fn signal(&self, sig: Signal) {
        signal_tree(self.child.id() as i32, sig);
    }

    /// SIGSTOP to every process of the server: it stops answering, connections stay open.
    pub fn pause(&self) {
        self.signal(Signal::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    /// SIGKILL without waiting: a crash, from any thread (the process is reaped by `kill` or `drop`).
    pub fn crash(&self) {
        self.signal(Signal::SIGKILL);
    }

    /// SIGKILL, as a crash, and reap.
    pub fn kill(&mut self) {
        self.signal(Signal::SIGKILL);
        let _ = self.child.wait();
        self.stopped = true;
    }

    /// SIGTERM, then SIGKILL after `grace`.
    pub fn stop(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        self.signal(Signal::SIGCONT);
        self.signal(Signal::SIGTERM);
        let exited = wait_until(grace, || !matches!(self.child.try_wait(), Ok(None)));
        if !exited {
            self.signal(Signal::SIGKILL);
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
fn signal_tree(root: i32, sig: Signal) {
    // -1 would be every process, 0 and -0 this process group: never a node.
    if root <= 1 {
        return;
    }
    let tree = descendants(root);
    // Each may be gone already (ESRCH) or, for the group, never have been one: nothing to do then.
    let _ = kill(Pid::from_raw(root), sig);
    let _ = killpg(Pid::from_raw(root), sig);
    for pid in tree {
        let _ = kill(Pid::from_raw(pid), sig);
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

    fn signal(&self, sig: Signal) {
        if self.is_running() {
            signal_tree(self.pid as i32, sig);
        }
    }

    pub fn pause(&self) {
        self.signal(Signal::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    /// SIGKILL: a crash.
    pub fn kill(&self) {
        self.signal(Signal::SIGKILL);
        wait_until(Duration::from_secs(10), || !self.is_running());
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once the process is gone.
    pub fn stop(&self, grace: Duration) {
        self.stop_with(Signal::SIGTERM, grace);
    }

    /// `signal` (the server's own "shut down now and cleanly"), then SIGKILL after `grace`.
    pub fn stop_with(&self, signal: Signal, grace: Duration) {
        Self::stop_all_with(std::slice::from_ref(self), signal, grace);
    }

    /// [`ProcessRef::stop_with`] for several processes shutting down side by side: all signalled,
    /// then each awaited up to `grace` in turn (shutting down together on few cores, each may
    /// take longer than alone; none is killed sooner than it would have been one by one).
    pub fn stop_all_with(processes: &[ProcessRef], signal: Signal, grace: Duration) {
        Self::stop_all_verified(processes, signal, grace);
    }

    /// [`ProcessRef::stop_all_with`], each process then looked at again: what became of it, told
    /// truthfully (a recorded pid that is gone, or is another program now, was not "stopped").
    pub fn stop_all_verified(
        processes: &[ProcessRef],
        signal: Signal,
        grace: Duration,
    ) -> Vec<StopOutcome> {
        let mut outcomes: Vec<StopOutcome> = processes
            .iter()
            .map(|p| {
                if p.is_running() {
                    StopOutcome::Stopped
                } else if p.pid > 1 && proc_stat(p.pid).is_some_and(|(state, _)| state != 'Z') {
                    StopOutcome::OtherProgram
                } else {
                    StopOutcome::AlreadyGone
                }
            })
            .collect();
        let ours: Vec<bool> = outcomes
            .iter()
            .map(|o| *o == StopOutcome::Stopped)
            .collect();
        for (i, p) in processes.iter().enumerate() {
            if ours[i] {
                p.signal(Signal::SIGCONT);
                p.signal(signal);
            }
        }
        for (i, p) in processes.iter().enumerate() {
            if ours[i] && !wait_until(grace, || !p.is_running()) {
                p.kill();
                outcomes[i] = if p.is_running() {
                    StopOutcome::StillRunning
                } else {
                    StopOutcome::Killed
                };
            }
        }
        outcomes
    }
}

/// What became of a recorded process that was to be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopOutcome {
    /// It exited at the stop signal, within the grace time.
    Stopped,
    /// It outlived the grace time and SIGKILL ended it.
    Killed,
    /// It had exited before (nothing runs with its pid).
    AlreadyGone,
    /// Its pid now belongs to another process (another start time): left alone.
    OtherProgram,
    /// Still running after SIGKILL and a bounded wait (a process in uninterruptible sleep, or
    /// one this user may not signal).
    StillRunning,
}

impl StopOutcome {
    /// Nothing of it runs any more (or it was never ours to stop).
    pub fn is_gone(self) -> bool {
        self != StopOutcome::StillRunning
    }

    /// How `down` says it, for process `pid`.
    pub fn describe(self, pid: u32) -> String {
        match self {
            StopOutcome::Stopped => format!("pid {pid} stopped"),
            StopOutcome::Killed => format!("pid {pid} killed (SIGKILL after the grace time)"),
            StopOutcome::AlreadyGone => format!("pid {pid} already gone"),
            StopOutcome::OtherProgram => {
                format!("pid {pid} is another program now: left alone")
            }
            StopOutcome::StillRunning => format!(
                "pid {pid} still running after SIGKILL: NOT stopped (`kill -9 {pid}`, or see `ps -p {pid}`)"
            ),
        }
    }
}

/// Waits for `pid`, seen as a zombie, if it is our child. A multi-threaded process (a JVM) shows
/// as a zombie while its other threads still exit, and is not waitable until they have: a single
/// `WNOHANG` wait then left one zombie per Cassandra restart in a long experiment.
fn reap(pid: u32) {
    for _ in 0..500 {
        // An error (ECHILD) if it is not our child.
        let waited = waitpid(Pid::from_raw(pid as i32), Some(WaitPidFlag::WNOHANG));
        if !matches!(waited, Ok(WaitStatus::StillAlive)) {
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
pub fn descendants(root: i32) -> Vec<i32> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
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
                .and_then(|p| p.parse::<i32>().ok())
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
