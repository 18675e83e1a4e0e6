//! Everything derived from `cells.csv`: `summary.csv`, the plot, `table.md` (every table, in file order), and the experiment's
//! section of the report (`report.md`) with claims, verdicts and the paper's numbers. Written after a run
//! (`run::run`) and by [`replot`]; the files go where [`ResultsFolder`] says.

use std::fmt::Write as _;
use std::path::Path;

use crate::claims::{self, ClaimSpec};
use crate::config::Value;
use crate::error::AppError;
use crate::folder::{manifest_cells_computed, ResultsFolder};
use crate::io::write_atomic;
use crate::kind::Kinds;
use crate::results::{cells_present, summarize, summary_csv, Layout, Row, Summary};
use crate::spec::{
    BestTableSpec, Better, FrontTableSpec, NumFormat, PaperSource, PaperValue, RankTableSpec,
    ScoreTableSpec, Spec, TableSpec,
};
use statrs::distribution::{ContinuousCDF, StudentsT};

mod guidance;
pub use crate::stats::{holm_adjust, holm_reject, sign_test_p};
pub use guidance::guidance_markdown;

/// Writes summary.csv, `<name>.png`/`.svg` (or one pair per value of `plot.figures`), table.md and report.md
/// into `folder`.
pub fn write_all(
    spec: &Spec,
    folder: &ResultsFolder,
    layout: &Layout,
    rows: &[Row],
) -> Result<(), AppError> {
    let summaries = write_summary(spec, folder, layout, rows)?;
    let partial = missing_cells(spec, layout, rows);
    for p in &spec.plots {
        // A partial run says so in the figure's title too, since the PNG is often looked at on its own.
        let mut p = p.clone();
        if let Some((done, total)) = partial {
            p.title = format!("{} [partial: {done} of {total} cells]", p.title);
        }
        let p = &p;
        let metrics = std::iter::once(&p.y)
            .chain(&p.y_more)
            .map(|y| {
                layout
                    .metrics
                    .iter()
                    .position(|m| m == y)
                    .ok_or_else(|| AppError::internal(format!("plot metric {y} missing")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let x_metric = if p.x_is_metric {
            Some(
                layout
                    .metrics
                    .iter()
                    .position(|m| *m == p.x)
                    .ok_or_else(|| AppError::internal(format!("plot metric {} missing", p.x)))?,
            )
        } else {
            None
        };
        for (stem, value) in p.figure_files(&spec.name, &spec.sweep) {
            let mut fig = p.clone();
            let mut subset: Vec<Summary> = summaries.clone();
            subset.retain(|s| summary_passes(s, &p.filter));
            if let (Some(key), Some(v)) = (&p.figures, &value) {
                subset.retain(|s| s.get(key) == Some(v));
                fig.title = format!("{} — {}", p.title, p.label(&v.to_string()));
            }
            let panels = crate::plot::with_zoom(
                &fig,
                crate::plot::panels(&fig, &subset, &metrics, x_metric, &|key| {
                    spec.series_colour(key)
                }),
            );
            crate::plot::write(
                &fig,
                &panels,
                &folder.figure(&stem, "png"),
                &folder.figure(&stem, "svg"),
            )
            .map_err(|e| AppError::internal(format!("plot: {e}")))?;
        }
    }
    if !spec.tables.is_empty()
        || !spec.best_tables.is_empty()
        || !spec.rank_tables.is_empty()
        || !spec.front_tables.is_empty()
        || !spec.score_tables.is_empty()
        || !spec.guidance.is_empty()
    {
        let mut parts: Vec<String> = Vec::new();
        if let Some((done, total)) = partial {
            let damage = folder.manifest_state().err();
            parts.push(partial_note(spec, done, total, damage.as_deref()));
        }
        for t in &spec.tables {
            parts.push(table_markdown(t, layout, &summaries, &spec.paper_values));
        }
        for t in &spec.best_tables {
            parts.push(best_table_markdown(t, layout, rows));
        }
        for t in &spec.rank_tables {
            parts.push(rank_table_markdown(t, layout, rows));
        }
        for t in &spec.front_tables {
            parts.push(front_table_markdown(t, layout, rows));
        }
        for t in &spec.score_tables {
            parts.push(score_table_markdown(t, layout, &summaries));
        }
        if !spec.guidance.is_empty() {
            parts.push(guidance_section(spec, layout, rows));
        }
        let path = folder.table();
        write_atomic(&path, parts.join("\n").as_bytes()).map_err(|e| AppError::io(&path, e))?;
    }
    let path = folder.report();
    let verdicts = claim_verdicts(spec, layout, rows);
    let text = section(spec, layout, &summaries, rows, &verdicts, folder);
    write_atomic(&path, text.as_bytes()).map_err(|e| AppError::io(&path, e))?;
    Ok(())
}

/// Writes `summary.csv` for `rows` and returns the summaries.
fn write_summary(
    spec: &Spec,
    folder: &ResultsFolder,
    layout: &Layout,
    rows: &[Row],
) -> Result<Vec<Summary>, AppError> {
    let summaries = summarize(spec, layout, rows);
    let path = folder.summary();
    write_atomic(&path, summary_csv(layout, &summaries).as_bytes())
        .map_err(|e| AppError::io(&path, e))?;
    Ok(summaries)
}

/// Rebuilds summary, plot, tables and report section of an existing results folder from its `cells.csv`
/// and `config.toml` (`rfx plot`), without computing anything.
pub fn replot(dir: &Path, kinds: &Kinds) -> Result<(), AppError> {
    let folder = ResultsFolder::new(dir);
    let spec = folder.spec(kinds).map_err(AppError::Config)?;
    let layout = Layout::of(&spec);
    let bytes = folder.read_cells()?;
    let Some((rows, _)) = layout.read(&bytes) else {
        return Err(AppError::usage(format!(
            "{}: columns do not match {}",
            folder.cells().display(),
            folder.config().display()
        )));
    };
    // a value the kind never records would end up in the summary and the plots
    if let Some(e) = layout.first_non_finite(&bytes) {
        return Err(AppError::usage(format!(
            "{}: {e}; recompute the cell with rfx run",
            folder.cells().display()
        )));
    }
    write_all(&spec, &folder, &layout, &rows)
}

/// `Some((cells present, cells in the sweep))` when `rows` hold only some of the sweep's cells (a run
/// stopped by `--time-limit`), `None` when the run is complete.
pub fn missing_cells(spec: &Spec, layout: &Layout, rows: &[Row]) -> Option<(usize, usize)> {
    let total = spec.cells().len();
    let done = cells_present(spec, layout, rows);
    (done < total).then_some((done, total))
}

/// The warning paragraph of a partial run ([`missing_cells`]): everything derived from its rows (tables,
/// plot, claims) covers the finished cells only. `manifest_damage` (the folder's `manifest.json` cannot be
/// read: [`ResultsFolder::manifest_state`]) replaces the time-limit sentence, which would be a guess: the
/// manifest says whether the run was `--quick`.
pub fn partial_note(
    spec: &Spec,
    done: usize,
    total: usize,
    manifest_damage: Option<&str>,
) -> String {
    if let Some(why) = manifest_damage {
        return format!(
            "> **Partial results: {done} of {total} cells computed** (of the full sweep; manifest unreadable, \
             so whether the run was `--quick` is not known: {why}). The tables, \
             plot and claims below use only the finished cells.\n"
        );
    }
    format!(
        "> **Partial results: {done} of {total} cells computed.** The run stopped at its time limit; the \
         tables, plot and claims below use only the finished cells. `rfx run {}` computes the rest.\n",
        spec.file.display()
    )
}

/// Formats a number as the table asks.
pub fn fmt_num(v: f64, f: NumFormat) -> String {
    if !v.is_finite() {
        return "(-)".into();
    }
    match f {
        NumFormat::Sci(d) => format!("{:.*e}", d.saturating_sub(1), v),
        NumFormat::Fixed(d) => format!("{v:.d$}"),
    }
}

fn metric_index(layout: &Layout, name: &str) -> usize {
    layout.metrics.iter().position(|m| m == name).unwrap_or(0)
}

/// The paper's value for a table cell: a `[[paper_value]]` with `source = "paper"` of metric `metric` whose
/// every parameter is among `cell` (the row's and column's parameter values) with the same value. Numbers from
/// the authors' code or derived by us are never shown as the paper's.
fn paper_for<'p>(
    paper: &'p [PaperValue],
    metric: &str,
    cell: &[(&String, &Value)],
) -> Option<&'p PaperValue> {
    paper.iter().find(|pv| {
        pv.source == PaperSource::Paper
            && pv.metric == metric
            && !pv.cell.is_empty()
            && pv
                .cell
                .iter()
                .all(|(k, v)| cell.iter().any(|(ck, cv)| *ck == k && *cv == v))
    })
}

/// The markdown table: one row per combination of `rows` parameters, one column per `columns` value; with
/// `show_paper`, the paper's number for a cell (from `paper`) follows ours in brackets.
pub fn table_markdown(
    t: &TableSpec,
    layout: &Layout,
    summaries: &[Summary],
    paper: &[PaperValue],
) -> String {
    let mi = metric_index(layout, &t.value);
    let mut cols: Vec<Value> = Vec::new();
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for s in summaries {
        if !summary_passes(s, &t.filter) {
            continue;
        }
        let Some(c) = s.get(&t.columns) else { continue };
        if let Some(only) = &t.column_values {
            if !only.contains(c) {
                continue;
            }
        }
        if !cols.contains(c) {
            cols.push(c.clone());
        }
        let r: Vec<Value> = t.rows.iter().filter_map(|k| s.get(k).cloned()).collect();
        if !rows.contains(&r) {
            rows.push(r);
        }
    }
    let mut out = String::new();
    if !t.caption.is_empty() {
        let _ = writeln!(out, "{}\n", t.caption);
    }
    let head: Vec<String> = t
        .rows
        .iter()
        .cloned()
        .chain(cols.iter().map(|c| format!("{} = {c}", t.columns)))
        .collect();
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
    let mut other_task = false;
    for r in &rows {
        let mut fields: Vec<String> = r.iter().map(|v| v.to_string()).collect();
        let mut any = false;
        for c in &cols {
            // the cell of this row and column among the summaries the filter lets through (a `where` on a
            // parameter that is neither a row nor the column picks which of its values is shown)
            let cell = summaries.iter().find(|s| {
                summary_passes(s, &t.filter)
                    && s.get(&t.columns) == Some(c)
                    && t.rows.iter().zip(r).all(|(k, v)| s.get(k) == Some(v))
            });
            fields.push(match cell {
                Some(s) if s.mean[mi].is_finite() => {
                    any = true;
                    if s.n > 1 {
                        format!(
                            "{} ± {}",
                            fmt_num(s.mean[mi], t.format),
                            fmt_num(s.std[mi], t.format)
                        )
                    } else {
                        fmt_num(s.mean[mi], t.format)
                    }
                }
                _ => "(-)".into(),
            });
            if t.show_paper {
                let at: Vec<(&String, &Value)> = t
                    .rows
                    .iter()
                    .zip(r)
                    .chain(std::iter::once((&t.columns, c)))
                    .collect();
                if let Some(pv) = paper_for(paper, &t.value, &at) {
                    if let Some(last) = fields.last_mut() {
                        let mark = if pv.same_task { "" } else { "†" };
                        let _ = write!(last, " [{}{mark}]", fmt_num(pv.value, t.format));
                        other_task |= !pv.same_task;
                    }
                }
            }
        }
        // rows without any value (every cell skipped, e.g. a method that does not apply) are left out
        if any {
            let _ = writeln!(out, "| {} |", fields.join(" | "));
        }
    }
    let _ = writeln!(
        out,
        "\nValues: `{}`, mean ± standard deviation over seeds where there are several{}.",
        t.value,
        if t.show_paper {
            "; the paper's number in [brackets] where it reports one"
        } else {
            ""
        }
    );
    if other_task {
        let _ = writeln!(
            out,
            "\n† measured by the paper on a task other than ours (other data or sizes): shown for orientation, \
             not comparable; see \"The paper's numbers beside ours\"."
        );
    }
    out
}

/// Every claim of `spec` with its verdict on `rows`.
pub fn claim_verdicts<'s>(
    spec: &'s Spec,
    layout: &Layout,
    rows: &[Row],
) -> Vec<(&'s ClaimSpec, claims::ClaimVerdict)> {
    spec.claims
        .iter()
        .map(|c| (c, claims::evaluate(c, &claim_points(spec, layout, rows, c))))
        .collect()
}

/// The claims' view of the computed cells: one [`claims::Point`] per cell with a row and no note.
pub fn claim_points(
    spec: &Spec,
    layout: &Layout,
    rows: &[Row],
    claim: &ClaimSpec,
) -> Vec<claims::Point> {
    let by_key: std::collections::HashMap<String, &Row> =
        rows.iter().map(|r| (r.key(layout), r)).collect();
    let mi = metric_index(layout, &claim.metric);
    let ai = claim.budget.as_ref().map(|b| metric_index(layout, &b.at));
    let ii = claim
        .items
        .as_ref()
        .and_then(|name| layout.items.iter().position(|x| x == name));
    spec.cells()
        .into_iter()
        .filter_map(|cell| {
            let row = by_key.get(&cell.key())?;
            if !row.note(layout).is_empty() {
                return None;
            }
            let m = row.metrics(layout);
            Some(claims::Point {
                params: cell.params,
                value: m[mi],
                at: ai.map_or(f64::NAN, |i| m[i]),
                quiet: row.quiet(layout),
                machine: row.machine_kind(layout).to_string(),
                items: ii.map_or_else(Vec::new, |j| row.items(layout, j)),
            })
        })
        .collect()
}

/// The experiment's section of the report (markdown, image paths relative to the results root).
pub fn section(
    spec: &Spec,
    layout: &Layout,
    summaries: &[Summary],
    rows: &[Row],
    verdicts: &[(&ClaimSpec, claims::ClaimVerdict)],
    folder: &ResultsFolder,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", spec.title);
    if !spec.paper.is_empty() {
        let _ = writeln!(out, "*Reproduces:* {}\n", spec.paper);
    }
    if !spec.description.is_empty() {
        let _ = writeln!(out, "{}\n", spec.description.trim());
    }
    let manifest = folder.read_manifest();
    if let Some(m) = &manifest {
        let get = |k: &str| {
            m.get(k)
                .map(|v| v.to_string().trim_matches('"').to_string())
                .unwrap_or_default()
        };
        // A run resumes: its wall time covers only the cells it computed, so say how many that was, and give
        // the cells' own times summed over every run that computed them.
        let time_col = layout.time_index();
        let cell_time: f64 = rows
            .iter()
            .filter_map(|r| r.0.get(time_col).and_then(|t| t.parse::<f64>().ok()))
            .sum();
        // The run record: the last run that computed cells (a rerun that computed none keeps it, run.rs), or,
        // where no such run was recorded, the last run.
        let commit: String = get("git_commit").chars().take(10).collect();
        let run = if manifest_cells_computed(m) > 0 {
            format!(
                "Last run that computed cells: {} (commit {commit}), {} computed, {} reused from earlier runs, \
                 {:.1} s wall time.",
                get("started_utc"),
                get("cells_computed"),
                get("cells_reused"),
                m.get("wall_time_s").and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN),
            )
        } else {
            format!(
                "Last run {} (commit {commit}): no new cells, {} reused.",
                get("started_utc"),
                get("cells_reused")
            )
        };
        let _ = writeln!(
            out,
            "Experiment file `{}`, kind `{}`, seed {}{}; {} cells. {run} Cell times (all runs): {:.0} s in total. {} {}\n",
            get("config_file"),
            spec.kind,
            spec.seed,
            if spec.quick { ", **quick settings**" } else { "" },
            get("cells_total"),
            cell_time,
            crate::results::provenance_sentence(layout, rows),
            crate::results::machines_sentence(layout, rows)
        );
    }
    if let Some((done, total)) = missing_cells(spec, layout, rows) {
        let damage = folder.manifest_state().err();
        let _ = writeln!(
            out,
            "{}",
            partial_note(spec, done, total, damage.as_deref())
        );
    }
    for p in &spec.plots {
        for (stem, value) in p.figure_files(&spec.name, &spec.sweep) {
            let alt = match value {
                Some(v) => format!("{} — {}", spec.title, p.label(&v.to_string())),
                None => spec.title.clone(),
            };
            let _ = writeln!(out, "![{alt}]({}/{stem}.png)\n", spec.name);
        }
    }
    for t in &spec.tables {
        out.push_str(&table_markdown(t, layout, summaries, &spec.paper_values));
        out.push('\n');
    }
    for t in &spec.best_tables {
        out.push_str(&best_table_markdown(t, layout, rows));
        out.push('\n');
    }
    for t in &spec.rank_tables {
        out.push_str(&rank_table_markdown(t, layout, rows));
        out.push('\n');
    }
    for t in &spec.front_tables {
        out.push_str(&front_table_markdown(t, layout, rows));
        out.push('\n');
    }
    for t in &spec.score_tables {
        out.push_str(&score_table_markdown(t, layout, summaries));
        out.push('\n');
    }
    if !spec.guidance.is_empty() {
        out.push_str(&guidance_section(spec, layout, rows));
        out.push('\n');
    }
    if !verdicts.is_empty() {
        out.push_str(&claims::claims_markdown(verdicts));
    }
    out.push_str(&paper_values_markdown(
        &spec.paper_values,
        layout,
        summaries,
    ));
    if !spec.notes.is_empty() {
        // A template that selects nothing (a partial run) leaves the notes as written, with the error above.
        let notes = rendered_notes(spec, layout, rows, verdicts).unwrap_or_else(|e| {
            eprintln!("{e}");
            format!("> **Notes not filled in:** {e}\n\n{}", spec.notes.trim())
        });
        let _ = writeln!(out, "### Notes\n\n{}\n", notes.trim());
    }
    out
}

