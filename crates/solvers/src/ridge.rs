//! Ridge regression and classification on features, λ selection, and exact kernel ridge regression.
//!
//! ## The λ convention
//! The papers disagree on how the ridge parameter enters, so every entry point takes a [`LambdaScale`]:
//!
//! | paper / code | equation | here |
//! |---|---|---|
//! | NTK random features (Zandieh et al.), eq. 19: $\hat y = K(x, X)(K + \lambda n I)^{-1} y$ | $\lambda n$ | [`LambdaScale::TimesN`] |
//! | RF survey (Liu et al.), §2.1: $\beta_\lambda = (Z^\top Z + n\lambda I)^{-1} Z^\top y$ | $n\lambda$ | [`LambdaScale::TimesN`] |
//! | NTK sketching code and Gegenbauer features (§9): $w = (Z^\top Z + \lambda I)^{-1} Z^\top y$ | $\lambda$ | [`LambdaScale::Plain`] |
//!
//! With [`LambdaScale::TimesN`], $n$ is the number of rows the model is *fitted* on (the fold's training
//! size during cross-validation, the full training size at refit). The NTK-sketching reference code's
//! double scaling at refit ($\lambda_\text{final} = e^i n_{tr}^2$, `reference-implementations.md`) is not
//! reproduced: pass the grid value and the scale, and the scale is applied once.

//!
//! ## Example
//! ```
//! use ndarray::Array2;
//! use rfx_solvers::ridge::{fit_ridge_cv, log10_grid, CvScore, LambdaScale, LambdaSearch, RidgeForm, Validation};
//!
//! // features Z (n × m) and a target that is a noiseless linear function of them
//! let z = Array2::from_shape_fn((200, 5), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
//! let y = z.dot(&ndarray::arr2(&[[1.0], [-2.0], [0.5], [0.0], [3.0]]));
//! let search = LambdaSearch {
//!     grid: log10_grid(-9.0, 0.0, 10)?, // λ·n_tr with λ = 10^k, k = -9..0 (Gegenbauer §9)
//!     scale: LambdaScale::TimesN,
//!     validation: Validation::KFold { folds: 2, seed: 0 },
//!     score: CvScore::Mse,
//! };
//! let (model, cv) = fit_ridge_cv(z.view(), y.view(), &search, RidgeForm::Auto)?;
//! assert_eq!(cv.best_index, 0); // noiseless: the smallest penalty wins
//! assert!((model.weights()[[1, 0]] + 2.0).abs() < 1e-6);
//! # Ok::<(), rfx_core::RfxError>(())
//! ```

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use rfx_core::{rng_stream, Kernel, Result, RfxError};
use rfx_linalg::{
    add_diag, axpy, check_finite, check_memory, dot, eigh, f64_bytes, gram_cols,
    gram_cols_f32_upper_rhs, gram_rows, matmul_abt_par, row_as_slice, solve_spd_refined,
    to_f32_finite, BandReduction, Cholesky, CholeskyF32, NormalEquations, Precision,
    DEFAULT_MEMORY_CAP, DEFAULT_ROW_BLOCK,
};

/// How the user-facing ridge parameter $\lambda$ becomes the penalty added to the diagonal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LambdaScale {
    /// Penalty $\lambda$: $(Z^\top Z + \lambda I)$, $(K + \lambda I)$.
    #[default]
    Plain,
    /// Penalty $\lambda n$ with $n$ the number of fitting rows: $(Z^\top Z + n\lambda I)$, $(K + \lambda n I)$.
    TimesN,
}

impl LambdaScale {
    /// The diagonal penalty for $\lambda$ and $n$ fitting rows.
    pub fn effective(self, lambda: f64, n: usize) -> f64 {
        match self {
            LambdaScale::Plain => lambda,
            LambdaScale::TimesN => lambda * n as f64,
        }
    }
}

/// Which linear system a ridge fit solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RidgeForm {
    /// Primal when $m \le n$, dual otherwise.
    #[default]
    Auto,
    /// $W = (Z^\top Z + \lambda I_m)^{-1} Z^\top Y$: $O(nm^2 + m^3)$.
    Primal,
    /// $W = Z^\top (Z Z^\top + \lambda I_n)^{-1} Y$: $O(n^2 m + n^3)$.
    Dual,
}

/// Parameters of a ridge fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RidgeParams {
    /// The ridge parameter $\lambda \ge 0$ (before [`LambdaScale`]).
    pub lambda: f64,
    /// How $\lambda$ enters the system.
    pub scale: LambdaScale,
    /// Primal, dual or automatic.
    pub form: RidgeForm,
    /// Memory cap in bytes for the $m \times m$ (primal) or $n \times n$ (dual) system; above it the fit
    /// returns [`RfxError::OutOfMemory`] before allocating.
    pub memory_cap: u64,
    /// Arithmetic of the Gram and the factorisation ([`Precision::F64`] by default).
    pub precision: Precision,
}

impl RidgeParams {
    /// $\lambda$ with [`LambdaScale::Plain`] and [`RidgeForm::Auto`].
    pub fn new(lambda: f64) -> Self {
        RidgeParams {
            lambda,
            scale: LambdaScale::Plain,
            form: RidgeForm::Auto,
            memory_cap: DEFAULT_MEMORY_CAP,
            precision: Precision::F64,
        }
    }

    /// Sets the precision ([`Precision::MixedF32`]: `f32` Gram and factor, refined to `f64` accuracy).
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// Sets the memory cap in bytes.
    pub fn memory_cap(mut self, bytes: u64) -> Self {
        self.memory_cap = bytes;
        self
    }

    /// Sets the λ convention.
    pub fn scale(mut self, scale: LambdaScale) -> Self {
        self.scale = scale;
        self
    }

    /// Sets the form.
    pub fn form(mut self, form: RidgeForm) -> Self {
        self.form = form;
        self
    }

    /// Checks $\lambda$ is finite and $\ge 0$.
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(RfxError::invalid(
                "lambda",
                self.lambda,
                "a finite value >= 0",
            ));
        }
        Ok(())
    }
}

fn check_xy(z: &ArrayView2<'_, f64>, y: &ArrayView2<'_, f64>) -> Result<()> {
    if z.nrows() != y.nrows() {
        return Err(RfxError::DimensionMismatch(format!(
            "features have {} rows, targets {}",
            z.nrows(),
            y.nrows()
        )));
    }
    if z.nrows() == 0 || z.ncols() == 0 || y.ncols() == 0 {
        return Err(RfxError::invalid(
            "shape",
            format!("Z {:?}, Y {:?}", z.dim(), y.dim()),
            "at least one row, feature and output",
        ));
    }
    if !z.iter().chain(y.iter()).all(|v| v.is_finite()) {
        return Err(RfxError::Numerical(
            "ridge: non-finite features or targets".into(),
        ));
    }
    Ok(())
}

/// A fitted (multi-output) ridge regression $\hat Y = Z W$, $W \in \mathbb{R}^{m \times k}$.
///
/// Minimizes $\Vert Z W - Y\Vert_F^2 + \lambda_\text{eff} \Vert W\Vert_F^2$, whose normal equations are
/// $(Z^\top Z + \lambda_\text{eff} I) W = Z^\top Y$; the dual form solves the same problem through
/// $W = Z^\top (Z Z^\top + \lambda_\text{eff} I)^{-1} Y$ (push-through identity).
#[derive(Clone, Debug)]
pub struct Ridge {
    weights: Array2<f64>,
    lambda_eff: f64,
    form: RidgeForm,
}

impl Ridge {
    /// Fits on features $Z$ ($n \times m$) and targets $Y$ ($n \times k$), by Cholesky.
    pub fn fit(
        z: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
        params: &RidgeParams,
    ) -> Result<Self> {
        params.validate()?;
        check_xy(&z, &y)?;
        let (n, m) = z.dim();
        let lam = params.scale.effective(params.lambda, n);
        let form = match params.form {
            RidgeForm::Auto if m <= n => RidgeForm::Primal,
            RidgeForm::Auto => RidgeForm::Dual,
            f => f,
        };
        let k = y.ncols() as u128;
        let (what, entries) = if form == RidgeForm::Primal {
            (
                "ridge primal system",
                (m as u128) * (m as u128) + 2 * (m as u128) * k,
            )
        } else {
            (
                "ridge dual system",
                (n as u128) * (n as u128) + 2 * (n as u128) * k,
            )
        };
        check_memory(what, f64_bytes(entries), params.memory_cap)?;
        if params.precision == Precision::MixedF32 {
            if let Some(weights) = ridge_mixed(z, y, lam, form)? {
                return Ok(Ridge {
                    weights,
                    lambda_eff: lam,
                    form,
                });
            }
        }
        let weights = if form == RidgeForm::Primal {
            let mut ne = NormalEquations::new(m, y.ncols())?;
            ne.push_all(z, y)?;
            let (g, b) = ne.finish();
            return Self::from_normal(g, b, lam);
        } else {
            let mut k = gram_rows(z)?;
            add_diag(&mut k, lam);
            let alpha = Cholesky::factor(k)?.solve(y)?;
            z.t().dot(&alpha)
        };
        Ok(Ridge {
            weights,
            lambda_eff: lam,
            form,
        })
    }

    /// Fits a one-output model from a target vector.
    pub fn fit_vec(
        z: ArrayView2<'_, f64>,
        y: ArrayView1<'_, f64>,
        params: &RidgeParams,
    ) -> Result<Self> {
        Self::fit(z, y.insert_axis(Axis(1)), params)
    }

    /// Primal fit from streamed normal equations ([`NormalEquations`]), for features generated in row
    /// blocks; [`LambdaScale::TimesN`] uses the accumulated row count.
    pub fn fit_normal_equations(ne: NormalEquations, params: &RidgeParams) -> Result<Self> {
        params.validate()?;
        let n = ne.n();
        if n == 0 {
            return Err(RfxError::invalid("n", 0, "at least one accumulated row"));
        }
        let (g, b) = ne.finish();
        Self::from_normal(g, b, params.scale.effective(params.lambda, n))
    }

    /// The primal model $W = (G + \lambda I)^{-1} B$ from normal equations $G = Z^\top Z$, $B = Z^\top Y$ and
    /// the effective λ, by Cholesky.
    fn from_normal(mut g: Array2<f64>, b: Array2<f64>, lam: f64) -> Result<Self> {
        add_diag(&mut g, lam);
        let weights = Cholesky::factor(g)?.solve(b.view())?;
        Ok(Ridge {
            weights,
            lambda_eff: lam,
            form: RidgeForm::Primal,
        })
    }

    /// The weights $W$ ($m \times k$).
    pub fn weights(&self) -> &Array2<f64> {
        &self.weights
    }

