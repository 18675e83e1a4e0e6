//! Small dense constrained least squares: nonnegative least squares (Lawson & Hanson 1974, Ch. 23) and
//! least squares with linear inequality constraints by the LSI → LDP → NNLS reduction (Ch. 23, §§3–5).
//!
//! Used for the polynomial fit of the NTK function (a dozen unknowns, a few hundred constraints), where a
//! finite active-set method is simpler and more robust than a general QP solver.

use ndarray::{Array1, Array2, ArrayView2};
use rfx_core::{Result, RfxError};

/// Householder QR of `a` ($k \times p$, $k \ge p$) applied to `b`: returns $(R, c)$ with $R$ upper triangular
/// $p \times p$ and $c = (Q^\top b)_{1..p}$, so that $\min_x \Vert Ax - b\Vert$ is solved by $Rx = c$.
pub(crate) fn householder(a: ArrayView2<'_, f64>, b: &[f64]) -> (Array2<f64>, Vec<f64>) {
    let (k, p) = a.dim();
    let mut a = a.to_owned();
    let mut b = b.to_vec();
    for j in 0..p.min(k) {
        let norm: f64 = (j..k).map(|i| a[[i, j]] * a[[i, j]]).sum::<f64>().sqrt();
        if norm == 0.0 {
            continue;
        }
        let alpha = if a[[j, j]] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = (j..k).map(|i| a[[i, j]]).collect();
        v[0] -= alpha;
        let vnorm2: f64 = v.iter().map(|t| t * t).sum();
        if vnorm2 == 0.0 {
            continue;
        }
        for c in j..p {
            let dot: f64 = (j..k).map(|i| v[i - j] * a[[i, c]]).sum();
            let f = 2.0 * dot / vnorm2;
            for i in j..k {
                a[[i, c]] -= f * v[i - j];
            }
        }
        let dot: f64 = (j..k).map(|i| v[i - j] * b[i]).sum();
        let f = 2.0 * dot / vnorm2;
        for i in j..k {
            b[i] -= f * v[i - j];
        }
    }
    let mut r = Array2::zeros((p, p));
    for i in 0..p.min(k) {
        for j in i..p {
            r[[i, j]] = a[[i, j]];
        }
    }
    b.truncate(p);
    (r, b)
}

/// Solves $Rx = c$ for upper triangular $R$ (back substitution).
pub(crate) fn solve_upper(r: &Array2<f64>, c: &[f64]) -> Vec<f64> {
    let p = r.nrows();
    let mut x = vec![0.0; p];
    for i in (0..p).rev() {
        let s: f64 = ((i + 1)..p).map(|j| r[[i, j]] * x[j]).sum();
        x[i] = (c[i] - s) / r[[i, i]];
    }
    x
}

/// Least squares on a subset of columns (full column rank assumed; tall or square).
fn lstsq_cols(e: ArrayView2<'_, f64>, cols: &[usize], f: &[f64]) -> Result<Vec<f64>> {
    let k = e.nrows();
    if cols.len() > k {
        return Err(RfxError::Numerical(
            "nnls: passive set larger than the number of rows".into(),
        ));
    }
    let sub = Array2::from_shape_fn((k, cols.len()), |(i, j)| e[[i, cols[j]]]);
    let (r, c) = householder(sub.view(), f);
    if (0..cols.len()).any(|i| r[[i, i]].abs() < 1e-13 * (1.0 + r[[0, 0]].abs())) {
        return Err(RfxError::Numerical(
            "nnls: rank-deficient passive set".into(),
        ));
    }
    Ok(solve_upper(&r, &c))
}

