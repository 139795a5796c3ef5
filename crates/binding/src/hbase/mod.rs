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
//! flight on the worker thread. A call abandoned by `--op-timeout` has its socket shut down, so its
//! thread returns at once and ends; the slot goes on with a new thread and connection, and holds
//! at most [`MAX_ABANDONED`] abandoned ones (a thread still in its connect): beyond them it waits
//! for one to end, so a gateway that stops answering costs a bounded number of threads and
//! descriptors, never one per timed-out operation (tokio's blocking pool would not do: a runtime
//! waits for its blocking tasks when it ends, a stalled gateway for minutes). A thread or socket
//! the client cannot get is the client's fault, not the gateway's: the run ends saying so.
//! A slot whose connection failed (refused, broken, or abandoned after a timeout) waits before it
//! connects again, 10 ms doubling up to 500 ms, back to 10 ms after a call that succeeded: a gateway
//! that refuses or stalls sees at most two connections per slot and second, not one per operation
//! (the reconnection policy of the DataStax and MongoDB drivers; the wait counts in the
//! operation's latency, and an operation timeout or a stop ends it).
//!
//! Setup (table exists, create, delete) runs on a thread of its own too, each answer bounded by
//! `--connect-timeout`, and a stop shuts its socket down: Ctrl-C never waits for the gateway.

#[allow(
    dead_code,
    non_camel_case_types,
    unused_extern_crates,
    clippy::all,
    clippy::pedantic
)]
#[rustfmt::skip]
mod thrift2;
mod connection;
mod schema;

use std::net::TcpStream;

use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, Operation};
use thrift2::{
    TBloomFilterType, TColumn, TColumnValue, TCompressionAlgorithm,
    TDelete, TDurability, TGet, TIOError, TPut, TResult,
    TScan, TTHBaseServiceSyncClient, TTableDescriptor, TTableName,
};

use connection::{error_text, is_resource_exhaustion, Client, Connection, Job, Reconnect};
use schema::{column_family, Setup};
pub use schema::split_keys;

use crate::info::BindingInfo;
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "hbase",
    schemes: &["hbase"],
    summary: "Apache HBase 2.x through the Thrift gateway (thrift2); one row per record, one column per field",
    url_example: "hbase://127.0.0.1:9090 or hbase://127.0.0.1:9090/namespace",
    options: Options::SET,
    reads: "each read goes to the one region server serving the key's region, through the Thrift gateway: strongly consistent. Timeline-consistent reads from region replicas are not offered: the local HBase clusters here serve each region from one region server (no region_replication), so there is no secondary to read",
    pipelining: crate::info::Pipelining::Not("the Thrift gateway answers one call per connection at a time"),
    ..BindingInfo::KEY_VALUE_STORE
};

binding_options! {
    pub struct Options {
        column_family: String = "family" => "the column family holding the fields (YCSB's columnfamily)",
        durability: Durability = "default" => "write-ahead log per put and delete (default: the table's)",
        client_buffering: bool = "false" => "buffer inserts and updates on the client and send them as one putMultiple when write_buffer_bytes fill up and at the end (YCSB's clientbuffering: a buffered write counts as done when buffered)",
        write_buffer_bytes: u64 = "12582912" => "the client write buffer (YCSB's writebuffersize, 12 MiB)",
        scan_caching: u64 = "0" => "rows per round trip of a scan, through a scanner (open, fetch, close; YCSB's scanner caching); 0: the whole scan in one getScannerResults",
        compression: Compression = "NONE" => "the column family's compression when --create-schema creates the table (codecs other than GZ need native libraries on the servers)",
        bloom_filter: BloomFilter = "ROW" => "the column family's bloom filter when created (ROW is HBase's default)",
        in_memory: bool = "false" => "keep the column family's blocks in the block cache's in-memory part when created",
        presplit_regions: u64 = "1" => "regions the table starts with when created, split evenly over YCSB's key space (user1000..user9999)",
        new_version_behavior: bool = "false" => "create the column family with HBase's NEW_VERSION_BEHAVIOR (HBASE-15968): versions ordered by when they were written, not by timestamp alone, so a delete no longer hides a put made after it in the same millisecond (by default it does, and --verify-writes counts that put lost)",
    }
}

option_choice! {
    pub enum Durability {
        TableDefault = "default",
        SkipWal = "skip_wal",
        AsyncWal = "async_wal",
        SyncWal = "sync_wal",
        FsyncWal = "fsync_wal",
    }
}

option_choice! {
    pub enum Compression {
        None = "NONE",
        Gz = "GZ",
        Snappy = "SNAPPY",
        Lz4 = "LZ4",
        Lzo = "LZO",
        Bzip2 = "BZIP2",
        Zstd = "ZSTD",
    }
}

