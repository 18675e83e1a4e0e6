//! `active_learning`: which images to label — greedy minimisation of the statistical criterion $J(\mathcal S)$ with
//! NTK random features against random selection, judged by a network trained on the chosen images (the NTK
//! random features paper, Han et al. 2021, §5.4, App. C and Fig. 3).
//!
//! **Data** (per seed, streams `(experiment seed, "pool;seed=..")`): a pool of `pool` training images of
//! `dataset` (`mnist` or `fashion-mnist`), `n_valid` other labelled training images, the same for both
//! selections, on which the network's learning rate and epoch are chosen (early stopping; they are never
//! trained on), and `n_test` test images (0: the whole test set); pixels as loaded, every image scaled to unit
//! norm.
//! **Designs.** `greedy`: NTK random features $\Phi$ of the pool (the registry's `ntk-rf` with depth `depth`
//! and `features` columns, from stream `(experiment seed, "features;seed=..")`), then
//! [`rfx_solvers::design::greedy_design`] with ridge `lambda` up to `max_k` points, computed once per seed: the
//! greedy design of size $k$ is the first $k$ of that sequence. `random`: the first $k$ of a random permutation
//! of the pool (stream `"random;seed=.."`).
//! **Evaluation.** (1) `accuracy`: a fully-connected ReLU network with `depth` hidden layers of width `width`
//! (no biases, NTK scaling; [`rfx_ntk::CnnClassifierParams`] on $1 \times 1$ "images" with 784 channels and
//! $1 \times 1$ filters, which makes every convolution a dense layer) and a 10-output head, trained by SGD
//! with momentum on the $k$ chosen images, the rate (0.3, 1, 3 or 10) and epoch (≤ `epochs`) chosen by the
//! accuracy on the validation images, the initial network the same for both selections at a given $k$ and
//! seed; test accuracy. (2) `ridge_accuracy`: ridge classification (one-hot − 0.1, $\lambda$ = `lambda`) on the
//! design's own features of the chosen images; test accuracy. **Times**: `design_s` (features and the greedy
//! sequence, once per seed, reported by every greedy cell; 0 for random), `train_s`.

use std::sync::Arc;

use ndarray::{Array2, Axis};
use rand::seq::SliceRandom;
use rfx_core::{rng_stream, FitData, RfxRng};
use rfx_data::normalize_rows;
use rfx_harness::config::{choice_in, float_in, int_in, ConfigError, Invalid, Section};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::RawValue;
use rfx_solvers::metrics::accuracy;
use rfx_solvers::ridge::{argmax_rows, one_hot, Ridge, RidgeParams};

use crate::kinds::trf_common::{idx_data, random_rows, timed, DataSlot, SharedCache};

/// The kind.
pub struct ActiveLearning;

const SELECTIONS: [&str; 2] = ["greedy", "random"];
const DATASETS: [&str; 2] = ["mnist", "fashion-mnist"];
/// The network's learning-rate grid (a pilot at k = 300 chose 3, the top of the CNN default's grid).
const RATES: [f64; 4] = [0.3, 1.0, 3.0, 10.0];

/// `[active_learning]`: data, design features and λ, and the network. Its `Debug` form is the fingerprint.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default)]
struct Settings {
    dataset: String,
    pool: usize,
    n_valid: usize,
    n_test: usize,
    depth: usize,
    features: usize,
    lambda: f64,
    max_k: usize,
    width: usize,
    epochs: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dataset: "mnist".into(),
            pool: 10_000,
            n_valid: 500,
            n_test: 0,
            depth: 4,
            features: 2000,
            lambda: 0.1,
            max_k: 300,
            width: 128,
            epochs: 40,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("dataset", "mnist, fashion-mnist"),
        ("pool", "integers from 10 to 50000"),
        ("n_valid", "integers from 1 to 10000"),
        ("n_test", "integers from 0 to 10000"),
        ("depth", "integers from 1 to 8"),
        ("features", "integers from 4 to 100000"),
        ("lambda", "numbers from 1e-12 to 1e6"),
        ("max_k", "integers from 1 to 50000, at most pool"),
        ("width", "integers from 1 to 4096"),
        ("epochs", "integers from 1 to 10000"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        choice_in("dataset", &self.dataset, &DATASETS)?;
        int_in("pool", self.pool as i128, 10, 50_000)?;
        int_in("n_valid", self.n_valid as i128, 1, 10_000)?;
        int_in("n_test", self.n_test as i128, 0, 10_000)?;
        int_in("depth", self.depth as i128, 1, 8)?;
        int_in("features", self.features as i128, 4, 100_000)?;
        float_in("lambda", self.lambda, 1e-12, 1e6)?;
        int_in("max_k", self.max_k as i128, 1, self.pool as i128)?;
        int_in("width", self.width as i128, 1, 4096)?;
        int_in("epochs", self.epochs as i128, 1, 10_000)
    }
}

