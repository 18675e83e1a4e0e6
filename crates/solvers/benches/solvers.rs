//! Benchmarks of the GEMM-shaped solver steps (issue 3): ridge fit for (n, m) ∈ {(10⁴, 10³), (4·10⁴, 4·10³)},
//! exact KRR at n = 5000, the generalized condition number at n = 2000, and the linear SVM's C path (issue 26:
//! LIBLINEAR's dual coordinate descent against the finite Newton method, survey-benchmark's shape).
//!
//! Before the criterion runs, each case is timed best-of-3 (best-of-1 for the large ridge case) and printed
//! with its achieved GFLOP/s next to the DGEMM rate measured here at 2000 × 2000. The large ridge case
//! (Z is 1.28 GB, ~10 s per fit) runs under criterion only with `RFX_BENCH_LARGE=1`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ndarray::{Array2, Axis};
use rand::{Rng, SeedableRng};
use rfx_linalg::{add_diag, eigh, gram_cols, gram_rows, BandReduction, Cholesky, Precision};
use rfx_solvers::classify::{LinearSvm, SvmParams, SvmSolver};
use rfx_solvers::metrics::{gflops, timed};
use rfx_solvers::ridge::{
    select_lambda, CvScore, KernelRidge, KrrParams, LambdaScale, LambdaSearch, Ridge, RidgeParams,
    Validation,
};
use rfx_solvers::spectral::spectral_approx;
use std::hint::black_box;
use std::time::Duration;

fn uniform(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| rng.gen_range(-1.0..1.0))
}

fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..reps)
        .map(|_| timed(|| black_box(f())).1)
        .min()
        .expect("reps >= 1")
}

fn dgemm_rate() -> f64 {
    let a = uniform(2000, 2000, 1);
    let b = uniform(2000, 2000, 2);
    let t = best_of(3, || a.dot(&b));
    gflops(2.0 * 2000f64.powi(3), t)
}

fn report(name: &str, flops: f64, t: Duration, dgemm: f64) {
    let g = gflops(flops, t);
    println!(
        "[rfx-solvers bench] {name}: {:.3} s, {:.1} GFLOP/s ({:.0}% of DGEMM {:.1} GFLOP/s), {:.2e} flop",
        t.as_secs_f64(),
        g,
        100.0 * g / dgemm,
        dgemm,
        flops
    );
}

fn ridge_flops(n: f64, m: f64, k: f64) -> f64 {
    // dsyrk n m² + ZᵀY 2nmk + Cholesky m³/3 + two triangular solves 2m²k
    n * m * m + 2.0 * n * m * k + m * m * m / 3.0 + 2.0 * m * m * k
}

