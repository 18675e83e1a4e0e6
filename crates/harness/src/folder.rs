//! The results folder of one experiment, `<results root>/<experiment name>/`, and the tree of such
//! folders. This module is the one place that knows the folder's file names and how its records are read;
//! the run ([`crate::run`]) writes cells into it, the outputs ([`crate::outputs`]) derive their files from
//! it, and compare, verify and the report read it, without importing each other.
//!
//! | file | written by | holds |
//! |---|---|---|
//! | `cells.csv` | run | one row per finished cell ([`crate::results::Layout`]) |
//! | `.fingerprint` | run | [`Spec::fingerprint`] of the settings the cells were computed with |
//! | `config.toml`, `manifest.json` | run | the experiment file as run; the record of the last computing run |
//! | `summary.csv`, `table.md`, `report.md`, `<stem>.png`/`.svg` | outputs | derived from `cells.csv` |
//!
//! A run holds the folder's lock ([`ResultsFolder::lock`]: `flock` on the folder itself, no lock file) from
//! before it reads the earlier cells until it returns, so two runs never write into one folder.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::error::AppError;
use crate::kind::Kinds;
use crate::plan::Shard;
use crate::results::{parse_cells, Layout, Row};
use crate::spec::Spec;

/// The results tree's report, one section per experiment folder ([`crate::report`]).
pub const REPORT_FILE: &str = "README.md";
/// The table `rfx compare A B` writes into `B`.
pub const COMPARISON_FILE: &str = "comparison.md";
/// The table `rfx verify` writes into the verified tree (unless told otherwise).
pub const VERIFICATION_FILE: &str = "verification.md";

/// One experiment's results folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultsFolder {
    dir: PathBuf,
}