/// One seed's data: pool, validation and test images with labels, and the pool's design features.
struct SeedData {
    pool_x: Array2<f64>,
    pool_y: Vec<usize>,
    valid_x: Array2<f64>,
    valid_y: Vec<usize>,
    test_x: Array2<f64>,
    test_y: Vec<usize>,
    /// The design's features of the pool and of the test images.
    phi: Array2<f64>,
    phi_test: Array2<f64>,
}

/// One seed's greedy sequence and the time it took with the features.
struct Greedy {
    order: Vec<usize>,
    seconds: f64,
}

struct ActiveRunner {
    s: Settings,
    data: DataSlot,
    seeds: SharedCache<SeedData>,
    greedy: SharedCache<Greedy>,
}

impl Kind for ActiveLearning {
    fn name(&self) -> &'static str {
        "active_learning"
    }
    fn about(&self) -> &'static str {
        "Active learning: greedy design with NTK random features vs random selection, judged by a trained network (NTK-RF paper, Fig. 3)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "selection",
                allowed: "greedy, random",
                check: |v| check_choice(v, &SELECTIONS),
                required: true,
            },
            ParamSpec {
                name: "k",
                allowed: "integers from 1 to 50000 (at most max_k)",
                check: |v| rfx_harness::kind::check_int(v, 1, 50_000),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(ActiveRunner {
            s,
            data: DataSlot::new(),
            seeds: SharedCache::default(),
            greedy: SharedCache::default(),
        }))
    }
}

impl ActiveRunner {
    fn seed_data(&self, experiment_seed: u64, seed: &str) -> Result<SeedData, String> {
        let s = &self.s;
        let tt = idx_data(&self.data, &s.dataset).map_err(|e| format!("{e:?}"))?;
        let mut rng = rng_stream(experiment_seed, &format!("pool;seed={seed}"));
        let ntr = tt.train.x.nrows();
        let picked = random_rows(&s.dataset, ntr, s.pool + s.n_valid, &mut rng)?;
        let (pool, valid) = picked.split_at(s.pool);
        let test: Vec<usize> = if s.n_test == 0 {
            (0..tt.test.x.nrows()).collect()
        } else {
            random_rows(&s.dataset, tt.test.x.nrows(), s.n_test, &mut rng)?
        };
        let rows = |x: &Array2<f64>, idx: &[usize]| {
            let mut r = x.select(Axis(0), idx);
            normalize_rows(&mut r);
            r
        };
        let pool_x = rows(&tt.train.x, pool);
        let spec = rfx_registry::method("ntk-rf")?;
        let p = spec.params_from(&[("depth", RawValue::from(s.depth))])?;
        let mut frng = rng_stream(experiment_seed, &format!("features;seed={seed}"));
        let map = spec
            .fit(s.features, &p, FitData::Dim(pool_x.ncols()), &mut frng)
            .map_err(|e| e.to_string())?;
        let phi = map.transform(pool_x.view()).map_err(|e| e.to_string())?;
        let test_x = rows(&tt.test.x, &test);
        let phi_test = map.transform(test_x.view()).map_err(|e| e.to_string())?;
        Ok(SeedData {
            pool_y: pool.iter().map(|&i| tt.train.labels[i]).collect(),
            valid_x: rows(&tt.train.x, valid),
            valid_y: valid.iter().map(|&i| tt.train.labels[i]).collect(),
            test_x,
            test_y: test.iter().map(|&i| tt.test.labels[i]).collect(),
            pool_x,
            phi,
            phi_test,
        })
    }
}

