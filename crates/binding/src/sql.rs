//! SQL text shared by the relational bindings: YCSB's JDBC schema (`usertable`, `YCSB_KEY`, `FIELD0..`),
//! with typed columns where the workload's fields are typed (measurement records).

use scalebench_workload::statement::{Language, Param};
use scalebench_workload::{FieldSet, FieldType, Fields};

/// A workload file's statement as one dialect writes it: placeholders in the text, and which of
/// the operation's parameters each binds, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct DialectStatement {
    /// The operation's name, for errors.
    pub name: String,
    pub text: String,
    pub binds: Vec<usize>,
}

impl DialectStatement {
    /// The values to bind, in placeholder order, from the operation's parameters.
    pub fn values<'a>(&self, params: &'a Fields) -> Vec<&'a String> {
        self.binds.iter().map(|&i| &params[i].1).collect()
    }
}

/// The workload's statements (by named operation) in `dialect`: a column parameter with the
/// conversion its type needs (PostgreSQL), the key as text.
pub fn dialect_statements(
    schema: &crate::Schema,
    dialect: Dialect,
) -> Vec<Option<DialectStatement>> {
    schema
        .statements
        .iter()
        .map(|s| {
            let s = s.as_deref()?;
            let template = s.template(Language::Sql)?;
            let text = template.render(|n, i| match s.params[i] {
                Param::Key => dialect.nth(n),
                Param::Column(c) => dialect.param(n, schema.field_types[c]),
            });
            Some(DialectStatement {
                name: s.name.clone(),
                text,
                binds: template.occurrences(),
            })
        })
        .collect()
}

/// What differs between the SQL databases: parameters, column types, reading a column as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    MySql,
    Sqlite,
}

impl Dialect {
    /// A field's column name, quoted so that any word is a column (a workload file's `order` or
    /// `user`, keywords of SQL) and in the case the unquoted upper-case name of YCSB's JDBC schema
    /// resolves to: PostgreSQL folds unquoted names to lower case, MySQL and SQLite compare them
    /// without case. Names are letters, digits and '_' (checked by the workload).
    pub fn identifier(self, field: &str) -> String {
        match self {
            Dialect::Postgres => format!("\"{}\"", field.to_ascii_lowercase()),
            Dialect::MySql => format!("`{}`", field.to_ascii_uppercase()),
            Dialect::Sqlite => format!("\"{}\"", field.to_ascii_uppercase()),
        }
    }

    /// The key's column as statements name it: YCSB's `YCSB_KEY` (unquoted, as YCSB's JDBC
    /// binding creates it), or the workload's `keycolumn` quoted as a column is.
    pub fn key(self, schema: &crate::Schema) -> String {
        match &schema.key_column {
            None => "YCSB_KEY".into(),
            Some(k) => self.identifier(k),
        }
    }

