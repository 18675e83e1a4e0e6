//! The "use it on your data" commands: `rfx features`, `rfx gram`, `rfx fit` and `rfx methods`, over the
//! method and kernel registry of [`rfx_registry`] and the matrix readers/writers of [`crate::matrix_io`].
//!
//! * `features`: fits a feature map (data-oblivious maps need only the input dimension; data-dependent ones
//!   are fitted on the rows of `--fit-on`, default the input) with the ChaCha20 stream
//!   `rng_stream(seed, "rfx features;method=<name>")` ([`rfx_registry::feature_stream`]), then transforms the input in blocks of rows and writes
//!   each block as it is computed: memory is one block of input and output plus the map (and the fitting
//!   rows of a data-dependent map).
//! * `gram`: the exact kernel matrix $K_{ij} = k(x_i, y_j)$ in blocks of rows of $X$, the rows of a block
//!   split into fixed chunks computed in parallel (so the result does not depend on the thread count), each
//!   block written as it is finished; the memory held ($X$, $Y$, one block) is checked against the cap with
//!   `rfx_linalg::check_memory` before anything is allocated.
//! * `fit`: ridge regression $w = (Z^\top Z + n\lambda I)^{-1}Z^\top(y - \bar y)$ on the features $Z$ of the
//!   training rows, λ chosen on a log grid by k-fold cross-validation (`rfx_solvers::ridge::fit_ridge_cv`,
//!   one eigendecomposition per fold); classification fits one-hot targets and predicts the row argmax.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarray::{s, Array2, ArrayView2, Axis};
use rfx_core::{stream_seed, RfxError};
use rfx_linalg::{check_memory, f64_bytes};
use rfx_solvers::ridge::{
    argmax_rows, fit_ridge_cv, log10_grid, one_hot, CvScore, LambdaScale, LambdaSearch, RidgeForm,
    Validation,
};

use crate::matrix_io::{
    read_matrix, read_matrix_labeled, refuse_overwrite, shown, Dtype, HeaderMode, Labeled,
    MatrixWriter, OutDtype, RowBlocks,
};
use rfx_core::FitData;
use rfx_harness::error::AppError;
use rfx_registry::{
    self as methods, feature_stream, gram_rows, gram_self_rows, transform_rows, transform_rows_f32,
    MethodSpec, ParamDoc, FEATURE_CHUNK, GRAM_CHUNK,
};

/// Largest block of rows a command holds at once, whatever `--block-rows` says (blocks only bound memory:
/// chunk boundaries, hence the numbers, do not depend on them).
const MAX_BLOCK_ROWS: usize = 1 << 24;

/// Rounds a block size up to a positive multiple of `chunk` (at most [`MAX_BLOCK_ROWS`]), so that chunk
/// boundaries sit at fixed row indices whatever the block size.
fn round_block(rows: usize, chunk: usize) -> usize {
    rows.clamp(1, MAX_BLOCK_ROWS).div_ceil(chunk) * chunk
}

/// The memory check of the commands: `values` `f64`s needed for `what`, against `cap` bytes (exit 2).
fn check_cap(what: &str, values: u128, cap: u64) -> Result<(), AppError> {
    check_memory(what, f64_bytes(values), cap).map_err(|e| {
        AppError::usage(format!(
            "{e}; lower --dim or --block-rows, or raise --memory-cap-mb"
        ))
    })
}

/// Worker threads of the parallel chunks (each holds one chunk's temporaries).
fn workers() -> u128 {
    rayon::current_num_threads().max(1) as u128
}

/// OpenBLAS splits a GEMM differently with different thread counts, which changes the last bits of the
/// result; the commands use one BLAS thread per task and parallelise over fixed row chunks instead, so
/// their output is bit-for-bit the same for any number of threads.
fn single_threaded_blas() {
    rfx_linalg::set_blas_threads(1);
}

/// An algorithm-crate error as a command error: invalid parameters, shape mismatches and memory caps are
/// the user's input (exit 2), numerical failures and the rest internal (exit 1).
pub fn crate_error(context: &str, e: RfxError) -> AppError {
    match e {
        RfxError::InvalidParameter { .. }
        | RfxError::DimensionMismatch(_)
        | RfxError::OutOfMemory { .. }
        | RfxError::Data(_) => AppError::usage(format!("{context}: {e}")),
        _ => AppError::internal(format!("{context}: {e}")),
    }
}

