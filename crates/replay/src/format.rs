//! Which format a capture is in (given, or recognised from its first line), and its reader.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::cache_trace::{JsonLinesReader, TwitterReader};
use crate::limit::{LineLimit, MAX_LINE_BYTES};
use crate::mysql_general::{GeneralLogReader, Resolution};
use crate::postgres_csvlog::CsvlogReader;
use crate::redis_monitor::MonitorReader;
use crate::spread::Spread;
use crate::{CaptureError, Captured};

/// The capture formats read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaptureFormat {
    /// Redis's `MONITOR` output.
    RedisMonitor,
    /// PostgreSQL's csvlog with every statement logged.
    PostgresCsvlog,
    /// The MySQL or MariaDB general query log.
    GeneralLog,
    /// Twitter's cache-trace CSV.
    TwitterCacheTrace,
    /// JSON Lines of (time, session, op, key, value_size).
    Jsonl,
}

impl CaptureFormat {
    pub const ALL: [CaptureFormat; 5] = [
        CaptureFormat::RedisMonitor,
        CaptureFormat::PostgresCsvlog,
        CaptureFormat::GeneralLog,
        CaptureFormat::TwitterCacheTrace,
        CaptureFormat::Jsonl,
    ];

    /// The name a command line gives it.
    pub fn name(self) -> &'static str {
        match self {
            CaptureFormat::RedisMonitor => "redis-monitor",
            CaptureFormat::PostgresCsvlog => "postgres-csvlog",
            CaptureFormat::GeneralLog => "general-log",
            CaptureFormat::TwitterCacheTrace => "twitter-cache-trace",
            CaptureFormat::Jsonl => "jsonl",
        }
    }

    /// A database's log, whose operations are statements (run as written on its kind).
    pub fn has_statements(self) -> bool {
        matches!(
            self,
            CaptureFormat::PostgresCsvlog | CaptureFormat::GeneralLog
        )
    }

    /// The format named `name`, or one line naming those there are.
    pub fn parse(name: &str) -> Result<CaptureFormat, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown capture format `{name}`: expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// The format the start of a file is in, if it is one of these.
    pub fn recognise(head: &str) -> Option<CaptureFormat> {
        let first = head.lines().find(|l| !l.trim().is_empty())?.trim_end();
        let starts_with_number = |l: &str| {
            l.split([' ', ','])
                .next()
                .is_some_and(|t| t.parse::<f64>().is_ok())
        };
        if first == "OK" || (starts_with_number(first) && first.contains(" [")) {
            return Some(CaptureFormat::RedisMonitor);
        }
        if first.starts_with('{') {
            return Some(CaptureFormat::Jsonl);
        }
        if crate::mysql_general::looks_like(head) {
            return Some(CaptureFormat::GeneralLog);
        }
        let is_date =
            |f: &str| f.len() >= 19 && f.as_bytes()[4] == b'-' && f.as_bytes()[10] == b' ';
        if first.split(',').next().is_some_and(is_date) && first.split(',').count() >= 23 {
            return Some(CaptureFormat::PostgresCsvlog);
        }
        if starts_with_number(first) && first.split(',').count() == 7 {
            return Some(CaptureFormat::TwitterCacheTrace);
        }
        None
    }
}

/// A capture being read: its format and its operations, in order.
pub struct Capture {
    pub format: CaptureFormat,
    /// Whether its times were whole seconds, spread over each second.
    pub spread_over_seconds: bool,
    pub operations: Box<dyn Iterator<Item = Result<Captured, CaptureError>> + Send>,
}

/// Opens the capture at `path` in `format` (recognised from its first line when not given).
pub fn open(path: &Path, format: Option<CaptureFormat>) -> Result<Capture, CaptureError> {
    let file_error = |reason: String| CaptureError::File {
        path: path.display().to_string(),
        reason,
    };
    // Before it is opened: opening a FIFO to read waits for a writer.
    if !std::fs::metadata(path)
        .map_err(|e| file_error(e.to_string()))?
        .is_file()
    {
        return Err(file_error(
            "not a regular file (a FIFO or a device is not read: a replay reads its capture twice)"
                .into(),
        ));
    }
    let file = File::open(path).map_err(|e| file_error(e.to_string()))?;
    let file = LineLimit::new(file, MAX_LINE_BYTES);
    let mut input = BufReader::with_capacity(1 << 16, file);
    let head = String::from_utf8_lossy(input.fill_buf().map_err(|e| file_error(e.to_string()))?)
        .into_owned();
    let format = match format {
        Some(f) => f,
        None => CaptureFormat::recognise(&head).ok_or_else(|| {
            file_error(
                "its first line is of no capture format read here: give --capture-format (redis-monitor, \
                 postgres-csvlog, general-log, twitter-cache-trace, jsonl)"
                    .into(),
            )
        })?,
    };
    let (operations, spread_over_seconds): (Box<dyn Iterator<Item = _> + Send>, bool) = match format
    {
        CaptureFormat::RedisMonitor => (Box::new(MonitorReader::new(input)), false),
        CaptureFormat::PostgresCsvlog => (Box::new(CsvlogReader::new(input)), false),
        CaptureFormat::GeneralLog => {
            let reader = GeneralLogReader::new(input);
            match crate::mysql_general::resolution_of(&head) {
                Some(Resolution::Seconds) => (Box::new(Spread::new(reader)), true),
                _ => (Box::new(reader), false),
            }
        }
        CaptureFormat::TwitterCacheTrace => {
            (Box::new(Spread::new(TwitterReader::new(input))), true)
        }
        CaptureFormat::Jsonl => (Box::new(JsonLinesReader::new(input)), false),
    };
    Ok(Capture {
        format,
        spread_over_seconds,
        operations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_recognised_from_its_first_line() {
        let cases = [
            ("OK\n1.5 [0 127.0.0.1:1] \"GET\" \"k\"\n", CaptureFormat::RedisMonitor),
            ("1733612345.123456 [0 127.0.0.1:1] \"GET\" \"k\"\n", CaptureFormat::RedisMonitor),
            ("{\"time\": 0, \"op\": \"get\", \"key\": \"k\"}\n", CaptureFormat::Jsonl),
            ("/usr/sbin/mariadbd, Version: 10.11.6-MariaDB started with:\n", CaptureFormat::GeneralLog),
            ("2026-12-07T21:00:00.1Z\t    8 Query\tSELECT 1\n", CaptureFormat::GeneralLog),
            (
                "2026-12-07 21:00:00.123 UTC,\"u\",\"d\",1,\"h:1\",a.1,1,\"\",2026-12-07 21:00:00 UTC,1/1,0,LOG,00000,\"statement: SELECT 1\",,,,,,,,,\"psql\",\"client backend\",,0\n",
                CaptureFormat::PostgresCsvlog,
            ),
            ("0,key,3,100,1,get,0\n", CaptureFormat::TwitterCacheTrace),
        ];
        for (head, format) in cases {
            assert_eq!(CaptureFormat::recognise(head), Some(format), "{head}");
        }
        assert_eq!(CaptureFormat::recognise("hello\n"), None);
        for f in CaptureFormat::ALL {
            assert_eq!(CaptureFormat::parse(f.name()), Ok(f));
        }
        assert!(CaptureFormat::parse("pcap")
            .unwrap_err()
            .contains("expected one of redis-monitor"));
    }
}
