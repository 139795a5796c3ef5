//! `etcd://host:port[,host:port...]`: etcd v3 through etcd-client (gRPC).
//!
//! One key per record, `/<table>/<key>`, whose value is the record's fields as a JSON object. etcd has no
//! partial update: an update reads the record and writes it back in a transaction guarded by the
//! record's revision (a lost race fails as conflict). Scans are range reads in key order.

use std::collections::BTreeMap;

use etcd_client::{Client, Compare, CompareOp, GetOptions, KeyValue, Txn, TxnOp, TxnOpResponse};
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, Operation};

use crate::info::BindingInfo;
use crate::pipeline::ConnectionGroups;
use crate::snapshot::{Held, Snapshot};
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

mod tls;

pub const INFO: BindingInfo = BindingInfo {
    name: "etcd",
    schemes: &["etcd"],
    summary: "etcd v3 (etcd-client, gRPC); one key per record, fields as JSON",
    url_example: "etcd://127.0.0.1:2379 or etcd://h1:2379,h2:2379 (TLS: ?cacert=ca.pem)",
    options: Options::SET,
    transactions: crate::Transactions::OneRecord,
    reads: "read_consistency = linearizable (default): through the leader with a quorum, never stale; serializable: the member's own state, which may lag behind the leader",
    pipelining: crate::info::Pipelining::Shared,
    ..BindingInfo::KEY_VALUE_STORE
};

binding_options! {
    pub struct Options {
        read_consistency: ReadConsistency = "linearizable" => "linearizable reads go through the leader, with a quorum; serializable ones read any member's local state",
        max_txn_ops: u64 = "128" => "operations per transaction when loading in batches (etcd's --max-txn-ops)",
    }
}

option_choice! {
    pub enum ReadConsistency {
        Linearizable = "linearizable",
        Serializable = "serializable",
    }
}

pub struct EtcdFactory {
    endpoints: Vec<String>,
    url: String,
    prefix: String,
    fields: Vec<String>,
    serializable: bool,
    max_txn_ops: usize,
    connect_timeout: std::time::Duration,
    /// etcdctl's `cacert`, `cert`, `key`: None, plain http.
    tls: Option<etcd_client::TlsOptions>,
    /// `--pipeline`: the clients (one HTTP/2 channel each) slots share.
    groups: ConnectionGroups<Client>,
}

impl EtcdFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        let tls = tls::from_url(config.url.url(), &url)?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let endpoints: Vec<String> = config
            .url
            .hosts(2379)
            .into_iter()
            .filter(|h| !h.starts_with(':'))
            .map(|hp| format!("{scheme}://{hp}"))
            .collect();
        if endpoints.is_empty() {
            return Err(BindingError::Config(format!(
                "invalid database URL '{url}': expected etcd://host:port"
            )));
        }
        let options = Options::read(INFO.name, &config.options)?;
        let factory = EtcdFactory {
            endpoints,
            url,
            prefix: format!("/{}/", config.schema.table),
            fields: config.schema.field_names.to_vec(),
            serializable: options.read_consistency == ReadConsistency::Serializable,
            max_txn_ops: options.max_txn_ops.max(1) as usize,
            connect_timeout: config.connect_timeout,
            tls,
            groups: ConnectionGroups::new(config.pipeline),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        runtime.block_on(config.cancel.unless_cancelled(async {
            let mut c = factory.client_of(&factory.endpoints).await?;
            // The client connects lazily: the first request is where a silent server shows.
            let status = async { c.status().await.map_err(|e| crate::tls::explain(&describe(&e))) };
            crate::connect_within(factory.connect_timeout, &factory.url, status).await?;
            if config.drop_schema {
                c.delete(
                    factory.prefix.clone(),
                    Some(etcd_client::DeleteOptions::new().with_prefix()),
                )
                .await
                .map_err(|e| {
                    BindingError::Schema(format!(
                        "cannot delete {}* on {}: {e}",
                        factory.prefix, factory.url
                    ))
                })?;
            }
            Ok::<_, BindingError>(())
        }))?;
        Ok(factory)
    }

    /// A client of `endpoints` (all of them, balanced, for the factory's own requests; one, for
    /// a worker's).
    async fn client_of(&self, endpoints: &[String]) -> Result<Client, BindingError> {
        let mut opts =
            etcd_client::ConnectOptions::new().with_connect_timeout(self.connect_timeout);
        if let Some(tls) = &self.tls {
            opts = opts.with_tls(tls.clone());
        }
        let connect = async {
            Client::connect(endpoints, Some(opts))
                .await
                .map_err(|e| crate::tls::explain(&describe(&e)))
        };
        crate::connect_within(self.connect_timeout, &self.url, connect).await
    }
}

