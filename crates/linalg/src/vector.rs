//! Level-1 kernels on slices for sequential inner loops (coordinate descent), where a BLAS call per
//! coordinate costs as much as the arithmetic: [`dot`], [`sq_dist`] and [`axpy`] with a fixed order of
//! operations.

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
