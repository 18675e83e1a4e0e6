//! Exact kernels: arc-cosine kernels of order 0 and 1, and the depth-$L$ ReLU NTK and NNGP.
//!
//! **Normalisation.** Throughout this crate the arc-cosine functions are normalised so that
//! $\kappa_0(1) = \kappa_1(1) = 1$, as in the authors' code (reference-implementations A1.1) and in both papers:
//! $$\kappa_0(\rho) = 1 - \frac{\arccos\rho}{\pi},\qquad
//!   \kappa_1(\rho) = \frac{\sqrt{1-\rho^2} + \rho\,(\pi - \arccos\rho)}{\pi}$$
//! (Han et al. 2021, Eq. 6; Zandieh et al. 2021, Eq. 2), i.e. twice the Cho–Saul / neural-tangents convention.
//! The scalar functions live in `rfx-gzk` ([`arccos0`], [`arccos1`], [`relu_ntk`]) and are re-exported here;
//! this crate adds [`relu_nngp`].
//!
//! With $\rho = \langle x, y\rangle/(\|x\|\|y\|)$:
//! * [`ArcCosineKernel`] order 0: $A_0(x,y) = \kappa_0(\rho) = \mathbb E_{w\sim\mathcal N(0,I)}[2\,\mathrm{Step}(w^\top x)\mathrm{Step}(w^\top y)]$;
//!   order 1: $A_1(x,y) = \|x\|\|y\|\kappa_1(\rho) = \mathbb E[2\,\mathrm{ReLU}(w^\top x)\mathrm{ReLU}(w^\top y)]$.
//! * [`ReluNtk`]: $\Theta^{(L)}(x,y) = \|x\|\|y\|\,K^{(L)}(\rho)$ and [`ReluNngp`]:
//!   $\Sigma^{(L)}(x,y) = \|x\|\|y\|\,\kappa_1^{\circ L}(\rho)$. These equal the matrix recursion of Han et al.
//!   2021, Eq. 5 ($K^{(0)} = XX^\top$, $K_{\rm NNGP}^{(\ell)} = F_1(K_{\rm NNGP}^{(\ell-1)})$,
//!   $K_{\rm NTK}^{(\ell)} = K_{\rm NNGP}^{(\ell)} + K_{\rm NTK}^{(\ell-1)} \odot F_0(K_{\rm NNGP}^{(\ell-1)})$) because $F_1$
//!   keeps the diagonal ($K_{\rm NNGP}^{(\ell)}(x,x) = \|x\|^2$), so every layer sees the same normalised cosine
//!   chain; [`ntk_nngp_recursion`] implements Eq. 5 literally as a test oracle. $\Theta^{(L)}(x,x) = (L+1)\|x\|^2$.
//!
//! **Edge cases.** Cosines are clamped to $[-1, 1]$. A zero vector gives $A_0 = A_1 = \Theta = \Sigma = 0$: this is
//! the limit for the homogeneous kernels and, for $A_0$ (undefined at 0), the value the random features give
//! ($\mathrm{Step}(0) = 0$). Near $\rho = \pm 1$ the cosine from a GEMM inner product has absolute error
//! $\approx 10^{-16}$, which the square-root singularity of $\kappa_0$ amplifies to $\approx 10^{-8}$; therefore
//! pairs with $|\rho| > 0.999$ get their cosine recomputed from the rows as $\rho = 1 - \|\hat x - \hat y\|^2/2$
//! (or $\|\hat x + \hat y\|^2/2 - 1$), which is exactly $\pm 1$ for (anti)parallel rows, and the symmetric
//! Gram [`ReluNtk::gram_sym`] sets the diagonal cosine to exactly 1.
//!
//! **Gram matrices** are computed in row blocks: one GEMM (BLAS, multithreaded) for the inner products of
//! a block, then the elementwise map in parallel over its rows (rayon). Memory is the output plus the
//! row norms; $n = 10^4$ takes 0.8 GB for the output.

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rfx_core::{Kernel, Result, RfxError};

pub use rfx_gzk::{arccos0, arccos1, relu_ntk};

/// Largest depth accepted by the kernels and feature maps (a guard against absurd values).
pub const MAX_DEPTH: usize = 1000;

/// Rows per GEMM block when filling a Gram matrix.
const ROW_BLOCK: usize = 512;

/// Cosines with $|\rho|$ above this are recomputed from the rows (module docs).
const NEAR_PARALLEL: f64 = 0.999;

/// The depth-$L$ ReLU NNGP function $\Sigma^{(L)}(\rho) = \kappa_1^{\circ L}(\rho)$ (Zandieh et al. 2021, Eq. 3;
/// $L = 0$ gives $\rho$). $\rho$ is clamped to $[-1, 1]$; $\Sigma^{(L)}(1) = 1$.
pub fn relu_nngp(depth: usize, rho: f64) -> f64 {
    let mut s = rho.clamp(-1.0, 1.0);
    for _ in 0..depth {
        s = arccos1(s);
    }
    s
}

