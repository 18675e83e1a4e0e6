//! `ridge_classify`: test accuracy of ridge classification on random features (any feature map of the
//! registry) or with an exact kernel — the NTK-sketching paper's Fig. 2a (MNIST, Grad-RF vs NTKSketch vs NTKRF)
//! and the NTK random features paper's Table 1 (small classification sets, 4-fold protocol).
//!
//! **Data.** `dataset` (a sweep parameter, or the section's `dataset` when the sweep has none):
//! * an image set with a fixed split (`mnist`, `fashion-mnist`): `n_train` training images drawn at random per
//!   seed (stream `rng_stream(experiment seed, "data;seed=..")`, shared by every method and $m$) and `n_test`
//!   test images (0: the whole test set), or with `stratified = true` the same number `n_train / C` from every
//!   class (few-shot: `n_train = 50` draws 5 of each of 10 classes); pixels as loaded, rows scaled to unit norm when `unit_norm` is set
//!   (the NTK is positively homogeneous, so this fixes the kernel's scale, as in the NTK random features
//!   paper's Fig. 2);
//! * a classification table (`keel/...`, `sklego/abalone`): at most `max_rows` rows drawn per data set and seed,
//!   split into `folds` random folds; each fold is the test set once, the others the training set; inputs
//!   standardised with the training folds' statistics; the cell's accuracy is the mean over folds.
//!
//! **Learner.** Ridge regression on one-hot targets minus $1/C$ ("one-hot − 0.1", the NTK-sketching protocol),
//! prediction by the row argmax. λ from a log grid (times $n$) by the validation accuracy of a fit on part of
//! the training rows, validated on others (images: `lambda_fit_rows` and `lambda_valid_rows`; tables: 3/4 and
//! 1/4 of the training folds) — "we search the ridge parameter with a random subset of the training set",
//! §5.1 — then one refit on all training rows.
//! **Methods.** Registry names with optional parameters, `ntk-rf(sketch=tensorsrht)`
//! ([`rfx_registry::MethodChoice`]); methods with a bandwidth get $\sigma$ = `sigma` (times $\sqrt d$ with
//! `sigma_times_sqrt_dim`) unless the value sets it. `exact(kernel=relu-ntk, depth=2)` or
//! `exact(kernel=gaussian)`, optionally with `bias=β` (inputs $[x, \beta]$: the NTK of a network with a
//! first-layer bias, [`rfx_core::WithBias`]; the registry's NTK maps take the same parameter): kernel ridge
//! classification with the exact kernel (λ searched from the Gram,
//! `rfx_solvers::ridge::select_lambda_gram`). A budget a method cannot meet for the input
//! (Grad-RF needs $m \ge d + 1$) is a skipped cell. **Times**: `feature_s` (fit and transform, or the exact
//! Grams), `solve_s` (λ search, refit, prediction), summed over folds.

use std::sync::Arc;

use ndarray::{Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, Kernel, RfxRng};
use rfx_data::{normalize_rows, Standardizer};
use rfx_gzk::zonal::Gzk;
use rfx_linalg::{DEFAULT_MEMORY_CAP, DEFAULT_ROW_BLOCK};
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, fit_ridge_cv_streamed, one_hot, select_lambda_gram, CvScore,
    KernelRidge, KrrParams, LambdaScale, LambdaSearch, RidgeForm, Validation,
};

use crate::kinds::tabular::{check_dataset, derived, lambda_grid, DataCache, DataNeed};
use crate::kinds::trf_common::{idx_data, random_rows, timed, DataSlot, SharedCache};
use rfx_core::FitData;
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::{
    bias_of, method, with_bias, MethodChoice, ParamDoc, ParamKind, Params, RawValue, BIAS,
    NTK_DEPTH,
};

/// The kind.
pub struct RidgeClassify;

const IMAGE_SETS: [&str; 2] = ["mnist", "fashion-mnist"];
const DATASETS: &str =
    "mnist, fashion-mnist, or a registered classification table (keel/<set>, sklego/abalone)";
const METHODS: &str = "a feature map of the registry (rfx methods), optionally with parameters, e.g. \
                       ntk-rf(sketch=tensorsrht); or exact(kernel=relu-ntk|gaussian, depth=L, sigma=s, bias=b)";
/// The `method` value of exact kernel ridge classification.
const EXACT: &str = "exact";

