//! Connections to the Thrift gateway: each slot's on a thread of its own (the generated client is
//! blocking), and when a slot may connect again after a failed connection.

use std::net::{TcpStream, ToSocketAddrs};

use scalebench_workload::OpError;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

use super::thrift2::{THBaseServiceSyncClient, TIOError, TIllegalArgument};

/// The first and the longest wait of a slot before it connects again after a failed connection.
const RECONNECT_FIRST: std::time::Duration = std::time::Duration::from_millis(10);
const RECONNECT_MAX: std::time::Duration = std::time::Duration::from_millis(500);

/// When a slot may connect again: exponential backoff after each failed connection.
#[derive(Debug)]
pub(super) struct Reconnect {
    next_wait: std::time::Duration,
    not_before: Option<tokio::time::Instant>,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            next_wait: RECONNECT_FIRST,
            not_before: None,
        }
    }
}

impl Reconnect {
    /// The connection failed: the next one waits, twice as long as the last wait (at most 500 ms).
    pub(super) fn failed(&mut self) {
        self.not_before = Some(tokio::time::Instant::now() + self.next_wait);
        self.next_wait = (self.next_wait * 2).min(RECONNECT_MAX);
    }

    /// A call succeeded: the next failure waits the first wait again.
    pub(super) fn succeeded(&mut self) {
        *self = Reconnect::default();
    }

    /// Waits until a new connection may be made. An operation timeout that drops this wait
    /// leaves the time in place for the next operation.
    pub(super) async fn wait(&mut self) {
        if let Some(t) = self.not_before {
            tokio::time::sleep_until(t).await;
            self.not_before = None;
        }
    }
}

pub(super) type Client = THBaseServiceSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

/// A connection to the gateway, and a handle on its socket to shut it down from another thread;
/// `read_timeout` bounds each answer (None: operations wait as long as the gateway takes, and
/// `--op-timeout` is what counts a slow one).
pub(super) fn connect(
    address: &str,
    connect_timeout: std::time::Duration,
    read_timeout: Option<std::time::Duration>,
) -> std::io::Result<(Client, TcpStream)> {
    let addr = address.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address")
    })?;
    let stream = TcpStream::connect_timeout(&addr, connect_timeout)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(read_timeout)?;
    let handle = stream.try_clone()?;
    let channel = TTcpChannel::with_stream(stream);
    let (r, w) = channel
        .split()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let client = THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
    );
    Ok((client, handle))
}

/// Whether an I/O error is this process running out of its own resources (descriptors, memory,
/// buffers), not the gateway failing.
pub(super) fn is_resource_exhaustion(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::ENOBUFS)
    )
}

/// A call run on a connection's thread: given the connection, or None and why connecting failed.
pub(super) type Job = Box<dyn FnOnce(&mut Option<Client>, Option<&std::io::Error>) + Send>;

/// One slot's connection, on a thread of its own that runs the slot's calls in turn. The thread
/// ends when the slot drops its queue (after the call it is in, if any).
pub(super) struct Connection {
    pub(super) jobs: Option<std::sync::mpsc::Sender<Job>>,
    /// The socket the thread's client uses, once connected: shut down when the slot abandons it.
    pub(super) socket: std::sync::Arc<std::sync::Mutex<Option<TcpStream>>>,
    /// Closed when the thread has ended.
    pub(super) ended: tokio::sync::oneshot::Receiver<()>,
}

impl Connection {
    /// A connection thread for the gateway at `address`; it connects with its first call. The
    /// client could not start a thread: its fault, not the gateway's.
    pub(super) fn start(address: &str, connect_timeout: std::time::Duration) -> Result<Connection, OpError> {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let (alive, ended) = tokio::sync::oneshot::channel::<()>();
        let socket: std::sync::Arc<std::sync::Mutex<Option<TcpStream>>> = Default::default();
        let (address, held) = (address.to_string(), socket.clone());
        std::thread::Builder::new()
            .name("hbase-connection".into())
            .spawn(move || {
                let _alive = alive;
                let mut client = None;
                for job in queue {
                    let mut failed = None;
                    if client.is_none() {
                        match connect(&address, connect_timeout, None) {
                            Ok((c, handle)) => {
                                *held.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
                                client = Some(c);
                            }
                            Err(e) => failed = Some(e),
                        }
                    }
                    job(&mut client, failed.as_ref());
                }
            })
            .map_err(|e| OpError::client_fault(format!("cannot start a connection thread: {e}")))?;
        Ok(Connection {
            jobs: Some(jobs),
            socket,
            ended,
        })
    }

    /// Gives the connection up: its socket is shut down so the call in progress returns, and its
    /// queue is closed so its thread ends after it.
    pub(super) fn abandon(&mut self) {
        self.jobs = None;
        if let Some(s) = self
            .socket
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    pub(super) fn has_ended(&mut self) -> bool {
        matches!(
            self.ended.try_recv(),
            Err(tokio::sync::oneshot::error::TryRecvError::Closed)
        )
    }
}

/// The text of a gateway error: its message, without the Java stack the gateway may append.
pub(super) fn error_text(e: &thrift::Error) -> String {
    let text = match e {
        thrift::Error::User(u) => {
            if let Some(io) = u.downcast_ref::<TIOError>() {
                io.message.clone().unwrap_or_else(|| "TIOError".into())
            } else if let Some(arg) = u.downcast_ref::<TIllegalArgument>() {
                arg.message
                    .clone()
                    .unwrap_or_else(|| "TIllegalArgument".into())
            } else {
                u.to_string()
            }
        }
        other => other.to_string(),
    };
    text.lines().next().unwrap_or_default().to_string()
}

/// A setup call's error: a read that ran out of `timeout` says so (Linux reports it as "Resource
/// temporarily unavailable").
pub(super) fn setup_error_text(e: &thrift::Error, timeout: std::time::Duration) -> String {
    match e {
        thrift::Error::Transport(t)
            if t.kind == thrift::TransportErrorKind::TimedOut
                || t.message.contains("os error 11") =>
        {
            format!(
                "the gateway gave no answer within {} ms (--connect-timeout; is HBase behind it up?)",
                timeout.as_millis()
            )
        }
        other => error_text(other),
    }
}
