//! The child's side of `--clients N` on one machine (`scalebench client-process`): its order from
//! stdin, its clock measured against its launcher's, "ready" and the common start, its progress and
//! (watched) its timeline's points out, the openings of shared request sets, the end and the probe's
//! relayed events in ([`crate::local`] is the launcher's side).

use std::io::{BufRead, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use scalebench_exec::consistency::{ProbeEvent, ProbeRole};
use scalebench_exec::{
    Phase, ProgressState, Rendezvous, RendezvousError, SetGate, StopSignal, TimelineLog,
};
use scalebench_measure::result::ClockOffset;
use scalebench_measure::RunResult;

use crate::local::{unix_ns_now, ClientOrder, FromClient, ToClient};
use crate::outcome::ClientProgress;
use scalebench_session::error::SessionError;

/// The order's size at most: the request with its workload file (at most 4 MiB) and properties.
const MAX_ORDER_BYTES: u64 = 64 << 20;

/// A message from the launcher after the order (start, pong, probe event, ...) at most.
const MAX_MESSAGE_BYTES: u64 = 1 << 20;

/// The next line of `input` without its line break (None at its end); a line longer than `limit`
/// bytes is an error, read no further: the launcher's messages are small, and a stream that is not
/// theirs must not fill the memory.
fn bounded_line(input: &mut impl BufRead, limit: u64) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    let read = std::io::Read::take(&mut *input, limit + 1).read_line(&mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if line.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line of more than {limit} bytes"),
        ));
    }
    if line.ends_with('\n') {
        line.pop();
    }
    Ok(Some(line))
}

/// The child's side: reads its order from stdin, runs its share against the common start, writes
/// its result where the order says.
pub fn serve_client() -> Result<RunResult, SessionError> {
    let line = bounded_line(&mut std::io::stdin().lock(), MAX_ORDER_BYTES)
        .map_err(|e| SessionError::Failed(format!("cannot read the client's order: {e}")))?
        .unwrap_or_default();
    let order: ClientOrder = serde_json::from_str(&line)
        .map_err(|e| SessionError::Failed(format!("the client's order does not parse: {e}")))?;
    let request = order.request;
    let share = order.share;
    // Started by its launcher on this machine, which relays the probe's writer to the readers.
    let mut wiring = scalebench_session::wiring::RunWiring {
        launch: scalebench_session::wiring::Launch::UnderLauncherHere(share),
        ..Default::default()
    };
    // The URL came on stdin, not in argv: its password is hidden from this client's log lines too.
    if let Some(db) = &request.db {
        scalebench_session::logging::hide_url_password(db);
    }
    let gate = (order.watched && request.request_set.is_some()).then(SetGate::default);
    let probe = request.consistency_probe.is_some();
    let rendezvous = std::sync::Arc::new(StdioRendezvous::start(share.index, gate, probe));
    rendezvous.measure_clock();
    if order.watched {
        let to_launcher = rendezvous.out.clone();
        wiring.timeline_log = Some(TimelineLog::published(
            std::sync::Arc::new(move |index, point| {
                say(
                    &to_launcher,
                    &FromClient::Point {
                        index,
                        point: *point,
                    },
                )
            }),
            rendezvous.gate.clone(),
        ));
    }
    wiring.rendezvous = Some(rendezvous);
    let _metrics = crate::share::serve_client_metrics(&order.outputs, &mut wiring, share)?;
    let mut executed = scalebench_session::execute::execute(&request, &wiring, &[order.phase])?;
    executed.warn_unwritten();
    if let Some(dir) = order.outputs.hdr_log_of(share.index) {
        executed.write_hdr_logs(&dir)?;
    }
    executed
        .result
        .write_atomically(&order.output)
        .map_err(|e| SessionError::Failed(e.to_string()))?;
    Ok(executed.result)
}

/// Clock exchanges at a client's start: the one of least round trip is kept.
const CLOCK_EXCHANGES: usize = 8;

/// A child's rendezvous: "ready" on stdout, the start from stdin; its clock measured against the
/// launcher's; in a watched run, its points on stdout, and the openings of its sets and the end
/// from stdin; with the probe, client 0's writer's events out and the others' in.
#[derive(Debug)]
struct StdioRendezvous {
    index: u32,
    out: std::sync::Arc<Mutex<()>>,
    gate: Option<SetGate>,
    /// The start line (or the end of stdin), from the thread that reads stdin.
    start: Mutex<Receiver<Option<u64>>>,
    pongs: Mutex<Receiver<(u64, u64)>>,
    /// The run's stop, for the launcher's "finish".
    stop: std::sync::Arc<std::sync::OnceLock<StopSignal>>,
    clock: std::sync::OnceLock<ClockOffset>,
    /// The probe's writer's events (a reader client's), taken once by its probe.
    probe_events: Mutex<Option<Receiver<ProbeEvent>>>,
    probe: bool,
}

fn say(out: &Mutex<()>, what: &FromClient) {
    let _guard = out.lock().unwrap_or_else(|e| e.into_inner());
    let mut stdout = std::io::stdout().lock();
    let text = serde_json::to_string(what).expect("messages serialize");
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
}

