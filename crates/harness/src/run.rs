//! The resumable, parallel sweep runner.
//!
//! * Cells run in parallel on a rayon pool of `--threads` workers, or one after another (each using the
//!   whole pool) when the experiment sets `parallel_cells = false`; OpenBLAS runs on one thread in both
//!   modes, so that cells do not depend on the thread count.
//! * Each cell gets its own RNG stream `rng_stream(seed, cell.key())`, so its metrics do not depend on the
//!   thread count or on the order in which cells run.
//! * Each finished cell is appended to `cells.csv` as one line and flushed; a rerun reads the file, drops
//!   a line cut off by a kill, and computes only the missing cells.
//! * When all cells are done, `cells.csv` is rewritten in sweep order (atomically), so that the file is
//!   identical, timings aside, whatever the thread count or the interruptions.
//! * `summary.csv`, the plot, the table and the manifest are written atomically afterwards.
//! * With a deadline (`--time-limit`) no cell starts after it; the outputs are then written from the cells
//!   present and marked partial ([`crate::outputs::partial_note`]), and a later run computes the rest.
//!
//! The files go where [`ResultsFolder`] says; what is derived from the cells is [`outputs::write_all`]'s.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::error::AppError;
use crate::folder::{Earlier, ResultsFolder};
use crate::io::{utc_now, write_atomic};
use crate::kind::{Cell, CellError, CellOutput};
use crate::plan::{Plan, Shard};
use crate::results::{cells_file_text, cells_present, csv_line, sort_in_sweep_order, Layout, Row};
use crate::spec::Spec;
use crate::{outputs, VERSION};

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Directory that holds one folder per experiment.
    pub results_root: PathBuf,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// Discard earlier cells computed with other settings instead of refusing to run.
    pub fresh: bool,
    /// Show a progress bar (when stderr is a terminal).
    pub progress: bool,
    /// Start no cell after this instant (`--time-limit`): the cells finished by then are kept and the outputs
    /// are written from them, marked partial; the same command later computes the rest.
    pub deadline: Option<Instant>,
    /// Compute only the cells with these keys (`rfx verify`'s sample); `None`: the whole sweep.
    pub only: Option<HashSet<String>>,
    /// Write summary, plot, table, report and manifest after the cells (`false` for `rfx verify`, which
    /// only needs the cells).
    pub write_outputs: bool,
    /// Expected seconds per cell key (recorded times of an earlier run, [`crate::verify::recorded_times`]): the progress
    /// bar's ETA follows them instead of the mean rate, which misleads when cells differ in cost.
    pub expected: Option<HashMap<String, f64>>,
    /// Run only this shard of the sweep ([`run_shard`]).
    pub shard: Option<Shard>,
}

