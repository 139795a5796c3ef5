//! `--metrics-listen ADDR:PORT`: the live figures of a run (or of every run of an experiment) as
//! OpenMetrics text at `http://ADDR:PORT/metrics`, for Prometheus and Grafana (dashboard:
//! docs/grafana-dashboard.json). The executor's progress updates (about once a second) replace a
//! snapshot; each scrape encodes the newest snapshot with prometheus-client.
//!
//! hyper serves it on a runtime of its own (one thread), so the endpoint never touches the run:
//! at most [`MAX_CONNECTIONS`] connections at a time, each must send its request headers within
//! [`HEADER_TIMEOUT`] and is closed after [`CONNECTION_LIFETIME`], so idle or half-sent connections
//! cost neither threads nor descriptors beyond that bound. A new connection beyond the bound takes
//! the place of the oldest one that has not sent a whole request yet (else of the oldest idle one):
//! connections that send half a request and reconnect cannot keep a scraper out.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use scalebench_exec::{Progress, ProgressState};
use scalebench_measure::LiveStatus;

use crate::error::SessionError;

/// Connections served at once; a scraper needs one.
pub const MAX_CONNECTIONS: usize = 64;
/// A connection must have sent a request's headers this soon after it opened or answered.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// No connection lives longer (a scraper reconnects; a slow reader does not hold a slot).
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// What the last progress update said, and where the run is.
#[derive(Debug, Default, Clone)]
struct Snapshot {
    phase: Option<scalebench_exec::Phase>,
    warmup: bool,
    /// The experiment's current cell and repetition.
    cell: Option<String>,
    live: Option<LiveStatus>,
    /// The consistency probe's running counts, while a run phase has one.
    probe: Option<Arc<scalebench_measure::consistency::LiveProbe>>,
    /// A client of a distributed run: its index, a `client` label on every series.
    client: Option<u32>,
}

