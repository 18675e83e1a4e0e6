//! Figure-1 properties (research notes §10.1, §11 item 15): sup-norm errors of truncated Taylor and
//! Gegenbauer series of exp(2t) and of the two-layer ReLU NTK on a 20,001-point grid of [−1, 1].

use rfx_gzk::coefficients::exp_gegenbauer_coefficients;
use rfx_gzk::gegenbauer::Basis;
use rfx_gzk::harmonics::alpha;
use rfx_gzk::series::{
    grid_point, sup_distance, sup_error, ScalarFunction, Series, SUP_GRID_POINTS,
};
use rfx_kernels::relu_ntk;

const EXP2: ScalarFunction = ScalarFunction::Exp { beta: 2.0 };
const NTK2: ScalarFunction = ScalarFunction::ReluNtk { depth: 2 };
const FIG1_BASES: [Basis; 5] = [
    Basis::Gegenbauer(2),
    Basis::Gegenbauer(4),
    Basis::Gegenbauer(8),
    Basis::Gegenbauer(32),
    Basis::Monomial,
];

/// Sup errors of the degree-q truncations, q = 0..=max_q, for one function and basis. The coefficients do not
/// depend on the truncation degree, so they are computed once.
fn sup_errors(f: ScalarFunction, basis: Basis, max_q: usize) -> Vec<f64> {
    let c = f.coefficients(basis, max_q).unwrap();
    (0..=max_q)
        .map(|q| {
            f.sup_error(
                &Series::new(basis, c[..=q].to_vec()).unwrap(),
                SUP_GRID_POINTS,
            )
        })
        .collect()
}

#[test]
fn ordering_chebyshev_then_gegenbauer_then_taylor() {
    // sup-error(d=2) < d=4 < d=8 < d=32 < Taylor: exp(2t) for degrees 0..=12, the NTK for 0..=15.
    for (f, max_q) in [(EXP2, 12usize), (NTK2, 15)] {
        let errs: Vec<Vec<f64>> = FIG1_BASES
            .iter()
            .map(|&b| sup_errors(f, b, max_q))
            .collect();
        for (k, pair) in errs.windows(2).enumerate() {
            for (q, (lo, hi)) in pair[0].iter().zip(&pair[1]).enumerate() {
                assert!(
                    lo < hi,
                    "{} q={q}: {} error {lo:e} !< {} error {hi:e}",
                    f.name(),
                    FIG1_BASES[k].label(),
                    FIG1_BASES[k + 1].label(),
                );
            }
        }
        for q in [0usize, 5, 10, max_q] {
            let row: Vec<String> = FIG1_BASES
                .iter()
                .zip(&errs)
                .map(|(b, e)| format!("{}={:.3e}", b.label(), e[q]))
                .collect();
            eprintln!("{} q={q}: {}", f.name(), row.join(" "));
        }
    }
}

#[test]
fn chebyshev_error_of_exp_at_degree_10() {
    let e = EXP2.sup_error(
        &EXP2.series(Basis::Gegenbauer(2), 10).unwrap(),
        SUP_GRID_POINTS,
    );
    assert!((e / 5.9e-8 - 1.0).abs() < 0.1, "{e:e}");
}

#[test]
fn sup_error_of_positive_expansions_is_attained_at_one() {
    // If all c_ℓ ≥ 0 then, since |φ_ℓ| ≤ 1 on [−1, 1] and φ_ℓ(1) = 1,
    //   |f(t) − s_q(t)| ≤ Σ_{ℓ>q} c_ℓ = f(1) − s_q(1),
    // so the sup error equals the error at t = 1 (a grid point). For exp(2t) in the Taylor basis this is
    // the identity sup error = Σ_{j>q} 2^j/j!. Gegenbauer coefficients of exp(βt), β > 0, are positive
    // (closed form), and those of the NTK are ≥ 0 on every sphere (Schoenberg), so the identity holds for
    // every basis. Tolerance: rounding in f(1) − s_q(1) (a few ulps of f(1) ≤ e²).
    for f in [EXP2, NTK2] {
        for basis in [
            Basis::Gegenbauer(2),
            Basis::Gegenbauer(3),
            Basis::Gegenbauer(8),
            Basis::Monomial,
        ] {
            let c = f.coefficients(basis, 15).unwrap();
            assert!(
                c.iter().all(|&v| v >= 0.0),
                "{} {}: negative coefficient",
                f.name(),
                basis.label()
            );
            for q in 0..=15 {
                let s = Series::new(basis, c[..=q].to_vec()).unwrap();
                let sup = f.sup_error(&s, SUP_GRID_POINTS);
                let at_one = f.eval(1.0) - s.eval(1.0);
                assert!(
                    (sup - at_one).abs() < 1e-14,
                    "{} {} q={q}: {sup:e} vs {at_one:e}",
                    f.name(),
                    basis.label()
                );
            }
        }
    }
    // The Taylor tail of exp(2t) in closed form: Σ_{j>q} 2^j/j!, summed from the small end.
    for q in 0..=15usize {
        let mut term = 1.0f64;
        let mut tail = 0.0;
        let mut terms = Vec::new();
        for j in 1..=60usize {
            term *= 2.0 / j as f64;
            if j > q {
                terms.push(term);
            }
        }
        for t in terms.iter().rev() {
            tail += t;
        }
        let sup = EXP2.sup_error(&EXP2.series(Basis::Monomial, q).unwrap(), SUP_GRID_POINTS);
        assert!(
            (sup - tail).abs() < 4.0 * f64::EPSILON * 2f64.exp(),
            "q={q}: {sup:e} vs {tail:e}"
        );
    }
}

