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

fn guard() -> Box<dyn std::any::Any> {
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
    Kinds::new(vec![&Toy]).with_run_guard(guard)
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
    assert_eq!(lines[0], "n,seed,scaled,guarded,note,time_s,commit,load");
    assert_eq!(lines.len(), 7);
    for line in &lines[1..] {
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
