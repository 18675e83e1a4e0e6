//! Seeded random matrices.
//!
//! All functions take an explicit `&mut RfxRng` (ChaCha20, see [`rfx_core::rng_stream`]) and fill their
//! outputs in row-major order, so a result depends only on the stream and the shape.

use ndarray::{s, Array1, Array2, Axis};
use rand::Rng;
use rand_distr::{ChiSquared, Distribution, StandardNormal};
use rfx_core::{Result, RfxError, RfxRng};

fn check_positive(name: &str, v: usize) -> Result<()> {
    if v == 0 {
        Err(RfxError::invalid(name, v, "an integer >= 1"))
    } else {
        Ok(())
    }
}

/// An `rows × cols` matrix of i.i.d. $\mathcal N(0, 1)$ entries.
pub fn gaussian_matrix(rows: usize, cols: usize, rng: &mut RfxRng) -> Array2<f64> {
    Array2::from_shape_simple_fn((rows, cols), || StandardNormal.sample(rng))
}

/// A vector of `n` i.i.d. $\mathcal N(0, 1)$ entries.
pub fn gaussian_vec(n: usize, rng: &mut RfxRng) -> Array1<f64> {
    Array1::from_shape_simple_fn(n, || StandardNormal.sample(rng))
}

/// A vector of `n` i.i.d. Rademacher entries, $\Pr[\pm 1] = 1/2$.
pub fn rademacher_vec(n: usize, rng: &mut RfxRng) -> Array1<f64> {
    Array1::from_shape_simple_fn(n, || if rng.gen::<bool>() { 1.0 } else { -1.0 })
}

/// An `rows × cols` matrix of i.i.d. Rademacher entries.
pub fn rademacher_matrix(rows: usize, cols: usize, rng: &mut RfxRng) -> Array2<f64> {
    Array2::from_shape_simple_fn((rows, cols), || if rng.gen::<bool>() { 1.0 } else { -1.0 })
}

/// `n` points uniform on the unit sphere $\mathbb S^{d-1}$ (rows), as $g/\Vert g\Vert$ with $g \sim \mathcal N(0, I_d)$.
pub fn uniform_sphere(n: usize, d: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    check_positive("d", d)?;
    let mut g = gaussian_matrix(n, d, rng);
    for mut row in g.axis_iter_mut(Axis(0)) {
        let mut norm = row.dot(&row).sqrt();
        while norm == 0.0 {
            // probability zero; redraw rather than divide by zero
            row.iter_mut().for_each(|v| *v = StandardNormal.sample(rng));
            norm = row.dot(&row).sqrt();
        }
        row.mapv_inplace(|v| v / norm);
    }
    Ok(g)
}

/// `n` draws of a $\chi$ variable with `dof` degrees of freedom, $\sqrt{\chi^2_{\mathrm{dof}}}$: the law of
/// $\Vert g\Vert$ for $g \sim \mathcal N(0, I_{\mathrm{dof}})$ when `dof` is an integer.
pub fn chi(dof: f64, n: usize, rng: &mut RfxRng) -> Result<Array1<f64>> {
    if !(dof.is_finite() && dof > 0.0) {
        return Err(RfxError::invalid("dof", dof, "a finite number > 0"));
    }
    let c = ChiSquared::new(dof).map_err(|e| RfxError::invalid("dof", dof, e.to_string()))?;
    Ok(Array1::from_shape_simple_fn(n, || c.sample(rng).sqrt()))
}

/// A Haar-distributed (uniform) random orthogonal $d \times d$ matrix.
///
/// The rows of a Gaussian matrix are orthonormalised in order by classical Gram–Schmidt applied twice
/// ("twice is enough"), which equals the $Q$ factor of a QR decomposition with $R_{jj} > 0$ and is
/// therefore Haar (Mezzadri 2007). Projections use matrix–vector products (BLAS).
pub fn haar_orthogonal(d: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    check_positive("d", d)?;
    let mut q = gaussian_matrix(d, d, rng);
    for i in 0..d {
        for _ in 0..2 {
            if i > 0 {
                let (done, mut rest) = q.view_mut().split_at(Axis(0), i);
                let mut v = rest.row_mut(0);
                let c = done.dot(&v); // coefficients on the first i rows
                let proj = done.t().dot(&c);
                v -= &proj;
            }
        }
        let mut v = q.row_mut(i);
        let norm = v.dot(&v).sqrt();
        if norm <= 1e-300 {
            return Err(RfxError::Numerical(
                "haar_orthogonal: Gaussian matrix numerically singular".into(),
            ));
        }
        v.mapv_inplace(|a| a / norm);
    }
    Ok(q)
}

/// One ORF block (Yu et al. 2016; survey §3.2), before the bandwidth: $S\thinspace Q$ with $Q$ Haar-orthogonal
/// $d \times d$ and $S = \operatorname{diag}(s_1, \dots, s_d)$, $s_i \sim \chi_d$ i.i.d., so every row has the norm
/// law of a $\mathcal N(0, I_d)$ row while distinct rows are exactly orthogonal.
pub fn orf_block(d: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    let mut q = haar_orthogonal(d, rng)?;
    let r = chi(d as f64, d, rng)?;
    for (mut row, ri) in q.axis_iter_mut(Axis(0)).zip(r.iter()) {
        row.mapv_inplace(|v| v * ri);
    }
    Ok(q)
}

