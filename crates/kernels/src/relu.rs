//! The depth-$L$ ReLU neural tangent kernel (NTK) and NNGP kernel: the dual-activation recursion.
//!
//! With the arc-cosine functions $\kappa_0$, $\kappa_1$ of [`crate::arccos`] (normalised to $\kappa(1) = 1$), the
//! depth-$L$ ReLU NTK of a bias-free fully connected network on unit vectors is $K^{(L)}(\rho)$ with
//! $$\Sigma^{(0)} = K^{(0)} = \rho,\qquad \Sigma^{(h)} = \kappa_1(\Sigma^{(h-1)}),\quad
//!   \dot\Sigma^{(h)} = \kappa_0(\Sigma^{(h-1)}),\quad K^{(h)} = K^{(h-1)}\dot\Sigma^{(h)} + \Sigma^{(h)}$$
//! (Jacot et al. 2018; Arora et al. 2019; Han et al. 2021, Eqs. 1, 2, 5; Zandieh et al. 2021, Definition 1 and
//! Eq. 5; the Gegenbauer paper, Zandieh et al. ICML 2022, Sec. 6.1 and Lemma 16). $L$ counts the hidden layers;
//! $K^{(L)}(1) = L + 1$, and $K^{(2)}$ is the Gegenbauer paper's "two-layer ReLU NTK" of Fig. 1
//! ($K^{(2)}(0) = 0.6857086363$, $K^{(2)}(-1) = 1/\pi$). The NNGP function is $\Sigma^{(L)} = \kappa_1^{\circ L}$.
//!
//! With $\rho = \langle x, y\rangle/(\Vert x\Vert\Vert y\Vert)$:
//! * [`ReluNtk`]: $\Theta^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace K^{(L)}(\rho)$ and [`ReluNngp`]:
//!   $\Sigma^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace\kappa_1^{\circ L}(\rho)$. These equal the matrix recursion of Han et al.
//!   2021, Eq. 5 ($K^{(0)} = XX^\top$, $K_{\rm NNGP}^{(\ell)} = F_1(K_{\rm NNGP}^{(\ell-1)})$,
//!   $K_{\rm NTK}^{(\ell)} = K_{\rm NNGP}^{(\ell)} + K_{\rm NTK}^{(\ell-1)} \odot F_0(K_{\rm NNGP}^{(\ell-1)})$) because $F_1$
//!   keeps the diagonal ($K_{\rm NNGP}^{(\ell)}(x,x) = \Vert x\Vert^2$), so every layer sees the same normalised cosine
//!   chain; [`ntk_nngp_recursion`] implements Eq. 5 literally as a test oracle. $\Theta^{(L)}(x,x) = (L+1)\Vert x\Vert^2$.
//!
//! Cosines, zero vectors, near-parallel pairs and the blocked Gram are as in the `cosine` module (crate docs).

use ndarray::{Array2, ArrayView1, ArrayView2};
use rfx_core::{Kernel, Result, RfxError};

use crate::arccos::{arccos0, arccos1};
use crate::cosine::CosineKernel;

/// Largest depth accepted by the kernels and feature maps (a guard against absurd values).
pub const MAX_DEPTH: usize = 1000;

/// The depth-`depth` ReLU NTK $K^{(L)}(t)$ of the module documentation (Zandieh et al. 2021, Eq. 5) (`depth = 0` gives $t$).
/// `t` is clamped to $[-1, 1]$. Finite everywhere, with $K^{(L)}(1) = L + 1$.
pub fn relu_ntk(depth: usize, t: f64) -> f64 {
    let t = t.clamp(-1.0, 1.0);
    let (mut sigma, mut k) = (t, t);
    for _ in 0..depth {
        let sigma_dot = arccos0(sigma);
        sigma = arccos1(sigma);
        k = k * sigma_dot + sigma;
    }
    k
}

/// The depth-$L$ ReLU NNGP function $\Sigma^{(L)}(\rho) = \kappa_1^{\circ L}(\rho)$ (Zandieh et al. 2021, Eq. 3;
/// $L = 0$ gives $\rho$). $\rho$ is clamped to $[-1, 1]$; $\Sigma^{(L)}(1) = 1$.
pub fn relu_nngp(depth: usize, rho: f64) -> f64 {
    let mut s = rho.clamp(-1.0, 1.0);
    for _ in 0..depth {
        s = arccos1(s);
    }
    s
}

/// Checks a depth: [`RfxError::InvalidParameter`] unless `min <= depth <=` [`MAX_DEPTH`].
pub fn check_depth(depth: usize, min: usize) -> Result<()> {
    if depth < min || depth > MAX_DEPTH {
        Err(RfxError::invalid(
            "depth",
            depth,
            format!("an integer in {min}..={MAX_DEPTH}"),
        ))
    } else {
        Ok(())
    }
}

