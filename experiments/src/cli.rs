//! Command-line interface. Exit codes: 0 success, 2 usage, configuration or input error, 1 internal error.
//! Every error is one line on stderr.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use rfx_harness::folder::{Earlier, ResultsFolder, REPORT_FILE, VERIFICATION_FILE};
use rfx_harness::run::{run, RunOptions};
use rfx_harness::{AppError, Kinds, Spec};

use crate::kinds;
use crate::matrix_io::HeaderMode;
use crate::tools::{FeaturesArgs, FitArgs, GramArgs, Task};

/// rfx: random features and sketches for kernel methods; reproduces five papers from TOML experiments.
#[derive(Parser, Debug)]
#[command(name = "rfx", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run (or resume) experiments; finished cells in cells.csv are not recomputed.
    Run {
        /// Experiment files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Apply the file's [quick] overrides (small sizes for CI); results go to results/quick by default.
        #[arg(long)]
        quick: bool,
        /// Worker threads, 1 to 1024 (default: all cores). Results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Results root (default: results, or results/quick with --quick). A run holds a lock on its
        /// experiment's folder there: a second run into the same folder is refused (exit code 2).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Discard earlier cells that cannot be reused: computed with other settings, without a .fingerprint,
        /// or in a cells.csv whose header is damaged (cells of the same settings are kept).
        #[arg(long)]
        fresh: bool,
        /// Do not draw a progress bar.
        #[arg(long)]
        no_progress: bool,
        /// Start no new cell after this many minutes (above 0, at most 1e6; counted from the start of the command): finished cells
        /// are kept, the outputs are written from them and marked partial, and the same command later
        /// computes the rest. Experiment files not started by then are left untouched.
        #[arg(long, value_name = "MINUTES", allow_negative_numbers = true)]
        time_limit: Option<f64>,
        /// A results tree with recorded cell times of the same experiments (e.g. results): print the
        /// expected wall time per experiment before starting, and base the progress bar's ETA on it.
        #[arg(long, value_name = "DIR")]
        times_from: Option<PathBuf>,
        /// Run only shard K of N (K from 0 to N−1) of each experiment: the cells that the partition (longest
        /// cells first to the least-loaded shard, by the recorded cell times of --times-from or of the
        /// folder, else the kind's cost model; cells sharing a computation kept together) gives it, into
        /// `cells.shard-K-of-N.csv` (resumable). Shards may run at once on machines sharing the folder;
        /// `rfx merge` joins them.
        #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
        shard: Option<rfx_harness::plan::Shard>,
    },
    /// Merge the shards of experiments (`rfx run --shard K/N`) into each folder's cells.csv and outputs,
    /// exactly as a single run writes them, after checking that every shard is there, complete, and of the
    /// same settings; then removes the shard files. Exit 2, writing nothing, when a shard is missing or
    /// conflicts.
    Merge {
        /// Experiment results folders (e.g. results/gegenbauer-vs-taylor).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Compare the cells of every experiment present in two results trees (cells matched by key, each
    /// metric under its kind's tolerance, wall times excluded); writes B/comparison.md. Exit 1 when a cell
    /// differs beyond tolerance, 2 on bad input.
    Compare {
        /// The reference tree (e.g. results).
        a: PathBuf,
        /// The tree compared with it (e.g. reproduced).
        b: PathBuf,
        /// Fail (exit 1) unless every compared cell is identical: for runs of the same code on the same
        /// machine, e.g. at two thread counts.
        #[arg(long)]
        identical: bool,
    },
    /// Recompute a seeded, stratified sample of the committed cells of every experiment within a time
    /// budget and compare them with the committed rows; writes the table to <root>/verification.md. Exit 1
    /// on a difference.
    Verify {
        /// Time budget in minutes.
        #[arg(long, default_value_t = 15.0, value_name = "MINUTES")]
        budget: f64,
        /// The results tree to verify.
        #[arg(long, default_value = "results")]
        root: PathBuf,
        /// Seed of the sample.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Where to write the table (default: <root>/verification.md).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Only these experiments (by name; default: all under the root).
        #[arg(long = "experiment", value_name = "NAME")]
        experiments: Vec<String>,
    },
    /// For each experiment file: how many of its cells the results folder holds (complete, partial, stale
    /// because the settings changed, or not run), without running anything.
    Status {
        /// Experiment files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Use the [quick] overrides (results/quick by default).
        #[arg(long)]
        quick: bool,
        /// Results root (default: results, or results/quick with --quick).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Expected wall time of experiments on N single-threaded workers, from the cell times recorded by an
    /// earlier run (longest cells first, each to the least-loaded worker: the partition `--shard` uses).
    Plan {
        /// Experiment files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Worker counts to plan for.
        #[arg(long, value_delimiter = ',', default_value = "1,8,128")]
        workers: Vec<usize>,
        /// Results root whose recorded cell times are used (cells without one cost the recorded median).
        #[arg(long, default_value = "results")]
        times_from: PathBuf,
        /// Plan the [quick] version.
        #[arg(long)]
        quick: bool,
        /// Use only the cell times recorded on this machine kind (`AVX-512`, `AVX2`, …, or `not recorded`
        /// for cells computed before the kind was recorded); by default each experiment's most common kind.
        /// Times of different kinds are never added up.
        #[arg(long)]
        machine_kind: Option<String>,
    },
    /// Check experiment files without running them: everything `rfx run` and `rfx run --quick` would use
    /// (the [quick] overrides included), and the sweep's size (at most 100,000 cells).
    Validate {
        /// Experiment files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Report the cell count with the [quick] overrides applied (both variants are checked either way).
        #[arg(long)]
        quick: bool,
    },
    /// List the experiment files and the experiment kinds.
    List {
        /// Folder with experiment files.
        #[arg(long, default_value = "experiments")]
        dir: PathBuf,
    },
    /// The machine as cells record it (the `cpu` column): kind (AVX-512, AVX2, …), the OpenBLAS kernels in
    /// use (`OPENBLAS_CORETYPE` overrides them) and the CPU model. Results are bit-identical for any thread
    /// count on one machine; across kinds and kernels, identical or within each experiment's tolerance.
    Machine,
    /// Re-plot an experiment's results folder from its CSV, without recomputing.
    Plot {
        /// Results folders (e.g. results/gegenbauer-vs-taylor).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Copy (from $RFX_DATA_MIRROR) or download data sets into $RFX_DATA_DIR, verifying their sha256.
    Fetch {
        /// Data set names (see --list).
        names: Vec<String>,
        /// Fetch every registered data set.
        #[arg(long)]
        all: bool,
        /// List the registered data sets.
        #[arg(long)]
        list: bool,
        /// Cache directory (default: $RFX_DATA_DIR, or data-cache in the workspace).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Rebuild the report README.md from every experiment under the results root (nothing is computed).
    Report {
        /// Results root.
        #[arg(long, default_value = "results")]
        root: PathBuf,
        /// The papers' figures and tables with their status, rendered as the coverage table at the top
        /// (skipped when the default file does not exist).
        #[arg(long, default_value = PAPERS_FILE)]
        papers: PathBuf,
        /// The project README whose generated block (between `<!-- verdicts:begin -->` and
        /// `<!-- verdicts:end -->`) lists what the claims say by paper (default: README.md, when the root is
        /// `results` and README.md has the block).
        #[arg(long)]
        readme: Option<PathBuf>,
    },
    /// List every feature map and exact kernel with parameters, defaults, ranges and papers.
    Methods {
        /// Also print each map's output dimension at this budget m.
        #[arg(long)]
        dim: Option<usize>,
    },
    /// Random features of your data: fit a map (see rfx methods) and write one feature row per input row.
    ///
    /// Data-oblivious maps stream the input in blocks of rows (memory: one block); data-dependent maps
    /// (nystrom, ternary) are fitted on --fit-on (default: the input, read whole) first.
    Features {
        /// Method name (rfx methods).
        #[arg(long)]
        method: String,
        /// A method parameter, name=value (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Feature budget m (the output width follows the method's rule in rfx methods).
        #[arg(long, allow_negative_numbers = true, value_parser = crate::tools::count)]
        dim: usize,
        /// Seed of the map's random stream.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::tools::seed)]
        seed: u64,
        /// Input rows (.csv or .npy float32/float64).
        #[arg(long)]
        input: PathBuf,
        /// Output file (.csv or .npy), written atomically.
        #[arg(long)]
        output: PathBuf,
        /// Type of the output values: auto (float32 for a float32 .npy input, else float64), f32, f64.
        #[arg(long, default_value = "auto", value_parser = crate::tools::out_dtype)]
        dtype: crate::matrix_io::OutDtype,
        /// Rows to fit a data-dependent map on (default: the input).
        #[arg(long)]
        fit_on: Option<PathBuf>,
        /// Whether CSV files start with a header line: auto (a header iff a field of line 1 is not a number), yes, no.
        #[arg(long, default_value = "auto", value_parser = crate::tools::header_mode)]
        header: HeaderMode,
        /// Rows per block (memory: one block of input and output rows).
        #[arg(long, default_value_t = 4096, allow_negative_numbers = true, value_parser = crate::tools::block_rows)]
        block_rows: usize,
        /// Memory cap in MiB for the map, the fitting rows and one block (default 8192, the linalg crate's 8 GiB).
        #[arg(long, allow_negative_numbers = true, value_parser = crate::tools::count_u64)]
        memory_cap_mb: Option<u64>,
    },
    /// The exact kernel matrix K(X, Y) (Y = X unless --against), in parallel blocks of rows.
    ///
    /// Kernels: gaussian, polynomial, arccos0, arccos1, ntk, nngp, gzk, cntk (images as rows; shape by
    /// --param height=,width=,channels=) — rfx methods lists their parameters.
    Gram {
        /// Kernel name (rfx methods).
        #[arg(long)]
        kernel: String,
        /// A kernel parameter, name=value (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Rows X (.csv or .npy).
        #[arg(long)]
        input: PathBuf,
        /// Rows Y (default: X).
        #[arg(long)]
        against: Option<PathBuf>,
        /// Output file (.csv or .npy), written atomically.
        #[arg(long)]
        output: PathBuf,
        /// Type of the output values: auto (float32 for a float32 .npy --input, else float64), f32, f64.
        #[arg(long, default_value = "auto", value_parser = crate::tools::out_dtype)]
        dtype: crate::matrix_io::OutDtype,
        /// CSV header line: auto, yes, no.
        #[arg(long, default_value = "auto", value_parser = crate::tools::header_mode)]
        header: HeaderMode,
        /// Rows of X per block.
        #[arg(long, default_value_t = 1024, allow_negative_numbers = true, value_parser = crate::tools::block_rows)]
        block_rows: usize,
        /// Memory cap in MiB for the inputs and one block (default 8192, the linalg crate's 8 GiB).
        #[arg(long, allow_negative_numbers = true, value_parser = crate::tools::count_u64)]
        memory_cap_mb: Option<u64>,
    },
    /// Ridge regression (or classification) on random features, lambda by k-fold cross-validation.
    Fit {
        /// Method name (rfx methods).
        #[arg(long)]
        method: String,
        /// A method parameter, name=value (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Feature budget m.
        #[arg(long, allow_negative_numbers = true, value_parser = crate::tools::count)]
        dim: usize,
        /// Seed of the map and of the CV folds.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::tools::seed)]
        seed: u64,
        /// Training rows, target column included (.csv or .npy).
        #[arg(long)]
        input: PathBuf,
        /// Target column: a header name or a 0-based index.
        #[arg(long, allow_hyphen_values = true)]
        target_column: String,
        /// Test rows with the same columns.
        #[arg(long)]
        test: PathBuf,
        /// regression (test MSE) or classification (target values are labels; test accuracy).
        #[arg(long, value_enum, default_value = "regression")]
        task: Task,
        /// Cross-validation folds.
        #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = crate::tools::count)]
        folds: usize,
        /// Write the test predictions here (CSV, one column).
        #[arg(long)]
        predictions: Option<PathBuf>,
        /// CSV header line: auto, yes, no.
        #[arg(long, default_value = "auto", value_parser = crate::tools::header_mode)]
        header: HeaderMode,
        /// Memory cap in MiB for the data, the map, the features and the ridge solve (default 8192, the
        /// linalg crate's 8 GiB).
        #[arg(long, allow_negative_numbers = true, value_parser = crate::tools::count_u64)]
        memory_cap_mb: Option<u64>,
    },
}

/// `--memory-cap-mb` in bytes (default: [`rfx_linalg::DEFAULT_MEMORY_CAP`]).
fn memory_cap(mb: Option<u64>) -> u64 {
    mb.map_or(rfx_linalg::DEFAULT_MEMORY_CAP, |mb| {
        mb.saturating_mul(1 << 20)
    })
}

/// Parses the arguments, runs, prints errors, and returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line(&e.render().to_string()));
            return 2;
        }
        Err(e) => {
            let _ = e.print(); // --help, --version
            return 0;
        }
    };
    match check_rayon_env()
        .and_then(|()| check_data_env())
        .and_then(|()| execute(cli))
    {
        Ok(()) => 0,
        Err(e) => {
            // one line, whatever a library put in the message (e.g. a parser's multi-line diagnostic)
            let msg = e.to_string();
            let parts: Vec<&str> = msg
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("error: {}", parts.join(" "));
            e.exit_code()
        }
    }
}

