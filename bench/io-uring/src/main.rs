//! One thread, C connections to one server, each with P requests in flight: the client writes its
//! P requests in one write and reads until all P replies are in, as memtier does. Redis: GETs of
//! random keys; PostgreSQL: pgbench -S's point reads as simple queries (a server that trusts the
//! user). The same loop runs on tokio's epoll reactor or on monoio's io_uring driver; the process's
//! CPU (getrusage) per operation is what compares them. `redis-rs` runs the Redis reads through the
//! redis crate's multiplexed connection (scalebench's Redis binding's) instead, P tasks sharing it.
//! Usage: io-uring-probe tokio|uring|redis-rs HOST:PORT CONNECTIONS PIPELINE OPERATIONS [postgres:USER:DB]

use std::time::Instant;

struct Keys(u64);

impl Keys {
    /// P requests `GET key:%012d` of random keys below 100,000 (redis-benchmark -r 100000's names).
    fn next_key(&mut self) -> String {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        format!("key:{:012}", self.0 % 100_000)
    }

    fn requests(&mut self, pipeline: usize, out: &mut Vec<u8>) {
        out.clear();
        for _ in 0..pipeline {
            let key = self.next_key();
            out.extend_from_slice(
                format!("*2\r\n$3\r\nGET\r\n${}\r\n{key}\r\n", key.len()).as_bytes(),
            );
        }
    }
}

/// What the connections speak.
#[derive(Clone)]
enum Protocol {
    Redis,
    /// PostgreSQL's frontend protocol 3.0 as USER on DB, authenticated by trust.
    Postgres {
        user: String,
        db: String,
    },
}

impl Protocol {
    /// What a connection sends before its first request, and how many replies end it.
    fn startup(&self) -> Option<Vec<u8>> {
        let Protocol::Postgres { user, db } = self else {
            return None;
        };
        let mut body = 196_608u32.to_be_bytes().to_vec();
        for part in ["user", user, "database", db, ""] {
            body.extend_from_slice(part.as_bytes());
            body.push(0);
        }
        let mut m = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        m.extend_from_slice(&body);
        Some(m)
    }

    fn requests(&self, keys: &mut Keys, pipeline: usize, out: &mut Vec<u8>) {
        match self {
            Protocol::Redis => keys.requests(pipeline, out),
            Protocol::Postgres { .. } => {
                out.clear();
                for _ in 0..pipeline {
                    keys.next_key();
                    let q = format!(
                        "SELECT abalance FROM pgbench_accounts WHERE aid = {}\0",
                        1 + keys.0 % 100_000
                    );
                    out.push(b'Q');
                    out.extend_from_slice(&((q.len() + 4) as u32).to_be_bytes());
                    out.extend_from_slice(q.as_bytes());
                }
            }
        }
    }

    /// Complete replies at the front of `buf`, and the bytes they take.
    fn replies(&self, buf: &[u8]) -> (usize, usize) {
        match self {
            Protocol::Redis => replies(buf),
            Protocol::Postgres { .. } => ready_for_query(buf),
        }
    }
}

/// ReadyForQuery messages ('Z': a query's reply ends) among the whole messages at the front of
/// `buf`, and the bytes those messages take.
fn ready_for_query(buf: &[u8]) -> (usize, usize) {
    let (mut n, mut at) = (0, 0);
    while at + 5 <= buf.len() {
        let len = u32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
        if at + 1 + len > buf.len() {
            break;
        }
        if buf[at] == b'Z' {
            n += 1;
        }
        at += 1 + len;
    }
    (n, at)
}

/// Complete bulk-string replies at the front of `buf`, and the bytes they take.
fn replies(buf: &[u8]) -> (usize, usize) {
    let (mut n, mut at) = (0, 0);
    while at < buf.len() {
        let Some(eol) = buf[at..].windows(2).position(|w| w == b"\r\n") else {
            break;
        };
        let len: i64 = std::str::from_utf8(&buf[at + 1..at + eol])
            .unwrap()
            .parse()
            .unwrap();
        let end = if len < 0 {
            at + eol + 2
        } else {
            at + eol + 2 + len as usize + 2
        };
        if end > buf.len() {
            break;
        }
        n += 1;
        at = end;
    }
    (n, at)
}

