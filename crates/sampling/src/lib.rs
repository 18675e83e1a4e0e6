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
//!
//! Random Fourier features are unbiased: with $s = m/2$ frequencies $w_k \sim \mathcal N(0, \sigma^{-2} I)$,
//! $\langle z(x), z(y)\rangle = \frac1s\sum_k \cos(w_k^\top(x - y))$, each term of mean $k(x, y)$ and variance
//! $\frac12(1 + k(x,y)^4) - k(x,y)^2$ (as $k(2\delta) = k(\delta)^4$), and $\langle z(x), z(x)\rangle = 1$.
//!
//! ```
//! use ndarray::array;
//! use rfx_core::{rng_stream, FeatureMap, Kernel};
//! use rfx_sampling::{FourierMethod, GaussianFeatureParams};
//!
//! let x = array![[0.3, -0.1, 0.8], [0.5, 0.4, 0.2]];
//! let map = GaussianFeatureParams::new(FourierMethod::Rff)
//!     .dim(4096)
//!     .sigma(0.7)
//!     .fit(3, &mut rng_stream(1, "rff"))?;
//! let z = map.transform(x.view())?;
//! assert_eq!(z.dim(), (2, 4096));
//! assert!((z.row(0).dot(&z.row(0)) - 1.0).abs() < 1e-12);
//!
//! let k = map.kernel().eval(x.row(0), x.row(1)); // exp(-|x - y|² / (2σ²))
//! let standard_error = ((0.5 * (1.0 + k.powi(4)) - k * k) / 2048.0).sqrt();
//! assert!((z.row(0).dot(&z.row(1)) - k).abs() < 5.0 * standard_error);
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

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

rfx_core::impl_fit_on_dim!(GaussianFeatureParams => GaussianFeatures);

/// The survey's samplers fit on rows when given (LS-RFF draws its frequencies from them) and on the
/// dimension alone otherwise.
impl rfx_core::Fit for SurveyParams {
    type Map = SurveyFeatures;
    fn fit_map(
        &self,
        data: rfx_core::FitData<'_>,
        rng: &mut RfxRng,
    ) -> rfx_core::Result<SurveyFeatures> {
        match data {
            rfx_core::FitData::Dim(d) => self.fit(d, None, rng),
            rfx_core::FitData::Rows(x) => self.fit(x.ncols(), Some(x), rng),
        }
    }
}
