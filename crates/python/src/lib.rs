//! # rfx-python
//!
//! The native module `rfxpy._native` of the Python package `rfxpy` (distribution `rfxpy`, built with
//! maturin from `crates/python/pyproject.toml`). It is a thin layer over the method registry
//! [`rfx_registry`], which is the only way it builds maps and kernels, so a method or kernel added there
//! appears in Python with no code here:
//!
//! * `methods()`, `kernels()`: the registry's entries with their parameters (type, range, default), from
//!   which `rfxpy` generates one scikit-learn transformer per method and one function per kernel;
//! * `fit(method, n_components, params, seed, x)`: a fitted map (`FittedMap`) drawn from the stream
//!   [`rfx_registry::feature_stream`] of `seed`, the stream of `rfx features --seed`; data-dependent
//!   methods are fitted on the rows `x`, the others on its width only, as the command does;
//! * `FittedMap.transform(x)` and `gram(kernel, x, y, params)`: [`rfx_registry::transform_rows`] (for a
//!   float32 `x`, [`rfx_registry::transform_rows_f32`], float32 out) and
//!   [`rfx_registry::gram_rows`] (and [`rfx_registry::gram_self_rows`] for K(X, X)), the fixed row chunks of `rfx features` and `rfx gram`, so the outputs
//!   are bit-identical to the command's;
//! * `set_num_threads(n)`, `get_num_threads()`: the rayon pool the chunks run on.
//!
//! Inputs are 2-D `float64` or `float32` NumPy arrays in C or Fortran order (C-ordered `float64` is read
//! without a copy); every value must be finite. Computation runs with the GIL released and one OpenBLAS
//! thread per task. Every failure is a Python exception: the registry's parameter errors and bad inputs
//! are `ValueError`s carrying the allowed values, numerical failures `RuntimeError`s, and a panic (a bug)
//! is caught before it reaches the interpreter and raised as a `RuntimeError`.

#![warn(missing_docs)]

// ndarray's `blas` feature is on workspace-wide: link OpenBLAS (dependencies.md, pitfall 3).
extern crate openblas_src as _;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use ndarray::{Array2, ArrayView2};
use numpy::{PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use rfx_core::{FitData, RfxError};
use rfx_registry::{
    feature_stream, gram_rows, gram_self_rows, transform_rows, transform_rows_f32, BoxedMap,
    ParamDoc, ParamKind, Params, RawValue,
};

/// The pool set by `set_num_threads` (`None`: rayon's global pool, one thread per core).
static POOL: Mutex<Option<Arc<rayon::ThreadPool>>> = Mutex::new(None);

/// The memory cap of a fit or Gram, in bytes (the command's default, `rfx_linalg::DEFAULT_MEMORY_CAP`).
const MEMORY_CAP: u64 = rfx_linalg::DEFAULT_MEMORY_CAP;

fn current_pool() -> Option<Arc<rayon::ThreadPool>> {
    POOL.lock().ok().and_then(|p| p.clone())
}

/// An error of the Rust side, before it becomes a Python exception (built without the GIL).
enum Failure {
    /// Bad parameters or input: `ValueError`.
    Value(String),
    /// A numerical failure or a bug: `RuntimeError`.
    Runtime(String),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Value(m) => PyValueError::new_err(m),
            Failure::Runtime(m) => PyRuntimeError::new_err(m),
        }
    }
}

fn crate_failure(context: &str, e: RfxError) -> Failure {
    match e {
        RfxError::InvalidParameter { .. }
        | RfxError::DimensionMismatch(_)
        | RfxError::OutOfMemory { .. }
        | RfxError::Data(_) => Failure::Value(format!("{context}: {e}")),
        _ => Failure::Runtime(format!("{context}: {e}")),
    }
}

/// Runs `f` with the GIL released, on the pool of `set_num_threads`, with one OpenBLAS thread per task;
/// a panic inside becomes a `RuntimeError` instead of crossing into the interpreter.
fn compute<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure> + Send) -> PyResult<T> {
    let pool = current_pool();
    let out = py.detach(move || {
        catch_unwind(AssertUnwindSafe(move || {
            rfx_linalg::set_blas_threads(1);
            match pool {
                Some(p) => p.install(f),
                None => f(),
            }
        }))
    });
    match out {
        Ok(r) => r.map_err(PyErr::from),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(PyRuntimeError::new_err(format!(
                "rfx internal error (please report): {what}"
            )))
        }
    }
}

