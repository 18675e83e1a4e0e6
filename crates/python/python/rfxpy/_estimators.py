"""scikit-learn transformers generated from rfx's method registry.

Every feature map of the registry (``rfxpy.methods()``) becomes one class here, with the registry's parameters
as keyword arguments (names, defaults and allowed ranges as in ``rfx methods``), plus ``n_components`` (the
budget m of ``rfx features --dim``) and ``random_state``. A method added to the registry appears with no code
here (its class name is its registry name in CamelCase unless ``_CLASS_NAMES`` gives a nicer one).
``FeatureMap(method=..., params={...})`` is the generic form of the same thing.
"""

import inspect
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _native

_METHODS = {m["name"]: m for m in _native.methods()}

# Nicer class names of the registry's methods; any other method gets its name in CamelCase.
_CLASS_NAMES = {
    "rff": "RandomFourierFeatures",
    "orf": "OrthogonalRandomFeatures",
    "sorf": "StructuredOrthogonalRandomFeatures",
    "fastfood": "Fastfood",
    "qmc": "QMCFourierFeatures",
    "maclaurin": "RandomMaclaurin",
    "tensorsketch": "TensorSketch",
    "trp": "TensorizedRandomProjection",
    "tensorsrht": "TensorSRHT",
    "polysketch": "PolySketch",
    "gegenbauer": "GegenbauerFeatures",
    "nystrom": "Nystroem",
    "arccos": "ArcCosineFeatures",
    "ntk-rf": "NTKRandomFeatures",
    "ntk-sketch": "NTKSketch",
    "grad-rf": "GradRandomFeatures",
    "naive-rf": "NaiveRandomFeatures",
    "cntksketch": "CNTKSketch",
    "cnn-grad-rf": "CNNGradRandomFeatures",
    "lp-rff": "LowPrecisionRFF",
    "ternary": "TernaryFeatures",
    "relu-rf": "ReLURandomFeatures",
    "rom": "RandomOrthogonalMatrixFeatures",
    "ssf": "SphericalStructuredFeatures",
    "gq": "GaussianQuadratureFeatures",
    "ls-rff": "LeverageScoreRFF",
}


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.replace("_", "-").split("-"))


def _default(param):
    """A registry default (text, as on the command line) as a Python value."""
    text = param["default"]
    kind = param["type"]
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "list":
        return tuple(float(v) for v in text.split(","))
    if kind == "choice" and sorted(param["choices"]) == ["false", "true"]:
        return text == "true"
    return text


