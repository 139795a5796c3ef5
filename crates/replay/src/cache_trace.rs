//! Key-value traces without a database of their own: Twitter's cache-trace format (the CSV of
//! twitter/cache-trace: `timestamp,anonymized key,key size,value size,client id,operation,TTL`, the
//! time in whole seconds, the client id the session), and JSON Lines of scalebench's own
//! (`{"time": 12.5, "session": "c1", "op": "get", "key": "user1", "value_size": 100}`, the time in
//! seconds, `session` and `value_size` optional). Operations are memcached's (`get`, `gets`,
//! `set`, `add`, `replace`, `cas`, `append`, `prepend`, `delete`, `incr`, `decr`) or scalebench's
//! (`read`, `insert`, `update`, `delete`, `read_modify_write`, `increment`); any other is counted
//! under its name. Twitter's times are whole seconds: the operations of one second are spread
//! evenly over it ([`crate::spread`]).

use std::io::{BufRead, Read};

use scalebench_workload::OpKind;

use crate::{CaptureError, Captured, Request};

/// The operation a trace's `op` is, by key.
pub fn kind_of(op: &str) -> Option<OpKind> {
    Some(match op.to_ascii_lowercase().as_str() {
        "get" | "gets" | "read" => OpKind::Read,
        "set" | "replace" | "cas" | "append" | "prepend" | "update" => OpKind::Update,
        "add" | "insert" => OpKind::Insert,
        "delete" => OpKind::Delete,
        "incr" | "decr" | "increment" => OpKind::Increment,
        "read_modify_write" => OpKind::ReadModifyWrite,
        _ => return None,
    })
}

fn request(op: &str, key: String, value_bytes: u64) -> Request {
    match kind_of(op) {
        Some(kind) => Request::Key {
            command: op.to_string(),
            kind,
            key,
            value_bytes: if matches!(kind, OpKind::Read | OpKind::Delete) {
                0
            } else {
                value_bytes
            },
        },
        None => Request::Other {
            command: op.to_string(),
        },
    }
}

const TWITTER: &str = "cache trace";

/// The operations of a Twitter cache trace, in order.
pub struct TwitterReader<R: Read> {
    records: csv::StringRecordsIntoIter<R>,
}

impl<R: Read> TwitterReader<R> {
    pub fn new(input: R) -> Self {
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        TwitterReader {
            records: reader.into_records(),
        }
    }
}

impl<R: Read> Iterator for TwitterReader<R> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        let record = match self.records.next()? {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                return Some(Err(CaptureError::line(TWITTER, line, e.to_string())));
            }
        };
        let line = record.position().map_or(0, |p| p.line());
        let bad = |why: String| Some(Err(CaptureError::line(TWITTER, line, why)));
        if record.len() != 7 {
            return bad(format!(
                "{} fields where the trace has 7 (timestamp,key,key size,value size,client id,operation,TTL)",
                record.len()
            ));
        }
        let Ok(seconds) = record[0].trim().parse::<i64>() else {
            return bad(format!("`{}` is not a time in whole seconds", &record[0]));
        };
        let Ok(value_bytes) = record[3].trim().parse::<u64>() else {
            return bad(format!("`{}` is not a value size", &record[3]));
        };
        Some(Ok(Captured {
            at_ns: seconds.saturating_mul(1_000_000_000),
            session: record[4].to_string(),
            request: request(record[5].trim(), record[1].to_string(), value_bytes),
        }))
    }
}

const JSONL: &str = "JSON Lines";

/// One line of a JSON Lines trace.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    time: f64,
    #[serde(default)]
    session: Option<serde_json::Value>,
    op: String,
    key: String,
    #[serde(default)]
    value_size: u64,
}

/// The operations of a JSON Lines trace, in order.
pub struct JsonLinesReader<R> {
    lines: std::io::Lines<R>,
    line: u64,
}

impl<R: BufRead> JsonLinesReader<R> {
    pub fn new(input: R) -> Self {
        JsonLinesReader {
            lines: input.lines(),
            line: 0,
        }
    }
}

impl<R: BufRead> Iterator for JsonLinesReader<R> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let text = match self.lines.next()? {
                Ok(t) => t,
                Err(e) => {
                    return Some(Err(CaptureError::line(JSONL, self.line + 1, e.to_string())))
                }
            };
            self.line += 1;
            if text.trim().is_empty() {
                continue;
            }
            let parsed: Line = match serde_json::from_str(&text) {
                Ok(l) => l,
                Err(e) => return Some(Err(CaptureError::line(JSONL, self.line, e.to_string()))),
            };
            if !parsed.time.is_finite() || parsed.time < 0.0 {
                let why = format!("time {} is not seconds from the trace's start", parsed.time);
                return Some(Err(CaptureError::line(JSONL, self.line, why)));
            }
            let session = match parsed.session {
                None => String::new(),
                Some(serde_json::Value::String(s)) => s,
                Some(other) => other.to_string(),
            };
            return Some(Ok(Captured {
                at_ns: (parsed.time * 1e9).round() as i64,
                session,
                request: request(&parsed.op, parsed.key, parsed.value_size),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twitters_trace_is_read_by_its_seven_fields() {
        let text = "0,key-a,5,100,7,get,0\n1,key-b,5,250,8,set,3600\n1,key-c,5,0,8,delete,0\n2,key-d,5,9,9,touch,0\n";
        let got: Vec<Captured> = TwitterReader::new(text.as_bytes())
            .map(Result::unwrap)
            .collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got[1].at_ns, 1_000_000_000);
        assert_eq!(got[1].session, "8");
        assert_eq!(
            got[1].request,
            Request::Key {
                command: "set".into(),
                kind: OpKind::Update,
                key: "key-b".into(),
                value_bytes: 250
            }
        );
        // A read writes nothing, whatever size the trace gives.
        assert!(matches!(
            got[0].request,
            Request::Key {
                value_bytes: 0,
                kind: OpKind::Read,
                ..
            }
        ));
        assert_eq!(
            got[3].request,
            Request::Other {
                command: "touch".into()
            }
        );
        let e = TwitterReader::new("0,k,5\n".as_bytes())
            .next()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("3 fields where the trace has 7"),
            "{e}"
        );
    }

    #[test]
    fn json_lines_are_read_with_their_optional_fields() {
        let text = "{\"time\": 0.25, \"session\": 3, \"op\": \"insert\", \"key\": \"u1\", \"value_size\": 10}\n\n{\"time\": 1, \"op\": \"read\", \"key\": \"u1\"}\n";
        let got: Vec<Captured> = JsonLinesReader::new(text.as_bytes())
            .map(Result::unwrap)
            .collect();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].at_ns, got[0].session.as_str()), (250_000_000, "3"));
        assert_eq!(got[1].session, "");
        let e = JsonLinesReader::new("{\"time\": 1, \"op\": \"get\"}\n".as_bytes())
            .next()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("missing field `key`"),
            "{e}"
        );
    }
}
