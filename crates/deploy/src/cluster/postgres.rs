//! PostgreSQL: a primary with N streaming replicas (pg_basebackup), asynchronous or synchronous.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::engine::{ClusterState, Engine, NodeState, PASSWORD_FACT};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::host::{free_port, run};
use crate::postgres::{
    as_postgres, bin_dir, create_user_and_database, fresh_data_dir, initdb, is_ready, psql,
    server_command, DATABASE, USER,
};
use crate::process::ProcessRef;
use crate::space::{Classifier, Classify};

pub struct Postgres;

/// Starts one PostgreSQL server of a cluster from its data directory and waits until it serves.
pub(super) fn spawn(c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
    let bin = bin_dir()?;
    let cmd = server_command(
        &bin,
        &node.data_dir,
        node.port,
        &c.deployment.server_settings(),
    );
    let mut p = c.spawn_node(node, cmd)?;
    let port = node.port;
    p.wait_ready(Duration::from_secs(120), || {
        is_ready(&bin, &node.data_dir, port)
    })?;
    Ok(p.detach())
}

/// A PostgreSQL data directory's parts by file name alone: the WAL is the log, the rest data.
pub(super) fn classify(p: &Path) -> &'static str {
    if p.starts_with("pg_wal") {
        "log"
    } else {
        "data"
    }
}

/// The files of benchmark table `table` in the benchmark database of the server on `port` (its
/// socket in `socket_dir`), as the server names them: what `pg_total_relation_size` counts (the heap and its TOAST table as `data`, their
/// indexes as `index`, each with its free space and visibility maps), the WAL as `log`, and every
/// other file (catalogs, other tables, commit status, statistics, configuration) as `system`.
/// `None` when the server cannot say (the table is then sorted by [`classify`]).
pub(super) fn table_classifier(
    socket_dir: &Path,
    port: u16,
    table: &str,
) -> Option<Box<Classify<'static>>> {
    let table = table.replace('\'', "''");
    // The database's OID, then one line per relation of the table: file node and kind (r: table,
    // t: TOAST, i: index).
    let sql = format!(
        "WITH t AS (SELECT to_regclass('{table}') AS heap), \
              rels AS (SELECT heap AS oid FROM t \
                       UNION SELECT reltoastrelid FROM pg_class, t WHERE pg_class.oid = t.heap) \
         SELECT 'database ' || oid FROM pg_database WHERE datname = current_database() \
         UNION ALL \
         SELECT pg_relation_filenode(c.oid) || ' ' || c.relkind::text FROM pg_class c \
         WHERE c.oid IN (SELECT oid FROM rels) \
            OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM rels))"
    );
    let out = crate::postgres::ask(&bin_dir().ok()?, socket_dir, port, DATABASE, &sql).ok()?;
    let mut database = None;
    let mut files = std::collections::BTreeMap::new();
    for line in out.lines() {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["database", oid] => database = Some(oid.to_string()),
            [node, kind] => {
                files.insert(node.to_string(), if kind == "i" { "index" } else { "data" });
            }
            _ => {}
        }
    }
    let database = std::path::PathBuf::from("base").join(database?);
    Some(Box::new(move |p: &Path| {
        if p.starts_with("pg_wal") {
            return "log";
        }
        if p.parent() != Some(database.as_path()) {
            return "system";
        }
        // A relation's files: NODE, NODE.1, ... (1 GB segments), NODE_fsm, NODE_vm, NODE_init.
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let node = name.split(['.', '_']).next().unwrap_or("");
        files.get(node).copied().unwrap_or("system")
    }))
}

/// "nodeN: autovacuum running" while an autovacuum worker runs on `n`.
pub(super) fn autovacuum(n: &NodeState) -> Option<String> {
    let asked = bin_dir().and_then(|bin| {
        crate::postgres::ask(
            &bin,
            &n.data_dir,
            n.port,
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
        )
    });
    match asked {
        Ok(out) if out.trim() == "0" => None,
        Ok(_) => Some(format!("{}: autovacuum running", n.id)),
        // A node that does not answer is not known to be idle.
        Err(e) => Some(format!("{}: {e}", n.id)),
    }
}

