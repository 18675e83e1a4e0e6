//! `trf_svm`: linear-SVM test accuracy and running time on random features against their number $m$, ReLU
//! random features vs ternary random features matched to ReLU (ternary random features paper, Fig. 14:
//! raw Fashion-MNIST, 10 classes), and the Gaussian-kernel maps RFF, ORF, SSF vs ternary random features
//! matched to the Gaussian kernel (Figs. 10–12: a8a, ijcnn1, Cov-Type; here on classification tables of the
//! data registry).
//!
//! **Features.** ReLU RF $z(\mathbf x) = \max(0, W\mathbf x)/\sqrt m$, $W_{kj}\sim\mathcal N(0,1)$ (kernel: the
//! arc-cosine kernel of order 1); TRF $\sigma^{ter}(W^{ter}\mathbf x)/\sqrt m$ with sparsity ε and thresholds
//! matching the $d_1, d_2$ of ReLU at the data's $\hat\tau$ (Algorithm 1; exact for $\hat\tau \lesssim 1.3$).
//! Gaussian kernel $e^{-\Vert\mathbf x-\mathbf y\Vert^2/2}$ of the scaled data (bandwidth 1 after the scaling
//! below, so `tau` sets the bandwidth): `rff`, `orf`, `ssf` ($m$ outputs, $[\cos, \sin]$ of $m/2$ frequencies)
//! and `trf-gauss-ε` (TRF whose thresholds match the $d_1, d_2$ of $[\cos, \sin]$, footnote 8; feasible for
//! $\hat\tau \lesssim 0.5$). All are fitted through `rfx_registry` (`relu` is the registry's `relu-rf`,
//! `trf-ε` its `ternary` with `activation = relu`, `sparsity = ε`, `trf-gauss-ε` the same with
//! `activation = cos-sin`, and `rff`/`orf`/`ssf` its maps of those names with `kernel = gaussian`,
//! `sigma = 1`; see `registry_choice`).
//! **Data.** An image set (`mnist`, `fashion-mnist`): `n_train` and `n_test` images drawn at random from its
//! training and test sets, centred with the training mean. A classification table (`keel/…`,
//! `mlbench/shuttle`, …): `n_train + n_test` distinct rows drawn at random from the whole table, the first
//! `n_train` for training; columns standardised with the training rows' means and standard deviations
//! (`rfx_data::Standardizer`); with `positive`, the classes named there become class 1 and every other class 0
//! (a two-class problem, as the paper's sets are). The draw of a seed is
//! `rng_stream(stream_seed, "data;seed=..")`, shared by every method and $m$. Then the rows are scaled so that
//! the training $\hat\tau = \frac1n\sum_i\Vert\mathbf x_i\Vert^2$ equals `tau`.
//! **Embeddings** (`embed_net`, the stand-in for the pretrained embeddings of Figs. 13 and 15): a network is
//! trained once on `embed_net`'s training images (`SvmRunner::embed_net`), and the image rows drawn above are
//! replaced by its penultimate layer ([`rfx_ntk::CnnClassifier::embed`]) before the centring and scaling.
//! **Learner.** One-vs-rest linear SVM, squared hinge, $C$ = `c` (sklearn `LinearSVC()` defaults: $C = 1$),
//! by dual coordinate descent. **Time** = features (train + test) + training, the paper's running time.

