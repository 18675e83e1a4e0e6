//! The coverage data file `experiments/papers.toml` (rendered by `rfx report` at the top of
//! `results/README.md`) against the experiment files: every experiment it names exists, every experiment file
//! is named by at least one figure or table or listed as supplementary, and every status is an allowed one.

use std::path::{Path, PathBuf};

use rfx_harness::coverage::{Papers, Status, STATUSES};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the package is in the workspace")
        .to_path_buf()
}

fn papers() -> Papers {
    Papers::read(&root().join("experiments/papers.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The experiment files' stems (`experiments/*.toml` but the Cargo manifest and the coverage file).
fn experiment_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("experiments"))
        .expect("experiments/ is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|n| n != "Cargo" && n != "papers")
        .collect();
    names.sort();
    names
}

#[test]
fn every_experiment_named_in_papers_toml_exists() {
    let p = papers();
    let named: Vec<&str> = p
        .experiments()
        .into_iter()
        .chain(p.supplementary.iter().map(|s| s.experiment.as_str()))
        .collect();
    for e in named {
        assert!(
            root()
                .join("experiments")
                .join(format!("{e}.toml"))
                .is_file(),
            "experiments/papers.toml names `{e}`, but experiments/{e}.toml does not exist"
        );
    }
}

#[test]
fn every_experiment_file_is_in_papers_toml() {
    let p = papers();
    let names = experiment_names();
    assert!(
        names.len() >= 20,
        "found only {} experiment files",
        names.len()
    );
    let mapped = p.experiments();
    for n in &names {
        assert!(
            mapped.contains(&n.as_str()) || p.supplementary.iter().any(|s| &s.experiment == n),
            "experiments/{n}.toml is named by no figure or table of experiments/papers.toml and is not listed \
             as supplementary"
        );
    }
}

#[test]
fn statuses_are_allowed_and_every_paper_is_listed() {
    let p = papers();
    assert_eq!(p.paper.len(), 5, "the five papers");
    for paper in &p.paper {
        assert!(
            !paper.item.is_empty(),
            "{}: no figures or tables",
            paper.key
        );
        for it in &paper.item {
            // The enum admits only the allowed words; the word round-trips.
            assert!(STATUSES.contains(&it.status.word()), "{}", it.id);
            if it.status != Status::NotReproduced {
                assert!(!it.experiments.is_empty(), "{} {}", paper.key, it.id);
            }
        }
    }
}
