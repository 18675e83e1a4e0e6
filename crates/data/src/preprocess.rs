//! Preprocessing: standardisation, row normalisation, seeded splits and subsamples, image down-scaling
//! (centre crop and average pooling), latitude/longitude to points of the unit sphere. One-hot targets are `rfx_solvers::ridge::one_hot`.
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

/// The point of the unit sphere $\mathbb{S}^2 \subset \mathbb{R}^3$ at latitude $\varphi$ and longitude
/// $\lambda$ (both in degrees): $(\cos\varphi \cos\lambda,\ \cos\varphi \sin\lambda,\ \sin\varphi)$. The
/// north pole ($\varphi = 90$) is $(0, 0, 1)$; latitude 0, longitude 0 is $(1, 0, 0)$; longitudes that differ
/// by 360 give the same point.
pub fn lat_lon_to_unit(lat_deg: f64, lon_deg: f64) -> [f64; 3] {
    let (sin_lat, cos_lat) = lat_deg.to_radians().sin_cos();
    let (sin_lon, cos_lon) = lon_deg.to_radians().sin_cos();
    [cos_lat * cos_lon, cos_lat * sin_lon, sin_lat]
}

/// Replaces the first two columns of `x`, latitude and longitude in degrees (as the `ferret/...` sets of
/// [`crate::load::read_lat_lon_grid`] hold them), by the three coordinates of [`lat_lon_to_unit`]; the
/// other columns (such as the month) follow unchanged. So an $n \times (2 + k)$ table becomes
/// $n \times (3 + k)$. Needs at least two columns, and latitudes in $[-90, 90]$ and longitudes that are finite.
pub fn lat_lon_to_sphere(x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if x.ncols() < 2 {
        return Err(RfxError::invalid(
            "columns",
            x.ncols(),
            "at least 2 (latitude, longitude)",
        ));
    }
    if let Some(row) = x
        .rows()
        .into_iter()
        .position(|r| !(r[0].abs() <= 90.0 && r[1].is_finite()))
    {
        return Err(RfxError::invalid(
            "latitude/longitude",
            format!("({}, {}) in row {}", x[[row, 0]], x[[row, 1]], row + 1),
            "a latitude in [-90, 90] and a finite longitude",
        ));
    }
    let k = x.ncols() - 2;
    let mut out = Array2::zeros((x.nrows(), 3 + k));
    for (r, mut o) in x.rows().into_iter().zip(out.rows_mut()) {
        let p = lat_lon_to_unit(r[0], r[1]);
        for j in 0..3 {
            o[j] = p[j];
        }
        for j in 0..k {
            o[3 + j] = r[2 + j];
        }
    }
    Ok(out)
}

/// How a table's raw input columns become a kernel's inputs, fitted on the training rows and applied to any
/// rows: every column standardised, or latitude and longitude mapped onto the sphere.
#[derive(Debug, Clone, PartialEq)]
pub enum InputMap {
    /// Every column standardised with the training statistics ([`Standardizer`]).
    Standardize(Standardizer),
    /// The first two columns, latitude and longitude in degrees, become the point of the unit sphere
    /// $\mathbb{S}^2 \subset \mathbb{R}^3$ ([`lat_lon_to_unit`]), which has no scale to fit; the other $k$
    /// columns (such as the month) are standardised with the training statistics. A row becomes a point of
    /// $[\mathbb{S}^2, \mathbb{R}^k]$, the domain of the random Gegenbauer features paper's spatial data sets
    /// (§6.2: "(latitude, longitude) → 3-D Cartesian", "the temporal value is appended").
    Sphere {
        /// The standardizer of the columns after latitude and longitude (`None` when there are none).
        extra: Option<Standardizer>,
    },
}

impl InputMap {
    /// Fits [`InputMap::Standardize`] on the training rows `x`.
    pub fn fit_standardize(x: ArrayView2<'_, f64>) -> Result<Self> {
        Ok(InputMap::Standardize(Standardizer::fit(x)?))
    }

    /// Fits [`InputMap::Sphere`] on the training rows `x`: at least two columns, latitudes in $[-90, 90]$
    /// and finite longitudes (checked when transforming).
    pub fn fit_sphere(x: ArrayView2<'_, f64>) -> Result<Self> {
        if x.ncols() < 2 {
            return Err(RfxError::invalid(
                "columns",
                x.ncols(),
                "at least 2 (latitude, longitude)",
            ));
        }
        let extra = if x.ncols() > 2 {
            Some(Standardizer::fit(x.slice(ndarray::s![.., 2..]))?)
        } else {
            None
        };
        Ok(InputMap::Sphere { extra })
    }