#[test]
fn gegenbauer_series_reproduces_exp() {
    // Degree 25: the tail Σ_{ℓ>25} c_ℓ ≈ c_26 ~ α_{26,d} (β/2)^26 Γ(d/2)/Γ(26+d/2) < 1e−20 for d ≤ 32; what
    // remains is rounding of the Clenshaw sum (a few ulps of Σ|c_ℓ| = e²).
    for d in [2usize, 3, 4, 8, 32] {
        let s = Series::new(
            Basis::Gegenbauer(d),
            exp_gegenbauer_coefficients(2.0, d, 25).unwrap(),
        )
        .unwrap();
        let e = sup_error(|t: f64| (2.0 * t).exp(), &s, SUP_GRID_POINTS);
        assert!(e < 1e-12, "d={d}: {e:e}");
        // The quadrature-based constructor agrees up to rounding in the quadrature sums, which is amplified by
        // α_{ℓ,d}: |Δc_ℓ| ≲ ε ‖f‖ √(α_{ℓ,d} r_d) with ‖f‖ ≤ e² √(1/r_d) (see the coefficient tests); this is the
        // instability for d ≥ 32 and high ℓ that App. J.3 reports (α_{25,32} ≈ 1.6e15).
        let sq = Series::gegenbauer_of(|t: f64| (2.0 * t).exp(), d, 25, 40).unwrap();
        let r = rfx_gzk::harmonics::sphere_area_ratio(d);
        let bound: f64 = (0..=25)
            .map(|l| 64.0 * f64::EPSILON * 2f64.exp() * alpha(l, d).sqrt())
            .sum();
        let dist = sup_distance(|t| s.eval(t), |t| sq.eval(t), 2001);
        assert!(
            dist < 1e-13 + bound,
            "d={d}: {dist:e} (bound {bound:e}, r={r})"
        );
    }
}

#[test]
fn ntk_series_converge_at_the_predicted_algebraic_rates() {
    // K^(2) has √(1∓t) behaviour at ±1. In θ = arccos t that is a corner (|θ|-type kink), so the Chebyshev
    // coefficients decay like ℓ^{-2} and the tail Σ_{ℓ>q} c_ℓ (= sup error, see above) like 1/q: doubling q
    // halves the error. The Taylor coefficients of (1−t)^{1/2} decay like j^{-3/2}, so the Taylor tail decays
    // like q^{-1/2}: doubling q multiplies the error by 1/√2 ≈ 0.71. Measured: Chebyshev 5.82e−2 → 2.96e−2
    // (q = 10 → 20), Taylor 2.56e−1 → 1.76e−1.
    let cheb = sup_errors(NTK2, Basis::Gegenbauer(2), 20);
    let taylor = sup_errors(NTK2, Basis::Monomial, 20);
    for errs in [&cheb, &taylor] {
        assert!(
            errs.windows(2).all(|w| w[1] < w[0]),
            "errors decrease: {errs:?}"
        );
    }
    let rc = cheb[20] / cheb[10];
    let rt = taylor[20] / taylor[10];
    assert!((0.45..0.55).contains(&rc), "Chebyshev rate {rc}");
    assert!((0.65..0.76).contains(&rt), "Taylor rate {rt}");
    // Bound at the experiment's degree 15 (measured 3.97e−2 and 2.06e−1).
    assert!(
        cheb[15] < 0.05 && taylor[15] < 0.25,
        "{} {}",
        cheb[15],
        taylor[15]
    );
    // The full Gegenbauer series does converge to the function: degree 400 Chebyshev (coefficients from the
    // angular rule), error ≈ 20/400 times the degree-20 error.
    let c = NTK2.gegenbauer_coefficients(2, 400).unwrap();
    let s = Series::new(Basis::Gegenbauer(2), c).unwrap();
    let e400 = sup_error(|t| relu_ntk(2, t), &s, SUP_GRID_POINTS);
    assert!(
        e400 < 2.0 * cheb[20] * 20.0 / 400.0 && e400 > 0.25 * cheb[20] * 20.0 / 400.0,
        "{e400:e}"
    );
}

#[test]
fn grid_is_symmetric_with_exact_endpoints() {
    let n = SUP_GRID_POINTS;
    assert_eq!(grid_point(0, n), -1.0);
    assert_eq!(grid_point(n - 1, n), 1.0);
    assert_eq!(grid_point(n / 2, n), 0.0);
    for i in 0..n {
        assert_eq!(grid_point(i, n), -grid_point(n - 1 - i, n));
    }
    // NaN propagates instead of being ignored by the maximum.
    assert!(sup_distance(|t| if t == 0.5 { f64::NAN } else { t }, |t| t, 5).is_nan());
    assert_eq!(sup_distance(|t| t, |t| -t, 1), 2.0);
}
