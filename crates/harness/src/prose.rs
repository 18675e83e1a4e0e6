//! Numbers in prose that cannot drift: the templates of an experiment's `notes`, filled from the cells and
//! the claims' verdicts when the report is written, and the check that finds hand-typed verdict counts.
//!
//! A template is `{{ … }}` in the `notes` text:
//!
//! - `{{verdict N}}`: claim N's verdict (1-based, in file order), its word in bold and counts, e.g.
//!   "**holds in part** (holds in 12, reversed in 0, inconclusive in 18 of 30)"; `{{verdict N | F}}` one field of it, F one of
//!   `word`, `counts`, `holds`, `reversed`, `inconclusive`, `against` (the inconclusive ones leaning against
//!   the claim) and `total`.
//! - `{{mean METRIC where P=V, P=V | FMT}}` (also `min`, `max`): the mean (least, largest) of a metric over
//!   every computed cell (seeds and the parameters not named included) whose parameters have the given values;
//!   `where` is optional, and so is the format: `fixedD` (D decimals, the default `fixed3`), `sciD` (D
//!   significant digits, as `1.2e4`), `sigD` (D significant digits without an exponent, as `58.3`), `pctD`
//!   (times 100, D decimals, with " %"), `int` (rounded, thousands separated by commas).
//! - `{{sd METRIC where …}}`: the sample standard deviation of the same values (n − 1; 0 for one cell), as
//!   in "0.744 ± 0.001"; `{{sum METRIC where …}}`: their sum (a total time).
//! - `{{ratio METRIC where P=V, … over P=V, … | FMT}}`: the mean of a metric over the cells matching the first
//!   conditions divided by its mean over the cells matching the second (a speedup, a relative error).
//! - `{{min mean METRIC by P where … | FMT}}` (also `max mean`): the least (largest) of the metric's means over
//!   the matching cells grouped by the value of parameter P — the best value over a sweep parameter, e.g. the
//!   lowest mean test MSE over the γ grid.
//! - `{{count cells where …}}`: the number of computed cells (a skipped cell, "(-)", is not computed);
//!   `{{count values of P where …}}`: the number of distinct values of parameter P among them.
//!
//! Names and values are checked when the file is read ([`check`], from [`crate::spec::Spec::parse`]: syntax,
//! metric, parameter, sweep value, claim number, field and format), so `rfx validate` refuses a misspelt
//! template; a template that selects no computed cell is an error when the report is written ([`render`]).
//! [`hand_typed`] finds what a template should replace: a count such as "28 of 30" and a verdict word next to
//! a number, outside templates (the prose test of `experiments/tests/prose.rs` runs it on every experiment).

use crate::claims::ClaimVerdict;
use crate::config::Value;

/// A statistic over cells.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stat {
    Mean,
    Min,
    Max,
    /// The sample standard deviation (n − 1 in the denominator; 0 for one cell).
    Sd,
    /// The sum (a total time).
    Sum,
}

/// How a number is written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Fixed(usize),
    Sci(usize),
    Pct(usize),
    Sig(usize),
    Int,
}

/// One parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Template {
    /// Claim number (1-based) and field (`None`: word and counts).
    Verdict(usize, Option<String>),
    /// A statistic of a metric over the matching cells.
    Stat(Stat, String, Vec<(String, String)>, Format),
    /// The mean of a metric over the cells matching the first conditions divided by its mean over the cells
    /// matching the second.
    Ratio(String, Vec<(String, String)>, Vec<(String, String)>, Format),
    /// The least (`false`) or largest (`true`) of a metric's means over the groups of matching cells that share
    /// a value of a parameter: the best value over a sweep parameter, e.g. the lowest mean MSE over γ.
    ExtremeMean(bool, String, String, Vec<(String, String)>, Format),
    /// The matching computed cells.
    CountCells(Vec<(String, String)>),
    /// Distinct values of a parameter among the matching computed cells.
    CountValues(String, Vec<(String, String)>),
}

/// A piece of a notes text.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    /// The template's source (between the braces) and its parse.
    Template(String, Template),
}

const FIELDS: [&str; 7] = [
    "word",
    "counts",
    "holds",
    "reversed",
    "inconclusive",
    "against",
    "total",
];

