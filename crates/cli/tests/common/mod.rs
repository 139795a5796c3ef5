//! Running the `scalebench` binary from tests.
#![allow(dead_code)]

pub mod pages;
pub mod slurm;
pub mod sshd;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub use nix::sys::signal::Signal;

/// Debian's `chromium` (scripts/test.sh installs it), or another Chromium on PATH.
pub fn chromium() -> std::path::PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(o) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
        {
            let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if o.status.success() && !p.is_empty() {
                return std::path::PathBuf::from(p);
            }
        }
    }
    panic!("no chromium on PATH: scripts/test.sh installs Debian's chromium package");
}

/// Runs headless Chromium on `url` with `args`; returns (stdout, stderr).
pub fn browse(dir: &Path, args: &[&str], url: &str) -> (String, String) {
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The console errors and failed loads in what [`browse`] logged.
pub fn console_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load") || l.contains("Uncaught"))
        .collect()
}

/// `html` opened in headless Chromium with `script` (JavaScript that returns a JSON-able value)
/// run once the page loaded: its value, and the console errors.
pub fn in_chromium(dir: &Path, html: &Path, script: &str) -> (serde_json::Value, Vec<String>) {
    let text = std::fs::read_to_string(html).unwrap();
    let probe = format!(
        "<script>window.addEventListener('load', function () {{ var pre = document.createElement('pre'); \
         pre.id = 'probe'; pre.textContent = JSON.stringify((function () {{ {script} }})()); \
         document.body.appendChild(pre); }});</script></body>"
    );
    let probed = dir.join("probed.html");
    std::fs::write(&probed, text.replace("</body>", &probe)).unwrap();
    let (dom, log) = browse(
        dir,
        &["--dump-dom", "--virtual-time-budget=5000"],
        &format!("file://{}", probed.display()),
    );
    let json = probe_output(&dom);
    let value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    (
        value,
        console_errors(&log).into_iter().map(String::from).collect(),
    )
}

/// The text a probe script left in `<pre id="probe">` of a dumped DOM, unescaped.
pub fn probe_output(dom: &str) -> String {
    let start =
        dom.rfind("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

pub fn scalebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        // Results a run keeps go to the build's scratch space, not the user's state directory.
        .env(
            "SCALEBENCH_STATE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("state"),
        )
        // Tables fit the width a terminal exports; the tests read them at the default 100.
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Sends `sig` to process `pid` (a process or a process group, negative, this test started);
/// whether it was there to receive it.
pub fn signal(pid: i32, sig: Signal) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig).is_ok()
}

