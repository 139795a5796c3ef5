//! Apache HBase 2.6.1 from Maven Central on the installed JDK 17: a standalone server (master,
//! region server and ZooKeeper in one JVM, data under a `file://` root directory) and its Thrift
//! gateway (thrift2, a second JVM), every port on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::account::{Account, ServerDir};
use crate::error::DeployError;
use crate::host::{free_port, port_open};
use crate::maven::{readable_classpath, MavenProject};
use crate::process::ManagedProcess;

/// The system account HBase runs as when scalebench runs as root.
pub const ACCOUNT: &str = "hbase";

/// HBase's server, ZooKeeper and Thrift jars, built into the binary.
pub const PROJECT: MavenProject = MavenProject {
    name: "hbase",
    what: "Apache HBase",
    pom: include_str!("../../../deployments/hbase/pom.xml"),
};

const LOG4J: &str = include_str!("../../../deployments/hbase/log4j.properties");
const METRICS2: &str = include_str!("../../../deployments/hbase/hadoop-metrics2-hbase.properties");

/// The module openings HBase needs on JDK 17 (without them it logs warnings and leaves its Unsafe
/// fast paths).
const JVM_FLAGS: &[&str] = &[
    "-XX:+UseG1GC",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
];

/// What the master logs once it serves (its region server included, in standalone mode).
const MASTER_READY: &str = "Master has completed initialization";

/// Heaps sized for a 2-core, 24 GiB machine.
#[derive(Debug, Clone)]
pub struct HbaseOptions {
    pub heap_mb: u32,
    pub gateway_heap_mb: u32,
    /// hbase-site.xml properties added to (or replacing) the generated ones.
    pub site: Vec<(String, String)>,
}

impl Default for HbaseOptions {
    fn default() -> Self {
        HbaseOptions {
            heap_mb: 768,
            gateway_heap_mb: 256,
            site: Vec::new(),
        }
    }
}

/// The ports of a standalone server and its gateway.
#[derive(Debug, Clone, Copy)]
pub struct HbasePorts {
    pub zookeeper: u16,
    pub master: u16,
    pub region_server: u16,
    pub thrift: u16,
}

pub struct HbaseServer {
    pub ports: HbasePorts,
    /// The master JVM (with its region server and ZooKeeper): pausing or killing it stops HBase.
    pub process: ManagedProcess,
    /// The Thrift gateway the binding talks to.
    pub gateway: ManagedProcess,
    /// The `file://` root directory: store files and write-ahead logs.
    pub root_dir: PathBuf,
    /// After the processes: removed once they have stopped.
    _dir: ServerDir,
}

/// hbase-site.xml of a standalone server keeping everything under `dir`.
pub fn standalone_site(dir: &Path, ports: HbasePorts, extra: &[(String, String)]) -> String {
    let d = dir.display();
    let props: Vec<(String, String)> = vec![
        ("hbase.cluster.distributed".into(), "false".into()),
        ("hbase.rootdir".into(), format!("file://{d}/root")),
        ("hbase.tmp.dir".into(), format!("{d}/tmp")),
        (
            "hbase.zookeeper.property.dataDir".into(),
            format!("{d}/zookeeper"),
        ),
        ("hbase.zookeeper.quorum".into(), "127.0.0.1".into()),
        (
            "hbase.zookeeper.property.clientPort".into(),
            ports.zookeeper.to_string(),
        ),
        ("hbase.master.hostname".into(), "127.0.0.1".into()),
        ("hbase.regionserver.hostname".into(), "127.0.0.1".into()),
        ("hbase.master.ipc.address".into(), "127.0.0.1".into()),
        ("hbase.regionserver.ipc.address".into(), "127.0.0.1".into()),
        ("hbase.master.port".into(), ports.master.to_string()),
        (
            "hbase.regionserver.port".into(),
            ports.region_server.to_string(),
        ),
        ("hbase.master.info.port".into(), "-1".into()),
        ("hbase.regionserver.info.port".into(), "-1".into()),
        // A local file system cannot hflush/hsync: HBase refuses it unless told it may.
        (
            "hbase.unsafe.stream.capability.enforce".into(),
            "false".into(),
        ),
    ];
    site_xml(props, extra)
}

