//! A capture's lines bounded in length: a file with no line end for gigabytes (a binary file, a
//! capture cut inside a huge value, a sparse file's hole) is not read into memory. The first line
//! past the bound is an error, and the capture ends there: it is refused, not skipped through.

use std::io::{self, Read};

/// The longest line (a record, for CSV) a capture may have: a statement of many rows, a large
/// value, with room to spare.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// `inner`, ending in an error at the first line longer than `max` bytes (and reading as ended
/// after it).
pub(crate) struct LineLimit<R> {
    inner: R,
    max: u64,
    /// Bytes read since the last line end.
    since_line_end: u64,
    exceeded: bool,
}

impl<R> LineLimit<R> {
    pub(crate) fn new(inner: R, max: u64) -> Self {
        LineLimit {
            inner,
            max,
            since_line_end: 0,
            exceeded: false,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.exceeded {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        let read = &buf[..n];
        // Only the run before the first line end can be longer than this read.
        let run = match read.iter().position(|&b| b == b'\n') {
            Some(first) => self.since_line_end + first as u64,
            None => self.since_line_end + n as u64,
        };
        if run > self.max {
            self.exceeded = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a line longer than {} MiB (no capture's line is: a binary file, or one cut inside a value?)",
                    self.max >> 20
                ),
            ));
        }
        self.since_line_end = match read.iter().rposition(|&b| b == b'\n') {
            Some(last) => (n - 1 - last) as u64,
            None => run,
        };
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    #[test]
    fn a_line_past_the_bound_ends_the_input_with_an_error() {
        let text = format!("short\n{}\nnever read\n", "x".repeat(100));
        let mut lines =
            io::BufReader::with_capacity(16, LineLimit::new(text.as_bytes(), 50)).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "short");
        let e = lines.next().unwrap().unwrap_err();
        assert!(e.to_string().contains("a line longer than"), "{e}");
        assert!(lines.next().is_none(), "nothing after the error");
        // Lines up to the bound, whatever the reads' sizes, pass whole.
        let ok = format!("{}\n{}\n", "y".repeat(50), "z".repeat(50));
        let read: Vec<String> = io::BufReader::with_capacity(7, LineLimit::new(ok.as_bytes(), 50))
            .lines()
            .map(|l| l.unwrap())
            .collect();
        assert_eq!(read, ["y".repeat(50), "z".repeat(50)]);
    }
}
