//! Every number the experiment files attribute to a paper is printed in that paper: the numbers of each
//! claim's `quote` and each `[[paper_value]]`'s `value` (as printed, or as a percentage) and its `ref` are
//! looked up among the numbers of the paper's text (`../shared/papers/*.txt`, the papers' full text beside the
//! project). An experiment's papers are those its `[experiment] paper` names (both, for a table that two
//! papers print); an experiment that names none may quote any of the five.
//!
//! Without `../shared/papers` (a clone on its own) the test says so and checks nothing; under CI (`CI` set),
//! where the folder is laid beside the clone, its absence is a failure.

use std::path::Path;

mod common;
use common::{experiment_doc, experiment_files, numbers, papers_dir, printed, specific, PAPERS};

/// The problems found (each a line naming the file, the claim or paper value, and the number not found) and
/// how many numbers were looked up.
fn check(papers_dir: &Path) -> (Vec<String>, usize) {
    let texts: Vec<(&str, Vec<f64>)> = PAPERS
        .iter()
        .map(|(file, name)| {
            let text = std::fs::read_to_string(papers_dir.join(file))
                .unwrap_or_else(|e| panic!("{}: {e}", papers_dir.join(file).display()));
            (*name, numbers(&text).into_iter().map(|(_, v)| v).collect())
        })
        .collect();
    let mut problems = Vec::new();
    let mut looked_up = 0;
    for path in experiment_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (doc, paper) = experiment_doc(&path);
        let mut own: Vec<f64> = Vec::new();
        let mut named = Vec::new();
        for (t, nums) in &texts {
            if paper.contains(t) {
                own.extend(nums);
                named.push(*t);
            }
        }
        if named.is_empty() {
            own = texts.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        }
        let papers = if named.is_empty() {
            "no paper".to_string()
        } else {
            named.join(" / ")
        };
        let list = |key: &str| -> Vec<toml::Table> {
            doc.get(key)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|x| x.as_table().cloned()).collect())
                .unwrap_or_default()
        };
        for (k, claim) in list("claim").iter().enumerate() {
            let quote = claim.get("quote").and_then(|q| q.as_str()).unwrap_or("");
            for (s, v) in numbers(quote).into_iter().filter(|(s, _)| specific(s)) {
                looked_up += 1;
                if !printed(&own, v) {
                    problems.push(format!(
                        "{name}: claim {} quotes {s}, which {} does not print",
                        k + 1,
                        papers
                    ));
                }
            }
        }
        for (k, pv) in list("paper_value").iter().enumerate() {
            if pv
                .get("source")
                .and_then(|s| s.as_str())
                .is_some_and(|s| s != "paper")
            {
                continue; // a number of another source (a reference implementation's run), said so in the table
            }
            let value = pv
                .get("value")
                .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
            if let Some(v) = value {
                looked_up += 1;
                if !(printed(&own, v) || printed(&own, v * 100.0) || printed(&own, v / 100.0)) {
                    problems.push(format!(
                        "{name}: paper_value {} has value {v}, which {} does not print (nor as a percentage)",
                        k + 1,
                        papers
                    ));
                }
            }
            let reference = pv.get("ref").and_then(|q| q.as_str()).unwrap_or("");
            for (s, v) in numbers(reference).into_iter().filter(|(s, _)| specific(s)) {
                looked_up += 1;
                if !printed(&own, v) {
                    problems.push(format!(
                        "{name}: paper_value {} cites {s} in its ref, which {} does not print",
                        k + 1,
                        papers
                    ));
                }
            }
        }
    }
    (problems, looked_up)
}

#[test]
fn every_quoted_number_is_printed_in_its_paper() {
    let Some(dir) = papers_dir() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI lays ../shared/papers beside the clone, but it is missing"
        );
        eprintln!("skipped: ../shared/papers (the papers' text) is not beside this clone");
        return;
    };
    let (problems, looked_up) = check(&dir);
    // 102 claims and 116 paper values: far more numbers than this, unless the files stopped being read
    assert!(looked_up >= 200, "only {looked_up} numbers looked up");
    assert!(
        problems.is_empty(),
        "{} numbers attributed to a paper are not printed in it:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_planted_wrong_number_is_found() {
    let Some(dir) = papers_dir() else {
        eprintln!("skipped: ../shared/papers is not beside this clone");
        return;
    };
    // the NTK-sketching paper's Table 1 prints 67.58 / 70.46 / 72.06; 70.13 (once quoted here) is not in it
    let text = std::fs::read_to_string(dir.join("ntk-sketching.txt")).unwrap();
    let nums: Vec<f64> = numbers(&text).into_iter().map(|(_, v)| v).collect();
    assert!(printed(&nums, 72.06) && printed(&nums, 16384.0) && printed(&nums, 67.58));
    assert!(!printed(&nums, 70.13) && !printed(&nums, 66.02));
    let quoted = numbers("Table 1: 66.02 %, 67.58 % at m = 2,048 … 16,384 (§5.2)");
    let missing: Vec<&str> = quoted
        .iter()
        .filter(|(s, v)| specific(s) && !printed(&nums, *v))
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(missing, ["66.02", "2048"]);
}

#[test]
fn numbers_are_read_as_printed() {
    let n: Vec<String> = numbers("16,384 and 0.7047, 12 images; v1.2.3; 3,4 and 1,000,000")
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(
        n,
        ["16384", "0.7047", "12", "1.2", "3", "3", "4", "1000000"]
    );
}
