//! Replicated clusters under operations (issue 42), one test binary for four kinds so that the
//! harness's two threads keep two scenarios running side by side: each test is one long scenario
//! on one cluster (2 to 5 minutes each), and as binaries of their own they left a thread idle
//! (three of one test each, and Cassandra's ring beside a test half as long). The harness takes
//! tests in name order: Cassandra's ring and its single nodes start together, then Galera, HBase
//! and Patroni each on the thread the one before left.

#[path = "../support/mod.rs"]
mod support;

mod cassandra;
mod galera;
mod hbase;
mod patroni;
