//! Nyström features for any [`Kernel`], with uniform or recursive ridge-leverage-score landmarks.
//!
//! For landmarks $S$ with $K_{SS} = U \Lambda U^\top$, the features are
//! $z(x) = \Lambda_r^{-1/2} U_r^\top k_S(x)$, keeping the $r$ eigenvalues $\lambda_i > \text{rcond}\cdot\lambda_{\max}$
//! (`random-gegenbauer-features.md` §8 item 6), so that
//! $\langle z(x), z(y)\rangle = k_S(x)^\top K_{SS}^{+} k_S(y)$ and $Z Z^\top = K_{XS} K_{SS}^+ K_{SX} \preceq K$.
//!
//! Landmark selection:
//! * [`LandmarkSampling::Uniform`]: $s$ points uniformly without replacement (the simple baseline; label it
//!   "uniform Nyström" in results);
//! * [`LandmarkSampling::RecursiveRls`]: recursive ridge-leverage-score sampling (Musco & Musco 2017,
//!   "Recursive sampling for the Nyström method", Alg. 2/3), following the reference algorithm written out
//!   in §8 item 6: halve a random permutation repeatedly, then climb back up, estimating the λ-ridge leverage
//!   scores of each level from the landmarks of the level below,
//!   $\ell_i = \frac{1}{\lambda}\big(K_{ii} - K_{iS}(K_{SS} + \lambda W^{-2})^{-1}K_{Si}\big)$, with
//!   $\lambda = \big(\sum_j K_{jj} w_j^2 - \sum_{j \le k} |\mu_j(W K_{SS} W)|\big)/k$, $k = \lceil s/(4\ln s)\rceil$,
//!   keeping each point with probability $\min(1, \ln(s)\thinspace\ell_i)$ and, at the top level, drawing exactly $s$
//!   points without replacement with probabilities $\propto \min(1, \ell_i)$;
//! * [`LandmarkSampling::KmeansPlusPlus`]: the k-means++ seeding of Arthur & Vassilvitskii (2007) in the kernel's
//!   feature space ([`kmeans_pp`]), the landmarks of Zhang, Tsang & Kwok (2008, "Improved Nyström low-rank
//!   approximation and error analysis") without their Lloyd iterations, so that landmarks stay rows of the data.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use rand::seq::{index, SliceRandom};
use rand::Rng;
use rfx_core::{FeatureMap, Kernel, Result, RfxError, RfxRng};
use rfx_linalg::{eigh, eigvalsh, Cholesky};

/// How Nyström landmarks are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LandmarkSampling {
    /// Uniformly without replacement.
    Uniform,
    /// Recursive ridge-leverage-score sampling (Musco & Musco 2017).
    #[default]
    RecursiveRls,
    /// Kernel k-means++ seeding (Arthur & Vassilvitskii 2007) in the kernel's feature space ([`kmeans_pp`]).
    KmeansPlusPlus,
}

/// Parameters of [`Nystrom::fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NystromParams {
    /// Number of landmarks $s \ge 1$ (capped at $n$).
    pub landmarks: usize,
    /// Landmark selection.
    pub sampling: LandmarkSampling,
    /// Relative eigenvalue cut-off for the pseudo-inverse square root of $K_{SS}$ (default $10^{-10}$).
    pub rcond: f64,
}

impl NystromParams {
    /// $s$ landmarks by recursive RLS sampling, rcond $10^{-10}$.
    pub fn new(landmarks: usize) -> Self {
        NystromParams {
            landmarks,
            sampling: LandmarkSampling::RecursiveRls,
            rcond: 1e-10,
        }
    }

    /// How much the map amplifies the rounding of its inputs, at most: $1/\text{rcond}$. The features
    /// $z(x) = \Lambda_r^{-1/2} U_r^\top k_S(x)$ keep eigenvalues down to $\text{rcond}\cdot\lambda_{\max}$; a
    /// perturbation $\delta K$ of $K_{SS}$ of relative size $\epsilon$ (other BLAS kernels rounding the same
    /// products differently) moves the kept eigenpairs' contributions by up to
    /// $\epsilon\thinspace\lambda_{\max}/\lambda_i \le \epsilon/\text{rcond}$ (Weyl and Davis–Kahan, relative to the
    /// eigenvalue), so the same cell computed on two machine kinds agrees to about $\epsilon/\text{rcond}$
    /// ($1.1\cdot 10^{-6}$ at the default), not to $\epsilon$.
    pub fn rounding_amplification(&self) -> f64 {
        1.0 / self.rcond.max(f64::EPSILON)
    }

