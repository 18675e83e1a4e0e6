//! Gaussian expectations $\mathbb E[f(z)]$, $z \sim \mathcal N(0,1)$, by quadrature.
//!
//! * [`GaussHermite`]: the $n$-point rule for the weight $e^{-x^2/2}$ (probabilists' Hermite), exact for
//!   polynomials of degree $\le 2n-1$. Right for smooth activations.
//! * [`GaussLegendre`]: the $n$-point rule on $[-1, 1]$, used panel by panel by [`gaussian_expectation`] when
//!   the integrand has kinks or jumps (ReLU, sign, the ternary step): Gauss–Hermite converges only
//!   algebraically across a discontinuity, so the real line is cut at the breakpoints, truncated to
//!   $|z| \le 12$ (where $\varphi(12) \approx 5\cdot 10^{-32}$) and every smooth piece integrated to machine
//!   precision.
//!
//! The nodes are our own: the roots of the three-term recurrence are bracketed on a fine grid (the grid
//! step is a fraction of the smallest root gap), refined by bisection and polished by one Newton step.

use rfx_core::{Result, RfxError};

/// Orthonormal Hermite recurrence (weight $e^{-x^2}$) at $x$: returns $(h_n(x), h_{n-1}(x))$ with
/// $h_0 = \pi^{-1/4}$, $h_1 = \sqrt2\thinspace x\thinspace h_0$, $h_{k+1} = x\sqrt{2/(k+1)}\thinspace h_k - \sqrt{k/(k+1)}\thinspace h_{k-1}$.
fn hermite_orthonormal(n: usize, x: f64) -> (f64, f64) {
    let mut prev = 0.0;
    let mut cur = std::f64::consts::PI.powf(-0.25);
    for k in 0..n {
        let kf = k as f64;
        let next = x * (2.0 / (kf + 1.0)).sqrt() * cur - (kf / (kf + 1.0)).sqrt() * prev;
        prev = cur;
        cur = next;
    }
    (cur, prev)
}

/// Legendre recurrence at $x$: $(P_n(x), P_{n-1}(x))$, $(k+1)P_{k+1} = (2k+1)xP_k - kP_{k-1}$.
fn legendre(n: usize, x: f64) -> (f64, f64) {
    let mut prev = 0.0;
    let mut cur = 1.0;
    for k in 0..n {
        let kf = k as f64;
        let next = ((2.0 * kf + 1.0) * x * cur - kf * prev) / (kf + 1.0);
        prev = cur;
        cur = next;
    }
    (cur, prev)
}

/// All sign changes of `f` on a uniform grid of `[a, b]` with `steps` cells, each refined by bisection
/// to machine precision.
fn bracketed_roots(f: impl Fn(f64) -> f64, a: f64, b: f64, steps: usize) -> Vec<f64> {
    let h = (b - a) / steps as f64;
    let mut roots = Vec::new();
    let mut x0 = a;
    let mut f0 = f(x0);
    for i in 1..=steps {
        let x1 = a + h * i as f64;
        let f1 = f(x1);
        if f0 == 0.0 {
            roots.push(x0);
        } else if f0 * f1 < 0.0 {
            let (mut lo, mut hi, mut flo) = (x0, x1, f0);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                let fm = f(mid);
                if fm == 0.0 {
                    lo = mid;
                    hi = mid;
                    break;
                }
                if (fm < 0.0) == (flo < 0.0) {
                    lo = mid;
                    flo = fm;
                } else {
                    hi = mid;
                }
            }
            roots.push(0.5 * (lo + hi));
        }
        x0 = x1;
        f0 = f1;
    }
    roots
}

