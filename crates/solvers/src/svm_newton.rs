//! The finite Newton method for the L2-loss (squared hinge) linear SVM: [`crate::classify::SvmSolver::Newton`].
//!
//! The primal $f(w) = \frac12\Vert w\Vert^2 + C\sum_i \max(0, 1 - y_i x_i^\top w)^2$ is strongly convex and
//! piecewise quadratic. On the set $I = \lbrace i : y_i x_i^\top w < 1\rbrace$ of points inside the margin it is the
//! quadratic $f_I(w) = \frac12\Vert w\Vert^2 + C\Vert y_I - X_I w\Vert^2$ (as $y_i^2 = 1$), minimised by
//!
//! $$ \hat w_I = (I + 2C X_I^\top X_I)^{-1}\thinspace 2C X_I^\top y_I = X_I^\top \hat\beta_I, \qquad
//!    \hat\beta_I = (X_I X_I^\top + \tfrac{1}{2C} I)^{-1} y_I $$
//!
//! (the two forms are equal by the push-through identity; the smaller system is solved). If the points inside
//! the margin of $\hat w_I$ are $I$ again, $\nabla f(\hat w_I) = \nabla f_I(\hat w_I) = 0$ and $\hat w_I$ is the
//! optimum; otherwise an exact line search on the convex piecewise quadratic $t \mapsto f(w + t(\hat w_I - w))$
//! gives the next iterate. This is L2-SVM-MFN (Keerthi & DeCoste, *JMLR* 6, 2005, Alg. 1), also Chapelle
//! (*Neural Computation* 19, 2007, §5): it ends after finitely many steps (in practice 5–30) at the optimum
//! itself, where dual coordinate descent stops at a tolerance. The dual variables of the optimum are
//! $\alpha_i = 2C\max(0, 1 - y_i x_i^\top w)$ and $w = \sum_i \alpha_i y_i x_i$ (the KKT conditions of the
//! dual $\min_{\alpha\ge0}\frac12\alpha^\top(Q + \frac{1}{2C}I)\alpha - e^\top\alpha$ that
//! [`crate::classify`]'s coordinate descent solves).
//!
//! Each step solves the smaller of the two systems: the $\vert I\vert \times \vert I\vert$ one when $\vert I\vert \le p$
//! (with $X_I X_I^\top$ gathered from the Gram $XX^\top$ when $n \le p$, which [`Newton::new`] forms once for
//! every class and cost of a path, else formed from $X_I$), the $p \times p$ one otherwise (with
//! $X_I^\top X_I = X^\top X - X_{\bar I}^\top X_{\bar I}$ from the shared $X^\top X$ when fewer rows lie outside the
//! margin than inside).

use ndarray::{Array1, Array2, ArrayView2, Axis};
use rfx_core::Result;
use rfx_linalg::{add_diag, dot, gram_cols, gram_rows, Cholesky};

/// Margins within this of 1 count as on the margin (their loss term and its gradient are below
/// $2C \cdot 10^{-10}\Vert x_i\Vert$): the optimality test does not chase rounding.
const TIE: f64 = 1e-10;

/// Bisection steps of the line search before its exact solve on the final segment.
const BISECTIONS: usize = 200;

/// Which system a Newton step solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// $\hat\beta_I = (X_I X_I^\top + \frac{1}{2C}I)^{-1} y_I$, $\hat w = X_I^\top\hat\beta_I$.
    Rows,
    /// $\hat w = (I + 2C X_I^\top X_I)^{-1}\thinspace 2C X_I^\top y_I$.
    Cols,
}

/// The data of one path: the augmented rows and their shared Gram ($XX^\top$ when $n \le p$, else $X^\top X$).
pub(crate) struct Newton<'a> {
    x: ArrayView2<'a, f64>,
    rows_gram: Option<Array2<f64>>,
    cols_gram: Option<Array2<f64>>,
    /// Tests: every step in this form.
    force: Option<Form>,
}

/// A binary fit: the weights $w = \sum_i \alpha_i y_i x_i$, the duals and the Newton steps taken.
pub(crate) struct NewtonFit {
    pub w: Array1<f64>,
    pub alpha: Array1<f64>,
    pub steps: usize,
}

