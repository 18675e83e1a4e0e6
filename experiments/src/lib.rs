//! # rfx-experiments
//!
//! The `rfx` command-line tool over the generic runner `rfx-harness`: the paper experiments ([`kinds`],
//! handed to the runner by [`kinds::registry`]), the command line ([`cli`]), the user-data commands `rfx features`/`gram`/`fit` ([`tools`]) and their CSV/`.npy` I/O
//! ([`matrix_io`]), over the method and kernel registry `rfx-registry`. The experiment files (`experiments/*.toml`) live beside this crate.

pub mod cli;
pub mod fuzzing;
pub mod kinds;
pub mod matrix_io;
pub mod npy;
pub mod tools;
