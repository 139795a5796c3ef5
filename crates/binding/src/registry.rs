//! The binding registry: which URL scheme opens which binding, and what options each takes. The
//! list itself is declared once, in the crate root's `bindings!`.

use crate::{BindingConfig, BindingError, BindingFactory, BindingInfo};

/// The bindings compiled into this build.
pub fn bindings() -> Vec<BindingInfo> {
    crate::compiled_bindings()
}

pub fn find(name: &str) -> Option<BindingInfo> {
    bindings().into_iter().find(|b| b.name == name)
}

pub fn for_scheme(scheme: &str) -> Option<BindingInfo> {
    bindings().into_iter().find(|b| b.schemes.contains(&scheme))
}

/// Why no binding of this build takes URL scheme `scheme`, with what it could do instead.
pub fn no_binding(scheme: &str) -> String {
    let schemes: Vec<&str> = bindings()
        .iter()
        .flat_map(|b| b.schemes.iter().copied())
        .collect();
    no_binding_among(scheme, &schemes, &crate::left_out_bindings())
}

/// [`no_binding`] of a build whose bindings take `schemes` and which leaves the bindings
/// `left_out` out (one function for every build, so that a build of every binding tests what a
/// lean one says).
fn no_binding_among(scheme: &str, schemes: &[&str], left_out: &[&str]) -> String {
    // Scheme and feature share the binding's name (postgres://, redis://, etcd://, ...).
    let rebuild = "`cargo install --path crates/cli` builds every binding";
    if left_out.contains(&scheme) {
        return format!("the {scheme} binding is not in this build: {rebuild}");
    }
    let known: Vec<String> = schemes.iter().map(|s| format!("{s}://")).collect();
    // A near miss (a letter missing, doubled or swapped) is most likely what was meant, also of
    // a binding this build leaves out.
    let near = schemes
        .iter()
        .chain(left_out)
        .map(|s| (strsim::damerau_levenshtein(scheme, s), *s))
        .filter(|(d, _)| *d <= 2)
        .min();
    let hint = near.map_or(String::new(), |(_, s)| {
        let absent = if left_out.contains(&s) {
            ", left out of this build"
        } else {
            ""
        };
        format!(": did you mean '{s}://'{absent}?")
    });
    let missing = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            "; left out of this build: {} ({rebuild})",
            left_out.join(", ")
        )
    };
    format!(
        "no binding for URL scheme '{scheme}://' in this build{hint} (available: {}{missing})",
        known.join(", ")
    )
}

/// What `scalebench bindings` prints: every binding of this build, or binding `name` with its
/// options (default, help, a choice's words), as they are declared.
pub fn listing(name: Option<&str>) -> Result<String, BindingError> {
    use std::fmt::Write as _;
    let mut out = String::new();
    let Some(name) = name else {
        out.push_str("Bindings in this build (show options with `scalebench bindings NAME`):\n");
        // Name and URL on one line, what it is below, within 100 columns.
        for b in bindings() {
            let _ = writeln!(out, "  {:<10} {}", b.name, b.url_example);
            for line in textwrap::wrap(b.summary, WIDTH - 13) {
                let _ = writeln!(out, "{:13}{line}", "");
            }
        }
        return Ok(out);
    };
    let b = find(name).ok_or_else(|| {
        let names: Vec<&str> = bindings().iter().map(|b| b.name).collect();
        BindingError::Config(format!(
            "unknown binding '{name}' (available: {})",
            names.join(", ")
        ))
    })?;
    let wrapped = |text: &str, indent: &str| {
        let options = textwrap::Options::new(WIDTH).subsequent_indent(indent);
        textwrap::fill(text, options)
    };
    let bound = match b.binds_workers_to_nodes {
        true => "each worker's every request to one node (--request-set-threads fixed)",
        false => {
            "no: requests go where the binding routes them, also with --request-set-threads fixed"
        }
    };
    let _ = writeln!(
        out,
        "{}\n{}\n{}\n{}\n{}\n{}",
        wrapped(&format!("{}: {}", b.name, b.summary), "  "),
        wrapped(&format!("URL: {}", b.url_example), "  "),
        wrapped(&format!("TLS: {}", crate::info::tls_options(b.name)), "  "),
        wrapped(&format!("Reads: {}", b.reads), "  "),
        wrapped(&format!("Workers bound to nodes: {bound}"), "  "),
        wrapped(&format!("Pipelining: {}", b.pipelining.words()), "  ")
    );
    let declared = b.options.declared;
    if declared.is_empty() {
        out.push_str("No options.\n");
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "Options (-p {}.NAME=VALUE or in a property file):",
        b.name
    );
    let name_width = declared.iter().map(|o| o.name.len()).max().unwrap_or(0);
    let default_width = declared.iter().map(|o| o.default.len()).max().unwrap_or(0);
    // Name and default in columns, the help beside them wrapped within the width (or below them
    // when the columns leave it too little room).
    let column = 2 + name_width + 2 + 8 + default_width + 2;
    let indent = if column + 30 <= WIDTH { column } else { 6 };
    for o in declared {
        let choices = match o.choices {
            [] => String::new(),
            c => format!(" (one of {})", c.join(", ")),
        };
        let head = format!(
            "  {:<name_width$}  default {:<default_width$}  ",
            o.name, o.default
        );
        let help = format!("{}{choices}", o.help);
        let lines = textwrap::wrap(&help, WIDTH - indent);
        if indent == column {
            for (i, line) in lines.iter().enumerate() {
                let lead = if i == 0 {
                    head.clone()
                } else {
                    " ".repeat(indent)
                };
                let _ = writeln!(out, "{lead}{line}");
            }
        } else {
            let _ = writeln!(out, "{}", head.trim_end());
            for line in lines {
                let _ = writeln!(out, "{}{line}", " ".repeat(indent));
            }
        }
    }
    Ok(out)
}

