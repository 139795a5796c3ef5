//! The key-number generators: a sequence (a record's value fixed by its key number) and latest
//! (a recent key number, for a column that refers to another record).

pub(super) mod decl;

pub use decl::KeyedGenerator;

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make};
use super::spec::{Column, ColumnType};
use crate::generator::Zipfian;

#[derive(Debug, Clone)]
enum Keyed {
    Sequence {
        start: i64,
        step: i64,
        modulo: u64,
    },
    /// The key number minus a Zipfian distance (over 0..window).
    Latest(Zipfian),
}

impl Column {
    /// A sequence's values over `keys` key numbers (0 to keys - 1) fit the column (any other
    /// generator: Ok).
    pub fn sequence_in_range(&self, keys: u64) -> Result<(), String> {
        let Generator::Keyed(KeyedGenerator::Sequence {
            start,
            step,
            modulo,
        }) = &self.generator
        else {
            return Ok(());
        };
        let n = modulo.map_or(keys, |m| m.min(keys));
        if n == 0 {
            return Ok(());
        }
        let last = *start as f64 + *step as f64 * (n - 1) as f64;
        self.in_range(last, &format!("key number {}'s value", n - 1))
    }
}

/// The maker of a key-number generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Keyed(g) = k.generator() else {
        return None;
    };
    let keyed = match g {
        KeyedGenerator::Sequence {
            start,
            step,
            modulo,
        } => sequence(k, *start, *step, *modulo),
        KeyedGenerator::Latest { window, theta } => latest(k, *window, *theta),
    };
    Some(keyed.map(|m| Box::new(m) as Box<dyn Make>))
}

fn sequence(k: &Check, start: i64, step: i64, modulo: Option<u64>) -> Result<Keyed, String> {
    if !k.t().is_integer() && k.t() != ColumnType::Decimal {
        return Err(k.wrong());
    }
    k.in_range(start as f64, "start")?;
    if modulo == Some(0) {
        return Err("modulo 0: expected at least 1".into());
    }
    // The values past the type's range were held at its bound, silently (issue 62, low 2).
    if let Some(m) = modulo {
        k.c.sequence_in_range(m)?;
    }
    Ok(Keyed::Sequence {
        start,
        step,
        modulo: modulo.unwrap_or(u64::MAX),
    })
}

fn latest(k: &Check, window: u64, theta: f64) -> Result<Keyed, String> {
    if !k.t().is_integer() {
        return Err(k.wrong());
    }
    if !(1..=100_000_000).contains(&window) {
        return Err(format!("window {window} is out of range: 1 to 100,000,000"));
    }
    if !(theta > 0.0 && theta < 1.0) {
        return Err(format!("theta {theta} is out of range: between 0 and 1"));
    }
    Ok(Keyed::Latest(Zipfian::with_constant(0, window - 1, theta)))
}

impl Make for Keyed {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Keyed::Sequence {
                start,
                step,
                modulo,
            } => {
                let (lo, hi) = match d.t {
                    ColumnType::Int => (i32::MIN as i128, i32::MAX as i128),
                    _ => (i64::MIN as i128, i64::MAX as i128),
                };
                let v =
                    (*start as i128 + (d.keynum % *modulo) as i128 * *step as i128).clamp(lo, hi);
                out.push_str(itoa::Buffer::new().format(v as i64));
            }
            Keyed::Latest(z) => {
                // An int column holds the key numbers that fit it.
                let (_, hi) = d.t.integer_range();
                let v = d.keynum.saturating_sub(z.next(d.rng)).min(hi as u64);
                out.push_str(itoa::Buffer::new().format(v));
            }
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
