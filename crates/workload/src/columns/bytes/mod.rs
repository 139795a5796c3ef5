//! The random-bytes generators: a blob's bytes (written as hex) and a version 4 UUID.

pub(super) mod decl;

pub use decl::BytesGenerator;

use rand::{Rng, RngCore};

use super::generator::Generator;
use super::make::{Built, Check, Draw, Make, HEX};
use super::spec::{Column, ColumnType};

#[derive(Debug, Clone)]
enum Bytes {
    /// Random bytes as lowercase hex.
    Hex {
        min: usize,
        max: usize,
    },
    Uuid,
}

/// The maker of a random-bytes generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Bytes(g) = k.generator() else {
        return None;
    };
    let bytes = match g {
        BytesGenerator::Bytes { min_size, max_size } => hex(k, *min_size, *max_size),
        BytesGenerator::Uuid => uuid(k),
    };
    Some(bytes.map(|m| Box::new(m) as Box<dyn Make>))
}

fn hex(k: &Check, min_size: u32, max_size: Option<u32>) -> Result<Bytes, String> {
    let Some(length) = k.length_of(ColumnType::Blob) else {
        return Err(k.wrong());
    };
    let max = max_size.unwrap_or(length);
    if min_size == 0 || min_size > max || max > length {
        return Err(format!(
            "min_size {min_size} to max_size {max} must be within 1 to the column's length {length}"
        ));
    }
    Ok(Bytes::Hex {
        min: min_size as usize,
        max: max as usize,
    })
}

fn uuid(k: &Check) -> Result<Bytes, String> {
    if !matches!(k.t(), ColumnType::Uuid | ColumnType::Text) {
        return Err(k.wrong());
    }
    k.text_fits("00000000-0000-4000-8000-000000000000", "a UUID")?;
    Ok(Bytes::Uuid)
}

impl Make for Bytes {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Bytes::Hex { min, max } => {
                let n = d.rng.random_range(*min..=*max);
                out.reserve(2 * n);
                for _ in 0..n {
                    let b = d.rng.next_u32() as u8;
                    out.push(HEX[usize::from(b >> 4)] as char);
                    out.push(HEX[usize::from(b & 15)] as char);
                }
            }
            Bytes::Uuid => {
                let (hi, lo) = (d.rng.next_u64(), d.rng.next_u64());
                let hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
                let lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
                let mut text = [b'-'; 36];
                let nibbles = (0..32).map(|i| {
                    let word = if i < 16 { hi } else { lo };
                    HEX[((word >> (60 - 4 * (i % 16))) & 0xF) as usize]
                });
                let places = (0..36).filter(|p| ![8, 13, 18, 23].contains(p));
                for (p, c) in places.zip(nibbles) {
                    text[p] = c;
                }
                out.push_str(std::str::from_utf8(&text).expect("hex digits"));
            }
        }
    }

    fn mean_bytes(&self, t: ColumnType, _c: &Column) -> Option<f64> {
        match (t, self) {
            (ColumnType::Blob, Bytes::Hex { min, max }) => Some((min + max) as f64 / 2.0),
            _ => None,
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
