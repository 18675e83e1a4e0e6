//! `cross_benchmark`: every registry method against every kernel it approximates (issue 31).
//!
//! One cell = (`kernel`, `dataset`, `method`, `m`, `seed`). The kernels and, for each, the methods that
//! approximate it with their parameters come from `rfx_registry::kernel_targets` (the relation is declared
//! and tested there); a (kernel, method) pair outside the relation is a skipped cell, as is a budget a map
//! cannot meet (Grad-RF and Naive-RF need at least the parameters of a width-1 network).
//! * **Data** (per data set and seed, shared): `n_train` + `n_test` rows drawn without replacement from the
//!   whole set (stream `rows;dataset=<name>;seed=<seed>`), columns standardised with the training rows'
//!   statistics, every row scaled to unit norm (so every kernel sees inputs of the same scale, and the
//!   Gaussian bandwidth `sigma` means the same on every set). Regression targets standardised with the
//!   training rows; class labels one-hot. The Gaussian bandwidth: `sigma` itself (`bandwidth = "fixed"`, the
//!   default), or `sigma` times the median pairwise distance of the training rows (`bandwidth = "median"`,
//!   `rfx_kernels::median_distance`: per data set and seed, from rows no test point is among), recorded in the
//!   metric `sigma`.
//! * **Exact kernel** (per kernel, data set and seed, shared): its Gram on the first `gram_rows` test rows
//!   (`gram_on = "test"`, the default: rows no map was fitted on, so that the data-dependent maps — Nyström,
//!   leverage-score RFF — are not compared on their own landmarks; `"train"`: the first training rows), and
//!   exact kernel ridge regression on all training rows (λ by the same k-fold search,
//!   `rfx_solvers::ridge::select_lambda_gram`).
//! * **Cell**: the map fitted with budget $m$ from the cell's stream, training and test rows mapped
//!   (`fit_transform_s`); `rel_fro`, `rel_spec`: $\Vert K - ZZ^\top\Vert / \Vert K\Vert$ in Frobenius and spectral
//!   norm on those rows (`rfx_solvers::spectral::kernel_errors`); ridge on the features with λ by
//!   k-fold cross-validation (`fit_ridge_cv`, `solve_s`); `test_error` (regression: test MSE of the
//!   standardised target; classification: 1 − accuracy) beside the exact kernel's `exact_test_error` and
//!   their difference `excess_test_error`;
//!   `dim`, and `bits` = dim × the map's bits per feature value (64 for `f64` features, $b$ for LP-RFF, 2 for
//!   ternary features); `rel_fro_centred`, `rel_spec_centred`: the same Gram errors after centring and up
//!   to the best shift $\lambda P$ (`rfx_solvers::spectral::centred_kernel_errors`), the sense in which
//!   ternary features approximate a kernel (`rfx_registry::Approx::Asymptotic`), for every method.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use ndarray::{s, Array2, ArrayView2, Axis};
use rfx_core::{Kernel, RfxRng};
use rfx_data::{Loaded, Standardizer};
use rfx_registry::{kernel_target, method_labels, KERNEL_LABELS};
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, log10_grid, one_hot, select_lambda_gram, CvScore, KernelRidge,
    KrrParams, LambdaScale, LambdaSearch, RidgeForm, Validation,
};
use rfx_solvers::spectral::{centred_kernel_errors_gram, kernel_errors_gram};

use crate::kinds::ntk_common::{check_any_dataset, Shared};
use rfx_harness::config::{choice_in, float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};

/// The kind.
pub struct CrossBenchmark;

