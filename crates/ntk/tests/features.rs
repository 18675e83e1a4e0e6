//! Monte Carlo tests of the random feature maps: unbiasedness with standard-error tolerances (seeded, so
//! deterministic), and error decay with the dimension where the map is biased.

use ndarray::{Array2, ArrayView2};
use rfx_core::{rng_stream, FeatureMap, Kernel};
use rfx_kernels::{ArcCosineKernel, ArcCosineOrder, ReluNtk};
use rfx_ntk::{ArcCosineFeatures, NtkRandomFeatures, NtkRfParams, PairSketch, Sampler};
use rfx_sampling::random::gaussian_matrix;

/// A few random points, one duplicated-with-scaling and one zero row.
fn points(n: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut x = gaussian_matrix(n, d, &mut rng_stream(seed, "points"));
    let r = x.row(0).to_owned();
    x.row_mut(n - 2).assign(&(&r * 0.5));
    x.row_mut(n - 1).fill(0.0);
    x
}

/// Features whose columns are i.i.d. (one random weight each): the estimate is the mean of the per-feature
/// terms $m\thinspace\phi_k(x)\phi_k(y)$; asserts $|\hat K - K| \le 5\thinspace\mathrm{SE} + 10^{-12}$ entrywise, SE from the terms.
fn assert_unbiased_iid(phi: ArrayView2<f64>, k: &Array2<f64>, what: &str) -> f64 {
    let (n, m) = phi.dim();
    let mut worst: f64 = 0.0;
    for i in 0..n {
        for j in 0..n {
            let terms: Vec<f64> = (0..m)
                .map(|c| m as f64 * phi[[i, c]] * phi[[j, c]])
                .collect();
            let mean = terms.iter().sum::<f64>() / m as f64;
            let var = terms.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
            let se = (var / m as f64).sqrt();
            let err = (mean - k[[i, j]]).abs();
            assert!(
                err <= 5.0 * se + 1e-12,
                "{what}: entry ({i},{j}) mean {mean} vs {} (se {se})",
                k[[i, j]]
            );
            worst = worst.max(err / (se + 1e-300));
        }
    }
    worst
}

#[test]
fn arc_cosine_features_are_unbiased() {
    let x = points(6, 5, 1);
    let m = 100_000;
    for (order, sampler) in [
        (ArcCosineOrder::Zero, Sampler::Gaussian),
        (ArcCosineOrder::One, Sampler::Gaussian),
        (ArcCosineOrder::One, Sampler::LeverageExact),
        (ArcCosineOrder::One, Sampler::LeverageGibbs { sweeps: 3 }),
    ] {
        let map = ArcCosineFeatures::params()
            .order(order)
            .dim(m)
            .sampler(sampler)
            .fit(5, &mut rng_stream(2, &format!("{order:?}{sampler:?}")))
            .unwrap();
        assert_eq!(map.dim(), m);
        let phi = map.transform(x.view()).unwrap();
        let k = ArcCosineKernel::new(order)
            .gram(x.view(), x.view())
            .unwrap();
        assert_unbiased_iid(phi.view(), &k, &format!("{order:?} {sampler:?}"));
    }
    // The papers' T = 1 Gibbs chain has not mixed: its directions are not uniform, so the importance-weighted
    // features are biased (measured: up to ~0.24 on entries of size ~5 at d = 5, SE ~0.01 here); T = 3
    // passes the 5-SE test above.
    let k1 = ArcCosineKernel::new(ArcCosineOrder::One)
        .gram(x.view(), x.view())
        .unwrap();
    let phi = ArcCosineFeatures::params()
        .dim(m)
        .sampler(Sampler::GS)
        .fit(5, &mut rng_stream(2, "gibbs1"))
        .unwrap()
        .transform(x.view())
        .unwrap();
    let err = (&phi.dot(&phi.t()) - &k1)
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(err > 0.05, "T = 1 Gibbs bias expected, max error {err}");
    // leverage samplers are for order 1 only
    assert!(ArcCosineFeatures::params()
        .order(ArcCosineOrder::Zero)
        .sampler(Sampler::GS)
        .fit(3, &mut rng_stream(0, "e"))
        .is_err());
    assert!(ArcCosineFeatures::params()
        .dim(0)
        .fit(3, &mut rng_stream(0, "e"))
        .is_err());
}

