//! NTK random features: Algorithm 1 of Han et al. 2021 (CountSketch / TensorSketch) and Algorithm 2
//! ("NTKRF") of Zandieh et al. 2021 (TensorSRHT), with and without leverage-score (GS) order-1 features.
//!
//! For $\ell = 1, \dots, L$, with fresh independent weights and sketches per layer
//! (Han et al. Algorithm 1, lines 3–8):
//! $$\Lambda^{(\ell)} = \sqrt{2/m_0}\thinspace\mathrm{Step}(W_0^{(\ell)\top}\Psi^{(\ell-1)}),\qquad
//!   \Psi^{(\ell)} = \sqrt{2/m_1}\thinspace\mathrm{ReLU}(W_1^{(\ell)\top}\Psi^{(\ell-1)}),$$
//! $$\Gamma^{(\ell)} = S^{(\ell)}\big(\Lambda^{(\ell)} \otimes \Phi^{(\ell-1)}\big) \in \mathbb R^{m_{cs}},\qquad
//!   \Phi^{(\ell)} = [\Psi^{(\ell)}, \Gamma^{(\ell)}],$$
//! starting from $\Phi^{(0)} = \Psi^{(0)} = x$; the output is $\Phi^{(L)}$ and $\langle\Phi^{(L)}(x),\Phi^{(L)}(y)\rangle
//! \approx \Theta^{(L)}(x,y)$ (and $\langle\Psi^{(L)}(x), \Psi^{(L)}(y)\rangle \approx \Sigma^{(L)}(x, y)$, the NNGP).
//! $W_0^{(\ell)}$ ($d_{\ell-1} \times m_0$) and $W_1^{(\ell)}$ ($d_{\ell-1} \times m_1$) are independent, as
//! written in both papers (a real network would tie them), $d_0 = d$, $d_\ell = m_1$.
//!
//! The degree-2 sketch $S^{(\ell)}$ of the Kronecker product is
//! * [`PairSketch::TensorSketch`] (Han et al. Eq. 8): two independent CountSketches combined by FFT circular
//!   convolution ([`rfx_sketches::TensorSketch`]), any $m_{cs} \ge 1$;
//! * [`PairSketch::TensorSrht`] (Zandieh et al. Algorithm 2, $\mathbf Q^2$): the complex-FFT TensorSRHT of the
//!   reference code ([`rfx_sketches::TensorSrht`]), $m_{cs}$ even.
//!
//! Zandieh et al. normalise $x$ first and multiply the output by $\Vert x\Vert$; because ReLU features are
//! 1-homogeneous, Step features 0-homogeneous and the sketches linear, that gives the identical map, so it is
//! skipped (as in the reference code). With a leverage [`Sampler`], every layer's ReLU features are the GS
//! features $\sqrt{2 d_{\ell-1}/m_1}\thinspace\mathrm{ReLU}(v^\top\Psi^{(\ell-1)})/\Vert v\Vert$ (Han et al. §5: "Algorithm 1 with GS",
//! Zandieh et al. `do_leverage` on every ReLU map); the Step features are unchanged.
//!
//! **Dimension** $m_1 + m_{cs}$ (the paper's "$m$"; with the papers' choice $m_0 = m_1 = m - m_{cs}$).
//! $m_{cs} = 0$ drops the sketch and returns $\Psi^{(L)}$, the NNGP features (App. D's "$m_{cs} = 0$"), of
//! dimension $m_1$.
//!
//! **Bias.** For $L = 1$ the map is exactly unbiased: $\mathbb E[\Phi\Phi^\top] = A_1 + A_0 \odot XX^\top =
//! \Theta^{(1)}$. For $L \ge 2$ it is a nonlinear function of random features and has an $O(1/m)$ bias (not
//! discussed in the papers; research notes §7.19).
//!
//! **Cost** per row $O(d(m_0 + m_1) + (L-1)m_1(m_0+m_1) + L\thinspace m_{cs}\log m_{cs})$: one GEMM per random layer
//! and one FFT-based sketch per layer, all on row batches; with GS the Gibbs sampler costs $m_1 d_{\ell-1}$
//! conditional inversions per layer at fit time (about 5 CDF evaluations, 0.25 µs, each on a 2.45 GHz Zen 3
//! core). Measured throughput: see the crate documentation.

use crate::arccos::{Act, RandomLayer, Sampler};
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2, Axis};
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::check_depth;
use rfx_sketches::{TensorSketch, TensorSrht, Transform};

