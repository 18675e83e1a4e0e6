//! A constant input coordinate (a "bias") in front of any kernel or feature map: $x \mapsto \tilde x =
//! [x, \beta] \in \mathbb R^{d+1}$, so that $\tilde k(x, y) = k([x, \beta], [y, \beta])$.
//!
//! For a dot-product kernel in its norm form $k(x, y) = \Vert x\Vert\Vert y\Vert\thinspace\kappa(\langle x, y\rangle / (\Vert x\Vert\Vert y\Vert))$
//! — the depth-$L$ ReLU NTK $\Theta^{(L)}$ — this gives
//! $$\tilde\Theta(x, y) = \sqrt{\Vert x\Vert^2 + \beta^2}\thinspace\sqrt{\Vert y\Vert^2 + \beta^2}\thickspace
//!   K^{(L)}\negthinspace\left(\frac{\langle x, y\rangle + \beta^2}{\sqrt{\Vert x\Vert^2 + \beta^2}\thinspace\sqrt{\Vert y\Vert^2 + \beta^2}}\right),$$
//! the NTK of the same network whose first layer also has a bias, $W^{(1)}x + \beta b$ with $b \sim
//! \mathcal N(0, I)$ trained like the weights (deeper layers stay bias-free). The kernel without bias is
//! positively homogeneous, $\Theta(cx, y) = c\thinspace\Theta(x, y)$ for $c > 0$, so its predictors have a constant
//! sign along every ray from the origin; for $\beta > 0$ it is not. A translation-invariant kernel (the
//! Gaussian) is unchanged, $\Vert\tilde x - \tilde y\Vert = \Vert x - y\Vert$. A feature map $z$ of $k$ on
//! $\mathbb R^{d+1}$ gives $\tilde z(x) = z([x, \beta])$ with $\mathbb E\langle\tilde z(x), \tilde z(y)\rangle
//! = \tilde k(x, y)$ whenever $z$ is unbiased for $k$.

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2};

use crate::{check_gram_columns, FeatureMap, Kernel, Result, RfxError};

/// The rows of `x` with the constant column β appended ($n \times (d + 1)$), in the rows' type (`f64`, or
/// `f32` for [`FeatureMap::transform_f32`]).
pub fn append_bias<T: Copy>(x: ArrayView2<'_, T>, beta: T) -> Array2<T> {
    let (n, d) = x.dim();
    let mut out = Array2::from_elem((n, d + 1), beta);
    out.slice_mut(s![.., ..d]).assign(&x);
    out
}

/// A kernel or feature map applied to $[x, \beta]$ (module docs).
#[derive(Debug, Clone)]
pub struct WithBias<T> {
    inner: T,
    beta: f64,
}

impl<T> WithBias<T> {
    /// Wraps `inner` (a kernel on, or a map fitted for, inputs of dimension $d + 1$) with the bias
    /// $\beta \ge 0$ (finite); $\beta = 0$ is allowed and gives $k([x, 0], [y, 0])$, which for the kernels of
    /// rfx equals $k(x, y)$ (callers that need bit-identical output skip the wrapper instead).
    pub fn new(inner: T, beta: f64) -> Result<Self> {
        if !(beta.is_finite() && beta >= 0.0) {
            return Err(RfxError::invalid("bias", beta, "a finite number >= 0"));
        }
        Ok(WithBias { inner, beta })
    }

    /// The bias β.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The wrapped kernel or map.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<K: Kernel> Kernel for WithBias<K> {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        let aug = |v: ArrayView1<'_, f64>| -> Array1<f64> {
            v.iter()
                .copied()
                .chain(std::iter::once(self.beta))
                .collect()
        };
        self.inner.eval(aug(x).view(), aug(y).view())
    }

    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        check_gram_columns(x, y)?;
        let ax = append_bias(x, self.beta);
        // the same rows on both sides stay one array, so the inner kernel's symmetric path applies
        if x.as_ptr() == y.as_ptr() && x.dim() == y.dim() && x.strides() == y.strides() {
            return self.inner.gram(ax.view(), ax.view());
        }
        let ay = append_bias(y, self.beta);
        self.inner.gram(ax.view(), ay.view())
    }
}

impl<F: FeatureMap> FeatureMap for WithBias<F> {
    fn input_dim(&self) -> usize {
        self.inner.input_dim().saturating_sub(1)
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        self.inner.transform(append_bias(x, self.beta).view())
    }

    /// With an inner map that computes in `f32`, the rows $[x, \beta]$ in `f32` ($\beta$ rounded once);
    /// otherwise by way of `f64` ([`crate::transform_f32_via_f64`]).
    fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        if !self.inner.native_f32() {
            return crate::transform_f32_via_f64(self, x);
        }
        self.check_input_cols(x.ncols())?;
        self.inner
            .transform_f32(append_bias(x, self.beta as f32).view())
    }

    fn native_f32(&self) -> bool {
        self.inner.native_f32()
    }

    fn bits_per_feature(&self) -> f64 {
        self.inner.bits_per_feature()
    }

    fn feature_gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        self.check_input(y)?;
        let (ax, ay) = (append_bias(x, self.beta), append_bias(y, self.beta));
        self.inner.feature_gram(ax.view(), ay.view())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// $k(x, y) = \langle x, y\rangle$ and its identity feature map.
    struct Linear(usize);
    impl Kernel for Linear {
        fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
            x.dot(&y)
        }
    }
    impl FeatureMap for Linear {
        fn input_dim(&self) -> usize {
            self.0
        }
        fn dim(&self) -> usize {
            self.0
        }
        fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
            self.check_input(x)?;
            Ok(x.to_owned())
        }
    }

    #[test]
    fn bias_appends_a_constant_coordinate() {
        let x = array![[1.0, 2.0], [-3.0, 0.5]];
        let y = array![[0.0, 1.0]];
        assert_eq!(
            append_bias(x.view(), 2.0),
            array![[1.0, 2.0, 2.0], [-3.0, 0.5, 2.0]]
        );
        // linear kernel: <x, y> + beta^2, by entry, by Gram (both paths) and by features
        let k = WithBias::new(Linear(3), 2.0).unwrap();
        assert_eq!(k.eval(x.row(0), y.row(0)), 2.0 + 4.0);
        assert_eq!(k.gram(x.view(), y.view()).unwrap(), array![[6.0], [4.5]]);
        let g = k.gram(x.view(), x.view()).unwrap();
        assert_eq!(g, array![[9.0, 2.0], [2.0, 13.25]]);
        let z = k.transform(x.view()).unwrap();
        assert_eq!(z.dot(&z.t()), g);
        assert_eq!(FeatureMap::input_dim(&k), 2);
        assert!(k.transform(y.view().slice(ndarray::s![.., ..1])).is_err());
        assert!(k.gram(x.view(), array![[1.0]].view()).is_err());
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(WithBias::new(Linear(3), bad).is_err(), "{bad}");
        }
    }
}
