//! The experiment file: `[experiment]`, `[sweep]`, the kind's section, `[plot]`, `[table]` (or several
//! `[[table]]`s), `[[claim]]`, `[[paper_value]]` and `[quick]`. Everything is validated before anything is
//! computed or written.
//!
//! `[experiment]` keys: `name`, `kind`, `seed` (required), `title`, `paper`, `description`, `notes` (markdown
//! whose `{{…}}` templates the report fills from the cells and verdicts, [`crate::prose`]; checked here), and
//! `parallel_cells` (default `true`): with `false` the cells run one after another and each cell may use
//! every worker thread (rayon and BLAS) itself, so that the wall times a kind measures are not
//! contaminated by other cells running at the same time — use it for experiments whose tables report times;
//! and `backend`, where the application offers numerical backends ([`Kinds::with_backends`]; the `rfx`
//! binary: `"openblas"` (default) or `"faer"` for the `f64` Gram and cross-product kernels,
//! `rfx_linalg::Backend`), which enters the fingerprint when it is not the default.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::claims::{ClaimSpec, ClaimTest, EqualBudget, FactorReading, GroupMode, Margin, Scale};
use crate::config::{ConfigError, Doc, Section, Value};
use crate::kind::{check_int, Cell, Kind, Kinds, RunGuard, Runner};

/// The most cells an experiment's sweep may have (in either variant): about five times the largest
/// committed experiment (21,600 cells). The runner holds every cell's key in memory and rewrites
/// `cells.csv` whole, and a sweep of this size is already days of computing for any paper kind; a larger
/// sweep (a seed list of a million values, a product of long lists) is refused when the file is read, with
/// its cell count, before anything is computed or written. Split such an experiment into several files.
pub const MAX_CELLS: usize = 100_000;

/// The longest experiment file read, in bytes (a generated sweep of a million seeds is 7 MB).
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// One axis of the sweep.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Parameter name.
    pub name: String,
    /// Its values, in file order.
    pub values: Vec<Value>,
}

pub use crate::claims::Better;

/// `[plot]`: one line chart per panel value, one curve per series value, mean ± std over seeds.
#[derive(Debug, Clone)]
pub struct PlotSpec {
    /// Figure title.
    pub title: String,
    /// The x axis: a numeric sweep parameter, or a metric of the kind (e.g. a feature dimension that the
    /// cell computes); see [`PlotSpec::x_is_metric`].
    pub x: String,
    /// Whether `x` names a metric (its mean over seeds is the abscissa) rather than a sweep parameter. Then
    /// at most one varying sweep parameter may be none of x, series and panels (e.g. a size exponent): its
    /// values give the points along each curve.
    pub x_is_metric: bool,
    /// Metric on the y axis (the first when several are given).
    pub y: String,
    /// Further metrics drawn on the same axes (`y = ["a", "b"]`): one curve per metric (and series value),
    /// labelled by the metric (through `[plot.labels]`).
    pub y_more: Vec<String>,
    /// Sweep parameter that distinguishes curves.
    pub series: Option<String>,
    /// Sweep parameters that distinguish panels (`panels = "a"` or `panels = ["a", "b"]`: one panel per
    /// combination, titled by the values joined with ", ").
    pub panels: Vec<String>,
    /// x axis label with units.
    pub x_label: String,
    /// y axis label with units.
    pub y_label: String,
    /// Log scale on x.
    pub log_x: bool,
    /// Log scale on y.
    pub log_y: bool,
    /// Draw $1 - \bar y$ instead of the mean $\bar y$ (`y_one_minus = true`; the error bars keep their
    /// length): an error rate from an accuracy, whose values near 1 a log scale can then tell apart.
    pub y_one_minus: bool,
    /// Display labels for parameter values (`[plot.labels]`).
    pub labels: Vec<(String, String)>,
    /// Where the legend goes in each panel: one of [`LEGEND_POSITIONS`] (`legend`, default `upper-right`).
    pub legend: String,
    /// Draw the legend only in this panel (`legend_panel`, 1-based in panel order; default: every panel),
    /// for panels whose curves leave no corner free.
    pub legend_panel: Option<usize>,
    /// One figure per value of this sweep parameter (`figures = "kernel"`): files `<name>-<value>.png` and
    /// `.svg`, each titled with the value's label, for sweeps whose panels would be too many for one figure.
    pub figures: Option<String>,
    /// Series values to draw again in a zoomed copy of each panel (`zoom = ["a", "b"]`), whose y range
    /// fits only them: for curves a claim compares that another series' range squeezes together.
    pub zoom: Vec<String>,
    /// The plot's own name (`name`, required for every `[[plot]]` after the first): its files are
    /// `<experiment>-<name>…` instead of `<experiment>…`.
    pub name: Option<String>,
    /// `where = { param = [values] }`: only the cells with these values are drawn (and, for the
    /// `figures` parameter, only these figures are written), as in the tables.
    pub filter: Vec<(String, Vec<Value>)>,
}

impl PlotSpec {
    /// The figures of experiment `name`, in sweep order: `(file stem, value of [`PlotSpec::figures`])`, or
    /// the one figure `(name, None)`.
    pub fn figure_files(&self, name: &str, sweep: &[Axis]) -> Vec<(String, Option<Value>)> {
        let name = match &self.name {
            Some(own) => format!("{name}-{own}"),
            None => name.to_string(),
        };
        let name = name.as_str();
        let Some(key) = &self.figures else {
            return vec![(name.to_string(), None)];
        };
        let kept = self.filter.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        sweep
            .iter()
            .filter(|a| &a.name == key)
            .flat_map(|a| a.values.iter())
            .filter(|v| kept.is_none_or(|k| listed(k, &v.to_string())))
            .map(|v| {
                let slug: String = v
                    .to_string()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                (short_stem(&format!("{name}-{slug}")), Some(v.clone()))
            })
            .collect()
    }
}

/// A file stem of at most 120 bytes (file systems allow 255, and `.tmp-<host>-<pid>.png` is added while it
/// is written): a longer ASCII stem keeps its first 100 bytes and a 16-hex-digit FNV-1a hash of the whole,
/// so that distinct long values still get distinct files.
fn short_stem(stem: &str) -> String {
    if stem.len() <= 120 || !stem.is_ascii() {
        return stem.to_string();
    }
    let hash = stem.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{hash:016x}", &stem[..100])
}

/// Allowed values of `[plot] legend`: a corner or edge of each panel, or `outside` (one legend for the whole
/// figure, in a column to the right of the panels).
pub const LEGEND_POSITIONS: [&str; 7] = [
    "upper-right",
    "upper-left",
    "upper-middle",
    "lower-right",
    "lower-left",
    "lower-middle",
    "outside",
];

impl PlotSpec {
    /// The display label of a parameter value.
    pub fn label(&self, value: &str) -> String {
        self.labels
            .iter()
            .find(|(k, _)| k == value)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| value.to_string())
    }
}

/// Number format of table cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumFormat {
    /// `1.23e-4` with this many significant digits.
    Sci(usize),
    /// `0.123` with this many decimals.
    Fixed(usize),
}

