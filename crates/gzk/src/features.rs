//! Random Gegenbauer features (paper Definition 8) as a [`FeatureMap`].
//!
//! Draw $m$ directions $w_1,\dots,w_m$ i.i.d. uniform on $\mathbb{S}^{d-1}$ (normalised standard Gaussians).
//! The feature vector of $x \in \mathbb{R}^d$ has $m \cdot s$ entries,
//! $$z(x)\_{k s + i} = \frac{1}{\sqrt m}\thinspace[\phi_x(w_k)]\_i,\qquad
//!   \phi_x(w) = \sum_{\ell=0}^{q}\sqrt{\alpha_{\ell,d}}\thickspace h_\ell(\Vert x\Vert)\thickspace P_d^\ell\negthinspace\left(\Big\langle \frac{x}{\Vert x\Vert}, w\Big\rangle\right)
//!   \in \mathbb{R}^s$$
//! (Lemma 5 with the truncated radial functions of Eqs. 22–23), so that by the reproducing property (Lemma 1)
//! $\mathbb{E}\thinspace\langle z(x), z(y)\rangle = k_{q,s}(x,y)$, the truncated GZK ([`TruncatedGzk`]) — unbiased for the
//! truncated kernel, not for the exact one (research notes §12 item 21).
//!
//! Computation for $n$ rows: the cosines $T = \hat X W^\top$ by one GEMM (rows in blocks of 2048, written into
//! the output block by block, no temporary of the output's size), then per row one fused pass: $P_d^0,\dots,
//! P_d^q$ of the row's cosines by the three-term recurrence (the one of [`crate::gegenbauer_for_each`]) on
//! L1-sized chunks of directions, each degree combined with the radial weights $\sqrt{\alpha_{\ell,d}}\thinspace
//! h_\ell(\Vert x_j\Vert)/\sqrt m$ (log space) into $s$ planar accumulators as it is produced, interleaved once at the
//! end. The loops vectorise (an AVX2 copy is chosen at run time, without fused multiply-add, so the values are
//! bit-identical on every x86-64 CPU). Cost $O(nmd + nmqs)$ time, $O(m \cdot s)$ memory per row plus
//! $2048 \times m$ doubles for the cosines. Rows run in parallel (rayon) and are computed independently:
//! results do not depend on the thread count. Throughput: `experiments/benches/maps.rs` and
//! `results/performance.md`.
//!
//! Variance: one direction's features are bounded by $B(\Vert x\Vert) = \sum_{\ell\le q}\sqrt{\alpha_{\ell,d}}
//! \Vert h_\ell(\Vert x\Vert)\Vert$ ([`TruncatedGzk::feature_norm_bound`]) and $\alpha_{\ell,d}$ grows like $\ell^{d-2}$, so in
//! high dimension (or at large $q$) many directions are needed — the paper's losses for $d \ge 9$.
//!
//! Unit-norm fast path ([`RandomGegenbauerParams::unit_norm`]): for inputs on the sphere $s = 1$ and
//! $h_\ell \equiv \sqrt{c_\ell}$ with $c_\ell$ the Gegenbauer coefficients of the kernel on the sphere (Lemma 2),
//! $z_k(x) = m^{-1/2}\sum_{\ell\le q}\sqrt{c_\ell\thinspace\alpha_{\ell,d}}\thinspace P_d^\ell(\langle x, w_k\rangle)$.

use ndarray::{s, Array2, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis};
use rand::Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};

use crate::gegenbauer::Basis;
use crate::zonal::{row_norms, unit_rows, Gzk, TruncatedGzk, MAX_DEGREE, PAR_ENTRIES};

/// Rows are transformed in blocks of this many (one GEMM each; bounds the memory of the cosine matrix).
const ROW_BLOCK: usize = 2048;

/// Rows are handed to rayon in groups of at least this many cosines (amortises the task overhead).
const SUB_ENTRIES: usize = 1 << 13;

/// Directions per chunk of the fused per-row kernel: its two work arrays, the cosines and $s \le 4$
/// accumulator chunks (≤ 14 KiB) stay in the L1 cache through all $q$ degrees.
const DIRECTION_CHUNK: usize = 256;

/// How far from 1 a row norm may be on the unit-norm fast path.
pub const UNIT_NORM_TOLERANCE: f64 = 1e-6;

/// Parameters of random Gegenbauer features (Definition 8). Defaults through the constructors; check with
/// [`RandomGegenbauerParams::validate`], draw with [`RandomGegenbauerParams::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct RandomGegenbauerParams {
    /// The kernel whose truncation is approximated.
    pub kernel: Gzk,
    /// Number of random directions $m \ge 1$; the feature dimension is $m \cdot s$.
    pub directions: usize,
    /// Truncation degree $q \le$ [`MAX_DEGREE`] (the paper uses 15).
    pub degree: usize,
    /// Radial terms $s \ge 1$ (1 for the ReLU NTK and on the unit-norm fast path).
    pub radial_terms: usize,
    /// The unit-norm fast path ([`Gzk::zonal`]): inputs must have $\Vert x\Vert = 1$ (within
    /// [`UNIT_NORM_TOLERANCE`]) and $s = 1$.
    pub unit_norm: bool,
}

