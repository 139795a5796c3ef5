//! MariaDB Galera: N multi-master nodes; joiners get their state by SST (mariabackup) or IST.
//!
//! Each node has a `my.cnf` of its own (the SST scripts read the node's settings from it), its own
//! ports for clients, group communication (gmcast), IST and SST, all on 127.0.0.1.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::host::free_port;
use crate::mariadb::{
    create_user_and_database_sql, install_db, ping, socket_superuser, sql, tmp_dir, DATABASE, USER,
};
use crate::process::ProcessRef;
use crate::space::Classifier;

pub struct Galera;

const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

fn socket(n: &NodeState) -> std::path::PathBuf {
    n.dir.join("mysqld.sock")
}

fn status_var(n: &NodeState, name: &str) -> Option<String> {
    status_vars(n, &[name]).ok()?.remove(name)
}

/// Status variables of node `n`, asked in one query (bounded: a paused node costs one limit).
fn status_vars(
    n: &NodeState,
    names: &[&str],
) -> Result<std::collections::BTreeMap<String, String>, DeployError> {
    let listed: Vec<String> = names.iter().map(|v| format!("'{v}'")).collect();
    let query = format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        listed.join(", ")
    );
    let out = crate::mariadb::ask(&socket(n), &query)?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

impl Galera {
    fn write_config(&self, c: &ClusterState, node: &NodeState) -> Result<(), DeployError> {
        // The donor's state transfer runs as the server's account and logs in as it over the
        // socket (install_db gave that account a socket login).
        let transfer_user = c
            .account()?
            .system_name()
            .map_or_else(socket_superuser, str::to_string);
        let gcomm: Vec<String> = c
            .nodes
            .iter()
            .chain(std::iter::once(node))
            .map(|n| format!("127.0.0.1:{}", n.ports["gmcast"]))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let p = &node.ports;
        let mut cnf = format!(
            "[mysqld]\n\
             datadir={data}\n\
             tmpdir={tmp}\n\
             socket={sock}\n\
             port={port}\n\
             pid-file={dir}/mariadbd.pid\n\
             bind-address=127.0.0.1\n\
             skip-name-resolve\n\
             innodb-buffer-pool-size=128M\n\
             max-connections=500\n\
             binlog-format=ROW\n\
             default-storage-engine=InnoDB\n\
             innodb-autoinc-lock-mode=2\n\
             wsrep-on=ON\n\
             wsrep-provider={PROVIDER}\n\
             wsrep-cluster-name={name}\n\
             wsrep-cluster-address=gcomm://{gcomm}\n\
             wsrep-node-name={id}\n\
             wsrep-node-address=127.0.0.1:{gm}\n\
             wsrep-provider-options=\"gmcast.listen_addr=tcp://127.0.0.1:{gm};ist.recv_addr=127.0.0.1:{ist};gcache.size=64M\"\n\
             wsrep-sst-receive-address=127.0.0.1:{sst}\n\
             wsrep-sst-method=mariabackup\n\
             wsrep-sst-auth={transfer_user}:\n",
            data = node.data_dir.display(),
            tmp = tmp_dir(&node.data_dir).display(),
            sock = socket(node).display(),
            port = node.port,
            dir = node.dir.display(),
            name = c.deployment.name,
            gcomm = gcomm.join(","),
            id = node.id,
            gm = p["gmcast"],
            ist = p["ist"],
            sst = p["sst"],
        );
        for (k, v) in c.deployment.server_settings() {
            cnf.push_str(&format!("{k}={v}\n"));
        }
        // The SST scripts find the donor's socket here.
        cnf.push_str(&format!(
            "[client]\nsocket={}\nuser={transfer_user}\n[sst]\nsockopt=\"reuseaddr\"\n",
            socket(node).display()
        ));
        let file = node.dir.join("my.cnf");
        std::fs::write(&file, cnf).map_err(|e| DeployError::io(&file, e))
    }

    fn spawn(
        &self,
        c: &ClusterState,
        node: &NodeState,
        new_cluster: bool,
    ) -> Result<ProcessRef, DeployError> {
        let mut cmd = Command::new("mariadbd");
        cmd.arg(format!(
            "--defaults-file={}",
            node.dir.join("my.cnf").display()
        ));
        if new_cluster {
            cmd.arg("--wsrep-new-cluster");
        }
        let mut p = c.spawn_node(node, cmd)?;
        let sock = socket(node);
        // A joiner answers only after its state transfer.
        p.wait_ready(Duration::from_secs(300), || {
            ping(&sock)
                && status_var(node, "wsrep_local_state_comment").as_deref() == Some("Synced")
        })?;
        Ok(p.detach())
    }

    fn new_galera_node(&self, c: &mut ClusterState) -> Result<NodeState, DeployError> {
        let mut node = c.new_node("node", "127.0.0.1", free_port()?)?;
        for k in ["gmcast", "ist", "sst"] {
            node.ports.insert(k.into(), free_port()?);
        }
        node.data_dir = node.dir.join("data");
        install_db(&node.data_dir, &c.account()?)?;
        Ok(node)
    }

    fn join(&self, c: &mut ClusterState, first: bool) -> Result<String, DeployError> {
        let mut node = self.new_galera_node(c)?;
        self.write_config(c, &node)?;
        node.process = Some(self.spawn(c, &node, first)?);
        let id = node.id.clone();
        c.nodes.push(node);
        Ok(id)
    }
}

