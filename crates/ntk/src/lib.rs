//! # rfx-ntk
//!
//! Random features and sketches of the arc-cosine kernels and the depth-L ReLU neural tangent kernel (NTK) (Han et al. 2021, *Random Features for the Neural Tangent Kernel*; Zandieh et al. 2021,
//! *Scaling Neural Tangent Kernels via Sketching and Random Features*), including the exact convolutional NTK
//! and CNTKSketch. The exact kernels they approximate (κ0, κ1, the NTK/NNGP recursion and their Grams) are in
//! `rfx-kernels`.

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS for `.dot` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod arccos;
pub mod baselines;
pub mod cnn_gradrf;
pub mod cntk;
pub mod cntksketch;
pub mod gram;
pub mod ntkrf;
pub mod ntksketch;
pub mod qp;

pub use arccos::{ArcCosineFeatures, ArcCosineParams, Sampler};
pub use baselines::{GradRf, GradRfParams, NaiveRf, NaiveRfParams, DEFAULT_NAIVE_MEMORY_CAP};
pub use cnn_gradrf::{CnnGradRf, CnnGradRfParams};
pub use cntk::{Cntk, Duals, ReluDuals};
pub use cntksketch::{CntkPolynomials, CntkSketch, CntkSketchParams, PolynomialCntk};
pub use gram::{chunked_gram, feature_gram, feature_gram_error, GramAccumulator};
pub use ntkrf::{NtkRandomFeatures, NtkRfParams, PairSketch};
pub use ntksketch::{
    fit_ntk_polynomial, NtkPolynomial, NtkSketch, NtkSketchParams, MAX_POLY_DEGREE,
};