/// Gauss–Hermite rule for $\mathbb E[f(z)] = \int f(z)\thinspace\varphi(z)\thinspace dz \approx \sum_i w_i f(z_i)$,
/// $\varphi(z) = e^{-z^2/2}/\sqrt{2\pi}$; exact for polynomials of degree $\le 2n-1$, $\sum_i w_i = 1$.
#[derive(Debug, Clone)]
pub struct GaussHermite {
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

impl GaussHermite {
    /// The $n$-point rule, $1 \le n \le 200$.
    ///
    /// With $x_i$ the roots of the physicists' $H_n$ and $h_n$ its orthonormal version, the rule for
    /// $e^{-x^2}$ has weights $2/h_n^\prime(x_i)^2$ with $h_n^\prime = \sqrt{2n}\thinspace h_{n-1}$; the substitution
    /// $z = \sqrt2\thinspace x$ and division by $\sqrt\pi$ turn it into the rule for $\varphi$.
    pub fn new(n: usize) -> Result<Self> {
        if !(1..=200).contains(&n) {
            return Err(RfxError::invalid("gauss_hermite_nodes", n, "1..=200"));
        }
        let edge = (2.0 * n as f64 + 1.0).sqrt() + 1.0;
        // The smallest root gap of H_n is about pi / sqrt(2n + 1); 40 grid cells per gap.
        let steps = (40.0 * 2.0 * edge * (2.0 * n as f64 + 1.0).sqrt() / std::f64::consts::PI)
            .ceil() as usize;
        let mut x = bracketed_roots(|x| hermite_orthonormal(n, x).0, -edge, edge, steps);
        if x.len() != n {
            return Err(RfxError::Numerical(format!(
                "Gauss-Hermite: found {} of {n} roots",
                x.len()
            )));
        }
        let nf = n as f64;
        let mut weights = Vec::with_capacity(n);
        for xi in &mut x {
            let (h, hm1) = hermite_orthonormal(n, *xi);
            let dh = (2.0 * nf).sqrt() * hm1;
            *xi -= h / dh; // one Newton polish
            let (_, hm1) = hermite_orthonormal(n, *xi);
            let dh = (2.0 * nf).sqrt() * hm1;
            weights.push(2.0 / (dh * dh) / std::f64::consts::PI.sqrt());
        }
        let nodes = x.iter().map(|v| v * std::f64::consts::SQRT_2).collect();
        Ok(Self { nodes, weights })
    }

    /// Nodes $z_i$ (for the standard normal weight).
    pub fn nodes(&self) -> &[f64] {
        &self.nodes
    }

    /// Weights $w_i$, summing to 1.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// $\sum_i w_i f(z_i) \approx \mathbb E[f(z)]$.
    pub fn expect(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(&z, &w)| w * f(z))
            .sum()
    }
}

/// Gauss–Legendre rule on $[-1, 1]$: $\int_{-1}^1 f \approx \sum_i w_i f(x_i)$, exact for degree $\le 2n-1$,
/// with $w_i = 2/((1-x_i^2)P_n^\prime(x_i)^2)$ and $P_n^\prime = n(xP_n - P_{n-1})/(x^2-1)$.
#[derive(Debug, Clone)]
pub struct GaussLegendre {
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

impl GaussLegendre {
    /// The $n$-point rule, $1 \le n \le 200$.
    pub fn new(n: usize) -> Result<Self> {
        if !(1..=200).contains(&n) {
            return Err(RfxError::invalid("gauss_legendre_nodes", n, "1..=200"));
        }
        let nf = n as f64;
        // Smallest gap near the ends is about pi^2 / (2 n^2) in x; 20 cells per gap.
        let steps = (20.0 * 4.0 * nf * nf / std::f64::consts::PI.powi(2)).ceil() as usize + 16;
        // Roots lie strictly inside (-1, 1); the open grid end points are never roots.
        let x = bracketed_roots(|x| legendre(n, x).0, -1.0, 1.0, steps);
        let x: Vec<f64> = x.into_iter().filter(|v| v.abs() < 1.0).collect();
        if x.len() != n {
            return Err(RfxError::Numerical(format!(
                "Gauss-Legendre: found {} of {n} roots",
                x.len()
            )));
        }
        let weights = x
            .iter()
            .map(|&xi| {
                let (p, pm1) = legendre(n, xi);
                let dp = nf * (xi * p - pm1) / (xi * xi - 1.0);
                2.0 / ((1.0 - xi * xi) * dp * dp)
            })
            .collect();
        Ok(Self { nodes: x, weights })
    }

    /// Nodes on $[-1, 1]$.
    pub fn nodes(&self) -> &[f64] {
        &self.nodes
    }

