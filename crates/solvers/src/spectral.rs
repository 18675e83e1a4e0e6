//! Spectral measurements of a kernel approximation $Z Z^\top \approx K$ on an exact Gram $K$ ($n \lesssim 5000$).
//!
//! * Generalized condition number (NTK random features, Fig. 1 / §3.3):
//!   $\kappa = \lambda_{\max}/\lambda_{\min}$ of $M = (K+\lambda I)^{-1/2}(ZZ^\top+\lambda I)(K+\lambda I)^{-1/2}$.
//!   $M$ is similar to $L^{-1}(ZZ^\top+\lambda I)L^{-\top}$ with $K + \lambda I = L L^\top$ (Cholesky), which is what
//!   is computed: two triangular solves and one symmetric eigensolve, never an inverse square root.
//! * Spectral approximation $\varepsilon$ (NTK-RF eq. 18, NTK sketching eq. 1): the smallest $\varepsilon$ with
//!   $(1-\varepsilon)(K+\lambda I) \preceq ZZ^\top+\lambda I \preceq (1+\varepsilon)(K+\lambda I)$, i.e.
//!   $\varepsilon = \max(1 - \mu_{\min}, \mu_{\max} - 1)$ over the spectrum $\mu$ of $M$. The Gegenbauer paper's
//!   convention (its Eq. 1/20, $\frac{K+\lambda I}{1+\varepsilon} \preceq \cdot \preceq \frac{K+\lambda I}{1-\varepsilon}$)
//!   gives $\varepsilon^\prime = \max(1 - 1/\mu_{\max}, 1/\mu_{\min} - 1)$, reported too.
//! * Relative Frobenius / spectral errors $\Vert K - ZZ^\top\Vert/\Vert K\Vert$, entrywise MSE
//!   $\Vert K - ZZ^\top\Vert_F^2 / n^2$, and the statistical dimension $s_\lambda(K) = \operatorname{Tr} K(K+\lambda I)^{-1}$.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rfx_core::{Result, RfxError};
use rfx_linalg::{
    add_diag, center, check_memory, eigvalsh, f64_bytes, fro_norm, gram_rows, Cholesky,
    DEFAULT_MEMORY_CAP,
};

/// The spectrum summary of $M = (K+\lambda I)^{-1/2}(\tilde K+\lambda I)(K+\lambda I)^{-1/2}$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectralApprox {
    /// Smallest eigenvalue $\mu_{\min}$ of $M$.
    pub mu_min: f64,
    /// Largest eigenvalue $\mu_{\max}$ of $M$.
    pub mu_max: f64,
    /// Generalized condition number $\mu_{\max}/\mu_{\min}$.
    pub condition_number: f64,
    /// Smallest ε with $(1-\varepsilon)(K+\lambda I) \preceq \tilde K+\lambda I \preceq (1+\varepsilon)(K+\lambda I)$.
    pub epsilon: f64,
    /// Smallest ε in the Gegenbauer paper's convention (its Eq. 1)
    /// $\frac{K+\lambda I}{1+\varepsilon} \preceq \tilde K+\lambda I \preceq \frac{K+\lambda I}{1-\varepsilon}$,
    /// $\max(1 - 1/\mu_{\max}, 1/\mu_{\min} - 1)$; infinite when $\mu_{\min} \le 0$.
    pub epsilon_gzk: f64,
}

fn check_same_square(k: &ArrayView2<'_, f64>, ka: &ArrayView2<'_, f64>) -> Result<usize> {
    let n = k.nrows();
    if k.ncols() != n || ka.dim() != (n, n) {
        return Err(RfxError::DimensionMismatch(format!(
            "exact Gram {:?} and approximation {:?} must be the same square shape",
            k.dim(),
            ka.dim()
        )));
    }
    if n == 0 {
        return Err(RfxError::invalid("n", 0, "at least 1"));
    }
    Ok(n)
}

fn check_lambda(lambda: f64) -> Result<()> {
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(RfxError::invalid("lambda", lambda, "finite and >= 0"));
    }
    Ok(())
}

