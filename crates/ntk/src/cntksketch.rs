//! CNTKSketch (Zandieh et al., NeurIPS 2021, Definition 3, App. G, Eqs. 109–114) in its practical form:
//! per-layer low-degree polynomial fits of $\kappa_1$ and $\kappa_0$ sketched with PolySketch trees, with the
//! conventions of the exact [`Cntk`] (same padding, odd $q$, fixed first and last layer, global average
//! pooling; images as rows in height–width–channel order).
//!
//! **Polynomials** ([`CntkPolynomials`]). At layer $h$, $\kappa_1 \approx P_1^{(h)}$ and $\kappa_0 \approx P_0^{(h)}$,
//! nonnegative, monotone degree-$p$ fits by the constrained least squares of the NTK fit
//! ([`crate::ntksketch`], reference code `krelu` / `kdotrelu`): 201 equispaced nodes on the layer's domain
//! plus 20 nodes clustered near 1, unit weights for $\kappa_1$ and $t^2 + \frac12$ ($t$ = linspace(0, 1)) for
//! $\kappa_0$. Domain: $[-1, 1]$ at layer 1 (pixel correlations of standardised images have either sign) and
//! $[0, 1]$ at layers $h \ge 2$, where the exact correlation
//! $\rho^{(h)} = \mathrm{conv}(\Gamma^{(h-1)})/\sqrt{N N^\prime}$ is $\ge 0$ because $\Gamma^{(h-1)} \ge 0$ ($\kappa_1 \ge 0$).
//! (The reference code shrinks the domain by a heuristic recursion; $[0, 1]$ is the provable range.)
//! The domain only affects the approximation quality, never the expectation identity below.
//!
//! **Features** ([`CntkSketch`]). All sketches are shared by all pixels and images and independent across
//! layers; $\phi^{(0)}\_{ij} = x_{ij:}$ (the SRHT $S$ of Eq. 109 is dropped for dense inputs, $r_0 = c$). For
//! $h = 1..L$, with $N^{(h)}$ of Eq. 103 and the window direct sum (zero vectors outside the image):
//!
//! * $\mu_{ij} = \bigoplus_{a,b}\phi^{(h-1)}\_{i+a,j+b} / \sqrt{N^{(h)}\_{ij}}$, so
//!   $\langle\mu_{ij}(y), \mu_{i^\prime j^\prime}(z)\rangle = \mathrm{conv}(\langle\phi^{(h-1)}, \phi^{(h-1)}\rangle)/\sqrt{N N^\prime}$;
//! * $\phi^{(h)}\_{ij} = \frac{\sqrt{N^{(h)}\_{ij}}}{q}\thinspace T\big[\sqrt{\beta_0}, \sqrt{\beta_1}Q_1(\mu_{ij}), \dots\big]$ (Eq. 110),
//!   $Q_j$ the degree-$j$ outputs of one PolySketch tree ([`PolynomialSketch`], complex TensorSRHT nodes,
//!   `width` reals per degree), $\beta$ the coefficients of $P_1^{(h)}$, $T$ a Hadamard SRHT to `width`;
//! * $\dot\phi^{(h)}\_{ij} = \frac1q\thinspace W\big[\dots\big]$ likewise with $P_0^{(h)}$ and an independent tree (Eq. 111);
//! * $h < L$: $\eta_{ij} = Q^2(\psi^{(h-1)}\_{ij} \otimes \dot\phi^{(h)}\_{ij}) \oplus \phi^{(h)}\_{ij}$ ($\psi^{(0)} = 0$, so
//!   $\eta = \phi^{(1)}$ at $h = 1$) and $\psi^{(h)}\_{ij} = R \bigoplus_{a,b}\eta_{i+a,j+b}$ (Eq. 112), $Q^2$ a complex
//!   TensorSRHT and $R$ a complex SRHT, both to `width`;
//! * $h = L$: $\psi^{(L)}\_{ij} = Q^2(\psi^{(L-1)}\_{ij} \otimes \dot\phi^{(L)}\_{ij})$ to `dim` $= m$ (Eq. 113, with
//!   $\dot\phi$: the printed $\phi$ is a typo); $\phi^{(L)}$ is not needed and not computed;
//! * $\Psi(x) = \frac1{d_1 d_2}\sum_{ij}\psi^{(L)}\_{ij}$ (Eq. 114 without the final JL matrix $G$: $m$ is the
//!   output dimension).
//!
//! **What is unbiased.** Every sketch is unbiased for inner products given its inputs, and the two trees of a
//! layer are independent of each other and of $Q^2$, $R$. So *conditionally on the layer's inputs*,
//! $\mathbb E\langle\phi^{(h)}(y)\_{ij}, \phi^{(h)}(z)\_{i^\prime j^\prime}\rangle = \frac{\sqrt{N N^\prime}}{q^2}P_1^{(h)}(\hat\rho)$ and
//! $\mathbb E\langle\psi^{(h)}(y)\_{ij}, \psi^{(h)}(z)\_{i^\prime j^\prime}\rangle$ is one step of the Definition-2 recursion (Eqs. 104–107)
//! with $(\kappa_1, \kappa_0) \to (P_1^{(h)}, P_0^{(h)})$ applied to the input inner products $\hat\Gamma^{(h-1)}$,
//! $\hat\Pi^{(h-1)}$ — tested exactly. Layer 1's inputs are the pixels, so for $L = 2$ only the last layer
//! receives sketched inputs; a polynomial of a sketched inner product is not unbiased for the polynomial of
//! its mean, so the full map's expectation equals [`PolynomialCntk`] (the CNTK of the fitted polynomials)
//! only up to a bias of the order of the inner layers' sketch variance, $O(1/\text{width})$, which the Monte
//! Carlo test bounds below its standard error.
//!
//! **Cost.** Per pixel and layer $O(p\thinspace q^2 w \log(q^2 w))$ (FFTs of the direct sums, $w$ = `width`), i.e.
//! linear in the number of pixels and images, against $O(L q^2 (d_1 d_2)^2)$ per *pair* of images for the
//! exact CNTK. Images are processed in chunks of `batch`; within a chunk every sketch runs over all pixels
//! of all images in parallel (rayon over rows). Each row's computation is independent of the others, so the
//! output does not depend on the thread count or the chunking. (FFT-based SRHT/TensorSRHT need
//! $O(d \log d)$ per row instead of the $O(d\thinspace w)$ of a dense GEMM projection, so no GEMM is used.)

