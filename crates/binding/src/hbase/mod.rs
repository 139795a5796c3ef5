//! `hbase://host:9090[/namespace]`: Apache HBase through its Thrift gateway (thrift2,
//! `org.apache.hadoop.hbase.thrift2.ThriftServer`, buffered transport and binary protocol: the
//! gateway's defaults). The client is generated from HBase 2.6.1's IDL (`hbase.thrift`, kept here;
//! see REGENERATE.md) and runs on the `thrift` crate.
//!
//! Data model as YCSB's HBase binding: one row per record (row key = the key), one column per field
//! in one column family (`column_family`). Updates are puts (HBase cannot tell a missing row on a
//! put or a delete); scans start at the key and return up to the count in row-key order.
//!
//! The `thrift` crate is synchronous: each slot's connection lives on a thread of its own, which
//! runs the slot's calls, so a call waiting on its socket never holds up the other operations in
//! flight on the worker thread. A call abandoned by `--op-timeout` keeps its thread until the
//! gateway answers; the slot goes on with a new thread and connection (tokio's blocking pool would
//! not do: a runtime waits for its blocking tasks when it ends, a stalled gateway for minutes).

#[allow(
    dead_code,
    non_camel_case_types,
    unused_extern_crates,
    clippy::all,
    clippy::pedantic
)]
#[rustfmt::skip]
mod thrift2;

use std::net::{TcpStream, ToSocketAddrs};

use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, Operation};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};
use thrift2::{
    TBloomFilterType, TColumn, TColumnFamilyDescriptor, TColumnValue, TCompressionAlgorithm,
    TDelete, TDurability, TGet, THBaseServiceSyncClient, TIOError, TIllegalArgument, TPut, TResult,
    TScan, TTHBaseServiceSyncClient, TTableDescriptor, TTableName,
};

use crate::registry::{BindingInfo, OptionInfo};
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "hbase",
    schemes: &["hbase"],
    summary: "Apache HBase 2.x through the Thrift gateway (thrift2); one row per record, one column per field",
    url_example: "hbase://127.0.0.1:9090 or hbase://127.0.0.1:9090/namespace",
    options: &[
        OptionInfo { name: "column_family", default: "family", help: "the column family holding the fields (YCSB's columnfamily)" },
        OptionInfo { name: "durability", default: "default", help: "write-ahead log per put and delete: default (the table's), skip_wal, async_wal, sync_wal or fsync_wal" },
        OptionInfo { name: "client_buffering", default: "false", help: "buffer inserts and updates on the client and send them as one putMultiple when write_buffer_bytes fill up and at the end (YCSB's clientbuffering: a buffered write counts as done when buffered)" },
        OptionInfo { name: "write_buffer_bytes", default: "12582912", help: "the client write buffer (YCSB's writebuffersize, 12 MiB)" },
        OptionInfo { name: "scan_caching", default: "0", help: "rows per round trip of a scan, through a scanner (open, fetch, close; YCSB's scanner caching); 0: the whole scan in one getScannerResults" },
        OptionInfo { name: "compression", default: "NONE", help: "the column family's compression when --create-schema creates the table: NONE, GZ, SNAPPY, LZ4, LZO, BZIP2 or ZSTD (codecs other than GZ need native libraries on the servers)" },
        OptionInfo { name: "bloom_filter", default: "ROW", help: "the column family's bloom filter when created: NONE, ROW (HBase's default) or ROWCOL" },
        OptionInfo { name: "in_memory", default: "false", help: "keep the column family's blocks in the block cache's in-memory part when created" },
        OptionInfo { name: "presplit_regions", default: "1", help: "regions the table starts with when created, split evenly over YCSB's key space (user1000..user9999)" },
    ],
    table_sql: None,
    stores_data: true,
    creates_table_on_load: false,
};

/// How long the gateway may take to answer a setup call (table exists, create, delete).
const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

type Client = THBaseServiceSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

pub struct HbaseFactory {
    address: String,
    url: String,
    table: TTableName,
    family: Vec<u8>,
    fields: Vec<String>,
    durability: Option<TDurability>,
    buffer_bytes: Option<usize>,
    scan_caching: i32,
}

/// A connection to the gateway; `read_timeout` bounds each answer (None: operations wait as long as
/// the gateway takes, and `--op-timeout` is what counts a slow one).
fn connect(address: &str, read_timeout: Option<std::time::Duration>) -> std::io::Result<Client> {
    let addr = address.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address")
    })?;
    let stream = TcpStream::connect_timeout(&addr, crate::CONNECT_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(read_timeout)?;
    let channel = TTcpChannel::with_stream(stream);
    let (r, w) = channel
        .split()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
    ))
}

