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
    if scheme == "etcd" {
        return "the etcd binding is not in this build: build with the default features (`all-bindings`)".into();
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
    crate::open_compiled(info.name, &config, visitor)
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
                if o.choices.is_empty() {
                    continue;
                }
                // A choice's words are declared once: its default is one of them, and a value
                // outside them is refused naming them all.
                assert_eq!(
                    none.choice(&b, o.name).ok(),
                    Some(o.default),
                    "{}.{}",
                    b.name,
                    o.name
                );
                let mut wrong = none.options.clone();
                wrong.insert(o.name.to_string(), "no-such-word".into());
                let wrong = crate::BindingConfig {
                    options: wrong,
                    ..none.clone()
                };
                let e = wrong.choice(&b, o.name).unwrap_err().to_string();
                assert!(
                    e.contains(&o.choices.join(", ")) && e.contains("no-such-word"),
                    "{e}"
                );
            }
        }
    }
}
