//! The "bounded by" verdict: which resource of which process (or of the host) saturated during a run.
//! The first study derived it by hand from per-machine /proc series; a result bounded by the client
//! is only a lower bound of what the database can do.

use serde::{Deserialize, Serialize};

use crate::ResourceSeries;

/// A resource counts as saturated at 90% of its capacity, on average over the window.
pub const SATURATED: f64 = 0.9;
/// Swapping above this many pages per second means memory is the limit.
pub const SWAPPING_PAGES_S: f64 = 50.0;
/// CPUs waiting for I/O at least this share of all CPU time (and longer than they work) means the
/// run waited on storage: Dijkshoorn's main bound for the relational databases (studies.md,
/// section 1: "CPU, IO-wait, ..."). The study names the rule, not a number: this one is ours.
pub const IOWAIT_BOUND: f64 = 0.25;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The first bound's resource: `cpu`, `disk`, `iowait`, `network`, `memory`, `target` (an open
    /// loop that kept its schedule) or `none`.
    pub resource: String,
    /// The first bound's saturated process (a watched target's name), when one is.
    pub process: Option<String>,
    /// Every bound, as the study wrote them ("CPU and IO-wait and Client CPU"): "cpu of client and
    /// io-wait", "disk vda", "none found".
    pub bounded_by: String,
    /// The client saturated (with whatever else did): the throughput is a lower bound of the
    /// database's.
    pub client_bound: bool,
    /// The figures behind the verdict.
    pub evidence: String,
    /// Each saturated resource, the client's first (Dijkshoorn named every bound of a result,
    /// studies.md section 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Bound>,
}

/// One saturated resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// `cpu`, `disk`, `iowait`, `network`, `memory`, `target`.
    pub resource: String,
    /// The saturated process, when one is (`client` for the load generator).
    pub process: Option<String>,
    /// In words: "cpu of client", "disk vda".
    pub what: String,
    /// It is the client's own resource.
    pub client: bool,
    pub evidence: String,
}

impl Verdict {
    /// Nothing saturated.
    pub fn none(evidence: String) -> Verdict {
        Verdict {
            resource: "none".into(),
            process: None,
            bounded_by: "none found".into(),
            client_bound: false,
            evidence,
            bounds: Vec::new(),
        }
    }

    /// The verdict of `bounds` (the client's first, then in the order found); `context` adds figures
    /// of what did not saturate.
    pub fn of(mut bounds: Vec<Bound>, context: String) -> Verdict {
        if bounds.is_empty() {
            return Verdict::none(context);
        }
        // A saturated client first: whatever else saturated, the result is a lower bound.
        bounds.sort_by_key(|b| !b.client);
        let first = &bounds[0];
        // One bound's evidence follows its name (`bounded by: X (evidence)`); several say whose.
        let mut evidence: Vec<String> = match bounds.as_slice() {
            [one] => vec![one.evidence.clone()],
            all => all
                .iter()
                .map(|b| format!("{}: {}", b.what, b.evidence))
                .collect(),
        };
        if !context.is_empty() {
            evidence.push(context);
        }
        Verdict {
            resource: first.resource.clone(),
            process: first.process.clone(),
            bounded_by: bounds
                .iter()
                .map(|b| b.what.as_str())
                .collect::<Vec<_>>()
                .join(" and "),
            client_bound: bounds.iter().any(|b| b.client),
            evidence: evidence.join("; "),
            bounds,
        }
    }