/// [`SpectralApprox`] for an approximate Gram $\tilde K$ (e.g. $ZZ^\top$).
pub fn spectral_approx_gram(
    k: ArrayView2<'_, f64>,
    k_approx: ArrayView2<'_, f64>,
    lambda: f64,
) -> Result<SpectralApprox> {
    check_lambda(lambda)?;
    let n = check_same_square(&k, &k_approx)?;
    check_memory(
        "spectral metrics",
        f64_bytes(3 * (n as u128) * (n as u128)),
        DEFAULT_MEMORY_CAP,
    )?;
    let mut a = k.to_owned();
    add_diag(&mut a, lambda);
    let chol = Cholesky::factor(a)?;
    let mut b = k_approx.to_owned();
    add_diag(&mut b, lambda);
    let m = chol.whiten(b.view())?;
    drop(b);
    let mu = eigvalsh(m.view())?;
    let (mu_min, mu_max) = (mu[0], mu[n - 1]);
    let epsilon = (1.0 - mu_min).max(mu_max - 1.0).max(0.0);
    let epsilon_gzk = if mu_min > 0.0 {
        (1.0 - 1.0 / mu_max).max(1.0 / mu_min - 1.0).max(0.0)
    } else {
        f64::INFINITY
    };
    Ok(SpectralApprox {
        mu_min,
        mu_max,
        condition_number: mu_max / mu_min,
        epsilon,
        epsilon_gzk,
    })
}

/// [`SpectralApprox`] for features $Z$ ($n \times m$), with $ZZ^\top$ formed by `dsyrk`.
pub fn spectral_approx(
    k: ArrayView2<'_, f64>,
    z: ArrayView2<'_, f64>,
    lambda: f64,
) -> Result<SpectralApprox> {
    if z.nrows() != k.nrows() {
        return Err(RfxError::DimensionMismatch(format!(
            "Gram is {:?}, features {:?}",
            k.dim(),
            z.dim()
        )));
    }
    let ka = gram_rows(z)?;
    spectral_approx_gram(k, ka.view(), lambda)
}

/// Generalized condition number $\lambda_{\max}/\lambda_{\min}$ of
/// $(K+\lambda I)^{-1/2}(ZZ^\top+\lambda I)(K+\lambda I)^{-1/2}$ (NTK-RF Fig. 1 uses $\lambda = 10^{-4} n$).
pub fn generalized_condition_number(
    k: ArrayView2<'_, f64>,
    z: ArrayView2<'_, f64>,
    lambda: f64,
) -> Result<f64> {
    Ok(spectral_approx(k, z, lambda)?.condition_number)
}

/// Entrywise and norm errors of $\tilde K$ against $K$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelErrors {
    /// $\Vert K - \tilde K\Vert_F / \Vert K\Vert_F$ (RF survey, "relative Frobenius error").
    pub rel_frobenius: f64,
    /// $\Vert K - \tilde K\Vert_2 / \Vert K\Vert_2$ (largest absolute eigenvalue ratio; both are symmetric).
    pub rel_spectral: f64,
    /// Entrywise mean squared error $\frac{1}{n^2}\sum_{ij}(K_{ij} - \tilde K_{ij})^2$.
    pub mse: f64,
}

/// $\Vert A\Vert_2$ of a symmetric $A$: the largest absolute eigenvalue.
fn sym_spectral_norm(a: ArrayView2<'_, f64>) -> Result<f64> {
    let ev = eigvalsh(a)?;
    Ok(ev[0].abs().max(ev[ev.len() - 1].abs()))
}

/// [`KernelErrors`] of an approximate Gram.
pub fn kernel_errors_gram(
    k: ArrayView2<'_, f64>,
    k_approx: ArrayView2<'_, f64>,
) -> Result<KernelErrors> {
    let n = check_same_square(&k, &k_approx)?;
    let diff: Array2<f64> = &k - &k_approx;
    let fro_d = fro_norm(diff.view());
    let fro_k = fro_norm(k);
    let (sd, sk) = (sym_spectral_norm(diff.view())?, sym_spectral_norm(k)?);
    if fro_k == 0.0 {
        return Err(RfxError::Numerical(
            "kernel errors: exact Gram is zero".into(),
        ));
    }
    Ok(KernelErrors {
        rel_frobenius: fro_d / fro_k,
        rel_spectral: sd / sk,
        mse: fro_d * fro_d / (n as f64 * n as f64),
    })
}