    /// Sets the sampling scheme.
    pub fn sampling(mut self, sampling: LandmarkSampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// Checks `landmarks >= 1` and `0 <= rcond < 1`.
    pub fn validate(&self) -> Result<()> {
        if self.landmarks == 0 {
            return Err(RfxError::invalid("landmarks", 0, "at least 1"));
        }
        if !(self.rcond >= 0.0 && self.rcond < 1.0) {
            return Err(RfxError::invalid("rcond", self.rcond, "in [0, 1)"));
        }
        Ok(())
    }
}

/// A fitted Nyström feature map.
#[derive(Clone, Debug)]
pub struct Nystrom<K> {
    kernel: K,
    landmarks: Array2<f64>,
    indices: Vec<usize>,
    /// $U_r \Lambda_r^{-1/2}$ ($s \times r$).
    proj: Array2<f64>,
}

impl<K: Kernel> Nystrom<K> {
    /// Chooses landmarks among the rows of `x` and factors $K_{SS}$.
    pub fn fit(
        kernel: K,
        x: ArrayView2<'_, f64>,
        params: &NystromParams,
        rng: &mut RfxRng,
    ) -> Result<Self> {
        params.validate()?;
        let n = x.nrows();
        if n == 0 || x.ncols() == 0 {
            return Err(RfxError::invalid(
                "x",
                format!("{:?}", x.dim()),
                "at least one row and column",
            ));
        }
        let s = params.landmarks.min(n);
        let mut indices = match params.sampling {
            LandmarkSampling::Uniform => index::sample(rng, n, s).into_vec(),
            LandmarkSampling::RecursiveRls => recursive_rls(&kernel, x, s, rng)?,
            LandmarkSampling::KmeansPlusPlus => kmeans_pp(&kernel, x, s, rng)?,
        };
        indices.sort_unstable();
        let landmarks = x.select(Axis(0), &indices);
        let kss = kernel.gram(landmarks.view(), landmarks.view())?;
        let e = eigh(kss.view())?;
        let lmax = e.values.iter().fold(0.0f64, |m, &v| m.max(v));
        if lmax <= 0.0 {
            return Err(RfxError::Numerical(
                "Nyström: landmark Gram has no positive eigenvalue".into(),
            ));
        }
        let keep: Vec<usize> = (0..s)
            .filter(|&i| e.values[i] > params.rcond * lmax)
            .collect();
        let mut proj = e.vectors.select(Axis(1), &keep);
        for (mut col, &i) in proj.axis_iter_mut(Axis(1)).zip(&keep) {
            col /= e.values[i].sqrt();
        }
        Ok(Nystrom {
            kernel,
            landmarks,
            indices,
            proj,
        })
    }

    /// Row indices (into the fitting data, ascending) of the landmarks.
    pub fn landmark_indices(&self) -> &[usize] {
        &self.indices
    }
}

impl<K: Kernel> FeatureMap for Nystrom<K> {
    fn input_dim(&self) -> usize {
        self.landmarks.ncols()
    }

