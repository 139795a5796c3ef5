//! A workload file's secondary indexes (`[[record.index]]`, the `indexes` property): created with
//! the table by the bindings that have them, so the statements that query by a column are
//! measured as the application would run them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::WorkloadError;

/// Most indexes a record declares.
const MAX_INDEXES: usize = 16;

/// One index as a workload file declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexDecl {
    /// Its name in the database: letters, digits and `_`, starting with a letter, unique.
    pub name: String,
    /// The columns it orders by, in order.
    pub columns: Vec<String>,
}

/// A checked index: its columns as field numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub name: String,
    pub columns: Vec<usize>,
}

/// Checks `decls` against the record's `fields`; the error names `index[i] ('name').field`.
pub fn resolve(
    decls: &[IndexDecl],
    fields: &[String],
    types: &[crate::FieldType],
) -> Result<Arc<[Index]>, (String, String)> {
    if decls.len() > MAX_INDEXES {
        return Err((
            "index".into(),
            format!("{} indexes: at most {MAX_INDEXES}", decls.len()),
        ));
    }
    let mut out = Vec::with_capacity(decls.len());
    for (i, d) in decls.iter().enumerate() {
        let fail =
            |field: &str, reason: String| (format!("index[{i}] ('{}').{field}", d.name), reason);
        let name_ok = d.name.len() <= 48
            && d.name.starts_with(|c: char| c.is_ascii_alphabetic())
            && d.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(fail(
                "name",
                "letters, digits and _, starting with a letter, at most 48 characters".into(),
            ));
        }
        if decls[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&d.name))
        {
            return Err(fail("name", "another index has this name".into()));
        }
        if d.columns.is_empty() {
            return Err(fail("columns", "names no column".into()));
        }
        let mut columns = Vec::with_capacity(d.columns.len());
        for c in &d.columns {
            let idx = fields.iter().position(|f| f == c).ok_or_else(|| {
                fail(
                    "columns",
                    format!("no column '{c}': the record has {}", fields.join(", ")),
                )
            })?;
            if columns.contains(&idx) {
                return Err(fail("columns", format!("names '{c}' twice")));
            }
            if types.get(idx).is_some_and(|t| t.is_collection()) {
                return Err(fail(
                    "columns",
                    format!("'{c}' is a list or a map: an index orders single values"),
                ));
            }
            columns.push(idx);
        }
        out.push(Index {
            name: d.name.clone(),
            columns,
        });
    }
    Ok(out.into())
}

/// Parses the `indexes` property's JSON and checks it.
pub fn from_json(
    json: &str,
    fields: &[String],
    types: &[crate::FieldType],
) -> Result<Arc<[Index]>, WorkloadError> {
    let decls: Vec<IndexDecl> = serde_json::from_str(json).map_err(|e| {
        WorkloadError::invalid(
            "indexes",
            &crate::columns::abbreviated(json),
            format!("not an index list: {e}"),
        )
    })?;
    resolve(&decls, fields, types)
        .map_err(|(field, reason)| WorkloadError::Inconsistent(format!("{field}: {reason}")))
}

/// The indexes as the `indexes` property holds them.
pub fn to_json(decls: &[IndexDecl]) -> String {
    serde_json::to_string(decls).expect("indexes serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, columns: &[&str]) -> IndexDecl {
        IndexDecl {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn indexes_resolve_to_columns_and_bad_ones_name_their_field() {
        let fields: Vec<String> = ["user", "token", "seen", "tags"].map(String::from).to_vec();
        let mut types = vec![crate::FieldType::BigInt; 3];
        types.push(crate::FieldType::List {
            element: crate::ElementType::Text,
        });
        let ok = resolve(&[decl("by_user", &["user", "seen"])], &fields, &types).unwrap();
        assert_eq!(ok[0].columns, [0, 2]);
        for (decls, field) in [
            (vec![decl("1st", &["user"])], "index[0] ('1st').name"),
            (vec![decl("a", &[])], "index[0] ('a').columns"),
            (vec![decl("a", &["nope"])], "index[0] ('a').columns"),
            (vec![decl("a", &["user", "user"])], "index[0] ('a').columns"),
            (vec![decl("a", &["user", "tags"])], "index[0] ('a').columns"),
            (
                vec![decl("a", &["user"]), decl("A", &["token"])],
                "index[1] ('A').name",
            ),
        ] {
            assert_eq!(resolve(&decls, &fields, &types).unwrap_err().0, field);
        }
    }
}
