//! The Taylor series at 0 of the ReLU neural tangent kernel function $K^{(L)}$ (the Taylor baseline of Fig. 1).
//!
//! $K^{(L)}$, $\kappa_0$ and $\kappa_1$ themselves (one normalisation, $\kappa(1) = 1$) are in `rfx-kernels`
//! ([`rfx_kernels::relu_ntk`], [`rfx_kernels::arccos0`], [`rfx_kernels::arccos1`]): with
//! $\Sigma^{(0)} = K^{(0)} = t$, $\Sigma^{(h)} = \kappa_1(\Sigma^{(h-1)})$, $\dot\Sigma^{(h)} = \kappa_0(\Sigma^{(h-1)})$,
//! $K^{(h)} = K^{(h-1)}\dot\Sigma^{(h)} + \Sigma^{(h)}$ (Sec. 6.1 and Lemma 16). This module expands that recursion
//! in exact truncated power-series arithmetic.

use rfx_kernels::{arccos0, arccos1};
use std::f64::consts::PI;

/// Truncated power series $\sum_{j<m} a_j t^j$ (all operations exact up to degree $m-1$).
mod powser {
    pub fn mul(a: &[f64], b: &[f64]) -> Vec<f64> {
        let m = a.len();
        (0..m)
            .map(|k| (0..=k).map(|i| a[i] * b[k - i]).sum())
            .collect()
    }

    /// $a/b$, requires $b_0 \ne 0$.
    pub fn div(a: &[f64], b: &[f64]) -> Vec<f64> {
        let m = a.len();
        let mut c = vec![0.0; m];
        for k in 0..m {
            let s: f64 = (1..=k).map(|i| b[i] * c[k - i]).sum();
            c[k] = (a[k] - s) / b[0];
        }
        c
    }

    /// $\sqrt{a}$, requires $a_0 > 0$.
    pub fn sqrt(a: &[f64]) -> Vec<f64> {
        let m = a.len();
        let mut s = vec![0.0; m];
        s[0] = a[0].sqrt();
        for k in 1..m {
            let cross: f64 = (1..k).map(|i| s[i] * s[k - i]).sum();
            s[k] = (a[k] - cross) / (2.0 * s[0]);
        }
        s
    }