impl RunOptions {
    /// Options for a run into `results_root` with defaults: all cores, no deadline, the whole sweep, every
    /// output, a progress bar.
    pub fn new(results_root: PathBuf) -> RunOptions {
        RunOptions {
            results_root,
            threads: None,
            fresh: false,
            progress: true,
            deadline: None,
            only: None,
            write_outputs: true,
            expected: None,
            shard: None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Cells in the sweep.
    pub total: usize,
    /// Cells computed by this run.
    pub computed: usize,
    /// Cells found finished in `cells.csv`.
    pub reused: usize,
    /// Cells skipped with a note (e.g. above the memory cap).
    pub skipped: usize,
    /// Cells of the sweep still to compute because the time limit was reached (0 for a complete run).
    pub remaining: usize,
    /// Wall time of this run in seconds.
    pub wall_s: f64,
    /// The experiment's results folder.
    pub dir: PathBuf,
}

/// Runs (or resumes) the sweep of `spec` and writes every output; with `opts.shard`, runs that shard only
/// ([`run_shard`], which writes no outputs).
pub fn run(spec: &Spec, opts: &RunOptions) -> Result<RunReport, AppError> {
    if let Some(shard) = opts.shard {
        return run_shard(spec, opts, shard).map(|r| r.run);
    }
    let started = Instant::now();
    let run_info = RunInfo::now();
    let provenance = run_info.provenance();
    let folder = ResultsFolder::of(&opts.results_root, spec);
    let dir = folder.dir().to_path_buf();
    // Held until the run returns (or the process ends): a second run into this folder is refused.
    let _lock = folder.lock()?;
    let layout = Layout::of(spec);
    let cells_path = folder.cells();
    let fp_path = folder.fingerprint();
    let fingerprint = spec.fingerprint();

    // Earlier cells: reuse them only if they were computed with the same settings and columns.
    let earlier = folder.earlier_cells(spec, &layout)?;
    if cells_path.exists() && !cells_path.is_file() {
        return Err(AppError::usage(earlier.problem));
    }
    let existing: Vec<Row> = match earlier.state {
        Earlier::Different | Earlier::NoFingerprint | Earlier::Damaged if !opts.fresh => {
            return Err(AppError::usage(format!(
                "{}; rerun with --fresh to discard them, or pass --out DIR to write elsewhere",
                earlier.problem
            )));
        }
        Earlier::Same => {
            if !earlier.dropped.is_empty() {
                eprintln!("{}", dropped_warning(&cells_path, &earlier.dropped));
            }
            earlier.rows
        }
        _ => Vec::new(),
    };
    // Start the file afresh with the valid rows (removes a cut-off line), then append new cells.
    let text = cells_file_text(&layout, &existing);
    write_atomic(&fp_path, fingerprint.as_bytes()).map_err(|e| setup_error(&fp_path, e))?;
    write_atomic(&cells_path, text.as_bytes()).map_err(|e| setup_error(&cells_path, e))?;

    let cells = spec.cells();
    let done: std::collections::HashSet<String> = existing.iter().map(|r| r.key(&layout)).collect();
    let pending = still_to_compute(cells.iter(), &done, opts.only.as_ref());
    let reused = cells.iter().filter(|c| done.contains(&c.key())).count();
    let not_asked = cells.len() - reused - pending.len();

    let new_rows = compute_cells(spec, opts, &layout, &pending, &cells_path, &provenance)?;
    let computed = new_rows.len();

    // Canonical order: the sweep's cells first, in sweep order; rows of cells no longer in the sweep after.
    let mut all: Vec<Row> = existing.into_iter().chain(new_rows).collect();
    let order: HashMap<String, usize> = cells.iter().map(|c| (c.key(), c.index)).collect();
    sort_in_sweep_order(&mut all, &layout, &order);
    let text = cells_file_text(&layout, &all);
    write_atomic(&cells_path, text.as_bytes()).map_err(|e| AppError::io(&cells_path, e))?;

    let skipped = all
        .iter()
        .filter(|r| order.contains_key(&r.key(&layout)) && !r.note(&layout).is_empty())
        .count();
    let wall_s = started.elapsed().as_secs_f64();
    let report = RunReport {
        total: cells.len(),
        computed,
        reused,
        skipped,
        remaining: pending.len() - computed + not_asked,
        wall_s,
        dir: dir.clone(),
    };
    if opts.write_outputs {
        write_config_and_manifest(spec, &folder, &report, &run_info, opts)?;
        outputs::write_all(spec, &folder, &layout, &all)?;
    }
    Ok(report)
}

/// What a shard run did.
#[derive(Debug, Clone)]
pub struct ShardReport {
    /// The run's counts (over the shard's cells; `total` is the shard's cell count).
    pub run: RunReport,
    /// The expected load in seconds of every shard of the partition (this one is `loads[shard.index]`).
    pub loads: Vec<f64>,
    /// Where the costs of the partition came from.
    pub costs_from: String,
    /// Whether the costs are recorded seconds (`false`: the kind's relative cost model).
    pub timed: bool,
}

/// The record of a shard (`cells.shard-K-of-N.json`), written when it starts and when it ends.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ShardRecord {
    /// Experiment name.
    pub experiment: String,
    /// The fingerprint of the settings the shard computed with.
    pub fingerprint: String,
    /// Whether the `[quick]` variant ran.
    pub quick: bool,
    /// The experiment file the shard was started from (as given).
    pub config_file: String,
    /// `K/N`.
    pub shard: String,
    /// [`Plan::partition_digest`] of the partition the shard used.
    pub partition: String,
    /// Where the partition's costs came from.
    pub costs_from: String,
    /// Expected seconds of this shard.
    pub expected_s: f64,
    /// The cell keys of this shard, in sweep order.
    pub cells: Vec<String>,
    /// Cells computed by the last run of this shard.
    pub computed: usize,
    /// Cells of this shard not yet computed (time limit, or a run still going).
    pub remaining: usize,
    /// When the last run of the shard started (UTC), and its commit.
    pub started_utc: String,
    /// The `git` commit of the binary's work tree (`+dirty` when it had changes).
    pub provenance: String,
    /// Wall seconds of the last run of the shard (0 while it runs).
    pub wall_time_s: f64,
}

/// Runs (or resumes) shard `shard` of the sweep: the cells the partition ([`Plan::partition`], groups of
/// cells sharing a computation kept together) gives it that neither `cells.csv` (same settings) nor its own
/// `cells.shard-K-of-N.csv` holds yet. Costs come from `opts.expected` (`--times-from`), else from the times
/// recorded in the folder's own `cells.csv`, else from the kind's cost model; every shard must see the same
/// costs, and one whose partition differs from a shard already recorded in the folder is refused. Writes
/// its cells file (rewritten in sweep order at the end), its record, `.fingerprint` and `config.toml`;
/// never `cells.csv` or the outputs, which `rfx merge` writes.
pub fn run_shard(spec: &Spec, opts: &RunOptions, shard: Shard) -> Result<ShardReport, AppError> {
    let started = Instant::now();
    let run_info = RunInfo::now();
    let provenance = run_info.provenance();
    let folder = ResultsFolder::of(&opts.results_root, spec);
    let _lock = folder.lock_shard(shard)?;
    let layout = Layout::of(spec);
    let fingerprint = spec.fingerprint();
    let cells_path = folder.cells();
    let earlier = folder.earlier_cells(spec, &layout)?;
    if cells_path.exists() && !cells_path.is_file() {
        return Err(AppError::usage(earlier.problem));
    }
    let merged: Vec<Row> = match earlier.state {
        Earlier::Same => earlier.rows,
        Earlier::None => Vec::new(),
        _ if !opts.fresh => {
            return Err(AppError::usage(format!(
                "{}; rerun with --fresh to discard them, or pass --out DIR to write elsewhere",
                earlier.problem
            )))
        }
        _ => {
            match std::fs::remove_file(&cells_path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(AppError::io(&cells_path, e)),
            }
            Vec::new()
        }
    };

    // The partition, from the same costs on every machine.
    let (times, costs_from) = match &opts.expected {
        Some(t) => (Some(t.clone()), "recorded times (--times-from)".to_string()),
        None if !merged.is_empty() => (
            Some(
                merged
                    .iter()
                    .map(|r| (r.key(&layout), r.time_s(&layout)))
                    .filter(|(_, t)| t.is_finite())
                    .collect::<HashMap<_, _>>(),
            ),
            format!("recorded times in {}", cells_path.display()),
        ),
        None => (None, "the kind's cost model".to_string()),
    };
    let plan = Plan::of_spec(spec, times.as_ref());
    let (of_key, loads) = plan.partition(shard.count);
    let digest = plan.partition_digest(shard.count);
    for other in folder.shards() {
        if other.count != shard.count || other == shard {
            continue;
        }
        let Some(rec) = read_shard_record(&folder, other) else {
            continue;
        };
        if rec.fingerprint == fingerprint && rec.partition != digest {
            return Err(AppError::usage(format!(
                "{}: shard {other} was started with another partition ({}; this one: {costs_from}); start \
                 every shard with the same --times-from, or remove the shard files and start again",
                folder.dir().display(),
                rec.costs_from
            )));
        }
    }
    let cells = spec.cells();
    let mine: Vec<&Cell> = cells
        .iter()
        .filter(|c| of_key.get(&c.key()) == Some(&shard.index))
        .collect();

    // Earlier cells of this shard.
    let shard_path = folder.shard_cells(shard);
    let record_path = folder.shard_record(shard);
    let own: Vec<Row> = match crate::io::read_input(&shard_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(AppError::io(&shard_path, e)),
        Ok(bytes) => {
            let rec = read_shard_record(&folder, shard);
            let same = rec.as_ref().is_some_and(|r| r.fingerprint == fingerprint);
            match layout.read(&bytes) {
                Some((rows, dropped)) if same => {
                    if !dropped.is_empty() {
                        eprintln!("{}", dropped_warning(&shard_path, &dropped));
                    }
                    rows
                }
                _ if opts.fresh => Vec::new(),
                _ => {
                    return Err(AppError::usage(format!(
                        "{} holds cells of other settings or columns (or has no record {}); rerun with \
                         --fresh to discard them",
                        shard_path.display(),
                        record_path.display()
                    )))
                }
            }
        }
    };
    let done: HashSet<String> = merged.iter().chain(&own).map(|r| r.key(&layout)).collect();
    let pending = still_to_compute(mine.iter().copied(), &done, opts.only.as_ref());
    let reused = mine.len() - pending.len();

    let fp_path = folder.fingerprint();
    write_atomic(&fp_path, fingerprint.as_bytes()).map_err(|e| setup_error(&fp_path, e))?;
    let config = folder.config();
    if std::fs::read_to_string(&config).ok().as_deref() != Some(spec.source.as_str()) {
        write_atomic(&config, spec.source.as_bytes()).map_err(|e| setup_error(&config, e))?;
    }
    let mut record = ShardRecord {
        experiment: spec.name.clone(),
        fingerprint: fingerprint.clone(),
        quick: spec.quick,
        config_file: spec.file.display().to_string(),
        shard: shard.to_string(),
        partition: digest,
        costs_from: costs_from.clone(),
        expected_s: loads[shard.index],
        cells: mine.iter().map(|c| c.key()).collect(),
        computed: 0,
        remaining: pending.len(),
        started_utc: run_info.started_utc.clone(),
        provenance: provenance.clone(),
        wall_time_s: 0.0,
    };
    write_shard_record(&record_path, &record)?;
    let text = cells_file_text(&layout, &own);
    write_atomic(&shard_path, text.as_bytes()).map_err(|e| setup_error(&shard_path, e))?;

    let new_rows = compute_cells(spec, opts, &layout, &pending, &shard_path, &provenance)?;
    let computed = new_rows.len();
    let order: HashMap<String, usize> = cells.iter().map(|c| (c.key(), c.index)).collect();
    let mut all: Vec<Row> = own.into_iter().chain(new_rows).collect();
    sort_in_sweep_order(&mut all, &layout, &order);
    let text = cells_file_text(&layout, &all);
    write_atomic(&shard_path, text.as_bytes()).map_err(|e| AppError::io(&shard_path, e))?;
    let wall_s = started.elapsed().as_secs_f64();
    record.computed = computed;
    record.remaining = pending.len() - computed;
    record.wall_time_s = wall_s;
    write_shard_record(&record_path, &record)?;
    let skipped = all
        .iter()
        .filter(|r| {
            of_key.get(&r.key(&layout)) == Some(&shard.index) && !r.note(&layout).is_empty()
        })
        .count();
    Ok(ShardReport {
        run: RunReport {
            total: mine.len(),
            computed,
            reused,
            skipped,
            remaining: pending.len() - computed,
            wall_s,
            dir: folder.dir().to_path_buf(),
        },
        loads,
        costs_from,
        timed: times.is_some(),
    })
}

/// The record of shard `s` in `folder`, `None` when it is missing or unreadable.
pub fn read_shard_record(folder: &ResultsFolder, s: Shard) -> Option<ShardRecord> {
    let text = std::fs::read_to_string(folder.shard_record(s)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_shard_record(path: &Path, record: &ShardRecord) -> Result<(), AppError> {
    let text =
        serde_json::to_string_pretty(record).map_err(|e| AppError::internal(e.to_string()))?;
    write_atomic(path, text.as_bytes()).map_err(|e| AppError::io(path, e))
}

/// The cells still to compute: those not `done`, and among `only` when it is given.
fn still_to_compute<'a>(
    cells: impl Iterator<Item = &'a Cell>,
    done: &HashSet<String>,
    only: Option<&HashSet<String>>,
) -> Vec<&'a Cell> {
    cells
        .filter(|c| !done.contains(&c.key()))
        .filter(|c| only.is_none_or(|keys| keys.contains(&c.key())))
        .collect()
}

/// Computes `pending` (on `opts.threads` workers, one cell at a time when the spec says so), appending each
/// finished cell to `cells_path` (flushed) and stopping at the deadline; returns the new rows.
fn compute_cells(
    spec: &Spec,
    opts: &RunOptions,
    layout: &Layout,
    pending: &[&Cell],
    cells_path: &Path,
    provenance: &str,
) -> Result<Vec<Row>, AppError> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(cells_path)
        .map_err(|e| AppError::io(cells_path, e))?;
    let sink = Mutex::new((file, Vec::<Row>::new()));
    let cpu = cpu_field(spec.kernels_name);
    // With expected cell times the bar counts expected milliseconds, so that its ETA is the recorded time
    // of the cells still to run scaled by this run's pace; without them it counts cells.
    let expected_ms = |key: &str| -> u64 {
        opts.expected
            .as_ref()
            .and_then(|t| t.get(key))
            .map_or(1, |s| (s * 1000.0).max(1.0) as u64)
    };
    let bar_len: u64 = pending.iter().map(|c| expected_ms(&c.key())).sum();
    let bar = if opts.progress {
        ProgressBar::new(bar_len)
    } else {
        ProgressBar::hidden()
    };
    let template = if opts.expected.is_some() {
        "{prefix} [{elapsed_precise}] {wide_bar} {msg} cells (ETA {eta})"
    } else {
        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} cells ({per_sec}, ETA {eta})"
    };
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(spec.name.clone());
    bar.set_message(format!("0/{}", pending.len()));
    let finished = std::sync::atomic::AtomicUsize::new(0);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| AppError::internal(format!("cannot start worker threads: {e}")))?;
    let failed = AtomicBool::new(false);
    let run_one = |cell: &&Cell| -> Result<(), AppError> {
        if failed.load(Ordering::Relaxed) || opts.deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(());
        }
        let mut rng = rfx_core::rng_stream(spec.seed, &cell.key());
        let load_start = crate::results::load_now();
        let t0 = Instant::now();
        let out = spec.runner.run_cell(cell, &mut rng);
        let secs = t0.elapsed().as_secs_f64();
        let load = crate::results::load_field(
            load_start,
            crate::results::load_now(),
            rayon::current_num_threads(),
        );
        let mut fields: Vec<String> = cell.params.iter().map(|(_, v)| v.to_string()).collect();
        let (metrics, items, note, timings) = match out {
            Ok(CellOutput {
                metrics,
                items,
                timings,
            }) => {
                if metrics.len() != layout.metrics.len()
                    || items.len() != layout.items.len()
                    || timings.len() + 1 != layout.timings.len()
                {
                    failed.store(true, Ordering::Relaxed);
                    return Err(AppError::internal(format!(
                        "cell {}: the kind returned {} metrics, {} item columns and {} timings, expected {}, {} and {}",
                        cell.key(),
                        metrics.len(),
                        items.len(),
                        timings.len(),
                        layout.metrics.len(),
                        layout.items.len(),
                        layout.timings.len() - 1
                    )));
                }
                let bad = layout
                    .metrics
                    .iter()
                    .zip(&metrics)
                    .find(|(name, v)| !layout.allows(name, **v));
                if let Some((name, v)) = bad {
                    failed.store(true, Ordering::Relaxed);
                    return Err(AppError::internal(format!(
                        "cell {}: the kind returned {v} for metric `{name}`, which it declares finite \
                         (Runner::nan_metrics)",
                        cell.key()
                    )));
                }
                (
                    metrics.iter().map(|m| m.to_string()).collect(),
                    items
                        .iter()
                        .map(|v| v.iter().map(|&b| if b { '1' } else { '0' }).collect())
                        .collect(),
                    String::new(),
                    timings,
                )
            }
            Err(CellError::Skipped(why)) => (
                vec![String::new(); layout.metrics.len()],
                vec![String::new(); layout.items.len()],
                why,
                vec![f64::NAN; layout.timings.len() - 1],
            ),
            Err(CellError::Fatal(why)) => {
                failed.store(true, Ordering::Relaxed);
                return Err(AppError::internal(format!("cell {}: {why}", cell.key())));
            }
        };
        fields.extend::<Vec<String>>(metrics);
        fields.extend::<Vec<String>>(items);
        fields.push(note);
        fields.push(secs.to_string());
        fields.extend(timings.iter().map(|t| t.to_string()));
        fields.push(provenance.to_string());
        fields.push(load);
        fields.push(cpu.clone());
        let line = csv_line(&fields);
        {
            let mut guard = sink
                .lock()
                .map_err(|_| AppError::internal("results writer poisoned"))?;
            guard
                .0
                .write_all(line.as_bytes())
                .and_then(|_| guard.0.flush())
                .map_err(|e| AppError::io(cells_path, e))?;
            guard.1.push(Row(fields));
        }
        let k = finished.fetch_add(1, Ordering::Relaxed) + 1;
        bar.set_message(format!("{k}/{}", pending.len()));
        bar.inc(expected_ms(&cell.key()));
        Ok(())
    };
    // The application's guard holds while the cells run, in both modes (the `rfx` binary's pins OpenBLAS to
    // one thread: its multi-threaded paths round differently with the thread count, so cells would depend
    // on --threads and on OPENBLAS_NUM_THREADS). Parallelism inside a cell comes from rayon over fixed chunks.
    let _guard = spec.run_guard.map(|make| make(&spec.backend));
    let result: Result<(), AppError> = if spec.parallel_cells {
        pool.install(|| pending.par_iter().try_for_each(run_one))
    } else {
        // One cell at a time; inside it rayon uses the whole pool, so that the cell's own timings measure an
        // unshared machine.
        pool.install(|| pending.iter().try_for_each(run_one))
    };
    bar.finish_and_clear();
    result?;
    let (_, new_rows) = sink
        .into_inner()
        .map_err(|_| AppError::internal("results writer poisoned"))?;
    Ok(new_rows)
}

