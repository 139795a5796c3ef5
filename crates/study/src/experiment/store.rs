//! The results database (SQLite): every run of every experiment, with its parameters, environment,
//! summaries, interval series, resource series, space and verdict. Each run is written in one
//! transaction, so an interrupted experiment never leaves half a record.

use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use scalebench_measure::RunResult;

use super::spec::PlannedRun;

pub use scalebench_report::stored::{ElasticRow, SizeMeans, StepMeans, StoredRun};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS experiments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    spec TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    cell TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    database TEXT NOT NULL,
    configuration TEXT NOT NULL,
    workload TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,          -- ok, failures (ran; failed operations above the threshold), failed, interrupted
    error TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    tool_version TEXT,
    git_commit TEXT,
    host TEXT,
    duration_s REAL,
    throughput_ops_s REAL,         -- records/s when the measured phase is a load
    ok INTEGER,
    failed INTEGER,
    bounded_by TEXT,
    client_bound INTEGER,
    space_bytes INTEGER,
    bytes_per_record REAL,
    result TEXT,                   -- the whole result JSON (scalebench.result.v1)
    UNIQUE (experiment_id, cell, repetition)
);
CREATE TABLE IF NOT EXISTS run_operations (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    phase TEXT NOT NULL,
    operation TEXT NOT NULL,
    ok INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    throughput_ops_s REAL NOT NULL,
    mean_us REAL, p50_us REAL, p95_us REAL, p99_us REAL, p99_9_us REAL, max_us REAL,
    histogram TEXT
);
CREATE TABLE IF NOT EXISTS run_intervals (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    phase TEXT NOT NULL,
    start_s REAL NOT NULL,
    operation TEXT NOT NULL,
    ok INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    ops_s REAL NOT NULL,
    p50_us REAL, p99_us REAL, max_us REAL
);
CREATE TABLE IF NOT EXISTS run_elastic (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    action TEXT NOT NULL,
    nodes_before INTEGER NOT NULL,
    nodes_after INTEGER NOT NULL,
    stabilisation_s REAL,          -- NULL: not stable within the timeout
    elasticity REAL,
    events TEXT NOT NULL,          -- JSON: scale_issued_s, scale_done_s, transfers_done_s, stable_s
    scores TEXT NOT NULL,          -- JSON: every score of the transition
    step INTEGER NOT NULL DEFAULT 1,
    verdict TEXT                   -- JSON: the event against the service level (NULL: none given)
);
CREATE TABLE IF NOT EXISTS run_sizes (  -- Dory's performance table of an elastic run: one row per stable size
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    nodes INTEGER NOT NULL,
    records INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    set_size INTEGER NOT NULL,
    sets INTEGER NOT NULL,
    mean_s REAL NOT NULL,          -- mean request-set time in that stable state
    sd_s REAL NOT NULL,
    scalability REAL               -- (Avg_2N - Avg_N) / Avg_N against the row before, where all doubled
);
CREATE TABLE IF NOT EXISTS run_claims (   -- runs an experiment process is measuring now
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    cell TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    start_ticks INTEGER NOT NULL,  -- the claimer's start time (/proc/PID/stat field 22)
    claimed_at TEXT NOT NULL,
    claimed_unix_s INTEGER NOT NULL,
    PRIMARY KEY (experiment_id, cell, repetition)
);
CREATE TABLE IF NOT EXISTS run_resources (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    phase TEXT NOT NULL,
    t_s REAL NOT NULL,
    target TEXT NOT NULL,          -- host, client, node1, ...
    cpu_cores REAL,                -- host: busy share of all cores x cores
    rss_bytes INTEGER,
    read_s REAL,
    write_s REAL
);
";

pub struct Store {
    pub(super) conn: Connection,
}

/// A planned run as the results database has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Nothing,
    Done,
    Failed,
    /// Recorded under another definition of the run (the experiment file changed).
    OtherDefinition,
}