/// The widest line of the listings (an 80-to-100-column terminal shows them unwrapped).
const WIDTH: usize = 100;

/// Receives the opened factory with its concrete type, so execution is compiled per binding
/// (static dispatch on the hot path).
pub trait FactoryVisitor {
    type Output;
    fn visit<F: BindingFactory>(self, factory: F) -> Self::Output;
}

/// Every option given is one the binding has, with a value of its type (checked before anything
/// connects; the binding reads the same values when it opens).
pub fn check_options(
    info: &BindingInfo,
    options: &std::collections::BTreeMap<String, String>,
) -> Result<(), BindingError> {
    if let Some(key) = options
        .keys()
        .find(|key| !info.options.declared.iter().any(|o| o.name == key.as_str()))
    {
        return Err(BindingError::Config(format!(
            "unknown option '{}.{key}' (see `scalebench bindings {}`)",
            info.name, info.name
        )));
    }
    (info.options.check)(info.name, options)
}

/// Opens the binding named by the URL's scheme and hands it to `visitor`.
pub fn open<V: FactoryVisitor>(
    config: BindingConfig,
    visitor: V,
) -> Result<V::Output, BindingError> {
    let scheme = config.url.scheme().to_string();
    let info = for_scheme(&scheme).ok_or_else(|| BindingError::Config(no_binding(&scheme)))?;
    check_options(&info, &config.options)?;
    check_statements(&info, &config.schema)?;
    crate::pipeline::check(&info, &config.schema, config.pipeline)?;
    crate::open_compiled(info.name, &config, visitor)
}

/// What binding `info` runs of a workload file's statements: which key_value alternatives run
/// in their place is decided from this once per run.
pub fn store(info: &BindingInfo) -> scalebench_workload::alternative::Store {
    use scalebench_workload::alternative::Store;
    match info.statements {
        _ if info.name == crate::null::INFO.name => Store::Any,
        Some(language) => Store::Speaks(language),
        None => Store::KeyValue,
    }
}