impl ResultsFolder {
    /// The folder at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> ResultsFolder {
        ResultsFolder { dir: dir.into() }
    }

    /// The folder of `spec`'s experiment under the results root `root`.
    pub fn of(root: &Path, spec: &Spec) -> ResultsFolder {
        ResultsFolder::new(root.join(&spec.name))
    }

    /// The folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cells.csv`: the rows of the finished cells.
    pub fn cells(&self) -> PathBuf {
        self.dir.join("cells.csv")
    }

    /// `.fingerprint`: the settings' fingerprint of the cells in `cells.csv`.
    pub fn fingerprint(&self) -> PathBuf {
        self.dir.join(".fingerprint")
    }

    /// `config.toml`: the experiment file as run.
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }

    /// `manifest.json`: the record of the last run that computed cells.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join("manifest.json")
    }

    /// `summary.csv`: mean and standard deviation over seeds.
    pub fn summary(&self) -> PathBuf {
        self.dir.join("summary.csv")
    }

    /// `table.md`: every table of the experiment, in file order.
    pub fn table(&self) -> PathBuf {
        self.dir.join("table.md")
    }

    /// `report.md`: the experiment's section of the report.
    pub fn report(&self) -> PathBuf {
        self.dir.join("report.md")
    }

    /// A figure, `<stem>.<ext>` (`ext` is `png` or `svg`).
    pub fn figure(&self, stem: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{stem}.{ext}"))
    }

    /// Whether the folder holds an experiment's results (a `config.toml` and a `cells.csv`).
    pub fn holds_results(&self) -> bool {
        self.config().is_file() && self.cells().is_file()
    }

    /// The recorded fingerprint (empty when there is none).
    pub fn recorded_fingerprint(&self) -> String {
        crate::io::read_input_text(&self.fingerprint())
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// The cells file of shard `s` (`cells.shard-K-of-N.csv`): written only by `rfx run --shard K/N`, read
    /// by `rfx merge`.
    pub fn shard_cells(&self, s: Shard) -> PathBuf {
        self.dir
            .join(format!("cells.shard-{}-of-{}.csv", s.index, s.count))
    }

    /// The record of shard `s` (`cells.shard-K-of-N.json`): its settings' fingerprint, variant, partition
    /// and the cell keys assigned to it.
    pub fn shard_record(&self, s: Shard) -> PathBuf {
        self.dir
            .join(format!("cells.shard-{}-of-{}.json", s.index, s.count))
    }

    /// The lock file of shard `s` (never renamed, so that its `flock` stays valid; removed by the merge).
    pub fn shard_lock_file(&self, s: Shard) -> PathBuf {
        self.dir
            .join(format!(".cells.shard-{}-of-{}.lock", s.index, s.count))
    }

    /// The shards that left a cells file or a record in the folder, in order of (N, K).
    pub fn shards(&self) -> Vec<Shard> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<Shard> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|name| {
                let rest = name.strip_prefix("cells.shard-")?;
                let rest = rest
                    .strip_suffix(".csv")
                    .or_else(|| rest.strip_suffix(".json"))?;
                let (k, n) = rest.split_once("-of-")?;
                let s = Shard {
                    index: k.parse().ok()?,
                    count: n.parse().ok()?,
                };
                (s.count > 0 && s.index < s.count).then_some(s)
            })
            .collect();
        found.sort_by_key(|s| (s.count, s.index));
        found.dedup();
        found
    }

    /// Takes the lock of shard `s`: a shared lock on the folder (so shards run side by side while a whole
    /// run or a merge, which take it exclusively, are refused) and an exclusive lock on the shard's lock
    /// file (so the same shard does not run twice at once).
    pub fn lock_shard(&self, s: Shard) -> Result<FolderLock, AppError> {
        let dir = self.open_dir()?;
        match try_lock(&dir, false) {
            Ok(true) => {}
            Ok(false) => {
                return Err(AppError::usage(format!(
                    "{}: a whole run or a merge is writing into this results folder; wait for it to end",
                    self.dir.display()
                )))
            }
            Err(e) => {
                return Err(AppError::usage(format!(
                    "{}: cannot lock the results folder: {e}",
                    self.dir.display()
                )))
            }
        }
        let path = self.shard_lock_file(s);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| AppError::usage(format!("{}: {e}", path.display())))?;
        match try_lock(&file, true) {
            Ok(true) => Ok(FolderLock {
                _files: vec![dir, file],
            }),
            Ok(false) => Err(AppError::usage(format!(
                "{}: shard {s} is already running into this folder",
                self.dir.display()
            ))),
            Err(e) => Err(AppError::usage(format!("{}: {e}", path.display()))),
        }
    }

    fn open_dir(&self) -> Result<std::fs::File, AppError> {
        let dir = &self.dir;
        std::fs::create_dir_all(dir).map_err(|e| {
            // "File exists" says little when the name is taken by a link that leads nowhere or a file
            let why = match (std::fs::symlink_metadata(dir), std::fs::metadata(dir)) {
                (Ok(l), Err(t)) if l.file_type().is_symlink() => {
                    if t.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                        "is a symbolic link loop, not a directory".to_string()
                    } else {
                        format!("is a symbolic link to nothing ({t}), not a directory")
                    }
                }
                (Ok(_), Ok(m)) if !m.is_dir() => "exists and is not a directory".to_string(),
                _ => e.to_string(),
            };
            AppError::usage(format!(
                "{}: cannot create the results folder: {why}",
                dir.display()
            ))
        })?;
        std::fs::File::open(dir).map_err(|e| {
            AppError::usage(format!(
                "{}: cannot open the results folder: {e}",
                dir.display()
            ))
        })
    }

    /// The bytes of `cells.csv` (read as bytes: a line that is not UTF-8 is dropped by
    /// [`Layout::read`], not allowed to make the whole file unreadable).
    pub fn read_cells(&self) -> Result<Vec<u8>, AppError> {
        let path = self.cells();
        crate::io::read_input(&path).map_err(|e| AppError::io(&path, e))
    }

    /// The `manifest.json` (written at the end of every run), `None` when it is missing or unreadable.
    pub fn read_manifest(&self) -> Option<serde_json::Value> {
        self.manifest_state().ok().flatten()
    }

    /// The `manifest.json`: `Ok(None)` when there is none, an error naming the file and the damage when it
    /// cannot be read (a directory, not JSON, not a JSON object), so that readers can say so rather than
    /// guess what it held (whether the run was `--quick`).
    pub fn manifest_state(&self) -> Result<Option<serde_json::Value>, String> {
        let path = self.manifest();
        let text = match crate::io::read_input_text(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: unreadable: {e}", path.display())),
            Ok(t) => t,
        };
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) if v.is_object() => Ok(Some(v)),
            Ok(_) => Err(format!("{}: unreadable: not a JSON object", path.display())),
            Err(e) => Err(format!("{}: unreadable: not JSON ({e})", path.display())),
        }
    }

    /// The cells found in `cells.csv` and whether they belong to `spec` (same fingerprint and columns).
    /// Damage is told apart from other settings: an empty `cells.csv` holds no cells, a missing
    /// `.fingerprint` leaves the settings of the cells unknown, a header that cannot be read makes the file
    /// unusable, and damaged lines are dropped (listed in [`EarlierCells::dropped`]).
    pub fn earlier_cells(&self, spec: &Spec, layout: &Layout) -> Result<EarlierCells, AppError> {
        let path = self.cells();
        let state = |state, rows, dropped, problem: String| EarlierCells {
            state,
            rows,
            dropped,
            problem,
        };
        let meta = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(state(Earlier::None, Vec::new(), Vec::new(), String::new()))
            }
            Err(e) => return Err(AppError::usage(format!("{}: {e}", path.display()))),
            Ok(m) => m,
        };
        if !meta.is_file() {
            return Ok(state(
                Earlier::Damaged,
                Vec::new(),
                Vec::new(),
                format!("{} is not a file; remove it", path.display()),
            ));
        }
        let bytes = self.read_cells()?;
        let parsed = parse_cells(&bytes);
        if let Some(why) = parsed.damaged_header {
            return Ok(state(
                Earlier::Damaged,
                Vec::new(),
                Vec::new(),
                format!("{}: the header cannot be read ({why})", path.display()),
            ));
        }
        if parsed.header.is_none() {
            // empty (e.g. a run killed before it wrote the header): no cells
            return Ok(state(
                Earlier::None,
                Vec::new(),
                Vec::new(),
                format!("{} is empty", path.display()),
            ));
        }
        let fingerprint = self.recorded_fingerprint();
        match layout.read(&bytes) {
            Some((rows, dropped)) if fingerprint == spec.fingerprint() => {
                Ok(state(Earlier::Same, rows, dropped, String::new()))
            }
            Some((rows, dropped)) if fingerprint.is_empty() => Ok(state(
                Earlier::NoFingerprint,
                rows,
                dropped,
                format!(
                    "{} is missing or empty, so the settings that computed the cells in {} are unknown",
                    self.fingerprint().display(),
                    path.display()
                ),
            )),
            _ => Ok(state(
                Earlier::Different,
                parsed.rows.into_iter().map(|(r, _)| r).collect(),
                parsed.dropped,
                format!(
                    "{} holds cells computed with other settings or columns (the kind's section, the seed \
                     or the metrics changed)",
                    path.display()
                ),
            )),
        }
    }

    /// Takes the exclusive lock of the folder (creating the folder), held by a run while it writes there:
    /// a second run into the same folder is refused at once (exit code 2) instead of mixing its cells with
    /// the first's. The lock is the operating system's advisory lock on the folder itself (`flock` on Unix;
    /// other platforms take no lock), so it ends with the process: a killed run never leaves a stale lock.
    pub fn lock(&self) -> Result<FolderLock, AppError> {
        let dir = &self.dir;
        let file = self.open_dir()?;
        match try_lock(&file, true) {
            Ok(true) => Ok(FolderLock { _files: vec![file] }),
            Ok(false) => Err(AppError::usage(format!(
                "{}: another rfx run is writing into this results folder (a whole run, a shard or a \
                 merge); wait for it to end, or pass --out DIR to write elsewhere",
                dir.display()
            ))),
            Err(e) => Err(AppError::usage(format!(
                "{}: cannot lock the results folder: {e}",
                dir.display()
            ))),
        }
    }

    /// The experiment of the folder: its `config.toml` (the copy of the experiment file that produced
    /// `cells.csv`), read as full or `--quick` as `manifest.json` records. When the manifest's
    /// `config_file` (the experiment file the run was started from, relative to where it was started) still
    /// exists, the spec is named after it, so that the partial-run note of the report says
    /// `rfx run experiments/<name>.toml` rather than the results folder's copy.
    pub fn spec(&self, kinds: &Kinds) -> Result<Spec, ConfigError> {
        let manifest = self.read_manifest();
        let field = |k: &str| manifest.as_ref().and_then(|v| v.get(k).cloned());
        let quick = field("quick").and_then(|v| v.as_bool()).unwrap_or(false);
        let mut spec = Spec::load(&self.config(), quick, kinds)?;
        if let Some(source) = field("config_file").and_then(|v| v.as_str().map(PathBuf::from)) {
            if source.is_file() {
                spec.file = source;
            }
        }
        Ok(spec)
    }

    /// The spec, layout and rows of the folder and its recorded fingerprint; the rows must have the
    /// columns of the spec under today's code.
    pub fn load(&self, kinds: &Kinds) -> Result<Loaded, AppError> {
        let spec = self.spec(kinds).map_err(AppError::Config)?;
        let layout = Layout::of(&spec);
        let Some((rows, _)) = layout.read(&self.read_cells()?) else {
            return Err(AppError::usage(format!(
                "{}: columns do not match the experiment's metrics under today's code",
                self.cells().display()
            )));
        };
        Ok(Loaded {
            spec,
            layout,
            rows,
            fingerprint: self.recorded_fingerprint(),
        })
    }
}

