//! `rfx merge`: the shards of a sweep (`rfx run --shard K/N`, [`crate::run::run_shard`]) merged into
//! exactly the results folder a single run writes.
//!
//! The merge checks before it writes anything: every shard `0..N` left its cells file and record, all with
//! the same settings (fingerprint, full or `[quick]` variant, and the fingerprint of the folder's
//! `config.toml` under today's code), the same partition and one `N`; no cell appears twice with different
//! values (parameters, metrics and note compared as written; times, commit and load may differ); no cell
//! of the sweep is missing. Any failure is an error (exit code 2) naming the shard and the first missing or
//! conflicting cells, and nothing is written. Then `cells.csv` (in sweep order, with the cells an earlier
//! whole run of the same settings left there), the manifest and every output are written as a single run
//! writes them, and only after that are the shard files removed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::AppError;
use crate::folder::{Earlier, ResultsFolder};
use crate::io::write_atomic;
use crate::kind::Kinds;
use crate::outputs;
use crate::plan::Shard;
use crate::results::{cells_file_text, sort_in_sweep_order, Layout, Row};
use crate::run::{read_shard_record, RunInfo, RunOptions, RunReport, ShardRecord};
use crate::spec::Spec;

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeReport {
    /// The experiment's name.
    pub name: String,
    /// The folder.
    pub dir: PathBuf,
    /// N.
    pub shards: usize,
    /// Cells written to `cells.csv`.
    pub cells: usize,
    /// Of which taken from an earlier `cells.csv` of the same settings.
    pub from_earlier: usize,
}

