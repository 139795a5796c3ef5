//! What a binding declares about itself: its URL schemes, its options and its capabilities, each
//! declared once, in the binding's own module. The registry lists these declarations; `scalebench
//! bindings` prints them; [`crate::BindingConfig`] reads option values through them.

/// A binding option, settable as `-p <binding>.<name>=value` or in a property file.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
    /// The words the option takes (case-insensitive), shown with its help and checked when read
    /// ([`crate::BindingConfig::choice`]); empty: a free value, checked by the binding.
    pub choices: &'static [&'static str],
}

/// The choices of a yes/no option ([`crate::BindingConfig::flag`]).
pub const BOOL: &[&str] = &["true", "false"];

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

impl BindingInfo {
    /// The declaration of option `name`. Reading an undeclared option is a mistake in the
    /// binding's code, not in the user's input.
    pub fn option(&self, name: &str) -> &OptionInfo {
        self.options
            .iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| {
                panic!(
                    "binding {} reads option {name}, which it does not declare",
                    self.name
                )
            })
    }
}
