//! Monte Carlo check of the reproducing property of Gegenbauer polynomials (paper Lemma 1):
//! $P_d^\ell(\langle x,y\rangle) = \alpha_{\ell,d}\thinspace\mathbb{E}_w[P_d^\ell(\langle x,w\rangle)P_d^\ell(\langle y,w\rangle)]$
//! and $\mathbb{E}_w[P_d^\ell(\langle x,w\rangle)P_d^{\ell^\prime}(\langle y,w\rangle)] = 0$ for $\ell \ne \ell^\prime$, with $w$
//! uniform on $\mathbb{S}^{d-1}$.

use rand::Rng;
use rand_distr::StandardNormal;
use rfx_core::rng_stream;
use rfx_gzk::gegenbauer::{gegenbauer, gegenbauer_all};
use rfx_gzk::harmonics::alpha;

const SAMPLES: usize = 400_000;
const MAX_DEGREE: usize = 6;

/// A uniform point on the sphere: a standard Gaussian vector divided by its norm (rotation invariance).
fn sphere_point(rng: &mut impl Rng, d: usize) -> Vec<f64> {
    loop {
        let g: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
        let n = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        if n > 0.0 {
            return g.into_iter().map(|v| v / n).collect();
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn reproducing_property_by_monte_carlo() {
    // Tolerances. For ℓ = ℓ' the estimator is the mean of N i.i.d. copies of Z = α P_ℓ(⟨x,w⟩) P_ℓ(⟨y,w⟩).
    // Since |P_ℓ| ≤ 1 on [−1, 1] and E[P_ℓ(⟨x,w⟩)²] = 1/α (Eq. 3: ⟨x,w⟩ has density ∝ (1−t²)^{(d−3)/2}, and
    // the weighted norm of P_ℓ is |S^{d−1}|/(α |S^{d−2}|)), Var Z ≤ E Z² ≤ α² E[P_ℓ(⟨x,w⟩)²] = α, so the
    // standard error is ≤ √(α/N) and we allow 5 of them. For ℓ ≠ ℓ' the product P_ℓ P_ℓ' (no α factor) has
    // variance ≤ min(1/α_ℓ, 1/α_ℓ'), standard error ≤ 1/√(N max(α_ℓ, α_ℓ')), again 5 of them.
    let mut worst_ratio = 0.0f64;
    let mut power_checks = 0;
    for d in [3usize, 5] {
        let mut rng = rng_stream(2022, &format!("gzk-reproducing-d={d}"));
        // Two fixed unit vectors with ⟨x, y⟩ = 0.3 (and the pair x, x).
        let mut x = vec![0.0; d];
        x[0] = 1.0;
        let mut y = vec![0.0; d];
        y[0] = 0.3;
        y[1] = (1.0f64 - 0.09).sqrt();
        for (label, a, b) in [("x,y", &x, &y), ("x,x", &x, &x)] {
            let mut sums = [[0.0f64; MAX_DEGREE + 1]; MAX_DEGREE + 1];
            let (mut pa, mut pb) = ([0.0; MAX_DEGREE + 1], [0.0; MAX_DEGREE + 1]);
            for _ in 0..SAMPLES {
                let w = sphere_point(&mut rng, d);
                gegenbauer_all(d, dot(a, &w), &mut pa);
                gegenbauer_all(d, dot(b, &w), &mut pb);
                for (row, &p) in sums.iter_mut().zip(&pa) {
                    for (s, &r) in row.iter_mut().zip(&pb) {
                        *s += p * r;
                    }
                }
            }
            let n = SAMPLES as f64;
            let cos = dot(a, b);
            for (l, row) in sums.iter().enumerate() {
                let al = alpha(l, d);
                for (m, &sum) in row.iter().enumerate() {
                    let mean = sum / n;
                    let (err, tol) = if l == m {
                        (
                            (al * mean - gegenbauer(d, l, cos)).abs(),
                            5.0 * (al / n).sqrt(),
                        )
                    } else {
                        (mean.abs(), 5.0 / (n * al.max(alpha(m, d))).sqrt())
                    };
                    assert!(
                        err < tol,
                        "d={d} {label} l={l} l'={m}: error {err:e} > tol {tol:e}"
                    );
                    worst_ratio = worst_ratio.max(err / tol);
                    // The test has power: with α replaced by α + 1 the diagonal estimate moves by
                    // P_ℓ(⟨x,y⟩)/α, which must be detected whenever that exceeds twice the tolerance.
                    if l == m && gegenbauer(d, l, cos).abs() / al > 2.0 * tol {
                        let wrong = ((al + 1.0) * mean - gegenbauer(d, l, cos)).abs();
                        assert!(wrong > tol, "d={d} {label} l={l}: a wrong α would pass");
                        power_checks += 1;
                    }
                }
            }
        }
    }
    assert!(power_checks >= 10, "only {power_checks} power checks");
    eprintln!("reproducing property: worst error/tolerance = {worst_ratio:.3} ({power_checks} power checks)");
}
