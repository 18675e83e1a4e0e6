//! Shared pieces of the table kinds (`krr_table`, `kmeans_table`): registered data sets loaded once per run,
//! and the feature maps compared in the random Gegenbauer features paper's Tables 2–4, built from the method
//! crates (no mathematics here beyond composing them).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ndarray::{Array2, ArrayView2, Axis};
use rfx_core::{FeatureMap, Kernel, RfxRng};
use rfx_data::registry::Kind as DataKind;
use rfx_data::Loaded;
use rfx_gzk::zonal::Gzk;
use rfx_gzk::RandomGegenbauerParams;
use rfx_sampling::{FourierMethod, GaussianFeatureParams};
use rfx_sketches::{PolynomialSketch, RandomMaclaurin};
use rfx_solvers::nystrom::{Nystrom, NystromParams};

use super::CellError;
use crate::config::Value;

/// Which kind of data a table kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataNeed {
    /// Inputs and a real target (`uci/...`, `uci-raw/...`).
    Regression,
    /// Inputs and class labels (`keel/...`).
    Classification,
}

impl DataNeed {
    fn accepts(self, kind: DataKind) -> bool {
        match self {
            DataNeed::Regression => matches!(kind, DataKind::Uci | DataKind::UciRaw { .. }),
            DataNeed::Classification => matches!(kind, DataKind::Keel | DataKind::Abalone),
        }
    }

    fn names(self) -> String {
        rfx_data::datasets()
            .iter()
            .filter(|d| self.accepts(d.kind))
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Checks a `dataset` sweep value: a registered set of the needed kind; the error lists the allowed names.
pub fn check_dataset(v: &Value, need: DataNeed) -> Result<(), String> {
    let ok = v
        .as_str()
        .and_then(|s| rfx_data::dataset(s).ok())
        .is_some_and(|d| need.accepts(d.kind));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "unknown or unsuitable data set \"{v}\"; allowed: {}",
            need.names()
        ))
    }
}

/// A loaded data set: inputs and either a target or class labels.
#[derive(Debug)]
pub struct Table {
    /// Inputs (raw units).
    pub x: Array2<f64>,
    /// Regression target (empty for classification sets).
    pub y: Vec<f64>,
    /// Class labels (empty for regression sets).
    pub labels: Vec<usize>,
    /// Number of classes (0 for regression sets).
    pub n_classes: usize,
}

/// Data sets loaded once per run and shared by every cell (and thread) that asks for them.
#[derive(Default)]
pub struct DataCache {
    sets: Mutex<HashMap<String, Arc<Table>>>,
}

impl DataCache {
    /// The data set `name`, fetched into the cache directory (`RFX_DATA_DIR`; copied from `RFX_DATA_MIRROR`
    /// when set, else downloaded) and loaded on first use. Errors name the data set.
    pub fn get(&self, name: &str) -> Result<Arc<Table>, CellError> {
        let mut sets = self
            .sets
            .lock()
            .map_err(|_| CellError::Fatal("data cache poisoned".into()))?;
        if let Some(t) = sets.get(name) {
            return Ok(Arc::clone(t));
        }
        let err = |e: rfx_core::RfxError| CellError::Fatal(format!("data set {name}: {e}"));
        rfx_data::fetch_from_env(name).map_err(err)?;
        let loaded = rfx_data::load(name, &rfx_data::cache_dir_from_env()).map_err(err)?;
        let table = match loaded {
            Loaded::Regression(r) => Table {
                x: r.x,
                y: r.y.to_vec(),
                labels: Vec::new(),
                n_classes: 0,
            },
            Loaded::UciSplits(u) => Table {
                x: u.data.x,
                y: u.data.y.to_vec(),
                labels: Vec::new(),
                n_classes: 0,
            },
            Loaded::Classification(c) => Table {
                n_classes: c.n_classes(),
                x: c.x,
                y: Vec::new(),
                labels: c.labels,
            },
            Loaded::TrainTest(_) => {
                return Err(CellError::Fatal(format!(
                    "data set {name}: image sets with a fixed split are not supported by this kind"
                )))
            }
        };
        if table.x.nrows() == 0 || table.x.ncols() == 0 {
            return Err(CellError::Fatal(format!(
                "data set {name}: no rows or no columns"
            )));
        }
        let t = Arc::new(table);
        sets.insert(name.to_string(), Arc::clone(&t));
        Ok(t)
    }
}

/// The methods of the tables.
pub const METHODS: [&str; 6] = [
    "nystrom",
    "rff",
    "fastfood",
    "maclaurin",
    "polysketch",
    "gegenbauer",
];

/// The allowed `method` values, for messages.
pub const METHODS_ALLOWED: &str = "nystrom (recursive ridge-leverage-score Nyström), rff (random Fourier features, paired cos/sin), \
fastfood, maclaurin (Random Maclaurin), polysketch (Taylor series sketched by the PolySketch tree), \
gegenbauer (random Gegenbauer features); rff and fastfood only for the Gaussian kernel";

/// The kernel of a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableKernel {
    /// $e^{-\|x-y\|^2/(2\sigma^2)}$.
    Gaussian {
        /// Bandwidth σ.
        sigma: f64,
    },
    /// The depth-$L$ ReLU NTK $\|x\|\|y\|K^{(L)}(\cos)$.
    ReluNtk {
        /// Depth $L$.
        depth: usize,
    },
}

impl TableKernel {
    /// The exact kernel as a [`Gzk`].
    pub fn gzk(&self) -> rfx_core::Result<Gzk> {
        match *self {
            TableKernel::Gaussian { sigma } => Gzk::gaussian(sigma),
            TableKernel::ReluNtk { depth } => Gzk::relu_ntk(depth),
        }
    }
}

