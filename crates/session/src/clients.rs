//! A client's share of one run spread over N client processes, computed from (index, N) alone so
//! that every client derives its own part without asking anyone (Wegert, studies.md section 2: one
//! synchronous start, per-client insert ranges, the operation count split without remainder loss).
//!
use std::time::Duration;

use scalebench_exec::Phase;
use scalebench_workload::declared::{
    INSERTCOUNT, INSERTSTART, OPERATIONCOUNT, TRANSACTIONINSERTSTART, WRITEKEYPARTITION,
    WRITEKEYPARTITIONS,
};
use scalebench_workload::{CoreWorkload, OpKind, Properties};
use serde::{Deserialize, Serialize};

use crate::error::SessionError;

/// Client `index` of `clients`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientShare {
    pub index: u32,
    pub clients: u32,
}

/// Key numbers each client may insert into during a run bounded by time, not by operations:
/// Wegert's x + 1 sections (the shared data, then one section per client). At 100,000 inserts per
/// second a client would need almost three hours to reach the next client's section; a client's
/// result records the keys it took (`insert_keys`), so an overrun shows in the merged result.
pub const DEFAULT_INSERT_SECTION: u64 = 1_000_000_000;

impl ClientShare {
    pub fn new(index: u32, clients: u32) -> Result<ClientShare, SessionError> {
        if clients == 0 {
            return Err(SessionError::Usage(
                "invalid value '0' for '--clients': expected at least 1".into(),
            ));
        }
        if index >= clients {
            return Err(SessionError::Usage(format!(
                "invalid value '{index}' for '--client-index': expected 0 to {} for {clients} clients",
                clients - 1
            )));
        }
        Ok(ClientShare { index, clients })
    }