/// The lock of a results folder ([`ResultsFolder::lock`]), released when dropped or when the process ends.
#[derive(Debug)]
pub struct FolderLock {
    _files: Vec<std::fs::File>,
}

/// Takes `flock(LOCK_EX | LOCK_NB)` (or `LOCK_SH` when not `exclusive`) on the open folder or file:
/// `Ok(false)` when another process holds a conflicting lock.
#[cfg(unix)]
fn try_lock(file: &std::fs::File, exclusive: bool) -> std::io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match flock(file, op) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Elsewhere there is no lock: concurrent runs into one folder are not detected.
#[cfg(not(unix))]
fn try_lock(_file: &std::fs::File, _exclusive: bool) -> std::io::Result<bool> {
    Ok(true)
}

/// A results folder read whole ([`ResultsFolder::load`]).
pub struct Loaded {
    /// The experiment of its `config.toml`.
    pub spec: Spec,
    /// The columns of its cells.
    pub layout: Layout,
    /// Its complete rows.
    pub rows: Vec<Row>,
    /// Its recorded fingerprint (empty when there is none).
    pub fingerprint: String,
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
    /// Cells without a `.fingerprint`: computed with settings nobody recorded.
    NoFingerprint,
    /// A `cells.csv` that cannot be read (not a file, or a damaged header).
    Damaged,
}

