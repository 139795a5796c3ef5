//! `sqlite:///path/file.db`: the embedded default (rusqlite, SQLite bundled).
//!
//! Schema as YCSB's JDBC binding: table `usertable`, primary key `YCSB_KEY`, columns `FIELD0..FIELDn`.
//! SQLite is synchronous and in-process: each operation runs to completion on the worker's thread, so
//! parallelism comes from `--threads` (one connection each), not from `--concurrency`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rusqlite::{params_from_iter, Connection, ErrorCode, OptionalExtension};
use scalebench_workload::{FailureClass, FieldSet, Fields, Modification, OpError, Operation};

use crate::deadline::{call_deadline, call_deadline_passed};
use crate::info::BindingInfo;
use crate::sql::{dialect_statements, Dialect, DialectStatement};
use crate::{Binding, BindingConfig, BindingError, BindingFactory, TransactionControl};

pub const INFO: BindingInfo = BindingInfo {
    name: "sqlite",
    schemes: &["sqlite"],
    summary:
        "embedded SQLite (bundled); the default database, in a temporary file unless --db is given",
    url_example: "sqlite:///path/to/file.db",
    options: Options::SET,
    creates_table_on_load: true,
    reads: "one database file; every connection reads the last committed write (no replicas)",
    pipelining: crate::info::Pipelining::Not("an embedded database runs each call on its worker's thread, with no connection"),
    ..BindingInfo::SQL_DATABASE
};

binding_options! {
    pub struct Options {
        journal_mode: JournalMode = "WAL" => "PRAGMA journal_mode",
        synchronous: Synchronous = "NORMAL" => "PRAGMA synchronous (durability of each commit)",
        busy_timeout: Duration = "10s" => "how long a writer waits for another connection's lock before failing as timeout",
        cache_size_kib: u64 = "16384" => "page cache per connection in KiB (PRAGMA cache_size)",
    }
}

option_choice! {
    pub enum JournalMode {
        Wal = "WAL",
        Delete = "DELETE",
        Truncate = "TRUNCATE",
        Persist = "PERSIST",
        Memory = "MEMORY",
        Off = "OFF",
    }
}

option_choice! {
    pub enum Synchronous {
        Off = "OFF",
        Normal = "NORMAL",
        Full = "FULL",
        Extra = "EXTRA",
    }
}

pub struct SqliteFactory {
    path: PathBuf,
    table: String,
    /// The key's column (`YCSB_KEY`, or the workload's `keycolumn`).
    key: String,
    columns: Vec<String>,
    /// Each column as read back: typed columns cast to text.
    selects: Vec<String>,
    types: Vec<scalebench_workload::FieldType>,
    journal_mode: JournalMode,
    synchronous: Synchronous,
    busy_timeout: Duration,
    cache_size_kib: u64,
    /// A workload file's statements, by named operation.
    statements: Vec<Option<DialectStatement>>,
    /// A workload file's increments: the columns each adds to, and its UPDATE.
    increments: Vec<(Vec<usize>, String)>,
}

/// Where a value of a column of type `t` goes in a statement: `?n` (`?` for `n` 0), or for a blob
/// `unhex(...)` of it (its text is hex; SQLite keeps the bytes).
fn slot(t: scalebench_workload::FieldType, n: usize) -> String {
    let p = if n == 0 { "?".to_string() } else { format!("?{n}") };
    match t {
        scalebench_workload::FieldType::Blob { .. } => format!("unhex({p})"),
        _ => p,
    }
}