impl RandomGegenbauerParams {
    /// General inputs: $m$ directions, degree $q$, $s$ radial terms (feature dimension $m s$), approximating
    /// $k_{q,s}$ of [`Gzk::truncate`].
    pub fn new(kernel: Gzk, directions: usize, degree: usize, radial_terms: usize) -> Self {
        RandomGegenbauerParams {
            kernel,
            directions,
            degree,
            radial_terms,
            unit_norm: false,
        }
    }

    /// The unit-norm fast path: $m$ directions, degree $q$, $s = 1$ (feature dimension $m$), approximating the
    /// zonal kernel of [`Gzk::zonal`]; every input row must have norm 1.
    pub fn unit_norm(kernel: Gzk, directions: usize, degree: usize) -> Self {
        RandomGegenbauerParams {
            kernel,
            directions,
            degree,
            radial_terms: 1,
            unit_norm: true,
        }
    }

    /// The feature dimension $m \cdot s$.
    pub fn dim(&self) -> usize {
        self.directions.saturating_mul(self.radial_terms)
    }

    /// Checks $m \ge 1$, $q \le$ [`MAX_DEGREE`], $1 \le s \le$ [`crate::MAX_RADIAL_TERMS`], and $s = 1$ on
    /// the unit-norm fast path (the ReLU NTK's $s = 1$ and $d \ge 2$ are checked by [`Self::fit`]).
    pub fn validate(&self) -> Result<()> {
        if self.directions == 0 {
            return Err(RfxError::invalid("directions", 0, "an integer >= 1"));
        }
        if self.degree > MAX_DEGREE {
            return Err(RfxError::invalid(
                "degree",
                self.degree,
                format!("an integer in 0..={MAX_DEGREE}"),
            ));
        }
        if self.radial_terms == 0 || self.radial_terms > crate::zonal::MAX_RADIAL_TERMS {
            return Err(RfxError::invalid(
                "radial_terms",
                self.radial_terms,
                format!("an integer in 1..={}", crate::zonal::MAX_RADIAL_TERMS),
            ));
        }
        if self.unit_norm && self.radial_terms != 1 {
            return Err(RfxError::invalid(
                "radial_terms",
                self.radial_terms,
                "1 on the unit-norm fast path",
            ));
        }
        Ok(())
    }

    /// Validates (including $d \ge 2$), builds the truncated kernel and draws the $m$ directions from `rng`:
    /// $w = g/\Vert g\Vert$, $g \sim \mathcal N(0, I_d)$.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<RandomGegenbauerFeatures> {
        self.validate()?;
        let kernel = if self.unit_norm {
            self.kernel.zonal(d, self.degree)?
        } else {
            self.kernel.truncate(d, self.degree, self.radial_terms)?
        };
        RandomGegenbauerFeatures::sample(kernel, self.directions, rng)
    }
}

/// A fitted random Gegenbauer feature map (Definition 8); see the module documentation.
#[derive(Clone, Debug)]
pub struct RandomGegenbauerFeatures {
    kernel: TruncatedGzk,
    /// $m \times d$, unit rows.
    w: Array2<f64>,
}

impl RandomGegenbauerFeatures {
    /// Draws $m$ = `directions` $\ge 1$ directions for an already truncated kernel ([`Gzk::truncate`] or
    /// [`Gzk::zonal`]): $w = g/\Vert g\Vert$, $g \sim \mathcal N(0, I_d)$. Use it to refit many seeds without
    /// recomputing the radial coefficients (for the NTK they need a quadrature).
    pub fn sample(kernel: TruncatedGzk, directions: usize, rng: &mut RfxRng) -> Result<Self> {
        if directions == 0 {
            return Err(RfxError::invalid("directions", 0, "an integer >= 1"));
        }
        let mut w = Array2::<f64>::zeros((directions, kernel.input_dim()));
        for mut row in w.axis_iter_mut(Axis(0)) {
            loop {
                row.mapv_inplace(|_| rng.sample(StandardNormal));
                let norm = row.dot(&row).sqrt();
                if norm > 0.0 && norm.is_finite() {
                    row.mapv_inplace(|v| v / norm);
                    break;
                }
            }
        }
        Ok(RandomGegenbauerFeatures { kernel, w })
    }

    /// The truncated kernel $k_{q,s}$ (or the zonal kernel on the fast path) that
    /// $\langle z(x), z(y)\rangle$ estimates without bias.
    pub fn kernel(&self) -> &TruncatedGzk {
        &self.kernel
    }