    /// The n-th (1-based) parameter: `$n` (PostgreSQL) or `?`.
    fn nth(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::MySql | Dialect::Sqlite => "?".into(),
        }
    }

    /// The n-th parameter, for a column of type `t`. Values are sent as text: PostgreSQL is told to
    /// convert it (`$n::text::integer`); MySQL and SQLite convert text on their own. A blob's
    /// text is hex, decoded to its bytes by the database.
    fn param(self, n: usize, t: FieldType) -> String {
        match (self, t) {
            (Dialect::Postgres, FieldType::Blob { .. }) => format!("decode(${n}::text, 'hex')"),
            (Dialect::MySql, FieldType::Blob { .. }) => "UNHEX(?)".into(),
            (Dialect::Sqlite, FieldType::Blob { .. }) => "unhex(?)".into(),
            (Dialect::Postgres, t) if !t.is_text() => {
                format!("${n}::text::{}", self.column_type(t))
            }
            _ => self.nth(n),
        }
    }

    /// A column read back as text (a blob as lowercase hex).
    pub fn select(self, column: &str, t: FieldType) -> String {
        match (self, t) {
            (_, FieldType::Text { .. }) => column.to_string(),
            (Dialect::Postgres, FieldType::Blob { .. }) => format!("encode({column}, 'hex')"),
            (Dialect::MySql, FieldType::Blob { .. }) => format!("LOWER(HEX({column}))"),
            (Dialect::Sqlite, FieldType::Blob { .. }) => format!("lower(hex({column}))"),
            (Dialect::Postgres, _) => format!("{column}::text"),
            (Dialect::MySql, _) => format!("CAST({column} AS CHAR)"),
            (Dialect::Sqlite, _) => format!("CAST({column} AS TEXT)"),
        }
    }

    pub fn column_type(self, t: FieldType) -> std::borrow::Cow<'static, str> {
        match (self, t) {
            // SQLite has no exact decimal: the text is kept exact (what its decimal extension
            // computes on); NUMERIC would round it to a double's 15 digits.
            (Dialect::Sqlite, FieldType::Decimal { .. }) => "TEXT".into(),
            (Dialect::Postgres, FieldType::Decimal { precision, scale }) => {
                format!("NUMERIC({precision},{scale})").into()
            }
            (Dialect::MySql, FieldType::Decimal { precision, scale }) => {
                format!("DECIMAL({precision},{scale})").into()
            }
            (Dialect::MySql, FieldType::Blob { max_bytes }) if max_bytes > 65_535 => {
                "LONGBLOB".into()
            }
            (Dialect::Postgres, FieldType::Blob { .. }) => "BYTEA".into(),
            (_, FieldType::Blob { .. }) => "BLOB".into(),
            // PostgreSQL's `json` keeps the text as written (`jsonb` would reorder and respace
            // it); MariaDB's JSON is LONGTEXT checked by JSON_VALID; SQLite's JSON functions read
            // text.
            (
                Dialect::Postgres | Dialect::MySql,
                FieldType::List { .. } | FieldType::Map { .. },
            ) => "JSON".into(),
            (Dialect::Sqlite, FieldType::List { .. } | FieldType::Map { .. }) => "TEXT".into(),
            (d, t) => d.fixed_column_type(t).into(),
        }
    }

    fn fixed_column_type(self, t: FieldType) -> &'static str {
        match (self, t) {
            // MySQL's TEXT holds 65,535 bytes; values that may grow need MEDIUMTEXT (16 MB).
            (Dialect::MySql, FieldType::Text { max_len }) if max_len.is_none_or(|n| n > 65_535) => {
                "MEDIUMTEXT"
            }
            (_, FieldType::Text { .. }) => "TEXT",
            (_, FieldType::Int) => "INTEGER",
            (Dialect::Sqlite, FieldType::BigInt) => "INTEGER",
            (_, FieldType::BigInt) => "BIGINT",
            // MySQL's BOOLEAN is TINYINT(1); the workload writes 1 and 0, which all three read.
            (_, FieldType::Bool) => "BOOLEAN",
            (Dialect::Postgres, FieldType::Uuid) => "UUID",
            (_, FieldType::Uuid) => "CHAR(36)",
            (Dialect::Postgres, FieldType::Double) => "DOUBLE PRECISION",
            (Dialect::MySql, FieldType::Double) => "DOUBLE",
            (Dialect::Sqlite, FieldType::Double) => "REAL",
            (Dialect::Postgres, FieldType::Timestamp) => "TIMESTAMP(3)",
            (Dialect::MySql, FieldType::Timestamp) => "DATETIME(3)",
            // SQLite has no date type: the text is kept (its documented convention for dates).
            (Dialect::Sqlite, FieldType::Timestamp) => "TIMESTAMP",
            (
                _,
                FieldType::Decimal { .. }
                | FieldType::Blob { .. }
                | FieldType::List { .. }
                | FieldType::Map { .. },
            ) => {
                unreachable!("column_type's")
            }
        }
    }
}

