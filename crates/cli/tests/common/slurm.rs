//! A one-node Slurm on this machine for the tests (Debian's slurm-wlm and munge): munged with a key
//! of its own, slurmctld and slurmd bound to 127.0.0.1 on free ports, all files in a temporary
//! directory; stopped when dropped. As in ../shared/docs/servers-here.md; needs root (slurmd runs
//! jobs as their user; munged runs as `munge`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct LocalSlurm {
    dir: tempfile::TempDir,
    munged: Child,
    daemons: Vec<Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(cmd: &mut Command) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

impl LocalSlurm {
    pub fn start() -> LocalSlurm {
        let dir = tempfile::Builder::new()
            .prefix("scalebench-slurm-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        let munge_dir = d.join("munge");
        std::fs::create_dir_all(&munge_dir).unwrap();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // A key of its own: munged wants it owned by its user and readable by nobody else.
        let key = munge_dir.join("munge.key");
        let mut bytes = vec![0u8; 1024];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut bytes)
            .unwrap();
        std::fs::write(&key, &bytes).unwrap();
        run(Command::new("chown")
            .args(["-R", "munge:munge"])
            .arg(&munge_dir));
        run(Command::new("chmod").arg("400").arg(&key));
        // Every directory on the socket's path must be searchable by all.
        run(Command::new("chmod").arg("755").arg(d).arg(&munge_dir));
        let socket = munge_dir.join("munge.socket");
        let munged = Command::new("runuser")
            .args(["-u", "munge", "--", "munged", "-F"])
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!(
                "--pid-file={}",
                munge_dir.join("munged.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                munge_dir.join("munged.log").display()
            ))
            .arg(format!(
                "--seed-file={}",
                munge_dir.join("munged.seed").display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("munged starts (Debian package munge)");
        let mut slurm = LocalSlurm {
            dir,
            munged,
            daemons: Vec::new(),
        };
        slurm.wait_for(|| socket.exists(), "munged's socket");
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let d = slurm.dir.path().to_path_buf();
        let conf = format!(
            "ClusterName=scalebench\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={}\n\
             SlurmdPort={}\n\
             CommunicationParameters=NoCtldInAddrAny,NoInAddrAny\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             ReturnToService=2\n\
             JobAcctGatherType=jobacct_gather/none\n\
             MpiDefault=none\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN\n\
             PartitionName=local Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8\n",
            free_port(),
            free_port(),
            socket.display(),
            d = d.display()
        );
        std::fs::write(slurm.conf(), conf).unwrap();
        for (daemon, extra) in [("slurmctld", &["-D", "-c"][..]), ("slurmd", &["-D"][..])] {
            let child = Command::new(daemon)
                .arg("-f")
                .arg(slurm.conf())
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{daemon} starts (Debian package slurm-wlm): {e}"));
            slurm.daemons.push(child);
        }
        let conf = slurm.conf();
        slurm.wait_for(
            || {
                Command::new("sinfo")
                    .args(["-h", "-o", "%t"])
                    .env("SLURM_CONF", &conf)
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "the Slurm node to be idle",
        );
        slurm
    }

    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// `srun` with this Slurm's configuration.
    pub fn srun(&self) -> Command {
        let mut c = Command::new("srun");
        c.env("SLURM_CONF", self.conf());
        c
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn wait_for(&mut self, ready: impl Fn() -> bool, what: &str) {
        let began = Instant::now();
        while !ready() {
            if began.elapsed() > Duration::from_secs(60) {
                let logs = format!(
                    "slurmctld: {}\nslurmd: {}",
                    self.log("slurmctld.log"),
                    self.log("slurmd.log")
                );
                panic!("waited a minute for {what}\n{logs}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        for c in &mut self.daemons {
            let _ = c.kill();
            let _ = c.wait();
        }
        // runuser waits for munged; munged itself is named in its pid file.
        let pid_file = self.dir.path().join("munge/munged.pid");
        if let Some(pid) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            // The munged this helper started.
            super::signal(pid, super::Signal::SIGTERM);
        }
        let _ = self.munged.wait();
    }
}
