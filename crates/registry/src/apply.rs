//! How a fitted map or an exact kernel is applied to rows, the same way for `rfx features`, `rfx gram`
//! and the Python package, so that their outputs agree bit for bit:
//!
//! * a map's random draws come from the stream [`feature_stream`] of the seed and the method's name;
//! * rows are transformed in fixed chunks of [`FEATURE_CHUNK`] rows ([`transform_rows`]) and a Gram is
//!   computed in fixed chunks of [`GRAM_CHUNK`] rows of $X$ against all of $Y$ ([`gram_rows`]), the chunks
//!   in parallel on the current rayon pool. Chunk boundaries sit at fixed row indices, so the numbers do
//!   not depend on the thread count (with one OpenBLAS thread per task, `rfx_linalg::set_blas_threads`);
//! * the Gram of the rows with themselves, $K(X, X)$, is computed in fixed square tiles of [`GRAM_CHUNK`]
//!   rows of which only those on or above the diagonal are evaluated ([`gram_self_rows`]): half the
//!   kernel evaluations, and $K$ exactly symmetric.

use ndarray::{concatenate, s, Array2, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{rng_stream, FeatureMap, Kernel, RfxError, RfxRng};

/// Rows per chunk transformed by one task.
pub const FEATURE_CHUNK: usize = 256;

/// Rows of $X$ per chunk of a Gram block (the unit of parallel work).
pub const GRAM_CHUNK: usize = 64;

/// The random stream a map of method `method` is fitted with for seed `seed`:
/// `rng_stream(seed, "rfx features;method=<method>")`.
pub fn feature_stream(seed: u64, method: &str) -> RfxRng {
    rng_stream(seed, &format!("rfx features;method={method}"))
}

/// The features of the rows of `x`, computed in chunks of [`FEATURE_CHUNK`] rows in parallel and
/// stacked in row order.
pub fn transform_rows(
    map: &dyn FeatureMap,
    x: ArrayView2<'_, f64>,
) -> rfx_core::Result<Array2<f64>> {
    in_feature_chunks(x, |c| map.transform(c))
}

/// [`transform_rows`] for `f32` rows: [`FeatureMap::transform_f32`] on the same fixed chunks (an `f32`
/// GEMM for the maps with [`FeatureMap::native_f32`], the `f64` features rounded once for the others).
pub fn transform_rows_f32(
    map: &dyn FeatureMap,
    x: ArrayView2<'_, f32>,
) -> rfx_core::Result<Array2<f32>> {
    in_feature_chunks(x, |c| map.transform_f32(c))
}

/// `transform` on the fixed chunks of [`FEATURE_CHUNK`] rows of `x`, in parallel, stacked in row order
/// (one call when `x` is a single chunk).
fn in_feature_chunks<T: Sync + Clone>(
    x: ArrayView2<'_, T>,
    transform: impl Fn(ArrayView2<'_, T>) -> rfx_core::Result<Array2<T>> + Sync,
) -> rfx_core::Result<Array2<T>>
where
    Array2<T>: Send,
{
    let chunks: Vec<ArrayView2<'_, T>> = x.axis_chunks_iter(Axis(0), FEATURE_CHUNK).collect();
    if chunks.len() <= 1 {
        return transform(x);
    }
    let parts = chunks
        .par_iter()
        .map(|c| transform(*c))
        .collect::<rfx_core::Result<Vec<_>>>()?;
    stack(&parts)
}

/// The Gram matrix $K_{ij} = k(x_i, y_j)$, computed in chunks of [`GRAM_CHUNK`] rows of `x` in parallel
/// and stacked in row order.
pub fn gram_rows(
    kernel: &dyn Kernel,
    x: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
) -> rfx_core::Result<Array2<f64>> {
    let nx = x.nrows();
    if nx <= GRAM_CHUNK {
        return kernel.gram(x, y);
    }
    let starts: Vec<usize> = (0..nx).step_by(GRAM_CHUNK).collect();
    let parts = starts
        .par_iter()
        .map(|&s0| kernel.gram(x.slice(s![s0..(s0 + GRAM_CHUNK).min(nx), ..]), y))
        .collect::<rfx_core::Result<Vec<_>>>()?;
    stack(&parts)
}

/// Rows `rows` of the self-Gram $K_{ij} = k(x_i, x_j)$ of the rows of `x`, from fixed tiles of
/// [`GRAM_CHUNK`] × [`GRAM_CHUNK`] rows: tile $(a, b)$ with $a \le b$ is `kernel.gram` of row chunks $a$ and
/// $b$, tile $(b, a)$ its transpose, and a diagonal tile keeps its upper triangle mirrored, so $K$ is
/// exactly symmetric. Each needed tile is evaluated once, the tiles in parallel. For all rows that is
/// $T(T+1)/2$ tiles of $T^2$ ($T$ chunks): half the kernel evaluations of [`gram_rows`]`(x, x)`. For a
/// block of rows (`rfx gram` streaming $K$ in blocks) the tiles left of the diagonal are evaluated as
/// their transposes, so every block size gives the same numbers. `rows` must start on a multiple of
/// [`GRAM_CHUNK`] (and end on one, or at the last row).
pub fn gram_self_rows(
    kernel: &dyn Kernel,
    x: ArrayView2<'_, f64>,
    rows: std::ops::Range<usize>,
) -> rfx_core::Result<Array2<f64>> {
    let n = x.nrows();
    if rows.start % GRAM_CHUNK != 0
        || rows.start > rows.end
        || rows.end > n
        || (rows.end % GRAM_CHUNK != 0 && rows.end != n)
    {
        return Err(RfxError::DimensionMismatch(format!(
            "self-Gram rows {rows:?} of {n}: a block must start on a multiple of {GRAM_CHUNK}"
        )));
    }
    let chunk = |c: usize| c * GRAM_CHUNK..((c + 1) * GRAM_CHUNK).min(n);
    let n_chunks = n.div_ceil(GRAM_CHUNK);
    let (first, last) = (rows.start / GRAM_CHUNK, rows.end.div_ceil(GRAM_CHUNK));
    // the unordered tile pairs (a ≤ b) that the block needs, each once
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for a in first..last {
        pairs.extend((0..a).map(|b| (b, a)));
        pairs.extend((a..n_chunks).map(|b| (a, b)));
    }
    pairs.sort_unstable();
    pairs.dedup();
    let tiles = pairs
        .par_iter()
        .map(|&(a, b)| {
            let mut t = kernel.gram(x.slice(s![chunk(a), ..]), x.slice(s![chunk(b), ..]))?;
            if a == b {
                for i in 0..t.nrows() {
                    for j in 0..i {
                        t[[i, j]] = t[[j, i]];
                    }
                }
            }
            Ok(t)
        })
        .collect::<rfx_core::Result<Vec<_>>>()?;
    let mut out = Array2::zeros((rows.len(), n));
    for (&(a, b), t) in pairs.iter().zip(&tiles) {
        if (first..last).contains(&a) {
            let r = chunk(a);
            out.slice_mut(s![r.start - rows.start..r.end - rows.start, chunk(b)])
                .assign(t);
        }
        if a != b && (first..last).contains(&b) {
            let r = chunk(b);
            out.slice_mut(s![r.start - rows.start..r.end - rows.start, chunk(a)])
                .assign(&t.t());
        }
    }
    Ok(out)
}

fn stack<T: Clone>(parts: &[Array2<T>]) -> rfx_core::Result<Array2<T>> {
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    concatenate(Axis(0), &views)
        .map_err(|e| RfxError::DimensionMismatch(format!("row chunks: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::Rng;
    use rfx_core::FitData;

    fn rows(n: usize, d: usize) -> Array2<f64> {
        let mut rng = rng_stream(3, "apply rows");
        Array2::from_shape_fn((n, d), |_| rng.gen_range(-1.0..1.0))
    }

    /// The chunked transform is the chunks' transforms stacked in order (so a row's features are those of
    /// its fixed chunk, whatever the thread count), and the same as one call for row-wise maps.
    #[test]
    fn transform_rows_stacks_the_fixed_chunks() {
        let x = rows(2 * FEATURE_CHUNK + 37, 5);
        let spec = crate::method("rff").unwrap();
        let p = spec.params_from::<&str>(&[]).unwrap();
        let map = spec
            .fit(64, &p, FitData::Dim(5), &mut feature_stream(1, "rff"))
            .unwrap();
        let z = transform_rows(map.as_ref(), x.view()).unwrap();
        assert_eq!(z.dim(), (x.nrows(), 64));
        for (i, c) in x.axis_chunks_iter(Axis(0), FEATURE_CHUNK).enumerate() {
            let part = map.transform(c).unwrap();
            let s0 = i * FEATURE_CHUNK;
            assert_eq!(z.slice(s![s0..s0 + c.nrows(), ..]), part);
        }
    }

    /// `transform_rows_f32` on the same chunks: the maps that compute in `f32` (dense Fourier frequencies,
    /// arc-cosine features) within $10^{-5}$ of the largest feature of the `f64` path (their own tests hold
    /// the exact forward error bounds), every other map exactly the `f64` features rounded once.
    #[test]
    fn transform_rows_f32_is_the_f32_path_or_the_rounded_f64_features() {
        let x = rows(2 * FEATURE_CHUNK + 37, 5).mapv(|v| v as f32);
        let xw = x.mapv(f64::from);
        for (name, params, native) in [
            ("rff", vec![], true),
            ("rff", vec![("phase", "random")], true),
            ("orf", vec![], true),
            ("qmc", vec![], true),
            ("arccos", vec![], true),
            ("arccos", vec![("order", "0")], true),
            ("sorf", vec![], false),
            ("fastfood", vec![], false),
            ("maclaurin", vec![], false),
            ("ntk-sketch", vec![], false),
        ] {
            let spec = crate::method(name).unwrap();
            let given: Vec<_> = params
                .iter()
                .map(|&(k, v)| (k, crate::RawValue::from(v)))
                .collect();
            let p = spec.params_from(&given).unwrap();
            let map = spec
                .fit(64, &p, FitData::Dim(5), &mut feature_stream(1, name))
                .unwrap();
            assert_eq!(map.native_f32(), native, "{name} {params:?}");
            let z32 = transform_rows_f32(map.as_ref(), x.view()).unwrap();
            let z = transform_rows(map.as_ref(), xw.view()).unwrap();
            assert_eq!(z32.dim(), z.dim());
            if native {
                let top = z.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                let diff = z32
                    .iter()
                    .zip(z.iter())
                    .fold(0.0f64, |a, (p, q)| a.max((f64::from(*p) - q).abs()));
                // Step features (arc-cosine order 0) may flip where a projection rounds across 0:
                // none do on these rows
                assert!(diff <= 1e-5 * top, "{name} {params:?}: {diff:e} vs {top:e}");
            } else {
                assert_eq!(z32, z.mapv(|v| v as f32), "{name} {params:?}");
            }
        }
    }

    /// The chunked Gram is the chunks' Grams stacked in order; for the exact NTK it equals the entrywise
    /// kernel.
    #[test]
    fn gram_rows_stacks_the_fixed_chunks() {
        let x = rows(2 * GRAM_CHUNK + 5, 4);
        let y = rows(9, 4);
        let spec = crate::kernel("ntk").unwrap();
        let k = spec.build(&spec.params_from::<&str>(&[]).unwrap()).unwrap();
        let g = gram_rows(k.as_ref(), x.view(), y.view()).unwrap();
        assert_eq!(g.dim(), (x.nrows(), 9));
        for (i, c) in x.axis_chunks_iter(Axis(0), GRAM_CHUNK).enumerate() {
            let s0 = i * GRAM_CHUNK;
            assert_eq!(
                g.slice(s![s0..s0 + c.nrows(), ..]),
                k.gram(c, y.view()).unwrap()
            );
        }
        for (i, xi) in x.rows().into_iter().enumerate().step_by(17) {
            for (j, yj) in y.rows().into_iter().enumerate() {
                let e = k.eval(xi, yj);
                assert!((g[[i, j]] - e).abs() <= 1e-12 * e.abs().max(1.0), "{i} {j}");
            }
        }
    }

    /// The self-Gram is exactly symmetric, equals the full Gram to rounding and the entrywise kernel, and
    /// any block of rows is the same rows of the whole (so `rfx gram --block-rows` does not change it).
    #[test]
    fn self_gram_is_symmetric_and_blocks_agree() {
        let x = rows(3 * GRAM_CHUNK + 11, 5);
        let n = x.nrows();
        for name in ["gaussian", "ntk", "polynomial"] {
            let spec = crate::kernel(name).unwrap();
            let k = spec.build(&spec.params_from::<&str>(&[]).unwrap()).unwrap();
            let whole = gram_self_rows(k.as_ref(), x.view(), 0..n).unwrap();
            assert_eq!(whole, whole.t(), "{name}: not exactly symmetric");
            let full = gram_rows(k.as_ref(), x.view(), x.view()).unwrap();
            let scale = full.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let gap = (&whole - &full).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(gap <= 1e-13 * scale, "{name}: {gap} from the full Gram");
            for (i, j) in [(0, 0), (5, 200), (200, 5), (n - 1, 64), (130, 131)] {
                let e = k.eval(x.row(i), x.row(j));
                assert!(
                    (whole[[i, j]] - e).abs() <= 1e-12 * e.abs().max(1.0),
                    "{name} {i} {j}"
                );
            }
            for block in [GRAM_CHUNK, 2 * GRAM_CHUNK] {
                for start in (0..n).step_by(block) {
                    let end = (start + block).min(n);
                    let part = gram_self_rows(k.as_ref(), x.view(), start..end).unwrap();
                    assert_eq!(
                        part,
                        whole.slice(s![start..end, ..]),
                        "{name}: block {start}..{end}"
                    );
                }
            }
        }
        let spec = crate::kernel("gaussian").unwrap();
        let k = spec.build(&spec.params_from::<&str>(&[]).unwrap()).unwrap();
        assert!(gram_self_rows(k.as_ref(), x.view(), 3..70).is_err());
        assert!(gram_self_rows(k.as_ref(), x.view(), 0..n + 1).is_err());
        assert!(gram_self_rows(k.as_ref(), x.view(), 0..70).is_err());
    }
}
