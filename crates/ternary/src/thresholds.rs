//! The threshold solver of Corollary 1 / Algorithm 1: thresholds $(s_-, s_+)$ of the ternary activation
//! $\sigma^{ter}(t) = -1_{t<s_-} + 1_{t>s_+}$ whose $d_1, d_2$ equal those of a target activation.
//!
//! **Deviation from the paper.** Eq. (10) is printed with wrong constants ($1/\pi^2$ for $1/(2\pi\tau)$,
//! exponents $e^{-s^2/\tau}$ that hold only for thresholds applied at $\sqrt2 s$, and a missing $\frac14$ in
//! $d_2$); we solve the correct equations (research notes §2.4, §6.1) with thresholds in the scale of
//! $\mathbf w^\top\mathbf x$. With $u = s_-/\sqrt\tau$, $v = s_+/\sqrt\tau$ and the standard normal pdf $\phi$:
//! $$\phi(u)+\phi(v) = A \triangleq \sqrt{\tau d_1^\ast },\qquad |u\phi(u)+v\phi(v)| = B \triangleq 2\tau\sqrt{d_2^*}.$$
//! Both equations are symmetric in $(u, v)$. We eliminate $v$ through the first one,
//! $|v| = \sqrt{-2\ln(\sqrt{2\pi}(A-\phi(u)))}$ (both signs), scan $u$ on a fine grid of $[-10, 10]$ for
//! crossings of $u\phi(u)+v\phi(v) = \pm B$ and bisect each to machine precision, so $d_1$ is matched to
//! rounding and $d_2$ to the bisection tolerance.
//!
//! **Feasibility.** Since $|u\phi(u)+v\phi(v)| \le 2\phi(1) \approx 0.484$, the equations have no solution for
//! large $\tau$ (RFF target: $\tau \gtrsim 0.6$; ReLU: $\tau \gtrsim 1.3$). The paper's least squares then
//! silently returns a binary step; here the solver returns [`ThresholdSolution::Infeasible`], which gives
//! the largest feasible variance below $\tau$ and the factor by which to **rescale the data** (research notes
//! §6.2): multiplying every $\mathbf x_i$ by `scale` multiplies $\hat\tau$ by `scale`². For ReLU this only
//! rescales the kernel by `scale`² (homogeneity); for the Gaussian kernel it changes the bandwidth to
//! $1/$`scale`.

use crate::activation::{std_normal_pdf, ternary_moments, Activation, GaussianMoments};
use rfx_core::{Result, RfxError};

/// Thresholds $(s_-, s_+)$, $s_- \le s_+$, in the scale of $\mathbf w^\top\mathbf x$ with unit-variance
/// weights, for data with variance $\tau$.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// $s_-$.
    pub s_minus: f64,
    /// $s_+$.
    pub s_plus: f64,
    /// The $\tau$ they were solved for.
    pub tau: f64,
}

impl Thresholds {
    /// Validated thresholds.
    pub fn new(s_minus: f64, s_plus: f64, tau: f64) -> Result<Self> {
        if !(s_minus.is_finite() && s_plus.is_finite() && s_minus <= s_plus) {
            return Err(RfxError::invalid(
                "thresholds",
                format!("({s_minus}, {s_plus})"),
                "finite s_minus <= s_plus",
            ));
        }
        if !(tau.is_finite() && tau > 0.0) {
            return Err(RfxError::invalid("tau", tau, "a finite number > 0"));
        }
        Ok(Self {
            s_minus,
            s_plus,
            tau,
        })
    }

    /// The ternary activation with these thresholds.
    pub fn activation(&self) -> Activation {
        Activation::Ternary {
            s_minus: self.s_minus,
            s_plus: self.s_plus,
        }
    }

    /// Closed-form moments of $\sigma^{ter}$ at $\tau$.
    pub fn moments(&self) -> GaussianMoments {
        ternary_moments(self.s_minus, self.s_plus, self.tau)
    }

    /// The mirror $(-s_+, -s_-)$, which has the same $d_0, d_1, d_2$ (opposite $\mathbb E[\sigma^{\prime\prime}]$).
    pub fn mirror(&self) -> Self {
        Self {
            s_minus: -self.s_plus,
            s_plus: -self.s_minus,
            tau: self.tau,
        }
    }
}

