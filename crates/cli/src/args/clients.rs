//! The options of `run`, `load` and many clients: launchers, `gather`, `kubernetes`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::phase::*;
use scalebench_session::request::{self, parse_clients, parse_duration};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: ClientsArgs,
    #[command(flatten)]
    pub consistency: ConsistencyArgs,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
    /// Perform the load phase first (automatic with the default temporary database).
    #[arg(hide_short_help = true, long)]
    pub load: bool,
}

#[derive(Debug, Args)]
pub struct GatherArgs {
    /// The run's rendezvous: etcd://HOST:PORT[,HOST:PORT]/PREFIX.
    #[arg(long, value_name = "URL", required_unless_present = "files")]
    pub rendezvous: Option<String>,
    /// Results the clients kept on their disks (FILE.client-I.json, or under the state directory):
    /// merged with those in etcd, or alone when the rendezvous is gone. A file wins over etcd.
    #[arg(value_name = "CLIENT.json")]
    pub files: Vec<PathBuf>,
    /// The phase whose results to gather (default: the files', else run).
    #[arg(long, value_enum)]
    pub phase: Option<GatherPhase>,
    /// The merged result; each client's goes beside it (FILE.client-I.json).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// How long to wait for clients still running.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct KubernetesArgs {
    /// Names the Job and its Services (a DNS label) and the rendezvous prefix.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// A container image with `scalebench` on its PATH.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// Client pods of the run.
    #[arg(long, value_name = "N", value_parser = parse_clients)]
    pub clients: u32,
    /// An etcd the clients can reach (etcd://HOST:PORT[,HOST:PORT]/PREFIX); default: one of the
    /// run's own, in the manifests.
    #[arg(long, value_name = "URL")]
    pub rendezvous: Option<String>,
    /// The image of that etcd.
    #[arg(long, value_name = "IMAGE", default_value = scalebench_distributed::kubernetes::DEFAULT_ETCD_IMAGE)]
    pub etcd_image: String,
    /// How long the clients may take to be scheduled, pull, connect and meet.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub start_timeout: Duration,
    /// Write the manifests here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Each client's command: `-- run a --db URL ...` (or `load`, `saturate`, `replay CAPTURE`).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GatherPhase {
    Load,
    Run,
}

impl GatherPhase {
    pub fn phase(self) -> scalebench_exec::Phase {
        match self {
            GatherPhase::Load => scalebench_exec::Phase::Load,
            GatherPhase::Run => scalebench_exec::Phase::Run,
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: ClientsArgs,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
    /// The schema phase alone: make the workload's table and its indexes (--create-schema implied;
    /// dropped first with --drop-schema) and insert nothing: what a load from many clients, or a
    /// load timed without the table's creation, starts from. Needs --db or --deployment.
    #[arg(long, conflicts_with_all = ["clients", "rendezvous", "client_cpus", "output"])]
    pub schema_only: bool,
}

/// The clients of a run on this machine (`elastic` takes these alone; `run`, `load` and
/// `saturate` take them within [`ClientsArgs`]).
#[derive(Debug, Args, Clone)]
pub struct LocalClientsArgs {
    /// The number of clients of the run. Alone: N client processes on this machine, as one run,
    /// each with its share (operations, load key range, rate, a section of keys for its inserts, a
    /// seed), one common start, one result merged by histogram in --output and each client's beside
    /// it (FILE.client-I.json). With --rendezvous: how many clients meet there (default: Slurm's
    /// SLURM_NTASKS). The clients share the database: --db, or for clients on this machine also
    /// --deployment (its steps around the phase, the wait until idle, compaction, space on disk, are
    /// taken once, by this process, the space in the merged result).
    /// Each client keeps its own result on its disk; one that stops answering is killed after the
    /// run's end plus --grace and a margin. Exit code 3 when a client left no result.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "N", value_parser = parse_clients)]
    pub clients: Option<u32>,

    /// How long the clients may take to connect and meet before the run is abandoned.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "DURATION", default_value = request::DEFAULT_START_TIMEOUT, value_parser = parse_duration)]
    pub start_timeout: Duration,

    /// With --clients on this machine: client i runs on CPU i mod the list's length alone (each
    /// client a core of its own, as on its own machine); also pins a single client (--clients 1).
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "CPU[,CPU...]",
        value_delimiter = ','
    )]
    pub client_cpus: Vec<usize>,
}

#[derive(Debug, Args, Clone)]
pub struct ClientsArgs {
    #[command(flatten)]
    pub local: LocalClientsArgs,

    /// With --rendezvous: this process's index, 0 to N-1 (default: SLURM_PROCID, or a Kubernetes
    /// Indexed Job's JOB_COMPLETION_INDEX). Client 0 writes the merged result.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "I",
        requires = "rendezvous"
    )]
    pub client_index: Option<u32>,

    /// Where the clients of one run meet, started on any machines by any launcher (srun, a
    /// Kubernetes Indexed Job, ssh): etcd://HOST:PORT[,HOST:PORT]/PREFIX, one PREFIX per run.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "URL"
    )]
    pub rendezvous: Option<String>,

    /// Start the clients on these hosts over ssh (client i on host i mod the number of hosts; N
    /// defaults to the number of hosts); they meet at --rendezvous, and this machine gathers and
    /// merges their results into --output.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "HOST[,HOST...]",
        requires = "rendezvous",
        value_delimiter = ','
    )]
    pub ssh: Vec<String>,

    /// With --ssh: the ssh program and its options.
    #[arg(hide_short_help = true, help_heading = "Many clients", long, value_name = "COMMAND", default_value = scalebench_distributed::ssh::DEFAULT_SSH_COMMAND)]
    pub ssh_command: String,

    /// With --ssh: the scalebench program on the hosts.
    #[arg(
        hide_short_help = true,
        help_heading = "Many clients",
        long,
        value_name = "PATH",
        default_value = "scalebench"
    )]
    pub remote_program: String,
}

/// `--db`'s help: each compiled binding's URL example, from its declaration.
impl LocalClientsArgs {
    pub fn choice(&self) -> scalebench_distributed::choice::LocalClients {
        scalebench_distributed::choice::LocalClients {
            clients: self.clients,
            start_timeout: self.start_timeout,
            cpus: self.client_cpus.clone(),
        }
    }
}

impl ClientsArgs {
    pub fn choice(&self) -> scalebench_distributed::choice::Clients {
        scalebench_distributed::choice::Clients {
            local: self.local.choice(),
            rendezvous: self.rendezvous.clone(),
            ssh: self.ssh.clone(),
            ssh_command: self.ssh_command.clone(),
            remote_program: self.remote_program.clone(),
            client_index: self.client_index,
        }
    }
}