/// A clap error message on one line: its lines up to the usage summary, trimmed and joined, tips left out.
fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines() {
        let t = line.trim();
        if t.starts_with("Usage:") || t.starts_with("For more information") {
            break;
        }
        if t.is_empty() || t.starts_with("tip:") {
            continue;
        }
        parts.push(t);
    }
    let mut msg = parts.join(" ");
    if !msg.starts_with("error") {
        msg.insert_str(0, "error: ");
    }
    msg.push_str(" (see --help)");
    msg
}

/// The most worker threads `--threads` may ask for.
const MAX_THREADS: usize = 1024;

/// The longest `--time-limit`, in minutes (about two years).
const MAX_TIME_LIMIT_MIN: f64 = 1e6;

/// `RAYON_NUM_THREADS`, which sizes rayon's global pool before any `--threads` applies, within the same
/// limits as `--threads` (100,000 made `rfx gram` panic or hang: issue 60). Unset or empty: all cores.
fn check_rayon_env() -> Result<(), AppError> {
    let Some(v) = std::env::var_os("RAYON_NUM_THREADS") else {
        return Ok(());
    };
    let text = v.to_string_lossy();
    match text.trim().parse::<usize>() {
        _ if text.trim().is_empty() => Ok(()),
        // rayon itself reads 0 as "all cores"
        Ok(t) if t <= MAX_THREADS => Ok(()),
        _ => Err(AppError::usage(format!(
            "environment variable RAYON_NUM_THREADS={text:?}: expected a number of threads from 1 to \
             {MAX_THREADS} (0 or unset: all cores)"
        ))),
    }
}

