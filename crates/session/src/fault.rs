//! Faults injected into a deployment's nodes beside a run phase, to make staleness visible on one
//! machine where every replica is otherwise fast (issue 32, docs/consistency.md). A pause is
//! Jepsen's pause nemesis: SIGSTOP to the node's processes, SIGCONT after a while, over and over.
//! The node keeps its connections and its place in the cluster; it simply stops answering and
//! applying, then catches up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use scalebench_deploy::ProcessRef;
use scalebench_measure::result::FaultWindow;
use serde::{Deserialize, Serialize};

use crate::error::SessionError;

pub use scalebench_measure::result::FaultKind;

/// `pause:NODE[,every=DURATION][,for=DURATION]`: pause NODE for `for` once every `every`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultRequest {
    /// The node's id in the deployment (`node2`).
    pub node: String,
    /// From one pause's start to the next one's.
    pub every: Duration,
    /// How long each pause lasts.
    pub pause: Duration,
}

/// A pause every second, for a fifth of it: long beside a loopback round trip, short beside a
/// failure detector's timeout (Cassandra's phi, etcd's election), so the node stays a member.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(1);
pub const DEFAULT_PAUSE: Duration = Duration::from_millis(200);
/// The shortest pause (its period at least twice that).
pub const MIN_PAUSE: Duration = Duration::from_millis(1);

impl FaultRequest {
    /// Parses `--fault`'s value; the error names the bad part.
    pub fn parse(text: &str) -> Result<FaultRequest, String> {
        let bad = |why: &str| format!("invalid --fault '{text}': {why}");
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| bad("expected pause:NODE[,every=DURATION][,for=DURATION]"))?;
        let mut parts = rest.split(',');
        let node = parts.next().unwrap_or_default().trim();
        let (mut every, mut pause) = (None, None);
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(&format!("'{part}' is not every=DURATION or for=DURATION")))?;
            let duration = humantime::parse_duration(value.trim())
                .map_err(|_| bad(&format!("'{value}' is not a duration (e.g. 200ms, 1s)")))?;
            let slot = match key.trim() {
                "every" => &mut every,
                "for" => &mut pause,
                other => return Err(bad(&format!("unknown setting '{other}' (every, for)"))),
            };
            if slot.replace(duration).is_some() {
                return Err(bad(&format!("'{}' is given twice", key.trim())));
            }
        }
        let (every, pause) = (
            every.unwrap_or(DEFAULT_EVERY),
            pause.unwrap_or(DEFAULT_PAUSE),
        );
        let kind: FaultKind = kind.parse().map_err(|why: String| bad(&why))?;
        FaultRequest::new(kind, node, every, pause).map_err(|why| bad(&why))
    }

    /// A fault of `kind` on `node`: a pause of `pause` once every `every`.
    pub fn new(
        kind: FaultKind,
        node: &str,
        every: Duration,
        pause: Duration,
    ) -> Result<Self, String> {
        let FaultKind::Pause = kind;
        if node.is_empty() || node.contains(['=', ',', ':']) {
            return Err("name the node to pause first (pause:node2)".into());
        }
        if pause.is_zero() || pause >= every {
            return Err("a pause must last longer than 0 and less than its period".into());
        }
        // Below a millisecond, SIGSTOP and SIGCONT to a process tree take longer than the pause.
        if pause < MIN_PAUSE || every < MIN_PAUSE * 2 {
            return Err(
                "a pause lasts at least 1ms and its period at least 2ms (signalling a node's processes takes that long)"
                    .into(),
            );
        }
        if every > Duration::from_secs(3600) {
            return Err("a period longer than an hour is no periodic fault".into());
        }
        Ok(FaultRequest {
            node: node.to_string(),
            every,
            pause,
        })
    }

    /// Each fault with the running process of the node it acts on; bad input when one names no
    /// node of `cluster` (checked before anything runs).
    pub fn victims(
        faults: &[FaultRequest],
        cluster: Option<&scalebench_deploy::Cluster>,
    ) -> Result<Vec<(FaultRequest, ProcessRef)>, SessionError> {
        faults
            .iter()
            .map(|f| Ok((f.clone(), f.process(cluster)?)))
            .collect()
    }

    /// The running process of the node this fault acts on; bad input when there is none.
    pub fn process(
        &self,
        cluster: Option<&scalebench_deploy::Cluster>,
    ) -> Result<ProcessRef, SessionError> {
        let cluster = cluster.ok_or_else(|| {
            SessionError::Usage(format!(
                "--fault pause:{} acts on a deployment's node: give --deployment",
                self.node
            ))
        })?;
        let node = cluster
            .state
            .nodes
            .iter()
            .find(|n| n.id == self.node)
            .ok_or_else(|| {
                let ids: Vec<&str> = cluster.state.nodes.iter().map(|n| n.id.as_str()).collect();
                SessionError::Usage(format!(
                    "--fault: no node '{}' in deployment {} (its nodes: {})",
                    self.node,
                    cluster.name(),
                    ids.join(", ")
                ))
            })?;
        node.process.filter(ProcessRef::is_running).ok_or_else(|| {
            SessionError::Usage(format!(
                "--fault: node '{}' of {} is not running",
                self.node,
                cluster.name()
            ))
        })
    }
}

