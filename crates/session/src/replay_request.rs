//! What a replay is asked to do (`scalebench replay CAPTURE`, `saturate --replay`, each client of
//! a replay from N): the capture, its format, speed and copies, and whether the capture can be
//! replayed as it is, read once before anything connects.

use std::path::PathBuf;

use scalebench_replay::{CaptureFormat, CaptureSummary};

use crate::error::SessionError;

/// The most times faster than captured a replay may run.
pub const MAX_SPEED: f64 = 10_000.0;
/// The most copies of a capture (`--keys xN`).
pub const MAX_COPIES: u32 = 1000;
/// The furthest a capture's time may go back, one operation to a later one: further, its parts
/// are not in the order they began (captures joined out of order, a clock set back).
pub const MAX_STEP_BACK_S: f64 = 1.0;
/// The longest a replay may last (its capture's span over its speed): 31 days.
pub const MAX_REPLAY_SPAN_S: f64 = 31.0 * 24.0 * 3600.0;

/// What to replay, and how.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReplayRequest {
    pub capture: PathBuf,
    /// Its format; recognised from its first line when not given.
    pub format: Option<CaptureFormat>,
    /// How many times faster than captured.
    pub speed: f64,
    /// Copies replayed together, each on keys and sessions of its own (`--keys xN`).
    pub copies: u32,
}

impl ReplayRequest {
    /// `speed` and `copies` within their bounds: one line naming the bad value.
    pub fn new(
        capture: PathBuf,
        format: Option<CaptureFormat>,
        speed: f64,
        copies: u32,
    ) -> Result<ReplayRequest, SessionError> {
        if !(speed.is_finite() && speed > 0.0 && speed <= MAX_SPEED) {
            return Err(SessionError::Usage(format!(
                "--speed {speed}: expected a number of times the capture's speed, above 0 and at most {MAX_SPEED}"
            )));
        }
        if !(1..=MAX_COPIES).contains(&copies) {
            return Err(SessionError::Usage(format!(
                "--keys x{copies}: expected from x1 to x{MAX_COPIES} copies of the key space"
            )));
        }
        Ok(ReplayRequest {
            capture,
            format,
            speed,
            copies,
        })
    }

    /// `--replay CAPTURE` with `--keys` and `--capture-format` at speed 1, if a capture is given;
    /// those two without one are refused (they say how to read a capture).
    pub fn given(
        capture: Option<PathBuf>,
        format: Option<CaptureFormat>,
        copies: Option<u32>,
    ) -> Result<Option<ReplayRequest>, SessionError> {
        match capture {
            Some(c) => ReplayRequest::new(c, format, 1.0, copies.unwrap_or(1)).map(Some),
            None if copies.is_some() || format.is_some() => Err(SessionError::Usage(
                "--keys and --capture-format: only with --replay CAPTURE".into(),
            )),
            None => Ok(None),
        }
    }

    /// What every client of a replay must agree on: the capture as given, its speed and copies.
    pub fn definition(&self) -> String {
        format!(
            "{} ({}) at x{}, x{} keys",
            self.capture.display(),
            self.format.map_or("format recognised", CaptureFormat::name),
            self.speed,
            self.copies
        )
    }

    /// The capture read once, before anything connects: its format and what it holds.
    pub fn check(&self) -> Result<(CaptureFormat, CaptureSummary), SessionError> {
        let capture = scalebench_replay::open(&self.capture, self.format)
            .map_err(|e| SessionError::Usage(e.to_string()))?;
        let format = capture.format;
        Ok((format, CaptureSummary::of(capture.operations)))
    }

    /// [`Self::check`], and a capture that cannot be replayed as it is refused (bad input, one
    /// line naming the file and why): a line that is no operation of its format, no operation,
    /// times going back further than [`MAX_STEP_BACK_S`] (a PostgreSQL log's statements logged as
    /// they end go back by their durations, and are not judged), a span beyond
    /// [`MAX_REPLAY_SPAN_S`] at its speed, nothing the database at `db` runs.
    pub fn checked(
        &self,
        db: Option<&str>,
    ) -> Result<(CaptureFormat, CaptureSummary), SessionError> {
        let (format, summary) = self.check()?;
        self.judge(format, &summary, db)?;
        Ok((format, summary))
    }