/// Every statement a binding needs, built once per connection.
#[derive(Debug, Clone)]
pub struct Statements {
    pub table: String,
    /// The key's column ([`Dialect::key`]).
    pub key: String,
    pub columns: Vec<String>,
    pub types: Vec<FieldType>,
    pub dialect: Dialect,
    pub read_all: String,
    pub read_one: Vec<String>,
    pub scan_all: String,
    pub scan_one: Vec<String>,
    pub update_one: Vec<String>,
    pub update_all: String,
    pub insert: String,
    pub delete: String,
}

impl Statements {
    /// `columns` are the workload's field names, as [`Dialect::identifier`] quotes them
    /// (`field0` -> `FIELD0`, quoted).
    pub fn new(table: &str, schema: &crate::Schema, dialect: Dialect) -> Self {
        let columns: Vec<String> = schema
            .field_names
            .iter()
            .map(|f| dialect.identifier(f))
            .collect();
        let types: Vec<FieldType> = schema.field_types.to_vec();
        let p = |n| dialect.nth(n);
        let sel: Vec<String> = columns
            .iter()
            .zip(&types)
            .map(|(c, t)| dialect.select(c, *t))
            .collect();
        let all = sel.join(", ");
        let t = table;
        let k = dialect.key(schema);
        let mut st = Statements {
            read_all: format!("SELECT {all} FROM {t} WHERE {k} = {}", p(1)),
            read_one: sel
                .iter()
                .map(|c| format!("SELECT {c} FROM {t} WHERE {k} = {}", p(1)))
                .collect(),
            scan_all: format!(
                "SELECT {k}, {all} FROM {t} WHERE {k} >= {} ORDER BY {k} LIMIT {}",
                p(1),
                p(2)
            ),
            scan_one: sel
                .iter()
                .map(|c| {
                    format!(
                        "SELECT {k}, {c} FROM {t} WHERE {k} >= {} ORDER BY {k} LIMIT {}",
                        p(1),
                        p(2)
                    )
                })
                .collect(),
            update_one: Vec::new(),
            update_all: String::new(),
            insert: String::new(),
            delete: format!("DELETE FROM {t} WHERE {k} = {}", p(1)),
            table: t.to_string(),
            key: k.clone(),
            columns,
            types,
            dialect,
        };
        st.update_one = (0..st.columns.len())
            .map(|f| st.update_fields(&[f]))
            .collect();
        st.update_all = st.update_fields(&(0..st.columns.len()).collect::<Vec<_>>());
        st.insert = st.multi_row_insert(1);
        st
    }

