//! What the registry refuses, typed: each variant names the method or kernel, the parameter and the allowed
//! values, and its message (`Display`) is the one-line error the command line and Python show.

use rfx_core::RfxError;

/// An error of the registry: an unknown name, a parameter outside its declaration, a method text that does
/// not parse, or a fit that failed in an algorithm crate.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No method of this name.
    #[error("unknown method \"{name}\"; allowed: {allowed} (see rfx methods)")]
    UnknownMethod {
        /// The name asked for.
        name: String,
        /// The registry's method names.
        allowed: String,
    },
    /// No exact kernel of this name (or benchmark kernel of this label).
    #[error("unknown kernel \"{name}\"; allowed: {allowed}")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The names that exist.
        allowed: String,
    },
    /// A parameter the method or kernel does not declare.
    #[error("{owner}: unknown parameter \"{parameter}\"; allowed: {allowed}")]
    UnknownParameter {
        /// `method NAME` or `kernel NAME`.
        owner: String,
        /// The parameter given.
        parameter: String,
        /// The declared parameters (`none` if there are none).
        allowed: String,
    },
    /// A parameter given twice.
    #[error("{owner}: parameter \"{parameter}\" given twice")]
    RepeatedParameter {
        /// `method NAME` or `kernel NAME`.
        owner: String,
        /// The parameter.
        parameter: String,
    },
    /// A value outside its parameter's declared type or range.
    #[error("{owner}: parameter {parameter}={value}: expected {allowed}")]
    InvalidValue {
        /// `method NAME` or `kernel NAME`.
        owner: String,
        /// The parameter.
        parameter: String,
        /// The value as given.
        value: String,
        /// The declared type and range ([`crate::ParamKind`]'s text).
        allowed: String,
    },
    /// A declared default that fails its own declaration (a registry bug, caught by its tests).
    #[error("{owner}: default {parameter}={value}: expected {allowed}")]
    InvalidDefault {
        /// `method NAME` or `kernel NAME`.
        owner: String,
        /// The parameter.
        parameter: String,
        /// The declared default.
        value: String,
        /// The declared type and range.
        allowed: String,
    },
    /// Method text that is neither `name` nor `name(param=value, ...)`.
    #[error(
        "method \"{text}\": expected a name or name(param=value, ...), e.g. ntk-rf(sampler=gs)"
    )]
    Syntax {
        /// The text given.
        text: String,
    },
    /// A method the table kinds (`krr_table`, `kmeans_table`) do not take.
    #[error("method {name} is not available in the table kinds; allowed: {allowed}")]
    NotInTables {
        /// The method.
        name: String,
        /// The table methods.
        allowed: String,
    },
    /// A method that does not approximate the kernel a table asks for.
    #[error("method {name} is not available for the kernel {kernel}; allowed for it: {allowed}")]
    NotForKernel {
        /// The method.
        name: String,
        /// The kernel.
        kernel: String,
        /// The methods that approximate it.
        allowed: String,
    },
    /// Ternary thresholds feasible only after rescaling the rows: the map would approximate another kernel.
    #[error(
        "method {label} (ternary): its thresholds are infeasible at this data scale (tau_hat = {tau:.4}); \
         the fit would rescale the rows by {scale:.4} and so approximate another kernel"
    )]
    RescaledTernary {
        /// The benchmark label.
        label: String,
        /// The estimated $\hat\tau$ of the rows.
        tau: f64,
        /// The rescaling the fit would apply.
        scale: f64,
    },
    /// Fitting a map or building a kernel failed in its algorithm crate.
    #[error("{owner}: {source}")]
    Fit {
        /// What was fitted: `method NAME`, `method LABEL (NAME)` or `kernel LABEL`.
        owner: String,
        /// The algorithm crate's error.
        source: RfxError,
    },
}

/// The message, for callers whose errors are text (the harness's configuration errors, `rfx` tools).
impl From<RegistryError> for String {
    fn from(e: RegistryError) -> String {
        e.to_string()
    }
}

/// A registry error inside a computation that reports [`RfxError`]s: [`RfxError::Numerical`] with the
/// registry's message.
impl From<RegistryError> for RfxError {
    fn from(e: RegistryError) -> RfxError {
        RfxError::Numerical(e.to_string())
    }
}
