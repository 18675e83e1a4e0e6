//! Guard of the settings fingerprints: every committed experiment file (`experiments/*.toml`, read without
//! `[quick]`) must yield the fingerprint recorded with its committed cells (`results/<name>/.fingerprint`).
//! A kind's `settings()` string is part of that fingerprint, so a change to how a kind reads or formats its
//! settings that would orphan committed cells fails here, before any run.

use rfx_harness::spec::Spec;

mod common;
use common::{experiment_files, root};

#[test]
fn committed_experiments_keep_their_fingerprints() {
    let kinds = rfx_experiments::kinds::registry();
    let files = experiment_files();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in &files {
        let spec = Spec::load(file, false, &kinds).unwrap_or_else(|e| panic!("{e}"));
        let recorded = root().join("results").join(&spec.name).join(".fingerprint");
        let Ok(recorded) = std::fs::read_to_string(&recorded) else {
            panic!("{}: no committed {}", file.display(), recorded.display());
        };
        checked += 1;
        if recorded.trim() != spec.fingerprint() {
            wrong.push(format!(
                "{} ({}): recorded {}, computed {} from settings \"{}\"",
                file.display(),
                spec.kind,
                recorded.trim(),
                spec.fingerprint(),
                spec.runner.settings()
            ));
        }
    }
    assert_eq!(checked, files.len());
    assert!(
        wrong.is_empty(),
        "fingerprints changed:\n{}",
        wrong.join("\n")
    );
}
