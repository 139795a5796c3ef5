//! The literal generators: the same value in every record, or one of a few values. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// A literal in a file: a constant or a choice's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Literal {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Literal {
    pub(super) fn describe(&self) -> String {
        match self {
            Literal::Bool(b) => b.to_string(),
            Literal::Integer(i) => i.to_string(),
            Literal::Float(f) => f.to_string(),
            Literal::Text(t) => format!("\"{t}\""),
        }
    }
}

/// Literal generators: the same value, or one of a few. (`columns::Generator::Literal`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LiteralGenerator {
    /// The same value in every record.
    Constant { value: Literal },
    /// One of `values`, each with its weight (all equal when `weights` is left out).
    Choice {
        values: Vec<Literal>,
        #[serde(default)]
        weights: Option<Vec<f64>>,
    },
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["constant", "choice"];

impl LiteralGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            LiteralGenerator::Constant { .. } => "constant",
            LiteralGenerator::Choice { .. } => "choice",
        }
    }
}
