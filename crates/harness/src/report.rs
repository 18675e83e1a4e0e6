//! `results/README.md`: the coverage table of the papers (when a data file for it is given, [`crate::coverage`]),
//! then one section per experiment found under the results root, rebuilt from each experiment's `config.toml`
//! and `cells.csv` (so it is never stale with respect to the CSVs); and the generated block of the project's
//! README, what the claims say by paper ([`readme_block`]), every claim under its verdict.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::coverage::Papers;
use crate::error::AppError;
use crate::folder::{experiment_folders, REPORT_FILE};
use crate::io::write_atomic;
use crate::kind::Kinds;
use crate::results::{summarize, Layout};

/// One claim as the README's verdict block lists it.
struct ClaimLine {
    /// The papers its experiment names ([`papers_of`]).
    papers: Vec<String>,
    /// Experiment name and its heading's anchor in the report.
    experiment: String,
    anchor: String,
    /// The claim's text and its verdict word (with qualifiers).
    text: String,
    word: String,
}

/// What one pass over the results tree yields.
struct Collected {
    body: String,
    toc: String,
    anchors: HashMap<String, String>,
    count: usize,
    claims: Vec<ClaimLine>,
    /// Notes whose templates could not be filled (one line each).
    note_errors: Vec<String>,
}

/// Reads every experiment folder under `root` and builds its report section.
fn collect(root: &Path, kinds: &Kinds) -> Result<Collected, AppError> {
    let mut c = Collected {
        body: String::new(),
        toc: String::new(),
        anchors: HashMap::new(),
        count: 0,
        claims: Vec::new(),
        note_errors: Vec::new(),
    };
    // GitHub's heading anchors: lower case, punctuation other than `-` and `_` dropped, spaces to `-`;
    // a repeated anchor gets `-1`, `-2`, … in order of appearance.
    let mut seen_anchors: HashMap<String, usize> = HashMap::new();
    for (_, folder) in experiment_folders(root)? {
        let spec = match folder.spec(kinds) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("report: skipping {}: {e}", folder.dir().display());
                continue;
            }
        };
        if let Err(why) = folder.manifest_state() {
            // as for the other damaged files of a folder: a warning, and the section says so
            eprintln!(
                "report: warning: {why}; the section of {} is built without it",
                spec.name
            );
        }
        let layout = Layout::of(&spec);
        let bytes = folder.read_cells()?;
        if let Some(e) = layout.first_non_finite(&bytes) {
            return Err(AppError::usage(format!(
                "{}: {e}; recompute the cell with rfx run",
                folder.cells().display()
            )));
        }
        let Some((rows, _)) = layout.read(&bytes) else {
            eprintln!(
                "report: skipping {}: cells.csv columns do not match config.toml",
                folder.dir().display()
            );
            continue;
        };
        let summaries = summarize(&spec, &layout, &rows);
        let claim_verdicts = crate::outputs::claim_verdicts(&spec, &layout, &rows);
        // a quick run's cells are a subset of the sweep: templates naming values it leaves out cannot be
        // filled there, and its report shows the notes unfilled under a warning (as `rfx run` does); the
        // committed results' templates must all fill
        if let Err(e) = crate::outputs::rendered_notes(&spec, &layout, &rows, &claim_verdicts) {
            if !spec.quick {
                c.note_errors.push(e);
            }
        }
        let anchor = spec
            .title
            .to_lowercase()
            .replace(
                |c: char| !(c.is_alphanumeric() || matches!(c, ' ' | '-' | '_')),
                "",
            )
            .replace(' ', "-");
        let repeats = seen_anchors.entry(anchor.clone()).or_insert(0);
        let anchor = match *repeats {
            0 => anchor,
            k => format!("{anchor}-{k}"),
        };
        *repeats += 1;
        for (claim, v) in &claim_verdicts {
            c.claims.push(ClaimLine {
                papers: papers_of(&spec.paper),
                experiment: spec.name.clone(),
                anchor: anchor.clone(),
                text: claim.text.clone(),
                word: v.word.clone(),
            });
        }
        c.anchors.insert(spec.name.clone(), anchor.clone());
        let _ = writeln!(c.toc, "- [{}](#{anchor}) — `{}`", spec.title, spec.name);
        c.body.push_str(&crate::outputs::section(
            &spec,
            &layout,
            &summaries,
            &rows,
            &claim_verdicts,
            &folder,
        ));
        c.body.push('\n');
        c.count += 1;
    }
    Ok(c)
}

/// The first line of the README's generated block.
pub const README_BEGIN: &str = "<!-- verdicts:begin -->";
/// The last line of the README's generated block.
pub const README_END: &str = "<!-- verdicts:end -->";

