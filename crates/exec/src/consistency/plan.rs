//! What the probe is asked to do and how it is told to stop; its roles in a run of several
//! clients, the events its writer relays, and how it fails.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use scalebench_measure::consistency::ConsistencyResult;

use crate::StopSignal;

/// What the probe does.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// Probe writes per second.
    pub rate: f64,
    /// Probe keys, written in turn: each is rewritten every `keys / rate` seconds.
    pub keys: usize,
    /// Delays after each acknowledgement at which a reader reads the key, ascending.
    pub delays_ms: Vec<f64>,
    /// How long the chaser reads a write before counting it never seen.
    pub horizon: Duration,
    /// Reader connections (the writer has its own).
    pub readers: usize,
    pub op_timeout: Duration,
    /// JSON Lines of every probe operation (docs/consistency.md).
    pub history: Option<PathBuf>,
    /// Running counts for live metrics, if someone watches.
    pub live: Option<Arc<scalebench_measure::consistency::LiveProbe>>,
}

/// Probe keys by default: several, so a ring's replica sets are all probed, few enough that each
/// is rewritten often (the period k-staleness counts in).
pub const DEFAULT_KEYS: usize = 8;

/// After the phase ends, the follow-ups of the last writes may go on this long; what is not done
/// by then is cut (counted apart). Ctrl-C cuts at once.
pub const DRAIN: Duration = Duration::from_secs(1);

/// When the probe writes, and when it stops.
pub struct ProbeControl {
    /// The phase's measurement start, set once the phase knows it: the probe's writes begin then
    /// (connecting and the warm-up come before).
    pub measuring: Arc<OnceLock<Instant>>,
    /// The measurement window's length, for a phase bound by time: no write after it.
    pub duration: Option<Duration>,
    /// The phase ended: no new write; the follow-ups in flight get [`DRAIN`].
    pub ended: AtomicBool,
    /// The run's stop: a stop requested by a signal (not a planned finish) ends the probe at once.
    pub stop: StopSignal,
}

impl ProbeControl {
    pub fn new(
        measuring: Arc<OnceLock<Instant>>,
        duration: Option<Duration>,
        stop: StopSignal,
    ) -> ProbeControl {
        ProbeControl {
            measuring,
            duration,
            ended: AtomicBool::new(false),
            stop,
        }
    }

    pub(super) fn interrupted(&self) -> bool {
        self.stop.interrupted()
    }

    /// No new probe write: the phase ended, was stopped, or its window closed.
    pub(super) fn writes_over(&self, now: Instant) -> bool {
        self.ended.load(Ordering::Relaxed)
            || self.stop.is_requested()
            || matches!(
                (self.measuring.get(), self.duration),
                (Some(start), Some(d)) if now >= *start + d
            )
    }
}

/// Why the probe did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeError {
    /// The rate asked for is more than the probe's writer can do against this database: bad input.
    RateTooHigh(String),
    /// It could not connect, write or record.
    Failed(String),
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::RateTooHigh(s) | ProbeError::Failed(s) => f.write_str(s),
        }
    }
}

impl From<String> for ProbeError {
    fn from(s: String) -> Self {
        ProbeError::Failed(s)
    }
}

/// What the probe's writer tells readers in other client processes (the probe of a run of several
/// clients: YCSB++'s and Bermbach & Tai's readers on other machines), in the order it happened.
/// Times are Unix nanoseconds on the writer's clock; each reader maps them onto its own with the
/// clocks' offsets.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeEvent {
    /// The writer's probe began: the tag its values carry, its time base, and its clock's offset
    /// against the launcher's (this clock - the launcher's, ns).
    Began {
        tag: String,
        base_unix_ns: u64,
        clock_offset_ns: i64,
    },
    /// A write sent at `started_unix_ns`, acknowledged at `at_unix_ns`; `write` numbers a measured
    /// write, which readers follow (a key's first version has none).
    Acked {
        key: usize,
        version: u64,
        #[serde(default)]
        started_unix_ns: Option<u64>,
        at_unix_ns: u64,
        write: Option<u64>,
    },
    /// The writer's last write is done.
    Ended,
}

/// Told each [`ProbeEvent`] of a writer whose readers are in other processes too.
pub type ProbeEventSink = Arc<dyn Fn(&ProbeEvent) + Send + Sync>;

/// The probe's part in a run of several clients.
pub enum ProbeRole {
    /// The writer and its readers (a run's only process, or its client 0): each event told to
    /// `tell` (if the run has other clients), with this clock's offset against the launcher's.
    Writer {
        tell: Option<ProbeEventSink>,
        clock_offset_ns: i64,
    },
    /// Readers only (another client of the run): the writer's events from `events`, this clock's
    /// offset against the launcher's mapping the writer's times onto this clock.
    Reader {
        events: std::sync::mpsc::Receiver<ProbeEvent>,
        clock_offset_ns: i64,
    },
}

/// Beyond [`DRAIN`], how long the writer keeps its keys for readers in other processes: their drain
/// begins when the writer's end reaches them, and ends 100 ms after its bound at most.
pub(super) const REMOTE_DRAIN_MARGIN: Duration = Duration::from_millis(500);

/// How long a reader waits for the writer's probe to begin.
pub(super) const WRITER_BEGIN_TIMEOUT: Duration = Duration::from_secs(120);

/// What the probe measured, and what went wrong with its history file, if anything (the
/// measurement stands without it).
#[derive(Debug)]
pub struct ProbeOutcome {
    pub result: ConsistencyResult,
    pub history_error: Option<String>,
}
