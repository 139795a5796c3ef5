//! PostgreSQL's csvlog (`log_destination = 'csvlog'`, `logging_collector = on`) with every
//! statement logged: `log_statement = 'all'` (pgreplay's input: each statement when it began) or
//! `log_min_duration_statement = 0` (each when it ended, with its duration: its start is the
//! end less the duration). A simple query is `statement: <sql>`; a prepared one is
//! `execute <name>: <sql>`, its parameters in the record's detail (`parameters: $1 = '42'`). The
//! session is the record's session id. Everything else the log holds (connections, checkpoints,
//! errors, the parse and bind steps' durations, a duration without its statement) is not an
//! operation and is skipped. Times are read in the log's own zone (`log_timezone`), to the
//! millisecond it prints.

use std::io::Read;

use crate::{CaptureError, Captured, Request};

const FORMAT: &str = "csvlog";
const LOG_TIME: usize = 0;
const SESSION_ID: usize = 5;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;

/// The statements of a csvlog, in order.
pub struct CsvlogReader<R: Read> {
    records: csv::StringRecordsIntoIter<R>,
}

impl<R: Read> CsvlogReader<R> {
    pub fn new(input: R) -> Self {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        CsvlogReader {
            records: reader.into_records(),
        }
    }
}

impl<R: Read> Iterator for CsvlogReader<R> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let record = match self.records.next()? {
                Ok(r) => r,
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line());
                    return Some(Err(CaptureError::line(FORMAT, line, e.to_string())));
                }
            };
            let line = record.position().map_or(0, |p| p.line());
            match statement(&record) {
                Ok(Some(c)) => return Some(Ok(c)),
                Ok(None) => continue,
                Err(why) => return Some(Err(CaptureError::line(FORMAT, line, why))),
            }
        }
    }
}

/// The statement a record logs, if it logs one.
fn statement(record: &csv::StringRecord) -> Result<Option<Captured>, String> {
    if record.len() <= DETAIL {
        return Err(format!(
            "{} fields where csvlog has at least 23 (is this a csvlog?)",
            record.len()
        ));
    }
    let message = &record[MESSAGE];
    let (duration_ns, logged) = match message.strip_prefix("duration: ") {
        Some(rest) => {
            let Some((ms, after)) = rest.split_once(" ms") else {
                return Err(format!("a duration without `ms`: {}", cut(message)));
            };
            let ms: f64 = ms
                .parse()
                .map_err(|_| format!("`{ms}` is not a duration in ms"))?;
            (Some((ms * 1e6) as i64), after.trim_start())
        }
        None => (None, message),
    };
    let (text, params) = if let Some(sql) = logged.strip_prefix("statement: ") {
        (sql, Vec::new())
    } else if let Some(rest) = logged.strip_prefix("execute ") {
        let Some((_, sql)) = rest.split_once(": ") else {
            return Err(format!(
                "an execute without its statement: {}",
                cut(message)
            ));
        };
        (sql, parameters(&record[DETAIL])?)
    } else {
        return Ok(None);
    };
    let end_ns = log_time_ns(&record[LOG_TIME])?;
    Ok(Some(Captured {
        at_ns: end_ns - duration_ns.unwrap_or(0),
        session: record[SESSION_ID].to_string(),
        request: Request::Statement {
            text: text.to_string(),
            params,
        },
    }))
}

/// `2026-12-07 21:00:00.123 UTC` in ns, its zone left out (only differences are used).
pub(crate) fn log_time_ns(text: &str) -> Result<i64, String> {
    let naive = text
        .rsplit_once(' ')
        .filter(|(_, zone)| !zone.contains(':'))
        .map_or(text, |(t, _)| t);
    let t = chrono::NaiveDateTime::parse_from_str(naive, "%Y-%m-%d %H:%M:%S%.f")
        .map_err(|e| format!("`{text}` is not a log time ({e})"))?;
    t.and_utc()
        .timestamp_nanos_opt()
        .ok_or_else(|| format!("`{text}` is out of range"))
}

