//! Tidy results: `cells.csv` rows and their `summary.csv` (mean and standard deviation over seeds).
//!
//! A row of `cells.csv` holds the cell's parameters, its metrics, its per-item outcomes (for kinds that
//! declare item columns, [`crate::kind::Runner::items`]: one `0`/`1` character per test item, e.g. whether
//! each test image was classified correctly), a note (why a cell was skipped), its timings, and last the
//! provenance columns `commit` (the short hash of the commit whose code computed the cell, with `+dirty`
//! when the working tree had uncommitted source changes; empty for cells computed before provenance was
//! recorded), `load` and `cpu` (the machine kind, numeric kernels and CPU model: [`Row::cpu`]). Files
//! written before the `commit`, `load` or `cpu` column existed are read as having empty ones.

use crate::config::Value;
use crate::spec::Spec;

/// The name of the provenance column, the last of `cells.csv`.
pub const COMMIT_COLUMN: &str = "commit";

/// The provenance column with the machine's load around the cell: `start/end/cpus/threads` (see [`Row::load`]).
pub const LOAD_COLUMN: &str = "load";

/// The provenance column naming the machine a cell ran on: `kind/kernels/model` (see [`Row::cpu`]).
pub const CPU_COLUMN: &str = "cpu";

/// The load field for a cell starting or ending now: the 1-minute load average (`/proc/loadavg`; empty where
/// there is none) and the CPUs available to this process.
pub fn load_now() -> Option<(f64, usize)> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load: f64 = text.split_whitespace().next()?.parse().ok()?;
    let cpus = std::thread::available_parallelism().ok()?.get();
    Some((load, cpus))
}

/// Formats the load field from the readings at a cell's start and end and the run's worker threads (the
/// load the run itself puts on the machine: its cells run on a pool of that many threads).
pub fn load_field(
    start: Option<(f64, usize)>,
    end: Option<(f64, usize)>,
    threads: usize,
) -> String {
    match (start, end) {
        (Some((a, n)), Some((b, _))) => format!("{a:.2}/{b:.2}/{n}/{threads}"),
        _ => String::new(),
    }
}

/// The column layout of `cells.csv`: parameters, then metrics, then item columns, then `note`, then
/// timings, then `commit`, `load` and `cpu`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Sweep parameter names.
    pub params: Vec<String>,
    /// Metric names.
    pub metrics: Vec<String>,
    /// Item column names ([`crate::kind::Runner::items`]; none for most kinds).
    pub items: Vec<String>,
    /// Timing names, `time_s` first.
    pub timings: Vec<String>,
    /// The metrics the kind records as NaN where they do not apply to a cell
    /// ([`crate::kind::Runner::nan_metrics`]); every other metric of a computed cell is finite.
    pub nan_metrics: Vec<String>,
}

impl Layout {
    /// The layout of a spec.
    pub fn of(spec: &Spec) -> Layout {
        let mut timings = vec!["time_s".to_string()];
        timings.extend(spec.runner.timings());
        Layout {
            params: spec.sweep.iter().map(|a| a.name.clone()).collect(),
            metrics: spec.runner.metrics(),
            items: spec.runner.items(),
            timings,
            nan_metrics: spec.runner.nan_metrics(),
        }
    }

    /// The CSV header.
    pub fn header(&self) -> Vec<String> {
        let mut h = self.load_header();
        h.push(CPU_COLUMN.into());
        h
    }

    /// The header of files written before the `cpu` column existed.
    fn load_header(&self) -> Vec<String> {
        let mut h = self.commit_header();
        h.push(LOAD_COLUMN.into());
        h
    }

    /// The header of files written before the `load` column existed.
    fn commit_header(&self) -> Vec<String> {
        let mut h = self.legacy_header();
        h.push(COMMIT_COLUMN.into());
        h
    }

    /// The header of files written before the `commit` column existed.
    fn legacy_header(&self) -> Vec<String> {
        let mut h = self.params.clone();
        h.extend(self.metrics.iter().cloned());
        h.extend(self.items.iter().cloned());
        h.push("note".into());
        h.extend(self.timings.iter().cloned());
        h
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.note_index() + 1 + self.timings.len() + 3
    }

