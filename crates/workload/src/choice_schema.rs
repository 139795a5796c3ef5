//! The JSON Schema of a workload file's fields that take one of a property's words
//! (`key_distribution`, `order`, `length_distribution`): the words listed from the property's
//! declaration, so the schema, `scalebench properties` and the check say the same choices. The
//! field stays text and is checked through its property, which names the file's field in its
//! error; the words are accepted in any case, as in a property file.

use schemars::{json_schema, Schema, SchemaGenerator};

use crate::declared::{self, Kind, PropertyInfo};

/// `run.key_distribution`: `requestdistribution`'s words.
pub(crate) fn key_distribution(_: &mut SchemaGenerator) -> Schema {
    words_of(&declared::REQUESTDISTRIBUTION)
}

/// `record.key.order`: `insertorder`'s words.
pub(crate) fn insert_order(_: &mut SchemaGenerator) -> Schema {
    words_of(&declared::INSERTORDER)
}

/// `record.fields.length_distribution`: `fieldlengthdistribution`'s words.
pub(crate) fn length_distribution(_: &mut SchemaGenerator) -> Schema {
    words_of(&declared::FIELDLENGTHDISTRIBUTION)
}

/// A string that is one of `p`'s words in any case (an ECMA-262 pattern has no case-insensitive
/// flag: each letter is a class of its two cases); the words themselves as the examples an
/// editor offers.
fn words_of(p: &PropertyInfo) -> Schema {
    let Kind::Choice(words) = p.kind else {
        panic!("property {} is not declared as a choice", p.name)
    };
    let caseless: Vec<String> = words
        .iter()
        .map(|w| {
            w.chars()
                .map(|c| {
                    assert!(c.is_ascii_alphabetic(), "a choice's word is letters: {w}");
                    format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                })
                .collect()
        })
        .collect();
    let pattern = format!("^(?:{})$", caseless.join("|"));
    json_schema!({
        "type": "string",
        "pattern": pattern,
        "examples": words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema of a choice accepts its words in any case and nothing else, and lists them.
    #[test]
    fn a_choice_schema_lists_the_words_and_matches_them_in_any_case() {
        let s = words_of(&declared::INSERTORDER);
        assert_eq!(
            s.get("examples"),
            Some(&serde_json::json!(["hashed", "ordered", "uuid"]))
        );
        let pattern = s.get("pattern").and_then(|p| p.as_str()).unwrap();
        assert_eq!(
            pattern,
            "^(?:[hH][aA][sS][hH][eE][dD]|[oO][rR][dD][eE][rR][eE][dD]|[uU][uU][iI][dD])$"
        );
    }
}
