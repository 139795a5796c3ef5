//! An OpenSSH server on 127.0.0.1 for the tests (Debian's openssh-server): its own host key, one
//! authorized client key, all in a temporary directory; stopped when dropped. Needs root (it logs
//! the test's user in).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct LocalSshd {
    dir: tempfile::TempDir,
    port: u16,
    process: Child,
}

impl LocalSshd {
    pub fn start() -> LocalSshd {
        let dir = tempfile::Builder::new()
            .prefix("scalebench-sshd-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        for key in ["host_key", "client_key"] {
            let o = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .output()
                .expect("ssh-keygen runs (Debian package openssh-client)");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        // sshd's privilege separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nPidFile {d}/sshd.pid\n\
             SetEnv SCALEBENCH_STATE_DIR={d}/state\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        let process = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts (Debian package openssh-server)");
        let sshd = LocalSshd { dir, port, process };
        let began = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "sshd did not listen within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        sshd
    }

    /// The ssh command that logs in to this server.
    pub fn ssh_command(&self) -> String {
        format!(
            "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -i {} -p {}",
            self.dir.path().join("client_key").display(),
            self.port
        )
    }
}

impl Drop for LocalSshd {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}
