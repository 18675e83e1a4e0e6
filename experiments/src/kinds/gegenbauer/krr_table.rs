//! `krr_table`: kernel ridge regression with m random features per method, λ by k-fold cross-validation —
//! the random Gegenbauer features paper's Table 2 (Gaussian kernel) and Table 4 (ReLU NTK).
//!
//! One cell = (data set, method, seed): a random `1 − test_fraction` / `test_fraction` split of the rows
//! (the same for every method at a given data set and seed), inputs standardised with the training
//! statistics (a latitude/longitude grid, `ferret/...`: the rows mapped onto the unit sphere $\mathbb S^2$,
//! other columns such as the month standardised, and on the sphere alone the unit-norm fast path of the
//! maps: Gegenbauer with $s = 1$ and $m$ directions), the target centred by its training mean (no feature needs to carry a constant), features
//! fitted on the training rows with the cell's RNG, λ chosen on a log grid by k-fold cross-validation on the
//! training rows (one eigendecomposition per fold, `rfx_solvers::ridge::select_lambda`; folds shared by all
//! methods), refit on the whole training set, test MSE. Exact KRR (`method = "exact"`) chooses λ the same
//! way from the training Gram (`select_lambda_gram`), on `exact_cv_rows` training rows: a random subset
//! of that many rows (default 3,000), or `"all"` of them; it is a skipped cell when its peak memory
//! (Grams and the λ search's fold buffers) exceeds `exact_memory_gb`. Timings: `feature_s` (fit the map
//! and transform training and test rows, or the exact Grams), `solve_s` (cross-validation, refit,
//! prediction).

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array2, Axis};
use rfx_core::{stream_seed, Kernel, RfxRng};
use rfx_data::{subsample, train_test_split};
use rfx_solvers::ridge::{
    exact_krr_memory_bytes, fit_ridge_cv, select_lambda_gram, CvResult, CvScore, KernelRidge,
    KrrParams, LambdaScale, LambdaSearch, RidgeForm, Validation,
};

use crate::kinds::tabular::{
    check_dataset, check_table_method, derived, fit_method, lambda_grid, method_kernel,
    methods_allowed, DataCache, DataNeed, MethodSettings, TableKernel,
};
use rfx_harness::config::{choice_in, float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::{bias_of, with_bias, MethodChoice, ParamDoc, ParamKind, Params, BIAS};

/// The kind.
pub struct KrrTable;

/// `[krr_table]`: the table's kernel and its bandwidth / depth, exact KRR's memory cap and λ-search rows,
/// the methods' settings, the split, the folds and λ grid of the cross-validation, and the row cap. Settings
/// that the first tables did not have enter the fingerprint only when written ([`Settings::extra`]).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    kernel: String,
    /// Gaussian bandwidth σ (default $1/\sqrt2$); `None`: not written.
    sigma: Option<f64>,
    /// NTK depth $L$ (default 2); `None`: not written.
    ntk_depth: Option<usize>,
    /// Multiply the Gaussian bandwidth by $\sqrt d$: on standardised inputs $\mathbb E\Vert x-y\Vert^2 = 2d$,
    /// so $\sigma = c\sqrt d$ gives every data set the same kernel scale.
    sigma_times_sqrt_dim: bool,
    /// Memory cap of exact KRR in GiB (default 4); `None`: not written.
    exact_memory_gb: Option<f64>,
    /// Rows on which exact KRR chooses λ: a number or `"all"` (default 3,000); `None`: not written.
    exact_cv_rows: Option<CvRowsSetting>,
    features: usize,
    degree: usize,
    radial_terms: usize,
    polysketch_degree: usize,
    maclaurin_degree: usize,
    test_fraction: f64,
    cv_folds: usize,
    lambda_log10_min: f64,
    lambda_log10_max: f64,
    lambda_count: usize,
    max_rows: usize,
    /// Per data set, a factor applied to the target before anything else (units: `0.001` turns metres into
    /// kilometres, so MSEs read in km²); data sets not named keep their units.
    target_scale: std::collections::BTreeMap<String, f64>,
}

