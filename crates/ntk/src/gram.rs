//! Feature Gram matrices $\hat K = \Phi\Phi^\top$ ($n \times n$) for large feature dimensions $m$, without holding
//! the $n \times m$ feature matrix (the kernel-MSE experiment of Han et al. 2021, Fig. 2: $n = 10^4$ MNIST rows,
//! $m$ up to $6.5\cdot 10^5$).
//!
//! * [`GramAccumulator`]: $\hat K \mathrel{+}= Z Z^\top$ for column blocks $Z$ of the features (`dsyrk` into the upper
//!   triangle, [`rfx_linalg::gram_rows_add_upper`]), for maps whose features can be produced in column
//!   blocks (e.g. any map built in independent chunks).
//! * [`feature_gram`]: the exact $\Phi\Phi^\top$ of **one** fitted map under a memory budget, by row panels:
//!   features of a panel of $P$ rows are computed once ($P$ chosen so that two panels fit the budget),
//!   the diagonal tile by `dsyrk` and every later panel's tile by GEMM; later panels are recomputed (the map is
//!   deterministic once fitted, so this is exact). Cost: $n^2 m$ flops for the products plus
//!   $\lceil n/P\rceil(\lceil n/P\rceil+1)/2$ panel transforms ($\approx n/(2P)$ full transforms); with
//!   $P \ge n$ it is one transform and one `dsyrk`.
//! * [`feature_gram_error`]: $\Vert\Phi\Phi^\top - K\Vert_F^2$ and $\Vert K\Vert_F^2$ against a given $K$ by the same row panels,
//!   each tile of $\Phi\Phi^\top$ (at most $1024 \times 1024$, by GEMM) compared with $K$ as soon as it is
//!   formed: the same $n^2 m$ flops as [`feature_gram`] without its $n \times n$ output, its symmetrisation
//!   and a second pass over $n^2$ entries (which dominate for small $m$).
//! * [`kernel_gram_error`]: the same sums for a map's kernel-level Gram ([`FeatureMap::feature_gram`]) on
//!   pairs of row blocks, never holding an $n \times n$ matrix.
//! * [`chunked_gram`]: $\frac1C\sum_{c=1}^C \Phi_c\Phi_c^\top$ for $C$ independently fitted maps (each a
//!   $1/\sqrt C$-scaled chunk of a map of $C$ times their dimension). For arc-cosine features this is exactly a
//!   map of dimension $\sum_c m_c$; for Algorithm 1 with $L = 1$ it is unbiased with variance of the same
//!   order as one map of the total size; for $L \ge 2$ it has the (larger) bias of the chunk width, so prefer
//!   [`feature_gram`] there.

use ndarray::{s, Array2, ArrayView2};
use rfx_core::{FeatureMap, Result, RfxError};
use rfx_linalg::{gram_rows_add_upper, matmul_abt, symmetrize_from_upper};

/// Rows per side of the tiles [`feature_gram_error`] forms (8 MiB of doubles, cache-sized).
const ERROR_TILE: usize = 1024;

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

    /// Adds $s\thinspace Z Z^\top$ (e.g. $s = 1/C$ for an average of chunks).
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

/// Visits the row-panel pairs $(a, b)$, $b \ge a$, of the features of `map` on the rows of `x`, calling
/// `f(Φ_a, a, Φ_b, b)` with each panel's features and first row (on the diagonal $b = a$ and $Φ_b$ is $Φ_a$):
/// panels of $P$ rows such that two fit in `memory_budget` bytes; panel $a$ is transformed once and every later
/// panel again for each earlier one (the map is deterministic once fitted).
fn for_each_panel_pair<M: FeatureMap + ?Sized>(
    map: &M,
    x: ArrayView2<'_, f64>,
    memory_budget: u64,
    mut f: impl FnMut(&Array2<f64>, usize, &Array2<f64>, usize) -> Result<()>,
) -> Result<()> {
    map.check_input(x)?;
    let n = x.nrows();
    let m = map.dim().max(1) as u64;
    let panel = usize::try_from((memory_budget / (2 * 8 * m)).max(1))
        .unwrap_or(usize::MAX)
        .min(n.max(1));
    for a in (0..n).step_by(panel) {
        let a_end = (a + panel).min(n);
        let fa = map.transform(x.slice(s![a..a_end, ..]))?;
        f(&fa, a, &fa, a)?;
        for b in (a_end..n).step_by(panel) {
            let fb = map.transform(x.slice(s![b..(b + panel).min(n), ..]))?;
            f(&fa, a, &fb, b)?;
        }
    }
    Ok(())
}

/// The exact $\Phi\Phi^\top$ of a fitted map for the rows of `x`, holding at most two row panels of features
/// within `memory_budget` bytes (besides the $8n^2$-byte output); see the module docs.
pub fn feature_gram<M: FeatureMap + ?Sized>(
    map: &M,
    x: ArrayView2<'_, f64>,
    memory_budget: u64,
) -> Result<Array2<f64>> {
    let n = x.nrows();
    let mut k = Array2::<f64>::zeros((n, n));
    for_each_panel_pair(map, x, memory_budget, |fa, a, fb, b| {
        let (a_end, b_end) = (a + fa.nrows(), b + fb.nrows());
        if a == b {
            let mut diag = Array2::zeros((fa.nrows(), fa.nrows()));
            gram_rows_add_upper(fa.view(), &mut diag)?;
            symmetrize_from_upper(&mut diag);
            k.slice_mut(s![a..a_end, a..a_end]).assign(&diag);
        } else {
            let mut tile = k.slice_mut(s![a..a_end, b..b_end]);
            ndarray::linalg::general_mat_mul(1.0, fa, &fb.t(), 0.0, &mut tile);
            let t = tile.t().to_owned();
            k.slice_mut(s![b..b_end, a..a_end]).assign(&t);
        }
        Ok(())
    })?;
    Ok(k)
}

