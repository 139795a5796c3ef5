//! `mongodb://[user:password@]host:port[,host:port...][/database][?options]`: MongoDB through the
//! official `mongodb` crate (MongoDB 4.2 or newer; replica sets and sharded clusters through their
//! seed list or a mongos, with the driver's own URL options).
//!
//! Data model as YCSB's MongoDB binding: one document per record in collection `<table>` of the
//! URL's database (default `ycsb`), `_id` = the key, one binary field per YCSB field (strings are read
//! too). Scans are range
//! queries on `_id` sorted ascending with a limit; batched loads are one `insertMany`.

use std::future::IntoFuture;
use std::rc::{Rc, Weak};
use std::time::Duration;

use futures::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::error::{Error as MongoError, ErrorKind, WriteFailure};
use mongodb::options::{
    Acknowledgment, ClientOptions, CollectionOptions, ReadConcern, ReadPreference,
    SelectionCriteria, WriteConcern,
};
use mongodb::{Client, Collection};
use scalebench_workload::{FailureClass, FieldSet, Fields, OpError, Operation};

use crate::snapshot::{Held, Snapshot};
use crate::info::BindingInfo;
use crate::{Binding, BindingConfig, BindingError, BindingFactory};

pub const INFO: BindingInfo = BindingInfo {
    name: "mongodb",
    schemes: &["mongodb"],
    summary: "MongoDB 4.2+ (official mongodb crate); one document per record, _id = key",
    url_example: "mongodb://127.0.0.1:27017/ycsb or mongodb://h1:27017,h2:27017/ycsb?replicaSet=rs0",
    options: Options::SET,
    // MongoDB creates a collection on its first insert.
    creates_table_on_load: true,
    secondary_indexes: true,
    transactions: crate::Transactions::OneRecord,
    reads: "read_preference chooses the members reads go to, read_concern their level, w and j the write concern. The server the tests run here (mongo-java-server) is a single member without replication: it takes these options but has no secondary to be stale, so only a real replica set can show their effect",
    pipelining: crate::info::Pipelining::Not("MongoDB's wire protocol answers one request per connection at a time (its driver pools connections instead)"),
    ..BindingInfo::KEY_VALUE_STORE
};

/// The write concern's `w`: acknowledged by this many members (at least 1: the driver does not
/// support unacknowledged writes), by a majority, or by a tag set's members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteAcknowledgment {
    Members(u32),
    Majority,
    TagSet(String),
}

impl crate::info::OptionValue for WriteAcknowledgment {
    const EXPECTED: &'static str =
        "a number of members (at least 1: unacknowledged writes are not supported by the driver), 'majority' or a tag set's name";
    fn parse_option(text: &str) -> Option<Self> {
        match text.parse::<u32>() {
            Ok(0) => None,
            Ok(n) => Some(WriteAcknowledgment::Members(n)),
            Err(_) if text == "majority" => Some(WriteAcknowledgment::Majority),
            Err(_) if !text.is_empty() && !text.starts_with('-') => {
                Some(WriteAcknowledgment::TagSet(text.to_string()))
            }
            Err(_) => None,
        }
    }
}

/// The database when the URL names none (YCSB's default).
const DEFAULT_DATABASE: &str = "ycsb";

binding_options! {
    pub struct Options {
        w: WriteAcknowledgment = "1" => "write concern: acknowledged by this many members, 'majority', or a tag set's name (0, unacknowledged writes, is not supported by the driver)",
        j: bool = "false" => "write concern: acknowledge a write only once it is in the on-disk journal",
        wtimeout: Duration = "0" => "write concern: how long the server waits for the acknowledgements (0: no limit); past it the write fails as timeout (it may still be applied)",
        read_concern: ReadConcernLevel = "server" => "read concern level (server: the server's default, none sent)",
        read_preference: ReadPreferenceMode = "primary" => "which members reads go to",
        ordered_inserts: bool = "false" => "load batches as ordered insertMany (stops at the first failed document) instead of unordered",
        upsert: bool = "false" => "insert with replaceOne and upsert (an existing record is overwritten, not a conflict), as YCSB's mongodb.upsert",
        server_selection_timeout: Duration = "30s" => "how long an operation waits for a suitable server (the driver's default 30 s); past it the operation fails as unavailable",
        max_pool_size: u64 = "0" => "connections per worker thread's client (0: the driver's default, 10)",
    }
}