impl SqliteFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let path = path_of(config)?;
        let options = Options::read(INFO.name, &config.options)?;
        let columns: Vec<String> = config
            .schema
            .field_names
            .iter()
            .map(|f| Dialect::Sqlite.identifier(f))
            .collect();
        let types = config.schema.field_types.to_vec();
        let factory = SqliteFactory {
            table: config.schema.table.clone(),
            key: Dialect::Sqlite.key(&config.schema),
            selects: columns
                .iter()
                .zip(&types)
                .map(|(c, t)| Dialect::Sqlite.select(c, *t))
                .collect(),
            columns,
            types,
            journal_mode: options.journal_mode,
            synchronous: options.synchronous,
            busy_timeout: busy_timeout(options.busy_timeout)?,
            cache_size_kib: options.cache_size_kib,
            statements: dialect_statements(&config.schema, Dialect::Sqlite),
            increments: crate::sql::increments(&config.schema, Dialect::Sqlite),
            path,
        };
        // Only a phase that creates the table may create the file: a run against a mistyped path
        // must not leave an empty database behind.
        if !config.create_schema && !factory.path.exists() {
            return Err(BindingError::Schema(format!(
                "database file '{}' does not exist: run the load phase first (scalebench load, or run --load)",
                factory.path.display()
            )));
        }
        let conn = factory.connection()?;
        if config.drop_schema {
            conn.execute_batch(&format!("DROP TABLE IF EXISTS {}", factory.table))
                .map_err(|e| {
                    BindingError::Schema(format!(
                        "cannot drop table '{}' in '{}': {e}",
                        factory.table,
                        factory.path.display()
                    ))
                })?;
        }
        if config.create_schema {
            let cols: Vec<String> = factory
                .columns
                .iter()
                .zip(&factory.types)
                .map(|(c, t)| format!("{c} {}", Dialect::Sqlite.column_type(*t)))
                .collect();
            conn.execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS {} ({} VARCHAR(255) PRIMARY KEY, {}) WITHOUT ROWID;",
                factory.table,
                factory.key,
                cols.join(", ")
            ))
            .map_err(|e| BindingError::Schema(format!("cannot create table '{}' in '{}': {e}", factory.table, factory.path.display())))?;
            let st = crate::sql::Statements::new(&factory.table, &config.schema, Dialect::Sqlite);
            for index in st.create_indexes(&config.schema.indexes) {
                conn.execute_batch(&index).map_err(|e| {
                    BindingError::Schema(format!("cannot index '{}': {e}", factory.table))
                })?;
            }
        }
        factory.check_table(&conn)?;
        Ok(factory)
    }

    fn connection(&self) -> Result<Connection, BindingError> {
        let conn = Connection::open(&self.path).map_err(|e| BindingError::Connect {
            url: format!("sqlite://{}", self.path.display()),
            reason: e.to_string(),
        })?;
        conn.busy_timeout(self.busy_timeout).map_err(other)?;
        // journal_mode returns a row; the others do not.
        let _: String = conn
            .query_row(
                &format!("PRAGMA journal_mode={}", self.journal_mode.word()),
                [],
                |r| r.get(0),
            )
            .map_err(other)?;
        conn.execute_batch(&format!(
            "PRAGMA synchronous={}; PRAGMA cache_size=-{};",
            self.synchronous.word(), self.cache_size_kib
        ))
        .map_err(other)?;
        conn.set_prepared_statement_cache_capacity(self.columns.len() * 2 + 16);
        // SQLite runs on the worker thread, where no timer can interrupt it: a statement that runs
        // past the executor's call deadline (operation timeout, end of grace) interrupts itself.
        conn.progress_handler(STEPS_PER_DEADLINE_CHECK, Some(call_deadline_passed));
        Ok(conn)
    }

    fn check_table(&self, conn: &Connection) -> Result<(), BindingError> {
        let sql: Option<String> = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type='table' AND name=?1 COLLATE NOCASE",
                [&self.table],
                |r| r.get(0),
            )
            .optional()
            .map_err(other)?;
        let Some(_) = sql else {
            return Err(BindingError::Schema(format!(
                "table '{}' does not exist in '{}': run the load phase first (scalebench load, or run --load)",
                self.table,
                self.path.display()
            )));
        };
        let mut stmt = conn
            .prepare(&format!("PRAGMA table_info({})", self.table))
            .map_err(other)?;
        let existing: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(other)?
            .collect::<Result<_, _>>()
            .map_err(other)?;
        if let Some(missing) = self
            .columns
            .iter()
            .map(|c| c.trim_matches('"'))
            .find(|c| !existing.iter().any(|e| e.eq_ignore_ascii_case(c)))
        {
            return Err(BindingError::Schema(format!(
                "table '{}' in '{}' has no column {missing}: it was created for another fieldcount or fieldnameprefix",
                self.table,
                self.path.display()
            )));
        }
        Ok(())
    }
}

