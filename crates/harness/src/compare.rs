//! `rfx compare A B`: the cells of every experiment present in two results trees, matched by cell key and
//! compared metric by metric under each kind's [`Tolerance`] (wall times are not compared; the note must
//! match exactly, so a cell skipped in one tree and computed in the other differs). The same comparison
//! serves `rfx verify` ([`crate::verify`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::AppError;
use crate::folder::{experiment_folders, Loaded, ResultsFolder, COMPARISON_FILE};
use crate::io::write_atomic;
use crate::kind::{Kinds, Tolerance};
use crate::results::{Layout, Row};
use crate::spec::Spec;

/// The verdict on one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Every compared field has the same text.
    Identical,
    /// Some floating-point metric differs, every one within its tolerance.
    WithinTolerance,
    /// A field differs beyond its tolerance.
    Different,
}

/// One cell that differs beyond tolerance, for the report.
#[derive(Debug, Clone)]
pub struct CellDiff {
    /// Cell key.
    pub key: String,
    /// `metric: a → b` for each field beyond tolerance.
    pub fields: Vec<String>,
}

/// The comparison of the cells of one experiment.
#[derive(Debug, Clone, Default)]
pub struct ExperimentComparison {
    /// Experiment name.
    pub name: String,
    /// Cells of the sweep.
    pub total: usize,
    /// Cells present in both trees (compared).
    pub compared: usize,
    /// Of those: identical.
    pub identical: usize,
    /// Within tolerance.
    pub within: usize,
    /// Different beyond tolerance.
    pub different: usize,
    /// Largest absolute difference of a compared floating-point metric.
    pub max_abs: f64,
    /// Largest relative difference of a compared floating-point metric.
    pub max_rel: f64,
    /// The first cells that differ (in sweep order, at most [`SHOWN_DIFFS`]).
    pub diffs: Vec<CellDiff>,
}

/// How many differing cells a report lists per experiment.
pub const SHOWN_DIFFS: usize = 5;

impl ExperimentComparison {
    /// The verdict of the whole experiment.
    pub fn verdict(&self) -> Verdict {
        if self.different > 0 {
            Verdict::Different
        } else if self.within > 0 {
            Verdict::WithinTolerance
        } else {
            Verdict::Identical
        }
    }

    /// One line: `identical` / `within tolerance (max rel …)` / `DIFFERENT: k cells …`.
    pub fn verdict_text(&self) -> String {
        match self.verdict() {
            Verdict::Identical => "identical".into(),
            Verdict::WithinTolerance => format!(
                "within tolerance (largest difference {:.1e} absolute, {:.1e} relative)",
                self.max_abs, self.max_rel
            ),
            Verdict::Different => format!(
                "DIFFERENT: {} cell(s) beyond tolerance (largest difference {:.3e} absolute, {:.3e} \
                 relative); first: {}",
                self.different,
                self.max_abs,
                self.max_rel,
                self.diffs
                    .first()
                    .map(|d| format!("{} ({})", d.key, d.fields.join(", ")))
                    .unwrap_or_default()
            ),
        }
    }
}

