//! Unit tests of the wrappers against their definitions.

use crate::*;
use ndarray::{s, Array1, Array2};
use rand::{Rng, SeedableRng};
use rfx_core::RfxError;

#[test]
fn cholesky_reconstructs_and_solves() {
    let z = randn(60, 40, 1);
    let mut a = z.t().dot(&z);
    add_diag(&mut a, 0.5);
    let ch = Cholesky::factor_view(a.view()).unwrap();
    let l = ch.l();
    let rec = l.dot(&l.t());
    assert!(max_abs(&(&rec - &a)) < 1e-12 * max_abs(&a));
    let b = randn(40, 3, 2);
    let x = ch.solve(b.view()).unwrap();
    let r = a.dot(&x) - &b;
    assert!(max_abs(&r) < 1e-10, "residual {}", max_abs(&r));
    // whiten: L^{-1} A L^{-T} = I
    let w = ch.whiten(a.view()).unwrap();
    assert!(max_abs(&(&w - &Array2::<f64>::eye(40))) < 1e-10);
    // log det against eigenvalues
    let ev = eigvalsh(a.view()).unwrap();
    assert!((ch.log_det() - ev.iter().map(|v| v.ln()).sum::<f64>()).abs() < 1e-9);
}

#[test]
fn cholesky_rejects_indefinite_and_bad_shapes() {
    let a = ndarray::arr2(&[[1.0, 2.0], [2.0, 1.0]]);
    assert!(matches!(Cholesky::factor(a), Err(RfxError::Numerical(_))));
    let r = Array2::<f64>::zeros((2, 3));
    assert!(matches!(
        Cholesky::factor(r),
        Err(RfxError::DimensionMismatch(_))
    ));
    let mut nan = Array2::<f64>::eye(2);
    nan[[0, 0]] = f64::NAN;
    assert!(Cholesky::factor(nan).is_err());
    let ch = Cholesky::factor(Array2::eye(3)).unwrap();
    assert!(ch.solve(Array2::zeros((2, 1)).view()).is_err());
}

#[test]
fn eigh_matches_definition() {
    let z = randn(50, 50, 3);
    let a = &z + &z.t();
    let e = eigh(a.view()).unwrap();
    assert!(e.values.windows(2).into_iter().all(|w| w[0] <= w[1]));
    let v = &e.vectors;
    let av = a.dot(v);
    let mut vl = v.clone();
    scale_cols(&mut vl, &e.values);
    assert!(max_abs(&(&av - &vl)) < 1e-11 * max_abs(&a));
    assert!(max_abs(&(v.t().dot(v) - Array2::<f64>::eye(50))) < 1e-12);
    let vals = eigvalsh(a.view()).unwrap();
    assert!((&vals - &e.values).iter().all(|d| d.abs() < 1e-10));
    // a non-contiguous view works too
    let sub = a.slice(s![..;2, ..;2]);
    let es = eigh(sub).unwrap();
    let rec = es
        .vectors
        .dot(&Array2::from_diag(&es.values))
        .dot(&es.vectors.t());
    assert!(max_abs(&(&rec - &sub)) < 1e-11 * max_abs(&a));
}