/// The split keys of `regions` regions over YCSB's key space, as YCSB's HBase instructions make them
/// (`user1000` to `user9999` in equal steps).
pub fn split_keys(regions: u64) -> Vec<Vec<u8>> {
    (1..regions)
        .map(|i| format!("user{}", 1000 + i * 9000 / regions).into_bytes())
        .collect()
}

fn column_family(
    name: &[u8],
    compression: TCompressionAlgorithm,
    bloom: TBloomFilterType,
    in_memory: bool,
) -> TColumnFamilyDescriptor {
    TColumnFamilyDescriptor::new(
        name.to_vec(),
        None,
        None,
        None,
        bloom,
        compression,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        in_memory,
    )
}

/// A TScan with nothing set (the generated `Default` sets every field, an empty filter among them,
/// which the gateway refuses).
fn scan_from(start: &[u8], columns: Option<Vec<TColumn>>, caching: i32) -> TScan {
    TScan {
        start_row: Some(start.to_vec()),
        stop_row: None,
        columns,
        caching: Some(caching),
        max_versions: None,
        time_range: None,
        filter_string: None,
        batch_size: None,
        attributes: None,
        authorizations: None,
        reversed: None,
        cache_blocks: None,
        col_fam_time_range_map: None,
        read_type: None,
        limit: None,
        consistency: None,
        target_replica_id: None,
        filter_bytes: None,
    }
}

fn get_of(row: &str, columns: Option<Vec<TColumn>>) -> TGet {
    TGet {
        row: row.as_bytes().to_vec(),
        columns,
        timestamp: None,
        time_range: None,
        max_versions: None,
        filter_string: None,
        attributes: None,
        authorizations: None,
        consistency: None,
        target_replica_id: None,
        cache_blocks: None,
        store_limit: None,
        store_offset: None,
        existence_only: None,
        filter_bytes: None,
    }
}

/// The text of a gateway error: its message, without the Java stack the gateway may append.
fn error_text(e: &thrift::Error) -> String {
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

/// A setup call's error: a read that ran out of [`SETUP_TIMEOUT`] says so (Linux reports it as
/// "Resource temporarily unavailable").
fn setup_error_text(e: &thrift::Error) -> String {
    match e {
        thrift::Error::Transport(t)
            if t.kind == thrift::TransportErrorKind::TimedOut
                || t.message.contains("os error 11") =>
        {
            format!(
                "the gateway gave no answer within {} s (is HBase behind it up?)",
                SETUP_TIMEOUT.as_secs()
            )
        }
        other => error_text(other),
    }
}

/// Whether the connection is broken (the next operation reconnects).
fn breaks_connection(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(_) | thrift::Error::Protocol(_))
}

fn classify(e: &thrift::Error) -> FailureClass {
    match e {
        thrift::Error::Transport(t) => match t.kind {
            thrift::TransportErrorKind::TimedOut => FailureClass::Timeout,
            _ => FailureClass::Unavailable,
        },
        thrift::Error::User(u) => match u.downcast_ref::<TIOError>() {
            // The gateway's HBase client gave up on a region server or the master.
            Some(io) if io.can_retry == Some(true) => FailureClass::Unavailable,
            Some(io) => {
                let m = io.message.as_deref().unwrap_or_default();
                if [
                    "RetriesExhausted",
                    "ConnectException",
                    "NotServingRegion",
                    "ServerNotRunning",
                    "RegionOffline",
                    "PleaseHoldException",
                    "CallQueueTooBig",
                    "Connection refused",
                ]
                .iter()
                .any(|s| m.contains(s))
                {
                    FailureClass::Unavailable
                } else if m.contains("Timeout") || m.contains("timed out") {
                    FailureClass::Timeout
                } else {
                    FailureClass::Other
                }
            }
            None => FailureClass::Other,
        },
        _ => FailureClass::Other,
    }
}

