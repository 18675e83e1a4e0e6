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
//! **Extreme norms.** $\Vert x\Vert^2$ underflows below $\approx 10^{-154}$ and overflows above $\approx 10^{154}$:
//! a tiny non-zero row would be taken for a zero vector (or get a cosine from subnormal numbers with a few
//! correct digits) and a huge row gives $\infty/\infty$. A row whose norm lies outside
//! $[10^{-150}, 10^{150}]$ is therefore *extreme*, and every pair with an extreme row is computed from the
//! rows scaled by their largest coordinate ([`scaled_pair`]): the cosine of the directions, exact to rounding,
//! and the norms as (largest coordinate) $\times$ (norm of the scaled row), so that the homogeneous kernels give
//! $\Vert x\Vert\Vert y\Vert f(\rho)$ whenever it is representable (and $\infty$, refused by the commands, when it is
//! not). Pairs of ordinary rows keep the GEMM path bit for bit.
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

/// Rows with a norm outside `[EXTREME_LOW, EXTREME_HIGH]` are computed by [`scaled_pair`] (module docs).
const EXTREME_LOW: f64 = 1e-150;
/// See [`EXTREME_LOW`].
const EXTREME_HIGH: f64 = 1e150;

/// Whether a row with this (plainly computed) norm needs the scaled path: out of range or not finite (a
/// row of zeros has norm exactly 0 and is not extreme).
#[inline]
fn extreme(norm: f64, row: ArrayView1<'_, f64>) -> bool {
    if norm == 0.0 {
        row.iter().any(|v| *v != 0.0)
    } else {
        !(EXTREME_LOW..=EXTREME_HIGH).contains(&norm)
    }
}

/// The cosine and the norms $(\rho, \Vert x\Vert, \Vert y\Vert)$ of two rows computed from the rows scaled by their
/// largest coordinates (no square under- or overflows); `None` if either row is zero.
fn scaled_pair(x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> Option<(f64, f64, f64)> {
    let sx = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let sy = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if sx == 0.0 || sy == 0.0 {
        return None;
    }
    let xs = x.mapv(|v| v / sx);
    let ys = y.mapv(|v| v / sy);
    let (a, b) = (xs.dot(&xs).sqrt(), ys.dot(&ys).sqrt());
    let rho = cosine(xs.dot(&ys), a, b, xs.view(), ys.view());
    Some((rho, sx * a, sy * b))
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

/// A kernel of the form $k(x,y) = \Vert x\Vert^{e}\Vert y\Vert^{e} f(\rho)$ with $k = 0$ if either vector is zero.
pub(crate) trait CosineKernel: Send + Sync {
    /// Power of the norms (0 or 1).
    fn homogeneous(&self) -> bool;
    /// $f(\rho)$ for $\rho \in [-1, 1]$.
    fn f(&self, rho: f64) -> f64;

    /// $k$ of a pair with an extreme row (module docs).
    fn eval_scaled(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        match scaled_pair(x, y) {
            None => 0.0,
            Some((rho, a, b)) => {
                let scale = if self.homogeneous() { a * b } else { 1.0 };
                scale * self.f(rho)
            }
        }
    }

    fn eval_pair(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let (a, b) = (x.dot(&x).sqrt(), y.dot(&y).sqrt());
        if extreme(a, x) || extreme(b, y) {
            return self.eval_scaled(x, y);
        }
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
        let ea: Vec<bool> = na
            .iter()
            .zip(x.rows())
            .map(|(&n, r)| extreme(n, r))
            .collect();
        let eb: Vec<bool> = nb
            .iter()
            .zip(y.rows())
            .map(|(&n, r)| extreme(n, r))
            .collect();
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
                    *v = if ea[i] || eb[j] {
                        if sym && i == j {
                            // rho = 1 exactly, as on the ordinary diagonal
                            match scaled_pair(xi, xi) {
                                None => 0.0,
                                Some((_, a, _)) => (if hom { a * a } else { 1.0 }) * self.f(1.0),
                            }
                        } else {
                            self.eval_scaled(xi, y.row(j))
                        }
                    } else if a == 0.0 || b == 0.0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arccos::{arccos0, arccos1, ArcCosineKernel, ArcCosineOrder};
    use ndarray::{array, Array2};
    use rfx_core::Kernel;

    /// The angle between two 2-D rows by atan2, obviously scale-free: the reference for tiny and huge rows.
    fn angle_cos(x: [f64; 2], y: [f64; 2]) -> f64 {
        (y[1].atan2(y[0]) - x[1].atan2(x[0])).cos()
    }

    #[test]
    fn tiny_and_huge_rows_have_the_values_of_their_directions() {
        let dirs = [[1.0, 0.0], [1.0, 1.0], [-0.3, 0.7], [0.2, -0.9]];
        for scale in [5e-324, 1e-300, 1e-160, 1e-20, 1.0, 1e20, 1e160, 1e300] {
            let x = Array2::from_shape_fn((4, 2), |(i, j)| dirs[i][j] * scale);
            let k0 = ArcCosineKernel::new(ArcCosineOrder::Zero);
            let k1 = ArcCosineKernel::new(ArcCosineOrder::One);
            for (g, sym) in [
                (k0.gram(x.view(), x.view()).unwrap(), false),
                (k0.gram_sym(x.view()).unwrap(), true),
            ] {
                for i in 0..4 {
                    for j in 0..4 {
                        // subnormal rows (5e-324) keep one significant bit per coordinate
                        let (xi, xj) = ([x[[i, 0]], x[[i, 1]]], [x[[j, 0]], x[[j, 1]]]);
                        let want = if i == j && sym {
                            1.0
                        } else {
                            arccos0(angle_cos(xi, xj))
                        };
                        let tol = if scale < 1e-307 { 0.3 } else { 1e-9 };
                        assert!(
                            (g[[i, j]] - want).abs() <= tol,
                            "scale {scale:e} ({i}, {j}): {} vs {want}",
                            g[[i, j]]
                        );
                    }
                }
            }
            // order 1: |x||y| kappa1 where representable, never NaN
            let g = k1.gram(x.view(), x.view()).unwrap();
            for i in 0..4 {
                for j in 0..4 {
                    let (a, b) = (
                        scale * (dirs[i][0].hypot(dirs[i][1])),
                        scale * (dirs[j][0].hypot(dirs[j][1])),
                    );
                    let want = a * b * arccos1(angle_cos(dirs[i], dirs[j]));
                    assert!(!g[[i, j]].is_nan(), "scale {scale:e}: NaN");
                    if want.is_finite() && want > 1e-290 {
                        assert!(
                            (g[[i, j]] - want).abs() <= 1e-9 * want,
                            "scale {scale:e} ({i}, {j}): {} vs {want}",
                            g[[i, j]]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ordinary_rows_keep_the_gemm_path() {
        // the scaled path is taken only for extreme rows: same numbers as eval for ordinary ones
        let x = array![
            [0.3, -0.2, 1.5],
            [2.0, 0.1, -0.4],
            [0.0, 0.0, 0.0],
            [1e-3, 2e-3, 0.0]
        ];
        let k = ArcCosineKernel::new(ArcCosineOrder::One);
        let g = k.gram(x.view(), x.view()).unwrap();
        assert!(row_norms(x.view())
            .iter()
            .zip(x.rows())
            .all(|(&n, r)| !extreme(n, r)));
        for i in 0..4 {
            for j in 0..4 {
                assert!((g[[i, j]] - k.eval(x.row(i), x.row(j))).abs() <= 1e-15);
            }
        }
        assert_eq!(g[[2, 0]], 0.0);
    }
}
