//! Linear classifiers on feature matrices: L2-regularized logistic regression (binary and softmax, L-BFGS)
//! and a linear SVM by dual coordinate descent (Hsieh et al. 2008, the LIBLINEAR solver), one-vs-rest.
//!
//! These serve the RF survey's "liblinear" column (`-s 1`: L2-regularized L2-loss SVC dual, one-vs-rest,
//! $C \in \lbrace0.01, \dots, 100\rbrace$) and the ternary-features paper's logistic regression.

use crate::ridge::argmax_rows;
use crate::svm_newton::Newton;
use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use rfx_core::{rng_stream, Result, RfxError};
use rfx_linalg::{axpy, dot};

fn check_labels(z: &ArrayView2<'_, f64>, labels: &[usize], n_classes: usize) -> Result<()> {
    if n_classes < 2 {
        return Err(RfxError::invalid("n_classes", n_classes, "at least 2"));
    }
    if z.nrows() != labels.len() || z.nrows() == 0 || z.ncols() == 0 {
        return Err(RfxError::DimensionMismatch(format!(
            "features {:?} vs {} labels",
            z.dim(),
            labels.len()
        )));
    }
    if let Some(&bad) = labels.iter().find(|&&c| c >= n_classes) {
        return Err(RfxError::invalid("label", bad, format!("0..{n_classes}")));
    }
    if !z.iter().all(|v| v.is_finite()) {
        return Err(RfxError::Numerical(
            "classifier: non-finite features".into(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// L-BFGS
// ---------------------------------------------------------------------------------------------------------

/// Minimizes a smooth convex $f$ by L-BFGS (Nocedal & Wright, Alg. 7.4/7.5) with a backtracking Armijo line
/// search. `fg` returns $(f(\theta), \nabla f(\theta))$. Stops when $\Vert\nabla f\Vert_2 \le \text{tol}$.
/// Returns $(\theta, \Vert\nabla f\Vert_2, \text{iterations})$.
fn lbfgs(
    mut theta: Array1<f64>,
    fg: impl Fn(&Array1<f64>) -> (f64, Array1<f64>),
    tol: f64,
    max_iter: usize,
    memory: usize,
) -> Result<(Array1<f64>, f64, usize)> {
    let (mut f, mut g) = fg(&theta);
    let mut hist: std::collections::VecDeque<(Array1<f64>, Array1<f64>, f64)> = Default::default();
    for it in 0..max_iter {
        let gn = g.dot(&g).sqrt();
        if !gn.is_finite() || !f.is_finite() {
            return Err(RfxError::Numerical(
                "L-BFGS: non-finite objective or gradient".into(),
            ));
        }
        if gn <= tol {
            return Ok((theta, gn, it));
        }
        // two-loop recursion
        let mut q = g.clone();
        let mut alphas = Vec::with_capacity(hist.len());
        for (sv, yv, rho) in hist.iter().rev() {
            let a = rho * sv.dot(&q);
            q.scaled_add(-a, yv);
            alphas.push(a);
        }
        let gamma = hist
            .back()
            .map_or(1.0 / gn.max(1.0), |(sv, yv, _)| sv.dot(yv) / yv.dot(yv));
        q *= gamma;
        for ((sv, yv, rho), a) in hist.iter().zip(alphas.iter().rev()) {
            let b = rho * yv.dot(&q);
            q.scaled_add(a - b, sv);
        }
        let mut dir = -q;
        let mut slope = g.dot(&dir);
        if slope >= 0.0 {
            // not a descent direction (should not happen for convex f): restart with steepest descent
            hist.clear();
            dir = -&g / gn.max(1.0);
            slope = g.dot(&dir);
        }
        let mut step = 1.0;
        let (mut f_new, mut g_new, mut theta_new);
        loop {
            theta_new = &theta + &(&dir * step);
            (f_new, g_new) = fg(&theta_new);
            if f_new.is_finite() && f_new <= f + 1e-4 * step * slope {
                break;
            }
            step *= 0.5;
            if step < 1e-20 {
                // no progress possible at machine precision
                return Ok((theta, gn, it));
            }
        }
        let sv = &theta_new - &theta;
        let yv = &g_new - &g;
        let sy = sv.dot(&yv);
        if sy > 1e-12 * sv.dot(&sv).sqrt() * yv.dot(&yv).sqrt() {
            if hist.len() == memory {
                hist.pop_front();
            }
            hist.push_back((sv, yv, 1.0 / sy));
        }
        theta = theta_new;
        f = f_new;
        g = g_new;
    }
    let gn = g.dot(&g).sqrt();
    if gn <= tol {
        Ok((theta, gn, max_iter))
    } else {
        Err(RfxError::Numerical(format!(
            "L-BFGS did not converge in {max_iter} iterations (gradient norm {gn:e} > {tol:e})"
        )))
    }
}

// ---------------------------------------------------------------------------------------------------------
// Logistic regression
// ---------------------------------------------------------------------------------------------------------

/// Parameters of [`LogisticRegression::fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogisticParams {
    /// L2 strength $\lambda \ge 0$ in $\frac1n\sum_i \ell_i + \frac{\lambda}{2}\Vert W\Vert_F^2$ (sklearn's
    /// $C = 1/(n\lambda)$). The intercept is not penalized.
    pub lambda: f64,
    /// Fit an intercept.
    pub fit_intercept: bool,
    /// Gradient-norm tolerance of L-BFGS.
    pub tol: f64,
    /// Maximum L-BFGS iterations.
    pub max_iter: usize,
}

impl LogisticParams {
    /// λ with an intercept, tolerance $10^{-8}$, 1000 iterations.
    pub fn new(lambda: f64) -> Self {
        LogisticParams {
            lambda,
            fit_intercept: true,
            tol: 1e-8,
            max_iter: 1000,
        }
    }

    /// Validates the parameters.
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(RfxError::invalid("lambda", self.lambda, "finite and >= 0"));
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return Err(RfxError::invalid("tol", self.tol, "finite and > 0"));
        }
        if self.max_iter == 0 {
            return Err(RfxError::invalid("max_iter", 0, "at least 1"));
        }
        Ok(())
    }
}

/// L2-regularized logistic regression. Binary ($C = 2$): one weight vector,
/// $\ell_i = \log(1 + e^{-s_i (z_i^\top w + b)})$, $s_i = \pm 1$. Multiclass: softmax (multinomial),
/// $\ell_i = \log\sum_c e^{z_i^\top w_c + b_c} - (z_i^\top w_{y_i} + b_{y_i})$.
/// Objective $\frac1n\sum_i \ell_i + \frac{\lambda}{2}\Vert W\Vert_F^2$, minimized by L-BFGS.
#[derive(Clone, Debug)]
pub struct LogisticRegression {
    /// Weights ($m \times 1$ for binary, $m \times C$ for softmax).
    weights: Array2<f64>,
    bias: Array1<f64>,
    n_classes: usize,
    grad_norm: f64,
    iterations: usize,
}

/// Objective and gradient of the logistic loss at $\theta = (\mathrm{vec}(W), b)$.
fn logistic_fg(
    z: &ArrayView2<'_, f64>,
    labels: &[usize],
    n_out: usize,
    p: &LogisticParams,
    theta: &Array1<f64>,
) -> (f64, Array1<f64>) {
    let (n, m) = z.dim();
    let w = theta
        .slice(s![..m * n_out])
        .into_shape_with_order((m, n_out))
        .expect("shape");
    let b = theta.slice(s![m * n_out..]);
    let mut s = z.dot(&w);
    if p.fit_intercept {
        s += &b;
    }
    let mut loss = 0.0;
    // residual r = dℓ/ds (n × n_out)
    let mut r = Array2::zeros((n, n_out));
    if n_out == 1 {
        for i in 0..n {
            let y = if labels[i] == 1 { 1.0 } else { 0.0 };
            let t = s[[i, 0]];
            // log(1 + e^t) - y t, stably
            loss += t.max(0.0) + (-t.abs()).exp().ln_1p() - y * t;
            let sig = if t >= 0.0 {
                1.0 / (1.0 + (-t).exp())
            } else {
                t.exp() / (1.0 + t.exp())
            };
            r[[i, 0]] = sig - y;
        }
    } else {
        for i in 0..n {
            let row = s.row(i);
            let mx = row.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
            let se: f64 = row.iter().map(|v| (v - mx).exp()).sum();
            let lse = mx + se.ln();
            loss += lse - row[labels[i]];
            for c in 0..n_out {
                r[[i, c]] = (row[c] - lse).exp() - if c == labels[i] { 1.0 } else { 0.0 };
            }
        }
    }
    let nf = n as f64;
    let f = loss / nf + 0.5 * p.lambda * w.iter().map(|v| v * v).sum::<f64>();
    let mut gw = z.t().dot(&r) / nf;
    gw.scaled_add(p.lambda, &w);
    let gb = if p.fit_intercept {
        r.sum_axis(Axis(0)) / nf
    } else {
        Array1::zeros(n_out)
    };
    let mut g = Array1::zeros(theta.len());
    g.slice_mut(s![..m * n_out])
        .assign(&Array1::from_iter(gw.iter().copied()));
    g.slice_mut(s![m * n_out..]).assign(&gb);
    (f, g)
}

impl LogisticRegression {
    /// Fits on features $Z$ ($n \times m$) and labels in `0..n_classes`.
    pub fn fit(
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        n_classes: usize,
        params: &LogisticParams,
    ) -> Result<Self> {
        params.validate()?;
        check_labels(&z, labels, n_classes)?;
        let n_out = if n_classes == 2 { 1 } else { n_classes };
        let m = z.ncols();
        let theta0 = Array1::zeros(m * n_out + n_out);
        let (theta, gn, it) = lbfgs(
            theta0,
            |t| logistic_fg(&z, labels, n_out, params, t),
            params.tol,
            params.max_iter,
            10,
        )?;
        Ok(LogisticRegression {
            weights: theta
                .slice(s![..m * n_out])
                .to_owned()
                .into_shape_with_order((m, n_out))
                .expect("shape"),
            bias: theta.slice(s![m * n_out..]).to_owned(),
            n_classes,
            grad_norm: gn,
            iterations: it,
        })
    }

    /// Objective value and gradient norm of a fitted model on data (optimality check).
    pub fn objective_and_grad_norm(
        &self,
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        params: &LogisticParams,
    ) -> Result<(f64, f64)> {
        check_labels(&z, labels, self.n_classes)?;
        if z.ncols() != self.weights.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "model has {} features, data {}",
                self.weights.nrows(),
                z.ncols()
            )));
        }
        let theta = Array1::from_iter(
            self.weights
                .iter()
                .copied()
                .chain(self.bias.iter().copied()),
        );
        let (f, g) = logistic_fg(&z, labels, self.weights.ncols(), params, &theta);
        Ok((f, g.dot(&g).sqrt()))
    }

    /// Weights.
    pub fn weights(&self) -> &Array2<f64> {
        &self.weights
    }

    /// Intercepts.
    pub fn bias(&self) -> &Array1<f64> {
        &self.bias
    }

    /// Gradient norm at termination and L-BFGS iterations used.
    pub fn convergence(&self) -> (f64, usize) {
        (self.grad_norm, self.iterations)
    }

    /// Decision values $ZW + b$.
    pub fn decision_function(&self, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if z.ncols() != self.weights.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "model has {} features, data {}",
                self.weights.nrows(),
                z.ncols()
            )));
        }
        Ok(z.dot(&self.weights) + &self.bias)
    }

    /// Predicted labels.
    pub fn predict(&self, z: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        let s = self.decision_function(z)?;
        if self.weights.ncols() == 1 {
            Ok(s.column(0).iter().map(|&v| usize::from(v > 0.0)).collect())
        } else {
            Ok(argmax_rows(s.view()))
        }
    }
}

