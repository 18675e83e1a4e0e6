//! Preprocessing: standardisation, row normalisation, seeded splits and subsamples, image down-scaling
//! (centre crop and average pooling). One-hot targets are `rfx_solvers::ridge::one_hot`.
//!
//! Random choices use [`rfx_core::rng_stream`]`(seed, key)`, so a split is a fixed function of the
//! number of rows, the fraction, the seed and the key.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, Result, RfxError};
use serde::{Deserialize, Serialize};

/// Per-column affine standardisation `(x - mean) / std`, fitted on training data and applied to any data.
///
/// The standard deviation is the population one (divisor `n`), so the transformed training columns have
/// mean 0 and standard deviation exactly 1. A column whose standard deviation is zero (constant) or not
/// finite gets `std = 1`: it is only centred and becomes all zeros on the training data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standardizer {
    /// Column means of the training data.
    pub mean: Array1<f64>,
    /// Column standard deviations of the training data (1 for constant columns).
    pub std: Array1<f64>,
}

/// Relative size below which a standard deviation counts as zero (constant column up to rounding).
const ZERO_STD_REL: f64 = 1e-12;

impl Standardizer {
    /// Fits the means and standard deviations of the columns of `x` (at least one row).
    pub fn fit(x: ArrayView2<'_, f64>) -> Result<Self> {
        let n = x.nrows();
        if n == 0 {
            return Err(RfxError::invalid(
                "rows",
                0,
                "at least 1 row to fit a standardizer",
            ));
        }
        let mean = x.mean_axis(Axis(0)).expect("n > 0");
        let mut std = Array1::zeros(x.ncols());
        for (j, col) in x.columns().into_iter().enumerate() {
            let m = mean[j];
            let var = col.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
            let s = var.sqrt();
            let scale = col.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            std[j] = if s.is_finite() && s > ZERO_STD_REL * scale.max(f64::MIN_POSITIVE) {
                s
            } else {
                1.0
            };
        }
        Ok(Standardizer { mean, std })
    }

    /// Fits a standardizer for a single variable (a regression target).
    pub fn fit_vector(y: ArrayView1<'_, f64>) -> Result<Self> {
        Self::fit(y.insert_axis(Axis(1)))
    }

    fn check(&self, ncols: usize) -> Result<()> {
        if ncols == self.mean.len() {
            Ok(())
        } else {
            Err(RfxError::DimensionMismatch(format!(
                "standardizer fitted on {} columns applied to {ncols}",
                self.mean.len()
            )))
        }
    }

    /// `(x - mean) / std`, column by column.
    pub fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check(x.ncols())?;
        Ok((&x - &self.mean) / &self.std)
    }

    /// The inverse map `x * std + mean`.
    pub fn inverse_transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check(x.ncols())?;
        Ok(&x * &self.std + &self.mean)
    }

    /// Standardises a single variable with a standardizer from [`Standardizer::fit_vector`].
    pub fn transform_vector(&self, y: ArrayView1<'_, f64>) -> Result<Array1<f64>> {
        self.check(1)?;
        Ok(y.mapv(|v| (v - self.mean[0]) / self.std[0]))
    }

    /// The inverse of [`Standardizer::transform_vector`].
    pub fn inverse_transform_vector(&self, y: ArrayView1<'_, f64>) -> Result<Array1<f64>> {
        self.check(1)?;
        Ok(y.mapv(|v| v * self.std[0] + self.mean[0]))
    }
}

/// Scales every row of `x` to unit Euclidean norm in place; all-zero rows are left as they are.
pub fn normalize_rows(x: &mut Array2<f64>) {
    for mut row in x.rows_mut() {
        let norm = row.dot(&row).sqrt();
        if norm > 0.0 {
            row /= norm;
        }
    }
}

/// Row indices of a train/test split; both lists are sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