#[test]
fn syrk_grams_and_streaming_normal_equations() {
    let z = randn(70, 9, 4);
    let y = randn(70, 2, 5);
    let g = gram_cols(z.view()).unwrap();
    assert!(max_abs(&(&g - &z.t().dot(&z))) < 1e-12 * max_abs(&g));
    let k = gram_rows(z.view()).unwrap();
    assert!(max_abs(&(&k - &z.dot(&z.t()))) < 1e-12 * max_abs(&k));
    // one dsyrk call: the upper triangle, strict lower triangle zero
    let mut u = gram_rows_upper_serial(z.view()).unwrap();
    assert!((0..70).all(|i| (0..i).all(|j| u[[i, j]] == 0.0)));
    symmetrize_from_upper(&mut u);
    assert!(max_abs(&(&u - &k)) < 1e-12 * max_abs(&k));
    // strided (non-standard) input
    let zt = z.t().as_standard_layout().into_owned();
    let g2 = gram_rows(zt.t()).unwrap();
    assert!(max_abs(&(&g2 - &k)) < 1e-12 * max_abs(&k));
    // column blocks accumulated into the upper triangle
    let mut acc = Array2::zeros((70, 70));
    for start in (0..9).step_by(4) {
        let end = (start + 4).min(9);
        gram_rows_add_upper(z.slice(s![.., start..end]), &mut acc).unwrap();
    }
    symmetrize_from_upper(&mut acc);
    assert!(max_abs(&(&acc - &k)) < 1e-12 * max_abs(&k));
    assert!(gram_rows_add_upper(z.view(), &mut Array2::zeros((3, 3))).is_err());
    let mut ne = NormalEquations::new(9, 2).unwrap();
    for start in (0..70).step_by(16) {
        let end = (start + 16).min(70);
        ne.push(z.slice(s![start..end, ..]), y.slice(s![start..end, ..]))
            .unwrap();
    }
    assert_eq!(ne.n(), 70);
    let (g3, b) = ne.finish();
    assert!(max_abs(&(&g3 - &g)) < 1e-12 * max_abs(&g));
    assert!(max_abs(&(&b - &z.t().dot(&y))) < 1e-12 * max_abs(&b));
    assert!(NormalEquations::new(0, 1).is_err());
    let mut ne = NormalEquations::new(3, 1).unwrap();
    assert!(ne.push(z.view(), y.view()).is_err());
}

