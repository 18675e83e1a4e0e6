//! Cholesky factorisation by LAPACK `dpotrf` (or faer's, under [`Backend::Faer`]) and triangular solves by
//! `cblas_dtrsm`.

use cblas_sys::{cblas_dtrsm, CBLAS_DIAG, CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_TRANSPOSE, CBLAS_UPLO};
use ndarray::{Array2, ArrayView2};
use rfx_core::{Result, RfxError};
use std::os::raw::{c_char, c_int};

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltParams,
};
use faer::{MatMut, Par, Spec};

use crate::backend::{f64_backend, Backend};
use crate::dense::{check_finite, check_square, ensure_standard, symmetrize, to_int};
use crate::threads::SingleBlasThread;

/// faer's blocked Cholesky $A = L L^\top$ on the calling thread (`Par::Seq`), in place: the logical lower
/// triangle of `a` is read and overwritten by $L$ (shared by the `f64` backend and [`crate::CholeskyF32`]).
pub(crate) fn faer_llt_in_place<T: faer::traits::ComplexField>(
    a: MatMut<'_, T>,
) -> std::result::Result<(), faer::linalg::cholesky::llt::factor::LltError> {
    let n = a.nrows();
    let params: Spec<LltParams, T> = Default::default();
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<T>(n, Par::Seq, params));
    cholesky_in_place(
        a,
        Default::default(),
        Par::Seq,
        MemStack::new(&mut mem),
        params,
    )
    .map(|_| ())
}

/// Cholesky factor $A = L L^\top$ of a symmetric positive-definite matrix ($L$ lower triangular, row-major,
/// strict upper triangle zero).
#[derive(Clone, Debug)]
pub struct Cholesky {
    l: Array2<f64>,
}

impl Cholesky {
    /// Factors `a` in place (only its lower triangle is read), by LAPACK `dpotrf` or, under
    /// [`Backend::Faer`] ([`f64_backend`]), by faer's blocked Cholesky on one thread. Fails with
    /// [`RfxError::Numerical`] if `a` is not numerically positive definite (`dpotrf`'s `info > 0`, or a
    /// non-positive pivot in faer).
    pub fn factor(a: Array2<f64>) -> Result<Self> {
        let n = check_square(&a.view(), "cholesky")?;
        check_finite(&a.view(), "cholesky")?;
        let mut a = if a.is_standard_layout() {
            a
        } else {
            a.as_standard_layout().to_owned()
        };
        if n > 0 && f64_backend() == Backend::Faer {
            let buf = a.as_slice_mut().expect("standard layout");
            // the row-major lower triangle, as faer's (logical) lower triangle
            faer_llt_in_place(MatMut::from_row_major_slice_mut(buf, n, n)).map_err(|_| {
                RfxError::Numerical(format!(
                    "cholesky: matrix is not positive definite (order {n}, faer)"
                ))
            })?;
        } else if n > 0 {
            let nn = to_int(n, "n")?;
            let mut info: c_int = 0;
            // Row-major lower L is column-major upper U = L^T, and A = U^T U.
            let uplo = b'U' as c_char;
            let buf = a.as_slice_mut().expect("standard layout");
            let _pin = SingleBlasThread::new(); // dpotrf's block size depends on the thread count
                                                // SAFETY: buf holds n*n f64 in contiguous storage, lda = n.
            unsafe { lapack_sys::dpotrf_(&uplo, &nn, buf.as_mut_ptr(), &nn, &mut info) };
            if info > 0 {
                return Err(RfxError::Numerical(format!(
                    "cholesky: matrix is not positive definite (leading minor {info} of {n})"
                )));
            } else if info < 0 {
                return Err(RfxError::Numerical(format!(
                    "cholesky: dpotrf argument {} invalid",
                    -info
                )));
            }
        }
        for (i, mut row) in a.rows_mut().into_iter().enumerate() {
            row.as_slice_mut().expect("standard layout")[i + 1..].fill(0.0);
        }
        Ok(Cholesky { l: a })
    }

