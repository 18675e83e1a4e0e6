//! # rfx-gzk: Gegenbauer polynomials, generalized zonal kernels and random Gegenbauer features
//!
//! *Random Gegenbauer Features for Scalable Kernel Methods* (Insu Han, Amir Zandieh, Haim Avron, ICML 2022):
//! the one-dimensional mathematics (Gegenbauer polynomials and series, used by the Figure-1 experiment),
//! generalized zonal kernels as exact kernels, and random Gegenbauer features as a feature map.
//!
//! * [`zonal`]: generalized zonal kernels (Definition 3),
//!   $k(x,y) = \sum_\ell \langle h_\ell(\Vert x\Vert), h_\ell(\Vert y\Vert)\rangle P_d^\ell(\langle x,y\rangle/\Vert x\Vert\Vert y\Vert)$.
//!   [`Gzk`] is the exact kernel ([`rfx_core::Kernel`], GEMM-based Gram): the Gaussian
//!   $e^{-\Vert x-y\Vert^2/(2\sigma^2)}$ (Lemma 15 on $x/\sigma$), the depth-$L$ ReLU NTK
//!   $\Vert x\Vert\Vert y\Vert K^{(L)}(\cos)$ (Lemma 16, $h_\ell(t) = \sqrt{c_\ell}\thinspace t$), and dot-product kernels from their Taylor
//!   coefficients (Lemma 4, Eqs. 12/22). [`Gzk::truncate`] gives the truncated kernel $k_{q,s}$ ([`TruncatedGzk`],
//!   also a `Kernel`), [`Gzk::zonal`] the unit-norm fast path $\sum_{\ell\le q} c_\ell P_d^\ell$ (Lemma 2).
//! * [`features`]: random Gegenbauer features (Definition 8), [`RandomGegenbauerParams`] →
//!   [`RandomGegenbauerFeatures`] ([`rfx_core::FeatureMap`], dimension $m\cdot s$): $m$ uniform directions,
//!   $z(x)\_{ks+i} = m^{-1/2}\sum_{\ell\le q}\sqrt{\alpha_{\ell,d}}[h_\ell(\Vert x\Vert)]\_i P_d^\ell(\langle\hat x, w_k\rangle)$,
//!   unbiased for $k_{q,s}$; one GEMM plus one pass of the recurrence, cost $O(nmd + nmqs)$.
//! * [`harmonics`]: $\alpha_{\ell,d}$, the dimension of degree-$\ell$ spherical harmonics in $\mathbb{R}^d$
//!   (Eq. 4), exact in integers where possible; the area ratio $|\mathbb{S}^{d-2}|/|\mathbb{S}^{d-1}|$.
//! * [`mod@gegenbauer`]: the normalised Gegenbauer polynomials $P_d^\ell$, $P_d^\ell(1) = 1$ (Eq. 2), by the
//!   three-term recurrence $P_d^{\ell+1} = \frac{(2\ell+d-2)tP_d^\ell - \ell P_d^{\ell-1}}{\ell+d-2}$ (the one
//!   printed in App. J.3 is wrong, see [`gegenbauer::gegenbauer_all`]); $d = 2$ is Chebyshev, $d = 3$
//!   Legendre, $d = \infty$ ([`Basis::Monomial`]) the monomials. Scalar, all-degrees and batched (ndarray)
//!   forms; the batch form is what random Gegenbauer features (Definition 8) need.
//! * [`quadrature`]: Gauss–Jacobi rules for $(1-t)^a(1+t)^b$, in particular the Gegenbauer weight
//!   $(1-t^2)^{(d-3)/2}$ of the orthogonality relation (Eq. 3), for thousands of nodes.
//! * [`coefficients`]: Gegenbauer coefficients of a function (Eq. 7),
//!   $c_\ell = \alpha_{\ell,d}\frac{|\mathbb{S}^{d-2}|}{|\mathbb{S}^{d-1}|}\int_{-1}^1 f(t)P_d^\ell(t)(1-t^2)^{\frac{d-3}{2}}dt$,
//!   by Gauss–Jacobi quadrature in $t$ or by Gauss–Legendre in $\theta = \arccos t$ (for functions with
//!   $\sqrt{1\mp t}$ endpoint behaviour), and in closed form for $e^{\beta t}$.
//! * [`ntk`]: the exact Taylor series at 0 of the depth-$L$ ReLU NTK function $K^{(L)}(t)$ (Lemma 16; Sec. 6.1)
//!   by truncated power-series arithmetic; $K^{(L)}$ and the arc-cosine functions themselves are in
//!   `rfx-kernels`.
//! * [`series`]: truncated series $\sum_{\ell\le q} c_\ell\phi_\ell(t)$ with Clenshaw evaluation, the named
//!   functions of Figure 1 ([`ScalarFunction`]) and the sup-norm error on an equispaced grid.
//!
//! Conventions: $d \ge 2$ is the ambient dimension (sphere $\mathbb{S}^{d-1}$); degrees are `usize`; invalid
//! parameters are [`rfx_core::RfxError::InvalidParameter`] errors from every fallible function (the
//! infallible scalar polynomial evaluators return NaN for $d < 2$ instead).
//!
//! ```
//! use rfx_core::{rng_stream, FeatureMap, Kernel};
//! use rfx_gzk::{Gzk, RandomGegenbauerParams};
//! use ndarray::array;
//!
//! let gauss = Gzk::gaussian(1.0).unwrap();
//! let x = array![[0.3, -0.2, 0.5], [0.0, 0.0, 0.0], [-0.7, 0.1, 0.4]];
//! // The truncated GZK with q = s = 40 is the Gaussian to rounding (Lemma 15).
//! let k = gauss.gram(x.view(), x.view()).unwrap();
//! let k40 = gauss.truncate(3, 40, 40).unwrap().gram(x.view(), x.view()).unwrap();
//! assert!((&k - &k40).iter().all(|e| e.abs() < 1e-12));
//! // Random Gegenbauer features: 256 directions, degree 10, 4 radial terms → 1024 features.
//! let map = RandomGegenbauerParams::new(gauss, 256, 10, 4)
//!     .fit(3, &mut rng_stream(0, "example"))
//!     .unwrap();
//! let z = map.transform(x.view()).unwrap();
//! assert_eq!(z.dim(), (3, 1024));
//! ```
//!
//! ```
//! use rfx_gzk::{alpha, gegenbauer, Basis, ScalarFunction, SUP_GRID_POINTS};
//!
//! assert_eq!(alpha(3, 4), 16.0);
//! assert!((gegenbauer(3, 2, 0.5) - (3.0 * 0.25 - 1.0) / 2.0).abs() < 1e-15); // Legendre P_2
//! let f = ScalarFunction::Exp { beta: 2.0 };
//! let cheb = f.series(Basis::Gegenbauer(2), 10).unwrap();
//! let err = f.sup_error(&cheb, SUP_GRID_POINTS);
//! assert!(err > 5e-8 && err < 7e-8); // Fig. 1: Chebyshev error of exp(2t) at degree 10
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide, so `.dot` calls cblas: link OpenBLAS
// (research/dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod coefficients;
pub mod features;
pub mod gegenbauer;
pub mod harmonics;
pub mod ntk;
pub mod quadrature;
pub mod series;
pub mod zonal;

pub use coefficients::{
    exp_gegenbauer_coefficients, exp_taylor_coefficients, gegenbauer_coefficients,
    gegenbauer_coefficients_angular, gegenbauer_coefficients_with,
};
pub use features::{RandomGegenbauerFeatures, RandomGegenbauerParams, UNIT_NORM_TOLERANCE};
pub use gegenbauer::{
    gegenbauer, gegenbauer_all, gegenbauer_explicit, gegenbauer_for_each, gegenbauer_stack, Basis,
};
pub use harmonics::{alpha, ln_alpha, sphere_area_ratio};
pub use ntk::relu_ntk_taylor;
pub use quadrature::{gauss_gegenbauer, gauss_jacobi, gauss_legendre, Quadrature, MAX_NODES};
pub use series::{
    grid_point, sup_distance, sup_error, ScalarFunction, Series, NTK_QUADRATURE_NODES,
    SUP_GRID_POINTS,
};
pub use zonal::{Gzk, TruncatedGzk, MAX_DEGREE, MAX_RADIAL_TERMS};

rfx_core::impl_fit_on_dim!(RandomGegenbauerParams => RandomGegenbauerFeatures);
