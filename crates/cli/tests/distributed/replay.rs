//! Issue 66 item 4: one capture replayed from N clients as one run, with every launcher that runs
//! here: N processes of this machine (`--clients`), clients started over ssh (the sshd on
//! 127.0.0.1) and by srun (the local Slurm), meeting in etcd. Each client replays the sessions that
//! fall to it, so each session's operations run in order on one client.

use super::*;

/// 2,000 operations over 1 s on 32 sessions, each a write of one of 400 keys then, in the same
/// session, a read of it.
fn capture(path: &std::path::Path) {
    let mut text = String::new();
    for i in 0..2000u32 {
        let op = if i % 2 == 0 { "set" } else { "get" };
        text.push_str(&format!(
            "{{\"time\": {:.4}, \"session\": \"c{}\", \"op\": \"{op}\", \"key\": \"k{}\", \"value_size\": 50}}\n",
            f64::from(i) / 2000.0,
            i / 2 % 32,
            i / 2 % 400
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// The merged result at `out`, and its clients' files beside it: every captured operation ran
/// once, on one client or another (none on both, none lost), and every read found the write its
/// session made before it (a session's order kept across the split).
fn check_split(out: &std::path::Path, clients: u64, launcher: &str) {
    let merged = json(out);
    let phase = &merged["phases"][0];
    assert_eq!(phase["ended_by"], "replayed", "{launcher}");
    assert_eq!(u(&phase["totals"]["ok"]), 2000, "{launcher}: {phase}");
    assert_eq!(u(&phase["totals"]["failed"]), 0, "{launcher}: {phase}");
    assert_eq!(u(&phase["replay"]["read"]), 2000, "{launcher}");
    assert_eq!(merged["distributed"]["launcher"], launcher);
    let stem = out.file_stem().unwrap().to_string_lossy();
    let fed: Vec<u64> = (0..clients)
        .map(|i| {
            let c = json(&out.with_file_name(format!("{stem}.client-{i}.json")));
            u(&c["phases"][0]["replay"]["fed"])
        })
        .collect();
    assert_eq!(fed.iter().sum::<u64>(), 2000, "{launcher}: {fed:?}");
    assert!(
        fed.iter().all(|&n| n > 0),
        "{launcher}: each client its share: {fed:?}"
    );
}

#[test]
fn a_capture_is_replayed_from_clients_of_every_launcher_as_one_run() {
    let server = redis();
    let url = server.url();
    let etcd = shared_etcd();
    let dir = test_dir();
    let file = dir.path().join("capture.jsonl");
    capture(&file);
    let c = file.to_str().unwrap();
    let out = |name: &str| dir.path().join(format!("{name}.json"));
    let common = ["--concurrency", "8", "--no-monitor", "-q"];

    let local = out("local");
    let o = scalebench_within(
        &[
            &["replay", c, "--db", &url, "--clients", "2", "-o"][..],
            &[local.to_str().unwrap()],
            &common,
        ]
        .concat(),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    check_split(&local, 2, "local");

    let sshd = sshd::LocalSshd::start();
    let over_ssh = out("ssh");
    let rendezvous = format!("{}/replay-ssh", etcd.url());
    let o = scalebench_within(
        &[
            &["replay", c, "--db", &url, "--rendezvous", &rendezvous][..],
            &["--ssh", "127.0.0.1,localhost", "--clients", "2"],
            &["--ssh-command", &sshd.ssh_command()],
            &["--remote-program", env!("CARGO_BIN_EXE_scalebench")],
            &["--start-timeout", "5s", "-o", over_ssh.to_str().unwrap()],
            &common,
        ]
        .concat(),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    check_split(&over_ssh, 2, "ssh");

    let slurm = slurm::LocalSlurm::start();
    let by_srun = out("srun");
    let rendezvous = format!("{}/replay-srun", etcd.url());
    let o = slurm
        .srun()
        .args(["-n", "3", "--overcommit", "--kill-on-bad-exit=0"])
        .arg(env!("CARGO_BIN_EXE_scalebench"))
        .args(["replay", c, "--db", &url, "--rendezvous", &rendezvous])
        .args(["-o", by_srun.to_str().unwrap()])
        .args(common)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    check_split(&by_srun, 3, "etcd");
}
