//! # rfx-data
//!
//! The data sets of rfx's experiments: a registry with checksums and public sources, a
//! mirror-or-download fetcher, loaders returning `ndarray` matrices, and preprocessing.
//!
//! The project never commits data. A data set is first fetched into a cache directory, then loaded:
//!
//! ```no_run
//! use rfx_data::{cache_dir_from_env, fetch, load_idx_set, Source};
//!
//! let cache = cache_dir_from_env(); // $RFX_DATA_DIR, or <workspace>/data-cache
//! fetch("mnist", &cache, &Source::from_env())?; // copy from $RFX_DATA_MIRROR, or download
//! let mnist = load_idx_set("mnist", &cache)?; // checks the sha256, parses the IDX files
//! assert_eq!(mnist.train.x.dim(), (60_000, 784));
//! # Ok::<(), rfx_core::RfxError>(())
//! ```
//!
//! * [`registry`]: data set names (`mnist`, `fashion-mnist`, `keel/<set>`, `uci/<set>`,
//!   `uci-raw/<set>`), their files, payload sha256 checksums (`checksums.txt`) and public URLs.
//! * [`mod@fetch`]: [`fetch()`] (the `rfx fetch <name>` command) and
//!   [`require`] (used by the loaders: a missing file is an error naming the command that
//!   fetches it). Environment: `RFX_DATA_DIR` (cache directory), `RFX_DATA_MIRROR` (local mirror).
//! * Loaders: [`idx`] (MNIST format), [`csv`] (numeric delimited text), [`keel`] (`.dat`), and [`mod@load`]
//!   for registered sets by name; all read gzip transparently.
//! * [`preprocess`]: standardisation, row normalisation, seeded train/test splits and subsamples,
//!   image down-scaling (`crop_pool`).

pub mod csv;
pub mod dataset;
pub mod fetch;
pub mod idx;
pub mod io;
pub mod keel;
pub mod load;
pub mod preprocess;
pub mod rdata;
pub mod registry;

pub use dataset::{ClassificationData, Loaded, RegressionData, TrainTest, UciData};
pub use fetch::{
    cache_dir_from_env, default_cache_dir, fetch, fetch_from_env, require, Source, ENV_DATA_DIR,
    ENV_MIRROR,
};
pub use load::{load, load_abalone, load_idx_set, load_keel, load_rdata, load_uci, load_uci_raw};
pub use preprocess::{crop_pool, normalize_rows, subsample, train_test_split, Split, Standardizer};
pub use registry::{dataset, dataset_names, datasets, DatasetSpec};
