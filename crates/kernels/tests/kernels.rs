//! Exact kernels against closed forms, the literal Eq. 5 recursion and an independent quadrature of the
//! Arora et al. dynamic program.

use ndarray::{array, s, Array1, Array2, ArrayView1};
use rand_distr::{Distribution, StandardNormal};
use rfx_core::{rng_stream, Kernel};
use rfx_kernels::{
    arccos0, arccos1, ntk_nngp_recursion, relu_ntk, ArcCosineKernel, ArcCosineOrder, ReluNngp,
    ReluNtk,
};
use std::f64::consts::PI;

/// An `rows × cols` matrix of i.i.d. N(0, 1) entries, row by row from the stream.
fn gaussian_matrix(rows: usize, cols: usize, rng: &mut rfx_core::RfxRng) -> Array2<f64> {
    Array2::from_shape_simple_fn((rows, cols), || StandardNormal.sample(rng))
}

fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Random rows plus the edge cases: a zero row, a duplicate, a positive multiple and a negative multiple.
fn data_with_edge_cases(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut x = gaussian_matrix(n + 4, d, &mut rng_stream(seed, "data"));
    x.row_mut(n).fill(0.0);
    let r0 = x.row(0).to_owned();
    x.row_mut(n + 1).assign(&r0);
    x.row_mut(n + 2).assign(&(&r0 * 2.5));
    x.row_mut(n + 3).assign(&(&r0 * -0.7));
    x
}

#[test]
// The table holds the published values rounded to 6 decimals (0.318310 is 1/pi rounded), so
// the literal is kept as printed rather than replaced by the constant.
#[allow(clippy::approx_constant)]
fn golden_values_of_the_ntk_function() {
    // ntk-sketching.md §3.2 table (rounded to 6 decimals).
    let alphas: [f64; 7] = [-1.0, -0.5, 0.0, 0.5, 0.9, 0.99, 1.0];
    let table: [(usize, [f64; 7]); 5] = [
        (
            1,
            [0.0, -0.057669, 0.318310, 0.942331, 1.680329, 1.935697, 2.0],
        ),
        (
            2,
            [
                0.318310, 0.343862, 0.685709, 1.351480, 2.368814, 2.840396, 3.0,
            ],
        ),
        (
            3,
            [
                0.685709, 0.742249, 1.060388, 1.737845, 2.985693, 3.707107, 4.0,
            ],
        ),
        (
            4,
            [
                1.060388, 1.130622, 1.430390, 2.107113, 3.545958, 4.538579, 5.0,
            ],
        ),
        (
            8,
            [
                2.489601, 2.571196, 2.826274, 3.471332, 5.410715, 7.559234, 9.0,
            ],
        ),
    ];
    for (l, row) in table {
        let k = ReluNtk::new(l).unwrap();
        for (&a, &want) in alphas.iter().zip(&row) {
            // unit vectors with cosine a, scaled: Θ = |x||y| K(a)
            let x = array![3.0, 0.0];
            let y = array![2.0 * a, 2.0 * (1.0 - a * a).max(0.0).sqrt()];
            let got = k.eval(x.view(), y.view()) / 6.0;
            assert!((got - want).abs() < 1.5e-6, "L={l} a={a}: {got} vs {want}");
        }
        // K^(L)(-1) = K^(L-1)(0)
        assert!((relu_ntk(l, -1.0) - relu_ntk(l - 1, 0.0)).abs() < 1e-14);
    }
}

