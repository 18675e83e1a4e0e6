//! # rfx-solvers
//!
//! Downstream solvers and spectral measurements shared by all rfx experiments:
//!
//! * [`ridge`]: ridge regression / classification on features (primal or dual, explicit λ convention),
//!   λ selection by cross-validation reusing one eigendecomposition per fold, exact kernel ridge regression;
//! * [`classify`]: L2 logistic regression (binary / softmax, L-BFGS) and linear SVM (LIBLINEAR dual
//!   coordinate descent, one-vs-rest);
//! * [`kmeans`]: k-means on feature maps (linfa-clustering) and the exact kernel k-means objective;
//! * [`nystrom`]: Nyström features with uniform or recursive ridge-leverage-score landmarks;
//! * [`spectral`]: generalized condition number, spectral-approximation ε, kernel approximation errors,
//!   statistical dimension;
//! * [`metrics`]: MSE, RMSE, accuracy, timing.
//!
//! The BLAS/LAPACK wrappers they use (Cholesky, `dsyevd`, `dsyrk` Grams, memory caps) are in `rfx-linalg`.
//!
//! Invalid parameters and shapes are [`rfx_core::RfxError`]s, never panics.

#![warn(missing_docs)]

// Forces the libopenblas link for every binary/test/bench (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod classify;
pub mod kmeans;
pub mod metrics;
pub mod nystrom;
pub mod ridge;
pub mod spectral;

#[cfg(test)]
mod testutil;
