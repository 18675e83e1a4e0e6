//! Tests of the registry: parameter checking, the table methods against their exact kernels, biases.

use crate::*;
use ndarray::Array2;
use rfx_core::{FeatureMap, Kernel};
use rfx_gzk::zonal::Gzk;
use rfx_kernels::{ReluNngp, ReluNtk};

#[test]
fn params_check_names_ranges_and_defaults() {
    let spec = method("gegenbauer").unwrap();
    let p = spec.parse_params(&[("degree".into(), "7".into())]).unwrap();
    assert_eq!(p.int("degree").unwrap(), 7);
    assert_eq!(p.int("radial_terms").unwrap(), 4);
    let e = spec
        .parse_params(&[("degre".into(), "7".into())])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown parameter \"degre\"") && e.contains("radial_terms"),
        "{e}"
    );
    let e = spec
        .parse_params(&[("degree".into(), "61".into())])
        .unwrap_err()
        .to_string();
    assert!(e.contains("0..=60"), "{e}");
    let e = spec
        .parse_params(&[("kernel".into(), "laplace".into())])
        .unwrap_err()
        .to_string();
    assert!(e.contains("gaussian | relu-ntk"), "{e}");
}

#[test]
fn registry_names_are_unique_and_defaults_valid() {
    let mut seen = std::collections::HashSet::new();
    for m in methods() {
        assert!(seen.insert(m.name), "duplicate {}", m.name);
        for d in m.params {
            d.check(&RawValue::from(d.default))
                .unwrap_or_else(|e| panic!("{}.{}: {e}", m.name, d.name));
        }
    }
    for k in kernels() {
        for d in k.params {
            d.check(&RawValue::from(d.default))
                .unwrap_or_else(|e| panic!("{}.{}: {e}", k.name, d.name));
        }
    }
    assert_eq!(
        table_methods(),
        [
            "rff",
            "fastfood",
            "maclaurin",
            "polysketch",
            "gegenbauer",
            "nystrom",
            "ntk-rf",
            "ntk-sketch"
        ]
    );
    let kernels_of = |n: &str| table_kernels(method(n).unwrap());
    assert_eq!(kernels_of("rff"), ["gaussian"]);
    assert_eq!(kernels_of("ntk-rf"), ["relu-ntk"]);
    assert_eq!(kernels_of("nystrom"), ["gaussian", "relu-ntk"]);
    assert!(kernels_of("arccos").is_empty());
}

#[test]
fn method_choice_syntax() {
    let c = MethodChoice::parse("ntk-rf( sampler=gs, sketch = tensorsrht )").unwrap();
    assert_eq!(c.name, "ntk-rf");
    assert_eq!(c.param("sampler"), Some("gs"));
    assert_eq!(c.param("sketch"), Some("tensorsrht"));
    assert!(c.check_table_method().is_ok());
    assert_eq!(MethodChoice::parse("rff").unwrap().params, vec![]);
    for bad in [
        "",
        "ntk-rf(",
        "ntk-rf(sampler)",
        "ntk-rf(sampler=gs",
        "a b",
        "x(k=)",
    ] {
        assert!(MethodChoice::parse(bad).is_err(), "{bad}");
    }
    // names and values are checked against the registry
    let e = MethodChoice::parse("ntk-rf(sampler=bogus)")
        .unwrap()
        .check_table_method()
        .unwrap_err()
        .to_string();
    assert!(e.contains("sampler") && e.contains("gs"), "{e}");
    assert!(MethodChoice::parse("arccos")
        .unwrap()
        .check_table_method()
        .is_err());
}

/// Every table method of the ReLU NTK, built as the table kinds build it, approximates the exact
/// kernel on inputs of unequal norms (the NTK is positively homogeneous; each map normalises and
/// rescales): relative Frobenius error of $ZZ^\top$ below 0.05 at $m = 2\cdot 10^4$ (Monte Carlo
/// error $\approx c/\sqrt{m/2} \approx 0.01c$ per entry; measured 0.026–0.031 for the unbiased maps),
/// plus, for NTKSketch, its polynomial fit's sup error relative to $K(1) = 2$.
#[test]
fn table_ntk_methods_approximate_the_exact_ntk_off_the_sphere() {
    use rand::Rng;
    let mut rng = rfx_core::rng_stream(7, "ntk-table-check");
    let x = Array2::from_shape_fn((12, 5), |(i, _)| {
        (0.3 + 0.4 * i as f64) * (rng.gen::<f64>() - 0.5)
    });
    let exact = Gzk::relu_ntk(1).unwrap().gram(x.view(), x.view()).unwrap();
    let given = [
        ("kernel", RawValue::from("relu-ntk")),
        ("depth", RawValue::from("1")),
        ("radial_terms", RawValue::from("1")),
    ];
    for name in ["ntk-rf", "ntk-sketch", "gegenbauer", "nystrom"] {
        let mut rng = rfx_core::rng_stream(11, name);
        let map = build_method(name, 20_000, &given, x.view(), &mut rng).unwrap();
        let z = map.transform(x.view()).unwrap();
        let g = z.dot(&z.t());
        let err = (&g - &exact).mapv(|v| v * v).sum().sqrt() / exact.mapv(|v| v * v).sum().sqrt();
        // NTKSketch is unbiased for its polynomial P, not for K: add the fit's sup error relative
        // to K(1) = 2 (entries are |x||y|K(cos), the diagonal dominates the Frobenius norm)
        let bias = if name == "ntk-sketch" {
            rfx_ntk::fit_ntk_polynomial(1, 4).unwrap().max_error() / 2.0
        } else {
            0.0
        };
        assert!(err < 0.05 + bias, "{name}: relative error {err}");
    }
    // a method of the other kernel is refused
    let mut rng = rfx_core::rng_stream(11, "rff");
    assert!(build_method("rff", 64, &given, x.view(), &mut rng).is_err());
}