/// The parameters of `exact(...)`.
const EXACT_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "kernel",
        kind: ParamKind::Choice(&["relu-ntk", "gaussian"]),
        default: "relu-ntk",
        about: "exact kernel",
    },
    NTK_DEPTH,
    ParamDoc {
        name: "sigma",
        kind: ParamKind::Float { min: 0.0, max: 1e6 },
        default: "0",
        about: "Gaussian bandwidth; 0 (the default) takes the kind's `sigma` setting",
    },
    BIAS,
];

/// `[ridge_classify]`: the data, the λ grid ($10^{\text{min}}$ to $10^{\text{max}}$, `lambda_count` points),
/// the λ-search rows of the image sets, the folds of the tables, the row cap and the Gaussian bandwidth.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    dataset: String,
    n_train: usize,
    n_test: usize,
    unit_norm: bool,
    lambda_log10_min: f64,
    lambda_log10_max: f64,
    lambda_count: usize,
    #[serde(rename = "lambda_fit_rows")]
    fit_rows: usize,
    #[serde(rename = "lambda_valid_rows")]
    valid_rows: usize,
    folds: usize,
    max_rows: usize,
    sigma: f64,
    #[serde(rename = "sigma_times_sqrt_dim")]
    sigma_sqrt_dim: bool,
    /// Image sets: draw the `n_train` training images as the same number from every class (few-shot:
    /// `n_train = 50` is 5 per class of 10); `None`: not written (uniformly at random).
    stratified: Option<bool>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dataset: "mnist".into(),
            n_train: 10_000,
            n_test: 0,
            unit_norm: true,
            lambda_log10_min: -8.0,
            lambda_log10_max: 1.0,
            lambda_count: 10,
            fit_rows: 2000,
            valid_rows: 2000,
            folds: 4,
            max_rows: 0,
            sigma: 1.0,
            sigma_sqrt_dim: true,
            stratified: None,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("dataset", "mnist, fashion-mnist or a classification table"),
        ("n_train", "integers from 10 to 60000"),
        ("n_test", "integers from 0 to 10000"),
        ("unit_norm", "true, false"),
        ("lambda_log10_min", "numbers from -30 to 30"),
        ("lambda_log10_max", "numbers from -30 to 30"),
        ("lambda_count", "integers from 1 to 200"),
        ("lambda_fit_rows", "integers from 2 to 60000"),
        ("lambda_valid_rows", "integers from 1 to 60000"),
        ("folds", "integers from 2 to 20"),
        ("max_rows", "integers from 0 to 4294967295"),
        ("sigma", "numbers from 0.000001 to 1000000"),
        ("sigma_times_sqrt_dim", "true, false"),
        ("stratified", "true, false"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        check_data(&Value::Str(self.dataset.clone())).map_err(|message| Invalid {
            key: "dataset",
            message,
        })?;
        int_in("n_train", self.n_train as i128, 10, 60_000)?;
        int_in("n_test", self.n_test as i128, 0, 10_000)?;
        int_in("lambda_fit_rows", self.fit_rows as i128, 2, 60_000)?;
        int_in("lambda_valid_rows", self.valid_rows as i128, 1, 60_000)?;
        if self.fit_rows + self.valid_rows > self.n_train {
            return Err(Invalid {
                key: "lambda_valid_rows",
                message: format!(
                    "lambda_fit_rows + lambda_valid_rows must not exceed n_train = {}",
                    self.n_train
                ),
            });
        }
        int_in("folds", self.folds as i128, 2, 20)?;
        int_in("max_rows", self.max_rows as i128, 0, i128::from(u32::MAX))?;
        float_in("sigma", self.sigma, 1e-6, 1e6)?;
        self.grid().map(|_| ())
    }
}

impl Settings {
    /// The λ grid: `lambda_count` points evenly spaced in $\log_{10}$ from `lambda_log10_min` to
    /// `lambda_log10_max`.
    fn grid(&self) -> Result<Vec<f64>, Invalid> {
        lambda_grid(
            self.lambda_log10_min,
            self.lambda_log10_max,
            self.lambda_count,
        )
    }
}

/// Training and test rows of one fold (or of an image set's split) and the λ-search split of the
/// training rows.
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
    /// [`Settings::grid`], computed once.
    grid: Vec<f64>,
    /// The image sets of [`IMAGE_SETS`], each loaded once.
    images: DataSlot,
    tables: DataCache,
    splits: SharedCache<Vec<Split>>,
}

