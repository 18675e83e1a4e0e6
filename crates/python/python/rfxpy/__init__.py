"""rfxpy: rfx's feature maps, sketches and exact kernels for Python, backed by the Rust crates.

* One scikit-learn transformer per method of rfx's registry (``RandomFourierFeatures``, ``Nystroem``,
  ``NTKRandomFeatures``, ``NTKSketch``, ``GegenbauerFeatures``, ``TernaryFeatures``, ``CNTKSketch``, ...;
  ``rfxpy.TRANSFORMERS`` maps registry names to classes) and the generic ``FeatureMap(method, ...)``.
* One function per exact kernel (``ntk``, ``nngp``, ``arccos0``, ``arccos1``, ``gaussian``, ``polynomial``,
  ``gzk``, ``cntk``) and ``gram(kernel, X, Y=None, **params)``.
* ``set_num_threads(n)`` / ``get_num_threads()``: the threads computations run on (results do not depend on
  it); ``methods()`` / ``kernels()``: the registry with every parameter's type, range and default.

With an int ``random_state``, a transformer's output is bit-identical to ``rfx features`` with the same method,
parameters and ``--seed``; a kernel's to ``rfx gram``.
"""

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

from ._native import get_num_threads, kernels, methods, set_num_threads
from ._estimators import TRANSFORMERS, FeatureMap
from ._kernels import KERNEL_FUNCTIONS, gram

try:
    __version__ = _version("rfxpy")
except _NotFound:  # pragma: no cover - imported from a source tree without an install
    __version__ = "unknown"

globals().update({cls.__name__: cls for cls in TRANSFORMERS.values()})
globals().update(KERNEL_FUNCTIONS)

__all__ = (
    ["FeatureMap", "TRANSFORMERS", "KERNEL_FUNCTIONS", "gram", "methods", "kernels",
     "set_num_threads", "get_num_threads"]
    + sorted(cls.__name__ for cls in TRANSFORMERS.values())
    + sorted(KERNEL_FUNCTIONS)
)
