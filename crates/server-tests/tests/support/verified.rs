//! `--verify-writes` with no fault (issue 61): every write of every YCSB workload read back, none
//! lost and no value never written.

use scalebench_exec::RunPlan;

use super::{assert_loads_all, builtin, config, phase};

/// Each YCSB workload, a to f, with 5% deletes, briefly (400 operations from 4 slots in a second) on table
/// `verified` of `url`, loaded with 200 records first (`create`: the binding creates its table):
/// keys checked, none lost, none unexpected, none unreadable, and no write in doubt but for a
/// failure that left one so. Each workload inserts into a key range of its own; C runs first,
/// while the records its deletes pick (zipfian, the others' hottest) are still there: it writes
/// nothing else.
pub fn assert_no_write_lost(url: &str, options: &[(&str, &str)], create: bool) {
    for (i, name) in ["c", "a", "b", "d", "e", "f"].into_iter().enumerate() {
        let start = (10_000 * (i + 1)).to_string();
        let w = builtin(
            name,
            &[
                ("table", "verified"),
                ("recordcount", "200"),
                ("deleteproportion", "0.05"),
                ("transactioninsertstart", &start),
            ],
        );
        if i == 0 {
            assert_loads_all(config(url, &w, options, create, true), &w);
        }
        // An open loop of 400 ops/s: the binary's other tests share the server.
        let plan = RunPlan {
            threads: 2,
            concurrency: 2,
            target_ops_s: Some(400.0),
            duration: None,
            operation_count: Some(400),
            verify_writes: true,
            ..Default::default()
        };
        let r = phase(config(url, &w, options, false, false), &w, plan).result;
        let l = r.lost_writes.expect("the writes verified");
        assert!(l.checked > 0, "{name}: {l:?}");
        assert_eq!(
            (l.lost, l.unexpected, l.unreadable),
            (0, 0, 0),
            "{name}: {l:?}, errors {:?}",
            r.errors
        );
        // Refused writes changed nothing; only a failure of unknown outcome leaves one in doubt.
        let unknown: u64 = r
            .errors
            .iter()
            .filter(|(class, _)| !["not_found", "conflict", "unexpected"].contains(&class.as_str()))
            .map(|(_, e)| e.count)
            .sum();
        assert!(
            l.in_doubt + l.recovered <= unknown,
            "{name}: {l:?}, errors {:?}",
            r.errors
        );
    }
}
