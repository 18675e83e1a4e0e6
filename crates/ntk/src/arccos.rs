//! Arc-cosine random features (Cho & Saul 2009; Han et al. 2021, Eqs. 10, 11, 16; Zandieh et al. 2021,
//! Eqs. 11, 15) and the leverage-score ("GS") order-1 features.
//!
//! With $W = [w_1, \dots, w_m]$, $w_j \sim \mathcal N(0, I_d)$ i.i.d. (the [`Sampler::Gaussian`] default):
//! $$a_0(x) = \sqrt{2/m}\thinspace\mathrm{Step}(W^\top x),\qquad a_1(x) = \sqrt{2/m}\thinspace\mathrm{ReLU}(W^\top x),$$
//! $\mathbb E\langle a_0(x), a_0(y)\rangle = A_0(x,y) = \kappa_0(\rho)$ and $\mathbb E\langle a_1(x), a_1(y)\rangle = A_1(x,y)$, with
//! $\mathrm{Step}(t) = \mathbf 1_{\lbrace t > 0\rbrace}$ (the papers leave $\mathrm{Step}(0)$ undefined; it has probability 0 except
//! at $x = 0$, whose features are then all zero).
//!
//! **Leverage-score (GS) features, order 1 only** (Han et al. Eq. 15–16, Algorithm 2; Zandieh et al. Eq. 15,
//! Algorithm 3): draw $v_j \sim q(v) = \frac{\Vert v\Vert^2}{d}\mathcal N(v; 0, I_d)$ and weight each feature by
//! $\sqrt{p(v_j)/q(v_j)} = \sqrt d/\Vert v_j\Vert$:
//! $$\tilde a_1(x) = \sqrt{2d/m}\thinspace\Big[\frac{\mathrm{ReLU}(v_j^\top x)}{\Vert v_j\Vert}\Big]_{j=1}^m,$$
//! unbiased for $A_1$ for any $q$ whose support covers that of $p$. [`Sampler::LeverageGibbs`] draws $v_j$ with
//! the papers' Gibbs sampler ([`rfx_sampling::leverage::leverage_gibbs`], $T$ sweeps from a Gaussian start;
//! the papers use $T = 1$); [`Sampler::LeverageExact`] samples $q$ exactly
//! ([`rfx_sampling::leverage::leverage_exact`]). Since $\tilde a_1$ only depends on $v_j/\Vert v_j\Vert$, which is
//! uniform on the sphere under $q$, the exact sampler gives the plain features with the $\chi_d$ radius
//! replaced by $\sqrt d$ (research notes §3.5). The importance weight is applied as written (division by
//! $\Vert v_j\Vert$), so a finite-$T$ Gibbs chain gives exactly the paper's features.
//!
//! **Batch form.** The weights are stored as one $d \times m$ matrix with the importance weights folded into
//! its columns; a batch costs one GEMM $XW$ ($n d m$ flops) and one parallel elementwise pass.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_sampling::leverage::{leverage_exact, leverage_gibbs};
use rfx_sampling::random::gaussian_matrix;
use std::sync::OnceLock;

use rfx_kernels::ArcCosineOrder;

/// How the order-1 weight vectors are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// $w_j \sim \mathcal N(0, I_d)$, feature scale $\sqrt{2/m}$ (Eq. 11).
    Gaussian,
    /// $v_j \sim q$ by the Gibbs sampler with this many sweeps (Algorithm 2; the papers use 1), features
    /// $\sqrt{2d/m}\thinspace\mathrm{ReLU}(v_j^\top x)/\Vert v_j\Vert$ (Eq. 16).
    LeverageGibbs {
        /// Number of full Gibbs sweeps $T$.
        sweeps: usize,
    },
    /// $v_j \sim q$ exactly (uniform direction, $\chi_{d+2}$ radius), same features as `LeverageGibbs`.
    LeverageExact,
}

