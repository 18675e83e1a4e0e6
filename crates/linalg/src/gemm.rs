//! Dense products $AB^\top$: by faer's GEMM on the calling thread, or by the [`f64_backend`] on fixed tiles.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;
use rfx_core::{Result, RfxError};

use crate::backend::{f64_backend, Backend};
use crate::threads::SingleBlasThread;

/// An ndarray view as a faer view of the same memory (any strides).
pub(crate) fn faer_ref<'a>(a: &ArrayView2<'a, f64>) -> MatRef<'a, f64> {
    let s = a.strides();
    // SAFETY: the view addresses `nrows × ncols` valid, initialised elements at these element strides for
    // lifetime 'a, and faer only reads through a MatRef.
    unsafe { MatRef::from_raw_parts(a.as_ptr(), a.nrows(), a.ncols(), s[0], s[1]) }
}

/// A mutable ndarray view as a faer view of the same memory (any strides).
pub(crate) fn faer_mut<'a>(c: &'a mut ArrayViewMut2<'_, f64>) -> MatMut<'a, f64> {
    let ((rows, cols), (rs, cs)) = (c.dim(), (c.strides()[0], c.strides()[1]));
    // SAFETY: the view addresses `rows × cols` valid elements at these strides, exclusively borrowed for 'a;
    // an ndarray view never aliases its own elements.
    unsafe { MatMut::from_raw_parts_mut(c.as_mut_ptr(), rows, cols, rs, cs) }
}

/// $C \leftarrow A B^\top$ for $A$ ($r \times k$), $B$ ($c \times k$) and $C$ ($r \times c$), by faer's GEMM on
/// the calling thread (`Par::Seq`): the same arithmetic whatever runs beside it, so callers that split a
/// product into fixed tiles get results independent of the thread count. Chosen by measurement
/// (`benches/backend.rs`): faer's `f64` GEMM ran 1.8× the system OpenBLAS's on one core, where that
/// OpenBLAS is limited to its Haswell kernels (`OPENBLAS_CORETYPE=Haswell`).
///
/// ```
/// use ndarray::{array, Array2};
/// let a = array![[1.0, 2.0], [3.0, 4.0]];
/// let b = array![[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]];
/// let mut c = Array2::zeros((2, 3));
/// rfx_linalg::matmul_abt(a.view(), b.view(), c.view_mut()).unwrap();
/// assert_eq!(c, a.dot(&b.t()));
/// ```
pub fn matmul_abt(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    mut c: ArrayViewMut2<'_, f64>,
) -> Result<()> {
    if a.ncols() != b.ncols() || c.dim() != (a.nrows(), b.nrows()) {
        return Err(RfxError::DimensionMismatch(format!(
            "matmul_abt: A {:?}, B {:?}, C {:?}",
            a.dim(),
            b.dim(),
            c.dim()
        )));
    }
    matmul(
        faer_mut(&mut c),
        Accum::Replace,
        faer_ref(&a),
        faer_ref(&b).transpose(),
        1.0,
        Par::Seq,
    );
    Ok(())
}

/// Rows of the output per task of [`matmul_abt_par`] (fixed: the same kernel shapes for any thread count).
const ABT_TILE: usize = 256;

/// $A B^\top$ for $A$ ($r \times k$) and $B$ ($c \times k$) by the [`f64_backend`]: with OpenBLAS one `dgemm`
/// on one thread ([`SingleBlasThread`]; ndarray's `a.dot(&b.t())`), with faer fixed tiles of 256 output rows
/// in parallel on the rayon pool, each by [`matmul_abt`] on one thread. Bit-for-bit the same for any thread
/// count in both.
///
/// ```
/// use ndarray::array;
/// let a = array![[1.0, 2.0], [3.0, 4.0]];
/// let b = array![[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]];
/// assert_eq!(rfx_linalg::matmul_abt_par(a.view(), b.view()).unwrap(), a.dot(&b.t()));
/// ```
pub fn matmul_abt_par(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if a.ncols() != b.ncols() {
        return Err(RfxError::DimensionMismatch(format!(
            "matmul_abt_par: A {:?}, B {:?}",
            a.dim(),
            b.dim()
        )));
    }
    if f64_backend() == Backend::OpenBlas {
        let _pin = SingleBlasThread::new();
        return Ok(a.dot(&b.t()));
    }
    let mut c = Array2::<f64>::zeros((a.nrows(), b.nrows()));
    c.axis_chunks_iter_mut(Axis(0), ABT_TILE)
        .into_par_iter()
        .enumerate()
        .try_for_each(|(t, tile)| {
            let i0 = t * ABT_TILE;
            matmul_abt(a.slice(s![i0..i0 + tile.nrows(), ..]), b, tile)
        })?;
    Ok(c)
}
