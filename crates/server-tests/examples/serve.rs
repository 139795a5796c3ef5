//! Starts one database server on loopback for benchmarks and manual runs, prints `URL PID`, and keeps it
//! until standard input closes:  cargo run --release -p scalebench-server-tests --example serve -- postgres
//! Kinds: postgres, mariadb, redis, redis-cluster, etcd, cassandra, hbase, mongo-java-server.

use std::io::{Read, Write};
use std::path::PathBuf;

fn main() {
    let kind = std::env::args().nth(1).unwrap_or_default();
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp/serve");
    std::fs::create_dir_all(&base).expect("server directory");
    let (url, pid, _keep): (String, u32, Box<dyn std::any::Any>) = match kind.as_str() {
        "postgres" => {
            let s = scalebench_deploy::postgres::PostgresServer::start(&base, &[], false)
                .expect("postgres starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        "mariadb" => {
            let s = scalebench_deploy::mariadb::MariadbServer::start(&base, &[], false)
                .expect("mariadb starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        "redis" => {
            let s = scalebench_deploy::redis::RedisServer::start(&base, &[], false, false)
                .expect("redis starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        "redis-cluster" => {
            let c = scalebench_deploy::redis::RedisCluster::start(&base, 3, false)
                .expect("cluster starts");
            (c.url(), c.nodes[0].process.pid(), Box::new(c))
        }
        "etcd" => {
            let s = scalebench_deploy::etcd::EtcdServer::start(&base, false).expect("etcd starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        "cassandra" => {
            let cp = scalebench_deploy::cassandra::classpath().expect("classpath");
            let (st, nat) = (
                scalebench_deploy::free_port().unwrap(),
                scalebench_deploy::free_port().unwrap(),
            );
            let opts = scalebench_deploy::cassandra::CassandraOptions::default();
            let n = scalebench_deploy::cassandra::CassandraNode::start(
                &base, &cp, 1, st, nat, &opts, false,
            )
            .expect("cassandra starts");
            (n.url("ycsb"), n.process.pid(), Box::new(n))
        }
        "hbase" => {
            let s = scalebench_deploy::hbase::HbaseServer::start(
                &base,
                &scalebench_deploy::hbase::HbaseOptions::default(),
                false,
            )
            .expect("hbase starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        "mongo-java-server" => {
            let s = scalebench_deploy::mongodb::MongoTestServer::start(&base, 1024, false)
                .expect("mongo-java-server starts");
            (s.url(), s.process.pid(), Box::new(s))
        }
        other => {
            eprintln!("error: unknown server kind '{other}' (postgres, mariadb, redis, redis-cluster, etcd, cassandra, hbase, mongo-java-server)");
            std::process::exit(2);
        }
    };
    println!("{url} {pid}");
    let _ = std::io::stdout().flush();
    // Runs until standard input closes; dropping the server stops it.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
