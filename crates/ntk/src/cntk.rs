//! The exact ReLU convolutional NTK with global average pooling (CNTK-GAP) of Zandieh et al. (NeurIPS 2021),
//! Definition 2 (App. F, Eqs. 103–108), in the "fixed first and last layer" form of Arora et al.'s code
//! (`--gap yes --fix yes`; `ntk-sketching.md` §3.7).
//!
//! Images $y, z \in \mathbb R^{d_1 \times d_2 \times c}$ are rows of length $d_1 d_2 c$ in height–width–channel
//! order (index $(i d_2 + j) c + l$). The filter is $q \times q$ ($q$ odd), with zero padding ("same"
//! convolution). With $\mathrm{conv}(T)\_{i,j,i^\prime,j^\prime} = \sum_{a,b} T_{i+a,j+b,i^\prime+a,j^\prime+b}$ over
//! $a, b \in \lbrace-\tfrac{q-1}2, \dots, \tfrac{q-1}2\rbrace$:
//!
//! * $N^{(0)}\_{ij}(x) = q^2\Vert x_{ij:}\Vert^2$, $N^{(h)}\_{ij} = q^{-2}\sum_{a,b} N^{(h-1)}_{i+a,j+b}$ (Eq. 103);
//! * $\Gamma^{(0)}\_{iji^\prime j^\prime} = \langle y_{ij:}, z_{i^\prime j^\prime:}\rangle$; for $h = 1..L$, with
//!   $D = \sqrt{N^{(h)}\_{ij}(y) N^{(h)}_{i^\prime j^\prime}(z)}$ and $\rho = \mathrm{conv}(\Gamma^{(h-1)})/D$:
//!   $\Gamma^{(h)} = \frac{D}{q^2}\kappa_1(\rho)$ (Eq. 104), $\dot\Gamma^{(h)} = \frac1{q^2}\kappa_0(\rho)$ (Eq. 105);
//! * $\Pi^{(0)} = 0$, $\Pi^{(h)} = \mathrm{conv}(\Pi^{(h-1)} \odot \dot\Gamma^{(h)} + \Gamma^{(h)})$ for $h < L$
//!   (Eq. 106), $\Pi^{(L)} = \Pi^{(L-1)} \odot \dot\Gamma^{(L)}$ (Eq. 107);
//! * $\Theta^{(L)}\_{\mathrm{cntk}}(y, z) = (d_1 d_2)^{-2} \sum_{i,j,i^\prime,j^\prime} \Pi^{(L)}_{iji^\prime j^\prime}$ (Eq. 108).
//!
//! $\kappa_0, \kappa_1$ are normalised so that $\kappa(1) = 1$, as everywhere in this crate. Where a patch is
//! all zeros ($D = 0$) we set $\rho = 0$: then $\Gamma^{(h)} = 0$ there and the value of $\dot\Gamma^{(h)}$ does
//! not matter for $\Gamma$ (the authors' code clamps $N \ge 10^{-8}$ instead; standardised images have no
//! zero patches).
//!
//! **Normalisation against the fully connected NTK.** For $1 \times 1$ images (and any $q$), the recursion
//! collapses to the fully connected one with a factor $q^{-2}$ per layer and without the two fixed layers:
//! $q^{2L}\Theta_{\mathrm{cntk}}^{(L)}(y, z) = \Theta^{(L)}(y,z) - \Sigma^{(L)}(y,z) - \langle y, z\rangle
//! \prod_{h=1}^{L}\dot\Sigma^{(h)}(y,z)$, where $\Theta^{(L)}$ is the depth-$L$ ReLU NTK of
//! [`rfx_kernels::ReluNtk`] and $\Sigma^{(h)}$ the NNGP. On the diagonal that is $(L-1)\Vert x\Vert^2$ (Lemma 13:
//! $\Pi^{(L)}\_{ijij}(y,y) = \frac{L-1}{q^2}N^{(L)}_{ij}(y)$). So $L = 1$ gives the zero kernel; Arora et al.'s
//! "depth $d$" is $L = d - 1$.
//!
//! Cost per pair: $O(L q^2 (d_1 d_2)^2)$ (tensors of $(d_1 d_2)^2$ entries); a Gram matrix of $n$ images costs
//! $n^2$ times that, the $\Omega(d^4 n^2)$ that CNTKSketch avoids. Pairs are evaluated in parallel.

