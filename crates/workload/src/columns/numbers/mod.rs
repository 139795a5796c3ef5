//! The number distributions: uniform, zipfian, hotspot, exponential, normal and histogram, for
//! integer, double and decimal columns (an integer column's values rounded).

pub(super) mod decl;

pub use decl::NumberGenerator;

use rand::Rng;

use super::generator::Generator;
use super::make::{finite, weights_checked, Built, Check, Draw, Make};
use super::spec::ColumnType;
use crate::generator::{Discrete, Hotspot, Zipfian};

/// A number generator checked against its column.
#[derive(Debug, Clone)]
enum Number {
    Uniform {
        min: f64,
        max: f64,
        decimals: Option<usize>,
    },
    /// Zipfian over 0..=span, moved to start at the second value.
    Zipfian(Zipfian, i64),
    /// Hotspot over 0..=span, moved to start at the second value.
    Hotspot(Hotspot, i64),
    Exponential(f64),
    Normal(rand_distr::Normal<f64>),
    Histogram {
        buckets: Discrete<u64>,
        width: i64,
    },
}

/// The maker of a number generator (`None`: not one).
pub(super) fn maker(k: &Check) -> Built {
    let Generator::Number(g) = k.generator() else {
        return None;
    };
    let number = match g {
        NumberGenerator::Uniform { min, max, decimals } => uniform(k, *min, *max, *decimals),
        NumberGenerator::Zipfian { min, max, theta } => zipfian(k, *min, *max, *theta),
        NumberGenerator::Hotspot {
            min,
            max,
            hot_data_fraction,
            hot_operation_fraction,
        } => hotspot(k, *min, *max, *hot_data_fraction, *hot_operation_fraction),
        NumberGenerator::Exponential { mean } => exponential(k, *mean),
        NumberGenerator::Normal { mean, stddev } => normal(k, *mean, *stddev),
        NumberGenerator::Histogram {
            buckets,
            bucket_width,
        } => histogram(k, buckets, *bucket_width),
    };
    Some(number.map(|n| Box::new(n) as Box<dyn Make>))
}

fn uniform(k: &Check, min: f64, max: f64, decimals: Option<u32>) -> Result<Number, String> {
    let t = k.t();
    if !k.numeric() {
        return Err(k.wrong());
    }
    let (min, max) = (finite(min, "min")?, finite(max, "max")?);
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    if !(max - min).is_finite() {
        return Err(format!("min {min} to max {max} is too wide a range"));
    }
    k.in_range(min, "min")?;
    k.in_range(max, "max")?;
    match decimals {
        Some(_) if t == ColumnType::Decimal => {
            return Err("decimals: a decimal column has its scale".into())
        }
        Some(_) if t != ColumnType::Double => {
            return Err(format!("decimals: a {} column has none", t.name()))
        }
        Some(d) if d > 15 => return Err(format!("decimals {d}: at most 15")),
        _ => {}
    }
    Ok(Number::Uniform {
        min,
        max,
        decimals: decimals.map(|d| d as usize),
    })
}

fn zipfian(k: &Check, min: i64, max: i64, theta: f64) -> Result<Number, String> {
    if !k.numeric() {
        return Err(k.wrong());
    }
    integer_bounds(k, min, max)?;
    if !(theta > 0.0 && theta < 1.0) {
        return Err(format!("theta {theta} is out of range: between 0 and 1"));
    }
    let span = (max as i128 - min as i128) as u64;
    if span > 100_000_000 {
        return Err(format!(
            "{} values are too many to precompute (at most 100,000,001)",
            span as u128 + 1
        ));
    }
    Ok(Number::Zipfian(Zipfian::with_constant(0, span, theta), min))
}

fn hotspot(
    k: &Check,
    min: i64,
    max: i64,
    hot_data: f64,
    hot_operations: f64,
) -> Result<Number, String> {
    if !k.numeric() {
        return Err(k.wrong());
    }
    integer_bounds(k, min, max)?;
    for (v, what) in [
        (hot_data, "hot_data_fraction"),
        (hot_operations, "hot_operation_fraction"),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{what} {v} is out of range: 0 to 1"));
        }
    }
    let span = (max as i128 - min as i128) as u64;
    Ok(Number::Hotspot(
        Hotspot::new(0, span, hot_data, hot_operations),
        min,
    ))
}