    /// The share of a client started by a launcher: `--client-index` and `--clients` when given,
    /// else the launcher's variables (Slurm's SLURM_PROCID and SLURM_NTASKS, a Kubernetes Indexed
    /// Job's JOB_COMPLETION_INDEX).
    pub fn from_launcher(
        index: Option<u32>,
        clients: Option<u32>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ClientShare, SessionError> {
        let from_env = |names: &[&str], flag: &str| -> Result<Option<u32>, SessionError> {
            for name in names {
                if let Some(v) = env(name) {
                    return v.trim().parse().map(Some).map_err(|_| {
                        SessionError::Usage(format!(
                            "invalid value '{v}' of {name} (for '{flag}'): expected a whole number"
                        ))
                    });
                }
            }
            Ok(None)
        };
        let index = match index {
            Some(i) => i,
            None => from_env(&["SLURM_PROCID", "JOB_COMPLETION_INDEX"], "--client-index")?
                .ok_or_else(|| {
                    SessionError::Usage(
                        "--rendezvous needs this client's index: --client-index, or a launcher's SLURM_PROCID or JOB_COMPLETION_INDEX".into(),
                    )
                })?,
        };
        let clients = match clients {
            Some(n) => n,
            None => from_env(&["SLURM_NTASKS"], "--clients")?.ok_or_else(|| {
                SessionError::Usage(
                    "--rendezvous needs the number of clients: --clients, or a launcher's SLURM_NTASKS".into(),
                )
            })?,
        };
        ClientShare::new(index, clients)
    }

    /// This client's part of `total` things as (offset, count): parts are contiguous, disjoint,
    /// cover `total` exactly and differ in size by at most one (the first `total % N` get one more).
    pub fn split(&self, total: u64) -> (u64, u64) {
        let (n, i) = (self.clients as u64, self.index as u64);
        let (base, extra) = (total / n, total % n);
        (i * base + i.min(extra), base + u64::from(i < extra))
    }

    /// This client's threads among the run's: (its first, how many, the run's in all). `threads`
    /// are each client's own, or with `in_all` the whole run's, each client its part of them.
    pub fn threads(&self, threads: u64, in_all: bool) -> (u64, u64, u64) {
        match in_all {
            true => {
                let (first, count) = self.split(threads);
                (first, count, threads)
            }
            false => (
                self.index as u64 * threads,
                threads,
                threads * self.clients as u64,
            ),
        }
    }

    /// This client's part of a request set of `r` operations (Dory's R, the whole run's): the
    /// shares of its threads, each thread of the run R / T (the first R mod T threads one more,
    /// as Dory's client gave them), so that every thread of every client has the same share to
    /// within one operation however the threads are spread over the clients. `threads` as
    /// [`ClientShare::threads`] takes them. The last client's part is the smallest: each client
    /// refuses a set that leaves it nothing, alike.
    pub fn request_set(&self, r: u64, threads: u64, in_all: bool) -> Result<u64, SessionError> {
        let part = |share: &ClientShare| {
            let (first, count, all) = share.threads(threads, in_all);
            let all = all.max(1);
            count * (r / all) + (r % all).saturating_sub(first).min(count)
        };
        let last = ClientShare {
            index: self.clients - 1,
            clients: self.clients,
        };
        if part(&last) == 0 {
            return Err(SessionError::Usage(format!(
                "invalid value '{r}' for '--request-set': fewer than the {} clients' threads would leave client {} none of a set (each client needs at least one operation)",
                self.clients, last.index
            )));
        }
        Ok(part(self))
    }

    /// The load's key range of this client: its part of `count` records from `start`
    /// (`insertstart`, `insertcount`).
    pub fn load_range(&self, start: u64, count: u64) -> (u64, u64) {
        let (offset, n) = self.split(count);
        (start + offset, n)
    }

    /// This client's offered rate: T / N.
    pub fn rate(&self, target_ops_s: f64) -> f64 {
        target_ops_s / self.clients as f64
    }

    /// How much later than the common start this client's arrivals begin, so that the merged
    /// stream of N clients at T / N each keeps the intended spacing 1 / T (client i starts i / T in).
    pub fn arrival_offset(&self, target_ops_s: f64) -> Duration {
        Duration::from_secs_f64(self.index as f64 / target_ops_s)
    }

    /// The first key number of this client's run-phase inserts: the sections of `width` keys
    /// follow one another from `first` (the key after the shared data).
    pub fn insert_section(&self, first: u64, width: u64) -> u64 {
        first + self.index as u64 * width
    }

    /// The insert section width of a run, the same for every client: a run bounded by operations
    /// can insert at most the largest client's operations; one bounded by time gets
    /// [`DEFAULT_INSERT_SECTION`] keys.
    pub fn insert_section_width(&self, operation_count: Option<u64>) -> u64 {
        operation_count.map_or(DEFAULT_INSERT_SECTION, |ops| {
            ops.div_ceil(self.clients as u64).max(1)
        })
    }

    /// `what` = `n` cannot be shared by the run's clients: each needs at least one.
    pub fn too_few(&self, what: &str, n: u64) -> SessionError {
        SessionError::Usage(format!(
            "invalid value '{n}' for '{what}': fewer than the {} clients of the run (each needs at least one)",
            self.clients
        ))
    }

    /// Narrows the properties of a run to this client's share: a load's key range, a run's
    /// operations (when the run is bounded by them) and its insert section; with
    /// `partition_writes` (`--verify-writes`), the loaded keys its updates go to: those of its
    /// index modulo the clients, so that no two clients write one key and each client's record of
    /// its writes says alone what every key it wrote must hold.
    pub fn apply(
        &self,
        props: &mut Properties,
        workload: &CoreWorkload,
        phase: Phase,
        explicit_count: bool,
        partition_writes: bool,
    ) -> Result<(), SessionError> {
        const ORIGIN: &str = "the client's share";
        let too_few = |what: &str, n: u64| self.too_few(what, n);
        match phase {
            Phase::Load => {
                if workload.insert_count < self.clients as u64 {
                    return Err(too_few(INSERTCOUNT.name, workload.insert_count));
                }
                let (start, count) = self.load_range(workload.insert_start, workload.insert_count);
                props.set_declared(&INSERTSTART, start, ORIGIN);
                props.set_declared(&INSERTCOUNT, count, ORIGIN);
            }
            Phase::Run => {
                // operationcount=0 is "no limit" (YCSB's): each client then has no limit either.
                let total = explicit_count
                    .then_some(workload.operation_count)
                    .filter(|&n| n > 0);
                if let Some(total) = total {
                    if total < self.clients as u64 {
                        return Err(too_few(OPERATIONCOUNT.name, total));
                    }
                    props.set_declared(&OPERATIONCOUNT, self.split(total).1, ORIGIN);
                }
                let first = self.insert_section(
                    workload.transaction_insert_start,
                    self.insert_section_width(total),
                );
                props.set_declared(&TRANSACTIONINSERTSTART, first, ORIGIN);
                if partition_writes && self.clients > 1 {
                    props.set_declared(&WRITEKEYPARTITIONS, self.clients, ORIGIN);
                    props.set_declared(&WRITEKEYPARTITION, self.index, ORIGIN);
                }
            }
        }
        Ok(())
    }

    /// What this client is to do, in words (named when its result is missing).
    pub fn describe(&self, workload: &CoreWorkload, phase: Phase) -> String {
        match phase {
            Phase::Load => format!(
                "records {}..{}",
                workload.insert_start,
                workload.insert_start + workload.insert_count
            ),
            Phase::Run if workload.mix.iter().any(|(k, _)| *k == OpKind::Insert) => format!(
                "client {} of {}: its share of the operations, inserts from key {}",
                self.index, self.clients, workload.transaction_insert_start
            ),
            // A workload without inserts has no key section: its share is its operations alone.
            Phase::Run => format!(
                "client {} of {}: its share of the operations",
                self.index, self.clients
            ),
        }
    }

    /// A seed of this client's own, from the run's: distinct per client and far apart, since each
    /// client's worker slots derive theirs from it by adding the slot number.
    pub fn seed(&self, seed: u64) -> u64 {
        // SplitMix64's finaliser: neighbouring indexes give unrelated seeds.
        let mut z = seed ^ (self.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shares(n: u32) -> Vec<ClientShare> {
        (0..n).map(|i| ClientShare::new(i, n).unwrap()).collect()
    }

    proptest! {
        #[test]
        fn parts_cover_the_total_exactly_and_differ_by_at_most_one(total in 0u64..1_000_000, n in 1u32..64) {
            let parts: Vec<(u64, u64)> = shares(n).iter().map(|s| s.split(total)).collect();
            let mut next = 0;
            for &(offset, count) in &parts {
                prop_assert_eq!(offset, next);
                next += count;
            }
            prop_assert_eq!(next, total);
            let sizes = parts.iter().map(|p| p.1);
            prop_assert!(sizes.clone().max().unwrap() - sizes.min().unwrap() <= 1);
        }

        /// Issue 61: whatever the clients and however the threads are spread over them, the
        /// clients' parts of a request set add up to R, and each thread's share (a client's part
        /// over its threads, the first ones one more) is R / T to within one.
        #[test]
        fn a_request_set_is_shared_in_proportion_to_the_threads(
            r in 1u64..100_000, threads in 1u64..64, n in 1u32..16, in_all: bool,
        ) {
            let all = if in_all { threads } else { threads * n as u64 };
            prop_assume!(n as u64 <= threads || !in_all);
            prop_assume!(r >= all);
            let mut total = 0;
            let mut per_thread = Vec::new();
            for s in shares(n) {
                let part = s.request_set(r, threads, in_all).unwrap();
                let (_, count, _) = s.threads(threads, in_all);
                total += part;
                for t in 0..count {
                    per_thread.push(part / count + u64::from(t < part % count));
                }
            }
            prop_assert_eq!(total, r);
            prop_assert_eq!(per_thread.len() as u64, all);
            for share in per_thread {
                prop_assert!(share == r / all || share == r / all + 1, "{} of {} over {}", share, r, all);
            }
        }

        #[test]
        fn insert_sections_never_overlap(first in 0u64..1_000_000, ops in 1u64..1_000_000, n in 1u32..64) {
            let s = shares(n);
            for pair in s.windows(2) {
                // Every client computes the same width on its own.
                let width = pair[0].insert_section_width(Some(ops));
                prop_assert_eq!(width, pair[1].insert_section_width(Some(ops)));
                // The most a client inserts is its operations, which fit in its section.
                let (_, most) = pair[0].split(ops);
                prop_assert!(pair[0].insert_section(first, width) + most <= pair[1].insert_section(first, width));
            }
        }
    }

    /// Issue 62, low 8: `operationcount=0` ("no limit", as with one client) is no limit for each of
    /// several clients, not "fewer operations than clients"; 1 with 2 clients is still refused.
    #[test]
    fn an_operation_count_of_0_is_no_limit_for_every_client() {
        let mut p = Properties::new();
        p.set("operationcount", "0", "-p");
        let workload = CoreWorkload::from_properties(&p).unwrap();
        for share in shares(3) {
            let mut props = p.clone();
            share
                .apply(&mut props, &workload, Phase::Run, true, false)
                .unwrap();
            assert_eq!(props.get("operationcount"), Some("0"), "{share:?}");
        }
        p.set("operationcount", "1", "-p");
        let workload = CoreWorkload::from_properties(&p).unwrap();
        let e = shares(2)[0]
            .apply(&mut p.clone(), &workload, Phase::Run, true, false)
            .unwrap_err();
        assert!(e.to_string().contains("fewer than the 2 clients"), "{e}");
    }

    /// Issue 39: a missing client of a workload without inserts is not said to have had an insert
    /// section.
    #[test]
    fn a_share_names_an_insert_section_only_when_the_workload_inserts() {
        let workload = |insert: &str| {
            let mut p = Properties::new();
            p.set("readproportion", "0.5", "test");
            p.set("updateproportion", "0.5", "test");
            p.set("insertproportion", insert, "test");
            CoreWorkload::from_properties(&p).unwrap()
        };
        let share = ClientShare::new(1, 3).unwrap();
        let without = share.describe(&workload("0"), Phase::Run);
        assert_eq!(without, "client 1 of 3: its share of the operations");
        let with = share.describe(&workload("0.2"), Phase::Run);
        assert!(with.contains("inserts from key"), "{with}");
    }

    /// Issue 61: R = 101 over T = 3 threads in all on 2 clients: client 0 runs 2 threads with 68
    /// operations of each set (34 each), client 1 one thread with 33, never 50 (R and T split apart).
    #[test]
    fn a_request_set_of_101_over_3_threads_on_2_clients() {
        let parts: Vec<(u64, (u64, u64, u64))> = shares(2)
            .iter()
            .map(|s| (s.request_set(101, 3, true).unwrap(), s.threads(3, true)))
            .collect();
        assert_eq!(parts, [(68, (0, 2, 3)), (33, (2, 1, 3))]);
        // 3 threads each: 6 in all, 17 operations each but the last (16).
        let each: Vec<u64> = shares(2)
            .iter()
            .map(|s| s.request_set(101, 3, false).unwrap())
            .collect();
        assert_eq!(each, [51, 50]);
        // Fewer operations than threads: the last client would have none; each client refuses.
        for s in shares(2) {
            let e = s.request_set(2, 3, true).unwrap_err().to_string();
            assert!(e.contains("'2' for '--request-set'"), "{e}");
        }
        assert_eq!(shares(2)[0].request_set(3, 3, true).unwrap(), 2);
    }

    #[test]
    fn a_load_of_10_records_over_4_clients() {
        let ranges: Vec<(u64, u64)> = shares(4).iter().map(|s| s.load_range(100, 10)).collect();
        assert_eq!(ranges, [(100, 3), (103, 3), (106, 2), (108, 2)]);
    }

    #[test]
    fn merged_arrivals_keep_the_intended_spacing() {
        // 4 clients at 1000 ops/s in all: 250 ops/s each, offset by 1 ms, so the merged stream has
        // one arrival every millisecond.
        let s = shares(4);
        assert_eq!(s[0].rate(1000.0), 250.0);
        let mut arrivals: Vec<f64> = s
            .iter()
            .flat_map(|c| {
                let first = c.arrival_offset(1000.0).as_secs_f64();
                (0..5).map(move |k| first + k as f64 / c.rate(1000.0))
            })
            .collect();
        arrivals.sort_by(f64::total_cmp);
        for w in arrivals.windows(2) {
            assert!((w[1] - w[0] - 0.001).abs() < 1e-9, "{arrivals:?}");
        }
    }

    #[test]
    fn seeds_differ_per_client_and_repeat_per_run() {
        let seeds: std::collections::BTreeSet<u64> = shares(64).iter().map(|s| s.seed(7)).collect();
        assert_eq!(seeds.len(), 64);
        assert_eq!(shares(2)[1].seed(7), shares(2)[1].seed(7));
    }

    #[test]
    fn a_launcher_gives_index_and_count_unless_the_flags_do() {
        let slurm = |name: &str| match name {
            "SLURM_PROCID" => Some("2".to_string()),
            "SLURM_NTASKS" => Some("4".to_string()),
            _ => None,
        };
        assert_eq!(
            ClientShare::from_launcher(None, None, slurm).unwrap(),
            ClientShare {
                index: 2,
                clients: 4
            }
        );
        assert_eq!(
            ClientShare::from_launcher(Some(1), None, slurm)
                .unwrap()
                .index,
            1
        );
        let k8s = |name: &str| (name == "JOB_COMPLETION_INDEX").then(|| "3".to_string());
        assert_eq!(
            ClientShare::from_launcher(None, Some(5), k8s).unwrap(),
            ClientShare {
                index: 3,
                clients: 5
            }
        );
        let e = ClientShare::from_launcher(None, Some(5), |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--client-index"), "{e}");
        let e = ClientShare::from_launcher(None, None, k8s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--clients"), "{e}");
        let bad = |name: &str| (name == "SLURM_PROCID").then(|| "x1".to_string());
        let e = ClientShare::from_launcher(None, Some(2), bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'x1'") && e.contains("SLURM_PROCID"), "{e}");
    }

    #[test]
    fn a_bad_index_or_count_names_the_value() {
        let e = ClientShare::new(4, 4).unwrap_err().to_string();
        assert!(e.contains("'4'") && e.contains("--client-index"), "{e}");
        let e = ClientShare::new(0, 0).unwrap_err().to_string();
        assert!(e.contains("--clients"), "{e}");
    }
}
