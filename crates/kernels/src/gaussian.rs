//! The Gaussian kernel $k(x, y) = \exp\negthinspace\big(-\Vert x-y\Vert^2/(2\sigma^2)\big)$ and the median heuristic for $\sigma$.
//!
//! The bandwidth is the width $\sigma$ (the survey's $\varsigma$, Liu et al. 2021, Eq. 1; the Gegenbauer paper's
//! Lemma 15 with $x/\sigma$); scikit-learn's $\gamma = 1/(2\sigma^2)$. By Bochner's theorem
//! $k(x, y) = \mathbb E_{\omega\sim\mathcal N(0,\sigma^{-2}I)}\cos(\omega^\top(x-y))$, which the random Fourier
//! features of `rfx-sampling` estimate.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use rfx_core::{Kernel, Result, RfxError};

/// The Gaussian (RBF) kernel $k(x, y) = \exp(-\Vert x-y\Vert^2/(2\sigma^2))$ with width $\sigma > 0$ (module docs).
///
/// [`Kernel::gram`] forms the squared distances from one GEMM,
/// $\Vert x_i-y_j\Vert^2 = \Vert x_i\Vert^2 + \Vert y_j\Vert^2 - 2\langle x_i, y_j\rangle$, clamped at 0 against round-off.
/// That form loses everything to cancellation or overflow when the norms are large: its rounding error is
/// about $4\varepsilon(\Vert x_i\Vert^2 + \Vert y_j\Vert^2)$, so $k$ has relative error
/// $2\varepsilon(\Vert x_i\Vert^2 + \Vert y_j\Vert^2)/\sigma^2$, and $\Vert x\Vert^2$ overflows to $\infty$ above
/// $\approx 10^{154}$ (then $\infty - \infty$ = NaN would clamp to 0 and give $k = 1$ for points far apart). Pairs
/// whose bound exceeds $10^{-7}$, or whose GEMM form is not finite, are recomputed from the difference of the
/// rows ([`Kernel::eval`], which gives $e^{-\infty} = 0$ when $\Vert x-y\Vert^2$ overflows); other pairs keep the GEMM
/// value bit for bit.
///
/// ```
/// use ndarray::array;
/// use rfx_core::Kernel;
/// use rfx_kernels::GaussianKernel;
///
/// let k = GaussianKernel::new(2.0).unwrap();
/// let x = array![[0.0, 0.0], [3.0, 4.0]];
/// let g = k.gram(x.view(), x.view()).unwrap();
/// // ‖x0 − x1‖² = 25, so k = exp(−25/8); the diagonal is 1
/// assert!((g[[0, 1]] - (-25.0f64 / 8.0).exp()).abs() < 1e-15);
/// assert_eq!((g[[0, 0]], g[[1, 1]]), (1.0, 1.0));
/// assert!(GaussianKernel::new(0.0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianKernel {
    sigma: f64,
}

impl GaussianKernel {
    /// The kernel of width $\sigma$: finite and $> 0$, else [`RfxError::InvalidParameter`].
    pub fn new(sigma: f64) -> Result<Self> {
        if sigma.is_finite() && sigma > 0.0 {
            Ok(Self { sigma })
        } else {
            Err(RfxError::invalid("sigma", sigma, "a finite number > 0"))
        }
    }

    /// The width $\sigma$.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The coefficients $c_j = 1/(\sigma^{2j} j!)$, $j = 0, \dots, q$, of the Taylor series of the dot-product
    /// factor in $k(x, y) = e^{-\Vert x\Vert^2/(2\sigma^2)}\thinspace e^{-\Vert y\Vert^2/(2\sigma^2)}
    /// \sum_{j\ge 0} c_j \langle x, y\rangle^j$ (the Gaussian as a dot-product kernel times norm factors:
    /// the Random Maclaurin and PolySketch features of the survey, Liu et al. 2021 §4, and of Ahle et al. 2020),
    /// each from the previous one by $c_j = c_{j-1}/(\sigma^2 j)$.
    ///
    /// ```
    /// use rfx_kernels::GaussianKernel;
    ///
    /// let k = GaussianKernel::new(2.0).unwrap();
    /// let c = k.taylor_coefficients(3);
    /// assert_eq!(c, vec![1.0, 1.0 / 4.0, 1.0 / (16.0 * 2.0), 1.0 / (64.0 * 6.0)]);
    /// ```
    pub fn taylor_coefficients(&self, q: usize) -> Vec<f64> {
        let mut c = Vec::with_capacity(q + 1);
        let mut v = 1.0;
        for j in 0..=q {
            if j > 0 {
                v /= self.sigma * self.sigma * j as f64;
            }
            c.push(v);
        }
        c
    }

