//! The hostile-input corpus of `rfx features`, `rfx gram` and `rfx fit` (issue 27): bad user inputs
//! generated from a few valid bases by systematic mutation, each run in its own folder under an address-space
//! limit. Every case must exit 0, 1 or 2 as documented (most must exit 2), print one line on stderr, leave no
//! partial or temporary file behind, leave its inputs byte-for-byte unchanged, and write no NaN or inf. The
//! test prints the outcome counts by class of the issue (2 memory, 3 output over input, 4 numerics, 6 panics,
//! 8 messages).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ndarray::Array2;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};

/// Address-space limit of every case (bytes): an allocation taken on the input's word beyond it aborts,
/// which the test reports, instead of swapping the machine.
const ADDRESS_LIMIT: u64 = 6 << 30;

/// What a case may end with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Exit 2 (an input error).
    Refused,
    /// Exit 0 or 2 (either a correct result or a clear refusal).
    OkOrRefused,
    /// Exit 0.
    Ok,
}

/// A check of the output matrix of a successful case.
type Check = fn(&Array2<f64>) -> Result<(), String>;

struct Case {
    class: &'static str,
    name: String,
    /// Extra files (name, bytes) written into the case folder beside the bases.
    files: Vec<(String, Vec<u8>)>,
    /// Arguments; `@` at the start of an argument is replaced by the case folder.
    args: Vec<String>,
    expect: Expect,
    check: Option<Check>,
    /// Set up links etc. in the folder before the run.
    setup: Option<fn(&Path)>,
}

fn case(class: &'static str, name: impl Into<String>, args: &[&str], expect: Expect) -> Case {
    Case {
        class,
        name: name.into(),
        files: Vec::new(),
        args: args.iter().map(|s| s.to_string()).collect(),
        expect,
        check: None,
        setup: None,
    }
}

impl Case {
    fn file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((name.to_string(), bytes.into()));
        self
    }
    fn check(mut self, c: Check) -> Self {
        self.check = Some(c);
        self
    }
    fn setup(mut self, s: fn(&Path)) -> Self {
        self.setup = Some(s);
        self
    }
}

fn csv_of(rows: &[Vec<f64>]) -> Vec<u8> {
    let mut s = String::new();
    for r in rows {
        let v: Vec<String> = r.iter().map(|v| format!("{v:e}")).collect();
        s.push_str(&v.join(","));
        s.push('\n');
    }
    s.into_bytes()
}

/// The valid bases every case folder starts with.
fn bases() -> Vec<(&'static str, Vec<u8>)> {
    let x: Vec<Vec<f64>> = (0..6)
        .map(|i| (0..3).map(|j| ((i * 3 + j) as f64 * 0.7).sin()).collect())
        .collect();
    let mut xs = b"a,b,c\n".to_vec();
    xs.extend(csv_of(&x));
    let y: Vec<Vec<f64>> = x
        .iter()
        .take(4)
        .map(|r| r.iter().map(|v| v * 0.5 + 0.1).collect())
        .collect();
    let train: Vec<Vec<f64>> = (0..12)
        .map(|i| {
            let a = (i as f64 * 0.37).sin();
            let b = (i as f64 * 0.91).cos();
            vec![a, b, (i % 2) as f64]
        })
        .collect();
    let test: Vec<Vec<f64>> = train.iter().take(5).cloned().collect();
    let xa = Array2::from_shape_vec((6, 3), x.concat()).unwrap();
    let mut npy = Vec::new();
    xa.write_npy(&mut npy).unwrap();
    vec![
        ("x.csv", xs),
        ("y.csv", csv_of(&y)),
        ("train.csv", csv_of(&train)),
        ("test.csv", csv_of(&test)),
        ("x.npy", npy),
    ]
}

/// A `.npy` v1.0 file with the given header dictionary and payload.
fn npy_raw(dict: &str, payload: &[u8]) -> Vec<u8> {
    let mut d = dict.to_string();
    while (10 + d.len() + 1) % 64 != 0 {
        d.push(' ');
    }
    d.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((d.len() as u16).to_le_bytes());
    v.extend(d.into_bytes());
    v.extend(payload);
    v
}

fn f64_npy(shape: &str, values: &[f64]) -> Vec<u8> {
    let payload: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_raw(
        &format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}"),
        &payload,
    )
}

