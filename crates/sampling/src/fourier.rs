//! Random Fourier-family feature maps for the Gaussian kernel (survey §2, §3.1–3.3, 3.5, 3.10).
//!
//! **Kernel and bandwidth.** $k(x, y) = \exp\negthinspace\big(-\Vert x-y\Vert^2/(2\sigma^2)\big) = \exp(-\gamma\Vert x-y\Vert^2)$ with
//! $\gamma = 1/(2\sigma^2)$; give either [`Bandwidth::Sigma`] ($\sigma$, the survey's $\varsigma$) or
//! [`Bandwidth::Gamma`]. By Bochner, $k(x,y) = \mathbb E_{\omega}\cos(\omega^\top(x-y))$ with
//! $\omega \sim \mathcal N(0, \sigma^{-2} I_d)$.
//!
//! **Output forms** (`dim` = $m$ is always the output width, so methods compare at equal memory):
//! * [`Output::Paired`]: $s = m/2$ frequencies, $z(x) = s^{-1/2}\thinspace[\cos(Wx); \sin(Wx)] \in \mathbb R^{m}$, so
//!   $\langle z(x), z(y)\rangle = \frac1s\sum_i \cos(\omega_i^\top(x-y))$ (survey §2, "real-valued
//!   implementation"); $m$ must be even. Variance for i.i.d. rows: $(1-e^{-z^2})^2/(2s)$, $z = \Vert x-y\Vert/\sigma$.
//! * [`Output::RandomPhase`]: $s = m$ frequencies, $z(x) = \sqrt{2/m}\thinspace\cos(Wx + b)$, $b_i \sim U[0, 2\pi)$
//!   (Rahimi & Recht); variance $(1 + (1-e^{-z^2})^2)/(2m)$ (survey §6.2).
//!
//! **Frequencies** $W \in \mathbb R^{s \times d}$ ([`FourierMethod`]):
//! * `Rff` (§3.1, Eq. 8): $W = \sigma^{-1} G$, $G_{ij} \sim \mathcal N(0,1)$.
//! * `Orf` (§3.2): $W = \sigma^{-1} S Q$ per $d \times d$ block, $Q$ Haar-orthogonal, $S = \operatorname{diag}(\chi_d)$;
//!   $\lceil s/d\rceil$ independent blocks, first $s$ rows kept.
//! * `Sorf` (§3.3, Eq. 12): $W = \frac{\sqrt{d^\prime}}{\sigma} \bar H D_1 \bar H D_2 \bar H D_3$ per block, $\bar H = H/\sqrt{d^\prime}$
//!   the normalised Hadamard matrix, $D_i$ Rademacher diagonals, $x$ zero-padded to $d^\prime = 2^{\lceil\log_2 d\rceil}$;
//!   computed as $\frac{1}{\sigma d^\prime} H D_1 H D_2 H D_3 x$ with three FWHTs. Biased: $|\mathbb E\hat k - k| \le 6z/\sqrt{d}$.
//! * `Fastfood` (§3.5, corrected normalisation): $W = \frac{1}{\sigma\sqrt{d^\prime}}\thinspace S H G \Pi H B$ per block with
//!   the unnormalised $H$, $B$ Rademacher, $\Pi$ a uniform permutation, $G = \operatorname{diag}(g)$,
//!   $g \sim \mathcal N(0, I_{d^\prime})$, $S_{ii} = r_i/\Vert g\Vert$, $r_i \sim \chi_{d^\prime}$: every row has norm $r_i/\sigma$.
//! * `Qmc` (§3.10, Eq. 14): $W_{ij} = \Psi^{-1}(t_{ij})/\sigma$ for the scrambled Halton points $t_i$ (see
//!   [`crate::qmc`]); randomised, hence unbiased.
//!
//! Dense methods compute $XW^\top$ with one GEMM per batch; SORF and Fastfood run the FWHT chains per row
//! (rayon over rows, one scratch buffer per worker).

