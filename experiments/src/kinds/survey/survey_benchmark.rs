//! `survey_benchmark`: the random-features survey's benchmark (Liu et al., TPAMI 2021, §6, Figs. 6, 9–14,
//! Table VII): relative Frobenius kernel-approximation error, feature time and linear-classifier test accuracy
//! for every sampler and kernel at $s = k\thinspace d$ features.
//!
//! One cell = (data set, kernel, method, `s_mult` $= k$, seed).
//! * **Data** (per data set and seed, shared by all methods): KEEL sets are split at random
//!   (`test_fraction`, the survey's "random split"); MNIST uses its own train/test split. At most `n_train`
//!   / `n_test` rows are drawn at random; inputs are min–max scaled to the unit interval with the training statistics
//!   (test values clipped), the survey's "minmax" (§4.3). `error_points` training rows (the survey: 1,000)
//!   are drawn for the approximation error.
//! * **Kernels**: `gaussian` ($\sigma$ from `sigma_grid` — multiplied by the median pairwise training distance
//!   when `sigma_times_median = true` — by held-out ridge accuracy with RFF at $s = 4d$ on the seed-0 split,
//!   once per data set and shared by every method, the survey's tuning resolved as in the research notes
//!   §4.4), `arccos0`, `arccos1` (exact Grams from `rfx-ntk`), `poly2` = $(1+\langle x,y\rangle)^2$.
//! * **Methods**: the samplers of [`rfx_sampling::survey`] (`rff`, `orf`, `sorf`, `rom`, `fastfood`, `qmc`,
//!   `ssf`, `gq`, `ls-rff`) for the Gaussian and arc-cosine kernels with $s$ frequencies (output $2s$ for the
//!   paired Gaussian form, $s$ otherwise); for `poly2` TensorSketch (`ts`), tensorized random projection
//!   (`trp`) and Random Maclaurin (`rm`) with $s$ outputs, on $\bar x = [x; 1]$ for TS/TRP. A method that does
//!   not apply to the kernel, or an output width above `max_features`, is a skipped cell.
//! * **Metrics**: `rel_error` $=\Vert K-ZZ^\top\Vert_F/\Vert K\Vert_F$ on the error points (§4.5); `feature_s` (fit the
//!   map and transform training and test rows: the survey's "time"); `ridge_acc`: ridge "linear regression"
//!   $\beta = (Z^\top Z + n\lambda I)^{-1}Z^\top Y$ on one-hot targets, argmax prediction, λ from the survey's
//!   grid by held-out classification error (`holdout` fraction of the training rows, or with `inner_folds = k`
//!   the mean error of k-fold inner cross-validation, the survey's protocol with k = 5); `svm_acc`: one-vs-rest
//!   linear SVM (squared hinge, LIBLINEAR `-s 1`), $C$ from `c_grid` by the same validation, for the Gaussian
//!   kernel when `svm = true` (the survey used liblinear for the Gaussian kernel only), NaN otherwise.

use std::sync::Arc;
use std::time::Instant;

use ndarray::{Array2, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rayon::prelude::*;
use rfx_core::{rng_stream, stream_seed, FeatureMap, FitData, Kernel, RfxRng};
use rfx_kernels::{
    median_distance, ArcCosineKernel, ArcCosineOrder, GaussianKernel, PolynomialKernel,
};
use rfx_registry::{MethodSpec, Params, RawValue};
use rfx_sampling::survey::{SurveyKernel, SAMPLERS};
use rfx_solvers::classify::{LinearSvm, SvmParams, SvmSolver};
use rfx_solvers::metrics::accuracy;
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, folds, one_hot, CvScore, LambdaScale, LambdaSearch, RidgeForm,
    Validation,
};

use crate::kinds::tabular::DataCache;
use crate::kinds::trf_common::{group_key, idx_data, DataSlot, SharedCache};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{
    check_choice, check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner,
};

/// The kind.
pub struct SurveyBenchmark;

const KERNELS: [&str; 4] = ["gaussian", "arccos0", "arccos1", "poly2"];
const POLY_METHODS: [&str; 3] = ["ts", "trp", "rm"];
const METHODS_ALLOWED: &str =
    "rff, orf, sorf, rom, fastfood, qmc, ssf, gq, ls-rff (Gaussian and arc-cosine kernels); \
ts, trp, rm (poly2)";