/// The HTTP endpoint; serving stops when it is dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    snapshot: Arc<Mutex<Snapshot>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` (port 0: a free one; see [`MetricsServer::addr`]).
    pub fn start(addr: SocketAddr) -> Result<Self, SessionError> {
        let cannot = |e: std::io::Error| {
            SessionError::Usage(format!(
                "invalid value '{addr}' for '--metrics-listen': cannot listen there ({e})"
            ))
        };
        let listener = std::net::TcpListener::bind(addr).map_err(cannot)?;
        listener.set_nonblocking(true).map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        let (shutdown, stopped) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SessionError::Failed(format!("cannot start the metrics endpoint: {e}")))?;
        let thread = {
            let snapshot = Arc::clone(&snapshot);
            std::thread::Builder::new()
                .name("scalebench-metrics".into())
                .spawn(move || runtime.block_on(serve(listener, snapshot, stopped)))
                .map_err(|e| {
                    SessionError::Failed(format!("cannot start the metrics endpoint: {e}"))
                })?
        };
        Ok(MetricsServer {
            addr,
            snapshot,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// This endpoint is client `index`'s of a distributed run: every series says so.
    pub fn set_client(&self, index: u32) {
        self.lock().client = Some(index);
    }

    /// The experiment's cell now running (None between runs).
    pub fn set_cell(&self, cell: Option<String>) {
        let mut s = self.lock();
        s.cell = cell;
        s.phase = None;
        s.live = None;
        s.probe = None;
    }

    fn publish(&self, state: &ProgressState) {
        let mut s = self.lock();
        s.phase = Some(state.phase);
        s.warmup = state.in_warmup();
        s.live = Some(state.live.clone());
    }

    /// The phase is over: `running` goes; its last figures stay until the next phase.
    fn phase_ended(&self) {
        self.lock().phase = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accepts connections until `stopped`; each is served by hyper within the bounds above. An error
/// of the endpoint (a failed accept, a client that misbehaves) ends that connection, never the run.
async fn serve(
    listener: std::net::TcpListener,
    snapshot: Arc<Mutex<Snapshot>>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let open = Arc::new(Mutex::new(OpenConnections::default()));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stopped => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of descriptors or the like: wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let snapshot = Arc::clone(&snapshot);
        let served = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let marks = Arc::clone(&served);
        let registry = Arc::clone(&open);
        let id = open.lock().unwrap_or_else(|e| e.into_inner()).next_id();
        let task = tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let snapshot = Arc::clone(&snapshot);
                let marks = Arc::clone(&marks);
                async move {
                    marks.store(true, std::sync::atomic::Ordering::Relaxed);
                    Ok::<_, Infallible>(respond(&request, &snapshot))
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
            registry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(id);
        });
        // The runtime has one thread and nothing is awaited since the spawn: the task cannot have
        // run (and removed itself) before it is admitted here.
        open.lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(id, served, task.abort_handle());
        // Lets the connection just admitted read a request already in its socket before the next
        // accept: without it a burst of reconnecting half-sent requests is accepted back to back and
        // a scraper's connection can be replaced before hyper has read its (whole) request (issue 62).
        tokio::task::yield_now().await;
    }
}

/// The connections being served, oldest first, each with whether it has sent a whole request.
#[derive(Default)]
struct OpenConnections {
    last_id: u64,
    open: Vec<(
        u64,
        Arc<std::sync::atomic::AtomicBool>,
        tokio::task::AbortHandle,
    )>,
}

impl OpenConnections {
    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// Takes connection `id`; beyond [`MAX_CONNECTIONS`] it replaces the oldest that never sent a
    /// whole request, else the oldest.
    fn admit(
        &mut self,
        id: u64,
        served: Arc<std::sync::atomic::AtomicBool>,
        abort: tokio::task::AbortHandle,
    ) {
        while self.open.len() >= MAX_CONNECTIONS {
            let victim = self
                .open
                .iter()
                .position(|(_, s, _)| !s.load(std::sync::atomic::Ordering::Relaxed))
                .unwrap_or(0);
            let (_, _, handle) = self.open.remove(victim);
            handle.abort();
        }
        // A connection that already ended (it removed nothing yet) is not kept.
        if !abort.is_finished() {
            self.open.push((id, served, abort));
        }
    }

    fn remove(&mut self, id: u64) {
        self.open.retain(|(i, _, _)| *i != id);
    }
}

/// `GET /metrics` (any query) answers the exposition; other methods 405, other paths 404.
fn respond(
    request: &Request<hyper::body::Incoming>,
    snapshot: &Mutex<Snapshot>,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, content_type: &str, body: String| {
        Response::builder()
            .status(status)
            .header(hyper::header::CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from(body)))
            .expect("a valid response")
    };
    if request.uri().path() != "/metrics" {
        return reply(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "scalebench serves /metrics\n".into(),
        );
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "GET or HEAD\n".into(),
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    let s = snapshot.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let accept = request
        .headers()
        .get(hyper::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let openmetrics = exposition(&s);
    if asks_for_openmetrics(accept) {
        reply(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            openmetrics,
        )
    } else {
        reply(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            prometheus_text(&openmetrics),
        )
    }
}

/// Whether an Accept header asks for OpenMetrics (Prometheus' scrapes do, preferring it); anything
/// else (curl, `promtool check metrics`, a browser) gets Prometheus' text format.
fn asks_for_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            media.eq_ignore_ascii_case("application/openmetrics-text") && !refused
        })
    })
}