fn cpu_seconds() -> (f64, f64) {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

async fn tokio_connection(proto: Protocol, addr: String, pipeline: usize, rounds: u64, seed: u64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let (mut keys, mut req, mut buf) = (Keys(seed), Vec::new(), vec![0u8; 64 * 1024]);
    let mut filled = 0;
    let mut exchange = async |s: &mut tokio::net::TcpStream, req: &[u8], replies: usize| {
        s.write_all(req).await.unwrap();
        let mut got = 0;
        while got < replies {
            let n = s.read(&mut buf[filled..]).await.unwrap();
            assert!(n > 0, "the server closed the connection");
            filled += n;
            let (n, used) = proto.replies(&buf[..filled]);
            got += n;
            buf.copy_within(used..filled, 0);
            filled -= used;
        }
    };
    if let Some(hello) = proto.startup() {
        exchange(&mut s, &hello, 1).await;
    }
    for _ in 0..rounds {
        proto.requests(&mut keys, pipeline, &mut req);
        exchange(&mut s, &req, pipeline).await;
    }
}

async fn uring_connection(proto: Protocol, addr: String, pipeline: usize, rounds: u64, seed: u64) {
    use monoio::io::{AsyncReadRent, AsyncWriteRentExt};
    let mut s = monoio::net::TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let mut keys = Keys(seed);
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut req = Vec::new();
    if let Some(hello) = proto.startup() {
        req = hello;
    }
    let mut replies_due = 1;
    for round in 0..=rounds {
        if round > 0 {
            proto.requests(&mut keys, pipeline, &mut req);
            replies_due = pipeline;
        } else if req.is_empty() {
            continue;
        }
        let (r, back) = s.write_all(req).await;
        r.unwrap();
        req = back;
        let mut got = 0;
        while got < replies_due {
            let (r, back) = s.read(buf).await;
            let n = r.unwrap();
            assert!(n > 0, "the server closed the connection");
            buf = back;
            pending.extend_from_slice(&buf[..n]);
            let (k, used) = proto.replies(&pending);
            got += k;
            pending.drain(..used);
        }
    }
}

/// P tasks sharing one of redis-rs's multiplexed connections, each doing `rounds` GETs one at a
/// time: the library scalebench's Redis binding uses, without scalebench.
async fn redis_rs_connection(addr: String, pipeline: usize, rounds: u64, seed: u64) {
    let client = redis::Client::open(format!("redis://{addr}")).unwrap();
    let conn = client.get_multiplexed_async_connection().await.unwrap();
    let tasks: Vec<_> = (0..pipeline as u64)
        .map(|i| {
            let mut conn = conn.clone();
            tokio::spawn(async move {
                let mut keys = Keys(seed * 31 + i + 1);
                for _ in 0..rounds {
                    let key = keys.next_key();
                    let _: Option<Vec<u8>> = redis::cmd("GET")
                        .arg(key)
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (runtime, addr) = (a[1].as_str(), a[2].clone());
    let (conns, pipeline, ops): (u64, usize, u64) = (
        a[3].parse().unwrap(),
        a[4].parse().unwrap(),
        a[5].parse().unwrap(),
    );
    let rounds = ops / conns / pipeline as u64;
    let proto = match a.get(6).map(|p| p.split(':').collect::<Vec<_>>()) {
        None => Protocol::Redis,
        Some(p) if p.len() == 3 && p[0] == "postgres" => Protocol::Postgres {
            user: p[1].into(),
            db: p[2].into(),
        },
        Some(p) => panic!("protocol {p:?}: postgres:USER:DB, or none for Redis"),
    };
    let (u0, s0) = cpu_seconds();
    let t0 = Instant::now();
    match runtime {
        // Both on tokio's current-thread runtime (timers enabled: the redis crate sets its own).
        "tokio" | "redis-rs" => {
            let hand_written = runtime == "tokio";
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async {
                    let tasks: Vec<_> = (0..conns)
                        .map(|c| {
                            let (proto, addr, seed) =
                                (proto.clone(), addr.clone(), 0x9E37_79B9 + c);
                            tokio::spawn(async move {
                                if hand_written {
                                    tokio_connection(proto, addr, pipeline, rounds, seed).await
                                } else {
                                    redis_rs_connection(addr, pipeline, rounds, seed).await
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.unwrap();
                    }
                })
        }
        "uring" => monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
            .build()
            .unwrap()
            .block_on(async {
                let tasks: Vec<_> = (0..conns)
                    .map(|c| {
                        monoio::spawn(uring_connection(
                            proto.clone(),
                            addr.clone(),
                            pipeline,
                            rounds,
                            0x9E37_79B9 + c,
                        ))
                    })
                    .collect();
                for t in tasks {
                    t.await;
                }
            }),
        other => panic!("runtime {other}: tokio, uring or redis-rs"),
    }
    let wall = t0.elapsed().as_secs_f64();
    let (u1, s1) = cpu_seconds();
    let done = (rounds * conns * pipeline as u64) as f64;
    println!(
        "{runtime} c={conns} P={pipeline}: {:.0} ops/s, CPU per op {:.2} us (user {:.2}, system {:.2})",
        done / wall,
        (u1 - u0 + s1 - s0) / done * 1e6,
        (u1 - u0) / done * 1e6,
        (s1 - s0) / done * 1e6
    );
}