fn path_of(config: &BindingConfig) -> Result<PathBuf, BindingError> {
    let u = config.url.url();
    let path = match u.host_str() {
        Some(host) if !host.is_empty() => format!("{host}{}", u.path()),
        _ => u.path().to_string(),
    };
    if path.is_empty() || path == "/" {
        return Err(BindingError::Config(format!(
            "invalid database URL '{}': expected sqlite:///absolute/path.db or sqlite://relative/path.db",
            config.url.redacted()
        )));
    }
    Ok(PathBuf::from(path))
}

/// Virtual-machine steps between two looks at the call deadline: a few microseconds of work.
const STEPS_PER_DEADLINE_CHECK: i32 = 1000;

/// `busy_timeout`, bounded by what SQLite takes (milliseconds in a 32-bit int).
fn busy_timeout(wait: Duration) -> Result<Duration, BindingError> {
    if wait.as_millis() > i32::MAX as u128 {
        return Err(BindingError::Config(format!(
            "invalid value '{}' for property 'sqlite.busy_timeout': expected at most {} ms (about 24 days)",
            humantime::format_duration(wait),
            i32::MAX
        )));
    }
    Ok(wait)
}

fn other(e: rusqlite::Error) -> BindingError {
    BindingError::Other(e.to_string())
}

fn classify(e: rusqlite::Error) -> OpError {
    let class = match e.sqlite_error_code() {
        // A lock wait that outlasted the busy timeout, or a statement interrupted at its deadline.
        Some(ErrorCode::DatabaseBusy)
        | Some(ErrorCode::DatabaseLocked)
        | Some(ErrorCode::OperationInterrupted) => FailureClass::Timeout,
        Some(ErrorCode::ConstraintViolation) => FailureClass::Conflict,
        Some(ErrorCode::CannotOpen) | Some(ErrorCode::ReadOnly) | Some(ErrorCode::DiskFull) => {
            FailureClass::Unavailable
        }
        _ => FailureClass::Other,
    };
    OpError::new(class, e.to_string())
}

impl BindingFactory for SqliteFactory {
    type Binding = SqliteBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, _worker: usize) -> Result<SqliteBinding, BindingError> {
        let conn = self.connection()?;
        // The file's own statements, checked once per connection (bad SQL is bad input).
        for s in self.statements.iter().flatten() {
            conn.prepare_cached(&s.text).map_err(|e| {
                BindingError::Config(format!("operation '{}': its sql does not prepare: {e}", s.name))
            })?;
        }
        let t = &self.table;
        let k = &self.key;
        let all = self.columns.join(", ");
        let selected = self.selects.join(", ");
        let placeholders: Vec<String> = self.types.iter().map(|t| slot(*t, 0)).collect();
        let placeholders = placeholders.join(", ");
        Ok(SqliteBinding {
            read_all: format!("SELECT {selected} FROM {t} WHERE {k} = ?1"),
            read_one: self.selects.iter().map(|c| format!("SELECT {c} FROM {t} WHERE {k} = ?1")).collect(),
            scan_all: format!("SELECT {k}, {selected} FROM {t} WHERE {k} >= ?1 ORDER BY {k} LIMIT ?2"),
            scan_one: self
                .selects
                .iter()
                .map(|c| format!("SELECT {k}, {c} FROM {t} WHERE {k} >= ?1 ORDER BY {k} LIMIT ?2"))
                .collect(),
            update_one: self.columns.iter().zip(&self.types).map(|(c, ty)| format!("UPDATE {t} SET {c} = {} WHERE {k} = ?2", slot(*ty, 1))).collect(),
            select_all: format!("SELECT {k}, {selected} FROM {t}"),
            select_one: self.selects.iter().map(|c| format!("SELECT {k}, {c} FROM {t}")).collect(),
            insert: format!("INSERT INTO {t} ({k}, {all}) VALUES (?, {placeholders})"),
            delete: format!("DELETE FROM {t} WHERE {k} = ?1"),
            table: t.clone(),
            key: k.clone(),
            columns: self.columns.clone(),
            types: self.types.clone(),
            statements: self.statements.clone(),
            increments: self.increments.clone(),
            busy_timeout: self.busy_timeout,
            lock_wait: self.busy_timeout,
            conn,
        })
    }

    fn batches_inserts(&self) -> bool {
        true
    }

    fn blocks_its_thread(&self) -> bool {
        true
    }
}

