//! A run that knows its load (issue 63, item 3): `load` records what it wrote (the declared record
//! count, the key numbers, the last record, where a run's inserts may continue) in the state
//! directory, matched by database and table; a later `run` on the same table reads it:
//!
//! - a `recordcount` other than the load's is refused (exit 2, with the fix): after a 100,000-record
//!   load, YCSB's default of 1,000 would choose every key among 1% of the table, all cached;
//! - its inserts continue after the keys earlier runs inserted (`transactioninsertstart`, unless
//!   given), where they would otherwise collide with them;
//! - the records at the start go into the result (`records_at_start`) and its summary.
//!
//! The record is trusted only while the database agrees: before refusing, the load's last record
//! is read; if it is gone (the table dropped or reloaded by another tool), the record is stale,
//! said and forgotten. One file per database and table, each written whole, so two tables' loads
//! never race on one file. Not used by a rendezvous client (each machine's state directory would
//! disagree with the others', and the clients must agree on the run).

use std::path::{Path, PathBuf};
use std::time::Duration;

use scalebench_binding::config::DbUrl;
use scalebench_binding::{registry, BindingFactory, FactoryVisitor};
use scalebench_exec::{Phase, StopSignal};
use scalebench_measure::{EndedBy, RunResult};
use scalebench_workload::declared::{RECORDCOUNT, TRANSACTIONINSERTSTART};
use scalebench_workload::CoreWorkload;
use serde::{Deserialize, Serialize};

use crate::error::SessionError;
use crate::request::RunRequest;
use crate::settings::Settings;

/// What the loads of one table wrote, and what runs on it have done since.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnownLoad {
    /// The database, without credentials or options (see [`database_identity`]).
    pub database: String,
    pub table: String,
    /// The `recordcount` the load declared: what a run on the table must declare.
    pub recordcount: u64,
    /// The key numbers the loads wrote, as merged `[start, end)` ranges (several loads with
    /// `insertstart`/`insertcount` fill one table).
    pub loaded: Vec<[u64; 2]>,
    /// The record of the highest key number loaded, as written: read before the record is trusted.
    pub last_key: String,
    /// Where a run's inserts continue: past the loaded keys and every key a run inserted.
    pub next_insert: u64,
    /// The successful inserts less deletes of the runs recorded since the load.
    pub changed_by_runs: i64,
    /// When the last load finished (RFC 3339).
    pub loaded_at: String,
}

impl KnownLoad {
    /// The records the table holds as far as scalebench knows: loaded, plus runs' inserts, less
    /// their deletes.
    pub fn records(&self) -> u64 {
        let loaded: u64 = self.loaded.iter().map(|[a, b]| b - a).sum();
        (loaded as i64 + self.changed_by_runs).max(0) as u64
    }

    fn loaded_end(&self) -> u64 {
        self.loaded.iter().map(|r| r[1]).max().unwrap_or(0)
    }

    /// Adds `[start, end)` to the loaded ranges, merging those that touch or overlap.
    fn add_loaded(&mut self, start: u64, end: u64) {
        self.loaded.push([start, end]);
        self.loaded.sort_unstable();
        let mut merged: Vec<[u64; 2]> = Vec::new();
        for r in self.loaded.drain(..) {
            match merged.last_mut() {
                Some(last) if r[0] <= last[1] => last[1] = last[1].max(r[1]),
                _ => merged.push(r),
            }
        }
        self.loaded = merged;
    }
}

/// What a run took from its table's recorded load: written into its result by [`Self::apply`].
#[derive(Debug, Clone)]
pub struct RunOnKnownLoad {
    pub load: KnownLoad,
    /// Where the record is (named in what is said).
    pub path: PathBuf,
}

impl RunOnKnownLoad {
    /// The run phase's records at the start, from the record (the summary states it).
    pub fn apply(&self, result: &mut RunResult) {
        if let Some(p) = result.phases.last_mut() {
            p.data.records_at_start = Some(self.load.records());
        }
    }
}