    /// The directions $w_1,\dots,w_m$ as rows ($m \times d$, unit norm).
    pub fn directions(&self) -> ArrayView2<'_, f64> {
        self.w.view()
    }

    /// The number of directions $m$.
    pub fn num_directions(&self) -> usize {
        self.w.nrows()
    }

    /// Features of one block of rows, written into `z` (rows × ms, rows contiguous).
    fn transform_block_into(
        &self,
        x: ArrayView2<'_, f64>,
        mut z: ArrayViewMut2<'_, f64>,
    ) -> Result<()> {
        let (q, s, m) = (
            self.kernel.degree(),
            self.kernel.radial_terms(),
            self.w.nrows(),
        );
        let norms = row_norms(x);
        for (j, &r) in norms.iter().enumerate() {
            if !r.is_finite() {
                return Err(RfxError::invalid(
                    format!("x[{j}]"),
                    "a row with a non-finite entry",
                    "finite inputs",
                ));
            }
            if self.kernel.is_zonal() && (r - 1.0).abs() > UNIT_NORM_TOLERANCE {
                return Err(RfxError::invalid(
                    format!("norm of x[{j}]"),
                    r,
                    "1 on the unit-norm fast path (normalise the rows or use RandomGegenbauerParams::new)",
                ));
            }
        }
        let mut t = unit_rows(x, &norms).dot(&self.w.t());
        t.mapv_inplace(|v| v.clamp(-1.0, 1.0));
        // the GEMM of a column-major x (e.g. columns selected from a table) is column-major: the row loop
        // below needs contiguous rows
        let t = if t.is_standard_layout() {
            t
        } else {
            t.as_standard_layout().into_owned()
        };
        // √α_ℓ h_ℓ(‖x_j‖) / √m, n × (q+1)s.
        let weights = self
            .kernel
            .radial_matrix(&norms, true, -0.5 * (m as f64).ln());
        // One row at a time, all degrees fused: P_ℓ of the row's m cosines by the three-term recurrence in
        // two length-m work arrays, each degree added into s planar accumulators (contiguous, so both loops
        // vectorise), then interleaved once into z. The additions happen in the same order as
        // Σ_{ℓ=0}^{q} h_ℓ P_ℓ, so the values are those of the degree-by-degree evaluation; rows are
        // independent and run in parallel, so they do not depend on the thread count.
        let basis = Basis::Gegenbauer(self.kernel.input_dim());
        basis.validate()?;
        let coef: Vec<(f64, f64)> = (1..q).map(|l| basis.recurrence(l)).collect();
        let chunk = DIRECTION_CHUNK.min(m);
        let init = || {
            (
                vec![0.0; chunk],
                vec![0.0; chunk],
                vec![0.0; if s == 1 { 0 } else { m * s }],
            )
        };
        let work = |(prev, cur, acc): &mut (Vec<f64>, Vec<f64>, Vec<f64>),
                    (mut zr, tr, hr): (
            ArrayViewMut1<'_, f64>,
            ArrayView1<'_, f64>,
            ArrayView1<'_, f64>,
        )| {
            let row = RowWork {
                s,
                coef: &coef,
                t: tr.as_slice().expect("rows of a standard-layout array"),
                h: hr.as_slice().expect("rows of a standard-layout array"),
            };
            row.run(
                zr.as_slice_mut().expect("rows of a standard-layout array"),
                prev,
                cur,
                acc,
            );
        };
        let rows = z
            .axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(t.axis_iter(Axis(0)))
            .zip(weights.axis_iter(Axis(0)))
            .map(|((zr, tr), hr)| (zr, tr, hr));
        if t.len() * s >= PAR_ENTRIES {
            rows.with_min_len((SUB_ENTRIES / m).max(1))
                .for_each_init(init, work);
        } else {
            let mut buffers = init();
            z.axis_iter_mut(Axis(0))
                .zip(t.axis_iter(Axis(0)))
                .zip(weights.axis_iter(Axis(0)))
                .for_each(|((zr, tr), hr)| work(&mut buffers, (zr, tr, hr)));
        }
        Ok(())
    }
}

/// The fused per-row kernel of [`RandomGegenbauerFeatures`]: the features of one row from its $m$ cosines `t`
/// and its radial weights `h` (degree-major, $(q+1) \times s$), with $q = $ `coef.len() + 1` (or 0 when `h`
/// has $s$ entries).
struct RowWork<'a> {
    s: usize,
    /// Recurrence coefficients $(a_\ell, b_\ell)$ for $\ell = 1, \dots, q-1$.
    coef: &'a [(f64, f64)],
    t: &'a [f64],
    h: &'a [f64],
}