/// `exact_cv_rows` as written: a number of rows or a word (`"all"`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum CvRowsSetting {
    Rows(i64),
    Word(String),
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            kernel: "gaussian".into(),
            sigma: None,
            ntk_depth: None,
            sigma_times_sqrt_dim: false,
            exact_memory_gb: None,
            exact_cv_rows: None,
            features: 1024,
            degree: 15,
            radial_terms: 4,
            polysketch_degree: 8,
            maclaurin_degree: 20,
            test_fraction: 0.1,
            cv_folds: 2,
            lambda_log10_min: -9.0,
            lambda_log10_max: 0.0,
            lambda_count: 10,
            max_rows: 0,
            target_scale: Default::default(),
        }
    }
}

const CV_ROWS: &str = "\"all\" (every training row) or an integer from 10 to 100000";

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("kernel", "gaussian, relu-ntk"),
        ("sigma", "numbers from 0.000001 to 1000000"),
        ("ntk_depth", "integers from 1 to 8"),
        ("sigma_times_sqrt_dim", "true, false"),
        ("exact_memory_gb", "numbers from 0.001 to 1000000"),
        ("exact_cv_rows", CV_ROWS),
        ("features", "integers from 16 to 65536"),
        ("degree", "integers from 0 to 60"),
        ("radial_terms", "integers from 1 to 64"),
        ("polysketch_degree", "integers from 1 to 32"),
        ("maclaurin_degree", "integers from 1 to 60"),
        ("test_fraction", "numbers from 0.01 to 0.9"),
        ("cv_folds", "integers from 2 to 20"),
        ("lambda_log10_min", "numbers from -30 to 30"),
        ("lambda_log10_max", "numbers from -30 to 30"),
        ("lambda_count", "integers from 1 to 200"),
        ("max_rows", "integers from 0 to 4294967295"),
        ("target_scale", TARGET_SCALE),
    ];
    fn check(&self) -> Result<(), Invalid> {
        choice_in("kernel", &self.kernel, &["gaussian", "relu-ntk"])?;
        if let Some(v) = self.sigma {
            float_in("sigma", v, 1e-6, 1e6)?;
        }
        if let Some(v) = self.ntk_depth {
            int_in("ntk_depth", v as i128, 1, 8)?;
        }
        if let Some(v) = self.exact_memory_gb {
            float_in("exact_memory_gb", v, 0.001, 1e6)?;
        }
        self.exact_cv_rows()?;
        self.methods().check()?;
        float_in("test_fraction", self.test_fraction, 0.01, 0.9)?;
        int_in("cv_folds", self.cv_folds as i128, 2, 20)?;
        self.grid()?;
        int_in("max_rows", self.max_rows as i128, 0, i128::from(u32::MAX))?;
        for (name, &v) in &self.target_scale {
            if rfx_data::dataset(name).is_err() {
                return Err(Invalid {
                    key: "target_scale",
                    message: format!("unknown data set \"{name}\"; allowed: {TARGET_SCALE}"),
                });
            }
            float_in("target_scale", v, 1e-12, 1e12)?;
        }
        Ok(())
    }
}

const TARGET_SCALE: &str =
    "a table of registered data set = factor, each a number from 1e-12 to 1e12 (e.g. { \"ferret/etopo60\" = 0.001 })";

impl Settings {
    /// The Gaussian bandwidth σ.
    fn sigma(&self) -> f64 {
        self.sigma.unwrap_or(std::f64::consts::FRAC_1_SQRT_2)
    }

    /// The NTK depth $L$.
    fn depth(&self) -> usize {
        self.ntk_depth.unwrap_or(2)
    }

