//! # rfx-core
//!
//! The pieces every rfx crate shares:
//!
//! * [`Kernel`]: an exact positive-definite kernel $k(x, y)$ with a (blocked) Gram matrix;
//! * [`FeatureMap`]: a fitted random-feature map $z : \mathbb{R}^d \to \mathbb{R}^m$ with
//!   $\langle z(x), z(y) \rangle \approx k(x, y)$;
//! * [`Fit`]: the parameters of a feature map, which draw (fit) it on the input dimension or on data
//!   ([`FitData`]);
//! * [`WithBias`]: any kernel or map applied to $[x, \beta]$ (a constant input coordinate);
//! * [`NormScaled`]: a dot-product map lifted to the norm form $\|x\|\|y\|\kappa(\langle\hat x,\hat y\rangle)$;
//! * [`RfxError`], the error type of every fallible call (invalid parameters are errors, never panics);
//! * [`rng`]: reproducible random streams derived from an experiment seed and a key, so that results do
//!   not depend on thread count or execution order.

// ndarray's `blas` feature is on workspace-wide: every binary that links an rfx crate needs OpenBLAS for
// `.dot`. rfx-core is below every crate, so the link is forced here (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod bias;
pub mod error;
pub mod fit;
pub mod norm_scaled;
pub mod rng;
pub mod traits;

pub use bias::{append_bias, WithBias};
pub use error::{Result, RfxError};
pub use fit::{Fit, FitData};
pub use norm_scaled::NormScaled;
pub use rng::{rng_stream, stream_seed, RfxRng};
pub use traits::{check_gram_columns, FeatureMap, Kernel};
