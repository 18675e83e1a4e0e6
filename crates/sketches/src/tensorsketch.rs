//! TensorSketch (Pham & Pagh 2013; Avron, Nguyen & Woodruff 2014; NTK random features, Eq. 8).
//!
//! With $p$ independent CountSketches $\mathcal C_1, \dots, \mathcal C_p$ ($\mathbb R^{d_j} \to \mathbb R^m$),
//! $$\mathrm{TS}(x_1 \otimes \dots \otimes x_p) = \mathrm{FFT}^{-1}\Big(\prod_{j=1}^p \mathrm{FFT}(\mathcal C_j x_j)\Big),$$
//! the circular convolution of the CountSketches. It is *exactly* the CountSketch of the Kronecker product
//! $x_1 \otimes \dots \otimes x_p$ (row-major index) with hash $H(i_1..i_p) = \sum_j h_j(i_j) \bmod m$ and sign
//! $S = \prod_j s_j(i_j)$ ([`TensorSketch::kronecker_count_sketch`]). The FFTs are real-input transforms
//! (`realfft` over `rustfft`: $\lfloor m/2\rfloor + 1$ coefficients, half the work of a complex FFT of
//! length $m$), and the inverse is the unnormalised transform divided by $m$.
//! $\mathbb E\langle \mathrm{TS}(\otimes x_j), \mathrm{TS}(\otimes y_j)\rangle = \prod_j\langle x_j, y_j\rangle$; for the same
//! $x$ in every slot this is the polynomial kernel $\langle x, y\rangle^p$, and
//! $\mathbb E(\langle \mathrm{TS}x, \mathrm{TS}y\rangle - \langle x,y\rangle^p)^2 \le \frac{2 + 3^p}{m}\Vert x\Vert^{2p}\Vert y\Vert^{2p}$
//! (Avron et al. Lemma 2; $11/m$ for $p = 2$, NTK-RF Lemma 3). Cost $O(p(d + m\log m))$ per row.

use crate::check_dim;
use crate::countsketch::{CountSketch, CountSketchParams};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rustfft::num_complex::Complex64;
use std::sync::Arc;

/// Parameters: `dim` = $m$ (default 1024), `degree` = $p$ (default 2).
#[derive(Clone, Debug)]
pub struct TensorSketchParams {
    dim: usize,
    degree: usize,
}

impl TensorSketchParams {
    /// Sketch dimension $m$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Degree $p \ge 1$.
    pub fn degree(mut self, p: usize) -> Self {
        self.degree = p;
        self
    }

    /// Fits a degree-$p$ sketch of $x^{\otimes p}$, $x \in \mathbb R^d$.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<TensorSketch> {
        check_dim("degree", self.degree)?;
        self.fit_dims(&vec![d; self.degree], rng)
    }

    /// Fits a sketch of $x_1 \otimes \dots \otimes x_p$ with $x_j \in \mathbb R^{d_j}$ (the degree is `dims.len()`).
    pub fn fit_dims(&self, dims: &[usize], rng: &mut RfxRng) -> Result<TensorSketch> {
        check_dim("dim", self.dim)?;
        check_dim("degree", dims.len())?;
        let cs = CountSketchParams::default_with(self.dim);
        let sketches = dims
            .iter()
            .map(|&d| cs.fit(d, rng))
            .collect::<Result<Vec<_>>>()?;
        let mut planner = RealFftPlanner::new();
        let fft = planner.plan_fft_forward(self.dim);
        let ifft = planner.plan_fft_inverse(self.dim);
        let scratch = fft.get_scratch_len().max(ifft.get_scratch_len());
        Ok(TensorSketch {
            dims: dims.to_vec(),
            m: self.dim,
            sketches,
            fft,
            ifft,
            scratch,
        })
    }
}

impl CountSketchParams {
    pub(crate) fn default_with(m: usize) -> Self {
        CountSketch::params().dim(m)
    }
}

