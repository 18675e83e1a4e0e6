//! `double_descent`: random-features ridge regression near interpolation (random-features survey, §7, Fig. 7).
//!
//! One cell = (data set, `ratio` $= D/n$, seed), $D$ the number of features (output width, rounded to an even
//! number $\ge 2$), $n$ the number of training rows.
//! * **Data** (per data set and seed, shared by every ratio): `sonar` = `keel/sonar` (208 × 60), split at
//!   random into `sonar_train` training rows and the rest for testing, columns standardised with the training
//!   statistics; `mnist12` = MNIST digits 1 vs 2, `mnist_train` training images drawn from the training set
//!   and `mnist_test` test images from the test set, pixels in the unit interval. Targets $y = \pm1$.
//! * **Features**: paired Gaussian RFF $z(x) = s^{-1/2}[\cos Wx; \sin Wx]$, $s = D/2$ frequencies,
//!   $W_{ij}\sim\mathcal N(0,\sigma^{-2})$, $\sigma$ = `sigma_factor` × the median pairwise training distance.
//! * **Fit**: $\beta = (Z^\top Z + n\lambda I)^{-1}Z^\top y$ (primal when $D\le n$, the equivalent dual otherwise),
//!   $\lambda$ = `lambda` (the survey: $10^{-8}$).
//! * **Metrics**: `train_mse`, `test_mse`, `test_error` (0-1 error of $\operatorname{sign}\hat f$),
//!   `approx_error` $=\Vert K - ZZ^\top\Vert_F/\Vert K\Vert_F$ on the training rows, `dim` = $D$. With $\lambda\to0$ the
//!   training error vanishes for $D\ge n$ and the test error peaks at the interpolation threshold $D = n$.

use std::sync::Arc;

use ndarray::{Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, FeatureMap, Kernel, RfxRng};
use rfx_data::Standardizer;
use rfx_kernels::{median_distance, GaussianKernel};
use rfx_sampling::survey::{Sampler, SurveyKernel, SurveyParams};
use rfx_solvers::ridge::{LambdaScale, Ridge, RidgeParams};

use crate::kinds::tabular::DataCache;
use crate::kinds::trf_common::{cell_f64, check_f64, idx_data, DataSlot, SharedCache};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};

/// The kind.
pub struct DoubleDescent;

const DATASETS: [&str; 2] = ["sonar", "mnist12"];

/// `[double_descent]`: training and test sizes, the ridge λ and the bandwidth factor. Its `Debug` form is
/// the fingerprint (`settings()`), so the name, fields and their order stay as they are.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    sonar_train: usize,
    mnist_train: usize,
    mnist_test: usize,
    lambda: f64,
    sigma_factor: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sonar_train: 104,
            mnist_train: 200,
            mnist_test: 1000,
            lambda: 1e-8,
            sigma_factor: 1.0,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("sonar_train", "integers from 10 to 198"),
        ("mnist_train", "integers from 10 to 10000"),
        ("mnist_test", "integers from 10 to 2000"),
        ("lambda", "numbers from 0.0000000000000001 to 1000000"),
        ("sigma_factor", "numbers from 0.001 to 1000"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("sonar_train", self.sonar_train as i128, 10, 198)?;
        int_in("mnist_train", self.mnist_train as i128, 10, 10_000)?;
        int_in("mnist_test", self.mnist_test as i128, 10, 2000)?;
        float_in("lambda", self.lambda, 1e-16, 1e6)?;
        float_in("sigma_factor", self.sigma_factor, 1e-3, 1e3)
    }
}

struct Prepared {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    ytr: Array2<f64>,
    yte: Vec<f64>,
    sigma: f64,
    gram: Array2<f64>,
}

struct DdRunner {
    s: Settings,
    keel: DataCache,
    mnist: DataSlot,
    prepared: SharedCache<Prepared>,
}

impl Kind for DoubleDescent {
    fn name(&self) -> &'static str {
        "double_descent"
    }
    fn about(&self) -> &'static str {
        "RF ridge regression with lambda ~ 0: train/test error and kernel approximation error vs D/n (survey Fig. 7)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: "sonar (keel/sonar, 208 x 60), mnist12 (MNIST 1 vs 2)",
                check: |v| check_choice(v, &DATASETS),
                required: true,
            },
            ParamSpec {
                name: "ratio",
                allowed: "D/n, numbers from 0.01 to 100",
                check: |v| check_f64(v, 0.01, 100.0),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(DdRunner {
            s,
            keel: DataCache::default(),
            mnist: DataSlot::new(),
            prepared: SharedCache::default(),
        }))
    }
}

