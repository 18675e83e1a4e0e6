//! `arccos_condition`: generalized condition numbers of order-1 arc-cosine random features against the exact
//! arc-cosine kernel (NTK random features paper, Han et al. 2021, Fig. 1).
//!
//! One cell = (data set, features, $m_1$, seed). Per data set, a fixed subsample of `n` rows (the same for
//! every cell), each column standardised and then each row scaled to unit norm, and the exact Gram
//! $A_1 = [\Vert x_i\Vert\Vert x_j\Vert\kappa_1(\cos\theta_{ij})]$ are computed once per run and shared. The cell draws
//! $m_1$ order-1 features $\Phi_1$ and reports the generalized condition number
//! $$\kappa = \lambda_{\max}/\lambda_{\min}\ \text{of}\ (A_1+\lambda I)^{-1/2}(\Phi_1\Phi_1^\top+\lambda I)(A_1+\lambda I)^{-1/2},
//! \qquad \lambda = c\thinspace n\ (c = 10^{-4}\ \text{in the paper}),$$
//! and the extreme eigenvalues $\mu_{\min}$, $\mu_{\max}$ ([`rfx_solvers::spectral::spectral_approx`]).
//! Features: `standard` (Cho–Saul, $w \sim \mathcal N(0, I)$, Eq. 11), `gs` (leverage-score weights by
//! Gibbs sampling with `gibbs_sweeps` sweeps, Algorithm 2), `exact` (leverage-score weights drawn exactly).

use std::sync::Arc;

use ndarray::Array2;
use rfx_core::RfxRng;
use rfx_kernels::{ArcCosineKernel, ArcCosineOrder};
use rfx_ntk::{ArcCosineFeatures, Sampler};

use crate::kinds::ntk_common::{check_any_dataset, load_rows, Prep, Shared};
use rfx_core::FeatureMap;
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Settings};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};

/// The kind.
pub struct ArccosCondition;

const FEATURES: [&str; 3] = ["standard", "gs", "exact"];
const FEATURES_ALLOWED: &str = "standard (Gaussian weights, Cho & Saul), gs (leverage-score weights by Gibbs sampling, Algorithm 2), \
exact (leverage-score weights drawn exactly)";

struct Data {
    x: Array2<f64>,
    a1: Array2<f64>,
}

/// `[arccos_condition]`: the subsample size n, λ as a multiple of the Gram's largest eigenvalue, and the
/// Gibbs sweeps of the leverage sampler.
#[derive(serde::Deserialize)]
#[serde(default)]
struct ArccosSettings {
    n: usize,
    lambda_factor: f64,
    gibbs_sweeps: usize,
}

impl Default for ArccosSettings {
    fn default() -> Self {
        ArccosSettings {
            n: 1000,
            lambda_factor: 1e-4,
            gibbs_sweeps: 1,
        }
    }
}

impl Settings for ArccosSettings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("n", "integers from 2 to 20000"),
        ("lambda_factor", "numbers from 0.000000000001 to 1000000"),
        ("gibbs_sweeps", "integers from 1 to 100"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("n", self.n as i128, 2, 20_000)?;
        float_in("lambda_factor", self.lambda_factor, 1e-12, 1e6)?;
        int_in("gibbs_sweeps", self.gibbs_sweeps as i128, 1, 100)
    }
}

struct ArccosRunner {
    s: ArccosSettings,
    data: Shared<Data>,
}

impl Kind for ArccosCondition {
    fn name(&self) -> &'static str {
        "arccos_condition"
    }
    fn about(&self) -> &'static str {
        "generalized condition number of order-1 arc-cosine features (standard vs leverage-score) against the exact kernel (NTK-RF paper, Fig. 1)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: "a registered data set (e.g. keel/magic)",
                check: check_any_dataset,
                required: true,
            },
            ParamSpec {
                name: "features",
                allowed: FEATURES_ALLOWED,
                check: |v| check_choice(v, &FEATURES),
                required: true,
            },
            crate::kinds::feature_count_param("m1"),
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let r = ArccosRunner {
            s: ArccosSettings::read(section)?,
            data: Shared::default(),
        };
        Ok(Box::new(r))
    }
}

impl Runner for ArccosRunner {
    fn metrics(&self) -> Vec<String> {
        ["condition_number", "mu_min", "mu_max"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn settings(&self) -> String {
        format!(
            "n={};lambda_factor={};gibbs_sweeps={};prep=standardize+unit",
            self.s.n, self.s.lambda_factor, self.s.gibbs_sweeps
        )
    }
    fn cost(&self, cell: &Cell) -> f64 {
        // The n × m₁ features and their m₁-wide products grow with m₁.
        cell.int("m1").map_or(1.0, |m| m as f64 / 1000.0)
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        // The data set's subsample and exact arc-cosine Gram.
        cell.str("dataset").ok().map(str::to_string)
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let name = cell.str("dataset")?;
        let features = cell.str("features")?;
        let m1 = cell.int("m1")? as usize;
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("{}: {e}", cell.key()));
        let data: Arc<Data> = self.data.get(name, || {
            let x = load_rows(
                name,
                self.s.n,
                cell.experiment_seed,
                Prep::StandardizeThenUnit,
            )?;
            let a1 = ArcCosineKernel::new(ArcCosineOrder::One)
                .gram_sym(x.view())
                .map_err(|e| CellError::Fatal(format!("data set {name}: {e}")))?;
            Ok(Data { x, a1 })
        })?;
        let sampler = match features {
            "standard" => Sampler::Gaussian,
            "gs" => Sampler::LeverageGibbs {
                sweeps: self.s.gibbs_sweeps,
            },
            "exact" => Sampler::LeverageExact,
            other => {
                return Err(CellError::Fatal(format!(
                    "unknown features \"{other}\"; allowed: {FEATURES_ALLOWED}"
                )))
            }
        };
        let map = ArcCosineFeatures::params()
            .order(ArcCosineOrder::One)
            .dim(m1)
            .sampler(sampler)
            .fit(data.x.ncols(), rng)
            .map_err(fatal)?;
        let z = map.transform(data.x.view()).map_err(fatal)?;
        let lambda = self.s.lambda_factor * data.x.nrows() as f64;
        let s = rfx_solvers::spectral::spectral_approx(data.a1.view(), z.view(), lambda)
            .map_err(fatal)?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![s.condition_number, s.mu_min, s.mu_max],
            timings: Vec::new(),
        })
    }
}