/// $ZZ^\top$ for comparison with the Gram `k` (one row of $Z$ per row of `k`).
fn feature_gram(k: &ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
    if z.nrows() != k.nrows() {
        return Err(RfxError::DimensionMismatch(format!(
            "Gram is {:?}, features {:?}",
            k.dim(),
            z.dim()
        )));
    }
    gram_rows(z)
}

/// [`KernelErrors`] of features $Z$ ($\tilde K = ZZ^\top$).
pub fn kernel_errors(k: ArrayView2<'_, f64>, z: ArrayView2<'_, f64>) -> Result<KernelErrors> {
    kernel_errors_gram(k, feature_gram(&k, z)?.view())
}

/// Errors of $\tilde K$ against $K$ after centring and up to a shift $\lambda P$: the sense in which
/// ternary random features approximate a kernel (Tiomoko Ali, Liao & Couillet, ICLR 2022, Theorem 1 and
/// Corollary 1: for Gaussian-mixture data, $P K P$ and $P K_{ter} P$ have the same asymptotic equivalent up
/// to $\lambda P$, with $\lambda$ a difference of $d_0$ moments).
///
/// With $P = I_n - \frac1n\mathbf 1\mathbf 1^\top$ and $D = P(K - \tilde K)P$, each norm is minimised over
/// the shift separately:
/// $$e_F = \frac{\min_\lambda\Vert D - \lambda P\Vert_F}{\Vert PKP\Vert_F}
///   = \frac{\sqrt{\Vert D\Vert_F^2 - \operatorname{tr}(D)^2/(n-1)}}{\Vert PKP\Vert_F},\qquad
///   e_2 = \frac{\min_\lambda\Vert D - \lambda P\Vert_2}{\Vert PKP\Vert_2}
///   = \frac{(\mu_{\max} - \mu_{\min})/2}{\Vert PKP\Vert_2},$$
/// where $\mu$ are the eigenvalues of $D$ on $\mathbf 1^\perp$ (where $P$ is the identity; $D\mathbf 1 = 0$).
/// They are computed as the eigenvalues of the trailing $(n-1)\times(n-1)$ block of $HDH$, with $H$ the
/// Householder reflection taking $e_1$ to $\mathbf 1/\sqrt n$. Every method gets its own optimal shift, so
/// the comparison between methods stays fair. Since $P$ is an orthogonal projection, the numerators are never
/// above the uncentred errors' ($\Vert PAP\Vert \le \Vert A\Vert$ in both norms), while the denominator
/// $\Vert PKP\Vert$ is smaller than $\Vert K\Vert$ too, so a ratio can be larger than the uncentred one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CentredErrors {
    /// $e_F$.
    pub rel_frobenius: f64,
    /// $e_2$.
    pub rel_spectral: f64,
}

/// [`CentredErrors`] of an approximate Gram ($n \ge 2$).
pub fn centred_kernel_errors_gram(
    k: ArrayView2<'_, f64>,
    k_approx: ArrayView2<'_, f64>,
) -> Result<CentredErrors> {
    let n = check_same_square(&k, &k_approx)?;
    if n < 2 {
        return Err(RfxError::invalid("n", n, "at least 2 rows to centre"));
    }
    let ck = center(k);
    let d = center((&k - &k_approx).view());
    let fro_k = fro_norm(ck.view());
    let spec_k = sym_spectral_norm(ck.view())?;
    if fro_k == 0.0 || spec_k == 0.0 {
        return Err(RfxError::Numerical(
            "centred kernel errors: the centred exact Gram is zero".into(),
        ));
    }
    // the minimiser λ = tr(D)/(n - 1), subtracted rather than the closed form's difference of squares
    // (which cancels to √ε when the error is small)
    let lam = d.diag().sum() / (n - 1) as f64;
    let inv_n = 1.0 / n as f64;
    let fro_min = d
        .indexed_iter()
        .map(|((i, j), &v)| {
            let e = v - lam * (if i == j { 1.0 } else { 0.0 } - inv_n);
            e * e
        })
        .sum::<f64>()
        .sqrt();
    // H = I - 2 v vᵀ / (vᵀv) with v = e_1 - 1/√n maps e_1 to 1/√n (and back)
    let r = 1.0 / (n as f64).sqrt();
    let mut v = Array1::from_elem(n, -r);
    v[0] += 1.0;
    let vv = v.dot(&v);
    let h = Array2::from_shape_fn((n, n), |(i, j)| {
        (if i == j { 1.0 } else { 0.0 }) - 2.0 * v[i] * v[j] / vv
    });
    let hdh = h.dot(&d).dot(&h);
    let ev = eigvalsh(hdh.slice(ndarray::s![1.., 1..]))?;
    let spec_min = (ev[n - 2] - ev[0]) / 2.0;
    Ok(CentredErrors {
        rel_frobenius: fro_min / fro_k,
        rel_spectral: spec_min / spec_k,
    })
}