use crate::cntk::{Cntk, Duals};
use crate::ntksketch::{fit_monotone_polynomial, linspace};
use ndarray::{s, Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{FeatureMap, Kernel, Result, RfxError, RfxRng};
use rfx_sketches::{PolynomialSketch, Srht, TensorSrht, Transform};

use rfx_kernels::{arccos0, arccos1};

/// Equispaced grid on which the stated fit errors are measured.
const ERROR_GRID: usize = 20_001;
/// Equispaced fit nodes on the domain.
const FIT_NODES: usize = 201;
/// Extra nodes clustered near 1.
const CLUSTER_NODES: usize = 20;

fn horner(c: &[f64], t: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &v| acc * t + v)
}

/// Per-layer nonnegative, monotone polynomial fits $P_1^{(h)} \approx \kappa_1$, $P_0^{(h)} \approx \kappa_0$ on the
/// layer's domain ($[-1, 1]$ for $h = 1$, $[0, 1]$ for $h \ge 2$; module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct CntkPolynomials {
    k1: Vec<Vec<f64>>,
    k0: Vec<Vec<f64>>,
    err1: Vec<f64>,
    err0: Vec<f64>,
}

impl CntkPolynomials {
    /// Fits both polynomials of degree `degree` ($1..=32$) for layers $1..=L$.
    pub fn fit(depth: usize, degree: usize) -> Result<Self> {
        if depth == 0 || depth > 64 {
            return Err(RfxError::invalid("depth", depth, "1..=64"));
        }
        if degree == 0 || degree > crate::MAX_POLY_DEGREE {
            return Err(RfxError::invalid(
                "degree",
                degree,
                format!("1..={}", crate::MAX_POLY_DEGREE),
            ));
        }
        let mut out = Self {
            k1: Vec::new(),
            k0: Vec::new(),
            err1: Vec::new(),
            err0: Vec::new(),
        };
        // layer 1 has domain [-1, 1], every later layer [0, 1]: fit the two domains once
        let fits: Vec<_> = [-1.0, 0.0]
            .iter()
            .take(depth.min(2))
            .map(|&lo| Self::fit_domain(lo, degree))
            .collect::<Result<_>>()?;
        for h in 1..=depth {
            let (k1, k0, e1, e0) = fits[if h == 1 { 0 } else { 1 }].clone();
            out.k1.push(k1);
            out.k0.push(k0);
            out.err1.push(e1);
            out.err0.push(e0);
        }
        Ok(out)
    }

    #[allow(clippy::type_complexity)]
    fn fit_domain(lo: f64, degree: usize) -> Result<(Vec<f64>, Vec<f64>, f64, f64)> {
        let mut nodes: Vec<f64> = linspace(lo, 1.0, FIT_NODES).collect();
        // cos((2i+1)π/(4n)) ∈ (0.7, 1) on [-1, 1], mapped affinely onto [lo, 1]
        nodes.extend((0..CLUSTER_NODES).map(|i| {
            let u = ((2 * i + 1) as f64 * std::f64::consts::PI / (4 * CLUSTER_NODES) as f64).cos();
            1.0 - (1.0 - u) * (1.0 - lo) / 2.0
        }));
        nodes.sort_by(f64::total_cmp);
        let nn = nodes.len();
        let unit = vec![1.0; nn];
        let w0: Vec<f64> = linspace(0.0, 1.0, nn).map(|t| t * t + 0.5).collect();
        let y1: Vec<f64> = nodes.iter().map(|&t| arccos1(t)).collect();
        let y0: Vec<f64> = nodes.iter().map(|&t| arccos0(t)).collect();
        let k1 = fit_monotone_polynomial(&nodes, &unit, &y1, degree)?;
        let k0 = fit_monotone_polynomial(&nodes, &w0, &y0, degree)?;
        let err = |c: &[f64], f: fn(f64) -> f64| {
            linspace(lo, 1.0, ERROR_GRID)
                .chain(nodes.iter().copied())
                .map(|t| (horner(c, t) - f(t)).abs())
                .fold(0.0f64, f64::max)
        };
        let (e1, e0) = (err(&k1, arccos1), err(&k0, arccos0));
        Ok((k1, k0, e1, e0))
    }

    /// Number of layers $L$.
    pub fn depth(&self) -> usize {
        self.k1.len()
    }

