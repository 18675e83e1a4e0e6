//! Small dense helpers shared by the wrappers: argument checks, symmetrisation, diagonal shifts, norms.

use ndarray::{Array2, ArrayView1, ArrayView2};
use rfx_core::{Result, RfxError};
use std::os::raw::c_int;

/// `v` as a BLAS/LAPACK integer (LP64: at most $2^{31} - 1$), else [`RfxError::InvalidParameter`] naming `what`.
pub(crate) fn to_int(v: usize, what: &str) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| RfxError::invalid(what, v, "at most 2^31 - 1 (LP64 BLAS)"))
}

/// The order of the square matrix `a`, else [`RfxError::DimensionMismatch`].
pub(crate) fn check_square(a: &ArrayView2<'_, f64>, what: &str) -> Result<usize> {
    if a.nrows() != a.ncols() {
        return Err(RfxError::DimensionMismatch(format!(
            "{what}: matrix must be square, got {} x {}",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(a.nrows())
}

/// The entries of `row` as a slice: borrowed when the row is contiguous, else copied into `buf` (reused from
/// row to row, so a strided input costs a copy per row and no allocation after the first).
///
/// ```
/// let a = ndarray::array![[1.0, 2.0], [3.0, 4.0]];
/// let mut buf = Vec::new();
/// assert_eq!(rfx_linalg::row_as_slice(a.row(1), &mut buf), [3.0, 4.0]); // borrowed
/// assert_eq!(rfx_linalg::row_as_slice(a.column(1), &mut buf), [2.0, 4.0]); // copied
/// ```
pub fn row_as_slice<'a, 'r: 'a>(row: ArrayView1<'r, f64>, buf: &'a mut Vec<f64>) -> &'a [f64] {
    match row.to_slice() {
        Some(sl) => sl,
        None => {
            buf.clear();
            buf.extend(row.iter());
            buf
        }
    }
}

/// [`RfxError::Numerical`] when `a` has a NaN or an infinite entry (LAPACK would loop or return garbage).
pub fn check_finite(a: &ArrayView2<'_, f64>, what: &str) -> Result<()> {
    if a.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(RfxError::Numerical(format!(
            "{what}: input has non-finite entries"
        )))
    }
}

/// Copies the upper triangle into the lower one (row-major), making `a` exactly symmetric.
pub fn symmetrize_from_upper(a: &mut Array2<f64>) {
    let n = a.nrows();
    for i in 0..n {
        for j in 0..i {
            a[[i, j]] = a[[j, i]];
        }
    }
}

/// Replaces `a` by $(A + A^\top)/2$.
pub fn symmetrize(a: &mut Array2<f64>) {
    let n = a.nrows();
    for i in 0..n {
        for j in 0..i {
            let v = 0.5 * (a[[i, j]] + a[[j, i]]);
            a[[i, j]] = v;
            a[[j, i]] = v;
        }
    }
}

/// $PKP$ with $P = I_n - \frac1n\mathbf 1\mathbf 1^\top$: every row and column of a square matrix with its
/// mean removed, $K_{ij} - \bar K_{i\cdot} - \bar K_{\cdot j} + \bar K_{\cdot\cdot}$ (the centring of the
/// ternary-features paper's Theorem 1). An empty matrix gives an empty matrix.
pub fn center(k: ArrayView2<'_, f64>) -> Array2<f64> {
    let (r, c) = (k.nrows().max(1) as f64, k.ncols().max(1) as f64);
    let rm = k.sum_axis(ndarray::Axis(1)) / c;
    let cm = k.sum_axis(ndarray::Axis(0)) / r;
    let all = rm.sum() / r;
    Array2::from_shape_fn(k.dim(), |(i, j)| k[[i, j]] - rm[i] - cm[j] + all)
}

/// Adds `v` to the diagonal.
pub fn add_diag(a: &mut Array2<f64>, v: f64) {
    a.diag_mut().mapv_inplace(|d| d + v);
}

/// Makes `b` row-major contiguous (BLAS takes raw pointers).
pub(crate) fn ensure_standard<T: Clone>(b: &mut Array2<T>) {
    if !b.is_standard_layout() {
        *b = b.as_standard_layout().to_owned();
    }
}

/// Frobenius norm.
pub fn fro_norm(a: ArrayView2<'_, f64>) -> f64 {
    a.iter().map(|v| v * v).sum::<f64>().sqrt()
}
