//! `--ssh HOST[,HOST...]`: this machine starts each client on its host over ssh; the clients meet
//! in etcd (`--rendezvous`) as any others, and this machine gathers their results from there (no
//! shared filesystem needed) and merges them. Each client gets its order as data on its stdin
//! ([`SshClientOrder`]), as local clients do: nothing is re-parsed there, and no password of the
//! database URL stands in the host's process list.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scalebench_exec::Phase;

use serde::{Deserialize, Serialize};

use crate::etcd::{self, RendezvousUrl};
use crate::outcome::{merge_clients, DistributedOutcome};
use scalebench_session::error::SessionError;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::RunWiring;

pub const DEFAULT_SSH_COMMAND: &str = "ssh -o BatchMode=yes";

#[derive(Debug, Clone)]
pub struct SshLaunch {
    /// Client i runs on `hosts[i % hosts.len()]`.
    pub hosts: Vec<String>,
    pub clients: u32,
    /// The ssh program and its options, e.g. `ssh -p 2222 -i key`.
    pub ssh_command: String,
    /// `scalebench` on the hosts.
    pub remote_program: String,
    pub rendezvous: RendezvousUrl,
    /// Bounds the clients' start: ssh's connect and key exchange, their connections, the barrier.
    pub start_timeout: Duration,
}

impl SshLaunch {
    /// Run `name` of a series meets under its own prefix of the rendezvous.
    pub fn for_run(&self, name: &str) -> SshLaunch {
        let mut launch = self.clone();
        launch.rendezvous.prefix = format!("{}/{name}", self.rendezvous.prefix);
        launch
    }
}

/// The remote command that reads an [`SshClientOrder`] on its stdin (`scalebench`'s hidden
/// `ssh-client`).
pub const CLIENT_COMMAND: &str = "ssh-client";

/// What one client started over ssh is to do: the first line on its stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct SshClientOrder {
    pub request: RunRequest,
    pub phase: Phase,
    pub rendezvous: RendezvousUrl,
    /// None: every client read the same order (srun broadcasts it to its tasks) and takes its
    /// index from its launcher's environment (SLURM_PROCID).
    pub index: Option<u32>,
    pub clients: u32,
    pub start_timeout: Duration,
    /// Its /metrics endpoint and HDR logs, at its index.
    #[serde(default)]
    pub outputs: scalebench_session::wiring::ClientOutputs,
}

impl SshClientOrder {
    /// The order on this process's stdin (the client's side).
    pub fn read() -> Result<SshClientOrder, SessionError> {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| SessionError::Failed(format!("cannot read the client's order: {e}")))?;
        serde_json::from_str(&line).map_err(|e| {
            SessionError::Failed(format!(
                "the client's order does not parse ({e}): is {CLIENT_COMMAND} the same scalebench as the launcher's?"
            ))
        })
    }

    /// This client's share of the run.
    pub fn share(&self) -> Result<scalebench_session::clients::ClientShare, SessionError> {
        scalebench_session::clients::ClientShare::from_launcher(
            self.index,
            Some(self.clients),
            |name| std::env::var(name).ok(),
        )
    }
}

/// One client's ssh while it runs: its host, its process and the thread forwarding its stderr.
struct SshClient {
    index: u32,
    host: String,
    child: Child,
    forward: Option<std::thread::JoinHandle<()>>,
}

/// Starts every client over ssh, waits for all of them, gathers and merges their results.
pub fn launch(
    launch: &SshLaunch,
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
) -> Result<DistributedOutcome, SessionError> {
    crate::share::check(request, launch.clients, phase, false)?;
    let ssh = ssh_words(launch)?;
    scalebench_session::interrupt::install_handler();
    let stop = wiring.stop_signal();
    scalebench_session::interrupt::register_stop(&stop);
    let launched = Instant::now();
    let mut children = Vec::new();
    for index in 0..launch.clients {
        match start_client(
            &ssh,
            launch,
            (request, &wiring.client_outputs),
            phase,
            index,
        ) {
            Ok(c) => children.push(c),
            Err(e) => {
                for mut c in children {
                    let _ = c.child.kill();
                    let _ = c.child.wait();
                }
                scalebench_session::interrupt::clear_stop();
                return Err(e);
            }
        }
    }
    let (ended, stopped) = wait_for_all(launch, request, phase, &stop, launched, &mut children);
    scalebench_session::interrupt::clear_stop();
    let results =
        etcd::gather(&launch.rendezvous, phase, Duration::from_secs(10)).map_err(|e| {
            let each: Vec<String> = ended
                .iter()
                .map(|(i, how)| format!("client {i}: {how}"))
                .collect();
            SessionError::Failed(format!("{e} ({})", each.join("; ")))
        })?;
    // A missing client's reason says what its ssh said too.
    let results = results
        .into_iter()
        .zip(&ended)
        .map(|(r, (_, how))| r.map_err(|why| format!("{why}; its ssh {how}")))
        .collect();
    let mut outcome = merge_clients(Some(request), phase, "ssh", results)?;
    outcome.set_interrupted(stopped);
    Ok(outcome)
}

