//! `[[paper_value]]`: every number shown beside ours says where it comes from (`source`: the paper, the
//! authors' code, or derived), with `ref`/`how`, and whether it was measured on our task (`same_task`,
//! `differs`). The report's paper column holds only the paper's numbers, and a ratio ours / reference is
//! printed only on the same task.

use std::path::Path;

use rfx_core::RfxRng;
use rfx_harness::config::{ConfigError, Section, Value};
use rfx_harness::kind::{check_choice, check_int};
use rfx_harness::outputs::{paper_values_markdown, table_markdown};
use rfx_harness::results::{summarize, Layout, Row};
use rfx_harness::spec::PaperSource;
use rfx_harness::{Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, Spec};

/// Metric `err` = 1 / n (deterministic), so ours is known exactly in every test.
struct Inverse;
struct InverseRunner;

impl Kind for Inverse {
    fn name(&self) -> &'static str {
        "inverse"
    }
    fn about(&self) -> &'static str {
        "err = 1/n"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "set",
                allowed: "a",
                check: |v| check_choice(v, &["a"]),
                required: true,
            },
            ParamSpec {
                name: "n",
                allowed: "integers from 1 to 100",
                check: |v| check_int(v, 1, 100),
                required: true,
            },
        ]
    }
    fn configure(&self, _: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        Ok(Box::new(InverseRunner))
    }
}

impl Runner for InverseRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["err".into()]
    }
    fn settings(&self) -> String {
        String::new()
    }
    fn run_cell(&self, cell: &Cell, _: &mut RfxRng) -> Result<CellOutput, CellError> {
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![1.0 / cell.int("n")? as f64],
            timings: Vec::new(),
        })
    }
}

fn kinds() -> Kinds {
    Kinds::new(vec![&Inverse])
}

const HEAD: &str = r#"
[experiment]
name = "inv"
kind = "inverse"
seed = 1

[sweep]
set = ["a"]
n = [2, 4, 5]

[table]
rows = ["set"]
columns = "n"
value = "err"
format = "fixed"
digits = 3
show_paper = true
"#;

fn parse(blocks: &str) -> Result<Spec, ConfigError> {
    Spec::parse(
        Path::new("inv.toml"),
        &format!("{HEAD}{blocks}"),
        false,
        &kinds(),
    )
}

fn error(blocks: &str) -> String {
    parse(blocks)
        .err()
        .expect("the block is rejected")
        .to_string()
}

/// The line of `needle` in the file (1-based).
fn line_of(blocks: &str, needle: &str) -> usize {
    let text = format!("{HEAD}{blocks}");
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in the file")
        + 1
}

const PAPER: &str = r#"
[[paper_value]]
cell = { n = 2 }
metric = "err"
value = 0.25
source = "paper"
ref = "Table 1"
same_task = true
"#;

#[test]
fn every_source_is_read_with_its_reference_and_task() {
    let blocks = format!(
        "{PAPER}{}",
        r#"
[[paper_value]]
cell = { n = 4 }
metric = "err"
value = 0.5
source = "authors-code"
ref = "notebook.ipynb"
same_task = false
differs = "the notebook uses n = 8"

[[paper_value]]
cell = { n = 5 }
metric = "err"
value = 0.1
source = "derived"
how = "by hand"
same_task = true
"#
    );
    let spec = parse(&blocks).expect("valid");
    let pv = &spec.paper_values;
    assert_eq!(pv.len(), 3);
    assert_eq!(pv[0].source, PaperSource::Paper);
    assert_eq!(pv[0].reference.as_deref(), Some("Table 1"));
    assert!(pv[0].same_task && pv[0].differs.is_none());
    assert_eq!(pv[1].source, PaperSource::AuthorsCode);
    assert_eq!(pv[1].differs.as_deref(), Some("the notebook uses n = 8"));
    assert!(!pv[1].same_task);
    assert_eq!(pv[2].source, PaperSource::Derived);
    assert_eq!(pv[2].how.as_deref(), Some("by hand"));
    assert_eq!(pv[2].provenance(), "derived: by hand");
    assert_eq!(pv[1].provenance(), "authors' code: notebook.ipynb");
}