    /// The norm factor $e^{-\Vert x\Vert^2/(2\sigma^2)}$ of the expansion in [`Self::taylor_coefficients`], for
    /// $\Vert x\Vert^2$ = `sq_norm`.
    #[inline]
    pub fn norm_factor(&self, sq_norm: f64) -> f64 {
        (-(0.5 / (self.sigma * self.sigma)) * sq_norm).exp()
    }

    /// $\exp(-d^2/(2\sigma^2))$ for a squared distance $d^2$.
    #[inline]
    fn of_sq_distance(&self, d2: f64) -> f64 {
        (-d2 / (2.0 * self.sigma * self.sigma)).exp()
    }
}

/// Largest relative error of a Gram entry accepted from the GEMM form before the pair is recomputed from the
/// difference of the rows.
const GEMM_RELATIVE_TOLERANCE: f64 = 1e-7;

/// Squared Euclidean norms of the rows.
fn sq_norms(x: ArrayView2<'_, f64>) -> Array1<f64> {
    x.map_axis(Axis(1), |r| r.dot(&r))
}

impl Kernel for GaussianKernel {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let d2: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
        self.of_sq_distance(d2)
    }

    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        rfx_core::check_gram_columns(x, y)?;
        let (xn, yn) = (sq_norms(x), sq_norms(y));
        let mut k = x.dot(&y.t());
        // Beyond this sum of squared norms the GEMM form's rounding error can move k (module docs).
        let reliable = GEMM_RELATIVE_TOLERANCE * self.sigma * self.sigma / (2.0 * f64::EPSILON);
        Zip::indexed(k.rows_mut())
            .and(&xn)
            .par_for_each(|i, mut row, &a| {
                Zip::indexed(&mut row).and(&yn).for_each(|j, v, &b| {
                    let d2 = a + b - 2.0 * *v;
                    *v = if d2.is_finite() && a + b <= reliable {
                        self.of_sq_distance(d2.max(0.0))
                    } else {
                        self.eval(x.row(i), y.row(j))
                    };
                });
            });
        Ok(k)
    }
}