/// `[cross_benchmark]`: the Gaussian bandwidth, the row counts, the λ grid and folds.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    sigma: f64,
    bandwidth: String,
    n_train: usize,
    n_test: usize,
    gram_rows: usize,
    gram_on: String,
    folds: usize,
    lambda_log10_min: f64,
    lambda_log10_max: f64,
    lambda_count: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sigma: 1.0,
            bandwidth: "fixed".into(),
            n_train: 1000,
            n_test: 500,
            gram_rows: 500,
            gram_on: "test".into(),
            folds: 3,
            lambda_log10_min: -6.0,
            lambda_log10_max: 0.0,
            lambda_count: 7,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        (
            "sigma",
            "Gaussian bandwidth on unit-norm rows (with bandwidth = \"median\": its factor on the median distance), numbers from 0.01 to 100",
        ),
        (
            "bandwidth",
            "fixed (σ = sigma on every set) | median (σ = sigma × the median pairwise distance of each data set's training rows, per seed)",
        ),
        ("n_train", "integers from 10 to 20000"),
        ("n_test", "integers from 10 to 20000"),
        (
            "gram_rows",
            "rows of the Gram comparison, integers from 10 to 4000 (at most n_test, or n_train with gram_on = \"train\")",
        ),
        (
            "gram_on",
            "test (the first gram_rows held-out rows: no map has seen them) | train (the first training rows)",
        ),
        (
            "folds",
            "cross-validation folds for λ, integers from 2 to 10",
        ),
        ("lambda_log10_min", "numbers from -12 to 3"),
        (
            "lambda_log10_max",
            "numbers from -12 to 3 (at least lambda_log10_min)",
        ),
        ("lambda_count", "integers from 1 to 50"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        float_in("sigma", self.sigma, 0.01, 100.0)?;
        choice_in("bandwidth", &self.bandwidth, &["fixed", "median"])?;
        int_in("n_train", self.n_train as i128, 10, 20_000)?;
        int_in("n_test", self.n_test as i128, 10, 20_000)?;
        choice_in("gram_on", &self.gram_on, &["test", "train"])?;
        int_in(
            "gram_rows",
            self.gram_rows as i128,
            10,
            self.gram_pool().min(4000) as i128,
        )?;
        int_in("folds", self.folds as i128, 2, 10)?;
        float_in("lambda_log10_min", self.lambda_log10_min, -12.0, 3.0)?;
        float_in(
            "lambda_log10_max",
            self.lambda_log10_max,
            self.lambda_log10_min,
            3.0,
        )?;
        int_in("lambda_count", self.lambda_count as i128, 1, 50)
    }
}

impl Settings {
    /// The rows the Gram comparison draws from: `n_test` held-out rows, or `n_train` training rows.
    fn gram_pool(&self) -> usize {
        if self.gram_on == "train" {
            self.n_train
        } else {
            self.n_test
        }
    }
}

/// One data set's rows for one seed.
struct Prepared {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    /// Training targets: the standardised target (one column) or centred one-hot labels.
    ytr: Array2<f64>,
    /// Test targets in the same form (regression) …
    yte: Array2<f64>,
    /// … or the test labels (classification; empty for regression).
    lte: Vec<usize>,
    /// The Gaussian bandwidth on these rows (module docs).
    sigma: f64,
}

impl Prepared {
    fn classification(&self) -> bool {
        !self.lte.is_empty()
    }

    /// Test error of predictions `pred`: MSE of the standardised target, or 1 − accuracy.
    fn test_error(&self, pred: &Array2<f64>) -> Result<f64, rfx_core::RfxError> {
        if self.classification() {
            let acc = rfx_solvers::metrics::accuracy(&argmax_rows(pred.view()), &self.lte)?;
            Ok(1.0 - acc)
        } else {
            rfx_solvers::metrics::mse(pred.view(), self.yte.view())
        }
    }
}

/// The exact kernel's Gram on the comparison rows and its kernel ridge test error.
struct Exact {
    gram: Array2<f64>,
    test_error: f64,
}

struct CrossRunner {
    s: Settings,
    data: Shared<Prepared>,
    exact: Shared<Exact>,
    /// The registry method behind each (kernel label, method label) of the relation `kernel_targets` (which
    /// does not depend on σ), built once: `cell_tolerance` is asked for every cell and metric by `rfx compare`
    /// and `rfx verify`.
    registry_method: HashMap<(String, &'static str), &'static str>,
}

fn check_kernel(v: &Value) -> Result<(), String> {
    check_choice(v, &KERNEL_LABELS)
}

fn check_method(v: &Value) -> Result<(), String> {
    check_choice(v, &method_labels())
}

impl Kind for CrossBenchmark {
    fn name(&self) -> &'static str {
        "cross_benchmark"
    }
    fn about(&self) -> &'static str {
        "every registry method against every kernel it approximates (rfx_registry::kernel_targets): Gram errors, ridge test error beside the exact kernel's, time, memory in bits"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "kernel",
                allowed: "gaussian, arccos0, arccos1, ntk1, ntk2, ntk3, ntk1-bias, ntk2-bias, ntk3-bias, poly2 (rfx_registry::KERNEL_LABELS)",
                check: check_kernel,
                required: true,
            },
            ParamSpec {
                name: "dataset",
                allowed: "any registered data set (regression or classification; image sets: their training part)",
                check: check_any_dataset,
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: "a method label of rfx_registry::kernel_targets (rfx methods); pairs outside the relation are skipped cells",
                check: check_method,
                required: true,
            },
            crate::kinds::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        let registry_method = rfx_registry::kernel_targets(1.0)
            .into_iter()
            .flat_map(|k| {
                k.methods
                    .into_iter()
                    .map(move |m| ((k.label.clone(), m.label), m.method))
            })
            .collect();
        Ok(Box::new(CrossRunner {
            s,
            data: Shared::default(),
            exact: Shared::default(),
            registry_method,
        }))
    }
}