/// The database a known load is matched by: scheme, hosts and path, without the user, password or
/// options (a TLS parameter does not make another database); a SQLite file by its absolute path,
/// so that `sqlite://bench.db` from two directories are two databases.
pub fn database_identity(db: &DbUrl) -> String {
    let url = db.url();
    if db.scheme() == "sqlite" {
        let path = match url.host_str() {
            Some(h) if !h.is_empty() => format!("{h}{}", url.path()),
            _ => url.path().to_string(),
        };
        let path = Path::new(&path);
        let absolute = std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf());
        let resolved = absolute.canonicalize().unwrap_or(absolute);
        return format!("sqlite://{}", resolved.display());
    }
    format!("{}://{}{}", db.scheme(), db.hosts(0).join(","), url.path())
}

/// The file that records the loads of `table` in `database`: `<state dir>/loads/NAME.json`, NAME
/// readable and made unique by a stable hash (FNV-1a: `std`'s hasher may change between releases,
/// and the name must not).
pub fn record_path(database: &str, table: &str) -> Option<PathBuf> {
    Some(
        crate::files::state_dir()?
            .join("loads")
            .join(record_file_name(database, table)),
    )
}

fn record_file_name(database: &str, table: &str) -> String {
    let whole = format!("{database} {table}");
    let readable: String = whole
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(100)
        .collect();
    format!("{readable}-{:016x}.json", fnv1a(&whole))
}

/// The 64-bit FNV-1a hash of `text`.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn read(path: &Path) -> Option<KnownLoad> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(load) => Some(load),
        Err(e) => {
            crate::note!(
                "warning: {} does not read as a recorded load ({e}): not used",
                path.display()
            );
            None
        }
    }
}

/// The request's database when it names one (`--db` or a deployment's), of a binding that keeps
/// data; None on the temporary default database or the null binding.
fn database_of(request: &RunRequest) -> Result<Option<DbUrl>, SessionError> {
    let db = match (&request.db, &request.deployment) {
        (Some(url), _) => DbUrl::parse(url)?,
        (None, Some(file)) => {
            DbUrl::parse(&crate::cluster::open(file, &request.clusters_dir)?.url())?
        }
        (None, None) => return Ok(None),
    };
    let keeps = registry::for_scheme(db.scheme()).is_some_and(|b| b.stores_data);
    Ok(keeps.then_some(db))
}

fn workload_of(request: &RunRequest) -> Result<(CoreWorkload, bool), SessionError> {
    let (props, _) = Settings::properties(request, &[])?;
    let insert_start_given = props.contains(TRANSACTIONINSERTSTART.name);
    Ok((CoreWorkload::from_properties(&props)?, insert_start_given))
}

/// Before a `run` (no load in the same command): the recorded load of its table checked against
/// the run's `recordcount` (refused when they differ and the load's records are still there), and
/// the run's inserts moved past earlier runs' (`transactioninsertstart`, unless given).
pub fn before_run(
    request: &mut RunRequest,
    phases: &[Phase],
) -> Result<Option<RunOnKnownLoad>, SessionError> {
    if phases != [Phase::Run] {
        return Ok(None);
    }
    let Some(db) = database_of(request)? else {
        return Ok(None);
    };
    let (workload, insert_start_given) = workload_of(request)?;
    let database = database_identity(&db);
    let Some(path) = record_path(&database, &workload.table) else {
        return Ok(None);
    };
    let Some(load) = read(&path) else {
        return Ok(None);
    };
    if load.recordcount != workload.record_count {
        match last_record_exists(request, &load.last_key) {
            Some(true) => return Err(mismatch(&load, &workload, &path)),
            Some(false) => {
                crate::note!(
                    "warning: {path} records a load of {table} ({n} records at {at}), but its last record {key} is not there: the table changed outside scalebench; the record is forgotten",
                    path = path.display(),
                    table = load.table,
                    n = load.recordcount,
                    at = load.loaded_at,
                    key = load.last_key,
                );
                let _ = std::fs::remove_file(&path);
                return Ok(None);
            }
            None => {
                crate::note!(
                    "warning: {} records a load of {} records, this run declares recordcount={}; record {} could not be read to check which is right",
                    path.display(),
                    load.recordcount,
                    workload.record_count,
                    load.last_key
                );
                return Ok(None);
            }
        }
    }
    if workload.runs_inserts()
        && !insert_start_given
        && load.next_insert > workload.transaction_insert_start
    {
        request.set(&TRANSACTIONINSERTSTART, load.next_insert);
        crate::note!(
            "note: this run's inserts start at key number {} (transactioninsertstart), after the keys earlier runs on {} inserted ({})",
            load.next_insert,
            load.table,
            path.display()
        );
    }
    Ok(Some(RunOnKnownLoad { load, path }))
}