impl Sampler {
    /// The papers' GS setting: Gibbs sampling with $T = 1$ sweep.
    ///
    /// One sweep from a Gaussian start has not mixed: the sampled directions are not uniform, so these
    /// importance-weighted features are slightly **biased** for $A_1$ (measured at $d = 5$: entries off by up
    /// to 5% of $\Vert x\Vert^2$; $T = 3$ is unbiased within Monte Carlo error, `tests/features.rs`). The bias shrinks
    /// with $d$ because the conditional approaches $\mathcal N(0, 1)$ when $\sum_{k \ne j} v_k^2$ is large. Use
    /// [`Sampler::LeverageExact`] for the exact distribution.
    pub const GS: Sampler = Sampler::LeverageGibbs { sweeps: 1 };

    /// Whether this is a leverage-score sampler.
    pub fn is_leverage(&self) -> bool {
        !matches!(self, Sampler::Gaussian)
    }
}

/// Activation of a random layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    Step,
    Relu,
}

/// One random layer $x \mapsto c\thinspace\sigma(x^\top W)$ with $W$ of shape $d_{\rm in} \times m$ (importance weights
/// folded into the columns).
#[derive(Clone, Debug)]
pub(crate) struct RandomLayer {
    pub(crate) w: Array2<f64>,
    pub(crate) scale: f64,
    pub(crate) act: Act,
    /// `w` rounded to `f32`, made on the first [`RandomLayer::apply_f32`] call.
    w32: OnceLock<Array2<f32>>,
}

impl RandomLayer {
    /// Draws a layer of `m` features for inputs of dimension `din`.
    pub(crate) fn draw(
        din: usize,
        m: usize,
        act: Act,
        sampler: Sampler,
        rng: &mut RfxRng,
    ) -> Result<Self> {
        if din == 0 {
            return Err(RfxError::invalid("d", din, "an integer >= 1"));
        }
        if m == 0 {
            return Err(RfxError::invalid("dim", m, "an integer >= 1"));
        }
        let base = (2.0 / m as f64).sqrt();
        match sampler {
            Sampler::Gaussian => Ok(Self {
                // drawn as m x d rows (one weight vector per row), then transposed: the stream order
                // is "feature by feature", independent of the layout
                w: gaussian_matrix(m, din, rng)
                    .reversed_axes()
                    .as_standard_layout()
                    .to_owned(),
                scale: base,
                act,
                w32: OnceLock::new(),
            }),
            Sampler::LeverageGibbs { .. } | Sampler::LeverageExact => {
                if act != Act::Relu {
                    return Err(RfxError::invalid(
                        "sampler",
                        format!("{sampler:?}"),
                        "Gaussian for order-0 (Step) features: the leverage-score distribution is defined for order 1 only (Han et al. 2021, Sec. 4)",
                    ));
                }
                let mut v = match sampler {
                    Sampler::LeverageGibbs { sweeps } => leverage_gibbs(m, din, sweeps, rng)?,
                    _ => leverage_exact(m, din, rng)?,
                };
                for mut row in v.axis_iter_mut(Axis(0)) {
                    let norm = row.dot(&row).sqrt();
                    if !(norm > 0.0 && norm.is_finite()) {
                        return Err(RfxError::Numerical(format!(
                            "leverage sampler returned a weight vector of norm {norm}"
                        )));
                    }
                    row.mapv_inplace(|t| t / norm);
                }
                Ok(Self {
                    w: v.reversed_axes().as_standard_layout().to_owned(),
                    scale: base * (din as f64).sqrt(),
                    act,
                    w32: OnceLock::new(),
                })
            }
        }
    }

    pub(crate) fn input_dim(&self) -> usize {
        self.w.nrows()
    }

    pub(crate) fn dim(&self) -> usize {
        self.w.ncols()
    }

    /// $c\thinspace\sigma(XW)$ for the rows of `x` (one GEMM, then a parallel elementwise pass).
    pub(crate) fn apply(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut z = x.dot(&self.w);
        self.activate(z.view_mut());
        z
    }

    /// [`RandomLayer::apply`] written into `out` (n × m, e.g. a column block of a larger feature matrix with
    /// unit column stride, which BLAS takes as a leading dimension): the GEMM writes there directly.
    pub(crate) fn apply_into(&self, x: ArrayView2<'_, f64>, mut out: ArrayViewMut2<'_, f64>) {
        general_mat_mul(1.0, &x, &self.w, 0.0, &mut out);
        self.activate(out);
    }

