//! `ntk_mse`: mean squared error of the entries of an approximate NTK Gram matrix against the exact one,
//! versus the feature dimension (NTK random features paper, Han et al. 2021, Fig. 2).
//!
//! Per run, a fixed subsample of `n` rows of `dataset` (MNIST training images by default), each row scaled to
//! unit norm, and per depth $L$ the exact Gram $\Theta^{(L)}$ of the depth-$L$ ReLU NTK (normalised so that
//! $\Theta^{(L)}(x, x) = L + 1$ on the sphere) are computed once and shared. One cell = (depth $L$, method,
//! size exponent $k$, seed); it reports the feature dimension `dim` and
//! $$\mathrm{MSE} = \frac1{n^2}\sum_{i,j}\big(\hat K_{ij} - \Theta^{(L)}_{ij}\big)^2,\qquad
//!   \mathtt{rel\\_mse} = \Vert\hat K - \Theta^{(L)}\Vert_F^2 / \Vert\Theta^{(L)}\Vert_F^2 .$$
//! The mean over pairs of a random subsample is an unbiased estimate of the mean over pairs of a larger
//! sample (e.g. the paper's $n = 10{,}000$), so `n` trades precision for time, not bias.
//!
//! The size exponent $k$ maps to each method's size as in the paper:
//! * `grad-rf`: empirical NTK of a random ReLU network of width $w = 2^k$ ([`rfx_ntk::GradRf`]),
//!   `dim` $= dw + (L-1)w^2 + w$ (the number of parameters);
//! * `naive-rf`: Bietti–Mairal map with random features, $m_0 = m_1 = 2^k$ ([`rfx_ntk::NaiveRf`], Gram by
//!   the kernel-level recursion), `dim` $= D_L$;
//! * `ntk-rf` (Algorithm 1, TensorSketch) and `ntk-rf-srht` (TensorSRHT with leverage-score features, Zandieh
//!   et al.): total dimension $m = 10\cdot 2^k$, $m_{cs} = j m/10$ and $m_0 = m_1 = m - m_{cs}$; the MSE is
//!   averaged over the fractions $j \in$ `mcs_tenths` (the paper: $j = 1, \dots, 9$), `dim` $= m$;
//! * `ntk-sketch` (NTKSketch, degree-`sketch_degree` polynomial): $m = 10\cdot 2^k$, `dim` $= m - 1$.
//!
//! Cells with $k$ outside a method's range (`grad_rf_k_*`, `naive_rf_k_*`, `ntk_k_*`) or an estimated cost
//! above `max_gflop` are skipped (recorded as "(-)", as the paper omits configurations that overflow memory).
//! Feature Grams are compared with the exact one tile by tile in row panels ([`rfx_ntk::feature_gram_error`])
//! within `memory_budget_mb`, without an $n \times n$ approximate Gram.

use std::sync::Arc;

use ndarray::Array2;
use rfx_core::{FeatureMap, FitData, RfxRng};
use rfx_kernels::ReluNtk;
use rfx_ntk::{feature_gram_error, kernel_gram_error, GradRf, NaiveRf};
use rfx_registry::{MethodSpec, Params, RawValue};

use crate::kinds::ntk_common::{check_any_dataset, load_rows, Prep, Shared};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{
    check_choice, check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner,
};

/// The kind.
pub struct NtkMse;

const METHODS: [&str; 5] = ["grad-rf", "naive-rf", "ntk-rf", "ntk-rf-srht", "ntk-sketch"];
const METHODS_ALLOWED: &str =
    "grad-rf (width 2^k), naive-rf (m0 = m1 = 2^k), ntk-rf (Algorithm 1, m = 10*2^k), \
ntk-rf-srht (TensorSRHT + GS, m = 10*2^k), ntk-sketch (NTKSketch, m = 10*2^k)";

#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    min: i64,
    max: i64,
}

/// `[ntk_mse]`: the data set and its subsample size, each method's range of size exponents $k$, the sketch
/// fractions $j$ of `ntk-rf`, the NTKSketch degree, the cost cap and the memory budget of the tiled Gram
/// comparison.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
struct Settings {
    dataset: String,
    n: usize,
    grad_rf_k_min: i64,
    grad_rf_k_max: i64,
    naive_rf_k_min: i64,
    naive_rf_k_max: i64,
    ntk_k_min: i64,
    ntk_k_max: i64,
    mcs_tenths: Vec<usize>,
    sketch_degree: usize,
    max_gflop: f64,
    memory_budget_mb: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dataset: "mnist".into(),
            n: 2000,
            grad_rf_k_min: 1,
            grad_rf_k_max: 7,
            naive_rf_k_min: 1,
            naive_rf_k_max: 7,
            ntk_k_min: 4,
            ntk_k_max: 16,
            mcs_tenths: (1..=9).collect(),
            sketch_degree: 4,
            max_gflop: 200.0,
            memory_budget_mb: 2048,
        }
    }
}