/// Splits `--param k=v` arguments.
pub fn parse_pairs(raw: &[String]) -> Result<Vec<(String, String)>, AppError> {
    raw.iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(AppError::usage(format!(
                "--param \"{p}\": expected name=value (see rfx methods)"
            ))),
        })
        .collect()
}

/// Options of `rfx features`.
#[derive(Debug, Clone)]
pub struct FeaturesArgs {
    /// Method name.
    pub method: String,
    /// `k=v` parameters.
    pub params: Vec<String>,
    /// Budget $m$.
    pub dim: usize,
    /// Seed of the map's random stream.
    pub seed: u64,
    /// Input rows.
    pub input: PathBuf,
    /// Output file.
    pub output: PathBuf,
    /// Rows a data-dependent map is fitted on (default: the input).
    pub fit_on: Option<PathBuf>,
    /// CSV header handling.
    pub header: HeaderMode,
    /// Rows per block.
    pub block_rows: usize,
    /// Memory cap in bytes.
    pub memory_cap: u64,
    /// Type of the output values.
    pub dtype: OutDtype,
}

/// Fits `spec` on the fitting rows (read when the method is data-dependent), checking dimensions.
fn fit_map(
    spec: &MethodSpec,
    p: &methods::Params,
    dim: usize,
    seed: u64,
    d: usize,
    fit_rows: Option<(&Path, ArrayView2<'_, f64>)>,
) -> Result<methods::BoxedMap, AppError> {
    if let Some((path, x)) = fit_rows {
        if x.ncols() != d {
            return Err(AppError::usage(format!(
                "dimension mismatch: --input has {d} columns but the map is fitted on {} with {} columns",
                path.display(),
                x.ncols()
            )));
        }
    }
    let mut rng = feature_stream(seed, spec.name);
    let data = match fit_rows {
        Some((_, x)) => FitData::Rows(x),
        None => FitData::Dim(d),
    };
    spec.fit(dim, p, data, &mut rng)
        .map_err(|e| crate_error(&format!("method {}", spec.name), e))
}

/// `rfx features`: writes the features of every input row; returns the output shape.
pub fn features(a: &FeaturesArgs) -> Result<(usize, usize), AppError> {
    let t0 = Instant::now();
    let spec = methods::method(&a.method).map_err(AppError::usage)?;
    let p = spec
        .parse_params(&parse_pairs(&a.params)?)
        .map_err(AppError::usage)?;
    if a.dim == 0 {
        return Err(AppError::usage("--dim must be at least 1"));
    }
    let mut inputs = vec![("--input", a.input.as_path())];
    if let Some(f) = &a.fit_on {
        inputs.push(("--fit-on", f.as_path()));
    }
    refuse_overwrite("--output", &a.output, &inputs)?;
    let mut input = RowBlocks::open(&a.input, a.header, "--input", a.memory_cap)?;
    let d = input.ncols();
    let fit_path = a.fit_on.clone().unwrap_or_else(|| a.input.clone());
    let fit_x = if spec.data_dependent || a.fit_on.is_some() {
        Some(read_matrix(&fit_path, a.header, "--fit-on", a.memory_cap)?.0)
    } else {
        None
    };
    // the map, one block of input rows and of features (all its chunks), and each worker's temporaries
    // (float32 output: also the block's float32 copy, counted as float64s)
    let dtype = a.dtype.resolve(&a.input);
    let block_rows = round_block(a.block_rows, FEATURE_CHUNK) as u128;
    let out = (spec.out_dim)(a.dim, fit_x.as_ref().map_or(usize::MAX, |x| x.nrows()), &p) as u128;
    let w = out.max(a.dim as u128);
    let held = spec
        .memory_f64s(a.dim, d, fit_x.as_ref().map_or(0, |x| x.nrows()), &p)
        .saturating_add(fit_x.as_ref().map_or(0, |x| x.len() as u128))
        .saturating_add(
            block_rows.saturating_mul(
                (d as u128)
                    .saturating_mul(if dtype == Dtype::F32 { 2 } else { 1 })
                    .saturating_add(out.saturating_mul(2)),
            ),
        )
        .saturating_add(
            workers()
                .saturating_mul(FEATURE_CHUNK as u128)
                .saturating_mul(w.saturating_mul(2)),
        );
    check_cap(
        &format!(
            "rfx features (method {}, --dim {}, {d} columns)",
            spec.name, a.dim
        ),
        held,
        a.memory_cap,
    )?;
    // one BLAS thread from the fit on (as `rfx fit` does): a data-dependent fit (leverage scores, Nyström)
    // calls BLAS too, and its rounding must not depend on the machine's core count either
    single_threaded_blas();
    let map = fit_map(
        spec,
        &p,
        a.dim,
        a.seed,
        d,
        fit_x.as_ref().map(|x| (fit_path.as_path(), x.view())),
    )?;
    drop(fit_x);
    // float32 output: the rows in float32 (exact for a float32 input) and the map's float32 path (an f32
    // GEMM where the map has one, `FeatureMap::native_f32`; the float64 features rounded otherwise)
    let mut out = MatrixWriter::create(&a.output, map.dim(), dtype)?;
    let mut first_row = 1;
    while let Some(block) = input.next_block(round_block(a.block_rows, FEATURE_CHUNK))? {
        let context = |e| {
            crate_error(
                &format!(
                    "method {} on rows {}..{} of {}",
                    spec.name,
                    first_row,
                    first_row + block.nrows() - 1,
                    a.input.display()
                ),
                e,
            )
        };
        match dtype {
            Dtype::F64 => {
                let z = transform_rows(map.as_ref(), block.view()).map_err(context)?;
                out.write_block(z.view())?;
            }
            Dtype::F32 => {
                if let Some(((r, c), v)) = block
                    .indexed_iter()
                    .find(|(_, v)| !(**v as f32).is_finite())
                {
                    return Err(AppError::usage(format!(
                        "{}: row {}, column {}: {v} is beyond float32's range (±3.4e38); run with --dtype f64",
                        a.input.display(),
                        first_row + r,
                        c + 1
                    )));
                }
                let x32 = block.mapv(|v| v as f32);
                let z = transform_rows_f32(map.as_ref(), x32.view()).map_err(context)?;
                out.write_block(z.view())?;
            }
        }
        first_row += block.nrows();
    }
    let shape = out.finish()?;
    println!(
        "features: method {} ({}), {} x {d} -> {} x {} in {:.2} s -> {}",
        spec.name,
        p.describe(),
        shape.0,
        shape.0,
        shape.1,
        t0.elapsed().as_secs_f64(),
        a.output.display()
    );
    Ok(shape)
}

/// Options of `rfx gram`.
#[derive(Debug, Clone)]
pub struct GramArgs {
    /// Kernel name.
    pub kernel: String,
    /// `k=v` parameters.
    pub params: Vec<String>,
    /// Rows $X$.
    pub input: PathBuf,
    /// Rows $Y$ (default $X$).
    pub against: Option<PathBuf>,
    /// Output file.
    pub output: PathBuf,
    /// CSV header handling.
    pub header: HeaderMode,
    /// Rows of $X$ per written block.
    pub block_rows: usize,
    /// Memory cap in bytes.
    pub memory_cap: u64,
    /// Type of the output values.
    pub dtype: OutDtype,
}

/// `rfx gram`: writes $K(X, Y)$; returns its shape.
pub fn gram(a: &GramArgs) -> Result<(usize, usize), AppError> {
    let t0 = Instant::now();
    let spec = methods::kernel(&a.kernel).map_err(AppError::usage)?;
    let p = spec
        .parse_params(&parse_pairs(&a.params)?)
        .map_err(AppError::usage)?;
    let k = spec
        .build(&p)
        .map_err(|e| crate_error(&format!("kernel {}", spec.name), e))?;
    let mut inputs = vec![("--input", a.input.as_path())];
    if let Some(y) = &a.against {
        inputs.push(("--against", y.as_path()));
    }
    refuse_overwrite("--output", &a.output, &inputs)?;
    let x = read_matrix(&a.input, a.header, "--input", a.memory_cap)?.0;
    let y_owned = match &a.against {
        Some(path) => {
            let y = read_matrix(path, a.header, "--against", a.memory_cap)?.0;
            if y.ncols() != x.ncols() {
                return Err(AppError::usage(format!(
                    "dimension mismatch: --input {} has {} columns, --against {} has {}",
                    a.input.display(),
                    x.ncols(),
                    path.display(),
                    y.ncols()
                )));
            }
            Some(y)
        }
        None => None,
    };
    let y = y_owned.as_ref().unwrap_or(&x);
    let (nx, ny) = (x.nrows(), y.nrows());
    let block = round_block(a.block_rows, GRAM_CHUNK).min(round_block(nx, GRAM_CHUNK));
    single_threaded_blas();
    // held: X, Y (if separate), one block of K and its chunks before concatenation, and what each worker
    // holds for one entry (the CNTK's P x P tensors)
    let held = (x.len() as u128)
        .saturating_add(y_owned.as_ref().map_or(0, |y| y.len() as u128))
        .saturating_add(2 * (block as u128) * (ny as u128))
        .saturating_add(workers().saturating_mul(spec.pair_f64s(&p)));
    check_cap("rfx gram (inputs and one block of K)", held, a.memory_cap)?;
    let mut out = MatrixWriter::create(&a.output, ny, a.dtype.resolve(&a.input))?;
    for start in (0..nx).step_by(block) {
        let end = (start + block).min(nx);
        // K(X, X): the tiles on and above the diagonal only (half the kernel evaluations, exactly symmetric)
        let kb = match &y_owned {
            Some(_) => gram_rows(k.as_ref(), x.slice(s![start..end, ..]), y.view()),
            None => gram_self_rows(k.as_ref(), x.view(), start..end),
        }
        .map_err(|e| crate_error(&format!("kernel {}", spec.name), e))?;
        out.write_block(kb.view())?;
    }
    let shape = out.finish()?;
    println!(
        "gram: kernel {} ({}), {} x {} in {:.2} s -> {}",
        spec.name,
        p.describe(),
        shape.0,
        shape.1,
        t0.elapsed().as_secs_f64(),
        a.output.display()
    );
    Ok(shape)
}

/// Regression or classification for `rfx fit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Task {
    /// Real target; test mean squared error.
    Regression,
    /// Class labels (any distinct values of the target column: numbers, or words such as `dog` in a CSV,
    /// classes in sorted order); test accuracy.
    Classification,
}

