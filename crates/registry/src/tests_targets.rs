//! Tests of the relation "method approximates kernel" ([`crate::targets`]): every exact kernel of the
//! benchmark against an independent computation, and every declared pair by an unbiasedness test over seeds.

use crate::targets::{kernel_targets, Approx, KernelTarget, MethodTarget, KERNEL_LABELS};
use ndarray::{Array2, ArrayView2};
use rfx_core::Kernel;
use rfx_gzk::zonal::Gzk;
use rfx_kernels::arccos::{arccos0, arccos1};

const SIGMA: f64 = 1.0;

/// Rows of unequal norms (0.2 to 1.3) in 5 dimensions.
fn rows() -> Array2<f64> {
    use rand::Rng;
    let mut rng = rfx_core::rng_stream(7, "targets-rows");
    let mut x = Array2::from_shape_fn((12, 5), |_| rng.gen::<f64>() - 0.5);
    for (i, mut r) in x.rows_mut().into_iter().enumerate() {
        let norm = r.dot(&r).sqrt();
        r *= (0.2 + 0.1 * i as f64) / norm;
    }
    x
}

fn with_bias_column(x: ArrayView2<'_, f64>, beta: f64) -> Array2<f64> {
    let d = x.ncols();
    Array2::from_shape_fn(
        (x.nrows(), d + 1),
        |(i, j)| if j < d { x[[i, j]] } else { beta },
    )
}