/// Prometheus' text format 0.0.4 from the OpenMetrics text of the same registry: a counter's family
/// is named with its `_total`, as its samples are; no `# UNIT` or `# EOF` lines.
fn prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut text = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let family = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let name = rest.split(' ').next()?;
            counters
                .contains(name)
                .then(|| format!("{p}{name}_total{}", &rest[name.len()..]))
        });
        text.push_str(family.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

type Labels = Vec<(&'static str, String)>;

/// A fresh registry from the snapshot, encoded: label sets are exactly the current ones.
fn exposition(s: &Snapshot) -> String {
    let mut registry = match s.client {
        // Summed over clients by the dashboard, told apart by this label.
        Some(i) => Registry::with_prefix_and_labels(
            "scalebench",
            [("client".into(), i.to_string().into())].into_iter(),
        ),
        None => Registry::with_prefix("scalebench"),
    };
    let running = Family::<Labels, Gauge>::default();
    registry.register(
        "running",
        "1 while a phase runs (labels: phase, warm-up, experiment cell)",
        running.clone(),
    );
    let ok = Family::<Labels, Counter>::default();
    registry.register(
        "operations",
        "Successful measured operations of the phase",
        ok.clone(),
    );
    let errors = Family::<Labels, Counter>::default();
    registry.register(
        "errors",
        "Failed measured operations of the phase, by failure class",
        errors.clone(),
    );
    let rate = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    registry.register(
        "throughput_ops_per_second",
        "Successful operations per second in the last complete interval",
        rate.clone(),
    );
    let latency = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    registry.register(
        "latency_seconds",
        "Latency percentiles of the last complete interval: service time, and in an open loop from the intended start",
        latency.clone(),
    );
    // The consistency probe's counts, when the phase has one (docs/consistency.md).
    if let Some(p) = &s.probe {
        use std::sync::atomic::Ordering::Relaxed;
        for (name, help, n) in [
            ("probe_writes", "Acknowledged writes of the consistency probe", &p.writes),
            ("probe_reads", "Completed reads of the consistency probe", &p.reads),
            (
                "probe_stale_reads",
                "Probe reads that returned an older version than the newest acknowledged when they began",
                &p.stale_reads,
            ),
        ] {
            let counter = Counter::<u64>::default();
            counter.inc_by(n.load(Relaxed));
            registry.register(name, help, counter);
        }
    }
    let in_flight = Gauge::<i64>::default();
    registry.register(
        "in_flight",
        "Measured operations started and not completed",
        in_flight.clone(),
    );
    if let Some(phase) = s.phase {
        let mut labels: Labels = vec![
            ("phase", phase.to_string()),
            ("warmup", s.warmup.to_string()),
        ];
        if let Some(cell) = &s.cell {
            labels.push(("cell", cell.clone()));
        }
        running.get_or_create(&labels).set(1);
    }
    if let Some(live) = &s.live {
        in_flight.set(live.in_flight.min(i64::MAX as u64) as i64);
        for (op, o) in &live.operations {
            let by_op: Labels = vec![("operation", op.clone())];
            ok.get_or_create(&by_op).inc_by(o.ok);
            // Every class from the start, at 0 until it fails: a clean run's errors are a series
            // of zeros (a dashboard shows 0), not no data.
            for class in scalebench_workload::FailureClass::ALL.map(|c| c.name()) {
                let labels: Labels = vec![("operation", op.clone()), ("class", class.to_string())];
                let _ = errors.get_or_create(&labels);
            }
            for (class, n) in &o.failed_by_class {
                let labels: Labels = vec![("operation", op.clone()), ("class", class.clone())];
                errors.get_or_create(&labels).inc_by(*n);
            }
            let Some(last) = &o.last_interval else {
                continue;
            };
            rate.get_or_create(&by_op).set(clean(last.ops_s, 1e3));
            // `percentile`, not `quantile`: Prometheus reserves that label for summaries.
            let percentile = |from: &str, p: &str, us: f64| {
                let labels: Labels = vec![
                    ("operation", op.clone()),
                    ("from", from.to_string()),
                    ("percentile", p.to_string()),
                ];
                latency.get_or_create(&labels).set(clean(us / 1e6, 1e9));
            };
            if last.ok > 0 {
                for (p, us) in [
                    ("50", last.p50_us),
                    ("90", last.p90_us),
                    ("99", last.p99_us),
                    ("99.9", last.p99_9_us),
                ] {
                    percentile("service", p, us);
                }
            }
            if let Some(intended) = o.intended_us {
                for (p, us) in ["50", "90", "99", "99.9"].into_iter().zip(intended) {
                    percentile("intended", p, us);
                }
            }
        }
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}

/// `v` rounded to `1 / per` (a nanosecond of seconds, a thousandth of an operation a second): an
/// integer divided once is the f64 nearest the decimal, which prints as that decimal
/// (`0.000019135`, not `19.135 / 1e6`'s `0.000019135000000000003`).
fn clean(v: f64, per: f64) -> f64 {
    (v * per).round() / per
}

/// Serves `addr` for as long as the returned guard lives, announcing where on stderr (with a
/// warning when other machines can reach it).
pub fn serve_while(addr: SocketAddr) -> Result<MetricsGuard, SessionError> {
    let server = Arc::new(MetricsServer::start(addr)?);
    crate::note!("metrics: http://{}/metrics", server.addr());
    if let Some(w) = exposure_warning(addr) {
        crate::note!("{w}");
    }
    Ok(MetricsGuard(server))
}

/// A warning when `addr` is reachable from other machines (not a loopback address).
fn exposure_warning(addr: SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "warning: the metrics endpoint listens on {}, which other machines can reach: anyone there can read this run's figures (127.0.0.1 keeps it on this machine)",
            addr.ip()
        )
    })
}

