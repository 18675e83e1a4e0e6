//! The hostile-input corpus of the run side (issue 27): bad experiment files, absurd `rfx run` flags and
//! damaged results folders, each thrown at the `rfx` binary.
//!
//! Every case asserts the documented contract: exit code 0 (ok), 1 (runtime failure) or 2 (user error) — a
//! bad file is 2 —, exactly one line on stderr for an error, `rfx validate` and `rfx run --quick` agreeing on
//! whether a file is valid (validate checks everything a run and a quick run use), nothing written for a
//! refused file, no temporary file left behind, and the input file untouched.
//!
//! The experiment files come from two sources: the hand-written ones under `tests/hostile/specs/` (first
//! line `# expect: <text the error must contain>`), and systematic mutations of a valid base (every line
//! deleted or renamed, or its value replaced by a value of another type or an absurd one), whose
//! verdict is not known in advance but must be the same for `validate`, `validate --quick` and `run --quick`.
//! A failed assertion is reported with its class, so that the counts by class can be compared before and
//! after a change.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest time one invocation may take: the corpus files are tiny or refused at once.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What one invocation of `rfx` did.
struct Outcome {
    /// Exit code (`None`: ended by a signal or killed at [`TIMEOUT`]).
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Runs `rfx args` in `cwd` with stdout and stderr in files (no pipe can fill up), killing it after
/// [`TIMEOUT`].
fn rfx(args: &[OsString], cwd: &Path, capture: &Path) -> Outcome {
    let out_path = capture.join("stdout");
    let err_path = capture.join("stderr");
    // RFX_HOSTILE_BIN: another binary (e.g. a copy of an older build) to record its counts by class.
    let bin =
        std::env::var_os("RFX_HOSTILE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_rfx").into());
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env("RFX_DATA_NO_DOWNLOAD", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("rfx starts");
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            timed_out = true;
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned(),
        timed_out,
    }
}

/// Failures found, by class, with examples.
#[derive(Default)]
struct Failures(Mutex<BTreeMap<&'static str, Vec<String>>>);

impl Failures {
    fn add(&self, class: &'static str, case: &str, detail: impl Into<String>) {
        let mut m = self.0.lock().unwrap();
        m.entry(class)
            .or_default()
            .push(format!("{case}: {}", detail.into()));
    }

    /// Prints the counts by class (the record of a corpus run) and fails with examples if any.
    fn finish(self, group: &str, cases: usize) {
        let m = self.0.into_inner().unwrap();
        let total: usize = m.values().map(Vec::len).sum();
        eprintln!("hostile corpus [{group}]: {cases} cases, {total} failures");
        for (class, list) in &m {
            eprintln!("  {class}: {}", list.len());
        }
        if total > 0 {
            let examples: Vec<String> = m
                .iter()
                .flat_map(|(class, list)| {
                    list.iter().take(4).map(move |l| format!("[{class}] {l}"))
                })
                .collect();
            panic!(
                "{group}: {total} failures in {cases} cases:\n{}",
                examples.join("\n")
            );
        }
    }
}

/// Checks of every invocation: an exit code of the contract, one line on stderr for an error, no hang.
fn check_outcome(f: &Failures, case: &str, what: &str, o: &Outcome) {
    if o.timed_out {
        f.add("hang (over 30 s)", case, what.to_string());
        return;
    }
    match o.code {
        Some(0) => {
            if o.stderr.trim().lines().count() > 1 {
                f.add(
                    "stderr not one line",
                    case,
                    format!("{what}: exit 0 with {:?}", o.stderr),
                );
            }
        }
        Some(1) | Some(2) => {
            if o.stderr.trim().lines().count() != 1 {
                f.add(
                    "stderr not one line",
                    case,
                    format!("{what}: {:?}", o.stderr),
                );
            }
        }
        other => f.add(
            "panic or abort (exit not 0, 1, 2)",
            case,
            format!("{what}: exit {other:?}: {}", o.stderr.trim()),
        ),
    }
}

/// Files under `dir` whose names mark them as temporary (`.<stem>.tmp-<host>-<pid>...`).
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            if p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(".tmp-"))
            {
                out.push(p);
            }
        }
    }
    out
}

/// An experiment file of the corpus: its bytes, and the text its error must contain (`None`: a mutation
/// whose verdict is not known in advance).
struct SpecCase {
    name: String,
    bytes: Vec<u8>,
    expect: Option<String>,
}

