//! `cntk`: image classification with the exact CNTK-GAP against CNTKSketch features (NTK-sketching paper,
//! Zandieh et al. 2021, Table 1 and Fig. 2b, with a down-scaled grey-scale data set standing in for CIFAR-10).
//!
//! **Data.** `n_train` training and `n_test` test images drawn once per run (stream `(experiment seed,
//! "data")`, the same for every cell), each centre-cropped to `crop`×`crop`, average-pooled by `pool`×`pool`,
//! divided by 255 and standardised with the mean and standard deviation of all training pixels. A fraction
//! `valid_fraction` of the training rows (stream `(experiment seed, "valid")`) is held out to choose λ.
//! **Methods**, all built through `rfx-registry`. `exact`: the exact ReLU CNTK-GAP of depth `depth`, filter
//! `filter` (same padding; the registry's kernel `cntk`) — computed once per run and reported by every `exact`
//! cell (one value, whatever `m` and `seed`); `cntksketch`: the registry's `cntksketch` ([`rfx_ntk::CntkSketch`])
//! with output dimension `m`, internal width `m / width_div` (its `sketch_div`) and degree-`degree` polynomial
//! fits, drawn from the cell's stream; `grad-rf`: the registry's `cnn-grad-rf`, gradient features of a random
//! CNN with three $q \times q$ convolutional layers of width $w$, no biases, GAP and a linear output
//! ([`rfx_ntk::CnnGradRf`]), $w$ chosen so that the number of parameters $9w + 18w^2 + w$ (for $q = 3$, one
//! channel) is closest to `m`; `cnn`: that network trained — `depth` convolutional layers (the CNTK's
//! architecture: filter `filter`, same padding, no biases, GAP) of the width whose parameter count is closest
//! to `m`, with a linear head of C outputs, trained by SGD with momentum 0.9 on the softmax cross-entropy
//! (batches of 32, at most 60 epochs, learning rate from {0.1, 0.3, 1, 3} and epoch count chosen by the
//! accuracy on the validation rows, then retrained on all training rows; [`rfx_ntk::CnnClassifierParams`]),
//! predicting by the largest logit (its times: training in `time_features_s`, prediction in `time_solve_s`;
//! no full-size extrapolation).
//! **Learner.** Ridge regression on one-hot targets minus 1/C (C = 10 classes), $\hat Y = Z W$ with
//! $W = (Z^\top Z + \lambda I)^{-1} Z^\top Y$ (features) or $\hat Y = K_{\cdot,tr}(K + \lambda I)^{-1}Y$ (kernel), λ from
//! $\lbrace2^i : i = $ `lambda_log2_min..=lambda_log2_max`$\rbrace$ by validation accuracy (fit on the other training rows),
//! then refit on all training rows; prediction by argmax.
//! **Metrics.** `accuracy` (test), `time_features_s` (sketch: features of train + test; exact: the Gram
//! matrices train×train and test×train), `time_solve_s` (λ search + refit + prediction), `time_total_s`;
//! the item column `correct`: whether each test image (in the split's order) was classified correctly, so
//! that claims compare two classifiers on the same images with a paired test (`[[claim]] items`).
//! **Full-size extrapolation** (the paper's "150×" claim): the exact CNTK at full resolution
//! (28×28, no crop or pool) is timed on `timing_pairs` image pairs and its time per pair multiplied by the
//! number of pairs of the full data set, $n(n+1)/2 + n\thinspace n_{te}$ with $n$ = `full_train`, $n_{te}$ = `full_test`
//! (`exact_full_h`); CNTKSketch at full resolution with the cell's $m$ is timed on `timing_images` images and
//! its time per image multiplied by $n + n_{te}$ (`sketch_full_h`; for `grad-rf` the same for its gradient
//! features); `speedup_full` is the ratio. Both are wall
//! times on the run's thread pool. Exact cells above `max_exact_pairs` pairs are skipped.

use crate::kinds::trf_common::{idx_data, random_rows, timed, DataSlot, SharedCache};
use ndarray::{Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, FeatureMap, FitData, Kernel, RfxRng};
use rfx_data::{crop_pool, TrainTest};
use rfx_harness::config::{choice_in, float_in, int_in, ConfigError, Invalid, Section};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::RawValue;
use rfx_solvers::metrics::{accuracy, correct};
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, one_hot, select_lambda_gram, CvScore, KernelRidge, KrrParams,
    LambdaScale, LambdaSearch, RidgeForm, Validation,
};

