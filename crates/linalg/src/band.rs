//! Reduction of a symmetric matrix to band form (`dsytrd_sy2sb`) and the shifted solves of a λ path (banded
//! Cholesky `dpbsv`, $Q$ applied by `dormqr`).

use ndarray::{Array2, ArrayView2, ShapeBuilder};
use rfx_core::{Result, RfxError};
use std::os::raw::{c_char, c_int};

use crate::dense::{check_finite, check_square, to_int};
use crate::threads::SingleBlasThread;

extern "C" {
    // LAPACK ≥ 3.7, exported by OpenBLAS but not bound by `lapack-sys`: the first stage of `dsytrd_2stage`.
    fn dsytrd_sy2sb_(
        uplo: *const c_char,
        n: *const c_int,
        kd: *const c_int,
        a: *mut f64,
        lda: *const c_int,
        ab: *mut f64,
        ldab: *const c_int,
        tau: *mut f64,
        work: *mut f64,
        lwork: *const c_int,
        info: *mut c_int,
    );
}

/// The half-bandwidth of [`BandReduction`]: measured on this project's machine (OpenBLAS 0.3.21, one thread,
/// n = 4,000), 32 / 64 / 128 took 3.2 / 2.3 / 2.1 s against `dsytrd`'s 9.0 s. 64 keeps the per-shift banded
/// solve, $O(n k_d^2)$, far below the $O(n^2)$ of applying $Q$. A constant, so results do not depend on
/// the machine.
pub const BAND_WIDTH: usize = 64;

/// The optimal workspace size LAPACK returns for a query call (`lwork = -1`, the size in `work[0]`):
/// `call(work, lwork, info)` makes the call; a non-zero `info` is an error naming `what`.
fn workspace_size(what: &str, call: &mut impl FnMut(*mut f64, c_int, &mut c_int)) -> Result<usize> {
    let mut info: c_int = 0;
    let mut query = [0.0f64; 1];
    call(query.as_mut_ptr(), -1, &mut info);
    if info != 0 {
        return Err(RfxError::Numerical(format!(
            "{what} workspace query failed: info = {info}"
        )));
    }
    Ok((query[0].ceil() as usize).max(1))
}

/// Runs a LAPACK routine that takes a `work` array twice: first as a workspace query
/// ([`workspace_size`]), then with that workspace. A non-zero `info` is an error naming `what`.
fn with_workspace(what: &str, mut call: impl FnMut(*mut f64, c_int, &mut c_int)) -> Result<()> {
    let lwork = workspace_size(what, &mut call)?;
    let mut work = vec![0.0; lwork];
    let mut info: c_int = 0;
    call(work.as_mut_ptr(), to_int(lwork, "lwork")?, &mut info);
    if info != 0 {
        return Err(RfxError::Numerical(format!("{what} failed: info = {info}")));
    }
    Ok(())
}

/// A symmetric matrix in band form $A = Q B Q^\top$, $B$ symmetric with half-bandwidth
/// $k_d$ = [`BAND_WIDTH`] and $Q$ orthogonal (LAPACK `dsytrd_sy2sb`, the first stage of the two-stage
/// tridiagonal reduction: Householder QR of $k_d$-column panels and level-3 updates, about $\tfrac43 n^3$
/// flops at close to the GEMM rate, where the one-stage `dsytrd` spends half its flops in the
/// memory-bound `dsymv` — 4× slower at n = 4,000).
///
/// Since $A + \lambda I = Q (B + \lambda I) Q^\top$, a shifted system $(A + \lambda I) X = B_{rhs}$ with $k$
/// right-hand sides costs, per shift, one banded Cholesky solve of $B + \lambda I$ ($O(n k_d^2 + n k_d k)$,
/// `dpbsv`) and one application of $Q$ ($O(n^2 k)$, `dormqr`): the λ path of a ridge search without an
/// eigendecomposition.
pub struct BandReduction {
    n: usize,
    /// The half-bandwidth of $B$: [`BAND_WIDTH`], or $n - 1$ for a matrix that is already that narrow.
    kd: usize,
    /// `dsytrd_sy2sb`'s `A` on exit: the reflectors below the `kd`-th subdiagonal (column-major, lower).
    reflectors: Vec<f64>,
    /// The $n - k_d$ reflector scalars.
    tau: Vec<f64>,
    /// $B$ in LAPACK's lower band storage: `band[j * (kd + 1) + (i - j)]` $= B_{ij}$ for
    /// $j \le i \le \min(n - 1, j + k_d)$.
    band: Vec<f64>,
}

