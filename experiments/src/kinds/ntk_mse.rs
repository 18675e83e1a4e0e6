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

use ndarray::{Array2, Zip};
use rfx_core::{FeatureMap, FitData, RfxRng};
use rfx_kernels::ReluNtk;
use rfx_ntk::{feature_gram_error, GradRf, NaiveRf};
use rfx_registry::{MethodSpec, Params, RawValue};

use super::ntk_common::{check_any_dataset, load_rows, Prep, Shared};
use rfx_harness::config::{ConfigError, Section, Value};
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

struct MseRunner {
    dataset: String,
    n: usize,
    grad: Range,
    naive: Range,
    ntk: Range,
    mcs_tenths: Vec<usize>,
    sketch_degree: usize,
    max_gflop: f64,
    memory_budget: u64,
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
        let mut r = MseRunner {
            dataset: "mnist".into(),
            n: 2000,
            grad: Range { min: 1, max: 7 },
            naive: Range { min: 1, max: 7 },
            ntk: Range { min: 4, max: 16 },
            mcs_tenths: (1..=9).collect(),
            sketch_degree: 4,
            max_gflop: 200.0,
            memory_budget: 2048 << 20,
            x: Shared::default(),
            exact: Shared::default(),
        };
        let Some(s) = section else {
            return Ok(Box::new(r));
        };
        if let Some(v) = s.opt_str("dataset")? {
            if let Err(m) = check_any_dataset(&Value::Str(v.clone())) {
                return Err(s.error("dataset", m));
            }
            r.dataset = v;
        }
        if let Some(v) = s.opt_int("n", 2, 60_000)? {
            r.n = v as usize;
        }
        for (key_min, key_max, range) in [
            ("grad_rf_k_min", "grad_rf_k_max", &mut r.grad),
            ("naive_rf_k_min", "naive_rf_k_max", &mut r.naive),
            ("ntk_k_min", "ntk_k_max", &mut r.ntk),
        ] {
            if let Some(v) = s.opt_int(key_min, 0, 20)? {
                range.min = v;
            }
            if let Some(v) = s.opt_int(key_max, 0, 20)? {
                range.max = v;
            }
            if range.max < range.min {
                return Err(s.error(key_max, format!("must be >= {key_min}")));
            }
        }
        if r.ntk.min < 1 {
            return Err(s.error(
                "ntk_k_min",
                "must be >= 1 (the TensorSRHT needs an even sketch dimension m_cs = j*2^k)",
            ));
        }
        if let Some(list) = s.list("mcs_tenths")? {
            let mut tenths = Vec::new();
            for (v, span) in list {
                match v.as_int() {
                    Some(j) if (1..=9).contains(&j) && !tenths.contains(&(j as usize)) => {
                        tenths.push(j as usize)
                    }
                    _ => {
                        return Err(s.error_span(
                            span,
                            "mcs_tenths",
                            format!("invalid value {v}; allowed: distinct integers from 1 to 9 (m_cs = j*m/10)"),
                        ))
                    }
                }
            }
            if tenths.is_empty() {
                return Err(s.error("mcs_tenths", "give at least one value from 1 to 9"));
            }
            r.mcs_tenths = tenths;
        }
        if let Some(v) = s.opt_int("sketch_degree", 1, rfx_ntk::MAX_POLY_DEGREE as i64)? {
            r.sketch_degree = v as usize;
        }
        if let Some(v) = s.opt_float("max_gflop", 1e-3, 1e9)? {
            r.max_gflop = v;
        }
        if let Some(v) = s.opt_int("memory_budget_mb", 16, 1 << 20)? {
            r.memory_budget = (v as u64) << 20;
        }
        Ok(Box::new(r))
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
        let (err, norm) = feature_gram_error(map, x.view(), exact.view(), self.memory_budget)?;
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
    fn cost(&self, method: &str, depth: usize, k: u32, d: usize) -> f64 {
        let (n, d, l) = (self.n as f64, d as f64, depth as f64);
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
                let q = self.sketch_degree as f64;
                n * (2.0 * d * m + 10.0 * q * m * m.log2()) + n * n * m
            }
            _ => {
                let m = 10.0 * size;
                self.mcs_tenths
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
            Ok(errors(&map.feature_gram(x.view(), x.view())?, exact))
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
            self.mcs_tenths.iter().map(|&j| Some(j)).collect()
        } else {
            vec![None]
        };
        let (mut dim, mut mse, mut rel) = (0.0, 0.0, 0.0);
        for &j in &tenths {
            let (spec, params, m) =
                registry_choice(method, depth, k, d, j, self.sketch_degree).map_err(bad)?;
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

/// $\frac1{n^2}\Vert\hat K - K\Vert_F^2$ and $\Vert\hat K - K\Vert_F^2/\Vert K\Vert_F^2$ (sequential sums: deterministic).
fn errors(approx: &Array2<f64>, exact: &Array2<f64>) -> (f64, f64) {
    let (mut num, mut den) = (0.0, 0.0);
    Zip::from(approx).and(exact).for_each(|&a, &e| {
        num += (a - e) * (a - e);
        den += e * e;
    });
    (num / approx.len() as f64, num / den)
}

impl Runner for MseRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["dim".into(), "mse".into(), "rel_mse".into()]
    }
    fn settings(&self) -> String {
        format!(
            "dataset={};n={};grad={:?};naive={:?};ntk={:?};mcs_tenths={:?};sketch_degree={};max_gflop={};prep=unit",
            self.dataset,
            self.n,
            self.grad,
            self.naive,
            self.ntk,
            self.mcs_tenths,
            self.sketch_degree,
            self.max_gflop
        )
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
            load_rows(&self.dataset, self.n, cell.experiment_seed, Prep::Unit)
        })?;
        let gflop = self.cost(method, depth, k as u32, x.ncols()) / 1e9;
        if gflop > self.max_gflop {
            return Err(CellError::Skipped(format!(
                "estimated {gflop:.0} GFLOP above max_gflop = {}",
                self.max_gflop
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
            metrics: vec![dim, mse, rel],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_mean_squared_and_relative() {
        let exact = ndarray::array![[2.0, 1.0], [1.0, 2.0]];
        let approx = ndarray::array![[2.0, 2.0], [1.0, 0.0]];
        let (mse, rel) = errors(&approx, &exact);
        assert_eq!(mse, (1.0 + 4.0) / 4.0);
        assert_eq!(rel, 5.0 / 10.0);
    }
}
