//! Tensorized random projection (TRP; Meister, Sarlós & Woodruff 2019; random-features survey §6, Fig. 13).
//!
//! $$\mathrm{TRP}(x) = D^{-1/2}\thinspace(R_1x)\circ(R_2x)\circ\dots\circ(R_px) \in \mathbb R^D,$$
//! with $R_j \in \lbrace\pm1\rbrace^{D\times d}$ i.i.d. Rademacher and $\circ$ the entrywise product. Since
//! $\mathbb E[(R_jx)_k(R_jy)_k] = \langle x, y\rangle$ and the $R_j$ are independent,
//! $\mathbb E\langle \mathrm{TRP}(x), \mathrm{TRP}(y)\rangle = \langle x, y\rangle^p$: features of the homogeneous
//! polynomial kernel; append a constant $\sqrt c$ to $x$ for $(c + \langle x, y\rangle)^p$. Cost: $p$ GEMMs
//! ($O(pDd)$ per row).

use ndarray::{Array2, ArrayView2};
use rfx_core::{FeatureMap, Result, RfxRng};
use rfx_sampling::random::rademacher_matrix;

use crate::check_dim;

/// Parameters: `dim` = $D$ (default 1024), `degree` = $p$ (default 2).
#[derive(Clone, Debug)]
pub struct TrpParams {
    dim: usize,
    degree: usize,
}

impl TrpParams {
    /// Output dimension $D$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Degree $p \ge 1$.
    pub fn degree(mut self, p: usize) -> Self {
        self.degree = p;
        self
    }

    /// Draws $R_1, \dots, R_p$ for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<Trp> {
        check_dim("dim", self.dim)?;
        check_dim("degree", self.degree)?;
        check_dim("d", d)?;
        let r = (0..self.degree)
            .map(|_| rademacher_matrix(self.dim, d, rng))
            .collect();
        Ok(Trp { d, m: self.dim, r })
    }
}

/// A fitted tensorized random projection.
#[derive(Clone, Debug)]
pub struct Trp {
    d: usize,
    m: usize,
    r: Vec<Array2<f64>>,
}

impl Trp {
    /// Default parameters.
    pub fn params() -> TrpParams {
        TrpParams {
            dim: 1024,
            degree: 2,
        }
    }

    /// The degree $p$.
    pub fn degree(&self) -> usize {
        self.r.len()
    }
}

impl FeatureMap for Trp {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.m
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let mut out = x.dot(&self.r[0].t());
        for r in &self.r[1..] {
            out *= &x.dot(&r.t());
        }
        out *= 1.0 / (self.m as f64).sqrt();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::rng_stream;

    /// $\mathbb E\langle\mathrm{TRP}(x),\mathrm{TRP}(y)\rangle = \langle x,y\rangle^p$: Monte Carlo over 4000 maps,
    /// within 5 standard errors, for $p = 2, 3$; invalid parameters are errors.
    #[test]
    fn trp_is_unbiased_for_the_polynomial_kernel() {
        let x = ndarray::array![[0.3, -0.5, 0.8, 0.1], [0.6, 0.2, 0.4, -0.7]];
        let ip: f64 = x.row(0).dot(&x.row(1));
        let mut rng = rng_stream(0, "trp");
        for p in [2usize, 3] {
            let est: Vec<f64> = (0..4000)
                .map(|_| {
                    let m = Trp::params().dim(16).degree(p).fit(4, &mut rng).unwrap();
                    let z = m.transform(x.view()).unwrap();
                    z.row(0).dot(&z.row(1))
                })
                .collect();
            let r = est.len() as f64;
            let mean = est.iter().sum::<f64>() / r;
            let se = (est.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (r - 1.0) / r).sqrt();
            assert!(
                (mean - ip.powi(p as i32)).abs() < 5.0 * se,
                "p={p}: {mean} vs {}",
                ip.powi(p as i32)
            );
        }
        assert!(Trp::params().dim(0).fit(3, &mut rng).is_err());
        assert!(Trp::params().degree(0).fit(3, &mut rng).is_err());
    }
}
