//! # rfx-sampling
//!
//! Seeded random matrices and the Fourier family of random-feature maps for the Gaussian kernel.
//!
//! * [`random`]: Gaussian, Rademacher, uniform-on-the-sphere and $\chi$-distributed draws, Haar-orthogonal
//!   matrices and ORF blocks $\operatorname{diag}(\chi_d)\thinspace Q$, sparse ternary weights (Ternary RF, Eq. 4).
//! * [`hadamard`]: the fast Walsh–Hadamard transform (unnormalised, $H^\top H = d\thinspace I$).
//! * [`qmc`]: scrambled Halton points (random digit permutations) mapped through $\Psi^{-1}$.
//! * [`leverage`]: the leverage-score distribution $q(w) \propto \Vert w\Vert^2\thinspace\mathcal N(w; 0, I_d)$ of the
//!   NTK random-features paper (Eq. 15), by the paper's Gibbs sampler (Alg. 2) and exactly.
//! * [`fourier`]: [`fourier::GaussianFeatures`], the [`rfx_core::FeatureMap`] for
//!   $k(x, y) = \exp(-\Vert x-y\Vert^2/(2\sigma^2)) = \exp(-\gamma\Vert x-y\Vert^2)$ built by RFF, ORF, SORF, Fastfood or QMC
//!   (survey §3.1–3.3, 3.5, 3.10), in the paired $[\cos, \sin]$ or the random-phase form.
//! * [`survey`]: every sampler of the survey's benchmark (RFF, ORF, SORF, ROM, Fastfood, QMC, SSF, GQ, LS-RFF)
//!   for the Gaussian and the arc-cosine kernels of order 0 and 1 ([`survey::SurveyFeatures`]).
//!
//! Every draw comes from an explicit [`rfx_core::RfxRng`]; parameters are validated and invalid values are
//! [`rfx_core::RfxError::InvalidParameter`] errors, never panics.

// ndarray's `blas` feature is on workspace-wide; link OpenBLAS for `.dot()` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod fourier;
pub mod hadamard;
pub mod leverage;
pub mod qmc;
pub mod random;
pub mod sincos;
pub mod survey;

/// Seeded RNG streams (re-exported from `rfx-core`): `rng_stream(seed, key)` gives a ChaCha20 [`RfxRng`].
pub use rfx_core::{rng_stream, RfxRng};

pub use fourier::{
    Bandwidth, Fastfood, FourierMethod, GaussianFeatureParams, GaussianFeatures, Orf, Output,
    QmcRff, Rff, Sorf,
};
pub use survey::{Sampler, SurveyFeatures, SurveyKernel, SurveyParams, SAMPLERS};
