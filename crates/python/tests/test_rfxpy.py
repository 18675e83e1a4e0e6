"""rfxpy: outputs equal to the command line's, pickling, threads, layouts and dtypes, bad input, and the
scikit-learn checks that need a valid budget (see test_sklearn_checks.py)."""

import copy
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import rfxpy

METHODS = sorted(rfxpy.TRANSFORMERS)
KERNELS = sorted(k["name"] for k in rfxpy.kernels())
# The CNTK's images: 2 x 2 pixels, 1 channel (rows of 4 values); the other kernels take any width.
KERNEL_PARAMS = {"cntk": {"height": 2, "width": 2, "channels": 1}}
M = 64


def _est(method, **kw):
    return rfxpy.TRANSFORMERS[method](M, random_state=7, **kw)


def _cli_params(params):
    out = []
    for k, v in params.items():
        if isinstance(v, bool):
            v = str(v).lower()
        out += ["--param", f"{k}={v}"]
    return out


@pytest.mark.parametrize("method", METHODS)
def test_features_equal_the_command_line(method, rows, rfx_bin, tmp_path):
    """Bit-identical to `rfx features` with the same method, budget and seed; 300 rows span two of the
    256-row chunks."""
    np.save(tmp_path / "x.npy", rows)
    subprocess.run(
        [rfx_bin, "features", "--method", method, "--dim", str(M), "--seed", "7",
         "--input", tmp_path / "x.npy", "--output", tmp_path / "z.npy"],
        check=True, capture_output=True,
    )
    expected = np.load(tmp_path / "z.npy")
    z = _est(method).fit_transform(rows)
    assert z.dtype == np.float64 and z.shape == expected.shape
    assert np.array_equal(z, expected)


def test_features_with_parameters_equal_the_command_line(rows, rfx_bin, tmp_path):
    np.save(tmp_path / "x.npy", rows)
    for method, params in [("rff", {"sigma": 2.5, "phase": "random"}), ("ntk-rf", {"depth": 2}),
                           ("gegenbauer", {"unit_norm": False}), ("nystrom", {"sigma": 3.0})]:
        out = tmp_path / f"{method}.npy"
        subprocess.run(
            [rfx_bin, "features", "--method", method, "--dim", "32", "--seed", "11",
             "--input", tmp_path / "x.npy", "--output", out] + _cli_params(params),
            check=True, capture_output=True,
        )
        z = rfxpy.FeatureMap(method, 32, random_state=11, params=params).fit_transform(rows)
        assert np.array_equal(z, np.load(out)), method


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_equal_the_command_line(kernel, rfx_bin, tmp_path):
    rng = np.random.RandomState(1)
    x, y = rng.randn(70, 4), rng.randn(9, 4)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    params = KERNEL_PARAMS.get(kernel, {})
    for against, expect_shape in [(None, (70, 70)), ("y.npy", (70, 9))]:
        out = tmp_path / f"k-{against}.npy"
        cmd = [rfx_bin, "gram", "--kernel", kernel, "--input", tmp_path / "x.npy", "--output", out]
        if against:
            cmd += ["--against", tmp_path / against]
        subprocess.run(cmd + _cli_params(params), check=True, capture_output=True)
        k = rfxpy.gram(kernel, x, None if against is None else y, **params)
        assert k.shape == expect_shape
        assert np.array_equal(k, np.load(out))
    fn = rfxpy.KERNEL_FUNCTIONS[kernel.replace("-", "_")]
    assert np.array_equal(fn(x, y, **params), rfxpy.gram(kernel, x, y, **params))


def test_ntk_is_a_kernel_for_scikit_learn():
    """The same SVM from a precomputed Gram and from the callable."""
    from sklearn.svm import SVC

    rng = np.random.RandomState(0)
    x = rng.randn(120, 5)
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    xt = rng.randn(40, 5)
    pre = SVC(kernel="precomputed").fit(rfxpy.ntk(x, depth=2), y)
    call = SVC(kernel=lambda a, b: rfxpy.ntk(a, b, depth=2)).fit(x, y)
    assert np.array_equal(pre.predict(rfxpy.ntk(xt, x, depth=2)), call.predict(xt))
    k = rfxpy.ntk(x, depth=2)
    assert np.allclose(k, k.T) and np.linalg.eigvalsh(k).min() > -1e-8 * np.abs(k).max()