/// The processes a nemesis holds stopped right now: resumed by [`resume_all`] when the process
/// must end at once (a third Ctrl-C), so no node outlives scalebench in SIGSTOP.
static PAUSED: std::sync::Mutex<Vec<ProcessRef>> = std::sync::Mutex::new(Vec::new());

fn paused() -> std::sync::MutexGuard<'static, Vec<ProcessRef>> {
    PAUSED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set by [`resume_all`]: no fault pauses a node after it (the process is about to exit).
static ABORTING: AtomicBool = AtomicBool::new(false);

/// Resumes every node a fault holds stopped, and lets no fault pause one again (before an
/// immediate exit). Pausing and resuming happen under the same lock, so none slips between.
pub fn resume_all() {
    let mut held = paused();
    ABORTING.store(true, Ordering::SeqCst);
    for p in held.drain(..) {
        p.resume();
    }
}

/// When the phase's measurement window opened: told by the executor ([`scalebench_exec::Progress::measurement_starts`]),
/// read by the faults, whose pauses are timed from it.
pub use scalebench_exec::MeasurementStart;

/// The faults of one phase, each on a thread of its own, from a period after the measurement start
/// until the phase ends.
pub struct Nemesis {
    done: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<Vec<(String, SystemTime, SystemTime)>>>,
}

impl Nemesis {
    pub fn start(faults: &[(FaultRequest, ProcessRef)], measuring: &MeasurementStart) -> Nemesis {
        let done = Arc::new(AtomicBool::new(false));
        let threads = faults
            .iter()
            .cloned()
            .map(|(fault, process)| {
                let done = done.clone();
                let measuring = measuring.clone();
                std::thread::spawn(move || pause_periodically(&fault, process, &measuring, &done))
            })
            .collect();
        Nemesis { done, threads }
    }

    /// Ends the faults: each thread resumes its node and stops (within 10 ms).
    pub fn stop(&self) {
        self.done.store(true, Ordering::Relaxed);
    }

    /// Stops the faults (every paused node resumed) and returns when each acted, on the timeline of
    /// a phase whose measurement began at `start_unix_ms`.
    pub fn finish(mut self, start_unix_ms: u64) -> Vec<FaultWindow> {
        self.stop();
        let since_start = |t: SystemTime| {
            let ms = t
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0;
            (ms - start_unix_ms as f64) / 1000.0
        };
        let mut windows: Vec<FaultWindow> = self
            .threads
            .drain(..)
            .flat_map(|t| t.join().unwrap_or_default())
            .map(|(node, start, end)| FaultWindow {
                kind: FaultKind::Pause,
                node,
                start_s: since_start(start),
                end_s: since_start(end),
            })
            .collect();
        windows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        windows
    }
}

/// A phase that fails or panics still ends its faults, and waits until each node is resumed.
impl Drop for Nemesis {
    fn drop(&mut self) {
        self.stop();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Sleeps until `until` or until `done`, in short steps so the phase's end is not held up.
fn sleep_until(until: Instant, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(10)));
    }
}

