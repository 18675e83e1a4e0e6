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

    /// $\exp(-d^2/(2\sigma^2))$ for a squared distance $d^2$.
    #[inline]
    fn of_sq_distance(&self, d2: f64) -> f64 {
        (-d2 / (2.0 * self.sigma * self.sigma)).exp()
    }
}

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
        Zip::from(k.rows_mut())
            .and(&xn)
            .par_for_each(|mut row, &a| {
                Zip::from(&mut row)
                    .and(&yn)
                    .for_each(|v, &b| *v = self.of_sq_distance((a + b - 2.0 * *v).max(0.0)));
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
    use ndarray::{array, s};

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