impl BandReduction {
    /// Reduces the symmetric `a` (only its upper triangle is read) to band form.
    pub fn new(a: ArrayView2<'_, f64>) -> Result<Self> {
        let n = check_square(&a, "band reduction")?;
        check_finite(&a, "band reduction")?;
        // row-major upper triangle = column-major lower triangle
        let mut reflectors: Vec<f64> = a.as_standard_layout().iter().copied().collect();
        if n <= BAND_WIDTH + 1 {
            // already a band matrix of half-bandwidth n - 1: B = A, Q = I
            let kd = n.saturating_sub(1);
            let mut band = vec![0.0; (kd + 1) * n];
            for j in 0..n {
                for i in j..n {
                    band[j * (kd + 1) + (i - j)] = reflectors[j * n + i];
                }
            }
            return Ok(BandReduction {
                n,
                kd,
                reflectors: Vec::new(),
                tau: Vec::new(),
                band,
            });
        }
        let kd = BAND_WIDTH;
        let mut band = vec![0.0; (kd + 1) * n];
        let mut tau = vec![0.0; n - kd];
        let (nn, kk, ldab) = (to_int(n, "n")?, to_int(kd, "kd")?, to_int(kd + 1, "ldab")?);
        let uplo = b'L' as c_char;
        let _pin = SingleBlasThread::new(); // its GEMMs and panel QRs split by thread count
        with_workspace("dsytrd_sy2sb", |work, lwork, info| {
            // SAFETY: A is n x n (lda = n), AB is (kd + 1) x n (ldab = kd + 1), tau holds n - kd values,
            // `work` holds `lwork` doubles (lwork = -1: the workspace query); 0 < kd < n - 1.
            unsafe {
                dsytrd_sy2sb_(
                    &uplo,
                    &nn,
                    &kk,
                    reflectors.as_mut_ptr(),
                    &nn,
                    band.as_mut_ptr(),
                    &ldab,
                    tau.as_mut_ptr(),
                    work,
                    &lwork,
                    info,
                )
            }
        })?;
        Ok(BandReduction {
            n,
            kd,
            reflectors,
            tau,
            band,
        })
    }

    /// Doubles that [`BandReduction::new`] and one shift of [`BandReduction::solve_shifted`] allocate for an
    /// $n \times n$ matrix, an upper bound: the reflectors ($n^2$, a copy of $A$), the band and its shifted
    /// copy ($2(k_d + 1) n$), τ ($n$) and `dsytrd_sy2sb`'s workspace (LAPACK asks for $2 k_d n + 2 k_d^2$;
    /// checked against its workspace query in the tests). The right-hand sides are the caller's.
    pub fn memory_f64s(n: usize) -> u128 {
        let (n, kd) = (n as u128, BAND_WIDTH as u128);
        n * n + 2 * (kd + 1) * n + n + 2 * kd * n + 2 * kd * kd
    }

    /// LAPACK's workspace size for `dsytrd_sy2sb` on an $n \times n$ matrix (the workspace query alone).
    #[cfg(test)]
    pub(crate) fn workspace_query(n: usize) -> Result<usize> {
        let (nn, kk, ldab) = (
            to_int(n, "n")?,
            to_int(BAND_WIDTH, "kd")?,
            to_int(BAND_WIDTH + 1, "ldab")?,
        );
        let uplo = b'L' as c_char;
        let (mut a, mut ab, mut tau) = ([0.0f64; 1], [0.0f64; 1], [0.0f64; 1]);
        workspace_size("dsytrd_sy2sb", &mut |work, lwork, info| {
            // SAFETY: only called as a workspace query (lwork = -1), which writes work[0] and info alone.
            unsafe {
                dsytrd_sy2sb_(
                    &uplo,
                    &nn,
                    &kk,
                    a.as_mut_ptr(),
                    &nn,
                    ab.as_mut_ptr(),
                    &ldab,
                    tau.as_mut_ptr(),
                    work,
                    &lwork,
                    info,
                )
            }
        })
    }