use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use rfx_core::{Kernel, Result, RfxError};

use rfx_kernels::{arccos0, arccos1};

/// The exact ReLU CNTK-GAP of depth $L$ on $d_1 \times d_2 \times c$ images with a $q \times q$ filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cntk {
    /// Number of convolutional layers $L \ge 1$ of Definition 2.
    pub depth: usize,
    /// Filter size $q$ (odd).
    pub filter: usize,
    /// Image height $d_1$.
    pub height: usize,
    /// Image width $d_2$.
    pub width: usize,
    /// Channels $c$.
    pub channels: usize,
}

impl Cntk {
    /// Checks the shape: every size positive, $q$ odd, $L \le 64$.
    pub fn new(
        depth: usize,
        filter: usize,
        height: usize,
        width: usize,
        channels: usize,
    ) -> Result<Self> {
        if depth == 0 || depth > 64 {
            return Err(RfxError::invalid("depth", depth, "1..=64"));
        }
        if filter % 2 == 0 {
            return Err(RfxError::invalid(
                "filter",
                filter,
                "an odd size (1, 3, 5, ...)",
            ));
        }
        if height == 0 || width == 0 || channels == 0 {
            return Err(RfxError::invalid(
                "image shape",
                format!("{height}x{width}x{channels}"),
                "positive height, width and channels",
            ));
        }
        Ok(Self {
            depth,
            filter,
            height,
            width,
            channels,
        })
    }

    /// Length of an image row, $d_1 d_2 c$.
    pub fn input_dim(&self) -> usize {
        self.height * self.width * self.channels
    }

    fn pixels(&self) -> usize {
        self.height * self.width
    }

    /// $\sum_{a,b} f(i+a, j+b)$ over the filter window, zero outside the image.
    fn box_sum(&self, f: &[f64]) -> Vec<f64> {
        let (h, w, r) = (
            self.height as isize,
            self.width as isize,
            (self.filter / 2) as isize,
        );
        let mut out = vec![0.0; f.len()];
        for i in 0..h {
            for j in 0..w {
                let mut s = 0.0;
                for a in (i - r).max(0)..=(i + r).min(h - 1) {
                    for b in (j - r).max(0)..=(j + r).min(w - 1) {
                        s += f[(a * w + b) as usize];
                    }
                }
                out[(i * w + j) as usize] = s;
            }
        }
        out
    }

    /// $N^{(h)}(x)$ for $h = 0..=L$ (Eq. 103), each of length $d_1 d_2$.
    pub fn patch_norms(&self, x: ArrayView1<'_, f64>) -> Vec<Vec<f64>> {
        let q2 = (self.filter * self.filter) as f64;
        let c = self.channels;
        let n0: Vec<f64> = (0..self.pixels())
            .map(|p| q2 * (0..c).map(|l| x[p * c + l] * x[p * c + l]).sum::<f64>())
            .collect();
        let mut all = vec![n0];
        for h in 1..=self.depth {
            let next = self
                .box_sum(&all[h - 1])
                .into_iter()
                .map(|v| v / q2)
                .collect();
            all.push(next);
        }
        all
    }

    /// The `f64` values one pair $\Theta(y, z)$ holds at once: five $P \times P$ tensors ($\Gamma$, $\Pi$ and the
    /// scratch of one layer step), $P = d_1 d_2$; saturating. For a memory check before a Gram is computed
    /// (each worker thread holds one pair's).
    pub fn pair_f64s(height: usize, width: usize) -> u128 {
        let p = (height as u128).saturating_mul(width as u128);
        p.saturating_mul(p).saturating_mul(5)
    }

