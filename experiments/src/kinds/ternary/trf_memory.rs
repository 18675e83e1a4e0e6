//! `trf_memory`: test accuracy (classification) or test MSE (regression) against the memory the random
//! features take, for ternary random features (TRF), low-precision RFF (LP-RFF, 8 and 1 bit) and Nyström
//! (32 bit) — the ternary random features paper's Figs. 1 (Cov-Type) and 4 (Census), on stand-in data.
//!
//! **Memory** (research notes §2.6, the paper's convention): `bits` $=$ `bits_per_feature` $\times\thinspace m
//! \times s$, the feature values of one mini-batch of $s$ = `batch` points (Zhang et al. 2019 train with
//! $s = 250$): 32 for Nyström and full-precision RFF, $b$ for LP-RFF-$b$, and `trf_bits` for TRF (1 by the
//! paper's count, $\log_2 3 \approx 1.585$ for an entropy-coded trit, 2 for the two bit-planes we store).
//!
//! **Feature maps**, all for the Gaussian kernel $k(\mathbf x, \mathbf y) = e^{-\Vert\mathbf x-\mathbf y\Vert^2/2}$ on
//! data scaled so that $\hat\tau = \frac1n\sum_i\Vert\mathbf x_i\Vert^2$ = `tau` (where TRF moment matching is
//! exact): LP-RFF-$b$ $= $ $b$-bit unbiased stochastic rounding of $\sqrt{2/m}\cos(W\mathbf x + \mathbf b)$
//! (rounding drawn once per point), `rff` the unrounded map, Nyström with $m$ uniformly drawn landmarks,
//! TRF-$\epsilon$ $= \sigma^{ter}(W^{ter}\mathbf x)/\sqrt m$ with thresholds matching $[\cos, \sin]$ (Algorithm 1).
//! Every map is fitted through `rfx_registry` (`registry_choice`).
//!
//! **Learners.** Regression: ridge $\mathbf w = (Z^\top Z + n\lambda I)^{-1}Z^\top\mathbf y$, λ = `lambda_ridge`,
//! on standardised targets. Classification (`classifier`): `ridge` (default) fits the same ridge to labels
//! $\pm1$ and predicts the sign; `logistic` is L2 logistic regression (L-BFGS, at most `max_iter`
//! iterations), $\frac1n\sum_i\log(1+e^{-s_i(\mathbf z_i^\top\mathbf w + b)}) + \frac\lambda2\Vert\mathbf w\Vert^2$,
//! λ = `lambda_logistic` (Zhang et al.'s weight decay $10^{-5}$ by default), gradient tolerance `logistic_tol`;
//! a fit that does not reach it in `max_iter` iterations is skipped ("(-)" with the solver's message). The
//! paper used 10 epochs of SGD.
//!
//! **Items near the boundary.** A classifier's `test_error` and `accuracy` are fractions of `n_test`
//! images decided by the sign of a score $s_i$; another machine's rounding changes a decision only where
//! $|s_i|$ is below the score's perturbation bound $\delta_i$. `boundary_items` counts those images, and
//! `rfx verify` lets the two fractions differ by that many images (`Tolerance::Items`). The ridge scores
//! $\mathbf z_i^\top\mathbf w$ are sums of products whose rounding is bounded relatively,
//! $\delta_i = r\thinspace\Vert\mathbf z_i\Vert\Vert\mathbf w\Vert$ with $r$ the cell's relative tolerance. L-BFGS stops at
//! a gradient norm $\Vert g\Vert \le$ `logistic_tol`, and the objective is $\lambda$-strongly convex in
//! $\mathbf w$, so each run's $\tilde{\mathbf w} = (\mathbf w, b)$ lies within $\Vert g\Vert/\lambda$ of the optimum
//! and two runs' within $2\thinspace\text{tol}/\lambda$ (tol = `logistic_tol`) of each other (taking λ as the curvature along the
//! unpenalized intercept too, where the loss's own curvature $\frac1n\sum_i\sigma^\prime(s_i)$ is far larger):
//! $\delta_i = 2\thinspace\text{tol}\thinspace\Vert\tilde{\mathbf z}_i\Vert/\lambda + r\thinspace\Vert\tilde{\mathbf z}_i\Vert\Vert\tilde{\mathbf w}\Vert$,
//! $\tilde{\mathbf z}_i = (\mathbf z_i, 1)$ (every image when λ = 0).
//!
//! **Cells.** `task` (`mnist-parity`: MNIST even vs odd digits; `fashion-parity`: Fashion-MNIST classes
//! 0–4 vs 5–9; `protein`: UCI protein regression), `method` (`lp-rff-8`, `lp-rff-1`, `rff`, `nystrom`,
//! `trf-<ε>`), `m`, `seed`. The train/test subsample of a `(task, seed)` is drawn from
//! `rng_stream(stream_seed, "data;task=..;seed=..")` and shared by every method and $m$; the features use
//! the cell's own stream. Nyström above `nystrom_max_m` landmarks and ridge above `ridge_max_m` features
//! are skipped (cost $O(m^3)$, $O(nm^2)$), shown as "(-)".