def test_kernel_functions_are_callables_for_pairwise_kernels():
    """scikit-learn's pairwise_kernels calls a callable kernel on pairs of 1-D rows: KernelRidge with
    kernel=rfxpy.ntk (or gaussian) fits and predicts as KernelRidge on the precomputed Gram (same Gram
    entries from single pairs up to the Gram's rounding), and a single pair gives the number k(x, y)."""
    from functools import partial

    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import pairwise_kernels

    rng = np.random.RandomState(1)
    x = rng.randn(30, 4)
    y = x[:, 0] - x[:, 1] ** 2
    xt = rng.randn(10, 4)
    for fn, params in [(rfxpy.ntk, {"depth": 2}), (rfxpy.gaussian, {"sigma": 2.0})]:
        k = partial(fn, **params)
        g = fn(x, **params)
        assert np.allclose(pairwise_kernels(x, metric=k), g, rtol=1e-12, atol=1e-12)
        v = k(x[0], x[1])
        assert isinstance(v, float) and abs(v - g[0, 1]) <= 1e-12 * max(1.0, abs(g[0, 1]))
        call = KernelRidge(kernel=k, alpha=0.1).fit(x, y)
        pre = KernelRidge(kernel="precomputed", alpha=0.1).fit(g, y)
        # Gram entries agree to 1e-12; the solve with alpha = 0.1 amplifies that by at most its condition
        # number, about trace(g) / 0.1 < 1e4 here, so the predictions agree far within 1e-7
        assert np.allclose(call.predict(xt), pre.predict(fn(xt, x, **params)), rtol=1e-7, atol=1e-7)


def test_gaussian_takes_scikit_learns_gamma():
    """gamma = 1 / (2 sigma^2), as sklearn's rbf_kernel; both at once, or gamma <= 0, are refused."""
    from sklearn.metrics.pairwise import rbf_kernel

    x = np.random.RandomState(2).randn(20, 3)
    assert np.allclose(rfxpy.gaussian(x, gamma=0.5), rbf_kernel(x, gamma=0.5), rtol=1e-12, atol=1e-14)
    assert np.array_equal(rfxpy.gaussian(x, gamma=0.5), rfxpy.gaussian(x, sigma=1.0))
    with pytest.raises(TypeError, match="sigma or gamma"):
        rfxpy.gaussian(x, sigma=1.0, gamma=0.5)
    with pytest.raises(ValueError, match="gamma"):
        rfxpy.gaussian(x, gamma=-1.0)
    with pytest.raises(TypeError, match="unknown parameter"):
        rfxpy.ntk(x, gamma=1.0)


@pytest.mark.parametrize("method", METHODS)
def test_pickle_gives_the_same_output(method, rows):
    est = _est(method).fit(rows)
    z = est.transform(rows)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.transform(rows), z)
    assert np.array_equal(copy.deepcopy(est).transform(rows), z)
    assert again.get_params() == est.get_params()
    # the fitted arguments are kept, not the parameters as they are now
    est.set_params(n_components=M + 2)
    assert np.array_equal(pickle.loads(pickle.dumps(est)).transform(rows), z)


# Methods that cannot be fitted on one row or one column, and the registry's reason.
ONE_ROW_REFUSED = {"ls-rff": "at least 2 rows"}
ONE_COLUMN_REFUSED = {"gegenbauer": "d >= 2"}