    /// An open loop that kept the `target` rate it was given (`completed` ops/s succeeded, `late_pct`
    /// of starts more than 1 ms late) was bounded by that target, whatever /proc saw: the client's
    /// busy CPU is then mostly the pacer waiting for the next start, and a database that kept up
    /// was not the limit either. What /proc saw stays in the evidence.
    pub fn target_kept(&self, target: f64, completed: f64, late_pct: f64, unit: &str) -> Verdict {
        Verdict::of(
            vec![Bound {
                resource: "target".into(),
                process: None,
                what: format!("the target rate ({target} {unit}, kept)"),
                client: false,
                evidence: format!(
                    "{completed:.0} {unit} succeeded of {target} offered, {late_pct:.2}% of starts more than 1 ms late"
                ),
            }],
            format!("/proc saw: {} ({})", self.bounded_by, self.evidence),
        )
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    scalebench_stats::mean(&v.collect::<Vec<_>>())
}

/// The verdict over the samples whose interval ends in `window` (seconds of the series; all when
/// `None`). `client` names the target that is the load generator. Every saturated resource is
/// named: memory (swapping), the disk, io-wait, the network, each watched process at its usable
/// cores, and the host's cpu when no single process explains it.
pub fn verdict(series: &ResourceSeries, client: &str, window: Option<(f64, f64)>) -> Verdict {
    let samples: Vec<_> = series
        .samples
        .iter()
        .filter(|s| window.is_none_or(|(a, b)| s.t_s > a && s.t_s <= b + 1e-9))
        .collect();
    if samples.is_empty() {
        return Verdict::none("no samples".into());
    }
    let host_bound = |resource: &str, what: String, evidence: String| Bound {
        resource: resource.into(),
        process: None,
        what,
        client: false,
        evidence,
    };
    let mut bounds = Vec::new();
    let swapping = mean(samples.iter().map(|s| s.host.swap_in_s + s.host.swap_out_s));
    if swapping > SWAPPING_PAGES_S {
        bounds.push(host_bound(
            "memory",
            "memory (swapping)".into(),
            format!("{swapping:.0} pages/s swapped"),
        ));
    }
    let disk = mean(samples.iter().map(|s| s.host.disk_busy));
    if disk >= SATURATED {
        let name = samples
            .last()
            .map_or(String::new(), |s| s.host.busiest_disk.clone());
        bounds.push(host_bound(
            "disk",
            format!("disk {name}"),
            format!("busy {:.0}% of the time", disk * 100.0),
        ));
    }
    let iowait = mean(samples.iter().map(|s| s.host.cpu_iowait));
    let working = mean(
        samples
            .iter()
            .map(|s| 1.0 - s.host.cpu_idle - s.host.cpu_iowait),
    );
    if iowait >= IOWAIT_BOUND && iowait > working {
        bounds.push(host_bound(
            "iowait",
            "io-wait".into(),
            format!(
                "cpus waited for I/O {:.0}% of the time, worked {:.0}%",
                iowait * 100.0,
                working * 100.0
            ),
        ));
    }
    // The network: either direction of the host's links near their capacity (Dijkshoorn's
    // "network" bound, studies.md section 1), when the capacity is known.
    if let Some(link) = series.link_bytes_s.filter(|l| *l > 0.0) {
        let rx = mean(samples.iter().map(|s| s.host.net_rx_s));
        let tx = mean(samples.iter().map(|s| s.host.net_tx_s));
        if rx.max(tx) >= SATURATED * link {
            let mbit = |b: f64| b * 8.0 / 1e6;
            bounds.push(host_bound(
                "network",
                format!("network ({:.0} Mbit/s of links)", mbit(link)),
                format!(
                    "received {:.0} Mbit/s, sent {:.0} Mbit/s of {:.0} Mbit/s",
                    mbit(rx),
                    mbit(tx),
                    mbit(link)
                ),
            ));
        }
    }
    // Per process: CPU against what it can use (its parallelism, at most the host's cores).
    let cores = series.cores.max(1) as f64;
    let mut loads: Vec<(String, f64, f64)> = series
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let used = mean(
                samples
                    .iter()
                    .filter_map(|s| s.processes.get(i))
                    .map(|p| p.cpu_cores),
            );
            let threads = samples
                .iter()
                .filter_map(|s| s.processes.get(i))
                .map(|p| p.threads)
                .max()
                .unwrap_or(1)
                .max(1) as f64;
            let usable = t.parallelism.map_or(threads, f64::from).min(cores);
            (t.name.clone(), used, usable)
        })
        .collect();
    for (name, used, usable) in &loads {
        if *used >= SATURATED * usable {
            bounds.push(Bound {
                resource: "cpu".into(),
                process: Some(name.clone()),
                what: format!("cpu of {name}"),
                client: name == client,
                evidence: format!("{used:.2} of {usable:.0} usable cores"),
            });
        }
    }
    let busy = mean(
        samples
            .iter()
            .map(|s| 1.0 - s.host.cpu_idle - s.host.cpu_iowait),
    );
    loads.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shares = loads
        .iter()
        .map(|(n, u, _)| format!("{n} {u:.2} cores"))
        .collect::<Vec<_>>()
        .join(", ");
    // The host's cpu, when no process at its own limit explains it: name the largest watched
    // consumer only if it holds a real share of the busy cores, else unwatched processes.
    if busy >= SATURATED && !bounds.iter().any(|b| b.resource == "cpu") {
        let top = loads
            .first()
            .filter(|l| l.1 >= 0.25 * busy * cores)
            .map(|l| l.0.clone());
        bounds.push(Bound {
            resource: "cpu".into(),
            what: format!(
                "host cpu (largest share: {})",
                top.as_deref().unwrap_or("unwatched processes")
            ),
            client: top.as_deref() == Some(client),
            process: top,
            evidence: format!("host cpu {:.0}% busy; {shares}", busy * 100.0),
        });
    }
    let context = format!(
        "host cpu {:.0}% busy, busiest disk {:.0}%, {shares}",
        busy * 100.0,
        disk * 100.0
    );
    if bounds.is_empty() {
        return Verdict::none(context);
    }
    Verdict::of(bounds, String::new())
}

