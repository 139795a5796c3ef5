//! Resource monitoring from /proc, once a second by default, on a thread of its own: host CPU (user,
//! system, iowait, steal), memory, swap, network and disk I/O, and per watched process (with all its
//! descendants, e.g. PostgreSQL's backends) CPU, resident memory and storage I/O. From a series,
//! [`verdict`] tells which resource of which process or host saturated: the "bounded by" verdict.

mod bounded;
mod procfs;
pub mod stream;
pub mod verdict;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use bounded::{BoundedSeries, MAX_SAMPLES};
pub use stream::{RemoteMonitor, RemoteResources};
pub use verdict::{combined_verdict, verdict, Bound, Verdict};

/// A process to watch, named for the verdict (`client`, `node1`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub pid: u32,
    /// Threads that can run at once (the client's worker threads); `None`: as many as it has.
    pub parallelism: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    /// Shares of all CPU time in the interval (0..1 each).
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub cpu_iowait: f64,
    pub cpu_steal: f64,
    pub cpu_idle: f64,
    pub mem_used_bytes: u64,
    pub swap_used_bytes: u64,
    /// Pages per second.
    pub swap_in_s: f64,
    pub swap_out_s: f64,
    /// Bytes per second over real interfaces, and over loopback.
    pub net_rx_s: f64,
    pub net_tx_s: f64,
    pub loopback_s: f64,
    pub disk_read_s: f64,
    pub disk_write_s: f64,
    /// Share of the interval the busiest disk was doing I/O (0..1), and its name.
    pub disk_busy: f64,
    pub busiest_disk: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub name: String,
    /// CPU in cores (1.0 = one core fully busy), over the process and its descendants.
    pub cpu_cores: f64,
    pub rss_bytes: u64,
    pub threads: u64,
    pub read_s: f64,
    pub write_s: f64,
    /// False once the process is gone.
    pub alive: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the series started (end of the sampled interval).
    pub t_s: f64,
    pub host: HostSample,
    pub processes: Vec<ProcessSample>,
}

/// A run's resource series, on the same wall clock as the run's intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSeries {
    pub start_unix_ms: u64,
    pub interval_s: f64,
    pub cores: usize,
    pub mem_total_bytes: u64,
    /// Capacity of the host's network links, bytes per second in each direction: the sum over its
    /// physical interfaces that are up and report a speed, or given (`scalebench monitor
    /// --link-mbit`); absent when unknown (a virtual NIC often reports none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bytes_s: Option<f64>,
    pub targets: Vec<Target>,
    pub samples: Vec<Sample>,
}

/// Samples in the background until stopped.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<ResourceSeries>>,
}

/// Called with the series so far and each new sample; returning false stops the monitor.
pub type SampleSink = Box<dyn FnMut(&ResourceSeries, &Sample) -> bool + Send>;

impl Monitor {
    pub fn start(targets: Vec<Target>, interval: Duration) -> Monitor {
        Self::start_with(targets, interval, None, None)
    }