/// Options of `rfx fit`.
#[derive(Debug, Clone)]
pub struct FitArgs {
    /// Method name.
    pub method: String,
    /// `k=v` parameters.
    pub params: Vec<String>,
    /// Budget $m$.
    pub dim: usize,
    /// Seed (feature map and CV folds).
    pub seed: u64,
    /// Training rows (target included).
    pub input: PathBuf,
    /// Test rows (same columns).
    pub test: PathBuf,
    /// Target column: a header name or a 0-based index.
    pub target_column: String,
    /// Task.
    pub task: Task,
    /// Cross-validation folds.
    pub folds: usize,
    /// Where to write test predictions.
    pub predictions: Option<PathBuf>,
    /// CSV header handling.
    pub header: HeaderMode,
    /// Memory cap in bytes.
    pub memory_cap: u64,
}

fn target_index(
    col: &str,
    header: Option<&[String]>,
    ncols: usize,
    path: &Path,
) -> Result<usize, AppError> {
    if let Some(h) = header {
        if let Some(i) = h.iter().position(|n| n == col) {
            return Ok(i);
        }
    }
    match col.parse::<usize>() {
        Ok(i) if i < ncols => Ok(i),
        _ => {
            Err(AppError::usage(format!(
            "--target-column \"{col}\": not a column of {} ({}; or a 0-based index below {ncols})",
            path.display(),
            header.map_or("no header line".to_string(), |h| format!("columns: {}", h.join(", ")))
        )))
        }
    }
}

