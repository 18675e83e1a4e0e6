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
//!
//! # Example
//!
//! A kind the harness has never heard of — one metric, $n^2$ — handed in by the caller. The sweep expands
//! to the cartesian product of its lists (first list slowest), each cell names its RNG stream by its key,
//! and an unknown setting is refused with the file, line and the allowed keys.
//!
//! ```
//! use std::path::Path;
//! use rfx_core::RfxRng;
//! use rfx_harness::config::{ConfigError, Section};
//! use rfx_harness::kind::check_int;
//! use rfx_harness::{Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, Spec};
//!
//! struct Square;
//! struct SquareRunner;
//! impl Kind for Square {
//!     fn name(&self) -> &'static str { "square" }
//!     fn about(&self) -> &'static str { "n squared" }
//!     fn sweep_params(&self) -> Vec<ParamSpec> {
//!         vec![ParamSpec { name: "n", allowed: "1..=9", check: |v| check_int(v, 1, 9), required: true }]
//!     }
//!     fn configure(&self, s: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
//!         if let Some(s) = s {
//!             s.opt_int("unused", 0, 1)?; // the keys a kind reads are its allowed keys
//!         }
//!         Ok(Box::new(SquareRunner))
//!     }
//! }
//! impl Runner for SquareRunner {
//!     fn metrics(&self) -> Vec<String> { vec!["square".into()] }
//!     fn settings(&self) -> String { String::new() }
//!     fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
//!         let n = cell.int("n")? as f64;
//!         Ok(CellOutput { metrics: vec![n * n], items: vec![], timings: vec![] })
//!     }
//! }
//!
//! let kinds = Kinds::new(vec![&Square]);
//! let file = "[experiment]\nname = \"sq\"\nkind = \"square\"\nseed = 1\n[sweep]\nn = [2, 3]\nseed = [0, 1, 2]\n";
//! let spec = Spec::parse(Path::new("sq.toml"), file, false, &kinds)?;
//! let cells = spec.cells();
//! assert_eq!(cells.len(), 6);
//! assert_eq!(cells[1].key(), "n=2;seed=1");
//!
//! let bad = format!("{file}[square]\nunused = 1\ntypo = 2\n");
//! let e = Spec::parse(Path::new("sq.toml"), &bad, false, &kinds).err().expect("refused");
//! let msg = e.to_string();
//! assert!(msg.contains("sq.toml:10") && msg.contains("typo") && msg.contains("unused"), "{msg}");
//! # Ok::<(), ConfigError>(())
//! ```

#![warn(missing_docs)]

pub mod claims;
pub mod compare;
pub mod config;
pub mod coverage;
pub mod error;
pub mod folder;
pub mod io;
pub mod kind;
pub mod merge;
pub mod outputs;
pub mod plan;
pub mod plot;
pub mod prose;
pub mod report;
pub mod results;
pub mod run;
pub mod spec;
pub mod stats;
pub mod verify;

pub use error::AppError;
pub use kind::{
    Cell, CellError, CellOutput, Kind, Kinds, ParamSpec, Runner, SeriesColours, Tolerance,
};
pub use spec::Spec;

/// The rfx version recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