use crate::kinds::tabular::DataCache;
use crate::kinds::trf_common::{idx_data, random_rows, scale_to_tau, timed, DataSlot, SharedCache};
use ndarray::{Array2, Axis};
use rfx_core::{rng_stream, FeatureMap, FitData, RfxRng};
use rfx_data::normalize_rows;
use rfx_harness::config::{choice_in, float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_ntk::{CnnClassifier, TrainChoice};
use rfx_registry::{MethodSpec, Params, RawValue};
use rfx_solvers::classify::{LinearSvm, SvmParams};
use std::sync::Arc;

/// The SVM's stopping tolerance: scikit-learn `LinearSVC`'s default `tol`, which the ternary paper's SVM code
/// uses (`LinearSVC()` with default arguments; the rest of its defaults are [`SvmParams::new`]'s).
const LINEAR_SVC_TOL: f64 = 1e-4;

/// The kind.
pub struct TrfSvm;

const METHODS: &str =
    "\"relu\" or \"trf-<eps>\" (ReLU kernel), \"rff\", \"orf\", \"ssf\" or \"trf-gauss-<eps>\" \
(Gaussian kernel), with eps in [0, 0.99], e.g. trf-0.5";
/// The image sets; any classification table of the data registry is accepted too.
const DATASETS: [&str; 2] = ["fashion-mnist", "mnist"];
/// The Gaussian-kernel maps of the registry a `method` value may name directly.
const GAUSSIAN_MAPS: [&str; 3] = ["rff", "orf", "ssf"];

/// The registry method and parameters of a `method` value: `relu` is `relu-rf`, `trf-<eps>` is `ternary`
/// matched to ReLU at sparsity eps, `trf-gauss-<eps>` is `ternary` matched to the Gaussian kernel's
/// $[\cos, \sin]$, and `rff`, `orf`, `ssf` are those maps of the Gaussian kernel with bandwidth 1. The registry
/// checks the parameters (sweep check and cell alike).
fn registry_choice(value: &str) -> Result<(&'static MethodSpec, Params), String> {
    let bad = || format!("invalid value \"{value}\"; allowed: {METHODS}");
    let ternary = |activation: &str, eps: &str| -> Result<Vec<(&'static str, RawValue)>, String> {
        let eps: f64 = eps.parse().map_err(|_| bad())?;
        Ok(vec![
            ("activation", RawValue::from(activation)),
            ("sparsity", RawValue::from(eps)),
        ])
    };
    let (name, given): (&str, Vec<(&str, RawValue)>) = if value == "relu" {
        ("relu-rf", vec![])
    } else if let Some(&name) = GAUSSIAN_MAPS.iter().find(|&&g| g == value) {
        (
            name,
            vec![
                ("kernel", RawValue::from("gaussian")),
                ("sigma", RawValue::from(1.0)),
            ],
        )
    } else if let Some(eps) = value.strip_prefix("trf-gauss-") {
        ("ternary", ternary("cos-sin", eps)?)
    } else if let Some(eps) = value.strip_prefix("trf-") {
        ("ternary", ternary("relu", eps)?)
    } else {
        return Err(bad());
    };
    let spec = rfx_registry::method(name)?;
    let params = spec
        .params_from(&given)
        .map_err(|e| format!("{}: {e}", bad()))?;
    Ok((spec, params))
}

/// `[trf_svm]`: the data set, training and test sizes, the TRF threshold factor τ, the SVM's C, the
/// seed of the data stream and, for a table, the classes that form class 1 (the fingerprint formats these,
/// `settings()`; `positive` only when written, so the first experiment's fingerprint stands).
#[derive(serde::Deserialize)]
#[serde(default)]
struct Settings {
    dataset: String,
    n_train: usize,
    n_test: usize,
    tau: f64,
    c: f64,
    stream_seed: u64,
    positive: Option<Vec<String>>,
    /// Image sets: the image set whose training images train the embedding network (`None`: raw pixels).
    embed_net: Option<String>,
    embed_width: usize,
    embed_layers: usize,
    embed_train: usize,
    embed_epochs: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dataset: "fashion-mnist".into(),
            n_train: 1024,
            n_test: 1024,
            tau: 1.0,
            c: 1.0,
            stream_seed: 0,
            positive: None,
            embed_net: None,
            embed_width: 256,
            embed_layers: 2,
            embed_train: 10_000,
            embed_epochs: 10,
        }
    }
}

