//! The binding's CQL statements as text, and prepared once per session.

use scalebench_workload::FieldSet;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use super::settings::Settings;
use crate::BindingError;

/// Statements prepared once per session.
pub(super) struct Prepared {
    pub(super) read_all: PreparedStatement,
    pub(super) read_one: Vec<PreparedStatement>,
    pub(super) scan_all: PreparedStatement,
    pub(super) scan_one: Vec<PreparedStatement>,
    pub(super) update_one: Vec<PreparedStatement>,
    pub(super) insert: PreparedStatement,
    pub(super) delete: PreparedStatement,
}

impl Settings {
    pub(super) fn select(&self, fields: FieldSet) -> String {
        match fields {
            FieldSet::All => self.columns.join(", "),
            FieldSet::One(i) => self.columns[i].clone(),
        }
    }

    pub(super) fn read_cql(&self, fields: FieldSet) -> String {
        format!(
            "SELECT {} FROM {} WHERE {} = ?",
            self.select(fields),
            self.table,
            self.key
        )
    }

    pub(super) fn scan_cql(&self, fields: FieldSet) -> String {
        format!(
            "SELECT {k}, {} FROM {} WHERE token({k}) >= token(?) LIMIT ?",
            self.select(fields),
            self.table,
            k = self.key
        )
    }

    pub(super) fn update_cql(&self, fields: &[usize]) -> String {
        let sets: Vec<String> = fields
            .iter()
            .map(|f| format!("{} = ?", self.columns[*f]))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {} = ?",
            self.table,
            sets.join(", "),
            self.key
        )
    }

    pub(super) fn insert_cql(&self) -> String {
        let marks = vec!["?"; self.columns.len() + 1].join(", ");
        let lwt = if self.if_not_exists {
            " IF NOT EXISTS"
        } else {
            ""
        };
        format!(
            "INSERT INTO {} ({}, {}) VALUES ({marks}){lwt}",
            self.table,
            self.key,
            self.columns.join(", ")
        )
    }

    pub(super) fn delete_cql(&self) -> String {
        format!("DELETE FROM {} WHERE {} = ?", self.table, self.key)
    }

    /// Prepares the workload file's statements; one that does not prepare is bad input.
    pub(super) async fn prepare_own(
        &self,
        session: &Session,
    ) -> Result<Vec<Option<PreparedStatement>>, BindingError> {
        let mut out = Vec::with_capacity(self.own.len());
        for s in &self.own {
            out.push(match s {
                None => None,
                Some(s) => {
                    let mut st = session.prepare(s.text.as_str()).await.map_err(|e| {
                        BindingError::Config(format!(
                            "operation '{}': its cql does not prepare: {e}",
                            s.name
                        ))
                    })?;
                    st.set_consistency(s.consistency);
                    st.set_serial_consistency(Some(self.serial));
                    Some(st)
                }
            });
        }
        Ok(out)
    }

    pub(super) async fn prepare(&self, session: &Session) -> Result<Prepared, BindingError> {
        let p = |cql: String, c: Consistency| async move {
            let mut st = session
                .prepare(cql.as_str())
                .await
                .map_err(|e| BindingError::Other(format!("cannot prepare {cql}: {e}")))?;
            st.set_consistency(c);
            st.set_serial_consistency(Some(self.serial));
            Ok::<_, BindingError>(st)
        };
        let n = self.columns.len();
        let mut read_one = Vec::with_capacity(n);
        let mut scan_one = Vec::with_capacity(n);
        let mut update_one = Vec::with_capacity(n);
        for i in 0..n {
            read_one.push(p(self.read_cql(FieldSet::One(i)), self.read).await?);
            scan_one.push(p(self.scan_cql(FieldSet::One(i)), self.scan).await?);
            update_one.push(p(self.update_cql(&[i]), self.write).await?);
        }
        Ok(Prepared {
            read_all: p(self.read_cql(FieldSet::All), self.read).await?,
            read_one,
            scan_all: p(self.scan_cql(FieldSet::All), self.scan).await?,
            scan_one,
            update_one,
            insert: p(self.insert_cql(), self.write).await?,
            delete: p(self.delete_cql(), self.delete).await?,
        })
    }
}