    /// $\mathrm{conv}(T)\_{iji^\prime j^\prime} = \sum_{a,b} T_{i+a,j+b,i^\prime+a,j^\prime+b}$ for $T$ stored as $P \times P$ with
    /// $P = d_1 d_2$ (row $= (i, j)$, column $= (i^\prime, j^\prime)$), zero padding. The window is a product of a
    /// range of $a$ and a range of $b$ (both shifts must keep both indices inside the image), so the sum is
    /// done as two one-dimensional passes, over $b$ then over $a$: $2q$ instead of $q^2$ terms per entry.
    fn conv(&self, t: &[f64], tmp: &mut [f64], out: &mut [f64]) {
        let (h, w, r) = (self.height, self.width, self.filter / 2);
        let p = h * w;
        // the shifts s with 0 <= k + s < n and 0 <= k2 + s < n, for |s| <= r
        let range = |k: usize, k2: usize, n: usize| {
            let lo = k.min(k2).min(r);
            let hi = (n - 1 - k.max(k2)).min(r);
            (lo, hi)
        };
        // pass over b: tmp[i,j,i',j'] = sum_b t[i, j+b, i', j'+b]
        for i in 0..h {
            for j in 0..w {
                let row = i * w + j;
                for i2 in 0..h {
                    for j2 in 0..w {
                        let (lo, hi) = range(j, j2, w);
                        let mut acc = 0.0;
                        for k in 0..lo + hi + 1 {
                            let (jb, j2b) = (j + k - lo, j2 + k - lo);
                            acc += t[(i * w + jb) * p + i2 * w + j2b];
                        }
                        tmp[row * p + i2 * w + j2] = acc;
                    }
                }
            }
        }
        // pass over a: out[i,j,i',j'] = sum_a tmp[i+a, j, i'+a, j']
        for i in 0..h {
            for j in 0..w {
                let row = i * w + j;
                for i2 in 0..h {
                    let (lo, hi) = range(i, i2, h);
                    for j2 in 0..w {
                        let mut acc = 0.0;
                        for k in 0..lo + hi + 1 {
                            let (ia, i2a) = (i + k - lo, i2 + k - lo);
                            acc += tmp[(ia * w + j) * p + i2a * w + j2];
                        }
                        out[row * p + i2 * w + j2] = acc;
                    }
                }
            }
        }
    }

    /// [`Cntk::pair`] with its arguments in a canonical order (lexicographic on the values), so that
    /// $\Theta(y, z)$ and $\Theta(z, y)$ are the same bits and a mirrored triangle equals a computed one.
    fn sym_pair<D: Duals + ?Sized>(
        &self,
        y: ArrayView1<'_, f64>,
        z: ArrayView1<'_, f64>,
        ny: &[Vec<f64>],
        nz: &[Vec<f64>],
        duals: &D,
    ) -> f64 {
        let order = y
            .iter()
            .zip(z.iter())
            .map(|(a, b)| a.total_cmp(b))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal);
        if order.is_gt() {
            self.pair(z, y, nz, ny, duals)
        } else {
            self.pair(y, z, ny, nz, duals)
        }
    }

    /// One layer $h$ of Definition 2 on the $P \times P$ tensors ($P = d_1 d_2$, row $(i, j)$, column
    /// $(i^\prime, j^\prime)$): on entry `g` $= \Gamma^{(h-1)}$ and `pi` $= \Pi^{(h-1)}$, on return `g` $= \Gamma^{(h)}$ and
    /// `pi` $= \Pi^{(h)}$ (Eqs. 104–107, with the layer's dual activations from `duals`). `ny_h`, `nz_h` are
    /// $N^{(h)}$ of the two images. `s`, `gd`, `tmp` are scratch of length $P^2$.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn step<D: Duals + ?Sized>(
        &self,
        h: usize,
        g: &mut [f64],
        pi: &mut [f64],
        ny_h: &[f64],
        nz_h: &[f64],
        duals: &D,
        (s, gd, tmp): (&mut [f64], &mut [f64], &mut [f64]),
    ) {
        let p = self.pixels();
        let q2 = (self.filter * self.filter) as f64;
        self.conv(g, tmp, s);
        for k in 0..p * p {
            let den = (ny_h[k / p] * nz_h[k % p]).sqrt();
            let rho = if den > 0.0 { s[k] / den } else { 0.0 };
            let (k1, k0) = duals.duals(h, rho);
            g[k] = den / q2 * k1;
            gd[k] = k0 / q2;
        }
        if h < self.depth {
            // s is free again: reuse it for Π ⊙ Γ̇ + Γ
            for k in 0..p * p {
                s[k] = pi[k] * gd[k] + g[k];
            }
            self.conv(s, tmp, pi);
        } else {
            pi.iter_mut().zip(gd.iter()).for_each(|(v, d)| *v *= d);
        }
    }

    /// $\Theta^{(L)}_{\mathrm{cntk}}(y, z)$ given both images and their [`Cntk::patch_norms`].
    fn pair<D: Duals + ?Sized>(
        &self,
        y: ArrayView1<'_, f64>,
        z: ArrayView1<'_, f64>,
        ny: &[Vec<f64>],
        nz: &[Vec<f64>],
        duals: &D,
    ) -> f64 {
        let (p, c) = (self.pixels(), self.channels);
        // Γ⁽⁰⁾ = ⟨y_ij, z_i'j'⟩
        let mut g: Vec<f64> = (0..p * p)
            .map(|k| {
                let (u, v) = (k / p, k % p);
                (0..c).map(|l| y[u * c + l] * z[v * c + l]).sum()
            })
            .collect();
        let mut pi = vec![0.0; p * p];
        let (mut s, mut gd, mut tmp) = (vec![0.0; p * p], vec![0.0; p * p], vec![0.0; p * p]);
        for h in 1..=self.depth {
            self.step(
                h,
                &mut g,
                &mut pi,
                &ny[h],
                &nz[h],
                duals,
                (&mut s, &mut gd, &mut tmp),
            );
        }
        pi.iter().sum::<f64>() / (p * p) as f64
    }

    /// The Gram matrix with the dual activations `duals` in place of $(\kappa_1, \kappa_0)$: all pairs in
    /// parallel, the patch norms of each image computed once, one triangle of $K(X, X)$ mirrored.
    pub fn gram_with<D: Duals + ?Sized>(
        &self,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
        duals: &D,
    ) -> Result<Array2<f64>> {
        for r in x.outer_iter().chain(y.outer_iter()) {
            self.check_row(r)?;
        }
        let nx: Vec<_> = x.outer_iter().map(|r| self.patch_norms(r)).collect();
        let ny: Vec<_> = y.outer_iter().map(|r| self.patch_norms(r)).collect();
        // K(X, X): compute the upper triangle and mirror it (the kernel is symmetric in its arguments)
        let same = x == y;
        let mut k = Array2::zeros((x.nrows(), y.nrows()));
        k.axis_iter_mut(Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(i, mut row)| {
                let start = if same { i } else { 0 };
                for j in start..row.len() {
                    row[j] = self.sym_pair(x.row(i), y.row(j), &nx[i], &ny[j], duals);
                }
            });
        if same {
            for i in 0..k.nrows() {
                for j in 0..i {
                    k[[i, j]] = k[[j, i]];
                }
            }
        }
        Ok(k)
    }

    fn check_row(&self, x: ArrayView1<'_, f64>) -> Result<()> {
        if x.len() != self.input_dim() {
            return Err(RfxError::DimensionMismatch(format!(
                "cntk: an image of {}x{}x{} has {} values, the row has {}",
                self.height,
                self.width,
                self.channels,
                self.input_dim(),
                x.len()
            )));
        }
        Ok(())
    }
}