/// A 2-D input array as `f64` rows: a C-ordered `float64` array is borrowed (no copy), any other layout
/// or `float32` is copied once into a C-ordered `f64` array.
enum Rows<'py> {
    Borrowed(PyReadonlyArray2<'py, f64>),
    Owned(Array2<f64>),
}

impl Rows<'_> {
    fn view(&self) -> ArrayView2<'_, f64> {
        match self {
            Rows::Borrowed(a) => a.as_array(),
            Rows::Owned(a) => a.view(),
        }
    }
}

fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown type".into())
}

fn rows<'py>(x: &Bound<'py, PyAny>, what: &str) -> PyResult<Rows<'py>> {
    let arr = x.cast::<PyUntypedArray>().map_err(|_| {
        PyValueError::new_err(format!(
            "{what}: expected a numpy.ndarray of float64 or float32, got {}",
            type_name(x)
        ))
    })?;
    if arr.ndim() != 2 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected a 2-D array (rows x columns), got {} dimension(s)",
            arr.ndim()
        )));
    }
    let unreadable = |e: numpy::BorrowError| {
        PyValueError::new_err(format!("{what}: the array cannot be read: {e}"))
    };
    // a copy (another layout, float32) is checked against the cap before it is allocated
    let copy_fits = || {
        rfx_linalg::check_memory(
            &format!("{what} as a C-ordered float64 copy"),
            rfx_linalg::f64_bytes(arr.len() as u128),
            MEMORY_CAP,
        )
        .map_err(|e| PyValueError::new_err(format!("{e}; pass fewer rows at a time")))
    };
    if let Ok(a) = arr.cast::<PyArray2<f64>>() {
        let ro = a.try_readonly().map_err(unreadable)?;
        if ro.as_array().is_standard_layout() {
            return Ok(Rows::Borrowed(ro));
        }
        copy_fits()?;
        return Ok(Rows::Owned(ro.as_array().as_standard_layout().into_owned()));
    }
    if let Ok(a) = arr.cast::<PyArray2<f32>>() {
        copy_fits()?;
        let ro = a.try_readonly().map_err(unreadable)?;
        let v = ro.as_array();
        let mut out = Array2::<f64>::zeros(v.dim());
        out.zip_mut_with(&v, |o, &s| *o = f64::from(s));
        return Ok(Rows::Owned(out));
    }
    let dtype = arr
        .dtype()
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "unknown".into());
    Err(PyValueError::new_err(format!(
        "{what}: expected dtype float64 or float32, got {dtype}"
    )))
}

/// The first value that is not finite, as an error naming its row and column (0-based).
fn check_finite<T: Copy + Into<f64>>(x: ArrayView2<'_, T>, what: &str) -> Result<(), Failure> {
    match x
        .indexed_iter()
        .map(|(i, v)| (i, (*v).into()))
        .find(|(_, v): &(_, f64)| !v.is_finite())
    {
        None => Ok(()),
        Some(((i, j), v)) => Err(Failure::Value(format!(
            "{what} contains {v} at row {i}, column {j}; every value must be finite (no NaN or infinity)"
        ))),
    }
}

/// The CLI's guarantee for a result (`rfx features`/`gram` refuse to write one): no NaN or infinity. A
/// non-finite entry is an error naming the input and the place (rows of X, columns of the features or of Y),
/// as inputs of huge norm give (a polynomial kernel of rows of norm 1e200, RFF of rows of 1e308).
fn check_result<T: Copy + Into<f64>>(
    r: ArrayView2<'_, T>,
    what: &str,
    inputs: &str,
) -> Result<(), Failure> {
    if r.iter().all(|v| (*v).into().is_finite()) {
        return Ok(());
    }
    match r
        .indexed_iter()
        .map(|(i, v)| (i, (*v).into()))
        .find(|(_, v): &(_, f64)| !v.is_finite())
    {
        None => Ok(()),
        Some(((i, j), v)) => Err(Failure::Value(format!(
            "{what}: entry ({i}, {j}) of the result is {v}, not a finite number: {inputs} too large (or too \
             small) for it in this precision; rescale the rows"
        ))),
    }
}

