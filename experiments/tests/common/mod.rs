//! Helpers shared by the end-to-end tests of the `rfx` binary (each test file that uses them declares
//! `mod common;`; a file uses only some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `rfx` binary of this build.
pub fn rfx() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rfx"))
}

/// Runs `rfx` with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    rfx().args(args).output().expect("rfx runs")
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small sweep of the `selftest` kind: 8 dimensions × 3 seeds = 24 cells.
pub const SELFTEST: &str = r#"
[experiment]
name = "st"
kind = "selftest"
seed = 11

[sweep]
dim = [1, 2, 3, 4, 5, 6, 7, 8]
seed = [0, 1, 2]

[selftest]
draws = 2000
"#;

/// Rows of a cells.csv with the timing columns removed (timings are the trailing `*_s` columns, followed by
/// the commit and the load).
pub fn rows_without_timings(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let keep = header.iter().take_while(|h| !h.ends_with("_s")).count();
    std::iter::once(header[..keep].join(","))
        .chain(lines.map(|l| l.split(',').take(keep).collect::<Vec<_>>().join(",")))
        .collect()
}

/// The workspace root (the experiment files are in this package's directory, `experiments/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the package is in the workspace")
        .to_path_buf()
}

/// An experiment file as a TOML table (panics naming the file) and its `[experiment] paper` text ("" when
/// absent).
pub fn experiment_doc(path: &Path) -> (toml::Table, String) {
    let doc: toml::Table = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let paper = doc
        .get("experiment")
        .and_then(|e| e.get("paper"))
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_string();
    (doc, paper)
}

/// Every committed experiment file (`experiments/*.toml` but `papers.toml`), sorted.
pub fn experiment_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("experiments"))
        .expect("experiments/ is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "toml")
                && !p.ends_with("Cargo.toml")
                && !p.ends_with("papers.toml")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "found only {} experiment files",
        files.len()
    );
    files
}

/// The papers' text files (in `../shared/papers`, beside the clone) and the words of `[experiment] paper` that
/// name each.
pub const PAPERS: [(&str, &str); 5] = [
    (
        "ntk-random-features.txt",
        "Random Features for the Neural Tangent Kernel",
    ),
    (
        "ntk-sketching.txt",
        "Scaling Neural Tangent Kernels via Sketching",
    ),
    (
        "random-gegenbauer-features.txt",
        "Random Gegenbauer Features",
    ),
    ("ternary-random-features.txt", "Ternary Random Features"),
    (
        "random-features-survey.txt",
        "Random Features for Kernel Approximation",
    ),
];

/// A number written in a text: where it starts and ends (character indices), its digits as printed (grouping
/// commas dropped) and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub start: usize,
    pub end: usize,
    pub digits: String,
    pub value: f64,
}

/// The numbers written in `text` as digit strings, with their places: `72.06`, `16,384` (read as 16384),
/// `0.5`; a number immediately after a letter or a digit with a dot (a version, `x1`) is still taken, as its
/// digits are printed.
pub fn numbers_at(text: &str) -> Vec<Written> {
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let mut s = String::new();
        while i < b.len() {
            let c = b[i];
            let next_digit = b.get(i + 1).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() {
                s.push(c);
            } else if c == ',' && next_digit && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
                // a thousands separator: exactly three digits follow
                && b[i + 1..].iter().take(3).all(char::is_ascii_digit)
            {
                // grouping comma: dropped
            } else if c == '.' && next_digit && !s.contains('.') {
                s.push(c);
            } else {
                break;
            }
            i += 1;
        }
        if let Ok(value) = s.parse::<f64>() {
            out.push(Written {
                start,
                end: i,
                digits: s,
                value,
            });
        }
    }
    out
}

/// The numbers written in `text` as digit strings (see [`numbers_at`]).
pub fn numbers(text: &str) -> Vec<(String, f64)> {
    numbers_at(text)
        .into_iter()
        .map(|w| (w.digits, w.value))
        .collect()
}

/// Whether a number is specific enough to look up: a decimal fraction (`0.5`, `72.06`) or a whole number of
/// three or more digits (`150`, `16,384`). One- and two-digit whole numbers (section, figure, depth, a count of
/// seeds) are in every paper and prove nothing.
pub fn specific(s: &str) -> bool {
    s.contains('.') || s.len() >= 3
}

/// Whether `v` is among `numbers` (to 1e-9 relative).
pub fn printed(numbers: &[f64], v: f64) -> bool {
    numbers
        .iter()
        .any(|&p| (p - v).abs() <= 1e-9 * p.abs().max(v.abs()))
}

/// `../shared/papers` (the papers' full text), when it is beside the clone.
pub fn papers_dir() -> Option<PathBuf> {
    let dir = root().parent()?.join("shared/papers");
    dir.is_dir().then_some(dir)
}

/// The numbers printed in the papers that `paper` (an `[experiment] paper` text) names, or in all five when it
/// names none; `None` without `../shared/papers`.
pub fn paper_numbers(paper: &str) -> Option<Vec<f64>> {
    let dir = papers_dir()?;
    let named: Vec<&str> = PAPERS
        .iter()
        .filter(|(_, title)| paper.contains(title))
        .map(|(file, _)| *file)
        .collect();
    let files: Vec<&str> = if named.is_empty() {
        PAPERS.iter().map(|(file, _)| *file).collect()
    } else {
        named
    };
    Some(
        files
            .iter()
            .flat_map(|file| {
                let text = std::fs::read_to_string(dir.join(file))
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()));
                numbers_at(&text).into_iter().map(|w| w.value)
            })
            .collect(),
    )
}