/// The kind.
pub struct CntkKind;

const METHODS: [&str; 4] = ["exact", "cntksketch", "grad-rf", "cnn"];
const DATASETS: [&str; 2] = ["fashion-mnist", "mnist"];
const SIDE: usize = 28;

/// `[cntk]`: data, image preprocessing, network, ridge and timing settings. Its `Debug` form is the
/// fingerprint (`settings()`), so the name, fields and their order stay as they are.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default)]
struct Settings {
    dataset: String,
    n_train: usize,
    n_test: usize,
    crop: usize,
    pool: usize,
    valid_fraction: f64,
    depth: usize,
    filter: usize,
    degree: usize,
    width_div: usize,
    batch: usize,
    lambda_log2_min: i64,
    lambda_log2_max: i64,
    max_exact_pairs: f64,
    timing_pairs: usize,
    timing_images: usize,
    full_train: usize,
    full_test: usize,
}

/// The settings when `[cntk]` does not set them.
impl Default for Settings {
    fn default() -> Self {
        Settings {
            dataset: "fashion-mnist".into(),
            n_train: 1000,
            n_test: 500,
            crop: 24,
            pool: 2,
            valid_fraction: 0.25,
            depth: 2,
            filter: 3,
            degree: 2,
            width_div: 4,
            batch: 4,
            lambda_log2_min: -16,
            lambda_log2_max: 15,
            max_exact_pairs: 2e6,
            timing_pairs: 4,
            timing_images: 8,
            full_train: 60_000,
            full_test: 10_000,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("dataset", "fashion-mnist, mnist"),
        ("n_train", "integers from 20 to 60000"),
        ("n_test", "integers from 10 to 10000"),
        ("crop", "integers from 1 to 28"),
        ("pool", "integers from 1 to 28 dividing crop"),
        ("depth", "integers from 2 to 16"),
        ("filter", "odd integers from 1 to 15"),
        ("degree", "integers from 1 to 32"),
        ("width_div", "integers from 1 to 64"),
        ("batch", "integers from 1 to 1024"),
        ("timing_pairs", "integers from 1 to 1000"),
        ("timing_images", "integers from 1 to 10000"),
        ("full_train", "integers from 1 to 10000000"),
        ("full_test", "integers from 0 to 10000000"),
        ("valid_fraction", "numbers from 0.01 to 0.99"),
        ("lambda_log2_min", "integers from -60 to 60"),
        (
            "lambda_log2_max",
            "integers from -60 to 60, >= lambda_log2_min",
        ),
        ("max_exact_pairs", "numbers from 0 to 1000000000000"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        choice_in("dataset", &self.dataset, &DATASETS)?;
        for (key, value, lo, hi) in [
            ("n_train", self.n_train, 20, 60_000),
            ("n_test", self.n_test, 10, 10_000),
            ("crop", self.crop, 1, SIDE as i128),
            ("pool", self.pool, 1, SIDE as i128),
            ("depth", self.depth, 2, 16),
            ("filter", self.filter, 1, 15),
            ("degree", self.degree, 1, 32),
            ("width_div", self.width_div, 1, 64),
            ("batch", self.batch, 1, 1024),
            ("timing_pairs", self.timing_pairs, 1, 1000),
            ("timing_images", self.timing_images, 1, 10_000),
            ("full_train", self.full_train, 1, 10_000_000),
            ("full_test", self.full_test, 0, 10_000_000),
        ] {
            int_in(key, value as i128, lo, hi)?;
        }
        float_in("valid_fraction", self.valid_fraction, 0.01, 0.99)?;
        int_in("lambda_log2_min", self.lambda_log2_min as i128, -60, 60)?;
        int_in("lambda_log2_max", self.lambda_log2_max as i128, -60, 60)?;
        float_in("max_exact_pairs", self.max_exact_pairs, 0.0, 1e12)?;
        let invalid = |key, message: &str| {
            Err(Invalid {
                key,
                message: message.into(),
            })
        };
        if self.filter % 2 == 0 {
            return invalid("filter", "must be odd (same padding)");
        }
        if self.crop % self.pool != 0 {
            return invalid("pool", "must divide crop");
        }
        if self.lambda_log2_max < self.lambda_log2_min {
            return invalid("lambda_log2_max", "must be >= lambda_log2_min");
        }
        Ok(())
    }
}

struct Split {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    ltr: Vec<usize>,
    lte: Vec<usize>,
    fit_idx: Vec<usize>,
    val_idx: Vec<usize>,
    /// Full-resolution standardised images (training draw) for the timing extrapolation.
    full: Array2<f64>,
    classes: usize,
}

struct ExactResult {
    accuracy: f64,
    correct: Vec<bool>,
    time_features: f64,
    time_solve: f64,
}

struct CntkRunner {
    s: Settings,
    data: DataSlot,
    split: SharedCache<Split>,
    exact: SharedCache<ExactResult>,
    exact_pair_s: SharedCache<f64>,
}

impl Kind for CntkKind {
    fn name(&self) -> &'static str {
        "cntk"
    }
    fn about(&self) -> &'static str {
        "Image classification: exact CNTK-GAP vs CNTKSketch features, ridge, accuracy and time (NTK-sketching paper, Table 1 / Fig. 2b)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "method",
                allowed: "exact (exact CNTK-GAP), cntksketch or grad-rf (gradients of a random 3-layer CNN)",
                check: |v| check_choice(v, &METHODS),
                required: true,
            },
            crate::kinds::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(CntkRunner {
            s,
            data: DataSlot::new(),
            split: SharedCache::default(),
            exact: SharedCache::default(),
            exact_pair_s: SharedCache::default(),
        }))
    }
}