    /// The kernel inputs of the rows `x` (the columns the map was fitted on): $n \times d$ standardised,
    /// or $n \times (3 + k)$ on the sphere.
    pub fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        match self {
            InputMap::Standardize(st) => st.transform(x),
            InputMap::Sphere { extra } => {
                let k = extra.as_ref().map_or(0, |st| st.mean.len());
                if x.ncols() != 2 + k {
                    return Err(RfxError::DimensionMismatch(format!(
                        "sphere map fitted on {} columns applied to {}",
                        2 + k,
                        x.ncols()
                    )));
                }
                let mut out = lat_lon_to_sphere(x)?;
                if let Some(st) = extra {
                    let t = st.transform(x.slice(ndarray::s![.., 2..]))?;
                    out.slice_mut(ndarray::s![.., 3..]).assign(&t);
                }
                Ok(out)
            }
        }
    }

    /// Whether every transformed row has norm 1: the sphere with no other column. Maps with a unit-norm fast
    /// path (zonal kernels, $s = 1$ Gegenbauer features) can use it.
    pub fn unit_norm(&self) -> bool {
        matches!(self, InputMap::Sphere { extra: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn sphere_input_map_puts_lat_lon_on_the_sphere_and_standardises_the_rest() {
        // rows (lat, lon, month); the month column has mean 2 and population std sqrt(2/3)
        let x = array![[0.0, 0.0, 1.0], [90.0, 45.0, 2.0], [-30.0, 200.0, 3.0]];
        let map = InputMap::fit_sphere(x.view()).unwrap();
        assert!(!map.unit_norm());
        let z = map.transform(x.view()).unwrap();
        assert_eq!(z.dim(), (3, 4));
        for (i, r) in x.rows().into_iter().enumerate() {
            let p = lat_lon_to_unit(r[0], r[1]);
            for j in 0..3 {
                assert_eq!(z[[i, j]], p[j]);
            }
        }
        let sd = (2.0f64 / 3.0).sqrt();
        for (i, m) in [1.0, 2.0, 3.0].iter().enumerate() {
            assert!((z[[i, 3]] - (m - 2.0) / sd).abs() < 1e-15);
        }
        // applied to other rows with the training statistics; a wrong width is an error
        let t = map.transform(array![[10.0, 10.0, 5.0]].view()).unwrap();
        assert!((t[[0, 3]] - 3.0 / sd).abs() < 1e-15);
        assert!(map.transform(array![[10.0, 10.0]].view()).is_err());
        // latitude and longitude alone: unit norm, and a bad latitude names its row
        let ll = array![[10.0, 20.0], [-45.0, 170.0]];
        let map = InputMap::fit_sphere(ll.view()).unwrap();
        assert!(map.unit_norm());
        let z = map.transform(ll.view()).unwrap();
        for r in z.rows() {
            assert!((r.dot(&r) - 1.0).abs() < 4.0 * f64::EPSILON);
        }
        let e = map
            .transform(array![[10.0, 20.0], [95.0, 0.0]].view())
            .unwrap_err();
        assert!(e.to_string().contains("row 2"), "{e}");
        assert!(InputMap::fit_sphere(array![[1.0], [2.0]].view()).is_err());
        // the standardising map is the standardizer
        let st = InputMap::fit_standardize(x.view()).unwrap();
        assert!(!st.unit_norm());
        assert_eq!(
            st.transform(x.view()).unwrap(),
            Standardizer::fit(x.view())
                .unwrap()
                .transform(x.view())
                .unwrap()
        );
    }

    #[test]
    fn lat_lon_points_lie_on_the_unit_sphere() {
        // sin and cos are each within an ulp or so: the norm is 1 to a few ulps
        let tol = 4.0 * f64::EPSILON;
        for lat in (-90..=90).step_by(5) {
            for lon in (-180..=540).step_by(15) {
                let p = lat_lon_to_unit(f64::from(lat), f64::from(lon));
                let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
                assert!((norm - 1.0).abs() <= tol, "({lat}, {lon}): {norm}");
                let q = lat_lon_to_unit(f64::from(lat), f64::from(lon) - 360.0);
                assert!(p.iter().zip(q).all(|(a, b)| (a - b).abs() <= tol));
            }
        }
        let close = |p: [f64; 3], q: [f64; 3]| p.iter().zip(q).all(|(a, b)| (a - b).abs() <= tol);
        // the poles, whatever the longitude
        for lon in [-170.0, 0.0, 33.0] {
            assert!(close(lat_lon_to_unit(90.0, lon), [0.0, 0.0, 1.0]));
            assert!(close(lat_lon_to_unit(-90.0, lon), [0.0, 0.0, -1.0]));
        }
        assert!(close(lat_lon_to_unit(0.0, 0.0), [1.0, 0.0, 0.0]));
        assert!(close(lat_lon_to_unit(0.0, 90.0), [0.0, 1.0, 0.0]));
        assert!(close(lat_lon_to_unit(0.0, -180.0), [-1.0, 0.0, 0.0]));
        // latitude 60°N, longitude 45°E: cos 60° = 1/2, sin 60° = √3/2, cos 45° = sin 45° = √2/2
        let h = 0.5 * std::f64::consts::FRAC_1_SQRT_2;
        assert!(close(lat_lon_to_unit(60.0, 45.0), [h, h, 0.75f64.sqrt()]));
        // the angle between two points is their great-circle distance: 1° of latitude along a meridian
        let a = lat_lon_to_unit(10.0, 20.0);
        let b = lat_lon_to_unit(11.0, 20.0);
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        assert!((dot.acos().to_degrees() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn lat_lon_columns_become_three_with_the_rest_kept() {
        let x = array![[0.0, 0.0, 7.0], [90.0, 123.0, 12.0], [-30.0, 200.0, 1.0]];
        let s = lat_lon_to_sphere(x.view()).unwrap();
        assert_eq!(s.dim(), (3, 4));
        assert_eq!(s.column(3).to_vec(), vec![7.0, 12.0, 1.0]);
        for (row, orig) in s.rows().into_iter().zip(x.rows()) {
            let p = lat_lon_to_unit(orig[0], orig[1]);
            assert_eq!(row.slice(ndarray::s![..3]).to_vec(), p.to_vec());
        }
        assert!(lat_lon_to_sphere(array![[1.0], [2.0]].view()).is_err());
        let e = lat_lon_to_sphere(array![[0.0, 0.0], [91.0, 0.0]].view())
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2"), "{e}");
        assert!(lat_lon_to_sphere(array![[0.0, f64::NAN]].view()).is_err());
    }

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
