//! `series_approx`: sup-norm error of truncated Taylor and Gegenbauer series of a kernel function on
//! [−1, 1] (random Gegenbauer features paper, Fig. 1). The mathematics is in `rfx_gzk::series`.

use rfx_core::RfxRng;
use rfx_gzk::gegenbauer::Basis;
use rfx_gzk::series::ScalarFunction;
use rfx_harness::config::{int_in, ConfigError, Invalid, Section, Settings, Value};
use rfx_harness::kind::{check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};

/// The kind.
pub struct SeriesApprox;

/// `[series_approx]`: the number of grid points on [−1, 1] of the sup-norm error.
#[derive(serde::Deserialize)]
#[serde(default)]
struct SeriesSettings {
    grid_points: usize,
}

impl Default for SeriesSettings {
    fn default() -> Self {
        SeriesSettings {
            grid_points: 20_001,
        }
    }
}

impl Settings for SeriesSettings {
    const KEYS: &'static [(&'static str, &'static str)] =
        &[("grid_points", "integers from 3 to 100000000")];
    fn check(&self) -> Result<(), Invalid> {
        int_in("grid_points", self.grid_points as i128, 3, 100_000_000)
    }
}

struct SeriesRunner {
    s: SeriesSettings,
}

const FUNCTIONS: &str =
    "\"exp<β>x\" (e.g. exp2x: e^{βx}) or \"relu-ntk-<L>\" with depth L from 1 to 8";
const EXPANSIONS: &str =
    "\"taylor\" or \"gegenbauer-d<d>\" with integer d from 2 to 100000 (d = 2: Chebyshev)";

fn parse_function(s: &str) -> Option<ScalarFunction> {
    if let Some(depth) = s.strip_prefix("relu-ntk-") {
        let depth: usize = depth.parse().ok()?;
        return (1..=8)
            .contains(&depth)
            .then_some(ScalarFunction::ReluNtk { depth });
    }
    let beta: f64 = s.strip_prefix("exp")?.strip_suffix('x')?.parse().ok()?;
    (beta.is_finite() && beta.abs() <= 50.0).then_some(ScalarFunction::Exp { beta })
}

fn parse_expansion(s: &str) -> Option<Basis> {
    if s == "taylor" {
        return Some(Basis::Monomial);
    }
    let d: usize = s.strip_prefix("gegenbauer-d")?.parse().ok()?;
    (2..=100_000).contains(&d).then_some(Basis::Gegenbauer(d))
}

fn check_str<T>(v: &Value, parse: fn(&str) -> Option<T>, allowed: &str) -> Result<(), String> {
    match v.as_str().and_then(parse) {
        Some(_) => Ok(()),
        None => Err(format!("invalid value \"{v}\"; allowed: {allowed}")),
    }
}

impl Kind for SeriesApprox {
    fn name(&self) -> &'static str {
        "series_approx"
    }
    fn about(&self) -> &'static str {
        "sup-norm error of truncated Taylor/Gegenbauer series of a kernel function on [-1, 1] (Gegenbauer paper, Fig. 1)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "function",
                allowed: FUNCTIONS,
                check: |v| check_str(v, parse_function, FUNCTIONS),
                required: true,
            },
            ParamSpec {
                name: "expansion",
                allowed: EXPANSIONS,
                check: |v| check_str(v, parse_expansion, EXPANSIONS),
                required: true,
            },
            ParamSpec {
                name: "degree",
                allowed: "integers from 0 to 60",
                check: |v| check_int(v, 0, 60),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        Ok(Box::new(SeriesRunner {
            s: SeriesSettings::read(section)?,
        }))
    }
}

impl Runner for SeriesRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["max_abs_error".into()]
    }
    fn settings(&self) -> String {
        format!("grid_points={}", self.s.grid_points)
    }
    fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let f = parse_function(cell.str("function")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad function", cell.key())))?;
        let basis = parse_expansion(cell.str("expansion")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad expansion", cell.key())))?;
        let q = cell.int("degree")? as usize;
        let series = f
            .series(basis, q)
            .map_err(|e| CellError::Fatal(format!("cell {}: {e}", cell.key())))?;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![f.sup_error(&series, self.s.grid_points)],
            timings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        assert_eq!(
            parse_function("exp2x"),
            Some(ScalarFunction::Exp { beta: 2.0 })
        );
        assert_eq!(
            parse_function("relu-ntk-2"),
            Some(ScalarFunction::ReluNtk { depth: 2 })
        );
        assert_eq!(parse_function("relu-ntk-0"), None);
        assert_eq!(parse_function("sin"), None);
        assert_eq!(parse_expansion("gegenbauer-d2"), Some(Basis::Gegenbauer(2)));
        assert_eq!(parse_expansion("gegenbauer-d1"), None);
        assert_eq!(parse_expansion("gegenbauer-d-4"), None);
        assert_eq!(parse_expansion("taylor"), Some(Basis::Monomial));
    }
}
