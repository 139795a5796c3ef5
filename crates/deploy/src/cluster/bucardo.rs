//! PostgreSQL multi-master through Bucardo 5 (Debian `bucardo`): N masters, each writable, and the
//! Bucardo daemon copying every change of the benchmark table to the other masters (asynchronous,
//! trigger-based; a conflict goes to the latest change, `bucardo_latest`). This is Dijkshoorn's
//! multi-master PostgreSQL (docs/studies.md, section 1: "multi-master (Bucardo, 2 and 4
//! machines)").
//!
//! Bucardo replicates rows, not DDL, and only tables it was told of. So the benchmark table belongs
//! to the deployment: [`Engine::prepare_table`] creates it on every master (with the SQL the binding
//! would use) and adds it to the sync; a reset stops the daemon, drops the table and Bucardo's
//! per-database bookkeeping (its delta and track tables, which would otherwise replay old changes
//! onto the new data) on every master, creates the table again and restarts the daemon.
//!
//! Nodes: the masters (role `master`, node1..N) and the daemon (role `bucardo`, last); Bucardo's own
//! database lives on the first master. The daemon forks itself: its pid comes from its pid file.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::engine::{ClusterState, Engine, NodeState, PASSWORD_FACT};
use super::operation::OperationKind;
use crate::error::DeployError;
use crate::host::{free_port, run};
use crate::postgres::{
    as_postgres, bin_dir, create_user_and_database, initdb, psql, DATABASE, USER,
};
use crate::process::ProcessRef;
use crate::space::{Classifier, Classify};

pub struct Bucardo;

/// The one sync, its relation and database groups.
const SYNC: &str = "bench";

/// Bucardo copies in batches after commits (its kick), so under continuous writes some change is
/// always waiting: the sync counts as caught up when no change has waited longer than this. A lag
/// bound, as a streaming replica's 0 bytes of lag is a moment between two commits.
const COPY_LAG_BOUND_S: u32 = 1;
/// The cluster facts naming the table the sync replicates and the SQL that created it (absent:
/// none yet).
const TABLE_FACT: &str = "bucardo_table_sql";
const TABLE_NAME_FACT: &str = "bucardo_table";

/// The PostgreSQL servers: masters, and in master-slave mode the slaves.
fn servers(c: &ClusterState) -> impl Iterator<Item = &NodeState> {
    c.nodes
        .iter()
        .filter(|n| n.role == "master" || n.role == SLAVE)
}

/// A target of a master-slave sync: copies of the master's changes, serving reads.
const SLAVE: &str = "slave";

fn master_slave(c: &ClusterState) -> bool {
    c.deployment.postgres.bucardo == crate::spec::BucardoSync::MasterSlave
}

fn first_master(c: &ClusterState) -> Result<&NodeState, DeployError> {
    servers(c)
        .next()
        .ok_or_else(|| DeployError::Failed("the cluster has no master".into()))
}

fn daemon(c: &ClusterState) -> Result<&NodeState, DeployError> {
    c.nodes
        .iter()
        .find(|n| n.role == "bucardo")
        .ok_or_else(|| DeployError::Failed("the cluster has no Bucardo daemon".into()))
}

fn pid_dir(daemon: &NodeState) -> PathBuf {
    daemon.dir.join("pid")
}

/// `bucardo <args>` against the control database on the first master (over its socket, as the
/// superuser), with its files in the daemon's directory and no rc file of the machine's.
fn bucardo(c: &ClusterState, args: &[&str]) -> Result<String, DeployError> {
    bucardo_in(c, args, None)
}

/// [`bucardo`] run inside `group`: what it forks (the daemon) stays there.
fn bucardo_in(
    c: &ClusterState,
    args: &[&str],
    group: Option<&crate::memory::MemoryGroup>,
) -> Result<String, DeployError> {
    let m = first_master(c)?;
    let d = daemon(c)?;
    let mut cmd = Command::new("bucardo");
    cmd.arg("--no-bucardorc")
        .arg("--dbhost")
        .arg(&m.data_dir)
        .args(["--dbport", &m.port.to_string(), "--dbuser", "postgres"])
        .args(["--dbname", "bucardo", "--quiet"])
        .arg("--piddir")
        .arg(pid_dir(d))
        .arg("--log-destination")
        .arg(&d.dir)
        .args(args)
        .current_dir(&d.dir)
        .env("HOME", &d.dir)
        .env("PGBINDIR", bin_dir()?);
    as_postgres(&mut cmd)?;
    if let Some(group) = group {
        group.join_at_exec(&mut cmd)?;
    }
    let out = run(&mut cmd, &format!("bucardo {}", args.join(" ")))?;
    // Some failures exit 0 with a message.
    if out.contains("ERROR") || out.contains("FATAL") {
        return Err(DeployError::Failed(format!(
            "bucardo {}: {}",
            args.join(" "),
            out.trim()
        )));
    }
    Ok(out)
}

