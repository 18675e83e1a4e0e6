//! Kernels of the form $k(x, y) = \Vert x\Vert^e\Vert y\Vert^e f(\rho)$, $\rho = \langle x, y\rangle/(\Vert x\Vert\Vert y\Vert)$, $e \in \lbrace0, 1\rbrace $:
//! cosines computed robustly and blocked, parallel Gram matrices (shared by the arc-cosine kernels and the
//! ReLU NTK/NNGP).
//!
//! **Edge cases.** Cosines are clamped to $[-1, 1]$. A zero vector gives $k = 0$: the limit for the homogeneous
//! kernels and, for $A_0$ (undefined at 0), the value the random features give ($\mathrm{Step}(0) = 0$). Near
//! $\rho = \pm 1$ the cosine from a GEMM inner product has absolute error $\approx 10^{-16}$, which the
//! square-root singularity of $\kappa_0$ amplifies to $\approx 10^{-8}$; therefore pairs with $|\rho| > 0.999$ get
//! their cosine recomputed from the rows as $\rho = 1 - \Vert\hat x - \hat y\Vert^2/2$ (or $\Vert\hat x + \hat y\Vert^2/2 - 1$),
//! which is exactly $\pm 1$ for (anti)parallel rows, and the symmetric Grams (`gram_sym`) set the diagonal
//! cosine to exactly 1.
//!
//! **Gram matrices** are computed in row blocks: one GEMM (BLAS) for the inner products of a block, then the
//! elementwise map in parallel over its rows (rayon). Memory is the output plus the row norms; $n = 10^4$
//! takes 0.8 GB for the output.

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rfx_core::Result;

/// Rows per GEMM block when filling a Gram matrix.
const ROW_BLOCK: usize = 512;

/// Cosines with $|\rho|$ above this are recomputed from the rows (module docs).
const NEAR_PARALLEL: f64 = 0.999;

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

/// A kernel of the form $k(x,y) = \Vert x\Vert^{e}\Vert y\Vert^{e} f(\rho)$ with $k = 0$ if either vector is zero.
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
