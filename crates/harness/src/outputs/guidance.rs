//! `[[guidance]]`: "which method when" sentences computed from the cells (see [`GuidanceSpec`]).
//!
//! Per row and value of `along`, group A's best member (by mean) is compared with each member of group B by
//! an exact two-sided sign test over the blocks where both have a value ([`sign_test_p`]), and the p-values
//! of one row are adjusted together by Holm's step-down ([`holm_adjust`]). The verdict at one `along` value:
//! *wins* (significantly better than every member of B), *loses* (some member significantly better), or *no
//! significant difference*. The sentence gives the `along` values of each verdict — as a threshold ("for
//! `m` ≤ 256") when the wins are the smallest or the largest values — and, beside each, the blocks, the
//! adjusted p-value and the means.

use std::fmt::Write as _;

use super::{entry, passes_filter};
use crate::config::Value;
use crate::results::{Layout, Row};
use crate::spec::{Better, GuidanceSpec};
use crate::stats::{holm_adjust, sign_test_p};

/// A group's members at one (row, along): per member, its values by block and its cost values.
type Members = Vec<(String, Vec<(String, f64, Vec<f64>)>)>;

/// One comparison of A's representative with one member of B.
struct Test {
    along: usize,
    member: String,
    /// Blocks where A is better, where the member is better, and the paired blocks.
    a_ahead: usize,
    b_ahead: usize,
    paired: usize,
    p: f64,
    /// Means of the metric and of the costs of the member over the paired blocks.
    b_mean: Vec<f64>,
}

/// The verdict at one value of `along`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Wins,
    Loses,
    Level,
}

/// A number in a sentence: three significant digits, scientific outside [0.01, 10⁴).
fn short(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if (0.01..10_000.0).contains(&a) {
        let digits = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.2e}")
    }
}

/// A p-value in a sentence.
fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// Means of the metric and the costs over values.
fn means(vals: &[(f64, Vec<f64>)]) -> Vec<f64> {
    let n = vals.len().max(1) as f64;
    let k = vals.first().map_or(0, |v| v.1.len());
    let mut out = vec![vals.iter().map(|v| v.0).sum::<f64>() / n];
    for c in 0..k {
        out.push(vals.iter().map(|v| v.1[c]).sum::<f64>() / n);
    }
    out
}

