//! `selftest`: a kind that exercises the runner itself. Each cell draws `draws` uniform numbers from its
//! own RNG stream and reports their mean, so the runner's tests can check that results depend only on
//! (experiment seed, cell key) — not on thread count, order, or interruption. `sleep_ms` slows cells
//! down (for the time-limit test). `abort_after_cells = k` ends the process as a kill would (no outputs, no
//! final rewrite of `cells.csv`) when its (k+1)-th cell starts: with `--threads 1` the cells run one after the
//! other and each is written before the next starts, so exactly k rows are on disk — a deterministic stand-in
//! for `kill -9` half-way. `offset` (default 0) is added to the mean. `offset` and `abort_after_cells` are, on
//! purpose, left out of the fingerprint: `offset` stands for a change of the code that moves a number while
//! the settings stay the same, which `rfx compare` and `rfx verify` must catch; without `abort_after_cells`
//! the same experiment resumes the aborted run. `wait_for_file = "path"` makes every cell wait until that
//! file exists (also left out of the fingerprint): a run that holds its results folder for as long as a test
//! needs, with no timing involved (the folder-lock test starts one, runs a second, and kills the first).

use rand::Rng;
use rfx_core::RfxRng;
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Settings};
use rfx_harness::kind::{check_int, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Exit code of a run ended by `abort_after_cells` (that of a process killed by SIGKILL in a shell).
pub const ABORT_EXIT_CODE: i32 = 137;

/// The kind.
pub struct SelfTest;

/// `[selftest]`: values drawn per cell, a sleep per cell, an offset added to the mean, and the cell at
/// which the process ends as a kill would.
#[derive(serde::Deserialize)]
#[serde(default)]
struct SelfTestSettings {
    draws: usize,
    sleep_ms: u64,
    offset: f64,
    abort_after_cells: Option<usize>,
    wait_for_file: Option<String>,
}

impl Default for SelfTestSettings {
    fn default() -> Self {
        SelfTestSettings {
            draws: 1000,
            sleep_ms: 0,
            offset: 0.0,
            abort_after_cells: None,
            wait_for_file: None,
        }
    }
}

impl Settings for SelfTestSettings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("draws", "integers from 1 to 10000000"),
        ("sleep_ms", "integers from 0 to 60000"),
        ("offset", "numbers from -1 to 1"),
        ("abort_after_cells", "integers from 0 to 1000000"),
        ("wait_for_file", "a path"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("draws", self.draws as i128, 1, 10_000_000)?;
        int_in("sleep_ms", self.sleep_ms as i128, 0, 60_000)?;
        float_in("offset", self.offset, -1.0, 1.0)?;
        match self.abort_after_cells {
            Some(k) => int_in("abort_after_cells", k as i128, 0, 1_000_000),
            None => Ok(()),
        }
    }
}

struct SelfTestRunner {
    s: SelfTestSettings,
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
        Ok(Box::new(SelfTestRunner {
            s: SelfTestSettings::read(section)?,
            started: AtomicUsize::new(0),
        }))
    }
}

impl Runner for SelfTestRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["mean".into(), "scaled".into()]
    }
    fn settings(&self) -> String {
        format!("draws={}", self.s.draws)
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        if let Some(k) = self.s.abort_after_cells {
            if self.started.fetch_add(1, Ordering::SeqCst) == k {
                eprintln!(
                    "selftest: abort_after_cells = {k} reached; ending the process as a kill would"
                );
                std::process::exit(ABORT_EXIT_CODE);
            }
        }
        if let Some(path) = &self.s.wait_for_file {
            while !std::path::Path::new(path).exists() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        let dim = cell.int("dim")?;
        let sum: f64 = (0..self.s.draws).map(|_| rng.gen::<f64>()).sum();
        if self.s.sleep_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.s.sleep_ms));
        }
        let mean = sum / self.s.draws as f64 + self.s.offset;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![mean, mean * dim as f64],
            timings: Vec::new(),
        })
    }
}
