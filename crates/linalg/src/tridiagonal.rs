//! Tridiagonal reduction `dsytrd` and the shifted solves of a λ path (`dormtr`, `dptsv`).

use ndarray::{Array2, ArrayView2, ShapeBuilder};
use rfx_core::{Result, RfxError};
use std::os::raw::{c_char, c_int};

use crate::dense::{check_finite, check_square, to_int};
use crate::threads::SingleBlasThread;

/// Runs a LAPACK routine that takes a `work` array twice: first as a workspace query (`lwork = -1`, the
/// optimal size returned in `work[0]`), then with that workspace. `call(work, lwork, info)` makes the call;
/// a non-zero `info` is an error naming `what`.
fn with_workspace(what: &str, mut call: impl FnMut(*mut f64, c_int, &mut c_int)) -> Result<()> {
    let mut info: c_int = 0;
    let mut query = [0.0f64; 1];
    call(query.as_mut_ptr(), -1, &mut info);
    if info != 0 {
        return Err(RfxError::Numerical(format!(
            "{what} workspace query failed: info = {info}"
        )));
    }
    let lwork = (query[0].ceil() as usize).max(1);
    let mut work = vec![0.0; lwork];
    call(work.as_mut_ptr(), to_int(lwork, "lwork")?, &mut info);
    if info != 0 {
        return Err(RfxError::Numerical(format!("{what} failed: info = {info}")));
    }
    Ok(())
}

/// A symmetric matrix in tridiagonal form $A = Q T Q^\top$ (LAPACK `dsytrd`: Householder reflectors, about
/// $\tfrac43 n^3$ flops, and no eigenvectors — a third of the work of [`crate::eigh`]'s `dsyevd`, which also runs the
/// divide-and-conquer on $T$ and back-transforms $n$ vectors). Since $A + \lambda I = Q (T + \lambda I) Q^\top$,
/// a shifted system $(A + \lambda I) X = B$ with $k$ right-hand sides then costs one tridiagonal solve
/// ($O(nk)$) and two applications of $Q$ ($O(n^2 k)$) per shift: the λ path of a ridge search without an
/// eigendecomposition.
pub struct Tridiagonal {
    n: usize,
    /// `dsytrd`'s output: the reflectors below the first subdiagonal (column-major, lower).
    reflectors: Vec<f64>,
    tau: Vec<f64>,
    d: Vec<f64>,
    e: Vec<f64>,
}

impl Tridiagonal {
    /// Reduces the symmetric `a` (only its upper triangle is read) to tridiagonal form.
    pub fn new(a: ArrayView2<'_, f64>) -> Result<Self> {
        let n = check_square(&a, "tridiagonal")?;
        check_finite(&a, "tridiagonal")?;
        // row-major upper triangle = column-major lower triangle
        let mut reflectors: Vec<f64> = a.as_standard_layout().iter().copied().collect();
        let mut d = vec![0.0; n];
        // dsytrd writes n - 1 off-diagonal values and reflector scalars; keep the buffers non-empty for n = 1
        let mut e = vec![0.0; n.max(2) - 1];
        let mut tau = vec![0.0; n.max(2) - 1];
        if n > 0 {
            let nn = to_int(n, "n")?;
            let uplo = b'L' as c_char;
            let _pin = SingleBlasThread::new(); // dsymv sums per-thread partial vectors
            with_workspace("dsytrd", |work, lwork, info| {
                // SAFETY: the reflectors are n x n (lda = n), d holds n and e, tau n - 1 >= 1 values; `work`
                // holds `lwork` doubles (lwork = -1: the workspace query).
                unsafe {
                    lapack_sys::dsytrd_(
                        &uplo,
                        &nn,
                        reflectors.as_mut_ptr(),
                        &nn,
                        d.as_mut_ptr(),
                        e.as_mut_ptr(),
                        tau.as_mut_ptr(),
                        work,
                        &lwork,
                        info,
                    )
                }
            })?;
        }
        e.truncate(n.saturating_sub(1));
        Ok(Tridiagonal {
            n,
            reflectors,
            tau,
            d,
            e,
        })
    }

