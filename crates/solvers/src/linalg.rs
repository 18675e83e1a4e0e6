//! Dense linear-algebra helpers on top of OpenBLAS / LAPACK.
//!
//! * [`Cholesky`]: $A = L L^\top$ by LAPACK `dpotrf`, solves by two triangular solves (`cblas_dtrsm`);
//! * [`eigh`] / [`eigvalsh`]: symmetric eigendecomposition $A = V \Lambda V^\top$ by the divide-and-conquer
//!   driver `dsyevd` (6× faster than `dsyev`, which ndarray-linalg's `eigh` uses; see
//!   `shared/research/dependencies.md`, pitfall 4);
//! * [`Tridiagonal`]: $A = Q T Q^\top$ by `dsytrd`, for the shifted solves $(A + \lambda I)^{-1} B$ of a λ path at
//!   a third of an eigendecomposition's cost;
//! * [`gram_cols`] ($Z^\top Z$) and [`gram_rows`] ($Z Z^\top$) by `cblas_dsyrk`, which does half the flops of a
//!   GEMM (pitfall 6), with $Z^\top Z$ accumulated over row blocks ([`NormalEquations`]) so that feature
//!   blocks can be streamed and the $n \times m$ matrix never has to be held twice;
//! * [`Precision::MixedF32`]: `f32` Gram and Cholesky factor ([`gram_cols_f32_upper`], [`CholeskyF32`]) with
//!   iterative refinement against the `f64` operator ([`solve_spd_refined`]): `f64` accuracy at `f32` speed
//!   for well-enough conditioned systems (issue 10);
//! * [`check_memory`]: a memory estimate compared against a cap before large allocations, returning
//!   [`RfxError::OutOfMemory`] (reported as "(-)" by the experiments, as the papers do).
//!
//! All matrices are row-major (`ndarray` standard layout) on the Rust side. A row-major buffer read as
//! column-major is the transpose, which is harmless for symmetric inputs; triangles are swapped accordingly.
//!
//! **Thread-count independence.** OpenBLAS splits a call among its threads, and the arithmetic of each result
//! entry depends on the split: GEMM's edge kernels fall on other columns, `dpotrf` picks another block size,
//! `dsytrd`'s `dsymv` sums per-thread partial vectors (measured on OpenBLAS 0.3.21: GEMM, GEMV, `dsyrk`,
//! `dpotrf`, `dsyevd`, `dsytrd`, `dormtr` all change in the last bits between 1 and 2 threads). So every
//! routine here runs OpenBLAS on one thread ([`SingleBlasThread`]) and its result is bit-for-bit the same
//! whatever [`set_blas_threads`] says; the `dsyrk` Grams get their parallelism back from rayon over fixed
//! 256-row tiles of the output ([`gram_cols`], [`gram_rows`], [`gram_rows_add_upper`], [`NormalEquations`]),
//! whose arithmetic does not depend on the number of rayon threads either.

use cblas_sys::{
    cblas_dsyrk, cblas_dtrsm, CBLAS_DIAG, CBLAS_LAYOUT, CBLAS_SIDE, CBLAS_TRANSPOSE, CBLAS_UPLO,
};
use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, ArrayView2, Axis, ShapeBuilder};
use rayon::prelude::*;
use rfx_core::{Result, RfxError};
use std::os::raw::{c_char, c_int};

/// Default memory cap for [`check_memory`]: 8 GiB (a third of the 24 GB reference machine).
pub const DEFAULT_MEMORY_CAP: u64 = 8 << 30;

/// Bytes taken by `count` `f64` values (saturating).
pub fn f64_bytes(count: u128) -> u64 {
    u64::try_from(count.saturating_mul(8)).unwrap_or(u64::MAX)
}

/// Returns [`RfxError::OutOfMemory`] if `needed_bytes > cap_bytes`; call it *before* allocating.
pub fn check_memory(what: &str, needed_bytes: u64, cap_bytes: u64) -> Result<()> {
    if needed_bytes > cap_bytes {
        Err(RfxError::OutOfMemory {
            what: what.to_string(),
            needed_bytes,
            cap_bytes,
        })
    } else {
        Ok(())
    }
}

extern "C" {
    fn openblas_set_num_threads(num_threads: c_int);
    fn openblas_get_num_threads() -> c_int;
}