fn split_target(x: &Array2<f64>, t: usize) -> (Array2<f64>, Vec<f64>) {
    let keep: Vec<usize> = (0..x.ncols()).filter(|&j| j != t).collect();
    (x.select(Axis(1), &keep), x.column(t).to_vec())
}

/// The classes of a classification whose labels are words: their sorted distinct names, and each training
/// and test row's class.
struct WordClasses {
    names: Vec<String>,
    train: Vec<usize>,
    test: Vec<usize>,
}

/// At most the first ten names, shown briefly.
fn listed(names: &[String]) -> String {
    let mut v: Vec<String> = names.iter().take(10).map(|n| shown(n)).collect();
    if names.len() > 10 {
        v.push(format!("… ({} in all)", names.len()));
    }
    v.join(", ")
}

/// The classes of `rfx fit --task classification` when a label of either file is not a number (`dog`,
/// `pos`): the distinct training labels in sorted order; a test label outside them is an error naming its
/// row. `None` when every label is a number (classes are then the distinct values, compared as numbers).
fn word_classes(
    a: &FitArgs,
    train: Option<Vec<String>>,
    ytr: &[f64],
    test: Option<Vec<String>>,
    yte: &[f64],
) -> Result<Option<WordClasses>, AppError> {
    let number = |l: &String| l.parse::<f64>().is_ok_and(f64::is_finite);
    if [&train, &test]
        .iter()
        .all(|l| l.as_ref().is_none_or(|v| v.iter().all(number)))
    {
        return Ok(None);
    }
    // a .npy file's labels are its numbers
    let text = |l: Option<Vec<String>>, y: &[f64]| {
        l.unwrap_or_else(|| y.iter().map(f64::to_string).collect())
    };
    let (train, test) = (text(train, ytr), text(test, yte));
    let names: Vec<String> = train
        .iter()
        .cloned()
        .collect::<std::collections::BTreeSet<String>>()
        .into_iter()
        .collect();
    if names.len() < 2 {
        return Err(AppError::usage(format!(
            "--target-column {}: classification needs at least 2 classes in --input",
            a.target_column
        )));
    }
    if names.len() > (train.len() / 2).max(2) {
        return Err(AppError::usage(format!(
            "--target-column {}: {} distinct labels in {} training rows is not a classification target",
            a.target_column,
            names.len(),
            train.len()
        )));
    }
    let class = |l: &String| names.binary_search(l).ok();
    let train_idx = train
        .iter()
        .map(|l| class(l).expect("a training label"))
        .collect();
    let test_idx = test
        .iter()
        .enumerate()
        .map(|(i, l)| {
            class(l).ok_or_else(|| {
                AppError::usage(format!(
                    "--test {}: data row {}: label {:?} is not among the training labels ({})",
                    a.test.display(),
                    i + 1,
                    shown(l),
                    listed(&names)
                ))
            })
        })
        .collect::<Result<Vec<usize>, _>>()?;
    Ok(Some(WordClasses {
        names,
        train: train_idx,
        test: test_idx,
    }))
}

