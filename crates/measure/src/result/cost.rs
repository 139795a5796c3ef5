//! What the client itself spent over the measurement window (issue 65, item 4): its CPU (user and
//! system), its context switches and the TCP bytes of its connections, and each per operation.
//!
//! Every study ran out of client machine before the cluster; a benchmark whose client is the bound
//! measures itself. memtier now reports its CPU per thread and latte its CPU and context switches
//! per operation; these are the same figures, taken from getrusage(2) (the whole process: every
//! worker thread, the driver's own tasks, the reporter) and from each TCP socket's `TCP_INFO`
//! counters, at the window's start and end. The recorded counts are summed when clients merge; the
//! figures per operation are derived from the sums, in one place ([`ClientCost::derive`]).

use serde::{Deserialize, Serialize};

/// The client's spending over the measurement window, and what it comes to per operation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientCost {
    /// How many client processes it sums (1 for one client; `--clients N` merges N).
    pub clients: u32,
    /// What the window's two readings recorded (in the JSON beside the figures).
    #[serde(flatten)]
    pub recorded: RecordedCost,
    /// Derived ([`ClientCost::derive`]): CPU per operation, microseconds (user + system, and each).
    pub cpu_us_per_op: Option<f64>,
    pub user_us_per_op: Option<f64>,
    pub system_us_per_op: Option<f64>,
    /// Derived: context switches (voluntary and involuntary) per operation.
    pub switches_per_op: Option<f64>,
    /// Derived: TCP bytes sent and received per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_op: Option<f64>,
    /// Derived: TCP data segments sent and received per operation. A request and its reply
    /// without pipelining take two; requests coalesced into one write share a segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments_per_op: Option<f64>,
    /// Derived: cores busy on average over the window (CPU seconds per second), and that as a
    /// share of `cores`.
    pub cores_used: f64,
    pub share_of_cores: f64,
}

/// What the window's two readings recorded, before anything is derived.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RecordedCost {
    /// Seconds between the two readings: the measurement window, to the workers' end.
    pub window_s: f64,
    /// Operations completed in the window (ok and failed) that the spending is divided by.
    pub operations: u64,
    /// CPU time of the client's processes in user mode and in the kernel, seconds.
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// Context switches: voluntary (a thread waited: a socket, a timer) and involuntary (preempted).
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// TCP payload bytes the client's connections sent (acknowledged by the peer) and received;
    /// None where the kernel gave no TCP_INFO (no TCP connection: the embedded and null bindings,
    /// a Unix socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_received: Option<u64>,
    /// TCP segments carrying data that the client's connections sent and received (each
    /// socket's `TCP_INFO`: `tcpi_data_segs_out`, `tcpi_data_segs_in`); None as for the bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments_received: Option<u64>,
    /// The cores the client's processes may run on (their CPU affinity), summed over clients.
    pub cores: u32,
}

impl ClientCost {
    /// Every figure of one client's window, or of clients' windows summed.
    pub fn derive(clients: u32, r: RecordedCost) -> ClientCost {
        let per_op = |x: f64| (r.operations > 0).then(|| x / r.operations as f64);
        let cpu_s = r.cpu_user_s + r.cpu_system_s;
        let cores_used = if r.window_s > 0.0 {
            cpu_s / r.window_s
        } else {
            0.0
        };
        let bytes = add_known(r.bytes_sent, r.bytes_received);
        let segments = add_known(r.segments_sent, r.segments_received);
        ClientCost {
            clients,
            recorded: r,
            cpu_us_per_op: per_op(cpu_s * 1e6),
            user_us_per_op: per_op(r.cpu_user_s * 1e6),
            system_us_per_op: per_op(r.cpu_system_s * 1e6),
            switches_per_op: per_op((r.voluntary_switches + r.involuntary_switches) as f64),
            bytes_per_op: bytes.and_then(|b| per_op(b as f64)),
            segments_per_op: segments.and_then(|n| per_op(n as f64)),
            cores_used,
            share_of_cores: if r.cores > 0 {
                cores_used / r.cores as f64
            } else {
                0.0
            },
        }
    }

