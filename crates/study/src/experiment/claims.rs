//! Claims on runs in the results database: an experiment process claims each run before it starts
//! it, so two processes running one experiment against one results database split its runs and
//! each run is measured once (issue 62: both ran every cell).
//!
//! A claim is a row of `run_claims`, written in an immediate transaction (SQLite's write lock, so
//! two claimers are serialised) after checking that the run is neither recorded done nor claimed by
//! a live process. It names its claimer: host, pid and the process's start time (so a pid reused by
//! another program is not taken for it), and when it was made. A claim is taken over when it is
//! stale: its process is no longer alive on this host, or, made on another host (where its process
//! cannot be looked at), it is older than [`FOREIGN_CLAIM_HOURS`]. It goes when the run is recorded,
//! and with every claim of its process when the experiment ends (also at Ctrl-C).

use rusqlite::{params, OptionalExtension, TransactionBehavior};
use scalebench_deploy::ProcessRef;

use super::spec::PlannedRun;
use super::store::Store;

/// A claim made on another host is taken over after this many hours (its process cannot be
/// looked at from here): a run longer than that, measured from another host against a shared
/// results database, could be measured twice.
pub const FOREIGN_CLAIM_HOURS: u64 = 24;

/// What claiming a run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Claimed by this process: run it.
    Mine,
    /// Recorded done (under this definition) by another process since this one planned.
    DoneElsewhere,
    /// Claimed by a live process: left to it (says which).
    HeldBy(String),
}

