//! Gegenbauer and Taylor coefficients of one-dimensional functions (paper Eq. 7, research notes §2.5).

use rfx_core::{Result, RfxError};

use crate::gegenbauer::Basis;
use crate::harmonics::{alpha, ln_alpha, sphere_area_ratio};
use crate::quadrature::{gauss_gegenbauer, Quadrature};

fn check_d(d: usize) -> Result<()> {
    Basis::Gegenbauer(d).validate()
}

/// Gegenbauer coefficients $c_0, \dots, c_q$ of $f$ on $[-1,1]$ for dimension $d$ (paper Eq. 7):
/// $$c_\ell = \alpha_{\ell,d}\thinspace\frac{|\mathbb{S}^{d-2}|}{|\mathbb{S}^{d-1}|}\int_{-1}^{1} f(t)\thinspace P_d^\ell(t)\thinspace
///   (1-t^2)^{\frac{d-3}{2}}\thinspace dt,\qquad f(t) = \sum_{\ell \ge 0} c_\ell P_d^\ell(t),$$
/// computed with the `nodes`-point Gauss–Jacobi rule for the weight $(1-t^2)^{(d-3)/2}$
/// ([`gauss_gegenbauer`]), which is exact when $f$ is a polynomial of degree $\le 2\thinspace\text{nodes} - 1 - q$.
/// For analytic $f$ the error decays geometrically in `nodes`; for $f$ with $\sqrt{1 \mp t}$ endpoint behaviour
/// (the ReLU NTK) only algebraically (for $d = 2$ like $\text{nodes}^{-2}$); use
/// [`gegenbauer_coefficients_angular`] for those. Rounding in the quadrature sum is amplified by
/// $\alpha_{\ell,d}$: the absolute error is about $\varepsilon\thinspace\Vert f\Vert\sqrt{\alpha_{\ell,d}}$ (weighted $L^2$ norm),
/// e.g. $\sim10^{-10}$ for $d = 32$, $\ell = 15$ — the instability App. J.3 reports for $d \ge 32$, $\ell \ge 16$.
///
/// Errors (`InvalidParameter`): $d < 2$, `nodes == 0`, or $f$ not finite at a node.
pub fn gegenbauer_coefficients<F: Fn(f64) -> f64>(
    f: F,
    d: usize,
    q: usize,
    nodes: usize,
) -> Result<Vec<f64>> {
    check_d(d)?;
    let rule = gauss_gegenbauer(nodes, d)?;
    gegenbauer_coefficients_with(f, d, q, &rule)
}

/// [`gegenbauer_coefficients`] with a precomputed rule (reuse it across functions and degrees; building a
/// 4000-node rule costs ~0.1 s). The rule must be the Gegenbauer rule of the same $d$, i.e. Gauss–Jacobi with
/// $a = b = (d-3)/2$; anything else is an `InvalidParameter` error.
pub fn gegenbauer_coefficients_with<F: Fn(f64) -> f64>(
    f: F,
    d: usize,
    q: usize,
    rule: &Quadrature,
) -> Result<Vec<f64>> {
    check_d(d)?;
    let a = (d as f64 - 3.0) / 2.0;
    if rule.exponents() != (a, a) {
        return Err(RfxError::invalid(
            "rule",
            format!("Gauss-Jacobi with (a, b) = {:?}", rule.exponents()),
            format!("the Gegenbauer rule of d = {d}, (a, b) = ({a}, {a})"),
        ));
    }
    let basis = Basis::Gegenbauer(d);
    let mut sums = vec![0.0; q + 1];
    let mut p = vec![0.0; q + 1];
    for (&t, &w) in rule.nodes().iter().zip(rule.weights()) {
        let ft = f(t);
        if !ft.is_finite() {
            return Err(RfxError::invalid(
                "f(t)",
                format!("{ft} at t = {t}"),
                "finite values on [-1, 1]",
            ));
        }
        basis.eval_all(t, &mut p);
        let wf = w * ft;
        for (s, &pl) in sums.iter_mut().zip(&p) {
            *s += wf * pl;
        }
    }
    let ratio = sphere_area_ratio(d);
    Ok(sums
        .iter()
        .enumerate()
        .map(|(l, s)| alpha(l, d) * ratio * s)
        .collect())
}