/// [`CentredErrors`] of features $Z$ ($\tilde K = ZZ^\top$).
pub fn centred_kernel_errors(
    k: ArrayView2<'_, f64>,
    z: ArrayView2<'_, f64>,
) -> Result<CentredErrors> {
    centred_kernel_errors_gram(k, feature_gram(&k, z)?.view())
}

/// $s_\lambda = \sum_i \frac{\mu_i}{\mu_i + \lambda}$ from the eigenvalues $\mu_i$ of $K$ (negative rounding
/// noise is clamped to 0).
pub fn statistical_dimension_from_eigs(eigs: ArrayView1<'_, f64>, lambda: f64) -> Result<f64> {
    check_lambda(lambda)?;
    Ok(eigs
        .iter()
        .map(|&m| {
            let m = m.max(0.0);
            if m == 0.0 {
                0.0
            } else {
                m / (m + lambda)
            }
        })
        .sum())
}

/// Statistical dimension $s_\lambda(K) = \operatorname{Tr}(K (K+\lambda I)^{-1})$ (NTK-RF, NTK sketching,
/// Gegenbauer paper; the RF survey's $d_K^\lambda$ is this with $n\lambda$ in place of $\lambda$).
pub fn statistical_dimension(k: ArrayView2<'_, f64>, lambda: f64) -> Result<f64> {
    statistical_dimension_from_eigs(eigvalsh(k)?.view(), lambda)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_abs, randn};
    use ndarray::{Array1, Axis};
    use rfx_linalg::eigh;

    fn orthogonal(n: usize, seed: u64) -> Array2<f64> {
        let g = randn(n, n, seed);
        eigh((&g + &g.t()).view()).unwrap().vectors
    }

    fn sqrt_psd(s: &Array2<f64>) -> Array2<f64> {
        let e = eigh(s.view()).unwrap();
        let mut z = e.vectors.clone();
        for (mut col, &v) in z.axis_iter_mut(Axis(1)).zip(e.values.iter()) {
            col *= v.max(0.0).sqrt();
        }
        z
    }

    #[test]
    fn condition_number_is_one_when_features_are_exact() {
        let z = randn(80, 30, 1);
        let k = z.dot(&z.t());
        let s = spectral_approx(k.view(), z.view(), 1e-2).unwrap();
        assert!(
            (s.condition_number - 1.0).abs() < 1e-9,
            "κ = {}",
            s.condition_number
        );
        assert!(s.epsilon < 1e-9 && s.epsilon_gzk < 1e-9);
        let e = kernel_errors(k.view(), z.view()).unwrap();
        assert!(e.rel_frobenius < 1e-14 && e.rel_spectral < 1e-13 && e.mse < 1e-25);
    }

    #[test]
    fn constructed_codiagonal_example() {
        // K = Q diag(d) Qᵀ, ZZᵀ = Q diag(d') Qᵀ with (d'_i+λ)/(d_i+λ) = r_i ∈ [1-ε, 1+ε], both ends attained.
        let (n, lam, eps) = (40, 0.5, 0.3);
        let q = orthogonal(n, 2);
        let d = Array1::from_shape_fn(n, |i| 1.0 + 49.0 * (i as f64 / (n - 1) as f64).powi(2));
        let r = Array1::from_shape_fn(n, |i| {
            1.0 - eps + 2.0 * eps * ((i * 7) % n) as f64 / (n - 1) as f64
        });
        assert!(
            r.iter().any(|&v| (v - (1.0 - eps)).abs() < 1e-15)
                && r.iter().any(|&v| (v - (1.0 + eps)).abs() < 1e-15)
        );
        let dp = Array1::from_shape_fn(n, |i| r[i] * (d[i] + lam) - lam);
        let k = q.dot(&Array2::from_diag(&d)).dot(&q.t());
        let z = q.dot(&Array2::from_diag(&dp.mapv(f64::sqrt)));
        let s = spectral_approx(k.view(), z.view(), lam).unwrap();
        let want = (1.0 + eps) / (1.0 - eps);
        assert!(
            (s.condition_number - want).abs() < 1e-9 * want,
            "κ = {} want {want}",
            s.condition_number
        );
        assert!((s.epsilon - eps).abs() < 1e-10, "ε = {}", s.epsilon);
        let want_gzk = (1.0 - 1.0 / (1.0 + eps)).max(1.0 / (1.0 - eps) - 1.0);
        assert!((s.epsilon_gzk - want_gzk).abs() < 1e-10);
        // errors against their definitions with the known spectra
        let e = kernel_errors(k.view(), z.view()).unwrap();
        let dd = &d - &dp;
        let fro = dd.mapv(|v| v * v).sum().sqrt() / d.mapv(|v| v * v).sum().sqrt();
        assert!((e.rel_frobenius - fro).abs() < 1e-10);
        let spec = dd.iter().fold(0.0f64, |m, v| m.max(v.abs())) / 50.0;
        assert!((e.rel_spectral - spec).abs() < 1e-10);
        // statistical dimension
        let sl = statistical_dimension(k.view(), lam).unwrap();
        let want_sl: f64 = d.iter().map(|&v| v / (v + lam)).sum();
        assert!((sl - want_sl).abs() < 1e-10);
    }

    #[test]
    fn constructed_generic_example_and_loewner_bounds() {
        // K + λI = L Lᵀ; ZZᵀ + λI := L (W diag(μ) Wᵀ) Lᵀ with μ ∈ [0.8, 1.2]: κ = 1.5, ε = 0.2, and K, ZZᵀ do
        // not commute. ZZᵀ ⪰ 0.8 K - 0.2 λ I ⪰ 0 because λ_min(K) ≥ 1 = λ.
        let (n, lam) = (50, 1.0);
        let x = randn(n, 20, 3);
        let mut k = x.dot(&x.t());
        add_diag(&mut k, 1.0);
        let mut a = k.clone();
        add_diag(&mut a, lam);
        let l = Cholesky::factor(a.clone()).unwrap().l().clone();
        let w = orthogonal(n, 4);
        let mu = Array1::from_shape_fn(n, |i| 0.8 + 0.4 * i as f64 / (n - 1) as f64);
        let m = w.dot(&Array2::from_diag(&mu)).dot(&w.t());
        let mut s = l.dot(&m).dot(&l.t());
        add_diag(&mut s, -lam);
        rfx_linalg::symmetrize(&mut s);
        let z = sqrt_psd(&s);
        assert!(max_abs(&(z.dot(&z.t()) - &s)) < 1e-9 * max_abs(&s));
        let sa = spectral_approx(k.view(), z.view(), lam).unwrap();
        assert!(
            (sa.condition_number - 1.5).abs() < 1e-8,
            "κ = {}",
            sa.condition_number
        );
        assert!((sa.epsilon - 0.2).abs() < 1e-8, "ε = {}", sa.epsilon);
        // Loewner check of the definition: (1+ε)(K+λI) - (ZZᵀ+λI) ⪰ 0 and (ZZᵀ+λI) - (1-ε)(K+λI) ⪰ 0 hold at ε,
        // and fail at ε - 0.01.
        let mut b = z.dot(&z.t());
        add_diag(&mut b, lam);
        let min_eig = |t: Array2<f64>| eigvalsh(t.view()).unwrap()[0];
        let e = sa.epsilon;
        let tol = 1e-8 * max_abs(&a);
        assert!(min_eig(&a * (1.0 + e) - &b) > -tol);
        assert!(min_eig(&b - &a * (1.0 - e)) > -tol);
        assert!(min_eig(&a * (1.0 + e - 0.01) - &b) < -tol);
        assert!(min_eig(&b - &a * (1.0 - e + 0.01)) < -tol);
    }

    #[test]
    fn statistical_dimension_limits_and_errors() {
        let z = randn(30, 7, 5);
        let k = z.dot(&z.t());
        // λ → 0: rank (the 23 null eigenvalues are rounding noise ~1e-13, each adding ≲ 1e-7 at λ = 1e-6,
        // the 7 non-zero ones ≥ 1 each lose ≲ 1e-6); λ → ∞: 0; equals Tr(K (K+λI)^{-1}) by a Cholesky solve
        assert!((statistical_dimension(k.view(), 1e-6).unwrap() - 7.0).abs() < 1e-4);
        assert!(statistical_dimension(k.view(), 1e12).unwrap() < 1e-8);
        let mut a = k.clone();
        add_diag(&mut a, 2.0);
        let t = Cholesky::factor(a).unwrap().solve(k.view()).unwrap();
        assert!((statistical_dimension(k.view(), 2.0).unwrap() - t.diag().sum()).abs() < 1e-10);
        assert!(statistical_dimension(k.view(), -1.0).is_err());
        assert!(spectral_approx(k.view(), randn(29, 3, 1).view(), 1.0).is_err());
        assert!(spectral_approx_gram(k.view(), k.view(), f64::NAN).is_err());
    }

    /// The closed forms against the definition: $P$ built explicitly, $\Vert D - \lambda P\Vert$ minimised
    /// over $\lambda$ by golden-section search (both norms are convex in $\lambda$).
    #[test]
    fn centred_errors_match_a_direct_minimisation_over_the_shift() {
        let n = 30;
        let z = randn(n, 12, 7);
        let k = z.dot(&z.t()) + Array2::<f64>::eye(n) * 0.3;
        let w = randn(n, 9, 8);
        let ka = w.dot(&w.t());
        let p = Array2::<f64>::eye(n) - Array2::from_elem((n, n), 1.0 / n as f64);
        let d = p.dot(&(&k - &ka)).dot(&p);
        let ck = p.dot(&k).dot(&p);
        let spec = |a: &Array2<f64>| {
            let e = eigvalsh(a.view()).unwrap();
            e[0].abs().max(e[n - 1].abs())
        };
        let golden = |f: &dyn Fn(f64) -> f64| {
            let (mut a, mut b) = (-1e3, 1e3);
            let g = (5f64.sqrt() - 1.0) / 2.0;
            for _ in 0..200 {
                let (c, e) = (b - g * (b - a), a + g * (b - a));
                if f(c) < f(e) {
                    b = e;
                } else {
                    a = c;
                }
            }
            f((a + b) / 2.0)
        };
        let fro = golden(&|l: f64| fro_norm((&d - &(&p * l)).view())) / fro_norm(ck.view());
        let sp = golden(&|l: f64| spec(&(&d - &(&p * l)))) / spec(&ck);
        let e = centred_kernel_errors_gram(k.view(), ka.view()).unwrap();
        assert!((e.rel_frobenius - fro).abs() < 1e-9 * fro, "{e:?} vs {fro}");
        assert!((e.rel_spectral - sp).abs() < 1e-7 * sp, "{e:?} vs {sp}");
        // the shift is free: K̃ = K + cI + b 11ᵀ (+ any row/column constants) has error 0
        let r = Array1::from_shape_fn(n, |i| i as f64 * 0.1);
        let shifted = Array2::from_shape_fn((n, n), |(i, j)| {
            k[[i, j]] + 2.5 * if i == j { 1.0 } else { 0.0 } + 0.7 + r[i] + r[j]
        });
        let e0 = centred_kernel_errors_gram(k.view(), shifted.view()).unwrap();
        assert!(
            e0.rel_frobenius < 1e-12 && e0.rel_spectral < 1e-12,
            "{e0:?}"
        );
        // but not a scale: K̃ = 2K has error 1 in both norms (D = -PKP, whose best shift is 0 … or less)
        let e2 = centred_kernel_errors_gram(k.view(), (&k * 2.0).view()).unwrap();
        assert!(
            e2.rel_frobenius <= 1.0 + 1e-12 && e2.rel_frobenius > 0.5,
            "{e2:?}"
        );
        assert!(centred_kernel_errors_gram(
            k.slice(ndarray::s![..1, ..1]),
            ka.slice(ndarray::s![..1, ..1])
        )
        .is_err());
    }
}
