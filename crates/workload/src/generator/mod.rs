//! Number generators with YCSB's semantics (site.ycsb.generator).
//!
//! Stateless generators take the worker's RNG as an argument, so each worker owns its randomness
//! (deterministic from the seed) and nothing is shared on the hot path. Generators whose state YCSB
//! shares between client threads (counters, the sequential generator) share it here through atomics.

pub mod counter;
pub mod discrete;
pub mod exponential;
pub mod hotspot;
pub mod scrambled_zipfian;
pub mod sequential;
pub mod skewed_latest;
pub mod uniform;
pub mod zipfian;

pub use counter::AcknowledgedCounter;
pub use discrete::Discrete;
pub use exponential::Exponential;
pub use hotspot::Hotspot;
pub use scrambled_zipfian::ScrambledZipfian;
pub use sequential::Sequential;
pub use skewed_latest::SkewedLatest;
pub use uniform::Uniform;
pub use zipfian::Zipfian;

/// The RNG every worker owns: small, fast, seedable (xoshiro256++ on 64-bit targets).
pub type WorkerRng = rand::rngs::SmallRng;

/// Java's `Math.abs(random.nextLong()) % n` for a positive `n`, as YCSB's hotspot generator uses it.
pub(crate) fn abs_long_mod<R: rand::RngCore>(rng: &mut R, n: u64) -> u64 {
    let v = (rng.next_u64() as i64).wrapping_abs();
    // wrapping_abs leaves i64::MIN negative; Java's % then yields a negative value which YCSB never
    // hits in practice (1 in 2^64); map it into range instead.
    (v as i128).rem_euclid(n as i128) as u64
}