#[test]
fn missing_or_unknown_keys_name_file_line_key_and_allowed_values() {
    // No source at all.
    let b = PAPER.replace("source = \"paper\"\n", "");
    let e = error(&b);
    assert!(
        e.starts_with("inv.toml:")
            && e.contains("`paper_value[0].source`")
            && e.contains("paper, authors-code, derived"),
        "{e}"
    );
    // A source outside the allowed set, at its line.
    let b = PAPER.replace("source = \"paper\"", "source = \"notes\"");
    let e = error(&b);
    let line = line_of(&b, "source = \"notes\"");
    assert!(
        e.starts_with(&format!("inv.toml:{line}: `paper_value[0].source`"))
            && e.contains("unknown value \"notes\"; allowed: paper, authors-code, derived")
            && e.contains("goes to `ref`"),
        "{e}"
    );
    // paper without ref.
    let e = error(&PAPER.replace("ref = \"Table 1\"\n", ""));
    assert!(
        e.contains("`paper_value[0].ref`") && e.contains("source = \"paper\""),
        "{e}"
    );
    // authors-code without ref.
    let e = error(
        &PAPER
            .replace("source = \"paper\"", "source = \"authors-code\"")
            .replace("ref = \"Table 1\"\n", ""),
    );
    assert!(
        e.contains("`paper_value[0].ref`") && e.contains("authors-code"),
        "{e}"
    );
    // derived without how (a ref alone is not enough).
    let e = error(&PAPER.replace("source = \"paper\"", "source = \"derived\""));
    assert!(
        e.contains("`paper_value[0].how`") && e.contains("derived"),
        "{e}"
    );
    // same_task is required, and must be a boolean.
    let e = error(&PAPER.replace("same_task = true\n", ""));
    assert!(
        e.contains("`paper_value[0].same_task`") && e.contains("true or false"),
        "{e}"
    );
    let e = error(&PAPER.replace("same_task = true", "same_task = \"yes\""));
    assert!(
        e.contains("`paper_value[0].same_task`") && e.contains("expected true or false"),
        "{e}"
    );
    // same_task = false needs differs; same_task = true refuses it.
    let e = error(&PAPER.replace("same_task = true", "same_task = false"));
    assert!(
        e.contains("`paper_value[0].differs`") && e.contains("same_task = false"),
        "{e}"
    );
    let e = error(&PAPER.replace("same_task = true", "same_task = true\ndiffers = \"n\""));
    assert!(e.contains("`paper_value[0].differs`"), "{e}");
    // An unknown key lists the allowed ones.
    let b = PAPER.replace("ref = ", "page = 3\nref = ");
    let e = error(&b);
    let line = line_of(&b, "page = 3");
    assert!(
        e.starts_with(&format!("inv.toml:{line}: `paper_value[0].page`"))
            && e.contains("same_task")
            && e.contains("differs")
            && e.contains("how"),
        "{e}"
    );
}

#[test]
fn paper_values_do_not_change_the_fingerprint() {
    let without = parse("").expect("valid").fingerprint();
    let with = parse(PAPER).expect("valid").fingerprint();
    assert_eq!(without, with);
}

/// The spec with the three kinds of reference, its layout and summaries of the cells err = 1/n.
fn rendered() -> (String, String) {
    let blocks = r#"
[[paper_value]]
cell = { n = 2 }
metric = "err"
value = 0.25
source = "paper"
ref = "Table 1"
same_task = true

[[paper_value]]
cell = { n = 4 }
metric = "err"
value = 0.5
source = "paper"
ref = "read off Figure 2"
same_task = false
differs = "the paper uses 10k of the 60k images"

[[paper_value]]
cell = { n = 5 }
metric = "err"
value = 0.1
source = "authors-code"
ref = "repo/notebook.ipynb"
same_task = true

[[paper_value]]
cell = { n = 5 }
metric = "err"
value = 0.4
source = "derived"
how = "our own re-implementation"
same_task = false
differs = "another test set | n"
"#;
    let spec = parse(blocks).expect("valid");
    let layout = Layout::of(&spec);
    let rows: Vec<Row> = [2, 4, 5]
        .iter()
        .map(|n| {
            Row(vec![
                "a".into(),
                n.to_string(),
                format!("{}", 1.0 / f64::from(*n)),
                String::new(),
                "0.1".into(),
                String::new(),
            ])
        })
        .collect();
    let summaries = summarize(&spec, &layout, &rows);
    assert_eq!(summaries.len(), 3);
    (
        paper_values_markdown(&spec.paper_values, &layout, &summaries),
        table_markdown(&spec.tables[0], &layout, &summaries, &spec.paper_values),
    )
}

#[test]
fn the_paper_column_holds_only_the_papers_numbers_and_ratios_only_on_the_same_task() {
    let (md, _) = rendered();
    let (paper, others) = md
        .split_once("### Other reference numbers")
        .expect("two sections");
    assert!(
        paper.starts_with("### The paper's numbers beside ours"),
        "{md}"
    );
    // Same task: ours 0.5 / paper 0.25 = 2.
    assert!(
        paper.contains("| n=2 | err | 2.5000e-1 | 5.0000e-1 | 2.000 | Table 1 |"),
        "{paper}"
    );
    // Another task: no ratio, the reason instead (ours 0.25 / 0.5 would be 0.500).
    assert!(
        paper.contains(
            "| n=4 | err | 5.0000e-1 | 2.5000e-1 | no ratio: not our task — the paper uses 10k of the 60k images | \
             read off Figure 2 |"
        ),
        "{paper}"
    );
    assert!(!paper.contains("0.500 |"), "{paper}");
    // The authors' code and derived numbers are not in the paper column, but listed with their source.
    assert!(!paper.contains("n=5"), "{paper}");
    assert!(
        others.contains(
            "| n=5 | err | 1.0000e-1 | 2.0000e-1 | 2.000 | authors' code: repo/notebook.ipynb |"
        ),
        "{others}"
    );
    assert!(
        others.contains(
            "| n=5 | err | 4.0000e-1 | 2.0000e-1 | no ratio: not our task — another test set \\| n | derived: our \
             own re-implementation |"
        ),
        "{others}"
    );
}

#[test]
fn tables_bracket_only_the_papers_numbers_and_mark_another_task() {
    let (_, table) = rendered();
    // n = 2: the paper's, same task; n = 4: the paper's on another task (†); n = 5: only non-paper numbers.
    assert!(
        table.contains("| a | 0.500 [0.250] | 0.250 [0.500†] | 0.200 |"),
        "{table}"
    );
    assert!(
        table.contains("† measured by the paper on a task other than ours"),
        "{table}"
    );
}

#[test]
fn no_paper_values_no_section() {
    let spec = parse("").expect("valid");
    let layout = Layout::of(&spec);
    assert_eq!(paper_values_markdown(&[], &layout, &[]), "");
    let v = Value::Int(2);
    assert_eq!(v.to_string(), "2");
}
