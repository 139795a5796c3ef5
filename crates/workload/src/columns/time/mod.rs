//! The time generators: a timestamp fixed by the key number (plus jitter) and the client's clock.

pub(super) mod decl;

pub use decl::TimeGenerator;

use rand::Rng;

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make};
use super::spec::ColumnType;
use crate::duration::{DurationText, SignedDurationText};

#[derive(Debug, Clone)]
enum Time {
    Timestamp {
        start_ms: i64,
        step_ms: i64,
        jitter_ms: u64,
    },
    Now {
        offset_ms: i64,
    },
}

/// The maker of a time generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Time(g) = k.generator() else {
        return None;
    };
    let time = match g {
        TimeGenerator::Timestamp {
            start,
            step,
            jitter,
        } => timestamp(k, start, step, jitter),
        TimeGenerator::Now { offset } => now(k, offset),
    };
    Some(time.map(|m| Box::new(m) as Box<dyn Make>))
}

fn timestamp(
    k: &Check,
    start: &str,
    step: &SignedDurationText,
    jitter: &DurationText,
) -> Result<Time, String> {
    if k.t() != ColumnType::Timestamp {
        return Err(k.wrong());
    }
    let start_ms = chrono::DateTime::parse_from_rfc3339(start)
        .map_err(|e| {
            format!("start '{start}' is not an RFC 3339 time (2026-01-01T00:00:00Z): {e}")
        })?
        .timestamp_millis();
    let jitter_ms = u64::try_from(jitter.value().as_millis())
        .map_err(|_| format!("jitter '{jitter}' is too long"))?;
    Ok(Time::Timestamp {
        start_ms,
        step_ms: step.millis(),
        jitter_ms,
    })
}

fn now(k: &Check, offset: &SignedDurationText) -> Result<Time, String> {
    if k.t() != ColumnType::Timestamp {
        return Err(k.wrong());
    }
    Ok(Time::Now {
        offset_ms: offset.millis(),
    })
}

impl Make for Time {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Time::Timestamp {
                start_ms,
                step_ms,
                jitter_ms,
            } => {
                let jitter = if *jitter_ms > 0 {
                    d.rng.random_range(0..=*jitter_ms) as i64
                } else {
                    0
                };
                let ms = start_ms
                    .saturating_add((d.keynum as i64).saturating_mul(*step_ms))
                    .saturating_add(jitter)
                    .clamp(0, 253_402_300_799_000);
                crate::values::push_timestamp(ms, out)
            }
            Time::Now { offset_ms } => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                crate::values::push_timestamp((now + *offset_ms).max(0), out)
            }
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