@pytest.mark.parametrize("method", METHODS)
def test_scikit_learn_properties_at_a_valid_budget(method, rows):
    """What scikit-learn's checks run at n_components=1, here at a budget every method accepts."""
    est = _est(method)
    params = est.get_params()
    z = clone(est).fit(rows).transform(rows)
    assert est.get_params() == params  # fit changes no parameter
    fitted = clone(est).fit(rows)
    assert {k for k in vars(fitted) if not k.startswith("_") and not k.endswith("_")} == set(params)
    # subset and row-order invariance (to rounding: a BLAS product of fewer rows may round differently)
    np.testing.assert_allclose(fitted.transform(rows[:10]), z[:10], rtol=1e-10, atol=1e-13)
    perm = np.random.RandomState(3).permutation(len(rows))
    np.testing.assert_allclose(fitted.transform(rows[perm]), z[perm], rtol=1e-10, atol=1e-13)
    # one row, one column, where the method allows them; otherwise a ValueError saying why
    if method in ONE_ROW_REFUSED:
        with pytest.raises(ValueError, match=ONE_ROW_REFUSED[method]):
            clone(est).fit(rows[:1])
    else:
        assert clone(est).fit(rows[:1]).transform(rows[:5]).shape[0] == 5
    if method in ONE_COLUMN_REFUSED:
        with pytest.raises(ValueError, match=ONE_COLUMN_REFUSED[method]):
            clone(est).fit(rows[:, :1])
    else:
        assert clone(est).fit(rows[:, :1]).transform(rows[:, :1]).shape[0] == len(rows)
    # 1-D input refused
    with pytest.raises(ValueError, match="2D"):
        fitted.transform(rows[0])
    assert fitted.n_features_in_ == rows.shape[1]
    names = fitted.get_feature_names_out()
    assert len(names) == z.shape[1] and names[0].startswith(type(est).__name__.lower())


@pytest.mark.parametrize("method", ["rff", "nystrom", "ntk-sketch"])
def test_float32_and_fortran_order(method, rows):
    est = _est(method).fit(rows)
    z = est.transform(rows)
    assert np.array_equal(est.transform(np.asfortranarray(rows)), z)
    x32 = rows.astype(np.float32)
    z32 = est.transform(x32)
    # float32 in, float32 out (computed in float32 where the map has an f32 path): within 1e-5 of the
    # largest float64 feature, far below any map's approximation error at this width
    z64 = est.transform(x32.astype(np.float64))
    assert z32.dtype == np.float32 and z32.shape == z64.shape
    assert np.max(np.abs(z32.astype(np.float64) - z64)) <= 1e-5 * np.max(np.abs(z64))
    assert np.array_equal(est.transform(np.asfortranarray(x32)), z32)
    assert np.array_equal(est.transform(rows[:, ::1][::2]), z[::2])  # strided rows
    f32 = clone(est).fit(x32)
    assert np.array_equal(f32.transform(x32), clone(est).fit(x32.astype(np.float64)).transform(x32))


@pytest.mark.parametrize("method", ["rff", "arccos", "fastfood"])
def test_float32_features_equal_the_command_line(method, rows, rfx_bin, tmp_path):
    """A float32 input gives the float32 output of `rfx features` on a float32 .npy, bit for bit."""
    x32 = rows.astype(np.float32)
    np.save(tmp_path / "x.npy", x32)
    subprocess.run(
        [rfx_bin, "features", "--method", method, "--dim", str(M), "--seed", "7",
         "--input", tmp_path / "x.npy", "--output", tmp_path / "z.npy"],
        check=True, capture_output=True,
    )
    expected = np.load(tmp_path / "z.npy")
    z = rfxpy.FeatureMap(method, M, random_state=7).fit_transform(x32)
    assert expected.dtype == np.float32 and z.dtype == np.float32
    assert np.array_equal(z, expected)


def test_results_do_not_depend_on_the_thread_count(rows):
    x = np.random.RandomState(5).randn(1100, 6)
    est = _est("ntk-sketch")
    before = rfxpy.get_num_threads()
    try:
        rfxpy.set_num_threads(1)
        assert rfxpy.get_num_threads() == 1
        z1, k1 = est.fit_transform(x), rfxpy.gaussian(x[:200], x)
        rfxpy.set_num_threads(2)
        assert rfxpy.get_num_threads() == 2
        z2, k2 = est.fit_transform(x), rfxpy.gaussian(x[:200], x)
    finally:
        rfxpy.set_num_threads(0)
    assert rfxpy.get_num_threads() == before
    assert np.array_equal(z1, z2) and np.array_equal(k1, k2)
    with pytest.raises(ValueError, match="1..=1024"):
        rfxpy.set_num_threads(5000)