option_choice! {
    pub enum ReadConcernLevel {
        Server = "server",
        Local = "local",
        Available = "available",
        Majority = "majority",
        Linearizable = "linearizable",
        Snapshot = "snapshot",
    }
}

option_choice! {
    pub enum ReadPreferenceMode {
        Primary = "primary",
        PrimaryPreferred = "primaryPreferred",
        Secondary = "secondary",
        SecondaryPreferred = "secondaryPreferred",
        Nearest = "nearest",
    }
}

pub struct MongoFactory {
    /// Tells this factory's clients apart from other factories' in [`THREAD_CLIENTS`].
    id: u64,
    options: ClientOptions,
    url: String,
    database: String,
    collection: String,
    collection_options: CollectionOptions,
    fields: Vec<String>,
    /// Which fields are lists or maps (stored as arrays and subdocuments).
    collections: Vec<bool>,
    ordered_inserts: bool,
    upsert: bool,
}

impl MongoFactory {
    pub fn open(config: &BindingConfig) -> Result<Self, BindingError> {
        let url = config.url.redacted();
        let database = config.url.url().path().trim_start_matches('/').to_string();
        let database = if database.is_empty() {
            DEFAULT_DATABASE.to_string()
        } else {
            database
        };
        let given = Options::read(INFO.name, &config.options)?;
        let acknowledgment = match given.w {
            WriteAcknowledgment::Members(n) => Acknowledgment::Nodes(n),
            WriteAcknowledgment::Majority => Acknowledgment::Majority,
            WriteAcknowledgment::TagSet(tag) => Acknowledgment::Custom(tag),
        };
        let write_concern = WriteConcern::builder()
            .w(acknowledgment)
            .journal(given.j)
            .w_timeout(Some(given.wtimeout).filter(|t| !t.is_zero()))
            .build();
        let read_concern = match given.read_concern {
            ReadConcernLevel::Server => None,
            ReadConcernLevel::Local => Some(ReadConcern::local()),
            ReadConcernLevel::Available => Some(ReadConcern::available()),
            ReadConcernLevel::Majority => Some(ReadConcern::majority()),
            ReadConcernLevel::Linearizable => Some(ReadConcern::linearizable()),
            ReadConcernLevel::Snapshot => Some(ReadConcern::snapshot()),
        };
        let read_preference = match given.read_preference {
            ReadPreferenceMode::Primary => ReadPreference::Primary,
            ReadPreferenceMode::PrimaryPreferred => ReadPreference::PrimaryPreferred { options: None },
            ReadPreferenceMode::Secondary => ReadPreference::Secondary { options: None },
            ReadPreferenceMode::SecondaryPreferred => ReadPreference::SecondaryPreferred { options: None },
            ReadPreferenceMode::Nearest => ReadPreference::Nearest { options: None },
        };
        let collection_options = CollectionOptions::builder()
            .write_concern(write_concern)
            .read_concern(read_concern)
            .selection_criteria(SelectionCriteria::ReadPreference(read_preference))
            .build();
        let server_selection = given.server_selection_timeout;
        let max_pool_size = given.max_pool_size;

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindingError::Other(e.to_string()))?;
        // Parsing reads the URL's own options (replicaSet, authSource, directConnection, ...).
        let mut options = runtime
            .block_on(ClientOptions::parse(config.url.url().as_str()).into_future())
            .map_err(|e| {
                BindingError::Config(format!("invalid database URL '{url}': {}", e.kind))
            })?;
        options.server_selection_timeout = Some(server_selection.max(Duration::from_millis(1)));
        options.connect_timeout = Some(config.connect_timeout);
        if max_pool_size > 0 {
            options.max_pool_size = Some(max_pool_size as u32);
        }
        options.app_name = Some("scalebench".into());
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let factory = MongoFactory {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            options,
            url,
            database,
            collection: config.schema.table.clone(),
            collection_options,
            fields: config.schema.field_names.to_vec(),
            collections: config
                .schema
                .field_types
                .iter()
                .map(|t| t.is_collection())
                .collect(),
            ordered_inserts: given.ordered_inserts,
            upsert: given.upsert,
        };
        // Fail now, with the URL, rather than in every worker.
        runtime.block_on(config.cancel.unless_cancelled(factory.set_up(config)))?;
        Ok(factory)
    }

    /// Connects within the connect timeout, then drops, creates and indexes the collection as
    /// the options say.
    async fn set_up(&self, config: &BindingConfig) -> Result<(), BindingError> {
        // The setup's own client selects a server within the connect timeout, so that the
        // driver says why none answered (connection refused, ...) before the bound runs out.
        let mut setup_options = self.options.clone();
        setup_options.server_selection_timeout = Some(
            config.connect_timeout.min(
                setup_options
                    .server_selection_timeout
                    .unwrap_or(config.connect_timeout),
            ),
        );
        let client =
            Client::with_options(setup_options).map_err(|e| BindingError::Connect {
                url: self.url.clone(),
                reason: e.kind.to_string(),
            })?;
        let admin = client.database("admin");
        let ping = async {
            admin
                .run_command(doc! {"ping": 1})
                .await
                .map_err(|e| selection_cause(&e.kind.to_string(), config.connect_timeout))
        };
        crate::connect_within(
            config.connect_timeout + Duration::from_secs(1),
            &self.url,
            ping,
        )
        .await?;
        let db = client.database(&self.database);
        let schema_error = |what: &str, e: MongoError| {
            BindingError::Schema(format!(
                "cannot {what} collection {}.{} on {}: {}",
                self.database, self.collection, self.url, e.kind
            ))
        };
        // Asked first: dropping a missing collection is an error on some servers (MongoDB
        // before 7.0 without a code the driver can recognise on mongo-java-server).
        // (Unfiltered: mongo-java-server ignores a listCollections filter.)
        let exists = db
            .list_collection_names()
            .await
            .map_err(|e| schema_error("list", e))?
            .contains(&self.collection);
        if config.drop_schema && exists {
            db.collection::<Document>(&self.collection)
                .drop()
                .await
                .map_err(|e| schema_error("drop", e))?;
        }
        if config.create_schema && (config.drop_schema || !exists) {
            db.create_collection(&self.collection)
                .await
                .map_err(|e| schema_error("create", e))?;
            // The workload file's secondary indexes: ascending on each column, in order.
            for ix in config.schema.indexes.iter() {
                let mut keys = Document::new();
                for &c in &ix.columns {
                    keys.insert(self.fields[c].clone(), 1);
                }
                let model = mongodb::IndexModel::builder()
                    .keys(keys)
                    .options(
                        mongodb::options::IndexOptions::builder()
                            .name(ix.name.clone())
                            .build(),
                    )
                    .build();
                db.collection::<Document>(&self.collection)
                    .create_index(model)
                    .await
                    .map_err(|e| schema_error("index", e))?;
            }
        }
        client.shutdown().await;
        Ok(())
    }

    /// A client on the calling thread's runtime (its monitors are tasks of that runtime).
    fn client(&self) -> Result<Client, BindingError> {
        Client::with_options(self.options.clone()).map_err(|e| BindingError::Connect {
            url: self.url.clone(),
            reason: e.kind.to_string(),
        })
    }
}