/// `[table]`: rows are combinations of `rows` parameters, columns the values of `columns`.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// Column parameter.
    pub columns: String,
    /// Only these column values (all when absent).
    pub column_values: Option<Vec<Value>>,
    /// Metric shown.
    pub value: String,
    /// Number format.
    pub format: NumFormat,
    /// Show the paper's number (a `[[paper_value]]` of the same metric whose cell matches the row and column)
    /// in brackets after ours (`show_paper`, default `false`).
    pub show_paper: bool,
    /// `where = { param = [values] }`: only the cells with these values.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// One column of a [`BestTableSpec`]: a metric on a subset of the cells.
#[derive(Debug, Clone)]
pub struct BestColumn {
    /// Column header.
    pub label: String,
    /// Metric compared.
    pub metric: String,
    /// Lower or higher is better.
    pub better: Better,
    /// Restrictions on parameters (e.g. the small feature counts).
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[best_table]]`: the best value of `by` per row and column, with a paired t-test across the remaining
/// parameters (seeds and the column's other values): the winners are the best method and every method not
/// significantly worse at level `alpha`; "-" when the winners are more than half of the methods (no
/// significant difference for most of them), as in the random-features survey's Table VII.
#[derive(Debug, Clone)]
pub struct BestTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The compared parameter (e.g. `method`).
    pub by: String,
    /// Two-sided significance level of the paired t-test.
    pub alpha: f64,
    /// Restrictions applied to every column.
    pub filter: Vec<(String, Vec<Value>)>,
    /// Columns in order.
    pub columns: Vec<BestColumn>,
    /// Whether to add, under the table, one generated sentence per column counting in how many rows each
    /// value of `by` is the best or not significantly worse (`tally = true`; default `false`).
    pub tally: bool,
}

/// `[[rank_table]]`: per row (a combination of the `rows` parameters, e.g. each kernel), the values of `by`
/// (e.g. the methods) ranked by `metric` within every block of the remaining sweep parameters (e.g. data set ×
/// budget × seed), ties sharing their mean rank, and ordered by mean rank; each is compared with the first by
/// an exact two-sided sign test over the blocks (in how many blocks it beats or loses to the first), with
/// Holm's correction at `alpha`. Values missing from more than a quarter of the row's blocks are left out
/// (and named); only blocks holding every remaining value are ranked. Scale-free, so blocks of different data
/// sets combine (Demšar 2006's mean ranks, with a sign test in place of Nemenyi's critical difference).
#[derive(Debug, Clone)]
pub struct RankTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The ranked parameter (e.g. `method`).
    pub by: String,
    /// The metric ranked.
    pub metric: String,
    /// Lower or higher is better.
    pub better: Better,
    /// Family-wise significance level of the sign tests against the first.
    pub alpha: f64,
    /// Restrictions applied to the cells.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[front_table]]`: per row (a combination of the `rows` parameters), the Pareto front of the points
/// (one per value of `by` and of `along`, e.g. method × budget) in the plane (mean `cost`, mean `metric`) over
/// the remaining parameters (seeds): the points no other point matches or beats in both (lower cost; lower
/// or higher metric as `better` says), cheapest first, and per value of `by` the number of rows whose front
/// it is on (a generated sentence per group of `rows[0]`). Means only: no test of significance.
#[derive(Debug, Clone)]
pub struct FrontTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The parameter that names a point's owner (e.g. `method`).
    pub by: String,
    /// The parameter along which an owner has several points (e.g. `m`), if any.
    pub along: Option<String>,
    /// The cost metric (lower is better; e.g. time or bits).
    pub cost: String,
    /// The quality metric.
    pub metric: String,
    /// Lower or higher is better for `metric`.
    pub better: Better,
    /// Restrictions applied to the cells.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[guidance]]`: one "which method when" question, answered by generated sentences. Per row (a combination
/// of the `rows` parameters, e.g. each kernel) and per value of `along` (e.g. each budget `m`; one comparison
/// when absent), group A (the cells matching `a`, e.g. `{ method = ["nystrom"] }`) is represented by its member
/// (a combination of the values of `a`'s parameters) with the best mean `metric`, and compared with every
/// member of group B (the cells matching `b`; without `b`, every cell not in A) by an exact two-sided sign test
/// over the blocks (the combinations of the parameters named nowhere else — data set × seed), with Holm's
/// correction over all the row's tests. A *wins* where it is significantly better than every member of B,
/// *loses* where some member is significantly better than it, and otherwise shows *no significant
/// difference*; each verdict is printed with the blocks, the adjusted p-value and the means of `metric` and
/// of the `costs` metrics beside it. Declarative: the harness knows no method; the file names the groups.
#[derive(Debug, Clone)]
pub struct GuidanceSpec {
    /// The question, printed in bold above the answers (e.g. "Below which m does Nyström win?").
    pub question: String,
    /// Row parameters (one generated sentence per combination).
    pub rows: Vec<String>,
    /// The parameter along which the verdicts are given (e.g. `m`), if any.
    pub along: Option<String>,
    /// Group A: its filter (non-empty).
    pub a: Vec<(String, Vec<Value>)>,
    /// Group B: its filter, or `None` for every cell not in A (its members named by `a`'s parameters).
    pub b: Option<Vec<(String, Vec<Value>)>>,
    /// The compared metric.
    pub metric: String,
    /// Lower or higher is better for `metric`.
    pub better: Better,
    /// Metrics whose means are printed beside the verdicts (e.g. time, bits); not tested.
    pub costs: Vec<String>,
    /// Family-wise significance level (Holm over the row's tests).
    pub alpha: f64,
    /// Restrictions applied to every cell.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[score_table]]`: one row per value of `by` (e.g. `method`) summarising a metric across the values of
/// `over` (e.g. `dataset`), each cell's value being its mean over seeds — the NTK random features paper's
/// Table 1: the mean ± 95 % confidence half-width $1.96\thinspace s/\sqrt{k}$ over the $k$ data sets, P90 and P95 (the
/// percentage of data sets where the value reaches 90 % / 95 % of the best value of any `by` on that data
/// set) and PMA (the mean of 100·value/best). Only data sets where every `by` value has a result count.
#[derive(Debug, Clone)]
pub struct ScoreTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// The compared parameter (rows).
    pub by: String,
    /// The parameter averaged over (data sets).
    pub over: String,
    /// The metric (higher is better).
    pub metric: String,
}

/// Where a [`PaperValue`] comes from (`source`): only [`PaperSource::Paper`] numbers are shown as the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperSource {
    /// Printed in the paper (a table, the text, or read off a figure: `ref` says which).
    Paper,
    /// From the authors' code or notebook output (`ref` names the repository, notebook or file).
    AuthorsCode,
    /// Computed by us or by an independent re-implementation (`how` says how).
    Derived,
}

/// The values of `[[paper_value]] source`, in the order of [`PaperSource`].
pub const PAPER_SOURCES: [&str; 3] = ["paper", "authors-code", "derived"];

impl PaperSource {
    /// The word of the TOML file.
    pub fn word(self) -> &'static str {
        match self {
            PaperSource::Paper => PAPER_SOURCES[0],
            PaperSource::AuthorsCode => PAPER_SOURCES[1],
            PaperSource::Derived => PAPER_SOURCES[2],
        }
    }
}

