//! Shared pieces of the table kinds (`krr_table`, `kmeans_table`): registered data sets loaded once per run,
//! and the feature maps compared in the random Gegenbauer features paper's Tables 2–4, built from the method
//! crates (no mathematics here beyond composing them).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ndarray::{Array2, ArrayView2};
use rfx_core::{FeatureMap, Kernel, RfxRng};
use rfx_data::registry::Kind as DataKind;
use rfx_data::{InputMap, Loaded};
use rfx_gzk::zonal::Gzk;

use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Value};
use rfx_harness::kind::CellError;
use rfx_registry::{MethodChoice, RawValue};

/// Which kind of data a table kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataNeed {
    /// Inputs and a real target (`uci/...`, `uci-raw/...`, and the latitude/longitude grids `ferret/...`).
    Regression,
    /// Inputs and class labels (`keel/...`, `sklego/abalone`, `mlbench/shuttle`).
    Classification,
}

impl DataNeed {
    fn accepts(self, kind: DataKind) -> bool {
        match self {
            DataNeed::Regression => matches!(
                kind,
                DataKind::Uci | DataKind::UciRaw { .. } | DataKind::LatLonGrid { .. }
            ),
            DataNeed::Classification => kind.is_classification_table(),
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
    /// Class names, `class_names[labels[i]]` the original label of row `i` (empty for regression sets).
    pub class_names: Vec<String>,
    /// The first two columns are latitude and longitude in degrees (a `ferret/...` grid): the rows are
    /// points of the sphere, not vectors to standardise ([`Table::input_map`]).
    pub lat_lon: bool,
}

impl Table {
    /// The map from this set's raw columns to kernel inputs, fitted on the training rows `x_train`:
    /// latitude/longitude grids go onto the unit sphere with their other columns standardised
    /// ([`InputMap::Sphere`]); every other set is standardised column by column.
    pub fn input_map(&self, x_train: ArrayView2<'_, f64>) -> rfx_core::Result<InputMap> {
        if self.lat_lon {
            InputMap::fit_sphere(x_train)
        } else {
            InputMap::fit_standardize(x_train)
        }
    }
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
        let lat_lon = matches!(
            rfx_data::dataset(name).map_err(err)?.kind,
            DataKind::LatLonGrid { .. }
        );
        let table = match loaded {
            Loaded::Regression(r) => Table {
                x: r.x,
                y: r.y.to_vec(),
                labels: Vec::new(),
                n_classes: 0,
                class_names: Vec::new(),
                lat_lon,
            },
            Loaded::UciSplits(u) => Table {
                x: u.data.x,
                y: u.data.y.to_vec(),
                labels: Vec::new(),
                n_classes: 0,
                class_names: Vec::new(),
                lat_lon,
            },
            Loaded::Classification(c) => Table {
                n_classes: c.n_classes(),
                x: c.x,
                y: Vec::new(),
                labels: c.labels,
                class_names: c.classes,
                lat_lon,
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

/// Checks a `method` sweep value of a table kind: a registry table method, optionally with parameters
/// (`ntk-rf(sampler=gs)`, [`MethodChoice`]).
pub fn check_table_method(v: &Value) -> Result<(), String> {
    let s = v.as_str().ok_or_else(|| format!("{v} is not a string"))?;
    Ok(MethodChoice::parse(s)?.check_table_method().map(|_| ())?)
}

/// The allowed `method` values, for messages (built from the registry).
pub static METHODS_ALLOWED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    rfx_registry::methods()
        .iter()
        .filter(|m| m.table)
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
        + " (see rfx methods), optionally with parameters: ntk-rf(sampler=gs, sketch=tensorsrht); \
           rff and fastfood only for the Gaussian kernel, ntk-rf and ntk-sketch only for the ReLU NTK"
});

/// `METHODS_ALLOWED` as a `&'static str` (for [`rfx_harness::ParamSpec::allowed`]).
pub fn methods_allowed() -> &'static str {
    std::sync::LazyLock::force(&METHODS_ALLOWED).as_str()
}

/// The kernel of a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableKernel {
    /// $e^{-\Vert x-y\Vert^2/(2\sigma^2)}$.
    Gaussian {
        /// Bandwidth σ.
        sigma: f64,
    },
    /// The depth-$L$ ReLU NTK $\Vert x\Vert\Vert y\Vert K^{(L)}(\cos)$.
    ReluNtk {
        /// Depth $L$.
        depth: usize,
    },
}

impl TableKernel {
    /// `gaussian` or `relu-ntk` (the registry's kernel names).
    pub fn name(&self) -> &'static str {
        match self {
            TableKernel::Gaussian { .. } => "gaussian",
            TableKernel::ReluNtk { .. } => "relu-ntk",
        }
    }

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

impl MethodSettings {
    /// Checks the ranges of the method settings (keys `features`, `degree`, `radial_terms`,
    /// `polysketch_degree`, `maclaurin_degree`), as a kind's `Settings::check` reports them.
    pub fn check(&self) -> Result<(), Invalid> {
        int_in("features", self.features as i128, 16, 1 << 16)?;
        int_in(
            "degree",
            self.degree as i128,
            0,
            rfx_gzk::MAX_DEGREE as i128,
        )?;
        int_in("radial_terms", self.radial_terms as i128, 1, 64)?;
        int_in("polysketch_degree", self.polysketch_degree as i128, 1, 32)?;
        int_in("maclaurin_degree", self.maclaurin_degree as i128, 1, 60)?;
        if self.radial_terms > self.features {
            return Err(Invalid {
                key: "radial_terms",
                message: "must not exceed `features`".into(),
            });
        }
        Ok(())
    }
}

/// The λ grid of the keys `lambda_log10_min`, `lambda_log10_max` (each in $[-30, 30]$, in order) and
/// `lambda_count` (1 to 200): that many points evenly spaced in $\log_{10}$, checked.
pub fn lambda_grid(min: f64, max: f64, count: usize) -> Result<Vec<f64>, Invalid> {
    float_in("lambda_log10_min", min, -30.0, 30.0)?;
    float_in("lambda_log10_max", max, -30.0, 30.0)?;
    int_in("lambda_count", count as i128, 1, 200)?;
    if max < min {
        return Err(Invalid {
            key: "lambda_log10_max",
            message: "must be >= lambda_log10_min".into(),
        });
    }
    rfx_solvers::ridge::log10_grid(min, max, count).map_err(|e| Invalid {
        key: "lambda_count",
        message: e.to_string(),
    })
}

/// A value derived from settings that `Settings::check` already accepted (the defaults are valid too), as
/// a configuration error of `kind`'s section should it fail all the same.
pub fn derived<T>(kind: &str, value: Result<T, Invalid>) -> Result<T, ConfigError> {
    value.map_err(|e| ConfigError {
        file: String::new(),
        line: None,
        key: format!("{kind}.{}", e.key),
        message: e.message,
    })
}

/// The kernel of table method `choice`: its `kernel` parameter if written, else the one kernel the method
/// approximates (RFF: Gaussian; NTK random features: ReLU NTK), else the table's default (`kernels[0]`).
/// `kernels` are the kernels the table configured (with their bandwidth and depth); `exact` takes both.
pub fn method_kernel(
    choice: &MethodChoice,
    kernels: &[TableKernel],
) -> Result<TableKernel, CellError> {
    let own: &[&str] = match rfx_registry::method(&choice.name) {
        Ok(spec) => rfx_registry::table_kernels(spec),
        Err(_) => &["gaussian", "relu-ntk"],
    };
    let name = match choice.param("kernel") {
        Some(k) => k,
        None if own.len() == 1 => own[0],
        None => kernels.first().map(TableKernel::name).unwrap_or("gaussian"),
    };
    if !own.contains(&name) {
        return Err(CellError::Fatal(format!(
            "method {} does not approximate the kernel {name}",
            choice.name
        )));
    }
    kernels
        .iter()
        .find(|k| k.name() == name)
        .copied()
        .ok_or_else(|| {
            CellError::Fatal(format!(
                "method {} needs the kernel {name}, which this table does not configure",
                choice.name
            ))
        })
}

/// Fits method `choice` for `kernel` on the training inputs `x_train` with the cell's RNG, through the method
/// registry ([`rfx_registry::build_method`]): the table's settings (kernel, the degree of Gegenbauer,
/// Maclaurin and PolySketch, radial terms) first, then the parameters written in the method value, which
/// override them. Nyström chooses its landmarks among the training rows; the other methods are
/// data-oblivious.
pub fn fit_method(
    choice: &MethodChoice,
    kernel: TableKernel,
    s: &MethodSettings,
    x_train: ArrayView2<'_, f64>,
    rng: &mut RfxRng,
) -> Result<Box<dyn FeatureMap>, CellError> {
    let mut given: Vec<(&str, RawValue)> = match kernel {
        TableKernel::Gaussian { sigma } => {
            vec![("kernel", "gaussian".into()), ("sigma", sigma.into())]
        }
        TableKernel::ReluNtk { depth } => {
            vec![("kernel", "relu-ntk".into()), ("depth", depth.into())]
        }
    };
    let degree = match choice.name.as_str() {
        "maclaurin" => Some(s.maclaurin_degree),
        "polysketch" => Some(s.polysketch_degree),
        "gegenbauer" => Some(s.degree),
        _ => None,
    };
    if let Some(q) = degree {
        given.push(("degree", q.into()));
    }
    given.push(("radial_terms", s.radial_terms.into()));
    given.push(("unit_norm", s.unit_norm.into()));
    for (k, v) in &choice.params {
        if k != "kernel" {
            given.retain(|(g, _)| g != k);
            given.push((k.as_str(), v.as_str().into()));
        }
    }
    rfx_registry::build_method(&choice.name, s.features, &given, x_train, rng)
        .map_err(|e| CellError::Fatal(e.to_string()))
}

/// The exact kernel as a boxed [`Kernel`] (for exact objectives).
pub fn exact_kernel(kernel: TableKernel) -> rfx_core::Result<Box<dyn Kernel>> {
    Ok(Box::new(kernel.gzk()?))
}
