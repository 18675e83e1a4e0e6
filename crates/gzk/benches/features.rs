//! Benchmark of random Gegenbauer features (Definition 8): transform of n = 10⁴ rows, d = 9, m = 1024
//! features, q = 15 (the paper's degree), for s = 1 (1024 directions) and s = 4 (256 directions), and the
//! unit-norm fast path; throughput reported in rows/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::{Array2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;
use rfx_core::{rng_stream, FeatureMap};
use rfx_gzk::{Gzk, RandomGegenbauerParams};
use std::hint::black_box;

/// n points with Gaussian entries scaled to norms ≤ 1.5, or unit norms.
fn data(n: usize, d: usize, unit: bool) -> Array2<f64> {
    let mut rng = rng_stream(0, "bench-data");
    let mut x = Array2::from_shape_fn((n, d), |_| rng.sample::<f64, _>(StandardNormal));
    for mut row in x.axis_iter_mut(Axis(0)) {
        let norm = row.dot(&row).sqrt();
        let r = if unit { 1.0 } else { 1.5 * rng.gen::<f64>() };
        row.mapv_inplace(|v| v * r / norm);
    }
    x
}

fn bench(c: &mut Criterion) {
    let (n, d, q) = (10_000, 9, 15);
    let mut group = c.benchmark_group("random_gegenbauer_features");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    let x = data(n, d, false);
    let gauss = Gzk::gaussian(1.0).expect("valid bandwidth");
    for s in [1usize, 4] {
        let map = RandomGegenbauerParams::new(gauss.clone(), 1024 / s, q, s)
            .fit(d, &mut rng_stream(0, "bench-fit"))
            .expect("valid parameters");
        group.bench_function(format!("gaussian_n1e4_d9_m1024_q15_s{s}"), |b| {
            b.iter(|| black_box(map.transform(x.view()).expect("transform")))
        });
    }
    let xu = data(n, d, true);
    let map = RandomGegenbauerParams::unit_norm(gauss, 1024, q)
        .fit(d, &mut rng_stream(0, "bench-fit"))
        .expect("valid parameters");
    group.bench_function("gaussian_unit_norm_n1e4_d9_m1024_q15", |b| {
        b.iter(|| black_box(map.transform(xu.view()).expect("transform")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
