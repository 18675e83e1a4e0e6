//! The tests of several comparisons that claims, rank tables and guidance share: the exact sign test and
//! Holm's step-down correction of a family of p-values (Holm 1979). Used by [`crate::claims`] and
//! [`crate::outputs`]; depends on neither.

/// Exact two-sided sign test: the probability under Bin(wins + losses, ½) of a split at least as uneven as
/// the one seen, $\min(1, 2 P[X \le \min(w, l)])$ (1 when there are no untied blocks).
pub fn sign_test_p(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    if n == 0 {
        return 1.0;
    }
    let k = wins.min(losses);
    // P[X ≤ k] by summing the binomial terms in log space (exact enough for n up to millions)
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut cdf = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        cdf += (ln_c + ln_half_n).exp();
    }
    (2.0 * cdf).min(1.0)
}

/// Holm's step-down rejections for p-values at family-wise level `alpha`.
pub fn holm_reject(p: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut reject = vec![false; p.len()];
    for (step, &i) in order.iter().enumerate() {
        if p[i] <= alpha / (p.len() - step) as f64 {
            reject[i] = true;
        } else {
            break;
        }
    }
    reject
}

/// Holm's step-down adjusted p-values: $\tilde p_{(i)} = \max_{j \le i} \min(1, (n - j + 1) p_{(j)})$ over the
/// p-values sorted increasingly; rejecting where $\tilde p \le \alpha$ is Holm's procedure at level $\alpha$
/// ([`holm_reject`]).
pub fn holm_adjust(p: &[f64]) -> Vec<f64> {
    let n = p.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![1.0; n];
    let mut running: f64 = 0.0;
    for (step, &i) in order.iter().enumerate() {
        running = running.max(((n - step) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_adjust_agrees_with_holm_reject() {
        assert_eq!(holm_adjust(&[0.01, 0.04, 0.03]), vec![0.03, 0.06, 0.06]);
        let mut x = 11u64;
        for _ in 0..200 {
            let p: Vec<f64> = (0..7)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 11) as f64 / (1u64 << 53) as f64) * 0.1
                })
                .collect();
            let adj = holm_adjust(&p);
            let rej = holm_reject(&p, 0.05);
            for i in 0..p.len() {
                assert_eq!(adj[i] <= 0.05, rej[i], "{p:?}");
                assert!(adj[i] >= p[i]);
            }
        }
    }
}
