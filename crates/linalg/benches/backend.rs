//! The linear-algebra backend chosen by measurement (issue 26): every operation rfx uses, in `f64` and
//! `f32`, as `rfx-linalg` runs it (the system OpenBLAS on one thread, or, where this measurement chose faer —
//! the `f32` Gram and Cholesky of `Precision::MixedF32` — faer; the row's label says which) against faer
//! (pure Rust, runtime CPU dispatch, `Par::Seq`, one thread). The `f32` rows compared OpenBLAS's `ssyrk`
//! and `spotrf` with faer before the switch: faer 1.8× and 1.6× faster (`results/performance.md` of
//! 2026-11-27 02:05, commit 40baa72).
//!
//! Before the criterion runs, each operation is timed best-of-3 at n = 2048 (`RFX_BENCH_N` to change it) and
//! printed as a table row with GFLOP/s (nominal flop counts) and the faer/OpenBLAS time ratio, so one run
//! answers "which backend for which operation". The criterion groups (`gemm`, `syrk`, `cholesky`, `trsm`,
//! `eigh`, `reduction`) then measure each at n = 512 with statistics. Run with
//! `cargo bench -p rfx-linalg --bench backend` in the machine's normal environment (`OPENBLAS_CORETYPE`
//! as set there).

use criterion::{criterion_group, criterion_main, Criterion};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, Par, Side};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rfx_linalg::{
    eigh, gram_cols, gram_cols_f32_upper, BandReduction, Cholesky, CholeskyF32, SingleBlasThread,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn uniform(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| rng.gen_range(-1.0..1.0))
}

/// An ndarray matrix as a faer matrix (a copy; column-major).
fn to_faer<T: Copy + faer::traits::ComplexField>(a: &Array2<T>) -> Mat<T> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[[i, j]])
}

/// $C = AB$ of square row-major matrices by OpenBLAS's `cblas_dgemm` itself (one thread), not through
/// ndarray's `dot`: that calls the BLAS only when some crate of the build turns on ndarray's `blas` feature
/// (the workspace's `ndarray-linalg` does; `cargo bench -p rfx-linalg` alone does not, and then measured the
/// pure-Rust `matrixmultiply` under this row's name).
fn blas_dgemm(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
    let n = a.nrows();
    assert!(
        a.is_standard_layout() && b.is_standard_layout() && a.dim() == b.dim() && n == a.ncols()
    );
    let mut c = Array2::<f64>::zeros((n, n));
    let ni = n as i32;
    // SAFETY: three contiguous row-major n × n buffers, leading dimension n.
    unsafe {
        cblas_sys::cblas_dgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            ni,
            ni,
            ni,
            1.0,
            a.as_ptr(),
            ni,
            b.as_ptr(),
            ni,
            0.0,
            c.as_mut_ptr(),
            ni,
        );
    }
    c
}

/// The `f32` counterpart of [`blas_dgemm`] (`cblas_sgemm`).
fn blas_sgemm(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    let n = a.nrows();
    assert!(
        a.is_standard_layout() && b.is_standard_layout() && a.dim() == b.dim() && n == a.ncols()
    );
    let mut c = Array2::<f32>::zeros((n, n));
    let ni = n as i32;
    // SAFETY: as in blas_dgemm.
    unsafe {
        cblas_sys::cblas_sgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
            ni,
            ni,
            ni,
            1.0,
            a.as_ptr(),
            ni,
            b.as_ptr(),
            ni,
            0.0,
            c.as_mut_ptr(),
            ni,
        );
    }
    c
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

/// The inputs of every operation at size n: Z (n × n), the SPD matrix A = ZᵀZ/n + I, right-hand sides.
struct Inputs {
    z: Array2<f64>,
    z32: Array2<f32>,
    a: Array2<f64>,
    b: Array2<f64>,
    zf: Mat<f64>,
    zf32: Mat<f32>,
    af: Mat<f64>,
    af32: Mat<f32>,
    bf: Mat<f64>,
}

impl Inputs {
    fn new(n: usize) -> Inputs {
        let z = uniform(n, n, 1);
        let mut a = gram_cols(z.view()).unwrap() / n as f64;
        rfx_linalg::add_diag(&mut a, 1.0);
        let b = uniform(n, 64, 2);
        let z32 = z.mapv(|v| v as f32);
        Inputs {
            zf: to_faer(&z),
            zf32: to_faer(&z32),
            af: to_faer(&a),
            af32: to_faer(&a.mapv(|v| v as f32)),
            bf: to_faer(&b),
            z,
            z32,
            a,
            b,
        }
    }
}

/// One operation in both backends: its name, nominal flops at n, the OpenBLAS and faer calls.
type Op<'a> = (
    &'static str,
    f64,
    Box<dyn FnMut() + 'a>,
    Box<dyn FnMut() + 'a>,
);