    /// The memory cap of exact KRR in bytes.
    fn exact_cap(&self) -> u64 {
        match self.exact_memory_gb {
            Some(v) => (v * (1u64 << 30) as f64) as u64,
            None => 4 << 30,
        }
    }

    /// The λ-search rows of exact KRR.
    fn exact_cv_rows(&self) -> Result<CvRows, Invalid> {
        match &self.exact_cv_rows {
            None => Ok(CvRows::Subset(3000)),
            Some(CvRowsSetting::Rows(i)) if (10..=100_000).contains(i) => {
                Ok(CvRows::Subset(*i as usize))
            }
            Some(CvRowsSetting::Word(w)) if w == "all" => Ok(CvRows::All),
            Some(other) => Err(Invalid {
                key: "exact_cv_rows",
                message: format!(
                    "unknown value \"{}\"; allowed: {CV_ROWS}",
                    match other {
                        CvRowsSetting::Rows(i) => i.to_string(),
                        CvRowsSetting::Word(w) => w.clone(),
                    }
                ),
            }),
        }
    }

    /// The λ grid of the cross-validation ([`lambda_grid`]).
    fn grid(&self) -> Result<Vec<f64>, Invalid> {
        lambda_grid(
            self.lambda_log10_min,
            self.lambda_log10_max,
            self.lambda_count,
        )
    }

    /// The feature maps' settings.
    fn methods(&self) -> MethodSettings {
        MethodSettings {
            features: self.features,
            degree: self.degree,
            radial_terms: self.radial_terms,
            unit_norm: false,
            polysketch_degree: self.polysketch_degree,
            maclaurin_degree: self.maclaurin_degree,
        }
    }

    /// The settings beyond those of the first tables, for the fingerprint: the bandwidth of an NTK table
    /// and the depth of a Gaussian table (they only matter for methods of the other kernel) when written,
    /// the exact-KRR cap and rows when written.
    fn extra(&self) -> String {
        let mut extra = String::new();
        if self.kernel == "relu-ntk" {
            if self.sigma.is_some() || self.sigma_times_sqrt_dim {
                extra += &format!(
                    ";gaussian_sigma={};sigma_times_sqrt_dim={}",
                    self.sigma(),
                    self.sigma_times_sqrt_dim
                );
            }
        } else if self.ntk_depth.is_some() {
            extra += &format!(";ntk_depth={}", self.depth());
        }
        if let Some(v) = self.exact_memory_gb {
            extra += &format!(";exact_memory_gb={v}");
        }
        // the first tables' fingerprint wrote the number; "all" is new
        match (&self.exact_cv_rows, self.exact_cv_rows()) {
            (None, _) | (_, Err(_)) => {}
            (Some(_), Ok(CvRows::All)) => extra += ";exact_cv_rows=all",
            (Some(_), Ok(CvRows::Subset(k))) => extra += &format!(";exact_cv_rows={k}"),
        }
        if !self.target_scale.is_empty() {
            extra += &format!(";target_scale={:?}", self.target_scale);
        }
        extra
    }
}

struct KrrRunner {
    s: Settings,
    /// [`Settings::methods`].
    methods: MethodSettings,
    /// [`Settings::grid`].
    grid: Vec<f64>,
    /// [`Settings::exact_cv_rows`].
    exact_cv_rows: CvRows,
    data: DataCache,
}

const DATASETS: &str =
    "a registered regression set (uci/<set>, uci-raw/<set>, or a latitude/longitude grid ferret/<set>)";

impl Kind for KrrTable {
    fn name(&self) -> &'static str {
        "krr_table"
    }
    fn about(&self) -> &'static str {
        "kernel ridge regression with m features per method, lambda by k-fold CV: test MSE and times (Gegenbauer paper, Tables 2 and 4)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: DATASETS,
                check: |v| check_dataset(v, DataNeed::Regression),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: methods_allowed(),
                check: check_krr_method,
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(KrrRunner {
            methods: s.methods(),
            grid: derived("krr_table", s.grid())?,
            exact_cv_rows: derived("krr_table", s.exact_cv_rows())?,
            s,
            data: DataCache::default(),
        }))
    }
}

