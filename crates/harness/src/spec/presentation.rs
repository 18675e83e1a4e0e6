//! What an experiment file says about presenting its cells: `[plot]`s, tables (`[table]`, best, rank,
//! front and score tables), guidance, `[[claim]]`s and `[[paper_value]]`s — their types and their readers,
//! each checked against the sweep ([`super::Spec`] holds the result). The sweep itself, and so what is
//! computed, is read in the parent module.

use super::{is_safe_name, literal, need_metric, need_param, need_value, Axis};
use crate::claims::Better;
use crate::claims::{ClaimSpec, ClaimTest, EqualBudget, FactorReading, GroupMode, Margin, Scale};
use crate::config::{ConfigError, Section, Value};

/// `[plot]`: one line chart per panel value, one curve per series value, mean ± std over seeds.
#[derive(Debug, Clone)]
pub struct PlotSpec {
    /// Figure title.
    pub title: String,
    /// The x axis: a numeric sweep parameter, or a metric of the kind (e.g. a feature dimension that the
    /// cell computes); see [`PlotSpec::x_is_metric`].
    pub x: String,
    /// Whether `x` names a metric (its mean over seeds is the abscissa) rather than a sweep parameter. Then
    /// at most one varying sweep parameter may be none of x, series and panels (e.g. a size exponent): its
    /// values give the points along each curve.
    pub x_is_metric: bool,
    /// Metric on the y axis (the first when several are given).
    pub y: String,
    /// Further metrics drawn on the same axes (`y = ["a", "b"]`): one curve per metric (and series value),
    /// labelled by the metric (through `[plot.labels]`).
    pub y_more: Vec<String>,
    /// Sweep parameter that distinguishes curves.
    pub series: Option<String>,
    /// Sweep parameters that distinguish panels (`panels = "a"` or `panels = ["a", "b"]`: one panel per
    /// combination, titled by the values joined with ", ").
    pub panels: Vec<String>,
    /// x axis label with units.
    pub x_label: String,
    /// y axis label with units.
    pub y_label: String,
    /// Log scale on x.
    pub log_x: bool,
    /// Log scale on y.
    pub log_y: bool,
    /// Draw $1 - \bar y$ instead of the mean $\bar y$ (`y_one_minus = true`; the error bars keep their
    /// length): an error rate from an accuracy, whose values near 1 a log scale can then tell apart.
    pub y_one_minus: bool,
    /// Display labels for parameter values (`[plot.labels]`).
    pub labels: Vec<(String, String)>,
    /// Where the legend goes in each panel: one of [`LEGEND_POSITIONS`] (`legend`, default `upper-right`).
    pub legend: String,
    /// Draw the legend only in this panel (`legend_panel`, 1-based in panel order; default: every panel),
    /// for panels whose curves leave no corner free.
    pub legend_panel: Option<usize>,
    /// One figure per value of this sweep parameter (`figures = "kernel"`): files `<name>-<value>.png` and
    /// `.svg`, each titled with the value's label, for sweeps whose panels would be too many for one figure.
    pub figures: Option<String>,
    /// Series values to draw again in a zoomed copy of each panel (`zoom = ["a", "b"]`), whose y range
    /// fits only them: for curves a claim compares that another series' range squeezes together.
    pub zoom: Vec<String>,
    /// The plot's own name (`name`, required for every `[[plot]]` after the first): its files are
    /// `<experiment>-<name>…` instead of `<experiment>…`.
    pub name: Option<String>,
    /// `where = { param = [values] }`: only the cells with these values are drawn (and, for the
    /// `figures` parameter, only these figures are written), as in the tables.
    pub filter: Vec<(String, Vec<Value>)>,
}

impl PlotSpec {
    /// The figures of experiment `name`, in sweep order: `(file stem, value of [`PlotSpec::figures`])`, or
    /// the one figure `(name, None)`.
    pub fn figure_files(&self, name: &str, sweep: &[Axis]) -> Vec<(String, Option<Value>)> {
        let name = match &self.name {
            Some(own) => format!("{name}-{own}"),
            None => name.to_string(),
        };
        let name = name.as_str();
        let Some(key) = &self.figures else {
            return vec![(name.to_string(), None)];
        };
        let kept = self.filter.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        sweep
            .iter()
            .filter(|a| &a.name == key)
            .flat_map(|a| a.values.iter())
            .filter(|v| kept.is_none_or(|k| listed(k, &v.to_string())))
            .map(|v| {
                let slug: String = v
                    .to_string()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                (short_stem(&format!("{name}-{slug}")), Some(v.clone()))
            })
            .collect()
    }
}

/// A file stem of at most 120 bytes (file systems allow 255, and `.tmp-<host>-<pid>.png` is added while it
/// is written): a longer ASCII stem keeps its first 100 bytes and a 16-hex-digit FNV-1a hash of the whole,
/// so that distinct long values still get distinct files.
fn short_stem(stem: &str) -> String {
    if stem.len() <= 120 || !stem.is_ascii() {
        return stem.to_string();
    }
    let hash = stem.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{hash:016x}", &stem[..100])
}

