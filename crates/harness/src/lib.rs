//! # rfx-harness
//!
//! The generic experiment runner of rfx. It reads an experiment file ([`spec`], strictly, with file/line/key
//! errors from [`config`]), expands its sweep into cells, runs them resumably and in parallel ([`run`]),
//! keeps tidy CSV results and their summaries ([`results`]) in one folder per experiment ([`folder`], the
//! only module that knows the folder's file names), and derives plots ([`plot`]), tables, claims and the
//! experiment's report section from them ([`outputs`]), the results tree's README ([`report`]), and
//! compares or re-verifies recorded cells ([`compare`], [`verify`]).
//!
//! It knows no experiment kind: an application implements [`Kind`] and [`Runner`] for its experiments
//! and passes the list ([`Kinds`]) to every function that reads an experiment file. It holds no
//! mathematics; its one numerical dependency is `rfx-core`'s seeded RNG streams.
//!
//! The flow of one run: [`Spec::load`] → [`Spec::cells`] → [`run::run`] (cells not yet in
//! `cells.csv`, each with the stream `rng_stream(seed, cell key)`) → [`outputs::write_all`] (summary,
//! plot, tables, report section) — and later [`report::write_report`] over every folder of a results tree.

#![warn(missing_docs)]

pub mod compare;
pub mod config;
pub mod error;
pub mod folder;
pub mod io;
pub mod kind;
pub mod outputs;
pub mod plot;
pub mod report;
pub mod results;
pub mod run;
pub mod spec;
pub mod verify;

pub use error::AppError;
pub use kind::{Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, Tolerance};
pub use spec::Spec;

/// The rfx version recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
