//! Ternary random features (Algorithm 1): sparse ternary weights, add-only projections, bit-packed
//! ternary features and a multiplication-free Gram matrix.
//!
//! **Weights (eq. 4).** $W^{ter}\_{kj} = 0$ with probability $\epsilon$ and $\pm(1-\epsilon)^{-1/2}$ with
//! probability $(1-\epsilon)/2$ each, so $\mathbb E w = 0$, $\mathbb E w^2 = 1$ (Assumption 2) and
//! $\mathbb E w^4 = 1/(1-\epsilon)$. We follow the paper's $(1-\epsilon)^{-1/2}$ scaling (the authors'
//! notebooks omit it, research notes §6.7) but never multiply by it: we store the integer pattern
//! $W_{int} \in \lbrace-1,0,1\rbrace^{m\times p}$ as index lists of its $+1$ and $-1$ positions per row and fold the
//! scale into the thresholds,
//! $$\sigma^{ter}(\mathbf w^\top\mathbf x) = -1_{u < s_-\sqrt{1-\epsilon}} + 1_{u > s_+\sqrt{1-\epsilon}},\qquad
//!   u = \sum_{j\in P_k} x_j - \sum_{j \in N_k} x_j ,$$
//! so computing a feature costs about $(1-\epsilon)p$ additions and two comparisons, no multiplication.
//!
//! **Storage.** A ternary feature takes two bit-planes ($P$: "is $+1$", $N$: "is $-1$"), i.e. 2 bits, which
//! [`FeatureMap::bits_per_feature`] reports. The paper counts **1 bit** per feature ("TRFs use $m$ bits for
//! storage while LP-RFFs use $8m$", §2.6 of the notes); [`TernaryFeatures::paper_bits_per_feature`] gives
//! that figure for plots that follow the paper, and [`TernaryFeatures::entropy_bits_per_feature`] the
//! information-theoretic $\log_2 3$.
//!
//! **Gram.** For codes $f_i, f_j \in \lbrace-1,0,1\rbrace^m$,
//! $f_i^\top f_j = \mathrm{pc}(P_i \wedge P_j) + \mathrm{pc}(N_i \wedge N_j) - \mathrm{pc}(P_i \wedge N_j) - \mathrm{pc}(N_i \wedge P_j)$
//! ($\wedge$ the bitwise and, $\mathrm{pc}$ the popcount);
//! as $P_i \wedge N_i = 0$ the first two (and last two) masks are disjoint, so two popcounts of ORs suffice.
//! The result is an exact integer, equal bit for bit to the `f64` Gram of the unpacked features.

use crate::activation::{estimate_tau, Activation};
use crate::thresholds::{solve_thresholds, ThresholdSolution, Thresholds};
use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis};
use rand::Rng;
use rayon::prelude::*;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};

/// Points per block in [`TernaryFeatures::transform_packed`].
const BLOCK: usize = 8;

/// Sparse ternary weight pattern $W_{int} \in \lbrace-1, 0, 1\rbrace^{m\times p}$ in CSR-like index lists.
#[derive(Debug, Clone)]
pub struct TernaryWeights {
    rows: usize,
    cols: usize,
    sparsity: f64,
    plus_off: Vec<usize>,
    plus_idx: Vec<u32>,
    minus_off: Vec<usize>,
    minus_idx: Vec<u32>,
}