/// $\big(\Vert\Phi\Phi^\top - K\Vert_F^2,\ \Vert K\Vert_F^2\big)$ for the features $\Phi$ of a fitted map on the rows of `x`
/// and a symmetric $K$ ($n \times n$), without forming $\Phi\Phi^\top$: row panels as in [`feature_gram`]
/// (within `memory_budget` bytes), tiles of at most $1024 \times 1024$ by GEMM (faer's, one thread:
/// [`rfx_linalg::matmul_abt`]), each compared with $K$ at once;
/// only tiles on or above the diagonal are formed and those strictly above count twice (both sums use the
/// upper triangle of $K$ only). The tiles are visited in a fixed order, so the sums are deterministic.
pub fn feature_gram_error<M: FeatureMap + ?Sized>(
    map: &M,
    x: ArrayView2<'_, f64>,
    k: ArrayView2<'_, f64>,
    memory_budget: u64,
) -> Result<(f64, f64)> {
    let n = check_reference("feature_gram_error", x, k)?;
    let (mut err, mut norm) = (0.0, 0.0);
    let mut tile = Array2::<f64>::zeros((ERROR_TILE.min(n.max(1)), ERROR_TILE.min(n.max(1))));
    // adds the tile Fa[r] Fb[c]ᵀ against K at rows a0 + r, columns b0 + c (upper triangle only)
    let mut compare = |fa: &Array2<f64>, a0: usize, fb: &Array2<f64>, b0: usize| -> Result<()> {
        for r0 in (0..fa.nrows()).step_by(ERROR_TILE) {
            let r1 = (r0 + ERROR_TILE).min(fa.nrows());
            for c0 in (0..fb.nrows()).step_by(ERROR_TILE) {
                let c1 = (c0 + ERROR_TILE).min(fb.nrows());
                if b0 + c1 <= a0 + r0 {
                    continue; // entirely below the diagonal
                }
                let mut t = tile.slice_mut(s![..r1 - r0, ..c1 - c0]);
                matmul_abt(
                    fa.slice(s![r0..r1, ..]),
                    fb.slice(s![c0..c1, ..]),
                    t.view_mut(),
                )?;
                add_tile_errors(t.view(), k, a0 + r0, b0 + c0, &mut err, &mut norm);
            }
        }
        Ok(())
    };
    for_each_panel_pair(map, x, memory_budget, |fa, a, fb, b| compare(fa, a, fb, b))?;
    Ok((err, norm))
}

/// The number of rows $n$ of `x`, after checking that the reference Gram `k` is $n \times n$.
fn check_reference(what: &str, x: ArrayView2<'_, f64>, k: ArrayView2<'_, f64>) -> Result<usize> {
    let n = x.nrows();
    if k.dim() != (n, n) {
        return Err(RfxError::DimensionMismatch(format!(
            "{what}: {n} rows, reference Gram {:?}",
            k.dim()
        )));
    }
    Ok(n)
}

/// Adds the tile $T$ of $\hat K$ at rows $i_0 + r$, columns $j_0 + c$ against $K$ to the sums of
/// $\Vert\hat K - K\Vert_F^2$ and $\Vert K\Vert_F^2$: entries on or above the diagonal of the whole matrix only, those
/// strictly above counted twice, in row-major order.
fn add_tile_errors(
    t: ArrayView2<'_, f64>,
    k: ArrayView2<'_, f64>,
    i0: usize,
    j0: usize,
    err: &mut f64,
    norm: &mut f64,
) {
    for (i, row) in t.outer_iter().enumerate() {
        let gi = i0 + i;
        for (j, &v) in row.iter().enumerate() {
            let gj = j0 + j;
            if gj < gi {
                continue;
            }
            let e = k[[gi, gj]];
            let w = if gj == gi { 1.0 } else { 2.0 };
            *err += w * (v - e) * (v - e);
            *norm += w * e * e;
        }
    }
}

/// $\big(\Vert\hat K - K\Vert_F^2,\ \Vert K\Vert_F^2\big)$ for the Gram $\hat K$ that a map computes at the kernel
/// level ([`FeatureMap::feature_gram`], e.g. Naive-RF and Grad-RF, whose features are too wide to form) and a
/// symmetric $K$ ($n \times n$), without holding $\hat K$: `feature_gram` of row blocks of at most 1024 rows,
/// for the block pairs on and above the diagonal, each compared with $K$ at once (the convention of
/// [`feature_gram_error`]). Each block's share of the map's work is redone once per block pair (about
/// $n/2048$ times the whole in all), and no $n \times n$ intermediate of the map is ever formed.
pub fn kernel_gram_error<M: FeatureMap + ?Sized>(
    map: &M,
    x: ArrayView2<'_, f64>,
    k: ArrayView2<'_, f64>,
) -> Result<(f64, f64)> {
    let n = check_reference("kernel_gram_error", x, k)?;
    let (mut err, mut norm) = (0.0, 0.0);
    for a in (0..n).step_by(ERROR_TILE) {
        let xa = x.slice(s![a..(a + ERROR_TILE).min(n), ..]);
        for b in (a..n).step_by(ERROR_TILE) {
            let xb = x.slice(s![b..(b + ERROR_TILE).min(n), ..]);
            let t = map.feature_gram(xa, xb)?;
            add_tile_errors(t.view(), k, a, b, &mut err, &mut norm);
        }
    }
    Ok((err, norm))
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
