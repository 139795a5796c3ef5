//! Apache Cassandra 5.0 nodes started from `cassandra-all` (Maven Central) on the installed JDK 17:
//! one JVM per node, each on its own loopback address (127.0.0.N) with the ring's common ports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{free_port, run, DeployError, ManagedProcess};

/// Node settings; the defaults suit a 2-core, 24 GiB machine.
#[derive(Debug, Clone)]
pub struct CassandraOptions {
    pub cluster_name: String,
    pub num_tokens: u32,
    pub heap_mb: u32,
    /// `periodic` or `batch`.
    pub commitlog_sync: String,
    pub commitlog_sync_period_ms: u32,
    /// Extra cassandra.yaml lines.
    pub extra_yaml: Vec<String>,
}

impl Default for CassandraOptions {
    fn default() -> Self {
        CassandraOptions {
            cluster_name: "scalebench".into(),
            num_tokens: 16,
            heap_mb: 768,
            commitlog_sync: "periodic".into(),
            commitlog_sync_period_ms: 10_000,
            extra_yaml: Vec::new(),
        }
    }
}

pub struct CassandraNode {
    pub address: String,
    pub native_port: u16,
    pub jmx_port: u16,
    pub process: ManagedProcess,
}

/// Cassandra's own list for JDK 17 (conf/jvm17-server.options), plus a small heap.
const JVM_FLAGS: &[&str] = &[
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:G1HeapRegionSize=4m",
    "-XX:MaxGCPauseMillis=300",
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.allocator.maxOrder=11",
    "-Dcassandra-foreground=yes",
    // A lone node or a small local ring need not wait for gossip to settle, and a joining node
    // need not wait 30 s for ring information on loopback.
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.ring_delay_ms=5000",
    "-Dcassandra.superuser_setup_delay_ms=0",
];

/// The classpath file written by scripts/cassandra-classpath.sh (resolving it if needed).
pub fn classpath(repo_root: &Path) -> Result<String, DeployError> {
    let script = repo_root.join("scripts/cassandra-classpath.sh");
    let out = run(
        Command::new("bash").arg(&script),
        "scripts/cassandra-classpath.sh",
    )?;
    let file = out.lines().last().unwrap_or("").trim().to_string();
    std::fs::read_to_string(&file)
        .map(|s| s.trim().to_string())
        .map_err(|e| DeployError::io(Path::new(&file), e))
}

/// The ports of a node: storage and native are the ring's, JMX the node's own.
#[derive(Debug, Clone, Copy)]
pub struct NodePorts {
    pub storage: u16,
    pub native: u16,
    pub jmx: u16,
}

/// Writes the node's cassandra.yaml and logback.xml into `dir` and returns the JVM command. A node
/// with `auto_bootstrap` streams its share of the data from the ring before it serves.
pub fn node_command(
    dir: &Path,
    classpath: &str,
    address: &str,
    ports: NodePorts,
    opts: &CassandraOptions,
    auto_bootstrap: bool,
) -> Result<Command, DeployError> {
    let mut yaml = node_yaml(dir, address, ports.storage, ports.native, opts);
    yaml.push_str(&format!("auto_bootstrap: {auto_bootstrap}\n"));
    let conf = dir.join("cassandra.yaml");
    std::fs::write(&conf, yaml).map_err(|e| DeployError::io(&conf, e))?;
    let logback = dir.join("logback.xml");
    std::fs::write(&logback, LOGBACK).map_err(|e| DeployError::io(&logback, e))?;

    let mut cmd = Command::new("java");
    cmd.arg(format!("-Xms{}m", opts.heap_mb))
        .arg(format!("-Xmx{}m", opts.heap_mb))
        .arg("-Xss512k");
    cmd.args(JVM_FLAGS);
    cmd.arg(format!("-Dcassandra.config=file://{}", conf.display()))
        .arg(format!("-Dcassandra.storagedir={}", dir.display()))
        .arg(format!("-Dcassandra.logdir={}", dir.display()))
        .arg(format!("-Dcassandra.jmx.local.port={}", ports.jmx))
        .arg(format!(
            "-Dlogback.configurationFile=file://{}",
            logback.display()
        ))
        .arg("-cp")
        .arg(classpath)
        .arg("org.apache.cassandra.service.CassandraDaemon");
    Ok(cmd)
}