/// Runs `validate`, `validate --quick` and `run --quick` on one file and checks the contract; returns
/// whether the file was refused (exit code 2 from `run --quick`).
fn check_spec_case(f: &Failures, c: &SpecCase) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let capture = tempfile::tempdir().unwrap();
    let file = dir.path().join("case.toml");
    std::fs::write(&file, &c.bytes).unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let out = dir.path().join("out");
    let fs = file.clone().into_os_string();
    let validate = rfx(
        &[OsString::from("validate"), fs.clone()],
        dir.path(),
        capture.path(),
    );
    let validate_quick = rfx(
        &[OsString::from("validate"), fs.clone(), "--quick".into()],
        dir.path(),
        capture.path(),
    );
    let run = rfx(
        &[
            "run".into(),
            fs.clone(),
            "--quick".into(),
            "--no-progress".into(),
            "--threads".into(),
            "1".into(),
            "--out".into(),
            out.clone().into_os_string(),
        ],
        dir.path(),
        capture.path(),
    );
    for (what, o) in [
        ("validate", &validate),
        ("validate --quick", &validate_quick),
        ("run --quick", &run),
    ] {
        check_outcome(f, &c.name, what, o);
    }
    match &c.expect {
        Some(text) => {
            for (what, o) in [
                ("validate", &validate),
                ("validate --quick", &validate_quick),
                ("run --quick", &run),
            ] {
                if o.code != Some(2) {
                    f.add(
                        "bad file not refused (exit 2)",
                        &c.name,
                        format!("{what}: exit {:?} {}", o.code, o.stderr.trim()),
                    );
                } else if !o.stderr.contains(text.as_str()) {
                    f.add(
                        "message does not name the problem",
                        &c.name,
                        format!("{what}: expected {text:?} in {:?}", o.stderr.trim()),
                    );
                }
            }
        }
        None => {
            let codes = [validate.code, validate_quick.code, run.code];
            if codes.iter().any(|c| !matches!(c, Some(0) | Some(2))) {
                // reported by check_outcome or a runtime failure of a valid file
                if run.code == Some(1) {
                    f.add(
                        "runtime failure of a file validate accepts",
                        &c.name,
                        run.stderr.trim().to_string(),
                    );
                }
            } else if !(codes[0] == codes[1] && codes[1] == codes[2]) {
                f.add(
                    "validate and run --quick disagree",
                    &c.name,
                    format!(
                        "validate {:?}, validate --quick {:?}, run --quick {:?}: {} | {} | {}",
                        codes[0],
                        codes[1],
                        codes[2],
                        validate.stderr.trim(),
                        validate_quick.stderr.trim(),
                        run.stderr.trim()
                    ),
                );
            }
        }
    }
    if run.code == Some(2) && out.exists() {
        f.add(
            "files written for a refused file",
            &c.name,
            format!("{} exists", out.display()),
        );
    }
    let temps = temporaries(dir.path());
    if !temps.is_empty() {
        f.add("temporary files left", &c.name, format!("{temps:?}"));
    }
    let after = std::fs::read(&file).unwrap();
    if after != c.bytes || std::fs::metadata(&file).unwrap().modified().unwrap() != mtime {
        f.add("input changed", &c.name, "the experiment file was modified");
    }
    let extra: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "case.toml" && n != "out")
        .collect();
    if !extra.is_empty() {
        f.add(
            "files written next to the input",
            &c.name,
            format!("{extra:?}"),
        );
    }
    run.code == Some(2)
}

/// Runs `check` over `cases` on a few threads.
fn for_all<T: Sync>(cases: &[T], check: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = cases.get(i) else { break };
                check(c);
            });
        }
    });
}

/// The valid base of the mutations: every section a run reads, with `[quick]` overrides.
const BASE: &str = r#"[experiment]
name = "hb"
kind = "selftest"
seed = 3
title = "hostile base"
parallel_cells = true

[sweep]
dim = [1, 2, 3]
seed = [0, 1]

[selftest]
draws = 20
offset = 0.0

[[table]]
caption = "t"
rows = ["dim"]
columns = "seed"
value = "mean"
column_values = [0, 1]
digits = 3

[[claim]]
text = "c"
quote = "q"
metric = "mean"
by = "dim"
order = [[1], [2]]
better = "lower"

[[paper_value]]
metric = "mean"
value = 0.5
source = "paper"
ref = "s"
same_task = true

[paper_value.cell]
dim = 2

[[best_table]]
rows = ["seed"]
by = "dim"
alpha = 0.05

[[best_table.column]]
label = "m"
metric = "mean"

