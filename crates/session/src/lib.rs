//! The run core: typed requests in, typed results out.
//!
//! A [`request::RunRequest`] (checked once by [`request::RunRequest::check`], no command-line types
//! in it) runs as phases ([`phase::execute_phases`]) with the steps around them (wait until the
//! cluster is idle, compact, space on disk, resource monitors) and what runs beside them (the
//! consistency probe, [`fault`]s, live [`metrics`]). Above it: `scalebench-distributed` (one run
//! from many client processes) and `scalebench-study` (experiments, the saturation search, the
//! elasticity benchmark). A stop is a value in the request; the Ctrl-C handler ([`interrupt`]) is
//! the one process-wide piece.

/// `eprintln!` that never panics: a closed or full stderr must not turn an outcome into a crash.
/// Control characters but line breaks are escaped: a warning names what it was given (a server's
/// message, a file's line), and terminal escapes in it would act on the user's terminal.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{}", $crate::printable(&format!($($arg)*)));
    }};
}

/// `text` with control characters escaped, line breaks kept (`\u{1b}` for an escape, `\t` for a
/// tab): what every line on the terminal goes through.
pub fn printable(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return text.to_string();
    }
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

pub mod beside;
mod binding_fit;
pub mod clients;
pub mod cluster;
pub mod db_source;
pub mod ending;
pub mod environment;
pub mod error;
pub mod execute;
pub mod fault;
pub mod files;
pub mod interrupt;
pub mod known_load;
pub mod logging;
pub mod merge_files;
pub mod metrics;
pub mod outputs;
pub mod phase;
pub mod progress;
pub mod replay;
pub mod replay_request;
pub mod replay_statements;
pub mod request;
pub mod settings;
pub mod watch;
pub mod wiring;
pub mod workload_check;
mod workload_summary;
pub mod ycsb_flags;