/// The live [`SingleBlasThread`] guards and the thread count to restore when the last one ends (OpenBLAS has
/// one process-wide thread count, so the pins of all threads are counted together).
struct Pins {
    live: usize,
    restore: usize,
}

static PINS: std::sync::Mutex<Pins> = std::sync::Mutex::new(Pins {
    live: 0,
    restore: 1,
});

fn pins() -> std::sync::MutexGuard<'static, Pins> {
    // the state stays consistent even if a holder panicked (it only does integer updates)
    PINS.lock().unwrap_or_else(|e| e.into_inner())
}

fn openblas_set(n: usize) {
    let n = c_int::try_from(n.max(1)).unwrap_or(c_int::MAX);
    // SAFETY: plain setter exported by libopenblas.
    unsafe { openblas_set_num_threads(n) }
}

/// Sets the number of OpenBLAS threads. Use 1 inside rayon parallel loops to avoid oversubscription
/// (`dependencies.md`, pitfall 5). While a [`SingleBlasThread`] guard is alive the count stays 1 and `n` takes
/// effect when the last guard ends.
pub fn set_blas_threads(n: usize) {
    let mut p = pins();
    if p.live > 0 {
        p.restore = n.max(1);
    } else {
        openblas_set(n);
    }
}

/// The current number of OpenBLAS threads.
pub fn blas_threads() -> usize {
    // SAFETY: plain getter exported by libopenblas.
    let n = unsafe { openblas_get_num_threads() };
    usize::try_from(n).unwrap_or(1)
}

/// While alive, OpenBLAS runs on one thread, so that the BLAS and LAPACK calls made meanwhile round the same way
/// whatever the thread count set by [`set_blas_threads`] or `OPENBLAS_NUM_THREADS` (see the module docs: the
/// multi-threaded paths of OpenBLAS change the summation order with the thread count).
///
/// The thread count is process-wide, so guards are counted over all threads: the first one sets 1, the last
/// one restores the count from before (or the one asked for by [`set_blas_threads`] meanwhile). Guards nest.
/// Other threads' BLAS calls during a guard also run on one thread, which costs speed, never correctness.
///
/// ```
/// use rfx_solvers::linalg::{blas_threads, set_blas_threads, SingleBlasThread};
/// set_blas_threads(2);
/// let before = blas_threads();
/// {
///     let _pin = SingleBlasThread::new();
///     assert_eq!(blas_threads(), 1);
/// }
/// assert_eq!(blas_threads(), before);
/// ```
#[must_use = "OpenBLAS is pinned only while the guard is alive"]
pub struct SingleBlasThread {
    _private: (),
}

impl SingleBlasThread {
    /// Pins OpenBLAS to one thread until the guard is dropped.
    pub fn new() -> Self {
        let mut p = pins();
        if p.live == 0 {
            p.restore = blas_threads();
            if p.restore != 1 {
                openblas_set(1);
            }
        }
        p.live += 1;
        SingleBlasThread { _private: () }
    }
}

impl Default for SingleBlasThread {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SingleBlasThread {
    fn drop(&mut self) {
        let mut p = pins();
        p.live -= 1;
        if p.live == 0 && p.restore != 1 {
            openblas_set(p.restore);
        }
    }
}

pub(crate) fn to_int(v: usize, what: &str) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| RfxError::invalid(what, v, "at most 2^31 - 1 (LP64 BLAS)"))
}

