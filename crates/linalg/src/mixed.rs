//! Mixed precision: `f32` Gram and Cholesky factor with iterative refinement against the `f64` operator.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::solve::{solve_in_place_scratch, solve_in_place_with_conj};
use faer::linalg::matmul::matmul;
use faer::{Accum, Conj, MatMut, MatRef, Par};
use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{Result, RfxError};

use crate::cholesky::faer_llt_in_place;
use crate::dense::{ensure_standard, row_as_slice};
use crate::memory::{check_memory, DEFAULT_MEMORY_CAP};
use crate::syrk::DEFAULT_ROW_BLOCK;
use crate::vector::axpy;

/// Arithmetic of the $O(n^3)$ / $O(nm^2)$ parts of the ridge and KRR solvers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// Everything in `f64` (default; results as before this option existed).
    #[default]
    F64,
    /// The Gram of the features ($Z^\top Z$, ridge) and the Cholesky factor in `f32` (twice the BLAS rate and
    /// half the memory traffic), then iterative refinement with the exact `f64` operator until the
    /// correction is at `f64` rounding level ([`solve_spd_refined`]); falls back to the `f64` path when the
    /// refinement does not converge (a system too ill-conditioned for an `f32` factor).
    MixedF32,
}

/// Rows of the output per task of [`gram_cols_f32_upper`]: fixed, so that every entry is computed by the same
/// kernel call shape (and rounds the same way) whatever the number of threads.
const F32_TILE: usize = 256;

/// $Z^\top Z$ in `f32` ($m \times m$, upper triangle filled; below the diagonal only the diagonal tiles' lower
/// parts hold values, and [`CholeskyF32::factor_upper`] does not read them), accumulated over blocks of
/// [`DEFAULT_ROW_BLOCK`] rows of an `f32` copy of $Z$.
///
/// Each block's product is split into fixed tiles of 256 output rows $I$ — $C_{I, J} \mathrel{+}= Z_{:,I}^\top
/// Z_{:,J}$ for the columns $J \ge I$ — computed in parallel on the rayon pool, each by faer's single-threaded
/// GEMM (`Par::Seq`; faer's f32 GEMM measured 1.9× the system OpenBLAS's on one core, `benches/backend.rs`):
/// bit-for-bit the same for any thread count. About $n m^2$ flops.
pub fn gram_cols_f32_upper(z: ArrayView2<'_, f64>) -> Result<Array2<f32>> {
    Ok(gram_f32_pass(z, None)?.0)
}

/// [`gram_cols_f32_upper`] and $Z^\top Y$ (in `f64`) from one pass over $Z$: while a block of rows is copied to
/// `f32` (the Gram's input), each row $z_i$ is checked to be finite and added into $Z^\top Y \mathrel{+}= z_i
/// y_i^\top$, so the right-hand side of the normal equations costs no second read of $Z$ from memory.
///
/// The sum runs over fixed chunks of 256 rows in parallel, each from zero in row order ([`axpy`]: no fused
/// multiply-add), and the chunks' sums are added in order: the same bits for any thread count and on every
/// x86-64 CPU. Rounding: each entry is a sum of $n$ products in a tree of depth at most $n/256 + 256$,
/// within $\gamma_{n/256+256}\thinspace |Z|^\top |Y|$ of the exact sum (Higham, *Accuracy and Stability*, §4.2).
///
/// # Errors
/// [`RfxError::Numerical`] naming the first row of $Z$ (or $Y$) with a NaN or an infinite entry;
/// [`RfxError::DimensionMismatch`] when $Y$'s row count is not $Z$'s; the memory cap as
/// [`gram_cols_f32_upper`].
pub fn gram_cols_f32_upper_rhs(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
) -> Result<(Array2<f32>, Array2<f64>)> {
    if y.nrows() != z.nrows() {
        return Err(RfxError::DimensionMismatch(format!(
            "features have {} rows, targets {}",
            z.nrows(),
            y.nrows()
        )));
    }
    if let Some(i) = y
        .rows()
        .into_iter()
        .position(|r| !r.iter().all(|v| v.is_finite()))
    {
        return Err(RfxError::Numerical(format!(
            "targets: row {i} has a non-finite entry"
        )));
    }
    let (g, zty) = gram_f32_pass(z, Some(y))?;
    Ok((g, zty.expect("asked for")))
}

/// Rows per task of the fused copy (and $Z^\top Y$) of [`gram_cols_f32_upper_rhs`]: fixed, so that the sum's
/// order does not depend on the thread count.
const PASS_CHUNK: usize = 256;

