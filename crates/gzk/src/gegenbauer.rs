//! Normalised Gegenbauer polynomials $P_d^\ell$ with $P_d^\ell(1) = 1$ (paper Eq. 2), scalar and batched.
//!
//! All evaluation uses the three-term recurrence (corrected, see [`gegenbauer_all`])
//! $$P_d^{0} = 1,\quad P_d^{1} = t,\quad
//!   P_d^{\ell+1}(t) = \frac{(2\ell+d-2)\thinspace t\thinspace P_d^{\ell}(t) - \ell\thinspace P_d^{\ell-1}(t)}{\ell+d-2}\quad(\ell \ge 1),$$
//! whose forward evaluation is stable on $[-1,1]$: every solution of the recurrence stays bounded there
//! (no dominant solution swamps $P_d^\ell$), so rounding errors grow at most linearly in $\ell$. In terms of the classical Gegenbauer polynomials,
//! $P_d^\ell = C_\ell^{(\nu)}/C_\ell^{(\nu)}(1)$ with $\nu = d/2 - 1$.

use ndarray::{Array, Array3, ArrayView, ArrayView2, Axis, Dimension, Zip};
use rfx_core::{Result, RfxError};

/// Arrays with at least this many elements are updated in parallel (rayon) by the batch routines.
const PAR_THRESHOLD: usize = 1 << 15;

/// The polynomial basis of a truncated series on $[-1,1]$.
///
/// * [`Basis::Gegenbauer`]`(d)`: $P_d^\ell$, $d \ge 2$ ($d = 2$: Chebyshev $T_\ell$; $d = 3$: Legendre).
/// * [`Basis::Monomial`]: $t^\ell$, the limit $d \to \infty$ of $P_d^\ell$ (Taylor series at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Basis {
    /// Monomials $t^\ell$ ($d = \infty$).
    Monomial,
    /// Normalised Gegenbauer polynomials $P_d^\ell$ for the sphere $\mathbb{S}^{d-1}$; requires $d \ge 2$.
    Gegenbauer(usize),
}

impl Basis {
    /// The Gegenbauer basis for dimension `d`, checking $d \ge 2$.
    pub fn gegenbauer(d: usize) -> Result<Self> {
        let b = Basis::Gegenbauer(d);
        b.validate()?;
        Ok(b)
    }

    /// `Err(InvalidParameter)` for `Gegenbauer(d)` with $d < 2$; `Ok` otherwise.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Basis::Gegenbauer(d) if d < 2 => Err(RfxError::invalid(
                "d",
                d,
                "an integer d >= 2 (d = 2: Chebyshev, d = 3: Legendre)",
            )),
            _ => Ok(()),
        }
    }

    /// The dimension $d$, or `None` for the monomial basis ($d = \infty$).
    pub fn dimension(&self) -> Option<usize> {
        match *self {
            Basis::Monomial => None,
            Basis::Gegenbauer(d) => Some(d),
        }
    }

    /// A short label for tables and file names: `"taylor"` or `"d=4"`.
    pub fn label(&self) -> String {
        match *self {
            Basis::Monomial => "taylor".to_string(),
            Basis::Gegenbauer(d) => format!("d={d}"),
        }
    }

    /// Coefficients $(A_\ell, B_\ell)$ of $P^{\ell+1}(t) = A_\ell\thinspace t\thinspace P^\ell(t) - B_\ell\thinspace P^{\ell-1}(t)$:
    /// $A_0 = 1, B_0 = 0$; for $\ell \ge 1$, $A_\ell = \frac{2\ell+d-2}{\ell+d-2}$, $B_\ell = \frac{\ell}{\ell+d-2}$
    /// (monomials: $A_\ell = 1$, $B_\ell = 0$). NaN for an invalid `d`.
    #[inline]
    pub fn recurrence(&self, l: usize) -> (f64, f64) {
        match *self {
            Basis::Monomial => (1.0, 0.0),
            Basis::Gegenbauer(d) if d < 2 => (f64::NAN, f64::NAN),
            Basis::Gegenbauer(_) if l == 0 => (1.0, 0.0),
            Basis::Gegenbauer(d) => {
                let (lf, df) = (l as f64, d as f64);
                let den = lf + df - 2.0;
                ((2.0 * lf + df - 2.0) / den, lf / den)
            }
        }
    }

    /// The basis function of degree `l` at `t` (any real `t`; the bound $|P| \le 1$ holds on $[-1,1]$).
    /// NaN for an invalid `d`.
    pub fn eval(&self, l: usize, t: f64) -> f64 {
        match *self {
            Basis::Monomial => t.powi(l.min(i32::MAX as usize) as i32),
            Basis::Gegenbauer(d) => gegenbauer(d, l, t),
        }
    }

    /// Fills `out[ℓ]` with the basis function of degree ℓ at `t` for $\ell = 0,\dots,$`out.len()−1`,
    /// in one pass of the recurrence. NaN-filled for an invalid `d`.
    pub fn eval_all(&self, t: f64, out: &mut [f64]) {
        if out.is_empty() {
            return;
        }
        out[0] = if self.validate().is_ok() {
            1.0
        } else {
            f64::NAN
        };
        if out.len() == 1 {
            return;
        }
        out[1] = out[0] * t;
        for l in 1..out.len() - 1 {
            let (a, b) = self.recurrence(l);
            out[l + 1] = a * t * out[l] - b * out[l - 1];
        }
    }
}

