//! Which launcher a command's client options ask for: N processes on this machine, clients
//! started over ssh, or none (this process alone, or itself one client of a rendezvous run). The
//! command line parses the options into these values; the choice and its rules live here.

use std::time::Duration;

use scalebench_session::clients::ClientShare;
use scalebench_session::error::SessionError;

use crate::local::{ClientProgram, LocalLaunch};
use crate::Launcher;

/// `--clients N`, `--start-timeout`, `--client-cpus`: client processes on this machine.
#[derive(Debug, Clone, Default)]
pub struct LocalClients {
    pub clients: Option<u32>,
    pub start_timeout: Duration,
    pub cpus: Vec<usize>,
}

/// Every client option: those on this machine, and a rendezvous with its ssh hosts.
#[derive(Debug, Clone, Default)]
pub struct Clients {
    pub local: LocalClients,
    pub rendezvous: Option<String>,
    pub ssh: Vec<String>,
    pub ssh_command: String,
    pub remote_program: String,
    /// `--client-index`: which client of a rendezvous run this process is (default: the launcher's
    /// own variables, Slurm's or a Kubernetes Indexed Job's).
    pub client_index: Option<u32>,
}

impl LocalClients {
    /// The processes on this machine `--clients N` (N > 1) or `--client-cpus` asks for; None alone.
    pub fn launcher(&self) -> Result<Option<LocalLaunch>, SessionError> {
        if !self.cpus.is_empty() {
            crate::local::check_cpus(&self.cpus)?;
        } else if self.clients.is_none_or(|n| n <= 1) {
            return Ok(None);
        }
        Ok(Some(LocalLaunch {
            program: client_program()?,
            clients: self.clients.unwrap_or(1),
            start_timeout: self.start_timeout,
            cpus: self.cpus.clone(),
        }))
    }
}

impl Clients {
    /// The launcher `--clients N` (N > 1) or `--rendezvous URL --ssh HOSTS` asks for; None alone or
    /// when this process is itself one client of a rendezvous run (`--rendezvous` without `--ssh`).
    pub fn launcher(&self) -> Result<Option<Box<dyn Launcher + Send + Sync>>, SessionError> {
        if !self.local.cpus.is_empty() && self.rendezvous.is_some() {
            return Err(SessionError::Usage(
                "--client-cpus pins the clients of --clients N on this machine; with --rendezvous each client's own launcher places it".into(),
            ));
        }
        Ok(match &self.rendezvous {
            None => self
                .local
                .launcher()?
                .map(|l| Box::new(l) as Box<dyn Launcher + Send + Sync>),
            Some(url) if !self.ssh.is_empty() => Some(Box::new(crate::ssh::SshLaunch {
                hosts: self.ssh.clone(),
                clients: self.local.clients.unwrap_or(self.ssh.len() as u32),
                ssh_command: self.ssh_command.clone(),
                remote_program: self.remote_program.clone(),
                rendezvous: crate::etcd::RendezvousUrl::parse(url)?,
                start_timeout: self.local.start_timeout,
            })),
            Some(_) => None,
        })
    }
}

impl Clients {
    /// This process as one client of a run whose clients meet at `--rendezvous` (none: not a
    /// rendezvous client), its share from `--client-index` or the launcher's variables.
    pub fn rendezvous_client(
        &self,
    ) -> Result<Option<(crate::etcd::RendezvousUrl, ClientShare)>, SessionError> {
        let Some(url) = &self.rendezvous else {
            return Ok(None);
        };
        let share = ClientShare::from_launcher(self.client_index, self.local.clients, |name| {
            std::env::var(name).ok()
        })?;
        Ok(Some((crate::etcd::RendezvousUrl::parse(url)?, share)))
    }
}

/// This program as the client processes of a `--clients N` run (its hidden `client-process`).
pub fn client_program() -> Result<ClientProgram, SessionError> {
    Ok(ClientProgram {
        program: std::env::current_exe().map_err(|e| {
            SessionError::Failed(format!(
                "cannot find this program to start its clients: {e}"
            ))
        })?,
        args: vec!["client-process".into()],
    })
}