/// The experiment's `notes` with their templates ([`crate::prose`]) filled from `rows` and the claims'
/// `verdicts`; the error is one line naming the file, `notes` and the template.
pub fn rendered_notes(
    spec: &Spec,
    layout: &Layout,
    rows: &[Row],
    verdicts: &[(&ClaimSpec, claims::ClaimVerdict)],
) -> Result<String, String> {
    let by_key: std::collections::HashMap<String, &Row> =
        rows.iter().map(|r| (r.key(layout), r)).collect();
    let cells: Vec<crate::prose::CellValues> = spec
        .cells()
        .into_iter()
        .filter_map(|cell| {
            let row = by_key.get(&cell.key())?;
            row.note(layout).is_empty().then(|| {
                let mut values = row.metrics(layout);
                values.extend(row.timings(layout));
                (cell.params, values)
            })
        })
        .collect();
    let verdicts: Vec<&claims::ClaimVerdict> = verdicts.iter().map(|(_, v)| v).collect();
    // the metrics, then the timing columns (`time_s` first), which templates may also read
    let columns: Vec<String> = layout
        .metrics
        .iter()
        .chain(&layout.timings)
        .cloned()
        .collect();
    crate::prose::render(
        &spec.file.display().to_string(),
        &spec.notes,
        &columns,
        &cells,
        &verdicts,
    )
}

