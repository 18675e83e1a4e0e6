//! The coverage table at the top of the results tree's README: every numbered figure and table of the papers
//! an application reproduces, each with its status and the experiments it maps to, read from a data file
//! (rfx: `experiments/papers.toml`) with serde.
//!
//! ```toml
//! supplementary = [{ experiment = "name", why = "what it adds" }]   # experiments that map to no item
//!
//! [[paper]]
//! key = "rgf"                                   # short name, unique
//! title = "Han, Zandieh & Avron, Random Gegenbauer Features, ICML 2022"
//!
//! [[paper.item]]
//! id = "Table 2"                                # the paper's number (main text or appendix)
//! what = "Kernel ridge regression, Gaussian kernel"
//! status = "stand-in"                           # reproduced | stand-in | reduced | not-reproduced
//! detail = "Protein is the paper's; the other three sets are stand-ins: …"
//! experiments = ["gaussian-krr"]
//! ```
//!
//! `detail` is required except for `reproduced` (stand-in: which data stand in; reduced: how — fewer data
//! sets, smaller n or m, fewer seeds; not-reproduced: why), and `experiments` is required except for
//! `not-reproduced`. The module knows no paper: it checks the file's shape and renders it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::error::AppError;

/// The allowed values of `status`, in the order of [`Status`].
pub const STATUSES: [&str; 4] = ["reproduced", "stand-in", "reduced", "not-reproduced"];

/// How far a figure or table is reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// On the paper's data and sizes.
    Reproduced,
    /// On stand-in data (`detail` names it).
    StandIn,
    /// On the paper's data, but smaller (`detail` says how).
    Reduced,
    /// Not reproduced (`detail` says why).
    NotReproduced,
}

impl Status {
    /// The word of the data file.
    pub fn word(self) -> &'static str {
        match self {
            Status::Reproduced => STATUSES[0],
            Status::StandIn => STATUSES[1],
            Status::Reduced => STATUSES[2],
            Status::NotReproduced => STATUSES[3],
        }
    }
}

/// One numbered figure or table of a paper.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// Its number in the paper, e.g. `Figure 2` or `Table VII`.
    pub id: String,
    /// What it shows.
    pub what: String,
    /// How far it is reproduced.
    pub status: Status,
    /// The stand-in data, the reduction, or why it is not reproduced (optional for `reproduced`).
    #[serde(default)]
    pub detail: String,
    /// The experiments (file stems) it maps to.
    #[serde(default)]
    pub experiments: Vec<String>,
}

/// One paper and its figures and tables.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Short unique name.
    pub key: String,
    /// Authors, title, venue.
    pub title: String,
    /// Every numbered figure and table, in the paper's order.
    #[serde(default)]
    pub item: Vec<Item>,
}

/// An experiment that reproduces no figure or table of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Supplementary {
    /// The experiment (file stem).
    pub experiment: String,
    /// What it adds.
    pub why: String,
}

/// The data file: the papers and the supplementary experiments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Papers {
    /// Experiments listed without an item.
    #[serde(default)]
    pub supplementary: Vec<Supplementary>,
    /// The papers.
    pub paper: Vec<Paper>,
}