fn feat(method: &str, dim: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "features", "--method", method, "--dim", dim, "--input", "@x.csv", "--output", "@z.csv",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Replaces `--input @x.csv` by another input.
fn with_input(mut a: Vec<String>, input: &str) -> Vec<String> {
    if let Some(i) = a.iter().position(|s| s == "--input") {
        a[i + 1] = input.to_string();
    }
    a
}

fn gaussian_far_apart_is_zero(k: &Array2<f64>) -> Result<(), String> {
    // rows 0 and 1 are 1e160 apart (sigma 1): k = exp(-huge) = 0; the diagonal is 1
    if k[[0, 1]] != 0.0 || k[[1, 0]] != 0.0 {
        return Err(format!("k(far apart) = {} (want 0)", k[[0, 1]]));
    }
    if k[[0, 0]] != 1.0 || k[[1, 1]] != 1.0 {
        return Err(format!("diagonal {} {} (want 1)", k[[0, 0]], k[[1, 1]]));
    }
    Ok(())
}

fn gaussian_moderately_far_is_zero(k: &Array2<f64>) -> Result<(), String> {
    if k[[0, 1]] != 0.0 {
        return Err(format!("k(x, y) = {} (want 0)", k[[0, 1]]));
    }
    Ok(())
}

fn gaussian_near_with_huge_norms(k: &Array2<f64>) -> Result<(), String> {
    // x = (1e9, 0), y = (1e9 + 1, 0), sigma = 1: k = exp(-1/2)
    let want = (-0.5f64).exp();
    if (k[[0, 1]] - want).abs() > 1e-6 {
        return Err(format!("k = {} (want exp(-1/2) = {want})", k[[0, 1]]));
    }
    Ok(())
}

fn arccos0_tiny_45_degrees(k: &Array2<f64>) -> Result<(), String> {
    // rows (t, 0) and (t, t): 45 degrees, kappa0 = 1 - 1/4 = 0.75; the diagonal is 1
    let want = 0.75;
    if (k[[0, 1]] - want).abs() > 1e-12 || (k[[0, 0]] - 1.0).abs() > 1e-12 {
        return Err(format!(
            "k01 = {}, k00 = {} (want 0.75, 1)",
            k[[0, 1]],
            k[[0, 0]]
        ));
    }
    Ok(())
}

fn arccos1_tiny_is_scaled(k: &Array2<f64>) -> Result<(), String> {
    // rows t(1, 0) and t(1, 1) with t = 1e-160: |x||y| kappa1(cos 45) = t^2 sqrt 2 kappa1(1/sqrt 2) underflows to 0;
    // it must not be NaN (checked by the writer) and be >= 0
    if k.iter().any(|v| *v < 0.0) {
        return Err(format!("negative value in {k}"));
    }
    Ok(())
}

fn gzk_exp_series(k: &Array2<f64>) -> Result<(), String> {
    // taylor a_j = 1/j! for j < 170 on rows with <x, y> in [-1, 1]: k = exp(<x, y>)
    let x = [[0.6, 0.0], [0.0, 0.8], [0.6, 0.8]];
    for i in 0..3 {
        for j in 0..3 {
            let t: f64 = x[i][0] * x[j][0] + x[i][1] * x[j][1];
            let want = t.exp();
            if (k[[i, j]] - want).abs() > 1e-12 * want {
                return Err(format!(
                    "k[{i},{j}] = {} (want exp({t}) = {want})",
                    k[[i, j]]
                ));
            }
        }
    }
    Ok(())
}

fn all_finite_nonneg_diag(k: &Array2<f64>) -> Result<(), String> {
    for i in 0..k.nrows().min(k.ncols()) {
        if k[[i, i]].is_nan() || k[[i, i]] < 0.0 {
            return Err(format!("diagonal {i}: {}", k[[i, i]]));
        }
    }
    Ok(())
}

fn link_x_to(dir: &Path, name: &str, hard: bool) {
    let (a, b) = (dir.join("x.csv"), dir.join(name));
    if hard {
        std::fs::hard_link(a, b).unwrap();
    } else {
        std::os::unix::fs::symlink(a, b).unwrap();
    }
}

fn cases() -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    let s = |x: &[&str]| -> Vec<String> { x.iter().map(|s| s.to_string()).collect() };

    // ---- class 2: memory taken on the input's word
    for dim in [
        "1000000000000",
        "100000000000000000",
        "9223372036854775807",
        "18446744073709551615",
        "4294967296",
    ] {
        for method in [
            "rff",
            "arccos",
            "ntk-rf",
            "gegenbauer",
            "nystrom",
            "relu-rf",
            "polysketch",
            "maclaurin",
        ] {
            // Nyström keeps at most one landmark per fitting row: a huge budget is no allocation
            let expect = if method == "nystrom" {
                OkOrRefused
            } else {
                Refused
            };
            let mut c = case(
                "2-memory",
                format!("features {method} --dim {dim}"),
                &[],
                expect,
            );
            c.args = feat(method, dim, &[]);
            v.push(c);
        }
        let mut c = case("2-memory", format!("fit rff --dim {dim}"), &[], Refused);
        c.args = s(&[
            "fit",
            "--method",
            "rff",
            "--dim",
            dim,
            "--input",
            "@train.csv",
            "--test",
            "@test.csv",
            "--target-column",
            "2",
        ]);
        v.push(c);
    }
    let wide: Vec<u8> = {
        let mut s = vec![b'0'; 1];
        for _ in 1..300_000 {
            s.extend(b",0");
        }
        s.push(b'\n');
        let row = s.clone();
        s.extend(row);
        s
    };
    for (method, dim) in [
        ("rff", "200000"),
        ("arccos", "1000000"),
        ("gegenbauer", "100000"),
        ("orf", "200000"),
        ("relu-rf", "1000000"),
    ] {
        let mut c = case(
            "2-memory",
            format!("features {method} on a 300000-column CSV, --dim {dim}"),
            &[],
            Refused,
        )
        .file("wide.csv", wide.clone());
        c.args = with_input(feat(method, dim, &[]), "@wide.csv");
        v.push(c);
    }
    for shape in [
        "(1000000000, 1000000000)",
        "(4611686018427387904, 3)",
        "(3, 4611686018427387904)",
        "(100000000, 3)",
        "(2, 100000000000)",
    ] {
        let bytes = f64_npy(shape, &[1.0, 2.0, 3.0, 4.0]);
        let mut c = case(
            "2-memory",
            format!("features rff on an .npy claiming {shape}"),
            &[],
            Refused,
        )
        .file("big.npy", bytes.clone());
        c.args = with_input(feat("rff", "8", &[]), "@big.npy");
        v.push(c);
        v.push(
            case(
                "2-memory",
                format!("gram on an .npy claiming {shape}"),
                &[
                    "gram", "--kernel", "gaussian", "--input", "@big.npy", "--output", "@k.csv",
                ],
                Refused,
            )
            .file("big.npy", bytes.clone()),
        );
        v.push(
            case(
                "2-memory",
                format!("features nystrom --fit-on an .npy claiming {shape}"),
                &[
                    "features", "--method", "nystrom", "--dim", "4", "--input", "@x.csv",
                    "--fit-on", "@big.npy", "--output", "@z.csv",
                ],
                Refused,
            )
            .file("big.npy", bytes),
        );
    }
    // Issue 60, cause 1: headers the old size pre-check did not understand (double quotes, hex, underscores,
    // a repeated key) declared a huge shape and the reader allocated it (abort). Each is refused now: a
    // header the parser reads declares more than the file holds, and a repeated key is malformed.
    let payload: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    for (what, dict) in [
        (
            "double quotes",
            "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (1000000000, 1000000000), }",
        ),
        (
            "hex",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0x7fffffff, 0x7fffffff), }",
        ),
        (
            "underscores",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1_000_000_000, 1_000), }",
        ),
        (
            "a repeated shape key",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), 'shape': (1000000000, 1000), }",
        ),
        (
            "the shape key first",
            "{'shape': (1000000000, 1000), 'descr': '<f8', 'fortran_order': False, }",
        ),
    ] {
        let bytes = npy_raw(dict, &payload);
        let mut c = case(
            "2-memory",
            format!("features rff on an .npy header with {what}"),
            &[],
            Refused,
        )
        .file("big.npy", bytes.clone());
        c.args = with_input(feat("rff", "8", &[]), "@big.npy");
        v.push(c);
        for args in [
            &[
                "gram", "--kernel", "gaussian", "--input", "@big.npy", "--output", "@k.csv",
            ][..],
            &[
                "gram", "--kernel", "gaussian", "--input", "@x.csv", "--against", "@big.npy",
                "--output", "@k.csv",
            ][..],
            &[
                "features", "--method", "nystrom", "--dim", "4", "--input", "@x.csv", "--fit-on",
                "@big.npy", "--output", "@z.csv",
            ][..],
            &[
                "fit", "--method", "rff", "--dim", "8", "--input", "@big.npy", "--test", "@x.csv",
                "--target-column", "0",
            ][..],
        ] {
            v.push(
                case(
                    "2-memory",
                    format!("{} on an .npy header with {what}", args[..2].join(" ")),
                    args,
                    Refused,
                )
                .file("big.npy", bytes.clone()),
            );
        }
    }
    // Issue 60, cause 2: a file of NUL bytes without a line break named .csv grew one line without limit
    // in `features`' streaming reader (abort); refused at 64 MiB now.
    let mut c = case(
        "2-memory",
        "features on 65 MiB of NUL bytes named .csv",
        &[],
        Refused,
    )
    .file("nul.csv", vec![0u8; (65 << 20) + 1]);
    c.args = with_input(feat("rff", "8", &[]), "@nul.csv");
    v.push(c);
    // Issue 60, lesser: a first data row with one bad value was silently taken as a header (the row lost)
    let mut c = case(
        "4-numerics",
        "features on a first line mixing numbers and text",
        &[],
        Refused,
    )
    .file("mix.csv", b"1,2,abc\n4,5,6\n7,8,9\n".to_vec());
    c.args = with_input(feat("rff", "8", &[]), "@mix.csv");
    v.push(c);
    v.push(case(
        "2-memory",
        "gram --memory-cap-mb 0",
        &[
            "gram",
            "--kernel",
            "gaussian",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
            "--memory-cap-mb",
            "0",
        ],
        Refused,
    ));
    v.push(case(
        "2-memory",
        "features --memory-cap-mb 0",
        &[
            "features",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@x.csv",
            "--output",
            "@z.csv",
            "--memory-cap-mb",
            "0",
        ],
        Refused,
    ));
    v.push(case(
        "2-memory",
        "fit --memory-cap-mb 0",
        &[
            "fit",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@train.csv",
            "--test",
            "@test.csv",
            "--target-column",
            "2",
            "--memory-cap-mb",
            "0",
        ],
        Refused,
    ));
    v.push(case(
        "2-memory",
        "features --memory-cap-mb 1 --dim 100000000",
        &[
            "features",
            "--method",
            "rff",
            "--dim",
            "100000000",
            "--input",
            "@x.csv",
            "--output",
            "@z.csv",
            "--memory-cap-mb",
            "1",
        ],
        Refused,
    ));
    v.push(case(
        "2-memory",
        "cntk of 4096x4096x4096 images",
        &[
            "gram",
            "--kernel",
            "cntk",
            "--param",
            "height=4096",
            "--param",
            "width=4096",
            "--param",
            "channels=4096",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
        ],
        Refused,
    ));

    {
        // the exact CNTK holds five (height width)^2 tensors per pair: 256 x 256 images need 171 GB per worker
        let img = vec!["0.5"; 65536].join(",") + "\n";
        v.push(
            case(
                "2-memory",
                "cntk of one 256x256 image",
                &[
                    "gram",
                    "--kernel",
                    "cntk",
                    "--param",
                    "height=256",
                    "--param",
                    "width=256",
                    "--input",
                    "@img.csv",
                    "--output",
                    "@k.csv",
                ],
                Refused,
            )
            .file("img.csv", img.into_bytes()),
        );
    }

    // ---- class 3: the input destroyed by its own output
    let same = [
        (
            "features --output = --input",
            s(&[
                "features", "--method", "rff", "--dim", "8", "--input", "@x.csv", "--output",
                "@x.csv",
            ]),
        ),
        (
            "features --output = --input (npy)",
            s(&[
                "features", "--method", "rff", "--dim", "8", "--input", "@x.npy", "--output",
                "@x.npy",
            ]),
        ),
        (
            "features --output = --fit-on",
            s(&[
                "features", "--method", "nystrom", "--dim", "4", "--input", "@y.csv", "--fit-on",
                "@x.csv", "--output", "@x.csv",
            ]),
        ),
        (
            "features --output = ./--input",
            s(&[
                "features", "--method", "rff", "--dim", "8", "--input", "@x.csv", "--output",
                "@./x.csv",
            ]),
        ),
        (
            "features --output = sub/../--input",
            s(&[
                "features",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@x.csv",
                "--output",
                "@sub/../x.csv",
            ]),
        ),
        (
            "gram --output = --input",
            s(&[
                "gram", "--kernel", "gaussian", "--input", "@x.csv", "--output", "@x.csv",
            ]),
        ),
        (
            "gram --output = --against",
            s(&[
                "gram",
                "--kernel",
                "gaussian",
                "--input",
                "@x.csv",
                "--against",
                "@y.csv",
                "--output",
                "@y.csv",
            ]),
        ),
        (
            "gram --output = --input (npy)",
            s(&[
                "gram", "--kernel", "ntk", "--input", "@x.npy", "--output", "@x.npy",
            ]),
        ),
        (
            "fit --predictions = --input",
            s(&[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                "2",
                "--predictions",
                "@train.csv",
            ]),
        ),
        (
            "fit --predictions = --test",
            s(&[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                "2",
                "--predictions",
                "@test.csv",
            ]),
        ),
    ];
    for (name, a) in same {
        let mut c = case("3-output-over-input", name, &[], Refused)
            .setup(|d| std::fs::create_dir(d.join("sub")).unwrap());
        c.args = a;
        v.push(c);
    }
    for (what, hard) in [("symlink", false), ("hard link", true)] {
        let mut c = case(
            "3-output-over-input",
            format!("features --output = a {what} to --input"),
            &[],
            Refused,
        );
        c.args = feat("rff", "8", &[]);
        let i = c.args.iter().position(|a| a == "--output").unwrap();
        c.args[i + 1] = "@link.csv".into();
        c.setup = Some(if hard {
            |d: &Path| link_x_to(d, "link.csv", true)
        } else {
            |d: &Path| link_x_to(d, "link.csv", false)
        });
        v.push(c);
        let mut c = case(
            "3-output-over-input",
            format!("gram --output = a {what} to --input"),
            &[
                "gram",
                "--kernel",
                "arccos1",
                "--input",
                "@x.csv",
                "--output",
                "@link.csv",
            ],
            Refused,
        );
        c.setup = Some(if hard {
            |d: &Path| link_x_to(d, "link.csv", true)
        } else {
            |d: &Path| link_x_to(d, "link.csv", false)
        });
        v.push(c);
        let mut c = case(
            "3-output-over-input",
            format!("gram --input = a {what} to --output"),
            &[
                "gram",
                "--kernel",
                "arccos1",
                "--input",
                "@link.csv",
                "--output",
                "@x.csv",
            ],
            Refused,
        );
        c.setup = Some(if hard {
            |d: &Path| link_x_to(d, "link.csv", true)
        } else {
            |d: &Path| link_x_to(d, "link.csv", false)
        });
        v.push(c);
    }

    // ---- class 4: silent wrong numbers from finite input
    let far = csv_of(&[vec![1e160, 0.0], vec![2e160, 0.0]]);
    v.push(
        case(
            "4-numerics",
            "gaussian gram of points 1e160 apart",
            &[
                "gram", "--kernel", "gaussian", "--input", "@far.csv", "--output", "@k.csv",
            ],
            OkOrRefused,
        )
        .file("far.csv", far.clone())
        .check(gaussian_far_apart_is_zero),
    );
    v.push(
        case(
            "4-numerics",
            "gaussian gram --against of points 1e160 apart",
            &[
                "gram",
                "--kernel",
                "gaussian",
                "--input",
                "@far.csv",
                "--against",
                "@far.csv",
                "--output",
                "@k.npy",
            ],
            OkOrRefused,
        )
        .file("far.csv", far.clone())
        .check(gaussian_far_apart_is_zero),
    );
    v.push(
        case(
            "4-numerics",
            "gaussian gram of points 1e200 apart",
            &[
                "gram", "--kernel", "gaussian", "--input", "@far.csv", "--output", "@k.csv",
            ],
            OkOrRefused,
        )
        .file(
            "far.csv",
            csv_of(&[vec![-1e200, 1e200], vec![1e200, -1e200]]),
        )
        .check(gaussian_far_apart_is_zero),
    );
    v.push(
        case(
            "4-numerics",
            "gaussian gram, 1e154 apart, sigma 1e6",
            &[
                "gram",
                "--kernel",
                "gaussian",
                "--param",
                "sigma=1000000",
                "--input",
                "@far.csv",
                "--output",
                "@k.csv",
            ],
            OkOrRefused,
        )
        .file(
            "far.csv",
            csv_of(&[vec![1e154, 1e154], vec![-1e154, 3e154]]),
        )
        .check(gaussian_moderately_far_is_zero),
    );
    v.push(
        case(
            "4-numerics",
            "gaussian gram, huge norms 1 apart",
            &[
                "gram",
                "--kernel",
                "gaussian",
                "--input",
                "@near.csv",
                "--output",
                "@k.csv",
            ],
            OkOrRefused,
        )
        .file("near.csv", csv_of(&[vec![1e9, 0.0], vec![1e9 + 1.0, 0.0]]))
        .check(gaussian_near_with_huge_norms),
    );
    for (kernel, params) in [
        ("ntk", "depth=1"),
        ("ntk", "depth=3"),
        ("nngp", "depth=2"),
        ("polynomial", "degree=2"),
        ("polynomial", "degree=60"),
        ("arccos1", "depth=1"),
        ("gzk", "taylor=1,1,0.5"),
        ("cntk", "height=1"),
        ("ntk", "bias=1000000"),
    ] {
        for scale in [1e150, 1e200, 1e300, 1e-200, 1e-320] {
            let rows = csv_of(&[
                vec![scale, 0.5 * scale],
                vec![-0.25 * scale, scale],
                vec![scale, scale],
            ]);
            let mut a = s(&[
                "gram", "--kernel", kernel, "--input", "@h.csv", "--output", "@k.csv",
            ]);
            if kernel != "arccos1" {
                a.extend(s(&["--param", params]));
            }
            if kernel == "cntk" {
                a.extend(s(&["--param", "width=2", "--param", "filter=1"]));
            }
            let mut c = case(
                "4-numerics",
                format!("gram {kernel} {params} on rows of norm ~{scale:e}"),
                &[],
                OkOrRefused,
            )
            .file("h.csv", rows)
            .check(all_finite_nonneg_diag);
            c.args = a;
            v.push(c);
        }
    }
    for method in [
        "rff",
        "orf",
        "ntk-rf",
        "arccos",
        "relu-rf",
        "lp-rff",
        "gegenbauer",
        "ntk-sketch",
        "maclaurin",
        "polysketch",
        "fastfood",
        "nystrom",
        "ternary",
    ] {
        for scale in [1e155, 1e300, 1e-300] {
            let rows = csv_of(&[
                vec![scale, -0.5 * scale, 0.25 * scale],
                vec![0.1 * scale, scale, scale],
                vec![scale, scale, -scale],
            ]);
            let mut c = case(
                "4-numerics",
                format!("features {method} on rows of norm ~{scale:e}"),
                &[],
                OkOrRefused,
            )
            .file("h.csv", rows);
            c.args = with_input(feat(method, "16", &[]), "@h.csv");
            v.push(c);
        }
    }
    for t in [1e-160, 1e-300, 5e-324] {
        let rows = csv_of(&[vec![t, 0.0], vec![t, t]]);
        v.push(
            case(
                "4-numerics",
                format!("arccos0 of tiny vectors ({t:e})"),
                &[
                    "gram", "--kernel", "arccos0", "--input", "@t.csv", "--output", "@k.csv",
                ],
                Ok,
            )
            .file("t.csv", rows.clone())
            .check(arccos0_tiny_45_degrees),
        );
        v.push(
            case(
                "4-numerics",
                format!("arccos1 of tiny vectors ({t:e})"),
                &[
                    "gram", "--kernel", "arccos1", "--input", "@t.csv", "--output", "@k.csv",
                ],
                Ok,
            )
            .file("t.csv", rows)
            .check(arccos1_tiny_is_scaled),
        );
    }
    {
        let mut f = 1.0f64;
        let mut coef = Vec::new();
        for j in 0..170 {
            if j > 0 {
                f *= j as f64;
            }
            coef.push(format!("{:e}", 1.0 / f));
        }
        let taylor = format!("taylor={}", coef.join(","));
        let rows = csv_of(&[vec![0.6, 0.0], vec![0.0, 0.8], vec![0.6, 0.8]]);
        let mut c = case(
            "4-numerics",
            "gzk with 170 coefficients 1/j! (exp)",
            &[],
            OkOrRefused,
        )
        .file("g.csv", rows.clone())
        .check(gzk_exp_series);
        c.args = s(&[
            "gram", "--kernel", "gzk", "--param", &taylor, "--input", "@g.csv", "--output",
            "@k.csv",
        ]);
        v.push(c);
        let ones = vec!["1"; 1000].join(",");
        let mut c = case(
            "4-numerics",
            "gzk with 1000 unit coefficients",
            &[],
            OkOrRefused,
        )
        .file("g.csv", rows.clone());
        c.args = s(&[
            "gram",
            "--kernel",
            "gzk",
            "--param",
            &format!("taylor={ones}"),
            "--input",
            "@g.csv",
            "--output",
            "@k.csv",
        ]);
        v.push(c);
        let mut c = case(
            "4-numerics",
            "gzk with 1000 unit coefficients on norm-30 rows",
            &[],
            OkOrRefused,
        )
        .file("g.csv", csv_of(&[vec![30.0, 0.0], vec![0.0, 30.0]]));
        c.args = s(&[
            "gram",
            "--kernel",
            "gzk",
            "--param",
            &format!("taylor={ones}"),
            "--input",
            "@g.csv",
            "--output",
            "@k.csv",
        ]);
        v.push(c);
        let mut c = case("4-numerics", "gzk with coefficient 1e308", &[], OkOrRefused)
            .file("g.csv", csv_of(&[vec![3.0, 0.0], vec![0.0, 3.0]]));
        c.args = s(&[
            "gram",
            "--kernel",
            "gzk",
            "--param",
            "taylor=1e308,1e308,1e308",
            "--input",
            "@g.csv",
            "--output",
            "@k.csv",
        ]);
        v.push(c);
    }
    {
        let big = csv_of(&[
            vec![1e200, 1.0, 1.0],
            vec![-1e200, 2.0, 0.0],
            vec![1e200, 0.0, 1.0],
            vec![1.0, 1.0, 0.0],
            vec![2.0, 0.0, 1.0],
            vec![3.0, 1.0, 0.0],
        ]);
        let mut c = case(
            "4-numerics",
            "fit on huge training values",
            &[],
            OkOrRefused,
        )
        .file("big.csv", big);
        c.args = s(&[
            "fit",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@big.csv",
            "--test",
            "@big.csv",
            "--target-column",
            "2",
            "--folds",
            "2",
            "--predictions",
            "@p.csv",
        ]);
        v.push(c);
        let mut c = case("4-numerics", "fit with huge targets", &[], OkOrRefused).file(
            "bigy.csv",
            csv_of(&[
                vec![1.0, 1e300],
                vec![2.0, -1e300],
                vec![3.0, 1e300],
                vec![4.0, -1e300],
            ]),
        );
        c.args = s(&[
            "fit",
            "--method",
            "arccos",
            "--dim",
            "8",
            "--input",
            "@bigy.csv",
            "--test",
            "@bigy.csv",
            "--target-column",
            "1",
            "--folds",
            "2",
            "--predictions",
            "@p.csv",
        ]);
        v.push(c);
    }

    // ---- class 6: no panic for any argument or file
    for br in [
        "0",
        "1",
        "18446744073709551615",
        "9223372036854775807",
        "18446744073709551616",
        "-1",
        "1e9",
    ] {
        v.push(case(
            "6-panic",
            format!("gram --block-rows {br}"),
            &[
                "gram",
                "--kernel",
                "gaussian",
                "--input",
                "@x.csv",
                "--output",
                "@k.csv",
                "--block-rows",
                br,
            ],
            OkOrRefused,
        ));
        let mut c = case(
            "6-panic",
            format!("features --block-rows {br}"),
            &[],
            OkOrRefused,
        );
        c.args = feat("rff", "8", &["--block-rows", br]);
        v.push(c);
    }
    for dim in [
        "-5",
        "0",
        "1.5",
        "",
        "abc",
        "1e3",
        "18446744073709551616",
        "1",
        "2",
        "3",
    ] {
        let mut c = case(
            "6-panic",
            format!("features --dim {dim:?}"),
            &[],
            OkOrRefused,
        );
        c.args = feat("ntk-rf", dim, &[]);
        v.push(c);
        let mut c = case(
            "6-panic",
            format!("features sorf --dim {dim:?}"),
            &[],
            OkOrRefused,
        );
        c.args = feat("sorf", dim, &[]);
        v.push(c);
    }
    for folds in ["0", "1", "-3", "13", "18446744073709551615"] {
        v.push(case(
            "6-panic",
            format!("fit --folds {folds}"),
            &[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                "2",
                "--folds",
                folds,
            ],
            OkOrRefused,
        ));
    }
    for tc in ["-1", "3", "18446744073709551616", "", "a", "c"] {
        v.push(case(
            "6-panic",
            format!("fit --target-column {tc:?}"),
            &[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                tc,
            ],
            OkOrRefused,
        ));
    }
    for (kernel, param) in [
        ("gaussian", "sigma=nan"),
        ("gaussian", "sigma=inf"),
        ("gaussian", "sigma=-0"),
        ("gaussian", "sigma=1e-320"),
        ("gaussian", "sigma=1e400"),
        ("ntk", "depth=99999999999999999999"),
        ("ntk", "depth=-1"),
        ("ntk", "depth=1000"),
        ("nngp", "depth=1000"),
        ("gzk", "taylor="),
        ("gzk", "taylor=1,,2"),
        ("gzk", "taylor=-1"),
        ("gzk", "taylor=nan"),
        ("gzk", "taylor=0,0,0"),
        ("cntk", "height=0"),
        ("cntk", "filter=2"),
        ("cntk", "filter=31"),
        ("cntk", "depth=64"),
        ("polynomial", "degree=61"),
        ("polynomial", "c=1e400"),
        ("gaussian", "=1"),
        ("gaussian", "sigma"),
        ("gaussian", "σ=1"),
        ("nosuch", "a=1"),
    ] {
        v.push(case(
            "6-panic",
            format!("gram {kernel} --param {param}"),
            &[
                "gram", "--kernel", kernel, "--param", param, "--input", "@x.csv", "--output",
                "@k.csv",
            ],
            OkOrRefused,
        ));
    }
    for (method, param) in [
        ("rff", "sigma=1e-6"),
        ("rff", "phase=random"),
        ("ntk-rf", "sketch_share=0.95"),
        ("gegenbauer", "degree=60"),
        ("gegenbauer", "unit_norm=true"),
        ("ls-rff", "ls_rows=2"),
        ("maclaurin", "degree=60"),
        ("polysketch", "degree=32"),
        ("rom", "rom_blocks=16"),
        ("ssf", "ssf_sweeps=100"),
        ("ternary", "sparsity=0.99"),
        ("grad-rf", "depth=8"),
    ] {
        let mut c = case(
            "6-panic",
            format!("features {method} --param {param}"),
            &[],
            OkOrRefused,
        );
        c.args = feat(method, "16", &["--param", param]);
        v.push(c);
    }
    let files: Vec<(&str, &str, Vec<u8>)> = vec![
        ("empty CSV", "e.csv", Vec::new()),
        ("header only", "e.csv", b"a,b,c\n".to_vec()),
        ("ragged CSV", "e.csv", b"1,2,3\n4,5\n".to_vec()),
        ("commas only", "e.csv", b",,\n,,\n".to_vec()),
        (
            "BOM and CRLF",
            "e.csv",
            b"\xef\xbb\xbfa,b,c\r\n1,2,3\r\n4,5,6\r\n".to_vec(),
        ),
        (
            "quoted fields",
            "e.csv",
            b"\"1\",\"2\",\"3\"\n\"4\",\"5\",\"6\"\n".to_vec(),
        ),
        ("invalid UTF-8", "e.csv", b"1,2,\xff\n4,5,6\n".to_vec()),
        ("NaN value", "e.csv", b"1,2,NaN\n4,5,6\n".to_vec()),
        ("inf value", "e.csv", b"1,2,3\n4,inf,6\n".to_vec()),
        ("1e400 value", "e.csv", b"1,2,3\n4,1e400,6\n".to_vec()),
        ("NUL bytes", "e.csv", b"1,2\x00,3\n4,5,6\n".to_vec()),
        ("unterminated quote", "e.csv", b"1,\"2,3\n4,5,6\n".to_vec()),
        ("one column one row", "e.csv", b"7\n".to_vec()),
        ("truncated npy", "e.npy", f64_npy("(2, 3)", &[1.0, 2.0])),
        (
            "npy bad magic",
            "e.npy",
            b"\x93NUMPX\x01\x00\x10\x00{}              \n".to_vec(),
        ),
        (
            "npy header length past the end",
            "e.npy",
            b"\x93NUMPY\x01\x00\xff\xff{'descr'".to_vec(),
        ),
        ("npy 1-D", "e.npy", f64_npy("(3,)", &[1.0, 2.0, 3.0])),
        ("npy 0-D", "e.npy", f64_npy("()", &[1.0])),
        ("npy 3-D", "e.npy", f64_npy("(1, 1, 2)", &[1.0, 2.0])),
        ("npy shape (0, 3)", "e.npy", f64_npy("(0, 3)", &[])),
        (
            "npy negative shape",
            "e.npy",
            f64_npy("(-1, 3)", &[1.0, 2.0, 3.0]),
        ),
        (
            "npy big-endian",
            "e.npy",
            npy_raw(
                "{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }",
                &[0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0],
            ),
        ),
        (
            "npy float16",
            "e.npy",
            npy_raw(
                "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2), }",
                &[0, 0x3c, 0, 0x40],
            ),
        ),
        (
            "npy object dtype",
            "e.npy",
            npy_raw(
                "{'descr': '|O', 'fortran_order': False, 'shape': (1, 1), }",
                &[0; 8],
            ),
        ),
        ("npy garbage header", "e.npy", npy_raw("{{{{((((", &[0; 16])),
        ("npy NaN", "e.npy", f64_npy("(1, 2)", &[f64::NAN, 1.0])),
        (
            "npy extra bytes",
            "e.npy",
            f64_npy("(1, 2)", &[1.0, 2.0, 3.0]),
        ),
    ];
    for (what, name, bytes) in files {
        let input = format!("@{name}");
        let mut c = case("6-panic", format!("features on {what}"), &[], OkOrRefused)
            .file(name, bytes.clone());
        c.args = with_input(feat("rff", "8", &[]), &input);
        v.push(c);
        v.push(
            case(
                "6-panic",
                format!("gram on {what}"),
                &[
                    "gram", "--kernel", "ntk", "--input", &input, "--output", "@k.npy",
                ],
                OkOrRefused,
            )
            .file(name, bytes.clone()),
        );
        v.push(
            case(
                "6-panic",
                format!("fit on {what}"),
                &[
                    "fit",
                    "--method",
                    "arccos",
                    "--dim",
                    "8",
                    "--input",
                    &input,
                    "--test",
                    "@test.csv",
                    "--target-column",
                    "0",
                ],
                OkOrRefused,
            )
            .file(name, bytes),
        );
    }
    v.push(
        case(
            "6-panic",
            "input is a directory",
            &[
                "gram", "--kernel", "ntk", "--input", "@sub.csv", "--output", "@k.csv",
            ],
            Refused,
        )
        .setup(|d| std::fs::create_dir(d.join("sub.csv")).unwrap()),
    );
    v.push(case(
        "6-panic",
        "input missing",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@missing.csv",
            "--output",
            "@k.csv",
        ],
        Refused,
    ));
    v.push(case(
        "6-panic",
        "--against wrong width",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.csv",
            "--against",
            "@train.csv",
            "--output",
            "@k.csv",
        ],
        OkOrRefused,
    ));
    v.push(
        case(
            "6-panic",
            "--test wrong width",
            &[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@two.csv",
                "--target-column",
                "2",
            ],
            Refused,
        )
        .file("two.csv", csv_of(&[vec![1.0, 2.0], vec![3.0, 4.0]])),
    );
    v.push(
        case(
            "6-panic",
            "classification with one class",
            &[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                "2",
                "--task",
                "classification",
                "--folds",
                "2",
            ],
            OkOrRefused,
        )
        .file(
            "train.csv",
            csv_of(&[
                vec![1.0, 2.0, 0.0],
                vec![2.0, 1.0, 0.0],
                vec![0.0, 1.0, 0.0],
            ]),
        ),
    );

    {
        // `fit` selects the input columns into a column-major matrix: with enough rows the cosines of the
        // Gegenbauer map came out column-major and its row loop panicked
        let rows: Vec<Vec<f64>> = (0..400)
            .map(|i| {
                (0..33)
                    .map(|j| ((i * 33 + j) as f64 * 0.61).sin() * 0.3)
                    .collect()
            })
            .collect();
        let table = csv_of(&rows);
        for method in [
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
        ] {
            v.push(
                case(
                    "6-panic",
                    format!("fit {method} on 400 rows x 33 columns"),
                    &[
                        "fit",
                        "--method",
                        method,
                        "--dim",
                        "64",
                        "--input",
                        "@t.csv",
                        "--test",
                        "@t.csv",
                        "--target-column",
                        "32",
                        "--predictions",
                        "@p.csv",
                    ],
                    Ok,
                )
                .file("t.csv", table.clone()),
            );
        }
    }

    // ---- class 8: exit codes and messages
    v.push(
        case(
            "8-messages",
            "--output is a directory",
            &[
                "gram", "--kernel", "ntk", "--input", "@x.csv", "--output", "@out.csv",
            ],
            Refused,
        )
        .setup(|d| std::fs::create_dir(d.join("out.csv")).unwrap()),
    );
    v.push(
        case(
            "8-messages",
            "features --output is a directory",
            &[
                "features", "--method", "rff", "--dim", "8", "--input", "@x.csv", "--output",
                "@out.npy",
            ],
            Refused,
        )
        .setup(|d| std::fs::create_dir(d.join("out.npy")).unwrap()),
    );
    v.push(
        case(
            "8-messages",
            "--predictions is a directory",
            &[
                "fit",
                "--method",
                "rff",
                "--dim",
                "8",
                "--input",
                "@train.csv",
                "--test",
                "@test.csv",
                "--target-column",
                "2",
                "--predictions",
                "@p",
            ],
            Refused,
        )
        .setup(|d| std::fs::create_dir(d.join("p")).unwrap()),
    );
    v.push(case(
        "8-messages",
        "--output under a file",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.csv",
            "--output",
            "@x.npy/k.csv",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--predictions under a file",
        &[
            "fit",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@train.csv",
            "--test",
            "@test.csv",
            "--target-column",
            "2",
            "--predictions",
            "@x.npy/p.csv",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--output in /proc",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.csv",
            "--output",
            "/proc/rfx-hostile.csv",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--predictions in /proc",
        &[
            "fit",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@train.csv",
            "--test",
            "@test.csv",
            "--target-column",
            "2",
            "--predictions",
            "/proc/rfx-hostile.csv",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--output unknown extension",
        &[
            "gram", "--kernel", "ntk", "--input", "@x.csv", "--output", "@k.txt",
        ],
        Refused,
    ));
    for (flag, val) in [
        ("--dim", "-5"),
        ("--dim", "99999999999999999999999"),
        ("--seed", "-1"),
        ("--block-rows", "-7"),
        ("--seed", "1e999"),
    ] {
        let mut c = case("8-messages", format!("features {flag} {val}"), &[], Refused);
        c.args = feat("rff", "8", &[]);
        if let Some(i) = c.args.iter().position(|a| a == flag) {
            c.args[i + 1] = val.into();
        } else {
            c.args.extend([flag.to_string(), val.to_string()]);
        }
        v.push(c);
    }
    v.push(case(
        "8-messages",
        "gram --memory-cap-mb -1",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
            "--memory-cap-mb",
            "-1",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "gram --memory-cap-mb 1e400",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
            "--memory-cap-mb",
            "99999999999999999999999",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--param depth out of range",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--param",
            "depth=99999999999999999999999",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
        ],
        Refused,
    ));
    v.push(case(
        "8-messages",
        "--param sigma out of range",
        &[
            "gram",
            "--kernel",
            "gaussian",
            "--param",
            "sigma=1e400",
            "--input",
            "@x.csv",
            "--output",
            "@k.csv",
        ],
        Refused,
    ));

    // ---- valid controls (each must succeed: the checks above do not refuse good input)
    v.push(case(
        "control",
        "features rff",
        &[
            "features", "--method", "rff", "--dim", "8", "--input", "@x.csv", "--output", "@z.csv",
        ],
        Ok,
    ));
    v.push(case(
        "control",
        "gram ntk npy",
        &[
            "gram",
            "--kernel",
            "ntk",
            "--input",
            "@x.npy",
            "--against",
            "@x.csv",
            "--output",
            "@k.npy",
        ],
        Ok,
    ));
    v.push(case(
        "control",
        "fit",
        &[
            "fit",
            "--method",
            "rff",
            "--dim",
            "8",
            "--input",
            "@train.csv",
            "--test",
            "@test.csv",
            "--target-column",
            "2",
            "--predictions",
            "@p.csv",
        ],
        Ok,
    ));
    v
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

/// Every file (and link) under `dir`, relative, with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut m = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if ft.is_dir() {
                m.insert(rel.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else if ft.is_symlink() {
                m.insert(
                    rel,
                    format!("<link {:?}>", std::fs::read_link(&p).unwrap()).into_bytes(),
                );
            } else {
                m.insert(rel, sha(&p));
            }
        }
    }
    m
}

