//! Gram matrices $Z^\top Z$ and $ZZ^\top$ by `dsyrk` on fixed row tiles, and streaming normal equations.

use cblas_sys::{cblas_dsyrk, CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_UPLO};
use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{Result, RfxError};

use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::matmul::triangular::{matmul as faer_triangular, BlockStructure};
use faer::{Accum, Par};

use crate::backend::{f64_backend, Backend};
use crate::dense::{check_finite, ensure_standard, symmetrize_from_upper, to_int};
use crate::gemm::{faer_mut, faer_ref};
use crate::threads::SingleBlasThread;

/// Rows of the output per task of [`syrk_upper`]. Fixed, so that every entry is computed by the same BLAS call
/// shape (and so rounds the same way) whatever the number of threads.
const SYRK_TILE: usize = 256;

/// `cblas_dsyrk` (one thread) into the upper triangle of the `n × n` tile at `c` (row stride `ldc`):
/// $C \leftarrow C + Z Z^\top$ for the `n × k` matrix $Z$ at `z`, stored row-major with row stride `ldz`
/// (`trans = false`) or as the row-major `k × n` matrix $Z^\top$ with row stride `ldz` (`trans = true`).
///
/// # Safety
/// `z` and `c` must address matrices of the stated shapes and strides.
unsafe fn dsyrk_tile(
    z: *const f64,
    ldz: usize,
    trans: bool,
    n: usize,
    k: usize,
    c: *mut f64,
    ldc: usize,
) -> Result<()> {
    let t = if trans {
        CBLAS_TRANSPOSE::CblasTrans
    } else {
        CBLAS_TRANSPOSE::CblasNoTrans
    };
    let (ni, ki) = (to_int(n, "n")?, to_int(k, "k")?);
    let (lz, lc) = (to_int(ldz, "lda")?, to_int(ldc, "ldc")?);
    cblas_dsyrk(
        CBLAS_LAYOUT::CblasRowMajor,
        CBLAS_UPLO::CblasUpper,
        t,
        ni,
        ki,
        1.0,
        z,
        lz,
        1.0,
        c,
        lc,
    );
    Ok(())
}

/// Rank-k update of the upper triangle of `c`: $C \leftarrow C + A^\top A$ (`cols = true`, $A$ is $k \times m$)
/// or $C \leftarrow C + A A^\top$ (`cols = false`). Rows of $C$ are split into fixed tiles of [`SYRK_TILE`]
/// rows, run in parallel on the rayon pool, each on one thread by the [`f64_backend`]: with OpenBLAS,
/// `dsyrk` for its diagonal block and one GEMM for the blocks right of it; with faer, one triangular product
/// (upper triangle of the diagonal block) and one GEMM. Bit-for-bit the same for any rayon or OpenBLAS thread
/// count.
fn syrk_upper(a: ArrayView2<'_, f64>, c: &mut Array2<f64>, cols: bool) -> Result<()> {
    let a = a.as_standard_layout();
    let k = a.ncols();
    // Z: the n x kk matrix whose rows are multiplied (Aᵀ for cols, else A)
    let z = if cols { a.t() } else { a.view() };
    let (n, kk) = z.dim();
    if n == 0 || kk == 0 {
        return Ok(());
    }
    ensure_standard(c);
    if f64_backend() == Backend::Faer {
        c.axis_chunks_iter_mut(Axis(0), SYRK_TILE)
            .into_par_iter()
            .enumerate()
            .for_each(|(t, mut rows)| {
                let i0 = t * SYRK_TILE;
                let i1 = i0 + rows.nrows();
                let zt = z.slice(s![i0..i1, ..]);
                let mut diag = rows.slice_mut(s![.., i0..i1]);
                faer_triangular(
                    faer_mut(&mut diag),
                    BlockStructure::TriangularUpper,
                    Accum::Add,
                    faer_ref(&zt),
                    BlockStructure::Rectangular,
                    faer_ref(&zt).transpose(),
                    BlockStructure::Rectangular,
                    1.0,
                    Par::Seq,
                );
                if i1 < n {
                    let rest = z.slice(s![i1.., ..]);
                    faer_matmul(
                        faer_mut(&mut rows.slice_mut(s![.., i1..])),
                        Accum::Add,
                        faer_ref(&zt),
                        faer_ref(&rest).transpose(),
                        1.0,
                        Par::Seq,
                    );
                }
            });
        return Ok(());
    }
    let _pin = SingleBlasThread::new();
    c.axis_chunks_iter_mut(Axis(0), SYRK_TILE)
        .into_par_iter()
        .enumerate()
        .try_for_each(|(t, mut rows)| -> Result<()> {
            let i0 = t * SYRK_TILE;
            let i1 = i0 + rows.nrows();
            let zt = z.slice(s![i0..i1, ..]);
            let mut diag = rows.slice_mut(s![.., i0..i1]);
            // SAFETY: A is contiguous row-major r x k, so the tile's rows of Z (columns i0..i1 of A when
            // `cols`, else rows i0..i1) start at `zt` with stride k; the diagonal block of C starts at `diag`
            // with row stride n.
            unsafe { dsyrk_tile(zt.as_ptr(), k, cols, i1 - i0, kk, diag.as_mut_ptr(), n)? };
            if i1 < n {
                general_mat_mul(
                    1.0,
                    &z.slice(s![i0..i1, ..]),
                    &z.slice(s![i1.., ..]).t(),
                    1.0,
                    &mut rows.slice_mut(s![.., i1..]),
                );
            }
            Ok(())
        })
}

/// Default number of rows per block when accumulating $Z^\top Z$.
pub const DEFAULT_ROW_BLOCK: usize = 8192;

