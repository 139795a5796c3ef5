//! SQL text shared by the relational bindings: YCSB's JDBC schema (`usertable`, `YCSB_KEY`, `FIELD0..`).

/// How a dialect writes the n-th (1-based) parameter.
#[derive(Debug, Clone, Copy)]
pub enum Placeholder {
    /// `$1, $2, ...` (PostgreSQL)
    Dollar,
    /// `?` (MySQL, SQLite)
    Question,
}

impl Placeholder {
    fn nth(self, n: usize) -> String {
        match self {
            Placeholder::Dollar => format!("${n}"),
            Placeholder::Question => "?".into(),
        }
    }
}

/// Every statement a binding needs, built once per connection.
#[derive(Debug, Clone)]
pub struct Statements {
    pub table: String,
    pub columns: Vec<String>,
    pub placeholder: Placeholder,
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
    /// `columns` are the workload's field names; they become upper-case column names (`field0` -> `FIELD0`).
    pub fn new(table: &str, field_names: &[String], placeholder: Placeholder) -> Self {
        let columns: Vec<String> = field_names.iter().map(|f| f.to_ascii_uppercase()).collect();
        let p = |n| placeholder.nth(n);
        let all = columns.join(", ");
        let t = table;
        Statements {
            read_all: format!("SELECT {all} FROM {t} WHERE YCSB_KEY = {}", p(1)),
            read_one: columns.iter().map(|c| format!("SELECT {c} FROM {t} WHERE YCSB_KEY = {}", p(1))).collect(),
            scan_all: format!("SELECT YCSB_KEY, {all} FROM {t} WHERE YCSB_KEY >= {} ORDER BY YCSB_KEY LIMIT {}", p(1), p(2)),
            scan_one: columns
                .iter()
                .map(|c| format!("SELECT YCSB_KEY, {c} FROM {t} WHERE YCSB_KEY >= {} ORDER BY YCSB_KEY LIMIT {}", p(1), p(2)))
                .collect(),
            update_one: columns.iter().map(|c| format!("UPDATE {t} SET {c} = {} WHERE YCSB_KEY = {}", p(1), p(2))).collect(),
            update_all: format!(
                "UPDATE {t} SET {} WHERE YCSB_KEY = {}",
                columns.iter().enumerate().map(|(i, c)| format!("{c} = {}", p(i + 1))).collect::<Vec<_>>().join(", "),
                p(columns.len() + 1)
            ),
            insert: Self::multi_row_insert_text(t, &columns, placeholder, 1),
            delete: format!("DELETE FROM {t} WHERE YCSB_KEY = {}", p(1)),
            table: t.to_string(),
            columns,
            placeholder,
        }
    }

    /// `INSERT INTO t (YCSB_KEY, FIELD0, ...) VALUES (...), (...)` for `rows` rows.
    pub fn multi_row_insert(&self, rows: usize) -> String {
        Self::multi_row_insert_text(&self.table, &self.columns, self.placeholder, rows)
    }

    fn multi_row_insert_text(
        table: &str,
        columns: &[String],
        placeholder: Placeholder,
        rows: usize,
    ) -> String {
        let per_row = columns.len() + 1;
        let values: Vec<String> = (0..rows)
            .map(|r| {
                let ps: Vec<String> = (0..per_row)
                    .map(|i| placeholder.nth(r * per_row + i + 1))
                    .collect();
                format!("({})", ps.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO {table} (YCSB_KEY, {}) VALUES {}",
            columns.join(", "),
            values.join(", ")
        )
    }

    /// `CREATE TABLE` with `YCSB_KEY VARCHAR(255) PRIMARY KEY` and one `value_type` column per field.
    pub fn create_table(&self, value_type: &str, suffix: &str) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| format!("{c} {value_type}"))
            .collect();
        format!(
            "CREATE TABLE IF NOT EXISTS {} (YCSB_KEY VARCHAR(255) PRIMARY KEY, {}){suffix}",
            self.table,
            cols.join(", ")
        )
    }

    pub fn drop_table(&self) -> String {
        format!("DROP TABLE IF EXISTS {}", self.table)
    }

    /// An UPDATE of the given field indices, in order, key last.
    pub fn update_fields(&self, fields: &[usize]) -> String {
        let sets: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{} = {}", self.columns[*f], self.placeholder.nth(i + 1)))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE YCSB_KEY = {}",
            self.table,
            sets.join(", "),
            self.placeholder.nth(fields.len() + 1)
        )
    }
}

/// A string literal for statements sent without parameters (values are plain ASCII; quotes doubled anyway).
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_use_the_dialects_placeholders() {
        let f: Vec<String> = vec!["field0".into(), "field1".into()];
        let pg = Statements::new("usertable", &f, Placeholder::Dollar);
        assert_eq!(
            pg.update_all,
            "UPDATE usertable SET FIELD0 = $1, FIELD1 = $2 WHERE YCSB_KEY = $3"
        );
        assert_eq!(
            pg.multi_row_insert(2),
            "INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1) VALUES ($1, $2, $3), ($4, $5, $6)"
        );
        let my = Statements::new("usertable", &f, Placeholder::Question);
        assert_eq!(
            my.read_one[1],
            "SELECT FIELD1 FROM usertable WHERE YCSB_KEY = ?"
        );
        assert_eq!(literal("it's"), "'it''s'");
    }
}