/// Parameters of [`LogisticRegression::fit_sgd`] (mini-batch SGD, as the ternary-features paper trains its
/// covtype logistic regression: `--opt sgd --minibatch 250 --l2_reg 1e-5 --epoch 10`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdParams {
    /// L2 strength λ of the same objective as [`LogisticParams::lambda`].
    pub lambda: f64,
    /// Initial step $\eta_0 > 0$.
    pub learning_rate: f64,
    /// Rows per mini-batch (≥ 1).
    pub batch_size: usize,
    /// Passes over the data (≥ 1).
    pub epochs: usize,
    /// Step decay $\eta_t = \eta_0 / (1 + \eta_0 \lambda t)$ (Bottou 2012) when true, constant otherwise.
    pub decay: bool,
    /// Fit an intercept.
    pub fit_intercept: bool,
    /// Seed of the shuffling stream.
    pub seed: u64,
}

impl SgdParams {
    /// λ, step $\eta_0$, batch 250, 10 epochs, decaying step, intercept.
    pub fn new(lambda: f64, learning_rate: f64, seed: u64) -> Self {
        SgdParams {
            lambda,
            learning_rate,
            batch_size: 250,
            epochs: 10,
            decay: true,
            fit_intercept: true,
            seed,
        }
    }

    /// Validates the parameters.
    pub fn validate(&self) -> Result<()> {
        LogisticParams::new(self.lambda).validate()?;
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(RfxError::invalid(
                "learning_rate",
                self.learning_rate,
                "finite and > 0",
            ));
        }
        if self.batch_size == 0 {
            return Err(RfxError::invalid("batch_size", 0, "at least 1"));
        }
        if self.epochs == 0 {
            return Err(RfxError::invalid("epochs", 0, "at least 1"));
        }
        Ok(())
    }
}

