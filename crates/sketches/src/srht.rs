//! Subsampled randomised Hadamard / Fourier transforms: SRHT and TensorSRHT.
//!
//! **SRHT** (Ailon & Chazelle 2009; NTK-sketching Lemma 2). [`Transform::Hadamard`]: pad $x$ to
//! $d^\prime = 2^{\lceil \log_2 d\rceil}$ and output $Sx = \frac{1}{\sqrt m} P H D x \in \mathbb R^m$, with $D$ a Rademacher
//! diagonal, $H$ the *unnormalised* $d^\prime \times d^\prime$ Walsh–Hadamard matrix ($H^\top H = d^\prime I$) and $P$ sampling $m$
//! rows uniformly **with replacement**; $\mathbb E[S^\top S] = I$ and, exactly,
//! $\operatorname{Var}\langle Sx, Sy\rangle = \frac1m(\Vert x\Vert^2\Vert y\Vert^2 + \langle x,y\rangle^2 - 2\sum_i x_i^2y_i^2)$.
//! [`Transform::Fourier`] (the reference code's `SRHTCmplx_Stndrd`): $u = \frac{1}{\sqrt{m^\prime}}(F D x)_P$ with the
//! unnormalised length-$d$ DFT $F$ and $m^\prime = m/2$ indices sampled with replacement; output
//! $[\operatorname{Re} u; \operatorname{Im} u] \in \mathbb R^m$. Since $\frac1d\sum_a (FDx)_a\overline{(FDy)_a} = \langle x, y\rangle$
//! (Parseval), $\mathbb E\thinspace\operatorname{Re}\langle u, u^\prime\rangle = \langle x, y\rangle$.
//!
//! **TensorSRHT** (Ahle et al. 2020; NTK-sketching §3.4, reference-implementations A1.4): a sketch of
//! $x \otimes y$ without forming it, $\frac{1}{\sqrt m}(HD_1x)\_{a_k}(HD_2y)\_{b_k}$, $k = 1..m$, with independent
//! sign diagonals and index pairs $(a_k, b_k)$ drawn uniformly with replacement (Hadamard form), or
//! $\frac{1}{\sqrt{m^\prime}}(FD_1x)\_{a_k}(FD_2y)_{b_k}$, $k = 1..m^\prime$, returned as $[\operatorname{Re}; \operatorname{Im}]$
//! (complex-FFT form, the one the reference code uses). Both are unbiased:
//! $\mathbb E\langle S(x\otimes y), S(x^\prime\otimes y^\prime)\rangle = \langle x,x^\prime\rangle\langle y,y^\prime\rangle$; the Hadamard form has
//! $\operatorname{Var} = (A_x A_y - \langle x,x^\prime\rangle^2\langle y,y^\prime\rangle^2)/m$ with
//! $A_x = \Vert x\Vert^2\Vert x^\prime\Vert^2 + 2\langle x,x^\prime\rangle^2 - 2\sum_i x_i^2{x_i^\prime}^2$.

use crate::{check_dim, check_even_dim};
use ndarray::{Array2, ArrayView2, Axis, Zip};
use rand::Rng;
use rayon::prelude::*;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_sampling::hadamard::{fwht_unchecked, next_pow2};
use rfx_sampling::random::rademacher_vec;
use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// Which orthogonal transform the sketch subsamples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Real Walsh–Hadamard (inputs zero-padded to a power of two).
    Hadamard,
    /// Unnormalised complex DFT (any length), output $[\operatorname{Re}; \operatorname{Im}]$.
    Fourier,
}

/// Parameters of [`Srht`]: `dim` = $m$ (default 1024; even for `Fourier`), `transform` (default `Hadamard`).
#[derive(Clone, Debug)]
pub struct SrhtParams {
    dim: usize,
    transform: Transform,
}

impl SrhtParams {
    /// Output dimension $m$ (real).
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// The transform.
    pub fn transform(mut self, t: Transform) -> Self {
        self.transform = t;
        self
    }

    /// Draws the signs and indices for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<Srht> {
        check_dim("d", d)?;
        match self.transform {
            Transform::Hadamard => {
                check_dim("dim", self.dim)?;
                let dpad = next_pow2(d);
                Ok(Srht {
                    d,
                    m: self.dim,
                    inner: SrhtInner::Hadamard {
                        dpad,
                        signs: rademacher_vec(d, rng).to_vec(),
                        idx: (0..self.dim).map(|_| rng.gen_range(0..dpad)).collect(),
                    },
                })
            }
            Transform::Fourier => {
                check_even_dim(self.dim)?;
                Ok(Srht {
                    d,
                    m: self.dim,
                    inner: SrhtInner::Fourier(ComplexSrht::new(d, self.dim / 2, rng)?),
                })
            }
        }
    }
}