/// $Z^\top Z$ ($m \times m$) for $Z$ of shape $n \times m$, accumulated over row blocks by `dsyrk`
/// ($n m^2$ flops).
pub fn gram_cols(z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let m = z.ncols();
    let mut c = Array2::zeros((m, m));
    for start in (0..z.nrows()).step_by(DEFAULT_ROW_BLOCK) {
        let end = (start + DEFAULT_ROW_BLOCK).min(z.nrows());
        syrk_upper(z.slice(s![start..end, ..]), &mut c, true)?;
    }
    symmetrize_from_upper(&mut c);
    Ok(c)
}

/// $Z Z^\top$ ($n \times n$) for $Z$ of shape $n \times m$ by `dsyrk` ($n^2 m$ flops).
pub fn gram_rows(z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let n = z.nrows();
    let mut c = Array2::zeros((n, n));
    syrk_upper(z, &mut c, false)?;
    symmetrize_from_upper(&mut c);
    Ok(c)
}

/// The upper triangle of $Z Z^\top$ ($Z$ of shape $n \times k$; the strict lower triangle is zero) by **one**
/// `cblas_dsyrk` call on one OpenBLAS thread: bit-for-bit the same at any thread count, but serial. It rounds
/// differently from [`gram_rows`] (whose tiles right of the diagonal are GEMMs), and it is the arithmetic the
/// exact zonal-kernel Grams of `rfx-gzk` (exact KRR, k-means objectives) were computed with, so they keep it.
pub fn gram_rows_upper_serial(z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    let z = z.as_standard_layout();
    let (n, k) = z.dim();
    let mut c = Array2::zeros((n, n));
    if n == 0 || k == 0 {
        return Ok(c);
    }
    let _pin = SingleBlasThread::new();
    // SAFETY: Z is contiguous row-major n x k (row stride k); C is contiguous n x n (row stride n).
    unsafe { dsyrk_tile(z.as_ptr(), k, false, n, k, c.as_mut_ptr(), n)? };
    Ok(c)
}

/// Adds $Z Z^\top$ ($Z$ of shape $n \times b$) into the **upper triangle** of the $n \times n$ matrix `c` by
/// `dsyrk` ($n^2 b$ flops), leaving the strict lower triangle untouched. Accumulating column blocks
/// $Z_1, Z_2, \dots$ of a feature matrix gives $\sum_k Z_k Z_k^\top = Z Z^\top$ without holding $Z$ whole; finish
/// with [`symmetrize_from_upper`].
pub fn gram_rows_add_upper(z: ArrayView2<'_, f64>, c: &mut Array2<f64>) -> Result<()> {
    if c.dim() != (z.nrows(), z.nrows()) {
        return Err(RfxError::DimensionMismatch(format!(
            "gram_rows_add_upper: Z has {} rows, C is {:?}",
            z.nrows(),
            c.dim()
        )));
    }
    syrk_upper(z, c, false)
}

/// Streaming normal equations of least squares on features: $G = Z^\top Z$ and $B = Z^\top Y$ accumulated
/// over row blocks $(Z_b, Y_b)$, so that features can be generated block by block and the full $n \times m$
/// feature matrix is never held twice (issue 3; `ntk-random-features.md` §3.9).
#[derive(Clone, Debug)]
pub struct NormalEquations {
    gram: Array2<f64>,
    zty: Array2<f64>,
    n: usize,
}

impl NormalEquations {
    /// Empty accumulator for $m$ features and $k$ outputs.
    pub fn new(m: usize, k: usize) -> Result<Self> {
        if m == 0 {
            return Err(RfxError::invalid("m", m, "at least 1 feature"));
        }
        if k == 0 {
            return Err(RfxError::invalid("k", k, "at least 1 output"));
        }
        Ok(NormalEquations {
            gram: Array2::zeros((m, m)),
            zty: Array2::zeros((m, k)),
            n: 0,
        })
    }

    /// Adds a block: $G \mathrel{+}= Z_b^\top Z_b$, $B \mathrel{+}= Z_b^\top Y_b$.
    pub fn push(&mut self, zb: ArrayView2<'_, f64>, yb: ArrayView2<'_, f64>) -> Result<()> {
        let (m, k) = self.zty.dim();
        if zb.ncols() != m || yb.ncols() != k || zb.nrows() != yb.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "normal equations for m = {m}, k = {k}: got Z {:?}, Y {:?}",
                zb.dim(),
                yb.dim()
            )));
        }
        check_finite(&zb, "features")?;
        check_finite(&yb, "targets")?;
        syrk_upper(zb, &mut self.gram, true)?;
        let _pin = SingleBlasThread::new();
        ndarray::linalg::general_mat_mul(1.0, &zb.t(), &yb, 1.0, &mut self.zty);
        self.n += zb.nrows();
        Ok(())
    }

    /// Adds all rows of $(Z, Y)$ in blocks of [`DEFAULT_ROW_BLOCK`].
    pub fn push_all(&mut self, z: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<()> {
        if z.nrows() != y.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "Z has {} rows, Y has {}",
                z.nrows(),
                y.nrows()
            )));
        }
        for start in (0..z.nrows()).step_by(DEFAULT_ROW_BLOCK) {
            let end = (start + DEFAULT_ROW_BLOCK).min(z.nrows());
            self.push(z.slice(s![start..end, ..]), y.slice(s![start..end, ..]))?;
        }
        Ok(())
    }

    /// Number of rows accumulated.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Returns $(Z^\top Z, Z^\top Y)$ with $Z^\top Z$ made exactly symmetric.
    pub fn finish(mut self) -> (Array2<f64>, Array2<f64>) {
        symmetrize_from_upper(&mut self.gram);
        (self.gram, self.zty)
    }
}
