//! Spherical-harmonic bookkeeping: the dimension $\alpha_{\ell,d}$ of the degree-$\ell$ harmonics and the
//! sphere-area ratio $|\mathbb{S}^{d-2}|/|\mathbb{S}^{d-1}|$ that appears in the coefficient formula (Eq. 7).

use statrs::function::gamma::ln_gamma;

/// Exact binomial coefficient $\binom{n}{k}$ in `u128`, or `None` if an intermediate product overflows.
///
/// The multiplicative formula $\binom{n-k+i}{i} = \binom{n-k+i-1}{i-1}\thinspace(n-k+i)/i$ keeps every partial
/// result an integer, so the division is exact.
fn binomial_u128(n: usize, k: usize) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 1..=k {
        let factor = u128::try_from(n - k + i).ok()?;
        r = r.checked_mul(factor)? / (i as u128);
    }
    Some(r)
}

/// $\alpha_{\ell,d}$ as an exact integer when it fits in `u128` (always for `d ≤ 2`).
fn alpha_exact(l: usize, d: usize) -> Option<u128> {
    match l {
        0 => Some(1),
        1 => u128::try_from(d).ok(),
        _ => {
            let first = binomial_u128(d + l - 1, l)?;
            // d ≥ 1 here, so d + l - 3 ≥ l - 2 ≥ 0.
            let second = binomial_u128(d + l - 3, l - 2)?;
            first.checked_sub(second)
        }
    }
}

/// Dimension $\alpha_{\ell,d}$ of the space of degree-$\ell$ spherical harmonics on
/// $\mathbb{S}^{d-1} \subset \mathbb{R}^d$ (paper Eq. 4):
///
/// $$\alpha_{0,d} = 1,\qquad \alpha_{1,d} = d,\qquad
///   \alpha_{\ell,d} = \binom{d+\ell-1}{\ell} - \binom{d+\ell-3}{\ell-2}\quad(\ell \ge 2).$$
///
/// Computed in exact `u128` integer arithmetic whenever the binomials fit (e.g. $\alpha_{15,42} =
/// 15{,}145{,}073{,}396{,}460$ is exact); otherwise from the equivalent closed form
/// $\alpha_{\ell,d} = \frac{2\ell+d-2}{d-2}\binom{\ell+d-3}{\ell}$ ($d \ge 3$) in log-gamma arithmetic, with
/// relative error of a few ulps times $\log$ of the argument. Special cases: $d=2$ gives $1,2,2,2,\dots$,
/// $d=3$ gives $2\ell+1$, $d=4$ gives $(\ell+1)^2$. For $d = 1$ the formula gives $1, 1, 0, 0, \dots$
/// (the two-point "sphere" $\mathbb{S}^0$); `d = 0` is meaningless and returns NaN. Overflows to
/// $+\infty$ only when $\alpha_{\ell,d} > 1.8\cdot10^{308}$.
pub fn alpha(l: usize, d: usize) -> f64 {
    if d == 0 {
        return f64::NAN;
    }
    match alpha_exact(l, d) {
        Some(a) => a as f64,
        None => ln_alpha(l, d).exp(),
    }
}

/// Natural logarithm of [`alpha`], finite even where $\alpha_{\ell,d}$ itself would overflow.
///
/// Uses exact integers when they fit, and otherwise
/// $\ln\alpha_{\ell,d} = \ln(2\ell+d-2) - \ln(d-2) + \ln\Gamma(\ell+d-2) - \ln\Gamma(\ell+1) - \ln\Gamma(d-2)$.
/// Returns $-\infty$ where $\alpha_{\ell,d} = 0$ ($d = 1$, $\ell \ge 2$) and NaN for `d = 0`.
pub fn ln_alpha(l: usize, d: usize) -> f64 {
    if d == 0 {
        return f64::NAN;
    }
    if let Some(a) = alpha_exact(l, d) {
        return (a as f64).ln();
    }
    // Only reached for d ≥ 3 and l ≥ 2 (d ≤ 2 and l ≤ 1 always fit).
    let (lf, df) = (l as f64, d as f64);
    (2.0 * lf + df - 2.0).ln() - (df - 2.0).ln() + ln_gamma(lf + df - 2.0)
        - ln_gamma(lf + 1.0)
        - ln_gamma(df - 2.0)
}