impl StdioRendezvous {
    /// Starts reading stdin on a thread of its own (so a stop is seen while the launcher waits,
    /// and a ping is answered before the start).
    fn start(index: u32, gate: Option<SetGate>, probe: bool) -> StdioRendezvous {
        let (start_tx, start) = mpsc::channel();
        let (pong_tx, pongs) = mpsc::channel();
        let (probe_tx, probe_events) = mpsc::channel();
        let stop = std::sync::Arc::new(std::sync::OnceLock::<StopSignal>::new());
        let (thread_gate, thread_stop) = (gate.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            while let Ok(Some(line)) = bounded_line(&mut stdin, MAX_MESSAGE_BYTES) {
                match serde_json::from_str::<ToClient>(&line) {
                    Ok(ToClient::Start { unix_ns }) => {
                        let _ = start_tx.send(Some(unix_ns));
                    }
                    Ok(ToClient::Pong {
                        sent_ns,
                        launcher_ns,
                    }) => {
                        let _ = pong_tx.send((sent_ns, launcher_ns));
                    }
                    Ok(ToClient::Probe(event)) => {
                        let _ = probe_tx.send(event);
                    }
                    Ok(ToClient::OpenSet { set }) => {
                        if let Some(g) = &thread_gate {
                            g.open(set)
                        }
                    }
                    Ok(ToClient::Finish) => {
                        if let Some(stop) = thread_stop.get() {
                            stop.finish();
                        }
                    }
                    Err(_) => {}
                }
            }
            // The launcher went away.
            let _ = start_tx.send(None);
        });
        StdioRendezvous {
            index,
            out: Default::default(),
            gate,
            start: Mutex::new(start),
            pongs: Mutex::new(pongs),
            stop,
            clock: std::sync::OnceLock::new(),
            probe_events: Mutex::new(Some(probe_events)),
            probe,
        }
    }

    /// This clock against the launcher's, as NTP estimates it: of a few exchanges, the one of
    /// least round trip, offset ((t1 + t4) / 2 - the launcher's time), within half that round trip.
    fn measure_clock(&self) {
        let pongs = self.pongs.lock().unwrap_or_else(|e| e.into_inner());
        let mut best: Option<ClockOffset> = None;
        for _ in 0..CLOCK_EXCHANGES {
            let sent_ns = unix_ns_now();
            say(&self.out, &FromClient::Ping { sent_ns });
            let Ok((echo, launcher_ns)) = pongs.recv_timeout(Duration::from_secs(5)) else {
                break;
            };
            let back_ns = unix_ns_now();
            if echo != sent_ns {
                continue;
            }
            let round_trip = back_ns.saturating_sub(sent_ns);
            let offset_ns = ((sent_ns as i128 + back_ns as i128) / 2 - launcher_ns as i128) as i64;
            if best.is_none_or(|b| round_trip / 2 < b.uncertainty_ns) {
                best = Some(ClockOffset {
                    offset_ns,
                    uncertainty_ns: round_trip / 2,
                });
            }
        }
        if let Some(b) = best {
            let _ = self.clock.set(b);
        }
    }

    fn wait_for_start(&self, stop: &StopSignal) -> Result<SystemTime, String> {
        let _ = self.stop.set(stop.clone());
        say(&self.out, &FromClient::Ready);
        let start = self.start.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if stop.is_requested() {
                return Err("interrupted while waiting for the other clients".into());
            }
            match start.recv_timeout(Duration::from_millis(50)) {
                Ok(Some(unix_ns)) => return Ok(UNIX_EPOCH + Duration::from_nanos(unix_ns)),
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    return Err("the launcher went away before the start".into())
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

impl Rendezvous for StdioRendezvous {
    fn ready(&self, _phase: Phase, stop: &StopSignal) -> Result<SystemTime, RendezvousError> {
        self.wait_for_start(stop).map_err(RendezvousError::Failed)
    }

    fn progress(&self, state: &ProgressState) {
        say(&self.out, &FromClient::Progress(ClientProgress::of(state)));
    }

    fn clock(&self) -> Option<ClockOffset> {
        self.clock.get().copied()
    }

    fn probe_role(&self) -> Option<ProbeRole> {
        if !self.probe {
            return None;
        }
        let clock_offset_ns = self.clock.get().map_or(0, |c| c.offset_ns);
        if self.index == 0 {
            let out = self.out.clone();
            return Some(ProbeRole::Writer {
                tell: Some(std::sync::Arc::new(move |e: &ProbeEvent| {
                    say(&out, &FromClient::Probe(e.clone()))
                })),
                clock_offset_ns,
            });
        }
        let events = self
            .probe_events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        Some(ProbeRole::Reader {
            events,
            clock_offset_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::bounded_line;

    /// Issue 62, low 12: the order was read whole however long its line; a stream that is not the
    /// launcher's filled the memory.
    #[test]
    fn a_line_past_its_bound_is_refused_without_reading_on() {
        let text = format!("{{\"order\":1}}\n{}\nnext\n", "x".repeat(100));
        let mut input = std::io::Cursor::new(text.into_bytes());
        assert_eq!(
            bounded_line(&mut input, 64).unwrap().as_deref(),
            Some("{\"order\":1}")
        );
        let err = bounded_line(&mut input, 64).unwrap_err();
        assert!(err.to_string().contains("more than 64 bytes"), "{err}");
        assert!(input.position() <= 12 + 65, "read past the bound");
        let mut end = std::io::Cursor::new(Vec::new());
        assert_eq!(bounded_line(&mut end, 64).unwrap(), None);
    }
}