fn check_method(v: &Value) -> Result<(), String> {
    let s = v.as_str().ok_or_else(|| format!("{v} is not a string"))?;
    let c = MethodChoice::parse(s)?;
    if c.name == EXACT {
        return Ok(Params::parse_text(EXACT_PARAMS, &c.params, "method exact").map(|_| ())?);
    }
    Ok(method(&c.name)?.parse_params(&c.params).map(|_| ())?)
}

fn check_data(v: &Value) -> Result<(), String> {
    if v.as_str().is_some_and(|s| IMAGE_SETS.contains(&s)) {
        return Ok(());
    }
    check_dataset(v, DataNeed::Classification)
        .map_err(|e| format!("{e}; or an image set: {}", IMAGE_SETS.join(", ")))
}

impl Kind for RidgeClassify {
    fn name(&self) -> &'static str {
        "ridge_classify"
    }
    fn about(&self) -> &'static str {
        "ridge classification accuracy with registry feature maps or exact kernels: MNIST vs m (NTK-sketching Fig. 2a), small classification sets by k-fold (NTK-RF Table 1)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: DATASETS,
                check: check_data,
                required: false,
            },
            ParamSpec {
                name: "method",
                allowed: METHODS,
                check: check_method,
                required: true,
            },
            crate::kinds::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        let grid = derived("ridge_classify", s.grid())?;
        Ok(Box::new(ClassifyRunner {
            s,
            grid,
            images: DataSlot::new(),
            tables: DataCache::default(),
            splits: SharedCache::default(),
        }))
    }
}

/// A seeded random permutation of `0..n`.
fn permutation(n: usize, rng: &mut RfxRng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    v.shuffle(rng);
    v
}

/// What one fit produced.
struct Fitted {
    pred: Vec<usize>,
    lambda: f64,
    dim: usize,
    feature_s: f64,
    solve_s: f64,
}

impl ClassifyRunner {
    fn image_split(&self, name: &str, experiment_seed: u64, seed: &str) -> Result<Split, String> {
        let s = &self.s;
        if !IMAGE_SETS.contains(&name) {
            return Err(format!(
                "{name} is not an image set ({})",
                IMAGE_SETS.join(", ")
            ));
        }
        let tt = idx_data(&self.images, name).map_err(cell_message)?;
        let mut rng = rng_stream(experiment_seed, &format!("data;seed={seed}"));
        let (ntr_all, nte_all) = (tt.train.x.nrows(), tt.test.x.nrows());
        if s.n_train > ntr_all || s.n_test > nte_all {
            return Err(format!(
                "{name}: asked for {} training and {} test images, the set has {ntr_all} and {nte_all}",
                s.n_train, s.n_test
            ));
        }
        let classes = tt.train.labels.iter().max().map_or(0, |&k| k + 1);
        let itr = if s.stratified == Some(true) {
            // the same number of images of every class, each class's drawn at random, class by class
            if classes == 0 || s.n_train % classes != 0 {
                return Err(format!(
                    "{name}: stratified: n_train = {} is not a multiple of the {classes} classes",
                    s.n_train
                ));
            }
            let mut itr = Vec::with_capacity(s.n_train);
            for c in 0..classes {
                let of_c: Vec<usize> = (0..ntr_all).filter(|&i| tt.train.labels[i] == c).collect();
                let pick = random_rows(
                    &format!("{name} class {c}"),
                    of_c.len(),
                    s.n_train / classes,
                    &mut rng,
                )?;
                itr.extend(pick.iter().map(|&i| of_c[i]));
            }
            itr
        } else {
            random_rows(name, ntr_all, s.n_train, &mut rng)?
        };
        let ite: Vec<usize> = if s.n_test == 0 {
            (0..nte_all).collect()
        } else {
            random_rows(name, nte_all, s.n_test, &mut rng)?
        };
        let mut xtr = tt.train.x.select(Axis(0), &itr);
        let mut xte = tt.test.x.select(Axis(0), &ite);
        if s.unit_norm {
            normalize_rows(&mut xtr);
            normalize_rows(&mut xte);
        }
        let perm = permutation(s.n_train, &mut rng);
        Ok(Split {
            ltr: itr.iter().map(|&i| tt.train.labels[i]).collect(),
            lte: ite.iter().map(|&i| tt.test.labels[i]).collect(),
            classes,
            xtr,
            xte,
            fit: perm[..s.fit_rows].to_vec(),
            valid: perm[s.fit_rows..s.fit_rows + s.valid_rows].to_vec(),
        })
    }