use crate::hadamard::{fwht_pow2, next_pow2};
use crate::qmc::ScrambledHalton;
use crate::random::{chi, gaussian_matrix, gaussian_vec, orthogonal_gaussian, rademacher_vec};
use crate::sincos::scaled_sin_cos_in_place;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rand::seq::SliceRandom;
use rand::Rng;
use rayon::prelude::*;
use rfx_core::{transform_f32_via_f64, FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::GaussianKernel;
use statrs::distribution::{ContinuousCDF, Normal};
use std::sync::OnceLock;

/// Bandwidth of the Gaussian kernel: $k = \exp(-\Vert x-y\Vert^2/(2\sigma^2)) = \exp(-\gamma\Vert x-y\Vert^2)$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bandwidth {
    /// Width $\sigma > 0$ (the survey's $\varsigma$).
    Sigma(f64),
    /// $\gamma = 1/(2\sigma^2) > 0$ (scikit-learn's `gamma`).
    Gamma(f64),
}

impl Bandwidth {
    /// $\sigma$.
    pub fn sigma(self) -> f64 {
        match self {
            Bandwidth::Sigma(s) => s,
            Bandwidth::Gamma(g) => (0.5 / g).sqrt(),
        }
    }

    /// $\gamma = 1/(2\sigma^2)$.
    pub fn gamma(self) -> f64 {
        match self {
            Bandwidth::Sigma(s) => 0.5 / (s * s),
            Bandwidth::Gamma(g) => g,
        }
    }

    fn validate(self) -> Result<()> {
        let (name, v) = match self {
            Bandwidth::Sigma(s) => ("sigma", s),
            Bandwidth::Gamma(g) => ("gamma", g),
        };
        if v.is_finite() && v > 0.0 && self.sigma().is_finite() && self.sigma() > 0.0 {
            Ok(())
        } else {
            Err(RfxError::invalid(name, v, "a finite number > 0"))
        }
    }
}

/// How frequencies become features; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// $s^{-1/2}[\cos(Wx); \sin(Wx)]$ with $s = m/2$.
    Paired,
    /// $\sqrt{2/m}\cos(Wx + b)$ with $s = m$.
    RandomPhase,
}

/// The frequency sampler; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourierMethod {
    /// i.i.d. Gaussian rows.
    Rff,
    /// Orthogonal random features.
    Orf,
    /// Structured orthogonal random features ($HD_1HD_2HD_3$).
    Sorf,
    /// Fastfood ($SHG\Pi HB$).
    Fastfood,
    /// Scrambled-Halton quasi-Monte Carlo.
    Qmc,
}

/// Parameters of a Gaussian-kernel Fourier feature map. Defaults: `dim` 1024, $\sigma = 1$, paired output.
#[derive(Clone, Debug)]
pub struct GaussianFeatureParams {
    method: FourierMethod,
    dim: usize,
    bandwidth: Bandwidth,
    output: Output,
}