/// Nonnegative least squares $\min_{y \ge 0}\Vert Ey - f\Vert_2$ by the Lawson–Hanson active-set algorithm.
pub fn nnls(e: ArrayView2<'_, f64>, f: &[f64]) -> Result<Array1<f64>> {
    let (k, p) = e.dim();
    if f.len() != k {
        return Err(RfxError::DimensionMismatch(format!(
            "nnls: E has {k} rows, f has {}",
            f.len()
        )));
    }
    let scale = e.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(1e-300);
    let tol = 1e-12 * scale * (k.max(p) as f64);
    let mut x = vec![0.0; p];
    let mut passive = vec![false; p];
    let mut blocked = vec![false; p];
    for _outer in 0..(3 * p + 30) {
        let resid: Vec<f64> = (0..k)
            .map(|i| f[i] - (0..p).map(|j| e[[i, j]] * x[j]).sum::<f64>())
            .collect();
        let w: Vec<f64> = (0..p)
            .map(|j| (0..k).map(|i| e[[i, j]] * resid[i]).sum())
            .collect();
        let t = (0..p)
            .filter(|&j| !passive[j] && !blocked[j])
            .max_by(|&a, &b| w[a].total_cmp(&w[b]));
        let t = match t {
            Some(t) if w[t] > tol => t,
            _ => break,
        };
        passive[t] = true;
        let mut first = true;
        loop {
            let cols: Vec<usize> = (0..p).filter(|&j| passive[j]).collect();
            let z = match lstsq_cols(e, &cols, f) {
                Ok(z) => z,
                Err(_) if first => {
                    // numerically dependent column: never pick it again
                    passive[t] = false;
                    blocked[t] = true;
                    break;
                }
                Err(err) => return Err(err),
            };
            if first {
                let zt = z[cols.iter().position(|&c| c == t).expect("t is passive")];
                if zt <= 0.0 {
                    // round-off made the most promising direction useless: skip it this time
                    passive[t] = false;
                    blocked[t] = true;
                    break;
                }
            }
            first = false;
            if z.iter().all(|&v| v > 0.0) {
                x.iter_mut().for_each(|v| *v = 0.0);
                for (&c, &v) in cols.iter().zip(&z) {
                    x[c] = v;
                }
                blocked.iter_mut().for_each(|b| *b = false);
                break;
            }
            let mut alpha = f64::INFINITY;
            for (&c, &v) in cols.iter().zip(&z) {
                if v <= 0.0 {
                    alpha = alpha.min(x[c] / (x[c] - v));
                }
            }
            for (&c, &v) in cols.iter().zip(&z) {
                x[c] += alpha * (v - x[c]);
            }
            for &c in &cols {
                if x[c] <= tol {
                    x[c] = 0.0;
                    passive[c] = false;
                }
            }
        }
    }
    Ok(Array1::from(x))
}