impl Runner for KrrRunner {
    fn cell_tolerance(&self, cell: &Cell, metric: &str) -> rfx_harness::kind::Tolerance {
        let t = self.tolerance(metric);
        match cell.str("method") {
            Ok(method) => crate::kinds::method_tolerance(t, method),
            Err(_) => t,
        }
    }
    fn metrics(&self) -> Vec<String> {
        [
            "test_mse",
            "rel_mse",
            "feature_s",
            "solve_s",
            "total_s",
            "lambda",
            "dim",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn settings(&self) -> String {
        // the first tables' format, extended only by settings they did not have
        let s = &self.s;
        let kernel = match s.kernel.as_str() {
            "relu-ntk" => TableKernel::ReluNtk { depth: s.depth() },
            _ => TableKernel::Gaussian { sigma: s.sigma() },
        };
        format!(
            "kernel={:?};sigma_times_sqrt_dim={};{};test_fraction={};folds={};grid={:?};max_rows={}{}",
            kernel,
            s.sigma_times_sqrt_dim,
            self.methods.describe(),
            s.test_fraction,
            s.cv_folds,
            self.grid,
            s.max_rows,
            s.extra()
        )
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let name = cell.str("dataset")?;
        let method = cell.str("method")?;
        let seed = cell.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let table: Arc<_> = self.data.get(name)?;
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("{}: {e}", cell.key()));
        let shared = |what: &str| format!("{what};dataset={name};seed={seed}");

        // rows (optionally a subsample), split, preprocessing: the same for every method
        let n_all = table.x.nrows();
        let rows: Vec<usize> = if self.s.max_rows > 0 && n_all > self.s.max_rows {
            subsample(
                n_all,
                self.s.max_rows,
                cell.experiment_seed,
                &shared("rows"),
            )
            .map_err(fatal)?
        } else {
            (0..n_all).collect()
        };
        let split = train_test_split(
            rows.len(),
            self.s.test_fraction,
            cell.experiment_seed,
            &shared("split"),
        )
        .map_err(fatal)?;
        let scale = self.s.target_scale.get(name).copied().unwrap_or(1.0);
        let pick = |idx: &[usize]| -> (Array2<f64>, Vec<f64>) {
            let r: Vec<usize> = idx.iter().map(|&i| rows[i]).collect();
            (
                table.x.select(Axis(0), &r),
                r.iter().map(|&i| scale * table.y[i]).collect(),
            )
        };
        let (xtr, ytr) = pick(&split.train);
        let (xte, yte) = pick(&split.test);
        // standardised columns, or latitude/longitude on the sphere S² (a `ferret/...` grid)
        let inputs = table.input_map(xtr.view()).map_err(fatal)?;
        let xtr = inputs.transform(xtr.view()).map_err(fatal)?;
        let xte = inputs.transform(xte.view()).map_err(fatal)?;
        // rows of norm 1 (the sphere alone): the unit-norm fast path, Gegenbauer with s = 1 and m directions
        let unit = MethodSettings {
            unit_norm: true,
            ..self.methods.clone()
        };
        let methods = if inputs.unit_norm() {
            &unit
        } else {
            &self.methods
        };
        let ymean = ytr.iter().sum::<f64>() / ytr.len() as f64;
        let ytr = Array2::from_shape_fn((ytr.len(), 1), |(i, _)| ytr[i] - ymean);

        let search = LambdaSearch {
            grid: self.grid.clone(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold {
                folds: self.s.cv_folds,
                seed: stream_seed(cell.experiment_seed, &shared("cv")),
            },
            score: CvScore::Mse,
        };
        let gaussian = TableKernel::Gaussian {
            sigma: if self.s.sigma_times_sqrt_dim {
                self.s.sigma() * (xtr.ncols() as f64).sqrt()
            } else {
                self.s.sigma()
            },
        };
        let ntk = TableKernel::ReluNtk {
            depth: self.s.depth(),
        };
        let kernels = if self.s.kernel == "relu-ntk" {
            [ntk, gaussian]
        } else {
            [gaussian, ntk]
        };
        let choice = MethodChoice::parse(method).map_err(|e| CellError::Fatal(e.to_string()))?;
        let kernel = method_kernel(&choice, &kernels)?;

        let fit = if choice.name == EXACT {
            let beta = Params::parse_text(EXACT_PARAMS, &choice.params, "method exact")
                .map_err(|e| e.to_string())
                .and_then(|p| bias_of(EXACT_PARAMS, &p).map_err(|e| e.to_string()))
                .map_err(CellError::Fatal)?;
            let k = with_bias(Box::new(kernel.gzk().map_err(fatal)?), beta).map_err(fatal)?;
            self.exact_krr(k, &xtr, &ytr, &xte, &search, &shared("exact-cv"), cell)?
        } else {
            // features
            let t0 = Instant::now();
            let map = fit_method(&choice, kernel, methods, xtr.view(), rng)?;
            let ztr = map.transform(xtr.view()).map_err(fatal)?;
            let zte = map.transform(xte.view()).map_err(fatal)?;
            let feature_s = t0.elapsed().as_secs_f64();

            // solve: λ by k-fold CV on the training rows (folds shared by all methods), refit, predict
            let t1 = Instant::now();
            let (model, cv) =
                fit_ridge_cv(ztr.view(), ytr.view(), &search, RidgeForm::Auto).map_err(fatal)?;
            let pred = model.predict(zte.view()).map_err(fatal)?;
            Fitted {
                pred,
                lambda: cv.best_lambda,
                dim: ztr.ncols(),
                feature_s,
                solve_s: t1.elapsed().as_secs_f64(),
            }
        };
        let Fitted {
            pred,
            lambda,
            dim,
            feature_s,
            solve_s,
        } = fit;

        let n = yte.len() as f64;
        let mse = pred
            .iter()
            .zip(&yte)
            .map(|(p, t)| (p + ymean - t).powi(2))
            .sum::<f64>()
            / n;
        let var = yte.iter().map(|t| (t - ymean).powi(2)).sum::<f64>() / n;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                mse,
                mse / var,
                feature_s,
                solve_s,
                feature_s + solve_s,
                lambda,
                dim as f64,
            ],
            timings: Vec::new(),
        })
    }
}

