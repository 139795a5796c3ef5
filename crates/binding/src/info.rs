//! What a binding declares about itself: its URL schemes, its options and its capabilities, each
//! declared once, in the binding's own module. The registry lists these declarations; `scalebench
//! bindings` prints them; each binding reads its option values through them, typed, once.

use std::collections::BTreeMap;

use crate::BindingError;

/// A binding option, settable as `-p <binding>.<name>=value` or in a property file.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
    /// The words the option takes (case-insensitive), shown with its help and checked when read
    /// ([`read_option`]); empty: a free value of the option's type.
    pub choices: &'static [&'static str],
}

/// The words of a yes/no option (a `bool` field).
pub const BOOL: &[&str] = &["true", "false"];

#[derive(Debug, Clone, Copy)]
pub struct BindingInfo {
    pub name: &'static str,
    pub schemes: &'static [&'static str],
    pub summary: &'static str,
    pub url_example: &'static str,
    pub options: OptionSet,
    /// The SQL that creates the benchmark table as `--create-schema` would, for deployments that
    /// create it themselves on every server (Bucardo replicates rows, not DDL); None: no SQL table.
    pub table_sql: Option<fn(&crate::Schema) -> String>,
    /// Keeps the records it is given (the null binding keeps none: nothing to verify).
    pub stores_data: bool,
    /// Creates its table on a load without `--create-schema` (an embedded file the run owns).
    pub creates_table_on_load: bool,
    /// Creates a workload file's secondary indexes with the table.
    pub secondary_indexes: bool,
    /// Which columns a workload file's `increment` adds to in the database, atomically.
    pub increments: Increments,
    /// The language of the statements a workload file's operations bring (`sql`, `cql`) that it
    /// runs; `None`: it runs none, only the key-value operations.
    pub statements: Option<scalebench_workload::statement::Language>,
    /// How a workload file's sequence with `transaction = true` runs on it.
    pub transactions: Transactions,
    /// Where reads go and what decides whether they see the latest acknowledged write: the options
    /// that route them (replicas, consistency levels) and what this machine cannot show
    /// (`scalebench bindings NAME`, docs/consistency.md).
    pub reads: &'static str,
    /// Sends every request of a worker to one node of its choosing when asked
    /// ([`crate::BindingConfig::worker_nodes`]); false: its requests go where its routing sends
    /// them (a key's owner, a gateway), the workers keep their fixed shares unbound.
    pub binds_workers_to_nodes: bool,
    /// What `--pipeline N` does on it ([`crate::pipeline`]).
    pub pipelining: Pipelining,
    /// The captures (`scalebench replay`, by format name) whose statements it runs as written
    /// ([`crate::Binding::statement_text`]): a database log of its own kind.
    pub replays_statements: &'static [&'static str],
}

impl BindingInfo {
    /// What a store that keeps records and runs only the key-value operations declares: no SQL
    /// table, no statements, indexes, sequences in transactions or increments in the database.
    /// A binding names itself and what it has beyond this (`..BindingInfo::KEY_VALUE_STORE`).
    pub const KEY_VALUE_STORE: BindingInfo = BindingInfo {
        name: "",
        schemes: &[],
        summary: "",
        url_example: "",
        options: OptionSet::NONE,
        table_sql: None,
        stores_data: true,
        creates_table_on_load: false,
        secondary_indexes: false,
        increments: Increments::None,
        statements: None,
        transactions: Transactions::None,
        reads: "",
        binds_workers_to_nodes: false,
        pipelining: Pipelining::Not(
            "its client waits for each reply before it sends the next request",
        ),
        replays_statements: &[],
    };

    /// What a SQL database declares: a key-value store that also runs the workload's SQL
    /// statements, sequences between BEGIN and COMMIT, increments of numbers and decimals in the
    /// database, and secondary indexes.
    pub const SQL_DATABASE: BindingInfo = BindingInfo {
        secondary_indexes: true,
        increments: Increments::NumbersAndDecimals,
        statements: Some(scalebench_workload::statement::Language::Sql),
        transactions: Transactions::Begin,
        ..BindingInfo::KEY_VALUE_STORE
    };
}

