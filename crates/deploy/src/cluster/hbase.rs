//! HBase 2.6.1 clusters: one ZooKeeper, one master, N region servers and the Thrift2 gateway, each
//! its own JVM on 127.0.0.1, sharing one `file://` root directory that stands in for HDFS (it lives
//! in the master's directory). A region server added under load takes regions from the balancer;
//! one removed is decommissioned first (its regions move away, then it stops). As on HDFS, no data
//! moves with the regions: Dory's observation that HBase stabilises in minutes (studies.md, 5).
//!
//! Nodes are kept in the order zookeeper, master, gateway, region servers (added ones last).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::engine::{ClusterState, Engine, NodeState};
use super::operation::{self, OperationKind};
use crate::error::DeployError;
use crate::hbase::{gateway_command, jvm, site_xml, write_conf, ACCOUNT, PROJECT};
use crate::host::{free_port, port_open, run, wait_until};
use crate::maven::readable_classpath;
use crate::process::ProcessRef;
use crate::space::Classifier;
use crate::spec::{HBASE_GATEWAY_HEAP_MB, HBASE_HEAP_MB, HBASE_MASTER_HEAP_MB, ZOOKEEPER_HEAP_MB};

pub struct Hbase;

const ZOOKEEPER: &str = "zookeeper";
const MASTER: &str = "master";
const GATEWAY: &str = "gateway";
const REGION_SERVER: &str = "regionserver";
/// The info server's port (HTTP, /jmx) in a node's ports.
const INFO: &str = "info";

/// The admin tool (Admin API) run by the JDK's source launcher from a node's directory: balancing,
/// decommissioning and compaction, which the Thrift gateway cannot ask for.
const ADMIN_SOURCE: &str = include_str!("../../../../deployments/hbase/HbaseAdmin.java");

/// What the master and a region server log once they serve.
const MASTER_READY: &str = "Master has completed initialization";
const REGION_SERVER_READY: &str = "Serving as";

fn node_of_role<'a>(c: &'a ClusterState, role: &str) -> Result<&'a NodeState, DeployError> {
    c.nodes
        .iter()
        .find(|n| n.role == role)
        .ok_or_else(|| DeployError::Failed(format!("the cluster has no {role}")))
}

fn region_servers(c: &ClusterState) -> impl Iterator<Item = &NodeState> {
    c.nodes.iter().filter(|n| n.role == REGION_SERVER)
}

fn log_has(node: &NodeState, text: &str) -> bool {
    std::fs::read_to_string(node.dir.join("server.log")).is_ok_and(|t| t.contains(text))
}

/// hbase-site.xml of `node`: the cluster's (distributed, its ZooKeeper, the master's ports, the
/// shared root), and a region server's own ports.
fn site(c: &ClusterState, node: &NodeState) -> Result<String, DeployError> {
    let zookeeper = node_of_role(c, ZOOKEEPER)?;
    let master = node_of_role(c, MASTER)?;
    let mut props: Vec<(String, String)> = vec![
        ("hbase.cluster.distributed".into(), "true".into()),
        (
            "hbase.rootdir".into(),
            format!("file://{}", master.data_dir.display()),
        ),
        (
            "hbase.tmp.dir".into(),
            format!("{}/tmp", master.data_dir.display()),
        ),
        ("hbase.zookeeper.quorum".into(), "127.0.0.1".into()),
        (
            "hbase.zookeeper.property.clientPort".into(),
            zookeeper.port.to_string(),
        ),
        // A crashed region server is noticed when its ZooKeeper session ends.
        ("zookeeper.session.timeout".into(), "10000".into()),
        ("hbase.master.hostname".into(), "127.0.0.1".into()),
        ("hbase.regionserver.hostname".into(), "127.0.0.1".into()),
        ("hbase.master.ipc.address".into(), "127.0.0.1".into()),
        ("hbase.regionserver.ipc.address".into(), "127.0.0.1".into()),
        ("hbase.master.port".into(), master.port.to_string()),
        // The info servers answer the idleness checks (/jmx): on loopback, the master's port here, each
        // region server's in its own file.
        (
            "hbase.master.info.port".into(),
            master.ports[INFO].to_string(),
        ),
        ("hbase.master.info.bindAddress".into(), "127.0.0.1".into()),
        (
            "hbase.regionserver.info.bindAddress".into(),
            "127.0.0.1".into(),
        ),
        (
            "hbase.unsafe.stream.capability.enforce".into(),
            "false".into(),
        ),
        // Without tables of its own the master serves none: user regions on region servers.
        ("hbase.balancer.tablesOnMaster".into(), "false".into()),
    ];
    if node.role == REGION_SERVER {
        props.push(("hbase.regionserver.port".into(), node.port.to_string()));
        props.push((
            "hbase.regionserver.info.port".into(),
            node.ports[INFO].to_string(),
        ));
    }
    Ok(site_xml(props, &c.deployment.server_settings()))
}