    /// The operations of the capture the database at `db` runs: those that run by key, and its
    /// statements where it is of their kind ([`runs_statements`]).
    pub fn runnable(format: CaptureFormat, summary: &CaptureSummary, db: Option<&str>) -> u64 {
        let statements = if runs_statements(db, format) {
            summary.statements()
        } else {
            0
        };
        summary.by_key + statements
    }

    /// Why a capture of this summary cannot be replayed as it is ([`Self::checked`]), if it cannot.
    fn judge(
        &self,
        format: CaptureFormat,
        summary: &CaptureSummary,
        db: Option<&str>,
    ) -> Result<(), SessionError> {
        let name = self.capture.display();
        let bad = |why: String| Err(SessionError::Usage(format!("{name}: {why}")));
        if summary.unreadable > 0 {
            return bad(format!(
                "{} line(s) are not operations of the {} format (the first: {}); `scalebench replay --check` lists them",
                summary.unreadable,
                format.name(),
                summary.first_errors.first().map_or("", String::as_str)
            ));
        }
        if summary.first_ns.is_none() {
            return bad("no operation in it".into());
        }
        if Self::runnable(format, summary, db) == 0 {
            let commands: Vec<String> = summary
                .by_command
                .iter()
                .take(5)
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            return bad(format!(
                "none of its {} operations runs on this database (by command: {}): key-value operations run by key on any binding, statements as written on a database of their kind (postgres for a PostgreSQL csvlog, mysql for a general log; docs/replay.md)",
                summary.operations,
                commands.join(", ")
            ));
        }
        let back_s = summary.max_step_back_ns as f64 / 1e9;
        if back_s > MAX_STEP_BACK_S && format != CaptureFormat::PostgresCsvlog {
            return bad(format!(
                "its times go back: operation {} (from 1, in the file's order) began {back_s:.3} s before one before it; a capture's operations are in the order they began (captures joined out of order? sort them by time)",
                summary.max_step_back_at
            ));
        }
        if summary.span_s() / self.speed > MAX_REPLAY_SPAN_S {
            return bad(format!(
                "it spans {:.0} s: at --speed {} its replay would last beyond 31 days (a time far off?)",
                summary.span_s(),
                self.speed
            ));
        }
        Ok(())
    }
}

/// `--keys xN`: `x3` or `3`, copies of the capture's key space.
pub fn parse_copies(text: &str) -> Result<u32, String> {
    let n = text.strip_prefix('x').unwrap_or(text);
    n.parse()
        .map_err(|_| "expected xN: copies of the key space, e.g. x3".into())
}

/// Whether the database at `db` runs the statements of a capture of `format` as written (a
/// binding's [`scalebench_binding::BindingInfo::replays_statements`]); without a database
/// (`--check`), a capture's statements count as runnable on a database of their kind.
pub fn runs_statements(db: Option<&str>, format: CaptureFormat) -> bool {
    let Some(db) = db else {
        return true;
    };
    let scheme = db.split("://").next().unwrap_or_default();
    scalebench_binding::registry::for_scheme(scheme)
        .is_some_and(|b| b.replays_statements.contains(&format.name()))
}

/// `--check`: the capture's summary as printed, and why it cannot be replayed as it is, if it
/// cannot (bad input).
pub fn check_text(
    replay: &ReplayRequest,
    db: Option<&str>,
) -> Result<(String, Option<String>), SessionError> {
    let (format, summary) = replay.check()?;
    let lines = summary.lines().join("\n  ");
    let text = format!(
        "{} ({})\n  {lines}",
        replay.capture.display(),
        format.name()
    );
    let refused = replay
        .judge(format, &summary, db)
        .err()
        .map(|e| e.to_string());
    Ok((text, refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speed_or_a_number_of_copies_out_of_bounds_is_named() {
        let new = |speed, copies| ReplayRequest::new("c.txt".into(), None, speed, copies);
        assert!(new(1.0, 1).is_ok() && new(MAX_SPEED, MAX_COPIES).is_ok());
        for (speed, copies, named) in [
            (0.0, 1, "--speed 0"),
            (f64::NAN, 1, "--speed NaN"),
            (MAX_SPEED * 2.0, 1, "--speed 20000"),
            (1.0, 0, "--keys x0"),
            (1.0, MAX_COPIES + 1, "--keys x1001"),
        ] {
            let e = new(speed, copies).unwrap_err().to_string();
            assert!(e.contains(named), "{e}");
        }
        assert_eq!(parse_copies("x3"), Ok(3));
        assert_eq!(parse_copies("3"), Ok(3));
        assert!(parse_copies("three").is_err());
    }
}
