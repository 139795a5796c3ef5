//! How the operations of Dory's request sets are given to the threads (studies.md, section 5).

use serde::{Deserialize, Serialize};

/// How the operations of a request set are given to the threads (`--request-set-threads`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SetThreads {
    /// Whichever thread (slot) is free starts the set's next operation.
    #[default]
    Shared,
    /// Dory's client: each thread (slot) a fixed share of every set, R / T (the first R mod T
    /// one more), bound to one node where the binding can choose it.
    Fixed,
}

impl SetThreads {
    /// The name `--request-set-threads` takes and results record.
    pub fn name(self) -> &'static str {
        match self {
            SetThreads::Shared => "shared",
            SetThreads::Fixed => "fixed",
        }
    }

    pub fn parse(s: &str) -> Result<SetThreads, String> {
        match s {
            "shared" => Ok(SetThreads::Shared),
            "fixed" => Ok(SetThreads::Fixed),
            _ => Err("expected shared or fixed".into()),
        }
    }
}
