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

use super::tabular::{
    check_dataset, check_table_method, exact_kernel, fit_method, method_kernel, methods_allowed,
    DataCache, DataNeed, MethodSettings, TableKernel,
};
use rfx_harness::config::{ConfigError, Section};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_registry::MethodChoice;

/// The kind.
pub struct KmeansTable;

struct KmeansRunner {
    sigma: f64,
    methods: MethodSettings,
    restarts: usize,
    max_iter: u64,
    max_rows: usize,
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
        let mut r = KmeansRunner {
            sigma: std::f64::consts::FRAC_1_SQRT_2,
            methods: MethodSettings {
                features: 512,
                degree: 15,
                radial_terms: 1,
                unit_norm: true,
                polysketch_degree: 8,
                maclaurin_degree: 20,
            },
            restarts: 10,
            max_iter: 300,
            max_rows: 0,
            data: DataCache::default(),
        };
        if let Some(s) = section {
            if let Some(v) = s.opt_float("sigma", 1e-3, 1e3)? {
                r.sigma = v;
            }
            let m = &mut r.methods;
            if let Some(v) = s.opt_int("features", 16, 1 << 16)? {
                m.features = v as usize;
            }
            if let Some(v) = s.opt_int("degree", 0, rfx_gzk::MAX_DEGREE as i64)? {
                m.degree = v as usize;
            }
            if let Some(v) = s.opt_int("polysketch_degree", 1, 32)? {
                m.polysketch_degree = v as usize;
            }
            if let Some(v) = s.opt_int("maclaurin_degree", 1, 60)? {
                m.maclaurin_degree = v as usize;
            }
            if let Some(v) = s.opt_int("restarts", 1, 1000)? {
                r.restarts = v as usize;
            }
            if let Some(v) = s.opt_int("max_iter", 1, 100_000)? {
                r.max_iter = v as u64;
            }
            if let Some(v) = s.opt_int("max_rows", 0, i64::from(u32::MAX))? {
                r.max_rows = v as usize;
            }
        }
        Ok(Box::new(r))
    }
}

impl Runner for KmeansRunner {
    fn metrics(&self) -> Vec<String> {
        ["objective", "exact_objective", "feature_s", "kmeans_s", "k"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn settings(&self) -> String {
        format!(
            "sigma={};{};restarts={};max_iter={};max_rows={}",
            self.sigma,
            self.methods.describe(),
            self.restarts,
            self.max_iter,
            self.max_rows
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
        let mut x = if self.max_rows > 0 && n_all > self.max_rows {
            let rows = subsample(
                n_all,
                self.max_rows,
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
        let choice = MethodChoice::parse(method).map_err(CellError::Fatal)?;
        let kernel = method_kernel(&choice, &[TableKernel::Gaussian { sigma: self.sigma }])?;

        let t0 = Instant::now();
        let map = fit_method(&choice, kernel, &self.methods, x.view(), rng)?;
        let z = map.transform(x.view()).map_err(fatal)?;
        let feature_s = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let mut p = KMeansParams::new(table.n_classes, rng.gen::<u64>());
        p.n_runs = self.restarts;
        p.max_iter = self.max_iter;
        let res = kmeans(z.view(), &p).map_err(fatal)?;
        let kmeans_s = t1.elapsed().as_secs_f64();

        let exact = exact_kernel(kernel).map_err(fatal)?;
        let exact_objective =
            kernel_kmeans_objective_of(exact.as_ref(), x.view(), &res.labels).map_err(fatal)?;
        Ok(CellOutput {
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