impl TernaryWeights {
    /// Draws $W_{int}$: each entry $0$ w.p. $\epsilon$, $\pm1$ w.p. $(1-\epsilon)/2$ each, $\epsilon\in[0,1)$.
    pub fn sample(rows: usize, cols: usize, sparsity: f64, rng: &mut RfxRng) -> Result<Self> {
        if !(0.0..1.0).contains(&sparsity) {
            return Err(RfxError::invalid(
                "sparsity",
                sparsity,
                "a number in [0, 1)",
            ));
        }
        if rows == 0 || cols == 0 {
            return Err(RfxError::invalid(
                "shape",
                format!("{rows}x{cols}"),
                "rows, cols >= 1",
            ));
        }
        if cols > u32::MAX as usize {
            return Err(RfxError::invalid("cols", cols, "at most 2^32 - 1"));
        }
        let mut w = Self {
            rows,
            cols,
            sparsity,
            plus_off: vec![0],
            plus_idx: Vec::new(),
            minus_off: vec![0],
            minus_idx: Vec::new(),
        };
        for _ in 0..rows {
            for j in 0..cols {
                if rng.gen::<f64>() < sparsity {
                    continue;
                }
                if rng.gen::<bool>() {
                    w.plus_idx.push(j as u32);
                } else {
                    w.minus_idx.push(j as u32);
                }
            }
            w.plus_off.push(w.plus_idx.len());
            w.minus_off.push(w.minus_idx.len());
        }
        Ok(w)
    }

    /// $m$.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// $p$.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// $\epsilon$.
    pub fn sparsity(&self) -> f64 {
        self.sparsity
    }

    /// Column indices of the $+1$ entries of row `k`.
    pub fn plus(&self, k: usize) -> &[u32] {
        &self.plus_idx[self.plus_off[k]..self.plus_off[k + 1]]
    }

    /// Column indices of the $-1$ entries of row `k`.
    pub fn minus(&self, k: usize) -> &[u32] {
        &self.minus_idx[self.minus_off[k]..self.minus_off[k + 1]]
    }

    /// Number of nonzeros.
    pub fn nnz(&self) -> usize {
        self.plus_idx.len() + self.minus_idx.len()
    }

    /// $u_k = \sum_{j\in P_k}x_j - \sum_{j\in N_k}x_j$ (additions only).
    pub fn project_row(&self, k: usize, x: ArrayView1<'_, f64>) -> f64 {
        let mut s = 0.0;
        for &j in self.plus(k) {
            s += x[j as usize];
        }
        for &j in self.minus(k) {
            s -= x[j as usize];
        }
        s
    }

    /// Dense $W_{int}$ (for tests and GEMM comparisons).
    pub fn to_dense_int(&self) -> Array2<f64> {
        let mut w = Array2::zeros((self.rows, self.cols));
        for k in 0..self.rows {
            for &j in self.plus(k) {
                w[[k, j as usize]] = 1.0;
            }
            for &j in self.minus(k) {
                w[[k, j as usize]] = -1.0;
            }
        }
        w
    }

    /// Dense $W^{ter} = (1-\epsilon)^{-1/2}W_{int}$ (eq. 4).
    pub fn to_dense(&self) -> Array2<f64> {
        self.to_dense_int() * (1.0 - self.sparsity).powf(-0.5)
    }
}

/// Ternary codes of $n$ points, $m$ features each, as two bit-planes of `u64` words per point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TernaryCodes {
    n: usize,
    m: usize,
    words: usize,
    plus: Vec<u64>,
    minus: Vec<u64>,
}

impl TernaryCodes {
    /// All-zero codes.
    pub fn zeros(n: usize, m: usize) -> Self {
        let words = m.div_ceil(64);
        Self {
            n,
            m,
            words,
            plus: vec![0; n * words],
            minus: vec![0; n * words],
        }
    }

    /// Packs a matrix with entries in $\lbrace-1, 0, 1\rbrace$ (n × m).
    pub fn from_dense(f: ArrayView2<'_, f64>) -> Result<Self> {
        let mut c = Self::zeros(f.nrows(), f.ncols());
        for ((i, k), &v) in f.indexed_iter() {
            let bit = 1u64 << (k % 64);
            let w = i * c.words + k / 64;
            if v == 1.0 {
                c.plus[w] |= bit;
            } else if v == -1.0 {
                c.minus[w] |= bit;
            } else if v != 0.0 {
                return Err(RfxError::invalid("ternary code", v, "-1, 0 or 1"));
            }
        }
        Ok(c)
    }

