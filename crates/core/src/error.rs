//! The error type shared by all rfx crates.

use thiserror::Error;

/// Every fallible operation in rfx returns this error.
///
/// Messages are single lines meant for people: they name the parameter or file at fault and, where there
/// is a fixed set, the allowed values.
#[derive(Debug, Error)]
pub enum RfxError {
    /// A parameter is outside its allowed range (`params().dim(0)` and the like).
    #[error("invalid parameter `{name}` = {value}: allowed {allowed}")]
    InvalidParameter {
        /// Parameter name as the user writes it.
        name: String,
        /// The offending value, formatted.
        value: String,
        /// A description of the allowed values.
        allowed: String,
    },
    /// Input shapes do not agree (for instance a map fitted on d = 9 applied to d = 8 data).
    #[error("dimension mismatch: {0}")]
    DimensionMismatch(String),
    /// A computation would need more memory than the configured cap; experiments report it as "(-)".
    #[error(
        "out of memory: {what} needs {needed_bytes} bytes, above the cap of {cap_bytes} bytes"
    )]
    OutOfMemory {
        /// What was about to be allocated.
        what: String,
        /// Bytes the allocation would need.
        needed_bytes: u64,
        /// The configured cap.
        cap_bytes: u64,
    },
    /// A numerical failure (non-convergence, a matrix that is not positive definite, ...).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// A data set could not be found, read, verified or parsed.
    #[error("{0}")]
    Data(String),
    /// An I/O error with the path it concerns.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory concerned.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl RfxError {
    /// Shorthand for [`RfxError::InvalidParameter`].
    pub fn invalid(
        name: impl Into<String>,
        value: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        RfxError::InvalidParameter {
            name: name.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        RfxError::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

/// `Result` with [`RfxError`].
pub type Result<T> = std::result::Result<T, RfxError>;
