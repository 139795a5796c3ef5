//! One adapter per command: arguments to a typed request, the session's call, the output.

pub mod cluster;
pub mod elastic;
pub mod experiment;
pub mod files;
pub mod replay;
pub mod report;
pub mod run;
pub mod saturate;