fn check_square(a: &ArrayView2<'_, f64>, what: &str) -> Result<usize> {
    if a.nrows() != a.ncols() {
        return Err(RfxError::DimensionMismatch(format!(
            "{what}: matrix must be square, got {} x {}",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(a.nrows())
}

pub(crate) fn check_finite(a: &ArrayView2<'_, f64>, what: &str) -> Result<()> {
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

/// Adds `v` to the diagonal.
pub fn add_diag(a: &mut Array2<f64>, v: f64) {
    a.diag_mut().mapv_inplace(|d| d + v);
}

/// Cholesky factor $A = L L^\top$ of a symmetric positive-definite matrix ($L$ lower triangular, row-major,
/// strict upper triangle zero).
#[derive(Clone, Debug)]
pub struct Cholesky {
    l: Array2<f64>,
}

impl Cholesky {
    /// Factors `a` in place (only its lower triangle is read). Fails with [`RfxError::Numerical`] if `a` is
    /// not numerically positive definite (LAPACK `dpotrf` `info > 0`).
    pub fn factor(a: Array2<f64>) -> Result<Self> {
        let n = check_square(&a.view(), "cholesky")?;
        check_finite(&a.view(), "cholesky")?;
        let mut a = if a.is_standard_layout() {
            a
        } else {
            a.as_standard_layout().to_owned()
        };
        if n > 0 {
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
        for i in 0..n {
            for j in i + 1..n {
                a[[i, j]] = 0.0;
            }
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

fn ensure_standard<T: Clone>(b: &mut Array2<T>) {
    if !b.is_standard_layout() {
        *b = b.as_standard_layout().to_owned();
    }
}

/// Symmetric eigendecomposition $A = V \operatorname{diag}(\lambda) V^\top$.
#[derive(Clone, Debug)]
pub struct SymEig {
    /// Eigenvalues in ascending order.
    pub values: Array1<f64>,
    /// Orthonormal eigenvectors as columns (`vectors.column(i)` belongs to `values[i]`).
    pub vectors: Array2<f64>,
}

fn syevd(a: ArrayView2<'_, f64>, vectors: bool) -> Result<(Array1<f64>, Option<Array2<f64>>)> {
    let n = check_square(&a, "eigh")?;
    check_finite(&a, "eigh")?;
    if n == 0 {
        return Ok((Array1::zeros(0), vectors.then(|| Array2::zeros((0, 0)))));
    }
    let nn = to_int(n, "n")?;
    let mut buf: Vec<f64> = a.as_standard_layout().iter().copied().collect();
    let mut w = vec![0.0; n];
    let jobz = if vectors { b'V' } else { b'N' } as c_char;
    // The row-major upper triangle is the column-major lower triangle.
    let uplo = b'L' as c_char;
    let mut info: c_int = 0;
    let mut work_q = [0.0f64; 1];
    let mut iwork_q: [c_int; 1] = [0];
    let minus1: c_int = -1;
    // dsytrd inside sums per-thread partial vectors (dsymv): one thread for the whole driver
    let _pin = SingleBlasThread::new();
    // SAFETY: workspace query (lwork = liwork = -1) with valid pointers.
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &nn,
            buf.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            work_q.as_mut_ptr(),
            &minus1,
            iwork_q.as_mut_ptr(),
            &minus1,
            &mut info,
        )
    };
    if info != 0 {
        return Err(RfxError::Numerical(format!(
            "dsyevd workspace query failed: info = {info}"
        )));
    }
    let lwork = (work_q[0].ceil() as usize).max(1);
    let liwork = (iwork_q[0] as usize).max(1);
    let mut work = vec![0.0; lwork];
    let mut iwork: Vec<c_int> = vec![0; liwork];
    let (lw, liw) = (to_int(lwork, "lwork")?, to_int(liwork, "liwork")?);
    // SAFETY: buffers sized as LAPACK requested.
    unsafe {
        lapack_sys::dsyevd_(
            &jobz,
            &uplo,
            &nn,
            buf.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &lw,
            iwork.as_mut_ptr(),
            &liw,
            &mut info,
        )
    };
    if info != 0 {
        return Err(RfxError::Numerical(format!(
            "dsyevd failed to converge: info = {info}"
        )));
    }
    let v = if vectors {
        // Eigenvectors come back column-major.
        let v = Array2::from_shape_vec((n, n).f(), buf).expect("n*n buffer");
        Some(v.as_standard_layout().to_owned())
    } else {
        None
    };
    Ok((Array1::from(w), v))
}

/// Eigenvalues and eigenvectors of a symmetric matrix by LAPACK `dsyevd` (lower triangle of the row-major
/// input is not read; the upper one is). Cost $\approx \tfrac{9}{3}n^3$ flops; 0.7 s at $n = 2000$ on 2 cores.
pub fn eigh(a: ArrayView2<'_, f64>) -> Result<SymEig> {
    let (values, vectors) = syevd(a, true)?;
    Ok(SymEig {
        values,
        vectors: vectors.expect("requested vectors"),
    })
}

/// Eigenvalues (ascending) of a symmetric matrix by `dsyevd` without vectors.
pub fn eigvalsh(a: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
    Ok(syevd(a, false)?.0)
}

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
/// $\tfrac43 n^3$ flops, and no eigenvectors — a third of the work of [`eigh`]'s `dsyevd`, which also runs the
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
/// rows, run in parallel on the rayon pool, each by single-threaded BLAS: `dsyrk` for its diagonal block and
/// one GEMM for the blocks right of it. Bit-for-bit the same for any rayon or OpenBLAS thread count.
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

/// Frobenius norm.
pub fn fro_norm(a: ArrayView2<'_, f64>) -> f64 {
    a.iter().map(|v| v * v).sum::<f64>().sqrt()
}

#[cfg(test)]
/// Column-wise scaling $A \operatorname{diag}(d)$ in place.
pub(crate) fn scale_cols(a: &mut Array2<f64>, d: &Array1<f64>) {
    for mut row in a.axis_iter_mut(ndarray::Axis(0)) {
        row.zip_mut_with(d, |x, s| *x *= s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_abs, randn};

    #[test]
    fn cholesky_reconstructs_and_solves() {
        let z = randn(60, 40, 1);
        let mut a = z.t().dot(&z);
        add_diag(&mut a, 0.5);
        let ch = Cholesky::factor_view(a.view()).unwrap();
        let l = ch.l();
        let rec = l.dot(&l.t());
        assert!(max_abs(&(&rec - &a)) < 1e-12 * max_abs(&a));
        let b = randn(40, 3, 2);
        let x = ch.solve(b.view()).unwrap();
        let r = a.dot(&x) - &b;
        assert!(max_abs(&r) < 1e-10, "residual {}", max_abs(&r));
        // whiten: L^{-1} A L^{-T} = I
        let w = ch.whiten(a.view()).unwrap();
        assert!(max_abs(&(&w - &Array2::<f64>::eye(40))) < 1e-10);
        // log det against eigenvalues
        let ev = eigvalsh(a.view()).unwrap();
        assert!((ch.log_det() - ev.iter().map(|v| v.ln()).sum::<f64>()).abs() < 1e-9);
    }

    #[test]
    fn cholesky_rejects_indefinite_and_bad_shapes() {
        let a = ndarray::arr2(&[[1.0, 2.0], [2.0, 1.0]]);
        assert!(matches!(Cholesky::factor(a), Err(RfxError::Numerical(_))));
        let r = Array2::<f64>::zeros((2, 3));
        assert!(matches!(
            Cholesky::factor(r),
            Err(RfxError::DimensionMismatch(_))
        ));
        let mut nan = Array2::<f64>::eye(2);
        nan[[0, 0]] = f64::NAN;
        assert!(Cholesky::factor(nan).is_err());
        let ch = Cholesky::factor(Array2::eye(3)).unwrap();
        assert!(ch.solve(Array2::zeros((2, 1)).view()).is_err());
    }

    #[test]
    fn eigh_matches_definition() {
        let z = randn(50, 50, 3);
        let a = &z + &z.t();
        let e = eigh(a.view()).unwrap();
        assert!(e.values.windows(2).into_iter().all(|w| w[0] <= w[1]));
        let v = &e.vectors;
        let av = a.dot(v);
        let mut vl = v.clone();
        scale_cols(&mut vl, &e.values);
        assert!(max_abs(&(&av - &vl)) < 1e-11 * max_abs(&a));
        assert!(max_abs(&(v.t().dot(v) - Array2::<f64>::eye(50))) < 1e-12);
        let vals = eigvalsh(a.view()).unwrap();
        assert!((&vals - &e.values).iter().all(|d| d.abs() < 1e-10));
        // a non-contiguous view works too
        let sub = a.slice(s![..;2, ..;2]);
        let es = eigh(sub).unwrap();
        let rec = es
            .vectors
            .dot(&Array2::from_diag(&es.values))
            .dot(&es.vectors.t());
        assert!(max_abs(&(&rec - &sub)) < 1e-11 * max_abs(&a));
    }

    #[test]
    fn syrk_grams_and_streaming_normal_equations() {
        let z = randn(70, 9, 4);
        let y = randn(70, 2, 5);
        let g = gram_cols(z.view()).unwrap();
        assert!(max_abs(&(&g - &z.t().dot(&z))) < 1e-12 * max_abs(&g));
        let k = gram_rows(z.view()).unwrap();
        assert!(max_abs(&(&k - &z.dot(&z.t()))) < 1e-12 * max_abs(&k));
        // strided (non-standard) input
        let zt = z.t().to_owned();
        let g2 = gram_rows(zt.t()).unwrap();
        assert!(max_abs(&(&g2 - &k)) < 1e-12 * max_abs(&k));
        // column blocks accumulated into the upper triangle
        let mut acc = Array2::zeros((70, 70));
        for start in (0..9).step_by(4) {
            let end = (start + 4).min(9);
            gram_rows_add_upper(z.slice(s![.., start..end]), &mut acc).unwrap();
        }
        symmetrize_from_upper(&mut acc);
        assert!(max_abs(&(&acc - &k)) < 1e-12 * max_abs(&k));
        assert!(gram_rows_add_upper(z.view(), &mut Array2::zeros((3, 3))).is_err());
        let mut ne = NormalEquations::new(9, 2).unwrap();
        for start in (0..70).step_by(16) {
            let end = (start + 16).min(70);
            ne.push(z.slice(s![start..end, ..]), y.slice(s![start..end, ..]))
                .unwrap();
        }
        assert_eq!(ne.n(), 70);
        let (g3, b) = ne.finish();
        assert!(max_abs(&(&g3 - &g)) < 1e-12 * max_abs(&g));
        assert!(max_abs(&(&b - &z.t().dot(&y))) < 1e-12 * max_abs(&b));
        assert!(NormalEquations::new(0, 1).is_err());
        let mut ne = NormalEquations::new(3, 1).unwrap();
        assert!(ne.push(z.view(), y.view()).is_err());
    }

    #[test]
    fn memory_cap() {
        assert!(check_memory("x", 10, 10).is_ok());
        match check_memory("gram", f64_bytes(5000 * 5000), 1 << 20) {
            Err(RfxError::OutOfMemory { needed_bytes, .. }) => {
                assert_eq!(needed_bytes, 200_000_000)
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        set_blas_threads(1);
        assert_eq!(blas_threads(), 1);
        set_blas_threads(2);
    }
    #[test]
    fn tridiagonal_shifted_solves_equal_cholesky_solves() {
        for n in [0usize, 1, 2, 7, 60] {
            let z = randn(n + 3, n, 9 + n as u64);
            let a = gram_cols(z.view()).unwrap();
            let b = randn(n, 3, 100 + n as u64);
            let t = Tridiagonal::new(a.view()).unwrap();
            assert_eq!(t.diagonal().len(), n);
            assert_eq!(t.off_diagonal().len(), n.saturating_sub(1));
            // similarity: the trace is kept
            let trace: f64 = t.diagonal().iter().sum();
            assert!((trace - a.diag().sum()).abs() <= 1e-12 * (1.0 + a.diag().sum()));
            let shifts = [1e-4, 0.5, 40.0];
            let xs = t.solve_shifted(b.view(), &shifts).unwrap();
            for (x, &lam) in xs.iter().zip(&shifts) {
                let x = x.as_ref().expect("positive definite");
                let mut al = a.clone();
                add_diag(&mut al, lam);
                let want = Cholesky::factor(al).unwrap().solve(b.view()).unwrap();
                let err = max_abs(&(x - &want));
                let scale = max_abs(&want).max(1e-300);
                assert!(err <= 1e-9 * scale, "n = {n}, λ = {lam}: {err} vs {scale}");
            }
        }
        // indefinite after the shift: no solution offered
        let a = ndarray::arr2(&[[-1.0, 0.2], [0.2, 2.0]]);
        let t = Tridiagonal::new(a.view()).unwrap();
        let xs = t
            .solve_shifted(Array2::ones((2, 1)).view(), &[0.5, 3.0])
            .unwrap();
        assert!(xs[0].is_none() && xs[1].is_some());
        assert!(t
            .solve_shifted(Array2::ones((3, 1)).view(), &[1.0])
            .is_err());
    }
}

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
/// $X_{k+1} = X_k + \tilde A^{-1}(B - A X_k)$ until the correction is below $8\varepsilon_{64}\|X\|_\infty$ or stops
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