option_choice! {
    pub enum BloomFilter {
        None = "NONE",
        Row = "ROW",
        RowCol = "ROWCOL",
    }
}

/// Abandoned connections a slot may hold (their threads ending) before it waits for one to end.
const MAX_ABANDONED: usize = 2;

pub struct HbaseFactory {
    address: String,
    url: String,
    table: TTableName,
    family: Vec<u8>,
    fields: Vec<String>,
    durability: Option<TDurability>,
    buffer_bytes: Option<usize>,
    scan_caching: i32,
    connect_timeout: std::time::Duration,
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
        if !u.username().is_empty() || u.password().is_some() {
            return Err(BindingError::Config(format!(
                "invalid database URL '{url}': the Thrift gateway takes no user or password here \
                 (its authentication is the gateway's own configuration, SASL/Kerberos, which this binding does not speak)"
            )));
        }
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
        let options = Options::read(INFO.name, &config.options)?;
        let durability = match options.durability {
            Durability::TableDefault => None,
            Durability::SkipWal => Some(TDurability::SKIP_WAL),
            Durability::AsyncWal => Some(TDurability::ASYNC_WAL),
            Durability::SyncWal => Some(TDurability::SYNC_WAL),
            Durability::FsyncWal => Some(TDurability::FSYNC_WAL),
        };
        let compression = match options.compression {
            Compression::None => TCompressionAlgorithm::NONE,
            Compression::Gz => TCompressionAlgorithm::GZ,
            Compression::Snappy => TCompressionAlgorithm::SNAPPY,
            Compression::Lz4 => TCompressionAlgorithm::LZ4,
            Compression::Lzo => TCompressionAlgorithm::LZO,
            Compression::Bzip2 => TCompressionAlgorithm::BZIP2,
            Compression::Zstd => TCompressionAlgorithm::ZSTD,
        };
        let bloom = match options.bloom_filter {
            BloomFilter::None => TBloomFilterType::NONE,
            BloomFilter::Row => TBloomFilterType::ROW,
            BloomFilter::RowCol => TBloomFilterType::ROWCOL,
        };
        let in_memory = options.in_memory;
        let regions = options.presplit_regions;
        if !(1..=9000).contains(&regions) {
            return Err(BindingError::Config(format!(
                "invalid value '{regions}' for property 'hbase.presplit_regions': expected 1 to 9000"
            )));
        }
        let family = options.column_family.into_bytes();
        if family.is_empty() || family.contains(&b':') {
            return Err(BindingError::Config(format!(
                "invalid value '{}' for property 'hbase.column_family': expected a name without ':'",
                String::from_utf8_lossy(&family)
            )));
        }
        let buffering = options.client_buffering;
        let buffer_bytes = options.write_buffer_bytes.max(1) as usize;
        let scan_caching = options.scan_caching.min(i32::MAX as u64) as i32;
        let factory = HbaseFactory {
            address,
            url,
            table,
            family,
            fields: config.schema.field_names.to_vec(),
            durability,
            buffer_bytes: buffering.then_some(buffer_bytes),
            scan_caching,
            connect_timeout: config.connect_timeout,
        };

