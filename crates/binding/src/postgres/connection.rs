//! A client on one of the servers within the connect timeout, with the session's settings.

use std::time::Duration;

use tokio_postgres::Client;

use super::{describe, Shared};
use crate::BindingError;

impl Shared {
    pub(super) async fn client(&self) -> Result<Client, BindingError> {
        self.client_at(&self.masters[0].config).await
    }

    pub(super) async fn client_at(&self, config: &tokio_postgres::Config) -> Result<Client, BindingError> {
        // The driver's connect_timeout covers the TCP connect only; a server that accepts and never
        // answers would hold the handshake (and the run, and Ctrl-C) forever.
        let limit = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(Duration::from_secs(10));
        let connect_err = |reason: String| BindingError::Connect {
            url: self.url.clone(),
            reason: match &self.password_note {
                Some(note) => format!("{reason} ({note})"),
                None => reason,
            },
        };
        let (client, connection) = tokio::time::timeout(limit, config.connect(self.tls.connector.clone()))
            .await
            .map_err(|_| {
                connect_err(format!(
                    "no answer within {} ms (--connect-timeout)",
                    limit.as_millis()
                ))
            })?
            .map_err(|e| connect_err(crate::tls::explain(&describe(&e))))?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server goes away; operations then report it.
            let _ = connection.await;
        });
        if let Some(s) = &self.synchronous_commit {
            client
                .batch_execute(&format!("SET synchronous_commit = {s}"))
                .await
                .map_err(|e| BindingError::Other(format!("SET synchronous_commit = {s}: {e}")))?;
        }
        Ok(client)
    }

}