/// The ssh program and its options, checked with the hosts; the start timeout bounds ssh's connect
/// and key exchange too (it otherwise waits for an unanswering host as long as the TCP stack
/// does), unless the ssh command sets its own.
fn ssh_words(launch: &SshLaunch) -> Result<Vec<String>, SessionError> {
    let mut ssh = shlex::split(&launch.ssh_command)
        .filter(|words| !words.is_empty())
        .ok_or_else(|| {
            SessionError::Usage(format!(
                "invalid value '{}' for '--ssh-command': expected a command and its options",
                launch.ssh_command
            ))
        })?;
    if launch.hosts.is_empty()
        || launch
            .hosts
            .iter()
            .any(|h| h.is_empty() || h.starts_with('-'))
    {
        return Err(SessionError::Usage(format!(
            "invalid value '{}' for '--ssh': expected HOST[,HOST...]",
            launch.hosts.join(",")
        )));
    }
    if !launch.ssh_command.contains("ConnectTimeout") {
        ssh.splice(
            1..1,
            [
                "-o".to_string(),
                format!("ConnectTimeout={}", launch.start_timeout.as_secs().max(1)),
            ],
        );
    }
    Ok(ssh)
}

/// Starts client `index` on its host (client i on host i mod hosts) and writes it its order.
fn start_client(
    ssh: &[String],
    launch: &SshLaunch,
    (request, outputs): (&RunRequest, &scalebench_session::wiring::ClientOutputs),
    phase: Phase,
    index: u32,
) -> Result<SshClient, SessionError> {
    let host = &launch.hosts[index as usize % launch.hosts.len()];
    // ssh hands the remote shell one string: the program quoted for it.
    let remote = shlex::try_join([launch.remote_program.as_str(), CLIENT_COMMAND])
        .map_err(|e| SessionError::Usage(format!("invalid value for '--remote-program': {e}")))?;
    let order = serde_json::to_string(&SshClientOrder {
        request: request.clone(),
        phase,
        rendezvous: launch.rendezvous.clone(),
        index: Some(index),
        clients: launch.clients,
        start_timeout: launch.start_timeout,
        outputs: outputs.clone(),
    })
    .map_err(|e| SessionError::Failed(e.to_string()))?;
    let mut command = Command::new(&ssh[0]);
    command
        .args(&ssh[1..])
        .arg(host)
        .arg(remote)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::local::die_with_parent(&mut command);
    let mut child = command
        .spawn()
        .map_err(|e| SessionError::Failed(format!("cannot run {}: {e}", ssh[0])))?;
    // The order, then end of file (ssh ends its side of the channel: the client reads no more).
    if let Some(mut stdin) = child.stdin.take() {
        let _ = writeln!(stdin, "{order}").and_then(|()| stdin.flush());
    }
    let stderr = child.stderr.take().expect("piped");
    let tag = format!("client {index} ({host})");
    let forward = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            scalebench_session::note!("{tag}: {line}");
        }
    });
    Ok(SshClient {
        index,
        host: host.clone(),
        child,
        forward: Some(forward),
    })
}

/// Until every ssh has ended: bounded by the start timeout and the run's end plus its grace and a
/// margin (or, after Ctrl-C, the grace and a shorter margin); an ssh past it is killed. Ctrl-C asks
/// the clients to stop through the rendezvous. Returns how each ended, and whether it was stopped.
fn wait_for_all(
    launch: &SshLaunch,
    request: &RunRequest,
    phase: Phase,
    stop: &scalebench_exec::StopSignal,
    launched: Instant,
    children: &mut [SshClient],
) -> (Vec<(u32, String)>, bool) {
    let rule = crate::share::EndRule::of(
        request,
        phase,
        launched + launch.start_timeout,
        crate::share::END_MARGIN,
    );
    let mut ended: Vec<Option<String>> = vec![None; children.len()];
    let mut first_ended = None;
    let mut stopped_at = None;
    while ended.iter().any(Option::is_none) {
        if stop.is_requested() && stopped_at.is_none() {
            stopped_at = Some(Instant::now());
            let running: Vec<String> = children
                .iter()
                .zip(&ended)
                .filter(|(_, e)| e.is_none())
                .map(|(c, _)| format!("client {} on {}", c.index, c.host))
                .collect();
            scalebench_session::note!(
                "interrupted: asking {} to stop through {} and keep what they measured",
                running.join(", "),
                launch.rendezvous.display()
            );
            etcd::request_stop(&launch.rendezvous, phase);
        }
        let now = Instant::now();
        let deadline = rule.deadline(first_ended, None, stopped_at);
        for (c, e) in children.iter_mut().zip(ended.iter_mut()) {
            if e.is_some() {
                continue;
            }
            let host = &c.host;
            match c.child.try_wait() {
                Ok(Some(status)) => {
                    if let Some(f) = c.forward.take() {
                        let _ = f.join();
                    }
                    first_ended.get_or_insert(now);
                    *e = Some(match status.code() {
                        Some(255) => format!("ssh to {host} failed"),
                        Some(0) => "ended".to_string(),
                        _ => format!("ended with {status} on {host}"),
                    });
                }
                Ok(None) if now >= deadline => {
                    let _ = c.child.kill();
                    let _ = c.child.wait();
                    let round = |d: Duration| {
                        humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
                    };
                    let why = match stopped_at {
                        Some(at) => format!(
                            "its ssh to {host} had not ended {} after Ctrl-C: killed (the client on {host} may still run)",
                            round(now.duration_since(at))
                        ),
                        None => format!(
                            "its ssh to {host} had not ended {} after the launch (the start timeout, the run, its grace period and {}): killed (the client on {host} may still run)",
                            round(now.duration_since(launched)),
                            round(crate::share::END_MARGIN)
                        ),
                    };
                    scalebench_session::note!("client {}: {why}", c.index);
                    *e = Some(why);
                }
                Ok(None) => {}
                Err(err) => *e = Some(format!("could not be waited for: {err}")),
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let ended = children
        .iter()
        .zip(ended)
        .map(|(c, e)| (c.index, e.unwrap_or_default()))
        .collect();
    (ended, stopped_at.is_some())
}