    /// Also hands every sample to `sink` as it is taken (`scalebench monitor --stream`); `link_bytes_s`
    /// replaces the links' detected capacity.
    pub fn start_with(
        targets: Vec<Target>,
        interval: Duration,
        sink: Option<SampleSink>,
        link_bytes_s: Option<f64>,
    ) -> Monitor {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let link = link_bytes_s.or_else(procfs::link_capacity_bytes_s);
        let handle = std::thread::Builder::new()
            .name("scalebench-monitor".into())
            .spawn(move || sample_until(targets, interval, link, &flag, sink))
            .expect("monitor thread starts");
        Monitor {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling (after at most one interval) and returns the series.
    pub fn finish(mut self) -> ResourceSeries {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

struct ProcState {
    cpu_ticks: u64,
    read: u64,
    write: u64,
}

/// A watched process tree's counters, resident bytes and threads; None once it is gone.
type TreeReading = Option<(ProcState, u64, u64)>;

fn read_targets(targets: &[Target]) -> (procfs::HostCounters, Vec<TreeReading>) {
    let host = procfs::host();
    let all = procfs::processes();
    let procs = targets
        .iter()
        .map(|t| {
            all.get(&t.pid)?;
            let mut s = ProcState {
                cpu_ticks: 0,
                read: 0,
                write: 0,
            };
            let (mut rss, mut threads) = (0, 0);
            for pid in procfs::tree(&all, t.pid) {
                let c = all[&pid];
                s.cpu_ticks += c.cpu_ticks;
                rss += c.rss_bytes;
                threads += c.threads;
                let (r, w) = procfs::io(pid);
                s.read += r;
                s.write += w;
            }
            Some((s, rss, threads))
        })
        .collect();
    (host, procs)
}

fn sample_until(
    targets: Vec<Target>,
    interval: Duration,
    link_bytes_s: Option<f64>,
    stop: &AtomicBool,
    mut sink: Option<SampleSink>,
) -> ResourceSeries {
    let hz = procfs::ticks_per_second();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = Instant::now();
    let start_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (mut prev_host, mut prev_procs) = read_targets(&targets);
    let mut prev_t = start;
    let mut series = BoundedSeries::new(ResourceSeries {
        start_unix_ms,
        interval_s: interval.as_secs_f64(),
        cores,
        mem_total_bytes: prev_host.mem_total,
        link_bytes_s,
        targets: targets.clone(),
        samples: Vec::new(),
    });
    let mut next = start + interval;
    loop {
        // Sleep in short steps so `finish` returns promptly; on stop, one last (shorter) interval is
        // sampled, so a phase shorter than the interval still has a sample.
        let stopping = stop.load(Ordering::Relaxed);
        let now = Instant::now();
        if !stopping && now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        if stopping && now.duration_since(prev_t) < Duration::from_millis(100) {
            break;
        }
        next += interval;
        let t = Instant::now();
        let dt = t.duration_since(prev_t).as_secs_f64().max(1e-3);
        let (host, procs) = read_targets(&targets);
        let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
        let total = d(host.user, prev_host.user)
            + d(host.system, prev_host.system)
            + d(host.idle, prev_host.idle)
            + d(host.iowait, prev_host.iowait)
            + d(host.steal, prev_host.steal);
        let share = |a: u64, b: u64| if total > 0.0 { d(a, b) / total } else { 0.0 };
        let (mut busiest, mut busy) = (String::new(), 0.0);
        let (mut rd, mut wr) = (0.0, 0.0);
        for (name, (r, w, ms)) in &host.disks {
            if let Some((pr, pw, pms)) = prev_host.disks.get(name) {
                rd += d(*r, *pr) * 512.0 / dt;
                wr += d(*w, *pw) * 512.0 / dt;
                let b = (d(*ms, *pms) / 1000.0 / dt).min(1.0);
                if b > busy {
                    busy = b;
                    busiest = name.clone();
                }
            }
        }
        let hs = HostSample {
            cpu_user: share(host.user, prev_host.user),
            cpu_system: share(host.system, prev_host.system),
            cpu_iowait: share(host.iowait, prev_host.iowait),
            cpu_steal: share(host.steal, prev_host.steal),
            cpu_idle: share(host.idle, prev_host.idle),
            mem_used_bytes: host.mem_total.saturating_sub(host.mem_available),
            swap_used_bytes: host.swap_total.saturating_sub(host.swap_free),
            swap_in_s: d(host.swap_in, prev_host.swap_in) / dt,
            swap_out_s: d(host.swap_out, prev_host.swap_out) / dt,
            net_rx_s: d(host.net_rx, prev_host.net_rx) / dt,
            net_tx_s: d(host.net_tx, prev_host.net_tx) / dt,
            loopback_s: d(host.lo_rx, prev_host.lo_rx) / dt,
            disk_read_s: rd,
            disk_write_s: wr,
            disk_busy: busy,
            busiest_disk: busiest,
        };
        let ps = targets
            .iter()
            .zip(procs.iter().zip(&prev_procs))
            .map(|(target, (now, before))| match (now, before) {
                (Some((s, rss, threads)), Some((p, _, _))) => ProcessSample {
                    name: target.name.clone(),
                    cpu_cores: d(s.cpu_ticks, p.cpu_ticks) / hz / dt,
                    rss_bytes: *rss,
                    threads: *threads,
                    read_s: d(s.read, p.read) / dt,
                    write_s: d(s.write, p.write) / dt,
                    alive: true,
                },
                _ => ProcessSample {
                    name: target.name.clone(),
                    alive: now.is_some(),
                    ..Default::default()
                },
            })
            .collect();
        let sample = Sample {
            t_s: t.duration_since(start).as_secs_f64(),
            host: hs,
            processes: ps,
        };
        if let Some(sink) = &mut sink {
            if !sink(series.series(), &sample) {
                stop.store(true, Ordering::Relaxed);
            }
        }
        series.push(sample);
        prev_host = host;
        prev_procs = procs;
        prev_t = t;
        if stopping || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    series.finish()
}