fn matrix_of(path: &Path) -> Result<Array2<f64>, String> {
    if path.extension().is_some_and(|e| e == "npy") {
        return Array2::<f64>::read_npy(std::fs::File::open(path).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string());
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for l in text.lines() {
        let r: Result<Vec<f64>, _> = l.split(',').map(|v| v.trim().parse::<f64>()).collect();
        match r {
            Ok(r) => rows.push(r),
            Err(_) if rows.is_empty() => continue, // a header line
            Err(e) => return Err(format!("{l:?}: {e}")),
        }
    }
    let n = rows.len();
    let m = rows.first().map_or(0, |r| r.len());
    Array2::from_shape_vec((n, m), rows.concat()).map_err(|e| e.to_string())
}

struct Outcome {
    code: Option<i32>,
    stderr: String,
    problems: Vec<String>,
}

fn run_case(c: &Case, bin: &Path) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, bytes) in bases() {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    for (name, bytes) in &c.files {
        std::fs::write(d.join(name), bytes).unwrap();
    }
    if let Some(s) = c.setup {
        s(d);
    }
    let before = snapshot(d);
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| match a.strip_prefix('@') {
            Some(rest) => format!("{}/{rest}", d.display()),
            None => a.clone(),
        })
        .collect();
    let mut cmd = Command::new(bin);
    cmd.args(&args)
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RAYON_NUM_THREADS", "2");
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_LIMIT,
                rlim_max: ADDRESS_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let t0 = Instant::now();
    let mut problems = Vec::new();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            problems.push("timed out after 60 s".to_string());
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let code = status.and_then(|s| s.code());
    if let Some(s) = status {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            problems.push(format!("killed by signal {sig}"));
        }
    }
    match code {
        Some(0..=2) => {}
        Some(k) => problems.push(format!("exit code {k}")),
        None => {}
    }
    let want_ok = match c.expect {
        Expect::Refused => code == Some(2),
        Expect::OkOrRefused => matches!(code, Some(0 | 2)),
        Expect::Ok => code == Some(0),
    };
    if !want_ok {
        problems.push(format!("exit {code:?}, expected {:?}", c.expect));
    }
    let lines = stderr.lines().count();
    if code != Some(0) && lines != 1 {
        problems.push(format!("{lines} lines on stderr"));
    }
    if code == Some(0) && lines > 1 {
        problems.push(format!("{lines} lines on stderr after success"));
    }
    if stderr.contains("expected an integer, found an integer") {
        problems.push("message 'expected an integer, found an integer'".into());
    }
    let mut digits = 0;
    for ch in stderr.chars() {
        digits = if ch.is_ascii_digit() { digits + 1 } else { 0 };
        if digits > 40 {
            problems.push("a number of more than 40 digits in the message".into());
            break;
        }
    }
    // inputs untouched, nothing left behind but the outputs of a success
    let after = snapshot(d);
    let outputs: BTreeSet<PathBuf> = ["--output", "--predictions"]
        .iter()
        .filter_map(|f| {
            c.args
                .iter()
                .position(|a| a == f)
                .and_then(|i| c.args.get(i + 1))
        })
        .filter_map(|a| a.strip_prefix('@'))
        .map(PathBuf::from)
        .collect();
    for (p, bytes) in &before {
        match after.get(p) {
            Some(b) if b == bytes => {}
            Some(_) if code == Some(0) && outputs.contains(p) => {}
            Some(_) => problems.push(format!("input {} changed", p.display())),
            None => problems.push(format!("input {} removed", p.display())),
        }
    }
    for p in after.keys() {
        if !before.contains_key(p) {
            if code == Some(0) && outputs.contains(p) {
                let m = matrix_of(&d.join(p));
                match m {
                    Err(e) => problems.push(format!("output {} unreadable: {e}", p.display())),
                    Ok(m) => {
                        if m.iter().any(|v| !v.is_finite()) {
                            problems.push(format!("output {} has NaN or inf", p.display()));
                        } else if let Some(check) = c.check.filter(|_| p != Path::new("p.csv")) {
                            if let Err(e) = check(&m) {
                                problems.push(format!("wrong numbers: {e}"));
                            }
                        }
                    }
                }
            } else {
                problems.push(format!("left behind: {}", p.display()));
            }
        }
    }
    Outcome {
        code,
        stderr,
        problems,
    }
}