/// Rebuilds `<root>/README.md` from every experiment folder under `root` (their kinds among `kinds`), with the
/// coverage table of `papers` (the data file of [`crate::coverage`]) at the top when given; returns the number
/// of experiments in it. With `readme` (the project's README), also rewrites its block between
/// [`README_BEGIN`] and [`README_END`] with [`readme_block`]. Nothing is computed. Notes whose templates
/// cannot be filled from the cells ([`crate::prose`]) are an error, and then nothing is written.
pub fn write_report(
    root: &Path,
    kinds: &Kinds,
    papers: Option<&Path>,
    readme: Option<&Path>,
) -> Result<usize, AppError> {
    let coverage = papers.map(Papers::read).transpose()?;
    let c = collect(root, kinds)?;
    if let Some(e) = c.note_errors.first() {
        return Err(AppError::usage(e.clone()));
    }
    let spliced = match readme {
        Some(path) => {
            let text = crate::io::read_input_text(path).map_err(|e| AppError::io(path, e))?;
            let new = splice_readme(&text, &verdict_block(&c.claims)).ok_or_else(|| {
                AppError::usage(format!(
                    "{}: no generated block ({README_BEGIN} … {README_END})",
                    path.display()
                ))
            })?;
            (new != text).then_some((path, new))
        }
        None => None,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# rfx results\n\nGenerated by `rfx report` from the CSVs under this folder; do not edit by hand. \
         Every number below is computed by this project. The paper's numbers, where shown, are quoted beside \
         ours for comparison only.\n\n`make reproduce` recomputes everything into `reproduced/` and compares it with \
         these numbers; `make verify` re-checks a sample of them in 15 minutes; `rfx run \
         experiments/<name>.toml` updates one experiment here.\n"
    );
    if let Some(cov) = &coverage {
        out.push_str(&cov.markdown(&c.anchors));
    }
    let verdicts: Vec<(String, String)> = c
        .claims
        .iter()
        .flat_map(|l| l.papers.iter().map(|p| (p.clone(), l.word.clone())))
        .collect();
    out.push_str(&verdict_summary(&verdicts));
    let _ = writeln!(out, "\n## Experiments\n\n{}", c.toc);
    out.push_str(&c.body);
    let path = root.join(REPORT_FILE);
    write_atomic(&path, out.as_bytes()).map_err(|e| AppError::io(&path, e))?;
    if let Some((path, new)) = spliced {
        write_atomic(path, new.as_bytes()).map_err(|e| AppError::io(path, e))?;
    }
    Ok(c.count)
}

/// The README's generated block for the results under `root`: what [`write_report`] writes between
/// [`README_BEGIN`] and [`README_END`] (for the test that the committed README is current).
pub fn readme_block(root: &Path, kinds: &Kinds) -> Result<String, AppError> {
    Ok(verdict_block(&collect(root, kinds)?.claims))
}

/// `text` with the lines between [`README_BEGIN`] and [`README_END`] replaced by `block`; `None` without
/// both markers in that order.
pub fn splice_readme(text: &str, block: &str) -> Option<String> {
    let begin = text.find(README_BEGIN)? + README_BEGIN.len();
    let end = begin + text[begin..].find(README_END)?;
    Some(format!("{}\n{}{}", &text[..begin], block, &text[end..]))
}

/// The verdict without its qualifiers: "holds; factor differs (timings unverified)" is "holds".
fn base_word(x: &str) -> &str {
    let x = x.split(';').next().unwrap_or(x);
    x.split(" (").next().unwrap_or(x)
}

/// What the claims say, by paper: the count of each verdict, then every claim by name under its verdict
/// (the negative ones first), linked to its experiment's section of `results/README.md`.
fn verdict_block(claims: &[ClaimLine]) -> String {
    const ORDER: [&str; 7] = [
        "does not hold",
        "mixed",
        "within noise",
        "underpowered",
        "not evaluated",
        "holds in part",
        "holds",
    ];
    let mut papers: Vec<&str> = Vec::new();
    for l in claims {
        for p in &l.papers {
            if !papers.contains(&p.as_str()) {
                papers.push(p);
            }
        }
    }
    let mut out = String::from(
        "<!-- generated by `rfx report` from the claims' verdicts in results/README.md; do not edit by hand -->\n",
    );
    for p in papers {
        let of: Vec<&ClaimLine> = claims
            .iter()
            .filter(|l| l.papers.iter().any(|x| x == p))
            .collect();
        let counts: Vec<String> = ORDER
            .iter()
            .filter_map(|w| {
                let n = of.iter().filter(|l| base_word(&l.word) == *w).count();
                (n > 0).then(|| format!("{w} {n}"))
            })
            .collect();
        let _ = writeln!(
            out,
            "\n**{p}** — {} claims: {}.\n",
            of.len(),
            counts.join(", ")
        );
        for w in ORDER {
            let lines: Vec<String> = of
                .iter()
                .filter(|l| base_word(&l.word) == w)
                .map(|l| {
                    let qualifier = if l.word == w {
                        String::new()
                    } else {
                        format!(": {}", l.word)
                    };
                    format!("{} ([{}]{qualifier})", l.text, l.experiment)
                })
                .collect();
            if !lines.is_empty() {
                let _ = writeln!(out, "- *{w}*: {}", lines.join("; "));
            }
        }
    }
    // The experiments' links, as Markdown link references (one per experiment, in order of appearance).
    out.push('\n');
    let mut linked: Vec<&str> = Vec::new();
    for l in claims {
        if !linked.contains(&l.experiment.as_str()) {
            linked.push(&l.experiment);
            let _ = writeln!(out, "[{}]: results/README.md#{}", l.experiment, l.anchor);
        }
    }
    out
}

