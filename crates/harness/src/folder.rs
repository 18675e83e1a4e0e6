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

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::error::AppError;
use crate::kind::Kinds;
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
        std::fs::read_to_string(self.fingerprint())
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// The text of `cells.csv`.
    pub fn read_cells(&self) -> Result<String, AppError> {
        let path = self.cells();
        std::fs::read_to_string(&path).map_err(|e| AppError::io(&path, e))
    }

    /// The `manifest.json` (written at the end of every run), `None` when it is missing or unreadable.
    pub fn read_manifest(&self) -> Option<serde_json::Value> {
        std::fs::read_to_string(self.manifest())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
    }

    /// The cells found in `cells.csv` and whether they belong to `spec` (same fingerprint and columns).
    pub fn earlier_cells(&self, spec: &Spec, layout: &Layout) -> Result<EarlierCells, AppError> {
        if !self.cells().exists() {
            return Ok(EarlierCells {
                state: Earlier::None,
                rows: Vec::new(),
                dropped: 0,
            });
        }
        let text = self.read_cells()?;
        let old_fp = std::fs::read_to_string(self.fingerprint()).unwrap_or_default();
        Ok(match layout.read(&text) {
            Some((rows, dropped)) if old_fp.trim() == spec.fingerprint() => EarlierCells {
                state: Earlier::Same,
                rows,
                dropped,
            },
            _ => EarlierCells {
                state: Earlier::Different,
                rows: parse_cells(&text).1,
                dropped: 0,
            },
        })
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
}

/// The cells found in a folder's `cells.csv` and whether they belong to a spec ([`ResultsFolder::earlier_cells`]).
pub struct EarlierCells {
    /// Relation of the folder's cells to the spec.
    pub state: Earlier,
    /// Complete rows (meaningful when `state` is [`Earlier::Same`]).
    pub rows: Vec<Row>,
    /// Lines cut off by an interrupted run.
    pub dropped: usize,
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
