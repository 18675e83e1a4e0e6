//! # rfx-linalg
//!
//! The one place where rfx calls BLAS and LAPACK (OpenBLAS, through `cblas-sys` and `lapack-sys`): every
//! `unsafe` foreign call of the workspace is in this crate, behind safe wrappers on `ndarray` matrices. The
//! `f32` kernels of [`Precision::MixedF32`] (Gram tiles, Cholesky, triangular solves) are faer's instead
//! (pure Rust, runtime CPU dispatch, no `unsafe` here): `benches/backend.rs` measured them 1.6–1.9× faster
//! than the system OpenBLAS on one core, where that OpenBLAS runs its Haswell kernels
//! (`OPENBLAS_CORETYPE=Haswell`, which this machine kind needs).
//!
//!
//! * [`Cholesky`]: $A = L L^\top$ by LAPACK `dpotrf`, solves by two triangular solves (`cblas_dtrsm`);
//! * [`eigh`] / [`eigvalsh`]: symmetric eigendecomposition $A = V \Lambda V^\top$ by the divide-and-conquer
//!   driver `dsyevd` (6× faster than `dsyev`, which ndarray-linalg's `eigh` uses; see
//!   `shared/research/dependencies.md`, pitfall 4);
//! * [`BandReduction`]: $A = Q B Q^\top$ with $B$ banded, by `dsytrd_sy2sb` (level-3, 4× faster than the
//!   tridiagonal `dsytrd`), for the shifted solves $(A + \lambda I)^{-1} B$ of a λ path without an
//!   eigendecomposition;
//! * [`gram_cols`] ($Z^\top Z$) and [`gram_rows`] ($Z Z^\top$) by `cblas_dsyrk`, which does half the flops of a
//!   GEMM (pitfall 6), with $Z^\top Z$ accumulated over row blocks ([`NormalEquations`]) so that feature
//!   blocks can be streamed and the $n \times m$ matrix never has to be held twice;
//! * [`Backend`]: which library runs the `f64` Gram tiles and [`matmul_abt_par`] — the system OpenBLAS
//!   (default) or faer (1.9× faster on one core of the project's machine), process-wide
//!   ([`set_f64_backend`], [`BackendScope`]);
//! * [`Precision::MixedF32`]: `f32` Gram and Cholesky factor ([`gram_cols_f32_upper`], [`CholeskyF32`]) with
//!   iterative refinement against the `f64` operator ([`solve_spd_refined`]): `f64` accuracy at `f32` speed
//!   for well-enough conditioned systems (issue 10);
//! * [`dot`], [`sq_dist`] and [`axpy`]: level-1 kernels on slices in a fixed order of operations (no BLAS call), for
//!   sequential inner loops such as coordinate descent and k-means' distances;
//! * [`check_memory`]: a memory estimate compared against a cap before large allocations, returning
//!   [`rfx_core::RfxError::OutOfMemory`] (reported as "(-)" by the experiments, as the papers do).
//!
//! All matrices are row-major (`ndarray` standard layout) on the Rust side. A row-major buffer read as
//! column-major is the transpose, which is harmless for symmetric inputs; triangles are swapped accordingly.
//!
//! **Thread-count independence.** OpenBLAS splits a call among its threads, and the arithmetic of each result
//! entry depends on the split: GEMM's edge kernels fall on other columns, `dpotrf` picks another block size,
//! `dsytrd`'s `dsymv` sums per-thread partial vectors (measured on OpenBLAS 0.3.21: GEMM, GEMV, `dsyrk`,
//! `dpotrf`, `dsyevd`, `dsytrd`, `dormtr` all change in the last bits between 1 and 2 threads). So every
//! routine here runs OpenBLAS on one thread ([`SingleBlasThread`]) and its result is bit-for-bit the same
//! whatever [`set_blas_threads`] says; the `dsyrk` Grams get their parallelism back from rayon over fixed
//! 256-row tiles of the output ([`gram_cols`], [`gram_rows`], [`gram_rows_add_upper`], [`NormalEquations`];
//! in `f32` [`gram_cols_f32_upper`], each tile by faer on one thread), whose arithmetic does not depend on
//! the number of rayon threads either.
//!
//! ```
//! use ndarray::array;
//! use rfx_linalg::{gram_cols, Cholesky};
//!
//! // A = ZᵀZ + I is symmetric positive definite; solve A x = b and check the residual.
//! let z = array![[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]];
//! let mut a = gram_cols(z.view()).unwrap();
//! rfx_linalg::add_diag(&mut a, 1.0);
//! assert_eq!(a, z.t().dot(&z) + ndarray::Array2::<f64>::eye(2));
//! let b = array![[1.0], [2.0]];
//! let x = Cholesky::factor_view(a.view()).unwrap().solve(b.view()).unwrap();
//! assert!((a.dot(&x) - &b).iter().all(|r| r.abs() < 1e-12));
//! ```

#![warn(missing_docs)]

// Forces the libopenblas link for every binary/test/bench (dependencies.md, pitfall 3).
extern crate openblas_src as _;

mod backend;
mod band;
mod cholesky;
mod dense;
mod eigen;
mod gemm;
mod memory;
mod mixed;
mod syrk;
mod threads;
mod vector;

pub use backend::{f64_backend, set_f64_backend, Backend, BackendScope};
pub use band::{BandReduction, BAND_WIDTH};
pub use cholesky::Cholesky;
pub use dense::{
    add_diag, center, check_finite, fro_norm, row_as_slice, symmetrize, symmetrize_from_upper,
};
pub use eigen::{eigh, eigvalsh, SymEig};
pub use gemm::{matmul_abt, matmul_abt_par};
pub use memory::{check_memory, f64_bytes, DEFAULT_MEMORY_CAP};
pub use mixed::{
    gram_cols_f32_upper, gram_cols_f32_upper_rhs, solve_spd_refined, to_f32_finite, CholeskyF32,
    Precision,
};
pub use syrk::{
    gram_cols, gram_rows, gram_rows_add_upper, gram_rows_upper_serial, NormalEquations,
    DEFAULT_ROW_BLOCK,
};
pub use threads::{blas_core_name, blas_threads, set_blas_threads, SingleBlasThread};
pub use vector::{axpy, dot, matmul_nn, matmul_tn, sq_dist};

#[cfg(test)]
mod tests;
