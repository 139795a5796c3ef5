//! Every property scalebench reads (YCSB's names and our own), declared once: its kind, its default,
//! what it shapes and what it does. Code reads a property through its declaration
//! (`p.integer(&RECORDCOUNT)`), `scalebench properties` lists the declarations and
//! docs/workloads.md holds their table ([`markdown_table`]), so help, docs and code cannot disagree.
//! A binding's options (`<binding>.<option>`) are declared by the binding (`scalebench bindings`).

/// What a property shapes: two property sets that differ only in run-phase properties load the
/// same records (experiments share one load between them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shapes {
    /// The loaded records (count, fields, sizes, keys): another value needs another load.
    Data,
    /// Only the run phase's operations: which operation, which key, how much of a record.
    RunPhase,
    /// How the client runs (threads, rate, length, batches, what it prints).
    Client,
    /// A YCSB client property that has no effect here: its help says what to use instead.
    NoEffect,
}

impl Shapes {
    pub fn describe(self) -> &'static str {
        match self {
            Shapes::Data => "data",
            Shapes::RunPhase => "run",
            Shapes::Client => "client",
            Shapes::NoEffect => "no effect",
        }
    }
}

/// The values a property takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative integer.
    Integer,
    /// A finite number.
    Number,
    /// A number between 0 and 1.
    Proportion,
    /// true or false (also yes/no, on/off, 1/0).
    Bool,
    /// One of these words (case-insensitive).
    Choice(&'static [&'static str]),
    Text,
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Integer => "integer".into(),
            Kind::Number => "number".into(),
            Kind::Proportion => "0..1".into(),
            Kind::Bool => "true|false".into(),
            Kind::Choice(words) => words.join("|"),
            Kind::Text => "text".into(),
        }
    }
}

/// What a property is when it is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unset {
    /// This value.
    Value(&'static str),
    /// Computed from other values (said in words).
    Derived(&'static str),
    /// Nothing: the property is optional.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropertyInfo {
    pub name: &'static str,
    pub shapes: Shapes,
    pub kind: Kind,
    pub default: Unset,
    pub help: &'static str,
}

impl PropertyInfo {
    /// The declared default as written (`""` when derived or none).
    pub fn default_text(&self) -> &'static str {
        match self.default {
            Unset::Value(v) => v,
            _ => "",
        }
    }

    /// The default in words, for listings.
    pub fn describe_default(&self) -> String {
        match self.default {
            Unset::Value(v) => v.to_string(),
            Unset::Derived(how) => how.to_string(),
            Unset::None => "-".to_string(),
        }
    }
}

/// Declares each property as a constant and lists them all in [`PROPERTIES`], in this order.
macro_rules! properties {
    ($($id:ident = $name:literal, $shapes:ident, $kind:expr, $default:expr, $help:literal;)*) => {
        $(
            pub const $id: PropertyInfo = PropertyInfo {
                name: $name,
                shapes: Shapes::$shapes,
                kind: $kind,
                default: $default,
                help: $help,
            };
        )*
        /// Every declared property, in the order of the docs' table.
        pub const PROPERTIES: &[PropertyInfo] = &[$($id),*];
    };
}

use Kind::{Bool, Choice, Integer, Number, Proportion, Text};
use Unset::{Derived, Value};