/// Outcome of [`solve_thresholds`].
#[derive(Debug, Clone)]
pub enum ThresholdSolution {
    /// $d_1$ and $d_2$ of the target are matched.
    Exact {
        /// The thresholds.
        thresholds: Thresholds,
        /// Moments of $\sigma^{ter}$ with them.
        ternary: GaussianMoments,
        /// Moments of the target.
        target: GaussianMoments,
        /// $\lambda = d_0^* - d_0^{ter}$ of Corollary 1 ($\mathbf K \approx \mathbf K^{ter} + \lambda\mathbf P$).
        lambda: f64,
    },
    /// No thresholds match $d_1$ and $d_2$ at this $\tau$: rescale the data.
    Infeasible {
        /// The $\tau$ asked for.
        tau: f64,
        /// Moments of the target at `tau`.
        target: GaussianMoments,
        /// Best effort at `tau`: $d_1$ matched exactly and $|\mathbb E[\sigma^{\prime\prime}]|$ as close to the target as
        /// possible (`None` when even $d_1 > 2\phi(0)^2/\tau$ cannot be matched).
        best: Option<Thresholds>,
        /// The largest $\tau^\prime$ below `tau` (to $10^{-6}$ relative) at which the target is feasible.
        feasible_tau: f64,
        /// Multiply the data by this factor, $\sqrt{0.9\thinspace\tau^\prime/\tau}$, to land safely inside the feasible
        /// range (10 % below its edge, where the two solutions merge and the fit is ill-conditioned).
        scale: f64,
    },
}

impl ThresholdSolution {
    /// The thresholds if exact.
    pub fn exact(&self) -> Option<Thresholds> {
        match self {
            ThresholdSolution::Exact { thresholds, .. } => Some(*thresholds),
            ThresholdSolution::Infeasible { .. } => None,
        }
    }
}

const U_MAX: f64 = 10.0;
const GRID: usize = 20_000;

/// $v \ge 0$ with $\phi(v) = A - \phi(u)$, if it exists.
fn partner(a: f64, u: f64) -> Option<f64> {
    let rest = a - std_normal_pdf(u);
    let top = std_normal_pdf(0.0);
    if rest <= 0.0 || rest > top {
        return None;
    }
    let arg = -2.0 * (rest / top).ln();
    Some(arg.max(0.0).sqrt())
}

/// $g(u) = u\phi(u) + v\phi(v)$ on the branch $v = \pm|v|$.
fn g(a: f64, u: f64, branch: f64) -> Option<f64> {
    partner(a, u).map(|r| {
        let v = branch * r;
        u * std_normal_pdf(u) + v * std_normal_pdf(v)
    })
}

/// `(score, u, v)` of a grid point.
type Scored = (f64, f64, f64);

/// All $(u, v)$ with $\phi(u)+\phi(v) = A$ and $u\phi(u)+v\phi(v) = c$; also the grid maximiser of
/// $c\cdot g$ (for the infeasible best effort).
fn solve_uv(a: f64, c: f64) -> (Vec<(f64, f64)>, Option<Scored>) {
    let mut sols = Vec::new();
    let mut best: Option<Scored> = None;
    let sgn = if c < 0.0 { -1.0 } else { 1.0 };
    let h = 2.0 * U_MAX / GRID as f64;
    for branch in [1.0, -1.0] {
        let mut prev: Option<(f64, f64)> = None;
        for i in 0..=GRID {
            let u = -U_MAX + h * i as f64;
            let cur = g(a, u, branch).map(|gv| (u, gv));
            if let Some((u1, g1)) = cur {
                let score = sgn * g1;
                if best.is_none_or(|b| score > b.0) {
                    best = Some((score, u1, branch * partner(a, u1).unwrap_or(0.0)));
                }
                if let Some((u0, g0)) = prev {
                    if (g0 - c) * (g1 - c) <= 0.0 && (g0 - c) != 0.0 {
                        let (mut lo, mut hi, mut flo) = (u0, u1, g0 - c);
                        let mut ok = true;
                        for _ in 0..200 {
                            let mid = 0.5 * (lo + hi);
                            if mid <= lo || mid >= hi {
                                break;
                            }
                            let Some(gm) = g(a, mid, branch) else {
                                ok = false;
                                break;
                            };
                            if (gm - c < 0.0) == (flo < 0.0) {
                                lo = mid;
                                flo = gm - c;
                            } else {
                                hi = mid;
                            }
                        }
                        let u = 0.5 * (lo + hi);
                        if let (true, Some(r)) = (ok, partner(a, u)) {
                            sols.push((u, branch * r));
                        }
                    }
                }
            }
            prev = cur;
        }
    }
    (sols, best)
}