/// Columns added since the first databases were made: older databases get them (empty, or the
/// default, for the rows they hold).
fn add_later_columns(conn: &Connection) -> rusqlite::Result<()> {
    for (table, column, declaration) in [
        ("runs", "definition", "definition TEXT"),
        // Elastic runs of several steps have a transition per step.
        ("run_elastic", "step", "step INTEGER NOT NULL DEFAULT 1"),
        // Operations judged against a service level (issue 42).
        ("run_elastic", "verdict", "verdict TEXT"),
        // A load's space as inserted (flushed, not compacted) beside the settled one.
        (
            "runs",
            "bytes_per_record_as_inserted",
            "bytes_per_record_as_inserted REAL",
        ),
    ] {
        let has = conn
            .prepare(&format!(
                "SELECT 1 FROM pragma_table_info('{table}') WHERE name = '{column}'"
            ))?
            .exists([])?;
        if !has {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {declaration}"))?;
        }
    }
    Ok(())
}

/// How long a write to the results database waits for another process's write to end.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `setup` again while SQLite answers "database is locked" at once, up to [`BUSY_TIMEOUT`]:
/// its busy handler is not called where waiting could deadlock (a new database switched to WAL by
/// two processes at once), nor while the last connection of another process cleans up the WAL on
/// closing (sqlite.org/wal.html, "Sometimes queries return SQLITE_BUSY in WAL mode"). Two
/// experiments started together on one results database failed so once in CI.
fn retry_while_busy<T>(mut setup: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let started = std::time::Instant::now();
    loop {
        match setup() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            done => return done,
        }
    }
}

