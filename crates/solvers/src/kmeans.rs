//! Kernel k-means on feature maps, through linfa-clustering.
//!
//! The kernel k-means objective (Gegenbauer paper §6.3 / App. A.2) is
//! $\sum_{i=1}^{k}\sum_{x_j \in C_i} \Vert\varphi(x_j) - \mu_i\Vert^2$; with features $z(x) \approx \varphi(x)$ it becomes
//! ordinary k-means on the rows of $Z$, $\min_C \Vert Z - Z C C^\top\Vert_F^2$. Following the paper ("average summation
//! of squared distance to the nearest cluster centers") the reported objective is divided by $n$.
//! With the exact kernel, the same partition has objective
//! $\frac1n\big(\sum_j K_{jj} - \sum_i \frac{1}{|C_i|}\sum_{j,j^\prime \in C_i} K_{jj^\prime}\big)$ ([`kernel_kmeans_objective`]).

use linfa::traits::Fit;
use linfa::DatasetBase;
use linfa_clustering::{KMeans, KMeansInit};
use linfa_nn::distance::Distance;
use ndarray::{Array2, ArrayView, ArrayView2, Dimension};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use rayon::prelude::*;
use rfx_core::{stream_seed, Kernel, Result, RfxError};

/// Parameters of [`kmeans`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KMeansParams {
    /// Number of clusters $k \ge 1$.
    pub k: usize,
    /// Independent k-means++ restarts; the best objective wins (sklearn's `n_init`, default 10).
    pub n_runs: usize,
    /// Lloyd iterations per run (default 300).
    pub max_iter: u64,
    /// Convergence tolerance on centroid movement (default $10^{-4}$).
    pub tolerance: f64,
    /// Seed; the RNG is a `Xoshiro256Plus` seeded from the rfx stream `(seed, "kmeans")`.
    pub seed: u64,
}

impl KMeansParams {
    /// $k$ clusters, 10 restarts, 300 iterations, tolerance $10^{-4}$.
    pub fn new(k: usize, seed: u64) -> Self {
        KMeansParams {
            k,
            n_runs: 10,
            max_iter: 300,
            tolerance: 1e-4,
            seed,
        }
    }

    /// Validates the parameters.
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 {
            return Err(RfxError::invalid("k", 0, "at least 1"));
        }
        if self.n_runs == 0 {
            return Err(RfxError::invalid("n_runs", 0, "at least 1"));
        }
        if self.max_iter == 0 {
            return Err(RfxError::invalid("max_iter", 0, "at least 1"));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(RfxError::invalid(
                "tolerance",
                self.tolerance,
                "finite and > 0",
            ));
        }
        Ok(())
    }
}

/// A k-means solution.
#[derive(Clone, Debug)]
pub struct KMeansResult {
    /// Centres ($k \times m$).
    pub centroids: Array2<f64>,
    /// Index of the nearest centre of every row.
    pub labels: Vec<usize>,
    /// Mean squared distance of the rows to their nearest centre.
    pub objective: f64,
}

