//! The text generators, as a file declares them, and their character sets. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// The characters of a text generator.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Charset {
    /// Letters and digits.
    #[default]
    Alphanumeric,
    Letters,
    Lowercase,
    Digits,
    Hex,
    /// Printable ASCII without quotes and backslash (what no text format needs to escape).
    Printable,
}

/// Generators of text. (`columns::Generator::Text`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TextGenerator {
    /// Random characters of `charset`, between min_length and max_length (default: the column's).
    Text {
        #[serde(default = "one_u32")]
        min_length: u32,
        #[serde(default)]
        max_length: Option<u32>,
        #[serde(default)]
        charset: Charset,
    },
    /// `min` to `max` words of `words`, separated by spaces; or of a dictionary `file` (one word a
    /// line, in the workload file's directory or one `--allow-files` allows; read when the file is,
    /// so its words travel with it to a run's clients, and results keep its digest instead).
    Words {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        words: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// The dictionary file's SHA-256 and size, set when it is read (not written in a file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        digest: Option<crate::digest::Digest>,
        #[serde(default = "one_u32")]
        min: u32,
        #[serde(default = "one_u32")]
        max: u32,
    },
    /// YCSB's field value: random characters cut from the run's value pool, the column's length.
    YcsbText,
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["text", "words", "ycsb_text"];

impl TextGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            TextGenerator::Text { .. } => "text",
            TextGenerator::Words { .. } => "words",
            TextGenerator::YcsbText => "ycsb_text",
        }
    }
}

fn one_u32() -> u32 {
    1
}