/// A row of the key and `n - 1` columns (every column, or the one `first`) as the key and its
/// fields.
fn keyed(row: &rusqlite::Row<'_>, n: usize, first: Option<usize>) -> Result<(String, Fields), OpError> {
    let mut fields = Vec::with_capacity(n - 1);
    for c in 1..n {
        let v: Option<String> = row.get(c).map_err(classify)?;
        fields.push((first.unwrap_or(c - 1), v.unwrap_or_default()));
    }
    Ok((row.get(0).map_err(classify)?, fields))
}

pub struct SqliteBinding {
    conn: Connection,
    table: String,
    key: String,
    types: Vec<scalebench_workload::FieldType>,
    columns: Vec<String>,
    read_all: String,
    read_one: Vec<String>,
    scan_all: String,
    scan_one: Vec<String>,
    update_one: Vec<String>,
    /// `SELECT key, columns FROM t` (every column, or one), for a multi-get's `WHERE`.
    select_all: String,
    select_one: Vec<String>,
    insert: String,
    delete: String,
    statements: Vec<Option<DialectStatement>>,
    increments: Vec<(Vec<usize>, String)>,
    /// `busy_timeout`, and the lock wait currently set on the connection (shorter near a deadline).
    busy_timeout: Duration,
    lock_wait: Duration,
}

impl SqliteBinding {
    /// Bounds this call's lock waits by the call deadline (statements are bounded by the progress
    /// handler), so a locked file fails the operation as a timeout instead of blocking the thread.
    fn bound_lock_wait(&mut self) -> Result<(), OpError> {
        let wait = match call_deadline() {
            Some(d) => self
                .busy_timeout
                .min(d.saturating_duration_since(Instant::now())),
            None => self.busy_timeout,
        };
        if wait.as_millis() != self.lock_wait.as_millis() {
            self.conn.busy_timeout(wait).map_err(classify)?;
            self.lock_wait = wait;
        }
        Ok(())
    }

    fn insert_row(&self, key: &str, values: &Fields) -> Result<(), OpError> {
        if values.len() == self.columns.len()
            && values.iter().enumerate().all(|(i, (f, _))| *f == i)
        {
            let mut stmt = self.conn.prepare_cached(&self.insert).map_err(classify)?;
            let params = std::iter::once(key).chain(values.iter().map(|(_, v)| v.as_str()));
            stmt.execute(params_from_iter(params)).map_err(classify)?;
        } else {
            // A partial record: name the columns given.
            let cols: Vec<&str> = values
                .iter()
                .map(|(f, _)| self.columns[*f].as_str())
                .collect();
            let slots: String = values
                .iter()
                .map(|(f, _)| format!(", {}", slot(self.types[*f], 0)))
                .collect();
            let sql = format!(
                "INSERT INTO {} ({}, {}) VALUES (?{slots})",
                self.table,
                self.key,
                cols.join(", "),
            );
            let params = std::iter::once(key).chain(values.iter().map(|(_, v)| v.as_str()));
            self.conn
                .execute(&sql, params_from_iter(params))
                .map_err(classify)?;
        }
        Ok(())
    }
}

