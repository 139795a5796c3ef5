//! Execution owns time: the schedule (closed or open loop), warm-up, the measurement window,
//! termination and concurrency. It hands each operation to a binding and its timing to measurement.
//!
//! Model: `threads` OS threads, each with its own single-threaded tokio runtime, each running
//! `concurrency` slots. A slot behaves like one YCSB client thread: one operation at a time, its own
//! binding instance (connection) and its own generator.

mod clock;
pub mod consistency;
mod cost;
pub mod feed;
pub mod lookup;
mod pacer;
mod perform;
pub mod plan;
pub mod progress;
pub mod rendezvous;
mod request_sets;
mod runner;
mod schedule;
pub mod stop;
mod timeline;
pub mod written;

pub use plan::{Arrival, Phase, RunPlan, SetThreads, Timing};
pub use progress::{MeasurementStart, Observers, Progress, ProgressState};
pub use rendezvous::{Rendezvous, RendezvousError};
pub use runner::{execute, ExecError, PhaseOutcome};
pub use stop::StopSignal;
pub use timeline::{PointSink, SetGate, TimelineLog, TimelinePoint};