#[test]
fn gs_features_have_smaller_variance_than_gaussian_ones() {
    // The exact-q features replace the χ_d radius by sqrt(d): per-feature variance of m φ(x)φ(y) drops.
    let x = points(6, 4, 3);
    let m = 50_000;
    let var = |sampler| {
        let phi = ArcCosineFeatures::params()
            .dim(m)
            .sampler(sampler)
            .fit(4, &mut rng_stream(3, &format!("{sampler:?}")))
            .unwrap()
            .transform(x.view())
            .unwrap();
        let terms: Vec<f64> = (0..m)
            .map(|c| m as f64 * phi[[0, c]] * phi[[1, c]])
            .collect();
        let mean = terms.iter().sum::<f64>() / m as f64;
        terms.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / m as f64
    };
    assert!(var(Sampler::LeverageExact) < 0.8 * var(Sampler::Gaussian));
}

/// Mean and standard error over `reps` independent maps of every Gram entry.
fn monte_carlo_gram(
    params: &NtkRfParams,
    x: &Array2<f64>,
    reps: usize,
    key: &str,
) -> (Array2<f64>, Array2<f64>) {
    let n = x.nrows();
    let mut sum = Array2::<f64>::zeros((n, n));
    let mut sum2 = Array2::<f64>::zeros((n, n));
    for r in 0..reps {
        let map = params
            .fit(x.ncols(), &mut rng_stream(r as u64, key))
            .unwrap();
        let phi = map.transform(x.view()).unwrap();
        assert_eq!(phi.ncols(), params.output_dim());
        let g = phi.dot(&phi.t());
        sum += &g;
        sum2 += &g.mapv(|v| v * v);
    }
    let mean = &sum / reps as f64;
    let var = (&sum2 / reps as f64 - &mean.mapv(|v| v * v)) * (reps as f64 / (reps - 1) as f64);
    let se = var.mapv(|v| (v.max(0.0) / reps as f64).sqrt());
    (mean, se)
}

#[test]
fn algorithm1_is_unbiased_for_one_hidden_layer() {
    let x = points(5, 4, 4);
    let k = ReluNtk::new(1).unwrap().gram(x.view(), x.view()).unwrap();
    for (sketch, sampler) in [
        (PairSketch::TensorSketch, Sampler::Gaussian),
        (PairSketch::TensorSrht, Sampler::Gaussian),
        (PairSketch::TensorSketch, Sampler::LeverageExact),
    ] {
        let params = NtkRandomFeatures::params()
            .depth(1)
            .m0(16)
            .m1(16)
            .mcs(16)
            .sketch(sketch)
            .sampler(sampler);
        let (mean, se) = monte_carlo_gram(&params, &x, 3000, &format!("{sketch:?}{sampler:?}"));
        for i in 0..5 {
            for j in 0..5 {
                assert!(
                    (mean[[i, j]] - k[[i, j]]).abs() <= 5.0 * se[[i, j]] + 1e-12,
                    "{sketch:?} {sampler:?} ({i},{j}): {} vs {} se {}",
                    mean[[i, j]],
                    k[[i, j]],
                    se[[i, j]]
                );
            }
        }
    }
}

#[test]
fn deeper_maps_converge_like_one_over_m() {
    // For L >= 2 the map is biased; E(K̂ - K)^2 = bias^2 + variance, both O(1/m) (bias O(1/m) squared is
    // smaller still), so quadrupling every width should divide the mean squared entry error by ~4.
    let x = points(6, 5, 5);
    for (l, sketch) in [(2, PairSketch::TensorSketch), (3, PairSketch::TensorSrht)] {
        let k = ReluNtk::new(l).unwrap().gram(x.view(), x.view()).unwrap();
        let mse = |m: usize| {
            let params = NtkRandomFeatures::params()
                .depth(l)
                .m0(m)
                .m1(m)
                .mcs(m)
                .sketch(sketch);
            let reps = 300;
            let mut acc = 0.0;
            for r in 0..reps {
                let phi = params
                    .fit(5, &mut rng_stream(r, &format!("mse{l}{m}")))
                    .unwrap()
                    .transform(x.view())
                    .unwrap();
                acc += (&phi.dot(&phi.t()) - &k).mapv(|v| v * v).mean().unwrap();
            }
            acc / reps as f64
        };
        let (e1, e4) = (mse(32), mse(128));
        let ratio = e1 / e4;
        assert!(
            ratio > 2.8 && ratio < 6.5,
            "L={l}: mse {e1} -> {e4} (ratio {ratio})"
        );
    }
}

