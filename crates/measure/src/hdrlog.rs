//! HdrHistogram interval logs in the standard log format (readable by HistogramLogProcessor,
//! HdrHistogram's plotter and the hdrhistogram crate), one file per operation and latency kind.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;

use crate::histogram::decode_histogram;
use crate::result::PhaseResult;

/// Writes `<dir>/<phase>-<OP>.hlog` (service time) and `<dir>/<phase>-Intended-<OP>.hlog` (open loop).
/// Values are nanoseconds. Returns the files written.
pub fn write_interval_logs(phase: &PhaseResult, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create HDR log directory '{}': {e}", dir.display()))?;
    let start = UNIX_EPOCH + Duration::from_millis(phase.measurement_start_unix_ms);
    let mut written = Vec::new();
    for op in phase.operations.keys() {
        for intended in [false, true] {
            let entries: Vec<(f64, &String)> = phase
                .intervals
                .iter()
                .filter_map(|iv| {
                    let o = iv.operations.get(op)?;
                    let h = if intended {
                        o.intended_histogram.as_ref()
                    } else {
                        o.histogram.as_ref()
                    };
                    h.map(|h| (iv.start_s, h))
                })
                .collect();
            if entries.is_empty() {
                continue;
            }
            let name = if intended {
                format!("{}-Intended-{op}.hlog", phase.phase)
            } else {
                format!("{}-{op}.hlog", phase.phase)
            };
            let path = dir.join(name);
            write_log(&path, start, phase.interval_s, &entries, op)
                .map_err(|e| format!("HDR log: {e}"))?;
            written.push(path);
        }
    }
    Ok(written)
}

fn write_log(
    path: &Path,
    start: SystemTime,
    interval_s: f64,
    entries: &[(f64, &String)],
    op: &str,
) -> Result<(), String> {
    let tag = Tag::new(op).ok_or("operation name is not a valid tag")?;
    let histograms = entries
        .iter()
        .map(|(start_s, encoded)| Ok((*start_s, decode_histogram(encoded)?)))
        .collect::<Result<Vec<_>, String>>()?;
    crate::files::write_atomically(path, |file| {
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment(&format!("scalebench {op} latency, values in nanoseconds"))
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1_000_000.0)
            .begin_log_with(file, &mut serializer)?;
        for (start_s, h) in &histograms {
            writer
                .write_histogram(
                    h,
                    Duration::from_secs_f64(*start_s),
                    Duration::from_secs_f64(interval_s),
                    Some(tag),
                )
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        }
        Ok(())
    })
}