/// Rows of unequal norms in 5 dimensions and the same rows with the column β appended, written out.
fn rows_and_augmented(beta: f64) -> (Array2<f64>, Array2<f64>) {
    use rand::Rng;
    let mut rng = rfx_core::rng_stream(7, "ntk-bias-check");
    let x = Array2::from_shape_fn((12, 5), |(i, _)| {
        (0.3 + 0.4 * i as f64) * (rng.gen::<f64>() - 0.5)
    });
    let aug = Array2::from_shape_fn((12, 6), |(i, j)| if j < 5 { x[[i, j]] } else { beta });
    (x, aug)
}

/// The exact kernels with `bias = β` are the NTK (NNGP) of the rows [x, β], for `rfx gram` and for the
/// table kinds' wrapper; the result is not positively homogeneous, unlike the NTK without bias.
#[test]
fn ntk_with_bias_is_the_ntk_of_the_augmented_rows() {
    let beta = 1.5;
    let (x, aug) = rows_and_augmented(beta);
    let x2 = x.mapv(|v| 2.0 * v);
    for (name, direct) in [
        ("ntk", Box::new(ReluNtk::new(2).unwrap()) as Box<dyn Kernel>),
        ("nngp", Box::new(ReluNngp::new(2).unwrap())),
    ] {
        let spec = kernel(name).unwrap();
        let given = [
            ("depth".to_string(), "2".to_string()),
            ("bias".into(), "1.5".into()),
        ];
        let k = spec.build(&spec.parse_params(&given).unwrap()).unwrap();
        let want = direct.gram(aug.view(), aug.view()).unwrap();
        let got = k.gram(x.view(), x.view()).unwrap();
        let err = (&got - &want)
            .mapv(f64::abs)
            .fold(0.0, |a: f64, &b| a.max(b));
        assert!(err < 1e-12, "{name}: {err}");
        // entry by entry and against other rows, too
        let e = k.eval(x.row(3), x.row(7));
        assert!(
            (e - direct.eval(aug.row(3), aug.row(7))).abs() < 1e-12,
            "{name}"
        );
        let cross = k.gram(x2.view(), x.view()).unwrap();
        let homogeneous = got.mapv(|v| 2.0 * v);
        let gap = (&cross - &homogeneous).mapv(f64::abs).sum() / homogeneous.mapv(f64::abs).sum();
        assert!(gap > 0.05, "{name}: Θ(2x, y) = 2Θ(x, y) within {gap}");
        // without bias the kernel is positively homogeneous
        let plain = spec
            .build(&spec.parse_params(&given[..1]).unwrap())
            .unwrap();
        let c = plain.gram(x2.view(), x.view()).unwrap();
        let h = plain.gram(x.view(), x.view()).unwrap().mapv(|v| 2.0 * v);
        assert!((&c - &h).mapv(f64::abs).sum() / h.mapv(f64::abs).sum() < 1e-12);
    }
    // the wrapper of the table kinds (a Gzk of the ReLU NTK)
    let gzk = Gzk::relu_ntk(1).unwrap();
    let want = gzk.gram(aug.view(), aug.view()).unwrap();
    let k = with_bias(Box::new(gzk), beta).unwrap();
    let got = k.gram(x.view(), x.view()).unwrap();
    assert!((&got - &want).mapv(f64::abs).sum() < 1e-10);
}

/// Every NTK map with `bias = 1` approximates the exact NTK with bias: relative Frobenius error of
/// $ZZ^\top$ below 0.05 at $m = 2\cdot 10^4$ (Monte Carlo error $\approx c/\sqrt{m/2} \approx 0.01c$ per
/// entry, as for the maps without bias), plus NTKSketch's polynomial-fit error. The error against the
/// kernel without bias is large, so the test sees which kernel a map approximates.
#[test]
fn ntk_maps_with_bias_approximate_the_ntk_with_bias() {
    let (x, aug) = rows_and_augmented(1.0);
    let exact = Gzk::relu_ntk(1)
        .unwrap()
        .gram(aug.view(), aug.view())
        .unwrap();
    let plain = Gzk::relu_ntk(1).unwrap().gram(x.view(), x.view()).unwrap();
    let rel = |a: &Array2<f64>, b: &Array2<f64>| {
        (a - b).mapv(|v| v * v).sum().sqrt() / b.mapv(|v| v * v).sum().sqrt()
    };
    assert!(rel(&plain, &exact) > 0.2, "{}", rel(&plain, &exact));
    for (name, extra) in [
        ("ntk-rf", None),
        ("ntk-rf", Some(("sampler", "gs"))),
        ("ntk-rf", Some(("sketch", "tensorsrht"))),
        ("ntk-sketch", None),
        ("gegenbauer", None),
    ] {
        let mut given = vec![
            ("kernel", RawValue::from("relu-ntk")),
            ("depth", RawValue::from("1")),
            ("radial_terms", RawValue::from("1")),
            ("bias", RawValue::from("1")),
        ];
        if let Some((k, v)) = extra {
            given.push((k, RawValue::from(v)));
        }
        let mut rng = rfx_core::rng_stream(11, name);
        let map = build_method(name, 20_000, &given, x.view(), &mut rng).unwrap();
        assert_eq!(map.input_dim(), 5);
        let z = map.transform(x.view()).unwrap();
        let err = rel(&z.dot(&z.t()), &exact);
        let fit = if name == "ntk-sketch" {
            rfx_ntk::fit_ntk_polynomial(1, 4).unwrap().max_error() / 2.0
        } else {
            0.0
        };
        assert!(err < 0.05 + fit, "{name} {extra:?}: relative error {err}");
    }
}

