//! Matrices in and out of the command line: CSV (with or without a header line, auto-detected) and `.npy`
//! (float32 or float64, either byte order, C or Fortran order, read by [`crate::npy`]: its header parsed as the
//! Python literal it is), read whole or in blocks of rows; output
//! written in blocks to a temporary file that is renamed into place when complete (atomic).
//!
//! Every value must be finite: a NaN or infinite value is an input error naming the file, the line (CSV) or
//! row (`.npy`) and the column; so must every value written ([`MatrixWriter::write_block`] refuses a NaN or
//! infinite result, and nothing is left behind). Memory taken on a file's word is checked against the
//! command's cap before it is allocated: a `.npy` header's shape must match the file's real size, a CSV read
//! whole is bounded by its size, and a block by its width. An output that names one of the inputs (the same
//! file after resolving links: canonical path or device and inode) is refused by [`refuse_overwrite`] before
//! anything is opened for writing. Errors are [`AppError::Usage`] (exit code 2: an unwritable or directory
//! output is the user's choice too) unless writing fails midway.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ndarray::{s, Array2, ArrayView2};

use rfx_harness::error::AppError;
use rfx_harness::io::Temporary;
use rfx_linalg::{check_memory, f64_bytes};

/// Whether the first CSV line is a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderMode {
    /// A header if no field of the first line is a number, data if every field is; a line that mixes
    /// both is refused (say which it is with `Present` or `Absent`: `--header yes` or `no`).
    #[default]
    Auto,
    /// The first line is a header.
    Present,
    /// The first line is data.
    Absent,
}

/// The floating-point type of a written matrix (`--dtype`): float32 halves the file and the write time at a
/// relative rounding of $2^{-24} \approx 6\cdot10^{-8}$, far below the approximation error of any random
/// feature map (1e-3 and above at practical widths).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// float32 (`.npy` descr `<f4`; CSV with the shortest text that reads back to the same float32).
    F32,
    /// float64 (`.npy` descr `<f8`).
    F64,
}

/// `--dtype`: the output's type, or `Auto` for the type of the input (float32 `.npy` in gives float32 out,
/// as scikit-learn's transformers do; CSV and float64 give float64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutDtype {
    /// The input's type.
    #[default]
    Auto,
    /// Always this type.
    Fixed(Dtype),
}

/// The type of the matrix in `path`: float32 for a `.npy` whose header declares `<f4`, float64 otherwise
/// (CSV, `<f8`, or anything `read_matrix` will refuse with its own message).
pub fn input_dtype(path: &Path) -> Dtype {
    if !matches!(format_of(path, "--input"), Ok(Format::Npy)) {
        return Dtype::F64;
    }
    let mut head = [0u8; 256];
    let n = rfx_harness::io::open_input(path, false, "a file")
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    if text.contains("'descr': '<f4'") {
        Dtype::F32
    } else {
        Dtype::F64
    }
}

impl OutDtype {
    /// The type written for the input `path`.
    pub fn resolve(self, input: &Path) -> Dtype {
        match self {
            OutDtype::Fixed(d) => d,
            OutDtype::Auto => input_dtype(input),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv,
    Npy,
}

fn format_of(path: &Path, what: &str) -> Result<Format, AppError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("csv") => Ok(Format::Csv),
        Some("npy") => Ok(Format::Npy),
        _ => Err(AppError::usage(format!(
            "{what} {}: unknown format; allowed: .csv or .npy",
            path.display()
        ))),
    }
}

enum Source {
    Csv {
        reader: csv::Reader<LineBounded<File>>,
        /// The first data row, read while detecting the header.
        first: Option<Vec<f64>>,
    },
    Npy {
        data: Array2<f64>,
        pos: usize,
    },
}

/// Rows of a CSV or `.npy` file, read in blocks (CSV is streamed; `.npy` is read whole, then handed out in
/// blocks).
pub struct RowBlocks {
    path: PathBuf,
    source: Source,
    ncols: usize,
    header: Option<Vec<String>>,
    rows: usize,
    /// The column read as text labels ([`RowBlocks::open_labeled`]) and the label of each row read.
    labels: Option<(usize, Vec<String>)>,
}