impl Runner for ActiveRunner {
    fn metrics(&self) -> Vec<String> {
        [
            "accuracy",
            "ridge_accuracy",
            "valid_accuracy",
            "rate",
            "epochs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn timings(&self) -> Vec<String> {
        vec!["design_s".into(), "train_s".into()]
    }
    fn settings(&self) -> String {
        format!("{:?}", self.s)
    }
    fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let s = &self.s;
        let key = cell.key();
        let fatal = |e: String| CellError::Fatal(format!("cell {key}: {e}"));
        let selection = cell.str("selection")?.to_string();
        let k = usize::try_from(cell.int("k")?).map_err(|_| fatal("bad k".into()))?;
        if k > s.max_k {
            return Err(fatal(format!("k = {k} exceeds max_k = {}", s.max_k)));
        }
        let seed = cell.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let es = cell.experiment_seed;
        let d = self
            .seeds
            .get(&format!("seed={seed}"), || self.seed_data(es, &seed))?;
        let (chosen, design_s): (Vec<usize>, f64) = if selection == "greedy" {
            let g = self.greedy.get(&format!("seed={seed}"), || {
                let (order, t) =
                    timed(|| rfx_solvers::design::greedy_design(d.phi.view(), s.lambda, s.max_k));
                Ok(Greedy {
                    order: order.map_err(|e| e.to_string())?,
                    seconds: t,
                })
            })?;
            (g.order[..k].to_vec(), g.seconds)
        } else {
            let mut perm: Vec<usize> = (0..s.pool).collect();
            perm.shuffle(&mut rng_stream(es, &format!("random;seed={seed}")));
            (perm[..k].to_vec(), 0.0)
        };
        let d: Arc<SeedData> = d;

        // the network: chosen images to fit, validation images to choose rate and epoch
        let mut x = d.pool_x.select(Axis(0), &chosen);
        x.append(Axis(0), d.valid_x.view())
            .map_err(|e| fatal(e.to_string()))?;
        let mut y: Vec<usize> = chosen.iter().map(|&i| d.pool_y[i]).collect();
        y.extend(&d.valid_y);
        let fit: Vec<usize> = (0..k).collect();
        let valid: Vec<usize> = (k..k + d.valid_y.len()).collect();
        let net = rfx_ntk::CnnGradRf::params()
            .shape(1, 1, x.ncols())
            .filter(1)
            .layers(s.depth)
            .width(s.width);
        let params = rfx_ntk::CnnClassifierParams::new(net, 10)
            .epochs(s.epochs)
            .batch(k.min(32))
            .rates(&RATES);
        let mut nrng = rng_stream(es, &format!("net;k={k};seed={seed}"));
        let (trained, train_s) =
            timed(|| params.fit_early_stopped(x.view(), &y, &fit, &valid, &mut nrng));
        let (model, choice) = trained.map_err(|e| fatal(e.to_string()))?;
        let pred = model
            .predict(d.test_x.view())
            .map_err(|e| fatal(e.to_string()))?;
        let acc = accuracy(&pred, &d.test_y).map_err(|e| fatal(e.to_string()))?;

        // ridge on the design's features of the chosen images
        let ridge_acc = (|| -> rfx_core::Result<f64> {
            let z = d.phi.select(Axis(0), &chosen);
            let targets = one_hot(&fit.iter().map(|&i| y[i]).collect::<Vec<_>>(), 10, true)?;
            let model = Ridge::fit(z.view(), targets.view(), &RidgeParams::new(s.lambda))?;
            accuracy(
                &argmax_rows(model.predict(d.phi_test.view())?.view()),
                &d.test_y,
            )
        })()
        .map_err(|e| fatal(e.to_string()))?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                acc,
                ridge_acc,
                choice.valid_accuracy,
                choice.rate,
                choice.epochs as f64,
            ],
            timings: vec![design_s, train_s],
        })
    }
}