/// Gegenbauer coefficients by Gauss–Legendre quadrature in the angle $\theta = \arccos t$:
/// $$c_\ell = \alpha_{\ell,d}\thinspace\frac{|\mathbb{S}^{d-2}|}{|\mathbb{S}^{d-1}|}\int_0^\pi f(\cos\theta)\thinspace
///   P_d^\ell(\cos\theta)\thinspace\sin^{d-2}\theta\thinspace d\theta,$$
/// with the `nodes`-point Gauss–Legendre rule mapped to $[0, \pi]$.
///
/// Use this for functions with $(1 \mp t)^{k+1/2}$ endpoint behaviour such as the ReLU NTK: in $\theta$ such
/// terms become analytic ($\sqrt{1-\cos\theta} = \sqrt2\sin(\theta/2)$), so the error decays geometrically in
/// `nodes`, whereas Gauss–Jacobi in $t$ ([`gegenbauer_coefficients`]) converges only algebraically
/// (for $d = 2$ like $n^{-2}$: about $7\cdot10^{-8}$ at 2000 nodes). It is not exact for polynomials, but for
/// analytic $f$ it converges geometrically as well.
///
/// Errors (`InvalidParameter`): $d < 2$, `nodes == 0`, or $f$ not finite at a node.
pub fn gegenbauer_coefficients_angular<F: Fn(f64) -> f64>(
    f: F,
    d: usize,
    q: usize,
    nodes: usize,
) -> Result<Vec<f64>> {
    check_d(d)?;
    let rule = crate::quadrature::gauss_legendre(nodes)?;
    let basis = Basis::Gegenbauer(d);
    let half_pi = std::f64::consts::FRAC_PI_2;
    let mut sums = vec![0.0; q + 1];
    let mut p = vec![0.0; q + 1];
    for (&x, &w) in rule.nodes().iter().zip(rule.weights()) {
        let theta = half_pi * (1.0 + x);
        let t = theta.cos();
        let ft = f(t);
        if !ft.is_finite() {
            return Err(RfxError::invalid(
                "f(t)",
                format!("{ft} at t = {t}"),
                "finite values on [-1, 1]",
            ));
        }
        basis.eval_all(t, &mut p);
        let wf = half_pi * w * theta.sin().powi(d as i32 - 2) * ft;
        for (s, &pl) in sums.iter_mut().zip(&p) {
            *s += wf * pl;
        }
    }
    let ratio = sphere_area_ratio(d);
    Ok(sums
        .iter()
        .enumerate()
        .map(|(l, s)| alpha(l, d) * ratio * s)
        .collect())
}

/// Closed-form Gegenbauer coefficients of $f(t) = e^{\beta t}$ (research notes §2.5):
/// $$c_\ell = \alpha_{\ell,d}\thinspace\Gamma(d/2)\sum_{i \ge 0}\frac{\beta^{\ell+2i}}{2^\ell\thinspace4^i\thinspace i!\thinspace\Gamma(i+\ell+d/2)}
///   = \alpha_{\ell,d}\thinspace\Gamma(d/2)\thinspace(2/\beta)^{d/2-1} I_{\ell+d/2-1}(\beta).$$
/// (It follows from Eq. 29, $t^j = \sum_\ell \mu_\ell^j P_d^\ell$, with the Taylor coefficients $\beta^j/j!$;
/// $d = 2$ gives the Chebyshev coefficients $I_0(\beta)$, $2I_\ell(\beta)$.)
///
/// Evaluated without Bessel functions or large gamma values: the $i = 0$ term is
/// $\alpha_{\ell,d}(\beta/2)^\ell/\prod_{j=0}^{\ell-1}(d/2+j)$ (in log space), and successive terms have the
/// ratio $\frac{\beta^2/4}{(i+1)(i+\ell+d/2)}$; the positive terms are summed until they fall below
/// $10^{-17}$ of the sum. Relative accuracy is a few ulps for every $\ell$, including tiny high-degree
/// coefficients that quadrature can only resolve to absolute accuracy.
///
/// Errors (`InvalidParameter`): $d < 2$ or $\beta$ not finite; `Numerical` if a coefficient overflows
/// ($|\beta| \gtrsim 700$).
pub fn exp_gegenbauer_coefficients(beta: f64, d: usize, q: usize) -> Result<Vec<f64>> {
    check_d(d)?;
    if !beta.is_finite() {
        return Err(RfxError::invalid("beta", beta, "a finite real number"));
    }
    let half_d = d as f64 / 2.0;
    let mut out = Vec::with_capacity(q + 1);
    let mut ln_prod = 0.0; // Σ_{j<ℓ} ln(d/2 + j)
    for l in 0..=q {
        let lf = l as f64;
        let c = if beta == 0.0 {
            if l == 0 {
                1.0
            } else {
                0.0
            }
        } else {
            let ln_first = ln_alpha(l, d) + lf * (beta.abs() / 2.0).ln() - ln_prod;
            let x = beta * beta / 4.0;
            let (mut term, mut sum) = (1.0f64, 1.0f64);
            let mut i = 0.0;
            loop {
                term *= x / ((i + 1.0) * (i + lf + half_d));
                sum += term;
                i += 1.0;
                if !sum.is_finite() {
                    break;
                }
                // Terms decrease once (i+1)(i+ℓ+d/2) > x; stop when negligible.
                if term < 1e-17 * sum && (i + 1.0) * (i + lf + half_d) > 2.0 * x {
                    break;
                }
            }
            let sign = if beta < 0.0 && l % 2 == 1 { -1.0 } else { 1.0 };
            sign * (ln_first + sum.ln()).exp()
        };
        if !c.is_finite() {
            return Err(RfxError::Numerical(format!(
                "Gegenbauer coefficient {l} of exp({beta} t) for d = {d} overflows"
            )));
        }
        out.push(c);
        ln_prod += (half_d + lf).ln();
    }
    Ok(out)
}