    /// Number of points $n$.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of features $m$.
    pub fn dim(&self) -> usize {
        self.m
    }

    /// Bytes held by the two bit-planes ($2n\lceil m/64\rceil \cdot 8$).
    pub fn bytes(&self) -> usize {
        8 * (self.plus.len() + self.minus.len())
    }

    /// Feature `k` of point `i` in $\lbrace-1, 0, 1\rbrace$.
    pub fn get(&self, i: usize, k: usize) -> i8 {
        let w = i * self.words + k / 64;
        let bit = 1u64 << (k % 64);
        i8::from(self.plus[w] & bit != 0) - i8::from(self.minus[w] & bit != 0)
    }

    /// The codes as an n × m matrix of $\lbrace-1, 0, 1\rbrace$.
    pub fn unpack(&self) -> Array2<f64> {
        Array2::from_shape_fn((self.n, self.m), |(i, k)| f64::from(self.get(i, k)))
    }

    fn row(&self, i: usize) -> (&[u64], &[u64]) {
        let r = i * self.words..(i + 1) * self.words;
        (&self.plus[r.clone()], &self.minus[r])
    }

    /// $\langle f_a, f_b\rangle$ of two ternary codes: with $a^\pm, b^\pm$ the bit-planes of the $\pm 1$
    /// entries, $\mathrm{popcount}((a^+\wedge b^+)\vee(a^-\wedge b^-)) -
    /// \mathrm{popcount}((a^+\wedge b^-)\vee(a^-\wedge b^+))$, word by word.
    #[inline(always)]
    fn dot(a: (&[u64], &[u64]), b: (&[u64], &[u64])) -> i64 {
        let mut same = 0u32;
        let mut diff = 0u32;
        for w in 0..a.0.len() {
            same += ((a.0[w] & b.0[w]) | (a.1[w] & b.1[w])).count_ones();
            diff += ((a.0[w] & b.1[w]) | (a.1[w] & b.0[w])).count_ones();
        }
        i64::from(same) - i64::from(diff)
    }

    /// Rows `i0 .. i0 + out.nrows()` of $F G^\top$ (`self` = F, `other` = G) into `out`, only the entries
    /// $j \ge i$ when `upper`. Columns go in tiles of [`GRAM_TILE`] rows of G, so that the tile and the block
    /// of F (2·32 rows × 2 bit-planes × ⌈m/64⌉ words: 128 KiB at m = 8192) stay in the L2 cache while every
    /// pair is counted. Compiled three times and chosen at run time: with AVX2 (the word loop vectorised,
    /// popcounts by byte-table lookups in 256-bit registers), with the `popcnt` instruction, or portable (the
    /// default x86-64 target's `count_ones` is a shift-and-add sequence).
    /// Integer counts, so the result is exact whatever the path or the thread count.
    fn fill_rows(
        &self,
        other: &TernaryCodes,
        i0: usize,
        out: &mut ArrayViewMut2<'_, i64>,
        upper: bool,
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the call.
            unsafe { self.fill_rows_avx2(other, i0, out, upper) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU supports POPCNT (checked just above), the only requirement of the call.
            unsafe { self.fill_rows_popcnt(other, i0, out, upper) };
            return;
        }
        self.fill_rows_portable(other, i0, out, upper);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_rows_avx2(
        &self,
        other: &TernaryCodes,
        i0: usize,
        out: &mut ArrayViewMut2<'_, i64>,
        upper: bool,
    ) {
        self.fill_rows_portable(other, i0, out, upper);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn fill_rows_popcnt(
        &self,
        other: &TernaryCodes,
        i0: usize,
        out: &mut ArrayViewMut2<'_, i64>,
        upper: bool,
    ) {
        self.fill_rows_portable(other, i0, out, upper);
    }

    #[inline(always)]
    fn fill_rows_portable(
        &self,
        other: &TernaryCodes,
        i0: usize,
        out: &mut ArrayViewMut2<'_, i64>,
        upper: bool,
    ) {
        let first = if upper { i0 - i0 % GRAM_TILE } else { 0 };
        for j0 in (first..other.n).step_by(GRAM_TILE) {
            let j1 = (j0 + GRAM_TILE).min(other.n);
            for (r, mut row) in out.rows_mut().into_iter().enumerate() {
                let i = i0 + r;
                let start = if upper { j0.max(i) } else { j0 };
                for j in start..j1 {
                    row[j] = Self::dot(self.row(i), other.row(j));
                }
            }
        }
    }

    /// The integer Gram $F F^\top$ (n × n) by popcounts, no multiplication; symmetric: the upper triangle in
    /// cache-sized tiles, blocks of rows in parallel, then mirrored.
    pub fn gram(&self) -> Array2<i64> {
        let n = self.n;
        let mut g = Array2::zeros((n, n));
        g.axis_chunks_iter_mut(Axis(0), GRAM_TILE)
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut rows)| self.fill_rows(self, b * GRAM_TILE, &mut rows, true));
        for i in 1..n {
            for j in 0..i {
                g[[i, j]] = g[[j, i]];
            }
        }
        g
    }