/// The pass of [`gram_cols_f32_upper`]; with `y`, also $Z^\top Y$ and the finiteness check of $Z$.
fn gram_f32_pass(
    z: ArrayView2<'_, f64>,
    y: Option<ArrayView2<'_, f64>>,
) -> Result<(Array2<f32>, Option<Array2<f64>>)> {
    let (n, m) = z.dim();
    let k = y.map_or(0, |y| y.ncols());
    let rows = DEFAULT_ROW_BLOCK.min(n);
    check_memory(
        "f32 Gram",
        4 * (m as u64 * m as u64 + rows as u64 * m as u64)
            + 8 * (k as u64 * m as u64) * (1 + (rows / PASS_CHUNK + 1) as u64),
        DEFAULT_MEMORY_CAP,
    )?;
    let mut c = Array2::<f32>::zeros((m, m));
    // Z^T Y transposed (k x m: each output's sum is one contiguous row for axpy)
    let mut zty_t = y.map(|_| Array2::<f64>::zeros((k, m)));
    if n == 0 || m == 0 {
        return Ok((
            c,
            zty_t.map(|t| t.reversed_axes().as_standard_layout().into_owned()),
        ));
    }
    let mut block = Array2::<f32>::zeros((rows, m));
    for (b, start) in (0..n).step_by(DEFAULT_ROW_BLOCK).enumerate() {
        let end = (start + DEFAULT_ROW_BLOCK).min(n);
        let nb = end - start;
        let partials: Vec<std::result::Result<Option<Array2<f64>>, usize>> = block
            .slice_mut(s![..nb, ..])
            .axis_chunks_iter_mut(Axis(0), PASS_CHUNK)
            .into_par_iter()
            .enumerate()
            .map(|(t, mut to)| {
                let r0 = start + t * PASS_CHUNK;
                let mut acc = y.map(|_| Array2::<f64>::zeros((k, m)));
                let mut buf = Vec::new();
                for (i, mut to_row) in to.axis_iter_mut(Axis(0)).enumerate() {
                    let from = row_as_slice(z.row(r0 + i), &mut buf);
                    let finite = round_to_f32(
                        to_row.as_slice_mut().expect("rows of a standard array"),
                        from,
                    );
                    if let (Some(acc), Some(y)) = (acc.as_mut(), y) {
                        if !finite {
                            return Err(r0 + i);
                        }
                        for (mut out, &yc) in acc.axis_iter_mut(Axis(0)).zip(y.row(r0 + i)) {
                            axpy(
                                yc,
                                from,
                                out.as_slice_mut().expect("rows of a standard array"),
                            );
                        }
                    }
                }
                Ok(acc)
            })
            .collect();
        if let Some(total) = zty_t.as_mut() {
            for p in partials {
                match p {
                    Err(row) => {
                        return Err(RfxError::Numerical(format!(
                            "features: row {row} has a non-finite entry"
                        )))
                    }
                    Ok(p) => *total += &p.expect("a partial sum per chunk"),
                }
            }
        }
        let zb = block.slice(s![..nb, ..]);
        let zf = MatRef::from_row_major_slice(
            zb.to_slice().expect("leading rows of a standard array"),
            nb,
            m,
        );
        let accum = if b == 0 { Accum::Replace } else { Accum::Add };
        c.axis_chunks_iter_mut(Axis(0), F32_TILE)
            .into_par_iter()
            .enumerate()
            .for_each(|(t, mut tile)| {
                let i0 = t * F32_TILE;
                let r = tile.nrows();
                let out = MatMut::from_row_major_slice_mut(
                    tile.as_slice_mut().expect("rows of a standard array"),
                    r,
                    m,
                );
                matmul(
                    out.submatrix_mut(0, i0, r, m - i0),
                    accum,
                    zf.submatrix(0, i0, nb, r).transpose(),
                    zf.submatrix(0, i0, nb, m - i0),
                    1.0f32,
                    Par::Seq,
                );
            });
    }
    Ok((
        c,
        zty_t.map(|t| t.reversed_axes().as_standard_layout().into_owned()),
    ))
}

/// $A$ rounded to `f32` entry by entry, in parallel by rows, checking in the same pass that every entry is
/// finite (one read of $A$ where a check and a copy took two).
///
/// # Errors
/// [`RfxError::Numerical`] naming `what` and the first row with a NaN or an infinite entry.
pub fn to_f32_finite(a: ArrayView2<'_, f64>, what: &str) -> Result<Array2<f32>> {
    copy_f32(a, true)
        .map_err(|row| RfxError::Numerical(format!("{what}: row {row} has a non-finite entry")))
}

/// The copy of [`to_f32_finite`]; `Err(row)` for the first non-finite row when `check`.
fn copy_f32(a: ArrayView2<'_, f64>, check: bool) -> std::result::Result<Array2<f32>, usize> {
    let mut out = Array2::<f32>::zeros(a.dim());
    let bad = out
        .axis_iter_mut(Axis(0))
        .into_par_iter()
        .zip(a.axis_iter(Axis(0)))
        .enumerate()
        .map_init(Vec::new, |buf, (i, (mut to, from))| {
            let finite = round_to_f32(
                to.as_slice_mut().expect("rows of a standard array"),
                row_as_slice(from, buf),
            );
            (check && !finite).then_some(i)
        })
        .flatten()
        .min();
    match bad {
        Some(row) => Err(row),
        None => Ok(out),
    }
}