impl BindingFactory for EtcdFactory {
    type Binding = EtcdBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    /// Each worker is pinned to one member (worker w to member w mod n), as etcd's own Go client
    /// pins its connection, and moves to the next member when its own stops answering: a
    /// balanced channel kept sending a share of every worker's requests to a dead member.
    async fn connect(&self, worker: usize) -> Result<EtcdBinding, BindingError> {
        // A group of --pipeline slots shares one member's HTTP/2 channel: group g's is g mod n.
        let current = self.groups.group_of(worker) % self.endpoints.len();
        let member = std::slice::from_ref(&self.endpoints[current]);
        Ok(EtcdBinding {
            client: self.groups.connect(worker, || self.client_of(member)).await?,
            endpoints: self.endpoints.clone(),
            current,
            prefix: self.prefix.clone(),
            fields: self.fields.clone(),
            serializable: self.serializable,
            max_txn_ops: self.max_txn_ops,
            transaction: Held::Idle,
        })
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

pub struct EtcdBinding {
    client: Client,
    /// Every member, and the one this worker's requests go to.
    endpoints: Vec<String>,
    current: usize,
    prefix: String,
    fields: Vec<String>,
    serializable: bool,
    max_txn_ops: usize,
    /// A sequence's transaction ([`crate::Transactions::OneRecord`]): the record, and the key's
    /// revision when read (0: no record).
    transaction: Held<(Snapshot, i64)>,
}


fn classify(e: etcd_client::Error) -> OpError {
    use etcd_client::Error as E;
    let class = match &e {
        E::GRpcStatus(s) => match s.code() {
            tonic::Code::DeadlineExceeded => FailureClass::Timeout,
            tonic::Code::Unavailable | tonic::Code::ResourceExhausted | tonic::Code::Aborted => {
                FailureClass::Unavailable
            }
            tonic::Code::NotFound => FailureClass::NotFound,
            tonic::Code::FailedPrecondition => FailureClass::Conflict,
            // A connection reset by a server that died mid-request arrives as Unknown, or as
            // Cancelled ("connection closed") when the request was in flight as it went.
            tonic::Code::Unknown | tonic::Code::Cancelled
                if std::error::Error::source(s)
                    .is_some_and(|c| c.is::<tonic::transport::Error>()) =>
            {
                FailureClass::Unavailable
            }
            _ => FailureClass::Other,
        },
        E::TransportError(_) | E::IoError(_) => FailureClass::Unavailable,
        _ => FailureClass::Other,
    };
    OpError::new(class, describe(&e))
}

/// One line with the cause. A gRPC status prints as a debug structure (code, message, details,
/// metadata): its code and message are what a reader needs, then the transport's cause.
fn describe(e: &etcd_client::Error) -> String {
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            let mut text = format!("{:?}: {}", status.code(), status.message());
            if let Some(cause) = std::error::Error::source(status) {
                let cause = crate::with_causes(cause);
                if !text.contains(&cause) {
                    text = format!("{text}: {cause}");
                }
            }
            text
        }
        etcd_client::Error::TransportError(t) => crate::with_causes(t),
        other => other.to_string(),
    }
}

type Record = BTreeMap<String, String>;

/// `$call.await`, or on an error its class returned after [`EtcdBinding::after_error`].
macro_rules! pinned {
    ($self:ident, $call:expr) => {
        match $call.await {
            Ok(r) => r,
            Err(e) => return Err($self.after_error(e).await),
        }
    };
}

impl EtcdBinding {
    /// The transaction's record, read (linearizably) at its first step with its revision
    /// (`None`: no transaction).
    async fn in_transaction(&mut self, key: &str) -> Result<Option<&mut Snapshot>, OpError> {
        match &self.transaction {
            Held::Idle => return Ok(None),
            Held::Begun => {
                let resp = pinned!(self, self.client.get(self.key(key), None));
                let (original, revision) = match resp.kvs().first() {
                    Some(kv) => {
                        let mut fields = Fields::new();
                        self.decode(key, kv.value(), FieldSet::All, &mut fields)?;
                        let mut record = vec![None; self.fields.len()];
                        for (i, v) in fields {
                            record[i] = Some(v);
                        }
                        (Some(record), kv.mod_revision())
                    }
                    None => (None, 0),
                };
                self.transaction = Held::Holding((Snapshot::new(key, original), revision));
            }
            Held::Holding((s, _)) => s.check_key(key)?,
        }
        match &mut self.transaction {
            Held::Holding((s, _)) => Ok(Some(s)),
            _ => unreachable!("held above"),
        }
    }

