//! `ntk_function`: the normalised ReLU NTK function $K^{(L)}(\alpha)/(L+1)$ on $[-1, 1]$ and the degree-$q$
//! monotone polynomial fit that NTKSketch sketches (NTK-sketching paper, Fig. 1 and Remark 1). The mathematics
//! is in `rfx_kernels::relu::relu_ntk` (the recursion) and `rfx_ntk::ntksketch::fit_ntk_polynomial` (the fit).
//!
//! The paper plots the "normalized" function without saying how it is normalised; we divide by
//! $K^{(L)}(1) = L + 1$, so every depth ends at 1 and the "knee" (nearly constant, then a sharp rise near
//! $\alpha = 1$) is visible on one scale.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rfx_core::RfxRng;
use rfx_harness::config::{int_in, ConfigError, Invalid, Section, Settings, Value};
use rfx_harness::kind::{check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_kernels::relu::relu_ntk;
use rfx_ntk::ntksketch::{fit_ntk_polynomial, NtkPolynomial};

/// The kind.
pub struct NtkFunction;

/// `[ntk_function]`: the degree of the polynomial fit (the paper's Fig. 1: 8).
#[derive(serde::Deserialize)]
#[serde(default)]
struct FunctionSettings {
    degree: usize,
}

impl Default for FunctionSettings {
    fn default() -> Self {
        FunctionSettings { degree: 8 }
    }
}

impl Settings for FunctionSettings {
    const KEYS: &'static [(&'static str, &'static str)] = &[("degree", "integers from 1 to 32")];
    fn check(&self) -> Result<(), Invalid> {
        int_in("degree", self.degree as i128, 1, 32)
    }
}

struct FunctionRunner {
    degree: usize,
    /// One fit per depth, shared by the cells of that depth (the fit is deterministic).
    fits: Mutex<HashMap<usize, Arc<NtkPolynomial>>>,
}

fn check_alpha(v: &Value) -> Result<(), String> {
    match v.as_f64() {
        Some(a) if (-1.0..=1.0).contains(&a) => Ok(()),
        _ => Err(format!(
            "invalid value \"{v}\"; allowed: numbers from -1 to 1"
        )),
    }
}

impl Kind for NtkFunction {
    fn name(&self) -> &'static str {
        "ntk_function"
    }
    fn about(&self) -> &'static str {
        "the normalised ReLU NTK function K(α)/(L+1) and its monotone polynomial fit (NTK-sketching paper, Fig. 1)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "depth",
                allowed: "integers from 1 to 64",
                check: |v| check_int(v, 1, 64),
                required: true,
            },
            ParamSpec {
                name: "alpha",
                allowed: "numbers from -1 to 1",
                check: check_alpha,
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let FunctionSettings { degree } = FunctionSettings::read(section)?;
        Ok(Box::new(FunctionRunner {
            degree,
            fits: Mutex::new(HashMap::new()),
        }))
    }
}

impl FunctionRunner {
    fn fit(&self, depth: usize) -> Result<Arc<NtkPolynomial>, CellError> {
        let mut fits = self
            .fits
            .lock()
            .map_err(|_| CellError::Fatal("fit cache poisoned".into()))?;
        if let Some(p) = fits.get(&depth) {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(
            fit_ntk_polynomial(depth, self.degree)
                .map_err(|e| CellError::Fatal(format!("fit of depth {depth}: {e}")))?,
        );
        fits.insert(depth, Arc::clone(&p));
        Ok(p)
    }
}

impl Runner for FunctionRunner {
    fn metrics(&self) -> Vec<String> {
        vec![
            "k".into(),
            "fit".into(),
            "fit_error".into(),
            "fit_max_error".into(),
        ]
    }
    fn settings(&self) -> String {
        format!("degree={}", self.degree)
    }
    fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let depth = cell.int("depth")? as usize;
        let alpha = cell.get("alpha").and_then(Value::as_f64).ok_or_else(|| {
            CellError::Fatal(format!("cell {} has no number `alpha`", cell.key()))
        })?;
        let scale = (depth + 1) as f64;
        let k = relu_ntk(depth, alpha);
        let p = self.fit(depth)?;
        let fit = p.eval(alpha);
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                k / scale,
                fit / scale,
                (fit - k).abs() / scale,
                p.max_error() / scale,
            ],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfx_harness::kind::Cell;

    fn cell(depth: i64, alpha: f64) -> Cell {
        Cell {
            index: 0,
            params: vec![
                ("depth".into(), Value::Int(depth)),
                ("alpha".into(), Value::Float(alpha)),
            ],
            experiment_seed: 0,
        }
    }

    #[test]
    fn normalised_function_ends_at_one_and_the_fit_error_is_bounded_by_its_maximum() {
        let r = FunctionRunner {
            degree: 8,
            fits: Mutex::new(HashMap::new()),
        };
        let mut rng = rfx_core::rng_stream(0, "test");
        for depth in [2, 3, 8] {
            let at_one = r.run_cell(&cell(depth, 1.0), &mut rng).unwrap().metrics;
            assert!((at_one[0] - 1.0).abs() < 1e-12, "{at_one:?}");
            for a in [-1.0, -0.5, 0.0, 0.7, 0.99] {
                let m = r.run_cell(&cell(depth, a), &mut rng).unwrap().metrics;
                assert!(m[2] <= m[3] + 1e-12, "depth {depth}, α = {a}: {m:?}");
                // K(-1) = K^{(L-1)}(0): one layer maps α = −1 onto the α = 0 chain (κ0(−1) = κ1(−1) = 0)
                if a == -1.0 {
                    let prev = relu_ntk(depth as usize - 1, 0.0) / (depth + 1) as f64;
                    assert!((m[0] - prev).abs() < 1e-12);
                }
            }
        }
    }
}