/// The one-line warning about the lines of `cells.csv` that a run drops (their cells are computed again).
fn dropped_warning(path: &Path, dropped: &[String]) -> String {
    let mut why: Vec<&str> = dropped.iter().take(3).map(String::as_str).collect();
    if dropped.len() > 3 {
        why.push("…");
    }
    format!(
        "warning: {}: dropped {} damaged or incomplete line(s) ({}); their cells are computed again",
        path.display(),
        dropped.len(),
        why.join("; ")
    )
}

/// An I/O error while preparing the results folder: the user's (exit code 2) when the place `--out` names
/// cannot hold files (not writable, read-only, not a directory), an internal one otherwise.
fn setup_error(path: &Path, e: std::io::Error) -> AppError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::PermissionDenied
        | K::ReadOnlyFilesystem
        | K::NotADirectory
        | K::IsADirectory
        | K::AlreadyExists
        | K::NotFound => AppError::usage(format!(
            "{}: cannot write the results folder: {e}",
            path.display()
        )),
        _ => AppError::io(path, e),
    }
}

/// One line on the state of `spec`'s results under `root`: complete, partial (k of N cells), stale (cells of
/// other settings, which `rfx run` refuses to mix without `--fresh`) or not run.
pub fn status(spec: &Spec, root: &Path) -> Result<String, AppError> {
    let folder = ResultsFolder::of(root, spec);
    let dir = folder.dir();
    let layout = Layout::of(spec);
    let total = spec.cells().len();
    let earlier = folder.earlier_cells(spec, &layout)?;
    let dropped = if earlier.dropped.is_empty() {
        String::new()
    } else {
        format!(
            "; {} damaged or incomplete line(s) of cells.csv will be dropped and their cells computed again",
            earlier.dropped.len()
        )
    };
    let line = match earlier.state {
        Earlier::None if earlier.problem.is_empty() => {
            format!("not run ({total} cells; no {})", folder.cells().display())
        }
        Earlier::None => format!("not run ({total} cells; {})", earlier.problem),
        Earlier::Different => format!(
            "stale: {} holds {} cells of other settings; `rfx run --fresh` recomputes all {total}",
            dir.display(),
            earlier.rows.len()
        ),
        Earlier::NoFingerprint => format!(
            "unknown settings: {}; `rfx run --fresh` recomputes all {total}",
            earlier.problem
        ),
        Earlier::Damaged => format!(
            "damaged: {}; `rfx run --fresh` recomputes all {total}",
            earlier.problem
        ),
        Earlier::Same => {
            let done = cells_present(spec, &layout, &earlier.rows);
            let commits = crate::results::commits(&layout, &earlier.rows);
            let span = if commits.len() > 1 {
                format!(
                    "; cells from {} commits: {}",
                    commits.len(),
                    commits
                        .iter()
                        .map(|(c, n)| format!(
                            "{n} {}",
                            if c.is_empty() { "unrecorded" } else { c }
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            };
            if done == total {
                format!(
                    "complete ({total} cells in {}{span}{dropped})",
                    dir.display()
                )
            } else {
                format!(
                    "partial: {done} of {total} cells in {}; `rfx run` computes the other {}{span}{dropped}",
                    dir.display(),
                    total - done
                )
            }
        }
    };
    Ok(match shard_status(&folder, &layout) {
        Some(shards) => format!("{line}; {shards}"),
        None => line,
    })
}

/// The state of the shards in a folder for `rfx status`: for each split N found, the shards finished,
/// running or stopped (with their cells done of assigned) and missing, and what to run next; `None` without
/// shard files.
fn shard_status(folder: &ResultsFolder, layout: &Layout) -> Option<String> {
    let shards = folder.shards();
    let mut counts: Vec<usize> = shards.iter().map(|s| s.count).collect();
    counts.dedup();
    let parts: Vec<String> = counts
        .iter()
        .map(|&n| {
            let mut complete = Vec::new();
            let mut partial = Vec::new();
            let mut missing = Vec::new();
            for index in 0..n {
                let s = Shard { index, count: n };
                let rec = read_shard_record(folder, s);
                let done = crate::io::read_input(&folder.shard_cells(s))
                    .ok()
                    .and_then(|b| layout.read(&b))
                    .map_or(0, |(rows, _)| rows.len());
                match rec {
                    None => missing.push(s.to_string()),
                    Some(r) if done >= r.cells.len() => complete.push(s.to_string()),
                    Some(r) => partial.push(format!("{s} ({done} of {} cells)", r.cells.len())),
                }
            }
            let mut text = format!("sharded into {n}: {} complete", complete.len());
            if !partial.is_empty() {
                text.push_str(&format!(", unfinished: {}", partial.join(", ")));
            }
            if !missing.is_empty() {
                text.push_str(&format!(", not started: {}", missing.join(", ")));
            }
            if complete.len() == n {
                text.push_str(&format!(
                    "; not merged yet: `rfx merge {}`",
                    folder.dir().display()
                ));
            }
            text
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

pub(crate) fn write_config_and_manifest(
    spec: &Spec,
    folder: &ResultsFolder,
    report: &RunReport,
    run_info: &RunInfo,
    opts: &RunOptions,
) -> Result<(), AppError> {
    let config = folder.config();
    if std::fs::read_to_string(&config).ok().as_deref() != Some(spec.source.as_str()) {
        write_atomic(&config, spec.source.as_bytes()).map_err(|e| AppError::io(&config, e))?;
    }
    let describe = |m: &mut serde_json::Value| {
        m["experiment"] = spec.name.clone().into();
        m["kind"] = spec.kind.clone().into();
        m["title"] = spec.title.clone().into();
        m["paper"] = spec.paper.clone().into();
        m["config"] = spec.source.clone().into();
    };
    // A run that computes nothing keeps the record of the last run that did compute cells for the same
    // settings, and changes the manifest only where the experiment's description changed (edited notes), so
    // that rerunning a complete experiment leaves every file byte-identical.
    let old = folder.read_manifest().filter(|old| {
        old.get("fingerprint").and_then(|v| v.as_str()) == Some(spec.fingerprint().as_str())
    });
    let manifest = match old {
        Some(old) if report.computed == 0 => {
            let mut m = old.clone();
            describe(&mut m);
            if m.get("config_file").and_then(|v| v.as_str()).is_none() {
                m["config_file"] = spec.file.display().to_string().into();
            }
            if m.get("cells_remaining").is_some() || report.remaining > 0 {
                m["cells_remaining"] = report.remaining.into();
            }
            if m == old {
                return Ok(());
            }
            m
        }
        _ => {
            let mut m = serde_json::json!({
                "config_file": spec.file.display().to_string(),
                "seed": spec.seed,
                "quick": spec.quick,
                "fingerprint": spec.fingerprint(),
                "rfx_version": VERSION,
                "git_commit": run_info.commit,
                "git_dirty": run_info.dirty,
                "host": {
                    "hostname": hostname(),
                    "cpu": cpu_description(),
                    "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
                    "os": std::env::consts::OS,
                    "arch": std::env::consts::ARCH,
                },
                "threads": opts.threads.unwrap_or_else(rayon::current_num_threads),
                "started_utc": run_info.started_utc,
                "wall_time_s": report.wall_s,
                "cells_total": report.total,
                "cells_computed": report.computed,
                "cells_reused": report.reused,
                "cells_skipped": report.skipped,
                "cells_remaining": report.remaining,
            });
            describe(&mut m);
            m
        }
    };
    let path = folder.manifest();
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| AppError::internal(e.to_string()))?;
    write_atomic(&path, text.as_bytes()).map_err(|e| AppError::io(&path, e))
}

/// What the runner records about the run that computes cells, read when the run starts (a long run
/// during which checkpoints are committed still names the commit its binary ran from).
pub struct RunInfo {
    /// UTC start time.
    pub started_utc: String,
    /// Full hash of `HEAD` (`unknown` outside a git work tree).
    pub commit: String,
    /// Whether tracked files outside the results trees had uncommitted changes.
    pub dirty: bool,
}

impl RunInfo {
    /// The state of the current directory's git work tree now.
    pub fn now() -> RunInfo {
        let (commit, dirty) = git_state();
        RunInfo {
            started_utc: utc_now(),
            commit,
            dirty,
        }
    }

    /// The provenance field of the cells this run computes: the short hash, `+dirty` when the sources had
    /// uncommitted changes, empty when unknown.
    pub fn provenance(&self) -> String {
        if self.commit == "unknown" {
            return String::new();
        }
        let short: String = self.commit.chars().take(10).collect();
        if self.dirty {
            format!("{short}+dirty")
        } else {
            short
        }
    }
}

fn git_state() -> (String, bool) {
    let out = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = out(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Results (committed, reproduced or quick) are outputs, not sources: changes there do not make the
    // code that computes cells dirty.
    let dirty = out(&[
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ".",
        ":(top,exclude)results",
        ":(top,exclude)reproduced",
    ])
    .is_some_and(|s| !s.is_empty());
    (commit, dirty)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The CPU this process runs on, as every manifest records it under `host.cpu` and `rfx plan` names it: the
/// model name, family and model from `/proc/cpuinfo` (`unknown` where there is none) and the SIMD extensions
/// detected at run time that decide which BLAS and faer kernels run — e.g. `AMD EPYC, family 25 model 1
/// (avx2, fma)`. Recorded cell times are this machine's: the same cell took 2–3× longer on an AVX2-only EPYC
/// than on the AVX-512 one that recorded most of `results/`.
pub fn cpu_description() -> String {
    let (mut cpu, family_model) = cpu_model();
    if let Some((family, model)) = family_model {
        cpu = format!("{cpu}, family {family} model {model}");
    }
    let simd = simd_extensions();
    if simd.is_empty() {
        cpu
    } else {
        format!("{cpu} ({})", simd.join(", "))
    }
}

/// The machine kind by the widest vector extension that the numeric kernels (OpenBLAS's, faer's, rfx's own)
/// dispatch on, detected at run time: `AVX-512` (avx512f), `AVX2`, or the architecture's name (`x86_64`
/// without AVX2, `aarch64`, …). Results computed on one kind are bit-identical for any thread count; across
/// kinds they may differ in the last bits (other kernels), within each experiment's declared tolerance.
pub fn machine_kind() -> &'static str {
    let simd = simd_extensions();
    if simd.contains(&"avx512f") {
        "AVX-512"
    } else if simd.contains(&"avx2") {
        "AVX2"
    } else {
        std::env::consts::ARCH
    }
}

/// The `cpu` field of the cells a run computes ([`crate::results::Row::cpu`]): `kind/kernels/model`, e.g.
/// `AVX-512/Prescott/Intel(R) Xeon(R) Processor (family 6 model 207)` — the [`machine_kind`], the name of
/// the numeric kernels the application reports ([`crate::kind::Kinds::with_kernels_name`]; `-` when it
/// reports none) and the CPU model. A `/` inside a part becomes `-` (the field splits in three) and commas are
/// dropped (the CSV field stays unquoted).
pub fn cpu_field(kernels: Option<crate::kind::KernelsName>) -> String {
    // no `/` inside a part (the field splits in three) and no comma (the CSV field stays unquoted)
    let clean = |s: String| s.replace('/', "-").replace(',', "");
    let (mut model, family_model) = cpu_model();
    if let Some((family, m)) = family_model {
        model = format!("{model} (family {family} model {m})");
    }
    let kernels = kernels.map_or_else(|| "-".to_string(), |f| f());
    format!("{}/{}/{}", machine_kind(), clean(kernels), clean(model))
}

/// The CPU's model name from `/proc/cpuinfo` (`unknown CPU` where there is none) and its family and model
/// numbers when both are given: what [`cpu_description`] and [`cpu_field`] write, each in its own format.
fn cpu_model() -> (String, Option<(String, String)>) {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let name = field("model name").unwrap_or_else(|| "unknown CPU".into());
    (name, field("cpu family").zip(field("model")))
}

/// The SIMD extensions among those the numeric kernels dispatch on, detected at run time.
fn simd_extensions() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut found = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            found.push("avx512f");
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            found.push("avx2");
        }
        if std::arch::is_x86_feature_detected!("fma") {
            found.push("fma");
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("sve") {
            found.push("sve");
        }
        found.push("neon");
    }
    found
}