/// Complex SRHT $u = \frac{1}{\sqrt{m^\prime}}(FDx)_P$, $\mathbb R^d$ (or $\mathbb C^d$) $\to \mathbb C^{m^\prime}$.
#[derive(Clone)]
pub(crate) struct ComplexSrht {
    pub(crate) d: usize,
    pub(crate) mc: usize,
    signs: Vec<f64>,
    idx: Vec<usize>,
    fft: Arc<dyn Fft<f64>>,
}

impl ComplexSrht {
    pub(crate) fn new(d: usize, mc: usize, rng: &mut RfxRng) -> Result<Self> {
        check_dim("d", d)?;
        check_dim("complex dim", mc)?;
        let signs = rademacher_vec(d, rng).to_vec();
        let idx = (0..mc).map(|_| rng.gen_range(0..d)).collect();
        let fft = FftPlanner::new().plan_fft_forward(d);
        Ok(Self {
            d,
            mc,
            signs,
            idx,
            fft,
        })
    }

    pub(crate) fn scratch_len(&self) -> usize {
        self.fft.get_inplace_scratch_len()
    }

    /// `buf` (length d) holds the input; on return `out` (length mc) holds u. `buf` is clobbered.
    pub(crate) fn apply_complex(
        &self,
        buf: &mut [Complex64],
        out: &mut [Complex64],
        scratch: &mut [Complex64],
    ) {
        for (b, s) in buf.iter_mut().zip(&self.signs) {
            *b *= *s;
        }
        self.fft.process_with_scratch(buf, scratch);
        let c = 1.0 / (self.mc as f64).sqrt();
        for (o, &i) in out.iter_mut().zip(&self.idx) {
            *o = buf[i] * c;
        }
    }
}

#[derive(Clone)]
enum SrhtInner {
    Hadamard {
        dpad: usize,
        signs: Vec<f64>,
        idx: Vec<usize>,
    },
    Fourier(ComplexSrht),
}

/// A fitted SRHT $\mathbb R^d \to \mathbb R^m$ (see the module docs for both forms and their scalings).
#[derive(Clone)]
pub struct Srht {
    d: usize,
    m: usize,
    inner: SrhtInner,
}

impl std::fmt::Debug for Srht {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srht")
            .field("d", &self.d)
            .field("m", &self.m)
            .finish()
    }
}

impl Srht {
    /// Parameters with the defaults `dim` 1024, Hadamard.
    pub fn params() -> SrhtParams {
        SrhtParams {
            dim: 1024,
            transform: Transform::Hadamard,
        }
    }
}

impl FeatureMap for Srht {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.m
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let mut out = Array2::zeros((x.nrows(), self.m));
        match &self.inner {
            SrhtInner::Hadamard { dpad, signs, idx } => {
                let c = 1.0 / (self.m as f64).sqrt();
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(x.axis_iter(Axis(0)).into_par_iter())
                    .for_each_init(
                        || vec![0.0; *dpad],
                        |buf, (mut o, xr)| {
                            for ((b, xv), s) in buf.iter_mut().zip(xr.iter()).zip(signs) {
                                *b = xv * s;
                            }
                            buf[self.d..].iter_mut().for_each(|v| *v = 0.0);
                            fwht_unchecked(buf);
                            for (ov, &i) in o.iter_mut().zip(idx) {
                                *ov = c * buf[i];
                            }
                        },
                    );
            }
            SrhtInner::Fourier(cs) => {
                let mc = cs.mc;
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(x.axis_iter(Axis(0)).into_par_iter())
                    .for_each_init(
                        || {
                            (
                                vec![Complex64::default(); cs.d],
                                vec![Complex64::default(); mc],
                                vec![Complex64::default(); cs.scratch_len()],
                            )
                        },
                        |(buf, u, scr), (mut o, xr)| {
                            for (b, xv) in buf.iter_mut().zip(xr.iter()) {
                                *b = Complex64::new(*xv, 0.0);
                            }
                            cs.apply_complex(buf, u, scr);
                            write_re_im(u, o.as_slice_mut().expect("standard layout"));
                        },
                    );
            }
        }
        Ok(out)
    }
}

