//! Naive-RF and Grad-RF baselines, and the Gram-accumulation helpers.

use ndarray::{s, Array2};
use rfx_core::{rng_stream, FeatureMap, Kernel};
use rfx_kernels::ReluNtk;
use rfx_ntk::{
    chunked_gram, feature_gram, feature_gram_error, kernel_gram_error, ArcCosineFeatures, GradRf,
    GramAccumulator, NaiveRf, NtkRfParams,
};
use rfx_sampling::random::gaussian_matrix;

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

#[test]
fn naive_rf_gram_recursion_equals_materialised_features() {
    let x = gaussian_matrix(5, 4, &mut rng_stream(1, "x"));
    let y = gaussian_matrix(3, 4, &mut rng_stream(1, "y"));
    for l in 1..=3 {
        let p = NaiveRf::params().depth(l).m0(3).m1(2);
        let map = p.fit(4, &mut rng_stream(2, &format!("naive{l}"))).unwrap();
        // D_L = (sum_{k<L} m0^k) m1 + m0^L d
        let want: u64 =
            (0..l).map(|k| 3u64.pow(k as u32)).sum::<u64>() * 2 + 3u64.pow(l as u32) * 4;
        assert_eq!(map.output_dim(), want);
        assert_eq!(p.output_dim(4).unwrap(), want);
        let (fx, fy) = (
            map.transform(x.view()).unwrap(),
            map.transform(y.view()).unwrap(),
        );
        assert_eq!(fx.ncols() as u64, want);
        let g = map.gram(x.view(), y.view()).unwrap();
        assert!(
            max_abs(&(&g - &fx.dot(&fy.t()))) < 1e-12 * (1.0 + max_abs(&g)),
            "L={l}"
        );
    }
    // materialising above the cap is an OutOfMemory error, the recursion still works
    let big = NaiveRf::params()
        .depth(4)
        .m0(128)
        .m1(128)
        .memory_cap(1 << 20);
    let map = big.fit(4, &mut rng_stream(3, "big")).unwrap();
    assert!(map.output_dim() > 1 << 28);
    assert!(matches!(
        map.transform(x.view()),
        Err(rfx_core::RfxError::OutOfMemory { .. })
    ));
    assert!(map
        .gram(x.view(), x.view())
        .unwrap()
        .iter()
        .all(|v| v.is_finite()));
    assert!(NaiveRf::params()
        .depth(40)
        .m0(1 << 20)
        .fit(4, &mut rng_stream(0, "o"))
        .is_err());
}

#[test]
fn naive_rf_is_unbiased_for_one_hidden_layer() {
    let x = gaussian_matrix(4, 3, &mut rng_stream(4, "x"));
    let k = ReluNtk::new(1).unwrap().gram(x.view(), x.view()).unwrap();
    let reps = 4000;
    let (mut sum, mut sum2) = (Array2::<f64>::zeros((4, 4)), Array2::<f64>::zeros((4, 4)));
    for r in 0..reps {
        let g = NaiveRf::params()
            .m0(8)
            .m1(8)
            .fit(3, &mut rng_stream(r, "nu"))
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        sum += &g;
        sum2 += &g.mapv(|v| v * v);
    }
    let mean = &sum / reps as f64;
    for i in 0..4 {
        for j in 0..4 {
            let var = sum2[[i, j]] / reps as f64 - mean[[i, j]].powi(2);
            let se = (var.max(0.0) / reps as f64).sqrt();
            assert!((mean[[i, j]] - k[[i, j]]).abs() <= 5.0 * se + 1e-12);
        }
    }
}