impl<'a> Newton<'a> {
    /// Prepares the path's data (`x` augmented, $n \times p$): $XX^\top$ when $n \le p$, else $X^\top X$.
    pub fn new(x: ArrayView2<'a, f64>) -> Result<Self> {
        let small_n = x.nrows() <= x.ncols();
        Ok(Newton {
            x,
            rows_gram: if small_n { Some(gram_rows(x)?) } else { None },
            cols_gram: if small_n { None } else { Some(gram_cols(x)?) },
            force: None,
        })
    }

    /// Fits labels `y` (±1) with cost `c`, from the duals `start` (a warm start; zeros without one), in at
    /// most `max_steps` Newton steps.
    pub fn fit(
        &self,
        y: &[f64],
        c: f64,
        start: Option<&[f64]>,
        max_steps: usize,
    ) -> Result<NewtonFit> {
        let (n, p) = self.x.dim();
        let mut w: Array1<f64> = match start {
            Some(a) => {
                let ay: Array1<f64> = a.iter().zip(y).map(|(&a, &yi)| a.max(0.0) * yi).collect();
                self.x.t().dot(&ay)
            }
            None => Array1::zeros(p),
        };
        let mut o = self.x.dot(&w);
        let mut steps = 0;
        while steps < max_steps {
            steps += 1;
            let inside: Vec<usize> = (0..n).filter(|&i| y[i] * o[i] < 1.0).collect();
            let form = self.force.unwrap_or(if inside.len() <= p {
                Form::Rows
            } else {
                Form::Cols
            });
            let w_hat = self.newton_point(&inside, y, c, form)?;
            let o_hat = self.x.dot(&w_hat);
            let mut member = vec![false; n];
            inside.iter().for_each(|&i| member[i] = true);
            let optimal = (0..n).all(|i| {
                let m = y[i] * o_hat[i];
                if member[i] {
                    m <= 1.0 + TIE
                } else {
                    m >= 1.0 - TIE
                }
            });
            if optimal {
                o = o_hat;
                break;
            }
            let d = &w_hat - &w;
            let delta = &o_hat - &o;
            let t = line_search(&o, &delta, y, c, dot_arr(&w, &d), dot_arr(&d, &d));
            if t <= 0.0 {
                break;
            }
            w.scaled_add(t, &d);
            o.scaled_add(t, &delta);
        }
        // the duals from the final margins, and w = Σ α_i y_i x_i
        let alpha: Array1<f64> = o
            .iter()
            .zip(y)
            .map(|(&oi, &yi)| 2.0 * c * (1.0 - yi * oi).max(0.0))
            .collect();
        let ay: Array1<f64> = alpha.iter().zip(y).map(|(a, yi)| a * yi).collect();
        Ok(NewtonFit {
            w: self.x.t().dot(&ay),
            alpha,
            steps,
        })
    }

    /// The minimiser $\hat w_I$ of $f_I$.
    fn newton_point(&self, inside: &[usize], y: &[f64], c: f64, form: Form) -> Result<Array1<f64>> {
        let (n, p) = self.x.dim();
        if inside.is_empty() {
            return Ok(Array1::zeros(p));
        }
        let yi = Array2::from_shape_fn((inside.len(), 1), |(r, _)| y[inside[r]]);
        let xi = self.x.select(Axis(0), inside);
        match form {
            Form::Rows => {
                // X_I X_Iᵀ + I/(2C): gathered from XXᵀ (its lower triangle, all that the factorisation
                // reads) or formed
                let mut a = match &self.rows_gram {
                    Some(k) => {
                        let mut a = Array2::<f64>::zeros((inside.len(), inside.len()));
                        for (r, (mut row, &i)) in a.rows_mut().into_iter().zip(inside).enumerate() {
                            let (src, dst) = (
                                k.row(i).to_slice().expect("standard layout"),
                                row.as_slice_mut().expect("standard layout"),
                            );
                            for (v, &j) in dst[..=r].iter_mut().zip(inside) {
                                *v = src[j];
                            }
                        }
                        a
                    }
                    None => gram_rows(xi.view())?,
                };
                add_diag(&mut a, 0.5 / c);
                let beta = Cholesky::factor(a)?.solve(yi.view())?;
                Ok(xi.t().dot(&beta.column(0)))
            }
            Form::Cols => {
                // I + 2C X_IᵀX_I, X_IᵀX_I from XᵀX minus the rows outside when they are fewer
                let g = match &self.cols_gram {
                    Some(g) if 2 * inside.len() > n => {
                        let mut outside = vec![true; n];
                        inside.iter().for_each(|&i| outside[i] = false);
                        let rest: Vec<usize> = (0..n).filter(|&i| outside[i]).collect();
                        g - &gram_cols(self.x.select(Axis(0), &rest).view())?
                    }
                    _ => gram_cols(xi.view())?,
                };
                let mut h = g.mapv(|v| 2.0 * c * v);
                add_diag(&mut h, 1.0);
                let rhs = xi.t().dot(&yi).mapv(|v| 2.0 * c * v);
                Ok(Cholesky::factor(h)?.solve(rhs.view())?.column(0).to_owned())
            }
        }
    }
}

