//! HdrHistogram interval logs in the standard log format (readable by HistogramLogProcessor,
//! HdrHistogram's plotter and the hdrhistogram crate), one file per operation and latency kind.
//! Lines are untagged, as YCSB writes them: a file holds one operation, and HdrHistogram's own
//! tools read untagged lines unless told a tag.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;

use crate::histogram::decode_histogram;
use crate::intervals::RecordedIntervals;
use crate::result::PhaseResult;

/// Writes `<dir>/<phase>-<OP>.hlog` (service time) and `<dir>/<phase>-Intended-<OP>.hlog` (open loop)
/// from the phase's intervals at the length they were recorded (the result may hold them merged),
/// streamed: one interval in memory at a time. Values are nanoseconds. Returns the files written.
pub fn write_interval_logs(
    phase: &PhaseResult,
    recorded: &mut RecordedIntervals,
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create HDR log directory '{}': {e}", dir.display()))?;
    let mut written = Vec::new();
    for op in phase.operations.keys() {
        for intended in [false, true] {
            let name = if intended {
                format!("{}-Intended-{op}.hlog", phase.phase)
            } else {
                format!("{}-{op}.hlog", phase.phase)
            };
            let path = dir.join(name);
            if write_log(&path, phase, recorded, op, intended)? {
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// Writes one log; false (and no file) when no interval has such a histogram.
fn write_log(
    path: &Path,
    phase: &PhaseResult,
    recorded: &mut RecordedIntervals,
    op: &str,
    intended: bool,
) -> Result<bool, String> {
    let histogram_of = |o: &crate::result::IntervalOp| {
        if intended {
            o.intended_histogram.clone()
        } else {
            o.histogram.clone()
        }
    };
    let mut any = false;
    recorded.for_each(|iv| {
        any |= iv.operations.get(op).and_then(histogram_of).is_some();
        Ok(())
    })?;
    if !any {
        return Ok(false);
    }
    let start = UNIX_EPOCH + Duration::from_millis(phase.measurement_start_unix_ms);
    let interval = recorded.interval();
    let window = Duration::from_secs_f64(phase.duration_s);
    crate::files::write_atomically(path, |file| {
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment(&format!("scalebench {op} latency, values in nanoseconds"))
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1_000_000.0)
            .begin_log_with(file, &mut serializer)?;
        recorded
            .for_each(|iv| {
                let offset =
                    Duration::from_nanos((interval.as_nanos() as u64).saturating_mul(iv.index));
                // Completions in the grace period after the window are no part of the measurement.
                if offset >= window {
                    return Ok(());
                }
                let Some(encoded) = iv.operations.get(op).and_then(histogram_of) else {
                    return Ok(());
                };
                writer
                    .write_histogram(&decode_histogram(&encoded)?, offset, interval, None)
                    .map_err(|e| format!("{e:?}"))
            })
            .map_err(std::io::Error::other)
    })
    .map(|()| true)
    .map_err(|e| format!("HDR log: {e}"))
}