/// `(x / 255 - mean) / std` with the mean and std of `reference / 255` (all pixels).
fn standardize(x: &mut Array2<f64>, reference: &Array2<f64>) {
    let n = reference.len().max(1) as f64;
    let mean = reference.iter().map(|v| v / 255.0).sum::<f64>() / n;
    let var = reference
        .iter()
        .map(|v| (v / 255.0 - mean).powi(2))
        .sum::<f64>()
        / n;
    let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
    x.mapv_inplace(|v| (v / 255.0 - mean) / sd);
}

impl CntkRunner {
    fn side(&self) -> usize {
        self.s.crop / self.s.pool
    }

    /// λ from the grid (plain convention) by validation accuracy on the split's validation rows.
    fn search(&self, d: &Split) -> LambdaSearch {
        LambdaSearch {
            grid: self.grid(),
            scale: LambdaScale::Plain,
            validation: Validation::Split {
                train: d.fit_idx.clone(),
                valid: d.val_idx.clone(),
            },
            score: CvScore::ClassificationError,
        }
    }

    fn grid(&self) -> Vec<f64> {
        (self.s.lambda_log2_min..=self.s.lambda_log2_max)
            .map(|i| 2f64.powi(i as i32))
            .collect()
    }

    fn make_split(&self, tt: &TrainTest, seed: u64) -> Result<Split, String> {
        let s = &self.s;
        let mut rng = rng_stream(seed, "data");
        let mut pick = |len: usize, k: usize| random_rows(&s.dataset, len, k, &mut rng);
        let itr = pick(tt.train.x.nrows(), s.n_train)?;
        let ite = pick(tt.test.x.nrows(), s.n_test)?;
        let shrink = |x: &Array2<f64>, idx: &[usize]| -> Result<Array2<f64>, String> {
            let side = self.side();
            let mut out = Array2::zeros((idx.len(), side * side));
            for (r, &i) in idx.iter().enumerate() {
                let row = x.row(i).to_vec();
                let small = crop_pool(&row, SIDE, s.crop, s.pool).map_err(|e| e.to_string())?;
                out.row_mut(r).assign(&ndarray::Array1::from(small));
            }
            Ok(out)
        };
        let mut xtr = shrink(&tt.train.x, &itr)?;
        let mut xte = shrink(&tt.test.x, &ite)?;
        let reference = xtr.clone();
        standardize(&mut xtr, &reference);
        standardize(&mut xte, &reference);
        let mut full = tt.train.x.select(Axis(0), &itr);
        let full_ref = full.clone();
        standardize(&mut full, &full_ref);
        let mut perm: Vec<usize> = (0..s.n_train).collect();
        perm.shuffle(&mut rng_stream(seed, "valid"));
        let nv = ((s.valid_fraction * s.n_train as f64).round() as usize).clamp(1, s.n_train - 1);
        let val_idx = perm[..nv].to_vec();
        let fit_idx = perm[nv..].to_vec();
        let ltr: Vec<usize> = itr.iter().map(|&i| tt.train.labels[i]).collect();
        let lte: Vec<usize> = ite.iter().map(|&i| tt.test.labels[i]).collect();
        let classes = tt.train.labels.iter().max().map_or(0, |&k| k + 1);
        Ok(Split {
            xtr,
            xte,
            ltr,
            lte,
            fit_idx,
            val_idx,
            full,
            classes,
        })
    }

