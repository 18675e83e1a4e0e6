//! The arc-cosine functions $\kappa_0$, $\kappa_1$ and the arc-cosine kernels of order 0 and 1.
//!
//! **The one normalisation of the workspace.** With $\rho = \cos\theta = \langle x, y\rangle/(\Vert x\Vert\Vert y\Vert)$,
//! $$\kappa_0(\rho) = 1 - \frac{\arccos\rho}{\pi},\qquad
//!   \kappa_1(\rho) = \frac{\sqrt{1-\rho^2} + \rho\thinspace(\pi - \arccos\rho)}{\pi},$$
//! so that $\kappa_0(1) = \kappa_1(1) = 1$ (Han et al. 2021, Eq. 6; Zandieh et al. 2021, Eq. 2; Zandieh et al.
//! ICML 2022, Sec. 6.1 and Lemma 16; the authors' code). These are Cho & Saul's (2009) kernels
//! $k_n(x, y) = 2\thinspace\mathbb E_{w\sim\mathcal N(0, I)}[\Theta(w^\top x)\Theta(w^\top y)(w^\top x)^n(w^\top y)^n]
//! = \frac1\pi\Vert x\Vert^n\Vert y\Vert^n J_n(\theta)$ with $J_0 = \pi - \theta$, $J_1 = \sin\theta + (\pi-\theta)\cos\theta$:
//! $$A_0(x, y) = k_0(x, y) = \kappa_0(\rho),\qquad A_1(x, y) = k_1(x, y) = \Vert x\Vert\Vert y\Vert\thinspace\kappa_1(\rho).$$
//! **Other conventions, expressed through this one.** Without Cho & Saul's factor 2 (neural-tangents; the
//! ternary-features paper's ReLU features $\max(0, Wx)/\sqrt m$, Tiomoko Ali et al. 2022, Sec. 4; the survey's
//! Eq. 6, Liu et al. 2021, §2):
//! $\mathbb E_w[\mathrm{Step}(w^\top x)\mathrm{Step}(w^\top y)] = \kappa_0(\rho)/2$ and
//! $\mathbb E_w[\mathrm{ReLU}(w^\top x)\mathrm{ReLU}(w^\top y)] = \Vert x\Vert\Vert y\Vert\kappa_1(\rho)/2$
//! ([`ArcCosineKernel::half`]).
//!
//! Also $\kappa_1^\prime = \kappa_0$ and $\kappa_0^\prime(\rho) = 1/(\pi\sqrt{1-\rho^2})$.

use ndarray::{Array2, ArrayView1, ArrayView2};
use rfx_core::{Kernel, Result, RfxError};
use std::f64::consts::{FRAC_1_PI, PI};

use crate::cosine::CosineKernel;

/// $\kappa_0(t) = 1 - \arccos(t)/\pi$, the degree-0 arc-cosine function (derivative of [`arccos1`]).
/// `t` is clamped to $[-1, 1]$ so round-off in a cosine never produces NaN; $\kappa_0(-1) = 0$, $\kappa_0(1) = 1$.
pub fn arccos0(t: f64) -> f64 {
    1.0 - t.clamp(-1.0, 1.0).acos() * FRAC_1_PI
}

/// $\kappa_1(t) = \big(\sqrt{1-t^2} + t(\pi - \arccos t)\big)/\pi$, the degree-1 arc-cosine function.
/// `t` is clamped to $[-1, 1]$; $\sqrt{1-t^2}$ is computed as $\sqrt{(1-t)(1+t)}$ (no cancellation near
/// $\pm1$). $\kappa_1(-1) = 0$, $\kappa_1(0) = 1/\pi$, $\kappa_1(1) = 1$, and $\kappa_1^\prime = \kappa_0$.
pub fn arccos1(t: f64) -> f64 {
    let t = t.clamp(-1.0, 1.0);
    (((1.0 - t) * (1.0 + t)).sqrt() + t * (PI - t.acos())) * FRAC_1_PI
}

/// Order of an arc-cosine kernel or feature map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArcCosineOrder {
    /// Order 0, $A_0 = \kappa_0(\rho)$ (Step activation).
    Zero,
    /// Order 1, $A_1 = \Vert x\Vert\Vert y\Vert\kappa_1(\rho)$ (ReLU activation).
    One,
}

impl ArcCosineOrder {
    /// The order from an integer (0 or 1).
    pub fn from_int(order: usize) -> Result<Self> {
        match order {
            0 => Ok(Self::Zero),
            1 => Ok(Self::One),
            _ => Err(RfxError::invalid("order", order, "0 or 1")),
        }
    }
}