    /// The cross Gram $F G^\top$ with other codes of the same $m$ (n × n'), blocks of rows in parallel.
    pub fn cross_gram(&self, other: &TernaryCodes) -> Result<Array2<i64>> {
        if other.m != self.m {
            return Err(RfxError::DimensionMismatch(format!(
                "cross_gram: m = {} vs {}",
                self.m, other.m
            )));
        }
        let mut g = Array2::zeros((self.n, other.n));
        g.axis_chunks_iter_mut(Axis(0), GRAM_TILE)
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut rows)| self.fill_rows(other, b * GRAM_TILE, &mut rows, false));
        Ok(g)
    }
}

/// Rows per tile of the popcount Grams ([`TernaryCodes::gram`]).
const GRAM_TILE: usize = 32;

/// Parameters of [`TernaryFeatures`]: $m$ features, sparsity $\epsilon$.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TernaryParams {
    dim: usize,
    sparsity: f64,
}

/// A ternary map fitted to data by [`TernaryParams::fit_to_target`].
#[derive(Debug, Clone)]
pub struct TrfFit {
    /// The feature map (with `input_scale` folded into its thresholds).
    pub features: TernaryFeatures,
    /// $\hat\tau$ of the data as given.
    pub tau_hat: f64,
    /// The factor the data were rescaled by to make matching feasible (1 when it already was).
    pub input_scale: f64,
    /// The (exact) solution at $\hat\tau\cdot$`input_scale`$^2$.
    pub solution: ThresholdSolution,
}

impl TernaryParams {
    /// $m$ features, $\epsilon = 0$ by default.
    pub fn new(dim: usize) -> Self {
        Self { dim, sparsity: 0.0 }
    }

    /// Sets the sparsity $\epsilon \in [0, 1)$.
    pub fn sparsity(mut self, eps: f64) -> Self {
        self.sparsity = eps;
        self
    }

    /// Checks $m \ge 1$, $\epsilon\in[0,1)$.
    pub fn validate(&self) -> Result<()> {
        if self.dim == 0 {
            return Err(RfxError::invalid("dim", 0, "at least 1"));
        }
        if !(0.0..1.0).contains(&self.sparsity) {
            return Err(RfxError::invalid(
                "sparsity",
                self.sparsity,
                "a number in [0, 1)",
            ));
        }
        Ok(())
    }

    /// A map on $\mathbb R^d$ with the given thresholds (projection scale, unit-variance weights).
    pub fn fit(
        &self,
        d: usize,
        thresholds: Thresholds,
        rng: &mut RfxRng,
    ) -> Result<TernaryFeatures> {
        self.validate()?;
        let th = Thresholds::new(thresholds.s_minus, thresholds.s_plus, thresholds.tau)?;
        let weights = TernaryWeights::sample(self.dim, d, self.sparsity, rng)?;
        Ok(TernaryFeatures::from_parts(weights, th, 1.0))
    }

