//! `selftest`: a kind that exercises the runner itself. Each cell draws `draws` uniform numbers from its
//! own RNG stream and reports their mean, so the runner's tests can check that results depend only on
//! (experiment seed, cell key) — not on thread count, order, or interruption. `sleep_ms` slows cells
//! down so that a test can kill a run half-way. `offset` (default 0) is added to the mean and, on purpose,
//! left out of the fingerprint: it stands for a change of the code that moves a number while the settings
//! stay the same, which `rfx compare` and `rfx verify` must catch.

use super::{check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rand::Rng;
use rfx_core::RfxRng;
use rfx_harness::config::{ConfigError, Section};

/// The kind.
pub struct SelfTest;

struct SelfTestRunner {
    draws: usize,
    sleep_ms: u64,
    offset: f64,
}

impl Kind for SelfTest {
    fn name(&self) -> &'static str {
        "selftest"
    }
    fn about(&self) -> &'static str {
        "runner self-test: the mean of seeded uniform draws per cell (for testing resumability and determinism)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec {
            name: "dim",
            allowed: "positive integers up to 1000000",
            check: |v| check_int(v, 1, 1_000_000),
            required: true,
        }]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let (draws, sleep_ms, offset) = match section {
            Some(s) => (
                s.opt_int("draws", 1, 10_000_000)?.unwrap_or(1000),
                s.opt_int("sleep_ms", 0, 60_000)?.unwrap_or(0),
                s.opt_float("offset", -1.0, 1.0)?.unwrap_or(0.0),
            ),
            None => (1000, 0, 0.0),
        };
        Ok(Box::new(SelfTestRunner {
            draws: draws as usize,
            sleep_ms: sleep_ms as u64,
            offset,
        }))
    }
}

impl Runner for SelfTestRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["mean".into(), "scaled".into()]
    }
    fn settings(&self) -> String {
        format!("draws={}", self.draws)
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let dim = cell.int("dim")?;
        let sum: f64 = (0..self.draws).map(|_| rng.gen::<f64>()).sum();
        if self.sleep_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.sleep_ms));
        }
        let mean = sum / self.draws as f64 + self.offset;
        Ok(CellOutput {
            metrics: vec![mean, mean * dim as f64],
            timings: Vec::new(),
        })
    }
}
