//! The leverage-score distribution of the NTK random-features papers.
//!
//! $$q(w) = \frac{\Vert w\Vert_2^2}{d}\thinspace\mathcal N(w; 0, I_d) = \frac{1}{(2\pi)^{d/2} d}\thinspace\Vert w\Vert_2^2\thinspace e^{-\Vert w\Vert_2^2/2}$$
//! (Han et al. 2021, Eq. 15; Zandieh et al. 2021, Eq. 86). Two samplers:
//!
//! * [`leverage_gibbs`]: the papers' Gibbs sampler (Algorithm 2 / Algorithm 3): start at
//!   $w \sim \mathcal N(0, I_d)$; each sweep redraws every coordinate $j$ in turn from its conditional
//!   $q(t \mid r) = \frac{(t^2 + r)\thinspace\varphi(t)}{1 + r}$, $r = \sum_{k \ne j} w_k^2$, by inverting the conditional
//!   CDF (footnote 2) $F_r(t) = \Phi(t) - \frac{t\thinspace\varphi(t)}{1 + r}$ exactly (safeguarded Newton, not the
//!   reference code's 1001-point table). The number of sweeps $T$ is configurable (the papers use $T = 1$).
//! * [`leverage_exact`]: $q$ is radially symmetric, so $w = R\thinspace u$ with $u$ uniform on $\mathbb S^{d-1}$ and
//!   $R \sim \chi_{d+2}$ (the density of $\Vert w\Vert$ is $\propto \rho^{d+1} e^{-\rho^2/2}$), an exact sampler.

use crate::random::{chi, gaussian_matrix, uniform_sphere};
use ndarray::{Array2, Axis};
use rand::Rng;
use rfx_core::{Result, RfxError, RfxRng};
use statrs::function::erf::erfc;

const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

fn std_normal_pdf(t: f64) -> f64 {
    INV_SQRT_2PI * (-0.5 * t * t).exp()
}

fn std_normal_cdf(t: f64) -> f64 {
    0.5 * erfc(-t / std::f64::consts::SQRT_2)
}

/// The conditional CDF of one coordinate, $F_r(t) = \Phi(t) - t\thinspace\varphi(t)/(1 + r)$, $r \ge 0$.
pub fn gibbs_conditional_cdf(t: f64, r: f64) -> f64 {
    std_normal_cdf(t) - t * std_normal_pdf(t) / (1.0 + r)
}

/// The conditional density $(t^2 + r)\thinspace\varphi(t)/(1 + r)$.
pub fn gibbs_conditional_pdf(t: f64, r: f64) -> f64 {
    (t * t + r) * std_normal_pdf(t) / (1.0 + r)
}

/// Inverse of [`gibbs_conditional_cdf`]: the $t$ with $F_r(t) = u$, $u \in (0, 1)$, to about $10^{-12}$.
///
/// Newton's method on a shrinking bracket $[-40, 40]$, falling back to bisection whenever a Newton step
/// leaves the bracket (the density vanishes at $t = 0$ when $r = 0$). It stops as soon as a Newton step is
/// below $10^{-13}(1 + |t|)$, before the bracket test: a converged step lands on the bracket's end it just
/// set, and taking that for a step out of the bracket turned it into a bisection step away from the root
/// (16 CDF evaluations per draw instead of 5; the test below bounds the count).
pub fn gibbs_conditional_inverse(u: f64, r: f64) -> f64 {
    inverse_counted(u, r).0
}

/// [`gibbs_conditional_inverse`] and the number of CDF evaluations it took.
fn inverse_counted(u: f64, r: f64) -> (f64, usize) {
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    let mut t = 0.0f64;
    for evals in 1..=200 {
        let f = gibbs_conditional_cdf(t, r) - u;
        if f > 0.0 {
            hi = t;
        } else {
            lo = t;
        }
        let dens = gibbs_conditional_pdf(t, r);
        let tol = 1e-13 * (1.0 + t.abs());
        let mut next = if dens > 0.0 { t - f / dens } else { f64::NAN };
        if (next - t).abs() <= tol {
            return (next, evals);
        }
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if hi - lo <= tol {
            return (next, evals);
        }
        t = next;
    }
    (t, 200)
}

