//! Randomised quasi-Monte Carlo: scrambled Halton points.
//!
//! The Halton point with index $i$ in dimension $j$ is the radical inverse of $i$ in the $j$-th prime base
//! $b_j$: if $i = \sum_k a_k b_j^k$ then $t_{ij} = \sum_k a_k\thinspace b_j^{-k-1}$. *Scrambling* (random digit
//! permutation; Braaten–Weller / Matoušek): each digit position $k$ of each dimension $j$ gets an independent
//! uniformly random permutation $\pi_{jk}$ of $\lbrace0, \dots, b_j-1\rbrace$, applied to every digit including the
//! infinitely many leading zeros, $t_{ij} = \sum_{k \ge 0} \pi_{jk}(a_k)\thinspace b_j^{-k-1}$ (truncated once
//! $b_j^{-k-1} < 2^{-60}$). Each scrambled point is then uniform on $\[0,1\]^d$ (up to that truncation), so QMC
//! estimates are unbiased, and the point set keeps Halton's low discrepancy. No point is exactly $0$ or
//! $1$ after clamping to $[2^{-60}, 1-2^{-53}]$, so $\Psi^{-1}(t)$ is finite.
//!
//! Halton degrades in high dimension (survey §3.10: prefer Sobol′ for $d \gtrsim 50$); this is the only
//! sequence implemented here.

use ndarray::Array2;
use rand::seq::SliceRandom;
use rand::Rng;
use rfx_core::{Result, RfxError, RfxRng};

/// The first `n` primes (sieve of Eratosthenes with a growing bound).
pub fn first_primes(n: usize) -> Vec<u32> {
    if n == 0 {
        return Vec::new();
    }
    let mut limit =
        16usize.max((n as f64 * ((n as f64).ln() + (n as f64).ln().ln() + 2.0)) as usize);
    loop {
        let mut is = vec![true; limit + 1];
        is[0] = false;
        is[1] = false;
        let mut p = 2;
        while p * p <= limit {
            if is[p] {
                let mut q = p * p;
                while q <= limit {
                    is[q] = false;
                    q += p;
                }
            }
            p += 1;
        }
        let primes: Vec<u32> = (0..=limit)
            .filter(|&i| is[i])
            .map(|i| i as u32)
            .take(n)
            .collect();
        if primes.len() == n {
            return primes;
        }
        limit *= 2;
    }
}

/// A scrambled Halton sequence in dimension $d$ for indices $0 \le i <$ `max_points`.
#[derive(Clone, Debug)]
pub struct ScrambledHalton {
    bases: Vec<u32>,
    /// Per dimension: permutations of the low digit positions that indices can reach (flattened, one
    /// block of `base` entries per position).
    perms: Vec<Vec<u32>>,
    /// Per dimension: the contribution of the remaining (always-zero) digit positions, $\sum_k \pi_{jk}(0) b^{-k-1}$.
    tail: Vec<f64>,
    max_points: u64,
}

impl ScrambledHalton {
    /// Draws the scrambling permutations for dimension `d` and indices below `max_points`.
    pub fn new(d: usize, max_points: u64, rng: &mut RfxRng) -> Result<Self> {
        if d == 0 {
            return Err(RfxError::invalid("d", d, "an integer >= 1"));
        }
        if max_points == 0 {
            return Err(RfxError::invalid(
                "max_points",
                max_points,
                "an integer >= 1",
            ));
        }
        let bases = first_primes(d);
        let mut perms = Vec::with_capacity(d);
        let mut tail = Vec::with_capacity(d);
        for &b in &bases {
            // digits used by indices < max_points
            let mut nd = 0usize;
            let mut reach = 1u128;
            while reach < u128::from(max_points) {
                reach *= u128::from(b);
                nd += 1;
            }
            let nd = nd.max(1);
            let mut p = Vec::with_capacity(nd * b as usize);
            for _ in 0..nd {
                let mut perm: Vec<u32> = (0..b).collect();
                perm.shuffle(rng);
                p.extend_from_slice(&perm);
            }
            perms.push(p);
            // remaining positions: only pi(0) matters, which is a uniform digit
            let mut t = 0.0;
            let mut scale = (f64::from(b)).powi(-(nd as i32) - 1);
            while scale > 2f64.powi(-60) {
                let digit: u32 = rng.gen_range(0..b);
                t += f64::from(digit) * scale;
                scale /= f64::from(b);
            }
            tail.push(t);
        }
        Ok(Self {
            bases,
            perms,
            tail,
            max_points,
        })
    }

