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
//! * [`NormScaled`]: a dot-product map lifted to the norm form $\Vert x\Vert\Vert y\Vert\kappa(\langle\hat x,\hat y\rangle)$;
//! * [`RfxError`], the error type of every fallible call (invalid parameters are errors, never panics);
//! * [`rng`]: reproducible random streams derived from an experiment seed and a key, so that results do
//!   not depend on thread count or execution order.
//!
//! A kernel and a feature map that reproduces it exactly: $k(x, y) = \langle x, y\rangle^2$ and
//! $z(x) = \operatorname{vec}(x x^\top) \in \mathbb R^{d^2}$, since $\langle z(x), z(y)\rangle = \sum_{ij} x_i x_j y_i y_j$.
//!
//! ```
//! use ndarray::{Array2, ArrayView1, ArrayView2};
//! use rand::Rng;
//! use rfx_core::{rng_stream, FeatureMap, Kernel, Result, WithBias};
//!
//! struct Quadratic;
//! impl Kernel for Quadratic {
//!     fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
//!         x.dot(&y).powi(2)
//!     }
//! }
//!
//! struct Outer { d: usize }
//! impl FeatureMap for Outer {
//!     fn input_dim(&self) -> usize { self.d }
//!     fn dim(&self) -> usize { self.d * self.d }
//!     fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
//!         self.check_input(x)?;
//!         Ok(Array2::from_shape_fn((x.nrows(), self.d * self.d), |(r, k)| {
//!             x[[r, k / self.d]] * x[[r, k % self.d]]
//!         }))
//!     }
//! }
//!
//! // Seeded streams: the same (seed, key) gives the same numbers, another key others.
//! let draw = |key: &str| {
//!     let mut rng = rng_stream(42, key);
//!     Array2::from_shape_simple_fn((5, 3), || rng.gen::<f64>() - 0.5)
//! };
//! let x = draw("x");
//! assert_eq!(x, draw("x"));
//! assert_ne!(x, draw("y"));
//!
//! // The default Gram evaluates the kernel entry by entry; the features reproduce it.
//! let k = Quadratic.gram(x.view(), x.view())?;
//! let z = Outer { d: 3 }.transform(x.view())?;
//! assert!((&k - &z.dot(&z.t())).iter().all(|e| e.abs() < 1e-15));
//! // A map rejects inputs of another dimension.
//! assert!(Outer { d: 4 }.transform(x.view()).is_err());
//!
//! // With a bias coordinate β: k([x, β], [y, β]) = (⟨x, y⟩ + β²)², for the kernel and its map alike.
//! let beta = 0.5;
//! let kb = WithBias::new(Quadratic, beta)?.gram(x.view(), x.view())?;
//! let zb = WithBias::new(Outer { d: 4 }, beta)?.transform(x.view())?;
//! let (i, j) = (1, 3);
//! let expected = (x.row(i).dot(&x.row(j)) + beta * beta).powi(2);
//! assert!((kb[[i, j]] - expected).abs() < 1e-15);
//! assert!((zb.row(i).dot(&zb.row(j)) - expected).abs() < 1e-15);
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

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
pub use traits::{
    check_gram_columns, f32_product_bound, transform_f32_via_f64, FeatureMap, Kernel,
};