fn all_methods() -> Vec<&'static str> {
    SAMPLERS
        .iter()
        .map(|(n, _)| *n)
        .chain(POLY_METHODS)
        .collect()
}

fn check_dataset(v: &Value) -> Result<(), String> {
    let ok = v.as_str().is_some_and(|s| {
        s == "mnist"
            || s == "fashion-mnist"
            || rfx_data::dataset(s).is_ok_and(|d| d.kind.is_classification_table())
    });
    if ok {
        Ok(())
    } else {
        let tables: Vec<String> = rfx_data::datasets()
            .iter()
            .filter(|d| d.kind.is_classification_table())
            .map(|d| d.name.clone())
            .collect();
        Err(format!(
            "unknown or unsuitable data set \"{v}\"; allowed: mnist, fashion-mnist, {}",
            tables.join(", ")
        ))
    }
}

/// `[survey_benchmark]`: sizes, the validation scheme (`holdout` fraction or `inner_folds`-fold CV, not
/// both), the λ, σ and C grids, the SVM, the width cap and the samplers' settings. The fingerprint is the
/// `Debug` form of the fields before `inner_folds` existed (`holdout` with its default filled in), followed by
/// `;inner_folds=k` when given ([`Settings::describe`]).
#[derive(Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    n_train: usize,
    n_test: usize,
    test_fraction: f64,
    error_points: usize,
    /// `None`: not written (the default fraction, or `inner_folds`).
    holdout: Option<f64>,
    inner_folds: Option<usize>,
    lambda_grid: Vec<f64>,
    sigma_grid: Vec<f64>,
    sigma_times_median: bool,
    svm: bool,
    c_grid: Vec<f64>,
    svm_max_iter: usize,
    svm_tol: f64,
    /// "dcd" (LIBLINEAR's dual coordinate descent, the default), "newton" (the finite Newton method) or
    /// "hybrid" (coordinate descent, then Newton where it has not converged): `SvmSolver`.
    svm_solver: String,
    max_features: usize,
    rom_blocks: usize,
    ssf_sweeps: usize,
    ls_pool_factor: usize,
    ls_rows: usize,
    ls_lambda: f64,
}

/// The hold-out fraction when `holdout` is not written.
const DEFAULT_HOLDOUT: f64 = 0.25;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            n_train: 2000,
            n_test: 2000,
            test_fraction: 0.5,
            error_points: 1000,
            holdout: None,
            inner_folds: None,
            lambda_grid: vec![1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0],
            sigma_grid: vec![0.01, 0.1, 1.0, 10.0, 100.0],
            sigma_times_median: false,
            svm: true,
            c_grid: vec![0.01, 0.1, 1.0, 10.0, 100.0],
            svm_max_iter: 200,
            svm_tol: 0.1,
            svm_solver: "dcd".into(),
            max_features: 20_000,
            rom_blocks: 3,
            ssf_sweeps: 3,
            ls_pool_factor: 4,
            ls_rows: 1000,
            ls_lambda: 1e-3,
        }
    }
}

