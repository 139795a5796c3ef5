//! The `scalebench` command: argument parsing and the commands, over the library crates.
//! `main` only parses arguments and calls [`cli::main`]; everything else is testable in-process.

/// `eprintln!` that never panics: a closed or full stderr must not turn an outcome into a crash.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics: a reader that went away (`| head`) ends nothing but the output.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod args;
pub mod cli;
pub mod cluster;
pub mod elastic;
pub mod environment;
pub mod error;
pub mod experiment;
pub mod metrics;
pub mod output;
pub mod phase;
pub mod report;
pub mod request;
pub mod saturate;
pub mod settings;