#[test]
fn ntk_rf_dimensions_and_parameter_checks() {
    let p = NtkRfParams::han2021(2, 100, 30);
    assert_eq!(p.output_dim(), 100);
    let map = p.fit(7, &mut rng_stream(0, "dim")).unwrap();
    assert_eq!(map.dim(), 100);
    let x = gaussian_matrix(3, 7, &mut rng_stream(0, "x"));
    let (phi, psi) = map.transform_with_nngp(x.view()).unwrap();
    assert_eq!(phi.dim(), (3, 100));
    assert_eq!(psi.dim(), (3, 70));
    // Φ = [Ψ, Γ]
    assert_eq!(phi.slice(ndarray::s![.., ..70]), psi);
    // mcs = 0: NNGP features only
    let nngp = NtkRfParams::han2021(2, 50, 0)
        .fit(7, &mut rng_stream(0, "n"))
        .unwrap();
    assert_eq!(nngp.dim(), 50);
    let z = NtkRfParams::zandieh2021(1, 64, 40);
    assert_eq!(z.output_dim(), 64);
    assert!(z.fit(7, &mut rng_stream(0, "z")).is_ok());
    assert!(NtkRfParams::zandieh2021(1, 64, 41)
        .fit(7, &mut rng_stream(0, "z"))
        .is_err());
    assert!(NtkRfParams::han2021(0, 64, 4)
        .fit(7, &mut rng_stream(0, "z"))
        .is_err());
    assert!(NtkRfParams::han2021(1, 64, 64)
        .fit(7, &mut rng_stream(0, "z"))
        .is_err());
    assert!(map
        .transform(gaussian_matrix(3, 6, &mut rng_stream(0, "x")).view())
        .is_err());
}

/// NTK random features in `f32` (their layers' products in `f32`, the sketches in `f64`): at depths 1–3 and
/// both sketches, the `f32` features move the Gram ΦΦᵀ by less than a thousandth of its distance to the
/// exact NTK (the layers compound the products' rounding, and Step features may flip where a projection rounds
/// across 0, so the bound is stated at the Gram, where the approximation error lives).
#[test]
fn f32_features_move_the_gram_far_less_than_the_approximation_error() {
    let x = points(20, 5, 9).mapv(|v| f64::from(v as f32));
    let x32 = x.mapv(|v| v as f32);
    for (l, sketch) in [
        (1, PairSketch::TensorSketch),
        (2, PairSketch::TensorSketch),
        (3, PairSketch::TensorSrht),
    ] {
        let k = ReluNtk::new(l).unwrap().gram(x.view(), x.view()).unwrap();
        let map = NtkRandomFeatures::params()
            .depth(l)
            .m0(512)
            .m1(512)
            .mcs(512)
            .sketch(sketch)
            .fit(5, &mut rng_stream(l as u64, "f32"))
            .unwrap();
        assert!(map.native_f32());
        let phi = map.transform(x.view()).unwrap();
        let phi32 = map.transform_f32(x32.view()).unwrap().mapv(f64::from);
        let (g, g32) = (phi.dot(&phi.t()), phi32.dot(&phi32.t()));
        let max_abs = |a: &Array2<f64>, b: &Array2<f64>| {
            a.iter()
                .zip(b.iter())
                .fold(0.0f64, |acc, (p, q)| acc.max((p - q).abs()))
        };
        let (approx, rounding) = (max_abs(&g, &k), max_abs(&g32, &g));
        assert!(
            rounding < 1e-3 * approx,
            "depth {l} {sketch:?}: f32 moves the Gram by {rounding:e}, approximation error {approx:e}"
        );
    }
}