impl Kernel for Cntk {
    /// One pair (Eq. 108). Panics only if a row's length is not $d_1 d_2 c$; use [`Kernel::gram`] for a
    /// checked call.
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        assert!(
            self.check_row(x).is_ok() && self.check_row(y).is_ok(),
            "cntk: row length must be height*width*channels"
        );
        self.sym_pair(x, y, &self.patch_norms(x), &self.patch_norms(y), &ReluDuals)
    }

    /// All pairs, in parallel over pairs; the patch norms of each image are computed once.
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.gram_with(x, y, &ReluDuals)
    }
}

/// The dual activations of layer $h$ of the recursion: $(\kappa_1(\rho), \kappa_0(\rho))$ for the ReLU
/// CNTK ([`ReluDuals`]), or polynomial approximations of them ([`crate::cntksketch::CntkPolynomials`], whose
/// CNTK is the expectation target of CNTKSketch).
pub trait Duals: Sync {
    /// $(\kappa_1^{(h)}(\rho), \kappa_0^{(h)}(\rho))$ for layer $h \in 1..=L$.
    fn duals(&self, layer: usize, rho: f64) -> (f64, f64);
}

/// The ReLU dual activations $\kappa_1, \kappa_0$ (normalised to $\kappa(1) = 1$) at every layer.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReluDuals;