/// The `method` value of exact kernel ridge regression.
const EXACT: &str = "exact";

/// The parameters of `exact(...)`.
const EXACT_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "kernel",
        kind: ParamKind::Choice(&["gaussian", "relu-ntk"]),
        default: "gaussian",
        about: "exact kernel (default: the table's `kernel`)",
    },
    BIAS,
];

/// Checks a `method` value: a table method of the registry or `exact` (with an optional `kernel` and
/// `bias`).
fn check_krr_method(v: &Value) -> Result<(), String> {
    let s = v.as_str().ok_or_else(|| format!("{v} is not a string"))?;
    let choice = MethodChoice::parse(s)?;
    if choice.name != EXACT {
        return check_table_method(v)
            .map_err(|e| format!("{e}; or exact(kernel=gaussian|relu-ntk, bias=b)"));
    }
    Params::parse_text(EXACT_PARAMS, &choice.params, "method exact")
        .map(|_| ())
        .map_err(String::from)
}

/// The training rows on which exact KRR chooses λ (`exact_cv_rows`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum CvRows {
    /// Every training row (`"all"`): λ from the training Gram itself, no copy.
    All,
    /// A uniformly random subset of this many rows (all rows when there are fewer).
    Subset(usize),
}

impl CvRows {
    /// The number of rows $s \le n$ of the λ search for $n$ training rows.
    fn rows(self, n: usize) -> usize {
        match self {
            CvRows::All => n,
            CvRows::Subset(k) => k.min(n),
        }
    }
}