/// The endpoint a command serves; it stops serving when the guard is dropped.
pub struct MetricsGuard(Arc<MetricsServer>);

impl MetricsGuard {
    pub fn server(&self) -> &MetricsServer {
        &self.0
    }

    /// What a run's request carries so that its phases publish here.
    pub fn publisher(&self) -> Publisher {
        Publisher(Arc::clone(&self.0))
    }
}

/// Where a run's phases publish their live figures (a value in the run's request, not a global).
#[derive(Clone)]
pub struct Publisher(Arc<MetricsServer>);

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Publisher(http://{}/metrics)", self.0.addr())
    }
}

impl Publisher {
    /// The consistency probe of the phase starting now: its counts are served as they change.
    pub fn watch_probe(&self, probe: Arc<scalebench_measure::consistency::LiveProbe>) {
        self.0.lock().probe = Some(probe);
    }
}

/// The metrics endpoint as an observer of a phase (when the run has one): each update published.
pub struct Published {
    server: Option<Arc<MetricsServer>>,
}

impl Published {
    pub fn new(publisher: Option<&Publisher>) -> Self {
        Published {
            server: publisher.map(|p| Arc::clone(&p.0)),
        }
    }
}

impl Progress for Published {
    fn update(&mut self, state: &ProgressState) {
        if let Some(s) = &self.server {
            s.publish(state);
        }
    }