    /// The `folds` train/test splits of a classification table for one seed (module docs).
    fn table_folds(
        &self,
        name: &str,
        experiment_seed: u64,
        seed: &str,
    ) -> Result<Vec<Split>, String> {
        let s = &self.s;
        let table = self.tables.get(name).map_err(cell_message)?;
        let mut rng = rng_stream(experiment_seed, &format!("data;dataset={name};seed={seed}"));
        let mut rows = permutation(table.x.nrows(), &mut rng);
        if s.max_rows > 0 {
            rows.truncate(s.max_rows);
        }
        let n = rows.len();
        if n < 2 * s.folds {
            return Err(format!(
                "{name}: {n} rows are too few for {} folds",
                s.folds
            ));
        }
        (0..s.folds)
            .map(|f| {
                let (lo, hi) = (f * n / s.folds, (f + 1) * n / s.folds);
                let test: Vec<usize> = rows[lo..hi].to_vec();
                let train: Vec<usize> = rows[..lo].iter().chain(&rows[hi..]).copied().collect();
                let xtr = table.x.select(Axis(0), &train);
                let st = Standardizer::fit(xtr.view()).map_err(|e| e.to_string())?;
                let xtr = st.transform(xtr.view()).map_err(|e| e.to_string())?;
                let xte = st
                    .transform(table.x.select(Axis(0), &test).view())
                    .map_err(|e| e.to_string())?;
                let perm = permutation(train.len(), &mut rng);
                let cut = (3 * train.len()) / 4;
                Ok(Split {
                    xtr,
                    xte,
                    ltr: train.iter().map(|&i| table.labels[i]).collect(),
                    lte: test.iter().map(|&i| table.labels[i]).collect(),
                    classes: table.n_classes,
                    fit: perm[..cut].to_vec(),
                    valid: perm[cut..].to_vec(),
                })
            })
            .collect()
    }

    fn sigma(&self, d: usize) -> f64 {
        if self.s.sigma_sqrt_dim {
            self.s.sigma * (d as f64).sqrt()
        } else {
            self.s.sigma
        }
    }

    fn search(&self, sp: &Split) -> LambdaSearch {
        LambdaSearch {
            grid: self.grid.clone(),
            scale: LambdaScale::TimesN,
            validation: Validation::Split {
                train: sp.fit.clone(),
                valid: sp.valid.clone(),
            },
            score: CvScore::ClassificationError,
        }
    }