/// `bias = 0` is the method without the parameter, bit for bit (same stream, same features); bad values
/// are refused with the parameter's range.
#[test]
fn bias_zero_changes_nothing_and_bad_values_are_refused() {
    let (x, _) = rows_and_augmented(0.0);
    for name in ["ntk-rf", "ntk-sketch", "gegenbauer"] {
        let base = vec![
            ("kernel", RawValue::from("relu-ntk")),
            ("depth", RawValue::from("1")),
            ("radial_terms", RawValue::from("1")),
        ];
        let mut zero = base.clone();
        zero.push(("bias", RawValue::from("0")));
        let z = |given: &[(&str, RawValue)]| {
            let mut rng = rfx_core::rng_stream(3, name);
            build_method(name, 64, given, x.view(), &mut rng)
                .unwrap()
                .transform(x.view())
                .unwrap()
        };
        assert_eq!(z(&base), z(&zero), "{name}");
        let spec = method(name).unwrap();
        for bad in ["-1", "abc", "inf", "NaN", "1e7"] {
            let e = spec
                .parse_params(&[("bias".into(), bad.into())])
                .unwrap_err()
                .to_string();
            assert!(e.contains("bias") && e.contains("[0, 1000000]"), "{e}");
        }
    }
    let spec = kernel("ntk").unwrap();
    let k0 = spec
        .build(&spec.parse_params(&[("bias".into(), "0".into())]).unwrap())
        .unwrap();
    let k = spec.build(&spec.parse_params(&[]).unwrap()).unwrap();
    assert_eq!(
        k0.gram(x.view(), x.view()).unwrap(),
        k.gram(x.view(), x.view()).unwrap()
    );
    // the unit-norm fast path cannot take a bias
    let mut rng = rfx_core::rng_stream(3, "unit");
    let given = [
        ("unit_norm", RawValue::from("true")),
        ("bias", RawValue::from("1")),
    ];
    let e = build_method("gegenbauer", 64, &given, x.view(), &mut rng)
        .err()
        .expect("refused");
    assert!(matches!(&e, RegistryError::Fit { owner, .. } if owner == "method gegenbauer"));
    let e = e.to_string();
    assert!(e.contains("bias") && e.contains("unit_norm"), "{e}");
}

/// `grad-rf` with budget $m$ is the widest network with at most $m$ parameters
/// ([`rfx_ntk::GradRf::widest_within`]): $10w + w^2 + w$ is 80 at $w = 5$ and 102 at $w = 6$.
#[test]
fn grad_rf_takes_the_widest_network_within_the_budget() {
    let mut rng = rfx_core::rng_stream(1, "grad-rf");
    let x = Array2::from_elem((3, 10), 0.1);
    let map = build_method(
        "grad-rf",
        100,
        &[("depth", RawValue::from(2usize))],
        x.view(),
        &mut rng,
    )
    .unwrap();
    assert_eq!(map.dim(), 80);
}