/// The run's verdict from the local one (client and local nodes) and those of other hosts' series:
/// every bound of every host, each remote one named with its host; a saturated client comes first.
pub fn combined_verdict(local: Verdict, remotes: &[(String, Verdict)]) -> Verdict {
    let mut bounds = local.bounds.clone();
    for (host, v) in remotes {
        bounds.extend(v.bounds.iter().map(|b| Bound {
            resource: b.resource.clone(),
            process: Some(match &b.process {
                Some(p) => format!("{host}/{p}"),
                None => host.clone(),
            }),
            what: format!("{} on {host}", b.what),
            client: false,
            evidence: b.evidence.clone(),
        }));
    }
    if bounds.is_empty() {
        let mut v = local;
        for (host, r) in remotes {
            v.evidence.push_str(&format!("; {host}: {}", r.evidence));
        }
        return v;
    }
    Verdict::of(bounds, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostSample, ProcessSample, Sample, Target};

    fn series(procs: &[(&str, f64, u64)], idle: f64, disk: f64) -> ResourceSeries {
        ResourceSeries {
            cores: 2,
            targets: procs
                .iter()
                .map(|(n, _, _)| Target {
                    name: n.to_string(),
                    pid: 1,
                    parallelism: None,
                })
                .collect(),
            samples: (1..=5)
                .map(|i| Sample {
                    t_s: i as f64,
                    host: HostSample {
                        cpu_idle: idle,
                        disk_busy: disk,
                        busiest_disk: "vda".into(),
                        ..Default::default()
                    },
                    processes: procs
                        .iter()
                        .map(|(n, cpu, threads)| ProcessSample {
                            name: n.to_string(),
                            cpu_cores: *cpu,
                            threads: *threads,
                            alive: true,
                            ..Default::default()
                        })
                        .collect(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn cpus_mostly_waiting_for_storage_are_an_iowait_bound() {
        let mut s = series(&[("client", 0.2, 2), ("postgres", 0.3, 8)], 0.2, 0.5);
        for sample in &mut s.samples {
            sample.host.cpu_iowait = 0.6;
        }
        let v = verdict(&s, "client", None);
        assert_eq!(v.resource, "iowait", "{v:?}");
        assert!(!v.client_bound);
        // The same waiting beside cpus that work more is not the bound.
        for sample in &mut s.samples {
            sample.host.cpu_iowait = 0.3;
            sample.host.cpu_idle = 0.0;
        }
        assert_ne!(verdict(&s, "client", None).resource, "iowait");
    }

    #[test]
    fn links_near_their_capacity_are_a_network_bound() {
        // 1 Gbit/s of links, 940 Mbit/s sent: the network, ahead of a busy host cpu.
        let mut s = series(&[("client", 0.5, 4), ("node1", 1.0, 40)], 0.05, 0.0);
        s.link_bytes_s = Some(125e6);
        for sample in &mut s.samples {
            sample.host.net_tx_s = 117.5e6;
            sample.host.net_rx_s = 3e6;
        }
        let v = verdict(&s, "client", None);
        assert_eq!(v.resource, "network", "{v:?}");
        // The busy host cpu is named too: every bound.
        assert_eq!(
            v.bounded_by,
            "network (1000 Mbit/s of links) and host cpu (largest share: node1)"
        );
        // Half the capacity is not the bound; an unknown capacity never is.
        for sample in &mut s.samples {
            sample.host.net_tx_s = 60e6;
        }
        assert_ne!(verdict(&s, "client", None).resource, "network");
        s.link_bytes_s = None;
        for sample in &mut s.samples {
            sample.host.net_tx_s = 117.5e6;
        }
        assert_ne!(verdict(&s, "client", None).resource, "network");
    }

    /// Dijkshoorn named every bound ("CPU and IO-wait and Client CPU"): a client at its cores beside
    /// cpus waiting for storage and a busy disk is named with both, first, and makes the result a
    /// lower bound (issue 29, point 10).
    #[test]
    fn every_saturated_resource_is_named_and_a_saturated_client_makes_a_lower_bound() {
        let mut s = series(&[("client", 0.97, 1), ("postgres", 0.3, 8)], 0.0, 0.95);
        for sample in &mut s.samples {
            sample.host.cpu_iowait = 0.6;
        }
        let v = verdict(&s, "client", None);
        assert!(v.client_bound, "{v:?}");
        assert_eq!(v.bounded_by, "cpu of client and disk vda and io-wait");
        assert_eq!(
            (v.resource.as_str(), v.process.as_deref()),
            ("cpu", Some("client"))
        );
        assert_eq!(v.bounds.len(), 3);
        assert!(
            v.evidence.contains("0.97 of 1 usable cores"),
            "{}",
            v.evidence
        );
    }

    #[test]
    fn a_single_threaded_server_at_one_core_is_the_bound() {
        let v = verdict(
            &series(&[("client", 0.4, 2), ("redis", 0.97, 1)], 0.3, 0.0),
            "client",
            None,
        );
        assert_eq!(v.bounded_by, "cpu of redis");
        assert!(!v.client_bound);
    }

    #[test]
    fn a_saturated_client_makes_a_lower_bound() {
        let v = verdict(
            &series(&[("client", 1.95, 2), ("node1", 1.9, 60)], 0.0, 0.0),
            "client",
            None,
        );
        assert_eq!(v.process.as_deref(), Some("client"));
        assert!(v.client_bound);
    }

    #[test]
    fn disk_then_host_cpu_then_none() {
        assert_eq!(
            verdict(&series(&[("client", 0.1, 1)], 0.5, 0.95), "client", None).bounded_by,
            "disk vda"
        );
        let host = verdict(
            &series(&[("client", 0.5, 4), ("node1", 1.2, 40)], 0.05, 0.0),
            "client",
            None,
        );
        assert_eq!(host.bounded_by, "host cpu (largest share: node1)");
        // A busy host whose watched processes are nearly idle: someone else is using it.
        let other = verdict(&series(&[("client", 0.05, 4)], 0.02, 0.0), "client", None);
        assert_eq!(
            other.bounded_by,
            "host cpu (largest share: unwatched processes)"
        );
        assert!(!other.client_bound);
        let idle = verdict(&series(&[("client", 0.2, 4)], 0.8, 0.1), "client", None);
        assert_eq!(
            (idle.resource.as_str(), idle.bounded_by.as_str()),
            ("none", "none found")
        );
        // Outside the window nothing counts.
        assert_eq!(
            verdict(
                &series(&[("client", 1.0, 1)], 0.0, 0.0),
                "client",
                Some((10.0, 20.0))
            )
            .evidence,
            "no samples"
        );
    }

    #[test]
    fn another_hosts_saturation_counts_unless_the_client_saturated() {
        let local = verdict(&series(&[("client", 0.2, 4)], 0.8, 0.1), "client", None);
        let db = verdict(&series(&[("cassandra", 1.95, 60)], 0.02, 0.0), "x", None);
        let v = combined_verdict(local.clone(), &[("db1".into(), db.clone())]);
        assert_eq!(v.bounded_by, "cpu of cassandra on db1");
        assert_eq!(v.process.as_deref(), Some("db1/cassandra"));
        assert!(!v.client_bound);
        let client = verdict(&series(&[("client", 1.95, 2)], 0.0, 0.0), "client", None);
        assert!(combined_verdict(client, &[("db1".into(), db)]).client_bound);
        let idle = verdict(&series(&[("cassandra", 0.1, 60)], 0.9, 0.0), "x", None);
        let v = combined_verdict(local, &[("db1".into(), idle)]);
        assert_eq!(v.resource, "none");
        assert!(v.evidence.contains("db1: host cpu"), "{}", v.evidence);
    }
}