    /// The penalty actually added to the diagonal.
    pub fn lambda_eff(&self) -> f64 {
        self.lambda_eff
    }

    /// The form that was solved (never [`RidgeForm::Auto`]).
    pub fn form(&self) -> RidgeForm {
        self.form
    }

    /// Predictions $Z W$ ($n \times k$).
    pub fn predict(&self, z: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if z.ncols() != self.weights.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "ridge fitted on m = {} features, applied to {}",
                self.weights.nrows(),
                z.ncols()
            )));
        }
        Ok(z.dot(&self.weights))
    }
}

/// The mixed-precision ridge solve ([`Precision::MixedF32`]): `None` when the `f32` factor fails or the
/// refinement does not converge (the caller then solves in `f64`).
fn ridge_mixed(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    lam: f64,
    form: RidgeForm,
) -> Result<Option<Array2<f64>>> {
    if form == RidgeForm::Primal {
        // the f32 Gram, Z^T y and the finiteness check of Z in one pass over Z
        let (mut g, b) = gram_cols_f32_upper_rhs(z, y)?;
        for i in 0..g.nrows() {
            g[[i, i]] += lam as f32;
        }
        let Ok(f) = CholeskyF32::factor_upper(g) else {
            return Ok(None);
        };
        solve_spd_refined(|v| Ok(normal_apply(z, v, lam)), &f, b.view())
    } else {
        check_finite(&z, "features")?;
        check_finite(&y, "targets")?;
        let mut k = gram_rows(z)?;
        add_diag(&mut k, lam);
        let Ok(f) = CholeskyF32::factor_f64(k.view()) else {
            return Ok(None);
        };
        Ok(solve_spd_refined(|v| Ok(k.dot(&v)), &f, y)?.map(|alpha| z.t().dot(&alpha)))
    }
}

/// Rows of $Z$ per task of [`normal_apply`]: fixed, so that the order of the sums, and so the bits, do not
/// depend on the thread count.
const APPLY_TASK: usize = 2048;

/// Tasks of [`normal_apply`] run at once (and partial sums held): its memory beyond $V$ is
/// `APPLY_WAVE` times $mk$ numbers.
const APPLY_WAVE: usize = 8;

/// Rows per block of [`normal_apply`]'s BLAS form: a block ($\le 256 \times m$ doubles) is still in cache for
/// its second product.
const APPLY_BLOCK: usize = 256;

/// Right-hand sides up to which [`normal_apply`] works row by row ([`rfx_linalg::dot`] and
/// [`rfx_linalg::axpy`] on each row while it is in L1) instead of two BLAS products per block.
const APPLY_ROWWISE_MAX: usize = 2;

/// $(Z^\top Z + \lambda I)V$ without forming $Z^\top Z$: $\lambda V + \sum_T Z_T^\top (Z_T V)$ over fixed tasks $T$
/// of [`APPLY_TASK`] rows, run in parallel and added in order, so that $Z$ is read from memory once (the
/// refinement steps of [`Precision::MixedF32`] are bound by reading $Z$) and on all cores. For one or two
/// right-hand sides each row contributes $z_i (z_i^\top v)$ straight from L1 (a matrix–vector product per
/// block would read it twice); for more, each block of [`APPLY_BLOCK`] rows makes two BLAS products on one
/// thread, on a contiguous copy of the block when $Z$'s rows are strided. The same bits for any thread count and
/// either layout of $Z$.
fn normal_apply(z: ArrayView2<'_, f64>, v: ArrayView2<'_, f64>, lam: f64) -> Array2<f64> {
    let (n, m) = z.dim();
    let k = v.ncols();
    // V^T (k x m): contiguous rows for dot and axpy in the row-by-row form
    let vt = v.t().as_standard_layout().into_owned();
    let rowwise = k <= APPLY_ROWWISE_MAX;
    let _pin = (!rowwise).then(rfx_linalg::SingleBlasThread::new);
    let task = |start: usize| -> Array2<f64> {
        let end = (start + APPLY_TASK).min(n);
        if rowwise {
            let mut acc = Array2::<f64>::zeros((k, m));
            let mut buf = Vec::new();
            for i in start..end {
                let zi = row_as_slice(z.row(i), &mut buf);
                for (vc, mut out) in vt.rows().into_iter().zip(acc.rows_mut()) {
                    let u = dot(zi, vc.as_slice().expect("standard layout"));
                    axpy(u, zi, out.as_slice_mut().expect("standard layout"));
                }
            }
            acc.reversed_axes()
        } else {
            let mut acc = Array2::<f64>::zeros((m, k));
            for b in (start..end).step_by(APPLY_BLOCK) {
                // rows of a strided Z are copied into a contiguous block first, so that both layouts hand
                // the BLAS the same operands and get the same bits by construction (a transposed view would
                // let OpenBLAS pick other kernels, whose sums round differently)
                let rows = z.slice(s![b..(b + APPLY_BLOCK).min(end), ..]);
                let zb = rows.as_standard_layout();
                let u = zb.dot(&v);
                general_mat_mul(1.0, &zb.t(), &u, 1.0, &mut acc);
            }
            acc
        }
    };
    // tasks in waves of APPLY_WAVE, each wave's sums added in task order: at most APPLY_WAVE partial sums
    // (m x k each) alive at once, whatever n
    let starts: Vec<usize> = (0..n).step_by(APPLY_TASK).collect();
    let mut total = &v * lam;
    for wave in starts.chunks(APPLY_WAVE) {
        let partials: Vec<Array2<f64>> = wave.par_iter().map(|&s| task(s)).collect();
        for p in &partials {
            total += p;
        }
    }
    total
}

/// One-hot targets $T_{ic} = [c = y_i] - \text{offset}$; `center = true` subtracts $1/C$ so that every row
/// has zero mean (the NTK-sketching protocol, "one-hot − 0.1" for 10 classes).
pub fn one_hot(labels: &[usize], n_classes: usize, center: bool) -> Result<Array2<f64>> {
    if n_classes < 2 {
        return Err(RfxError::invalid("n_classes", n_classes, "at least 2"));
    }
    if let Some(&bad) = labels.iter().find(|&&c| c >= n_classes) {
        return Err(RfxError::invalid("label", bad, format!("0..{n_classes}")));
    }
    let off = if center { 1.0 / n_classes as f64 } else { 0.0 };
    let mut t = Array2::from_elem((labels.len(), n_classes), -off);
    for (i, &c) in labels.iter().enumerate() {
        t[[i, c]] += 1.0;
    }
    Ok(t)
}

/// Row-wise argmax (first maximum on ties).
pub fn argmax_rows(p: ArrayView2<'_, f64>) -> Vec<usize> {
    p.rows()
        .into_iter()
        .map(|r| {
            let mut best = 0;
            for (j, &v) in r.iter().enumerate() {
                if v > r[best] {
                    best = j;
                }
            }
            best
        })
        .collect()
}

/// Ridge classifier: ridge regression on one-hot targets ([`one_hot`]), prediction by argmax.
#[derive(Clone, Debug)]
pub struct RidgeClassifier {
    ridge: Ridge,
}

impl RidgeClassifier {
    /// Fits on labels in `0..n_classes`.
    pub fn fit(
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        n_classes: usize,
        center: bool,
        params: &RidgeParams,
    ) -> Result<Self> {
        let t = one_hot(labels, n_classes, center)?;
        Ok(RidgeClassifier {
            ridge: Ridge::fit(z, t.view(), params)?,
        })
    }

    /// The underlying multi-output regression.
    pub fn ridge(&self) -> &Ridge {
        &self.ridge
    }

    /// Predicted labels.
    pub fn predict(&self, z: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        Ok(argmax_rows(self.ridge.predict(z)?.view()))
    }
}

/// How held-out error is measured during λ selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CvScore {
    /// Mean squared error over all entries of $\hat Y - Y$.
    #[default]
    Mse,
    /// Classification error $1 - \text{accuracy}$ of the row argmax against the argmax of the (one-hot)
    /// targets.
    ClassificationError,
}

/// Which held-out rows are used for λ selection.
#[derive(Clone, Debug, PartialEq)]
pub enum Validation {
    /// $k$-fold cross-validation on a seeded random permutation (2-fold = the Gegenbauer paper's protocol).
    KFold {
        /// Number of folds, $\ge 2$.
        folds: usize,
        /// Seed of the permutation stream.
        seed: u64,
    },
    /// A single random split; `fraction` of the rows are held out.
    Holdout {
        /// Held-out fraction in $(0, 1)$.
        fraction: f64,
        /// Seed of the permutation stream.
        seed: u64,
    },
    /// Explicit index sets (e.g. the NTK-sketching protocol: fit on 1,000 rows, validate on the next 10,000).
    Split {
        /// Fitting rows.
        train: Vec<usize>,
        /// Held-out rows.
        valid: Vec<usize>,
    },
}

/// A λ search: grid, convention, validation scheme and score.
#[derive(Clone, Debug, PartialEq)]
pub struct LambdaSearch {
    /// Candidate λ values (all $> 0$, before [`LambdaScale`]).
    pub grid: Vec<f64>,
    /// λ convention; with [`LambdaScale::TimesN`] each fold uses its own fitting size.
    pub scale: LambdaScale,
    /// Held-out scheme.
    pub validation: Validation,
    /// Held-out score.
    pub score: CvScore,
}

/// $\text{num}$ points $10^{e}$ evenly spaced in $e \in [\text{lo}, \text{hi}]$.
pub fn log10_grid(lo: f64, hi: f64, num: usize) -> Result<Vec<f64>> {
    if num == 0 || !lo.is_finite() || !hi.is_finite() || hi < lo {
        return Err(RfxError::invalid(
            "log10_grid",
            format!("lo = {lo}, hi = {hi}, num = {num}"),
            "finite lo <= hi and num >= 1",
        ));
    }
    if num == 1 {
        return Ok(vec![10f64.powf(lo)]);
    }
    Ok((0..num)
        .map(|i| 10f64.powf(lo + (hi - lo) * i as f64 / (num - 1) as f64))
        .collect())
}

/// Outcome of [`select_lambda`].
#[derive(Clone, Debug, PartialEq)]
pub struct CvResult {
    /// The grid searched.
    pub grid: Vec<f64>,
    /// Mean held-out score per grid value (averaged over folds).
    pub scores: Vec<f64>,
    /// Index of the minimum (first one on ties).
    pub best_index: usize,
    /// `grid[best_index]`.
    pub best_lambda: f64,
}

