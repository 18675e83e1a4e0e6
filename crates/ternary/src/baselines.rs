//! Baselines of the TRF paper's comparisons: LP-RFF (low-precision random Fourier features by unbiased
//! stochastic rounding, Zhang et al. 2019) and ReLU random features, whose expectation is half the arc-cosine
//! kernel of order 1 (`rfx_kernels::ArcCosineKernel::half`).
//!
//! The random Fourier features are `rfx-sampling`'s ([`rfx_sampling::Rff`]) in the random-phase form
//! ([`Output::RandomPhase`]): $z(\mathbf x) = \sqrt{2/m}\cos(W\mathbf x + \mathbf b)$, $W_{kj}\sim\mathcal N(0,\sigma^{-2})$,
//! $b_k \sim U[0, 2\pi)$, bounded in $[-\sqrt{2/m}, \sqrt{2/m}]$, which is what the quantiser's range needs. (The
//! paper's own RFF, $[\cos, \sin]$ with $2m$ features, is the [`crate::activation::Activation::CosSin`] target of
//! the threshold solver.)

use ndarray::{Array2, ArrayView2};
use rand::Rng;
use rfx_core::{rng_stream, FeatureMap, Result, RfxError, RfxRng};
use rfx_sampling::random::gaussian_matrix;
use rfx_sampling::{GaussianFeatures, Output};

/// Unbiased $b$-bit stochastic rounding on $\lbrack L, U\rbrack$ (Zhang et al. 2019): with $\Delta = (U-L)/(2^b-1)$ and
/// $\xi \sim U[0,1)$,
/// $$Q(z) = L + \Delta\cdot\operatorname{clamp}\big(\lfloor (z-L)/\Delta + \xi\rfloor, 0, 2^b-1\big),$$
/// so for $z\in\lbrack L,U\rbrack$, $Q(z)$ is one of the two grid points around $z$ and $\mathbb E_\xi[Q(z)] = z$, with
/// $\operatorname{Var}[Q(z)] = \Delta^2 f(1-f)$, $f$ the fractional part of $(z-L)/\Delta$.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StochasticQuantizer {
    bits: u32,
    lo: f64,
    hi: f64,
}

impl StochasticQuantizer {
    /// $b \in [1, 16]$ bits on $\lbrack L, U\rbrack$, $L < U$.
    pub fn new(bits: u32, lo: f64, hi: f64) -> Result<Self> {
        if !(1..=16).contains(&bits) {
            return Err(RfxError::invalid("bits", bits, "1..=16"));
        }
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(RfxError::invalid(
                "range",
                format!("[{lo}, {hi}]"),
                "finite lo < hi",
            ));
        }
        Ok(Self { bits, lo, hi })
    }

    /// Grid step $\Delta$.
    pub fn step(&self) -> f64 {
        (self.hi - self.lo) / f64::from((1u32 << self.bits) - 1)
    }

    /// $Q(z)$ with the uniform draw $\xi \in [0, 1)$.
    pub fn quantize(&self, z: f64, xi: f64) -> f64 {
        let d = self.step();
        let top = f64::from((1u32 << self.bits) - 1);
        let level = ((z - self.lo) / d + xi).floor().clamp(0.0, top);
        self.lo + d * level
    }

    /// Bits per value.
    pub fn bits(&self) -> u32 {
        self.bits
    }
}

/// LP-RFF: random-phase Fourier features ([`rfx_sampling::Rff`], [`Output::RandomPhase`]) quantised to $b$ bits
/// by [`StochasticQuantizer`] on $[-\sqrt{2/m}, \sqrt{2/m}]$.
///
/// The rounding noise must be fresh for unbiasedness across uses (Zhang et al. redraw it every mini-batch):
/// [`LpRff::transform_with_rng`] takes the noise stream explicitly. The trait's
/// [`FeatureMap::transform`] has no RNG argument, so it draws the noise of each row from a stream keyed by
/// the row's content, `rng_stream(noise_seed, "lp-rff-row-" + FNV-1a of the row's f64 bits)`: reproducible,
/// independent of the thread count and of how the rows are split into batches (a row gives the same
/// features alone or inside any block), and independent between distinct rows. Identical rows get identical
/// rounding.
#[derive(Debug, Clone)]
pub struct LpRff {
    rff: GaussianFeatures,
    quantizer: StochasticQuantizer,
    noise_seed: u64,
}

