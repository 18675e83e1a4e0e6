//! Reproducible random streams.
//!
//! Every random draw in rfx comes from a ChaCha20 stream whose 64-bit seed is derived from an
//! experiment seed and a textual key (for an experiment cell: its parameter assignment, e.g.
//! `function=exp2x;expansion=taylor;degree=3`). The derivation is a fixed function of the bytes
//! (FNV-1a followed by the SplitMix64 finaliser), so it is stable across platforms, Rust versions,
//! thread counts and execution order — unlike `std`'s `DefaultHasher`, whose output is not specified.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// The RNG type used throughout rfx.
pub type RfxRng = ChaCha20Rng;

/// SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijection on `u64` with good avalanche.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives the seed of the stream named `key` under the experiment seed `seed`.
///
/// $s = \mathrm{splitmix64}(\mathrm{fnv1a}(\texttt{key}) \oplus \mathrm{splitmix64}(\texttt{seed}))$.
pub fn stream_seed(seed: u64, key: &str) -> u64 {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = FNV_OFFSET;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    splitmix64(h ^ splitmix64(seed))
}

/// A ChaCha20 stream for `(seed, key)`; see [`stream_seed`].
pub fn rng_stream(seed: u64, key: &str) -> RfxRng {
    RfxRng::seed_from_u64(stream_seed(seed, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| rng_stream(7, "a").next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]), "same key, same stream");
        assert_ne!(stream_seed(7, "a"), stream_seed(7, "b"));
        assert_ne!(stream_seed(7, "a"), stream_seed(8, "a"));
        // The derivation is a fixed function: pin one value so that an accidental change is caught.
        assert_eq!(
            stream_seed(0, ""),
            splitmix64(0xcbf2_9ce4_8422_2325 ^ splitmix64(0))
        );
    }

    #[test]
    fn derived_seeds_look_uniform() {
        // Bit balance over 4096 keys: each bit is set with probability 1/2, so the count of ones per bit
        // is Binomial(4096, 1/2) with standard deviation 32; 6 standard deviations is a safe bound.
        let n = 4096u32;
        let mut ones = [0u32; 64];
        for i in 0..n {
            let s = stream_seed(42, &format!("cell={i}"));
            for (b, c) in ones.iter_mut().enumerate() {
                *c += ((s >> b) & 1) as u32;
            }
        }
        for c in ones {
            assert!((f64::from(c) - 2048.0).abs() < 6.0 * 32.0, "bit count {c}");
        }
    }
}
