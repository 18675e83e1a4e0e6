//! `ridge_classify`: test accuracy of ridge classification on random features against their number $m$, for
//! any feature map of the registry — the NTK-sketching paper's Fig. 2a (MNIST, Grad-RF vs NTKSketch vs NTKRF).
//!
//! **Data.** An image set with a fixed split (`mnist`, `fashion-mnist`): `n_train` training images drawn at
//! random per seed (stream `rng_stream(experiment seed, "data;seed=..")`, shared by every method and $m$),
//! and `n_test` test images (0: the whole test set); pixels as loaded, rows scaled to unit norm when
//! `unit_norm` is set (the NTK is positively homogeneous, so this fixes the kernel's scale, as in the NTK
//! random features paper's Fig. 2).
//! **Learner.** Ridge regression on one-hot targets minus $1/C$ ("one-hot − 0.1", the NTK-sketching
//! protocol), prediction by the row argmax. λ from a log grid (times $n$) by the validation accuracy of a fit
//! on `lambda_fit_rows` random training rows, validated on `lambda_valid_rows` others ("we search the
//! ridge parameter with a random subset of the training set", §5.1); then one refit on all training rows.
//! **Method values** are registry names with optional parameters, `ntk-rf(sketch=tensorsrht)`
//! ([`crate::methods::MethodChoice`]); a method whose budget $m$ is too small for the input (Grad-RF needs
//! $m \ge d + 1$) is a skipped cell. **Times**: `feature_s` (fit and transform train and test rows),
//! `solve_s` (λ search, refit, prediction).

use std::sync::Arc;

use ndarray::{Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, RfxRng};
use rfx_data::normalize_rows;
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, log10_grid, one_hot, CvScore, LambdaScale, LambdaSearch, RidgeForm,
    Validation,
};

use super::trf_common::{idx_data, timed, DataSlot, SharedCache};
use super::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use crate::config::{ConfigError, Section, Value};
use crate::methods::{method, MethodChoice};

/// The kind.
pub struct RidgeClassify;

const DATASETS: [&str; 2] = ["mnist", "fashion-mnist"];
const METHODS: &str = "a feature map of the registry (rfx methods), optionally with parameters, e.g. ntk-rf(sketch=tensorsrht)";

struct Settings {
    dataset: String,
    n_train: usize,
    n_test: usize,
    unit_norm: bool,
    grid: Vec<f64>,
    fit_rows: usize,
    valid_rows: usize,
}

/// One seed's data: training and test rows, labels, number of classes, and the λ-search split.
struct Split {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    ltr: Vec<usize>,
    lte: Vec<usize>,
    classes: usize,
    fit: Vec<usize>,
    valid: Vec<usize>,
}

struct ClassifyRunner {
    s: Settings,
    data: DataSlot,
    splits: SharedCache<Split>,
}

fn check_method(v: &Value) -> Result<(), String> {
    let s = v.as_str().ok_or_else(|| format!("{v} is not a string"))?;
    let c = MethodChoice::parse(s)?;
    method(&c.name)?.parse_params(&c.params).map(|_| ())
}

impl Kind for RidgeClassify {
    fn name(&self) -> &'static str {
        "ridge_classify"
    }
    fn about(&self) -> &'static str {
        "ridge classification accuracy vs number of features m for registry feature maps on MNIST / Fashion-MNIST (NTK-sketching paper, Fig. 2a)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "method",
                allowed: METHODS,
                check: check_method,
                required: true,
            },
            super::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let mut s = Settings {
            dataset: "mnist".into(),
            n_train: 10_000,
            n_test: 0,
            unit_norm: true,
            grid: log10_grid(-8.0, 1.0, 10).expect("valid default grid"),
            fit_rows: 2000,
            valid_rows: 2000,
        };
        if let Some(sec) = section {
            if let Some(v) = sec.opt_choice("dataset", &DATASETS)? {
                s.dataset = v;
            }
            if let Some(v) = sec.opt_int("n_train", 10, 60_000)? {
                s.n_train = v as usize;
            }
            if let Some(v) = sec.opt_int("n_test", 0, 10_000)? {
                s.n_test = v as usize;
            }
            if let Some(v) = sec.opt_bool("unit_norm")? {
                s.unit_norm = v;
            }
            if let Some(v) = sec.opt_int("lambda_fit_rows", 2, 60_000)? {
                s.fit_rows = v as usize;
            }
            if let Some(v) = sec.opt_int("lambda_valid_rows", 1, 60_000)? {
                s.valid_rows = v as usize;
            }
            if s.fit_rows + s.valid_rows > s.n_train {
                return Err(sec.error(
                    "lambda_valid_rows",
                    format!(
                        "lambda_fit_rows + lambda_valid_rows must not exceed n_train = {}",
                        s.n_train
                    ),
                ));
            }
            let lo = sec
                .opt_float("lambda_log10_min", -30.0, 30.0)?
                .unwrap_or(-8.0);
            let hi = sec
                .opt_float("lambda_log10_max", -30.0, 30.0)?
                .unwrap_or(1.0);
            let num = sec.opt_int("lambda_count", 1, 200)?.unwrap_or(10) as usize;
            if hi < lo {
                return Err(sec.error("lambda_log10_max", "must be >= lambda_log10_min"));
            }
            s.grid =
                log10_grid(lo, hi, num).map_err(|e| sec.error("lambda_count", e.to_string()))?;
        }
        Ok(Box::new(ClassifyRunner {
            s,
            data: DataSlot::new(),
            splits: SharedCache::default(),
        }))
    }
}

