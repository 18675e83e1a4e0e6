//! `selftest`: a kind that exercises the runner itself. Each cell draws `draws` uniform numbers from its
//! own RNG stream and reports their mean, so the runner's tests can check that results depend only on
//! (experiment seed, cell key) — not on thread count, order, or interruption. `sleep_ms` slows cells
//! down (for the time-limit test). `abort_after_cells = k` ends the process as a kill would (no outputs, no
//! final rewrite of `cells.csv`) when its (k+1)-th cell starts: with `--threads 1` the cells run one after the
//! other and each is written before the next starts, so exactly k rows are on disk — a deterministic stand-in
//! for `kill -9` half-way. `offset` (default 0) is added to the mean. `offset` and `abort_after_cells` are, on
//! purpose, left out of the fingerprint: `offset` stands for a change of the code that moves a number while
//! the settings stay the same, which `rfx compare` and `rfx verify` must catch; without `abort_after_cells`
//! the same experiment resumes the aborted run.

use super::{check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rand::Rng;
use rfx_core::RfxRng;
use rfx_harness::config::{ConfigError, Section};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Exit code of a run ended by `abort_after_cells` (that of a process killed by SIGKILL in a shell).
pub const ABORT_EXIT_CODE: i32 = 137;

/// The kind.
pub struct SelfTest;

struct SelfTestRunner {
    draws: usize,
    sleep_ms: u64,
    offset: f64,
    abort_after_cells: Option<usize>,
    /// Cells started in this process.
    started: AtomicUsize,
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
        let (draws, sleep_ms, offset, abort_after_cells) = match section {
            Some(s) => (
                s.opt_int("draws", 1, 10_000_000)?.unwrap_or(1000),
                s.opt_int("sleep_ms", 0, 60_000)?.unwrap_or(0),
                s.opt_float("offset", -1.0, 1.0)?.unwrap_or(0.0),
                s.opt_int("abort_after_cells", 0, 1_000_000)?,
            ),
            None => (1000, 0, 0.0, None),
        };
        Ok(Box::new(SelfTestRunner {
            draws: draws as usize,
            sleep_ms: sleep_ms as u64,
            offset,
            abort_after_cells: abort_after_cells.map(|k| k as usize),
            started: AtomicUsize::new(0),
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
        if let Some(k) = self.abort_after_cells {
            if self.started.fetch_add(1, Ordering::SeqCst) == k {
                eprintln!(
                    "selftest: abort_after_cells = {k} reached; ending the process as a kill would"
                );
                std::process::exit(ABORT_EXIT_CODE);
            }
        }
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
