//! The CLI as a process (issue 60): SIGINT or SIGTERM while `rfx gram` or `rfx features` writes its output
//! left a hidden partial output (55 MB in one try) that no later run removed — the CLI's handler removes the
//! temporary file and exits with 130; experiment files are read once (pipes) and bounded (`/dev/zero`).

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Files in `dir` whose names mark them as temporary outputs (`.<stem>.tmp-<host>-<pid>.<ext>`).
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

/// Starts `args` in `dir`, waits until its temporary output exists and has grown, sends `signal`, and
/// checks the exit code and that nothing is left behind.
fn interrupt(dir: &Path, args: &[&str], signal: i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rfx"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let grown = loop {
        let sizes: Vec<u64> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
            .collect();
        if sizes.iter().any(|&s| s > 0) {
            break true;
        }
        if child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(60) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        grown,
        "{args:?}: no temporary output appeared while the command ran"
    );
    // SAFETY: kill(2) on our own child's pid, which has not been waited for yet
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{args:?}: exit status {status:?}");
    assert_eq!(
        temporaries(dir),
        Vec::<String>::new(),
        "{args:?}: left behind"
    );
}

#[test]
fn an_interrupted_output_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    // 6,000 rows of 20 columns: the Gram output is 6,000 x 6,000 (hundreds of MB as CSV), long enough
    // to be interrupted while it is written
    let mut csv = String::new();
    for i in 0..6000 {
        let row: Vec<String> = (0..20)
            .map(|j| format!("{}", ((i * 31 + j * 17) % 97) as f64 / 97.0))
            .collect();
        csv.push_str(&row.join(","));
        csv.push('\n');
    }
    std::fs::write(dir.path().join("x.csv"), csv).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        interrupt(
            dir.path(),
            &[
                "gram", "--kernel", "gaussian", "--input", "x.csv", "--output", "k.csv",
            ],
            signal,
        );
        interrupt(
            dir.path(),
            &[
                "features", "--method", "rff", "--dim", "20000", "--input", "x.csv", "--output",
                "z.csv",
            ],
            signal,
        );
    }
    assert!(!dir.path().join("k.csv").exists() && !dir.path().join("z.csv").exists());
}

/// Issue 60, lesser items: `rfx validate <(cat file)` read its input twice (once per variant) and said
/// "missing [experiment]"; `/dev/zero` as an experiment file was read until memory ran out.
#[test]
fn experiment_files_are_read_once_and_bounded() {
    use std::io::Write;
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("ntk-function.toml");
    let text = std::fs::read(&file).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rfx"))
        .args(["validate", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: experiment `ntk-function`"), "{stdout}");
    let out = Command::new(env!("CARGO_BIN_EXE_rfx"))
        .args(["validate", "/dev/zero"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/dev/zero: longer than 64 MiB"), "{stderr}");
}

/// Issue 60, from the fresh hostile set: `RFX_DATA_DIR` naming a plain file made every cell fail with exit
/// 1 (a bug's code); a 5 MB token in a CSV was echoed whole in the one-line error.
#[test]
fn environment_and_echo_mistakes_are_named_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rfx"))
        .args(["list"])
        .env("RFX_DATA_DIR", &file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("RFX_DATA_DIR") && stderr.contains("not a folder"),
        "{stderr}"
    );
    let csv = dir.path().join("x.csv");
    let mut text = "9".repeat(5_000_000);
    text.push_str("x,1\n1,2\n");
    std::fs::write(&csv, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rfx"))
        .args([
            "features", "--method", "rff", "--dim", "4", "--header", "no", "--input",
        ])
        .arg(&csv)
        .arg("--output")
        .arg(dir.path().join("z.csv"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &stderr[..stderr.len().min(300)]
    );
    assert!(stderr.len() < 400, "{} bytes on stderr", stderr.len());
    assert!(stderr.contains("is not a number"), "{stderr}");
}
