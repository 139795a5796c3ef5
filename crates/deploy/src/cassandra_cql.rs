//! What scalebench asks a Cassandra node over CQL. What the node is doing, from its virtual tables
//! (`system_views`, Cassandra 4.1+): compactions running or queued, tasks queued in any thread pool,
//! streams in progress, and its own gossip status. Asking takes milliseconds, where `nodetool
//! compactionstats` and `netstats` start a JVM each (about a second of CPU, taken from the servers
//! being measured when an elastic run asks under load). And, for a snapshot and its restore, the
//! user tables and their truncation.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::value::{CqlValue, Row};

/// Asking a node gives up after this (the node is then reported busy, with the reason).
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// Activity of one node; empty lists and `NORMAL` mean idle.
#[derive(Debug, Default, PartialEq)]
pub struct NodeActivity {
    /// CompactionExecutor's active plus queued tasks.
    pub compactions_queued: i64,
    /// Other thread pools with queued tasks ("name count").
    pub pending_pools: Vec<String>,
    /// Compactions and other SSTable tasks running (`system_views.sstable_tasks`).
    pub sstable_tasks: Vec<String>,
    /// Streams not finished (`system_views.streaming`, status init or start).
    pub streams: Vec<String>,
    /// The node's own gossip status word (NORMAL, BOOT, LEAVING, ...).
    pub mode: String,
}

impl NodeActivity {
    /// What keeps the node from being idle, one line per reason, prefixed with `id`.
    pub fn busy(&self, id: &str) -> Vec<String> {
        let mut busy = Vec::new();
        if self.compactions_queued > 0 || !self.sstable_tasks.is_empty() {
            busy.push(format!(
                "{id}: {} compactions pending{}",
                self.compactions_queued.max(self.sstable_tasks.len() as i64),
                if self.sstable_tasks.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", self.sstable_tasks.join(", "))
                }
            ));
        }
        if !self.pending_pools.is_empty() {
            busy.push(format!(
                "{id}: tasks queued in {}",
                self.pending_pools.join(", ")
            ));
        }
        if !self.streams.is_empty() {
            busy.push(format!(
                "{id}: streaming data ({})",
                self.streams.join(", ")
            ));
        }
        if self.mode != "NORMAL" {
            busy.push(format!("{id} is in mode {}", self.mode));
        }
        busy
    }
}