macro_rules! method_type {
    ($(#[$doc:meta])* $name:ident, $method:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name;
        impl $name {
            /// Parameters for this method (then `.dim(m).sigma(σ).fit(d, &mut rng)`).
            pub fn params() -> GaussianFeatureParams {
                GaussianFeatureParams::new($method)
            }
        }
    };
}

method_type!(
    /// Random Fourier features (Rahimi & Recht 2007; survey §3.1).
    Rff,
    FourierMethod::Rff
);
method_type!(
    /// Orthogonal random features (Yu et al. 2016; survey §3.2).
    Orf,
    FourierMethod::Orf
);
method_type!(
    /// Structured orthogonal random features (Yu et al. 2016; survey §3.3).
    Sorf,
    FourierMethod::Sorf
);
method_type!(
    /// Fastfood (Le, Sarlós & Smola 2013; survey §3.5, corrected normalisation).
    Fastfood,
    FourierMethod::Fastfood
);
method_type!(
    /// Quasi-Monte Carlo features with scrambled Halton points (Yang et al. 2014; survey §3.10).
    QmcRff,
    FourierMethod::Qmc
);

impl GaussianFeatureParams {
    /// Defaults for `method`.
    pub fn new(method: FourierMethod) -> Self {
        Self {
            method,
            dim: 1024,
            bandwidth: Bandwidth::Sigma(1.0),
            output: Output::Paired,
        }
    }

    /// Output width $m$ (even for [`Output::Paired`]).
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Bandwidth $\sigma$.
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.bandwidth = Bandwidth::Sigma(sigma);
        self
    }

    /// Bandwidth $\gamma = 1/(2\sigma^2)$.
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.bandwidth = Bandwidth::Gamma(gamma);
        self
    }

    /// Bandwidth given either way.
    pub fn bandwidth(mut self, b: Bandwidth) -> Self {
        self.bandwidth = b;
        self
    }

    /// Paired or random-phase output.
    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }

    /// Checks the parameters; returns the number of frequencies $s$.
    pub fn validate(&self) -> Result<usize> {
        self.bandwidth.validate()?;
        match self.output {
            Output::Paired => {
                if self.dim < 2 || self.dim % 2 != 0 {
                    Err(RfxError::invalid(
                        "dim",
                        self.dim,
                        "an even integer >= 2 for paired [cos, sin] output",
                    ))
                } else {
                    Ok(self.dim / 2)
                }
            }
            Output::RandomPhase => {
                if self.dim == 0 {
                    Err(RfxError::invalid("dim", self.dim, "an integer >= 1"))
                } else {
                    Ok(self.dim)
                }
            }
        }
    }

    /// Draws the map for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<GaussianFeatures> {
        let s_freq = self.validate()?;
        if d == 0 {
            return Err(RfxError::invalid("d", d, "an integer >= 1"));
        }
        let sigma = self.bandwidth.sigma();
        let freq = match self.method {
            FourierMethod::Rff => Freq::Dense(gaussian_matrix(s_freq, d, rng) / sigma),
            FourierMethod::Orf => Freq::Dense(orthogonal_gaussian(s_freq, d, rng)? / sigma),
            FourierMethod::Qmc => {
                let h = ScrambledHalton::new(d, s_freq as u64, rng)?;
                let normal = Normal::new(0.0, 1.0).expect("standard normal");
                let t = h.points(s_freq)?;
                Freq::Dense(t.mapv(|u| normal.inverse_cdf(u) / sigma))
            }
            FourierMethod::Sorf => {
                let dpad = next_pow2(d);
                let nb = s_freq.div_ceil(dpad);
                let blocks = (0..nb)
                    .map(|_| {
                        [
                            rademacher_vec(dpad, rng).to_vec(),
                            rademacher_vec(dpad, rng).to_vec(),
                            rademacher_vec(dpad, rng).to_vec(),
                        ]
                    })
                    .collect();
                Freq::Sorf {
                    dpad,
                    blocks,
                    scale: 1.0 / (sigma * dpad as f64),
                }
            }
            FourierMethod::Fastfood => {
                let dpad = next_pow2(d);
                let nb = s_freq.div_ceil(dpad);
                let mut blocks = Vec::with_capacity(nb);
                for _ in 0..nb {
                    let b = rademacher_vec(dpad, rng).to_vec();
                    let mut perm: Vec<usize> = (0..dpad).collect();
                    perm.shuffle(rng);
                    let g = gaussian_vec(dpad, rng);
                    let gnorm = g.dot(&g).sqrt().max(f64::MIN_POSITIVE);
                    let r = chi(dpad as f64, dpad, rng)?;
                    let c = 1.0 / (sigma * (dpad as f64).sqrt() * gnorm);
                    blocks.push(FastfoodBlock {
                        b,
                        perm,
                        g: g.to_vec(),
                        s: r.iter().map(|ri| ri * c).collect(),
                    });
                }
                Freq::Fastfood { dpad, blocks }
            }
        };
        let phase = match self.output {
            Output::Paired => None,
            // b = 2π u with u ~ U[0, 1) at 53-bit resolution (`Standard`), after the frequencies
            Output::RandomPhase => Some(Array1::from_shape_simple_fn(s_freq, || {
                rng.gen::<f64>() * std::f64::consts::TAU
            })),
        };
        Ok(GaussianFeatures {
            method: self.method,
            d,
            m: self.dim,
            s: s_freq,
            output: self.output,
            bandwidth: self.bandwidth,
            freq,
            phase,
            w32: OnceLock::new(),
        })
    }
}

