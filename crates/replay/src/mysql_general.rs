//! The MySQL and MariaDB general query log (`general_log = 1`, `general_log_file = ...`): one
//! entry per command a client sent, `<time>\t<thread id> <Command>\t<argument>`, a statement that
//! spans lines continuing on the lines after it. MySQL 8 gives each entry its time in
//! microseconds (`2026-12-07T21:00:00.123456Z`); MariaDB gives the time to the second
//! (`261207 21:00:00`), and only on the first entry of each second: the entries of one second are
//! spread evenly over it ([`crate::spread`]). A `Query` is its statement, an `Execute` the
//! prepared statement with its values as the server logged it; the thread id is the session.
//! `Connect`, `Quit`, `Prepare` and the statement's `Close stmt` and `Reset stmt` are the
//! protocol's steps, not operations, and are skipped; any other command (`Init DB`, `Ping`) is
//! counted under its name. The header lines a server writes when it opens the log are skipped.

use std::io::BufRead;

use crate::{CaptureError, Captured, Request};

const FORMAT: &str = "general log";

/// How precise a log's times are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Microseconds,
    Seconds,
}

/// The entries of a general log, in order.
pub struct GeneralLogReader<R> {
    lines: std::io::Lines<R>,
    line: u64,
    /// The entry being read: more of its statement may follow on the next lines.
    current: Option<(u64, Captured)>,
    /// The last time read (MariaDB gives it on the first entry of each second only).
    last_ns: Option<i64>,
    /// Whether the log gave its times to the second.
    pub resolution: Option<Resolution>,
}

impl<R: BufRead> GeneralLogReader<R> {
    pub fn new(input: R) -> Self {
        GeneralLogReader {
            lines: input.lines(),
            line: 0,
            current: None,
            last_ns: None,
            resolution: None,
        }
    }

    /// The next complete entry, or the error of a line.
    fn step(&mut self) -> Option<Result<Option<Captured>, CaptureError>> {
        let text = match self.lines.next() {
            None => return self.current.take().map(|(_, c)| Ok(keep(c))),
            Some(Err(e)) => {
                return Some(Err(CaptureError::line(
                    FORMAT,
                    self.line + 1,
                    e.to_string(),
                )))
            }
            Some(Ok(t)) => t,
        };
        self.line += 1;
        let Some((time, session, command, argument)) = entry(&text) else {
            if is_header(&text) {
                return Some(Ok(None));
            }
            // More of the statement above, or a line outside any entry.
            return match &mut self.current {
                Some((_, Captured { request: Request::Statement { text: sql, .. }, .. })) => {
                    sql.push('\n');
                    sql.push_str(&text);
                    Some(Ok(None))
                }
                Some(_) => Some(Ok(None)),
                None => Some(Err(CaptureError::line(
                    FORMAT,
                    self.line,
                    "expected `<time>\\t<thread id> <Command>\\t<argument>` (is this a general log?)",
                ))),
            };
        };
        let at_ns = match time {
            Some(t) => match log_time(t) {
                Ok((ns, resolution)) => {
                    self.resolution.get_or_insert(resolution);
                    ns
                }
                Err(why) => return Some(Err(CaptureError::line(FORMAT, self.line, why))),
            },
            None => match self.last_ns {
                Some(ns) => ns,
                None => {
                    return Some(Err(CaptureError::line(
                        FORMAT,
                        self.line,
                        "an entry before any time",
                    )))
                }
            },
        };
        self.last_ns = Some(at_ns);
        let request = match command {
            "Query" | "Execute" => Request::Statement {
                text: argument.to_string(),
                params: Vec::new(),
            },
            other => Request::Other {
                command: other.to_string(),
            },
        };
        let next = Captured {
            at_ns,
            session: session.to_string(),
            request,
        };
        let done = self.current.replace((self.line, next));
        Some(Ok(done.and_then(|(_, c)| keep(c))))
    }
}

/// An entry that is an operation (the protocol's steps are not).
fn keep(c: Captured) -> Option<Captured> {
    match &c.request {
        Request::Other { command }
            if matches!(
                command.as_str(),
                "Connect" | "Quit" | "Prepare" | "Close stmt" | "Reset stmt"
            ) =>
        {
            None
        }
        _ => Some(c),
    }
}