    /// `INSERT INTO t (YCSB_KEY, FIELD0, ...) VALUES (...), (...)` for `rows` rows.
    pub fn multi_row_insert(&self, rows: usize) -> String {
        let per_row = self.columns.len() + 1;
        let values: Vec<String> = (0..rows)
            .map(|r| {
                let first = r * per_row + 1;
                let ps: Vec<String> = std::iter::once(self.dialect.nth(first))
                    .chain(
                        self.types
                            .iter()
                            .enumerate()
                            .map(|(i, t)| self.dialect.param(first + 1 + i, *t)),
                    )
                    .collect();
                format!("({})", ps.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO {} ({}, {}) VALUES {}",
            self.table,
            self.key,
            self.columns.join(", "),
            values.join(", ")
        )
    }

    /// `CREATE TABLE` with `YCSB_KEY VARCHAR(255) PRIMARY KEY` and one column per field, of the
    /// dialect's type for the field's type.
    pub fn create_table(&self, suffix: &str) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .zip(&self.types)
            .map(|(c, t)| format!("{c} {}", self.dialect.column_type(*t)))
            .collect();
        format!(
            "CREATE TABLE IF NOT EXISTS {} ({} VARCHAR(255) PRIMARY KEY, {}){suffix}",
            self.table,
            self.key,
            cols.join(", ")
        )
    }

    /// `CREATE INDEX` for each of the workload file's secondary indexes. MySQL indexes at most
    /// 3,072 bytes of a key: a text column that may be longer than 191 characters (4 bytes each)
    /// is indexed by its first 191.
    pub fn create_indexes(&self, indexes: &[scalebench_workload::index::Index]) -> Vec<String> {
        indexes
            .iter()
            .map(|ix| {
                let cols: Vec<String> = ix
                    .columns
                    .iter()
                    .map(|&c| match (self.dialect, self.types[c]) {
                        (Dialect::MySql, FieldType::Text { max_len })
                            if max_len.is_none_or(|n| n > 191) =>
                        {
                            format!("{}(191)", self.columns[c])
                        }
                        _ => self.columns[c].clone(),
                    })
                    .collect();
                format!(
                    "CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                    ix.name,
                    self.table,
                    cols.join(", ")
                )
            })
            .collect()
    }

    pub fn drop_table(&self) -> String {
        format!("DROP TABLE IF EXISTS {}", self.table)
    }

    /// `UPDATE t SET sets WHERE key = ?`: the key's parameter numbered after the sets' own.
    fn update_setting(&self, sets: &[String]) -> String {
        format!(
            "UPDATE {} SET {} WHERE {} = {}",
            self.table,
            sets.join(", "),
            self.key,
            self.dialect.nth(sets.len() + 1)
        )
    }

    /// An UPDATE of the given field indices, in order, key last.
    pub fn update_fields(&self, fields: &[usize]) -> String {
        let sets: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                format!(
                    "{} = {}",
                    self.columns[*f],
                    self.dialect.param(i + 1, self.types[*f])
                )
            })
            .collect();
        self.update_setting(&sets)
    }
}

impl Statements {
    /// `UPDATE t SET c = c + ?, ... WHERE key = ?`: the database adds each amount (a
    /// parameter of the column's type) to its column, atomically, nothing read first. SQLite adds
    /// to a decimal kept as text in a double's arithmetic, printed back with its scale's decimals.
    pub fn increment(&self, columns: &[usize]) -> String {
        let sets: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let col = &self.columns[c];
                let amount = self.dialect.param(i + 1, self.types[c]);
                match (self.dialect, self.types[c]) {
                    (Dialect::Sqlite, FieldType::Decimal { scale, .. }) => {
                        format!("{col} = printf('%.{scale}f', {col} + {amount})")
                    }
                    _ => format!("{col} = {col} + {amount}"),
                }
            })
            .collect();
        self.update_setting(&sets)
    }
}

impl Statements {
    /// `SELECT key, columns FROM t WHERE key IN (...)` for `n` keys: a multi-get.
    pub fn select_keys(&self, fields: FieldSet, n: usize) -> String {
        let sel: Vec<String> = fields
            .indices(self.columns.len())
            .map(|c| self.dialect.select(&self.columns[c], self.types[c]))
            .collect();
        let params: Vec<String> = (1..=n).map(|i| self.dialect.nth(i)).collect();
        format!(
            "SELECT {k}, {} FROM {} WHERE {k} IN ({})",
            sel.join(", "),
            self.table,
            params.join(", "),
            k = self.key
        )
    }
}

/// Each of the schema's increments: the columns it adds to and its UPDATE in `dialect`.
pub fn increments(schema: &crate::Schema, dialect: Dialect) -> Vec<(Vec<usize>, String)> {
    let st = Statements::new(&schema.table, schema, dialect);
    schema
        .increments
        .iter()
        .map(|i| (i.columns.clone(), st.increment(&i.columns)))
        .collect()
}