/// The (fitting rows, validation rows) index sets of a validation scheme for $n$ rows, as every λ search of
/// this module uses them: $k$ contiguous blocks of a seeded permutation, or its first `fraction` once, or the
/// given sets (checked against $n$). Callers that select other hyperparameters the same way use it too.
pub fn folds(n: usize, v: &Validation) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    match v {
        Validation::KFold { folds, seed } => {
            if *folds < 2 || *folds > n {
                return Err(RfxError::invalid("folds", folds, format!("2..={n}")));
            }
            let mut perm: Vec<usize> = (0..n).collect();
            perm.shuffle(&mut rng_stream(*seed, "ridge-cv-kfold"));
            Ok((0..*folds)
                .map(|f| {
                    let (lo, hi) = (f * n / folds, (f + 1) * n / folds);
                    let valid = perm[lo..hi].to_vec();
                    let train = perm[..lo].iter().chain(&perm[hi..]).copied().collect();
                    (train, valid)
                })
                .collect())
        }
        Validation::Holdout { fraction, seed } => {
            let nv = (fraction * n as f64).round() as usize;
            if !(*fraction > 0.0 && *fraction < 1.0) || nv == 0 || nv >= n {
                return Err(RfxError::invalid(
                    "fraction",
                    fraction,
                    "in (0, 1), leaving both sets non-empty",
                ));
            }
            let mut perm: Vec<usize> = (0..n).collect();
            perm.shuffle(&mut rng_stream(*seed, "ridge-cv-holdout"));
            Ok(vec![(perm[nv..].to_vec(), perm[..nv].to_vec())])
        }
        Validation::Split { train, valid } => {
            if train.is_empty() || valid.is_empty() {
                return Err(RfxError::invalid(
                    "split",
                    "empty set",
                    "non-empty train and valid",
                ));
            }
            if let Some(&bad) = train.iter().chain(valid).find(|&&i| i >= n) {
                return Err(RfxError::invalid("split index", bad, format!("0..{n}")));
            }
            Ok(vec![(train.clone(), valid.clone())])
        }
    }
}

fn score(pred: &Array2<f64>, y: &ArrayView2<'_, f64>, s: CvScore) -> f64 {
    match s {
        CvScore::Mse => {
            pred.iter()
                .zip(y.iter())
                .map(|(p, t)| (p - t) * (p - t))
                .sum::<f64>()
                / pred.len() as f64
        }
        CvScore::ClassificationError => {
            let a = argmax_rows(pred.view());
            let b = argmax_rows(y.view());
            a.iter().zip(&b).filter(|(x, y)| x != y).count() as f64 / a.len() as f64
        }
    }
}

/// Selects λ on a grid by held-out error, reusing **one band reduction per fold for all λ**.
///
/// Primal ($m \le n_{tr}$): $G = Z_{tr}^\top Z_{tr} = Q T Q^\top$, $T$ banded ([`BandReduction`], `dsytrd_sy2sb`), then for every λ
/// $\hat Y_{va} = Z_{va}\thinspace Q (T + \lambda I)^{-1} Q^\top (Z_{tr}^\top Y_{tr})$, which costs $O(m^2 k + n_{va} m k)$
/// per λ. Dual ($m > n_{tr}$): $Z_{tr} Z_{tr}^\top = Q T Q^\top$ and
/// $\hat Y_{va} = (Z_{va} Z_{tr}^\top)\thinspace Q (T + \lambda I)^{-1} Q^\top Y_{tr}$. This is the eigen-path of
/// `random-gegenbauer-features.md` §9 ($G = V\Lambda V^\top$, $(\Lambda + \lambda I)^{-1}$) without the
/// eigenvectors: the reduction is a third of `dsyevd`'s flops and no $Z_{va} V$ product is formed. Where
/// $T + \lambda I$ is not numerically positive definite (a Gram with rounding-level negative eigenvalues and
/// a λ below them) the fold falls back to the eigendecomposition, with eigenvalues clipped at 0.
/// Refit on all rows with [`Ridge::fit`] and `best_lambda` afterwards.
pub fn select_lambda(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
) -> Result<CvResult> {
    check_xy(&z, &y)?;
    check_grid(search)?;
    let splits = folds(z.nrows(), &search.validation)?;
    select_lambda_splits(z, y, search, &splits)
}

/// [`select_lambda`] on given (checked) inputs and splits; folds in parallel as [`fold_totals`] allows.
fn select_lambda_splits(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
    splits: &[(Vec<usize>, Vec<usize>)],
) -> Result<CvResult> {
    let (m, k, g) = (
        z.ncols() as u128,
        y.ncols() as u128,
        search.grid.len() as u128,
    );
    // a fold's buffers: its rows of Z and Y, the Gram, the band reduction and the λ path's solutions
    let per_fold = splits
        .iter()
        .map(|(t, v)| {
            let (f, h) = (t.len() as u128, v.len() as u128);
            let side = if m <= f { m } else { f };
            (f + h) * (m + k)
                + side * side
                + BandReduction::memory_f64s(side as usize)
                + (g + 2) * side * k
                + if m <= f { 0 } else { h * f }
        })
        .max()
        .unwrap_or(0);
    let totals = fold_totals(splits.len(), search.grid.len(), per_fold, |j| {
        let (train, valid) = &splits[j];
        let ztr = z.select(Axis(0), train);
        let ytr = y.select(Axis(0), train);
        let zva = z.select(Axis(0), valid);
        let yva = y.select(Axis(0), valid);
        let ntr = train.len();
        // predictions P (A + λI)⁻¹ B
        let lams = effective_grid(search, ntr);
        let mut scores = vec![0.0; search.grid.len()];
        if z.ncols() <= ntr {
            let path = FoldPath::new(gram_cols(ztr.view())?, ztr.t().dot(&ytr), &lams)?;
            path.add_scores(zva.view(), yva.view(), search.score, &mut scores);
        } else {
            let path = FoldPath::new(gram_rows(ztr.view())?, ytr, &lams)?;
            path.add_scores(
                matmul_abt_par(zva.view(), ztr.view())?.view(),
                yva.view(),
                search.score,
                &mut scores,
            );
        }
        Ok(scores)
    })?;
    Ok(cv_result(search, totals, splits.len()))
}

/// The held-out scores of every fold, summed per λ in fold order: `fold_scores(j)` is fold $j$'s score for
/// every λ. Folds run in parallel on the rayon pool, as many at once as there are threads and as
/// `per_fold_f64s` doubles of buffers per fold fit in [`DEFAULT_MEMORY_CAP`] (checked before they are taken:
/// else fewer, down to one at a time). Under one OpenBLAS thread (a run's guard,
/// [`rfx_linalg::SingleBlasThread`]) a fold's work is sequential BLAS/LAPACK or fixed-tile parallel, so its
/// scores do not depend on what runs beside it, and the sums are formed in fold order: the totals are those
/// of one fold after another, bit for bit, for any thread count. On 2 cores this
/// halves the time of a 2-fold search whose LAPACK reductions would otherwise use one core.
fn fold_totals<F>(
    n_folds: usize,
    grid_len: usize,
    per_fold_f64s: u128,
    fold_scores: F,
) -> Result<Vec<f64>>
where
    F: Fn(usize) -> Result<Vec<f64>> + Sync,
{
    let mut at_once = rayon::current_num_threads().clamp(1, n_folds.max(1));
    while at_once > 1 && f64_bytes(at_once as u128 * per_fold_f64s) > DEFAULT_MEMORY_CAP {
        at_once -= 1;
    }
    let mut totals = vec![0.0; grid_len];
    let folds: Vec<usize> = (0..n_folds).collect();
    for group in folds.chunks(at_once) {
        let parts: Vec<Result<Vec<f64>>> = group.par_iter().map(|&j| fold_scores(j)).collect();
        for part in parts {
            for (t, s) in totals.iter_mut().zip(part?) {
                *t += s;
            }
        }
    }
    Ok(totals)
}

/// The grid's effective λ for a fit on `ntr` rows.
fn effective_grid(search: &LambdaSearch, ntr: usize) -> Vec<f64> {
    search
        .grid
        .iter()
        .map(|&l| search.scale.effective(l, ntr))
        .collect()
}

/// One fold's λ path: the solutions $X_\lambda = (A + \lambda I)^{-1} B$ for every effective λ, $A$
/// symmetric positive semi-definite, from the band form of $A$; or, where a shifted band matrix is not
/// numerically positive definite, the eigendecomposition $A = V\Lambda V^\top$ and $V^\top B$, with
/// $\Lambda$ clipped at 0. Held-out predictions are $P X_\lambda$.
enum FoldPath {
    Shifted(Vec<Array2<f64>>),
    Eigen {
        values: Array1<f64>,
        vectors: Array2<f64>,
        vtb: Array2<f64>,
        lams: Vec<f64>,
    },
}

impl FoldPath {
    /// Consumes `a` (dropped before the fallback's eigendecomposition allocates).
    fn new(a: Array2<f64>, b: Array2<f64>, lams: &[f64]) -> Result<FoldPath> {
        let solutions = BandReduction::new(a.view())?.solve_shifted(b.view(), lams)?;
        if solutions.iter().all(Option::is_some) {
            return Ok(FoldPath::Shifted(solutions.into_iter().flatten().collect()));
        }
        Self::eigen(a, b, lams)
    }

    /// The eigendecomposition path (the fallback of [`FoldPath::new`]).
    fn eigen(a: Array2<f64>, b: Array2<f64>, lams: &[f64]) -> Result<FoldPath> {
        let e = eigh(a.view())?;
        drop(a);
        let vtb = e.vectors.t().dot(&b);
        Ok(FoldPath::Eigen {
            values: e.values,
            vectors: e.vectors,
            vtb,
            lams: lams.to_vec(),
        })
    }

    /// Adds the held-out score of every λ, predictions $P X_\lambda$, to `totals`.
    fn add_scores(
        &self,
        p: ArrayView2<'_, f64>,
        yva: ArrayView2<'_, f64>,
        kind: CvScore,
        totals: &mut [f64],
    ) {
        match self {
            FoldPath::Shifted(xs) => {
                for (total, x) in totals.iter_mut().zip(xs) {
                    *total += score(&p.dot(x), &yva, kind);
                }
            }
            FoldPath::Eigen {
                values,
                vectors,
                vtb,
                lams,
            } => {
                let pv = p.dot(vectors);
                for (total, &lam) in totals.iter_mut().zip(lams) {
                    let mut d = vtb.clone();
                    for (mut row, &ev) in d.axis_iter_mut(Axis(0)).zip(values.iter()) {
                        row /= ev.max(0.0) + lam;
                    }
                    *total += score(&pv.dot(&d), &yva, kind);
                }
            }
        }
    }
}