fn sql(node: &NodeState, db: &str, text: &str) -> Result<String, DeployError> {
    psql(&bin_dir()?, &node.data_dir, node.port, db, text)
}

/// The process the daemon's (Master Control Program's) pid file names, if it runs as the MCP.
fn mcp_process(daemon: &NodeState) -> Option<ProcessRef> {
    let text = std::fs::read_to_string(pid_dir(daemon).join("bucardo.mcp.pid")).ok()?;
    let pid: u32 = text.lines().next()?.trim().parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    String::from_utf8_lossy(&cmdline)
        .starts_with("Bucardo Master Control Program")
        .then(|| ProcessRef::of(pid))
        .flatten()
}

impl Bucardo {
    fn start_daemon(&self, c: &ClusterState) -> Result<ProcessRef, DeployError> {
        let d = daemon(c)?;
        let _ = std::fs::remove_file(pid_dir(d).join("bucardo.mcp.pid"));
        // The daemon forks itself from this command: in the node's memory group, so is it.
        let group = c.create_memory_group(d)?;
        bucardo_in(c, &["start", "scalebench"], group.as_ref())?;
        // The MCP writes its pid file, forks itself, exits and the child writes the file again:
        // the pid counts once the file has named the same running MCP for a second.
        let mut mcp: Option<ProcessRef> = None;
        let mut same_for = 0;
        crate::host::poll_every(Duration::from_millis(200), Duration::from_secs(30), || {
            let now = mcp_process(d);
            same_for = if now.is_some() && now == mcp {
                same_for + 1
            } else {
                0
            };
            mcp = now;
            same_for >= 5
        });
        let mcp = mcp.filter(|_| same_for >= 5);
        mcp.ok_or_else(|| {
            DeployError::Failed(format!(
                "the Bucardo daemon did not start within 30 s; see {}",
                d.dir.join("log.bucardo").display()
            ))
        })
    }

    /// Stops the daemon (and every process it forked) and forgets it until started again.
    fn stop_daemon(&self, c: &mut ClusterState) {
        if let Some(d) = c.nodes.iter_mut().find(|n| n.role == "bucardo") {
            if let Some(p) = d.process.take() {
                p.stop_with(Signal::SIGTERM, Duration::from_secs(30));
            }
        }
    }

    /// Drops the table and Bucardo's bookkeeping on every master, creates the table again (owned by
    /// the benchmark user) and adds it to a fresh sync between all masters.
    fn register_table(
        &self,
        c: &mut ClusterState,
        table: &str,
        create_sql: &str,
    ) -> Result<(), DeployError> {
        self.stop_daemon(c);
        if c.facts.contains_key(TABLE_FACT) {
            bucardo(c, &["remove", "sync", SYNC])?;
            bucardo(c, &["remove", "relgroup", SYNC])?;
            bucardo(c, &["remove", "dbgroup", SYNC])?;
            c.facts.remove(TABLE_FACT);
        }
        for m in servers(c) {
            sql(
                m,
                DATABASE,
                &format!(
                    "SET client_min_messages = warning; DROP SCHEMA IF EXISTS bucardo CASCADE; \
                     DROP TABLE IF EXISTS {table}; SET ROLE {USER}; {create_sql}"
                ),
            )?;
        }
        // Every master a source; slaves are targets (changes flow one way).
        let dbs: Vec<String> = servers(c)
            .map(|m| {
                let role = if m.role == SLAVE { "target" } else { "source" };
                format!("{}:{role}", m.id)
            })
            .collect();
        bucardo(
            c,
            &[
                "add",
                "sync",
                SYNC,
                &format!("tables=public.{table}"),
                &format!("dbs={}", dbs.join(",")),
                "conflict_strategy=bucardo_latest",
            ],
        )?;
        c.facts.insert(TABLE_FACT.into(), create_sql.into());
        c.facts.insert(TABLE_NAME_FACT.into(), table.into());
        let p = self.start_daemon(c)?;
        if let Some(d) = c.nodes.iter_mut().find(|n| n.role == "bucardo") {
            d.process = Some(p);
        }
        Ok(())
    }
}