/// The fields of one CSV record as numbers; the label column, if any, is kept as text (its value is the
/// number it spells, or 0 for a word) and pushed to `labels`.
fn parse_record(
    path: &Path,
    line: u64,
    rec: &csv::StringRecord,
    labels: &mut Option<(usize, Vec<String>)>,
) -> Result<Vec<f64>, AppError> {
    rec.iter()
        .enumerate()
        .map(|(j, f)| match labels {
            Some((c, texts)) if *c == j => {
                let t = f.trim();
                if t.is_empty() {
                    return Err(AppError::usage(format!(
                        "{}: line {line}, column {}: empty label",
                        path.display(),
                        j + 1
                    )));
                }
                texts.push(t.to_string());
                Ok(t.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0))
            }
            _ => parse_field(path, line, j, f),
        })
        .collect()
}

impl std::fmt::Debug for RowBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowBlocks")
            .field("path", &self.path)
            .field("ncols", &self.ncols)
            .finish()
    }
}

fn parse_field(path: &Path, line: u64, col: usize, field: &str) -> Result<f64, AppError> {
    let v: f64 = field.trim().parse().map_err(|_| {
        AppError::usage(format!(
            "{}: line {line}, column {}: \"{}\" is not a number",
            path.display(),
            col + 1,
            shown(field)
        ))
    })?;
    if !v.is_finite() {
        return Err(AppError::usage(format!(
            "{}: line {line}, column {}: non-finite value {} (NaN and infinite values are rejected)",
            path.display(),
            col + 1,
            shown(field)
        )));
    }
    Ok(v)
}

/// A field as an error message shows it: at most 40 characters (a 5 MB token is not echoed whole).
pub(crate) fn shown(field: &str) -> String {
    let mut s: String = field.chars().take(40).collect();
    if field.chars().nth(40).is_some() {
        s.push('…');
    }
    s
}

fn read_npy(path: &Path, cap: u64) -> Result<Array2<f64>, AppError> {
    let (rows, cols, values) = crate::npy::read_matrix(path, |what, bytes| {
        check_memory(
            &format!("{} ({what})", path.display()),
            u64::try_from(bytes).unwrap_or(u64::MAX),
            cap,
        )
        .map_err(|e| format!("{e} (raise --memory-cap-mb)"))
    })
    .map_err(|e| {
        if e.starts_with(&path.display().to_string()) {
            AppError::usage(e)
        } else {
            AppError::usage(format!("{}: {e}", path.display()))
        }
    })?;
    let a = Array2::from_shape_vec((rows, cols), values)
        .map_err(|e| AppError::usage(format!("{}: {e}", path.display())))?;
    if a.nrows() == 0 || a.ncols() == 0 {
        return Err(AppError::usage(format!(
            "{}: empty matrix ({} x {})",
            path.display(),
            a.nrows(),
            a.ncols()
        )));
    }
    for (i, row) in a.rows().into_iter().enumerate() {
        if let Some(j) = row.iter().position(|v| !v.is_finite()) {
            return Err(AppError::usage(format!(
                "{}: row {}, column {}: non-finite value {} (NaN and infinite values are rejected)",
                path.display(),
                i + 1,
                j + 1,
                row[j]
            )));
        }
    }
    Ok(a)
}

impl RowBlocks {
    /// Opens `path` (`.csv` or `.npy`); `what` names the option in messages (e.g. `--input`). Reads the
    /// first line of a CSV to detect the header and the number of columns.
    ///
    /// `cap` bounds the memory taken on the file's word (bytes): a `.npy` file is read whole, so its declared
    /// size is checked against it first.
    pub fn open(path: &Path, header: HeaderMode, what: &str, cap: u64) -> Result<Self, AppError> {
        Self::open_labeled(path, header, what, cap, None)
    }

