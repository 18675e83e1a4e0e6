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

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::error::AppError;
use crate::io::{utc_now, write_atomic};
use crate::kinds::{CellError, CellOutput};
use crate::results::{csv_line, parse_cells, summarize, summary_csv, Layout, Row};
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

const FINGERPRINT_FILE: &str = ".fingerprint";

/// Runs (or resumes) the sweep of `spec` and writes every output.
pub fn run(spec: &Spec, opts: &RunOptions) -> Result<RunReport, AppError> {
    let started = Instant::now();
    let started_utc = utc_now();
    let dir = opts.results_root.join(&spec.name);
    std::fs::create_dir_all(&dir).map_err(|e| AppError::io(&dir, e))?;
    let layout = Layout::of(spec);
    let cells_path = dir.join("cells.csv");
    let fp_path = dir.join(FINGERPRINT_FILE);
    let fingerprint = spec.fingerprint();

    // Earlier cells: reuse them only if they were computed with the same settings and columns.
    let earlier = earlier_cells(spec, &layout, &dir)?;
    let existing: Vec<Row> = match earlier.state {
        Earlier::Different if !opts.fresh => {
            return Err(AppError::usage(format!(
                "{}: holds cells computed with other settings or columns (the kind's section, the seed or \
                 the metrics changed); rerun with --fresh to discard them, or pass --out DIR to write elsewhere",
                cells_path.display()
            )));
        }
        Earlier::Same => {
            if earlier.dropped > 0 {
                eprintln!(
                    "{}: dropped {} incomplete line(s) left by an interrupted run",
                    cells_path.display(),
                    earlier.dropped
                );
            }
            earlier.rows
        }
        _ => Vec::new(),
    };
    // Start the file afresh with the valid rows (removes a cut-off line), then append new cells.
    let mut text = csv_line(&layout.header());
    for r in &existing {
        text.push_str(&csv_line(&r.0));
    }
    write_atomic(&fp_path, fingerprint.as_bytes()).map_err(|e| AppError::io(&fp_path, e))?;
    write_atomic(&cells_path, text.as_bytes()).map_err(|e| AppError::io(&cells_path, e))?;

    let cells = spec.cells();
    let done: std::collections::HashSet<String> = existing.iter().map(|r| r.key(&layout)).collect();
    let pending: Vec<_> = cells.iter().filter(|c| !done.contains(&c.key())).collect();
    let reused = cells.len() - pending.len();

    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&cells_path)
        .map_err(|e| AppError::io(&cells_path, e))?;
    let sink = Mutex::new((file, Vec::<Row>::new()));
    let bar = if opts.progress {
        ProgressBar::new(pending.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} cells ({per_sec}, ETA {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(spec.name.clone());

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| AppError::internal(format!("cannot start worker threads: {e}")))?;
    let failed = AtomicBool::new(false);
    let run_one = |cell: &&crate::kinds::Cell| -> Result<(), AppError> {
        if failed.load(Ordering::Relaxed) || opts.deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(());
        }
        let mut rng = rfx_core::rng_stream(spec.seed, &cell.key());
        let t0 = Instant::now();
        let out = spec.runner.run_cell(cell, &mut rng);
        let secs = t0.elapsed().as_secs_f64();
        let mut fields: Vec<String> = cell.params.iter().map(|(_, v)| v.to_string()).collect();
        let (metrics, note, timings) = match out {
            Ok(CellOutput { metrics, timings }) => {
                if metrics.len() != layout.metrics.len()
                    || timings.len() + 1 != layout.timings.len()
                {
                    failed.store(true, Ordering::Relaxed);
                    return Err(AppError::internal(format!(
                        "cell {}: the kind returned {} metrics and {} timings, expected {} and {}",
                        cell.key(),
                        metrics.len(),
                        timings.len(),
                        layout.metrics.len(),
                        layout.timings.len() - 1
                    )));
                }
                (
                    metrics.iter().map(|m| m.to_string()).collect(),
                    String::new(),
                    timings,
                )
            }
            Err(CellError::Skipped(why)) => (
                vec![String::new(); layout.metrics.len()],
                why,
                vec![f64::NAN; layout.timings.len() - 1],
            ),
            Err(CellError::Fatal(why)) => {
                failed.store(true, Ordering::Relaxed);
                return Err(AppError::internal(format!("cell {}: {why}", cell.key())));
            }
        };
        fields.extend::<Vec<String>>(metrics);
        fields.push(note);
        fields.push(secs.to_string());
        fields.extend(timings.iter().map(|t| t.to_string()));
        let line = csv_line(&fields);
        {
            let mut guard = sink
                .lock()
                .map_err(|_| AppError::internal("results writer poisoned"))?;
            guard
                .0
                .write_all(line.as_bytes())
                .and_then(|_| guard.0.flush())
                .map_err(|e| AppError::io(&cells_path, e))?;
            guard.1.push(Row(fields));
        }
        bar.inc(1);
        Ok(())
    };
    // OpenBLAS runs on one thread in both modes: its multi-threaded paths round differently with the thread
    // count (GEMM included; `rfx_solvers::linalg` module docs), so cells would depend on --threads and on
    // OPENBLAS_NUM_THREADS. Parallelism inside a cell comes from rayon over fixed chunks.
    let _blas = rfx_solvers::linalg::SingleBlasThread::new();
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
    let computed = new_rows.len();

    // Canonical order: the sweep's cells first, in sweep order; rows of cells no longer in the sweep after.
    let mut all: Vec<Row> = existing.into_iter().chain(new_rows).collect();
    let order: HashMap<String, usize> = cells.iter().map(|c| (c.key(), c.index)).collect();
    all.sort_by_key(|r| order.get(&r.key(&layout)).copied().unwrap_or(usize::MAX));
    let mut text = csv_line(&layout.header());
    for r in &all {
        text.push_str(&csv_line(&r.0));
    }
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
        remaining: pending.len() - computed,
        wall_s,
        dir: dir.clone(),
    };
    write_config_and_manifest(spec, &dir, &report, &started_utc, opts)?;
    outputs::write_all(spec, &dir, &layout, &all)?;
    Ok(report)
}

