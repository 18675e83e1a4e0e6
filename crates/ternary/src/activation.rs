//! Activations and their generalised Gaussian moments $d_0, d_1, d_2$ (Theorem 1, Table 1).
//!
//! For $z \sim \mathcal N(0,1)$ and the data-dependent variance $\tau = \operatorname{tr}\mathbf C^\circ/p$
//! (estimated by $\hat\tau = \frac1n\sum_i\Vert\mathbf x_i\Vert^2$, Lemma 1; see [`estimate_tau`]):
//! $$d_0 = \operatorname{Var}[\sigma(\sqrt\tau z)] - \tau\thinspace\mathbb E[\sigma^\prime(\sqrt\tau z)]^2,\quad
//!   d_1 = \mathbb E[\sigma^\prime(\sqrt\tau z)]^2,\quad d_2 = \tfrac14\thinspace\mathbb E[\sigma^{\prime\prime}(\sqrt\tau z)]^2 .$$
//! Derivatives are in the distributional sense (Remark 2); by Gaussian integration by parts (Stein),
//! $$\mathbb E[\sigma^\prime(\sqrt\tau z)] = \tau^{-1/2}\thinspace\mathbb E[z\thinspace\sigma(\sqrt\tau z)],\qquad
//!   \mathbb E[\sigma^{\prime\prime}(\sqrt\tau z)] = \tau^{-1}\thinspace\mathbb E[(z^2-1)\thinspace\sigma(\sqrt\tau z)],$$
//! so only $\sigma$ itself is ever evaluated ([`gaussian_expectation`]). A vector activation such as
//! $[\cos, \sin]$ (RFF) has the **sums** of its components' moments, because its kernel is the sum of the
//! components' kernels.
//!
//! The closed forms ([`Activation::closed_form`]) are the research file's *corrected* Table 1: the paper's
//! "$\exp(t)$" row is really $\exp(-t^2/2)$, its "$\max(0,\xi)$" is ReLU and its "$d_3$" column does not exist.

use crate::quadrature::gaussian_expectation;
use ndarray::ArrayView2;
use rfx_core::{Result, RfxError};
use std::f64::consts::PI;

/// An activation $\sigma$, scalar or vector-valued (components are listed by [`Activation::components`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Activation {
    /// $\max(0, t)$ (arc-cosine kernel of order 1).
    Relu,
    /// $|t|$.
    Abs,
    /// $a_+\max(0,t) + a_-\max(0,-t)$.
    LeakyRelu {
        /// Slope $a_+$ on $t > 0$.
        a_plus: f64,
        /// Coefficient $a_-$ of $\max(0, -t)$.
        a_minus: f64,
    },
    /// $a_2t^2 + a_1t + a_0$.
    Quadratic {
        /// $a_2$.
        a2: f64,
        /// $a_1$.
        a1: f64,
        /// $a_0$.
        a0: f64,
    },
    /// $\exp(-t^2/2)$ (Table 1's row printed as "$\exp(t)$").
    GaussBump,
    /// $\exp(t)$.
    Exp,
    /// $\cos t$.
    Cos,
    /// $\sin t$.
    Sin,
    /// $[\cos t, \sin t]$: random Fourier features of the Gaussian kernel $e^{-\Vert x-y\Vert^2/2}$ (footnote 8).
    CosSin,
    /// $t$.
    Linear,
    /// $\operatorname{sign}(t)$.
    Sign,
    /// $1_{t>0}$ (arc-cosine kernel of order 0).
    Step,
    /// $\operatorname{erf}(t)$.
    Erf,
    /// The ternary activation (eq. 5) $\sigma^{ter}(t) = -1_{t<s_-} + 1_{t>s_+}$, $s_- \le s_+$, with
    /// thresholds in the scale of $\mathbf w^\top\mathbf x$ (variance $\tau$).
    Ternary {
        /// $s_-$.
        s_minus: f64,
        /// $s_+$.
        s_plus: f64,
    },
}