    /// Derivative; the top coefficient (unknown after truncation) is set to 0 and must not be used.
    pub fn deriv(a: &[f64]) -> Vec<f64> {
        let m = a.len();
        (0..m)
            .map(|k| {
                if k + 1 < m {
                    (k + 1) as f64 * a[k + 1]
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Antiderivative with constant term `c0`, truncated to the same length.
    pub fn integrate(a: &[f64], c0: f64) -> Vec<f64> {
        let m = a.len();
        (0..m)
            .map(|k| if k == 0 { c0 } else { a[k - 1] / k as f64 })
            .collect()
    }
}

/// Taylor coefficients of $(\kappa_0 \circ S, \kappa_1 \circ S)$ for a series $S$ with $|S(0)| < 1$.
///
/// Uses $\kappa_0'(x) = \frac{1}{\pi\sqrt{1-x^2}}$ and $\kappa_1' = \kappa_0$: with $u = \sqrt{1-S^2}$ (series
/// square root, valid as $1 - S(0)^2 > 0$),
/// $(\kappa_0\circ S)' = S'/(\pi u)$ and $(\kappa_1\circ S)' = (\kappa_0\circ S)\,S'$, integrated with constants
/// $\kappa_0(S(0))$, $\kappa_1(S(0))$. The derivative $S'$ is known to degree $m-2$, so both integrals are exact
/// to degree $m-1$.
fn compose_arccos(s: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let one_minus_s2: Vec<f64> = powser::mul(s, s)
        .iter()
        .enumerate()
        .map(|(k, v)| if k == 0 { 1.0 - v } else { -v })
        .collect();
    let u = powser::sqrt(&one_minus_s2);
    let ds = powser::deriv(s);
    let pi_u: Vec<f64> = u.iter().map(|v| PI * v).collect();
    let a0 = powser::integrate(&powser::div(&ds, &pi_u), arccos0(s[0]));
    let a1 = powser::integrate(&powser::mul(&a0, &ds), arccos1(s[0]));
    (a0, a1)
}

/// Taylor coefficients $[t^j]K^{(L)}(t)$, $j = 0, \dots, q$, of the depth-`depth` ReLU NTK at $t = 0$.
///
/// Exact truncated power-series arithmetic following the recursion of the module documentation (no numerical
/// differentiation): $\Sigma^{(0)}(0) = 0$ and $\Sigma^{(h)}(0) = \kappa_1(\Sigma^{(h-1)}(0)) \in [1/\pi, 1)$ for $h \ge 1$ lie inside $(-1, 1)$, so
/// the compositions below are valid: with $\kappa_0'(x) = 1/(\pi\sqrt{1-x^2})$ and $\kappa_1' = \kappa_0$,
/// $(\kappa_0\circ S)' = S'/(\pi\sqrt{1-S^2})$ and $(\kappa_1\circ S)' = (\kappa_0\circ S)S'$ are formed by series
/// square root, division and product, then integrated. All coefficients are $\ge 0$ (the NTK is a positive
/// definite dot-product kernel on every sphere, Schoenberg), and they decay slowly (like $j^{-3/2}$) because
/// $K^{(L)}$ has $\sqrt{1 \mp t}$ singularities at $t = \pm 1$. For $L = 2$:
/// $0.68571, 0.95811, 0.61556, 0.18399, \dots$ (tests compare with the research values and, inside the
/// radius of convergence, with [`rfx_kernels::relu_ntk`] itself to $10^{-13}$).
pub fn relu_ntk_taylor(depth: usize, q: usize) -> Vec<f64> {
    let m = q + 1;
    let mut t = vec![0.0; m.max(2)];
    t[1] = 1.0;
    let (mut sigma, mut k) = (t.clone(), t);
    for _ in 0..depth {
        let (sigma_dot, next_sigma) = compose_arccos(&sigma);
        k = powser::mul(&k, &sigma_dot)
            .iter()
            .zip(&next_sigma)
            .map(|(a, b)| a + b)
            .collect();
        sigma = next_sigma;
    }
    k.truncate(m);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_kernels::relu_ntk;
    use std::f64::consts::FRAC_1_PI;

    #[test]
    fn taylor_coefficients_match_research_values() {
        let want = [
            0.68571, 0.95811, 0.61556, 0.18399, 0.11465, 0.04868, 0.04957, 0.02489, 0.02833,
            0.01569, 0.01881, 0.01100, 0.01362, 0.00825, 0.01044, 0.00648,
        ];
        let c = relu_ntk_taylor(2, 15);
        assert_eq!(c.len(), 16);
        for (j, (&g, &w)) in c.iter().zip(&want).enumerate() {
            // The reference is rounded to 5 decimals.
            assert!((g - w).abs() <= 5e-6 + 1e-12, "degree {j}: {g} vs {w}");
        }
        assert!((c[0] - relu_ntk(2, 0.0)).abs() < 1e-15);
        // Depth 1: K^(1)(t) = t κ0(t) + κ1(t) = 1/π + t + t²/(2π) + ... (κ0 = ½ + arcsin(t)/π,
        // κ1 = (√(1−t²) + t arcsin t)/π + t/2) ⇒ [t] = ½ + ½ = 1, [t²] = 1/π − 1/(2π) + 1/π = 3/(2π).
        let c1 = relu_ntk_taylor(1, 4);
        assert!((c1[0] - FRAC_1_PI).abs() < 1e-16);
        assert!((c1[1] - 1.0).abs() < 1e-15);
        assert!((c1[2] - 1.5 * FRAC_1_PI).abs() < 1e-15);
        assert_eq!(c1[3], 0.0);
        // Depth 0 is the identity.
        assert_eq!(relu_ntk_taylor(0, 3), vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(relu_ntk_taylor(0, 0), vec![0.0]);
    }

    #[test]
    fn taylor_series_converges_to_the_function_inside() {
        // Inside |t| ≤ 1/2 the series converges geometrically (radius 1), so degree 60 is accurate to
        // ~ 2^{-60}·j^{-3/2}-ish; compare with the closed form.
        for depth in 1..=3 {
            let c = relu_ntk_taylor(depth, 60);
            assert!(c.iter().all(|&v| v >= -1e-15), "nonnegative coefficients");
            for i in 0..=20 {
                let t = -0.5 + 0.05 * i as f64;
                let s = c.iter().rev().fold(0.0, |acc, &v| acc * t + v);
                assert!(
                    (s - relu_ntk(depth, t)).abs() < 1e-13,
                    "depth={depth} t={t}"
                );
            }
            // Σ_j c_j = K(1) = depth + 1 (all positive, Abel's theorem); the tail after degree 60 is
            // O(60^{-1/2}), so the partial sum is below and within 0.5 of it.
            let total: f64 = c.iter().sum();
            assert!(
                total < (depth + 1) as f64 && total > depth as f64 + 0.5,
                "depth={depth}: {total}"
            );
        }
    }
}
