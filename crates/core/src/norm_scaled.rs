//! A dot-product feature map lifted to the norm form of a homogeneous kernel.
//!
//! Kernels such as the depth-$L$ ReLU NTK have the form $k(x, y) = \Vert x\Vert\Vert y\Vert\thinspace\kappa(\langle\hat x, \hat y
//! \rangle)$ with $\hat x = x / \Vert x\Vert $ (Han et al. 2021, Eq. 5). A map $z$ with $\langle z(u), z(v)\rangle
//! \approx \kappa(\langle u, v\rangle)$ on the unit sphere gives $\tilde z(x) = \Vert x\Vert\thinspace z(\hat x)$ with
//! $\langle \tilde z(x), \tilde z(y)\rangle \approx k(x, y)$ (zero rows map to zero).

use ndarray::{Array2, ArrayView2, Axis};

use crate::{FeatureMap, Result};

/// $x \mapsto \Vert x\Vert\thinspace z(x / \Vert x\Vert)$ for a map $z$ of a dot-product function $\kappa$ (module docs).
#[derive(Debug, Clone)]
pub struct NormScaled<F>(pub F);

impl<F: FeatureMap> FeatureMap for NormScaled<F> {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let norms: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
        let mut unit = x.to_owned();
        for (mut row, &r) in unit.axis_iter_mut(Axis(0)).zip(&norms) {
            if r > 0.0 {
                row /= r;
            }
        }
        let mut z = self.0.transform(unit.view())?;
        for (mut row, &r) in z.axis_iter_mut(Axis(0)).zip(&norms) {
            row *= r;
        }
        Ok(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    struct Identity(usize);
    impl FeatureMap for Identity {
        fn input_dim(&self) -> usize {
            self.0
        }
        fn dim(&self) -> usize {
            self.0
        }
        fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
            Ok(x.to_owned())
        }
    }

    /// Through the identity map (the linear kernel, which is homogeneous), $\Vert x\Vert\thinspace(x/\Vert x\Vert) = x$ up to
    /// rounding, and a zero row stays zero.
    #[test]
    fn the_identity_map_is_unchanged_by_the_norm_form() {
        let x = array![[3.0, 4.0], [0.0, 0.0], [-1e-3, 2e5]];
        let z = NormScaled(Identity(2)).transform(x.view()).unwrap();
        for (a, b) in z.iter().zip(x.iter()) {
            assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} vs {b}");
        }
    }
}