/// The median heuristic for the Gaussian width: the median of the pairwise Euclidean distances
/// $\Vert x_i - x_j\Vert $, $i < j$, of the rows (the upper median, element $\lfloor N/2\rfloor$ of the $N$ sorted
/// distances; Schölkopf & Smola 2002; Gretton et al. 2012; the survey's §7 experiments). 1 when there are fewer
/// than two rows or the median is 0. Cost $O(n^2 d)$ time and $O(n^2)$ memory: pass a subset of the rows for
/// large $n$.
pub fn median_distance(x: ArrayView2<'_, f64>) -> f64 {
    let n = x.nrows();
    let mut d = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            d.push(
                x.row(i)
                    .iter()
                    .zip(x.row(j).iter())
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt(),
            );
        }
    }
    d.sort_by(f64::total_cmp);
    d.get(d.len() / 2)
        .copied()
        .filter(|&m| m > 0.0)
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array2, ArrayView1, ArrayView2};

    #[test]
    fn gram_by_gemm_matches_entrywise() {
        let x = array![
            [0.1, -0.3, 0.2, 0.4],
            [0.5, 0.1, -0.2, 0.0],
            [-0.4, 0.3, 0.3, 0.1]
        ];
        let y = array![[0.2, 0.2, -0.1, 0.3], [0.0, -0.5, 0.4, 0.1]];
        let k = GaussianKernel::new(0.7).unwrap();
        let g = k.gram(x.view(), y.view()).unwrap();
        for i in 0..3 {
            for j in 0..2 {
                assert!((g[[i, j]] - k.eval(x.row(i), y.row(j))).abs() < 1e-12);
            }
        }
        let d = k.gram(x.view(), x.view()).unwrap();
        assert!((0..3).all(|i| (d[[i, i]] - 1.0).abs() < 1e-12));
        assert!(k.gram(x.view(), y.slice(s![.., ..3])).is_err());
        assert!(GaussianKernel::new(f64::NAN).is_err() && GaussianKernel::new(-1.0).is_err());
    }

    /// The old GEMM form, for rows where it is reliable the gram must equal it bit for bit.
    fn gemm_form(
        k: &GaussianKernel,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
    ) -> Array2<f64> {
        let (xn, yn) = (sq_norms(x), sq_norms(y));
        let mut g = x.dot(&y.t());
        for ((i, j), v) in g.indexed_iter_mut() {
            *v = k.of_sq_distance((xn[i] + yn[j] - 2.0 * *v).max(0.0));
        }
        g
    }

    /// $\Vert x-y\Vert^2$ by the obviously correct route: halved differences (which cannot overflow), scaled
    /// by the largest one so no square over- or underflows, summed, and scaled back.
    fn slow_sq_distance(x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let h: Vec<f64> = x.iter().zip(y).map(|(a, b)| a / 2.0 - b / 2.0).collect();
        let s = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if s == 0.0 {
            return 0.0;
        }
        let t: f64 = h.iter().map(|v| (v / s).powi(2)).sum();
        4.0 * t * s * s
    }

    #[test]
    fn far_apart_and_huge_norm_pairs_match_the_slow_distance() {
        // norms beyond 1e154 overflow the GEMM form (k was 1 for points 1e160 apart); norms of 1e9 with
        // distance 1 cancel in it (k was 1 instead of exp(-1/2))
        let x = array![
            [1e160, 0.0],
            [2e160, 0.0],
            [-1e200, 1e200],
            [1e9, 0.0],
            [1e9 + 1.0, 0.0],
            [0.3, -0.2]
        ];
        for sigma in [1.0, 1e3] {
            let k = GaussianKernel::new(sigma).unwrap();
            let g = k.gram(x.view(), x.view()).unwrap();
            for i in 0..x.nrows() {
                for j in 0..x.nrows() {
                    let want =
                        (-slow_sq_distance(x.row(i), x.row(j)) / (2.0 * sigma * sigma)).exp();
                    // the direct sum has relative error ~ d eps in the exponent
                    let tol = 1e-12 * want.max(1e-300);
                    assert!(
                        (g[[i, j]] - want).abs() <= tol,
                        "sigma {sigma}, ({i}, {j}): {} vs {want}",
                        g[[i, j]]
                    );
                }
            }
        }
        let g = GaussianKernel::new(1.0)
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        assert_eq!(g[[0, 1]], 0.0);
        assert!((g[[3, 4]] - (-0.5f64).exp()).abs() < 1e-12);
    }

    #[test]
    fn ordinary_rows_keep_the_gemm_value_bit_for_bit() {
        let x = Array2::from_shape_fn((40, 7), |(i, j)| ((i * 7 + j) as f64 * 0.37).sin() * 3.0);
        let y = Array2::from_shape_fn((9, 7), |(i, j)| ((i * 5 + j) as f64 * 0.91).cos() * 30.0);
        for sigma in [0.1, 1.0, 25.0] {
            let k = GaussianKernel::new(sigma).unwrap();
            assert_eq!(
                k.gram(x.view(), y.view()).unwrap(),
                gemm_form(&k, x.view(), y.view())
            );
            assert_eq!(
                k.gram(x.view(), x.view()).unwrap(),
                gemm_form(&k, x.view(), x.view())
            );
        }
    }

    #[test]
    fn median_distance_of_a_line() {
        let x = array![[0.0], [1.0], [3.0]];
        // distances 1, 3, 2 -> median 2
        assert_eq!(median_distance(x.view()), 2.0);
        let g = GaussianKernel::new(1.0)
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        assert!((g[[0, 1]] - (-0.5f64).exp()).abs() < 1e-15);
        assert_eq!(g[[2, 2]], 1.0);
        // degenerate inputs fall back to 1
        assert_eq!(median_distance(array![[2.0]].view()), 1.0);
        assert_eq!(median_distance(array![[2.0], [2.0]].view()), 1.0);
    }
}