    /// Algorithm 1: $\hat\tau$ from the rows of `x`, thresholds matching `target`; if that is infeasible,
    /// the inputs are rescaled by the solver's factor $c$ (folded into the thresholds: $c\thinspace u > s$ iff
    /// $u > s/c$, so still no multiplication) and the fit is exact at $c^2\hat\tau$.
    pub fn fit_to_target(
        &self,
        x: ArrayView2<'_, f64>,
        target: &Activation,
        rng: &mut RfxRng,
    ) -> Result<TrfFit> {
        self.validate()?;
        let tau_hat = estimate_tau(x)?;
        let mut input_scale = 1.0;
        let mut solution = solve_thresholds(target, tau_hat)?;
        if let ThresholdSolution::Infeasible { scale, .. } = solution {
            input_scale = scale;
            solution = solve_thresholds(target, tau_hat * scale * scale)?;
        }
        let Some(th) = solution.exact() else {
            return Err(RfxError::Numerical(format!(
                "ternary thresholds for {target:?} infeasible even after rescaling by {input_scale}"
            )));
        };
        let weights = TernaryWeights::sample(self.dim, x.ncols(), self.sparsity, rng)?;
        Ok(TrfFit {
            features: TernaryFeatures::from_parts(weights, th, input_scale),
            tau_hat,
            input_scale,
            solution,
        })
    }
}

/// Ternary random features $z(\mathbf x) = \sigma^{ter}(W^{ter}(c\thinspace\mathbf x))/\sqrt m$ (eqs. 4–6), with
/// input scale $c$ (1 unless [`TernaryParams::fit_to_target`] had to rescale).
#[derive(Debug, Clone)]
pub struct TernaryFeatures {
    weights: TernaryWeights,
    thresholds: Thresholds,
    input_scale: f64,
    lo: f64,
    hi: f64,
}

impl TernaryFeatures {
    /// Assembles a map from weights, thresholds and an input scale $c > 0$; the integer-scale thresholds are
    /// $s_\pm\sqrt{1-\epsilon}/c$.
    pub fn from_parts(weights: TernaryWeights, thresholds: Thresholds, input_scale: f64) -> Self {
        let f = (1.0 - weights.sparsity).sqrt() / input_scale;
        Self {
            lo: thresholds.s_minus * f,
            hi: thresholds.s_plus * f,
            weights,
            thresholds,
            input_scale,
        }
    }

    /// The weights.
    pub fn weights(&self) -> &TernaryWeights {
        &self.weights
    }

    /// The thresholds (projection scale).
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// The input scale $c$.
    pub fn input_scale(&self) -> f64 {
        self.input_scale
    }

    /// The paper's accounting: 1 bit per ternary feature (optimistic; see the module docs).
    pub fn paper_bits_per_feature(&self) -> f64 {
        1.0
    }

    /// $\log_2 3 \approx 1.585$ bits, the entropy bound for an arbitrary trit.
    pub fn entropy_bits_per_feature(&self) -> f64 {
        3f64.log2()
    }