impl HbaseFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        let u = config.url.url();
        let host = u.host_str().filter(|h| !h.is_empty()).ok_or_else(|| {
            BindingError::Config(format!(
                "invalid database URL '{url}': expected hbase://host:port[/namespace]"
            ))
        })?;
        let address = format!("{host}:{}", u.port().unwrap_or(9090));
        let namespace = u.path().trim_matches('/');
        if namespace.contains('/') {
            return Err(BindingError::Config(format!(
                "invalid database URL '{url}': the path is one namespace"
            )));
        }
        let table = TTableName::new(
            (!namespace.is_empty()).then(|| namespace.as_bytes().to_vec()),
            config.schema.table.as_bytes().to_vec(),
        );
        let durability = match config
            .choice(
                &INFO,
                "durability",
                &["default", "skip_wal", "async_wal", "sync_wal", "fsync_wal"],
            )?
            .as_str()
        {
            "skip_wal" => Some(TDurability::SKIP_WAL),
            "async_wal" => Some(TDurability::ASYNC_WAL),
            "sync_wal" => Some(TDurability::SYNC_WAL),
            "fsync_wal" => Some(TDurability::FSYNC_WAL),
            _ => None,
        };
        let compression = match config
            .choice(
                &INFO,
                "compression",
                &["NONE", "GZ", "SNAPPY", "LZ4", "LZO", "BZIP2", "ZSTD"],
            )?
            .as_str()
        {
            "GZ" => TCompressionAlgorithm::GZ,
            "SNAPPY" => TCompressionAlgorithm::SNAPPY,
            "LZ4" => TCompressionAlgorithm::LZ4,
            "LZO" => TCompressionAlgorithm::LZO,
            "BZIP2" => TCompressionAlgorithm::BZIP2,
            "ZSTD" => TCompressionAlgorithm::ZSTD,
            _ => TCompressionAlgorithm::NONE,
        };
        let bloom = match config
            .choice(&INFO, "bloom_filter", &["NONE", "ROW", "ROWCOL"])?
            .as_str()
        {
            "NONE" => TBloomFilterType::NONE,
            "ROWCOL" => TBloomFilterType::ROWCOL,
            _ => TBloomFilterType::ROW,
        };
        let in_memory = config.choice(&INFO, "in_memory", &["true", "false"])? == "true";
        let regions = config.u64_option(&INFO, "presplit_regions")?;
        if !(1..=9000).contains(&regions) {
            return Err(BindingError::Config(format!(
                "invalid value '{regions}' for property 'hbase.presplit_regions': expected 1 to 9000"
            )));
        }
        let family = config.option(&INFO, "column_family").as_bytes().to_vec();
        if family.is_empty() || family.contains(&b':') {
            return Err(BindingError::Config(format!(
                "invalid value '{}' for property 'hbase.column_family': expected a name without ':'",
                String::from_utf8_lossy(&family)
            )));
        }
        let buffering = config.choice(&INFO, "client_buffering", &["true", "false"])? == "true";
        let buffer_bytes = config.u64_option(&INFO, "write_buffer_bytes")?.max(1) as usize;
        let scan_caching = config
            .u64_option(&INFO, "scan_caching")?
            .min(i32::MAX as u64) as i32;
        let factory = HbaseFactory {
            address,
            url,
            table,
            family,
            fields: config.schema.field_names.to_vec(),
            durability,
            buffer_bytes: buffering.then_some(buffer_bytes),
            scan_caching,
        };

        let connect_error = |reason: String| BindingError::Connect {
            url: factory.url.clone(),
            reason,
        };
        // Setup answers within a minute: with HBase down, the gateway's own client retries for many
        // minutes before it answers, and a run must not hang before it starts.
        let mut c = connect(&factory.address, Some(SETUP_TIMEOUT))
            .map_err(|e| connect_error(e.to_string()))?;
        let name = factory.table_display();
        let schema_error = |what: &str, e: thrift::Error| {
            BindingError::Schema(format!(
                "cannot {what} table '{name}' on {}: {}",
                factory.url,
                setup_error_text(&e)
            ))
        };
        let exists = c
            .table_exists(factory.table.clone())
            .map_err(|e| connect_error(setup_error_text(&e)))?;
        if exists && config.drop_schema {
            // A disabled table (an earlier drop that stopped half-way) cannot be disabled again.
            let _ = c.disable_table(factory.table.clone());
            c.delete_table(factory.table.clone())
                .map_err(|e| schema_error("delete", e))?;
        }
        if !exists || config.drop_schema {
            if !config.create_schema {
                return Err(BindingError::Schema(format!(
                    "table '{name}' does not exist on {} (use --create-schema to create it)",
                    factory.url
                )));
            }
            let desc = TTableDescriptor::new(
                factory.table.clone(),
                vec![column_family(
                    &factory.family,
                    compression,
                    bloom,
                    in_memory,
                )],
                None,
                None,
            );
            c.create_table(desc, split_keys(regions))
                .map_err(|e| schema_error("create", e))?;
        }
        Ok(factory)
    }

    fn table_display(&self) -> String {
        let q = String::from_utf8_lossy(&self.table.qualifier);
        match &self.table.ns {
            Some(ns) => format!("{}:{q}", String::from_utf8_lossy(ns)),
            None => q.into_owned(),
        }
    }
}