/// This process as a claimer: host, pid, start time.
fn me() -> (String, u32, u64) {
    let pid = std::process::id();
    let start = ProcessRef::of(pid).map_or(0, |p| p.start_ticks);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    (host, pid, start)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Store {
    /// Claims `run` of experiment `experiment` for this process, unless it is recorded done under
    /// `definition` or a live process holds it.
    pub fn claim(
        &mut self,
        experiment: i64,
        run: &PlannedRun,
        definition: &str,
    ) -> Result<Claim, String> {
        let (host, pid, start) = me();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        let done = tx
            .query_row(
                "SELECT 1 FROM runs WHERE experiment_id = ?1 AND cell = ?2 AND repetition = ?3
                   AND status IN ('ok', 'failures') AND (definition IS NULL OR definition = ?4)",
                params![experiment, run.cell, run.repetition, definition],
                |_| Ok(()),
            )
            .optional()
            .map_err(|e| e.to_string())?
            .is_some();
        if done {
            return Ok(Claim::DoneElsewhere);
        }
        let holder = tx
            .query_row(
                "SELECT host, pid, start_ticks, claimed_at, claimed_unix_s FROM run_claims
                 WHERE experiment_id = ?1 AND cell = ?2 AND repetition = ?3",
                params![experiment, run.cell, run.repetition],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, u32>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, i64>(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| e.to_string())?;
        if let Some((h, p, t, at, unix)) = holder {
            let alive = if h == host {
                // Start time 0 (unreadable) proves nothing: such a claim is taken as alive while
                // its pid is.
                (p, t as u64) == (pid, start)
                    || ProcessRef {
                        pid: p,
                        start_ticks: t as u64,
                    }
                    .is_running()
                    || (t == 0 && ProcessRef::of(p).is_some())
            } else {
                unix_now() - unix < (FOREIGN_CLAIM_HOURS * 3600) as i64
            };
            if alive && !(h == host && p == pid) {
                return Ok(Claim::HeldBy(format!("pid {p} on {h}, since {at}")));
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO run_claims
               (experiment_id, cell, repetition, host, pid, start_ticks, claimed_at, claimed_unix_s)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                experiment,
                run.cell,
                run.repetition,
                host,
                pid,
                start as i64,
                super::store::now(),
                unix_now()
            ],
        )
        .map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
        Ok(Claim::Mine)
    }

    /// Gives up every claim of this process on experiment `experiment` (its runs recorded, or
    /// the experiment ended).
    pub fn release_claims(&self, experiment: i64) -> Result<(), String> {
        let (host, pid, _) = me();
        self.conn
            .execute(
                "DELETE FROM run_claims WHERE experiment_id = ?1 AND host = ?2 AND pid = ?3",
                params![experiment, host, pid],
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(cell: &str) -> PlannedRun {
        PlannedRun {
            cell: cell.into(),
            repetition: 1,
            database: "null".into(),
            configuration: "default".into(),
            workload: "c".into(),
            params: Default::default(),
            data_key: "k".into(),
        }
    }

    /// Puts a claim as another claimer made it.
    fn claimed_by(
        store: &Store,
        id: i64,
        cell: &str,
        host: &str,
        pid: u32,
        ticks: u64,
        age_s: i64,
    ) {
        store
            .conn
            .execute(
                "INSERT OR REPLACE INTO run_claims VALUES (?1, ?2, 1, ?3, ?4, ?5, 'then', ?6)",
                params![id, cell, host, pid, ticks as i64, unix_now() - age_s],
            )
            .unwrap();
    }

    /// A claim by a live process is left to it; one by a process gone (its pid free, or another
    /// program's now), or from another host and older than the bound, is taken over; a run
    /// recorded done is not claimed; this process's claims go with `release_claims`.
    #[test]
    fn live_claims_hold_and_stale_ones_are_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.experiment("e", "e.toml", "{}").unwrap();
        let (host, _, _) = me();
        assert_eq!(store.claim(id, &planned("a"), "d").unwrap(), Claim::Mine);
        // Claiming again is still this process's.
        assert_eq!(store.claim(id, &planned("a"), "d").unwrap(), Claim::Mine);

        // A live process of this host.
        let mut live = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let alive = ProcessRef::of(live.id()).unwrap();
        claimed_by(&store, id, "b", &host, alive.pid, alive.start_ticks, 0);
        let held = store.claim(id, &planned("b"), "d").unwrap();
        assert_eq!(
            held,
            Claim::HeldBy(format!("pid {} on {host}, since then", alive.pid))
        );
        // Its pid with another start time: another program has that pid now.
        claimed_by(&store, id, "c", &host, alive.pid, alive.start_ticks + 1, 0);
        assert_eq!(store.claim(id, &planned("c"), "d").unwrap(), Claim::Mine);
        // A process that has exited.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        claimed_by(&store, id, "d", &host, gone_pid, 12345, 0);
        assert_eq!(store.claim(id, &planned("d"), "d").unwrap(), Claim::Mine);
        // Another host: held within the bound, taken over after it.
        claimed_by(&store, id, "e", "elsewhere", 4242, 1, 60);
        assert!(matches!(
            store.claim(id, &planned("e"), "d").unwrap(),
            Claim::HeldBy(_)
        ));
        claimed_by(
            &store,
            id,
            "e",
            "elsewhere",
            4242,
            1,
            3600 * FOREIGN_CLAIM_HOURS as i64 + 1,
        );
        assert_eq!(store.claim(id, &planned("e"), "d").unwrap(), Claim::Mine);

        // Recorded done (by anyone): not run again; recorded under another definition: claimed.
        store
            .conn
            .execute(
                "INSERT INTO runs (experiment_id, cell, repetition, database, configuration, workload,
                   params, status, started_at, finished_at, definition)
                 VALUES (?1, 'f', 1, 'null', 'default', 'c', '{}', 'ok', 't', 't', 'd')",
                [id],
            )
            .unwrap();
        assert_eq!(
            store.claim(id, &planned("f"), "d").unwrap(),
            Claim::DoneElsewhere
        );
        assert_eq!(store.claim(id, &planned("f"), "d2").unwrap(), Claim::Mine);

        store.release_claims(id).unwrap();
        let left: Vec<String> = store
            .conn
            .prepare("SELECT cell FROM run_claims ORDER BY cell")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Only the live other claimer's remains.
        assert_eq!(left, ["b"]);
        live.kill().unwrap();
        live.wait().unwrap();
    }
}