/// The UPDATE of the increment that makes `changes` (their columns, in order).
pub fn increment_of<'a>(
    increments: &'a [(Vec<usize>, String)],
    changes: &[scalebench_workload::Modification],
) -> Result<&'a str, scalebench_workload::OpError> {
    increments
        .iter()
        .find(|(cols, _)| cols.iter().copied().eq(changes.iter().map(|m| m.column)))
        .map(|(_, sql)| sql.as_str())
        .ok_or_else(|| {
            scalebench_workload::OpError::new(
                scalebench_workload::FailureClass::Other,
                "an increment the workload did not declare",
            )
        })
}

/// A string literal for statements sent without parameters (values are plain ASCII; quotes doubled anyway).
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A PostgreSQL statement with each parameter `$N` written in as a literal: `param(N - 1)`'s text
/// quoted (a literal of no type takes the type the statement gives its place, as a parameter
/// bound as text does), `NULL` where it is `None` (a NULL, or a number the log gave no value).
/// Placeholders inside quoted text, quoted identifiers, comments and dollar-quoted bodies are left
/// as they are.
pub fn with_numbered_literals<'a>(sql: &str, param: impl Fn(usize) -> Option<&'a str>) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 32);
    let (mut i, mut copied) = (0, 0);
    // The end of what starts at `i` and must be copied as it is, if something does.
    let skip = |i: usize| -> Option<usize> {
        // Only at an ASCII byte (a character's start) that may open something.
        if !matches!(b[i], b'\'' | b'"' | b'-' | b'/' | b'$') {
            return None;
        }
        let rest = &sql[i..];
        let to = |pat: &str, from: usize| {
            rest[from..]
                .find(pat)
                .map_or(b.len(), |e| i + from + e + pat.len())
        };
        match b[i] {
            b'\'' => Some(to("'", 1)),
            b'"' => Some(to("\"", 1)),
            b'-' if rest.starts_with("--") => Some(to("\n", 2)),
            b'/' if rest.starts_with("/*") => Some(to("*/", 2)),
            b'$' => {
                // A dollar quote's tag: `$$` or `$name$`.
                let tag_len = rest[1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|&n| rest[1 + n..].starts_with('$'))
                    .filter(|&n| n == 0 || !rest.as_bytes()[1].is_ascii_digit())?;
                let tag = &rest[..tag_len + 2];
                Some(to(tag, tag.len()))
            }
            _ => None,
        }
    };
    while i < b.len() {
        if let Some(end) = skip(i) {
            i = end;
            continue;
        }
        if b[i] == b'$' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            let n: usize = sql[i + 1..i + 1 + digits].parse().unwrap_or(0);
            if n >= 1 {
                out.push_str(&sql[copied..i]);
                match param(n - 1) {
                    Some(v) => out.push_str(&literal(v)),
                    None => out.push_str("NULL"),
                }
                i += 1 + digits;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&sql[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn numbered_parameters_are_written_in_as_literals_outside_quotes_and_comments() {
        let params = ["42", "it's", "é"];
        let param = |i: usize| params.get(i).copied();
        let sql = "SELECT 'é $1', \"$2\" FROM t /* $1 */ WHERE a = $1 AND b = $2 -- $3\nAND c = $3 AND d = $4 AND e = $$ $1 $$ AND f = $x$ $2 $x$";
        assert_eq!(
            with_numbered_literals(sql, param),
            "SELECT 'é $1', \"$2\" FROM t /* $1 */ WHERE a = '42' AND b = 'it''s' -- $3\nAND c = 'é' AND d = NULL AND e = $$ $1 $$ AND f = $x$ $2 $x$"
        );
        assert_eq!(
            with_numbered_literals("SELECT $10", |i| (i == 9).then_some("ten")),
            "SELECT 'ten'"
        );
    }

    fn schema(types: &[FieldType]) -> crate::Schema {
        crate::Schema {
            table: "usertable".into(),
            key_column: None,
            field_names: Arc::from(
                (0..types.len())
                    .map(|i| format!("field{i}"))
                    .collect::<Vec<_>>(),
            ),
            field_types: Arc::from(types),
            statements: Arc::new([]),
            indexes: Arc::new([]),
            increments: Arc::new([]),
            transactional_sequences: Arc::new([]),
            holds_its_connection: None,
        }
    }

    #[test]
    fn statements_use_the_dialects_placeholders() {
        let text = FieldType::Text { max_len: Some(100) };
        let f = schema(&[text, text]);
        let pg = Statements::new("usertable", &f, Dialect::Postgres);
        assert_eq!(
            pg.update_all,
            "UPDATE usertable SET \"field0\" = $1, \"field1\" = $2 WHERE YCSB_KEY = $3"
        );
        assert_eq!(
            pg.multi_row_insert(2),
            "INSERT INTO usertable (YCSB_KEY, \"field0\", \"field1\") VALUES ($1, $2, $3), ($4, $5, $6)"
        );
        let my = Statements::new("usertable", &f, Dialect::MySql);
        assert_eq!(
            my.read_one[1],
            "SELECT `FIELD1` FROM usertable WHERE YCSB_KEY = ?"
        );
        assert_eq!(literal("it's"), "'it''s'");
    }

    /// A workload's key column names the key in every statement, quoted as a column is.
    #[test]
    fn a_key_column_of_the_workloads_names_the_key_everywhere() {
        let text = FieldType::Text { max_len: Some(10) };
        let mut f = schema(&[text]);
        f.key_column = Some("Session_Id".into());
        let pg = Statements::new("sessions", &f, Dialect::Postgres);
        assert_eq!(
            pg.create_table(""),
            "CREATE TABLE IF NOT EXISTS sessions (\"session_id\" VARCHAR(255) PRIMARY KEY, \"field0\" TEXT)"
        );
        let my = Statements::new("sessions", &f, Dialect::MySql);
        assert_eq!(my.delete, "DELETE FROM sessions WHERE `SESSION_ID` = ?");
        assert_eq!(
            my.select_keys(FieldSet::All, 2),
            "SELECT `SESSION_ID`, `FIELD0` FROM sessions WHERE `SESSION_ID` IN (?, ?)"
        );
        for st in [&pg, &my] {
            for sql in [&st.read_all, &st.scan_all, &st.update_all, &st.insert] {
                assert!(!sql.contains("YCSB_KEY"), "{sql}");
            }
        }
    }

    #[test]
    fn typed_columns_are_created_bound_and_read_as_text() {
        let f = schema(&[
            FieldType::Int,
            FieldType::Timestamp,
            FieldType::Text { max_len: None },
        ]);
        let pg = Statements::new("t", &f, Dialect::Postgres);
        assert_eq!(
            pg.create_table(""),
            "CREATE TABLE IF NOT EXISTS t (YCSB_KEY VARCHAR(255) PRIMARY KEY, \"field0\" INTEGER, \"field1\" TIMESTAMP(3), \"field2\" TEXT)"
        );
        assert_eq!(
            pg.insert,
            "INSERT INTO t (YCSB_KEY, \"field0\", \"field1\", \"field2\") VALUES ($1, $2::text::INTEGER, $3::text::TIMESTAMP(3), $4)"
        );
        assert_eq!(
            pg.update_one[0],
            "UPDATE t SET \"field0\" = $1::text::INTEGER WHERE YCSB_KEY = $2"
        );
        assert_eq!(
            pg.read_all,
            "SELECT \"field0\"::text, \"field1\"::text, \"field2\" FROM t WHERE YCSB_KEY = $1"
        );
        let my = Statements::new("t", &f, Dialect::MySql);
        assert!(my
            .create_table("")
            .ends_with("`FIELD1` DATETIME(3), `FIELD2` MEDIUMTEXT)"));
        assert_eq!(
            my.read_one[0],
            "SELECT CAST(`FIELD0` AS CHAR) FROM t WHERE YCSB_KEY = ?"
        );
    }
}