/// $\min_\beta \Vert R\beta - f\Vert_2$ subject to $G\beta \ge h$ ($R$ upper triangular and nonsingular), by the
/// substitution $u = R\beta - f$ (a least-distance problem $\min\Vert u\Vert$ s.t. $GR^{-1}u \ge h - GR^{-1}f$) solved
/// through NNLS on $E = [\hat G^\top; \hat h^\top]$, $e = (0, \dots, 0, 1)$ (Lawson & Hanson, Ch. 23).
pub fn lsi(r: &Array2<f64>, f: &[f64], g: ArrayView2<'_, f64>, h: &[f64]) -> Result<Vec<f64>> {
    let n = r.nrows();
    let p = g.nrows();
    if g.ncols() != n || h.len() != p || f.len() != n {
        return Err(RfxError::DimensionMismatch(
            "lsi: inconsistent shapes".into(),
        ));
    }
    // Ĝ = G R^{-1}: each row solves ĝ R = g, i.e. Rᵀ ĝᵀ = gᵀ (forward substitution).
    let mut gh = Array2::<f64>::zeros((p, n));
    for row in 0..p {
        for j in 0..n {
            let s: f64 = (0..j).map(|i| gh[[row, i]] * r[[i, j]]).sum();
            gh[[row, j]] = (g[[row, j]] - s) / r[[j, j]];
        }
    }
    let hh: Vec<f64> = (0..p)
        .map(|row| h[row] - (0..n).map(|j| gh[[row, j]] * f[j]).sum::<f64>())
        .collect();
    let mut e = Array2::<f64>::zeros((n + 1, p));
    for row in 0..p {
        for j in 0..n {
            e[[j, row]] = gh[[row, j]];
        }
        e[[n, row]] = hh[row];
    }
    let mut rhs = vec![0.0; n + 1];
    rhs[n] = 1.0;
    let y = nnls(e.view(), &rhs)?;
    let resid: Vec<f64> = (0..=n)
        .map(|i| (0..p).map(|j| e[[i, j]] * y[j]).sum::<f64>() - rhs[i])
        .collect();
    let rn: f64 = resid.iter().map(|v| v * v).sum::<f64>().sqrt();
    if rn < 1e-12 || resid[n].abs() < 1e-14 {
        return Err(RfxError::Numerical(
            "lsi: the inequality constraints are infeasible".into(),
        ));
    }
    let u: Vec<f64> = (0..n).map(|i| -resid[i] / resid[n]).collect();
    let rhs: Vec<f64> = u.iter().zip(f).map(|(a, b)| a + b).collect();
    Ok(solve_upper(r, &rhs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn nnls_matches_brute_force_over_active_sets() {
        // 3 unknowns: enumerate all 8 supports, solve unconstrained LS on each, keep feasible minimum.
        let e = array![
            [1.0, 0.5, -0.2],
            [0.3, -1.0, 0.8],
            [0.2, 0.4, 1.0],
            [-0.6, 0.1, 0.3]
        ];
        for f in [
            vec![1.0, -2.0, 0.5, 0.3],
            vec![-1.0, -1.0, -1.0, 0.0],
            vec![0.2, 0.9, 1.5, -0.4],
        ] {
            let y = nnls(e.view(), &f).unwrap();
            let obj = |x: &[f64]| -> f64 {
                (0..4)
                    .map(|i| ((0..3).map(|j| e[[i, j]] * x[j]).sum::<f64>() - f[i]).powi(2))
                    .sum()
            };
            let mut best = obj(&[0.0, 0.0, 0.0]);
            for mask in 1u32..8 {
                let cols: Vec<usize> = (0..3).filter(|j| mask >> j & 1 == 1).collect();
                let z = lstsq_cols(e.view(), &cols, &f).unwrap();
                if z.iter().all(|&v| v >= 0.0) {
                    let mut x = [0.0; 3];
                    for (&c, &v) in cols.iter().zip(&z) {
                        x[c] = v;
                    }
                    best = best.min(obj(&x));
                }
            }
            assert!(y.iter().all(|&v| v >= 0.0));
            assert!((obj(y.as_slice().unwrap()) - best).abs() < 1e-12, "{f:?}");
        }
    }

    #[test]
    fn lsi_solves_a_box_constrained_problem() {
        // min (b0 - 2)^2 + (b1 + 1)^2 s.t. b >= 0, b0 <= 1  →  (1, 0)
        let r = array![[1.0, 0.0], [0.0, 1.0]];
        let g = array![[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]];
        let b = lsi(&r, &[2.0, -1.0], g.view(), &[0.0, 0.0, -1.0]).unwrap();
        assert!((b[0] - 1.0).abs() < 1e-12 && b[1].abs() < 1e-12, "{b:?}");
        // unconstrained optimum feasible: returned as is
        let b = lsi(&r, &[0.5, 0.25], g.view(), &[0.0, 0.0, -1.0]).unwrap();
        assert!((b[0] - 0.5).abs() < 1e-12 && (b[1] - 0.25).abs() < 1e-12);
        // infeasible: b0 >= 2 and b0 <= 1
        let g = array![[1.0, 0.0], [-1.0, 0.0]];
        assert!(lsi(&r, &[0.0, 0.0], g.view(), &[2.0, -1.0]).is_err());
    }
}