/// The ratio of sphere areas
/// $$\frac{|\mathbb{S}^{d-2}|}{|\mathbb{S}^{d-1}|} = \frac{\Gamma(d/2)}{\sqrt{\pi}\thinspace\Gamma\negthinspace\left(\frac{d-1}{2}\right)},
///   \qquad |\mathbb{S}^{d-1}| = \frac{2\pi^{d/2}}{\Gamma(d/2)},$$
/// which normalises the Gegenbauer weight: $\int_{-1}^1 (1-t^2)^{(d-3)/2}\thinspace dt = |\mathbb{S}^{d-1}|/|\mathbb{S}^{d-2}|$
/// (Eq. 3 with $\ell = \ell^\prime = 0$). Values: $1/\pi$ for $d=2$, $1/2$ for $d=3$, $2/\pi$ for $d=4$.
///
/// For $d \le 4096$ it is computed by the exact recurrence $r_{d+2} = r_d \cdot d/(d-1)$ from $r_2 = 1/\pi$,
/// $r_3 = 1/2$ (error $\lesssim \sqrt{d}$ ulps), beyond that by log-gamma. Returns NaN for $d < 2$.
pub fn sphere_area_ratio(d: usize) -> f64 {
    if d < 2 {
        return f64::NAN;
    }
    if d <= 4096 {
        let (mut r, mut k) = if d % 2 == 0 {
            (std::f64::consts::FRAC_1_PI, 2usize)
        } else {
            (0.5, 3usize)
        };
        while k < d {
            r *= k as f64 / (k as f64 - 1.0);
            k += 2;
        }
        r
    } else {
        let df = d as f64;
        (ln_gamma(df / 2.0) - ln_gamma((df - 1.0) / 2.0)).exp() / std::f64::consts::PI.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_closed_forms_and_research_values() {
        for l in 0..40 {
            assert_eq!(alpha(l, 2), if l == 0 { 1.0 } else { 2.0 });
            assert_eq!(alpha(l, 3), (2 * l + 1) as f64);
            assert_eq!(alpha(l, 4), ((l + 1) * (l + 1)) as f64);
        }
        assert_eq!(alpha(5, 3), 11.0);
        assert_eq!(alpha(3, 4), 16.0);
        assert_eq!(alpha(6, 8), 1386.0);
        assert_eq!(alpha(10, 9), 30888.0);
        assert_eq!(alpha(15, 32), 459_823_234_112.0);
        // α_{15,42} = C(56,15) − C(54,13), exact in integers.
        assert_eq!(alpha(15, 42), 15_145_073_396_460.0);
    }

    #[test]
    fn alpha_sum_identity() {
        // Σ_{ℓ≤q} α_{ℓ,d} = C(q+d−1, q) + C(q+d−2, q−1): the dimension of polynomials of degree ≤ q on the sphere.
        for d in 2..=42usize {
            for q in [1usize, 5, 10, 15] {
                let s: u128 = (0..=q).map(|l| alpha_exact(l, d).unwrap()).sum();
                let rhs =
                    binomial_u128(q + d - 1, q).unwrap() + binomial_u128(q + d - 2, q - 1).unwrap();
                assert_eq!(s, rhs, "d={d} q={q}");
            }
        }
        assert_eq!((0..=15).map(|l| alpha(l, 3)).sum::<f64>(), 256.0);
        assert_eq!((0..=15).map(|l| alpha(l, 4)).sum::<f64>(), 1496.0);
        assert_eq!((0..=15).map(|l| alpha(l, 9)).sum::<f64>(), 810_084.0);
    }

    #[test]
    fn log_gamma_branch_matches_exact_integers() {
        // Force the log-gamma formula and compare with exact values where both are available.
        for (l, d) in [(15usize, 42usize), (10, 9), (6, 8), (40, 100), (3, 1000)] {
            let (lf, df) = (l as f64, d as f64);
            let lg = (2.0 * lf + df - 2.0).ln() - (df - 2.0).ln() + ln_gamma(lf + df - 2.0)
                - ln_gamma(lf + 1.0)
                - ln_gamma(df - 2.0);
            let exact = alpha_exact(l, d).unwrap() as f64;
            // Each lgamma has absolute error of a few ulps of its (large) value; the difference inherits it.
            let tol = 16.0 * f64::EPSILON * (ln_gamma(lf + df - 2.0) + ln_gamma(df - 2.0) + 1.0);
            assert!((lg.exp() / exact - 1.0).abs() < tol, "l={l} d={d}");
        }
        // A value that does not fit in u128 still comes out finite and consistent with its logarithm.
        let big = ln_alpha(200, 400);
        assert!(big.is_finite() && big > 88.0 * std::f64::consts::LN_2);
        assert!((alpha(200, 400).ln() - big).abs() < 1e-12 * big);
    }

    #[test]
    fn sphere_ratio_values() {
        use std::f64::consts::PI;
        assert!((sphere_area_ratio(2) - 1.0 / PI).abs() < 1e-16);
        assert_eq!(sphere_area_ratio(3), 0.5);
        assert!((sphere_area_ratio(4) - 2.0 / PI).abs() < 1e-16);
        assert!((sphere_area_ratio(5) - 0.75).abs() < 1e-16);
        // The recurrence and the log-gamma branch agree at the switch-over.
        for d in [4095usize, 4096] {
            let lg =
                (ln_gamma(d as f64 / 2.0) - ln_gamma((d as f64 - 1.0) / 2.0)).exp() / PI.sqrt();
            assert!((sphere_area_ratio(d) / lg - 1.0).abs() < 1e-11, "d={d}");
        }
        assert!(sphere_area_ratio(1).is_nan());
    }
}