impl Settings {
    /// Whether `dataset` is one of the image sets (else a classification table).
    fn is_image_set(&self) -> bool {
        DATASETS.contains(&self.dataset.as_str())
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        (
            "dataset",
            "fashion-mnist, mnist, or a classification table of the data registry (keel/..., mlbench/shuttle, sklego/abalone)",
        ),
        ("n_train", "integers from 10 to 60000"),
        ("n_test", "integers from 10 to 100000"),
        ("tau", "numbers from 0.001 to 100"),
        ("c", "numbers from 0.000000001 to 1000000000"),
        ("stream_seed", "integers from 0 to 9223372036854775807"),
        (
            "positive",
            "a non-empty list of class names of a table (those classes become class 1, the others class 0)",
        ),
        (
            "embed_net",
            "fashion-mnist, mnist: train a network on this set's training images and use its penultimate layer",
        ),
        ("embed_width", "integers from 1 to 4096"),
        ("embed_layers", "integers from 1 to 8"),
        ("embed_train", "integers from 100 to 58000"),
        ("embed_epochs", "integers from 1 to 1000"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        let table = rfx_data::dataset(&self.dataset)
            .map(|d| d.kind.is_classification_table())
            .unwrap_or(false);
        if !table {
            let mut allowed: Vec<&str> = DATASETS.to_vec();
            allowed.extend(
                rfx_data::datasets()
                    .iter()
                    .filter(|d| d.kind.is_classification_table())
                    .map(|d| d.name.as_str()),
            );
            choice_in("dataset", &self.dataset, &allowed)?;
        }
        if let Some(pos) = &self.positive {
            if pos.is_empty() || !table {
                return Err(Invalid {
                    key: "positive",
                    message: "expected a non-empty list of class names, and a classification table as dataset"
                        .into(),
                });
            }
        }
        if let Some(net) = &self.embed_net {
            choice_in("embed_net", net, &DATASETS)?;
            if !self.is_image_set() {
                return Err(Invalid {
                    key: "embed_net",
                    message: format!(
                        "embeds images: dataset must be an image set ({}), found \"{}\"",
                        DATASETS.join(", "),
                        self.dataset
                    ),
                });
            }
        }
        int_in("embed_width", self.embed_width as i128, 1, 4096)?;
        int_in("embed_layers", self.embed_layers as i128, 1, 8)?;
        int_in("embed_train", self.embed_train as i128, 100, 58_000)?;
        int_in("embed_epochs", self.embed_epochs as i128, 1, 1000)?;
        int_in("n_train", self.n_train as i128, 10, 60_000)?;
        int_in("n_test", self.n_test as i128, 10, 100_000)?;
        float_in("tau", self.tau, 1e-3, 100.0)?;
        float_in("c", self.c, 1e-9, 1e9)?;
        int_in("stream_seed", self.stream_seed as i128, 0, i64::MAX as i128)
    }
}

struct Split {
    xtr: Array2<f64>,
    xte: Array2<f64>,
    ltr: Vec<usize>,
    lte: Vec<usize>,
    classes: usize,
}

struct SvmRunner {
    s: Settings,
    data: DataSlot,
    tables: DataCache,
    splits: SharedCache<Split>,
    /// The embedding network of `embed_net`, trained once.
    nets: SharedCache<(CnnClassifier, TrainChoice)>,
}

/// Validation images of the embedding network (drawn after its `embed_train` training images).
const EMBED_VALID: usize = 2000;
/// Learning rates of the embedding network, chosen with its epoch on the validation images.
const EMBED_RATES: [f64; 3] = [0.3, 1.0, 3.0];

impl Kind for TrfSvm {
    fn name(&self) -> &'static str {
        "trf_svm"
    }
    fn about(&self) -> &'static str {
        "Linear SVM accuracy and time vs m: ReLU RF vs TRF matched to ReLU (TRF paper, Fig. 14), RFF/ORF/SSF vs TRF matched to the Gaussian kernel (Figs. 10-12)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "method",
                allowed: METHODS,
                check: |v| match v.as_str() {
                    Some(s) => registry_choice(s).map(|_| ()),
                    None => Err(format!("invalid value \"{v}\"; allowed: {METHODS}")),
                },
                required: true,
            },
            crate::kinds::feature_count_param("m"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(SvmRunner {
            s,
            data: DataSlot::new(),
            tables: DataCache::default(),
            splits: SharedCache::default(),
            nets: SharedCache::default(),
        }))
    }
}

impl SvmRunner {
    fn split(&self, seed: &str) -> Result<Split, CellError> {
        if self.s.is_image_set() {
            self.image_split(seed)
        } else {
            self.table_split(seed)
        }
    }

