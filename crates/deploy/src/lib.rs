//! Deployments: database servers started by scalebench on this machine, each from its own data
//! directory, listening on loopback only, with its log kept beside its data.
//!
//! Every server is a [`ManagedProcess`]: it can be waited for, paused (SIGSTOP), resumed, killed
//! or stopped gracefully, and is stopped when dropped.

pub mod account;
pub mod cassandra;
#[cfg(feature = "cassandra")]
mod cassandra_cql;
pub mod cluster;
pub mod error;
pub mod etcd;
pub mod hbase;
pub mod host;
pub mod mariadb;
pub mod maven;
pub mod memory;
pub mod mongodb;
pub mod nodetool;
pub mod postgres;
pub mod process;
#[cfg(feature = "redis")]
pub mod redis;
pub mod space;
pub mod spec;

pub use account::{Account, ServerDir};
pub use cluster::{operation_text, Applied, Cluster, ClusterStatus, Operation, OperationKind};
pub use error::DeployError;
pub use host::{free_port, free_port_with_bus, interrupt_waits, wait_until, waits_interrupted};
pub use memory::MemoryLimit;
pub use process::{ManagedProcess, ProcessRef};
pub use spec::{Database, Deployment};
