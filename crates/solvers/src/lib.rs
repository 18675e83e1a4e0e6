//! # rfx-solvers
//!
//! Downstream solvers and spectral measurements shared by all rfx experiments:
//!
//! * [`linalg`]: Cholesky, symmetric eigendecomposition (`dsyevd`), Gram matrices by `dsyrk`, memory caps;
//! * [`ridge`]: ridge regression / classification on features (primal or dual), λ selection by
//!   cross-validation reusing one eigendecomposition per fold, exact kernel ridge regression;
//! * [`spectral`]: generalized condition number, spectral-approximation ε, kernel approximation errors,
//!   statistical dimension.

// Forces the libopenblas link for every binary/test/bench (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod linalg;

#[cfg(test)]
mod testutil;
pub mod metrics;
pub mod ridge;
pub mod spectral;
pub mod nystrom;
pub mod kmeans;
