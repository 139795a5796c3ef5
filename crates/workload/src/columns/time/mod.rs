//! The time generators: a timestamp fixed by the key number (plus jitter) and the client's clock.

pub(super) mod decl;

pub use decl::TimeGenerator;

use rand::Rng;

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make};
use super::spec::ColumnType;

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

fn timestamp(k: &Check, start: &str, step: &str, jitter: &str) -> Result<Time, String> {
    if k.t() != ColumnType::Timestamp {
        return Err(k.wrong());
    }
    let start_ms = chrono::DateTime::parse_from_rfc3339(start)
        .map_err(|e| {
            format!("start '{start}' is not an RFC 3339 time (2026-01-01T00:00:00Z): {e}")
        })?
        .timestamp_millis();
    Ok(Time::Timestamp {
        start_ms,
        step_ms: duration_ms(step, true)?,
        jitter_ms: duration_ms(jitter, false)? as u64,
    })
}

fn now(k: &Check, offset: &str) -> Result<Time, String> {
    if k.t() != ColumnType::Timestamp {
        return Err(k.wrong());
    }
    Ok(Time::Now {
        offset_ms: duration_ms(offset, true)?,
    })
}

fn duration_ms(text: &str, negative_allowed: bool) -> Result<i64, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) if negative_allowed => (true, rest),
        _ => (false, text),
    };
    let d = humantime::parse_duration(body.trim())
        .map_err(|e| format!("'{text}' is not a duration (e.g. 1s, 250ms, 5m): {e}"))?;
    let ms = i64::try_from(d.as_millis()).map_err(|_| format!("'{text}' is too long"))?;
    Ok(if negative { -ms } else { ms })
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