    /// [`RandomLayer::apply`] in `f32`: one `f32` GEMM $XW$ ($W$ rounded once), then $c\thinspace\sigma(t)$
    /// of each entry evaluated in `f64` and rounded once. With $S = |X|\thinspace|W|$, a ReLU entry differs from
    /// the `f64` one by at most $c\thinspace(\beta_d S_{ij} + u\thinspace|t_{ij}|)$, $u = 2^{-24}$, $\beta_d$ the product's
    /// forward-error bound ([`rfx_core::f32_product_bound`]; ReLU is 1-Lipschitz); a Step entry is the same
    /// value ($c$ rounded, or 0) unless $|t_{ij}| \le \beta_d S_{ij}$, where the sign may flip.
    pub(crate) fn apply_f32(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut z = Array2::zeros((x.nrows(), self.dim()));
        self.apply_into_f32(x, z.view_mut());
        z
    }

    /// [`RandomLayer::apply_f32`] written into `out` (as [`RandomLayer::apply_into`]).
    pub(crate) fn apply_into_f32(&self, x: ArrayView2<'_, f32>, mut z: ArrayViewMut2<'_, f32>) {
        let w32 = self.w32.get_or_init(|| self.w.mapv(|v| v as f32));
        general_mat_mul(1.0, &x, w32, 0.0, &mut z);
        let c = self.scale;
        match self.act {
            Act::Step => {
                let c32 = c as f32;
                z.par_mapv_inplace(|t| if t > 0.0 { c32 } else { 0.0 })
            }
            Act::Relu => z.par_mapv_inplace(|t| {
                if t > 0.0 {
                    (c * f64::from(t)) as f32
                } else {
                    0.0
                }
            }),
        }
    }

    /// $z \mapsto c\thinspace\sigma(z)$ in place, in parallel.
    fn activate(&self, mut z: ArrayViewMut2<'_, f64>) {
        let c = self.scale;
        match self.act {
            Act::Step => z.par_mapv_inplace(|t| if t > 0.0 { c } else { 0.0 }),
            Act::Relu => z.par_mapv_inplace(|t| if t > 0.0 { c * t } else { 0.0 }),
        }
    }
}

/// Parameters of [`ArcCosineFeatures`]: `order` (default 1), `dim` $m$ (default 1024), `sampler` (default
/// [`Sampler::Gaussian`]; leverage samplers need order 1).
#[derive(Clone, Debug)]
pub struct ArcCosineParams {
    order: ArcCosineOrder,
    dim: usize,
    sampler: Sampler,
}

impl ArcCosineParams {
    /// Order 0 (Step) or 1 (ReLU).
    pub fn order(mut self, order: ArcCosineOrder) -> Self {
        self.order = order;
        self
    }

    /// Feature dimension $m$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Weight sampler.
    pub fn sampler(mut self, s: Sampler) -> Self {
        self.sampler = s;
        self
    }

    /// Draws the weights for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<ArcCosineFeatures> {
        let act = match self.order {
            ArcCosineOrder::Zero => Act::Step,
            ArcCosineOrder::One => Act::Relu,
        };
        Ok(ArcCosineFeatures {
            order: self.order,
            sampler: self.sampler,
            layer: RandomLayer::draw(d, self.dim, act, self.sampler, rng)?,
        })
    }
}

/// Fitted arc-cosine random features $\mathbb R^d \to \mathbb R^m$ (module docs); dimension $m$.
#[derive(Clone, Debug)]
pub struct ArcCosineFeatures {
    order: ArcCosineOrder,
    sampler: Sampler,
    layer: RandomLayer,
}

impl ArcCosineFeatures {
    /// Parameters with the defaults: order 1, $m = 1024$, Gaussian weights.
    pub fn params() -> ArcCosineParams {
        ArcCosineParams {
            order: ArcCosineOrder::One,
            dim: 1024,
            sampler: Sampler::Gaussian,
        }
    }

    /// The order.
    pub fn order(&self) -> ArcCosineOrder {
        self.order
    }

    /// The sampler the weights were drawn with.
    pub fn sampler(&self) -> Sampler {
        self.sampler
    }

