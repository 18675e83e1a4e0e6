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

/// Words after which a number is a reference, not a value: figure, table, equation, section, … numbers, and a
/// commit's hash.
const REFERENCE_WORDS: [&str; 44] = [
    "commit",
    "commits",
    "fig",
    "figs",
    "figure",
    "figures",
    "table",
    "tables",
    "tab",
    "eq",
    "eqs",
    "equation",
    "equations",
    "§",
    "§§",
    "section",
    "sections",
    "sec",
    "definition",
    "def",
    "theorem",
    "thm",
    "lemma",
    "algorithm",
    "alg",
    "appendix",
    "app",
    "corollary",
    "cor",
    "proposition",
    "prop",
    "item",
    "items",
    "page",
    "pages",
    "p",
    "pp",
    "issue",
    "issues",
    "tier",
    "assumption",
    "remark",
    "example",
    "chapter",
];

/// Whether the number starting at `start` of `text` follows a reference word, over other numbers of a list
/// ("Figs. 3–5", "Tables 2 and 4", "§5.2", "Fig. 2(b)", "Table 1's").
fn is_reference(text: &[char], start: usize) -> bool {
    let mut i = start;
    for _ in 0..12 {
        while i > 0 && text[i - 1].is_whitespace() {
            i -= 1;
        }
        if i == 0 {
            return false;
        }
        let c = text[i - 1];
        if c.is_ascii_digit() || c == '.' {
            while i > 0 && (text[i - 1].is_ascii_digit() || text[i - 1] == '.') {
                i -= 1;
            }
            continue;
        }
        if ",–-/()&".contains(c) {
            i -= 1;
            continue;
        }
        let end = i;
        while i > 0 && (text[i - 1].is_alphabetic() || text[i - 1] == '§') {
            i -= 1;
        }
        if i == end {
            return false;
        }
        let word: String = text[i..end].iter().collect::<String>().to_lowercase();
        if REFERENCE_WORDS.contains(&word.as_str()) {
            return true;
        }
        if !(matches!(word.as_str(), "and" | "or" | "to") || word.chars().count() == 1) {
            return false;
        }
    }
    false
}