use crate::kinds::tabular::DataCache;
use crate::kinds::trf_common::{idx_data, timed, DataSlot, SharedCache};
use ndarray::{Array1, Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, FeatureMap, FitData, RfxRng};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::{MethodSpec, Params, RawValue};
use rfx_solvers::classify::{LogisticParams, LogisticRegression};
use rfx_solvers::ridge::{LambdaScale, Ridge, RidgeParams};

/// The kind.
pub struct TrfMemory;

/// Marks a logistic fit that hit `max_iter` (the cell is skipped rather than failing the run).
const NOT_CONVERGED: &str = "not converged: ";

const TASKS: [&str; 3] = ["mnist-parity", "fashion-parity", "protein"];
const METHODS: &str =
    "\"lp-rff-8\", \"lp-rff-1\", \"rff\", \"nystrom\" or \"trf-<eps>\" with eps in [0, 1), e.g. trf-0.5";

/// A feature method.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    LpRff(u32),
    Rff,
    Nystrom,
    Trf(f64),
}

fn parse_method(s: &str) -> Option<Method> {
    match s {
        "lp-rff-8" => Some(Method::LpRff(8)),
        "lp-rff-1" => Some(Method::LpRff(1)),
        "rff" => Some(Method::Rff),
        "nystrom" => Some(Method::Nystrom),
        _ => {
            let eps: f64 = s.strip_prefix("trf-")?.parse().ok()?;
            (0.0..1.0).contains(&eps).then_some(Method::Trf(eps))
        }
    }
}

/// The registry method and parameters of a method, drawn from the cell's stream as before the registry:
/// `rff` is the registry's `rff(phase=random, sigma=1)`, `trf-<eps>` its
/// `ternary(activation=cos-sin, sparsity=eps)`, `lp-rff-b` its `lp-rff(bits=b, noise=stream)` (rounding
/// continues the cell's stream, training rows first), `nystrom` its `nystrom(gram=pairwise)` (the Gram of
/// `rfx_kernels::GaussianKernel`, σ = 1).
fn registry_choice(method: Method) -> Result<(&'static MethodSpec, Params), String> {
    let (name, given): (&str, Vec<(&str, RawValue)>) = match method {
        Method::Rff => (
            "rff",
            vec![
                ("phase", RawValue::from("random")),
                ("sigma", RawValue::from(1.0)),
            ],
        ),
        Method::Trf(eps) => (
            "ternary",
            vec![
                ("activation", RawValue::from("cos-sin")),
                ("sparsity", RawValue::from(eps)),
            ],
        ),
        Method::LpRff(bits) => (
            "lp-rff",
            vec![
                ("bits", RawValue::from(i64::from(bits))),
                ("noise", RawValue::from("stream")),
                ("sigma", RawValue::from(1.0)),
            ],
        ),
        Method::Nystrom => (
            "nystrom",
            vec![
                ("gram", RawValue::from("pairwise")),
                ("sigma", RawValue::from(1.0)),
            ],
        ),
    };
    let spec = rfx_registry::method(name)?;
    Ok((spec, spec.params_from(&given)?))
}

/// The sweep check of `method`: a known word whose registry parameters are in range.
fn check_method(v: &str) -> Result<(), String> {
    let bad = || format!("invalid value \"{v}\"; allowed: {METHODS}");
    let method = parse_method(v).ok_or_else(bad)?;
    registry_choice(method)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", bad()))
}