impl<R: BufRead> Iterator for GeneralLogReader<R> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.step()? {
                Ok(Some(c)) => return Some(Ok(c)),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// An entry's time (if it has one), thread id, command and argument.
fn entry(text: &str) -> Option<(Option<&str>, &str, &str, &str)> {
    let (time, rest) = text.split_once('\t')?;
    let rest = rest.trim_start_matches('\t').trim_start();
    let (id, rest) = rest.split_once(' ')?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (command, argument) = rest.split_once('\t').unwrap_or((rest, ""));
    let is_command = !command.is_empty()
        && command.starts_with(|c: char| c.is_ascii_uppercase())
        && command.chars().all(|c| c.is_ascii_alphabetic() || c == ' ');
    let time = time.trim();
    is_command.then_some(((!time.is_empty()).then_some(time), id, command, argument))
}

/// The lines a server writes when it opens its log.
fn is_header(text: &str) -> bool {
    text.contains(", Version: ")
        || text.starts_with("Tcp port:")
        || (text.starts_with("Time") && text.contains("Command") && text.contains("Argument"))
}

/// MySQL's `2026-12-07T21:00:00.123456Z` (or `+01:00`) or MariaDB's `261207 21:00:00` (hour padded
/// with a space before 10), in ns, the zone left out.
fn log_time(text: &str) -> Result<(i64, Resolution), String> {
    let bad = |e: chrono::ParseError| format!("`{text}` is not a general log's time ({e})");
    let (t, resolution) = if text.contains('T') {
        let naive = text.trim_end_matches('Z');
        let naive = match naive.rfind(['+', '-']) {
            Some(i) if i > 10 => &naive[..i],
            _ => naive,
        };
        let t =
            chrono::NaiveDateTime::parse_from_str(naive, "%Y-%m-%dT%H:%M:%S%.f").map_err(bad)?;
        (t, Resolution::Microseconds)
    } else {
        let mut parts = text.split_whitespace();
        let (date, time) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let date = chrono::NaiveDate::parse_from_str(date, "%y%m%d").map_err(bad)?;
        let time =
            chrono::NaiveTime::parse_from_str(&format!("{time:0>8}"), "%H:%M:%S").map_err(bad)?;
        (date.and_time(time), Resolution::Seconds)
    };
    let ns = t
        .and_utc()
        .timestamp_nanos_opt()
        .ok_or_else(|| format!("`{text}` is out of range"))?;
    Ok((ns, resolution))
}

/// The resolution of the first time among `head`'s entries (the start of a log).
pub(crate) fn resolution_of(head: &str) -> Option<Resolution> {
    head.lines()
        .filter_map(entry)
        .find_map(|(time, ..)| time)
        .and_then(|t| log_time(t).ok())
        .map(|(_, r)| r)
}

/// Whether `head` (the start of a file) reads as a general log.
pub(crate) fn looks_like(head: &str) -> bool {
    head.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| is_header(l) || entry(l).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Vec<Captured>, Option<Resolution>) {
        let mut r = GeneralLogReader::new(text.as_bytes());
        let got = r.by_ref().map(Result::unwrap).collect();
        (got, r.resolution)
    }

    fn sql(c: &Captured) -> &str {
        match &c.request {
            Request::Statement { text, .. } => text,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mysqls_entries_are_read_with_their_microseconds_and_statements_over_lines() {
        let (got, resolution) = read(concat!(
            "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n",
            "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n",
            "Time                 Id Command    Argument\n",
            "2026-12-07T21:00:00.123456Z\t    8 Connect\tbench@localhost on ycsb using TCP/IP\n",
            "2026-12-07T21:00:00.200000Z\t    8 Query\tSELECT a,\n",
            "  b FROM t\n",
            "2026-12-07T21:00:00.300000+01:00\t   12 Init DB\tycsb\n",
            "2026-12-07T21:00:01.000000Z\t    8 Quit\t\n",
        ));
        assert_eq!(resolution, Some(Resolution::Microseconds));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(sql(&got[0]), "SELECT a,\n  b FROM t");
        assert_eq!(got[0].session, "8");
        assert_eq!(
            got[1].request,
            Request::Other {
                command: "Init DB".into()
            }
        );
        assert_eq!(got[1].at_ns - got[0].at_ns, 100_000_000);
    }

    #[test]
    fn mariadbs_entries_take_the_last_time_given() {
        let (got, resolution) = read(concat!(
            "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\n",
            "Time\t\t    Id Command\tArgument\n",
            "261207  9:00:00\t    5 Connect\tbench@localhost as anonymous on ycsb\n",
            "\t\t    5 Query\tSELECT 1\n",
            "\t\t    5 Prepare\tSELECT * FROM t WHERE k = ?\n",
            "261207  9:00:01\t    5 Execute\tSELECT * FROM t WHERE k = 'user1'\n",
        ));
        assert_eq!(resolution, Some(Resolution::Seconds));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(sql(&got[1]), "SELECT * FROM t WHERE k = 'user1'");
        assert_eq!(got[1].at_ns - got[0].at_ns, 1_000_000_000);
    }

    #[test]
    fn a_file_that_is_not_a_general_log_is_named() {
        let mut r = GeneralLogReader::new("hello world\n".as_bytes());
        let e = r.next().unwrap().unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("is this a general log"),
            "{e}"
        );
        let mut r = GeneralLogReader::new("yesterday\t 5 Query\tSELECT 1\n".as_bytes());
        let e = r.next().unwrap().unwrap_err().to_string();
        assert!(e.contains("`yesterday` is not a general log's time"), "{e}");
    }
}