    /// Features of a registry method, λ search, refit, prediction.
    fn fit_features(
        &self,
        choice: &MethodChoice,
        m: usize,
        sp: &Split,
        rng: &mut RfxRng,
    ) -> Result<Fitted, CellError> {
        let spec = method(&choice.name).map_err(|e| CellError::Fatal(e.to_string()))?;
        let mut given: Vec<(&str, RawValue)> = choice
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), RawValue::from(v.as_str())))
            .collect();
        if spec.params.iter().any(|p| p.name == "sigma") && choice.param("sigma").is_none() {
            given.push(("sigma", RawValue::from(self.sigma(sp.xtr.ncols()))));
        }
        let params = spec
            .params_from(&given)
            .map_err(|e| CellError::Fatal(e.to_string()))?;
        let skip = |e: rfx_core::RfxError| match e {
            // a budget the method cannot meet for this input (e.g. Grad-RF below d + 1) is not a bug
            rfx_core::RfxError::InvalidParameter { name, .. } if name == "dim" => {
                CellError::Skipped(format!(
                    "{} cannot use m = {m} features on {}-dimensional inputs",
                    choice.name,
                    sp.xtr.ncols()
                ))
            }
            e => CellError::Fatal(e.to_string()),
        };
        let (map, fit_s) = timed(|| spec.fit(m, &params, FitData::Rows(sp.xtr.view()), rng));
        let map = map.map_err(skip)?;
        let (ntr, dim) = (sp.xtr.nrows(), map.dim());
        if dim <= ntr && sp.fit.len() + sp.valid.len() < ntr {
            return self.fit_streamed(map.as_ref(), sp, fit_s);
        }
        let (r, transform_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            Ok((map.transform(sp.xtr.view())?, map.transform(sp.xte.view())?))
        });
        let (ztr, zte) = r.map_err(skip)?;
        let (r, solve_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            let y = one_hot(&sp.ltr, sp.classes, true)?;
            let (model, cv) =
                fit_ridge_cv(ztr.view(), y.view(), &self.search(sp), RidgeForm::Auto)?;
            Ok((
                argmax_rows(model.predict(zte.view())?.view()),
                cv.best_lambda,
            ))
        });
        let (pred, lambda) = r.map_err(|e| CellError::Fatal(e.to_string()))?;
        Ok(Fitted {
            pred,
            lambda,
            dim,
            feature_s: fit_s + transform_s,
            solve_s,
        })
    }

    /// The primal fit with the features made block by block ([`fit_ridge_cv_streamed`]): the λ search on
    /// the features of its fitting and validation rows, the refit's $Z^\top Z$ accumulated over row blocks,
    /// the test rows predicted block by block — the training features are never held whole (MNIST's
    /// 60,000 × 16,384 would be 7.9 GB). Used where the search leaves training rows out, where
    /// [`fit_ridge_cv`] takes the same non-shared path on the whole matrix (same numbers, bit for bit).
    fn fit_streamed(
        &self,
        map: &dyn rfx_core::FeatureMap,
        sp: &Split,
        fit_s: f64,
    ) -> Result<Fitted, CellError> {
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(e.to_string());
        let mut feature_s = fit_s;
        let (r, total_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            let y = one_hot(&sp.ltr, sp.classes, true)?;
            let mut features = |x: &Array2<f64>, rows: &[usize]| {
                let (z, t) = timed(|| map.transform(x.select(Axis(0), rows).view()));
                feature_s += t;
                z
            };
            let (model, cv) = fit_ridge_cv_streamed(
                sp.xtr.nrows(),
                map.dim(),
                y.view(),
                &self.search(sp),
                DEFAULT_MEMORY_CAP,
                |rows| features(&sp.xtr, rows),
            )?;
            let nte = sp.xte.nrows();
            let mut pred = Vec::with_capacity(nte);
            for start in (0..nte).step_by(DEFAULT_ROW_BLOCK) {
                let rows: Vec<usize> = (start..(start + DEFAULT_ROW_BLOCK).min(nte)).collect();
                let z = features(&sp.xte, &rows)?;
                pred.extend(argmax_rows(model.predict(z.view())?.view()));
            }
            Ok((pred, cv.best_lambda))
        });
        let (pred, lambda) = r.map_err(fatal)?;
        Ok(Fitted {
            pred,
            lambda,
            dim: map.dim(),
            feature_s,
            solve_s: total_s - (feature_s - fit_s),
        })
    }

    /// Exact kernel ridge classification: the Grams, λ searched on the fit/validation rows from their
    /// Gram, dual solve on all training rows.
    fn fit_exact(&self, choice: &MethodChoice, sp: &Split) -> Result<Fitted, CellError> {
        let err = |e: rfx_core::RfxError| CellError::Fatal(e.to_string());
        let p = Params::parse_text(EXACT_PARAMS, &choice.params, "method exact")
            .map_err(|e| CellError::Fatal(e.to_string()))?;
        let kernel = match p.choice("kernel").map_err(err)? {
            "gaussian" => {
                let given = p.float("sigma").map_err(err)?;
                let sigma = if given > 0.0 {
                    given
                } else {
                    self.sigma(sp.xtr.ncols())
                };
                Gzk::gaussian(sigma)
            }
            _ => Gzk::relu_ntk(p.int("depth").map_err(err)?),
        }
        .map_err(err)?;
        // bias β > 0: the kernel of [x, β] and [y, β]; β = 0: the kernel itself
        let kernel =
            with_bias(Box::new(kernel), bias_of(EXACT_PARAMS, &p).map_err(err)?).map_err(err)?;
        let (grams, feature_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            Ok((
                kernel.gram(sp.xtr.view(), sp.xtr.view())?,
                kernel.gram(sp.xte.view(), sp.xtr.view())?,
            ))
        });
        let (gram, cross) = grams.map_err(err)?;
        let (r, solve_s) = timed(|| -> Result<_, rfx_core::RfxError> {
            let y = one_hot(&sp.ltr, sp.classes, true)?;
            // λ: the fit/validation split of the training rows, from their Gram
            let cv = select_lambda_gram(gram.view(), y.view(), &self.search(sp))?;
            let params = KrrParams::new(cv.best_lambda).scale(LambdaScale::TimesN);
            let model = KernelRidge::fit_gram(gram, y.view(), &params)?;
            Ok((
                argmax_rows(model.predict_gram(cross.view())?.view()),
                cv.best_lambda,
            ))
        });
        let (pred, lambda) = r.map_err(err)?;
        Ok(Fitted {
            pred,
            lambda,
            dim: sp.xtr.nrows(),
            feature_s,
            solve_s,
        })
    }
}