/// The mean score per λ and the first minimiser.
fn cv_result(search: &LambdaSearch, totals: Vec<f64>, n_splits: usize) -> CvResult {
    let scores: Vec<f64> = totals.iter().map(|t| t / n_splits as f64).collect();
    let mut best = 0;
    for (i, &s) in scores.iter().enumerate() {
        if s < scores[best] {
            best = i;
        }
    }
    CvResult {
        grid: search.grid.clone(),
        scores,
        best_index: best,
        best_lambda: search.grid[best],
    }
}

fn check_grid(search: &LambdaSearch) -> Result<()> {
    if search.grid.is_empty() {
        return Err(RfxError::invalid("grid", "[]", "at least one λ"));
    }
    if let Some(bad) = search.grid.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
        return Err(RfxError::invalid("grid value", bad, "finite and > 0"));
    }
    Ok(())
}

/// Selects λ for **exact kernel ridge regression** from the Gram $K$ of the rows (same validation schemes,
/// scores and λ convention as [`select_lambda`]): per fold one band reduction of the fitting rows'
/// Gram $K_{FF} = Q T Q^\top$ ($T$ banded), then for every λ $\hat Y_V = K_{VF}\thinspace Q(T + \lambda_{\rm eff} I)^{-1}Q^\top Y_F$ —
/// the dual path of [`select_lambda`] with $ZZ^\top$ replaced by $K$ (eigendecomposition fallback as there). Refit with
/// [`KernelRidge::fit_gram`] and `best_lambda` afterwards.
pub fn select_lambda_gram(
    k: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
) -> Result<CvResult> {
    check_grid(search)?;
    let n = k.nrows();
    if k.ncols() != n || y.nrows() != n {
        return Err(RfxError::DimensionMismatch(format!(
            "λ search: Gram {:?}, targets {:?}",
            k.dim(),
            y.dim()
        )));
    }
    let splits = folds(n, &search.validation)?;
    let per_fold = fold_peak_f64s(n, y.ncols(), search.grid.len(), &splits);
    let totals = fold_totals(splits.len(), search.grid.len(), per_fold, |j| {
        let (train, valid) = &splits[j];
        // K_FF is reduced (and dropped) before the held-out rows K_VF are cut out
        let kf = k.select(Axis(0), train).select(Axis(1), train);
        let path = FoldPath::new(
            kf,
            y.select(Axis(0), train),
            &effective_grid(search, train.len()),
        )?;
        let kvf = k.select(Axis(0), valid).select(Axis(1), train);
        let mut scores = vec![0.0; search.grid.len()];
        path.add_scores(
            kvf.view(),
            y.select(Axis(0), valid).view(),
            search.score,
            &mut scores,
        );
        Ok(scores)
    })?;
    Ok(cv_result(search, totals, splits.len()))
}

/// Peak bytes [`select_lambda_gram`] allocates for an $n$-row Gram, $k$ outputs and `search` (its validation
/// scheme and grid of $g$ values), on top of the Gram and targets it is given. Folds run one after another, so
/// this is the largest fold's peak; a fold with $f$ fitting and $v$ held-out rows holds, in doubles, the
/// largest of
/// - cutting out $K_{FF}$: the selected rows $K_{F\cdot}$ ($fn$) and $K_{FF}$ ($f^2$);
/// - the band reduction: $K_{FF}$ ($f^2$) and [`BandReduction::memory_f64s`] (its reflectors $f^2$, the band,
///   a shifted copy, τ and LAPACK's workspace: $(4k_d + 3)f + 2k_d^2$ with $k_d$ = [`rfx_linalg::BAND_WIDTH`]),
///   then the solutions $X_\lambda$ ($gfk$) with $Q^\top B$ and a working copy ($2fk$);
/// - the eigendecomposition fallback: $K_{FF}$, `dsyevd`'s copy ($f^2$), its workspace ($2f^2 + 6f + 1$
///   doubles, $5f + 3$ integers counted as doubles), the eigenvalues ($f$) and the eigenvectors' row-major
///   copy ($f^2$): $5f^2 + 12f + 4$;
/// - the predictions: the eigenvectors if the fallback ran ($f^2$), the selected rows $K_{V\cdot}$ ($vn$),
///   $K_{VF}$ and $K_{VF}U$ ($2vf$);
///
/// plus the targets and the per-λ predictions ($3(f + v)k$). With 2 folds, $f \approx v \approx n/2$ and
/// the peak is $\approx 1.25\thinspace n^2$ doubles. The fold sizes are those of the search (for [`Validation::Split`]
/// the given index sets).
pub fn select_lambda_gram_memory_bytes(n: usize, k: usize, search: &LambdaSearch) -> u64 {
    // the fold sizes of the search itself (a scheme it would reject needs no memory: the search fails first)
    let splits = folds(n, &search.validation).unwrap_or_default();
    f64_bytes(fold_peak_f64s(n, k, search.grid.len(), &splits))
}

/// The largest fold's peak of [`select_lambda_gram`] in doubles ([`select_lambda_gram_memory_bytes`]).
fn fold_peak_f64s(
    n: usize,
    k: usize,
    grid_len: usize,
    splits: &[(Vec<usize>, Vec<usize>)],
) -> u128 {
    let (n, k, g) = (n as u128, k as u128, grid_len as u128);
    splits
        .iter()
        .map(|(f, v)| {
            let (f, v) = (f.len() as u128, v.len() as u128);
            let select = f * n + f * f;
            let reduce = f * f + BandReduction::memory_f64s(f as usize) + g * f * k + 2 * f * k;
            let fallback = 5 * f * f + 12 * f + 4;
            let predict = f * f + v * n + 2 * v * f;
            select.max(reduce).max(fallback).max(predict) + 3 * (f + v) * k
        })
        .max()
        .unwrap_or(0)
}

/// Selects λ by [`select_lambda`] and refits on all rows with it (same [`LambdaScale`], so with
/// [`LambdaScale::TimesN`] the refit penalty is $\lambda^\star n$ for the full $n$, applied once).
///
/// In the primal form, when every fold fits on all rows but its held-out ones (k-fold, hold-out), the
/// $m \times m$ Grams are shared: $G_c = Z_c^\top Z_c$ is formed once per chunk $c$ of rows (each fold's
/// held-out rows, plus the rows no fold holds out), fold $j$ fits on $\sum_{c \ne V_j} G_c$ and the refit on
/// $\sum_c G_c$. That is $n m^2$ flops for the whole search and refit instead of $k n m^2$ (twice less with 2
/// folds); the λ path and the refit are the same as [`select_lambda`] and [`Ridge::fit`] (values equal to
/// rounding). Used when the chunk Grams take at most half of [`DEFAULT_MEMORY_CAP`].
pub fn fit_ridge_cv(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
    form: RidgeForm,
) -> Result<(Ridge, CvResult)> {
    check_xy(&z, &y)?;
    check_grid(search)?;
    let (n, m) = z.dim();
    let splits = folds(n, &search.validation)?;
    if let Some(chunks) = shared_chunks(n, m, &splits, form) {
        return fit_ridge_cv_shared(z, y, search, &splits, &chunks);
    }
    let cv = select_lambda_splits(z, y, search, &splits)?;
    let p = RidgeParams::new(cv.best_lambda)
        .scale(search.scale)
        .form(form);
    Ok((Ridge::fit(z, y, &p)?, cv))
}

/// [`fit_ridge_cv`] in the primal form for features made on demand, so that the $n \times m$ feature matrix
/// is never held: `features(rows)` returns the $|{\rm rows}| \times m$ features of the given rows.
///
/// The λ search ([`select_lambda`]) runs on the features of the rows its folds use (their union, asked for
/// once; a [`Validation::Split`] on a subset keeps this small), then the refit accumulates
/// $G = Z^\top Z$ and $B = Z^\top Y$ over blocks of [`rfx_linalg::DEFAULT_ROW_BLOCK`] consecutive rows
/// ([`NormalEquations`], `ntk-random-features.md` §3.9) and solves $(G + \lambda_{\rm eff} I)W = B$ by
/// Cholesky. Same blocks, same search and same refit as [`fit_ridge_cv`] on the whole matrix when that
/// takes its non-shared path ([`select_lambda`] then the primal [`Ridge::fit`]), so with a `features` that
/// computes each row independently the two agree bit for bit. Every row's features are asked for once: the
/// refit reuses those of the search rows. Memory: the search rows' features (held through the refit), one
/// block, and $m^2 + 2mk$ doubles for the normal equations, checked against `memory_cap` before any feature
/// is made.
pub fn fit_ridge_cv_streamed<F>(
    n: usize,
    m: usize,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
    memory_cap: u64,
    mut features: F,
) -> Result<(Ridge, CvResult)>
where
    F: FnMut(&[usize]) -> Result<Array2<f64>>,
{
    check_grid(search)?;
    if y.nrows() != n {
        return Err(RfxError::DimensionMismatch(format!(
            "streamed ridge: {n} rows, targets {:?}",
            y.dim()
        )));
    }
    if m == 0 || m > n {
        return Err(RfxError::invalid(
            "m",
            m,
            format!(
                "1..={n} (the primal form; fewer rows than features: fit_ridge_cv's dual form)"
            ),
        ));
    }
    let k = y.ncols() as u128;
    let (m128, splits) = (m as u128, folds(n, &search.validation)?);
    let mut used: Vec<usize> = splits
        .iter()
        .flat_map(|(t, v)| t.iter().chain(v))
        .copied()
        .collect();
    used.sort_unstable();
    used.dedup();
    let block = DEFAULT_ROW_BLOCK.min(n) as u128;
    check_memory(
        "streamed ridge: normal equations, one feature block and the λ search's rows",
        f64_bytes(m128 * m128 + 2 * m128 * k + (block + used.len() as u128) * m128),
        memory_cap,
    )?;
    // the search on the features of the rows it uses, its index sets renumbered into them
    let mut at = vec![usize::MAX; n];
    for (j, &i) in used.iter().enumerate() {
        at[i] = j;
    }
    let local: Vec<(Vec<usize>, Vec<usize>)> = splits
        .iter()
        .map(|(t, v)| {
            (
                t.iter().map(|&i| at[i]).collect(),
                v.iter().map(|&i| at[i]).collect(),
            )
        })
        .collect();
    let zs = checked_block(&mut features, &used, m)?;
    let cv = select_lambda_splits(zs.view(), y.select(Axis(0), &used).view(), search, &local)?;
    // the refit's blocks: the search rows' features are taken from `zs`, only the others are made
    let mut ne = NormalEquations::new(m, y.ncols())?;
    for start in (0..n).step_by(DEFAULT_ROW_BLOCK) {
        let end = (start + DEFAULT_ROW_BLOCK).min(n);
        let missing: Vec<usize> = (start..end).filter(|&i| at[i] == usize::MAX).collect();
        let made = if missing.is_empty() {
            Array2::zeros((0, m))
        } else {
            checked_block(&mut features, &missing, m)?
        };
        let mut zb = Array2::<f64>::zeros((end - start, m));
        let mut next = made.rows().into_iter();
        for (mut row, i) in zb.rows_mut().into_iter().zip(start..end) {
            match at[i] {
                usize::MAX => row.assign(&next.next().expect("one made row per missing row")),
                j => row.assign(&zs.row(j)),
            }
        }
        ne.push(zb.view(), y.slice(s![start..end, ..]))?;
    }
    let params = RidgeParams::new(cv.best_lambda).scale(search.scale);
    Ok((Ridge::fit_normal_equations(ne, &params)?, cv))
}