impl Engine for Galera {
    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // Multi-master: "the primary" is the node a failure takes away from the group; the
        // survivors keep the quorum. InnoDB has no compaction to run.
        operation::with(&operation::MEMBERSHIP, &[OperationKind::FailPrimary])
    }

    fn account(&self) -> &'static str {
        crate::mariadb::ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        d.nodes
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        // Ports of every node first: each node's gcomm address lists them all.
        self.join(c, true)?;
        let password = crate::host::random_password()?;
        sql(
            &socket(&c.nodes[0]),
            &create_user_and_database_sql(&password),
        )?;
        c.facts
            .insert(super::engine::PASSWORD_FACT.into(), password);
        for _ in 1..c.deployment.nodes {
            self.join(c, false)?;
        }
        // Later nodes list every member; rewrite the first ones' configs for restarts.
        for n in c.nodes.clone() {
            self.write_config(c, &n)?;
        }
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        // With every node stopped, the one that stopped last (marked safe to bootstrap in its
        // grastate.dat) starts a new cluster; the others join it.
        let others_running = c.nodes.iter().any(|n| n.id != node.id && n.is_running());
        let safe = std::fs::read_to_string(node.data_dir.join("grastate.dat"))
            .is_ok_and(|g| g.contains("safe_to_bootstrap: 1"));
        self.spawn(c, node, !others_running && safe)
    }

    /// The first running node, killed: the survivors evict it (after `evs.suspect_timeout`) and,
    /// holding a majority, stay the primary component (the cluster's wait for ready follows it).
    fn fail_primary(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        if c.running().count() < 3 {
            return Err(DeployError::Failed(
                "a Galera node's failure keeps a quorum only with 3 nodes or more running".into(),
            ));
        }
        let node = c.nodes.iter_mut().find(|n| n.process.is_some()).unwrap();
        if let Some(p) = node.process.take() {
            p.kill();
        }
        Ok(node.id.clone())
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let id = self.join(c, false)?;
        for n in c.nodes.clone() {
            self.write_config(c, &n)?;
        }
        Ok(id)
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        if c.nodes.len() == 1 {
            return Err(DeployError::Failed(format!("{id} is the last Galera node")));
        }
        // A node that shuts down cleanly leaves the group; the others' view shrinks.
        let node = c.node(id)?.clone();
        if let Some(p) = node.process {
            p.stop(Duration::from_secs(120));
        }
        c.nodes.retain(|n| n.id != id);
        for n in c.nodes.clone() {
            self.write_config(c, &n)?;
        }
        Ok(())
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        let size = c.running().count().to_string();
        let mut missing = Vec::new();
        for n in c.running() {
            if !ping(&socket(n)) {
                missing.push(format!("{} does not answer", n.id));
                continue;
            }
            if status_var(n, "wsrep_ready").as_deref() != Some("ON") {
                missing.push(format!("{}: wsrep not ready", n.id));
            }
            let seen = status_var(n, "wsrep_cluster_size").unwrap_or_default();
            if seen != size {
                missing.push(format!("{} sees a cluster of {seen}, not {size}", n.id));
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let mut busy = Vec::new();
        const STATE: &str = "wsrep_local_state_comment";
        const QUEUES: [&str; 2] = ["wsrep_local_recv_queue", "wsrep_local_send_queue"];
        for n in c.running() {
            let vars = match status_vars(n, &[STATE, QUEUES[0], QUEUES[1]]) {
                Ok(vars) => vars,
                Err(e) => {
                    busy.push(format!("{}: {e}", n.id));
                    continue;
                }
            };
            let state = vars.get(STATE).map_or("", String::as_str);
            if state != "Synced" {
                busy.push(format!("{} is {state}", n.id));
            }
            for q in QUEUES {
                let v = vars.get(q).map_or("", String::as_str);
                if v != "0" {
                    busy.push(format!("{}: {q} = {v}", n.id));
                }
            }
        }
        busy
    }

    /// InnoDB extends a table's file as it allocates the pages the records go to; the dirty pages
    /// it writes later change no size.
    fn flush(&self, _c: &ClusterState) -> Result<Vec<String>, DeployError> {
        Ok(vec!["MariaDB/InnoDB: nothing to flush".into()])
    }

    fn compact(&self, _c: &ClusterState) -> Result<Vec<String>, DeployError> {
        // OPTIMIZE TABLE would rebuild the table on every node; InnoDB needs no compaction after a
        // load.
        Ok(vec!["MariaDB/InnoDB: nothing to compact".into()])
    }

    fn classify(&self) -> Classifier {
        |p: &Path| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("ib_logfile") || name.starts_with("aria_log") {
                "log"
            } else if name.starts_with("galera.cache")
                || name == "grastate.dat"
                || name == "gvwstate.dat"
            {
                "replication"
            } else if p.starts_with("mysql")
                || p.starts_with("performance_schema")
                || p.starts_with("sys")
            {
                "system"
            } else {
                "data"
            }
        }
    }

    /// Every running node: Galera is multi-master, so clients spread over all of them.
    fn url(&self, c: &ClusterState) -> String {
        let hosts: Vec<String> = c.running().map(NodeState::endpoint).collect();
        let password = c
            .facts
            .get(super::engine::PASSWORD_FACT)
            .map_or("", String::as_str);
        format!("mysql://{USER}:{password}@{}/{DATABASE}", hosts.join(","))
    }
}
