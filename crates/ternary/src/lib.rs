//! # rfx-ternary
//!
//! Ternary random features (TRF) of Tiomoko Ali, Liao & Couillet, *Random Matrices in Service of ML
//! Footprint: Ternary Random Features with No Performance Loss* (ICLR 2022), with the corrections of
//! `shared/research/ternary-random-features.md`.

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS for `.dot` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod activation;
pub mod baselines;
pub mod equivalent;
pub mod features;
pub mod quadrature;
pub mod thresholds;
