//! Readings of what this process has spent, taken at the measurement window's start and end
//! ([`ClientCost`]): getrusage(2) for CPU and context switches (every thread of the process), and
//! each TCP socket's `TCP_INFO` for the bytes and segments its connections carried.
//!
//! Bytes come from the sockets, not /proc/self/io: its `rchar`/`wchar` count read(2) and write(2)
//! but not recv(2) and send(2), which is how the runtime reads a socket, and they count file I/O
//! (an embedded database's) as well.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use scalebench_measure::result::cost::{ClientCost, RecordedCost};

/// One reading of the process's spending.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    at: Instant,
    user: Duration,
    system: Duration,
    voluntary: u64,
    involuntary: u64,
    /// Per TCP socket (its descriptor and inode, so a reused descriptor is another socket): its
    /// counters. None where the system gives no TCP_INFO.
    tcp: Option<Sockets>,
}

/// A TCP socket by its descriptor and inode.
type Sockets = HashMap<(RawFd, u64), TcpCounts>;

/// What a TCP socket carried so far: bytes sent (acknowledged) and received, and the segments
/// with data sent and received.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TcpCounts {
    bytes_sent: u64,
    bytes_received: u64,
    segments_sent: u64,
    segments_received: u64,
}

impl TcpCounts {
    /// Each counter the larger of the two (a socket read twice).
    fn max(self, o: TcpCounts) -> TcpCounts {
        TcpCounts {
            bytes_sent: self.bytes_sent.max(o.bytes_sent),
            bytes_received: self.bytes_received.max(o.bytes_received),
            segments_sent: self.segments_sent.max(o.segments_sent),
            segments_received: self.segments_received.max(o.segments_received),
        }
    }

    /// What was carried since `before`, added to `self`.
    fn add_since(&mut self, now: TcpCounts, before: TcpCounts) {
        self.bytes_sent += now.bytes_sent.saturating_sub(before.bytes_sent);
        self.bytes_received += now.bytes_received.saturating_sub(before.bytes_received);
        self.segments_sent += now.segments_sent.saturating_sub(before.segments_sent);
        self.segments_received += now
            .segments_received
            .saturating_sub(before.segments_received);
    }
}

impl Reading {
    pub(crate) fn now() -> Reading {
        Reading::with_sockets(tcp_sockets())
    }

    /// The process's usage now, with the sockets' counters given.
    fn with_sockets(tcp: Option<Sockets>) -> Reading {
        // SAFETY: getrusage writes the struct it is given; a zeroed rusage (what a failed call
        // leaves) reads as nothing spent.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        let time = |t: libc::timeval| {
            Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1_000)
        };
        Reading {
            at: Instant::now(),
            user: time(usage.ru_utime),
            system: time(usage.ru_stime),
            voluntary: usage.ru_nvcsw.max(0) as u64,
            involuntary: usage.ru_nivcsw.max(0) as u64,
            tcp,
        }
    }

    /// What was spent from `start` to this reading, over `operations` operations.
    pub(crate) fn since(&self, start: &Reading, operations: u64) -> ClientCost {
        // A socket opened during the window counts from zero; one closed during it is lost with
        // its counters (connections are made before the window as a rule). A process without a
        // TCP connection reports no bytes rather than zero of them.
        let carried = match (&start.tcp, &self.tcp) {
            (Some(before), Some(after)) if !after.is_empty() => {
                let mut sum = TcpCounts::default();
                for (key, now) in after {
                    sum.add_since(*now, before.get(key).copied().unwrap_or_default());
                }
                Some(sum)
            }
            _ => None,
        };
        ClientCost::derive(
            1,
            RecordedCost {
                window_s: self.at.saturating_duration_since(start.at).as_secs_f64(),
                operations,
                cpu_user_s: self.user.saturating_sub(start.user).as_secs_f64(),
                cpu_system_s: self.system.saturating_sub(start.system).as_secs_f64(),
                voluntary_switches: self.voluntary.saturating_sub(start.voluntary),
                involuntary_switches: self.involuntary.saturating_sub(start.involuntary),
                bytes_sent: carried.map(|c| c.bytes_sent),
                bytes_received: carried.map(|c| c.bytes_received),
                segments_sent: carried.map(|c| c.segments_sent),
                segments_received: carried.map(|c| c.segments_received),
                cores: cores_available(),
            },
        )
    }
}

/// Each TCP socket's counters as last seen: read by each worker thread as its slots end, before it
/// closes their connections (a reading after the workers' end would find them closed).
#[derive(Default)]
pub(crate) struct SocketsSeen(std::sync::Mutex<Sockets>);

impl SocketsSeen {
    /// Reads every TCP socket of the process now, keeping the larger counts of each.
    pub(crate) fn read_now(&self) {
        let Some(now) = tcp_sockets() else { return };
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for (key, counts) in now {
            let c = seen.entry(key).or_default();
            *c = c.max(counts);
        }
    }
}

/// The window's readings: the first taken when the measurement window opens (after the warm-up),
/// the last when the workers are done (their sockets as each worker last saw them).
pub(crate) struct CostWindow {
    opens: Instant,
    start: Option<Reading>,
}

