//! The `scalebench` binary: every command is parsed and dispatched by [`scalebench::cli::main`].

use std::process::ExitCode;

fn main() -> ExitCode {
    scalebench::cli::main(std::env::args_os().collect())
}