    /// The $d \times m$ weight matrix with the importance weights folded in (unit columns for leverage
    /// samplers) and the common feature scale ($\sqrt{2/m}$ or $\sqrt{2d/m}$).
    pub fn weights(&self) -> (ArrayView2<'_, f64>, f64) {
        (self.layer.w.view(), self.layer.scale)
    }
}

impl FeatureMap for ArcCosineFeatures {
    fn input_dim(&self) -> usize {
        self.layer.input_dim()
    }

    fn dim(&self) -> usize {
        self.layer.dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        Ok(self.layer.apply(x))
    }

    /// One `f32` GEMM and the activation (`RandomLayer::apply_f32`; its error bound is tested).
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        self.check_input_cols(x.ncols())?;
        Ok(self.layer.apply_f32(x))
    }

    fn native_f32(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::rng_stream;
    use rfx_core::Kernel as _;
    use rfx_kernels::ArcCosineKernel;

    /// `transform_f32` against `transform` for both orders and the Gaussian and exact-leverage weights:
    /// ReLU entries within the product's forward error bound (`RandomLayer::apply_f32`), Step entries equal
    /// wherever $|t| > \beta_d S$, and the `f32` features' Gram far closer to the `f64` features' Gram
    /// than that is to the exact kernel.
    #[test]
    fn f32_features_are_within_the_product_error_bound_and_far_below_the_approximation_error() {
        let u = f64::from(f32::EPSILON) / 2.0;
        let mut rng = rng_stream(0, "arccos-f32");
        let (n, d, m) = (40, 30, 512);
        let x32 = gaussian_matrix(n, d, &mut rng).mapv(|v| v as f32);
        let x = x32.mapv(f64::from);
        for (order, sampler) in [
            (ArcCosineOrder::Zero, Sampler::Gaussian),
            (ArcCosineOrder::One, Sampler::Gaussian),
            (ArcCosineOrder::One, Sampler::LeverageExact),
        ] {
            let map = ArcCosineFeatures::params()
                .order(order)
                .dim(m)
                .sampler(sampler)
                .fit(d, &mut rng)
                .unwrap();
            assert!(map.native_f32());
            let z = map.transform(x.view()).unwrap();
            let z32 = map.transform_f32(x32.view()).unwrap();
            assert_eq!(z32.dim(), (n, m));
            let (w, c) = map.weights();
            let t = x.dot(&w);
            let sabs = x.mapv(f64::abs).dot(&w.mapv(f64::abs));
            let g = rfx_core::f32_product_bound(d);
            let mut flips = 0;
            for i in 0..n {
                for j in 0..m {
                    let (a, b) = (f64::from(z32[[i, j]]), z[[i, j]]);
                    match order {
                        ArcCosineOrder::One => {
                            let bound = c * (g * sabs[[i, j]] + u * t[[i, j]].abs())
                                + 4.0 * f64::EPSILON * c * t[[i, j]].abs();
                            assert!(
                                (a - b).abs() <= bound,
                                "{sampler:?} ({i}, {j}): |f32 - f64| = {:e} > bound {bound:e}",
                                (a - b).abs()
                            );
                        }
                        ArcCosineOrder::Zero => {
                            if t[[i, j]].abs() > g * sabs[[i, j]] {
                                assert_eq!(z32[[i, j]], b as f32, "Step ({i}, {j})");
                            } else {
                                flips += 1;
                            }
                        }
                    }
                }
            }
            // a sign within the rounding band of a Gaussian projection is a rare event
            assert!(flips <= 2, "{flips} Step entries in the rounding band");
            let z32w = z32.mapv(f64::from);
            let (gz, gz32) = (z.dot(&z.t()), z32w.dot(&z32w.t()));
            let exact = ArcCosineKernel::new(order)
                .gram(x.view(), x.view())
                .unwrap();
            let max_abs = |a: &Array2<f64>, b: &Array2<f64>| {
                a.iter()
                    .zip(b.iter())
                    .fold(0.0f64, |acc, (p, q)| acc.max((p - q).abs()))
            };
            let (approx, rounding) = (max_abs(&gz, &exact), max_abs(&gz32, &gz));
            assert!(
                rounding < 1e-3 * approx,
                "{order:?} {sampler:?}: f32 moves the Gram by {rounding:e}, approximation error {approx:e}"
            );
        }
    }
}