/// The arc-cosine kernel of order 0 or 1 (Cho & Saul 2009; Han et al. 2021, Eq. 6), normalised so that
/// $A_0(x,x) = 1$ and $A_1(x,x) = \Vert x\Vert^2$ (module docs): $A_0 = \kappa_0(\rho)$, $A_1 = \Vert x\Vert\Vert y\Vert\kappa_1(\rho)$.
/// A zero vector gives 0 (the value of the random features, $\mathrm{Step}(0) = 0$).
///
/// ```
/// use ndarray::array;
/// use rfx_core::Kernel;
/// use rfx_kernels::{ArcCosineKernel, ArcCosineOrder};
///
/// let a1 = ArcCosineKernel::new(ArcCosineOrder::One);
/// let (x, y) = (array![2.0, 0.0], array![0.0, 3.0]);
/// // orthogonal rows: ‖x‖‖y‖ κ1(0) = 6/π; and A1(x, x) = ‖x‖²
/// assert!((a1.eval(x.view(), y.view()) - 6.0 / std::f64::consts::PI).abs() < 1e-15);
/// assert_eq!(a1.eval(x.view(), x.view()), 4.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArcCosineKernel {
    order: ArcCosineOrder,
    scale: f64,
}

impl ArcCosineKernel {
    /// The kernel of the given order ($A_0$ or $A_1$).
    pub const fn new(order: ArcCosineOrder) -> Self {
        Self { order, scale: 1.0 }
    }

    /// Half the kernel: $\mathbb E_w[\sigma(w^\top x)\sigma(w^\top y)]$ for $w \sim \mathcal N(0, I)$ with
    /// $\sigma = \mathrm{Step}$ (order 0) or $\mathrm{ReLU}$ (order 1), the convention without Cho & Saul's
    /// factor 2 (module docs).
    pub const fn half(order: ArcCosineOrder) -> Self {
        Self { order, scale: 0.5 }
    }

    /// The order.
    pub fn order(&self) -> ArcCosineOrder {
        self.order
    }

    /// Gram matrix $K(X, X)$ with the diagonal cosine set to exactly 1.
    pub fn gram_sym(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut k = self.gram_blocked(x, x, true)?;
        self.rescale(&mut k);
        Ok(k)
    }

    fn rescale(&self, k: &mut Array2<f64>) {
        if self.scale != 1.0 {
            k.mapv_inplace(|v| v * self.scale);
        }
    }
}

impl CosineKernel for ArcCosineKernel {
    fn homogeneous(&self) -> bool {
        self.order == ArcCosineOrder::One
    }
    fn f(&self, rho: f64) -> f64 {
        match self.order {
            ArcCosineOrder::Zero => arccos0(rho),
            ArcCosineOrder::One => arccos1(rho),
        }
    }
}

impl Kernel for ArcCosineKernel {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.scale * self.eval_pair(x, y)
    }
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut k = self.gram_blocked(x, y, false)?;
        self.rescale(&mut k);
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_values_and_clamping() {
        assert_eq!(arccos0(1.0), 1.0);
        assert_eq!(arccos0(-1.0), 0.0);
        assert_eq!(arccos0(0.0), 0.5);
        assert_eq!(arccos1(1.0), 1.0);
        assert_eq!(arccos1(-1.0), 0.0);
        assert!((arccos1(0.0) - FRAC_1_PI).abs() < 1e-17);
        // Clamping: slightly out-of-range cosines stay finite and equal the endpoint values.
        assert_eq!(arccos1(1.0 + 1e-12), 1.0);
        assert_eq!(arccos0(-1.0 - 1e-12), 0.0);
    }

    #[test]
    fn arccos1_derivative_is_arccos0() {
        // Central differences: error h²/6 |κ1'''| + ε/h; at |t| ≤ 0.9, |κ1'''| ≤ 1/(π (1−t²)^{3/2}) < 4.
        let h = 1e-5;
        for i in 0..=18 {
            let t = -0.9 + 0.1 * i as f64;
            let fd = (arccos1(t + h) - arccos1(t - h)) / (2.0 * h);
            assert!((fd - arccos0(t)).abs() < 1e-9, "t={t}");
        }
    }

    #[test]
    fn half_is_half() {
        let x = ndarray::array![[1.0, 2.0, -1.0], [0.5, -0.3, 2.0], [0.0, 0.0, 0.0]];
        for order in [ArcCosineOrder::Zero, ArcCosineOrder::One] {
            let full = ArcCosineKernel::new(order)
                .gram(x.view(), x.view())
                .unwrap();
            let half = ArcCosineKernel::half(order)
                .gram(x.view(), x.view())
                .unwrap();
            assert_eq!(half, full.mapv(|v| 0.5 * v));
            let hs = ArcCosineKernel::half(order).gram_sym(x.view()).unwrap();
            let fs = ArcCosineKernel::new(order).gram_sym(x.view()).unwrap();
            assert_eq!(hs, fs.mapv(|v| 0.5 * v));
            let e = ArcCosineKernel::half(order).eval(x.row(0), x.row(1));
            assert_eq!(
                e,
                0.5 * ArcCosineKernel::new(order).eval(x.row(0), x.row(1))
            );
        }
    }
}