/// The survey's samplers in the registry are the maps of `rfx_sampling::survey` with s = ⌊m/2⌋
/// frequencies (Gaussian, 2s columns) or s = m (arc-cosine), bit for bit from the same stream; ls-rff needs
/// rows and refuses the input dimension alone.
#[test]
fn survey_samplers_are_the_survey_maps() {
    use rfx_core::{Fit, FitData};
    use rfx_sampling::{Sampler, SurveyKernel, SurveyParams};
    let x = Array2::from_shape_fn((40, 6), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
    for (name, sampler) in [
        ("rom", Sampler::Rom),
        ("ssf", Sampler::Ssf),
        ("gq", Sampler::Gq),
        ("ls-rff", Sampler::LsRff),
    ] {
        let spec = method(name).unwrap();
        for (kernel, survey, m, width) in [
            ("gaussian", SurveyKernel::Gaussian { sigma: 1.5 }, 33, 32),
            ("arccos1", SurveyKernel::ArcCos1, 33, 33),
        ] {
            let p = spec
                .params_from(&[
                    ("kernel", RawValue::from(kernel)),
                    ("sigma", RawValue::from(1.5)),
                ])
                .unwrap();
            assert_eq!((spec.out_dim)(m, x.nrows(), &p), width, "{name} {kernel}");
            let mut rng = rfx_core::rng_stream(5, name);
            let z = spec.fit(m, &p, FitData::Rows(x.view()), &mut rng).unwrap();
            let s = if kernel == "gaussian" { m / 2 } else { m };
            let mut rng = rfx_core::rng_stream(5, name);
            let direct = SurveyParams::new(sampler, survey)
                .frequencies(s)
                .fit_map(FitData::Rows(x.view()), &mut rng)
                .unwrap();
            let (a, b) = (
                z.transform(x.view()).unwrap(),
                direct.transform(x.view()).unwrap(),
            );
            assert_eq!(a.ncols(), width, "{name} {kernel}");
            assert_eq!(a, b, "{name} {kernel}");
        }
    }
    let spec = method("ls-rff").unwrap();
    let p = spec.parse_params(&[]).unwrap();
    let mut rng = rfx_core::rng_stream(5, "ls-rff");
    let e = spec
        .fit(64, &p, FitData::Dim(6), &mut rng)
        .err()
        .expect("needs rows");
    assert!(e.to_string().contains("ls-rff"), "{e}");
}

/// `relu-rf` is `rfx_ternary::ReluFeatures` and `ternary` is Algorithm 1's fit
/// (`TernaryParams::fit_to_target`), bit for bit from the same stream: the maps of the `trf_*` kinds
/// (whose draws must not change when they fit through the registry). `relu-rf` is data-oblivious (the
/// input dimension suffices), the ternary map needs rows for $\hat\tau$.
#[test]
fn relu_and_ternary_maps_are_the_ternary_crate_maps() {
    use rfx_core::FitData;
    use rfx_ternary::{Activation, ReluFeatures, TernaryParams};
    let x = Array2::from_shape_fn((30, 5), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.45);
    let spec = method("relu-rf").unwrap();
    let p = spec.params_from::<&str>(&[]).unwrap();
    assert_eq!((spec.out_dim)(48, 30, &p), 48);
    let z = spec
        .fit(
            48,
            &p,
            FitData::Dim(5),
            &mut rfx_core::rng_stream(4, "relu"),
        )
        .unwrap();
    let direct = ReluFeatures::fit(5, 48, &mut rfx_core::rng_stream(4, "relu")).unwrap();
    assert_eq!(
        z.transform(x.view()).unwrap(),
        direct.transform(x.view()).unwrap()
    );
    let spec = method("ternary").unwrap();
    for (activation, target) in [("relu", Activation::Relu), ("cos-sin", Activation::CosSin)] {
        let p = spec
            .params_from(&[
                ("activation", RawValue::from(activation)),
                ("sparsity", RawValue::from(0.5)),
            ])
            .unwrap();
        let mut rng = rfx_core::rng_stream(4, activation);
        let z = spec.fit(64, &p, FitData::Rows(x.view()), &mut rng).unwrap();
        let mut rng = rfx_core::rng_stream(4, activation);
        let direct = TernaryParams::new(64)
            .sparsity(0.5)
            .fit_to_target(x.view(), &target, &mut rng)
            .unwrap()
            .features;
        assert_eq!(
            z.transform(x.view()).unwrap(),
            direct.transform(x.view()).unwrap(),
            "{activation}"
        );
        assert!(spec.fit(64, &p, FitData::Dim(5), &mut rng).is_err());
    }
}

/// `rff(phase=random)` is `rfx_sampling`'s random-phase RFF, bit for bit from the same stream (the `rff` of
/// `trf_memory`); the default stays the paired form.
#[test]
fn rff_random_phase_is_the_sampling_map() {
    use rfx_core::FitData;
    let x = Array2::from_shape_fn((9, 4), |(i, j)| ((i * 3 + j) % 5) as f64 / 5.0 - 0.3);
    let spec = method("rff").unwrap();
    let p = spec
        .params_from(&[
            ("phase", RawValue::from("random")),
            ("sigma", RawValue::from(1.0)),
        ])
        .unwrap();
    let z = spec
        .fit(33, &p, FitData::Dim(4), &mut rfx_core::rng_stream(8, "rp"))
        .unwrap();
    let direct = rfx_sampling::Rff::params()
        .dim(33)
        .sigma(1.0)
        .output(rfx_sampling::Output::RandomPhase)
        .fit(4, &mut rfx_core::rng_stream(8, "rp"))
        .unwrap();
    assert_eq!(
        z.transform(x.view()).unwrap(),
        direct.transform(x.view()).unwrap()
    );
    assert_eq!(
        spec.params_from::<&str>(&[])
            .unwrap()
            .choice("phase")
            .unwrap(),
        "paired"
    );
}

/// The Fourier samplers on the survey's kernels are the survey's maps ([`rfx_sampling::SurveyParams`], the
/// `survey_benchmark` kind's), bit for bit from the same stream: always for the arc-cosine kernels, and for
/// the Gaussian kernel with `form=survey`. The default Gaussian form stays rfx-sampling's Fourier map, which
/// draws the same frequencies but rounds differently (so the two differ by round-off, not more).
#[test]
fn fourier_samplers_on_survey_kernels_are_the_survey_maps() {
    use rfx_core::{Fit, FitData};
    use rfx_sampling::{FourierMethod, GaussianFeatureParams, Sampler, SurveyKernel, SurveyParams};
    let x = Array2::from_shape_fn((40, 6), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
    for (name, sampler, fourier) in [
        ("rff", Sampler::Rff, FourierMethod::Rff),
        ("orf", Sampler::Orf, FourierMethod::Orf),
        ("sorf", Sampler::Sorf, FourierMethod::Sorf),
        ("fastfood", Sampler::Fastfood, FourierMethod::Fastfood),
        ("qmc", Sampler::Qmc, FourierMethod::Qmc),
    ] {
        let spec = method(name).unwrap();
        for (kernel, form, survey, m, width) in [
            (
                "gaussian",
                "survey",
                SurveyKernel::Gaussian { sigma: 1.5 },
                33,
                32,
            ),
            ("arccos0", "fourier", SurveyKernel::ArcCos0, 33, 33),
            ("arccos1", "survey", SurveyKernel::ArcCos1, 33, 33),
        ] {
            let p = spec
                .params_from(&[
                    ("kernel", RawValue::from(kernel)),
                    ("sigma", RawValue::from(1.5)),
                    ("form", RawValue::from(form)),
                ])
                .unwrap();
            assert_eq!((spec.out_dim)(m, x.nrows(), &p), width, "{name} {kernel}");
            let z = spec
                .fit(m, &p, FitData::Dim(6), &mut rfx_core::rng_stream(5, name))
                .unwrap();
            let s = if kernel == "gaussian" { m / 2 } else { m };
            let direct = SurveyParams::new(sampler, survey)
                .frequencies(s)
                .fit_map(FitData::Dim(6), &mut rfx_core::rng_stream(5, name))
                .unwrap();
            let a = z.transform(x.view()).unwrap();
            assert_eq!(a.ncols(), width, "{name} {kernel}");
            assert_eq!(a, direct.transform(x.view()).unwrap(), "{name} {kernel}");
        }
        // the default: the Gaussian kernel through rfx-sampling's Fourier map, unchanged
        let p = spec.params_from(&[("sigma", RawValue::from(1.5))]).unwrap();
        let z = spec
            .fit(32, &p, FitData::Dim(6), &mut rfx_core::rng_stream(5, name))
            .unwrap();
        let direct = GaussianFeatureParams::new(fourier)
            .dim(32)
            .sigma(1.5)
            .fit(6, &mut rfx_core::rng_stream(5, name))
            .unwrap();
        let survey = SurveyParams::new(sampler, SurveyKernel::Gaussian { sigma: 1.5 })
            .frequencies(16)
            .fit_map(FitData::Dim(6), &mut rfx_core::rng_stream(5, name))
            .unwrap();
        let a = z.transform(x.view()).unwrap();
        assert_eq!(a, direct.transform(x.view()).unwrap(), "{name}");
        // same frequencies: the forms agree to round-off (entries are at most sqrt(2/m) < 1)
        let b = survey.transform(x.view()).unwrap();
        let diff = (&a - &b).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff < 1e-14, "{name}: forms differ by {diff}");
    }
    // a random phase is the Gaussian Fourier form's alone
    let spec = method("rff").unwrap();
    let p = spec
        .params_from(&[
            ("kernel", RawValue::from("arccos1")),
            ("phase", RawValue::from("random")),
        ])
        .unwrap();
    let mut rng = rfx_core::rng_stream(5, "phase");
    assert!(spec.fit(8, &p, FitData::Dim(6), &mut rng).is_err());
    // the table kinds see rff and fastfood as Gaussian-only, whatever their kernel parameter lists
    assert_eq!(table_kernels(spec), &["gaussian"]);
    assert_eq!(
        table_kernels(method("nystrom").unwrap()),
        &["gaussian", "relu-ntk"]
    );
}

/// `lp-rff(noise=stream)` rounds like [`rfx_ternary::LpRff::transform_with_rng`] with the stream the fit
/// leaves (the `trf_memory` kind's LP-RFF: training rows first, then test rows, one stream), bit for bit;
/// each call continues the stream, so a second call on the same rows rounds afresh.
#[test]
fn lp_rff_stream_noise_is_the_direct_rounding() {
    use rfx_core::FitData;
    let x = Array2::from_shape_fn((9, 4), |(i, j)| ((i * 3 + j) % 5) as f64 / 5.0 - 0.3);
    let y = Array2::from_shape_fn((5, 4), |(i, j)| ((i + 2 * j) % 3) as f64 / 3.0 - 0.2);
    let spec = method("lp-rff").unwrap();
    for bits in [1i64, 8] {
        let p = spec
            .params_from(&[
                ("noise", RawValue::from("stream")),
                ("bits", RawValue::from(bits)),
            ])
            .unwrap();
        let z = spec
            .fit(17, &p, FitData::Dim(4), &mut rfx_core::rng_stream(8, "lp"))
            .unwrap();
        let mut rng = rfx_core::rng_stream(8, "lp");
        let rff = rfx_sampling::Rff::params()
            .dim(17)
            .sigma(1.0)
            .output(rfx_sampling::Output::RandomPhase)
            .fit(4, &mut rng)
            .unwrap();
        let lp = rfx_ternary::LpRff::new(rff, bits as u32, 12345).unwrap();
        let (ax, ay) = (
            z.transform(x.view()).unwrap(),
            z.transform(y.view()).unwrap(),
        );
        assert_eq!(
            ax,
            lp.transform_with_rng(x.view(), &mut rng).unwrap(),
            "{bits}"
        );
        assert_eq!(
            ay,
            lp.transform_with_rng(y.view(), &mut rng).unwrap(),
            "{bits}"
        );
        assert_eq!(z.bits_per_feature(), bits as f64);
        if bits == 8 {
            // fresh noise: the same rows again are rounded differently
            assert_ne!(z.transform(x.view()).unwrap(), ax);
        }
    }
}

/// `nystrom(gram=pairwise)` factors `rfx_kernels::GaussianKernel`'s Gram (the `trf_memory` kind's
/// Nyström), bit for bit from the same stream; `gram=zonal` (the default) the Gzk Gram, equal to round-off.
#[test]
fn nystrom_pairwise_gram_is_the_gaussian_kernel_nystrom() {
    use rfx_core::FitData;
    use rfx_solvers::nystrom::{Nystrom, NystromParams};
    let x = Array2::from_shape_fn((30, 5), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.45);
    let spec = method("nystrom").unwrap();
    let fit = |gram: &str| {
        let p = spec
            .params_from(&[
                ("gram", RawValue::from(gram)),
                ("sigma", RawValue::from(1.3)),
            ])
            .unwrap();
        spec.fit(
            12,
            &p,
            FitData::Rows(x.view()),
            &mut rfx_core::rng_stream(3, "ny"),
        )
        .unwrap()
        .transform(x.view())
        .unwrap()
    };
    let direct = Nystrom::fit(
        rfx_kernels::GaussianKernel::new(1.3).unwrap(),
        x.view(),
        &NystromParams::new(12),
        &mut rfx_core::rng_stream(3, "ny"),
    )
    .unwrap();
    let pairwise = fit("pairwise");
    assert_eq!(pairwise, direct.transform(x.view()).unwrap());
    let zonal = fit("zonal");
    assert_eq!(zonal.dim(), pairwise.dim());
    let gram = |z: &Array2<f64>| z.dot(&z.t());
    let diff = (gram(&zonal) - gram(&pairwise))
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        diff < 1e-8,
        "zonal and pairwise Nystrom Grams differ by {diff}"
    );
    let p = spec
        .params_from(&[
            ("gram", RawValue::from("pairwise")),
            ("kernel", RawValue::from("relu-ntk")),
        ])
        .unwrap();
    let mut rng = rfx_core::rng_stream(3, "ny");
    assert!(spec.fit(12, &p, FitData::Rows(x.view()), &mut rng).is_err());
}