    fn exact_pairs(&self) -> f64 {
        let (n, t) = (self.s.n_train as f64, self.s.n_test as f64);
        n * (n + 1.0) / 2.0 + n * t
    }

    /// Kernel ridge with λ chosen on the validation rows (`select_lambda_gram`: one eigendecomposition of
    /// the fitting block for every λ of the grid, plain λ), then a Cholesky refit on all training rows.
    fn kernel_ridge(
        &self,
        ktr: &Array2<f64>,
        kte: &Array2<f64>,
        d: &Split,
    ) -> rfx_core::Result<Vec<usize>> {
        let y = one_hot(&d.ltr, d.classes, true)?;
        let cv = select_lambda_gram(ktr.view(), y.view(), &self.search(d))?;
        let model = KernelRidge::fit_gram(ktr.clone(), y.view(), &KrrParams::new(cv.best_lambda))?;
        Ok(argmax_rows(model.predict_gram(kte.view())?.view()))
    }

    fn run_exact(&self, d: &Split) -> Result<ExactResult, String> {
        let k = self.exact_kernel(self.side())?;
        let ((ktr, kte), time_features) = timed(|| {
            let ktr = k.gram(d.xtr.view(), d.xtr.view());
            let kte = k.gram(d.xte.view(), d.xtr.view());
            (ktr, kte)
        });
        let (ktr, kte) = (
            ktr.map_err(|e| e.to_string())?,
            kte.map_err(|e| e.to_string())?,
        );
        let (pred, time_solve) = timed(|| self.kernel_ridge(&ktr, &kte, d));
        let pred = pred.map_err(|e| e.to_string())?;
        Ok(ExactResult {
            accuracy: accuracy(&pred, &d.lte).map_err(|e| e.to_string())?,
            correct: correct(&pred, &d.lte).map_err(|e| e.to_string())?,
            time_features,
            time_solve,
        })
    }

    /// Wall time per pair of the exact CNTK at full resolution, on `timing_pairs` pairs of distinct images.
    fn exact_pair_seconds(&self, d: &Split) -> Result<f64, String> {
        let s = &self.s;
        let k = self.exact_kernel(SIDE)?;
        let np = s.timing_pairs.min(d.full.nrows() / 2).max(1);
        let a = d.full.slice(ndarray::s![..np, ..]);
        let b = d.full.slice(ndarray::s![np..2 * np, ..]);
        let (r, t) = timed(|| {
            use rayon::prelude::*;
            (0..np)
                .into_par_iter()
                .map(|i| k.eval(a.row(i), b.row(i)))
                .sum::<f64>()
        });
        if !r.is_finite() {
            return Err("exact CNTK timing produced a non-finite value".into());
        }
        Ok(t / np as f64)
    }

    /// The cell's feature map at side length `side`, through the registry: `cntksketch` with output dimension
    /// `m`, internal width `m / width_div` and the kind's depth, filter, degree and batch; `grad-rf` is the
    /// registry's `cnn-grad-rf` with three layers.
    fn feature_map(
        &self,
        method: &str,
        m: usize,
        side: usize,
        rng: &mut RfxRng,
    ) -> Result<Box<dyn FeatureMap>, String> {
        let s = &self.s;
        let image = [
            ("height", RawValue::from(side)),
            ("width", RawValue::from(side)),
            ("channels", RawValue::from(1usize)),
            ("filter", RawValue::from(s.filter)),
        ];
        let (name, extra) = if method == "grad-rf" {
            ("cnn-grad-rf", vec![("layers", RawValue::from(3usize))])
        } else {
            (
                "cntksketch",
                vec![
                    ("depth", RawValue::from(s.depth)),
                    ("degree", RawValue::from(s.degree)),
                    ("sketch_div", RawValue::from(s.width_div)),
                    ("batch", RawValue::from(s.batch)),
                ],
            )
        };
        let spec = rfx_registry::method(name)?;
        let p = spec.params_from(&[image.to_vec(), extra].concat())?;
        spec.fit(m, &p, FitData::Dim(side * side), rng)
            .map_err(|e| e.to_string())
    }

