//! The derived generator (a value made of the record's other values), as a file declares it. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// A value made of the record's other values. (`columns::Generator::Derived`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum DerivedGenerator {
    /// Text made of other columns' values of the same record: `{name}` is a column's value,
    /// `{key}` the record's key (e.g. "{user_id}:{created_at}").
    Derived { template: String },
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["derived"];

impl DerivedGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            DerivedGenerator::Derived { .. } => "derived",
        }
    }
}