/// The text of a group member: its values, with the parameter names when it has several.
fn member_name(keys: &[String], values: &[String]) -> String {
    if values.len() == 1 {
        values[0].clone()
    } else {
        keys.iter()
            .zip(values)
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A `[[guidance]]` question and its generated answers as markdown (see [`GuidanceSpec`]).
pub fn guidance_markdown(t: &GuidanceSpec, layout: &Layout, rows: &[Row]) -> String {
    let pidx = |name: &str| layout.params.iter().position(|p| p == name);
    let midx = |name: &str| layout.metrics.iter().position(|m| m == name);
    let Some(mi) = midx(&t.metric) else {
        return String::new();
    };
    let cost_idx: Vec<usize> = t.costs.iter().filter_map(|c| midx(c)).collect();
    let row_idx: Vec<usize> = t.rows.iter().filter_map(|r| pidx(r)).collect();
    let along = t.along.as_deref().and_then(pidx);
    let a_keys: Vec<String> = t.a.iter().map(|(k, _)| k.clone()).collect();
    let b_keys: Vec<String> = match &t.b {
        Some(b) => b.iter().map(|(k, _)| k.clone()).collect(),
        None => a_keys.clone(),
    };
    let a_idx: Vec<usize> = a_keys.iter().filter_map(|k| pidx(k)).collect();
    let b_idx: Vec<usize> = b_keys.iter().filter_map(|k| pidx(k)).collect();
    let block_idx: Vec<usize> = (0..layout.params.len())
        .filter(|i| {
            !row_idx.contains(i) && Some(*i) != along && !a_idx.contains(i) && !b_idx.contains(i)
        })
        .collect();
    // per row combination, per along value: group A's and group B's members
    type Alongs = Vec<(String, (Members, Members))>;
    let mut combos: Vec<(Vec<String>, Alongs)> = Vec::new();
    for r in rows.iter().filter(|r| passes_filter(layout, r, &t.filter)) {
        let m = r.metrics(layout);
        let v = m[mi];
        let costs: Vec<f64> = cost_idx.iter().map(|&c| m[c]).collect();
        if !v.is_finite() || costs.iter().any(|c| !c.is_finite()) {
            continue;
        }
        let in_a = passes_filter(layout, r, &t.a);
        let in_b = !in_a
            && match &t.b {
                Some(b) => passes_filter(layout, r, b),
                None => true,
            };
        if !(in_a || in_b) {
            continue;
        }
        let (keys, idx) = if in_a {
            (&a_keys, &a_idx)
        } else {
            (&b_keys, &b_idx)
        };
        let member = member_name(
            keys,
            &idx.iter().map(|&i| r.0[i].clone()).collect::<Vec<_>>(),
        );
        let block = block_idx
            .iter()
            .map(|&i| format!("{}={}", layout.params[i], r.0[i]))
            .collect::<Vec<_>>()
            .join(";");
        let combo: Vec<String> = row_idx.iter().map(|&i| r.0[i].clone()).collect();
        let at = along.map(|a| r.0[a].clone()).unwrap_or_default();
        let alongs = entry(&mut combos, combo, Vec::new);
        let groups = entry(alongs, at, || (Vec::new(), Vec::new()));
        let side = if in_a { &mut groups.0 } else { &mut groups.1 };
        entry(side, member, Vec::new).push((block, v, costs));
    }
    let sign = if t.better == Better::Lower { 1.0 } else { -1.0 };
    let mut out = format!("**{}**\n\n", t.question);
    let along_name = t.along.clone().unwrap_or_default();
    let mut any = false;
    for (combo, alongs) in &mut combos {
        // along values in numeric order where they are numbers
        alongs.sort_by(|x, y| match (x.0.parse::<f64>(), y.0.parse::<f64>()) {
            (Ok(a), Ok(b)) => a.total_cmp(&b),
            _ => std::cmp::Ordering::Equal,
        });
        let mut tests: Vec<Test> = Vec::new();
        // per along value: A's representative and its means over all its blocks
        let mut reps: Vec<Option<(String, Vec<f64>)>> = Vec::new();
        for (ai, (_, (ga, gb))) in alongs.iter().enumerate() {
            let best = ga
                .iter()
                .map(|(name, vals)| {
                    let mv: Vec<(f64, Vec<f64>)> =
                        vals.iter().map(|(_, v, c)| (*v, c.clone())).collect();
                    (name, vals, means(&mv))
                })
                .min_by(|x, y| {
                    (sign * x.2[0])
                        .total_cmp(&(sign * y.2[0]))
                        .then(x.0.cmp(y.0))
                });
            let Some((a_name, a_vals, a_means)) = best else {
                reps.push(None);
                continue;
            };
            reps.push(Some((a_name.clone(), a_means)));
            for (b_name, b_vals) in gb {
                let mut a_ahead = 0;
                let mut b_ahead = 0;
                let mut paired = Vec::new();
                for (blk, av, _) in a_vals {
                    if let Some((_, bv, bc)) = b_vals.iter().find(|(k, ..)| k == blk) {
                        if sign * av < sign * bv {
                            a_ahead += 1;
                        } else if sign * bv < sign * av {
                            b_ahead += 1;
                        }
                        paired.push((*bv, bc.clone()));
                    }
                }
                if paired.is_empty() {
                    continue;
                }
                tests.push(Test {
                    along: ai,
                    member: b_name.clone(),
                    a_ahead,
                    b_ahead,
                    paired: paired.len(),
                    p: sign_test_p(a_ahead, b_ahead),
                    b_mean: means(&paired),
                });
            }
        }
        if reps.iter().all(Option::is_none) {
            continue;
        }
        any = true;
        let adj = holm_adjust(&tests.iter().map(|x| x.p).collect::<Vec<_>>());
        let label = if combo.is_empty() {
            "all".to_string()
        } else {
            combo.join(", ")
        };
        let mut verdicts: Vec<(usize, Verdict)> = Vec::new();
        let mut details: Vec<String> = Vec::new();
        for (ai, rep) in reps.iter().enumerate() {
            let Some((a_name, a_means)) = rep else {
                continue;
            };
            let mine: Vec<(usize, &Test)> = tests
                .iter()
                .enumerate()
                .filter(|(_, x)| x.along == ai)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let sig = |i: usize| adj[i] <= t.alpha;
            let losing: Vec<&(usize, &Test)> = mine
                .iter()
                .filter(|(i, x)| sig(*i) && x.b_ahead > x.a_ahead)
                .collect();
            let verdict = if !losing.is_empty() {
                Verdict::Loses
            } else if mine.iter().all(|(i, x)| sig(*i) && x.a_ahead > x.b_ahead) {
                Verdict::Wins
            } else {
                Verdict::Level
            };
            // the member quoted: the strongest of the losses; else, among the members A does not significantly
            // beat (all of them for a win), the one with the largest adjusted p, ties to the best mean
            let closest = |x: &&(usize, &Test), y: &&(usize, &Test)| {
                adj[x.0]
                    .total_cmp(&adj[y.0])
                    .then((sign * y.1.b_mean[0]).total_cmp(&(sign * x.1.b_mean[0])))
            };
            let quoted: &(usize, &Test) = match verdict {
                Verdict::Loses => losing
                    .iter()
                    .copied()
                    .min_by(|x, y| adj[x.0].total_cmp(&adj[y.0]))
                    .unwrap_or(&mine[0]),
                Verdict::Wins => mine.iter().max_by(closest).unwrap_or(&mine[0]),
                Verdict::Level => mine
                    .iter()
                    .filter(|(i, x)| !(sig(*i) && x.a_ahead > x.b_ahead))
                    .max_by(closest)
                    .unwrap_or(&mine[0]),
            };
            let (qi, q) = (quoted.0, quoted.1);
            let values = |m: &[f64]| {
                let mut s = format!("{} {}", t.metric, short(m[0]));
                for (c, v) in t.costs.iter().zip(&m[1..]) {
                    let _ = write!(s, ", {c} {}", short(*v));
                }
                s
            };
            let at = if t.along.is_some() {
                format!("{along_name} = {}: ", alongs[ai].0)
            } else {
                String::new()
            };
            let others = mine.len();
            let ahead = mine
                .iter()
                .filter(|(i, x)| sig(*i) && x.a_ahead > x.b_ahead)
                .count();
            let text = match verdict {
                Verdict::Wins => format!(
                    "{at}{a_name} wins against each of {others} (the closest, {}: {a_name} ahead in {} of {} blocks, \
                     adjusted p = {}; {} vs {})",
                    q.member,
                    q.a_ahead,
                    q.paired,
                    p_text(adj[qi]),
                    values(a_means),
                    values(&q.b_mean)
                ),
                Verdict::Loses => format!(
                    "{at}{a_name} loses to {} of {others}, e.g. {} (ahead of {a_name} in {} of {} blocks, adjusted p = {}; \
                     {} vs {}), and is significantly ahead of {ahead} of {others}",
                    losing.len(),
                    q.member,
                    q.b_ahead,
                    q.paired,
                    p_text(adj[qi]),
                    values(a_means),
                    values(&q.b_mean)
                ),
                Verdict::Level => format!(
                    "{at}{a_name}: no significant difference from {} ({a_name} ahead in {} of {} blocks, behind in \
                     {}, adjusted p = {}; {} vs {}), significantly ahead of {ahead} of {others}",
                    q.member,
                    q.a_ahead,
                    q.paired,
                    q.b_ahead,
                    p_text(adj[qi]),
                    values(a_means),
                    values(&q.b_mean)
                ),
            };
            verdicts.push((ai, verdict));
            details.push(text);
        }
        let mut rep_names: Vec<&str> = Vec::new();
        for (n, _) in reps.iter().flatten() {
            if !rep_names.contains(&n.as_str()) {
                rep_names.push(n);
            }
        }
        let a_text = if rep_names.len() == 1 {
            rep_names[0].to_string()
        } else {
            format!("A (best of {})", rep_names.join(", "))
        };
        let summary = if t.along.is_some() {
            let values_of = |v: Verdict| -> Vec<usize> {
                verdicts
                    .iter()
                    .filter(|(_, x)| *x == v)
                    .map(|(i, _)| *i)
                    .collect()
            };
            let list = |idx: &[usize]| {
                idx.iter()
                    .map(|&i| alongs[i].0.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let all: Vec<usize> = verdicts.iter().map(|(i, _)| *i).collect();
            let wins = values_of(Verdict::Wins);
            let losses = values_of(Verdict::Loses);
            let numeric = alongs.iter().all(|(v, _)| v.parse::<f64>().is_ok());
            let mut s = if wins.is_empty() {
                format!("{a_text} wins at no `{along_name}`")
            } else if wins.len() == all.len() {
                format!("{a_text} wins at every `{along_name}` ({})", list(&wins))
            } else if numeric && all.starts_with(&wins) {
                format!(
                    "{a_text} wins for `{along_name}` ≤ {} and not beyond",
                    alongs[*wins.last().unwrap_or(&0)].0
                )
            } else if numeric && all.ends_with(&wins) {
                format!(
                    "{a_text} wins for `{along_name}` ≥ {} and not below",
                    alongs[wins[0]].0
                )
            } else {
                format!("{a_text} wins at `{along_name}` = {}", list(&wins))
            };
            if !losses.is_empty() {
                let _ = write!(s, "; loses at `{along_name}` = {}", list(&losses));
            }
            s
        } else {
            match verdicts.first().map(|v| v.1) {
                Some(Verdict::Wins) => format!("{a_text} wins"),
                Some(Verdict::Loses) => format!("{a_text} loses"),
                _ => "no significant difference".to_string(),
            }
        };
        let _ = writeln!(out, "- **{label}**: {summary} — {}.", details.join("; "));
    }
    if !any {
        out.push_str("(no cells of group A)\n");
    }
    let group = |f: &[(String, Vec<Value>)]| {
        f.iter()
            .map(|(k, v)| {
                format!(
                    "{k} ∈ {{{}}}",
                    v.iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let b_text = match &t.b {
        Some(b) => group(b),
        None => format!("every other {}", b_keys.join(" × ")),
    };
    let blocks: Vec<&str> = block_idx
        .iter()
        .map(|&i| layout.params[i].as_str())
        .collect();
    let _ = writeln!(
        out,
        "\nA = {} (its best member by mean at each {}), B = {b_text}; `{}`, {} is better. \"Wins\": better than \
         every member of B by an exact two-sided sign test over the {} blocks where both have a value, after \
         Holm's correction over the row's tests (α = {}); \"loses\": some member of B is significantly better; \
         otherwise no significant difference. Beside each verdict: the closest (or, for a loss, the strongest) \
         member of B with the blocks where each is ahead, the adjusted p-value and the means over the blocks.\n",
        group(&t.a),
        if t.along.is_some() {
            format!("`{along_name}`")
        } else {
            "row".to_string()
        },
        t.metric,
        if t.better == Better::Lower {
            "lower"
        } else {
            "higher"
        },
        if blocks.is_empty() {
            "(single)".to_string()
        } else {
            blocks.join(" × ")
        },
        t.alpha
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            params: vec!["kernel".into(), "method".into(), "m".into(), "seed".into()],
            metrics: vec!["err".into(), "time".into()],
            items: vec![],
            timings: vec!["time_s".into()],
            nan_metrics: vec![],
        }
    }

    fn row(kernel: &str, method: &str, m: usize, seed: usize, err: f64, time: f64) -> Row {
        Row(vec![
            kernel.into(),
            method.into(),
            m.to_string(),
            seed.to_string(),
            err.to_string(),
            time.to_string(),
            String::new(),
            "1".into(),
            String::new(),
            String::new(),
        ])
    }

    fn spec(b: Option<Vec<(String, Vec<Value>)>>) -> GuidanceSpec {
        GuidanceSpec {
            question: "Below which m does ny win?".into(),
            rows: vec!["kernel".into()],
            along: Some("m".into()),
            a: vec![("method".into(), vec![Value::Str("ny".into())])],
            b,
            metric: "err".into(),
            better: Better::Lower,
            costs: vec!["time".into()],
            alpha: 0.05,
            filter: Vec::new(),
        }
    }

    /// ny beats rff and orf in all 8 seeds at m = 64; at m = 256 it is ahead in 4 of 8 against rff; at
    /// m = 1024 orf is ahead of it in every seed.
    fn cells() -> Vec<Row> {
        let mut rows = Vec::new();
        for seed in 0..8 {
            let s = seed as f64 * 1e-3;
            rows.push(row("g", "ny", 64, seed, 0.1 + s, 2.0));
            rows.push(row("g", "rff", 64, seed, 0.3 + s, 1.0));
            rows.push(row("g", "orf", 64, seed, 0.2 + s, 1.0));
            rows.push(row("g", "ny", 256, seed, 0.1, 2.0));
            rows.push(row(
                "g",
                "rff",
                256,
                seed,
                if seed % 2 == 0 { 0.05 } else { 0.15 },
                1.0,
            ));
            rows.push(row("g", "orf", 256, seed, 0.2, 1.0));
            rows.push(row("g", "ny", 1024, seed, 0.1, 2.0));
            rows.push(row("g", "rff", 1024, seed, 0.3, 1.0));
            rows.push(row("g", "orf", 1024, seed, 0.05, 1.0));
            // another kernel without ny: no sentence
            rows.push(row("h", "rff", 64, seed, 0.3, 1.0));
        }
        rows
    }

    #[test]
    fn verdicts_follow_the_sign_tests_with_holm() {
        let md = guidance_markdown(&spec(None), &layout(), &cells());
        // 6 tests: 8 of 8 blocks gives p = 2/256 = 0.0078125; Holm multiplies the smallest by 6, 5, 4, ...
        // m = 64: both at p = 0.0078, adjusted 6 × 0.0078 = 0.047 ≤ 0.05 -> wins
        assert!(
            md.contains("m = 64: ny wins against each of 2 (the closest, "),
            "{md}"
        );
        assert!(
            md.contains("ahead in 8 of 8 blocks, adjusted p = 0.047"),
            "{md}"
        );
        // m = 256: 4 of 8 against rff (p = 1) -> no significant difference quoted with rff
        assert!(
            md.contains("m = 256: ny: no significant difference from rff (ny ahead in 4 of 8 blocks, behind in 4, adjusted p = 1.000; err 0.100, time 2.00 vs err 0.100, time 1.00), significantly ahead of 1 of 2"),
            "{md}"
        );
        // m = 1024: orf ahead in 8 of 8 -> loses
        assert!(
            md.contains("m = 1024: ny loses to 1 of 2, e.g. orf (ahead of ny in 8 of 8 blocks"),
            "{md}"
        );
        // ... while it beats rff there (8 of 8, adjusted p = 0.047)
        assert!(
            md.contains("err 0.100, time 2.00 vs err 0.0500, time 1.00), and is significantly ahead of 1 of 2"),
            "{md}"
        );
        assert!(
            md.contains("- **g**: ny wins for `m` ≤ 64 and not beyond; loses at `m` = 1024 —"),
            "{md}"
        );
        // the means beside: ny at m = 1024 has err 0.1 and time 2, orf err 0.05 and time 1
        assert!(
            md.contains("err 0.100, time 2.00 vs err 0.0500, time 1.00)"),
            "{md}"
        );
        assert!(!md.contains("**h**"), "{md}");
    }

    #[test]
    fn too_few_blocks_cannot_win() {
        // 5 seeds all won: the sign test's p = 2/32 = 0.0625 > 0.05 even before Holm -> no claim of a win
        let rows: Vec<Row> = cells()
            .into_iter()
            .filter(|r| r.0[3].parse::<usize>().unwrap_or(0) < 5 && r.0[2] == "64")
            .collect();
        let md = guidance_markdown(&spec(None), &layout(), &rows);
        assert!(md.contains("ny wins at no `m`"), "{md}");
        assert!(
            md.contains("m = 64: ny: no significant difference from"),
            "{md}"
        );
    }

    #[test]
    fn an_explicit_group_b_and_a_pair_of_budgets() {
        // A = ny at m = 64 against B = orf at m = 1024, no along: orf ahead in every seed
        let mut t = spec(Some(vec![
            ("method".into(), vec![Value::Str("orf".into())]),
            ("m".into(), vec![Value::Int(1024)]),
        ]));
        t.along = None;
        t.a.push(("m".into(), vec![Value::Int(64)]));
        let md = guidance_markdown(&t, &layout(), &cells());
        assert!(
            md.contains("- **g**: method = ny, m = 64 loses — method = ny, m = 64 loses to 1 of 1, e.g. method = orf, m = 1024 (ahead of method = ny, m = 64 in 8 of 8 blocks, adjusted p = 0.008"),
            "{md}"
        );
        // higher is better flips it
        t.better = Better::Higher;
        let md = guidance_markdown(&t, &layout(), &cells());
        assert!(md.contains("- **g**: method = ny, m = 64 wins —"), "{md}");
    }
}
