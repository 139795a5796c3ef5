//! The table: dropped, created and indexed as the options say, then looked up on every master
//! and awaited on every read replica.

use super::{describe, Shared};
use crate::BindingError;

impl Shared {
    pub(super) async fn prepare_schema(&self, drop: bool, create: bool) -> Result<(), BindingError> {
        let client = self.client().await?;
        let st = &self.statements;
        let schema_err = |what: &str, e: tokio_postgres::Error| {
            BindingError::Schema(format!(
                "{what} table '{}' on {}: {}",
                st.table,
                self.url,
                describe(&e)
            ))
        };
        if drop {
            client
                .batch_execute(&st.drop_table())
                .await
                .map_err(|e| schema_err("cannot drop", e))?;
        }
        if create {
            client
                .batch_execute(&st.create_table(""))
                .await
                .map_err(|e| schema_err("cannot create", e))?;
            for index in st.create_indexes(&self.indexes) {
                client
                    .batch_execute(&index)
                    .await
                    .map_err(|e| schema_err("cannot index", e))?;
            }
        }
        let exists = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&st.table])
            .await
            .map_err(|e| schema_err("cannot look up", e))?
            .get::<_, bool>(0);
        if !exists {
            return Err(BindingError::Schema(format!(
                "table '{}' does not exist on {}: create it with --create-schema (e.g. scalebench load --create-schema)",
                st.table, self.url
            )));
        }
        self.await_table_on_other_masters().await?;
        self.await_table_on_replicas().await
    }

    /// Every master needs the table: with several masters (no DDL replication between them) the
    /// deployment creates it on each.
    async fn await_table_on_other_masters(&self) -> Result<(), BindingError> {
        for master in &self.masters[1..] {
            let client = self.client_at(&master.config).await?;
            let exists = client
                .query_one(
                    "SELECT to_regclass($1) IS NOT NULL",
                    &[&self.statements.table],
                )
                .await
                .map_err(|e| {
                    BindingError::Schema(format!(
                        "cannot look up table '{}' on {}: {}",
                        self.statements.table,
                        master.address,
                        describe(&e)
                    ))
                })?
                .get::<_, bool>(0);
            if !exists {
                return Err(BindingError::Schema(format!(
                    "table '{}' does not exist on master {} (the URL's host {} of {}): with several masters, each must have it",
                    self.statements.table,
                    master.address,
                    self.masters.iter().position(|m| std::ptr::eq(m, master)).unwrap_or(0) + 1,
                    self.masters.len()
                )));
            }
        }
        Ok(())
    }

    /// Replicas are asynchronous: a table just created on the primary reaches them a moment later, and
    /// preparing statements there before it does fails. Bounded wait, then a clear error.
    async fn await_table_on_replicas(&self) -> Result<(), BindingError> {
        const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);
        let table = &self.statements.table;
        for replica in &self.read_hosts {
            let where_ = &replica.address;
            let client = self.client_at(&replica.config).await?;
            let deadline = std::time::Instant::now() + PATIENCE;
            loop {
                let exists = client
                    .query_one("SELECT to_regclass($1) IS NOT NULL", &[table])
                    .await
                    .map_err(|e| {
                        BindingError::Schema(format!(
                            "cannot look up table '{table}' on replica {where_}: {}",
                            describe(&e)
                        ))
                    })?
                    .get::<_, bool>(0);
                if exists {
                    break;
                }
                if std::time::Instant::now() >= deadline {
                    return Err(BindingError::Schema(format!(
                        "table '{table}' has not reached replica {where_} after {}s: is replication running?",
                        PATIENCE.as_secs()
                    )));
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        Ok(())
    }

}
