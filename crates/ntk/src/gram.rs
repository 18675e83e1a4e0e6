//! Feature Gram matrices $\hat K = \Phi\Phi^\top$ ($n \times n$) for large feature dimensions $m$, without holding
//! the $n \times m$ feature matrix (the kernel-MSE experiment of Han et al. 2021, Fig. 2: $n = 10^4$ MNIST rows,
//! $m$ up to $6.5\cdot 10^5$).
//!
//! * [`GramAccumulator`]: $\hat K \mathrel{+}= Z Z^\top$ for column blocks $Z$ of the features (`dsyrk` into the upper
//!   triangle, [`rfx_solvers::linalg::gram_rows_add_upper`]), for maps whose features can be produced in column
//!   blocks (e.g. any map built in independent chunks).
//! * [`feature_gram`]: the exact $\Phi\Phi^\top$ of **one** fitted map under a memory budget, by row panels:
//!   features of a panel of $P$ rows are computed once ($P$ chosen so that two panels fit the budget),
//!   the diagonal tile by `dsyrk` and every later panel's tile by GEMM; later panels are recomputed (the map is
//!   deterministic once fitted, so this is exact). Cost: $n^2 m$ flops for the products plus
//!   $\lceil n/P\rceil(\lceil n/P\rceil+1)/2$ panel transforms ($\approx n/(2P)$ full transforms); with
//!   $P \ge n$ it is one transform and one `dsyrk`.
//! * [`chunked_gram`]: $\frac1C\sum_{c=1}^C \Phi_c\Phi_c^\top$ for $C$ independently fitted maps (each a
//!   $1/\sqrt C$-scaled chunk of a map of $C$ times their dimension). For arc-cosine features this is exactly a
//!   map of dimension $\sum_c m_c$; for Algorithm 1 with $L = 1$ it is unbiased with variance of the same
//!   order as one map of the total size; for $L \ge 2$ it has the (larger) bias of the chunk width, so prefer
//!   [`feature_gram`] there.

use ndarray::{s, Array2, ArrayView2};
use rfx_core::{FeatureMap, Result, RfxError};
use rfx_solvers::linalg::{gram_rows_add_upper, symmetrize_from_upper};

/// Accumulates $\sum_k Z_k Z_k^\top$ over column blocks $Z_k$ ($n \times b_k$) into an $n \times n$ matrix.
#[derive(Clone, Debug)]
pub struct GramAccumulator {
    k: Array2<f64>,
    columns: usize,
}

impl GramAccumulator {
    /// An empty $n \times n$ accumulator ($8n^2$ bytes).
    pub fn new(n: usize) -> Self {
        Self {
            k: Array2::zeros((n, n)),
            columns: 0,
        }
    }

    /// Adds $Z Z^\top$ for a block of feature columns (`z` is $n \times b$).
    pub fn add(&mut self, z: ArrayView2<'_, f64>) -> Result<()> {
        gram_rows_add_upper(z, &mut self.k)?;
        self.columns += z.ncols();
        Ok(())
    }

    /// Adds $s\,Z Z^\top$ (e.g. $s = 1/C$ for an average of chunks).
    pub fn add_scaled(&mut self, z: ArrayView2<'_, f64>, s: f64) -> Result<()> {
        if !(s.is_finite() && s >= 0.0) {
            return Err(RfxError::invalid("scale", s, "a finite number >= 0"));
        }
        let zs = z.mapv(|v| v * s.sqrt());
        self.add(zs.view())
    }

    /// Number of feature columns added so far.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The symmetric Gram matrix.
    pub fn finish(mut self) -> Array2<f64> {
        symmetrize_from_upper(&mut self.k);
        self.k
    }
}

/// The exact $\Phi\Phi^\top$ of a fitted map for the rows of `x`, holding at most two row panels of features
/// within `memory_budget` bytes (besides the $8n^2$-byte output); see the module docs.
pub fn feature_gram<M: FeatureMap + ?Sized>(
    map: &M,
    x: ArrayView2<'_, f64>,
    memory_budget: u64,
) -> Result<Array2<f64>> {
    map.check_input(x)?;
    let n = x.nrows();
    let m = map.dim().max(1) as u64;
    let panel = usize::try_from((memory_budget / (2 * 8 * m)).max(1))
        .unwrap_or(usize::MAX)
        .min(n.max(1));
    let mut k = Array2::<f64>::zeros((n, n));
    for a in (0..n).step_by(panel) {
        let a_end = (a + panel).min(n);
        let fa = map.transform(x.slice(s![a..a_end, ..]))?;
        let mut diag = Array2::zeros((a_end - a, a_end - a));
        gram_rows_add_upper(fa.view(), &mut diag)?;
        symmetrize_from_upper(&mut diag);
        k.slice_mut(s![a..a_end, a..a_end]).assign(&diag);
        for b in (a_end..n).step_by(panel) {
            let b_end = (b + panel).min(n);
            let fb = map.transform(x.slice(s![b..b_end, ..]))?;
            let mut tile = k.slice_mut(s![a..a_end, b..b_end]);
            ndarray::linalg::general_mat_mul(1.0, &fa, &fb.t(), 0.0, &mut tile);
            let t = tile.t().to_owned();
            k.slice_mut(s![b..b_end, a..a_end]).assign(&t);
        }
    }
    Ok(k)
}

/// $\frac1C\sum_{c<C}\Phi_c\Phi_c^\top$ for the rows of `x`, with `make(c)` fitting chunk $c$ (use independent RNG
/// streams, e.g. `rng_stream(seed, &format!("chunk={c}"))`). Holds one chunk's features at a time.
pub fn chunked_gram<M, F>(x: ArrayView2<'_, f64>, chunks: usize, mut make: F) -> Result<Array2<f64>>
where
    M: FeatureMap,
    F: FnMut(usize) -> Result<M>,
{
    if chunks == 0 {
        return Err(RfxError::invalid("chunks", chunks, "an integer >= 1"));
    }
    let mut acc = GramAccumulator::new(x.nrows());
    for c in 0..chunks {
        let map = make(c)?;
        let phi = map.transform(x)?;
        acc.add_scaled(phi.view(), 1.0 / chunks as f64)?;
    }
    Ok(acc.finish())
}
