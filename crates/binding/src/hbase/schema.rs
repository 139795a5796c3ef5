//! The table: its column family and region splits, dropped or created by the setup, each answer
//! bounded by the connect timeout.

use std::net::TcpStream;

use super::connection::{connect, setup_error_text};
use super::thrift2::{
    TBloomFilterType, TColumnFamilyDescriptor, TCompressionAlgorithm, TTHBaseServiceSyncClient,
    TTableDescriptor, TTableName,
};
use crate::BindingError;

/// The split keys of `regions` regions over YCSB's key space, as YCSB's HBase instructions make them
/// (`user1000` to `user9999` in equal steps).
pub fn split_keys(regions: u64) -> Vec<Vec<u8>> {
    (1..regions)
        .map(|i| format!("user{}", 1000 + i * 9000 / regions).into_bytes())
        .collect()
}

pub(super) fn column_family(
    name: &[u8],
    compression: TCompressionAlgorithm,
    bloom: TBloomFilterType,
    in_memory: bool,
    new_version_behavior: bool,
) -> TColumnFamilyDescriptor {
    // The descriptor's values, as the shell's `NEW_VERSION_BEHAVIOR => true` sets it.
    let values = new_version_behavior.then(|| {
        std::collections::BTreeMap::from([(
            b"NEW_VERSION_BEHAVIOR".to_vec(),
            b"true".to_vec(),
        )])
    });
    TColumnFamilyDescriptor::new(
        name.to_vec(),
        values,
        None,
        None,
        bloom,
        compression,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        in_memory,
    )
}

/// What the setup does to the table.
pub(super) struct Setup {
    pub(super) drop: bool,
    pub(super) create: bool,
    pub(super) descriptor: TTableDescriptor,
    pub(super) splits: Vec<Vec<u8>>,
    /// Bounds the connect and each answer.
    pub(super) timeout: std::time::Duration,
}

impl Setup {
    pub(super) fn run(
        self,
        address: &str,
        url: &str,
        table: TTableName,
        name: &str,
        socket: &std::sync::Mutex<Option<TcpStream>>,
    ) -> Result<(), BindingError> {
        let connect_error = |reason: String| BindingError::Connect {
            url: url.to_string(),
            reason,
        };
        // With HBase down, the gateway's own client retries for many minutes before it answers:
        // each setup answer is bounded, and a run must not hang before it starts.
        let (mut c, handle) = connect(address, self.timeout, Some(self.timeout)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::TimedOut {
                connect_error(format!(
                    "no answer within {} ms (--connect-timeout)",
                    self.timeout.as_millis()
                ))
            } else {
                connect_error(e.to_string())
            }
        })?;
        *socket.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        let timeout = self.timeout;
        let schema_error = |what: &str, e: thrift::Error| {
            BindingError::Schema(format!(
                "cannot {what} table '{name}' on {url}: {}",
                setup_error_text(&e, timeout)
            ))
        };
        let exists = c
            .table_exists(table.clone())
            .map_err(|e| connect_error(setup_error_text(&e, timeout)))?;
        if exists && self.drop {
            // A disabled table (an earlier drop that stopped half-way) cannot be disabled again.
            let _ = c.disable_table(table.clone());
            c.delete_table(table.clone())
                .map_err(|e| schema_error("delete", e))?;
        }
        if !exists || self.drop {
            if !self.create {
                return Err(BindingError::Schema(format!(
                    "table '{name}' does not exist on {url} (use --create-schema to create it)"
                )));
            }
            c.create_table(self.descriptor, self.splits)
                .map_err(|e| schema_error("create", e))?;
        }
        Ok(())
    }
}
