//! Property tests of the command line (issue 27): generated arguments and small generated files (CSV with
//! extreme magnitudes, mutated `.npy`, mutated experiment TOML) thrown at `rfx features`, `gram`, `fit` and
//! `validate`. Whatever the input, `rfx` exits 0, 1 or 2 (never a panic, 101, or an abort), prints exactly
//! one line on stderr when it fails, leaves its inputs unchanged and no temporary file behind, and writes no
//! NaN or inf. Bounded: a few dozen processes per property (a few seconds each).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ndarray::Array2;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        // each case is a process: shrinking is slow, a failing input is printed as generated
        max_shrink_iters: 16,
        ..ProptestConfig::default()
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap_or_default()))
        .collect()
}

fn finite_output(path: &Path) -> Result<(), String> {
    if path.extension().is_some_and(|e| e == "npy") {
        let a = Array2::<f64>::read_npy(std::fs::File::open(path).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        return if a.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err("NaN or inf in the .npy output".into())
        };
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    for l in text.lines().filter(|l| *l != "prediction") {
        for v in l.split(',') {
            let v: f64 = v.parse().map_err(|_| format!("unreadable value {v:?}"))?;
            if !v.is_finite() {
                return Err(format!("non-finite value {v} in {}", path.display()));
            }
        }
    }
    Ok(())
}

/// Runs `rfx args` in `dir` (under an address-space limit) and checks the universal properties; `outputs`
/// are the file names the command may create.
fn check(dir: &Path, args: &[String], outputs: &[&str]) -> Result<i32, TestCaseError> {
    let before = snapshot(dir);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rfx"));
    cmd.args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RAYON_NUM_THREADS", "1");
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 6 << 30,
                rlim_max: 6 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let out = cmd.output().expect("rfx runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    prop_assert!(
        matches!(code, Some(0..=2)),
        "{args:?}: exit {code:?} (status {:?}); stderr: {stderr}",
        out.status
    );
    let code = code.unwrap_or(-1);
    if code != 0 {
        prop_assert_eq!(stderr.lines().count(), 1, "{:?}: stderr: {}", args, stderr);
    }
    let after = snapshot(dir);
    for (p, bytes) in &before {
        prop_assert!(
            after.get(p) == Some(bytes),
            "{args:?}: input {} changed or removed",
            p.display()
        );
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        prop_assert!(
            code == 0 && outputs.contains(&name),
            "{args:?}: exit {code}, left behind {}",
            p.display()
        );
        if let Err(e) = finite_output(p) {
            return Err(TestCaseError::fail(format!("{args:?}: {e}")));
        }
    }
    Ok(code)
}

/// A value of any magnitude a finite CSV field can hold.
fn magnitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -3.0f64..3.0,
        1 => (-320i32..308, any::<bool>()).prop_map(|(e, neg)| {
            let v = 10f64.powi(e);
            if neg { -v } else { v }
        }),
        1 => Just(0.0),
        1 => Just(f64::MAX),
        1 => Just(f64::MIN_POSITIVE / 4.0),
    ]
}

fn matrix() -> impl Strategy<Value = (usize, Vec<f64>)> {
    (1usize..5, 1usize..5)
        .prop_flat_map(|(n, d)| (Just(d), prop::collection::vec(magnitude(), n * d)))
}

fn csv_text(d: usize, v: &[f64], header: bool) -> String {
    let mut s = String::new();
    if header {
        let names: Vec<String> = (0..d).map(|j| format!("c{j}")).collect();
        s.push_str(&names.join(","));
        s.push('\n');
    }
    for r in v.chunks(d) {
        let f: Vec<String> = r.iter().map(|x| format!("{x:e}")).collect();
        s.push_str(&f.join(","));
        s.push('\n');
    }
    s
}

/// A count argument: ordinary, edge, huge, negative, fractional or not a number.
fn count_arg() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0usize..70).prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec![
            "-5", "-1", "0", "1.5", "1e3", "", "abc", "18446744073709551615", "18446744073709551616",
            "9223372036854775807", "4294967296", "1000000000000", "+3", " 4", "0x10",
        ])
        .prop_map(str::to_string),
    ]
}

fn method() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "rff",
        "orf",
        "sorf",
        "fastfood",
        "qmc",
        "maclaurin",
        "polysketch",
        "gegenbauer",
        "nystrom",
        "arccos",
        "ntk-rf",
        "ntk-sketch",
        "grad-rf",
        "lp-rff",
        "ternary",
        "relu-rf",
        "rom",
        "ssf",
        "gq",
        "ls-rff",
        "nope",
    ])
}

fn kernel() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "gaussian",
        "polynomial",
        "arccos0",
        "arccos1",
        "ntk",
        "nngp",
        "gzk",
        "cntk",
        "nope",
    ])
}

/// A `--param` drawn from names the registry knows and values of every kind.
fn param() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "sigma",
        "depth",
        "degree",
        "c",
        "bias",
        "taylor",
        "kernel",
        "order",
        "sampler",
        "phase",
        "bits",
        "sparsity",
        "activation",
        "height",
        "width",
        "channels",
        "filter",
        "radial_terms",
        "unit_norm",
        "pool_factor",
        "ls_rows",
        "ls_lambda",
        "rom_blocks",
        "ssf_sweeps",
        "sketch_share",
        "sketch",
        "x",
    ]);
    let values = prop::sample::select(vec![
        "1",
        "0",
        "-1",
        "2",
        "3",
        "1e-300",
        "1e300",
        "nan",
        "inf",
        "",
        "0.5",
        "relu-ntk",
        "gaussian",
        "true",
        "1,1,0.5",
        "1,,2",
        "99999999999999999999",
        "8",
        "1000",
        "gs",
        "random",
        "cos",
    ]);
    (names, values).prop_map(|(n, v)| format!("{n}={v}"))
}