/// Target constants $A = \sqrt{\tau d_1}$, $B = 2\tau\sqrt{d_2}$ and the preferred sign of
/// $\mathbb E[\sigma^{\prime\prime}]$ (that of the target's dominant component).
fn targets(target: &GaussianMoments) -> (f64, f64, f64) {
    let tau = target.tau;
    let a = (tau * target.d1).sqrt();
    let b = 2.0 * tau * target.d2.sqrt();
    let dominant = target
        .components
        .iter()
        .map(|c| c.d_second)
        .fold(0.0f64, |acc, v| if v.abs() > acc.abs() { v } else { acc });
    (a, b, if dominant < 0.0 { -1.0 } else { 1.0 })
}

/// Exact thresholds for the target moments, if any: prefers the sign of the target's
/// $\mathbb E[\sigma^{\prime\prime}]$ (irrelevant to Theorem 1, where only its square enters, but it makes the ternary
/// activation "look like" the target), then the smallest $u^2+v^2$.
fn exact_thresholds(target: &GaussianMoments) -> Option<Thresholds> {
    let (a, b, sign) = targets(target);
    if !(a.is_finite() && b.is_finite()) || a <= 0.0 {
        return None;
    }
    let st = target.tau.sqrt();
    for c in [sign * b, -sign * b] {
        let (sols, _) = solve_uv(a, c);
        let best = sols
            .into_iter()
            .map(|(u, v)| if u <= v { (u, v) } else { (v, u) })
            .min_by(|p, q| (p.0 * p.0 + p.1 * p.1).total_cmp(&(q.0 * q.0 + q.1 * q.1)));
        if let Some((u, v)) = best {
            return Some(Thresholds {
                s_minus: u * st,
                s_plus: v * st,
                tau: target.tau,
            });
        }
        if b == 0.0 {
            break;
        }
    }
    None
}

