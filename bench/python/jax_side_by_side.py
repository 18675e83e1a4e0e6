"""rfx against neural-tangents (JAX, XLA on the CPU) in one Python process (issue 26): the exact ReLU NTK Gram,
and approximate NTK Grams at comparable error — rfx's NTK random features (Han et al. 2021, Algorithm 1) and
neural-tangents' Monte Carlo NTK (the empirical NTK of random finite-width networks; no NTK random-feature
map is in the released neural-tangents). Writes its section of results/performance.md between the markers
below (bench/compare/compare.py keeps the section when it rewrites the file).

    python bench/python/jax_side_by_side.py [--n 5000] [--reps 3]

Needs rfxpy (pip install ./crates/python, release build) and bench/python/jax-requirements.txt in the running
Python (`make bench-jax` makes that venv), and MNIST in $RFX_DATA_DIR/mnist (rfx fetch mnist).

Conventions. rfx's depth-L ReLU NTK is Θ(x, y) = ‖x‖‖y‖K⁽ᴸ⁾(cos θ) with κ₀(1) = κ₁(1) = 1 (Θ(x, x) =
(L + 1)‖x‖²). neural-tangents' Dense layer divides by the fan-in and its ReLU kernels carry Cho & Saul's ½, so
the same kernel is the network Dense(w, W_std=1) → [ReLU → Dense(w, W_std=√2)]^(L−1) → ReLU → Dense(1, W_std=√2),
without biases, in the NTK parameterisation, applied to the rows x·√d. The first table checks that the two
exact Grams agree.
"""

import argparse
import os
import pathlib
import statistics
import time

import numpy as np

# neural-tangents imports TensorFlow (for jax2tf), which logs CUDA probes on a CPU-only machine
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import neural_tangents as nt  # noqa: E402
from jax.experimental import disable_x64, enable_x64  # noqa: E402
from neural_tangents import stax  # noqa: E402

import rfxpy  # noqa: E402
from report_section import loadavg, provenance, write_section  # noqa: E402
from side_by_side import mnist_rows  # noqa: E402

BEGIN = "<!-- jax-side-by-side:begin (bench/python/jax_side_by_side.py) -->"
END = "<!-- jax-side-by-side:end -->"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def network(depth, width):
    """neural-tangents' network whose infinite-width NTK is rfx's depth-`depth` ReLU NTK of the rows x·√d."""
    layers = [stax.Dense(width, W_std=1.0), stax.Relu()]
    for _ in range(depth - 1):
        layers += [stax.Dense(width, W_std=np.sqrt(2.0)), stax.Relu()]
    layers += [stax.Dense(1, W_std=np.sqrt(2.0))]
    return stax.serial(*layers)


def precision(dtype):
    """JAX in float64 (parameters, inputs and kernels) or in float32 throughout."""
    return enable_x64() if dtype == np.float64 else disable_x64()