fn cell_message(e: CellError) -> String {
    match e {
        CellError::Fatal(m) | CellError::Skipped(m) => m,
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
            "dataset={};n_train={};n_test={};unit_norm={};grid={:?};fit_rows={};valid_rows={};folds={};max_rows={};sigma={};sigma_times_sqrt_dim={}",
            s.dataset,
            s.n_train,
            s.n_test,
            s.unit_norm,
            self.grid,
            s.fit_rows,
            s.valid_rows,
            s.folds,
            s.max_rows,
            s.sigma,
            s.sigma_sqrt_dim
        ) + &s
            .stratified
            .map_or(String::new(), |v| format!(";stratified={v}"))
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let key = cell.key();
        let with_key = |e: CellError| match e {
            CellError::Fatal(m) => CellError::Fatal(format!("cell {key}: {m}")),
            skipped => skipped,
        };
        let choice = MethodChoice::parse(cell.str("method")?)
            .map_err(|e| with_key(CellError::Fatal(e.to_string())))?;
        let m = usize::try_from(cell.int("m")?)
            .map_err(|e| with_key(CellError::Fatal(e.to_string())))?;
        let dataset = match cell.get("dataset") {
            Some(v) => v.as_str().unwrap_or_default().to_string(),
            None => self.s.dataset.clone(),
        };
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let splits: Arc<Vec<Split>> =
            self.splits
                .get(&format!("dataset={dataset};seed={seed}"), || {
                    if IMAGE_SETS.contains(&dataset.as_str()) {
                        Ok(vec![self.image_split(
                            &dataset,
                            cell.experiment_seed,
                            &seed,
                        )?])
                    } else {
                        self.table_folds(&dataset, cell.experiment_seed, &seed)
                    }
                })?;
        let (mut correct, mut total) = (0usize, 0usize);
        let (mut lambda, mut dim, mut feature_s, mut solve_s) = (0.0, 0.0, 0.0, 0.0);
        for sp in splits.iter() {
            let f = if choice.name == EXACT {
                self.fit_exact(&choice, sp)
            } else {
                self.fit_features(&choice, m, sp, rng)
            }
            .map_err(with_key)?;
            correct += f.pred.iter().zip(&sp.lte).filter(|(a, b)| a == b).count();
            total += sp.lte.len();
            // λ and the dimension: geometric / arithmetic means over folds
            lambda += f.lambda.ln();
            dim += f.dim as f64;
            feature_s += f.feature_s;
            solve_s += f.solve_s;
        }
        let k = splits.len() as f64;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                correct as f64 / total.max(1) as f64,
                dim / k,
                (lambda / k).exp(),
                feature_s,
                solve_s,
                feature_s + solve_s,
            ],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_ntk_methods_take_a_bias() {
        let ok = |s: &str| check_method(&Value::Str(s.into()));
        assert!(ok("exact").is_ok());
        assert!(ok("exact(bias=1)").is_ok());
        assert!(ok("exact(kernel=gaussian, bias=0)").is_ok());
        assert!(ok("ntk-rf(bias=1)").is_ok());
        assert!(ok("ntk-rf(sampler=gs, bias=0.5)").is_ok());
        for bad in [
            "exact(bias=-1)",
            "exact(bias=one)",
            "ntk-rf(bias=-2)",
            "rff(bias=1)",
        ] {
            let e = ok(bad).unwrap_err();
            assert!(e.contains("bias"), "{bad}: {e}");
        }
    }
}
