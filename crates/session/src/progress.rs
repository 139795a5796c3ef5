//! Live progress: a bar on a terminal, otherwise a status line every few seconds (like YCSB's `-s`)
//! so logs of long unattended runs show progress.

use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scalebench_exec::{Progress, ProgressState};

pub enum Display {
    Bar(ProgressBar),
    Lines { every: Duration, next: Instant },
    Silent,
}

impl Display {
    pub fn new(quiet: bool, status_interval: Duration) -> Self {
        use std::io::IsTerminal;
        if quiet {
            Display::Silent
        } else if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr_with_hz(4));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>6} [{bar:30.cyan/blue}] {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            Display::Bar(bar)
        } else {
            Display::Lines {
                every: status_interval,
                next: Instant::now() + status_interval,
            }
        }
    }
}

fn message(s: &ProgressState) -> String {
    let elapsed = s.elapsed.saturating_sub(s.warmup);
    let time = match (s.in_warmup(), s.duration) {
        (true, _) => format!("warm-up {}s / {}s", s.elapsed.as_secs(), s.warmup.as_secs()),
        (false, Some(d)) => format!(
            "{}s elapsed, {}s remaining",
            elapsed.as_secs(),
            d.saturating_sub(elapsed).as_secs()
        ),
        (false, None) => format!("{}s elapsed", elapsed.as_secs()),
    };
    format!(
        "{time} | {} ok | {:.0} ops/s | p99 {:.0} us | {} errors",
        s.live.ok, s.live.current_ops_s, s.live.current_p99_us, s.live.failed
    )
}

impl Progress for Display {
    fn update(&mut self, s: &ProgressState) {
        match self {
            Display::Bar(bar) => {
                let fraction = match (s.in_warmup(), s.duration, s.expected_ops) {
                    (true, _, _) => s.elapsed.as_secs_f64() / s.warmup.as_secs_f64().max(1e-9),
                    (false, Some(d), _) => (s.elapsed - s.warmup).as_secs_f64() / d.as_secs_f64(),
                    (false, None, Some(n)) if n > 0 => s.live.ok as f64 / n as f64,
                    _ => 0.0,
                };
                bar.set_prefix(if s.in_warmup() {
                    "warmup".to_string()
                } else {
                    s.phase.to_string()
                });
                bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
                bar.set_message(message(s));
            }
            Display::Lines { every, next } => {
                let now = Instant::now();
                if now >= *next {
                    *next += *every;
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{} {}", s.phase, message(s));
                }
            }
            Display::Silent => {}
        }
    }

    fn finish(&mut self) {
        if let Display::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }

    fn checking_writes(&mut self, keys: usize, limit: Duration) {
        if !matches!(self, Display::Silent) {
            crate::note!(
                "checking {keys} written keys (at most {}; Ctrl-C ends the check)",
                humantime::format_duration(limit)
            );
        }
    }
}