/// Ours for a `[[paper_value]]`: (mean, std, seeds) of its metric in the first summary matching its cell.
fn ours_for(pv: &PaperValue, layout: &Layout, summaries: &[Summary]) -> Option<(f64, f64, usize)> {
    let mi = metric_index(layout, &pv.metric);
    summaries
        .iter()
        .find(|s| pv.cell.iter().all(|(k, v)| s.get(k) == Some(v)))
        .map(|s| (s.mean[mi], s.std[mi], s.n))
        .filter(|(m, _, _)| m.is_finite())
}

/// The report's comparison with published numbers: "The paper's numbers beside ours" (only `source =
/// "paper"`), then "Other reference numbers" (the authors' code, or derived), each with its source. The
/// ratio ours / reference is given only where the number was measured on our task (`same_task`); otherwise
/// the cell says why not. Empty when there are no `[[paper_value]]`s.
pub fn paper_values_markdown(
    paper: &[PaperValue],
    layout: &Layout,
    summaries: &[Summary],
) -> String {
    let text = |t: &str| t.replace('|', "\\|").replace('\n', " ");
    let row = |pv: &PaperValue| -> [String; 5] {
        let cell: Vec<String> = pv.cell.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let ours = ours_for(pv, layout, summaries);
        let ours_s = match ours {
            Some((m, sd, n)) if n > 1 => format!("{m:.4e} ± {sd:.1e}"),
            Some((m, _, _)) => format!("{m:.4e}"),
            None => "(-)".into(),
        };
        let ratio = match (ours, &pv.differs) {
            (_, Some(why)) if !pv.same_task => format!("no ratio: not our task — {}", text(why)),
            (Some((m, _, _)), _) => format!("{:.3}", m / pv.value),
            (None, _) => "(-)".into(),
        };
        [
            cell.join(", "),
            pv.metric.clone(),
            format!("{:.4e}", pv.value),
            ours_s,
            ratio,
        ]
    };
    let mut out = String::new();
    let published: Vec<&PaperValue> = paper
        .iter()
        .filter(|pv| pv.source == PaperSource::Paper)
        .collect();
    if !published.is_empty() {
        let _ = writeln!(
            out,
            "### The paper's numbers beside ours\n\n| cell | metric | paper | ours | ours / paper | where in the paper |\n\
             |---|---|---|---|---|---|"
        );
        for pv in published {
            let [cell, metric, value, ours, ratio] = row(pv);
            let _ = writeln!(
                out,
                "| {cell} | {metric} | {value} | {ours} | {ratio} | {} |",
                text(pv.reference.as_deref().unwrap_or_default())
            );
        }
        let _ = writeln!(
            out,
            "\nOnly numbers printed in the paper (a table, the text, or read off a figure). The ratio is given \
             where the paper measured the same task as our cell (data set, n, m, test set).\n"
        );
    }
    let others: Vec<&PaperValue> = paper
        .iter()
        .filter(|pv| pv.source != PaperSource::Paper)
        .collect();
    if !others.is_empty() {
        let _ = writeln!(
            out,
            "### Other reference numbers (not printed in the paper)\n\n| cell | metric | reference | ours | ours / \
             reference | source |\n|---|---|---|---|---|---|"
        );
        for pv in others {
            let [cell, metric, value, ours, ratio] = row(pv);
            let _ = writeln!(
                out,
                "| {cell} | {metric} | {value} | {ours} | {ratio} | {} |",
                text(&pv.provenance())
            );
        }
        out.push('\n');
    }
    out
}