/// One attribute of a bean of a node's info server (`/jmx?qry=BEAN`, JSON), in milliseconds and
/// without a JVM (HBase's Admin API would start one per question, seconds of CPU taken from the
/// database under test).
fn jmx(node: &NodeState, bean: &str, attribute: &str) -> Result<serde_json::Value, String> {
    let port = node.ports.get(INFO).copied().unwrap_or(0);
    let url = format!("http://127.0.0.1:{port}/jmx?qry={bean}");
    let agent = crate::host::loopback_http(Duration::from_secs(1), Duration::from_secs(5));
    let body = agent
        .get(&url)
        .call()
        .and_then(|mut r| r.body_mut().read_to_string())
        .map_err(|e| format!("{} ({}): {e}", node.id, node.role))?;
    let json: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| format!("{} ({}): /jmx answered no JSON: {e}", node.id, node.role))?;
    json["beans"][0]
        .get(attribute)
        .cloned()
        .ok_or_else(|| format!("{} ({}): no {attribute} in {bean} yet", node.id, node.role))
}

const MASTER_SERVER: &str = "Hadoop:service=HBase,name=Master,sub=Server";
const ASSIGNMENT: &str = "Hadoop:service=HBase,name=Master,sub=AssignmentManager";
const RS_SERVER: &str = "Hadoop:service=HBase,name=RegionServer,sub=Server";

impl Hbase {
    fn classpath(&self, c: &ClusterState) -> Result<String, DeployError> {
        readable_classpath(&PROJECT.classpath()?, &c.account()?)
    }

    /// The JVM command of `node`, its conf directory written anew.
    fn command(&self, c: &ClusterState, node: &NodeState) -> Result<Command, DeployError> {
        let account = c.account()?;
        let classpath = self.classpath(c)?;
        let d = &c.deployment;
        let h = &d.hbase;
        if node.role == ZOOKEEPER {
            let cfg = node.dir.join("zoo.cfg");
            let text = format!(
                "tickTime=500\ndataDir={}\nclientPort={}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n",
                node.data_dir.display(),
                node.port
            );
            std::fs::write(&cfg, text).map_err(|e| DeployError::io(&cfg, e))?;
            account.give(&cfg)?;
            let mut cmd = Command::new("java");
            let heap = c.deployment.jvm_heap_mb(None, ZOOKEEPER_HEAP_MB);
            cmd.arg(format!("-Xmx{heap}m"))
                .args(["-cp", &classpath])
                .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
                .arg(&cfg);
            return Ok(cmd);
        }
        let conf = write_conf(&node.dir, &site(c, node)?, &account)?;
        Ok(match node.role.as_str() {
            MASTER => {
                let mut cmd = jvm(
                    &conf,
                    &classpath,
                    d.jvm_heap_mb(h.master_heap_mb, HBASE_MASTER_HEAP_MB),
                    "org.apache.hadoop.hbase.master.HMaster",
                );
                cmd.arg("start");
                cmd
            }
            GATEWAY => gateway_command(
                &conf,
                &classpath,
                d.jvm_heap_mb(h.gateway_heap_mb, HBASE_GATEWAY_HEAP_MB),
                node.port,
            ),
            _ => {
                let mut cmd = jvm(
                    &conf,
                    &classpath,
                    d.jvm_heap_mb(h.heap_mb, HBASE_HEAP_MB),
                    "org.apache.hadoop.hbase.regionserver.HRegionServer",
                );
                cmd.args([
                    "-D",
                    &format!("hbase.regionserver.port={}", node.port),
                    "start",
                ]);
                cmd
            }
        })
    }

    /// Starts `node` and waits until it serves.
    fn spawn(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        let cmd = self.command(c, node)?;
        let mut p = c.spawn_node(node, cmd)?;
        let port = node.port;
        let log = node.dir.join("server.log");
        let ready = |text: &str| std::fs::read_to_string(&log).is_ok_and(|t| t.contains(text));
        match node.role.as_str() {
            REGION_SERVER => p.wait_ready(Duration::from_secs(180), || {
                port_open(port) && ready(REGION_SERVER_READY)
            })?,
            // The master completes its initialization once a region server has registered.
            _ => p.wait_ready(Duration::from_secs(180), || port_open(port))?,
        }
        Ok(p.detach())
    }