impl CrossRunner {
    fn search(&self, classification: bool, es: u64) -> Result<LambdaSearch, rfx_core::RfxError> {
        Ok(LambdaSearch {
            grid: log10_grid(
                self.s.lambda_log10_min,
                self.s.lambda_log10_max,
                self.s.lambda_count,
            )?,
            scale: LambdaScale::TimesN,
            validation: Validation::KFold {
                folds: self.s.folds,
                seed: es,
            },
            score: if classification {
                CvScore::ClassificationError
            } else {
                CvScore::Mse
            },
        })
    }

    /// The rows of data set `name` for `seed` (module docs).
    fn prepare(&self, name: &str, seed: &str, es: u64) -> Result<Prepared, CellError> {
        let err = |e: rfx_core::RfxError| CellError::Fatal(format!("data set {name}: {e}"));
        rfx_data::fetch_from_env(name).map_err(err)?;
        let (x, y, labels, classes) =
            match rfx_data::load(name, &rfx_data::cache_dir_from_env()).map_err(err)? {
                Loaded::TrainTest(t) => {
                    let c = t.train.classes.len();
                    (t.train.x, Vec::new(), t.train.labels, c)
                }
                Loaded::Classification(c) => {
                    let k = c.n_classes();
                    (c.x, Vec::new(), c.labels, k)
                }
                Loaded::UciSplits(u) => (u.data.x, u.data.y.to_vec(), Vec::new(), 0),
                Loaded::Regression(r) => (r.x, r.y.to_vec(), Vec::new(), 0),
            };
        let (ntr, nte) = (self.s.n_train, self.s.n_test);
        if x.nrows() < ntr + nte {
            return Err(CellError::Fatal(format!(
                "data set {name}: {} rows, fewer than n_train + n_test = {}",
                x.nrows(),
                ntr + nte
            )));
        }
        let rows = rfx_data::subsample(
            x.nrows(),
            ntr + nte,
            es,
            &format!("rows;dataset={name};seed={seed}"),
        )
        .map_err(err)?;
        let (tr, te) = rows.split_at(ntr);
        let st = Standardizer::fit(x.select(Axis(0), tr).view()).map_err(err)?;
        let mut xtr = st.transform(x.select(Axis(0), tr).view()).map_err(err)?;
        let mut xte = st.transform(x.select(Axis(0), te).view()).map_err(err)?;
        rfx_data::normalize_rows(&mut xtr);
        rfx_data::normalize_rows(&mut xte);
        let sigma = self.s.sigma
            * if self.s.bandwidth == "median" {
                rfx_kernels::median_distance(xtr.view())
            } else {
                1.0
            };
        if classes > 0 {
            let ltr: Vec<usize> = tr.iter().map(|&i| labels[i]).collect();
            let lte: Vec<usize> = te.iter().map(|&i| labels[i]).collect();
            Ok(Prepared {
                xtr,
                xte,
                ytr: one_hot(&ltr, classes, true).map_err(err)?,
                yte: one_hot(&lte, classes, true).map_err(err)?,
                lte,
                sigma,
            })
        } else {
            let col = |idx: &[usize]| Array2::from_shape_fn((idx.len(), 1), |(i, _)| y[idx[i]]);
            let yst = Standardizer::fit(col(tr).view()).map_err(err)?;
            Ok(Prepared {
                xtr,
                xte,
                ytr: yst.transform(col(tr).view()).map_err(err)?,
                yte: yst.transform(col(te).view()).map_err(err)?,
                lte: Vec::new(),
                sigma,
            })
        }
    }