impl RowWork<'_> {
    /// Runs the kernel, with AVX2 when the CPU has it (checked at run time). The AVX2 copy is the same code
    /// compiled for 4-wide vectors; it uses no fused multiply-add, so every operation rounds exactly as in
    /// the portable copy and the features are bit-identical on every x86-64 CPU.
    fn run(&self, z: &mut [f64], prev: &mut [f64], cur: &mut [f64], acc: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `run_avx2`.
            unsafe { self.run_avx2(z, prev, cur, acc) };
            return;
        }
        self.run_portable(z, prev, cur, acc);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2(&self, z: &mut [f64], prev: &mut [f64], cur: &mut [f64], acc: &mut [f64]) {
        self.run_portable(z, prev, cur, acc);
    }

    /// $z_{ks+i} = \sum_{\ell=0}^{q} h_{\ell s+i}\thinspace P_\ell(t_k)$, on chunks of [`DIRECTION_CHUNK`] directions
    /// (so that the work arrays stay in the L1 cache): the recurrence in the two work arrays `prev`, `cur`
    /// (length ≥ the chunk); each degree added into $s$ planar accumulators (`z` itself when $s = 1$, else
    /// `acc`, of length $ms$), interleaved into `z` at the end.
    #[inline(always)]
    fn run_portable(&self, z: &mut [f64], prev: &mut [f64], cur: &mut [f64], acc: &mut [f64]) {
        let (s, h, m) = (self.s, self.h, self.t.len());
        let planes: &mut [f64] = if s == 1 { &mut *z } else { &mut *acc };
        for k0 in (0..m).step_by(DIRECTION_CHUNK) {
            let k1 = (k0 + DIRECTION_CHUNK).min(m);
            let t = &self.t[k0..k1];
            let (mut prev, mut cur) = (&mut prev[..k1 - k0], &mut cur[..k1 - k0]);
            for i in 0..s {
                planes[i * m + k0..i * m + k1]
                    .iter_mut()
                    .for_each(|v| *v = 0.0);
            }
            prev.iter_mut().for_each(|v| *v = 1.0);
            add_degree(planes, m, k0, &h[..s], prev);
            if h.len() > s {
                cur.copy_from_slice(t);
                add_degree(planes, m, k0, &h[s..2 * s], cur);
                for (l, &(a, b)) in (1..).zip(self.coef) {
                    // prev ← P_{l+1} = a t P_l − b P_{l−1}, then swap so that cur holds P_{l+1}.
                    for ((p, &c), &x) in prev.iter_mut().zip(cur.iter()).zip(t) {
                        *p = a * x * c - b * *p;
                    }
                    std::mem::swap(&mut prev, &mut cur);
                    add_degree(planes, m, k0, &h[(l + 1) * s..(l + 2) * s], cur);
                }
            }
        }
        if s > 1 {
            for (k, zc) in z.chunks_exact_mut(s).enumerate() {
                for (i, zv) in zc.iter_mut().enumerate() {
                    *zv = acc[i * m + k];
                }
            }
        }
    }
}

/// `planes[i·m + k0 + k] += hl[i] · p[k]` for the $s$ = `hl.len()` planes of length $m$ (skipping zero weights).
#[inline(always)]
fn add_degree(planes: &mut [f64], m: usize, k0: usize, hl: &[f64], p: &[f64]) {
    for (i, &hv) in hl.iter().enumerate() {
        if hv != 0.0 {
            let plane = &mut planes[i * m + k0..i * m + k0 + p.len()];
            for (a, &pv) in plane.iter_mut().zip(p) {
                *a += hv * pv;
            }
        }
    }
}

impl FeatureMap for RandomGegenbauerFeatures {
    fn input_dim(&self) -> usize {
        self.kernel.input_dim()
    }

    /// $m \cdot s$.
    fn dim(&self) -> usize {
        self.w.nrows() * self.kernel.radial_terms()
    }