    /// Writes (or deletes) the transaction's record in an etcd transaction that holds only if
    /// the key's revision is still the one read (else a conflict, nothing written).
    async fn commit(&mut self, s: Snapshot, revision: i64) -> Result<(), OpError> {
        if !s.changed() {
            return Ok(());
        }
        let full = self.key(&s.key);
        let unchanged = match revision {
            0 => Compare::version(full.clone(), CompareOp::Equal, 0),
            r => Compare::mod_revision(full.clone(), CompareOp::Equal, r),
        };
        let write = match &s.current {
            None => TxnOp::delete(full, None),
            Some(record) => {
                let values: Fields = record
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| v.clone().map(|v| (i, v)))
                    .collect();
                TxnOp::put(full, self.encode(&values), None)
            }
        };
        let r = pinned!(
            self,
            self.client.txn(Txn::new().when([unchanged]).and_then([write]))
        );
        if !r.succeeded() {
            return Err(OpError::new(
                FailureClass::Conflict,
                format!("{} changed during the transaction: nothing written", s.key),
            ));
        }
        Ok(())
    }

    /// The error's class; a member that did not answer is left for the next one (the request
    /// that found it down has failed all the same).
    async fn after_error(&mut self, e: etcd_client::Error) -> OpError {
        let e = classify(e);
        if e.class == FailureClass::Unavailable && self.endpoints.len() > 1 {
            let next = (self.current + 1) % self.endpoints.len();
            if self.client.add_endpoint(&self.endpoints[next]).await.is_ok() {
                let _ = self
                    .client
                    .remove_endpoint(&self.endpoints[self.current])
                    .await;
                self.current = next;
            }
        }
        e
    }

    /// The current key-values of `keys` (`None`: no record), in one transaction of gets.
    async fn get_all(&mut self, keys: &[String]) -> Result<Vec<Option<KeyValue>>, OpError> {
        let ops: Vec<TxnOp> = keys
            .iter()
            .map(|k| TxnOp::get(self.key(k), None))
            .collect();
        let r = pinned!(self, self.client.txn(Txn::new().and_then(ops)));
        Ok(r.op_responses()
            .into_iter()
            .map(|resp| match resp {
                TxnOpResponse::Get(g) => g.kvs().first().cloned(),
                _ => None,
            })
            .collect())
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn get_options(&self) -> GetOptions {
        let o = GetOptions::new();
        if self.serializable {
            o.with_serializable()
        } else {
            o
        }
    }

    fn encode(&self, values: &Fields) -> String {
        let record: Record = values
            .iter()
            .map(|(f, v)| (self.fields[*f].clone(), v.clone()))
            .collect();
        serde_json::to_string(&record).expect("strings serialise")
    }

    fn decode(
        &self,
        key: &str,
        bytes: &[u8],
        fields: FieldSet,
        out: &mut Fields,
    ) -> Result<(), OpError> {
        let record: Record = serde_json::from_slice(bytes).map_err(|e| {
            OpError::new(
                FailureClass::Unexpected,
                format!("{key}: stored value is not a record: {e}"),
            )
        })?;
        match fields {
            FieldSet::All => {
                for (i, name) in self.fields.iter().enumerate() {
                    if let Some(v) = record.get(name) {
                        out.push((i, v.clone()));
                    }
                }
            }
            FieldSet::One(i) => {
                if let Some(v) = record.get(&self.fields[i]) {
                    out.push((i, v.clone()));
                }
            }
        }
        Ok(())
    }
}