    /// $r \le s$: the number of retained eigenvalues of $K_{SS}$.
    fn dim(&self) -> usize {
        self.proj.ncols()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let kxs = self.kernel.gram(x, self.landmarks.view())?;
        Ok(kxs.dot(&self.proj))
    }
}

/// Draws `s` distinct indices with probabilities proportional to `w` (sequential sampling without
/// replacement, by Efraimidis–Spirakis keys $u^{1/w}$); zero weights are drawn last, uniformly.
fn weighted_without_replacement(w: &[f64], s: usize, rng: &mut RfxRng) -> Vec<usize> {
    let mut keys: Vec<(f64, usize)> = w
        .iter()
        .enumerate()
        .map(|(i, &wi)| {
            let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
            let key = if wi > 0.0 {
                u.ln() / wi
            } else {
                f64::NEG_INFINITY
            };
            // ties among zero weights broken uniformly by a second draw
            (
                if key.is_finite() {
                    key
                } else {
                    -1e300 * (1.0 + u)
                },
                i,
            )
        })
        .collect();
    keys.sort_by(|a, b| b.0.total_cmp(&a.0));
    keys.into_iter().take(s).map(|(_, i)| i).collect()
}

/// The selections every landmark sampler shares: an error for $s = 0$, all $n$ rows when $s \ge n$, `None`
/// when there is a choice to make.
fn every_row_or_none(n: usize, s: usize) -> Result<Option<Vec<usize>>> {
    if s == 0 {
        return Err(RfxError::invalid("landmarks", 0, "at least 1"));
    }
    Ok((s >= n).then(|| (0..n).collect()))
}

/// $s$ distinct rows of `x` by k-means++ seeding in the feature space $\phi$ of `kernel` (Arthur &
/// Vassilvitskii 2007, §2.2, with $\Vert\phi(x) - \phi(c)\Vert^2 = k(x, x) + k(c, c) - 2k(x, c)$): the first
/// uniformly, each next one with probability $\propto D(x)^2$, the squared feature-space distance to the
/// nearest row already chosen. Rows at distance 0 from the chosen ones (duplicates) are never drawn while
/// others remain; if all remaining rows are at distance 0, the next one is uniform among them, so the $s$ rows
/// are always distinct. Cost: $s$ kernel columns, $O(nsd)$; every draw from `rng`, in row order.
pub fn kmeans_pp<K: Kernel + ?Sized>(
    kernel: &K,
    x: ArrayView2<'_, f64>,
    s: usize,
    rng: &mut RfxRng,
) -> Result<Vec<usize>> {
    let n = x.nrows();
    if let Some(all) = every_row_or_none(n, s)? {
        return Ok(all);
    }
    let diag: Vec<f64> = x.rows().into_iter().map(|r| kernel.eval(r, r)).collect();
    let mut chosen = vec![false; n];
    let mut d2 = vec![f64::INFINITY; n];
    let mut picked = Vec::with_capacity(s);
    let mut next = rng.gen_range(0..n);
    loop {
        chosen[next] = true;
        picked.push(next);
        if picked.len() == s {
            return Ok(picked);
        }
        let c = x.slice(ndarray::s![next..next + 1, ..]);
        let kc = kernel.gram(x, c)?;
        for i in 0..n {
            let dist = (diag[i] + diag[next] - 2.0 * kc[[i, 0]]).max(0.0);
            d2[i] = d2[i].min(if chosen[i] { 0.0 } else { dist });
        }
        let total: f64 = d2.iter().sum();
        next = if total > 0.0 && total.is_finite() {
            let mut u = rng.gen::<f64>() * total;
            let mut pick = None;
            for (i, &w) in d2.iter().enumerate() {
                if w > 0.0 {
                    pick = Some(i);
                    if u < w {
                        break;
                    }
                    u -= w;
                }
            }
            pick.expect("a row with D² > 0 exists when the total is > 0")
        } else {
            let rest: Vec<usize> = (0..n).filter(|&i| !chosen[i]).collect();
            rest[rng.gen_range(0..rest.len())]
        };
    }
}

/// Recursive ridge-leverage-score landmark selection (Musco & Musco 2017); returns `s` distinct row indices.
pub fn recursive_rls<K: Kernel + ?Sized>(
    kernel: &K,
    x: ArrayView2<'_, f64>,
    s: usize,
    rng: &mut RfxRng,
) -> Result<Vec<usize>> {
    let n = x.nrows();
    if let Some(all) = every_row_or_none(n, s)? {
        return Ok(all);
    }
    let oversamp = (s as f64).ln().max(1.0);
    let k = ((s as f64) / (4.0 * oversamp)).ceil() as usize;
    let n_levels = ((n as f64) / (s as f64)).log2().ceil().max(1.0) as usize;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(rng);
    let mut sizes = vec![n];
    for i in 1..=n_levels {
        sizes.push(sizes[i - 1].div_ceil(2));
    }
    // positions into `perm` of the current landmarks, and their weights
    let mut samp: Vec<usize> = (0..sizes[n_levels]).collect();
    let mut weights = vec![1.0; samp.len()];
    for level in (0..n_levels).rev() {
        let size = sizes[level];
        let curr: Vec<usize> = perm[..size].to_vec();
        let r_ind: Vec<usize> = samp.iter().map(|&p| perm[p]).collect();
        let xc = x.select(Axis(0), &curr);
        let xr = x.select(Axis(0), &r_ind);
        let ks = kernel.gram(xc.view(), xr.view())?; // size × |samp|
        let sks = ks.select(Axis(0), &samp);
        let ns = samp.len();
        let w = Array1::from(weights.clone());
        let mut lam = if k >= ns {
            1e-5
        } else {
            let mut wsw = sks.clone();
            for i in 0..ns {
                for j in 0..ns {
                    wsw[[i, j]] *= w[i] * w[j];
                }
            }
            let mut ev: Vec<f64> = eigvalsh(wsw.view())?.iter().map(|v| v.abs()).collect();
            ev.sort_by(|a, b| b.total_cmp(a));
            let tr: f64 = (0..ns).map(|i| sks[[i, i]] * w[i] * w[i]).sum();
            (tr - ev[..k].iter().sum::<f64>()) / k as f64
        };
        if !(lam.is_finite() && lam > 0.0) {
            lam = 1e-5;
        }
        let mut a = sks.clone();
        for i in 0..ns {
            a[[i, i]] += lam / (w[i] * w[i]);
        }
        let chol = match Cholesky::factor(a.clone()) {
            Ok(c) => c,
            Err(_) => {
                let jitter = 1e-10 * (0..ns).map(|i| a[[i, i]]).sum::<f64>().max(1e-300);
                for i in 0..ns {
                    a[[i, i]] += jitter;
                }
                Cholesky::factor(a)?
            }
        };
        // (K_S R K_Sᵀ)_ii = ‖C^{-1} K_S[i,:]ᵀ‖²
        let mut y = ks.t().as_standard_layout().to_owned();
        chol.solve_lower_inplace(&mut y)?;
        let quad = y.map_axis(Axis(0), |c| c.dot(&c));
        let lev: Vec<f64> = (0..size)
            .map(|i| (kernel.eval(xc.row(i), xc.row(i)) - quad[i]).max(0.0) / lam)
            .collect();
        if level != 0 {
            let p: Vec<f64> = lev.iter().map(|&l| (oversamp * l).min(1.0)).collect();
            let kept: Vec<usize> = (0..size).filter(|&i| rng.gen::<f64>() < p[i]).collect();
            if kept.is_empty() {
                samp = index::sample(rng, size, s.min(size)).into_vec();
                weights = vec![1.0; samp.len()];
            } else {
                weights = kept.iter().map(|&i| 1.0 / p[i].sqrt()).collect();
                samp = kept;
            }
        } else {
            let p: Vec<f64> = lev.iter().map(|&l| l.min(1.0)).collect();
            samp = weighted_without_replacement(&p, s, rng);
        }
    }
    Ok(samp.into_iter().map(|p| perm[p]).collect())
}

/// The Nyström map of `kernel` as a [`rfx_core::Fit`]: data-dependent, its landmarks are chosen among the
/// fitting rows ([`Nystrom::fit`]).
#[derive(Clone, Debug)]
pub struct NystromFit<K> {
    /// The kernel $k$ whose Gram $K_{SS}$ is factored.
    pub kernel: K,
    /// Landmarks and their selection.
    pub params: NystromParams,
}

impl<K: Kernel + Clone + 'static> rfx_core::Fit for NystromFit<K> {
    type Map = Nystrom<K>;
    fn fit_map(&self, data: rfx_core::FitData<'_>, rng: &mut RfxRng) -> Result<Nystrom<K>> {
        Nystrom::fit(
            self.kernel.clone(),
            data.rows("Nystrom")?,
            &self.params,
            rng,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectral::kernel_errors_gram;
    use crate::testutil::randn;
    use rand::SeedableRng;
    use rfx_linalg::eigvalsh;

    /// The Gaussian kernel of width σ (from `rfx-kernels`).
    fn rbf(sigma: f64) -> rfx_kernels::GaussianKernel {
        rfx_kernels::GaussianKernel::new(sigma).unwrap()
    }

    #[test]
    fn all_points_as_landmarks_reproduce_k() {
        let x = randn(60, 3, 1);
        let k = rbf(1.0).gram(x.view(), x.view()).unwrap();
        for sampling in [
            LandmarkSampling::Uniform,
            LandmarkSampling::RecursiveRls,
            LandmarkSampling::KmeansPlusPlus,
        ] {
            let mut rng = RfxRng::seed_from_u64(7);
            let ny = Nystrom::fit(
                rbf(1.0),
                x.view(),
                &NystromParams::new(60).sampling(sampling),
                &mut rng,
            )
            .unwrap();
            assert_eq!(ny.landmark_indices().len(), 60);
            let z = ny.transform(x.view()).unwrap();
            let e = kernel_errors_gram(k.view(), z.dot(&z.t()).view()).unwrap();
            // dropped eigenvalues are < 1e-10 λmax, so ‖K - ZZᵀ‖_F ≤ n·1e-10·λmax ≪ 1e-7 ‖K‖_F
            eprintln!(
                "{sampling:?}, s = n: relative Frobenius error {:e}",
                e.rel_frobenius
            );
            assert!(
                e.rel_frobenius < 1e-7,
                "{sampling:?}: relative Frobenius error {:e}",
                e.rel_frobenius
            );
        }
    }

    #[test]
    fn nystrom_is_a_lower_approximation_and_rls_works() {
        // two clusters, one tiny and far away: the leverage of its points is high
        let mut x = randn(400, 2, 2).mapv(|v| 0.5 * v);
        for i in 0..8 {
            x[[i, 0]] += 20.0;
        }
        let kern = rbf(1.0);
        let k = kern.gram(x.view(), x.view()).unwrap();
        let mut far_rls = 0;
        let mut far_unif = 0;
        for seed in 0..5 {
            let mut rng = RfxRng::seed_from_u64(seed);
            let idx = recursive_rls(&kern, x.view(), 40, &mut rng).unwrap();
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 40, "distinct landmarks");
            far_rls += idx.iter().filter(|&&i| i < 8).count();
            let mut rng = RfxRng::seed_from_u64(seed);
            far_unif += index::sample(&mut rng, 400, 40)
                .into_iter()
                .filter(|&i| i < 8)
                .count();
        }
        eprintln!("far points picked over 5 runs: RLS {far_rls}, uniform {far_unif}");
        // uniform expects 5·40·8/400 = 4 far points in total; leverage scores ≈ 1 for each isolated point
        // (s_λ-share of a cluster of 8 near-identical points is ≈ 1) make RLS pick several per run (measured 20)
        assert!(
            far_rls >= 10,
            "RLS picked {far_rls} far points, uniform {far_unif}"
        );
        let mut rng = RfxRng::seed_from_u64(9);
        let ny = Nystrom::fit(kern, x.view(), &NystromParams::new(40), &mut rng).unwrap();
        let z = ny.transform(x.view()).unwrap();
        // K - ZZᵀ = Schur complement ⪰ 0
        let ev = eigvalsh((&k - &z.dot(&z.t())).view()).unwrap();
        assert!(ev[0] > -1e-8, "min eigenvalue of K - ZZᵀ: {}", ev[0]);
        assert!(ny.transform(randn(3, 5, 1).view()).is_err());
        assert!(Nystrom::fit(kern, x.view(), &NystromParams::new(0), &mut rng).is_err());
    }

    #[test]
    fn kmeans_pp_seeds_one_landmark_per_far_cluster() {
        // three clusters of 30 rows, spread 0.01, 20 apart: for the Gaussian kernel of width 1 a row's squared
        // feature-space distance is ≈ 1e-4 to its own cluster's chosen row and ≈ 2 to another cluster's, so
        // once a cluster holds a landmark, the next draw falls in it with probability ≈ 30·1e-4 / (2·30) ≈ 5e-5:
        // D² sampling covers the three clusters with 3 landmarks in every seed (all 20 here), where uniform
        // sampling does with probability 3!·30³ / (90·89·88) ≈ 0.23
        let mut x = randn(90, 2, 4).mapv(|v| 0.01 * v);
        for i in 0..90 {
            x[[i, 0]] += 20.0 * (i / 30) as f64;
        }
        let kern = rbf(1.0);
        let clusters = |idx: &[usize]| {
            let mut c: Vec<usize> = idx.iter().map(|&i| i / 30).collect();
            c.sort_unstable();
            c.dedup();
            c.len()
        };
        let (mut pp, mut unif) = (0, 0);
        for seed in 0..20 {
            let mut rng = RfxRng::seed_from_u64(seed);
            let idx = kmeans_pp(&kern, x.view(), 3, &mut rng).unwrap();
            pp += usize::from(clusters(&idx) == 3);
            let mut rng = RfxRng::seed_from_u64(seed);
            unif += usize::from(clusters(&index::sample(&mut rng, 90, 3).into_vec()) == 3);
        }
        eprintln!("all three clusters covered in 20 seeds: k-means++ {pp}, uniform {unif}");
        assert_eq!(pp, 20, "k-means++ covered all clusters in {pp} of 20 seeds");
        assert!(unif < 20);
        // distinct rows even when the data are duplicates: 10 copies of 2 rows, 5 landmarks
        let mut dup = Array2::zeros((20, 2));
        for i in 10..20 {
            dup[[i, 0]] = 1.0;
        }
        let mut rng = RfxRng::seed_from_u64(1);
        let mut idx = kmeans_pp(&kern, dup.view(), 5, &mut rng).unwrap();
        idx.sort_unstable();
        idx.dedup();
        assert_eq!(idx.len(), 5);
        // the two distinct rows are both among the landmarks (D² = 0 for the rest once both are chosen)
        assert!(idx.iter().any(|&i| i < 10) && idx.iter().any(|&i| i >= 10));
    }
}