    /// [`RowBlocks::open`], the CSV column `label` (a header name or a 0-based index, as `rfx fit
    /// --target-column` takes it) read as text labels ([`RowBlocks::read_all_labeled`]): class labels may be
    /// words (`dog`, `pos`). A `label` that names no column reads every column as numbers.
    pub fn open_labeled(
        path: &Path,
        header: HeaderMode,
        what: &str,
        cap: u64,
        label: Option<&str>,
    ) -> Result<Self, AppError> {
        let format = format_of(path, what)?;
        if path.is_dir() {
            return Err(AppError::usage(format!(
                "{what} {}: is a directory, expected a .csv or .npy file",
                path.display()
            )));
        }
        // the one place a matrix input is opened: what is not a file (a FIFO would hang `open`) is refused
        let file = rfx_harness::io::open_input(path, false, "a regular .csv or .npy file")
            .map_err(|e| AppError::usage(format!("{what} {}: {e}", path.display())))?;
        if format == Format::Npy {
            drop(file);
            let data = read_npy(path, cap)?;
            return Ok(RowBlocks {
                path: path.to_path_buf(),
                ncols: data.ncols(),
                source: Source::Npy { data, pos: 0 },
                header: None,
                rows: 0,
                labels: None,
            });
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(LineBounded::new(file));
        let mut rec = csv::StringRecord::new();
        let empty = || AppError::usage(format!("{}: empty file (no rows)", path.display()));
        if !reader
            .read_record(&mut rec)
            .map_err(|e| csv_error(path, e))?
        {
            return Err(empty());
        }
        let line = rec.position().map_or(1, |p| p.line());
        let numbers = rec
            .iter()
            .filter(|f| f.trim().parse::<f64>().is_ok())
            .count();
        let is_header = match header {
            HeaderMode::Present => true,
            HeaderMode::Absent => false,
            HeaderMode::Auto if numbers == rec.len() => false,
            HeaderMode::Auto if numbers == 0 => true,
            HeaderMode::Auto => {
                // a header of names has no numbers and a data row no text: a mix is one or the other
                // with a mistake, and guessing would drop a data row or read a name as a value
                let (j, f) = rec
                    .iter()
                    .enumerate()
                    .find(|(_, f)| f.trim().parse::<f64>().is_err())
                    .unwrap_or((0, ""));
                return Err(AppError::usage(format!(
                    "{}: line {line} mixes numbers and text (column {}: {:?}): a header line or a data row \
                     with a bad value? Say which with --header yes or --header no",
                    path.display(),
                    j + 1,
                    f.chars().take(40).collect::<String>()
                )));
            }
        };
        let ncols = rec.len();
        let header: Option<Vec<String>> =
            is_header.then(|| rec.iter().map(|s| s.trim().to_string()).collect());
        let mut labels = label
            .and_then(|l| {
                let by_name = header.as_ref().and_then(|h| h.iter().position(|n| n == l));
                by_name.or_else(|| l.parse::<usize>().ok().filter(|&i| i < ncols))
            })
            .map(|j| (j, Vec::new()));
        let first = if is_header {
            None
        } else {
            Some(parse_record(path, line, &rec, &mut labels)?)
        };
        let mut blocks = RowBlocks {
            path: path.to_path_buf(),
            source: Source::Csv { reader, first },
            ncols,
            header,
            rows: 0,
            labels,
        };
        if blocks.header.is_some() {
            // a header alone is no data: read ahead one row
            match blocks.read_csv_row()? {
                Some(r) => {
                    if let Source::Csv { first, .. } = &mut blocks.source {
                        *first = Some(r);
                    }
                }
                None => {
                    return Err(AppError::usage(format!(
                        "{}: no data rows after the header line",
                        path.display()
                    )))
                }
            }
        }
        Ok(blocks)
    }

    fn read_csv_row(&mut self) -> Result<Option<Vec<f64>>, AppError> {
        let Source::Csv { reader, .. } = &mut self.source else {
            return Ok(None);
        };
        let mut rec = csv::StringRecord::new();
        if !reader
            .read_record(&mut rec)
            .map_err(|e| csv_error(&self.path, e))?
        {
            return Ok(None);
        }
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != self.ncols {
            return Err(AppError::usage(format!(
                "{}: line {line} has {} values, expected {} (ragged CSV)",
                self.path.display(),
                rec.len(),
                self.ncols
            )));
        }
        parse_record(&self.path, line, &rec, &mut self.labels).map(Some)
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// The header line's names, if the CSV has one.
    pub fn header(&self) -> Option<&[String]> {
        self.header.as_deref()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next block of at most `max_rows` rows; `None` at the end.
    pub fn next_block(&mut self, max_rows: usize) -> Result<Option<Array2<f64>>, AppError> {
        let max_rows = max_rows.max(1);
        if let Source::Npy { data, pos } = &mut self.source {
            if *pos >= data.nrows() {
                return Ok(None);
            }
            let end = (*pos + max_rows).min(data.nrows());
            let b = data.slice(s![*pos..end, ..]).to_owned();
            self.rows += end - *pos;
            *pos = end;
            return Ok(Some(b));
        }
        // grown as rows arrive: a wide first line must not reserve a block of its width up front
        let mut vals = Vec::with_capacity(
            max_rows
                .min(1 << 16)
                .saturating_mul(self.ncols)
                .min(1 << 20),
        );
        let mut n = 0;
        if let Source::Csv { first, .. } = &mut self.source {
            if let Some(r) = first.take() {
                vals.extend(r);
                n += 1;
            }
        }
        while n < max_rows {
            match self.read_csv_row()? {
                Some(r) => {
                    vals.extend(r);
                    n += 1;
                }
                None => break,
            }
        }
        if n == 0 {
            return Ok(None);
        }
        self.rows += n;
        Array2::from_shape_vec((n, self.ncols), vals)
            .map(Some)
            .map_err(|e| AppError::internal(format!("{}: {e}", self.path.display())))
    }

    /// Reads every remaining row, and the text labels of the label column when the file was opened with
    /// one ([`RowBlocks::open_labeled`]; `None` for a `.npy` file, whose values are all numbers).
    pub fn read_all_labeled(mut self) -> Result<Labeled, AppError> {
        let x = self.read_rest()?;
        Ok(Labeled {
            x,
            header: self.header,
            labels: self.labels.map(|(_, t)| t),
        })
    }

    /// Reads every remaining row.
    pub fn read_all(mut self) -> Result<(Array2<f64>, Option<Vec<String>>), AppError> {
        let x = self.read_rest()?;
        Ok((x, self.header))
    }

    fn read_rest(&mut self) -> Result<Array2<f64>, AppError> {
        if let Source::Npy { data, pos: 0 } = &mut self.source {
            return Ok(std::mem::take(data));
        }
        let mut blocks = Vec::new();
        while let Some(b) = self.next_block(1 << 14)? {
            blocks.push(b);
        }
        let views: Vec<ArrayView2<'_, f64>> = blocks.iter().map(|b| b.view()).collect();
        ndarray::concatenate(ndarray::Axis(0), &views)
            .map_err(|e| AppError::internal(format!("{}: {e}", self.path.display())))
    }
}

/// A matrix read whole with its header and the text labels of one column ([`read_matrix_labeled`]).
#[derive(Debug)]
pub struct Labeled {
    /// The values (a label column holds the number each label spells, 0 for a word).
    pub x: Array2<f64>,
    /// The CSV header's names, if any.
    pub header: Option<Vec<String>>,
    /// The label column's text, one per row (CSV with a label column only).
    pub labels: Option<Vec<String>>,
}

/// The longest CSV line read, in bytes: 100,000 columns of 24-character numbers fit, a file without line
/// breaks (a binary file named `.csv`) is refused instead of being held as one growing line.
pub const MAX_LINE_BYTES: u64 = 1 << 26;

/// A reader that fails once a line grows past [`MAX_LINE_BYTES`] (the CSV parser would otherwise keep
/// one record growing with the file).
pub struct LineBounded<R> {
    inner: R,
    /// Bytes since the last line break.
    run: u64,
    /// Line breaks seen.
    lines: u64,
}

impl<R> LineBounded<R> {
    fn new(inner: R) -> Self {
        LineBounded {
            inner,
            run: 0,
            lines: 0,
        }
    }
}

impl<R: std::io::Read> std::io::Read for LineBounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.lines += 1;
                self.run = 0;
            } else {
                self.run += 1;
                if self.run > MAX_LINE_BYTES {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than {} MiB without a line break (not a CSV text file?)",
                            self.lines + 1,
                            MAX_LINE_BYTES >> 20
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> AppError {
    AppError::usage(format!("{}: {e}", path.display()))
}

/// Reads a whole matrix (`what` names the option in messages). A CSV of $b$ bytes holds at most $b/2 + 1$
/// values, read in blocks and then joined (two copies): that bound is checked against `cap` (bytes) first.
pub fn read_matrix(
    path: &Path,
    header: HeaderMode,
    what: &str,
    cap: u64,
) -> Result<(Array2<f64>, Option<Vec<String>>), AppError> {
    if format_of(path, what)? == Format::Csv {
        if let Ok(meta) = std::fs::metadata(path) {
            check_memory(
                &format!("{what} {} read whole", path.display()),
                f64_bytes((u128::from(meta.len()) / 2 + 1) * 2),
                cap,
            )
            .map_err(|e| AppError::usage(format!("{e} (raise --memory-cap-mb)")))?;
        }
    }
    RowBlocks::open(path, header, what, cap)?.read_all()
}

/// [`read_matrix`] with the CSV column `label` (a header name or a 0-based index) kept as text labels too
/// ([`RowBlocks::open_labeled`]); the bound checked first adds a label's bookkeeping per row.
pub fn read_matrix_labeled(
    path: &Path,
    header: HeaderMode,
    what: &str,
    cap: u64,
    label: &str,
) -> Result<Labeled, AppError> {
    if format_of(path, what)? == Format::Csv {
        if let Ok(meta) = std::fs::metadata(path) {
            check_memory(
                &format!("{what} {} read whole", path.display()),
                f64_bytes((u128::from(meta.len()) / 2 + 1) * 5),
                cap,
            )
            .map_err(|e| AppError::usage(format!("{e} (raise --memory-cap-mb)")))?;
        }
    }
    RowBlocks::open_labeled(path, header, what, cap, Some(label))?.read_all_labeled()
}

/// The file `path` names, as (canonical path, device and inode on unix) when it exists; for a path that
/// does not exist yet, the canonical folder joined with the file name.
fn identity(path: &Path) -> Option<(PathBuf, Option<(u64, u64)>)> {
    #[cfg(unix)]
    fn dev_ino(m: &std::fs::Metadata) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    fn dev_ino(_: &std::fs::Metadata) -> Option<(u64, u64)> {
        None
    }
    match std::fs::canonicalize(path) {
        Ok(c) => {
            let id = std::fs::metadata(&c).ok().and_then(|m| dev_ino(&m));
            Some((c, id))
        }
        Err(_) => {
            let name = path.file_name()?;
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()?;
            Some((dir.join(name), None))
        }
    }
}

/// Refuses an output (`out_flag` `output`) that is one of the `inputs` (flag, path): the same canonical
/// path (links resolved) or, on unix, the same device and inode (a hard link). Call it before anything is
/// opened for writing.
pub fn refuse_overwrite(
    out_flag: &str,
    output: &Path,
    inputs: &[(&str, &Path)],
) -> Result<(), AppError> {
    let Some((out_path, out_id)) = identity(output) else {
        return Ok(());
    };
    for (flag, input) in inputs {
        let Some((in_path, in_id)) = identity(input) else {
            continue;
        };
        if in_path == out_path || (out_id.is_some() && out_id == in_id) {
            return Err(AppError::usage(format!(
                "{out_flag} {} is the same file as {flag} {}: writing it would destroy the input; choose another output",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Writes `bytes` to a temporary file next to `path` and renames it into place; on any failure the temporary
/// file is removed and the error (an unwritable place, a directory) is the user's (exit 2).
pub fn write_text_atomic(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), AppError> {
    check_output_place(flag, path)?;
    rfx_harness::io::write_atomic(path, bytes)
        .map_err(|e| AppError::usage(format!("{flag} {}: {e}", path.display())))
}

/// An output path must not be a directory and its folder must exist.
fn check_output_place(flag: &str, path: &Path) -> Result<(), AppError> {
    if path.is_dir() {
        return Err(AppError::usage(format!(
            "{flag} {}: is a directory; name a file",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(AppError::usage(format!(
                "{flag} {}: directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// An output matrix written block by block to a temporary file next to the target and renamed into place
/// by [`MatrixWriter::finish`] (dropped unfinished, the temporary file is removed and the target untouched).
/// `.csv`: one line per row, no header, shortest round-trip decimal form; `.npy`: float64, C order.
pub struct MatrixWriter {
    path: PathBuf,
    tmp: Temporary,
    out: Option<BufWriter<File>>,
    format: Format,
    dtype: Dtype,
    ncols: usize,
    rows: usize,
}

impl std::fmt::Debug for MatrixWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixWriter")
            .field("path", &self.path)
            .finish()
    }
}

/// A value [`MatrixWriter::write_block`] takes: `f64` or `f32`, written as either [`Dtype`] (widening is
/// exact, narrowing rounds once).
pub trait Element: Copy + std::fmt::Display {
    /// The type the value was computed in, for error messages ("float64", or "float32 (write it with
    /// --dtype f64 to compute in float64)").
    const COMPUTED_IN: &'static str;
    /// The value as `f64`.
    fn to_f64(self) -> f64;
    /// The value as `f32` (rounded to nearest; ±∞ beyond float32's range).
    fn to_f32(self) -> f32;
}

impl Element for f64 {
    const COMPUTED_IN: &'static str = "float64";
    fn to_f64(self) -> f64 {
        self
    }
    fn to_f32(self) -> f32 {
        self as f32
    }
}

impl Element for f32 {
    const COMPUTED_IN: &'static str = "float32 (run with --dtype f64 to compute in float64)";
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn to_f32(self) -> f32 {
        self
    }
}

/// The `.npy` (version 1.0) header for a float32 or float64 C-order matrix, its shape field padded so that
/// every row count up to `u64::MAX` gives the same header length (the header is rewritten once the count is
/// known).
fn npy_header(rows: usize, ncols: usize, dtype: Dtype) -> Vec<u8> {
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    let dict = |r: &str| {
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({r}, {ncols}), }}")
    };
    let width = dict(&u64::MAX.to_string()).len();
    let mut d = dict(&rows.to_string());
    while d.len() < width {
        d.push(' ');
    }
    // magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64
    let unpadded = 10 + d.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    d.extend(std::iter::repeat_n(' ', pad));
    d.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend((d.len() as u16).to_le_bytes());
    h.extend(d.into_bytes());
    h
}

impl MatrixWriter {
    /// Starts writing a matrix with `ncols` columns of type `dtype` to `path` (`.csv` or `.npy`).
    pub fn create(path: &Path, ncols: usize, dtype: Dtype) -> Result<Self, AppError> {
        let format = format_of(path, "--output")?;
        check_output_place("--output", path)?;
        let tmp = Temporary::new(path);
        let file = File::create(tmp.path())
            .map_err(|e| AppError::usage(format!("--output {}: {e}", path.display())))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        if format == Format::Npy {
            out.write_all(&npy_header(0, ncols, dtype))
                .map_err(|e| AppError::io(tmp.path(), e))?;
        }
        Ok(MatrixWriter {
            path: path.to_path_buf(),
            tmp,
            out: Some(out),
            format,
            dtype,
            ncols,
            rows: 0,
        })
    }

    /// Appends rows computed in float64 or float32 (`T`); a NaN or infinite value is refused (exit 2: the
    /// result of these inputs is not representable in the type it was computed in), as is, for float32
    /// output, a finite value beyond float32's range; the unfinished file is removed when the writer is
    /// dropped.
    pub fn write_block<T: Element>(&mut self, a: ArrayView2<'_, T>) -> Result<(), AppError> {
        // the cheap pass first; the indexed search only to name a bad value's place
        let f32_out = self.dtype == Dtype::F32;
        if a.iter().any(|v| {
            !(if f32_out {
                v.to_f32().is_finite()
            } else {
                v.to_f64().is_finite()
            })
        }) {
            if let Some((idx, v)) = a.indexed_iter().find(|(_, v)| !v.to_f64().is_finite()) {
                return Err(AppError::usage(format!(
                    "{}: row {}, column {} of the result is {v}, not a finite number: the inputs are too \
                     large (or too small) for this method in {}; nothing written",
                    self.path.display(),
                    self.rows + idx.0 + 1,
                    idx.1 + 1,
                    T::COMPUTED_IN,
                )));
            }
            if let Some((idx, v)) = a.indexed_iter().find(|(_, v)| !v.to_f32().is_finite()) {
                return Err(AppError::usage(format!(
                    "{}: row {}, column {} of the result is {v}, beyond float32's range (±3.4e38); write it \
                     with --dtype f64; nothing written",
                    self.path.display(),
                    self.rows + idx.0 + 1,
                    idx.1 + 1
                )));
            }
        }
        if a.ncols() != self.ncols {
            return Err(AppError::internal(format!(
                "{}: block has {} columns, expected {}",
                self.path.display(),
                a.ncols(),
                self.ncols
            )));
        }
        let tmp = self.tmp.path().to_path_buf();
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| AppError::internal("writer already finished"))?;
        let err = |e| AppError::io(&tmp, e);
        match (self.format, self.dtype) {
            (Format::Npy, dtype) => {
                // one row's bytes at a time (a row, not the block: the block's memory is already counted)
                let mut bytes = Vec::with_capacity(a.ncols() * 8);
                for row in a.rows() {
                    bytes.clear();
                    match dtype {
                        Dtype::F64 => row
                            .iter()
                            .for_each(|v| bytes.extend_from_slice(&v.to_f64().to_le_bytes())),
                        Dtype::F32 => row
                            .iter()
                            .for_each(|v| bytes.extend_from_slice(&v.to_f32().to_le_bytes())),
                    }
                    out.write_all(&bytes).map_err(err)?;
                }
            }
            (Format::Csv, dtype) => {
                let mut line = String::new();
                for row in a.rows() {
                    line.clear();
                    for (j, v) in row.iter().enumerate() {
                        if j > 0 {
                            line.push(',');
                        }
                        match dtype {
                            Dtype::F64 => line.push_str(&v.to_f64().to_string()),
                            Dtype::F32 => line.push_str(&v.to_f32().to_string()),
                        }
                    }
                    line.push('\n');
                    out.write_all(line.as_bytes()).map_err(err)?;
                }
            }
        }
        self.rows += a.nrows();
        Ok(())
    }

    /// Completes the file (the `.npy` header gets the row count), syncs it and renames it into place;
    /// returns the shape written.
    pub fn finish(mut self) -> Result<(usize, usize), AppError> {
        let tmp = self.tmp.path().to_path_buf();
        let err = |e| AppError::io(&tmp, e);
        let out = self
            .out
            .take()
            .ok_or_else(|| AppError::internal("writer already finished"))?;
        // on any failure the temporary file is removed when `self.tmp` drops
        let mut file = out.into_inner().map_err(|e| err(e.into_error()))?;
        if self.format == Format::Npy {
            file.seek(SeekFrom::Start(0)).map_err(err)?;
            file.write_all(&npy_header(self.rows, self.ncols, self.dtype))
                .map_err(err)?;
        }
        file.sync_all().map_err(err)?;
        drop(file);
        let (rows, ncols, path) = (self.rows, self.ncols, self.path.clone());
        self.tmp
            .commit(&path)
            .map_err(|e| AppError::usage(format!("--output {}: {e}", path.display())))?;
        Ok((rows, ncols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    // an independent reader of what the writer wrote
    use ndarray_npy::ReadNpyExt;

    #[test]
    fn a_line_without_end_is_refused_at_the_bound() {
        use std::io::Read;
        // a line of exactly the bound passes, one byte more fails, a line break resets the count
        let ok = std::io::repeat(b'1')
            .take(MAX_LINE_BYTES)
            .chain(&b"\n1"[..]);
        let mut sink = Vec::new();
        assert!(LineBounded::new(ok).read_to_end(&mut sink).is_ok());
        let bad = std::io::repeat(0).take(MAX_LINE_BYTES + 1);
        let e = LineBounded::new(bad).read_to_end(&mut sink).unwrap_err();
        assert!(
            e.to_string().contains("line 1 is longer than 64 MiB"),
            "{e}"
        );
    }

    #[test]
    fn npy_written_in_blocks_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("z.npy");
        let a = array![[1.0, -2.5], [3.0, 1e-300], [0.0, 7.0]];
        let mut w = MatrixWriter::create(&p, 2, Dtype::F64).unwrap();
        w.write_block(a.slice(s![..1, ..])).unwrap();
        w.write_block(a.slice(s![1.., ..])).unwrap();
        assert_eq!(w.finish().unwrap(), (3, 2));
        let b = Array2::<f64>::read_npy(File::open(&p).unwrap()).unwrap();
        assert_eq!(a, b);
        for dtype in [Dtype::F32, Dtype::F64] {
            assert_eq!(npy_header(3, 2, dtype).len() % 64, 0);
            assert_eq!(
                npy_header(3, 2, dtype).len(),
                npy_header(usize::MAX, 2, dtype).len()
            );
        }
        // float32: the values rounded, read back as float32
        let p32 = dir.path().join("z32.npy");
        let mut w = MatrixWriter::create(&p32, 2, Dtype::F32).unwrap();
        w.write_block(a.view()).unwrap();
        w.finish().unwrap();
        let c = Array2::<f32>::read_npy(File::open(&p32).unwrap()).unwrap();
        assert_eq!(c, a.mapv(|v| v as f32));
        assert_eq!(input_dtype(&p32), Dtype::F32);
        assert_eq!(input_dtype(&p), Dtype::F64);
    }

    #[test]
    fn csv_header_detection_and_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        std::fs::write(&p, "a,b\n1,2\n3,4\n5,6\n").unwrap();
        let mut r = RowBlocks::open(&p, HeaderMode::Auto, "--input", u64::MAX).unwrap();
        assert_eq!(r.header().unwrap(), ["a", "b"]);
        assert_eq!(
            r.next_block(2).unwrap().unwrap(),
            array![[1.0, 2.0], [3.0, 4.0]]
        );
        assert_eq!(r.next_block(2).unwrap().unwrap(), array![[5.0, 6.0]]);
        assert!(r.next_block(2).unwrap().is_none());
        std::fs::write(&p, "1,2\n3,4\n").unwrap();
        let (x, h) = read_matrix(&p, HeaderMode::Auto, "--input", u64::MAX).unwrap();
        assert!(h.is_none());
        assert_eq!(x, array![[1.0, 2.0], [3.0, 4.0]]);
        let e = read_matrix(&p, HeaderMode::Present, "--input", u64::MAX).unwrap();
        assert_eq!(e.0, array![[3.0, 4.0]]);
    }

    #[test]
    fn unfinished_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("z.csv");
        {
            let mut w = MatrixWriter::create(&p, 1, Dtype::F64).unwrap();
            w.write_block(array![[1.0]].view()).unwrap();
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