/// `[trf_memory]`: sizes, the TRF threshold factor τ, batch size, bits per TRF entry, the classifiers'
/// settings (`classifier = "ridge"` or `"logistic"` is the field `logistic`), the caps of Nyström and exact
/// ridge, and the seed of the data stream (the fingerprint formats these, `settings()`).
#[derive(serde::Deserialize)]
#[serde(default)]
struct Settings {
    n_train: usize,
    n_test: usize,
    tau: f64,
    batch: usize,
    trf_bits: f64,
    lambda_logistic: f64,
    lambda_ridge: f64,
    max_iter: usize,
    logistic_tol: f64,
    #[serde(rename = "classifier", deserialize_with = "classifier_is_logistic")]
    logistic: bool,
    nystrom_max_m: usize,
    ridge_max_m: usize,
    stream_seed: u64,
}

/// `classifier = "logistic"` → true, `"ridge"` → false; the allowed values are added by [`Section::typed`].
fn classifier_is_logistic<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    match name.as_str() {
        "ridge" => Ok(false),
        "logistic" => Ok(true),
        _ => Err(serde::de::Error::custom(format!(
            "unknown value \"{name}\""
        ))),
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            n_train: 20_000,
            n_test: 5_000,
            tau: 0.5,
            batch: 250,
            trf_bits: 1.0,
            lambda_logistic: 1e-5,
            lambda_ridge: 1e-4,
            max_iter: 300,
            logistic_tol: 1e-5,
            logistic: false,
            nystrom_max_m: 5000,
            ridge_max_m: 5000,
            stream_seed: 0,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("n_train", "integers from 10 to 60000"),
        ("n_test", "integers from 10 to 10000"),
        ("tau", "numbers from 0.001 to 100"),
        ("batch", "integers from 1 to 1000000"),
        ("trf_bits", "numbers from 1 to 2"),
        ("lambda_logistic", "numbers from 0 to 1000000"),
        ("lambda_ridge", "numbers from 0 to 1000000"),
        ("max_iter", "integers from 1 to 100000"),
        ("logistic_tol", "numbers from 0.00000000000001 to 1"),
        ("classifier", "ridge, logistic"),
        ("nystrom_max_m", "integers from 1 to 100000"),
        ("ridge_max_m", "integers from 1 to 100000"),
        ("stream_seed", "integers from 0 to 9223372036854775807"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("n_train", self.n_train as i128, 10, 60_000)?;
        int_in("n_test", self.n_test as i128, 10, 10_000)?;
        float_in("tau", self.tau, 1e-3, 100.0)?;
        int_in("batch", self.batch as i128, 1, 1_000_000)?;
        float_in("trf_bits", self.trf_bits, 1.0, 2.0)?;
        float_in("lambda_logistic", self.lambda_logistic, 0.0, 1e6)?;
        float_in("lambda_ridge", self.lambda_ridge, 0.0, 1e6)?;
        int_in("max_iter", self.max_iter as i128, 1, 100_000)?;
        float_in("logistic_tol", self.logistic_tol, 1e-14, 1.0)?;
        int_in("nystrom_max_m", self.nystrom_max_m as i128, 1, 100_000)?;
        int_in("ridge_max_m", self.ridge_max_m as i128, 1, 100_000)?;
        int_in("stream_seed", self.stream_seed as i128, 0, i64::MAX as i128)
    }
}

/// A prepared train/test split: inputs scaled to $\hat\tau$ = `tau`, and labels (classification) or
/// standardised targets (regression).
struct Split {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    /// Class labels in {0, 1} (classification) — empty for regression.
    ltr: Vec<usize>,
    lte: Vec<usize>,
    /// Standardised targets (regression) — empty for classification.
    ytr: Array1<f64>,
    yte: Array1<f64>,
}

struct MemoryRunner {
    s: Settings,
    mnist: DataSlot,
    fashion: DataSlot,
    tables: DataCache,
    splits: SharedCache<Split>,
}

