//! The process-wide choice of the `f64` GEMM-shaped kernels: the system OpenBLAS or faer.

use std::sync::atomic::{AtomicU8, Ordering};

/// Which library runs the `f64` GEMM-shaped products of this crate: the tiles of the Grams $Z^\top Z$ and
/// $Z Z^\top$ ([`crate::gram_cols`], [`crate::gram_rows`], [`crate::gram_rows_add_upper`],
/// [`crate::NormalEquations`]), the cross products of [`crate::matmul_abt_par`] and the factorisation of
/// [`crate::Cholesky`] (its triangular solves stay OpenBLAS's `dtrsm`).
///
/// Both compute the same sums of products; they add them in different orders, so results differ at
/// rounding level ($\vert \Delta (Z^\top Z)\_{ij} \vert \le \gamma_n \sum_r \vert z_{ri} z_{rj} \vert$,
/// $\gamma_n \approx n u$), and a solve amplifies that by its condition number. Each is bit-for-bit the same
/// for any number of threads (fixed 256-row output tiles, each on one thread).
///
/// Measured on one core of the project's machine (`benches/backend.rs`, $n = 2048$): faer's `f64` GEMM and
/// Gram run 1.9× the system OpenBLAS's, which that machine limits to its Haswell kernels
/// (`OPENBLAS_CORETYPE=Haswell`). The default stays [`Backend::OpenBlas`], the arithmetic every committed
/// result was computed with; an experiment chooses faer with `[experiment] backend = "faer"` (part of its
/// fingerprint), so each committed experiment changes backend only when it is recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The system OpenBLAS through CBLAS, on one thread per tile (the default).
    #[default]
    OpenBlas,
    /// faer's GEMM (pure Rust, runtime CPU dispatch), on one thread per tile.
    Faer,
}

impl Backend {
    /// The name used in experiment files and fingerprints: `"openblas"` or `"faer"`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::OpenBlas => "openblas",
            Backend::Faer => "faer",
        }
    }

    /// The backend of a name (see [`Backend::name`]); `None` for any other text.
    pub fn from_name(name: &str) -> Option<Backend> {
        match name {
            "openblas" => Some(Backend::OpenBlas),
            "faer" => Some(Backend::Faer),
            _ => None,
        }
    }

    /// Every backend's name, for error messages.
    pub const NAMES: [&'static str; 2] = ["openblas", "faer"];
}

static F64_BACKEND: AtomicU8 = AtomicU8::new(0);

/// The `f64` backend in force (process-wide; [`Backend::OpenBlas`] unless set).
pub fn f64_backend() -> Backend {
    match F64_BACKEND.load(Ordering::Relaxed) {
        1 => Backend::Faer,
        _ => Backend::OpenBlas,
    }
}

/// Sets the process-wide `f64` backend and returns the one it replaces. Set it between computations, not
/// during one: a Gram formed while it changes may mix both arithmetics (each tile is one or the other).
///
/// ```
/// use rfx_linalg::{f64_backend, gram_cols, set_f64_backend, Backend};
/// let z = ndarray::array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
/// let before = set_f64_backend(Backend::Faer);
/// let g = gram_cols(z.view()).unwrap();
/// set_f64_backend(before);
/// // small integers: both backends are exact
/// assert_eq!(g, z.t().dot(&z));
/// assert_eq!(f64_backend(), before);
/// ```
pub fn set_f64_backend(backend: Backend) -> Backend {
    let code = match backend {
        Backend::OpenBlas => 0,
        Backend::Faer => 1,
    };
    match F64_BACKEND.swap(code, Ordering::Relaxed) {
        1 => Backend::Faer,
        _ => Backend::OpenBlas,
    }
}

/// Sets the `f64` backend while alive and restores the one before when dropped (what an experiment run
/// holds around its cells).
///
/// ```
/// use rfx_linalg::{f64_backend, Backend, BackendScope};
/// {
///     let _scope = BackendScope::new(Backend::Faer);
///     assert_eq!(f64_backend(), Backend::Faer);
/// }
/// assert_eq!(f64_backend(), Backend::OpenBlas);
/// ```
#[must_use = "the backend is set only while the scope is alive"]
pub struct BackendScope {
    previous: Backend,
}

impl BackendScope {
    /// Sets `backend` until the scope is dropped.
    pub fn new(backend: Backend) -> Self {
        BackendScope {
            previous: set_f64_backend(backend),
        }
    }
}

impl Drop for BackendScope {
    fn drop(&mut self) {
        set_f64_backend(self.previous);
    }
}