/// Moments of one scalar component at variance $\tau$.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComponentMoments {
    /// $\mathbb E[\sigma(\sqrt\tau z)]$.
    pub mean: f64,
    /// $\mathbb E[\sigma^2(\sqrt\tau z)]$.
    pub second: f64,
    /// $\mathbb E[\sigma^\prime(\sqrt\tau z)]$.
    pub d_first: f64,
    /// $\mathbb E[\sigma^{\prime\prime}(\sqrt\tau z)]$.
    pub d_second: f64,
}

/// The moments $d_0, d_1, d_2$ of Theorem 1 (eq. 8) at variance $\tau$, summed over components.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianMoments {
    /// The variance $\tau$ they were computed at.
    pub tau: f64,
    /// $d_0 = \sum_k \operatorname{Var}[\sigma_k] - \tau\thinspace\mathbb E[\sigma_k^\prime]^2$ (the "variance term").
    pub d0: f64,
    /// $d_1 = \sum_k \mathbb E[\sigma_k^\prime]^2$.
    pub d1: f64,
    /// $d_2 = \frac14\sum_k \mathbb E[\sigma_k^{\prime\prime}]^2$.
    pub d2: f64,
    /// Per-component raw moments.
    pub components: Vec<ComponentMoments>,
}

impl GaussianMoments {
    /// Assembles $d_0, d_1, d_2$ from per-component raw moments.
    pub fn from_components(tau: f64, components: Vec<ComponentMoments>) -> Self {
        let (mut d0, mut d1, mut d2) = (0.0, 0.0, 0.0);
        for c in &components {
            d0 += c.second - c.mean * c.mean - tau * c.d_first * c.d_first;
            d1 += c.d_first * c.d_first;
            d2 += 0.25 * c.d_second * c.d_second;
        }
        Self {
            tau,
            d0,
            d1,
            d2,
            components,
        }
    }

    /// $(d_0, d_1, d_2)$.
    pub fn d(&self) -> (f64, f64, f64) {
        (self.d0, self.d1, self.d2)
    }
}

fn check_tau(tau: f64) -> Result<()> {
    if tau.is_finite() && tau > 0.0 {
        Ok(())
    } else {
        Err(RfxError::invalid("tau", tau, "a finite number > 0"))
    }
}

/// $\hat\tau = \frac1n\sum_i \Vert\mathbf x_i\Vert^2$ for the rows of `x` (Lemma 1).
pub fn estimate_tau(x: ArrayView2<'_, f64>) -> Result<f64> {
    if x.nrows() == 0 {
        return Err(RfxError::invalid("n", 0, "at least one row"));
    }
    Ok(x.iter().map(|v| v * v).sum::<f64>() / x.nrows() as f64)
}

/// Standard normal pdf $\phi$.
pub fn std_normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * PI).sqrt()
}

/// Standard normal cdf $\Phi$.
pub fn std_normal_cdf(z: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2)
}

impl Activation {
    /// Number of scalar components (2 for [`Activation::CosSin`], else 1).
    pub fn components(&self) -> usize {
        if matches!(self, Activation::CosSin) {
            2
        } else {
            1
        }
    }