/// Rows per batch in [`NtkRandomFeatures::transform`] (bounds the memory of the intermediate layers).
const ROW_BATCH: usize = 2048;

/// The degree-2 sketch of $\Lambda \otimes \Phi$ used at each layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairSketch {
    /// CountSketch + FFT (Han et al. 2021, Algorithm 1, Eq. 8).
    TensorSketch,
    /// Complex-FFT TensorSRHT (Zandieh et al. 2021, Algorithm 2; reference code A1.4); needs even $m_{cs}$.
    TensorSrht,
}

/// Parameters of [`NtkRandomFeatures`]: `depth` $L \ge 1$ (default 1), `m0` Step features (default 512),
/// `m1` ReLU features (default 512), `mcs` sketch dimension (default 512), `sketch` (default
/// [`PairSketch::TensorSketch`]), `sampler` for the ReLU features (default [`Sampler::Gaussian`]).
#[derive(Clone, Debug)]
pub struct NtkRfParams {
    depth: usize,
    m0: usize,
    m1: usize,
    mcs: usize,
    sketch: PairSketch,
    sampler: Sampler,
}

impl NtkRfParams {
    /// Han et al. 2021, Algorithm 1 with the paper's split: total dimension `m`, sketch dimension `mcs`
    /// ($0 \le m_{cs} < m$), $m_0 = m_1 = m - m_{cs}$, TensorSketch, Gaussian weights (use
    /// [`NtkRfParams::sampler`]`(Sampler::GS)` for "with GS").
    pub fn han2021(depth: usize, m: usize, mcs: usize) -> Self {
        let m1 = m.saturating_sub(mcs);
        NtkRandomFeatures::params()
            .depth(depth)
            .m0(m1)
            .m1(m1)
            .mcs(mcs)
            .sketch(PairSketch::TensorSketch)
            .sampler(Sampler::Gaussian)
    }

    /// Zandieh et al. 2021 NTKRF as run by the reference code (A1.5): `feat_dim` total, `cs_dim` sketch,
    /// $m_0 = m_1 = $ `feat_dim - cs_dim`, TensorSRHT, leverage-score ReLU features by Gibbs sampling ($T = 1$).
    pub fn zandieh2021(depth: usize, feat_dim: usize, cs_dim: usize) -> Self {
        Self::han2021(depth, feat_dim, cs_dim)
            .sketch(PairSketch::TensorSrht)
            .sampler(Sampler::GS)
    }

    /// Number of hidden layers $L \ge 1$.
    pub fn depth(mut self, l: usize) -> Self {
        self.depth = l;
        self
    }

    /// Number of Step (order-0) features per layer.
    pub fn m0(mut self, m: usize) -> Self {
        self.m0 = m;
        self
    }

    /// Number of ReLU (order-1) features per layer.
    pub fn m1(mut self, m: usize) -> Self {
        self.m1 = m;
        self
    }

    /// Sketch dimension per layer (0: NNGP features only).
    pub fn mcs(mut self, m: usize) -> Self {
        self.mcs = m;
        self
    }

    /// The degree-2 sketch.
    pub fn sketch(mut self, s: PairSketch) -> Self {
        self.sketch = s;
        self
    }

    /// The sampler of the ReLU weights (Gaussian, or leverage scores = "with GS").
    pub fn sampler(mut self, s: Sampler) -> Self {
        self.sampler = s;
        self
    }

    /// The output dimension these parameters give: $m_1 + m_{cs}$.
    pub fn output_dim(&self) -> usize {
        self.m1 + self.mcs
    }

    fn validate(&self) -> Result<()> {
        check_depth(self.depth, 1)?;
        if self.m1 == 0 {
            return Err(RfxError::invalid("m1", self.m1, "an integer >= 1"));
        }
        if self.mcs > 0 && self.m0 == 0 {
            return Err(RfxError::invalid(
                "m0",
                self.m0,
                "an integer >= 1 when mcs > 0",
            ));
        }
        if self.sketch == PairSketch::TensorSrht && self.mcs % 2 != 0 {
            return Err(RfxError::invalid(
                "mcs",
                self.mcs,
                "an even integer for the complex TensorSRHT ([Re; Im] output)",
            ));
        }
        Ok(())
    }

