//! # rfx-ntk
//!
//! Random features and sketches of the arc-cosine kernels and the depth-L ReLU neural tangent kernel (NTK) (Han et al. 2021, *Random Features for the Neural Tangent Kernel*; Zandieh et al. 2021,
//! *Scaling Neural Tangent Kernels via Sketching and Random Features*), including the exact convolutional NTK
//! and CNTKSketch. The exact kernels they approximate (κ0, κ1, the NTK/NNGP recursion and their Grams) are in
//! `rfx-kernels`.
//!
//! The exact depth-$L$ ReLU NTK $\Theta^{(L)}(x, y) = \Vert x\Vert\Vert y\Vert K^{(L)}(\rho)$ has
//! $\Theta^{(L)}(x, x) = (L+1)\Vert x\Vert^2$; NTK random features (Algorithm 1 of Han et al.) approximate it with
//! $m_1 + m_{cs}$ features, exactly unbiased for $L = 1$:
//!
//! ```
//! use ndarray::array;
//! use rfx_core::{rng_stream, FeatureMap, Kernel};
//! use rfx_kernels::ReluNtk;
//! use rfx_ntk::NtkRfParams;
//!
//! let x = array![[0.6, -0.2, 0.3], [0.1, 0.5, -0.4], [-0.3, 0.2, 0.9]];
//! let ntk = ReluNtk::new(1)?;
//! let k = ntk.gram(x.view(), x.view())?;
//! for i in 0..3 {
//!     assert!((k[[i, i]] - 2.0 * x.row(i).dot(&x.row(i))).abs() < 1e-12);
//! }
//!
//! let map = NtkRfParams::han2021(1, 8192, 4096).fit(3, &mut rng_stream(0, "ntk-rf"))?;
//! let z = map.transform(x.view())?;
//! assert_eq!(z.dim(), (3, 8192));
//! let err = (&z.dot(&z.t()) - &k).mapv(|e| e * e).sum().sqrt() / k.mapv(|e| e * e).sum().sqrt();
//! assert!(err < 0.03, "relative Frobenius error {err}"); // 0.008 with this seed
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS for `.dot` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod arccos;
pub mod baselines;
pub mod cnn_gradrf;
pub mod cnn_train;
pub mod cntk;
pub mod cntksketch;
pub mod gram;
pub mod ntkrf;
pub mod ntksketch;
pub mod qp;

pub use arccos::{ArcCosineFeatures, ArcCosineParams, Sampler};
pub use baselines::{GradRf, GradRfParams, NaiveRf, NaiveRfParams, DEFAULT_NAIVE_MEMORY_CAP};
pub use cnn_gradrf::{CnnGradRf, CnnGradRfParams};
pub use cnn_train::{CnnClassifier, CnnClassifierParams, TrainChoice};
pub use cntk::{Cntk, Duals, ReluDuals};
pub use cntksketch::{CntkPolynomials, CntkSketch, CntkSketchParams, PolynomialCntk};
pub use gram::{
    chunked_gram, feature_gram, feature_gram_error, kernel_gram_error, GramAccumulator,
};
pub use ntkrf::{NtkRandomFeatures, NtkRfParams, PairSketch};
pub use ntksketch::{
    fit_ntk_polynomial, NtkPolynomial, NtkSketch, NtkSketchParams, MAX_POLY_DEGREE,
};

rfx_core::impl_fit_on_dim!(
    ArcCosineParams => ArcCosineFeatures,
    GradRfParams => GradRf,
    NaiveRfParams => NaiveRf,
    NtkRfParams => NtkRandomFeatures,
    NtkSketchParams => NtkSketch,
);