/// A random split of `n` rows with `round(test_fraction · n)` test rows, from the stream `(seed, key)`.
///
/// `test_fraction` must lie in `[0, 1]`. The same arguments always give the same split.
pub fn train_test_split(n: usize, test_fraction: f64, seed: u64, key: &str) -> Result<Split> {
    if !(0.0..=1.0).contains(&test_fraction) {
        return Err(RfxError::invalid("test_fraction", test_fraction, "[0, 1]"));
    }
    let n_test = ((test_fraction * n as f64).round() as usize).min(n);
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng_stream(seed, key));
    let mut test = perm[..n_test].to_vec();
    let mut train = perm[n_test..].to_vec();
    test.sort_unstable();
    train.sort_unstable();
    Ok(Split { train, test })
}

/// `m` distinct row indices out of `n`, sorted, drawn uniformly from the stream `(seed, key)`.
pub fn subsample(n: usize, m: usize, seed: u64, key: &str) -> Result<Vec<usize>> {
    if m > n {
        return Err(RfxError::invalid(
            "subsample size",
            m,
            format!("0..={n} (the number of rows)"),
        ));
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let (chosen, _) = idx.partial_shuffle(&mut rng_stream(seed, key), m);
    let mut out = chosen.to_vec();
    out.sort_unstable();
    Ok(out)
}

/// Down-scales a `side`×`side` image (row-major pixels): the centre `crop`×`crop` window, offset
/// $\lfloor(\text{side} - \text{crop})/2\rfloor$ in both directions, then `pool`×`pool` average pooling, giving
/// $\lfloor\text{crop}/\text{pool}\rfloor^2$ pixels (row-major); a remainder of the crop beyond the last whole pool
/// is dropped. Output pixel $(i, j)$ is $\frac{1}{p^2}\sum_{a,b<p} x_{o + ip + a,\ o + jp + b}$ ($p$ = `pool`,
/// $o$ the offset): the down-scaled Fashion-MNIST of the NTK-sketching paper's CNTK experiments
/// (Zandieh et al. 2021, Sec. 5). Requires `img.len() == side²` and $1 \le$ `pool` $\le$ `crop` $\le$ `side`.
pub fn crop_pool(img: &[f64], side: usize, crop: usize, pool: usize) -> Result<Vec<f64>> {
    if img.len() != side * side {
        return Err(RfxError::DimensionMismatch(format!(
            "crop_pool: an image of {} pixels is not {side} x {side}",
            img.len()
        )));
    }
    if !(1..=side).contains(&crop) {
        return Err(RfxError::invalid("crop", crop, format!("1..={side}")));
    }
    if !(1..=crop).contains(&pool) {
        return Err(RfxError::invalid("pool", pool, format!("1..={crop}")));
    }
    let off = (side - crop) / 2;
    let out_side = crop / pool;
    let mut out = vec![0.0; out_side * out_side];
    for (k, o) in out.iter_mut().enumerate() {
        let (i, j) = (k / out_side, k % out_side);
        let mut acc = 0.0;
        for a in 0..pool {
            for b in 0..pool {
                acc += img[(off + i * pool + a) * side + off + j * pool + b];
            }
        }
        *o = acc / (pool * pool) as f64;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn standardize_fits_on_train_and_applies_to_test() {
        let train = array![
            [1.0, 5.0, -2.0],
            [2.0, 5.0, 0.0],
            [6.0, 5.0, 8.0],
            [3.0, 5.0, 2.0]
        ];
        let s = Standardizer::fit(train.view()).unwrap();
        let z = s.transform(train.view()).unwrap();
        for j in 0..3 {
            let c = z.column(j);
            let mean = c.mean().unwrap();
            let std = (c.mapv(|v| v * v).mean().unwrap() - mean * mean).sqrt();
            assert!(mean.abs() < 1e-12, "column {j} mean {mean}");
            if j == 1 {
                assert_eq!(std, 0.0, "constant column becomes zeros");
                assert!(c.iter().all(|&v| v == 0.0));
            } else {
                assert!((std - 1.0).abs() < 1e-12, "column {j} std {std}");
            }
        }
        // Test data uses the training statistics.
        let test = array![[3.0, 7.0, 2.0]];
        let zt = s.transform(test.view()).unwrap();
        assert!((zt[[0, 0]] - (3.0 - 3.0) / s.std[0]).abs() < 1e-15);
        assert_eq!(zt[[0, 1]], 2.0);
        let back = s.inverse_transform(zt.view()).unwrap();
        assert!((&back - &test).iter().all(|d| d.abs() < 1e-12));
        assert!(s.transform(array![[1.0, 2.0]].view()).is_err());
        assert!(Standardizer::fit(Array2::<f64>::zeros((0, 2)).view()).is_err());

        let y = array![1.0, 3.0];
        let sy = Standardizer::fit_vector(y.view()).unwrap();
        assert_eq!(sy.transform_vector(y.view()).unwrap(), array![-1.0, 1.0]);
        assert_eq!(
            sy.inverse_transform_vector(array![0.0].view()).unwrap(),
            array![2.0]
        );
    }

    #[test]
    fn rows_are_normalized() {
        let mut x = array![[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]];
        normalize_rows(&mut x);
        assert_eq!(x, array![[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]]);
    }

    #[test]
    fn split_sizes_and_determinism() {
        let s = train_test_split(1000, 0.25, 7, "split").unwrap();
        assert_eq!((s.train.len(), s.test.len()), (750, 250));
        let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
        assert_eq!(s, train_test_split(1000, 0.25, 7, "split").unwrap());
        assert_ne!(s, train_test_split(1000, 0.25, 8, "split").unwrap());
        assert_ne!(s, train_test_split(1000, 0.25, 7, "other").unwrap());
        assert_eq!(train_test_split(10, 0.0, 1, "k").unwrap().test.len(), 0);
        assert_eq!(train_test_split(10, 1.0, 1, "k").unwrap().train.len(), 0);
        assert_eq!(train_test_split(5, 0.5, 1, "k").unwrap().test.len(), 3); // round(2.5) = 3
        assert!(train_test_split(10, 1.5, 1, "k").is_err());
        assert!(train_test_split(10, f64::NAN, 1, "k").is_err());
    }

    #[test]
    fn subsample_is_seeded_and_distinct() {
        let a = subsample(100, 30, 3, "sub").unwrap();
        assert_eq!(a.len(), 30);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert!(a.iter().all(|&i| i < 100));
        assert_eq!(a, subsample(100, 30, 3, "sub").unwrap());
        assert_ne!(a, subsample(100, 30, 4, "sub").unwrap());
        assert_eq!(subsample(5, 5, 0, "k").unwrap(), vec![0, 1, 2, 3, 4]);
        assert!(subsample(5, 6, 0, "k").is_err());
    }

    #[test]
    fn crop_and_pool_average_the_centre() {
        // image value = row index: the centre 24x24 crop starts at row 2, 2x2 pooling averages rows 2k+2, 2k+3
        let img: Vec<f64> = (0..28 * 28).map(|k| (k / 28) as f64).collect();
        let out = crop_pool(&img, 28, 24, 2).unwrap();
        assert_eq!(out.len(), 144);
        for (k, v) in out.iter().enumerate() {
            let i = k / 12;
            assert_eq!(*v, (2 * i + 2) as f64 + 0.5);
        }
        // no crop, no pool: identity
        assert_eq!(crop_pool(&img, 28, 28, 1).unwrap(), img);
        // shapes are checked
        assert!(crop_pool(&img[1..], 28, 24, 2).is_err());
        assert!(crop_pool(&img, 28, 29, 2).is_err());
        assert!(crop_pool(&img, 28, 24, 0).is_err());
        assert!(crop_pool(&img, 28, 4, 5).is_err());
    }
}