const GRID: &str = "a non-empty list of numbers > 0";

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("n_train", "integers from 20 to 1000000"),
        ("n_test", "integers from 10 to 1000000"),
        ("test_fraction", "numbers from 0.05 to 0.95"),
        ("error_points", "integers from 2 to 100000"),
        ("holdout", "numbers from 0.05 to 0.9"),
        ("inner_folds", "integers from 2 to 20"),
        ("lambda_grid", GRID),
        ("sigma_grid", GRID),
        ("c_grid", GRID),
        ("sigma_times_median", "true, false"),
        ("svm", "true, false"),
        ("svm_max_iter", "integers from 1 to 100000"),
        ("svm_tol", "numbers from 0.000000000001 to 10"),
        ("svm_solver", "dcd, newton, hybrid"),
        ("max_features", "integers from 1 to 10000000"),
        ("rom_blocks", "integers from 1 to 8"),
        ("ssf_sweeps", "integers from 0 to 100"),
        ("ls_pool_factor", "integers from 1 to 64"),
        ("ls_rows", "integers from 2 to 100000"),
        ("ls_lambda", "numbers from 0.000000000001 to 1000000"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("n_train", self.n_train as i128, 20, 1_000_000)?;
        int_in("n_test", self.n_test as i128, 10, 1_000_000)?;
        float_in("test_fraction", self.test_fraction, 0.05, 0.95)?;
        int_in("error_points", self.error_points as i128, 2, 100_000)?;
        if let Some(v) = self.holdout {
            float_in("holdout", v, 0.05, 0.9)?;
        }
        if let Some(k) = self.inner_folds {
            int_in("inner_folds", k as i128, 2, 20)?;
            if self.holdout.is_some() {
                return Err(Invalid {
                    key: "inner_folds",
                    message: "choose one validation scheme: `holdout` (one split) or `inner_folds` (k-fold)".into(),
                });
            }
        }
        for (key, grid) in [
            ("lambda_grid", &self.lambda_grid),
            ("sigma_grid", &self.sigma_grid),
            ("c_grid", &self.c_grid),
        ] {
            if grid.is_empty() {
                return Err(Invalid {
                    key,
                    message: "expected a non-empty list of numbers > 0".into(),
                });
            }
            if let Some(v) = grid.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                return Err(Invalid {
                    key,
                    message: format!("expected numbers > 0, found {v}"),
                });
            }
        }
        int_in("svm_max_iter", self.svm_max_iter as i128, 1, 100_000)?;
        float_in("svm_tol", self.svm_tol, 1e-12, 10.0)?;
        self.solver()?;
        int_in("max_features", self.max_features as i128, 1, 10_000_000)?;
        int_in("rom_blocks", self.rom_blocks as i128, 1, 8)?;
        int_in("ssf_sweeps", self.ssf_sweeps as i128, 0, 100)?;
        int_in("ls_pool_factor", self.ls_pool_factor as i128, 1, 64)?;
        int_in("ls_rows", self.ls_rows as i128, 2, 100_000)?;
        float_in("ls_lambda", self.ls_lambda, 1e-12, 1e6)
    }
}

impl Settings {
    /// The hold-out fraction of the λ, σ and C selection (when `inner_folds` is not given).
    fn holdout(&self) -> f64 {
        self.holdout.unwrap_or(DEFAULT_HOLDOUT)
    }

    /// The SVM's solver from `svm_solver`.
    fn solver(&self) -> Result<SvmSolver, Invalid> {
        match self.svm_solver.as_str() {
            "dcd" => Ok(SvmSolver::DualCd),
            "newton" => Ok(SvmSolver::Newton),
            "hybrid" => Ok(SvmSolver::Hybrid),
            other => Err(Invalid {
                key: "svm_solver",
                message: format!("expected dcd, newton or hybrid, found {other:?}"),
            }),
        }
    }

    /// The fingerprint: the settings as the `Debug` form of the struct before `inner_folds`, then
    /// `;inner_folds=k` when given, then `;svm_tol=ε`, then `;svm_solver=…` when not the default (dcd).
    fn describe(&self) -> String {
        let base = format!(
            "Settings {{ n_train: {:?}, n_test: {:?}, test_fraction: {:?}, error_points: {:?}, holdout: {:?}, \
             lambda_grid: {:?}, sigma_grid: {:?}, sigma_times_median: {:?}, svm: {:?}, c_grid: {:?}, \
             svm_max_iter: {:?}, max_features: {:?}, rom_blocks: {:?}, ssf_sweeps: {:?}, \
             ls_pool_factor: {:?}, ls_rows: {:?}, ls_lambda: {:?} }}",
            self.n_train,
            self.n_test,
            self.test_fraction,
            self.error_points,
            self.holdout(),
            self.lambda_grid,
            self.sigma_grid,
            self.sigma_times_median,
            self.svm,
            self.c_grid,
            self.svm_max_iter,
            self.max_features,
            self.rom_blocks,
            self.ssf_sweeps,
            self.ls_pool_factor,
            self.ls_rows,
            self.ls_lambda
        );
        let base = match self.inner_folds {
            Some(k) => format!("{base};inner_folds={k}"),
            None => base,
        };
        let base = format!("{base};svm_tol={:?}", self.svm_tol);
        if self.svm_solver == "dcd" {
            base
        } else {
            format!("{base};svm_solver={}", self.svm_solver)
        }
    }
}

/// Training/test inputs in $[0,1]^d$, labels, and the error points (rows of the training inputs).
struct Prepared {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    ltr: Vec<usize>,
    lte: Vec<usize>,
    classes: usize,
    error_rows: Vec<usize>,
}

struct BenchRunner {
    s: Settings,
    keel: DataCache,
    mnist: DataSlot,
    fashion: DataSlot,
    prepared: SharedCache<Prepared>,
    sigmas: SharedCache<f64>,
    grams: SharedCache<Array2<f64>>,
}