/// The normalised Gegenbauer polynomial $P_d^\ell(t)$ (paper Eq. 2), $P_d^\ell(1) = 1$, by the recurrence.
///
/// Requires $d \ge 2$ (returns NaN otherwise). $d = 2$ gives the Chebyshev polynomial
/// $T_\ell(t) = \cos(\ell \arccos t)$, $d = 3$ the Legendre polynomial; as $d \to \infty$,
/// $P_d^\ell(t) \to t^\ell$ with an $O(1/d)$ correction $-\frac{\ell(\ell-1)}{2(d-1)}t^{\ell-2}(1-t^2)$.
/// Cost $O(\ell)$; to get all degrees at once use [`gegenbauer_all`].
pub fn gegenbauer(d: usize, l: usize, t: f64) -> f64 {
    if d < 2 {
        return f64::NAN;
    }
    if l == 0 {
        return 1.0;
    }
    let basis = Basis::Gegenbauer(d);
    let (mut prev, mut cur) = (1.0, t);
    for k in 1..l {
        let (a, b) = basis.recurrence(k);
        let next = a * t * cur - b * prev;
        prev = cur;
        cur = next;
    }
    cur
}

/// Fills `out[ℓ]` $= P_d^\ell(t)$ for $\ell = 0,\dots,q$ with $q = $ `out.len()` − 1, in one pass.
///
/// Uses the three-term recurrence
/// $$P_d^{\ell+1}(t) = \frac{(2\ell+d-2)\thinspace t\thinspace P_d^{\ell}(t) - \ell\thinspace P_d^{\ell-1}(t)}{\ell+d-2},$$
/// i.e. the classical Gegenbauer recurrence $(\ell+1)C_{\ell+1}^{(\nu)} = 2(\ell+\nu)tC_\ell^{(\nu)} -
/// (\ell+2\nu-1)C_{\ell-1}^{(\nu)}$ rescaled by $C_\ell^{(\nu)}(1) = \binom{\ell+2\nu-1}{\ell}$, $\nu = d/2-1$.
/// **The recurrence printed in the paper's App. J.3,**
/// $P^{\ell+1} = \frac{2\ell+d-4}{\ell+d-3}P^\ell - \frac{\ell-1}{\ell+d-3}P^{\ell-1}$, **is wrong**: it lacks
/// the factor $t$, its index is shifted by one and it divides by zero at $d=2$, $\ell=1$ (research notes §2.3;
/// inserting $t$ and substituting $\ell \to \ell-1$ turns it into the formula above). NaN-filled for $d < 2$.
pub fn gegenbauer_all(d: usize, t: f64, out: &mut [f64]) {
    Basis::Gegenbauer(d).eval_all(t, out);
}

