//! CNN Grad-RF: gradient features of a random finite-width convolutional ReLU network (the Grad-RF baseline
//! of Table 1 of Zandieh et al. 2021; research notes §3.9), the convolutional analogue of [`crate::GradRf`].
//!
//! **Network.** Images $x \in \mathbb R^{d_1 \times d_2 \times c}$ (rows in height–width–channel order), $K$
//! convolutional layers with $q \times q$ filters (odd $q$, same padding), width $w$, no biases, ReLU, global
//! average pooling and a linear scalar output, all parameters i.i.d. $\mathcal N(0, 1)$:
//! $$h^{(0)} = x,\quad u^{(l)}\_p = \sum_{a,b} W^{(l)\top}\_{ab}\thinspace h^{(l-1)}\_{p+(a,b)},\quad
//!   h^{(l)} = \sqrt{\tfrac{2}{q^2 w}}\thinspace\mathrm{ReLU}(u^{(l)}),\quad f(x) = v^\top \tfrac{1}{d_1 d_2}\sum_p h^{(K)}\_p .$$
//! With this scaling $\langle h^{(l)}\_p(y), h^{(l)}\_{p^\prime}(z)\rangle \to \Gamma^{(l)}\_{pp^\prime}$ of Definition 2 as $w \to \infty$
//! (the variance of $u^{(l)}\_p$ is $\mathrm{conv}(\Gamma^{(l-1)})\_{pp} = N^{(l)}\_p$ and
//! $2\thinspace\mathbb E[\mathrm{ReLU}(u)\mathrm{ReLU}(u^\prime)] = \sqrt{NN^\prime}\kappa_1(\rho)$). The features are
//! $\nabla_\theta f(x)$ for $\theta = (W^{(1)}, \dots, W^{(K)}, v)$, of dimension
//! $q^2 c w + (K-1) q^2 w^2 + w$ ($= 18w^2 + (9c+1)w$ for $K = 3$, $q = 3$: the dimensions 9,328 / 17,040 /
//! 42,816 of Table 1 are $w = 22, 30, 48$ with $c = 3$). Their inner products converge to the CNTK with
//! every layer trained (Definition 2 plus the first-layer and output terms).
//!
//! **Gradients** (backpropagation with im2col): $A^{(l-1)}$ = the window direct sums of $h^{(l-1)}$
//! ($P \times q^2 c_{l-1}$), $U^{(l)} = A^{(l-1)}W^{(l)}$; $g^{(K)}\_p = v/P$,
//! $\delta^{(l)} = \sqrt{2/(q^2 w)}\thinspace\mathrm{Step}(U^{(l)}) \odot g^{(l)}$, $\partial f/\partial W^{(l)} = A^{(l-1)\top}\delta^{(l)}$,
//! $g^{(l-1)} = \mathrm{col2im}(\delta^{(l)} W^{(l)\top})$ (the adjoint of the window direct sum),
//! $\partial f/\partial v = \frac1P\sum_p h^{(K)}\_p$. Tested against central finite differences of $f$.
//! Images are independent (rayon over images); the small matrix products are `rfx_linalg::matmul_nn` and
//! `matmul_tn` (each entry summed in index order, no BLAS), so the features do not depend on the thread count
//! or the CPU.

use crate::cntksketch::window_concat;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_sampling::random::{gaussian_matrix, gaussian_vec};

/// Parameters of [`CnnGradRf`]: image `shape` $(d_1, d_2, c)$ (required), `filter` $q$ (odd, default 3),
/// `layers` $K$ (default 3), `width` $w$ (default 16).
#[derive(Clone, Debug)]
pub struct CnnGradRfParams {
    shape: (usize, usize, usize),
    filter: usize,
    layers: usize,
    width: usize,
}

