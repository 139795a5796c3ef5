//! Captures whose times are whole seconds (MariaDB's general log, Twitter's cache traces): the
//! operations of one second are spread evenly over it, in their order, rather than all started
//! at its first instant (a burst the production traffic did not have). Only one second's
//! operations are held at a time.

use std::collections::VecDeque;

use crate::{CaptureError, Captured};

const SECOND_NS: i64 = 1_000_000_000;

/// `inner`'s operations, those of each second spread evenly over it.
pub struct Spread<I> {
    inner: I,
    /// A second's operations, spread, to be yielded.
    ready: VecDeque<Result<Captured, CaptureError>>,
    /// The first operation of the next second, read while looking for the end of this one.
    held: Option<Result<Captured, CaptureError>>,
}

impl<I: Iterator<Item = Result<Captured, CaptureError>>> Spread<I> {
    pub fn new(inner: I) -> Self {
        Spread {
            inner,
            ready: VecDeque::new(),
            held: None,
        }
    }

    /// Reads one second's operations (or one error) into `ready`.
    fn fill(&mut self) {
        let first = match self.held.take().or_else(|| self.inner.next()) {
            None => return,
            Some(Err(e)) => {
                self.ready.push_back(Err(e));
                return;
            }
            Some(Ok(c)) => c,
        };
        let second = first.at_ns;
        let mut group = vec![first];
        loop {
            match self.inner.next() {
                Some(Ok(c)) if c.at_ns == second => group.push(c),
                other => {
                    self.held = other;
                    break;
                }
            }
        }
        let n = group.len() as i64;
        for (i, mut c) in group.into_iter().enumerate() {
            c.at_ns = second + i as i64 * SECOND_NS / n;
            self.ready.push_back(Ok(c));
        }
    }
}

impl<I: Iterator<Item = Result<Captured, CaptureError>>> Iterator for Spread<I> {
    type Item = Result<Captured, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ready.is_empty() {
            self.fill();
        }
        self.ready.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;

    fn at(ns: i64) -> Result<Captured, CaptureError> {
        Ok(Captured {
            at_ns: ns,
            session: String::new(),
            request: Request::Other {
                command: "X".into(),
            },
        })
    }

    #[test]
    fn a_seconds_operations_are_spread_evenly_over_it_in_order() {
        let s = 7 * SECOND_NS;
        let input = vec![
            at(s),
            at(s),
            at(s),
            at(s),
            at(s + SECOND_NS),
            at(s + 3 * SECOND_NS),
            at(s + 3 * SECOND_NS),
        ];
        let got: Vec<i64> = Spread::new(input.into_iter())
            .map(|c| c.unwrap().at_ns - s)
            .collect();
        assert_eq!(
            got,
            [
                0,
                250_000_000,
                500_000_000,
                750_000_000,
                SECOND_NS,
                3 * SECOND_NS,
                3 * SECOND_NS + 500_000_000
            ]
        );
    }
}
