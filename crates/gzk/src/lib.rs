//! # rfx-gzk: Gegenbauer polynomials and series
//!
//! The one-dimensional mathematics behind *Random Gegenbauer Features for Scalable Kernel Methods*
//! (Insu Han, Amir Zandieh, Haim Avron, ICML 2022), used by the generalized-zonal-kernel feature maps and by
//! the Figure-1 experiment (Taylor vs. Gegenbauer approximation of $e^{2t}$ and of the two-layer ReLU NTK).
//!
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
//! * [`ntk`]: the arc-cosine functions, the depth-$L$ ReLU NTK $K^{(L)}(t)$ (Lemma 16; Sec. 6.1) and its exact
//!   Taylor series at 0 by truncated power-series arithmetic.
//! * [`series`]: truncated series $\sum_{\ell\le q} c_\ell\phi_\ell(t)$ with Clenshaw evaluation, the named
//!   functions of Figure 1 ([`ScalarFunction`]) and the sup-norm error on an equispaced grid.
//!
//! Conventions: $d \ge 2$ is the ambient dimension (sphere $\mathbb{S}^{d-1}$); degrees are `usize`; invalid
//! parameters are [`rfx_core::RfxError::InvalidParameter`] errors from every fallible function (the
//! infallible scalar polynomial evaluators return NaN for $d < 2$ instead).
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

pub mod coefficients;
pub mod gegenbauer;
pub mod harmonics;
pub mod ntk;
pub mod quadrature;
pub mod series;

pub use coefficients::{
    exp_gegenbauer_coefficients, exp_taylor_coefficients, gegenbauer_coefficients,
    gegenbauer_coefficients_angular, gegenbauer_coefficients_with,
};
pub use gegenbauer::{
    gegenbauer, gegenbauer_all, gegenbauer_explicit, gegenbauer_for_each, gegenbauer_stack, Basis,
};
pub use harmonics::{alpha, ln_alpha, sphere_area_ratio};
pub use ntk::{arccos0, arccos1, relu_ntk, relu_ntk_taylor};
pub use quadrature::{gauss_gegenbauer, gauss_jacobi, gauss_legendre, Quadrature, MAX_NODES};
pub use series::{
    grid_point, sup_distance, sup_error, ScalarFunction, Series, NTK_QUADRATURE_NODES,
    SUP_GRID_POINTS,
};
