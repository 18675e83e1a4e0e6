//! What an experiment kind is to the runner, and the set of kinds it is given.
//!
//! A kind declares its sweep parameters (names and checks), reads its own `[<kind>]` section, and returns
//! a [`Runner`] that computes the metrics of one cell from the cell's parameters and its private RNG
//! stream. Kinds hold no file, plot or CSV logic: the generic runner does that. The runner knows no kind
//! by name: the application (the `rfx` binary) hands it a [`Kinds`] list, through which
//! `[experiment] kind = "..."` is resolved.

use crate::config::{ConfigError, Section, Value};
use rfx_core::RfxRng;

/// One sweep parameter of a kind.
pub struct ParamSpec {
    /// Name as written under `[sweep]`.
    pub name: &'static str,
    /// What it means and which values are allowed (shown by `rfx list` and in errors).
    pub allowed: &'static str,
    /// Checks one value; the error text says what is allowed.
    pub check: fn(&Value) -> Result<(), String>,
    /// Whether the sweep must list it.
    pub required: bool,
}

/// One cell of a sweep: an assignment of a value to each sweep parameter.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Position in the sweep order (the cartesian product in file order).
    pub index: usize,
    /// Parameter values in sweep order.
    pub params: Vec<(String, Value)>,
    /// The experiment's seed (`[experiment] seed`), for streams that several cells must share (e.g. one
    /// train/test split per data set and `seed` value, the same for every method); the cell's own RNG is
    /// the stream `rng_stream(experiment_seed, key)` passed to [`Runner::run_cell`].
    pub experiment_seed: u64,
}

impl Cell {
    /// The cell key, e.g. `function=exp2x;expansion=taylor;degree=3`: names the RNG stream and the CSV row.
    pub fn key(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The value of parameter `name` (the sweep was validated, so the runner can rely on its presence).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// String parameter, or an error naming it.
    pub fn str(&self, name: &str) -> Result<&str, CellError> {
        self.get(name).and_then(Value::as_str).ok_or_else(|| {
            CellError::Fatal(format!(
                "cell {} has no string parameter `{name}`",
                self.key()
            ))
        })
    }

    /// Integer parameter, or an error naming it.
    pub fn int(&self, name: &str) -> Result<i64, CellError> {
        self.get(name).and_then(Value::as_int).ok_or_else(|| {
            CellError::Fatal(format!(
                "cell {} has no integer parameter `{name}`",
                self.key()
            ))
        })
    }
}

/// What a cell computed: metric values, per-item outcomes and named timings (seconds), in the runner's
/// declared order.
#[derive(Debug, Clone, Default)]
pub struct CellOutput {
    /// One value per [`Runner::metrics`] name.
    pub metrics: Vec<f64>,
    /// One vector per [`Runner::items`] name: the outcome on each test item, in a fixed item order shared
    /// by every cell of the experiment (e.g. whether test image $i$ was classified correctly).
    pub items: Vec<Vec<bool>>,
    /// One value per [`Runner::timings`] name.
    pub timings: Vec<f64>,
}

/// Why a cell produced no metrics.
#[derive(Debug, Clone)]
pub enum CellError {
    /// The cell cannot be computed here (e.g. above the memory cap); recorded as a row with a note, shown as
    /// "(-)" as the papers do.
    Skipped(String),
    /// A bug or an unexpected failure: the run stops with exit code 1.
    Fatal(String),
}

/// How `rfx compare` and `rfx verify` judge one metric of a cell recomputed from the same seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// Must be the same text (counts, dimensions, labels).
    Exact,
    /// Floating point: identical text, or within this relative difference |a − b| / max(|a|, |b|) (for
    /// values that may move with BLAS rounding on another CPU).
    Relative(f64),
    /// Floating point: identical text, or within this absolute difference |a − b| — for a difference of two
    /// metrics that are each compared relatively: its rounding is bounded by theirs, $\epsilon(|x| + |y|)$,
    /// not by a fraction of itself, which can be arbitrarily small.
    Absolute(f64),
    /// A wall time or a quantity derived from one: not compared.
    WallTime,
    /// A fraction of `items` test items decided by the sign of a score (an error rate, an accuracy):
    /// identical, or differing by at most $k/\text{items}$, where $k$ is the larger of the two cells' values
    /// of the count metric `boundary` — the items whose score lies within its perturbation bound of the
    /// decision boundary, the only items whose decision another machine's rounding can change. A fraction
    /// has no relative rounding bound of its own: one item flipping moves it by $1/\text{items}$.
    Items {
        /// The count metric of the same cell giving the items near the boundary.
        boundary: &'static str,
        /// The number of test items the fraction is taken over.
        items: usize,
    },
}

