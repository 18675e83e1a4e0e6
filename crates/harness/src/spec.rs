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

use crate::claims::ClaimSpec;
use crate::config::{ConfigError, Doc, Section, Value};
use crate::kind::{check_int, Cell, Kind, Kinds, RunGuard, Runner};

mod presentation;
pub use presentation::*;
use presentation::{
    read_best_table, read_claim, read_front_table, read_guidance, read_paper_value, read_plots,
    read_rank_table, read_score_table, read_tables,
};

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
    /// The application's colours of series values ([`Kinds::with_series_colours`]).
    pub series_colours: Option<crate::kind::SeriesColours>,
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
    /// The colour the application gives the series value `key` of this experiment's kind
    /// ([`Kinds::with_series_colours`]), if any.
    pub fn series_colour(&self, key: &str) -> Option<usize> {
        self.series_colours.and_then(|f| f(&self.kind, key))
    }

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
        // templates may also read the timing columns (`time_s` and the kind's own)
        let mut columns = metrics.clone();
        columns.push("time_s".to_string());
        columns.extend(runner.timings());
        crate::prose::check(&notes, claims.len(), &params, &columns, &known_values)
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
            series_colours: kinds.series_colours(),
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