/// A Python value as a registry value: `bool`, `int`, `float`, `str`, or a list/tuple of reals.
fn raw_value(name: &str, v: &Bound<'_, PyAny>) -> PyResult<RawValue> {
    if v.is_instance_of::<PyBool>() {
        return Ok(RawValue::Bool(v.extract::<bool>()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(RawValue::Text(v.extract::<String>()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        return v.extract::<Vec<f64>>().map(RawValue::List).map_err(|_| {
            PyValueError::new_err(format!("parameter {name}: expected a list of reals"))
        });
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(RawValue::Float(v.extract::<f64>()?));
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(RawValue::Int(i));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(RawValue::Float(x));
    }
    Err(PyValueError::new_err(format!(
        "parameter {name}: expected a number, a string, a bool or a list of reals, got {}",
        type_name(v)
    )))
}

/// The registry's checked parameters from a Python dict (`None` values take the default).
fn params_of(
    dict: Option<&Bound<'_, PyDict>>,
    check: impl FnOnce(&[(String, RawValue)]) -> Result<Params, rfx_registry::RegistryError>,
) -> PyResult<Params> {
    let mut given = Vec::new();
    if let Some(d) = dict {
        for (k, v) in d.iter() {
            let k: String = k
                .extract()
                .map_err(|_| PyValueError::new_err("parameter names must be strings"))?;
            if v.is_none() {
                continue;
            }
            let raw = raw_value(&k, &v)?;
            given.push((k, raw));
        }
    }
    check(&given).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A feature map fitted by the registry, ready to transform rows.
#[pyclass(frozen, module = "rfxpy._native")]
struct FittedMap {
    map: BoxedMap,
    method: &'static str,
}

impl FittedMap {
    /// The input's width against the map's, and the memory of the output and its chunks before they are
    /// stacked (plus a C-ordered copy of the input when `copy`), checked before anything is allocated.
    fn check_transform(&self, n: usize, ncols: usize, copy: bool) -> PyResult<()> {
        let d = self.map.input_dim();
        if ncols != d {
            return Err(PyValueError::new_err(format!(
                "X has {ncols} columns, but the {} map was fitted on {d} columns",
                self.method
            )));
        }
        let need = (n as u128)
            .saturating_mul(self.map.dim() as u128)
            .saturating_mul(2)
            .saturating_add(if copy { (n as u128) * (d as u128) } else { 0 });
        rfx_linalg::check_memory(
            &format!(
                "method {} ({n} rows x {} features)",
                self.method,
                self.map.dim()
            ),
            rfx_linalg::f64_bytes(need),
            MEMORY_CAP,
        )
        .map_err(|e| PyValueError::new_err(format!("{e}; transform fewer rows at a time")))
    }
}

#[pymethods]
impl FittedMap {
    /// The features of the rows of `x` (n x d, float64 or float32): an n x `n_features_out` array of the
    /// input's type, as scikit-learn's transformers do. A float32 input is computed in float32
    /// ([`rfx_registry::transform_rows_f32`]: an f32 GEMM for the maps that have one), bit-identical to
    /// `rfx features` on a float32 `.npy`.
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(a) = x.cast::<PyArray2<f32>>() {
            let ro = a
                .try_readonly()
                .map_err(|e| PyValueError::new_err(format!("X: the array cannot be read: {e}")))?;
            let v = ro.as_array();
            self.check_transform(v.nrows(), v.ncols(), !v.is_standard_layout())?;
            let owned;
            let v = if v.is_standard_layout() {
                v
            } else {
                owned = v.as_standard_layout().into_owned();
                owned.view()
            };
            let map = &self.map;
            let method = self.method;
            let z = compute(py, move || {
                check_finite(v, "X")?;
                let z = transform_rows_f32(map.as_ref(), v)
                    .map_err(|e| crate_failure(&format!("method {method}"), e))?;
                check_result(z.view(), &format!("method {method}"), "the rows of X are")?;
                Ok(z)
            })?;
            return Ok(PyArray2::from_owned_array(py, z).into_any());
        }
        let input = rows(x, "X")?;
        let v = input.view();
        self.check_transform(v.nrows(), v.ncols(), false)?;
        let map = &self.map;
        let method = self.method;
        let z = compute(py, move || {
            check_finite(v, "X")?;
            let z = transform_rows(map.as_ref(), v)
                .map_err(|e| crate_failure(&format!("method {method}"), e))?;
            check_result(z.view(), &format!("method {method}"), "the rows of X are")?;
            Ok(z)
        })?;
        Ok(PyArray2::from_owned_array(py, z).into_any())
    }

    /// The input width d the map was fitted for.
    #[getter]
    fn n_features_in(&self) -> usize {
        self.map.input_dim()
    }

    /// The output width (the number of features).
    #[getter]
    fn n_features_out(&self) -> usize {
        self.map.dim()
    }

    /// The registry name of the method.
    #[getter]
    fn method(&self) -> &'static str {
        self.method
    }
}

/// Fits `method` with budget `n_components` and the parameters `params` on the stream of `seed` (that
/// of `rfx features --seed`): on the rows `x` for a data-dependent method, on its width otherwise.
#[pyfunction]
#[pyo3(signature = (method, n_components, params, seed, x))]
fn fit(
    py: Python<'_>,
    method: &str,
    n_components: usize,
    params: Option<&Bound<'_, PyDict>>,
    seed: u64,
    x: &Bound<'_, PyAny>,
) -> PyResult<FittedMap> {
    let spec = rfx_registry::method(method).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let p = params_of(params, |g| spec.params_from(g))?;
    if n_components == 0 {
        return Err(PyValueError::new_err(format!(
            "method {}: n_components=0; allowed: an integer >= 1",
            spec.name
        )));
    }
    let input = rows(x, "X")?;
    let v = input.view();
    let (n, d) = v.dim();
    let need = spec
        .memory_f64s(n_components, d, if spec.data_dependent { n } else { 0 }, &p)
        .saturating_add(FIT_SLACK);
    rfx_linalg::check_memory(
        &format!(
            "method {} (n_components {n_components}, {d} columns)",
            spec.name
        ),
        rfx_linalg::f64_bytes(need),
        MEMORY_CAP,
    )
    .map_err(|e| PyValueError::new_err(format!("{e}; lower n_components")))?;
    let map = compute(py, move || {
        let data = if spec.data_dependent {
            check_finite(v, "X")?;
            FitData::Rows(v)
        } else {
            FitData::Dim(d)
        };
        let mut rng = feature_stream(seed, spec.name);
        spec.fit(n_components, &p, data, &mut rng)
            .map_err(|e| crate_failure(&format!("method {}", spec.name), e))
    })?;
    Ok(FittedMap {
        map,
        method: spec.name,
    })
}

/// Values added to a fit's memory estimate (the small fixed temporaries of any map).
const FIT_SLACK: u128 = 1 << 16;

/// The exact Gram matrix $K_{ij} = k(x_i, y_j)$ of `kernel` (`y` = `x` when `None`), computed as
/// `rfx gram` does.
#[pyfunction]
#[pyo3(signature = (kernel, x, y=None, params=None))]
fn gram<'py>(
    py: Python<'py>,
    kernel: &str,
    x: &Bound<'py, PyAny>,
    y: Option<&Bound<'py, PyAny>>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let spec = rfx_registry::kernel(kernel).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let p = params_of(params, |g| spec.params_from(g))?;
    let k = spec
        .build(&p)
        .map_err(|e| PyErr::from(crate_failure(&format!("kernel {}", spec.name), e)))?;
    let xr = rows(x, "X")?;
    let yr = match y {
        Some(y) if !y.is_none() => Some(rows(y, "Y")?),
        _ => None,
    };
    let xv = xr.view();
    let yv = yr.as_ref().map_or(xr.view(), |r| r.view());
    if xv.ncols() != yv.ncols() {
        return Err(PyValueError::new_err(format!(
            "X has {} columns but Y has {}",
            xv.ncols(),
            yv.ncols()
        )));
    }
    let workers =
        current_pool().map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let need = (xv.nrows() as u128)
        .saturating_mul(yv.nrows() as u128)
        .saturating_mul(2)
        .saturating_add((workers.max(1) as u128).saturating_mul(spec.pair_f64s(&p)));
    rfx_linalg::check_memory(
        &format!(
            "kernel {} ({} x {} Gram)",
            spec.name,
            xv.nrows(),
            yv.nrows()
        ),
        rfx_linalg::f64_bytes(need),
        MEMORY_CAP,
    )
    .map_err(|e| PyValueError::new_err(format!("{e}; compute the Gram in blocks of rows")))?;
    let separate = yr.is_some();
    let kk = compute(py, move || {
        check_finite(xv, "X")?;
        if separate {
            check_finite(yv, "Y")?;
        }
        let kk = if separate {
            gram_rows(k.as_ref(), xv, yv)
        } else {
            // K(X, X): the tiles on and above the diagonal only, as `rfx gram` without --against
            gram_self_rows(k.as_ref(), xv, 0..xv.nrows())
        }
        .map_err(|e| crate_failure(&format!("kernel {}", spec.name), e))?;
        check_result(
            kk.view(),
            &format!("kernel {}", spec.name),
            if separate {
                "the rows of X or Y are"
            } else {
                "the rows of X are"
            },
        )?;
        Ok(kk)
    })?;
    Ok(PyArray2::from_owned_array(py, kk))
}

fn kind_dict<'py>(py: Python<'py>, doc: &ParamDoc) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", doc.name)?;
    d.set_item("default", doc.default)?;
    d.set_item("about", doc.about)?;
    d.set_item("allowed", doc.kind.to_string())?;
    match doc.kind {
        ParamKind::Int { min, max } => {
            d.set_item("type", "int")?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
        }
        ParamKind::Float { min, max } => {
            d.set_item("type", "float")?;
            d.set_item("min", min)?;
            d.set_item("max", max)?;
        }
        ParamKind::Choice(words) => {
            d.set_item("type", "choice")?;
            d.set_item("choices", words.to_vec())?;
        }
        ParamKind::FloatList => d.set_item("type", "list")?,
    }
    Ok(d)
}