fn exponential(k: &Check, mean: f64) -> Result<Number, String> {
    if !k.numeric() {
        return Err(k.wrong());
    }
    if finite(mean, "mean")? <= 0.0 {
        return Err(format!("mean {mean} must be positive"));
    }
    k.in_range(mean * 50.0, "mean x 50")?;
    Ok(Number::Exponential(mean))
}

fn normal(k: &Check, mean: f64, stddev: f64) -> Result<Number, String> {
    if !k.numeric() {
        return Err(k.wrong());
    }
    let (mean, stddev) = (finite(mean, "mean")?, finite(stddev, "stddev")?);
    if stddev < 0.0 {
        return Err(format!("stddev {stddev} must not be negative"));
    }
    k.in_range(mean, "mean")?;
    // Values past the type's range were held at its bound, silently (issue 62, low 2): six
    // standard deviations each side must fit (one value in 500 million falls outside).
    k.in_range(mean - 6.0 * stddev, "mean - 6 stddev")?;
    k.in_range(mean + 6.0 * stddev, "mean + 6 stddev")?;
    Ok(Number::Normal(
        rand_distr::Normal::new(mean, stddev).map_err(|e| e.to_string())?,
    ))
}

fn histogram(k: &Check, buckets: &[f64], bucket_width: i64) -> Result<Number, String> {
    if !k.numeric() {
        return Err(k.wrong());
    }
    weights_checked(buckets, "buckets")?;
    if bucket_width <= 0 {
        return Err(format!("bucket_width {bucket_width} must be positive"));
    }
    k.in_range(
        buckets.len() as f64 * bucket_width as f64,
        "the last bucket's value",
    )?;
    let weighted: Vec<(u64, f64)> = buckets
        .iter()
        .enumerate()
        .map(|(b, w)| (b as u64, *w))
        .collect();
    Ok(Number::Histogram {
        buckets: Discrete::new(&weighted),
        width: bucket_width,
    })
}

fn integer_bounds(k: &Check, min: i64, max: i64) -> Result<(), String> {
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    k.in_range(min as f64, "min")?;
    k.in_range(max as f64, "max")
}

impl Make for Number {
    fn write(&mut self, d: &mut Draw<'_>, out: &mut String) {
        match self {
            Number::Uniform { min, max, decimals } => {
                if d.t.is_integer() {
                    let v = d.rng.random_range(min.round() as i64..=max.round() as i64);
                    out.push_str(itoa::Buffer::new().format(v));
                } else {
                    let v = if min == max {
                        *min
                    } else {
                        d.rng.random_range(*min..*max)
                    };
                    match decimals {
                        Some(places) => {
                            use std::fmt::Write;
                            let _ = write!(out, "{v:.places$}");
                        }
                        None => d.push_number(v, out),
                    }
                }
            }
            // Integers stay integers (a bigint past 2^53 would lose digits as a double); min and
            // max were checked against the column's range.
            Number::Zipfian(z, min) => {
                let v = (*min as i128 + z.next(d.rng) as i128) as i64;
                out.push_str(itoa::Buffer::new().format(v));
            }
            Number::Hotspot(h, min) => {
                let v = (*min as i128 + h.next(d.rng) as i128) as i64;
                out.push_str(itoa::Buffer::new().format(v));
            }
            Number::Exponential(mean) => {
                let u: f64 = d.rng.random();
                d.push_number(-*mean * (1.0 - u).ln(), out)
            }
            Number::Normal(n) => {
                let v = rand_distr::Distribution::sample(n, d.rng);
                d.push_number(v, out)
            }
            Number::Histogram { buckets, width } => {
                let v = (buckets.next(d.rng) as i64 * *width) as f64;
                d.push_number(v, out)
            }
        }
    }

    fn boxed_clone(&self) -> Box<dyn Make> {
        Box::new(self.clone())
    }
}
