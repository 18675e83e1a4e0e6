//! The runner with a kind it has never heard of: the kinds come from the caller, the run guard holds
//! while (and only while) cells run, and a rerun reuses the recorded cells.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::Rng;
use rfx_core::RfxRng;
use rfx_harness::config::{ConfigError, Section};
use rfx_harness::kind::check_int;
use rfx_harness::run::{run, RunOptions};
use rfx_harness::{Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, Spec};

/// Live guards made by [`guard`].
static GUARDS_ALIVE: AtomicUsize = AtomicUsize::new(0);

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        GUARDS_ALIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

fn guard(_backend: &str) -> Box<dyn std::any::Any> {
    GUARDS_ALIVE.fetch_add(1, Ordering::SeqCst);
    Box::new(Guard)
}

/// Metric `scaled` = `scale` · n · u with u uniform on [0, 1) from the cell's stream; `guarded` is 1 when
/// the run guard was alive during the cell.
struct Toy;

struct ToyRunner {
    scale: f64,
}

impl Kind for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn about(&self) -> &'static str {
        "a kind only this test knows"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec {
            name: "n",
            allowed: "integers from 1 to 10",
            check: |v| check_int(v, 1, 10),
            required: true,
        }]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let scale = match section {
            Some(s) => s.opt_float("scale", 0.0, 100.0)?.unwrap_or(1.0),
            None => 1.0,
        };
        Ok(Box::new(ToyRunner { scale }))
    }
}

impl Runner for ToyRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["scaled".into(), "guarded".into()]
    }
    fn settings(&self) -> String {
        format!("scale={}", self.scale)
    }
    fn run_cell(&self, cell: &Cell, rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let n = cell.int("n")? as f64;
        let u: f64 = rng.gen();
        let guarded = f64::from(u8::from(GUARDS_ALIVE.load(Ordering::SeqCst) > 0));
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![self.scale * n * u, guarded],
            timings: Vec::new(),
        })
    }
}

const FILE: &str = r#"
[experiment]
name = "toy-run"
kind = "toy"
seed = 7

[sweep]
n = [1, 2, 3]
seed = [0, 1]

[toy]
scale = 2.0
"#;

fn kinds() -> Kinds {
    Kinds::new(vec![&Toy])
        .with_run_guard(guard)
        .with_kernels_name(|| "toy-kernels".into())
}

fn cells_csv(root: &Path) -> String {
    std::fs::read_to_string(root.join("toy-run/cells.csv")).unwrap()
}

#[test]
fn a_kind_from_the_caller_runs_under_its_guard_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::parse(Path::new("toy.toml"), FILE, false, &kinds()).unwrap();
    assert_eq!(spec.cells().len(), 6);
    let mut opts = RunOptions::new(dir.path().to_path_buf());
    opts.progress = false;
    opts.threads = Some(2);

    let first = run(&spec, &opts).unwrap();
    assert_eq!((first.total, first.computed, first.reused), (6, 6, 0));
    assert_eq!(
        GUARDS_ALIVE.load(Ordering::SeqCst),
        0,
        "guard dropped after the run"
    );
    let text = cells_csv(dir.path());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "n,seed,scaled,guarded,note,time_s,commit,load,cpu"
    );
    assert_eq!(lines.len(), 7);
    // every cell names the machine: kind, the kernels the application reports, the CPU model
    let want = format!("{}/toy-kernels/", rfx_harness::run::machine_kind());
    for line in &lines[1..] {
        assert!(line.contains(&want), "{line} lacks {want}");
        let f: Vec<&str> = line.split(',').collect();
        let (n, scaled): (f64, f64) = (f[0].parse().unwrap(), f[2].parse().unwrap());
        assert!((0.0..2.0 * n).contains(&scaled), "{line}");
        assert_eq!(f[3], "1", "the run guard was alive during the cell: {line}");
    }
    for file in [
        "summary.csv",
        "report.md",
        "config.toml",
        "manifest.json",
        ".fingerprint",
    ] {
        assert!(dir.path().join("toy-run").join(file).is_file(), "{file}");
    }

    // A rerun computes nothing and leaves the cells as they were.
    let again = run(&spec, &opts).unwrap();
    assert_eq!((again.computed, again.reused), (0, 6));
    assert_eq!(cells_csv(dir.path()), text);
}

#[test]
fn kinds_are_resolved_through_the_callers_list() {
    let err = Spec::parse(Path::new("toy.toml"), FILE, false, &Kinds::default())
        .err()
        .expect("no kind is known without a list");
    assert!(err.to_string().contains("unknown kind \"toy\""), "{err}");

    let bad = FILE.replace("scale = 2.0", "scale = 2.0\nspeed = 1");
    let err = Spec::parse(Path::new("toy.toml"), &bad, false, &kinds())
        .err()
        .expect("an unknown key of the kind's section is rejected");
    let msg = err.to_string();
    assert!(
        msg.contains("toy.toml") && msg.contains("speed") && msg.contains("scale"),
        "{msg}"
    );
}

