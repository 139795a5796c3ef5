//! Replicated clusters under operations (issue 42), one test binary for three kinds so that the
//! harness's two threads run two of them side by side: each test is one long scenario on one
//! cluster (2 to 2.5 minutes each), and as three binaries of one test each they ran one after
//! another with a thread idle. The harness takes tests in name order: Galera and HBase start
//! together, Patroni on the thread the first of them leaves.

#[path = "../support/mod.rs"]
mod support;

mod galera;
mod hbase;
mod patroni;