/// Two-sided p-value of the paired t-test on the differences `d` ($t = \bar d/(s_d/\sqrt n)$, $n-1$ degrees
/// of freedom); 1 for fewer than two pairs; for zero spread, 0 when the mean difference is non-zero.
pub fn paired_t_p(d: &[f64]) -> f64 {
    let n = d.len();
    if n < 2 {
        return 1.0;
    }
    let (mean, sd) = crate::results::mean_std(d);
    if sd == 0.0 {
        return if mean == 0.0 { 1.0 } else { 0.0 };
    }
    let t = mean / (sd / (n as f64).sqrt());
    match StudentsT::new(0.0, 1.0, (n - 1) as f64) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    }
}

/// The winners of one comparison: `(value of by, pair key -> metric)` per method; returns the methods in
/// order of mean (best first) that are the best or not significantly worse than it, and the method count.
fn winners(
    groups: &[(String, std::collections::BTreeMap<String, f64>)],
    better: Better,
    alpha: f64,
) -> (Vec<String>, usize) {
    let mut means: Vec<(String, f64)> = groups
        .iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(k, m)| (k.clone(), m.values().sum::<f64>() / m.len() as f64))
        .collect();
    let sign = if better == Better::Lower { 1.0 } else { -1.0 };
    means.sort_by(|a, b| (sign * a.1).total_cmp(&(sign * b.1)));
    let Some((best, _)) = means.first().cloned() else {
        return (Vec::new(), 0);
    };
    let best_vals = &groups.iter().find(|(k, _)| *k == best).expect("present").1;
    let mut out = vec![best.clone()];
    for (m, _) in means.iter().skip(1) {
        let vals = &groups.iter().find(|(k, _)| k == m).expect("present").1;
        let d: Vec<f64> = best_vals
            .iter()
            .filter_map(|(key, b)| vals.get(key).map(|v| v - b))
            .collect();
        if paired_t_p(&d) >= alpha {
            out.push(m.clone());
        }
    }
    (out, means.len())
}

/// The value of `key` in an insertion-ordered list of pairs, inserted from `init` when absent (the tables
/// list their rows and groups in order of first appearance).
fn entry<K: PartialEq, V>(list: &mut Vec<(K, V)>, key: K, init: impl FnOnce() -> V) -> &mut V {
    let pos = match list.iter().position(|(k, _)| *k == key) {
        Some(p) => p,
        None => {
            list.push((key, init()));
            list.len() - 1
        }
    };
    &mut list[pos].1
}

/// Whether summary `s` passes `filter` (as [`passes_filter`] for the rows of cells).
fn summary_passes(s: &Summary, filter: &[(String, Vec<Value>)]) -> bool {
    filter.iter().all(|(k, vals)| {
        s.get(k)
            .is_some_and(|v| crate::spec::listed(vals, &v.to_string()))
    })
}

/// Whether row `r` passes `filter` (each listed parameter has one of the listed values, compared as written).
fn passes_filter(layout: &Layout, r: &Row, filter: &[(String, Vec<Value>)]) -> bool {
    filter.iter().all(|(k, vals)| {
        layout
            .params
            .iter()
            .position(|p| p == k)
            .is_some_and(|i| crate::spec::listed(vals, &r.0[i]))
    })
}

/// The caption (when there is one) and the blank line that follows it, for the tables' markdown.
fn caption_lines(caption: &str) -> String {
    if caption.is_empty() {
        String::new()
    } else {
        format!("{caption}\n\n")
    }
}

