//! The binding registry: which URL scheme opens which binding, and what options each takes.
//! Adding a database: one module, one [`BindingInfo`] in [`bindings`], one arm in [`open`].

use crate::{BindingConfig, BindingError, BindingFactory};

/// A binding option, settable as `-p <binding>.<name>=value` or in a property file.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct BindingInfo {
    pub name: &'static str,
    pub schemes: &'static [&'static str],
    pub summary: &'static str,
    pub url_example: &'static str,
    pub options: &'static [OptionInfo],
    /// The SQL that creates the benchmark table as `--create-schema` would, for deployments that
    /// create it themselves on every server (Bucardo replicates rows, not DDL); None: no SQL table.
    pub table_sql: Option<fn(&crate::Schema) -> String>,
    /// Keeps the records it is given (the null binding keeps none: nothing to verify).
    pub stores_data: bool,
    /// Creates its table on a load without `--create-schema` (an embedded file the run owns).
    pub creates_table_on_load: bool,
}

/// The bindings compiled into this build.
pub fn bindings() -> Vec<BindingInfo> {
    #[allow(unused_mut)] // mutated only when optional bindings are compiled in
    let mut all = vec![crate::null::INFO];
    #[cfg(feature = "sqlite")]
    all.push(crate::sqlite::INFO);
    #[cfg(feature = "postgres")]
    all.push(crate::postgres::INFO);
    #[cfg(feature = "redis")]
    all.push(crate::redis::INFO);
    #[cfg(feature = "mysql")]
    all.push(crate::mysql::INFO);
    #[cfg(feature = "etcd")]
    all.push(crate::etcd::INFO);
    #[cfg(feature = "cassandra")]
    all.push(crate::cassandra::INFO);
    #[cfg(feature = "mongodb")]
    all.push(crate::mongodb::INFO);
    #[cfg(feature = "hbase")]
    all.push(crate::hbase::INFO);
    all
}

pub fn find(name: &str) -> Option<BindingInfo> {
    bindings().into_iter().find(|b| b.name == name)
}

pub fn for_scheme(scheme: &str) -> Option<BindingInfo> {
    bindings().into_iter().find(|b| b.schemes.contains(&scheme))
}

/// Why no binding of this build takes URL scheme `scheme`, with what it could do instead.
pub fn no_binding(scheme: &str) -> String {
    if scheme == "etcd" {
        return "the etcd binding is not in this build: build with the default features (or `--features etcd`)".into();
    }
    let known: Vec<String> = bindings()
        .iter()
        .flat_map(|b| b.schemes.iter().map(|s| format!("{s}://")))
        .collect();
    format!(
        "no binding for URL scheme '{scheme}://' in this build (available: {})",
        known.join(", ")
    )
}

/// Receives the opened factory with its concrete type, so execution is compiled per binding
/// (static dispatch on the hot path).
pub trait FactoryVisitor {
    type Output;
    fn visit<F: BindingFactory>(self, factory: F) -> Self::Output;
}

/// Opens the binding named by the URL's scheme and hands it to `visitor`.
/// Every option is one the binding has (their values are checked when it opens).
pub fn check_options(
    info: &BindingInfo,
    options: &std::collections::BTreeMap<String, String>,
) -> Result<(), BindingError> {
    match options
        .keys()
        .find(|key| !info.options.iter().any(|o| o.name == key.as_str()))
    {
        Some(key) => Err(BindingError::Config(format!(
            "unknown option '{}.{key}' (see `scalebench bindings {}`)",
            info.name, info.name
        ))),
        None => Ok(()),
    }
}

pub fn open<V: FactoryVisitor>(
    config: BindingConfig,
    visitor: V,
) -> Result<V::Output, BindingError> {
    let scheme = config.url.scheme().to_string();
    let info = for_scheme(&scheme).ok_or_else(|| BindingError::Config(no_binding(&scheme)))?;
    check_options(&info, &config.options)?;
    match info.name {
        "null" => Ok(visitor.visit(crate::null::NullFactory::open(&config)?)),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(visitor.visit(crate::sqlite::SqliteFactory::open(&config)?)),
        #[cfg(feature = "postgres")]
        "postgres" => Ok(visitor.visit(crate::postgres::PostgresFactory::open(&config)?)),
        #[cfg(feature = "redis")]
        "redis" => Ok(visitor.visit(crate::redis::RedisFactory::open(&config)?)),
        #[cfg(feature = "mysql")]
        "mysql" => Ok(visitor.visit(crate::mysql::MysqlFactory::open(&config)?)),
        #[cfg(feature = "etcd")]
        "etcd" => Ok(visitor.visit(crate::etcd::EtcdFactory::open(&config)?)),
        #[cfg(feature = "cassandra")]
        "cassandra" => Ok(visitor.visit(crate::cassandra::CassandraFactory::open(&config)?)),
        #[cfg(feature = "mongodb")]
        "mongodb" => Ok(visitor.visit(crate::mongodb::MongoFactory::open(&config)?)),
        #[cfg(feature = "hbase")]
        "hbase" => Ok(visitor.visit(crate::hbase::HbaseFactory::open(&config)?)),
        other => Err(BindingError::Config(format!(
            "binding '{other}' is registered but cannot be opened"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each option is declared once, and what a binding reads without a value is that declaration's
    /// default (the one `scalebench bindings` shows).
    #[test]
    fn options_are_declared_once_and_read_with_their_declared_default() {
        let none = crate::BindingConfig {
            url: crate::DbUrl::parse("null://").unwrap(),
            options: Default::default(),
            schema: crate::Schema::of(
                &scalebench_workload::builtin::builtin_with("a", &[]).unwrap(),
            ),
            create_schema: false,
            drop_schema: false,
            cancel: Default::default(),
            connect_timeout: crate::DEFAULT_CONNECT_TIMEOUT,
        };
        for b in bindings() {
            for (i, o) in b.options.iter().enumerate() {
                assert!(
                    !b.options[..i].iter().any(|p| p.name == o.name),
                    "{}.{} is declared twice",
                    b.name,
                    o.name
                );
                assert_eq!(none.option(&b, o.name), o.default, "{}.{}", b.name, o.name);
            }
        }
    }
}