/// The relative tolerance of floating-point metrics unless a kind declares another: far above the
/// rounding differences of a reordered sum (≈ 1e-15 relative per operation, amplified by the conditioning
/// of a solve to ≈ 1e-12), far below any change of the method (a feature map off by 1e-6 shifts its
/// errors by more).
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 1e-9;

/// The tolerance of counts (`dim`, `k`, `count`, `bits`: exact), of metrics that are wall times (names
/// ending in `_s`, `_ms`, `_h`, starting with `time_`, or with `speedup`: not compared) and of the rest ([`DEFAULT_RELATIVE_TOLERANCE`]). Kinds override [`Runner::tolerance`] for counts and for
/// metrics with other needs.
pub fn default_tolerance(metric: &str) -> Tolerance {
    if matches!(metric, "dim" | "k" | "count" | "bits") {
        return Tolerance::Exact;
    }
    let timing = ["_s", "_ms", "_h"].iter().any(|s| metric.ends_with(s))
        || metric.contains("_ms_")
        || metric.starts_with("time_")
        || metric.contains("speedup");
    if timing {
        Tolerance::WallTime
    } else {
        Tolerance::Relative(DEFAULT_RELATIVE_TOLERANCE)
    }
}

/// Computes cells of one configured experiment.
pub trait Runner: Send + Sync {
    /// Metric column names.
    fn metrics(&self) -> Vec<String>;
    /// Item column names: per-item outcomes (`0`/`1` per test item, the same items in every cell, e.g.
    /// `correct`, whether each test image was classified correctly), so that a claim can compare two
    /// classifiers on the same items with a paired test (`[[claim]] items = "correct"`). None by default.
    fn items(&self) -> Vec<String> {
        Vec::new()
    }
    /// The metrics this kind records as NaN in the cells where they do not apply (an SVM accuracy of a cell
    /// without an SVM, the exact method's sketch timings). Every other metric of a computed cell must be
    /// finite: a run refuses a cell whose output is not (a bug of the kind), and a `cells.csv` row that holds
    /// one is damage (dropped and recomputed by a run, an error of `rfx plot` and `rfx report`). None by
    /// default.
    fn nan_metrics(&self) -> Vec<String> {
        Vec::new()
    }
    /// Extra timing column names (the runner always adds `time_s`, the cell's wall time).
    fn timings(&self) -> Vec<String> {
        Vec::new()
    }
    /// The settings that determine the results (besides the cell parameters and the seed); a change
    /// invalidates earlier cells.
    fn settings(&self) -> String;
    /// Computes one cell with its own RNG stream.
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError>;
    /// How a recomputation of metric `metric` is compared with a recorded value (`rfx compare`,
    /// `rfx verify`); [`default_tolerance`] unless the kind says otherwise.
    fn tolerance(&self, metric: &str) -> Tolerance {
        default_tolerance(metric)
    }
    /// The tolerance of metric `metric` in one cell: [`Runner::tolerance`] unless the kind knows that this
    /// cell's method amplifies rounding further (a Nyström map's $\Lambda_r^{-1/2}$ scales the rounding of
    /// its eigendecomposition by up to $1/\text{rcond}$), so that another machine kind's BLAS kernels move
    /// its metrics by more than the default allows without any change of the method.
    fn cell_tolerance(&self, _cell: &Cell, metric: &str) -> Tolerance {
        self.tolerance(metric)
    }
    /// The key of the expensive computation this cell shares with other cells (a data split, an exact
    /// Gram, an eigendecomposition), computed once per run by whichever of them runs first, or `None`.
    /// `rfx verify` uses it to cost a sample: the first cell of a group pays for the group.
    fn shared_group(&self, _cell: &Cell) -> Option<String> {
        None
    }
    /// The cell's expected cost relative to the other cells of the sweep, used to balance `--shard` and
    /// `rfx plan` when no earlier run recorded cell times (the recorded times are used when present).
    /// Uniform (1) unless the kind has a model.
    fn cost(&self, _cell: &Cell) -> f64 {
        1.0
    }
}

/// An experiment kind.
pub trait Kind: Sync {
    /// Name used in `[experiment] kind`.
    fn name(&self) -> &'static str;
    /// One line for `rfx list`.
    fn about(&self) -> &'static str;
    /// Sweep parameters (besides the generic `seed`).
    fn sweep_params(&self) -> Vec<ParamSpec>;
    /// Reads the kind's own section (`[<name>]`, absent means defaults) and returns its runner.
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError>;
}