#[test]
fn grad_rf_features_and_gram_equal_finite_differences() {
    let x = gaussian_matrix(4, 3, &mut rng_stream(5, "x"));
    for l in 1..=3 {
        let p = GradRf::params().depth(l).width(5);
        let net = p.fit(3, &mut rng_stream(6, &format!("net{l}"))).unwrap();
        assert_eq!(net.dim(), 3 * 5 + (l - 1) * 25 + 5);
        let theta = net.theta();
        assert_eq!(theta.len(), net.dim());
        let j = net.transform(x.view()).unwrap();
        // central differences: f is piecewise polynomial of degree <= L+1 in θ, so the error is
        // O(h^2 |f'''|) ~ 1e-10 away from ReLU kinks (which random weights avoid)
        let h = 1e-5;
        let mut jfd = Array2::<f64>::zeros(j.dim());
        for c in 0..theta.len() {
            let (mut tp, mut tm) = (theta.clone(), theta.clone());
            tp[c] += h;
            tm[c] -= h;
            let fp = net.output_with(x.view(), &tp).unwrap();
            let fm = net.output_with(x.view(), &tm).unwrap();
            jfd.column_mut(c).assign(&((&fp - &fm) / (2.0 * h)));
        }
        let scale = 1.0 + max_abs(&j);
        assert!(
            max_abs(&(&j - &jfd)) < 1e-7 * scale,
            "L={l}: {}",
            max_abs(&(&j - &jfd))
        );
        let g = net.gram(x.view(), x.view()).unwrap();
        assert!(max_abs(&(&g - &j.dot(&j.t()))) < 1e-12 * (1.0 + max_abs(&g)));
        assert!(max_abs(&(&g - &jfd.dot(&jfd.t()))) < 1e-6 * (1.0 + max_abs(&g)));
        // f = <∂f/∂v, v> and, by homogeneity of degree L+1 in θ, f = <∇f, θ>/(L+1)
        let f = net.output(x.view()).unwrap();
        let th = ndarray::Array1::from(theta);
        assert!(
            max_abs(&(&j.dot(&th) / (l + 1) as f64 - &f).insert_axis(ndarray::Axis(0)))
                < 1e-10 * scale
        );
    }
}

#[test]
fn empirical_ntk_converges_to_the_exact_ntk_as_width_grows() {
    let mut x = gaussian_matrix(6, 4, &mut rng_stream(7, "x"));
    for mut r in x.rows_mut() {
        let n = r.dot(&r).sqrt();
        r.mapv_inplace(|v| v / n);
    }
    let l = 2;
    let k = ReluNtk::new(l).unwrap().gram(x.view(), x.view()).unwrap();
    let err = |w: usize| -> f64 {
        (0..3)
            .map(|s| {
                let g = GradRf::params()
                    .depth(l)
                    .width(w)
                    .fit(4, &mut rng_stream(s, &format!("w{w}")))
                    .unwrap()
                    .gram(x.view(), x.view())
                    .unwrap();
                (&g - &k).mapv(|v| v * v).mean().unwrap().sqrt()
            })
            .sum::<f64>()
            / 3.0
    };
    let (e32, e512, e2048) = (err(32), err(512), err(2048));
    // fluctuations ~ w^{-1/2}: factor 4 per 16x width, 8 for 64x; require clear decay
    assert!(e512 < e32 / 2.0 && e2048 < e512, "{e32} {e512} {e2048}");
    assert!(e2048 < 0.1 * (l + 1) as f64);
}

#[test]
fn gram_error_equals_the_direct_sums_across_panels_and_tiles() {
    // 1,100 rows: more than one 1024-row tile; budgets for one panel, 300-row and 100-row panels
    let n = 1100;
    let x = gaussian_matrix(n, 6, &mut rng_stream(10, "x"));
    let map = NtkRfParams::han2021(2, 40, 10)
        .fit(6, &mut rng_stream(10, "map"))
        .unwrap();
    let phi = map.transform(x.view()).unwrap();
    let direct = phi.dot(&phi.t());
    let k = Array2::from_shape_fn((n, n), |(i, j)| {
        direct[[i, j]] + 1e-3 * ((i + j) as f64).cos()
    });
    let (mut want_err, mut want_norm) = (0.0, 0.0);
    for (a, b) in direct.iter().zip(k.iter()) {
        want_err += (a - b) * (a - b);
        want_norm += b * b;
    }
    for budget in [1u64 << 30, 2 * 300 * 40 * 8, 2 * 100 * 40 * 8] {
        let (err, norm) = feature_gram_error(&map, x.view(), k.view(), budget).unwrap();
        assert!(
            (err - want_err).abs() <= 1e-9 * want_err,
            "budget {budget}: {err} vs {want_err}"
        );
        assert!(
            (norm - want_norm).abs() <= 1e-12 * want_norm,
            "budget {budget}"
        );
    }
    assert!(feature_gram_error(&map, x.view(), k.slice(s![..10, ..10]), 1 << 20).is_err());
}