/// Summary of `rfx fit`.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// λ chosen by cross-validation (per training row: penalty $n\lambda$).
    pub lambda: f64,
    /// Test MSE (regression) or accuracy (classification).
    pub score: f64,
}

/// `rfx fit`: ridge on the features with λ by k-fold CV; prints test MSE or accuracy and timings.
pub fn fit(a: &FitArgs) -> Result<FitReport, AppError> {
    let t0 = Instant::now();
    let spec = methods::method(&a.method).map_err(AppError::usage)?;
    let p = spec
        .parse_params(&parse_pairs(&a.params)?)
        .map_err(AppError::usage)?;
    if a.dim == 0 {
        return Err(AppError::usage("--dim must be at least 1"));
    }
    if let Some(out) = &a.predictions {
        refuse_overwrite(
            "--predictions",
            out,
            &[("--input", a.input.as_path()), ("--test", a.test.as_path())],
        )?;
    }
    // class labels may be words: the target column of a classification is also kept as text
    let read = |path: &Path, what: &str| match a.task {
        Task::Classification => {
            read_matrix_labeled(path, a.header, what, a.memory_cap, &a.target_column)
        }
        Task::Regression => {
            read_matrix(path, a.header, what, a.memory_cap).map(|(x, header)| Labeled {
                x,
                header,
                labels: None,
            })
        }
    };
    let Labeled {
        x: train,
        header,
        labels: train_labels,
    } = read(&a.input, "--input")?;
    let Labeled {
        x: test,
        header: test_header,
        labels: test_labels,
    } = read(&a.test, "--test")?;
    if test.ncols() != train.ncols() {
        return Err(AppError::usage(format!(
            "dimension mismatch: --input {} has {} columns, --test {} has {}",
            a.input.display(),
            train.ncols(),
            a.test.display(),
            test.ncols()
        )));
    }
    if train.ncols() < 2 {
        return Err(AppError::usage(format!(
            "{}: needs at least one input column besides the target",
            a.input.display()
        )));
    }
    let t = target_index(&a.target_column, header.as_deref(), train.ncols(), &a.input)?;
    if let (Some(h), Some(th)) = (&header, &test_header) {
        if h != th {
            return Err(AppError::usage(format!(
                "--test {}: header differs from --input's ({} vs {})",
                a.test.display(),
                th.join(","),
                h.join(",")
            )));
        }
    }
    let (xtr, ytr) = split_target(&train, t);
    let (xte, yte) = split_target(&test, t);
    let words = match a.task {
        Task::Classification => word_classes(a, train_labels, &ytr, test_labels, &yte)?,
        Task::Regression => None,
    };
    let read_s = t0.elapsed().as_secs_f64();
    if a.folds < 2 || a.folds > xtr.nrows() {
        return Err(AppError::usage(format!(
            "--folds {}: must be in 2..={} (the training rows)",
            a.folds,
            xtr.nrows()
        )));
    }

    // the map; the training and test features; the ridge solve (primal or dual, whichever is smaller: a few
    // square matrices of that size) and the fold copies of the training features
    let (n, d, nte) = (xtr.nrows() as u128, xtr.ncols(), xte.nrows() as u128);
    let out = (spec.out_dim)(a.dim, xtr.nrows(), &p) as u128;
    let side = out.min(n);
    let held = spec
        .memory_f64s(a.dim, d, xtr.nrows(), &p)
        .saturating_add(n.saturating_add(nte).saturating_mul(d as u128))
        .saturating_add(n.saturating_mul(4).saturating_add(nte).saturating_mul(out))
        .saturating_add(side.saturating_mul(side).saturating_mul(4));
    check_cap(
        &format!(
            "rfx fit (method {}, --dim {}, {} training rows)",
            spec.name, a.dim, n
        ),
        held,
        a.memory_cap,
    )?;
    single_threaded_blas();
    let t1 = Instant::now();
    let map = fit_map(
        spec,
        &p,
        a.dim,
        a.seed,
        xtr.ncols(),
        Some((&a.input, xtr.view())),
    )?;
    let ztr = map
        .transform(xtr.view())
        .map_err(|e| crate_error(&format!("method {} on --input", spec.name), e))?;
    let zte = map
        .transform(xte.view())
        .map_err(|e| crate_error(&format!("method {} on --test", spec.name), e))?;
    let features_s = t1.elapsed().as_secs_f64();

    let t2 = Instant::now();
    let internal = |e: RfxError| crate_error("ridge", e);
    let (targets, classes, ymean) = match a.task {
        Task::Regression => {
            let m = ytr.iter().sum::<f64>() / ytr.len() as f64;
            let y = Array2::from_shape_fn((ytr.len(), 1), |(i, _)| ytr[i] - m);
            (y, Vec::new(), m)
        }
        Task::Classification if words.is_some() => {
            let w = words.as_ref().expect("checked");
            (
                one_hot(&w.train, w.names.len(), false).map_err(internal)?,
                Vec::new(),
                0.0,
            )
        }
        Task::Classification => {
            let mut classes = ytr.clone();
            classes.sort_by(f64::total_cmp);
            classes.dedup();
            if classes.len() < 2 {
                return Err(AppError::usage(format!(
                    "--target-column {}: classification needs at least 2 classes in --input",
                    a.target_column
                )));
            }
            if classes.len() > (ytr.len() / 2).max(2) {
                return Err(AppError::usage(format!(
                    "--target-column {}: {} distinct values in {} training rows is not a classification target (use --task regression)",
                    a.target_column,
                    classes.len(),
                    ytr.len()
                )));
            }
            let labels: Vec<usize> = ytr
                .iter()
                .map(|v| classes.binary_search_by(|c| c.total_cmp(v)).unwrap_or(0))
                .collect();
            (
                one_hot(&labels, classes.len(), false).map_err(internal)?,
                classes,
                0.0,
            )
        }
    };
    let search = LambdaSearch {
        grid: log10_grid(-8.0, 2.0, 11).map_err(internal)?,
        scale: LambdaScale::TimesN,
        validation: Validation::KFold {
            folds: a.folds,
            seed: stream_seed(a.seed, "rfx fit;cv"),
        },
        score: match a.task {
            Task::Regression => CvScore::Mse,
            Task::Classification => CvScore::ClassificationError,
        },
    };
    let (model, cv) =
        fit_ridge_cv(ztr.view(), targets.view(), &search, RidgeForm::Auto).map_err(internal)?;
    let fit_s = t2.elapsed().as_secs_f64();

    let t3 = Instant::now();
    let pred = model.predict(zte.view()).map_err(internal)?;
    let (values, score, line) = match a.task {
        Task::Regression => {
            let yhat: Vec<f64> = pred.column(0).iter().map(|v| v + ymean).collect();
            let mse = mean_sq(yhat.iter().zip(&yte).map(|(p, y)| p - y));
            let base = mean_sq(yte.iter().map(|y| y - ymean));
            let line = format!("test MSE {mse:.6e} (predicting the training mean: {base:.6e})");
            (yhat, mse, line)
        }
        Task::Classification if words.is_some() => {
            let w = words.as_ref().expect("checked");
            let idx = argmax_rows(pred.view());
            let correct = idx.iter().zip(&w.test).filter(|(p, y)| p == y).count();
            let acc = correct as f64 / w.test.len() as f64;
            let line = format!(
                "test accuracy {acc:.4} ({correct} of {} rows, {} classes: {})",
                w.test.len(),
                w.names.len(),
                listed(&w.names)
            );
            (idx.iter().map(|&i| i as f64).collect(), acc, line)
        }
        Task::Classification => {
            let idx = argmax_rows(pred.view());
            let yhat: Vec<f64> = idx.iter().map(|&i| classes[i]).collect();
            let correct = yhat.iter().zip(&yte).filter(|(p, y)| p == y).count();
            let acc = correct as f64 / yte.len() as f64;
            let line = format!(
                "test accuracy {acc:.4} ({correct} of {} rows, {} classes)",
                yte.len(),
                classes.len()
            );
            (yhat, acc, line)
        }
    };
    let predict_s = t3.elapsed().as_secs_f64();
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(AppError::usage(format!(
            "prediction for test row {} is {}, not a finite number: the inputs or targets are too large for \
             this method in float64{}",
            i + 1,
            values[i],
            if a.predictions.is_some() { "; nothing written" } else { "" }
        )));
    }
    if !score.is_finite() {
        return Err(AppError::usage(format!(
            "the test score is {score}, not a finite number: the targets are too large for float64"
        )));
    }
    if let Some(path) = &a.predictions {
        let mut text = String::from("prediction\n");
        for v in &values {
            match &words {
                // the class's label, quoted where CSV needs it
                Some(w) => text.push_str(
                    rfx_harness::results::csv_line(&[w.names[*v as usize].clone()]).trim_end(),
                ),
                None => text.push_str(&v.to_string()),
            }
            text.push('\n');
        }
        crate::matrix_io::write_text_atomic("--predictions", path, text.as_bytes())?;
    }
    println!(
        "fit: method {} ({}), m = {} features, {} training rows, {} test rows, {} inputs",
        spec.name,
        p.describe(),
        map.dim(),
        xtr.nrows(),
        xte.nrows(),
        xtr.ncols()
    );
    println!(
        "lambda {:.1e} (per training row, {}-fold CV over 1e-8..1e2); {line}",
        cv.best_lambda, a.folds
    );
    println!(
        "times: read {read_s:.3} s, features {features_s:.3} s, CV + fit {fit_s:.3} s, predict {predict_s:.3} s"
    );
    Ok(FitReport {
        lambda: cv.best_lambda,
        score,
    })
}

