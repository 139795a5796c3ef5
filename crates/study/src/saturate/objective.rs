//! What a rate search's steps must meet: the latency objectives and the error rate, in words for the
//! result.

use std::time::Duration;

/// What a rate search's steps must meet.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Objective {
    pub p99: Option<Duration>,
    pub p999: Option<Duration>,
    /// Failed over completed operations, 0..=1.
    pub max_error_rate: Option<f64>,
}

impl Objective {
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.p99 {
            parts.push(format!("p99 <= {}", humantime::format_duration(d)));
        }
        if let Some(d) = self.p999 {
            parts.push(format!("p99.9 <= {}", humantime::format_duration(d)));
        }
        if let Some(e) = self.max_error_rate {
            parts.push(format!("error rate <= {}%", e * 100.0));
        }
        parts.push("kept up (95% of the offered rate) and stationary".into());
        parts.join(", ")
    }

    pub(super) fn has_latency(&self) -> bool {
        self.p99.is_some() || self.p999.is_some()
    }
}