impl Kind for SurveyBenchmark {
    fn name(&self) -> &'static str {
        "survey_benchmark"
    }
    fn about(&self) -> &'static str {
        "random-features survey benchmark: Frobenius error, feature time, ridge/SVM accuracy per sampler, kernel and s = k d (Figs. 9-14, Table VII)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: "mnist, fashion-mnist or a classification table (keel/<set>, sklego/abalone, mlbench/shuttle)",
                check: check_dataset,
                required: true,
            },
            ParamSpec {
                name: "kernel",
                allowed: "gaussian, arccos0, arccos1, poly2",
                check: |v| check_choice(v, &KERNELS),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: METHODS_ALLOWED,
                check: |v| check_choice(v, &all_methods()),
                required: true,
            },
            ParamSpec {
                name: "s_mult",
                allowed: "k in s = k d, integers from 1 to 64",
                check: |v| check_int(v, 1, 64),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(BenchRunner {
            s,
            keel: DataCache::default(),
            mnist: DataSlot::new(),
            fashion: DataSlot::new(),
            prepared: SharedCache::default(),
            sigmas: SharedCache::default(),
            grams: SharedCache::default(),
        }))
    }
}

/// Min–max scaling to $[0,1]$ with the statistics of `xtr`; constant columns map to 0; test values clipped.
fn minmax(xtr: &mut Array2<f64>, xte: &mut Array2<f64>) {
    for j in 0..xtr.ncols() {
        let col = xtr.column(j);
        let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w = hi - lo;
        let f = |v: f64| {
            if w > 0.0 {
                ((v - lo) / w).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        xtr.column_mut(j).mapv_inplace(f);
        xte.column_mut(j).mapv_inplace(f);
    }
}

impl BenchRunner {
    fn raw(&self, name: &str, seed: &str, experiment_seed: u64) -> Result<Prepared, String> {
        let s = &self.s;
        let mut rng = rng_stream(experiment_seed, &format!("data;dataset={name};seed={seed}"));
        let err = |e: CellError| match e {
            CellError::Fatal(m) | CellError::Skipped(m) => m,
        };
        let (xtr_all, ltr_all, xte_all, lte_all, classes) =
            if name == "mnist" || name == "fashion-mnist" {
                let slot = if name == "mnist" {
                    &self.mnist
                } else {
                    &self.fashion
                };
                let tt = idx_data(slot, name).map_err(err)?;
                let classes = tt.train.n_classes();
                (
                    tt.train.x.clone(),
                    tt.train.labels.clone(),
                    tt.test.x.clone(),
                    tt.test.labels.clone(),
                    classes,
                )
            } else {
                let t = self.keel.get(name).map_err(err)?;
                let n = t.x.nrows();
                let mut idx: Vec<usize> = (0..n).collect();
                idx.shuffle(&mut rng);
                let nte = ((n as f64) * s.test_fraction).round() as usize;
                let (te, tr) = idx.split_at(nte);
                (
                    t.x.select(Axis(0), tr),
                    tr.iter().map(|&i| t.labels[i]).collect(),
                    t.x.select(Axis(0), te),
                    te.iter().map(|&i| t.labels[i]).collect(),
                    t.n_classes,
                )
            };
        let mut pick = |len: usize, k: usize| -> Vec<usize> {
            let mut idx: Vec<usize> = (0..len).collect();
            idx.shuffle(&mut rng);
            idx.truncate(k.min(len));
            idx
        };
        let itr = pick(xtr_all.nrows(), s.n_train);
        let ite = pick(xte_all.nrows(), s.n_test);
        let mut xtr = xtr_all.select(Axis(0), &itr);
        let mut xte = xte_all.select(Axis(0), &ite);
        minmax(&mut xtr, &mut xte);
        let ltr: Vec<usize> = itr.iter().map(|&i| ltr_all[i]).collect();
        let lte: Vec<usize> = ite.iter().map(|&i| lte_all[i]).collect();
        let error_rows = pick(xtr.nrows(), s.error_points);
        Ok(Prepared {
            xtr,
            xte,
            ltr,
            lte,
            classes,
            error_rows,
        })
    }

    fn prepared(&self, name: &str, seed: &str, es: u64) -> Result<Arc<Prepared>, CellError> {
        self.prepared
            .get(&format!("dataset={name};seed={seed}"), || {
                self.raw(name, seed, es)
            })
    }

    /// $\sigma$ for data set `name`: held-out ridge accuracy of RFF at $s = 4d$ on the seed-0 split.
    fn sigma(&self, name: &str, es: u64) -> Result<f64, CellError> {
        let p = self.prepared(name, "0", es)?;
        let s = &self.s;
        let v = self.sigmas.get(&format!("sigma;dataset={name}"), || {
            let d = p.xtr.ncols();
            let unit = if s.sigma_times_median {
                // among the first (at most) 1,000 rows
                median_distance(p.xtr.slice(ndarray::s![..p.xtr.nrows().min(1000), ..]))
            } else {
                1.0
            };
            let mut best = (f64::INFINITY, unit * s.sigma_grid[0]);
            for &factor in &s.sigma_grid {
                let sigma = unit * factor;
                let mut rng = rng_stream(es, &format!("sigma;dataset={name};sigma={sigma}"));
                let kernel = SurveyKernel::Gaussian { sigma };
                let (spec, params) = self.registry_choice(kernel, "gaussian", "rff")?;
                let map = spec
                    .fit(kernel.output_dim(4 * d), &params, FitData::Dim(d), &mut rng)
                    .map_err(|e| e.to_string())?;
                let z = map.transform(p.xtr.view()).map_err(|e| e.to_string())?;
                let (cv_err, _) = self
                    .ridge_cv(z.view(), &p.ltr, p.classes, &format!("sigma;{name}"), es)
                    .map_err(|e| e.to_string())?;
                if cv_err < best.0 {
                    best = (cv_err, sigma);
                }
            }
            Ok(best.1)
        })?;
        Ok(*v)
    }

    /// The inner validation scheme: `inner_folds`-fold CV, or one `holdout` split.
    fn validation(&self, seed: u64) -> Validation {
        match self.s.inner_folds {
            Some(folds) => Validation::KFold { folds, seed },
            None => Validation::Holdout {
                fraction: self.s.holdout(),
                seed,
            },
        }
    }

    /// λ selection by the inner validation ([`BenchRunner::validation`]): (best validation error, model
    /// refitted on all training rows).
    fn ridge_cv(
        &self,
        z: ArrayView2<'_, f64>,
        labels: &[usize],
        classes: usize,
        key: &str,
        es: u64,
    ) -> rfx_core::Result<(f64, rfx_solvers::ridge::Ridge)> {
        let y = one_hot(labels, classes, false)?;
        let search = LambdaSearch {
            grid: self.s.lambda_grid.clone(),
            scale: LambdaScale::TimesN,
            validation: self.validation(stream_seed(es, &format!("holdout;{key}"))),
            score: CvScore::ClassificationError,
        };
        let (model, cv) = fit_ridge_cv(z, y.view(), &search, RidgeForm::Auto)?;
        Ok((cv.scores[cv.best_index], model))
    }

    fn svm_accuracy(
        &self,
        ztr: ArrayView2<'_, f64>,
        zte: ArrayView2<'_, f64>,
        p: &Prepared,
        key: &str,
        es: u64,
    ) -> rfx_core::Result<(f64, f64)> {
        // (fitting rows, validation rows) per split: the same scheme as the λ search, on its own stream
        let splits = folds(
            ztr.nrows(),
            &self.validation(stream_seed(es, &format!("svm-holdout;{key}"))),
        )?;
        let params = |c: f64| {
            let mut sp = SvmParams::new(c, stream_seed(es, &format!("svm;{key}")));
            sp.max_iter = self.s.svm_max_iter;
            sp.tol = self.s.svm_tol;
            sp.solver = self.s.solver().unwrap_or_default();
            sp
        };
        let mut best = (f64::NEG_INFINITY, self.s.c_grid[0]);
        // a single C needs no selection
        let grid: &[f64] = if self.s.c_grid.len() > 1 {
            &self.s.c_grid
        } else {
            &[]
        };
        // (fitting rows, their labels, validation rows, their labels), selected once for the whole grid
        let data: Vec<_> = if grid.is_empty() {
            Vec::new()
        } else {
            splits
                .iter()
                .map(|(fi, va)| {
                    let labels =
                        |rows: &[usize]| rows.iter().map(|&i| p.ltr[i]).collect::<Vec<_>>();
                    (
                        ztr.select(Axis(0), fi),
                        labels(fi),
                        ztr.select(Axis(0), va),
                        labels(va),
                    )
                })
                .collect()
        };
        // per split, the C grid in increasing order as one warm-started path (LinearSvm::fit_path); the
        // splits in parallel; then the accuracies summed per C in split order, C in the grid's order
        let mut rising: Vec<usize> = (0..grid.len()).collect();
        rising.sort_by(|&a, &b| grid[a].total_cmp(&grid[b]));
        let cs: Vec<f64> = rising.iter().map(|&k| grid[k]).collect();
        let per_split = data
            .par_iter()
            .map(|(zf, lf, zv, lv)| {
                let models = LinearSvm::fit_path(zf.view(), lf, p.classes, &params(cs[0]), &cs)?;
                let mut accs = vec![0.0; grid.len()];
                for (&k, m) in rising.iter().zip(&models) {
                    accs[k] = accuracy(&m.predict(zv.view())?, lv)?;
                }
                Ok(accs)
            })
            .collect::<rfx_core::Result<Vec<Vec<f64>>>>()?;
        for (k, &c) in grid.iter().enumerate() {
            let mut acc = 0.0;
            for accs in &per_split {
                acc += accs[k];
            }
            let a = acc / data.len() as f64;
            if a > best.0 {
                best = (a, c);
            }
        }
        let m = LinearSvm::fit(ztr, &p.ltr, p.classes, &params(best.1))?;
        Ok((accuracy(&m.predict(zte)?, &p.lte)?, best.1))
    }

    /// The exact Gram on the error points (shared by every method of a data set, kernel and seed).
    fn gram(
        &self,
        kernel: &str,
        sigma: f64,
        x: ArrayView2<'_, f64>,
        key: &str,
    ) -> Result<Arc<Array2<f64>>, CellError> {
        let kernel = kernel.to_string();
        let x = x.to_owned();
        self.grams.get(key, move || {
            let g = match kernel.as_str() {
                "gaussian" => GaussianKernel::new(sigma)
                    .and_then(|k| k.gram(x.view(), x.view()))
                    .map_err(|e| e.to_string())?,
                "arccos0" | "arccos1" => {
                    let order = if kernel == "arccos0" {
                        ArcCosineOrder::Zero
                    } else {
                        ArcCosineOrder::One
                    };
                    ArcCosineKernel::new(order)
                        .gram_sym(x.view())
                        .map_err(|e| e.to_string())?
                }
                _ => PolynomialKernel::new(2, 1.0)
                    .and_then(|k| k.gram(x.view(), x.view()))
                    .map_err(|e| e.to_string())?,
            };
            Ok(g)
        })
    }

    /// The registry method and its checked parameters of a cell: the survey's samplers in the survey's form
    /// (the settings a method does not declare are dropped: `rom_blocks` reaches `rom` only); for `poly2`
    /// $(1+\langle x,y\rangle)^2$ TensorSketch and TRP on $[x; 1]$ (`bias = 1`) and Random Maclaurin with
    /// the kernel's Taylor coefficients (`kernel = poly, degree = 2`).
    fn registry_choice(
        &self,
        kernel: SurveyKernel,
        kname: &str,
        method: &str,
    ) -> Result<(&'static MethodSpec, Params), String> {
        let s = &self.s;
        let (name, given): (&str, Vec<(&str, RawValue)>) = match (kname, method) {
            ("poly2", "ts" | "trp") => (
                if method == "ts" {
                    "tensorsketch"
                } else {
                    "trp"
                },
                vec![
                    ("degree", RawValue::from(2i64)),
                    ("bias", RawValue::from(1.0)),
                ],
            ),
            ("poly2", _) => (
                "maclaurin",
                vec![
                    ("kernel", RawValue::from("poly")),
                    ("degree", RawValue::from(2i64)),
                ],
            ),
            _ => {
                let mut given = vec![
                    ("kernel", RawValue::from(kname)),
                    ("form", RawValue::from("survey")),
                    ("rom_blocks", RawValue::from(s.rom_blocks as i64)),
                    ("ssf_sweeps", RawValue::from(s.ssf_sweeps as i64)),
                    ("pool_factor", RawValue::from(s.ls_pool_factor as i64)),
                    ("ls_rows", RawValue::from(s.ls_rows as i64)),
                    ("ls_lambda", RawValue::from(s.ls_lambda)),
                ];
                if let SurveyKernel::Gaussian { sigma } = kernel {
                    given.push(("sigma", RawValue::from(sigma)));
                }
                (method, given)
            }
        };
        let spec = rfx_registry::method(name)?;
        let params = spec
            .params_declared(&given)
            .map_err(|m| format!("method {method}: {m}"))?;
        Ok((spec, params))
    }
}

impl Runner for BenchRunner {
    /// `sigma` is NaN for the arc-cosine kernels, `svm_acc` and `svm_c` where no SVM is fitted.
    fn nan_metrics(&self) -> Vec<String> {
        ["svm_acc", "sigma", "svm_c"]
            .into_iter()
            .map(String::from)
            .collect()
    }
    fn metrics(&self) -> Vec<String> {
        [
            "rel_error",
            "feature_s",
            "ridge_acc",
            "svm_acc",
            "dim",
            "sigma",
            "lambda",
            "svm_c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn settings(&self) -> String {
        self.s.describe()
    }
    fn cost(&self, cell: &Cell) -> f64 {
        // Feature maps and solves grow with the number of features s = k d.
        cell.int("s_mult").map_or(1.0, |k| k as f64)
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        // The split, σ and exact Gram of one data set, kernel and seed.
        Some(group_key(cell, &["method", "s_mult"]))
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let name = cell.str("dataset")?;
        let kname = cell.str("kernel")?;
        let method = cell.str("method")?;
        let k = cell.int("s_mult")? as usize;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let es = cell.experiment_seed;
        let poly_method = POLY_METHODS.contains(&method);
        if poly_method != (kname == "poly2") {
            return Err(CellError::Skipped(format!(
                "method {method} does not apply to kernel {kname} (allowed: {METHODS_ALLOWED})"
            )));
        }
        let p = self.prepared(name, &seed, es)?;
        let d = p.xtr.ncols();
        let s_freq = k * d;
        let sigma = if kname == "gaussian" {
            self.sigma(name, es)?
        } else {
            f64::NAN
        };
        let kernel = match kname {
            "gaussian" => SurveyKernel::Gaussian { sigma },
            "arccos0" => SurveyKernel::ArcCos0,
            _ => SurveyKernel::ArcCos1,
        };
        let out_dim = if kname == "poly2" {
            s_freq
        } else {
            kernel.output_dim(s_freq)
        };
        if out_dim > self.s.max_features {
            return Err(CellError::Skipped(format!(
                "{out_dim} features > max_features = {}",
                self.s.max_features
            )));
        }
        let key = cell.key();
        let fatal = |e: String| CellError::Fatal(format!("cell {key}: {e}"));

        // features: fit + transform train and test (the survey's "time")
        let t0 = Instant::now();
        let (spec, params) = self.registry_choice(kernel, kname, method).map_err(fatal)?;
        let map = spec
            .fit(out_dim, &params, FitData::Rows(p.xtr.view()), rng)
            .map_err(|e| fatal(format!("method {method}: {e}")))?;
        let ztr = map
            .transform(p.xtr.view())
            .map_err(|e| fatal(e.to_string()))?;
        let zte = map
            .transform(p.xte.view())
            .map_err(|e| fatal(e.to_string()))?;
        let feature_s = t0.elapsed().as_secs_f64();

        // approximation error on the error points
        let xe = p.xtr.select(Axis(0), &p.error_rows);
        let gram = self.gram(
            kname,
            sigma,
            xe.view(),
            &format!("gram;dataset={name};kernel={kname};seed={seed}"),
        )?;
        let ze = ztr.select(Axis(0), &p.error_rows);
        let approx = ze.dot(&ze.t());
        let num: f64 = approx
            .iter()
            .zip(gram.iter())
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        let den: f64 = gram.iter().map(|v| v * v).sum();
        let rel_error = (num / den).sqrt();

        // ridge "linear regression" with λ by hold-out, then test accuracy
        let ridge_key = format!("dataset={name};seed={seed}");
        let (_, model) = self
            .ridge_cv(ztr.view(), &p.ltr, p.classes, &ridge_key, es)
            .map_err(|e| fatal(e.to_string()))?;
        let pred = model
            .predict(zte.view())
            .map_err(|e| fatal(e.to_string()))?;
        let ridge_acc =
            accuracy(&argmax_rows(pred.view()), &p.lte).map_err(|e| fatal(e.to_string()))?;
        let lambda = model.lambda_eff() / ztr.nrows() as f64;

        let (svm_acc, svm_c) = if self.s.svm && kname == "gaussian" {
            self.svm_accuracy(ztr.view(), zte.view(), &p, &ridge_key, es)
                .map_err(|e| fatal(e.to_string()))?
        } else {
            (f64::NAN, f64::NAN)
        };
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                rel_error,
                feature_s,
                ridge_acc,
                svm_acc,
                ztr.ncols() as f64,
                sigma,
                lambda,
                svm_c,
            ],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fingerprint is the `Debug` form of the struct the kind had before `inner_folds`, then
    /// `;inner_folds=k`, then `;svm_tol=ε` (added with LIBLINEAR's tolerance, which changed every SVM number).
    #[test]
    fn describe_is_the_former_debug_form() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Settings {
            n_train: usize,
            n_test: usize,
            test_fraction: f64,
            error_points: usize,
            holdout: f64,
            lambda_grid: Vec<f64>,
            sigma_grid: Vec<f64>,
            sigma_times_median: bool,
            svm: bool,
            c_grid: Vec<f64>,
            svm_max_iter: usize,
            max_features: usize,
            rom_blocks: usize,
            ssf_sweeps: usize,
            ls_pool_factor: usize,
            ls_rows: usize,
            ls_lambda: f64,
        }
        let mut now = super::Settings {
            holdout: Some(0.3),
            lambda_grid: vec![1e-8, 0.5],
            ..Default::default()
        };
        let before = Settings {
            n_train: now.n_train,
            n_test: now.n_test,
            test_fraction: now.test_fraction,
            error_points: now.error_points,
            holdout: 0.3,
            lambda_grid: now.lambda_grid.clone(),
            sigma_grid: now.sigma_grid.clone(),
            sigma_times_median: now.sigma_times_median,
            svm: now.svm,
            c_grid: now.c_grid.clone(),
            svm_max_iter: now.svm_max_iter,
            max_features: now.max_features,
            rom_blocks: now.rom_blocks,
            ssf_sweeps: now.ssf_sweeps,
            ls_pool_factor: now.ls_pool_factor,
            ls_rows: now.ls_rows,
            ls_lambda: now.ls_lambda,
        };
        assert_eq!(now.describe(), format!("{before:?};svm_tol=0.1"));
        now.holdout = None;
        now.inner_folds = Some(5);
        assert_eq!(
            now.describe(),
            format!(
                "{:?};inner_folds=5;svm_tol=0.1",
                Settings {
                    holdout: 0.25,
                    ..before
                }
            )
        );
        assert!(rfx_harness::config::Settings::check(&now).is_ok());
        now.holdout = Some(0.3);
        let e = rfx_harness::config::Settings::check(&now).unwrap_err();
        assert_eq!(e.key, "inner_folds");
        // the SVM's solver: named in the fingerprint only when not the default, checked by name
        now.holdout = None;
        let dcd = now.describe();
        now.svm_solver = "hybrid".into();
        assert_eq!(now.describe(), format!("{dcd};svm_solver=hybrid"));
        assert!(rfx_harness::config::Settings::check(&now).is_ok());
        now.svm_solver = "tron".into();
        let e = rfx_harness::config::Settings::check(&now).unwrap_err();
        assert_eq!(e.key, "svm_solver");
        assert!(e.message.contains("dcd, newton or hybrid"), "{}", e.message);
    }

    #[test]
    fn minmax_maps_training_range_to_unit_interval_and_clips_test() {
        let mut a = ndarray::array![[0.0, 5.0], [2.0, 5.0], [1.0, 5.0]];
        let mut b = ndarray::array![[3.0, 1.0], [-1.0, 5.0]];
        minmax(&mut a, &mut b);
        assert_eq!(a.column(0).to_vec(), vec![0.0, 1.0, 0.5]);
        assert_eq!(a.column(1).to_vec(), vec![0.0, 0.0, 0.0]);
        assert_eq!(b.column(0).to_vec(), vec![1.0, 0.0]);
    }

    #[test]
    fn dataset_check_names_the_allowed_sets() {
        assert!(check_dataset(&Value::Str("keel/letter".into())).is_ok());
        assert!(check_dataset(&Value::Str("mnist".into())).is_ok());
        let e = check_dataset(&Value::Str("uci/protein".into())).unwrap_err();
        assert!(e.contains("keel/letter") && e.contains("mnist"), "{e}");
    }
}
