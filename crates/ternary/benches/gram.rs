//! Popcount Gram of ternary codes vs the f64 and f32 GEMM Gram of the same n × m features, and feature
//! computation (add-only ternary vs dense-GEMM RFF / ReLU features).
//!
//! Run: `cargo bench -p rfx-ternary --bench gram` (short settings; the CPU is shared).
//!
//! Measured 2026-11-22 on the shared 2-core box (median): Gram of n = 1000 points, m = 1024 / 8192:
//! popcount 22 / 121 ms, f32 GEMM 43 / 369 ms, f64 GEMM 78 / 730 ms. Features, n = 1000, p = 784,
//! m = 4096: ternary add-only 408 ms (eps = 0), 187 ms (0.5), 73 ms (0.9); RFF GEMM + cos 349 ms;
//! ReLU GEMM 308 ms.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ndarray::Array2;
use rand_distr::{Distribution, StandardNormal};
use rfx_core::{rng_stream, FeatureMap};
use rfx_ternary::{ReluFeatures, TernaryParams, Thresholds};
use std::hint::black_box;
use std::time::Duration;

fn data(n: usize, p: usize) -> Array2<f64> {
    let mut rng = rng_stream(0, "bench-x");
    Array2::from_shape_simple_fn((n, p), || {
        <StandardNormal as Distribution<f64>>::sample(&StandardNormal, &mut rng) / (p as f64).sqrt()
    })
}

fn gram(c: &mut Criterion) {
    let (n, p) = (1000, 64);
    let x = data(n, p);
    let th = Thresholds::new(-1.375, -0.539, 1.0).unwrap();
    let mut g = c.benchmark_group("gram");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for m in [1024usize, 8192] {
        let f = TernaryParams::new(m)
            .sparsity(0.5)
            .fit(p, th, &mut rng_stream(0, "bench-trf"))
            .unwrap();
        let codes = f.transform_packed(x.view()).unwrap();
        let dense = codes.unpack();
        let dense32 = dense.mapv(|v| v as f32);
        g.bench_with_input(BenchmarkId::new("popcount", m), &m, |b, _| {
            b.iter(|| black_box(codes.gram()))
        });
        g.bench_with_input(BenchmarkId::new("f64_gemm", m), &m, |b, _| {
            b.iter(|| black_box(dense.dot(&dense.t())))
        });
        g.bench_with_input(BenchmarkId::new("f32_gemm", m), &m, |b, _| {
            b.iter(|| black_box(dense32.dot(&dense32.t())))
        });
    }
    g.finish();
}

fn features(c: &mut Criterion) {
    let (n, p, m) = (1000, 784, 4096);
    let x = data(n, p);
    let th = Thresholds::new(-1.375, -0.539, 1.0).unwrap();
    let mut g = c.benchmark_group("features");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for eps in [0.0, 0.5, 0.9] {
        let f = TernaryParams::new(m)
            .sparsity(eps)
            .fit(p, th, &mut rng_stream(0, "bench-trf"))
            .unwrap();
        g.bench_with_input(BenchmarkId::new("ternary_add_only", eps), &eps, |b, _| {
            b.iter(|| black_box(f.transform_packed(x.view()).unwrap()))
        });
    }
    let rff = rfx_sampling::Rff::params()
        .dim(m)
        .output(rfx_sampling::Output::RandomPhase)
        .fit(p, &mut rng_stream(0, "bench-rff"))
        .unwrap();
    g.bench_function("rff_gemm_cos", |b| {
        b.iter(|| black_box(rff.transform(x.view()).unwrap()))
    });
    let relu = ReluFeatures::fit(p, m, &mut rng_stream(0, "bench-relu")).unwrap();
    g.bench_function("relu_gemm", |b| {
        b.iter(|| black_box(relu.transform(x.view()).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, gram, features);
criterion_main!(benches);