/// A saturation search's steps in a second each, 100 ms sections, one run per step, 200 ms between
/// runs, no /proc monitor: what a test of the search's logic (not of the machine) needs.
pub const QUICK_SEARCH: [&str; 11] = [
    "--duration",
    "1s",
    "--interval",
    "100ms",
    "--warmup",
    "200ms",
    "--max-repeats",
    "1",
    "--step-pause",
    "200ms",
    "--no-monitor",
];

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `scalebench report RESULT -o HTML`: the page written.
pub fn report_page(result: &Path, html: &Path) -> String {
    let rep = scalebench(&[
        "report",
        result.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    std::fs::read_to_string(html).unwrap()
}

/// `scalebench results show NAME --results FILE`: what it prints, its words joined by single
/// spaces (its notes are wrapped within 100 columns: a phrase may span two lines).
pub fn results_show(name: &str, results: &Path) -> String {
    let o = scalebench(&[
        "results",
        "show",
        name,
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    words(&String::from_utf8_lossy(&o.stdout))
}

/// A text's words joined by single spaces: what a wrapped line says, wherever it was wrapped (a
/// run summary's heading wraps within 100 columns).
pub fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs the binary, killing it if it has not ended within `limit` (the test then fails naming the
/// command): for tests of something that used to hang.
pub fn scalebench_within(args: &[&str], limit: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("scalebench {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A temporary directory whose clusters (`clusters/<name>`) take their servers' directories with
/// them when it goes: run as root, servers keep their files elsewhere, linked from the cluster
/// directory (see `scalebench_deploy::account`), and `cluster down` keeps data for inspection.
pub struct TestDir(tempfile::TempDir);

pub fn test_dir() -> TestDir {
    TestDir(tempfile::tempdir().unwrap())
}

impl TestDir {
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if let Ok(clusters) = std::fs::read_dir(self.path().join("clusters")) {
            for cluster in clusters.flatten() {
                let _ = scalebench_deploy::account::remove_relocated_servers(&cluster.path());
            }
        }
    }
}

/// `scalebench experiment FILE --results DIR/results.db --clusters-dir DIR/clusters` (the files
/// beside the experiment file); returns the output and the results database's path.
pub fn experiment_in(dir: &Path, file: &Path) -> (Output, std::path::PathBuf) {
    let results = dir.join("results.db");
    let o = experiment_command(dir, file, &results)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o, results)
}

/// The command `experiment_in` runs, for tests that start it themselves.
pub fn experiment_command(dir: &Path, file: &Path, results: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scalebench"));
    c.arg("experiment")
        .arg(file)
        .arg("--results")
        .arg(results)
        .arg("--clusters-dir")
        .arg(dir.join("clusters"));
    c
}

/// HdrHistogram's own `HistogramLogProcessor` (Maven Central's jar, fetched by scripts/test.sh) on
/// the interval log `log`, its output beside it in `dir`: the summary line of its histogram,
/// `#[Max = 0.097, Total count = 987]`, and a reader of its fields (milliseconds, counts).
pub fn hdr_log_summary(log: &Path, dir: &Path) -> HdrSummary {
    let jar = std::path::PathBuf::from(std::env::var("HOME").unwrap())
        .join(".m2/repository/org/hdrhistogram/HdrHistogram/2.1.12/HdrHistogram-2.1.12.jar");
    assert!(
        jar.exists(),
        "{} is missing: run scripts/test.sh",
        jar.display()
    );
    let prefix = dir.join("hlp");
    let p = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .arg("-i")
        .arg(log)
        .arg("-o")
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(p.status.success() && p.stderr.is_empty(), "{}", stderr(&p));
    let hgrm = std::fs::read_to_string(prefix.with_extension("hgrm")).unwrap();
    HdrSummary(
        hgrm.lines()
            .find(|l| l.starts_with("#[Max"))
            .unwrap()
            .to_string(),
    )
}

/// The summary line of a `HistogramLogProcessor` histogram.
pub struct HdrSummary(pub String);

impl HdrSummary {
    /// A field of it: `Max` (ms), `Total count`.
    pub fn field(&self, name: &str) -> f64 {
        let after = self.0.split(name).nth(1).unwrap();
        after
            .trim_start_matches([' ', '='])
            .split([',', ']'])
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

/// An etcd on loopback for a test (it stops when dropped).
pub fn etcd_server() -> scalebench_deploy::etcd::EtcdServer {
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-servers");
    std::fs::create_dir_all(&base).unwrap();
    scalebench_deploy::etcd::EtcdServer::start(&base, true).expect("etcd starts")
}

/// The processes `pid` started, from any of its threads (a launcher's client processes).
#[allow(dead_code)]
pub fn children_of(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    let mut pids: Vec<u32> = tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    // In the order they were started.
    pids.sort();
    pids
}

/// Starts `command` in the background, its input closed and both outputs piped for the test to
/// read.
pub fn spawn_piped(command: &mut Command) -> std::process::Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The independent checker (tools/history-check: Porcupine, built here with Go) on a probe's
/// history: its report (`reads`, `stale_reads`, `linearizable`, ...).
#[allow(dead_code)]
pub fn history_check(history: &Path, dir: &Path) -> serde_json::Value {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/history-check");
    let checker = dir.join("history-check");
    let built = Command::new("go")
        .args(["build", "-o", checker.to_str().unwrap(), "."])
        .current_dir(&tool)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let checked = Command::new(&checker).arg(history).output().unwrap();
    serde_json::from_slice(&checked.stdout).unwrap()
}

/// Issue 43: a run phase's intervals (`--interval 2s`) each completed what the profile asked for
/// them (its integral over the interval), within 2%; and the result names the profile and its mean.
pub fn assert_follows_the_profile(result: &serde_json::Value, profile: &str, window_s: f64) {
    let p = scalebench_workload::rate::RateProfile::parse(profile).unwrap();
    assert_eq!(
        result["parameters"]["rate_profile"], profile,
        "{}",
        result["parameters"]
    );
    let target = result["parameters"]["target_ops_s"].as_f64().unwrap();
    assert!(
        (target - p.mean_over(Duration::from_secs_f64(window_s))).abs() < 1e-6,
        "{target}"
    );
    let phase = &result["phases"][0];
    let intervals = phase["intervals"].as_array().unwrap();
    assert_eq!(intervals.len() as f64, window_s / 2.0, "{intervals:?}");
    for i in intervals {
        let start = i["start_s"].as_f64().unwrap();
        let done: u64 = i["operations"]
            .as_object()
            .unwrap()
            .values()
            .map(|o| o["ok"].as_u64().unwrap() + o["failed"].as_u64().unwrap())
            .sum();
        let asked = p.arrivals_by(start + 2.0) - p.arrivals_by(start);
        assert!(
            (done as f64 - asked).abs() <= 0.02 * asked,
            "from {start} s: {done} done, {asked} asked by {profile}"
        );
    }
}