    /// The $n \times ms$ feature matrix $Z$ with $ZZ^\top \approx K_{q,s}$ ($\mathbb E[ZZ^\top] = K_{q,s}$).
    /// Zero rows are allowed (only $\ell = 0$ contributes). Errors: wrong number of columns, non-finite
    /// entries, or (fast path) a row whose norm differs from 1 by more than [`UNIT_NORM_TOLERANCE`].
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let n = x.nrows();
        let mut z = Array2::<f64>::zeros((n, self.dim()));
        for start in (0..n).step_by(ROW_BLOCK) {
            let end = (start + ROW_BLOCK).min(n);
            self.transform_block_into(
                x.slice(s![start..end, ..]),
                z.slice_mut(s![start..end, ..]),
            )?;
        }
        Ok(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zonal::tests::points;
    use ndarray::Zip;
    use rfx_core::{rng_stream, Kernel};

    /// Mean of $ZZ^\top$ over `reps` independent fits (streams `key/r`).
    fn mean_gram(
        params: &RandomGegenbauerParams,
        x: &Array2<f64>,
        reps: usize,
        key: &str,
    ) -> Array2<f64> {
        let n = x.nrows();
        let mut acc = Array2::<f64>::zeros((n, n));
        let kernel = params
            .fit(x.ncols(), &mut rng_stream(11, "kernel"))
            .unwrap()
            .kernel()
            .clone();
        for r in 0..reps {
            let mut rng = rng_stream(11, &format!("{key}/{r}"));
            let f = RandomGegenbauerFeatures::sample(kernel.clone(), params.directions, &mut rng)
                .unwrap();
            let z = f.transform(x.view()).unwrap();
            acc += &z.dot(&z.t());
        }
        acc / reps as f64
    }

    /// Largest standardised deviation $\max_{ij}|\bar K_{ij} - K_{ij}|/\sigma_{ij}$ of the mean Gram `mean`
    /// (over `count` = $Rm$ i.i.d. directions) from `k`, with the standard error
    /// $\sigma_{ij} = \sqrt{\min(B_i^2 K_{jj}, B_j^2 K_{ii})/(Rm)}$. Here $B_i$ bounds $\Vert\phi_{x_i}(w)\Vert$
    /// uniformly in $w$ ([`TruncatedGzk::feature_norm_bound`], from $|P_d^\ell| \le 1$) and
    /// $K_{jj} = \mathbb E_w\Vert\phi_{x_j}(w)\Vert^2$ (Lemma 5): one direction contributes
    /// $Y = \langle\phi_{x_i}(w),\phi_{x_j}(w)\rangle$ with $\operatorname{Var} Y \le \mathbb E Y^2 \le
    /// B_i^2\thinspace\mathbb E\Vert\phi_{x_j}\Vert^2$. Also returns the largest $\sigma_{ij}$ and deviation.
    fn max_z(
        kernel: &TruncatedGzk,
        x: &Array2<f64>,
        mean: &Array2<f64>,
        k: &Array2<f64>,
        count: f64,
    ) -> (f64, f64, f64) {
        let k_true = kernel.gram(x.view(), x.view()).unwrap();
        let b: Vec<f64> = row_norms(x.view())
            .iter()
            .map(|&r| kernel.feature_norm_bound(r))
            .collect();
        let (mut worst_z, mut max_sd, mut worst) = (0.0f64, 0.0f64, 0.0f64);
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                let var = (b[i] * b[i] * k_true[[j, j]]).min(b[j] * b[j] * k_true[[i, i]]);
                let sd = (var / count).sqrt();
                let dev = (mean[[i, j]] - k[[i, j]]).abs();
                // sd = 0 only for a zero row of the NTK, whose features are exactly 0.
                let z = if sd > 0.0 {
                    dev / sd
                } else if dev > 1e-15 {
                    f64::INFINITY
                } else {
                    0.0
                };
                worst_z = worst_z.max(z);
                max_sd = max_sd.max(sd);
                worst = worst.max(dev);
            }
        }
        (worst_z, max_sd, worst)
    }

    /// Fits `reps` maps, checks that the mean Gram is within 5 standard errors of $K_{q,s}$ everywhere and
    /// that it is *not* within 5 standard errors of the `control` kernel (so the test can fail).
    fn check_unbiased(
        params: &RandomGegenbauerParams,
        x: &Array2<f64>,
        reps: usize,
        key: &str,
        control: &dyn Kernel,
    ) {
        let kernel = params
            .fit(x.ncols(), &mut rng_stream(11, "kernel"))
            .unwrap()
            .kernel()
            .clone();
        let k = kernel.gram(x.view(), x.view()).unwrap();
        let mean = mean_gram(params, x, reps, key);
        let count = (reps * params.directions) as f64;
        let (z, sd, dev) = max_z(&kernel, x, &mean, &k, count);
        let kc = control.gram(x.view(), x.view()).unwrap();
        let (zc, _, devc) = max_z(&kernel, x, &mean, &kc, count);
        eprintln!(
            "{key}: max |mean ZZ^T - K_qs| = {dev:.2e} (max {z:.2} standard errors, largest standard error {sd:.2e}); \
             control: max dev {devc:.2e} = {zc:.1} standard errors"
        );
        assert!(
            z <= 5.0,
            "{key}: mean of ZZ^T deviates from K_qs by {z} standard errors"
        );
        assert!(
            zc > 5.0,
            "{key}: the control kernel is not rejected ({zc} standard errors)"
        );
    }

    #[test]
    fn gaussian_features_are_unbiased_for_the_truncated_kernel() {
        // d = 3, σ = 1, ‖x‖ ≤ 1.2, q = 8, s = 3; R = 250 fits of m = 512 directions.
        // Control: the truncated Gaussian with σ = 1.1 (entries differ by up to ~0.07).
        let x = points(20, 3, 0.0, 1.2, &mut rng_stream(12, "pts"));
        let params = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), 512, 8, 3);
        let control = Gzk::gaussian(1.1).unwrap().truncate(3, 8, 3).unwrap();
        check_unbiased(&params, &x, 250, "gaussian", &control);
    }

    #[test]
    fn ntk_features_are_unbiased_for_the_truncated_ntk() {
        // Depth-2 NTK, d = 4, q = 8, norms in [0.3, 1.5] and one zero row; R = 250 fits of m = 512;
        // control: the depth-1 NTK.
        let mut x = points(16, 4, 0.3, 1.5, &mut rng_stream(13, "pts"));
        x.row_mut(5).fill(0.0);
        let params = RandomGegenbauerParams::new(Gzk::relu_ntk(2).unwrap(), 512, 8, 1);
        let control = Gzk::relu_ntk(1).unwrap().truncate(4, 8, 1).unwrap();
        check_unbiased(&params, &x, 250, "ntk", &control);
    }

    #[test]
    fn zonal_features_are_unbiased_on_the_sphere() {
        // Unit-norm fast path, Gaussian with σ² = 1/2 (Fig. 1), d = 3, q = 10; R = 1000 fits of m = 512;
        // control: σ² = 0.6.
        let x = points(16, 3, 1.0, 1.0, &mut rng_stream(14, "pts"));
        let params =
            RandomGegenbauerParams::unit_norm(Gzk::gaussian(0.5f64.sqrt()).unwrap(), 512, 10);
        let control = Gzk::gaussian(0.6f64.sqrt()).unwrap().zonal(3, 10).unwrap();
        check_unbiased(&params, &x, 1000, "zonal", &control);
        // Degree 10 on the sphere is the Gaussian itself to ~1e-7.
        let exact = params.kernel.gram(x.view(), x.view()).unwrap();
        let trunc = params
            .kernel
            .zonal(3, 10)
            .unwrap()
            .gram(x.view(), x.view())
            .unwrap();
        let bias = Zip::from(&exact)
            .and(&trunc)
            .fold(0.0f64, |m, &a, &b| m.max((a - b).abs()));
        assert!(bias < 1e-6, "{bias}");
    }

    #[test]
    fn frobenius_error_decays_like_inverse_sqrt_m() {
        // n = 100, d = 3, σ = 1, ‖x‖ ≤ 1.5, q = 10, s = 4; m = 64 … 4096, 4 seeds each.
        // ZZᵀ − K is a mean of m i.i.d. centred matrices, so E‖ZZᵀ − K‖_F² = c/m exactly: the root mean square
        // over seeds of the relative error scales as m^{-1/2}, slope −0.5 on a log–log fit.
        let mut rng = rng_stream(15, "pts");
        let x = points(100, 3, 0.0, 1.5, &mut rng);
        let params0 = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), 1, 10, 4);
        let k = params0
            .fit(3, &mut rng_stream(15, "k"))
            .unwrap()
            .kernel()
            .gram(x.view(), x.view())
            .unwrap();
        let k_norm = k.iter().map(|v| v * v).sum::<f64>().sqrt();
        let ms = [64usize, 128, 256, 512, 1024, 2048, 4096];
        let mut pts = Vec::new();
        for &m in &ms {
            let params = RandomGegenbauerParams {
                directions: m,
                ..params0.clone()
            };
            let mut err2 = 0.0;
            for seed in 0..4 {
                let f = params
                    .fit(3, &mut rng_stream(16, &format!("m={m};seed={seed}")))
                    .unwrap();
                let z = f.transform(x.view()).unwrap();
                assert_eq!(z.dim(), (100, 4 * m));
                let e = &z.dot(&z.t()) - &k;
                err2 += e.iter().map(|v| v * v).sum::<f64>() / (k_norm * k_norm) / 4.0;
            }
            let err = err2.sqrt();
            pts.push(((m as f64).ln(), f64::ln(err)));
            eprintln!("m = {m}: relative Frobenius error (rms over seeds) {err:.4}");
        }
        let n = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
            / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
        eprintln!("log-log slope {slope:.3}");
        assert!((slope + 0.5).abs() <= 0.15, "slope {slope}");
    }

    #[test]
    fn zero_rows_dimensions_and_errors() {
        let d = 3;
        let mut x = points(5, d, 0.5, 1.5, &mut rng_stream(17, "pts"));
        x.row_mut(2).fill(0.0);
        let mut rng = rng_stream(17, "fit");
        // Gaussian: z(0) = e_0-components 1/√m per direction, so ⟨z(0), z(0)⟩ = 1 = k(0, 0) exactly.
        let f = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), 50, 6, 3)
            .fit(d, &mut rng)
            .unwrap();
        assert_eq!((f.input_dim(), f.dim(), f.num_directions()), (3, 150, 50));
        let z = f.transform(x.view()).unwrap();
        assert_eq!(z.dim(), (5, 150));
        assert!((z.row(2).dot(&z.row(2)) - 1.0).abs() < 1e-14);
        let norms = row_norms(f.directions());
        assert!(norms.iter().all(|r| (r - 1.0).abs() < 1e-14));
        // NTK: Θ(0, ·) = 0, features of 0 vanish.
        let f = RandomGegenbauerParams::new(Gzk::relu_ntk(2).unwrap(), 40, 6, 1)
            .fit(d, &mut rng)
            .unwrap();
        let z = f.transform(x.view()).unwrap();
        assert!(z.row(2).iter().all(|&v| v == 0.0));
        assert!(z.row(0).iter().any(|&v| v != 0.0));
        // Wrong dimension, non-finite rows, non-unit rows on the fast path.
        let bad = Array2::<f64>::zeros((2, 4));
        assert!(matches!(
            f.transform(bad.view()),
            Err(RfxError::DimensionMismatch(_))
        ));
        let mut nan = x.clone();
        nan[[1, 1]] = f64::NAN;
        assert!(f.transform(nan.view()).is_err());
        let fz = RandomGegenbauerParams::unit_norm(Gzk::gaussian(1.0).unwrap(), 8, 5)
            .fit(d, &mut rng)
            .unwrap();
        assert_eq!(fz.dim(), 8);
        assert!(fz.transform(x.view()).is_err());
        let unit = points(4, d, 1.0, 1.0, &mut rng);
        assert!(fz.transform(unit.view()).is_ok());
        // Invalid parameters are errors, not panics.
        let g = Gzk::gaussian(1.0).unwrap();
        let ok = RandomGegenbauerParams::new(g.clone(), 10, 5, 2);
        assert!(ok.validate().is_ok());
        assert_eq!(ok.dim(), 20);
        for p in [
            RandomGegenbauerParams {
                directions: 0,
                ..ok.clone()
            },
            RandomGegenbauerParams {
                degree: MAX_DEGREE + 1,
                ..ok.clone()
            },
            RandomGegenbauerParams {
                radial_terms: 0,
                ..ok.clone()
            },
            RandomGegenbauerParams {
                unit_norm: true,
                ..ok.clone()
            },
        ] {
            assert!(p.validate().is_err());
            assert!(p.fit(3, &mut rng).is_err());
        }
        assert!(ok.fit(1, &mut rng).is_err());
        assert!(ok.fit(0, &mut rng).is_err());
        assert!(
            RandomGegenbauerParams::new(Gzk::relu_ntk(2).unwrap(), 10, 5, 2)
                .fit(3, &mut rng)
                .is_err()
        );
    }

    #[test]
    fn blocks_and_seeds_are_deterministic() {
        // 2,100 rows > ROW_BLOCK: the blocked transform equals transforming its blocks separately (the same
        // products of the same shapes: equal bits by construction) and, within rounding, each row alone; same
        // seed, same map.
        let d = 2;
        let x = points(2100, d, 0.0, 1.0, &mut rng_stream(18, "pts"));
        let params = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), 16, 6, 2);
        let f = params.fit(d, &mut rng_stream(18, "fit")).unwrap();
        let g = params.fit(d, &mut rng_stream(18, "fit")).unwrap();
        let z = f.transform(x.view()).unwrap();
        assert_eq!(z, g.transform(x.view()).unwrap());
        for (a, b) in [(0, ROW_BLOCK), (ROW_BLOCK, 2100)] {
            let zb = f.transform(x.slice(s![a..b, ..])).unwrap();
            assert_eq!(zb, z.slice(s![a..b, ..]), "rows {a}..{b}");
        }
        // A one-row GEMM may run other BLAS kernels than the block's (OpenBLAS's Prescott and Sandybridge
        // kernels do) and round each cosine differently: |Δt| ≤ 2γ_d = 4.4e-16 here, times the Lipschitz
        // constant of P_d^ℓ on [−1, 1], ℓ(ℓ + d − 2)/(d − 1) = 36 at ℓ = q = 6, plus the recurrence's own
        // rounding (≲ 2ℓ² ε = 1.6e-14), times the row's weights Σ_ℓ √α_ℓ |h_ℓ| / √m: under 3e-14 of them, so
        // 1e-13 of them bounds it while a misplaced row (an O(1) change) fails.
        let norms = crate::zonal::row_norms(x.view());
        let h = f.kernel().radial_matrix(&norms, true, -0.5 * 16f64.ln());
        for i in [0, 2047, 2048, 2099] {
            let zi = f.transform(x.slice(s![i..i + 1, ..])).unwrap();
            let weights = (0..2)
                .map(|p| (0..=6).map(|l| h[[i, l * 2 + p]].abs()).sum::<f64>())
                .fold(0.0f64, f64::max);
            let worst = (&zi.row(0) - &z.row(i))
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                worst <= 1e-13 * weights,
                "row {i}: largest difference {worst:e} of weights {weights:e}"
            );
        }
    }

    #[test]
    fn column_major_rows_give_the_features_of_their_copy() {
        // rows in a column-major array (as `select` along columns makes them) made the GEMM of the
        // cosines column-major, and the row loop panicked; now the features are those of the C-order copy
        let d = 32;
        let x = points(400, d, 0.0, 1.0, &mut rng_stream(19, "pts"));
        let xf = x.t().as_standard_layout().into_owned().reversed_axes();
        assert!(!xf.is_standard_layout() && xf == x);
        let params = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), 16, 48, 4);
        let f = params.fit(d, &mut rng_stream(19, "fit")).unwrap();
        let (z, zf) = (
            f.transform(x.view()).unwrap(),
            f.transform(xf.view()).unwrap(),
        );
        // the two GEMMs may add in different orders: |Δt| ≤ d ε per cosine, amplified by the degree-48
        // recurrence and the weights (|z| ≤ 1 here): 1e-12 is ample and far below any real error
        let worst = (&z - &zf).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(worst <= 1e-12, "largest difference {worst}");
    }

    #[test]
    fn fused_kernel_equals_the_defining_sum() {
        // z_{ks+i} = m^{-1/2} Σ_ℓ √α_ℓ h_{ℓ,i}(‖x‖) P_d^ℓ(⟨x/‖x‖, w_k⟩), evaluated entry by entry with the
        // scalar recurrence; m = 600 directions is two full chunks of DIRECTION_CHUNK and a partial one.
        let d = 5;
        let x = points(7, d, 0.5, 2.0, &mut rng_stream(19, "pts"));
        for (s, q) in [(1, 9), (3, 9), (2, 0), (2, 1)] {
            let params = RandomGegenbauerParams::new(Gzk::gaussian(1.3).unwrap(), 600, q, s);
            let f = params.fit(d, &mut rng_stream(19, "fit")).unwrap();
            let z = f.transform(x.view()).unwrap();
            let norms = crate::zonal::row_norms(x.view());
            let h = f.kernel().radial_matrix(&norms, true, -0.5 * 600f64.ln());
            let w = f.directions();
            for j in 0..x.nrows() {
                for k in 0..600 {
                    let t = (x.row(j).dot(&w.row(k)) / norms[j]).clamp(-1.0, 1.0);
                    for i in 0..s {
                        let want: f64 = (0..=q)
                            .map(|l| h[[j, l * s + i]] * crate::gegenbauer(d, l, t))
                            .sum();
                        let got = z[[j, k * s + i]];
                        assert!(
                            (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                            "s = {s}, q = {q}, row {j}, direction {k}, plane {i}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod leverage_tests {
    use super::*;
    use crate::zonal::tests::points;
    use rfx_core::{rng_stream, Kernel};

    /// Lower-triangular Cholesky factor of a symmetric positive-definite matrix (test helper).
    fn cholesky(a: &Array2<f64>) -> Array2<f64> {
        let n = a.nrows();
        let mut l = Array2::<f64>::zeros((n, n));
        for j in 0..n {
            let diag = a[[j, j]] - (0..j).map(|k| l[[j, k]] * l[[j, k]]).sum::<f64>();
            assert!(diag > 0.0, "not positive definite");
            l[[j, j]] = diag.sqrt();
            for i in j + 1..n {
                let v = a[[i, j]] - (0..j).map(|k| l[[i, k]] * l[[j, k]]).sum::<f64>();
                l[[i, j]] = v / l[[j, j]];
            }
        }
        l
    }

    /// Solves $LY = B$ for lower-triangular $L$ (forward substitution, column by column).
    fn forward(l: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        let mut y = b.clone();
        for c in 0..b.ncols() {
            for i in 0..l.nrows() {
                let v = y[[i, c]] - (0..i).map(|k| l[[i, k]] * y[[k, c]]).sum::<f64>();
                y[[i, c]] = v / l[[i, i]];
            }
        }
        y
    }

    #[test]
    fn leverage_scores_respect_lemma_7_and_average_to_the_statistical_dimension() {
        // n = 60, d = 3, Gaussian σ = 1, ‖x‖ ≤ 1.5, q = 10, s = 3; 2,000 directions.
        // τ_λ(w) = ‖L^{-1}Φ_w‖_F² with K_{q,s} + λI = LLᵀ and Φ_w = √m · (the s columns of Z for direction w).
        let (n, d, m) = (60, 3, 2000);
        let x = points(n, d, 0.0, 1.5, &mut rng_stream(21, "pts"));
        let params = RandomGegenbauerParams::new(Gzk::gaussian(1.0).unwrap(), m, 10, 3);
        let f = params.fit(d, &mut rng_stream(21, "fit")).unwrap();
        let k = f.kernel().gram(x.view(), x.view()).unwrap();
        let z = f.transform(x.view()).unwrap() * (m as f64).sqrt();
        let norms: Vec<f64> = row_norms(x.view()).to_vec();
        for lambda in [1e-2, 1e-1, 1.0] {
            let bound = f.kernel().leverage_bound(&norms, lambda).unwrap();
            let mut a = k.clone();
            a.diag_mut().mapv_inplace(|v| v + lambda);
            let l = cholesky(&a);
            let y = forward(&l, &z); // column (k·s + i) is L^{-1} Φ_{w_k}^i
            let tau: Vec<f64> = (0..m)
                .map(|kk| {
                    y.slice(s![.., kk * 3..(kk + 1) * 3])
                        .iter()
                        .map(|v| v * v)
                        .sum()
                })
                .collect();
            let max_tau = tau.iter().cloned().fold(0.0f64, f64::max);
            let mean_tau = tau.iter().sum::<f64>() / m as f64;
            // Statistical dimension s_λ = Tr(K (K+λI)^{-1}) = n − λ‖L^{-1}‖_F².
            let linv = forward(&l, &Array2::eye(n));
            let s_lambda = n as f64 - lambda * linv.iter().map(|v| v * v).sum::<f64>();
            // Hoeffding with 0 ≤ τ ≤ bound, failure probability 1e-6: |mean − s_λ| ≤ bound·√(ln(2e6)/(2m)).
            let hoeffding = bound * ((2e6f64).ln() / (2.0 * m as f64)).sqrt();
            eprintln!(
                "λ = {lambda}: max τ = {max_tau:.2} ≤ Lemma-7 bound {bound:.2}; mean τ = {mean_tau:.3} vs s_λ = {s_lambda:.3} (Hoeffding {hoeffding:.2})"
            );
            assert!(
                max_tau <= bound,
                "λ = {lambda}: τ = {max_tau} above {bound}"
            );
            assert!((mean_tau - s_lambda).abs() <= hoeffding);
        }
        assert!(f.kernel().leverage_bound(&norms, 0.0).is_err());
    }
}