/// The driver's server selection error names, for each server, why it could not be used
/// ("Kind: I/O error: Connection refused (os error 111), labels: {}") inside a topology
/// description: the first such cause; a server that never answered has none.
fn selection_cause(message: &str, timeout: Duration) -> String {
    let cause = message.split("Error: ").nth(1).map(|rest| {
        let end = rest
            .find(", labels")
            .or_else(|| rest.find(" }"))
            .unwrap_or(rest.len());
        rest[..end].trim_start_matches("Kind: ").trim().to_string()
    });
    match cause {
        Some(c) if !c.is_empty() => format!("no server could be selected: {c}"),
        _ if message.contains("Server selection timeout") => format!(
            "no answer within {} ms (--connect-timeout)",
            timeout.as_millis()
        ),
        _ => message.to_string(),
    }
}

thread_local! {
    /// The client each factory made on this thread, while a binding holds it.
    static THREAD_CLIENTS: std::cell::RefCell<Vec<(u64, Weak<Client>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl MongoFactory {
    /// One client (its connection pool and monitors) for all the bindings of a worker thread, as
    /// YCSB shares one MongoClient: a client per binding would open a pool and a monitor for each
    /// operation in flight. It belongs to the thread's runtime and ends with the thread's last
    /// binding, on that runtime.
    fn thread_client(&self) -> Result<Rc<Client>, BindingError> {
        THREAD_CLIENTS.with(|clients| {
            let mut clients = clients.borrow_mut();
            clients.retain(|(_, c)| c.strong_count() > 0);
            if let Some(c) = clients
                .iter()
                .find(|(id, _)| *id == self.id)
                .and_then(|(_, c)| c.upgrade())
            {
                return Ok(c);
            }
            let c = Rc::new(self.client()?);
            clients.push((self.id, Rc::downgrade(&c)));
            Ok(c)
        })
    }
}

impl BindingFactory for MongoFactory {
    type Binding = MongoBinding;

    fn info(&self) -> BindingInfo {
        INFO
    }

    async fn connect(&self, _worker: usize) -> Result<MongoBinding, BindingError> {
        let client = self.thread_client()?;
        let collection = client
            .database(&self.database)
            .collection_with_options(&self.collection, self.collection_options.clone());
        Ok(MongoBinding {
            _client: client,
            collection,
            fields: self.fields.clone(),
            collections: self.collections.clone(),
            ordered_inserts: self.ordered_inserts,
            upsert: self.upsert,
            txn: Held::Idle,
        })
    }

    fn batches_inserts(&self) -> bool {
        true
    }
}

pub struct MongoBinding {
    /// Shared with the thread's other bindings (see [`MongoFactory::thread_client`]).
    _client: Rc<Client>,
    collection: Collection<Document>,
    fields: Vec<String>,
    collections: Vec<bool>,
    ordered_inserts: bool,
    upsert: bool,
    /// A sequence's transaction ([`crate::Transactions::OneRecord`]): the record, and its document
    /// as read (`None`: there was none), for a conditional single-document write at the commit.
    txn: Held<(Snapshot, Option<Document>)>,
}


/// The failure class of a server error code (src/mongo/base/error_codes.yml).
fn class_of_code(code: i32) -> FailureClass {
    match code {
        // DuplicateKey (and its legacy form), WriteConflict, NoSuchTransaction.
        11000 | 11001 | 112 | 251 => FailureClass::Conflict,
        // MaxTimeMSExpired, WriteConcernFailed (wtimeout), NetworkTimeout, ExceededTimeLimit.
        50 | 64 | 89 | 262 => FailureClass::Timeout,
        // HostUnreachable, HostNotFound, ShutdownInProgress, UnsatisfiableWriteConcern,
        // FailedToSatisfyReadPreference, PrimarySteppedDown, SocketException, NotWritablePrimary,
        // InterruptedAtShutdown, InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk,
        // NotPrimaryOrSecondary.
        6 | 7 | 91 | 100 | 133 | 189 | 9001 | 10107 | 11600 | 11602 | 13435 | 13436 => {
            FailureClass::Unavailable
        }
        _ => FailureClass::Other,
    }
}

fn classify(e: MongoError) -> OpError {
    let class = match &*e.kind {
        ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => FailureClass::Timeout,
        ErrorKind::Io(_)
        | ErrorKind::ServerSelection { .. }
        | ErrorKind::ConnectionPoolCleared { .. }
        | ErrorKind::Shutdown => FailureClass::Unavailable,
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => class_of_code(w.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => class_of_code(w.code),
        ErrorKind::Command(c) => class_of_code(c.code),
        ErrorKind::InsertMany(m) => match (&m.write_errors, &m.write_concern_error) {
            (Some(errors), _) if !errors.is_empty() => class_of_code(errors[0].code),
            (_, Some(w)) => class_of_code(w.code),
            _ => FailureClass::Other,
        },
        _ => FailureClass::Other,
    };
    OpError::new(class, e.kind.to_string())
}

/// A field's value as YCSB's MongoDB binding stores it: binary (generic subtype), so records written
/// by either tool read back in the other.
fn binary(value: &str) -> Bson {
    Bson::Binary(mongodb::bson::Binary {
        subtype: mongodb::bson::spec::BinarySubtype::Generic,
        bytes: value.as_bytes().to_vec(),
    })
}

/// A list's or a map's JSON text as an array or a subdocument (numbers as Int32, Int64 or
/// Double, text, UUIDs and timestamps as strings); text that is no JSON stays binary.
fn native(value: &str) -> Bson {
    fn of(v: serde_json::Value) -> Bson {
        use serde_json::Value as V;
        match v {
            V::Null => Bson::Null,
            V::Bool(b) => Bson::Boolean(b),
            V::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i32::try_from(i).map_or(Bson::Int64(i), Bson::Int32),
                (None, Some(f)) => Bson::Double(f),
                (None, None) => Bson::String(n.to_string()),
            },
            V::String(s) => Bson::String(s),
            V::Array(items) => Bson::Array(items.into_iter().map(of).collect()),
            V::Object(entries) => Bson::Document(entries.into_iter().map(|(k, v)| (k, of(v))).collect()),
        }
    }
    serde_json::from_str(value).map_or_else(|_| binary(value), of)
}

/// An array or a subdocument as JSON text (the inverse of [`native`]).
fn json_text(b: &Bson) -> String {
    fn of(b: &Bson) -> serde_json::Value {
        match b {
            Bson::Boolean(v) => (*v).into(),
            Bson::Int32(v) => (*v).into(),
            Bson::Int64(v) => (*v).into(),
            Bson::Double(v) => (*v).into(),
            Bson::String(v) => v.clone().into(),
            Bson::Array(items) => items.iter().map(of).collect(),
            Bson::Document(d) => serde_json::Value::Object(
                d.iter().map(|(k, v)| (k.clone(), of(v))).collect(),
            ),
            other => other.to_string().into(),
        }
    }
    of(b).to_string()
}

/// A binary value as text (scalebench's values are text; YCSB's random ones are printable ASCII).
fn text(field: &str, bytes: &[u8]) -> Result<String, OpError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        OpError::new(
            FailureClass::Unexpected,
            format!("field {field} is not UTF-8 text"),
        )
    })
}

