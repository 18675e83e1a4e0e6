//! # rfx-experiments
//!
//! The `rfx` command-line tool: TOML experiment files ([`spec`]), strict validation with file/line/key
//! errors ([`config`]), the experiment kinds ([`kinds`]), the resumable parallel runner ([`run`]), tidy
//! CSV results and summaries ([`results`]), plots ([`plot`]), tables and the report ([`outputs`],
//! [`report`]). This crate holds no mathematics: kinds call the algorithm crates.

pub mod cli;
pub mod compare;
pub mod config;
pub mod error;
pub mod io;
pub mod kinds;
pub mod matrix_io;
pub mod outputs;
pub mod plot;
pub mod report;
pub mod results;
pub mod run;
pub mod spec;
pub mod tools;
pub mod verify;

/// The rfx version recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
