//! Baselines of Han et al. 2021, Fig. 2: Naive-RF (the Bietti–Mairal explicit NTK map with random arc-cosine
//! features, Eq. 12) and Grad-RF (gradients of a finite random ReLU network, Arora et al. 2019).
//!
//! **Naive-RF** ([`NaiveRf`]): with fresh order-0 features $a_0$ ($m_0$) and order-1 features $a_1$ ($m_1$) per
//! layer (inputs of dimension $d$, then $m_1$),
//! $$\Psi^{(\ell+1)} = a_1(\Psi^{(\ell)}),\qquad \Phi^{(\ell+1)} = \big[\Psi^{(\ell+1)},\ a_0(\Psi^{(\ell)}) \otimes \Phi^{(\ell)}\big],
//! \qquad \Phi^{(0)} = \Psi^{(0)} = x,$$
//! of dimension $D_{\ell+1} = m_1 + m_0 D_\ell$, $D_0 = d$, i.e. $D_L = (\sum_{k<L} m_0^k)m_1 + m_0^L d$ (Eq. 12 and the
//! formula after it). $a \otimes b$ is the row-major Kronecker product ($a$'s index slow). Because
//! $\langle a\otimes b, c\otimes e\rangle = \langle a,c\rangle\langle b,e\rangle$, the Gram matrix of the *same draws* obeys
//! $G^{(\ell+1)} = \Psi^{(\ell+1)}\Psi^{(\ell+1)\top} + (\Lambda^{(\ell)}\Lambda^{(\ell)\top}) \odot G^{(\ell)}$, $G^{(0)} = XY^\top$
//! ([`NaiveRf::gram`], research notes §3.3), which costs $O(n^2 L + n(d + m_1)(m_0 + m_1)L)$ and never forms the
//! $D_L$-dimensional features, so large configurations need no Kronecker products. [`FeatureMap::transform`]
//! materialises $\Phi^{(L)}$ and refuses (with [`RfxError::OutOfMemory`]) above a memory cap. For $L = 1$ the map
//! is unbiased for $\Theta^{(1)}$; for $L \ge 2$ it is biased like Algorithm 1.
//!
//! **Grad-RF** ([`GradRf`]): the network of Han et al. Eq. 1 with $L$ hidden layers of width $w$ and no biases,
//! $h_0 = x$, $h_\ell = \sqrt{2/w}\thinspace\mathrm{ReLU}(W_\ell^\top h_{\ell-1})$, $f = v^\top h_L$, all parameters i.i.d.
//! $\mathcal N(0, 1)$. Features are $\partial f/\partial\theta$ for $\theta = (W_1, \dots, W_L, v)$, dimension
//! $P = dw + (L-1)w^2 + w$ (the paper reports this "expected dimension"; its example "127,040 for a two-layer,
//! 16-width network on MNIST" matches width 160 with 10 outputs, not Eq. 1, research notes §7.10). By
//! backpropagation, $g_L = v$, $\delta_\ell = \sqrt{2/w}\thinspace\mathrm{Step}(z_\ell) \odot g_\ell$, $g_{\ell-1} = W_\ell\delta_\ell$,
//! $\partial f/\partial W_\ell = h_{\ell-1}\delta_\ell^\top$, $\partial f/\partial v = h_L$, so the empirical NTK is
//! $$\hat K = H_L H_L^\top + \sum_{\ell=1}^L (H_{\ell-1}H_{\ell-1}^\top) \odot (\Delta_\ell\Delta_\ell^\top)$$
//! ([`GradRf::gram`], $O(n^2(d + Lw))$, never forming $P$-dimensional gradients). As $w \to \infty$, $\hat K \to \Theta^{(L)}$
//! (the $\sqrt{2/w}$ scaling matches the $\kappa(1) = 1$ normalisation).

use crate::arccos::{Act, RandomLayer, Sampler};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::check_depth;
use rfx_sampling::random::{gaussian_matrix, gaussian_vec};

/// Default memory cap for materialising Naive-RF features: 8 GiB.
pub const DEFAULT_NAIVE_MEMORY_CAP: u64 = 8 << 30;

fn check_pos(name: &str, v: usize) -> Result<()> {
    if v == 0 {
        Err(RfxError::invalid(name, v, "an integer >= 1"))
    } else {
        Ok(())
    }
}

/// The largest $w \in [1, m]$ with `fits(w)`, for a `fits` that holds up to some width and fails above it
/// (a feature dimension growing with $w$ against the budget $m$), by bisection; `None` if `fits(1)` fails.
fn widest(m: usize, fits: impl Fn(usize) -> bool) -> Option<usize> {
    if m == 0 || !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1usize, m);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// Parameters of [`NaiveRf`]: `depth` $L \ge 1$ (default 1), `m0`, `m1` (default 16 each; the paper uses