    /// The trained CNN of `method = "cnn"` (module docs): `depth` layers of the width whose parameter count is
    /// closest to `m`, trained on the split's training rows with the learning rate and epochs chosen on its
    /// validation rows, drawn from the cell's stream.
    fn run_cnn(&self, d: &Split, m: usize, rng: &mut RfxRng) -> Result<CellOutput, String> {
        let side = self.side();
        let net = rfx_ntk::CnnGradRf::params()
            .shape(side, side, 1)
            .filter(self.s.filter)
            .layers(self.s.depth)
            .closest_width(m);
        let params = rfx_ntk::CnnClassifierParams::new(net, d.classes);
        let (model, time_train) =
            timed(|| params.fit_validated(d.xtr.view(), &d.ltr, &d.fit_idx, &d.val_idx, rng));
        let (model, _) = model.map_err(|e| e.to_string())?;
        let (pred, time_predict) = timed(|| model.predict(d.xte.view()));
        let pred = pred.map_err(|e| e.to_string())?;
        Ok(CellOutput {
            items: vec![correct(&pred, &d.lte).map_err(|e| e.to_string())?],
            metrics: vec![
                accuracy(&pred, &d.lte).map_err(|e| e.to_string())?,
                time_train + time_predict,
                f64::NAN,
                f64::NAN,
                f64::NAN,
                f64::NAN,
                f64::NAN,
            ],
            timings: vec![time_train, time_predict],
        })
    }

    /// The exact CNTK-GAP of the settings on `side`×`side` grey-scale images (the registry's `cntk` kernel).
    fn exact_kernel(&self, side: usize) -> Result<Box<dyn Kernel>, String> {
        let spec = rfx_registry::kernel("cntk")?;
        let p = spec.params_from(&[
            ("depth", RawValue::from(self.s.depth)),
            ("filter", RawValue::from(self.s.filter)),
            ("height", RawValue::from(side)),
            ("width", RawValue::from(side)),
            ("channels", RawValue::from(1usize)),
        ])?;
        spec.build(&p).map_err(|e| e.to_string())
    }
}