def test_transform_releases_the_gil():
    """Another Python thread runs while a transform computes."""
    import threading

    x = np.random.RandomState(0).randn(4000, 200)
    est = rfxpy.RandomFourierFeatures(4096, random_state=0).fit(x)
    ticks = []
    done = threading.Event()

    def work():
        est.transform(x)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks.append(1)
        done.wait(0.001)
    t.join()
    assert len(ticks) > 3


# ------------------------------------------------------------------------------------------- bad input

def test_bad_input_raises_value_errors(rows):
    est = _est("rff").fit(rows)
    bad = rows.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.transform(bad)
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        _est("rff").fit(bad)
    with pytest.raises(ValueError, match="6 features"):
        est.transform(rows[:, :5])
    with pytest.raises(ValueError, match="Complex"):
        est.transform(rows + 1j)
    with pytest.raises(ValueError):
        est.transform(np.array([["a"] * 6]))
    with pytest.raises(ValueError, match="2D"):
        est.transform(rows[0])
    with pytest.raises(ValueError):
        est.transform(rows[None])


def test_the_native_layer_checks_its_input(rows):
    """Called directly (no scikit-learn validation in front), the Rust side refuses bad arrays itself."""
    fmap = rfxpy._native.fit("rff", 8, None, 0, rows)
    with pytest.raises(ValueError, match="numpy.ndarray"):
        fmap.transform(rows.tolist())
    with pytest.raises(ValueError, match="2-D"):
        fmap.transform(rows[None])
    with pytest.raises(ValueError, match="float64 or float32"):
        fmap.transform(rows.astype(np.int64))
    with pytest.raises(ValueError, match="fitted on 6 columns"):
        fmap.transform(rows[:, :4])
    bad = rows.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="row 7, column 1"):
        fmap.transform(bad)
    with pytest.raises(ValueError, match="row 7, column 1"):
        rfxpy._native.fit("nystrom", 8, None, 0, bad)
    with pytest.raises(ValueError, match="row 7, column 1"):
        rfxpy._native.gram("ntk", bad)
    with pytest.raises(ValueError, match="X has 6 columns but Y has 4"):
        rfxpy._native.gram("ntk", rows, rows[:, :4])
    with pytest.raises(ValueError, match="n_components=0"):
        rfxpy._native.fit("rff", 0, None, 0, rows)


def test_parameter_errors_carry_the_allowed_values(rows):
    with pytest.raises(ValueError, match=r"sigma=-1: expected real in \[0.000001, 1000000\]"):
        _est("rff", sigma=-1.0).fit(rows)
    with pytest.raises(ValueError, match="one of paired | random"):
        _est("rff", phase="both").fit(rows)
    with pytest.raises(ValueError, match=r'unknown parameter "depth"; allowed: kernel, sigma, form, phase'):
        rfxpy.FeatureMap("rff", params={"depth": 2}).fit(rows)
    with pytest.raises(ValueError, match='unknown method "nope"|unknown method .nope.'):
        rfxpy.FeatureMap("nope").fit(rows)
    with pytest.raises(TypeError, match="allowed: n_components, random_state, kernel, sigma"):
        rfxpy.RandomFourierFeatures(depth=2)
    with pytest.raises(ValueError, match="Invalid parameter"):
        rfxpy.RandomFourierFeatures().set_params(depth=2)
    with pytest.raises(ValueError, match="even integer"):
        rfxpy.RandomFourierFeatures(3).fit(rows)
    with pytest.raises(ValueError, match="n_components"):
        rfxpy.RandomFourierFeatures(0).fit(rows)
    with pytest.raises(ValueError, match="random_state"):
        rfxpy.RandomFourierFeatures(random_state=-1).fit(rows)
    with pytest.raises(ValueError, match=r"depth=-1: expected integer in 0..=\d+"):
        rfxpy.ntk(rows, depth=-1)
    with pytest.raises(TypeError, match="allowed: depth, bias"):
        rfxpy.ntk(rows, order=1)
    with pytest.raises(ValueError, match="unknown kernel"):
        rfxpy.gram("nope", rows)
    with pytest.raises(ValueError, match="cap"):
        rfxpy.RandomFourierFeatures(2**40).fit(rows)