/// `[[paper_value]]`: a number to show beside ours (never used as ours), with where it comes from and whether
/// it was measured on our task.
///
/// Keys: `cell`, `metric`, `value`, `source` (one of [`PAPER_SOURCES`]), `ref` (required for `paper` — the
/// table, figure or section — and `authors-code` — the repository, notebook or file), `how` (required for
/// `derived`), `same_task` (required: the same data set and sizes n, m and test set as our cell) and
/// `differs` (required when `same_task = false`: why our task is not the one the number was measured on).
#[derive(Debug, Clone)]
pub struct PaperValue {
    /// The cell it corresponds to (a subset of sweep parameters; seeds are averaged).
    pub cell: Vec<(String, Value)>,
    /// The metric.
    pub metric: String,
    /// The reported value.
    pub value: f64,
    /// Where it comes from.
    pub source: PaperSource,
    /// `ref`: the table/figure/section of the paper, or the repository/notebook/file of the authors' code.
    pub reference: Option<String>,
    /// `how`: how a derived number was obtained.
    pub how: Option<String>,
    /// Whether the number was measured on our cell's task (data set, n, m, test set).
    pub same_task: bool,
    /// `differs`: why the task differs (present exactly when `same_task` is false).
    pub differs: Option<String>,
}

impl PaperValue {
    /// Where the number comes from, in words: the source with its `ref` and `how`.
    pub fn provenance(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.reference {
            parts.push(r.clone());
        }
        if let Some(h) = &self.how {
            parts.push(h.clone());
        }
        let what = match self.source {
            PaperSource::Paper => "paper",
            PaperSource::AuthorsCode => "authors' code",
            PaperSource::Derived => "derived",
        };
        if parts.is_empty() {
            what.to_string()
        } else {
            format!("{what}: {}", parts.join("; "))
        }
    }
}

/// A validated experiment.
pub struct Spec {
    /// The TOML file.
    pub file: PathBuf,
    /// Its text (copied into the results).
    pub source: String,
    /// Experiment name = results directory name.
    pub name: String,
    /// Kind name.
    pub kind: String,
    /// Experiment seed.
    pub seed: u64,
    /// Title for the report.
    pub title: String,
    /// What it does.
    pub description: String,
    /// The paper and figure/table it reproduces.
    pub paper: String,
    /// Notes for the report (ambiguities, resolutions, stand-ins), with templates ([`crate::prose`]).
    pub notes: String,
    /// The sweep axes (including `seed` if listed).
    pub sweep: Vec<Axis>,
    /// Plots: `[plot]` gives one, `[[plot]]` any number (each after the first with its own `name`).
    pub plots: Vec<PlotSpec>,
    /// Best-method tables with significance (`[[best_table]]`), in file order.
    pub best_tables: Vec<BestTableSpec>,
    /// Rankings with significance (`[[rank_table]]`), in file order.
    pub rank_tables: Vec<RankTableSpec>,
    /// Pareto fronts (`[[front_table]]`), in file order.
    pub front_tables: Vec<FrontTableSpec>,
    /// Cross-data-set score tables (`[[score_table]]`), in file order.
    pub score_tables: Vec<ScoreTableSpec>,
    /// "Which method when" questions (`[[guidance]]`), in file order.
    pub guidance: Vec<GuidanceSpec>,
    /// Tables (`[table]` gives one, `[[table]]` any number), in file order.
    pub tables: Vec<TableSpec>,
    /// Whether cells run in parallel (`[experiment] parallel_cells`, default `true`).
    pub parallel_cells: bool,
    /// Claims with verdicts.
    pub claims: Vec<ClaimSpec>,
    /// Paper numbers.
    pub paper_values: Vec<PaperValue>,
    /// Whether `[quick]` overrides were applied.
    pub quick: bool,
    /// The configured cell runner.
    pub runner: Box<dyn Runner>,
    /// Held while the cells run ([`Kinds::with_run_guard`] of the kinds the file was read with).
    pub run_guard: Option<RunGuard>,
    /// The name of the numeric kernels recorded in the `cpu` column ([`Kinds::with_kernels_name`]).
    pub kernels_name: Option<crate::kind::KernelsName>,
    /// The numerical backend (`[experiment] backend`, one of [`Kinds::backends`]; the first when absent,
    /// empty when the application offers none), passed to the run guard.
    pub backend: String,
    /// Whether `backend` is not the default (then it is part of the [`Spec::fingerprint`]).
    backend_chosen: bool,
}

/// The longest experiment name: it names a folder and, with a sweep value, figure files.
pub const MAX_NAME_CHARS: usize = 100;

fn is_safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_CHARS
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

impl Spec {
    /// Reads and validates `path`, its `[experiment] kind` being one of `kinds`; `quick` applies the
    /// `[quick]` overrides.
    pub fn load(path: &Path, quick: bool, kinds: &Kinds) -> Result<Spec, ConfigError> {
        Self::parse(path, &Self::read_source(path)?, quick, kinds)
    }