/// Compares the recomputed rows `b` with the recorded rows `a` of `spec` (cells matched by key; cells
/// missing from either side are not compared and not counted as different).
pub fn compare_rows(spec: &Spec, layout: &Layout, a: &[Row], b: &[Row]) -> ExperimentComparison {
    let a_by_key: HashMap<String, &Row> = a.iter().map(|r| (r.key(layout), r)).collect();
    let b_by_key: HashMap<String, &Row> = b.iter().map(|r| (r.key(layout), r)).collect();
    let mut out = ExperimentComparison {
        name: spec.name.clone(),
        ..Default::default()
    };
    let cells = spec.cells();
    out.total = cells.len();
    let np = layout.params.len();
    for cell in &cells {
        let key = cell.key();
        let (Some(ra), Some(rb)) = (a_by_key.get(&key), b_by_key.get(&key)) else {
            continue;
        };
        out.compared += 1;
        let tolerances: Vec<Tolerance> = layout
            .metrics
            .iter()
            .map(|m| spec.runner.cell_tolerance(cell, m))
            .collect();
        let mut verdict = Verdict::Identical;
        let mut fields = Vec::new();
        for (j, (name, tol)) in layout.metrics.iter().zip(&tolerances).enumerate() {
            let (x, y) = (&ra.0[np + j], &rb.0[np + j]);
            if x == y || *tol == Tolerance::WallTime {
                continue;
            }
            let (v, abs, rel) = match tol {
                Tolerance::Items { boundary, items } => {
                    let count = |r: &Row| {
                        layout
                            .metrics
                            .iter()
                            .position(|m| m == boundary)
                            .and_then(|i| r.0[np + i].parse::<f64>().ok())
                            .filter(|k| k.is_finite() && *k >= 0.0)
                            .unwrap_or(0.0)
                    };
                    let near = count(ra).max(count(rb));
                    judge_items(near, *items, x, y)
                }
                _ => judge(tol, x, y),
            };
            out.max_abs = out.max_abs.max(abs);
            out.max_rel = out.max_rel.max(rel);
            if v == Verdict::Different {
                fields.push(format!("{name}: {x} → {y}"));
            }
            verdict = verdict.max(v);
        }
        // Per-item outcomes must agree item by item (a row from before the kind recorded them has none:
        // not compared).
        for (j, name) in layout.items.iter().enumerate() {
            let (x, y) = (ra.items(layout, j), rb.items(layout, j));
            if x != y && !x.is_empty() && !y.is_empty() {
                let differ = x.iter().zip(&y).filter(|(p, q)| p != q).count();
                fields.push(if x.len() == y.len() {
                    format!("{name}: {differ} of {} items differ", x.len())
                } else {
                    format!("{name}: {} items → {}", x.len(), y.len())
                });
                verdict = Verdict::Different;
            }
        }
        let (na, nb) = (ra.note(layout), rb.note(layout));
        if na != nb {
            fields.push(format!("note: {na:?} → {nb:?}"));
            verdict = Verdict::Different;
        }
        match verdict {
            Verdict::Identical => out.identical += 1,
            Verdict::WithinTolerance => out.within += 1,
            Verdict::Different => {
                out.different += 1;
                if out.diffs.len() < SHOWN_DIFFS {
                    out.diffs.push(CellDiff { key, fields });
                }
            }
        }
    }
    out
}

/// The experiment folders of a results tree, by name ([`experiment_folders`]); a usage error when `root`
/// is not a folder.
pub fn experiment_dirs(root: &Path) -> Result<Vec<(String, ResultsFolder)>, AppError> {
    if !root.is_dir() {
        return Err(AppError::usage(format!(
            "{}: no such results tree (a folder with one subfolder per experiment)",
            root.display()
        )));
    }
    experiment_folders(root)
}

/// Compares every experiment present in both trees; writes `b/comparison.md` and returns the
/// comparisons (with the names present in only one tree).
pub fn compare_trees(a: &Path, b: &Path, kinds: &Kinds) -> Result<TreeComparison, AppError> {
    let da = experiment_dirs(a)?;
    let db = experiment_dirs(b)?;
    let in_a: HashMap<&str, &ResultsFolder> = da.iter().map(|(n, p)| (n.as_str(), p)).collect();
    let mut result = TreeComparison {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        ..Default::default()
    };
    for (name, pb) in &db {
        let Some(pa) = in_a.get(name.as_str()) else {
            result.only_b.push(name.clone());
            continue;
        };
        let Loaded {
            spec,
            layout,
            rows: rows_b,
            fingerprint: fp_b,
        } = pb.load(kinds)?;
        let Loaded {
            spec: spec_a,
            fingerprint: fp_a,
            ..
        } = pa.load(kinds)?;
        if fp_a != fp_b || spec_a.fingerprint() != spec.fingerprint() {
            return Err(AppError::usage(format!(
                "experiment `{name}`: {} and {} were computed with different settings (fingerprints {} and \
                 {}; e.g. one is a --quick run, or the kind's section or the seed changed); compare trees of \
                 the same experiment files",
                pa.dir().display(),
                pb.dir().display(),
                if fp_a.is_empty() { "none" } else { &fp_a },
                if fp_b.is_empty() { "none" } else { &fp_b },
            )));
        }
        let Some((rows_a, _)) = layout.read(&pa.read_cells()?) else {
            return Err(AppError::usage(format!(
                "experiment `{name}`: {} and {} have different columns",
                pa.dir().display(),
                pb.dir().display()
            )));
        };
        result
            .experiments
            .push(compare_rows(&spec, &layout, &rows_a, &rows_b));
    }
    let in_b: std::collections::HashSet<&str> = db.iter().map(|(n, _)| n.as_str()).collect();
    result.only_a = da
        .iter()
        .filter(|(n, _)| !in_b.contains(n.as_str()))
        .map(|(n, _)| n.clone())
        .collect();
    Ok(result)
}