/// Set up before a run's cells and dropped after them (in both `parallel_cells` modes): the application's
/// way to put the numerical libraries its kinds call into a state that keeps cells reproducible (the `rfx`
/// binary pins OpenBLAS to one thread with it) and to select the experiment's numerical backend (its
/// argument: `[experiment] backend`, one of [`Kinds::with_backends`]' names, the first when the file names
/// none), without the runner depending on those libraries.
pub type RunGuard = fn(backend: &str) -> Box<dyn std::any::Any>;

/// The name of the numeric kernels the application's cells run on, as the `cpu` column records it (the `rfx`
/// binary: OpenBLAS's core name, `rfx_linalg::blas_core_name`), without the runner depending on them.
pub type KernelsName = fn() -> String;

/// A series value's own colour in the report's figures, an index into [`crate::plot::PALETTE`], as the
/// application chooses it for a value of kind `kind`'s sweep (a method's colour by family, the same in every
/// figure), or `None` for a stable colour from the value's hash. The runner names no method: the colours
/// are the application's.
pub type SeriesColours = fn(kind: &str, series: &str) -> Option<usize>;

/// The kinds an application offers, in the order `rfx list` shows them, and the [`RunGuard`] their cells
/// need. Every function that reads an experiment file takes it, so that the runner itself knows no kind.
#[derive(Clone, Default)]
pub struct Kinds {
    list: Vec<&'static dyn Kind>,
    run_guard: Option<RunGuard>,
    backends: &'static [&'static str],
    kernels_name: Option<KernelsName>,
    series_colours: Option<SeriesColours>,
}

impl Kinds {
    /// These kinds, with no run guard.
    pub fn new(list: Vec<&'static dyn Kind>) -> Kinds {
        Kinds {
            list,
            run_guard: None,
            backends: &[],
            kernels_name: None,
            series_colours: None,
        }
    }

    /// The same kinds, whose figures draw each series value in the colour `colours` gives it.
    pub fn with_series_colours(mut self, colours: SeriesColours) -> Kinds {
        self.series_colours = Some(colours);
        self
    }

    /// The application's series colours, if any.
    pub fn series_colours(&self) -> Option<SeriesColours> {
        self.series_colours
    }

    /// The same kinds, whose cells record `name()` as the numeric kernels they ran on (the middle part of the
    /// `cpu` column, [`crate::results::Row::cpu`]).
    pub fn with_kernels_name(mut self, name: KernelsName) -> Kinds {
        self.kernels_name = Some(name);
        self
    }

    /// The name of the numeric kernels, if the application reports one.
    pub fn kernels_name(&self) -> Option<KernelsName> {
        self.kernels_name
    }

    /// The same kinds, whose cells run while a value made by `guard` is alive.
    pub fn with_run_guard(mut self, guard: RunGuard) -> Kinds {
        self.run_guard = Some(guard);
        self
    }

    /// The same kinds, whose experiment files may choose a numerical backend by name
    /// (`[experiment] backend`, passed to the [`RunGuard`]); the first name is the default, which leaves the
    /// fingerprint as it was without the key, and any other name enters the fingerprint. Without backends the
    /// key is rejected as unknown.
    pub fn with_backends(mut self, names: &'static [&'static str]) -> Kinds {
        self.backends = names;
        self
    }

    /// The backend names (the first is the default; empty: no `backend` key).
    pub fn backends(&self) -> &'static [&'static str] {
        self.backends
    }

    /// The kind named `name` (`[experiment] kind`).
    pub fn find(&self, name: &str) -> Option<&'static dyn Kind> {
        self.list.iter().copied().find(|k| k.name() == name)
    }

    /// The kinds in order.
    pub fn iter(&self) -> impl Iterator<Item = &'static dyn Kind> + '_ {
        self.list.iter().copied()
    }

    /// Their names, in order (for error messages).
    pub fn names(&self) -> Vec<&'static str> {
        self.list.iter().map(|k| k.name()).collect()
    }

    /// The run guard, if any.
    pub fn run_guard(&self) -> Option<RunGuard> {
        self.run_guard
    }
}

/// Check helper: an integer in `[min, max]`.
pub fn check_int(v: &Value, min: i64, max: i64) -> Result<(), String> {
    match v {
        Value::Int(i) if (min..=max).contains(i) => Ok(()),
        Value::Int(i) => Err(format!(
            "value {i} out of range; allowed: integers from {min} to {max}"
        )),
        Value::Float(f) => Err(format!("expected an integer, found the number {f:?}")),
        other => Err(format!("expected an integer, found \"{other}\"")),
    }
}

/// Check helper: one of the given strings.
pub fn check_choice(v: &Value, allowed: &[&str]) -> Result<(), String> {
    match v {
        Value::Str(s) if allowed.contains(&s.as_str()) => Ok(()),
        other => Err(format!(
            "unknown value \"{other}\"; allowed: {}",
            allowed.join(", ")
        )),
    }
}