/// A `[[best_table]]` as markdown (see [`BestTableSpec`]).
pub fn best_table_markdown(t: &BestTableSpec, layout: &Layout, rows: &[Row]) -> String {
    let pidx = |name: &str| layout.params.iter().position(|p| p == name);
    let passes = |r: &Row, filter: &[(String, Vec<Value>)]| passes_filter(layout, r, filter);
    let Some(by) = pidx(&t.by) else {
        return String::new();
    };
    let row_idx: Vec<usize> = t.rows.iter().filter_map(|r| pidx(r)).collect();
    // row combinations in first-appearance order
    let mut combos: Vec<Vec<String>> = Vec::new();
    for r in rows.iter().filter(|r| passes(r, &t.filter)) {
        let c: Vec<String> = row_idx.iter().map(|&i| r.0[i].clone()).collect();
        if !combos.contains(&c) {
            combos.push(c);
        }
    }
    let mut out = String::new();
    if !t.caption.is_empty() {
        let _ = writeln!(out, "{}\n", t.caption);
    }
    let _ = writeln!(
        out,
        "| {} | {} |\n|{}",
        t.rows.join(" | "),
        t.columns
            .iter()
            .map(|c| c.label.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(t.rows.len() + t.columns.len())
    );
    // per column: (rows with data, rows with "-", per `by` value: rows among the winners, rows as the sole winner)
    let mut tallies: Vec<Tally> = vec![(0, 0, Vec::new()); t.columns.len()];
    for combo in &combos {
        let mut cells = Vec::new();
        for (ci, col) in t.columns.iter().enumerate() {
            let mi = metric_index(layout, &col.metric);
            let mut groups: Vec<(String, std::collections::BTreeMap<String, f64>)> = Vec::new();
            for r in rows.iter().filter(|r| {
                passes(r, &t.filter)
                    && passes(r, &col.filter)
                    && row_idx.iter().zip(combo).all(|(&i, v)| r.0[i] == *v)
            }) {
                let v = r.metrics(layout)[mi];
                if !v.is_finite() {
                    continue;
                }
                let pair: String = layout
                    .params
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != by && !row_idx.contains(i))
                    .map(|(i, p)| format!("{p}={}", r.0[i]))
                    .collect::<Vec<_>>()
                    .join(";");
                let m = r.0[by].clone();
                entry(&mut groups, m, Default::default).insert(pair, v);
            }
            let (w, total) = winners(&groups, col.better, t.alpha);
            let tally = &mut tallies[ci];
            if total > 0 {
                tally.0 += 1;
                if w.len() * 2 > total {
                    tally.1 += 1;
                } else {
                    for name in &w {
                        let sole = usize::from(w.len() == 1);
                        let (rows, alone) = entry(&mut tally.2, name.clone(), || (0, 0));
                        *rows += 1;
                        *alone += sole;
                    }
                }
            }
            cells.push(if total == 0 {
                "(-)".to_string()
            } else if w.len() * 2 > total {
                "-".to_string()
            } else {
                w.join(", ")
            });
        }
        let _ = writeln!(out, "| {} | {} |", combo.join(" | "), cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nBest `{}` by mean; listed with it are the values not significantly worse (two-sided paired t-test over \
         the matching cells — seeds and the column's other parameter values — at α = {}). \"-\": more than half of \
         the values are not significantly different from the best. \"(-)\": no data.\n",
        t.by, t.alpha
    );
    if t.tally {
        out.push_str(&tally_sentences(t, &tallies));
    }
    out
}

/// The `[[guidance]]` questions under one heading: "Which method when (generated)".
fn guidance_section(spec: &Spec, layout: &Layout, rows: &[Row]) -> String {
    let mut out = String::from(
        "#### Which method when (generated from the cells)\n\nEach answer is computed from the cells below; \
         a method \"wins\" only where a sign test over the blocks says so.\n\n",
    );
    for t in &spec.guidance {
        out.push_str(&guidance_markdown(t, layout, rows));
        out.push('\n');
    }
    out
}

/// Ranks of `values` (1 = best) with ties sharing their mean rank.
pub fn ranks(values: &[f64], better: Better) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| match better {
        Better::Lower => values[a].total_cmp(&values[b]),
        Better::Higher => values[b].total_cmp(&values[a]),
    });
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = mean;
        }
        i = j + 1;
    }
    out
}

/// A `[[rank_table]]` as markdown (see [`RankTableSpec`]), with one generated sentence per row.
pub fn rank_table_markdown(t: &RankTableSpec, layout: &Layout, rows: &[Row]) -> String {
    let pidx = |name: &str| layout.params.iter().position(|p| p == name);
    let (Some(by), Some(mi)) = (
        pidx(&t.by),
        layout.metrics.iter().position(|m| *m == t.metric),
    ) else {
        return String::new();
    };
    let row_idx: Vec<usize> = t.rows.iter().filter_map(|r| pidx(r)).collect();
    let passes = |r: &Row| passes_filter(layout, r, &t.filter);
    // per row combination: per block (the other parameters), per value of `by`: the metric
    type Blocks = Vec<(String, Vec<(String, f64)>)>;
    let mut combos: Vec<(Vec<String>, Blocks)> = Vec::new();
    for r in rows.iter().filter(|r| passes(r)) {
        let v = r.metrics(layout)[mi];
        if !v.is_finite() {
            continue;
        }
        let combo: Vec<String> = row_idx.iter().map(|&i| r.0[i].clone()).collect();
        let block: String = layout
            .params
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != by && !row_idx.contains(i))
            .map(|(i, p)| format!("{p}={}", r.0[i]))
            .collect::<Vec<_>>()
            .join(";");
        let blocks = entry(&mut combos, combo, Vec::new);
        entry(blocks, block, Vec::new).push((r.0[by].clone(), v));
    }
    let mut out = caption_lines(&t.caption);
    let head = if t.rows.is_empty() {
        "all".to_string()
    } else {
        t.rows.join(", ")
    };
    let _ = writeln!(
        out,
        "| {head} | blocks ranked | `{}` by mean rank of `{}` (1 = best) | first, and not significantly behind it |\n|---|---|---|---|",
        t.by, t.metric
    );
    let mut sentences = Vec::new();
    for (combo, blocks) in &combos {
        let label = if combo.is_empty() {
            "all".to_string()
        } else {
            combo.join(", ")
        };
        // values present in at least three quarters of the blocks
        let mut names: Vec<String> = Vec::new();
        for (_, vals) in blocks {
            for (n, _) in vals {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        let coverage = |n: &String| {
            blocks
                .iter()
                .filter(|(_, v)| v.iter().any(|(m, _)| m == n))
                .count()
        };
        let (kept, left): (Vec<String>, Vec<String>) = names
            .into_iter()
            .partition(|n| 4 * coverage(n) >= 3 * blocks.len());
        let complete: Vec<Vec<f64>> = blocks
            .iter()
            .filter_map(|(_, vals)| {
                kept.iter()
                    .map(|n| vals.iter().find(|(m, _)| m == n).map(|(_, v)| *v))
                    .collect::<Option<Vec<f64>>>()
            })
            .collect();
        if kept.len() < 2 || complete.is_empty() {
            let _ = writeln!(out, "| {label} | 0 | (too few values to rank) | |");
            continue;
        }
        let block_ranks: Vec<Vec<f64>> = complete.iter().map(|v| ranks(v, t.better)).collect();
        let mean_rank: Vec<f64> = (0..kept.len())
            .map(|j| block_ranks.iter().map(|r| r[j]).sum::<f64>() / block_ranks.len() as f64)
            .collect();
        let mut order: Vec<usize> = (0..kept.len()).collect();
        order.sort_by(|&a, &b| {
            mean_rank[a]
                .total_cmp(&mean_rank[b])
                .then(kept[a].cmp(&kept[b]))
        });
        let first = order[0];
        let others: Vec<usize> = order[1..].to_vec();
        let p: Vec<f64> = others
            .iter()
            .map(|&j| {
                let wins = block_ranks.iter().filter(|r| r[j] < r[first]).count();
                let losses = block_ranks.iter().filter(|r| r[j] > r[first]).count();
                sign_test_p(wins, losses)
            })
            .collect();
        let behind = holm_reject(&p, t.alpha);
        let level: Vec<String> = others
            .iter()
            .zip(&behind)
            .filter(|(_, b)| !**b)
            .map(|(&j, _)| kept[j].clone())
            .collect();
        let ranking: Vec<String> = order
            .iter()
            .map(|&j| format!("{} {:.1}", kept[j], mean_rank[j]))
            .collect();
        let mut winners = vec![kept[first].clone()];
        winners.extend(level.iter().cloned());
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} |",
            complete.len(),
            ranking.join(", "),
            winners.join(", ")
        );
        let mut sentence = format!(
            "- **{label}**: {} ranks first (mean rank {:.1} of {} over {} blocks); ",
            kept[first],
            mean_rank[first],
            kept.len(),
            complete.len()
        );
        if level.is_empty() {
            sentence.push_str(&format!(
                "every other value is significantly behind it ({} of {}).",
                others.len(),
                others.len()
            ));
        } else {
            sentence.push_str(&format!(
                "not significantly behind it: {}; significantly behind: {} of {}.",
                level.join(", "),
                others.len() - level.len(),
                others.len()
            ));
        }
        if !left.is_empty() {
            sentence.push_str(&format!(
                " Left out (missing in more than a quarter of the blocks): {}.",
                left.join(", ")
            ));
        }
        sentences.push(sentence);
    }
    let _ = writeln!(
        out,
        "\nWithin each block (every combination of the other parameters, seeds included) the values of `{}` are \
         ranked by `{}` ({} is better; ties share their mean rank); the table orders them by mean rank. \"Not \
         significantly behind\": an exact two-sided sign test over the blocks against the first (blocks where \
         each is ahead) does not reject at α = {} after Holm's correction.\n",
        t.by,
        t.metric,
        if t.better == Better::Lower { "lower" } else { "higher" },
        t.alpha
    );
    out.push_str(&sentences.join("\n"));
    out.push('\n');
    out
}