        let setup = Setup {
            drop: config.drop_schema,
            create: config.create_schema,
            descriptor: TTableDescriptor::new(
                factory.table.clone(),
                vec![column_family(
                    &factory.family,
                    compression,
                    bloom,
                    in_memory,
                    options.new_version_behavior,
                )],
                None,
                None,
            ),
            splits: split_keys(regions),
            timeout: config.connect_timeout,
        };
        factory.set_up(setup, &config.cancel)?;
        Ok(factory)
    }

    /// Connects and prepares the table on a thread of its own, each answer bounded by the connect
    /// timeout; a stop shuts the socket down and returns at once (the thread ends with its call).
    fn set_up(&self, setup: Setup, cancel: &crate::Cancel) -> Result<(), BindingError> {
        let (done, outcome) = std::sync::mpsc::channel();
        let socket: std::sync::Arc<std::sync::Mutex<Option<TcpStream>>> = Default::default();
        let (address, url, table, name) = (
            self.address.clone(),
            self.url.clone(),
            self.table.clone(),
            self.table_display(),
        );
        let held = socket.clone();
        std::thread::Builder::new()
            .name("hbase-setup".into())
            .spawn(move || {
                let _ = done.send(setup.run(&address, &url, table, &name, &held));
            })
            .map_err(|e| BindingError::Other(format!("cannot start a thread: {e}")))?;
        loop {
            if cancel.is_cancelled() {
                if let Some(s) = socket.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                    let _ = s.shutdown(std::net::Shutdown::Both);
                }
                return Err(BindingError::Interrupted);
            }
            match outcome.recv_timeout(std::time::Duration::from_millis(10)) {
                Ok(r) => return r,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(BindingError::Other(
                        "the setup thread ended without an answer".into(),
                    ))
                }
            }
        }
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

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, _worker: usize) -> Result<HbaseBinding, BindingError> {
        let mut b = HbaseBinding {
            address: self.address.clone(),
            connect_timeout: self.connect_timeout,
            connection: None,
            in_call: false,
            abandoned: Vec::new(),
            reconnect: Reconnect::default(),
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

pub struct HbaseBinding {
    address: String,
    connect_timeout: std::time::Duration,
    /// The slot's connection; None until the first call, and after a call was abandoned.
    connection: Option<Connection>,
    /// The connection's call in progress lost its caller (an operation timeout dropped the
    /// future): the next call abandons the connection and starts another.
    in_call: bool,
    /// Connections given up, whose threads have not ended yet (at most [`MAX_ABANDONED`]).
    abandoned: Vec<Connection>,
    /// When this slot may connect again after a failed connection.
    reconnect: Reconnect,
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
        if std::mem::take(&mut self.in_call) {
            self.give_up_connection();
        }
        self.abandoned.retain_mut(|c| !c.has_ended());
        // A gateway that stops answering must not cost a thread and a socket per timed-out
        // operation: past the bound, wait for an abandoned thread to end (its connect to time out);
        // an operation timeout ends this wait too.
        while self.abandoned.len() >= MAX_ABANDONED {
            let _ = (&mut self.abandoned[0].ended).await;
            self.abandoned.remove(0);
        }
        if self.connection.is_none() {
            self.reconnect.wait().await;
            self.connection = Some(Connection::start(&self.address, self.connect_timeout)?);
        }
        let connection = self.connection.as_mut().expect("started above");
        let (answer, answered) = tokio::sync::oneshot::channel::<(Result<T, OpError>, bool)>();
        let address = self.address.clone();
        let job: Job = Box::new(move |client: &mut Option<Client>, failed| {
            let answer = |result, connected| {
                let _ = answer.send((result, connected));
            };
            let Some(c) = client.as_mut() else {
                let error = match failed {
                    Some(e) if is_resource_exhaustion(e) => {
                        OpError::client_fault(format!("cannot open a socket to {address}: {e}"))
                    }
                    Some(e) => OpError::new(
                        FailureClass::Unavailable,
                        format!("cannot connect to {address}: {e}"),
                    ),
                    None => OpError::new(FailureClass::Unavailable, "not connected"),
                };
                answer(Err(error), false);
                return;
            };
            let result = f(c).map_err(|e| {
                if breaks_connection(&e) {
                    *client = None;
                }
                OpError::new(classify(&e), error_text(&e))
            });
            let connected = client.is_some();
            answer(result, connected);
        });
        let gone = || OpError::new(FailureClass::Unavailable, "the connection's thread is gone");
        let sent = connection.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
        self.in_call = sent;
        let answered = if sent { answered.await.ok() } else { None };
        self.in_call = false;
        let Some((result, connected)) = answered else {
            // The thread ended (it panicked): a new connection next time.
            self.give_up_connection();
            return Err(gone());
        };
        if connected {
            if result.is_ok() {
                self.reconnect.succeeded();
            }
        } else {
            // Refused or broken: the next call connects anew, after a wait.
            self.give_up_connection();
        }
        result
    }

    /// Abandons this slot's connection (its thread ends after its call), and delays the next.
    fn give_up_connection(&mut self) {
        if let Some(mut c) = self.connection.take() {
            c.abandon();
            self.abandoned.push(c);
        }
        self.reconnect.failed();
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

    /// One getMultiple; a row with no cell was not found.
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let gets: Vec<TGet> = keys
            .iter()
            .map(|k| get_of(k, Some(self.columns(fields))))
            .collect();
        let table = self.table.clone();
        let results = self.call(move |c| c.get_multiple(table, gets)).await?;
        for (key, r) in keys.iter().zip(&results) {
            if !r.column_values.is_empty() {
                let mut f = Fields::new();
                self.fill(r, &mut f)?;
                out.push((key.clone(), f));
            }
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        // As YCSB: a put, which creates a missing row.
        let put = self.put(key, values);
        self.write(put).await
    }

    /// One putMultiple (each row's put atomic, the rows not together; with client-side buffering
    /// the puts join the buffer).
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        if self.buffer_bytes.is_some() {
            for (key, v) in keys.iter().zip(values) {
                self.update(key, v).await?;
            }
            return Ok(());
        }
        let puts: Vec<TPut> = keys
            .iter()
            .zip(values)
            .map(|(key, v)| self.put(key, v))
            .collect();
        let table = self.table.clone();
        self.call(move |c| c.put_multiple(table, puts)).await
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