    /// Validates the parameters (finite coefficients, $s_- \le s_+$).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Activation::LeakyRelu { a_plus, a_minus }
                if !(a_plus.is_finite() && a_minus.is_finite()) =>
            {
                Err(RfxError::invalid(
                    "leaky_relu",
                    format!("({a_plus}, {a_minus})"),
                    "finite slopes",
                ))
            }
            Activation::Quadratic { a2, a1, a0 }
                if !(a2.is_finite() && a1.is_finite() && a0.is_finite()) =>
            {
                Err(RfxError::invalid(
                    "quadratic",
                    format!("({a2}, {a1}, {a0})"),
                    "finite coefficients",
                ))
            }
            Activation::Ternary { s_minus, s_plus }
                if !(s_minus.is_finite() && s_plus.is_finite() && s_minus <= s_plus) =>
            {
                Err(RfxError::invalid(
                    "ternary_thresholds",
                    format!("({s_minus}, {s_plus})"),
                    "finite s_minus <= s_plus",
                ))
            }
            _ => Ok(()),
        }
    }

    /// Component `k` of $\sigma(t)$.
    pub fn eval(&self, k: usize, t: f64) -> f64 {
        match *self {
            Activation::Relu => t.max(0.0),
            Activation::Abs => t.abs(),
            Activation::LeakyRelu { a_plus, a_minus } => {
                a_plus * t.max(0.0) + a_minus * (-t).max(0.0)
            }
            Activation::Quadratic { a2, a1, a0 } => (a2 * t + a1) * t + a0,
            Activation::GaussBump => (-0.5 * t * t).exp(),
            Activation::Exp => t.exp(),
            Activation::Cos => t.cos(),
            Activation::Sin => t.sin(),
            Activation::CosSin => {
                if k == 0 {
                    t.cos()
                } else {
                    t.sin()
                }
            }
            Activation::Linear => t,
            Activation::Sign => {
                if t > 0.0 {
                    1.0
                } else if t < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Activation::Step => {
                if t > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Erf => statrs::function::erf::erf(t),
            Activation::Ternary { s_minus, s_plus } => {
                if t > s_plus {
                    1.0
                } else if t < s_minus {
                    -1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// Points (in $t$ units) where $\sigma$ is not smooth.
    pub fn breakpoints(&self) -> Vec<f64> {
        match *self {
            Activation::Relu
            | Activation::Abs
            | Activation::LeakyRelu { .. }
            | Activation::Sign
            | Activation::Step => vec![0.0],
            Activation::Ternary { s_minus, s_plus } => vec![s_minus, s_plus],
            _ => Vec::new(),
        }
    }

    /// Moments by quadrature (Stein identities above; Gauss–Hermite for smooth $\sigma$, panelled
    /// Gauss–Legendre split at the breakpoints otherwise).
    pub fn moments(&self, tau: f64) -> Result<GaussianMoments> {
        check_tau(tau)?;
        self.validate()?;
        let st = tau.sqrt();
        let bps: Vec<f64> = self.breakpoints().iter().map(|b| b / st).collect();
        let comps = (0..self.components())
            .map(|k| {
                let s = |z: f64| self.eval(k, st * z);
                ComponentMoments {
                    mean: gaussian_expectation(s, &bps),
                    second: gaussian_expectation(|z| s(z).powi(2), &bps),
                    d_first: gaussian_expectation(|z| z * s(z), &bps) / st,
                    d_second: gaussian_expectation(|z| (z * z - 1.0) * s(z), &bps) / tau,
                }
            })
            .collect();
        Ok(GaussianMoments::from_components(tau, comps))
    }

    /// Closed-form $(d_0, d_1, d_2)$ at $\tau$ (corrected Table 1; the ternary row from §2.4 of the research
    /// notes), or `None` when there is none here ([`Activation::Exp`] has one and is included).
    ///
    /// | $\sigma$ | $d_0$ | $d_1$ | $d_2$ |
    /// |---|---|---|---|
    /// | $\lvert t\rvert$ | $\tau(1-2/\pi)$ | 0 | $1/(2\pi\tau)$ |
    /// | ReLU | $\frac\tau2(\frac12-\frac1\pi)$ | $\frac14$ | $1/(8\pi\tau)$ |
    /// | $a_+\max(0,t)+a_-\max(0,-t)$ | $\tau(a_++a_-)^2\frac{\pi-2}{4\pi}$ | $(a_+-a_-)^2/4$ | $(a_++a_-)^2/(8\pi\tau)$ |
    /// | $a_2t^2+a_1t+a_0$ | $2\tau^2a_2^2$ | $a_1^2$ | $a_2^2$ |
    /// | $e^{-t^2/2}$ | $(2\tau+1)^{-1/2}-(\tau+1)^{-1}$ | 0 | $\frac14(\tau+1)^{-3}$ |
    /// | $\cos$ | $\frac{1+e^{-2\tau}}2-e^{-\tau}$ | 0 | $e^{-\tau}/4$ |
    /// | $\sin$ | $\frac{1-e^{-2\tau}}2-\tau e^{-\tau}$ | $e^{-\tau}$ | 0 |
    /// | $[\cos,\sin]$ | $1-e^{-\tau}-\tau e^{-\tau}$ | $e^{-\tau}$ | $e^{-\tau}/4$ |
    /// | $t$ | 0 | 1 | 0 |
    /// | sign | $1-2/\pi$ | $2/(\pi\tau)$ | 0 |
    /// | $1_{t>0}$ | $\frac14-\frac1{2\pi}$ | $1/(2\pi\tau)$ | 0 |
    /// | erf | $\frac2\pi\arcsin\frac{2\tau}{1+2\tau}-\frac{4\tau}{\pi(1+2\tau)}$ | $\frac{4}{\pi(1+2\tau)}$ | 0 |
    /// | $e^{t}$ | $e^{2\tau}-e^\tau-\tau e^\tau$ | $e^\tau$ | $e^\tau/4$ |
    ///
    /// The erf row is ours (not in the paper): $\mathbb E[\operatorname{erf}^\prime(\sqrt\tau z)] =
    /// \frac{2}{\sqrt\pi}(1+2\tau)^{-1/2}$ and $\mathbb E[\operatorname{erf}^2(\sqrt\tau z)] =
    /// \frac2\pi\arcsin\frac{2\tau}{1+2\tau}$.
    pub fn closed_form(&self, tau: f64) -> Option<(f64, f64, f64)> {
        let t = tau;
        let e = (-t).exp();
        Some(match *self {
            Activation::Abs => (t * (1.0 - 2.0 / PI), 0.0, 1.0 / (2.0 * PI * t)),
            Activation::Relu => (0.5 * t * (0.5 - 1.0 / PI), 0.25, 1.0 / (8.0 * PI * t)),
            Activation::LeakyRelu { a_plus, a_minus } => {
                let s = a_plus + a_minus;
                let d = a_plus - a_minus;
                (
                    t * s * s * (PI - 2.0) / (4.0 * PI),
                    d * d / 4.0,
                    s * s / (8.0 * PI * t),
                )
            }
            Activation::Quadratic { a2, a1, .. } => (2.0 * t * t * a2 * a2, a1 * a1, a2 * a2),
            Activation::GaussBump => (
                1.0 / (2.0 * t + 1.0).sqrt() - 1.0 / (t + 1.0),
                0.0,
                0.25 / (t + 1.0).powi(3),
            ),
            Activation::Cos => (0.5 * (1.0 + e * e) - e, 0.0, 0.25 * e),
            Activation::Sin => (0.5 * (1.0 - e * e) - t * e, e, 0.0),
            Activation::CosSin => (1.0 - e - t * e, e, 0.25 * e),
            Activation::Linear => (0.0, 1.0, 0.0),
            Activation::Sign => (1.0 - 2.0 / PI, 2.0 / (PI * t), 0.0),
            Activation::Step => (0.25 - 1.0 / (2.0 * PI), 1.0 / (2.0 * PI * t), 0.0),
            Activation::Erf => {
                let r = 1.0 + 2.0 * t;
                (
                    (2.0 / PI) * (2.0 * t / r).asin() - 4.0 * t / (PI * r),
                    4.0 / (PI * r),
                    0.0,
                )
            }
            Activation::Exp => {
                let et = t.exp();
                (et * et - et - t * et, et, 0.25 * et)
            }
            Activation::Ternary { s_minus, s_plus } => {
                let m = ternary_moments(s_minus, s_plus, tau);
                (m.d0, m.d1, m.d2)
            }
        })
    }
}

/// Closed-form moments of the ternary activation (§2.4 of the research notes, thresholds in projection
/// scale): with $u = s_-/\sqrt\tau$, $v = s_+/\sqrt\tau$,
/// $$\mathbb E[\sigma^\prime] = \frac{\phi(u)+\phi(v)}{\sqrt\tau},\quad
///   \mathbb E[\sigma^{\prime\prime}] = \frac{u\phi(u)+v\phi(v)}{\tau},\quad
///   \mathbb E[\sigma] = 1-\Phi(v)-\Phi(u),\quad \mathbb E[\sigma^2] = 1-\Phi(v)+\Phi(u).$$
/// (This replaces the paper's eq. (10), which is printed with wrong constants; see the research notes §6.1.)
pub fn ternary_moments(s_minus: f64, s_plus: f64, tau: f64) -> GaussianMoments {
    let st = tau.sqrt();
    let (u, v) = (s_minus / st, s_plus / st);
    let (pu, pv) = (std_normal_pdf(u), std_normal_pdf(v));
    let c = ComponentMoments {
        mean: 1.0 - std_normal_cdf(v) - std_normal_cdf(u),
        second: 1.0 - std_normal_cdf(v) + std_normal_cdf(u),
        d_first: (pu + pv) / st,
        d_second: (u * pu + v * pv) / tau,
    };
    GaussianMoments::from_components(tau, vec![c])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Activation> {
        vec![
            Activation::Relu,
            Activation::Abs,
            Activation::LeakyRelu {
                a_plus: 1.3,
                a_minus: -0.4,
            },
            Activation::Quadratic {
                a2: 0.7,
                a1: -1.1,
                a0: 0.3,
            },
            Activation::GaussBump,
            Activation::Exp,
            Activation::Cos,
            Activation::Sin,
            Activation::CosSin,
            Activation::Linear,
            Activation::Sign,
            Activation::Step,
            Activation::Erf,
            Activation::Ternary {
                s_minus: -0.9,
                s_plus: 0.4,
            },
        ]
    }

    #[test]
    fn quadrature_matches_corrected_table_1() {
        let mut worst = 0.0f64;
        for act in all() {
            for tau in [0.25, 0.5, 1.0, 1.3, 2.0] {
                let q = act.moments(tau).unwrap();
                let (c0, c1, c2) = act.closed_form(tau).unwrap();
                for (name, a, b) in [("d0", q.d0, c0), ("d1", q.d1, c1), ("d2", q.d2, c2)] {
                    worst = worst.max((a - b).abs() / (1.0 + b.abs()));
                    // Quadrature is accurate to ~1e-13; the largest gaps (2e-11, measured) are in the erf and
                    // ternary rows, whose closed forms call statrs' erf/erfc (about 1e-11 accurate). 1e-10 is
                    // far below any typo in a closed form (the paper's misprints are O(1) errors).
                    assert!(
                        (a - b).abs() <= 1e-10 * (1.0 + b.abs()),
                        "{act:?} tau={tau} {name}: quadrature {a} vs closed form {b}"
                    );
                }
            }
        }
        eprintln!("worst |quadrature - closed form| / (1 + |closed form|) = {worst:.1e}");
    }

    #[test]
    fn reference_values_and_sum_rule() {
        // RFF at tau = 1: (0.2642, 0.3679, 0.0920) (research notes §2.4).
        let m = Activation::CosSin.moments(1.0).unwrap();
        assert!((m.d0 - 0.264_241_117_657_115_4).abs() < 1e-12);
        assert!((m.d1 - (-1.0f64).exp()).abs() < 1e-12);
        let c = Activation::Cos.moments(0.7).unwrap();
        let s = Activation::Sin.moments(0.7).unwrap();
        let cs = Activation::CosSin.moments(0.7).unwrap();
        assert!((c.d0 + s.d0 - cs.d0).abs() < 1e-14 && (c.d2 + s.d2 - cs.d2).abs() < 1e-14);
        // The paper's misprinted eq. (10) d1 = (e^{-s+^2/tau} + e^{-s-^2/tau})^2 / pi^2 is NOT the ternary d1.
        let (sm, sp, tau): (f64, f64, f64) = (-0.9, 0.4, 1.3);
        let paper = ((-sp * sp / tau).exp() + (-sm * sm / tau).exp()).powi(2) / PI.powi(2);
        let q = Activation::Ternary {
            s_minus: sm,
            s_plus: sp,
        }
        .moments(tau)
        .unwrap();
        assert!((paper - q.d1).abs() > 1e-2);
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(Activation::Relu.moments(0.0).is_err());
        assert!(Activation::Relu.moments(f64::NAN).is_err());
        assert!(Activation::Ternary {
            s_minus: 1.0,
            s_plus: 0.0
        }
        .moments(1.0)
        .is_err());
        assert!(estimate_tau(ndarray::Array2::<f64>::zeros((0, 3)).view()).is_err());
    }
}