/// Solves for thresholds matching $d_1, d_2$ of `target` at variance `tau` (Corollary 1, corrected).
///
/// Returns [`ThresholdSolution::Exact`] (with $\lambda = d_0^* - d_0^{ter}$, footnote 7) or
/// [`ThresholdSolution::Infeasible`] with the rescaling to apply to the data; errors only for invalid
/// input or a target with $d_1 = 0$ (e.g. $|t|$, $\cos$), which no ternary activation can match since
/// $\mathbb E[{\sigma^{ter}}^\prime] = (\phi(u)+\phi(v))/\sqrt\tau > 0$.
pub fn solve_thresholds(target: &Activation, tau: f64) -> Result<ThresholdSolution> {
    let tm = target.moments(tau)?;
    if tm.d1 <= 0.0 {
        return Err(RfxError::invalid(
            "target",
            format!("{target:?} (d1 = {})", tm.d1),
            "an activation with d1 > 0 (ternary features always have d1 > 0)",
        ));
    }
    if let Some(th) = exact_thresholds(&tm) {
        let ternary = th.moments();
        let lambda = tm.d0 - ternary.d0;
        return Ok(ThresholdSolution::Exact {
            thresholds: th,
            ternary,
            target: tm,
            lambda,
        });
    }
    // Best effort at tau: d1 exact, |E sigma''| as large as possible in the preferred direction.
    let (a, b, sign) = targets(&tm);
    let (_, best) = solve_uv(a, sign * b.max(f64::MIN_POSITIVE));
    let st = tau.sqrt();
    let best = best.map(|(_, u, v)| Thresholds {
        s_minus: u.min(v) * st,
        s_plus: u.max(v) * st,
        tau,
    });
    // Largest feasible tau' below tau: halve until feasible, then bisect.
    let feasible = |t: f64| -> Result<bool> { Ok(exact_thresholds(&target.moments(t)?).is_some()) };
    let mut hi = tau;
    let mut lo = tau * 0.5;
    let mut found = false;
    for _ in 0..60 {
        if feasible(lo)? {
            found = true;
            break;
        }
        hi = lo;
        lo *= 0.5;
    }
    if !found {
        return Err(RfxError::Numerical(format!(
            "threshold solver: {target:?} is infeasible at every tau in [{lo:e}, {tau}]"
        )));
    }
    while (hi - lo) > 1e-6 * hi {
        let mid = 0.5 * (lo + hi);
        if feasible(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let safe = if feasible(0.9 * lo)? { 0.9 * lo } else { lo };
    Ok(ThresholdSolution::Infeasible {
        tau,
        target: tm,
        best,
        feasible_tau: lo,
        scale: (safe / tau).sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    #[test]
    fn thresholds_reproduce_d1_d2_where_feasible() {
        let cases = [
            (Activation::CosSin, 0.25),
            (Activation::CosSin, 0.5),
            (Activation::Relu, 0.25),
            (Activation::Relu, 0.5),
            (Activation::Relu, 1.0),
            (Activation::Relu, 1.2),
            (Activation::Sin, 1.0), // d2 = 0: symmetric thresholds
            (Activation::Erf, 0.8),
        ];
        for (act, tau) in cases {
            let sol = solve_thresholds(&act, tau).unwrap();
            let ThresholdSolution::Exact {
                thresholds,
                ternary,
                target,
                lambda,
            } = sol
            else {
                panic!("{act:?} at tau={tau} should be feasible")
            };
            // Quadrature of the ternary activation with these thresholds, independent of the closed form.
            let q = thresholds.activation().moments(tau).unwrap();
            assert!(
                rel(q.d1, target.d1) < 1e-8,
                "{act:?} {tau}: d1 {} vs {}",
                q.d1,
                target.d1
            );
            // Relative 1e-8, with an absolute floor of 1e-20 for targets whose d2 is zero (sin, erf), where
            // quadrature returns ~1e-35.
            assert!(
                (q.d2 - target.d2).abs() <= 1e-8 * target.d2.max(1e-12),
                "{act:?} {tau}: d2 {} vs {}",
                q.d2,
                target.d2
            );
            eprintln!(
                "{act:?} tau={tau}: s=({:.6}, {:.6}) rel err d1 {:.1e} d2 {:.1e}",
                thresholds.s_minus,
                thresholds.s_plus,
                rel(q.d1, target.d1),
                (q.d2 - target.d2).abs() / target.d2.max(1e-12)
            );
            assert!((lambda - (target.d0 - ternary.d0)).abs() < 1e-15);
            // The mirror has the same moments.
            let m = thresholds.mirror().moments();
            assert!(rel(m.d0, ternary.d0) < 1e-12 && rel(m.d1, ternary.d1) < 1e-12);
        }
    }

    #[test]
    fn reference_solutions() {
        // Research notes §2.5: ReLU at tau = 1 has (t-, t+) = (-1.375, -0.539) or its mirror, with
        // d0_ter = 0.1545 vs d0_relu = 0.0908; RFF at tau = 0.5 has (-0.867, -0.310) or its mirror.
        let th = solve_thresholds(&Activation::Relu, 1.0)
            .unwrap()
            .exact()
            .unwrap();
        let th = if th.s_plus > 0.0 { th.mirror() } else { th };
        assert!(
            (th.s_minus + 1.375).abs() < 2e-3 && (th.s_plus + 0.539).abs() < 2e-3,
            "{th:?}"
        );
        assert!((th.moments().d0 - 0.1545).abs() < 1e-3);
        let th = solve_thresholds(&Activation::CosSin, 0.5)
            .unwrap()
            .exact()
            .unwrap();
        let th = if th.s_plus > 0.0 { th.mirror() } else { th };
        assert!(
            (th.s_minus + 0.867).abs() < 2e-3 && (th.s_plus + 0.310).abs() < 2e-3,
            "{th:?}"
        );
    }

    #[test]
    fn infeasible_tau_asks_for_rescaling() {
        for (act, tau, edge) in [(Activation::CosSin, 1.0, 0.6), (Activation::Relu, 2.0, 1.3)] {
            let sol = solve_thresholds(&act, tau).unwrap();
            let ThresholdSolution::Infeasible {
                best,
                feasible_tau,
                scale,
                target,
                ..
            } = sol
            else {
                panic!("{act:?} at tau={tau} should be infeasible")
            };
            eprintln!("{act:?} tau={tau}: feasible up to {feasible_tau:.6}, scale {scale:.6}");
            // Edge roughly where the research notes found it (grid 0.05).
            assert!(
                (feasible_tau - edge).abs() < 0.1,
                "{act:?}: edge {feasible_tau}"
            );
            assert!(scale < 1.0);
            // Rescaled data (tau * scale^2) is feasible and exact.
            let new_tau = tau * scale * scale;
            assert!(solve_thresholds(&act, new_tau).unwrap().exact().is_some());
            // Just above the edge is infeasible.
            assert!(solve_thresholds(&act, feasible_tau * 1.01)
                .unwrap()
                .exact()
                .is_none());
            // Best effort matches d1 but falls short on d2.
            let b = best.unwrap().moments();
            assert!(rel(b.d1, target.d1) < 1e-10 && b.d2 < target.d2);
        }
        assert!(solve_thresholds(&Activation::Abs, 1.0).is_err()); // d1 = 0
        assert!(solve_thresholds(&Activation::Relu, -1.0).is_err());
        assert!(Thresholds::new(1.0, 0.0, 1.0).is_err());
    }
}
