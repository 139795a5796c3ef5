//! Measurement and results.
//!
//! Workers record into their own [`Recorder`] (no locks, no shared memory on the hot path) and ship
//! one [`IntervalBatch`] per interval to the [`Aggregator`], which keeps totals and the interval series
//! and produces a [`PhaseResult`]. Results are plain data with a documented schema (docs/result-schema.md);
//! the YCSB text format, HDR logs and merging all read that data.

pub mod aggregate;
pub mod consistency;
pub mod definition;
pub mod files;
pub mod hdrlog;
pub mod histogram;
pub mod intervals;
pub mod merge;
pub mod phase;
pub mod recorder;
pub mod result;
pub mod saturation;
pub mod set_threads;
pub mod thresholds;
pub mod ycsb_text;

pub use aggregate::{Aggregator, LiveOperation, LiveStatus, LIVE_QUANTILES};
pub use histogram::{
    decode_histogram, encode_histogram, new_histogram, quantile_us, LatencyHistogram,
};
pub use phase::Phase;
pub use recorder::{IntervalBatch, Recorder};
pub use result::{
    DeploymentInfo, EndedBy, LatencySummary, LoadPace, NodeSpace, OpResult, PhaseResult, RunResult,
    Space, SpaceState,
};
