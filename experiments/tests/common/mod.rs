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