    /// Coefficients $\beta_0..\beta_p$ of $P_1^{(h)}$ ($h \in 1..=L$).
    pub fn kappa1(&self, h: usize) -> &[f64] {
        &self.k1[h - 1]
    }

    /// Coefficients of $P_0^{(h)}$.
    pub fn kappa0(&self, h: usize) -> &[f64] {
        &self.k0[h - 1]
    }

    /// The fit's domain $[\text{lo}, 1]$ at layer $h$.
    pub fn domain(&self, h: usize) -> (f64, f64) {
        (if h == 1 { -1.0 } else { 0.0 }, 1.0)
    }

    /// $\max|P_1^{(h)} - \kappa_1|$ on the layer's domain (20,001-point grid and the fit nodes).
    pub fn max_error1(&self, h: usize) -> f64 {
        self.err1[h - 1]
    }

    /// $\max|P_0^{(h)} - \kappa_0|$ on the layer's domain.
    pub fn max_error0(&self, h: usize) -> f64 {
        self.err0[h - 1]
    }
}

impl Duals for CntkPolynomials {
    /// $(P_1^{(h)}(\rho), P_0^{(h)}(\rho))$, evaluated without clamping $\rho$ (sketched correlations may leave
    /// $[-1, 1]$ slightly; the expectation identity holds for the polynomial wherever it is evaluated).
    fn duals(&self, layer: usize, rho: f64) -> (f64, f64) {
        (
            horner(&self.k1[layer - 1], rho),
            horner(&self.k0[layer - 1], rho),
        )
    }
}

/// The "polynomial CNTK": Definition 2 with $(\kappa_1, \kappa_0)$ replaced at layer $h$ by the fitted
/// $(P_1^{(h)}, P_0^{(h)})$ of [`CntkPolynomials`] — the kernel CNTKSketch approximates (module docs). The
/// recursion is the exact [`Cntk`]'s ([`Cntk::gram_with`]).
#[derive(Clone, Debug)]
pub struct PolynomialCntk {
    cntk: Cntk,
    polys: CntkPolynomials,
}

impl PolynomialCntk {
    /// The polynomial CNTK of shape `cntk` with the given fits (their depth must be `cntk.depth`).
    pub fn new(cntk: Cntk, polys: CntkPolynomials) -> Result<Self> {
        if polys.depth() != cntk.depth {
            return Err(RfxError::invalid(
                "polynomials",
                polys.depth(),
                format!("fits for {} layers", cntk.depth),
            ));
        }
        Ok(Self { cntk, polys })
    }

    /// The fits.
    pub fn polynomials(&self) -> &CntkPolynomials {
        &self.polys
    }
}

impl Kernel for PolynomialCntk {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let xs = x.insert_axis(Axis(0));
        let ys = y.insert_axis(Axis(0));
        self.cntk
            .gram_with(xs, ys, &self.polys)
            .expect("polynomial cntk: row length must be height*width*channels")[[0, 0]]
    }

    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.cntk.gram_with(x, y, &self.polys)
    }
}

/// Parameters of [`CntkSketch`]: `depth` $L \ge 2$ (default 2; $L = 1$ is the zero kernel), `filter` $q$ (odd,
/// default 3), image `shape` $(d_1, d_2, c)$ (required), `degree` $p$ of the polynomial fits (default 2, the
/// reference code's `ns_deg`), `width` $w$ of the internal sketches (even, default 256), `dim` $m$ of the
/// output (even, default 1024), `batch` images per chunk (default 8; does not change the output).
#[derive(Clone, Debug)]
pub struct CntkSketchParams {
    depth: usize,
    filter: usize,
    shape: (usize, usize, usize),
    degree: usize,
    width: usize,
    dim: usize,
    batch: usize,
}

impl CntkSketchParams {
    /// Number of convolutional layers $L$.
    pub fn depth(mut self, l: usize) -> Self {
        self.depth = l;
        self
    }
    /// Filter size $q$ (odd).
    pub fn filter(mut self, q: usize) -> Self {
        self.filter = q;
        self
    }
    /// Image height, width and channels.
    pub fn shape(mut self, height: usize, width: usize, channels: usize) -> Self {
        self.shape = (height, width, channels);
        self
    }
    /// Degree of the polynomial fits.
    pub fn degree(mut self, p: usize) -> Self {
        self.degree = p;
        self
    }
    /// Width of the internal sketches ($\phi$, $\dot\phi$, $\psi$ and the trees' outputs per degree).
    pub fn width(mut self, w: usize) -> Self {
        self.width = w;
        self
    }
    /// Output dimension $m$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }
    /// Images per chunk.
    pub fn batch(mut self, b: usize) -> Self {
        self.batch = b;
        self
    }