/// `features(rows)`, checked to be $|{\rm rows}| \times m$.
fn checked_block<F>(features: &mut F, rows: &[usize], m: usize) -> Result<Array2<f64>>
where
    F: FnMut(&[usize]) -> Result<Array2<f64>>,
{
    let z = features(rows)?;
    if z.dim() != (rows.len(), m) {
        return Err(RfxError::DimensionMismatch(format!(
            "streamed ridge: features of {} rows are {:?}, expected ({}, {m})",
            rows.len(),
            z.dim(),
            rows.len()
        )));
    }
    Ok(z)
}

/// The row chunks of [`fit_ridge_cv`]'s shared-Gram path (each fold's held-out rows, then the rows no fold
/// holds out), or `None` when the path does not apply: a dual fit, held-out sets that overlap, a fold that
/// does not fit on all its other rows, or chunk Grams above half the default memory cap.
fn shared_chunks(
    n: usize,
    m: usize,
    splits: &[(Vec<usize>, Vec<usize>)],
    form: RidgeForm,
) -> Option<Vec<Vec<usize>>> {
    let primal = match form {
        RidgeForm::Primal => true,
        RidgeForm::Dual => false,
        RidgeForm::Auto => splits.iter().all(|(t, _)| m <= t.len()),
    };
    if !primal || splits.iter().any(|(t, v)| t.len() + v.len() != n) {
        return None;
    }
    let mut owner = vec![usize::MAX; n];
    for (j, (_, v)) in splits.iter().enumerate() {
        for &i in v {
            if owner[i] != usize::MAX {
                return None;
            }
            owner[i] = j;
        }
    }
    // with disjoint held-out sets and |train| + |valid| = n, train is the complement of valid exactly when
    // no training row is held out by the same fold
    if splits
        .iter()
        .enumerate()
        .any(|(j, (t, _))| t.iter().any(|&i| owner[i] == j))
    {
        return None;
    }
    let mut chunks: Vec<Vec<usize>> = splits.iter().map(|(_, v)| v.clone()).collect();
    let rest: Vec<usize> = (0..n).filter(|&i| owner[i] == usize::MAX).collect();
    if !rest.is_empty() {
        chunks.push(rest);
    }
    // chunk Grams, a fold's sum and the band reduction's reflectors
    let bytes = f64_bytes((chunks.len() as u128 + 2) * (m as u128) * (m as u128));
    (bytes <= DEFAULT_MEMORY_CAP / 2).then_some(chunks)
}

fn fit_ridge_cv_shared(
    z: ArrayView2<'_, f64>,
    y: ArrayView2<'_, f64>,
    search: &LambdaSearch,
    splits: &[(Vec<usize>, Vec<usize>)],
    chunks: &[Vec<usize>],
) -> Result<(Ridge, CvResult)> {
    let (n, m) = z.dim();
    let k = y.ncols();
    let mut grams = Vec::with_capacity(chunks.len());
    for rows in chunks {
        let mut ne = NormalEquations::new(m, k)?;
        ne.push_all(
            z.select(Axis(0), rows).view(),
            y.select(Axis(0), rows).view(),
        )?;
        grams.push(ne.finish());
    }
    let sum_except = |skip: Option<usize>| {
        let mut g = Array2::<f64>::zeros((m, m));
        let mut b = Array2::<f64>::zeros((m, k));
        for (c, (gc, bc)) in grams.iter().enumerate() {
            if Some(c) != skip {
                g += gc;
                b += bc;
            }
        }
        (g, b)
    };
    // a fold's sum of chunk Grams, the band reduction, the λ path's solutions and its held-out rows
    let g_len = search.grid.len() as u128;
    let (m128, k128) = (m as u128, k as u128);
    let per_fold = m128 * m128
        + BandReduction::memory_f64s(m)
        + (g_len + 3) * m128 * k128
        + splits
            .iter()
            .map(|(_, v)| v.len() as u128)
            .max()
            .unwrap_or(0)
            * (m128 + k128);
    let totals = fold_totals(splits.len(), search.grid.len(), per_fold, |j| {
        // chunk j is fold j's held-out rows
        let (train, valid) = &splits[j];
        let (g, b) = sum_except(Some(j));
        let path = FoldPath::new(g, b, &effective_grid(search, train.len()))?;
        let mut scores = vec![0.0; search.grid.len()];
        path.add_scores(
            z.select(Axis(0), valid).view(),
            y.select(Axis(0), valid).view(),
            search.score,
            &mut scores,
        );
        Ok(scores)
    })?;
    let cv = cv_result(search, totals, splits.len());
    let (g, b) = sum_except(None);
    drop(grams);
    let lam = search.scale.effective(cv.best_lambda, n);
    Ok((Ridge::from_normal(g, b, lam)?, cv))
}

/// Parameters of exact kernel ridge regression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KrrParams {
    /// Ridge parameter $\lambda \ge 0$ (before [`LambdaScale`]).
    pub lambda: f64,
    /// λ convention (NTK-RF eq. 19 uses [`LambdaScale::TimesN`]).
    pub scale: LambdaScale,
    /// Memory cap in bytes for the Gram matrices; above it, [`RfxError::OutOfMemory`].
    pub memory_cap: u64,
    /// Arithmetic of the factorisation ([`Precision::F64`] by default; the Gram is always `f64`).
    pub precision: Precision,
}

impl KrrParams {
    /// λ with [`LambdaScale::Plain`] and [`DEFAULT_MEMORY_CAP`].
    pub fn new(lambda: f64) -> Self {
        KrrParams {
            lambda,
            scale: LambdaScale::Plain,
            memory_cap: DEFAULT_MEMORY_CAP,
            precision: Precision::F64,
        }
    }

    /// Sets the precision ([`Precision::MixedF32`]: `f32` Cholesky factor, refined to `f64` accuracy with
    /// the `f64` Gram).
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// Sets the λ convention.
    pub fn scale(mut self, scale: LambdaScale) -> Self {
        self.scale = scale;
        self
    }

    /// Sets the memory cap in bytes.
    pub fn memory_cap(mut self, bytes: u64) -> Self {
        self.memory_cap = bytes;
        self
    }

    /// Checks λ.
    pub fn validate(&self) -> Result<()> {
        RidgeParams::new(self.lambda).validate()
    }
}

/// Bytes exact KRR needs for $n$ training rows and $k$ outputs: the $n \times n$ Gram (factored in place)
/// plus $\alpha$ and a copy of $Y$ ($2nk$).
pub fn krr_memory_bytes(n: usize, k: usize) -> u64 {
    f64_bytes((n as u128) * (n as u128) + 2 * (n as u128) * (k as u128))
}

/// Peak bytes of exact KRR with $n$ training and $n_{te}$ test rows, one output, and λ searched on the first
/// $s \le n$ rows' Gram by `search` ([`select_lambda_gram`]). Held throughout: the training Gram ($n^2$,
/// factored in place by the refit, with α and a copy of $Y$: [`krr_memory_bytes`]) and the test cross-Gram
/// ($n_{te} n$). During the λ search, on top: with $s < n$ the subset Gram $K_{SS}$ ($s^2$, plus $s$ targets) and,
/// while it is cut out, its rows $K_{S\cdot}$ ($sn$), the larger of which with the search's own peak
/// ([`select_lambda_gram_memory_bytes`]: fold Grams, the band reduction or its eigendecomposition
/// fallback, about $1.25 s^2$ doubles with 2 folds); with $s = n$ the search's peak only (no copy of $K$).
pub fn exact_krr_memory_bytes(n: usize, n_test: usize, s: usize, search: &LambdaSearch) -> u64 {
    let search_peak = select_lambda_gram_memory_bytes(s, 1, search);
    let cv = if s < n {
        let (s, n) = (s as u128, n as u128);
        f64_bytes(s * s + s).saturating_add(f64_bytes(s * n).max(search_peak))
    } else {
        search_peak
    };
    krr_memory_bytes(n, 1)
        .saturating_add(f64_bytes((n_test as u128) * (n as u128)))
        .saturating_add(cv)
}

/// Rows of test points per block in [`KernelRidge::predict_kernel`] so that a block's cross-Gram stays
/// under the cap (at least 1).
fn test_block_rows(n_train: usize, cap: u64) -> usize {
    ((cap / 8) as usize / n_train.max(1)).clamp(1, 4096)
}

/// Exact kernel ridge regression $\hat f(x) = K(x, X)\thinspace\alpha$, $\alpha = (K + \lambda_\text{eff} I)^{-1} Y$
/// (dual Cholesky; NTK-RF eq. 19 with [`LambdaScale::TimesN`]).
#[derive(Clone, Debug)]
pub struct KernelRidge {
    alpha: Array2<f64>,
    x_train: Option<Array2<f64>>,
    lambda_eff: f64,
    memory_cap: u64,
}

impl KernelRidge {
    /// Fits from a precomputed training Gram $K$ ($n \times n$, consumed and factored in place).
    pub fn fit_gram(gram: Array2<f64>, y: ArrayView2<'_, f64>, params: &KrrParams) -> Result<Self> {
        params.validate()?;
        let n = gram.nrows();
        check_memory(
            "exact KRR",
            krr_memory_bytes(n, y.ncols()),
            params.memory_cap,
        )?;
        if gram.ncols() != n || y.nrows() != n {
            return Err(RfxError::DimensionMismatch(format!(
                "KRR: Gram {:?}, targets {:?}",
                gram.dim(),
                y.dim()
            )));
        }
        if !y.iter().all(|v| v.is_finite()) {
            return Err(RfxError::Numerical("KRR: non-finite targets".into()));
        }
        let lam = params.scale.effective(params.lambda, n);
        let mut k = gram;
        add_diag(&mut k, lam);
        if params.precision == Precision::MixedF32 {
            // the finiteness check and the f32 copy in one parallel pass over K
            let k32 = to_f32_finite(k.view(), "KRR Gram")?;
            if let Ok(f) = CholeskyF32::factor_upper(k32) {
                if let Some(alpha) = solve_spd_refined(|v| Ok(k.dot(&v)), &f, y)? {
                    return Ok(KernelRidge {
                        alpha,
                        x_train: None,
                        lambda_eff: lam,
                        memory_cap: params.memory_cap,
                    });
                }
            }
        }
        let alpha = Cholesky::factor(k)?.solve(y)?;
        Ok(KernelRidge {
            alpha,
            x_train: None,
            lambda_eff: lam,
            memory_cap: params.memory_cap,
        })
    }