/// A fitted TensorSketch.
#[derive(Clone)]
pub struct TensorSketch {
    dims: Vec<usize>,
    m: usize,
    sketches: Vec<CountSketch>,
    /// Real-input FFT of length $m$ (output: the $\lfloor m/2\rfloor + 1$ non-redundant coefficients).
    fft: Arc<dyn RealToComplex<f64>>,
    /// Its inverse (Hermitian spectrum to real signal, unnormalised).
    ifft: Arc<dyn ComplexToReal<f64>>,
    scratch: usize,
}

impl std::fmt::Debug for TensorSketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorSketch")
            .field("dims", &self.dims)
            .field("m", &self.m)
            .finish()
    }
}

/// Per-thread work buffers of one row (allocated once per rayon task, reused for every row).
struct Scratch {
    /// Product of the spectra so far ($\lfloor m/2\rfloor + 1$ coefficients).
    acc: Vec<Complex64>,
    /// Spectrum of the current factor.
    buf: Vec<Complex64>,
    /// CountSketch of the current factor (length $m$; the real FFT uses it as its input buffer).
    cs: Vec<f64>,
    fft: Vec<Complex64>,
}

impl TensorSketch {
    /// Parameters with the defaults `dim` 1024, `degree` 2.
    pub fn params() -> TensorSketchParams {
        TensorSketchParams {
            dim: 1024,
            degree: 2,
        }
    }

    /// The degree $p$.
    pub fn degree(&self) -> usize {
        self.dims.len()
    }

    /// The $p$ CountSketches.
    pub fn count_sketches(&self) -> &[CountSketch] {
        &self.sketches
    }

    /// The CountSketch of $\mathbb R^{d_1 \cdots d_p}$ that this TensorSketch equals on Kronecker products
    /// (hash $\sum_j h_j \bmod m$, sign $\prod_j s_j$, row-major index). Memory $O(\prod_j d_j)$.
    pub fn kronecker_count_sketch(&self) -> Result<CountSketch> {
        let total: usize = self.dims.iter().product();
        let mut hash = vec![0u32; total];
        let mut sign = vec![1.0; total];
        let mut idx = vec![0usize; self.dims.len()];
        for (flat, (h, s)) in hash.iter_mut().zip(sign.iter_mut()).enumerate() {
            // row-major multi-index of `flat`
            let mut rest = flat;
            for j in (0..self.dims.len()).rev() {
                idx[j] = rest % self.dims[j];
                rest /= self.dims[j];
            }
            let mut hh = 0usize;
            for (j, cs) in self.sketches.iter().enumerate() {
                hh += cs.hash()[idx[j]] as usize;
                *s *= cs.sign()[idx[j]];
            }
            *h = (hh % self.m) as u32;
        }
        CountSketch::from_tables(self.m, hash, sign)
    }

    fn scratch(&self) -> Scratch {
        let half = self.m / 2 + 1;
        Scratch {
            acc: vec![Complex64::new(0.0, 0.0); half],
            buf: vec![Complex64::new(0.0, 0.0); half],
            cs: vec![0.0; self.m],
            fft: vec![Complex64::new(0.0, 0.0); self.scratch],
        }
    }

