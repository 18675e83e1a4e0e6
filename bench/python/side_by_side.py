"""rfxpy against scikit-learn in one Python process (issue 29): the maps both libraries have, at n = 10^4
MNIST rows, d = 784, m = 4096, fit + transform timed as a user calls them (median of --reps runs), and the
Python overhead of rfxpy over its native call. Writes its section of results/performance.md between the
markers below (bench/compare/compare.py keeps the section when it rewrites the file).

    python bench/python/side_by_side.py [--n 10000] [--m 4096] [--reps 3]

Needs rfxpy (pip install ./crates/python, release build) and scikit-learn in the running Python, and MNIST in
$RFX_DATA_DIR/mnist (rfx fetch mnist).
"""

import argparse
import gzip
import os
import pathlib
import statistics
import time

import numpy as np
import sklearn
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler

import rfxpy
from report_section import loadavg, provenance, write_section

BEGIN = "<!-- python-side-by-side:begin (bench/python/side_by_side.py) -->"
END = "<!-- python-side-by-side:end -->"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def mnist_rows(n):
    """The first n MNIST training images as float64 rows, pixels / 255 (d = 784), from $RFX_DATA_DIR/mnist."""
    data_dir = pathlib.Path(os.environ.get("RFX_DATA_DIR", ROOT / "data-cache")) / "mnist"
    return idx(data_dir / "train-images-idx3-ubyte.gz").reshape(-1, 784)[:n] / 255.0


def timed(f, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--m", type=int, default=4096)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--results", default=str(ROOT / "results/performance.md"))
    a = p.parse_args()
    x = mnist_rows(a.n)
    n, d, m = x.shape[0], x.shape[1], a.m
    sigma = 5.0  # gamma = 1 / (2 sigma^2) = 0.02, as bench/compare
    xs = x / np.sqrt(d)  # TensorSketch of (<x, y>/784 + 1)^2: rows x/28 with bias 1

    pairs = [
        ("RFF (Gaussian, σ = 5)",
         lambda: rfxpy.RandomFourierFeatures(m, random_state=0, sigma=sigma).fit_transform(x),
         lambda: RBFSampler(gamma=0.02, n_components=m, random_state=0).fit_transform(x),
         "RandomFourierFeatures", "RBFSampler"),
        ("Nyström (Gaussian, σ = 5, uniform landmarks)",
         lambda: rfxpy.Nystroem(m, random_state=0, sigma=sigma).fit_transform(x),
         lambda: Nystroem(gamma=0.02, n_components=m, random_state=0).fit_transform(x),
         "Nystroem", "Nystroem"),
        ("TensorSketch (degree 2, (⟨x,y⟩/784 + 1)²)",
         lambda: rfxpy.TensorSketch(m, random_state=0, degree=2, bias=1.0).fit_transform(xs),
         lambda: PolynomialCountSketch(gamma=1 / d, degree=2, coef0=1, n_components=m,
                                       random_state=0).fit_transform(x),
         "TensorSketch", "PolynomialCountSketch"),
    ]
    rows = []
    for task, ours, theirs, our_name, their_name in pairs:
        l0 = loadavg()
        t_ours = timed(ours, a.reps)
        t_theirs = timed(theirs, a.reps)
        rows.append((task, our_name, their_name, t_ours, t_theirs, l0, loadavg()))
        print(f"{task}: rfxpy {t_ours:.3f} s, scikit-learn {t_theirs:.3f} s")

    # Python overhead: the estimator (scikit-learn validation, parameters, pickling state) against the
    # native call it makes (_native.fit + FittedMap.transform on the same array)
    over = []
    for name, cls, params in [("rff", rfxpy.RandomFourierFeatures, {"sigma": sigma}),
                              ("tensorsketch", rfxpy.TensorSketch, {"degree": 2, "bias": 1.0})]:
        est = lambda: cls(m, random_state=0, **params).fit(x).transform(x)  # noqa: E731
        native = lambda: rfxpy._native.fit(name, m, params, 0, x).transform(x)  # noqa: E731
        t_est, t_nat = timed(est, a.reps), timed(native, a.reps)
        small = x[:1]
        fitted = cls(m, random_state=0, **params).fit(x)
        per_call = timed(lambda: [fitted.transform(small) for _ in range(200)], a.reps) / 200
        per_call_native = timed(lambda: [fitted._fitted_map.transform(small) for _ in range(200)],
                                a.reps) / 200
        over.append((name, t_est, t_nat, per_call, per_call_native))
        print(f"{name}: estimator {t_est:.3f} s, native {t_nat:.3f} s; 1 row {per_call * 1e6:.0f} us "
              f"vs native {per_call_native * 1e6:.0f} us")

    L = [BEGIN, "## rfxpy (Python) against scikit-learn, same process (issue 29)", ""]
    L.append(
        provenance("bench/python/side_by_side.py",
                   f"rfxpy {rfxpy.__version__} (release wheel, `pip install ./crates/python`), scikit-learn "
                   f"{sklearn.__version__}, numpy {np.__version__}")
        + " (shared: the load average is printed next to "
        f"each row). Both libraries are called from the same Python process on the same float64 array: the "
        f"first n = {n} MNIST training rows (pixels / 255, d = {d}), output width m = {m}; time = fit + "
        f"transform of all n rows as a user writes it (`fit_transform`), median of {a.reps} runs."
    )
    L += ["", "| map | rfxpy | scikit-learn | rfxpy (s) | sklearn (s) | ratio rfxpy/sklearn | load before / after |",
          "|---|---|---|---|---|---|---|"]
    for task, on, tn, to, tt, l0, l1 in rows:
        L.append(f"| {task} | `{on}` | `{tn}` | {to:.3f} | {tt:.3f} | {to / tt:.2f} | {l0} / {l1} |")
    L += ["", "Python overhead of rfxpy: the estimator (`fit` + `transform`: scikit-learn's input validation, "
          "parameter handling) against the native calls it makes (`rfxpy._native.fit(...).transform(X)` on the "
          "same array), at the sizes above and for one row (200 calls, time per call):", "",
          "| map | estimator (s) | native (s) | overhead | 1-row transform, estimator (µs) | 1-row, native (µs) |",
          "|---|---|---|---|---|---|"]
    for name, te, tn, pc, pcn in over:
        L.append(f"| {name} | {te:.3f} | {tn:.3f} | {100 * (te - tn) / tn:+.1f}% | {pc * 1e6:.0f} | {pcn * 1e6:.0f} |")
    L += ["", "RFF: rfx's map is the paired [cos Wx, sin Wx]/√(m/2) (m/2 frequencies, half the GEMM of "
          "RBFSampler's √(2/m) cos(Wx + b) at the same width m; see the note above). Nyström here at "
          f"m = {m} landmarks (the table above uses 1,024). rfxpy runs OpenBLAS on one thread per task (its output does not depend on "
          "the thread count; the factorisation of the landmarks' Gram is then single-threaded), scikit-learn's numpy/scipy on all cores. "
          "On a shared machine the run-to-run spread is larger than the Python overhead of a large call, so that "
          "overhead can come out negative; the 1-row times show the fixed cost of a call (scikit-learn's validation).", END]
    section = "\n".join(L) + "\n"

    write_section(a.results, BEGIN, END, section)


if __name__ == "__main__":
    main()