/// Allowed values of `[plot] legend`: a corner or edge of each panel, or `outside` (one legend for the whole
/// figure, in a column to the right of the panels).
pub const LEGEND_POSITIONS: [&str; 7] = [
    "upper-right",
    "upper-left",
    "upper-middle",
    "lower-right",
    "lower-left",
    "lower-middle",
    "outside",
];

impl PlotSpec {
    /// The display label of a parameter value.
    pub fn label(&self, value: &str) -> String {
        self.labels
            .iter()
            .find(|(k, _)| k == value)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| value.to_string())
    }
}

/// Number format of table cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumFormat {
    /// `1.23e-4` with this many significant digits.
    Sci(usize),
    /// `0.123` with this many decimals.
    Fixed(usize),
}

/// `[table]`: rows are combinations of `rows` parameters, columns the values of `columns`.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// Column parameter.
    pub columns: String,
    /// Only these column values (all when absent).
    pub column_values: Option<Vec<Value>>,
    /// Metric shown.
    pub value: String,
    /// Number format.
    pub format: NumFormat,
    /// Show the paper's number (a `[[paper_value]]` of the same metric whose cell matches the row and column)
    /// in brackets after ours (`show_paper`, default `false`).
    pub show_paper: bool,
    /// `where = { param = [values] }`: only the cells with these values.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// One column of a [`BestTableSpec`]: a metric on a subset of the cells.
#[derive(Debug, Clone)]
pub struct BestColumn {
    /// Column header.
    pub label: String,
    /// Metric compared.
    pub metric: String,
    /// Lower or higher is better.
    pub better: Better,
    /// Restrictions on parameters (e.g. the small feature counts).
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[best_table]]`: the best value of `by` per row and column, with a paired t-test across the remaining
/// parameters (seeds and the column's other values): the winners are the best method and every method not
/// significantly worse at level `alpha`; "-" when the winners are more than half of the methods (no
/// significant difference for most of them), as in the random-features survey's Table VII.
#[derive(Debug, Clone)]
pub struct BestTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The compared parameter (e.g. `method`).
    pub by: String,
    /// Two-sided significance level of the paired t-test.
    pub alpha: f64,
    /// Restrictions applied to every column.
    pub filter: Vec<(String, Vec<Value>)>,
    /// Columns in order.
    pub columns: Vec<BestColumn>,
    /// Whether to add, under the table, one generated sentence per column counting in how many rows each
    /// value of `by` is the best or not significantly worse (`tally = true`; default `false`).
    pub tally: bool,
}

/// `[[rank_table]]`: per row (a combination of the `rows` parameters, e.g. each kernel), the values of `by`
/// (e.g. the methods) ranked by `metric` within every block of the remaining sweep parameters (e.g. data set ×
/// budget × seed), ties sharing their mean rank, and ordered by mean rank; each is compared with the first by
/// an exact two-sided sign test over the blocks (in how many blocks it beats or loses to the first), with
/// Holm's correction at `alpha`. Values missing from more than a quarter of the row's blocks are left out
/// (and named); only blocks holding every remaining value are ranked. Scale-free, so blocks of different data
/// sets combine (Demšar 2006's mean ranks, with a sign test in place of Nemenyi's critical difference).
#[derive(Debug, Clone)]
pub struct RankTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The ranked parameter (e.g. `method`).
    pub by: String,
    /// The metric ranked.
    pub metric: String,
    /// Lower or higher is better.
    pub better: Better,
    /// Family-wise significance level of the sign tests against the first.
    pub alpha: f64,
    /// Restrictions applied to the cells.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[front_table]]`: per row (a combination of the `rows` parameters), the Pareto front of the points
/// (one per value of `by` and of `along`, e.g. method × budget) in the plane (mean `cost`, mean `metric`) over
/// the remaining parameters (seeds): the points no other point matches or beats in both (lower cost; lower
/// or higher metric as `better` says), cheapest first, and per value of `by` the number of rows whose front
/// it is on (a generated sentence per group of `rows[0]`). Means only: no test of significance.
#[derive(Debug, Clone)]
pub struct FrontTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// Row parameters.
    pub rows: Vec<String>,
    /// The parameter that names a point's owner (e.g. `method`).
    pub by: String,
    /// The parameter along which an owner has several points (e.g. `m`), if any.
    pub along: Option<String>,
    /// The cost metric (lower is better; e.g. time or bits).
    pub cost: String,
    /// The quality metric.
    pub metric: String,
    /// Lower or higher is better for `metric`.
    pub better: Better,
    /// Restrictions applied to the cells.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[guidance]]`: one "which method when" question, answered by generated sentences. Per row (a combination
