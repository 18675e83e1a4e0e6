//! Greedy experimental design for kernel regression — the active learning of Han et al. 2021 (*Random Features
//! for the Neural Tangent Kernel*, §5.4 and App. C, after Shoham & Avron 2020): choose the $k$ pool points to
//! label by greedily minimising
//! $$J(\mathcal S) = -\operatorname{tr}\bigl(K_{:,\mathcal S}(K_{\mathcal S\mathcal S} + \lambda I)^{-1}K_{:,\mathcal S}^\top\bigr)$$
//! with the kernel $K = \Phi\Phi^\top$ of random features $\Phi \in \mathbb R^{n \times m}$ of the pool.
//!
//! **Fast form.** By the push-through identity, $\Phi_{\mathcal S}^\top(\Phi_{\mathcal S}\Phi_{\mathcal S}^\top +
//! \lambda I)^{-1}\Phi_{\mathcal S} = I - \lambda M_{\mathcal S}^{-1}$ with
//! $M_{\mathcal S} = \Phi_{\mathcal S}^\top\Phi_{\mathcal S} + \lambda I_m$, so with $G = \Phi^\top\Phi$
//! $$J(\mathcal S) = -\operatorname{tr} G + \lambda \operatorname{tr}(G M_{\mathcal S}^{-1}),$$
//! and adding point $i$ (Sherman–Morrison, $u_i = M_{\mathcal S}^{-1}\phi_i$) lowers $J$ by
//! $\lambda\thinspace u_i^\top G u_i / (1 + \phi_i^\top u_i)$. [`greedy_design`] keeps $U = \Phi M_{\mathcal S}^{-1}$
//! and $V = UG$ ($n \times m$ each; $U = \Phi/\lambda$, $V = \Phi G/\lambda$ at the start): the gain of $i$ is
//! $(U_i \cdot V_i)/(1 + \Phi_i \cdot U_i)$ up to the factor $\lambda$, and after choosing $s$, with
//! $c = 1 + \Phi_s \cdot U_s$ and $a = U\phi_s$, $U \leftarrow U - aU_s/c$ and $V \leftarrow V - aV_s/c$:
//! $O(nm^2)$ once and $O(nm)$ per chosen point, instead of the paper's $O(n|\mathcal S|^2 m)$ per step. Tested
//! against the direct formula ([`design_criterion`]) by brute force.

use ndarray::{Array1, ArrayView2, Axis};
use rfx_core::{Result, RfxError};

/// $J(\mathcal S)$ by its definition, through $K = \Phi\Phi^\top$ (slow, for checks): $-\sum_{i}
/// k_i^\top (K_{\mathcal S\mathcal S} + \lambda I)^{-1} k_i$ with $k_i = K_{\mathcal S, i}$.
pub fn design_criterion(phi: ArrayView2<'_, f64>, s: &[usize], lambda: f64) -> Result<f64> {
    check(phi, lambda)?;
    if let Some(&i) = s.iter().find(|&&i| i >= phi.nrows()) {
        return Err(RfxError::invalid(
            "design index",
            i,
            format!("0..{}", phi.nrows()),
        ));
    }
    if s.is_empty() {
        return Ok(0.0);
    }
    let ps = phi.select(Axis(0), s);
    let mut kss = ps.dot(&ps.t());
    kss.diag_mut().mapv_inplace(|v| v + lambda);
    let ks = phi.dot(&ps.t()); // n × |S|
    let chol = rfx_linalg::Cholesky::factor(kss)?;
    let sol = chol.solve(ks.t())?; // |S| × n
    Ok(-(&ks.t() * &sol).sum())
}

fn check(phi: ArrayView2<'_, f64>, lambda: f64) -> Result<()> {
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(RfxError::invalid("lambda", lambda, "a finite number > 0"));
    }
    if phi.iter().any(|v| !v.is_finite()) {
        return Err(RfxError::Numerical(
            "design features hold a non-finite value".into(),
        ));
    }
    Ok(())
}

