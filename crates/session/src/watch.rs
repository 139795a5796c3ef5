//! `scalebench monitor`: this host's resources and named processes sampled until a duration passes,
//! Ctrl-C, or the reader of the stream hangs up. On a database host, an external deployment's
//! `[external.monitors]` command runs it with `--stream`, one sample per line (scalebench_monitor::stream).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scalebench_exec::StopSignal;
use scalebench_monitor::{Monitor, ResourceSeries, Sample, SampleSink, Target};

use crate::error::SessionError;
use crate::interrupt;

#[derive(Debug, Clone)]
pub struct WatchRequest {
    /// Processes to follow, by name and pid (with their descendants).
    pub processes: Vec<(String, u32)>,
    pub interval: Duration,
    /// None: until Ctrl-C (or the stream's reader hangs up).
    pub duration: Option<Duration>,
    /// The host's link capacity, bytes/s, for the network verdict.
    pub link_bytes_s: Option<f64>,
    /// Each sample written to standard output as it is taken, after a header line.
    pub stream: bool,
}

/// `scalebench monitor -o FILE`: the series watched, written to `output`; the line that says what
/// bounded them (None without an output: a streamed watch only prints).
pub fn watch_into(
    request: &WatchRequest,
    output: Option<&std::path::Path>,
) -> Result<Option<String>, SessionError> {
    crate::outputs::CommandFiles::new()
        .output("-o", output)
        .check()?;
    let series = watch(request)?;
    let Some(output) = output else {
        return Ok(None);
    };
    crate::files::write_json(output, &series)?;
    let v = scalebench_monitor::verdict(&series, "client", None);
    Ok(Some(format!(
        "{} samples written to {}; bounded by: {} ({})",
        series.samples.len(),
        output.display(),
        v.bounded_by,
        v.evidence
    )))
}

pub fn watch(request: &WatchRequest) -> Result<ResourceSeries, SessionError> {
    for (name, pid) in &request.processes {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(SessionError::Usage(format!(
                "no process {pid} (for '{name}') on this host"
            )));
        }
    }
    interrupt::install_handler();
    let stop = StopSignal::new();
    interrupt::register_stop(&stop);
    let targets = request
        .processes
        .iter()
        .map(|(name, pid)| Target {
            name: name.clone(),
            pid: *pid,
            parallelism: None,
        })
        .collect();
    // A closed stream (the collecting side hung up) ends the watch like Ctrl-C.
    let hung_up = Arc::new(AtomicBool::new(false));
    let sink = request.stream.then(|| stream_to_stdout(hung_up.clone()));
    let monitor = Monitor::start_with(targets, request.interval, sink, request.link_bytes_s);
    let started = Instant::now();
    while !stop.is_requested()
        && !hung_up.load(Ordering::Relaxed)
        && request.duration.is_none_or(|d| started.elapsed() < d)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(monitor.finish())
}

/// Writes the stream's header with the first sample, then one line per sample; a write that fails
/// sets `hung_up`.
fn stream_to_stdout(hung_up: Arc<AtomicBool>) -> SampleSink {
    let mut header_sent = false;
    Box::new(move |series: &ResourceSeries, sample: &Sample| {
        let mut out = std::io::stdout().lock();
        let mut text = String::new();
        if !std::mem::replace(&mut header_sent, true) {
            text = scalebench_monitor::stream::header_line(series) + "\n";
        }
        text += &(scalebench_monitor::stream::sample_line(sample) + "\n");
        let ok = out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .is_ok();
        if !ok {
            hung_up.store(true, Ordering::Relaxed);
        }
        ok
    })
}
