//! Line charts with plotters: one panel per value of `plot.panels`, one curve per value of
//! `plot.series`, mean over seeds with ±1 standard-deviation error bars, optional log axes.
//! Fonts are embedded (DejaVu Sans through `ab_glyph`), so PNG and SVG need no system fonts.

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::results::Summary;
use crate::spec::PlotSpec;

/// One curve: label and points (x, mean, std).
#[derive(Debug, Clone)]
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// The series value behind the label (e.g. the method name).
    pub key: String,
    /// The series' own colour, an index into [`PALETTE`], as the application gives it for `key`
    /// ([`crate::Kinds::with_series_colours`]); `None`: a stable colour from a hash of `key` ([`series_colors`]).
    pub colour: Option<usize>,
    /// Points sorted by x.
    pub points: Vec<(f64, f64, f64)>,
}

/// One panel: title and curves.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Panel title.
    pub title: String,
    /// Curves in legend order: every series of the figure, in the same order in every panel (a series
    /// absent from this panel has no points), so the curve index is also the colour index.
    pub curves: Vec<Curve>,
}

/// Groups summaries into panels and curves as the spec says. `metrics` are the indices of `spec.y` and
/// `spec.y_more` (one curve per metric when there are several); `x_metric`
/// the index of `spec.x` among the metrics when the x axis is a metric ([`PlotSpec::x_is_metric`]), whose
/// mean over seeds is then the abscissa.
/// `colour_of` gives a series value's own colour ([`Curve::colour`]).
pub fn panels(
    spec: &PlotSpec,
    summaries: &[Summary],
    metrics: &[usize],
    x_metric: Option<usize>,
    colour_of: &dyn Fn(&str) -> Option<usize>,
) -> Vec<Panel> {
    let names: Vec<&String> = std::iter::once(&spec.y).chain(&spec.y_more).collect();
    let mut out: Vec<Panel> = Vec::new();
    for (s, (&metric, name)) in summaries.iter().flat_map(|s| {
        metrics
            .iter()
            .zip(names.iter().copied())
            .map(move |m| (s, m))
    }) {
        let panel = spec
            .panels
            .iter()
            .filter_map(|p| s.get(p))
            .map(|v| spec.label(&v.to_string()))
            .collect::<Vec<_>>()
            .join(", ");
        let raw = spec
            .series
            .as_ref()
            .and_then(|p| s.get(p))
            .map(|v| v.to_string());
        let series = raw.as_ref().map(|v| spec.label(v));
        let (series, key) = match (series, metrics.len() > 1) {
            (Some(v), true) => (
                format!("{v}, {}", spec.label(name)),
                format!("{}, {name}", raw.unwrap_or_default()),
            ),
            (Some(v), false) => (v, raw.unwrap_or_default()),
            (None, _) => (spec.label(name), name.to_string()),
        };
        let x = match x_metric {
            Some(j) => Some(s.mean[j]).filter(|v| v.is_finite()),
            None => s.get(&spec.x).and_then(|v| v.as_f64()),
        };
        let Some(x) = x else {
            continue;
        };
        let (m, sd) = (s.mean[metric], s.std[metric]);
        let m = if spec.y_one_minus { 1.0 - m } else { m };
        if !m.is_finite() {
            continue;
        }
        let p = match out.iter_mut().position(|p| p.title == panel) {
            Some(i) => &mut out[i],
            None => {
                out.push(Panel {
                    title: panel,
                    curves: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        let c = match p.curves.iter_mut().position(|c| c.label == series) {
            Some(i) => &mut p.curves[i],
            None => {
                p.curves.push(Curve {
                    label: series,
                    colour: colour_of(&key),
                    key,
                    points: Vec::new(),
                });
                p.curves.last_mut().expect("just pushed")
            }
        };
        c.points.push((x, m, if sd.is_finite() { sd } else { 0.0 }));
    }
    // Every panel lists every series of the figure, in the order of first appearance, so that a series
    // has the same colour (its index) in every panel and the legend panel names all of them, even when a
    // panel lacks some (e.g. a partial run): a missing series is an empty curve, drawn in the legend only.
    let mut order: Vec<String> = Vec::new();
    let mut keys: std::collections::HashMap<String, (String, Option<usize>)> = Default::default();
    for c in out.iter().flat_map(|p| &p.curves) {
        if !order.contains(&c.label) {
            order.push(c.label.clone());
            keys.insert(c.label.clone(), (c.key.clone(), c.colour));
        }
    }
    for p in &mut out {
        let mut curves = std::mem::take(&mut p.curves);
        p.curves = order
            .iter()
            .map(
                |label| match curves.iter().position(|c| &c.label == label) {
                    Some(i) => {
                        let mut c = curves.swap_remove(i);
                        c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
                        c
                    }
                    None => {
                        let (key, colour) = keys.get(label).cloned().unwrap_or_default();
                        Curve {
                            label: label.clone(),
                            key,
                            colour,
                            points: Vec::new(),
                        }
                    }
                },
            )
            .collect();
    }
    out
}

/// The panels followed, when the spec names series to zoom on ([`PlotSpec::zoom`]), by a copy of each
/// panel holding only those series' points (the other curves stay in the legend order, empty, so that
/// colours do not change), titled "… (zoom)": its y range fits the zoomed curves.
pub fn with_zoom(spec: &PlotSpec, panels: Vec<Panel>) -> Vec<Panel> {
    if spec.zoom.is_empty() {
        return panels;
    }
    let zoomed: Vec<Panel> = panels
        .iter()
        .map(|p| Panel {
            title: if p.title.is_empty() {
                "zoom".to_string()
            } else {
                format!("{} (zoom)", p.title)
            },
            curves: p
                .curves
                .iter()
                .map(|c| Curve {
                    points: if spec.zoom.contains(&c.key) {
                        c.points.clone()
                    } else {
                        Vec::new()
                    },
                    ..c.clone()
                })
                .collect(),
        })
        .collect();
    panels.into_iter().chain(zoomed).collect()
}

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded DejaVu font is valid; a failure here would only mean text is not drawn.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The colours of a figure's series, in the curves' order: a series with its own colour ([`Curve::colour`],
/// given by the application: a method keeps its colour in every figure of the report) starts from it, other
/// series from a stable colour chosen by a hash of their key; a colour already taken in the figure passes to
/// the next free one of the palette.
pub fn series_colors(curves: &[Curve]) -> Vec<RGBColor> {
    let mut taken: Vec<RGBColor> = Vec::new();
    for c in curves {
        let start = match c.colour {
            Some(i) => i % PALETTE.len(),
            // FNV-1a: stable across runs and platforms
            None => {
                let h = c.key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                (h % PALETTE.len() as u64) as usize
            }
        };
        let col = (0..PALETTE.len())
            .map(|k| PALETTE[(start + k) % PALETTE.len()])
            .find(|col| !taken.contains(col))
            .unwrap_or(PALETTE[start]);
        taken.push(col);
    }
    taken
}

/// Distinct colours (Tableau 20 order: strong then light, plus black, dark grey and violet): the indices
/// [`Curve::colour`] refers to.
pub const PALETTE: [RGBColor; 22] = [
    RGBColor(31, 119, 180),  // 0 blue
    RGBColor(255, 127, 14),  // 1 orange
    RGBColor(44, 160, 44),   // 2 green
    RGBColor(214, 39, 40),   // 3 red
    RGBColor(148, 103, 189), // 4 purple
    RGBColor(140, 86, 75),   // 5 brown
    RGBColor(227, 119, 194), // 6 pink
    RGBColor(127, 127, 127), // 7 grey
    RGBColor(188, 189, 34),  // 8 olive
    RGBColor(23, 190, 207),  // 9 cyan
    RGBColor(0, 0, 0),       // 10 black
    RGBColor(174, 199, 232), // 11 light blue
    RGBColor(255, 187, 120), // 12 light orange
    RGBColor(152, 223, 138), // 13 light green
    RGBColor(255, 152, 150), // 14 light red
    RGBColor(197, 176, 213), // 15 light purple
    RGBColor(196, 156, 148), // 16 light brown
    RGBColor(247, 182, 210), // 17 light pink
    RGBColor(80, 80, 80),    // 18 dark grey
    RGBColor(219, 219, 141), // 19 light olive
    RGBColor(158, 218, 229), // 20 light cyan
    RGBColor(120, 60, 180),  // 21 violet
];

/// Width in pixels of one panel, of a figure-wide legend column per character of its longest label, and of a
/// title character (DejaVu Sans Bold at 24 px averages about 14 px).
const PANEL_W: u32 = 560;
const LEGEND_CHAR_W: u32 = 8;
const TITLE_CHAR_W: u32 = 14;

/// The figure-wide legend column's width (`legend = "outside"`), 0 otherwise.
fn legend_column_width(spec: &PlotSpec, panels: &[Panel]) -> u32 {
    if spec.legend != "outside" {
        return 0;
    }
    let longest = panels
        .first()
        .map(|p| {
            p.curves
                .iter()
                .map(|c| c.label.chars().count())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    70 + LEGEND_CHAR_W * longest as u32
}

/// Writes `<stem>.png` and `<stem>.svg` (atomically).
pub fn write(spec: &PlotSpec, panels: &[Panel], png: &Path, svg: &Path) -> Result<(), String> {
    register_fonts();
    let ncols = panels.len().clamp(1, 3);
    let nrows = panels.len().div_ceil(ncols).max(1);
    // wide enough for the title, so that a one-panel figure does not cut it off
    let width = (PANEL_W * ncols as u32 + legend_column_width(spec, panels))
        .max(TITLE_CHAR_W * spec.title.chars().count() as u32 + 40);
    let size = (width, 60 + 440 * nrows as u32);
    crate::io::with_atomic_path(png, |p| {
        let root = BitMapBackend::new(p, size).into_drawing_area();
        draw(spec, panels, &root, nrows, ncols)?;
        root.present().map_err(|e| e.to_string())
    })?;
    crate::io::with_atomic_path(svg, |p| {
        let root = SVGBackend::new(p, size).into_drawing_area();
        draw(spec, panels, &root, nrows, ncols)?;
        root.present().map_err(|e| e.to_string())
    })
}

/// The distinct abscissae of all panels when there are few (2 to 12, e.g. a swept size): a log x axis is then
/// ticked exactly there, rather than at round values that may miss most points (a log axis from 2 to 32
/// would only be labelled 10, 20, 30).
fn x_key_points(spec: &PlotSpec, panels: &[Panel]) -> Option<Vec<f64>> {
    let mut xs: Vec<f64> = panels
        .iter()
        .flat_map(|p| p.curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)))
        .filter(|&x| x.is_finite() && (!spec.log_x || x > 0.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    (2..=12).contains(&xs.len()).then_some(xs)
}

fn draw<DB: DrawingBackend>(
    spec: &PlotSpec,
    panels: &[Panel],
    root: &DrawingArea<DB, Shift>,
    nrows: usize,
    ncols: usize,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(
            &spec.title,
            ("sans-serif", 24).into_font().style(FontStyle::Bold),
        )
        .map_err(|e| e.to_string())?;
    let legend_w = legend_column_width(spec, panels);
    let plots = if legend_w > 0 {
        let (plots, column) = root.split_horizontally(root.dim_in_pixel().0 - legend_w);
        draw_legend_column(panels, &column)?;
        plots
    } else {
        root
    };
    let keys = x_key_points(spec, panels);
    let areas = plots.split_evenly((nrows, ncols));
    for (i, (panel, area)) in panels.iter().zip(areas.iter()).enumerate() {
        let legend = legend_w == 0 && spec.legend_panel.is_none_or(|p| p == i + 1);
        let pts = panel.curves.iter().flat_map(|c| c.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &(x, m, s) in pts {
            if spec.log_x && x <= 0.0 {
                continue;
            }
            x0 = x0.min(x);
            x1 = x1.max(x);
            let lo = if spec.log_y && m - s <= 0.0 { m } else { m - s };
            if !spec.log_y || lo > 0.0 {
                y0 = y0.min(lo);
            }
            y1 = y1.max(m + s);
        }
        if !(x0.is_finite() && y0.is_finite()) {
            continue;
        }
        let (x0, x1) = pad(x0, x1, spec.log_x, 0.02);
        let (y0, y1) = pad(y0, y1, spec.log_y, 0.05);
        // the x range with its tick positions, if any (those inside this panel's range), then the panel
        let ticks: Option<Vec<f64>> = keys.as_ref().map(|k| {
            k.iter()
                .copied()
                .filter(|v| (x0..=x1).contains(v))
                .collect()
        });
        macro_rules! with_x {
            ($xr:expr, $yr:expr) => {
                match &ticks {
                    Some(k) => draw_panel(
                        spec,
                        panel,
                        area,
                        legend,
                        $xr.with_key_points(k.clone()),
                        $yr,
                    ),
                    None => draw_panel(spec, panel, area, legend, $xr, $yr),
                }
            };
        }
        // (a linear axis labels round values, which fall between the points well enough)
        match (spec.log_x, spec.log_y) {
            (false, false) => draw_panel(spec, panel, area, legend, x0..x1, y0..y1),
            (true, false) => with_x!((x0..x1).log_scale(), y0..y1),
            (false, true) => draw_panel(spec, panel, area, legend, x0..x1, log_y_range(y0, y1)),
            (true, true) => with_x!((x0..x1).log_scale(), log_y_range(y0, y1)),
        }?;
    }
    Ok(())
}

/// The figure-wide legend (`legend = "outside"`): one entry per series, in the curves' order and colours
/// (the same in every panel, see [`panels`]).
fn draw_legend_column<DB: DrawingBackend>(
    panels: &[Panel],
    area: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let err = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let Some(first) = panels.first() else {
        return Ok(());
    };
    let colors = series_colors(&first.curves);
    for (i, (c, &color)) in first.curves.iter().zip(&colors).enumerate() {
        let y = 60 + 24 * i as i32;
        area.draw(&PathElement::new(
            vec![(12, y), (42, y)],
            ShapeStyle::from(&color).stroke_width(2),
        ))
        .map_err(err)?;
        area.draw(&Circle::new((27, y), 3, color.filled()))
            .map_err(err)?;
        area.draw(&Text::new(
            c.label.clone(),
            (50, y - 8),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// Runs of consecutive drawable points (`keep`), as `(x, mean)` pairs: a curve is drawn as one line per run.
/// A curve with no drawable point still yields one empty run, so that its legend entry is drawn.
fn line_segments(
    points: &[(f64, f64, f64)],
    keep: impl Fn(&&(f64, f64, f64)) -> bool,
) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new()];
    for p in points {
        if keep(&p) {
            out.last_mut().expect("non-empty").push((p.0, p.1));
        } else if !out.last().expect("non-empty").is_empty() {
            out.push(Vec::new());
        }
    }
    if out.len() > 1 && out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out
}

/// The plotters position of a `[plot] legend` value (validated against `spec::LEGEND_POSITIONS`).
fn legend_position(s: &str) -> SeriesLabelPosition {
    match s {
        "upper-left" => SeriesLabelPosition::UpperLeft,
        "upper-middle" => SeriesLabelPosition::UpperMiddle,
        "lower-right" => SeriesLabelPosition::LowerRight,
        "lower-left" => SeriesLabelPosition::LowerLeft,
        "lower-middle" => SeriesLabelPosition::LowerMiddle,
        _ => SeriesLabelPosition::UpperRight,
    }
}

/// Tick values of a log axis over `[lo, hi]`: plotters' own log ticks start at the first power of ten inside
/// the range, so a range such as 0.045–0.13 gets the single label 0.1. Here the labels are
/// $m\cdot 10^k$ for $m \in \lbrace1,\dots,9\rbrace $ (under 0.8 decades), $\lbrace1, 2, 3, 5\rbrace $ (under 1.3), $\lbrace1, 2, 5\rbrace $
/// (under 2.5) or $\lbrace1\rbrace $, every
/// power of ten up to 8 decades and every `⌈decades/8⌉`-th beyond. A range too narrow for two such values
/// gets four log-spaced values rounded to two significant digits.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (hi / lo).log10();
    let mults: &[f64] = if decades < 0.8 {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if decades < 1.3 {
        &[1.0, 2.0, 3.0, 5.0]
    } else if decades < 2.5 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let step = if decades > 8.0 {
        (decades / 8.0).ceil() as i32
    } else {
        1
    };
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let ticks: Vec<f64> = (k0..=k1)
        .filter(|k| k.rem_euclid(step) == 0)
        .flat_map(|k| mults.iter().map(move |m| m * 10f64.powi(k)))
        .filter(|v| (lo..=hi).contains(v))
        .collect();
    if ticks.len() >= 2 {
        return ticks;
    }
    let mut ticks: Vec<f64> = (0..4)
        .map(|i| {
            let v = lo * (hi / lo).powf((0.5 + i as f64) / 4.0);
            let p = 10f64.powi(v.log10().floor() as i32 - 1);
            (v / p).round() * p
        })
        .collect();
    ticks.dedup();
    ticks
}

/// A log y range labelled at [`log_ticks`], with light grid lines at every $m\cdot 10^k$ inside it.
fn log_y_range(
    lo: f64,
    hi: f64,
) -> plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>> {
    let light = if (hi / lo).log10() <= 8.0 {
        (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
            .flat_map(|k| (1..10).map(move |m| f64::from(m) * 10f64.powi(k)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    } else {
        Vec::new()
    };
    (lo..hi)
        .log_scale()
        .with_key_points(log_ticks(lo, hi))
        .with_light_points(light)
}

fn pad(lo: f64, hi: f64, log: bool, frac: f64) -> (f64, f64) {
    if log {
        let (a, b) = (lo.log10(), hi.log10());
        let d = ((b - a) * frac).max(0.05);
        (10f64.powf(a - d), 10f64.powf(b + d))
    } else {
        let d = ((hi - lo) * frac).max(1e-12 * hi.abs().max(1.0));
        (lo - d, hi + d)
    }
}

/// A number for a tick or a table cell: up to three decimals between 0.01 and 10⁴, else two significant digits in e-notation.
pub(crate) fn sci(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let e = v.abs().log10();
    if (-2.0..4.0).contains(&e) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        // two significant digits, so that 2.5·10⁵ is not labelled "2e5" beside a true 2·10⁵
        let s = format!("{v:.1e}");
        s.replace(".0e", "e")
    }
}

fn draw_panel<DB, XR, YR>(
    spec: &PlotSpec,
    panel: &Panel,
    area: &DrawingArea<DB, Shift>,
    legend: bool,
    xr: XR,
    yr: YR,
) -> Result<(), String>
where
    DB: DrawingBackend,
    XR: AsRangedCoord<Value = f64>,
    YR: AsRangedCoord<Value = f64>,
    XR::CoordDescType: ValueFormatter<f64>,
    YR::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(72)
        .build_cartesian_2d(xr, yr)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label)
        // at most 8 labels: on a log axis spanning more than a decade plotters otherwise labels every
        // multiple of the upper decade's power (4000, 5000, ... overlapping)
        .x_labels(8)
        .x_label_formatter(&|v| sci(*v))
        .y_label_formatter(&|v| sci(*v))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(RGBColor(238, 238, 238))
        .max_light_lines(3)
        .draw()
        .map_err(err)?;
    let colors = series_colors(&panel.curves);
    for (c, &color) in panel.curves.iter().zip(&colors) {
        if c.points.is_empty() {
            continue; // a series absent from this panel (or left out of a zoom): not in its legend either
        }
        let style = ShapeStyle::from(&color).stroke_width(2);
        let keep =
            |&&(x, m, _): &&(f64, f64, f64)| (!spec.log_x || x > 0.0) && (!spec.log_y || m > 0.0);
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(keep)
            .map(|&(x, m, _)| (x, m))
            .collect();
        // The line is broken where a point cannot be drawn (e.g. a zero count on a log axis) rather
        // than bridging the gap as if the values in between were known.
        for (j, seg) in line_segments(&c.points, keep).into_iter().enumerate() {
            let series = chart
                .draw_series(LineSeries::new(seg, style))
                .map_err(err)?;
            if j == 0 {
                series
                    .label(c.label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
        let bars: Vec<_> = c
            .points
            .iter()
            .filter(keep)
            .filter(|p| p.2 > 0.0)
            .map(|&(x, m, s)| {
                let lo = if spec.log_y && m - s <= 0.0 { m } else { m - s };
                ErrorBar::new_vertical(x, lo, m, m + s, color, 6)
            })
            .collect();
        chart.draw_series(bars).map_err(err)?;
    }
    if !legend {
        return Ok(());
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .position(legend_position(&spec.legend))
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_method_keeps_its_colour_across_figures_and_colours_are_distinct() {
        // the application's colours (e.g. rfx-registry's `MethodSpec::colour`: rff 0, ntk-rf 3, gegenbauer 4,
        // the exact kernel 10, maclaurin and rm both 7)
        let own = |k: &str| match k {
            "rff" => Some(0),
            "ntk-rf" => Some(3),
            "gegenbauer" => Some(4),
            "exact" => Some(10),
            "maclaurin" | "rm" => Some(7),
            _ => None,
        };
        let curve = |k: &str| Curve {
            label: format!("label of {k}"),
            key: k.into(),
            colour: own(k),
            points: Vec::new(),
        };
        let a = series_colors(&[curve("rff"), curve("ntk-rf"), curve("exact")]);
        let b = series_colors(&[curve("exact"), curve("gegenbauer"), curve("rff")]);
        assert_eq!(a[0], b[2]);
        assert_eq!(a[2], b[0]);
        assert_eq!((a[0], a[1], a[2]), (PALETTE[0], PALETTE[3], PALETTE[10]));
        // series without their own colour: stable, and never a colour already taken in the figure
        let names: Vec<Curve> = (0..PALETTE.len())
            .map(|i| curve(&format!("s{i}")))
            .collect();
        let c = series_colors(&names);
        for (i, x) in c.iter().enumerate() {
            assert!(!c[..i].contains(x), "colour {i} repeats");
        }
        assert_eq!(c, series_colors(&names));
        // methods sharing a palette slot (maclaurin and rm) in one figure still differ
        let d = series_colors(&[curve("maclaurin"), curve("rm")]);
        assert_ne!(d[0], d[1]);
    }

    #[test]
    fn tick_labels_keep_two_significant_digits() {
        assert_eq!(super::sci(2.5e5), "2.5e5");
        assert_eq!(super::sci(2e5), "2e5");
        assert_eq!(super::sci(1234.0), "1234");
    }

    use super::*;
    use crate::config::Value;

    #[test]
    fn log_ticks_label_ranges_without_a_power_of_ten_inside_or_below() {
        // plotters' own ticks give 0.045–0.13 the one label 0.1
        let t = log_ticks(0.045, 0.13);
        assert_eq!(t.len(), 6, "{t:?}");
        assert!(
            (t[0] - 0.05).abs() < 1e-12 && (t[5] - 0.1).abs() < 1e-12,
            "{t:?}"
        );
        assert_eq!(log_ticks(3e-4, 2.1e-2).len(), 6); // 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2
        assert_eq!(log_ticks(1e-5, 10.0).len(), 7); // powers of ten only
        assert_eq!(log_ticks(1e-20, 1.0).len(), 7); // every third power: 1e-18 … 1
                                                    // too narrow for two round values: four log-spaced values inside the range
        let t = log_ticks(0.052, 0.058);
        assert_eq!(t.len(), 4);
        assert!(
            t.iter().all(|v| (0.052..=0.058).contains(v)) && t.windows(2).all(|w| w[0] < w[1]),
            "{t:?}"
        );
    }

    fn summary(method: &str, m: i64, bits: f64, err: f64) -> Summary {
        Summary {
            params: vec![
                ("method".into(), Value::Str(method.into())),
                ("m".into(), Value::Int(m)),
            ],
            n: 1,
            mean: vec![err, bits],
            std: vec![0.0, 0.0],
            timing_mean: Vec::new(),
            note: String::new(),
        }
    }

    #[test]
    fn lines_break_at_points_that_cannot_be_drawn() {
        let pts = [
            (1.0, 5.0, 0.0),
            (2.0, 0.0, 0.0),
            (3.0, 2.0, 0.0),
            (4.0, 3.0, 0.0),
            (5.0, 0.0, 0.0),
        ];
        let keep = |p: &&(f64, f64, f64)| p.1 > 0.0;
        assert_eq!(
            line_segments(&pts, keep),
            vec![vec![(1.0, 5.0)], vec![(3.0, 2.0), (4.0, 3.0)]]
        );
        assert_eq!(line_segments(&pts[1..2], keep), vec![Vec::new()]);
        assert_eq!(line_segments(&pts[2..4], keep).len(), 1);
    }

    #[test]
    fn metric_on_x_places_points_at_the_metric_mean() {
        let spec = PlotSpec {
            title: "t".into(),
            x: "bits".into(),
            x_is_metric: true,
            y: "err".into(),
            y_more: Vec::new(),
            series: Some("method".into()),
            panels: Vec::new(),
            x_label: "bits".into(),
            y_label: "err".into(),
            log_x: true,
            log_y: false,
            y_one_minus: false,
            labels: Vec::new(),
            legend: "upper-right".into(),
            legend_panel: None,
            figures: None,
            zoom: Vec::new(),
            filter: Vec::new(),
            name: None,
        };
        let s = vec![
            summary("a", 100, 800.0, 0.3),
            summary("a", 10, 80.0, 0.5),
            summary("b", 10, 10.0, 0.4),
            summary("b", 100, f64::NAN, 0.2),
        ];
        let p = panels(&spec, &s, &[0], Some(1), &|_| None);
        assert_eq!(p.len(), 1);
        let a = &p[0].curves[0];
        assert_eq!(a.label, "a");
        assert_eq!(a.points, vec![(80.0, 0.5, 0.0), (800.0, 0.3, 0.0)]);
        // a point whose x metric is missing is left out
        assert_eq!(p[0].curves[1].points, vec![(10.0, 0.4, 0.0)]);
        // with x a sweep parameter the metric index is ignored
        let spec = PlotSpec {
            x: "m".into(),
            x_is_metric: false,
            ..spec
        };
        let p = panels(&spec, &s, &[0], None, &|_| None);
        assert_eq!(p[0].curves[0].points[0].0, 10.0);
        // y_one_minus draws 1 − mean at the same x with the same error bar
        let q = panels(
            &PlotSpec {
                y_one_minus: true,
                ..spec
            },
            &s,
            &[0],
            None,
            &|_| None,
        );
        for (a, b) in p[0].curves.iter().zip(&q[0].curves) {
            for (&(x, m, sd), &(x2, m2, sd2)) in a.points.iter().zip(&b.points) {
                assert_eq!((x, 1.0 - m, sd), (x2, m2, sd2));
            }
        }
    }

    #[test]
    fn every_panel_lists_every_series_in_one_order() {
        let spec = PlotSpec {
            title: "t".into(),
            x: "m".into(),
            x_is_metric: false,
            y: "err".into(),
            y_more: Vec::new(),
            series: Some("method".into()),
            panels: vec!["depth".into()],
            x_label: "m".into(),
            y_label: "err".into(),
            log_x: false,
            log_y: false,
            y_one_minus: false,
            labels: Vec::new(),
            legend: "upper-right".into(),
            legend_panel: Some(2),
            figures: None,
            zoom: Vec::new(),
            filter: Vec::new(),
            name: None,
        };
        let at = |depth: i64, method: &str| {
            let mut s = summary(method, 10, 1.0, 0.5);
            s.params.push(("depth".into(), Value::Int(depth)));
            s
        };
        // panel 1 has only b, panel 2 has a and b: b, seen first, comes first in both (same colour index),
        // and panel 1 lists a without points so that its legend would name it
        let s = vec![at(1, "b"), at(2, "a"), at(2, "b")];
        let p = panels(&spec, &s, &[0], None, &|_| None);
        assert_eq!(p.len(), 2);
        for panel in &p {
            let labels: Vec<&str> = panel.curves.iter().map(|c| c.label.as_str()).collect();
            assert_eq!(labels, ["b", "a"]);
        }
        assert!(p[0].curves[1].points.is_empty());
        assert_eq!(p[1].curves[1].points.len(), 1);
    }

    #[test]
    fn zoom_adds_a_panel_of_the_named_series_with_colours_kept() {
        let curve = |key: &str, y: f64| Curve {
            label: key.to_uppercase(),
            key: key.into(),
            colour: None,
            points: vec![(1.0, y, 0.0), (2.0, y + 0.01, 0.0)],
        };
        let panels = vec![Panel {
            title: "p".into(),
            curves: vec![curve("a", 0.5), curve("b", 0.97), curve("c", 0.98)],
        }];
        let mut spec = PlotSpec {
            title: "t".into(),
            x: "m".into(),
            x_is_metric: false,
            y: "acc".into(),
            y_more: Vec::new(),
            series: Some("method".into()),
            panels: Vec::new(),
            x_label: String::new(),
            y_label: String::new(),
            log_x: false,
            log_y: false,
            y_one_minus: false,
            labels: Vec::new(),
            legend: "upper-right".into(),
            legend_panel: None,
            figures: None,
            zoom: Vec::new(),
            filter: Vec::new(),
            name: None,
        };
        assert_eq!(with_zoom(&spec, panels.clone()).len(), 1);
        spec.zoom = vec!["b".into(), "c".into()];
        let z = with_zoom(&spec, panels.clone());
        assert_eq!(z.len(), 2);
        assert_eq!(z[1].title, "p (zoom)");
        let keys: Vec<&str> = z[1].curves.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            ["a", "b", "c"],
            "every series keeps its place (and colour)"
        );
        assert!(z[1].curves[0].points.is_empty());
        assert_eq!(z[1].curves[2].points, panels[0].curves[2].points);
        assert_eq!(series_colors(&z[1].curves), series_colors(&z[0].curves));
    }
}