/// `n` draws from $q$ (rows of an `n × d` matrix) by the Gibbs sampler with `sweeps` full sweeps
/// (`sweeps = 0` returns the $\mathcal N(0, I_d)$ starting points unchanged).
pub fn leverage_gibbs(n: usize, d: usize, sweeps: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    if d == 0 {
        return Err(RfxError::invalid("d", d, "an integer >= 1"));
    }
    let mut w = gaussian_matrix(n, d, rng);
    for mut row in w.axis_iter_mut(Axis(0)) {
        let mut total: f64 = row.iter().map(|v| v * v).sum();
        for _ in 0..sweeps {
            for j in 0..d {
                let old = row[j];
                let r = (total - old * old).max(0.0);
                let mut u: f64 = rng.gen();
                while u <= 0.0 {
                    u = rng.gen();
                }
                let t = gibbs_conditional_inverse(u, r);
                row[j] = t;
                total = r + t * t;
            }
            // refresh the running sum to avoid drift
            total = row.iter().map(|v| v * v).sum();
        }
    }
    Ok(w)
}

/// `n` exact draws from $q$: $w = R\thinspace u$, $u$ uniform on $\mathbb S^{d-1}$, $R \sim \chi_{d+2}$.
pub fn leverage_exact(n: usize, d: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    let mut u = uniform_sphere(n, d, rng)?;
    let r = chi((d + 2) as f64, n, rng)?;
    for (mut row, ri) in u.axis_iter_mut(Axis(0)).zip(r.iter()) {
        row.mapv_inplace(|v| v * ri);
    }
    Ok(u)
}

/// The importance weight $\sqrt{p(w)/q(w)} = \sqrt d/\Vert w\Vert$ that makes features drawn from $q$ unbiased
/// for the Gaussian-frequency expectation (Han et al. 2021, App. A.3).
pub fn importance_weight(w: &[f64]) -> f64 {
    let n2: f64 = w.iter().map(|v| v * v).sum();
    (w.len() as f64 / n2).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_inverse_inverts_and_cdf_matches_density() {
        for &r in &[0.0, 0.3, 2.0, 50.0] {
            for &u in &[1e-12, 1e-6, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0 - 1e-10] {
                let t = gibbs_conditional_inverse(u, r);
                assert!(
                    (gibbs_conditional_cdf(t, r) - u).abs() < 1e-12,
                    "r={r} u={u} t={t}"
                );
            }
            // dF/dt = pdf by central differences
            for &t in &[-2.0, -0.1, 0.4, 3.0] {
                let h = 1e-5;
                let num =
                    (gibbs_conditional_cdf(t + h, r) - gibbs_conditional_cdf(t - h, r)) / (2.0 * h);
                assert!((num - gibbs_conditional_pdf(t, r)).abs() < 1e-8);
            }
            assert!(gibbs_conditional_cdf(-40.0, r) < 1e-300 + 1e-15);
            // Newton from t = 0 converges quadratically: F_r is smooth and its density is bounded away from
            // 0 near the root, so a handful of evaluations; bisection (a step out of the bracket) only near
            // t = 0 when r = 0, where the density vanishes. 200 draws over (0, 1).
            let counts: Vec<usize> = (0..200)
                .map(|i| inverse_counted((i as f64 + 0.5) / 200.0, r).1)
                .collect();
            let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
            let bound = if r == 0.0 { 12.0 } else { 8.0 };
            assert!(
                mean <= bound,
                "r={r}: {mean} CDF evaluations per draw on average"
            );
            assert!((gibbs_conditional_cdf(40.0, r) - 1.0).abs() < 1e-15);
        }
    }
}