    /// The ternary codes $\sigma^{ter}(W^{ter}\mathbf x_i) \in \lbrace-1,0,1\rbrace^m$ of the rows of `x`, bit-packed.
    pub fn transform_packed(&self, x: ArrayView2<'_, f64>) -> Result<TernaryCodes> {
        self.check_input(x)?;
        let mut codes = TernaryCodes::zeros(x.nrows(), self.weights.rows);
        let words = codes.words;
        if words == 0 || x.nrows() == 0 {
            return Ok(codes);
        }
        let (lo, hi) = (self.lo, self.hi);
        let p = x.ncols();
        // Blocks of BLOCK points: the block is transposed to p lanes of BLOCK values, so each weight index
        // loads one contiguous lane and the BLOCK additions vectorise. Every point still gets exactly the
        // additions of `TernaryWeights::project_row`, in the same order (bit-identical projections).
        codes
            .plus
            .par_chunks_mut(words * BLOCK)
            .zip(codes.minus.par_chunks_mut(words * BLOCK))
            .enumerate()
            .for_each(|(blk, (pl, mi))| {
                let i0 = blk * BLOCK;
                let b = pl.len() / words;
                let mut xt = vec![[0.0f64; BLOCK]; p];
                for (r, row) in x.rows().into_iter().skip(i0).take(b).enumerate() {
                    for (lane, v) in xt.iter_mut().zip(row) {
                        lane[r] = *v;
                    }
                }
                for k in 0..self.weights.rows {
                    let mut acc = [0.0f64; BLOCK];
                    for &j in self.weights.plus(k) {
                        for (a, l) in acc.iter_mut().zip(&xt[j as usize]) {
                            *a += l;
                        }
                    }
                    for &j in self.weights.minus(k) {
                        for (a, l) in acc.iter_mut().zip(&xt[j as usize]) {
                            *a -= l;
                        }
                    }
                    let bit = 1u64 << (k % 64);
                    for (r, &u) in acc.iter().enumerate().take(b) {
                        if u > hi {
                            pl[r * words + k / 64] |= bit;
                        } else if u < lo {
                            mi[r * words + k / 64] |= bit;
                        }
                    }
                }
            });
        Ok(codes)
    }
}

impl FeatureMap for TernaryFeatures {
    fn input_dim(&self) -> usize {
        self.weights.cols
    }

    fn dim(&self) -> usize {
        self.weights.rows
    }

    /// $z(\mathbf x) = \sigma^{ter}(W^{ter}\mathbf x)/\sqrt m$, so $\langle z(\mathbf x_i), z(\mathbf x_j)\rangle = G_{ij}$
    /// of eq. (6).
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let s = 1.0 / (self.weights.rows as f64).sqrt();
        Ok(self.transform_packed(x)?.unpack() * s)
    }

    /// Two bit-planes: 2 bits per feature (the paper counts 1: [`TernaryFeatures::paper_bits_per_feature`]).
    fn bits_per_feature(&self) -> f64 {
        2.0
    }
}

/// Algorithm 1 as a [`rfx_core::Fit`]: ternary features whose thresholds match the Gaussian moments of
/// `target` at $\hat\tau$ estimated from the fitting rows ([`TernaryParams::fit_to_target`]; data-dependent).
#[derive(Debug, Clone)]
pub struct TernaryFit {
    /// Dimension $m$ and sparsity $\epsilon$.
    pub params: TernaryParams,
    /// The activation whose kernel is matched ($d_0, d_1, d_2$ of Table 1).
    pub target: Activation,
}