/// Whether N operations can be in flight on one connection (`--pipeline N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipelining {
    /// No: the protocol or its client answers one request per connection at a time (why).
    Not(&'static str),
    /// N slots share one connection, which carries their requests without waiting for replies.
    Shared,
    /// As `Shared`, outside transactions: BEGIN ... COMMIT holds its connection, so a workload
    /// with a transaction or a batch (one transaction) is refused with `--pipeline`.
    OutsideTransactions,
    /// Its driver already puts every slot of a worker thread on connections it shares, each
    /// carrying many requests at once: `--concurrency` is the depth.
    Driver,
}

impl Pipelining {
    /// What `--pipeline N` does, as `scalebench bindings NAME` says it.
    pub fn words(self) -> String {
        match self {
            Pipelining::Shared => "--pipeline N: N in-flight operations share one connection".into(),
            Pipelining::OutsideTransactions => "--pipeline N: N in-flight operations share one connection (not with a workload's transactions or batches)".into(),
            Pipelining::Driver => "no --pipeline: the driver already multiplexes every slot of a thread on its connections (--concurrency is the depth)".into(),
            Pipelining::Not(why) => format!("no --pipeline: {why}"),
        }
    }
}

/// How a binding runs a sequence of operations on one key as one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transactions {
    /// It runs none: such a sequence is refused before anything connects.
    None,
    /// BEGIN, the steps, COMMIT (SQL); a failed step rolls back.
    Begin,
    /// The record is read once, the steps change it in memory, and it is written once if nobody
    /// changed it meanwhile (optimistic: else the sequence fails as a conflict); a failed step
    /// writes nothing. Redis compares and writes in one script, etcd in a transaction on the
    /// record's revision, Cassandra in a lightweight transaction conditional on every column,
    /// MongoDB by a replace or delete whose filter is every field as read.
    OneRecord,
}

/// The atomic increments a binding runs (`kind = "increment"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increments {
    /// None: it has no call that adds in the database (a read-modify-write reads, then writes).
    None,
    /// Of int, bigint and double columns (Redis's HINCRBY and HINCRBYFLOAT).
    Numbers,
    /// Of decimal columns too, exactly (SQL's `SET c = c + n`).
    NumbersAndDecimals,
}

/// What a binding option's value may be: how its text parses, and the words it takes when it is a
/// choice. Implemented for `bool`, `u64`, `String`, `Duration` (humantime: `100ms`, `30s`), [`HostList`]
/// and every [`option_choice!`] enum; a binding may add its own (MongoDB's write acknowledgment).
pub trait OptionValue: Sized {
    /// The words a choice takes (case-insensitive); empty: any text that parses.
    const CHOICES: &'static [&'static str] = &[];
    /// What the value must be, for the error that names a bad one.
    const EXPECTED: &'static str;
    fn parse_option(text: &str) -> Option<Self>;
}

impl OptionValue for bool {
    const CHOICES: &'static [&'static str] = BOOL;
    const EXPECTED: &'static str = "true or false";
    fn parse_option(text: &str) -> Option<Self> {
        BOOL.iter()
            .position(|w| w.eq_ignore_ascii_case(text))
            .map(|i| i == 0)
    }
}