    /// The index of the first item column (after the parameters and metrics).
    pub fn items_index(&self) -> usize {
        self.params.len() + self.metrics.len()
    }

    /// The index of the `note` column (after the parameters, metrics and item columns).
    pub fn note_index(&self) -> usize {
        self.items_index() + self.items.len()
    }

    /// The index of `time_s`, the first timing column.
    pub fn time_index(&self) -> usize {
        self.note_index() + 1
    }

    /// The rows of a `cells.csv` whose header matches this layout (a file without the `commit`, `load` or
    /// `cpu` column, or without the item columns, gets empty ones), and why each dropped line was dropped (cut off by a kill, not UTF-8, a metric or
    /// time that is not a number, a second row of one cell); `None` when the columns differ or the header
    /// cannot be read.
    pub fn read(&self, bytes: &[u8]) -> Option<(Vec<Row>, Vec<String>)> {
        let parsed = parse_cells(bytes);
        let header = parsed.header?;
        let mut rows = parsed.rows;
        // Files written before the item columns existed lack them; those before `commit`/`load`/`cpu` lack the
        // tail.
        let without_items = Layout {
            items: Vec::new(),
            ..self.clone()
        };
        let (missing, add_items) =
            [self, &without_items]
                .into_iter()
                .enumerate()
                .find_map(|(i, l)| {
                    let missing = if header == l.header() {
                        0
                    } else if header == l.load_header() {
                        1
                    } else if header == l.commit_header() {
                        2
                    } else if header == l.legacy_header() {
                        3
                    } else {
                        return None;
                    };
                    Some((missing, i == 1 && !self.items.is_empty()))
                })?;
        let at = self.items_index();
        for (r, _) in &mut rows {
            if add_items {
                r.0.splice(at..at, std::iter::repeat_n(String::new(), self.items.len()));
            }
            r.0.extend(std::iter::repeat_n(String::new(), missing));
        }
        let mut dropped = parsed.dropped;
        let mut keys = std::collections::HashSet::new();
        let mut kept = Vec::with_capacity(rows.len());
        for (row, line) in rows {
            if let Some(why) = self.damage(&row) {
                dropped.push(format!("line {line}: {why}"));
            } else if !keys.insert(row.key(self)) {
                dropped.push(format!(
                    "line {line}: a second row of cell {}",
                    row.key(self)
                ));
            } else {
                kept.push(row);
            }
        }
        Some((kept, dropped))
    }

    /// Whether `v` may stand in metric `name` of a computed cell: finite, or NaN where the kind records it
    /// ([`Layout::nan_metrics`]).
    pub fn allows(&self, name: &str, v: f64) -> bool {
        v.is_finite() || v.is_nan() && self.nan_metrics.iter().any(|m| m == name)
    }

    /// Why a non-finite metric is damage: the allowed values.
    fn non_finite(&self, name: &str, field: &str) -> String {
        let shown: String = field.chars().take(40).collect();
        if self.nan_metrics.iter().any(|m| m == name) {
            format!("metric `{name}` is {shown:?}; allowed: a finite number, or NaN where it does not apply")
        } else {
            format!("metric `{name}` is {shown:?}; allowed: a finite number (the kind records no NaN or infinity in it)")
        }
    }

    /// The first metric of the rows of the `cells.csv` bytes that is not finite where the kind records no
    /// such value (`line 3, column 2: metric `mean` is "NaN"; allowed: …`), for the readers that present
    /// cells (`rfx plot`, `rfx report`): they refuse such a file, where a run drops the row
    /// ([`Layout::read`]) and recomputes the cell.
    pub fn first_non_finite(&self, bytes: &[u8]) -> Option<String> {
        let start = self.params.len();
        parse_cells(bytes).rows.iter().find_map(|(row, line)| {
            self.metrics
                .iter()
                .zip(&row.0[start..])
                .enumerate()
                .find_map(|(j, (name, field))| {
                    let v = field.parse::<f64>().ok()?;
                    (!self.allows(name, v)).then(|| {
                        format!(
                            "line {line}, column {}: {}",
                            start + j + 1,
                            self.non_finite(name, field)
                        )
                    })
                })
        })
    }