    fn new_region_server(&self, c: &mut ClusterState) -> Result<NodeState, DeployError> {
        let mut node = c.new_node(REGION_SERVER, "127.0.0.1", free_port()?)?;
        node.ports.insert(INFO.into(), free_port()?);
        // Its data is in the shared root; its own directory holds its log.
        node.data_dir = node.dir.clone();
        Ok(node)
    }

    /// Runs the admin tool from the master's directory; its standard output.
    fn admin(&self, c: &ClusterState, args: &[&str]) -> Result<String, DeployError> {
        let master = node_of_role(c, MASTER)?;
        let source = master.dir.join("HbaseAdmin.java");
        std::fs::write(&source, ADMIN_SOURCE).map_err(|e| DeployError::io(&source, e))?;
        let classpath = self.classpath(c)?;
        let mut cmd = Command::new("java");
        cmd.args(["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .arg("-Dlog4j.configuration=file:/dev/null")
            .arg("-cp")
            .arg(format!("{}:{classpath}", master.dir.join("conf").display()))
            .arg(&source)
            .args(args);
        run(&mut cmd, &format!("HbaseAdmin {}", args.join(" ")))
    }
}

impl Engine for Hbase {
    fn fail_primary_missing(&self, _d: &crate::spec::Deployment) -> String {
        "one master and no backup master to take over".into()
    }

    fn operations(&self, _d: &crate::spec::Deployment) -> Vec<OperationKind> {
        // One master and no backup master: nothing takes over from it.
        operation::with(&operation::MEMBERSHIP, &[OperationKind::Compact])
    }

    fn account(&self) -> &'static str {
        ACCOUNT
    }

    fn nodes_at_up(&self, d: &crate::spec::Deployment) -> usize {
        3 + d.nodes // ZooKeeper, the master and the Thrift gateway first
    }

    fn up(&self, c: &mut ClusterState) -> Result<(), DeployError> {
        let mut zookeeper = c.new_node(ZOOKEEPER, "127.0.0.1", free_port()?)?;
        zookeeper.data_dir = zookeeper.dir.join("data");
        let mut master = c.new_node(MASTER, "127.0.0.1", free_port()?)?;
        master.ports.insert(INFO.into(), free_port()?);
        master.data_dir = master.dir.join("root");
        let gateway = c.new_node(GATEWAY, "127.0.0.1", free_port()?)?;
        let account = c.account()?;
        for dir in [&zookeeper.data_dir, &master.data_dir] {
            std::fs::create_dir_all(dir).map_err(|e| DeployError::io(dir, e))?;
            account.give(dir)?;
        }
        c.nodes.extend([zookeeper, master]);
        for i in 0..2 {
            let p = self.spawn(c, &c.nodes[i])?;
            c.nodes[i].process = Some(p);
        }
        for _ in 0..c.deployment.nodes {
            let mut rs = self.new_region_server(c)?;
            rs.process = Some(self.spawn(c, &rs)?);
            c.nodes.push(rs);
        }
        let master = node_of_role(c, MASTER)?;
        if !wait_until(Duration::from_secs(c.deployment.ready_timeout_s), || {
            log_has(master, MASTER_READY)
        }) {
            return Err(DeployError::NotReady {
                server: "hbase master".into(),
                seconds: c.deployment.ready_timeout_s,
                log: master.log_tail(),
            });
        }
        let mut gateway = gateway;
        gateway.process = Some(self.spawn(c, &gateway)?);
        // Before the region servers: nodes keep the order zookeeper, master, gateway, region servers.
        c.nodes.insert(2, gateway);
        Ok(())
    }

    fn start(&self, c: &ClusterState, node: &NodeState) -> Result<ProcessRef, DeployError> {
        self.spawn(c, node)
    }

    fn add_node(&self, c: &mut ClusterState) -> Result<String, DeployError> {
        let mut rs = self.new_region_server(c)?;
        rs.process = Some(self.spawn(c, &rs)?);
        let id = rs.id.clone();
        c.nodes.push(rs);
        // Regions move onto it now, not at the balancer's next period (5 minutes).
        let port = c.node(&id)?.port.to_string();
        self.admin(c, &["balance", &port])?;
        Ok(id)
    }

    fn remove_node(&self, c: &mut ClusterState, id: &str) -> Result<(), DeployError> {
        let node = c.node(id)?.clone();
        if node.role != REGION_SERVER {
            return Err(DeployError::Failed(format!(
                "{id} is the cluster's {}: only region servers can be removed",
                node.role
            )));
        }
        if region_servers(c).count() < 2 {
            return Err(DeployError::Failed(
                "the last region server cannot be removed".into(),
            ));
        }
        let port = node.port.to_string();
        // Graceful: no new regions for it, its regions move to the others, then it stops.
        self.admin(c, &["decommission", &port])?;
        self.admin(c, &["stop", &port])?;
        if let Some(p) = node.process {
            if !wait_until(Duration::from_secs(60), || !p.is_running()) {
                p.stop(Duration::from_secs(30));
            }
        }
        c.nodes.retain(|n| n.id != id);
        Ok(())
    }

    fn removable(&self, c: &ClusterState) -> Option<String> {
        region_servers(c).last().map(|n| n.id.clone())
    }

    fn serves_data(&self, node: &NodeState) -> bool {
        node.role == REGION_SERVER
    }

    fn not_ready(&self, c: &ClusterState) -> Vec<String> {
        // A region server stopped or crashed on purpose is down, not unready: the master has
        // moved its regions to the others (ZooKeeper, the master and the gateway must run).
        let stopped = |n: &NodeState| n.role == REGION_SERVER && n.process.is_none();
        let mut missing: Vec<String> = c
            .nodes
            .iter()
            .filter(|n| !(stopped(n) || n.is_running() && port_open(n.port)))
            .map(|n| format!("{} ({}) is not serving on {}", n.id, n.role, n.endpoint()))
            .collect();
        if let Ok(master) = node_of_role(c, MASTER) {
            if !log_has(master, MASTER_READY) {
                missing.push("the master has not completed its initialization".into());
            }
        }
        if missing.is_empty() {
            // The master's list of live region servers: "host,port,startcode;..." .
            match node_of_role(c, MASTER)
                .map_err(|e| e.to_string())
                .and_then(|m| jmx(m, MASTER_SERVER, "tag.liveRegionServers"))
            {
                Ok(live) => {
                    let live = live.as_str().unwrap_or_default().to_string();
                    for rs in region_servers(c).filter(|n| !stopped(n)) {
                        if !live.contains(&format!("127.0.0.1,{},", rs.port)) {
                            missing.push(format!("{} is not a live region server yet", rs.id));
                        }
                    }
                }
                Err(e) => missing.push(e),
            }
        }
        missing
    }

    fn busy(&self, c: &ClusterState) -> Vec<String> {
        let mut busy = Vec::new();
        match node_of_role(c, MASTER)
            .map_err(|e| e.to_string())
            .and_then(|m| jmx(m, ASSIGNMENT, "ritCount"))
        {
            Ok(n) if n.as_u64() != Some(0) => busy.push(format!("{n} regions in transition")),
            Ok(_) => {}
            Err(e) => busy.push(e),
        }
        for rs in region_servers(c).filter(|n| n.is_running()) {
            for (attribute, what) in [
                ("compactionQueueLength", "compactions queued"),
                ("flushQueueLength", "flushes queued"),
            ] {
                match jmx(rs, RS_SERVER, attribute) {
                    Ok(n) if n.as_u64() != Some(0) => {
                        busy.push(format!("{}: {n} {what}", rs.id));
                    }
                    Ok(_) => {}
                    Err(e) => busy.push(e),
                }
            }
        }
        busy
    }

    fn flush(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        self.admin(c, &["flush"])?;
        Ok(vec!["flushed every user table".into()])
    }

    fn compact(&self, c: &ClusterState) -> Result<Vec<String>, DeployError> {
        self.admin(c, &["compact"])?;
        Ok(vec!["flushed and major-compacted every user table".into()])
    }

    fn classify(&self) -> Classifier {
        |p: &Path| {
            let first = p
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            match first.as_deref() {
                Some("WALs" | "oldWALs") => "log",
                Some(
                    "MasterData" | "hbase.id" | "hbase.version" | ".hbck" | "corrupt" | "archive"
                    | "tmp" | ".tmp",
                ) => "system",
                Some("data") if p.starts_with("data/hbase") => "system",
                Some("data") => "data",
                _ => "other",
            }
        }
    }

    fn url(&self, c: &ClusterState) -> String {
        let port = node_of_role(c, GATEWAY).map_or(0, |n| n.port);
        format!("hbase://127.0.0.1:{port}")
    }
}