    /// Fits the polynomials and draws every sketch from `rng`.
    pub fn fit(&self, rng: &mut RfxRng) -> Result<CntkSketch> {
        let (h, w, c) = self.shape;
        let cntk = Cntk::new(self.depth, self.filter, h, w, c)?;
        if self.depth < 2 {
            return Err(RfxError::invalid(
                "depth",
                self.depth,
                "an integer >= 2 (the L = 1 CNTK of Definition 2 is the zero kernel)",
            ));
        }
        for (name, v) in [("width", self.width), ("dim", self.dim)] {
            if v < 2 || v % 2 != 0 {
                return Err(RfxError::invalid(name, v, "an even integer >= 2"));
            }
        }
        if self.batch == 0 {
            return Err(RfxError::invalid("batch", 0, "an integer >= 1"));
        }
        let polys = CntkPolynomials::fit(self.depth, self.degree)?;
        let q2 = self.filter * self.filter;
        let wd = self.width;
        let tree = |coef: &[f64], d: usize, rng: &mut RfxRng| -> Result<Tree> {
            let poly = PolynomialSketch::params()
                .dim(wd)
                .coefficients(coef.to_vec())
                .fit(d, rng)?;
            let compress = Srht::params()
                .dim(wd)
                .transform(Transform::Hadamard)
                .fit(poly.dim(), rng)?;
            Ok(Tree { poly, compress })
        };
        let mut layers = Vec::with_capacity(self.depth);
        let mut r_prev = c;
        for l in 1..=self.depth {
            let last = l == self.depth;
            let kappa1 = if last {
                None
            } else {
                Some(tree(polys.kappa1(l), q2 * r_prev, rng)?)
            };
            let kappa0 = tree(polys.kappa0(l), q2 * r_prev, rng)?;
            let pair = if l == 1 {
                None
            } else {
                Some(
                    TensorSrht::params()
                        .dim(if last { self.dim } else { wd })
                        .transform(Transform::Fourier)
                        .fit_pair(wd, wd, rng)?,
                )
            };
            let window = if last {
                None
            } else {
                let eta = if l == 1 { wd } else { 2 * wd };
                Some(
                    Srht::params()
                        .dim(wd)
                        .transform(Transform::Fourier)
                        .fit(q2 * eta, rng)?,
                )
            };
            layers.push(Layer {
                kappa1,
                kappa0,
                pair,
                window,
            });
            r_prev = wd;
        }
        Ok(CntkSketch {
            params: self.clone(),
            cntk,
            polys,
            layers,
        })
    }
}

/// Fitted on the input dimension, which must be the image size $d_1 d_2 c$; draws as [`CntkSketchParams::fit`].
impl rfx_core::Fit for CntkSketchParams {
    type Map = CntkSketch;
    fn fit_map(&self, data: rfx_core::FitData<'_>, rng: &mut RfxRng) -> Result<CntkSketch> {
        check_image_dim(self.shape, data.dim())?;
        self.fit(rng)
    }
}