[best_table.column.where]
seed = [0, 1]

[quick.sweep]
dim = [1, 2]
seed = [0]

[quick.selftest]
draws = 10
"#;

/// Replacement values of a mutated line: another type, the empty list, absurd numbers.
const VALUES: [&str; 5] = ["\"x\"", "-1", "1e300", "[]", "[1, 1.0]"];

/// Every systematic mutation of [`BASE`].
fn mutations() -> Vec<SpecCase> {
    let lines: Vec<&str> = BASE.lines().collect();
    let mut out = Vec::new();
    let mut push = |name: String, text: String| {
        out.push(SpecCase {
            name,
            bytes: text.into_bytes(),
            expect: None,
        })
    };
    let join = |ls: Vec<String>| ls.join("\n") + "\n";
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        v.remove(i);
        push(format!("line {n} deleted"), join(v));
        if let Some((key, _)) = line.split_once(" = ") {
            for (j, value) in VALUES.iter().enumerate() {
                let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                v[i] = format!("{key} = {value}");
                push(format!("line {n} value {j} ({value})"), join(v));
            }
            let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            v[i] = line.replacen(key, &format!("{key}s"), 1);
            push(format!("line {n} key renamed"), join(v));
        } else if line.starts_with('[') {
            let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            v[i] = line.replacen(']', "x]", 1);
            push(format!("line {n} table renamed"), join(v));
        }
    }
    // Bytes that are not UTF-8, and a file cut in the middle.
    let mut bytes = BASE.as_bytes().to_vec();
    bytes.insert(BASE.find("hostile").unwrap(), 0xff);
    out.push(SpecCase {
        name: "invalid UTF-8".into(),
        bytes,
        expect: None,
    });
    for cut in [10, BASE.len() / 3, BASE.len() / 2, BASE.len() - 7] {
        out.push(SpecCase {
            name: format!("cut at byte {cut}"),
            bytes: BASE.as_bytes()[..cut].to_vec(),
            expect: None,
        });
    }
    out
}

/// The hand-written bad files under `tests/hostile/specs/`.
fn hand_written() -> Vec<SpecCase> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/specs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{}: first line must be `# expect: <text>`", p.display()))
                .trim()
                .to_string();
            SpecCase {
                name: p.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
                expect: Some(expect),
            }
        })
        .collect()
}

/// Sweeps too large to run, generated (the files would be megabytes): refused at once with the cell count.
fn huge_sweeps() -> Vec<SpecCase> {
    let head = "[experiment]\nname = \"h\"\nkind = \"selftest\"\nseed = 1\n\n[sweep]\n";
    let list = |n: usize| {
        (0..n)
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        SpecCase {
            name: "a million seeds".into(),
            bytes: format!("{head}dim = [1]\nseed = [{}]\n", list(1_000_000)).into_bytes(),
            expect: Some("1000000 values: the sweep would have at least 1000000 cells".into()),
        },
        SpecCase {
            name: "2000 x 1000 cells".into(),
            bytes: format!("{head}dim = [{}]\nseed = [{}]\n", list(2000), list(1000)).into_bytes(),
            expect: Some("the sweep has 2000000 cells".into()),
        },
        // issue 60, cause 3: a 10^6-character plot title aborted `rfx run` (5·10^6: a panic) and
        // `rfx validate` accepted it
        SpecCase {
            name: "a plot title of a million characters".into(),
            bytes: format!(
                "{head}dim = [1]\n\n[plot]\ntitle = \"{}\"\nx = \"dim\"\ny = \"mean\"\nx_label = \"d\"\ny_label = \"e\"\n",
                "W".repeat(1_000_000)
            )
            .into_bytes(),
            expect: Some("a string of 1000000 characters; allowed: at most 1000 (one line)".into()),
        },
        SpecCase {
            name: "an experiment title of five million characters".into(),
            bytes: format!(
                "[experiment]\nname = \"h\"\nkind = \"selftest\"\nseed = 1\ntitle = \"{}\"\n\n[sweep]\ndim = [1]\n",
                "é".repeat(5_000_000)
            )
            .into_bytes(),
            expect: Some("a string of 5000000 characters".into()),
        },
        SpecCase {
            name: "a control character in a label".into(),
            bytes: format!(
                "{head}dim = [1]\n\n[plot]\ntitle = \"t\"\nx = \"dim\"\ny = \"mean\"\nx_label = \"d\\u0007\"\ny_label = \"e\"\n"
            )
            .into_bytes(),
            expect: Some("the control character U+0007".into()),
        },
        SpecCase {
            name: "a huge quick sweep".into(),
            bytes: format!(
                "{head}dim = [1]\n\n[quick.sweep]\ndim = [{}]\nseed = [{}]\n",
                list(5000),
                list(5000)
            )
            .into_bytes(),
            expect: Some("the sweep has 25000000 cells".into()),
        },
    ]
}

