//! `krr_table`: kernel ridge regression with m random features per method, λ by k-fold cross-validation —
//! the random Gegenbauer features paper's Table 2 (Gaussian kernel) and Table 4 (ReLU NTK).
//!
//! One cell = (data set, method, seed): a random `1 − test_fraction` / `test_fraction` split of the rows
//! (the same for every method at a given data set and seed), inputs standardised with the training
//! statistics, the target centred by its training mean (no feature needs to carry a constant), features
//! fitted on the training rows with the cell's RNG, λ chosen on a log grid by k-fold cross-validation on the
//! training rows (one eigendecomposition per fold, `rfx_solvers::ridge::select_lambda`; folds shared by all
//! methods), refit on the whole training set, test MSE. Timings: `feature_s` (fit the map and transform
//! training and test rows), `solve_s` (cross-validation, refit, prediction).

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array2, Axis};
use rfx_core::{stream_seed, RfxRng};
use rfx_data::{subsample, train_test_split, Standardizer};
use rfx_solvers::ridge::{
    fit_ridge_cv, log10_grid, CvScore, LambdaScale, LambdaSearch, RidgeForm, Validation,
};

use super::tabular::{
    check_dataset, fit_method, methods_allowed, table_methods, DataCache, DataNeed, MethodSettings,
    TableKernel,
};
use super::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use crate::config::{ConfigError, Section};

/// The kind.
pub struct KrrTable;

struct KrrRunner {
    kernel: TableKernel,
    /// Multiply the Gaussian bandwidth by $\sqrt d$ (`sigma_times_sqrt_dim`): on standardised inputs
    /// $\mathbb E\|x-y\|^2 = 2d$, so $\sigma = c\sqrt d$ gives every data set the same kernel scale.
    sigma_sqrt_dim: bool,
    methods: MethodSettings,
    test_fraction: f64,
    folds: usize,
    grid: Vec<f64>,
    max_rows: usize,
    data: DataCache,
}

const DATASETS: &str = "a registered regression set (uci/<set> or uci-raw/<set>)";

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
                check: |v| check_choice(v, &table_methods()),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let r = match section {
            Some(s) => read(s)?,
            None => defaults(),
        };
        Ok(Box::new(r))
    }
}

fn defaults() -> KrrRunner {
    KrrRunner {
        kernel: TableKernel::Gaussian {
            sigma: std::f64::consts::FRAC_1_SQRT_2,
        },
        sigma_sqrt_dim: false,
        methods: MethodSettings {
            features: 1024,
            degree: 15,
            radial_terms: 4,
            unit_norm: false,
            polysketch_degree: 8,
            maclaurin_degree: 20,
        },
        test_fraction: 0.1,
        folds: 2,
        grid: log10_grid(-9.0, 0.0, 10).expect("valid default grid"),
        max_rows: 0,
        data: DataCache::default(),
    }
}

fn read(s: &Section<'_, '_>) -> Result<KrrRunner, ConfigError> {
    let mut r = defaults();
    let kernel = s
        .opt_choice("kernel", &["gaussian", "relu-ntk"])?
        .unwrap_or_else(|| "gaussian".into());
    let sigma = s.opt_float("sigma", 1e-6, 1e6)?;
    let depth = s.opt_int("ntk_depth", 1, 8)?;
    r.sigma_sqrt_dim = s.opt_bool("sigma_times_sqrt_dim")?.unwrap_or(false);
    r.kernel = match kernel.as_str() {
        "relu-ntk" => {
            if sigma.is_some() || r.sigma_sqrt_dim {
                return Err(s.error(
                    "sigma",
                    "the ReLU NTK has no bandwidth; remove `sigma` and `sigma_times_sqrt_dim`",
                ));
            }
            TableKernel::ReluNtk {
                depth: depth.unwrap_or(2) as usize,
            }
        }
        _ => {
            if depth.is_some() {
                return Err(s.error("ntk_depth", "only for kernel = \"relu-ntk\""));
            }
            TableKernel::Gaussian {
                sigma: sigma.unwrap_or(std::f64::consts::FRAC_1_SQRT_2),
            }
        }
    };
    let m = &mut r.methods;
    if let Some(v) = s.opt_int("features", 16, 1 << 16)? {
        m.features = v as usize;
    }
    if let Some(v) = s.opt_int("degree", 0, rfx_gzk::MAX_DEGREE as i64)? {
        m.degree = v as usize;
    }
    if let Some(v) = s.opt_int("radial_terms", 1, 64)? {
        m.radial_terms = v as usize;
    }
    if let Some(v) = s.opt_int("polysketch_degree", 1, 32)? {
        m.polysketch_degree = v as usize;
    }
    if let Some(v) = s.opt_int("maclaurin_degree", 1, 60)? {
        m.maclaurin_degree = v as usize;
    }
    if m.radial_terms > m.features {
        return Err(s.error("radial_terms", "must not exceed `features`"));
    }
    if let Some(v) = s.opt_float("test_fraction", 0.01, 0.9)? {
        r.test_fraction = v;
    }
    if let Some(v) = s.opt_int("cv_folds", 2, 20)? {
        r.folds = v as usize;
    }
    let lo = s
        .opt_float("lambda_log10_min", -30.0, 30.0)?
        .unwrap_or(-9.0);
    let hi = s.opt_float("lambda_log10_max", -30.0, 30.0)?.unwrap_or(0.0);
    let num = s.opt_int("lambda_count", 1, 200)?.unwrap_or(10) as usize;
    if hi < lo {
        return Err(s.error("lambda_log10_max", "must be >= lambda_log10_min"));
    }
    r.grid = log10_grid(lo, hi, num).map_err(|e| s.error("lambda_count", e.to_string()))?;
    if let Some(v) = s.opt_int("max_rows", 0, i64::from(u32::MAX))? {
        r.max_rows = v as usize;
    }
    Ok(r)
}