impl Runner for CntkRunner {
    /// The exact method has no sketch timings and the sketches no exact ones (NaN).
    fn nan_metrics(&self) -> Vec<String> {
        [
            "exact_pair_ms_full",
            "exact_full_h",
            "sketch_image_ms_full",
            "sketch_full_h",
            "speedup_full",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }
    fn metrics(&self) -> Vec<String> {
        [
            "accuracy",
            "time_total_s",
            "exact_pair_ms_full",
            "exact_full_h",
            "sketch_image_ms_full",
            "sketch_full_h",
            "speedup_full",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn items(&self) -> Vec<String> {
        vec!["correct".into()]
    }
    fn timings(&self) -> Vec<String> {
        vec!["time_features_s".into(), "time_solve_s".into()]
    }
    fn settings(&self) -> String {
        format!("{:?}", self.s)
    }
    fn cost(&self, cell: &Cell) -> f64 {
        // Seconds measured on 12×12 images (cntk.toml's notes): 4.3 ms per exact kernel pair, paid by the
        // group of exact cells; CNTKSketch ≈ 30 ms per image at m = 512, growing with m; Grad-RF ≈ 1 s.
        let (n, t) = (self.s.n_train as f64, self.s.n_test as f64);
        let m = cell.int("m").unwrap_or(512) as f64;
        match cell.str("method") {
            Ok("exact") => 4.3e-3 * (n * (n + 1.0) / 2.0 + n * t) / 12.0,
            Ok("cntksketch") => 0.03 * (n + t) * m / 512.0,
            // ≈ 150 s at m = 4096 on 400 images (4 rates × 60 epochs of SGD, then the refit)
            Ok("cnn") => 0.37 * n * m / 4096.0,
            _ => 1.0,
        }
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        // Every exact cell reads the one exact CNTK computation of the run.
        (cell.str("method").ok()? == "exact").then(|| "exact".to_string())
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let method = cell.str("method")?.to_string();
        let m = usize::try_from(cell.int("m")?)
            .map_err(|_| CellError::Fatal(format!("cell {}: bad m", cell.key())))?;
        let key = cell.key();
        let fatal = |e: String| CellError::Fatal(format!("cell {key}: {e}"));
        let tt = idx_data(&self.data, &self.s.dataset)?;
        let d = self
            .split
            .get("split", || self.make_split(&tt, cell.experiment_seed))?;
        let pair_s = *self
            .exact_pair_s
            .get("pair", || self.exact_pair_seconds(&d))?;
        let full_pairs = {
            let (n, t) = (self.s.full_train as f64, self.s.full_test as f64);
            n * (n + 1.0) / 2.0 + n * t
        };
        let exact_full_h = pair_s * full_pairs / 3600.0;
        if method == "exact" {
            if self.exact_pairs() > self.s.max_exact_pairs {
                return Err(CellError::Skipped(format!(
                    "{:.3e} kernel pairs > max_exact_pairs = {:.3e}",
                    self.exact_pairs(),
                    self.s.max_exact_pairs
                )));
            }
            let r = self.exact.get("exact", || self.run_exact(&d))?;
            return Ok(CellOutput {
                items: vec![r.correct.clone()],
                metrics: vec![
                    r.accuracy,
                    r.time_features + r.time_solve,
                    pair_s * 1e3,
                    exact_full_h,
                    f64::NAN,
                    f64::NAN,
                    f64::NAN,
                ],
                timings: vec![r.time_features, r.time_solve],
            });
        }
        if method == "cnn" {
            return self.run_cnn(&d, m, rng).map_err(fatal);
        }
        let map = self
            .feature_map(&method, m, self.side(), rng)
            .map_err(fatal)?;
        let (z, time_features) = timed(|| -> rfx_core::Result<_> {
            Ok((map.transform(d.xtr.view())?, map.transform(d.xte.view())?))
        });
        let (ztr, zte) = z.map_err(|e| fatal(e.to_string()))?;
        let (pred, time_solve) = timed(|| -> rfx_core::Result<Vec<usize>> {
            let y = one_hot(&d.ltr, d.classes, true)?;
            let (model, _) = fit_ridge_cv(ztr.view(), y.view(), &self.search(&d), RidgeForm::Auto)?;
            Ok(argmax_rows(model.predict(zte.view())?.view()))
        });
        let pred = pred.map_err(|e| fatal(e.to_string()))?;
        let accuracy = accuracy(&pred, &d.lte).map_err(|e| fatal(e.to_string()))?;
        // the same map at full resolution (same m, width, degree), timed per image
        let full_map = self
            .feature_map(
                &method,
                m,
                SIDE,
                &mut rng_stream(0, &format!("timing;{key}")),
            )
            .map_err(fatal)?;
        let nt = self.s.timing_images.min(d.full.nrows());
        let (f, t_full) = timed(|| full_map.transform(d.full.slice(ndarray::s![..nt, ..])));
        f.map_err(|e| fatal(e.to_string()))?;
        let per_image = t_full / nt as f64;
        let sketch_full_h = per_image * (self.s.full_train + self.s.full_test) as f64 / 3600.0;
        Ok(CellOutput {
            items: vec![correct(&pred, &d.lte).map_err(|e| fatal(e.to_string()))?],
            metrics: vec![
                accuracy,
                time_features + time_solve,
                pair_s * 1e3,
                exact_full_h,
                per_image * 1e3,
                sketch_full_h,
                exact_full_h / sketch_full_h,
            ],
            timings: vec![time_features, time_solve],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardize_uses_the_reference_statistics() {
        let r = Array2::from_shape_vec((2, 2), vec![0.0, 255.0, 0.0, 255.0]).unwrap();
        let mut x = r.clone();
        standardize(&mut x, &r);
        assert_eq!(x.as_slice().unwrap(), &[-1.0, 1.0, -1.0, 1.0]);
    }
}