/// The numbers an experiment's settings justify: every number of its `[sweep]` and `[<kind>]` tables (and
/// their subtables), the number of values of each sweep list (3 seeds), and each claim's `margin` and `factor`
/// (a fraction is also found as a percentage: `valid_fraction = 0.25` justifies "25 %").
fn setting_numbers(doc: &toml::Table) -> Vec<f64> {
    fn walk(v: &toml::Value, out: &mut Vec<f64>) {
        match v {
            toml::Value::Integer(i) => out.push(*i as f64),
            toml::Value::Float(x) => out.push(*x),
            toml::Value::Array(a) => {
                out.push(a.len() as f64);
                a.iter().for_each(|x| walk(x, out));
            }
            toml::Value::Table(t) => t.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let kind = doc
        .get("experiment")
        .and_then(|e| e.get("kind"))
        .and_then(|k| k.as_str())
        .unwrap_or("");
    for key in ["sweep", kind] {
        if let Some(v) = doc.get(key) {
            walk(v, &mut out);
        }
    }
    for claim in doc
        .get("claim")
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
    {
        for key in ["margin", "factor"] {
            if let Some(v) = claim.get(key) {
                walk(v, &mut out);
            }
        }
    }
    out
}

/// The numbers of `text` (an experiment's notes, or the README's hand-written prose) that nothing justifies,
/// each with the words around it. Not looked at: templates (`{{ … }}`, filled by the report) and code spans;
/// dates (2026-11-27) and clock times (16:05); a number joined to letters (`L2`, `CIFAR-10`, `magic04`, a
/// commit `7da57dd`; but `5.4s` and `3ms` are values); one-digit whole numbers and years (1900–2099).
/// Justified: a reference (Fig. 3, Table 1, §5.2, Definition 2, …), a number of `settings` (the sweep and kind
/// settings, see [`setting_numbers`], or 100 times one), a number `paper` prints (as printed, or as a fraction
/// of its percentage), or one of `allowed`.
fn unjustified_numbers(
    text: &str,
    settings: &[f64],
    paper: &[f64],
    allowed: &[&str],
) -> Vec<String> {
    let mut chars: Vec<char> = text.chars().collect();
    let blank = |chars: &mut Vec<char>, from: usize, to: usize| {
        chars[from..to].iter_mut().for_each(|c| *c = ' ');
    };
    // templates and code spans
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == '{' && chars[i + 1] == '{' {
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == '}' && chars[j + 1] == '}')
                .map_or(chars.len(), |j| j + 2);
            blank(&mut chars, i, end);
            i = end;
        } else if chars[i] == '`' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '`')
                .map_or(chars.len(), |j| j + 1);
            blank(&mut chars, i, end);
            i = end;
        } else {
            i += 1;
        }
    }
    // dates and clock times
    let shape = |chars: &[char], at: usize, pattern: &str| {
        pattern.chars().enumerate().all(|(k, p)| {
            chars
                .get(at + k)
                .is_some_and(|&c| if p == 'D' { c.is_ascii_digit() } else { c == p })
        })
    };
    for at in 0..chars.len() {
        if shape(&chars, at, "DDDD-DD-DD") {
            blank(&mut chars, at, at + 10);
        } else if shape(&chars, at, "DD:DD") {
            blank(&mut chars, at, at + 5);
        }
    }
    let masked: String = chars.iter().collect();
    let mut found = Vec::new();
    for w in common::numbers_at(&masked) {
        let before = |k: usize| w.start.checked_sub(k).map(|i| chars[i]);
        let joined_before = before(1).is_some_and(|c| c.is_ascii_alphabetic() || c == '^')
            || (before(1).is_some_and(|c| c == '-' || c == '_')
                && before(2).is_some_and(|c| c.is_ascii_alphanumeric()));
        let unit: String = chars[w.end..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        // `8.5e-2` is a number in scientific notation, not a name
        let exponent = unit == "e"
            && chars
                .get(w.end + 1)
                .is_some_and(|c| c.is_ascii_digit() || "-+−".contains(*c));
        let joined_after = !unit.is_empty()
            && !exponent
            && !matches!(unit.as_str(), "s" | "ms" | "h" | "min" | "x");
        let whole = !w.digits.contains('.');
        if joined_before
            || joined_after
            || (whole && w.value < 10.0)
            || (whole && w.digits.len() == 4 && (1900.0..2100.0).contains(&w.value))
            || is_reference(&chars, w.start)
            || common::printed(settings, w.value)
            || common::printed(settings, w.value / 100.0)
            || common::printed(paper, w.value)
            || common::printed(paper, w.value * 100.0)
        {
            continue;
        }
        let written: String = chars[w.start..w.end].iter().collect();
        if allowed.contains(&written.as_str()) {
            continue;
        }
        let from = w.start.saturating_sub(30);
        let to = (w.end + 15).min(chars.len());
        let around: String = chars[from..to].iter().collect();
        found.push(format!(
            "{written} (…{}…)",
            around.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    found
}

/// Numbers of notes that are neither measured nor justified otherwise, by experiment: the numbers (as written)
/// and why each is no measurement. Keep it short: a measured value belongs in a template.
const ALLOWED: &[(&str, &[&str], &str)] = &[
    (
        "arccos-condition-number",
        &["19,020", "10,992", "6,435"],
        "the data sets' row counts (facts of the data)",
    ),
    (
        "trf-accuracy-vs-memory",
        &["45,730", "1.585", "1.6"],
        "protein's row count, and log₂3 ≈ 1.585 bits per trit (arithmetic, 1.6 rounded)",
    ),
    (
        "gaussian-kmeans",
        &["10,992", "5,644", "5,620", "64"],
        "the data sets' rows and optdigits' 64 attributes (facts of the data)",
    ),
    (
        "ntk-active-learning",
        &["784"],
        "MNIST's 28 × 28 pixels as channels (the input's dimension)",
    ),
    (
        "ntk-krr-sphere",
        &["107,194"],
        "the COADS set's row count (a fact of the data)",
    ),
    (
        "gaussian-krr-sphere",
        &["7.6", "360", "180", "107,194", "18,638"],
        "a package version (ferret-datasets 7.6.0-5), the 1° grid's 360 × 180 points and the sets' rows (data)",
    ),
    (
        "trf-spectrum",
        &["0.0209", "9.99", "9.92", "1.007"],
        "the research notes' re-implementation's values, quoted as a reference beside ours",
    ),
    (
        "ntk-mse-vs-dimension",
        &["2,560", "1,280", "784"],
        "NTK-RF's m = 10·2ᵏ at the sweep's k = 8 and 7 (settings), MNIST's d = 784",
    ),
    (
        "trf-ridge-vs-gamma",
        &["0.6"],
        "the research notes' bound on τ for feasible moment matching (a derived threshold, not a measurement)",
    ),
    (
        "gaussian-krr",
        &["1,503", "9,568", "40,000"],
        "the stand-in data sets' row counts (facts of the data)",
    ),
    (
        "trf-svm-magic",
        &["19,020", "32,561", "65", "35", "76", "3,186", "180"],
        "rows and class balance of magic04 and of the paper's a8a, and DNA's size (facts of the data)",
    ),
    (
        "trf-svm-shuttle",
        &["58,000", "141,691", "78"],
        "rows and class balance of Shuttle and of the paper's ijcnn1 (facts of the data)",
    ),
    (
        "survey-benchmark",
        &["7,400", "5,300", "5,404", "4,597", "6,435", "58,000"],
        "the stand-in data sets' row counts (facts of the data)",
    ),
    (
        "ntk-krr-uci",
        &["45,730", "40,000", "16,599", "17,379", "63,608", "15,000", "7,500"],
        "the data sets' row counts, the training rows (about 15,000) and a 2-fold half of them (sizes)",
    ),
    (
        "ntk-krr-uci-10k",
        &["63,608", "41,000", "57,000", "7,500", "2048", "22.8", "29.8", "57.7"],
        "row counts and training rows (sizes), ntk-krr-uci's m, and the GiB an exact Gram would need \
         (computed from n, not measured)",
    ),
];

/// Experiments whose notes still quote measured values by hand, with how many numbers the check finds in
/// them: a ratchet (the test fails when one is added, and asks for the count to be lowered when one is
/// replaced by a template). Issue 56 wants it empty.
const PENDING: &[(&str, usize)] = &[];

/// What the number check finds wrong with the notes of the experiment file `doc` (named `name`): numbers
/// beyond its `PENDING` count, or fewer than it (lower the count), and `ALLOWED` items that no longer occur.
fn hand_typed_values(name: &str, doc: &toml::Table, paper: &[f64]) -> Vec<String> {
    let experiment = doc.get("experiment").expect("[experiment]");
    let notes = experiment
        .get("notes")
        .and_then(|n| n.as_str())
        .unwrap_or("");
    let allowed: Vec<&str> = ALLOWED
        .iter()
        .filter(|(e, _, _)| *e == name)
        .flat_map(|(_, n, _)| n.iter().copied())
        .collect();
    let mut wrong: Vec<String> = allowed
        .iter()
        .filter(|a| !notes.contains(*a))
        .map(|a| format!("{name}: ALLOWED lists \"{a}\", which its notes no longer hold"))
        .collect();
    let found = unjustified_numbers(notes, &setting_numbers(doc), paper, &allowed);
    let pending = PENDING
        .iter()
        .find(|(e, _)| *e == name)
        .map_or(0, |(_, n)| *n);
    if found.len() > pending {
        wrong.push(format!(
            "{name}: {} hand-typed number(s) in notes{} (a measured value is a template of \
             rfx_harness::prose; a setting, reference or the paper's number is found by itself):\n    {}",
            found.len(),
            if pending > 0 {
                format!(", {pending} allowed while pending")
            } else {
                String::new()
            },
            found.join("\n    ")
        ));
    } else if found.len() < pending {
        wrong.push(format!(
            "{name}: {} hand-typed number(s) left in notes: lower its PENDING count from {pending}",
            found.len()
        ));
    }
    wrong
}

/// An experiment file read as TOML, with its name and the numbers its paper(s) print.
fn read_doc(path: &Path) -> (String, toml::Table, Option<Vec<f64>>) {
    let name = path
        .file_stem()
        .expect("a file")
        .to_string_lossy()
        .to_string();
    let (doc, paper) = common::experiment_doc(path);
    let numbers = common::paper_numbers(&paper);
    (name, doc, numbers)
}

#[test]
fn notes_quote_no_hand_typed_measured_value() {
    if common::papers_dir().is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI lays ../shared/papers beside the clone, but it is missing"
        );
        eprintln!("skipped: ../shared/papers (the papers' text) is not beside this clone");
        return;
    }
    let mut wrong = Vec::new();
    for file in experiment_files() {
        let (name, doc, paper) = read_doc(&file);
        wrong.extend(hand_typed_values(&name, &doc, &paper.expect("papers")));
    }
    let names = PENDING
        .iter()
        .map(|(n, _)| *n)
        .chain(ALLOWED.iter().map(|(n, _, _)| *n));
    for name in names {
        assert!(
            experiment_files()
                .iter()
                .any(|f| f.file_stem().is_some_and(|s| s == name)),
            "PENDING or ALLOWED names {name}, which is no experiment"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn references_settings_and_paper_numbers_are_justified_and_measurements_are_not() {
    let settings = [512.0, 4096.0, 0.25, 3.0];
    let paper = [70.47, 150.0];
    let ok = "Fig. 2(b), Figs. 10–12, Tables 2 and 4, §5.2, Definition 2 (2026-11-27 16:05 UTC, commit 7da57dd, \
              CIFAR-10, kin40k, L2) at m = 512 … 4,096 on 25 % of the rows, 3 seeds, {{mean accuracy | fixed3}}, \
              `0.873`, the paper's 70.47 % (0.7047) and ≥ 150× in 2021";
    assert!(
        unjustified_numbers(ok, &settings, &paper, &[]).is_empty(),
        "{:?}",
        unjustified_numbers(ok, &settings, &paper, &[])
    );
    let stale =
        "accuracy 0.873 at m = 512; 138× slower; 5.4s, 743.6 s; Figure 3 shows 12.5; error 8.5e-2";
    let found = unjustified_numbers(stale, &settings, &paper, &[]);
    let first: Vec<&str> = found.iter().map(|f| f.split(' ').next().unwrap()).collect();
    assert_eq!(
        first,
        ["0.873", "138", "5.4", "743.6", "12.5", "8.5"],
        "{found:?}"
    );
    assert_eq!(
        unjustified_numbers(stale, &settings, &paper, &["138", "12.5"]).len(),
        4
    );
}

#[test]
fn a_planted_hand_typed_measurement_fails() {
    if common::papers_dir().is_none() {
        eprintln!("skipped: ../shared/papers is not beside this clone");
        return;
    }
    let plant = |name: &str, sentence: &str| -> Vec<String> {
        let (name, mut doc, paper) = read_doc(&root().join(format!("experiments/{name}.toml")));
        let experiment = doc
            .get_mut("experiment")
            .and_then(|e| e.as_table_mut())
            .expect("[experiment]");
        let notes = experiment
            .get("notes")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_string();
        experiment.insert(
            "notes".into(),
            toml::Value::String(format!("{sentence} {notes}")),
        );
        hand_typed_values(&name, &doc, &paper.expect("papers"))
    };
    for name in ["cntk", "gaussian-krr"] {
        // the committed notes pass; a stale literal accuracy does not
        assert!(plant(name, "").is_empty(), "{:?}", plant(name, ""));
        let wrong = plant(name, "The exact CNTK reaches accuracy 0.873 here.");
        assert!(
            wrong.iter().any(|w| w.contains("0.873 (…")),
            "{name}: {wrong:?}"
        );
    }
}

/// The README's hand-written prose about the papers and the results: its per-paper table (before the
/// generated block) and the paragraphs after the block, up to its next section.
fn readme_prose(readme: &str) -> String {
    let begin = readme
        .find(rfx_harness::report::README_BEGIN)
        .expect("the generated block");
    let end_marker = "<!-- verdicts:end -->";
    let end = readme.find(end_marker).expect("the block's end") + end_marker.len();
    let next = readme[end..]
        .find("\n## ")
        .map_or(readme.len(), |i| end + i);
    format!("{}\n{}", &readme[..begin], &readme[end..next])
}

/// Numbers of the README's prose that are settings of no experiment, printed in no paper and no reference,
/// with the reason each is there.
const README_ALLOWED: &[(&str, &str)] = &[(
    "2,560",
    "NTK-RF's largest m = 10·2⁸ in ntk-mse-vs-dimension (k = 8 of its sweep: a setting)",
)];

#[test]
fn the_readme_quotes_no_hand_typed_measured_value() {
    if common::papers_dir().is_none() {
        eprintln!("skipped: ../shared/papers is not beside this clone");
        return;
    }
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut settings = Vec::new();
    for file in experiment_files() {
        settings.extend(setting_numbers(&read_doc(&file).1));
    }
    let paper = common::paper_numbers("").expect("papers");
    let allowed: Vec<&str> = README_ALLOWED.iter().map(|(n, _)| *n).collect();
    let prose = readme_prose(&readme);
    let found = unjustified_numbers(&prose, &settings, &paper, &allowed);
    assert!(
        found.is_empty(),
        "README.md quotes numbers that are no setting, reference or paper number (generate them, or check \
         them here):\n  {}",
        found.join("\n  ")
    );
    // planted: a measured accuracy in the cross-benchmark paragraph
    let planted = readme.replacen(
        "runs every registry method",
        "runs every registry method (mean accuracy 0.873)",
        1,
    );
    assert_ne!(planted, readme);
    let found = unjustified_numbers(&readme_prose(&planted), &settings, &paper, &allowed);
    assert!(found.iter().any(|f| f.starts_with("0.873")), "{found:?}");
}