/// `s × d` orthogonal Gaussian frequencies: $\lceil s/d \rceil$ independent [`orf_block`]s stacked, first
/// `s` rows kept (survey §3, "convention for structured methods").
pub fn orthogonal_gaussian(s_rows: usize, d: usize, rng: &mut RfxRng) -> Result<Array2<f64>> {
    check_positive("rows", s_rows)?;
    check_positive("d", d)?;
    let mut w = Array2::zeros((s_rows, d));
    let mut start = 0;
    while start < s_rows {
        let b = orf_block(d, rng)?;
        let take = d.min(s_rows - start);
        w.slice_mut(s![start..start + take, ..])
            .assign(&b.slice(s![..take, ..]));
        start += take;
    }
    Ok(w)
}

/// Sparse ternary weights as integers $\lbrace-1, 0, +1\rbrace$ (Ternary Random Features, Eq. 4 without the scale):
/// $\Pr\[0\] = \epsilon$, $\Pr[\pm 1] = (1-\epsilon)/2$ each; $\epsilon \in [0, 1)$ is the sparsity level.
pub fn sparse_ternary_int(
    rows: usize,
    cols: usize,
    eps: f64,
    rng: &mut RfxRng,
) -> Result<Array2<i8>> {
    if !(0.0..1.0).contains(&eps) {
        return Err(RfxError::invalid("sparsity", eps, "a number in [0, 1)"));
    }
    Ok(Array2::from_shape_simple_fn((rows, cols), || {
        let u: f64 = rng.gen();
        if u < eps {
            0
        } else if rng.gen::<bool>() {
            1
        } else {
            -1
        }
    }))
}

/// Sparse ternary weights (Ternary Random Features, Eq. 4): entries $0$ with probability $\epsilon$ and
/// $\pm(1-\epsilon)^{-1/2}$ with probability $(1-\epsilon)/2$ each, so that $\mathbb E w = 0$, $\mathbb E w^2 = 1$,
/// $\mathbb E w^4 = 1/(1-\epsilon)$.
pub fn sparse_ternary(rows: usize, cols: usize, eps: f64, rng: &mut RfxRng) -> Result<Array2<f64>> {
    let scale = (1.0 - eps).powf(-0.5);
    Ok(sparse_ternary_int(rows, cols, eps, rng)?.mapv(|v| f64::from(v) * scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_core::rng_stream;

    #[test]
    fn haar_is_orthogonal_and_orf_rows_orthogonal() {
        let mut rng = rng_stream(1, "haar");
        let q = haar_orthogonal(37, &mut rng).unwrap();
        let g = q.dot(&q.t());
        for i in 0..37 {
            for j in 0..37 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((g[[i, j]] - want).abs() < 1e-12, "{i} {j} {}", g[[i, j]]);
            }
        }
        let w = orthogonal_gaussian(50, 20, &mut rng).unwrap();
        let g = w.dot(&w.t());
        for i in 0..20 {
            for j in 0..20 {
                if i != j {
                    assert!(g[[i, j]].abs() < 1e-10);
                }
            }
        }
    }

    #[test]
    fn moments_of_simple_draws() {
        // 200k draws: sd of the sample mean is 1/sqrt(n) ~ 0.0022 for N(0,1), Rademacher; 5 sd bounds.
        let mut rng = rng_stream(2, "moments");
        let n = 200_000;
        let g = gaussian_vec(n, &mut rng);
        let se = 1.0 / (n as f64).sqrt();
        assert!(g.mean().unwrap().abs() < 5.0 * se);
        // Var of x^2 is 2 for N(0,1)
        assert!((g.mapv(|v| v * v).mean().unwrap() - 1.0).abs() < 5.0 * 2f64.sqrt() * se);
        let r = rademacher_vec(n, &mut rng);
        assert!(r.iter().all(|v| v.abs() == 1.0));
        assert!(r.mean().unwrap().abs() < 5.0 * se);
        // chi_k: E r^2 = k, Var r^2 = 2k
        let k = 7.0;
        let c = chi(k, n, &mut rng).unwrap();
        assert!((c.mapv(|v| v * v).mean().unwrap() - k).abs() < 5.0 * (2.0 * k).sqrt() * se);
        // sphere rows have unit norm and mean zero coordinates (var 1/d each)
        let u = uniform_sphere(1000, 5, &mut rng).unwrap();
        for row in u.rows() {
            assert!((row.dot(&row) - 1.0).abs() < 1e-12);
        }
        // ternary: E w^2 = 1, P(0) = eps; counts are binomial
        let eps = 0.7;
        let t = sparse_ternary(400, 500, eps, &mut rng).unwrap();
        let nt = t.len() as f64;
        let zeros = t.iter().filter(|v| **v == 0.0).count() as f64;
        assert!((zeros / nt - eps).abs() < 5.0 * (eps * (1.0 - eps) / nt).sqrt());
        // w^2 is 0 or 1/(1-eps): var of w^2 = E w^4 - 1 = eps/(1-eps)
        let m2 = t.mapv(|v| v * v).mean().unwrap();
        assert!((m2 - 1.0).abs() < 5.0 * (eps / (1.0 - eps) / nt).sqrt());
        assert!(sparse_ternary(2, 2, 1.0, &mut rng).is_err());
        assert!(chi(0.0, 3, &mut rng).is_err());
        assert!(haar_orthogonal(0, &mut rng).is_err());
    }
}
