//! The exact kernel k-means objective sums in row order, so it is bit-identical in rayon pools of any size.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rfx_linalg::gram_rows;
use rfx_solvers::kmeans::kernel_kmeans_objective;

fn uniform(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| rng.gen_range(-1.0..1.0))
}

#[test]
fn kernel_kmeans_objective_is_bit_identical_at_any_thread_count() {
    let pool = |t: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };

    let k = gram_rows(uniform(3000, 5, 4).view()).unwrap();
    let labels: Vec<usize> = (0..3000).map(|i| (i * 7) % 3).collect();
    let o1 = pool(1).install(|| kernel_kmeans_objective(k.view(), &labels).unwrap());
    let o2 = pool(2).install(|| kernel_kmeans_objective(k.view(), &labels).unwrap());
    assert_eq!(o1.to_bits(), o2.to_bits());
}