    /// What is wrong with a row of the right width, if anything: a metric that is neither a number nor
    /// empty with a note (a skipped cell), or not finite where the kind records no NaN
    /// ([`Layout::nan_metrics`]; infinity never), an item field with a character other than `0` and `1`, or a time
    /// that is not a number.
    fn damage(&self, row: &Row) -> Option<String> {
        let skipped = !row.note(self).is_empty();
        let start = self.params.len();
        for (name, field) in self.metrics.iter().zip(&row.0[start..]) {
            match field.parse::<f64>() {
                Ok(v) if !self.allows(name, v) => {
                    return Some(self.non_finite(name, field));
                }
                Ok(_) => {}
                Err(_) if skipped && field.is_empty() => {}
                Err(_) => return Some(format!("metric `{name}` is {field:?}, not a number")),
            }
        }
        for (name, field) in self.items.iter().zip(&row.0[self.items_index()..]) {
            if let Some(c) = field.chars().find(|c| !matches!(c, '0' | '1')) {
                return Some(format!(
                    "item column `{name}` holds {c:?}; allowed: the characters 0 and 1"
                ));
            }
        }
        let start = self.time_index();
        for (name, field) in self.timings.iter().zip(&row.0[start..]) {
            if field.parse::<f64>().is_err() {
                return Some(format!("`{name}` is {field:?}, not a number"));
            }
        }
        None
    }
}

/// One row of `cells.csv`, as text fields in [`Layout::header`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<String>);

impl Row {
    /// The cell key (parameter fields joined), used to match rows with cells.
    pub fn key(&self, layout: &Layout) -> String {
        layout
            .params
            .iter()
            .zip(&self.0)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// Metric values (NaN where the cell was skipped).
    pub fn metrics(&self, layout: &Layout) -> Vec<f64> {
        let start = layout.params.len();
        self.0[start..start + layout.metrics.len()]
            .iter()
            .map(|s| s.parse().unwrap_or(f64::NAN))
            .collect()
    }

    /// The per-item outcomes of item column `j` ([`Layout::items`]): `true` for `1`; empty for a skipped
    /// cell.
    pub fn items(&self, layout: &Layout, j: usize) -> Vec<bool> {
        self.0[layout.items_index() + j]
            .chars()
            .map(|c| c == '1')
            .collect()
    }

    /// The note (empty for a computed cell).
    pub fn note<'a>(&'a self, layout: &Layout) -> &'a str {
        &self.0[layout.note_index()]
    }

    /// Timing values.
    pub fn timings(&self, layout: &Layout) -> Vec<f64> {
        let start = layout.time_index();
        self.0[start..start + layout.timings.len()]
            .iter()
            .map(|s| s.parse().unwrap_or(f64::NAN))
            .collect()
    }

    /// The cell's wall time `time_s` (NaN when unreadable).
    pub fn time_s(&self, layout: &Layout) -> f64 {
        self.0[layout.time_index()].parse().unwrap_or(f64::NAN)
    }

    /// The provenance field: the commit that computed the cell (empty when not recorded).
    pub fn commit<'a>(&'a self, layout: &Layout) -> &'a str {
        self.0.get(layout.width() - 3).map_or("", String::as_str)
    }

    /// The load field: `start/end/cpus/threads` (1-minute load average at the cell's start and end, CPUs
    /// available, the run's worker threads); `start/end/cpus` in cells computed before the threads were
    /// recorded; empty when not recorded.
    pub fn load<'a>(&'a self, layout: &Layout) -> &'a str {
        self.0.get(layout.width() - 2).map_or("", String::as_str)
    }

    /// The machine field: `kind/kernels/model` — the machine kind by the widest vector extension the numeric
    /// kernels dispatch on (`AVX-512`, `AVX2`, …), the BLAS kernels the run used (OpenBLAS's core name, e.g.
    /// `Haswell`, `Prescott`) and the CPU model ([`crate::run::cpu_field`]); empty for cells computed before
    /// it was recorded. Cell times, and sometimes the last bits of results, depend on it.
    pub fn cpu<'a>(&'a self, layout: &Layout) -> &'a str {
        self.0.get(layout.width() - 1).map_or("", String::as_str)
    }

    /// The machine kind of [`Row::cpu`] (`AVX-512`, `AVX2`, …); empty when not recorded.
    pub fn machine_kind<'a>(&'a self, layout: &Layout) -> &'a str {
        self.cpu(layout).split('/').next().unwrap_or("")
    }

    /// Whether the cell was timed on a quiet machine; `None` when the load was not recorded.
    ///
    /// A run of $t$ worker threads on $c$ CPUs keeps the load average near $t$ by itself, so what other
    /// processes add is $\ell - t$. The cell is quiet when that stays below the CPUs the run leaves idle, and
    /// below one busy process when it leaves none: $\ell < \max(c,\ t + 1)$ at the cell's start and at its end.
    /// Without a recorded $t$ (older cells) the bound is $c$, which a run using every CPU cannot meet.
    pub fn quiet(&self, layout: &Layout) -> Option<bool> {
        let f: Vec<f64> = self
            .load(layout)
            .split('/')
            .map(|x| x.parse::<f64>())
            .collect::<Result<_, _>>()
            .ok()?;
        let (start, end, bound) = match f.as_slice() {
            [start, end, cpus] => (*start, *end, *cpus),
            [start, end, cpus, threads] => (*start, *end, cpus.max(threads + 1.0)),
            _ => return None,
        };
        Some(start < bound && end < bound)
    }
}