    /// A table's random training and test rows, standardised by the training columns, labels made two-class
    /// by `positive`, scaled to $\hat\tau$ = `tau` (module docs).
    fn table_split(&self, seed: &str) -> Result<Split, CellError> {
        let s = &self.s;
        let t = self.tables.get(&s.dataset)?;
        let mut rng = rng_stream(s.stream_seed, &format!("data;seed={seed}"));
        let idx = random_rows(&s.dataset, t.x.nrows(), s.n_train + s.n_test, &mut rng)
            .map_err(CellError::Fatal)?;
        let (itr, ite) = idx.split_at(s.n_train);
        let err = |e: rfx_core::RfxError| CellError::Fatal(format!("data set {}: {e}", s.dataset));
        let (xtr, xte) = (t.x.select(Axis(0), itr), t.x.select(Axis(0), ite));
        let st = rfx_data::Standardizer::fit(xtr.view()).map_err(err)?;
        let mut xtr = st.transform(xtr.view()).map_err(err)?;
        let mut xte = st.transform(xte.view()).map_err(err)?;
        let c = scale_to_tau(&mut xtr, s.tau);
        xte *= c;
        let (class_of, classes): (Vec<usize>, usize) = match &s.positive {
            None => ((0..t.n_classes).collect(), t.n_classes),
            Some(pos) => {
                for p in pos {
                    if !t.class_names.iter().any(|c| c == p) {
                        return Err(CellError::Fatal(format!(
                            "data set {}: positive class \"{p}\" is not one of its classes ({})",
                            s.dataset,
                            t.class_names.join(", ")
                        )));
                    }
                }
                let map = t
                    .class_names
                    .iter()
                    .map(|c| usize::from(pos.contains(c)))
                    .collect();
                (map, 2)
            }
        };
        let labels = |rows: &[usize]| rows.iter().map(|&i| class_of[t.labels[i]]).collect();
        Ok(Split {
            ltr: labels(itr),
            lte: labels(ite),
            xtr,
            xte,
            classes,
        })
    }

    fn image_split(&self, seed: &str) -> Result<Split, CellError> {
        let s = &self.s;
        let tt = idx_data(&self.data, &s.dataset)?;
        let mut rng = rng_stream(s.stream_seed, &format!("data;seed={seed}"));
        let mut pick = |len: usize, k: usize| {
            random_rows(&s.dataset, len, k, &mut rng).map_err(CellError::Fatal)
        };
        let itr = pick(tt.train.x.nrows(), s.n_train)?;
        let ite = pick(tt.test.x.nrows(), s.n_test)?;
        let mut xtr = tt.train.x.select(Axis(0), &itr);
        let mut xte = tt.test.x.select(Axis(0), &ite);
        if s.embed_net.is_some() {
            // the network's embedding of the unit-norm images, as it was trained on them
            let net = self.embed_net()?;
            let embed = |x: &mut Array2<f64>| {
                normalize_rows(x);
                net.0
                    .embed(x.view())
                    .map_err(|e| CellError::Fatal(format!("embedding {}: {e}", s.dataset)))
            };
            xtr = embed(&mut xtr)?;
            xte = embed(&mut xte)?;
        }
        let mean = xtr.mean_axis(Axis(0)).unwrap_or_default();
        xtr -= &mean;
        xte -= &mean;
        let t = xtr.iter().map(|v| v * v).sum::<f64>() / xtr.nrows().max(1) as f64;
        let c = if t > 0.0 { (s.tau / t).sqrt() } else { 1.0 };
        xtr *= c;
        xte *= c;
        let ltr: Vec<usize> = itr.iter().map(|&i| tt.train.labels[i]).collect();
        let lte: Vec<usize> = ite.iter().map(|&i| tt.test.labels[i]).collect();
        let classes = tt.train.labels.iter().max().map_or(0, |&k| k + 1);
        Ok(Split {
            xtr,
            xte,
            ltr,
            lte,
            classes,
        })
    }
}

impl SvmRunner {
    /// The embedding network: a fully connected ReLU network (`embed_layers` hidden layers of width
    /// `embed_width`, the NTK parameterisation of [`rfx_ntk::CnnClassifier`] on $1 \times 1$ "images" with 784
    /// channels) trained with SGD on `embed_train` unit-norm training images of `embed_net`, its learning rate
    /// and epoch (≤ `embed_epochs`) chosen on [`EMBED_VALID`] others (early stopping); drawn from
    /// `rng_stream(stream_seed, "embed-net")`. Trained once per run, whatever the cell.
    fn embed_net(&self) -> Result<Arc<(CnnClassifier, TrainChoice)>, CellError> {
        let s = &self.s;
        let name = s.embed_net.clone().unwrap_or_default();
        self.nets.get("net", || {
            let tt = idx_data(&self.data, &name).map_err(|e| match e {
                CellError::Fatal(m) | CellError::Skipped(m) => m,
            })?;
            let mut rng = rng_stream(s.stream_seed, "embed-net");
            let n = s.embed_train + EMBED_VALID;
            let rows = random_rows(&name, tt.train.x.nrows(), n, &mut rng)?;
            let mut x = tt.train.x.select(Axis(0), &rows);
            normalize_rows(&mut x);
            let labels: Vec<usize> = rows.iter().map(|&i| tt.train.labels[i]).collect();
            let classes = tt.train.labels.iter().max().map_or(0, |&k| k + 1);
            let fit: Vec<usize> = (0..s.embed_train).collect();
            let valid: Vec<usize> = (s.embed_train..n).collect();
            let net = rfx_ntk::CnnGradRf::params()
                .shape(1, 1, x.ncols())
                .filter(1)
                .layers(s.embed_layers)
                .width(s.embed_width);
            rfx_ntk::CnnClassifierParams::new(net, classes)
                .epochs(s.embed_epochs)
                .rates(&EMBED_RATES)
                .fit_early_stopped(x.view(), &labels, &fit, &valid, &mut rng)
                .map_err(|e| format!("training the embedding network on {name}: {e}"))
        })
    }
}