    /// Draws all weights and sketches for inputs of dimension `d` (in layer order: Step weights, ReLU
    /// weights, sketch).
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<NtkRandomFeatures> {
        self.validate()?;
        if d == 0 {
            return Err(RfxError::invalid("d", d, "an integer >= 1"));
        }
        let mut layers = Vec::with_capacity(self.depth);
        let (mut din, mut dphi) = (d, d);
        for _ in 0..self.depth {
            let step = if self.mcs > 0 {
                Some(RandomLayer::draw(
                    din,
                    self.m0,
                    Act::Step,
                    Sampler::Gaussian,
                    rng,
                )?)
            } else {
                None
            };
            let relu = RandomLayer::draw(din, self.m1, Act::Relu, self.sampler, rng)?;
            let sketch = if self.mcs > 0 {
                Some(match self.sketch {
                    PairSketch::TensorSketch => Sketch2::Count(
                        TensorSketch::params()
                            .dim(self.mcs)
                            .fit_dims(&[self.m0, dphi], rng)?,
                    ),
                    PairSketch::TensorSrht => Sketch2::Srht(
                        TensorSrht::params()
                            .dim(self.mcs)
                            .transform(Transform::Fourier)
                            .fit_pair(self.m0, dphi, rng)?,
                    ),
                })
            } else {
                None
            };
            layers.push(Layer { step, relu, sketch });
            din = self.m1;
            dphi = self.m1 + self.mcs;
        }
        Ok(NtkRandomFeatures {
            params: self.clone(),
            d,
            layers,
        })
    }
}

#[derive(Clone, Debug)]
enum Sketch2 {
    Count(TensorSketch),
    Srht(TensorSrht),
}