    /// One row: the CountSketch of every factor, their real FFTs multiplied coefficient by coefficient, one
    /// inverse real FFT divided by $m$. The spectra of real signals are Hermitian, so only the
    /// $\lfloor m/2\rfloor + 1$ non-redundant coefficients are formed (half the work of complex FFTs; the
    /// product of Hermitian spectra is Hermitian, so its inverse is real).
    fn row(&self, xs: &[&[f64]], out: &mut [f64], s: &mut Scratch) {
        if xs.len() == 1 {
            self.sketches[0].apply(xs[0], out);
            return;
        }
        for (j, (cs, x)) in self.sketches.iter().zip(xs).enumerate() {
            cs.apply(x, &mut s.cs);
            let target = if j == 0 { &mut s.acc } else { &mut s.buf };
            self.fft
                .process_with_scratch(&mut s.cs, target, &mut s.fft)
                .expect("buffer lengths fixed at fit time");
            if j > 0 {
                for (a, b) in s.acc.iter_mut().zip(&s.buf) {
                    *a *= b;
                }
            }
        }
        // The imaginary parts of the DC (and, for even m, Nyquist) coefficients are exactly 0 for real
        // inputs; clear any round-off so that the inverse transform accepts the spectrum.
        s.acc[0].im = 0.0;
        if self.m % 2 == 0 {
            s.acc[self.m / 2].im = 0.0;
        }
        self.ifft
            .process_with_scratch(&mut s.acc, out, &mut s.fft)
            .expect("buffer lengths fixed at fit time");
        let inv = 1.0 / self.m as f64;
        for o in out.iter_mut() {
            *o *= inv;
        }
    }

    /// Sketches $x_1 \otimes \dots \otimes x_p$ row by row: `xs[j]` is $n \times d_j$.
    pub fn transform_tensor(&self, xs: &[ArrayView2<'_, f64>]) -> Result<Array2<f64>> {
        let mut out = Array2::zeros((xs.first().map_or(0, |x| x.nrows()), self.m));
        self.transform_tensor_into(xs, out.view_mut())?;
        Ok(out)
    }

    /// [`TensorSketch::transform_tensor`] written into `out` ($n \times m$, any strides; rows in parallel,
    /// each computed independently, so the values do not depend on the thread count). Lets a caller place the
    /// sketch straight into a slice of a larger feature matrix, without a temporary.
    pub fn transform_tensor_into(
        &self,
        xs: &[ArrayView2<'_, f64>],
        mut out: ArrayViewMut2<'_, f64>,
    ) -> Result<()> {
        if xs.len() != self.dims.len() {
            return Err(RfxError::DimensionMismatch(format!(
                "TensorSketch of degree {} given {} factors",
                self.dims.len(),
                xs.len()
            )));
        }
        let n = xs[0].nrows();
        for (j, x) in xs.iter().enumerate() {
            if x.ncols() != self.dims[j] || x.nrows() != n {
                return Err(RfxError::DimensionMismatch(format!(
                    "factor {j} is {} x {}, expected {n} x {}",
                    x.nrows(),
                    x.ncols(),
                    self.dims[j]
                )));
            }
        }
        if out.dim() != (n, self.m) {
            return Err(RfxError::DimensionMismatch(format!(
                "TensorSketch output is {:?}, expected ({n}, {})",
                out.dim(),
                self.m
            )));
        }
        let xs: Vec<_> = xs.iter().map(|x| x.as_standard_layout()).collect();
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each_init(
                || {
                    (
                        self.scratch(),
                        Vec::with_capacity(xs.len()),
                        vec![0.0; self.m],
                    )
                },
                |(s, rows, row_out), (i, mut o)| {
                    rows.clear();
                    for x in &xs {
                        rows.push(x.row(i).to_slice().expect("standard layout"));
                    }
                    match o.as_slice_mut() {
                        Some(o) => self.row(rows, o, s),
                        None => {
                            self.row(rows, row_out, s);
                            o.iter_mut().zip(row_out.iter()).for_each(|(a, &b)| *a = b);
                        }
                    }
                },
            );
        Ok(())
    }
}

impl FeatureMap for TensorSketch {
    fn input_dim(&self) -> usize {
        self.dims[0]
    }

    fn dim(&self) -> usize {
        self.m
    }

    /// $\mathrm{TS}(x^{\otimes p})$, for the kernel $\langle x, y\rangle^p$ (all $d_j$ must be equal).
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if self.dims.iter().any(|&d| d != self.dims[0]) {
            return Err(RfxError::DimensionMismatch(
                "transform(x) needs equal factor dimensions; use transform_tensor".into(),
            ));
        }
        self.check_input(x)?;
        let xs = vec![x; self.dims.len()];
        self.transform_tensor(&xs)
    }
}