/// The indices of the Pareto-optimal points among `(cost, value)` pairs (lower cost better; `better` for the
/// value): those that no other point matches or beats in both with one strictly better; sorted by cost.
pub fn pareto_front(points: &[(f64, f64)], better: Better) -> Vec<usize> {
    let beats = |a: f64, b: f64| match better {
        Better::Lower => a < b,
        Better::Higher => a > b,
    };
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&i| {
            let (ci, vi) = points[i];
            !points.iter().enumerate().any(|(j, &(cj, vj))| {
                j != i && cj <= ci && (vj == vi || beats(vj, vi)) && (cj < ci || beats(vj, vi))
            })
        })
        .collect();
    front.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    front
}

/// A `[[front_table]]` as markdown (see [`FrontTableSpec`]), with one generated sentence per value of the
/// first row parameter.
pub fn front_table_markdown(t: &FrontTableSpec, layout: &Layout, rows: &[Row]) -> String {
    let pidx = |name: &str| layout.params.iter().position(|p| p == name);
    let midx = |name: &str| layout.metrics.iter().position(|m| m == name);
    let (Some(by), Some(ci), Some(mi)) = (pidx(&t.by), midx(&t.cost), midx(&t.metric)) else {
        return String::new();
    };
    let along = t.along.as_deref().and_then(pidx);
    let row_idx: Vec<usize> = t.rows.iter().filter_map(|r| pidx(r)).collect();
    let passes = |r: &Row| passes_filter(layout, r, &t.filter);
    // per row combination: per point (by, along): sums of cost and metric and the count
    type Points = Vec<((String, String), (f64, f64, usize))>;
    let mut combos: Vec<(Vec<String>, Points)> = Vec::new();
    for r in rows.iter().filter(|r| passes(r)) {
        let m = r.metrics(layout);
        let (c, v) = (m[ci], m[mi]);
        if !(c.is_finite() && v.is_finite()) {
            continue;
        }
        let combo: Vec<String> = row_idx.iter().map(|&i| r.0[i].clone()).collect();
        let key = (
            r.0[by].clone(),
            along.map(|a| r.0[a].clone()).unwrap_or_default(),
        );
        let sums = entry(entry(&mut combos, combo, Vec::new), key, || (0.0, 0.0, 0));
        sums.0 += c;
        sums.1 += v;
        sums.2 += 1;
    }
    let mut out = caption_lines(&t.caption);
    let head = if t.rows.is_empty() {
        "all".to_string()
    } else {
        t.rows.join(" | ")
    };
    let _ = writeln!(
        out,
        "| {head} | front: `{}`{} (mean `{}`, mean `{}`), cheapest first | on the front |\n|{}---|---|",
        t.by,
        t.along.as_deref().map(|a| format!(" `{a}`")).unwrap_or_default(),
        t.cost,
        t.metric,
        "---|".repeat(t.rows.len().max(1))
    );
    // per value of the first row parameter: per owner, the rows whose front it is on; and the rows counted
    // per group: its label, its rows, and per value of `by` the rows whose front it is on
    type Counts = Vec<(String, usize, Vec<(String, usize)>)>;
    let mut counts: Counts = Vec::new();
    for (combo, pts) in &combos {
        let means: Vec<(f64, f64)> = pts
            .iter()
            .map(|(_, (c, v, n))| (c / *n as f64, v / *n as f64))
            .collect();
        let front = pareto_front(&means, t.better);
        let listed: Vec<String> = front
            .iter()
            .map(|&i| {
                let ((owner, at), _) = &pts[i];
                let at = if at.is_empty() {
                    String::new()
                } else {
                    format!(" {}", at)
                };
                format!(
                    "{owner}{at} ({}, {})",
                    crate::plot::sci(means[i].0),
                    crate::plot::sci(means[i].1)
                )
            })
            .collect();
        let mut owners: Vec<String> = Vec::new();
        for &i in &front {
            if !owners.contains(&pts[i].0 .0) {
                owners.push(pts[i].0 .0.clone());
            }
        }
        let label = if combo.is_empty() {
            "all".to_string()
        } else {
            combo.join(" | ")
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} |",
            listed.join("; "),
            owners.join(", ")
        );
        let group = combo.first().cloned().unwrap_or_else(|| "all".into());
        let pos = match counts.iter().position(|(g, ..)| *g == group) {
            Some(p) => p,
            None => {
                counts.push((group, 0, Vec::new()));
                counts.len() - 1
            }
        };
        let group_entry = &mut counts[pos];
        group_entry.1 += 1;
        for o in owners {
            *entry(&mut group_entry.2, o, || 0) += 1;
        }
    }
    let _ = writeln!(
        out,
        "\nA point is on the front when no other point has a cost at most as high and a `{}` at least as good, one of \
         them strictly; means over the remaining parameters (seeds), no test of significance.\n",
        t.metric
    );
    for (group, n, mut owners) in counts {
        owners.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let listed: Vec<String> = owners.iter().map(|(o, k)| format!("{o} {k}")).collect();
        let _ = writeln!(
            out,
            "- **{group}**: on the front of `{}` against `{}` in — {} — of {n} rows.",
            t.metric,
            t.cost,
            listed.join(", ")
        );
    }
    out
}

/// One column's tally of a best table: rows with data, rows without a significant winner, and per value of
/// `by` the rows in which it is among the winners and those in which it is the sole winner.
type Tally = (usize, usize, Vec<(String, (usize, usize))>);

