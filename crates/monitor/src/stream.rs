//! Series from other hosts. `scalebench monitor --stream` prints a series as JSON lines: first a
//! header (the series without samples), then one line per sample as it is taken. A
//! [`RemoteMonitor`] runs such a command (typically through ssh on a database host), reads its lines
//! while a phase runs, and stops it when the phase ends; the samples read so far are the series.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::{BoundedSeries, ResourceSeries, Sample};

/// The header line of a stream: the series' metadata, no samples.
pub fn header_line(series: &ResourceSeries) -> String {
    let header = ResourceSeries {
        samples: Vec::new(),
        ..series.clone()
    };
    serde_json::to_string(&header).expect("a series serialises")
}

pub fn sample_line(sample: &Sample) -> String {
    serde_json::to_string(sample).expect("a sample serialises")
}

/// Adds one line of a stream to `series` (the header when `series` is `None`).
fn add_line(series: &mut Option<BoundedSeries>, line: &str, number: usize) -> Result<(), String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(());
    }
    match series {
        None => {
            let header: ResourceSeries = serde_json::from_str(line)
                .map_err(|e| format!("line {number} is not a monitor header: {e}"))?;
            *series = Some(BoundedSeries::new(header));
        }
        Some(s) => s.push(
            serde_json::from_str(line)
                .map_err(|e| format!("line {number} is not a monitor sample: {e}"))?,
        ),
    }
    Ok(())
}

/// Reads a whole stream. An empty stream is an error; a cut-off last line is ignored.
pub fn read_stream(reader: impl BufRead) -> Result<ResourceSeries, String> {
    let mut series = None;
    let mut lines = reader.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let line = line.map_err(|e| e.to_string())?;
        if let Err(e) = add_line(&mut series, &line, i + 1) {
            // The producer may be stopped in the middle of its last line.
            if lines.peek().is_none() && series.is_some() {
                break;
            }
            return Err(e);
        }
    }
    series
        .map(BoundedSeries::finish)
        .ok_or_else(|| "no output".to_string())
}

/// The series of one other host, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteResources {
    /// The name the deployment gives the host.
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<ResourceSeries>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A running `scalebench monitor --stream` command (local shell, usually `ssh host ...`).
pub struct RemoteMonitor {
    host: String,
    child: Child,
    state: Arc<Mutex<(Option<BoundedSeries>, Option<String>)>>,
    reader: std::thread::JoinHandle<()>,
}

impl RemoteMonitor {
    /// Starts `command` with `sh -c` in its own process group, from `dir`.
    pub fn spawn(host: &str, command: &str, dir: Option<&Path>) -> std::io::Result<RemoteMonitor> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let state = Arc::new(Mutex::new((None, None)));
        let shared = state.clone();
        let reader = std::thread::Builder::new()
            .name(format!("monitor-{host}"))
            .spawn(move || {
                for (i, line) in BufReader::new(stdout).lines().enumerate() {
                    let Ok(line) = line else { break };
                    let mut st = shared.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = add_line(&mut st.0, &line, i + 1) {
                        st.1.get_or_insert(e);
                    }
                }
            })?;
        Ok(RemoteMonitor {
            host: host.to_string(),
            child,
            state,
            reader,
        })
    }

    /// Stops the command (its whole process group) and returns what it sent.
    pub fn finish(mut self) -> RemoteResources {
        let exited_early = matches!(self.child.try_wait(), Ok(Some(_)));
        // The whole process group (the command leads it), if any of it is left.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let status = self.child.wait().ok();
        let _ = self.reader.join();
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut stderr);
        }
        let (series, mut error) =
            std::mem::take(&mut *self.state.lock().unwrap_or_else(|e| e.into_inner()));
        if series.is_none() && error.is_none() {
            error = Some(match (exited_early, status) {
                (true, Some(s)) => format!(
                    "monitor command ended ({s}) before the phase did: {}",
                    stderr.trim().lines().last().unwrap_or("no output")
                ),
                _ => "monitor command sent nothing".to_string(),
            });
        }
        RemoteResources {
            host: self.host,
            series: series.map(BoundedSeries::finish),
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostSample, Target};

    fn series() -> ResourceSeries {
        ResourceSeries {
            start_unix_ms: 1_000,
            interval_s: 1.0,
            cores: 4,
            mem_total_bytes: 8 << 30,
            link_bytes_s: Some(1.25e9),
            targets: vec![Target {
                name: "db".into(),
                pid: 7,
                parallelism: None,
            }],
            samples: vec![
                Sample {
                    t_s: 1.0,
                    host: HostSample {
                        cpu_user: 0.5,
                        ..Default::default()
                    },
                    processes: vec![],
                },
                Sample {
                    t_s: 2.0,
                    ..Default::default()
                },
            ],
        }
    }

    #[test]
    fn a_stream_reads_back_as_the_series() {
        let s = series();
        let mut text = header_line(&s) + "\n";
        for sample in &s.samples {
            text += &(sample_line(sample) + "\n");
        }
        assert_eq!(read_stream(text.as_bytes()).unwrap(), s);
        // Stopped in the middle of a line: the complete lines count.
        let cut = format!("{text}{{\"t_s\":3.0,\"ho");
        assert_eq!(read_stream(cut.as_bytes()).unwrap(), s);
        assert!(read_stream("".as_bytes())
            .unwrap_err()
            .contains("no output"));
        assert!(read_stream("garbage\n{}\n".as_bytes())
            .unwrap_err()
            .contains("line 1"));
    }

    #[test]
    fn a_remote_command_is_read_while_it_runs_and_stopped() {
        let s = series();
        let script = format!(
            "echo '{}'; echo '{}'; echo '{}'; exec sleep 30",
            header_line(&s),
            sample_line(&s.samples[0]),
            sample_line(&s.samples[1])
        );
        let m = RemoteMonitor::spawn("db1", &script, None).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let started = std::time::Instant::now();
        let r = m.finish();
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(r.host, "db1");
        assert_eq!(r.series, Some(s), "{:?}", r.error);

        let failing =
            RemoteMonitor::spawn("db2", "echo 'no such host' >&2; exit 255", None).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let r = failing.finish();
        assert!(r.series.is_none());
        assert!(r.error.unwrap().contains("no such host"));
    }
}
