//! The byte and UUID generators, as a file declares them. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// Generators of bytes and UUIDs. (`columns::Generator::Bytes`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BytesGenerator {
    /// Random bytes, `min_size` to `max_size` of them (default 1 to the column's length): a blob's.
    Bytes {
        #[serde(default = "one_u32")]
        min_size: u32,
        #[serde(default)]
        max_size: Option<u32>,
    },
    /// A version 4 UUID drawn from the record's stream.
    Uuid,
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["bytes", "uuid"];

impl BytesGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            BytesGenerator::Bytes { .. } => "bytes",
            BytesGenerator::Uuid => "uuid",
        }
    }
}

fn one_u32() -> u32 {
    1
}