/// The comparison of two results trees.
#[derive(Debug, Clone, Default)]
pub struct TreeComparison {
    /// The reference tree.
    pub a: PathBuf,
    /// The compared tree.
    pub b: PathBuf,
    /// One comparison per experiment present in both.
    pub experiments: Vec<ExperimentComparison>,
    /// Experiments only in `a`.
    pub only_a: Vec<String>,
    /// Experiments only in `b`.
    pub only_b: Vec<String>,
}

impl TreeComparison {
    /// Cells different beyond tolerance, over all experiments.
    pub fn different(&self) -> usize {
        self.experiments.iter().map(|e| e.different).sum()
    }

    /// The Markdown report (`comparison.md`).
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Comparison of `{}` with `{}`\n\nWritten by `rfx compare`. Cells are matched by key; every \
             metric is compared under its kind's tolerance (exact for counts, relative {:.0e} for floating \
             point unless the kind declares otherwise; wall times are not compared), the note exactly. \
             Cells present in only one tree are not compared.\n\n",
            self.b.display(),
            self.a.display(),
            crate::kind::DEFAULT_RELATIVE_TOLERANCE
        );
        s.push_str(&comparison_table(&self.experiments));
        if !self.only_a.is_empty() {
            let _ = writeln!(
                s,
                "\nOnly in `{}`: {}.",
                self.a.display(),
                self.only_a.join(", ")
            );
        }
        if !self.only_b.is_empty() {
            let _ = writeln!(
                s,
                "\nOnly in `{}`: {}.",
                self.b.display(),
                self.only_b.join(", ")
            );
        }
        s.push_str(&diff_details(&self.experiments));
        s
    }
}

