//! Apache Cassandra 5.0 nodes started from `cassandra-all` (Maven Central) on the installed JDK 17:
//! one JVM per node, each on its own loopback address (127.0.0.N) with the ring's common ports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::account::{Account, ServerDir};
use crate::error::DeployError;
use crate::host::free_port;
use crate::maven::{readable_classpath, MavenProject};
use crate::process::ManagedProcess;

/// The system account a node runs as when scalebench runs as root (created if missing: Cassandra
/// from Maven Central comes without a package to make it).
pub const ACCOUNT: &str = "cassandra";

/// Node settings; the defaults suit a 2-core, 24 GiB machine.
#[derive(Debug, Clone)]
pub struct CassandraOptions {
    pub cluster_name: String,
    pub num_tokens: u32,
    pub heap_mb: u32,
    /// `periodic`, `batch`, `group` or `off` (see [`CommitLog`]).
    pub commitlog_sync: String,
    pub commitlog_sync_period_ms: u32,
    /// `group`: how long writes wait to share one sync (Cassandra 4+'s form of a batch window).
    pub commitlog_sync_group_window_ms: u32,
    /// cassandra.yaml settings (top-level key, value) that replace the generated ones of the same
    /// key, or are added.
    pub overrides: Vec<(String, String)>,
}

/// The commit log modes Wegert compared (studies.md, section 2: periodic, batch with a 50 ms
/// window, off), in Cassandra 5's terms.
pub mod commit_log {
    /// Acknowledge writes at once, sync every period (Cassandra's default; Wegert's baseline).
    pub const PERIODIC: &str = "periodic";
    /// Sync before acknowledging each write (Cassandra 4+ no longer waits for a window here).
    pub const BATCH: &str = "batch";
    /// Sync before acknowledging, writes of one window sharing a sync: Cassandra 4+'s form of
    /// the 2.x batch mode with `commitlog_sync_batch_window_in_ms` that Wegert measured.
    pub const GROUP: &str = "group";
    /// No commit log for the benchmark's writes: the keyspace's `durable_writes = false` (the
    /// server keeps the periodic mode for its own keyspaces).
    pub const OFF: &str = "off";
    pub const ALL: [&str; 4] = [PERIODIC, BATCH, GROUP, OFF];
}

impl Default for CassandraOptions {
    fn default() -> Self {
        CassandraOptions {
            cluster_name: "scalebench".into(),
            num_tokens: 16,
            heap_mb: 768,
            commitlog_sync: "periodic".into(),
            commitlog_sync_period_ms: 10_000,
            commitlog_sync_group_window_ms: 50,
            overrides: Vec::new(),
        }
    }
}

pub struct CassandraNode {
    pub address: String,
    pub native_port: u16,
    pub jmx_port: u16,
    pub process: ManagedProcess,
    /// After the process: removed once it has stopped.
    _dir: ServerDir,
}