const K_RANGE: &str = "integers from 0 to 20";

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("dataset", "a registered data set"),
        ("n", "integers from 2 to 60000"),
        ("grad_rf_k_min", K_RANGE),
        ("grad_rf_k_max", K_RANGE),
        ("naive_rf_k_min", K_RANGE),
        ("naive_rf_k_max", K_RANGE),
        ("ntk_k_min", "integers from 1 to 20"),
        ("ntk_k_max", K_RANGE),
        (
            "mcs_tenths",
            "distinct integers from 1 to 9 (m_cs = j*m/10)",
        ),
        ("sketch_degree", "integers from 1 to 32"),
        ("max_gflop", "numbers from 0.001 to 1000000000"),
        ("memory_budget_mb", "integers from 16 to 1048576"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        check_any_dataset(&Value::Str(self.dataset.clone())).map_err(|message| Invalid {
            key: "dataset",
            message,
        })?;
        int_in("n", self.n as i128, 2, 60_000)?;
        for (key_min, min, key_max, max) in [
            (
                "grad_rf_k_min",
                self.grad_rf_k_min,
                "grad_rf_k_max",
                self.grad_rf_k_max,
            ),
            (
                "naive_rf_k_min",
                self.naive_rf_k_min,
                "naive_rf_k_max",
                self.naive_rf_k_max,
            ),
            ("ntk_k_min", self.ntk_k_min, "ntk_k_max", self.ntk_k_max),
        ] {
            int_in(key_min, min.into(), 0, 20)?;
            int_in(key_max, max.into(), 0, 20)?;
            if max < min {
                return Err(Invalid {
                    key: key_max,
                    message: format!("must be >= {key_min}"),
                });
            }
        }
        if self.ntk_k_min < 1 {
            return Err(Invalid {
                key: "ntk_k_min",
                message:
                    "must be >= 1 (the TensorSRHT needs an even sketch dimension m_cs = j*2^k)"
                        .into(),
            });
        }
        let t = &self.mcs_tenths;
        if t.is_empty() {
            return Err(Invalid {
                key: "mcs_tenths",
                message: "give at least one value from 1 to 9".into(),
            });
        }
        for (i, &j) in t.iter().enumerate() {
            if !(1..=9).contains(&j) || t[..i].contains(&j) {
                return Err(Invalid {
                    key: "mcs_tenths",
                    message: format!(
                        "invalid value {j}; allowed: distinct integers from 1 to 9 (m_cs = j*m/10)"
                    ),
                });
            }
        }
        int_in(
            "sketch_degree",
            self.sketch_degree as i128,
            1,
            rfx_ntk::MAX_POLY_DEGREE as i128,
        )?;
        float_in("max_gflop", self.max_gflop, 1e-3, 1e9)?;
        int_in(
            "memory_budget_mb",
            self.memory_budget_mb.into(),
            16,
            1 << 20,
        )
    }
}

struct MseRunner {
    s: Settings,
    grad: Range,
    naive: Range,
    ntk: Range,
    x: Shared<Array2<f64>>,
    exact: Shared<Array2<f64>>,
}

impl Kind for NtkMse {
    fn name(&self) -> &'static str {
        "ntk_mse"
    }
    fn about(&self) -> &'static str {
        "MSE of approximate NTK Gram entries vs feature dimension: Grad-RF, Naive-RF, NTK-RF, NTKRF (SRHT), NTKSketch (NTK-RF paper, Fig. 2)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "depth",
                allowed: "NTK depth L, integers from 1 to 8",
                check: |v| check_int(v, 1, 8),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: METHODS_ALLOWED,
                check: |v| check_choice(v, &METHODS),
                required: true,
            },
            ParamSpec {
                name: "k",
                allowed: "size exponent, integers from 0 to 20 (mapped per method)",
                check: |v| check_int(v, 0, 20),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        let range = |min, max| Range { min, max };
        Ok(Box::new(MseRunner {
            grad: range(s.grad_rf_k_min, s.grad_rf_k_max),
            naive: range(s.naive_rf_k_min, s.naive_rf_k_max),
            ntk: range(s.ntk_k_min, s.ntk_k_max),
            s,
            x: Shared::default(),
            exact: Shared::default(),
        }))
    }
}

impl MseRunner {
    /// [`errors`] of a fitted map's feature Gram without forming it ([`feature_gram_error`]).
    fn feature_errors<M: rfx_core::FeatureMap + ?Sized>(
        &self,
        map: &M,
        x: &Array2<f64>,
        exact: &Array2<f64>,
    ) -> Result<(f64, f64), rfx_core::RfxError> {
        let (err, norm) =
            feature_gram_error(map, x.view(), exact.view(), self.s.memory_budget_mb << 20)?;
        Ok((err / exact.len() as f64, err / norm))
    }