impl Runner for SvmRunner {
    fn metrics(&self) -> Vec<String> {
        let mut m = vec!["accuracy".into(), "time_total_s".into()];
        if self.s.embed_net.is_some() {
            m.push("net_valid_accuracy".into());
        }
        m
    }
    fn timings(&self) -> Vec<String> {
        vec!["time_features_s".into(), "time_fit_s".into()]
    }
    fn settings(&self) -> String {
        let s = &self.s;
        format!(
            "dataset={};n_train={};n_test={};tau={};c={};stream_seed={}",
            s.dataset, s.n_train, s.n_test, s.tau, s.c, s.stream_seed
        ) + &s
            .positive
            .as_ref()
            .map(|p| format!(";positive={}", p.join(",")))
            .unwrap_or_default()
            + &s
                .embed_net
                .as_ref()
                .map(|n| {
                    format!(
                        ";embed_net={n};embed_width={};embed_layers={};embed_train={};embed_epochs={}",
                        s.embed_width, s.embed_layers, s.embed_train, s.embed_epochs
                    )
                })
                .unwrap_or_default()
    }
    fn shared_group(&self, _cell: &Cell) -> Option<String> {
        // every cell embeds its images with the one network of the run (minutes to train)
        self.s.embed_net.as_ref().map(|n| format!("embed_net={n}"))
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let (spec, params) = registry_choice(cell.str("method")?)
            .map_err(|e| CellError::Fatal(format!("cell {}: {e}", cell.key())))?;
        let m = usize::try_from(cell.int("m")?)
            .map_err(|_| CellError::Fatal(format!("cell {}: bad m", cell.key())))?;
        let seed = cell.get("seed").map(Value::to_string).unwrap_or_default();
        let d = self.splits.get(&format!("seed={seed}"), || {
            self.split(&seed).map_err(|e| match e {
                CellError::Fatal(s) | CellError::Skipped(s) => s,
            })
        })?;
        let key = cell.key();
        let err = |e: rfx_core::RfxError| format!("cell {key}: {e}");
        let (r, time_features) = timed(|| -> Result<_, String> {
            let f = spec
                .fit(m, &params, FitData::Rows(d.xtr.view()), rng)
                .map_err(err)?;
            Ok((
                f.transform(d.xtr.view()).map_err(err)?,
                f.transform(d.xte.view()).map_err(err)?,
            ))
        });
        let (ztr, zte) = r.map_err(CellError::Fatal)?;
        let svm_seed = rfx_core::stream_seed(self.s.stream_seed, &key);
        let (r, time_fit) = timed(|| {
            LinearSvm::fit(
                ztr.view(),
                &d.ltr,
                d.classes,
                &SvmParams {
                    tol: LINEAR_SVC_TOL,
                    ..SvmParams::new(self.s.c, svm_seed)
                },
            )
        });
        let model = r.map_err(|e| CellError::Fatal(err(e)))?;
        let pred = model
            .predict(zte.view())
            .map_err(|e| CellError::Fatal(err(e)))?;
        let correct = pred.iter().zip(&d.lte).filter(|(a, b)| a == b).count();
        let acc = correct as f64 / d.lte.len().max(1) as f64;
        let mut metrics = vec![acc, time_features + time_fit];
        if self.s.embed_net.is_some() {
            metrics.push(self.embed_net()?.1.valid_accuracy);
        }
        Ok(CellOutput {
            items: Vec::new(),
            metrics,
            timings: vec![time_features, time_fit],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_and_positive_classes_are_checked() {
        use rfx_harness::config::Settings as _;
        let with = |dataset: &str, positive: Option<Vec<&str>>| Settings {
            dataset: dataset.into(),
            positive: positive.map(|p| p.into_iter().map(String::from).collect()),
            ..Settings::default()
        };
        assert!(with("fashion-mnist", None).check().is_ok());
        assert!(with("keel/magic", None).check().is_ok());
        assert!(with("mlbench/shuttle", Some(vec!["Rad.Flow"]))
            .check()
            .is_ok());
        // a regression set, an unknown name: refused with the allowed names
        for bad in ["uci/protein", "no-such-set"] {
            let e = with(bad, None).check().unwrap_err();
            assert_eq!(e.key, "dataset");
            assert!(
                e.message.contains("keel/magic") && e.message.contains("mnist"),
                "{}",
                e.message
            );
        }
        // `embed_net` names an image set and embeds an image set
        let embed = |dataset: &str, net: &str| Settings {
            embed_net: Some(net.into()),
            ..with(dataset, None)
        };
        assert!(embed("fashion-mnist", "mnist").check().is_ok());
        for (dataset, net) in [("keel/magic", "mnist"), ("fashion-mnist", "cifar10")] {
            let e = embed(dataset, net).check().unwrap_err();
            assert_eq!(e.key, "embed_net", "{dataset}, {net}");
        }
        // `positive` needs a table and at least one class
        for (dataset, positive) in [("mnist", vec!["1"]), ("keel/magic", vec![])] {
            let e = with(dataset, Some(positive)).check().unwrap_err();
            assert_eq!(e.key, "positive");
        }
    }

    #[test]
    fn positive_enters_the_fingerprint_only_when_written() {
        let runner = |positive: Option<Vec<String>>| SvmRunner {
            s: Settings {
                positive,
                ..Settings::default()
            },
            data: DataSlot::new(),
            tables: DataCache::default(),
            splits: SharedCache::default(),
            nets: SharedCache::default(),
        };
        assert_eq!(
            runner(None).settings(),
            "dataset=fashion-mnist;n_train=1024;n_test=1024;tau=1;c=1;stream_seed=0"
        );
        assert!(runner(Some(vec!["g".into(), "h".into()]))
            .settings()
            .ends_with(";stream_seed=0;positive=g,h"));
        // the embedding network's settings enter it only with `embed_net`
        let mut r = runner(None);
        r.s.embed_net = Some("mnist".into());
        assert!(r.settings().ends_with(
            ";stream_seed=0;embed_net=mnist;embed_width=256;embed_layers=2;embed_train=10000;embed_epochs=10"
        ));
        assert_eq!(
            r.metrics().last().map(String::as_str),
            Some("net_valid_accuracy")
        );
        // and all its cells share that network's computation (rfx verify, --shard)
        let cell = Cell {
            index: 0,
            params: vec![("method".into(), Value::Str("relu".into()))],
            experiment_seed: 1,
        };
        assert_eq!(r.shared_group(&cell).as_deref(), Some("embed_net=mnist"));
        assert_eq!(runner(None).shared_group(&cell), None);
    }

    #[test]
    fn methods_map_to_registry_methods() {
        let name = |v: &str| registry_choice(v).map(|(spec, _)| spec.name);
        assert_eq!(name("relu"), Ok("relu-rf"));
        assert_eq!(name("trf-0.9"), Ok("ternary"));
        let (_, p) = registry_choice("trf-0.5").unwrap();
        assert_eq!(p.float("sparsity").unwrap(), 0.5);
        assert_eq!(p.choice("activation").unwrap(), "relu");
        let (spec, p) = registry_choice("trf-gauss-0.9").unwrap();
        assert_eq!(spec.name, "ternary");
        assert_eq!(p.float("sparsity").unwrap(), 0.9);
        assert_eq!(p.choice("activation").unwrap(), "cos-sin");
        for g in GAUSSIAN_MAPS {
            let (spec, p) = registry_choice(g).unwrap();
            assert_eq!(spec.name, g);
            assert_eq!(p.choice("kernel").unwrap(), "gaussian");
            assert_eq!(p.float("sigma").unwrap(), 1.0);
        }
        for bad in [
            "trf-1",
            "trf-x",
            "gauss",
            "trf-gauss-1",
            "trf-gauss-",
            "sorf",
            "trf--0.1",
        ] {
            let e = registry_choice(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("trf-<eps>"), "{e}");
        }
    }
}
