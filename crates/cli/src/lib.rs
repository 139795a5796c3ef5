//! The `scalebench` command: argument parsing, thin command adapters and output formatting over
//! the session library (`scalebench-session`), which does the work. `main` only calls [`cli::main`].

pub use scalebench_session::note;

pub mod args;
pub mod cli;
pub mod commands;
pub mod output;
pub mod thresholds;