/// $m_0 = m_1 \in \lbrace2, \dots, 128\rbrace$), `memory_cap` for [`FeatureMap::transform`] (default 8 GiB).
#[derive(Clone, Debug)]
pub struct NaiveRfParams {
    depth: usize,
    m0: usize,
    m1: usize,
    memory_cap: u64,
}

impl NaiveRfParams {
    /// Depth $L$.
    pub fn depth(mut self, l: usize) -> Self {
        self.depth = l;
        self
    }

    /// Step features per layer.
    pub fn m0(mut self, m: usize) -> Self {
        self.m0 = m;
        self
    }

    /// ReLU features per layer.
    pub fn m1(mut self, m: usize) -> Self {
        self.m1 = m;
        self
    }

    /// Memory cap (bytes) for materialised features.
    pub fn memory_cap(mut self, bytes: u64) -> Self {
        self.memory_cap = bytes;
        self
    }

    /// $D_L$ for input dimension `d` (error if it overflows `u64`).
    pub fn output_dim(&self, d: usize) -> Result<u64> {
        let mut dim = d as u64;
        for _ in 0..self.depth {
            dim = (self.m0 as u64)
                .checked_mul(dim)
                .and_then(|v| v.checked_add(self.m1 as u64))
                .ok_or_else(|| {
                    RfxError::invalid("m0", self.m0, "small enough that D_L fits in 64 bits")
                })?;
        }
        Ok(dim)
    }

    /// Draws the weights (per layer: Step weights, then ReLU weights).
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<NaiveRf> {
        check_depth(self.depth, 1)?;
        check_pos("m0", self.m0)?;
        check_pos("m1", self.m1)?;
        check_pos("d", d)?;
        let dim = self.output_dim(d)?;
        let mut layers = Vec::with_capacity(self.depth);
        let mut din = d;
        for _ in 0..self.depth {
            let step = RandomLayer::draw(din, self.m0, Act::Step, Sampler::Gaussian, rng)?;
            let relu = RandomLayer::draw(din, self.m1, Act::Relu, Sampler::Gaussian, rng)?;
            layers.push((step, relu));
            din = self.m1;
        }
        Ok(NaiveRf {
            params: self.clone(),
            d,
            dim,
            layers,
        })
    }
}

/// Fitted Naive-RF (module docs); dimension $D_L = m_1 + m_0 D_{L-1}$, $D_0 = d$.
#[derive(Clone, Debug)]
pub struct NaiveRf {
    params: NaiveRfParams,
    d: usize,
    dim: u64,
    layers: Vec<(RandomLayer, RandomLayer)>,
}

impl NaiveRf {
    /// Defaults: $L = 1$, $m_0 = m_1 = 16$, 8 GiB cap.
    pub fn params() -> NaiveRfParams {
        NaiveRfParams {
            depth: 1,
            m0: 16,
            m1: 16,
            memory_cap: DEFAULT_NAIVE_MEMORY_CAP,
        }
    }

    /// The largest $w \ge 1$ such that $m_0 = m_1 = w$ gives $D_L \le m$ on $\mathbb R^d$ ($D_L$ grows with $w$);
    /// `None` if even $w = 1$ gives more. How Naive-RF is given a budget of "$m$ features" (the registry's
    /// `naive-rf`), like [`GradRf::widest_within`].
    pub fn widest_within(m: usize, d: usize, depth: usize) -> Option<usize> {
        widest(m, |w| {
            NaiveRf::params()
                .depth(depth)
                .m0(w)
                .m1(w)
                .output_dim(d)
                .is_ok_and(|dim| dim <= m as u64)
        })
    }

    /// The exact feature dimension $D_L$ (may exceed `usize` on 32-bit targets; [`FeatureMap::dim`] saturates).
    pub fn output_dim(&self) -> u64 {
        self.dim
    }

    /// $\langle\Phi^{(L)}(x_i), \Phi^{(L)}(y_j)\rangle$ for the drawn weights by the kernel-level recursion
    /// (module docs), without materialising the features; equals `transform(x) · transform(y)ᵀ`.
    pub fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        self.check_input(y)?;
        let mut g = x.dot(&y.t());
        let (mut px, mut py) = (x.to_owned(), y.to_owned());
        for (step, relu) in &self.layers {
            let (lx, ly) = (step.apply(px.view()), step.apply(py.view()));
            let ll = lx.dot(&ly.t());
            px = relu.apply(px.view());
            py = relu.apply(py.view());
            let pp = px.dot(&py.t());
            Zip::from(&mut g)
                .and(&ll)
                .and(&pp)
                .par_for_each(|gv, &l, &p| *gv = p + l * *gv);
        }
        Ok(g)
    }
}