fn not_found(key: &str) -> OpError {
    OpError::new(FailureClass::NotFound, format!("no record {key}"))
}

impl MongoBinding {
    fn document(&self, key: &str, values: &Fields) -> Document {
        let mut d = Document::new();
        d.insert("_id", key);
        for (f, v) in values {
            d.insert(self.fields[*f].as_str(), self.value(*f, v));
        }
        d
    }

    /// Field `f`'s value as stored: binary, as YCSB's; a list or a map native.
    fn value(&self, f: usize, v: &str) -> Bson {
        match self.collections.get(f) {
            Some(true) => native(v),
            _ => binary(v),
        }
    }

    /// An update's `$set`: each written field's value.
    fn set_of(&self, values: &Fields) -> Document {
        let mut set = Document::new();
        for (f, v) in values {
            set.insert(self.fields[*f].as_str(), self.value(*f, v));
        }
        set
    }

    /// Every YCSB field, or the one asked for (`_id` comes with either).
    fn projection(&self, fields: FieldSet) -> Document {
        fields
            .indices(self.fields.len())
            .map(|i| (self.fields[i].clone(), Bson::Int32(1)))
            .collect()
    }

    /// The document's YCSB fields as (field index, value); a list's array or a map's subdocument
    /// as its JSON text; any other value neither binary nor a string is unexpected.
    fn fill(&self, d: &Document, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        for i in fields.indices(self.fields.len()) {
            match d.get(&self.fields[i]) {
                Some(Bson::Binary(b)) => out.push((i, text(&self.fields[i], &b.bytes)?)),
                // Written by other tools as text: read as it is.
                Some(Bson::String(v)) => out.push((i, v.clone())),
                Some(b @ (Bson::Array(_) | Bson::Document(_))) => out.push((i, json_text(b))),
                Some(other) => {
                    return Err(OpError::new(
                        FailureClass::Unexpected,
                        format!(
                            "field {} is {other:?}, not binary, a string, an array or a subdocument",
                            self.fields[i]
                        ),
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl MongoBinding {
    /// The documents `find` finds (`records` of them at most), as keys and fields, into `out`:
    /// `fields` projected, all in one round trip (the first batch holds every document).
    async fn find_into(
        &self,
        find: mongodb::action::Find<'_, Document>,
        records: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        out.clear();
        let mut cursor = find
            .batch_size(records.clamp(1, u32::MAX as usize) as u32)
            .projection(self.projection(fields))
            .await
            .map_err(classify)?;
        while let Some(d) = cursor.try_next().await.map_err(classify)? {
            let key = match d.get("_id") {
                Some(Bson::String(k)) => k.clone(),
                other => {
                    return Err(OpError::new(
                        FailureClass::Unexpected,
                        format!("a document's _id is {other:?}, not a string key"),
                    ))
                }
            };
            let mut f = Fields::new();
            self.fill(&d, fields, &mut f)?;
            out.push((key, f));
        }
        Ok(())
    }
}

impl MongoBinding {
    /// The transaction's record, its document read at its first step (`None`: no transaction).
    async fn in_txn(&mut self, key: &str) -> Result<Option<&mut Snapshot>, OpError> {
        match &self.txn {
            Held::Idle => return Ok(None),
            Held::Begun => {
                let found = self
                    .collection
                    .find_one(doc! {"_id": key})
                    .await
                    .map_err(classify)?;
                let original = match &found {
                    Some(d) => {
                        let mut fields = Fields::new();
                        self.fill(d, FieldSet::All, &mut fields)?;
                        let mut record = vec![None; self.fields.len()];
                        for (i, v) in fields {
                            record[i] = Some(v);
                        }
                        Some(record)
                    }
                    None => None,
                };
                self.txn = Held::Holding((Snapshot::new(key, original), found));
            }
            Held::Holding((s, _)) => s.check_key(key)?,
        }
        match &mut self.txn {
            Held::Holding((s, _)) => Ok(Some(s)),
            _ => unreachable!("held above"),
        }
    }

    /// Writes the transaction's record if its document is still the one read: a replace or a
    /// delete whose filter is every field as read, or an insert of a document that was not there
    /// (a duplicate key). Matching nothing, the record changed meanwhile: a conflict.
    async fn commit(&self, s: Snapshot, read: Option<Document>) -> Result<(), OpError> {
        if !s.changed() {
            return Ok(());
        }
        let conflict = || {
            OpError::new(
                FailureClass::Conflict,
                format!("{} changed during the transaction: nothing written", s.key),
            )
        };
        let mut filter = doc! {"_id": &s.key};
        if let Some(d) = &read {
            for f in &self.fields {
                match d.get(f) {
                    Some(v) => filter.insert(f.as_str(), v.clone()),
                    None => filter.insert(f.as_str(), doc! {"$exists": false}),
                };
            }
        }
        let values = |record: &[Option<String>]| -> Fields {
            record
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.clone().map(|v| (i, v)))
                .collect()
        };
        match (&read, &s.current) {
            (Some(_), Some(record)) => {
                let r = self
                    .collection
                    .replace_one(filter, self.document(&s.key, &values(record)))
                    .await
                    .map_err(classify)?;
                if r.matched_count == 0 {
                    return Err(conflict());
                }
            }
            (Some(_), None) => {
                let r = self.collection.delete_one(filter).await.map_err(classify)?;
                if r.deleted_count == 0 {
                    return Err(conflict());
                }
            }
            (None, Some(record)) => {
                let inserted = self
                    .collection
                    .insert_one(self.document(&s.key, &values(record)))
                    .await
                    .map_err(classify);
                match inserted {
                    Err(e) if e.class == FailureClass::Conflict => return Err(conflict()),
                    other => {
                        other?;
                    }
                }
            }
            (None, None) => {}
        }
        Ok(())
    }
}

impl Binding for MongoBinding {
    /// A sequence abandoned at the operation timeout leaves no transaction behind: the worker's
    /// next operations go to the database, not into a record held in memory.
    fn abandoned(&mut self) {
        self.txn = Held::Idle;
    }

    async fn read(&mut self, key: &str, fields: FieldSet, out: &mut Fields) -> Result<(), OpError> {
        out.clear();
        if let Some(s) = self.in_txn(key).await? {
            return s.read(fields, out);
        }
        let found = self
            .collection
            .find_one(doc! {"_id": key})
            .projection(self.projection(fields))
            .await
            .map_err(classify)?;
        let d = found.ok_or_else(|| not_found(key))?;
        self.fill(&d, fields, out)
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        let find = self
            .collection
            .find(doc! {"_id": {"$gte": start_key}})
            .sort(doc! {"_id": 1})
            .limit(count as i64);
        self.find_into(find, count, fields, out).await
    }

    /// One `find` of `{_id: {$in: keys}}`, its documents in one batch.
    async fn read_many(
        &mut self,
        keys: &[String],
        fields: FieldSet,
        out: &mut Vec<(String, Fields)>,
    ) -> Result<(), OpError> {
        let find = self.collection.find(doc! {"_id": {"$in": keys}});
        self.find_into(find, keys.len(), fields, out).await
    }

    async fn update(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let width = self.fields.len();
        if let Some(s) = self.in_txn(key).await? {
            return s.update(values, false, width);
        }
        let r = self
            .collection
            .update_one(doc! {"_id": key}, doc! {"$set": self.set_of(values)})
            .await
            .map_err(classify)?;
        // As YCSB: an update that matched nothing is "not found".
        if r.matched_count == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }

    /// One `update` command holding every record's `$set` (the command drivers' bulk writes
    /// send; the driver's own `bulkWrite` needs MongoDB 8.0): one round trip, ordered, at the
    /// collection's write concern. Not atomic: with a record missing the others are written and
    /// the batch is `not_found`.
    async fn update_batch(&mut self, keys: &[String], values: &[Fields]) -> Result<(), OpError> {
        let updates: Vec<Document> = keys
            .iter()
            .zip(values)
            .map(|(k, v)| doc! {"q": {"_id": k}, "u": {"$set": self.set_of(v)}})
            .collect();
        let namespace = self.collection.namespace();
        let mut command = doc! {"update": &namespace.coll, "updates": updates, "ordered": true};
        if let Some(wc) = self.collection.write_concern() {
            let wc = mongodb::bson::to_document(wc)
                .map_err(|e| OpError::new(FailureClass::Other, e.to_string()))?;
            command.insert("writeConcern", wc);
        }
        let reply = self
            ._client
            .database(&namespace.db)
            .run_command(command)
            .await
            .map_err(classify)?;
        let first_error = |field: &str| {
            let e = match reply.get(field)? {
                Bson::Array(errors) => errors.first()?.as_document()?,
                Bson::Document(e) => e,
                _ => return None,
            };
            let code = e.get_i32("code").unwrap_or(0);
            let message = e.get_str("errmsg").unwrap_or("a write error");
            Some(OpError::new(class_of_code(code), format!("{message} (code {code})")))
        };
        if let Some(e) = first_error("writeErrors").or_else(|| first_error("writeConcernError")) {
            return Err(e);
        }
        let matched = match reply.get("n") {
            Some(Bson::Int32(n)) => i64::from(*n),
            Some(Bson::Int64(n)) => *n,
            _ => 0,
        };
        if matched < keys.len() as i64 {
            return Err(OpError::new(
                FailureClass::NotFound,
                format!("{} of {} records of the batch not found", keys.len() as i64 - matched, keys.len()),
            ));
        }
        Ok(())
    }

    async fn insert(&mut self, key: &str, values: &Fields) -> Result<(), OpError> {
        let d = self.document(key, values);
        if self.upsert {
            self.collection
                .replace_one(doc! {"_id": key}, d)
                .upsert(true)
                .await
                .map_err(classify)?;
        } else {
            self.collection.insert_one(d).await.map_err(classify)?;
        }
        Ok(())
    }

    async fn insert_batch(&mut self, records: &[Operation]) -> Result<(), OpError> {
        if self.upsert {
            for r in records {
                self.insert(&r.key, &r.values).await?;
            }
            return Ok(());
        }
        let docs: Vec<Document> = records
            .iter()
            .map(|r| self.document(&r.key, &r.values))
            .collect();
        self.collection
            .insert_many(docs)
            .ordered(self.ordered_inserts)
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// A sequence's steps in one transaction: the document read at the first, changed in
    /// memory, written at the commit only if it is still the one read.
    async fn transaction_control(
        &mut self,
        control: crate::TransactionControl,
    ) -> Result<(), OpError> {
        match self.txn.control(control)? {
            Some((s, read)) => self.commit(s, read).await,
            None => Ok(()),
        }
    }

    async fn delete(&mut self, key: &str) -> Result<(), OpError> {
        if let Some(s) = self.in_txn(key).await? {
            return s.delete();
        }
        let r = self
            .collection
            .delete_one(doc! {"_id": key})
            .await
            .map_err(classify)?;
        if r.deleted_count == 0 {
            return Err(not_found(key));
        }
        Ok(())
    }
}
