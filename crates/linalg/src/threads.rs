//! The process-wide OpenBLAS thread count and [`SingleBlasThread`], which pins it to one thread.

use std::os::raw::c_int;

extern "C" {
    fn openblas_set_num_threads(num_threads: c_int);
    fn openblas_get_num_threads() -> c_int;
    fn openblas_get_corename() -> *const std::os::raw::c_char;
}

/// The name of the kernels OpenBLAS chose for this CPU at load time (its `openblas_get_corename`), e.g.
/// `Haswell`, `SkylakeX`, `Cooperlake`, `Zen`, or `Prescott` — the SSE3 fallback that OpenBLAS 0.3.21 takes on
/// CPUs it does not know, such as a family-6 model-207 Xeon. `OPENBLAS_CORETYPE` overrides the choice. The
/// BLAS products of the workspace round according to these kernels, so cells record the name beside the CPU.
///
/// ```
/// assert!(!rfx_linalg::blas_core_name().is_empty());
/// ```
pub fn blas_core_name() -> String {
    // SAFETY: OpenBLAS returns a pointer to a static NUL-terminated string (never freed); checked for null.
    let p = unsafe { openblas_get_corename() };
    if p.is_null() {
        return "unknown".into();
    }
    // SAFETY: non-null, NUL-terminated, static (see above).
    let name = unsafe { std::ffi::CStr::from_ptr(p) };
    let name = name.to_string_lossy().trim().to_string();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
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
/// use rfx_linalg::{blas_threads, set_blas_threads, SingleBlasThread};
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
