//! Raw counters from /proc, read once per sample. Counters are cumulative; `sample.rs` turns two
//! readings into rates.

use std::collections::HashMap;

use nix::unistd::{sysconf, SysconfVar};

/// Clock ticks per second (USER_HZ) for /proc CPU times.
pub fn ticks_per_second() -> f64 {
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    }
}

pub fn page_size() -> u64 {
    match sysconf(SysconfVar::PAGE_SIZE) {
        Ok(Some(p)) if p > 0 => p as u64,
        _ => 4096,
    }
}

/// Host counters.
#[derive(Debug, Clone, Default)]
pub struct HostCounters {
    /// Ticks: user (incl. nice), system (incl. irq, softirq), idle, iowait, steal.
    pub user: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
    pub mem_total: u64,
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_free: u64,
    /// Pages swapped in and out since boot.
    pub swap_in: u64,
    pub swap_out: u64,
    /// Bytes over all interfaces but loopback, and over loopback (local clusters talk over it).
    pub net_rx: u64,
    pub net_tx: u64,
    pub lo_rx: u64,
    pub lo_tx: u64,
    /// Per whole disk: (sectors read, sectors written, ms spent doing I/O).
    pub disks: HashMap<String, (u64, u64, u64)>,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

pub fn host() -> HostCounters {
    let mut h = HostCounters::default();
    if let Some(cpu) = read("/proc/stat").lines().find(|l| l.starts_with("cpu ")) {
        let v: Vec<u64> = cpu
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal
        h.user = at(0) + at(1);
        h.system = at(2) + at(5) + at(6);
        h.idle = at(3);
        h.iowait = at(4);
        h.steal = at(7);
    }
    for l in read("/proc/meminfo").lines() {
        let mut f = l.split_whitespace();
        let (Some(k), Some(v)) = (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "MemTotal:" => h.mem_total = v * 1024,
            "MemAvailable:" => h.mem_available = v * 1024,
            "SwapTotal:" => h.swap_total = v * 1024,
            "SwapFree:" => h.swap_free = v * 1024,
            _ => {}
        }
    }
    for l in read("/proc/vmstat").lines() {
        let mut f = l.split_whitespace();
        match (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) {
            (Some("pswpin"), Some(v)) => h.swap_in = v,
            (Some("pswpout"), Some(v)) => h.swap_out = v,
            _ => {}
        }
    }
    for l in read("/proc/net/dev").lines().skip(2) {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let (rx, tx) = (
            v.first().copied().unwrap_or(0),
            v.get(8).copied().unwrap_or(0),
        );
        if name.trim() == "lo" {
            h.lo_rx += rx;
            h.lo_tx += tx;
        } else {
            h.net_rx += rx;
            h.net_tx += tx;
        }
    }
    for l in read("/proc/diskstats").lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 13 {
            continue;
        }
        let name = f[2];
        // Whole disks only: partitions would count their I/O twice.
        if !std::path::Path::new(&format!("/sys/block/{name}")).exists()
            || name.starts_with("loop")
            || name.starts_with("ram")
        {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        h.disks.insert(name.to_string(), (n(5), n(9), n(12)));
    }
    h
}

/// One process: parent, CPU ticks, resident memory, threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcCounters {
    pub ppid: u32,
    pub cpu_ticks: u64,
    pub rss_bytes: u64,
    pub threads: u64,
}

/// Every process on the host, in one pass over /proc (I/O is read separately, for watched trees
/// only: /proc/<pid>/io of every process would cost more than the rest together).
pub fn processes() -> HashMap<u32, ProcCounters> {
    let page = page_size();
    let mut all = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return all;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // rest starts at field 3 (state): ppid is field 4, utime 14, stime 15, threads 20, rss 24.
        let n = |field: usize| {
            f.get(field - 3)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        all.insert(
            pid,
            ProcCounters {
                ppid: n(4) as u32,
                cpu_ticks: n(14) + n(15),
                rss_bytes: n(24) * page,
                threads: n(20),
            },
        );
    }
    all
}

/// Bytes a process read from and wrote to storage (/proc/<pid>/io; needs the same user or root).
pub fn io(pid: u32) -> (u64, u64) {
    let mut r = (0, 0);
    for l in read(&format!("/proc/{pid}/io")).lines() {
        if let Some(v) = l.strip_prefix("read_bytes: ") {
            r.0 = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = l.strip_prefix("write_bytes: ") {
            r.1 = v.trim().parse().unwrap_or(0);
        }
    }
    r
}

/// `root` and all its descendants.
pub fn tree(all: &HashMap<u32, ProcCounters>, root: u32) -> Vec<u32> {
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(all.iter().filter(|(_, c)| c.ppid == p).map(|(pid, _)| *pid));
        i += 1;
    }
    found.retain(|p| all.contains_key(p));
    found
}

/// The summed speed of the physical network interfaces that are up, in bytes per second; None when
/// none reports one (virtual NICs often say -1).
pub fn link_capacity_bytes_s() -> Option<f64> {
    let mut total_mbit = 0u64;
    for entry in std::fs::read_dir("/sys/class/net").ok()?.flatten() {
        let dir = entry.path();
        let up = read(&dir.join("operstate").display().to_string()).trim() == "up";
        if !up || !dir.join("device").exists() {
            continue;
        }
        if let Ok(mbit) = read(&dir.join("speed").display().to_string())
            .trim()
            .parse::<u64>()
        {
            total_mbit += mbit;
        }
    }
    (total_mbit > 0).then(|| total_mbit as f64 * 1e6 / 8.0)
}