    /// The rows of the Gram comparison: the first `gram_rows` test rows (or training rows).
    fn gram_part<'a>(&self, train: &'a Array2<f64>, test: &'a Array2<f64>) -> ArrayView2<'a, f64> {
        let from = if self.s.gram_on == "train" {
            train
        } else {
            test
        };
        from.slice(s![..self.s.gram_rows, ..])
    }

    /// The exact kernel's comparison Gram and kernel ridge test error (module docs).
    fn exact(&self, k: &dyn Kernel, p: &Prepared, es: u64) -> Result<Exact, rfx_core::RfxError> {
        let sub = self.gram_part(&p.xtr, &p.xte);
        let gram = k.gram(sub, sub)?;
        let ktr = k.gram(p.xtr.view(), p.xtr.view())?;
        let kte = k.gram(p.xte.view(), p.xtr.view())?;
        let search = self.search(p.classification(), es)?;
        let cv = select_lambda_gram(ktr.view(), p.ytr.view(), &search)?;
        let params = KrrParams::new(cv.best_lambda).scale(search.scale);
        let model = KernelRidge::fit_gram(ktr, p.ytr.view(), &params)?;
        let pred = model.predict_gram(kte.view())?;
        Ok(Exact {
            gram,
            test_error: p.test_error(&pred)?,
        })
    }
}

