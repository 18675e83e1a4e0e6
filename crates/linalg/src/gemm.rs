//! Dense products by faer's GEMM on the calling thread.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use ndarray::{ArrayView2, ArrayViewMut2};
use rfx_core::{Result, RfxError};

/// An ndarray view as a faer view of the same memory (any strides).
fn faer_ref<'a>(a: &ArrayView2<'a, f64>) -> MatRef<'a, f64> {
    let s = a.strides();
    // SAFETY: the view addresses `nrows × ncols` valid, initialised elements at these element strides for
    // lifetime 'a, and faer only reads through a MatRef.
    unsafe { MatRef::from_raw_parts(a.as_ptr(), a.nrows(), a.ncols(), s[0], s[1]) }
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
    let ((rows, cols), (rs, cs)) = (c.dim(), (c.strides()[0], c.strides()[1]));
    // SAFETY: the mutable view addresses `rows × cols` valid elements at these strides, exclusively borrowed
    // for this call; an ndarray view never aliases its own elements.
    let out = unsafe { MatMut::from_raw_parts_mut(c.as_mut_ptr(), rows, cols, rs, cs) };
    matmul(
        out,
        Accum::Replace,
        faer_ref(&a),
        faer_ref(&b).transpose(),
        1.0,
        Par::Seq,
    );
    Ok(())
}
