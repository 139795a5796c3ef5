//! YCSB's text summary (`TextMeasurementsExporter` + `OneMeasurementHdrHistogram`), line for line,
//! so existing parsers of YCSB output keep working.
//!
//! Differences, by design: `[OVERALL], Throughput(ops/sec)` counts successful operations only
//! (YCSB counts failures too); no JVM GC lines.

use crate::histogram::LatencyHistogram;
use crate::result::{LatencySummary, PhaseResult};
use scalebench_workload::FailureClass;

/// Renders the phase as YCSB would print it. `percentiles` as in `hdrhistogram.percentiles` (default 95, 99).
pub fn render(phase: &PhaseResult, percentiles: &[f64]) -> String {
    let mut out = String::new();
    let mut line = |metric: &str, name: &str, value: String| {
        out.push_str(&format!("[{metric}], {name}, {value}\n"));
    };
    line(
        "OVERALL",
        "RunTime(ms)",
        ((phase.duration_s * 1000.0) as u64).to_string(),
    );
    line(
        "OVERALL",
        "Throughput(ops/sec)",
        java_double(phase.totals.throughput_ops_s),
    );

    let ordered = phase.operations_in_order();
    for &(name, op) in &ordered {
        block(&mut line, name, op.latency.as_ref(), percentiles);
        if op.ok > 0 || op.failed.is_empty() {
            line(name, "Return=OK", op.ok.to_string());
        }
        for class in FailureClass::ALL {
            if let Some(n) = op.failed.get(class.name()) {
                line(
                    name,
                    &format!("Return={}", class.ycsb_status()),
                    n.to_string(),
                );
            }
        }
        if op.failed_latency.is_some() {
            block(
                &mut line,
                &format!("{name}-FAILED"),
                op.failed_latency.as_ref(),
                percentiles,
            );
        }
    }
    if phase.open_loop {
        for (name, op) in ordered {
            block(
                &mut line,
                &format!("Intended-{name}"),
                op.intended_latency.as_ref(),
                percentiles,
            );
        }
    }
    out
}

fn block(
    line: &mut impl FnMut(&str, &str, String),
    name: &str,
    summary: Option<&LatencySummary>,
    percentiles: &[f64],
) {
    let hist: Option<LatencyHistogram> = summary.and_then(|s| s.decode().ok());
    match hist {
        Some(h) if !h.is_empty() => {
            let us = |ns: u64| ns / 1000;
            line(name, "Operations", h.len().to_string());
            line(name, "AverageLatency(us)", java_double(h.mean() / 1000.0));
            line(name, "MinLatency(us)", us(h.min()).to_string());
            line(name, "MaxLatency(us)", us(h.max()).to_string());
            for p in percentiles {
                line(
                    name,
                    &format!("{}PercentileLatency(us)", ordinal(*p)),
                    us(h.value_at_quantile(p / 100.0)).to_string(),
                );
            }
        }
        _ => {
            // What YCSB prints for a measurement without latencies (e.g. every read failed).
            line(name, "Operations", "0".into());
            line(name, "AverageLatency(us)", "NaN".into());
            line(name, "MinLatency(us)", i64::MAX.to_string());
            line(name, "MaxLatency(us)", "0".into());
            for p in percentiles {
                line(
                    name,
                    &format!("{}PercentileLatency(us)", ordinal(*p)),
                    "0".into(),
                );
            }
        }
    }
}

/// YCSB's `ordinal`: 95 -> "95th", 1 -> "1st", 12 -> "12th", 99.9 -> "99.9".
pub fn ordinal(p: f64) -> String {
    if p.fract() == 0.0 {
        let j = p as i64;
        let suffix = match (j % 100, j % 10) {
            (11..=13, _) => "th",
            (_, 1) => "st",
            (_, 2) => "nd",
            (_, 3) => "rd",
            _ => "th",
        };
        format!("{j}{suffix}")
    } else {
        java_double(p)
    }
}

/// Java's `Double.toString`: "8.0", "0.5", "NaN", "1.0E7", "1.234E-4".
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        // Rust's {:e} is "1.234e7" or "1e7"; Java writes "1.234E7" and "1.0E7".
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').expect("exponent form");
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}

/// Parses `hdrhistogram.percentiles` ("95,99").
pub fn parse_percentiles(text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|p| {
            let v: f64 = p.trim().parse().map_err(|_| p.trim().to_string())?;
            if v > 0.0 && v <= 100.0 {
                Ok(v)
            } else {
                Err(p.trim().to_string())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_number_formatting() {
        assert_eq!(java_double(8.0), "8.0");
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(998.6684420772303), "998.6684420772303");
        assert_eq!(java_double(1.0e7), "1.0E7");
        assert_eq!(java_double(12345678.5), "1.23456785E7");
        assert_eq!(java_double(0.0001234), "1.234E-4");
        assert_eq!(java_double(f64::NAN), "NaN");
    }

    #[test]
    fn ordinals_as_ycsb() {
        assert_eq!(ordinal(95.0), "95th");
        assert_eq!(ordinal(99.0), "99th");
        assert_eq!(ordinal(1.0), "1st");
        assert_eq!(ordinal(22.0), "22nd");
        assert_eq!(ordinal(13.0), "13th");
        assert_eq!(ordinal(99.9), "99.9");
    }
}