/// An error unless `d` is the size $d_1 d_2 c$ of images of `shape` $(d_1, d_2, c)$.
pub(crate) fn check_image_dim(shape: (usize, usize, usize), d: usize) -> Result<()> {
    let (h, w, c) = shape;
    if h.checked_mul(w).and_then(|p| p.checked_mul(c)) != Some(d) {
        return Err(RfxError::DimensionMismatch(format!(
            "input dimension {d} is not the image size {h}x{w}x{c}"
        )));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct Tree {
    poly: PolynomialSketch,
    compress: Srht,
}

impl Tree {
    /// $T[\sqrt{\beta_0}, \sqrt{\beta_1}Q_1(\mu), \dots]$ with every row multiplied by `scale[row]`.
    fn apply(&self, mu: ArrayView2<'_, f64>, scale: &[f64]) -> Result<Array2<f64>> {
        let f = self.poly.transform(mu)?;
        let mut out = self.compress.transform(f.view())?;
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(scale.par_iter())
            .for_each(|(mut r, &s)| r.mapv_inplace(|v| v * s));
        Ok(out)
    }
}

#[derive(Clone, Debug)]
struct Layer {
    /// $\phi^{(h)}$ tree ($P_1$); absent at the last layer.
    kappa1: Option<Tree>,
    /// $\dot\phi^{(h)}$ tree ($P_0$).
    kappa0: Tree,
    /// $Q^2$ for $\psi^{(h-1)} \otimes \dot\phi^{(h)}$; absent at layer 1 ($\psi^{(0)} = 0$).
    pair: Option<TensorSrht>,
    /// $R$ on the window direct sum of $\eta$; absent at the last layer.
    window: Option<Srht>,
}

/// The state between layers for a chunk of images: rows are (image, pixel) in image-major, row-major
/// pixel order.
#[derive(Clone, Debug)]
pub(crate) struct LayerState {
    /// $\phi^{(h)}$ (absent after the last layer).
    pub(crate) phi: Option<Array2<f64>>,
    /// $\psi^{(h)}$ (absent after layer 0).
    pub(crate) psi: Option<Array2<f64>>,
}

/// Row-wise direct sum over the $q \times q$ window (im2col): rows of `mat` are (image, pixel) with
/// `shape` $= (d_1, d_2)$ pixels per image, and output row $(b, i, j)$ is
/// $\bigoplus_{a,b^\prime} \text{mat}\_{(b, i+a, j+b^\prime)} \cdot \text{scale}_{(b,i,j)}$ (offsets $a$ outer, $b^\prime$ inner, both in
/// $-\frac{q-1}2..\frac{q-1}2$; zero blocks outside the image, i.e. same padding). Parallel over rows.
pub(crate) fn window_concat(
    mat: ArrayView2<'_, f64>,
    shape: (usize, usize),
    filter: usize,
    scale: Option<&[f64]>,
) -> Array2<f64> {
    let (h, w) = (shape.0 as isize, shape.1 as isize);
    let r = (filter / 2) as isize;
    let p = shape.0 * shape.1;
    let k = mat.ncols();
    let mut out = Array2::zeros((mat.nrows(), filter * filter * k));
    let mat = mat.as_standard_layout();
    let src = mat.as_slice().expect("standard layout");
    let row_len = filter * filter * k;
    if row_len == 0 {
        return out;
    }
    out.as_slice_mut()
        .expect("a new array")
        .par_chunks_exact_mut(row_len)
        // rows are independent: chunks of them per task only bound rayon's overhead on one image's rows
        .with_min_len(256)
        .enumerate()
        .for_each(|(row, o)| {
            let (img, pix) = (row / p, (row % p) as isize);
            let (i, j) = (pix / w, pix % w);
            let sc = scale.map_or(1.0, |s| s[row]);
            let mut blk = 0;
            for a in -r..=r {
                for b in -r..=r {
                    let (ia, jb) = (i + a, j + b);
                    if (0..h).contains(&ia) && (0..w).contains(&jb) && sc != 0.0 {
                        let at = (img * p + (ia * w + jb) as usize) * k;
                        o[blk * k..(blk + 1) * k]
                            .iter_mut()
                            .zip(&src[at..at + k])
                            .for_each(|(ov, &sv)| *ov = sv * sc);
                    }
                    blk += 1;
                }
            }
        });
    out
}

/// Fitted CNTKSketch features (module docs); dimension `dim`.
#[derive(Clone, Debug)]
pub struct CntkSketch {
    params: CntkSketchParams,
    cntk: Cntk,
    polys: CntkPolynomials,
    layers: Vec<Layer>,
}

impl CntkSketch {
    /// Defaults: $L = 2$, $q = 3$, degree 2, width 256, $m = 1024$, batch 8; the shape must be set.
    pub fn params() -> CntkSketchParams {
        CntkSketchParams {
            depth: 2,
            filter: 3,
            shape: (0, 0, 0),
            degree: 2,
            width: 256,
            dim: 1024,
            batch: 8,
        }
    }

    /// The polynomial fits; $\mathbb E\langle\Psi(y), \Psi(z)\rangle \approx$ [`PolynomialCntk`] with them.
    pub fn polynomials(&self) -> &CntkPolynomials {
        &self.polys
    }

    /// The kernel this map approximates in expectation (module docs).
    pub fn polynomial_cntk(&self) -> PolynomialCntk {
        PolynomialCntk {
            cntk: self.cntk,
            polys: self.polys.clone(),
        }
    }

    fn pixels(&self) -> usize {
        self.cntk.height * self.cntk.width
    }

    fn window_sum(&self, mat: ArrayView2<'_, f64>, scale: Option<&[f64]>) -> Array2<f64> {
        window_concat(
            mat,
            (self.cntk.height, self.cntk.width),
            self.cntk.filter,
            scale,
        )
    }

    /// Layer $h$ (1-based) applied to the state after layer $h-1$ of the images whose patch norms are `norms`
    /// (one [`Cntk::patch_norms`] per image).
    pub(crate) fn layer(
        &self,
        h: usize,
        state: &LayerState,
        norms: &[Vec<Vec<f64>>],
    ) -> Result<LayerState> {
        let lay = &self.layers[h - 1];
        let q = self.cntk.filter as f64;
        let nh: Vec<f64> = norms.iter().flat_map(|n| n[h].iter().copied()).collect();
        let inv: Vec<f64> = nh
            .iter()
            .map(|&v| if v > 0.0 { 1.0 / v.sqrt() } else { 0.0 })
            .collect();
        let phi_prev = state
            .phi
            .as_ref()
            .ok_or_else(|| RfxError::Numerical("cntksketch: no phi after the last layer".into()))?;
        let mu = self.window_sum(phi_prev.view(), Some(&inv));
        let phidot = lay.kappa0.apply(mu.view(), &vec![1.0 / q; nh.len()])?;
        let phi = match &lay.kappa1 {
            Some(t) => {
                let sc: Vec<f64> = nh.iter().map(|&v| v.max(0.0).sqrt() / q).collect();
                Some(t.apply(mu.view(), &sc)?)
            }
            None => None,
        };
        drop(mu);
        // Q²(ψ⁽ʰ⁻¹⁾ ⊗ φ̇⁽ʰ⁾), or nothing at layer 1 (ψ⁽⁰⁾ = 0)
        let prod = match (&lay.pair, &state.psi) {
            (Some(q2), Some(psi)) => Some(q2.transform_pair(psi.view(), phidot.view())?),
            (None, None) => None,
            _ => {
                return Err(RfxError::Numerical(
                    "cntksketch: layer state does not match the layer".into(),
                ))
            }
        };
        match (&lay.window, phi) {
            (Some(rw), Some(phi)) => {
                let eta = match prod {
                    Some(p) => ndarray::concatenate(Axis(1), &[p.view(), phi.view()])
                        .map_err(|e| RfxError::Numerical(e.to_string()))?,
                    None => phi.clone(),
                };
                let psi = rw.transform(self.window_sum(eta.view(), None).view())?;
                Ok(LayerState {
                    phi: Some(phi),
                    psi: Some(psi),
                })
            }
            (None, None) => Ok(LayerState {
                phi: None,
                psi: prod,
            }),
            _ => Err(RfxError::Numerical("cntksketch: inconsistent layer".into())),
        }
    }

    /// The input state $\phi^{(0)}$ (pixels as rows of $c$ channels) and the patch norms of a chunk.
    pub(crate) fn input_state(&self, x: ArrayView2<'_, f64>) -> (LayerState, Vec<Vec<Vec<f64>>>) {
        let c = self.cntk.channels;
        let p = self.pixels();
        let mut phi = Array2::zeros((x.nrows() * p, c));
        for (b, row) in x.outer_iter().enumerate() {
            for pix in 0..p {
                for l in 0..c {
                    phi[[b * p + pix, l]] = row[pix * c + l];
                }
            }
        }
        let norms = x.outer_iter().map(|r| self.cntk.patch_norms(r)).collect();
        (
            LayerState {
                phi: Some(phi),
                psi: None,
            },
            norms,
        )
    }

    fn chunk(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let (mut state, norms) = self.input_state(x);
        for h in 1..=self.params.depth {
            state = self.layer(h, &state, &norms)?;
        }
        let psi = state
            .psi
            .ok_or_else(|| RfxError::Numerical("cntksketch: no output".into()))?;
        // global average pooling (Eq. 114)
        let p = self.pixels();
        let mut out = Array2::zeros((x.nrows(), self.params.dim));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut o)| {
                for pix in 0..p {
                    o += &psi.row(b * p + pix);
                }
                o /= p as f64;
            });
        Ok(out)
    }
}