fn text(v: &Option<CqlValue>) -> String {
    match v {
        Some(CqlValue::Text(t)) | Some(CqlValue::Ascii(t)) => t.clone(),
        Some(CqlValue::Int(i)) => i.to_string(),
        Some(CqlValue::BigInt(i)) => i.to_string(),
        Some(CqlValue::Inet(a)) => a.to_string(),
        Some(CqlValue::Uuid(u)) => u.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

async fn rows(session: &Session, query: &str) -> Result<Vec<Vec<String>>, String> {
    let result = session
        .query_unpaged(query, &[])
        .await
        .map_err(|e| format!("{query}: {e}"))?
        .into_rows_result()
        .map_err(|e| format!("{query}: {e}"))?;
    let rows = result
        .rows::<Row>()
        .map_err(|e| format!("{query}: {e}"))?
        .map(|r| r.map(|r| r.columns.iter().map(text).collect()))
        .collect::<Result<Vec<Vec<String>>, _>>()
        .map_err(|e| format!("{query}: {e}"))?;
    Ok(rows)
}

/// A session with this node only: virtual tables are node-local, and the driver would otherwise
/// connect to (and route to) every peer it learns of.
async fn node_session(address: SocketAddr) -> Result<Session, String> {
    let filter = AllowListHostFilter::new([address]).map_err(|e| e.to_string())?;
    SessionBuilder::new()
        .known_node_addr(address)
        .host_filter(Arc::new(filter))
        .fetch_schema_metadata(false)
        .connection_timeout(ASK_TIMEOUT)
        .build()
        .await
        .map_err(|e| format!("CQL connection to {address}: {e}"))
}

/// Runs `f` on a runtime of its own (the deploy crate is synchronous).
fn block_on<T>(f: impl std::future::Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(f)
}

async fn activity_of(address: SocketAddr) -> Result<NodeActivity, String> {
    let session = node_session(address).await?;
    // Wegert's idle: "no compactions, no pending thread pools or streams" (studies.md, study 2).
    let pools = rows(
        &session,
        "SELECT name, active_tasks, pending_tasks FROM system_views.thread_pools",
    )
    .await?;
    let number =
        |r: &Vec<String>, i: usize| r.get(i).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
    let compactions_queued = pools
        .iter()
        .filter(|r| r[0] == "CompactionExecutor")
        .map(|r| number(r, 1) + number(r, 2))
        .sum();
    let pending_pools = pools
        .iter()
        .filter(|r| r[0] != "CompactionExecutor" && number(r, 2) > 0)
        .map(|r| format!("{} {}", r[0], number(r, 2)))
        .collect();
    let sstable_tasks = rows(
        &session,
        "SELECT kind, keyspace_name, table_name FROM system_views.sstable_tasks",
    )
    .await?
    .into_iter()
    .map(|r| r.join(" "))
    .collect();
    let streams = rows(
        &session,
        "SELECT operation, status FROM system_views.streaming",
    )
    .await?
    .into_iter()
    .filter(|r| matches!(r.get(1).map(String::as_str), Some("init" | "start")))
    .map(|r| r.join(" "))
    .collect();
    let gossip = rows(
        &session,
        "SELECT address, status FROM system_views.gossip_info",
    )
    .await?;
    let mode = gossip
        .iter()
        .find(|r| r.first().is_some_and(|a| *a == address.ip().to_string()))
        .and_then(|r| r.get(1))
        .map(|s| s.split(',').next().unwrap_or("").to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown (not in its own gossip)".into());
    Ok(NodeActivity {
        compactions_queued,
        pending_pools,
        sstable_tasks,
        streams,
        mode,
    })
}

/// Asks each node (`host:port` of its native transport) what it is doing, side by side; one
/// result per node.
pub fn node_activity(nodes: &[SocketAddr]) -> Vec<Result<NodeActivity, String>> {
    let all = block_on(async {
        let tasks: Vec<_> = nodes
            .iter()
            .map(|a| {
                let a = *a;
                tokio::spawn(async move {
                    tokio::time::timeout(ASK_TIMEOUT, activity_of(a))
                        .await
                        .unwrap_or_else(|_| Err(format!("no answer from {a} within 5 s")))
                })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap_or_else(|e| Err(e.to_string())));
        }
        Ok(out)
    });
    all.unwrap_or_else(|e| nodes.iter().map(|_| Err(e.clone())).collect())
}

/// A table of a user keyspace (not `system*`), with the id its data directory is named by.
#[derive(Debug, Clone, PartialEq)]
pub struct UserTable {
    pub keyspace: String,
    pub table: String,
    /// `system_schema.tables.id` without dashes, as in `data/<keyspace>/<table>-<id>`.
    pub id: String,
}

/// The user tables, as the schema of the node at `address` has them.
pub fn user_tables(address: SocketAddr) -> Result<Vec<UserTable>, String> {
    block_on(async {
        let session = node_session(address).await?;
        let all = rows(
            &session,
            "SELECT keyspace_name, table_name, id FROM system_schema.tables",
        )
        .await?;
        Ok(all
            .into_iter()
            .filter(|r| r.len() == 3 && !r[0].starts_with("system"))
            .map(|r| UserTable {
                keyspace: r[0].clone(),
                table: r[1].clone(),
                id: r[2].replace('-', ""),
            })
            .collect())
    })
}

/// `TRUNCATE` of `table` (every node must be up), through the node at `address`.
pub fn truncate(address: SocketAddr, table: &UserTable) -> Result<(), String> {
    block_on(async {
        let session = node_session(address).await?;
        // Names as the schema spells them, quoted: case and reserved words survive.
        let q = format!(
            "TRUNCATE \"{}\".\"{}\"",
            table.keyspace.replace('"', "\"\""),
            table.table.replace('"', "\"\"")
        );
        session
            .query_unpaged(q.as_str(), &[])
            .await
            .map_err(|e| format!("{q}: {e}"))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_activity_is_named() {
        let idle = NodeActivity {
            mode: "NORMAL".into(),
            ..Default::default()
        };
        assert!(idle.busy("node1").is_empty());
        let busy = NodeActivity {
            compactions_queued: 2,
            pending_pools: vec!["MutationStage 3".into()],
            sstable_tasks: vec!["compaction ycsb usertable".into()],
            streams: vec!["Bootstrap start".into()],
            mode: "BOOT".into(),
        };
        assert_eq!(
            busy.busy("node2"),
            [
                "node2: 2 compactions pending (compaction ycsb usertable)",
                "node2: tasks queued in MutationStage 3",
                "node2: streaming data (Bootstrap start)",
                "node2 is in mode BOOT"
            ]
        );
    }
}