fn dot_arr(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    dot(
        a.as_slice().expect("contiguous"),
        b.as_slice().expect("contiguous"),
    )
}

/// The minimiser $t \ge 0$ of the convex piecewise quadratic
/// $\varphi(t) = \frac12\Vert w + t d\Vert^2 + C\sum_i \max(0, 1 - y_i(o_i + t\delta_i))^2$ from
/// $\langle w, d\rangle$ (`wd`), $\Vert d\Vert^2$ (`dd`), the margins $o$ and their change $\delta$:
/// $\varphi^\prime(t) = \langle w, d\rangle + t\Vert d\Vert^2 - 2C\sum_i y_i\delta_i\max(0, 1 - y_i(o_i + t\delta_i))$ is
/// nondecreasing and piecewise linear; a bracket $[0, 2^k]$ with $\varphi^\prime(2^k) \ge 0$ is bisected, then the
/// linear piece of the final bracket's midpoint is solved exactly (clipped to the bracket). 0 when
/// $\varphi^\prime(0) \ge 0$ (no descent).
fn line_search(o: &Array1<f64>, delta: &Array1<f64>, y: &[f64], c: f64, wd: f64, dd: f64) -> f64 {
    let slope = |t: f64| {
        let mut g = wd + t * dd;
        for ((&oi, &di), &yi) in o.iter().zip(delta).zip(y) {
            let h = 1.0 - yi * (oi + t * di);
            if h > 0.0 {
                g -= 2.0 * c * yi * di * h;
            }
        }
        g
    };
    if slope(0.0) >= 0.0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while slope(hi) < 0.0 {
        lo = hi;
        hi *= 2.0;
        if hi > 1e12 {
            return lo;
        }
    }
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if slope(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // φ'(t) = a + b t on the piece containing the midpoint
    let mid = 0.5 * (lo + hi);
    let (mut a, mut b) = (wd, dd);
    for ((&oi, &di), &yi) in o.iter().zip(delta).zip(y) {
        if 1.0 - yi * (oi + mid * di) > 0.0 {
            a -= 2.0 * c * yi * di * (1.0 - yi * oi);
            b += 2.0 * c * di * di;
        }
    }
    if b > 0.0 {
        (-a / b).clamp(lo, hi)
    } else {
        mid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::randn;

    /// $f(w)$, the primal objective.
    fn primal(x: &Array2<f64>, y: &[f64], w: &Array1<f64>, c: f64) -> f64 {
        let o = x.dot(w);
        0.5 * w.dot(w)
            + c * o
                .iter()
                .zip(y)
                .map(|(oi, yi)| (1.0 - yi * oi).max(0.0).powi(2))
                .sum::<f64>()
    }

    /// $\nabla f(w) = w - 2C\sum_i y_i \max(0, 1 - y_i x_i^\top w)\thinspace x_i$.
    fn gradient(x: &Array2<f64>, y: &[f64], w: &Array1<f64>, c: f64) -> Array1<f64> {
        let o = x.dot(w);
        let r: Array1<f64> = o
            .iter()
            .zip(y)
            .map(|(oi, yi)| 2.0 * c * yi * (1.0 - yi * oi).max(0.0))
            .collect();
        w - &x.t().dot(&r)
    }

    fn problem(n: usize, p: usize, seed: u64) -> (Array2<f64>, Vec<f64>) {
        let x = randn(n, p, seed);
        let noise = randn(n, 1, seed + 1);
        let y = (0..n)
            .map(|i| {
                if x[[i, 0]] - 0.7 * x[[i, 1]] + noise[[i, 0]] > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        (x, y)
    }

    #[test]
    fn newton_ends_at_a_stationary_point_in_both_forms() {
        // n > p (w form) and n ≤ p (β form), overlapping classes, costs from 0.01 to 1000
        for (n, p) in [(300, 12), (60, 150)] {
            let (x, y) = problem(n, p, 7);
            let newton = Newton::new(x.view()).unwrap();
            assert_eq!(newton.rows_gram.is_some(), n <= p);
            for c in [0.01, 1.0, 100.0, 1000.0] {
                let fit = newton.fit(&y, c, None, 100).unwrap();
                // f is 1-strongly convex: ‖w − w*‖ ≤ ‖∇f(w)‖; the gradient is a sum of n terms of size
                // 2C|x_i| (1 + |o_i|): its rounding is ~ n·2C·max|x|·max|o|·ε
                let g = gradient(&x, &y, &fit.w, c);
                let gn = g.dot(&g).sqrt();
                let o = x.dot(&fit.w);
                // a point counted on the margin within TIE adds at most 2C·TIE·‖x_i‖ to the gradient;
                // margins computed from the Newton system carry its rounding, at most κ ε (1 + |o|) with
                // κ ≤ 1 + 2C ‖X‖₂² ≤ 1 + 2C ‖X‖_F² the system's condition number
                let row_norms: f64 = x.rows().into_iter().map(|r| r.dot(&r).sqrt()).sum();
                let kappa = 1.0 + 2.0 * c * x.iter().map(|v| v * v).sum::<f64>();
                let max_o = o.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                let scale = 2.0 * c * row_norms * (TIE + kappa * f64::EPSILON * (1.0 + max_o));
                assert!(gn <= scale, "C = {c}: ‖∇f‖ = {gn} > {scale}");
                // w = Σ α_i y_i x_i with α = 2C max(0, 1 − y o) ≥ 0
                assert!(fit.alpha.iter().all(|&a| a >= 0.0));
                // no nearby point is better: f(w ± εe_j) ≥ f(w) − rounding
                let f0 = primal(&x, &y, &fit.w, c);
                for j in 0..3 {
                    for sign in [-1.0, 1.0] {
                        let mut w = fit.w.clone();
                        w[j] += sign * 1e-4;
                        assert!(primal(&x, &y, &w, c) >= f0 - 1e-9 * f0.max(1.0));
                    }
                }
            }
        }
    }

    #[test]
    fn the_two_forms_and_warm_starts_reach_the_same_optimum() {
        // one problem solved with every step in the β form, in the w form, and with the choice per step
        let (x, y) = problem(80, 80, 11);
        let auto = Newton::new(x.view()).unwrap();
        let rows = Newton {
            force: Some(Form::Rows),
            ..Newton::new(x.view()).unwrap()
        };
        let cols = Newton {
            force: Some(Form::Cols),
            cols_gram: Some(gram_cols(x.view()).unwrap()),
            ..Newton::new(x.view()).unwrap()
        };
        for c in [0.1, 10.0] {
            let (a, b, r) = (
                auto.fit(&y, c, None, 100).unwrap(),
                cols.fit(&y, c, None, 100).unwrap(),
                rows.fit(&y, c, None, 100).unwrap(),
            );
            let warm = auto
                .fit(&y, c, Some(a.alpha.as_slice().unwrap()), 100)
                .unwrap();
            // from its own optimum, the warm start needs a single step
            assert_eq!(warm.steps, 1, "C = {c}");
            for other in [&b.w, &r.w, &warm.w] {
                let d = (&a.w - other).mapv(f64::abs).fold(0.0f64, |m, &v| m.max(v));
                let s = a.w.mapv(f64::abs).fold(0.0f64, |m, &v| m.max(v));
                assert!(d <= 1e-8 * s.max(1.0), "C = {c}: |Δw| = {d}");
            }
        }
    }

    #[test]
    fn line_search_finds_the_minimum_of_the_piecewise_quadratic() {
        // φ(t) on a fine grid against the line search's t
        let (x, y) = problem(50, 5, 3);
        let w = randn(5, 1, 4).column(0).to_owned();
        let c = 3.0;
        // the steepest-descent direction: φ'(0) = −‖∇f‖² < 0
        let d = -gradient(&x, &y, &w, c);
        let (o, delta) = (x.dot(&w), x.dot(&d));
        let phi = |t: f64| primal(&x, &y, &(&w + &(t * &d)), c);
        let t = line_search(&o, &delta, &y, c, w.dot(&d), d.dot(&d));
        let best = (0..=20_000)
            .map(|k| k as f64 * 1e-3)
            .fold(f64::INFINITY, |m, s| m.min(phi(s)));
        assert!(t > 0.0);
        assert!(
            phi(t) <= best + 1e-12 * best.abs(),
            "φ({t}) = {} > {best}",
            phi(t)
        );
    }
}