impl CnnGradRfParams {
    /// Image height, width and channels.
    pub fn shape(mut self, height: usize, width: usize, channels: usize) -> Self {
        self.shape = (height, width, channels);
        self
    }
    /// Filter size $q$ (odd).
    pub fn filter(mut self, q: usize) -> Self {
        self.filter = q;
        self
    }
    /// Number of convolutional layers $K$.
    pub fn layers(mut self, k: usize) -> Self {
        self.layers = k;
        self
    }
    /// Width $w$ (channels of every convolutional layer).
    pub fn width(mut self, w: usize) -> Self {
        self.width = w;
        self
    }

    /// Number of parameters $q^2 c w + (K-1)q^2w^2 + w$ (saturating at `usize::MAX`, so that a width read from
    /// input cannot overflow: such a count then fails the memory check).
    pub fn output_dim(&self) -> usize {
        let q2 = self.filter.saturating_mul(self.filter);
        let w = self.width;
        q2.saturating_mul(self.shape.2)
            .saturating_mul(w)
            .saturating_add(
                self.layers
                    .saturating_sub(1)
                    .saturating_mul(q2)
                    .saturating_mul(w)
                    .saturating_mul(w),
            )
            .saturating_add(w)
    }

    /// These parameters with the width $w \ge 1$ whose parameter count [`CnnGradRfParams::output_dim`] is
    /// closest to the budget $m$ (ties: the smaller width; it may exceed $m$). How a CNN Grad-RF baseline is
    /// given "$m$ features" (Zandieh et al. 2021, Table 1: $w = 22, 30, 48$ for $m$ = 9,328 / 17,040 / 42,816).
    ///
    /// The count grows strictly with $w$ (its last term is $w$), so the width is the largest $w^\ast$ with count
    /// $\le m$, found by bisection over $[1, m]$ in $O(\log m)$ steps whatever $m$ (a step-by-step search
    /// hung on a budget of $2^{64} - 1$), or $w^\ast + 1$ when that count is strictly closer to $m$.
    pub fn closest_width(self, m: usize) -> Self {
        let dims = |w: usize| self.clone().width(w).output_dim();
        // largest w in [1, m] with dims(w) <= m (dims(w) >= w), or 1 when even dims(1) > m
        let (mut lo, mut hi) = (1usize, m.max(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if dims(mid) <= m {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let w = if dims(lo) <= m
            && lo < usize::MAX
            && dims(lo + 1).abs_diff(m) < dims(lo).abs_diff(m)
        {
            lo + 1
        } else if dims(lo) > m {
            // dims(1) > m: w = 1, as the smallest network
            1
        } else {
            lo
        };
        self.width(w)
    }

    /// Draws $\theta \sim \mathcal N(0, I)$ in the order $W^{(1)}, \dots, W^{(K)}, v$.
    pub fn fit(&self, rng: &mut RfxRng) -> Result<CnnGradRf> {
        let (h, w, c) = self.shape;
        if h == 0 || w == 0 || c == 0 {
            return Err(RfxError::invalid(
                "image shape",
                format!("{h}x{w}x{c}"),
                "positive height, width and channels",
            ));
        }
        if self.filter % 2 == 0 {
            return Err(RfxError::invalid("filter", self.filter, "an odd size"));
        }
        if self.layers == 0 || self.width == 0 {
            return Err(RfxError::invalid(
                "layers/width",
                format!("{}/{}", self.layers, self.width),
                "integers >= 1",
            ));
        }
        let q2 = self.filter * self.filter;
        let mut weights = Vec::with_capacity(self.layers);
        let mut cin = c;
        for _ in 0..self.layers {
            weights.push(gaussian_matrix(q2 * cin, self.width, rng));
            cin = self.width;
        }
        let out = gaussian_vec(self.width, rng);
        Ok(CnnGradRf {
            params: self.clone(),
            weights,
            out,
        })
    }
}

/// Fitted on the input dimension, which must be the image size $d_1 d_2 c$; draws as [`CnnGradRfParams::fit`].
impl rfx_core::Fit for CnnGradRfParams {
    type Map = CnnGradRf;
    fn fit_map(&self, data: rfx_core::FitData<'_>, rng: &mut RfxRng) -> Result<CnnGradRf> {
        crate::cntksketch::check_image_dim(self.shape, data.dim())?;
        self.fit(rng)
    }
}

/// Gradient features of a random CNN (module docs).
#[derive(Clone, Debug)]
pub struct CnnGradRf {
    params: CnnGradRfParams,
    /// $W^{(l)}$ as $(q^2 c_{l-1}) \times w$ (block $(a, b)$ of rows = offset, im2col order).
    pub(crate) weights: Vec<Array2<f64>>,
    out: Array1<f64>,
}

/// $A B$ by [`matmul_into`].
fn matmul(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Array2<f64> {
    let mut c = Array2::zeros((a.nrows(), b.ncols()));
    matmul_into(a, b, c.view_mut());
    c
}

/// $C = A B$ into `c` (overwritten; contiguous, row-major): every entry the sum over $k$ in index order from
/// $0$, zero entries of $A$ skipped (`rfx_linalg::matmul_nn`, or `matmul_tn` when $A$ is the transpose of a
/// row-major matrix), so the same bits for any thread count and CPU without a BLAS call per small product.
fn matmul_into(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    mut c: ndarray::ArrayViewMut2<'_, f64>,
) {
    let dims = (a.nrows(), a.ncols(), b.ncols());
    let b = b.as_standard_layout();
    let b = b.as_slice().expect("standard layout");
    let c = c.as_slice_mut().expect("a contiguous product");
    if let Some(at) = a.t().as_slice() {
        rfx_linalg::matmul_tn(at, b, c, dims);
    } else {
        let a = a.as_standard_layout();
        rfx_linalg::matmul_nn(a.as_slice().expect("standard layout"), b, c, dims);
    }
}

impl CnnGradRf {
    /// Defaults: $q = 3$, $K = 3$, $w = 16$; the shape must be set.
    pub fn params() -> CnnGradRfParams {
        CnnGradRfParams {
            shape: (0, 0, 0),
            filter: 3,
            layers: 3,
            width: 16,
        }
    }

    pub(crate) fn pixels(&self) -> usize {
        self.params.shape.0 * self.params.shape.1
    }

    fn scale(&self) -> f64 {
        (2.0 / (self.params.filter * self.params.filter * self.params.width) as f64).sqrt()
    }

    fn im2col(&self, h: ArrayView2<'_, f64>) -> Array2<f64> {
        let (d1, d2, _) = self.params.shape;
        window_concat(h, (d1, d2), self.params.filter, None)
    }

    /// The adjoint of [`CnnGradRf::im2col`]: pixel $p^\prime$ receives block $(a, b)$ of row $p$ whenever
    /// $p + (a, b) = p^\prime$.
    fn col2im(&self, g: ArrayView2<'_, f64>, k: usize) -> Array2<f64> {
        let (d1, d2, _) = self.params.shape;
        let (h, w) = (d1 as isize, d2 as isize);
        let r = (self.params.filter / 2) as isize;
        let g = g.as_standard_layout();
        let g = g.as_slice().expect("standard layout");
        let row_len = self.params.filter * self.params.filter * k;
        let mut out = Array2::zeros((d1 * d2, k));
        let o = out.as_slice_mut().expect("a new array");
        for (pix, grow) in g.chunks_exact(row_len).enumerate() {
            let (i, j) = ((pix / d2) as isize, (pix % d2) as isize);
            let mut blk = 0;
            for a in -r..=r {
                for b in -r..=r {
                    let (ia, jb) = (i + a, j + b);
                    if (0..h).contains(&ia) && (0..w).contains(&jb) {
                        let dst = (ia * w + jb) as usize * k;
                        let src = &grow[blk * k..(blk + 1) * k];
                        o[dst..dst + k]
                            .iter_mut()
                            .zip(src)
                            .for_each(|(o, &v)| *o += v);
                    }
                    blk += 1;
                }
            }
        }
        out
    }

    /// Pixels of one image as a $P \times c$ matrix.
    fn pixels_of(&self, x: ArrayView1<'_, f64>) -> Array2<f64> {
        let c = self.params.shape.2;
        Array2::from_shape_fn((self.pixels(), c), |(p, l)| x[p * c + l])
    }

    /// The network output $f(x)$ for one image.
    pub fn output(&self, x: ArrayView1<'_, f64>) -> f64 {
        let sc = self.scale();
        let mut h = self.pixels_of(x);
        for w in &self.weights {
            let u = matmul(self.im2col(h.view()).view(), w.view());
            h = u.mapv(|v| sc * v.max(0.0));
        }
        let pooled = h.mean_axis(Axis(0)).expect("at least one pixel");
        pooled.dot(&self.out)
    }

    /// The forward pass of one image, keeping what backpropagation needs.
    pub(crate) fn forward(&self, x: ArrayView1<'_, f64>) -> Forward {
        let sc = self.scale();
        let mut cols = Vec::with_capacity(self.weights.len());
        let mut pre = Vec::with_capacity(self.weights.len());
        let mut h = self.pixels_of(x);
        for w in &self.weights {
            let a = self.im2col(h.view());
            let u = matmul(a.view(), w.view());
            h = u.mapv(|v| sc * v.max(0.0));
            cols.push(a);
            pre.push(u);
        }
        let pooled = h.mean_axis(Axis(0)).expect("at least one pixel");
        Forward { cols, pre, pooled }
    }

    /// Number of convolutional weights $q^2 c w + (K-1) q^2 w^2$ (the gradient's entries before $v$).
    pub(crate) fn conv_len(&self) -> usize {
        self.weights.iter().map(|w| w.len()).sum()
    }

    /// Backpropagation of $\langle \mathrm{head}, \mathrm{GAP}(h^{(K)}) \rangle$ from the forward pass `fw`:
    /// its gradient in $W^{(1)}, \dots, W^{(K)}$ (row-major) into the first [`CnnGradRf::conv_len`] entries
    /// of `out`. With `head` $= v$ this is $\partial f / \partial W$; a classifier passes
    /// $V \nabla_{\mathrm{logits}} L$.
    pub(crate) fn backward(
        &self,
        fw: &Forward,
        head: ArrayView1<'_, f64>,
        mut out: ndarray::ArrayViewMut1<'_, f64>,
    ) {
        let mut off = 0;
        for (l, delta) in self.deltas(fw, head).iter().enumerate() {
            // ∂/∂W⁽ˡ⁾ = A⁽ˡ⁻¹⁾ᵀ δ, written in place (row-major, as the weights)
            let dims = self.weights[l].dim();
            let gw = out
                .slice_mut(s![off..off + dims.0 * dims.1])
                .into_shape_with_order(dims)
                .expect("a contiguous slice of the gradient");
            matmul_into(fw.cols[l].t(), delta.view(), gw);
            off += dims.0 * dims.1;
        }
    }

    /// The $\delta^{(l)}$ ($P \times w$, layers in order) of [`CnnGradRf::backward`] for `head`: the gradient in
    /// $W^{(l)}$ is $A^{(l-1)\top}\delta^{(l)}$.
    pub(crate) fn deltas(&self, fw: &Forward, head: ArrayView1<'_, f64>) -> Vec<Array2<f64>> {
        let sc = self.scale();
        let p = self.pixels();
        let mut out = vec![Array2::zeros((0, 0)); self.weights.len()];
        // g⁽ᴷ⁾_p = head / P
        let mut g = Array2::from_shape_fn((p, self.params.width), |(_, k)| head[k] / p as f64);
        for l in (0..self.weights.len()).rev() {
            let mut delta = std::mem::take(&mut g);
            ndarray::Zip::from(&mut delta)
                .and(&fw.pre[l])
                .for_each(|d, &u| *d = if u > 0.0 { sc * *d } else { 0.0 });
            if l > 0 {
                let ga = matmul(delta.view(), self.weights[l].t());
                g = self.col2im(ga.view(), self.weights[l - 1].ncols());
            }
            out[l] = delta;
        }
        out
    }

    /// $\nabla_\theta f(x)$ in the order $W^{(1)}, \dots, W^{(K)}, v$ (row-major) into `out`.
    fn gradient(&self, x: ArrayView1<'_, f64>, mut out: ndarray::ArrayViewMut1<'_, f64>) {
        let fw = self.forward(x);
        // ∂f/∂v = GAP(h⁽ᴷ⁾)
        let off = self.conv_len();
        out.slice_mut(s![off..]).assign(&fw.pooled);
        self.backward(&fw, self.out.view(), out);
    }
}

/// What one image's forward pass keeps for backpropagation: per layer the im2col matrix $A^{(l-1)}$ and
/// the pre-activation $U^{(l)}$, and the pooled last layer $\mathrm{GAP}(h^{(K)})$.
pub(crate) struct Forward {
    pub(crate) cols: Vec<Array2<f64>>,
    pre: Vec<Array2<f64>>,
    /// $\frac1P \sum_p h^{(K)}\_p$ ($w$ entries).
    pub(crate) pooled: Array1<f64>,
}

impl FeatureMap for CnnGradRf {
    fn input_dim(&self) -> usize {
        let (h, w, c) = self.params.shape;
        h * w * c
    }

    fn dim(&self) -> usize {
        self.params.output_dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let mut out = Array2::zeros((x.nrows(), self.dim()));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(x.axis_iter(Axis(0)).into_par_iter())
            .for_each(|(o, r)| self.gradient(r, o));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rfx_core::rng_stream;

    #[test]
    fn closest_width_has_the_closest_parameter_count() {
        let base = CnnGradRf::params().shape(12, 12, 1).filter(3).layers(3);
        // 18w² + 10w: w = 5 → 500, 7 → 952, 10 → 1900, 15 → 4200
        for (m, w) in [(512, 5), (1024, 7), (2048, 10), (4096, 15)] {
            let p = base.clone().closest_width(m);
            assert_eq!(p.output_dim(), 18 * w * w + 10 * w, "m = {m}");
        }
        // the count of every other width is at least as far from m (ties: the smaller width)
        for m in [1, 27, 28, 29, 60, 64, 92, 1000, 9328] {
            let p = base.clone().closest_width(m);
            let gap = p.output_dim().abs_diff(m);
            for w in 1..40 {
                let other = base.clone().width(w).output_dim();
                assert!(other.abs_diff(m) >= gap, "m = {m}: width {w} is closer");
            }
        }
        // Table 1 of the paper: 3 channels, m = 9,328 / 17,040 / 42,816 are w = 22, 30, 48 exactly
        let rgb = CnnGradRf::params().shape(32, 32, 3);
        for m in [9328, 17_040, 42_816] {
            assert_eq!(rgb.clone().closest_width(m).output_dim(), m);
        }
    }

    #[test]
    fn closest_width_is_the_step_search_and_fast_for_any_budget() {
        // the step-by-step search it replaced (ties: the smaller width), on every budget up to 5,000
        let step = |p: &CnnGradRfParams, m: usize| {
            let dims = |w: usize| p.clone().width(w).output_dim();
            let mut w = 1;
            while dims(w + 1) <= m || dims(w + 1).abs_diff(m) < dims(w).abs_diff(m) {
                w += 1;
            }
            w
        };
        for p in [
            CnnGradRf::params().shape(12, 12, 1).filter(3).layers(3),
            CnnGradRf::params().shape(8, 8, 3).filter(1).layers(1),
        ] {
            for m in 0..5000 {
                assert_eq!(p.clone().closest_width(m).width, step(&p, m), "m = {m}");
            }
        }
        // budgets read from input: a bisection of at most 64 steps, counts saturating instead of overflowing
        // (the step search hung on 2^64 - 1, issue 60)
        let p = CnnGradRf::params().shape(28, 28, 1).layers(2);
        for m in [usize::MAX, usize::MAX / 3, 1 << 40] {
            let q = p.clone().closest_width(m);
            assert!(
                q.output_dim() <= m || q.output_dim().abs_diff(m) <= m,
                "m = {m}"
            );
            assert!(q.width >= 1);
        }
        assert_eq!(p.clone().width(usize::MAX).output_dim(), usize::MAX);
    }

    #[test]
    fn fit_on_the_input_dimension_checks_the_image_size() {
        use rfx_core::{Fit, FitData};
        let p = CnnGradRf::params().shape(4, 3, 2).width(3);
        let a = p
            .fit_map(FitData::Dim(24), &mut rng_stream(1, "f"))
            .unwrap();
        let b = p.fit(&mut rng_stream(1, "f")).unwrap();
        let x = Array2::from_shape_fn((2, 24), |(i, j)| (i * 24 + j) as f64 / 50.0 - 0.5);
        assert_eq!(
            a.transform(x.view()).unwrap(),
            b.transform(x.view()).unwrap()
        );
        assert!(p
            .fit_map(FitData::Dim(25), &mut rng_stream(1, "f"))
            .is_err());
    }

    #[test]
    fn gradient_features_match_central_finite_differences() {
        let net = CnnGradRf::params()
            .shape(4, 3, 2)
            .width(3)
            .fit(&mut rng_stream(1, "cnn-fd"))
            .unwrap();
        assert_eq!(net.dim(), 9 * 2 * 3 + 2 * 9 * 9 + 3);
        let mut rng = rng_stream(2, "cnn-fd-x");
        let x = Array1::from_shape_simple_fn(24, || rng.gen::<f64>() * 2.0 - 1.0);
        let g = net.transform(x.view().insert_axis(Axis(0))).unwrap();
        let eps = 1e-6;
        let mut idx = 0;
        let n_layers = net.weights.len();
        for l in 0..=n_layers {
            let len = if l < n_layers {
                net.weights[l].len()
            } else {
                net.out.len()
            };
            for k in 0..len {
                let bump = |d: f64| {
                    let mut n2 = net.clone();
                    if l < n_layers {
                        let c = n2.weights[l].ncols();
                        n2.weights[l][[k / c, k % c]] += d;
                    } else {
                        n2.out[k] += d;
                    }
                    n2.output(x.view())
                };
                let fd = (bump(eps) - bump(-eps)) / (2.0 * eps);
                // f is piecewise polynomial (degree ≤ K+1 in θ): central differences are exact up to
                // O(eps²) and round-off O(1e-16 |f| / eps) unless a ReLU kink lies within eps
                assert!(
                    (fd - g[[0, idx]]).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "layer {l} param {k}: fd {fd} vs {}",
                    g[[0, idx]]
                );
                idx += 1;
            }
        }
        assert_eq!(idx, net.dim());
    }

    #[test]
    fn features_are_deterministic_for_any_thread_count() {
        let net = CnnGradRf::params()
            .shape(5, 5, 1)
            .width(4)
            .fit(&mut rng_stream(3, "cnn-det"))
            .unwrap();
        let mut rng = rng_stream(4, "cnn-det-x");
        let x = Array2::from_shape_simple_fn((6, 25), || rng.gen::<f64>() - 0.5);
        let run = |t: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
                .install(|| net.transform(x.view()).unwrap())
        };
        assert_eq!(run(1), run(3));
        // ⟨∇f, θ⟩ = (K + 1) f for a network that is positively homogeneous of degree K + 1 in θ
        let f = run(1);
        let mut theta: Vec<f64> = net.weights.iter().flat_map(|w| w.iter().copied()).collect();
        theta.extend(net.out.iter());
        for i in 0..6 {
            let dot: f64 = f.row(i).iter().zip(&theta).map(|(a, b)| a * b).sum();
            let want = 4.0 * net.output(x.row(i));
            assert!(
                (dot - want).abs() <= 1e-10 * (1.0 + want.abs()),
                "{dot} vs {want}"
            );
        }
    }
}