/// The cells found in a folder's `cells.csv` and whether they belong to a spec ([`ResultsFolder::earlier_cells`]).
pub struct EarlierCells {
    /// Relation of the folder's cells to the spec.
    pub state: Earlier,
    /// Complete rows (meaningful when `state` is [`Earlier::Same`]).
    pub rows: Vec<Row>,
    /// Why each dropped line was dropped: cut off by an interrupted run, not UTF-8, not numbers, a
    /// second row of one cell.
    pub dropped: Vec<String>,
    /// What is wrong when the cells cannot be reused (empty otherwise; for [`Earlier::None`], whether
    /// the file exists but is empty).
    pub problem: String,
}

/// The number of cells the manifest's run record computed (0 when absent).
pub fn manifest_cells_computed(manifest: &serde_json::Value) -> u64 {
    manifest
        .get("cells_computed")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// The experiment folders of a results tree (those that [hold results](ResultsFolder::holds_results)),
/// with their names, in order of name.
pub fn experiment_folders(root: &Path) -> Result<Vec<(String, ResultsFolder)>, AppError> {
    let mut dirs: Vec<(String, ResultsFolder)> = std::fs::read_dir(root)
        .map_err(|e| AppError::io(root, e))?
        .filter_map(|e| e.ok().map(|e| ResultsFolder::new(e.path())))
        .filter(ResultsFolder::holds_results)
        .filter_map(|f| Some((f.dir.file_name()?.to_str()?.to_string(), f)))
        .collect();
    dirs.sort_by(|a, b| a.1.dir.cmp(&b.1.dir));
    Ok(dirs)
}