impl Runner for KrrRunner {
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
        format!(
            "kernel={:?};sigma_times_sqrt_dim={};{};test_fraction={};folds={};grid={:?};max_rows={}",
            self.kernel,
            self.sigma_sqrt_dim,
            self.methods.describe(),
            self.test_fraction,
            self.folds,
            self.grid,
            self.max_rows
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
        let rows: Vec<usize> = if self.max_rows > 0 && n_all > self.max_rows {
            subsample(n_all, self.max_rows, cell.experiment_seed, &shared("rows")).map_err(fatal)?
        } else {
            (0..n_all).collect()
        };
        let split = train_test_split(
            rows.len(),
            self.test_fraction,
            cell.experiment_seed,
            &shared("split"),
        )
        .map_err(fatal)?;
        let pick = |idx: &[usize]| -> (Array2<f64>, Vec<f64>) {
            let r: Vec<usize> = idx.iter().map(|&i| rows[i]).collect();
            (
                table.x.select(Axis(0), &r),
                r.iter().map(|&i| table.y[i]).collect(),
            )
        };
        let (xtr, ytr) = pick(&split.train);
        let (xte, yte) = pick(&split.test);
        let st = Standardizer::fit(xtr.view()).map_err(fatal)?;
        let xtr = st.transform(xtr.view()).map_err(fatal)?;
        let xte = st.transform(xte.view()).map_err(fatal)?;
        let ymean = ytr.iter().sum::<f64>() / ytr.len() as f64;
        let ytr = Array2::from_shape_fn((ytr.len(), 1), |(i, _)| ytr[i] - ymean);

        // features
        let t0 = Instant::now();
        let kernel = match self.kernel {
            TableKernel::Gaussian { sigma } if self.sigma_sqrt_dim => TableKernel::Gaussian {
                sigma: sigma * (xtr.ncols() as f64).sqrt(),
            },
            k => k,
        };
        let map = fit_method(method, kernel, &self.methods, xtr.view(), rng)?;
        let ztr = map.transform(xtr.view()).map_err(fatal)?;
        let zte = map.transform(xte.view()).map_err(fatal)?;
        let feature_s = t0.elapsed().as_secs_f64();

        // solve: λ by k-fold CV on the training rows (folds shared by all methods), refit, predict
        let t1 = Instant::now();
        let search = LambdaSearch {
            grid: self.grid.clone(),
            scale: LambdaScale::TimesN,
            validation: Validation::KFold {
                folds: self.folds,
                seed: stream_seed(cell.experiment_seed, &shared("cv")),
            },
            score: CvScore::Mse,
        };
        let (model, cv) =
            fit_ridge_cv(ztr.view(), ytr.view(), &search, RidgeForm::Auto).map_err(fatal)?;
        let pred = model.predict(zte.view()).map_err(fatal)?;
        let solve_s = t1.elapsed().as_secs_f64();

        let n = yte.len() as f64;
        let mse = pred
            .iter()
            .zip(&yte)
            .map(|(p, t)| (p + ymean - t).powi(2))
            .sum::<f64>()
            / n;
        let var = yte.iter().map(|t| (t - ymean).powi(2)).sum::<f64>() / n;
        Ok(CellOutput {
            metrics: vec![
                mse,
                mse / var,
                feature_s,
                solve_s,
                feature_s + solve_s,
                cv.best_lambda,
                ztr.ncols() as f64,
            ],
            timings: Vec::new(),
        })
    }
}