fn mismatch(load: &KnownLoad, workload: &CoreWorkload, path: &Path) -> SessionError {
    let declared = workload.record_count;
    let consequence = if declared < load.recordcount {
        format!(
            "it would choose its keys among {:.1}% of them",
            declared as f64 / load.recordcount as f64 * 100.0
        )
    } else {
        "it would read keys the load never wrote, each a failure".to_string()
    };
    SessionError::Usage(format!(
        "this run declares {name}={declared}, but table {table} holds the {n} records `scalebench load` wrote at {at} ({name}={n}): {consequence}; pass -p {name}={n} (the load is recorded in {path}: delete that file if the table was reloaded outside scalebench)",
        name = RECORDCOUNT.name,
        table = load.table,
        n = load.recordcount,
        at = load.loaded_at,
        path = path.display(),
    ))
}

/// Reads `key` once: whether the load's last record is still there (None: the database could not
/// be asked).
fn last_record_exists(request: &RunRequest, key: &str) -> Option<bool> {
    struct Lookup<'a>(&'a str);
    impl FactoryVisitor for Lookup<'_> {
        type Output = Option<bool>;
        fn visit<F: BindingFactory>(self, factory: F) -> Option<bool> {
            scalebench_exec::lookup::key_exists(&factory, self.0, Duration::from_secs(10))
        }
    }
    let settings = Settings::resolve(request, Phase::Run).ok()?;
    let config = settings.binding_config(false, false, &StopSignal::default());
    registry::open(config, Lookup(key)).ok().flatten()
}

/// After a command's phases: a complete load recorded (merged with an earlier load of the same
/// record count into the same table, unless the table was dropped first), a run's inserts and
/// deletes added to its table's record. What cannot be written is said, never fatal: the result
/// stands without it. Called by the process that measures the whole run (alone, or the clients'
/// launcher), never by one client of several.
pub fn remember(request: &RunRequest, phases: &[Phase], result: &RunResult) {
    if let Err(e) = try_remember(request, phases, result) {
        crate::note!("warning: the load was not recorded for later runs: {e}");
    }
}

fn try_remember(
    request: &RunRequest,
    phases: &[Phase],
    result: &RunResult,
) -> Result<(), SessionError> {
    let Some(db) = database_of(request)? else {
        return Ok(());
    };
    let (workload, _) = workload_of(request)?;
    let database = database_identity(&db);
    let Some(path) = record_path(&database, &workload.table) else {
        return Ok(());
    };
    let mut record = read(&path);
    for (phase, measured) in phases.iter().zip(&result.phases) {
        match phase {
            Phase::Load => {
                let complete = measured.ended_by == EndedBy::Completed
                    && measured.totals.failed == 0
                    && !result.interrupted;
                record = complete
                    .then(|| loaded(record.take(), request.drop_schema, &workload, &database));
            }
            Phase::Run => {
                let Some(r) = record.as_mut() else { continue };
                if let Some(keys) = measured.insert_keys {
                    r.next_insert = r.next_insert.max(keys.end);
                }
                let ok = |op: &str| measured.operations.get(op).map_or(0, |o| o.ok) as i64;
                r.changed_by_runs += ok("INSERT") - ok("DELETE");
            }
        }
    }
    match record {
        Some(r) => {
            std::fs::create_dir_all(path.parent().expect("in the loads directory"))
                .map_err(|e| SessionError::Failed(format!("{}: {e}", path.display())))?;
            crate::files::write_json(&path, &r)
        }
        // A load that did not complete leaves the table unknown: no record rather than a wrong one.
        None if phases.contains(&Phase::Load) => {
            let _ = std::fs::remove_file(&path);
            Ok(())
        }
        None => Ok(()),
    }
}