/// The error of `text` read as the toy experiment (with or without its `[quick]` overrides).
fn refused(text: &str, quick: bool) -> String {
    Spec::parse(Path::new("toy.toml"), text, quick, &kinds())
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{text}"))
        .to_string()
}

#[test]
fn both_variants_are_checked_whichever_is_read() {
    // an error only in the [quick] overrides is found by a full read, one only in the full file by a quick
    // read
    let quick_bad = format!("{FILE}\n[quick.toy]\nscale = -1\n");
    let full_bad = FILE.replace("scale = 2.0", "scale = -1") + "\n[quick.toy]\nscale = 1\n";
    for quick in [false, true] {
        assert!(refused(&quick_bad, quick).contains("toy.toml:15: `toy.scale`"));
        assert!(refused(&full_bad, quick).contains("toy.toml:12: `toy.scale`"));
    }
    let e = refused(&format!("quick = 3\n{FILE}"), false);
    assert!(e.contains("`quick`: expected a table of overrides"), "{e}");
}

#[test]
fn sweeps_refuse_repeated_cell_keys_and_too_many_cells() {
    let e = refused(&FILE.replace("seed = [0, 1]", "seed = [0, 1, 1.0]"), false);
    assert!(e.contains("value 1.0 listed twice (as 1 before)"), "{e}");
    let e = refused(&FILE.replace("seed = [0, 1]", "seed = [0, \"0\"]"), false);
    assert!(e.contains("value \"0\" listed twice (as 0 before)"), "{e}");
    // 3 values of n × 40,000 seeds = 120,000 cells > MAX_CELLS = 100,000; 30,000 seeds are 90,000 cells
    let seeds = |k: usize| {
        let list: Vec<String> = (0..k).map(|i| i.to_string()).collect();
        FILE.replace("seed = [0, 1]", &format!("seed = [{}]", list.join(", ")))
    };
    assert_eq!(rfx_harness::spec::MAX_CELLS, 100_000);
    let e = refused(&seeds(40_000), false);
    assert!(
        e.contains("the sweep has 120000 cells (3 n × 40000 seed), more than the 100000"),
        "{e}"
    );
    let ok = Spec::parse(Path::new("toy.toml"), &seeds(30_000), false, &kinds()).unwrap();
    assert_eq!(ok.cells().len(), 90_000);
}

#[test]
fn filters_name_values_of_the_sweep() {
    let claim = "\n[[claim]]\ntext = \"c\"\nquote = \"q\"\nmetric = \"scaled\"\nby = \"n\"\norder = [[1], [2]]\n";
    let e = refused(&format!("{FILE}{claim}where = {{ seed = [2] }}\n"), false);
    assert!(
        e.contains("`claim[0].where.seed`: 2 is not a value of sweep.seed"),
        "{e}"
    );
    // a value of the full sweep that the quick sweep leaves out is allowed in the quick variant
    let quick = format!("{FILE}{claim}where = {{ seed = [1] }}\n\n[quick.sweep]\nseed = [0]\n");
    assert!(Spec::parse(Path::new("toy.toml"), &quick, true, &kinds()).is_ok());
    let paper =
        "\n[[paper_value]]\nmetric = \"scaled\"\nvalue = 1\nsource = \"paper\"\nref = \"s\"\nsame_task = true\ncell = { n = 2.0 }\n";
    let e = refused(&format!("{FILE}{paper}"), false);
    assert!(e.contains("2.0 is not a value of sweep.n"), "{e}");
    let table = "\n[table]\nrows = [\"n\"]\ncolumns = \"seed\"\nvalue = \"scaled\"\ncolumn_values = [0, 5]\n";
    let e = refused(&format!("{FILE}{table}"), false);
    assert!(
        e.contains("`table.column_values`: 5 is not a value of sweep.seed"),
        "{e}"
    );
}