/// The survey's `poly2` sketches of $(1 + \langle x, y\rangle)^2$ (the `survey_benchmark` kind's): `tensorsketch`
/// and `trp` with `bias=1` are `rfx_sketches`' TensorSketch and TRP of $[x; 1]$, and
/// `maclaurin(kernel=poly, degree=2)` is Random Maclaurin with the coefficients $(1, 2, 1)$, bit for bit from
/// the same stream.
#[test]
fn poly_sketches_are_the_sketches_of_the_augmented_rows() {
    use rfx_core::{append_bias, FitData};
    use rfx_sketches::{RandomMaclaurin, TensorSketch, Trp};
    let x = Array2::from_shape_fn((12, 5), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.45);
    let aug = append_bias(x.view(), 1.0);
    let registry = |name: &str, given: &[(&str, RawValue)]| {
        let spec = method(name).unwrap();
        let p = spec.params_from(given).unwrap();
        spec.fit(
            24,
            &p,
            FitData::Rows(x.view()),
            &mut rfx_core::rng_stream(4, name),
        )
        .unwrap()
        .transform(x.view())
        .unwrap()
    };
    let rng = |name: &str| rfx_core::rng_stream(4, name);
    let ts = TensorSketch::params()
        .dim(24)
        .degree(2)
        .fit(6, &mut rng("tensorsketch"))
        .unwrap();
    let bias = [("bias", RawValue::from(1.0))];
    assert_eq!(
        registry("tensorsketch", &bias),
        ts.transform(aug.view()).unwrap()
    );
    let trp = Trp::params()
        .dim(24)
        .degree(2)
        .fit(6, &mut rng("trp"))
        .unwrap();
    assert_eq!(registry("trp", &bias), trp.transform(aug.view()).unwrap());
    let rm = RandomMaclaurin::params()
        .dim(24)
        .coefficients(vec![1.0, 2.0, 1.0])
        .fit(5, &mut rng("maclaurin"))
        .unwrap();
    let poly = [
        ("kernel", RawValue::from("poly")),
        ("degree", RawValue::from(2i64)),
    ];
    assert_eq!(
        registry("maclaurin", &poly),
        rm.transform(x.view()).unwrap()
    );
    // the polynomial kernel is not a table kernel: maclaurin stays Gaussian / ReLU-NTK for the tables
    assert_eq!(
        table_kernels(method("maclaurin").unwrap()),
        &["gaussian", "relu-ntk"]
    );
}