/// of the `rows` parameters, e.g. each kernel) and per value of `along` (e.g. each budget `m`; one comparison
/// when absent), group A (the cells matching `a`, e.g. `{ method = ["nystrom"] }`) is represented by its member
/// (a combination of the values of `a`'s parameters) with the best mean `metric`, and compared with every
/// member of group B (the cells matching `b`; without `b`, every cell not in A) by an exact two-sided sign test
/// over the blocks (the combinations of the parameters named nowhere else — data set × seed), with Holm's
/// correction over all the row's tests. A *wins* where it is significantly better than every member of B,
/// *loses* where some member is significantly better than it, and otherwise shows *no significant
/// difference*; each verdict is printed with the blocks, the adjusted p-value and the means of `metric` and
/// of the `costs` metrics beside it. Declarative: the harness knows no method; the file names the groups.
#[derive(Debug, Clone)]
pub struct GuidanceSpec {
    /// The question, printed in bold above the answers (e.g. "Below which m does Nyström win?").
    pub question: String,
    /// Row parameters (one generated sentence per combination).
    pub rows: Vec<String>,
    /// The parameter along which the verdicts are given (e.g. `m`), if any.
    pub along: Option<String>,
    /// Group A: its filter (non-empty).
    pub a: Vec<(String, Vec<Value>)>,
    /// Group B: its filter, or `None` for every cell not in A (its members named by `a`'s parameters).
    pub b: Option<Vec<(String, Vec<Value>)>>,
    /// The compared metric.
    pub metric: String,
    /// Lower or higher is better for `metric`.
    pub better: Better,
    /// Metrics whose means are printed beside the verdicts (e.g. time, bits); not tested.
    pub costs: Vec<String>,
    /// Family-wise significance level (Holm over the row's tests).
    pub alpha: f64,
    /// Restrictions applied to every cell.
    pub filter: Vec<(String, Vec<Value>)>,
}

/// `[[score_table]]`: one row per value of `by` (e.g. `method`) summarising a metric across the values of
/// `over` (e.g. `dataset`), each cell's value being its mean over seeds — the NTK random features paper's
/// Table 1: the mean ± 95 % confidence half-width $1.96\thinspace s/\sqrt{k}$ over the $k$ data sets, P90 and P95 (the
/// percentage of data sets where the value reaches 90 % / 95 % of the best value of any `by` on that data
/// set) and PMA (the mean of 100·value/best). Only data sets where every `by` value has a result count.
#[derive(Debug, Clone)]
pub struct ScoreTableSpec {
    /// Caption above the table.
    pub caption: String,
    /// The compared parameter (rows).
    pub by: String,
    /// The parameter averaged over (data sets).
    pub over: String,
    /// The metric (higher is better).
    pub metric: String,
}

/// Where a [`PaperValue`] comes from (`source`): only [`PaperSource::Paper`] numbers are shown as the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperSource {
    /// Printed in the paper (a table, the text, or read off a figure: `ref` says which).
    Paper,
    /// From the authors' code or notebook output (`ref` names the repository, notebook or file).
    AuthorsCode,
    /// Computed by us or by an independent re-implementation (`how` says how).
    Derived,
}

/// The values of `[[paper_value]] source`, in the order of [`PaperSource`].
pub const PAPER_SOURCES: [&str; 3] = ["paper", "authors-code", "derived"];

impl PaperSource {
    /// The word of the TOML file.
    pub fn word(self) -> &'static str {
        match self {
            PaperSource::Paper => PAPER_SOURCES[0],
            PaperSource::AuthorsCode => PAPER_SOURCES[1],
            PaperSource::Derived => PAPER_SOURCES[2],
        }
    }
}

/// `[[paper_value]]`: a number to show beside ours (never used as ours), with where it comes from and whether
/// it was measured on our task.
///
/// Keys: `cell`, `metric`, `value`, `source` (one of [`PAPER_SOURCES`]), `ref` (required for `paper` — the
/// table, figure or section — and `authors-code` — the repository, notebook or file), `how` (required for
/// `derived`), `same_task` (required: the same data set and sizes n, m and test set as our cell) and
/// `differs` (required when `same_task = false`: why our task is not the one the number was measured on).
#[derive(Debug, Clone)]
pub struct PaperValue {
    /// The cell it corresponds to (a subset of sweep parameters; seeds are averaged).
    pub cell: Vec<(String, Value)>,
    /// The metric.
    pub metric: String,
    /// The reported value.
    pub value: f64,
    /// Where it comes from.
    pub source: PaperSource,
    /// `ref`: the table/figure/section of the paper, or the repository/notebook/file of the authors' code.
    pub reference: Option<String>,
    /// `how`: how a derived number was obtained.
    pub how: Option<String>,
    /// Whether the number was measured on our cell's task (data set, n, m, test set).
    pub same_task: bool,
    /// `differs`: why the task differs (present exactly when `same_task` is false).
    pub differs: Option<String>,
}

impl PaperValue {
    /// Where the number comes from, in words: the source with its `ref` and `how`.
    pub fn provenance(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.reference {
            parts.push(r.clone());
        }
        if let Some(h) = &self.how {
            parts.push(h.clone());
        }
        let what = match self.source {
            PaperSource::Paper => "paper",
            PaperSource::AuthorsCode => "authors' code",
            PaperSource::Derived => "derived",
        };
        if parts.is_empty() {
            what.to_string()
        } else {
            format!("{what}: {}", parts.join("; "))
        }
    }
}