#[derive(Clone, Debug)]
struct FastfoodBlock {
    b: Vec<f64>,
    perm: Vec<usize>,
    g: Vec<f64>,
    /// $S_{ii}/(\sigma\sqrt{d^\prime})$
    s: Vec<f64>,
}

#[derive(Clone, Debug)]
enum Freq {
    Dense(Array2<f64>),
    Sorf {
        dpad: usize,
        blocks: Vec<[Vec<f64>; 3]>,
        scale: f64,
    },
    Fastfood {
        dpad: usize,
        blocks: Vec<FastfoodBlock>,
    },
}

/// A fitted Gaussian-kernel Fourier feature map (any [`FourierMethod`], either [`Output`]).
#[derive(Clone, Debug)]
pub struct GaussianFeatures {
    method: FourierMethod,
    d: usize,
    m: usize,
    s: usize,
    output: Output,
    bandwidth: Bandwidth,
    freq: Freq,
    phase: Option<Array1<f64>>,
    /// Dense frequencies rounded to `f32`, made on the first [`FeatureMap::transform_f32`] call.
    w32: OnceLock<Array2<f32>>,
}

impl GaussianFeatures {
    /// The frequency sampler used.
    pub fn method(&self) -> FourierMethod {
        self.method
    }

    /// The kernel bandwidth.
    pub fn bandwidth(&self) -> Bandwidth {
        self.bandwidth
    }

    /// The output form.
    pub fn output(&self) -> Output {
        self.output
    }

    /// The number of frequencies $s$ (rows of $W$).
    pub fn n_frequencies(&self) -> usize {
        self.s
    }

    /// The random phases $b$ (random-phase output only).
    pub fn phases(&self) -> Option<ArrayView1<'_, f64>> {
        self.phase.as_ref().map(|p| p.view())
    }

    /// The exact kernel this map approximates, $\exp(-\Vert x-y\Vert^2/(2\sigma^2))$.
    pub fn kernel(&self) -> GaussianKernel {
        GaussianKernel::new(self.bandwidth.sigma()).expect("the bandwidth was checked by `fit`")
    }

    /// The frequency matrix $W \in \mathbb R^{s \times d}$ (bandwidth included), materialised for structured
    /// methods by applying them to the basis vectors.
    pub fn frequencies(&self) -> Array2<f64> {
        match &self.freq {
            Freq::Dense(w) => w.clone(),
            _ => {
                let eye = Array2::<f64>::eye(self.d);
                self.project(eye.view())
                    .reversed_axes()
                    .as_standard_layout()
                    .to_owned()
            }
        }
    }

    /// The projections $XW^\top$ ($n \times s$) of the rows of `x`.
    pub fn projections(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        Ok(self.project(x))
    }

    fn project(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        match &self.freq {
            Freq::Dense(w) => x.dot(&w.t()),
            Freq::Sorf {
                dpad,
                blocks,
                scale,
            } => self.structured(x, *dpad, |buf, b| {
                let buf = &mut buf[..*dpad];
                let [d1, d2, d3] = &blocks[b];
                buf.iter_mut().zip(d3).for_each(|(v, s)| *v *= s);
                fwht_pow2(buf);
                buf.iter_mut().zip(d2).for_each(|(v, s)| *v *= s);
                fwht_pow2(buf);
                buf.iter_mut().zip(d1).for_each(|(v, s)| *v *= s * scale);
                fwht_pow2(buf);
            }),
            Freq::Fastfood { dpad, blocks } => {
                self.structured(x, *dpad, |buf, b| {
                    let blk = &blocks[b];
                    let (lo, hi) = buf.split_at_mut(*dpad);
                    lo.iter_mut().zip(&blk.b).for_each(|(v, s)| *v *= s);
                    fwht_pow2(lo);
                    // permute with G: tmp_i = g_i * lo_{perm(i)}, in the upper half of the scratch
                    for ((t, &p), g) in hi.iter_mut().zip(&blk.perm).zip(&blk.g) {
                        *t = g * lo[p];
                    }
                    fwht_pow2(hi);
                    for ((o, t), s) in lo.iter_mut().zip(hi.iter()).zip(&blk.s) {
                        *o = t * s;
                    }
                })
            }
        }
    }

    /// Runs a per-block transform `f(buf, block)` on the zero-padded row (in `buf[..dpad]`, with
    /// `buf[dpad..2 dpad]` free scratch) and gathers the first `s` outputs.
    fn structured<F>(&self, x: ArrayView2<'_, f64>, dpad: usize, f: F) -> Array2<f64>
    where
        F: Fn(&mut [f64], usize) + Sync,
    {
        let n = x.nrows();
        let s_freq = self.s;
        let d = self.d;
        let mut out = Array2::zeros((n, s_freq));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(x.axis_iter(Axis(0)).into_par_iter())
            .for_each_init(
                || vec![0.0; 2 * dpad],
                |buf, (mut o, xr)| {
                    let mut start = 0;
                    let mut b = 0;
                    while start < s_freq {
                        let (lo, _) = buf.split_at_mut(dpad);
                        for (v, xv) in lo[..d].iter_mut().zip(xr.iter()) {
                            *v = *xv;
                        }
                        lo[d..].iter_mut().for_each(|v| *v = 0.0);
                        f(buf, b);
                        let take = dpad.min(s_freq - start);
                        for (ov, v) in o
                            .slice_mut(s![start..start + take])
                            .iter_mut()
                            .zip(buf.iter())
                        {
                            *ov = *v;
                        }
                        start += take;
                        b += 1;
                    }
                },
            );
        out
    }
}