/// The record after a complete load of `workload`'s keys: added to `earlier` when it declared the
/// same record count and the table was not dropped, else anew.
fn loaded(
    earlier: Option<KnownLoad>,
    dropped: bool,
    workload: &CoreWorkload,
    database: &str,
) -> KnownLoad {
    let (start, end) = (
        workload.insert_start,
        workload.insert_start + workload.insert_count,
    );
    let mut record = earlier
        .filter(|e| !dropped && e.recordcount == workload.record_count)
        .unwrap_or_else(|| KnownLoad {
            database: database.to_string(),
            table: workload.table.clone(),
            recordcount: workload.record_count,
            loaded: Vec::new(),
            last_key: String::new(),
            next_insert: 0,
            changed_by_runs: 0,
            loaded_at: String::new(),
        });
    record.add_loaded(start, end);
    let last = record.loaded_end();
    record.last_key = workload.keys.key(last.saturating_sub(1));
    record.next_insert = record.next_insert.max(last).max(workload.record_count);
    record.loaded_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> KnownLoad {
        KnownLoad {
            database: "postgresql://127.0.0.1:5432/db".into(),
            table: "usertable".into(),
            recordcount: 100,
            loaded: Vec::new(),
            last_key: String::new(),
            next_insert: 0,
            changed_by_runs: 0,
            loaded_at: String::new(),
        }
    }

    #[test]
    fn split_loads_merge_into_one_range_and_count_their_records() {
        let mut r = record();
        r.add_loaded(50, 100);
        r.add_loaded(0, 50);
        assert_eq!(r.loaded, vec![[0, 100]]);
        r.add_loaded(200, 210);
        assert_eq!(r.loaded, vec![[0, 100], [200, 210]]);
        assert_eq!(r.loaded_end(), 210);
        r.changed_by_runs = -15;
        assert_eq!(r.records(), 95);
    }

    #[test]
    fn a_database_is_known_without_its_credentials_or_options() {
        let a =
            DbUrl::parse("postgresql://bench:secret@127.0.0.1:5432/shop?sslmode=require").unwrap();
        let b = DbUrl::parse("postgresql://other@127.0.0.1:5432/shop").unwrap();
        assert_eq!(database_identity(&a), database_identity(&b));
        assert!(!database_identity(&a).contains("secret"));
        let c = DbUrl::parse("postgresql://127.0.0.1:5432/other").unwrap();
        assert_ne!(database_identity(&a), database_identity(&c));
        // A relative SQLite file is the file in this directory.
        let here = std::env::current_dir().unwrap();
        let s = DbUrl::parse("sqlite://bench.db").unwrap();
        assert_eq!(
            database_identity(&s),
            format!("sqlite://{}", here.join("bench.db").display())
        );
    }

    #[test]
    fn two_tables_of_one_database_have_two_records() {
        let db = "postgresql://127.0.0.1:5432/db";
        let a = record_file_name(db, "usertable");
        assert_ne!(a, record_file_name(db, "orders"));
        assert_eq!(a, record_file_name(db, "usertable"));
        assert!(a.starts_with("postgresql___127_0_0_1_5432_db_usertable-"));
        // Stable across releases: FNV-1a's published test vectors.
        assert_eq!(fnv1a(""), 0xcbf29ce484222325);
        assert_eq!(fnv1a("a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a("foobar"), 0x85944171f73967e8);
    }
}