impl LogisticRegression {
    /// Mini-batch SGD on the objective of [`LogisticRegression::fit`]: each step uses the gradient of
    /// $\frac{1}{|B|}\sum_{i \in B} \ell_i + \frac{\lambda}{2}\Vert W\Vert_F^2$ on a batch $B$ of a seeded per-epoch
    /// permutation.
    pub fn fit_sgd(
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        n_classes: usize,
        params: &SgdParams,
    ) -> Result<Self> {
        params.validate()?;
        check_labels(&z, labels, n_classes)?;
        let n_out = if n_classes == 2 { 1 } else { n_classes };
        let (n, m) = z.dim();
        let lp = LogisticParams {
            lambda: params.lambda,
            fit_intercept: params.fit_intercept,
            tol: 1.0,
            max_iter: 1,
        };
        let mut theta = Array1::<f64>::zeros(m * n_out + n_out);
        let mut rng = rng_stream(params.seed, "logistic-sgd");
        let mut order: Vec<usize> = (0..n).collect();
        let mut t = 0usize;
        for _ in 0..params.epochs {
            order.shuffle(&mut rng);
            for batch in order.chunks(params.batch_size) {
                let zb = z.select(Axis(0), batch);
                let lb: Vec<usize> = batch.iter().map(|&i| labels[i]).collect();
                let (_, g) = logistic_fg(&zb.view(), &lb, n_out, &lp, &theta);
                let eta = if params.decay {
                    params.learning_rate / (1.0 + params.learning_rate * params.lambda * t as f64)
                } else {
                    params.learning_rate
                };
                theta.scaled_add(-eta, &g);
                t += 1;
            }
            if !theta.iter().all(|v| v.is_finite()) {
                return Err(RfxError::Numerical(
                    "SGD diverged: reduce the learning rate".into(),
                ));
            }
        }
        let (_, g) = logistic_fg(&z, labels, n_out, &lp, &theta);
        Ok(LogisticRegression {
            weights: theta
                .slice(s![..m * n_out])
                .to_owned()
                .into_shape_with_order((m, n_out))
                .expect("shape"),
            bias: theta.slice(s![m * n_out..]).to_owned(),
            n_classes,
            grad_norm: g.dot(&g).sqrt(),
            iterations: t,
        })
    }
}

// ---------------------------------------------------------------------------------------------------------
// Linear SVM, dual coordinate descent
// ---------------------------------------------------------------------------------------------------------

/// Loss of the linear SVM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SvmLoss {
    /// Hinge $\max(0, 1 - y w^\top x)$ (LIBLINEAR `-s 3`).
    L1,
    /// Squared hinge $\max(0, 1 - y w^\top x)^2$ (LIBLINEAR `-s 1`, its default).
    #[default]
    L2,
}

/// How the binary SVM problems are solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SvmSolver {
    /// Dual coordinate descent (Hsieh et al. 2008; LIBLINEAR `-s 1` / `-s 3`): stops when the projected
    /// gradient's spread is at most `tol`, or after `max_iter` passes.
    #[default]
    DualCd,
    /// The finite Newton method for the squared hinge (Keerthi & DeCoste 2005, L2-SVM-MFN; module
    /// `svm_newton`): Newton steps on the set $I$ of rows inside the margin with an exact line search, ending
    /// **at** the optimum (margins within $10^{-10}$ of 1 count as on it) — `tol` is not used, `max_iter` caps
    /// the steps. Each step solves the smaller system: $(X_I X_I^\top + \frac{1}{2C}I)\beta_I = y_I$,
    /// $w = X_I^\top\beta_I$ when $\vert I\vert \le p$ (with $X_I X_I^\top$ from the Gram $XX^\top$ when $n \le p$, formed
    /// once per [`LinearSvm::fit_path`] and shared by all classes and costs), else
    /// $(I + 2C X_I^\top X_I)\thinspace w = 2C X_I^\top y_I$. [`SvmLoss::L2`] only.
    Newton,
    /// Dual coordinate descent for at most [`HYBRID_PASSES`] passes; a problem that has not met `tol` by then
    /// goes on with the Newton method from its dual variables, to the optimum. Coordinate descent is cheap
    /// where it converges fast (small $C$, well-conditioned rows: a pass costs $np$, a Newton step up to
    /// $\min(n, p)^3/3 + np$); Newton is where it does not (large $C$: survey-benchmark's $C = 100$ ran into
    /// the 1000-pass cap in most fits). Every result meets the stopping rule of [`SvmSolver::DualCd`] without
    /// its cap. [`SvmLoss::L2`] only.
    Hybrid,
}

/// Passes of coordinate descent before [`SvmSolver::Hybrid`] turns to the Newton method.
pub const HYBRID_PASSES: usize = 100;

/// Parameters of [`LinearSvm::fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvmParams {
    /// Cost $C > 0$ in $\frac12\Vert w\Vert^2 + C\sum_i \xi_i$.
    pub c: f64,
    /// Hinge or squared hinge.
    pub loss: SvmLoss,
    /// Bias feature value $B$: LIBLINEAR appends $B$ to every $x$ (so the bias is regularized); 0 = no bias.
    pub bias: f64,
    /// Stop when the projected-gradient spread $\max PG - \min PG \le$ `tol` (LIBLINEAR's $\epsilon$).
    pub tol: f64,
    /// Maximum outer iterations (passes over the data).
    pub max_iter: usize,
    /// Seed of the coordinate permutations.
    pub seed: u64,
    /// Leave out coordinates stuck at a bound until the rest converges (LIBLINEAR's shrinking, its
    /// default): the same stopping rule, fewer inner products per pass.
    pub shrinking: bool,
    /// Dual coordinate descent (default, LIBLINEAR's) or the finite Newton method ([`SvmSolver`]).
    pub solver: SvmSolver,
}

impl SvmParams {
    /// $C$ with LIBLINEAR's defaults for `-s 1`: squared hinge, bias 1, tolerance $\epsilon = 0.1$ on the
    /// projected-gradient spread, at most 1000 passes, shrinking. (scikit-learn's `LinearSVC` passes its own
    /// `tol = 1e-4` to the same solver.)
    pub fn new(c: f64, seed: u64) -> Self {
        SvmParams {
            c,
            loss: SvmLoss::L2,
            bias: 1.0,
            tol: 0.1,
            max_iter: 1000,
            seed,
            shrinking: true,
            solver: SvmSolver::DualCd,
        }
    }

