//! End-to-end tests of the `rfx` binary: configuration errors, determinism across thread counts, and
//! resumption after `kill -9`.

mod common;

use common::{rfx, rows_without_timings, run, write, SELFTEST};
use std::path::{Path, PathBuf};
use std::process::Command;

fn assert_config_error(toml: &str, expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "bad.toml", toml);
    let out_dir = dir.path().join("out");
    for args in [
        vec!["validate", f.to_str().unwrap()],
        vec![
            "run",
            f.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    ] {
        let o = run(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        for e in expect {
            assert!(stderr.contains(e), "{args:?}: expected {e:?} in: {stderr}");
        }
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(
            !out_dir.exists(),
            "nothing is written on a configuration error"
        );
    }
}

#[test]
fn unknown_key_is_rejected_with_line_and_allowed_keys() {
    let toml = SELFTEST.replace("draws = 2000", "draws = 2000\ndraw = 5");
    assert_config_error(
        &toml,
        &[
            "bad.toml:13:",
            "`selftest.draw`",
            "unknown key",
            "allowed keys here: abort_after_cells, draws, offset, sleep_ms, wait_for_file",
        ],
    );
    let toml = SELFTEST.replace("[sweep]", "[sweep]\nsize = [1]");
    assert_config_error(
        &toml,
        &["bad.toml:8:", "`sweep.size`", "unknown key", "dim, seed"],
    );
}

#[test]
fn wrong_type_is_rejected() {
    let toml = SELFTEST.replace("draws = 2000", "draws = \"many\"");
    assert_config_error(
        &toml,
        &[
            "bad.toml:12:",
            "`selftest.draws`",
            "expected an integer, found a string",
        ],
    );
    let toml = SELFTEST.replace("seed = 11", "seed = 1.5");
    assert_config_error(
        &toml,
        &["bad.toml:5:", "`experiment.seed`", "expected an integer"],
    );
}

#[test]
fn empty_sweep_is_rejected() {
    let toml = SELFTEST.replace("dim = [1, 2, 3, 4, 5, 6, 7, 8]", "dim = []");
    assert_config_error(&toml, &["bad.toml:8:", "`sweep.dim`", "empty sweep list"]);
}

#[test]
fn negative_dimension_is_rejected() {
    let toml = SELFTEST.replace("dim = [1, 2, 3, 4, 5, 6, 7, 8]", "dim = [4, -3]");
    assert_config_error(
        &toml,
        &[
            "bad.toml:8:",
            "`sweep.dim`",
            "value -3 out of range",
            "positive integers",
        ],
    );
}

#[test]
fn text_parameter_on_the_plot_x_axis_is_rejected() {
    let toml = r#"
[experiment]
name = "t"
kind = "krr_table"
seed = 1

[sweep]
dataset = ["uci-raw/power-plant"]
method = ["rff", "nystrom"]

[plot]
x = "method"
y = "test_mse"
"#;
    assert_config_error(
        toml,
        &[
            "bad.toml:12:",
            "`plot.x`",
            "the x axis needs numbers",
            "\"rff\"",
        ],
    );
}

#[test]
fn exact_cv_rows_takes_all_or_a_count() {
    let toml = r#"
[experiment]
name = "t"
kind = "krr_table"
seed = 1

[sweep]
dataset = ["uci-raw/power-plant"]
method = ["exact"]

[krr_table]
exact_cv_rows = "most"
"#;
    assert_config_error(
        toml,
        &[
            "bad.toml:12:",
            "`krr_table.exact_cv_rows`",
            "\"most\"",
            "allowed: \"all\"",
            "integer from 10 to 100000",
        ],
    );
    assert_config_error(
        &toml.replace("\"most\"", "5"),
        &[
            "bad.toml:12:",
            "`krr_table.exact_cv_rows`",
            "\"5\"",
            "allowed: \"all\"",
        ],
    );
}

#[test]
fn unknown_kind_lists_the_kinds() {
    let toml = SELFTEST.replace("kind = \"selftest\"", "kind = \"nope\"");
    assert_config_error(
        &toml,
        &["bad.toml:4:", "`experiment.kind`", "allowed: ", "selftest"],
    );
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let mut tables = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        let o = run(&[
            "run",
            f.to_str().unwrap(),
            "--threads",
            threads,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let cells = out.join("st/cells.csv");
        for name in ["summary.csv", "manifest.json", "config.toml", "report.md"] {
            assert!(out.join("st").join(name).is_file(), "{name} written");
        }
        tables.push(rows_without_timings(&cells));
    }
    assert_eq!(tables[0].len(), 1 + 8 * 3);
    assert_eq!(tables[0], tables[1]);
}

/// A run killed half-way resumes to the same cells as an uninterrupted run, computing only the missing ones.
/// Deterministic: the selftest kind's `abort_after_cells = 9` ends the process (exit code 137, no outputs,
/// no final rewrite) when its tenth cell starts, so on one thread exactly nine finished rows are on disk;
/// the test then appends half a row, as a kill during a write leaves it.
#[test]
fn killed_run_resumes_without_recomputing() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let reference = dir.path().join("reference");
    let o = run(&[
        "run",
        f.to_str().unwrap(),
        "--threads",
        "2",
        "--out",
        reference.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The same experiment (same fingerprint: `abort_after_cells` is not a setting of the results).
    let aborting = write(
        dir.path(),
        "st-abort.toml",
        &SELFTEST.replace("draws = 2000", "draws = 2000\nabort_after_cells = 9"),
    );
    let out = dir.path().join("killed");
    let cells = out.join("st/cells.csv");
    let o = run(&[
        "run",
        aborting.to_str().unwrap(),
        "--threads",
        "1",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(137),
        "the run should end at its tenth cell: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !out.join("st/summary.csv").exists(),
        "a killed run writes no outputs"
    );
    let before = std::fs::read_to_string(&cells).unwrap();
    let finished: Vec<String> = before.lines().skip(1).map(String::from).collect();
    assert_eq!(
        finished.len(),
        9,
        "rows on disk when the tenth cell started:\n{before}"
    );
    assert!(
        // dim, seed, mean, scaled, note, time_s, commit, load, cpu
        finished.iter().all(|l| l.split(',').count() == 9),
        "{before}"
    );
    // A kill in the middle of writing the tenth row leaves part of it, without a newline.
    let key = |row: &str| row.split(',').take(2).collect::<Vec<_>>().join(",");
    let reference_rows = std::fs::read_to_string(reference.join("st/cells.csv")).unwrap();
    let tenth = reference_rows
        .lines()
        .skip(1)
        .find(|r| !finished.iter().any(|f| key(f) == key(r)))
        .expect("a cell the aborted run did not finish");
    let cut = &tenth[..tenth.len() / 2];
    std::fs::write(&cells, format!("{before}{cut}")).unwrap();

    let o = run(&[
        "run",
        f.to_str().unwrap(),
        "--threads",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The rerun computes only the missing cells, the cut-off row among them...
    assert!(stdout.contains("(15 computed, 9 reused"), "{stdout}");
    // ...keeps the finished rows as they were, timings included...
    let after = std::fs::read_to_string(&cells).unwrap();
    for row in &finished {
        assert!(
            after.lines().any(|a| a == row),
            "finished row not kept verbatim: {row}\n{after}"
        );
    }
    assert!(
        !after.lines().any(|a| a == cut),
        "the cut-off row was kept:\n{after}"
    );
    // ...and ends with the same rows as the uninterrupted run.
    assert_eq!(
        rows_without_timings(&cells),
        rows_without_timings(&reference.join("st/cells.csv"))
    );
}

/// Two runs into one results folder: the second is refused at once (exit code 2, one line naming the
/// folder), whatever its settings, while the first holds the folder's lock; a run killed with SIGKILL
/// leaves no lock behind, and the next run resumes. Deterministic: the first run's cells wait for a file
/// that is never created (selftest `wait_for_file`), and it holds the lock from before it writes
/// `cells.csv` until it ends.
#[test]
fn a_second_run_into_one_folder_is_refused_and_a_killed_runs_lock_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let go = dir.path().join("never-created");
    let holding = write(
        dir.path(),
        "st-hold.toml",
        &SELFTEST.replace(
            "draws = 2000",
            &format!("draws = 2000\nwait_for_file = {:?}", go.to_str().unwrap()),
        ),
    );
    let other = write(
        dir.path(),
        "st-other.toml",
        &SELFTEST.replace("draws = 2000", "draws = 10"),
    );
    let out = dir.path().join("out");
    let mut first = rfx()
        .args([
            "run",
            holding.to_str().unwrap(),
            "--threads",
            "1",
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cells = out.join("st/cells.csv");
    let t0 = std::time::Instant::now();
    while !cells.exists() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(120),
            "the first run did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let before = std::fs::read(&cells).unwrap();
    for (file, extra) in [(&f, None), (&other, Some("--fresh"))] {
        let mut args = vec![
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = run(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: another rfx run is writing into this results folder",
                out.join("st").display()
            )),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&cells).unwrap(),
        before,
        "the refused runs wrote nothing"
    );
    // status only reads: it works while the folder is locked
    let o = run(&[
        "status",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    first.kill().unwrap(); // SIGKILL: no destructor, no cleanup
    first.wait().unwrap();
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("(24 computed, 0 reused"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn time_limit_stops_early_marks_outputs_partial_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    // 24 cells of ≥ 60 ms each on one thread: a 0.6 s limit stops the run after about 10 of them.
    let slow = SELFTEST.replace("draws = 2000", "draws = 2000\nsleep_ms = 60")
        + "\n[plot]\ntitle = \"t\"\nx = \"dim\"\ny = \"mean\"\nx_label = \"d\"\ny_label = \"m\"\n\n[[table]]\nrows = [\"dim\"]\ncolumns = \"seed\"\nvalue = \"mean\"\n";
    let f = write(dir.path(), "st.toml", &slow);
    let out = dir.path().join("out");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "run".to_string(),
            f.to_str().unwrap().to_string(),
            "--threads".into(),
            "1".into(),
            "--out".into(),
            out.to_str().unwrap().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let status = || {
        let o = run(&[
            "status",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(status().contains("not run (24 cells"), "{}", status());

    let o = rfx()
        .args(args(&["--time-limit", "0.01"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let cells = out.join("st/cells.csv");
    let done = std::fs::read_to_string(&cells).unwrap().lines().count() - 1;
    assert!(
        (1..24).contains(&done),
        "stopped part-way: {done} cells\n{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} cells not computed", 24 - done)),
        "{stdout}"
    );
    let partial = format!("Partial results: {done} of 24 cells computed");
    for file in ["table.md", "report.md"] {
        let text = std::fs::read_to_string(out.join("st").join(file)).unwrap();
        assert!(text.contains(&partial), "{file}: {text}");
    }
    assert!(out.join("st/st.png").is_file());
    assert!(
        status().contains(&format!("partial: {done} of 24 cells")),
        "{}",
        status()
    );
    let manifest = std::fs::read_to_string(out.join("st/manifest.json")).unwrap();
    assert!(
        manifest.contains(&format!("\"cells_remaining\": {}", 24 - done)),
        "{manifest}"
    );

    // Once the limit has passed, experiment files are not started and their folders are left as they are.
    let report = std::fs::read(out.join("st/report.md")).unwrap();
    let o = rfx()
        .args(args(&["--time-limit", "1e-9"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("st: not started, time limit reached"));
    assert_eq!(std::fs::read(out.join("st/report.md")).unwrap(), report);
    // `rfx plot` rebuilds the outputs of a partial folder with the mark
    std::fs::remove_file(out.join("st/table.md")).unwrap();
    assert!(run(&["plot", out.join("st").to_str().unwrap()])
        .status
        .success());
    let table = std::fs::read_to_string(out.join("st/table.md")).unwrap();
    assert!(table.contains(&partial), "{table}");
    // … and its resume command names the experiment file the run came from, not the folder's copy
    assert!(
        table.contains(&format!("`rfx run {}` computes the rest", f.display())),
        "{table}"
    );

    // Without a limit the rest is computed, the mark disappears, and the rows equal an uninterrupted run's.
    let o = rfx().args(args(&[])).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains(&format!("({} computed, {done} reused", 24 - done)));
    let text = std::fs::read_to_string(out.join("st/report.md")).unwrap();
    assert!(!text.contains("Partial results"), "{text}");
    assert!(status().contains("complete (24 cells"), "{}", status());
    let reference = dir.path().join("reference");
    assert!(run(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        reference.to_str().unwrap()
    ])
    .status
    .success());
    assert_eq!(
        rows_without_timings(&cells),
        rows_without_timings(&reference.join("st/cells.csv"))
    );

    // Other settings: stale, and a negative limit is a usage error.
    write(
        dir.path(),
        "st.toml",
        &slow.replace("draws = 2000", "draws = 10"),
    );
    assert!(status().contains("stale"), "{}", status());
    let o = rfx().args(args(&["--time-limit", "-1"])).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--time-limit"));
}

#[test]
fn changed_settings_are_not_mixed_with_old_cells() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("out");
    assert!(
        run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .status
            .success()
    );
    write(
        dir.path(),
        "st.toml",
        &SELFTEST.replace("draws = 2000", "draws = 10"),
    );
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fresh"));
    let o = run(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--fresh",
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("(24 computed, 0 reused"));
}

#[test]
fn report_gives_repeated_titles_distinct_anchors() {
    // Two experiments with one title: the contents must link to both headings, as GitHub numbers them.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for name in ["st", "st2"] {
        let toml = SELFTEST
            .replace(
                "name = \"st\"",
                &format!("name = \"{name}\"\ntitle = \"Same title: down-scaled\""),
            )
            .replace("dim = [1, 2, 3, 4, 5, 6, 7, 8]", "dim = [1, 2]");
        let f = write(dir.path(), &format!("{name}.toml"), &toml);
        let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = run(&["report", "--root", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme.contains("- [Same title: down-scaled](#same-title-down-scaled) — `st`"),
        "{readme}"
    );
    assert!(
        readme.contains("- [Same title: down-scaled](#same-title-down-scaled-1) — `st2`"),
        "{readme}"
    );
}

/// Every file under `dir` with its bytes, by relative path.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn rerun_without_new_cells_changes_no_file_and_keeps_the_record_of_the_computing_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("out");
    let manifest = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("st/manifest.json")).unwrap())
            .unwrap()
    };
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = snapshot(&out);
    // A rerun and a report that compute nothing leave every file byte-identical: no new time stamp,
    // commit or wall time.
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 computed, 24 reused"));
    let o = run(&["report", "--root", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = snapshot(&out);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &before {
        assert!(
            after[path] == *bytes,
            "{} changed on a rerun that computed nothing",
            path.display()
        );
    }
    let first = manifest();
    assert_eq!(first["cells_computed"], 24, "{first}");
    // Edited notes are taken up; the run record still describes the run that computed the 24 cells.
    std::fs::write(
        &f,
        SELFTEST.replace("seed = 11", "seed = 11\nnotes = \"edited\""),
    )
    .unwrap();
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let second = manifest();
    assert_eq!(second["started_utc"], first["started_utc"]);
    assert_eq!(second["wall_time_s"], first["wall_time_s"]);
    assert_eq!(second["cells_computed"], 24);
    let report = std::fs::read_to_string(out.join("st/report.md")).unwrap();
    assert!(
        report.contains("edited") && report.contains("24 computed, 0 reused"),
        "{report}"
    );
}

#[test]
fn cells_record_the_commit_that_computed_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("out");
    // The test runs inside the project's work tree, so the run knows its commit.
    let head = Command::new("git")
        .args(["rev-parse", "--short=10", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let o = run(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("st/cells.csv")).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().ends_with(",commit,load,cpu"));
    for line in lines {
        let mut fields = line.rsplit(',');
        // The machine: kind/kernels/model, e.g. AVX2/Zen/AMD EPYC 7B13 (family 25 model 1).
        let cpu: Vec<&str> = fields.next().unwrap().splitn(3, '/').collect();
        assert!(
            cpu.len() == 3 && !cpu[0].is_empty() && !cpu[1].is_empty() && !cpu[2].is_empty(),
            "{line}"
        );
        // The load field: 1-minute load average at the cell's start and end, the CPUs and the run's worker
        // threads (Linux).
        let load: Vec<f64> = fields
            .next()
            .unwrap()
            .split('/')
            .map(|x| x.parse().unwrap())
            .collect();
        assert!(
            load.len() == 4 && load[2] >= 1.0 && load[3] == 1.0 && load[0] >= 0.0 && load[1] >= 0.0,
            "{line}"
        );
        let commit = fields.next().unwrap();
        match &head {
            Some(h) => assert!(
                commit == h || commit == format!("{h}+dirty"),
                "{commit} vs HEAD {h}"
            ),
            None => assert_eq!(commit, ""),
        }
    }
    let report = std::fs::read_to_string(out.join("st/report.md")).unwrap();
    assert!(report.contains("All 24 cells computed"), "{report}");
    assert!(report.contains("Machines: 24 cells on "), "{report}");
    // A cells.csv written before the commit, load and cpu columns existed is read (commit and machine
    // unknown) and still reused.
    let legacy: String = text
        .lines()
        .map(|l| l.rsplitn(4, ',').nth(3).unwrap().to_string() + "\n")
        .collect();
    std::fs::write(out.join("st/cells.csv"), legacy).unwrap();
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 computed, 24 reused"));
    let report = std::fs::read_to_string(out.join("st/report.md")).unwrap();
    assert!(
        report.contains("All 24 cells computed before per-cell provenance was recorded")
            && report.contains("Machines: 24 cells not recorded."),
        "{report}"
    );
}

#[test]
fn compare_and_verify_catch_a_changed_computation() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        let o = run(&[
            "run",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("st: 24 of 24 cells compared: identical"),
        "{stdout}"
    );
    assert!(b.join("comparison.md").is_file());

    // The same settings computed by changed code (the self-test's `offset` stands for a code change: it
    // moves the metric and not the fingerprint).
    let changed = write(
        dir.path(),
        "changed.toml",
        &SELFTEST.replace("draws = 2000", "draws = 2000\noffset = 1e-3"),
    );
    let c = dir.path().join("c");
    let o = run(&[
        "run",
        changed.to_str().unwrap(),
        "--out",
        c.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["compare", a.to_str().unwrap(), c.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("st: 24 of 24 cells compared: DIFFERENT: 24 cell(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("dim=1;seed=0 (mean: "), "{stdout}");
    assert!(stderr.contains("differ beyond tolerance in st"), "{stderr}");
    let md = std::fs::read_to_string(c.join("comparison.md")).unwrap();
    assert!(
        md.contains("## st: 24 cell(s) differ") && md.contains("`dim=1;seed=0`"),
        "{md}"
    );

    // A tree of other settings is refused with exit 2, naming the experiment.
    let other = write(
        dir.path(),
        "other.toml",
        &SELFTEST.replace("seed = 11", "seed = 12"),
    );
    let d = dir.path().join("d");
    let o = run(&["run", other.to_str().unwrap(), "--out", d.to_str().unwrap()]);
    assert!(o.status.success());
    let o = run(&["compare", a.to_str().unwrap(), d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("experiment `st`"));
    let o = run(&[
        "compare",
        a.to_str().unwrap(),
        dir.path().join("nope").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));

    // rfx verify recomputes a sample from the tree's own config.toml: clean on the honest tree ...
    let report = dir.path().join("verification.md");
    let verify = |root: &Path| {
        run(&[
            "verify",
            "--root",
            root.to_str().unwrap(),
            "--budget",
            "1",
            "--report",
            report.to_str().unwrap(),
        ])
    };
    let o = verify(&a);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("0 different"), "{stdout}");
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains("| st | 24 | 24 | 24 | 0 | 0 | identical |"),
        "{md}"
    );
    // An experiment whose cheapest check needs more than the budget (1 minute) plus 15 s is not checked
    // (here: every cell recorded at 1000 s, 500 s of cost on two threads), and the report says so instead of
    // overrunning the budget.
    let cells = a.join("st/cells.csv");
    let honest = std::fs::read_to_string(&cells).unwrap();
    let mut lines = honest.lines();
    let header = lines.next().unwrap();
    let at = header.split(',').position(|h| h == "time_s").unwrap();
    let mut slow = format!("{header}\n");
    for line in lines {
        let mut fields: Vec<&str> = line.split(',').collect();
        fields[at] = "1000";
        slow.push_str(&fields.join(","));
        slow.push('\n');
    }
    std::fs::write(&cells, slow).unwrap();
    let o = verify(&a);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("st: not checked: its sample (1 cell(s)) needs "),
        "{stdout}"
    );
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("not checked"), "{md}");
    std::fs::write(&cells, honest).unwrap();

    // ... and failing, naming the experiment and the cells, once the code (stood for by `offset` in the
    // recorded config) no longer gives the committed numbers.
    let st_config = a.join("st/config.toml");
    let text = std::fs::read_to_string(&st_config).unwrap();
    std::fs::write(
        &st_config,
        text.replace("draws = 2000", "draws = 2000\noffset = 1e-3"),
    )
    .unwrap();
    let o = verify(&a);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("no longer come from the code: st"),
        "{stderr}"
    );
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains("## st: 24 cell(s) differ") && md.contains("mean: "),
        "{md}"
    );
}

#[test]
fn replot_rebuilds_outputs_from_csv() {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "{SELFTEST}\n[plot]\ntitle = \"t\"\nx = \"dim\"\ny = \"mean\"\nx_label = \"d\"\ny_label = \"m\"\n"
    );
    let f = write(dir.path(), "st.toml", &toml);
    let out = dir.path().join("out");
    assert!(
        run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .status
            .success()
    );
    let png = out.join("st/st.png");
    let summary = out.join("st/summary.csv");
    let before = std::fs::read(&summary).unwrap();
    std::fs::remove_file(&png).unwrap();
    std::fs::remove_file(&summary).unwrap();
    let o = run(&["plot", out.join("st").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(png.is_file() && out.join("st/st.svg").is_file());
    assert_eq!(std::fs::read(&summary).unwrap(), before);
}

#[test]
fn committed_experiments_validate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") && p.file_name().unwrap() != "Cargo.toml" {
            for quick in [false, true] {
                let mut args = vec!["validate", p.to_str().unwrap()];
                if quick {
                    args.push("--quick");
                }
                let o = run(&args);
                assert!(
                    o.status.success(),
                    "{}: {}",
                    p.display(),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            n += 1;
        }
    }
    assert!(n >= 1, "experiment files found");
}

#[test]
fn series_experiment_is_identical_across_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("gegenbauer-vs-taylor.toml");
    let mut tables = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        let o = run(&[
            "run",
            file.to_str().unwrap(),
            "--quick",
            "--threads",
            threads,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        tables.push(rows_without_timings(
            &out.join("gegenbauer-vs-taylor/cells.csv"),
        ));
    }
    assert!(tables[0].len() > 10);
    assert_eq!(tables[0], tables[1]);
}

#[test]
fn plot_zoom_names_values_of_the_series() {
    let plot =
        "\n[plot]\ntitle = \"t\"\nx = \"seed\"\ny = \"mean\"\nx_label = \"s\"\ny_label = \"m\"\n";
    // with a series: a zoomed copy of the panel is drawn
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "st.toml",
        &format!("{SELFTEST}{plot}series = \"dim\"\nzoom = [\"x\"]\n"),
    );
    let o = run(&["validate", f.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"x\" is not a value of sweep.dim; allowed: 1, 2, 3"),
        "{stderr}"
    );
    assert_config_error(
        &format!("{SELFTEST}{plot}zoom = [\"x\"]\n")
            .replace("dim = [1, 2, 3, 4, 5, 6, 7, 8]", "dim = [1]"),
        &["zoom names series values: set plot.series first"],
    );
}

#[test]
fn plot_x_may_be_a_metric() {
    // x = a metric: the unmapped sweep parameter `dim` gives the points along the curve.
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "{SELFTEST}\n[plot]\ntitle = \"t\"\nx = \"scaled\"\ny = \"mean\"\nx_label = \"s\"\ny_label = \"m\"\nlog_x = true\nlegend = \"lower-left\"\nlegend_panel = 1\n"
    );
    let f = write(dir.path(), "st.toml", &toml);
    let out = dir.path().join("out");
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("st/st.png").is_file());
    // neither a parameter nor a metric: the error lists both kinds of allowed values
    let bad = format!(
        "{SELFTEST}\n[plot]\ntitle = \"t\"\nx = \"size\"\ny = \"mean\"\nx_label = \"s\"\ny_label = \"m\"\n"
    );
    assert_config_error(
        &bad,
        &[
            "\"size\" is neither a sweep parameter nor a metric",
            "dim",
            "scaled",
        ],
    );
}

#[test]
fn plot_figures_writes_one_figure_per_value() {
    let dir = tempfile::tempdir().unwrap();
    let plot = "[plot]\ntitle = \"t\"\ny = \"mean\"\nx_label = \"s\"\ny_label = \"m\"\n";
    let toml = format!("{SELFTEST}\n{plot}x = \"scaled\"\nfigures = \"dim\"\n");
    let f = write(dir.path(), "st.toml", &toml);
    let out = dir.path().join("out");
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(out.join("st/report.md")).unwrap();
    for d in 1..=8 {
        assert!(out.join(format!("st/st-{d}.png")).is_file(), "figure {d}");
        assert!(report.contains(&format!("(st/st-{d}.png)")), "{report}");
    }
    assert!(!out.join("st/st.png").exists());
    // a parameter already on an axis, or the seed, cannot split the figures
    for (x, figures) in [("dim", "dim"), ("dim", "seed")] {
        assert_config_error(
            &format!("{SELFTEST}\n{plot}x = \"{x}\"\nfigures = \"{figures}\"\n"),
            &["plot.figures", "name another sweep parameter"],
        );
    }
}

const NTK_MSE: &str = r#"
[experiment]
name = "nm"
kind = "ntk_mse"
seed = 1

[sweep]
depth = [1]
method = ["ntk-rf", "grad-rf"]
k = [1, 4]

[ntk_mse]
n = 20
"#;

#[test]
fn ntk_kinds_reject_bad_settings_with_allowed_values() {
    assert_config_error(
        &NTK_MSE.replace("n = 20", "n = 20\nmcs_tenths = [1, 10]"),
        &["mcs_tenths", "allowed: distinct integers from 1 to 9"],
    );
    assert_config_error(
        &NTK_MSE.replace("\"grad-rf\"]", "\"grad\"]"),
        &[
            "unknown value \"grad\"",
            "grad-rf",
            "naive-rf",
            "ntk-sketch",
        ],
    );
    assert_config_error(
        &NTK_MSE.replace("n = 20", "n = 20\nntk_k_min = 0"),
        &["ntk_k_min", "must be >= 1"],
    );
    assert_config_error(
        &NTK_MSE.replace("n = 20", "n = 20\nwidth = 3"),
        &["width", "allowed"],
    );
    let arccos = r#"
[experiment]
name = "ac"
kind = "arccos_condition"
seed = 1

[sweep]
dataset = ["keel/nosuch"]
features = ["gs"]
m1 = [10]
"#;
    assert_config_error(arccos, &["unknown data set \"keel/nosuch\"", "keel/magic"]);
    assert_config_error(
        &arccos
            .replace("keel/nosuch", "keel/magic")
            .replace("\"gs\"", "\"leverage\""),
        &["unknown value \"leverage\"", "standard", "gs", "exact"],
    );
}

#[test]
fn unknown_legend_position_is_rejected_with_allowed_values() {
    assert_config_error(
        &format!(
            "{SELFTEST}\n[plot]\ntitle = \"t\"\nx = \"dim\"\ny = \"mean\"\nx_label = \"d\"\ny_label = \"m\"\nlegend = \"middle\"\n"
        ),
        &["plot.legend", "upper-right", "lower-left"],
    );
}

#[test]
fn survey_benchmark_takes_one_validation_scheme() {
    let survey = r#"
[experiment]
name = "sb"
kind = "survey_benchmark"
seed = 1

[sweep]
dataset = ["keel/phoneme"]
kernel = ["gaussian"]
method = ["rff"]
s_mult = [2]
seed = [0]

[survey_benchmark]
n_train = 100
n_test = 50
holdout = 0.25
inner_folds = 5
"#;
    assert_config_error(
        survey,
        &["inner_folds", "choose one validation scheme", "holdout"],
    );
    assert_config_error(
        &survey.replace("holdout = 0.25\n", "").replace("= 5", "= 1"),
        &["inner_folds"],
    );
}

#[test]
fn status_and_validate_skip_the_cargo_manifest_of_an_experiments_glob() {
    // `rfx status experiments/*.toml` names experiments/Cargo.toml; it is skipped with a note, not an error.
    let dir = tempfile::tempdir().unwrap();
    let manifest = write(dir.path(), "Cargo.toml", "[package]\nname = \"x\"\n");
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("out");
    for cmd in ["status", "validate"] {
        let mut args = vec![cmd, manifest.to_str().unwrap(), f.to_str().unwrap()];
        if cmd == "status" {
            args.extend(["--out", out.to_str().unwrap()]);
        }
        let o = run(&args);
        assert!(
            o.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("Cargo.toml: skipped"), "{cmd}: {stderr}");
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("st.toml: "), "{cmd}: {stdout}");
    }
    // Any other file without [experiment] is still an error naming the missing table.
    let other = write(dir.path(), "other.toml", "[package]\nname = \"x\"\n");
    let o = run(&["validate", other.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("[experiment]"));
}

#[test]
fn plan_uses_the_recorded_cell_times() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("out");
    // Without recorded times there is no time to show (the kind's cost model is relative): dashes and a
    // note naming the experiment.
    let o = run(&[
        "plan",
        f.to_str().unwrap(),
        "--workers",
        "1,8",
        "--times-from",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("| st | 24 | 0 | – | – | – | – |"), "{text}");
    assert!(text.contains("no cell times recorded under"), "{text}");
    // After a run, its times are used (24 recorded).
    let o = run(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "plan",
        f.to_str().unwrap(),
        "--workers",
        "2",
        "--times-from",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("| st | 24 | 24 |"), "{text}");
    // The run recorded its CPU in the manifest; plan names it as the machine of st's times, and this
    // machine's, which here is the same one.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("st/manifest.json")).unwrap())
            .unwrap();
    let cpu = manifest["host"]["cpu"]
        .as_str()
        .expect("host.cpu in the manifest")
        .to_string();
    assert!(!cpu.is_empty());
    assert!(text.contains(&format!("this machine: {cpu}.")), "{text}");
    assert!(text.contains(&format!("- {cpu}: st")), "{text}");
    // A manifest from before the CPU was recorded: said so, not guessed.
    let mut old = manifest.clone();
    old["host"].as_object_mut().unwrap().remove("cpu");
    std::fs::write(out.join("st/manifest.json"), old.to_string()).unwrap();
    let o = run(&[
        "plan",
        f.to_str().unwrap(),
        "--times-from",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("- not recorded (runs before 2026-11-28): st"),
        "{text}"
    );
    let o = run(&["plan", f.to_str().unwrap(), "--workers", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // huge worker counts (a panic or an abort before: issue 60) are a usage error naming the range; the
    // largest allowed one plans in a moment
    for w in ["18446744073709551615", "4294967296", "1000000000"] {
        let o = run(&["plan", f.to_str().unwrap(), "--workers", w]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--workers {w}: {err}");
        assert!(err.contains("from 1 to 100000"), "--workers {w}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "--workers {w}: {err}");
    }
    let o = run(&["plan", f.to_str().unwrap(), "--workers", "1,100000"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_huge_rayon_thread_count_in_the_environment_is_refused() {
    // RAYON_NUM_THREADS sizes rayon's global pool before --threads applies; 100,000 made `rfx gram` panic
    // or hang (issue 60). Now a one-line usage error naming the variable and the range, exit 2; a sane value
    // and 0 (rayon's "all cores") still run.
    let dir = tempfile::tempdir().unwrap();
    let x = write(dir.path(), "x.csv", "1,2\n3,4\n");
    let out = dir.path().join("k.csv");
    let args = [
        "gram",
        "--kernel",
        "gaussian",
        "--input",
        x.to_str().unwrap(),
        "--output",
    ];
    for bad in ["100000", "18446744073709551616", "many", "-1"] {
        let o = rfx()
            .args(args)
            .arg(&out)
            .env("RAYON_NUM_THREADS", bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "RAYON_NUM_THREADS={bad}: {err}");
        assert!(
            err.contains("RAYON_NUM_THREADS") && err.contains("from 1 to 1024"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
    for good in ["2", "0"] {
        let o = rfx()
            .args(args)
            .arg(&out)
            .env("RAYON_NUM_THREADS", good)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "RAYON_NUM_THREADS={good}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