impl Duals for ReluDuals {
    fn duals(&self, _layer: usize, rho: f64) -> (f64, f64) {
        (arccos1(rho), arccos0(rho))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array1;
    use rand::Rng;
    use rfx_core::rng_stream;
    use rfx_kernels::relu_ntk;

    fn random_images(n: usize, len: usize, seed: u64) -> Array2<f64> {
        let mut rng = rng_stream(seed, "cntk-test");
        Array2::from_shape_simple_fn((n, len), || rng.gen::<f64>() * 2.0 - 1.0)
    }

    /// $\Theta - \Sigma^{(L)} - \langle y,z\rangle\prod_h \dot\Sigma^{(h)}$ of the fully connected ReLU NTK.
    fn fc_without_fixed_layers(depth: usize, y: &[f64], z: &[f64]) -> f64 {
        let dot: f64 = y.iter().zip(z).map(|(a, b)| a * b).sum();
        let ny = y.iter().map(|a| a * a).sum::<f64>().sqrt();
        let nz = z.iter().map(|a| a * a).sum::<f64>().sqrt();
        let rho = dot / (ny * nz);
        let mut sigma = rho;
        let mut dot_prod = 1.0;
        for _ in 0..depth {
            dot_prod *= arccos0(sigma);
            sigma = arccos1(sigma);
        }
        ny * nz * (relu_ntk(depth, rho) - sigma - rho * dot_prod)
    }

    #[test]
    fn single_pixel_cntk_is_the_fully_connected_ntk_without_its_fixed_layers() {
        let x = random_images(4, 5, 1);
        for depth in 1..=4 {
            for q in [1usize, 3, 5] {
                let k = Cntk::new(depth, q, 1, 1, 5).unwrap();
                let g = k.gram(x.view(), x.view()).unwrap();
                let scale = (q * q) as f64;
                for i in 0..4 {
                    for j in 0..4 {
                        let want = fc_without_fixed_layers(
                            depth,
                            x.row(i).as_slice().unwrap(),
                            x.row(j).as_slice().unwrap(),
                        );
                        let got = scale.powi(depth as i32) * g[[i, j]];
                        assert!(
                            (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                            "L={depth} q={q} ({i},{j}): {got} vs {want}"
                        );
                    }
                    // diagonal: (L - 1) ||x||^2
                    let n2 = x.row(i).dot(&x.row(i));
                    let d = scale.powi(depth as i32) * g[[i, i]];
                    assert!((d - (depth as f64 - 1.0) * n2).abs() <= 1e-12 * (1.0 + n2));
                }
            }
        }
    }

    #[test]
    fn with_a_one_by_one_filter_cntk_is_the_pixel_pair_average_of_the_fully_connected_kernel() {
        // q = 1: every convolution is the identity, so Θ = mean over pixel pairs (p, p') of the fully
        // connected recursion on the channel vectors y_p, z_p' (checks the GAP indexing of Eq. 108)
        let (h, w, c) = (3, 2, 4);
        let x = random_images(3, h * w * c, 4);
        for depth in 2..=3 {
            let k = Cntk::new(depth, 1, h, w, c).unwrap();
            let g = k.gram(x.view(), x.view()).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    let (a, b) = (x.row(i), x.row(j));
                    let mut want = 0.0;
                    for p in 0..h * w {
                        for p2 in 0..h * w {
                            want += fc_without_fixed_layers(
                                depth,
                                &a.as_slice().unwrap()[p * c..(p + 1) * c],
                                &b.as_slice().unwrap()[p2 * c..(p2 + 1) * c],
                            );
                        }
                    }
                    want /= ((h * w) * (h * w)) as f64;
                    // same-pixel pairs have cosine 1 up to round-off δ ~ 1e-16, computed in two different
                    // ways; κ₁ has a sqrt(1 - t²) term, so they may differ by ~sqrt(2δ)/π ≈ 5e-9 relative
                    assert!(
                        (g[[i, j]] - want).abs() <= 2e-8 * (1.0 + want.abs()),
                        "L={depth} ({i},{j}): {} vs {want}",
                        g[[i, j]]
                    );
                }
            }
        }
    }

