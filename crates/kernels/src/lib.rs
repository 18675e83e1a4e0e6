//! # rfx-kernels
//!
//! The exact kernels of rfx, each written once, with their Gram matrices:
//!
//! | kernel | formula | item |
//! |---|---|---|
//! | Gaussian | $\exp(-\Vert x-y\Vert^2/(2\sigma^2))$ (survey Eq. 1) | [`GaussianKernel`], bandwidth heuristic [`median_distance`] |
//! | polynomial | $(\langle x, y\rangle + c)^p$ (survey Eq. 2) | [`PolynomialKernel`] |
//! | arc-cosine, order 0/1 | $\kappa_0(\rho)$, $\Vert x\Vert\Vert y\Vert\kappa_1(\rho)$ (Han et al. 2021, Eq. 6) | [`arccos0`], [`arccos1`], [`ArcCosineKernel`] |
//! | ReLU NTK, depth $L$ | $\Vert x\Vert\Vert y\Vert K^{(L)}(\rho)$ (Han et al. 2021, Eq. 5) | [`relu_ntk`], [`ReluNtk`] |
//! | ReLU NNGP, depth $L$ | $\Vert x\Vert\Vert y\Vert\kappa_1^{\circ L}(\rho)$ (Han et al. 2021, Eq. 4) | [`relu_nngp`], [`ReluNngp`] |
//!
//! **One arc-cosine normalisation.** $\kappa_0(1) = \kappa_1(1) = 1$, i.e. Cho & Saul's $k_n$ with their factor 2
//! (see [`arccos`]); the convention without it ($\mathbb E[\mathrm{ReLU}(w^\top x)\mathrm{ReLU}(w^\top y)]$) is
//! [`ArcCosineKernel::half`]. The random features, sketches and series that approximate these kernels live in
//! `rfx-sampling`, `rfx-sketches`, `rfx-ntk`, `rfx-gzk` and `rfx-ternary`, and take their targets from here.
//!
//! ```
//! use ndarray::array;
//! use rfx_core::Kernel;
//! use rfx_kernels::{relu_ntk, ReluNtk};
//!
//! // The depth-1 ReLU NTK Θ(x, y) = ‖x‖‖y‖ K⁽¹⁾(ρ), with K⁽¹⁾(1) = 2 and K⁽¹⁾(0) = 1/π.
//! let ntk = ReluNtk::new(1).unwrap();
//! let x = array![[3.0, 0.0], [0.0, 2.0]];
//! let g = ntk.gram_sym(x.view()).unwrap();
//! assert_eq!(g[[0, 0]], 2.0 * 9.0);
//! assert!((g[[0, 1]] - 6.0 * relu_ntk(1, 0.0)).abs() < 1e-15);
//! assert!((relu_ntk(1, 0.0) - 1.0 / std::f64::consts::PI).abs() < 1e-16);
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS for `.dot` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod arccos;
mod cosine;
pub mod gaussian;
pub mod polynomial;
pub mod relu;

pub use arccos::{arccos0, arccos1, ArcCosineKernel, ArcCosineOrder};
pub use cosine::row_norms;
pub use gaussian::{median_distance, GaussianKernel};
pub use polynomial::{PolynomialKernel, MAX_POLY_KERNEL_DEGREE};
pub use relu::{
    check_depth, ntk_nngp_recursion, relu_nngp, relu_ntk, ReluNngp, ReluNtk, MAX_DEPTH,
};