impl rfx_core::Fit for TernaryFit {
    type Map = TernaryFeatures;
    fn fit_map(&self, data: rfx_core::FitData<'_>, rng: &mut RfxRng) -> Result<TernaryFeatures> {
        let x = data.rows("ternary features")?;
        Ok(self.params.fit_to_target(x, &self.target, rng)?.features)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand_distr::{Distribution, StandardNormal};
    use rfx_core::rng_stream;

    #[test]
    fn weight_law_matches_eq_4() {
        let (m, p) = (200, 500);
        for eps in [0.0, 0.5, 0.9] {
            let w = TernaryWeights::sample(m, p, eps, &mut rng_stream(1, "w")).unwrap();
            let d = w.to_dense();
            let n = (m * p) as f64;
            let zeros = d.iter().filter(|v| **v == 0.0).count() as f64 / n;
            let m2 = d.iter().map(|v| v * v).sum::<f64>() / n;
            let m4 = d.iter().map(|v| v.powi(4)).sum::<f64>() / n;
            // Standard errors: sqrt(eps(1-eps)/N) for the zero fraction; w^2 = s^2 B with B ~ Bernoulli(1-eps),
            // so sd(m2) = sqrt(eps/(1-eps)/N); sd(m4) = sqrt(eps)/(1-eps)^{3/2}/sqrt(N). Five of them.
            let se0 = (eps * (1.0 - eps) / n).sqrt();
            let se2 = (eps / (1.0 - eps) / n).sqrt();
            let se4 = eps.sqrt() / (1.0 - eps).powf(1.5) / n.sqrt();
            assert!(
                (zeros - eps).abs() <= 5.0 * se0 + 1e-12,
                "eps={eps}: P(0)={zeros}"
            );
            assert!(
                (m2 - 1.0).abs() <= 5.0 * se2 + 1e-12,
                "eps={eps}: E w^2={m2}"
            );
            assert!(
                (m4 - 1.0 / (1.0 - eps)).abs() <= 5.0 * se4 + 1e-12,
                "eps={eps}: E w^4={m4}"
            );
        }
        assert!(TernaryWeights::sample(2, 2, 1.0, &mut rng_stream(1, "w")).is_err());
    }

    fn features(m: usize, p: usize, eps: f64) -> TernaryFeatures {
        let th = Thresholds::new(-0.83, 0.37, 1.0).unwrap();
        TernaryParams::new(m)
            .sparsity(eps)
            .fit(p, th, &mut rng_stream(2, "trf"))
            .unwrap()
    }

    #[test]
    fn add_only_path_equals_dense_ternary_projection() {
        // Integer-valued inputs: u is an exact integer, so the only rounding is in the dense product.
        let (m, p, n) = (300, 40, 25);
        for eps in [0.0, 0.5, 0.9] {
            let f = features(m, p, eps);
            let mut rng = rng_stream(3, "x");
            let x = Array2::from_shape_fn((n, p), |_| f64::from(rng.gen_range(-3i32..=3)) / 8.0);
            let codes = f.transform_packed(x.view()).unwrap().unpack();
            let proj = x.dot(&f.weights().to_dense().t());
            let th = f.thresholds();
            let dense = proj.mapv(|t| {
                Activation::Ternary {
                    s_minus: th.s_minus,
                    s_plus: th.s_plus,
                }
                .eval(0, t)
            });
            assert_eq!(codes, dense, "eps={eps}");
            // All three values occur (the test is not vacuous).
            for v in [-1.0, 0.0, 1.0] {
                assert!(codes.iter().any(|c| *c == v));
            }
        }
    }

    #[test]
    fn blocked_projection_equals_row_projection() {
        // n = 19 is not a multiple of the block size; Gaussian (non-integer) inputs.
        let (m, p, n) = (130, 33, 19);
        let f = features(m, p, 0.4);
        let mut rng = rng_stream(6, "x");
        let x = Array2::from_shape_fn((n, p), |_| StandardNormal.sample(&mut rng));
        let codes = f.transform_packed(x.view()).unwrap();
        let (lo, hi) = (f.lo, f.hi);
        for i in 0..n {
            for k in 0..m {
                let u = f.weights().project_row(k, x.row(i));
                let want = if u > hi {
                    1
                } else if u < lo {
                    -1
                } else {
                    0
                };
                assert_eq!(codes.get(i, k), want, "({i}, {k})");
            }
        }
    }

    #[test]
    fn popcount_gram_equals_float_gram_bit_for_bit() {
        let (m, p, n) = (200, 30, 37); // m not a multiple of 64; n and 70 span 2 and 3 tiles of GRAM_TILE = 32
        let f = features(m, p, 0.3);
        let mut rng = rng_stream(4, "x");
        let x = Array2::from_shape_fn((n, p), |_| StandardNormal.sample(&mut rng));
        let codes = f.transform_packed(x.view()).unwrap();
        let u = codes.unpack();
        let float_gram = u.dot(&u.t());
        assert_eq!(codes.gram().mapv(|v| v as f64), float_gram);
        // each compiled copy of the counting loop on its own (the Gram above took the best one this CPU has)
        let mut by_path = vec![];
        let mut g = Array2::zeros((n, n));
        codes.fill_rows_portable(&codes, 0, &mut g.view_mut(), false);
        by_path.push(g.clone());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: POPCNT checked just above.
            unsafe { codes.fill_rows_popcnt(&codes, 0, &mut g.view_mut(), false) };
            by_path.push(g.clone());
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 checked just above.
            unsafe { codes.fill_rows_avx2(&codes, 0, &mut g.view_mut(), false) };
            by_path.push(g.clone());
        }
        for g in by_path {
            assert_eq!(g.mapv(|v| v as f64), float_gram);
        }
        let y = Array2::from_shape_fn((70, p), |_| StandardNormal.sample(&mut rng));
        let cy = f.transform_packed(y.view()).unwrap();
        assert_eq!(
            codes.cross_gram(&cy).unwrap().mapv(|v| v as f64),
            u.dot(&cy.unpack().t())
        );
        // transform() is the unpacked codes / sqrt(m), entry for entry.
        let z = f.transform(x.view()).unwrap();
        assert_eq!(z, &u * (1.0 / (m as f64).sqrt()));
        assert_eq!(TernaryCodes::from_dense(u.view()).unwrap(), codes);
        assert_eq!(codes.bytes(), 2 * n * 4 * 8);
        assert_eq!(f.bits_per_feature(), 2.0);
        assert_eq!(f.paper_bits_per_feature(), 1.0);
    }

