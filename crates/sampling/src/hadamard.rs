//! The fast Walsh–Hadamard transform.
//!
//! $H_{d}$ is the Sylvester–Hadamard matrix of order $d = 2^k$, $H_1 = \[1\]$,
//! $H_{2d} = \begin{pmatrix} H_d & H_d \cr H_d & -H_d \end{pmatrix}$, with entries $\pm 1$ and
//! $H_d^\top H_d = d\thinspace I_d$. The *normalised* Hadamard matrix is $H_d/\sqrt d$ (orthogonal).
//! [`fwht`] computes $y = H_d\thinspace x$ in place in $O(d \log d)$ operations.

use rfx_core::{Result, RfxError};

/// The smallest power of two $\ge n$ (with `next_pow2(0) = 1`).
pub fn next_pow2(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// In-place unnormalised Walsh–Hadamard transform $a \leftarrow H_d\thinspace a$, $d$ = `a.len()` a power of two.
///
/// Returns an error if the length is not a power of two. Apply $1/\sqrt d$ yourself for the orthogonal
/// (normalised) transform.
pub fn fwht(a: &mut [f64]) -> Result<()> {
    if !a.len().is_power_of_two() {
        return Err(RfxError::invalid("fwht length", a.len(), "a power of two"));
    }
    fwht_pow2(a);
    Ok(())
}

/// [`fwht`] without the length check (the caller guarantees a power of two).
#[inline]
pub(crate) fn fwht_pow2(a: &mut [f64]) {
    let n = a.len();
    debug_assert!(n.is_power_of_two());
    let mut h = 1;
    while h < n {
        for block in a.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (u, v) in lo.iter_mut().zip(hi.iter_mut()) {
                let (x, y) = (*u, *v);
                *u = x + y;
                *v = x - y;
            }
        }
        h *= 2;
    }
}

/// Public re-export of the unchecked transform for sibling crates; panics in debug builds if the length
/// is not a power of two.
#[doc(hidden)]
pub fn fwht_unchecked(a: &mut [f64]) {
    fwht_pow2(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hadamard_dense(d: usize) -> Vec<Vec<f64>> {
        // (H_d)_{ij} = (-1)^{popcount(i & j)}
        (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| {
                        if (i & j).count_ones() % 2 == 0 {
                            1.0
                        } else {
                            -1.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn fwht_matches_dense_hadamard_and_is_orthogonal_up_to_d() {
        for k in 0..7 {
            let d = 1usize << k;
            let x: Vec<f64> = (0..d).map(|i| ((i * 7 + 3) % 11) as f64 - 5.0).collect();
            let mut y = x.clone();
            fwht(&mut y).unwrap();
            let h = hadamard_dense(d);
            for i in 0..d {
                let want: f64 = (0..d).map(|j| h[i][j] * x[j]).sum();
                assert!((y[i] - want).abs() < 1e-12);
            }
            // H H = d I
            fwht(&mut y).unwrap();
            for i in 0..d {
                assert!((y[i] - d as f64 * x[i]).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn fwht_rejects_non_powers_of_two() {
        assert!(fwht(&mut [0.0; 3]).is_err());
        assert!(fwht(&mut []).is_err());
        assert_eq!(next_pow2(5), 8);
        assert_eq!(next_pow2(8), 8);
        assert_eq!(next_pow2(0), 1);
    }
}
