//! `rfx-perf`: the rfx side of `bench/compare` (issue 10).
//!
//! Writes the data both sides use (the first `--n` MNIST training rows scaled to [0, 1], their labels as a
//! real target, and the first `--n-test` test rows) as `.npy` files into `--out`, measures the machine's
//! DGEMM rate (square `--gemm-n` product through ndarray/OpenBLAS, all BLAS threads), then times each rfx
//! feature map, sketch and solver **in process** (fit + transform of all rows for maps, fit for solvers;
//! no file I/O and no process start inside a timing; median of `--reps` runs) and writes `rfx.json`.
//! For the error checks it writes, per seed, the approximate Gram $ZZ^\top$ of the first `--n-err` rows
//! (`gram_<method>_s<seed>.npy`), the ridge features and weights and the KRR test predictions; the Python
//! script computes the errors of both libraries from these with the same numpy code.

use std::path::PathBuf;
use std::time::Instant;

use ndarray::{s, Array1, Array2, Axis};
use ndarray_npy::write_npy;
use rfx_core::FitData;
use rfx_core::{rng_stream, FeatureMap};
use rfx_data::fetch::{cache_dir_from_env, fetch_from_env};
use rfx_data::load::load_idx_set;
use rfx_gzk::zonal::Gzk;
use rfx_linalg::Precision;
use rfx_registry as methods;
use rfx_sampling::random::gaussian_matrix;
use rfx_sketches::TensorSketch;
use rfx_solvers::nystrom::{LandmarkSampling, Nystrom, NystromParams};
use rfx_solvers::ridge::{KernelRidge, KrrParams, Ridge, RidgeParams};
use rfx_ternary::{TernaryParams, Thresholds};
use serde_json::{json, Value};

/// The rfx side of `bench/compare`: shared data as `.npy`, the machine's GEMM rate, and rfx's maps, sketches
/// and solvers timed in process (median of `--reps` runs) into `rfx.json`.
#[derive(clap::Parser)]
#[command(name = "rfx-perf")]
struct Args {
    /// Folder for the shared `.npy` data, the error-check files and `rfx.json`.
    #[arg(long, default_value = "/tmp/rfx-compare")]
    out: PathBuf,
    /// MNIST training rows used (features, solvers).
    #[arg(long, default_value_t = 10_000, value_parser = positive)]
    n: usize,
    /// MNIST test rows (KRR and ridge predictions).
    #[arg(long, default_value_t = 2_000, value_parser = positive)]
    n_test: usize,
    /// Rows whose approximate Gram is written for the error checks.
    #[arg(long, default_value_t = 1_000, value_parser = positive)]
    n_err: usize,
    /// Training rows of exact KRR.
    #[arg(long, default_value_t = 5_000, value_parser = positive)]
    n_krr: usize,
    /// Size of the square GEMM that measures the machine's rate.
    #[arg(long = "gemm-n", default_value_t = 4096, value_parser = positive)]
    d_gemm: usize,
    /// Timed runs per measurement (the median is kept).
    #[arg(long, default_value_t = 3, value_parser = positive)]
    reps: usize,
    /// Seeds of the error checks.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    seeds: u64,
    /// Gaussian width σ.
    #[arg(long, default_value_t = 5.0, value_parser = positive_real)]
    sigma: f64,
    /// Feature dimension of the maps.
    #[arg(long, default_value_t = 4096, value_parser = positive)]
    m: usize,
    /// Nyström landmarks.
    #[arg(long = "m-nystrom", default_value_t = 1024, value_parser = positive)]
    m_nys: usize,
    /// Feature dimension of the ridge solver.
    #[arg(long, default_value_t = 2048, value_parser = positive)]
    m_ridge: usize,
    /// Ridge and KRR regularisation λ.
    #[arg(long, default_value_t = 1.0, value_parser = positive_real)]
    lambda: f64,
    /// Measure only these (comma-separated names of the rows of `rfx.json`).
    #[arg(long)]
    only: Option<String>,
}

/// An integer >= 1 (and at most 10⁹: a size of this benchmark).
fn positive(v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=1_000_000_000).contains(&n) => Ok(n),
        _ => Err(format!("{v:?}: expected an integer from 1 to 1000000000")),
    }
}

/// A finite real > 0.
fn positive_real(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("{v:?}: expected a finite number > 0")),
    }
}

