//! # rfx-solvers
//!
//! Downstream solvers and spectral measurements shared by all rfx experiments:
//!
//! * [`ridge`]: ridge regression / classification on features (primal or dual, explicit λ convention),
//!   λ selection by cross-validation reusing one eigendecomposition per fold, exact kernel ridge regression;
//! * [`classify`]: L2 logistic regression (binary / softmax, L-BFGS) and linear SVM (LIBLINEAR dual
//!   coordinate descent, one-vs-rest);
//! * [`design`]: greedy experimental design (active learning) with random features;
//! * [`kmeans`]: k-means on feature maps (linfa-clustering) and the exact kernel k-means objective;
//! * [`nystrom`]: Nyström features with uniform or recursive ridge-leverage-score landmarks;
//! * [`spectral`]: generalized condition number, spectral-approximation ε, kernel approximation errors,
//!   statistical dimension;
//! * [`metrics`]: MSE, RMSE, accuracy, timing.
//!
//! The BLAS/LAPACK wrappers they use (Cholesky, `dsyevd`, `dsyrk` Grams, memory caps) are in `rfx-linalg`.
//!
//! Invalid parameters and shapes are [`rfx_core::RfxError`]s, never panics.
//!
//! Ridge regression on features, [`ridge::Ridge`]: the primal solution $W = (Z^\top Z + \lambda I)^{-1}Z^\top Y$ and
//! the dual one $W = Z^\top(ZZ^\top + \lambda I)^{-1}Y$ are the same (push-through identity), and noise-free
//! targets $Y = ZW_\star$ are recovered as $\lambda \to 0$:
//!
//! ```
//! use ndarray::array;
//! use rfx_solvers::ridge::{Ridge, RidgeForm, RidgeParams};
//!
//! let z = array![[1.0, 0.2, -0.3], [0.4, -1.1, 0.5], [-0.6, 0.3, 0.9],
//!                [0.8, 0.7, 0.1], [-0.2, -0.5, -1.2], [0.3, 1.0, 0.4]];
//! let w_star = array![[1.0], [-2.0], [0.5]];
//! let y = z.dot(&w_star);
//!
//! let primal = Ridge::fit(z.view(), y.view(), &RidgeParams::new(0.1).form(RidgeForm::Primal))?;
//! let dual = Ridge::fit(z.view(), y.view(), &RidgeParams::new(0.1).form(RidgeForm::Dual))?;
//! assert!((primal.weights() - dual.weights()).iter().all(|e| e.abs() < 1e-12));
//! // The weights solve the normal equations (ZᵀZ + λI)W = ZᵀY.
//! let lhs = z.t().dot(&z).dot(primal.weights()) + 0.1 * primal.weights();
//! assert!((&lhs - &z.t().dot(&y)).iter().all(|e| e.abs() < 1e-12));
//!
//! let exact = Ridge::fit(z.view(), y.view(), &RidgeParams::new(1e-12))?;
//! assert!((exact.weights() - &w_star).iter().all(|e| e.abs() < 1e-9));
//! assert!((exact.predict(z.view())? - &y).iter().all(|e| e.abs() < 1e-9));
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

// Forces the libopenblas link for every binary/test/bench (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod classify;
pub mod design;
pub mod kmeans;
pub mod metrics;
pub mod nystrom;
pub mod ridge;
pub mod spectral;
mod svm_newton;

#[cfg(test)]
mod testutil;