/// λ for exact KRR by [`select_lambda_gram`] on $s$ of the $n$ training rows: with $s = n$ on the training
/// Gram $K$ itself (a view, no copy), otherwise on $K_{SS}$ for a sorted uniform subset $S$, $|S| = s$, drawn
/// from the stream `(seed, stream)` (the same for every method, kernel and cell of a data set and seed).
/// The subset of all rows is the identity, so both branches agree at $s = n$.
fn exact_lambda(
    gram: &Array2<f64>,
    y: &Array2<f64>,
    s: usize,
    search: &LambdaSearch,
    seed: u64,
    stream: &str,
) -> rfx_core::Result<CvResult> {
    let n = gram.nrows();
    if s >= n {
        return select_lambda_gram(gram.view(), y.view(), search);
    }
    let sub = subsample(n, s, seed, stream)?;
    let ksub = gram.select(Axis(0), &sub).select(Axis(1), &sub);
    select_lambda_gram(ksub.view(), y.select(Axis(0), &sub).view(), search)
}

/// [`exact_krr_memory_bytes`] checked against `cap` (an error message naming both when above).
fn check_exact_memory(
    n: usize,
    nte: usize,
    s: usize,
    search: &LambdaSearch,
    cap: u64,
) -> Result<u64, String> {
    let need = exact_krr_memory_bytes(n, nte, s, search);
    if need > cap {
        return Err(format!(
            "exact KRR on {n} training rows (λ searched on {s}) needs {:.1} GiB, above the cap exact_memory_gb = {:.1}",
            need as f64 / (1u64 << 30) as f64,
            cap as f64 / (1u64 << 30) as f64
        ));
    }
    Ok(need)
}

/// Predictions and costs of one fitted method.
struct Fitted {
    pred: Array2<f64>,
    lambda: f64,
    dim: usize,
    feature_s: f64,
    solve_s: f64,
}

