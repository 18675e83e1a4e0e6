//! The linear-algebra wrappers give bit-identical results at any OpenBLAS or rayon thread count.
//!
//! OpenBLAS's multi-threaded paths round differently with the thread count (on OpenBLAS 0.3.21 GEMM,
//! `dsyrk`, `dpotrf`, `dsytrd`, `dsyevd` and `dormtr` all did at these sizes before the wrappers pinned
//! OpenBLAS to one thread), so each wrapper is run at 1 and 2 BLAS threads, and the rayon-tiled Grams in
//! rayon pools of 1 and 2 threads. Sizes (600, and 333 for ragged tiles) are above OpenBLAS's thresholds for
//! going multi-threaded. One test function: the BLAS thread count is process-wide.

use ndarray::{s, Array2};
use rand::{Rng, SeedableRng};
use rfx_linalg::{
    blas_threads, eigh, eigvalsh, gram_cols, gram_cols_f32_upper, gram_rows, gram_rows_add_upper,
    gram_rows_upper_serial, set_blas_threads, BandReduction, Cholesky, CholeskyF32,
    NormalEquations, SingleBlasThread,
};

fn uniform(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| rng.gen_range(-1.0..1.0))
}

/// Every number a wrapper returns, as bits (so that NaN = NaN and 0.0 ≠ -0.0).
fn bits<'a>(parts: impl IntoIterator<Item = &'a Array2<f64>>) -> Vec<u64> {
    parts
        .into_iter()
        .flat_map(|a| a.iter().map(|v| v.to_bits()))
        .collect()
}

fn col(v: &[f64]) -> Array2<f64> {
    Array2::from_shape_vec((v.len(), 1), v.to_vec()).unwrap()
}

/// All wrapper outputs for an n x n SPD matrix built from an (n + 100) x n block.
fn outputs(n: usize) -> Vec<(&'static str, Vec<u64>)> {
    let z = uniform(n + 100, n, 1);
    let y = uniform(n + 100, 3, 2);
    let b = uniform(n, 40, 3);
    let mut a = gram_cols(z.view()).unwrap();
    rfx_linalg::add_diag(&mut a, 1.0);
    let chol = Cholesky::factor_view(a.view()).unwrap();
    let eig = eigh(a.view()).unwrap();
    let tri = BandReduction::new(a.view()).unwrap();
    let shifted: Vec<Array2<f64>> = tri
        .solve_shifted(b.view(), &[1e-3, 1.0])
        .unwrap()
        .into_iter()
        .map(|x| x.unwrap())
        .collect();
    let mut ne = NormalEquations::new(n, 3).unwrap();
    ne.push(z.slice(s![..n / 2, ..]), y.slice(s![..n / 2, ..]))
        .unwrap();
    ne.push(z.slice(s![n / 2.., ..]), y.slice(s![n / 2.., ..]))
        .unwrap();
    let (ng, nb) = ne.finish();
    let mut acc = Array2::zeros((n + 100, n + 100));
    gram_rows_add_upper(z.slice(s![.., ..n / 3]), &mut acc).unwrap();
    gram_rows_add_upper(z.slice(s![.., n / 3..]), &mut acc).unwrap();
    let f32_gram = gram_cols_f32_upper(z.view()).unwrap().mapv(f64::from);
    let f32_solve = CholeskyF32::factor_f64(a.view())
        .unwrap()
        .solve(b.view())
        .unwrap();
    vec![
        ("gram_cols", bits([&a])),
        ("gram_rows", bits([&gram_rows(z.view()).unwrap()])),
        (
            "gram_rows_upper_serial",
            bits([&gram_rows_upper_serial(z.view()).unwrap()]),
        ),
        ("gram_rows_add_upper", bits([&acc])),
        ("NormalEquations", bits([&ng, &nb])),
        ("Cholesky::factor", bits([chol.l()])),
        ("Cholesky::solve", bits([&chol.solve(b.view()).unwrap()])),
        ("Cholesky::whiten", bits([&chol.whiten(a.view()).unwrap()])),
        (
            "eigh",
            bits([&col(eig.values.as_slice().unwrap()), &eig.vectors]),
        ),
        (
            "eigvalsh",
            bits([&col(eigvalsh(a.view()).unwrap().as_slice().unwrap())]),
        ),
        ("BandReduction::new", bits([&tri.band_dense()])),
        ("BandReduction::solve_shifted", bits(&shifted)),
        ("gram_cols_f32_upper", bits([&f32_gram])),
        ("CholeskyF32", bits([&f32_solve])),
    ]
}

fn assert_same(want: &[(&'static str, Vec<u64>)], got: &[(&'static str, Vec<u64>)], what: &str) {
    let differ: Vec<&str> = want
        .iter()
        .zip(got)
        .filter(|((_, w), (_, g))| w != g)
        .map(|((name, _), _)| *name)
        .collect();
    assert!(
        differ.is_empty(),
        "{differ:?}: results differ between {what}"
    );
}

#[test]
fn wrappers_are_bit_identical_at_any_thread_count() {
    let pool = |t: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    for n in [600, 333] {
        set_blas_threads(1);
        let one = pool(1).install(|| outputs(n));
        set_blas_threads(2);
        let two = pool(2).install(|| outputs(n));
        assert_same(
            &one,
            &two,
            &format!("1 and 2 BLAS + rayon threads (n = {n})"),
        );
        let mixed = pool(1).install(|| outputs(n));
        assert_same(&one, &mixed, &format!("1 and 2 BLAS threads (n = {n})"));
    }

    // guards nest, count across threads, and defer set_blas_threads until the last one ends
    set_blas_threads(2);
    let before = blas_threads();
    {
        let _outer = SingleBlasThread::new();
        assert_eq!(blas_threads(), 1);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _inner = SingleBlasThread::new();
                assert_eq!(blas_threads(), 1);
            });
        });
        assert_eq!(
            blas_threads(),
            1,
            "an inner guard must not unpin the outer one"
        );
        set_blas_threads(1);
        assert_eq!(blas_threads(), 1);
        set_blas_threads(2);
        assert_eq!(blas_threads(), 1, "set_blas_threads waits for the guards");
    }
    assert_eq!(blas_threads(), before);
    set_blas_threads(1);
}
