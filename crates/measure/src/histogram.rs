//! Latency histograms: HdrHistogram, nanoseconds, 3 significant digits, growing as needed.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

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

pub fn decode_histogram(encoded: &str) -> Result<LatencyHistogram, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    let mut h: LatencyHistogram = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram cannot be decoded: {e:?}"))?;
    h.auto(true);
    Ok(h)
}

/// Adds `from` into `into`; both auto-resize, so this cannot fail on range.
pub fn add_into(into: &mut LatencyHistogram, from: &LatencyHistogram) {
    into.add(from)
        .expect("auto-resizing histograms accept any value");
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
}
