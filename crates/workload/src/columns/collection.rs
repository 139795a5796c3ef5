//! The collections: a list or a map of generated elements, written as JSON text; its element,
//! item count and keys checked, its element made by the element's own generator.

use std::sync::Arc;

use rand::Rng;

use super::generator::Generator;
use super::make::{mean_value_bytes, write_value, Draw, Make};
use super::spec::{abbreviated, is_plain_text, Column, ColumnType, Items, MAX_ITEMS};
use crate::generator::WorkerRng;

/// A list (no keys) or a map: `min..=max` elements, each made by `element`.
#[derive(Debug)]
struct Collection {
    element: Box<dyn Make>,
    element_type: ColumnType,
    min: u32,
    max: u32,
    keys: Arc<[String]>,
}

/// The maker of collection `c`'s values from its element's maker (made from [`element_column`]).
pub(super) fn maker(c: &Column, items: Items, element: Box<dyn Make>) -> Box<dyn Make> {
    Box::new(Collection {
        element,
        element_type: c.element.expect("a checked collection's element"),
        min: items.min,
        max: items.max,
        keys: sorted_keys(&c.keys),
    })
}

/// A list's or a map's element as a column of its own (its length, its generator), its element
/// type, item count and keys checked.
pub(super) fn element_column(c: &Column) -> Result<Column, (&'static str, String)> {
    let kind = c.column_type.name();
    let element = match c.element {
        None => {
            return Err((
                "element",
                format!("a {kind} column needs the type of its elements (element = \"text\", \"int\", ...)"),
            ))
        }
        Some(t) if t.element_type().is_none() => {
            return Err((
                "element",
                format!(
                    "a {kind} holds text, int, bigint, double, bool, uuid or timestamp elements, not {}",
                    t.name()
                ),
            ))
        }
        Some(t) => t,
    };
    let Some(items) = c.items else {
        return Err((
            "items",
            format!(
                "a {kind} column needs how many elements it holds (items = {{ min = 0, max = 5 }})"
            ),
        ));
    };
    if items.max == 0 || items.max > MAX_ITEMS || items.min > items.max {
        return Err((
            "items",
            format!(
                "min {} to max {} must lie within 0 to {MAX_ITEMS}, max at least 1",
                items.min, items.max
            ),
        ));
    }
    if matches!(c.generator, Generator::Derived(_)) {
        return Err((
            "generator",
            format!("a {kind}'s elements are generated, not derived"),
        ));
    }
    match c.column_type {
        ColumnType::Map => {
            if c.keys.is_empty() {
                return Err((
                    "keys",
                    "a map column needs the keys its entries may have (keys = [\"a\", \"b\"])"
                        .into(),
                ));
            }
            // A set, not a scan of the keys before each: 80,000 keys took 134 s to check.
            let mut seen = std::collections::HashSet::with_capacity(c.keys.len());
            for k in &c.keys {
                // MongoDB reads a leading '$' as an operator and a '.' as a path.
                if k.is_empty()
                    || k.len() > 64
                    || !is_plain_text(k)
                    || k.starts_with('$')
                    || k.contains('.')
                {
                    return Err((
                        "keys",
                        format!("\"{}\" is no key: 1 to 64 printable ASCII characters without quotes, backslash or '.', not starting with '$'", abbreviated(k)),
                    ));
                }
                if !seen.insert(k.as_str()) {
                    return Err(("keys", format!("\"{k}\" is given twice")));
                }
            }
            if items.max as usize > c.keys.len() {
                return Err((
                    "items",
                    format!(
                        "max {} is more than the map's {} keys (each key once)",
                        items.max,
                        c.keys.len()
                    ),
                ));
            }
        }
        _ if !c.keys.is_empty() => {
            return Err(("keys", "only map columns have keys, not list".into()));
        }
        _ => {}
    }
    Ok(Column {
        name: c.name.clone(),
        column_type: element,
        length: c.length,
        precision: c.precision,
        scale: c.scale,
        element: None,
        items: None,
        keys: Vec::new(),
        generator: c.generator.clone(),
    })
}

/// A map's keys in byte order (its JSON text's order, and Cassandra's).
fn sorted_keys(keys: &[String]) -> Arc<[String]> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.into()
}

impl Make for Collection {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        let n = d.rng.random_range(self.min..=self.max) as usize;
        let (element_type, digits, keynum, pool) = (self.element_type, d.digits, d.keynum, d.pool);
        let element = &mut self.element;
        let mut item = String::new();
        let mut one = |out: &mut String, rng: &mut WorkerRng| {
            item.clear();
            let mut draw = Draw {
                t: element_type,
                digits,
                keynum,
                rng,
                pool,
            };
            write_value(element.as_mut(), &mut draw, &mut item);
            push_json_element(element_type, &item, out);
        };
        let keys = &self.keys;
        if keys.is_empty() {
            out.push('[');
            for k in 0..n {
                if k > 0 {
                    out.push(',');
                }
                one(out, d.rng);
            }
            out.push(']');
        } else {
            // n keys of the map's, each once, in byte order (the keys are sorted).
            let mut chosen: Vec<usize> = (0..keys.len()).collect();
            for k in 0..n {
                let j = d.rng.random_range(k..keys.len());
                chosen.swap(k, j);
            }
            let chosen = &mut chosen[..n];
            chosen.sort_unstable();
            out.push('{');
            for (pos, &k) in chosen.iter().enumerate() {
                if pos > 0 {
                    out.push(',');
                }
                push_json_string(&keys[k], out);
                out.push(':');
                one(out, d.rng);
            }
            out.push('}');
        }
    }

    fn mean_bytes(&self, t: ColumnType, c: &Column) -> Option<f64> {
        if !t.is_collection() {
            return None;
        }
        let key = match self.keys.len() {
            0 => 0.0,
            n => self.keys.iter().map(|k| k.len() as f64 + 3.0).sum::<f64>() / n as f64,
        };
        let each = mean_value_bytes(self.element_type, c, self.element.as_ref()) + 3.0 + key;
        Some(2.0 + f64::from(self.min + self.max) / 2.0 * each)
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(Collection {
            element: self.element.boxed_clone(),
            element_type: self.element_type,
            min: self.min,
            max: self.max,
            keys: Arc::clone(&self.keys),
        })
    }
}

/// An element's text as JSON: a string quoted, a bool true or false, a number as it is.
fn push_json_element(t: ColumnType, text: &str, out: &mut String) {
    match t {
        ColumnType::Bool => out.push_str(if text == "1" { "true" } else { "false" }),
        ColumnType::Text | ColumnType::Uuid | ColumnType::Timestamp => push_json_string(text, out),
        _ => out.push_str(text),
    }
}

/// `text` as a JSON string (quotes, backslashes and control characters escaped).
pub fn push_json_string(text: &str, out: &mut String) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
