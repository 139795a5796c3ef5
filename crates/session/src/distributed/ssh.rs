//! `--ssh HOST[,HOST...]`: this machine starts each client on its host over ssh; the clients meet
//! in etcd (`--rendezvous`) as any others, and this machine gathers their results from there (no
//! shared filesystem needed) and merges them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use scalebench_exec::Phase;

use super::etcd::{self, RendezvousUrl};
use super::{merge_clients, DistributedOutcome};
use crate::error::SessionError;
use crate::request::RunRequest;

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
    /// The client's arguments after the program (`run a --db ... --rendezvous ...`), without
    /// `--clients` and `--client-index`, which are added per client.
    pub client_args: Vec<String>,
    pub rendezvous: RendezvousUrl,
}

/// Starts every client over ssh, waits for all of them, gathers and merges their results.
pub fn launch(
    launch: &SshLaunch,
    request: &RunRequest,
    phase: Phase,
) -> Result<DistributedOutcome, SessionError> {
    let ssh = shlex::split(&launch.ssh_command)
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
    let mut children = Vec::new();
    for index in 0..launch.clients {
        let host = &launch.hosts[index as usize % launch.hosts.len()];
        let mut words = vec![launch.remote_program.clone()];
        words.extend(launch.client_args.iter().cloned());
        words.extend([
            "--clients".to_string(),
            launch.clients.to_string(),
            "--client-index".into(),
            index.to_string(),
        ]);
        // ssh hands the remote shell one string: each word quoted for it.
        let remote = shlex::try_join(words.iter().map(String::as_str)).map_err(|e| {
            SessionError::Usage(format!("an argument cannot be passed over ssh: {e}"))
        })?;
        let mut child = Command::new(&ssh[0])
            .args(&ssh[1..])
            .arg(host)
            .arg(remote)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SessionError::Failed(format!("cannot run {}: {e}", ssh[0])))?;
        let stderr = child.stderr.take().expect("piped");
        let tag = format!("client {index} ({host})");
        let forward = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                crate::note!("{tag}: {line}");
            }
        });
        children.push((index, host.clone(), child, forward));
    }
    let mut ended = Vec::new();
    for (index, host, mut child, forward) in children {
        let status = child.wait();
        let _ = forward.join();
        let how = match status {
            Ok(s) if s.code() == Some(255) => format!("ssh to {host} failed"),
            Ok(s) if s.success() => "ended".to_string(),
            Ok(s) => format!("ended with {s} on {host}"),
            Err(e) => format!("could not be waited for: {e}"),
        };
        ended.push((index, how));
    }
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
    merge_clients(Some(request), phase, "ssh", results)
}