impl Postgres {
    fn primary<'a>(&self, c: &'a ClusterState) -> Result<&'a NodeState, DeployError> {
        c.nodes
            .iter()
            .find(|n| n.role == "primary")
            .ok_or_else(|| DeployError::Failed("the cluster has no primary".into()))
    }

    fn sql(&self, node: &NodeState, db: &str, sql: &str) -> Result<String, DeployError> {
        psql(&bin_dir()?, &node.data_dir, node.port, db, sql)
    }

    fn add_replica(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let primary = self.primary(c)?.clone();
        let port = free_port()?;
        let mut node = c.new_node("replica", "127.0.0.1", port)?;
        node.data_dir = node.dir.join("data");
        fresh_data_dir(&node.data_dir)?;
        let bin = bin_dir()?;
        // A copy of the primary that starts as a standby (-R) streaming the WAL it needs (-X stream).
        let mut backup = std::process::Command::new(bin.join("pg_basebackup"));
        backup
            .arg("-h")
            .arg(&primary.data_dir)
            .args(["-p", &primary.port.to_string(), "-U", "postgres", "-D"])
            .arg(&node.data_dir)
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        as_postgres(&mut backup)?;
        run(&mut backup, "pg_basebackup")?;
        // The replica names itself, so pg_stat_replication tells the replicas apart.
        let conninfo = format!(
            "\nprimary_conninfo = 'host={} port={} user=postgres application_name={}'\n",
            primary.data_dir.display(),
            primary.port,
            node.id
        );
        let auto = node.data_dir.join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&auto).map_err(|e| DeployError::io(&auto, e))?;
        text.push_str(&conninfo);
        std::fs::write(&auto, text).map_err(|e| DeployError::io(&auto, e))?;
        node.process = Some(spawn(c, &node)?);
        let id = node.id.clone();
        c.nodes.push(node);
        Ok(id)
    }
}