fn mean_sq(it: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = it.fold((0.0, 0usize), |(s, n), v| (s + v * v, n + 1));
    s / n.max(1) as f64
}

fn print_params(params: &[ParamDoc]) {
    for d in params {
        println!(
            "      --param {:<24} {}; {}",
            format!("{}={}", d.name, d.default),
            d.kind,
            d.about
        );
    }
}

/// `rfx methods`: every feature map and kernel with parameters, defaults, ranges and papers; with `dim`,
/// each map's output dimension at that budget.
pub fn list_methods(dim: Option<usize>) {
    println!("Feature maps: rfx features --method NAME --dim M [--param name=value ...]");
    println!("(output: one row per input row; columns as given by `output`)\n");
    for m in methods::methods() {
        println!("  {:<12} {}", m.name, m.about);
        println!("      paper: {}", m.paper);
        let at = dim.map_or(String::new(), |d| {
            let defaults = m.parse_params(&[]).expect("registry defaults are valid");
            let k = (m.out_dim)(d, usize::MAX, &defaults);
            if m.exact_dim {
                format!("; with --dim {d} and default parameters: {k} columns")
            } else {
                format!("; with --dim {d}: at most {k} columns")
            }
        });
        println!("      output: {}{at}", m.dim_rule);
        if m.data_dependent {
            println!("      fitted on the rows of --fit-on (default: the input)");
        }
        print_params(m.params);
        println!();
    }
    println!("Exact kernels: rfx gram --kernel NAME [--param name=value ...]\n");
    for k in methods::kernels() {
        println!("  {:<12} {}", k.name, k.about);
        println!("      paper: {}", k.paper);
        print_params(k.params);
        println!();
    }
}