/// The commits the cells of `rows` were computed at, most cells first, as `(commit, count)`; the empty
/// commit stands for cells computed before provenance was recorded.
pub fn commits(layout: &Layout, rows: &[Row]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in rows {
        let c = r.commit(layout);
        match counts.iter_mut().find(|(k, _)| k == c) {
            Some((_, n)) => *n += 1,
            None => counts.push((c.to_string(), 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

/// One sentence on where the cells come from: `All 160 cells computed at commit abc1234.`, or the split
/// over several commits.
pub fn provenance_sentence(layout: &Layout, rows: &[Row]) -> String {
    let counts = commits(layout, rows);
    let name = |c: &str| {
        if c.is_empty() {
            "before per-cell provenance was recorded".to_string()
        } else {
            format!("at commit {c}")
        }
    };
    match counts.as_slice() {
        [] => String::new(),
        [(c, n)] => format!("All {n} cells computed {}.", name(c)),
        many => format!(
            "Cells computed {}.",
            many.iter()
                .map(|(c, n)| format!("{n} {}", name(c)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The machine of a `cpu` field ([`Row::cpu`]) as reports name it: `AVX-512 (Prescott kernels)`, the kind
/// alone when no kernels were reported (`-`), empty when the field is (not recorded).
pub fn machine_name(cpu: &str) -> String {
    let mut parts = cpu.splitn(3, '/');
    match (parts.next().unwrap_or(""), parts.next()) {
        ("", _) => String::new(),
        (k, Some(kernels)) if kernels != "-" => format!("{k} ({kernels} kernels)"),
        (k, _) => k.to_string(),
    }
}

/// One sentence on the machines the cells ran on, by machine kind and numeric kernels ([`Row::cpu`]):
/// `Machines: 120 cells on AVX-512 (Prescott kernels), 40 on AVX2 (Zen kernels).`, with the cells computed
/// before the `cpu` column counted as not recorded. Cell times compare within one kind only.
pub fn machines_sentence(layout: &Layout, rows: &[Row]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in rows {
        let name = machine_name(r.cpu(layout));
        match counts.iter_mut().find(|(k, _)| *k == name) {
            Some((_, n)) => *n += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.sort_by(|a, b| {
        a.0.is_empty()
            .cmp(&b.0.is_empty())
            .then(b.1.cmp(&a.1))
            .then_with(|| a.0.cmp(&b.0))
    });
    let parts: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(i, (name, n))| {
            let cells = if i == 0 { " cells" } else { "" };
            if name.is_empty() {
                format!("{n}{cells} not recorded")
            } else {
                format!("{n}{cells} on {name}")
            }
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("Machines: {}.", parts.join(", "))
    }
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

/// Formats one CSV record (with quoting where needed), newline-terminated.
pub fn csv_line(fields: &[String]) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    w.write_record(fields).expect("csv to memory");
    String::from_utf8(w.into_inner().expect("csv flush")).expect("utf8 csv")
}

/// A whole `cells.csv` (or shard file): the layout's header, then `rows` in the order given.
pub fn cells_file_text(layout: &Layout, rows: &[Row]) -> String {
    let mut text = csv_line(&layout.header());
    for r in rows {
        text.push_str(&csv_line(&r.0));
    }
    text
}

/// Sorts `rows` into sweep order (`order`: cell key → index in the sweep), stably; rows of cells no longer in
/// the sweep go last, in the order they had.
pub fn sort_in_sweep_order(
    rows: &mut [Row],
    layout: &Layout,
    order: &std::collections::HashMap<String, usize>,
) {
    rows.sort_by_key(|r| order.get(&r.key(layout)).copied().unwrap_or(usize::MAX));
}

/// A `cells.csv` as read by [`parse_cells`].
#[derive(Debug, Clone, Default)]
pub struct CellsFile {
    /// The header (`None` for an empty file or one whose first line is not UTF-8: see `damaged_header`).
    pub header: Option<Vec<String>>,
    /// Why the header could not be read, when the file has one that is damaged.
    pub damaged_header: Option<String>,
    /// Rows with as many fields as the header, each with its 1-based line number.
    pub rows: Vec<(Row, u64)>,
    /// Why each dropped line was dropped (`line 7: ...`).
    pub dropped: Vec<String>,
}

/// Parses the bytes of a `cells.csv`: the header and the rows with its number of fields. A line with
/// another number of fields (a write cut off by a kill) or with bytes that are not UTF-8 is dropped, and
/// only that line; so is a last line without its newline, whose last number may be cut.
pub fn parse_cells(bytes: &[u8]) -> CellsFile {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut out = CellsFile::default();
    let mut first = true;
    let mut last_is_row = false;
    for rec in rdr.byte_records() {
        last_is_row = false;
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                if first {
                    out.damaged_header = Some(format!("line {line}: {e}"));
                    return out;
                }
                out.dropped.push(format!("line {line}: {e}"));
                continue;
            }
        };
        let line = rec.position().map_or(0, |p| p.line());
        let fields: Result<Vec<String>, _> = rec
            .iter()
            .map(|f| std::str::from_utf8(f).map(str::to_string))
            .collect();
        let Ok(fields) = fields else {
            if first {
                out.damaged_header = Some(format!("line {line}: not UTF-8"));
                return out;
            }
            out.dropped.push(format!("line {line}: not UTF-8"));
            continue;
        };
        if first {
            first = false;
            out.header = Some(fields);
            continue;
        }
        let width = out.header.as_ref().map_or(0, Vec::len);
        if fields.len() == width {
            out.rows.push((Row(fields), line));
            last_is_row = true;
        } else {
            out.dropped.push(format!(
                "line {line}: {} fields, expected {width}",
                fields.len()
            ));
        }
    }
    // A final line without its newline was cut off mid-write: the fields may look complete but the last
    // number may be truncated, so it is dropped too (unless it was already dropped for its field count).
    if !bytes.is_empty() && !bytes.ends_with(b"\n") && last_is_row {
        if let Some((_, line)) = out.rows.pop() {
            out.dropped
                .push(format!("line {line}: cut off (no newline at the end)"));
        }
    }
    out
}

/// One group of cells that differ only in `seed`: means and sample standard deviations.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Parameter values (without `seed`).
    pub params: Vec<(String, Value)>,
    /// Number of seeds with metrics.
    pub n: usize,
    /// Mean of each metric (NaN when no seed has it).
    pub mean: Vec<f64>,
    /// Sample standard deviation (0 for one seed).
    pub std: Vec<f64>,
    /// Mean of each timing.
    pub timing_mean: Vec<f64>,
    /// Notes of skipped cells (e.g. above the memory cap).
    pub note: String,
}

impl Summary {
    /// The value of parameter `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// Groups the rows of the current sweep by all parameters but `seed`, in sweep order.
pub fn summarize(spec: &Spec, layout: &Layout, rows: &[Row]) -> Vec<Summary> {
    let by_key: std::collections::HashMap<String, &Row> =
        rows.iter().map(|r| (r.key(layout), r)).collect();
    type Params = Vec<(String, Value)>;
    let mut groups: Vec<(Params, Vec<&Row>)> = Vec::new();
    for cell in spec.cells() {
        let Some(row) = by_key.get(&cell.key()) else {
            continue;
        };
        let params: Vec<(String, Value)> = cell
            .params
            .iter()
            .filter(|(k, _)| k != "seed")
            .cloned()
            .collect();
        match groups.iter_mut().find(|(p, _)| *p == params) {
            Some((_, members)) => members.push(row),
            None => groups.push((params, vec![row])),
        }
    }
    groups
        .into_iter()
        .map(|(params, members)| {
            let nm = layout.metrics.len();
            let mut mean = vec![f64::NAN; nm];
            let mut std = vec![f64::NAN; nm];
            let ok: Vec<Vec<f64>> = members
                .iter()
                .filter(|r| r.note(layout).is_empty())
                .map(|r| r.metrics(layout))
                .collect();
            for j in 0..nm {
                let vals: Vec<f64> = ok.iter().map(|m| m[j]).collect();
                let (m, s) = mean_std(&vals);
                mean[j] = m;
                std[j] = s;
            }
            let timing_mean = (0..layout.timings.len())
                .map(|j| {
                    mean_std(
                        &members
                            .iter()
                            .map(|r| r.timings(layout)[j])
                            .collect::<Vec<_>>(),
                    )
                    .0
                })
                .collect();
            let mut notes: Vec<&str> = members
                .iter()
                .map(|r| r.note(layout))
                .filter(|n| !n.is_empty())
                .collect();
            notes.dedup();
            Summary {
                params,
                n: ok.len(),
                mean,
                std,
                timing_mean,
                note: notes.join("; "),
            }
        })
        .collect()
}

/// Mean and sample standard deviation (n − 1 in the denominator; 0 for a single value; NaN for none).
pub fn mean_std(vals: &[f64]) -> (f64, f64) {
    if vals.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<f64>() / n;
    if vals.len() == 1 {
        return (mean, 0.0);
    }
    let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The text of `summary.csv`.
pub fn summary_csv(layout: &Layout, summaries: &[Summary]) -> String {
    let mut header: Vec<String> = layout
        .params
        .iter()
        .filter(|p| *p != "seed")
        .cloned()
        .collect();
    header.push("n".into());
    for m in &layout.metrics {
        header.push(format!("{m}_mean"));
        header.push(format!("{m}_std"));
    }
    for t in &layout.timings {
        header.push(format!("{t}_mean"));
    }
    header.push("note".into());
    let mut out = csv_line(&header);
    for s in summaries {
        let mut f: Vec<String> = s.params.iter().map(|(_, v)| v.to_string()).collect();
        f.push(s.n.to_string());
        for (m, sd) in s.mean.iter().zip(&s.std) {
            f.push(m.to_string());
            f.push(sd.to_string());
        }
        f.extend(s.timing_mean.iter().map(|t| t.to_string()));
        f.push(s.note.clone());
        out.push_str(&csv_line(&f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(text: &[u8]) -> (usize, usize) {
        let p = parse_cells(text);
        (p.rows.len(), p.dropped.len())
    }

    #[test]
    fn partial_last_line_is_dropped() {
        let p = parse_cells(b"a,b\n1,2\n3,4\n5,");
        assert_eq!(p.header.unwrap(), vec!["a", "b"]);
        assert_eq!((p.rows.len(), p.dropped.len()), (2, 1));
        // A cut-off line that happens to have the right number of fields is dropped too.
        assert_eq!(counts(b"a,b\n1,2\n3,4"), (1, 1));
        // One cut off with fewer fields is dropped once, and the complete row before it is kept.
        assert_eq!(counts(b"a,b\n1,2\n3,4\n5"), (2, 1));
    }

    #[test]
    fn a_cut_drops_only_the_cut_line_wherever_it_falls() {
        let complete = "a,b,note,c\n1,2,\"x, y\",3\n4,5,,6\n";
        let last = "7,8,\"long, note\",9\n";
        for cut in 0..last.len() {
            let text = format!("{complete}{}", &last[..cut]);
            let (rows, dropped) = counts(text.as_bytes());
            assert_eq!(rows, 2, "cut at {cut}: {text:?}");
            assert_eq!(dropped, usize::from(cut > 0), "cut at {cut}: {text:?}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_drop_their_line_only() {
        let p = parse_cells(b"a,b\n1,2\n3,\xff\n5,6\n");
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.dropped, vec!["line 3: not UTF-8".to_string()]);
        // a kill in the middle of a multi-byte character (é = c3 a9) of the last line
        let p = parse_cells(b"a,b\n1,2\n3,caf\xc3");
        assert_eq!((p.rows.len(), p.dropped.len()), (1, 1));
        let p = parse_cells(b"a,\xfe\n1,2\n");
        assert!(p.header.is_none() && p.damaged_header.is_some());
        let p = parse_cells(b"");
        assert!(p.header.is_none() && p.damaged_header.is_none());
    }

    /// Issue 60: NaN and infinity typed into `cells.csv` were read as metrics and reached the summary and
    /// the plots. Only the metrics a kind declares ([`Layout::nan_metrics`]) may be NaN, and none infinite.
    #[test]
    fn non_finite_metrics_are_damage_unless_the_kind_records_them() {
        let layout = Layout {
            params: vec!["method".into(), "seed".into()],
            metrics: vec!["error".into(), "svm_acc".into()],
            items: vec![],
            timings: vec!["time_s".into()],
            nan_metrics: vec!["svm_acc".into()],
        };
        let head = "method,seed,error,svm_acc,note,time_s,commit,load,cpu\n";
        let ok = format!("{head}a,0,0.5,NaN,,1.5,abc,,\nb,0,,,too big,NaN,abc,,\n");
        let (rows, dropped) = layout.read(ok.as_bytes()).unwrap();
        assert_eq!((rows.len(), dropped.len()), (2, 0), "{dropped:?}");
        assert_eq!(layout.first_non_finite(ok.as_bytes()), None);
        let bad = format!(
            "{head}a,0,NaN,0.5,,1.5,abc,,\nb,0,0.5,inf,,1.5,abc,,\nc,0,0.5,-Infinity,,1,abc,,\n"
        );
        let (rows, dropped) = layout.read(bad.as_bytes()).unwrap();
        assert!(rows.is_empty());
        assert_eq!(dropped.len(), 3);
        assert!(
            dropped[0].starts_with("line 2: metric `error` is \"NaN\"; allowed: a finite number"),
            "{dropped:?}"
        );
        assert!(
            dropped[1].contains("or NaN where it does not apply"),
            "{dropped:?}"
        );
        assert_eq!(
            layout.first_non_finite(bad.as_bytes()).unwrap(),
            "line 2, column 3: metric `error` is \"NaN\"; allowed: a finite number (the kind records no NaN \
             or infinity in it)"
        );
    }

    #[test]
    fn item_columns_sit_before_the_note_and_older_files_read_without_them() {
        let layout = Layout {
            params: vec!["method".into(), "seed".into()],
            metrics: vec!["accuracy".into()],
            items: vec!["correct".into()],
            timings: vec!["time_s".into()],
            nan_metrics: vec![],
        };
        assert_eq!(
            layout.header(),
            ["method", "seed", "accuracy", "correct", "note", "time_s", "commit", "load", "cpu"]
        );
        let text = "method,seed,accuracy,correct,note,time_s,commit,load,cpu\n\
                    a,0,0.75,0111,,1.5,abc,0.10/0.20/2,AVX2/Zen/AMD EPYC (family 25 model 1)\n\
                    b,0,,,too big,0.1,abc,0.10/0.20/2,AVX2/Zen/x\n\
                    c,0,0.5,01x1,,1.0,abc,0.10/0.20/2,AVX2/Zen/x\n";
        let (rows, dropped) = layout.read(text.as_bytes()).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0].cpu(&layout),
            "AVX2/Zen/AMD EPYC (family 25 model 1)"
        );
        assert_eq!(rows[0].machine_kind(&layout), "AVX2");
        assert_eq!(rows[0].load(&layout), "0.10/0.20/2");
        assert_eq!(rows[0].items(&layout, 0), vec![false, true, true, true]);
        assert_eq!(rows[0].note(&layout), "");
        assert_eq!(rows[0].time_s(&layout), 1.5);
        assert_eq!(rows[0].quiet(&layout), Some(true));
        assert_eq!(rows[1].note(&layout), "too big");
        assert!(rows[1].items(&layout, 0).is_empty());
        assert_eq!(dropped.len(), 1);
        assert!(dropped[0].contains("`correct` holds 'x'"), "{dropped:?}");
        // A file from before the item column (and before `load`): read with empty ones, in place.
        let old = "method,seed,accuracy,note,time_s,commit\na,0,0.75,,1.5,abc\n";
        let (rows, dropped) = layout.read(old.as_bytes()).unwrap();
        assert!(dropped.is_empty());
        assert_eq!(rows[0].0.len(), layout.width());
        assert!(rows[0].items(&layout, 0).is_empty());
        assert_eq!(
            (rows[0].time_s(&layout), rows[0].commit(&layout)),
            (1.5, "abc")
        );
        assert_eq!(rows[0].quiet(&layout), None);
        assert_eq!(rows[0].machine_kind(&layout), "");
        // A file from before the `cpu` column: the load and commit where they were, an empty machine.
        let old = "method,seed,accuracy,correct,note,time_s,commit,load\na,0,0.75,01,,1.5,abc,0.1/0.2/2\n";
        let (rows, dropped) = layout.read(old.as_bytes()).unwrap();
        assert!(dropped.is_empty());
        assert_eq!(
            (
                rows[0].commit(&layout),
                rows[0].load(&layout),
                rows[0].cpu(&layout)
            ),
            ("abc", "0.1/0.2/2", "")
        );
    }

    #[test]
    fn quiet_allows_the_runs_own_threads_and_no_more() {
        let layout = Layout {
            params: vec!["seed".into()],
            metrics: vec!["m".into()],
            items: vec![],
            timings: vec!["time_s".into()],
            nan_metrics: vec![],
        };
        let quiet = |load: &str| {
            let text = format!("seed,m,note,time_s,commit,load\n0,1,,1,abc,{load}\n");
            layout.read(text.as_bytes()).unwrap().0[0].quiet(&layout)
        };
        // Two threads on two CPUs: the run's own load is about 2; one more busy process is not quiet.
        assert_eq!(quiet("2.10/2.40/2/2"), Some(true));
        assert_eq!(quiet("2.10/3.05/2/2"), Some(false));
        // One thread on two CPUs: the idle CPU may be partly used, not fully.
        assert_eq!(quiet("1.60/1.90/2/1"), Some(true));
        assert_eq!(quiet("1.60/2.00/2/1"), Some(false));
        // Older cells without the threads: below the CPU count.
        assert_eq!(quiet("1.90/1.95/2"), Some(true));
        assert_eq!(quiet("2.10/1.95/2"), Some(false));
        assert_eq!(quiet(""), None);
        assert_eq!(quiet("1/x/2"), None);
        // The field written for a run reads back with its threads.
        let f = load_field(Some((0.5, 8)), Some((0.7, 8)), 8);
        assert_eq!(f, "0.50/0.70/8/8");
        assert_eq!(quiet(&f), Some(true));
        assert_eq!(load_field(None, Some((0.7, 8)), 8), "");
    }

    #[test]
    fn mean_std_matches_definition() {
        let (m, s) = mean_std(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(mean_std(&[7.0]), (7.0, 0.0));
    }
}