/// How the cells already in a results folder relate to an experiment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Earlier {
    /// No `cells.csv` yet.
    None,
    /// Computed with the same settings and columns: reusable.
    Same,
    /// Computed with other settings or columns (stale for this file).
    Different,
}

/// The cells found in `dir/cells.csv` and whether they belong to `spec` (same fingerprint and columns).
pub struct EarlierCells {
    /// Relation of the folder's cells to `spec`.
    pub state: Earlier,
    /// Complete rows (meaningful when `state` is [`Earlier::Same`]).
    pub rows: Vec<Row>,
    /// Lines cut off by an interrupted run.
    pub dropped: usize,
}

/// Reads `dir/cells.csv` and `dir/.fingerprint` and compares them with `spec`.
pub fn earlier_cells(spec: &Spec, layout: &Layout, dir: &Path) -> Result<EarlierCells, AppError> {
    let cells_path = dir.join("cells.csv");
    if !cells_path.exists() {
        return Ok(EarlierCells {
            state: Earlier::None,
            rows: Vec::new(),
            dropped: 0,
        });
    }
    let text = std::fs::read_to_string(&cells_path).map_err(|e| AppError::io(&cells_path, e))?;
    let old_fp = std::fs::read_to_string(dir.join(FINGERPRINT_FILE)).unwrap_or_default();
    let (header, rows, dropped) = parse_cells(&text);
    let same = old_fp.trim() == spec.fingerprint() && header.as_ref() == Some(&layout.header());
    Ok(EarlierCells {
        state: if same {
            Earlier::Same
        } else {
            Earlier::Different
        },
        rows,
        dropped,
    })
}

/// One line on the state of `spec`'s results under `root`: complete, partial (k of N cells), stale (cells of
/// other settings, which `rfx run` refuses to mix without `--fresh`) or not run.
pub fn status(spec: &Spec, root: &Path) -> Result<String, AppError> {
    let dir = root.join(&spec.name);
    let layout = Layout::of(spec);
    let total = spec.cells().len();
    let earlier = earlier_cells(spec, &layout, &dir)?;
    Ok(match earlier.state {
        Earlier::None => format!(
            "not run ({total} cells; no {})",
            dir.join("cells.csv").display()
        ),
        Earlier::Different => format!(
            "stale: {} holds {} cells of other settings; `rfx run --fresh` recomputes all {total}",
            dir.display(),
            earlier.rows.len()
        ),
        Earlier::Same => {
            let done = cells_present(spec, &layout, &earlier.rows);
            if done == total {
                format!("complete ({total} cells in {})", dir.display())
            } else {
                format!(
                    "partial: {done} of {total} cells in {}; `rfx run` computes the other {}",
                    dir.display(),
                    total - done
                )
            }
        }
    })
}

/// The number of the sweep's cells that have a row in `rows` (a run stopped at its time limit has fewer
/// than `spec.cells().len()`).
pub fn cells_present(spec: &Spec, layout: &Layout, rows: &[Row]) -> usize {
    let keys: std::collections::HashSet<String> = rows.iter().map(|r| r.key(layout)).collect();
    spec.cells()
        .iter()
        .filter(|c| keys.contains(&c.key()))
        .count()
}

