use std::path::PathBuf;

use clap::Args;
use scalebench_replay::CaptureFormat;

use super::PhaseArgs;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The capture: Redis MONITOR output, a PostgreSQL csvlog, a MySQL/MariaDB general log, a
    /// Twitter cache trace or JSON Lines (docs/replay.md); its format recognised from its first line.
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// How many times faster than captured: each operation is due at its time in the capture
    /// (from the first operation) divided by K.
    #[arg(long, value_name = "K", default_value = "1")]
    pub speed: f64,
    #[command(flatten)]
    pub shape: CaptureShape,
    /// Read the capture and say what it holds (operations by kind and command, sessions, span,
    /// rate, unreadable lines); nothing connects.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub phase: PhaseArgs,
    #[command(flatten)]
    pub clients: super::ClientsArgs,
    #[command(flatten)]
    pub thresholds: crate::thresholds::ThresholdArgs,
}

/// How a capture is read and scaled, for `replay` and `saturate --replay`.
#[derive(Debug, Args)]
pub struct CaptureShape {
    /// N copies of the capture at once, each on keys and sessions of its own: N times the load over
    /// N times the keys (default x1: the capture as it is).
    #[arg(long = "keys", value_name = "xN", value_parser = scalebench_session::replay::parse_copies)]
    pub copies: Option<u32>,
    /// The capture's format, when its first line does not say it.
    #[arg(long = "capture-format", value_name = "FORMAT", value_parser = CaptureFormat::parse)]
    pub capture_format: Option<CaptureFormat>,
}
