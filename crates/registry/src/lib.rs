//! # rfx-registry
//!
//! The one registry of rfx's feature maps and exact kernels, shared by the command line (`rfx features`,
//! `rfx fit`, `rfx gram`, `rfx methods`), the TOML table kinds and (next) the Python package. A method is
//! added here once and appears everywhere.
//!
//! * [`MethodSpec`]: a feature map — name, formula, paper and equation, its parameters ([`ParamDoc`]:
//!   type, allowed range, default), its output width as a rule and as a function of the budget $m$,
//!   whether fitting needs data — and how it is fitted from the algorithm crates (every map implements
//!   [`rfx_core::Fit`]); [`methods()`], [`method`].
//! * [`KernelSpec`]: an exact kernel; [`kernels()`], [`kernel`].
//! * [`RegistryError`]: what the registry refuses, typed (thiserror), its message the one-line error shown.
//! * [`Params`]: parameter values checked once, when built, from text (`--param k=v`, `name(k=v)` in a
//!   TOML sweep) or typed values ([`RawValue`]); afterwards every value is typed and in range.
//! * [`MethodChoice`] and [`build_method`]: the `method` values of the table kinds.
//! * [`kernel_targets`]: which method, with which parameters, approximates which exact kernel (the relation
//!   of the cross-paper benchmark, declared once and tested pair by pair).
//! * [`ternary_fit`]: the `ternary` method as its typed fitter, for the bit-packed codes of its map.
//! * [`feature_stream`], [`transform_rows`], [`gram_rows`]: how a map or kernel is applied to rows, the
//!   same for the command line and Python (fixed chunks, so outputs agree bit for bit).
//!
//! This crate composes the algorithm crates; the mathematics lives in them.
//!
//! # Example
//!
//! Random Fourier features of the Gaussian kernel $k(x, y) = e^{-\Vert x - y\Vert^2 / (2\sigma^2)}$ through the
//! registry: $\langle z(x), z(x)\rangle = 1 = k(x, x)$ exactly for paired $[\cos, \sin]$ features, and
//! $\langle z(x), z(y)\rangle$ is within a few $1/\sqrt{m/2}$ of $k(x, y)$.
//!
//! ```
//! use ndarray::array;
//! use rfx_core::{rng_stream, FitData};
//! use rfx_registry::{method, RawValue, RegistryError};
//!
//! let rff = method("rff")?;
//! let p = rff.params_from(&[("sigma", RawValue::from(2.0))])?;
//! let mut rng = rng_stream(1, "doc");
//! let z = rff.fit(4096, &p, FitData::Dim(2), &mut rng)?;
//! let x = array![[0.0, 0.0], [1.0, 1.0]];
//! let f = z.transform(x.view())?;
//! assert_eq!(f.ncols(), 4096);
//! let kxx = f.row(0).dot(&f.row(0));
//! assert!((kxx - 1.0).abs() < 1e-12);
//! let kxy = f.row(0).dot(&f.row(1));
//! let exact = (-2.0f64 / (2.0 * 4.0)).exp();
//! assert!((kxy - exact).abs() < 5.0 / (2048f64).sqrt(), "{kxy} vs {exact}");
//! // parameters are checked once, with the allowed range in the message
//! // typed errors: the parameter, the value and the allowed range; the message names them all
//! let e = rff.params_from(&[("sigma", RawValue::from(-1.0))]).unwrap_err();
//! assert!(matches!(&e, RegistryError::InvalidValue { parameter, .. } if parameter == "sigma"));
//! assert!(e.to_string().contains("[0.000001, 1000000]"), "{e}");
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod apply;
pub mod error;
pub mod kernels;
pub mod methods;
pub mod params;
pub mod targets;

pub use apply::{
    feature_stream, gram_rows, gram_self_rows, transform_rows, transform_rows_f32, FEATURE_CHUNK,
    GRAM_CHUNK,
};
pub use error::RegistryError;
pub use kernels::{kernel, kernels, with_bias, KernelSpec};
pub use methods::{
    bias_of, build_method, method, methods, rounding_amplification, table_kernels, table_methods,
    ternary_fit, BoxedMap, MethodChoice, MethodSpec, BIAS, NTK_DEPTH,
};
pub use params::{ParamDoc, ParamKind, Params, RawValue, Value};
pub use targets::{
    kernel_target, kernel_targets, method_labels, Approx, KernelTarget, MethodTarget, KERNEL_LABELS,
};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_targets;