properties! {
    WORKLOAD = "workload", Data, Text, Unset::None,
        "YCSB's workload class: accepted for YCSB property files (CoreWorkload is the one workload)";
    RECORDCOUNT = "recordcount", Data, Integer, Value("0"),
        "records the load writes and the run chooses among (0: 2^31-1, as YCSB; at most 2^48)";
    OPERATIONCOUNT = "operationcount", RunPhase, Integer, Value("0"),
        "operations of a run (0: until --duration or maxexecutiontime); --operations overrides";
    TABLE = "table", Data, Text, Value("usertable"),
        "the table (collection, key prefix) records go to: a letter, then letters, digits and '_', at most 48, no word SQL or CQL reserves (order, user, ...)";
    KEYCOLUMN = "keycolumn", Data, Text, Unset::None,
        "the key's column in SQL and CQL tables: a letter, then letters, digits and '_' (default YCSB's YCSB_KEY and y_id; a workload file's record.key.column; our extension)";
    FIELDCOUNT = "fieldcount", Data, Integer, Value("10"),
        "fields per record (1 to 1000)";
    RECORDTYPE = "recordtype", Data, Choice(&["ycsb", "measurement"]), Value("ycsb"),
        "ycsb: text fields; measurement: Lourenco's typed record (fieldcount, fieldlength and insertorder then do not apply)";
    COLUMNS = "columns", Data, Text, Unset::None,
        "a declared record's typed columns and their generators, in JSON (a workload file's [[record.column]] writes it; fieldcount and fieldlength then do not apply, recordtype=measurement is refused beside it; our extension)";
    INDEXES = "indexes", Data, Text, Unset::None,
        "a workload file's secondary indexes in JSON (its [[record.index]] writes it): created with the table where the binding has them (our extension)";
    VALUESEED = "valueseed", Data, Integer, Value("0"),
        "a declared record's values are a function of this seed and the key number: the same seed, the same data (our extension)";
    FIELDNAMEPREFIX = "fieldnameprefix", Data, Text, Value("field"),
        "field names are this and a number: letters, digits and '_'";
    FIELDLENGTH = "fieldlength", Data, Integer, Value("100"),
        "bytes per field, the longest with a distribution (at most 16 MiB; a record at most 64 MiB)";
    MINFIELDLENGTH = "minfieldlength", Data, Integer, Value("1"),
        "the shortest field with a distribution";
    FIELDLENGTHDISTRIBUTION = "fieldlengthdistribution", Data,
        Choice(&["constant", "uniform", "zipfian", "lognormal"]), Value("constant"),
        "field lengths between minfieldlength and fieldlength (lognormal: our extension, clamped to them)";
    FIELDLENGTHMEDIAN = "fieldlengthmedian", Data, Number, Derived("fieldlength / 10"),
        "lognormal's median length (1 to fieldlength)";
    FIELDLENGTHSIGMA = "fieldlengthsigma", Data, Number, Value("1"),
        "lognormal's sigma";
    READALLFIELDS = "readallfields", RunPhase, Bool, Value("true"),
        "reads fetch every field (false: one field)";
    READALLFIELDSBYNAME = "readallfieldsbyname", RunPhase, Bool, Value("false"),
        "YCSB 0.17's: accepted for YCSB property files, no effect here";
    WRITEALLFIELDS = "writeallfields", RunPhase, Bool, Value("false"),
        "updates write every field (false: one field)";
    DATAINTEGRITY = "dataintegrity", Data, Bool, Value("false"),
        "values are a function of key and field and every read checks them (constant field lengths)";
    OPERATIONS = "operations", RunPhase, Text, Unset::None,
        "a workload file's named operations in JSON (its [[run.operation]] writes it): each measured under its own name, with its weight, columns and expected result; the proportions then do not apply (our extension)";
    READPROPORTION = "readproportion", RunPhase, Proportion, Value("0.95"),
        "share of reads";
    UPDATEPROPORTION = "updateproportion", RunPhase, Proportion, Value("0.05"),
        "share of updates";
    INSERTPROPORTION = "insertproportion", RunPhase, Proportion, Value("0"),
        "share of inserts (from transactioninsertstart on)";
    SCANPROPORTION = "scanproportion", RunPhase, Proportion, Value("0"),
        "share of scans";
    READMODIFYWRITEPROPORTION = "readmodifywriteproportion", RunPhase, Proportion, Value("0"),
        "share of read-modify-writes";
    READMODIFYWRITEMODE = "readmodifywritemode", RunPhase, Choice(&["replace", "append"]), Value("replace"),
        "a read-modify-write replaces what it read, or appends to each field it writes (our extension)";
    APPENDLENGTH = "appendlength", RunPhase, Integer, Value("100"),
        "append mode: random characters appended to each field (at most 16 MiB; wins over appendtext)";
    APPENDTEXT = "appendtext", RunPhase, Text, Unset::None,
        "append mode without appendlength: this text is appended (Dory's \"1\", as `documents` does)";
    DELETEPROPORTION = "deleteproportion", RunPhase, Proportion, Value("0"),
        "share of deletes (our extension)";
    REQUESTDISTRIBUTION = "requestdistribution", RunPhase,
        Choice(&["uniform", "zipfian", "latest", "hotspot", "sequential", "exponential"]), Value("uniform"),
        "which keys operations choose";
    MINSCANLENGTH = "minscanlength", RunPhase, Integer, Value("1"),
        "the shortest scan (records)";
    MAXSCANLENGTH = "maxscanlength", RunPhase, Integer, Value("1000"),
        "the longest scan (records)";
    SCANLENGTHDISTRIBUTION = "scanlengthdistribution", RunPhase, Choice(&["uniform", "zipfian"]), Value("uniform"),
        "scan lengths between minscanlength and maxscanlength";
    INSERTSTART = "insertstart", Data, Integer, Value("0"),
        "the first record this load writes (a client's section)";
    INSERTCOUNT = "insertcount", Data, Integer, Derived("recordcount - insertstart"),
        "records this load writes";
    TRANSACTIONINSERTSTART = "transactioninsertstart", RunPhase, Integer, Derived("recordcount"),
        "the first key a run inserts (at least recordcount: a later run or a client's section inserts past earlier ones)";
    WRITEKEYPARTITIONS = "writekeypartitions", RunPhase, Integer, Value("1"),
        "N > 1: updates and read-modify-writes of the loaded records go only to key numbers = writekeypartition (mod N) (set per client by --verify-writes from N clients: no two clients write one key; our extension)";
    WRITEKEYPARTITION = "writekeypartition", RunPhase, Integer, Value("0"),
        "this client's residue for writekeypartitions (0 to N - 1)";
    ZEROPADDING = "zeropadding", Data, Integer, Value("1"),
        "key numbers are zero-padded to this many digits (at most 64)";
    INSERTORDER = "insertorder", Data, Choice(&["hashed", "ordered", "uuid"]), Value("hashed"),
        "keys in hashed or numeric order, or UUIDs made from the key number (uuid: our extension)";
    KEYPREFIX = "keyprefix", Data, Text, Value("user"),
        "what hashed and ordered keys begin with: letters, digits and '_' (our extension)";
    HOTSPOTDATAFRACTION = "hotspotdatafraction", RunPhase, Proportion, Value("0.2"),
        "hotspot: the share of keys that is hot";
    HOTSPOTOPNFRACTION = "hotspotopnfraction", RunPhase, Proportion, Value("0.8"),
        "hotspot: the share of operations on hot keys";
    EXPONENTIAL_PERCENTILE = "exponential.percentile", RunPhase, Number, Value("95"),
        "exponential: the percentile of operations within exponential.frac of the newest keys (0 to 100)";
    EXPONENTIAL_FRAC = "exponential.frac", RunPhase, Number, Value("0.8571428571"),
        "exponential: that fraction of the records";
    INSERTION_RETRY_LIMIT = "core_workload_insertion_retry_limit", Data, Integer, Value("0"),
        "retries of a failed insert in the load";
    INSERTION_RETRY_INTERVAL = "core_workload_insertion_retry_interval", Data, Integer, Value("3"),
        "seconds between those retries";
    THREADCOUNT = "threadcount", Client, Integer, Value("1"),
        "client threads (1 to 4096; threads x --concurrency at most 100,000); --threads overrides";
    TARGET = "target", Client, Number, Value("0"),
        "operations per second of all threads in the run phase (0: as fast as they go; else 0.001 to 1e9); --target overrides (the load's: loadtarget)";
    RATEPROFILE = "rateprofile", Client, Text, Unset::None,
        "open loop at a rate that changes over the run, as --rate-profile (a workload file's run.rate_profile; --rate-profile and --target win; our extension)";
    LOADTARGET = "loadtarget", Client, Number, Value("0"),
        "records per second the load inserts, all threads (0: as fast as they go); the load command's --target overrides (a workload file's load.target; our extension)";
    LOADRATEPROFILE = "loadrateprofile", Client, Text, Unset::None,
        "the load inserts at a rate that changes, records per second, as the load command's --rate-profile (a workload file's load.rate_profile; our extension)";
    MAXEXECUTIONTIME = "maxexecutiontime", Client, Integer, Value("0"),
        "seconds the run phase lasts at most (0: no limit; a load is capped only by the load command's --duration); --duration overrides";
    HDRHISTOGRAM_PERCENTILES = "hdrhistogram.percentiles", Client, Text, Value("95,99"),
        "the percentiles --format ycsb prints";
    BATCHSIZE = "batchsize", Client, Integer, Value("1"),
        "records per insert call in the load, where the binding batches; --batch-size overrides";
    DB = "db", NoEffect, Text, Unset::None,
        "the binding is chosen by --db URL";
    EXPORTER = "exporter", NoEffect, Text, Unset::None,
        "use --format and --output";
    EXPORTFILE = "exportfile", NoEffect, Text, Unset::None,
        "use --output";
    MEASUREMENTTYPE = "measurementtype", NoEffect, Text, Unset::None,
        "latencies are always HdrHistograms";
    MEASUREMENT_INTERVAL = "measurement.interval", NoEffect, Text, Unset::None,
        "open-loop runs always report both service time and intended-start latency";
    MEASUREMENT_TRACKJVM = "measurement.trackjvm", NoEffect, Text, Unset::None,
        "not a JVM";
    STATUS_INTERVAL = "status.interval", NoEffect, Text, Unset::None,
        "use --status-interval";
    DOTRANSACTIONS = "dotransactions", NoEffect, Text, Unset::None,
        "use the load or run command";
    HDRHISTOGRAM_FILEOUTPUT = "hdrhistogram.fileoutput", NoEffect, Text, Unset::None,
        "use --hdr-log";
    HDRHISTOGRAM_OUTPUT_PATH = "hdrhistogram.output.path", NoEffect, Text, Unset::None,
        "use --hdr-log";
    HISTOGRAM_BUCKETS = "histogram.buckets", NoEffect, Text, Unset::None,
        "latencies are always HdrHistograms";
    TIMESERIES_GRANULARITY = "timeseries.granularity", NoEffect, Text, Unset::None,
        "use --interval";
}