    /// The clients' spending summed (their processes ran side by side over one window: the window
    /// is the longest of theirs), every figure derived again from the sums. None when a client
    /// reported none (a result from before this figure): a sum without it would understate.
    pub fn merge(parts: &[Option<ClientCost>]) -> Option<ClientCost> {
        let parts: Vec<ClientCost> = parts.iter().copied().collect::<Option<_>>()?;
        let first = parts.first()?;
        let mut sum = first.recorded;
        let mut clients = first.clients;
        for p in &parts[1..] {
            let r = p.recorded;
            sum.window_s = sum.window_s.max(r.window_s);
            sum.operations += r.operations;
            sum.cpu_user_s += r.cpu_user_s;
            sum.cpu_system_s += r.cpu_system_s;
            sum.voluntary_switches += r.voluntary_switches;
            sum.involuntary_switches += r.involuntary_switches;
            sum.bytes_sent = add_known(sum.bytes_sent, r.bytes_sent);
            sum.bytes_received = add_known(sum.bytes_received, r.bytes_received);
            sum.segments_sent = add_known(sum.segments_sent, r.segments_sent);
            sum.segments_received = add_known(sum.segments_received, r.segments_received);
            sum.cores += r.cores;
            clients += p.clients;
        }
        Some(ClientCost::derive(clients, sum))
    }
}

fn add_known(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(ops: u64, user: f64, system: f64) -> RecordedCost {
        RecordedCost {
            window_s: 2.0,
            operations: ops,
            cpu_user_s: user,
            cpu_system_s: system,
            voluntary_switches: ops / 2,
            involuntary_switches: 10,
            bytes_sent: Some(ops * 40),
            bytes_received: Some(ops * 60),
            segments_sent: Some(ops),
            segments_received: Some(ops / 10),
            cores: 2,
        }
    }

    #[test]
    fn figures_per_operation_are_the_window_s_spending_divided_by_its_operations() {
        let c = ClientCost::derive(1, recorded(100_000, 1.5, 0.5));
        assert_eq!(c.cpu_us_per_op, Some(20.0));
        assert_eq!(c.user_us_per_op, Some(15.0));
        assert_eq!(c.system_us_per_op, Some(5.0));
        assert_eq!(c.switches_per_op, Some(50_010.0 / 100_000.0));
        assert_eq!(c.bytes_per_op, Some(100.0));
        assert_eq!(c.segments_per_op, Some(1.1));
        assert_eq!((c.cores_used, c.share_of_cores), (1.0, 0.5));
        let idle = ClientCost::derive(1, recorded(0, 0.0, 0.0));
        assert_eq!((idle.cpu_us_per_op, idle.bytes_per_op), (None, None));
    }

    /// Two clients merged are the sums of their spending, divided by the sum of their operations:
    /// not the mean of their figures per operation (a client that did 1 operation would weigh as
    /// much as one that did 100,000).
    #[test]
    fn merged_clients_divide_summed_spending_by_summed_operations() {
        let a = ClientCost::derive(1, recorded(100_000, 1.5, 0.5));
        let b = ClientCost::derive(1, recorded(300_000, 3.0, 1.0));
        let m = ClientCost::merge(&[Some(a), Some(b)]).unwrap();
        assert_eq!(m.clients, 2);
        assert_eq!(m.recorded.operations, 400_000);
        assert_eq!(m.cpu_us_per_op, Some(6.0e6 / 400_000.0));
        assert_eq!(m.bytes_per_op, Some(100.0));
        assert_eq!(m.segments_per_op, Some(1.1));
        assert_eq!((m.recorded.cores, m.cores_used), (4, 3.0));
        assert_eq!(m, ClientCost::merge(&[Some(m)]).unwrap());
        assert_eq!(ClientCost::merge(&[Some(a), None]), None);
        let no_tcp = ClientCost::derive(
            1,
            RecordedCost {
                bytes_sent: None,
                bytes_received: None,
                segments_sent: None,
                segments_received: None,
                ..recorded(10, 0.1, 0.1)
            },
        );
        assert_eq!((no_tcp.bytes_per_op, no_tcp.segments_per_op), (None, None));
    }
}