/// `to[j] = from[j] as f32` (rounded to nearest); whether every `from[j]` is finite.
fn round_to_f32(to: &mut [f32], from: &[f64]) -> bool {
    let mut finite = true;
    for (t, &f) in to.iter_mut().zip(from) {
        finite &= f.is_finite();
        *t = f as f32;
    }
    finite
}

/// A Cholesky factor in `f32` (faer's, one thread: 1.6× the system OpenBLAS's `spotrf` on one core in
/// `benches/backend.rs`), used as the preconditioner of [`solve_spd_refined`].
#[derive(Clone, Debug)]
pub struct CholeskyF32 {
    /// Column-major (read as such by faer): the lower triangle holds $L$, $A = L L^\top$ (the strict upper
    /// triangle is never read).
    l: Array2<f32>,
}

impl CholeskyF32 {
    /// Factors a symmetric matrix given by its **upper** triangle (row-major), in place.
    pub fn factor_upper(mut a: Array2<f32>) -> Result<Self> {
        let n = a.nrows();
        if a.ncols() != n {
            return Err(RfxError::DimensionMismatch(format!(
                "cholesky (f32): {:?} is not square",
                a.dim()
            )));
        }
        ensure_standard(&mut a);
        if n > 0 {
            // The row-major upper triangle read column-major is the lower triangle, which faer factors.
            let buf = a.as_slice_mut().expect("standard layout");
            faer_llt_in_place(MatMut::from_column_major_slice_mut(buf, n, n))
                .map_err(|e| RfxError::Numerical(format!("cholesky (f32): {e:?} (n = {n})")))?;
        }
        Ok(CholeskyF32 { l: a })
    }

    /// Factors $A$ (`f64`, symmetric; its upper triangle is read) rounded to `f32` (the copy in parallel by
    /// rows, [`to_f32_finite`] without its check).
    pub fn factor_f64(a: ArrayView2<'_, f64>) -> Result<Self> {
        Self::factor_upper(copy_f32(a, false).expect("no check, no error"))
    }

    /// $A^{-1} B$ in `f32` arithmetic, returned in `f64`.
    pub fn solve(&self, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let n = self.l.nrows();
        let (rows, cols) = b.dim();
        if rows != n {
            return Err(RfxError::DimensionMismatch(format!(
                "cholesky (f32) of order {n}, right-hand side has {rows} rows"
            )));
        }
        if cols == 0 || n == 0 {
            return Ok(Array2::zeros((rows, cols)));
        }
        let mut x = b.mapv(|v| v as f32);
        let l = MatRef::from_column_major_slice(self.l.as_slice().expect("standard layout"), n, n);
        let rhs =
            MatMut::from_row_major_slice_mut(x.as_slice_mut().expect("standard layout"), n, cols);
        let mut mem = MemBuffer::new(solve_in_place_scratch::<f32>(n, cols, Par::Seq));
        solve_in_place_with_conj(l, Conj::No, rhs, Par::Seq, MemStack::new(&mut mem));
        Ok(x.mapv(|v| v as f64))
    }
}

/// Solves $A X = B$ for a symmetric positive definite $A$ given as the `f64` operator `apply` ($V \mapsto AV$)
/// and an `f32` Cholesky factor of (an approximation of) $A$: $X_0 = \tilde A^{-1}B$, then
/// $X_{k+1} = X_k + \tilde A^{-1}(B - A X_k)$ until the correction is below $8\varepsilon_{64}\Vert X\Vert_\infty$ or stops
/// shrinking. Returns `None` when it does not converge within 30 steps (the caller then uses `f64`).
pub fn solve_spd_refined(
    apply: impl Fn(ArrayView2<'_, f64>) -> Result<Array2<f64>>,
    factor: &CholeskyF32,
    b: ArrayView2<'_, f64>,
) -> Result<Option<Array2<f64>>> {
    let inf = |a: &Array2<f64>| a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut x = factor.solve(b)?;
    let mut last = f64::INFINITY;
    for _ in 0..30 {
        let r = &b - &apply(x.view())?;
        let dx = factor.solve(r.view())?;
        let step = inf(&dx);
        x += &dx;
        if !step.is_finite() {
            return Ok(None);
        }
        if step <= 8.0 * f64::EPSILON * inf(&x) {
            return Ok(Some(x));
        }
        if step > 0.5 * last {
            // stagnation: converged to rounding level if the step is tiny, otherwise diverging
            return Ok((step <= 1e-10 * inf(&x)).then_some(x));
        }
        last = step;
    }
    Ok(None)
}