impl Kind for TrfMemory {
    fn name(&self) -> &'static str {
        "trf_memory"
    }
    fn about(&self) -> &'static str {
        "Test accuracy / MSE vs feature memory in bits: TRF vs LP-RFF (8, 1 bit) vs Nystrom (TRF paper, Figs. 1, 4)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "task",
                allowed: "\"mnist-parity\", \"fashion-parity\" (binary classification) or \"protein\" (regression)",
                check: |v| rfx_harness::kind::check_choice(v, &TASKS),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: METHODS,
                check: |v| match v.as_str() {
                    Some(s) => check_method(s),
                    None => Err(format!("invalid value \"{v}\"; allowed: {METHODS}")),
                },
                required: true,
            },
            crate::kinds::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(MemoryRunner {
            s,
            mnist: DataSlot::new(),
            fashion: DataSlot::new(),
            tables: DataCache::default(),
            splits: SharedCache::default(),
        }))
    }
}

/// Bits per stored feature value of a method (the paper's accounting; `trf_bits` for TRF).
fn bits_per_feature(method: Method, trf_bits: f64) -> f64 {
    match method {
        Method::LpRff(b) => f64::from(b),
        Method::Rff | Method::Nystrom => 32.0,
        Method::Trf(_) => trf_bits,
    }
}

/// Multiplies `x` by the factor that makes the mean squared row norm of `fit_on` equal `tau`.
fn tau_factor(fit_on: &Array2<f64>, tau: f64) -> f64 {
    let n = fit_on.nrows().max(1) as f64;
    let t = fit_on.iter().map(|v| v * v).sum::<f64>() / n;
    if t > 0.0 {
        (tau / t).sqrt()
    } else {
        1.0
    }
}

impl MemoryRunner {
    /// The split of `(task, seed)`: a seeded subsample, standardised / centred with training statistics
    /// and scaled so that the training $\hat\tau$ equals `tau` (the same factor for the test points).
    fn split(&self, task: &str, seed: &str) -> Result<Split, CellError> {
        let s = &self.s;
        let mut rng = rng_stream(s.stream_seed, &format!("data;task={task};seed={seed}"));
        let pick =
            |len: usize, k: usize, what: &str, rng: &mut RfxRng| -> Result<Vec<usize>, CellError> {
                if k > len {
                    return Err(CellError::Fatal(format!(
                        "task {task}: asked for {k} {what} points, the data have {len}"
                    )));
                }
                let mut idx: Vec<usize> = (0..len).collect();
                idx.shuffle(rng);
                idx.truncate(k);
                Ok(idx)
            };
        match task {
            "mnist-parity" | "fashion-parity" => {
                let tt = if task == "mnist-parity" {
                    idx_data(&self.mnist, "mnist")?
                } else {
                    idx_data(&self.fashion, "fashion-mnist")?
                };
                let itr = pick(tt.train.x.nrows(), s.n_train, "training", &mut rng)?;
                let ite = pick(tt.test.x.nrows(), s.n_test, "test", &mut rng)?;
                let mut xtr = tt.train.x.select(Axis(0), &itr);
                let mut xte = tt.test.x.select(Axis(0), &ite);
                let mean = xtr.mean_axis(Axis(0)).unwrap_or_default();
                xtr -= &mean;
                xte -= &mean;
                let c = tau_factor(&xtr, s.tau);
                xtr *= c;
                xte *= c;
                let label = |d: usize| {
                    if task == "mnist-parity" {
                        d % 2
                    } else {
                        usize::from(d >= 5)
                    }
                };
                Ok(Split {
                    xtr,
                    xte,
                    ltr: itr.iter().map(|&i| label(tt.train.labels[i])).collect(),
                    lte: ite.iter().map(|&i| label(tt.test.labels[i])).collect(),
                    ytr: Array1::zeros(0),
                    yte: Array1::zeros(0),
                })
            }
            _ => {
                let t = self.tables.get("uci/protein")?;
                let idx = pick(
                    t.x.nrows(),
                    s.n_train + s.n_test,
                    "training + test",
                    &mut rng,
                )?;
                let (itr, ite) = idx.split_at(s.n_train);
                let mut xtr = t.x.select(Axis(0), itr);
                let mut xte = t.x.select(Axis(0), ite);
                let mean = xtr.mean_axis(Axis(0)).unwrap_or_default();
                let sd = xtr
                    .std_axis(Axis(0), 0.0)
                    .mapv(|v| if v > 0.0 { v } else { 1.0 });
                xtr = (xtr - &mean) / &sd;
                xte = (xte - &mean) / &sd;
                let c = tau_factor(&xtr, s.tau);
                xtr *= c;
                xte *= c;
                let ytr: Array1<f64> = itr.iter().map(|&i| t.y[i]).collect();
                let yte: Array1<f64> = ite.iter().map(|&i| t.y[i]).collect();
                let (ym, ys) = (ytr.mean().unwrap_or(0.0), ytr.std(0.0).max(1e-12));
                Ok(Split {
                    xtr,
                    xte,
                    ltr: Vec::new(),
                    lte: Vec::new(),
                    ytr: ytr.mapv(|v| (v - ym) / ys),
                    yte: yte.mapv(|v| (v - ym) / ys),
                })
            }
        }
    }

