//! Every feature map of the method registry (`rfx methods`), through the same `build` as `rfx features`,
//! at d = 784 (MNIST's width) and budget m = 4096 (m = 1024 for Nyström), n = 1000 rows (`RFX_BENCH_N`):
//! rows per second, and for the GEMM-shaped maps (RFF/ORF/QMC: X Wᵀ with m/2 directions; arc-cosine: m
//! directions; Gegenbauer: m/s directions; NTK-RF at depth 1: m/2 Step + m/2 ReLU directions) the achieved GEMM rate as a
//! fraction of the DGEMM rate measured at the start of the same run (4096², all threads).
//!
//! Run: `cargo bench -p rfx-experiments --bench maps [-- FILTER]`. Before the criterion runs each map is
//! timed best-of-3 (fit + transform) and printed as `[rfx maps bench] ...` lines; criterion then reports
//! rows/s (`thrpt`) for the transform alone.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::{Array2, Axis};
use rfx_core::rng_stream;
use rfx_core::FitData;
use rfx_registry as methods;
use rfx_sampling::random::gaussian_matrix;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Rows with Gaussian entries scaled to unit norm (the unit-norm fast paths accept them too).
fn data(n: usize, d: usize) -> Array2<f64> {
    let mut x = gaussian_matrix(n, d, &mut rng_stream(0, "bench;maps;x"));
    for mut r in x.axis_iter_mut(Axis(0)) {
        let s = r.dot(&r).sqrt();
        r /= s;
    }
    x
}

/// Flops of the map's projection GEMM for n rows (None: not GEMM-shaped).
fn gemm_flops(name: &str, n: usize, d: usize, m: usize) -> Option<f64> {
    let dirs = match name {
        "rff" | "orf" | "qmc" => m / 2,
        // ntk-rf: m0 = m1 = m/2 Step and ReLU directions, drawn separately
        "arccos" | "lp-rff" | "ntk-rf" => m,
        "gegenbauer" => m / 4,
        _ => return None,
    };
    Some(2.0 * (n * d * dirs) as f64)
}

fn benches(c: &mut Criterion) {
    let n: usize = std::env::var("RFX_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let d = 784;
    let g = 4096;
    let a = gaussian_matrix(g, g, &mut rng_stream(0, "bench;gemm-a"));
    let b = gaussian_matrix(g, g, &mut rng_stream(0, "bench;gemm-b"));
    black_box(a.dot(&b));
    let t = best_of(3, || a.dot(&b));
    let dgemm = 2.0 * (g as f64).powi(3) / t / 1e9;
    println!("[rfx maps bench] DGEMM {g}x{g}: {dgemm:.1} GFLOP/s");
    drop((a, b));
    let x = data(n, d);
    let mut group = c.benchmark_group(format!("maps n={n} d={d}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(n as u64));
    for spec in methods::methods() {
        // the image maps see each row as a 28x28 image: their cost grows with m times the pixels
        let m = match spec.name {
            "nystrom" => 1024,
            "cntksketch" | "cnn-grad-rf" => 256,
            _ => 4096,
        };
        let p = spec.parse_params(&[]).expect("defaults parse");
        let data = if spec.data_dependent {
            FitData::Rows(x.view())
        } else {
            FitData::Dim(d)
        };
        let build = || {
            spec.fit(m, &p, data, &mut rng_stream(0, spec.name))
                .expect("fit with defaults")
        };
        let t = best_of(3, || build().transform(x.view()).expect("transform"));
        let rows = n as f64 / t;
        match gemm_flops(spec.name, n, d, m) {
            Some(f) => println!(
                "[rfx maps bench] {:12} m={m:5} {t:8.3} s {rows:10.0} rows/s {:6.1} GFLOP/s = {:.2} of DGEMM",
                spec.name,
                f / t / 1e9,
                f / t / 1e9 / dgemm
            ),
            None => println!(
                "[rfx maps bench] {:12} m={m:5} {t:8.3} s {rows:10.0} rows/s",
                spec.name
            ),
        }
        let map = build();
        group.bench_function(format!("{} m={m}", spec.name), |bch| {
            bch.iter(|| map.transform(x.view()).expect("transform"))
        });
    }
    group.finish();
}

criterion_group!(maps, benches);
criterion_main!(maps);