fn read_plot(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<PlotSpec, ConfigError> {
    let x = s.req_str("x")?;
    let x_is_metric = !params.contains(&x) && metrics.contains(&x);
    if !x_is_metric && !params.contains(&x) {
        return Err(s.error(
            "x",
            format!(
                "\"{x}\" is neither a sweep parameter nor a metric; allowed: sweep parameters {}; metrics {}",
                params.join(", "),
                metrics.join(", ")
            ),
        ));
    }
    if let Some(a) = sweep.iter().find(|a| a.name == x) {
        if let Some(bad) = a.values.iter().find(|v| v.as_f64().is_none()) {
            return Err(s.error(
                "x",
                format!(
                    "the x axis needs numbers, but sweep.{x} has the value \"{bad}\"; use a numeric sweep parameter \
                     or a metric (a text parameter can be `series` or `panels`, or shown in a [table])"
                ),
            ));
        }
    }
    let ys: Vec<String> = match s.value("y").map(|v| v.get_ref()) {
        Some(toml::de::DeValue::Array(_)) => s.opt_str_list("y")?.unwrap_or_default(),
        _ => vec![s.req_str("y")?],
    };
    if ys.is_empty() {
        return Err(s.error("y", "expected a metric or a non-empty list of metrics"));
    }
    for y in &ys {
        need_metric(s, "y", y, metrics)?;
    }
    let y = ys[0].clone();
    let y_more = ys[1..].to_vec();
    let series = s.opt_str("series")?;
    if let Some(v) = &series {
        need_param(s, "series", v, params)?;
    }
    let panels: Vec<String> = match s.value("panels").map(|v| v.get_ref()) {
        None => Vec::new(),
        Some(toml::de::DeValue::Array(_)) => s.opt_str_list("panels")?.unwrap_or_default(),
        Some(_) => s.opt_str("panels")?.into_iter().collect(),
    };
    for v in &panels {
        need_param(s, "panels", v, params)?;
    }
    let figures = s.opt_str("figures")?;
    if let Some(v) = &figures {
        if *v == x || Some(v) == series.as_ref() || panels.contains(v) || v == "seed" {
            return Err(s.error(
                "figures",
                format!(
                    "`{v}` is already plot.x, plot.series, plot.panels or the seed; name another sweep parameter"
                ),
            ));
        }
        need_param(s, "figures", v, params)?;
    }
    let mut along: Option<&str> = None;
    for a in sweep {
        let used = a.name == x
            || Some(&a.name) == series.as_ref()
            || panels.contains(&a.name)
            || Some(&a.name) == figures.as_ref();
        if used || a.name == "seed" || a.values.len() < 2 {
            continue;
        }
        if x_is_metric && along.is_none() {
            along = Some(&a.name); // its values are the points along each curve
            continue;
        }
        let hint = if x_is_metric {
            format!(
                "with a metric on x only one varying parameter (here `{}`) may be left off plot.series and \
                 plot.panels",
                along.unwrap_or_default()
            )
        } else {
            "map it to one of them".to_string()
        };
        return Err(s.error(
            "x",
            format!(
                "sweep parameter `{}` has {} values but is none of plot.x, plot.series, plot.panels, \
                 plot.figures; {hint}",
                a.name,
                a.values.len()
            ),
        ));
    }
    let zoom = s.opt_str_list("zoom")?.unwrap_or_default();
    if !zoom.is_empty() {
        let Some(axis) = series
            .as_ref()
            .and_then(|name| sweep.iter().find(|a| &a.name == name))
        else {
            return Err(s.error("zoom", "zoom names series values: set plot.series first"));
        };
        for z in &zoom {
            if !axis.values.contains(&Value::Str(z.clone())) {
                let allowed: Vec<String> = axis.values.iter().map(literal).collect();
                return Err(s.error(
                    "zoom",
                    format!(
                        "{z:?} is not a value of sweep.{}; allowed: {}",
                        axis.name,
                        allowed.join(", ")
                    ),
                ));
            }
        }
    }
    let labels = match s.table("labels")? {
        Some(t) => {
            let mut out = Vec::new();
            for k in t.keys() {
                out.push((k.clone(), t.req_str(&k)?));
            }
            t.finish()?;
            out
        }
        None => Vec::new(),
    };
    let spec = PlotSpec {
        title: s.req_str("title")?,
        x_label: s.req_str("x_label")?,
        y_label: s.req_str("y_label")?,
        log_x: s.opt_bool("log_x")?.unwrap_or(false),
        log_y: s.opt_bool("log_y")?.unwrap_or(false),
        y_one_minus: s.opt_bool("y_one_minus")?.unwrap_or(false),
        legend: s
            .opt_choice("legend", &LEGEND_POSITIONS)?
            .unwrap_or_else(|| LEGEND_POSITIONS[0].to_string()),
        legend_panel: s.opt_int("legend_panel", 1, 64)?.map(|v| v as usize),
        x,
        x_is_metric,
        y,
        y_more,
        series,
        panels,
        labels,
        figures,
        zoom,
        filter: read_filter(s, "where", params, known)?,
        name: match s.opt_str("name")? {
            Some(n) if !is_safe_name(&n) => {
                return Err(s.error(
                    "name",
                    format!("\"{n}\" is not a file name part; allowed: lowercase letters, digits, '-' and '_'"),
                ))
            }
            n => n,
        },
    };
    s.finish()?;
    Ok(spec)
}

/// `[plot]` (one plot) or `[[plot]]` (several; every one after the first needs its own `name`, and names are
/// distinct, so that no two plots write the same files); none when absent.
pub(super) fn read_plots(
    root: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<Vec<PlotSpec>, ConfigError> {
    let is_array = matches!(
        root.value("plot").map(|v| v.get_ref()),
        Some(toml::de::DeValue::Array(_))
    );
    if !is_array {
        return Ok(match root.table("plot")? {
            Some(s) => vec![read_plot(&s, params, metrics, sweep, known)?],
            None => Vec::new(),
        });
    }
    let sections = root.tables("plot")?;
    let mut out: Vec<PlotSpec> = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        let p = read_plot(s, params, metrics, sweep, known)?;
        if i > 0 && p.name.is_none() {
            return Err(s.error(
                "name",
                "every [[plot]] after the first needs a name (its files are <experiment>-<name>.png)",
            ));
        }
        if out.iter().any(|q| q.name == p.name) {
            return Err(s.error(
                "name",
                "two plots with the same name would write the same files",
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// `[table]` (one table) or `[[table]]` (an array of tables); none when absent.
pub(super) fn read_tables(
    root: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<Vec<TableSpec>, ConfigError> {
    let is_array = matches!(
        root.value("table").map(|v| v.get_ref()),
        Some(toml::de::DeValue::Array(_))
    );
    if is_array {
        root.tables("table")?
            .iter()
            .map(|s| read_table(s, params, metrics, known))
            .collect()
    } else {
        Ok(match root.table("table")? {
            Some(s) => vec![read_table(&s, params, metrics, known)?],
            None => Vec::new(),
        })
    }
}

fn read_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<TableSpec, ConfigError> {
    let rows = s
        .opt_str_list("rows")?
        .ok_or_else(|| s.error("rows", "missing required key (a list of sweep parameters)"))?;
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let columns = s.req_str("columns")?;
    need_param(s, "columns", &columns, params)?;
    let value = s.req_str("value")?;
    need_metric(s, "value", &value, metrics)?;
    let column_values = match s.list("column_values")? {
        None => None,
        Some(items) => {
            for (v, span) in &items {
                need_value(s, "column_values", span.clone(), &columns, v, known)?;
            }
            Some(items.into_iter().map(|(v, _)| v).collect())
        }
    };
    let digits = s.opt_int("digits", 1, 12)?.unwrap_or(3) as usize;
    let format = match s.opt_choice("format", &["sci", "fixed"])?.as_deref() {
        Some("fixed") => NumFormat::Fixed(digits),
        _ => NumFormat::Sci(digits),
    };
    let spec = TableSpec {
        caption: s.opt_str("caption")?.unwrap_or_default(),
        rows,
        columns,
        column_values,
        value,
        format,
        show_paper: s.opt_bool("show_paper")?.unwrap_or(false),
        filter: read_filter(s, "where", params, known)?,
    };
    s.finish()?;
    Ok(spec)
}

/// Whether `v` (a value's text) is one of a filter's listed values, compared as written.
pub(crate) fn listed(vals: &[Value], v: &str) -> bool {
    vals.iter().any(|w| w.to_string() == v)
}

pub(crate) fn read_filter(
    s: &Section<'_, '_>,
    key: &str,
    params: &[String],
    known: &[Axis],
) -> Result<Vec<(String, Vec<Value>)>, ConfigError> {
    let Some(t) = s.table(key)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for k in t.keys() {
        need_param(&t, &k, &k, params)?;
        let items = t.list(&k)?.unwrap_or_default();
        for (v, span) in &items {
            need_value(&t, &k, span.clone(), &k, v, known)?;
        }
        let vals = items.into_iter().map(|(v, _)| v).collect();
        out.push((k, vals));
    }
    t.finish()?;
    Ok(out)
}

pub(super) fn read_best_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<BestTableSpec, ConfigError> {
    let rows = s
        .opt_str_list("rows")?
        .ok_or_else(|| s.error("rows", "missing required key (a list of sweep parameters)"))?;
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    let mut columns = Vec::new();
    for c in s.tables("column")? {
        let metric = c.req_str("metric")?;
        need_metric(&c, "metric", &metric, metrics)?;
        let better = match c.opt_choice("better", &["lower", "higher"])?.as_deref() {
            Some("higher") => Better::Higher,
            _ => Better::Lower,
        };
        columns.push(BestColumn {
            label: c.req_str("label")?,
            metric,
            better,
            filter: read_filter(&c, "where", params, known)?,
        });
        c.finish()?;
    }
    if columns.is_empty() {
        return Err(s.error(
            "column",
            "a best_table needs at least one [[best_table.column]] (label, metric, better, where)",
        ));
    }
    let caption = s.opt_str("caption")?.unwrap_or_default();
    let tally = s.opt_bool("tally")?.unwrap_or(false);
    s.finish()?;
    Ok(BestTableSpec {
        caption,
        rows,
        by,
        alpha,
        filter,
        columns,
        tally,
    })
}

pub(super) fn read_rank_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<RankTableSpec, ConfigError> {
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    if rows.contains(&by) {
        return Err(s.error(
            "by",
            format!("`{by}` is also one of rows; rank another parameter"),
        ));
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(RankTableSpec {
        caption,
        rows,
        by,
        metric,
        better,
        alpha,
        filter,
    })
}

pub(super) fn read_front_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<FrontTableSpec, ConfigError> {
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let along = s.opt_str("along")?;
    if let Some(a) = &along {
        need_param(s, "along", a, params)?;
    }
    let cost = s.req_str("cost")?;
    need_metric(s, "cost", &cost, metrics)?;
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let filter = read_filter(s, "where", params, known)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(FrontTableSpec {
        caption,
        rows,
        by,
        along,
        cost,
        metric,
        better,
        filter,
    })
}

pub(super) fn read_guidance(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<GuidanceSpec, ConfigError> {
    let question = s.req_str("question")?;
    let rows = s.opt_str_list("rows")?.unwrap_or_default();
    for r in &rows {
        need_param(s, "rows", r, params)?;
    }
    let along = s.opt_str("along")?;
    if let Some(a) = &along {
        need_param(s, "along", a, params)?;
        if rows.contains(a) {
            return Err(s.error("along", format!("`{a}` is also one of rows")));
        }
    }
    let a = read_filter(s, "a", params, known)?;
    if a.is_empty() {
        return Err(s.error(
            "a",
            "missing required key: group A's cells, e.g. a = { method = [\"nystrom\"] }",
        ));
    }
    let b = if s.has("b") {
        let b = read_filter(s, "b", params, known)?;
        if b.is_empty() {
            return Err(s.error(
                "b",
                "group B's filter is empty (leave b out for every cell not in A)",
            ));
        }
        Some(b)
    } else {
        None
    };
    for (k, _) in a.iter().chain(b.iter().flatten()) {
        if rows.contains(k) || along.as_ref() == Some(k) {
            return Err(s.error(
                "a",
                format!("the groups' parameter `{k}` is also in rows or along; filter those with `where`"),
            ));
        }
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let costs = s.opt_str_list("costs")?.unwrap_or_default();
    for c in &costs {
        need_metric(s, "costs", c, metrics)?;
    }
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let filter = read_filter(s, "where", params, known)?;
    s.finish()?;
    Ok(GuidanceSpec {
        question,
        rows,
        along,
        a,
        b,
        metric,
        better,
        costs,
        alpha,
        filter,
    })
}

pub(super) fn read_score_table(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
) -> Result<ScoreTableSpec, ConfigError> {
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let over = s.req_str("over")?;
    need_param(s, "over", &over, params)?;
    if over == by {
        return Err(s.error("over", "must differ from `by`"));
    }
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let caption = s.opt_str("caption")?.unwrap_or_default();
    s.finish()?;
    Ok(ScoreTableSpec {
        caption,
        by,
        over,
        metric,
    })
}

pub(super) fn read_paper_value(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    known: &[Axis],
) -> Result<PaperValue, ConfigError> {
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let value = s
        .opt_float("value", f64::MIN, f64::MAX)?
        .ok_or_else(|| s.error("value", "missing required key (a number)"))?;
    let source = match s.opt_str("source")?.as_deref() {
        Some("paper") => PaperSource::Paper,
        Some("authors-code") => PaperSource::AuthorsCode,
        Some("derived") => PaperSource::Derived,
        Some(other) => {
            return Err(s.error(
                "source",
                format!(
                    "unknown value \"{other}\"; allowed: {} (a free-text source, as files before issue 25 \
                     wrote it, goes to `ref`, with `same_task` added)",
                    PAPER_SOURCES.join(", ")
                ),
            ))
        }
        None => {
            return Err(s.error(
                "source",
                format!(
                    "missing required key; allowed: {} (the paper's text, table or figure; the authors' \
                     code or notebook; computed by us)",
                    PAPER_SOURCES.join(", ")
                ),
            ))
        }
    };
    let reference = s.opt_str("ref")?.filter(|r| !r.trim().is_empty());
    let how = s.opt_str("how")?.filter(|h| !h.trim().is_empty());
    match source {
        PaperSource::Paper if reference.is_none() => {
            return Err(s.error(
                "ref",
                "missing required key for source = \"paper\" (the table, figure or section, e.g. \"Table 1\" \
                 or \"read off Figure 3\")",
            ))
        }
        PaperSource::AuthorsCode if reference.is_none() => {
            return Err(s.error(
                "ref",
                "missing required key for source = \"authors-code\" (the repository, notebook or file)",
            ))
        }
        PaperSource::Derived if how.is_none() => {
            return Err(s.error(
                "how",
                "missing required key for source = \"derived\" (how the number was obtained)",
            ))
        }
        _ => {}
    }
    let same_task = s.opt_bool("same_task")?.ok_or_else(|| {
        s.error(
            "same_task",
            "missing required key (true or false: the same data set and sizes n, m and test set as our cell)",
        )
    })?;
    let differs = s.opt_str("differs")?.filter(|d| !d.trim().is_empty());
    if !same_task && differs.is_none() {
        return Err(s.error(
            "differs",
            "missing required key for same_task = false (why our task is not the one the number was measured on)",
        ));
    }
    if same_task && differs.is_some() {
        return Err(s.error(
            "differs",
            "given with same_task = true; say how the task differs only with same_task = false",
        ));
    }
    let cell = read_filter(s, "cell", params, known)?
        .into_iter()
        .map(|(k, mut v)| {
            if v.len() == 1 {
                Ok((k, v.remove(0)))
            } else {
                Err(s.error("cell", format!("`cell.{k}` must be a single value")))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    s.finish()?;
    Ok(PaperValue {
        cell,
        metric,
        value,
        source,
        reference,
        how,
        same_task,
        differs,
    })
}

/// Reads a `[[claim]]` section.
pub(super) fn read_claim(
    s: &Section<'_, '_>,
    params: &[String],
    metrics: &[String],
    item_columns: &[String],
    sweep: &[Axis],
    known: &[Axis],
) -> Result<ClaimSpec, ConfigError> {
    let text = s.req_str("text")?;
    let quote = s.req_str("quote")?;
    let metric = s.req_str("metric")?;
    need_metric(s, "metric", &metric, metrics)?;
    let better = match s.opt_choice("better", &["lower", "higher"])?.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let by = s.req_str("by")?;
    need_param(s, "by", &by, params)?;
    let axis_values: Vec<String> = sweep
        .iter()
        .find(|a| a.name == by)
        .map(|a| a.values.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let raw = s.value("order").ok_or_else(|| {
        s.error(
            "order",
            "missing required key (groups of values from best to worst)",
        )
    })?;
    let mut order: Vec<Vec<String>> = Vec::new();
    let items: Vec<_> = match raw.get_ref() {
        toml::de::DeValue::Array(a) => a.iter().collect(),
        _ => {
            return Err(s.error(
                "order",
                "expected an array of values or of arrays of values",
            ))
        }
    };
    for item in items {
        let group: Vec<String> = match item.get_ref() {
            toml::de::DeValue::Array(g) => g
                .iter()
                .map(|v| s.scalar("order", v).map(|v| v.to_string()))
                .collect::<Result<_, _>>()?,
            _ => vec![s.scalar("order", item)?.to_string()],
        };
        if group.is_empty() {
            return Err(s.error_in("order", item, "an empty group"));
        }
        for g in &group {
            if !axis_values.contains(g) {
                return Err(s.error_in(
                    "order",
                    item,
                    format!(
                        "\"{g}\" is not a value of sweep.{by}; allowed: {}",
                        axis_values.join(", ")
                    ),
                ));
            }
            if order.iter().flatten().any(|o| o == g)
                || group.iter().filter(|x| *x == g).count() > 1
            {
                return Err(s.error_in("order", item, format!("\"{g}\" appears twice")));
            }
        }
        order.push(group);
    }
    if order.len() < 2 {
        return Err(s.error("order", "a claim orders at least two groups"));
    }
    let filter = read_filter(s, "where", params, known)?;
    let group = match s.opt_choice("group", &["all", "any", "mean"])?.as_deref() {
        Some("any") => GroupMode::Any,
        Some("mean") => GroupMode::Mean,
        _ => GroupMode::All,
    };
    let alpha = s.opt_float("alpha", 1e-6, 0.5)?.unwrap_or(0.05);
    let margin = || -> Result<Margin, ConfigError> {
        match (
            s.opt_float("margin", 0.0, f64::MAX)?,
            s.opt_float("margin_rel", 0.0, 10.0)?,
        ) {
            (Some(d), None) => Ok(Margin::Abs(d)),
            (None, Some(r)) => Ok(Margin::Rel(r)),
            (Some(_), Some(_)) => Err(s.error("margin_rel", "give `margin` or `margin_rel`, not both")),
            (None, None) => Err(s.error(
                "margin",
                "missing required key for this test (`margin` in the metric's units, or `margin_rel`, a fraction)",
            )),
        }
    };
    let test = match s
        .opt_choice("test", &["order", "equivalent", "not-worse", "ratio"])?
        .as_deref()
    {
        Some("equivalent") => ClaimTest::Equivalent(margin()?),
        Some("not-worse") => ClaimTest::NotWorse(margin()?),
        Some("ratio") => {
            let factor = s.opt_float("factor", 1.0, 1e12)?.ok_or_else(|| {
                s.error(
                    "factor",
                    "missing required key for test = \"ratio\" (the paper's factor, ≥ 1)",
                )
            })?;
            let reading = match s
                .opt_choice("factor_reading", &["up-to", "at-least", "about"])?
                .as_deref()
            {
                Some("up-to") => FactorReading::UpTo,
                Some("at-least") => FactorReading::AtLeast,
                Some(_) => FactorReading::About,
                None => return Err(s.error(
                    "factor_reading",
                    "missing required key for test = \"ratio\"; allowed: up-to, at-least, about",
                )),
            };
            let tolerance = s.opt_float("factor_tolerance", 1.0, 1e6)?.unwrap_or(2.0);
            ClaimTest::Ratio {
                factor,
                reading,
                tolerance,
            }
        }
        _ => ClaimTest::Order,
    };
    if !matches!(test, ClaimTest::Equivalent(_) | ClaimTest::NotWorse(_)) {
        for k in ["margin", "margin_rel"] {
            if s.value(k).is_some() {
                return Err(s.error(k, "only for test = \"equivalent\" or \"not-worse\""));
            }
        }
    }
    if !matches!(test, ClaimTest::Ratio { .. }) {
        for k in ["factor", "factor_reading", "factor_tolerance"] {
            if s.value(k).is_some() {
                return Err(s.error(k, "only for test = \"ratio\""));
            }
        }
    }
    let exact = s.opt_bool("exact")?.unwrap_or(false);
    let binomial_n = s.opt_int("binomial_n", 1, i64::MAX)?.map(|n| n as u64);
    if exact && binomial_n.is_some() {
        return Err(s.error(
            "binomial_n",
            "`exact` metrics have no sampling noise: give one of `exact`, `binomial_n`",
        ));
    }
    let items = s.opt_str("items")?;
    if let Some(name) = &items {
        if !item_columns.contains(name) {
            return Err(s.error(
                "items",
                if item_columns.is_empty() {
                    format!("\"{name}\": this kind records no per-item outcomes")
                } else {
                    format!(
                        "\"{name}\" is not an item column of this kind; allowed: {}",
                        item_columns.join(", ")
                    )
                },
            ));
        }
        for (key, why) in [
            (
                "binomial_n",
                "the paired test over the items replaces the binomial spread",
            ),
            (
                "exact",
                "per-item outcomes are a sample of test items, not exact values",
            ),
            ("at", "equal-budget claims interpolate means, not items"),
        ] {
            if s.value(key).is_some() {
                return Err(s.error(key, format!("not with `items`: {why}")));
            }
        }
    }
    let budget = match (s.opt_str("at")?, s.opt_str("along")?) {
        (None, None) => None,
        (Some(at), Some(along)) => {
            need_metric(s, "at", &at, metrics)?;
            need_param(s, "along", &along, params)?;
            if along == by || along == "seed" {
                return Err(s.error("along", "must be a parameter other than `by` and `seed`"));
            }
            Some(EqualBudget { at, along })
        }
        (Some(_), None) => {
            return Err(s.error(
                "at",
                "`at` needs `along` (the parameter that traces each curve)",
            ))
        }
        (None, Some(_)) => {
            return Err(s.error("along", "`along` needs `at` (the metric to compare at)"))
        }
    };
    let replicate = s.opt_str("replicate")?.unwrap_or_else(|| "seed".into());
    if replicate != "seed" {
        need_param(s, "replicate", &replicate, params)?;
        if replicate == by || budget.is_some() {
            return Err(s.error(
                "replicate",
                "must differ from `by`, and equal-budget claims (`at`) pair over seeds only",
            ));
        }
    }
    let timing = s.opt_bool("timing")?.unwrap_or(metric.ends_with("_s"));
    let scale = match s.opt_choice("scale", &["linear", "log"])?.as_deref() {
        Some("log") => Scale::Log,
        _ => Scale::Linear,
    };
    if scale == Scale::Log {
        if !matches!(test, ClaimTest::Order | ClaimTest::Ratio { .. }) {
            return Err(s.error(
                "scale",
                "scale = \"log\" is for test = \"order\" or \"ratio\" (margins are in the metric's units)",
            ));
        }
        for (key, why) in [
            (
                "binomial_n",
                "the binomial spread is on the accuracy's own scale",
            ),
            ("items", "per-item outcomes are on the accuracy's own scale"),
        ] {
            if s.value(key).is_some() {
                return Err(s.error("scale", format!("scale = \"log\" not with `{key}`: {why}")));
            }
        }
    }
    let best = s.opt_bool("best")?.unwrap_or(false);
    if best && (order.len() != 2 || test != ClaimTest::Order) {
        return Err(s.error(
            "best",
            "best = true needs test = \"order\" and two groups: the members claimed best, then the others",
        ));
    }
    s.finish()?;
    Ok(ClaimSpec {
        text,
        quote,
        metric,
        better,
        by,
        order,
        filter,
        group,
        test,
        alpha,
        exact,
        binomial_n,
        items,
        replicate,
        budget,
        timing,
        scale,
        best,
    })
}
