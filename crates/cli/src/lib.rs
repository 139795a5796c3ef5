//! The `scalebench` command: argument parsing and the commands, over the library crates.
//! `main` only parses arguments and calls [`cli::main`]; everything else is testable in-process.

pub mod args;
pub mod cli;
pub mod cluster;
pub mod elastic;
pub mod environment;
pub mod error;
pub mod experiment;
pub mod output;
pub mod phase;
pub mod report;
pub mod saturate;
pub mod settings;