fn ops(x: &Inputs) -> Vec<Op<'_>> {
    let n = x.a.nrows();
    let nf = n as f64;
    let n3 = nf.powi(3);
    let chol = Cholesky::factor_view(x.a.view()).unwrap();
    let fchol = x.af.llt(Side::Lower).unwrap();
    let reduce = move |a: &Mat<f64>| {
        let mut a = a.clone();
        let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
        let mut h = Mat::<f64>::zeros(bs, n - 1);
        let mut mem = MemBuffer::new(faer::linalg::evd::tridiag::tridiag_in_place_scratch::<f64>(
            n,
            Par::Seq,
            Default::default(),
        ));
        faer::linalg::evd::tridiag::tridiag_in_place(
            a.as_mut(),
            h.as_mut(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        );
        a
    };
    vec![
        (
            "gemm f64",
            2.0 * n3,
            Box::new(move || {
                let _pin = SingleBlasThread::new();
                black_box(blas_dgemm(&x.z, &x.z));
            }),
            Box::new(move || {
                let mut c = Mat::<f64>::zeros(n, n);
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    x.zf.as_ref(),
                    x.zf.as_ref(),
                    1.0,
                    Par::Seq,
                );
                black_box(c);
            }),
        ),
        (
            "gemm f32",
            2.0 * n3,
            Box::new(move || {
                let _pin = SingleBlasThread::new();
                black_box(blas_sgemm(&x.z32, &x.z32));
            }),
            Box::new(move || {
                let mut c = Mat::<f32>::zeros(n, n);
                matmul(
                    c.as_mut(),
                    Accum::Replace,
                    x.zf32.as_ref(),
                    x.zf32.as_ref(),
                    1.0f32,
                    Par::Seq,
                );
                black_box(c);
            }),
        ),
        (
            "syrk ZᵀZ f64 (OpenBLAS: rayon tiles)",
            n3,
            Box::new(move || {
                black_box(gram_cols(x.z.view()).unwrap());
            }),
            Box::new(move || {
                let mut c = Mat::<f64>::zeros(n, n);
                faer::linalg::matmul::triangular::matmul(
                    c.as_mut(),
                    faer::linalg::matmul::triangular::BlockStructure::TriangularLower,
                    Accum::Replace,
                    x.zf.transpose(),
                    faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                    x.zf.as_ref(),
                    faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                    1.0,
                    Par::Seq,
                );
                black_box(c);
            }),
        ),
        (
            "syrk ZᵀZ f32 (rfx: from f64, faer tiles on rayon)",
            n3,
            Box::new(move || {
                black_box(gram_cols_f32_upper(x.z.view()).unwrap());
            }),
            Box::new(move || {
                let mut c = Mat::<f32>::zeros(n, n);
                faer::linalg::matmul::triangular::matmul(
                    c.as_mut(),
                    faer::linalg::matmul::triangular::BlockStructure::TriangularLower,
                    Accum::Replace,
                    x.zf32.transpose(),
                    faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                    x.zf32.as_ref(),
                    faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                    1.0f32,
                    Par::Seq,
                );
                black_box(c);
            }),
        ),
        (
            "cholesky f64",
            n3 / 3.0,
            Box::new(move || {
                black_box(Cholesky::factor_view(x.a.view()).unwrap());
            }),
            Box::new(move || {
                faer::set_global_parallelism(Par::Seq);
                black_box(x.af.llt(Side::Lower).unwrap());
            }),
        ),
        (
            "cholesky f32 (rfx: faer, from f64)",
            n3 / 3.0,
            Box::new(move || {
                black_box(CholeskyF32::factor_f64(x.a.view()).unwrap());
            }),
            Box::new(move || {
                faer::set_global_parallelism(Par::Seq);
                black_box(x.af32.llt(Side::Lower).unwrap());
            }),
        ),
        (
            "cholesky solve, 64 rhs (2 trsm)",
            2.0 * nf * nf * 64.0,
            Box::new(move || {
                black_box(chol.solve(x.b.view()).unwrap());
            }),
            Box::new(move || {
                faer::set_global_parallelism(Par::Seq);
                black_box(fchol.solve(x.bf.as_ref()));
            }),
        ),
        (
            "eigh f64 (values and vectors)",
            9.0 * n3,
            Box::new(move || {
                black_box(eigh(x.a.view()).unwrap());
            }),
            Box::new(move || {
                faer::set_global_parallelism(Par::Seq);
                black_box(x.af.self_adjoint_eigen(Side::Lower).unwrap());
            }),
        ),
        (
            "reduction f64 (OpenBLAS: band; faer: tridiagonal)",
            4.0 * n3 / 3.0,
            Box::new(move || {
                black_box(BandReduction::new(x.a.view()).unwrap());
            }),
            Box::new(move || {
                black_box(reduce(&x.af));
            }),
        ),
    ]
}

fn table(n: usize) {
    let x = Inputs::new(n);
    println!("[rfx-linalg backend] n = {n}, best of 3, one thread each (rayon tiles: the pool); ratio = faer time / rfx time");
    println!(
        "[rfx-linalg backend] {:<50} {:>10} {:>10} {:>10} {:>10} {:>7}",
        "operation", "rfx s", "GFLOP/s", "faer s", "GFLOP/s", "ratio"
    );
    for (name, flops, mut blas, mut faer) in ops(&x) {
        let tb = best_of(3, &mut blas).as_secs_f64();
        let tf = best_of(3, &mut faer).as_secs_f64();
        println!(
            "[rfx-linalg backend] {name:<50} {tb:>10.4} {:>10.1} {tf:>10.4} {:>10.1} {:>7.2}",
            flops / tb / 1e9,
            flops / tf / 1e9,
            tf / tb
        );
    }
}

fn benches(c: &mut Criterion) {
    let n = std::env::var("RFX_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2048);
    table(n);
    let x = Inputs::new(512);
    for (name, _, mut blas, mut faer) in ops(&x) {
        let group = name.split(' ').next().unwrap_or(name).to_string();
        let mut g = c.benchmark_group(format!("{group} n=512"));
        g.sample_size(10);
        g.bench_function(format!("{name} OpenBLAS"), |b| b.iter(&mut blas));
        g.bench_function(format!("{name} faer"), |b| b.iter(&mut faer));
        g.finish();
    }
}

criterion_group!(backend, benches);
criterion_main!(backend);