/// Why `s` is not a whole number in `0..=max` (a short phrase; never the bound's digits beyond 20).
fn whole_number<T: std::str::FromStr>(s: &str, max: &str) -> Result<T, String> {
    let t = s.trim();
    if let Ok(v) = t.parse::<T>() {
        return Ok(v);
    }
    let digits = |u: &str| !u.is_empty() && u.bytes().all(|b| b.is_ascii_digit());
    let shown: String = if t.chars().count() > 24 {
        format!("{}...", t.chars().take(20).collect::<String>())
    } else {
        t.to_string()
    };
    Err(if t.is_empty() {
        "empty; expected a whole number".to_string()
    } else if t.strip_prefix('-').is_some_and(digits) {
        format!("\"{shown}\" is negative; expected a whole number >= 0")
    } else if digits(t.trim_start_matches('+')) {
        format!("\"{shown}\" is too large; at most {max}")
    } else if t.parse::<f64>().is_ok() {
        format!("\"{shown}\" is not a whole number")
    } else {
        format!("\"{shown}\" is not a number")
    })
}

/// Parses a count (`--dim`, `--block-rows`, `--folds`): a whole number; the range is checked by the command.
pub fn count(s: &str) -> Result<usize, String> {
    whole_number(s, "2^64 - 1")
}