proptest! {
    #![proptest_config(config(40))]

    #[test]
    fn features_never_panics(
        m in method(), dim in count_arg(), (d, v) in matrix(), header in any::<bool>(),
        params in prop::collection::vec(param(), 0..3), block in count_arg(), npy_out in any::<bool>(),
        fit_on in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.csv"), csv_text(d, &v, header)).unwrap();
        let out = if npy_out { "z.npy" } else { "z.csv" };
        let mut args: Vec<String> = ["features", "--method", m, "--dim", &dim, "--input", "x.csv", "--output", out, "--block-rows", &block]
            .iter().map(|s| s.to_string()).collect();
        if fit_on {
            args.extend(["--fit-on".to_string(), "x.csv".to_string()]);
        }
        for p in params {
            args.extend(["--param".to_string(), p]);
        }
        check(dir.path(), &args, &[out])?;
    }

    #[test]
    fn gram_never_panics(
        k in kernel(), (d, v) in matrix(), (d2, v2) in matrix(), against in any::<bool>(),
        params in prop::collection::vec(param(), 0..3), block in count_arg(), cap in count_arg(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.csv"), csv_text(d, &v, false)).unwrap();
        std::fs::write(dir.path().join("y.csv"), csv_text(d2, &v2, false)).unwrap();
        let mut args: Vec<String> = ["gram", "--kernel", k, "--input", "x.csv", "--output", "k.npy", "--block-rows", &block, "--memory-cap-mb", &cap]
            .iter().map(|s| s.to_string()).collect();
        if against {
            args.extend(["--against".to_string(), "y.csv".to_string()]);
        }
        for p in params {
            args.extend(["--param".to_string(), p]);
        }
        check(dir.path(), &args, &["k.npy"])?;
    }

    #[test]
    fn fit_never_panics(
        m in method(), dim in count_arg(), (d, v) in matrix(), target in count_arg(), folds in count_arg(),
        classification in any::<bool>(), header in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("train.csv"), csv_text(d, &v, header)).unwrap();
        std::fs::write(dir.path().join("test.csv"), csv_text(d, &v, header)).unwrap();
        let task = if classification { "classification" } else { "regression" };
        let args: Vec<String> = ["fit", "--method", m, "--dim", &dim, "--input", "train.csv", "--test", "test.csv", "--target-column", &target, "--folds", &folds, "--task", task, "--predictions", "p.csv"]
            .iter().map(|s| s.to_string()).collect();
        check(dir.path(), &args, &["p.csv"])?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// Mutated `.npy` files (header and payload bytes replaced, inserted, removed; truncated).
    #[test]
    fn npy_inputs_never_panic(
        edits in prop::collection::vec((0usize..160, any::<u8>(), 0u8..3), 1..5),
        f32_data in any::<bool>(), cut in 0usize..40,
    ) {
        let x = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as f64 - 2.5);
        let mut b = Vec::new();
        if f32_data {
            x.mapv(|v| v as f32).write_npy(&mut b).unwrap();
        } else {
            x.write_npy(&mut b).unwrap();
        }
        for (at, byte, op) in edits {
            let at = at % (b.len() + 1);
            match op {
                0 if at < b.len() => b[at] = byte,
                1 => b.insert(at, byte),
                _ if at < b.len() => { b.remove(at); }
                _ => {}
            }
        }
        b.truncate(b.len().saturating_sub(cut));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.npy"), &b).unwrap();
        let args: Vec<String> = ["gram", "--kernel", "ntk", "--input", "x.npy", "--output", "k.csv"]
            .iter().map(|s| s.to_string()).collect();
        check(dir.path(), &args, &["k.csv"])?;
    }
}

/// The experiment files of the repository (the mutation bases of the TOML property).
fn experiment_texts() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && !p.ends_with("Cargo.toml"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(config(48))]

    /// The TOML reader and the experiment checker (`rfx validate`, with and without `--quick`) on mutated
    /// experiment files: lines dropped or duplicated, values replaced by values of other types and sizes.
    #[test]
    fn mutated_experiment_files_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, prop::sample::select(vec![
            "0", "-1", "1e400", "18446744073709551616", "\"x\"", "[]", "[1, 1.0]", "{}", "nan", "true", "[[1]]",
            "\"\"", "1.5", "[1e308, -1e308]", "=", "[", "\"\\u0000\"",
        ])), 1..4),
        quick in any::<bool>(),
    ) {
        let texts = experiment_texts();
        prop_assume!(!texts.is_empty());
        let text = which.get(&texts);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (at, op, value) in edits {
            if lines.is_empty() {
                break;
            }
            let i = at.index(lines.len());
            match op {
                0 => { lines.remove(i); }
                1 => { let l = lines[i].clone(); lines.insert(i, l); }
                _ => {
                    if let Some((k, _)) = lines[i].split_once('=') {
                        lines[i] = format!("{k}= {value}");
                    } else {
                        lines[i] = value.to_string();
                    }
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e.toml"), lines.join("\n")).unwrap();
        let mut args = vec!["validate".to_string(), "e.toml".to_string()];
        if quick {
            args.push("--quick".into());
        }
        check(dir.path(), &args, &[])?;
    }
}