    #[test]
    fn feature_frequencies_follow_the_ternary_law() {
        // For x with ||x||^2 = tau spread over many coordinates, w^T x ~ N(0, tau) (CLT), so
        // P(f = +1) = 1 - Phi(s+/sqrt tau) and P(f = -1) = Phi(s-/sqrt tau). Tolerance: 5 binomial
        // standard errors plus the CLT error (fourth cumulant (E w^4 - 3) sum x_j^4 = O(1/p), p = 400).
        let (m, p) = (20_000, 400);
        let f = features(m, p, 0.5);
        let x = Array2::from_elem((1, p), 1.0 / (p as f64).sqrt()); // tau = 1
        let c = f.transform_packed(x.view()).unwrap().unpack();
        let fp = c.iter().filter(|v| **v == 1.0).count() as f64 / m as f64;
        let fm = c.iter().filter(|v| **v == -1.0).count() as f64 / m as f64;
        let pp = 1.0 - crate::activation::std_normal_cdf(0.37);
        let pm = crate::activation::std_normal_cdf(-0.83);
        let se = (0.25 / m as f64).sqrt();
        assert!((fp - pp).abs() < 5.0 * se + 0.01, "{fp} vs {pp}");
        assert!((fm - pm).abs() < 5.0 * se + 0.01, "{fm} vs {pm}");
    }

    #[test]
    fn fit_to_target_rescales_when_infeasible() {
        let mut rng = rng_stream(5, "x");
        let x: Array2<f64> = Array2::from_shape_fn((50, 20), |_| StandardNormal.sample(&mut rng));
        let x = x / 20f64.sqrt(); // tau_hat ~ 1: RFF infeasible, ReLU feasible
        let p = TernaryParams::new(64).sparsity(0.5);
        let fit = p
            .fit_to_target(x.view(), &Activation::CosSin, &mut rng)
            .unwrap();
        assert!(fit.input_scale < 1.0);
        assert!(fit.solution.exact().is_some());
        let fit = p
            .fit_to_target(x.view(), &Activation::Relu, &mut rng)
            .unwrap();
        assert_eq!(fit.input_scale, 1.0);
        assert!(TernaryParams::new(0).validate().is_err());
        assert!(TernaryParams::new(3).sparsity(1.0).validate().is_err());
        let f = features(8, 5, 0.1);
        assert!(f.transform(Array2::zeros((2, 4)).view()).is_err());
    }
}
