//! Benchmarks of every feature map and sketch of `rfx-sampling` and `rfx-sketches` (issue 4):
//! n = 10⁴ rows (override with `RFX_BENCH_N`), d ∈ {64, 784}, output width m = 4096.
//!
//! Before the criterion runs, each map's `transform` is timed best-of-2 and printed as rows/s; the
//! GEMM-shaped maps (RFF, ORF, QMC: X Wᵀ with W of 2048 × d; Random Maclaurin: X Rᵀ with R of ≈ 4096 × d)
//! also print their achieved GFLOP/s, counting only the 2·n·d·rows GEMM flops (the cos/sin or products are
//! extra work), as a fraction of the DGEMM rate measured here on 2000 × 2000 matrices. The maps with an
//! `f32` path (`FeatureMap::native_f32`: RFF, ORF, QMC) are also timed on the same rows in `f32`, their
//! GEMM rate as a fraction of the SGEMM rate, and benchmarked by criterion as "<name> f32" (issue 26).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rfx_core::{FeatureMap, RfxRng};
use rfx_sampling::fourier::{FourierMethod, GaussianFeatureParams};
use rfx_sketches::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn uniform(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut rng = RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, d), |_| rng.gen_range(-1.0..1.0) / (d as f64).sqrt())
}

fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .expect("reps >= 1")
}

fn dgemm_rate() -> f64 {
    let a = uniform(2000, 2000, 1);
    let b = uniform(2000, 2000, 2);
    let t = best_of(3, || a.dot(&b));
    2.0 * 2000f64.powi(3) / t.as_secs_f64() / 1e9
}

fn sgemm_rate() -> f64 {
    let a = uniform(2000, 2000, 1).mapv(|v| v as f32);
    let b = uniform(2000, 2000, 2).mapv(|v| v as f32);
    let t = best_of(3, || a.dot(&b));
    2.0 * 2000f64.powi(3) / t.as_secs_f64() / 1e9
}

struct Case {
    name: String,
    map: Box<dyn FeatureMap>,
    /// rows of the GEMM X Wᵀ, if the map is GEMM-shaped
    gemm_rows: Option<usize>,
}

fn cases(d: usize) -> Vec<Case> {
    let m = 4096;
    let mut rng = rfx_core::rng_stream(7, &format!("bench;d={d}"));
    let mut v: Vec<Case> = Vec::new();
    for (name, method, gemm) in [
        ("RFF", FourierMethod::Rff, true),
        ("ORF", FourierMethod::Orf, true),
        ("QMC", FourierMethod::Qmc, true),
        ("SORF", FourierMethod::Sorf, false),
        ("Fastfood", FourierMethod::Fastfood, false),
    ] {
        let map = GaussianFeatureParams::new(method)
            .dim(m)
            .sigma(1.0)
            .fit(d, &mut rng)
            .unwrap();
        v.push(Case {
            name: name.into(),
            map: Box::new(map),
            gemm_rows: gemm.then_some(m / 2),
        });
    }
    let rm = RandomMaclaurin::params()
        .dim(m)
        .gaussian(1.0, 10)
        .fit(d, &mut rng)
        .unwrap();
    let rows = rm
        .degrees()
        .iter()
        .zip(rm.weights())
        .filter(|(_, w)| **w != 0.0)
        .map(|(n, _)| n)
        .sum();
    v.push(Case {
        name: "RandomMaclaurin(gauss, N<=10)".into(),
        map: Box::new(rm),
        gemm_rows: Some(rows),
    });
    let mut push = |name: &str, map: Box<dyn FeatureMap>| {
        v.push(Case {
            name: name.into(),
            map,
            gemm_rows: None,
        })
    };
    push(
        "CountSketch",
        Box::new(CountSketch::params().dim(m).fit(d, &mut rng).unwrap()),
    );
    push(
        "OSNAP(s=4)",
        Box::new(Osnap::params().dim(m).sparsity(4).fit(d, &mut rng).unwrap()),
    );
    push(
        "SRHT-Hadamard",
        Box::new(
            Srht::params()
                .dim(m)
                .transform(Transform::Hadamard)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "SRHT-Fourier",
        Box::new(
            Srht::params()
                .dim(m)
                .transform(Transform::Fourier)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "TensorSketch(p=2)",
        Box::new(
            TensorSketch::params()
                .dim(m)
                .degree(2)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "TensorSRHT-Hadamard",
        Box::new(
            TensorSrht::params()
                .dim(m)
                .transform(Transform::Hadamard)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "TensorSRHT-Fourier",
        Box::new(
            TensorSrht::params()
                .dim(m)
                .transform(Transform::Fourier)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "PolySketch(P=4, degree 4)",
        Box::new(
            PolySketch::params()
                .dim(m)
                .degree(4)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    push(
        "PolynomialSketch(gauss q=4, 4x1024)",
        Box::new(
            PolynomialSketch::params()
                .dim(1024)
                .gaussian(1.0, 4)
                .fit(d, &mut rng)
                .unwrap(),
        ),
    );
    v
}

fn benches(c: &mut Criterion) {
    let n: usize = std::env::var("RFX_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let dgemm = dgemm_rate();
    let sgemm = sgemm_rate();
    println!(
        "[rfx-sketches bench] DGEMM 2000x2000: {dgemm:.1} GFLOP/s, SGEMM {sgemm:.1} GFLOP/s; n = {n}, m = 4096"
    );
    for d in [64usize, 784] {
        let x = uniform(n, d, 3 + d as u64);
        let x32 = x.mapv(|v| v as f32);
        let cs = cases(d);
        for case in &cs {
            if let (true, Some(r)) = (case.map.native_f32(), case.gemm_rows) {
                let t = best_of(2, || case.map.transform_f32(x32.view()).unwrap());
                let g = 2.0 * (n * d * r) as f64 / t.as_secs_f64() / 1e9;
                println!(
                    "[rfx-sketches bench] d={d:4} {:38} {:8.3} s {:10.0} rows/s  GEMM {g:5.1} GFLOP/s ({:3.0}% of SGEMM)",
                    format!("{} f32", case.name),
                    t.as_secs_f64(),
                    n as f64 / t.as_secs_f64(),
                    100.0 * g / sgemm
                );
            }
            let t = best_of(2, || case.map.transform(x.view()).unwrap());
            let rows_s = n as f64 / t.as_secs_f64();
            match case.gemm_rows {
                Some(r) => {
                    let g = 2.0 * (n * d * r) as f64 / t.as_secs_f64() / 1e9;
                    println!(
                        "[rfx-sketches bench] d={d:4} {:38} {:8.3} s {:10.0} rows/s  GEMM {g:5.1} GFLOP/s ({:3.0}% of DGEMM)",
                        case.name,
                        t.as_secs_f64(),
                        rows_s,
                        100.0 * g / dgemm
                    );
                }
                None => println!(
                    "[rfx-sketches bench] d={d:4} {:38} {:8.3} s {:10.0} rows/s",
                    case.name,
                    t.as_secs_f64(),
                    rows_s
                ),
            }
        }
        let mut g = c.benchmark_group(format!("transform n={n} d={d} m=4096"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(n as u64));
        for case in &cs {
            g.bench_function(case.name.as_str(), |b| {
                b.iter(|| case.map.transform(x.view()).unwrap())
            });
            if case.map.native_f32() {
                g.bench_function(format!("{} f32", case.name), |b| {
                    b.iter(|| case.map.transform_f32(x32.view()).unwrap())
                });
            }
        }
        g.finish();
    }
}

criterion_group!(sketch_benches, benches);
criterion_main!(sketch_benches);