/// Taylor coefficients $\beta^j/j!$, $j = 0,\dots,q$, of $e^{\beta t}$ at $t = 0$ (the $d = \infty$ limit of
/// [`exp_gegenbauer_coefficients`]). Errors (`InvalidParameter`) if $\beta$ is not finite.
pub fn exp_taylor_coefficients(beta: f64, q: usize) -> Result<Vec<f64>> {
    if !beta.is_finite() {
        return Err(RfxError::invalid("beta", beta, "a finite real number"));
    }
    let mut c = Vec::with_capacity(q + 1);
    let mut v = 1.0;
    for j in 0..=q {
        if j > 0 {
            v *= beta / j as f64;
        }
        c.push(v);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_kernels::relu_ntk;

    #[test]
    fn exp_quadrature_equals_closed_form() {
        // Rounding in Σ_i w_i f(t_i) P_ℓ(t_i) is ~ε Σ|w f P| ≤ ε ‖f‖ ‖P_ℓ‖ (Cauchy–Schwarz in the weighted L²)
        // with ‖P_ℓ‖² = 1/(α_ℓ r_d), r_d = |S^{d−2}|/|S^{d−1}| (Eq. 3); multiplied by α_ℓ r_d this gives an
        // absolute error ~ ε ‖f‖ √(α_ℓ r_d), which grows with α_{ℓ,d} (α_{20,32} ≈ 5e12) and with e^{|β|}.
        // For the experiment's function exp(2t) (and β = 1/2) at ℓ ≤ 15 we require 1e−10; otherwise the bound
        // with a safety factor 64.
        let mut worst = 0.0f64;
        for d in [2usize, 3, 4, 9, 32] {
            let r = sphere_area_ratio(d);
            for beta in [0.5, 2.0, -2.0, 5.0] {
                let quad = gegenbauer_coefficients(|t: f64| (beta * t).exp(), d, 20, 60).unwrap();
                let closed = exp_gegenbauer_coefficients(beta, d, 20).unwrap();
                let norm_f = (2.0 * beta).abs().exp().sqrt() / r.sqrt(); // ‖f‖ ≤ e^{|β|} √(∫w)
                for (l, (a, b)) in quad.iter().zip(&closed).enumerate() {
                    let err = (a - b).abs();
                    let strict = l <= 15 && beta.abs() <= 2.0;
                    let tol = if strict {
                        1e-10
                    } else {
                        1e-10 + 64.0 * f64::EPSILON * norm_f * (alpha(l, d) * r).sqrt()
                    };
                    if strict {
                        worst = worst.max(err);
                    }
                    assert!(
                        err < tol,
                        "d={d} beta={beta} l={l}: {a} vs {b} (tol {tol:e})"
                    );
                }
            }
        }
        assert!(worst > 0.0, "the comparison is not vacuous");
        eprintln!("exp quadrature vs closed form, worst |Δc| for ℓ ≤ 15, |β| ≤ 2: {worst:e}");
    }

    #[test]
    fn exp_closed_form_reference_values() {
        // Research notes §2.5, exp(2t).
        let refs: [(usize, [f64; 6]); 3] = [
            (
                2,
                [
                    2.2795853023,
                    3.1812737093,
                    1.3778968954,
                    0.4254799185,
                    0.10145714,
                    0.0196513586,
                ],
            ),
            (
                3,
                [
                    1.8134302039,
                    2.9231482307,
                    1.7592804428,
                    0.6631976554,
                    0.1823153478,
                    0.0394333313,
                ],
            ),
            (
                4,
                [
                    1.5906368546,
                    2.7557937908,
                    1.9146596332,
                    0.8116571197,
                    0.2456419831,
                    0.0576062411,
                ],
            ),
        ];
        for (d, want) in refs {
            let c = exp_gegenbauer_coefficients(2.0, d, 5).unwrap();
            for (l, (g, w)) in c.iter().zip(&want).enumerate() {
                // Reference values are rounded to 10 decimals (8 for one of them).
                assert!((g - w).abs() < 6e-9, "d={d} l={l}: {g} vs {w}");
            }
        }
        // d = 2 is the Chebyshev expansion: c_0 = I_0(2) = 2.2795853023360673 (Abramowitz & Stegun table).
        let c = exp_gegenbauer_coefficients(2.0, 2, 0).unwrap();
        assert!((c[0] - 2.279_585_302_336_067).abs() < 1e-15);
        // d = 3 has c_0 = sinh(β)/β exactly (the mean of e^{βt} over [−1,1]).
        let c = exp_gegenbauer_coefficients(2.0, 3, 0).unwrap();
        assert!((c[0] - 2f64.sinh() / 2.0).abs() < 1e-15);
        assert_eq!(
            exp_gegenbauer_coefficients(0.0, 5, 3).unwrap(),
            vec![1.0, 0.0, 0.0, 0.0]
        );
    }

    #[test]
    fn exp_series_sums_to_the_function() {
        // Σ c_ℓ P_ℓ(t) = e^{βt}; at t = 1, Σ c_ℓ = e^β exactly (P(1) = 1). All terms positive for β > 0.
        for d in [2usize, 3, 7, 42] {
            let c = exp_gegenbauer_coefficients(2.0, d, 40).unwrap();
            let s: f64 = c.iter().sum();
            assert!((s / 2f64.exp() - 1.0).abs() < 1e-14, "d={d}");
        }
    }

    #[test]
    fn ntk_coefficients_match_research_values() {
        // Research notes §5.3 (computed there by Gauss–Jacobi in t with 2000 nodes).
        let d3 = [
            0.9302519316,
            1.1123495625,
            0.5368378563,
            0.1305085403,
            0.0822881952,
            0.0336365174,
            0.0321796441,
            0.0161416322,
        ];
        let d2 = [1.0825051074, 1.1755788459, 0.4417209348, 0.0974963861];
        let ntk = |t| relu_ntk(2, t);
        let c3 = gegenbauer_coefficients_angular(ntk, 3, 7, 400).unwrap();
        for (g, w) in c3.iter().zip(&d3) {
            assert!((g - w).abs() < 1e-8, "d=3: {g} vs {w}");
        }
        // d = 2: Gauss–Chebyshev in t converges like n^{-2} for this √(1∓t) behaviour, so the 2000-node
        // reference values carry errors up to 7.3e−8. The same 2000-node rule reproduces them to 1e−9 ...
        let c2_2000 = gegenbauer_coefficients(ntk, 2, 3, 2000).unwrap();
        for (g, w) in c2_2000.iter().zip(&d2) {
            assert!(
                (g - w).abs() < 1e-9,
                "d=2, 2000 Chebyshev nodes: {g} vs {w}"
            );
        }
        // ... while the angular rule (geometric convergence) differs from them by 3e−8 .. 8e−8.
        let c2 = gegenbauer_coefficients_angular(ntk, 2, 3, 400).unwrap();
        for (g, w) in c2.iter().zip(&d2) {
            let diff = (g - w).abs();
            assert!(diff > 2e-8 && diff < 1e-7, "d=2: {g} vs {w}");
        }
        // Convergence of the Chebyshev rule towards the angular values: error ∝ n^{-2}, ratio ≈ 4 per doubling.
        let e = |n: usize| {
            let c = gegenbauer_coefficients(ntk, 2, 3, n).unwrap();
            c.iter()
                .zip(&c2)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let (e1, e2) = (e(500), e(1000));
        assert!(
            e1 / e2 > 3.5 && e1 / e2 < 4.5,
            "n^-2 convergence: {e1:e} -> {e2:e}"
        );
        // K^(1), d = 3: ½, 1, 25/64, 0, 3/64, 0. K^(1)(t) = t + (2t·arcsin t + √(1−t²))/π is t plus an even
        // function, so odd coefficients of degree ≥ 3 vanish.
        let c = gegenbauer_coefficients_angular(|t| relu_ntk(1, t), 3, 5, 400).unwrap();
        let want = [0.5, 1.0, 25.0 / 64.0, 0.0, 3.0 / 64.0, 0.0];
        for (l, (g, w)) in c.iter().zip(&want).enumerate() {
            assert!((g - w).abs() < 1e-14, "K1 l={l}: {g} vs {w}");
        }
    }

    #[test]
    fn angular_rule_converges_geometrically_for_the_ntk() {
        // Differences between 50, 100 and 400 angular nodes are at rounding level (measured ≤ 1e−13 for
        // d ≤ 8; for d = 32 the amplification α_{ℓ,d}·ε of quadrature rounding gives ~1e−10, see
        // exp_quadrature_equals_closed_form), and agree with Gauss–Jacobi in t at 8000 nodes for d = 4
        // (algebraic convergence there is fast enough: measured 3e−14).
        for d in [2usize, 3, 4, 8, 32] {
            let c400 = gegenbauer_coefficients_angular(|t| relu_ntk(2, t), d, 15, 400).unwrap();
            let tol = if d == 32 { 5e-10 } else { 1e-12 };
            for n in [100usize, 200] {
                let c = gegenbauer_coefficients_angular(|t| relu_ntk(2, t), d, 15, n).unwrap();
                for (l, (a, b)) in c.iter().zip(&c400).enumerate() {
                    assert!((a - b).abs() < tol, "d={d} n={n} l={l}: {a} vs {b}");
                }
            }
            if d == 4 {
                let cj = gegenbauer_coefficients(|t| relu_ntk(2, t), d, 15, 8000).unwrap();
                for (a, b) in cj.iter().zip(&c400) {
                    assert!((a - b).abs() < 1e-12);
                }
            }
        }
        // Exactness is not claimed, but analytic functions converge too: exp(2t) at 60 angular nodes.
        let c = gegenbauer_coefficients_angular(|t: f64| (2.0 * t).exp(), 4, 15, 60).unwrap();
        let e = exp_gegenbauer_coefficients(2.0, 4, 15).unwrap();
        for (a, b) in c.iter().zip(&e) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(gegenbauer_coefficients(|t| t, 1, 3, 10).is_err());
        assert!(gegenbauer_coefficients(|t| t, 3, 3, 0).is_err());
        assert!(gegenbauer_coefficients(|t| 1.0 / t, 3, 3, 11).is_err()); // t = 0 is a node
        assert!(gegenbauer_coefficients(|_| f64::NAN, 3, 3, 10).is_err());
        assert!(gegenbauer_coefficients_angular(|_| f64::INFINITY, 3, 3, 10).is_err());
        assert!(gegenbauer_coefficients_angular(|t| t, 1, 3, 10).is_err());
        assert!(gegenbauer_coefficients_angular(|t| t, 2, 3, 0).is_err());
        let rule = gauss_gegenbauer(10, 4).unwrap();
        assert!(gegenbauer_coefficients_with(|t| t, 3, 3, &rule).is_err());
        assert!(exp_gegenbauer_coefficients(f64::INFINITY, 3, 3).is_err());
        assert!(exp_gegenbauer_coefficients(2.0, 0, 3).is_err());
        assert!(exp_gegenbauer_coefficients(2000.0, 3, 3).is_err());
        assert!(exp_taylor_coefficients(f64::NAN, 3).is_err());
    }
}