/// Settings of the feature maps.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodSettings {
    /// Feature budget $m$ (the same for every method).
    pub features: usize,
    /// Gegenbauer truncation degree $q$.
    pub degree: usize,
    /// Gegenbauer radial terms $s$ (directions $= \lfloor m/s \rfloor$); 1 on the unit-norm fast path.
    pub radial_terms: usize,
    /// Use the unit-norm fast path (inputs must have norm 1).
    pub unit_norm: bool,
    /// PolySketch Taylor degree $p$ (per-degree sketch size: the largest even number $\le (m-1)/p$).
    pub polysketch_degree: usize,
    /// Random Maclaurin maximum degree.
    pub maclaurin_degree: usize,
}

impl MethodSettings {
    /// A one-line description (part of the runner's settings fingerprint).
    pub fn describe(&self) -> String {
        format!(
            "features={};degree={};radial_terms={};unit_norm={};polysketch_degree={};maclaurin_degree={}",
            self.features,
            self.degree,
            self.radial_terms,
            self.unit_norm,
            self.polysketch_degree,
            self.maclaurin_degree
        )
    }
}

/// A dot-product feature map applied to $\hat x = x/\|x\|$ and scaled by $\|x\|$: features of
/// $\|x\|\|y\|\kappa(\langle\hat x,\hat y\rangle)$, the form of the ReLU NTK (zero rows stay zero).
struct NormScaled<F>(F);

impl<F: FeatureMap> FeatureMap for NormScaled<F> {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> rfx_core::Result<Array2<f64>> {
        let norms: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
        let mut unit = x.to_owned();
        rfx_data::normalize_rows(&mut unit);
        let mut z = self.0.transform(unit.view())?;
        for (mut row, &r) in z.axis_iter_mut(Axis(0)).zip(&norms) {
            row *= r;
        }
        Ok(z)
    }
}

fn ntk_taylor(depth: usize, q: usize) -> Vec<f64> {
    // tiny negative round-off would be rejected by the sketches; the coefficients are >= 0 (Schoenberg)
    rfx_gzk::ntk::relu_ntk_taylor(depth, q)
        .into_iter()
        .map(|c| c.max(0.0))
        .collect()
}

/// Fits method `method` for `kernel` on the training inputs `x_train` with the cell's RNG. Nyström chooses
/// its landmarks among the training rows; the other methods are data-oblivious. Errors that mean "this
/// method does not apply" (RFF/Fastfood for the NTK) are [`CellError::Fatal`] (the sweep should not list
/// them).
pub fn fit_method(
    method: &str,
    kernel: TableKernel,
    s: &MethodSettings,
    x_train: ArrayView2<'_, f64>,
    rng: &mut RfxRng,
) -> Result<Box<dyn FeatureMap>, CellError> {
    let d = x_train.ncols();
    let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("method {method}: {e}"));
    let m = s.features;
    let per_degree = |p: usize| (((m - 1) / p) / 2 * 2).max(2);
    let map: Box<dyn FeatureMap> = match (method, kernel) {
        ("nystrom", k) => {
            let g = k.gzk().map_err(fatal)?;
            Box::new(Nystrom::fit(g, x_train, &NystromParams::new(m), rng).map_err(fatal)?)
        }
        ("rff" | "fastfood", TableKernel::Gaussian { sigma }) => {
            let fm = if method == "rff" {
                FourierMethod::Rff
            } else {
                FourierMethod::Fastfood
            };
            Box::new(
                GaussianFeatureParams::new(fm)
                    .dim(m)
                    .sigma(sigma)
                    .fit(d, rng)
                    .map_err(fatal)?,
            )
        }
        ("maclaurin", TableKernel::Gaussian { sigma }) => Box::new(
            RandomMaclaurin::params()
                .dim(m)
                .gaussian(sigma, s.maclaurin_degree)
                .fit(d, rng)
                .map_err(fatal)?,
        ),
        ("maclaurin", TableKernel::ReluNtk { depth }) => Box::new(NormScaled(
            RandomMaclaurin::params()
                .dim(m)
                .coefficients(ntk_taylor(depth, s.maclaurin_degree))
                .fit(d, rng)
                .map_err(fatal)?,
        )),
        ("polysketch", TableKernel::Gaussian { sigma }) => Box::new(
            PolynomialSketch::params()
                .dim(per_degree(s.polysketch_degree))
                .gaussian(sigma, s.polysketch_degree)
                .fit(d, rng)
                .map_err(fatal)?,
        ),
        ("polysketch", TableKernel::ReluNtk { depth }) => Box::new(NormScaled(
            PolynomialSketch::params()
                .dim(per_degree(s.polysketch_degree))
                .coefficients(ntk_taylor(depth, s.polysketch_degree))
                .fit(d, rng)
                .map_err(fatal)?,
        )),
        ("gegenbauer", k) => {
            let g = k.gzk().map_err(fatal)?;
            let p = if s.unit_norm {
                RandomGegenbauerParams::unit_norm(g, m, s.degree)
            } else {
                let radial = match k {
                    TableKernel::ReluNtk { .. } => 1,
                    TableKernel::Gaussian { .. } => s.radial_terms,
                };
                RandomGegenbauerParams::new(g, m / radial, s.degree, radial)
            };
            Box::new(p.fit(d, rng).map_err(fatal)?)
        }
        (other, k) => {
            return Err(CellError::Fatal(format!(
                "method {other} is not available for the kernel {k:?}; allowed: {METHODS_ALLOWED}"
            )))
        }
    };
    Ok(map)
}

/// The exact kernel as a boxed [`Kernel`] (for exact objectives).
pub fn exact_kernel(kernel: TableKernel) -> rfx_core::Result<Box<dyn Kernel>> {
    Ok(Box::new(kernel.gzk()?))
}