impl Store {
    /// Opens or creates a results database to record runs in. It is written in place, as a
    /// database is, so it is the one file not written through `files::AtomicFile`: instead only a
    /// regular file is opened, never through a symbolic link or at a device.
    pub fn open(path: &Path) -> Result<Store, String> {
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(format!(
                "results database '{}' is not a regular file (a directory, device, pipe or symbolic link)",
                path.display()
            ));
        }
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        // Another experiment on the same database writes now and then (its claims, its runs): a
        // write waits for the other's to end instead of failing "database is locked" at once.
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // The tables made and completed under the write lock: two experiments opening a new
        // database at once both added the same column ("duplicate column name").
        retry_while_busy(|| {
            conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;")?;
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            tx.execute_batch(SCHEMA)?;
            add_later_columns(&tx)?;
            tx.commit()
        })
        .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Store { conn })
    }

    /// Opens an existing results database for reading (`results`, `report`): a missing file or a
    /// SQLite file that is not a results database is an error, and nothing is ever written to it.
    pub fn open_read_only(path: &Path) -> Result<Store, String> {
        if !path.is_file() {
            return Err(format!(
                "results database '{}' does not exist (an experiment creates it: scalebench experiment FILE --results PATH)",
                path.display()
            ));
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let is_results = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('experiments', 'runs')",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| format!("'{}' is not a results database: {e}", path.display()))?;
        if is_results != 2 {
            return Err(format!(
                "'{}' is not a scalebench results database (no experiments or runs table)",
                path.display()
            ));
        }
        Ok(Store { conn })
    }

    /// The experiment's id, created on first use (the spec is refreshed).
    pub fn experiment(&self, name: &str, file: &str, spec: &str) -> Result<i64, String> {
        self.conn
            .execute(
                "INSERT INTO experiments (name, file, spec, created_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(name) DO UPDATE SET file = excluded.file, spec = excluded.spec",
                params![name, file, spec, now()],
            )
            .map_err(|e| e.to_string())?;
        self.conn
            .query_row("SELECT id FROM experiments WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .map_err(|e| e.to_string())
    }

    /// What the database holds of a planned run: resume skips a done run, retries a failed one, and
    /// measures again one recorded under another definition (the file changed since).
    pub fn recorded(&self, experiment: i64, run: &PlannedRun, definition: &str) -> Recorded {
        let row = self
            .conn
            .query_row(
                "SELECT status, definition FROM runs WHERE experiment_id = ?1 AND cell = ?2 AND repetition = ?3",
                params![experiment, run.cell, run.repetition],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
            )
            .optional()
            .ok()
            .flatten();
        match row {
            None => Recorded::Nothing,
            // Runs stored before definitions were kept count as what the file says now.
            Some((_, Some(d))) if d != definition => Recorded::OtherDefinition,
            Some((status, _)) if status == "ok" || status == "failures" => Recorded::Done,
            Some(_) => Recorded::Failed,
        }
    }

    /// Runs of the experiment that its plan no longer has (cells or repetitions removed from the file):
    /// kept in the database; those of an older definition of their cell are left out of statistics.
    pub fn orphans(&self, experiment: i64, plan: &[PlannedRun]) -> Result<usize, String> {
        let planned: std::collections::HashSet<(&str, u32)> = plan
            .iter()
            .map(|r| (r.cell.as_str(), r.repetition))
            .collect();
        let mut stmt = self
            .conn
            .prepare("SELECT cell, repetition FROM runs WHERE experiment_id = ?1")
            .map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map([experiment], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?))
            })
            .map_err(|e| e.to_string())?;
        let mut n = 0;
        for row in rows {
            let (cell, repetition) = row.map_err(|e| e.to_string())?;
            if !planned.contains(&(cell.as_str(), repetition)) {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Stores one run (replacing an earlier attempt of it) in a single transaction.
    pub fn record(
        &mut self,
        experiment: i64,
        (run, definition): (&PlannedRun, &str),
        started_at: &str,
        outcome: Result<&RunResult, &str>,
        elastic: Option<&ElasticOutcome>,
        max_failed_share: f64,
    ) -> Result<(), String> {
        let tx = self.conn.transaction().map_err(|e| e.to_string())?;
        tx.execute(
            "DELETE FROM runs WHERE experiment_id = ?1 AND cell = ?2 AND repetition = ?3",
            params![experiment, run.cell, run.repetition],
        )
        .map_err(|e| e.to_string())?;
        let params_json = serde_json::to_string(&run.params).unwrap_or_default();
        let measured = outcome.ok().and_then(|r| r.phases.last());
        let (status, error) = match outcome {
            Ok(r) if r.interrupted => ("interrupted", None),
            Ok(_) => match measured
                .and_then(|p| p.failure().or_else(|| p.failure_warning(max_failed_share)))
            {
                Some(warning) => ("failures", Some(warning)),
                None => ("ok", None),
            },
            Err(e) => ("failed", Some(e.to_string())),
        };
        let result_json = outcome
            .ok()
            .map(|r| serde_json::to_string(r).unwrap_or_default());
        tx.execute(
            "INSERT INTO runs (experiment_id, cell, repetition, database, configuration, workload,
                params, status, error, started_at, finished_at, tool_version, git_commit, host,
                duration_s, throughput_ops_s, ok, failed, bounded_by, client_bound, space_bytes,
                bytes_per_record, result, definition, bytes_per_record_as_inserted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
            params![
                experiment,
                run.cell,
                run.repetition,
                run.database,
                run.configuration,
                run.workload,
                params_json,
                status,
                error,
                started_at,
                now(),
                outcome.ok().map(|r| r.tool.version.clone()),
                outcome.ok().map(|r| r.tool.git_commit.clone()),
                outcome.ok().map(|r| r.host.hostname.clone()),
                measured.map(|p| p.duration_s),
                measured.map(scalebench_report::cells::measured_rate),
                measured.map(|p| p.totals.ok as i64),
                measured.map(|p| p.totals.failed as i64),
                measured.and_then(|p| p.bounded_by.as_ref()).map(|v| v.bounded_by.clone()),
                measured.and_then(|p| p.bounded_by.as_ref()).map(|v| v.client_bound),
                measured.and_then(|p| p.space.as_ref()).map(|s| s.total_bytes as i64),
                measured.and_then(|p| p.space.as_ref()).and_then(|s| s.per_record()),
                result_json,
                definition,
                measured
                    .and_then(|p| p.space.as_ref())
                    .and_then(|s| s.as_inserted_per_record()),
            ],
        )
        .map_err(|e| e.to_string())?;
        let id = tx.last_insert_rowid();
        if let Some(o) = elastic {
            insert_elastic(&tx, id, o)?;
        }
        if let Ok(r) = outcome {
            insert_phases(&tx, id, r)?;
        }
        tx.commit().map_err(|e| e.to_string())
    }

    /// Experiment names with their run counts (ok, with failures above the threshold, failed,
    /// interrupted).
    pub fn experiments(&self) -> Result<Vec<(String, [u64; 4])>, String> {
        let mut st = self
            .conn
            .prepare(
                "SELECT e.name,
                    COALESCE(SUM(r.status = 'ok'), 0), COALESCE(SUM(r.status = 'failures'), 0),
                    COALESCE(SUM(r.status = 'failed'), 0), COALESCE(SUM(r.status = 'interrupted'), 0)
                 FROM experiments e LEFT JOIN runs r ON r.experiment_id = e.id
                 GROUP BY e.id ORDER BY e.id",
            )
            .map_err(|e| e.to_string())?;
        let rows = st
            .query_map([], |r| {
                let n = |i| r.get::<_, u64>(i);
                Ok((r.get::<_, String>(0)?, [n(1)?, n(2)?, n(3)?, n(4)?]))
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
    }

    /// The runs of an experiment in plan order (cell, repetition); a figure edited out of its range
    /// (a negative or infinite rate or size) is an error, never exported.
    pub fn runs(&self, experiment: &str, with_result: bool) -> Result<Vec<StoredRun>, String> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.cell, r.repetition, r.status, r.error, r.throughput_ops_s, r.bounded_by,
                        r.client_bound, r.bytes_per_record, CASE WHEN ?2 THEN r.result END,
                        r.ok, r.failed, r.database, r.configuration, r.workload, r.params,
                        r.bytes_per_record_as_inserted
                 FROM runs r JOIN experiments e ON e.id = r.experiment_id
                 WHERE e.name = ?1
                   -- Only runs of the cell's current definition: one statistic never mixes a changed
                   -- file's runs with those it orphaned.
                   AND (r.definition IS NULL OR r.definition = (
                        SELECT l.definition FROM runs l
                        WHERE l.experiment_id = r.experiment_id AND l.cell = r.cell
                        ORDER BY l.id DESC LIMIT 1))
                 ORDER BY r.id",
            )
            .map_err(|e| e.to_string())?;
        let rows = st
            .query_map(params![experiment, with_result], |r| {
                Ok(StoredRun {
                    cell: r.get(0)?,
                    repetition: r.get::<_, u32>(1)?,
                    status: r.get(2)?,
                    error: r.get(3)?,
                    throughput_ops_s: measure(r, 4, "throughput_ops_s")?,
                    bounded_by: r.get(5)?,
                    client_bound: r.get::<_, Option<bool>>(6)?.unwrap_or(false),
                    bytes_per_record: measure(r, 7, "bytes_per_record")?,
                    result: r.get(8)?,
                    ok: r.get::<_, Option<u64>>(9)?,
                    failed: r.get::<_, Option<u64>>(10)?,
                    database: r.get(11)?,
                    configuration: r.get(12)?,
                    workload: r.get(13)?,
                    params: serde_json::from_str(&r.get::<_, String>(14)?).unwrap_or_default(),
                    bytes_per_record_as_inserted: measure(r, 15, "bytes_per_record_as_inserted")?,
                })
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
    }

    /// The experiment file as recorded (JSON).
    pub fn spec(&self, name: &str) -> Option<String> {
        self.conn
            .query_row(
                "SELECT spec FROM experiments WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten()
    }

    /// Per step, means over the counted repetitions of a cell's elastic transitions: (step, nodes
    /// before and after, stabilisation s, elasticity, transitions that never stabilised); empty when
    /// the cell has none.
    pub fn elastic_means(
        &self,
        experiment: &str,
        cell: &str,
        discard_first: u32,
    ) -> Vec<StepMeans> {
        self.per_first_column(
            "run_elastic",
            "x.step, MIN(x.nodes_before), MAX(x.nodes_after), AVG(x.stabilisation_s),
             AVG(x.elasticity), SUM(CASE WHEN x.stabilisation_s IS NULL THEN 1 ELSE 0 END),
             SUM(CASE WHEN json_extract(x.verdict, '$.passed') THEN 1 ELSE 0 END),
             COUNT(x.verdict)",
            experiment,
            cell,
            discard_first,
            |r| {
                Ok(StepMeans {
                    step: r.get::<_, u32>(0)?,
                    nodes_before: r.get::<_, i64>(1)? as usize,
                    nodes_after: r.get::<_, i64>(2)? as usize,
                    stabilisation_s: r.get(3)?,
                    elasticity: r.get(4)?,
                    never_stable: r.get::<_, u64>(5)?,
                    service_level: match r.get::<_, u64>(7)? {
                        0 => None,
                        judged => Some((r.get::<_, u64>(6)?, judged)),
                    },
                })
            },
        )
    }

    /// Dory's performance table of a cell: per stable size, the means over the counted repetitions
    /// of the mean and the deviation of request-set times, and of the scalability against the size
    /// before (where everything doubled).
    pub fn size_means(&self, experiment: &str, cell: &str, discard_first: u32) -> Vec<SizeMeans> {
        self.per_first_column(
            "run_sizes",
            "x.nodes, MIN(x.records), MIN(x.in_flight), MIN(x.set_size), AVG(x.mean_s),
             AVG(x.sd_s), AVG(x.scalability), COUNT(*)",
            experiment,
            cell,
            discard_first,
            |r| {
                Ok(SizeMeans {
                    nodes: r.get::<_, i64>(0)? as usize,
                    records: r.get::<_, u64>(1)?,
                    in_flight: r.get::<_, u64>(2)?,
                    set_size: r.get::<_, u64>(3)?,
                    mean_s: r.get(4)?,
                    sd_s: r.get(5)?,
                    scalability: r.get(6)?,
                    runs: r.get::<_, u64>(7)?,
                })
            },
        )
    }

    /// `columns` of per-run table `table` (as `x`) over the counted repetitions of cell `cell` of
    /// `experiment` (those after its first `discard_first` that ran), grouped and ordered by the
    /// first column, each row made by `row`; none where the store cannot say (a file from before
    /// the table, a failed read).
    fn per_first_column<T>(
        &self,
        table: &str,
        columns: &str,
        experiment: &str,
        cell: &str,
        discard_first: u32,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Vec<T> {
        let query = || -> rusqlite::Result<Vec<T>> {
            let mut st = self.conn.prepare(&format!(
                "SELECT {columns} FROM {table} x JOIN runs r ON r.id = x.run_id
                 JOIN experiments e ON e.id = r.experiment_id
                 WHERE e.name = ?1 AND r.cell = ?2 AND r.repetition > ?3 AND r.status = 'ok'
                 GROUP BY 1 ORDER BY 1"
            ))?;
            let rows = st.query_map(params![experiment, cell, discard_first], row)?;
            rows.collect()
        };
        query().unwrap_or_default()
    }

    /// The elastic transitions of an experiment, in run order.
    pub fn elastic_runs(&self, experiment: &str) -> Result<Vec<ElasticRow>, String> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.cell, r.repetition, x.action, x.nodes_before, x.nodes_after,
                        x.stabilisation_s, x.elasticity, x.events, x.step, x.verdict
                 FROM run_elastic x JOIN runs r ON r.id = x.run_id
                 JOIN experiments e ON e.id = r.experiment_id
                 WHERE e.name = ?1 ORDER BY r.id, x.step",
            )
            .map_err(|e| e.to_string())?;
        let rows = st
            .query_map([experiment], |r| {
                Ok(ElasticRow {
                    cell: r.get(0)?,
                    repetition: r.get::<_, u32>(1)?,
                    action: r.get(2)?,
                    nodes_before: r.get(3)?,
                    nodes_after: r.get(4)?,
                    stabilisation_s: r.get(5)?,
                    elasticity: r.get(6)?,
                    events: r.get(7)?,
                    step: r.get::<_, u32>(8)?,
                    verdict: r.get(9)?,
                })
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
    }

    pub fn has_experiment(&self, name: &str) -> bool {
        self.conn
            .query_row("SELECT 1 FROM experiments WHERE name = ?1", [name], |_| {
                Ok(())
            })
            .optional()
            .ok()
            .flatten()
            .is_some()
    }
}

/// What an elastic run adds to its record: its transitions (one per step) and the table of its
/// stable sizes.
#[derive(Debug, Clone, Default)]
pub struct ElasticOutcome {
    pub transitions: Vec<ElasticRecord>,
    pub sizes: Vec<scalebench_elastic::SizeRow>,
}

impl ElasticOutcome {
    /// Whether a transition's event missed the service level it was judged against.
    pub fn missed_service_level(&self) -> bool {
        self.transitions.iter().any(|t| t.passed() == Some(false))
    }
}

/// One transition of an elastic run.
#[derive(Debug, Clone)]
pub struct ElasticRecord {
    pub step: u32,
    pub action: String,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub stabilisation_s: Option<f64>,
    pub elasticity: Option<f64>,
    /// JSON texts.
    pub events: String,
    pub scores: String,
    /// The event against the service level, when one was given (JSON).
    pub verdict: Option<String>,
}

impl ElasticRecord {
    /// Whether the event met the service level (None: none was given).
    pub fn passed(&self) -> Option<bool> {
        let v: serde_json::Value = serde_json::from_str(self.verdict.as_deref()?).ok()?;
        v["passed"].as_bool()
    }
}

pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// One row per sample for the host and one per watched process; `prefix` names another host's rows
/// An elastic run's transitions and stable sizes, beside its run `id`.
fn insert_elastic(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    o: &ElasticOutcome,
) -> Result<(), String> {
    for e in &o.transitions {
        tx.execute(
            "INSERT INTO run_elastic (run_id, action, nodes_before, nodes_after, stabilisation_s,
                elasticity, events, scores, step, verdict)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                id,
                e.action,
                e.nodes_before as i64,
                e.nodes_after as i64,
                e.stabilisation_s,
                e.elasticity,
                e.events,
                e.scores,
                e.step,
                e.verdict,
            ],
        )
        .map_err(|e| e.to_string())?;
    }
    for s in &o.sizes {
        tx.execute(
            "INSERT INTO run_sizes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id,
                s.nodes as i64,
                s.records as i64,
                s.in_flight as i64,
                s.set_size as i64,
                s.sets as i64,
                s.mean_s,
                s.sd_s,
                s.scalability,
            ],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Each phase's operations, intervals and resource series, beside its run `id`.
fn insert_phases(tx: &rusqlite::Transaction<'_>, id: i64, r: &RunResult) -> Result<(), String> {
    for p in &r.phases {
        for (name, o) in &p.operations {
            let l = o.latency.as_ref();
            tx.execute(
                "INSERT INTO run_operations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    id,
                    p.phase.name(),
                    name,
                    o.ok as i64,
                    o.failed_total() as i64,
                    o.throughput_ops_s,
                    l.map(|l| l.mean_us),
                    l.map(|l| l.p50_us),
                    l.map(|l| l.p95_us),
                    l.map(|l| l.p99_us),
                    l.map(|l| l.p99_9_us),
                    l.map(|l| l.max_us),
                    l.map(|l| l.histogram.clone()),
                ],
            )
            .map_err(|e| e.to_string())?;
        }
        for i in &p.intervals {
            for (name, o) in &i.operations {
                tx.execute(
                    "INSERT INTO run_intervals VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        id,
                        p.phase.name(),
                        i.start_s,
                        name,
                        o.ok as i64,
                        o.failed as i64,
                        o.ops_s,
                        o.p50_us,
                        o.p99_us,
                        o.max_us
                    ],
                )
                .map_err(|e| e.to_string())?;
            }
        }
        if let Some(res) = &p.resources {
            insert_resources(tx, id, p.phase.name(), "", res)?;
        }
        for remote in &p.remote_resources {
            if let Some(res) = &remote.series {
                insert_resources(tx, id, p.phase.name(), &format!("{}/", remote.host), res)?;
            }
        }
    }
    Ok(())
}

/// (`db1/host`, `db1/cassandra`).
fn insert_resources(
    tx: &rusqlite::Transaction,
    run: i64,
    phase: &str,
    prefix: &str,
    res: &scalebench_monitor::ResourceSeries,
) -> Result<(), String> {
    let insert = |t_s: f64, target: String, cpu: f64, rss: u64, read: f64, write: f64| {
        tx.execute(
            "INSERT INTO run_resources VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![run, phase, t_s, target, cpu, rss as i64, read, write],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    for s in &res.samples {
        let busy = (1.0 - s.host.cpu_idle - s.host.cpu_iowait) * res.cores as f64;
        let h = &s.host;
        insert(
            s.t_s,
            format!("{prefix}host"),
            busy,
            h.mem_used_bytes,
            h.disk_read_s,
            h.disk_write_s,
        )?;
        for ps in &s.processes {
            insert(
                s.t_s,
                format!("{prefix}{}", ps.name),
                ps.cpu_cores,
                ps.rss_bytes,
                ps.read_s,
                ps.write_s,
            )?;
        }
    }
    Ok(())
}

/// Column `i` of row `r`, a measured rate or size: absent, or finite and not negative (a results
/// database edited to `-1e308` is refused when read, naming the column and the value).
fn measure(r: &rusqlite::Row<'_>, i: usize, column: &str) -> rusqlite::Result<Option<f64>> {
    match r.get::<_, Option<f64>>(i)? {
        Some(v) if !(v.is_finite() && v >= 0.0) => Err(rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Real,
            format!("runs.{column} = {v:e} is out of range (finite, zero or more)").into(),
        )),
        v => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::Store;

    /// Where [`one_process_opens_the_database`] opens a database, when this test binary runs it as
    /// a process of its own.
    const OPEN_THIS: &str = "SCALEBENCH_TEST_STORE_OPEN";

    /// Run as a child process by the test below (a no-op in the test run itself).
    #[test]
    fn one_process_opens_the_database() {
        if let Ok(path) = std::env::var(OPEN_THIS) {
            // Opened and closed again and again: the last connection to close cleans up the WAL
            // under an exclusive lock while the others open.
            for _ in 0..25 {
                Store::open(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    /// Experiments started at once on a new results database all open it: none is told
    /// "database is locked" (CI saw it once with the busy timeout set: SQLite refuses a lock
    /// escalation at once where waiting could deadlock, and switching a new database to WAL is
    /// one). Processes, since SQLite's file locks are the processes'.
    #[test]
    fn processes_opening_a_new_database_at_once_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::env::current_exe().unwrap();
        for round in 0..8 {
            let path = dir.path().join(format!("results-{round}.db"));
            let children: Vec<_> = (0..4)
                .map(|_| {
                    std::process::Command::new(&me)
                        .args([
                            "--exact",
                            "experiment::store::tests::one_process_opens_the_database",
                        ])
                        .args(["--test-threads", "1", "--nocapture"])
                        .env(OPEN_THIS, &path)
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for child in children {
                let o = child.wait_with_output().unwrap();
                assert!(
                    o.status.success(),
                    "round {round}: {}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
    }
}