/// Median wall time in seconds of `reps` runs of `f` (after none: the first run is counted; `reps` >= 3
/// makes one slow first run irrelevant).
fn time_median<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let r = f();
        times.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    times.sort_by(|a, b| a.partial_cmp(b).expect("finite times"));
    (times[times.len() / 2], last.expect("at least one run"))
}

/// The median time of the square product `a.dot(b)` after one warm-up call (thread pool start, page faults)
/// and its rate in flop/s, printed with the load average under `name`.
fn gemm_time_and_rate<T: ndarray::LinalgScalar>(
    name: &str,
    a: &Array2<T>,
    b: &Array2<T>,
    reps: usize,
) -> (f64, f64) {
    let _ = a.dot(b);
    let t = time_median(reps, || a.dot(b)).0;
    let n = a.nrows() as f64;
    let rate = 2.0 * n * n * a.ncols() as f64 / t;
    eprintln!(
        "{name} {0}x{0}: {t:.3} s, {1:.1} GFLOP/s (load {2})",
        a.nrows(),
        rate / 1e9,
        loadavg()
    );
    (t, rate)
}

fn gaussian(n: usize, p: usize, key: &str) -> Array2<f64> {
    gaussian_matrix(n, p, &mut rng_stream(0, key))
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let a = <Args as clap::Parser>::parse();
    std::fs::create_dir_all(&a.out).expect("create --out");
    let want = |name: &str| {
        a.only
            .as_ref()
            .is_none_or(|o| o.split(',').any(|x| x == name))
    };
    let mut results: Vec<Value> = Vec::new();
    let load_start = loadavg();

    // --- DGEMM and SGEMM rates of this machine, this run ---
    let (mut t_gemm, mut gemm_rate) = (f64::NAN, f64::NAN);
    let (mut t_sgemm, mut sgemm_rate) = (f64::NAN, f64::NAN);
    if want("dgemm") {
        let ga = gaussian(a.d_gemm, a.d_gemm, "perf;gemm-a");
        let gb = gaussian(a.d_gemm, a.d_gemm, "perf;gemm-b");
        (t_gemm, gemm_rate) = gemm_time_and_rate("DGEMM", &ga, &gb, a.reps);
        // the anchor of the f32 maps: the same shape in f32 (ndarray `.dot` → OpenBLAS sgemm)
        let (sa, sb) = (ga.mapv(|v| v as f32), gb.mapv(|v| v as f32));
        drop((ga, gb));
        (t_sgemm, sgemm_rate) = gemm_time_and_rate("SGEMM", &sa, &sb, a.reps);
    }

    // --- data (MNIST, scaled to [0, 1]) ---
    fetch_from_env("mnist").expect("fetch mnist");
    let tt = load_idx_set("mnist", &cache_dir_from_env()).expect("load mnist");
    let x = tt.train.x.slice(s![..a.n, ..]).mapv(|v| v / 255.0);
    let y: Array1<f64> = tt.train.labels[..a.n].iter().map(|&l| l as f64).collect();
    let xt = tt.test.x.slice(s![..a.n_test, ..]).mapv(|v| v / 255.0);
    let yt: Array1<f64> = tt.test.labels[..a.n_test]
        .iter()
        .map(|&l| l as f64)
        .collect();
    let (n, d) = x.dim();
    write_npy(a.out.join("x.npy"), &x).expect("write x");
    write_npy(a.out.join("y.npy"), &y).expect("write y");
    write_npy(a.out.join("xt.npy"), &xt).expect("write xt");
    write_npy(a.out.join("yt.npy"), &yt).expect("write yt");
    let xe = x.slice(s![..a.n_err, ..]).to_owned();
    let sig = a.sigma.to_string();

    // --- feature maps through the method registry (the same code `rfx features` runs) ---
    // (name, registry method, params, budget m, GEMM flops of the map's projection for n rows)
    let m = a.m;
    let nf = n as f64;
    let df = d as f64;
    type MapCase<'a> = (&'a str, &'a str, Vec<(&'a str, String)>, usize, f64);
    let maps: Vec<MapCase> = vec![
        (
            "rff",
            "rff",
            vec![("sigma", sig.clone())],
            m,
            2.0 * nf * df * (m / 2) as f64,
        ),
        (
            "arccos1",
            "arccos",
            vec![("order", "1".into())],
            m,
            2.0 * nf * df * m as f64,
        ),
        (
            "gegenbauer",
            "gegenbauer",
            vec![("sigma", sig.clone())],
            m,
            2.0 * nf * df * (m / 4) as f64,
        ),
        (
            "ntk-rf",
            "ntk-rf",
            vec![("depth", "1".into())],
            m,
            // m0 = m1 = m/2 (sketch_share 0.5): m/2 Step and m/2 ReLU directions, drawn separately
            2.0 * nf * df * m as f64,
        ),
        (
            "nystrom-rls",
            "nystrom",
            vec![("sigma", sig.clone())],
            a.m_nys,
            2.0 * nf * df * a.m_nys as f64 + 2.0 * nf * (a.m_nys as f64).powi(2),
        ),
    ];
    // each map timed on f64 rows (fit + `transform`, fraction of the DGEMM rate) and, if it has a native f32
    // path (`FeatureMap::native_f32`), again on f32 rows as "<label>-f32" (fit + `transform_f32`, fraction
    // of the SGEMM rate)
    let x32 = x.mapv(|v| v as f32);
    for (label, method, params, mm, flops) in &maps {
        let label32 = format!("{label}-f32");
        if !want(label) && !want(&label32) {
            continue;
        }
        let spec = methods::method(method).expect("registered method");
        let given: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let p = spec.parse_params(&given).expect("params");
        let fit_rows = spec.data_dependent.then_some(x.view());
        let fit = || {
            let mut rng = rng_stream(0, &format!("perf;{label}"));
            let data = fit_rows.map_or(FitData::Dim(d), FitData::Rows);
            spec.fit(*mm, &p, data, &mut rng).expect("fit")
        };
        for f32_rows in [false, true] {
            let (name, precision, rate, anchor) = if f32_rows {
                (label32.as_str(), "f32", sgemm_rate, "SGEMM")
            } else {
                (*label, "f64", gemm_rate, "DGEMM")
            };
            // an f32 output that is the f64 one rounded has nothing of its own to time
            if !want(name) || (f32_rows && !fit().native_f32()) {
                continue;
            }
            let (t, dim) = time_median(a.reps, || {
                let map = fit();
                if f32_rows {
                    map.transform_f32(x32.view()).expect("transform").ncols()
                } else {
                    map.transform(x.view()).expect("transform").ncols()
                }
            });
            let load = loadavg();
            eprintln!(
                "{name}: m = {mm} -> {dim}, {t:.3} s, {:.0} rows/s, {anchor} fraction {:.2} (load {load})",
                nf / t,
                flops / t / rate
            );
            results.push(json!({
                "name": name, "kind": "map", "precision": precision, "n": n, "d": d, "m": mm,
                "out_dim": dim, "seconds": t, "rows_per_s": nf / t, "gemm_flops": flops,
                "gemm_fraction": flops / t / rate, "load": load,
            }));
        }
    }
    drop(x32);

    // --- the three maps of the side-by-side comparison: Grams on the error rows, per seed ---
    let gamma = 1.0 / (2.0 * a.sigma * a.sigma);
    // polynomial kernel (gamma <x,y> + c)^2, as scikit-learn's PolynomialCountSketch: TensorSketch of
    // [sqrt(gamma) x, sqrt(c)]
    let (poly_gamma, poly_c) = (1.0 / d as f64, 1.0f64);
    let augment =
        |x: &Array2<f64>| rfx_core::append_bias((x * poly_gamma.sqrt()).view(), poly_c.sqrt());
    type FitFn<'a> = Box<dyn Fn(u64) -> Box<dyn FeatureMap> + 'a>;
    let rff_spec = methods::method("rff").expect("rff");
    let rff_p = rff_spec
        .parse_params(&[("sigma".into(), sig.clone())])
        .expect("params");
    let xv = x.view();
    let compared: Vec<(&str, usize, FitFn, bool)> = vec![
        (
            "cmp-rff",
            m,
            Box::new(|seed| {
                let mut rng = rng_stream(seed, "perf;rff");
                rff_spec
                    .fit(m, &rff_p, FitData::Dim(d), &mut rng)
                    .expect("fit")
            }),
            false,
        ),
        (
            "cmp-nystrom",
            a.m_nys,
            Box::new(|seed| {
                let mut rng = rng_stream(seed, "perf;nystrom");
                let params = NystromParams::new(a.m_nys).sampling(LandmarkSampling::Uniform);
                Box::new(
                    Nystrom::fit(
                        Gzk::gaussian(a.sigma).expect("kernel"),
                        xv,
                        &params,
                        &mut rng,
                    )
                    .expect("fit"),
                )
            }),
            false,
        ),
        (
            "cmp-tensorsketch",
            m,
            Box::new(|seed| {
                let mut rng = rng_stream(seed, "perf;tensorsketch");
                Box::new(
                    TensorSketch::params()
                        .dim(m)
                        .degree(2)
                        .fit(d + 1, &mut rng)
                        .expect("fit"),
                )
            }),
            true,
        ),
    ];
    for (label, mm, fit, poly) in &compared {
        if !want(label) {
            continue;
        }
        let (t, dim) = time_median(a.reps, || {
            let map = fit(0);
            let z = if *poly {
                map.transform(augment(&x).view())
            } else {
                map.transform(x.view())
            }
            .expect("transform");
            z.ncols()
        });
        let load = loadavg();
        eprintln!(
            "{label}: m = {mm} -> {dim}, {t:.3} s, {:.0} rows/s (load {load})",
            nf / t
        );
        for seed in 0..a.seeds {
            let map = fit(seed);
            let z = if *poly {
                map.transform(augment(&xe).view())
            } else {
                map.transform(xe.view())
            }
            .expect("transform");
            write_npy(
                a.out.join(format!("gram_{label}_s{seed}.npy")),
                &z.dot(&z.t()),
            )
            .expect("write gram");
        }
        results.push(json!({
            "name": label, "kind": "compare-map", "n": n, "d": d, "m": mm, "out_dim": dim,
            "seconds": t, "rows_per_s": nf / t, "load": load,
            "sigma": a.sigma, "gamma": gamma, "poly_gamma": poly_gamma, "poly_c": poly_c,
        }));
    }

    // --- ridge on RFF features (primal Cholesky), same Z for both libraries ---
    if want("ridge") {
        let mut rng = rng_stream(0, "perf;ridge-features");
        let map = rff_spec
            .fit(a.m_ridge, &rff_p, FitData::Dim(d), &mut rng)
            .expect("fit");
        let z = map.transform(x.view()).expect("transform");
        let zt = map.transform(xt.view()).expect("transform");
        write_npy(a.out.join("ridge_z.npy"), &z).expect("write z");
        write_npy(a.out.join("ridge_zt.npy"), &zt).expect("write zt");
        let yv = y.view().insert_axis(Axis(1));
        for (tag, prec) in [("", Precision::F64), ("-mixed", Precision::MixedF32)] {
            let params = RidgeParams::new(a.lambda).precision(prec);
            let (t, model) =
                time_median(a.reps, || Ridge::fit(z.view(), yv, &params).expect("ridge"));
            let load = loadavg();
            let pred = model
                .predict(zt.view())
                .expect("predict")
                .column(0)
                .to_owned();
            write_npy(a.out.join(format!("ridge{tag}_pred.npy")), &pred).expect("write pred");
            let mf = a.m_ridge as f64;
            let flops = nf * mf * mf + mf.powi(3) / 3.0;
            eprintln!(
                "ridge{tag}: n = {n}, m = {}, {t:.3} s, {:.0} rows/s (load {load})",
                a.m_ridge,
                nf / t
            );
            results.push(json!({
                "name": format!("ridge{tag}"), "kind": "solver", "n": n, "m": a.m_ridge,
                "lambda": a.lambda, "seconds": t, "rows_per_s": nf / t, "gemm_flops": flops,
                "gemm_fraction": flops / t / gemm_rate, "load": load,
            }));
        }
    }

    // --- exact Gaussian KRR (Gram + Cholesky) on the first n_krr rows ---
    if want("krr") {
        let nk = a.n_krr;
        let xk = x.slice(s![..nk, ..]);
        let yk = y.slice(s![..nk]).insert_axis(Axis(1)).to_owned();
        let kernel = Gzk::gaussian(a.sigma).expect("kernel");
        for (tag, prec) in [("", Precision::F64), ("-mixed", Precision::MixedF32)] {
            let params = KrrParams::new(a.lambda).precision(prec);
            let (t, model) = time_median(a.reps, || {
                KernelRidge::fit_kernel(&kernel, xk, yk.view(), &params).expect("krr")
            });
            let load = loadavg();
            let pred = model
                .predict_kernel(&kernel, xt.view())
                .expect("predict")
                .column(0)
                .to_owned();
            write_npy(a.out.join(format!("krr{tag}_pred.npy")), &pred).expect("write pred");
            let nkf = nk as f64;
            let flops = 2.0 * nkf * nkf * df + nkf.powi(3) / 3.0;
            eprintln!("krr{tag}: n = {nk}, {t:.3} s (load {load})");
            results.push(json!({
                "name": format!("krr{tag}"), "kind": "solver", "n": nk, "lambda": a.lambda,
                "sigma": a.sigma, "seconds": t, "rows_per_s": nkf / t, "gemm_flops": flops,
                "gemm_fraction": flops / t / gemm_rate, "load": load,
            }));
        }
    }

    // --- timing breakdown of exact KRR (the profile behind the KRR row) ---
    if want("krr-parts") {
        use rfx_core::Kernel;
        use rfx_linalg::{add_diag, Cholesky, CholeskyF32};
        let nk = a.n_krr;
        let xk = x.slice(s![..nk, ..]);
        let kernel = Gzk::gaussian(a.sigma).expect("kernel");
        let (t_sym, k) = time_median(a.reps, || kernel.gram(xk, xk).expect("gram"));
        let xk2 = xk.to_owned();
        let (t_gen, _) = time_median(a.reps, || kernel.gram(xk, xk2.view()).expect("gram"));
        let mut kl = k.clone();
        add_diag(&mut kl, a.lambda);
        let (t_f64, _) = time_median(a.reps, || Cholesky::factor(kl.clone()).expect("chol"));
        let (t_f32, _) = time_median(a.reps, || CholeskyF32::factor_f64(kl.view()).expect("chol"));
        let yk = y.slice(s![..nk]).insert_axis(Axis(1)).to_owned();
        let (t_mv, _) = time_median(a.reps, || kl.dot(&yk));
        let load = loadavg();
        eprintln!(
            "krr parts, n = {nk}: gram (syrk, symmetric) {t_sym:.3} s, gram (GEMM, general) {t_gen:.3} s, \
             dpotrf {t_f64:.3} s, f32 Cholesky (faer, incl. f32 copy) {t_f32:.3} s, one K*y {t_mv:.4} s (load {load})"
        );
        results.push(json!({
            "name": "krr-parts", "kind": "profile", "n": nk, "gram_syrk_s": t_sym, "gram_gemm_s": t_gen,
            "dpotrf_s": t_f64, "spotrf_s": t_f32, "matvec_s": t_mv, "load": load,
        }));
    }

    // --- ternary popcount Gram vs the f64 GEMM Gram of the same codes ---
    if want("trf-gram") {
        let (nt, pt, mt) = (2000, 784, 8192);
        let xr = gaussian(nt, pt, "perf;trf-x") / (pt as f64).sqrt();
        let th = Thresholds::new(-1.375, -0.539, 1.0).expect("thresholds");
        let f = TernaryParams::new(mt)
            .sparsity(0.5)
            .fit(pt, th, &mut rng_stream(0, "perf;trf"))
            .expect("trf");
        let codes = f.transform_packed(xr.view()).expect("codes");
        let dense = codes.unpack();
        let (t_pop, gp) = time_median(a.reps, || codes.gram());
        let (t_gemm, gd) = time_median(a.reps, || dense.dot(&dense.t()));
        let same = gp.iter().zip(gd.iter()).all(|(&i, &v)| i as f64 == v);
        let load = loadavg();
        eprintln!(
            "trf gram: n = {nt}, m = {mt}: popcount {t_pop:.3} s, f64 GEMM {t_gemm:.3} s, {:.1}x, \
             identical {same} (load {load})",
            t_gemm / t_pop
        );
        results.push(json!({
            "name": "trf-gram", "kind": "trf", "n": nt, "m": mt,
            "popcount_seconds": t_pop, "gemm_seconds": t_gemm, "speedup": t_gemm / t_pop,
            "code_bytes": codes.bytes(), "dense_bytes": dense.len() * 8, "identical": same,
            "load": load,
        }));
    }

    let doc = json!({
        "dgemm": {"n": a.d_gemm, "seconds": t_gemm, "gflops": gemm_rate / 1e9},
        "sgemm": {"n": a.d_gemm, "seconds": t_sgemm, "gflops": sgemm_rate / 1e9},
        "load_start": load_start, "load_end": loadavg(),
        "reps": a.reps, "seeds": a.seeds, "n_err": a.n_err,
        "results": results,
    });
    std::fs::write(
        a.out.join("rfx.json"),
        serde_json::to_string_pretty(&doc).expect("json"),
    )
    .expect("write rfx.json");
}