impl Runner for CrossRunner {
    /// The method's rounding amplification, found through the registry method behind the cell's label (the
    /// relation `kernel_targets`: `nystrom-uniform` is the registry's `nystrom`, `lp-rff-8` its `lp-rff`), not
    /// through the label's text, which names no registry method for most labels.
    fn cell_tolerance(&self, cell: &Cell, metric: &str) -> rfx_harness::kind::Tolerance {
        let t = self.tolerance(metric);
        let (Ok(label), Ok(kernel)) = (cell.str("method"), cell.str("kernel")) else {
            return t;
        };
        match self.registry_method.get(&(kernel.to_string(), label)) {
            Some(method) => crate::kinds::method_tolerance(t, method),
            None => t,
        }
    }
    fn metrics(&self) -> Vec<String> {
        [
            "rel_fro",
            "rel_spec",
            "test_error",
            "exact_test_error",
            "excess_test_error",
            "fit_transform_s",
            "solve_s",
            "dim",
            "bits",
            "lambda",
            "sigma",
            "rel_fro_centred",
            "rel_spec_centred",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn settings(&self) -> String {
        format!("{:?}", self.s)
    }
    fn tolerance(&self, metric: &str) -> rfx_harness::kind::Tolerance {
        match metric {
            // test_error − exact_test_error: each is compared within the default relative tolerance ε = 1e-9,
            // so their difference may move by ε(|a| + |b|) ≤ 1e-8 for errors up to 5 (standardised-target MSEs
            // and error rates are ≤ 1 for every method that learns anything): relative to the difference
            // itself that is unbounded as the two errors approach (seen: 2.7e-12 absolute = 3.4e-9 relative
            // on a difference of 8e-4, between committed cells computed from a modified tree and today's code,
            // with both components within the default tolerance).
            "excess_test_error" => rfx_harness::kind::Tolerance::Absolute(
                2.0 * 5.0 * rfx_harness::kind::DEFAULT_RELATIVE_TOLERANCE,
            ),
            m => rfx_harness::kind::default_tolerance(m),
        }
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        let k = cell.get("kernel")?;
        let d = cell.get("dataset")?;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        Some(format!("kernel={k};dataset={d};seed={seed}"))
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let kernel = cell.str("kernel")?;
        let dataset = cell.str("dataset")?.to_string();
        let label = cell.str("method")?;
        let m = cell.int("m")? as usize;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let es = cell.experiment_seed;
        let key = cell.key();
        let fatal = |e: String| CellError::Fatal(format!("cell {key}: {e}"));

        // the relation does not depend on σ: skip a pair outside it before loading any data
        if kernel_target(kernel, self.s.sigma)
            .map_err(|e| fatal(e.into()))?
            .method(label)
            .is_none()
        {
            return Err(CellError::Skipped(format!(
                "{label} does not approximate the kernel {kernel} (rfx_registry::kernel_targets)"
            )));
        }
        let p: Arc<Prepared> = self
            .data
            .get(&format!("dataset={dataset};seed={seed}"), || {
                self.prepare(&dataset, &seed, es)
            })?;
        let target = kernel_target(kernel, p.sigma).map_err(|e| fatal(e.into()))?;
        let method = target.method(label).ok_or_else(|| {
            fatal(format!(
                "{label} left the relation of {kernel} at σ = {}",
                p.sigma
            ))
        })?;
        let exact: Arc<Exact> = self.exact.get(
            &format!("kernel={kernel};dataset={dataset};seed={seed}"),
            || {
                let k = target.build().map_err(|e| fatal(e.into()))?;
                self.exact(k.as_ref(), &p, es)
                    .map_err(|e| fatal(format!("exact kernel: {e}")))
            },
        )?;
        let num = |e: rfx_core::RfxError| fatal(e.to_string());

        let t0 = Instant::now();
        // a budget the map cannot meet (Grad-RF below d + 1 parameters, …) is a skipped cell
        let map = method
            .fit(m, p.xtr.view(), rng)
            .map_err(|e| CellError::Skipped(e.to_string()))?;
        let ztr = map.transform(p.xtr.view()).map_err(num)?;
        let zte = map.transform(p.xte.view()).map_err(num)?;
        let fit_transform_s = t0.elapsed().as_secs_f64();

        let part = self.gram_part(&ztr, &zte);
        // ZZᵀ once for both comparisons
        let zz = rfx_linalg::gram_rows(part).map_err(num)?;
        let errors = kernel_errors_gram(exact.gram.view(), zz.view()).map_err(num)?;
        let centred = centred_kernel_errors_gram(exact.gram.view(), zz.view()).map_err(num)?;

        let t1 = Instant::now();
        let search = self.search(p.classification(), es).map_err(num)?;
        let (model, cv) =
            fit_ridge_cv(ztr.view(), p.ytr.view(), &search, RidgeForm::Auto).map_err(num)?;
        let pred = model.predict(zte.view()).map_err(num)?;
        let solve_s = t1.elapsed().as_secs_f64();
        let test_error = p.test_error(&pred).map_err(num)?;
        let dim = map.dim() as f64;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                errors.rel_frobenius,
                errors.rel_spectral,
                test_error,
                exact.test_error,
                test_error - exact.test_error,
                fit_transform_s,
                solve_s,
                dim,
                dim * map.bits_per_feature(),
                cv.best_lambda,
                p.sigma,
                centred.rel_frobenius,
                centred.rel_spectral,
            ],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_values_are_the_relation_labels() {
        assert!(check_kernel(&Value::Str("ntk2-bias".into())).is_ok());
        assert!(check_kernel(&Value::Str("laplace".into())).is_err());
        assert!(check_method(&Value::Str("ntk-rf-srht".into())).is_ok());
        assert!(check_method(&Value::Str("lp-rff-2".into())).is_ok());
        assert!(check_method(&Value::Str("exact".into())).is_err());
    }

    #[test]
    fn a_label_takes_the_rounding_tolerance_of_the_registry_method_behind_it() {
        use rfx_harness::kind::Tolerance;
        let runner = CrossBenchmark.configure(None).unwrap();
        let cell = |method: &str| Cell {
            index: 0,
            params: vec![
                ("kernel".into(), Value::Str("gaussian".into())),
                ("method".into(), Value::Str(method.into())),
            ],
            experiment_seed: 0,
        };
        let rel = |method: &str| match runner.cell_tolerance(&cell(method), "rel_fro") {
            Tolerance::Relative(r) => r,
            other => panic!("{other:?}"),
        };
        // Nyström's features scale the rounding of its eigendecomposition by up to 1/rcond = 1e10: the
        // tolerance is 4ε·1e10 ≈ 8.9e-6 for both labels of the registry's nystrom, not the default 1e-9
        // (the label `nystrom-uniform` names no registry method: read as text it had the default)
        assert!(rel("nystrom-uniform") > 1e-6, "{}", rel("nystrom-uniform"));
        assert_eq!(rel("nystrom-uniform"), rel("nystrom"));
        assert_eq!(rel("rff"), rfx_harness::kind::DEFAULT_RELATIVE_TOLERANCE);
    }
}