/// A claim's `scale` is "linear" (default) or "log"; anything else is refused in one line naming the key and
/// the allowed values, and the log scale is refused where the test's margins or spreads are on the metric's own
/// scale.
#[test]
fn claim_scale_is_linear_or_log() {
    let claim = "\n[[claim]]\ntext = \"c\"\nquote = \"q\"\nmetric = \"scaled\"\nby = \"n\"\norder = [[1], [2]]\n";
    for ok in ["", "scale = \"linear\"\n", "scale = \"log\"\n"] {
        let spec = Spec::parse(
            Path::new("toy.toml"),
            &format!("{FILE}{claim}{ok}"),
            false,
            &kinds(),
        );
        assert!(
            spec.is_ok(),
            "{ok}: {:?}",
            spec.err().map(|e| e.to_string())
        );
    }
    let e = refused(&format!("{FILE}{claim}scale = \"cubic\"\n"), false);
    assert!(
        e.contains("`claim[0].scale`: unknown value \"cubic\"; allowed: linear, log"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    let e = refused(
        &format!("{FILE}{claim}scale = \"log\"\ntest = \"equivalent\"\nmargin = 0.1\n"),
        false,
    );
    assert!(
        e.contains("`claim[0].scale`: scale = \"log\" is for test = \"order\""),
        "{e}"
    );
}

/// `best = true` needs an order test of two groups (the members claimed best, then the others).
#[test]
fn best_claims_need_two_groups() {
    let claim =
        "\n[[claim]]\ntext = \"c\"\nquote = \"q\"\nmetric = \"scaled\"\nby = \"n\"\nbest = true\n";
    let ok = format!("{FILE}{claim}order = [1, [2, 3]]\n");
    let spec = Spec::parse(Path::new("toy.toml"), &ok, false, &kinds());
    assert!(spec.is_ok_and(|s| s.claims[0].best));
    let e = refused(&format!("{FILE}{claim}order = [1, 2, 3]\n"), false);
    assert!(
        e.contains("`claim[0].best`: best = true needs test = \"order\" and two groups"),
        "{e}"
    );
}

/// `[[plot]]` gives several plots, each after the first with its own name (its files `<experiment>-<name>`);
/// a missing or repeated name is refused, and `[plot]` keeps the experiment's own file name.
#[test]
fn several_plots_write_their_own_files() {
    let plot = |name: &str| {
        format!(
            "\n[[plot]]\n{name}title = \"t\"\nx = \"n\"\ny = \"scaled\"\nx_label = \"n\"\ny_label = \"s\"\n"
        )
    };
    let two = format!("{FILE}{}{}", plot(""), plot("name = \"more\"\n"));
    // without the run guard: the guard test of this binary counts live guards, and tests run in parallel
    let unguarded = Kinds::new(vec![&Toy]);
    let spec = Spec::parse(Path::new("toy.toml"), &two, false, &unguarded).unwrap();
    assert_eq!(spec.plots.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(dir.path().to_path_buf());
    opts.progress = false;
    run(&spec, &opts).unwrap();
    for file in [
        "toy-run.png",
        "toy-run.svg",
        "toy-run-more.png",
        "toy-run-more.svg",
    ] {
        assert!(dir.path().join("toy-run").join(file).is_file(), "{file}");
    }
    let report = std::fs::read_to_string(dir.path().join("toy-run/report.md")).unwrap();
    assert!(report.contains("toy-run/toy-run-more.png"), "{report}");

    let e = refused(&format!("{FILE}{}{}", plot(""), plot("")), false);
    assert!(e.contains("needs a name"), "{e}");
    let same = plot("name = \"a\"\n");
    let e = refused(&format!("{FILE}{same}{same}"), false);
    assert!(e.contains("same name"), "{e}");
    let e = refused(&format!("{FILE}{}", plot("name = \"A b\"\n")), false);
    assert!(e.contains("not a file name part"), "{e}");
    let one = FILE.to_string() + &plot("").replace("[[plot]]", "[plot]");
    let spec = Spec::parse(Path::new("toy.toml"), &one, false, &kinds()).unwrap();
    assert_eq!(spec.plots.len(), 1);
    assert_eq!(
        spec.plots[0].figure_files("toy-run", &spec.sweep)[0].0,
        "toy-run"
    );
}

/// `where` on a plot draws only the cells it names and, on the `figures` parameter, writes only those
/// figures; on a table it keeps only those rows; a value that is not in the sweep is refused.
#[test]
fn a_plot_or_table_where_keeps_only_its_cells() {
    let plot = |filter: &str| {
        format!(
            "\n[plot]\ntitle = \"t\"\nx = \"scaled\"\ny = \"scaled\"\nfigures = \"n\"\nx_label = \"s\"\ny_label = \"s\"\n{filter}"
        )
    };
    let table =
        "\n[table]\nrows = []\ncolumns = \"n\"\nvalue = \"scaled\"\nwhere = { n = [1, 3] }\n";
    let file = format!("{FILE}{}{table}", plot("where = { n = [1, 3] }\n"));
    let unguarded = Kinds::new(vec![&Toy]);
    let spec = Spec::parse(Path::new("toy.toml"), &file, false, &unguarded).unwrap();
    let stems: Vec<String> = spec.plots[0]
        .figure_files("toy-run", &spec.sweep)
        .into_iter()
        .map(|f| f.0)
        .collect();
    assert_eq!(stems, ["toy-run-1", "toy-run-3"]);
    let dir = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(dir.path().to_path_buf());
    opts.progress = false;
    run(&spec, &opts).unwrap();
    let out = dir.path().join("toy-run");
    assert!(out.join("toy-run-1.png").is_file() && out.join("toy-run-3.svg").is_file());
    assert!(!out.join("toy-run-2.png").exists());
    let md = std::fs::read_to_string(out.join("table.md")).unwrap();
    assert!(
        md.contains("n = 1") && md.contains("n = 3") && !md.contains("n = 2"),
        "{md}"
    );
    let e = refused(&format!("{FILE}{}", plot("where = { n = [4] }\n")), false);
    assert!(
        e.contains("plot.where.n") && e.contains("allowed: 1, 2, 3"),
        "{e}"
    );
}