#[test]
fn memory_cap() {
    assert!(check_memory("x", 10, 10).is_ok());
    match check_memory("gram", f64_bytes(5000 * 5000), 1 << 20) {
        Err(RfxError::OutOfMemory { needed_bytes, .. }) => {
            assert_eq!(needed_bytes, 200_000_000)
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    set_blas_threads(1);
    assert_eq!(blas_threads(), 1);
    set_blas_threads(2);
}
#[test]
fn band_reduction_is_a_similarity_and_its_shifted_solves_equal_cholesky_solves() {
    // sizes below, at and above the band width (n <= kd + 1 keeps A itself as the band)
    for n in [
        0usize,
        1,
        2,
        7,
        60,
        BAND_WIDTH + 1,
        BAND_WIDTH + 2,
        150,
        300,
    ] {
        let z = randn(n + 3, n, 9 + n as u64);
        let a = gram_cols(z.view()).unwrap();
        let b = randn(n, 3, 100 + n as u64);
        let t = BandReduction::new(a.view()).unwrap();
        assert_eq!(t.bandwidth(), BAND_WIDTH.min(n.saturating_sub(1)));
        let band = t.band_dense();
        // B is banded, and Q B Qᵀ = A keeps the trace, the Frobenius norm and the eigenvalues
        for ((i, j), v) in band.indexed_iter() {
            assert!(
                i.abs_diff(j) <= t.bandwidth() || *v == 0.0,
                "n = {n}: B[{i}, {j}] = {v}"
            );
        }
        let scale = 1.0 + fro_norm(a.view());
        assert!((band.diag().sum() - a.diag().sum()).abs() <= 1e-12 * scale);
        assert!((fro_norm(band.view()) - fro_norm(a.view())).abs() <= 1e-12 * scale);
        if n > 0 {
            let (ea, eb) = (eigvalsh(a.view()).unwrap(), eigvalsh(band.view()).unwrap());
            let gap = ea
                .iter()
                .zip(&eb)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            // backward-stable reductions: eigenvalues agree to a small multiple of n ε ‖A‖
            assert!(
                gap <= 1e-13 * n as f64 * scale,
                "n = {n}: eigenvalues differ by {gap}"
            );
        }
        let shifts = [1e-4, 0.5, 40.0];
        let xs = t.solve_shifted(b.view(), &shifts).unwrap();
        for (x, &lam) in xs.iter().zip(&shifts) {
            let x = x.as_ref().expect("positive definite");
            let mut al = a.clone();
            add_diag(&mut al, lam);
            let want = Cholesky::factor(al).unwrap().solve(b.view()).unwrap();
            let err = max_abs(&(x - &want));
            let scale = max_abs(&want).max(1e-300);
            assert!(err <= 1e-9 * scale, "n = {n}, λ = {lam}: {err} vs {scale}");
        }
    }
    // indefinite after the shift: no solution offered (small, and above the band width)
    let a = ndarray::arr2(&[[-1.0, 0.2], [0.2, 2.0]]);
    let t = BandReduction::new(a.view()).unwrap();
    let xs = t
        .solve_shifted(Array2::ones((2, 1)).view(), &[0.5, 3.0])
        .unwrap();
    assert!(xs[0].is_none() && xs[1].is_some());
    assert!(t
        .solve_shifted(Array2::ones((3, 1)).view(), &[1.0])
        .is_err());
    let n = 200;
    let mut a = gram_cols(randn(n + 5, n, 7).view()).unwrap();
    a[[17, 17]] -= 1e3; // one clearly negative eigenvalue
    let t = BandReduction::new(a.view()).unwrap();
    let lo = eigvalsh(a.view()).unwrap()[0];
    assert!(lo < -10.0);
    let xs = t
        .solve_shifted(Array2::ones((n, 1)).view(), &[-lo / 2.0, -2.0 * lo])
        .unwrap();
    assert!(xs[0].is_none() && xs[1].is_some());
}

#[test]
fn band_reduction_memory_bounds_lapack_workspace() {
    for n in [BAND_WIDTH + 2, 100, 1000, 4000, 10_000, 50_000] {
        let lwork = BandReduction::workspace_query(n).unwrap() as u128;
        let (nn, kd) = (n as u128, BAND_WIDTH as u128);
        let model = BandReduction::memory_f64s(n) - nn * nn - 2 * (kd + 1) * nn - nn;
        assert!(
            lwork <= model,
            "n = {n}: LAPACK asks {lwork} doubles, the model counts {model}"
        );
    }
}

/// An $n \times m$ matrix of i.i.d. $N(0, 1)$ entries (Box–Muller on a seeded ChaCha stream).
fn randn(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| {
        let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
        let u2: f64 = rng.gen();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    })
}

/// Largest absolute entry.
fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// Column-wise scaling $A \operatorname{diag}(d)$ in place.
fn scale_cols(a: &mut Array2<f64>, d: &Array1<f64>) {
    for mut row in a.axis_iter_mut(ndarray::Axis(0)) {
        row.zip_mut_with(d, |x, s| *x *= s);
    }
}

/// $\gamma_k(u) = ku/(1 - ku)$ (Higham, Eq. 3.5).
fn gamma(k: usize, u: f64) -> f64 {
    k as f64 * u / (1.0 - k as f64 * u)
}

#[test]
fn f32_gram_is_the_gram_to_the_f32_product_bound() {
    // 9,000 rows: two row blocks of the accumulation; 300 columns: a ragged last tile of 256 rows
    let (n, m) = (DEFAULT_ROW_BLOCK + 808, 300);
    let z = randn(n, m, 11);
    let exact = z.t().dot(&z);
    let abs = z.mapv(f64::abs);
    let scale = abs.t().dot(&abs);
    // both factors rounded to f32 once, then an f32 product of inner length n (Higham, Lemma 3.1); the f64
    // reference rounds too
    let beta = gamma(n + 2, 2f64.powi(-24)) + gamma(n, 2f64.powi(-53));
    let g = gram_cols_f32_upper(z.view()).unwrap();
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in i..m {
            let err = (f64::from(g[[i, j]]) - exact[[i, j]]).abs();
            worst = worst.max(err / (beta * scale[[i, j]]));
        }
    }
    assert!(worst <= 1.0, "f32 Gram off by {worst} times its bound");
    // and it is an f32 computation, not an f64 one rounded at the end
    let diff = (0..m)
        .map(|i| (f64::from(g[[i, i]]) - exact[[i, i]]).abs() / exact[[i, i]])
        .fold(0.0, f64::max);
    assert!(diff > 2f64.powi(-24) / 4.0, "{diff}");
}