/// Whether binding `info` can run the workload's statements: each statement operation must
/// have one in the binding's language. One line naming the operation when not.
pub fn check_statements(info: &BindingInfo, schema: &crate::Schema) -> Result<(), BindingError> {
    for statement in schema.statements.iter().flatten() {
        if statement.in_transaction
            && info.statements != Some(scalebench_workload::statement::Language::Sql)
            && info.name != crate::null::INFO.name
        {
            return Err(BindingError::Config(format!(
                "operation '{}' is a transaction of SQL statements, and {} runs none: give it a key_value alternative (key_value = {{ kind = \"update\" }}, any key-value kind) or run it on PostgreSQL, MySQL/MariaDB or SQLite",
                statement.name, info.name
            )));
        }
        let runs = match info.statements {
            None => {
                return Err(BindingError::Config(format!(
                    "operation '{}' is a statement, and {} runs none: give it a key_value alternative (key_value = {{ kind = \"read\" }}, any key-value kind) or run it on a SQL or CQL database",
                    statement.name, info.name
                )))
            }
            Some(language) => statement.template(language).is_some(),
        };
        // The null binding runs any statement (as nothing).
        if !runs && info.name != crate::null::INFO.name {
            let language = info.statements.expect("matched above");
            return Err(BindingError::Config(format!(
                "operation '{}' has no {} statement, which {} runs: give it `{} = \"...\"` or a key_value alternative",
                statement.name,
                language.field(),
                info.name,
                language.field()
            )));
        }
    }
    for (name, with_statement) in schema.transactional_sequences.iter() {
        match info.transactions {
            crate::Transactions::None => {
                return Err(BindingError::Config(format!(
                    "operation '{name}' is a sequence in one transaction, and {} runs no transaction: give it transaction = false (HBase's Thrift gateway compares one column per conditional write, not a record)",
                    info.name
                )))
            }
            crate::Transactions::OneRecord if *with_statement => {
                return Err(BindingError::Config(format!(
                    "operation '{name}' runs a statement inside its transaction, and {} holds a transaction's record in memory until it writes it once: the statement would run outside the transaction; give it transaction = false or leave the statement out",
                    info.name
                )))
            }
            _ => {}
        }
    }
    check_increments(info, schema)
}