#[test]
fn hostile_experiment_files() {
    let mut cases = hand_written();
    cases.extend(huge_sweeps());
    let n_bad = cases.len();
    cases.extend(mutations());
    assert!(
        cases.len() >= 100,
        "the corpus holds at least 100 experiment files"
    );
    let f = Failures::default();
    let t0 = Instant::now();
    let refused = AtomicUsize::new(0);
    for_all(&cases, |c| {
        if check_spec_case(&f, c) {
            refused.fetch_add(1, Ordering::Relaxed);
        }
    });
    let refused = refused.into_inner();
    eprintln!(
        "{} experiment files ({n_bad} hand-written or generated bad ones), {refused} refused, in {:.1} s",
        cases.len(),
        t0.elapsed().as_secs_f64()
    );
    f.finish("experiment files", cases.len());
    assert!(
        refused >= 100,
        "the corpus holds at least 100 bad experiment files: {refused} refused"
    );
}

/// A small valid experiment for the flag and damaged-state cases.
const SMALL: &str = r#"[experiment]
name = "hs"
kind = "selftest"
seed = 5

[sweep]
dim = [1, 2, 3]
seed = [0, 1]

[selftest]
draws = 10
"#;

#[test]
fn hostile_run_flags() {
    let root = tempfile::tempdir().unwrap();
    let spec = root.path().join("hs.toml");
    std::fs::write(&spec, SMALL).unwrap();
    let a_file = root.path().join("a-file");
    std::fs::write(&a_file, "keep").unwrap();
    let twin = root.path().join("twin.toml");
    std::fs::write(&twin, SMALL.replace("draws = 10", "draws = 11")).unwrap();
    let not_utf8 = root.path().join("bytes.toml");
    std::fs::write(&not_utf8, b"[experiment]\nname = \"\xff\"\n").unwrap();
    let s = spec.to_str().unwrap().to_string();
    let out = |name: &str| root.path().join(name).to_str().unwrap().to_string();
    // (case, arguments, expected exit code)
    let mut cases: Vec<(String, Vec<String>, i32)> = Vec::new();
    // A limit of a few zeptoseconds has passed before the first file starts: nothing is run or written.
    cases.push((
        "--time-limit 1e-320".into(),
        vec![
            "run".into(),
            s.clone(),
            "--time-limit".into(),
            "1e-320".into(),
            "--out".into(),
            out("o-t"),
        ],
        0,
    ));
    for t in ["0", "-1", "1e300", "nan", "inf", "-inf", "abc", ""] {
        cases.push((
            format!("--time-limit {t:?}"),
            vec![
                "run".into(),
                s.clone(),
                "--time-limit".into(),
                t.into(),
                "--out".into(),
                out("o-t"),
            ],
            2,
        ));
    }
    for t in ["0", "-3", "100000", "1e3", "99999999999999999999999"] {
        cases.push((
            format!("--threads {t}"),
            vec![
                "run".into(),
                s.clone(),
                "--threads".into(),
                t.into(),
                "--out".into(),
                out("o-th"),
            ],
            2,
        ));
    }
    cases.push((
        "--out names a file".into(),
        vec![
            "run".into(),
            s.clone(),
            "--out".into(),
            a_file.to_str().unwrap().into(),
        ],
        2,
    ));
    cases.push((
        "--out below a file".into(),
        vec![
            "run".into(),
            s.clone(),
            "--out".into(),
            format!("{}/sub", a_file.display()),
        ],
        2,
    ));
    cases.push((
        "--out not creatable".into(),
        vec![
            "run".into(),
            s.clone(),
            "--out".into(),
            "/proc/rfx-hostile/out".into(),
        ],
        2,
    ));
    cases.push((
        "missing experiment file".into(),
        vec!["run".into(), out("nope.toml"), "--out".into(), out("o-m")],
        2,
    ));
    cases.push((
        "experiment file is a directory".into(),
        vec![
            "run".into(),
            root.path().to_str().unwrap().into(),
            "--out".into(),
            out("o-d"),
        ],
        2,
    ));
    cases.push((
        "experiment file not UTF-8".into(),
        vec![
            "run".into(),
            not_utf8.to_str().unwrap().into(),
            "--out".into(),
            out("o-u"),
        ],
        2,
    ));
    cases.push((
        "two files, one experiment name".into(),
        vec![
            "run".into(),
            s.clone(),
            twin.to_str().unwrap().into(),
            "--fresh".into(),
            "--out".into(),
            out("o-twin"),
        ],
        2,
    ));
    cases.push((
        "one file named twice runs once".into(),
        vec![
            "run".into(),
            s.clone(),
            s.clone(),
            "--no-progress".into(),
            "--out".into(),
            out("o-same"),
        ],
        0,
    ));
    cases.push((
        "--times-from names a file".into(),
        vec![
            "run".into(),
            s.clone(),
            "--times-from".into(),
            a_file.to_str().unwrap().into(),
            "--out".into(),
            out("o-tf"),
        ],
        2,
    ));
    cases.push((
        "status --out names a file".into(),
        vec![
            "status".into(),
            s.clone(),
            "--out".into(),
            a_file.to_str().unwrap().into(),
        ],
        2,
    ));
    let f = Failures::default();
    let n = cases.len();
    for_all(&cases, |(name, a, code)| {
        let capture = tempfile::tempdir().unwrap();
        let a: Vec<OsString> = a.iter().map(OsString::from).collect();
        let o = rfx(&a, root.path(), capture.path());
        check_outcome(&f, name, "rfx", &o);
        if o.code != Some(*code) {
            f.add(
                "wrong exit code",
                name,
                format!("exit {:?}, expected {code}: {}", o.code, o.stderr.trim()),
            );
        }
    });
    if std::fs::read_to_string(&a_file).unwrap() != "keep" {
        f.add(
            "input changed",
            "--out names a file",
            "the file was modified",
        );
    }
    for o in ["o-t", "o-th", "o-m", "o-d", "o-u", "o-twin", "o-tf"] {
        if Path::new(&out(o)).join("hs").exists() {
            f.add(
                "files written for a refused run",
                o,
                "results folder created",
            );
        }
    }
    if !temporaries(root.path()).is_empty() {
        f.add(
            "temporary files left",
            "flags",
            format!("{:?}", temporaries(root.path())),
        );
    }
    f.finish("run flags", n);
}

