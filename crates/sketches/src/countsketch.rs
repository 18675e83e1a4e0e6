//! CountSketch (Charikar, Chen & Farach-Colton 2002; NTK random features, Eq. 7).
//!
//! $[\mathcal C(x)]\_k = \sum_{j : h(j) = k} s(j)\thinspace x_j$ with a hash $h : \[d\] \to \[m\]$ and signs
//! $s : \[d\] \to \lbrace\pm 1\rbrace$ stored as fully random lookup tables from the seeded RNG (so they are $k$-wise
//! independent for every $k$). $\mathbb E\langle \mathcal C x, \mathcal C y\rangle = \langle x, y\rangle$ and
//! $\operatorname{Var}\langle \mathcal C x, \mathcal C y\rangle = \frac1m\big(\Vert x\Vert^2\Vert y\Vert^2 + \langle x,y\rangle^2 - 2\sum_j x_j^2 y_j^2\big)$.
//! No $1/\sqrt m$ scaling. Cost $O(d)$ per row.

use crate::check_dim;
use ndarray::{Array2, ArrayView2, Axis, Zip};
use rand::Rng;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};

/// Parameters: `dim` = $m$ (default 1024).
#[derive(Clone, Debug)]
pub struct CountSketchParams {
    dim: usize,
}

impl CountSketchParams {
    /// Sketch dimension $m$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Draws $h$ and $s$ for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<CountSketch> {
        check_dim("dim", self.dim)?;
        check_dim("d", d)?;
        let hash = (0..d).map(|_| rng.gen_range(0..self.dim as u32)).collect();
        let sign = (0..d)
            .map(|_| if rng.gen::<bool>() { 1.0 } else { -1.0 })
            .collect();
        Ok(CountSketch {
            m: self.dim,
            hash,
            sign,
        })
    }
}

/// A fitted CountSketch $\mathbb R^d \to \mathbb R^m$.
#[derive(Clone, Debug)]
pub struct CountSketch {
    m: usize,
    hash: Vec<u32>,
    sign: Vec<f64>,
}

impl CountSketch {
    /// Parameters with the default `dim` 1024.
    pub fn params() -> CountSketchParams {
        CountSketchParams { dim: 1024 }
    }

    /// A CountSketch from explicit tables (`hash[j] < m`, `sign[j] = ±1`).
    pub fn from_tables(m: usize, hash: Vec<u32>, sign: Vec<f64>) -> Result<Self> {
        check_dim("dim", m)?;
        if hash.len() != sign.len() || hash.is_empty() {
            return Err(RfxError::DimensionMismatch(format!(
                "CountSketch tables of lengths {} and {}",
                hash.len(),
                sign.len()
            )));
        }
        if let Some(h) = hash.iter().find(|&&h| h as usize >= m) {
            return Err(RfxError::invalid(
                "hash",
                h,
                format!("values below m = {m}"),
            ));
        }
        if let Some(s) = sign.iter().find(|s| s.abs() != 1.0) {
            return Err(RfxError::invalid("sign", s, "±1"));
        }
        Ok(Self { m, hash, sign })
    }

    /// The hash table $h$.
    pub fn hash(&self) -> &[u32] {
        &self.hash
    }

    /// The sign table $s$.
    pub fn sign(&self) -> &[f64] {
        &self.sign
    }

    /// Writes $\mathcal C(x)$ into `out` (length $m$, overwritten); `x` has length $d$.
    #[inline]
    pub fn apply(&self, x: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for ((xv, &h), s) in x.iter().zip(&self.hash).zip(&self.sign) {
            out[h as usize] += s * xv;
        }
    }
}

impl FeatureMap for CountSketch {
    fn input_dim(&self) -> usize {
        self.hash.len()
    }

    fn dim(&self) -> usize {
        self.m
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let x = x.as_standard_layout();
        let mut out = Array2::zeros((x.nrows(), self.m));
        Zip::from(out.axis_iter_mut(Axis(0)))
            .and(x.axis_iter(Axis(0)))
            .par_for_each(|mut o, xr| {
                let o = o.as_slice_mut().expect("standard layout");
                self.apply(xr.as_slice().expect("standard layout"), o);
            });
        Ok(out)
    }
}