impl Papers {
    /// Parses and checks the text of the data file (`file` names it in errors).
    pub fn parse(file: &str, text: &str) -> Result<Papers, String> {
        let papers: Papers = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            match e.span() {
                Some(span) => format!("{file}:{}: {msg}", crate::config::line_of(text, span.start)),
                None => format!("{file}: {msg}"),
            }
        })?;
        papers.check().map_err(|m| format!("{file}: {m}"))?;
        Ok(papers)
    }

    /// Reads and checks the data file.
    pub fn read(path: &Path) -> Result<Papers, AppError> {
        let text = std::fs::read_to_string(path).map_err(|e| AppError::io(path, e))?;
        Papers::parse(&path.display().to_string(), &text).map_err(AppError::usage)
    }

    /// The rules serde cannot express: unique keys and ids, `detail` and `experiments` where the status
    /// needs them, no experiment both mapped and supplementary.
    pub fn check(&self) -> Result<(), String> {
        let mut keys = Vec::new();
        for p in &self.paper {
            if p.key.trim().is_empty() || keys.contains(&&p.key) {
                return Err(format!("paper key \"{}\" is empty or repeated", p.key));
            }
            keys.push(&p.key);
            let mut ids = Vec::new();
            for it in &p.item {
                let at = format!("paper \"{}\", item \"{}\"", p.key, it.id);
                if it.id.trim().is_empty() || ids.contains(&&it.id) {
                    return Err(format!("{at}: id is empty or repeated"));
                }
                ids.push(&it.id);
                if it.status != Status::Reproduced && it.detail.trim().is_empty() {
                    let need = match it.status {
                        Status::StandIn => "the stand-in data",
                        Status::Reduced => {
                            "how it is reduced (fewer data sets, smaller n or m, fewer seeds)"
                        }
                        _ => "why it is not reproduced",
                    };
                    return Err(format!(
                        "{at}: status \"{}\" needs `detail`: {need}",
                        it.status.word()
                    ));
                }
                if it.status != Status::NotReproduced && it.experiments.is_empty() {
                    return Err(format!(
                        "{at}: status \"{}\" needs `experiments` (the experiments it maps to)",
                        it.status.word()
                    ));
                }
            }
        }
        for s in &self.supplementary {
            if self.experiments().contains(&s.experiment.as_str()) {
                return Err(format!(
                    "supplementary experiment \"{}\" is also mapped to an item",
                    s.experiment
                ));
            }
        }
        Ok(())
    }

    /// Every experiment named by an item, each once, in file order.
    pub fn experiments(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for e in self
            .paper
            .iter()
            .flat_map(|p| &p.item)
            .flat_map(|i| &i.experiments)
        {
            if !out.contains(&e.as_str()) {
                out.push(e);
            }
        }
        out
    }

    /// The coverage section in markdown. `anchors` maps an experiment to its section's anchor in the same
    /// README; an experiment without a section (not run in this tree) is named without a link.
    pub fn markdown(&self, anchors: &HashMap<String, String>) -> String {
        let link = |e: &str| match anchors.get(e) {
            Some(a) => format!("[{e}](#{a})"),
            None => format!("`{e}` (not in this tree)"),
        };
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let items: Vec<&Item> = self.paper.iter().flat_map(|p| &p.item).collect();
        let count = |s: Status| items.iter().filter(|i| i.status == s).count();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## Coverage: every figure and table of the papers\n\n{} numbered figures and tables: {} reproduced on \
             the paper's data, {} on stand-in data, {} reduced, {} not reproduced. *reproduced*: the paper's data \
             and sizes; *stand-in*: other data in place of the paper's (named); *reduced*: the paper's data, but \
             fewer data sets, smaller n or m, or fewer seeds; *not reproduced*: with the reason. Generated from \
             `experiments/papers.toml`.\n",
            items.len(),
            count(Status::Reproduced),
            count(Status::StandIn),
            count(Status::Reduced),
            count(Status::NotReproduced),
        );
        for p in &self.paper {
            let _ = writeln!(
                out,
                "**{}**\n\n| item | what | status | details | experiments |\n|---|---|---|---|---|",
                cell(&p.title)
            );
            for it in &p.item {
                let exps: Vec<String> = it.experiments.iter().map(|e| link(e)).collect();
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    cell(&it.id),
                    cell(&it.what),
                    it.status.word(),
                    cell(&it.detail),
                    if exps.is_empty() {
                        "—".to_string()
                    } else {
                        exps.join(", ")
                    }
                );
            }
            out.push('\n');
        }
        if !self.supplementary.is_empty() {
            let _ = writeln!(
                out,
                "Supplementary experiments (no figure or table of their own):\n"
            );
            for s in &self.supplementary {
                let _ = writeln!(out, "- {}: {}", link(&s.experiment), cell(&s.why));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
supplementary = [{ experiment = "extra", why = "a larger n" }]

[[paper]]
key = "p1"
title = "A paper | with a pipe"

[[paper.item]]
id = "Figure 1"
what = "an illustration"
status = "not-reproduced"
detail = "not an experiment"

[[paper.item]]
id = "Table 1"
what = "accuracy"
status = "stand-in"
detail = "set B for set A"
experiments = ["exp-a", "exp-b"]

[[paper.item]]
id = "Table 2"
what = "error"
status = "reproduced"
experiments = ["exp-a"]
"#;

    #[test]
    fn a_valid_file_renders_every_item_with_links_and_counts() {
        let p = Papers::parse("papers.toml", FILE).expect("valid");
        assert_eq!(p.experiments(), vec!["exp-a", "exp-b"]);
        let anchors: HashMap<String, String> = [("exp-a".to_string(), "a-title".to_string())]
            .into_iter()
            .collect();
        let md = p.markdown(&anchors);
        assert!(
            md.contains("3 numbered figures and tables: 1 reproduced on the paper's data, 1 on stand-in data, 0 reduced, 1 not reproduced"),
            "{md}"
        );
        assert!(md.contains("**A paper \\| with a pipe**"), "{md}");
        assert!(
            md.contains("| Figure 1 | an illustration | not-reproduced | not an experiment | — |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| Table 1 | accuracy | stand-in | set B for set A | [exp-a](#a-title), `exp-b` (not in this tree) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| Table 2 | error | reproduced |  | [exp-a](#a-title) |"),
            "{md}"
        );
        assert!(
            md.contains("- `extra` (not in this tree): a larger n"),
            "{md}"
        );
    }

    #[test]
    fn statuses_outside_the_allowed_set_are_refused_with_the_line() {
        let bad = FILE.replace("status = \"stand-in\"", "status = \"partial\"");
        let e = Papers::parse("papers.toml", &bad).expect_err("refused");
        let line = bad
            .lines()
            .position(|l| l.contains("\"partial\""))
            .expect("present")
            + 1;
        assert!(e.starts_with(&format!("papers.toml:{line}:")), "{e}");
        for s in STATUSES {
            assert!(e.contains(s), "{e}");
        }
    }

    #[test]
    fn unknown_keys_and_missing_details_are_refused() {
        let e = Papers::parse(
            "papers.toml",
            &FILE.replace("what = \"error\"", "wat = \"error\""),
        )
        .expect_err("refused");
        assert!(e.contains("wat") && e.contains("what"), "{e}");
        let e = Papers::parse(
            "papers.toml",
            &FILE.replace("detail = \"set B for set A\"\n", ""),
        )
        .expect_err("a stand-in needs its data named");
        assert!(e.contains("Table 1") && e.contains("stand-in data"), "{e}");
        let e = Papers::parse(
            "papers.toml",
            &FILE.replace("experiments = [\"exp-a\"]\n", ""),
        )
        .expect_err("a reproduced item needs its experiments");
        assert!(e.contains("Table 2") && e.contains("`experiments`"), "{e}");
        let e = Papers::parse(
            "papers.toml",
            &FILE.replace("id = \"Table 2\"", "id = \"Table 1\""),
        )
        .expect_err("ids are unique within a paper");
        assert!(e.contains("repeated"), "{e}");
        let e = Papers::parse("papers.toml", &FILE.replace("\"extra\"", "\"exp-b\""))
            .expect_err("an experiment is mapped or supplementary, not both");
        assert!(e.contains("exp-b"), "{e}");
    }
}