#[test]
fn gram_helpers_equal_the_direct_products() {
    let x = gaussian_matrix(30, 6, &mut rng_stream(8, "x"));
    let map = NtkRfParams::han2021(2, 40, 10)
        .fit(6, &mut rng_stream(8, "map"))
        .unwrap();
    let phi = map.transform(x.view()).unwrap();
    let direct = phi.dot(&phi.t());
    // budget for 7-row panels: 2 * 7 * 40 * 8 bytes
    for budget in [2 * 7 * 40 * 8, 1, 1 << 30] {
        let g = feature_gram(&map, x.view(), budget).unwrap();
        assert!(
            max_abs(&(&g - &direct)) < 1e-12 * max_abs(&direct),
            "budget {budget}"
        );
    }
    let mut acc = GramAccumulator::new(30);
    for c in (0..40).step_by(9) {
        acc.add(phi.slice(s![.., c..(c + 9).min(40)])).unwrap();
    }
    assert_eq!(acc.columns(), 40);
    assert!(max_abs(&(&acc.finish() - &direct)) < 1e-12 * max_abs(&direct));
    // chunks of arc-cosine features: the average over chunks equals the Gram of their concatenation / C
    let chunks: Vec<_> = (0..3)
        .map(|c| {
            ArcCosineFeatures::params()
                .dim(50)
                .fit(6, &mut rng_stream(9, &format!("chunk={c}")))
                .unwrap()
        })
        .collect();
    let g = chunked_gram(x.view(), 3, |c| Ok(chunks[c].clone())).unwrap();
    let mut want = Array2::<f64>::zeros((30, 30));
    for ch in &chunks {
        let f = ch.transform(x.view()).unwrap();
        want += &(f.dot(&f.t()) / 3.0);
    }
    assert!(max_abs(&(&g - &want)) < 1e-12 * max_abs(&want));
    assert!(chunked_gram(x.view(), 0, |c| Ok(chunks[c].clone())).is_err());
}

/// The widest network within a parameter budget, checked against the count $dw + (L-1)w^2 + w$.
#[test]
fn grad_rf_widest_within_the_budget() {
    use rfx_ntk::GradRf;
    assert_eq!(GradRf::widest_within(1024, 784, 1), Some(1));
    assert_eq!(GradRf::widest_within(16_384, 784, 1), Some(20)); // 785 * 20 = 15,700
    assert_eq!(GradRf::widest_within(784, 784, 1), None);
    assert_eq!(GradRf::widest_within(100, 10, 2), Some(5)); // 10w + w^2 + w: 80 at w = 5, 102 at w = 6
}

#[test]
fn kernel_gram_error_equals_the_direct_sums_across_blocks() {
    // 1,100 rows: two row blocks of 1024, so off-diagonal block pairs and a ragged block
    let n = 1100;
    let x = gaussian_matrix(n, 5, &mut rng_stream(12, "x"));
    let naive = NaiveRf::params()
        .depth(2)
        .m0(3)
        .m1(4)
        .fit(5, &mut rng_stream(12, "naive"))
        .unwrap();
    let grad = GradRf::params()
        .depth(2)
        .width(6)
        .fit(5, &mut rng_stream(12, "grad"))
        .unwrap();
    let maps: [&dyn FeatureMap; 2] = [&naive, &grad];
    for map in maps {
        let g = map.feature_gram(x.view(), x.view()).unwrap();
        let k = Array2::from_shape_fn((n, n), |(i, j)| g[[i, j]] + 1e-2 * ((i + j) as f64).sin());
        let (mut want_err, mut want_norm) = (0.0, 0.0);
        for (a, b) in g.iter().zip(k.iter()) {
            want_err += (a - b) * (a - b);
            want_norm += b * b;
        }
        let (err, norm) = kernel_gram_error(map, x.view(), k.view()).unwrap();
        // the same terms summed in another order (and the block Grams' own rounding, relative 1e-16 of
        // entries of size 1 against differences of size 1e-2): far below 1e-9
        assert!(
            (err - want_err).abs() <= 1e-9 * want_err,
            "{err} vs {want_err}"
        );
        assert!((norm - want_norm).abs() <= 1e-12 * want_norm);
        assert!(kernel_gram_error(map, x.view(), k.slice(s![..10, ..10])).is_err());
    }
}