    /// Train and test features of a method.
    fn features(
        &self,
        method: Method,
        m: usize,
        d: &Split,
        rng: &mut RfxRng,
    ) -> Result<(Array2<f64>, Array2<f64>), String> {
        let e = |e: rfx_core::RfxError| e.to_string();
        let (spec, params) = registry_choice(method)?;
        let f = spec
            .fit(m, &params, FitData::Rows(d.xtr.view()), rng)
            .map_err(e)?;
        // training rows first: LP-RFF's rounding continues the stream in this order
        let ztr = f.transform(d.xtr.view()).map_err(e)?;
        Ok((ztr, f.transform(d.xte.view()).map_err(e)?))
    }
}

impl Runner for MemoryRunner {
    fn cell_tolerance(&self, cell: &Cell, metric: &str) -> rfx_harness::kind::Tolerance {
        use rfx_harness::kind::Tolerance;
        if matches!(metric, "test_error" | "accuracy" | "boundary_items") {
            // fractions of the test images, compared up to the images near the decision boundary (a count
            // of those images moves with them: it is compared the same way against itself)
            return Tolerance::Items {
                boundary: "boundary_items",
                items: self.s.n_test,
            };
        }
        let t = self.tolerance(metric);
        match cell.str("method") {
            Ok(method) => crate::kinds::method_tolerance(t, method),
            Err(_) => t,
        }
    }
    /// Regression cells have no accuracy and no boundary items, classification cells no MSE (NaN).
    fn nan_metrics(&self) -> Vec<String> {
        ["accuracy", "test_mse", "boundary_items"]
            .into_iter()
            .map(String::from)
            .collect()
    }
    fn metrics(&self) -> Vec<String> {
        [
            "bits",
            "test_error",
            "accuracy",
            "test_mse",
            "boundary_items",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }
    fn timings(&self) -> Vec<String> {
        vec!["time_features_s".into(), "time_fit_s".into()]
    }
    fn settings(&self) -> String {
        let s = &self.s;
        // `logistic_tol` only matters for the logistic classifier; it is left out otherwise so that ridge
        // results computed before the setting existed keep their fingerprint (and can be resumed).
        let tol = if s.logistic {
            format!("logistic_tol={};", s.logistic_tol)
        } else {
            String::new()
        };
        format!(
            "n_train={};n_test={};tau={};batch={};trf_bits={};lambda_logistic={};lambda_ridge={};max_iter={};\
             {tol}logistic={};nystrom_max_m={};ridge_max_m={};stream_seed={}",
            s.n_train,
            s.n_test,
            s.tau,
            s.batch,
            s.trf_bits,
            s.lambda_logistic,
            s.lambda_ridge,
            s.max_iter,
            s.logistic,
            s.nystrom_max_m,
            s.ridge_max_m,
            s.stream_seed
        )
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let task = cell.str("task")?.to_string();
        let method = parse_method(cell.str("method")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad method", cell.key())))?;
        let m = usize::try_from(cell.int("m")?)
            .map_err(|_| CellError::Fatal(format!("cell {}: bad m", cell.key())))?;
        let regression = task == "protein";
        if method == Method::Nystrom && m > self.s.nystrom_max_m.min(self.s.n_train) {
            return Err(CellError::Skipped(format!(
                "Nyström with {m} landmarks is above nystrom_max_m = {} (or n_train)",
                self.s.nystrom_max_m
            )));
        }
        if (regression || !self.s.logistic) && m > self.s.ridge_max_m {
            return Err(CellError::Skipped(format!(
                "ridge with {m} features is above ridge_max_m = {}",
                self.s.ridge_max_m
            )));
        }
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let data = self.splits.get(&format!("task={task};seed={seed}"), || {
            self.split(&task, &seed).map_err(|e| match e {
                CellError::Fatal(s) | CellError::Skipped(s) => s,
            })
        })?;
        let key = cell.key();
        let fatal = |what: &str, e: String| CellError::Fatal(format!("cell {key}: {what}: {e}"));
        let (r, time_features) = timed(|| self.features(method, m, &data, rng));
        let (ztr, zte) = r.map_err(|e| fatal("features", e))?;
        let bits = bits_per_feature(method, self.s.trf_bits) * m as f64 * self.s.batch as f64;
        // the relative rounding bound of this cell's scores: its metrics' relative tolerance
        let r = match self.cell_tolerance(cell, "test_mse") {
            rfx_harness::kind::Tolerance::Relative(r) => r,
            _ => rfx_harness::kind::DEFAULT_RELATIVE_TOLERANCE,
        };
        let (r, time_fit) = timed(|| -> Result<(f64, f64, f64, f64), String> {
            if regression {
                let params = RidgeParams::new(self.s.lambda_ridge).scale(LambdaScale::TimesN);
                let model = Ridge::fit_vec(ztr.view(), data.ytr.view(), &params)
                    .map_err(|e| e.to_string())?;
                let pred = model.predict(zte.view()).map_err(|e| e.to_string())?;
                let err = &pred.column(0) - &data.yte;
                let mse = err.dot(&err) / err.len() as f64;
                Ok((mse, f64::NAN, mse, f64::NAN))
            } else if !self.s.logistic {
                // ridge classifier: least squares on ±1 labels, class = sign of the prediction
                let y: Array1<f64> = data
                    .ltr
                    .iter()
                    .map(|&l| if l == 1 { 1.0 } else { -1.0 })
                    .collect();
                let params = RidgeParams::new(self.s.lambda_ridge).scale(LambdaScale::TimesN);
                let model =
                    Ridge::fit_vec(ztr.view(), y.view(), &params).map_err(|e| e.to_string())?;
                let pred = model.predict(zte.view()).map_err(|e| e.to_string())?;
                let correct = pred
                    .column(0)
                    .iter()
                    .zip(&data.lte)
                    .filter(|(v, &l)| (**v > 0.0) == (l == 1))
                    .count();
                let acc = correct as f64 / data.lte.len().max(1) as f64;
                let w_norm = norm(model.weights().iter());
                let near =
                    boundary_items(pred.column(0).iter().copied(), &zte, |zn| r * zn * w_norm);
                Ok((1.0 - acc, acc, f64::NAN, near))
            } else {
                let params = LogisticParams {
                    max_iter: self.s.max_iter,
                    tol: self.s.logistic_tol,
                    ..LogisticParams::new(self.s.lambda_logistic)
                };
                let model = LogisticRegression::fit(ztr.view(), &data.ltr, 2, &params).map_err(
                    |e| match e {
                        rfx_core::RfxError::Numerical(m) if m.contains("did not converge") => {
                            format!("{NOT_CONVERGED}{m}")
                        }
                        e => e.to_string(),
                    },
                )?;
                let pred = model.predict(zte.view()).map_err(|e| e.to_string())?;
                let correct = pred.iter().zip(&data.lte).filter(|(a, b)| a == b).count();
                let acc = correct as f64 / data.lte.len().max(1) as f64;
                let scores = model
                    .decision_function(zte.view())
                    .map_err(|e| e.to_string())?;
                let w_norm = norm(model.weights().iter().chain(model.bias().iter()));
                let (tol, lambda) = (self.s.logistic_tol, self.s.lambda_logistic);
                let near = boundary_items(scores.column(0).iter().copied(), &zte, |zn| {
                    // ‖(z, 1)‖ from ‖z‖
                    let zt = (zn * zn + 1.0).sqrt();
                    2.0 * tol * zt / lambda + r * zt * w_norm
                });
                Ok((1.0 - acc, acc, f64::NAN, near))
            }
        });
        let (test_error, accuracy, test_mse, near) =
            r.map_err(|e| match e.strip_prefix(NOT_CONVERGED) {
                // an unconverged logistic fit is recorded as "(-)" with the solver's message, not used
                Some(m) => CellError::Skipped(format!(
                    "logistic regression: {m} (raise max_iter or logistic_tol)"
                )),
                None => fatal("fit", e),
            })?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![bits, test_error, accuracy, test_mse, near],
            timings: vec![time_features, time_fit],
        })
    }
}