/// `out = [Re u; Im u]`.
#[inline]
pub(crate) fn write_re_im(u: &[Complex64], out: &mut [f64]) {
    let (re, im) = out.split_at_mut(u.len());
    for ((r, i), v) in re.iter_mut().zip(im.iter_mut()).zip(u) {
        *r = v.re;
        *i = v.im;
    }
}

/// Complex TensorSRHT node $\mathbb C^{n_1} \times \mathbb C^{n_2} \to \mathbb C^{m^\prime}$:
/// $o_k = \frac{1}{\sqrt{m^\prime}}(FD_1u)\_{a_k}(FD_2v)_{b_k}$.
#[derive(Clone)]
pub(crate) struct ComplexTensorSrht {
    pub(crate) n1: usize,
    pub(crate) n2: usize,
    pub(crate) mc: usize,
    d1: Vec<f64>,
    d2: Vec<f64>,
    a: Vec<usize>,
    b: Vec<usize>,
    fft1: Arc<dyn Fft<f64>>,
    fft2: Arc<dyn Fft<f64>>,
}

impl ComplexTensorSrht {
    pub(crate) fn new(
        n1: usize,
        n2: usize,
        mc: usize,
        planner: &mut FftPlanner<f64>,
        rng: &mut RfxRng,
    ) -> Result<Self> {
        check_dim("d1", n1)?;
        check_dim("d2", n2)?;
        check_dim("complex dim", mc)?;
        Ok(Self {
            n1,
            n2,
            mc,
            d1: rademacher_vec(n1, rng).to_vec(),
            d2: rademacher_vec(n2, rng).to_vec(),
            a: (0..mc).map(|_| rng.gen_range(0..n1)).collect(),
            b: (0..mc).map(|_| rng.gen_range(0..n2)).collect(),
            fft1: planner.plan_fft_forward(n1),
            fft2: planner.plan_fft_forward(n2),
        })
    }

    pub(crate) fn scratch_len(&self) -> usize {
        self.fft1
            .get_inplace_scratch_len()
            .max(self.fft2.get_inplace_scratch_len())
    }

    /// `b1` (len n1) and `b2` (len n2) hold the inputs u and v (clobbered); writes `out` (len mc).
    pub(crate) fn apply(
        &self,
        b1: &mut [Complex64],
        b2: &mut [Complex64],
        out: &mut [Complex64],
        scratch: &mut [Complex64],
    ) {
        for (v, s) in b1.iter_mut().zip(&self.d1) {
            *v *= *s;
        }
        for (v, s) in b2.iter_mut().zip(&self.d2) {
            *v *= *s;
        }
        self.fft1.process_with_scratch(b1, scratch);
        self.fft2.process_with_scratch(b2, scratch);
        let c = 1.0 / (self.mc as f64).sqrt();
        for ((o, &a), &b) in out.iter_mut().zip(&self.a).zip(&self.b) {
            *o = b1[a] * b2[b] * c;
        }
    }
}

/// Parameters of [`TensorSrht`]: `dim` = $m$ (default 1024; even for `Fourier`), `transform` (default `Fourier`,
/// as in the reference code).
#[derive(Clone, Debug)]
pub struct TensorSrhtParams {
    dim: usize,
    transform: Transform,
}

impl TensorSrhtParams {
    /// Output dimension $m$ (real).
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// The transform.
    pub fn transform(mut self, t: Transform) -> Self {
        self.transform = t;
        self
    }

    /// A sketch of $x \otimes x$ for $x \in \mathbb R^d$ (the degree-2 polynomial kernel).
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<TensorSrht> {
        self.fit_pair(d, d, rng)
    }

    /// A sketch of $x \otimes y$ for $x \in \mathbb R^{d_1}$, $y \in \mathbb R^{d_2}$.
    pub fn fit_pair(&self, d1: usize, d2: usize, rng: &mut RfxRng) -> Result<TensorSrht> {
        check_dim("d1", d1)?;
        check_dim("d2", d2)?;
        let inner = match self.transform {
            Transform::Hadamard => {
                check_dim("dim", self.dim)?;
                let (p1, p2) = (next_pow2(d1), next_pow2(d2));
                TsInner::Hadamard {
                    p1,
                    p2,
                    s1: rademacher_vec(d1, rng).to_vec(),
                    s2: rademacher_vec(d2, rng).to_vec(),
                    a: (0..self.dim).map(|_| rng.gen_range(0..p1)).collect(),
                    b: (0..self.dim).map(|_| rng.gen_range(0..p2)).collect(),
                }
            }
            Transform::Fourier => {
                check_even_dim(self.dim)?;
                let mut planner = FftPlanner::new();
                TsInner::Fourier(ComplexTensorSrht::new(
                    d1,
                    d2,
                    self.dim / 2,
                    &mut planner,
                    rng,
                )?)
            }
        };
        Ok(TensorSrht {
            d1,
            d2,
            m: self.dim,
            inner,
        })
    }
}