    /// Validates the parameters.
    pub fn validate(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(RfxError::invalid("C", self.c, "finite and > 0"));
        }
        if !(self.bias.is_finite() && self.bias >= 0.0) {
            return Err(RfxError::invalid("bias", self.bias, "finite and >= 0"));
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return Err(RfxError::invalid("tol", self.tol, "finite and > 0"));
        }
        if self.max_iter == 0 {
            return Err(RfxError::invalid("max_iter", 0, "at least 1"));
        }
        if self.solver != SvmSolver::DualCd && self.loss != SvmLoss::L2 {
            return Err(RfxError::invalid(
                "loss",
                format!("L1 with the {:?} solver", self.solver),
                "L2 (squared hinge) for SvmSolver::Newton and Hybrid, or SvmSolver::DualCd",
            ));
        }
        Ok(())
    }

    fn upper_and_diag(&self) -> (f64, f64) {
        match self.loss {
            SvmLoss::L1 => (self.c, 0.0),
            SvmLoss::L2 => (f64::INFINITY, 0.5 / self.c),
        }
    }
}

/// One binary problem: $w$ (with the bias weight last when $B > 0$), dual variables and convergence info.
/// Both solvers keep $w = \sum_i \alpha_i y_i x_i$.
#[derive(Clone, Debug)]
pub struct BinarySvm {
    /// Weights on the (augmented) features.
    pub w: Array1<f64>,
    /// Dual variables $\alpha$.
    pub alpha: Array1<f64>,
    /// Final projected-gradient spread of the dual (for [`SvmSolver::Newton`] evaluated at its result).
    pub pg_spread: f64,
    /// Passes ([`SvmSolver::DualCd`]), Newton steps ([`SvmSolver::Newton`]) or both ([`SvmSolver::Hybrid`]).
    pub iterations: usize,
}