/// hbase-site.xml of `props`, each of `overrides` replacing the property of its name or added.
pub fn site_xml(mut props: Vec<(String, String)>, overrides: &[(String, String)]) -> String {
    for (k, v) in overrides {
        match props.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.clone(),
            None => props.push((k.clone(), v.clone())),
        }
    }
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{}</name><value>{}</value></property>\n",
            xml_escape(&k),
            xml_escape(&v)
        ));
    }
    xml.push_str("</configuration>\n");
    xml
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Writes `conf/` (hbase-site.xml, log4j.properties, hadoop-metrics2-hbase.properties) under
/// `dir`, readable by `account`.
pub fn write_conf(dir: &Path, site: &str, account: &Account) -> Result<PathBuf, DeployError> {
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).map_err(|e| DeployError::io(&conf, e))?;
    for (name, text) in [
        ("hbase-site.xml", site),
        ("log4j.properties", LOG4J),
        ("hadoop-metrics2-hbase.properties", METRICS2),
    ] {
        let file = conf.join(name);
        std::fs::write(&file, text).map_err(|e| DeployError::io(&file, e))?;
    }
    account.give(&conf)?;
    Ok(conf)
}

/// A JVM running `main` with `conf` first on the classpath (where HBase finds hbase-site.xml).
pub fn jvm(conf: &Path, classpath: &str, heap_mb: u32, main: &str) -> Command {
    let mut cmd = Command::new("java");
    cmd.arg(format!("-Xmx{heap_mb}m"))
        .args(JVM_FLAGS)
        .arg("-cp")
        .arg(format!("{}:{classpath}", conf.display()))
        .arg(main);
    cmd
}

/// A thrift2 gateway on 127.0.0.1:`port` (buffered transport, binary protocol: the defaults),
/// as the cluster `conf` names it.
pub fn gateway_command(conf: &Path, classpath: &str, heap_mb: u32, port: u16) -> Command {
    let mut cmd = jvm(
        conf,
        classpath,
        heap_mb,
        "org.apache.hadoop.hbase.thrift2.ThriftServer",
    );
    cmd.args([
        "-p",
        &port.to_string(),
        "-b",
        "127.0.0.1",
        "--infoport",
        "-1",
    ]);
    cmd
}

/// The subdirectory of `dir` a JVM runs in (its own server.log), owned by `account`.
fn jvm_dir(dir: &Path, name: &str, account: &Account) -> Result<PathBuf, DeployError> {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).map_err(|e| DeployError::io(&sub, e))?;
    account.give(&sub)?;
    Ok(sub)
}

impl HbaseServer {
    /// A standalone HBase and its Thrift gateway on free loopback ports, under `base`.
    pub fn start(
        base: &Path,
        opts: &HbaseOptions,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let ports = HbasePorts {
            zookeeper: free_port()?,
            master: free_port()?,
            region_server: free_port()?,
            thrift: free_port()?,
        };
        let account = Account::for_server(ACCOUNT)?;
        let dir = ServerDir::new(base, "hbase", ports.thrift, &account)?;
        let conf = write_conf(
            &dir.path,
            &standalone_site(&dir.path, ports, &opts.site),
            &account,
        )?;
        let classpath = readable_classpath(&PROJECT.classpath()?, &account)?;

        let master_dir = jvm_dir(&dir.path, "master", &account)?;
        let mut master = jvm(
            &conf,
            &classpath,
            opts.heap_mb,
            "org.apache.hadoop.hbase.master.HMaster",
        );
        master.arg("start");
        let mut process = ManagedProcess::spawn(
            "hbase-master",
            &master_dir,
            master,
            &account,
            die_with_parent,
        )?;
        let log = process.log_path();
        // Over 180 s was seen on 2 cores beside a Cassandra ring (two test binaries at once).
        process.wait_ready(Duration::from_secs(360), || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.contains(MASTER_READY))
        })?;

        let gateway_dir = jvm_dir(&dir.path, "thrift", &account)?;
        let cmd = gateway_command(&conf, &classpath, opts.gateway_heap_mb, ports.thrift);
        let mut gateway =
            ManagedProcess::spawn("hbase-thrift", &gateway_dir, cmd, &account, die_with_parent)?;
        gateway.wait_ready(Duration::from_secs(60), || port_open(ports.thrift))?;
        Ok(HbaseServer {
            ports,
            process,
            gateway,
            root_dir: dir.path.join("root"),
            _dir: dir,
        })
    }

    pub fn url(&self) -> String {
        format!("hbase://127.0.0.1:{}", self.ports.thrift)
    }
}
