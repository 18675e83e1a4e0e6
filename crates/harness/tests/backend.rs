//! `[experiment] backend`: one of the application's backend names ([`Kinds::with_backends`]), the first by
//! default. The default leaves the fingerprint as it is without the key (so committed results stay
//! current), another name changes it, an unknown name is refused with the allowed ones, and the run guard
//! receives the chosen name while the cells run.

use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

use rfx_core::RfxRng;
use rfx_harness::config::{ConfigError, Section};
use rfx_harness::kind::check_int;
use rfx_harness::run::{run, RunOptions};
use rfx_harness::{Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, Spec};

/// The backend the guard was given: 0 none, 1 "slow", 2 "fast"; set while the guard is alive.
static IN_FORCE: AtomicU8 = AtomicU8::new(0);

/// Metric `backend` = the code of the backend in force when the cell runs.
struct Probe;
struct ProbeRunner;

impl Kind for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn about(&self) -> &'static str {
        "reports the backend in force"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec {
            name: "n",
            allowed: "integers from 1 to 10",
            check: |v| check_int(v, 1, 10),
            required: true,
        }]
    }
    fn configure(&self, _: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        Ok(Box::new(ProbeRunner))
    }
}

impl Runner for ProbeRunner {
    fn metrics(&self) -> Vec<String> {
        vec!["backend".into()]
    }
    fn settings(&self) -> String {
        String::new()
    }
    fn run_cell(&self, _: &Cell, _: &mut RfxRng) -> Result<CellOutput, CellError> {
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![f64::from(IN_FORCE.load(Ordering::SeqCst))],
            timings: Vec::new(),
        })
    }
}

struct Restore;
impl Drop for Restore {
    fn drop(&mut self) {
        IN_FORCE.store(0, Ordering::SeqCst);
    }
}

fn kinds(backends: bool) -> Kinds {
    let k = Kinds::new(vec![&Probe]).with_run_guard(|name| {
        IN_FORCE.store(if name == "fast" { 2 } else { 1 }, Ordering::SeqCst);
        Box::new(Restore)
    });
    if backends {
        k.with_backends(&["slow", "fast"])
    } else {
        k
    }
}

fn parse(extra: &str, backends: bool) -> Result<Spec, ConfigError> {
    let text = format!(
        "[experiment]\nname = \"probe\"\nkind = \"probe\"\nseed = 3\n{extra}\n[sweep]\nn = [1, 2]\n"
    );
    Spec::parse(Path::new("probe.toml"), &text, false, &kinds(backends))
}

#[test]
fn backend_key_is_checked_fingerprinted_and_given_to_the_run_guard() {
    let plain = parse("", true).unwrap();
    let default = parse("backend = \"slow\"", true).unwrap();
    let fast = parse("backend = \"fast\"", true).unwrap();
    assert_eq!(plain.backend, "slow");
    assert_eq!(plain.fingerprint(), default.fingerprint());
    assert_ne!(plain.fingerprint(), fast.fingerprint());
    // an application without backends: the same fingerprint, and the key is unknown
    assert_eq!(parse("", false).unwrap().fingerprint(), plain.fingerprint());
    let e = parse("backend = \"fast\"", false)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("probe.toml") && e.contains("backend"), "{e}");
    let e = parse("backend = \"gpu\"", true).err().unwrap().to_string();
    assert!(
        e.contains("probe.toml:5")
            && e.contains("`experiment.backend`")
            && e.contains("allowed: slow, fast"),
        "{e}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    for (spec, code) in [(plain, 1.0), (fast, 2.0)] {
        let mut opts = RunOptions::new(dir.clone());
        opts.progress = false;
        opts.fresh = true;
        run(&spec, &opts).unwrap();
        let cells = std::fs::read_to_string(dir.join("probe").join("cells.csv")).unwrap();
        let mut rows = csv::Reader::from_reader(cells.as_bytes());
        let col = rows
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "backend")
            .unwrap();
        for row in rows.records() {
            assert_eq!(row.unwrap()[col].parse::<f64>().unwrap(), code);
        }
        assert_eq!(
            IN_FORCE.load(Ordering::SeqCst),
            0,
            "guard dropped after the run"
        );
    }
}
