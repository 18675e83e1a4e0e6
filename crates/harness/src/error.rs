//! Errors of the runner and the `rfx` command line, and their exit codes.

use crate::config::ConfigError;

/// An error of the `rfx` tool. Exit code 2 for usage, configuration and input errors, 1 for internal ones.
#[derive(Debug)]
pub enum AppError {
    /// A configuration file error (file, line, key, allowed values).
    Config(ConfigError),
    /// A usage, input or environment error (bad arguments, missing files, results of other settings, a
    /// full disk or an unwritable folder).
    Usage(String),
    /// Anything else: a bug, or a numerical failure of a method on valid input.
    Internal(String),
    /// A check that ran and failed (`rfx compare`, `rfx verify`: recomputed cells differ).
    Failed(String),
}

impl AppError {
    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> Self {
        AppError::Usage(msg.into())
    }
    /// An internal error.
    pub fn internal(msg: impl Into<String>) -> Self {
        AppError::Internal(msg.into())
    }
    /// An I/O error on `path`: the environment's (a full disk, a missing or unwritable file or folder, a
    /// quota, a read-only file system: exit 2, like every user or environment mistake), not a bug of the
    /// tool.
    pub fn io(path: &std::path::Path, e: std::io::Error) -> Self {
        AppError::Usage(format!("{}: {e}", path.display()))
    }
    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Config(_) | AppError::Usage(_) => 2,
            AppError::Internal(_) | AppError::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppError::Config(e) => write!(f, "{e}"),
            AppError::Usage(m) | AppError::Internal(m) | AppError::Failed(m) => write!(f, "{m}"),
        }
    }
}

impl From<ConfigError> for AppError {
    fn from(e: ConfigError) -> Self {
        AppError::Config(e)
    }
}
