//! Helpers shared by unit tests.

use ndarray::Array2;
use rand::{Rng, SeedableRng};

/// An $n \times m$ matrix of i.i.d. $N(0, 1)$ entries (Box–Muller on a seeded ChaCha stream).
pub(crate) fn randn(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| {
        let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
        let u2: f64 = rng.gen();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    })
}

/// Largest absolute entry.
pub(crate) fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}
