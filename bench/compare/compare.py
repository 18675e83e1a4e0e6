#!/usr/bin/env python3
"""rfx against scikit-learn, side by side in one run (issue 10).

Driven by bench/compare/run.sh (which creates the virtual environment). For each pair this script first runs
`rfx-perf --only NAME` (the rfx timing, in process, on data rfx wrote) and then, right after, times the
scikit-learn counterpart in this process on the same .npy files, so that both sides of a ratio are measured
under the same machine load. Both sides time the same work: fit + transform of all rows for feature maps, fit
for the solvers; neither includes process start or file I/O; each is the median of --reps runs.

Errors: both libraries' approximate Grams Z Z^T of the first n_err rows (one per seed) are compared with the
exact kernel by the same numpy code (relative Frobenius error); the two means are "equal within Monte Carlo
noise" when they differ by less than 3 standard errors of the difference. Ridge and KRR solve the same
problem, so their test predictions are compared directly.

Writes results/performance.md (all numbers in it come from this run, except the full `make reproduce` time,
which is estimated from the per-cell times in results/*/cells.csv as stated there).
"""

import argparse
import csv
import datetime
import glob
import json
import os
import platform
import subprocess
import sys
import time
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import report_section  # noqa: E402  (bench/python/report_section.py)

import numpy as np
import sklearn
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge


def median_time(reps, f):
    times, out = [], None
    for _ in range(max(reps, 1)):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2], out


def rel_fro(approx, exact):
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def sq_dists(a):
    n2 = (a * a).sum(1)
    return np.maximum(n2[:, None] + n2[None, :] - 2 * a @ a.T, 0.0)


def rfx_env():
    """rfx's environment: this process's, with the machine's OPENBLAS_CORETYPE put back (run.sh removes it
    for numpy and scikit-learn and passes it as RFX_BENCH_RFX_CORETYPE)."""
    env = dict(os.environ)
    core = os.environ.get("RFX_BENCH_RFX_CORETYPE", "")
    if core:
        env["OPENBLAS_CORETYPE"] = core
    return env


def environments():
    """What each side ran under, for the report."""
    core = os.environ.get("RFX_BENCH_RFX_CORETYPE", "")
    return dict(rfx=f"OPENBLAS_CORETYPE={core}" if core else "OPENBLAS_CORETYPE unset",
                python="OPENBLAS_CORETYPE=" + os.environ["OPENBLAS_CORETYPE"]
                if "OPENBLAS_CORETYPE" in os.environ else "OPENBLAS_CORETYPE unset")


class Run:
    def __init__(self, args):
        self.a = args
        self.out = args.work
        os.makedirs(self.out, exist_ok=True)

    def rfx(self, only):
        cmd = [
            self.a.rfx_perf, "--out", self.out, "--only", only, "--reps", str(self.a.reps),
            "--n", str(self.a.n), "--n-err", str(self.a.n_err), "--n-krr", str(self.a.n_krr),
            "--seeds", str(self.a.seeds), "--gemm-n", str(self.a.gemm_n),
        ]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env=rfx_env())
        with open(os.path.join(self.out, "rfx.json")) as f:
            return json.load(f)

    def npy(self, name):
        return np.load(os.path.join(self.out, name))