/// Reference implementation of the explicit sum (paper Eq. 2):
/// $$P_d^{\ell}(t) = \sum_{j=0}^{\lfloor \ell/2 \rfloor} c_j\thinspace t^{\ell-2j} (1-t^2)^j,\qquad c_0 = 1,\quad
///   c_{j+1} = -\frac{(\ell-2j)(\ell-2j-1)}{2(j+1)(d-1+2j)}\thinspace c_j .$$
/// Slower than the recurrence and subject to cancellation for large $\ell$; meant for cross-checks.
/// NaN for $d < 2$.
pub fn gegenbauer_explicit(d: usize, l: usize, t: f64) -> f64 {
    if d < 2 {
        return f64::NAN;
    }
    let s = 1.0 - t * t;
    let mut c = 1.0;
    let mut sum = 0.0;
    for j in 0..=l / 2 {
        sum += c * t.powi((l - 2 * j) as i32) * s.powi(j as i32);
        let (lf, jf, df) = (l as f64, j as f64, d as f64);
        c *=
            -((lf - 2.0 * jf) * (lf - 2.0 * jf - 1.0)) / (2.0 * (jf + 1.0) * (df - 1.0 + 2.0 * jf));
    }
    sum
}

/// Batched evaluation: calls `f(ℓ, P_ℓ(T))` for $\ell = 0,\dots,q$ in increasing order, where
/// $P_\ell(T)$ is the basis function applied elementwise to the array of cosines `t`.
///
/// Only two work arrays of the shape of `t` are allocated, whatever $q$ is; large arrays are updated in
/// parallel. This is the building block of random Gegenbauer features (Definition 8), whose features are
/// $\sum_{\ell \le q} \sqrt{\alpha_{\ell,d}}\thinspace h_\ell(\Vert x\Vert)\thinspace P_d^\ell(\langle x, w\rangle/\Vert x\Vert)$: accumulate
/// inside `f` instead of storing every degree. Errors only for an invalid basis.
pub fn gegenbauer_for_each<D, F>(
    basis: Basis,
    q: usize,
    t: ArrayView<f64, D>,
    mut f: F,
) -> Result<()>
where
    D: Dimension,
    F: FnMut(usize, ArrayView<f64, D>),
{
    basis.validate()?;
    let mut prev = Array::<f64, D>::ones(t.raw_dim());
    f(0, prev.view());
    if q == 0 {
        return Ok(());
    }
    let mut cur = t.to_owned();
    f(1, cur.view());
    let parallel = t.len() >= PAR_THRESHOLD;
    for l in 1..q {
        let (a, b) = basis.recurrence(l);
        // prev ← P_{l+1} = a t P_l − b P_{l−1}, then swap so that cur holds P_{l+1}.
        let zip = Zip::from(&mut prev).and(&cur).and(&t);
        let step = |p: &mut f64, &c: &f64, &x: &f64| *p = a * x * c - b * *p;
        if parallel {
            zip.par_for_each(step);
        } else {
            zip.for_each(step);
        }
        std::mem::swap(&mut prev, &mut cur);
        f(l + 1, cur.view());
    }
    Ok(())
}