/// The `ntk_mse` kind's maps through the registry, bit for bit from the same stream: `grad-rf` and
/// `naive-rf` given the dimension of width $w$ as the budget are the width-$w$ maps (and their
/// [`FeatureMap::feature_gram`] the kernel-level recursions `GradRf::gram`, `NaiveRf::gram`); `ntk-rf` with
/// `sketch_share` $= j/10$ of $m = 10\cdot 2^k$ is `NtkRfParams::han2021(L, m, j 2^k)` (with
/// `sketch=tensorsrht, sampler=gs`: `zandieh2021`).
#[test]
fn ntk_baselines_through_the_registry_are_the_direct_maps() {
    use rfx_core::FitData;
    use rfx_ntk::{GradRf, NaiveRf, NtkRfParams};
    let x = Array2::from_shape_fn((11, 6), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.45);
    let rng = |s: &str| rfx_core::rng_stream(6, s);
    for (depth, w) in [(1usize, 4usize), (2, 8)] {
        let dp = [("depth", RawValue::from(depth as i64))];
        let fit = |name: &str, m: usize| {
            let spec = method(name).unwrap();
            let p = spec.params_from(&dp).unwrap();
            spec.fit(m, &p, FitData::Dim(6), &mut rng(name)).unwrap()
        };
        let grad = GradRf::params().depth(depth).width(w);
        let z = fit("grad-rf", grad.output_dim(6));
        let direct = grad.fit(6, &mut rng("grad-rf")).unwrap();
        assert_eq!(z.dim(), direct.dim());
        assert_eq!(
            z.feature_gram(x.view(), x.view()).unwrap(),
            direct.gram(x.view(), x.view()).unwrap()
        );
        let naive = NaiveRf::params().depth(depth).m0(w).m1(w);
        let dim = naive.output_dim(6).unwrap() as usize;
        // one feature short of width w's dimension: the next narrower network
        assert_eq!(NaiveRf::widest_within(dim - 1, 6, depth), Some(w - 1));
        let z = fit("naive-rf", dim);
        let direct = naive.fit(6, &mut rng("naive-rf")).unwrap();
        assert_eq!(z.dim(), dim);
        let g = z.feature_gram(x.view(), x.view()).unwrap();
        assert_eq!(g, direct.gram(x.view(), x.view()).unwrap());
        // the recursion is the Gram of the materialised features, to round-off
        let f = z.transform(x.view()).unwrap();
        let diff = (&f.dot(&f.t()) - &g)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff < 1e-10, "naive-rf Gram recursion off by {diff}");
        for j in [1usize, 5, 9] {
            let m = 10 * 4;
            let spec = method("ntk-rf").unwrap();
            for srht in [false, true] {
                let mut given = vec![
                    ("depth", RawValue::from(depth as i64)),
                    ("sketch_share", RawValue::from(j as f64 / 10.0)),
                ];
                let direct = if srht {
                    given.push(("sketch", RawValue::from("tensorsrht")));
                    given.push(("sampler", RawValue::from("gs")));
                    NtkRfParams::zandieh2021(depth, m, 4 * j)
                } else {
                    NtkRfParams::han2021(depth, m, 4 * j)
                };
                let p = spec.params_from(&given).unwrap();
                let z = spec
                    .fit(m, &p, FitData::Dim(6), &mut rng("ntk-rf"))
                    .unwrap();
                let direct = direct.fit(6, &mut rng("ntk-rf")).unwrap();
                assert_eq!(
                    z.transform(x.view()).unwrap(),
                    direct.transform(x.view()).unwrap(),
                    "L={depth} j={j} srht={srht}"
                );
            }
        }
    }
    let spec = method("naive-rf").unwrap();
    let p = spec.params_from::<&str>(&[]).unwrap();
    let e = spec
        .fit(6, &p, FitData::Dim(6), &mut rng("small"))
        .err()
        .expect("below d + L");
    assert!(e.to_string().contains("d + L = 7"), "{e}");
}