/// How a results folder is damaged, and what a later run must do.
struct Damage {
    name: &'static str,
    damage: fn(&Path),
    /// Exit code of `rfx run` on the damaged folder (`--fresh` must always give 0).
    run_code: i32,
    /// Text `rfx run`'s one stderr line must contain (for exit 0: its warning).
    message: &'static str,
    /// Text `rfx status` must print.
    status: &'static str,
}

fn cells_of(dir: &Path) -> PathBuf {
    dir.join("hs/cells.csv")
}

fn edit_cells(dir: &Path, edit: impl FnOnce(Vec<u8>) -> Vec<u8>) {
    let p = cells_of(dir);
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, edit(bytes)).unwrap();
}

/// Byte offset of the start of line `n` (0-based) of `bytes`.
fn line_start(bytes: &[u8], n: usize) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(n - 1)
        .map_or(0, |(i, _)| i + 1)
}

#[test]
fn hostile_damaged_results_folders() {
    let damages: Vec<Damage> = vec![
        Damage {
            name: "invalid UTF-8 byte in a row",
            damage: |d| {
                edit_cells(d, |mut b| {
                    let at = line_start(&b, 3) + 2;
                    b.insert(at, 0xff);
                    b
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "partial: 5 of 6",
        },
        Damage {
            name: "invalid UTF-8 byte in the header",
            damage: |d| {
                edit_cells(d, |mut b| {
                    b.insert(1, 0xfe);
                    b
                })
            },
            run_code: 2,
            message: "--fresh",
            status: "header",
        },
        Damage {
            name: "empty cells.csv",
            damage: |d| std::fs::write(cells_of(d), "").unwrap(),
            run_code: 0,
            message: "",
            status: "not run",
        },
        Damage {
            name: "header only",
            damage: |d| edit_cells(d, |b| b[..line_start(&b, 1)].to_vec()),
            run_code: 0,
            message: "",
            status: "partial: 0 of 6",
        },
        Damage {
            name: "missing .fingerprint",
            damage: |d| std::fs::remove_file(d.join("hs/.fingerprint")).unwrap(),
            run_code: 2,
            message: ".fingerprint",
            status: ".fingerprint",
        },
        Damage {
            name: "empty .fingerprint",
            damage: |d| std::fs::write(d.join("hs/.fingerprint"), "").unwrap(),
            run_code: 2,
            message: ".fingerprint",
            status: ".fingerprint",
        },
        Damage {
            name: "last line cut mid-row",
            damage: |d| {
                edit_cells(d, |b| {
                    let n = b.len();
                    b[..n - 9].to_vec()
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "partial: 5 of 6",
        },
        Damage {
            name: "a middle line cut short",
            damage: |d| {
                edit_cells(d, |b| {
                    let (s, e) = (line_start(&b, 2), line_start(&b, 3));
                    let mut out = b[..s + (e - s) / 2].to_vec();
                    out.push(b'\n');
                    out.extend_from_slice(&b[e..]);
                    out
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "partial: 5 of 6",
        },
        Damage {
            name: "metric not a number",
            damage: |d| {
                edit_cells(d, |b| {
                    let text = String::from_utf8(b).unwrap();
                    let mut lines: Vec<String> = text.lines().map(String::from).collect();
                    let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
                    fields[2] = "garbage".into();
                    lines[2] = fields.join(",");
                    (lines.join("\n") + "\n").into_bytes()
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "partial: 5 of 6",
        },
        // issue 60: NaN and infinity typed in by hand were taken as metrics and reached the summary
        Damage {
            name: "metric NaN",
            damage: |d| {
                edit_cells(d, |b| {
                    let text = String::from_utf8(b).unwrap();
                    let mut lines: Vec<String> = text.lines().map(String::from).collect();
                    let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
                    fields[2] = "NaN".into();
                    lines[2] = fields.join(",");
                    (lines.join("\n") + "\n").into_bytes()
                })
            },
            run_code: 0,
            message: "is \"NaN\"; allowed: a finite number",
            status: "partial: 5 of 6",
        },
        Damage {
            name: "metric infinite",
            damage: |d| {
                edit_cells(d, |b| {
                    let text = String::from_utf8(b).unwrap();
                    let mut lines: Vec<String> = text.lines().map(String::from).collect();
                    let mut fields: Vec<String> = lines[3].split(',').map(String::from).collect();
                    fields[2] = "-inf".into();
                    lines[3] = fields.join(",");
                    (lines.join("\n") + "\n").into_bytes()
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "partial: 5 of 6",
        },
        Damage {
            name: "a row twice",
            damage: |d| {
                edit_cells(d, |b| {
                    let text = String::from_utf8(b).unwrap();
                    let row = text.lines().nth(1).unwrap().to_string();
                    format!("{text}{row}\n").into_bytes()
                })
            },
            run_code: 0,
            message: "dropped 1",
            status: "complete (6 cells",
        },
        Damage {
            name: "cells.csv is a directory",
            damage: |d| {
                std::fs::remove_file(cells_of(d)).unwrap();
                std::fs::create_dir(cells_of(d)).unwrap();
            },
            run_code: 2,
            message: "cells.csv",
            status: "cells.csv",
        },
    ];
    let f = Failures::default();
    let n = damages.len();
    let root = tempfile::tempdir().unwrap();
    let spec = root.path().join("hs.toml");
    std::fs::write(&spec, SMALL).unwrap();
    let s = spec.into_os_string();
    for_all(&damages, |d| {
        let capture = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let o = out.path().as_os_str().to_owned();
        let run_args = |fresh: bool| {
            let mut a = vec![
                "run".into(),
                s.clone(),
                "--no-progress".into(),
                "--out".into(),
                o.clone(),
            ];
            if fresh {
                a.push("--fresh".into());
            }
            a
        };
        let first = rfx(&run_args(false), root.path(), capture.path());
        assert_eq!(first.code, Some(0), "{}", first.stderr);
        (d.damage)(out.path());
        let status = rfx(
            &[
                OsString::from("status"),
                s.clone(),
                "--out".into(),
                o.clone(),
            ],
            root.path(),
            capture.path(),
        );
        check_outcome(&f, d.name, "status", &status);
        if status.code != Some(0) || !status.stdout.contains(d.status) {
            f.add(
                "status misreports damaged state",
                d.name,
                format!(
                    "exit {:?}, expected {:?} in {:?}{}",
                    status.code,
                    d.status,
                    status.stdout.trim(),
                    status.stderr.trim()
                ),
            );
        }
        let again = rfx(&run_args(false), root.path(), capture.path());
        check_outcome(&f, d.name, "run", &again);
        if again.code != Some(d.run_code) || !again.stderr.contains(d.message) {
            f.add(
                "run mishandles damaged state",
                d.name,
                format!(
                    "exit {:?} (expected {}), stderr {:?} (expected {:?})",
                    again.code,
                    d.run_code,
                    again.stderr.trim(),
                    d.message
                ),
            );
        }
        if d.run_code == 0 && again.code == Some(0) {
            let text = std::fs::read_to_string(cells_of(out.path())).unwrap_or_default();
            if text.lines().count() != 7 {
                f.add(
                    "damaged state not recovered",
                    d.name,
                    format!("cells.csv after the run:\n{text}"),
                );
            }
        }
        if d.name != "cells.csv is a directory" {
            let fresh = rfx(&run_args(true), root.path(), capture.path());
            check_outcome(&f, d.name, "run --fresh", &fresh);
            let rows =
                std::fs::read_to_string(cells_of(out.path())).map_or(0, |t| t.lines().count());
            if fresh.code != Some(0) || rows != 7 {
                f.add(
                    "--fresh does not start over",
                    d.name,
                    format!(
                        "exit {:?}, {rows} lines: {}",
                        fresh.code,
                        fresh.stderr.trim()
                    ),
                );
            }
        }
        if !temporaries(out.path()).is_empty() {
            f.add(
                "temporary files left",
                d.name,
                format!("{:?}", temporaries(out.path())),
            );
        }
    });
    f.finish("damaged results folders", n);
}

/// Issue 60, the fresh hostile set's remaining cases: each was a hang, a NaN in an output, a silent
/// acceptance or a message that did not say what was wrong. Every one must now be exit 2 with one line on
/// stderr holding the text given (or, for `run`, recompute the damaged cell).
#[test]
fn hostile_round_two_messages() {
    let root = tempfile::tempdir().unwrap();
    let d = root.path();
    let capture = tempfile::tempdir().unwrap();
    let spec = d.join("hs.toml");
    // a [quick] sweep: a quick folder read as a full run looks partial
    std::fs::write(&spec, format!("{SMALL}\n[quick]\nsweep.dim = [1, 2]\n")).unwrap();
    let mut rows = String::from("a,b,label\n");
    for i in 0..40 {
        let label = if i % 2 == 0 { "dog" } else { "cat, tabby" };
        rows.push_str(&format!("{},{},\"{label}\"\n", i % 7, (i * 3) % 5));
    }
    std::fs::write(d.join("tr.csv"), &rows).unwrap();
    std::fs::write(d.join("te.csv"), rows.replace("\"cat, tabby\"", "cow")).unwrap();
    std::fs::write(d.join("x.csv"), "1,2\n3,4\n5,6\n").unwrap();
    let fifo = d.join("f.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo_toml = d.join("f.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo_toml)
        .status()
        .unwrap()
        .success());
    let a = |s: &str| -> Vec<OsString> { s.split(' ').map(OsString::from).collect() };
    let f = Failures::default();
    let mut n = 0;
    let mut expect = |args: Vec<OsString>, code: i32, text: &str| -> Outcome {
        n += 1;
        let o = rfx(&args, d, capture.path());
        let name = format!("{args:?}");
        check_outcome(&f, &name, "round two", &o);
        if o.timed_out || o.code != Some(code) || !o.stderr.contains(text) {
            f.add(
                "round two: not the expected outcome",
                &name,
                format!(
                    "exit {:?} (expected {code}), stderr {:?} (expected {text:?})",
                    o.code,
                    o.stderr.trim()
                ),
            );
        }
        o
    };
    // 1. a FIFO with no writer hung in open(); refused at once wherever an input is read
    let fifo_error = "is a FIFO, expected a regular .csv or .npy file";
    expect(
        a("features --method rff --dim 8 --input f.csv --output o.csv"),
        2,
        &format!("--input f.csv: {fifo_error}"),
    );
    expect(
        a("gram --kernel gaussian --input x.csv --against f.csv --output k.csv"),
        2,
        &format!("--against f.csv: {fifo_error}"),
    );
    expect(
        a("features --method nystrom --dim 2 --input x.csv --fit-on f.csv --output o.csv"),
        2,
        &format!("--fit-on f.csv: {fifo_error}"),
    );
    expect(
        a("fit --method rff --dim 8 --input tr.csv --test f.csv --target-column label --task classification"),
        2,
        &format!("--test f.csv: {fifo_error}"),
    );
    expect(
        a("validate f.toml"),
        2,
        "f.toml: is a pipe or FIFO with nothing written to it",
    );
    // 3. --block-rows 0 was accepted silently
    expect(
        a("features --method rff --dim 8 --input x.csv --output o.csv --block-rows 0"),
        2,
        "allowed: 1 to 2^64 - 1",
    );
    // 4. the polynomial kernel's overflow named the internal `taylor[0]`
    expect(
        a("gram --kernel polynomial --param degree=60 --param c=1000000 --input x.csv --output k.csv"),
        2,
        "invalid parameter `c` = 1000000 with degree = 60: allowed c^degree finite in float64",
    );
    // 9. text class labels: classes in sorted order; a test label unseen in training names its row
    let o = expect(
        a("fit --method rff --dim 16 --input tr.csv --test tr.csv --target-column label --task classification --predictions p.csv"),
        0,
        "",
    );
    if !o.stdout.contains("2 classes: cat, tabby, dog") {
        f.add("round two: text labels", "fit", o.stdout.clone());
    }
    let p = std::fs::read_to_string(d.join("p.csv")).unwrap_or_default();
    if !p.starts_with("prediction\n")
        || !p
            .lines()
            .skip(1)
            .all(|l| l == "dog" || l == "\"cat, tabby\"")
    {
        f.add("round two: text labels", "predictions", p);
    }
    expect(
        a("fit --method rff --dim 16 --input tr.csv --test te.csv --target-column label --task classification"),
        2,
        "--test te.csv: data row 2: label \"cow\" is not among the training labels (cat, tabby, dog)",
    );
    // results folders: a quick run to damage
    let run = |extra: &str| {
        a(&format!(
            "run --quick --no-progress --out out hs.toml{extra}"
        ))
    };
    expect(run(""), 0, "");
    // 2. NaN typed into cells.csv: `rfx plot` refuses it naming line and column, `rfx run` recomputes it
    let cells = d.join("out/hs/cells.csv");
    let text = std::fs::read_to_string(&cells).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut fields: Vec<String> = lines[1].split(',').map(String::from).collect();
    fields[2] = "NaN".into();
    lines[1] = fields.join(",");
    std::fs::write(&cells, lines.join("\n") + "\n").unwrap();
    expect(
        a("plot out/hs"),
        2,
        "out/hs/cells.csv: line 2, column 3: metric `mean` is \"NaN\"; allowed: a finite number",
    );
    expect(a("report --root out"), 2, "line 2, column 3: metric `mean`");
    expect(run(""), 0, "dropped 1 damaged");
    expect(a("plot out/hs"), 0, "");
    // 7. an unknown machine kind printed a table of dashes
    let o = expect(
        a("plan --quick --times-from out --machine-kind Z80 hs.toml"),
        2,
        "--machine-kind \"Z80\": not a machine kind rfx records, and no cell under out is of it; allowed: AVX-512, AVX2",
    );
    let allowed: Vec<&str> = o
        .stderr
        .trim()
        .rsplit("allowed: ")
        .next()
        .unwrap_or("")
        .split(", ")
        .collect();
    if allowed.iter().collect::<BTreeSet<_>>().len() != allowed.len() {
        f.add(
            "round two: machine kinds listed twice",
            "plan",
            o.stderr.clone(),
        );
    }
    expect(
        a("plan --quick --times-from out --machine-kind AVX2 hs.toml"),
        0,
        "",
    );
    // 8. a damaged manifest was ignored and the README said the run stopped at its time limit
    std::fs::write(d.join("out/hs/manifest.json"), "{\"a\":").unwrap();
    expect(
        a("report --root out"),
        0,
        "report: warning: out/hs/manifest.json: unreadable: not JSON",
    );
    let readme = std::fs::read_to_string(d.join("out/README.md")).unwrap_or_default();
    if readme.contains("time limit") || !readme.contains("manifest unreadable") {
        f.add("round two: damaged manifest", "README", readme);
    }
    std::fs::remove_file(d.join("out/hs/manifest.json")).unwrap();
    std::fs::create_dir(d.join("out/hs/manifest.json")).unwrap();
    expect(
        a("report --root out"),
        0,
        "out/hs/manifest.json: unreadable: is a directory",
    );
    // 6. a results folder that is a symlink loop: "File exists"
    std::fs::create_dir(d.join("o2")).unwrap();
    std::os::unix::fs::symlink("hs", d.join("o2/hs")).unwrap();
    expect(
        a("run --quick --no-progress --out o2 hs.toml"),
        2,
        "o2/hs: cannot create the results folder: is a symbolic link loop, not a directory",
    );
    f.finish("round two", n);
}
