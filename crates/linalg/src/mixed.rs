//! Mixed precision: `f32` Gram and Cholesky factor with iterative refinement against the `f64` operator.

use cblas_sys::{CBLAS_DIAG, CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_TRANSPOSE, CBLAS_UPLO};
use ndarray::{s, Array2, ArrayView2};
use rfx_core::{Result, RfxError};
use std::os::raw::{c_char, c_int};

use crate::dense::{ensure_standard, to_int};
use crate::syrk::DEFAULT_ROW_BLOCK;
use crate::threads::SingleBlasThread;

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

/// Row-major `cblas_ssyrk` into the upper triangle of `c`: $C \leftarrow A^\top A$ ($A$ is $k \times m$).
fn ssyrk_cols_upper(a: ArrayView2<'_, f32>, c: &mut Array2<f32>, beta: f32) -> Result<()> {
    let a = a.as_standard_layout();
    let (r, k) = a.dim();
    if k == 0 || r == 0 {
        return Ok(());
    }
    let (ni, ki) = (to_int(k, "n")?, to_int(r, "k")?);
    ensure_standard(c);
    let cs = c.as_slice_mut().expect("standard layout");
    let _pin = SingleBlasThread::new();
    // SAFETY: A is contiguous row-major r x k (lda = k); C is contiguous k x k.
    unsafe {
        cblas_sys::cblas_ssyrk(
            CBLAS_LAYOUT::CblasRowMajor,
            CBLAS_UPLO::CblasUpper,
            CBLAS_TRANSPOSE::CblasTrans,
            ni,
            ki,
            1.0,
            a.as_ptr(),
            ni,
            beta,
            cs.as_mut_ptr(),
            ni,
        )
    };
    Ok(())
}

/// $Z^\top Z$ in `f32` ($m \times m$, upper triangle filled; the strict lower triangle is not referenced by
/// [`CholeskyF32::factor_upper`]), accumulated over row blocks of an `f32` copy of each block of $Z$.
pub fn gram_cols_f32_upper(z: ArrayView2<'_, f64>) -> Result<Array2<f32>> {
    let m = z.ncols();
    let mut c = Array2::<f32>::zeros((m, m));
    for (b, start) in (0..z.nrows()).step_by(DEFAULT_ROW_BLOCK).enumerate() {
        let end = (start + DEFAULT_ROW_BLOCK).min(z.nrows());
        let zb = z.slice(s![start..end, ..]).mapv(|v| v as f32);
        ssyrk_cols_upper(zb.view(), &mut c, if b == 0 { 0.0 } else { 1.0 })?;
    }
    Ok(c)
}

/// A Cholesky factor in `f32` (LAPACK `spotrf`), used as the preconditioner of [`solve_spd_refined`].
#[derive(Clone, Debug)]
pub struct CholeskyF32 {
    /// Row-major: the lower triangle holds $L$ (the upper triangle is garbage and never read).
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
            let nn = to_int(n, "n")?;
            let mut info: c_int = 0;
            // Row-major upper triangle = column-major lower: factor 'L' there, which is row-major U = L^T.
            let uplo = b'L' as c_char;
            let buf = a.as_slice_mut().expect("standard layout");
            let _pin = SingleBlasThread::new();
            // SAFETY: buf holds n*n f32 in contiguous storage, lda = n.
            unsafe { lapack_sys::spotrf_(&uplo, &nn, buf.as_mut_ptr(), &nn, &mut info) };
            if info != 0 {
                return Err(RfxError::Numerical(format!(
                    "cholesky (f32): spotrf info {info} (n = {n})"
                )));
            }
        }
        Ok(CholeskyF32 { l: a })
    }

    /// Factors $A$ (`f64`, symmetric; its upper triangle is read) rounded to `f32`.
    pub fn factor_f64(a: ArrayView2<'_, f64>) -> Result<Self> {
        Self::factor_upper(a.mapv(|v| v as f32))
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
        let (ni, ki) = (to_int(n, "n")?, to_int(cols, "cols")?);
        let xs = x.as_slice_mut().expect("standard layout");
        let _pin = SingleBlasThread::new();
        // The buffer holds row-major U (upper) with A = U^T U: solve U^T y = b, then U x = y.
        for trans in [CBLAS_TRANSPOSE::CblasTrans, CBLAS_TRANSPOSE::CblasNoTrans] {
            // SAFETY: row-major U (n x n, lda n) and X (n x cols, ldb cols), both contiguous.
            unsafe {
                cblas_sys::cblas_strsm(
                    CBLAS_LAYOUT::CblasRowMajor,
                    CBLAS_SIDE::CblasLeft,
                    CBLAS_UPLO::CblasUpper,
                    trans,
                    CBLAS_DIAG::CblasNonUnit,
                    ni,
                    ki,
                    1.0,
                    self.l.as_ptr(),
                    ni,
                    xs.as_mut_ptr(),
                    ki,
                )
            };
        }
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