impl LpRff {
    /// Wraps `rff` (random-phase output, whose values lie in $[-\sqrt{2/m}, \sqrt{2/m}]$) with $b$-bit rounding
    /// (the paper uses $b \in \{1, 8\}$).
    pub fn new(rff: GaussianFeatures, bits: u32, noise_seed: u64) -> Result<Self> {
        if rff.output() != Output::RandomPhase {
            return Err(RfxError::invalid(
                "output",
                format!("{:?}", rff.output()),
                "RandomPhase: sqrt(2/m) cos(Wx + b), the bounded form the quantiser's range needs",
            ));
        }
        let u = (2.0 / rff.dim() as f64).sqrt();
        Ok(Self {
            quantizer: StochasticQuantizer::new(bits, -u, u)?,
            rff,
            noise_seed,
        })
    }

    /// The quantiser.
    pub fn quantizer(&self) -> StochasticQuantizer {
        self.quantizer
    }

    /// The underlying full-precision map.
    pub fn rff(&self) -> &GaussianFeatures {
        &self.rff
    }

    /// Quantised features with rounding noise from `rng` (row-major order).
    pub fn transform_with_rng(
        &self,
        x: ArrayView2<'_, f64>,
        rng: &mut RfxRng,
    ) -> Result<Array2<f64>> {
        let mut z = self.rff.transform(x)?;
        z.iter_mut()
            .for_each(|v| *v = self.quantizer.quantize(*v, rng.gen::<f64>()));
        Ok(z)
    }
}

impl FeatureMap for LpRff {
    fn input_dim(&self) -> usize {
        self.rff.input_dim()
    }

    fn dim(&self) -> usize {
        self.rff.dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut z = self.rff.transform(x)?;
        for (xi, mut zi) in x.outer_iter().zip(z.outer_iter_mut()) {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for v in xi {
                h ^= v.to_bits();
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
            let mut rng = rng_stream(self.noise_seed, &format!("lp-rff-row-{h:016x}"));
            zi.iter_mut()
                .for_each(|v| *v = self.quantizer.quantize(*v, rng.gen::<f64>()));
        }
        Ok(z)
    }

    fn bits_per_feature(&self) -> f64 {
        f64::from(self.quantizer.bits)
    }
}

/// LP-RFF whose rounding noise continues one stream across calls: [`LpRff::transform_with_rng`] with a
/// stream held by the map, so that the trait's [`FeatureMap::transform`] rounds the way a caller holding the
/// stream would (the `trf_memory` kind: the cell's stream after the fit, training rows first, then test
/// rows). Unlike [`LpRff`]'s row-keyed noise, the result depends on the order of the calls: two calls on the
/// same rows give independent roundings (fresh noise per use, as Zhang et al. redraw it), so
/// `transform` is not a pure function of its input. The registry's `lp-rff(noise=stream)`.
#[derive(Debug)]
pub struct StreamRoundedLpRff {
    lp: LpRff,
    noise: std::sync::Mutex<RfxRng>,
}

impl StreamRoundedLpRff {
    /// `lp` rounding with draws from `noise` (its first call starts at the stream's current position).
    pub fn new(lp: LpRff, noise: RfxRng) -> Self {
        Self {
            lp,
            noise: std::sync::Mutex::new(noise),
        }
    }
}

impl FeatureMap for StreamRoundedLpRff {
    fn input_dim(&self) -> usize {
        self.lp.input_dim()
    }

    fn dim(&self) -> usize {
        self.lp.dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut rng = self
            .noise
            .lock()
            .map_err(|_| RfxError::Numerical("LP-RFF noise stream poisoned by a panic".into()))?;
        self.lp.transform_with_rng(x, &mut rng)
    }

    fn bits_per_feature(&self) -> f64 {
        self.lp.bits_per_feature()
    }
}

/// ReLU random features $z(\mathbf x) = \max(0, W\mathbf x)/\sqrt m$, $W_{kj} \sim \mathcal N(0, 1)$, whose
/// expected inner product is half the arc-cosine kernel of order 1,
/// $\mathbb E[\mathrm{ReLU}(w^\top x)\mathrm{ReLU}(w^\top y)] = \|x\|\|y\|\kappa_1(\rho)/2$
/// (`rfx_kernels::ArcCosineKernel::half`).
#[derive(Debug, Clone)]
pub struct ReluFeatures {
    w: Array2<f64>,
}

impl ReluFeatures {
    /// $m$ features on $\mathbb R^d$.
    pub fn fit(d: usize, m: usize, rng: &mut RfxRng) -> Result<Self> {
        if d == 0 || m == 0 {
            return Err(RfxError::invalid(
                "shape",
                format!("d={d}, m={m}"),
                "d, m >= 1",
            ));
        }
        Ok(Self {
            w: gaussian_matrix(m, d, rng),
        })
    }
}

/// Parameters of [`ReluFeatures`]: $m$ features; data-oblivious, fitted on the input dimension through
/// [`rfx_core::Fit`] (the registry's `relu-rf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReluParams {
    dim: usize,
}