/// The declaration of `name`, if scalebench declares it.
pub fn find(name: &str) -> Option<&'static PropertyInfo> {
    PROPERTIES.iter().find(|p| p.name == name)
}

/// The properties each client of a distributed run is given its own share of (its key range, its
/// operations, its section of insert keys): they differ between the clients' results.
pub const CLIENT_SHARES: &[PropertyInfo] = &[
    INSERTSTART,
    INSERTCOUNT,
    OPERATIONCOUNT,
    TRANSACTIONINSERTSTART,
    WRITEKEYPARTITION,
];

/// Whether property `name` defines what a run measures, its data or its operations: the clients
/// of one run agree on it (the rendezvous compares it, `merge` refuses results that differ in it).
/// A declared property does when it shapes the data or the run phase, not how each client runs
/// (threads, rate, length, what it prints); one not declared here (a binding's option, a user's own
/// property) is taken to, since nothing says it does not. `workload` and `readallfieldsbyname`,
/// accepted for YCSB's files, change nothing and do not.
pub fn defines_the_run(name: &str) -> bool {
    find(name)
        .is_none_or(|p| matches!(p.shapes, Shapes::Data | Shapes::RunPhase) && !has_no_effect(p))
}

/// Whether a declared property changes nothing a run does (`workload` names YCSB's one workload
/// class; `readallfieldsbyname` is accepted for YCSB's files and has no effect here).
fn has_no_effect(info: &PropertyInfo) -> bool {
    info.shapes == Shapes::NoEffect
        || info.name == WORKLOAD.name
        || info.name == READALLFIELDSBYNAME.name
}

