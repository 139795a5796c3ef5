//! The text generators: random characters of a charset, words of a list or a dictionary, and
//! YCSB's field value cut from the run's value pool.

pub(super) mod decl;

pub use decl::Charset;
pub use decl::TextGenerator;

use std::sync::Arc;

use rand::Rng;

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make};
use super::spec::ColumnType;

#[derive(Debug, Clone)]
enum Text {
    Chars {
        min: usize,
        max: usize,
        charset: Charset,
    },
    Words {
        words: Arc<[String]>,
        min: u32,
        max: u32,
    },
    /// YCSB's field value of this length, from the run's value pool.
    Pool(usize),
}

/// The maker of a text generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Text(g) = k.generator() else {
        return None;
    };
    let text = match g {
        TextGenerator::Text {
            min_length,
            max_length,
            charset,
        } => chars(k, *min_length, *max_length, *charset),
        TextGenerator::Words {
            words,
            file,
            min,
            max,
            ..
        } => words_of(k, words, file.as_deref(), *min, *max),
        TextGenerator::YcsbText => match k.length_of(ColumnType::Text) {
            Some(length) => Ok(Text::Pool(length as usize)),
            None => Err(k.wrong()),
        },
    };
    Some(text.map(|m| Box::new(m) as Box<dyn Make>))
}

fn chars(
    k: &Check,
    min_length: u32,
    max_length: Option<u32>,
    charset: Charset,
) -> Result<Text, String> {
    let Some(length) = k.length_of(ColumnType::Text) else {
        return Err(k.wrong());
    };
    let max = max_length.unwrap_or(length);
    if min_length == 0 || min_length > max || max > length {
        return Err(format!(
            "lengths {min_length} to {max} must lie within 1 to the column's length {length}"
        ));
    }
    Ok(Text::Chars {
        min: min_length as usize,
        max: max as usize,
        charset,
    })
}

fn words_of(
    k: &Check,
    words: &[String],
    file: Option<&str>,
    min: u32,
    max: u32,
) -> Result<Text, String> {
    let Some(length) = k.length_of(ColumnType::Text) else {
        return Err(k.wrong());
    };
    if let Some(f) = file.filter(|_| words.is_empty()) {
        return Err(format!(
            "the dictionary '{f}' was not read (a workload file reads it)"
        ));
    }
    if words.is_empty() {
        return Err("words is empty".into());
    }
    for w in words {
        if w.is_empty() || w.contains(' ') {
            return Err(format!("word \"{w}\" must be non-empty, without spaces"));
        }
        k.text_fits(w, "word")?;
    }
    if min == 0 || min > max {
        return Err(format!("min {min} and max {max}: expected 1 <= min <= max"));
    }
    let longest = words.iter().map(String::len).max().unwrap_or(0) as u64;
    let most = longest * max as u64 + (max as u64 - 1);
    if most > length as u64 {
        return Err(format!(
            "{max} words of up to {longest} characters may exceed the column's length {length}"
        ));
    }
    Ok(Text::Words {
        words: words.to_vec().into(),
        min,
        max,
    })
}

impl Charset {
    fn characters(self) -> &'static [u8] {
        match self {
            Charset::Alphanumeric => {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
            }
            Charset::Letters => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            Charset::Lowercase => b"abcdefghijklmnopqrstuvwxyz",
            Charset::Digits => b"0123456789",
            Charset::Hex => b"0123456789abcdef",
            Charset::Printable => {
                b" !#$%&()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
            }
        }
    }
}

impl Make for Text {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Text::Chars { min, max, charset } => {
                let len = d.rng.random_range(*min..=*max);
                let chars = charset.characters();
                out.reserve(len);
                for _ in 0..len {
                    out.push(chars[d.rng.random_range(0..chars.len())] as char);
                }
            }
            Text::Words { words, min, max } => {
                let n = d.rng.random_range(*min..=*max);
                for w in 0..n {
                    if w > 0 {
                        out.push(' ');
                    }
                    out.push_str(&words[d.rng.random_range(0..words.len())]);
                }
            }
            Text::Pool(len) => d.pool.push_value(d.rng, *len, out),
        }
    }

    fn mean_bytes(&self, t: ColumnType, _c: &super::spec::Column) -> Option<f64> {
        match (t, self) {
            (ColumnType::Text, Text::Chars { min, max, .. }) => Some((min + max) as f64 / 2.0),
            (ColumnType::Text, Text::Pool(n)) => Some(*n as f64),
            _ => None,
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