fn fro(a: &Array2<f64>) -> f64 {
    a.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The exact Gram of each kernel from a formula written out here (entry by entry, or the literal matrix
/// recursion of Han et al. 2021, Eq. 5 for the NTK), not through the registry.
fn independent_gram(k: &KernelTarget, x: ArrayView2<'_, f64>) -> Array2<f64> {
    let n = x.nrows();
    let norm = |i: usize| x.row(i).dot(&x.row(i)).sqrt();
    // the diagonal exactly (acos near 1 would turn a rounding of 1e-16 into 1e-8)
    let cos = |i: usize, j: usize| {
        if i == j {
            1.0
        } else {
            (x.row(i).dot(&x.row(j)) / (norm(i) * norm(j))).clamp(-1.0, 1.0)
        }
    };
    let entry = |f: &dyn Fn(usize, usize) -> f64| Array2::from_shape_fn((n, n), |(i, j)| f(i, j));
    let pi = std::f64::consts::PI;
    match k.label.as_str() {
        "gaussian" => entry(&|i, j| {
            let d2: f64 = (&x.row(i) - &x.row(j)).mapv(|v| v * v).sum();
            (-d2 / (2.0 * SIGMA * SIGMA)).exp()
        }),
        // Cho & Saul's k_0, k_1 divided by their value at θ = 0 (κ(1) = 1)
        "arccos0" => entry(&|i, j| 1.0 - cos(i, j).acos() / pi),
        "arccos1" => entry(&|i, j| {
            let th = cos(i, j).acos();
            norm(i) * norm(j) * (th.sin() + (pi - th) * th.cos()) / pi
        }),
        "poly2" => entry(&|i, j| (x.row(i).dot(&x.row(j)) + 1.0).powi(2)),
        label => {
            let depth: usize = label[3..4].parse().expect("ntk depth");
            let rows = if label.ends_with("-bias") {
                with_bias_column(x, 1.0)
            } else {
                x.to_owned()
            };
            rfx_kernels::ntk_nngp_recursion(rows.view(), depth)
                .expect("recursion")
                .0
        }
    }
}

#[test]
fn every_exact_kernel_matches_an_independent_computation() {
    let x = rows();
    let targets = kernel_targets(SIGMA);
    let labels: Vec<&str> = targets.iter().map(|k| k.label.as_str()).collect();
    assert_eq!(labels, KERNEL_LABELS);
    for k in &targets {
        let got = k.build().unwrap().gram(x.view(), x.view()).unwrap();
        let want = independent_gram(k, x.view());
        let err = fro(&(&got - &want)) / fro(&want);
        // both are sums of a few terms in f64; the NTK's Gzk/cosine paths round differently by ~1e-15
        assert!(err < 1e-12, "{}: relative difference {err}", k.label);
        // cross-check the arc-cosine helpers the formulas above mirror
        if k.label == "arccos1" {
            assert!(
                (arccos1(0.3)
                    - ((1.0f64 - 0.09).sqrt() + 0.3 * (std::f64::consts::PI - 0.3f64.acos()))
                        / std::f64::consts::PI)
                    .abs()
                    < 1e-15
            );
            assert!((arccos0(0.3) - (1.0 - 0.3f64.acos() / std::f64::consts::PI)).abs() < 1e-15);
        }
    }
}

/// The bias each truncated method is allowed, as a relative Frobenius norm $\Vert B\Vert_F / \Vert K\Vert_F$ of
/// an entrywise bound $B$ of $|\mathbb{E}\thinspace ZZ^\top - K|$ derived from the truncation, not measured:
/// Taylor tails of $e^{\langle x, y\rangle/\sigma^2}$ (Gaussian) or of the NTK function ($K^{(L)}(1) - \sum_{j\le q}
/// a_j$, the coefficients being $\ge 0$), the polynomial fit's sup error (NTKSketch), the truncated generalized
/// zonal kernel itself (Gegenbauer features are unbiased for it: Definition 8), and GQ's three-point rule
/// in closed form ($\mathbb{E}\cos(w\delta) = \frac{2}{3} + \frac{1}{3}\cos(\sqrt{3}\delta/\sigma)$ per coordinate).
fn truncation_allowance(
    k: &KernelTarget,
    m: &MethodTarget,
    x: ArrayView2<'_, f64>,
    exact: &Array2<f64>,
) -> f64 {
    let p = m.checked().unwrap();
    let bias = k.label.ends_with("-bias");
    let rows = if bias {
        with_bias_column(x, 1.0)
    } else {
        x.to_owned()
    };
    let n = rows.nrows();
    let norms: Vec<f64> = (0..n)
        .map(|i| rows.row(i).dot(&rows.row(i)).sqrt())
        .collect();
    let bound = |f: &dyn Fn(usize, usize) -> f64| {
        fro(&Array2::from_shape_fn((n, n), |(i, j)| f(i, j))) / fro(exact)
    };
    let depth = || p.int("depth").unwrap();
    match (k.label.as_str(), m.method) {
        (_, "gegenbauer") => {
            let d = rows.ncols();
            let q = p.int("degree").unwrap();
            let (g, s) = if k.label == "gaussian" {
                (
                    Gzk::gaussian(SIGMA).unwrap(),
                    p.int("radial_terms").unwrap(),
                )
            } else {
                (Gzk::relu_ntk(depth()).unwrap(), 1)
            };
            let trunc = g
                .truncate(d, q, s)
                .unwrap()
                .gram(rows.view(), rows.view())
                .unwrap();
            fro(&(&trunc - exact)) / fro(exact)
        }
        // stochastic rounding to a grid of step Δ = 2√(2/m)/(2^b − 1) adds at most Δ²/4 of variance per
        // feature, m Δ²/4 = 2/(2^b − 1)² on each diagonal entry; off the diagonal the noises are independent
        (_, "lp-rff") => {
            let b = p.int("bits").unwrap() as i32;
            let diag = 2.0 / (2f64.powi(b) - 1.0).powi(2);
            bound(&|i, j| if i == j { diag } else { 0.0 })
        }
        ("gaussian", "gq") => bound(&|i, j| {
            let delta = &rows.row(i) - &rows.row(j);
            let rule: f64 = delta
                .iter()
                .map(|v| 2.0 / 3.0 + (3f64.sqrt() * v / SIGMA).cos() / 3.0)
                .product();
            (rule - exact[[i, j]]).abs()
        }),
        ("gaussian", _) => {
            let q = p.int("degree").unwrap();
            bound(&|i, j| {
                let r = norms[i] * norms[j] / (SIGMA * SIGMA);
                let damp = (-(norms[i].powi(2) + norms[j].powi(2)) / (2.0 * SIGMA * SIGMA)).exp();
                // Σ_{l > q} r^l / l!, to convergence
                let (mut term, mut tail) = (1.0, 0.0);
                for l in 1..=q + 60 {
                    term *= r / l as f64;
                    if l > q {
                        tail += term;
                    }
                }
                damp * tail
            })
        }
        (_, "ntk-sketch") => {
            let fit = rfx_ntk::fit_ntk_polynomial(depth(), p.int("degree").unwrap()).unwrap();
            bound(&|i, j| norms[i] * norms[j] * fit.max_error())
        }
        (_, "maclaurin" | "polysketch") => {
            let q = p.int("degree").unwrap();
            let a = rfx_gzk::ntk::relu_ntk_taylor(depth(), q);
            let tail = (depth() + 1) as f64 - a.iter().map(|c| c.max(0.0)).sum::<f64>();
            bound(&|i, j| norms[i] * norms[j] * tail.max(0.0))
        }
        (kl, ml) => panic!("no bias bound for {ml} on {kl}"),
    }
}

/// Every declared pair, by an unbiasedness test over seeds: with $S$ independent maps at budget $m$, the
/// mean Gram $\bar K = \frac{1}{S}\sum_s Z_sZ_s^\top$ has $\mathbb{E}\Vert\bar K - \mathbb{E}ZZ^\top\Vert_F^2 =
/// \mathbb{E}\Vert ZZ^\top - \mathbb{E}ZZ^\top\Vert_F^2 / S \le \mathbb{E}\Vert ZZ^\top - K\Vert_F^2/S$, so
/// $\Vert\bar K - K\Vert_F \le \Vert B\Vert_F + 3\thinspace e_{\rm rms}/\sqrt{S}$ with $e_{\rm rms}$ the
/// root mean square of the single-map errors over the same seeds (a factor 3 on the standard deviation,
/// Chebyshev: failure probability below 1/9 per pair even for the worst law, far less for these sums of
/// many independent terms). This holds whatever the rate of a method in $m$ (Grad-RF's width grows like
/// $m^{1/L}$). A wrong scale or a wrong kernel gives a bias of the order of $\Vert K\Vert_F$, far above
/// $3 e_{\rm rms}/8$ at $S = 64$. Structured maps (SORF, ROM, GQ on the arc-cosine kernels), whose bias
/// vanishes only as $d$ grows, must have a mean Gram within one map's rms error. Nyström with $m \ge n$ landmarks reproduces $K$ on the rows to round-off.
#[test]
fn every_declared_method_approximates_its_kernel() {
    use rayon::prelude::*;
    let x = rows();
    let seeds = 64usize;
    let budget = 512usize;
    let targets = kernel_targets(SIGMA);
    let exacts: Vec<Array2<f64>> = targets
        .iter()
        .map(|k| k.build().unwrap().gram(x.view(), x.view()).unwrap())
        .collect();
    // Every (kernel, method) pair on its own seeded streams, the pairs in parallel (independent, so the
    // outcome is the sequential one); asymptotic methods are tested on mixture data below (at d = 5 there
    // is nothing asymptotic to check).
    let pairs: Vec<(&KernelTarget, &Array2<f64>, &MethodTarget)> = targets
        .iter()
        .zip(&exacts)
        .flat_map(|(k, e)| k.methods.iter().map(move |m| (k, e, m)))
        .filter(|(_, _, m)| m.approx != Approx::Asymptotic)
        .collect();
    let outcomes: Vec<(String, Option<String>)> = pairs
        .par_iter()
        .map(|&(k, exact, m)| {
            let kf = fro(exact);
            let mut mean = Array2::<f64>::zeros(exact.dim());
            let mut sq = 0.0;
            for s in 0..seeds {
                let mut rng = rfx_core::rng_stream(s as u64, &format!("{}/{}", k.label, m.label));
                let map = m.fit(budget, x.view(), &mut rng).unwrap();
                let z = map.transform(x.view()).unwrap();
                let g = z.dot(&z.t());
                sq += (fro(&(&g - exact)) / kf).powi(2);
                mean += &g;
            }
            mean /= seeds as f64;
            let rms = (sq / seeds as f64).sqrt();
            let err = fro(&(&mean - exact)) / kf;
            let tol = match m.approx {
                Approx::Unbiased => 3.0 * rms / (seeds as f64).sqrt(),
                Approx::Biased => {
                    3.0 * rms / (seeds as f64).sqrt()
                        + truncation_allowance(k, m, x.view(), exact)
                }
                // no bound at d = 5: the mean Gram must be no farther than one map's typical error
                // (a wrong scale or kernel is an error of order 1, far above)
                Approx::Structured => rms,
                // m = 512 landmarks >= n = 12 rows: K itself up to the pseudo-inverse's round-off
                Approx::Landmarks => 1e-8,
                Approx::Asymptotic => unreachable!("filtered out above"),
            };
            let line = format!(
                "{:>10} {:>12}: mean-Gram error {err:.2e}, single {rms:.2e}, tolerance {tol:.2e}",
                k.label, m.label
            );
            let failure = (err > tol).then(|| {
                format!(
                    "{} / {}: error of the mean Gram {err:.3e} > {tol:.3e} (single-map rms {rms:.3e})",
                    k.label, m.label
                )
            });
            (line, failure)
        })
        .collect();
    for (line, _) in &outcomes {
        eprintln!("{line}");
    }
    let failures: Vec<&String> = outcomes.iter().filter_map(|(_, f)| f.as_ref()).collect();
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(outcomes.len() > 60, "{} pairs", outcomes.len());
}

/// The test above can fail: ReLU features without their scale 2 approximate half the arc-cosine kernel, and
/// the order-0 sampler is not a map of the order-1 kernel.
#[test]
fn a_wrong_scale_or_kernel_is_detected() {
    let x = rows();
    let targets = kernel_targets(SIGMA);
    let k1 = targets.iter().find(|k| k.label == "arccos1").unwrap();
    let exact = k1.build().unwrap().gram(x.view(), x.view()).unwrap();
    let relu = k1.method("relu-rf").unwrap();
    let unscaled = MethodTarget {
        scale: 1.0,
        ..relu.clone()
    };
    let k0 = targets.iter().find(|k| k.label == "arccos0").unwrap();
    let wrong_kernel = k0.method("arccos").unwrap();
    for (what, m) in [("scale", &unscaled), ("kernel", wrong_kernel)] {
        let mut mean = Array2::<f64>::zeros(exact.dim());
        for s in 0..16u64 {
            let mut rng = rfx_core::rng_stream(s, "wrong");
            let z = m
                .fit(512, x.view(), &mut rng)
                .unwrap()
                .transform(x.view())
                .unwrap();
            mean += &z.dot(&z.t());
        }
        mean /= 16.0;
        let err = fro(&(&mean - &exact)) / fro(&exact);
        assert!(err > 0.2, "wrong {what} not detected: {err}");
    }
}

#[test]
fn relation_parameters_are_declared_and_labels_unique() {
    for k in kernel_targets(SIGMA) {
        k.build().unwrap();
        let mut seen = std::collections::HashSet::new();
        for m in &k.methods {
            assert!(seen.insert(m.label), "{}: {} twice", k.label, m.label);
            m.checked()
                .unwrap_or_else(|e| panic!("{} / {}: {e}", k.label, m.label));
        }
    }
    // a parameter the method does not declare is refused, not dropped
    let mut bad = kernel_targets(SIGMA)[3].method("grad-rf").unwrap().clone();
    bad.params.push(("bias", crate::RawValue::from(1.0)));
    assert!(bad.checked().is_err());
    assert!(crate::kernel_target("laplace", 1.0).is_err());
}

/// The mean Gram of `m`'s maps over `seeds` fits of width `width` on the rows `x`.
fn mean_gram(
    k: &KernelTarget,
    m: &MethodTarget,
    x: ArrayView2<'_, f64>,
    width: usize,
    seeds: std::ops::Range<u64>,
) -> Array2<f64> {
    let mut mean = Array2::<f64>::zeros((x.nrows(), x.nrows()));
    let count = seeds.end - seeds.start;
    for s in seeds {
        let mut rng = rfx_core::rng_stream(s, &format!("asymptotic/{}/{}", k.label, m.label));
        let z = m.fit(width, x, &mut rng).unwrap().transform(x).unwrap();
        mean += &z.dot(&z.t());
    }
    mean / count as f64
}

/// Ternary features ([`Approx::Asymptotic`]) on the two-class Gaussian mixture of their paper's Fig. 2
/// ($\mu_a = 4e_a$, $C_a = (1 + 4(a-1)/\sqrt p)I_p$) with $n = p = 256$. That their centred expected Gram
/// approaches the centred kernel up to $\lambda P$ as $p$ grows (Theorem 1, Corollary 1) is tested in
/// `rfx-ternary` (`equivalent.rs`); here, that the relation builds them right. The centred, shifted
/// spectral error (`rfx_solvers::spectral::centred_kernel_errors_gram`) of the mean Gram of 8 fits of width
/// 4096 must be (a) below a quarter of that of a wrong construction of the same map (ReLU without its
/// scale 2: half the kernel; the Gaussian at bandwidth $2\sigma$), and (b) below half the same Gram's
/// uncentred error (so the centring and the shift are what make it an approximation: the diagonal
/// $\mathbb E\thinspace\sigma_{ter}^2 < 1$); and (c) within three times the Monte Carlo noise floor
/// (the centred error between the means of two disjoint sets of 8 fits, which is $\sqrt 2$ times the noise
/// of one mean) plus 0.05, the finite-$p$ error `rfx-ternary` measures for ReLU at this size.
#[test]
fn asymptotic_methods_match_the_centred_kernel_on_mixture_data() {
    let sigma = 1.8; // τ̂/σ² ≈ 0.37 on these rows: the [cos, sin] thresholds are feasible
    let p = 256;
    let gmm = rfx_ternary::GaussianMixture::paper_fig2(p, 2).unwrap();
    let x = gmm
        .sample(&[p / 2, p / 2], &mut rfx_core::rng_stream(3, "gmm"))
        .unwrap()
        .x;
    let centred = |e: &Array2<f64>, g: &Array2<f64>| {
        rfx_solvers::spectral::centred_kernel_errors_gram(e.view(), g.view())
            .unwrap()
            .rel_spectral
    };
    let spec = |a: &Array2<f64>| rfx_ternary::spectral_norm(a.view());
    let mut pairs = 0;
    for k in kernel_targets(sigma) {
        let exact = k.build().unwrap().gram(x.view(), x.view()).unwrap();
        for m in k.methods.iter().filter(|m| m.approx == Approx::Asymptotic) {
            let wrong = if m.scale != 1.0 {
                MethodTarget {
                    scale: 1.0,
                    ..m.clone()
                }
            } else {
                MethodTarget {
                    input_scale: m.input_scale / 2.0,
                    ..m.clone()
                }
            };
            let g = mean_gram(&k, m, x.view(), 4096, 0..8);
            let e = centred(&exact, &g);
            let floor = centred(&g, &mean_gram(&k, m, x.view(), 4096, 8..16)) / 2f64.sqrt();
            let e_wrong = centred(&exact, &mean_gram(&k, &wrong, x.view(), 4096, 0..8));
            let uncentred = spec(&(&exact - &g)) / spec(&exact);
            eprintln!(
                "{} / {}: centred {e:.4} (noise {floor:.4}), uncentred {uncentred:.4}, wrong construction {e_wrong:.4}",
                k.label, m.label
            );
            assert!(
                e < e_wrong / 4.0,
                "{} / {}: {e} vs wrong {e_wrong}",
                k.label,
                m.label
            );
            assert!(
                e < uncentred / 2.0,
                "{} / {}: {e} vs uncentred {uncentred}",
                k.label,
                m.label
            );
            assert!(
                e < 3.0 * floor + 0.05,
                "{} / {}: {e} vs noise {floor}",
                k.label,
                m.label
            );
            pairs += 1;
        }
    }
    assert_eq!(
        pairs, 2,
        "the ternary features of the Gaussian and order-1 arc-cosine kernels"
    );
}