    /// Factors a copy of `a`.
    pub fn factor_view(a: ArrayView2<'_, f64>) -> Result<Self> {
        Self::factor(a.to_owned())
    }

    /// The lower-triangular factor $L$.
    pub fn l(&self) -> &Array2<f64> {
        &self.l
    }

    /// Order $n$ of the factored matrix.
    pub fn n(&self) -> usize {
        self.l.nrows()
    }

    /// $\log\det A = 2 \sum_i \log L_{ii}$.
    pub fn log_det(&self) -> f64 {
        2.0 * self.l.diag().iter().map(|v| v.ln()).sum::<f64>()
    }

    fn check_rhs(&self, b: &Array2<f64>, side: &str) -> Result<()> {
        let len = if side == "left" { b.nrows() } else { b.ncols() };
        if len != self.n() {
            return Err(RfxError::DimensionMismatch(format!(
                "cholesky solve: factor is {} x {}, right-hand side is {} x {}",
                self.n(),
                self.n(),
                b.nrows(),
                b.ncols()
            )));
        }
        Ok(())
    }

    fn trsm(&self, b: &mut Array2<f64>, side: CBLAS_SIDE, trans: CBLAS_TRANSPOSE) -> Result<()> {
        let (rows, cols) = b.dim();
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let n = to_int(self.n(), "n")?;
        let (mi, ni) = (to_int(rows, "rows")?, to_int(cols, "cols")?);
        let ldb = ni;
        let bs = b.as_slice_mut().expect("standard layout");
        let _pin = SingleBlasThread::new();
        // SAFETY: row-major L (n x n, lda n) and B (rows x cols, ldb cols), both contiguous.
        unsafe {
            cblas_dtrsm(
                CBLAS_LAYOUT::CblasRowMajor,
                side,
                CBLAS_UPLO::CblasLower,
                trans,
                CBLAS_DIAG::CblasNonUnit,
                mi,
                ni,
                1.0,
                self.l.as_ptr(),
                n,
                bs.as_mut_ptr(),
                ldb,
            )
        };
        Ok(())
    }

    /// Overwrites `b` ($n \times k$) with $L^{-1} B$.
    pub fn solve_lower_inplace(&self, b: &mut Array2<f64>) -> Result<()> {
        self.check_rhs(b, "left")?;
        ensure_standard(b);
        self.trsm(b, CBLAS_SIDE::CblasLeft, CBLAS_TRANSPOSE::CblasNoTrans)
    }

    /// Overwrites `b` ($n \times k$) with $A^{-1} B = L^{-\top} L^{-1} B$.
    pub fn solve_inplace(&self, b: &mut Array2<f64>) -> Result<()> {
        self.check_rhs(b, "left")?;
        ensure_standard(b);
        self.trsm(b, CBLAS_SIDE::CblasLeft, CBLAS_TRANSPOSE::CblasNoTrans)?;
        self.trsm(b, CBLAS_SIDE::CblasLeft, CBLAS_TRANSPOSE::CblasTrans)
    }

    /// $A^{-1} B$ for $B$ of shape $n \times k$.
    pub fn solve(&self, b: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut x = b.as_standard_layout().to_owned();
        self.solve_inplace(&mut x)?;
        Ok(x)
    }

    /// The congruence $L^{-1} S L^{-\top}$ of a symmetric $S$ (two triangular solves, no inverse formed);
    /// the result is symmetrized.
    pub fn whiten(&self, s: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let mut x = s.as_standard_layout().to_owned();
        self.check_rhs(&x, "left")?;
        self.check_rhs(&x, "right")?;
        self.trsm(&mut x, CBLAS_SIDE::CblasLeft, CBLAS_TRANSPOSE::CblasNoTrans)?;
        self.trsm(&mut x, CBLAS_SIDE::CblasRight, CBLAS_TRANSPOSE::CblasTrans)?;
        symmetrize(&mut x);
        Ok(x)
    }
}