/// Merges the shards found in the experiment folder `dir`.
pub fn merge(dir: &Path, kinds: &Kinds) -> Result<MergeReport, AppError> {
    let folder = ResultsFolder::new(dir);
    if !dir.is_dir() {
        return Err(AppError::usage(format!(
            "{}: not a folder (expected an experiment's results folder, e.g. results/<name>)",
            dir.display()
        )));
    }
    // Exclusive: refused while a shard (shared lock) or a whole run is writing here.
    let _lock = folder.lock()?;
    let shards = folder.shards();
    let counts: Vec<usize> = {
        let mut c: Vec<usize> = shards.iter().map(|s| s.count).collect();
        c.dedup();
        c
    };
    let n = match counts.as_slice() {
        [] => {
            return Err(AppError::usage(format!(
                "{}: no shard files (cells.shard-K-of-N.csv) to merge",
                dir.display()
            )))
        }
        [n] => *n,
        _ => {
            return Err(AppError::usage(format!(
                "{}: shards of {} different splits (N = {}); remove the files of the split you abandoned",
                dir.display(),
                counts.len(),
                counts
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let all: Vec<Shard> = (0..n).map(|index| Shard { index, count: n }).collect();
    let missing: Vec<String> = all
        .iter()
        .filter(|&&s| !folder.shard_cells(s).is_file() || read_shard_record(&folder, s).is_none())
        .map(|s| s.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(AppError::usage(format!(
            "{}: shard{} {} missing (no cells.shard-K-of-{n}.csv or no readable .json record): run \
             `rfx run --shard K/{n}` for {} first; nothing was written",
            dir.display(),
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            if missing.len() > 1 { "them" } else { "it" }
        )));
    }
    let records: Vec<ShardRecord> = all
        .iter()
        .filter_map(|&s| read_shard_record(&folder, s))
        .collect();
    let first = &records[0];
    for (s, r) in all.iter().zip(&records).skip(1) {
        let what = if r.fingerprint != first.fingerprint {
            Some("other settings (fingerprint)")
        } else if r.quick != first.quick {
            Some("the other variant (full vs --quick)")
        } else if r.partition != first.partition {
            Some("another partition of the cells (other costs)")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(AppError::usage(format!(
                "{}: shard {s} was run with {what} than shard {}; rerun it with --fresh; nothing was written",
                dir.display(),
                all[0]
            )));
        }
    }
    let mut spec = Spec::load(&folder.config(), first.quick, kinds).map_err(AppError::Config)?;
    if spec.fingerprint() != first.fingerprint {
        return Err(AppError::usage(format!(
            "{}: the shards' settings differ from those of {} under this rfx (the code or the file changed \
             since they ran); rerun the shards; nothing was written",
            dir.display(),
            folder.config().display()
        )));
    }
    spec.file = PathBuf::from(&first.config_file);
    let layout = Layout::of(&spec);
    // Parameters, metrics, items and note: what must agree between two copies of a cell.
    let value_width = layout.time_index();

    let earlier = folder.earlier_cells(&spec, &layout)?;
    let base: Vec<Row> = if earlier.state == Earlier::Same {
        earlier.rows
    } else {
        Vec::new()
    };
    let from_earlier = base.len();
    let mut by_key: HashMap<String, (Row, String)> = base
        .into_iter()
        .map(|r| (r.key(&layout), (r, "cells.csv".to_string())))
        .collect();
    for (s, rec) in all.iter().zip(&records) {
        let path = folder.shard_cells(*s);
        let bytes = crate::io::read_input(&path).map_err(|e| AppError::io(&path, e))?;
        let Some((rows, _)) = layout.read(&bytes) else {
            return Err(AppError::usage(format!(
                "{}: its columns do not match the experiment's; rerun shard {s} with --fresh; nothing was \
                 written",
                path.display()
            )));
        };
        for r in rows {
            let key = r.key(&layout);
            match by_key.get(&key) {
                Some((other, from)) if other.0[..value_width] != r.0[..value_width] => {
                    return Err(AppError::usage(format!(
                        "{}: cell {key} of shard {s} differs from its copy in {from}; nothing was written",
                        dir.display()
                    )));
                }
                Some(_) => {}
                None => {
                    by_key.insert(key, (r, format!("shard {s}")));
                }
            }
        }
        let owed: Vec<&String> = rec
            .cells
            .iter()
            .filter(|k| !by_key.contains_key(*k))
            .collect();
        if !owed.is_empty() {
            return Err(AppError::usage(format!(
                "{}: shard {s} is missing {} of its {} cells (first: {}); rerun `rfx run --shard {s}` to \
                 finish it; nothing was written",
                dir.display(),
                owed.len(),
                rec.cells.len(),
                owed.iter()
                    .take(3)
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let cells = spec.cells();
    let absent: Vec<String> = cells
        .iter()
        .map(|c| c.key())
        .filter(|k| !by_key.contains_key(k))
        .collect();
    if !absent.is_empty() {
        return Err(AppError::usage(format!(
            "{}: {} cells of the sweep are in no shard (first: {}); nothing was written",
            dir.display(),
            absent.len(),
            absent
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }

    // Everything checked: write as a single run does.
    let order: HashMap<String, usize> = cells.iter().map(|c| (c.key(), c.index)).collect();
    let mut rows: Vec<Row> = by_key.into_values().map(|(r, _)| r).collect();
    rows.sort_by_key(|r| r.key(&layout)); // a fixed order first: the map's is arbitrary
    sort_in_sweep_order(&mut rows, &layout, &order);
    let text = cells_file_text(&layout, &rows);
    let fp = folder.fingerprint();
    write_atomic(&fp, spec.fingerprint().as_bytes()).map_err(|e| AppError::io(&fp, e))?;
    let cells_path = folder.cells();
    write_atomic(&cells_path, text.as_bytes()).map_err(|e| AppError::io(&cells_path, e))?;
    let skipped = rows
        .iter()
        .filter(|r| order.contains_key(&r.key(&layout)) && !r.note(&layout).is_empty())
        .count();
    let report = RunReport {
        total: cells.len(),
        computed: records.iter().map(|r| r.computed).sum(),
        reused: from_earlier,
        skipped,
        remaining: 0,
        wall_s: records.iter().map(|r| r.wall_time_s).fold(0.0, f64::max),
        dir: dir.to_path_buf(),
    };
    let mut info = RunInfo::now();
    if let Some(t) = records.iter().map(|r| r.started_utc.clone()).min() {
        info.started_utc = t;
    }
    crate::run::write_config_and_manifest(
        &spec,
        &folder,
        &report,
        &info,
        &RunOptions::new(dir.to_path_buf()),
    )?;
    if let Some(mut m) = folder.read_manifest() {
        m["merged_from_shards"] = n.into();
        m["shard_wall_times_s"] = records.iter().map(|r| r.wall_time_s).collect();
        m["shard_commits"] = records.iter().map(|r| r.provenance.clone()).collect();
        let path = folder.manifest();
        let text =
            serde_json::to_string_pretty(&m).map_err(|e| AppError::internal(e.to_string()))?;
        write_atomic(&path, text.as_bytes()).map_err(|e| AppError::io(&path, e))?;
    }
    outputs::write_all(&spec, &folder, &layout, &rows)?;
    for s in &all {
        for p in [
            folder.shard_cells(*s),
            folder.shard_record(*s),
            folder.shard_lock_file(*s),
        ] {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(AppError::io(&p, e)),
            }
        }
    }
    Ok(MergeReport {
        name: spec.name.clone(),
        dir: dir.to_path_buf(),
        shards: n,
        cells: rows.len(),
        from_earlier,
    })
}