/// The $k$ pool rows chosen greedily, in the order they were chosen (so the first $j$ are the greedy design
/// of size $j$), by the fast form of the module docs. Ties go to the lowest index. $k$ must not exceed the
/// pool; `phi` must be finite and $\lambda > 0$.
pub fn greedy_design(phi: ArrayView2<'_, f64>, lambda: f64, k: usize) -> Result<Vec<usize>> {
    check(phi, lambda)?;
    let (n, m) = phi.dim();
    if k > n {
        return Err(RfxError::invalid(
            "design size",
            k,
            format!("at most the {n} pool rows"),
        ));
    }
    rfx_linalg::check_memory(
        "greedy design (U and V, n × m each)",
        rfx_linalg::f64_bytes(2 * n as u128 * m as u128),
        rfx_linalg::DEFAULT_MEMORY_CAP,
    )?;
    let g = rfx_linalg::gram_cols(phi)?; // ΦᵀΦ, m × m
    let mut u = phi.mapv(|v| v / lambda);
    let mut v = u.dot(&g);
    let mut chosen = Vec::with_capacity(k);
    let mut taken = vec![false; n];
    for _ in 0..k {
        let mut best: Option<(usize, f64)> = None;
        for (i, _) in taken.iter().enumerate().filter(|(_, &t)| !t) {
            let gain = u.row(i).dot(&v.row(i)) / (1.0 + phi.row(i).dot(&u.row(i)));
            if best.is_none_or(|(_, b)| gain > b) {
                best = Some((i, gain));
            }
        }
        let (s, _) = best.expect("k <= n leaves a candidate");
        taken[s] = true;
        chosen.push(s);
        let us: Array1<f64> = u.row(s).to_owned();
        let vs: Array1<f64> = v.row(s).to_owned();
        let c = 1.0 + phi.row(s).dot(&us);
        let a = u.dot(&phi.row(s)); // U φ_s = Φ u_s (M⁻¹ is symmetric)
        for (i, &ai) in a.iter().enumerate() {
            let f = ai / c;
            if f != 0.0 {
                u.row_mut(i).scaled_add(-f, &us);
                v.row_mut(i).scaled_add(-f, &vs);
            }
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// A matrix of i.i.d. uniform entries in [−1, 1).
    fn random(n: usize, m: usize, seed: u64) -> Array2<f64> {
        use rand::Rng;
        let mut rng = rfx_core::rng_stream(seed, "design");
        Array2::from_shape_simple_fn((n, m), || rng.gen::<f64>() * 2.0 - 1.0)
    }

    /// The fast greedy sequence is the brute-force one: at every step, the point it adds is the one whose
    /// addition gives the smallest directly computed $J$, and $J$ decreases.
    #[test]
    fn greedy_matches_brute_force_minimisation_of_the_criterion() {
        for (n, m, lambda) in [(30, 8, 0.1), (25, 40, 0.5), (20, 5, 1e-3)] {
            let phi = random(n, m, n as u64);
            let k = 7;
            let fast = greedy_design(phi.view(), lambda, k).unwrap();
            let mut s: Vec<usize> = Vec::new();
            let mut last = 0.0;
            for (step, &got) in fast.iter().enumerate() {
                let (best, jbest) = (0..n)
                    .filter(|i| !s.contains(i))
                    .map(|i| {
                        let mut t = s.clone();
                        t.push(i);
                        (i, design_criterion(phi.view(), &t, lambda).unwrap())
                    })
                    .fold(
                        (usize::MAX, f64::INFINITY),
                        |a, b| if b.1 < a.1 { b } else { a },
                    );
                assert_eq!(got, best, "n {n} m {m} step {step}");
                assert!(jbest < last, "J must decrease");
                last = jbest;
                s.push(best);
            }
        }
    }

    /// The fast form of $J$ agrees with the direct one: $-\operatorname{tr}G + \lambda\operatorname{tr}(GM^{-1})$.
    #[test]
    fn fast_form_of_the_criterion_equals_the_direct_one() {
        let phi = random(15, 6, 3);
        let lambda = 0.2;
        let s = [3, 7, 11, 0];
        let ps = phi.select(Axis(0), &s);
        let g = phi.t().dot(&phi);
        let mut mm = ps.t().dot(&ps);
        mm.diag_mut().mapv_inplace(|v| v + lambda);
        let minv_g = rfx_linalg::Cholesky::factor(mm)
            .unwrap()
            .solve(g.view())
            .unwrap();
        let fast = -g.diag().sum() + lambda * minv_g.diag().sum();
        let direct = design_criterion(phi.view(), &s, lambda).unwrap();
        assert!(
            (fast - direct).abs() <= 1e-10 * direct.abs(),
            "{fast} vs {direct}"
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let phi = random(5, 3, 1);
        assert!(greedy_design(phi.view(), 0.0, 2).is_err());
        assert!(greedy_design(phi.view(), 0.1, 6).is_err());
        assert!(design_criterion(phi.view(), &[5], 0.1).is_err());
        let mut bad = phi.clone();
        bad[[1, 1]] = f64::NAN;
        assert!(greedy_design(bad.view(), 0.1, 2).is_err());
        assert_eq!(
            greedy_design(phi.view(), 0.1, 0).unwrap(),
            Vec::<usize>::new()
        );
    }
}