/// All degrees at once: returns an array of shape $(q+1, n, m)$ whose slice `[ℓ, .., ..]` is $P_\ell(T)$
/// for the $n \times m$ array of cosines `t`. Memory $(q+1)nm$ doubles; prefer [`gegenbauer_for_each`]
/// when only a weighted sum over ℓ is needed.
pub fn gegenbauer_stack(basis: Basis, q: usize, t: ArrayView2<f64>) -> Result<Array3<f64>> {
    basis.validate()?;
    let (n, m) = t.dim();
    let mut out = Array3::<f64>::zeros((q + 1, n, m));
    gegenbauer_for_each(basis, q, t, |l, p| {
        out.index_axis_mut(Axis(0), l).assign(&p)
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn grid(n: usize) -> impl Iterator<Item = f64> {
        (0..n).map(move |i| -1.0 + 2.0 * i as f64 / (n - 1) as f64)
    }

    #[test]
    fn research_test_vectors() {
        // Research notes §2.3 (verified there against scipy).
        let cases = [
            (2, 5, 0.3, 0.99888, 1e-12),
            (3, 5, 0.7, -0.36519875, 1e-14),
            (4, 3, 0.3, -0.246, 1e-14),
            (8, 6, -0.4, 0.0258269090909091, 1e-15),
            (9, 10, -0.75, -0.00155202252790332, 1e-15),
            (32, 15, 0.9, 0.0823954001516878, 1e-15),
        ];
        for (d, l, t, want, tol) in cases {
            let got = gegenbauer(d, l, t);
            assert!(
                (got - want).abs() < tol,
                "P_{d}^{l}({t}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn chebyshev_and_legendre() {
        for t in grid(401) {
            let mut p2 = [0.0; 31];
            gegenbauer_all(2, t, &mut p2);
            for (l, &v) in p2.iter().enumerate() {
                // cos(ℓ arccos t) has condition number ~ ℓ/√(1−t²) in t; a few ulps times ℓ is enough.
                assert!(
                    (v - (l as f64 * t.acos()).cos()).abs() < 1e-13,
                    "T_{l}({t})"
                );
            }
            // Legendre by Bonnet's recurrence (n+1)L_{n+1} = (2n+1) t L_n − n L_{n−1}, written independently.
            let (mut lm, mut lc) = (1.0f64, t);
            let mut p3 = [0.0; 31];
            gegenbauer_all(3, t, &mut p3);
            assert_eq!(p3[0], 1.0);
            assert_eq!(p3[1], t);
            for (n, &v) in p3.iter().enumerate().skip(2) {
                let nf = (n - 1) as f64;
                let next = ((2.0 * nf + 1.0) * t * lc - nf * lm) / (nf + 1.0);
                lm = lc;
                lc = next;
                assert!((v - lc).abs() < 1e-14, "L_{n}({t})");
            }
        }
        // Explicit low-degree Legendre polynomials.
        let t: f64 = 0.37;
        assert!((gegenbauer(3, 2, t) - (3.0 * t * t - 1.0) / 2.0).abs() < 1e-16);
        assert!((gegenbauer(3, 3, t) - (5.0 * t.powi(3) - 3.0 * t) / 2.0).abs() < 1e-16);
    }

    #[test]
    fn large_d_tends_to_monomials() {
        // Eq. (2) with d = 10^6: P = t^ℓ + c_1 t^{ℓ−2}(1−t²) + R with c_1 = −ℓ(ℓ−1)/(2(d−1)).
        // The c_j alternate in sign and decrease geometrically (|c_{j+1}/c_j| ≤ ℓ²/(4d) ≪ 1), and each
        // t^{ℓ−2j}(1−t²)^j ≤ 1, so |R| ≤ 2|c_2| with |c_2| = |c_1| (ℓ−2)(ℓ−3)/(4(d+1)).
        let d = 1_000_000usize;
        let df = d as f64;
        for l in 0..=15usize {
            let lf = l as f64;
            let c1 = -lf * (lf - 1.0) / (2.0 * (df - 1.0));
            let c2 = c1.abs() * (lf - 2.0).max(0.0) * (lf - 3.0).max(0.0) / (4.0 * (df + 1.0));
            for t in grid(201) {
                let p = gegenbauer(d, l, t);
                let first = if l >= 2 {
                    c1 * t.powi(l as i32 - 2) * (1.0 - t * t)
                } else {
                    0.0
                };
                let mono = t.powi(l as i32);
                assert!((p - mono).abs() <= c1.abs() + 1e-15, "l={l} t={t}");
                assert!((p - mono - first).abs() <= 2.0 * c2 + 1e-15, "l={l} t={t}");
            }
        }
        // Research value: P_{10^6}^5(0.6) = 0.0777586 (vs 0.6^5 = 0.07776).
        assert!((gegenbauer(d, 5, 0.6) - 0.0777586).abs() < 5e-8);
    }

    #[test]
    fn explicit_sum_equals_recurrence_and_basic_properties() {
        let mut p = [0.0; 16];
        for d in [2usize, 3, 4, 5, 8, 32] {
            for t in grid(301) {
                gegenbauer_all(d, t, &mut p);
                for (l, &v) in p.iter().enumerate() {
                    assert!(
                        (v - gegenbauer_explicit(d, l, t)).abs() < 1e-13,
                        "d={d} l={l} t={t}"
                    );
                    assert_eq!(v, gegenbauer(d, l, t));
                    assert!(v.abs() <= 1.0 + 1e-14, "|P| ≤ 1: d={d} l={l} t={t}");
                    let sign = if l % 2 == 0 { 1.0 } else { -1.0 };
                    assert!((gegenbauer(d, l, -t) - sign * v).abs() < 1e-15, "parity");
                }
            }
            gegenbauer_all(d, 1.0, &mut p);
            assert!(
                p.iter().all(|&v| (v - 1.0).abs() < 1e-14),
                "P(1) = 1 for d={d}"
            );
        }
    }

    #[test]
    fn invalid_dimension_is_nan_or_error() {
        assert!(gegenbauer(1, 3, 0.5).is_nan());
        assert!(gegenbauer_explicit(0, 3, 0.5).is_nan());
        let mut out = [0.0; 4];
        gegenbauer_all(1, 0.5, &mut out);
        assert!(out.iter().all(|v| v.is_nan()));
        assert!(Basis::gegenbauer(1).is_err());
        assert!(Basis::gegenbauer(2).is_ok());
        let t = Array2::<f64>::zeros((2, 2));
        assert!(gegenbauer_stack(Basis::Gegenbauer(0), 3, t.view()).is_err());
    }

    #[test]
    fn batch_matches_scalar() {
        // Large enough to take the parallel path.
        let (n, m) = (150, 250);
        let t = Array2::from_shape_fn((n, m), |(i, j)| ((i * m + j) as f64 * 0.7531).sin());
        for basis in [Basis::Gegenbauer(2), Basis::Gegenbauer(5), Basis::Monomial] {
            let q = 12;
            let stack = gegenbauer_stack(basis, q, t.view()).unwrap();
            let mut seen = 0;
            gegenbauer_for_each(basis, q, t.view(), |l, p| {
                assert_eq!(l, seen);
                seen += 1;
                assert_eq!(p, stack.index_axis(Axis(0), l));
            })
            .unwrap();
            assert_eq!(seen, q + 1);
            let mut buf = vec![0.0; q + 1];
            for &(i, j) in &[(0usize, 0usize), (17, 201), (149, 249)] {
                basis.eval_all(t[[i, j]], &mut buf);
                for l in 0..=q {
                    assert_eq!(stack[[l, i, j]], buf[l]);
                    assert!((basis.eval(l, t[[i, j]]) - buf[l]).abs() < 1e-15);
                }
            }
        }
        // q = 0 yields only the constant.
        let s = gegenbauer_stack(Basis::Gegenbauer(3), 0, t.view()).unwrap();
        assert_eq!(s.dim(), (1, n, m));
        assert!(s.iter().all(|&v| v == 1.0));
    }
}