/// The generated summary of a best table with `tally = true`: per column, the values of `by` ordered by the
/// number of rows in which they are among the winners (sole winner in parentheses), and the rows without a
/// significant winner.
fn tally_sentences(t: &BestTableSpec, tallies: &[Tally]) -> String {
    let mut out = String::new();
    for (col, (rows, none, counts)) in t.columns.iter().zip(tallies) {
        if *rows == 0 {
            continue;
        }
        let mut counts = counts.clone();
        // most rows first, then most sole wins, then first appearance
        counts.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(b.1 .1.cmp(&a.1 .1)));
        let listed: Vec<String> = counts
            .iter()
            .map(|(n, (k, sole))| format!("{n} {k} ({sole} alone)"))
            .collect();
        let _ = writeln!(
            out,
            "- **{}**: best or not significantly worse in — {} — of {rows} rows; no significant winner (\"-\") in {none}.",
            col.label,
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            }
        );
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The scores of a `[[score_table]]` (see [`ScoreTableSpec`]): per `by` value, in first-appearance order,
/// (mean, 95 % half-width, P90, P95, PMA) over the complete data sets, and their number.
pub fn score_rows(values: &[(String, String, f64)]) -> (Vec<(String, [f64; 5])>, usize) {
    let mut bys: Vec<&str> = Vec::new();
    let mut overs: Vec<&str> = Vec::new();
    for (b, o, _) in values {
        if !bys.contains(&b.as_str()) {
            bys.push(b);
        }
        if !overs.contains(&o.as_str()) {
            overs.push(o);
        }
    }
    let get = |b: &str, o: &str| {
        values
            .iter()
            .find(|(vb, vo, v)| vb == b && vo == o && v.is_finite())
            .map(|t| t.2)
    };
    // data sets where every method has a value, with their best value
    let complete: Vec<(&str, f64)> = overs
        .iter()
        .filter_map(|&o| {
            let vals: Option<Vec<f64>> = bys.iter().map(|&b| get(b, o)).collect();
            let best = vals?.into_iter().fold(f64::NEG_INFINITY, f64::max);
            (best > 0.0).then_some((o, best))
        })
        .collect();
    let k = complete.len();
    let rows = bys
        .iter()
        .map(|&b| {
            let v: Vec<(f64, f64)> = complete
                .iter()
                .map(|&(o, best)| (get(b, o).unwrap_or(f64::NAN), best))
                .collect();
            let (mean, std) = crate::results::mean_std(&v.iter().map(|p| p.0).collect::<Vec<_>>());
            let pct = |f: f64| {
                100.0 * v.iter().filter(|(x, best)| *x >= f * best).count() as f64 / k.max(1) as f64
            };
            let pma = v.iter().map(|(x, best)| 100.0 * x / best).sum::<f64>() / k.max(1) as f64;
            let half = if k > 0 {
                1.96 * std / (k as f64).sqrt()
            } else {
                f64::NAN
            };
            (b.to_string(), [mean, half, pct(0.9), pct(0.95), pma])
        })
        .collect();
    (rows, k)
}

/// A `[[score_table]]` as markdown (see [`ScoreTableSpec`]).
pub fn score_table_markdown(t: &ScoreTableSpec, layout: &Layout, summaries: &[Summary]) -> String {
    let mi = metric_index(layout, &t.metric);
    let values: Vec<(String, String, f64)> = summaries
        .iter()
        .filter_map(|s| {
            Some((
                s.get(&t.by)?.to_string(),
                s.get(&t.over)?.to_string(),
                s.mean[mi],
            ))
        })
        .collect();
    let (rows, k) = score_rows(&values);
    let mut out = String::new();
    if !t.caption.is_empty() {
        let _ = writeln!(out, "{}\n", t.caption);
    }
    let _ = writeln!(
        out,
        "| {} | mean `{}` ± 95 % | P90 | P95 | PMA |\n|---|---|---|---|---|",
        t.by, t.metric
    );
    for (b, [mean, half, p90, p95, pma]) in rows {
        let _ = writeln!(
            out,
            "| {b} | {mean:.4} ± {half:.4} | {p90:.2} | {p95:.2} | {pma:.2} |"
        );
    }
    let _ = writeln!(
        out,
        "\nOver the {k} values of `{}` where every `{}` has a result (each the mean over seeds): mean ± 1.96·s/√{k}; \
         P90 / P95: % of them where the value is at least 90 % / 95 % of the best `{}`'s; PMA: mean of \
         100·value / best.\n",
        t.over, t.by, t.by
    );
    out
}

#[cfg(test)]
mod best_tests {
    use super::*;

    #[test]
    fn tally_sentences_count_rows_per_winner() {
        let col = |label: &str| crate::spec::BestColumn {
            label: label.into(),
            metric: "err".into(),
            better: Better::Lower,
            filter: Vec::new(),
        };
        let t = BestTableSpec {
            caption: String::new(),
            rows: vec!["dataset".into()],
            by: "method".into(),
            alpha: 0.05,
            filter: Vec::new(),
            columns: vec![col("m = 64"), col("m = 1024")],
            tally: true,
        };
        let tallies = vec![
            (
                3,
                1,
                vec![("b".to_string(), (1, 0)), ("a".to_string(), (2, 1))],
            ),
            (0, 0, Vec::new()),
        ];
        let text = tally_sentences(&t, &tallies);
        assert_eq!(
            text,
            "- **m = 64**: best or not significantly worse in — a 2 (1 alone), b 1 (0 alone) — of 3 rows; no \
             significant winner (\"-\") in 1.\n\n"
        );
    }

    #[test]
    fn paired_t_p_values() {
        // d = (1, 2, 3): mean 2, sd 1, t = 2 sqrt(3) = 3.464 with 2 dof -> p = 0.0742 (tables)
        let p = paired_t_p(&[1.0, 2.0, 3.0]);
        assert!((p - 0.0742).abs() < 1e-3, "{p}");
        assert_eq!(paired_t_p(&[1.0]), 1.0);
        assert_eq!(paired_t_p(&[0.5, 0.5]), 0.0);
        assert_eq!(paired_t_p(&[0.0, 0.0]), 1.0);
    }

    #[test]
    fn score_rows_match_their_definitions() {
        let v = |b: &str, o: &str, x: f64| (b.to_string(), o.to_string(), x);
        let values = vec![
            v("a", "s1", 0.9),
            v("b", "s1", 0.8),
            v("a", "s2", 0.5),
            v("b", "s2", 0.6),
            v("a", "s3", 0.7), // s3 lacks b: not counted
        ];
        let (rows, k) = score_rows(&values);
        assert_eq!(k, 2);
        let a = rows[0].1;
        assert!((a[0] - 0.7).abs() < 1e-12); // mean of 0.9, 0.5
                                             // sd of (0.9, 0.5) = 0.2828..., half-width 1.96 * sd / sqrt 2 = 0.392
        assert!((a[1] - 1.96 * 0.08f64.sqrt() / 2f64.sqrt()).abs() < 1e-12);
        // best: s1 0.9 (a), s2 0.6 (b); a reaches 90 % on s1 only (0.5 < 0.54)
        assert_eq!((a[2], a[3]), (50.0, 50.0));
        assert!((a[4] - (100.0 + 100.0 * 0.5 / 0.6) / 2.0).abs() < 1e-9);
        let b = rows[1].1;
        // b: 0.8 >= 0.81? no for 90 %; s2 is its own best
        assert_eq!((b[2], b[3]), (50.0, 50.0));
    }