/// Every declared property in aligned columns: name, default, what it shapes, help and values.
pub fn listing() -> String {
    let width = |f: &dyn Fn(&PropertyInfo) -> usize| PROPERTIES.iter().map(f).max().unwrap_or(0);
    let name_w = width(&|p| p.name.len());
    let default_w = width(&|p| p.describe_default().len());
    let mut out = format!(
        "Properties read (-p NAME=VALUE or in a property file; binding options: `scalebench bindings NAME`):\n  {:<name_w$}  {:<default_w$}  {:<9}  what it does (values)\n",
        "NAME", "DEFAULT", "SHAPES"
    );
    for p in PROPERTIES {
        out.push_str(&format!(
            "  {:<name_w$}  {:<default_w$}  {:<9}  {} ({})\n",
            p.name,
            p.describe_default(),
            p.shapes.describe(),
            p.help,
            p.kind.describe()
        ));
    }
    out
}

/// The table of every declared property, as docs/workloads.md holds it (`scalebench properties
/// --markdown` prints it).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| property | values | default | shapes | what it does |\n|---|---|---|---|---|\n",
    );
    for p in PROPERTIES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            p.name,
            p.kind.describe(),
            p.describe_default(),
            p.shapes.describe(),
            p.help.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Properties;

    #[test]
    fn each_property_is_declared_once_and_its_default_is_a_value_of_its_kind() {
        let mut names: Vec<&str> = PROPERTIES.iter().map(|p| p.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a property declared twice");
        // Read from nothing, every property with a default gives that default through the reader
        // of its kind: a default that does not parse would fail every run that leaves it out.
        let empty = Properties::new();
        for p in PROPERTIES {
            let Unset::Value(v) = p.default else {
                continue;
            };
            match p.kind {
                Kind::Integer => assert_eq!(empty.integer(p).unwrap().to_string(), v, "{}", p.name),
                Kind::Number => assert!(empty.number(p).is_ok(), "{}", p.name),
                Kind::Proportion => assert!(empty.proportion(p).is_ok(), "{}", p.name),
                Kind::Bool => assert_eq!(empty.flag(p).unwrap().to_string(), v, "{}", p.name),
                Kind::Choice(_) => assert_eq!(empty.choice(p).unwrap(), v, "{}", p.name),
                Kind::Text => assert_eq!(empty.text(p), v),
            }
        }
    }

    #[test]
    fn the_docs_hold_the_table_of_the_declarations() {
        let docs = include_str!("../../../docs/workloads.md");
        assert!(
            docs.contains(&markdown_table()),
            "docs/workloads.md's property table differs from the declarations: replace it with \
             the output of `scalebench properties --markdown`"
        );
    }
}
