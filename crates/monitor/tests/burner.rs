//! The monitor on real processes: a process burning a core is named as the bound; an idle one is not.

use std::process::Command;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use scalebench_monitor::{verdict, Monitor, Target};

#[test]
fn a_process_burning_a_core_is_the_bound() {
    // Not our child (our own tree is the client's): the intermediate shell exits at once.
    let out = Command::new("sh")
        .args(["-c", "(while :; do :; done) >/dev/null 2>&1 & echo $!"])
        .output()
        .unwrap();
    let burner: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let me = std::process::id();
    let m = Monitor::start(
        vec![
            Target {
                name: "client".into(),
                pid: me,
                parallelism: Some(1),
            },
            Target {
                name: "burner".into(),
                pid: burner,
                parallelism: None,
            },
            Target {
                name: "sleeper".into(),
                pid: sleeper.id(),
                parallelism: None,
            },
        ],
        Duration::from_millis(500),
    );
    std::thread::sleep(Duration::from_millis(3200));
    let series = m.finish();
    // The burner we started.
    let _ = kill(Pid::from_raw(burner as i32), Signal::SIGKILL);
    sleeper.kill().unwrap();
    let _ = sleeper.wait();

    assert!(
        series.samples.len() >= 5,
        "{} samples",
        series.samples.len()
    );
    let last = series.samples.last().unwrap();
    let burner_cpu = last.processes[1].cpu_cores;
    // Below a full core when other work shares the host; the verdict then names it as the largest share.
    assert!(burner_cpu > 0.5, "burner used {burner_cpu} cores");
    assert!(last.processes[2].cpu_cores < 0.05);
    assert!(last.host.cpu_idle < 0.8);
    assert!(series.mem_total_bytes > 0 && last.host.mem_used_bytes > 0);
    let v = verdict(&series, "client", None);
    assert_eq!(v.process.as_deref(), Some("burner"), "{v:?}");
    assert_eq!(v.resource, "cpu");
    assert!(!v.client_bound);
    // The monitor itself costs little: the test process (the client) stays far from a core.
    assert!(
        series
            .samples
            .iter()
            .all(|s| s.processes[0].cpu_cores < 0.2),
        "{:?}",
        series
            .samples
            .iter()
            .map(|s| s.processes[0].cpu_cores)
            .collect::<Vec<_>>()
    );
}