def test_memory_is_checked_before_allocating(rows):
    """An output, a copy or a map above the 8 GiB cap is a ValueError, never an aborted interpreter."""
    fmap = rfxpy._native.fit("rff", 2**21, None, 0, rows)  # 300 x 2^21 features: 10 GB with its chunks
    with pytest.raises(ValueError, match="cap"):
        fmap.transform(rows)
    huge = np.broadcast_to(rows[:1], (2**30, rows.shape[1]))  # a 48 GiB view of one row: a copy is refused
    with pytest.raises(ValueError, match="cap"):
        rfxpy._native.fit("rff", 8, None, 0, huge)
    with pytest.raises(ValueError, match="cap"):
        rfxpy._native.gram("gaussian", huge[: 2**17])


def test_random_state_none_and_randomstate(rows):
    a = rfxpy.RandomFourierFeatures(16).fit_transform(rows)
    b = rfxpy.RandomFourierFeatures(16).fit_transform(rows)
    assert not np.array_equal(a, b)
    c = rfxpy.RandomFourierFeatures(16, random_state=np.random.RandomState(4)).fit_transform(rows)
    d = rfxpy.RandomFourierFeatures(16, random_state=np.random.RandomState(4)).fit_transform(rows)
    assert np.array_equal(c, d)


def test_the_registry_is_listed():
    assert rfxpy.__version__ == "0.1.0"
    names = [m["name"] for m in rfxpy.methods()]
    assert names == list(rfxpy.TRANSFORMERS)
    rff = rfxpy.methods()[names.index("rff")]
    sigma = next(p for p in rff["params"] if p["name"] == "sigma")
    assert sigma["type"] == "float" and sigma["min"] == 1e-6 and sigma["default"] == "1"
    assert rfxpy.RandomFourierFeatures().sigma == 1.0
    assert rfxpy.Nystroem.method_name == "nystrom"


@pytest.mark.parametrize("kernel", ["polynomial", "ntk", "gzk"])
def test_kernels_refuse_a_result_that_is_not_finite(rows, kernel):
    """Rows of huge norm overflow these kernels; like `rfx gram`, the result is refused, never returned with
    NaN or infinity in it (issue 60, cause 8)."""
    huge = rows * 1e200
    with pytest.raises(ValueError, match=f"kernel {kernel}: entry .* not a finite number"):
        rfxpy._native.gram(kernel, huge)
    with pytest.raises(ValueError, match="rows of X or Y"):
        rfxpy._native.gram(kernel, huge, huge)
    assert np.isfinite(rfxpy._native.gram(kernel, rows)).all()


@pytest.mark.parametrize("method", ["rff", "ntk-rf"])
def test_maps_refuse_features_that_are_not_finite(rows, method):
    """Features of rows of 1e308 overflow: a ValueError naming the method, as `rfx features` refuses them."""
    fmap = rfxpy._native.fit(method, 16, None, 0, rows)
    huge = np.full_like(rows, 1e308)
    with pytest.raises(ValueError, match=f"method {method}: entry .* not a finite number"):
        fmap.transform(huge)
    with pytest.raises(ValueError, match="not a finite number"):
        fmap.transform(np.full_like(rows, 3e38, dtype=np.float32))
    assert np.isfinite(fmap.transform(rows)).all()


def test_hostile_arguments_name_the_argument_and_its_range(rows):
    """Issue 60, fresh hostile set: a negative thread count raised OverflowError without naming `n`, and an
    overflowing polynomial kernel named the internal `taylor[0]` instead of `c` and `degree`."""
    for n in (-1, -(2**70), 2**70):
        with pytest.raises(ValueError, match=r"set_num_threads\(n=.*\): allowed: n = 0 .* or 1..=1024"):
            rfxpy.set_num_threads(n)
    with pytest.raises(TypeError):
        rfxpy.set_num_threads(2.5)
    with pytest.raises(ValueError, match=r"invalid parameter `c` = 1000000 with degree = 60: allowed c\^degree finite"):
        rfxpy.polynomial(rows * 1e3, degree=60, c=1e6)
    assert np.isfinite(rfxpy.polynomial(rows, degree=3, c=1.0)).all()