    #[test]
    fn cntk_gram_is_symmetric_psd_homogeneous_and_flip_invariant() {
        let (h, w, c) = (4, 5, 2);
        let k = Cntk::new(3, 3, h, w, c).unwrap();
        let x = random_images(5, h * w * c, 2);
        let g = k.gram(x.view(), x.view()).unwrap();
        for i in 0..5 {
            assert!(g[[i, i]] > 0.0);
            for j in 0..5 {
                assert!((g[[i, j]] - g[[j, i]]).abs() <= 1e-13 * g[[i, i]].max(g[[j, j]]));
                // Cauchy–Schwarz for a positive semidefinite kernel
                assert!(g[[i, j]].powi(2) <= g[[i, i]] * g[[j, j]] * (1.0 + 1e-12));
            }
        }
        // positively homogeneous of degree 1 in each argument
        let y = x.row(0).to_owned() * 2.5;
        let v = k.eval(y.view(), x.row(1));
        assert!((v - 2.5 * g[[0, 1]]).abs() <= 1e-12 * v.abs());
        // flipping both images left-right maps the zero-padded convolutions onto themselves
        let flip = |r: ArrayView1<'_, f64>| -> Array1<f64> {
            let mut out = Array1::zeros(r.len());
            for i in 0..h {
                for j in 0..w {
                    for l in 0..c {
                        out[(i * w + (w - 1 - j)) * c + l] = r[(i * w + j) * c + l];
                    }
                }
            }
            out
        };
        let v = k.eval(flip(x.row(2)).view(), flip(x.row(3)).view());
        assert!((v - g[[2, 3]]).abs() <= 1e-12 * v.abs().max(1e-300));
        // and it is not a trivially permutation-invariant kernel: shuffling pixels of one image changes it
        let mut s = x.row(2).to_owned();
        s.as_slice_mut().unwrap().swap(0, 2 * c);
        s.as_slice_mut().unwrap().swap(1, 2 * c + 1);
        assert!((k.eval(s.view(), x.row(3)) - g[[2, 3]]).abs() > 1e-9 * g[[2, 3]].abs());
    }

    /// The direct $q^2$-term definition of conv, as a reference for the two-pass version.
    fn conv_direct(k: &Cntk, t: &[f64]) -> Vec<f64> {
        let (h, w, r) = (k.height as isize, k.width as isize, (k.filter / 2) as isize);
        let p = (h * w) as usize;
        let mut out = vec![0.0; p * p];
        for i in 0..h {
            for j in 0..w {
                for i2 in 0..h {
                    for j2 in 0..w {
                        let mut s = 0.0;
                        for a in -r..=r {
                            for b in -r..=r {
                                let (ia, jb, i2a, j2b) = (i + a, j + b, i2 + a, j2 + b);
                                let inside = |u: isize, n: isize| (0..n).contains(&u);
                                if inside(ia, h)
                                    && inside(i2a, h)
                                    && inside(jb, w)
                                    && inside(j2b, w)
                                {
                                    s += t[(ia * w + jb) as usize * p + (i2a * w + j2b) as usize];
                                }
                            }
                        }
                        out[(i * w + j) as usize * p + (i2 * w + j2) as usize] = s;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn two_pass_convolution_equals_the_direct_sum() {
        for (h, w, q) in [(4, 5, 3), (3, 3, 5), (6, 2, 3), (1, 4, 3), (5, 5, 1)] {
            let k = Cntk::new(2, q, h, w, 1).unwrap();
            let p = h * w;
            let t = random_images(1, p * p, 7).row(0).to_vec();
            let (mut tmp, mut out) = (vec![0.0; p * p], vec![0.0; p * p]);
            k.conv(&t, &mut tmp, &mut out);
            let want = conv_direct(&k, &t);
            for (a, b) in out.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                    "{h}x{w} q={q}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn gram_against_itself_equals_the_pairwise_values() {
        let k = Cntk::new(3, 3, 3, 4, 2).unwrap();
        let x = random_images(4, 24, 8);
        let g = k.gram(x.view(), x.view()).unwrap();
        let y = x.clone();
        let g2 = k.gram(x.view(), x.slice(ndarray::s![1.., ..])).unwrap();
        // arguments are put in a canonical order, so the mirrored triangle is bit-identical to a computed one
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(g[[i, j]], k.eval(x.row(i), y.row(j)));
                assert_eq!(g[[i, j]], k.eval(y.row(j), x.row(i)));
            }
            for j in 1..4 {
                assert_eq!(g2[[i, j - 1]], g[[i, j]]);
            }
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        assert!(Cntk::new(0, 3, 4, 4, 1).is_err());
        assert!(Cntk::new(2, 2, 4, 4, 1).is_err());
        assert!(Cntk::new(2, 3, 0, 4, 1).is_err());
        let k = Cntk::new(2, 3, 2, 2, 1).unwrap();
        let x = random_images(2, 5, 3);
        let err = k.gram(x.view(), x.view()).unwrap_err().to_string();
        assert!(err.contains("2x2x1") && err.contains('5'), "{err}");
    }
}