def kept_sections(path):
    """The sections that other scripts own in the existing report (bench/python/report_section.py: the
    rfxpy and JAX side-by-side runs), kept as they were; empty without a report."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return report_section.sections(f.read())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rfx-perf", required=True, help="path of the rfx-perf binary (release)")
    p.add_argument("--work", default="/tmp/rfx-compare", help="directory for the shared .npy files")
    p.add_argument("--results", default="results/performance.md")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--n-err", type=int, default=1000)
    p.add_argument("--n-krr", type=int, default=5000)
    p.add_argument("--gemm-n", type=int, default=4096)
    p.add_argument("--quick-log", help="file with the line 'wall=SECONDS' of a timed `rfx run --quick`")
    p.add_argument("--criterion-log", help="output of the criterion benchmarks of this run (summarised)")
    p.add_argument("--render-only", action="store_true",
                   help="rewrite the report from the measurements saved by the last run (WORK/report.json), "
                        "e.g. after editing bench/compare/notes.md; measures nothing")
    args = p.parse_args()
    saved = os.path.join(args.work, "report.json")
    if args.render_only:
        with open(saved) as f:
            R = json.load(f)
        args.__dict__.update(R.pop("args"))
        write_report(args, R)
        return
    run = Run(args)
    t_start = time.time()
    load_start = report_section.loadavg()

    # 1. DGEMM rate (and the data files) -- rfx measures it in process
    gemm_doc = run.rfx("dgemm")
    dg = gemm_doc["dgemm"]
    sgflops = gemm_doc["sgemm"]["gflops"]
    gflops = dg["gflops"]
    # numpy's own DGEMM on the same shape, for reference (numpy wheels bundle their own OpenBLAS)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((args.gemm_n, args.gemm_n))
    B = rng.standard_normal((args.gemm_n, args.gemm_n))
    A @ B
    t_np, _ = median_time(args.reps, lambda: A @ B)
    np_gflops = 2 * args.gemm_n ** 3 / t_np / 1e9
    A, B = A.astype(np.float32), B.astype(np.float32)
    A @ B
    t_np32, _ = median_time(args.reps, lambda: A @ B)
    np_sgflops = 2 * args.gemm_n ** 3 / t_np32 / 1e9
    del A, B
    print(f"DGEMM rfx {gflops:.1f} GFLOP/s, numpy {np_gflops:.1f} GFLOP/s; SGEMM rfx {sgflops:.1f}, "
          f"numpy {np_sgflops:.1f} (load {report_section.loadavg()})", flush=True)

    X = run.npy("x.npy")
    y = run.npy("y.npy")
    Xt = run.npy("xt.npy")
    yt = run.npy("yt.npy")
    Xe = X[: args.n_err]

    # 2. GEMM-shaped maps: fraction of the DGEMM rate
    gemm_maps = []
    for name in ["rff", "arccos1", "gegenbauer", "ntk-rf", "rff-f32", "arccos1-f32", "ntk-rf-f32"]:
        r = run.rfx(name)["results"][0]
        # fraction of the DGEMM (f64 maps) or SGEMM (f32 maps) rate measured at the start of this run
        rate = sgflops if r.get("precision") == "f32" else gflops
        r["gemm_fraction_run"] = r["gemm_flops"] / r["seconds"] / (rate * 1e9)
        gemm_maps.append(r)

    # 3. pairs
    pairs = []
    m = 4096

    def map_pair(label, rfx_name, sk_name, make, exact_kernel):
        r = run.rfx(rfx_name)["results"][0]
        load_sk = report_section.loadavg()
        t_sk, _ = median_time(args.reps, lambda: make(0).fit(X).transform(X))
        K = exact_kernel(Xe)
        e_rfx = [rel_fro(run.npy(f"gram_{rfx_name}_s{s}.npy"), K) for s in range(args.seeds)]
        e_sk = []
        for s in range(args.seeds):
            Z = make(s).fit(X).transform(Xe)
            e_sk.append(rel_fro(Z @ Z.T, K))
        pairs.append(dict(label=label, rfx=r["name"], sk=sk_name, t_rfx=r["seconds"], t_sk=t_sk,
                          load_rfx=r["load"], load_sk=load_sk, e_rfx=e_rfx, e_sk=e_sk,
                          m=r["m"], n=r["n"]))
        print(f"{label}: rfx {r['seconds']:.3f} s, sklearn {t_sk:.3f} s, ratio {r['seconds'] / t_sk:.2f}; "
              f"error rfx {np.mean(e_rfx):.4f} sklearn {np.mean(e_sk):.4f}", flush=True)

    sigma = 5.0
    gamma = 1.0 / (2 * sigma * sigma)
    d = X.shape[1]
    pg, pc = 1.0 / d, 1.0
    rbf = lambda A: np.exp(-gamma * sq_dists(A))  # noqa: E731
    poly = lambda A: (pg * (A @ A.T) + pc) ** 2  # noqa: E731
    map_pair("RFF (m = 4096)", "cmp-rff", "RBFSampler",
             lambda s: RBFSampler(gamma=gamma, n_components=m, random_state=s), rbf)
    map_pair("Nyström (m = 1024, uniform landmarks)", "cmp-nystrom", "Nystroem",
             lambda s: Nystroem(kernel="rbf", gamma=gamma, n_components=1024, random_state=s), rbf)
    map_pair("TensorSketch (degree 2, m = 4096)", "cmp-tensorsketch", "PolynomialCountSketch",
             lambda s: PolynomialCountSketch(degree=2, gamma=pg, coef0=pc, n_components=m, random_state=s),
             poly)

    # ridge on the same RFF features
    rs = run.rfx("ridge")["results"]
    Z, Zt, lam = run.npy("ridge_z.npy"), run.npy("ridge_zt.npy"), rs[0]["lambda"]
    load_sk = report_section.loadavg()
    t_sk, model = median_time(args.reps,
                              lambda: Ridge(alpha=lam, fit_intercept=False, solver="cholesky").fit(Z, y))
    p_sk = model.predict(Zt)
    for r, tag, what in [(rs[0], "", "f64"), (rs[1], "-mixed", "f32 Gram + factor, refined; option")]:
        p_rfx = run.npy(f"ridge{tag}_pred.npy")
        pairs.append(dict(label=f"ridge (n = {r['n']}, m = {r['m']}, {what})", rfx="Ridge::fit", sk="Ridge",
                          t_rfx=r["seconds"], t_sk=t_sk, load_rfx=r["load"], load_sk=load_sk,
                          mse_rfx=float(np.mean((p_rfx - yt) ** 2)), mse_sk=float(np.mean((p_sk - yt) ** 2)),
                          pred_diff=float(np.max(np.abs(p_rfx - p_sk)) / np.max(np.abs(p_sk)))))
    del Z, Zt
    # exact Gaussian KRR
    rs = run.rfx("krr")["results"]
    nk = rs[0]["n"]
    load_sk = report_section.loadavg()
    t_sk, model = median_time(args.reps,
                              lambda: KernelRidge(alpha=lam, kernel="rbf", gamma=gamma).fit(X[:nk], y[:nk]))
    p_sk = model.predict(Xt)
    for r, tag, what in [(rs[0], "", "f64"), (rs[1], "-mixed", "f32 factor, refined; option")]:
        p_rfx = run.npy(f"krr{tag}_pred.npy")
        pairs.append(dict(label=f"exact KRR (Gaussian, n = {nk}, {what})", rfx="KernelRidge::fit_kernel",
                          sk="KernelRidge", t_rfx=r["seconds"], t_sk=t_sk, load_rfx=r["load"],
                          load_sk=load_sk, mse_rfx=float(np.mean((p_rfx - yt) ** 2)),
                          mse_sk=float(np.mean((p_sk - yt) ** 2)),
                          pred_diff=float(np.max(np.abs(p_rfx - p_sk)) / np.max(np.abs(p_sk)))))
    for q in pairs[-4:]:
        print(f"{q['label']}: rfx {q['t_rfx']:.3f} s, sklearn {q['t_sk']:.3f} s, "
              f"ratio {q['t_rfx'] / q['t_sk']:.2f}; max rel prediction difference {q['pred_diff']:.2e}",
              flush=True)

    # 4. ternary popcount Gram
    trf = run.rfx("trf-gram")["results"][0]
    # 5. other rfx maps (rows/s only) and the KRR timing breakdown
    others = [run.rfx(nm)["results"][0] for nm in ["nystrom-rls"]]
    krr_parts = run.rfx("krr-parts")["results"][0]

    # 6. make reproduce wall times: per experiment the committed manifest and the per-cell wall times of
    # results/*/cells.csv (every cell, computed in whichever run; resumed runs keep them)
    manifests = []
    for path in sorted(glob.glob("results/*/manifest.json")):
        with open(path) as f:
            mf = json.load(f)
        d = os.path.dirname(path)
        cell_s, ncells = 0.0, 0
        with open(os.path.join(d, "cells.csv")) as f:
            for row in csv.DictReader(f):
                ncells += 1
                cell_s += float(row.get("time_s") or 0.0)
        with open(os.path.join(d, "config.toml"), "rb") as f:
            parallel = tomllib.load(f).get("experiment", {}).get("parallel_cells", True)
        # `make reproduce` runs `rfx run` with its default, one worker per CPU
        threads = os.cpu_count() or 1
        manifests.append(dict(exp=mf["experiment"], wall=mf["wall_time_s"], computed=mf["cells_computed"],
                              reused=mf["cells_reused"], total=mf["cells_total"], threads=mf.get("threads"),
                              cells=ncells, cell_s=cell_s, parallel=parallel,
                              est=cell_s / (threads if parallel else 1)))
    quick = None
    if args.quick_log and os.path.exists(args.quick_log):
        with open(args.quick_log) as f:
            for line in f:
                if line.startswith("wall="):
                    quick = dict(zip(["wall", "load_before", "load_after"],
                                     line.strip().split(" ", 2)))
    crit = None
    if args.criterion_log and os.path.exists(args.criterion_log):
        keep = []
        with open(args.criterion_log) as f:
            for line in f:
                t = line.rstrip()
                if not t or t.startswith(("Benchmarking", "Found", "Warning", "Gnuplot", "WARNING", "Running",
                                          "Compiling", "Finished", "Downloaded", "Downloading", "running",
                                          "test ", "Executable")):
                    continue
                if t.startswith("[") or "time:" in t or "thrpt:" in t or not t.startswith(" "):
                    keep.append(t)
        crit = "\n".join(keep)

    R = dict(env=environments(), gflops=gflops, np_gflops=np_gflops, sgflops=sgflops, np_sgflops=np_sgflops,
             gemm_n=args.gemm_n, gemm_load=load_start,
                            gemm_maps=gemm_maps, pairs=pairs, trf=trf, others=others, manifests=manifests,
                            quick=quick, crit=crit, load_start=load_start, load_end=report_section.loadavg(),
                            wall=time.time() - t_start, krr_parts=krr_parts)
    R["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    R["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
    R["dirty"] = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                text=True).stdout.strip() != ""
    R["args"] = {k: getattr(args, k) for k in ["n", "n_err", "n_krr", "reps", "seeds", "gemm_n"]}
    with open(saved, "w") as f:
        json.dump(R, f)
    R.pop("args")
    write_report(args, R)


def verdict_err(e_r, e_s):
    mr, ms = np.mean(e_r), np.mean(e_s)
    se = np.sqrt(np.var(e_r, ddof=1) / len(e_r) + np.var(e_s, ddof=1) / len(e_s))
    if abs(mr - ms) <= 3 * se:
        return "equal within noise"
    return "rfx lower" if mr < ms else "**rfx higher**"


def write_report(args, R):
    L = []
    w = L.append
    now, commit, dirty = R["date"], R["commit"], R["dirty"]
    w("# Performance: rfx against scikit-learn (issues 10 and 26)\n")
    w(f"Written by `bench/compare/run.sh` (`make bench`) on {now}, rfx commit `{commit}`"
      f"{' (dirty tree)' if dirty else ''}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
      f"Python {platform.python_version()}, {os.cpu_count()} CPUs of an {report_section.cpu_description()}. Every number below comes from this one run "
      f"(wall time {R['wall']:.0f} s; load average at start {R['load_start']}, at end {R['load_end']}), "
      f"except the full `make reproduce` time, which is estimated from the per-cell times in "
      f"`results/*/cells.csv` as stated, and the sections that `bench/python` scripts write (rfxpy and "
      f"neural-tangents side by side), which are separate runs and state their own date, commit and machine.\n")
    w("**The machine is shared** (2 cores, three users); the 1/5/15-minute load average is printed next to "
      "every timing. A load above ~1 before our process starts means another user's job was competing for "
      "the cores, which slows both libraries (each ratio's two sides are measured one right after the other).\n")
    env = R.get("env", {})
    w(f"Environments (issue 26: each library as it runs best on this machine): rfx (`rfx-perf`, linked to the "
      f"system OpenBLAS) with {env.get('rfx', 'the machine environment')}, which that OpenBLAS needs on this CPU; "
      f"numpy and scikit-learn (numpy's bundled OpenBLAS) with {env.get('python', 'the machine environment')}, "
      f"so that their anchor is not slowed by rfx's override.\n")
    w("How timings are taken: in process on both sides (rfx: the `rfx-perf` binary, release build; "
      "scikit-learn: this script), median of "
      f"{args.reps} runs; feature maps time fit + transform of all n rows, solvers time the fit; no process "
      "start or file I/O is included. Data: the first n MNIST training rows (pixels / 255, d = 784) and the "
      "digit label as a real target, written as `.npy` by rfx and read by both.\n")

    w("Sizes: GEMM-shaped maps and the RFF / TensorSketch pairs at n = {}, d = 784, m = 4096; Nyström "
      "m = 1024; ridge on {} RFF features of the same n rows; exact KRR on the first {} rows. rfx runs its "
      "default settings unless a row says otherwise.\n".format(args.n, 2048, args.n_krr))
    w("## DGEMM rate of this machine\n")
    w(f"| | GFLOP/s | load |\n|---|---|---|")
    w(f"| rfx DGEMM (ndarray `.dot` → OpenBLAS, {R['gemm_n']}², all threads) | {R['gflops']:.1f} | {R['gemm_load']} |")
    w(f"| numpy DGEMM `A @ B` (same shape, numpy's bundled OpenBLAS, {env.get('python', '')}) | {R['np_gflops']:.1f} | |")
    if "sgflops" in R:
        w(f"| rfx SGEMM (the same in float32) | {R['sgflops']:.1f} | |")
        w(f"| numpy SGEMM (the same in float32) | {R['np_sgflops']:.1f} | |")
    w("")

    w(f"## GEMM-shaped feature maps at n = {args.n}, d = 784, m = 4096 (goal: ≥ 0.85 of rfx's own GEMM rate, DGEMM for f64 and SGEMM for f32, issue 26)\n")
    w("Fraction = (flops of the map's projection GEMM) / (time of the whole fit + transform) / (the DGEMM "
      "rate above); the time includes everything else the map does (drawing W, the nonlinearity, allocation), "
      "so 1.0 would mean the map costs no more than its GEMM at the machine's DGEMM rate.\n")
    w("Rows marked f32 take float32 rows and return float32 features (`FeatureMap::transform_f32`: the "
      "projection GEMM in f32); their fraction is of rfx's SGEMM rate.\n")
    w("| map | precision | projection GEMM | time (s) | rows/s | GFLOP/s | fraction of DGEMM / SGEMM | goal met | load |")
    w("|---|---|---|---|---|---|---|---|---|")
    shapes = {"rff": "n×d·d×m/2 (paired cos/sin)", "arccos1": "n×d·d×m", "gegenbauer": "n×d·d×m/4 (s = 4 radial terms)",
              "ntk-rf": "n×d·d×m (m₀ = m₁ = m/2 Step + ReLU, depth 1)"}
    for r in R["gemm_maps"]:
        f = r["gemm_fraction_run"]
        base = r["name"].removesuffix("-f32")
        w(f"| {base} | {r.get('precision', 'f64')} | {shapes.get(base, '')} | {r['seconds']:.3f} | {r['rows_per_s']:.0f} | "
          f"{r['gemm_flops'] / r['seconds'] / 1e9:.1f} | {f:.2f} | {'yes' if f >= 0.85 else 'no'} | {r['load']} |")
    w("")

    w("## rfx / scikit-learn time ratios (goal: ≤ 0.33 with equal error, issue 26; issue 10 asked ≤ 0.5)\n")
    w("| task | rfx | scikit-learn | rfx (s) | sklearn (s) | ratio rfx/sklearn | goal met | load rfx / sklearn |")
    w("|---|---|---|---|---|---|---|---|")
    for q in R["pairs"]:
        ratio = q["t_rfx"] / q["t_sk"]
        w(f"| {q['label']} | {q['rfx']} | {q['sk']} | {q['t_rfx']:.3f} | {q['t_sk']:.3f} | {ratio:.2f} | "
          f"{'yes' if ratio <= 0.33 else 'no'} | {q['load_rfx']} / {q['load_sk']} |")
    w("")
    w(f"Kernel approximation error ‖K − ZZᵀ‖_F / ‖K‖_F on the first {args.n_err} rows, mean ± sd over "
      f"{args.seeds} seeds (Gaussian σ = 5, i.e. γ = 0.02; polynomial (⟨x, y⟩/784 + 1)²):\n")
    w("| map | rfx | scikit-learn | verdict (3 standard errors) |\n|---|---|---|---|")
    for q in R["pairs"]:
        if "e_rfx" in q:
            w(f"| {q['label']} | {np.mean(q['e_rfx']):.4f} ± {np.std(q['e_rfx'], ddof=1):.4f} | "
              f"{np.mean(q['e_sk']):.4f} ± {np.std(q['e_sk'], ddof=1):.4f} | {verdict_err(q['e_rfx'], q['e_sk'])} |")
    w("")
    w("Solvers (same problem on both sides, λ = 1: (ZᵀZ + λI)w = Zᵀy and (K + λI)α = y), test rows = "
      "first 2000 MNIST test images:\n")
    w("| solver | test MSE rfx | test MSE sklearn | max |Δ prediction| / max |prediction| |\n|---|---|---|---|")
    for q in R["pairs"]:
        if "mse_rfx" in q:
            w(f"| {q['label']} | {q['mse_rfx']:.6f} | {q['mse_sk']:.6f} | {q['pred_diff']:.1e} |")
    w("")
    w("Note on RFF: rfx's `rff` is the paired map [cos Wx, sin Wx]/√(m/2) (m/2 frequencies), scikit-learn's "
      "RBFSampler is √(2/m) cos(Wx + b) with m frequencies; at the same output width m rfx does half the GEMM "
      "and its estimator has lower variance.\n")

    t = R["trf"]
    sp = t["speedup"]
    w("## Ternary random features: popcount Gram vs f64 GEMM Gram (goal: ≥ 4× faster at 1/32 of the memory)\n")
    w("| n | m | popcount Gram (s) | f64 GEMM Gram (s) | speedup | code bytes | dense f64 bytes | memory ratio "
      "| Grams identical | goal met | load |\n|---|---|---|---|---|---|---|---|---|---|---|")
    w(f"| {t['n']} | {t['m']} | {t['popcount_seconds']:.3f} | {t['gemm_seconds']:.3f} | {sp:.1f}× | "
      f"{t['code_bytes']} | {t['dense_bytes']} | 1/{t['dense_bytes'] / t['code_bytes']:.0f} | {t['identical']} | "
      f"{'yes' if sp >= 4 and t['dense_bytes'] / t['code_bytes'] >= 32 else 'no'} | {t['load']} |\n")

    w("## Other rfx maps (rows per second)\n")
    w("| map | n | m | time (s) | rows/s | load |\n|---|---|---|---|---|---|")
    for r in R["others"]:
        w(f"| {r['name']} | {r['n']} | {r['m']} | {r['seconds']:.3f} | {r['rows_per_s']:.0f} | {r['load']} |")
    w("")

    kp = R["krr_parts"]
    w(f"## Profile: exact KRR at n = {kp['n']} by parts (load {kp['load']})\n")
    w("| part | seconds |\n|---|---|")
    w(f"| Gaussian Gram K(X, X), symmetric path (dsyrk, upper triangle, mirrored) | {kp['gram_syrk_s']:.3f} |")
    w(f"| Gaussian Gram K(X, X′) with X′ a copy (general path: GEMM) | {kp['gram_gemm_s']:.3f} |")
    w(f"| Cholesky dpotrf (f64) | {kp['dpotrf_s']:.3f} |")
    w(f"| Cholesky in f32 (faer, one thread; with the f64 → f32 copy) | {kp['spotrf_s']:.3f} |")
    w(f"| one product K·y (each refinement step does one) | {kp['matvec_s']:.4f} |\n")

    w("## `make reproduce` wall time\n")
    q = R["quick"]
    if q:
        # the log line is "wall=SECONDS <3 load averages before> <3 after>"
        loads = (q.get("load_before", "") + " " + q.get("load_after", "")).split()
        w(f"**Quick** (`rfx run --quick` of every experiment with the release binary, timed by `run.sh` in this "
          f"run, data already fetched): **{float(q['wall'].split('=')[1]):.0f} s** (load before: "
          f"{' '.join(loads[:3])}; after: {' '.join(loads[3:6])}).\n")
    else:
        w("Quick: not timed in this run (set `RFX_BENCH_QUICK=1`).\n")
    est = sum(m["est"] for m in R["manifests"])
    w(f"**Full**: not run end to end here (hours). Every cell's wall time is kept in `results/*/cells.csv` "
      f"(whichever run computed it; resumed runs keep the times of reused cells), so the full time is "
      f"estimated from those: per experiment the sum of its cell times, divided by the {os.cpu_count()} "
      f"workers of `rfx run` (one per CPU) when cells run in parallel (`parallel_cells`, default), taken "
      f"whole when cells run one at a time. **Estimate: {est / 3600:.1f} h** on "
      f"this machine (cells timed under whatever load there was when each ran; the manifests' own wall "
      f"times are those of each experiment's last invocation, often a resumption that computed nothing, and "
      f"are listed only for reference). Per experiment:\n")
    w("| experiment | cells | sum of cell times (s) | cells in parallel | estimated wall (s) | last invocation: "
      "wall (s), cells computed / reused | its threads |\n|---|---|---|---|---|---|---|")
    for m in R["manifests"]:
        w(f"| {m['exp']} | {m['cells']} | {m['cell_s']:.0f} | {'yes' if m['parallel'] else 'no'} | "
          f"{m['est']:.0f} | {m['wall']:.0f}, {m['computed']} / {m['reused']} | {m['threads']} |")
    w(f"| **all** | {sum(m['cells'] for m in R['manifests'])} | "
      f"{sum(m['cell_s'] for m in R['manifests']):.0f} | | **{est:.0f}** | | |")
    w("")
    # the sections of bench/python (rfxpy from Python, neural-tangents/JAX: separate runs) are kept as they were
    for section in kept_sections(args.results):
        w(section)
    if R["crit"]:
        w("## Criterion benchmarks of this run\n")
        w("```")
        w(R["crit"].rstrip())
        w("```\n")
    note = os.environ.get("RFX_PERF_NOTE")
    if note and os.path.exists(note):
        with open(note) as f:
            w(f.read())
    os.makedirs(os.path.dirname(args.results) or ".", exist_ok=True)
    tmp = args.results + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(L) + "\n")
    os.replace(tmp, args.results)
    print(f"wrote {args.results}")


if __name__ == "__main__":
    sys.exit(main())