impl ReluParams {
    /// $m$ features.
    pub fn new(dim: usize) -> Self {
        Self { dim }
    }

    /// [`ReluFeatures::fit`] on $\mathbb R^d$: $W$ ($m \times d$, row-major) is the only draw from `rng`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<ReluFeatures> {
        ReluFeatures::fit(d, self.dim, rng)
    }
}

rfx_core::impl_fit_on_dim!(ReluParams => ReluFeatures);

impl FeatureMap for ReluFeatures {
    fn input_dim(&self) -> usize {
        self.w.ncols()
    }

    fn dim(&self) -> usize {
        self.w.nrows()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let s = 1.0 / (self.w.nrows() as f64).sqrt();
        Ok(x.dot(&self.w.t()).mapv(|v| s * v.max(0.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::Kernel;
    use rfx_kernels::{ArcCosineKernel, ArcCosineOrder, GaussianKernel};

    /// Random-phase RFF of width σ.
    fn random_phase_rff(
        d: usize,
        m: usize,
        sigma: f64,
        rng: &mut RfxRng,
    ) -> Result<GaussianFeatures> {
        rfx_sampling::Rff::params()
            .dim(m)
            .sigma(sigma)
            .output(Output::RandomPhase)
            .fit(d, rng)
    }

    #[test]
    fn stochastic_rounding_is_unbiased() {
        let mut rng = rng_stream(7, "q");
        let n = 100_000;
        for bits in [1u32, 8] {
            let q = StochasticQuantizer::new(bits, -0.3, 0.3).unwrap();
            let d = q.step();
            for z in [-0.3, -0.2171, 0.0, 0.05, 0.29, 0.3] {
                let mut sum = 0.0;
                for _ in 0..n {
                    let v = q.quantize(z, rng.gen());
                    // On the grid.
                    let level = (v - (-0.3)) / d;
                    assert!(
                        (level - level.round()).abs() < 1e-9 && (-0.3..=0.3 + 1e-12).contains(&v)
                    );
                    assert!((v - z).abs() <= d * (1.0 + 1e-12));
                    sum += v;
                }
                let mean = sum / n as f64;
                let f = ((z + 0.3) / d).fract();
                let sd = d * (f * (1.0 - f)).sqrt();
                // 5 standard errors of the mean (plus rounding); a biased rounding (e.g. nearest) is off by
                // up to d/2, far outside this for the non-grid z.
                assert!(
                    (mean - z).abs() <= 5.0 * sd / (n as f64).sqrt() + 1e-12,
                    "bits={bits} z={z}: mean {mean}"
                );
            }
        }
        assert!(StochasticQuantizer::new(0, -1.0, 1.0).is_err());
        assert!(StochasticQuantizer::new(8, 1.0, 1.0).is_err());
    }

    fn data(n: usize, d: usize, seed: u64) -> Array2<f64> {
        gaussian_matrix(n, d, &mut rng_stream(seed, "x")) / (d as f64).sqrt()
    }

    #[test]
    fn lp_rff_values_and_bits() {
        let x = data(20, 5, 1);
        let rff = random_phase_rff(5, 128, 1.0, &mut rng_stream(1, "rff")).unwrap();
        let one = LpRff::new(rff.clone(), 1, 3).unwrap();
        let z = one.transform(x.view()).unwrap();
        let s = (2.0f64 / 128.0).sqrt();
        assert!(
            z.iter().all(|v| (v.abs() - s).abs() < 1e-15),
            "1-bit values are ±sqrt(2/m)"
        );
        assert_eq!(one.bits_per_feature(), 1.0);
        let eight = LpRff::new(rff, 8, 3).unwrap();
        assert_eq!(eight.bits_per_feature(), 8.0);
        let full = eight.transform(x.view()).unwrap();
        assert_eq!(full, eight.transform(x.view()).unwrap());
        // a row's features do not depend on the batch it comes in
        let tail = eight.transform(x.slice(ndarray::s![7.., ..])).unwrap();
        assert_eq!(tail, full.slice(ndarray::s![7.., ..]));
    }

    #[test]
    fn rff_and_relu_features_converge_to_their_kernels() {
        let (n, d, m) = (12, 6, 40_000);
        let x = data(n, d, 2);
        // RFF: z_k(x) z_k(y) m/2 = cos(a)cos(b)*2, variance <= 1/2 (1 + k(2 delta)) + 1/2 <= 3/2, so the
        // entry's standard error is <= sqrt(1.5/m); 6 of them over 144 entries.
        let rff = random_phase_rff(d, m, 0.8, &mut rng_stream(2, "rff")).unwrap();
        let z = rff.transform(x.view()).unwrap();
        let k = GaussianKernel::new(0.8)
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        let err = (&z.dot(&z.t()) - &k)
            .mapv(f64::abs)
            .fold(0.0f64, |a, &b| a.max(b));
        assert!(err < 6.0 * (1.5 / m as f64).sqrt(), "rff err {err}");
        // ReLU: Var[relu(a) relu(b)] <= sqrt(E relu(a)^4 E relu(b)^4) = 1.5 |x|^2 |y|^2.
        let relu = ReluFeatures::fit(d, m, &mut rng_stream(2, "relu")).unwrap();
        let z = relu.transform(x.view()).unwrap();
        let k = ArcCosineKernel::half(ArcCosineOrder::One)
            .gram(x.view(), x.view())
            .unwrap();
        let g = z.dot(&z.t());
        for i in 0..n {
            for j in 0..n {
                let tol = 6.0 * (1.5 / m as f64).sqrt() * (k[[i, i]] * k[[j, j]] * 4.0).sqrt();
                assert!((g[[i, j]] - k[[i, j]]).abs() < tol, "relu ({i},{j})");
            }
            // The diagonal is |x|^2 / 2.
            assert!((k[[i, i]] - 0.5 * x.row(i).dot(&x.row(i))).abs() < 1e-14);
        }
        assert!(random_phase_rff(3, 4, 0.0, &mut rng_stream(0, "")).is_err());
        assert!(ReluFeatures::fit(0, 4, &mut rng_stream(0, "")).is_err());
    }

    #[test]
    fn lp_rff_takes_the_bounded_random_phase_form_only() {
        let paired = rfx_sampling::Rff::params()
            .dim(8)
            .fit(3, &mut rng_stream(0, "p"))
            .unwrap();
        assert!(LpRff::new(paired, 8, 0).is_err());
        let rp = random_phase_rff(3, 8, 1.0, &mut rng_stream(0, "p")).unwrap();
        let q = LpRff::new(rp, 8, 0).unwrap().quantizer();
        assert_eq!(q.step(), 2.0 * (2.0f64 / 8.0).sqrt() / 255.0);
    }

    /// The trf experiments' RFF draws, as this crate drew them before it used `rfx-sampling` (W row by row
    /// from N(0, 1) times 1/σ, then b_k = 2π·U[0, 1)), are reproduced bit for bit at σ = 1, the width those
    /// experiments use. (At other σ the frequencies are z/σ rather than z·(1/σ): equal up to the last bit.)
    #[test]
    fn random_phase_rff_reproduces_the_earlier_draws_at_unit_width() {
        use rand_distr::{Distribution, StandardNormal};
        let (d, m) = (7, 33);
        let mut rng = rng_stream(4, "rff");
        let w = Array2::from_shape_simple_fn((m, d), || {
            1.0 * <StandardNormal as Distribution<f64>>::sample(&StandardNormal, &mut rng)
        });
        let b: Vec<f64> = (0..m)
            .map(|_| rng.gen::<f64>() * 2.0 * std::f64::consts::PI)
            .collect();
        let x = data(5, d, 9);
        let s = (2.0 / m as f64).sqrt();
        let mut want = x.dot(&w.t());
        for mut r in want.rows_mut() {
            r.iter_mut()
                .zip(&b)
                .for_each(|(v, b)| *v = s * (*v + b).cos());
        }
        let got = random_phase_rff(d, m, 1.0, &mut rng_stream(4, "rff"))
            .unwrap()
            .transform(x.view())
            .unwrap();
        assert_eq!(got, want);
    }
}