impl FeatureMap for NaiveRf {
    fn input_dim(&self) -> usize {
        self.d
    }

    /// [`NaiveRf::gram`]: the kernel-level recursion, without the $D_L$-dimensional features.
    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram(x, y)
    }

    fn dim(&self) -> usize {
        usize::try_from(self.dim).unwrap_or(usize::MAX)
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let n = x.nrows() as u128;
        let bytes = n.saturating_mul(self.dim as u128).saturating_mul(8);
        if bytes > self.params.memory_cap as u128 {
            return Err(RfxError::OutOfMemory {
                what: format!("Naive-RF features ({} x {})", n, self.dim),
                needed_bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
                cap_bytes: self.params.memory_cap,
            });
        }
        let mut psi = x.to_owned();
        let mut phi = x.to_owned();
        for (step, relu) in &self.layers {
            let lam = step.apply(psi.view());
            let psi_new = relu.apply(psi.view());
            let (m1, m0, dp) = (psi_new.ncols(), lam.ncols(), phi.ncols());
            let mut next = Array2::<f64>::zeros((x.nrows(), m1 + m0 * dp));
            Zip::from(next.axis_iter_mut(Axis(0)))
                .and(psi_new.axis_iter(Axis(0)))
                .and(lam.axis_iter(Axis(0)))
                .and(phi.axis_iter(Axis(0)))
                .par_for_each(|mut o, p, l, f| {
                    o.slice_mut(s![..m1]).assign(&p);
                    for (a, &la) in l.iter().enumerate() {
                        let start = m1 + a * dp;
                        o.slice_mut(s![start..start + dp])
                            .zip_mut_with(&f, |ov, &fv| *ov = la * fv);
                    }
                });
            phi = next;
            psi = psi_new;
        }
        Ok(phi)
    }
}

/// Parameters of [`GradRf`]: `depth` $L \ge 1$ (default 1), `width` $w$ (default 64).
#[derive(Clone, Debug)]
pub struct GradRfParams {
    depth: usize,
    width: usize,
}

impl GradRfParams {
    /// Number of hidden layers $L$.
    pub fn depth(mut self, l: usize) -> Self {
        self.depth = l;
        self
    }

    /// Width $w$ of every hidden layer.
    pub fn width(mut self, w: usize) -> Self {
        self.width = w;
        self
    }

    /// Number of parameters $P = dw + (L-1)w^2 + w$ for input dimension `d`.
    pub fn output_dim(&self, d: usize) -> usize {
        d * self.width + self.depth.saturating_sub(1) * self.width * self.width + self.width
    }

    /// Draws the network $\theta \sim \mathcal N(0, I)$ in the order $W_1, \dots, W_L, v$ (row-major).
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<GradRf> {
        check_depth(self.depth, 1)?;
        check_pos("width", self.width)?;
        check_pos("d", d)?;
        let mut weights = Vec::with_capacity(self.depth);
        let mut din = d;
        for _ in 0..self.depth {
            weights.push(gaussian_matrix(din, self.width, rng));
            din = self.width;
        }
        let out = gaussian_vec(self.width, rng);
        Ok(GradRf {
            params: self.clone(),
            d,
            weights,
            out,
        })
    }
}

/// A fitted random ReLU network whose parameter gradients are the features (module docs); dimension
/// $P = dw + (L-1)w^2 + w$.
#[derive(Clone, Debug)]
pub struct GradRf {
    params: GradRfParams,
    d: usize,
    weights: Vec<Array2<f64>>,
    out: Array1<f64>,
}

/// Forward/backward quantities of a batch: $H_0..H_L$ and $\Delta_1..\Delta_L$.
struct Pass {
    h: Vec<Array2<f64>>,
    delta: Vec<Array2<f64>>,
}

impl GradRf {
    /// Defaults: $L = 1$, $w = 64$.
    pub fn params() -> GradRfParams {
        GradRfParams {
            depth: 1,
            width: 64,
        }
    }

    /// The largest width $w \ge 1$ of a depth-$L$ network on $\mathbb R^d$ whose parameter count (the
    /// feature dimension) $dw + (L-1)w^2 + w$ is at most the budget $m$; `None` if even $w = 1$ has more.
    /// This is how a Grad-RF baseline is given "$m$ features" beside maps of width exactly $m$.
    pub fn widest_within(m: usize, d: usize, depth: usize) -> Option<usize> {
        widest(m, |w| {
            GradRf::params().depth(depth).width(w).output_dim(d) <= m
        })
    }