#[derive(Clone)]
enum TsInner {
    Hadamard {
        p1: usize,
        p2: usize,
        s1: Vec<f64>,
        s2: Vec<f64>,
        a: Vec<usize>,
        b: Vec<usize>,
    },
    Fourier(ComplexTensorSrht),
}

/// A fitted TensorSRHT $\mathbb R^{d_1} \otimes \mathbb R^{d_2} \to \mathbb R^m$.
#[derive(Clone)]
pub struct TensorSrht {
    d1: usize,
    d2: usize,
    m: usize,
    inner: TsInner,
}

impl std::fmt::Debug for TensorSrht {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorSrht")
            .field("d1", &self.d1)
            .field("d2", &self.d2)
            .field("m", &self.m)
            .finish()
    }
}

impl TensorSrht {
    /// Parameters with the defaults `dim` 1024, Fourier.
    pub fn params() -> TensorSrhtParams {
        TensorSrhtParams {
            dim: 1024,
            transform: Transform::Fourier,
        }
    }

    /// Sketches $x_i \otimes y_i$ for the rows of `x` ($n \times d_1$) and `y` ($n \times d_2$).
    pub fn transform_pair(
        &self,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
    ) -> Result<Array2<f64>> {
        if x.ncols() != self.d1 || y.ncols() != self.d2 || x.nrows() != y.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "TensorSRHT fitted for {} ⊗ {} given {} x {} and {} x {}",
                self.d1,
                self.d2,
                x.nrows(),
                x.ncols(),
                y.nrows(),
                y.ncols()
            )));
        }
        let mut out = Array2::zeros((x.nrows(), self.m));
        match &self.inner {
            TsInner::Hadamard {
                p1,
                p2,
                s1,
                s2,
                a,
                b,
            } => {
                let c = 1.0 / (self.m as f64).sqrt();
                let fill = |buf: &mut [f64], r: ndarray::ArrayView1<'_, f64>, s: &[f64]| {
                    for ((bv, xv), sv) in buf.iter_mut().zip(r.iter()).zip(s) {
                        *bv = xv * sv;
                    }
                    buf[r.len()..].iter_mut().for_each(|v| *v = 0.0);
                    fwht_unchecked(buf);
                };
                Zip::from(out.axis_iter_mut(Axis(0)))
                    .and(x.axis_iter(Axis(0)))
                    .and(y.axis_iter(Axis(0)))
                    .into_par_iter()
                    .for_each_init(
                        || (vec![0.0; *p1], vec![0.0; *p2]),
                        |(b1, b2), (mut o, xr, yr)| {
                            fill(b1, xr, s1);
                            fill(b2, yr, s2);
                            for ((ov, &i), &j) in o.iter_mut().zip(a).zip(b) {
                                *ov = c * b1[i] * b2[j];
                            }
                        },
                    );
            }
            TsInner::Fourier(node) => {
                Zip::from(out.axis_iter_mut(Axis(0)))
                    .and(x.axis_iter(Axis(0)))
                    .and(y.axis_iter(Axis(0)))
                    .into_par_iter()
                    .for_each_init(
                        || {
                            (
                                vec![Complex64::default(); node.n1],
                                vec![Complex64::default(); node.n2],
                                vec![Complex64::default(); node.mc],
                                vec![Complex64::default(); node.scratch_len()],
                            )
                        },
                        |(b1, b2, u, scr), (mut o, xr, yr)| {
                            for (bv, xv) in b1.iter_mut().zip(xr.iter()) {
                                *bv = Complex64::new(*xv, 0.0);
                            }
                            for (bv, yv) in b2.iter_mut().zip(yr.iter()) {
                                *bv = Complex64::new(*yv, 0.0);
                            }
                            node.apply(b1, b2, u, scr);
                            write_re_im(u, o.as_slice_mut().expect("standard layout"));
                        },
                    );
            }
        }
        Ok(out)
    }
}

impl FeatureMap for TensorSrht {
    fn input_dim(&self) -> usize {
        self.d1
    }

    fn dim(&self) -> usize {
        self.m
    }

    /// The sketch of $x \otimes x$ (kernel $\langle x, y\rangle^2$); needs $d_1 = d_2$.
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        self.transform_pair(x, x)
    }
}