    /// The diagonal of $T$.
    pub fn diagonal(&self) -> &[f64] {
        &self.d
    }

    /// The off-diagonal of $T$ ($n - 1$ values).
    pub fn off_diagonal(&self) -> &[f64] {
        &self.e
    }

    /// $C \leftarrow Q C$ (`transpose = false`) or $Q^\top C$, $C$ column-major $n \times k$ (`dormtr`).
    fn apply_q(&self, c: &mut [f64], k: usize, transpose: bool) -> Result<()> {
        if self.n <= 1 || k == 0 {
            return Ok(()); // Q = I
        }
        let (nn, kk) = (to_int(self.n, "n")?, to_int(k, "k")?);
        let (side, uplo) = (b'L' as c_char, b'L' as c_char);
        let trans = if transpose { b'T' } else { b'N' } as c_char;
        let _pin = SingleBlasThread::new(); // dlarfb's GEMMs split by thread count
        with_workspace("dormtr", |work, lwork, info| {
            // SAFETY: the reflectors are n x n (lda = n), C is n x k (ldc = n), `work` holds `lwork` doubles
            // (lwork = -1: the workspace query); dormtr does not write A or tau.
            unsafe {
                lapack_sys::dormtr_(
                    &side,
                    &uplo,
                    &trans,
                    &nn,
                    &kk,
                    self.reflectors.as_ptr() as *mut f64,
                    &nn,
                    self.tau.as_ptr() as *mut f64,
                    c.as_mut_ptr(),
                    &nn,
                    work,
                    &lwork,
                    info,
                )
            }
        })
    }

    /// $X_\lambda = (A + \lambda I)^{-1} B$ for every shift λ of `shifts` ($B$ is $n \times k$): $Q^\top B$ once,
    /// then per shift the tridiagonal solve by `dptsv` ($LDL^\top$ of $T + \lambda I$) and $Q$ applied. `None`
    /// for a shift at which $T + \lambda I$ is not numerically positive definite (the caller decides what to do:
    /// the ridge search falls back to an eigendecomposition, which clips negative rounding-level eigenvalues).
    pub fn solve_shifted(
        &self,
        b: ArrayView2<'_, f64>,
        shifts: &[f64],
    ) -> Result<Vec<Option<Array2<f64>>>> {
        let (n, k) = b.dim();
        if n != self.n {
            return Err(RfxError::DimensionMismatch(format!(
                "shifted solve: matrix {} x {}, right-hand sides {:?}",
                self.n,
                self.n,
                b.dim()
            )));
        }
        // column-major Qᵀ B: iterating the transpose in logical order lists B by columns
        let mut c: Vec<f64> = b.t().iter().copied().collect();
        self.apply_q(&mut c, k, true)?;
        let mut out = Vec::with_capacity(shifts.len());
        for &lam in shifts {
            if n == 0 || k == 0 {
                out.push(Some(Array2::zeros((n, k))));
                continue;
            }
            let mut d: Vec<f64> = self.d.iter().map(|v| v + lam).collect();
            let mut e = self.e.clone();
            e.push(0.0); // dptsv reads n - 1 values; keep the buffer non-empty for n = 1
            let mut x = c.clone();
            let (nn, kk) = (to_int(n, "n")?, to_int(k, "k")?);
            let mut info: c_int = 0;
            // SAFETY: d has n values, e at least n - 1, x is n x k column-major (ldb = n).
            unsafe {
                lapack_sys::dptsv_(
                    &nn,
                    &kk,
                    d.as_mut_ptr(),
                    e.as_mut_ptr(),
                    x.as_mut_ptr(),
                    &nn,
                    &mut info,
                )
            };
            if info > 0 {
                out.push(None);
                continue;
            }
            if info < 0 {
                return Err(RfxError::Numerical(format!(
                    "dptsv: argument {} invalid",
                    -info
                )));
            }
            self.apply_q(&mut x, k, false)?;
            let x = Array2::from_shape_vec((n, k).f(), x).expect("n*k buffer");
            out.push(Some(x.as_standard_layout().to_owned()));
        }
        Ok(out)
    }
}
