//! `kmeans_table`: kernel k-means with the Gaussian kernel through m random features per method — the random
//! Gegenbauer features paper's Table 3.
//!
//! One cell = (data set, method, seed): inputs standardised per feature (as the Fernández-Delgado collection
//! the paper draws from does) and then scaled to unit norm (as the paper does), the feature map fitted with
//! the cell's RNG, k-means (k-means++ seeding, Lloyd, restarts; k = number of classes) on the feature rows.
//! Metrics: `objective`, the mean squared distance of the feature rows to their nearest centre (the paper's
//! "average summation of squared distance to the nearest cluster centers"), and `exact_objective`, the exact
//! Gaussian-kernel k-means objective of the same partition divided by n (fair across methods: it does not
//! depend on how well a method's features approximate the kernel). Timings: `feature_s`, `kmeans_s`.

use std::time::Instant;

use ndarray::Axis;
use rand::Rng;
use rfx_core::RfxRng;
use rfx_data::{normalize_rows, subsample, Standardizer};
use rfx_solvers::kmeans::{kernel_kmeans_objective_of, kmeans, KMeansParams};

use crate::kinds::tabular::{
    check_dataset, check_table_method, exact_kernel, fit_method, method_kernel, methods_allowed,
    DataCache, DataNeed, MethodSettings, TableKernel,
};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::MethodChoice;

/// The kind.
pub struct KmeansTable;

/// `[kmeans_table]`: the Gaussian bandwidth, the methods' settings (the Gegenbauer map on its unit-norm fast
/// path, one radial term) and k-means' restarts, iterations and row cap (0: all rows).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    sigma: f64,
    features: usize,
    degree: usize,
    polysketch_degree: usize,
    maclaurin_degree: usize,
    restarts: usize,
    max_iter: u64,
    max_rows: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sigma: std::f64::consts::FRAC_1_SQRT_2,
            features: 512,
            degree: 15,
            polysketch_degree: 8,
            maclaurin_degree: 20,
            restarts: 10,
            max_iter: 300,
            max_rows: 0,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("sigma", "numbers from 0.001 to 1000"),
        ("features", "integers from 16 to 65536"),
        ("degree", DEGREES),
        ("polysketch_degree", "integers from 1 to 32"),
        ("maclaurin_degree", "integers from 1 to 60"),
        ("restarts", "integers from 1 to 1000"),
        ("max_iter", "integers from 1 to 100000"),
        ("max_rows", "integers from 0 to 4294967295"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        float_in("sigma", self.sigma, 1e-3, 1e3)?;
        self.methods().check()?;
        int_in("restarts", self.restarts as i128, 1, 1000)?;
        int_in("max_iter", self.max_iter as i128, 1, 100_000)?;
        int_in("max_rows", self.max_rows as i128, 0, i128::from(u32::MAX))
    }
}

/// The allowed Gegenbauer degrees, for messages: 0 to `rfx_gzk::MAX_DEGREE` (a test checks the number).
const DEGREES: &str = "integers from 0 to 60";

impl Settings {
    /// The feature maps' settings (unit-norm Gegenbauer fast path, one radial term).
    fn methods(&self) -> MethodSettings {
        MethodSettings {
            features: self.features,
            degree: self.degree,
            radial_terms: 1,
            unit_norm: true,
            polysketch_degree: self.polysketch_degree,
            maclaurin_degree: self.maclaurin_degree,
        }
    }
}

struct KmeansRunner {
    s: Settings,
    methods: MethodSettings,
    data: DataCache,
}

impl Kind for KmeansTable {
    fn name(&self) -> &'static str {
        "kmeans_table"
    }
    fn about(&self) -> &'static str {
        "kernel k-means (Gaussian kernel, unit-norm inputs) through m features per method: feature-space and exact objectives (Gegenbauer paper, Table 3)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "dataset",
                allowed: "a registered classification set (keel/<set>)",
                check: |v| check_dataset(v, DataNeed::Classification),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: methods_allowed(),
                check: check_table_method,
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        let r = KmeansRunner {
            methods: s.methods(),
            s,
            data: DataCache::default(),
        };
        Ok(Box::new(r))
    }
}

impl Runner for KmeansRunner {
    fn cell_tolerance(&self, cell: &Cell, metric: &str) -> rfx_harness::kind::Tolerance {
        let t = self.tolerance(metric);
        match cell.str("method") {
            Ok(method) => crate::kinds::method_tolerance(t, method),
            Err(_) => t,
        }
    }
    fn metrics(&self) -> Vec<String> {
        ["objective", "exact_objective", "feature_s", "kmeans_s", "k"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn settings(&self) -> String {
        format!(
            "sigma={};{};restarts={};max_iter={};max_rows={}",
            self.s.sigma,
            self.methods.describe(),
            self.s.restarts,
            self.s.max_iter,
            self.s.max_rows
        )
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let name = cell.str("dataset")?;
        let method = cell.str("method")?;
        let seed = cell.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let table = self.data.get(name)?;
        let fatal = |e: rfx_core::RfxError| CellError::Fatal(format!("{}: {e}", cell.key()));
        if table.n_classes < 1 {
            return Err(CellError::Fatal(format!("data set {name}: no classes")));
        }
        let n_all = table.x.nrows();
        let mut x = if self.s.max_rows > 0 && n_all > self.s.max_rows {
            let rows = subsample(
                n_all,
                self.s.max_rows,
                cell.experiment_seed,
                &format!("rows;dataset={name};seed={seed}"),
            )
            .map_err(fatal)?;
            table.x.select(Axis(0), &rows)
        } else {
            table.x.clone()
        };
        let st = Standardizer::fit(x.view()).map_err(fatal)?;
        x = st.transform(x.view()).map_err(fatal)?;
        normalize_rows(&mut x);
        let choice = MethodChoice::parse(method).map_err(|e| CellError::Fatal(e.to_string()))?;
        let kernel = method_kernel(
            &choice,
            &[TableKernel::Gaussian {
                sigma: self.s.sigma,
            }],
        )?;

        let t0 = Instant::now();
        let map = fit_method(&choice, kernel, &self.methods, x.view(), rng)?;
        let z = map.transform(x.view()).map_err(fatal)?;
        let feature_s = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let mut p = KMeansParams::new(table.n_classes, rng.gen::<u64>());
        p.n_runs = self.s.restarts;
        p.max_iter = self.s.max_iter;
        let res = kmeans(z.view(), &p).map_err(fatal)?;
        let kmeans_s = t1.elapsed().as_secs_f64();

        let exact = exact_kernel(kernel).map_err(fatal)?;
        let exact_objective =
            kernel_kmeans_objective_of(exact.as_ref(), x.view(), &res.labels).map_err(fatal)?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                res.objective,
                exact_objective,
                feature_s,
                kmeans_s,
                table.n_classes as f64,
            ],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degree_message_names_the_gegenbauer_maximum() {
        assert!(DEGREES.ends_with(&format!(" {}", rfx_gzk::MAX_DEGREE)));
        let mut s = Settings::default();
        assert!(rfx_harness::config::Settings::check(&s).is_ok());
        s.degree = rfx_gzk::MAX_DEGREE + 1;
        let e = rfx_harness::config::Settings::check(&s).unwrap_err();
        assert_eq!(e.key, "degree");
    }
}
