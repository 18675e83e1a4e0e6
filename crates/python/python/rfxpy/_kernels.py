"""The exact kernels of rfx's registry as functions ``k(X, Y=None, **params)`` returning the Gram matrix
``K[i, j] = k(X[i], Y[j])`` as a float64 array (``Y = X`` when omitted), computed as ``rfx gram`` does
(bit-identical). They serve scikit-learn's ``kernel="precomputed"`` (pass ``k(X_train)`` to fit and
``k(X_test, X_train)`` to predict) and are callables for ``kernel=`` (``functools.partial`` for parameters):
given two 1-D rows ``x, y`` they return the number ``k(x, y)``, as scikit-learn's ``pairwise_kernels`` calls a
callable kernel (KernelRidge, GaussianProcessRegressor's ``PairwiseKernel``); given 2-D arrays, the Gram matrix
(SVC's convention).
One function per registry kernel, generated: a kernel added to the registry appears with no code here.
"""

import inspect
import numbers

import numpy as np
from sklearn.utils.validation import check_array

from . import _native

_KERNELS = {k["name"]: k for k in _native.kernels()}


def gram(kernel, X, Y=None, **params):
    """The exact Gram matrix of the registry kernel ``kernel`` (``rfxpy.kernels()`` lists them)."""
    X = check_array(X, dtype=[np.float64, np.float32], order=None, input_name="X")
    if Y is not None:
        Y = check_array(Y, dtype=[np.float64, np.float32], order=None, input_name="Y")
    return _native.gram(kernel, X, Y, params)


def _make_function(spec):
    from ._estimators import _default

    name = spec["name"]
    names = [p["name"] for p in spec["params"]]
    defaults = {p["name"]: _default(p) for p in spec["params"]}

    # scikit-learn's name of the Gaussian bandwidth: gamma = 1 / (2 sigma^2), accepted beside sigma
    takes_gamma = "sigma" in names

    def k(X, Y=None, **params):
        gamma = params.pop("gamma", None) if takes_gamma else None
        unknown = sorted(set(params) - set(names))
        if unknown:
            allowed = names + (["gamma"] if takes_gamma else [])
            raise TypeError(
                f"{name}(): unknown parameter(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(allowed) if allowed else 'none'}"
            )
        if gamma is not None:
            if "sigma" in params:
                raise TypeError(f"{name}(): give sigma or gamma = 1 / (2 sigma^2), not both")
            if not (isinstance(gamma, numbers.Real) and np.isfinite(gamma) and gamma > 0):
                raise ValueError(f"{name}(gamma={gamma!r}): allowed: a finite number > 0")
            params["sigma"] = float((2.0 * gamma) ** -0.5)
        values = {n: params.get(n, defaults[n]) for n in names}
        if np.ndim(X) == 1 and (Y is None or np.ndim(Y) == 1):
            # one pair of rows, as pairwise_kernels passes them to a callable: the number k(x, y)
            x = np.asarray(X).reshape(1, -1)
            y = x if Y is None else np.asarray(Y).reshape(1, -1)
            return float(gram(name, x, y, **values)[0, 0])
        return gram(name, X, Y, **values)

    P = inspect.Parameter
    k.__signature__ = inspect.Signature(
        [P("X", P.POSITIONAL_OR_KEYWORD), P("Y", P.POSITIONAL_OR_KEYWORD, default=None)]
        + [P(n, P.KEYWORD_ONLY, default=defaults[n]) for n in names]
        + ([P("gamma", P.KEYWORD_ONLY, default=None)] if takes_gamma else [])
    )
    fname = name.replace("-", "_")
    k.__name__ = k.__qualname__ = fname
    k.__module__ = "rfxpy"
    doc = [f"Exact kernel {name}: {spec['about']}.", "", f"Paper: {spec['paper']}.", ""]
    doc += [f"{p['name']} : {p['allowed']}, default={defaults[p['name']]!r}\n    {p['about']}" for p in spec["params"]]
    if takes_gamma:
        doc += ["gamma : real > 0, default=None\n    scikit-learn's bandwidth, gamma = 1 / (2 sigma^2): given, it sets sigma"]
    k.__doc__ = "\n".join(doc)
    return fname, k


#: One function per registry kernel, by Python name.
KERNEL_FUNCTIONS = dict(_make_function(spec) for spec in _KERNELS.values())