impl CostWindow {
    /// The window opening at `opens`; read at once if nothing runs before it (no warm-up: the
    /// workers wait for the start), else at the first look after it.
    pub(crate) fn new(opens: Instant, read_now: bool) -> CostWindow {
        CostWindow {
            opens,
            start: read_now.then(Reading::now),
        }
    }

    /// Takes the first reading once the window is open; how long the caller may wait before it
    /// must look again (at most `most`).
    pub(crate) fn look(&mut self, most: Duration) -> Duration {
        let now = Instant::now();
        if self.start.is_none() && now >= self.opens {
            self.start = Some(Reading::now());
        }
        match self.start {
            Some(_) => most,
            None => most.min(self.opens - now),
        }
    }

    /// What was spent from the window's opening to now, over `operations` (none if the window
    /// never opened).
    pub(crate) fn finish(self, operations: u64, seen: &SocketsSeen) -> Option<ClientCost> {
        let start = self.start?;
        seen.read_now();
        let seen = seen.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Some(Reading::with_sockets(Some(seen)).since(&start, operations))
    }
}

/// The cores this process may run on (its affinity mask; `taskset` narrows it).
fn cores_available() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// Every TCP socket of this process, with its counters. None without /proc (not Linux).
fn tcp_sockets() -> Option<Sockets> {
    let entries = std::fs::read_dir("/proc/self/fd").ok()?;
    let mut sockets = HashMap::new();
    for e in entries.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<RawFd>().ok()) else {
            continue;
        };
        let Some(inode) = std::fs::read_link(e.path()).ok().and_then(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse::<u64>()
                .ok()
        }) else {
            continue;
        };
        if let Some(counts) = tcp_counts(fd) {
            sockets.insert((fd, inode), counts);
        }
    }
    Some(sockets)
}

/// A TCP socket's counters; None for another kind of socket (a Unix socket, UDP) or a descriptor
/// closed meanwhile.
fn tcp_counts(fd: RawFd) -> Option<TcpCounts> {
    // SAFETY: getsockopt writes at most `len` bytes into the zeroed struct it is given.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    // Kernels before 4.6 return a shorter struct, without these counters. The segment counters
    // are 32 bits: a socket that sent 4 G segments wraps (hours at a million a second).
    let needed = std::mem::offset_of!(libc::tcp_info, tcpi_data_segs_out) + 4;
    (rc == 0 && len as usize >= needed).then_some(TcpCounts {
        bytes_sent: info.tcpi_bytes_acked,
        bytes_received: info.tcpi_bytes_received,
        segments_sent: u64::from(info.tcpi_data_segs_out),
        segments_received: u64::from(info.tcpi_data_segs_in),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A loopback connection that carries known bytes: the readings' difference is those bytes;
    /// CPU spent between them shows as CPU time.
    #[test]
    fn readings_count_a_connections_bytes_and_the_cpu_spent_between_them() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let start = Reading::now();
        client.write_all(&[7u8; 10_000]).unwrap();
        let mut got = vec![0u8; 10_000];
        server.read_exact(&mut got).unwrap();
        server.write_all(&[1u8; 3_000]).unwrap();
        let mut back = vec![0u8; 3_000];
        client.read_exact(&mut back).unwrap();
        // Spend 20 ms of CPU (as getrusage counts it, whatever else the machine runs).
        let mut x = 0u64;
        while Reading::with_sockets(None)
            .since(&start, 1)
            .recorded
            .cpu_user_s
            < 0.02
        {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        // A byte counts as sent once the peer acknowledged it: await the last acknowledgement.
        let mut cost = Reading::now().since(&start, 1_000);
        for _ in 0..200 {
            if cost.recorded.bytes_sent == Some(13_000) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            cost = Reading::now().since(&start, 1_000);
        }
        // Both ends are this process's sockets: each byte is sent by one and received by the other.
        assert_eq!(cost.recorded.bytes_sent, Some(13_000), "{cost:?}");
        assert_eq!(cost.recorded.bytes_received, Some(13_000), "{cost:?}");
        assert_eq!(cost.bytes_per_op, Some(26.0));
        // Each write fits one loopback segment (its MSS is 64 KiB): two sent, two received.
        assert_eq!(cost.recorded.segments_sent, Some(2), "{cost:?}");
        assert_eq!(cost.recorded.segments_received, Some(2), "{cost:?}");
        assert!(cost.recorded.cpu_user_s >= 0.02, "{cost:?}");
        assert!(
            cost.recorded.window_s > 0.0 && cost.recorded.cores >= 1,
            "{cost:?}"
        );
    }

    /// Without a TCP connection there are no bytes to report, rather than zero of them.
    #[test]
    fn a_process_without_tcp_connections_reports_no_bytes() {
        let start = Reading::with_sockets(Some(HashMap::new()));
        let end = Reading::with_sockets(Some(HashMap::new()));
        assert_eq!(end.since(&start, 10).bytes_per_op, None);
    }
}