impl Binding for SqliteBinding {
    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        out.clear();
        let (sql, first) = match fields {
            FieldSet::All => (&self.read_all, None),
            FieldSet::One(i) => (&self.read_one[i], Some(i)),
        };
        let mut stmt = self.conn.prepare_cached(sql).map_err(classify)?;
        let n = stmt.column_count();
        let found = stmt
            .query_row([key], |row| {
                for c in 0..n {
                    let v: Option<String> = row.get(c)?;
                    out.push((first.unwrap_or(c), v.unwrap_or_default()));
                }
                Ok(())
            })
            .optional()
            .map_err(classify)?;
        found.ok_or_else(|| OpError::new(FailureClass::NotFound, format!("no record {key}")))
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        out.clear();
        let (sql, first) = match fields {
            FieldSet::All => (&self.scan_all, None),
            FieldSet::One(i) => (&self.scan_one[i], Some(i)),
        };
        let mut stmt = self.conn.prepare_cached(sql).map_err(classify)?;
        let n = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params![start_key, count as i64])
            .map_err(classify)?;
        while let Some(row) = rows.next().map_err(classify)? {
            out.push(keyed(row, n, first)?);
        }
        Ok(())
    }

    /// One `SELECT ... WHERE key IN (?, ...)`, prepared once per number of keys.
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        out.clear();
        let (select, first) = match fields {
            FieldSet::All => (&self.select_all, None),
            FieldSet::One(i) => (&self.select_one[i], Some(i)),
        };
        let sql = format!(
            "{select} WHERE {} IN ({})",
            self.key,
            vec!["?"; keys.len()].join(", ")
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(classify)?;
        let n = stmt.column_count();
        let mut rows = stmt
            .query(params_from_iter(keys.iter()))
            .map_err(classify)?;
        while let Some(row) = rows.next().map_err(classify)? {
            out.push(keyed(row, n, first)?);
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        let changed = if let [(f, v)] = values.as_slice() {
            let mut stmt = self
                .conn
                .prepare_cached(&self.update_one[*f])
                .map_err(classify)?;
            stmt.execute([v.as_str(), key]).map_err(classify)?
        } else {
            let sets: Vec<String> = values
                .iter()
                .map(|(f, _)| format!("{} = {}", self.columns[*f], slot(self.types[*f], 0)))
                .collect();
            let sql = format!(
                "UPDATE {} SET {} WHERE {} = ?",
                self.table,
                sets.join(", "),
                self.key
            );
            let mut stmt = self.conn.prepare_cached(&sql).map_err(classify)?;
            let params = values
                .iter()
                .map(|(_, v)| v.as_str())
                .chain(std::iter::once(key));
            stmt.execute(params_from_iter(params)).map_err(classify)?
        };
        if changed == 0 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        self.insert_row(key, values)
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        // One transaction per batch: one fsync instead of one per record.
        self.conn.execute_batch("BEGIN").map_err(classify)?;
        for r in records {
            if let Err(e) = self.insert_row(&r.key, &r.values) {
                let _ = self.conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        self.conn.execute_batch("COMMIT").map_err(|e| {
            let _ = self.conn.execute_batch("ROLLBACK");
            classify(e)
        })
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        let mut stmt = self.conn.prepare_cached(&self.delete).map_err(classify)?;
        match stmt.execute([key]).map_err(classify)? {
            0 => Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            )),
            _ => Ok(()),
        }
    }

    /// The updates in one transaction.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        crate::update_in_transaction(self, keys, values).await
    }

    /// BEGIN IMMEDIATE: the write lock taken first, so two transactions wait for each other
    /// instead of failing to upgrade a read lock.
    async fn transaction_control(&mut self, control: TransactionControl) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        let sql = match control {
            TransactionControl::Begin => "BEGIN IMMEDIATE",
            TransactionControl::Commit => "COMMIT",
            TransactionControl::Rollback => "ROLLBACK",
        };
        self.conn.execute_batch(sql).map_err(classify)
    }

    async fn increment(&mut self, key: &str, changes: &[Modification]) -> Result<(), OpError> {
        self.bound_lock_wait()?;
        let sql = crate::sql::increment_of(&self.increments, changes)?;
        let mut stmt = self.conn.prepare_cached(sql).map_err(classify)?;
        let amounts: Vec<String> = changes.iter().map(|m| m.change.amount()).collect();
        let params = amounts.iter().map(String::as_str).chain(std::iter::once(key));
        if stmt.execute(params_from_iter(params)).map_err(classify)? == 0 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        Ok(())
    }

    async fn statement(&mut self, statement: usize, params: &Fields) -> Result<u64, OpError> {
        self.bound_lock_wait()?;
        let Some(Some(s)) = self.statements.get(statement) else {
            return Err(OpError::new(FailureClass::Other, format!("no statement {statement}")));
        };
        let mut stmt = self.conn.prepare_cached(&s.text).map_err(classify)?;
        let values = params_from_iter(s.values(params));
        if stmt.column_count() == 0 {
            return Ok(stmt.execute(values).map_err(classify)? as u64);
        }
        let mut rows = stmt.query(values).map_err(classify)?;
        let mut n = 0;
        while rows.next().map_err(classify)?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}