pub(crate) fn check_depth(depth: usize, min: usize) -> Result<()> {
    if depth < min || depth > MAX_DEPTH {
        Err(RfxError::invalid(
            "depth",
            depth,
            format!("an integer in {min}..={MAX_DEPTH}"),
        ))
    } else {
        Ok(())
    }
}

/// Euclidean norms of the rows.
pub fn row_norms(x: ArrayView2<'_, f64>) -> Array1<f64> {
    x.map_axis(Axis(1), |r| r.dot(&r).sqrt())
}

/// The cosine of $x$ and $y$ given their inner product and norms (both nonzero), recomputed from the rows
/// when $|\rho|$ is close to 1 (module docs).
#[inline]
fn cosine(g: f64, a: f64, b: f64, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
    let rho = g / (a * b);
    if rho.abs() <= NEAR_PARALLEL {
        return rho;
    }
    let sign = if rho > 0.0 { -1.0 } else { 1.0 };
    let (ia, ib) = (1.0 / a, 1.0 / b);
    let mut d2 = 0.0;
    for (xv, yv) in x.iter().zip(y.iter()) {
        let t = xv * ia + sign * yv * ib;
        d2 += t * t;
    }
    if rho > 0.0 {
        (1.0 - 0.5 * d2).clamp(-1.0, 1.0)
    } else {
        (0.5 * d2 - 1.0).clamp(-1.0, 1.0)
    }
}

/// A kernel of the form $k(x,y) = \|x\|^{e}\|y\|^{e} f(\rho)$ with $k = 0$ if either vector is zero.
pub(crate) trait CosineKernel: Send + Sync {
    /// Power of the norms (0 or 1).
    fn homogeneous(&self) -> bool;
    /// $f(\rho)$ for $\rho \in [-1, 1]$.
    fn f(&self, rho: f64) -> f64;

    fn eval_pair(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let (a, b) = (x.dot(&x).sqrt(), y.dot(&y).sqrt());
        if a == 0.0 || b == 0.0 {
            return 0.0;
        }
        let rho = cosine(x.dot(&y), a, b, x, y);
        let scale = if self.homogeneous() { a * b } else { 1.0 };
        scale * self.f(rho)
    }

    /// Blocked, parallel Gram matrix; `sym` marks $y = x$ (diagonal cosine exactly 1).
    fn gram_blocked(
        &self,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
        sym: bool,
    ) -> Result<Array2<f64>> {
        rfx_core::check_gram_columns(x, y)?;
        let (nx, ny) = (x.nrows(), y.nrows());
        let na = row_norms(x);
        let nb = row_norms(y);
        let mut k = Array2::<f64>::zeros((nx, ny));
        let hom = self.homogeneous();
        for start in (0..nx).step_by(ROW_BLOCK) {
            let end = (start + ROW_BLOCK).min(nx);
            let mut blk = k.slice_mut(s![start..end, ..]);
            ndarray::linalg::general_mat_mul(
                1.0,
                &x.slice(s![start..end, ..]),
                &y.t(),
                0.0,
                &mut blk,
            );
            Zip::indexed(blk.axis_iter_mut(Axis(0))).par_for_each(|r, mut row| {
                let i = start + r;
                let a = na[i];
                let xi = x.row(i);
                for (j, v) in row.iter_mut().enumerate() {
                    let b = nb[j];
                    *v = if a == 0.0 || b == 0.0 {
                        0.0
                    } else {
                        let rho = if sym && i == j {
                            1.0
                        } else {
                            cosine(*v, a, b, xi, y.row(j))
                        };
                        let scale = if hom { a * b } else { 1.0 };
                        scale * self.f(rho)
                    };
                }
            });
        }
        Ok(k)
    }
}

/// Order of an arc-cosine kernel or feature map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArcCosineOrder {
    /// Order 0, $A_0 = \kappa_0(\rho)$ (Step activation).
    Zero,
    /// Order 1, $A_1 = \|x\|\|y\|\kappa_1(\rho)$ (ReLU activation).
    One,
}

impl ArcCosineOrder {
    /// The order from an integer (0 or 1).
    pub fn from_int(order: usize) -> Result<Self> {
        match order {
            0 => Ok(Self::Zero),
            1 => Ok(Self::One),
            _ => Err(RfxError::invalid("order", order, "0 or 1")),
        }
    }
}

/// The arc-cosine kernel of order 0 or 1 (Cho & Saul 2009; Han et al. 2021, Eq. 6), normalised so that
/// $A_0(x,x) = 1$ and $A_1(x,x) = \|x\|^2$ (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArcCosineKernel {
    order: ArcCosineOrder,
}

impl ArcCosineKernel {
    /// The kernel of the given order.
    pub fn new(order: ArcCosineOrder) -> Self {
        Self { order }
    }

    /// The order.
    pub fn order(&self) -> ArcCosineOrder {
        self.order
    }

    /// Gram matrix $K(X, X)$ with the diagonal cosine set to exactly 1.
    pub fn gram_sym(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, x, true)
    }
}