fn benches(c: &mut Criterion) {
    let dgemm = dgemm_rate();
    println!("[rfx-solvers bench] DGEMM 2000x2000: {dgemm:.1} GFLOP/s");

    // ridge fit, (n, m) = (1e4, 1e3), one output
    let (n, m) = (10_000, 1_000);
    let z = uniform(n, m, 3);
    let y = uniform(n, 1, 4);
    let p = RidgeParams::new(1e-3);
    let t = best_of(3, || Ridge::fit(z.view(), y.view(), &p).unwrap());
    report(
        "ridge fit n=1e4 m=1e3 (total)",
        ridge_flops(n as f64, m as f64, 1.0),
        t,
        dgemm,
    );
    let t = best_of(3, || gram_cols(z.view()).unwrap());
    report("  of which ZtZ by dsyrk", (n * m * m) as f64, t, dgemm);
    let pm = p.precision(Precision::MixedF32);
    let t = best_of(3, || Ridge::fit(z.view(), y.view(), &pm).unwrap());
    report(
        "ridge fit n=1e4 m=1e3, mixed f32 (f64-equivalent flops)",
        ridge_flops(n as f64, m as f64, 1.0),
        t,
        dgemm,
    );
    let mut g = c.benchmark_group("ridge");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("fit n=1e4 m=1e3", |b| {
        b.iter(|| Ridge::fit(z.view(), y.view(), &p).unwrap())
    });
    g.bench_function("fit n=1e4 m=1e3 mixed-f32", |b| {
        b.iter(|| Ridge::fit(z.view(), y.view(), &pm).unwrap())
    });
    drop(z);

    // ridge fit, (n, m) = (4e4, 4e3)
    let (n, m) = (40_000, 4_000);
    let z = uniform(n, m, 5);
    let y = uniform(n, 1, 6);
    let t = best_of(1, || Ridge::fit(z.view(), y.view(), &p).unwrap());
    report(
        "ridge fit n=4e4 m=4e3 (total)",
        ridge_flops(n as f64, m as f64, 1.0),
        t,
        dgemm,
    );
    if std::env::var_os("RFX_BENCH_LARGE").is_some() {
        g.bench_function("fit n=4e4 m=4e3", |b| {
            b.iter(|| Ridge::fit(z.view(), y.view(), &p).unwrap())
        });
    }
    g.finish();
    drop(z);

    // the λ path of a ridge search: one band reduction (dsytrd_sy2sb) per fold instead of the
    // eigendecomposition (dsyevd) it replaced, on an m × m Gram; then a whole 2-fold search of 10 λ
    let m = 3_000;
    let z = uniform(2 * m, m, 8);
    let a = gram_cols(z.view()).unwrap();
    let t_band = best_of(2, || BandReduction::new(a.view()).unwrap());
    let t_eig = best_of(2, || eigh(a.view()).unwrap());
    println!(
        "[rfx-solvers bench] λ path on a {m} x {m} Gram: band reduction {:.2} s, eigendecomposition {:.2} s ({:.1}x)",
        t_band.as_secs_f64(),
        t_eig.as_secs_f64(),
        t_eig.as_secs_f64() / t_band.as_secs_f64()
    );
    let y = uniform(2 * m, 1, 9);
    let search = LambdaSearch {
        grid: (0..10).map(|i| 10f64.powi(i - 9)).collect(),
        scale: LambdaScale::TimesN,
        validation: Validation::KFold { folds: 2, seed: 1 },
        score: CvScore::Mse,
    };
    // one OpenBLAS thread, as in a run; the folds one after another (a 1-thread pool) and in parallel (the
    // default pool: as many folds at once as threads), same scores bit for bit
    let _pin = rfx_linalg::SingleBlasThread::new();
    let pool1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let t1 = best_of(1, || {
        pool1.install(|| select_lambda(z.view(), y.view(), &search).unwrap())
    });
    let t = best_of(1, || select_lambda(z.view(), y.view(), &search).unwrap());
    println!(
        "[rfx-solvers bench] 2-fold λ search, 10 λ, n = {} m = {m}, one OpenBLAS thread: folds in sequence {:.2} s, \
         in parallel on {} threads {:.2} s ({:.2}x)",
        2 * m,
        t1.as_secs_f64(),
        rayon::current_num_threads(),
        t.as_secs_f64(),
        t1.as_secs_f64() / t.as_secs_f64()
    );
    drop(_pin);
    drop((z, a));

    // exact KRR, n = 5000: K = X Xᵀ / d + I (PSD, well conditioned)
    let n = 5_000;
    let x = uniform(n, 50, 7);
    let mut k = gram_rows(x.view()).unwrap() / 50.0;
    add_diag(&mut k, 1.0);
    let y = uniform(n, 1, 8);
    let kp = KrrParams::new(1e-3);
    let t = best_of(3, || {
        KernelRidge::fit_gram(k.clone(), y.view(), &kp).unwrap()
    });
    let nf = n as f64;
    report(
        "exact KRR n=5000 (Cholesky + solve)",
        nf.powi(3) / 3.0 + 2.0 * nf * nf,
        t,
        dgemm,
    );
    let kpm = kp.precision(Precision::MixedF32);
    let t = best_of(3, || {
        KernelRidge::fit_gram(k.clone(), y.view(), &kpm).unwrap()
    });
    report(
        "exact KRR n=5000 mixed f32 (f64-equivalent flops)",
        nf.powi(3) / 3.0 + 2.0 * nf * nf,
        t,
        dgemm,
    );
    let mut g = c.benchmark_group("krr");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    for (name, params) in [("exact n=5000", kp), ("exact n=5000 mixed-f32", kpm)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || k.clone(),
                |kk| KernelRidge::fit_gram(kk, y.view(), &params).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    drop(k);

    // generalized condition number, n = 2000, m = 500 features
    let n = 2_000;
    let z = uniform(n, 500, 9);
    let zp = &z + &(uniform(n, 500, 10) * 0.1);
    let k = gram_rows(z.view()).unwrap();
    let lam = 1e-4 * n as f64;
    let t = best_of(3, || spectral_approx(k.view(), zp.view(), lam).unwrap());
    let nf = n as f64;
    // ZZᵀ n²m + Cholesky n³/3 + two trsm 2n³ + tridiagonal reduction 4n³/3
    let flops = nf * nf * 500.0 + nf.powi(3) / 3.0 + 2.0 * nf.powi(3) + 4.0 * nf.powi(3) / 3.0;
    report("generalized condition number n=2000 m=500", flops, t, dgemm);
    let t = best_of(3, || {
        let mut a = k.clone();
        add_diag(&mut a, lam);
        Cholesky::factor(a).unwrap()
    });
    report("  of which Cholesky n=2000", nf.powi(3) / 3.0, t, dgemm);
    let mut g = c.benchmark_group("spectral");
    g.sample_size(10);
    g.bench_function("generalized condition number n=2000", |b| {
        b.iter(|| spectral_approx(k.view(), zp.view(), lam).unwrap())
    });
    g.finish();
    black_box(z.sum_axis(Axis(0)));

    // the linear SVM's C path as survey-benchmark runs it per inner fold: 800 rows, C = 0.01 … 100 warm
    // started, one-vs-rest; overlapping classes (labels: the argmax of a random linear score of the features
    // plus as much noise)
    let cs = [0.01, 0.1, 1.0, 10.0, 100.0];
    let classes = 8;
    let svm_data = |m: usize| {
        let z = uniform(800, m, 11);
        let score =
            z.dot(&uniform(m, classes, 12)) + &(uniform(800, classes, 13) * (m as f64).sqrt());
        let labels: Vec<usize> = score
            .rows()
            .into_iter()
            .map(|r| (0..classes).fold(0, |b, j| if r[j] > r[b] { j } else { b }))
            .collect();
        (z.mapv(|v| v / (m as f64).sqrt()), labels)
    };
    let dcd = SvmParams::new(1.0, 5);
    let newton = SvmParams {
        solver: SvmSolver::Newton,
        ..dcd
    };
    let hybrid = SvmParams {
        solver: SvmSolver::Hybrid,
        ..dcd
    };
    for m in [128, 512, 1024] {
        let (z, labels) = svm_data(m);
        for (name, p) in [
            ("dual CD (LIBLINEAR -s 1)", dcd),
            ("Newton", newton),
            ("hybrid", hybrid),
        ] {
            let mut work = 0;
            let t = best_of(1, || {
                let path = LinearSvm::fit_path(z.view(), &labels, classes, &p, &cs).unwrap();
                work = path
                    .iter()
                    .flat_map(|s| s.models().iter().map(|b| b.iterations))
                    .sum::<usize>();
                path
            });
            println!(
                "[rfx-solvers bench] SVM C path n=800 m={m} {classes} classes, {name}: {:.3} s, {work} passes/steps",
                t.as_secs_f64()
            );
        }
    }
    let (z, labels) = svm_data(512);
    let mut g = c.benchmark_group("svm path n=800 m=512");
    g.sample_size(10);
    for (name, p) in [("dual CD", dcd), ("Newton", newton), ("hybrid", hybrid)] {
        g.bench_function(name, |b| {
            b.iter(|| LinearSvm::fit_path(z.view(), &labels, classes, &p, &cs).unwrap())
        });
    }
    g.finish();
}

criterion_group!(solvers, benches);
criterion_main!(solvers);