def _seed(random_state):
    """The seed of ``rfx features --seed``: an int random_state is the seed itself (0 <= seed < 2**64);
    None or a RandomState draws one."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = int(random_state)
        if not 0 <= seed < 2**64:
            raise ValueError(
                f"random_state={random_state}: allowed: an integer in 0..=2**64-1, a "
                "numpy.random.RandomState or None"
            )
        return seed
    return int(check_random_state(random_state).randint(0, np.iinfo(np.int64).max, dtype=np.int64))


def _n_components(m):
    if isinstance(m, numbers.Integral) and not isinstance(m, bool) and m >= 1:
        return int(m)
    raise ValueError(f"n_components={m!r}: allowed: an integer >= 1")


class _RfxTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What every rfx transformer shares: fit draws (or fits, for data-dependent maps) the registry's map,
    transform applies it. Pickling stores the fitted arguments (method, budget, parameters, seed and, for
    a data-dependent map, a copy of the fitting rows) and refits on unpickling, which reproduces the map
    exactly (every draw comes from the seed's stream)."""

    def _method_and_params(self):  # pragma: no cover - defined by every subclass
        raise NotImplementedError

    def fit(self, X, y=None):
        """Draws the map (fits it on ``X`` for a data-dependent method). ``y`` is ignored."""
        method, params = self._method_and_params()
        if method not in _METHODS:
            raise ValueError(f"unknown method {method!r}; allowed: {', '.join(_METHODS)}")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=True)
        m = _n_components(self.n_components)
        seed = _seed(self.random_state)
        if _METHODS[method]["data_dependent"]:
            fit_rows = np.array(X, copy=True)
        else:
            fit_rows = np.empty((0, X.shape[1]), dtype=np.float64)
        self._fitted_map = _native.fit(method, m, params, seed, fit_rows)
        self._fit_args = (method, m, dict(params), seed, fit_rows)
        self._n_features_out = self._fitted_map.n_features_out
        return self

    def transform(self, X):
        """The features of the rows of ``X`` (float64 or float32, C or Fortran order), of ``X``'s dtype: a
        float32 ``X`` is computed in float32 (an f32 GEMM for the maps that have one), as ``rfx features``
        does for a float32 ``.npy``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self._fitted_map.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_fitted_map")

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_fitted_map", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_fit_args" in state:
            method, m, params, seed, fit_rows = state["_fit_args"]
            self._fitted_map = _native.fit(method, m, params, seed, fit_rows)


class FeatureMap(_RfxTransformer):
    """Any feature map of rfx's registry by name: ``FeatureMap("ntk-sketch", 1024, random_state=0,
    params={"depth": 2})``. ``rfxpy.methods()`` lists the names and parameters; the per-method classes
    (``rfxpy.RandomFourierFeatures`` ...) are the same with the parameters as keyword arguments.

    With an int ``random_state`` the output is bit-identical to ``rfx features --method <method> --dim
    <n_components> --seed <random_state> --param k=v ...``.
    """

    def __init__(self, method="rff", n_components=100, *, random_state=None, params=None):
        self.method = method
        self.n_components = n_components
        self.random_state = random_state
        self.params = params

    def _method_and_params(self):
        if self.params is not None and not isinstance(self.params, dict):
            raise ValueError(f"params={self.params!r}: allowed: a dict of parameter values or None")
        return self.method, dict(self.params or {})


def _describe(spec):
    lines = [f"{spec['about']}.", "", f"Paper: {spec['paper']}.", "", "Parameters", "----------"]
    lines += [
        "n_components : int, default=100",
        f"    The budget m (rfx features --dim); the output width is {spec['dim_rule']}.",
        "random_state : int, RandomState instance or None, default=None",
        "    An int is the seed of rfx features --seed (bit-identical output).",
    ]
    for p in spec["params"]:
        lines += [f"{p['name']} : {p['allowed']}, default={_default(p)!r}", f"    {p['about']}"]
    if spec["data_dependent"]:
        lines += ["", "Data-dependent: fit looks at the rows of X (pickles keep a copy of them)."]
    return "\n".join(lines)


def _make_class(spec):
    name = spec["name"]
    names = tuple(p["name"] for p in spec["params"])
    defaults = {p["name"]: _default(p) for p in spec["params"]}
    cls_name = _CLASS_NAMES.get(name, _camel(name))

    def __init__(self, n_components=100, *, random_state=None, **params):
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise TypeError(
                f"{cls_name}: unknown parameter(s) {', '.join(unknown)}; allowed: n_components, "
                f"random_state{''.join(', ' + n for n in names)}"
            )
        self.n_components = n_components
        self.random_state = random_state
        for n in names:
            setattr(self, n, params.get(n, defaults[n]))

    P = inspect.Parameter
    __init__.__signature__ = inspect.Signature(
        [P("self", P.POSITIONAL_OR_KEYWORD), P("n_components", P.POSITIONAL_OR_KEYWORD, default=100),
         P("random_state", P.KEYWORD_ONLY, default=None)]
        + [P(n, P.KEYWORD_ONLY, default=defaults[n]) for n in names]
    )
    __init__.__qualname__ = f"{cls_name}.__init__"

    def _method_and_params(self):
        return name, {n: getattr(self, n) for n in names}

    return type(
        cls_name,
        (_RfxTransformer,),
        {
            "__init__": __init__,
            "_method_and_params": _method_and_params,
            "__doc__": _describe(spec),
            "__module__": "rfxpy",
            "__qualname__": cls_name,
            "method_name": name,
        },
    )


#: One transformer class per registry method, by registry name.
TRANSFORMERS = {name: _make_class(spec) for name, spec in _METHODS.items()}
