//! Results do not depend on the thread count: the quick runs of experiments whose cells call multi-threaded
//! BLAS/LAPACK (one cell at a time, `parallel_cells = false`) are identical at `--threads 1` and `2`, and
//! `rfx fit` writes the same predictions at any `OPENBLAS_NUM_THREADS`. Before OpenBLAS was pinned to one
//! thread these differed in the last digits (relative differences up to 5e-14).

use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::Command;

fn rfx() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rfx"))
}

/// A wall time rather than a result: the columns from `time_s` on, and metrics named `*_s`, `*_h`, `*_ms*`,
/// `*time*` or `*speedup*`.
fn is_timing(col: &str) -> bool {
    col.ends_with("_s")
        || col.ends_with("_h")
        || col.contains("_ms")
        || col.contains("time")
        || col.contains("speedup")
}

/// The rows of a cells.csv without its timing columns.
fn cells_without_timings(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let end = header
        .iter()
        .position(|&h| h == "time_s")
        .unwrap_or(header.len());
    let keep: Vec<usize> = (0..end).filter(|&i| !is_timing(header[i])).collect();
    std::iter::once(header)
        .chain(lines.map(|l| l.split(',').collect()))
        .map(|fields| keep.iter().map(|&i| fields[i].to_string()).collect())
        .collect()
}

/// Runs on real data sets, so it is ignored in a plain `cargo test`; `make test` runs it after fetching the
/// data (`RFX_DATA_NO_DOWNLOAD=1 cargo test --workspace --test thread_determinism -- --ignored`). The runs
/// never download: a data set that is neither in the cache (`RFX_DATA_DIR`) nor in the mirror
/// (`RFX_DATA_MIRROR`) fails the run with the `rfx fetch` command that gets it.
#[test]
#[ignore = "needs the data sets of four experiments in RFX_DATA_DIR or the mirror; run by `make test`"]
fn blas_heavy_quick_experiments_are_identical_at_one_and_two_threads() {
    // the cheapest quick runs that differed (Cholesky, dsytrd and GEMM paths of the table kinds and the
    // TRF ridge path; k-means on features)
    let names = [
        "gaussian-krr",
        "ntk-krr",
        "gaussian-kmeans",
        "trf-ridge-vs-gamma",
    ];
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = names
        .iter()
        .map(|n| format!("{}/{n}.toml", env!("CARGO_MANIFEST_DIR")))
        .collect();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("t{threads}"));
        let o = rfx()
            .args([
                "run",
                "--quick",
                "--no-progress",
                "--threads",
                threads,
                "--out",
            ])
            .arg(&out)
            .args(&files)
            .env("RFX_DATA_NO_DOWNLOAD", "1")
            .output()
            .expect("rfx runs");
        assert!(
            o.status.success(),
            "the quick runs on real data failed (missing data? run `rfx fetch --all` or set RFX_DATA_MIRROR):\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    for name in names {
        let [one, two] = ["t1", "t2"]
            .map(|t| cells_without_timings(&dir.path().join(t).join(name).join("cells.csv")));
        assert!(one.len() > 1, "{name}: no cells");
        assert!(one[0].len() > 2, "{name}: no result columns");
        assert_eq!(one.len(), two.len(), "{name}: row counts");
        for (a, b) in one.iter().zip(&two) {
            assert_eq!(a, b, "{name}: a cell differs between --threads 1 and 2");
        }
    }
}

#[test]
fn fit_predictions_are_identical_at_any_openblas_thread_count() {
    // sizes above OpenBLAS's multi-threading thresholds (600 features: a 600 x 600 Gram, its tridiagonal
    // reduction and the 200 x 600 prediction GEMM)
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut table = |rows: usize| {
        let mut text = String::from("a,b,c,d,y\n");
        for _ in 0..rows {
            let x: Vec<f64> = (0..4).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let y = (2.0 * x[0]).sin() + x[1] * x[2];
            let fields: Vec<String> = x.iter().chain([&y]).map(|v| v.to_string()).collect();
            text.push_str(&fields.join(","));
            text.push('\n');
        }
        text
    };
    let (train, test) = (dir.path().join("train.csv"), dir.path().join("test.csv"));
    std::fs::write(&train, table(1200)).unwrap();
    std::fs::write(&test, table(200)).unwrap();
    let mut predictions = Vec::new();
    for threads in ["1", "2"] {
        let pred = dir.path().join(format!("pred{threads}.csv"));
        let o = rfx()
            .env("OPENBLAS_NUM_THREADS", threads)
            .args([
                "fit",
                "--method",
                "rff",
                "--dim",
                "600",
                "--target-column",
                "y",
            ])
            .arg("--input")
            .arg(&train)
            .arg("--test")
            .arg(&test)
            .arg("--predictions")
            .arg(&pred)
            .output()
            .expect("rfx runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        predictions.push(std::fs::read(&pred).unwrap());
    }
    assert_eq!(predictions[0].len(), predictions[1].len());
    assert!(
        predictions[0] == predictions[1],
        "rfx fit predictions differ between OPENBLAS_NUM_THREADS=1 and 2"
    );
}

/// A sweep over two image sets reads two data sets: `ntk-few-shot` sweeps MNIST and Fashion-MNIST, and the
/// exact kernels (no random features) must then give different test predictions on them (the kind once kept
/// one data slot for both, so the second set's cells silently used the first set's images).
#[test]
#[ignore = "needs MNIST and Fashion-MNIST in RFX_DATA_DIR or the mirror; run by `make test`"]
fn a_sweep_over_two_image_sets_reads_both() {
    let dir = tempfile::tempdir().unwrap();
    let o = rfx()
        .args(["run", "--quick", "--no-progress", "--out"])
        .arg(dir.path())
        .arg(format!("{}/ntk-few-shot.toml", env!("CARGO_MANIFEST_DIR")))
        .env("RFX_DATA_NO_DOWNLOAD", "1")
        .output()
        .expect("rfx runs");
    assert!(
        o.status.success(),
        "the quick run failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cells = cells_without_timings(&dir.path().join("ntk-few-shot/cells.csv"));
    let header = &cells[0];
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (ds, method, m, acc) = (col("dataset"), col("method"), col("m"), col("accuracy"));
    // the exact Gaussian kernel (its method value has no comma, so the naive CSV split above keeps the
    // columns): no random features, so its accuracy depends on the data alone
    let exact = "exact(kernel=gaussian)";
    let of = |set: &str| -> Vec<String> {
        cells[1..]
            .iter()
            .filter(|r| r[ds] == set && r[method] == exact && r[m] == "4000")
            .map(|r| r[acc].clone())
            .collect()
    };
    let (a, b) = (of("mnist"), of("fashion-mnist"));
    assert_eq!(
        (a.len(), b.len()),
        (1, 1),
        "one exact Gaussian cell per set"
    );
    assert_ne!(
        a, b,
        "the same exact Gaussian accuracy on MNIST and Fashion-MNIST"
    );
}