/// `RFX_DATA_DIR` and `RFX_DATA_MIRROR`, when set and existing, must be folders: a plain file there made
/// every cell fail as if the tool were broken (exit 1) instead of naming the variable (exit 2).
fn check_data_env() -> Result<(), AppError> {
    for var in ["RFX_DATA_DIR", "RFX_DATA_MIRROR"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let path = std::path::Path::new(&v);
            if path.exists() && !path.is_dir() {
                return Err(AppError::usage(format!(
                    "environment variable {var}={}: not a folder (a data folder with one subfolder per \
                     source; unset it for the default)",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

/// `--threads`: at least 1 and at most [`MAX_THREADS`].
fn check_threads(threads: Option<usize>) -> Result<(), AppError> {
    match threads {
        Some(t) if t == 0 || t > MAX_THREADS => Err(AppError::usage(format!(
            "--threads {t}: expected a number of worker threads from 1 to {MAX_THREADS}"
        ))),
        _ => Ok(()),
    }
}

/// `--time-limit MINUTES` as a deadline from now: a number of minutes above 0 and at most
/// [`MAX_TIME_LIMIT_MIN`] (0, negative, NaN and infinite limits are refused, not run).
fn deadline_of(time_limit: Option<f64>) -> Result<Option<std::time::Instant>, AppError> {
    let Some(m) = time_limit else {
        return Ok(None);
    };
    let refuse = || {
        AppError::usage(format!(
            "--time-limit {m}: expected a number of minutes above 0 and at most {MAX_TIME_LIMIT_MIN}"
        ))
    };
    if !(m > 0.0 && m <= MAX_TIME_LIMIT_MIN) {
        return Err(refuse());
    }
    let limit = std::time::Duration::try_from_secs_f64(m * 60.0).map_err(|_| refuse())?;
    std::time::Instant::now()
        .checked_add(limit)
        .map(Some)
        .ok_or_else(refuse)
}

/// The files with each file named once (a glob and an explicit name may both name one file; it runs once).
fn once_each(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    files
        .into_iter()
        .filter(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())))
        .collect()
}

/// Two experiment files with one `[experiment] name` would write into one results folder, the second
/// discarding or mixing with the first's cells: refused.
fn distinct_names(files: &[PathBuf], specs: &[Spec]) -> Result<(), AppError> {
    for (i, s) in specs.iter().enumerate() {
        if let Some(j) = specs[..i].iter().position(|t| t.name == s.name) {
            return Err(AppError::usage(format!(
                "{} and {} both name experiment `{}`, so they would write into one results folder; give \
                 them different [experiment] names",
                files[j].display(),
                files[i].display(),
                s.name
            )));
        }
    }
    Ok(())
}

/// The results root: `--out`, else `results` (`results/quick` with `--quick`).
fn results_root(out: Option<PathBuf>, quick: bool) -> PathBuf {
    out.unwrap_or_else(|| PathBuf::from(if quick { "results/quick" } else { "results" }))
}

/// The coverage data file (`rfx_harness::coverage`): every figure and table of the five papers.
const PAPERS_FILE: &str = "experiments/papers.toml";

/// The README whose generated block the report rewrites: `explicit`, else `README.md` when `root` is the
/// default `results` and README.md has the block (`rfx_harness::report::README_BEGIN`).
fn readme_file(root: &Path, explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit.or_else(|| {
        let readme = PathBuf::from("README.md");
        (root == Path::new("results")
            && std::fs::read_to_string(&readme)
                .is_ok_and(|t| t.contains(rfx_harness::report::README_BEGIN)))
        .then_some(readme)
    })
}

/// The coverage data file for the report: `papers` when it exists; the default path may be absent (run
/// outside the workspace), any other path must exist.
fn papers_file(papers: &Path) -> Result<Option<&Path>, AppError> {
    if papers.is_file() {
        Ok(Some(papers))
    } else if papers == Path::new(PAPERS_FILE) {
        Ok(None)
    } else {
        Err(AppError::usage(format!(
            "{}: no such coverage file",
            papers.display()
        )))
    }
}

/// The experiment files among `files`: a `Cargo.toml` (the binary's manifest sits in `experiments/`, so
/// `experiments/*.toml` names it) and the coverage data file `papers.toml` are skipped with a note on stderr
/// instead of failing the whole command.
fn experiment_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    files
        .into_iter()
        .filter(|f| {
            let cargo = is_cargo_manifest(f);
            let papers = f.file_name().is_some_and(|n| n == "papers.toml");
            if cargo || papers {
                eprintln!(
                    "{}: skipped ({}, not an experiment file)",
                    f.display(),
                    if cargo {
                        "a Cargo manifest"
                    } else {
                        "the coverage data file"
                    }
                );
            }
            !(cargo || papers)
        })
        .collect()
}

fn is_cargo_manifest(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "Cargo.toml")
}

fn execute(cli: Cli) -> Result<(), AppError> {
    let kinds = kinds::registry();
    match cli.command {
        Command::Run {
            files,
            quick,
            threads,
            out,
            fresh,
            no_progress,
            time_limit,
            times_from,
            shard,
        } => {
            check_threads(threads)?;
            let deadline = deadline_of(time_limit)?;
            if let Some(from) = &times_from {
                if !from.is_dir() {
                    return Err(AppError::usage(format!(
                        "--times-from {}: not a directory (expected a results tree such as results)",
                        from.display()
                    )));
                }
            }
            // Validate every file before running any, so that a typo in the last file costs nothing.
            let files = once_each(experiment_files(files));
            let specs = files
                .iter()
                .map(|f| Spec::load(f, quick, &kinds))
                .collect::<Result<Vec<_>, _>>()?;
            distinct_names(&files, &specs)?;
            let root = results_root(out, quick);
            let mut opts = RunOptions::new(root.clone());
            opts.threads = threads;
            opts.fresh = fresh;
            opts.progress = !no_progress;
            opts.deadline = deadline;
            opts.shard = shard;
            let expected: Vec<Option<std::collections::HashMap<String, f64>>> = match &times_from {
                Some(from) => {
                    let times: Vec<_> = specs
                        .iter()
                        .map(|s| rfx_harness::verify::recorded_times(s, from, &kinds))
                        .collect();
                    print_expected_times(&specs, &times, &root, threads)?;
                    times
                }
                None => vec![None; specs.len()],
            };
            for (spec, times) in specs.iter().zip(expected) {
                opts.expected = times;
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    // not started: its results (and their manifest) stay as they are
                    println!("{}: not started, time limit reached", spec.name);
                    continue;
                }
                if let Some(k) = shard {
                    let r = rfx_harness::run::run_shard(spec, &opts, k)?;
                    use rfx_harness::plan::human;
                    let show = |t: f64| {
                        if r.timed {
                            human(t)
                        } else {
                            format!("{t:.0}")
                        }
                    };
                    let loads: Vec<String> = r.loads.iter().map(|&t| show(t)).collect();
                    println!(
                        "{}: shard {k}: {} cells ({} computed, {} already done, {} skipped) in {:.2} s -> {}; \
                         expected {} {} (every shard: {}; costs from {})",
                        spec.name,
                        r.run.total,
                        r.run.computed,
                        r.run.reused,
                        r.run.skipped,
                        r.run.wall_s,
                        r.run.dir.display(),
                        if r.timed { "time" } else { "relative load" },
                        show(r.loads[k.index]),
                        loads.join(", "),
                        r.costs_from
                    );
                    if r.run.remaining > 0 {
                        println!(
                            "{}: time limit reached, {} cells of shard {k} not computed (run the same command \
                             again to resume)",
                            spec.name, r.run.remaining
                        );
                    }
                    continue;
                }
                let r = run(spec, &opts)?;
                println!(
                    "{}: {} cells ({} computed, {} reused, {} skipped) in {:.2} s -> {}",
                    spec.name,
                    r.total,
                    r.computed,
                    r.reused,
                    r.skipped,
                    r.wall_s,
                    r.dir.display()
                );
                if r.remaining > 0 {
                    println!(
                        "{}: time limit reached, {} cells not computed; outputs marked partial (run the same \
                         command again to resume)",
                        spec.name, r.remaining
                    );
                }
            }
            if shard.is_some() {
                // Other shards may still be running: the outputs and the report are the merge's.
                println!("when every shard is done: rfx merge <results folder>");
                return Ok(());
            }
            if !root.is_dir() {
                return Ok(()); // nothing was started (time limit): nothing to report, nothing created
            }
            let papers = papers_file(Path::new(PAPERS_FILE))?;
            let readme = readme_file(&root, None);
            let n = rfx_harness::report::write_report(&root, &kinds, papers, readme.as_deref())?;
            println!(
                "report: {} ({n} experiments)",
                root.join(REPORT_FILE).display()
            );
            Ok(())
        }
        Command::Merge { dirs } => {
            let mut roots: Vec<PathBuf> = Vec::new();
            for d in once_each(dirs) {
                let r = rfx_harness::merge::merge(&d, &kinds)?;
                println!(
                    "{}: merged {} shards: {} cells ({} from an earlier cells.csv) -> {}",
                    r.name,
                    r.shards,
                    r.cells,
                    r.from_earlier,
                    r.dir.display()
                );
                let root = r.dir.parent().map(Path::to_path_buf).unwrap_or_default();
                if !roots.contains(&root) {
                    roots.push(root);
                }
            }
            let papers = papers_file(Path::new(PAPERS_FILE))?;
            for root in roots {
                let readme = readme_file(&root, None);
                let n =
                    rfx_harness::report::write_report(&root, &kinds, papers, readme.as_deref())?;
                println!(
                    "report: {} ({n} experiments)",
                    root.join(REPORT_FILE).display()
                );
            }
            Ok(())
        }
        Command::Compare { a, b, identical } => {
            rfx_harness::compare::run_compare(&a, &b, identical, &kinds)
        }
        Command::Verify {
            budget,
            root,
            seed,
            threads,
            report,
            experiments,
        } => {
            if !(budget.is_finite() && budget > 0.0) {
                return Err(AppError::usage(format!(
                    "--budget {budget}: expected a number of minutes > 0"
                )));
            }
            check_threads(threads)?;
            let report = report.unwrap_or_else(|| root.join(VERIFICATION_FILE));
            rfx_harness::verify::verify(
                &rfx_harness::verify::VerifyOptions {
                    root,
                    budget_s: budget * 60.0,
                    seed,
                    threads,
                    report,
                    experiments,
                },
                &kinds,
            )
        }
        Command::Status { files, quick, out } => {
            let files = experiment_files(files);
            let specs = files
                .iter()
                .map(|f| Spec::load(f, quick, &kinds))
                .collect::<Result<Vec<_>, _>>()?;
            let root = results_root(out, quick);
            for (f, spec) in files.iter().zip(&specs) {
                println!(
                    "{}: {}",
                    f.display(),
                    rfx_harness::run::status(spec, &root)?
                );
            }
            Ok(())
        }
        Command::Plan {
            files,
            workers,
            times_from,
            quick,
            machine_kind,
        } => {
            if let Some(bad) = workers
                .iter()
                .find(|&&w| !(1..=MAX_PLAN_WORKERS).contains(&w))
            {
                return Err(AppError::usage(format!(
                    "--workers: {bad} is not a worker count; allowed: whole numbers from 1 to {MAX_PLAN_WORKERS}, \
                     e.g. --workers 1,8,128"
                )));
            }
            plan(
                &experiment_files(files),
                &workers,
                &times_from,
                quick,
                machine_kind.as_deref(),
                &kinds,
            )
        }
        Command::Validate { files, quick } => {
            // Either way both variants are checked (Spec::parse): what `rfx run` and `rfx run --quick` use.
            for f in &experiment_files(files) {
                // read once: a pipe (`<(cat file)`) cannot be read twice
                let source = Spec::read_source(f)?;
                let spec = Spec::parse(f, &source, quick, &kinds)?;
                let other = Spec::parse(f, &source, !quick, &kinds)?;
                let (n, m) = (spec.cells().len(), other.cells().len());
                println!(
                    "{}: ok: experiment `{}`, kind `{}`, {n} cells{}",
                    f.display(),
                    spec.name,
                    spec.kind,
                    match (n == m, quick) {
                        (true, _) => String::new(),
                        (false, false) => format!(" ({m} with --quick)"),
                        (false, true) => format!(" ({m} without --quick)"),
                    }
                );
            }
            Ok(())
        }
        Command::List { dir } => list(&dir, &kinds),
        Command::Machine => {
            println!(
                "{} ({})",
                rfx_harness::run::cpu_field(kinds.kernels_name()),
                std::env::var("OPENBLAS_CORETYPE").map_or_else(
                    |_| "OPENBLAS_CORETYPE unset".into(),
                    |v| format!("OPENBLAS_CORETYPE={v}")
                )
            );
            Ok(())
        }
        Command::Plot { dirs } => {
            for d in &dirs {
                rfx_harness::outputs::replot(d, &kinds)?;
                println!("{}: re-plotted", d.display());
            }
            Ok(())
        }
        Command::Fetch {
            names,
            all,
            list,
            dir,
        } => fetch(names, all, list, dir),
        Command::Report {
            root,
            papers,
            readme,
        } => {
            let readme = readme_file(&root, readme);
            let n = rfx_harness::report::write_report(
                &root,
                &kinds,
                papers_file(&papers)?,
                readme.as_deref(),
            )?;
            println!("{}: {n} experiments", root.join(REPORT_FILE).display());
            Ok(())
        }
        Command::Methods { dim } => {
            crate::tools::list_methods(dim);
            Ok(())
        }
        Command::Features {
            method,
            params,
            dim,
            seed,
            input,
            output,
            fit_on,
            header,
            block_rows,
            memory_cap_mb,
            dtype,
        } => crate::tools::features(&FeaturesArgs {
            method,
            params,
            dim,
            seed,
            input,
            output,
            fit_on,
            header,
            block_rows,
            memory_cap: memory_cap(memory_cap_mb),
            dtype,
        })
        .map(|_| ()),
        Command::Gram {
            kernel,
            params,
            input,
            against,
            output,
            header,
            block_rows,
            memory_cap_mb,
            dtype,
        } => crate::tools::gram(&GramArgs {
            kernel,
            params,
            input,
            against,
            output,
            header,
            block_rows,
            memory_cap: memory_cap(memory_cap_mb),
            dtype,
        })
        .map(|_| ()),
        Command::Fit {
            method,
            params,
            dim,
            seed,
            input,
            target_column,
            test,
            task,
            folds,
            predictions,
            header,
            memory_cap_mb,
        } => crate::tools::fit(&FitArgs {
            method,
            params,
            dim,
            seed,
            input,
            test,
            target_column,
            task,
            folds,
            predictions,
            header,
            memory_cap: memory_cap(memory_cap_mb),
        })
        .map(|_| ()),
    }
}

/// Prints the expected wall time of each experiment's cells still to compute under `root`, from the recorded
/// cell times (`None`: no recorded run of the same settings), and the total.
fn print_expected_times(
    specs: &[Spec],
    times: &[Option<std::collections::HashMap<String, f64>>],
    root: &Path,
    threads: Option<usize>,
) -> Result<(), AppError> {
    let workers = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    println!("Expected wall time from the recorded cell times ({workers} threads):");
    let mut total = 0.0;
    let mut unknown = Vec::new();
    for (spec, t) in specs.iter().zip(times) {
        let layout = rfx_harness::results::Layout::of(spec);
        let earlier = ResultsFolder::of(root, spec).earlier_cells(spec, &layout)?;
        let done: std::collections::HashSet<String> = match earlier.state {
            Earlier::Same => earlier.rows.iter().map(|r| r.key(&layout)).collect(),
            _ => Default::default(),
        };
        let pending: Vec<String> = spec
            .cells()
            .iter()
            .map(|c| c.key())
            .filter(|k| !done.contains(k))
            .collect();
        let Some(t) = t else {
            println!(
                "  {:<34} {:>6} cells to compute   unknown (no recorded cells of these settings)",
                spec.name,
                pending.len()
            );
            unknown.push(spec.name.as_str());
            continue;
        };
        let cell_s: f64 = pending.iter().filter_map(|k| t.get(k)).sum();
        let wall = if spec.parallel_cells {
            cell_s / workers as f64
        } else {
            cell_s
        };
        total += wall;
        println!(
            "  {:<34} {:>6} cells to compute   {}",
            spec.name,
            pending.len(),
            rfx_harness::plan::human(wall)
        );
    }
    println!(
        "  {:<34} {:>6}                   {}{}",
        "total",
        "",
        rfx_harness::plan::human(total),
        if unknown.is_empty() {
            String::new()
        } else {
            format!(" + unknown for {}", unknown.join(", "))
        }
    );
    Ok(())
}

fn fetch(names: Vec<String>, all: bool, list: bool, dir: Option<PathBuf>) -> Result<(), AppError> {
    let known = rfx_data::dataset_names();
    if list {
        for n in &known {
            println!("{n}");
        }
        return Ok(());
    }
    let names: Vec<String> = if all {
        known.iter().map(|s| s.to_string()).collect()
    } else {
        names
    };
    if names.is_empty() {
        return Err(AppError::usage(
            "rfx fetch: name data sets, or pass --all (see rfx fetch --list)",
        ));
    }
    for n in &names {
        if !known.contains(&n.as_str()) {
            return Err(AppError::usage(format!(
                "rfx fetch: unknown data set \"{n}\"; allowed: {}",
                known.join(", ")
            )));
        }
    }
    let cache = dir.unwrap_or_else(rfx_data::cache_dir_from_env);
    let source = rfx_data::Source::from_env();
    let t0 = std::time::Instant::now();
    let mut files = 0;
    // Every named set is tried, so that one unreachable source does not keep the others from being
    // fetched; a failure (missing mirror file, checksum mismatch, network, package client) is an input
    // problem: exit 2, one line naming the failed sets and the first reason.
    let mut failed: Vec<(&String, String)> = Vec::new();
    for n in &names {
        match rfx_data::fetch(n, &cache, &source) {
            Ok(paths) => files += paths.len(),
            Err(e) => failed.push((n, e.to_string())),
        }
    }
    let fetched = names.len() - failed.len();
    println!(
        "fetched {fetched} data sets ({files} files, sha256 verified) into {} in {:.1} s",
        cache.display(),
        t0.elapsed().as_secs_f64()
    );
    match failed.first() {
        None => Ok(()),
        Some((_, first)) if failed.len() == 1 => Err(AppError::usage(first.clone())),
        Some((_, first)) => Err(AppError::usage(format!(
            "{} of {} data sets could not be fetched: {} (first: {first})",
            failed.len(),
            names.len(),
            failed
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn list(dir: &Path, kinds: &Kinds) -> Result<(), AppError> {
    println!("Experiments in {}:", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| AppError::usage(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| !is_cargo_manifest(p))
        .collect();
    files.sort();
    for f in files {
        match Spec::load(&f, false, kinds) {
            Ok(s) => println!(
                "  {:<40} {:<16} {:>6} cells  {}",
                f.display(),
                s.kind,
                s.cells().len(),
                s.title
            ),
            Err(e) => println!("  {:<40} INVALID: {e}", f.display()),
        }
    }
    println!("\nExperiment kinds:");
    for k in kinds.iter() {
        println!("  {:<16} {}", k.name(), k.about());
        for p in k.sweep_params() {
            println!("      sweep.{:<12} {}", p.name, p.allowed);
        }
    }
    Ok(())
}

/// The most workers `rfx plan` plans for: more than any sweep has cells (at most 100,000) makes no difference.
const MAX_PLAN_WORKERS: usize = 100_000;

/// `rfx plan`: one line per experiment and one for all of them pooled (every cell of every experiment shared
/// among the workers).
fn plan(
    files: &[PathBuf],
    workers: &[usize],
    times_from: &Path,
    quick: bool,
    machine_kind: Option<&str>,
    kinds: &rfx_harness::Kinds,
) -> Result<(), AppError> {
    use rfx_harness::plan::{human, Plan};
    // The machine kind whose cell times each experiment's plan uses, and the timed cells of other kinds left
    // out (times of two kinds differ 2–3× and are never added up).
    let mut kind_used: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut left_out: Vec<String> = Vec::new();
    let mut plans = Vec::new();
    // Which CPU recorded each experiment's times (the manifest's last computing run; manifests written before
    // the CPU was recorded say nothing), grouped so that the hours below can be read against this machine.
    let mut recorded_on: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    // the kinds a --machine-kind may name: those rfx records, and those of the cells found
    let mut known_kinds = rfx_harness::verify::standard_machine_kinds();
    let mut specs = Vec::new();
    for f in files {
        let spec = Spec::load(f, quick, kinds)?;
        for k in rfx_harness::verify::recorded_machine_kinds(&spec, times_from, kinds) {
            if !known_kinds.contains(&k) {
                known_kinds.push(k);
            }
        }
        specs.push(spec);
    }
    if let Some(k) = machine_kind.filter(|k| !known_kinds.iter().any(|x| x == k)) {
        return Err(AppError::usage(format!(
            "--machine-kind {:?}: not a machine kind rfx records, and no cell under {} is of it; allowed: {}",
            k.chars().take(40).collect::<String>(),
            times_from.display(),
            known_kinds.join(", ")
        )));
    }
    for spec in specs {
        if plans.iter().any(|p: &Plan| p.name == spec.name) {
            continue; // the same experiment named twice (e.g. by two globs)
        }
        let times =
            rfx_harness::verify::recorded_times_of_kind(&spec, times_from, kinds, machine_kind)
                .map(|(kind, times, others)| {
                    if !times.is_empty() {
                        kind_used.entry(kind).or_default().push(spec.name.clone());
                    }
                    if others > 0 {
                        left_out.push(format!("{} ({others})", spec.name));
                    }
                    times
                });
        if times.as_ref().is_some_and(|t| !t.is_empty()) {
            let cpu = rfx_harness::folder::ResultsFolder::of(times_from, &spec)
                .read_manifest()
                .and_then(|m| m.pointer("/host/cpu")?.as_str().map(str::to_string))
                .unwrap_or_else(|| "not recorded (runs before 2026-11-28)".into());
            recorded_on.entry(cpu).or_default().push(spec.name.clone());
        }
        plans.push(Plan::of_spec(&spec, times.as_ref()));
    }
    let head: Vec<String> = workers.iter().map(|n| format!("N = {n}")).collect();
    println!(
        "| experiment | cells | times recorded | cell time | longest cell | {} |",
        head.join(" | ")
    );
    println!("|---|---|---|---|---|{}", "---|".repeat(workers.len()));
    let row = |p: &Plan| {
        if p.recorded == 0 {
            // The kind's cost model is relative, not seconds: no time to show.
            let na = vec!["–"; workers.len() + 2].join(" | ");
            println!("| {} | {} | 0 | {na} |", p.name, p.cells);
            return;
        }
        let walls: Vec<String> = workers.iter().map(|&n| human(p.wall(n))).collect();
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            p.name,
            p.cells,
            p.recorded,
            human(p.total()),
            human(p.longest()),
            walls.join(" | ")
        );
    };
    for p in &plans {
        row(p);
    }
    let (timed, untimed): (Vec<Plan>, Vec<Plan>) = plans.into_iter().partition(|p| p.recorded > 0);
    if timed.len() > 1 {
        let pooled = Plan::pooled("all, pooled", &timed);
        row(&pooled);
    }
    if !recorded_on.is_empty() {
        println!(
            "\nCell times as recorded, on the CPU of each experiment's last computing run; this machine: {}.",
            rfx_harness::run::cpu_description()
        );
        for (cpu, names) in &recorded_on {
            println!("- {cpu}: {}", names.join(", "));
        }
    }
    if !kind_used.is_empty() {
        println!(
            "\nMachine kind of the cell times used (this machine: {}):",
            rfx_harness::run::machine_kind()
        );
        for (kind, names) in &kind_used {
            println!("- {kind}: {}", names.join(", "));
        }
        if kind_used.len() > 1 {
            println!(
                "The pooled row adds times of several kinds; `--machine-kind KIND` plans one kind only."
            );
        }
    }
    if !left_out.is_empty() {
        println!(
            "Timed cells of another machine kind, left out and costed at the median of the kind used: {}.",
            left_out.join(", ")
        );
    }
    if !untimed.is_empty() {
        println!(
            "\n– no cell times recorded under {} for {} (run once, or pass --times-from DIR); left out of the \
             pooled row. `rfx run --shard` balances them by the kind's relative cost model.",
            times_from.display(),
            untimed
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}
