//! How a fitted map or an exact kernel is applied to rows, the same way for `rfx features`, `rfx gram`
//! and the Python package, so that their outputs agree bit for bit:
//!
//! * a map's random draws come from the stream [`feature_stream`] of the seed and the method's name;
//! * rows are transformed in fixed chunks of [`FEATURE_CHUNK`] rows ([`transform_rows`]) and a Gram is
//!   computed in fixed chunks of [`GRAM_CHUNK`] rows of $X$ against all of $Y$ ([`gram_rows`]), the chunks
//!   in parallel on the current rayon pool. Chunk boundaries sit at fixed row indices, so the numbers do
//!   not depend on the thread count (with one OpenBLAS thread per task, `rfx_linalg::set_blas_threads`).

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
    let chunks: Vec<ArrayView2<'_, f64>> = x.axis_chunks_iter(Axis(0), FEATURE_CHUNK).collect();
    if chunks.len() <= 1 {
        return map.transform(x);
    }
    let parts = chunks
        .par_iter()
        .map(|c| map.transform(*c))
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

fn stack(parts: &[Array2<f64>]) -> rfx_core::Result<Array2<f64>> {
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
}