/// The `cntk` kind's maps through the registry, bit for bit from the same stream: `cntksketch` is
/// `CntkSketch` with internal width $\max(2, $ even floor of $m/\text{sketch\_div})$, `cnn-grad-rf` the
/// three-layer `CnnGradRf` whose parameter count is closest to $m$ (the kind's former constructions, written
/// out here); their declared widths are their dimensions; the kernel `cntk` is `Cntk`.
#[test]
fn cntk_maps_through_the_registry_are_the_direct_maps() {
    use rfx_core::FitData;
    use rfx_ntk::{CnnGradRf, Cntk, CntkSketch};
    let side = 6;
    let x = Array2::from_shape_fn((5, side * side), |(i, j)| {
        ((i * 7 + j * 5) % 11) as f64 / 5.0 - 1.0
    });
    let rng = |s: &str| rfx_core::rng_stream(8, s);
    let image = |side: usize| {
        vec![
            ("height", RawValue::from(side)),
            ("width", RawValue::from(side)),
            ("channels", RawValue::from(1usize)),
            ("filter", RawValue::from(3usize)),
        ]
    };
    let spec = method("cntksketch").unwrap();
    for (m, depth, degree, div, batch) in
        [(32usize, 2usize, 2usize, 4usize, 2usize), (40, 3, 3, 3, 8)]
    {
        let mut given = image(side);
        given.extend([
            ("depth", RawValue::from(depth)),
            ("degree", RawValue::from(degree)),
            ("sketch_div", RawValue::from(div)),
            ("batch", RawValue::from(batch)),
        ]);
        let p = spec.params_from(&given).unwrap();
        let z = spec
            .fit(m, &p, FitData::Dim(side * side), &mut rng("cntksketch"))
            .unwrap();
        let direct = CntkSketch::params()
            .depth(depth)
            .filter(3)
            .shape(side, side, 1)
            .degree(degree)
            .width(((m / div) & !1).max(2))
            .dim(m)
            .batch(batch)
            .fit(&mut rng("cntksketch"))
            .unwrap();
        assert_eq!((spec.out_dim)(m, 0, &p), m);
        assert_eq!(z.dim(), m);
        assert_eq!(
            z.transform(x.view()).unwrap(),
            direct.transform(x.view()).unwrap(),
            "m={m} L={depth}"
        );
    }
    let spec = method("cnn-grad-rf").unwrap();
    let mut given = image(side);
    given.push(("layers", RawValue::from(3usize)));
    let p = spec.params_from(&given).unwrap();
    for m in [60usize, 512, 1024] {
        let base = CnnGradRf::params().shape(side, side, 1).filter(3).layers(3);
        let dims = |w: usize| base.clone().width(w).output_dim();
        let mut w = 1;
        while dims(w + 1) <= m || dims(w + 1).abs_diff(m) < dims(w).abs_diff(m) {
            w += 1;
        }
        let z = spec
            .fit(m, &p, FitData::Dim(side * side), &mut rng("cnn-grad-rf"))
            .unwrap();
        let direct = base.width(w).fit(&mut rng("cnn-grad-rf")).unwrap();
        assert_eq!(z.dim(), direct.dim());
        assert_eq!((spec.out_dim)(m, 0, &p), z.dim(), "m={m}");
        assert_eq!(
            z.transform(x.view()).unwrap(),
            direct.transform(x.view()).unwrap(),
            "m={m}"
        );
    }
    let spec = kernel("cntk").unwrap();
    let p = spec
        .params_from(&[
            ("depth", RawValue::from(3usize)),
            ("filter", RawValue::from(3usize)),
            ("height", RawValue::from(side)),
            ("width", RawValue::from(side)),
            ("channels", RawValue::from(1usize)),
        ])
        .unwrap();
    let k = spec.build(&p).unwrap();
    let direct = Cntk::new(3, 3, side, side, 1).unwrap();
    assert_eq!(
        k.gram(x.view(), x.view()).unwrap(),
        direct.gram(x.view(), x.view()).unwrap()
    );
}