    fn range(&self, method: &str) -> Range {
        match method {
            "grad-rf" => self.grad,
            "naive-rf" => self.naive,
            _ => self.ntk,
        }
    }

    /// A rough flop count of a cell (feature construction plus the $n \times n$ Gram), for `max_gflop`.
    fn flops(&self, method: &str, depth: usize, k: u32, d: usize) -> f64 {
        let (n, d, l) = (self.s.n as f64, d as f64, depth as f64);
        let size = 2f64.powi(k as i32);
        match method {
            "grad-rf" => {
                let w = size;
                n * 4.0 * (d * w + (l - 1.0) * w * w) + n * n * (d + 2.0 * l * w)
            }
            "naive-rf" => {
                let m = size;
                n * 2.0 * l * (d + m) * 2.0 * m + n * n * (d + 2.0 * l * m)
            }
            "ntk-sketch" => {
                let m = 10.0 * size;
                let q = self.s.sketch_degree as f64;
                n * (2.0 * d * m + 10.0 * q * m * m.log2()) + n * n * m
            }
            _ => {
                let m = 10.0 * size;
                self.s
                    .mcs_tenths
                    .iter()
                    .map(|&j| {
                        let mcs = m * j as f64 / 10.0;
                        let m1 = m - mcs;
                        let feat = 2.0 * d * 2.0 * m1
                            + (l - 1.0) * 2.0 * m1 * 2.0 * m1
                            + l * 20.0 * (mcs + m1) * (mcs.max(2.0)).log2();
                        let gibbs = if method == "ntk-rf-srht" {
                            // Gibbs sampling, d_in * m1 conditional draws per layer; one draw costs about
                            // as much as 6000 flops of BLAS work (measured: 3.5x the time of ntk-rf at
                            // L = 2, m = 1280, n = 500)
                            6000.0 * (d * m1 + (l - 1.0) * m1 * m1) / n
                        } else {
                            0.0
                        };
                        n * (feat + gibbs) + n * n * m
                    })
                    .sum::<f64>()
            }
        }
    }

    /// The mean squared and relative errors of the feature Gram of one registry map (`grad-rf` and
    /// `naive-rf` by their kernel-level recursions, [`FeatureMap::feature_gram`]; the others tile by tile).
    fn map_errors(
        &self,
        map: &dyn FeatureMap,
        method: &str,
        x: &Array2<f64>,
        exact: &Array2<f64>,
    ) -> Result<(f64, f64), rfx_core::RfxError> {
        if matches!(method, "grad-rf" | "naive-rf") {
            let (err, norm) = kernel_gram_error(map, x.view(), exact.view())?;
            Ok((err / exact.len() as f64, err / norm))
        } else {
            self.feature_errors(map, x, exact)
        }
    }

    fn gram_of(
        &self,
        method: &str,
        depth: usize,
        k: u32,
        x: &Array2<f64>,
        exact: &Array2<f64>,
        rng: &mut RfxRng,
    ) -> Result<(f64, f64, f64), rfx_core::RfxError> {
        let d = x.ncols();
        let bad = |e: String| rfx_core::RfxError::invalid("method", method, e);
        // one registry map per sketch fraction j of `ntk-rf`/`ntk-rf-srht` (MSE averaged), else one
        let tenths: Vec<Option<usize>> = if method.starts_with("ntk-rf") {
            self.s.mcs_tenths.iter().map(|&j| Some(j)).collect()
        } else {
            vec![None]
        };
        let (mut dim, mut mse, mut rel) = (0.0, 0.0, 0.0);
        for &j in &tenths {
            let (spec, params, m) =
                registry_choice(method, depth, k, d, j, self.s.sketch_degree).map_err(bad)?;
            let map = spec.fit(m, &params, FitData::Dim(d), rng)?;
            let (a, b) = self.map_errors(map.as_ref(), method, x, exact)?;
            dim = map.dim() as f64;
            mse += a;
            rel += b;
        }
        let c = tenths.len() as f64;
        Ok((dim, mse / c, rel / c))
    }
}