impl KrrRunner {
    /// Exact kernel ridge regression (module docs): memory check ([`check_exact_memory`]), the two Grams,
    /// λ from the Gram of all training rows or of a subset ([`exact_lambda`]), dual Cholesky solve on all
    /// training rows.
    #[allow(clippy::too_many_arguments)]
    fn exact_krr(
        &self,
        k: Box<dyn Kernel>,
        xtr: &Array2<f64>,
        ytr: &Array2<f64>,
        xte: &Array2<f64>,
        search: &LambdaSearch,
        subset_stream: &str,
        cell: &Cell,
    ) -> Result<Fitted, CellError> {
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("{}: {e}", cell.key()));
        let (n, nte) = (xtr.nrows(), xte.nrows());
        let s = self.exact_cv_rows.rows(n);
        check_exact_memory(n, nte, s, search, self.s.exact_cap()).map_err(CellError::Skipped)?;
        let t0 = Instant::now();
        let gram = k.gram(xtr.view(), xtr.view()).map_err(fatal)?;
        let cross = k.gram(xte.view(), xtr.view()).map_err(fatal)?;
        let feature_s = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let cv = exact_lambda(&gram, ytr, s, search, cell.experiment_seed, subset_stream)
            .map_err(fatal)?;
        let params = KrrParams::new(cv.best_lambda)
            .scale(search.scale)
            .memory_cap(self.s.exact_cap());
        let model = KernelRidge::fit_gram(gram, ytr.view(), &params).map_err(fatal)?;
        let pred = model.predict_gram(cross.view()).map_err(fatal)?;
        Ok(Fitted {
            pred,
            lambda: cv.best_lambda,
            dim: n,
            feature_s,
            solve_s: t1.elapsed().as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_values_are_checked() {
        let ok = |s: &str| check_krr_method(&Value::Str(s.into()));
        assert!(ok("exact").is_ok());
        assert!(ok("exact(kernel=gaussian)").is_ok());
        assert!(ok("ntk-rf(sampler=gs)").is_ok());
        assert!(ok("exact(kernel=poly)").is_err());
        assert!(ok("exact(lambda=1)").is_err());
        assert!(ok("exact(bias=1)").is_ok());
        assert!(ok("exact(kernel=relu-ntk, bias=0.5)").is_ok());
        assert!(ok("ntk-rf(bias=2)").is_ok());
        for bad in ["exact(bias=-1)", "exact(bias=x)", "ntk-rf(bias=-0.1)"] {
            let e = ok(bad).unwrap_err();
            assert!(e.contains("bias") && e.contains("[0, 1000000]"), "{e}");
        }
        assert!(ok("arccos").is_err());
    }

    /// A Gaussian Gram of `n` deterministic points in 3 dimensions and a nonlinear target.
    fn toy(n: usize) -> (Array2<f64>, Array2<f64>) {
        let x = Array2::from_shape_fn((n, 3), |(i, j)| ((i * 7 + j * 3) as f64 * 0.37).sin());
        let gram = Array2::from_shape_fn((n, n), |(i, j)| {
            let d2: f64 = (0..3).map(|c| (x[[i, c]] - x[[j, c]]).powi(2)).sum();
            (-d2).exp()
        });
        let y = Array2::from_shape_fn((n, 1), |(i, _)| {
            (3.0 * x[[i, 0]]).sin() + x[[i, 1]] * x[[i, 2]]
        });
        (gram, y)
    }

    fn search() -> LambdaSearch {
        LambdaSearch {
            grid: rfx_solvers::ridge::log10_grid(-9.0, 0.0, 10).unwrap(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold { folds: 2, seed: 5 },
            score: CvScore::Mse,
        }
    }

    #[test]
    fn all_rows_search_lambda_on_the_whole_gram() {
        let n = 120;
        let (gram, y) = toy(n);
        let direct = select_lambda_gram(gram.view(), y.view(), &search()).unwrap();
        let all = exact_lambda(&gram, &y, CvRows::All.rows(n), &search(), 1, "s").unwrap();
        assert_eq!(
            all, direct,
            "all rows: the same scores and λ as the full Gram"
        );
        // a subset at least as large as the data is every row (sorted), so the old path agrees too
        let big = exact_lambda(&gram, &y, CvRows::Subset(500).rows(n), &search(), 1, "s").unwrap();
        assert_eq!(big, direct);
        // a proper subset searches on K_SS of the subsample drawn from the named stream
        let s = 40;
        let sub = subsample(n, s, 1, "s").unwrap();
        let ksub = gram.select(Axis(0), &sub).select(Axis(1), &sub);
        let want =
            select_lambda_gram(ksub.view(), y.select(Axis(0), &sub).view(), &search()).unwrap();
        let got = exact_lambda(&gram, &y, CvRows::Subset(s).rows(n), &search(), 1, "s").unwrap();
        assert_eq!(got, want);
        assert_ne!(got.scores, direct.scores, "the subset is not all rows");
    }

    #[test]
    fn exact_memory_refuses_above_the_cap() {
        let (n, nte) = (15_000, 1_660);
        let need = check_exact_memory(n, nte, n, &search(), u64::MAX).unwrap();
        assert_eq!(need, exact_krr_memory_bytes(n, nte, n, &search()));
        // the cap is a hard limit, and the message names the need and the cap
        assert_eq!(check_exact_memory(n, nte, n, &search(), need), Ok(need));
        let err = check_exact_memory(n, nte, n, &search(), need - 1).unwrap_err();
        assert!(
            err.contains("15000 training rows") && err.contains("exact_memory_gb"),
            "{err}"
        );
    }
}