    /// The half-bandwidth $k_d$ of $B$.
    pub fn bandwidth(&self) -> usize {
        self.kd
    }

    /// $B$ as a dense $n \times n$ matrix (for tests and small matrices).
    pub fn band_dense(&self) -> Array2<f64> {
        let (n, kd) = (self.n, self.kd);
        let mut b = Array2::zeros((n, n));
        for j in 0..n {
            for i in j..n.min(j + kd + 1) {
                let v = self.band[j * (kd + 1) + (i - j)];
                b[[i, j]] = v;
                b[[j, i]] = v;
            }
        }
        b
    }

    /// $C \leftarrow Q C$ (`transpose = false`) or $Q^\top C$, $C$ column-major $n \times k$. $Q = I_{k_d}
    /// \oplus Q^\prime$ with $Q^\prime$ the product of the $n - k_d$ reflectors stored, in `dgeqrf`'s layout,
    /// in rows and columns $k_d + 1 \ldots$ of the reflector matrix (`dormqr` on that block).
    fn apply_q(&self, c: &mut [f64], k: usize, transpose: bool) -> Result<()> {
        if self.tau.is_empty() || k == 0 {
            return Ok(()); // Q = I
        }
        let (n, kd) = (self.n, self.kd);
        let (nn, mq, kk) = (to_int(n, "n")?, to_int(n - kd, "n - kd")?, to_int(k, "k")?);
        let side = b'L' as c_char;
        let trans = if transpose { b'T' } else { b'N' } as c_char;
        let _pin = SingleBlasThread::new(); // dlarfb's GEMMs split by thread count
        with_workspace("dormqr", |work, lwork, info| {
            // SAFETY: the reflector block starts at row kd of the n x n column-major matrix (lda = n) and is
            // (n - kd) x (n - kd) with n - kd reflectors; C's rows kd.. form an (n - kd) x k block (ldc = n);
            // `work` holds `lwork` doubles (lwork = -1: the workspace query); dormqr does not write A or tau.
            unsafe {
                lapack_sys::dormqr_(
                    &side,
                    &trans,
                    &mq,
                    &kk,
                    &mq,
                    self.reflectors.as_ptr().add(kd),
                    &nn,
                    self.tau.as_ptr(),
                    c.as_mut_ptr().add(kd),
                    &nn,
                    work,
                    &lwork,
                    info,
                )
            }
        })
    }

    /// $X_\lambda = (A + \lambda I)^{-1} B_{rhs}$ for every shift λ of `shifts` ($B_{rhs}$ is $n \times k$):
    /// $Q^\top B_{rhs}$ once, then per shift the banded Cholesky solve of $B + \lambda I$ (`dpbsv`) and $Q$
    /// applied. `None` for a shift at which $B + \lambda I$ is not numerically positive definite (the caller
    /// decides what to do: the ridge search falls back to an eigendecomposition, which clips negative
    /// rounding-level eigenvalues).
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
        let kd = self.kd;
        let mut out = Vec::with_capacity(shifts.len());
        for &lam in shifts {
            if n == 0 || k == 0 {
                out.push(Some(Array2::zeros((n, k))));
                continue;
            }
            let mut ab = self.band.clone();
            for j in 0..n {
                ab[j * (kd + 1)] += lam;
            }
            let mut x = c.clone();
            let (nn, kdi, kk, ldab) = (
                to_int(n, "n")?,
                to_int(kd, "kd")?,
                to_int(k, "k")?,
                to_int(kd + 1, "ldab")?,
            );
            let uplo = b'L' as c_char;
            let mut info: c_int = 0;
            // SAFETY: ab is (kd + 1) x n in lower band storage (ldab = kd + 1), x is n x k column-major
            // (ldb = n).
            unsafe {
                lapack_sys::dpbsv_(
                    &uplo,
                    &nn,
                    &kdi,
                    &kk,
                    ab.as_mut_ptr(),
                    &ldab,
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
                    "dpbsv: argument {} invalid",
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