#[test]
fn f32_gram_with_rhs_is_the_same_gram_and_z_transpose_y_to_its_bound() {
    // two row blocks, a ragged last chunk of 256 rows; two right-hand sides
    let (n, m, k) = (DEFAULT_ROW_BLOCK + 808, 70, 2);
    let z = randn(n, m, 12);
    let y = randn(n, k, 13);
    let (g, zty) = gram_cols_f32_upper_rhs(z.view(), y.view()).unwrap();
    assert_eq!(
        g,
        gram_cols_f32_upper(z.view()).unwrap(),
        "the Gram is the one of the plain pass"
    );
    let exact = z.t().dot(&y);
    let scale = z.mapv(f64::abs).t().dot(&y.mapv(f64::abs));
    // a sum of n products in a tree of depth <= n/256 + 256 (each chunk in row order, chunks in order); the
    // f64 reference rounds too
    let beta = gamma(n / 256 + 257, 2f64.powi(-53)) + gamma(n, 2f64.powi(-53));
    let worst = (0..m)
        .flat_map(|i| (0..k).map(move |c| (i, c)))
        .map(|(i, c)| (zty[[i, c]] - exact[[i, c]]).abs() / (beta * scale[[i, c]]))
        .fold(0.0, f64::max);
    assert!(worst <= 1.0, "Z^T y off by {worst} times its bound");
    // the same bits on one thread and on strided rows
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let (g1, zty1) = one.install(|| gram_cols_f32_upper_rhs(z.view(), y.view()).unwrap());
    assert_eq!((g1, zty1), (g.clone(), zty.clone()));
    let zt = z.t().as_standard_layout().into_owned();
    assert!(zt.t().row(0).as_slice().is_none());
    let (g2, zty2) = gram_cols_f32_upper_rhs(zt.t(), y.view()).unwrap();
    assert_eq!((g2, zty2), (g, zty));
    // a non-finite entry is named by its row, in Z and in y
    let mut bad = z.clone();
    bad[[DEFAULT_ROW_BLOCK + 300, 5]] = f64::NAN;
    match gram_cols_f32_upper_rhs(bad.view(), y.view()) {
        Err(RfxError::Numerical(msg)) => {
            assert!(
                msg.contains(&format!("row {}", DEFAULT_ROW_BLOCK + 300)),
                "{msg}"
            )
        }
        other => panic!("{other:?}"),
    }
    let mut bad_y = y.clone();
    bad_y[[7, 1]] = f64::INFINITY;
    match gram_cols_f32_upper_rhs(z.view(), bad_y.view()) {
        Err(RfxError::Numerical(msg)) => assert!(msg.contains("targets: row 7"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn f32_copy_rounds_each_entry_once_and_names_the_first_non_finite_row() {
    let a = randn(1000, 37, 14);
    let c = to_f32_finite(a.view(), "A").unwrap();
    assert_eq!(c, a.mapv(|v| v as f32));
    let mut bad = a.clone();
    bad[[712, 3]] = f64::NEG_INFINITY;
    bad[[405, 36]] = f64::NAN;
    match to_f32_finite(bad.view(), "KRR Gram") {
        Err(RfxError::Numerical(msg)) => {
            assert_eq!(msg, "KRR Gram: row 405 has a non-finite entry")
        }
        other => panic!("{other:?}"),
    }
    // the factor's copy skips the check and gives the same factor as the checked copy
    let g = {
        let mut g = a.t().dot(&a);
        add_diag(&mut g, 1.0);
        g
    };
    let f1 = CholeskyF32::factor_f64(g.view()).unwrap();
    let f2 = CholeskyF32::factor_upper(to_f32_finite(g.view(), "G").unwrap()).unwrap();
    let b = randn(37, 1, 15);
    assert_eq!(f1.solve(b.view()).unwrap(), f2.solve(b.view()).unwrap());
}

#[test]
fn f32_cholesky_solves_to_its_backward_error_bound() {
    let n = 400;
    let z = randn(n + 50, n, 12);
    let mut a = gram_cols(z.view()).unwrap() / n as f64;
    add_diag(&mut a, 0.1);
    let b = randn(n, 3, 13);
    let x = CholeskyF32::factor_f64(a.view())
        .unwrap()
        .solve(b.view())
        .unwrap();
    // Higham Thm 10.4: (A + ΔA) x̂ = b with |ΔA| ≤ γ_{3n+1}|Lᵀ||L| in f32, ‖|Lᵀ||L|‖₂ ≤ n‖A‖₂, plus the rounding
    // of A and b to f32 (u‖A‖, u‖b‖); in the Frobenius norm, ‖A‖_F ≥ ‖A‖₂
    let u = 2f64.powi(-24);
    let fro = |m: &Array2<f64>| m.iter().map(|v| v * v).sum::<f64>().sqrt();
    let residual = fro(&(&b - &a.dot(&x)));
    let bound = (gamma(3 * n + 1, u) * n as f64 + u) * fro(&a) * fro(&x) + u * fro(&b);
    assert!(residual <= bound, "residual {residual} > bound {bound}");
    // an f32 solve: its residual is far above the f64 solve's
    let x64 = Cholesky::factor_view(a.view())
        .unwrap()
        .solve(b.view())
        .unwrap();
    assert!(residual > 100.0 * fro(&(&b - &a.dot(&x64))));
    // refinement with the f64 operator brings it to the f64 solution
    let f = CholeskyF32::factor_f64(a.view()).unwrap();
    let refined = solve_spd_refined(|v| Ok(a.dot(&v)), &f, b.view())
        .unwrap()
        .unwrap();
    assert!(max_abs(&(&refined - &x64)) <= 1e-12 * max_abs(&x64));
}

#[test]
fn matmul_abt_is_the_product_on_any_strides() {
    // A: every other row of a larger matrix; B: a transposed view (column-major); C: an inner block
    let big = randn(40, 300, 21);
    let a = big.slice(s![..;2, ..]);
    let bt = randn(300, 13, 22);
    let b = bt.t();
    let mut out = Array2::from_elem((25, 20), 7.0);
    matmul_abt(a, b, out.slice_mut(s![2..22, 3..16])).unwrap();
    let (abs_a, abs_b) = (a.mapv(f64::abs), b.mapv(f64::abs));
    let scale = abs_a.dot(&abs_b.t());
    for i in 0..25 {
        for j in 0..20 {
            let v = out[[i, j]];
            if (2..22).contains(&i) && (3..16).contains(&j) {
                let (r, c) = (i - 2, j - 3);
                // the naive sum, and any summation order is within γ_k of it (Higham, Lemma 3.1), both sides
                let naive: f64 = (0..300).map(|t| a[[r, t]] * b[[c, t]]).sum();
                let bound = 2.0 * gamma(300, 2f64.powi(-53)) * scale[[r, c]];
                assert!((v - naive).abs() <= bound, "({r}, {c}): {v} vs {naive}");
            } else {
                assert_eq!(v, 7.0, "outside the block at ({i}, {j})");
            }
        }
    }
    assert!(matmul_abt(a, b, out.slice_mut(s![..3, ..3])).is_err());
}

#[test]
fn dot_sq_dist_and_axpy_are_the_sums_to_their_rounding_bounds_and_cpu_independent() {
    let data = randn(2, 1003, 31);
    for n in [0usize, 1, 15, 16, 17, 33, 1003] {
        let (x, y) = (
            data.row(0).slice(s![..n]).to_vec(),
            data.row(1).slice(s![..n]).to_vec(),
        );
        let d = dot(&x, &y);
        // the portable copy (no AVX2) gives the same bits: no FMA, same order
        assert_eq!(
            d.to_bits(),
            crate::vector::dot_portable(&x, &y).to_bits(),
            "n = {n}"
        );
        // within γ of the depth of each summation tree of the naive (index-order) sum
        let naive: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
        let abs: f64 = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
        let u = 2f64.powi(-53);
        let bound = (gamma(n / 16 + 5, u) + gamma(n.max(1), u)) * abs;
        assert!((d - naive).abs() <= bound, "n = {n}: {d} vs {naive}");
        // ‖x − y‖²: each term fl(fl(x_i − y_i)²) is within (1 + u)³ of (x_i − y_i)², then the sum as dot's
        let sd = sq_dist(&x, &y);
        assert_eq!(
            sd.to_bits(),
            crate::vector::sq_dist_portable(&x, &y).to_bits()
        );
        let exact_terms: f64 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
        let sd_bound = (gamma(n / 16 + 5, u) + gamma(n.max(1), u)) * exact_terms;
        assert!(
            (sd - exact_terms).abs() <= sd_bound,
            "n = {n}: {sd} vs {exact_terms}"
        );
        let mut z = y.clone();
        axpy(-0.75, &x, &mut z);
        let mut z_portable = y.clone();
        crate::vector::axpy_portable(-0.75, &x, &mut z_portable);
        for i in 0..n {
            // one rounding of the product, one of the sum: exactly the expression below
            assert_eq!(z[i].to_bits(), (y[i] + -0.75 * x[i]).to_bits());
            assert_eq!(z[i].to_bits(), z_portable[i].to_bits());
        }
    }
}

#[test]
fn small_products_are_the_naive_loops_bit_for_bit() {
    // entries of A set to zero (skipped) and ±0 / mixed signs, so that a change of the order of the terms or
    // a fused multiply-add would show in the last bits
    for &(m, k, n) in &[
        (0, 3, 2),
        (3, 0, 2),
        (2, 3, 0),
        (1, 1, 1),
        (7, 9, 5),
        (13, 27, 21),
        (144, 63, 7),
        (9, 20, 70),
        (13, 30, 131),
    ] {
        let mut a = randn(m.max(1), k.max(1), 41).slice(s![..m, ..k]).to_owned();
        a.iter_mut().step_by(3).for_each(|v| *v = 0.0);
        let mut b = randn(k.max(1), n.max(1), 43)
            .slice(s![..k, ..n])
            .mapv(|v| v * 1e3);
        if m * k * n > 0 && (m + k + n) % 2 == 0 {
            // zero entries of A are skipped, not multiplied: an infinity of B met only by zeros of A leaves
            // C finite
            b[[0, 0]] = f64::INFINITY;
        }
        // the definition: each entry from 0, terms in the order of l, zero entries of A skipped
        let mut naive = Array2::<f64>::zeros((m, n));
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f64;
                for l in 0..k {
                    if a[[i, l]] != 0.0 {
                        s += a[[i, l]] * b[[l, j]];
                    }
                }
                naive[[i, j]] = s;
            }
        }
        let mut c = vec![f64::NAN; m * n];
        matmul_nn(
            a.as_slice().unwrap(),
            b.as_slice().unwrap(),
            &mut c,
            (m, k, n),
        );
        let at = a.t().as_standard_layout().into_owned();
        let mut ct = vec![f64::NAN; m * n];
        matmul_tn(
            at.as_slice().unwrap(),
            b.as_slice().unwrap(),
            &mut ct,
            (m, k, n),
        );
        let mut cp = vec![f64::NAN; m * n];
        crate::vector::matmul_nn_portable(
            a.as_slice().unwrap(),
            b.as_slice().unwrap(),
            &mut cp,
            (k, n),
        );
        for (idx, &v) in naive.iter().enumerate() {
            assert_eq!(v.to_bits(), c[idx].to_bits(), "nn {m}x{k}x{n} entry {idx}");
            assert_eq!(v.to_bits(), ct[idx].to_bits(), "tn {m}x{k}x{n} entry {idx}");
            assert_eq!(
                v.to_bits(),
                cp[idx].to_bits(),
                "portable {m}x{k}x{n} entry {idx}"
            );
        }
    }
    let r = std::panic::catch_unwind(|| matmul_nn(&[1.0; 4], &[1.0; 4], &mut [0.0; 3], (2, 2, 2)));
    assert!(
        r.is_err(),
        "a slice of the wrong length is a programming error"
    );
}