impl Engine for Bucardo {
    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // The masters are those `up` started: none added or removed.
        vec![
            OperationKind::Crash,
            OperationKind::Restart,
            OperationKind::RollingRestart,
        ]
    }

    fn account(&self) -> &'static str {
        crate::postgres::ACCOUNT
    }

    /// The Bucardo daemon's node holds its control database, not the benchmark's data.
    fn serves_data(&self, node: &NodeState) -> bool {
        node.role != "bucardo"
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.nodes + 1 // the replication daemon after the databases
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let bin = bin_dir()?;
        let password = crate::host::random_password()?;
        for k in 0..c.deployment.nodes {
            let port = free_port()?;
            let role = if k > 0 && master_slave(c) {
                SLAVE
            } else {
                "master"
            };
            let mut node = c.new_node(role, "127.0.0.1", port)?;
            node.data_dir = node.dir.join("data");
            initdb(&bin, &node.data_dir)?;
            node.process = Some(super::postgres::spawn(c, &node)?);
            c.nodes.push(node.clone());
            create_user_and_database(&bin, &node.data_dir, port, &password)?;
        }
        c.facts.insert(PASSWORD_FACT.into(), password);
        // The daemon's node: its directory holds its log and pid files; it serves no clients.
        let control_port = first_master(c)?.port;
        let mut d = c.new_node("bucardo", "127.0.0.1", control_port)?;
        crate::account::private_dir(&pid_dir(&d), &c.account()?)?;
        // Nothing of the daemon's is data: its state is in the first master's `bucardo` database.
        d.data_dir = d.dir.join("data");
        crate::account::private_dir(&d.data_dir, &c.account()?)?;
        c.nodes.push(d);
        bucardo(c, &["install", "--batch"])?;
        bucardo(
            c,
            &[
                "set",
                &format!(
                    "reason_file={}",
                    daemon(c)?.dir.join("restart.reason").display()
                ),
            ],
        )?;
        let ids: Vec<(String, String, u16)> = servers(c)
            .map(|m| (m.id.clone(), m.data_dir.display().to_string(), m.port))
            .collect();
        for (id, socket_dir, port) in ids {
            bucardo(
                c,
                &[
                    "add",
                    "db",
                    &id,
                    &format!("dbname={DATABASE}"),
                    &format!("host={socket_dir}"),
                    &format!("port={port}"),
                    "user=postgres",
                ],
            )?;
        }
        let p = self.start_daemon(c)?;
        if let Some(d) = c.nodes.iter_mut().find(|n| n.role == "bucardo") {
            d.process = Some(p);
        }
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        if node.role == "bucardo" {
            self.start_daemon(c)
        } else {
            super::postgres::spawn(c, node)
        }
    }

    fn add_node(&self, _c: &mut ClusterState) -> Result<String, DeployError> {
        Err(DeployError::Failed(
            "a Bucardo deployment has the masters `up` started: adding one would need a copy of \
             the data and a new sync; deploy with more nodes instead"
                .into(),
        ))
    }

    fn removable(&self, _c: &ClusterState) -> Option<String> {
        None
    }

    fn remove_node(&self, _c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        Err(DeployError::Failed(format!(
            "{id}: a Bucardo deployment keeps the masters `up` started (stop-node and start-node \
             stop and restart one)"
        )))
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let Ok(bin) = bin_dir() else {
            return vec!["PostgreSQL is not installed".into()];
        };
        let mut missing: Vec<String> = servers(c)
            .filter(|n| {
                n.process.is_some() && !crate::postgres::is_ready(&bin, &n.data_dir, n.port)
            })
            .map(|n| format!("{} (master) not accepting connections", n.id))
            .collect();
        if let Ok(d) = daemon(c) {
            if d.process.is_none() {
                missing.push(format!("{}: the Bucardo daemon is stopped", d.id));
            }
        }
        missing
    }

    /// Changes Bucardo has not copied within [`COPY_LAG_BOUND_S`] (delta rows with no track row
    /// of the sync), truncates not yet replicated, and autovacuum.
    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let mut busy = Vec::new();
        // With a server down (crashed, stopped) Bucardo keeps its changes until it is back:
        // waiting, not in motion, as a streaming replica that is down shows no lag.
        let all_up = servers(c).all(|m| m.process.is_some());
        let table = c.facts.get(TABLE_NAME_FACT).filter(|_| all_up);
        // Changes are recorded (delta rows) on the sources only.
        for m in servers(c).filter(|m| m.process.is_some()) {
            if let (Some(t), true) = (table, m.role == "master") {
                let pending = format!(
                    "SELECT (SELECT count(*) FROM bucardo.delta_public_{t} d WHERE NOT EXISTS \
                     (SELECT 1 FROM bucardo.track_public_{t} k WHERE k.txntime = d.txntime \
                     AND k.target = 'dbgroup {SYNC}') \
                     AND d.txntime < now() - interval '{COPY_LAG_BOUND_S} seconds') \
                     + (SELECT count(*) FROM bucardo.bucardo_truncate_trigger WHERE replicated IS NULL)"
                );
                let asked = bin_dir().and_then(|bin| {
                    crate::postgres::ask(&bin, &m.data_dir, m.port, DATABASE, &pending)
                });
                match asked {
                    Ok(n) if n.trim() == "0" => {}
                    Ok(n) => busy.push(format!(
                        "{}: {} changes not copied within {COPY_LAG_BOUND_S} s",
                        m.id,
                        n.trim()
                    )),
                    Err(e) => busy.push(format!("{}: {e}", m.id)),
                }
            }
            busy.extend(super::postgres::autovacuum(m));
        }
        busy
    }

    /// A change younger than the lag bound is not counted busy: idle only once the bound has
    /// passed since the first quiet check, so every change made before it was seen.
    fn idle_settle(&self) -> Duration {
        Duration::from_secs(COPY_LAG_BOUND_S.into()) + Duration::from_millis(200)
    }

    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for m in servers(c).filter(|m| m.process.is_some()) {
            sql(m, "postgres", "CHECKPOINT")?;
            done.push(format!("{}: CHECKPOINT", m.id));
        }
        Ok(done)
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        let mut done = Vec::new();
        for m in servers(c).filter(|m| m.process.is_some()) {
            sql(m, DATABASE, "VACUUM ANALYZE")?;
            sql(m, "postgres", "CHECKPOINT")?;
            done.push(format!("{}: VACUUM ANALYZE, CHECKPOINT", m.id));
        }
        Ok(done)
    }

    /// The daemon ends when one of its databases goes away: a server's restart stops it first
    /// and starts it after (`bucardo stop`, `bucardo start`).
    fn restarts_with(&self, c: &ClusterState, node: &NodeState) -> Vec<String> {
        match daemon(c) {
            Ok(d) if d.id != node.id => vec![d.id.clone()],
            _ => Vec::new(),
        }
    }

    /// PostgreSQL's fast shutdown; the daemon (no handler of its own) ends on it too.
    fn stop_signal(&self) -> Signal {
        Signal::SIGINT
    }

    fn classify(&self) -> Classifier {
        super::postgres::classify
    }

    /// Each server's own files of the table (Bucardo's delta and track tables are `system`); the
    /// daemon's node holds no records.
    fn table_classifier(&self, node: &NodeState, table: &str) -> Option<Box<Classify<'static>>> {
        if node.role == "master" || node.role == SLAVE {
            super::postgres::table_classifier(&node.data_dir, node.port, table)
        } else {
            Some(Box::new(|_: &std::path::Path| "other"))
        }
    }

    /// Every master, so clients spread over them (slot k on master k mod N); in master-slave mode
    /// the one master.
    fn url(&self, c: &ClusterState) -> String {
        let password = c.facts.get(PASSWORD_FACT).map_or("", String::as_str);
        let hosts: Vec<String> = servers(c)
            .filter(|n| n.role == "master")
            .map(NodeState::endpoint)
            .collect();
        format!(
            "postgres://{USER}:{password}@{}/{DATABASE}",
            hosts.join(",")
        )
    }

    /// Master-slave: reads and scans go to the slaves (the binding's `read_hosts`), or with
    /// `reads_on_every_server` to the master and the slaves alike, as Dijkshoorn's master-slave
    /// rows read on all of their machines.
    fn binding_options(&self, c: &ClusterState) -> std::collections::BTreeMap<String, String> {
        let of_role = |role: &str| -> Vec<String> {
            servers(c)
                .filter(|n| n.role == role)
                .map(NodeState::endpoint)
                .collect()
        };
        let mut o = std::collections::BTreeMap::new();
        let (masters, slaves) = (of_role("master"), of_role(SLAVE));
        if let Some(hosts) = c.deployment.postgres.read_hosts(true, &masters, &slaves) {
            if !slaves.is_empty() {
                o.insert("read_hosts".into(), hosts);
            }
        }
        o
    }

    fn owns_table(&self) -> bool {
        true
    }

    fn prepare_table(
        &self,
        c: &mut ClusterState,
        table: &str,
        create_sql: &str,
        drop: bool,
    ) -> Result<(), DeployError> {
        if !table
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            return Err(DeployError::BadInput(format!(
                "table name {table:?}: a Bucardo deployment takes letters, digits and '_'"
            )));
        }
        let registered = c.facts.contains_key(TABLE_FACT);
        let same = c.facts.get(TABLE_FACT).is_some_and(|s| s == create_sql)
            && c.facts.get(TABLE_NAME_FACT).is_some_and(|t| t == table);
        if registered && !same && !drop {
            // Like CREATE TABLE IF NOT EXISTS, creating never drops data: that takes --drop-schema.
            return Err(DeployError::Failed(format!(
                "the masters' benchmark table has another name or field layout than this workload's ({}); load with --drop-schema to recreate it",
                c.facts.get(TABLE_NAME_FACT).map_or("?", String::as_str)
            )));
        }
        if drop || !same {
            self.register_table(c, table, create_sql)?;
        }
        Ok(())
    }
}