/// Nearest-centre labels and the mean squared distance to the nearest centre.
///
/// The nearest centre is found from $\Vert z\Vert^2 - 2 z^\top c + \Vert c\Vert^2$ with one GEMM $Z C^\top$; the reported
/// distance to it is then recomputed directly as $\Vert z - c\Vert^2$ (no cancellation).
pub fn assign(z: ArrayView2<'_, f64>, centroids: ArrayView2<'_, f64>) -> Result<(Vec<usize>, f64)> {
    if z.ncols() != centroids.ncols() || centroids.nrows() == 0 || z.nrows() == 0 {
        return Err(RfxError::DimensionMismatch(format!(
            "points {:?} vs centroids {:?}",
            z.dim(),
            centroids.dim()
        )));
    }
    let cross = z.dot(&centroids.t());
    let cn: Vec<f64> = centroids.rows().into_iter().map(|c| c.dot(&c)).collect();
    let mut total = 0.0;
    let labels = cross
        .rows()
        .into_iter()
        .zip(z.rows())
        .map(|(cr, zr)| {
            let mut best = 0;
            let mut bd = f64::INFINITY;
            for (c, (&x, &n2)) in cr.iter().zip(&cn).enumerate() {
                let d = n2 - 2.0 * x;
                if d < bd {
                    best = c;
                    bd = d;
                }
            }
            let c = centroids.row(best);
            total += zr
                .iter()
                .zip(c.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>();
            best
        })
        .collect();
    Ok((labels, total / z.nrows() as f64))
}

/// The Euclidean distance of linfa's k-means (its `L2Dist`), with the reduced distance
/// $\Vert a - b\Vert^2$ by [`rfx_linalg::sq_dist`]: 16 partial sums in AVX2 instead of ndarray-stats'
/// sequential sum, where linfa's k-means spent 90 % of its time (perf, 10,992 × 512 features, k = 10).
/// Every view is summed in its logical order, so the result does not depend on the memory layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqEuclidean;

impl Distance<f64> for SqEuclidean {
    fn distance<D: Dimension>(&self, a: ArrayView<f64, D>, b: ArrayView<f64, D>) -> f64 {
        self.rdistance(a, b).sqrt()
    }

    fn rdistance<D: Dimension>(&self, a: ArrayView<f64, D>, b: ArrayView<f64, D>) -> f64 {
        assert_eq!(
            a.shape(),
            b.shape(),
            "distance between arrays of different shapes"
        );
        match (a.as_slice(), b.as_slice()) {
            (Some(x), Some(y)) => rfx_linalg::sq_dist(x, y),
            _ => {
                let (x, y): (Vec<f64>, Vec<f64>) =
                    (a.iter().copied().collect(), b.iter().copied().collect());
                rfx_linalg::sq_dist(&x, &y)
            }
        }
    }

    fn rdist_to_dist(&self, rdist: f64) -> f64 {
        rdist.sqrt()
    }

    fn dist_to_rdist(&self, dist: f64) -> f64 {
        dist * dist
    }
}

/// k-means on the rows of $Z$ ($n \times m$): k-means++ seeding, Lloyd iterations, `n_runs` restarts (linfa,
/// with the distance [`SqEuclidean`]).
pub fn kmeans(z: ArrayView2<'_, f64>, params: &KMeansParams) -> Result<KMeansResult> {
    params.validate()?;
    if z.nrows() < params.k {
        return Err(RfxError::invalid(
            "k",
            params.k,
            format!("at most n = {}", z.nrows()),
        ));
    }
    if !z.iter().all(|v| v.is_finite()) {
        return Err(RfxError::Numerical("kmeans: non-finite features".into()));
    }
    let rng = Xoshiro256Plus::seed_from_u64(stream_seed(params.seed, "kmeans"));
    let ds = DatasetBase::from(z.to_owned());
    let model = KMeans::params_with(params.k, rng, SqEuclidean)
        .n_runs(params.n_runs)
        .max_n_iterations(params.max_iter)
        .tolerance(params.tolerance)
        .init_method(KMeansInit::KMeansPlusPlus)
        .fit(&ds)
        .map_err(|e| RfxError::Numerical(format!("kmeans: {e}")))?;
    let centroids = model.centroids().clone();
    let (labels, objective) = assign(z, centroids.view())?;
    Ok(KMeansResult {
        centroids,
        labels,
        objective,
    })
}

/// Exact kernel k-means objective of a partition, divided by $n$:
/// $\frac1n\big(\sum_j K_{jj} - \sum_i \frac{1}{|C_i|}\sum_{j,j^\prime \in C_i} K_{jj^\prime}\big)$.
pub fn kernel_kmeans_objective(k: ArrayView2<'_, f64>, labels: &[usize]) -> Result<f64> {
    let n = k.nrows();
    if k.ncols() != n || labels.len() != n || n == 0 {
        return Err(RfxError::DimensionMismatch(format!(
            "Gram {:?} vs {} labels",
            k.dim(),
            labels.len()
        )));
    }
    let nc = labels.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nc];
    for (i, &c) in labels.iter().enumerate() {
        members[c].push(i);
    }
    // Σ_i (1/|C_i|) Σ_{j,j' ∈ C_i} K_jj', the row sums of each cluster in parallel (no BLAS inside), then added
    // in row order: rayon's own `sum` groups by how the work was split, which depends on the thread count
    let within: f64 = members
        .iter()
        .filter(|m| !m.is_empty())
        .map(|m| {
            let rows: Vec<f64> = m
                .par_iter()
                .map(|&j| m.iter().map(|&jj| k[[j, jj]]).sum::<f64>())
                .collect();
            rows.iter().sum::<f64>() / m.len() as f64
        })
        .sum();
    Ok((k.diag().sum() - within) / n as f64)
}

