//! Redis's `MONITOR` output (`redis-cli monitor > capture.txt`): one line per command the server
//! ran, `1733612345.123456 [0 127.0.0.1:51234] "SET" "user1" "value"`: the time in microseconds,
//! the database and the client (the session), the command and its arguments quoted as
//! `sdscatrepr` quotes them. Key-value commands map onto a binding's operations by key; a command
//! of several keys (`MGET`, `MSET`, `DEL a b`) is one operation per key, in order, in its session;
//! commands a script ran (`[0 lua]`) are the script's `EVAL`, already counted, and are skipped;
//! `redis-cli`'s `OK` first line is skipped.

use std::collections::VecDeque;
use std::io::BufRead;

use scalebench_workload::OpKind;

use crate::{CaptureError, Captured, Request};

const FORMAT: &str = "MONITOR";

/// The operations of a MONITOR capture, in order.
pub struct MonitorReader<R> {
    lines: std::io::Lines<R>,
    line: u64,
    /// A multi-key command's operations not yet yielded.
    pending: VecDeque<Captured>,
}

impl<R: BufRead> MonitorReader<R> {
    pub fn new(input: R) -> Self {
        MonitorReader {
            lines: input.lines(),
            line: 0,
            pending: VecDeque::new(),
        }
    }
}

impl<R: BufRead> Iterator for MonitorReader<R> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(c) = self.pending.pop_front() {
                return Some(Ok(c));
            }
            let text = match self.lines.next()? {
                Ok(t) => t,
                Err(e) => {
                    return Some(Err(CaptureError::line(
                        FORMAT,
                        self.line + 1,
                        e.to_string(),
                    )))
                }
            };
            self.line += 1;
            let text = text.trim_end();
            if text.is_empty() || text == "OK" {
                continue;
            }
            match parse_line(text) {
                Ok(Some(ops)) => self.pending.extend(ops),
                Ok(None) => continue,
                Err(why) => return Some(Err(CaptureError::line(FORMAT, self.line, why))),
            }
        }
    }
}

/// A line's operations; `None` for a command a script ran.
fn parse_line(text: &str) -> Result<Option<Vec<Captured>>, String> {
    let (time, rest) = text
        .split_once(' ')
        .ok_or("expected `<seconds>.<micros> [<db> <client>] \"COMMAND\" ...`")?;
    let at_ns = seconds_to_ns(time).ok_or_else(|| format!("`{time}` is not a time in seconds"))?;
    let rest = rest
        .strip_prefix('[')
        .ok_or("expected `[<db> <client>]` after the time")?;
    let (origin, args) = rest
        .split_once("] ")
        .ok_or("expected `]` after the client")?;
    let client = origin.split_once(' ').map_or(origin, |(_, c)| c);
    if client == "lua" {
        return Ok(None);
    }
    let args = unquote_all(args)?;
    let Some((command, args)) = args.split_first() else {
        return Err("no command after the client".into());
    };
    let command = String::from_utf8_lossy(command).into_owned();
    let op = |kind, key: &[u8], value_bytes: usize| Captured {
        at_ns,
        session: client.to_string(),
        request: Request::Key {
            command: command.clone(),
            kind,
            key: String::from_utf8_lossy(key).into_owned(),
            value_bytes: value_bytes as u64,
        },
    };
    let other = || {
        vec![Captured {
            at_ns,
            session: client.to_string(),
            request: Request::Other {
                command: command.to_uppercase(),
            },
        }]
    };
    let upper = command.to_uppercase();
    let ops = match (upper.as_str(), args) {
        (
            "GET" | "HGET" | "HGETALL" | "HMGET" | "STRLEN" | "GETRANGE" | "HEXISTS" | "HLEN"
            | "HKEYS" | "HVALS" | "TTL" | "PTTL" | "TYPE",
            [key, ..],
        ) => vec![op(OpKind::Read, key, 0)],
        ("MGET" | "EXISTS", keys) if !keys.is_empty() => {
            keys.iter().map(|k| op(OpKind::Read, k, 0)).collect()
        }
        ("SET" | "GETSET" | "APPEND", [key, value, ..]) => {
            let kind = if upper == "APPEND" {
                OpKind::ReadModifyWrite
            } else {
                OpKind::Update
            };
            vec![op(kind, key, value.len())]
        }
        ("SETNX", [key, value]) => vec![op(OpKind::Insert, key, value.len())],
        ("SETEX" | "PSETEX" | "SETRANGE", [key, _, value]) => {
            vec![op(OpKind::Update, key, value.len())]
        }
        ("HSET" | "HMSET", [key, pairs @ ..]) if !pairs.is_empty() && pairs.len() % 2 == 0 => {
            vec![op(
                OpKind::Update,
                key,
                pairs.chunks(2).map(|p| p[1].len()).sum(),
            )]
        }
        ("HSETNX", [key, _, value]) => vec![op(OpKind::Insert, key, value.len())],
        ("MSET" | "MSETNX", pairs) if !pairs.is_empty() && pairs.len() % 2 == 0 => {
            let kind = if upper == "MSET" {
                OpKind::Update
            } else {
                OpKind::Insert
            };
            pairs
                .chunks(2)
                .map(|p| op(kind, &p[0], p[1].len()))
                .collect()
        }
        ("DEL" | "UNLINK", keys) if !keys.is_empty() => {
            keys.iter().map(|k| op(OpKind::Delete, k, 0)).collect()
        }
        ("GETDEL", [key]) => vec![op(OpKind::Delete, key, 0)],
        (
            "INCR" | "DECR" | "INCRBY" | "DECRBY" | "INCRBYFLOAT" | "HINCRBY" | "HINCRBYFLOAT",
            [key, ..],
        ) => vec![op(OpKind::Increment, key, 0)],
        _ => other(),
    };
    Ok(Some(ops))
}

