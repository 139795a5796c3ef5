//! Clients started by Slurm for a launcher (an experiment's `[procedure.clients] launcher =
//! "srun"`): one `srun -n N` runs the client program as N tasks wherever Slurm places them. srun
//! gives every task the same stdin, so each reads the same order ([`SshClientOrder`] without an
//! index) and takes its index from Slurm (SLURM_PROCID); they meet in etcd (`rendezvous`) as any
//! others, and this machine gathers their results from there and merges them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scalebench_exec::Phase;

use crate::etcd::{self, RendezvousUrl};
use crate::outcome::{merge_clients, DistributedOutcome};
use crate::ssh::{SshClientOrder, CLIENT_COMMAND};
use scalebench_session::error::SessionError;
use scalebench_session::request::RunRequest;
use scalebench_session::wiring::RunWiring;

pub const DEFAULT_SRUN_COMMAND: &str = "srun";

#[derive(Debug, Clone)]
pub struct SrunLaunch {
    pub clients: u32,
    /// srun and its options (a partition, an account, `--overcommit`); `-n N` is added.
    pub srun_command: String,
    /// The scalebench program on the nodes.
    pub program: String,
    pub rendezvous: RendezvousUrl,
    /// Bounds the clients' start: Slurm's allocation, their connections, the barrier.
    pub start_timeout: Duration,
}

impl SrunLaunch {
    /// Run `name` of a series meets under its own prefix of the rendezvous.
    pub fn for_run(&self, name: &str) -> SrunLaunch {
        let mut launch = self.clone();
        launch.rendezvous.prefix = format!("{}/{name}", self.rendezvous.prefix);
        launch
    }
}

/// Starts the clients as one job step, waits for it, gathers and merges their results.
pub fn launch(
    launch: &SrunLaunch,
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
) -> Result<DistributedOutcome, SessionError> {
    crate::share::check(request, launch.clients, phase, false)?;
    let srun = shlex::split(&launch.srun_command)
        .filter(|words| !words.is_empty())
        .ok_or_else(|| {
            SessionError::Usage(format!(
                "invalid value '{}' for 'srun_command': expected a command and its options",
                launch.srun_command
            ))
        })?;
    let order = serde_json::to_string(&SshClientOrder {
        request: request.clone(),
        phase,
        rendezvous: launch.rendezvous.clone(),
        index: None,
        clients: launch.clients,
        start_timeout: launch.start_timeout,
        outputs: wiring.client_outputs.clone(),
    })
    .map_err(|e| SessionError::Failed(e.to_string()))?;
    let mut command = Command::new(&srun[0]);
    command
        .args(&srun[1..])
        .args(["-n", &launch.clients.to_string(), "--kill-on-bad-exit=0"])
        .args([launch.program.as_str(), CLIENT_COMMAND])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::local::die_with_parent(&mut command);
    scalebench_session::interrupt::install_handler();
    let stop = wiring.stop_signal();
    scalebench_session::interrupt::register_stop(&stop);
    let launched = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        scalebench_session::interrupt::clear_stop();
        SessionError::Failed(format!("cannot run {}: {e}", srun[0]))
    })?;
    // The order, then end of file: every task reads the one line.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = writeln!(stdin, "{order}").and_then(|()| stdin.flush());
    }
    let stderr = child.stderr.take().expect("piped");
    let forward = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            scalebench_session::note!("srun: {line}");
        }
    });
    let rule = crate::share::EndRule::of(
        request,
        phase,
        launched + launch.start_timeout,
        crate::share::END_MARGIN,
    );
    let mut stopped_at = None;
    let how = loop {
        if stop.is_requested() && stopped_at.is_none() {
            stopped_at = Some(Instant::now());
            scalebench_session::note!(
                "interrupted: asking the clients to stop through {} and keep what they measured",
                launch.rendezvous.display()
            );
            etcd::request_stop(&launch.rendezvous, phase);
        }
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break "ended".to_string(),
            Ok(Some(status)) => break format!("its job step ended with {status}"),
            Ok(None) if Instant::now() >= rule.deadline(None, None, stopped_at) => {
                let _ = child.kill();
                let _ = child.wait();
                break "its job step had not ended by the run's end, its grace period and a margin: killed".to_string();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => break format!("its job step could not be waited for: {e}"),
        }
    };
    let _ = forward.join();
    scalebench_session::interrupt::clear_stop();
    let results = etcd::gather(&launch.rendezvous, phase, Duration::from_secs(10))
        .map_err(|e| SessionError::Failed(format!("{e} ({how})")))?
        .into_iter()
        .map(|r| r.map_err(|why| format!("{why}; {how}")))
        .collect();
    let mut outcome = merge_clients(Some(request), phase, "srun", results)?;
    outcome.set_interrupted(stopped_at.is_some());
    Ok(outcome)
}