/// The syntax summary given with every error.
const SYNTAX: &str = "templates: {{verdict N}}, {{verdict N | word|counts|holds|reversed|inconclusive|against|total}}, \
    {{mean|min|max|sd|sum METRIC where P=V, … | fixedD|sciD|sigD|pctD|int}}, \
    {{ratio METRIC where P=V, … over P=V, … | FMT}}, {{min|max mean METRIC by P where … | FMT}}, {{count cells where …}}, {{count values of P where …}}";

fn parse_format(s: &str) -> Option<Format> {
    let digits = |rest: &str| rest.parse::<usize>().ok().filter(|d| *d <= 12);
    if s == "int" {
        Some(Format::Int)
    } else if let Some(r) = s.strip_prefix("fixed") {
        digits(r).map(Format::Fixed)
    } else if let Some(r) = s.strip_prefix("sci") {
        digits(r).filter(|d| *d >= 1).map(Format::Sci)
    } else if let Some(r) = s.strip_prefix("pct") {
        digits(r).map(Format::Pct)
    } else if let Some(r) = s.strip_prefix("sig") {
        digits(r).filter(|d| *d >= 1).map(Format::Sig)
    } else {
        None
    }
}

/// The parts of `s` between commas outside double quotes.
fn split_unquoted(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// `P=V, P=V` (quotes around V optional; a V that holds a comma is quoted: `method="exact(a=1, b=2)"`).
fn parse_where(s: &str) -> Result<Vec<(String, String)>, String> {
    split_unquoted(s)
        .into_iter()
        .map(|c| {
            let (k, v) = c
                .split_once('=')
                .ok_or_else(|| format!("\"{}\" is not P=V", c.trim()))?;
            let (k, v) = (k.trim(), v.trim().trim_matches('"'));
            if k.is_empty() || v.is_empty() || k.contains(char::is_whitespace) {
                return Err(format!("\"{}\" is not P=V", c.trim()));
            }
            Ok((k.to_string(), v.to_string()))
        })
        .collect()
}

fn parse_template(src: &str) -> Result<Template, String> {
    let (head, tail) = match src.split_once('|') {
        Some((h, t)) => (h.trim(), Some(t.trim())),
        None => (src.trim(), None),
    };
    let format = || -> Result<Format, String> {
        match tail {
            None => Ok(Format::Fixed(3)),
            Some(f) => parse_format(f).ok_or_else(|| {
                format!("unknown format \"{f}\"; allowed: fixedD, sciD, sigD, pctD, int")
            }),
        }
    };
    if let Some(rest) = head.strip_prefix("ratio ") {
        let (metric, conds) = rest
            .split_once(" where ")
            .ok_or("a ratio is `ratio METRIC where P=V, … over P=V, …`")?;
        let (num, den) = conds.split_once(" over ").ok_or(
            "a ratio needs `over` between the numerator's and the denominator's conditions",
        )?;
        let metric = metric.trim();
        if metric.is_empty() || metric.contains(char::is_whitespace) {
            return Err(format!("\"{metric}\" is not one metric"));
        }
        return Ok(Template::Ratio(
            metric.to_string(),
            parse_where(num)?,
            parse_where(den)?,
            format()?,
        ));
    }
    let (head, conds) = match head.split_once(" where ") {
        Some((h, w)) => (h.trim(), parse_where(w)?),
        None => (head, Vec::new()),
    };
    let words: Vec<&str> = head.split_whitespace().collect();
    match words.as_slice() {
        ["verdict", n] => {
            let n: usize = n
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("claim number \"{n}\" is not a positive integer"))?;
            let field = match tail {
                None => None,
                Some(f) if FIELDS.contains(&f) => Some(f.to_string()),
                Some(f) => {
                    return Err(format!(
                        "unknown verdict field \"{f}\"; allowed: {}",
                        FIELDS.join(", ")
                    ))
                }
            };
            if !conds.is_empty() {
                return Err("a verdict takes no `where`".to_string());
            }
            Ok(Template::Verdict(n, field))
        }
        [which @ ("min" | "max"), "mean", metric, "by", param] => Ok(Template::ExtremeMean(
            *which == "max",
            metric.to_string(),
            param.to_string(),
            conds,
            format()?,
        )),
        [stat @ ("mean" | "min" | "max" | "sd" | "sum"), metric] => {
            let stat = match *stat {
                "mean" => Stat::Mean,
                "min" => Stat::Min,
                "max" => Stat::Max,
                "sd" => Stat::Sd,
                _ => Stat::Sum,
            };
            Ok(Template::Stat(stat, metric.to_string(), conds, format()?))
        }
        ["count", "cells"] if tail.is_none() => Ok(Template::CountCells(conds)),
        ["count", "values", "of", param] if tail.is_none() => {
            Ok(Template::CountValues(param.to_string(), conds))
        }
        _ => Err("unknown template".to_string()),
    }
}