/// A kernel $\Vert x\Vert\Vert y\Vert f_L(\rho)$ of depth $L$: its constructor, accessors and [`Kernel`] implementation.
macro_rules! depth_kernel {
    ($name:ident, $f:expr) => {
        impl $name {
            /// The kernel of depth `depth` (at most [`MAX_DEPTH`]).
            pub fn new(depth: usize) -> Result<Self> {
                check_depth(depth, 0)?;
                Ok(Self { depth })
            }

            /// The depth $L$.
            pub fn depth(&self) -> usize {
                self.depth
            }

            /// Gram matrix $K(X, X)$ with the diagonal cosine set to exactly 1.
            pub fn gram_sym(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
                self.gram_blocked(x, x, true)
            }
        }

        impl CosineKernel for $name {
            fn homogeneous(&self) -> bool {
                true
            }
            fn f(&self, rho: f64) -> f64 {
                $f(self.depth, rho)
            }
        }

        impl Kernel for $name {
            fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
                self.eval_pair(x, y)
            }
            fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
                self.gram_blocked(x, y, false)
            }
        }
    };
}

/// The depth-$L$ ReLU neural tangent kernel of a fully connected network without biases (Han et al. 2021,
/// Eqs. 1, 2, 5; Zandieh et al. 2021, Definition 1 and Eq. 5):
/// $\Theta^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace K^{(L)}(\rho)$ with $K^{(0)} = \Sigma^{(0)} = \rho$,
/// $K^{(\ell)} = K^{(\ell-1)}\kappa_0(\Sigma^{(\ell-1)}) + \kappa_1(\Sigma^{(\ell-1)})$, $\Sigma^{(\ell)} = \kappa_1(\Sigma^{(\ell-1)})$.
/// $L$ is the number of hidden layers ($L = 1$ is the "two-layer network"); $L = 0$ is the linear kernel.
/// $\Theta^{(L)}(x, x) = (L+1)\Vert x\Vert^2$; for $L = 1$, $\Theta = A_1 + A_0 \odot XX^\top$ (Han et al. Eq. 71).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReluNtk {
    depth: usize,
}

depth_kernel!(ReluNtk, relu_ntk);

/// The depth-$L$ ReLU NNGP kernel $\Sigma^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace\kappa_1^{\circ L}(\rho)$ (Han et al. 2021, Eq. 4
/// and 5): the covariance of the output of the random network of Eq. 1. $\Sigma^{(L)}(x,x) = \Vert x\Vert^2$.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReluNngp {
    depth: usize,
}

depth_kernel!(ReluNngp, relu_nngp);

/// Han et al. 2021, Eq. 5 implemented literally on $n \times n$ matrices (a slow, obviously-correct oracle):
/// returns $(K_{\rm NTK}^{(L)}, K_{\rm NNGP}^{(L)})$ for the rows of `x`. $\lbrack F_1(K)\rbrack_{ij} = \sqrt{K_{ii}K_{jj}}\thinspace
/// \kappa_1(K_{ij}/\sqrt{K_{ii}K_{jj}})$, $\lbrack F_0(K)\rbrack_{ij} = \kappa_0(\cdot)$; entries with $K_{ii}K_{jj} = 0$ are 0.
pub fn ntk_nngp_recursion(
    x: ArrayView2<'_, f64>,
    depth: usize,
) -> Result<(Array2<f64>, Array2<f64>)> {
    check_depth(depth, 0)?;
    let n = x.nrows();
    let mut nngp = x.dot(&x.t());
    let mut ntk = nngp.clone();
    for _ in 0..depth {
        let diag: Vec<f64> = (0..n).map(|i| nngp[[i, i]]).collect();
        let mut f0 = Array2::zeros((n, n));
        let mut f1 = Array2::zeros((n, n));
        for i in 0..n {
            for j in 0..n {
                let p = (diag[i] * diag[j]).sqrt();
                if p > 0.0 {
                    let r = (nngp[[i, j]] / p).clamp(-1.0, 1.0);
                    f0[[i, j]] = arccos0(r);
                    f1[[i, j]] = p * arccos1(r);
                }
            }
        }
        ntk = &f1 + &(&ntk * &f0);
        nngp = f1;
    }
    Ok((ntk, nngp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_1_PI;

    #[test]
    fn endpoint_and_reference_values() {
        assert_eq!(relu_ntk(2, -1.0 - 1e-12), relu_ntk(2, -1.0));
        assert!((relu_ntk(2, 1.0) - 3.0).abs() < 1e-15);
        assert!((relu_ntk(2, 0.0) - 0.685_708_636_3).abs() < 1e-10);
        assert!((relu_ntk(2, -1.0) - FRAC_1_PI).abs() < 1e-16);
        for l in 0..6 {
            assert!((relu_ntk(l, 1.0) - (l + 1) as f64).abs() < 1e-14);
            assert!((relu_nngp(l, 1.0) - 1.0).abs() < 1e-15);
        }
        // K^(1)(t) = t κ0(t) + κ1(t) and K^(2) as printed in Sec. 6.1 of the Gegenbauer paper.
        for i in 0..=200 {
            let t = -1.0 + i as f64 / 100.0;
            assert!((relu_ntk(1, t) - (t * arccos0(t) + arccos1(t))).abs() < 1e-15);
            let a1 = arccos1(t);
            let k2 = arccos1(a1) + (a1 + t * arccos0(t)) * arccos0(a1);
            assert!((relu_ntk(2, t) - k2).abs() < 1e-15);
            assert_eq!(relu_nngp(2, t), arccos1(arccos1(t)));
        }
        assert!(check_depth(MAX_DEPTH + 1, 0).is_err() && check_depth(0, 1).is_err());
    }
}