    fn finish(&mut self) {
        if let Some(s) = &self.server {
            s.phase_ended();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures print as the decimals they are, without a division's float noise.
    #[test]
    fn figures_print_without_float_noise() {
        assert_ne!(format!("{}", 19.135 / 1e6), "0.000019135");
        assert_eq!(format!("{}", clean(19.135 / 1e6, 1e9)), "0.000019135");
        assert_eq!(format!("{}", clean(1234.5600000001, 1e3)), "1234.56");
    }
    use scalebench_measure::result::IntervalOp;
    use scalebench_measure::LiveOperation;

    #[test]
    fn only_a_loopback_endpoint_goes_unwarned() {
        for (addr, warned) in [
            ("127.0.0.1:9464", false),
            ("127.0.0.2:9464", false),
            ("[::1]:9464", false),
            ("0.0.0.0:9464", true),
            ("10.1.2.3:9464", true),
            ("[::]:9464", true),
        ] {
            let w = exposure_warning(addr.parse().unwrap());
            assert_eq!(w.is_some(), warned, "{addr}: {w:?}");
        }
    }

    #[test]
    fn the_exposition_has_each_figure_with_its_labels() {
        let mut live = LiveStatus {
            in_flight: 7,
            ..Default::default()
        };
        live.operations.insert(
            "READ".into(),
            LiveOperation {
                ok: 1200,
                failed_by_class: [("timeout".to_string(), 3)].into(),
                intended_us: Some([1000.0, 2000.0, 4000.0, 8000.0]),
                last_interval: Some(IntervalOp {
                    ok: 100,
                    ops_s: 100.0,
                    p50_us: 500.0,
                    p90_us: 900.0,
                    p99_us: 2000.0,
                    p99_9_us: 3000.0,
                    ..Default::default()
                }),
            },
        );
        let text = exposition(&Snapshot {
            phase: Some(scalebench_exec::Phase::Run),
            warmup: false,
            cell: Some("pg/a/threads=2 #1".into()),
            live: Some(live.clone()),
            probe: Some(Arc::new(scalebench_measure::consistency::LiveProbe {
                writes: 40.into(),
                reads: 90.into(),
                stale_reads: 4.into(),
            })),
            client: None,
        });
        for line in [
            r#"scalebench_running{phase="run",warmup="false",cell="pg/a/threads=2 #1"} 1"#,
            r#"scalebench_operations_total{operation="READ"} 1200"#,
            r#"scalebench_errors_total{operation="READ",class="timeout"} 3"#,
            r#"scalebench_throughput_ops_per_second{operation="READ"} 100.0"#,
            r#"scalebench_errors_total{operation="READ",class="conflict"} 0"#,
            r#"scalebench_latency_seconds{operation="READ",from="service",percentile="99"} 0.002"#,
            r#"scalebench_latency_seconds{operation="READ",from="intended",percentile="99"} 0.004"#,
            "scalebench_in_flight 7",
            "scalebench_probe_writes_total 40",
            "scalebench_probe_reads_total 90",
            "scalebench_probe_stale_reads_total 4",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        // A client of a distributed run labels every series with its index.
        let of_client = exposition(&Snapshot {
            phase: Some(scalebench_exec::Phase::Run),
            live: Some(live.clone()),
            client: Some(1),
            ..Default::default()
        });
        for line in [
            r#"scalebench_in_flight{client="1"} 7"#,
            r#"scalebench_operations_total{client="1",operation="READ"} 1200"#,
        ] {
            assert!(
                of_client.lines().any(|l| l == line),
                "{line} not in\n{of_client}"
            );
        }
        // Prometheus' text format of the same figures: counter families named as their samples.
        let plain = prometheus_text(&text);
        assert!(
            plain.contains("# TYPE scalebench_errors_total counter\n"),
            "{plain}"
        );
        assert!(
            plain.contains("# HELP scalebench_operations_total "),
            "{plain}"
        );
        assert!(
            !plain.contains("# EOF") && !plain.contains("quantile"),
            "{plain}"
        );
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(asks_for_openmetrics(Some(prometheus)));
        for other in [
            None,
            Some("*/*"),
            Some("text/plain"),
            Some("application/openmetrics-text;q=0"),
        ] {
            assert!(!asks_for_openmetrics(other), "{other:?}");
        }
        // The shipped Grafana dashboard asks for metrics this exposition has.
        let dashboard = include_str!("../../../docs/grafana-dashboard.json");
        let names: std::collections::BTreeSet<&str> = dashboard
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("scalebench_"))
            .collect();
        assert!(names.len() >= 5, "{names:?}");
        // Rates over Grafana's own window for the scrape interval, never a fixed one (issue 44:
        // `[1m]` is empty below a 15 s scrape's four samples and smooths a 10 s run away).
        assert!(!dashboard.contains("[1m]"), "a fixed rate window");
        assert!(
            dashboard.contains("scalebench_probe_stale_reads_total"),
            "no probe panel"
        );
        for name in names {
            assert!(
                text.contains(&format!("\n{name}")),
                "{name} is not exposed:\n{text}"
            );
        }
    }
}