/// The image shape of the convolutional maps: an unset height and width are the most nearly square
/// $d_1 \le d_2$ with $d_1 d_2 c = d$ (the same map as the explicit shape); shapes that do not fit $d$ are
/// refused with the parameter named.
#[test]
fn convolutional_maps_infer_or_check_the_image_shape() {
    use rfx_core::FitData;
    let rng = || rfx_core::rng_stream(9, "shape");
    for name in ["cntksketch", "cnn-grad-rf"] {
        let spec = method(name).unwrap();
        for (d, c, h, w) in [
            (36usize, 1usize, 6usize, 6usize),
            (12, 1, 3, 4),
            (5, 1, 1, 5),
            (36, 2, 3, 6),
        ] {
            let x = Array2::from_shape_fn((3, d), |(i, j)| ((i * 3 + j) % 5) as f64 / 2.0 - 1.0);
            let channels = [("channels", RawValue::from(c))];
            let p = spec.params_from(&channels).unwrap();
            let z = spec.fit(16, &p, FitData::Dim(d), &mut rng()).unwrap();
            let explicit = spec
                .params_from(&[
                    ("channels", RawValue::from(c)),
                    ("height", RawValue::from(h)),
                    ("width", RawValue::from(w)),
                ])
                .unwrap();
            let e = spec
                .fit(16, &explicit, FitData::Dim(d), &mut rng())
                .unwrap();
            assert_eq!(
                z.transform(x.view()).unwrap(),
                e.transform(x.view()).unwrap(),
                "{name} d={d} c={c}"
            );
            // height alone, width alone
            for k in ["height", "width"] {
                let v = if k == "height" { h } else { w };
                let p = spec
                    .params_from(&[("channels", RawValue::from(c)), (k, RawValue::from(v))])
                    .unwrap();
                let z1 = spec.fit(16, &p, FitData::Dim(d), &mut rng()).unwrap();
                assert_eq!(
                    z1.transform(x.view()).unwrap(),
                    e.transform(x.view()).unwrap()
                );
            }
        }
        let bad = |given: &[(&str, RawValue)]| {
            let p = spec.params_from(given).unwrap();
            spec.fit(16, &p, FitData::Dim(36), &mut rng())
                .err()
                .expect("refused")
                .to_string()
        };
        assert!(bad(&[("height", RawValue::from(5usize))]).contains("height"));
        assert!(bad(&[("channels", RawValue::from(5usize))]).contains("channels"));
        let p = spec
            .params_from(&[("filter", RawValue::from(2usize))])
            .unwrap();
        assert!(
            spec.fit(16, &p, FitData::Dim(36), &mut rng()).is_err(),
            "{name}: even filter"
        );
    }
}

/// `ternary_fit` is the `ternary` method as a typed fitter: its map is the boxed method's (same stream) and
/// the `trf_ridge_gamma` kind's former construction (thresholds solved at $\hat\tau$ of the fitting rows,
/// `TernaryParams::fit`), whose bit-packed codes and popcount Grams it hands out.
#[test]
fn ternary_fit_hands_out_the_typed_map_of_the_method() {
    use rfx_core::{Fit, FitData};
    use rfx_ternary::{estimate_tau, solve_thresholds, Activation, TernaryParams};
    let x = Array2::from_shape_fn((40, 8), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 7.0 - 0.45);
    // tau_hat = 0.5 (trf_ridge_gamma's default): feasible for cos-sin
    let x = &x * (0.5 / estimate_tau(x.view()).unwrap()).sqrt();
    let spec = method("ternary").unwrap();
    for eps in [0.0, 0.5, 0.9] {
        let p = spec
            .params_from(&[
                ("activation", RawValue::from("cos-sin")),
                ("sparsity", RawValue::from(eps)),
            ])
            .unwrap();
        let rng = || rfx_core::rng_stream(10, "ternary");
        let typed = ternary_fit(100, &p)
            .unwrap()
            .fit_map(FitData::Rows(x.view()), &mut rng())
            .unwrap();
        assert_eq!(typed.input_scale(), 1.0);
        let boxed = spec
            .fit(100, &p, FitData::Rows(x.view()), &mut rng())
            .unwrap();
        assert_eq!(
            typed.transform(x.view()).unwrap(),
            boxed.transform(x.view()).unwrap()
        );
        let th = solve_thresholds(&Activation::CosSin, estimate_tau(x.view()).unwrap())
            .unwrap()
            .exact()
            .unwrap();
        let direct = TernaryParams::new(100)
            .sparsity(eps)
            .fit(8, th, &mut rng())
            .unwrap();
        assert_eq!(typed.thresholds(), direct.thresholds());
        let (a, b) = (
            typed.transform_packed(x.view()).unwrap(),
            direct.transform_packed(x.view()).unwrap(),
        );
        assert_eq!(a, b, "eps={eps}");
        assert_eq!(a.gram(), b.gram());
    }
    // tau_hat = 8 is infeasible for cos-sin: Algorithm 1 rescales the inputs (the kind refuses such cells)
    let p = spec
        .params_from(&[("activation", RawValue::from("cos-sin"))])
        .unwrap();
    let far = &x * 4.0;
    let f = ternary_fit(16, &p)
        .unwrap()
        .fit_map(FitData::Rows(far.view()), &mut rfx_core::rng_stream(1, "t"))
        .unwrap();
    assert!(f.input_scale() < 1.0);
    let p = spec.params_from::<&str>(&[]).unwrap();
    assert!(ternary_fit(0, &p)
        .unwrap()
        .fit_map(FitData::Rows(x.view()), &mut rfx_core::rng_stream(1, "t"))
        .is_err());
}