/// Runs `nodetool` (a short JVM on the same classpath) against a node's JMX port.
pub fn nodetool(classpath: &str, jmx_port: u16, args: &[&str]) -> Result<String, DeployError> {
    // Without a configuration, logback prints the tool's DEBUG lines.
    let quiet = std::env::temp_dir().join("scalebench-nodetool-logback.xml");
    if !quiet.exists() {
        std::fs::write(&quiet, TOOL_LOGBACK).map_err(|e| DeployError::io(&quiet, e))?;
    }
    run(
        Command::new("java")
            // The module openings Cassandra's classes need on JDK 17, as for the server.
            .args(JVM_FLAGS.iter().filter(|f| f.starts_with("--add-")))
            .args([
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                &format!("-Dlogback.configurationFile=file://{}", quiet.display()),
                "-cp",
                classpath,
                "org.apache.cassandra.tools.NodeTool",
                "-h",
                "127.0.0.1",
                "-p",
                &jmx_port.to_string(),
            ])
            .args(args),
        &format!("nodetool {}", args.join(" ")),
    )
}

impl CassandraNode {
    /// Starts node `index` (1-based, address 127.0.0.<index>) of a ring whose seed is 127.0.0.1.
    /// All nodes of a ring share `storage_port` and `native_port`.
    pub fn start(
        base: &Path,
        classpath: &str,
        index: u8,
        storage_port: u16,
        native_port: u16,
        opts: &CassandraOptions,
        die_with_parent: bool,
    ) -> Result<Self, DeployError> {
        let address = format!("127.0.0.{index}");
        let jmx_port = free_port()?;
        let dir = base.join(format!("cassandra-{address}-{native_port}"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| DeployError::io(&dir, e))?;
        let ports = NodePorts {
            storage: storage_port,
            native: native_port,
            jmx: jmx_port,
        };
        let cmd = node_command(&dir, classpath, &address, ports, opts, false)?;
        let mut process =
            ManagedProcess::spawn(&format!("cassandra {address}"), &dir, cmd, die_with_parent)?;
        let addr: std::net::SocketAddr = format!("{address}:{native_port}")
            .parse()
            .expect("valid address");
        process.wait_ready(Duration::from_secs(180), || {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
        })?;
        Ok(CassandraNode {
            address,
            native_port,
            jmx_port,
            process,
        })
    }

    pub fn url(&self, keyspace: &str) -> String {
        format!(
            "cassandra://{}:{}/{keyspace}",
            self.address, self.native_port
        )
    }

    pub fn data_dir(&self) -> PathBuf {
        self.process.dir.join("data")
    }
}

fn node_yaml(
    dir: &Path,
    address: &str,
    storage_port: u16,
    native_port: u16,
    o: &CassandraOptions,
) -> String {
    let d = dir.display();
    let mut y = format!(
        "cluster_name: '{}'\n\
         num_tokens: {}\n\
         partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
         data_file_directories:\n  - {d}/data\n\
         commitlog_directory: {d}/commitlog\n\
         saved_caches_directory: {d}/saved_caches\n\
         hints_directory: {d}/hints\n\
         cdc_raw_directory: {d}/cdc_raw\n\
         commitlog_sync: {}\n",
        o.cluster_name, o.num_tokens, o.commitlog_sync
    );
    if o.commitlog_sync == "periodic" {
        y.push_str(&format!(
            "commitlog_sync_period: {}ms\n",
            o.commitlog_sync_period_ms
        ));
    } else {
        y.push_str("commitlog_sync_group_window: 2ms\n");
    }
    y.push_str(&format!(
        "seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"127.0.0.1:{storage_port}\"\n\
         listen_address: {address}\n\
         rpc_address: {address}\n\
         storage_port: {storage_port}\n\
         native_transport_port: {native_port}\n\
         start_native_transport: true\n\
         endpoint_snitch: SimpleSnitch\n\
         concurrent_reads: 8\n\
         concurrent_writes: 8\n\
         concurrent_counter_writes: 8\n\
         memtable_heap_space: 128MiB\n\
         memtable_offheap_space: 128MiB\n\
         key_cache_size: 16MiB\n\
         batch_size_warn_threshold: 64KiB\n\
         batch_size_fail_threshold: 1MiB\n\
         read_request_timeout: 5000ms\n\
         write_request_timeout: 5000ms\n"
    ));
    for line in &o.extra_yaml {
        y.push_str(line);
        y.push('\n');
    }
    y
}

const TOOL_LOGBACK: &str = r#"<configuration>
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR" /></root>
</configuration>
"#;

const LOGBACK: &str = r#"<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT" /></root>
</configuration>
"#;
