//! Latency histograms: HdrHistogram, nanoseconds, 3 significant digits, growing as needed.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub type LatencyHistogram = Histogram<u64>;

/// A histogram that resizes itself, so a worker never drops a long stall as out of range.
pub fn new_histogram() -> LatencyHistogram {
    Histogram::new(3).expect("3 significant digits is valid")
}

/// The latency at quantile `q` (0..=1) in microseconds: every percentile scalebench reports (per
/// interval, per phase, per cell, per elastic point) is read from a merged histogram this way, never
/// averaged from percentiles.
pub fn quantile_us(h: &LatencyHistogram, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// HdrHistogram's compressed encoding (V2 + deflate, as Java's `encodeIntoCompressedByteBuffer`), base64.
pub fn encode_histogram(h: &LatencyHistogram) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// HdrHistogram's V2 cookies (plain and compressed, 64-bit counts), as its encoders write them.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// The V2 header: cookie, payload length, normalizing offset, digits, lowest, highest, ratio.
const V2_HEADER: usize = 40;
/// scalebench's histograms keep 3 significant digits; more would size a decoded one by megabytes.
const MAX_DIGITS: u32 = 3;
/// An inflated encoding larger than this is refused: a day of 1 s intervals encodes in kilobytes
/// each, and a crafted one could otherwise ask for gigabytes.
const MAX_INFLATED: usize = 16 << 20;

/// Decodes [`encode_histogram`]'s text. A file is input: before HdrHistogram's decoder sizes
/// anything, the encoding is inflated within [`MAX_INFLATED`] and its header checked (a payload no
/// longer than what follows it, at most 3 significant digits, a lowest value of at least 1), so a
/// crafted 52-character histogram cannot make it allocate gigabytes.
pub fn decode_histogram(encoded: &str) -> Result<LatencyHistogram, String> {
    use std::io::Read;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    let be32 = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let be64 = |b: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let plain = match be32(&bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
                .take(MAX_INFLATED as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("histogram cannot be inflated: {e}"))?;
            if out.len() > MAX_INFLATED {
                return Err(format!(
                    "histogram inflates to more than {MAX_INFLATED} bytes"
                ));
            }
            out
        }
        Some(V2_COOKIE) => bytes,
        _ => return Err("histogram cannot be decoded: not an HdrHistogram V2 encoding".into()),
    };
    let header = (|| {
        Some((
            be32(&plain, 0)?,
            be32(&plain, 4)? as usize,
            be32(&plain, 12)?,
            be64(&plain, 16)?,
            be64(&plain, 24)?,
        ))
    })();
    match header {
        Some((V2_COOKIE, payload, digits, lowest, highest))
            if plain.len() >= V2_HEADER
                && payload <= plain.len() - V2_HEADER
                && digits <= MAX_DIGITS
                && lowest >= 1
                && highest / 2 >= lowest => {}
        _ => return Err("histogram cannot be decoded: its header is out of bounds".into()),
    }
    let mut h: LatencyHistogram = Deserializer::new()
        .deserialize(&mut plain.as_slice())
        .map_err(|e| format!("histogram cannot be decoded: {e:?}"))?;
    h.auto(true);
    Ok(h)
}

/// Adds `from` into `into`; both auto-resize, so this cannot fail on range.
pub fn add_into(into: &mut LatencyHistogram, from: &LatencyHistogram) {
    into.add(from)
        .expect("auto-resizing histograms accept any value");
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    /// The full histogram (nanoseconds), HdrHistogram V2 compressed encoding, base64.
    pub histogram: String,
}

impl LatencySummary {
    pub fn from_histogram(h: &LatencyHistogram) -> Option<Self> {
        if h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(LatencySummary {
            count: h.len(),
            mean_us: h.mean() / 1000.0,
            stdev_us: h.stdev() / 1000.0,
            min_us: us(h.min()),
            max_us: us(h.max()),
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p95_us: us(h.value_at_quantile(0.95)),
            p99_us: us(h.value_at_quantile(0.99)),
            p99_9_us: us(h.value_at_quantile(0.999)),
            p99_99_us: us(h.value_at_quantile(0.9999)),
            histogram: encode_histogram(h),
        })
    }

    pub fn decode(&self) -> Result<LatencyHistogram, String> {
        crate::histogram::decode_histogram(&self.histogram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let mut h = new_histogram();
        for v in [1u64, 10, 1_000, 1_000_000, 5_000_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram("not base64!").is_err());
    }

    /// Issue 39: a crafted encoding (a few dozen characters) declaring a payload of gigabytes, or
    /// more digits than scalebench writes, is refused before anything is sized by it.
    #[test]
    fn a_crafted_header_is_refused_before_it_sizes_anything() {
        use std::io::Write;
        let craft = |payload: u32, digits: u32, lowest: u64, highest: u64| {
            let mut plain = Vec::new();
            for v in [V2_COOKIE, payload, 0, digits] {
                plain.extend(v.to_be_bytes());
            }
            plain.extend(lowest.to_be_bytes());
            plain.extend(highest.to_be_bytes());
            plain.extend(1.0f64.to_be_bytes());
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(&plain).unwrap();
            let deflated = z.finish().unwrap();
            let mut bytes = Vec::new();
            bytes.extend(V2_COMPRESSED_COOKIE.to_be_bytes());
            bytes.extend((deflated.len() as u32).to_be_bytes());
            bytes.extend(deflated);
            base64::engine::general_purpose::STANDARD.encode(bytes)
        };
        let huge = craft(u32::MAX - 16, 3, 1, 1 << 40);
        assert!(huge.len() < 80, "{huge}");
        for bad in [
            huge,
            craft(0, 5, 1, u64::MAX / 2),
            craft(0, 3, 0, 1 << 40),
            craft(0, 3, 1 << 40, 1 << 40),
        ] {
            let e = decode_histogram(&bad).unwrap_err();
            assert!(e.contains("out of bounds"), "{e}");
        }
        // A zip bomb: inflates past the bound.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&V2_COOKIE.to_be_bytes()).unwrap();
        z.write_all(&vec![0u8; MAX_INFLATED + 64]).unwrap();
        let deflated = z.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend((deflated.len() as u32).to_be_bytes());
        bytes.extend(deflated);
        let e =
            decode_histogram(&base64::engine::general_purpose::STANDARD.encode(bytes)).unwrap_err();
        assert!(e.contains("more than"), "{e}");
    }
}