/// Cassandra's own list for JDK 17 (conf/jvm17-server.options), plus a small heap.
pub(crate) const JVM_FLAGS: &[&str] = &[
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

/// Cassandra's Maven project (cassandra-all and its dependencies), built into the binary so that an
/// installed scalebench needs no checkout.
pub const PROJECT: MavenProject = MavenProject {
    name: "cassandra",
    what: "Apache Cassandra",
    pom: include_str!("../../../deployments/cassandra/pom.xml"),
};

/// A file listing Cassandra's classpath (see [`MavenProject::classpath_file`]).
pub fn classpath_file() -> Result<PathBuf, DeployError> {
    PROJECT.classpath_file()
}

/// Cassandra's classpath, resolved as [`classpath_file`] does.
pub fn classpath() -> Result<String, DeployError> {
    PROJECT.classpath()
}

/// The ports of a node: storage and native are the ring's, JMX the node's own.
#[derive(Debug, Clone, Copy)]
pub struct NodePorts {
    pub storage: u16,
    pub native: u16,
    pub jmx: u16,
}

/// Writes the node's cassandra.yaml and logback.xml into `dir` and returns the JVM command for a
/// node running as `account`. A node with `auto_bootstrap` streams its share of the data from the
/// ring before it serves.
pub fn node_command(
    dir: &Path,
    classpath: &str,
    account: &Account,
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

    let classpath = readable_classpath(classpath, account)?;
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
        .arg(&classpath)
        .arg("org.apache.cassandra.service.CassandraDaemon");
    Ok(cmd)
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
        let account = Account::for_server(ACCOUNT)?;
        let server_dir =
            ServerDir::new(base, &format!("cassandra-{address}"), native_port, &account)?;
        let dir = &server_dir.path;
        let ports = NodePorts {
            storage: storage_port,
            native: native_port,
            jmx: jmx_port,
        };
        let cmd = node_command(dir, classpath, &account, &address, ports, opts, false)?;
        let mut process = ManagedProcess::spawn(
            &format!("cassandra {address}"),
            dir,
            cmd,
            &account,
            die_with_parent,
        )?;
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
            _dir: server_dir,
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
    let mut settings: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| settings.push((k.to_string(), v));
    set("cluster_name", format!("'{}'", o.cluster_name));
    set("num_tokens", o.num_tokens.to_string());
    set(
        "partitioner",
        "org.apache.cassandra.dht.Murmur3Partitioner".into(),
    );
    set("data_file_directories", format!("\n  - {d}/data"));
    set("commitlog_directory", format!("{d}/commitlog"));
    set("saved_caches_directory", format!("{d}/saved_caches"));
    set("hints_directory", format!("{d}/hints"));
    set("cdc_raw_directory", format!("{d}/cdc_raw"));
    match o.commitlog_sync.as_str() {
        commit_log::BATCH => set("commitlog_sync", "batch".into()),
        commit_log::GROUP => {
            set("commitlog_sync", "group".into());
            set(
                "commitlog_sync_group_window",
                format!("{}ms", o.commitlog_sync_group_window_ms),
            );
        }
        // `off` is the keyspace's durable_writes; the server's own keyspaces keep periodic.
        _ => {
            set("commitlog_sync", "periodic".into());
            set(
                "commitlog_sync_period",
                format!("{}ms", o.commitlog_sync_period_ms),
            );
        }
    }
    // A dropped table stays on disk as a snapshot by default: measured loads that reset by dropping
    // would grow in bytes per record with each repetition.
    set("auto_snapshot", "false".into());
    set(
        "seed_provider",
        format!("\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"127.0.0.1:{storage_port}\""),
    );
    set("listen_address", address.to_string());
    set("rpc_address", address.to_string());
    set("storage_port", storage_port.to_string());
    set("native_transport_port", native_port.to_string());
    for (k, v) in [
        ("start_native_transport", "true"),
        ("endpoint_snitch", "SimpleSnitch"),
        ("concurrent_reads", "8"),
        ("concurrent_writes", "8"),
        ("concurrent_counter_writes", "8"),
        ("memtable_heap_space", "128MiB"),
        ("memtable_offheap_space", "128MiB"),
        ("key_cache_size", "16MiB"),
        ("batch_size_warn_threshold", "64KiB"),
        ("batch_size_fail_threshold", "1MiB"),
        ("read_request_timeout", "5000ms"),
        ("write_request_timeout", "5000ms"),
    ] {
        set(k, v.into());
    }
    // An override replaces the generated setting of the same key: YAML keeps one value per key.
    for (k, v) in &o.overrides {
        match settings.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.clone(),
            None => settings.push((k.clone(), v.clone())),
        }
    }
    settings
        .iter()
        .map(|(k, v)| {
            if v.starts_with('\n') {
                format!("{k}:{v}\n")
            } else {
                format!("{k}: {v}\n")
            }
        })
        .collect()
}

const LOGBACK: &str = r#"<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT" /></root>
</configuration>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(mode: &str, overrides: &[(&str, &str)]) -> String {
        let o = CassandraOptions {
            commitlog_sync: mode.into(),
            overrides: overrides
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        node_yaml(Path::new("/n"), "127.0.0.2", 7000, 9042, &o)
    }

    fn values<'a>(y: &'a str, key: &str) -> Vec<&'a str> {
        y.lines()
            .filter_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
            .collect()
    }

    #[test]
    fn each_commit_log_mode_writes_its_settings() {
        let periodic = yaml("periodic", &[]);
        assert_eq!(values(&periodic, "commitlog_sync"), ["periodic"]);
        assert_eq!(values(&periodic, "commitlog_sync_period"), ["10000ms"]);
        let group = yaml("group", &[]);
        assert_eq!(values(&group, "commitlog_sync"), ["group"]);
        assert_eq!(values(&group, "commitlog_sync_group_window"), ["50ms"]);
        assert!(values(&group, "commitlog_sync_period").is_empty());
        let batch = yaml("batch", &[]);
        assert_eq!(values(&batch, "commitlog_sync"), ["batch"]);
        assert!(values(&batch, "commitlog_sync_period").is_empty());
        // Off is the keyspace's durable_writes; the server keeps periodic for its own keyspaces.
        assert_eq!(values(&yaml("off", &[]), "commitlog_sync"), ["periodic"]);
        assert_eq!(values(&periodic, "auto_snapshot"), ["false"]);
    }

    #[test]
    fn a_server_override_replaces_the_generated_key() {
        let y = yaml(
            "periodic",
            &[
                ("concurrent_reads", "32"),
                ("auto_snapshot", "true"),
                ("compaction_throughput", "64MiB/s"),
            ],
        );
        assert_eq!(values(&y, "concurrent_reads"), ["32"]);
        assert_eq!(values(&y, "auto_snapshot"), ["true"]);
        assert_eq!(values(&y, "compaction_throughput"), ["64MiB/s"]);
        // Block values keep their shape.
        assert!(y.contains("data_file_directories:\n  - /n/data\n"), "{y}");
        assert!(y.contains("seed_provider:\n  - class_name"), "{y}");
    }
}