    #[test]
    fn winners_keep_methods_not_significantly_worse() {
        let g = |vals: &[f64]| -> std::collections::BTreeMap<String, f64> {
            vals.iter()
                .enumerate()
                .map(|(i, v)| (format!("seed={i}"), *v))
                .collect()
        };
        let groups = vec![
            ("a".to_string(), g(&[1.0, 1.1, 0.9, 1.0, 1.05])),
            ("b".to_string(), g(&[2.0, 2.1, 1.9, 2.05, 2.0])),
            ("c".to_string(), g(&[1.0, 1.2, 0.8, 1.1, 0.95])),
        ];
        let (w, n) = winners(&groups, Better::Lower, 0.05);
        assert_eq!(n, 3);
        assert_eq!(w[0], "a");
        assert!(w.contains(&"c".to_string()) && !w.contains(&"b".to_string()));
        let (w, _) = winners(&groups, Better::Higher, 0.05);
        assert_eq!(w, vec!["b".to_string()]);
    }

    #[test]
    fn ranks_share_ties_and_follow_better() {
        assert_eq!(ranks(&[0.3, 0.1, 0.2], Better::Lower), vec![3.0, 1.0, 2.0]);
        assert_eq!(ranks(&[0.3, 0.1, 0.2], Better::Higher), vec![1.0, 3.0, 2.0]);
        assert_eq!(
            ranks(&[1.0, 2.0, 1.0, 3.0], Better::Lower),
            vec![1.5, 3.0, 1.5, 4.0]
        );
        // ranks sum to k(k+1)/2
        let r = ranks(&[5.0, 5.0, 5.0, 1.0, 9.0], Better::Lower);
        assert_eq!(r.iter().sum::<f64>(), 15.0);
    }

    #[test]
    fn sign_test_matches_the_binomial_and_holm_steps_down() {
        // 8 wins, 2 losses: P[X ≤ 2] = (1 + 10 + 45)/1024, two-sided 112/1024
        assert!((sign_test_p(8, 2) - 112.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test_p(2, 8) - 112.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test_p(5, 5), 1.0);
        assert_eq!(sign_test_p(0, 0), 1.0);
        // 20 of 20: 2 / 2^20
        assert!((sign_test_p(20, 0) - 2.0 / 1_048_576.0).abs() < 1e-15);
        // large n stays finite and symmetric
        let p = sign_test_p(600, 400);
        assert!(p > 0.0 && p < 1e-9, "{p}");
        // Holm: 0.01 ≤ 0.05/3, 0.02 ≤ 0.05/2, 0.04 ≤ 0.05/1 all reject; 0.03 after a non-rejection does not
        assert_eq!(
            holm_reject(&[0.04, 0.01, 0.02], 0.05),
            vec![true, true, true]
        );
        assert_eq!(
            holm_reject(&[0.01, 0.03, 0.2], 0.05),
            vec![true, false, false]
        );
    }

    /// A `where` on a parameter that is neither a row nor the column picks the shown value: with
    /// `where = { m = [4] }` every cell shows the m = 4 summary, not the first one of its row and column.
    #[test]
    fn table_where_on_another_parameter_selects_the_shown_cells() {
        use crate::config::Value;
        let layout = Layout {
            params: vec!["method".into(), "data".into(), "m".into(), "seed".into()],
            metrics: vec!["acc".into()],
            items: vec![],
            timings: vec![],
            nan_metrics: vec![],
        };
        let mut summaries = Vec::new();
        for method in ["a", "b"] {
            for data in ["x", "y"] {
                for m in [2i64, 4] {
                    let v = if m == 4 { 0.9 } else { 0.1 };
                    summaries.push(Summary {
                        params: vec![
                            ("method".into(), Value::Str(method.into())),
                            ("data".into(), Value::Str(data.into())),
                            ("m".into(), Value::Int(m)),
                        ],
                        n: 1,
                        mean: vec![v],
                        std: vec![0.0],
                        timing_mean: vec![],
                        note: String::new(),
                    });
                }
            }
        }
        let t = TableSpec {
            caption: String::new(),
            rows: vec!["method".into()],
            columns: "data".into(),
            column_values: None,
            value: "acc".into(),
            format: NumFormat::Fixed(1),
            show_paper: false,
            filter: vec![("m".into(), vec![Value::Int(4)])],
        };
        let md = table_markdown(&t, &layout, &summaries, &[]);
        assert!(md.contains("| a | 0.9 | 0.9 |"), "{md}");
        assert!(md.contains("| b | 0.9 | 0.9 |"), "{md}");
        assert!(!md.contains("0.1"), "{md}");
    }

    #[test]
    fn rank_table_ranks_within_blocks_and_tests_against_the_first() {
        use crate::config::Value;
        let layout = Layout {
            params: vec!["kernel".into(), "method".into(), "seed".into()],
            metrics: vec!["err".into()],
            items: vec![],
            timings: vec!["time_s".into()],
            nan_metrics: vec![],
        };
        // method a always best, b second, c third except one block; 12 blocks (seeds)
        let mut rows = Vec::new();
        for seed in 0..12 {
            for (m, e) in [
                ("a", 0.1),
                ("b", 0.2),
                ("c", if seed == 0 { 0.15 } else { 0.3 }),
            ] {
                rows.push(Row(vec![
                    "g".into(),
                    m.into(),
                    seed.to_string(),
                    e.to_string(),
                    String::new(),
                    "1".into(),
                    String::new(),
                    String::new(),
                ]));
            }
        }
        let t = RankTableSpec {
            caption: String::new(),
            rows: vec!["kernel".into()],
            by: "method".into(),
            metric: "err".into(),
            better: Better::Lower,
            alpha: 0.05,
            filter: vec![("kernel".into(), vec![Value::Str("g".into())])],
        };
        let md = rank_table_markdown(&t, &layout, &rows);
        assert!(md.contains("| g | 12 | a 1.0, b 2.1, c 2.9 | a |"), "{md}");
        assert!(
            md.contains("- **g**: a ranks first (mean rank 1.0 of 3 over 12 blocks); every other value is significantly behind it (2 of 2)."),
            "{md}"
        );
    }

    #[test]
    fn pareto_front_keeps_the_non_dominated_points_cheapest_first() {
        // (cost, error): a is cheap and bad, b dominates c, d is expensive and best, e ties b exactly
        let pts = [(1.0, 0.5), (2.0, 0.2), (3.0, 0.3), (10.0, 0.05), (2.0, 0.2)];
        // b and e are equal: neither beats the other strictly, both stay
        assert_eq!(pareto_front(&pts, Better::Lower), vec![0, 1, 4, 3]);
        // higher is better: the front flips to the cheapest point with the highest value
        let acc = [(1.0, 0.9), (2.0, 0.95), (3.0, 0.92)];
        assert_eq!(pareto_front(&acc, Better::Higher), vec![0, 1]);
        // brute force: a front point is never dominated, a dropped point always is
        let mut x = 7u64;
        let pts: Vec<(f64, f64)> = (0..200)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((x >> 40) as f64 % 97.0, (x >> 20) as f64 % 89.0)
            })
            .collect();
        let front = pareto_front(&pts, Better::Lower);
        let dominated = |i: usize| {
            pts.iter()
                .any(|&(c, v)| c <= pts[i].0 && v <= pts[i].1 && (c < pts[i].0 || v < pts[i].1))
        };
        for i in 0..pts.len() {
            assert_eq!(front.contains(&i), !dominated(i), "point {i}");
        }
    }
}