impl Sketch2 {
    /// $S(\Lambda \otimes \Phi)$ of each row pair into `out` (the TensorSketch writes there directly).
    fn pair_into(
        &self,
        lam: ArrayView2<'_, f64>,
        phi: ArrayView2<'_, f64>,
        mut out: ArrayViewMut2<'_, f64>,
    ) -> Result<()> {
        match self {
            Sketch2::Count(ts) => ts.transform_tensor_into(&[lam.view(), phi.view()], out),
            Sketch2::Srht(ts) => {
                out.assign(&ts.transform_pair(lam, phi)?);
                Ok(())
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Layer {
    step: Option<RandomLayer>,
    relu: RandomLayer,
    sketch: Option<Sketch2>,
}

/// Fitted NTK random features (module docs); dimension $m_1 + m_{cs}$.
#[derive(Clone, Debug)]
pub struct NtkRandomFeatures {
    params: NtkRfParams,
    d: usize,
    layers: Vec<Layer>,
}

impl NtkRandomFeatures {
    /// Defaults: $L = 1$, $m_0 = m_1 = m_{cs} = 512$, TensorSketch, Gaussian weights.
    pub fn params() -> NtkRfParams {
        NtkRfParams {
            depth: 1,
            m0: 512,
            m1: 512,
            mcs: 512,
            sketch: PairSketch::TensorSketch,
            sampler: Sampler::Gaussian,
        }
    }

    /// The parameters the map was fitted with.
    pub fn parameters(&self) -> &NtkRfParams {
        &self.params
    }

    /// Features of a batch: returns $(\Phi^{(L)}, \Psi^{(L)})$ (NTK features and NNGP features).
    pub fn transform_with_nngp(
        &self,
        x: ArrayView2<'_, f64>,
    ) -> Result<(Array2<f64>, Array2<f64>)> {
        let phi = self.transform(x)?;
        // Ψ⁽ᴸ⁾ is the first m₁ columns of Φ⁽ᴸ⁾ (Φ⁽ᴸ⁾ = [Ψ⁽ᴸ⁾, Γ⁽ᴸ⁾], or Ψ⁽ᴸ⁾ itself when m_cs = 0).
        let psi = phi.slice(s![.., ..self.params.m1]).to_owned();
        Ok((phi, psi))
    }

    /// $\Phi^{(L)}$ of a batch written into `out` (rows × dim). Each layer writes $\Phi^{(\ell)} =
    /// [\Psi^{(\ell)}, \Gamma^{(\ell)}]$ into one array ([`Layer::forward_into`]), so $\Psi^{(\ell)}$, the next
    /// layer's other input, is its first $m_1$ columns ($\Psi^{(0)} = \Phi^{(0)} = x$); the last layer writes into
    /// `out`.
    ///
    /// `forward` is [`Layer::forward_into`] (`f64`) or [`Layer::forward_into_f32`] (`f32`).
    fn batch_into<T: Clone + Default>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, T>,
        forward: impl Fn(
            &Layer,
            ArrayView2<'_, T>,
            ArrayView2<'_, T>,
            ArrayViewMut2<'_, T>,
        ) -> Result<()>,
    ) -> Result<()> {
        let (last, earlier) = self.layers.split_last().expect("depth >= 1 (validated)");
        let mut phi = x.to_owned();
        let mut psi_cols = x.ncols();
        for layer in earlier {
            // every layer's Φ has the output width m₁ + m_cs
            let mut next = Array2::from_elem((x.nrows(), self.dim()), T::default());
            forward(
                layer,
                phi.slice(s![.., ..psi_cols]),
                phi.view(),
                next.view_mut(),
            )?;
            psi_cols = layer.relu.dim();
            phi = next;
        }
        forward(last, phi.slice(s![.., ..psi_cols]), phi.view(), out)
    }

    /// The features of `x` (after its width is checked), computed in batches of [`ROW_BATCH`] rows by
    /// [`NtkRandomFeatures::batch_into`] with `forward`.
    fn in_row_batches<T: Clone + Default>(
        &self,
        x: ArrayView2<'_, T>,
        forward: impl Fn(&Layer, ArrayView2<'_, T>, ArrayView2<'_, T>, ArrayViewMut2<'_, T>) -> Result<()>
            + Copy,
    ) -> Result<Array2<T>> {
        self.check_input_cols(x.ncols())?;
        let n = x.nrows();
        let mut out = Array2::from_elem((n, self.dim()), T::default());
        for start in (0..n).step_by(ROW_BATCH) {
            let end = (start + ROW_BATCH).min(n);
            self.batch_into(
                x.slice(s![start..end, ..]),
                out.slice_mut(s![start..end, ..]),
                forward,
            )?;
        }
        Ok(out)
    }
}

impl Layer {
    /// [`Layer::forward_into`] with the two random layers' products in `f32` (`RandomLayer::apply_into_f32`,
    /// each within its forward-error bound) and the degree-2 sketch of $\Lambda \otimes \Phi$ (FFTs or
    /// Hadamard transforms, not a GEMM) computed in `f64` on the widened inputs, rounded once.
    fn forward_into_f32(
        &self,
        psi: ArrayView2<'_, f32>,
        phi: ArrayView2<'_, f32>,
        mut out: ArrayViewMut2<'_, f32>,
    ) -> Result<()> {
        let (out_psi, mut out_gamma) = out.view_mut().split_at(Axis(1), self.relu.dim());
        self.relu.apply_into_f32(psi, out_psi);
        if let (Some(step), Some(sk)) = (&self.step, &self.sketch) {
            let lam = step.apply_f32(psi).mapv(f64::from);
            let phi = phi.mapv(f64::from);
            let mut gamma = Array2::<f64>::zeros(out_gamma.raw_dim());
            sk.pair_into(lam.view(), phi.view(), gamma.view_mut())?;
            out_gamma.zip_mut_with(&gamma, |o, &v| *o = v as f32);
        }
        Ok(())
    }

    /// One layer of Algorithm 1 on a batch: $\Psi^{(\ell)} = \mathrm{ReLU}$ features of $\Psi^{(\ell-1)}$ into the
    /// first $m_1$ columns of `out`, and $\Gamma^{(\ell)} = S(\Lambda^{(\ell)} \otimes \Phi^{(\ell-1)})$ into the
    /// rest (GEMM and sketch write there directly).
    fn forward_into(
        &self,
        psi: ArrayView2<'_, f64>,
        phi: ArrayView2<'_, f64>,
        mut out: ArrayViewMut2<'_, f64>,
    ) -> Result<()> {
        let (out_psi, out_gamma) = out.view_mut().split_at(Axis(1), self.relu.dim());
        self.relu.apply_into(psi, out_psi);
        if let (Some(step), Some(sk)) = (&self.step, &self.sketch) {
            sk.pair_into(step.apply(psi).view(), phi, out_gamma)?;
        }
        Ok(())
    }
}

impl FeatureMap for NtkRandomFeatures {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.params.output_dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.in_row_batches(x, Layer::forward_into)
    }

    /// Every layer's ReLU and Step products in `f32` (the GEMMs, the bulk of the work at depth $\ge 2$), the
    /// sketches in `f64` (`Layer::forward_into_f32`). The error is no longer a one-product bound (the layers
    /// compound it, and a Step feature flips where a projection rounds across 0); tested at the Gram level:
    /// the `f32` features move $\Phi\Phi^\top$ by far less than its distance to the exact NTK.
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        self.in_row_batches(x, Layer::forward_into_f32)
    }

    fn native_f32(&self) -> bool {
        true
    }
}
