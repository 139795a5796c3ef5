//! Running benchmarks as a library: typed requests in, typed results out.
//!
//! A [`request::RunRequest`] (validated once, no command-line types in it) runs as phases
//! ([`phase::execute_phases`]) with the steps around them (wait until the cluster is idle, compact,
//! space on disk, resource monitors); on top of it the saturation search ([`saturate`]), Dory's
//! elasticity benchmark ([`elastic`]) and the experiment runner with its results database
//! ([`experiment`]). A stop is a value in the request; the Ctrl-C handler ([`interrupt`]) is the one
//! process-wide piece. The `scalebench` binary parses arguments into these requests and prints.

/// `eprintln!` that never panics: a closed or full stderr must not turn an outcome into a crash.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod clients;
pub mod cluster;
pub mod distributed;
pub mod elastic;
pub mod environment;
pub mod error;
pub mod experiment;
pub mod fault;
pub mod files;
pub mod interrupt;
pub mod metrics;
pub mod pages;
pub mod phase;
pub mod progress;
pub mod request;
pub mod saturate;
pub mod settings;
pub mod watch;
