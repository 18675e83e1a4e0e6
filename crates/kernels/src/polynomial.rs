//! The polynomial kernel $k(x, y) = (\langle x, y\rangle + c)^p$.
//!
//! A dot-product kernel with non-negative Taylor coefficients $\binom{p}{j}c^{p-j}$ for $c \ge 0$ (positive
//! definite on every $\mathbb R^d$, Schoenberg; the survey's Eq. 2 and §6.1 use $p = 2$, $c = 1$). Its sketches
//! (TensorSketch, TRP, Random Maclaurin) live in `rfx-sketches`; its generalized-zonal form in `rfx-gzk`.

use ndarray::{Array2, ArrayView1, ArrayView2};
use rfx_core::{Kernel, Result, RfxError};

/// Largest degree accepted by [`PolynomialKernel::new`] (a guard against absurd values).
pub const MAX_POLY_KERNEL_DEGREE: usize = 1000;

/// The polynomial kernel $(\langle x, y\rangle + c)^p$ with degree $p$ and offset $c \ge 0$ (module docs).
///
/// ```
/// use ndarray::array;
/// use rfx_core::Kernel;
/// use rfx_kernels::PolynomialKernel;
///
/// let k = PolynomialKernel::new(2, 1.0).unwrap();
/// let (x, y) = (array![1.0, 2.0], array![3.0, -1.0]);
/// assert_eq!(k.eval(x.view(), y.view()), 4.0); // (3 − 2 + 1)²
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolynomialKernel {
    degree: usize,
    c: f64,
}

impl PolynomialKernel {
    /// Degree $p \le$ [`MAX_POLY_KERNEL_DEGREE`] and offset $c$ (finite, $\ge 0$).
    pub fn new(degree: usize, c: f64) -> Result<Self> {
        if degree > MAX_POLY_KERNEL_DEGREE {
            return Err(RfxError::invalid(
                "degree",
                degree,
                format!("an integer in 0..={MAX_POLY_KERNEL_DEGREE}"),
            ));
        }
        if !(c.is_finite() && c >= 0.0) {
            return Err(RfxError::invalid("c", c, "a finite number >= 0"));
        }
        Ok(Self { degree, c })
    }

    /// The Taylor coefficients of $t \mapsto (t + c)^p$: $a_j = \binom{p}{j}c^{p-j}$, $j = 0, \dots, p$ (the
    /// dot-product form Random Maclaurin samples; exact integers for $c = 1$ and moderate $p$).
    pub fn taylor_coefficients(&self) -> Vec<f64> {
        let p = self.degree;
        let mut binom = 1.0f64;
        (0..=p)
            .map(|j| {
                let a = binom * self.c.powi((p - j) as i32);
                binom = binom * (p - j) as f64 / (j + 1) as f64;
                a
            })
            .collect()
    }

    /// $(t + c)^p$ by repeated multiplication ($p = 2$: one product, exactly $(t + c)(t + c)$).
    #[inline]
    fn of_inner(&self, t: f64) -> f64 {
        let b = t + self.c;
        (1..self.degree).fold(if self.degree == 0 { 1.0 } else { b }, |r, _| r * b)
    }
}

impl Kernel for PolynomialKernel {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.of_inner(x.dot(&y))
    }

    /// One GEMM for the inner products, then the map entrywise.
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        rfx_core::check_gram_columns(x, y)?;
        let mut k = x.dot(&y.t());
        k.par_mapv_inplace(|t| self.of_inner(t));
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// $\sum_j a_j t^j = (t + c)^p$ at a few points, and the exact binomials for $c = 1$.
    #[test]
    fn taylor_coefficients_sum_to_the_kernel() {
        assert_eq!(
            PolynomialKernel::new(2, 1.0).unwrap().taylor_coefficients(),
            vec![1.0, 2.0, 1.0]
        );
        assert_eq!(
            PolynomialKernel::new(4, 1.0).unwrap().taylor_coefficients(),
            vec![1.0, 4.0, 6.0, 4.0, 1.0]
        );
        for (p, c) in [(0usize, 2.0), (3, 0.5), (5, 0.0), (6, 1.5)] {
            let k = PolynomialKernel::new(p, c).unwrap();
            let a = k.taylor_coefficients();
            assert_eq!(a.len(), p + 1);
            for t in [-0.7, 0.0, 0.3, 1.2] {
                let series: f64 = a.iter().rev().fold(0.0, |acc, &aj| acc * t + aj);
                let exact = k.of_inner(t);
                assert!(
                    (series - exact).abs() <= 1e-12 * exact.abs().max(1.0),
                    "{p} {c} {t}"
                );
            }
        }
    }

    #[test]
    fn values_and_checks() {
        let x = array![[1.0, 2.0], [0.5, -1.0], [0.0, 0.0]];
        for (p, c) in [(0usize, 0.0), (1, 0.0), (2, 1.0), (3, 0.5)] {
            let k = PolynomialKernel::new(p, c).unwrap();
            let g = k.gram(x.view(), x.view()).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    let want = (x.row(i).dot(&x.row(j)) + c).powi(p as i32);
                    assert!((g[[i, j]] - want).abs() <= 1e-14 * want.abs().max(1.0));
                    assert_eq!(g[[i, j]], k.eval(x.row(i), x.row(j)));
                }
            }
        }
        assert!(PolynomialKernel::new(2, -1.0).is_err());
        assert!(PolynomialKernel::new(MAX_POLY_KERNEL_DEGREE + 1, 1.0).is_err());
    }
}