    /// The text of the experiment file `path`, read once (so that a pipe such as `<(cat file)` can be
    /// checked in both variants) and at most [`MAX_SOURCE_BYTES`] long (`/dev/zero` is refused, not read
    /// forever).
    pub fn read_source(path: &Path) -> Result<String, ConfigError> {
        use std::io::Read;
        let error = |message: String| ConfigError {
            file: path.display().to_string(),
            line: None,
            key: String::new(),
            message,
        };
        let f =
            crate::io::open_input(path, true, "an experiment file (.toml)").map_err(|e| match e
                .kind()
            {
                std::io::ErrorKind::InvalidInput => error(e.to_string()),
                _ => error(format!("cannot read: {e}")),
            })?;
        let pipe = f.metadata().is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_fifo()
        });
        let mut bytes = Vec::new();
        f.take(MAX_SOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| error(format!("cannot read: {e}")))?;
        if pipe && bytes.is_empty() {
            return Err(error(
                "is a pipe or FIFO with nothing written to it (no writer); expected an experiment file (.toml)"
                    .into(),
            ));
        }
        if bytes.len() as u64 > MAX_SOURCE_BYTES {
            return Err(error(format!(
                "longer than {} MiB; an experiment file is a few kilobytes",
                MAX_SOURCE_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|e| {
            error(format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })
    }

    /// Validates the text of an experiment file (`path` names it in errors) and returns the experiment as
    /// run with (`quick`) or without its `[quick]` overrides. Both variants are checked whichever is asked
    /// for, so that `rfx validate` covers what `rfx run` and `rfx run --quick` will use, and a quick run
    /// refuses a file whose full run would be refused. In the quick variant, values that `where`,
    /// `column_values` and `paper_value` cells name may be values of the full sweep that the quick sweep
    /// leaves out (they then select nothing in a quick run).
    pub fn parse(
        path: &Path,
        source: &str,
        quick: bool,
        kinds: &Kinds,
    ) -> Result<Spec, ConfigError> {
        let (mut full, has_quick) = Self::parse_variant(path, source, false, kinds, None)?;
        if !has_quick {
            full.quick = quick;
            return Ok(full);
        }
        let (quick_spec, _) =
            Self::parse_variant(path, source, true, kinds, Some(full.sweep.as_slice()))?;
        Ok(if quick { quick_spec } else { full })
    }

    /// One variant of the file: with or without its `[quick]` overrides. `full_sweep` is the sweep of the
    /// full variant when reading the quick one. Also returns whether the file has a `[quick]` section.
    fn parse_variant(
        path: &Path,
        source: &str,
        quick: bool,
        kinds: &Kinds,
        full_sweep: Option<&[Axis]>,
    ) -> Result<(Spec, bool), ConfigError> {
        let file = path.display().to_string();
        let mut doc = Doc::parse(&file, source)?;
        let has_quick = doc.apply_quick(quick)?;
        let root = doc.root();

        let exp = root
            .table("experiment")?
            .ok_or_else(|| root.error("experiment", "missing required table [experiment]"))?;
        let name = exp.req_str("name")?;
        if !is_safe_name(&name) {
            return Err(exp.error(
                "name",
                format!(
                    "\"{}\" is not a valid name; allowed: lowercase letters, digits, '-' and '_', at most \
                     {MAX_NAME_CHARS} characters",
                    name.chars().take(120).collect::<String>()
                ),
            ));
        }
        let kind_name = exp.req_str("kind")?;
        let kind = kinds.find(&kind_name).ok_or_else(|| {
            exp.error(
                "kind",
                format!(
                    "unknown kind \"{kind_name}\"; allowed: {}",
                    kinds.names().join(", ")
                ),
            )
        })?;
        let seed = exp
            .opt_int("seed", 0, i64::MAX)?
            .ok_or_else(|| exp.error("seed", "missing required key (a non-negative integer)"))?
            as u64;
        let title = exp.opt_str("title")?.unwrap_or_else(|| name.clone());
        let description = exp.opt_str("description")?.unwrap_or_default();
        let paper = exp.opt_str("paper")?.unwrap_or_default();
        let notes = exp.opt_str("notes")?.unwrap_or_default();
        let parallel_cells = exp.opt_bool("parallel_cells")?.unwrap_or(true);
        let backends = kinds.backends();
        let backend = if backends.is_empty() {
            None
        } else {
            exp.opt_str("backend")?
        };
        if let Some(b) = &backend {
            if !backends.contains(&b.as_str()) {
                return Err(exp.error(
                    "backend",
                    format!("unknown backend \"{b}\"; allowed: {}", backends.join(", ")),
                ));
            }
        }
        let default_backend = backends.first().copied().unwrap_or_default();
        let backend_chosen = backend.as_deref().is_some_and(|b| b != default_backend);
        let backend = backend.unwrap_or_else(|| default_backend.to_string());
        exp.finish()?;

        let sweep = read_sweep(&root, kind)?;
        let known = known_values(&sweep, full_sweep);
        let section = root.table(kind.name())?;
        let runner = kind.configure(section.as_ref())?;
        if let Some(s) = &section {
            s.finish()?;
        }
        let metrics = runner.metrics();
        let item_columns = runner.items();
        let params: Vec<String> = sweep.iter().map(|a| a.name.clone()).collect();

        let plots = read_plots(&root, &params, &metrics, &sweep, &known)?;
        let tables = read_tables(&root, &params, &metrics, &known)?;
        let claims = root
            .tables("claim")?
            .iter()
            .map(|s| read_claim(s, &params, &metrics, &item_columns, &sweep, &known))
            .collect::<Result<Vec<_>, _>>()?;
        let known_values: Vec<(String, Vec<Value>)> = known
            .iter()
            .map(|a| (a.name.clone(), a.values.clone()))
            .collect();
        crate::prose::check(&notes, claims.len(), &params, &metrics, &known_values)
            .map_err(|e| exp.error("notes", e))?;
        let paper_values = root
            .tables("paper_value")?
            .iter()
            .map(|s| read_paper_value(s, &params, &metrics, &known))
            .collect::<Result<Vec<_>, _>>()?;
        let best_tables = root
            .tables("best_table")?
            .iter()
            .map(|s| read_best_table(s, &params, &metrics, &known))
            .collect::<Result<Vec<_>, _>>()?;
        let rank_tables = root
            .tables("rank_table")?
            .iter()
            .map(|s| read_rank_table(s, &params, &metrics, &known))
            .collect::<Result<Vec<_>, _>>()?;
        let front_tables = root
            .tables("front_table")?
            .iter()
            .map(|s| read_front_table(s, &params, &metrics, &known))
            .collect::<Result<Vec<_>, _>>()?;
        let score_tables = root
            .tables("score_table")?
            .iter()
            .map(|s| read_score_table(s, &params, &metrics))
            .collect::<Result<Vec<_>, _>>()?;
        let guidance = root
            .tables("guidance")?
            .iter()
            .map(|s| read_guidance(s, &params, &metrics, &known))
            .collect::<Result<Vec<_>, _>>()?;
        root.finish()?;

        let spec = Spec {
            file: path.to_path_buf(),
            source: source.to_string(),
            name,
            kind: kind_name,
            seed,
            title,
            description,
            paper,
            notes,
            sweep,
            plots,
            tables,
            parallel_cells,
            claims,
            paper_values,
            best_tables,
            rank_tables,
            front_tables,
            score_tables,
            guidance,
            quick,
            runner,
            run_guard: kinds.run_guard(),
            kernels_name: kinds.kernels_name(),
            backend,
            backend_chosen,
        };
        Ok((spec, has_quick))
    }

    /// Every cell of the sweep, in order (the first axis varies slowest).
    pub fn cells(&self) -> Vec<Cell> {
        let total: usize = self.sweep.iter().map(|a| a.values.len()).product();
        (0..total)
            .map(|index| {
                let mut rest = index;
                let mut params = vec![(String::new(), Value::Int(0)); self.sweep.len()];
                for (slot, axis) in params.iter_mut().zip(&self.sweep).rev() {
                    let n = axis.values.len();
                    *slot = (axis.name.clone(), axis.values[rest % n].clone());
                    rest /= n;
                }
                Cell {
                    index,
                    params,
                    experiment_seed: self.seed,
                }
            })
            .collect()
    }

    /// A fingerprint of everything that determines cell results besides the cell parameters: the seed, the
    /// kind, the runner's settings and a backend other than the default.
    pub fn fingerprint(&self) -> String {
        let mut what = format!("{}|{}", self.kind, self.runner.settings());
        if self.backend_chosen {
            what.push_str(&format!("|backend={}", self.backend));
        }
        format!("{:016x}", rfx_core::stream_seed(self.seed, &what))
    }
}

fn read_sweep(root: &Section<'_, '_>, kind: &dyn Kind) -> Result<Vec<Axis>, ConfigError> {
    let sweep = root
        .table("sweep")?
        .ok_or_else(|| root.error("sweep", "missing required table [sweep]"))?;
    let specs = kind.sweep_params();
    // Mark every known parameter, so that finish() lists them all for an unknown key.
    for p in &specs {
        sweep.has(p.name);
    }
    sweep.has("seed");
    let mut axes = Vec::new();
    for key in sweep.keys() {
        let spec = specs.iter().find(|p| p.name == key);
        if spec.is_none() && key != "seed" {
            continue; // reported by finish() below, with the allowed keys
        }
        let items = sweep.list(&key)?.unwrap_or_default();
        if items.is_empty() {
            return Err(sweep.error(&key, "empty sweep list; give at least one value"));
        }
        if items.len() > MAX_CELLS {
            return Err(sweep.error(
                &key,
                format!(
                    "{} values: the sweep would have at least {} cells, more than the {MAX_CELLS} an \
                     experiment may have",
                    items.len(),
                    items.len()
                ),
            ));
        }
        let mut values = Vec::with_capacity(items.len());
        // A value names a cell by its text (`seed=1`): 1 and 1.0 (or "1") are the same cell, and so are
        // numbers that compare equal (0.0 and -0.0).
        let mut seen_text: HashMap<String, usize> = HashMap::new();
        let mut seen_number: HashMap<u64, usize> = HashMap::new();
        for (v, span) in items {
            let number = v
                .as_f64()
                .map(|x| if x == 0.0 { 0.0f64 } else { x }.to_bits());
            let first = seen_text
                .get(&v.to_string())
                .or_else(|| number.and_then(|n| seen_number.get(&n)))
                .copied();
            if let Some(i) = first {
                let (now, before) = (literal(&v), literal(&values[i]));
                let as_before = if now == before {
                    String::new()
                } else {
                    format!(" (as {before} before)")
                };
                return Err(sweep.error_span(
                    span,
                    &key,
                    format!("value {now} listed twice{as_before}: each value names one cell"),
                ));
            }
            let check = match spec {
                Some(p) => (p.check)(&v).map_err(|m| format!("{m} ({})", p.allowed)),
                None => check_int(&v, 0, i64::from(u32::MAX)),
            };
            if let Err(m) = check {
                return Err(sweep.error_span(span, &key, m));
            }
            seen_text.insert(v.to_string(), values.len());
            if let Some(n) = number {
                seen_number.insert(n, values.len());
            }
            values.push(v);
        }
        axes.push(Axis { name: key, values });
    }
    let cells = axes
        .iter()
        .fold(1u128, |n, a| n.saturating_mul(a.values.len() as u128));
    if cells > MAX_CELLS as u128 {
        let sizes: Vec<String> = axes
            .iter()
            .map(|a| format!("{} {}", a.values.len(), a.name))
            .collect();
        return Err(root.error(
            "sweep",
            format!(
                "the sweep has {cells} cells ({}), more than the {MAX_CELLS} an experiment may have; \
                 shorten the lists or split the experiment",
                sizes.join(" × ")
            ),
        ));
    }
    for p in &specs {
        if p.required && !axes.iter().any(|a| a.name == p.name) {
            return Err(sweep.error(
                p.name,
                format!("missing required sweep list ({})", p.allowed),
            ));
        }
    }
    sweep.finish()?;
    Ok(axes)
}

/// The values a filter, a table's `column_values` or a paper value may name, per sweep parameter: the
/// sweep's, and in the quick variant also the full sweep's (`full`).
fn known_values(sweep: &[Axis], full: Option<&[Axis]>) -> Vec<Axis> {
    sweep
        .iter()
        .map(|a| {
            let mut values = a.values.clone();
            if let Some(f) = full.and_then(|f| f.iter().find(|f| f.name == a.name)) {
                for v in &f.values {
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            Axis {
                name: a.name.clone(),
                values,
            }
        })
        .collect()
}

/// A value as written in TOML (`1`, `1.0`, `"1"`, `true`), so that messages tell 1 from 1.0 and "1".
fn literal(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::Str(s) => format!("{s:?}"),
        Value::Bool(b) => b.to_string(),
    }
}

/// Checks that `v` (at `span`, under `key` of `s`) is a value of sweep parameter `param` in `known`; the
/// runner matches values exactly (1 and 1.0 differ), so a value not in the sweep would select nothing.
fn need_value(
    s: &Section<'_, '_>,
    key: &str,
    span: std::ops::Range<usize>,
    param: &str,
    v: &Value,
    known: &[Axis],
) -> Result<(), ConfigError> {
    let Some(axis) = known.iter().find(|a| a.name == param) else {
        return Ok(()); // not a sweep parameter: reported by need_param
    };
    if axis.values.contains(v) {
        return Ok(());
    }
    let mut shown: Vec<String> = axis.values.iter().take(20).map(literal).collect();
    if axis.values.len() > 20 {
        shown.push(format!("… ({} values)", axis.values.len()));
    }
    Err(s.error_span(
        span,
        key,
        format!(
            "{} is not a value of sweep.{param}, so it would select nothing; allowed: {}",
            literal(v),
            shown.join(", ")
        ),
    ))
}

pub(crate) fn need_param(
    s: &Section<'_, '_>,
    key: &str,
    value: &str,
    params: &[String],
) -> Result<(), ConfigError> {
    if params.iter().any(|p| p == value) {
        Ok(())
    } else {
        Err(s.error(
            key,
            format!(
                "\"{value}\" is not a sweep parameter; allowed: {}",
                params.join(", ")
            ),
        ))
    }
}

pub(crate) fn need_metric(
    s: &Section<'_, '_>,
    key: &str,
    value: &str,
    metrics: &[String],
) -> Result<(), ConfigError> {
    if metrics.iter().any(|p| p == value) {
        Ok(())
    } else {
        Err(s.error(
            key,
            format!(
                "\"{value}\" is not a metric of this kind; allowed: {}",
                metrics.join(", ")
            ),
        ))
    }
}

fn read_plot(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<PlotSpec, ConfigError> {
    let x = s.req_str("x")?;
    let x_is_metric = !params.contains(&x) && metrics.contains(&x);
    if !x_is_metric && !params.contains(&x) {
        return Err(s.error(
            "x",
            format!(
                "\"{x}\" is neither a sweep parameter nor a metric; allowed: sweep parameters {}; metrics {}",
                params.join(", "),
                metrics.join(", ")
            ),
        ));
    }
    if let Some(a) = sweep.iter().find(|a| a.name == x) {
        if let Some(bad) = a.values.iter().find(|v| v.as_f64().is_none()) {
            return Err(s.error(
                "x",
                format!(
                    "the x axis needs numbers, but sweep.{x} has the value \"{bad}\"; use a numeric sweep parameter \
                     or a metric (a text parameter can be `series` or `panels`, or shown in a [table])"
                ),
            ));
        }
    }
    let ys: Vec<String> = match s.value("y").map(|v| v.get_ref()) {
        Some(toml::de::DeValue::Array(_)) => s.opt_str_list("y")?.unwrap_or_default(),
        _ => vec![s.req_str("y")?],
    };
    if ys.is_empty() {
        return Err(s.error("y", "expected a metric or a non-empty list of metrics"));
    }
    for y in &ys {
        need_metric(s, "y", y, metrics)?;
    }
    let y = ys[0].clone();
    let y_more = ys[1..].to_vec();
    let series = s.opt_str("series")?;
    if let Some(v) = &series {
        need_param(s, "series", v, params)?;
    }
    let panels: Vec<String> = match s.value("panels").map(|v| v.get_ref()) {
        None => Vec::new(),
        Some(toml::de::DeValue::Array(_)) => s.opt_str_list("panels")?.unwrap_or_default(),
        Some(_) => s.opt_str("panels")?.into_iter().collect(),
    };
    for v in &panels {
        need_param(s, "panels", v, params)?;
    }
    let figures = s.opt_str("figures")?;
    if let Some(v) = &figures {
        if *v == x || Some(v) == series.as_ref() || panels.contains(v) || v == "seed" {
            return Err(s.error(
                "figures",
                format!(
                    "`{v}` is already plot.x, plot.series, plot.panels or the seed; name another sweep parameter"
                ),
            ));
        }
        need_param(s, "figures", v, params)?;
    }
    let mut along: Option<&str> = None;
    for a in sweep {
        let used = a.name == x
            || Some(&a.name) == series.as_ref()
            || panels.contains(&a.name)
            || Some(&a.name) == figures.as_ref();
        if used || a.name == "seed" || a.values.len() < 2 {
            continue;
        }
        if x_is_metric && along.is_none() {
            along = Some(&a.name); // its values are the points along each curve
            continue;
        }
        let hint = if x_is_metric {
            format!(
                "with a metric on x only one varying parameter (here `{}`) may be left off plot.series and \
                 plot.panels",
                along.unwrap_or_default()
            )
        } else {
            "map it to one of them".to_string()
        };
        return Err(s.error(
            "x",
            format!(
                "sweep parameter `{}` has {} values but is none of plot.x, plot.series, plot.panels, \
                 plot.figures; {hint}",
                a.name,
                a.values.len()
            ),
        ));
    }
    let zoom = s.opt_str_list("zoom")?.unwrap_or_default();
    if !zoom.is_empty() {
        let Some(axis) = series
            .as_ref()
            .and_then(|name| sweep.iter().find(|a| &a.name == name))
        else {
            return Err(s.error("zoom", "zoom names series values: set plot.series first"));
        };
        for z in &zoom {
            if !axis.values.contains(&Value::Str(z.clone())) {
                let allowed: Vec<String> = axis.values.iter().map(literal).collect();
                return Err(s.error(
                    "zoom",
                    format!(
                        "{z:?} is not a value of sweep.{}; allowed: {}",
                        axis.name,
                        allowed.join(", ")
                    ),
                ));
            }
        }
    }
    let labels = match s.table("labels")? {
        Some(t) => {
            let mut out = Vec::new();
            for k in t.keys() {
                out.push((k.clone(), t.req_str(&k)?));
            }
            t.finish()?;
            out
        }
        None => Vec::new(),
    };
    let spec = PlotSpec {
        title: s.req_str("title")?,
        x_label: s.req_str("x_label")?,
        y_label: s.req_str("y_label")?,
        log_x: s.opt_bool("log_x")?.unwrap_or(false),
        log_y: s.opt_bool("log_y")?.unwrap_or(false),
        y_one_minus: s.opt_bool("y_one_minus")?.unwrap_or(false),
        legend: s
            .opt_choice("legend", &LEGEND_POSITIONS)?
            .unwrap_or_else(|| LEGEND_POSITIONS[0].to_string()),
        legend_panel: s.opt_int("legend_panel", 1, 64)?.map(|v| v as usize),
        x,
        x_is_metric,
        y,
        y_more,
        series,
        panels,
        labels,
        figures,
        zoom,
        filter: read_filter(s, "where", params, known)?,
        name: match s.opt_str("name")? {
            Some(n) if !is_safe_name(&n) => {
                return Err(s.error(
                    "name",
                    format!("\"{n}\" is not a file name part; allowed: lowercase letters, digits, '-' and '_'"),
                ))
            }
            n => n,
        },
    };
    s.finish()?;
    Ok(spec)
}

/// `[plot]` (one plot) or `[[plot]]` (several; every one after the first needs its own `name`, and names are
/// distinct, so that no two plots write the same files); none when absent.
fn read_plots(
    root: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<Vec<PlotSpec>, ConfigError> {
    let is_array = matches!(
        root.value("plot").map(|v| v.get_ref()),
        Some(toml::de::DeValue::Array(_))
    );
    if !is_array {
        return Ok(match root.table("plot")? {
            Some(s) => vec![read_plot(&s, params, metrics, sweep, known)?],
            None => Vec::new(),
        });
    }
    let sections = root.tables("plot")?;
    let mut out: Vec<PlotSpec> = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        let p = read_plot(s, params, metrics, sweep, known)?;
        if i > 0 && p.name.is_none() {
            return Err(s.error(
                "name",
                "every [[plot]] after the first needs a name (its files are <experiment>-<name>.png)",
            ));
        }
        if out.iter().any(|q| q.name == p.name) {
            return Err(s.error(
                "name",
                "two plots with the same name would write the same files",
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// `[table]` (one table) or `[[table]]` (an array of tables); none when absent.
fn read_tables(
    root: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<Vec<TableSpec>, ConfigError> {
    let is_array = matches!(
        root.value("table").map(|v| v.get_ref()),
        Some(toml::de::DeValue::Array(_))
    );
    if is_array {
        root.tables("table")?
            .iter()
            .map(|s| read_table(s, params, metrics, known))
            .collect()
    } else {
        Ok(match root.table("table")? {
            Some(s) => vec![read_table(&s, params, metrics, known)?],
            None => Vec::new(),
        })
    }
}

fn read_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<TableSpec, ConfigError> {
    let rows = s
        .opt_str_list("rows")?
        .ok_or_else(|| s.error("rows", "missing required key (a list of sweep parameters)"))?;
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let columns = s.req_str("columns")?;
    need_param(s, "columns", &columns, params)?;
    let value = s.req_str("value")?;
    need_metric(s, "value", &value, metrics)?;
    let column_values = match s.list("column_values")? {
        None => None,
        Some(items) => {
            for (v, span) in &items {
                need_value(s, "column_values", span.clone(), &columns, v, known)?;
            }
            Some(items.into_iter().map(|(v, _)| v).collect())
        }
    };
    let digits = s.opt_int("digits", 1, 12)?.unwrap_or(3) as usize;
    let format = match s.opt_choice("format", &["sci", "fixed"])?.as_deref() {
        Some("fixed") => NumFormat::Fixed(digits),
        _ => NumFormat::Sci(digits),
    };
    let spec = TableSpec {
        caption: s.opt_str("caption")?.unwrap_or_default(),
        rows,
        columns,
        column_values,
        value,
        format,
        show_paper: s.opt_bool("show_paper")?.unwrap_or(false),
        filter: read_filter(s, "where", params, known)?,
    };
    s.finish()?;
    Ok(spec)
}

/// Whether `v` (a value's text) is one of a filter's listed values, compared as written.
pub(crate) fn listed(vals: &[Value], v: &str) -> bool {
    vals.iter().any(|w| w.to_string() == v)
}

pub(crate) fn read_filter(
    s: &Section<'_, '_>,
    key: &str,
    params: &[String],
    known: &[Axis],
) -> Result<Vec<(String, Vec<Value>)>, ConfigError> {
    let Some(t) = s.table(key)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for k in t.keys() {
        need_param(&t, &k, &k, params)?;
        let items = t.list(&k)?.unwrap_or_default();
        for (v, span) in &items {
            need_value(&t, &k, span.clone(), &k, v, known)?;
        }
        let vals = items.into_iter().map(|(v, _)| v).collect();
        out.push((k, vals));
    }
    t.finish()?;
    Ok(out)
}

fn read_best_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<BestTableSpec, ConfigError> {
    let rows = s
        .opt_str_list("rows")?
        .ok_or_else(|| s.error("rows", "missing required key (a list of sweep parameters)"))?;
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    let mut columns = Vec::new();
    for c in s.tables("column")? {
        let metric = c.req_str("metric")?;
        need_metric(&c, "metric", &metric, metrics)?;
        let better = match c.opt_choice("better", &["lower", "higher"])?.as_deref() {
            Some("higher") => Better::Higher,
            _ => Better::Lower,
        };
        columns.push(BestColumn {
            label: c.req_str("label")?,
            metric,
            better,
            filter: read_filter(&c, "where", params, known)?,
        });
        c.finish()?;
    }
    if columns.is_empty() {
        return Err(s.error(
            "column",
            "a best_table needs at least one [[best_table.column]] (label, metric, better, where)",
        ));
    }
    let caption = s.opt_str("caption")?.unwrap_or_default();
    let tally = s.opt_bool("tally")?.unwrap_or(false);
    s.finish()?;
    Ok(BestTableSpec {
        caption,
        rows,
        by,
        alpha,
        filter,
        columns,
        tally,
    })
}

fn read_rank_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<RankTableSpec, ConfigError> {
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    if rows.contains(&by) {
        return Err(s.error(
            "by",
            format!("`{by}` is also one of rows; rank another parameter"),
        ));
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(RankTableSpec {
        caption,
        rows,
        by,
        metric,
        better,
        alpha,
        filter,
    })
}

fn read_front_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<FrontTableSpec, ConfigError> {
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let along = s.opt_str("along")?;
    if let Some(a) = &along {
        need_param(s, "along", a, params)?;
    }
    let cost = s.req_str("cost")?;
    need_metric(s, "cost", &cost, metrics)?;
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let filter = read_filter(s, "where", params, known)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(FrontTableSpec {
        caption,
        rows,
        by,
        along,
        cost,
        metric,
        better,
        filter,
    })
}

fn read_guidance(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<GuidanceSpec, ConfigError> {
    let question = s.req_str("question")?;
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let along = s.opt_str("along")?;
    if let Some(a) = &along {
        need_param(s, "along", a, params)?;
        if rows.contains(a) {
            return Err(s.error("along", format!("`{a}` is also one of rows")));
        }
    }
    let a = read_filter(s, "a", params, known)?;
    if a.is_empty() {
        return Err(s.error(
            "a",
            "missing required key: group A's cells, e.g. a = { method = [\"nystrom\"] }",
        ));
    }
    let b = if s.has("b") {
        let b = read_filter(s, "b", params, known)?;
        if b.is_empty() {
            return Err(s.error(
                "b",
                "group B's filter is empty (leave b out for every cell not in A)",
            ));
        }
        Some(b)
    } else {
        None
    };
    for (k, _) in a.iter().chain(b.iter().flatten()) {
        if rows.contains(k) || along.as_ref() == Some(k) {
            return Err(s.error(
                "a",
                format!("the groups' parameter `{k}` is also in rows or along; filter those with `where`"),
            ));
        }
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let costs = s.opt_str_list("costs")?.unwrap_or_default();
    for c in &costs {
        need_metric(s, "costs", c, metrics)?;
    }
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    s.finish()?;
    Ok(GuidanceSpec {
        question,
        rows,
        along,
        a,
        b,
        metric,
        better,
        costs,
        alpha,
        filter,
    })
}

fn read_score_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
) -> Result<ScoreTableSpec, ConfigError> {
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let over = s.req_str("over")?;
    need_param(s, "over", &over, params)?;
    if over == by {
        return Err(s.error("over", "must differ from `by`"));
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(ScoreTableSpec {
        caption,
        by,
        over,
        metric,
    })
}

fn read_paper_value(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<PaperValue, ConfigError> {
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let value = s
        .opt_float("value", f64::MIN, f64::MAX)?
        .ok_or_else(|| s.error("value", "missing required key (a number)"))?;
    let source = match s.opt_str("source")?.as_deref() {
        Some("paper") => PaperSource::Paper,
        Some("authors-code") => PaperSource::AuthorsCode,
        Some("derived") => PaperSource::Derived,
        Some(other) => {
            return Err(s.error(
                "source",
                format!(
                    "unknown value \"{other}\"; allowed: {} (a free-text source, as files before issue 25 \
                     wrote it, goes to `ref`, with `same_task` added)",
                    PAPER_SOURCES.join(", ")
                ),
            ))
        }
        None => {
            return Err(s.error(
                "source",
                format!(
                    "missing required key; allowed: {} (the paper's text, table or figure; the authors' \
                     code or notebook; computed by us)",
                    PAPER_SOURCES.join(", ")
                ),
            ))
        }
    };
    let reference = s.opt_str("ref")?.filter(|r| !r.trim().is_empty());
    let how = s.opt_str("how")?.filter(|h| !h.trim().is_empty());
    match source {
        PaperSource::Paper if reference.is_none() => {
            return Err(s.error(
                "ref",
                "missing required key for source = \"paper\" (the table, figure or section, e.g. \"Table 1\" \
                 or \"read off Figure 3\")",
            ))
        }
        PaperSource::AuthorsCode if reference.is_none() => {
            return Err(s.error(
                "ref",
                "missing required key for source = \"authors-code\" (the repository, notebook or file)",
            ))
        }
        PaperSource::Derived if how.is_none() => {
            return Err(s.error(
                "how",
                "missing required key for source = \"derived\" (how the number was obtained)",
            ))
        }
        _ => {}
    }
    let same_task = s.opt_bool("same_task")?.ok_or_else(|| {
        s.error(
            "same_task",
            "missing required key (true or false: the same data set and sizes n, m and test set as our cell)",
        )
    })?;
    let differs = s.opt_str("differs")?.filter(|d| !d.trim().is_empty());
    if !same_task && differs.is_none() {
        return Err(s.error(
            "differs",
            "missing required key for same_task = false (why our task is not the one the number was measured on)",
        ));
    }
    if same_task && differs.is_some() {
        return Err(s.error(
            "differs",
            "given with same_task = true; say how the task differs only with same_task = false",
        ));
    }
    let cell = read_filter(s, "cell", params, known)?
        .into_iter()
        .map(|(k, mut v)| {
            if v.len() == 1 {
                Ok((k, v.remove(0)))
            } else {
                Err(s.error("cell", format!("`cell.{k}` must be a single value")))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    s.finish()?;
    Ok(PaperValue {
        cell,
        metric,
        value,
        source,
        reference,
        how,
        same_task,
        differs,
    })
}

/// Reads a `[[claim]]` section.
fn read_claim(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    item_columns: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<ClaimSpec, ConfigError> {
    let text = s.req_str("text")?;
    let quote = s.req_str("quote")?;
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let axis_values: Vec<String> = sweep
        .iter()
        .find(|a| a.name == by)
        .map(|a| a.values.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let raw = s.value("order").ok_or_else(|| {
        s.error(
            "order",
            "missing required key (groups of values from best to worst)",
        )
    })?;
    let mut order: Vec<Vec<String>> = Vec::new();
    let items: Vec<_> = match raw.get_ref() {
        toml::de::DeValue::Array(a) => a.iter().collect(),
        _ => {
            return Err(s.error(
                "order",
                "expected an array of values or of arrays of values",
            ))
        }
    };
    for item in items {
        let group: Vec<String> = match item.get_ref() {
            toml::de::DeValue::Array(g) => g
                .iter()
                .map(|v| s.scalar("order", v).map(|v| v.to_string()))
                .collect::<Result<_, _>>()?,
            _ => vec![s.scalar("order", item)?.to_string()],
        };
        if group.is_empty() {
            return Err(s.error_in("order", item, "an empty group"));
        }
        for g in &group {
            if !axis_values.contains(g) {
                return Err(s.error_in(
                    "order",
                    item,
                    format!(
                        "\"{g}\" is not a value of sweep.{by}; allowed: {}",
                        axis_values.join(", ")
                    ),
                ));
            }
            if order.iter().flatten().any(|o| o == g)
                || group.iter().filter(|x| *x == g).count() > 1
            {
                return Err(s.error_in("order", item, format!("\"{g}\" appears twice")));
            }
        }
        order.push(group);
    }
    if order.len() < 2 {
        return Err(s.error("order", "a claim orders at least two groups"));
    }
    let filter = read_filter(s, "where", params, known)?;
    let group = match s.opt_choice("group", &["all", "any", "mean"])?.as_deref() {
        Some("any") => GroupMode::Any,
        Some("mean") => GroupMode::Mean,
        _ => GroupMode::All,
    };
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let margin = || -> Result<Margin, ConfigError> {
        match (
            s.opt_float("margin", 0.0, f64::MAX)?,
            s.opt_float("margin_rel", 0.0, 10.0)?,
        ) {
            (Some(d), None) => Ok(Margin::Abs(d)),
            (None, Some(r)) => Ok(Margin::Rel(r)),
            (Some(_), Some(_)) => Err(s.error("margin_rel", "give `margin` or `margin_rel`, not both")),
            (None, None) => Err(s.error(
                "margin",
                "missing required key for this test (`margin` in the metric's units, or `margin_rel`, a fraction)",
            )),
        }
    };
    let test = match s
        .opt_choice("test", &["order", "equivalent", "not-worse", "ratio"])?
        .as_deref()
    {
        Some("equivalent") => ClaimTest::Equivalent(margin()?),
        Some("not-worse") => ClaimTest::NotWorse(margin()?),
        Some("ratio") => {
            let factor = s.opt_float("factor", 1.0, 1e12)?.ok_or_else(|| {
                s.error(
                    "factor",
                    "missing required key for test = \"ratio\" (the paper's factor, ≥ 1)",
                )
            })?;
            let reading = match s
                .opt_choice("factor_reading", &["up-to", "at-least", "about"])?
                .as_deref()
            {
                Some("up-to") => FactorReading::UpTo,
                Some("at-least") => FactorReading::AtLeast,
                Some(_) => FactorReading::About,
                None => return Err(s.error(
                    "factor_reading",
                    "missing required key for test = \"ratio\"; allowed: up-to, at-least, about",
                )),
            };
            let tolerance = s.opt_float("factor_tolerance", 1.0, 1e6)?.unwrap_or(2.0);
            ClaimTest::Ratio {
                factor,
                reading,
                tolerance,
            }
        }
        _ => ClaimTest::Order,
    };
    if !matches!(test, ClaimTest::Equivalent(_) | ClaimTest::NotWorse(_)) {
        for k in ["margin", "margin_rel"] {
            if s.value(k).is_some() {
                return Err(s.error(k, "only for test = \"equivalent\" or \"not-worse\""));
            }
        }
    }
    if !matches!(test, ClaimTest::Ratio { .. }) {
        for k in ["factor", "factor_reading", "factor_tolerance"] {
            if s.value(k).is_some() {
                return Err(s.error(k, "only for test = \"ratio\""));
            }
        }
    }
    let exact = s.opt_bool("exact")?.unwrap_or(false);
    let binomial_n = s.opt_int("binomial_n", 1, i64::MAX)?.map(|n| n as u64);
    if exact && binomial_n.is_some() {
        return Err(s.error(
            "binomial_n",
            "`exact` metrics have no sampling noise: give one of `exact`, `binomial_n`",
        ));
    }
    let items = s.opt_str("items")?;
    if let Some(name) = &items {
        if !item_columns.contains(name) {
            return Err(s.error(
                "items",
                if item_columns.is_empty() {
                    format!("\"{name}\": this kind records no per-item outcomes")
                } else {
                    format!(
                        "\"{name}\" is not an item column of this kind; allowed: {}",
                        item_columns.join(", ")
                    )
                },
            ));
        }
        for (key, why) in [
            (
                "binomial_n",
                "the paired test over the items replaces the binomial spread",
            ),
            (
                "exact",
                "per-item outcomes are a sample of test items, not exact values",
            ),
            ("at", "equal-budget claims interpolate means, not items"),
        ] {
            if s.value(key).is_some() {
                return Err(s.error(key, format!("not with `items`: {why}")));
            }
        }
    }
    let budget = match (s.opt_str("at")?, s.opt_str("along")?) {
        (None, None) => None,
        (Some(at), Some(along)) => {
            need_metric(s, "at", &at, metrics)?;
            need_param(s, "along", &along, params)?;
            if along == by || along == "seed" {
                return Err(s.error("along", "must be a parameter other than `by` and `seed`"));
            }
            Some(EqualBudget { at, along })
        }
        (Some(_), None) => {
            return Err(s.error(
                "at",
                "`at` needs `along` (the parameter that traces each curve)",
            ))
        }
        (None, Some(_)) => {
            return Err(s.error("along", "`along` needs `at` (the metric to compare at)"))
        }
    };
    let replicate = s.opt_str("replicate")?.unwrap_or_else(|| "seed".into());
    if replicate != "seed" {
        need_param(s, "replicate", &replicate, params)?;
        if replicate == by || budget.is_some() {
            return Err(s.error(
                "replicate",
                "must differ from `by`, and equal-budget claims (`at`) pair over seeds only",
            ));
        }
    }
    let timing = s.opt_bool("timing")?.unwrap_or(metric.ends_with("_s"));
    let scale = match s.opt_choice("scale", &["linear", "log"])?.as_deref() {
        Some("log") => Scale::Log,
        _ => Scale::Linear,
    };
    if scale == Scale::Log {
        if !matches!(test, ClaimTest::Order | ClaimTest::Ratio { .. }) {
            return Err(s.error(
                "scale",
                "scale = \"log\" is for test = \"order\" or \"ratio\" (margins are in the metric's units)",
            ));
        }
        for (key, why) in [
            (
                "binomial_n",
                "the binomial spread is on the accuracy's own scale",
            ),
            ("items", "per-item outcomes are on the accuracy's own scale"),
        ] {
            if s.value(key).is_some() {
                return Err(s.error("scale", format!("scale = \"log\" not with `{key}`: {why}")));
            }
        }
    }
    let best = s.opt_bool("best")?.unwrap_or(false);
    if best && (order.len() != 2 || test != ClaimTest::Order) {
        return Err(s.error(
            "best",
            "best = true needs test = \"order\" and two groups: the members claimed best, then the others",
        ));
    }
    s.finish()?;
    Ok(ClaimSpec {
        text,
        quote,
        metric,
        better,
        by,
        order,
        filter,
        group,
        test,
        alpha,
        exact,
        binomial_n,
        items,
        replicate,
        budget,
        timing,
        scale,
        best,
    })
}
