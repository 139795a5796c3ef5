//! The derived generator: text made of other columns' values of the same record and its key
//! (a template such as "{user_id}:{created_at}").

pub(super) mod decl;

pub use decl::DerivedGenerator;

use std::sync::Arc;

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make, Piece};
use super::spec::{is_plain_text, Column, ColumnType};

/// A derived column's template; its value is written by the record's values, which make the
/// columns it names.
#[derive(Debug, Clone)]
struct Derived(Arc<[Piece]>);

/// The maker of the derived generator (`None`: not it).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Derived(DerivedGenerator::Derived { template }) = k.generator() else {
        return None;
    };
    if k.t() != ColumnType::Text {
        return Some(Err(k.wrong()));
    }
    Some(
        parse_template(template, k.columns, k.me)
            .map(|pieces| Box::new(Derived(pieces.into())) as Box<dyn Make>),
    )
}

fn parse_template(template: &str, columns: &[Column], me: usize) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Text(rest[..open].to_string()));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("template \"{template}\": a '{{' is not closed"))?
            + open;
        let name = &rest[open + 1..close];
        if name == "key" {
            pieces.push(Piece::Key);
        } else {
            let j = columns
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| format!("template \"{template}\": no column '{name}'"))?;
            if columns[j].column_type.is_collection() {
                return Err(format!(
                    "template \"{template}\": '{name}' is a {}; a template takes single values",
                    columns[j].column_type.name()
                ));
            }
            if j == me || matches!(columns[j].generator, Generator::Derived(_)) {
                return Err(format!(
                    "template \"{template}\": '{name}' is derived itself (a derived column uses generated ones)"
                ));
            }
            pieces.push(Piece::Column(j));
        }
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("template \"{template}\": a '}}' is not opened"));
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    for p in &pieces {
        if let Piece::Text(t) = p {
            if !is_plain_text(t) {
                return Err(format!(
                    "template \"{template}\" must be printable ASCII without quotes and backslash"
                ));
            }
        }
    }
    Ok(pieces)
}

impl Make for Derived {
    fn write(&mut self, _d: &mut Draw<'_>, _out: &mut String) {
        unreachable!("derived columns are made by the record's values, from their template")
    }

    fn template(&self) -> Option<Arc<[Piece]>> {
        Some(Arc::clone(&self.0))
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
