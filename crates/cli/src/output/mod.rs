//! What people see: the live progress display and the summaries.

pub mod progress;
pub mod table;