impl OptionValue for u64 {
    const EXPECTED: &'static str = "a non-negative integer";
    fn parse_option(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

impl OptionValue for String {
    const EXPECTED: &'static str = "text";
    fn parse_option(text: &str) -> Option<Self> {
        Some(text.to_string())
    }
}

impl OptionValue for std::time::Duration {
    const EXPECTED: &'static str = "a duration such as 100ms, 30s or 0";
    fn parse_option(text: &str) -> Option<Self> {
        humantime::parse_duration(text.trim()).ok()
    }
}

/// One `host:port` of a [`HostList`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl std::fmt::Display for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// An option naming other servers, `host:port,...` (empty: none); an IPv6 host in brackets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostList(pub Vec<HostPort>);

impl OptionValue for HostList {
    const EXPECTED: &'static str = "host:port,... (empty: none)";
    fn parse_option(text: &str) -> Option<Self> {
        text.split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(|address| {
                let (host, port) = address.rsplit_once(':')?;
                let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
                let bare = host.trim_start_matches('[').trim_end_matches(']');
                let valid = !bare.is_empty()
                    && (host.starts_with('[') == host.ends_with(']'))
                    && !bare.contains(['/', '?', '#', '@', ' ']);
                valid.then(|| HostPort {
                    host: host.to_string(),
                    port,
                })
            })
            .collect::<Option<Vec<_>>>()
            .map(HostList)
    }
}

/// Option `name` of `binding` read as a `T`: the value given, else `default` (the declaration's);
/// the error names binding, option and value, and a choice's words.
pub fn read_option<T: OptionValue>(
    binding: &str,
    name: &str,
    given: &BTreeMap<String, String>,
    default: &str,
) -> Result<T, BindingError> {
    let text = given.get(name).map(String::as_str).unwrap_or(default);
    T::parse_option(text).ok_or_else(|| {
        let expected = if T::CHOICES.is_empty() {
            T::EXPECTED.to_string()
        } else {
            format!("one of {}", T::CHOICES.join(", "))
        };
        BindingError::Config(format!(
            "invalid value '{text}' for property '{binding}.{name}': expected {expected}"
        ))
    })
}

/// Declares a choice option's type: an enum whose variants are written once with their word. Gives
/// `WORDS`, `word()` and the [`OptionValue`] that parses a word case-insensitively.
// Used by the etcd and HBase bindings: unused in a build without their features.
#[allow(unused_macros)]
macro_rules! option_choice {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $( $variant:ident = $word:literal, )+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name { $( $variant, )+ }

        impl $name {
            #[allow(dead_code)]
            pub const WORDS: &'static [&'static str] = &[$( $word ),+];

            /// The word this value is written as (in options, and where the database takes it).
            #[allow(dead_code)]
            pub fn word(self) -> &'static str {
                match self { $( Self::$variant => $word, )+ }
            }
        }

        impl $crate::info::OptionValue for $name {
            const CHOICES: &'static [&'static str] = Self::WORDS;
            const EXPECTED: &'static str = "one of its words";
            fn parse_option(text: &str) -> Option<Self> {
                $( if text.eq_ignore_ascii_case($word) { return Some(Self::$variant); } )+
                None
            }
        }
    };
}

/// Declares a binding's options as one typed struct (as Apache OpenDAL's service configs do): each
/// field with its type, its default (as written with `-p`) and its help. Gives the struct, its
/// [`OptionSet`] for the binding's [`BindingInfo`], and `read`, which reads every value once.
macro_rules! binding_options {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $( $field:ident : $ty:ty = $default:literal => $help:literal, )*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        $vis struct $name { $( pub $field: $ty, )* }

        impl $name {
            /// The declarations `scalebench bindings` lists and [`$crate::registry::open`] checks.
            pub const SET: $crate::info::OptionSet = $crate::info::OptionSet {
                declared: &[$(
                    $crate::info::OptionInfo {
                        name: stringify!($field),
                        default: $default,
                        help: $help,
                        choices: <$ty as $crate::info::OptionValue>::CHOICES,
                    },
                )*],
                check: |binding, given| Self::read(binding, given).map(drop),
            };

            /// Every option's value: the one given (`<binding>.<option>` properties, prefix
            /// removed), else its declared default.
            #[allow(unused_variables)]
            pub fn read(
                binding: &str,
                given: &std::collections::BTreeMap<String, String>,
            ) -> Result<Self, $crate::BindingError> {
                Ok(Self { $(
                    $field: $crate::info::read_option(binding, stringify!($field), given, $default)?,
                )* })
            }
        }
    };
}