#[test]
fn hostile_user_inputs_are_refused_cleanly() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_rfx"));
    let cases = cases();
    let t0 = Instant::now();
    let mut by_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let results: Vec<(usize, Outcome)> = {
        // two cases at a time: the machine is shared
        let next = std::sync::atomic::AtomicUsize::new(0);
        let out = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(c) = cases.get(i) else { break };
                    let o = run_case(c, &bin);
                    out.lock().unwrap().push((i, o));
                });
            }
        });
        let mut v = out.into_inner().unwrap();
        v.sort_by_key(|(i, _)| *i);
        v
    };
    for (i, o) in &results {
        let c = &cases[*i];
        let e = by_class.entry(c.class).or_default();
        e.0 += 1;
        if o.problems.is_empty() {
            e.1 += 1;
        } else {
            failures.push(format!(
                "[{}] {}: {} (exit {:?}; stderr: {})",
                c.class,
                c.name,
                o.problems.join("; "),
                o.code,
                o.stderr.trim().chars().take(300).collect::<String>()
            ));
        }
    }
    eprintln!(
        "hostile corpus: {} cases in {:.1} s",
        cases.len(),
        t0.elapsed().as_secs_f64()
    );
    for (class, (n, ok)) in &by_class {
        eprintln!("  {class:<22} {ok:>4} of {n:>4} pass");
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(cases.len() >= 100, "corpus of {} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} hostile cases fail (listed above)",
        failures.len(),
        cases.len()
    );
}
