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

    /// The features of `f32` rows, as `f32` (issue 26). Random features carry approximation errors of
    /// $10^{-3}$ and more at practical widths, far above `f32`'s unit roundoff $u = 2^{-24} \approx 6\cdot
    /// 10^{-8}$; computing in `f32` halves the memory traffic and doubles the SIMD width of the GEMM.
    ///
    /// The default ([`transform_f32_via_f64`]) widens the rows exactly, runs [`FeatureMap::transform`] and
    /// rounds the result once: `f64` numbers at `f64` speed. Maps whose work is one GEMM followed by an
    /// elementwise function override it with an `f32` GEMM and return `true` from
    /// [`FeatureMap::native_f32`]; each such map bounds its `f32`-vs-`f64` difference in a test.
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        transform_f32_via_f64(self, x)
    }

    /// Whether [`FeatureMap::transform_f32`] computes in `f32` (`false`: it rounds the `f64` features).
    fn native_f32(&self) -> bool {
        false
    }

    /// Checks that `x` has the fitted input dimension; for use at the top of [`FeatureMap::transform`].
    fn check_input(&self, x: ArrayView2<'_, f64>) -> Result<()> {
        self.check_input_cols(x.ncols())
    }

    /// Checks that rows of `ncols` columns have the fitted input dimension (for inputs of any float type).
    fn check_input_cols(&self, ncols: usize) -> Result<()> {
        if ncols == self.input_dim() {
            Ok(())
        } else {
            Err(RfxError::DimensionMismatch(format!(
                "feature map fitted for d = {} applied to data with d = {}",
                self.input_dim(),
                ncols
            )))
        }
    }
}

/// The relative forward-error bound of an `f32` product against the `f64` one, per entry of $XW$ with inner
/// length $d$: $|\tilde t_{ij} - t_{ij}| \le \beta_d S_{ij}$, where $\tilde t$ is the product computed in
/// `f32`, $t$ the one computed in `f64` and $S = |X|\thinspace|W|$ (entrywise absolute values), for `f32`
/// rows $X$ and `f64` weights $W$ rounded once to `f32`, with
/// $\beta_d = \gamma_{d+1}(2^{-24}) + \gamma_d(2^{-53})$ and $\gamma_k(u) = ku/(1 - ku)$ (Higham, *Accuracy and
/// Stability of Numerical Algorithms*, Eq. 3.5 and Lemma 3.1: the weights' rounding is one more factor
/// $(1 + \delta)$ per term). Any summation order and blocking of a BLAS GEMM satisfies it. The maps with an
/// `f32` path bound their features' difference by it in their tests.
pub fn f32_product_bound(d: usize) -> f64 {
    let gamma = |k: usize, u: f64| k as f64 * u / (1.0 - k as f64 * u);
    gamma(d + 1, f64::from(f32::EPSILON) / 2.0) + gamma(d, f64::EPSILON / 2.0)
}

/// [`FeatureMap::transform_f32`] by way of `f64`: the rows widened (exactly), [`FeatureMap::transform`], the
/// features rounded to `f32` (one rounding, relative error at most $2^{-24}$ per entry).
pub fn transform_f32_via_f64<F: FeatureMap + ?Sized>(
    map: &F,
    x: ArrayView2<'_, f32>,
) -> Result<Array2<f32>> {
    map.check_input_cols(x.ncols())?;
    let z = map.transform(x.mapv(f64::from).view())?;
    Ok(z.mapv(|v| v as f32))
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
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        (**self).transform_f32(x)
    }
    fn native_f32(&self) -> bool {
        (**self).native_f32()
    }
    fn bits_per_feature(&self) -> f64 {
        (**self).bits_per_feature()
    }
    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        (**self).feature_gram(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// The bound against the plainest `f32` product (a left-to-right loop, the summation order with the
    /// largest error constant) and against an `f32` GEMM, on rows with cancellation: every entry within
    /// $\beta_d |X||W|$ of the `f64` product, and the bound not vacuous (the worst entry uses more than a
    /// thousandth of it).
    #[test]
    fn f32_products_are_within_the_forward_error_bound() {
        let mut rng = crate::rng_stream(0, "f32-bound");
        let (n, d, m) = (30, 200, 40);
        let x32 = Array2::from_shape_fn((n, d), |_| rng.gen_range(-1.0f32..1.0));
        let w = Array2::from_shape_fn((d, m), |_| rng.gen_range(-1.0f64..1.0) * 3.0);
        let w32 = w.mapv(|v| v as f32);
        let x = x32.mapv(f64::from);
        let exact = x.dot(&w);
        let s = x.mapv(f64::abs).dot(&w.mapv(f64::abs));
        let gemm = x32.dot(&w32);
        let beta = f32_product_bound(d);
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..m {
                let mut acc = 0.0f32;
                for k in 0..d {
                    acc += x32[[i, k]] * w32[[k, j]];
                }
                for v in [acc, gemm[[i, j]]] {
                    let ratio = (f64::from(v) - exact[[i, j]]).abs() / (beta * s[[i, j]]);
                    assert!(ratio <= 1.0, "({i}, {j}): {ratio} of the bound");
                    worst = worst.max(ratio);
                }
            }
        }
        assert!(worst > 1e-3, "worst entry {worst} of the bound");
    }
}