/// A prepared statement's parameters from the detail `parameters: $1 = '42', $2 = NULL`, in order
/// of their numbers, a NULL as `None`.
fn parameters(detail: &str) -> Result<Vec<Option<String>>, String> {
    let Some(mut rest) = detail.strip_prefix("parameters: ") else {
        return Ok(Vec::new());
    };
    let mut params = Vec::new();
    while !rest.is_empty() {
        let Some((number, after)) = rest.strip_prefix('$').and_then(|r| r.split_once(" = ")) else {
            return Err(format!("parameters not as `$1 = '...'`: {}", cut(detail)));
        };
        if number.parse::<usize>() != Ok(params.len() + 1) {
            return Err(format!("parameter ${number} out of order: {}", cut(detail)));
        }
        let (value, after) = if let Some(after) = after.strip_prefix("NULL") {
            (None, after)
        } else {
            let (v, after) = quoted(after)
                .ok_or_else(|| format!("a parameter's quote not closed: {}", cut(detail)))?;
            (Some(v), after)
        };
        params.push(value);
        rest = after.strip_prefix(", ").unwrap_or(after);
        if !after.is_empty() && !after.starts_with(", ") {
            return Err(format!("parameters not separated by `, `: {}", cut(detail)));
        }
    }
    Ok(params)
}

/// `'it''s' rest` as (`it's`, ` rest`).
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut value = String::new();
    loop {
        let end = rest.find('\'')?;
        value.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix('\'') {
            Some(after) => {
                value.push('\'');
                rest = after;
            }
            None => return Some((value, rest)),
        }
    }
}

/// At most 80 characters of a message, for an error.
fn cut(text: &str) -> String {
    let mut t: String = text.chars().take(80).collect();
    if t.len() < text.len() {
        t.push_str("...");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A csvlog record as PostgreSQL 15 writes it (26 fields).
    fn record(time: &str, session: &str, message: &str, detail: &str) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        format!(
            "{time},\"bench\",\"ycsb\",1234,\"127.0.0.1:5555\",{session},1,\"SELECT\",2026-12-07 21:00:00 UTC,3/4,0,LOG,00000,{},{},,,,,,,,\"psql\",\"client backend\",,0\n",
            q(message),
            if detail.is_empty() { String::new() } else { q(detail) }
        )
    }

    fn read(text: &str) -> Vec<Result<Captured, CaptureError>> {
        CsvlogReader::new(text.as_bytes()).collect()
    }

    #[test]
    fn statements_and_prepared_executions_are_read_with_their_session_and_parameters() {
        let text = [
            record(
                "2026-12-07 21:00:01.250 UTC",
                "a.1",
                "connection authorized: user=bench",
                "",
            ),
            record(
                "2026-12-07 21:00:01.500 UTC",
                "a.1",
                "statement: SELECT \"x\"\nFROM t",
                "",
            ),
            record(
                "2026-12-07 21:00:02.000 UTC",
                "b.2",
                "execute <unnamed>: UPDATE t SET v = $1 WHERE k = $2",
                "parameters: $1 = 'it''s, ok', $2 = NULL",
            ),
            record(
                "2026-12-07 21:00:03.000 UTC",
                "b.2",
                "duration: 500.000 ms  statement: SELECT pg_sleep(0.5)",
                "",
            ),
            record(
                "2026-12-07 21:00:03.100 UTC",
                "b.2",
                "duration: 0.040 ms",
                "",
            ),
            record(
                "2026-12-07 21:00:03.200 UTC",
                "b.2",
                "duration: 0.040 ms  parse <unnamed>: SELECT 1",
                "",
            ),
        ]
        .concat();
        let got: Vec<Captured> = read(&text).into_iter().map(Result::unwrap).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        let t0 = log_time_ns("2026-12-07 21:00:01.500 UTC").unwrap();
        assert_eq!(got[0].at_ns, t0);
        assert_eq!(got[0].session, "a.1");
        assert_eq!(
            got[0].request,
            Request::Statement {
                text: "SELECT \"x\"\nFROM t".into(),
                params: vec![]
            }
        );
        assert_eq!(got[1].at_ns - t0, 500_000_000);
        assert_eq!(
            got[1].request,
            Request::Statement {
                text: "UPDATE t SET v = $1 WHERE k = $2".into(),
                params: vec![Some("it's, ok".into()), None]
            }
        );
        // Logged when it ended: it began half a second before.
        assert_eq!(got[2].at_ns - t0, 1_000_000_000);
        assert_eq!(got[2].request.command(), "SELECT");
    }

    #[test]
    fn a_file_that_is_not_a_csvlog_is_named_at_its_first_record() {
        let e = read("just,three,fields\n")[0]
            .clone()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("is this a csvlog"),
            "{e}"
        );
        let bad = record("yesterday", "a", "statement: SELECT 1", "");
        let e = read(&bad)[0].clone().unwrap_err().to_string();
        assert!(e.contains("`yesterday` is not a log time"), "{e}");
    }
}