/// The papers an experiment's `paper` field names: every title in `*…*` (an experiment that reproduces a table
/// two papers print names both, and its claims count under each), or the whole field when it has none.
fn papers_of(field: &str) -> Vec<String> {
    let parts: Vec<&str> = field.split('*').collect();
    // Odd parts closed by a later `*`.
    let titles: Vec<String> = (1..parts.len().saturating_sub(1))
        .step_by(2)
        .map(|i| parts[i].to_string())
        .collect();
    if titles.is_empty() {
        vec![field.to_string()]
    } else {
        titles
    }
}

/// The verdicts of every claim, counted by paper: one row per paper, one column per verdict.
fn verdict_summary(verdicts: &[(String, String)]) -> String {
    const WORDS: [&str; 7] = [
        "holds",
        "holds in part",
        "within noise",
        "underpowered",
        "mixed",
        "does not hold",
        "not evaluated",
    ];
    let mut papers: Vec<&str> = Vec::new();
    for (p, ..) in verdicts {
        if !papers.contains(&p.as_str()) {
            papers.push(p);
        }
    }
    let mut out = String::from(
        "## Verdicts by paper\n\nEvery claim of every experiment below, counted by its verdict (a test over seeds \
         per comparison, Holm-adjusted within each claim; suffixes such as \"(timings unverified)\" or \"; factor \
         differs\" are counted under the verdict they qualify; a ratio claim whose factor differs from the paper's \
         is at most \"holds in part\"; \"underpowered\": nothing decided and every test with df ≤ 2; an experiment \
         that reproduces a table two papers print counts its claims under both).\n\n\
         | paper | claims | holds | holds in part | within noise | underpowered | mixed | does not hold \
         | not evaluated |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in papers {
        let words: Vec<&str> = verdicts
            .iter()
            .filter(|v| v.0 == p)
            .map(|v| v.1.as_str())
            .collect();
        // "holds; factor differs (timings unverified)" counts as "holds".
        let count = |w: &str| words.iter().filter(|x| base_word(x) == w).count();
        let _ = write!(out, "| *{p}* | {} |", words.len());
        for w in WORDS {
            let _ = write!(out, " {} |", count(w));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_experiment_counts_under_every_paper_it_names() {
        let two = "Han et al., *A*, 2021 — Table 2; Zandieh et al., *B*, NeurIPS 2021 — Table 2";
        assert_eq!(papers_of(two), ["A", "B"]);
        assert_eq!(papers_of("X, *A*, 2021 — Fig. 1"), ["A"]);
        assert_eq!(papers_of("none (across papers)"), ["none (across papers)"]);
        // an unclosed `*` opens no title
        assert_eq!(papers_of("X, *A*, a *footnote"), ["A"]);
    }

    #[test]
    fn the_readme_block_lists_every_claim_under_its_verdict() {
        let line = |p: &str, t: &str, w: &str| ClaimLine {
            papers: vec![p.to_string()],
            experiment: "e".into(),
            anchor: "a".into(),
            text: t.into(),
            word: w.into(),
        };
        let block = verdict_block(&[
            line("P", "x", "holds"),
            line("P", "y", "does not hold"),
            line("P", "z", "holds in part; factor differs"),
        ]);
        assert!(
            block.contains("**P** — 3 claims: does not hold 1, holds in part 1, holds 1."),
            "{block}"
        );
        assert!(block.contains("- *does not hold*: y ([e])"), "{block}");
        assert!(block.contains("- *holds in part*: z ([e]: holds in part; factor differs)"));
        assert!(block.ends_with("\n[e]: results/README.md#a\n"), "{block}");
        let readme = format!("top\n{README_BEGIN}\nold\n{README_END}\nend\n");
        assert_eq!(
            splice_readme(&readme, "new\n").unwrap(),
            format!("top\n{README_BEGIN}\nnew\n{README_END}\nend\n")
        );
        assert!(splice_readme("no markers", "x").is_none());
    }

    #[test]
    fn qualified_words_count_under_their_base() {
        let v = |w: &str| ("P".to_string(), w.to_string());
        let md = verdict_summary(&[
            v("holds"),
            v("holds in part; factor differs"),
            v("holds in part; leaning against in 2; factor differs (underpowered: df = 2)"),
            v("underpowered (df = 1)"),
            v("mixed (timings unverified)"),
        ]);
        // claims, holds, holds in part, within noise, underpowered, mixed, does not hold, not evaluated
        assert!(
            md.contains("| *P* | 5 | 1 | 2 | 0 | 1 | 1 | 0 | 0 |"),
            "{md}"
        );
    }
}