/// `1733612345.123456` seconds in ns.
fn seconds_to_ns(text: &str) -> Option<i64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let frac_ns: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().ok()? * 10_i64.pow(9 - frac.len() as u32)
    };
    whole.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// The quoted arguments of a MONITOR line, unescaped (`\"`, `\\`, `\n`, `\r`, `\t`, `\a`, `\b`,
/// `\xHH`), as bytes.
fn unquote_all(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut args = Vec::new();
    let mut bytes = text.bytes().peekable();
    loop {
        while bytes.peek() == Some(&b' ') {
            bytes.next();
        }
        match bytes.next() {
            None => return Ok(args),
            Some(b'"') => {}
            Some(_) => return Err("an argument that is not quoted".into()),
        }
        let mut arg = Vec::new();
        loop {
            match bytes.next() {
                None => {
                    return Err("an argument whose quote is not closed (a line cut short?)".into())
                }
                Some(b'"') => break,
                Some(b'\\') => match bytes.next() {
                    Some(b'n') => arg.push(b'\n'),
                    Some(b'r') => arg.push(b'\r'),
                    Some(b't') => arg.push(b'\t'),
                    Some(b'a') => arg.push(7),
                    Some(b'b') => arg.push(8),
                    Some(b'x') => {
                        let hex: Vec<u8> = bytes.by_ref().take(2).collect();
                        let hex = std::str::from_utf8(&hex).ok().filter(|h| h.len() == 2);
                        let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                        arg.push(byte.ok_or("a \\x escape without two hex digits")?);
                    }
                    Some(c) => arg.push(c),
                    None => return Err("a line that ends in an escape".into()),
                },
                Some(c) => arg.push(c),
            }
        }
        args.push(arg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Result<Captured, CaptureError>> {
        MonitorReader::new(text.as_bytes()).collect()
    }

    fn key(c: &Captured) -> (&str, OpKind, &str, u64) {
        match &c.request {
            Request::Key {
                command,
                kind,
                key,
                value_bytes,
            } => (command.as_str(), *kind, key.as_str(), *value_bytes),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_command_becomes_its_operation_with_its_time_session_and_value_size() {
        let got = read(concat!(
            "OK\n",
            "1733612345.123456 [0 127.0.0.1:51234] \"SET\" \"user1\" \"hello\\x00\\\"x\"\n",
            "1733612345.200000 [0 127.0.0.1:51235] \"get\" \"user1\"\n",
            "1733612345.300000 [0 lua] \"SET\" \"inside\" \"script\"\n",
            "1733612346 [3 unix:/tmp/r.sock] \"MGET\" \"a\" \"b\"\n",
            "1733612346.5 [0 127.0.0.1:51234] \"AUTH\" \"secret\"\n",
            "1733612346.6 [0 127.0.0.1:51234] \"HSET\" \"h\" \"f1\" \"abc\" \"f2\" \"de\"\n",
            "1733612346.7 [0 127.0.0.1:51234] \"INCR\" \"n\"\n",
        ));
        let ok: Vec<Captured> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(ok.len(), 7, "{ok:?}");
        assert_eq!(ok[0].at_ns, 1_733_612_345_123_456_000);
        assert_eq!(ok[0].session, "127.0.0.1:51234");
        assert_eq!(key(&ok[0]), ("SET", OpKind::Update, "user1", 8));
        assert_eq!(key(&ok[1]), ("get", OpKind::Read, "user1", 0));
        assert_eq!(ok[1].request.command(), "GET");
        assert_eq!((key(&ok[2]).2, key(&ok[3]).2), ("a", "b"));
        assert_eq!(ok[2].session, "unix:/tmp/r.sock");
        assert_eq!(ok[2].at_ns, 1_733_612_346_000_000_000);
        // A password is never kept: only the command's name.
        assert_eq!(
            ok[4].request,
            Request::Other {
                command: "AUTH".into()
            }
        );
        assert_eq!(key(&ok[5]), ("HSET", OpKind::Update, "h", 5));
        assert_eq!(key(&ok[6]).1, OpKind::Increment);
    }

    #[test]
    fn a_line_cut_short_is_named_by_its_number() {
        let got = read("1.0 [0 a:1] \"GET\" \"k\"\n1.1 [0 a:1] \"SET\" \"k\" \"unfinis\n");
        assert!(got[0].is_ok());
        let e = got[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("not closed"), "{e}");
        let e = read("yesterday [0 a:1] \"GET\"\n")[0]
            .clone()
            .unwrap_err()
            .to_string();
        assert!(e.contains("`yesterday` is not a time"), "{e}");
    }
}