/// The Euclidean norm of `v`.
fn norm<'a>(v: impl Iterator<Item = &'a f64>) -> f64 {
    v.map(|x| x * x).sum::<f64>().sqrt()
}

/// How many of the scores $s_i$ lie within their perturbation bound of the decision boundary,
/// $|s_i| \le \delta_i$ with $\delta_i$ = `bound`$(\Vert\mathbf z_i\Vert)$ for the test features $\mathbf z_i$ (rows of
/// `z`); a non-finite bound (λ = 0) counts the item.
fn boundary_items(
    scores: impl Iterator<Item = f64>,
    z: &Array2<f64>,
    bound: impl Fn(f64) -> f64,
) -> f64 {
    scores
        .zip(z.rows())
        .filter(|(s, zi)| {
            let d = bound(norm(zi.iter()));
            d.is_nan() || s.abs() <= d
        })
        .count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_methods() {
        assert_eq!(parse_method("lp-rff-8"), Some(Method::LpRff(8)));
        assert_eq!(parse_method("nystrom"), Some(Method::Nystrom));
        assert_eq!(parse_method("trf-0.5"), Some(Method::Trf(0.5)));
        assert_eq!(parse_method("trf-1.0"), None);
        assert_eq!(parse_method("lp-rff-4"), None);
        assert!(check_method("trf-0.5").is_ok() && check_method("rff").is_ok());
        let e = check_method("trf-0.995").unwrap_err();
        assert!(e.contains("trf-0.995") && e.contains("sparsity"), "{e}");
        let name = |me| registry_choice(me).map(|(spec, _)| spec.name);
        assert_eq!(name(Method::Rff), Ok("rff"));
        assert_eq!(name(Method::Trf(0.5)), Ok("ternary"));
        assert_eq!(name(Method::LpRff(8)), Ok("lp-rff"));
        assert_eq!(name(Method::Nystrom), Ok("nystrom"));
    }

    #[test]
    fn boundary_items_count_the_scores_within_their_bound() {
        // rows of norm 1, 2, 3, 4 (the bound is 0.1 times the norm): scores 0.05 and -0.15 lie within it, 0.31 and -1.0 not
        let z = ndarray::array![[1.0, 0.0], [0.0, 2.0], [3.0, 0.0], [0.0, 4.0]];
        let scores = [0.05, -0.15, 0.31, -1.0];
        assert_eq!(boundary_items(scores.into_iter(), &z, |n| 0.1 * n), 2.0);
        // λ = 0 gives an infinite bound: every item; a NaN bound counts the item too
        assert_eq!(boundary_items(scores.into_iter(), &z, |n| n / 0.0), 4.0);
        assert_eq!(boundary_items(scores.into_iter(), &z, |_| f64::NAN), 4.0);
    }

    #[test]
    fn memory_follows_the_paper_accounting() {
        // TRF at 1 bit is 8x below LP-RFF-8 and 32x below Nystrom at the same m (research notes §2.6).
        let b = |me| bits_per_feature(me, 1.0);
        assert_eq!(b(Method::LpRff(8)) / b(Method::Trf(0.5)), 8.0);
        assert_eq!(b(Method::Nystrom) / b(Method::Trf(0.5)), 32.0);
        assert_eq!(bits_per_feature(Method::Trf(0.1), 2.0), 2.0);
    }

    #[test]
    fn tau_factor_scales_mean_squared_norm() {
        let x = Array2::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f64);
        let c = tau_factor(&x, 0.5);
        let y = &x * c;
        let t = y.iter().map(|v| v * v).sum::<f64>() / 4.0;
        assert!((t - 0.5).abs() < 1e-12);
    }
}
