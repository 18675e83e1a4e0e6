//! `rfx run --shard K/N` and `rfx merge` (issue 28): shards merged into exactly the single run's cells, a
//! killed shard resumed without recomputing its finished cells, and a merge that refuses (exit 2, nothing
//! written) when a shard is missing or conflicts.

mod common;

use common::{rows_without_timings as values, run, write, SELFTEST};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn shard(file: &Path, out: &Path, k: &str) -> Output {
    run(&[
        "run",
        file.to_str().unwrap(),
        "--threads",
        "1",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--shard",
        k,
    ])
}

fn single(file: &Path, out: &Path) -> PathBuf {
    ok(&run(&[
        "run",
        file.to_str().unwrap(),
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]));
    out.join("st")
}

#[test]
fn shards_merge_into_the_single_runs_cells_and_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let reference = single(&f, &dir.path().join("single"));
    let out = dir.path().join("sharded");
    let mut assigned = 0;
    for k in ["0/3", "1/3", "2/3"] {
        let stdout = ok(&shard(&f, &out, k));
        // "st: shard 0/3: 8 cells (8 computed, ...": every cell in one shard, balanced by the unit costs
        let n: usize = stdout
            .split(&format!("shard {k}: "))
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{stdout}"));
        assert_eq!(n, 8, "{stdout}");
        assigned += n;
    }
    assert_eq!(assigned, 24);
    let folder = out.join("st");
    assert!(
        !folder.join("cells.csv").exists(),
        "shards write no cells.csv"
    );
    let status = ok(&run(&[
        "status",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(
        status.contains("sharded into 3: 3 complete; not merged yet"),
        "{status}"
    );
    let merged = ok(&run(&["merge", folder.to_str().unwrap()]));
    assert!(merged.contains("merged 3 shards: 24 cells"), "{merged}");
    assert_eq!(
        values(&folder.join("cells.csv")),
        values(&reference.join("cells.csv"))
    );
    // The same files as a single run, and the shard files gone.
    let names = |d: &Path| snapshot(d).into_keys().collect::<Vec<_>>();
    assert_eq!(names(&folder), names(&reference));
    // The summary's means and spreads are the single run's (its time columns aside).
    let untimed = |d: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(d.join("summary.csv")).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        text.lines()
            .map(|l| {
                l.split(',')
                    .zip(&header)
                    .filter(|(_, h)| !h.starts_with("time"))
                    .map(|(v, _)| v)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    };
    assert_eq!(untimed(&folder), untimed(&reference));
    let status = ok(&run(&[
        "status",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(status.contains("complete (24 cells"), "{status}");
}

/// Deterministic: selftest's `abort_after_cells = 3` ends shard 1/3 as a kill would when its fourth cell
/// starts (one thread), leaving three finished rows; the resubmitted shard computes only the other five.
#[test]
fn a_killed_shard_resumes_without_recomputing_its_finished_cells() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let aborting = write(
        dir.path(),
        "st-abort.toml",
        &SELFTEST.replace("draws = 2000", "draws = 2000\nabort_after_cells = 3"),
    );
    let reference = single(&f, &dir.path().join("single"));
    let out = dir.path().join("sharded");
    let folder = out.join("st");
    ok(&shard(&f, &out, "0/3"));
    let o = shard(&aborting, &out, "1/3");
    assert_eq!(
        o.status.code(),
        Some(137),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let before = std::fs::read_to_string(folder.join("cells.shard-1-of-3.csv")).unwrap();
    let finished: Vec<&str> = before.lines().skip(1).collect();
    assert_eq!(finished.len(), 3, "{before}");
    ok(&shard(&f, &out, "2/3"));
    // Not complete: the merge refuses and names the shard that owes cells.
    let o = run(&["merge", folder.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("shard 1/3 is missing 5 of its 8 cells"),
        "{stderr}"
    );
    let status = ok(&run(&[
        "status",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(
        status.contains("unfinished: 1/3 (3 of 8 cells)"),
        "{status}"
    );
    // Resubmitted: only the five missing cells are computed, the finished rows kept verbatim.
    let stdout = ok(&shard(&f, &out, "1/3"));
    assert!(stdout.contains("(5 computed, 3 already done"), "{stdout}");
    let after = std::fs::read_to_string(folder.join("cells.shard-1-of-3.csv")).unwrap();
    for row in &finished {
        assert!(after.lines().any(|a| a == *row), "{row} not kept:\n{after}");
    }
    ok(&run(&["merge", folder.to_str().unwrap()]));
    assert_eq!(
        values(&folder.join("cells.csv")),
        values(&reference.join("cells.csv"))
    );
}

#[test]
fn merge_with_a_missing_or_conflicting_shard_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("sharded");
    let folder = out.join("st");
    ok(&shard(&f, &out, "0/3"));
    ok(&shard(&f, &out, "2/3"));
    let before = snapshot(&folder);
    let o = run(&["merge", folder.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("shard 1/3 missing"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert_eq!(
        snapshot(&folder),
        before,
        "the merge wrote or removed files"
    );

    // A cell of shard 0 copied into shard 2 with another value: a conflict, named.
    ok(&shard(&f, &out, "1/3"));
    let s0 = std::fs::read_to_string(folder.join("cells.shard-0-of-3.csv")).unwrap();
    let row = s0.lines().nth(1).unwrap();
    let mut fields: Vec<String> = row.split(',').map(String::from).collect();
    fields[2] = "12345".into(); // the metric `mean`
    let p2 = folder.join("cells.shard-2-of-3.csv");
    let s2 = std::fs::read_to_string(&p2).unwrap();
    std::fs::write(&p2, format!("{s2}{}\n", fields.join(","))).unwrap();
    let before = snapshot(&folder);
    let o = run(&["merge", folder.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    let key = format!("dim={};seed={}", fields[0], fields[1]);
    assert!(
        stderr.contains(&format!("cell {key} of shard 2/3 differs from its copy")),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&folder),
        before,
        "the merge wrote or removed files"
    );

    // No shards at all.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run(&["merge", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no shard files"));
}

#[test]
fn bad_shard_arguments_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "st.toml", SELFTEST);
    let out = dir.path().join("o");
    for bad in ["3/3", "1", "a/b", "0/0", "-1/2", "1/200000"] {
        let o = shard(&f, &out, bad);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("expected K/N with 0 ≤ K < N"),
            "{bad}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "{bad}: {stderr}");
    }
    assert!(!out.exists());
}