/// Splits a notes text into text and templates; an error names the template (or the unclosed `{{`).
fn parse(text: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        pieces.push(Piece::Text(rest[..start].to_string()));
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unclosed \"{{{{{}\"", head_of(after)))?;
        let src = &after[..end];
        if src.contains("{{") {
            return Err(format!("unclosed \"{{{{{}\"", head_of(after)));
        }
        let t =
            parse_template(src).map_err(|e| format!("template {{{{{src}}}}}: {e} ({SYNTAX})"))?;
        pieces.push(Piece::Template(src.to_string(), t));
        rest = &after[end + 2..];
    }
    pieces.push(Piece::Text(rest.to_string()));
    Ok(pieces)
}

/// The first 30 characters of `s`, for an error.
fn head_of(s: &str) -> String {
    s.chars().take(30).collect()
}

/// Checks the templates of `notes` against the experiment: syntax, claim numbers (`claims` claims), metrics,
/// parameters and their values (`known`: every value the sweep may hold). The error is one line naming the
/// template.
pub fn check(
    notes: &str,
    claims: usize,
    params: &[String],
    metrics: &[String],
    known: &[(String, Vec<Value>)],
) -> Result<(), String> {
    for piece in parse(notes)? {
        let Piece::Template(src, t) = piece else {
            continue;
        };
        let fail = |m: String| format!("template {{{{{src}}}}}: {m}");
        let need_param = |p: &str| -> Result<(), String> {
            if params.iter().any(|x| x == p) {
                Ok(())
            } else {
                Err(fail(format!(
                    "unknown parameter \"{p}\"; allowed: {}",
                    params.join(", ")
                )))
            }
        };
        let need_metric = |metric: &str| -> Result<(), String> {
            if metrics.iter().any(|m| m == metric) {
                Ok(())
            } else {
                Err(fail(format!(
                    "unknown metric \"{metric}\"; allowed: {}",
                    metrics.join(", ")
                )))
            }
        };
        let both;
        let conds = match &t {
            Template::Verdict(n, _) => {
                if *n > claims {
                    return Err(fail(format!(
                        "claim {n}, but the file has {claims} claim{}",
                        if claims == 1 { "" } else { "s" }
                    )));
                }
                continue;
            }
            Template::Stat(_, metric, conds, _) => {
                need_metric(metric)?;
                conds
            }
            Template::Ratio(metric, num, den, _) => {
                need_metric(metric)?;
                both = [num.as_slice(), den.as_slice()].concat();
                &both
            }
            Template::ExtremeMean(_, metric, param, conds, _) => {
                need_metric(metric)?;
                need_param(param)?;
                conds
            }
            Template::CountCells(conds) => conds,
            Template::CountValues(p, conds) => {
                need_param(p)?;
                conds
            }
        };
        for (k, v) in conds {
            need_param(k)?;
            if let Some((_, values)) = known.iter().find(|(n, _)| n == k) {
                if !values.iter().any(|x| x.to_string() == *v) {
                    return Err(fail(format!(
                        "{k} = {v} is not a sweep value; allowed: {}",
                        values
                            .iter()
                            .map(Value::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Writes `v` as `f` asks.
fn format_number(v: f64, f: Format) -> String {
    match f {
        Format::Fixed(d) => format!("{v:.d$}"),
        Format::Sci(d) => format!("{:.*e}", d - 1, v),
        Format::Pct(d) => format!("{:.d$} %", v * 100.0),
        Format::Sig(d) => {
            // D significant digits, written without an exponent: 58.3, 6.28, 0.0123.
            let magnitude = if v == 0.0 || !v.is_finite() {
                0
            } else {
                v.abs().log10().floor() as i64
            };
            let decimals = (d as i64 - 1 - magnitude).max(0) as usize;
            format!("{v:.decimals$}")
        }
        Format::Int => group_thousands(v.round() as i64),
    }
}

/// `12345` → "12,345".
fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A computed cell as [`render`] sees it: its parameters (seed included) and its metrics.
pub type CellValues = (Vec<(String, Value)>, Vec<f64>);

/// `notes` with every template filled from `cells` (the computed cells; `metrics` names their metric
/// columns) and `verdicts` (the claims' verdicts, in file order). An error is one line naming `file`,
/// `notes` and the template.
pub fn render(
    file: &str,
    notes: &str,
    metrics: &[String],
    cells: &[CellValues],
    verdicts: &[&ClaimVerdict],
) -> Result<String, String> {
    let where_ = |e: String| format!("{file}: notes: {e}");
    let pieces = parse(notes).map_err(where_)?;
    if pieces.len() == 1 {
        return Ok(notes.to_string());
    }
    let matching = |conds: &[(String, String)]| -> Vec<&CellValues> {
        cells
            .iter()
            .filter(|(params, _)| {
                conds.iter().all(|(k, v)| {
                    params
                        .iter()
                        .any(|(pk, pv)| pk == k && pv.to_string() == *v)
                })
            })
            .collect()
    };
    // The finite values of a metric over the matching cells; `None` when there are none (or no such metric).
    let values_of = |metric: &str, conds: &[(String, String)]| -> Option<Vec<f64>> {
        let mi = metrics.iter().position(|m| m == metric)?;
        let values: Vec<f64> = matching(conds)
            .iter()
            .map(|(_, m)| m[mi])
            .filter(|x| x.is_finite())
            .collect();
        (!values.is_empty()).then_some(values)
    };
    const NONE: &str = "no computed cell matches";
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Template(src, t) => {
                let fail = |m: &str| where_(format!("template {{{{{src}}}}}: {m}"));
                let text = match t {
                    Template::Verdict(n, field) => {
                        let v = verdicts.get(n - 1).ok_or_else(|| fail("no such claim"))?;
                        match field.as_deref() {
                            None => format!("**{}** ({})", v.word, v.counts()),
                            Some("word") => v.word.clone(),
                            Some("counts") => v.counts(),
                            Some("holds") => v.holds.to_string(),
                            Some("reversed") => v.reversed.to_string(),
                            Some("inconclusive") => v.inconclusive.to_string(),
                            Some("against") => v.leaning_against.to_string(),
                            _ => v.total().to_string(),
                        }
                    }
                    Template::Stat(stat, metric, conds, format) => {
                        let values = values_of(&metric, &conds).ok_or_else(|| fail(NONE))?;
                        let n = values.len() as f64;
                        let mean = values.iter().sum::<f64>() / n;
                        let v = match stat {
                            Stat::Mean => mean,
                            Stat::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
                            Stat::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                            Stat::Sum => values.iter().sum(),
                            Stat::Sd if values.len() < 2 => 0.0,
                            Stat::Sd => (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                                / (n - 1.0))
                                .sqrt(),
                        };
                        format_number(v, format)
                    }
                    Template::Ratio(metric, num, den, format) => {
                        let mean = |conds: &[(String, String)]| {
                            values_of(&metric, conds)
                                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                        };
                        let (a, b) = (mean(&num), mean(&den));
                        let (a, b) = a.zip(b).ok_or_else(|| fail(NONE))?;
                        format_number(a / b, format)
                    }
                    Template::ExtremeMean(largest, metric, param, conds, format) => {
                        let mi = metrics
                            .iter()
                            .position(|m| *m == metric)
                            .ok_or_else(|| fail("unknown metric"))?;
                        // (value of the parameter, sum, count) per group, in the cells' order
                        let mut groups: Vec<(String, f64, usize)> = Vec::new();
                        for (params, m) in matching(&conds) {
                            let Some((_, v)) = params.iter().find(|(k, _)| *k == param) else {
                                continue;
                            };
                            if !m[mi].is_finite() {
                                continue;
                            }
                            let v = v.to_string();
                            match groups.iter_mut().find(|(g, _, _)| *g == v) {
                                Some(g) => {
                                    g.1 += m[mi];
                                    g.2 += 1;
                                }
                                None => groups.push((v, m[mi], 1)),
                            }
                        }
                        let means = groups.iter().map(|(_, sum, n)| sum / *n as f64);
                        let v = if largest {
                            means.fold(f64::NEG_INFINITY, f64::max)
                        } else {
                            means.fold(f64::INFINITY, f64::min)
                        };
                        if groups.is_empty() {
                            return Err(fail(NONE));
                        }
                        format_number(v, format)
                    }
                    Template::CountCells(conds) => {
                        let n = matching(&conds).len();
                        if n == 0 {
                            return Err(fail("no computed cell matches"));
                        }
                        group_thousands(n as i64)
                    }
                    Template::CountValues(param, conds) => {
                        let mut seen: Vec<String> = Vec::new();
                        for (params, _) in matching(&conds) {
                            if let Some((_, v)) = params.iter().find(|(k, _)| *k == param) {
                                let v = v.to_string();
                                if !seen.contains(&v) {
                                    seen.push(v);
                                }
                            }
                        }
                        if seen.is_empty() {
                            return Err(fail("no computed cell matches"));
                        }
                        seen.len().to_string()
                    }
                };
                out.push_str(&text);
            }
        }
    }
    Ok(out)
}

/// Number words a hand-typed count may use.
const NUMBER_WORDS: [&str; 14] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "none", "all",
];

/// Verdict words that must not stand next to a hand-typed number.
const VERDICT_WORDS: [&str; 8] = [
    "holds",
    "hold",
    "mixed",
    "within noise",
    "underpowered",
    "reversed",
    "inconclusive",
    "significant",
];

fn is_count_word(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    !w.is_empty()
        && (w.chars().all(|c| c.is_ascii_digit() || c == ',')
            && w.starts_with(|c: char| c.is_ascii_digit())
            || NUMBER_WORDS.contains(&w.to_lowercase().as_str()))
}

fn has_digit(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit())
}

/// Hand-typed verdict numbers in a notes text, outside its templates: every count "N of M" / "N of the M"
/// (digits or the number words one … twelve, none, all) and every verdict word (holds, hold, mixed, within
/// noise, underpowered, reversed, inconclusive, significant) with a number among the four words before or
/// after it in the same sentence. Each finding is the words around it. Text that the report fills is
/// exempt, as is a number inside `` `code` ``.
pub fn hand_typed(notes: &str) -> Vec<String> {
    // The text outside templates and code spans, templates replaced by a word that is no number.
    let text: String = match parse(notes) {
        Ok(pieces) => pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Template(..) => " TEMPLATE ".to_string(),
            })
            .collect(),
        Err(_) => notes.to_string(),
    };
    let text: String = text
        .split('`')
        .enumerate()
        .map(|(i, s)| if i % 2 == 0 { s } else { " CODE " })
        .collect();
    // Sentences across wrapped lines: a word ending in `.`, `;` or `:` ends one, and so does a list item or
    // a blank line.
    let text = text.replace("\n- ", " \u{1} ").replace("\n\n", " \u{1} ");
    let mut sentences: Vec<Vec<&str>> = vec![Vec::new()];
    for w in text.split_whitespace() {
        if w != "\u{1}" {
            sentences.last_mut().expect("one").push(w);
        }
        if w == "\u{1}" || w.ends_with(['.', ';', ':']) {
            sentences.push(Vec::new());
        }
    }
    let mut found = Vec::new();
    for words in &sentences {
        let around =
            |i: usize, j: usize| words[i.saturating_sub(3)..(j + 4).min(words.len())].join(" ");
        for i in 0..words.len() {
            let w = words[i]
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            // "N of M", "N of the M"
            if w == "of" && i > 0 && is_count_word(words[i - 1]) {
                let next = match words.get(i + 1) {
                    Some(x) if x.eq_ignore_ascii_case("the") => words.get(i + 2),
                    x => x,
                };
                if next.is_some_and(|x| is_count_word(x) && !x.eq_ignore_ascii_case("all")) {
                    found.push(around(i, i + 1));
                    continue;
                }
            }
            let verdict = VERDICT_WORDS.iter().find(|v| {
                let parts: Vec<&str> = v.split(' ').collect();
                parts.iter().enumerate().all(|(k, p)| {
                    words.get(i + k).is_some_and(|x| {
                        x.trim_matches(|c: char| !c.is_alphanumeric())
                            .to_lowercase()
                            == *p
                    })
                })
            });
            if let Some(v) = verdict {
                let n = v.split(' ').count();
                let lo = i.saturating_sub(4);
                let hi = (i + n + 4).min(words.len());
                if words[lo..i]
                    .iter()
                    .chain(&words[i + n..hi])
                    .any(|x| has_digit(x))
                {
                    found.push(around(i, i + n - 1));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_and_bad_ones_are_named() {
        let p = parse("a {{verdict 2}} b {{mean mse where m=64, kernel=\"x\" | pct1}} {{count values of data}}")
            .unwrap();
        assert_eq!(
            p[1],
            Piece::Template("verdict 2".into(), Template::Verdict(2, None))
        );
        assert_eq!(
            p[3],
            Piece::Template(
                "mean mse where m=64, kernel=\"x\" | pct1".into(),
                Template::Stat(
                    Stat::Mean,
                    "mse".into(),
                    vec![("m".into(), "64".into()), ("kernel".into(), "x".into())],
                    Format::Pct(1)
                )
            )
        );
        for (bad, says) in [
            ("{{verdict}}", "template {{verdict}}: unknown template"),
            ("{{verdict 0}}", "not a positive integer"),
            ("{{verdict 1 | size}}", "unknown verdict field \"size\""),
            ("{{mean mse | pct}}", "unknown format \"pct\""),
            ("{{mean mse where m}}", "\"m\" is not P=V"),
            (
                "{{median mse}}",
                "template {{median mse}}: unknown template",
            ),
            ("text {{verdict 1", "unclosed \"{{verdict 1\""),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn check_names_the_wrong_name() {
        let params = vec!["m".to_string(), "seed".to_string()];
        let metrics = vec!["mse".to_string()];
        let known = vec![("m".to_string(), vec![Value::Int(64), Value::Int(128)])];
        let ok =
            "{{verdict 1}} {{mean mse where m=64 | sci2}} {{count values of m}} {{count cells}}";
        check(ok, 1, &params, &metrics, &known).unwrap();
        for (bad, says) in [
            ("{{verdict 2}}", "claim 2, but the file has 1 claim"),
            ("{{mean rmse}}", "unknown metric \"rmse\"; allowed: mse"),
            ("{{count values of d}}", "unknown parameter \"d\""),
            (
                "{{mean mse where m=65}}",
                "m = 65 is not a sweep value; allowed: 64, 128",
            ),
        ] {
            let e = check(bad, 1, &params, &metrics, &known).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn sd_and_ratio_render_from_the_cells() {
        let cell = |m: &str, seed: i64, t: f64| -> CellValues {
            (
                vec![
                    ("method".into(), Value::Str(m.into())),
                    ("seed".into(), Value::Int(seed)),
                ],
                vec![t],
            )
        };
        let cells = [
            cell("exact", 0, 10.0),
            cell("exact", 1, 14.0),
            cell("sketch", 0, 2.0),
            cell("sketch", 1, f64::NAN),
        ];
        let metrics = vec!["time".to_string()];
        let r = |notes: &str| render("f.toml", notes, &metrics, &cells, &[]);
        assert_eq!(
            r("{{sd time where method=exact | fixed2}}").unwrap(),
            format!("{:.2}", 8f64.sqrt())
        );
        assert_eq!(r("{{sd time where method=sketch}}").unwrap(), "0.000");
        assert_eq!(r("{{sum time | int}}").unwrap(), "26");
        assert_eq!(
            r("{{ratio time where method=exact over method=sketch | sig2}}×").unwrap(),
            "6.0×"
        );
        assert_eq!(
            r("{{ratio time where method=exact, seed=1 over seed=0 | fixed1}}").unwrap(),
            "2.3"
        );
        // a quoted value may hold a comma
        assert_eq!(
            parse_where("method=\"exact(kernel=a, depth=1)\", seed=2").unwrap(),
            [
                ("method".to_string(), "exact(kernel=a, depth=1)".to_string()),
                ("seed".to_string(), "2".to_string())
            ]
        );
        // the best mean over a parameter: exact's mean over seeds is 12, sketch's 2 (its NaN left out)
        assert_eq!(r("{{min mean time by method}}").unwrap(), "2.000");
        assert_eq!(r("{{max mean time by method | fixed1}}").unwrap(), "12.0");
        assert_eq!(
            r("{{max mean time by seed where method=exact | int}}").unwrap(),
            "14"
        );
        let e = r("{{min mean time by method where seed=7}}").unwrap_err();
        assert!(e.contains("no computed cell matches"), "{e}");
        let e = r("{{ratio time where method=exact over method=none}}").unwrap_err();
        assert!(e.contains("no computed cell matches"), "{e}");
        for (bad, says) in [
            ("{{ratio time where method=exact}}", "needs `over`"),
            ("{{ratio time}}", "a ratio is `ratio METRIC where"),
            (
                "{{ratio time where a=1 over b | fixed1}}",
                "\"b\" is not P=V",
            ),
            ("{{sd time | pct}}", "unknown format \"pct\""),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let params = vec!["method".to_string(), "seed".to_string()];
        let e = check(
            "{{ratio mse where method=exact over seed=0}}",
            0,
            &params,
            &metrics,
            &[],
        )
        .unwrap_err();
        assert!(e.contains("unknown metric \"mse\""), "{e}");
        let e = check("{{min mean time by d}}", 0, &params, &metrics, &[]).unwrap_err();
        assert!(e.contains("unknown parameter \"d\""), "{e}");
        let e = check(
            "{{ratio time where method=exact over d=0}}",
            0,
            &params,
            &metrics,
            &[],
        )
        .unwrap_err();
        assert!(e.contains("unknown parameter \"d\""), "{e}");
    }

    #[test]
    fn numbers_are_formatted() {
        assert_eq!(format_number(0.12345, Format::Pct(1)), "12.3 %");
        assert_eq!(format_number(0.12345, Format::Fixed(3)), "0.123");
        assert_eq!(format_number(12345.0, Format::Sci(2)), "1.2e4");
        assert_eq!(format_number(58.26, Format::Sig(3)), "58.3");
        assert_eq!(format_number(6.284, Format::Sig(3)), "6.28");
        assert_eq!(format_number(0.012345, Format::Sig(2)), "0.012");
        assert_eq!(format_number(12345.0, Format::Sig(2)), "12345");
        assert_eq!(format_number(12345.4, Format::Int), "12,345");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(-1000), "-1,000");
    }

    #[test]
    fn hand_typed_counts_and_verdicts_are_found() {
        assert_eq!(
            hand_typed("Smaller in 28 of 30 comparisons."),
            ["Smaller in 28 of 30 comparisons."]
        );
        assert_eq!(hand_typed("five of the six sets").len(), 1);
        // across a wrapped line, and not split at a decimal point
        assert_eq!(hand_typed("- it holds in 3 of\n  4 sets").len(), 2);
        assert!(hand_typed("load 1.0 of 2 CPUs; mean rank 17.8 of 18").is_empty());
        assert_eq!(hand_typed("claim 2 holds at m = 64").len(), 1);
        assert_eq!(hand_typed("it does not hold in 3 settings").len(), 1);
        // templates, code spans and numbers far from verdict words are fine
        assert!(
            hand_typed("{{verdict 1}}: {{verdict 1 | holds}} of {{verdict 1 | total}}").is_empty()
        );
        assert!(hand_typed("m = 1,024 landmarks; the claim holds everywhere.").is_empty());
        assert!(hand_typed("`28 of 30` is code").is_empty());
        assert!(hand_typed("one of all the sets").is_empty());
    }
}