    /// Dimension $d$.
    pub fn dim(&self) -> usize {
        self.bases.len()
    }

    /// Writes the scrambled point with index `i` (< `max_points`) into `out` (length $d$).
    pub fn point(&self, i: u64, out: &mut [f64]) -> Result<()> {
        if i >= self.max_points {
            return Err(RfxError::invalid(
                "index",
                i,
                format!("below max_points = {}", self.max_points),
            ));
        }
        if out.len() != self.dim() {
            return Err(RfxError::DimensionMismatch(format!(
                "Halton point of dimension {} written to a buffer of length {}",
                self.dim(),
                out.len()
            )));
        }
        for (j, o) in out.iter_mut().enumerate() {
            let b = self.bases[j] as u64;
            let perm = &self.perms[j];
            let nd = perm.len() / b as usize;
            let inv_b = 1.0 / b as f64;
            let mut scale = inv_b;
            let mut v = 0.0;
            let mut rest = i;
            for k in 0..nd {
                let a = (rest % b) as usize;
                rest /= b;
                v += f64::from(perm[k * b as usize + a]) * scale;
                scale *= inv_b;
            }
            v += self.tail[j];
            *o = v.clamp(2f64.powi(-60), 1.0 - f64::EPSILON);
        }
        Ok(())
    }

    /// Points with indices `0..n` as the rows of an `n × d` matrix.
    pub fn points(&self, n: usize) -> Result<Array2<f64>> {
        let mut out = Array2::zeros((n, self.dim()));
        for (i, mut row) in out.rows_mut().into_iter().enumerate() {
            self.point(i as u64, row.as_slice_mut().expect("standard layout"))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::rng_stream;

    #[test]
    fn primes() {
        assert_eq!(first_primes(8), vec![2, 3, 5, 7, 11, 13, 17, 19]);
        assert_eq!(*first_primes(784).last().unwrap(), 6007);
    }

    #[test]
    fn scrambled_halton_is_stratified_and_uniform() {
        // Stratification: the first b^k points of a (scrambled) Halton sequence in base b put exactly one
        // point in each interval [l/b^k, (l+1)/b^k); this is deterministic and survives digit scrambling.
        let mut rng = rng_stream(3, "halton");
        let h = ScrambledHalton::new(3, 1 << 12, &mut rng).unwrap();
        let p = h.points(1024).unwrap();
        let mut seen = vec![false; 1024];
        for i in 0..1024 {
            let cell = (p[[i, 0]] * 1024.0) as usize;
            assert!(!seen[cell]);
            seen[cell] = true;
        }
        let mut seen = vec![false; 243];
        for i in 0..243 {
            let cell = (p[[i, 1]] * 243.0) as usize;
            assert!(!seen[cell]);
            seen[cell] = true;
        }
        // Uniformity of one scrambled point over scramblings: mean of t is 1/2 with sd 1/sqrt(12 R).
        let r = 4000;
        let mut sum = 0.0;
        for rep in 0..r {
            let mut rng = rng_stream(4, &format!("rep={rep}"));
            let h = ScrambledHalton::new(2, 16, &mut rng).unwrap();
            let mut x = [0.0; 2];
            h.point(5, &mut x).unwrap();
            sum += x[1];
        }
        let mean = sum / f64::from(r);
        assert!(
            (mean - 0.5).abs() < 5.0 / (12.0 * f64::from(r)).sqrt(),
            "{mean}"
        );
        assert!(h.point(1 << 12, &mut [0.0; 3]).is_err());
    }
}