    /// Fits from a kernel and training points; the memory estimate is checked **before** the Gram is built.
    pub fn fit_kernel<K: Kernel + ?Sized>(
        kernel: &K,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
        params: &KrrParams,
    ) -> Result<Self> {
        params.validate()?;
        let n = x.nrows();
        check_memory(
            "exact KRR",
            krr_memory_bytes(n, y.ncols()) + f64_bytes(x.len() as u128),
            params.memory_cap,
        )?;
        let gram = kernel.gram(x, x)?;
        let mut model = Self::fit_gram(gram, y, params)?;
        model.x_train = Some(x.to_owned());
        Ok(model)
    }

    /// The dual coefficients $\alpha$ ($n \times k$).
    pub fn alpha(&self) -> &Array2<f64> {
        &self.alpha
    }

    /// The penalty actually added to the diagonal.
    pub fn lambda_eff(&self) -> f64 {
        self.lambda_eff
    }

    /// Predictions $K_{te,tr}\thinspace\alpha$ from a cross-Gram ($n_{te} \times n$).
    pub fn predict_gram(&self, k_test_train: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        if k_test_train.ncols() != self.alpha.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "KRR fitted on {} points, cross-Gram has {} columns",
                self.alpha.nrows(),
                k_test_train.ncols()
            )));
        }
        Ok(k_test_train.dot(&self.alpha))
    }

    /// Predictions for test points, building the cross-Gram in row blocks under the memory cap (only for
    /// models fitted with [`KernelRidge::fit_kernel`]).
    pub fn predict_kernel<K: Kernel + ?Sized>(
        &self,
        kernel: &K,
        x_test: ArrayView2<'_, f64>,
    ) -> Result<Array2<f64>> {
        let xtr = self.x_train.as_ref().ok_or_else(|| {
            RfxError::invalid(
                "predict_kernel",
                "model fitted from a Gram",
                "a model from fit_kernel",
            )
        })?;
        let n = xtr.nrows();
        let mut out = Array2::zeros((x_test.nrows(), self.alpha.ncols()));
        let b = test_block_rows(n, self.memory_cap);
        for start in (0..x_test.nrows()).step_by(b) {
            let end = (start + b).min(x_test.nrows());
            let kb = kernel.gram(x_test.slice(s![start..end, ..]), xtr.view())?;
            out.slice_mut(s![start..end, ..])
                .assign(&kb.dot(&self.alpha));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_abs, randn};

    fn rel_normal_eq_residual(z: &Array2<f64>, y: &Array2<f64>, w: &Array2<f64>, lam: f64) -> f64 {
        let mut g = z.t().dot(z);
        add_diag(&mut g, lam);
        let rhs = z.t().dot(y);
        max_abs(&(g.dot(w) - &rhs)) / max_abs(&rhs)
    }

    #[test]
    fn blocked_normal_operator_equals_the_direct_product() {
        // two waves of APPLY_WAVE tasks of APPLY_TASK rows, the last task partial; one right-hand side (row
        // by row), two (row by row, at the limit) and three (BLAS blocks, with a partial block); a transposed
        // copy of Z (rows not contiguous) gives the same bits
        let n = APPLY_WAVE * APPLY_TASK + 600;
        let z = randn(n, 37, 31);
        let zt = z.t().as_standard_layout().into_owned();
        let zf = zt.t();
        assert!(zf.row(0).as_slice().is_none());
        for k in 1..=3 {
            let v = randn(37, k, 32);
            let want = z.t().dot(&z.dot(&v)) + &v * 0.7;
            let got = normal_apply(z.view(), v.view(), 0.7);
            // each entry: a 37-term dot product times an entry, summed over a task's ≤ APPLY_TASK rows in
            // order and then over the n / APPLY_TASK tasks (and λv): a sum of depth ≤ 37 + 2048 + 9 + 2 <
            // 4637, so within γ_4637 times the sum of |z_ij| |z_i·| |v|, bounded here by its largest entry
            let scale = (z
                .t()
                .mapv(f64::abs)
                .dot(&z.mapv(f64::abs).dot(&v.mapv(f64::abs))))
            .iter()
            .fold(0.0f64, |m, x| m.max(*x));
            let err = (&got - &want).iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(
                err <= 4637.0 * f64::EPSILON * scale,
                "k = {k}: max |Δ| = {err:e} of {scale:e}"
            );
            assert_eq!(
                normal_apply(zf, v.view(), 0.7),
                got,
                "k = {k}: strided rows"
            );
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(
                one.install(|| normal_apply(z.view(), v.view(), 0.7)),
                got,
                "k = {k}: one thread"
            );
        }
    }

    #[test]
    fn mixed_precision_matches_f64_to_rounding_level() {
        // primal and dual forms, well and badly conditioned (tiny lambda on a rank-deficient dual system
        // makes the f32 factor useless: the fit must fall back to f64 and still agree)
        for &(n, m, lam) in &[
            (300usize, 40usize, 0.1),
            (40, 300, 0.1),
            (300, 40, 1e-9),
            (40, 300, 1e-13),
        ] {
            let z = randn(n, m, 21);
            let y = randn(n, 2, 22);
            let p = RidgeParams::new(lam);
            let a = Ridge::fit(z.view(), y.view(), &p).unwrap();
            let b = Ridge::fit(z.view(), y.view(), &p.precision(Precision::MixedF32)).unwrap();
            let scale = max_abs(a.weights());
            assert!(
                max_abs(&(a.weights() - b.weights())) <= 1e-9 * scale,
                "n {n} m {m} lambda {lam}: {}",
                max_abs(&(a.weights() - b.weights())) / scale
            );
        }
        let x = randn(120, 5, 23);
        let y = randn(120, 1, 24);
        let k = x.dot(&x.t()).mapv(|v| (0.3 * v).exp());
        let a = KernelRidge::fit_gram(k.clone(), y.view(), &KrrParams::new(0.5)).unwrap();
        let b = KernelRidge::fit_gram(
            k.clone(),
            y.view(),
            &KrrParams::new(0.5).precision(Precision::MixedF32),
        )
        .unwrap();
        assert!(max_abs(&(a.alpha() - b.alpha())) <= 1e-9 * max_abs(a.alpha()));
        // a non-finite Gram is an error naming its row, not a fall-back to f64
        let mut bad = k;
        bad[[17, 4]] = f64::NAN;
        let e = KernelRidge::fit_gram(
            bad,
            y.view(),
            &KrrParams::new(0.5).precision(Precision::MixedF32),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("KRR Gram: row 17 has a non-finite entry"),
            "{e}"
        );
    }

    #[test]
    fn ridge_solutions_satisfy_normal_equations() {
        for &(n, m) in &[(200usize, 30usize), (30, 200)] {
            let z = randn(n, m, 11);
            let y = randn(n, 3, 12);
            for scale in [LambdaScale::Plain, LambdaScale::TimesN] {
                let p = RidgeParams::new(0.05).scale(scale);
                let r = Ridge::fit(z.view(), y.view(), &p).unwrap();
                assert_eq!(
                    r.form(),
                    if m <= n {
                        RidgeForm::Primal
                    } else {
                        RidgeForm::Dual
                    }
                );
                let lam = scale.effective(0.05, n);
                assert_eq!(r.lambda_eff(), lam);
                let res = rel_normal_eq_residual(&z, &y, r.weights(), lam);
                assert!(res < 1e-8, "n={n} m={m} {scale:?}: residual {res:e}");
            }
        }
    }

    #[test]
    fn primal_and_dual_agree() {
        for &(n, m) in &[(120usize, 40usize), (40, 120)] {
            let z = randn(n, m, 13);
            let y = randn(n, 2, 14);
            let zt = randn(25, m, 15);
            let p = RidgeParams::new(0.3);
            let a = Ridge::fit(z.view(), y.view(), &p.form(RidgeForm::Primal)).unwrap();
            let b = Ridge::fit(z.view(), y.view(), &p.form(RidgeForm::Dual)).unwrap();
            let (pa, pb) = (a.predict(zt.view()).unwrap(), b.predict(zt.view()).unwrap());
            let d = max_abs(&(&pa - &pb)) / max_abs(&pa);
            assert!(d < 1e-9, "primal vs dual relative difference {d:e}");
        }
    }

    #[test]
    fn streamed_normal_equations_match_fit() {
        let z = randn(300, 20, 16);
        let y = randn(300, 1, 17);
        let p = RidgeParams::new(1e-3).scale(LambdaScale::TimesN);
        let mut ne = NormalEquations::new(20, 1).unwrap();
        for start in (0..300).step_by(64) {
            let end = (start + 64).min(300);
            ne.push(z.slice(s![start..end, ..]), y.slice(s![start..end, ..]))
                .unwrap();
        }
        let a = Ridge::fit_normal_equations(ne, &p).unwrap();
        let b = Ridge::fit(z.view(), y.view(), &p).unwrap();
        assert!(max_abs(&(a.weights() - b.weights())) < 1e-12 * max_abs(b.weights()));
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let z = randn(10, 3, 1);
        let y = randn(9, 1, 2);
        assert!(Ridge::fit(z.view(), y.view(), &RidgeParams::new(1.0)).is_err());
        let y = randn(10, 1, 2);
        assert!(matches!(
            Ridge::fit(z.view(), y.view(), &RidgeParams::new(-1.0)),
            Err(RfxError::InvalidParameter { .. })
        ));
        assert!(Ridge::fit(z.view(), y.view(), &RidgeParams::new(f64::NAN)).is_err());
        // λ = 0 on a rank-deficient dual system is a numerical error, not a panic
        let zz = randn(10, 3, 3);
        assert!(matches!(
            Ridge::fit(
                zz.view(),
                y.view(),
                &RidgeParams::new(0.0).form(RidgeForm::Dual)
            ),
            Err(RfxError::Numerical(_))
        ));
        assert!(one_hot(&[0, 3], 3, false).is_err());
        assert_eq!(
            one_hot(&[2, 0], 3, false).unwrap(),
            ndarray::array![[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
        );
        assert!(log10_grid(1.0, 0.0, 3).is_err());
        let s = LambdaSearch {
            grid: vec![1.0],
            scale: LambdaScale::Plain,
            validation: Validation::KFold { folds: 1, seed: 0 },
            score: CvScore::Mse,
        };
        assert!(select_lambda(z.view(), y.view(), &s).is_err());
    }

    #[test]
    fn ridge_memory_cap_and_cv_refit() {
        let z = randn(50, 200, 51);
        let y = randn(50, 1, 52);
        // dual: 50² + 2·50 entries = 20,800 bytes; primal would be 200² + 400 entries
        let p = RidgeParams::new(1.0).memory_cap(20_800);
        assert!(Ridge::fit(z.view(), y.view(), &p).is_ok());
        assert!(matches!(
            Ridge::fit(z.view(), y.view(), &p.form(RidgeForm::Primal)),
            Err(RfxError::OutOfMemory {
                needed_bytes: 323_200,
                ..
            })
        ));
        assert!(matches!(
            Ridge::fit(z.view(), y.view(), &p.memory_cap(20_799)),
            Err(RfxError::OutOfMemory { .. })
        ));
        let s = LambdaSearch {
            grid: log10_grid(-2.0, 2.0, 5).unwrap(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold { folds: 2, seed: 1 },
            score: CvScore::Mse,
        };
        let (r, cv) = fit_ridge_cv(z.view(), y.view(), &s, RidgeForm::Auto).unwrap();
        assert_eq!(r.lambda_eff(), cv.best_lambda * 50.0);
    }

    /// Brute force: one Cholesky ridge fit per (fold, λ).
    fn brute_force_cv(z: &Array2<f64>, y: &Array2<f64>, search: &LambdaSearch) -> Vec<f64> {
        let splits = folds(z.nrows(), &search.validation).unwrap();
        search
            .grid
            .iter()
            .map(|&lam| {
                splits
                    .iter()
                    .map(|(tr, va)| {
                        let p = RidgeParams::new(lam).scale(search.scale);
                        let r = Ridge::fit(
                            z.select(Axis(0), tr).view(),
                            y.select(Axis(0), tr).view(),
                            &p,
                        )
                        .unwrap();
                        let pred = r.predict(z.select(Axis(0), va).view()).unwrap();
                        score(&pred, &y.select(Axis(0), va).view(), search.score)
                    })
                    .sum::<f64>()
                    / splits.len() as f64
            })
            .collect()
    }

    #[test]
    fn cv_selects_the_heldout_minimizer_on_a_planted_problem() {
        // y = Z β + σ ε with β ~ N(0, τ² I): the Bayes-optimal ridge penalty is σ²/τ² = 10 (Plain scale).
        let (n, m) = (120, 40);
        let z = randn(n, m, 21);
        let beta = randn(m, 1, 22).mapv(|v| v * 0.1f64.sqrt());
        let y = z.dot(&beta) + randn(n, 1, 23);
        let search = LambdaSearch {
            grid: log10_grid(-3.0, 4.0, 15).unwrap(),
            scale: LambdaScale::Plain,
            validation: Validation::KFold { folds: 5, seed: 3 },
            score: CvScore::Mse,
        };
        let cv = select_lambda(z.view(), y.view(), &search).unwrap();
        let brute = brute_force_cv(&z, &y, &search);
        for (a, b) in cv.scores.iter().zip(&brute) {
            assert!(
                (a - b).abs() <= 1e-9 * b,
                "eigen path {a} vs brute force {b}"
            );
        }
        let argmin = (0..brute.len())
            .min_by(|&i, &j| brute[i].total_cmp(&brute[j]))
            .unwrap();
        assert_eq!(cv.best_index, argmin);
        // the planted optimum λ* = 10 is within one decade of the selected value (measured: 3.16), and the
        // curve is U-shaped: both grid ends are worse than the minimum (measured: 1.414 and 4.53 vs 1.383)
        assert!(
            (cv.best_lambda / 10.0).log10().abs() <= 1.0,
            "selected {}",
            cv.best_lambda
        );
        assert!(cv.scores[0] > cv.scores[cv.best_index] * 1.01);
        assert!(*cv.scores.last().unwrap() > cv.scores[cv.best_index] * 1.01);
        // dual path (m > n_tr) agrees with brute force too, with the TimesN convention
        let zw = randn(60, 90, 24);
        let yw = zw.dot(&randn(90, 2, 25).mapv(|v| v * 0.2)) + randn(60, 2, 26);
        let s2 = LambdaSearch {
            grid: log10_grid(-4.0, 1.0, 6).unwrap(),
            scale: LambdaScale::TimesN,
            validation: Validation::Holdout {
                fraction: 0.25,
                seed: 1,
            },
            score: CvScore::Mse,
        };
        let cv2 = select_lambda(zw.view(), yw.view(), &s2).unwrap();
        for (a, b) in cv2.scores.iter().zip(&brute_force_cv(&zw, &yw, &s2)) {
            assert!(
                (a - b).abs() <= 1e-8 * b,
                "dual eigen path {a} vs brute force {b}"
            );
        }
    }

    #[test]
    fn ridge_classifier_separates_classes() {
        // three Gaussian blobs in 5-d, features = raw coordinates plus a constant
        let n = 150;
        let mut z = randn(n, 6, 31).mapv(|v| 0.3 * v);
        let labels: Vec<usize> = (0..n).map(|i| i % 3).collect();
        for (i, &c) in labels.iter().enumerate() {
            z[[i, c]] += 2.0;
            z[[i, 5]] = 1.0;
        }
        let clf =
            RidgeClassifier::fit(z.view(), &labels, 3, true, &RidgeParams::new(1e-2)).unwrap();
        let pred = clf.predict(z.view()).unwrap();
        let acc = crate::metrics::accuracy(&pred, &labels).unwrap();
        assert!(acc >= 0.99, "accuracy {acc}");
        let s = LambdaSearch {
            grid: log10_grid(-3.0, 2.0, 6).unwrap(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold { folds: 3, seed: 0 },
            score: CvScore::ClassificationError,
        };
        let t = one_hot(&labels, 3, true).unwrap();
        let cv = select_lambda(z.view(), t.view(), &s).unwrap();
        assert!(cv.scores[cv.best_index] <= 0.02);
    }

    /// The Gram path scores every λ exactly as the feature path does on features with $ZZ^\top = K$
    /// (both k-fold and a fixed split), so it selects the same λ.
    #[test]
    fn gram_lambda_path_equals_the_feature_path() {
        let z = randn(60, 8, 61);
        let y = randn(60, 2, 62);
        let k = z.dot(&z.t());
        for validation in [
            Validation::KFold { folds: 3, seed: 5 },
            Validation::Split {
                train: (0..40).collect(),
                valid: (40..60).collect(),
            },
        ] {
            let s = times_n_search(-3.0, 2.0, 6, validation, CvScore::Mse);
            let a = select_lambda(z.view(), y.view(), &s).unwrap();
            let b = select_lambda_gram(k.view(), y.view(), &s).unwrap();
            for (x, w) in a.scores.iter().zip(&b.scores) {
                assert!((x - w).abs() < 1e-9 * x.abs().max(1e-12), "{x} vs {w}");
            }
            assert_eq!(a.best_index, b.best_index);
        }
    }

    #[test]
    fn exact_krr_equals_ridge_on_linear_kernel_features() {
        struct Linear;
        impl Kernel for Linear {
            fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
                x.dot(&y)
            }
        }
        let (n, d) = (80, 12);
        let x = randn(n, d, 41);
        let y = randn(n, 2, 42);
        let xt = randn(30, d, 43);
        for scale in [LambdaScale::Plain, LambdaScale::TimesN] {
            let krr = KernelRidge::fit_kernel(
                &Linear,
                x.view(),
                y.view(),
                &KrrParams::new(0.02).scale(scale),
            )
            .unwrap();
            let pk = krr.predict_kernel(&Linear, xt.view()).unwrap();
            let r = Ridge::fit(x.view(), y.view(), &RidgeParams::new(0.02).scale(scale)).unwrap();
            let pr = r.predict(xt.view()).unwrap();
            let diff = max_abs(&(&pk - &pr)) / max_abs(&pr);
            assert!(
                diff < 1e-9,
                "{scale:?}: KRR vs ridge relative difference {diff:e}"
            );
            // fit_gram path and predict_gram give the same
            let krr2 =
                KernelRidge::fit_gram(x.dot(&x.t()), y.view(), &KrrParams::new(0.02).scale(scale))
                    .unwrap();
            let p2 = krr2.predict_gram(xt.dot(&x.t()).view()).unwrap();
            assert!(max_abs(&(&p2 - &pk)) < 1e-10 * max_abs(&pk));
        }
        // memory cap: n = 80 needs 80²·8 + ... bytes, a 10 kB cap refuses before building the Gram
        match KernelRidge::fit_kernel(
            &Linear,
            x.view(),
            y.view(),
            &KrrParams::new(0.1).memory_cap(10_000),
        ) {
            Err(RfxError::OutOfMemory {
                needed_bytes,
                cap_bytes,
                ..
            }) => {
                assert!(needed_bytes > cap_bytes);
                assert_eq!(cap_bytes, 10_000);
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        assert_eq!(krr_memory_bytes(5000, 1), 8 * (25_000_000 + 10_000));
        // a tiny cap only forces tiny prediction blocks
        assert_eq!(test_block_rows(80, 8), 1);
    }

    #[test]
    fn gram_selection_memory_counts_the_largest_fold() {
        let search = |validation| LambdaSearch {
            grid: vec![1e-3],
            scale: LambdaScale::TimesN,
            validation,
            score: CvScore::Mse,
        };
        // 3 folds of 10 rows: held-out sizes 3, 3, 4, so the largest fold fits on f = 7 rows and validates
        // on v = 3: the band reduction K_FF 49 + reflectors 49 + (4 k_d + 3)·7 + 2 k_d² with k_d = 64, then
        // 7 + 14 = 10,124 doubles (> cutting out 70 + 49, the fallback 5·49 + 12·7 + 4 = 333, predicting
        // 49 + 30 + 42), plus targets and predictions 3·10 → 10,154.
        assert_eq!(rfx_linalg::BAND_WIDTH, 64);
        let v = search(Validation::KFold { folds: 3, seed: 1 });
        assert_eq!(
            select_lambda_gram_memory_bytes(10, 1, &v),
            (2 * 49 + 259 * 7 + 2 * 64 * 64 + 7 + 14 + 30) * 8
        );
        // 2 folds: about 1.25 n² doubles (the fallback's five half-size fold Grams), more than one n × n copy
        let n = 10_000;
        let b =
            select_lambda_gram_memory_bytes(n, 1, &search(Validation::KFold { folds: 2, seed: 1 }));
        let nn = (n * n * 8) as f64;
        assert!((b as f64 / nn - 1.25).abs() < 0.01, "{}", b as f64 / nn);
        // an explicit split counts its own sets: f = 4, v = 2, n = 6, k = 2
        let split = search(Validation::Split {
            train: (0..4).collect(),
            valid: (4..6).collect(),
        });
        let b = select_lambda_gram_memory_bytes(6, 2, &split);
        assert_eq!(
            b,
            (2 * 16 + 259 * 4 + 2 * 64 * 64 + 4 * 2 + 2 * 4 * 2 + 3 * 6 * 2) * 8
        );
    }

    #[test]
    fn band_path_equals_the_eigen_path_and_falls_back_when_indefinite() {
        let z = randn(40, 12, 5);
        let y = randn(40, 2, 6);
        let (ztr, zva) = (z.slice(s![..30, ..]), z.slice(s![30.., ..]));
        let (ytr, yva) = (y.slice(s![..30, ..]), y.slice(s![30.., ..]));
        let lams = [1e-6, 1e-2, 1.0, 30.0];
        let a = gram_cols(ztr.view()).unwrap();
        let b = ztr.t().dot(&ytr);
        let scores = |path: &FoldPath| {
            let mut t = vec![0.0; lams.len()];
            path.add_scores(zva.view(), yva.view(), CvScore::Mse, &mut t);
            t
        };
        let tri = FoldPath::new(a.clone(), b.clone(), &lams).unwrap();
        assert!(matches!(tri, FoldPath::Shifted(_)));
        let eig = FoldPath::eigen(a, b, &lams).unwrap();
        for (s, t) in scores(&tri).iter().zip(scores(&eig)) {
            assert!((s - t).abs() <= 1e-9 * t, "{s} vs {t}");
        }
        // a matrix with a negative eigenvalue below the smallest shift: the eigen path with clipping
        let q = gram_rows(randn(3, 6, 7).view()).unwrap();
        let mut a = q.clone();
        a[[0, 0]] -= 50.0;
        assert!(eigh(a.view()).unwrap().values[0] < -1.0);
        let b = Array2::ones((3, 1));
        let path = FoldPath::new(a, b, &[1e-3, 1.0]).unwrap();
        assert!(matches!(path, FoldPath::Eigen { .. }));
    }

    #[test]
    fn shared_gram_search_equals_separate_search_and_refit() {
        let z = randn(90, 14, 11);
        let y = randn(90, 2, 12);
        for validation in [
            Validation::KFold { folds: 2, seed: 3 },
            Validation::KFold { folds: 5, seed: 4 },
            Validation::Holdout {
                fraction: 0.3,
                seed: 5,
            },
        ] {
            let search = times_n_search(-6.0, 1.0, 8, validation, CvScore::Mse);
            let splits = folds(90, &search.validation).unwrap();
            assert!(shared_chunks(90, 14, &splits, RidgeForm::Auto).is_some());
            let (model, cv) = fit_ridge_cv(z.view(), y.view(), &search, RidgeForm::Auto).unwrap();
            let direct = select_lambda(z.view(), y.view(), &search).unwrap();
            for (a, b) in cv.scores.iter().zip(&direct.scores) {
                assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
            }
            assert_eq!(cv.best_index, direct.best_index);
            let p = RidgeParams::new(direct.best_lambda).scale(LambdaScale::TimesN);
            let refit = Ridge::fit(z.view(), y.view(), &p).unwrap();
            assert_eq!(model.lambda_eff(), refit.lambda_eff());
            let err = max_abs(&(model.weights() - refit.weights()));
            assert!(err <= 1e-9 * max_abs(refit.weights()), "{err}");
        }
        // schemes the shared path cannot use: an explicit split that leaves rows out, a dual fit
        let split = vec![((0..40).collect::<Vec<_>>(), (50..90).collect::<Vec<_>>())];
        assert!(shared_chunks(90, 14, &split, RidgeForm::Auto).is_none());
        let kfold = folds(90, &Validation::KFold { folds: 3, seed: 1 }).unwrap();
        assert!(shared_chunks(90, 14, &kfold, RidgeForm::Dual).is_none());
        assert!(shared_chunks(90, 70, &kfold, RidgeForm::Auto).is_none());
    }

    #[test]
    fn streamed_fit_equals_the_whole_matrix_fit_bit_for_bit() {
        // more rows than one block of the refit (DEFAULT_ROW_BLOCK = 8192), so that G is accumulated over
        // two blocks; the features of a row do not depend on which other rows are asked with it
        let n = DEFAULT_ROW_BLOCK + 700;
        let (z, y) = (randn(n, 12, 41), randn(n, 3, 42));
        let sub: Vec<usize> = (0..n).step_by(7).collect();
        let (fit, valid) = (sub[..600].to_vec(), sub[600..1000].to_vec());
        for validation in [
            Validation::Split { train: fit, valid },
            Validation::KFold { folds: 3, seed: 9 },
        ] {
            let search = times_n_search(-6.0, 1.0, 8, validation, CvScore::ClassificationError);
            let mut asked = 0usize;
            let (model, cv) =
                fit_ridge_cv_streamed(n, 12, y.view(), &search, DEFAULT_MEMORY_CAP, |rows| {
                    asked += rows.len();
                    Ok(z.select(Axis(0), rows))
                })
                .unwrap();
            // every row once: the search's rows, then in the refit only the others
            assert_eq!(asked, n);
            // the same search and the same blocked refit as on the whole matrix
            let direct = select_lambda(z.view(), y.view(), &search).unwrap();
            assert_eq!(cv, direct);
            let p = RidgeParams::new(direct.best_lambda).scale(LambdaScale::TimesN);
            let whole = Ridge::fit(z.view(), y.view(), &p).unwrap();
            assert_eq!(model.weights(), whole.weights());
            assert_eq!(model.lambda_eff(), whole.lambda_eff());
        }
    }

    #[test]
    fn folds_in_parallel_give_the_sequential_scores_bit_for_bit() {
        // primal and dual paths, the shared-Gram path, and the exact-kernel search, on pools of 1, 2 and 3
        // threads (3 folds: one group of 3, or a group of 2 and one of 1)
        let (z, y) = (randn(120, 30, 51), randn(120, 2, 52));
        let gram = z.dot(&z.t());
        // under one OpenBLAS thread, as in a run (rfx_linalg::SingleBlasThread: ndarray's products call
        // OpenBLAS, whose multi-threaded GEMM rounds with its thread count)
        let _pin = rfx_linalg::SingleBlasThread::new();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut out = Vec::new();
                for (cols, validation) in [
                    (30, Validation::KFold { folds: 3, seed: 7 }),
                    (30, Validation::KFold { folds: 2, seed: 8 }),
                    (
                        30,
                        Validation::Holdout {
                            fraction: 0.25,
                            seed: 9,
                        },
                    ),
                ] {
                    let search = times_n_search(-7.0, 1.0, 9, validation, CvScore::Mse);
                    // primal (30 columns < 80 rows), dual (the 120 × 120 Gram's rows as features)
                    let zc = z.slice(s![.., ..cols]);
                    out.push(select_lambda(zc, y.view(), &search).unwrap().scores);
                    out.push(
                        select_lambda(gram.view(), y.view(), &search)
                            .unwrap()
                            .scores,
                    );
                    let (model, cv) = fit_ridge_cv(zc, y.view(), &search, RidgeForm::Auto).unwrap();
                    out.push(cv.scores);
                    out.push(model.weights().iter().copied().collect());
                    out.push(
                        select_lambda_gram(gram.view(), y.view(), &search)
                            .unwrap()
                            .scores,
                    );
                }
                out
            })
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(3));
    }

    #[test]
    fn streamed_fit_refuses_what_it_cannot_do() {
        let (z, y) = (randn(50, 4, 1), randn(50, 1, 2));
        let search = LambdaSearch {
            grid: vec![1e-3, 1.0],
            scale: LambdaScale::Plain,
            validation: Validation::KFold { folds: 2, seed: 1 },
            score: CvScore::Mse,
        };
        let ok = |rows: &[usize]| Ok(z.select(Axis(0), rows));
        // more features than rows: the dual form is fit_ridge_cv's
        let e = fit_ridge_cv_streamed(50, 60, y.view(), &search, DEFAULT_MEMORY_CAP, ok);
        assert!(e.unwrap_err().to_string().contains("dual"));
        // blocks of the wrong width
        let e = fit_ridge_cv_streamed(50, 5, y.view(), &search, DEFAULT_MEMORY_CAP, ok);
        assert!(e.unwrap_err().to_string().contains("expected (50, 5)"));
        // above the memory cap: refused before any feature is made
        let mut called = false;
        let e = fit_ridge_cv_streamed(50, 4, y.view(), &search, 100, |rows| {
            called = true;
            Ok(z.select(Axis(0), rows))
        });
        assert!(matches!(e, Err(RfxError::OutOfMemory { .. })), "{e:?}");
        assert!(!called);
        // targets of another length
        let e = fit_ridge_cv_streamed(49, 4, y.view(), &search, DEFAULT_MEMORY_CAP, ok);
        assert!(e.is_err());
    }

    /// A λ search over `count` log-spaced values $10^{\rm lo} \dots 10^{\rm hi}$, λ per training row.
    fn times_n_search(
        lo: f64,
        hi: f64,
        count: usize,
        validation: Validation,
        score: CvScore,
    ) -> LambdaSearch {
        LambdaSearch {
            grid: log10_grid(lo, hi, count).unwrap(),
            scale: LambdaScale::TimesN,
            validation,
            score,
        }
    }

    #[test]
    fn exact_krr_memory_counts_the_search() {
        let search = LambdaSearch {
            grid: log10_grid(-9.0, 0.0, 10).unwrap(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold { folds: 2, seed: 5 },
            score: CvScore::Mse,
        };
        let (n, nte) = (15_000, 1_660);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        // all rows: Gram + cross-Gram + the search's fold buffers (about 1.25 n² with 2 folds), no n² copy
        let need = exact_krr_memory_bytes(n, nte, n, &search);
        let base = krr_memory_bytes(n, 1) + f64_bytes((nte * n) as u128);
        assert_eq!(need, base + select_lambda_gram_memory_bytes(n, 1, &search));
        let n2 = f64_bytes((n * n) as u128) as f64;
        assert!(((need - base) as f64 / n2 - 1.25).abs() < 0.01);
        assert!(gib(need) > 3.5 && gib(need) < 8.0, "{}", gib(need));
        // a 3,000-row subset: its s × n rows while K_SS is cut out dominate the small search
        let sub = exact_krr_memory_bytes(n, nte, 3000, &search);
        assert_eq!(sub, base + f64_bytes(3000 * 3000 + 3000 + 3000 * n as u128));
        assert!(sub < need);
    }
}
