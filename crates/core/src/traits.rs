//! The two abstractions every method implements.

use crate::error::{Result, RfxError};
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};

/// Checks that the two row sets of a Gram matrix $K(X, Y)$ have the same number of columns (input
/// dimension); the error names both.
pub fn check_gram_columns(x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<()> {
    if x.ncols() != y.ncols() {
        return Err(RfxError::DimensionMismatch(format!(
            "gram: x has {} columns, y has {}",
            x.ncols(),
            y.ncols()
        )));
    }
    Ok(())
}

/// An exact kernel $k : \mathbb{R}^d \times \mathbb{R}^d \to \mathbb{R}$.
pub trait Kernel: Send + Sync {
    /// $k(x, y)$ for two points.
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64;

    /// The Gram matrix $K_{ij} = k(x_i, y_j)$ for the rows of `x` (n × d) and `y` (m × d).
    ///
    /// The default evaluates [`Kernel::eval`] entry by entry; kernels with GEMM structure override it.
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        check_gram_columns(x, y)?;
        let mut k = Array2::zeros((x.nrows(), y.nrows()));
        for (i, mut row) in k.axis_iter_mut(Axis(0)).enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = self.eval(x.row(i), y.row(j));
            }
        }
        Ok(k)
    }
}

/// A fitted feature map $z : \mathbb{R}^d \to \mathbb{R}^m$ whose inner products approximate a kernel,
/// $\langle z(x), z(y)\rangle \approx k(x, y)$.
pub trait FeatureMap: Send + Sync {
    /// The input dimension $d$ the map was fitted for.
    fn input_dim(&self) -> usize;

    /// The output (feature) dimension $m$.
    fn dim(&self) -> usize;

    /// Maps the rows of `x` (n × d) to features (n × m).
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>>;

    /// Storage cost of one feature in bits (64 for `f64` features; quantized maps report less).
    fn bits_per_feature(&self) -> f64 {
        64.0
    }

    /// The Gram of the features, $\langle z(x_i), z(y_j)\rangle$ ($n_x \times n_y$): by default
    /// `transform(x) · transform(y)ᵀ`; maps that can compute it without materialising the features override
    /// it (rfx-ntk's Naive-RF and Grad-RF by kernel-level recursions, equal up to round-off).
    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        Ok(self.transform(x)?.dot(&self.transform(y)?.t()))
    }

    /// Checks that `x` has the fitted input dimension; for use at the top of [`FeatureMap::transform`].
    fn check_input(&self, x: ArrayView2<'_, f64>) -> Result<()> {
        if x.ncols() == self.input_dim() {
            Ok(())
        } else {
            Err(RfxError::DimensionMismatch(format!(
                "feature map fitted for d = {} applied to data with d = {}",
                self.input_dim(),
                x.ncols()
            )))
        }
    }
}

/// A boxed kernel is a kernel (so wrappers such as [`crate::WithBias`] take `Box<dyn Kernel>`).
impl<K: Kernel + ?Sized> Kernel for Box<K> {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        (**self).eval(x, y)
    }
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).gram(x, y)
    }
}

/// A boxed feature map is a feature map.
impl<F: FeatureMap + ?Sized> FeatureMap for Box<F> {
    fn input_dim(&self) -> usize {
        (**self).input_dim()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).transform(x)
    }
    fn bits_per_feature(&self) -> f64 {
        (**self).bits_per_feature()
    }
    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).feature_gram(x, y)
    }
}