impl FeatureMap for CntkSketch {
    fn input_dim(&self) -> usize {
        self.cntk.input_dim()
    }

    fn dim(&self) -> usize {
        self.params.dim
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let mut out = Array2::zeros((x.nrows(), self.params.dim));
        let b = self.params.batch;
        for start in (0..x.nrows()).step_by(b) {
            let end = (start + b).min(x.nrows());
            let f = self.chunk(x.slice(s![start..end, ..]))?;
            out.slice_mut(s![start..end, ..]).assign(&f);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rfx_core::rng_stream;

    fn images(n: usize, len: usize, seed: u64) -> Array2<f64> {
        let mut rng = rng_stream(seed, "cntksketch-test");
        Array2::from_shape_simple_fn((n, len), || rng.gen::<f64>() * 2.0 - 1.0)
    }

    fn dot_rows(a: ArrayView2<'_, f64>, i: usize, b: ArrayView2<'_, f64>, j: usize) -> f64 {
        a.row(i).dot(&b.row(j))
    }

    #[test]
    fn fits_are_nonnegative_monotone_and_improve_with_the_degree() {
        let mut prev = (f64::INFINITY, f64::INFINITY);
        for degree in [2, 4, 8] {
            let p = CntkPolynomials::fit(3, degree).unwrap();
            for h in 1..=3 {
                assert!(p.kappa1(h).iter().chain(p.kappa0(h)).all(|&b| b >= 0.0));
                let (lo, hi) = p.domain(h);
                // monotone on the domain; the stated error is the grid maximum
                let mut last = f64::NEG_INFINITY;
                for t in linspace(lo, hi, 1001) {
                    let (a, b) = p.duals(h, t);
                    assert!(a >= last - 1e-9);
                    last = a;
                    assert!((a - arccos1(t)).abs() <= p.max_error1(h) + 1e-12);
                    assert!((b - arccos0(t)).abs() <= p.max_error0(h) + 1e-12);
                }
            }
            // layers 2 and 3 share the [0, 1] fits
            assert_eq!(p.kappa0(2), p.kappa0(3));
            let e = (p.max_error1(1), p.max_error0(2));
            assert!(
                e.0 <= prev.0 + 1e-12 && e.1 <= prev.1 + 1e-12,
                "{degree}: {e:?}"
            );
            prev = e;
        }
        // degree 8: κ₁ is smooth (error < 1e-2), κ₀ has a square-root singularity at 1 (error a few 1e-2)
        assert!(prev.0 < 1e-2 && prev.1 < 0.1, "{prev:?}");
    }

    /// $\max_{|t| \le s} |P^\prime(t)|$ and $\max_{|t| \le s}|P(t)|$ for nonnegative coefficients: both at $t = s$.
    fn value_and_slope_at(c: &[f64], s: f64) -> (f64, f64) {
        let d: Vec<f64> = c
            .iter()
            .enumerate()
            .skip(1)
            .map(|(j, b)| j as f64 * b)
            .collect();
        (horner(c, s), horner(&d, s))
    }

    #[test]
    fn polynomial_cntk_is_within_the_bound_from_the_fit_errors_of_the_exact_cntk() {
        // L = 2: Θ̃ − Θ = mean over pixel pairs of (Π̃¹ − Π¹)Γ̇̃² + Π¹(Γ̇̃² − Γ̇²) with
        // |Π̃¹ − Π¹| ≤ D ε₁ (D = √(N⁽²⁾N'⁽²⁾); conv of √(N⁽¹⁾N'⁽¹⁾) ≤ q² D by Cauchy–Schwarz), |Π¹| ≤ D,
        // |ρ̃² − ρ²| ≤ ε₁, |Γ̇̃²| ≤ P₀(1 + ε₁)/q², |Γ̇̃² − Γ̇²| ≤ (P₀'(1 + ε₁)ε₁ + ε₀)/q²
        let (hh, ww, c) = (4, 4, 2);
        let cntk = Cntk::new(2, 3, hh, ww, c).unwrap();
        let x = images(4, hh * ww * c, 11);
        let exact = cntk.gram(x.view(), x.view()).unwrap();
        let mut bounds = Vec::new();
        for degree in [2, 8, 16] {
            let polys = CntkPolynomials::fit(2, degree).unwrap();
            let (e1, e0) = (polys.max_error1(1), polys.max_error0(2));
            let (p0, dp0) = value_and_slope_at(polys.kappa0(2), 1.0 + e1);
            let per_d = (e1 * p0 + dp0 * e1 + e0) / 9.0;
            let pk = PolynomialCntk::new(cntk, polys).unwrap();
            let approx = pk.gram(x.view(), x.view()).unwrap();
            let mut worst = 0.0f64;
            for i in 0..4 {
                for j in 0..4 {
                    let (ni, nj) = (cntk.patch_norms(x.row(i)), cntk.patch_norms(x.row(j)));
                    let pp = hh * ww;
                    let mean_d = (0..pp * pp)
                        .map(|k| (ni[2][k / pp] * nj[2][k % pp]).sqrt())
                        .sum::<f64>()
                        / (pp * pp) as f64;
                    let bound = per_d * mean_d * (1.0 + 1e-6);
                    let err = (approx[[i, j]] - exact[[i, j]]).abs();
                    assert!(err <= bound, "degree {degree} ({i},{j}): {err} > {bound}");
                    worst = worst.max(bound / exact[[i, j]].abs());
                }
            }
            bounds.push(worst);
        }
        // the bound shrinks with the degree (slowly: it is dominated by the κ₀ fit error ε₀, which decays
        // like a square root because of κ₀'s singularity at 1) and is informative at degree 16
        // (measured: relative bounds 0.64, 0.30, 0.20; actual relative errors ≤ 0.035, 0.0098, 0.0089)
        assert!(
            bounds[2] < bounds[1] && bounds[1] < bounds[0] && bounds[2] < 0.25,
            "{bounds:?}"
        );
    }

    fn small_params() -> CntkSketchParams {
        CntkSketch::params().shape(3, 3, 1).filter(3)
    }

    /// Inner products of rows `0..p` (image y) with rows `p..2p` (image z): a $P \times P$ matrix, row-major.
    fn cross(a: &Array2<f64>, p: usize) -> Vec<f64> {
        let mut out = vec![0.0; p * p];
        for u in 0..p {
            for v in 0..p {
                out[u * p + v] = dot_rows(a.view(), u, a.view(), p + v);
            }
        }
        out
    }

    struct Moments {
        sum: Vec<f64>,
        sq: Vec<f64>,
        n: f64,
    }

    impl Moments {
        fn new(k: usize) -> Self {
            Self {
                sum: vec![0.0; k],
                sq: vec![0.0; k],
                n: 0.0,
            }
        }
        fn push(&mut self, v: &[f64]) {
            for (k, &x) in v.iter().enumerate() {
                self.sum[k] += x;
                self.sq[k] += x * x;
            }
            self.n += 1.0;
        }
        /// Asserts |mean − want| ≤ 5 standard errors (plus round-off) entry by entry.
        fn assert_mean(&self, want: &[f64], what: &str) {
            let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (k, &w) in want.iter().enumerate() {
                let mean = self.sum[k] / self.n;
                let var = (self.sq[k] / self.n - mean * mean).max(0.0) * self.n / (self.n - 1.0);
                let se = (var / self.n).sqrt();
                assert!(
                    (mean - w).abs() <= 5.0 * se + 1e-9 * scale,
                    "{what}[{k}]: mean {mean} vs {w} (se {se})"
                );
            }
        }
    }

    #[test]
    fn every_layer_is_unbiased_given_its_inputs() {
        // L = 3 on 3x3x1 images: layer 2 has every part (φ, φ̇, Q²(ψ ⊗ φ̇) ⊕ φ, R), layer 3 is the last.
        // Inputs of layer h are fixed (from the map of seed 0); the average over independent draws of the
        // layer's sketches must be one step of the polynomial recursion on the inputs' inner products.
        let params = small_params().depth(3).width(16).dim(16);
        let x = images(2, 9, 5);
        let map0 = params.fit(&mut rng_stream(0, "layer-test")).unwrap();
        let (s0, norms) = map0.input_state(x.view());
        let s1 = map0.layer(1, &s0, &norms).unwrap();
        let s2 = map0.layer(2, &s1, &norms).unwrap();
        let cntk = Cntk::new(3, 3, 3, 3, 1).unwrap();
        let polys = map0.polynomials().clone();
        let p = 9;
        let expect = |h: usize, st: &LayerState| {
            let mut g = cross(st.phi.as_ref().unwrap(), p);
            let mut pi = cross(st.psi.as_ref().unwrap(), p);
            let (mut a, mut b, mut c) = (vec![0.0; p * p], vec![0.0; p * p], vec![0.0; p * p]);
            cntk.step(
                h,
                &mut g,
                &mut pi,
                &norms[0][h],
                &norms[1][h],
                &polys,
                (&mut a, &mut b, &mut c),
            );
            (g, pi)
        };
        let (g2, pi2) = expect(2, &s1);
        let (_, pi3) = expect(3, &s2);
        let (mut mg2, mut mp2, mut mp3) = (Moments::new(81), Moments::new(81), Moments::new(81));
        for seed in 1..=400u64 {
            let map = params.fit(&mut rng_stream(seed, "layer-test")).unwrap();
            let t2 = map.layer(2, &s1, &norms).unwrap();
            mg2.push(&cross(t2.phi.as_ref().unwrap(), p));
            mp2.push(&cross(t2.psi.as_ref().unwrap(), p));
            let t3 = map.layer(3, &s2, &norms).unwrap();
            assert!(t3.phi.is_none());
            mp3.push(&cross(t3.psi.as_ref().unwrap(), p));
        }
        mg2.assert_mean(&g2, "Γ⁽²⁾");
        mp2.assert_mean(&pi2, "Π⁽²⁾");
        mp3.assert_mean(&pi3, "Π⁽³⁾");
        // and layer 1, whose inputs are the pixels: Γ⁽¹⁾, Π⁽¹⁾ of the polynomial recursion itself
        let mut g = vec![0.0; p * p];
        for u in 0..p {
            for v in 0..p {
                g[u * p + v] = x[[0, u]] * x[[1, v]];
            }
        }
        let mut pi = vec![0.0; p * p];
        let (mut a, mut b, mut c) = (vec![0.0; p * p], vec![0.0; p * p], vec![0.0; p * p]);
        cntk.step(
            1,
            &mut g,
            &mut pi,
            &norms[0][1],
            &norms[1][1],
            &polys,
            (&mut a, &mut b, &mut c),
        );
        let (mut mg1, mut mp1) = (Moments::new(81), Moments::new(81));
        for seed in 1..=400u64 {
            let map = params.fit(&mut rng_stream(seed, "layer-test")).unwrap();
            let t1 = map.layer(1, &s0, &norms).unwrap();
            mg1.push(&cross(t1.phi.as_ref().unwrap(), p));
            mp1.push(&cross(t1.psi.as_ref().unwrap(), p));
        }
        mg1.assert_mean(&g, "Γ⁽¹⁾");
        mp1.assert_mean(&pi, "Π⁽¹⁾");
    }

    #[test]
    fn the_average_kernel_over_seeds_matches_the_polynomial_cntk() {
        // L = 2: layer 1 is conditionally unbiased on exact inputs; the last layer's polynomial of the
        // sketched layer-1 correlations adds a bias O(1/width) (module docs), here far below 5 standard errors
        let params = small_params().depth(2).width(256).dim(64);
        let x = images(3, 9, 9);
        let target = params
            .fit(&mut rng_stream(0, "mc"))
            .unwrap()
            .polynomial_cntk()
            .gram(x.view(), x.view())
            .unwrap();
        let mut mom = Moments::new(9);
        for seed in 0..300u64 {
            let map = params.fit(&mut rng_stream(seed, "mc")).unwrap();
            let f = map.transform(x.view()).unwrap();
            mom.push(f.dot(&f.t()).as_slice().unwrap());
        }
        mom.assert_mean(target.as_slice().unwrap(), "K");
    }

    fn rel_error(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        let num: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
        let den: f64 = b.iter().map(|v| v * v).sum();
        (num / den).sqrt()
    }

    #[test]
    fn gram_error_against_the_exact_cntk_decreases_with_the_sketch_size() {
        let (hh, ww) = (5, 5);
        let x = images(6, hh * ww, 21);
        let exact = Cntk::new(2, 3, hh, ww, 1)
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        let mut errs = Vec::new();
        for w in [8usize, 32, 128] {
            let mut e = 0.0;
            for seed in 0..4u64 {
                let map = CntkSketch::params()
                    .shape(hh, ww, 1)
                    .width(w)
                    .dim(4 * w)
                    .fit(&mut rng_stream(seed, "gram-error"))
                    .unwrap();
                let f = map.transform(x.view()).unwrap();
                e += rel_error(&f.dot(&f.t()), &exact) / 4.0;
            }
            errs.push(e);
        }
        assert!(
            errs[0] > errs[1] && errs[1] > errs[2] && errs[2] < 0.5 * errs[0],
            "{errs:?}"
        );
        assert!(errs[2] < 0.25, "{errs:?}");
    }

    #[test]
    fn features_are_deterministic_for_any_thread_count_and_chunking() {
        let params = CntkSketch::params()
            .shape(4, 5, 2)
            .depth(3)
            .width(32)
            .dim(48);
        let x = images(7, 40, 3);
        let run = |threads: usize, batch: usize| {
            let map = params
                .clone()
                .batch(batch)
                .fit(&mut rng_stream(42, "det"))
                .unwrap();
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| map.transform(x.view()).unwrap())
        };
        let a = run(1, 8);
        assert_eq!(a, run(3, 8));
        assert_eq!(a, run(2, 1));
        assert_eq!(a, run(3, 3));
        // rows transformed alone equal the batch rows
        let map = params.fit(&mut rng_stream(42, "det")).unwrap();
        let one = map.transform(x.slice(s![4..5, ..])).unwrap();
        assert_eq!(one.row(0), a.row(4));
        // another seed gives other features
        let other = params.fit(&mut rng_stream(43, "det")).unwrap();
        assert_ne!(other.transform(x.view()).unwrap(), a);
        assert_eq!(map.dim(), 48);
        assert_eq!(map.input_dim(), 40);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut rng = rng_stream(0, "bad");
        assert!(CntkSketch::params().fit(&mut rng).is_err()); // no shape
        let p = CntkSketch::params().shape(3, 3, 1);
        assert!(p.clone().depth(1).fit(&mut rng).is_err());
        assert!(p.clone().filter(2).fit(&mut rng).is_err());
        assert!(p.clone().width(7).fit(&mut rng).is_err());
        assert!(p.clone().dim(0).fit(&mut rng).is_err());
        assert!(p.clone().degree(0).fit(&mut rng).is_err());
        let map = p.fit(&mut rng).unwrap();
        assert!(map.transform(images(2, 8, 1).view()).is_err());
    }
}