fn param_list<'py>(py: Python<'py>, docs: &[ParamDoc]) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for doc in docs {
        l.append(kind_dict(py, doc)?)?;
    }
    Ok(l)
}

/// The registry's feature maps: a list of dicts (`name`, `about`, `paper`, `data_dependent`,
/// `dim_rule`, `params`: a list of dicts with `name`, `type`, `default`, `allowed`, range or choices).
#[pyfunction]
fn methods(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for m in rfx_registry::methods() {
        let d = PyDict::new(py);
        d.set_item("name", m.name)?;
        d.set_item("about", m.about)?;
        d.set_item("paper", m.paper)?;
        d.set_item("data_dependent", m.data_dependent)?;
        d.set_item("dim_rule", m.dim_rule)?;
        d.set_item("params", param_list(py, m.params)?)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The registry's exact kernels: a list of dicts (`name`, `about`, `paper`, `params`).
#[pyfunction]
fn kernels(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for k in rfx_registry::kernels() {
        let d = PyDict::new(py);
        d.set_item("name", k.name)?;
        d.set_item("about", k.about)?;
        d.set_item("paper", k.paper)?;
        d.set_item("params", param_list(py, k.params)?)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Sets the number of threads the computations run on (`n` >= 1; `0` goes back to one per core).
/// Results do not depend on it. Any other integer (negative, or beyond 64 bits) is a `ValueError` naming
/// `n` and the allowed values; a value that is not an integer a `TypeError`.
#[pyfunction]
fn set_num_threads(n: &Bound<'_, PyAny>) -> PyResult<()> {
    let out_of_range = |shown: String| {
        PyValueError::new_err(format!(
            "set_num_threads(n={shown}): allowed: n = 0 (one thread per core) or 1..=1024"
        ))
    };
    let n: i64 = match n.extract() {
        Ok(v) => v,
        // an int beyond 64 bits: a value, not a type, error
        Err(_) if n.is_instance_of::<pyo3::types::PyInt>() && !n.is_instance_of::<PyBool>() => {
            let text = n.str().map(|s| s.to_string()).unwrap_or_default();
            return Err(out_of_range(text.chars().take(24).collect()));
        }
        Err(e) => return Err(e),
    };
    let pool = if n == 0 {
        None
    } else {
        if !(1..=1024).contains(&n) {
            return Err(out_of_range(n.to_string()));
        }
        let n = n as usize;
        Some(Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| PyRuntimeError::new_err(format!("thread pool: {e}")))?,
        ))
    };
    let mut slot = POOL
        .lock()
        .map_err(|_| PyRuntimeError::new_err("thread pool setting is poisoned"))?;
    *slot = pool;
    Ok(())
}

/// The number of threads the computations run on.
#[pyfunction]
fn get_num_threads() -> usize {
    current_pool().map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
}

/// The native module `rfxpy._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FittedMap>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(gram, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    Ok(())
}
