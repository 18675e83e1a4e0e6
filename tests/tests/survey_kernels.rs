//! The random-features survey's samplers against the exact arc-cosine kernels of `rfx-ntk`.

use ndarray::Array2;
use rand::Rng;
use rfx_core::{rng_stream, FeatureMap, Kernel};
use rfx_kernels::{ArcCosineKernel, ArcCosineOrder};
use rfx_sampling::survey::{Sampler, SurveyKernel, SurveyParams, SAMPLERS};

fn data() -> Array2<f64> {
    let mut rng = rng_stream(7, "survey-kernels");
    Array2::from_shape_simple_fn((25, 6), || rng.gen::<f64>() - 0.3)
}

/// `SurveyKernel::eval` equals the `rfx-ntk` Gram ($\kappa_0$ and $\|x\|\|y\|\kappa_1$, $\kappa(1) = 1$) to 1e-6
/// (the ntk Gram recomputes near-parallel cosines; the square-root singularity of $\kappa_0$ at $u = 1$ allows
/// ~1e-8 differences on the diagonal).
#[test]
fn survey_arc_cosine_kernels_match_the_ntk_crate() {
    let x = data();
    for (sk, order) in [
        (SurveyKernel::ArcCos0, ArcCosineOrder::Zero),
        (SurveyKernel::ArcCos1, ArcCosineOrder::One),
    ] {
        let g = ArcCosineKernel::new(order).gram_sym(x.view()).unwrap();
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                let v = sk.eval(x.row(i), x.row(j));
                assert!(
                    (v - g[[i, j]]).abs() < 1e-6,
                    "{sk:?} ({i},{j}): {v} vs {}",
                    g[[i, j]]
                );
            }
        }
    }
}

/// Every unbiased sampler's Gram converges to the ntk Gram: with $s = 20{,}000$ frequencies the relative
/// Frobenius error is below 0.05 (Monte Carlo error $\approx c/\sqrt s$ with $c \lesssim 3$ here).
#[test]
fn every_sampler_converges_to_the_exact_arc_cosine_gram() {
    let x = data();
    let mut rng = rng_stream(8, "survey-kernels-mc");
    for (sk, order) in [
        (SurveyKernel::ArcCos0, ArcCosineOrder::Zero),
        (SurveyKernel::ArcCos1, ArcCosineOrder::One),
    ] {
        let g = ArcCosineKernel::new(order).gram_sym(x.view()).unwrap();
        for (name, sampler) in SAMPLERS {
            if matches!(sampler, Sampler::Gq | Sampler::Sorf | Sampler::Rom) {
                continue; // biased for the arc-cosine kernels (see rfx_sampling::survey)
            }
            let m = SurveyParams::new(sampler, sk)
                .frequencies(20_000)
                .leverage(2, 25, 1e-3)
                .fit(6, Some(x.view()), &mut rng)
                .unwrap();
            let z = m.transform(x.view()).unwrap();
            let e = &z.dot(&z.t()) - &g;
            let rel = (e.iter().map(|v| v * v).sum::<f64>() / g.iter().map(|v| v * v).sum::<f64>())
                .sqrt();
            assert!(rel < 0.05, "{name} {sk:?}: relative error {rel}");
        }
    }
}