    /// The parameters $\theta = (\mathrm{vec}\thinspace W_1, \dots, \mathrm{vec}\thinspace W_L, v)$ flattened row-major (the feature
    /// order of [`FeatureMap::transform`]).
    pub fn theta(&self) -> Vec<f64> {
        let mut t: Vec<f64> = Vec::with_capacity(self.dim());
        for w in &self.weights {
            t.extend(w.iter());
        }
        t.extend(self.out.iter());
        t
    }

    /// The network output $f(x; \theta)$ for every row of `x` and an arbitrary parameter vector `theta` in
    /// the order of [`GradRf::theta`] (for finite-difference checks).
    pub fn output_with(&self, x: ArrayView2<'_, f64>, theta: &[f64]) -> Result<Array1<f64>> {
        self.check_input(x)?;
        if theta.len() != self.dim() {
            return Err(RfxError::DimensionMismatch(format!(
                "theta has {} entries, the network {}",
                theta.len(),
                self.dim()
            )));
        }
        let c = (2.0 / self.params.width as f64).sqrt();
        let mut h = x.to_owned();
        let mut off = 0;
        for w in &self.weights {
            let (r, k) = w.dim();
            let wm = ArrayView2::from_shape((r, k), &theta[off..off + r * k])
                .map_err(|e| RfxError::Numerical(e.to_string()))?;
            off += r * k;
            h = h.dot(&wm).mapv(|z| c * z.max(0.0));
        }
        Ok(h.dot(&ArrayView1::from(&theta[off..])))
    }

    /// The network output $f(x)$ at the drawn parameters.
    pub fn output(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        self.output_with(x, &self.theta())
    }

    fn pass(&self, x: ArrayView2<'_, f64>) -> Pass {
        let c = (2.0 / self.params.width as f64).sqrt();
        let mut h = vec![x.to_owned()];
        let mut z = Vec::with_capacity(self.weights.len());
        for w in &self.weights {
            let zl = h.last().expect("nonempty").dot(w);
            h.push(zl.mapv(|t| c * t.max(0.0)));
            z.push(zl);
        }
        let n = x.nrows();
        let mut g = Array2::from_shape_fn((n, self.params.width), |(_, j)| self.out[j]);
        let mut delta = vec![Array2::zeros((0, 0)); self.weights.len()];
        for l in (0..self.weights.len()).rev() {
            let mut dl = g;
            Zip::from(&mut dl)
                .and(&z[l])
                .par_for_each(|dv, &zv| *dv = if zv > 0.0 { c * *dv } else { 0.0 });
            if l > 0 {
                g = dl.dot(&self.weights[l].t());
            } else {
                g = Array2::zeros((0, 0));
            }
            delta[l] = dl;
        }
        Pass { h, delta }
    }

    /// The empirical NTK $\hat K(X, Y) = J_X J_Y^\top$ by the per-layer formula (module docs).
    pub fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        self.check_input(y)?;
        let (px, py) = (self.pass(x), self.pass(y));
        let l = self.weights.len();
        let mut k = px.h[l].dot(&py.h[l].t());
        for i in 0..l {
            let hh = px.h[i].dot(&py.h[i].t());
            let dd = px.delta[i].dot(&py.delta[i].t());
            Zip::from(&mut k)
                .and(&hh)
                .and(&dd)
                .par_for_each(|kv, &a, &b| *kv += a * b);
        }
        Ok(k)
    }
}

impl FeatureMap for GradRf {
    fn input_dim(&self) -> usize {
        self.d
    }

    /// [`GradRf::gram`]: the per-layer formula, without the $P$-dimensional gradients.
    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram(x, y)
    }

    fn dim(&self) -> usize {
        self.params.output_dim(self.d)
    }

    /// The gradients $\partial f(x)/\partial\theta$ ($n \times P$, order of [`GradRf::theta`]).
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let p = self.pass(x);
        let n = x.nrows();
        let mut out = Array2::<f64>::zeros((n, self.dim()));
        let mut off = 0;
        for l in 0..self.weights.len() {
            let (hin, dl) = (&p.h[l], &p.delta[l]);
            let (a, b) = (hin.ncols(), dl.ncols());
            Zip::from(
                out.slice_mut(s![.., off..off + a * b])
                    .axis_iter_mut(Axis(0)),
            )
            .and(hin.axis_iter(Axis(0)))
            .and(dl.axis_iter(Axis(0)))
            .par_for_each(|mut o, hr, dr| {
                for (i, &hv) in hr.iter().enumerate() {
                    o.slice_mut(s![i * b..(i + 1) * b])
                        .zip_mut_with(&dr, |ov, &dv| *ov = hv * dv);
                }
            });
            off += a * b;
        }
        out.slice_mut(s![.., off..])
            .assign(&p.h[self.weights.len()]);
        Ok(out)
    }
}