impl BindingFactory for HbaseFactory {
    type Binding = HbaseBinding;

    async fn connect(&self, _worker: usize) -> Result<HbaseBinding, BindingError> {
        let mut b = HbaseBinding {
            connection: Connection::start(&self.address),
            abandoned: false,
            table: self.table_display().into_bytes(),
            family: self.family.clone(),
            fields: self.fields.clone(),
            durability: self.durability,
            buffer_bytes: self.buffer_bytes,
            buffered: Vec::new(),
            buffered_bytes: 0,
            scan_caching: self.scan_caching,
        };
        // Connects now, so a gateway that is not there fails the connect, not the first operation.
        b.call(|_| Ok(()))
            .await
            .map_err(|e| BindingError::Connect {
                url: self.url.clone(),
                reason: e.message,
            })?;
        Ok(b)
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

/// A call run on a connection's thread: given the connection (None when broken: connect first).
type Job = Box<dyn FnOnce(&mut Option<Client>) + Send>;

/// One slot's connection, on a thread of its own that runs the slot's calls in turn. The thread
/// ends when the slot drops this (after the call it is in, if any).
struct Connection {
    address: String,
    jobs: std::sync::mpsc::Sender<Job>,
}

impl Connection {
    fn start(address: &str) -> Connection {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("hbase-connection".into())
            .spawn(move || {
                let mut client = None;
                for job in queue {
                    job(&mut client);
                }
            });
        // Without its thread, every call fails (the queue's receiver is gone) as unavailable.
        drop(spawned);
        Connection {
            address: address.to_string(),
            jobs,
        }
    }
}

pub struct HbaseBinding {
    connection: Connection,
    /// The last call's future was dropped before its answer (an operation timeout): its thread is
    /// still in it, so the next call starts a new connection.
    abandoned: bool,
    /// `namespace:table` as the data calls name it.
    table: Vec<u8>,
    family: Vec<u8>,
    fields: Vec<String>,
    durability: Option<TDurability>,
    /// Client-side buffering of puts: the buffer's size limit.
    buffer_bytes: Option<usize>,
    buffered: Vec<TPut>,
    buffered_bytes: usize,
    scan_caching: i32,
}

impl HbaseBinding {
    /// Runs one call on this slot's connection thread (connecting first if the connection broke:
    /// the operation's latency includes that).
    async fn call<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Client) -> thrift::Result<T> + Send + 'static,
    ) -> Result<T, OpError> {
        if self.abandoned {
            self.connection = Connection::start(&self.connection.address);
        }
        let (answer, answered) = tokio::sync::oneshot::channel();
        let address = self.connection.address.clone();
        let job: Job = Box::new(move |client: &mut Option<Client>| {
            if client.is_none() {
                match connect(&address, None) {
                    Ok(c) => *client = Some(c),
                    Err(e) => {
                        let _ = answer.send(Err(OpError::new(
                            FailureClass::Unavailable,
                            format!("cannot connect to {address}: {e}"),
                        )));
                        return;
                    }
                }
            }
            let c = client.as_mut().expect("connected above");
            let result = f(c).map_err(|e| {
                if breaks_connection(&e) {
                    *client = None;
                }
                OpError::new(classify(&e), error_text(&e))
            });
            let _ = answer.send(result);
        });
        let gone = || OpError::new(FailureClass::Unavailable, "the connection's thread is gone");
        self.connection.jobs.send(job).map_err(|_| gone())?;
        self.abandoned = true;
        let result = answered.await.map_err(|_| gone())?;
        self.abandoned = false;
        result
    }

    fn column(&self, field: usize) -> TColumn {
        TColumn::new(
            self.family.clone(),
            self.fields[field].as_bytes().to_vec(),
            None,
        )
    }

    fn columns(&self, fields: FieldSet) -> Vec<TColumn> {
        match fields {
            FieldSet::All => vec![TColumn::new(self.family.clone(), None, None)],
            FieldSet::One(i) => vec![self.column(i)],
        }
    }