impl FeatureMap for GaussianFeatures {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.m
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let n = x.nrows();
        let s_freq = self.s;
        if let (None, Freq::Dense(w)) = (&self.phase, &self.freq) {
            // Paired output with dense frequencies: the GEMM writes XWᵀ straight into the cos half of the
            // output (no n × s temporary, one pass less over memory), then each row is finished in place.
            // Same GEMM shape as `project`, so the values are bit-identical to the two-buffer form.
            let mut out = Array2::zeros((n, self.m));
            ndarray::linalg::general_mat_mul(
                1.0,
                &x,
                &w.t(),
                0.0,
                &mut out.slice_mut(s![.., ..s_freq]),
            );
            let c = 1.0 / (s_freq as f64).sqrt();
            out.axis_iter_mut(Axis(0))
                .into_par_iter()
                .for_each(|mut row| {
                    let r = row.as_slice_mut().expect("standard layout");
                    let (cos_part, sin_part) = r.split_at_mut(s_freq);
                    scaled_sin_cos_in_place(cos_part, sin_part, c);
                });
            return Ok(out);
        }
        let p = self.project(x);
        let mut out = Array2::zeros((n, self.m));
        match (&self.phase, self.output) {
            (None, _) => {
                let c = 1.0 / (s_freq as f64).sqrt();
                Zip::from(out.rows_mut())
                    .and(p.rows())
                    .par_for_each(|mut o, pr| {
                        let o = o.as_slice_mut().expect("standard layout");
                        let (cos_part, sin_part) = o.split_at_mut(s_freq);
                        cos_part.iter_mut().zip(pr).for_each(|(co, &v)| *co = v);
                        scaled_sin_cos_in_place(cos_part, sin_part, c);
                    });
            }
            (Some(b), _) => {
                let c = (2.0 / self.m as f64).sqrt();
                Zip::from(out.rows_mut())
                    .and(p.rows())
                    .par_for_each(|mut o, pr| {
                        Zip::from(&mut o)
                            .and(&pr)
                            .and(b)
                            .for_each(|ov, &v, &bv| *ov = c * (v + bv).cos());
                    });
            }
        }
        Ok(out)
    }

    /// Dense frequencies (RFF, ORF, QMC): one `f32` GEMM $XW^\top$ with $W$ rounded to `f32` once, then the
    /// sine/cosine (or the phase-shifted cosine) of each projection evaluated in `f64` and rounded once.
    /// With $S = |X|\thinspace|W|^\top$ (entrywise absolute values) and $c$ the feature scale, every entry
    /// differs from [`FeatureMap::transform`] by at most $c\thinspace(\beta_d S_{ij} + 2^{-24})$ up to `f64` rounding
    /// ($\beta_d$ the product's bound, [`rfx_core::f32_product_bound`]; sine and cosine are 1-Lipschitz);
    /// tested. SORF and Fastfood go by way of `f64`.
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        let Freq::Dense(w) = &self.freq else {
            return transform_f32_via_f64(self, x);
        };
        self.check_input_cols(x.ncols())?;
        let w32 = self.w32.get_or_init(|| w.mapv(|v| v as f32));
        let n = x.nrows();
        let s_freq = self.s;
        let mut out = Array2::<f32>::zeros((n, self.m));
        ndarray::linalg::general_mat_mul(
            1.0,
            &x,
            &w32.t(),
            0.0,
            &mut out.slice_mut(s![.., ..s_freq]),
        );
        match &self.phase {
            None => {
                let c = 1.0 / (s_freq as f64).sqrt();
                out.axis_iter_mut(Axis(0)).into_par_iter().for_each_init(
                    || vec![0.0f64; 2 * s_freq],
                    |buf, mut row| {
                        let r = row.as_slice_mut().expect("standard layout");
                        let (cos_buf, sin_buf) = buf.split_at_mut(s_freq);
                        cos_buf
                            .iter_mut()
                            .zip(&r[..s_freq])
                            .for_each(|(b, &v)| *b = f64::from(v));
                        scaled_sin_cos_in_place(cos_buf, sin_buf, c);
                        let (cos_part, sin_part) = r.split_at_mut(s_freq);
                        cos_part
                            .iter_mut()
                            .zip(cos_buf.iter())
                            .for_each(|(o, &v)| *o = v as f32);
                        sin_part
                            .iter_mut()
                            .zip(sin_buf.iter())
                            .for_each(|(o, &v)| *o = v as f32);
                    },
                );
            }
            Some(b) => {
                let c = (2.0 / self.m as f64).sqrt();
                let b = b.as_slice().expect("phases are contiguous");
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .for_each(|mut row| {
                        let r = row.as_slice_mut().expect("standard layout");
                        r.iter_mut()
                            .zip(b)
                            .for_each(|(o, &bv)| *o = (c * (f64::from(*o) + bv).cos()) as f32);
                    });
            }
        }
        Ok(out)
    }

    fn native_f32(&self) -> bool {
        matches!(self.freq, Freq::Dense(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::rng_stream;
    use rfx_core::Kernel as _;

    #[test]
    fn params_validate() {
        let mut rng = rng_stream(0, "p");
        assert!(Rff::params().dim(0).fit(3, &mut rng).is_err());
        assert!(Rff::params().dim(7).fit(3, &mut rng).is_err());
        assert!(Rff::params()
            .dim(7)
            .output(Output::RandomPhase)
            .fit(3, &mut rng)
            .is_ok());
        assert!(Rff::params().sigma(0.0).fit(3, &mut rng).is_err());
        assert!(Rff::params().gamma(-1.0).fit(3, &mut rng).is_err());
        assert!(Sorf::params().fit(0, &mut rng).is_err());
        let m = Rff::params().dim(8).fit(3, &mut rng).unwrap();
        assert!(m.transform(Array2::zeros((2, 4)).view()).is_err());
        assert!((Bandwidth::Gamma(0.125).sigma() - 2.0).abs() < 1e-15);
    }

    #[test]
    fn paired_dense_fast_path_is_bit_identical_to_projection_then_sin_cos() {
        // the fast path (GEMM into the output) against the projections followed by the same elementwise
        // sine/cosine, and within a few ulp of the standard library's
        let mut rng = rng_stream(0, "fast-path");
        let x = gaussian_matrix(37, 13, &mut rng);
        let map = Rff::params().dim(64).sigma(1.5).fit(13, &mut rng).unwrap();
        let z = map.transform(x.view()).unwrap();
        let p = map.projections(x.view()).unwrap();
        let c = 1.0 / 32f64.sqrt();
        for (i, row) in p.rows().into_iter().enumerate() {
            let mut cs = row.to_vec();
            let mut sn = vec![0.0; cs.len()];
            crate::sincos::scaled_sin_cos_in_place(&mut cs, &mut sn, c);
            for (j, &v) in row.iter().enumerate() {
                assert_eq!(z[[i, j]].to_bits(), cs[j].to_bits());
                assert_eq!(z[[i, j + 32]].to_bits(), sn[j].to_bits());
                let (s0, c0) = v.sin_cos();
                assert!((cs[j] - c * c0).abs() <= 4.0 * f64::EPSILON);
                assert!((sn[j] - c * s0).abs() <= 4.0 * f64::EPSILON);
            }
        }
    }

    /// `transform_f32` of the dense maps against `transform`: every entry within the forward error bound of
    /// the `f32` product (the doc of `transform_f32`), and the `f32` features' Gram far closer to the `f64`
    /// features' Gram than that is to the exact kernel.
    #[test]
    fn f32_features_are_within_the_product_error_bound_and_far_below_the_approximation_error() {
        let u = f64::from(f32::EPSILON) / 2.0;
        let mut rng = rng_stream(0, "f32");
        let (n, d, m) = (40, 30, 256);
        let x32 = gaussian_matrix(n, d, &mut rng).mapv(|v| v as f32);
        let x = x32.mapv(f64::from);
        for (method, output) in [
            (FourierMethod::Rff, Output::Paired),
            (FourierMethod::Orf, Output::Paired),
            (FourierMethod::Qmc, Output::Paired),
            (FourierMethod::Rff, Output::RandomPhase),
        ] {
            let map = GaussianFeatureParams::new(method)
                .dim(m)
                .sigma(3.0)
                .output(output)
                .fit(d, &mut rng)
                .unwrap();
            assert!(map.native_f32());
            let z = map.transform(x.view()).unwrap();
            let z32 = map.transform_f32(x32.view()).unwrap();
            assert_eq!(z32.dim(), (n, m));
            let s_freq = map.n_frequencies();
            let c = match output {
                Output::Paired => 1.0 / (s_freq as f64).sqrt(),
                Output::RandomPhase => (2.0 / m as f64).sqrt(),
            };
            let sabs = x.mapv(f64::abs).dot(&map.frequencies().mapv(f64::abs).t());
            for i in 0..n {
                for j in 0..m {
                    let sij = sabs[[i, j % s_freq]];
                    let bound = c * (rfx_core::f32_product_bound(d) * sij + u + 8.0 * f64::EPSILON);
                    let diff = (f64::from(z32[[i, j]]) - z[[i, j]]).abs();
                    assert!(
                        diff <= bound,
                        "{method:?} {output:?} ({i}, {j}): |f32 - f64| = {diff:e} > bound {bound:e}"
                    );
                }
            }
            let z32w = z32.mapv(f64::from);
            let g = z.dot(&z.t());
            let g32 = z32w.dot(&z32w.t());
            let exact = map.kernel().gram(x.view(), x.view()).unwrap();
            let max_abs = |a: &Array2<f64>, b: &Array2<f64>| {
                a.iter()
                    .zip(b.iter())
                    .fold(0.0f64, |acc, (p, q)| acc.max((p - q).abs()))
            };
            let (approx, rounding) = (max_abs(&g, &exact), max_abs(&g32, &g));
            assert!(
                rounding < 1e-3 * approx,
                "{method:?} {output:?}: f32 moves the Gram by {rounding:e}, approximation error {approx:e}"
            );
        }
    }

    #[test]
    fn paired_features_have_unit_norm_and_k_at_zero_is_one() {
        let mut rng = rng_stream(0, "norm");
        let x = gaussian_matrix(5, 10, &mut rng);
        for method in [
            FourierMethod::Rff,
            FourierMethod::Orf,
            FourierMethod::Sorf,
            FourierMethod::Fastfood,
            FourierMethod::Qmc,
        ] {
            let map = GaussianFeatureParams::new(method)
                .dim(100)
                .sigma(2.0)
                .fit(10, &mut rng)
                .unwrap();
            let z = map.transform(x.view()).unwrap();
            assert_eq!(z.dim(), (5, 100));
            for row in z.rows() {
                assert!((row.dot(&row) - 1.0).abs() < 1e-12);
            }
            // frequencies() agrees with projections()
            let w = map.frequencies();
            assert_eq!(w.dim(), (50, 10));
            let p = map.projections(x.view()).unwrap();
            let diff = (&p - &x.dot(&w.t()))
                .mapv(f64::abs)
                .fold(0.0f64, |a, &b| a.max(b));
            assert!(diff < 1e-10, "{method:?} {diff}");
        }
    }

    #[test]
    fn sorf_block_is_orthogonal_with_row_norm_sqrt_dpad_over_sigma() {
        let mut rng = rng_stream(0, "sorf");
        let sigma = 1.5;
        let map = Sorf::params()
            .dim(32)
            .sigma(sigma)
            .fit(16, &mut rng)
            .unwrap();
        let w = map.frequencies();
        let g = w.dot(&w.t());
        for i in 0..16 {
            for j in 0..16 {
                let want = if i == j { 16.0 / (sigma * sigma) } else { 0.0 };
                assert!((g[[i, j]] - want).abs() < 1e-10);
            }
        }
    }

    /// In d = 2 SORF has no randomness left in its directions: with $\bar H = H/\sqrt2$,
    /// $\bar H D_1 \bar H$ is a signed permutation, so every row of $\bar HD_1\bar HD_2\bar HD_3$ is
    /// $(\pm1, \pm1)/\sqrt2$ and every frequency (scaled by $\sqrt{d^\prime}/\sigma = \sqrt2/\sigma$) is
    /// $(\pm1, \pm1)/\sigma$, for every seed and every block. The estimate is then the deterministic
    /// $\cos(\tau_1/\sigma)\cos(\tau_2/\sigma)$, not the Gaussian kernel: the survey benchmark's constant
    /// SORF error on banana (d = 2) at every s comes from this, not from a bug.
    #[test]
    fn sorf_in_two_dimensions_has_only_the_diagonal_directions() {
        let sigma = 0.3;
        for seed in 0..5 {
            let mut rng = rng_stream(seed, "sorf-2d");
            let map = Sorf::params()
                .dim(64)
                .sigma(sigma)
                .fit(2, &mut rng)
                .unwrap();
            let w = map.frequencies();
            assert_eq!(w.dim(), (32, 2));
            for v in w.iter() {
                assert!((v.abs() * sigma - 1.0).abs() < 1e-12, "seed {seed}: {v}");
            }
            // hence the kernel estimate is cos(τ1/σ) cos(τ2/σ) whatever the seed
            let x = ndarray::array![[0.1, -0.2], [0.35, 0.05]];
            let z = map.transform(x.view()).unwrap();
            let est = z.row(0).dot(&z.row(1));
            let (t1, t2) = (x[[0, 0]] - x[[1, 0]], x[[0, 1]] - x[[1, 1]]);
            let want = (t1 / sigma).cos() * (t2 / sigma).cos();
            assert!((est - want).abs() < 1e-12, "seed {seed}: {est} vs {want}");
        }
    }

    #[test]
    fn fastfood_rows_have_norm_r_over_sigma() {
        // ||row_i||^2 = r_i^2 / sigma^2 exactly, with r_i ~ chi_{d'}: check E||row||^2 = d'/sigma^2 over
        // many rows (Var ||row||^2 = 2 d'/sigma^4 per row; 5 standard errors).
        let mut rng = rng_stream(0, "ff");
        let sigma = 0.7;
        let d = 16;
        let map = Fastfood::params()
            .dim(2 * 4096)
            .sigma(sigma)
            .fit(d, &mut rng)
            .unwrap();
        let w = map.frequencies();
        let norms: Vec<f64> = w
            .rows()
            .into_iter()
            .map(|r| r.dot(&r) * sigma * sigma)
            .collect();
        let n = norms.len() as f64;
        let mean = norms.iter().sum::<f64>() / n;
        assert!(
            (mean - d as f64).abs() < 5.0 * (2.0 * d as f64 / n).sqrt(),
            "{mean}"
        );
    }
}