/// The registry method, parameters and budget $m$ of a cell (module docs): `grad-rf` width $2^k$ (its
/// parameter count as the budget, of which $2^k$ is the widest network), `naive-rf` $m_0 = m_1 = 2^k$ (its
/// $D_L$ as the budget), `ntk-rf` $m = 10\cdot 2^k$ with the sketch share $j/10$ (`ntk-rf-srht`: TensorSRHT
/// and leverage-score sampling), `ntk-sketch` $m = 10\cdot 2^k$.
fn registry_choice(
    method: &str,
    depth: usize,
    k: u32,
    d: usize,
    tenths: Option<usize>,
    sketch_degree: usize,
) -> Result<(&'static MethodSpec, Params, usize), String> {
    let size = 1usize << k;
    let depth_value = ("depth", RawValue::from(depth as i64));
    let (name, m, mut given) = match method {
        "grad-rf" => (
            "grad-rf",
            GradRf::params().depth(depth).width(size).output_dim(d),
            vec![],
        ),
        "naive-rf" => {
            let dim = NaiveRf::params()
                .depth(depth)
                .m0(size)
                .m1(size)
                .output_dim(d)
                .map_err(|e| e.to_string())?;
            let m = usize::try_from(dim).map_err(|_| format!("D_L = {dim} above usize"))?;
            ("naive-rf", m, vec![])
        }
        "ntk-sketch" => (
            "ntk-sketch",
            10 * size,
            vec![("degree", RawValue::from(sketch_degree as i64))],
        ),
        _ => {
            let j = tenths.ok_or("ntk-rf needs the sketch fraction j")?;
            let mut given = vec![("sketch_share", RawValue::from(j as f64 / 10.0))];
            if method == "ntk-rf-srht" {
                given.push(("sketch", RawValue::from("tensorsrht")));
                given.push(("sampler", RawValue::from("gs")));
            }
            ("ntk-rf", 10 * size, given)
        }
    };
    given.push(depth_value);
    let spec = rfx_registry::method(name)?;
    let params = spec.params_from(&given)?;
    Ok((spec, params, m))
}

impl Runner for MseRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["dim".into(), "mse".into(), "rel_mse".into()]
    }
    fn settings(&self) -> String {
        format!(
            "dataset={};n={};grad={:?};naive={:?};ntk={:?};mcs_tenths={:?};sketch_degree={};max_gflop={};prep=unit",
            self.s.dataset,
            self.s.n,
            self.grad,
            self.naive,
            self.ntk,
            self.s.mcs_tenths,
            self.s.sketch_degree,
            self.s.max_gflop
        )
    }
    fn cost(&self, cell: &Cell) -> f64 {
        // The flop model of `max_gflop` (data width not known before loading: 10, a minor term).
        match (cell.str("method"), cell.int("depth"), cell.int("k")) {
            (Ok(m), Ok(l), Ok(k)) => self.flops(m, l as usize, k as u32, 10) / 1e9,
            _ => 1.0,
        }
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        // The exact NTK Gram of the cell's depth.
        Some(format!("depth={}", cell.int("depth").ok()?))
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let depth = cell.int("depth")? as usize;
        let method = cell.str("method")?;
        let k = cell.int("k")?;
        let range = self.range(method);
        if k < range.min || k > range.max {
            return Err(CellError::Skipped(format!(
                "k = {k} outside the range {}..={} of {method}",
                range.min, range.max
            )));
        }
        let x: Arc<Array2<f64>> = self.x.get("x", || {
            load_rows(&self.s.dataset, self.s.n, cell.experiment_seed, Prep::Unit)
        })?;
        let gflop = self.flops(method, depth, k as u32, x.ncols()) / 1e9;
        if gflop > self.s.max_gflop {
            return Err(CellError::Skipped(format!(
                "estimated {gflop:.0} GFLOP above max_gflop = {}",
                self.s.max_gflop
            )));
        }
        let exact = self.exact.get(&format!("depth={depth}"), || {
            ReluNtk::new(depth)
                .and_then(|k| k.gram_sym(x.view()))
                .map_err(|e| CellError::Fatal(format!("exact NTK, depth {depth}: {e}")))
        })?;
        let (dim, mse, rel) = self
            .gram_of(method, depth, k as u32, &x, &exact, rng)
            .map_err(|e| CellError::Fatal(format!("{}: {e}", cell.key())))?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![dim, mse, rel],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_check_ranges_and_fractions() {
        use rfx_harness::config::Settings as _;
        let ok = Settings::default();
        assert!(ok.check().is_ok());
        assert!(Settings::KEYS
            .iter()
            .any(|(k, a)| *k == "sketch_degree"
                && a.ends_with(&rfx_ntk::MAX_POLY_DEGREE.to_string())));
        let bad = |f: fn(&mut Settings)| {
            let mut s = Settings::default();
            f(&mut s);
            s.check().unwrap_err()
        };
        assert_eq!(bad(|s| s.ntk_k_max = 3).key, "ntk_k_max");
        assert_eq!(bad(|s| s.ntk_k_min = 0).key, "ntk_k_min");
        assert_eq!(bad(|s| s.mcs_tenths = vec![1, 1]).key, "mcs_tenths");
        assert_eq!(bad(|s| s.mcs_tenths = vec![]).key, "mcs_tenths");
        assert_eq!(bad(|s| s.dataset = "nope".into()).key, "dataset");
    }
}
