//! What the leader of a series of runs at one rendezvous tells its clients ([`crate::series`]).

use serde::{Deserialize, Serialize};

/// An order of the series: run `offered` (a rate, or threads per client), or end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Run { offered: f64 },
    End { why: String },
}