impl CosineKernel for ArcCosineKernel {
    fn homogeneous(&self) -> bool {
        self.order == ArcCosineOrder::One
    }
    fn f(&self, rho: f64) -> f64 {
        match self.order {
            ArcCosineOrder::Zero => arccos0(rho),
            ArcCosineOrder::One => arccos1(rho),
        }
    }
}

impl Kernel for ArcCosineKernel {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.eval_pair(x, y)
    }
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, y, false)
    }
}

/// The depth-$L$ ReLU neural tangent kernel of a fully connected network without biases (Han et al. 2021,
/// Eqs. 1, 2, 5; Zandieh et al. 2021, Definition 1 and Eq. 5):
/// $\Theta^{(L)}(x,y) = \|x\|\|y\|\,K^{(L)}(\rho)$ with $K^{(0)} = \Sigma^{(0)} = \rho$,
/// $K^{(\ell)} = K^{(\ell-1)}\kappa_0(\Sigma^{(\ell-1)}) + \kappa_1(\Sigma^{(\ell-1)})$, $\Sigma^{(\ell)} = \kappa_1(\Sigma^{(\ell-1)})$.
/// $L$ is the number of hidden layers ($L = 1$ is the "two-layer network"); $L = 0$ is the linear kernel.
/// $\Theta^{(L)}(x, x) = (L+1)\|x\|^2$; for $L = 1$, $\Theta = A_1 + A_0 \odot XX^\top$ (Han et al. Eq. 71).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReluNtk {
    depth: usize,
}

impl ReluNtk {
    /// The NTK of depth `depth` $\le$ [`MAX_DEPTH`].
    pub fn new(depth: usize) -> Result<Self> {
        check_depth(depth, 0)?;
        Ok(Self { depth })
    }

    /// The depth $L$.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Gram matrix $K(X, X)$ with the diagonal cosine set to exactly 1 (so $K_{ii} = (L+1)\|x_i\|^2$ up to the
    /// rounding of $\|x_i\|^2$).
    pub fn gram_sym(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, x, true)
    }
}

impl CosineKernel for ReluNtk {
    fn homogeneous(&self) -> bool {
        true
    }
    fn f(&self, rho: f64) -> f64 {
        relu_ntk(self.depth, rho)
    }
}

impl Kernel for ReluNtk {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.eval_pair(x, y)
    }
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, y, false)
    }
}

/// The depth-$L$ ReLU NNGP kernel $\Sigma^{(L)}(x,y) = \|x\|\|y\|\,\kappa_1^{\circ L}(\rho)$ (Han et al. 2021, Eq. 4
/// and 5): the covariance of the output of the random network of Eq. 1. $\Sigma^{(L)}(x,x) = \|x\|^2$.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReluNngp {
    depth: usize,
}

impl ReluNngp {
    /// The NNGP kernel of depth `depth` $\le$ [`MAX_DEPTH`].
    pub fn new(depth: usize) -> Result<Self> {
        check_depth(depth, 0)?;
        Ok(Self { depth })
    }

    /// The depth $L$.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Gram matrix $K(X, X)$ with the diagonal cosine set to exactly 1.
    pub fn gram_sym(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, x, true)
    }
}

impl CosineKernel for ReluNngp {
    fn homogeneous(&self) -> bool {
        true
    }
    fn f(&self, rho: f64) -> f64 {
        relu_nngp(self.depth, rho)
    }
}

impl Kernel for ReluNngp {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.eval_pair(x, y)
    }
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_blocked(x, y, false)
    }
}

/// Han et al. 2021, Eq. 5 implemented literally on $n \times n$ matrices (a slow, obviously-correct oracle):
/// returns $(K_{\rm NTK}^{(L)}, K_{\rm NNGP}^{(L)})$ for the rows of `x`. $[F_1(K)]_{ij} = \sqrt{K_{ii}K_{jj}}\,
/// \kappa_1(K_{ij}/\sqrt{K_{ii}K_{jj}})$, $[F_0(K)]_{ij} = \kappa_0(\cdot)$; entries with $K_{ii}K_{jj} = 0$ are 0.
pub fn ntk_nngp_recursion(
    x: ArrayView2<'_, f64>,
    depth: usize,
) -> Result<(Array2<f64>, Array2<f64>)> {
    check_depth(depth, 0)?;
    let n = x.nrows();
    let mut nngp = x.dot(&x.t());
    let mut ntk = nngp.clone();
    for _ in 0..depth {
        let diag: Vec<f64> = (0..n).map(|i| nngp[[i, i]]).collect();
        let mut f0 = Array2::zeros((n, n));
        let mut f1 = Array2::zeros((n, n));
        for i in 0..n {
            for j in 0..n {
                let p = (diag[i] * diag[j]).sqrt();
                if p > 0.0 {
                    let r = (nngp[[i, j]] / p).clamp(-1.0, 1.0);
                    f0[[i, j]] = arccos0(r);
                    f1[[i, j]] = p * arccos1(r);
                }
            }
        }
        ntk = &f1 + &(&ntk * &f0);
        nngp = f1;
    }
    Ok((ntk, nngp))
}
