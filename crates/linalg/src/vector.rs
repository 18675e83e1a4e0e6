//! Level-1 kernels on slices for sequential inner loops (coordinate descent), where a BLAS call per
//! coordinate costs as much as the arithmetic: [`dot`], [`sq_dist`] and [`axpy`] with a fixed order of
//! operations; and the small products [`matmul_nn`] and [`matmul_tn`] made of those row updates (a
//! convolutional network's per-image products, whose bits must not depend on the CPU or the thread count).

/// Partial sums of [`dot`]: lanes of four 4-wide vectors (AVX2), so that four independent additions hide
/// the adder's latency.
const LANES: usize = 16;

/// $x^\top y = \sum_i x_i y_i$ in a fixed order: sixteen partial sums $s_k = \sum_{i \equiv k \bmod 16} x_i y_i$
/// over the first $16\lfloor n/16 \rfloor$ entries, added pairwise ($s_k + s_{k+8}$, then $+4$, $+2$, $+1$),
/// then the tail in index order.
///
/// No fused multiply-add: the same result bit for bit on every x86-64 CPU, with AVX2 (detected at run time)
/// or without. Rounding: $|\mathrm{fl}(x^\top y) - x^\top y| \le \gamma_{n/16 + 5}\thinspace |x|^\top |y|$
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1, for a sum of depth $n/16 + 5$), within the
/// bound $\gamma_n$ of the naive sum.
///
/// # Panics
/// If the lengths differ (a programming error of the caller).
///
/// ```
/// let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
/// let y = vec![2.0; 100];
/// assert_eq!(rfx_linalg::dot(&x, &y), 9900.0);
/// ```
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(
        x.len(),
        y.len(),
        "dot of slices of lengths {} and {}",
        x.len(),
        y.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `dot_avx2`.
        return unsafe { dot_avx2(x, y) };
    }
    dot_portable(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(x: &[f64], y: &[f64]) -> f64 {
    dot_portable(x, y)
}

#[inline(always)]
pub(crate) fn dot_portable(x: &[f64], y: &[f64]) -> f64 {
    lane_sum(x, y, |a, b| a * b)
}

/// $\Vert x - y\Vert^2 = \sum_i (x_i - y_i)^2$ in the order of [`dot`] (sixteen partial sums added pairwise,
/// then the tail), each term rounded as $\mathrm{fl}(\mathrm{fl}(x_i - y_i)^2)$; no fused multiply-add, so
/// the same bits on every x86-64 CPU, with AVX2 when the CPU has it. The reduced distance of k-means.
///
/// # Panics
/// If the lengths differ (a programming error of the caller).
///
/// ```
/// assert_eq!(rfx_linalg::sq_dist(&[1.0, 2.0, 3.0], &[1.0, 0.0, 0.0]), 13.0);
/// ```
pub fn sq_dist(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(
        x.len(),
        y.len(),
        "sq_dist of slices of lengths {} and {}",
        x.len(),
        y.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `sq_dist_avx2`.
        return unsafe { sq_dist_avx2(x, y) };
    }
    sq_dist_portable(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sq_dist_avx2(x: &[f64], y: &[f64]) -> f64 {
    sq_dist_portable(x, y)
}

#[inline(always)]
pub(crate) fn sq_dist_portable(x: &[f64], y: &[f64]) -> f64 {
    lane_sum(x, y, |a, b| (a - b) * (a - b))
}

/// $\sum_i t(x_i, y_i)$ in sixteen partial sums $s_k$ over the indices $\equiv k \bmod 16$ of the whole
/// chunks, added pairwise, then the tail in index order.
#[inline(always)]
fn lane_sum(x: &[f64], y: &[f64], term: impl Fn(f64, f64) -> f64) -> f64 {
    let mut s = [0.0f64; LANES];
    let (xc, yc) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..LANES {
            s[k] += term(a[k], b[k]);
        }
    }
    let mut width = LANES / 2;
    while width > 0 {
        for k in 0..width {
            s[k] += s[k + width];
        }
        width /= 2;
    }
    let mut total = s[0];
    for (a, b) in xr.iter().zip(yr) {
        total += term(*a, *b);
    }
    total
}

/// $y \leftarrow y + \alpha x$, each entry rounded once per operation ($\alpha x_i$, then the sum; no fused
/// multiply-add), so the same bits on every x86-64 CPU; AVX2 when the CPU has it.
///
/// # Panics
/// If the lengths differ (a programming error of the caller).
///
/// ```
/// let mut y = vec![1.0; 3];
/// rfx_linalg::axpy(2.0, &[1.0, 2.0, 3.0], &mut y);
/// assert_eq!(y, [3.0, 5.0, 7.0]);
/// ```
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    assert_eq!(
        x.len(),
        y.len(),
        "axpy of slices of lengths {} and {}",
        x.len(),
        y.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `axpy_avx2`.
        unsafe { axpy_avx2(alpha, x, y) };
        return;
    }
    axpy_portable(alpha, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn axpy_avx2(alpha: f64, x: &[f64], y: &mut [f64]) {
    axpy_portable(alpha, x, y);
}

#[inline(always)]
pub(crate) fn axpy_portable(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// $C = AB$ for row-major $A$ ($m \times k$), $B$ ($k \times n$) and $C$ ($m \times n$, overwritten), row by
/// row as [`axpy`] updates: $C_{i\cdot} = 0$, then $C_{i\cdot} \leftarrow C_{i\cdot} + A_{il} B_{l\cdot}$ for
/// $l = 0, \dots, k-1$, skipping the $A_{il} = 0$. Every entry is therefore the sum
/// $\sum_l A_{il} B_{lj}$ taken from $0$ in the order of $l$, each product and sum rounded once (no fused
/// multiply-add): the bits of the naive loop, on every x86-64 CPU (AVX2 when it has it) and for any thread
/// count. For the small products of one image's convolutions, where a BLAS call's blocking would change the
/// bits with the CPU and its set-up costs as much as the arithmetic.
///
/// # Panics
/// If a slice's length is not the product of its dimensions (a programming error of the caller).
///
/// ```
/// // [1 2; 0 3] · [1 0; 1 1]
/// let mut c = [0.0; 4];
/// rfx_linalg::matmul_nn(&[1.0, 2.0, 0.0, 3.0], &[1.0, 0.0, 1.0, 1.0], &mut c, (2, 2, 2));
/// assert_eq!(c, [3.0, 2.0, 3.0, 3.0]);
/// ```
pub fn matmul_nn(a: &[f64], b: &[f64], c: &mut [f64], (m, k, n): (usize, usize, usize)) {
    check_dims(a, b, c, (m, k, n));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `matmul_nn_avx2`.
        unsafe { matmul_nn_avx2(a, b, c, (k, n)) };
        return;
    }
    matmul_nn_portable(a, b, c, (k, n));
}

/// $C = A^\top B$ for row-major $A$ ($k \times m$), $B$ ($k \times n$) and $C$ ($m \times n$, overwritten): the
/// numbers of [`matmul_nn`] applied to $A^\top$ — every entry $\sum_l A_{li} B_{lj}$ taken from $0$ in the
/// order of $l$, the $A_{li} = 0$ skipped — with $A$ read row by row ($l$ outer, which leaves each entry's
/// order of terms unchanged).
///
/// # Panics
/// If a slice's length is not the product of its dimensions (a programming error of the caller).
///
/// ```
/// // [1 0; 2 3]ᵀ · [1 0; 1 1] = [1 2; 0 3] · [1 0; 1 1]
/// let mut c = [0.0; 4];
/// rfx_linalg::matmul_tn(&[1.0, 0.0, 2.0, 3.0], &[1.0, 0.0, 1.0, 1.0], &mut c, (2, 2, 2));
/// assert_eq!(c, [3.0, 2.0, 3.0, 3.0]);
/// ```
pub fn matmul_tn(a: &[f64], b: &[f64], c: &mut [f64], (m, k, n): (usize, usize, usize)) {
    check_dims(a, b, c, (m, k, n));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `matmul_tn_avx2`.
        unsafe { matmul_tn_avx2(a, b, c, (m, n)) };
        return;
    }
    matmul_tn_portable(a, b, c, (m, n));
}

fn check_dims(a: &[f64], b: &[f64], c: &[f64], (m, k, n): (usize, usize, usize)) {
    assert!(
        a.len() == m * k && b.len() == k * n && c.len() == m * n,
        "matmul of {m}x{k} by {k}x{n} with slices of lengths {}, {}, {}",
        a.len(),
        b.len(),
        c.len()
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn matmul_nn_avx2(a: &[f64], b: &[f64], c: &mut [f64], kn: (usize, usize)) {
    matmul_nn_portable(a, b, c, kn);
}

#[inline(always)]
pub(crate) fn matmul_nn_portable(a: &[f64], b: &[f64], c: &mut [f64], (k, n): (usize, usize)) {
    c.fill(0.0);
    if k == 0 || n == 0 {
        return;
    }
    for (crow, arow) in c.chunks_exact_mut(n).zip(a.chunks_exact(k)) {
        for (&av, brow) in arow.iter().zip(b.chunks_exact(n)) {
            if av != 0.0 {
                axpy_portable(av, brow, crow);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn matmul_tn_avx2(a: &[f64], b: &[f64], c: &mut [f64], mn: (usize, usize)) {
    matmul_tn_portable(a, b, c, mn);
}

#[inline(always)]
fn matmul_tn_portable(a: &[f64], b: &[f64], c: &mut [f64], (m, n): (usize, usize)) {
    c.fill(0.0);
    if m == 0 || n == 0 {
        return;
    }
    for (arow, brow) in a.chunks_exact(m).zip(b.chunks_exact(n)) {
        for (&av, crow) in arow.iter().zip(c.chunks_exact_mut(n)) {
            if av != 0.0 {
                axpy_portable(av, brow, crow);
            }
        }
    }
}
