//! # rfx-ternary
//!
//! Ternary random features (TRF) of Tiomoko Ali, Liao & Couillet, *Random Matrices in Service of ML
//! Footprint: Ternary Random Features with No Performance Loss* (ICLR 2022), with the corrections of
//! `shared/research/ternary-random-features.md`, and the baselines the paper compares against.
//!
//! * [`activation`]: activations and the moments $d_0, d_1, d_2$ of Theorem 1 at the data variance $\tau$,
//!   by Gauss–Hermite / panelled Gauss–Legendre quadrature ([`quadrature`]) with the corrected Table 1 as
//!   closed forms.
//! * [`thresholds`]: $(s_-, s_+)$ matching $d_1, d_2$ of a target ($[\cos,\sin]$ for the Gaussian kernel, ReLU,
//!   ...) from the *correct* version of eq. (10); when no solution exists the typed result says by how much
//!   to rescale the data.
//! * [`features`]: sparse ternary weights (eq. 4) as index lists, add-only ternary features (Algorithm 1)
//!   bit-packed in two planes, and the popcount Gram matrix; `bits_per_feature` = 2 (the paper counts 1).
//! * [`baselines`]: RFF, LP-RFF ($b$-bit unbiased stochastic rounding, Zhang et al. 2019), ReLU random
//!   features and the arc-cosine kernel of order 1.
//! * [`equivalent`]: Gaussian mixtures (eq. 7), the asymptotic equivalent $\tilde{\mathbf K}$ (eq. 8),
//!   Monte Carlo expected kernels for several laws of $W$ and a spectral norm.
//!
//! ```
//! use rfx_core::{rng_stream, FeatureMap};
//! use rfx_ternary::{solve_thresholds, Activation, TernaryParams, ThresholdSolution};
//!
//! // ReLU target at tau = 1 is feasible; the Gaussian kernel ([cos, sin]) needs tau <= 2/pi.
//! let th = solve_thresholds(&Activation::Relu, 1.0).unwrap().exact().unwrap();
//! let trf = TernaryParams::new(256).sparsity(0.5).fit(10, th, &mut rng_stream(0, "trf")).unwrap();
//! assert_eq!(trf.bits_per_feature(), 2.0);
//! // The popcount Gram of the bit-packed codes is the Gram of the unpacked {-1, 0, 1} codes, exactly.
//! let x = ndarray::Array2::from_shape_fn((5, 10), |(i, j)| ((i * 10 + j) as f64 * 0.37).sin());
//! let codes = trf.transform_packed(x.view()).unwrap();
//! let unpacked = codes.unpack();
//! assert!(unpacked.iter().all(|&v| v == -1.0 || v == 0.0 || v == 1.0));
//! assert_eq!(codes.gram().mapv(|v| v as f64), unpacked.dot(&unpacked.t()));
//! match solve_thresholds(&Activation::CosSin, 1.0).unwrap() {
//!     ThresholdSolution::Infeasible { scale, .. } => assert!(scale < 1.0),
//!     ThresholdSolution::Exact { .. } => unreachable!(),
//! }
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS for `.dot` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod activation;
pub mod baselines;
pub mod equivalent;
pub mod features;
pub mod quadrature;
pub mod thresholds;

pub use activation::{
    estimate_tau, ternary_moments, Activation, ComponentMoments, GaussianMoments,
};
pub use baselines::{LpRff, ReluFeatures, ReluParams, StochasticQuantizer, StreamRoundedLpRff};
pub use equivalent::{
    asymptotic_equivalent, center, mc_expected_kernel, mc_kernel_with_noise, spectral_norm,
    Covariance, GaussianMixture, GmmSample, WeightLaw,
};
pub use features::{
    TernaryCodes, TernaryFeatures, TernaryFit, TernaryParams, TernaryWeights, TrfFit,
};
pub use quadrature::{gaussian_expectation, GaussHermite, GaussLegendre};
pub use thresholds::{solve_thresholds, ThresholdSolution, Thresholds};