/// Dual coordinate descent for $\min_\alpha \frac12\alpha^\top \bar Q \alpha - e^\top\alpha$,
/// $0 \le \alpha_i \le U$, $\bar Q = Q + D$, $Q_{ij} = y_i y_j x_i^\top x_j$ (Hsieh et al. 2008, Alg. 1), keeping
/// $w = \sum_i \alpha_i y_i x_i$. L1 loss: $U = C$, $D = 0$; L2 loss: $U = \infty$, $D_{ii} = 1/(2C)$.
///
/// With `shrinking` (LIBLINEAR's `solve_l2r_l1l2_svc`, Hsieh et al. §3.2): a coordinate at a bound whose
/// gradient points outward beyond the previous pass's projected-gradient extremes ($\alpha_i = 0$ and
/// $G_i > \overline{PG}$, or $\alpha_i = U$ and $G_i < \underline{PG}$) leaves the active set; when the active set
/// meets the tolerance, every coordinate comes back and the passes continue until all of them do. The stopping
/// rule is therefore the same as without shrinking, on all $n$ coordinates.
///
/// `start`: dual variables to begin from (a warm start, clipped to $[0, U]$, with $w$ formed from them);
/// zeros without one.
fn dcd(
    x: &ArrayView2<'_, f64>,
    y: &[f64],
    p: &SvmParams,
    stream: &str,
    start: Option<&[f64]>,
) -> BinarySvm {
    let (n, m) = x.dim();
    let rows = x
        .as_slice()
        .expect("augment() returns a matrix in standard layout");
    let row = |i: usize| &rows[i * m..(i + 1) * m];
    let (upper, dii) = p.upper_and_diag();
    let qd: Vec<f64> = (0..n).map(|i| dot(row(i), row(i)) + dii).collect();
    let mut alpha = vec![0.0f64; n];
    let mut w = vec![0.0f64; m];
    if let Some(a0) = start {
        for (i, (a, &v)) in alpha.iter_mut().zip(a0).enumerate() {
            *a = v.max(0.0).min(upper);
            if *a != 0.0 {
                axpy(*a * y[i], row(i), &mut w);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    let mut active = n;
    // the previous pass's projected-gradient extremes (±∞: shrink nothing)
    let (mut pg_max_old, mut pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut rng = rng_stream(p.seed, stream);
    let mut spread = f64::INFINITY;
    let mut it = 0;
    while it < p.max_iter {
        it += 1;
        order[..active].shuffle(&mut rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut s = 0;
        while s < active {
            let i = order[s];
            let xi = row(i);
            let g = y[i] * dot(&w, xi) - 1.0 + dii * alpha[i];
            let (at_lower, at_upper) = (alpha[i] == 0.0, alpha[i] == upper);
            if p.shrinking && ((at_lower && g > pg_max_old) || (at_upper && g < pg_min_old)) {
                active -= 1;
                order.swap(s, active);
                continue;
            }
            let pg = projected(g, at_lower, at_upper);
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-14 && qd[i] > 0.0 {
                let old = alpha[i];
                alpha[i] = (old - g / qd[i]).max(0.0).min(upper);
                axpy((alpha[i] - old) * y[i], xi, &mut w);
            }
            s += 1;
        }
        spread = pg_max - pg_min;
        if spread <= p.tol {
            if active == n {
                break;
            }
            // converged on the active set: check every coordinate in the next pass
            active = n;
            (pg_max_old, pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
            spread = f64::INFINITY;
            continue;
        }
        pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
        pg_min_old = if pg_min >= 0.0 {
            f64::NEG_INFINITY
        } else {
            pg_min
        };
    }
    BinarySvm {
        w: Array1::from(w),
        alpha: Array1::from(alpha),
        pg_spread: spread,
        iterations: it,
    }
}

/// The projected gradient of a box-constrained coordinate: $\min(G, 0)$ at the lower bound, $\max(G, 0)$ at the
/// upper one, $G$ inside.
fn projected(g: f64, at_lower: bool, at_upper: bool) -> f64 {
    if at_lower {
        g.min(0.0)
    } else if at_upper {
        g.max(0.0)
    } else {
        g
    }
}

/// The spread $\max_i PG_i - \min_i PG_i$ of the dual's projected gradient
/// $G_i = y_i w^\top x_i - 1 + D_{ii}\alpha_i$ at $(\alpha, w)$: [`dcd`]'s stopping quantity, 0 at the optimum.
fn pg_spread(
    x: &ArrayView2<'_, f64>,
    y: &[f64],
    alpha: &Array1<f64>,
    w: &Array1<f64>,
    p: &SvmParams,
) -> f64 {
    let (upper, dii) = p.upper_and_diag();
    let margins = x.dot(w);
    let (mut hi, mut lo) = (f64::NEG_INFINITY, f64::INFINITY);
    for ((&m, &yi), &a) in margins.iter().zip(y).zip(alpha) {
        let pg = projected(yi * m - 1.0 + dii * a, a <= 0.0, a >= upper);
        hi = hi.max(pg);
        lo = lo.min(pg);
    }
    if y.is_empty() {
        0.0
    } else {
        hi - lo
    }
}

/// Linear SVM, one-vs-rest for more than two classes (LIBLINEAR's scheme), trained by dual coordinate descent
/// or the finite Newton method ([`SvmSolver`]; the classes in parallel with rayon).
#[derive(Clone, Debug)]
pub struct LinearSvm {
    models: Vec<BinarySvm>,
    bias: f64,
    n_features: usize,
}

/// The rows $[z, \beta]$ with the bias column $\beta$ (`rfx_core::append_bias`), or the rows themselves when
/// $\beta = 0$ (no intercept).
fn augment(z: &ArrayView2<'_, f64>, bias: f64) -> Array2<f64> {
    if bias > 0.0 {
        rfx_core::append_bias(*z, bias)
    } else {
        z.as_standard_layout().into_owned()
    }
}

impl LinearSvm {
    /// Fits on features and labels in `0..n_classes` (one binary problem if `n_classes == 2`, with class 1
    /// positive; otherwise one per class).
    pub fn fit(
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        n_classes: usize,
        params: &SvmParams,
    ) -> Result<Self> {
        // a path of one cost: each binary problem from α = 0
        let mut path = Self::fit_path(z, labels, n_classes, params, &[params.c])?;
        Ok(path.remove(0))
    }

    /// Fits one model per cost in `cs` (in that order, `params.c` ignored), each binary problem starting its
    /// coordinate descent from the previous cost's dual variables (clipped to the new box) instead of
    /// $\alpha = 0$ — the warm start of LIBLINEAR's parameter search, for a grid of $C$ in increasing order.
    ///
    /// Each model meets the same stopping rule as [`LinearSvm::fit`] with that $C$ (spread of the projected
    /// gradient $\le$ `tol`, or `max_iter` passes), so both are within the tolerance's reach of the one optimum
    /// $w^*(C)$ of the strongly convex primal; only where in that reach they stop differs. With $C$ increasing,
    /// the previous $\alpha$ is feasible (the box $[0, C]$ grows; the squared hinge has no upper bound) and
    /// already close, so the small costs need fewer passes; a cost whose fit runs to `max_iter` passes from
    /// zero does so from the warm start too.
    pub fn fit_path(
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        n_classes: usize,
        params: &SvmParams,
        cs: &[f64],
    ) -> Result<Vec<Self>> {
        for &c in cs {
            SvmParams { c, ..*params }.validate()?;
        }
        check_labels(&z, labels, n_classes)?;
        let x = augment(&z, params.bias);
        // the Newton solver's shared data (in its β form the Gram XXᵀ, once for all classes and costs)
        let newton = match params.solver {
            SvmSolver::Newton | SvmSolver::Hybrid => Some(Newton::new(x.view())?),
            SvmSolver::DualCd => None,
        };
        let positives: Vec<usize> = if n_classes == 2 {
            vec![1]
        } else {
            (0..n_classes).collect()
        };
        // per class, the path over C (sequential: each start is the previous result); the binary problems are
        // independent (each with its own seeded pass order): fitted in parallel, collected in class order, so
        // the models do not depend on the thread count
        let paths: Vec<Vec<BinarySvm>> = positives
            .par_iter()
            .map(|&c| {
                let y: Vec<f64> = labels
                    .iter()
                    .map(|&l| if l == c { 1.0 } else { -1.0 })
                    .collect();
                let stream = format!("svm-dcd-class={c}");
                let mut path: Vec<BinarySvm> = Vec::with_capacity(cs.len());
                for &cost in cs {
                    let p = SvmParams { c: cost, ..*params };
                    let start = path.last().map(|m| m.alpha.as_slice().unwrap_or_default());
                    let newton_from = |start: Option<&[f64]>, before: usize| -> Result<BinarySvm> {
                        let solver = newton.as_ref().expect("prepared for Newton and Hybrid");
                        let fit = solver.fit(&y, cost, start, p.max_iter)?;
                        Ok(BinarySvm {
                            pg_spread: pg_spread(&x.view(), &y, &fit.alpha, &fit.w, &p),
                            w: fit.w,
                            alpha: fit.alpha,
                            iterations: before + fit.steps,
                        })
                    };
                    let m = match p.solver {
                        SvmSolver::DualCd => dcd(&x.view(), &y, &p, &stream, start),
                        SvmSolver::Newton => newton_from(start, 0)?,
                        SvmSolver::Hybrid => {
                            let q = SvmParams {
                                max_iter: p.max_iter.min(HYBRID_PASSES),
                                ..p
                            };
                            let m = dcd(&x.view(), &y, &q, &stream, start);
                            if m.pg_spread <= p.tol {
                                m
                            } else {
                                newton_from(m.alpha.as_slice(), m.iterations)?
                            }
                        }
                    };
                    path.push(m);
                }
                Ok(path)
            })
            .collect::<Result<_>>()?;
        // regroup by cost, moving each model (class order kept)
        let mut by_cost: Vec<Vec<BinarySvm>> =
            cs.iter().map(|_| Vec::with_capacity(paths.len())).collect();
        for path in paths {
            for (models, m) in by_cost.iter_mut().zip(path) {
                models.push(m);
            }
        }
        Ok(by_cost
            .into_iter()
            .map(|models| LinearSvm {
                models,
                bias: params.bias,
                n_features: z.ncols(),
            })
            .collect())
    }

    /// The binary problems (one, or one per class).
    pub fn models(&self) -> &[BinarySvm] {
        &self.models
    }

    /// Decision values ($n \times 1$ binary, $n \times C$ one-vs-rest).
    pub fn decision_function(&self, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if z.ncols() != self.n_features {
            return Err(RfxError::DimensionMismatch(format!(
                "SVM has {} features, data {}",
                self.n_features,
                z.ncols()
            )));
        }
        let x = augment(&z, self.bias);
        let mut out = Array2::zeros((z.nrows(), self.models.len()));
        for (c, m) in self.models.iter().enumerate() {
            out.column_mut(c).assign(&x.dot(&m.w));
        }
        Ok(out)
    }

    /// Predicted labels.
    pub fn predict(&self, z: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        let s = self.decision_function(z)?;
        if self.models.len() == 1 {
            Ok(s.column(0).iter().map(|&v| usize::from(v > 0.0)).collect())
        } else {
            Ok(argmax_rows(s.view()))
        }
    }
}

/// Primal $\frac12\Vert w\Vert^2 + C\sum_i \xi_i(w)$ and dual $e^\top\alpha - \frac12\Vert w(\alpha)\Vert^2 - \frac12\sum_i D_{ii}\alpha_i^2$
/// objectives of one binary SVM on augmented data (weak duality: primal ≥ dual, equal at the optimum).
pub fn svm_primal_dual(
    x_aug: ArrayView2<'_, f64>,
    y: &[f64],
    model: &BinarySvm,
    p: &SvmParams,
) -> (f64, f64) {
    let (_, dii) = p.upper_and_diag();
    let margins = x_aug.dot(&model.w);
    let xi: f64 = margins
        .iter()
        .zip(y)
        .map(|(m, yi)| {
            let h = (1.0 - yi * m).max(0.0);
            match p.loss {
                SvmLoss::L1 => h,
                SvmLoss::L2 => h * h,
            }
        })
        .sum();
    let ww = model.w.dot(&model.w);
    let primal = 0.5 * ww + p.c * xi;
    let dual = model.alpha.sum() - 0.5 * ww - 0.5 * dii * model.alpha.dot(&model.alpha);
    (primal, dual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::accuracy;
    use crate::testutil::randn;

    /// A separable Gaussian mixture: class c centred at 3·e_c in 6-d, σ = 0.5 (pairwise centre distance
    /// 4.2 = 8.5σ), so the Bayes error is ≈ 0.
    fn mixture(n: usize, classes: usize, seed: u64) -> (Array2<f64>, Vec<usize>) {
        let mut z = randn(n, 6, seed).mapv(|v| 0.5 * v);
        let labels: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % classes).collect();
        for (i, &c) in labels.iter().enumerate() {
            z[[i, c]] += 3.0;
        }
        (z, labels)
    }

    fn finite_diff_check(z: &Array2<f64>, labels: &[usize], n_out: usize, p: &LogisticParams) {
        let dim = z.ncols() * n_out + n_out;
        let theta = Array1::from_shape_fn(dim, |i| 0.1 * ((i * 37 % 11) as f64 - 5.0));
        let (_, g) = logistic_fg(&z.view(), labels, n_out, p, &theta);
        let h = 1e-6;
        for j in 0..dim {
            let mut tp = theta.clone();
            tp[j] += h;
            let mut tm = theta.clone();
            tm[j] -= h;
            let fd = (logistic_fg(&z.view(), labels, n_out, p, &tp).0
                - logistic_fg(&z.view(), labels, n_out, p, &tm).0)
                / (2.0 * h);
            // central differences: error O(h²·f''') + O(ε/h) ≈ 1e-9
            assert!(
                (fd - g[j]).abs() < 1e-7,
                "coordinate {j}: fd {fd} vs analytic {}",
                g[j]
            );
        }
    }

    #[test]
    fn logistic_binary_and_softmax_reach_accuracy_and_optimality() {
        for classes in [2usize, 3] {
            let (z, labels) = mixture(300, classes, 1);
            let (zt, lt) = mixture(300, classes, 2);
            let p = LogisticParams::new(1e-3);
            finite_diff_check(&z, &labels, if classes == 2 { 1 } else { classes }, &p);
            let lr = LogisticRegression::fit(z.view(), &labels, classes, &p).unwrap();
            let acc = accuracy(&lr.predict(zt.view()).unwrap(), &lt).unwrap();
            eprintln!(
                "logistic, {classes} classes: test accuracy {acc}, L-BFGS {:?}",
                lr.convergence()
            );
            assert!(acc >= 0.95, "{classes} classes: test accuracy {acc}");
            // first-order optimality of the strongly convex objective: ∇f = 0
            let (_, gn) = lr.objective_and_grad_norm(z.view(), &labels, &p).unwrap();
            assert!(gn <= 1e-8, "gradient norm {gn:e}");
            // λ-stationarity identity: λ W = -(1/n) Zᵀ R, i.e. perturbing W in any direction raises f
            let (f0, _) = lr.objective_and_grad_norm(z.view(), &labels, &p).unwrap();
            let mut worse = lr.clone();
            worse.weights[[0, 0]] += 1e-3;
            let (f1, _) = worse
                .objective_and_grad_norm(z.view(), &labels, &p)
                .unwrap();
            assert!(f1 > f0);
        }
    }

    #[test]
    fn sgd_logistic_approaches_the_lbfgs_optimum() {
        let (z, labels) = mixture(600, 3, 5);
        let (zt, lt) = mixture(300, 3, 6);
        let lam = 1e-2;
        let exact =
            LogisticRegression::fit(z.view(), &labels, 3, &LogisticParams::new(lam)).unwrap();
        let mut sp = SgdParams::new(lam, 0.5, 7);
        sp.batch_size = 32;
        sp.epochs = 30;
        let sgd = LogisticRegression::fit_sgd(z.view(), &labels, 3, &sp).unwrap();
        let p = LogisticParams::new(lam);
        let (f_star, _) = exact
            .objective_and_grad_norm(z.view(), &labels, &p)
            .unwrap();
        let (f_sgd, _) = sgd.objective_and_grad_norm(z.view(), &labels, &p).unwrap();
        let acc = accuracy(&sgd.predict(zt.view()).unwrap(), &lt).unwrap();
        eprintln!("sgd: f = {f_sgd:.6} vs optimum {f_star:.6}, test accuracy {acc}");
        // f* is the minimum, so f_sgd ≥ f* - rounding; SGD with decaying steps gets within 0.5% (measured 0.03%)
        assert!(f_sgd >= f_star - 1e-10);
        assert!(
            f_sgd - f_star <= 0.005 * f_star,
            "SGD objective {f_sgd} vs optimum {f_star}"
        );
        assert!(acc >= 0.95);
        assert!(
            LogisticRegression::fit_sgd(z.view(), &labels, 3, &SgdParams::new(lam, 0.0, 1))
                .is_err()
        );
    }

    #[test]
    fn svm_reaches_accuracy_and_kkt_conditions() {
        for classes in [2usize, 3] {
            let (z, labels) = mixture(300, classes, 3);
            let (zt, lt) = mixture(300, classes, 4);
            for (loss, shrinking) in [
                (SvmLoss::L1, false),
                (SvmLoss::L1, true),
                (SvmLoss::L2, false),
                (SvmLoss::L2, true),
            ] {
                let mut p = SvmParams::new(1.0, 5);
                p.loss = loss;
                p.shrinking = shrinking;
                // the stopping rule sees projected gradients during the last sweep, while w still moves;
                // stop at 1e-8 so that the post-hoc KKT check below can use 1e-6
                p.tol = 1e-8;
                let svm = LinearSvm::fit(z.view(), &labels, classes, &p).unwrap();
                let acc = accuracy(&svm.predict(zt.view()).unwrap(), &lt).unwrap();
                assert!(
                    acc >= 0.95,
                    "{classes} classes {loss:?}: test accuracy {acc}"
                );
                let x = augment(&z.view(), p.bias);
                let positives: Vec<usize> = if classes == 2 {
                    vec![1]
                } else {
                    (0..classes).collect()
                };
                for (m, &c) in svm.models().iter().zip(&positives) {
                    let y: Vec<f64> = labels
                        .iter()
                        .map(|&l| if l == c { 1.0 } else { -1.0 })
                        .collect();
                    assert!(m.pg_spread <= 1e-8, "not converged: spread {}", m.pg_spread);
                    // KKT of the box-constrained dual: projected gradient vanishes at every coordinate
                    let (upper, dii) = p.upper_and_diag();
                    let margins = x.dot(&m.w);
                    for i in 0..y.len() {
                        let g = y[i] * margins[i] - 1.0 + dii * m.alpha[i];
                        let pg = if m.alpha[i] <= 0.0 {
                            g.min(0.0)
                        } else if m.alpha[i] >= upper {
                            g.max(0.0)
                        } else {
                            g
                        };
                        assert!(pg.abs() <= 1e-6, "KKT violated at {i}: {pg}");
                        assert!(m.alpha[i] >= 0.0 && m.alpha[i] <= upper);
                    }
                    // w = Σ α_i y_i x_i and a vanishing duality gap
                    let w2 = x.t().dot(&(&m.alpha * &Array1::from(y.clone())));
                    assert!((&w2 - &m.w).iter().all(|d| d.abs() < 1e-9));
                    let (pr, du) = svm_primal_dual(x.view(), &y, m, &p);
                    eprintln!("svm {classes} classes {loss:?} shrinking {shrinking} class {c}: accuracy {acc}, primal {pr:.6} dual {du:.6}, passes {}", m.iterations);
                    assert!(
                        pr >= du - 1e-9 && (pr - du) <= 1e-4 * pr.abs().max(1.0),
                        "gap {} (primal {pr})",
                        pr - du
                    );
                }
            }
        }
    }

    #[test]
    fn svm_with_and_without_shrinking_reach_the_same_weights() {
        // overlapping classes (labels from a noisy linear rule), so that many α sit at a bound
        let z = randn(400, 12, 41);
        let noise = randn(400, 1, 42);
        let labels: Vec<usize> = (0..400)
            .map(|i| usize::from(z[[i, 0]] + 0.5 * z[[i, 1]] + noise[[i, 0]] > 0.0))
            .collect();
        let x = augment(&z.view(), 1.0);
        let y: Vec<f64> = labels
            .iter()
            .map(|&l| if l == 1 { 1.0 } else { -1.0 })
            .collect();
        for loss in [SvmLoss::L1, SvmLoss::L2] {
            let fit = |shrinking: bool| {
                let mut p = SvmParams::new(1.0, 7);
                p.loss = loss;
                // the hinge (L1) dual without shrinking needs thousands of passes to reach 1e-6 here
                p.tol = 1e-6;
                p.max_iter = 100_000;
                p.shrinking = shrinking;
                let m = LinearSvm::fit(z.view(), &labels, 2, &p).unwrap().models[0].clone();
                assert!(
                    m.pg_spread <= 1e-6,
                    "{loss:?} shrinking {shrinking}: spread {}",
                    m.pg_spread
                );
                let (pr, du) = svm_primal_dual(x.view(), &y, &m, &p);
                (m, pr - du)
            };
            let ((a, gap_a), (b, gap_b)) = (fit(false), fit(true));
            // the primal ½‖w‖² + C Σ ξ(w) is 1-strongly convex, so ½‖w − w*‖² ≤ P(w) − P(w*) ≤ gap:
            // ‖w_a − w_b‖ ≤ √(2 gap_a) + √(2 gap_b)
            let dist = (&a.w - &b.w).mapv(|v| v * v).sum().sqrt();
            let bound = (2.0 * gap_a.max(0.0)).sqrt() + (2.0 * gap_b.max(0.0)).sqrt();
            eprintln!(
                "{loss:?}: passes {} without, {} with shrinking; ‖Δw‖ = {dist:.2e} ≤ {bound:.2e}",
                a.iterations, b.iterations
            );
            assert!(dist <= bound + 1e-12, "{loss:?}: ‖Δw‖ = {dist} > {bound}");
        }
    }

    #[test]
    fn svm_path_matches_cold_fits_within_the_duality_gaps() {
        // three overlapping classes: one-vs-rest problems with many α at a bound
        let z = randn(300, 8, 51);
        let noise = randn(300, 1, 52);
        let labels: Vec<usize> = (0..300)
            .map(|i| {
                let t = z[[i, 0]] - 0.5 * z[[i, 1]] + noise[[i, 0]];
                usize::from(t > -0.5) + usize::from(t > 0.5)
            })
            .collect();
        let x = augment(&z.view(), 1.0);
        let cs = [0.01, 0.1, 1.0, 10.0];
        for loss in [SvmLoss::L1, SvmLoss::L2] {
            let mut p = SvmParams::new(1.0, 9);
            p.loss = loss;
            p.tol = 1e-5;
            p.max_iter = 200_000;
            let path = LinearSvm::fit_path(z.view(), &labels, 3, &p, &cs).unwrap();
            assert_eq!(path.len(), cs.len());
            let (mut warm, mut cold) = (0, 0);
            for (k, &c) in cs.iter().enumerate() {
                let pc = SvmParams { c, ..p };
                let fit = LinearSvm::fit(z.view(), &labels, 3, &pc).unwrap();
                for class in 0..3 {
                    let y: Vec<f64> = labels
                        .iter()
                        .map(|&l| if l == class { 1.0 } else { -1.0 })
                        .collect();
                    let (a, b) = (&path[k].models[class], &fit.models[class]);
                    assert!(a.pg_spread <= p.tol && b.pg_spread <= p.tol, "C = {c}");
                    // feasible duals: 0 ≤ α ≤ U
                    let upper = pc.upper_and_diag().0;
                    assert!(a.alpha.iter().all(|&v| (0.0..=upper).contains(&v)));
                    // both within their duality gaps of the one optimum (1-strongly convex primal)
                    let gap = |m: &BinarySvm| {
                        let (pr, du) = svm_primal_dual(x.view(), &y, m, &pc);
                        (pr - du).max(0.0)
                    };
                    let dist = (&a.w - &b.w).mapv(|v| v * v).sum().sqrt();
                    let bound = (2.0 * gap(a)).sqrt() + (2.0 * gap(b)).sqrt();
                    assert!(
                        dist <= bound + 1e-12,
                        "{loss:?} C = {c} class {class}: ‖Δw‖ = {dist} > {bound}"
                    );
                    // the warm-started weights are still the duals' combination w = Σ α_i y_i x_i
                    let mut w = Array1::<f64>::zeros(x.ncols());
                    for ((&ai, &yi), xi) in a.alpha.iter().zip(&y).zip(x.rows()) {
                        w.scaled_add(ai * yi, &xi);
                    }
                    let scale: f64 = a.alpha.iter().map(|v| v.abs()).sum::<f64>() + 1.0;
                    assert!(
                        (&w - &a.w).iter().all(|d| d.abs() <= 1e-10 * scale),
                        "{loss:?} C = {c} class {class}: w drifted from Σ α y x"
                    );
                    warm += a.iterations;
                    cold += b.iterations;
                }
            }
            eprintln!("{loss:?}: {warm} passes along the path, {cold} cold");
        }
        // a cost out of range is refused like fit's
        let p = SvmParams::new(1.0, 9);
        assert!(LinearSvm::fit_path(z.view(), &labels, 3, &p, &[1.0, 0.0]).is_err());
    }

    #[test]
    fn svm_newton_reaches_the_dual_cd_optimum_along_a_path() {
        // three overlapping classes, n > p (w form) and n < p (β form with the shared Gram)
        for (n, d) in [(300, 8), (60, 100)] {
            let z = randn(n, d, 61);
            let noise = randn(n, 1, 62);
            let labels: Vec<usize> = (0..n)
                .map(|i| {
                    let t = z[[i, 0]] - 0.5 * z[[i, 1]] + noise[[i, 0]];
                    usize::from(t > -0.5) + usize::from(t > 0.5)
                })
                .collect();
            let x = augment(&z.view(), 1.0);
            let cs = [0.01, 1.0, 100.0];
            let mut cd = SvmParams::new(1.0, 3);
            cd.tol = 1e-9;
            cd.max_iter = 1_000_000;
            let newton = SvmParams {
                solver: SvmSolver::Newton,
                ..SvmParams::new(1.0, 3)
            };
            let a = LinearSvm::fit_path(z.view(), &labels, 3, &newton, &cs).unwrap();
            let b = LinearSvm::fit_path(z.view(), &labels, 3, &cd, &cs).unwrap();
            // the hybrid at a tolerance coordinate descent does not reach in its passes ends at Newton's optimum
            let hybrid = SvmParams {
                solver: SvmSolver::Hybrid,
                tol: 1e-9,
                ..newton
            };
            let h = LinearSvm::fit_path(z.view(), &labels, 3, &hybrid, &cs).unwrap();
            for (hk, ak) in h.iter().zip(&a) {
                for (mh, ma) in hk.models.iter().zip(&ak.models) {
                    let d = (&mh.w - &ma.w)
                        .mapv(f64::abs)
                        .fold(0.0f64, |m, &v| m.max(v));
                    let s = ma.w.mapv(f64::abs).fold(1.0f64, |m, &v| m.max(v));
                    assert!(mh.pg_spread <= 1e-9, "hybrid spread {}", mh.pg_spread);
                    assert!(d <= 1e-8 * s, "hybrid vs Newton: |Δw| = {d}");
                }
            }
            for (k, &c) in cs.iter().enumerate() {
                let pc = SvmParams { c, ..cd };
                for class in 0..3 {
                    let y: Vec<f64> = labels
                        .iter()
                        .map(|&l| if l == class { 1.0 } else { -1.0 })
                        .collect();
                    let (mn, mc) = (&a[k].models[class], &b[k].models[class]);
                    let gap = |m: &BinarySvm| {
                        let (pr, du) = svm_primal_dual(x.view(), &y, m, &pc);
                        assert!(pr >= du - 1e-9 * pr.abs().max(1.0), "weak duality");
                        // plus the rounding of the two objectives' n-term sums
                        (pr - du).max(0.0) + n as f64 * f64::EPSILON * (pr.abs() + du.abs())
                    };
                    let (gn, gc) = (gap(mn), gap(mc));
                    // the 1-strongly convex primal: each w within √(2 gap) of w*
                    let dist = (&mn.w - &mc.w).mapv(|v| v * v).sum().sqrt();
                    let bound = (2.0 * gn).sqrt() + (2.0 * gc).sqrt();
                    eprintln!(
                        "n = {n}, C = {c}, class {class}: Newton {} steps, gap {gn:.1e}, spread {:.1e}; \
                         CD {} passes, gap {gc:.1e}; ‖Δw‖ = {dist:.1e} ≤ {bound:.1e}",
                        mn.iterations, mn.pg_spread, mc.iterations
                    );
                    assert!(
                        dist <= bound + 1e-12,
                        "C = {c} class {class}: {dist} > {bound}"
                    );
                    // Newton's duality gap is at rounding level, far below the tolerance-bound CD's
                    let primal = svm_primal_dual(x.view(), &y, mn, &pc).0;
                    assert!(gn <= 1e-8 * primal.max(1.0), "C = {c}: gap {gn}");
                    assert!(mn.alpha.iter().all(|&v| v >= 0.0));
                }
            }
        }
        // the hinge (L1) has no Newton solver here
        let mut p = SvmParams::new(1.0, 0);
        p.solver = SvmSolver::Newton;
        p.loss = SvmLoss::L1;
        let err = p.validate().unwrap_err().to_string();
        assert!(err.contains("L2"), "{err}");
    }

    #[test]
    fn invalid_classifier_inputs() {
        let (z, labels) = mixture(20, 2, 1);
        assert!(LogisticRegression::fit(z.view(), &labels, 1, &LogisticParams::new(1.0)).is_err());
        assert!(LogisticRegression::fit(z.view(), &labels, 2, &LogisticParams::new(-1.0)).is_err());
        assert!(LinearSvm::fit(z.view(), &labels, 2, &SvmParams::new(0.0, 1)).is_err());
        assert!(LinearSvm::fit(z.view(), &labels[..5], 2, &SvmParams::new(1.0, 1)).is_err());
        assert!(LinearSvm::fit(z.view(), &[5; 20], 2, &SvmParams::new(1.0, 1)).is_err());
    }
}