impl ClassifyRunner {
    fn split(&self, experiment_seed: u64, seed: &str) -> Result<Split, String> {
        let s = &self.s;
        let tt = idx_data(&self.data, &s.dataset).map_err(|e| match e {
            CellError::Fatal(m) | CellError::Skipped(m) => m,
        })?;
        let mut rng = rng_stream(experiment_seed, &format!("data;seed={seed}"));
        let (ntr_all, nte_all) = (tt.train.x.nrows(), tt.test.x.nrows());
        if s.n_train > ntr_all || s.n_test > nte_all {
            return Err(format!(
                "{}: asked for {} training and {} test images, the set has {ntr_all} and {nte_all}",
                s.dataset, s.n_train, s.n_test
            ));
        }
        let mut itr: Vec<usize> = (0..ntr_all).collect();
        itr.shuffle(&mut rng);
        itr.truncate(s.n_train);
        let ite: Vec<usize> = if s.n_test == 0 {
            (0..nte_all).collect()
        } else {
            let mut v: Vec<usize> = (0..nte_all).collect();
            v.shuffle(&mut rng);
            v.truncate(s.n_test);
            v
        };
        let mut xtr = tt.train.x.select(Axis(0), &itr);
        let mut xte = tt.test.x.select(Axis(0), &ite);
        if s.unit_norm {
            normalize_rows(&mut xtr);
            normalize_rows(&mut xte);
        }
        let mut perm: Vec<usize> = (0..s.n_train).collect();
        perm.shuffle(&mut rng);
        let fit = perm[..s.fit_rows].to_vec();
        let valid = perm[s.fit_rows..s.fit_rows + s.valid_rows].to_vec();
        Ok(Split {
            ltr: itr.iter().map(|&i| tt.train.labels[i]).collect(),
            lte: ite.iter().map(|&i| tt.test.labels[i]).collect(),
            classes: tt.train.labels.iter().max().map_or(0, |&k| k + 1),
            xtr,
            xte,
            fit,
            valid,
        })
    }
}

impl Runner for ClassifyRunner {
    fn metrics(&self) -> Vec<String> {
        [
            "accuracy",
            "dim",
            "lambda",
            "feature_s",
            "solve_s",
            "total_s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn settings(&self) -> String {
        let s = &self.s;
        format!(
            "dataset={};n_train={};n_test={};unit_norm={};grid={:?};fit_rows={};valid_rows={}",
            s.dataset, s.n_train, s.n_test, s.unit_norm, s.grid, s.fit_rows, s.valid_rows
        )
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let key = cell.key();
        let fatal = |e: String| CellError::Fatal(format!("cell {key}: {e}"));
        let choice = MethodChoice::parse(cell.str("method")?).map_err(fatal)?;
        let spec = method(&choice.name).map_err(fatal)?;
        let params = spec.parse_params(&choice.params).map_err(fatal)?;
        let m = usize::try_from(cell.int("m")?).map_err(|e| fatal(e.to_string()))?;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let d: Arc<Split> = self.splits.get(&format!("seed={seed}"), || {
            self.split(cell.experiment_seed, &seed)
        })?;

        let (r, feature_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            let map = spec.fit(m, &params, d.xtr.ncols(), Some(d.xtr.view()), rng)?;
            Ok((map.transform(d.xtr.view())?, map.transform(d.xte.view())?))
        });
        let (ztr, zte) = match r {
            Ok(z) => z,
            // a budget the method cannot meet for this input (e.g. Grad-RF below d + 1) is not a bug
            Err(rfx_core::RfxError::InvalidParameter { name, .. }) if name == "dim" => {
                return Err(CellError::Skipped(format!(
                    "{} cannot use m = {m} features on {}-dimensional inputs",
                    choice.name,
                    d.xtr.ncols()
                )))
            }
            Err(e) => return Err(fatal(e.to_string())),
        };

        let (r, solve_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            let y = one_hot(&d.ltr, d.classes, true)?;
            let search = LambdaSearch {
                grid: self.s.grid.clone(),
                scale: LambdaScale::TimesN,
                validation: Validation::Split {
                    train: d.fit.clone(),
                    valid: d.valid.clone(),
                },
                score: CvScore::ClassificationError,
            };
            let (model, cv) = fit_ridge_cv(ztr.view(), y.view(), &search, RidgeForm::Auto)?;
            let pred = argmax_rows(model.predict(zte.view())?.view());
            Ok((pred, cv.best_lambda))
        });
        let (pred, lambda) = r.map_err(|e| fatal(e.to_string()))?;
        let correct = pred.iter().zip(&d.lte).filter(|(a, b)| a == b).count();
        let accuracy = correct as f64 / d.lte.len().max(1) as f64;
        Ok(CellOutput {
            metrics: vec![
                accuracy,
                ztr.ncols() as f64,
                lambda,
                feature_s,
                solve_s,
                feature_s + solve_s,
            ],
            timings: Vec::new(),
        })
    }
}
