//! HdrHistogram interval logs in the standard log format (readable by HistogramLogProcessor,
//! HdrHistogram's plotter and the hdrhistogram crate), one file per operation and latency kind.
//! Lines are untagged, as YCSB writes them: a file holds one operation, and HdrHistogram's own
//! tools read untagged lines unless told a tag.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// The same logs from a result alone (several clients' merged one): its intervals at the length
/// it keeps them (`interval_s`; the recorded length for runs of up to 600 intervals).
pub fn write_result_logs(phase: &PhaseResult, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let length = phase.interval_s.max(1e-3);
    let mut recorded = RecordedIntervals::new(Duration::from_secs_f64(length));
    for iv in &phase.intervals {
        recorded.push(&crate::intervals::RecordedInterval {
            index: (iv.start_s / length).round() as u64,
            operations: iv.operations.clone(),
        });
    }
    write_interval_logs(phase, &mut recorded, dir)
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

/// The most a log given to [`merge_logs`] may hold: a day of one-second intervals of one operation
/// encodes in a few megabytes.
pub const MAX_LOG_BYTES: u64 = 256 << 20;
/// The most intervals a merged log may have (a day of 100 ms intervals).
const MAX_MERGED_INTERVALS: u64 = 864_000;

/// One interval of several logs merged: where it starts (from the merged log's start) and its
/// histogram.
pub struct MergedInterval {
    pub offset: Duration,
    pub histogram: crate::histogram::LatencyHistogram,
}

/// Several clients' interval logs of one operation merged into one (`scalebench merge-logs`):
/// intervals that start at the same instant (the log's BaseTime, else its StartTime, plus the
/// interval's start, rounded to the interval length) add up by histogram, so the merged log's
/// per-interval percentiles are those of the merged run's. The clients of one run start at one
/// agreed instant, so their intervals line up; logs of different interval lengths are refused.
/// `logs` are (name, text) pairs; each is input and is checked.
pub fn merge_logs(
    logs: &[(String, Vec<u8>)],
) -> Result<(SystemTime, Duration, Vec<MergedInterval>), String> {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let mut parsed: Vec<(f64, f64, crate::histogram::LatencyHistogram)> = Vec::new();
    for (name, bytes) in logs {
        let mut base: Option<f64> = None;
        let mut start: Option<f64> = None;
        let mut intervals = 0;
        for entry in IntervalLogIterator::new(bytes) {
            let entry = entry.map_err(|e| format!("{name}: not an HDR interval log ({e:?})"))?;
            match entry {
                LogEntry::StartTime(t) => start = Some(t.as_secs_f64()),
                LogEntry::BaseTime(t) => base = Some(t.as_secs_f64()),
                LogEntry::Interval(iv) => {
                    let at = base.or(start).unwrap_or(0.0) + iv.start_timestamp().as_secs_f64();
                    let length = iv.duration().as_secs_f64();
                    if !(at.is_finite() && length > 0.0 && length <= 3600.0) {
                        return Err(format!("{name}: an interval of {length} s at {at} s"));
                    }
                    let h = crate::histogram::decode_histogram(iv.encoded_histogram())
                        .map_err(|e| format!("{name}: {e}"))?;
                    parsed.push((at, length, h));
                    intervals += 1;
                }
            }
        }
        if intervals == 0 {
            return Err(format!("{name}: no interval in it"));
        }
    }
    let length = parsed[0].1;
    if let Some((_, other, _)) = parsed.iter().find(|p| (p.1 - length).abs() > 1e-3) {
        return Err(format!(
            "the logs have intervals of {length} s and of {other} s: only logs of one interval length merge"
        ));
    }
    let first = parsed.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let mut merged: std::collections::BTreeMap<u64, crate::histogram::LatencyHistogram> =
        Default::default();
    for (at, _, h) in parsed {
        let index = ((at - first) / length).round() as u64;
        if index >= MAX_MERGED_INTERVALS {
            return Err(format!(
                "the logs span more than {MAX_MERGED_INTERVALS} intervals: not logs of one run"
            ));
        }
        crate::histogram::add_into(
            merged
                .entry(index)
                .or_insert_with(crate::histogram::new_histogram),
            &h,
        );
    }
    let start = UNIX_EPOCH + Duration::from_secs_f64(first.max(0.0));
    let length = Duration::from_secs_f64(length);
    Ok((
        start,
        length,
        merged
            .into_iter()
            .map(|(i, histogram)| MergedInterval {
                offset: length * i as u32,
                histogram,
            })
            .collect(),
    ))
}

/// Writes [`merge_logs`]'s intervals as one interval log at `path`.
pub fn write_merged_log(
    path: &Path,
    (start, length, intervals): &(SystemTime, Duration, Vec<MergedInterval>),
) -> Result<(), String> {
    crate::files::write_atomically(path, |file| {
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment("scalebench merge-logs: intervals of several logs added by histogram, values in nanoseconds")
            .with_start_time(*start)
            .with_base_time(*start)
            .with_max_value_divisor(1_000_000.0)
            .begin_log_with(file, &mut serializer)?;
        for iv in intervals {
            writer
                .write_histogram(&iv.histogram, iv.offset, *length, None)
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        }
        Ok(())
    })
    .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    fn log(start: SystemTime, intervals: &[(u64, &[u64])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut w = IntervalLogWriterBuilder::new()
            .with_start_time(start)
            .with_base_time(start)
            .begin_log_with(&mut out, &mut serializer)
            .unwrap();
        for (i, values) in intervals {
            let mut h = crate::histogram::new_histogram();
            for v in *values {
                h.record(*v).unwrap();
            }
            w.write_histogram(&h, Duration::from_secs(*i), Duration::from_secs(1), None)
                .unwrap();
        }
        drop(w);
        out
    }

    /// Two clients' logs whose starts differ by 2 ms line up by interval and add by histogram;
    /// another interval length, or no log at all, is refused.
    #[test]
    fn intervals_of_several_logs_add_by_histogram() {
        let t = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let a = log(t, &[(0, &[1000, 2000]), (1, &[3000])]);
        let b = log(
            t + Duration::from_millis(2),
            &[(0, &[5000]), (1, &[7000, 9000])],
        );
        let (start, length, merged) =
            merge_logs(&[("a".into(), a.clone()), ("b".into(), b)]).unwrap();
        assert_eq!((start, length), (t, Duration::from_secs(1)));
        let counts: Vec<u64> = merged.iter().map(|i| i.histogram.len()).collect();
        assert_eq!(counts, [3, 3]);
        // The largest value, to the histogram's 3 significant digits.
        assert!(merged[1]
            .histogram
            .equivalent(merged[1].histogram.max(), 9000));
        let bad = b"#[StartTime: 1 (seconds since epoch)]\nnot a log line\n".to_vec();
        assert!(merge_logs(&[("a".into(), a), ("bad".into(), bad)]).is_err());
    }
}