    /// Weights, summing to 2.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// $\int_a^b f(x)\thinspace dx$ by the rule mapped to $[a, b]$.
    pub fn integrate(&self, a: f64, b: f64, f: impl Fn(f64) -> f64) -> f64 {
        let c = 0.5 * (a + b);
        let h = 0.5 * (b - a);
        h * self
            .nodes
            .iter()
            .zip(&self.weights)
            .map(|(&x, &w)| w * f(c + h * x))
            .sum::<f64>()
    }
}

/// Truncation of the real line used by [`gaussian_expectation`]: $|z| \le 12$.
pub const Z_MAX: f64 = 12.0;

/// $\mathbb E[f(z)]$, $z \sim \mathcal N(0, 1)$, for $f$ smooth between the given `breakpoints` (in $z$ units).
///
/// Without breakpoints: 160-point Gauss–Hermite. With breakpoints: $[-12, 12]$ is cut at the breakpoints
/// and into panels of width $\le 1$, each integrated against $\varphi$ by 24-point Gauss–Legendre
/// (exact to rounding for integrands analytic on each panel; the truncated tail mass is
/// $2\bar\Phi(12) \approx 4\cdot10^{-33}$ times the growth of $f$).
pub fn gaussian_expectation(f: impl Fn(f64) -> f64, breakpoints: &[f64]) -> f64 {
    thread_local! {
        static RULES: (GaussHermite, GaussLegendre) =
            (GaussHermite::new(160).expect("160-point rule"), GaussLegendre::new(24).expect("24-point rule"));
    }
    RULES.with(|(gh, gl)| {
        if breakpoints.is_empty() {
            return gh.expect(&f);
        }
        let mut cuts: Vec<f64> = breakpoints
            .iter()
            .copied()
            .filter(|b| b.is_finite() && b.abs() < Z_MAX)
            .collect();
        cuts.push(-Z_MAX);
        cuts.push(Z_MAX);
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        let phi = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let mut total = 0.0;
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let panels = (b - a).ceil().max(1.0) as usize;
            let h = (b - a) / panels as f64;
            for k in 0..panels {
                let lo = a + h * k as f64;
                let hi = if k + 1 == panels { b } else { lo + h };
                total += gl.integrate(lo, hi, |z| f(z) * phi(z));
            }
        }
        total
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// $\mathbb E[z^{2k}] = (2k-1)!!$, odd moments 0.
    fn normal_moment(k: u32) -> f64 {
        if k % 2 == 1 {
            0.0
        } else {
            (1..k).step_by(2).map(f64::from).product()
        }
    }

    #[test]
    fn gauss_hermite_is_exact_on_polynomials() {
        for n in [1usize, 2, 5, 10, 20] {
            let gh = GaussHermite::new(n).unwrap();
            assert_eq!(gh.nodes().len(), n);
            for k in 0..(2 * n as u32) {
                let q = gh.expect(|z| z.powi(k as i32));
                let exact = normal_moment(k);
                // Rounding: the terms are of size E|z|^k <= (k-1)!!-ish; relative 1e-12.
                let tol = 1e-12 * exact.abs().max(normal_moment(k + (k % 2))).max(1.0);
                assert!((q - exact).abs() <= tol, "n={n} k={k}: {q} vs {exact}");
            }
            // Degree 2n is NOT integrated exactly (the rule can fail): E[z^{2n}] is missed by n!.
            let k = 2 * n as i32;
            let q = gh.expect(|z| z.powi(k));
            assert!((q - normal_moment(k as u32)).abs() > 0.5, "n={n}");
        }
    }

    #[test]
    fn gauss_legendre_is_exact_on_polynomials() {
        for n in [1usize, 3, 8, 24] {
            let gl = GaussLegendre::new(n).unwrap();
            for k in 0..(2 * n as i32) {
                let q = gl.integrate(-1.0, 1.0, |x| x.powi(k));
                let exact = if k % 2 == 1 {
                    0.0
                } else {
                    2.0 / (k as f64 + 1.0)
                };
                assert!((q - exact).abs() < 1e-14, "n={n} k={k}: {q} vs {exact}");
            }
        }
    }

    #[test]
    fn piecewise_expectation_handles_jumps() {
        // E[1_{z > 0.3}] = 1 - Phi(0.3); E[z 1_{z>0.3}] = phi(0.3).
        let phi = (-0.045f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let q = gaussian_expectation(|z| if z > 0.3 { z } else { 0.0 }, &[0.3]);
        assert!((q - phi).abs() < 1e-14, "{q} vs {phi}");
        // Without the breakpoint the composite rule is visibly worse (the test can fail).
        let bad = gaussian_expectation(|z| if z > 0.3 { 1.0 } else { 0.0 }, &[0.05]);
        let good = gaussian_expectation(|z| if z > 0.3 { 1.0 } else { 0.0 }, &[0.3]);
        assert!((bad - good).abs() > 1e-6);
        assert!(GaussHermite::new(0).is_err() && GaussLegendre::new(201).is_err());
    }
}