fn write_config_and_manifest(
    spec: &Spec,
    dir: &Path,
    report: &RunReport,
    started_utc: &str,
    opts: &RunOptions,
) -> Result<(), AppError> {
    let config = dir.join("config.toml");
    write_atomic(&config, spec.source.as_bytes()).map_err(|e| AppError::io(&config, e))?;
    let (commit, dirty) = git_state();
    let mut manifest = serde_json::json!({
        "experiment": spec.name,
        "kind": spec.kind,
        "title": spec.title,
        "paper": spec.paper,
        "config_file": spec.file.display().to_string(),
        "config": spec.source,
        "seed": spec.seed,
        "quick": spec.quick,
        "fingerprint": spec.fingerprint(),
        "rfx_version": VERSION,
        "git_commit": commit,
        "git_dirty": dirty,
        "host": {
            "hostname": hostname(),
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "threads": opts.threads.unwrap_or_else(rayon::current_num_threads),
        "started_utc": started_utc,
        "wall_time_s": report.wall_s,
        "cells_total": report.total,
        "cells_computed": report.computed,
        "cells_reused": report.reused,
        "cells_skipped": report.skipped,
        "cells_remaining": report.remaining,
    });
    // A rerun that computes nothing (say, to take up edited notes) keeps the record of the last run that did
    // compute cells for the same settings, so the report's "last run" line still says how the cells were made.
    if report.computed == 0 {
        if let Some(old) = read_manifest(dir).filter(|old| {
            old.get("fingerprint").and_then(|v| v.as_str()) == Some(spec.fingerprint().as_str())
                && manifest_cells_computed(old) > 0
        }) {
            for key in [
                "git_commit",
                "git_dirty",
                "host",
                "threads",
                "started_utc",
                "wall_time_s",
                "cells_computed",
                "cells_reused",
            ] {
                if let Some(v) = old.get(key) {
                    manifest[key] = v.clone();
                }
            }
            manifest["refreshed_utc"] = serde_json::Value::from(started_utc);
        }
    }
    let path = dir.join("manifest.json");
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| AppError::internal(e.to_string()))?;
    write_atomic(&path, text.as_bytes()).map_err(|e| AppError::io(&path, e))
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
    let dirty =
        out(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    (commit, dirty)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The `manifest.json` of a results folder (written by `write_config_and_manifest` at the end of every
/// run), `None` when it is missing or unreadable.
pub fn read_manifest(dir: &Path) -> Option<serde_json::Value> {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// The number of cells the manifest's run record computed (0 when absent).
pub fn manifest_cells_computed(manifest: &serde_json::Value) -> u64 {
    manifest
        .get("cells_computed")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// The experiment of an existing results folder: its `config.toml` (the copy of the experiment file that
/// produced `cells.csv`), read as full or `--quick` as `manifest.json` records. When the manifest's
/// `config_file` (the experiment file the run was started from, relative to where it was started) still
/// exists, the spec is named after it, so that the partial-run note of the report says
/// `rfx run experiments/<name>.toml` rather than the results folder's copy.
pub fn results_spec(dir: &Path) -> Result<Spec, crate::config::ConfigError> {
    let manifest = read_manifest(dir);
    let field = |k: &str| manifest.as_ref().and_then(|v| v.get(k).cloned());
    let quick = field("quick").and_then(|v| v.as_bool()).unwrap_or(false);
    let mut spec = Spec::load(&dir.join("config.toml"), quick)?;
    if let Some(source) = field("config_file").and_then(|v| v.as_str().map(PathBuf::from)) {
        if source.is_file() {
            spec.file = source;
        }
    }
    Ok(spec)
}

/// Rebuilds summary, plot and table of an existing results folder from its `cells.csv` and `config.toml`.
pub fn replot(dir: &Path) -> Result<(), AppError> {
    let config = dir.join("config.toml");
    let spec = results_spec(dir).map_err(AppError::Config)?;
    let layout = Layout::of(&spec);
    let cells_path = dir.join("cells.csv");
    let text = std::fs::read_to_string(&cells_path).map_err(|e| AppError::io(&cells_path, e))?;
    let (header, rows, _) = parse_cells(&text);
    if header.as_ref() != Some(&layout.header()) {
        return Err(AppError::usage(format!(
            "{}: columns do not match {}",
            cells_path.display(),
            config.display()
        )));
    }
    outputs::write_all(&spec, dir, &layout, &rows)
}

/// Writes summary.csv for `rows` (used by [`outputs::write_all`]).
pub fn write_summary(
    spec: &Spec,
    dir: &Path,
    layout: &Layout,
    rows: &[Row],
) -> Result<Vec<crate::results::Summary>, AppError> {
    let summaries = summarize(spec, layout, rows);
    let path = dir.join("summary.csv");
    write_atomic(&path, summary_csv(layout, &summaries).as_bytes())
        .map_err(|e| AppError::io(&path, e))?;
    Ok(summaries)
}
