//! # rfx-sketches
//!
//! Oblivious sketches for inner products and tensor products, and random features for dot-product kernels.
//! Every map works on a dense batch (rows of an $n \times d$ matrix) in parallel over rows (rayon), reuses its
//! FFT plans (one `rustfft` planner per fitted map) and per-worker scratch buffers.
//!
//! | type | maps | unbiased for | source |
//! |---|---|---|---|
//! | [`CountSketch`] | $\mathbb R^d \to \mathbb R^m$ | $\langle x, y\rangle$ | Charikar et al.; NTK-RF Eq. 7 |
//! | [`TensorSketch`] | $x_1 \otimes \dots \otimes x_p \to \mathbb R^m$ (FFT) | $\prod_j \langle x_j, y_j\rangle$ | Pham & Pagh 2013; NTK-RF Eq. 8 |
//! | [`Srht`] | $\mathbb R^d \to \mathbb R^m$, Hadamard or complex-FFT form | $\langle x, y\rangle$ | Ailon & Chazelle; NTK-sketching Lemma 2 |
//! | [`TensorSrht`] | $x \otimes y \to \mathbb R^m$, Hadamard or complex-FFT form | $\langle x, x^\prime\rangle\langle y, y^\prime\rangle$ | Ahle et al. 2020 |
//! | [`Osnap`] | $\mathbb R^d \to \mathbb R^m$, $s$ nonzeros per column | $\langle x, y\rangle$ | Nelson & Nguyen 2013 |
//! | [`PolySketch`] | $x^{\otimes p} \to \mathbb R^m$ for all $p \le 2^k$ | $\langle x, y\rangle^p$ | Ahle et al. 2020; NTK-sketching Lemma 1 |
//! | [`PolynomialSketch`] | $\sum_j c_j \langle x, y\rangle^j$ (or the Gaussian kernel) | the kernel | NTK-sketching §3.4; RGF §8 |
//! | [`Trp`] | $\mathbb R^d \to \mathbb R^D$, $D^{-1/2}\circ_j R_jx$ | $\langle x, y\rangle^p$ | Meister et al. 2019 |
//! | [`RandomMaclaurin`] | $f(\langle x, y\rangle) = \sum_N a_N \langle x, y\rangle^N$ | the kernel | Kar & Karnick 2012 |
//!
//! **Complex-FFT forms.** Following the reference code of the NTK-sketching paper, the `Fourier` variants of
//! SRHT / TensorSRHT use the *unnormalised* DFT $F$ ($F_{ak} = e^{-2\pi i ak/d}$) instead of the Hadamard
//! matrix, sample $m^\prime = m/2$ complex coordinates with replacement, scale by $1/\sqrt{m^\prime}$ and return
//! $[\operatorname{Re} u; \operatorname{Im} u] \in \mathbb R^{m}$, so that the real inner product equals
//! $\operatorname{Re}\langle u, u^\prime\rangle_{\mathbb C}$, whose expectation is the target. No power-of-two padding.
//!
//! TensorSketch of degree 2 is exactly the CountSketch of $x \otimes x$ (computed by FFTs without forming the
//! $d^2$ vector), and its inner products estimate $\langle x, y\rangle^2$ with mean squared error at most
//! $\frac{11}{m}\Vert x\Vert^4\Vert y\Vert^4$ (Avron et al. Lemma 2):
//!
//! ```
//! use ndarray::{array, Array2};
//! use rfx_core::{rng_stream, FeatureMap};
//! use rfx_sketches::TensorSketch;
//!
//! let x = array![[0.6, -0.2, 0.3, 0.1], [0.2, 0.5, -0.4, 0.3]];
//! let m = 4096;
//! let ts = TensorSketch::params().dim(m).degree(2).fit(4, &mut rng_stream(3, "ts"))?;
//! let z = ts.transform(x.view())?;
//! assert_eq!(z.dim(), (2, m));
//!
//! // The same numbers from the CountSketch of the Kronecker products (row-major index i·d + j).
//! let kron = Array2::from_shape_fn((2, 16), |(r, k)| x[[r, k / 4]] * x[[r, k % 4]]);
//! let cs = ts.kronecker_count_sketch()?.transform(kron.view())?;
//! assert!((&z - &cs).iter().all(|e| e.abs() < 1e-12));
//!
//! // Unbiased for the polynomial kernel; 5 root-mean-square errors is a > 96% bound (Chebyshev).
//! let (x0, x1) = (x.row(0), x.row(1));
//! let exact = x0.dot(&x1).powi(2);
//! let rms = (11.0 / m as f64).sqrt() * x0.dot(&x0) * x1.dot(&x1);
//! assert!((z.row(0).dot(&z.row(1)) - exact).abs() < 5.0 * rms);
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide; link OpenBLAS for `.dot()` (dependencies.md, pitfall 3).
extern crate openblas_src as _;

pub mod countsketch;
pub mod maclaurin;
pub mod osnap;
pub mod polysketch;
pub mod srht;
pub mod tensorsketch;
pub mod trp;

pub use countsketch::{CountSketch, CountSketchParams};
pub use maclaurin::{RandomMaclaurin, RandomMaclaurinParams};
pub use osnap::{Osnap, OsnapParams};
pub use polysketch::{
    Leaf, PolySketch, PolySketchParams, PolynomialSketch, PolynomialSketchParams,
};
pub use srht::{Srht, SrhtParams, TensorSrht, TensorSrhtParams, Transform};
pub use tensorsketch::{TensorSketch, TensorSketchParams};
pub use trp::{Trp, TrpParams};

use rfx_core::{Result, RfxError};
use rfx_kernels::GaussianKernel;

/// The Taylor coefficients a dot-product sketch is fitted with: the given ones, or, for the Gaussian kernel of
/// width $\sigma$ truncated at degree $q$, [`rfx_kernels::GaussianKernel::taylor_coefficients`] with the kernel
/// for its norm factor; each finite and $\ge 0$.
pub(crate) fn taylor_coefficients(
    given: &[f64],
    gaussian: Option<(f64, usize)>,
) -> Result<(Vec<f64>, Option<GaussianKernel>)> {
    let (coefficients, kernel) = match gaussian {
        Some((sigma, q)) => {
            let k = GaussianKernel::new(sigma)?;
            (k.taylor_coefficients(q), Some(k))
        }
        None => (given.to_vec(), None),
    };
    if let Some(c) = coefficients.iter().find(|c| !(c.is_finite() && **c >= 0.0)) {
        return Err(RfxError::invalid("coefficients", c, "finite numbers >= 0"));
    }
    Ok((coefficients, kernel))
}

pub(crate) fn check_dim(name: &str, v: usize) -> Result<()> {
    if v == 0 {
        Err(RfxError::invalid(name, v, "an integer >= 1"))
    } else {
        Ok(())
    }
}

pub(crate) fn check_even_dim(v: usize) -> Result<()> {
    if v < 2 || v % 2 != 0 {
        Err(RfxError::invalid(
            "dim",
            v,
            "an even integer >= 2 (complex-FFT form: m/2 complex outputs as [Re; Im])",
        ))
    } else {
        Ok(())
    }
}

rfx_core::impl_fit_on_dim!(
    CountSketchParams => CountSketch,
    RandomMaclaurinParams => RandomMaclaurin,
    OsnapParams => Osnap,
    polysketch::PolySketchParams => polysketch::PolySketch,
    polysketch::PolynomialSketchParams => polysketch::PolynomialSketch,
    SrhtParams => Srht,
    TensorSrhtParams => TensorSrht,
    TensorSketchParams => TensorSketch,
    TrpParams => Trp,
);