def timed(f, reps):
    """Median wall time of `reps` calls of f (each result made ready) and the last result."""
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def rel_fro(approx, exact):
    return float(np.linalg.norm(np.asarray(approx, dtype=np.float64) - exact) / np.linalg.norm(exact))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--depths", default="1,2")
    p.add_argument("--dims", default="2048,8192", help="rfx NTK-RF output widths m")
    p.add_argument("--widths", default="256,1024,4096", help="neural-tangents Monte Carlo hidden widths")
    p.add_argument("--results", default=str(ROOT / "results/performance.md"))
    a = p.parse_args()
    x = mnist_rows(a.n)
    n, d = x.shape
    x_nt = x * np.sqrt(d)
    depths = [int(v) for v in a.depths.split(",")]
    dims = [int(v) for v in a.dims.split(",")]
    widths = [int(v) for v in a.widths.split(",")]

    exact_rows, approx_rows = [], []
    for depth in depths:
        # exact Grams: rfx in f64; neural-tangents jit-compiled in f64 and in f32 (compilation is timed apart)
        l0 = loadavg()
        t_rfx, k_rfx = timed(lambda: rfxpy.ntk(x, depth=depth), a.reps)
        # an exact identity to judge the two Grams by: Θ(x, x) = (L + 1)‖x‖²
        diag = (depth + 1) * np.einsum("ij,ij->i", x, x)
        diag_err = lambda k: float(np.max(np.abs(np.diag(k) - diag) / diag))  # noqa: E731
        _, _, kernel_fn = network(depth, 1)
        kfn = jax.jit(kernel_fn, static_argnames="get")
        nt_times = {}
        for dtype in (np.float64, np.float32):
            with precision(dtype):
                xj = jnp.asarray(x_nt, dtype=dtype)
                t0 = time.perf_counter()
                kfn(xj, None, "ntk").block_until_ready()
                compile_s = time.perf_counter() - t0
                t, k_nt = timed(lambda: kfn(xj, None, "ntk"), a.reps)
                k_nt = np.asarray(k_nt, dtype=np.float64)
            diff = float(np.max(np.abs(k_nt - k_rfx)) / np.max(np.abs(k_rfx)))
            nt_times[dtype] = (t, compile_s, diff, diag_err(k_nt))
            print(f"depth {depth}: exact NTK rfx {t_rfx:.3f} s, neural-tangents {np.dtype(dtype).name} {t:.3f} s "
                  f"(first call {compile_s:.2f} s), max |Δ| / max |K| = {diff:.1e}", flush=True)
        exact_rows.append((depth, t_rfx, diag_err(k_rfx), nt_times, l0, loadavg()))

        # approximate Grams of the same n rows, error against rfx's exact f64 Gram, over seeds
        for m in dims:
            for dtype in (np.float64, np.float32):
                xd = x.astype(dtype)
                feat_t, gram_t, errs = [], [], []
                l0 = loadavg()
                for s in range(a.seeds):
                    t0 = time.perf_counter()
                    z = rfxpy.FeatureMap("ntk-rf", m, random_state=s, params={"depth": depth}).fit_transform(xd)
                    t1 = time.perf_counter()
                    g = z @ z.T
                    t2 = time.perf_counter()
                    feat_t.append(t1 - t0)
                    gram_t.append(t2 - t1)
                    errs.append(rel_fro(g, k_rfx))
                approx_rows.append((depth, f"rfx NTK-RF, m = {m}", np.dtype(dtype).name, statistics.median(feat_t),
                                    statistics.median(gram_t), errs, l0, loadavg()))
                print(f"depth {depth}: rfx ntk-rf m={m} {np.dtype(dtype).name}: features "
                      f"{statistics.median(feat_t):.3f} s + Gram {statistics.median(gram_t):.3f} s, error "
                      f"{np.mean(errs):.4f} ± {np.std(errs, ddof=1) if len(errs) > 1 else 0:.4f}", flush=True)
        for w in widths:
            for dtype in (np.float64, np.float32):
                init_fn, apply_fn, _ = network(depth, w)
                times, errs = [], []
                l0 = loadavg()
                for s in range(a.seeds):
                    with precision(dtype):
                        xj = jnp.asarray(x_nt, dtype=dtype)
                        mc = nt.monte_carlo_kernel_fn(init_fn, apply_fn, jax.random.PRNGKey(s), 1,
                                                      implementation=nt.NtkImplementation.STRUCTURED_DERIVATIVES,
                                                      vmap_axes=0)
                        mc(xj, None, "ntk").block_until_ready()  # a new network per seed: compiled on its first call
                        t, k_mc = timed(lambda: mc(xj, None, "ntk"), 1)
                        assert k_mc.dtype == dtype, k_mc.dtype
                    times.append(t)
                    errs.append(rel_fro(k_mc, k_rfx))
                approx_rows.append((depth, f"neural-tangents Monte Carlo NTK, width {w}", np.dtype(dtype).name,
                                    statistics.median(times), 0.0, errs, l0, loadavg()))
                print(f"depth {depth}: nt MC width {w} {np.dtype(dtype).name}: {statistics.median(times):.3f} s, "
                      f"error {np.mean(errs):.4f}", flush=True)

    L = [BEGIN, "## rfx against neural-tangents (JAX), same process (issue 26)", ""]
    L.append(
        provenance("bench/python/jax_side_by_side.py",
                   f"rfxpy {rfxpy.__version__} (release wheel), neural-tangents {nt.__version__}, jax {jax.__version__} "
                   f"(XLA on the CPU), numpy {np.__version__}")
        + f". Data: the first n = {n} MNIST training rows (pixels / 255, d = {d}). Times are medians of "
        f"{a.reps} calls after a first call that compiles (neural-tangents' compilation is listed apart); the "
        "load average is printed next to each row."
    )
    L += ["", "**Exact NTK Gram** (n × n, all pairs). rfx in float64 (`rfxpy.ntk`, the registry kernel `ntk`); "
          "neural-tangents' `kernel_fn(x, None, 'ntk')` under `jax.jit` in float64 and float32, on the network "
          "given in the script's docstring. Agreement: max |K_nt − K_rfx| / max |K_rfx|; diagonal: the largest "
          "relative error of Θ(x, x) against its exact value (L + 1)‖x‖² (rfx / nt f64 / nt f32).", "",
          "| depth | rfx f64 (s) | nt f64 (s) | nt f32 (s) | ratio rfx / nt f64 | ratio rfx / nt f32 | nt first call f64 / f32 (s) | agreement f64 / f32 | diagonal rfx / nt f64 / nt f32 | load before / after |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for depth, t_rfx, dg_rfx, ntt, l0, l1 in exact_rows:
        t64, c64, d64, g64 = ntt[np.float64]
        t32, c32, d32, g32 = ntt[np.float32]
        L.append(f"| {depth} | {t_rfx:.3f} | {t64:.3f} | {t32:.3f} | {t_rfx / t64:.2f} | {t_rfx / t32:.2f} | "
                 f"{c64:.2f} / {c32:.2f} | {d64:.1e} / {d32:.1e} | {dg_rfx:.1e} / {g64:.1e} / {g32:.1e} | "
                 f"{l0} / {l1} |")
    L += ["", f"**Approximate NTK Grams of the same n rows**, relative Frobenius error ‖K̂ − K‖_F / ‖K‖_F against "
          f"rfx's exact float64 Gram, mean ± sd over {a.seeds} seeds; time = median over the seeds. rfx: "
          "NTK random features (`FeatureMap('ntk-rf', m)`: arc-cosine features and a degree-2 TensorSketch, "
          "Han et al. 2021 Alg. 1; float32 rows in give float32 features out) timed as `fit_transform`, then "
          "K̂ = ZZᵀ by numpy. neural-tangents: `monte_carlo_kernel_fn` with one random network of the given "
          "hidden width (its empirical NTK, structured derivatives), which returns K̂ directly. Read the two "
          "methods at equal error: each row is one (time, error) point.", "",
          "| depth | method | dtype | features (s) | Gram ZZᵀ (s) | total (s) | error | load before / after |",
          "|---|---|---|---|---|---|---|---|"]
    for depth, name, dt, tf, tg, errs, l0, l1 in approx_rows:
        sd = np.std(errs, ddof=1) if len(errs) > 1 else 0.0
        feat = f"{tf:.3f}" if tg else "—"
        gram = f"{tg:.3f}" if tg else "—"
        L.append(f"| {depth} | {name} | {dt} | {feat} | {gram} | {tf + tg:.3f} | {np.mean(errs):.4f} ± {sd:.4f} | "
                 f"{l0} / {l1} |")
    L += ["", "rfxpy runs its maps with OpenBLAS on one thread per task and rayon on all cores; XLA uses all cores. "
          "The Monte Carlo NTK is Grad-RF of the NTK papers (the gradient features of a finite network) computed "
          "without forming the features. JAX draws a network's weights differently in float64 and float32, so "
          "the two dtypes of one width are different networks (their errors differ by more than rounding).", END]
    write_section(a.results, BEGIN, END, "\n".join(L) + "\n")


if __name__ == "__main__":
    main()
