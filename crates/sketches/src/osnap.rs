//! OSNAP (Nelson & Nguyen 2013; NTK-sketching §3.4): a sparse embedding $T \in \mathbb R^{m \times d}$ whose every
//! column has exactly $s$ nonzeros $\pm 1/\sqrt s$, one in each of $s$ blocks of rows (block $k$ holds rows
//! $\lfloor km/s\rfloor, \dots, \lfloor (k+1)m/s\rfloor - 1$), at a uniform row of the block with a Rademacher sign;
//! $s = 1$ is CountSketch. $\mathbb E\langle Tx, Ty\rangle = \langle x, y\rangle$. Cost $O(s \cdot \mathrm{nnz}(x))$ per row.

use crate::check_dim;
use ndarray::{Array2, ArrayView2, Axis, Zip};
use rand::Rng;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};

/// Parameters: `dim` = $m$ (default 1024), `sparsity` = $s$ (default 4; $1 \le s \le m$).
#[derive(Clone, Debug)]
pub struct OsnapParams {
    dim: usize,
    sparsity: usize,
}

impl OsnapParams {
    /// Sketch dimension $m$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Nonzeros per column $s$.
    pub fn sparsity(mut self, s: usize) -> Self {
        self.sparsity = s;
        self
    }

    /// Draws the rows and signs for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<Osnap> {
        check_dim("dim", self.dim)?;
        check_dim("d", d)?;
        if self.sparsity == 0 || self.sparsity > self.dim {
            return Err(RfxError::invalid(
                "sparsity",
                self.sparsity,
                format!("an integer in 1..={}", self.dim),
            ));
        }
        let (m, s) = (self.dim, self.sparsity);
        let mut rows = Vec::with_capacity(d * s);
        let mut signs = Vec::with_capacity(d * s);
        let val = 1.0 / (s as f64).sqrt();
        for _ in 0..d {
            for k in 0..s {
                let (lo, hi) = (k * m / s, (k + 1) * m / s);
                rows.push(rng.gen_range(lo..hi) as u32);
                signs.push(if rng.gen::<bool>() { val } else { -val });
            }
        }
        Ok(Osnap {
            d,
            m,
            s,
            rows,
            signs,
        })
    }
}

/// A fitted OSNAP sketch.
#[derive(Clone, Debug)]
pub struct Osnap {
    d: usize,
    m: usize,
    s: usize,
    rows: Vec<u32>,
    signs: Vec<f64>,
}

impl Osnap {
    /// Parameters with the defaults `dim` 1024, `sparsity` 4.
    pub fn params() -> OsnapParams {
        OsnapParams {
            dim: 1024,
            sparsity: 4,
        }
    }

    /// Nonzeros per column $s$.
    pub fn sparsity(&self) -> usize {
        self.s
    }

    /// Writes $Tx$ into `out` (length $m$, overwritten). Zero entries of `x` are skipped.
    #[inline]
    pub fn apply(&self, x: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for (j, &xv) in x.iter().enumerate() {
            if xv == 0.0 {
                continue;
            }
            let r = &self.rows[j * self.s..(j + 1) * self.s];
            let sg = &self.signs[j * self.s..(j + 1) * self.s];
            for (&row, &sv) in r.iter().zip(sg) {
                out[row as usize] += sv * xv;
            }
        }
    }
}

impl FeatureMap for Osnap {
    fn input_dim(&self) -> usize {
        self.d
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
                self.apply(
                    xr.as_slice().expect("standard layout"),
                    o.as_slice_mut().expect("standard layout"),
                );
            });
        Ok(out)
    }
}