/// Parses `--block-rows`: a whole number from 1 (blocks above 2^24 rows are held as that many:
/// blocks bound memory only, the numbers do not depend on them).
pub fn block_rows(s: &str) -> Result<usize, String> {
    match count(s)? {
        0 => Err("0 rows; allowed: 1 to 2^64 - 1 (a block is held as at most 2^24 rows)".into()),
        n => Ok(n),
    }
}

/// Parses a 64-bit count (`--memory-cap-mb`).
pub fn count_u64(s: &str) -> Result<u64, String> {
    whole_number(s, "2^64 - 1")
}

/// Parses `--seed`: a whole number in `0..=2^64-1`.
pub fn seed(s: &str) -> Result<u64, String> {
    whole_number(s, "2^64 - 1")
}

/// Parses `--dtype auto|f32|f64`.
pub fn out_dtype(s: &str) -> Result<OutDtype, String> {
    match s {
        "auto" => Ok(OutDtype::Auto),
        "f32" | "float32" => Ok(OutDtype::Fixed(Dtype::F32)),
        "f64" | "float64" => Ok(OutDtype::Fixed(Dtype::F64)),
        _ => Err(format!("\"{s}\"; allowed: auto, f32, f64")),
    }
}

/// Parses `--header auto|yes|no`.
pub fn header_mode(s: &str) -> Result<HeaderMode, String> {
    match s {
        "auto" => Ok(HeaderMode::Auto),
        "yes" => Ok(HeaderMode::Present),
        "no" => Ok(HeaderMode::Absent),
        _ => Err(format!("\"{s}\"; allowed: auto, yes, no")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_need_equals() {
        assert_eq!(
            parse_pairs(&["a=1".into(), " b = x ".into()]).unwrap(),
            [("a".to_string(), "1".to_string()), ("b".into(), "x".into())]
        );
        assert!(parse_pairs(&["depth3".into()]).is_err());
        assert!(parse_pairs(&["=3".into()]).is_err());
    }
}