/// A binding's options as declared by [`binding_options!`]: the list, and the check that reads
/// every value (so a bad value is refused before anything connects).
#[derive(Debug, Clone, Copy)]
pub struct OptionSet {
    pub declared: &'static [OptionInfo],
    pub check: fn(&str, &BTreeMap<String, String>) -> Result<(), BindingError>,
}

impl OptionSet {
    /// For a binding without options.
    pub const NONE: OptionSet = OptionSet {
        declared: &[],
        check: |_, _| Ok(()),
    };
}

/// What binding `name` takes for TLS, in its own client's words (`scalebench bindings NAME`,
/// docs/bindings.md#tls); one place for every binding, all on one rustls stack (src/tls.rs).
pub fn tls_options(name: &str) -> &'static str {
    match name {
        "postgres" => "libpq's URL parameters sslmode (disable, allow, prefer: the default, require, verify-ca, verify-full), sslrootcert (a PEM file, or system), sslcert and sslkey, or PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY, with libpq's defaults in ~/.postgresql; require without a root certificate does not verify, with one it checks the chain as verify-ca",
        "redis" => "rediss:// (rediss+cluster:// for a cluster), verified against the public CAs or the URL parameter cacert=FILE, with cert=FILE&key=FILE for a client certificate and insecure for no verification (redis-cli's --cacert, --cert, --key, --insecure)",
        "mysql" => "the mysql client's names as URL parameters: ssl-mode (DISABLED, PREFERRED: the default, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), ssl-ca, ssl-cert and ssl-key; PREFERRED and REQUIRED do not verify, ssl-ca without ssl-mode means VERIFY_CA",
        "etcd" => "etcdctl's names as URL parameters: cacert=FILE (the endpoints become https://, chain and host name verified), cert and key for a client certificate, tls alone for the public CAs",
        "cassandra" => "cqlsh's names as URL parameters: ssl=true (--ssl; tls too), certfile=FILE (the CA; cacert too; else SSL_CERTFILE, else the public CAs), validate (true: the default, chain and the node's IP address, which the certificate must name; ca: the chain only; false: none; else SSL_VALIDATE), usercert and userkey for a client certificate (cert, key too); a file parameter alone turns TLS on",
        "mongodb" => "the driver's own URL options tls=true, tlsCAFile, tlsCertificateKeyFile, tlsAllowInvalidCertificates",
        "sqlite" | "null" => "none (no network)",
        _ => "none: plain TCP only",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_are_written_with_their_unit() {
        let d = |t: &str| Duration::parse_option(t);
        assert_eq!(d("100ms"), Some(Duration::from_millis(100)));
        assert_eq!(d("30s"), Some(Duration::from_secs(30)));
        assert_eq!(d(" 1m 5s "), Some(Duration::from_secs(65)));
        assert_eq!(d("0"), Some(Duration::ZERO));
        for bad in ["100", "soon", "-1s", ""] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn host_lists_are_host_port_pairs() {
        let hosts = HostList::parse_option(" 10.0.0.2:5432, db-3:6379 ,[::1]:5433,").unwrap();
        let written: Vec<String> = hosts.0.iter().map(HostPort::to_string).collect();
        assert_eq!(written, ["10.0.0.2:5432", "db-3:6379", "[::1]:5433"]);
        assert_eq!(HostList::parse_option(""), Some(HostList::default()));
        for bad in [
            "db",
            "db:",
            "db:0",
            "db:65536",
            ":5432",
            "a/b:1",
            "user@db:1",
            "[::1:5",
        ] {
            assert_eq!(HostList::parse_option(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_bad_value_is_named_with_what_was_expected() {
        let given = BTreeMap::from([("wait_timeout".to_string(), "50".to_string())]);
        let e = read_option::<Duration>("redis", "wait_timeout", &given, "100ms").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value '50' for property 'redis.wait_timeout': expected a duration such as 100ms, 30s or 0"
        );
    }
}