    fn put(&self, key: &str, values: &Fields) -> TPut {
        let cells = values
            .iter()
            .map(|(f, v)| {
                TColumnValue::new(
                    self.family.clone(),
                    self.fields[*f].as_bytes().to_vec(),
                    v.as_bytes().to_vec(),
                    None,
                    None,
                    None,
                )
            })
            .collect();
        TPut::new(
            key.as_bytes().to_vec(),
            cells,
            None,
            None,
            self.durability,
            None,
        )
    }

    /// The result's cells of this family as (field index, value); unknown columns are skipped.
    fn fill(&self, r: &TResult, out: &mut Fields) -> Result<(), OpError> {
        for cell in &r.column_values {
            if cell.family != self.family {
                continue;
            }
            let Some(i) = self
                .fields
                .iter()
                .position(|f| f.as_bytes() == cell.qualifier)
            else {
                continue;
            };
            let value = String::from_utf8(cell.value.clone()).map_err(|_| {
                OpError::new(
                    FailureClass::Unexpected,
                    format!("field {} is not UTF-8", self.fields[i]),
                )
            })?;
            out.push((i, value));
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(())
    }

    async fn write(&mut self, put: TPut) -> Result<(), OpError> {
        let Some(limit) = self.buffer_bytes else {
            let table = self.table.clone();
            return self.call(move |c| c.put(table, put)).await;
        };
        self.buffered_bytes += put.row.len()
            + put
                .column_values
                .iter()
                .map(|c| c.family.len() + c.qualifier.len() + c.value.len())
                .sum::<usize>();
        self.buffered.push(put);
        if self.buffered_bytes >= limit {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends the buffered puts as one putMultiple.
    async fn flush(&mut self) -> Result<(), OpError> {
        if self.buffered.is_empty() {
            return Ok(());
        }
        let puts = std::mem::take(&mut self.buffered);
        self.buffered_bytes = 0;
        let table = self.table.clone();
        self.call(move |c| c.put_multiple(table, puts)).await
    }
}

impl Binding for HbaseBinding {
    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        let table = self.table.clone();
        let get = get_of(key, Some(self.columns(fields)));
        let r = self.call(move |c| c.get(table, get)).await?;
        if r.column_values.is_empty() {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        self.fill(&r, out)
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let rows = count.clamp(1, i32::MAX as usize) as i32;
        let columns = Some(self.columns(fields));
        let table = self.table.clone();
        let results = if self.scan_caching == 0 {
            // The whole scan in one round trip.
            let scan = scan_from(start_key.as_bytes(), columns, rows);
            self.call(move |c| c.get_scanner_results(table, scan, rows))
                .await?
        } else {
            // `scan_caching` rows per round trip, through a scanner (YCSB's scanner caching).
            let caching = self.scan_caching;
            let scan = scan_from(start_key.as_bytes(), columns, caching);
            self.call(move |c| {
                let id = c.open_scanner(table, scan)?;
                let mut all = Vec::new();
                let fetched = loop {
                    let left = rows - all.len() as i32;
                    if left == 0 {
                        break Ok(());
                    }
                    match c.get_scanner_rows(id, left.min(caching)) {
                        Ok(batch) if batch.is_empty() => break Ok(()),
                        Ok(batch) => all.extend(batch),
                        Err(e) => break Err(e),
                    }
                };
                let closed = c.close_scanner(id);
                fetched.and(closed).map(|()| all)
            })
            .await?
        };
        for r in &results {
            let key = String::from_utf8_lossy(r.row.as_deref().unwrap_or_default()).into_owned();
            let mut f = Fields::new();
            self.fill(r, &mut f)?;
            out.push((key, f));
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        // As YCSB: a put, which creates a missing row.
        let put = self.put(key, values);
        self.write(put).await
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let put = self.put(key, values);
        self.write(put).await
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        if self.buffer_bytes.is_some() {
            for r in records {
                self.insert(&r.key, &r.values).await?;
            }
            return Ok(());
        }
        let puts: Vec<TPut> = records
            .iter()
            .map(|r| self.put(&r.key, &r.values))
            .collect();
        let table = self.table.clone();
        self.call(move |c| c.put_multiple(table, puts)).await
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        // Buffered puts of this key go first, or they would bring it back.
        self.flush().await?;
        let delete = TDelete {
            row: key.as_bytes().to_vec(),
            columns: None,
            timestamp: None,
            delete_type: None,
            attributes: None,
            durability: self.durability,
        };
        let table = self.table.clone();
        self.call(move |c| c.delete_single(table, delete)).await
    }

    async fn cleanup(&mut self) -> Result<(), BindingError> {
        self.flush()
            .await
            .map_err(|e| BindingError::Other(format!("flushing the write buffer: {e}")))
    }
}
