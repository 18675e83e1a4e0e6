//! No hand-typed number in prose (issue 56): every committed experiment's `notes` hold no verdict count or
//! verdict word next to a number outside their templates (`rfx_harness::prose::hand_typed`), every template
//! renders from the committed cells, the results' copy of the notes (`results/<name>/config.toml`, which the
//! report shows) is the experiment file's, and the README's generated block (what the claims say, by paper)
//! is what `rfx report` would write. Each check is also run on a planted stale text and must fail there.

use std::path::Path;

use rfx_harness::folder::ResultsFolder;
use rfx_harness::kind::Kinds;
use rfx_harness::results::Layout;
use rfx_harness::spec::Spec;

mod common;
use common::{experiment_files, root};

/// What is stale in the notes of `spec` against the committed cells of `results`: hand-typed verdict numbers,
/// templates that do not render, and a results copy of the notes that differs from the file's.
fn stale_notes(spec: &Spec, results: &Path, kinds: &Kinds) -> Vec<String> {
    let file = spec.file.display();
    let mut stale: Vec<String> = rfx_harness::prose::hand_typed(&spec.notes)
        .into_iter()
        .map(|s| format!("{file}: notes: hand-typed \"{s}\" (use a template, rfx_harness::prose)"))
        .collect();
    let folder = ResultsFolder::new(results.join(&spec.name));
    let layout = Layout::of(spec);
    let cells = folder
        .read_cells()
        .unwrap_or_else(|e| panic!("{file}: no committed cells: {e}"));
    let Some((rows, _)) = layout.read(&cells) else {
        return vec![format!("{file}: cells.csv columns do not match")];
    };
    let verdicts = rfx_harness::outputs::claim_verdicts(spec, &layout, &rows);
    if let Err(e) = rfx_harness::outputs::rendered_notes(spec, &layout, &rows, &verdicts) {
        stale.push(e);
    }
    match folder.spec(kinds) {
        Ok(recorded) if recorded.notes != spec.notes => stale.push(format!(
            "{file}: notes differ from {}'s (rfx run {file} refreshes it without computing)",
            folder.config().display()
        )),
        Ok(_) => {}
        Err(e) => stale.push(format!("{e}")),
    }
    stale
}

#[test]
fn notes_hold_no_hand_typed_verdict_numbers_and_their_templates_render() {
    let kinds = rfx_experiments::kinds::registry();
    let mut stale = Vec::new();
    for file in experiment_files() {
        let spec = Spec::load(&file, false, &kinds).unwrap_or_else(|e| panic!("{e}"));
        stale.extend(stale_notes(&spec, &root().join("results"), &kinds));
    }
    assert!(stale.is_empty(), "stale prose:\n{}", stale.join("\n"));
}

#[test]
fn a_planted_stale_number_fails() {
    let kinds = rfx_experiments::kinds::registry();
    let file = root().join("experiments/arccos-condition-number.toml");
    let source = std::fs::read_to_string(&file).expect("readable");
    let results = root().join("results");
    let plant = |from: &str, to: &str| -> Vec<String> {
        assert!(source.contains(from), "the planted text needs \"{from}\"");
        let spec = Spec::parse(&file, &source.replacen(from, to, 1), false, &kinds)
            .unwrap_or_else(|e| panic!("{e}"));
        stale_notes(&spec, &results, &kinds)
    };
    // a hand-typed count: also differs from the results' copy of the notes
    let stale = plant(
        "notes = \"\"\"",
        "notes = \"\"\"Smaller in 28 of 30 comparisons. ",
    );
    assert!(
        stale
            .iter()
            .any(|s| s.contains("hand-typed \"Smaller in 28 of 30")),
        "{stale:?}"
    );
    assert!(
        stale.iter().any(|s| s.contains("notes differ")),
        "{stale:?}"
    );
    // a verdict word next to a number
    let stale = plant(
        "notes = \"\"\"",
        "notes = \"\"\"Claim 1 holds at 12 depths. ",
    );
    assert!(stale.iter().any(|s| s.contains("holds at 12")), "{stale:?}");
    // a template that selects no computed cell: refused when the report is written, not when read
    let spec = Spec::load(&file, false, &kinds).expect("valid");
    let metric = spec.runner.metrics()[0].clone();
    let mut spec = spec;
    spec.notes = format!("{{{{mean {metric} where seed=999999}}}}");
    let stale = stale_notes(&spec, &results, &kinds);
    assert!(
        stale.iter().any(|s| s.contains("no computed cell matches")),
        "{stale:?}"
    );
    // a misspelt template is refused by `rfx validate`
    let e = Spec::parse(
        &file,
        &source.replacen("notes = \"\"\"", "notes = \"\"\"{{verdict 99}} ", 1),
        false,
        &kinds,
    )
    .err()
    .expect("refused");
    let e = e.to_string();
    assert!(
        e.contains("notes") && e.contains("template {{verdict 99}}"),
        "{e}"
    );
}

/// The README's generated block as committed, or an error.
fn readme_block_stale(readme: &str, block: &str) -> Option<String> {
    let want = rfx_harness::report::splice_readme(readme, block)?;
    (want != readme).then(|| {
        let line = readme
            .lines()
            .zip(want.lines())
            .find(|(a, b)| a != b)
            .map_or_else(String::new, |(a, b)| {
                format!("\n  README: {a}\n  report: {b}")
            });
        format!("README.md's generated block is stale: run `rfx report`{line}")
    })
}

#[test]
fn the_readme_says_what_the_report_would_write() {
    let kinds = rfx_experiments::kinds::registry();
    let block = rfx_harness::report::readme_block(&root().join("results"), &kinds)
        .unwrap_or_else(|e| panic!("{e}"));
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.contains(rfx_harness::report::README_BEGIN),
        "README.md has no generated block"
    );
    if let Some(e) = readme_block_stale(&readme, &block) {
        panic!("{e}");
    }
    // planted: a verdict word changed by hand
    let planted = readme.replacen("*does not hold*", "*holds*", 1);
    assert_ne!(planted, readme, "the block lists a negative verdict");
    assert!(readme_block_stale(&planted, &block).is_some());
}