/// Whether binding `info` adds in the database what the workload's increments add to. One line
/// naming the operation when not.
fn check_increments(info: &BindingInfo, schema: &crate::Schema) -> Result<(), BindingError> {
    for inc in schema.increments.iter() {
        let decimal = inc.columns.iter().find(|&&c| {
            matches!(
                schema.field_types.get(c),
                Some(scalebench_workload::FieldType::Decimal { .. })
            )
        });
        match (info.increments, decimal) {
            (crate::Increments::None, _) => {
                return Err(BindingError::Config(format!(
                    "operation '{}' is an increment, and {} has no atomic increment of these columns: give it kind = \"read_modify_write\" (a read, then a write)",
                    inc.name, info.name
                )))
            }
            (crate::Increments::Numbers, Some(&c)) => {
                return Err(BindingError::Config(format!(
                    "operation '{}' increments decimal column '{}', and {} increments only int, bigint and double columns exactly: give it kind = \"read_modify_write\"",
                    inc.name, schema.field_names[c], info.name
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each binding's listing says what it takes for TLS, in its own client's words.
    #[cfg(all(feature = "postgres", feature = "redis"))]
    #[test]
    fn the_listing_names_each_bindings_tls_options() {
        let pg = listing(Some("postgres")).unwrap();
        assert!(pg.contains("TLS: libpq's URL parameters sslmode"), "{pg}");
        assert!(listing(Some("redis")).unwrap().contains("TLS: rediss://"));
        assert!(listing(Some("cassandra"))
            .unwrap()
            .contains("TLS: cqlsh's names"));
        assert!(listing(Some("sqlite")).unwrap().contains("TLS: none"));
        assert!(pg.contains("Pipelining: --pipeline N"), "{pg}");
        assert!(listing(Some("mysql"))
            .unwrap()
            .contains("Pipelining: no --pipeline: MySQL's"));
    }

    /// Which key_value alternatives run is decided from a binding's kind of store: SQL on the
    /// SQL databases, CQL on Cassandra, every statement (as nothing) on null, none elsewhere.
    #[test]
    fn each_binding_says_what_it_runs_of_a_files_statements() {
        use scalebench_workload::alternative::Store;
        use scalebench_workload::statement::Language;
        for b in bindings() {
            let want = match b.name {
                "null" => Store::Any,
                "postgres" | "mysql" | "sqlite" => Store::Speaks(Language::Sql),
                "cassandra" => Store::Speaks(Language::Cql),
                _ => Store::KeyValue,
            };
            assert_eq!(store(&b), want, "{}", b.name);
        }
    }

    /// A near-miss scheme is named with what it most likely meant; a far one is not guessed.
    #[test]
    fn a_near_miss_scheme_gets_a_suggestion() {
        assert!(no_binding("nul").contains("did you mean 'null://'"));
        assert!(no_binding("postgress").contains("did you mean 'postgres://'"));
        assert!(no_binding("rdeis").contains("did you mean 'redis://'"));
        assert!(!no_binding("foo").contains("did you mean"));
    }

    /// A binding a lean build leaves out is named as such, with the command that builds it, also
    /// for a near miss of its name; in a build of every binding, nothing is said to be left out.
    #[test]
    fn a_binding_left_out_of_the_build_says_how_to_build_it() {
        let left_out = crate::left_out_bindings();
        let compiled: Vec<&str> = bindings().iter().map(|b| b.name).collect();
        assert!(
            left_out.iter().all(|f| !compiled.contains(f)),
            "{left_out:?}"
        );
        if left_out.is_empty() {
            assert!(
                !no_binding("foo").contains("left out"),
                "{}",
                no_binding("foo")
            );
        }
        // README command 1's build: SQLite and null:// alone.
        let lean =
            |scheme: &str| no_binding_among(scheme, &["sqlite", "null"], &["postgres", "redis"]);
        let said = lean("postgres");
        assert!(
            said.contains("not in this build") && said.contains("cargo install"),
            "{said}"
        );
        let unknown = lean("foo");
        assert!(
            unknown.contains("left out of this build: postgres, redis")
                && unknown.contains("(available: sqlite://, null://;"),
            "{unknown}"
        );
        let typo = lean("postgresx");
        assert!(
            typo.contains("did you mean 'postgres://', left out of this build?"),
            "{typo}"
        );
        assert!(
            lean("sqlit").contains("did you mean 'sqlite://'?"),
            "{}",
            lean("sqlit")
        );
    }

    /// Each cause once: a driver's wrapped error repeated in its own message is said once.
    #[test]
    fn repeated_causes_are_said_once() {
        assert_eq!(
            crate::without_repeats("Unavailable: tcp connect error: transport error: tcp connect error: Connection refused"),
            "Unavailable: tcp connect error: transport error: Connection refused"
        );
        assert_eq!(
            crate::without_repeats("Input/output error: Input/output error: refused"),
            "Input/output error: refused"
        );
        let e = crate::BindingError::Connect {
            url: "x://h".into(),
            reason: "a: b: a".into(),
        };
        assert_eq!(e.to_string(), "cannot connect to x://h: a: b");
    }

    /// Each option is declared once; its declared default is a value of its type, and a choice
    /// refuses a word outside its declaration, naming them all.
    #[test]
    fn options_are_declared_once_and_their_defaults_and_words_checked() {
        use std::collections::BTreeMap;
        for b in bindings() {
            let declared = b.options.declared;
            check_options(&b, &BTreeMap::new())
                .unwrap_or_else(|e| panic!("{}: a declared default is refused: {e}", b.name));
            for (i, o) in declared.iter().enumerate() {
                assert!(
                    !declared[..i].iter().any(|p| p.name == o.name),
                    "{}.{} is declared twice",
                    b.name,
                    o.name
                );
                let given = |v: &str| BTreeMap::from([(o.name.to_string(), v.to_string())]);
                check_options(&b, &given(o.default))
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", b.name, o.name));
                if o.choices.is_empty() {
                    continue;
                }
                assert!(
                    o.choices.contains(&o.default),
                    "{}.{}: the default is not one of its words",
                    b.name,
                    o.name
                );
                for word in o.choices {
                    check_options(&b, &given(&word.to_ascii_lowercase()))
                        .unwrap_or_else(|e| panic!("{}.{}: {e}", b.name, o.name));
                }
                let e = check_options(&b, &given("no-such-word"))
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.contains(&o.choices.join(", ")) && e.contains("no-such-word"),
                    "{e}"
                );
            }
            let e = check_options(&b, &BTreeMap::from([("no_such_option".into(), "1".into())]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("'{}.no_such_option'", b.name)), "{e}");
        }
    }
}