/// Rows of `x` per kernel block in [`kernel_kmeans_objective_of`] (bounds the block to `ROWS × |C_i|` entries).
const OBJECTIVE_BLOCK_ROWS: usize = 1024;

/// [`kernel_kmeans_objective`] of the partition `labels` of the rows of `x` under `kernel`, without forming the
/// $n \times n$ Gram: $K_{jj}$ from [`Kernel::eval`], and for each cluster $C_i$ the sum
/// $\sum_{j,j^\prime \in C_i} K_{jj^\prime}$ from [`Kernel::gram`] blocks of at most 1024 rows of $C_i$ against all of $C_i$
/// (memory $O(1024\thinspace|C_i|)$, time $O(\sum_i |C_i|^2 d)$). Blocks are summed in a fixed order, so the result
/// does not depend on the thread count.
pub fn kernel_kmeans_objective_of<K: Kernel + ?Sized>(
    kernel: &K,
    x: ArrayView2<'_, f64>,
    labels: &[usize],
) -> Result<f64> {
    let n = x.nrows();
    if labels.len() != n || n == 0 {
        return Err(RfxError::DimensionMismatch(format!(
            "{n} rows vs {} labels",
            labels.len()
        )));
    }
    let nc = labels.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nc];
    for (i, &c) in labels.iter().enumerate() {
        members[c].push(i);
    }
    let diag: f64 = x.rows().into_iter().map(|r| kernel.eval(r, r)).sum();
    let mut within = 0.0;
    for m in members.iter().filter(|m| !m.is_empty()) {
        let xc = x.select(ndarray::Axis(0), m);
        let mut s = 0.0;
        for start in (0..m.len()).step_by(OBJECTIVE_BLOCK_ROWS) {
            let end = (start + OBJECTIVE_BLOCK_ROWS).min(m.len());
            let block = kernel.gram(xc.slice(ndarray::s![start..end, ..]), xc.view())?;
            s += block.sum();
        }
        within += s / m.len() as f64;
    }
    Ok((diag - within) / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::randn;

    #[test]
    fn sq_euclidean_is_linfa_l2_distance_to_rounding_on_any_layout() {
        use linfa_nn::distance::L2Dist;
        let a = crate::testutil::randn(7, 37, 3);
        let b = crate::testutil::randn(7, 37, 4);
        let u = 2f64.powi(-53);
        for i in 0..7 {
            let (x, y) = (a.row(i), b.row(i));
            let ours = SqEuclidean.rdistance(x, y);
            let linfa = L2Dist.rdistance(x, y);
            // both sum the same rounded terms fl(fl(x−y)²) in different orders: within 2γ_m of each other
            let bound = 2.0 * 37.0 * u / (1.0 - 37.0 * u) * linfa;
            assert!((ours - linfa).abs() <= bound, "row {i}: {ours} vs {linfa}");
            assert_eq!(
                SqEuclidean.dist_to_rdist(SqEuclidean.distance(x, y)).sqrt(),
                ours.sqrt()
            );
        }
        // a 2-D distance (linfa's convergence test) and a transposed (non-contiguous) view: summed in the
        // logical order, so the transpose of both gives the sum of the same terms
        let whole = SqEuclidean.rdistance(a.view(), b.view());
        let linfa = L2Dist.rdistance(a.view(), b.view());
        assert!((whole - linfa).abs() <= 2.0 * 259.0 * u / (1.0 - 259.0 * u) * linfa);
        let (at, bt) = (a.t(), b.t());
        let transposed = SqEuclidean.rdistance(at, bt);
        assert!((transposed - whole).abs() <= 2.0 * 259.0 * u / (1.0 - 259.0 * u) * whole);
        assert_eq!(
            transposed.to_bits(),
            SqEuclidean
                .rdistance(
                    at.as_standard_layout().view(),
                    bt.as_standard_layout().view()
                )
                .to_bits()
        );
    }

    #[test]
    fn recovers_separated_blobs_and_objectives_agree() {
        let (n, d, k) = (300, 4, 3);
        let mut z = randn(n, d, 1).mapv(|v| 0.2 * v);
        let truth: Vec<usize> = (0..n).map(|i| i % k).collect();
        for (i, &c) in truth.iter().enumerate() {
            z[[i, c]] += 5.0;
        }
        let res = kmeans(z.view(), &KMeansParams::new(k, 3)).unwrap();
        // purity: every found cluster is one true cluster
        for c in 0..k {
            let members: Vec<usize> = (0..n)
                .filter(|&i| res.labels[i] == c)
                .map(|i| truth[i])
                .collect();
            assert!(!members.is_empty() && members.iter().all(|&t| t == members[0]));
        }
        // the objective is the within-cluster variance: E‖ε‖² = d·0.04 = 0.16, up to sampling error
        assert!(
            (res.objective - 0.16).abs() < 0.03,
            "objective {}",
            res.objective
        );
        // with the linear kernel K = ZZᵀ, the exact kernel objective of the partition equals the feature objective
        let kk = z.dot(&z.t());
        let exact = kernel_kmeans_objective(kk.view(), &res.labels).unwrap();
        assert!(
            (exact - res.objective).abs() < 1e-10 * res.objective.max(1.0),
            "{exact} vs {}",
            res.objective
        );
        // deterministic under the seed
        let again = kmeans(z.view(), &KMeansParams::new(k, 3)).unwrap();
        assert_eq!(again.labels, res.labels);
    }

    /// The Gaussian kernel of width 1 (from `rfx-kernels`).
    fn gauss() -> rfx_kernels::GaussianKernel {
        rfx_kernels::GaussianKernel::new(1.0).unwrap()
    }

    #[test]
    fn blocked_objective_equals_full_gram_objective() {
        // 2500 rows: the largest cluster spans three row blocks
        let x = randn(2500, 3, 21);
        let labels: Vec<usize> = (0..2500).map(|i| if i % 7 == 0 { 1 } else { 0 }).collect();
        let k = gauss().gram(x.view(), x.view()).unwrap();
        let full = kernel_kmeans_objective(k.view(), &labels).unwrap();
        let blocked = kernel_kmeans_objective_of(&gauss(), x.view(), &labels).unwrap();
        assert!((full - blocked).abs() < 1e-10, "{full} vs {blocked}");
        assert!(kernel_kmeans_objective_of(&gauss(), x.view(), &labels[1..]).is_err());
    }

    #[test]
    fn assign_matches_brute_force() {
        let z = randn(200, 7, 11);
        let c = randn(9, 7, 12);
        let (labels, obj) = assign(z.view(), c.view()).unwrap();
        let mut total = 0.0;
        for (i, r) in z.rows().into_iter().enumerate() {
            let d: Vec<f64> = c
                .rows()
                .into_iter()
                .map(|cr| (&r - &cr).mapv(|v| v * v).sum())
                .collect();
            let best = (0..9).min_by(|&a, &b| d[a].total_cmp(&d[b])).unwrap();
            assert_eq!(labels[i], best);
            total += d[best];
        }
        assert!((obj - total / 200.0).abs() < 1e-12 * obj);
    }

    #[test]
    fn invalid_params() {
        let z = randn(5, 2, 1);
        assert!(kmeans(z.view(), &KMeansParams::new(0, 1)).is_err());
        assert!(kmeans(z.view(), &KMeansParams::new(6, 1)).is_err());
        let mut p = KMeansParams::new(2, 1);
        p.n_runs = 0;
        assert!(kmeans(z.view(), &p).is_err());
        assert!(kernel_kmeans_objective(z.view(), &[0, 1]).is_err());
    }
}