#[test]
fn diagonal_is_l_plus_one_times_squared_norm() {
    let x = data_with_edge_cases(40, 7, 1);
    for l in 0..=6 {
        let k = ReluNtk::new(l).unwrap();
        let g = k.gram_sym(x.view()).unwrap();
        let nngp = ReluNngp::new(l).unwrap().gram_sym(x.view()).unwrap();
        for i in 0..x.nrows() {
            let r2 = x.row(i).dot(&x.row(i));
            let tol = 1e-13 * (1.0 + r2) * (l + 1) as f64;
            assert!((g[[i, i]] - (l + 1) as f64 * r2).abs() < tol, "L={l} i={i}");
            assert!((nngp[[i, i]] - r2).abs() < tol);
            assert!((k.eval(x.row(i), x.row(i)) - (l + 1) as f64 * r2).abs() < tol);
        }
        // duplicates, multiples and opposite multiples hit rho = ±1 exactly (recomputed cosine)
        let r2 = x.row(0).dot(&x.row(0));
        let n = x.nrows() - 4;
        let tol = 1e-12 * r2 * (l + 1) as f64;
        assert!((g[[0, n + 1]] - (l + 1) as f64 * r2).abs() < tol);
        assert!((g[[0, n + 2]] - 2.5 * (l + 1) as f64 * r2).abs() < tol);
        assert!((g[[0, n + 3]] - 0.7 * r2 * relu_ntk(l, -1.0)).abs() < tol);
        // the zero row gives zeros, everything is finite
        assert!(g.row(n).iter().all(|&v| v == 0.0));
        assert!(g.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn gram_equals_the_literal_eq5_recursion_and_eval() {
    let x = data_with_edge_cases(30, 6, 2);
    for l in 0..=5 {
        let (ntk, nngp) = ntk_nngp_recursion(x.view(), l).unwrap();
        let g = ReluNtk::new(l).unwrap().gram(x.view(), x.view()).unwrap();
        let gn = ReluNngp::new(l).unwrap().gram(x.view(), x.view()).unwrap();
        let scale = ntk.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        // The GEMM cosine can differ from the recursion's by ~1e-16, amplified near rho = 1 by the square
        // root of κ0 to ~1e-8 relative; elsewhere agreement is at rounding level.
        assert!(max_abs_diff(&g, &ntk) < 1e-7 * scale, "L={l}");
        assert!(max_abs_diff(&gn, &nngp) < 1e-7 * scale, "L={l}");
        let k = ReluNtk::new(l).unwrap();
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                assert!((k.eval(x.row(i), x.row(j)) - g[[i, j]]).abs() < 1e-12 * scale);
            }
        }
    }
    // L = 1: Θ = A1 + A0 ⊙ XXᵀ (Han et al. Eq. 71)
    let a0 = ArcCosineKernel::new(ArcCosineOrder::Zero)
        .gram(x.view(), x.view())
        .unwrap();
    let a1 = ArcCosineKernel::new(ArcCosineOrder::One)
        .gram(x.view(), x.view())
        .unwrap();
    let lin = x.dot(&x.t());
    let g1 = ReluNtk::new(1).unwrap().gram(x.view(), x.view()).unwrap();
    assert!(max_abs_diff(&g1, &(&a1 + &(&a0 * &lin))) < 1e-12 * 10.0);
}

#[test]
fn gram_blocks_and_cross_grams_are_consistent() {
    // 1100 rows span three GEMM row blocks of 512.
    let x = gaussian_matrix(1100, 5, &mut rng_stream(3, "x"));
    let y = gaussian_matrix(37, 5, &mut rng_stream(3, "y"));
    let k = ReluNtk::new(3).unwrap();
    let g = k.gram(x.view(), y.view()).unwrap();
    for &i in &[0, 511, 512, 1023, 1024, 1099] {
        for j in 0..37 {
            assert!((g[[i, j]] - k.eval(x.row(i), y.row(j))).abs() < 1e-12);
        }
    }
    let gs = k.gram_sym(x.slice(s![..600, ..])).unwrap();
    let gx = k
        .gram(x.slice(s![..600, ..]), x.slice(s![..600, ..]))
        .unwrap();
    assert!(max_abs_diff(&gs, &gx) < 1e-9);
    assert!(k
        .gram(
            x.view(),
            gaussian_matrix(2, 4, &mut rng_stream(3, "z")).view()
        )
        .is_err());
    assert!(ReluNtk::new(1001).is_err());
    assert!(ArcCosineOrder::from_int(2).is_err());
}

/// $\mathbb E[\sigma(u)\sigma(v)]$ for $(u, v) \sim \mathcal N(0, [[a^2, c], [c, b^2]])$, by the midpoint rule in polar
/// coordinates: with $u = a r\cos\phi$, $v = b r(\rho\cos\phi + \sqrt{1-\rho^2}\sin\phi)$ the radial integral is
/// $\int_0^\infty r^{1+2k} e^{-r^2/2}dr/(2\pi)$ = $1/(2\pi)$ (Step, $k = 0$) or $2/(2\pi)$ (ReLU, $k = 1$).
fn gaussian_expectation(relu: bool, a: f64, b: f64, c: f64) -> f64 {
    let rho = (c / (a * b)).clamp(-1.0, 1.0);
    let s = (1.0 - rho * rho).sqrt();
    let n = 200_000;
    let h = 2.0 * PI / n as f64;
    let mut acc = 0.0;
    for k in 0..n {
        let phi = (k as f64 + 0.5) * h;
        let (u, v) = (phi.cos(), rho * phi.cos() + s * phi.sin());
        acc += if relu {
            a * u.max(0.0) * b * v.max(0.0)
        } else if u > 0.0 && v > 0.0 {
            1.0
        } else {
            0.0
        };
    }
    acc * h / (2.0 * PI) * if relu { 2.0 } else { 1.0 }
}

/// Arora et al. (2019) dynamic program with $\sigma$ = ReLU and the normalisation $1/\mathbb E[\sigma(z)^2] = 2$
/// (Zandieh et al. Eq. 18–20), every expectation by quadrature: returns $(\Theta^{(L)}, \Sigma^{(L)})$.
fn arora_dp(x: ArrayView1<f64>, y: ArrayView1<f64>, depth: usize) -> (f64, f64) {
    let (mut sxx, mut syy, mut sxy) = (x.dot(&x), y.dot(&y), x.dot(&y));
    let mut theta = sxy;
    for _ in 0..depth {
        let (a, b) = (sxx.sqrt(), syy.sqrt());
        let sig = 2.0 * gaussian_expectation(true, a, b, sxy);
        let sig_dot = 2.0 * gaussian_expectation(false, a, b, sxy);
        let sig_xx = 2.0 * gaussian_expectation(true, a, a, sxx);
        let sig_yy = 2.0 * gaussian_expectation(true, b, b, syy);
        theta = theta * sig_dot + sig;
        sxy = sig;
        sxx = sig_xx;
        syy = sig_yy;
    }
    (theta, sxy)
}

#[test]
fn kernels_match_a_quadrature_of_the_arora_dynamic_program() {
    let x = gaussian_matrix(4, 3, &mut rng_stream(4, "x"));
    for l in 1..=3 {
        let ntk = ReluNtk::new(l).unwrap();
        let nngp = ReluNngp::new(l).unwrap();
        for i in 0..4 {
            for j in i..4 {
                let (t, s) = arora_dp(x.row(i), x.row(j), l);
                let scale = (x.row(i).dot(&x.row(i)) * x.row(j).dot(&x.row(j))).sqrt();
                // Step integrand: midpoint error <= 2 cells of 2π/2e5 per layer => ~1e-5 relative
                let tol = 1e-4 * scale * (l + 1) as f64;
                assert!((ntk.eval(x.row(i), x.row(j)) - t).abs() < tol, "L={l}");
                assert!((nngp.eval(x.row(i), x.row(j)) - s).abs() < tol, "L={l}");
            }
        }
    }
    // arc-cosine kernels are the first layer: A1 = 2E[ReLU ReLU], A0 = 2E[Step Step]
    let (u, v) = (x.row(0), x.row(1));
    let (a, b, c) = (u.dot(&u).sqrt(), v.dot(&v).sqrt(), u.dot(&v));
    let a1 = ArcCosineKernel::new(ArcCosineOrder::One).eval(u, v);
    let a0 = ArcCosineKernel::new(ArcCosineOrder::Zero).eval(u, v);
    assert!((a1 - 2.0 * gaussian_expectation(true, a, b, c)).abs() < 1e-8 * a * b);
    assert!((a0 - 2.0 * gaussian_expectation(false, a, b, c)).abs() < 2e-5);
    assert!((arccos0(c / (a * b)) - a0).abs() < 1e-15);
    assert!((arccos1(c / (a * b)) * a * b - a1).abs() < 1e-12);
}

#[test]
fn zero_vectors_and_extreme_cosines_are_finite() {
    let z = Array1::<f64>::zeros(3);
    let x = array![1.0, -2.0, 0.5];
    for k in [
        &ReluNtk::new(2).unwrap() as &dyn Kernel,
        &ReluNngp::new(2).unwrap(),
        &ArcCosineKernel::new(ArcCosineOrder::Zero),
        &ArcCosineKernel::new(ArcCosineOrder::One),
    ] {
        assert_eq!(k.eval(z.view(), x.view()), 0.0);
        assert_eq!(k.eval(z.view(), z.view()), 0.0);
        let far = &x * 1e150;
        assert!(k.eval(x.view(), far.view()).is_finite());
        let neg = &x * -1.0;
        assert!(k.eval(x.view(), neg.view()).is_finite());
    }
    let a0 = ArcCosineKernel::new(ArcCosineOrder::Zero);
    assert_eq!(a0.eval(x.view(), (&x * -3.0).view()), 0.0);
    assert_eq!(a0.eval(x.view(), (&x * 3.0).view()), 1.0);
}

/// The one normalisation checked against its definition by plain Monte Carlo over $w \sim \mathcal N(0, I_d)$:
/// $A_1(x, y) = 2\,\mathbb E[\mathrm{ReLU}(w^\top x)\mathrm{ReLU}(w^\top y)]$, $A_0 = 2\,\mathbb E[\mathrm{Step}\,\mathrm{Step}]$,
/// and `ArcCosineKernel::half` is the expectation itself. Tolerance: 5 standard errors of the sample mean,
/// estimated from the same $N = 400{,}000$ draws, so a factor-2 slip (or $1/\pi$ vs $1/(2\pi)$) is far outside.
#[test]
fn arc_cosine_normalisation_matches_monte_carlo_expectations() {
    let d = 5;
    let n_draws = 400_000;
    let w = gaussian_matrix(n_draws, d, &mut rng_stream(11, "mc-w"));
    let pts = gaussian_matrix(3, d, &mut rng_stream(11, "mc-x"));
    for (i, j) in [(0, 1), (0, 2), (1, 1)] {
        let (x, y) = (pts.row(i), pts.row(j));
        let (px, py) = (w.dot(&x), w.dot(&y));
        for order in [ArcCosineOrder::Zero, ArcCosineOrder::One] {
            let prod: Vec<f64> = px
                .iter()
                .zip(py.iter())
                .map(|(&a, &b)| match order {
                    ArcCosineOrder::Zero => f64::from(u8::from(a > 0.0 && b > 0.0)),
                    ArcCosineOrder::One => a.max(0.0) * b.max(0.0),
                })
                .collect();
            let mean = prod.iter().sum::<f64>() / n_draws as f64;
            let var =
                prod.iter().map(|p| (p - mean) * (p - mean)).sum::<f64>() / (n_draws - 1) as f64;
            let tol = 5.0 * (var / n_draws as f64).sqrt();
            let half = ArcCosineKernel::half(order).eval(x, y);
            let full = ArcCosineKernel::new(order).eval(x, y);
            assert!(
                (half - mean).abs() < tol,
                "{order:?} ({i},{j}): {half} vs MC {mean} ± {tol}"
            );
            assert!((full - 2.0 * mean).abs() < 2.0 * tol, "{order:?} ({i},{j})");
            // and a kernel off by the factor 2 would fail
            assert!((full - mean).abs() > 2.0 * tol);
        }
    }
}