impl DdRunner {
    fn prepare(&self, name: &str, seed: &str, es: u64) -> Result<Prepared, String> {
        let s = &self.s;
        let mut rng = rng_stream(es, &format!("data;dataset={name};seed={seed}"));
        let err = |e: CellError| match e {
            CellError::Fatal(m) | CellError::Skipped(m) => m,
        };
        let (xtr, xte, ltr, lte) = if name == "sonar" {
            let t = self.keel.get("keel/sonar").map_err(err)?;
            let mut idx: Vec<usize> = (0..t.x.nrows()).collect();
            idx.shuffle(&mut rng);
            let (tr, te) = idx.split_at(s.sonar_train.min(t.x.nrows() - 1));
            let xtr = t.x.select(Axis(0), tr);
            let xte = t.x.select(Axis(0), te);
            let st = Standardizer::fit(xtr.view()).map_err(|e| e.to_string())?;
            (
                st.transform(xtr.view()).map_err(|e| e.to_string())?,
                st.transform(xte.view()).map_err(|e| e.to_string())?,
                tr.iter().map(|&i| t.labels[i]).collect::<Vec<_>>(),
                te.iter().map(|&i| t.labels[i]).collect::<Vec<_>>(),
            )
        } else {
            let tt = idx_data(&self.mnist, "mnist").map_err(err)?;
            let mut pick = |x: &Array2<f64>, l: &[usize], k: usize| {
                let mut idx: Vec<usize> =
                    (0..l.len()).filter(|&i| l[i] == 1 || l[i] == 2).collect();
                idx.shuffle(&mut rng);
                idx.truncate(k);
                let mut xs = x.select(Axis(0), &idx);
                let max = xs.iter().copied().fold(0.0f64, f64::max);
                if max > 1.0 {
                    xs.mapv_inplace(|v| v / 255.0);
                }
                (xs, idx.iter().map(|&i| l[i] - 1).collect::<Vec<_>>())
            };
            let (xtr, ltr) = pick(&tt.train.x, &tt.train.labels, s.mnist_train);
            let (xte, lte) = pick(&tt.test.x, &tt.test.labels, s.mnist_test);
            (xtr, xte, ltr, lte)
        };
        let sign = |l: usize| if l == 0 { -1.0 } else { 1.0 };
        let ytr = Array2::from_shape_fn((ltr.len(), 1), |(i, _)| sign(ltr[i]));
        let yte = lte.iter().map(|&l| sign(l)).collect();
        let sigma = s.sigma_factor * median_distance(xtr.view());
        let gram = GaussianKernel::new(sigma)
            .and_then(|k| k.gram(xtr.view(), xtr.view()))
            .map_err(|e| e.to_string())?;
        Ok(Prepared {
            xtr,
            xte,
            ytr,
            yte,
            sigma,
            gram,
        })
    }
}

impl Runner for DdRunner {
    fn metrics(&self) -> Vec<String> {
        ["train_mse", "test_mse", "test_error", "approx_error", "dim"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn settings(&self) -> String {
        format!("{:?}", self.s)
    }
    fn cost(&self, cell: &Cell) -> f64 {
        // D = ratio · n features: the solve grows with D.
        cell.get("ratio")
            .and_then(|v| v.as_f64())
            .map_or(1.0, |r| r.max(0.1))
    }
    fn tolerance(&self, metric: &str) -> rfx_harness::kind::Tolerance {
        match metric {
            // With D ≥ n and λ = 1e-8 the fit interpolates: the training residual is 1e-10 to 1e-7 of ‖y‖²,
            // the difference of nearly equal numbers, so the solve's rounding (≈ 1e-16 times the condition
            // number of ZᵀZ + λI) fills its trailing digits; a summation order changed by another BLAS or
            // CPU moves it at the 1e-9 level.
            "train_mse" => rfx_harness::kind::Tolerance::Relative(1e-6),
            m => rfx_harness::kind::default_tolerance(m),
        }
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let name = cell.str("dataset")?.to_string();
        let ratio = cell_f64(cell, "ratio")?;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let es = cell.experiment_seed;
        let p: Arc<Prepared> = self
            .prepared
            .get(&format!("dataset={name};seed={seed}"), || {
                self.prepare(&name, &seed, es)
            })?;
        let n = p.xtr.nrows();
        let d_out = (((ratio * n as f64) / 2.0).round() as usize).max(1) * 2;
        let key = cell.key();
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("cell {key}: {e}"));
        let map = SurveyParams::new(Sampler::Rff, SurveyKernel::Gaussian { sigma: p.sigma })
            .frequencies(d_out / 2)
            .fit(p.xtr.ncols(), None, rng)
            .map_err(fatal)?;
        let ztr = map.transform(p.xtr.view()).map_err(fatal)?;
        let zte = map.transform(p.xte.view()).map_err(fatal)?;
        let model = Ridge::fit(
            ztr.view(),
            p.ytr.view(),
            &RidgeParams::new(self.s.lambda).scale(LambdaScale::TimesN),
        )
        .map_err(fatal)?;
        let ftr = model.predict(ztr.view()).map_err(fatal)?;
        let fte = model.predict(zte.view()).map_err(fatal)?;
        let train_mse = ftr
            .iter()
            .zip(p.ytr.iter())
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / n as f64;
        let m = p.yte.len() as f64;
        let test_mse = fte
            .iter()
            .zip(&p.yte)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / m;
        let test_error = fte
            .iter()
            .zip(&p.yte)
            .filter(|(a, b)| a.signum() != b.signum())
            .count() as f64
            / m;
        let approx = ztr.dot(&ztr.t());
        let num: f64 = approx
            .iter()
            .zip(p.gram.iter())
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        let den: f64 = p.gram.iter().map(|v| v * v).sum();
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                train_mse,
                test_mse,
                test_error,
                (num / den).sqrt(),
                d_out as f64,
            ],
            timings: Vec::new(),
        })
    }
}