/// The table of per-experiment counts shared by `comparison.md` and `verification.md`.
pub fn comparison_table(experiments: &[ExperimentComparison]) -> String {
    let mut s = String::from(
        "| experiment | cells compared | of | identical | within tolerance | different | verdict |\n\
         |---|---:|---:|---:|---:|---:|---|\n",
    );
    for e in experiments {
        let verdict = match e.verdict() {
            Verdict::Identical if e.compared == 0 => "nothing compared".to_string(),
            Verdict::Identical => "identical".to_string(),
            Verdict::WithinTolerance => format!("within tolerance (max rel {:.1e})", e.max_rel),
            Verdict::Different => "**different**".to_string(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {verdict} |",
            e.name, e.compared, e.total, e.identical, e.within, e.different
        );
    }
    s
}

/// The first differing cells of each experiment, as Markdown.
pub fn diff_details(experiments: &[ExperimentComparison]) -> String {
    let mut s = String::new();
    for e in experiments.iter().filter(|e| e.different > 0) {
        let _ = writeln!(
            s,
            "\n## {}: {} cell(s) differ\n\nLargest difference {:.3e} absolute, {:.3e} relative. First cells:\n",
            e.name, e.different, e.max_abs, e.max_rel
        );
        for d in &e.diffs {
            let _ = writeln!(s, "- `{}`: {}", d.key, d.fields.join("; "));
        }
    }
    s
}

/// `rfx compare A B`: prints one line per experiment, writes `B/comparison.md`; an error (exit 1) when a
/// cell differs beyond tolerance, or, with `identical`, when any compared cell is not identical.
pub fn run_compare(a: &Path, b: &Path, identical: bool, kinds: &Kinds) -> Result<(), AppError> {
    let c = compare_trees(a, b, kinds)?;
    if c.experiments.is_empty() {
        return Err(AppError::usage(format!(
            "{} and {} have no experiment in common",
            a.display(),
            b.display()
        )));
    }
    for e in &c.experiments {
        println!(
            "{}: {} of {} cells compared: {}",
            e.name,
            e.compared,
            e.total,
            e.verdict_text()
        );
    }
    let path = b.join(COMPARISON_FILE);
    write_atomic(&path, c.markdown().as_bytes()).map_err(|e| AppError::io(&path, e))?;
    println!("comparison: {}", path.display());
    let different = c.different();
    if different > 0 {
        let names: Vec<&str> = c
            .experiments
            .iter()
            .filter(|e| e.different > 0)
            .map(|e| e.name.as_str())
            .collect();
        return Err(AppError::Failed(format!(
            "{different} cell(s) differ beyond tolerance in {} (see {})",
            names.join(", "),
            path.display()
        )));
    }
    if identical {
        let names: Vec<&str> = c
            .experiments
            .iter()
            .filter(|e| e.within > 0)
            .map(|e| e.name.as_str())
            .collect();
        if !names.is_empty() {
            return Err(AppError::Failed(format!(
                "--identical: cells differ within tolerance in {} (see {})",
                names.join(", "),
                path.display()
            )));
        }
    }
    Ok(())
}

/// The verdict of a fraction of `items` items ([`Tolerance::Items`]) whose recorded text `x` and
/// recomputed text `y` differ, when `near` items lie near the decision boundary: within tolerance when
/// they differ by at most `near` items ($|x - y|\cdot\text{items} \le \text{near}$, up to the rounding of the
/// fraction's own division), with the absolute and relative differences as [`judge`] gives them.
fn judge_items(near: f64, items: usize, x: &str, y: &str) -> (Verdict, f64, f64) {
    let (v, abs, rel) = judge(&Tolerance::Absolute(0.0), x, y);
    if v == Verdict::WithinTolerance || abs == 0.0 && rel == 0.0 {
        return (v, abs, rel);
    }
    let moved = abs * items as f64;
    let ok = moved <= near + 1e-6 * (1.0 + moved);
    (
        if ok {
            Verdict::WithinTolerance
        } else {
            Verdict::Different
        },
        abs,
        rel,
    )
}

/// One metric's verdict for recorded text `x` and recomputed text `y` that differ, with their absolute and
/// relative differences (0 when they are not both finite numbers): within a [`Tolerance::Relative`]
/// relative or a [`Tolerance::Absolute`] absolute difference, else different.
fn judge(tol: &Tolerance, x: &str, y: &str) -> (Verdict, f64, f64) {
    let (Ok(p), Ok(q)) = (x.parse::<f64>(), y.parse::<f64>()) else {
        return (Verdict::Different, 0.0, 0.0);
    };
    if !(p.is_finite() && q.is_finite()) {
        return (Verdict::Different, 0.0, 0.0);
    }
    let abs = (p - q).abs();
    let rel = abs / p.abs().max(q.abs());
    let ok = match tol {
        Tolerance::Relative(r) => rel <= *r,
        Tolerance::Absolute(t) => abs <= *t,
        Tolerance::Exact | Tolerance::WallTime | Tolerance::Items { .. } => false,
    };
    let v = if ok {
        Verdict::WithinTolerance
    } else {
        Verdict::Different
    };
    (v, abs, rel)
}

#[cfg(test)]
mod judge_tests {
    use super::*;

    #[test]
    fn fractions_of_items_move_by_the_items_near_the_boundary() {
        // the Nyström logistic cell of issue 55: one of 5,000 test images flipped (0.0514 -> 0.0516)
        let (x, y) = ("0.0514", "0.05159999999999998");
        assert_eq!(judge_items(0.0, 5000, x, y).0, Verdict::Different);
        assert_eq!(judge_items(1.0, 5000, x, y).0, Verdict::WithinTolerance);
        // two images moved need two near the boundary
        assert_eq!(
            judge_items(1.0, 5000, "0.0514", "0.0518").0,
            Verdict::Different
        );
        assert_eq!(
            judge_items(2.0, 5000, "0.0514", "0.0518").0,
            Verdict::WithinTolerance
        );
        // the same number in other text is identical; non-numbers and non-finite values differ
        assert_eq!(
            judge_items(0.0, 5000, "0.05", "0.050").0,
            Verdict::WithinTolerance
        );
        assert_eq!(judge_items(9.0, 5000, "NaN", "NaN").0, Verdict::Different);
        assert_eq!(judge_items(9.0, 5000, "a", "0.1").0, Verdict::Different);
    }

    #[test]
    fn relative_and_absolute_tolerances() {
        // a difference of two errors, 8.1e-4, moved by 2.7e-12: 3.4e-9 relative
        let (x, y) = ("-0.0008100988324284408", "-0.0008100988296949607");
        assert_eq!(
            judge(&Tolerance::Relative(1e-9), x, y).0,
            Verdict::Different
        );
        assert_eq!(
            judge(&Tolerance::Absolute(1e-8), x, y).0,
            Verdict::WithinTolerance
        );
        assert_eq!(
            judge(&Tolerance::Absolute(1e-12), x, y).0,
            Verdict::Different
        );
        let (v, abs, rel) = judge(&Tolerance::Relative(1e-9), "1.0", "1.0000000001");
        assert_eq!(v, Verdict::WithinTolerance);
        assert!((abs - 1e-10).abs() < 1e-15 && rel <= 1e-9);
        // counts must be identical text, and non-numbers or non-finite values always differ
        assert_eq!(judge(&Tolerance::Exact, "3", "3.0").0, Verdict::Different);
        assert_eq!(
            judge(&Tolerance::Absolute(1.0), "NaN", "NaN").0,
            Verdict::Different
        );
        assert_eq!(
            judge(&Tolerance::Relative(1.0), "a", "b").0,
            Verdict::Different
        );
    }
}