impl Engine for Postgres {
    fn fail_primary_missing(&self, _d: &crate::spec::Deployment) -> String {
        "streaming replication alone promotes no replica when the primary dies".into()
    }

    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // Streaming replication alone has no failover: a dead primary stays dead.
        operation::MEMBERSHIP.to_vec()
    }

    fn account(&self) -> &'static str {
        crate::postgres::ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        1 + d.postgres_replicas()
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let bin = bin_dir()?;
        let port = free_port()?;
        let mut primary = c.new_node("primary", "127.0.0.1", port)?;
        primary.data_dir = primary.dir.join("data");
        initdb(&bin, &primary.data_dir)?;
        primary.process = Some(spawn(c, &primary)?);
        c.nodes.push(primary.clone());
        let password = crate::host::random_password()?;
        create_user_and_database(&bin, &primary.data_dir, port, &password)?;
        c.facts.insert(PASSWORD_FACT.into(), password);
        for _ in 0..c.deployment.postgres_replicas() {
            self.add_replica(c)?;
        }
        if let Some(level) = &c.deployment.postgres.synchronous_commit {
            // Set only now: with synchronous standbys named before any is attached, the setup's own
            // writes would wait forever.
            self.sql(
                &primary,
                "postgres",
                "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (*)'",
            )?;
            self.sql(
                &primary,
                "postgres",
                &format!("ALTER SYSTEM SET synchronous_commit = '{level}'"),
            )?;
            self.sql(&primary, "postgres", "SELECT pg_reload_conf()")?;
        }
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        spawn(c, node)
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        self.add_replica(c)
    }

    fn removable(&self, c: &ClusterState) -> Option<String> {
        c.nodes
            .iter()
            .rev()
            .find(|n| n.role == "replica")
            .map(|n| n.id.clone())
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        let node = c.node(id)?.clone();
        if node.role == "primary" {
            return Err(DeployError::Failed(format!(
                "{id} is the primary: scalebench removes replicas only (no failover)"
            )));
        }
        let replicas = c.nodes.iter().filter(|n| n.role == "replica").count();
        if replicas == 1 && c.deployment.postgres.synchronous_commit.is_some() {
            return Err(DeployError::Failed(format!(
                "{id} is the last synchronous replica: without it every commit would wait"
            )));
        }
        if let Some(p) = node.process {
            p.stop_with(Signal::SIGINT, Duration::from_secs(60));
        }
        c.nodes.retain(|n| n.id != id);
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let Ok(bin) = bin_dir() else {
            return vec!["PostgreSQL is not installed".into()];
        };
        let mut missing: Vec<String> = c
            .running()
            .filter(|n| !is_ready(&bin, &n.data_dir, n.port))
            .map(|n| format!("{} ({}) not accepting connections", n.id, n.role))
            .collect();
        if missing.is_empty() {
            let expected: Vec<&str> = c
                .nodes
                .iter()
                .filter(|n| n.role == "replica" && n.process.is_some())
                .map(|n| n.id.as_str())
                .collect();
            if let Ok(primary) = self.primary(c) {
                let streaming = self
                    .sql(
                        primary,
                        "postgres",
                        "SELECT application_name || ' ' || sync_state FROM pg_stat_replication \
                         WHERE state = 'streaming'",
                    )
                    .unwrap_or_default();
                let streaming: Vec<(&str, &str)> = streaming
                    .lines()
                    .filter_map(|l| l.trim().split_once(' '))
                    .collect();
                // The primary's reload of synchronous_standby_names reaches its WAL senders a
                // moment later: until then a standby streams but is counted "async".
                let synchronous = c.deployment.postgres.synchronous_commit.is_some();
                for r in expected {
                    match streaming.iter().find(|(name, _)| *name == r) {
                        None => missing.push(format!("replica {r} not streaming")),
                        Some((_, "async")) if synchronous => {
                            missing.push(format!("replica {r} not yet a synchronous standby"))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let Ok(primary) = self.primary(c) else {
            return vec!["no primary".into()];
        };
        let mut busy = Vec::new();
        let asked = bin_dir().and_then(|bin| {
            crate::postgres::ask(&bin, &primary.data_dir, primary.port, "postgres",
            "SELECT application_name || ' ' || COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1) \
             FROM pg_stat_replication")
        });
        match asked {
            Ok(out) => {
                for l in out.lines() {
                    if let Some((name, lag)) = l.trim().rsplit_once(' ') {
                        if lag != "0" {
                            busy.push(format!("replica {name}: {lag} bytes of WAL not replayed"));
                        }
                    }
                }
            }
            Err(e) => busy.push(e.to_string()),
        }
        busy.extend(c.running().filter_map(autovacuum));
        busy
    }

    /// A checkpoint writes the dirty buffers (the new database's catalogs too, which stay in
    /// memory until the first one) to the files; nothing is vacuumed.
    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for n in c.running() {
            self.sql(n, "postgres", "CHECKPOINT")?;
            done.push(format!("{}: CHECKPOINT", n.id));
        }
        Ok(done)
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let primary = self.primary(c)?;
        self.sql(primary, DATABASE, "VACUUM ANALYZE")?;
        let mut done = vec![format!("{}: VACUUM ANALYZE", primary.id)];
        for n in c.running() {
            self.sql(n, "postgres", "CHECKPOINT")?;
            done.push(format!("{}: CHECKPOINT", n.id));
        }
        Ok(done)
    }

    /// SIGTERM is PostgreSQL's "smart" shutdown, which waits for every client to leave.
    fn stop_signal(&self) -> Signal {
        Signal::SIGINT
    }

    fn classify(&self) -> Classifier {
        classify
    }

    fn table_classifier(&self, node: &NodeState, table: &str) -> Option<Box<Classify<'static>>> {
        table_classifier(&node.data_dir, node.port, table)
    }

    fn url(&self, c: &ClusterState) -> String {
        let port = self.primary(c).map_or(0, |p| p.port);
        let password = c.facts.get(PASSWORD_FACT).map_or("", String::as_str);
        format!("postgres://{USER}:{password}@127.0.0.1:{port}/{DATABASE}")
    }

    fn binding_options(&self, c: &ClusterState) -> BTreeMap<String, String> {
        let mut o = BTreeMap::new();
        let of_role = |role: &str| -> Vec<String> {
            c.nodes
                .iter()
                .filter(|n| n.role == role)
                .map(NodeState::endpoint)
                .collect()
        };
        let p = &c.deployment.postgres;
        if let Some(hosts) = p.read_hosts(
            p.reads_to_replicas,
            &of_role("primary"),
            &of_role("replica"),
        ) {
            o.insert("read_hosts".into(), hosts);
        }
        o
    }
}