impl Binding for EtcdBinding {
    /// A sequence abandoned at the operation timeout leaves no transaction behind: the worker's
    /// next operations go to the database, not into a record held in memory.
    fn abandoned(&mut self) {
        self.transaction = Held::Idle;
    }

    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        if let Some(s) = self.in_transaction(key).await? {
            return s.read(fields, out);
        }
        let opts = self.get_options();
        let k = self.key(key);
        let resp = pinned!(self, self.client.get(k, Some(opts)));
        let kv = resp
            .kvs()
            .first()
            .ok_or_else(|| OpError::new(FailureClass::NotFound, format!("no record {key}")))?;
        self.decode(key, kv.value(), fields, out)
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        // Range [prefix+start, end of prefix): '/' + 1 is '0'.
        let end = format!("{}0", self.prefix.trim_end_matches('/'));
        let opts = self.get_options().with_range(end).with_limit(count as i64);
        let k = self.key(start_key);
        let resp = pinned!(self, self.client.get(k, Some(opts)));
        for kv in resp.kvs() {
            let k = String::from_utf8_lossy(kv.key());
            let k = k.strip_prefix(&self.prefix).unwrap_or(&k).to_string();
            let mut f = Fields::new();
            self.decode(&k, kv.value(), fields, &mut f)?;
            out.push((k, f));
        }
        Ok(())
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let width = self.fields.len();
        if let Some(s) = self.in_transaction(key).await? {
            return s.update(values, false, width);
        }
        let full = self.key(key);
        let resp = pinned!(self, self.client.get(full.clone(), None));
        let kv = resp
            .kvs()
            .first()
            .ok_or_else(|| OpError::new(FailureClass::NotFound, format!("no record {key}")))?;
        let mut record: Record = serde_json::from_slice(kv.value()).map_err(|e| {
            OpError::new(
                FailureClass::Unexpected,
                format!("{key}: stored value is not a record: {e}"),
            )
        })?;
        for (f, v) in values {
            record.insert(self.fields[*f].clone(), v.clone());
        }
        let value = serde_json::to_string(&record).expect("strings serialise");
        let txn = Txn::new()
            .when([Compare::mod_revision(
                full.clone(),
                CompareOp::Equal,
                kv.mod_revision(),
            )])
            .and_then([TxnOp::put(full, value, None)]);
        let r = pinned!(self, self.client.txn(txn));
        if !r.succeeded() {
            return Err(OpError::new(
                FailureClass::Conflict,
                format!("{key} changed during the update"),
            ));
        }
        Ok(())
    }

    /// The keys' gets in one transaction (of at most `max_txn_ops`: several for more keys).
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        for chunk in keys.chunks(self.max_txn_ops) {
            for (k, kv) in chunk.iter().zip(self.get_all(chunk).await?) {
                if let Some(kv) = kv {
                    let mut f = Fields::new();
                    self.decode(k, kv.value(), fields, &mut f)?;
                    out.push((k.clone(), f));
                }
            }
        }
        Ok(())
    }

    /// Each record read in one transaction, then written in another that checks none changed
    /// meanwhile: all written or none (per `max_txn_ops` records); a missing record is not_found.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        for (ks, vs) in keys.chunks(self.max_txn_ops).zip(values.chunks(self.max_txn_ops)) {
            let current = self.get_all(ks).await?;
            let (mut checks, mut puts) = (Vec::new(), Vec::new());
            for ((key, v), kv) in ks.iter().zip(vs).zip(current) {
                let kv = kv.ok_or_else(|| {
                    OpError::new(FailureClass::NotFound, format!("no record {key}"))
                })?;
                let mut record: Record = serde_json::from_slice(kv.value()).map_err(|e| {
                    OpError::new(
                        FailureClass::Unexpected,
                        format!("{key}: stored value is not a record: {e}"),
                    )
                })?;
                for (f, value) in v {
                    record.insert(self.fields[*f].clone(), value.clone());
                }
                let full = self.key(key);
                checks.push(Compare::mod_revision(
                    full.clone(),
                    CompareOp::Equal,
                    kv.mod_revision(),
                ));
                let value = serde_json::to_string(&record).expect("strings serialise");
                puts.push(TxnOp::put(full, value, None));
            }
            let r = pinned!(self, self.client.txn(Txn::new().when(checks).and_then(puts)));
            if !r.succeeded() {
                return Err(OpError::new(
                    FailureClass::Conflict,
                    "a record of the batch changed during it",
                ));
            }
        }
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let value = self.encode(values);
        let k = self.key(key);
        pinned!(self, self.client.put(k, value, None));
        Ok(())
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        for chunk in records.chunks(self.max_txn_ops) {
            let ops: Vec<TxnOp> = chunk
                .iter()
                .map(|r| TxnOp::put(self.key(&r.key), self.encode(&r.values), None))
                .collect();
            pinned!(self, self.client.txn(Txn::new().and_then(ops)));
        }
        Ok(())
    }

    /// A sequence's steps in one transaction: the record read at the first, changed in memory,
    /// written at the commit if its revision is still the one read.
    async fn transaction_control(
        &mut self,
        control: crate::TransactionControl,
    ) -> Result<(), OpError> {
        match self.transaction.control(control)? {
            Some((s, revision)) => self.commit(s, revision).await,
            None => Ok(()),
        }
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        if let Some(s) = self.in_transaction(key).await? {
            return s.delete();
        }
        let k = self.key(key);
        let resp = pinned!(self, self.client.delete(k, None));
        if resp.deleted() == 0 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("no record {key}"),
            ));
        }
        Ok(())
    }
}