fn pause_periodically(
    fault: &FaultRequest,
    process: ProcessRef,
    measuring: &MeasurementStart,
    done: &AtomicBool,
) -> Vec<(String, SystemTime, SystemTime)> {
    /// Resumes the node however this thread ends: a node left stopped would hang the cluster.
    struct Resume(ProcessRef);
    impl Drop for Resume {
        fn drop(&mut self) {
            let mut held = paused();
            self.0.resume();
            held.retain(|p| *p != self.0);
        }
    }
    let _resume = Resume(process);
    let mut windows = Vec::new();
    // The first pause a period after the measurement start (once the phase says when that is):
    // connecting and the warm-up run on a healthy cluster.
    let start = loop {
        if done.load(Ordering::Relaxed) {
            return windows;
        }
        if let Some(t) = measuring.get() {
            break *t;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut next = start + fault.every - fault.pause;
    loop {
        sleep_until(next, done);
        if done.load(Ordering::Relaxed) {
            return windows;
        }
        let started = SystemTime::now();
        {
            let mut held = paused();
            if ABORTING.load(Ordering::SeqCst) {
                return windows;
            }
            held.push(process);
            process.pause();
        }
        sleep_until(Instant::now() + fault.pause, done);
        {
            let mut held = paused();
            process.resume();
            held.retain(|p| *p != process);
        }
        windows.push((fault.node.clone(), started, SystemTime::now()));
        next += fault.every;
        // A schedule that fell behind (a slow resume) skips what it missed rather than pausing
        // back to back: whole periods at once, never a loop that a short period cannot finish.
        let behind = Instant::now().saturating_duration_since(next);
        if !behind.is_zero() {
            let periods = (behind.as_nanos() / fault.every.as_nanos()) as u32 + 1;
            next += fault.every * periods;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_parsed_with_its_defaults_and_bad_ones_are_named() {
        let f = FaultRequest::parse("pause:node2").unwrap();
        assert_eq!(
            (f.node.as_str(), f.every, f.pause),
            ("node2", DEFAULT_EVERY, DEFAULT_PAUSE)
        );
        let f = FaultRequest::parse("pause:node3,every=500ms,for=100ms").unwrap();
        assert_eq!(
            (f.every, f.pause),
            (Duration::from_millis(500), Duration::from_millis(100))
        );
        for (bad, named) in [
            ("crash:node1", "'crash'"),
            ("pause", "pause:NODE"),
            ("pause:", "name the node"),
            ("pause:every=1s", "name the node"),
            ("pause:node1,every=soon", "'soon'"),
            ("pause:node1,lasting=1s", "'lasting'"),
            ("pause:node1,every=100ms,for=100ms", "less than its period"),
            ("pause:node1,for=0s", "longer than 0"),
            ("pause:node1,every=2ns,for=1ns", "at least 1ms"),
            ("pause:node1,every=1s,every=2s", "'every' is given twice"),
            ("pause:node1,every=2h,for=1s", "an hour"),
        ] {
            let e = FaultRequest::parse(bad).unwrap_err();
            assert!(e.contains(named) && e.contains(bad), "{bad}: {e}");
        }
    }

    /// The nemesis stops and resumes a real process on schedule, and leaves it running.
    #[test]
    fn a_paused_process_is_stopped_then_resumed_and_the_windows_are_recorded() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let process = ProcessRef::of(child.id()).unwrap();
        let state = || {
            std::fs::read_to_string(format!("/proc/{}/stat", child.id()))
                .unwrap()
                .rsplit(')')
                .next()
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .to_string()
        };
        let fault = FaultRequest::parse("pause:node1,every=200ms,for=100ms").unwrap();
        let start_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let measuring = MeasurementStart::default();
        let _ = measuring.set(Instant::now());
        let nemesis = Nemesis::start(&[(fault, process)], &measuring);
        let deadline = Instant::now() + Duration::from_secs(5);
        while state() != "T" {
            assert!(Instant::now() < deadline, "never stopped");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Ends within a pause: the process is resumed all the same.
        let windows = nemesis.finish(start_ms);
        assert_ne!(state(), "T");
        assert!(!windows.is_empty());
        for w in &windows {
            assert_eq!((w.kind.name(), w.node.as_str()), ("pause", "node1"));
            assert!(w.start_s >= 0.0 && w.end_s > w.start_s, "{w:?}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
